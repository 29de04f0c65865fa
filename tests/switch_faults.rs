//! Faults on API-reached switches (`driver: eos`, `driver: nxos`) through
//! the CLI, end to end: `rocegate run` and `rocegate recover` against a
//! stand-in switch over HTTPS (tests/switch_api/eos.py and nxos.py, behind
//! a certificate from a CA the test makes) that checks each request (path,
//! method, credentials, the ins_api or runCmds envelope, the commands),
//! keeps the ports, sessions and timers a switch would, answers in the
//! vendor's shapes (tests/fixtures/public/SOURCES.md), and logs every
//! request. The workload is iperf3 between two loopback "nodes" over the
//! `local` transport; the switch port the fault takes down is the
//! stand-in's, so the traffic is not what is under test here: the
//! conversation with the switch is.
//!
//! Proven for each platform: the order and shape of a link flap (prior
//! read, the change with its dead-man, the undo); a SIGKILL after the
//! change healed by `recover`; the device's own timer reverting the change
//! when nothing undoes it; a refused password, a refused command, a slow
//! answer and a dropped connection each named, with nothing left open and
//! the run going on. Without python3, openssl or iperf3 the tests say so
//! and skip.

mod common;
use common::tls::{pki, tools};
use std::io::{BufRead, BufReader};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

const SECRET: &str = "eapi-s3cret-not-for-logs";

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Os {
    Eos,
    Nxos,
}

impl Os {
    fn script(self) -> &'static str {
        match self {
            Os::Eos => "tests/switch_api/eos.py",
            Os::Nxos => "tests/switch_api/nxos.py",
        }
    }
    fn driver(self) -> &'static str {
        match self {
            Os::Eos => "eos",
            Os::Nxos => "nxos",
        }
    }
    fn path(self) -> &'static str {
        match self {
            Os::Eos => "/command-api",
            Os::Nxos => "/ins",
        }
    }
    /// The ports the nodes are cabled to; the first is flapped.
    fn ports(self) -> [&'static str; 2] {
        match self {
            Os::Eos => ["Ethernet1", "Ethernet2"],
            Os::Nxos => ["Ethernet1/1", "Ethernet1/2"],
        }
    }
    fn port_range(self) -> &'static str {
        match self {
            Os::Eos => "Ethernet[1-2]",
            Os::Nxos => "Ethernet1/[1-2]",
        }
    }
    /// A regex matching the command that takes the port down.
    fn change(self) -> &'static str {
        match self {
            Os::Eos => "^commit timer",
            Os::Nxos => "^shutdown$",
        }
    }
}

/// A stand-in switch and the files it writes.
struct StandIn {
    child: Child,
    port: u16,
    ca: PathBuf,
    log: PathBuf,
    state: PathBuf,
}

impl Drop for StandIn {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl StandIn {
    fn start(os: Os, dir: &Path, extra: Value) -> StandIn {
        let (ca, cert, key) = pki(dir);
        let mut config = json!({
            "user": "rocegate",
            "password": SECRET,
            "ports": os.ports(),
            "peers": {"10.0.0.1": "Established", "10.0.0.3": "Established"},
            // A timer of the run's (61 s) fires after 30 s: never in a run.
            "scale": 0.5,
        });
        for (k, v) in extra.as_object().expect("an object") {
            config[k] = v.clone();
        }
        let config_path = dir.join("switch.json");
        std::fs::write(&config_path, config.to_string()).expect("config");
        let log = dir.join("requests.jsonl");
        let state = dir.join("state.json");
        let mut child = Command::new("python3")
            .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join(os.script()))
            .arg(&cert)
            .arg(&key)
            .arg(&config_path)
            .arg(&log)
            .arg(&state)
            .stdout(Stdio::piped())
            .spawn()
            .expect("stand-in starts");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("stdout"))
            .read_line(&mut line)
            .expect("port line");
        let port = line
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("stand-in printed {line:?}"));
        StandIn {
            child,
            port,
            ca,
            log,
            state,
        }
    }

    fn lines(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).expect("log line"))
            .collect()
    }

    /// Every request, in the order the stand-in took them.
    fn requests(&self) -> Vec<Value> {
        let mut r: Vec<Value> = self
            .lines()
            .into_iter()
            .filter(|l| l.get("event").is_none())
            .collect();
        r.sort_by_key(|l| l["n"].as_u64());
        r
    }

    fn events(&self) -> Vec<Value> {
        self.lines()
            .into_iter()
            .filter(|l| l.get("event").is_some())
            .collect()
    }

    fn state(&self) -> Value {
        serde_json::from_str(&std::fs::read_to_string(&self.state).expect("state")).expect("json")
    }

    fn admin_up(&self, port: &str) -> bool {
        self.state()["admin"][port] == true
    }
}

