//! Faults on switches reached over ssh (`driver: sonic`, `driver:
//! cumulus`), end to end through a real OpenSSH server: `rocegate run` and
//! `rocegate recover` against a stand-in switch whose login runs every
//! command with stand-in tools first on PATH (tests/switch_ssh/login.sh,
//! tests/switch_ssh/standin.py). Each tool logs its argv, keeps the ports'
//! admin state and the dead-man timers in a state file, answers in the real
//! tools' shapes, and the timers really fire (after `scale` × their delay).
//! The workload is iperf3 between two loopback "nodes" reached over the same
//! sshd on other loopback addresses (no stand-in tools there); what is under
//! test is the conversation with the switch.
//!
//! Proven for each platform: the exact commands of a link flap (prior
//! read, dead-man armed before the change, the change, the undo, the timer
//! disarmed); a real `rocegate run` SIGKILLed once the change is on the
//! switch, then healed by `rocegate recover`; the same kill left alone, the
//! switch's own timer restoring the port, `recover` then only healing the
//! journal; a run killed while its change is still being made, `recover`
//! waiting for that change before it undoes; an unreachable switch and a
//! refused `sudo` named, with nothing changed. The Cumulus stand-in's ports
//! are a real veth pair in a network namespace of the lab's (the linux
//! driver reads /sys/class/net). The labs run one at a time. Without root,
//! sshd, python3 or iperf3 the tests say so and skip.

mod common;
use common::sshd::{self, Sshd};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Nos {
    Sonic,
    Cumulus,
}

impl Nos {
    fn driver(self) -> &'static str {
        match self {
            Nos::Sonic => "sonic",
            Nos::Cumulus => "cumulus",
        }
    }
    /// The stand-in's ports; the nodes are cabled to them and the first
    /// is flapped. Cumulus's are named after the lab: they are real
    /// interfaces (in the lab's network namespace), and the driver keeps
    /// its log of each port's flaps under the machine's /run/rocegate,
    /// which tests running at once share.
    fn ports(self, net: u8) -> [String; 2] {
        match self {
            Nos::Sonic => ["Ethernet0".into(), "Ethernet4".into()],
            Nos::Cumulus => [format!("swp{net}"), format!("swp{}", u16::from(net) + 100)],
        }
    }
    fn port_range(self, net: u8) -> String {
        match self {
            Nos::Sonic => "Ethernet[0,4]".into(),
            Nos::Cumulus => format!("swp[{net},{}]", u16::from(net) + 100),
        }
    }
    /// The tools the stand-in switch answers for (symlinks to standin.py).
    fn tools(self) -> &'static [&'static str] {
        match self {
            Nos::Sonic => &[
                "sudo",
                "config",
                "show",
                "systemd-run",
                "systemctl",
                "docker",
                "vtysh",
                "portstat",
                "pfcstat",
                "queuestat",
                "sonic-cfggen",
            ],
            Nos::Cumulus => &[
                "sudo",
                "id",
                "ip",
                "nv",
                "setsid",
                "sleep",
                "pgrep",
                "pkill",
                "vtysh",
                "systemctl",
            ],
        }
    }
    /// The stand-in's log line of the change of `port`, once it is made.
    fn change_line(self, port: &str) -> String {
        match self {
            Nos::Sonic => format!("config interface shutdown {port}"),
            Nos::Cumulus => format!("ip link set dev {port} down"),
        }
    }
}

/// Skips the test, saying why, when this machine cannot run it.
macro_rules! needs_sshd {
    () => {
        if let Some(why) = unavailable() {
            println!("skipped: {why}");
            return;
        }
    };
}

fn unavailable() -> Option<String> {
    if let Some(why) = sshd::unavailable() {
        return Some(why);
    }
    for (tool, pkg) in [("python3", "python3"), ("iperf3", "iperf3")] {
        if Command::new(tool).arg("--version").output().is_err() {
            return Some(format!("{tool} is not installed: apt-get install {pkg}"));
        }
    }
    None
}

/// A stand-in switch's directory: config.json, state.json, log, sessions
/// and bin/ (the tools).
struct StandIn {
    dir: PathBuf,
}

impl StandIn {
    fn create(nos: Nos, dir: &Path, ports: &[String; 2], extra: Value) -> StandIn {
        let bin = dir.join("bin");
        std::fs::create_dir_all(&bin).expect("stand-in bin");
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/switch_ssh/standin.py");
        for tool in nos.tools() {
            std::os::unix::fs::symlink(&script, bin.join(tool)).expect("tool link");
        }
        let mut config = json!({
            "platform": nos.driver(),
            "ports": ports,
            "account": "admin",
            "sudo": "ok",
            // The run's dead-man (the outage + 60 s) fires after half of it:
            // never during a run.
            "scale": 0.5,
            "asn": 65100,
            "peers": {"10.0.0.1": "Established"},
        });
        for (k, v) in extra.as_object().expect("an object") {
            config[k] = v.clone();
        }
        std::fs::write(dir.join("config.json"), config.to_string()).expect("config");
        StandIn {
            dir: dir.to_path_buf(),
        }
    }

