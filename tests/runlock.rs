//! The per-fabric run lock, through the binary: two `rocegate run`s on one
//! fabric at once (the `local` transport: real iperf3 on loopback, as in
//! `cli_run_local.rs`), a record left by a dead run, one from another host,
//! and the emulated fabric, which takes no lock.
//!
//! Each test has its own `XDG_STATE_HOME`, so the lock is
//! `<state>/rocegate/journal/loopback.jsonl.lock`.

use std::path::{Path, PathBuf};
use std::process::{Command as StdCommand, Stdio};
use std::time::{Duration, Instant};

use assert_cmd::Command;

const INVENTORY: &str = "\
fabric:
  name: loopback
  environment: lab
  rails: 1
  roce: {pfc_priority: 3, dscp_roce: 26, dscp_cnp: 48, dcqcn: false, mtu: 4096}
transport: local
nodes:
  - hosts: lo[1-2]
    nics:
      - device: lo
        netdev: lo
        gid_index: 0
        rail: 0
        speed_gbps: 100
        address: '127.0.NET.{index}'
";

fn suite(seconds: u32) -> String {
    format!(
        "\
suite: {{name: lock}}
tests:
  - name: tcp
    iperf: {{duration: {seconds}s}}
    pattern: rail-pairs
    expect: {{min: 0.01}}
"
    )
}

struct Dir {
    tmp: tempfile::TempDir,
}

impl Dir {
    /// `net` keeps the iperf3 servers of tests running side by side on
    /// distinct loopback addresses (127.0.NET.x).
    fn new(seconds: u32, net: u8) -> Dir {
        let tmp = tempfile::tempdir().unwrap();
        let inventory = INVENTORY.replace("NET", &net.to_string());
        std::fs::write(tmp.path().join("inv.yaml"), inventory).unwrap();
        std::fs::write(tmp.path().join("suite.yaml"), suite(seconds)).unwrap();
        Dir { tmp }
    }

    fn path(&self) -> &Path {
        self.tmp.path()
    }

    fn lock(&self) -> PathBuf {
        self.path()
            .join("state/rocegate/journal/loopback.jsonl.lock")
    }

    fn args(&self, out: &str) -> Vec<String> {
        [
            "run",
            "-i",
            "inv.yaml",
            "-s",
            "suite.yaml",
            "--progress",
            "none",
            "--out",
            out,
        ]
        .map(String::from)
        .to_vec()
    }

    fn rocegate(&self) -> Command {
        let mut c = Command::cargo_bin("rocegate").expect("binary is built");
        c.current_dir(self.path())
            .env("XDG_STATE_HOME", self.path().join("state"));
        c
    }

    /// Writes a holder record as a run that ended without releasing would.
    fn plant(&self, host: &str, pid: u32) -> String {
        let record = serde_json::json!({
            "user": "alice",
            "host": host,
            "pid": pid,
            "run": "20261122T021500Z-4242",
            "started": "2026-11-22T02:15:00Z",
        })
        .to_string()
            + "\n";
        std::fs::create_dir_all(self.lock().parent().unwrap()).unwrap();
        std::fs::write(self.lock(), &record).unwrap();
        record
    }
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn has_iperf3() -> bool {
    let ok = StdCommand::new("iperf3")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        eprintln!("skipped: iperf3 is not installed (apt-get install iperf3)");
    }
    ok
}

fn dead_pid() -> u32 {
    let mut c = StdCommand::new("true").spawn().unwrap();
    let pid = c.id();
    c.wait().unwrap();
    pid
}

#[test]
fn a_second_run_on_the_same_fabric_refuses_naming_the_first() {
    if !has_iperf3() {
        return;
    }
    let d = Dir::new(4, 1);
    let mut first = StdCommand::new(assert_cmd::cargo::cargo_bin("rocegate"))
        .args(d.args("run1"))
        .current_dir(d.path())
        .env("XDG_STATE_HOME", d.path().join("state"))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = first.id();
    // Wait for the first to hold the lock: its record names its pid.
    let deadline = Instant::now() + Duration::from_secs(60);
    let mine = format!("\"pid\":{pid},");
    while !std::fs::read_to_string(d.lock()).is_ok_and(|t| t.contains(&mine)) {
        assert!(
            first.try_wait().unwrap().is_none(),
            "the first run ended before taking the lock"
        );
        assert!(Instant::now() < deadline, "no lock record after 60 s");
        std::thread::sleep(Duration::from_millis(20));
    }
    let second = d.rocegate().args(d.args("run2")).output().unwrap();
    let stderr = text(&second.stderr);
    assert_eq!(second.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("fabric loopback is in use by run ")
            && stderr.contains(&format!("-{pid} (user "))
            && stderr.contains(&format!(
                "pid {pid} on {}",
                rocegate::fault::lock::hostname()
            )),
        "{stderr}"
    );
    assert!(
        !d.path().join("run2").exists(),
        "the refused run wrote nothing"
    );

    let out = first.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    // Released: the record is gone, and the next run goes ahead.
    assert_eq!(std::fs::read_to_string(d.lock()).unwrap(), "");
}

#[test]
fn a_dead_run_on_this_host_is_taken_over_with_a_message() {
    let d = Dir::new(1, 2);
    let pid = dead_pid();
    d.plant(&rocegate::fault::lock::hostname(), pid);
    let out = d.rocegate().args(d.args("run")).output().unwrap();
    let stderr = text(&out.stderr);
    assert_ne!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "taking over the run lock of fabric loopback from run 20261122T021500Z-4242 (user alice, pid {pid} on "
        )) && stderr.contains("which is no longer running"),
        "{stderr}"
    );
    assert!(d.path().join("run/results.jsonl").exists());
    assert_eq!(std::fs::read_to_string(d.lock()).unwrap(), "");
}

#[test]
fn a_record_from_another_host_is_refused_with_how_to_clear_it() {
    let d = Dir::new(1, 3);
    let record = d.plant("ctl-b.example", 4242);
    let out = d.rocegate().args(d.args("run")).output().unwrap();
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("fabric loopback is locked by run 20261122T021500Z-4242 (user alice, pid 4242 on ctl-b.example")
            && stderr.contains("on another host")
            && stderr.contains("rocegate recover")
            && stderr.contains(&format!("then remove {}", d.lock().display())),
        "{stderr}"
    );
    assert!(!d.path().join("run").exists(), "nothing written");
    assert_eq!(std::fs::read_to_string(d.lock()).unwrap(), record);
}

#[test]
fn the_emulated_fabric_takes_no_lock() {
    let d = Dir::new(1, 4);
    let out = d
        .rocegate()
        .args([
            "run",
            "--only",
            "rail-bw",
            "--nodes",
            "gpu[001-002]",
            "--progress",
            "none",
            "--out",
            "run",
        ])
        .output()
        .unwrap();
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "{}",
        text(&out.stderr)
    );
    assert!(!d.path().join("state/rocegate").exists());
}