/// Polls `ok` until it holds or `within` has passed.
fn eventually(within: Duration, mut ok: impl FnMut() -> bool) -> bool {
    let end = Instant::now() + within;
    while Instant::now() < end {
        if ok() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    ok()
}

/// One fabric: two loopback nodes cabled to the stand-in's two ports.
struct Lab {
    dir: tempfile::TempDir,
    os: Os,
    sw: StandIn,
    inv: PathBuf,
    suite: PathBuf,
    journal: PathBuf,
    var: String,
    /// The password the run is given (the switch's, or a wrong one).
    given: String,
}

/// Each lab's nodes listen on 127.0.NET.x, so tests that run at once do
/// not share iperf3's port.
fn lab(os: Os, net: u8, switch: Value, suite: &str) -> Lab {
    let dir = tempfile::tempdir().expect("temp dir");
    let sw = StandIn::start(os, dir.path(), switch);
    let var = format!("ROCEGATE_SWITCH_FAULTS_{net}");
    let inv = dir.path().join("inventory.yaml");
    std::fs::write(
        &inv,
        format!(
            "\
fabric:
  name: api-{os}-{net}
  environment: lab
  rails: 1
  roce: {{pfc_priority: 3, dscp_roce: 26, dscp_cnp: 48, dcqcn: false, mtu: 4096}}
transport: local
nodes:
  - hosts: lo[1-2]
    nics:
      - {{device: lo, netdev: lo, gid_index: 0, rail: 0, speed_gbps: 100, address: '127.0.{net}.{{index}}'}}
switches:
  - name: leaf1
    role: leaf
    driver: {os}
    rail: 0
    address: 127.0.0.1
    credentials: {{env: {var}}}
    api: {{user: rocegate, port: {port}, ca_file: '{ca}', timeout: 2s}}
links:
  - {{a: 'lo[1-2]:lo', b: 'leaf1:{range}'}}
",
            os = os.driver(),
            port = sw.port,
            ca = sw.ca.display(),
            range = os.port_range(),
        ),
    )
    .expect("inventory");
    let suite_path = dir.path().join("suite.yaml");
    std::fs::write(&suite_path, suite.replace("PORT", os.ports()[0])).expect("suite");
    Lab {
        journal: dir.path().join("journal.jsonl"),
        dir,
        os,
        sw,
        inv,
        suite: suite_path,
        var,
        given: SECRET.into(),
    }
}

/// The workload, then a flap of the first port 2 s into it for 1 s, then a
/// test after the fault: the run goes on.
const FLAP: &str = "\
suite: {name: api-flap}
ledger: {enabled: false}
tests:
  - {name: load, iperf: {duration: 5s, interval: 0.5s}, pattern: rail-pairs, expect: {min: 0.01}}
  - name: flap
    fault: {link_flap: {target: 'leaf1:PORT'}, during: load, at: 2s, for: 1s}
    expect: {workload: completes, recovers_within: 10s, min_fraction: 0.05}
  - {name: after, iperf: {duration: 1s}, pattern: rail-pairs, expect: {min: 0.01}}
";

impl Lab {
    fn rocegate(&self) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_rocegate"));
        c.current_dir(self.dir.path());
        c.env("XDG_STATE_HOME", self.dir.path().join("state"));
        c.env(&self.var, &self.given);
        c.env_remove("ROCEGATE_FAILPOINT");
        c
    }

    fn out(&self) -> PathBuf {
        self.dir.path().join("run")
    }

    fn run(&self, failpoint: Option<&str>) -> Output {
        let mut c = self.rocegate();
        c.args(["run", "--progress", "none", "-i"])
            .arg(&self.inv)
            .arg("-s")
            .arg(&self.suite)
            .arg("--journal")
            .arg(&self.journal)
            .arg("--out")
            .arg(self.out());
        if let Some(f) = failpoint {
            c.env("ROCEGATE_FAILPOINT", f);
        }
        c.output().expect("rocegate runs")
    }

    fn recover(&self) -> Output {
        self.rocegate()
            .args(["recover", "-i"])
            .arg(&self.inv)
            .arg("--journal")
            .arg(&self.journal)
            .output()
            .expect("rocegate recover runs")
    }

    fn records(&self) -> Vec<Value> {
        std::fs::read_to_string(self.out().join("results.jsonl"))
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).expect("record"))
            .collect()
    }

    fn verdict(&self, test: &str) -> Value {
        self.records()
            .into_iter()
            .find(|r| r["event"] == "verdict" && r["test"] == test)
            .unwrap_or_else(|| panic!("no verdict for {test}: {:?}", self.records()))
    }

    /// The journal's entries: every fault opened is healed.
    fn assert_journal_healed(&self) {
        let text = std::fs::read_to_string(&self.journal).unwrap_or_default();
        let opened: Vec<Value> = text
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter(|e| e["event"] == "opened")
            .collect();
        assert!(!opened.is_empty(), "nothing journaled: {text}");
        for o in &opened {
            assert!(
                text.lines().any(|l| {
                    serde_json::from_str::<Value>(l)
                        .is_ok_and(|e| e["event"] == "healed" && e["id"] == o["id"])
                }),
                "{} not healed: {text}",
                o["id"]
            );
        }
    }

    /// Every request reached the API's path by POST, with the inventory's
    /// user and the right password, in the API's own envelope.
    fn assert_requests_well_formed(&self) {
        for r in self.sw.requests() {
            assert_eq!(r["method"], "POST", "{r}");
            assert_eq!(r["path"], self.os.path(), "{r}");
            assert_eq!(r["user"], "rocegate", "{r}");
            assert_eq!(r["auth_ok"], true, "{r}");
            assert!(r.get("problem").is_none(), "the stand-in refused {r}");
            assert_eq!(r["content_type"], "application/json", "{r}");
        }
    }
}