    /// Every call of a stand-in tool, in order.
    fn log(&self) -> Vec<String> {
        std::fs::read_to_string(self.dir.join("log"))
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect()
    }

    /// The commands as the switch's account sent them: a `sudo -n X`
    /// line stands for itself and the `X` it ran (checked here).
    fn sent(&self) -> Vec<String> {
        sent(&self.log())
    }

    fn state(&self) -> Value {
        std::fs::read_to_string(self.dir.join("state.json"))
            .ok()
            .and_then(|s| serde_json::from_str(&s).ok())
            .unwrap_or(Value::Null)
    }

    fn fired(&self) -> Vec<Value> {
        self.state()["fired"]
            .as_array()
            .cloned()
            .unwrap_or_default()
    }
}

/// The commands the driver sent, in order, from the stand-in's log:
/// without the ssh transport's own wrapper around each session (`setsid -w
/// sh -c 'echo "@@rocegate-pgid $$" …`), the polls whose count is timing
/// (`pgrep`, sub-second `sleep`) and what a timer ran (`timer: …`); and
/// each `sudo -n X` folded with the `X` that follows it (the stand-in's
/// sudo ran it). A `sudo` line without its command (refused, or a tool
/// that is not a stand-in) stays alone.
fn sent(log: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for line in log {
        let poll = line.starts_with("pgrep ")
            || line
                .strip_prefix("sleep ")
                .and_then(|t| t.parse::<f64>().ok())
                .is_some_and(|t| t < 1.0);
        if poll
            || line.starts_with("timer: ")
            || line.starts_with("setsid -w sh -c 'echo \"@@rocegate-pgid")
        {
            continue;
        }
        let folded = out
            .last()
            .and_then(|prev| prev.strip_prefix("sudo -n "))
            .is_some_and(|cmd| cmd == line);
        if !folded {
            out.push(line.clone());
        }
    }
    out
}

