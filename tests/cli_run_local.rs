//! `rocegate run` with the `local` transport: real iperf3 over loopback.
//!
//! Three "nodes" (lo1, lo2, lo3) are all this machine; their NICs' data
//! addresses are 127.0.0.1, 127.0.0.2 and 127.0.0.3 (Linux routes all of
//! 127.0.0.0/8 to `lo`), so every server binds its own address and two
//! servers of one round can share a port on different "nodes". Needs iperf3
//! (`.ci/run` installs it); without it the tests say so and skip.

use std::path::Path;
use std::process::Command as StdCommand;

use assert_cmd::Command;
use serde_json::Value;

const INVENTORY: &str = "\
fabric:
  name: loopback
  environment: lab
  rails: 1
  roce: {pfc_priority: 3, dscp_roce: 26, dscp_cnp: 48, dcqcn: false, mtu: 4096}
transport: local
nodes:
  - hosts: lo[1-3]
    nics:
      - device: lo
        netdev: lo
        gid_index: 0
        rail: 0
        speed_gbps: 100
        address: '127.0.0.{index}'
";

const SUITE: &str = "\
suite: {name: iperf-loopback}
tests:
  - name: tcp
    iperf: {duration: 2s, interval: 500ms}
    pattern: rail-pairs
    nodes: lo[1-2]
    expect: {min: 0.01}
  - name: impossible
    iperf: {duration: 1s, streams: 2}
    pattern: rail-pairs
    nodes: lo[1-2]
    expect: {min: 10000}
  - name: incast
    iperf: {duration: 1s}
    pattern: {incast: {senders: 2, samples: 1}}
    expect: {min: 0.01}
";

/// Why iperf3 cannot run here, if it cannot.
fn no_iperf3() -> Option<String> {
    match StdCommand::new("iperf3").arg("--version").output() {
        Ok(o) if o.status.success() => None,
        Ok(o) => Some(format!("iperf3 --version exited with {}", o.status)),
        Err(e) => Some(format!(
            "iperf3 is not installed ({e}); apt-get install iperf3"
        )),
    }
}

macro_rules! need_iperf3 {
    () => {
        if let Some(why) = no_iperf3() {
            eprintln!("skipped: {why}");
            return;
        }
    };
}

/// Runs rocegate on `inventory` and `suite` written to a temp dir; returns
/// the exit code, stdout and the records of results.jsonl.
fn run(inventory: &str, suite: &str) -> (Option<i32>, String, Vec<Value>) {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    std::fs::write(d.join("inv.yaml"), inventory).unwrap();
    std::fs::write(d.join("suite.yaml"), suite).unwrap();
    let out = Command::cargo_bin("rocegate")
        .expect("binary is built")
        .current_dir(d)
        // Its own fault journal and run lock: the tests here run side by
        // side on one fabric name, and must not touch the user's state.
        .env("XDG_STATE_HOME", d.join("state"))
        .args([
            "run",
            "--inventory",
            "inv.yaml",
            "--suite",
            "suite.yaml",
            "--progress",
            "none",
            "--out",
            "run",
        ])
        .output()
        .expect("rocegate runs");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    let jsonl = Path::new(d).join("run/results.jsonl");
    let records = std::fs::read_to_string(&jsonl)
        .unwrap_or_else(|e| panic!("{}: {e}\n{stdout}\n{stderr}", jsonl.display()))
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON record"))
        .collect();
    (out.status.code(), stdout, records)
}

fn verdict<'a>(records: &'a [Value], test: &str) -> &'a Value {
    let found: Vec<&Value> = records
        .iter()
        // The test's own verdict; its counter ledger has kind `counters`.
        .filter(|r| r["event"] == "verdict" && r["test"] == test && r["kind"] != "counters")
        .collect();
    assert_eq!(found.len(), 1, "one verdict for {test}: {found:#?}");
    found[0]
}

fn sample<'a>(records: &'a [Value], test: &str) -> &'a Value {
    records
        .iter()
        .find(|r| r["event"] == "sample" && r["test"] == test)
        .unwrap_or_else(|| panic!("no sample for {test}"))
}