fn text(o: &Output) -> String {
    format!(
        "exit {:?} signal {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status.code(),
        o.status.signal(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn cmds(r: &Value) -> Vec<String> {
    r["cmds"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|c| c.as_str().unwrap_or_default().to_string())
                .collect()
        })
        .unwrap_or_default()
}

const EOS_PRIOR: [&str; 4] = [
    "enable",
    "show interfaces status",
    "show bgp summary vrf all",
    "show configuration sessions detail",
];
const NXOS_PRIOR: [&str; 2] = ["show interface status", "show bgp all summary vrf all"];

fn is_prior(os: Os, r: &Value) -> bool {
    match os {
        Os::Eos => cmds(r) == EOS_PRIOR,
        Os::Nxos => r["type"] == "cli_show" && cmds(r) == NXOS_PRIOR,
    }
}

/// The requests that change or undo something (not the prior and settle
/// reads), as `type: commands` lines.
fn changes(os: Os, reqs: &[Value]) -> Vec<String> {
    reqs.iter()
        .filter(|r| !is_prior(os, r))
        .map(|r| match os {
            Os::Eos => cmds(r).join(" | "),
            Os::Nxos => format!(
                "{}: {}",
                r["type"].as_str().unwrap_or_default(),
                cmds(r)
                    .iter()
                    .map(|c| {
                        if c.starts_with("run bash setsid") {
                            "run bash setsid …".to_string()
                        } else if c.starts_with("run bash pkill") {
                            "run bash pkill …".to_string()
                        } else {
                            c.clone()
                        }
                    })
                    .collect::<Vec<_>>()
                    .join(" ; ")
            ),
        })
        .collect()
}

/// The EOS session of the one fault journaled.
fn session(lab: &Lab) -> String {
    lab.sw
        .requests()
        .iter()
        .find_map(|r| {
            cmds(r)
                .iter()
                .find_map(|c| c.strip_prefix("configure session ").map(str::to_string))
        })
        .expect("a session was used")
}

// ------------------------------------------------------------------ a flap

fn a_flap_is_prior_read_change_with_its_deadman_then_undo(os: Os, net: u8) {
    let lab = lab(os, net, json!({}), FLAP);
    let o = lab.run(None);
    let v = lab.verdict("flap");
    assert_eq!(v["verdict"], "pass", "{v}");
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert_eq!(lab.verdict("after")["verdict"], "pass");
    lab.assert_requests_well_formed();
    let reqs = lab.sw.requests();
    // The prior state is read before anything changes, and read again
    // (settle) after the undo.
    assert!(is_prior(os, &reqs[0]), "{}", reqs[0]);
    assert!(is_prior(os, reqs.last().expect("requests")), "{reqs:?}");
    let port = os.ports()[0];
    match os {
        Os::Eos => {
            let s = session(&lab);
            assert!(s.starts_with("rocegate-"), "{s}");
            // The change and its dead-man in ONE call; the outage (1 s)
            // and the platform's delay (60 s) on the timer; then the abort.
            assert_eq!(
                changes(os, &reqs),
                [
                    format!("enable | configure session {s} | interface {port} | shutdown | commit timer 00:01:01"),
                    format!("enable | configure session {s} abort"),
                ]
            );
            let apply = reqs
                .iter()
                .find(|r| r["timers"].as_array().is_some_and(|t| !t.is_empty()))
                .expect("apply");
            assert_eq!(apply["timers"][0]["seconds"], 61, "{apply}");
            assert_eq!(apply["format"], "json");
            assert!(lab.sw.state()["sessions"]
                .as_object()
                .expect("sessions")
                .is_empty());
        }
        Os::Nxos => {
            // The timer first, alone, answering its pid; then the change;
            // the undo restores, then stops the timer.
            assert_eq!(
                changes(os, &reqs),
                [
                    "cli_show_ascii: run bash setsid …".to_string(),
                    format!("cli_conf: interface {port} ; shutdown"),
                    format!("cli_conf: interface {port} ; no shutdown"),
                    "cli_show_ascii: run bash pkill …".to_string(),
                ]
            );
            let arm = reqs.iter().find_map(|r| r.get("arm")).expect("armed");
            assert_eq!(arm["sleep"], 61, "{arm}");
            assert_eq!(
                arm["restore"],
                json!([
                    "configure terminal",
                    format!("interface {port}"),
                    "no shutdown"
                ])
            );
            assert_eq!(arm["finds_timer"], true, "{arm}");
            assert_eq!(arm["finds_itself"], false, "pgrep would find itself: {arm}");
            let killed = reqs.iter().find_map(|r| r.get("killed")).expect("pkill");
            assert_eq!(
                killed,
                &json!([arm["name"]]),
                "the undo stops its own timer"
            );
        }
    }
    assert!(lab.sw.admin_up(port));
    assert_eq!(lab.sw.state()["timers"], json!([]), "no timer left running");
    assert!(
        lab.sw.events().is_empty(),
        "no timer fired: {:?}",
        lab.sw.events()
    );
    lab.assert_journal_healed();
    // The fault's own calls are kept as its raw output, without the secret.
    assert_no_secret(&lab, &o, SECRET);
}

#[test]
fn eos_link_flap_reads_then_commits_a_timed_session_then_aborts_it() {
    needs_tools!();
    a_flap_is_prior_read_change_with_its_deadman_then_undo(Os::Eos, 11);
}

#[test]
fn nxos_link_flap_reads_then_arms_a_timer_shuts_restores_and_kills_it() {
    needs_tools!();
    a_flap_is_prior_read_change_with_its_deadman_then_undo(Os::Nxos, 12);
}

// ------------------------------------------------------- SIGKILL, recover

/// Killed with SIGKILL right after the change: the port is down, the
/// journal holds the fault open and the switch's dead-man is armed.
fn killed_after_the_change(lab: &Lab) {
    let o = lab.run(Some("fault-applied"));
    assert_eq!(o.status.signal(), Some(9), "{}", text(&o));
    let port = lab.os.ports()[0];
    assert!(!lab.sw.admin_up(port), "the change was made");
    assert_eq!(lab.sw.state()["timers"].as_array().map(Vec::len), Some(1));
    let j = std::fs::read_to_string(&lab.journal).expect("journal");
    assert!(j.contains("\"opened\"") && !j.contains("\"healed\""), "{j}");
}

fn recover_heals(lab: &Lab) -> String {
    let o = lab.recover();
    let said = text(&o);
    assert_eq!(o.status.code(), Some(0), "{said}");
    assert!(said.contains("all 1 healed"), "{said}");
    lab.assert_journal_healed();
    let again = lab.recover();
    assert!(String::from_utf8_lossy(&again.stdout).contains("no open faults"));
    said
}

fn a_killed_run_is_healed_by_recover(os: Os, net: u8) {
    let lab = lab(os, net, json!({}), FLAP);
    killed_after_the_change(&lab);
    let before = lab.sw.requests().len();
    recover_heals(&lab);
    let port = os.ports()[0];
    assert!(lab.sw.admin_up(port), "recover restored the port");
    assert_eq!(lab.sw.state()["timers"], json!([]), "and stopped the timer");
    lab.assert_requests_well_formed();
    let undo = changes(os, &lab.sw.requests()[before..]);
    match os {
        Os::Eos => {
            let s = session(&lab);
            assert_eq!(undo, [format!("enable | configure session {s} abort")]);
            assert!(lab.sw.state()["sessions"]
                .as_object()
                .expect("sessions")
                .is_empty());
        }
        Os::Nxos => assert_eq!(
            undo,
            [
                format!("cli_conf: interface {port} ; no shutdown"),
                "cli_show_ascii: run bash pkill …".to_string()
            ]
        ),
    }
    assert!(lab.sw.events().is_empty(), "healed before any timer fired");
}

#[test]
fn eos_a_run_killed_after_the_change_is_healed_by_recover() {
    needs_tools!();
    a_killed_run_is_healed_by_recover(Os::Eos, 21);
}

#[test]
fn nxos_a_run_killed_after_the_change_is_healed_by_recover() {
    needs_tools!();
    a_killed_run_is_healed_by_recover(Os::Nxos, 22);
}

// ------------------------------------------------------------- dead-man

fn with_nothing_to_undo_it_the_switch_timer_reverts(os: Os, net: u8) {
    // 61 device seconds in 3 s.
    let lab = lab(os, net, json!({"scale": 0.05}), FLAP);
    killed_after_the_change(&lab);
    let port = os.ports()[0];
    assert!(
        eventually(Duration::from_secs(20), || lab.sw.admin_up(port)),
        "the timer never brought {port} back: {}",
        lab.sw.state()
    );
    let ev = lab.sw.events();
    assert_eq!(ev.len(), 1, "{ev:?}");
    assert_eq!(ev[0]["restored"], json!([port]), "{ev:?}");
    // `recover` still heals the journal, and finds nothing to bring up.
    let before = lab.sw.requests().len();
    recover_heals(&lab);
    let undo = changes(os, &lab.sw.requests()[before..]);
    match os {
        Os::Eos => {
            // The session is gone: the abort is refused, the ports are
            // read, and none is still down, so nothing more is sent.
            let s = session(&lab);
            assert_eq!(
                undo,
                [
                    format!("enable | configure session {s} abort"),
                    "enable | show interfaces status".to_string()
                ]
            );
            let abort = lab.sw.requests()[before..]
                .iter()
                .find(|r| cmds(r).iter().any(|c| c.ends_with(" abort")))
                .cloned()
                .expect("abort");
            assert_eq!(abort["answer"], "error 1002", "{abort}");
        }
        Os::Nxos => {
            assert_eq!(
                undo,
                [
                    format!("cli_conf: interface {port} ; no shutdown"),
                    "cli_show_ascii: run bash pkill …".to_string()
                ]
            );
            let killed = lab
                .sw
                .requests()
                .iter()
                .find_map(|r| r.get("killed").cloned());
            assert_eq!(killed, Some(json!([])), "the timer had already run");
        }
    }
    assert!(lab.sw.admin_up(port));
}

#[test]
fn eos_the_commit_timer_rolls_the_change_back_when_nothing_aborts_it() {
    needs_tools!();
    with_nothing_to_undo_it_the_switch_timer_reverts(Os::Eos, 31);
}

#[test]
fn nxos_the_bash_timer_restores_the_port_when_nothing_stops_it() {
    needs_tools!();
    with_nothing_to_undo_it_the_switch_timer_reverts(Os::Nxos, 32);
}

// --------------------------------------------------------------- refusals

/// No output of the run (stdout, stderr, any file of the run directory,
/// the journal) holds `secret`.
fn assert_no_secret(lab: &Lab, o: &Output, secret: &str) {
    assert!(!String::from_utf8_lossy(&o.stdout).contains(secret));
    assert!(!String::from_utf8_lossy(&o.stderr).contains(secret));
    let mut files = vec![lab.journal.clone()];
    let mut dirs = vec![lab.out()];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                dirs.push(p);
            } else {
                files.push(p);
            }
        }
    }
    assert!(files.len() > 3, "{files:?}");
    for f in files {
        let bytes = std::fs::read(&f).unwrap_or_default();
        assert!(
            !String::from_utf8_lossy(&bytes).contains(secret),
            "{} holds the password",
            f.display()
        );
    }
}

