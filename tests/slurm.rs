//! The slurm transport without a cluster: (1) over the emulated launcher,
//! every round planned, framed and read back as with srun, a pod with
//! planted defects gives exactly the events the emulated transport gives;
//! (2) the node agent (`rocegate slurm-task`) run as srun would run it,
//! with real processes: the barrier, a server stopped when its client
//! ends, exit statuses, the dead-man, and the end of its input killing
//! everything. The real Slurm is in tests/lab.rs.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

fn rocegate() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_rocegate"));
    c.current_dir(env!("CARGO_MANIFEST_DIR"));
    c
}

/// The records of a run, without what differs by nature between two runs
/// (ids, wall clock) or names the transport.
fn comparable(dir: &Path) -> Vec<Value> {
    std::fs::read_to_string(dir.join("results.jsonl"))
        .unwrap()
        .lines()
        // The first record names the inputs, which differ by the transport line.
        .skip(1)
        .map(|l| {
            let mut v: Value = serde_json::from_str(l).unwrap();
            if let Some(o) = v.as_object_mut() {
                for k in [
                    "run_id",
                    "started_at",
                    "ended_at",
                    "transport",
                    "wall_s",
                    "duration_wall_s",
                ] {
                    o.remove(k);
                }
            }
            v
        })
        .collect()
}

fn run(inventory: &Path, out: &Path) -> i32 {
    let o = rocegate()
        .args([
            "run",
            "--progress",
            "none",
            "-s",
            "suites/acceptance.yaml",
            "-i",
        ])
        .arg(inventory)
        .arg("--out")
        .arg(out)
        .output()
        .unwrap();
    o.status.code().unwrap_or(-1)
}

#[test]
fn over_the_emulated_launcher_a_defects_pod_gives_the_emulated_transports_events() {
    let tmp = tempfile::tempdir().unwrap();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("inventory/emulated-defects.yaml");
    let text = std::fs::read_to_string(&src).unwrap();
    assert!(
        text.contains("\ntransport: emulated\n"),
        "the pod's transport line moved"
    );
    let slurm = tmp.path().join("slurm.yaml");
    std::fs::write(
        &slurm,
        text.replace(
            "\ntransport: emulated\n",
            "\ntransport: {slurm: {launcher: emulated}}\n",
        ),
    )
    .unwrap();
    let (a, b) = (tmp.path().join("emulated"), tmp.path().join("slurm"));
    let code_a = run(&src, &a);
    let code_b = run(&slurm, &b);
    assert_eq!(code_a, 1, "the defects pod fails its gate");
    assert_eq!(code_b, code_a);
    let (ra, rb) = (comparable(&a), comparable(&b));
    let verdicts = ra.iter().filter(|r| r["event"] == "verdict").count();
    assert!(verdicts > 100, "{verdicts} verdicts");
    assert_eq!(ra.len(), rb.len());
    for (i, (x, y)) in ra.iter().zip(&rb).enumerate() {
        assert!(x == y, "record {}: {x:.2000} | {y:.2000}", i + 2);
    }
    let started = std::fs::read_to_string(b.join("results.jsonl")).unwrap();
    assert!(started
        .lines()
        .next()
        .unwrap()
        .contains("slurm over the emulated"));
}

/// A plan file for one node, as the transport writes it.
fn plan(dir: &Path, node: &str, tasks: Value) -> String {
    let p = dir.join(format!("plan-{node}.json"));
    let plan = serde_json::json!({"round": "t-0", "shares": {node: tasks}});
    std::fs::write(&p, plan.to_string()).unwrap();
    p.display().to_string()
}

/// The agent as srun starts it, its input and its output lines.
struct Agent {
    child: std::process::Child,
    lines: std::sync::mpsc::Receiver<String>,
}

impl Agent {
    fn start(plan: &str, node: &str) -> Agent {
        let mut child = rocegate()
            .args(["slurm-task", plan])
            .env("SLURMD_NODENAME", node)
            .env("SLURM_JOB_ID", "77")
            .env("SLURM_STEP_ID", "3")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let out = child.stdout.take().unwrap();
        let (tx, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for l in BufReader::new(out).lines().map_while(Result::ok) {
                let _ = tx.send(l);
            }
        });
        Agent { child, lines }
    }

    fn say(&mut self, line: &str) {
        let stdin = self.child.stdin.as_mut().unwrap();
        writeln!(stdin, "{line}").unwrap();
        stdin.flush().unwrap();
    }

    /// Lines until one starts with `@@rg KIND`, within `secs`.
    fn until(&self, kind: &str, secs: u64) -> Vec<String> {
        self.until_line(&format!("@@rg {kind} "), secs)
    }

    /// Lines until one starts with `start`, within `secs`.
    fn until_line(&self, start: &str, secs: u64) -> Vec<String> {
        let deadline = Instant::now() + Duration::from_secs(secs);
        let mut got = Vec::new();
        while Instant::now() < deadline {
            if let Ok(l) = self.lines.recv_timeout(Duration::from_millis(100)) {
                let done = l.starts_with(start);
                got.push(l);
                if done {
                    return got;
                }
            }
        }
        panic!("no line starting {start:?} within {secs}s: {got:#?}");
    }
}

/// The fields of the `end` line of invocation `id`.
fn end_of(lines: &[String], id: usize) -> Vec<String> {
    lines
        .iter()
        .find(|l| l.starts_with("@@rg end ") && l.split(' ').nth(3) == Some(&id.to_string()))
        .unwrap_or_else(|| panic!("no end for {id}: {lines:#?}"))
        .split(' ')
        .map(String::from)
        .collect()
}

