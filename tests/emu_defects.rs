//! Planted defects, end to end: a generated pod gets one defect of each
//! kind on components picked by a seeded draw, the acceptance suite runs
//! against it and against the same pod without defects, and every defect
//! must show up in a failing or warning verdict that names it (the traffic,
//! the audit or the counter ledger), while the healthy pod fails nothing.
//! The configuration defects are also checked in what the tools print,
//! through the transport and the real-format parsers.

use std::collections::BTreeSet;
use std::path::Path;

use assert_cmd::Command;
use rocegate::config::hostlist;
use rocegate::counters::host;
use rocegate::exec::emulated::EmulatedTransport;
use rocegate::exec::{Invocation, Role, StepCommands, Transport};
use rocegate::switch::linux::counters as switch_linux;

const NODES: u32 = 16;
const RAILS: u32 = 8;

fn rocegate() -> Command {
    let mut c = Command::cargo_bin("rocegate").expect("binary is built");
    c.current_dir(env!("CARGO_MANIFEST_DIR"));
    c
}

/// A small seeded generator, so a failing draw can be replayed.
struct Draw(u64);
impl Draw {
    fn below(&mut self, n: u32) -> u32 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 33) % u64::from(n)) as u32
    }
    /// A value in 0..n not in `used`.
    fn fresh(&mut self, n: u32, used: &mut BTreeSet<u32>) -> u32 {
        loop {
            let v = self.below(n);
            if used.insert(v) {
                return v;
            }
        }
    }
}

fn node(i: u32) -> String {
    format!("gpu{:03}", i + 1)
}

/// The defects of one draw, as YAML, and the names each defect must be
/// reported under (by the traffic, the audit or the counter ledger).
struct Planted {
    yaml: String,
    visible: Vec<(String, Vec<String>)>,
    /// Every name a failing verdict may carry.
    all: Vec<String>,
}

fn plant(seed: u64) -> Planted {
    let mut d = Draw(seed);
    // Distinct nodes for the node-level defects, distinct rails for the
    // NIC-level ones, so no defect hides another.
    let mut nodes = BTreeSet::new();
    let mut rails = BTreeSet::new();
    let slow = d.fresh(NODES, &mut nodes);
    let speed = (d.fresh(NODES, &mut nodes), d.fresh(RAILS, &mut rails));
    let cable = (d.fresh(NODES, &mut nodes), d.fresh(RAILS, &mut rails));
    let swap_node = d.fresh(NODES, &mut nodes);
    let swap = (d.fresh(RAILS, &mut rails), d.fresh(RAILS, &mut rails));
    let fw = d.fresh(NODES, &mut nodes);
    let extra = (d.fresh(NODES, &mut nodes), d.below(RAILS));
    // A dark uplink shows only when its leaf is fully loaded: put it on a
    // rail without another NIC defect, on the leaf the slow node is not on.
    let up_rail = d.fresh(RAILS, &mut rails);
    let up_leaf = if slow < NODES / 2 { 2 } else { 1 };
    let up_port = 9 + d.below(8);
    let pfc_leaf = (d.below(RAILS), 1 + d.below(2));
    let ecn_leaf = (d.below(RAILS), 1 + d.below(2));
    let nic = |(n, r): (u32, u32)| format!("{}:mlx5_{r}", node(n));
    let uplink_leaf = format!("r{up_rail}-leaf{up_leaf}");
    let yaml = format!(
        "emulation:\n  defects:\n\
         \x20 - nic_speed: {{nic: \"{}\", gbps: 200}}\n\
         \x20 - bad_cable: {{link: \"{}\", ber: 1.0e-7}}\n\
         \x20 - slow_node: {{node: {}, factor: 0.6}}\n\
         \x20 - uplink_down: {{port: \"{uplink_leaf}:swp{up_port}\"}}\n\
         \x20 - swapped_cables: {{a: \"{}\", b: \"{}\"}}\n\
         \x20 - pfc_off: {{switch: r{}-leaf{}}}\n\
         \x20 - ecn_thresholds: {{switch: r{}-leaf{}, min_kb: 5000, max_kb: 10000}}\n\
         \x20 - firmware: {{node: {}, version: 28.37.1014}}\n\
         \x20 - extra_pfc: {{nic: \"{}\", priorities: [3, 5]}}\n",
        nic(speed),
        nic(cable),
        node(slow),
        nic((swap_node, swap.0)),
        nic((swap_node, swap.1)),
        pfc_leaf.0,
        pfc_leaf.1,
        ecn_leaf.0,
        ecn_leaf.1,
        node(fw),
        nic(extra),
    );
    let visible = vec![
        ("nic_speed".to_string(), vec![nic(speed)]),
        ("bad_cable".to_string(), vec![nic(cable)]),
        ("slow_node".to_string(), vec![node(slow)]),
        ("uplink_down".to_string(), vec![uplink_leaf.clone()]),
        (
            "swapped_cables".to_string(),
            vec![nic((swap_node, swap.0)), nic((swap_node, swap.1))],
        ),
        (
            "pfc_off".to_string(),
            vec![format!("r{}-leaf{}", pfc_leaf.0, pfc_leaf.1)],
        ),
        (
            "ecn_thresholds".to_string(),
            vec![format!("r{}-leaf{}", ecn_leaf.0, ecn_leaf.1)],
        ),
        ("firmware".to_string(), vec![node(fw)]),
        ("extra_pfc".to_string(), vec![nic(extra)]),
    ];
    let all = visible.iter().flat_map(|(_, v)| v.clone()).collect();
    Planted { yaml, visible, all }
}