fn a_wrong_password_is_named_and_never_shown(os: Os, net: u8) {
    let mut lab = lab(os, net, json!({}), FLAP);
    let wrong = "wr0ng-pa55word-for-the-test";
    lab.given = wrong.into();
    let o = lab.run(None);
    let v = lab.verdict("flap");
    assert_eq!(v["verdict"], "error", "{v}");
    let m = v["message"].as_str().expect("message");
    assert!(
        m.contains("refused before anything was touched")
            && m.contains("leaf1")
            && m.contains("HTTP 401"),
        "{m}"
    );
    assert!(m.contains("check api.user"), "{m}");
    // Refused credentials are not tried again, and nothing else was sent.
    let reqs = lab.sw.requests();
    assert_eq!(reqs.len(), 1, "{reqs:?}");
    assert_eq!(reqs[0]["answer"], 401);
    assert_eq!(reqs[0]["auth_ok"], false);
    // The run went on.
    assert_eq!(lab.verdict("after")["verdict"], "pass");
    assert_no_secret(&lab, &o, wrong);
    assert_no_secret(&lab, &o, SECRET);
    assert!(
        !lab.journal.exists()
            || std::fs::read_to_string(&lab.journal).is_ok_and(|j| !j.contains("\"opened\""))
    );
}

#[test]
fn eos_a_wrong_password_names_the_switch_and_the_status_never_the_secret() {
    needs_tools!();
    a_wrong_password_is_named_and_never_shown(Os::Eos, 41);
}