/// Polls `ok` until it holds or `within` has passed.
fn eventually(within: Duration, mut ok: impl FnMut() -> bool) -> bool {
    let end = Instant::now() + within;
    while Instant::now() < end {
        if ok() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    ok()
}

/// One fabric: two loopback nodes reached over ssh on 127.0.0.2-3,
/// cabled to the stand-in switch on 127.0.0.1 (same sshd).
struct Lab {
    /// One lab at a time: the stand-ins are Python processes and the
    /// drivers poll for their timers with deadlines (2 s for the linux
    /// dead-man to appear); labs at once on a small machine miss them.
    _one: std::sync::MutexGuard<'static, ()>,
    dir: tempfile::TempDir,
    nos: Nos,
    ports: [String; 2],
    /// The Cumulus stand-in's network namespace (its ports).
    netns: Option<String>,
    sw: StandIn,
    _sshd: Sshd,
    inv: PathBuf,
    suite: PathBuf,
    journal: PathBuf,
}

impl Drop for Lab {
    fn drop(&mut self) {
        // A linux dead-man still armed (a test that failed) would fire
        // into a namespace that is gone: stop it first.
        for id in self.fault_ids() {
            let _ = Command::new("pkill")
                .args(["-f", &format!("^sh -c : rocegate-deadma[n] {id};")])
                .status();
        }
        if let Some(ns) = &self.netns {
            let _ = Command::new("ip").args(["netns", "del", ns]).status();
            for p in &self.ports {
                let _ = std::fs::remove_file(format!("/run/rocegate/flaps-{p}"));
            }
        }
    }
}

/// The switch's address in the inventory: the stand-in's, or one where
/// nothing listens.
const SWITCH: &str = "127.0.0.1";
const NOWHERE: &str = "127.0.0.9";

/// Runs `args` (a command line that must work) and says what it printed.
fn must(args: &[&str]) -> String {
    let o = Command::new(args[0])
        .args(&args[1..])
        .output()
        .unwrap_or_else(|e| panic!("{args:?}: {e}"));
    assert!(o.status.success(), "{args:?}: {}", text(&o));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// A network namespace holding the switch's two ports as a veth pair,
/// both up (cabled to each other).
fn switch_netns(net: u8, ports: &[String; 2]) -> String {
    let ns = format!("rocegate-sw-{}-{net}", std::process::id());
    must(&["ip", "netns", "add", &ns]);
    must(&[
        "ip", "-n", &ns, "link", "add", &ports[0], "type", "veth", "peer", "name", &ports[1],
    ]);
    for p in ports {
        must(&["ip", "-n", &ns, "link", "set", "dev", p, "up"]);
    }
    ns
}

static ONE: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn lab(nos: Nos, net: u8, switch: Value, suite: &str, address: &str) -> Lab {
    let one = ONE.lock().unwrap_or_else(|p| p.into_inner());
    let dir = tempfile::tempdir().expect("temp dir");
    let swdir = dir.path().join("switch");
    std::fs::create_dir(&swdir).expect("switch dir");
    let ports = nos.ports(net);
    let sw = StandIn::create(nos, &swdir, &ports, switch);
    let netns = (nos == Nos::Cumulus).then(|| switch_netns(net, &ports));
    let login = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/switch_ssh/login.sh");
    let server = Sshd::start(&[
        (
            SWITCH,
            Some(format!(
                "{} {} {}",
                login.display(),
                swdir.display(),
                netns.as_deref().unwrap_or_default()
            )),
        ),
        ("127.0.0.2", None),
        ("127.0.0.3", None),
    ])
    .expect("sshd starts");
    let inv = dir.path().join("inventory.yaml");
    std::fs::write(
        &inv,
        format!(
            "\
fabric:
  name: ssh-{os}-{net}
  environment: lab
  rails: 1
  roce: {{pfc_priority: 3, dscp_roce: 26, dscp_cnp: 48, dcqcn: false, mtu: 4096}}
transport: {transport}
nodes:
  - hosts: lo[1-2]
    address: '127.0.0.[2-3]'
    nics:
      - {{device: lo, netdev: lo, gid_index: 0, rail: 0, speed_gbps: 100, address: '127.0.{net}.{{index}}'}}
switches:
  - {{name: leaf1, role: leaf, driver: {os}, rail: 0, address: '{address}'}}
links:
  - {{a: 'lo[1-2]:lo', b: 'leaf1:{range}'}}
",
            os = nos.driver(),
            transport = server.transport_yaml(server.port),
            range = nos.port_range(net),
        ),
    )
    .expect("inventory");
    let suite_path = dir.path().join("suite.yaml");
    std::fs::write(&suite_path, suite.replace("PORT", &ports[0])).expect("suite");
    Lab {
        _one: one,
        journal: dir.path().join("journal.jsonl"),
        dir,
        nos,
        ports,
        netns,
        sw,
        _sshd: server,
        inv,
        suite: suite_path,
    }
}

/// The workload, a flap of the first port 2 s into it for 1 s (after a
/// pre-fault interval of iperf3 over ssh has ended), then a test after the
/// fault: the run goes on.
const FLAP: &str = "\
suite: {name: ssh-flap}
ledger: {enabled: false}
tests:
  - {name: load, iperf: {duration: 5s, interval: 0.5s}, pattern: rail-pairs, expect: {min: 0.01}}
  - name: flap
    fault: {link_flap: {target: 'leaf1:PORT'}, during: load, at: 2s, for: 1s}
    expect: {workload: completes, recovers_within: 10s, min_fraction: 0.05}
  - {name: after, iperf: {duration: 1s}, pattern: rail-pairs, expect: {min: 0.01}}
";

/// A flap whose outage outlasts the moment the run is killed.
const LONG: &str = "\
suite: {name: ssh-kill}
ledger: {enabled: false}
tests:
  - {name: load, iperf: {duration: 6s}, pattern: rail-pairs, expect: {min: 0.01}}
  - name: flap
    fault: {link_flap: {target: 'leaf1:PORT'}, during: load, at: 1s, for: 4s}
    expect: {workload: completes}
";

impl Lab {
    /// Whether `port` is administratively up on the switch: the stand-in's
    /// state (SONiC), the kernel's IFF_UP of the veth (Cumulus).
    fn admin_up(&self, port: &str) -> bool {
        match &self.netns {
            None => self.sw.state()["admin"][port] != false,
            Some(ns) => {
                let flags = must(&[
                    "ip",
                    "netns",
                    "exec",
                    ns,
                    "cat",
                    &format!("/sys/class/net/{port}/flags"),
                ]);
                u32::from_str_radix(flags.trim().trim_start_matches("0x"), 16)
                    .is_ok_and(|f| f & 1 == 1)
            }
        }
    }

    /// The dead-man timers armed on the switch: systemd's (the stand-in's
    /// state) or the linux driver's detached `sh -c` (its processes).
    fn timers(&self) -> Vec<String> {
        match self.nos {
            Nos::Sonic => self.sw.state()["timers"]
                .as_object()
                .map(|t| t.keys().cloned().collect())
                .unwrap_or_default(),
            Nos::Cumulus => self
                .fault_ids()
                .into_iter()
                .filter(|id| {
                    Command::new("pgrep")
                        .args(["-f", &format!("^sh -c : rocegate-deadma[n] {id};")])
                        .output()
                        .is_ok_and(|o| o.status.success())
                })
                .collect(),
        }
    }

    fn rocegate(&self) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_rocegate"));
        c.current_dir(self.dir.path());
        c.env("XDG_STATE_HOME", self.dir.path().join("state"));
        c.env_remove("ROCEGATE_FAILPOINT");
        c
    }

    fn out(&self) -> PathBuf {
        self.dir.path().join("run")
    }

    fn run_command(&self) -> Command {
        let mut c = self.rocegate();
        c.args(["run", "--progress", "none", "-i"])
            .arg(&self.inv)
            .arg("-s")
            .arg(&self.suite)
            .arg("--journal")
            .arg(&self.journal)
            .arg("--out")
            .arg(self.out());
        c
    }

    fn run(&self) -> Output {
        self.run_command().output().expect("rocegate runs")
    }

    /// A real `rocegate run`, SIGKILLed as soon as the stand-in has taken
    /// the change (its log has the change's line and its state the port
    /// down): the journal holds the fault open, the switch's timer armed.
    fn run_killed_after_the_change(&self) {
        let mut child: Child = self
            .run_command()
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("rocegate starts");
        let port = &self.ports[0];
        let line = self.nos.change_line(port);
        let seen = eventually(Duration::from_secs(20), || {
            self.sw.log().contains(&line) && !self.admin_up(port)
        });
        child.kill().expect("SIGKILL");
        let status = child.wait().expect("reaped");
        assert!(
            seen,
            "the change never reached the switch: {:?}",
            self.sw.log()
        );
        assert_eq!(status.signal(), Some(9), "{status:?}");
        assert!(!self.admin_up(port), "the change was made");
        assert_eq!(self.timers().len(), 1, "{}", self.sw.state());
        let j = std::fs::read_to_string(&self.journal).expect("journal");
        assert!(j.contains("\"opened\"") && !j.contains("\"healed\""), "{j}");
    }

    /// A real `rocegate run`, SIGKILLed while the change is being made on
    /// the switch (its command has started, the port is not down yet).
    fn run_killed_during_the_change(&self) {
        let mut child: Child = self
            .run_command()
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("rocegate starts");
        let port = &self.ports[0];
        let line = self.nos.change_line(port);
        let seen = eventually(Duration::from_secs(20), || self.sw.log().contains(&line));
        child.kill().expect("SIGKILL");
        let _ = child.wait();
        assert!(seen, "the change never started: {:?}", self.sw.log());
        assert!(self.admin_up(port), "killed before the change landed");
    }

    /// Whether the apply of fault `id` is still running on the switch.
    fn applying(&self, id: &str) -> bool {
        Command::new("pgrep")
            .args(["-f", &format!(": rocegate-appl[y] {id};")])
            .output()
            .is_ok_and(|o| o.status.success())
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

    /// `recover` heals the one open fault; a second finds none and sends
    /// nothing to the switch.
    fn recover_heals(&self) {
        let o = self.recover();
        let said = text(&o);
        assert_eq!(o.status.code(), Some(0), "{said}");
        assert!(said.contains("all 1 healed"), "{said}");
        println!("{said}");
        self.assert_journal_healed();
        let before = self.sw.log().len();
        let again = self.recover();
        assert!(
            String::from_utf8_lossy(&again.stdout).contains("no open faults"),
            "{}",
            text(&again)
        );
        assert_eq!(self.sw.log().len(), before, "{:?}", self.sw.log());
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

    fn journal(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.journal)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }

    /// Every fault opened is healed, and there was one.
    fn assert_journal_healed(&self) {
        let j = self.journal();
        let opened: Vec<&Value> = j.iter().filter(|e| e["event"] == "opened").collect();
        assert!(!opened.is_empty(), "nothing journaled: {j:?}");
        for o in opened {
            assert!(
                j.iter()
                    .any(|e| e["event"] == "healed" && e["id"] == o["id"]),
                "{} not healed: {j:?}",
                o["id"]
            );
        }
    }

    /// Every fault journaled, by id.
    fn fault_ids(&self) -> Vec<String> {
        self.journal()
            .iter()
            .filter(|e| e["event"] == "opened")
            .filter_map(|e| e["id"].as_str().map(str::to_string))
            .collect()
    }

    /// The id of the one fault journaled.
    fn fault_id(&self) -> String {
        self.journal()
            .iter()
            .find(|e| e["event"] == "opened")
            .and_then(|e| e["id"].as_str().map(str::to_string))
            .expect("a fault was journaled")
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

// ------------------------------------------------------------------ sonic

/// What the sonic driver sends, by step, for a fault with `id` on `port`.
mod sonic {
    pub const STATUS: &str = "show interfaces status";
    pub const BGP: &str = "sudo -n vtysh -c 'show bgp vrf all summary json'";

    pub fn prior() -> Vec<String> {
        vec![STATUS.into(), BGP.into()]
    }

    pub fn timer(id: &str) -> String {
        format!("rocegate-deadman-{id}.timer")
    }

    /// The dead-man armed and seen running, then the change.
    pub fn apply(id: &str, port: &str, seconds: u64) -> Vec<String> {
        vec![
            format!("sudo -n systemd-run --quiet --collect --unit=rocegate-deadman-{id} --on-active={seconds}s sh -c 'config interface startup {port}'"),
            format!("sudo -n systemctl is-active --quiet {}", timer(id)),
            format!("sudo -n config interface shutdown {port}"),
        ]
    }

    /// The restore, then the timer stopped and seen stopped.
    pub fn undo(id: &str, port: &str) -> Vec<String> {
        vec![
            format!("sudo -n config interface startup {port}"),
            format!("sudo -n systemctl stop {}", timer(id)),
            format!("sudo -n systemctl is-active --quiet {}", timer(id)),
        ]
    }
}

#[test]
fn sonic_link_flap_reads_arms_the_timer_shuts_starts_and_stops_the_timer() {
    needs_sshd!();
    let lab = lab(Nos::Sonic, 61, json!({}), FLAP, SWITCH);
    let o = lab.run();
    let v = lab.verdict("flap");
    assert_eq!(v["verdict"], "pass", "{v}\n{}", text(&o));
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert_eq!(lab.verdict("after")["verdict"], "pass");
    let id = lab.fault_id();
    let port = "Ethernet0";
    let mut want = sonic::prior();
    want.extend(sonic::apply(&id, port, 61));
    want.extend(sonic::undo(&id, port));
    // Settled: read again after the undo.
    want.extend(sonic::prior());
    assert_eq!(lab.sw.sent(), want, "raw log: {:#?}", lab.sw.log());
    assert!(lab.admin_up(port));
    assert!(lab.timers().is_empty(), "{}", lab.sw.state());
    assert!(lab.sw.fired().is_empty(), "{}", lab.sw.state());
    lab.assert_journal_healed();
    println!("{:#?}", lab.sw.log());
}

#[test]
fn sonic_a_killed_run_is_healed_by_recover_which_starts_the_port_and_stops_the_timer() {
    needs_sshd!();
    let lab = lab(Nos::Sonic, 62, json!({}), LONG, SWITCH);
    lab.run_killed_after_the_change();
    let id = lab.fault_id();
    let before = lab.sw.log().len();
    lab.recover_heals();
    assert_eq!(
        sent(&lab.sw.log()[before..]),
        sonic::undo(&id, "Ethernet0"),
        "raw log: {:#?}",
        lab.sw.log()
    );
    assert!(lab.admin_up("Ethernet0"), "recover restored the port");
    assert!(lab.timers().is_empty(), "and stopped the timer");
    assert!(lab.sw.fired().is_empty(), "healed before the timer fired");
    println!("{:#?}", lab.sw.log());
}

#[test]
fn sonic_the_systemd_timer_restores_the_port_of_a_killed_run_and_recover_only_heals_the_journal() {
    needs_sshd!();
    // The run's 64 s dead-man fires after 3.2 s.
    let lab = lab(Nos::Sonic, 63, json!({"scale": 0.05}), LONG, SWITCH);
    lab.run_killed_after_the_change();
    let id = lab.fault_id();
    assert!(
        eventually(Duration::from_secs(15), || lab.admin_up("Ethernet0")),
        "the timer never brought Ethernet0 back: {}",
        lab.sw.state()
    );
    assert_eq!(
        lab.sw.fired(),
        [
            json!({"timer": sonic::timer(&id), "command": ["sh", "-c", "config interface startup Ethernet0"]})
        ]
    );
    assert!(lab.timers().is_empty());
    assert!(
        lab.sw
            .log()
            .contains(&"timer: config interface startup Ethernet0".to_string()),
        "{:?}",
        lab.sw.log()
    );
    let before = lab.sw.log().len();
    lab.recover_heals();
    // The undo is idempotent: a startup of an up port, and a stop of a
    // timer that is gone (refused, not loaded) that leaves nothing armed.
    assert_eq!(
        sent(&lab.sw.log()[before..]),
        sonic::undo(&id, "Ethernet0"),
        "raw log: {:#?}",
        lab.sw.log()
    );
    assert!(lab.admin_up("Ethernet0"));
    println!("{:#?}", lab.sw.log());
}

#[test]
fn sonic_an_unreachable_switch_is_named_and_nothing_is_sent() {
    needs_sshd!();
    let lab = lab(Nos::Sonic, 64, json!({}), FLAP, NOWHERE);
    let o = lab.run();
    let said = text(&o);
    let v = lab.verdict("flap");
    assert_ne!(v["verdict"], "pass", "{v}\n{said}");
    let m = v["message"].as_str().unwrap_or_default();
    assert!(
        m.contains("leaf1") && m.contains("unreachable"),
        "{v}\n{said}"
    );
    assert!(lab.sw.log().is_empty(), "{:?}", lab.sw.log());
    assert!(
        !lab.journal().iter().any(|e| e["event"] == "opened"),
        "{:?}",
        lab.journal()
    );
    assert_eq!(lab.verdict("after")["verdict"], "pass", "{said}");
    println!("{v}\n{:#?}", lab.sw.log());
}

/// `sudo -n` asks for a password: the dead-man cannot be armed, so the
/// apply stops before the change; nothing runs as root and the port stays
/// up. The run goes on.
#[test]
fn sonic_a_refused_sudo_changes_nothing_and_is_named() {
    needs_sshd!();
    let lab = lab(Nos::Sonic, 65, json!({"sudo": "denied"}), FLAP, SWITCH);
    let o = lab.run();
    let said = text(&o);
    let v = lab.verdict("flap");
    assert_eq!(v["verdict"], "error", "{v}\n{said}");
    let m = v["message"].as_str().unwrap_or_default();
    assert!(m.contains("leaf1"), "{v}\n{said}");
    assert!(m.contains("sudo: a password is required"), "{v}\n{said}");
    assert!(lab.admin_up("Ethernet0"));
    assert!(lab.timers().is_empty(), "{}", lab.sw.state());
    // sudo refused every command: none of them ran.
    let log = lab.sw.log();
    assert!(
        log.iter()
            .all(|l| l.starts_with("sudo -n ") || l == sonic::STATUS),
        "{log:#?}"
    );
    let id = lab.fault_id();
    assert_eq!(
        log[2],
        sonic::apply(&id, "Ethernet0", 61)[0],
        "the dead-man is asked for first: {log:#?}"
    );
    assert!(
        !log.contains(&"sudo -n config interface shutdown Ethernet0".to_string()),
        "the change is never sent once the timer is refused: {log:#?}"
    );
    assert_eq!(lab.verdict("after")["verdict"], "pass", "{said}");
    println!("{v}\n{:#?}", lab.sw.log());
}

/// What a refused `sudo` should come to: the fault refused with the
/// command that was refused named, and nothing left open in the journal,
/// since the apply said nothing changed (exit 98). Today the run undoes at
/// once, the undo's `sudo` is refused too, three times and once more at
/// the end, and the fault stays open, blocking the next run until someone
/// with sudo runs `recover`; the message names only the undo's refusal.
#[test]
fn sonic_a_refused_sudo_is_refused_naming_the_command_and_leaves_nothing_open() {
    needs_sshd!();
    let lab = lab(Nos::Sonic, 66, json!({"sudo": "denied"}), FLAP, SWITCH);
    let o = lab.run();
    let v = lab.verdict("flap");
    let m = v["message"].as_str().unwrap_or_default();
    assert!(
        m.contains("leaf1") && m.contains("systemd-run") && m.contains("a password is required"),
        "{v}\n{}",
        text(&o)
    );
    let j = lab.journal();
    let open: Vec<&Value> = j
        .iter()
        .filter(|e| e["event"] == "opened")
        .filter(|o| {
            !j.iter()
                .any(|e| e["event"] == "healed" && e["id"] == o["id"])
        })
        .collect();
    assert!(open.is_empty(), "left open: {open:?}");
}

// ---------------------------------------------------------------- cumulus

/// What the cumulus driver sends as the account `cumulus` (not root:
/// every root command under `sudo -n`, decided on the switch from `id -u`),
/// by step, for the fault `id` on `port`.
mod cumulus {
    pub fn prior() -> Vec<String> {
        vec![
            "id -u".into(),
            "sudo -n vtysh -c 'show bgp summary json'".into(),
            "sudo -n true".into(),
            "nv show system link flap-protection -o json".into(),
        ]
    }

    /// The time of this flap appended to the switch's flap log.
    pub fn flap_log(port: &str) -> Vec<String> {
        vec![
            "id -u".into(),
            "sudo -n mkdir -p /run/rocegate".into(),
            format!("sudo -n tee -a /run/rocegate/flaps-{port}"),
        ]
    }

    /// The timer's shell text: wait, then bring the port up.
    pub fn timer(id: &str, port: &str, seconds: u64) -> String {
        format!(": rocegate-deadman {id}; sleep {seconds}; rc=0; $S ip link set dev {port} up || rc=$?; exit $rc")
    }

    /// The privilege checked again, the dead-man armed (detached), then
    /// the change.
    pub fn apply(id: &str, port: &str, seconds: u64) -> Vec<String> {
        vec![
            "id -u".into(),
            "sudo -n true".into(),
            format!("sudo -n setsid sh -c '{}'", timer(id, port, seconds)),
            format!("sudo -n ip link set dev {port} down"),
        ]
    }

    /// The timer killed, then the port brought up.
    pub fn undo(id: &str, port: &str) -> Vec<String> {
        vec![
            "id -u".into(),
            format!("sudo -n pkill -f '^sh -c : rocegate-deadma[n] {id};'"),
            format!("sudo -n ip link set dev {port} up"),
        ]
    }
}

#[test]
fn cumulus_link_flap_as_a_sudo_account_arms_the_setsid_timer_first_then_kills_it() {
    needs_sshd!();
    let lab = lab(
        Nos::Cumulus,
        71,
        json!({"account": "cumulus"}),
        FLAP,
        SWITCH,
    );
    let o = lab.run();
    let v = lab.verdict("flap");
    assert_eq!(v["verdict"], "pass", "{v}\n{}", text(&o));
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert_eq!(lab.verdict("after")["verdict"], "pass");
    let id = lab.fault_id();
    let port = lab.ports[0].clone();
    let mut want = cumulus::prior();
    want.extend(cumulus::flap_log(&port));
    want.extend(cumulus::apply(&id, &port, 61));
    want.extend(cumulus::undo(&id, &port));
    want.extend(cumulus::prior());
    assert_eq!(lab.sw.sent(), want, "raw log: {:#?}", lab.sw.log());
    // The change waited until the timer was seen running.
    let log = lab.sw.log();
    let seen = format!("pgrep -f '^sh -c : rocegate-deadma[n] {id};'");
    let at = |l: &str| log.iter().position(|x| x == l);
    let (armed, polled, changed) = (
        at(&format!(
            "sudo -n setsid sh -c '{}'",
            cumulus::timer(&id, &port, 61)
        )),
        log.iter().rposition(|x| *x == seen),
        at(&format!("ip link set dev {port} down")),
    );
    assert!(
        armed < polled && polled < changed && armed.is_some(),
        "{log:#?}"
    );
    assert!(lab.admin_up(&port));
    assert!(lab.timers().is_empty(), "timer left running");
    assert!(lab.sw.fired().is_empty(), "{}", lab.sw.state());
    lab.assert_journal_healed();
    println!("{log:#?}");
}

#[test]
fn cumulus_a_killed_run_is_healed_by_recover_which_kills_the_timer_and_brings_the_port_up() {
    needs_sshd!();
    let lab = lab(
        Nos::Cumulus,
        72,
        json!({"account": "cumulus"}),
        LONG,
        SWITCH,
    );
    lab.run_killed_after_the_change();
    let id = lab.fault_id();
    let port = lab.ports[0].clone();
    let before = lab.sw.log().len();
    lab.recover_heals();
    assert_eq!(
        sent(&lab.sw.log()[before..]),
        cumulus::undo(&id, &port),
        "raw log: {:#?}\nSESSIONS {}\nSSHD {}",
        lab.sw.log(),
        std::fs::read_to_string(lab.sw.dir.join("sessions")).unwrap_or_default(),
        lab._sshd.log()
    );
    assert!(lab.admin_up(&port), "recover restored the port");
    assert!(lab.timers().is_empty(), "and killed the timer");
    assert!(lab.sw.fired().is_empty(), "healed before the timer fired");
    println!("{:#?}", lab.sw.log());
}

#[test]
fn cumulus_the_setsid_timer_restores_the_port_of_a_killed_run_and_recover_only_heals_the_journal() {
    needs_sshd!();
    // The run's 64 s dead-man fires after 3.2 s.
    let lab = lab(
        Nos::Cumulus,
        73,
        json!({"account": "cumulus", "scale": 0.05}),
        LONG,
        SWITCH,
    );
    lab.run_killed_after_the_change();
    let id = lab.fault_id();
    let port = lab.ports[0].clone();
    assert!(
        eventually(Duration::from_secs(15), || lab.admin_up(&port)),
        "the timer never brought {port} back: {:#?}",
        lab.sw.log()
    );
    assert_eq!(
        lab.sw.fired(),
        [json!({"timer": id})],
        "{:#?}\nSESSIONS {}",
        lab.sw.log(),
        std::fs::read_to_string(lab.sw.dir.join("sessions")).unwrap_or_default()
    );
    assert!(eventually(Duration::from_secs(5), || lab
        .timers()
        .is_empty()));
    assert!(
        lab.sw
            .log()
            .contains(&format!("timer: ip link set dev {port} up")),
        "{:#?}",
        lab.sw.log()
    );
    let before = lab.sw.log().len();
    lab.recover_heals();
    // The undo is idempotent: pkill finds no timer (exit 1, taken as
    // none left), `ip link set up` on an up port.
    assert_eq!(
        sent(&lab.sw.log()[before..]),
        cumulus::undo(&id, &port),
        "raw log: {:#?}",
        lab.sw.log()
    );
    assert!(lab.admin_up(&port));
    println!("{:#?}", lab.sw.log());
}

#[test]
fn cumulus_an_unreachable_switch_is_named_and_nothing_is_sent() {
    needs_sshd!();
    let lab = lab(
        Nos::Cumulus,
        74,
        json!({"account": "cumulus"}),
        FLAP,
        NOWHERE,
    );
    let o = lab.run();
    let said = text(&o);
    let v = lab.verdict("flap");
    assert_eq!(v["verdict"], "error", "{v}\n{said}");
    let m = v["message"].as_str().unwrap_or_default();
    assert!(
        m.contains("refused before anything was touched")
            && m.contains("leaf1")
            && m.contains("unreachable")
            && m.contains("Connection refused"),
        "{v}\n{said}"
    );
    assert!(lab.sw.log().is_empty(), "{:?}", lab.sw.log());
    assert!(lab.admin_up(&lab.ports[0]));
    assert!(lab.fault_ids().is_empty(), "{:?}", lab.journal());
    assert_eq!(lab.verdict("after")["verdict"], "pass", "{said}");
    println!("{v}");
}

/// `sudo -n` asks for a password: the prior read finds it out and the
/// fault is refused there, naming the account, before anything changes.
#[test]
fn cumulus_a_refused_sudo_is_refused_at_the_prior_read_and_nothing_changes() {
    needs_sshd!();
    let lab = lab(
        Nos::Cumulus,
        75,
        json!({"account": "cumulus", "sudo": "denied"}),
        FLAP,
        SWITCH,
    );
    let o = lab.run();
    let said = text(&o);
    let v = lab.verdict("flap");
    assert_eq!(v["verdict"], "error", "{v}\n{said}");
    let m = v["message"].as_str().unwrap_or_default();
    assert!(
        m.contains("refused before anything was touched")
            && m.contains("leaf1")
            && m.contains("the account cumulus is not root and may not run `sudo -n`"),
        "{v}\n{said}"
    );
    // The read asks who the account is, to name it.
    assert_eq!(
        lab.sw.sent(),
        [
            "id -u",
            "sudo -n vtysh -c 'show bgp summary json'",
            "sudo -n true",
            "id -un",
            "nv show system link flap-protection -o json",
        ],
        "raw log: {:#?}",
        lab.sw.log()
    );
    assert!(lab.admin_up(&lab.ports[0]));
    assert!(lab.fault_ids().is_empty(), "{:?}", lab.journal());
    assert_eq!(lab.verdict("after")["verdict"], "pass", "{said}");
    println!("{v}");
}

// ------------------------------------------- an apply still in flight

/// The controller dies while the change is still being made (a shutdown
/// that takes 3 s); `recover` must wait for that apply to end before it
/// undoes, or the change lands after the undo and the port stays down
/// with the journal saying healed.
fn recover_waits_for_an_apply_still_running(nos: Nos, net: u8, account: &str) {
    let lab = lab(
        nos,
        net,
        json!({"account": account, "change_delay": 3}),
        LONG,
        SWITCH,
    );
    lab.run_killed_during_the_change();
    let id = lab.fault_id();
    assert!(lab.applying(&id), "the apply is still running");
    let o = lab.recover();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(
        eventually(Duration::from_secs(10), || !lab.applying(&id)),
        "the apply never ended"
    );
    let port = lab.ports[0].clone();
    assert!(
        lab.admin_up(&port),
        "{port} left down after recover said healed: {}\n{:#?}",
        text(&o),
        lab.sw.log()
    );
    lab.assert_journal_healed();
    println!("{:#?}", lab.sw.log());
}

#[test]
fn sonic_recover_waits_for_an_apply_still_running_before_it_undoes() {
    needs_sshd!();
    recover_waits_for_an_apply_still_running(Nos::Sonic, 67, "admin");
}

/// The linux driver's undo waits while `pgrep -f '^sh -c : rocegate-appl[y]
/// ID;'` finds the apply; since the cumulus scripts start with the `$S`
/// line (`if [ "$(id -u)" -eq 0 ]; then S=; ...`), the apply's command
/// line no longer starts with `: rocegate-apply`, the anchored pattern
/// never matches, and the undo runs at once.
#[test]
fn cumulus_recover_waits_for_an_apply_still_running_before_it_undoes() {
    needs_sshd!();
    recover_waits_for_an_apply_still_running(Nos::Cumulus, 76, "cumulus");
}
