//! `rocegate run` on the emulated pod with SONiC leaves
//! (inventory/emulated-sonic.yaml): the leaves are read and changed by the
//! sonic platform's command lines, answered by the emulated fabric from the
//! same model as the `linux` switches.

mod common;
use common::emulated::ledger_value;
use std::path::Path;

fn run(dir: &Path, extra: &[&str]) -> Vec<serde_json::Value> {
    common::emulated::run("inventory/emulated-sonic.yaml", dir, extra)
}

/// The acceptance suite passes; every leaf's counters come from `portstat
/// -r`, its configuration from CONFIG_DB (the audit checks every leaf
/// port), and the leaf reset is the bgp service stopped and started.
#[test]
fn acceptance_on_sonic_leaves_reads_their_counters_and_sends_the_faults() {
    let tmp = tempfile::tempdir().unwrap();
    let records = run(tmp.path(), &[]);
    let ports: Vec<&serde_json::Value> = records
        .iter()
        .filter(|r| {
            r["event"] == "ledger"
                && r["source"] == "portstat -r"
                && r["host"].as_str().unwrap().contains("-leaf")
        })
        .collect();
    let leaves: std::collections::BTreeSet<&str> =
        ports.iter().map(|r| r["host"].as_str().unwrap()).collect();
    assert_eq!(leaves.len(), 16, "{leaves:?}");
    assert!(ports
        .iter()
        .any(|r| r["test"] == "rail-bw" && ledger_value(r, "tx_packets") > 10_000_000));
    // The audit read every leaf port's link, MTU, PFC and ECN from CONFIG_DB.
    let audited = records
        .iter()
        .filter(|r| {
            r["event"] == "verdict"
                && r["test"] == "audit"
                && r["component"].as_str().unwrap().contains("-leaf")
                && r["component"].as_str().unwrap().contains(":Ethernet")
                && r["verdict"] == "pass"
                && r["message"].as_str().unwrap().contains("switch.ecn")
        })
        .count();
    assert_eq!(audited, 16 * 16);
    // The DSCP map each leaf binds in CONFIG_DB puts RoCE's DSCP in the
    // PFC priority's class.
    let dscp = records
        .iter()
        .filter(|r| {
            r["event"] == "finding"
                && r["check"] == "switch.dscp_map"
                && r["host"].as_str().unwrap().contains("-leaf")
        })
        .collect::<Vec<_>>();
    assert_eq!(dscp.len(), 16);
    assert!(
        dscp.iter().all(|r| r["outcome"] == "ok"
            && r["observed"]
                .as_str()
                .unwrap()
                .contains("26->TC3 (priority 3)")),
        "{dscp:?}"
    );
    let reset = records
        .iter()
        .find(|r| {
            r["event"] == "sample" && r["test"] == "leaf-reset" && r["details"]["what"].is_string()
        })
        .expect("a leaf-reset sample");
    let cmds = reset["commands"].to_string();
    assert!(
        cmds.contains("systemctl stop bgp") && cmds.contains("systemctl start bgp"),
        "{cmds}"
    );
    // The new reads reach the ledger: ECN marks per queue from wredstat
    // under the acceptance suite's incast, and the flapped leaf port's
    // link-down from its flap count (orchagent's oper changes halved).
    let ecn = records
        .iter()
        .filter(|r| r["event"] == "ledger" && r["source"] == "wredstat")
        .map(|r| ledger_value(r, "ecn_marked"))
        .max()
        .unwrap_or(0);
    assert!(ecn > 1000, "{ecn}");
    let flap = records
        .iter()
        .find(|r| {
            r["event"] == "ledger"
                && r["test"] == "link-flap"
                && r["source"] == "show interfaces flap"
        })
        .expect("the flapped leaf port's flap count");
    assert_eq!(ledger_value(flap, "link_down"), 1, "{flap}");
    // No storm: the watchdog's counters never make a finding.
    assert!(!records.iter().any(|r| r["check"] == "counters.pfc_storm"));
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
  name: sonic-faults
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
";

/// Faults on a SONiC leaf take its ports down in the model as on linux: an
/// uplink flap is ridden out by ECMP, a leaf's ports down (`config
/// interface shutdown`) for 10 s outlast every pair's retry budget. The
/// link-downs are counted by `show interfaces flap` (one per port and
/// fault, within the limit, so no finding).
#[test]
fn sonic_leaf_faults_take_ports_down_in_the_model() {
    let tmp = tempfile::tempdir().unwrap();
    let suite = tmp.path().join("sonic-faults.yaml");
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
    let down = verdict("leaf-ports-down");
    assert_eq!(down["value"], 8.0, "{down}");
    let sent = records
        .iter()
        .find(|r| {
            r["event"] == "sample"
                && r["test"] == "leaf-ports-down"
                && r["details"]["what"].is_string()
        })
        .map(|r| r["commands"].to_string())
        .unwrap_or_default();
    assert!(
        sent.contains("r0-leaf2") && sent.contains("config interface shutdown Ethernet1"),
        "{sent}"
    );
    // The leaf's own counters saw the ports go quiet, read by portstat.
    assert!(records.iter().any(|r| r["event"] == "ledger"
        && r["test"] == "leaf-ports-down"
        && r["host"] == "r0-leaf2"
        && r["source"] == "portstat -r"));
    let downs: Vec<&serde_json::Value> = records
        .iter()
        .filter(|r| {
            r["event"] == "ledger"
                && r["test"] == "leaf-ports-down"
                && r["host"] == "r0-leaf2"
                && r["source"] == "show interfaces flap"
        })
        .collect();
    assert!(!downs.is_empty());
    assert!(
        downs.iter().all(|r| ledger_value(r, "link_down") == 1),
        "{downs:?}"
    );
    // Counted, so never "no link-down counter".
    assert!(!records.iter().any(|r| r["event"] == "verdict"
        && r["test"] == "leaf-ports-down"
        && r["message"]
            .as_str()
            .is_some_and(|m| m.contains("has no link-down counter"))));
}