#[test]
fn nxos_a_wrong_password_names_the_switch_and_the_status_never_the_secret() {
    needs_tools!();
    a_wrong_password_is_named_and_never_shown(Os::Nxos, 42);
}

fn a_refused_command_is_named_and_undone(os: Os, net: u8) {
    let lab = lab(
        os,
        net,
        json!({"rules": [{"match": "^shutdown$", "do": "reject"}]}),
        FLAP,
    );
    let o = lab.run(None);
    let v = lab.verdict("flap");
    assert_ne!(v["verdict"], "pass", "{v}");
    let m = v["message"].as_str().expect("message");
    assert!(m.contains("leaf1") && m.contains("`shutdown`"), "{m}");
    let port = os.ports()[0];
    assert!(lab.sw.admin_up(port));
    assert_eq!(lab.sw.state()["timers"], json!([]), "no timer left running");
    lab.assert_journal_healed();
    assert_eq!(lab.verdict("after")["verdict"], "pass", "{}", text(&o));
    lab.assert_requests_well_formed();
    let reqs = lab.sw.requests();
    match os {
        Os::Eos => {
            let s = session(&lab);
            assert_eq!(
                changes(os, &reqs),
                [
                    format!("enable | configure session {s} | interface {port} | shutdown | commit timer 00:01:01"),
                    format!("enable | configure session {s} abort"),
                ]
            );
            assert!(lab.sw.state()["sessions"]
                .as_object()
                .expect("sessions")
                .is_empty());
        }
        Os::Nxos => assert_eq!(
            changes(os, &reqs),
            [
                "cli_show_ascii: run bash setsid …".to_string(),
                format!("cli_conf: interface {port} ; shutdown"),
                format!("cli_conf: interface {port} ; no shutdown"),
                "cli_show_ascii: run bash pkill …".to_string(),
            ]
        ),
    }
}