fn generate(dir: &Path, name: &str, extra: &str) -> String {
    let out = rocegate()
        .args(["inventory", "generate", "--name", name])
        .output()
        .expect("rocegate runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let path = dir.join(format!("{name}.yaml"));
    let text = String::from_utf8(out.stdout).unwrap() + extra;
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_string()
}

/// (exit code, verdict records, suspects) of an acceptance run.
fn accept(
    dir: &Path,
    inventory: &str,
    seed: u64,
) -> (i32, Vec<serde_json::Value>, Vec<serde_json::Value>) {
    let out_dir = dir.join(format!("run-{}", dir.read_dir().unwrap().count()));
    let out = rocegate()
        .args(["run", "--progress", "none", "--inventory", inventory])
        .args([
            "--seed",
            &seed.to_string(),
            "--out",
            out_dir.to_str().unwrap(),
        ])
        .output()
        .expect("rocegate runs");
    let text = std::fs::read_to_string(out_dir.join("results.jsonl")).unwrap_or_else(|e| {
        panic!(
            "{inventory}: no results ({e}): {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    let verdicts = text
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|v| v["event"] == "verdict")
        .collect();
    let summary: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(out_dir.join("summary.json")).expect("summary.json"),
    )
    .expect("summary.json is JSON");
    let suspects = summary["suspects"].as_array().cloned().unwrap_or_default();
    (out.status.code().unwrap_or(-1), verdicts, suspects)
}

/// Whether a verdict names `what`: in its component, its message, or (for a
/// collective over a hostlist) by including the node.
fn names(v: &serde_json::Value, what: &str) -> bool {
    let comp = v["component"].as_str().unwrap_or_default();
    let msg = v["message"].as_str().unwrap_or_default();
    if comp.contains(what) || msg.contains(what) {
        return true;
    }
    let node = what.split(':').next().unwrap_or(what);
    let hosts = comp.split(' ').next().unwrap_or_default();
    hostlist::expand(hosts).is_ok_and(|h| h.iter().any(|n| n == node))
}

#[test]
fn every_defect_fails_or_warns_and_names_its_component() {
    let dir = tempfile::tempdir().unwrap();
    for seed in [7u64, 1234, 99_991] {
        let planted = plant(seed);
        let healthy = generate(dir.path(), &format!("healthy{seed}"), "");
        let broken = generate(dir.path(), &format!("broken{seed}"), &planted.yaml);
        let (code, verdicts, suspects) = accept(dir.path(), &healthy, seed);
        let fails: Vec<_> = verdicts.iter().filter(|v| v["verdict"] == "fail").collect();
        assert!(
            fails.is_empty(),
            "seed {seed}: the healthy pod failed {fails:#?}"
        );
        assert_eq!(code, 0, "seed {seed}: healthy pod");
        assert!(
            suspects.is_empty(),
            "seed {seed}: the healthy pod has suspects {suspects:#?}"
        );

        let (code, verdicts, suspects) = accept(dir.path(), &broken, seed);
        assert_eq!(code, 1, "seed {seed}: defects planted:\n{}", planted.yaml);
        let flagged: Vec<_> = verdicts
            .iter()
            .filter(|v| v["verdict"] == "fail" || v["verdict"] == "warn")
            .collect();
        for (kind, comps) in &planted.visible {
            assert!(
                flagged.iter().any(|v| comps.iter().any(|c| names(v, c))),
                "seed {seed}: {kind} on {comps:?} made no test fail or warn\n{}",
                planted.yaml
            );
        }
        // Each planted defect is named at its component among the top
        // suspects, as many as were planted (a swap is two cables).
        let top: Vec<&str> = suspects
            .iter()
            .take(planted.visible.len() + 1)
            .map(|s| s["component"].as_str().unwrap_or_default())
            .collect();
        for (kind, comps) in &planted.visible {
            for c in comps {
                assert!(
                    top.iter().any(|s| *s == c
                        || s.starts_with(&format!("{c} "))
                        || s.starts_with(&format!("{c}:"))),
                    "seed {seed}: {kind} on {c} is not among the top suspects {top:?}\n{}",
                    planted.yaml
                );
            }
        }
        // A fault test replays its workload with the fault on top: on a pod
        // with defects its workload can fail for them, and its verdict
        // names the fault, not the defect (the healthy pods above pass
        // every fault test).
        for v in flagged
            .iter()
            .filter(|v| v["verdict"] == "fail" && v["kind"] != "fault")
        {
            assert!(
                planted.all.iter().any(|c| names(v, c)),
                "seed {seed}: a failure names no planted defect: {v:#}\n{}",
                planted.yaml
            );
        }
    }
}

fn probe(host: &str, line: &str) -> Invocation {
    Invocation {
        host: host.into(),
        argv: line.split(' ').map(String::from).collect(),
        env: Vec::new(),
        role: Role::Probe,
        timeout: std::time::Duration::from_secs(10),
        at: std::time::Duration::ZERO,
    }
}

#[tokio::test]
async fn configuration_defects_show_in_what_the_tools_print() {
    let root = env!("CARGO_MANIFEST_DIR");
    let inv =
        rocegate::config::check::load_inventory(&format!("{root}/inventory/emulated-defects.yaml"))
            .unwrap_or_else(|e| panic!("{e}"));
    let t = EmulatedTransport::new(&inv, 1, 0.0);
    let step = StepCommands {
        invocations: vec![
            probe("gpu015", "ethtool -i rdma0"),
            probe("gpu014", "ethtool -i rdma0"),
            probe("gpu016", "mlnx_qos -i rdma7"),
            probe("gpu015", "mlnx_qos -i rdma7"),
            probe("r5-leaf1", "dcb pfc show dev swp1"),
            probe("r5-leaf2", "dcb pfc show dev swp1"),
            probe("r6-leaf2", "tc -s -d qdisc show dev swp1"),
            probe("r6-leaf1", "tc -s -d qdisc show dev swp1"),
            probe("gpu012", "lldpctl -f json"),
        ],
    };
    let (_tx, rx) = tokio::sync::watch::channel(false);
    let outs = t.run_batch(&[step], rx).await.remove(0);
    for o in &outs {
        assert_eq!(o.exit, Some(0), "{o:#?}");
    }
    let fw = |i: usize| {
        host::parse_ethtool_info(&outs[i].stdout)
            .unwrap()
            .firmware_version()
            .map(String::from)
    };
    assert_eq!(fw(0).as_deref(), Some("28.37.1014"));
    assert_eq!(fw(1).as_deref(), Some("28.39.1002"));
    let pfc = |i: usize| host::parse_mlnx_qos(&outs[i].stdout).unwrap().pfc.unwrap();
    assert_eq!(
        pfc(2),
        [false, false, false, true, true, false, false, false]
    );
    assert_eq!(
        pfc(3),
        [false, false, false, true, false, false, false, false]
    );
    let prio3 = |i: usize| {
        switch_linux::parse_dcb_pfc(&outs[i].stdout)
            .unwrap()
            .prio_pfc[3]
    };
    assert_eq!(prio3(4), Some(false), "pfc_off on r5-leaf1");
    assert_eq!(prio3(5), Some(true));
    let kmin = |i: usize| {
        switch_linux::parse_tc_qdisc(&outs[i].stdout)
            .unwrap()
            .into_iter()
            .find(|b| b.tc == Some(3))
            .map(|b| b.min_bytes)
    };
    assert_eq!(kmin(6), Some(5000 * 1024));
    assert_eq!(kmin(7), Some(150 * 1024));
    // gpu012's mlx5_2 and mlx5_3 are swapped: LLDP sees each on the other's leaf.
    let lldp = host::parse_lldpctl_json(&outs[8].stdout).unwrap();
    let leaf_of = |ifname: &str| {
        lldp.iter()
            .find(|n| n.interface == ifname)
            .and_then(|n| n.chassis_name.clone())
    };
    assert_eq!(leaf_of("rdma2").as_deref(), Some("r3-leaf2"));
    assert_eq!(leaf_of("rdma3").as_deref(), Some("r2-leaf2"));
    assert_eq!(leaf_of("rdma4").as_deref(), Some("r4-leaf2"));
}
