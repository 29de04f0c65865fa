//! Hostile and unlucky conditions through the built binary: tool output
//! that tries to break the JUnit, a hand-edited results.jsonl that points
//! outside its run, a run killed midway, two runs into one `--out`.
//!
//! The JUnit is read back with Python's expat parser (a strict, real XML
//! parser); without python3 those checks say so and skip.

use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command as StdCommand, Stdio};
use std::time::{Duration, Instant};

use assert_cmd::Command;
use serde_json::Value;

fn rocegate_in(dir: &Path) -> Command {
    let mut c = Command::cargo_bin("rocegate").expect("binary is built");
    c.current_dir(dir);
    c
}

fn read(p: PathBuf) -> String {
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn records(dir: &Path) -> Vec<Value> {
    read(dir.join("results.jsonl"))
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON record"))
        .collect()
}

/// Parses `file` with expat; returns `(testcase name, error/failure
/// message, its text)` for every testcase, or why python3 cannot run.
fn parse_junit(file: &Path) -> Result<Vec<(String, String, String)>, String> {
    const SCRIPT: &str = r#"
import sys, json, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
assert root.tag == "testsuites", root.tag
out = []
for ts in root:
    assert ts.tag == "testsuite", ts.tag
    for i, tc in enumerate(ts):
        if tc.tag == "properties":
            assert i == 0, "properties come first"
            assert all(p.tag == "property" and p.get("name") for p in tc), "property"
            continue
        if tc.tag in ("system-out", "system-err"):
            continue
        assert tc.tag == "testcase", tc.tag
        kids = [k.tag for k in tc]
        for k in kids:
            assert k in ("failure", "error", "skipped"), k
        bad = tc.find("error") if tc.find("error") is not None else tc.find("failure")
        out.append([tc.get("name"), bad.get("message") if bad is not None else "",
                    (bad.text or "") if bad is not None else ""])
print(json.dumps(out))
"#;
    let out = match StdCommand::new("python3")
        .args(["-c", SCRIPT])
        .arg(file)
        .output()
    {
        Ok(o) => o,
        Err(e) => {
            return Err(format!(
                "python3 is not installed ({e}): apt-get install python3"
            ))
        }
    };
    assert!(
        out.status.success(),
        "{} is not well-formed JUnit: {}",
        file.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let rows: Vec<(String, String, String)> =
        serde_json::from_slice(&out.stdout).expect("the script prints JSON");
    Ok(rows)
}

const LOCAL_INVENTORY: &str = "\
fabric:
  name: hostile
  environment: lab
  rails: 1
  roce: {pfc_priority: 3, dscp_roce: 26, dscp_cnp: 48, dcqcn: false, mtu: 4096}
transport: local
nodes:
  - hosts: lo[1-2]
    nics:
      - device: mlx5_0
        netdev: lo
        gid_index: 3
        rail: 0
        speed_gbps: 400
";

const LOCAL_SUITE: &str = "\
suite: {name: hostile}
tests:
  - name: bw
    perftest: {tool: ib_write_bw, size: 65536, duration: 2s}
    pattern: rail-pairs
    expect: {min: 300}
";

/// A fake `ib_write_bw`: the server prints a banner; the client prints a
/// table whose lines carry CDATA terminators, markup, NUL and bytes that
/// are not UTF-8.
const FAKE_TOOL: &[u8] = b"#!/bin/sh
for a in \"$@\"; do last=$a; done
case \"$last\" in
  lo*|127.*) ;;
  *) echo ' waiting for client'; exit 0 ;;
esac
printf ' #bytes #iterations BW peak[Gb/sec] BW average[Gb/sec]\\n'
printf ' 65536 1000 0.00 ]]><injected attr=\"x\"/><![CDATA[ & <b>bold</b>\\n'
printf 'nul:\\000: bad utf-8: \\377\\376 end ]]> again ]]]]>\\n'
printf '\\033[31mred\\033[0m </system-out></testcase></testsuite>\\n'
exit 0
";