#[test]
fn eos_a_refused_command_is_named_and_its_session_aborted() {
    needs_tools!();
    a_refused_command_is_named_and_undone(Os::Eos, 51);
}

#[test]
fn nxos_a_refused_command_is_named_and_its_timer_stopped() {
    needs_tools!();
    a_refused_command_is_named_and_undone(Os::Nxos, 52);
}

// ------------------------------------------------- slow, dropped, busy

/// The change answered past the call's timeout (2 s): it may have been
/// made, so it is undone at once, and the run goes on.
fn a_slow_change_is_an_error_and_is_undone(os: Os, net: u8) {
    let lab = lab(
        os,
        net,
        json!({"rules": [{"match": os.change(), "do": "delay", "seconds": 4}]}),
        FLAP,
    );
    let o = lab.run(None);
    let v = lab.verdict("flap");
    assert_ne!(v["verdict"], "pass", "{v}");
    let m = v["message"].as_str().expect("message");
    assert!(m.contains("leaf1") && m.contains("no answer within"), "{m}");
    assert_eq!(lab.verdict("after")["verdict"], "pass", "{}", text(&o));
    let port = os.ports()[0];
    assert!(
        lab.sw.admin_up(port),
        "undone although the answer never came"
    );
    assert_eq!(lab.sw.state()["timers"], json!([]));
    lab.assert_journal_healed();
    let reqs = lab.sw.requests();
    let sent = reqs
        .iter()
        .filter(|r| cmds(r).iter().any(|c| regex_like(os.change(), c)))
        .count();
    assert_eq!(
        sent, 1,
        "a change that timed out is never sent twice: {reqs:?}"
    );
}

