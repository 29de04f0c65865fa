//! `rocegate run` on the emulated pod with Cumulus Linux leaves
//! (inventory/emulated-cumulus.yaml): the leaves are read by the cumulus
//! platform's NVUE command lines and changed by its (linux) faults,
//! answered by the emulated fabric from the same model as the `linux`
//! switches.

mod common;
use common::emulated::ledger_value;
use std::path::Path;

fn run(dir: &Path, extra: &[&str]) -> Vec<serde_json::Value> {
    common::emulated::run("inventory/emulated-cumulus.yaml", dir, extra)
}

/// The acceptance suite passes; every leaf's counters come from NVUE's
/// link stats, its ECN marks from `counters qos` and `qos roce counters`,
/// its links from `nv show interface IF link -o json`, each port's PFC and
/// ECN from its RoCE status and the DSCP map from `nv show qos roce` (the
/// audit checks every leaf port), and the leaf reset is FRR stopped and
/// started through `sudo -n` (the emulated account is `cumulus`).
#[test]
fn acceptance_on_cumulus_leaves_reads_their_counters_and_sends_the_faults() {
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
    let ports = ledger("nv show interface link stats");
    let leaves: std::collections::BTreeSet<&str> =
        ports.iter().map(|r| r["host"].as_str().unwrap()).collect();
    assert_eq!(leaves.len(), 16, "{leaves:?}");
    assert!(ports
        .iter()
        .any(|r| r["test"] == "rail-bw" && ledger_value(r, "tx_bytes") > 100_000_000_000));
    assert!(ledger("nv show interface counters qos")
        .iter()
        .any(|r| ledger_value(r, "ecn_marked") > 0));
    let roce = ledger("nv show interface qos roce counters");
    assert!(roce.len() >= 16, "{}", roce.len());
    assert!(roce.iter().any(|r| ledger_value(r, "ecn_marked") > 0));
    // The audit's findings from NVUE's RoCE objects: PFC and ECN on every
    // leaf port as the profile says, the DSCP map on every leaf.
    let findings = |check: &str| -> Vec<&serde_json::Value> {
        records
            .iter()
            .filter(|r| {
                r["event"] == "finding"
                    && r["check"] == check
                    && r["host"].as_str().unwrap_or("").contains("-leaf")
            })
            .collect()
    };
    for check in ["switch.pfc", "switch.ecn"] {
        let f = findings(check);
        assert_eq!(f.len(), 16 * 16, "{check}");
        assert!(
            f.iter().all(|r| r["outcome"] == "ok"),
            "{check}: {:?}",
            f[0]
        );
        assert!(f[0]["sources"]
            .to_string()
            .contains("qos roce status -o json"));
    }
    let dscp = findings("switch.dscp_map");
    assert_eq!(dscp.len(), 16);
    assert!(dscp.iter().all(|r| r["outcome"] == "ok"
        && r["observed"]
            .as_str()
            .unwrap()
            .contains("26->switch-priority 3")));
    // The audit read every leaf port's link and MTU from NVUE.
    let audited = records
        .iter()
        .filter(|r| {
            r["event"] == "verdict"
                && r["test"] == "audit"
                && r["component"].as_str().unwrap().contains("-leaf")
                && r["component"].as_str().unwrap().contains(":swp")
                && r["message"].as_str().unwrap().contains("switch.mtu")
        })
        .count();
    assert_eq!(audited, 16 * 16);
    let reset = records
        .iter()
        .find(|r| {
            r["event"] == "sample" && r["test"] == "leaf-reset" && r["details"]["what"].is_string()
        })
        .expect("a leaf-reset sample");
    let cmds = reset["commands"].to_string();
    assert!(
        cmds.contains("sudo -n systemctl stop frr") && cmds.contains("sudo -n systemctl start frr"),
        "{cmds}"
    );
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
  name: cumulus-faults
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

/// Faults on a Cumulus leaf (linux's `ip link set`) take its ports down in
/// the model: an uplink flap is ridden out by ECMP, a leaf's ports down
/// for 10 s outlast every pair's retry budget, and the leaf's own NVUE
/// link stats count the loss of link (`carrier-transitions`).
#[test]
fn cumulus_leaf_faults_take_ports_down_in_the_model() {
    let tmp = tempfile::tempdir().unwrap();
    let suite = tmp.path().join("cumulus-faults.yaml");
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
        .contains("r0-leaf1:swp9"));
    let sample = records
        .iter()
        .find(|r| r["event"] == "sample" && r["test"] == "uplink-flap" && r["commands"].is_array())
        .expect("an uplink-flap sample");
    let cmds = sample["commands"].to_string();
    assert!(
        cmds.contains("sudo -n ip link set dev swp9 down")
            && cmds.contains("sudo -n ip link set dev swp9 up"),
        "{cmds}"
    );
    let down = verdict("leaf-ports-down");
    assert_eq!(down["value"], 8.0, "{down}");
    assert!(records.iter().any(|r| r["event"] == "ledger"
        && r["test"] == "leaf-ports-down"
        && r["host"] == "r0-leaf2"
        && r["source"] == "nv show interface link stats"
        && ledger_value(r, "link_down") == 1));
}