#[test]
fn hostile_tool_output_keeps_junit_well_formed() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let bin = d.join("bin");
    std::fs::create_dir(&bin).unwrap();
    let tool = bin.join("ib_write_bw");
    std::fs::File::create(&tool)
        .and_then(|mut f| f.write_all(FAKE_TOOL))
        .unwrap();
    std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::write(d.join("inv.yaml"), LOCAL_INVENTORY).unwrap();
    std::fs::write(d.join("suite.yaml"), LOCAL_SUITE).unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = rocegate_in(d)
        .env("PATH", path)
        // Its own fault journal and run lock, not the user's.
        .env("XDG_STATE_HOME", d.join("state"))
        .args(["run", "-i", "inv.yaml", "-s", "suite.yaml"])
        .args(["--progress", "none", "--out", "run"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    // The output is not a perftest result: never a pass.
    assert_ne!(out.status.code(), Some(0), "{stderr}");
    let run = d.join("run");
    let raw = std::fs::read(run.join("raw/bw/r0000-x00-s00000.txt")).unwrap();
    assert!(
        raw.windows(3).any(|w| w == b"]]>"),
        "the raw file keeps the output verbatim"
    );
    let rows = match parse_junit(&run.join("junit.xml")) {
        Ok(rows) => rows,
        Err(why) => {
            eprintln!("skipped: {why}");
            return;
        }
    };
    // The step's testcase and the counter ledger's (these fake hosts have
    // no counters to read: `not available`); nothing injected.
    assert_eq!(rows.len(), 2, "two testcases, nothing injected: {rows:?}");
    assert_eq!(rows[1].0, "counter ledger", "{rows:?}");
    let (name, message, text) = &rows[0];
    assert_eq!(name, "lo1:mlx5_0<->lo2:mlx5_0");
    assert!(!message.is_empty(), "a failure or error with its message");
    // What the tool printed reaches CI as text, character for character.
    assert!(
        text.contains("]]><injected attr=\"x\"/><![CDATA[ & <b>bold</b>"),
        "{text}"
    );
    assert!(text.contains("end ]]> again ]]]]>"), "{text}");
    assert!(text.contains("</system-out></testcase></testsuite>"));
    assert!(!text.contains('\0') && !text.contains('\u{1b}'));
    assert!(text.contains("nul::"), "NUL removed: {text}");

    // The HTML carries the same text escaped, and no raw control bytes.
    let html = read(run.join("report.html"));
    assert!(
        !html.contains("<injected"),
        "markup from the tool is escaped"
    );
    assert!(!html.contains('\0'));
}

#[test]
fn report_reads_nothing_outside_its_run_directory() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let run = d.join("run");
    let out = rocegate_in(env!("CARGO_MANIFEST_DIR").as_ref())
        .args(["run", "--progress", "none", "--only", "rail-lat", "--out"])
        .arg(&run)
        .args(["-i", "inventory/emulated-defects.yaml"])
        .output()
        .unwrap();
    assert!(
        out.status.code() == Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::write(d.join("secret.txt"), "TOP-SECRET-CONTENT\n").unwrap();
    // Point every piece of evidence outside the run, as a hand-edited
    // or planted results.jsonl would.
    let text = read(run.join("results.jsonl"));
    let mut edited = String::new();
    for line in text.lines() {
        let mut v: Value = serde_json::from_str(line).unwrap();
        if v["event"] == "verdict" {
            v["evidence"] = serde_json::json!(["../secret.txt", "/etc/hostname"]);
        }
        edited += &serde_json::to_string(&v).unwrap();
        edited.push('\n');
    }
    std::fs::write(run.join("results.jsonl"), edited).unwrap();
    let out = rocegate_in(d).arg("report").arg(&run).output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "report exits with the run's code: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    for f in ["junit.xml", "report.html"] {
        assert!(
            !read(run.join(f)).contains("TOP-SECRET-CONTENT"),
            "{f} read a file outside the run"
        );
    }
}