fn regex_like(pattern: &str, c: &str) -> bool {
    match pattern {
        "^commit timer" => c.starts_with("commit timer"),
        "^shutdown$" => c == "shutdown",
        other => panic!("{other}"),
    }
}

#[test]
fn eos_a_slow_answer_is_an_error_the_session_is_aborted_and_the_run_goes_on() {
    needs_tools!();
    a_slow_change_is_an_error_and_is_undone(Os::Eos, 61);
}

#[test]
fn nxos_a_slow_answer_is_an_error_the_port_restored_and_the_run_goes_on() {
    needs_tools!();
    a_slow_change_is_an_error_and_is_undone(Os::Nxos, 62);
}

/// Every try of the change dropped before it ran (a reset, tried three
/// times): an error, nothing changed, and the run goes on.
fn a_dropped_connection_is_an_error(os: Os, net: u8) {
    let lab = lab(
        os,
        net,
        json!({"rules": [{"match": os.change(), "do": "drop"}]}),
        FLAP,
    );
    let o = lab.run(None);
    let v = lab.verdict("flap");
    assert_ne!(v["verdict"], "pass", "{v}");
    let m = v["message"].as_str().expect("message");
    assert!(m.contains("leaf1"), "{m}");
    assert_eq!(lab.verdict("after")["verdict"], "pass", "{}", text(&o));
    let reqs = lab.sw.requests();
    let dropped = reqs.iter().filter(|r| r["answer"] == "dropped").count();
    assert_eq!(dropped, 3, "one try and two retries: {reqs:?}");
    assert!(lab.sw.admin_up(os.ports()[0]));
    assert_eq!(lab.sw.state()["timers"], json!([]));
    lab.assert_journal_healed();
}

#[test]
fn eos_a_dropped_connection_is_an_error_and_the_run_goes_on() {
    needs_tools!();
    a_dropped_connection_is_an_error(Os::Eos, 71);
}

#[test]
fn nxos_a_dropped_connection_is_an_error_and_the_run_goes_on() {
    needs_tools!();
    a_dropped_connection_is_an_error(Os::Nxos, 72);
}