fn task(id: usize, step: usize, role: &str, argv: &[&str], limit_ms: u64) -> Value {
    serde_json::json!({"id": id, "step": step, "argv": argv, "role": role, "limit_ms": limit_ms})
}

#[test]
fn the_agent_waits_for_go_stops_servers_and_reports_each_exit() {
    let tmp = tempfile::tempdir().unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let server = format!(
        "import socket,time\ns=socket.socket()\ns.bind(('127.0.0.1',{port}))\ns.listen()\ntime.sleep(300)"
    );
    let p = plan(
        tmp.path(),
        "n1",
        serde_json::json!([
            task(0, 0, "server", &["python3", "-c", &server], 60_000),
            task(
                1,
                0,
                "client",
                &["sh", "-c", "echo hello; echo oops >&2; exit 3"],
                60_000
            ),
            task(2, 1, "probe", &["no-such-binary-rocegate"], 60_000),
            task(3, 2, "probe", &["sleep", "30"], 1_000),
        ]),
    );
    let mut a = Agent::start(&p, "n1");
    let before = a.until("ready", 60);
    assert!(before.last().unwrap().ends_with(" n1 77.3"), "{before:?}");
    // Nothing but the server ran before go: the probe's binary was not tried.
    assert!(
        !before.iter().any(|l| l.starts_with("@@rg end ")),
        "{before:?}"
    );
    assert!(
        !Path::new(&p).exists(),
        "the broadcast plan is removed once read"
    );
    a.say("go");
    // The commands end in any order: wait for the client's own end.
    let mut lines = a.until_line("@@rg end n1 1 ", 60);
    // The client's output and status.
    let c = end_of(&lines, 1);
    assert_eq!(c[4], "3", "{c:?}");
    assert_eq!(c[5], "exited");
    let out: Vec<u8> = lines
        .iter()
        .filter(|l| l.starts_with("@@rg out n1 1 "))
        .flat_map(|l| decode(l.rsplit(' ').next().unwrap()))
        .collect();
    assert_eq!(String::from_utf8(out).unwrap(), "hello\n");
    // Its step's server is stopped on the controller's word, not before.
    a.say("stop 0");
    lines.extend(a.until("bye", 60));
    let s = end_of(&lines, 0);
    assert_eq!(s[5], "stopped", "{s:?}");
    assert!(
        s[6].parse::<f64>().unwrap() < 0.0,
        "the server started before go: {s:?}"
    );
    let m = end_of(&lines, 2);
    assert_eq!(m[4], "127", "a missing binary: {m:?}");
    // The dead-man: `timeout` ends the 30 s sleep at its 1 s limit.
    let t = end_of(&lines, 3);
    assert_eq!(t[4], "124", "{t:?}");
    assert!(t[7].parse::<f64>().unwrap() < 10.0, "{t:?}");
    assert!(a.child.wait().unwrap().success());
}

fn decode(b64: &str) -> Vec<u8> {
    // Standard padded base64, as the agent writes it.
    let val = |c: u8| match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        _ => 63,
    } as u32;
    let mut out = Vec::new();
    for q in b64.as_bytes().chunks(4) {
        let pad = q.iter().filter(|&&c| c == b'=').count();
        let n = q.iter().take(4 - pad).fold(0u32, |n, &c| (n << 6) | val(c)) << (6 * pad);
        out.extend_from_slice(&[(n >> 16) as u8, (n >> 8) as u8, n as u8][..3 - pad]);
    }
    out
}

#[test]
fn the_end_of_its_input_kills_everything_the_agent_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let marker = format!("rocegate-agent-test-{}", std::process::id());
    let p = plan(
        tmp.path(),
        "n2",
        serde_json::json!([
            task(
                0,
                0,
                "server",
                &["sh", "-c", &format!("sleep 300; : {marker}")],
                600_000
            ),
            task(
                1,
                0,
                "client",
                &["sh", "-c", &format!("sleep 301; : {marker}")],
                600_000
            ),
        ]),
    );
    let mut a = Agent::start(&p, "n2");
    a.until("ready", 20);
    a.say("go");
    let alive = || {
        let o = Command::new("pgrep")
            .args(["-f", &marker])
            .output()
            .unwrap();
        String::from_utf8_lossy(&o.stdout).lines().count()
    };
    // Each command and its `timeout` carry the marker.
    let deadline = Instant::now() + Duration::from_secs(20);
    while alive() < 4 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(alive() >= 4, "both commands and their timeouts run");
    // The controller is gone: srun closes the tasks' input.
    drop(a.child.stdin.take());
    let lines = a.until("bye", 20);
    for id in [0, 1] {
        assert_eq!(end_of(&lines, id)[5], "cancelled", "{lines:#?}");
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    while alive() > 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(alive(), 0, "nothing survives the agent");
    assert!(a.child.wait().unwrap().success());
}

#[test]
fn an_agent_without_its_share_says_why() {
    let tmp = tempfile::tempdir().unwrap();
    let p = plan(tmp.path(), "other", serde_json::json!([]));
    let mut a = Agent::start(&p, "n3");
    let lines = a.until("bye", 20);
    let broken = lines
        .iter()
        .find(|l| l.starts_with("@@rg broken n3 "))
        .unwrap_or_else(|| panic!("{lines:#?}"));
    let why = String::from_utf8(decode(broken.rsplit(' ').next().unwrap())).unwrap();
    assert!(why.contains("no share for node \"n3\""), "{why}");
    drop(a.child.stdin.take());
    assert!(a.child.wait().unwrap().success());
}