/// Starts a paced emulated run into `dir` in the background.
fn paced_run(dir: &Path) -> std::process::Child {
    StdCommand::new(assert_cmd::cargo::cargo_bin("rocegate"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["run", "--progress", "none", "--pace", "2", "--out"])
        .arg(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Waits until results.jsonl holds a sample.
fn wait_for_a_sample(dir: &Path, child: &mut std::process::Child) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let text = std::fs::read_to_string(dir.join("results.jsonl")).unwrap_or_default();
        if text.contains("\"event\":\"sample\"") {
            return;
        }
        assert!(Instant::now() < deadline, "no finished step within 60 s");
        assert!(child.try_wait().unwrap().is_none(), "the run ended early");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_killed_run_is_incomplete_everywhere_and_its_out_stays_claimed() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("run");
    let mut child = paced_run(&dir);
    wait_for_a_sample(&dir, &mut child);

    // A second run into the same --out while the first holds it.
    let second = rocegate_in(env!("CARGO_MANIFEST_DIR").as_ref())
        .args(["run", "--progress", "none", "--out"])
        .arg(&dir)
        .output()
        .unwrap();
    let msg = String::from_utf8_lossy(&second.stderr);
    assert_eq!(second.status.code(), Some(2), "{msg}");
    assert!(
        msg.contains("already used by run") && msg.contains(&format!("pid {}", child.id())),
        "names the holder: {msg}"
    );

    child.kill().unwrap();
    child.wait().unwrap();
    let before = records(&dir);
    assert!(before.iter().all(|r| r["event"] != "run_finished"));
    // Before anyone runs `report`, the JUnit the killed run left says so.
    let left = read(dir.join("junit.xml"));
    assert!(left.contains("name=\"run incomplete\""), "{left:.400}");

    let out = rocegate_in(tmp.path())
        .arg("report")
        .arg(&dir)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("run incomplete"), "{stderr}");
    let summary: Value = serde_json::from_str(&read(dir.join("summary.json"))).unwrap();
    assert_eq!(summary["complete"], false);
    assert_eq!(summary["exit_code"], 3);
    let not_run: Vec<&str> = summary["not_run"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert!(not_run.contains(&"allreduce"), "{not_run:?}");
    assert!(read(dir.join("report.html")).contains("RUN INCOMPLETE"));
    let junit = read(dir.join("junit.xml"));
    assert!(junit.contains("name=\"run incomplete\""), "{junit:.400}");
    assert!(junit.contains("allreduce"));
    if let Ok(rows) = parse_junit(&dir.join("junit.xml")) {
        assert_eq!(rows[0].0, "run incomplete");
        assert!(
            rows[0].1.contains("no run_finished record"),
            "{:?}",
            rows[0]
        );
    }
}

#[test]
fn two_runs_started_together_into_one_out_never_share_it() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("run");
    let mut a = paced_run(&dir);
    let mut b = paced_run(&dir);
    // One of them refuses at once; the other keeps running.
    let deadline = Instant::now() + Duration::from_secs(60);
    let (loser, mut winner) = loop {
        if let Some(st) = a.try_wait().unwrap() {
            break ((a, st), b);
        }
        if let Some(st) = b.try_wait().unwrap() {
            break ((b, st), a);
        }
        assert!(Instant::now() < deadline, "neither run refused");
        std::thread::sleep(Duration::from_millis(20));
    };
    let (child, status) = loser;
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("already used by run"), "{said}");
    wait_for_a_sample(&dir, &mut winner);
    winner.kill().unwrap();
    winner.wait().unwrap();
    let started = records(&dir)
        .iter()
        .filter(|r| r["event"] == "run_started")
        .count();
    assert_eq!(started, 1, "one run wrote results.jsonl");
}

/// Unmounts on drop, so a failed assertion leaves no mount behind.
struct Mounted(PathBuf);

impl Drop for Mounted {
    fn drop(&mut self) {
        let _ = StdCommand::new("umount").arg(&self.0).status();
    }
}