/// A throughput loopback can plausibly carry: more than nothing, less than a
/// memory bus.
fn plausible(v: &Value) -> f64 {
    let g = v.as_f64().unwrap_or_else(|| panic!("no value: {v}"));
    assert!(g > 0.01 && g < 2000.0, "{g} Gb/s");
    g
}

#[test]
fn iperf3_pairs_and_an_incast_run_for_real_on_loopback() {
    need_iperf3!();
    let (code, stdout, records) = run(INVENTORY, SUITE);
    assert_eq!(code, Some(1), "one test fails on purpose\n{stdout}");

    let tcp = verdict(&records, "tcp");
    assert_eq!(tcp["verdict"], "pass", "{tcp:#}");
    assert_eq!(tcp["component"], "lo1:lo<->lo2:lo");
    assert_eq!(tcp["metric"], "throughput_gbps");
    assert_eq!(tcp["unit"], "Gb/s");
    plausible(&tcp["value"]);
    let s = sample(&records, "tcp");
    assert_eq!(
        s["commands"],
        serde_json::json!([
            "lo2: iperf3 -s -1 -p 5201 -B 127.0.0.2",
            "lo1: iperf3 -c 127.0.0.2 -B 127.0.0.1 -p 5201 -t 2 -P 1 -i 0.5 -J --connect-timeout 5000"
        ])
    );
    // The half-second series is in the sample for a recovery analysis.
    let intervals = s["details"]["clients"][0]["intervals"]
        .as_array()
        .expect("an interval series");
    assert!(intervals.len() >= 3, "{intervals:#?}");
    assert_eq!(intervals[0]["start_s"], 0.0);
    assert_eq!(s["details"]["clients"][0]["value_source"], "sum_received");

    let bad = verdict(&records, "impossible");
    assert_eq!(bad["verdict"], "fail", "{bad:#}");
    let g = plausible(&bad["value"]);
    let msg = bad["message"].as_str().unwrap();
    assert!(
        msg.contains(&format!("{g:.2} Gb/s")) && msg.contains("min 10000"),
        "the measured value and the threshold are in the message: {msg}"
    );

    // Two servers on lo1 on distinct ports, one client each; the value is
    // what the receiver took in from both.
    let incast = verdict(&records, "incast");
    assert_eq!(incast["verdict"], "pass", "{incast:#}");
    assert_eq!(incast["component"], "lo1:lo<-lo[2-3]");
    let total = plausible(&incast["value"]);
    let s = sample(&records, "incast");
    let commands: Vec<&str> = s["commands"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap())
        .collect();
    assert_eq!(
        &commands[..2],
        [
            "lo1: iperf3 -s -1 -p 5201 -B 127.0.0.1",
            "lo1: iperf3 -s -1 -p 5202 -B 127.0.0.1"
        ]
    );
    let each: f64 = s["details"]["clients"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["received_gbps"].as_f64().unwrap())
        .sum();
    assert!((each - total).abs() < 1e-9, "{each} vs {total}");
}

#[test]
fn a_nic_without_an_address_is_an_error_before_anything_starts() {
    // No iperf3 runs here: the step cannot be built.
    let inventory = INVENTORY.replace("        address: '127.0.0.{index}'\n", "");
    let suite = "\
suite: {name: no-address}
tests:
  - name: tcp
    iperf: {duration: 1s}
    pattern: rail-pairs
    nodes: lo[1-2]
";
    let (code, stdout, records) = run(&inventory, suite);
    assert_eq!(code, Some(1), "an error fails the default gate\n{stdout}");
    let v = verdict(&records, "tcp");
    assert_eq!(v["verdict"], "error", "{v:#}");
    let msg = v["message"].as_str().unwrap();
    assert!(
        msg.contains("lo1:lo has no data address")
            && msg.contains("add `address:`")
            && msg.contains("(invalid_step)"),
        "{msg}"
    );
}