/// A switch busy once (503) is asked again; another session waiting on its
/// commit timer refuses the fault before anything is touched.
#[test]
fn eos_a_busy_switch_is_retried_and_another_pending_session_refuses_the_fault() {
    needs_tools!();
    let lab = lab(
        Os::Eos,
        81,
        json!({"rules": [{"match": "^show interfaces status$", "do": "status", "status": 503, "times": 1}]}),
        FLAP,
    );
    let o = lab.run(None);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert_eq!(lab.sw.requests()[0]["answer"], 503);
    assert_eq!(lab.verdict("flap")["verdict"], "pass");

    let lab = lab_busy();
    let o = lab.run(None);
    let v = lab.verdict("flap");
    assert_eq!(v["verdict"], "error", "{}", text(&o));
    let m = v["message"].as_str().expect("message");
    assert!(
        m.contains("refused before anything was touched")
            && m.contains("configuration session someone-else has a pending commit timer"),
        "{m}"
    );
    assert!(
        changes(Os::Eos, &lab.sw.requests()).is_empty(),
        "nothing but reads: {:?}",
        lab.sw.requests()
    );
    assert_eq!(
        lab.sw.state()["sessions"],
        json!({"someone-else": "pendingCommitTimer"})
    );
}

fn lab_busy() -> Lab {
    lab(
        Os::Eos,
        82,
        json!({"pending_session": "someone-else"}),
        FLAP,
    )
}

/// `validate --probe` asks each API switch its version and the account's
/// privilege over the same HTTPS channel: one line per switch, exit 0 when
/// faults could run, exit 3 naming what is missing (EOS privilege 15,
/// NX-OS network-admin), and a refused password named by its status,
/// never shown.
fn the_probe_says_what_the_account_may_do(os: Os, net: u8) {
    let probe = |lab: &Lab| {
        let o = lab
            .rocegate()
            .args(["validate", "--probe", "-i"])
            .arg(&lab.inv)
            .arg("-s")
            .arg(&lab.suite)
            .output()
            .expect("runs");
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        (o.status.code(), text)
    };
    let lab_ok = lab(os, net, json!({}), FLAP);
    let (code, text) = probe(&lab_ok);
    assert_eq!(code, Some(0), "{text}");
    let want = match os {
        Os::Eos => "probe leaf1: eos EOS 4.31.1F, account privilege 15: reads and faults allowed",
        Os::Nxos => {
            "probe leaf1: nxos NX-OS 10.2(4), roles network-admin: reads and faults allowed"
        }
    };
    assert!(text.contains(want), "{text}");
    let weak = match os {
        Os::Eos => json!({"privilege": 1}),
        Os::Nxos => json!({"roles": "network-operator"}),
    };
    let lab_weak = lab(os, net + 1, weak, FLAP);
    let (code, text) = probe(&lab_weak);
    assert_eq!(code, Some(3), "{text}");
    let need = match os {
        Os::Eos => "faults need configuration sessions, which need privilege 15",
        Os::Nxos => "faults need network-admin",
    };
    assert!(
        text.contains("probe leaf1: ") && text.contains("FAILED") && text.contains(need),
        "{text}"
    );
    let mut lab_bad = lab(os, net + 2, json!({}), FLAP);
    lab_bad.given = "wr0ng-pa55word-for-the-probe".into();
    let (code, text) = probe(&lab_bad);
    assert_eq!(code, Some(3), "{text}");
    assert!(text.contains("FAILED") && text.contains("401"), "{text}");
    assert!(
        !text.contains("wr0ng-pa55word") && !text.contains(SECRET),
        "{text}"
    );
    // Only reads were sent.
    for l in [&lab_ok, &lab_weak] {
        for r in l.sw.requests() {
            assert!(
                cmds(&r)
                    .iter()
                    .all(|c| c == "enable" || c.starts_with("show ")),
                "{r}"
            );
        }
    }
}

#[test]
fn eos_the_probe_says_what_the_account_may_do() {
    needs_tools!();
    the_probe_says_what_the_account_may_do(Os::Eos, 81);
}

#[test]
fn nxos_the_probe_says_what_the_account_may_do() {
    needs_tools!();
    the_probe_says_what_the_account_may_do(Os::Nxos, 84);
}