#[test]
fn a_full_disk_stops_the_run_and_keeps_what_was_written() {
    let tmp = tempfile::tempdir().unwrap();
    let fs = tmp.path().join("small");
    std::fs::create_dir(&fs).unwrap();
    let mounted = StdCommand::new("mount")
        .args(["-t", "tmpfs", "-o", "size=256k", "tmpfs"])
        .arg(&fs)
        .stderr(Stdio::piped())
        .output();
    match mounted {
        Ok(o) if o.status.success() => {}
        Ok(o) => {
            eprintln!(
                "skipped: cannot mount a small tmpfs (needs root): {}",
                String::from_utf8_lossy(&o.stderr).trim()
            );
            return;
        }
        Err(e) => {
            eprintln!("skipped: mount is not available: {e}");
            return;
        }
    }
    let _guard = Mounted(fs.clone());
    let dir = fs.join("run");
    let started = Instant::now();
    let out = rocegate_in(env!("CARGO_MANIFEST_DIR").as_ref())
        .args(["run", "--progress", "none", "--out"])
        .arg(&dir)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(3), "{stdout}\n{stderr}");
    assert!(
        stderr.contains("cannot write: No space left on device")
            && stderr.contains(&dir.display().to_string()),
        "names the file and the OS error: {stderr}"
    );
    assert!(stderr.contains("stopping the run"), "{stderr}");
    assert!(!stdout.contains("GATE PASSED"), "{stdout}");
    // Every line that is there is a whole record: nothing torn.
    let text = read(dir.join("results.jsonl"));
    assert!(text.is_empty() || text.ends_with('\n'));
    let recs: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("a whole record"))
        .collect();
    assert!(!recs.is_empty(), "what fitted was kept");
    if let Some(last) = recs.iter().find(|r| r["event"] == "run_finished") {
        assert_eq!(last["exit_code"], 3);
        assert!(last["reason"].as_str().unwrap().contains("No space left"));
    }
    eprintln!(
        "full disk: stopped after {:.1} s with {} records kept",
        started.elapsed().as_secs_f64(),
        recs.len()
    );
}

#[test]
fn parse_refuses_fifos_devices_and_oversized_logs_at_once() {
    let tmp = tempfile::tempdir().unwrap();
    let fifo = tmp.path().join("fifo");
    assert!(StdCommand::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let big = tmp.path().join("big.log");
    std::fs::write(&big, vec![b'a'; 2 << 20]).unwrap();
    for (path, extra, words) in [
        (fifo.as_path(), None, "FIFO"),
        (Path::new("/dev/zero"), None, "character device"),
        (big.as_path(), Some("1MiB"), "over the input limit of 1 MiB"),
    ] {
        let mut cmd = rocegate_in(tmp.path());
        cmd.args(["parse", "perftest"]).arg(path);
        if let Some(limit) = extra {
            cmd.args(["--max-input-size", limit]);
        }
        // A hang would be the bug: the test fails at the timeout instead.
        let out = cmd.timeout(Duration::from_secs(30)).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{}: {stderr}", path.display());
        assert!(stderr.contains(words), "{stderr}");
        assert!(stderr.contains(&path.display().to_string()), "{stderr}");
    }
}

#[test]
fn kills_at_seeded_moments_always_leave_a_run_that_report_calls_incomplete() {
    let tmp = tempfile::tempdir().unwrap();
    // Moments (ms after start) from a fixed seed: from before run_started
    // is written to the middle of a round.
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    for k in 0..5 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let at = Duration::from_millis(x % 1500);
        let dir = tmp.path().join(format!("run{k}"));
        let mut child = paced_run(&dir);
        std::thread::sleep(at);
        child.kill().unwrap();
        child.wait().unwrap();
        if !dir.join("results.jsonl").exists() {
            // Killed before the run directory held anything to report.
            continue;
        }
        let out = rocegate_in(tmp.path())
            .arg("report")
            .arg(&dir)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stderr.contains("panicked"), "{stderr}");
        // Even an empty results.jsonl (killed before run_started) is a
        // run that did not finish.
        assert_eq!(out.status.code(), Some(3), "killed at {at:?}: {stderr}");
        assert!(stderr.contains("run incomplete"), "{stderr}");
        if let Ok(rows) = parse_junit(&dir.join("junit.xml")) {
            assert_eq!(rows[0].0, "run incomplete", "killed at {at:?}");
        }
    }
}
