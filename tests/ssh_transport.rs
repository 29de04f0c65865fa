//! The ssh transport against a real OpenSSH server that the test starts on
//! 127.0.0.1 with its own host key, user key and configuration (nothing on
//! the machine's own sshd is touched). Needs root (sshd's privilege
//! separation) and openssh-server, which `.ci/run` installs; without them the
//! tests say so and skip.

use std::collections::HashMap;
use std::path::Path;
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use rocegate::config::inventory::SshSpec;
use rocegate::exec::ssh::SshTransport;
use rocegate::exec::{ExecFailure, Invocation, InvocationOutput, Role, StepCommands, Transport};

const SSHD: &str = "/usr/sbin/sshd";

struct Server {
    child: Child,
    port: u16,
    dir: tempfile::TempDir,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn keygen(path: &Path) {
    let ok = Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-f"])
        .arg(path)
        .status()
        .expect("ssh-keygen runs");
    assert!(ok.success());
}

/// An sshd of our own, or why there cannot be one.
fn server() -> Result<Server, String> {
    if !Path::new(SSHD).exists() {
        return Err(format!(
            "{SSHD} is not installed (apt-get install openssh-server)"
        ));
    }
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Err("sshd needs root for privilege separation".into());
    }
    std::fs::create_dir_all("/run/sshd").map_err(|e| format!("/run/sshd: {e}"))?;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    keygen(&d.join("host"));
    keygen(&d.join("user"));
    keygen(&d.join("stranger"));
    std::fs::copy(d.join("user.pub"), d.join("authorized_keys")).unwrap();
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let config = format!(
        "Port {port}\nListenAddress 127.0.0.1\nHostKey {h}\nAuthorizedKeysFile {a}\n\
         PidFile {p}\nStrictModes no\nUsePAM no\nPermitRootLogin prohibit-password\n\
         PasswordAuthentication no\nKbdInteractiveAuthentication no\nLogLevel ERROR\nMaxSessions 10\n",
        h = d.join("host").display(),
        a = d.join("authorized_keys").display(),
        p = d.join("sshd.pid").display(),
    );
    std::fs::write(d.join("sshd_config"), config).unwrap();
    let child = Command::new(SSHD)
        .args(["-D", "-e", "-f"])
        .arg(d.join("sshd_config"))
        .stderr(std::fs::File::create(d.join("sshd.log")).unwrap())
        .spawn()
        .map_err(|e| format!("cannot start sshd: {e}"))?;
    let deadline = Instant::now() + Duration::from_secs(10);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        if Instant::now() > deadline {
            return Err("sshd did not listen within 10 s".into());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Ok(Server { child, port, dir })
}

fn spec(s: &Server, key: &str) -> SshSpec {
    let yaml = format!(
        "user: root\nport: {}\nkey: {}\noptions: [StrictHostKeyChecking=no, UserKnownHostsFile=/dev/null]\nconnect_timeout: 3s\n",
        s.port,
        s.dir.path().join(key).display()
    );
    serde_yaml::from_str(&yaml).unwrap()
}

fn transport(s: &Server, key: &str) -> SshTransport {
    let hosts: HashMap<String, String> = [
        ("h1".to_string(), "127.0.0.1".to_string()),
        // Loopback, but nothing listens there.
        ("dead".to_string(), "127.0.0.2".to_string()),
    ]
    .into();
    SshTransport::with_addresses(&spec(s, key), hosts).unwrap()
}

fn inv(host: &str, line: &str, role: Role, timeout_s: u64) -> Invocation {
    Invocation {
        host: host.into(),
        argv: line.split(' ').map(String::from).collect(),
        env: Vec::new(),
        role,
        timeout: Duration::from_secs(timeout_s),
        at: Duration::ZERO,
    }
}

async fn run(t: &SshTransport, steps: Vec<Vec<Invocation>>) -> Vec<Vec<InvocationOutput>> {
    let (_tx, rx) = tokio::sync::watch::channel(false);
    let batch: Vec<StepCommands> = steps
        .into_iter()
        .map(|invocations| StepCommands { invocations })
        .collect();
    t.run_batch(&batch, rx).await
}

/// Processes whose command line contains `marker`, polled until none are
/// left or `within` passes.
fn gone(marker: &str, within: Duration) -> bool {
    let deadline = Instant::now() + within;
    loop {
        let out = Command::new("pgrep").args(["-f", marker]).output().unwrap();
        if !out.status.success() {
            return true;
        }
        if Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

macro_rules! need_server {
    () => {
        match server() {
            Ok(s) => s,
            Err(why) => {
                eprintln!("skipped: {why}");
                return;
            }
        }
    };
}

#[tokio::test(flavor = "multi_thread")]
async fn commands_run_with_their_env_exit_codes_and_errors_name_the_host() {
    let s = need_server!();
    let t = transport(&s, "user");
    let mut echo = inv("h1", "sh -c echo_$ROCEGATE_T", Role::Probe, 20);
    echo.argv = vec![
        "sh".into(),
        "-c".into(),
        "echo \"$ROCEGATE_T\"; exit 3".into(),
    ];
    echo.env = vec![("ROCEGATE_T".into(), "x y 'z'".into())];
    let out = run(
        &t,
        vec![
            vec![echo],
            vec![inv("h1", "rocegate-no-such-binary", Role::Probe, 20)],
            vec![inv("dead", "true", Role::Probe, 20)],
        ],
    )
    .await;
    assert_eq!(out[0][0].stdout, "x y 'z'\n", "{:?}", out[0][0]);
    assert_eq!(out[0][0].exit, Some(3));
    assert!(out[0][0].failure.is_none());
    assert!(
        !out[0][0].stderr.contains("@@rocegate"),
        "the marker is stripped"
    );
    assert!(
        matches!(&out[1][0].failure, Some(ExecFailure::MissingBinary(m)) if m.starts_with("h1:")),
        "{:?}",
        out[1][0]
    );
    assert!(
        matches!(&out[2][0].failure, Some(ExecFailure::Unreachable(m)) if m.starts_with("dead:")),
        "{:?}",
        out[2][0]
    );
    let stranger = transport(&s, "stranger");
    let out = run(&stranger, vec![vec![inv("h1", "true", Role::Probe, 20)]]).await;
    assert!(
        matches!(&out[0][0].failure, Some(ExecFailure::AuthRefused(m)) if m.starts_with("h1:")),
        "{:?}",
        out[0][0]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_dead_man_timeout_kills_a_hung_command_on_the_host() {
    let s = need_server!();
    let t = transport(&s, "user");
    let out = run(&t, vec![vec![inv("h1", "sleep 303.25", Role::Probe, 1)]]).await;
    assert!(
        matches!(out[0][0].failure, Some(ExecFailure::TimedOut(_))),
        "{:?}",
        out[0][0]
    );
    assert_eq!(out[0][0].exit, Some(124));
    assert!(gone("sleep 303.25", Duration::from_secs(10)));
}

#[tokio::test(flavor = "multi_thread")]
async fn cancelling_kills_the_remote_process_group_and_servers_stop_after_clients() {
    let s = need_server!();
    let t = transport(&s, "user");
    // A server that would listen for minutes, its client done at once.
    let out = run(
        &t,
        vec![vec![
            inv("h1", "sleep 301.5", Role::Server, 600),
            inv("h1", "true", Role::Client, 20),
        ]],
    )
    .await;
    assert!(out[0][0].failure.is_none(), "{:?}", out[0][0]);
    assert_eq!(out[0][1].exit, Some(0));
    assert!(
        gone("sleep 301.5", Duration::from_secs(10)),
        "server left behind"
    );

    // A long command under a wrapper shell, cancelled after a second.
    let (tx, rx) = tokio::sync::watch::channel(false);
    let mut long = inv("h1", "sh -c x", Role::Probe, 600);
    long.argv = vec!["sh".into(), "-c".into(), "sleep 302.75; true".into()];
    let batch = vec![StepCommands {
        invocations: vec![long],
    }];
    let handle = async {
        tokio::time::sleep(Duration::from_secs(1)).await;
        let _ = tx.send(true);
    };
    let (out, _) = tokio::join!(t.run_batch(&batch, rx), handle);
    assert!(
        matches!(out[0][0].failure, Some(ExecFailure::Cancelled(_))),
        "{:?}",
        out[0][0]
    );
    assert!(
        gone("sleep 302.75", Duration::from_secs(10)),
        "child left behind"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn timed_commands_start_at_their_offset() {
    let s = need_server!();
    let t = transport(&s, "user");
    let before = t.now_s();
    let mut late = inv("h1", "true", Role::Probe, 20);
    late.at = Duration::from_millis(1500);
    let out = run(&t, vec![vec![late, inv("h1", "true", Role::Probe, 20)]]).await;
    assert!(out[0][0].started_s - before >= 1.5, "{:?}", out[0][0]);
    assert!(out[0][1].started_s < out[0][0].started_s);
}

/// The limits admit whole steps: more steps with servers than global slots
/// run in waves (servers never fill every slot while their clients wait), and
/// a step needing more commands on one host than `per_host` (an incast) runs
/// them all at once instead of waiting for slots it can never get.
#[tokio::test(flavor = "multi_thread")]
async fn slots_admit_whole_steps_so_servers_never_starve_their_clients() {
    let s = need_server!();
    let mut spec = spec(&s, "user");
    spec.parallelism = 3;
    spec.per_host = 2;
    let hosts: HashMap<String, String> = [
        ("h1".to_string(), "127.0.0.1".to_string()),
        ("h2".to_string(), "127.0.0.1".to_string()),
    ]
    .into();
    let t = SshTransport::with_addresses(&spec, hosts).unwrap();
    // Four pairs, each a server on h1 that would listen for minutes and a
    // client on h2: one step (two slots) at a time fits in three slots.
    let pairs: Vec<Vec<Invocation>> = (0..4)
        .map(|k| {
            vec![
                inv("h1", &format!("sleep 304.{k}"), Role::Server, 30),
                inv("h2", "true", Role::Client, 30),
            ]
        })
        .collect();
    let out = run(&t, pairs).await;
    for (k, step) in out.iter().enumerate() {
        assert!(step[0].failure.is_none(), "server {k}: {:?}", step[0]);
        assert_eq!(step[1].exit, Some(0), "client {k}: {:?}", step[1]);
    }
    let mut spans: Vec<(f64, f64)> = out.iter().map(|s| (s[0].started_s, s[0].ended_s)).collect();
    spans.sort_by(|a, b| a.0.total_cmp(&b.0));
    for w in spans.windows(2) {
        assert!(w[1].0 >= w[0].1, "steps overlapped: {spans:?}");
    }

    // An incast: three servers on h1 for three clients on h2, more than
    // per_host on each and as many commands as twice the global limit.
    let mut incast = Vec::new();
    for k in 0..3 {
        incast.push(inv("h1", &format!("sleep 305.{k}"), Role::Server, 30));
    }
    for _ in 0..3 {
        incast.push(inv("h2", "true", Role::Client, 30));
    }
    let out = run(&t, vec![incast]).await;
    for o in &out[0][..3] {
        assert!(o.failure.is_none(), "{o:?}");
    }
    for o in &out[0][3..] {
        assert_eq!(o.exit, Some(0), "{o:?}");
    }
    assert!(gone("sleep 30[45]\\.", Duration::from_secs(10)));
}

/// The preflight in one round trip per host: the live host reports its name,
/// tools and clock (same machine, so the skew is within the round trip);
/// the dead one is reported unreachable, and a later command to it fails at
/// once without another connect attempt.
#[tokio::test(flavor = "multi_thread")]
async fn preflight_reads_a_live_host_and_marks_a_dead_one() {
    use rocegate::audit::preflight::{self, Target};
    let s = need_server!();
    let t = transport(&s, "user");
    let target = |host: &str| Target {
        host: host.into(),
        switch: false,
        required: ["iperf3".to_string(), "rocegate-no-such-tool".to_string()]
            .into_iter()
            .collect(),
        looks_for: preflight::node_tools(),
        devices: Vec::new(),
        netdevs: vec!["lo".into()],
    };
    let (_tx, rx) = tokio::sync::watch::channel(false);
    let reports = preflight::run(&t, &[target("h1"), target("dead")], rx).await;
    let live = &reports[0];
    assert!(live.reachable, "{live:?}");
    assert!(!live.hostname.is_empty());
    assert!(live.tools["ip"].is_some(), "{:?}", live.tools);
    assert!(
        live.problems
            .iter()
            .any(|p| p == "not installed: rocegate-no-such-tool"),
        "{:?}",
        live.problems
    );
    let skew = live.clock_skew_s.expect("a clock reading");
    assert!(
        skew.abs() <= live.skew_uncertainty_s.unwrap() + 0.05,
        "same clock: {skew} vs ±{:?}",
        live.skew_uncertainty_s
    );
    let dead = &reports[1];
    assert!(!dead.reachable);
    assert!(
        dead.error
            .as_deref()
            .unwrap()
            .starts_with("unreachable: dead:"),
        "{dead:?}"
    );
    let started = Instant::now();
    let out = run(&t, vec![vec![inv("dead", "true", Role::Probe, 20)]]).await;
    assert!(
        matches!(&out[0][0].failure, Some(ExecFailure::Unreachable(m)) if m.contains("at preflight")),
        "{:?}",
        out[0][0]
    );
    assert!(
        started.elapsed() < Duration::from_millis(500),
        "not retried"
    );
}
