//! `rocegate run` on the emulated pod with Arista EOS leaves
//! (inventory/emulated-eos.yaml): the leaves are read and changed through
//! their eAPI, answered by the emulated fabric from the same model as the
//! `linux` switches.

mod common;
use common::emulated::ledger_value;
use std::path::Path;

fn run(dir: &Path, extra: &[&str]) -> Vec<serde_json::Value> {
    common::emulated::run("inventory/emulated-eos.yaml", dir, extra)
}

/// The acceptance suite passes; every leaf's counters come from its eAPI
/// (`show interfaces`, the ECN queue counters), and the suite's faults are
/// sent, the leaf reset as an eAPI call to the rail-0 leaf.
#[test]
fn acceptance_on_eos_leaves_reads_their_counters_and_sends_the_faults() {
    let tmp = tempfile::tempdir().unwrap();
    let records = run(tmp.path(), &[]);
    let ledger = |source: &str| -> Vec<&serde_json::Value> {
        records
            .iter()
            .filter(|r| {
                r["event"] == "ledger"
                    && r["source"] == source
                    && r["host"].as_str().unwrap().contains("-leaf")
            })
            .collect()
    };
    let ports = ledger("show interfaces");
    assert!(!ports.is_empty());
    let leaves: std::collections::BTreeSet<&str> =
        ports.iter().map(|r| r["host"].as_str().unwrap()).collect();
    assert_eq!(leaves.len(), 16, "{leaves:?}");
    assert!(ports
        .iter()
        .any(|r| r["test"] == "rail-bw" && ledger_value(r, "tx_bytes") > 100_000_000_000));
    assert!(ledger("show qos interfaces ecn counters queue")
        .iter()
        .any(|r| ledger_value(r, "ecn_marked") > 0));
    let fault = |test: &str| {
        records
            .iter()
            .find(|r| {
                r["event"] == "sample" && r["test"] == test && r["details"]["what"].is_string()
            })
            .unwrap_or_else(|| panic!("no fault sample for {test}"))
            .clone()
    };
    let flap = fault("link-flap");
    assert!(
        flap["commands"][0]
            .as_str()
            .unwrap()
            .contains("ip link set"),
        "{flap}"
    );
    let reset = fault("leaf-reset");
    let cmds: Vec<&str> = reset["commands"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap())
        .collect();
    assert_eq!(cmds.len(), 2, "{cmds:?}");
    assert!(
        cmds[0].starts_with("r0-leaf")
            && cmds[0].contains("rocegate-api")
            && cmds[0].contains("router bgp"),
        "{cmds:?}"
    );
    // The AS is the one the switch's prior read gave, not a placeholder
    // the switch would refuse.
    assert!(!cmds[0].contains("router bgp 0"), "{cmds:?}");
    assert!(cmds[0].contains("router bgp 65"), "{cmds:?}");
    for test in ["link-flap", "leaf-reset"] {
        assert!(
            records
                .iter()
                .any(|r| r["event"] == "verdict" && r["test"] == test && r["verdict"] == "pass"),
            "{test}"
        );
    }
}

const FAULTS: &str = "suite:
  name: eos-faults
gate:
  fail_on: [fail, error]
tests:
  - name: cross-leaf-bw
    perftest: {tool: ib_write_bw, size: 1M, duration: 20s, qps: 8}
    pattern: cross-leaf
    rails: [0]
    expect: {min_pct_of_line_rate: 50}
  - name: uplink-flap
    fault:
      link_flap:
        target: {select: uplink, rail: 0, pick: first}
      during: cross-leaf-bw
      at: 5s
      for: 10s
    expect: {workload: completes}
  - name: leaf-ports-down
    fault:
      leaf_reset:
        switch: {select: leaf, rail: 0, position: 1}
        mode: ports_down
      during: cross-leaf-bw
      at: 5s
      for: 10s
    expect: {workload: may_fail}
  - name: uplink-withdrawn
    fault:
      route_change: {link: r0-leaf1:Ethernet10}
      during: cross-leaf-bw
      at: 5s
      for: 5s
    expect: {workload: completes}
";

/// Faults on an EOS leaf take its ports down in the model as on linux: an
/// uplink flap (`interface Ethernet9`, `shutdown`) is ridden out by ECMP, a
/// leaf's ports down for 10 s outlast every pair's retry budget, and the
/// leaf's own counters count the loss of link.
#[test]
fn eos_leaf_faults_take_ports_down_in_the_model() {
    let tmp = tempfile::tempdir().unwrap();
    let suite = tmp.path().join("eos-faults.yaml");
    std::fs::write(&suite, FAULTS).unwrap();
    let records = run(
        &tmp.path().join("run"),
        &["--suite", suite.to_str().unwrap()],
    );
    let verdict = |test: &str| {
        records
            .iter()
            .find(|r| r["event"] == "verdict" && r["test"] == test && r["kind"] == "fault")
            .unwrap_or_else(|| panic!("no verdict for {test}"))
            .clone()
    };
    let flap = verdict("uplink-flap");
    assert_eq!(flap["value"], 0.0, "{flap}");
    assert!(flap["component"]
        .as_str()
        .unwrap()
        .contains("r0-leaf1:Ethernet9"));
    // A withdrawn route: the session found on the port's /31 and shut in
    // the session EOS rolls back, the link left up, the traffic ridden out.
    let withdrawn = verdict("uplink-withdrawn");
    assert_eq!(withdrawn["verdict"], "pass", "{withdrawn}");
    let sent = records
        .iter()
        .find(|r| {
            r["event"] == "sample"
                && r["test"] == "uplink-withdrawn"
                && r["details"]["what"].is_string()
        })
        .map(|r| r.to_string())
        .unwrap_or_default();
    assert!(
        sent.contains("neighbor 10.254.") && sent.contains("shutdown"),
        "{sent}"
    );
    let down = verdict("leaf-ports-down");
    assert_eq!(down["value"], 8.0, "{down}");
    assert!(records.iter().any(|r| r["event"] == "ledger"
        && r["test"] == "leaf-ports-down"
        && r["host"] == "r0-leaf2"
        && r["source"] == "show interfaces"
        && ledger_value(r, "link_down") == 1));
}
