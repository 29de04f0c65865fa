//! `rocegate audit` end to end on emulated pods: the healthy pod has
//! nothing but passes and `not available` where the model has no source
//! (mlxsw has no PFC watchdog); pods with configuration and cabling defects
//! planted on components drawn by a seed get each defect named at its
//! component; bad arguments exit 2 with the reason.

use std::collections::BTreeSet;

use assert_cmd::Command;

fn rocegate() -> Command {
    let mut c = Command::cargo_bin("rocegate").expect("binary is built");
    c.current_dir(env!("CARGO_MANIFEST_DIR"));
    c
}

/// Findings of `rocegate audit --json` on `inventory`, and the exit code.
fn audit(inventory: &str) -> (i32, Vec<serde_json::Value>) {
    let out = rocegate()
        .args(["audit", "--json", "-i", inventory])
        .output()
        .expect("rocegate runs");
    let findings: Vec<serde_json::Value> =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
            panic!(
                "{inventory}: not JSON ({e}): {}",
                String::from_utf8_lossy(&out.stderr)
            )
        });
    (out.status.code().unwrap_or(-1), findings)
}

#[test]
fn the_healthy_pod_has_only_passes_and_reasoned_not_available() {
    let (code, findings) = audit("inventory/emulated.yaml");
    assert_eq!(code, 0);
    assert!(findings.len() > 1000, "{} findings", findings.len());
    let mut checks = BTreeSet::new();
    for f in &findings {
        checks.insert(f["check"].as_str().unwrap().to_string());
        match f["outcome"].as_str().unwrap() {
            "ok" => {}
            "not_available" => {
                let m = f["message"].as_str().unwrap();
                match f["check"].as_str().unwrap() {
                    "switch.pfc_watchdog" => assert!(m.contains("no PFC watchdog"), "{f:#}"),
                    // mlxsw's DSCP classification (the dcb APP table) is not
                    // read on linux switches: said, with where it lives.
                    "switch.dscp_map" => assert!(m.contains("dcb app show dev"), "{f:#}"),
                    _ => panic!("healthy pod: not available: {f:#}"),
                }
            }
            other => panic!("healthy pod: {other}: {f:#}"),
        }
    }
    // Every family of checks ran and said something.
    for c in [
        "nic.firmware",
        "nic.driver",
        "nic.link",
        "nic.mtu",
        "nic.pfc",
        "nic.trust",
        "nic.dscp_map",
        "nic.gid",
        "nic.dcqcn",
        "optics",
        "cabling.lldp",
        "switch.pfc",
        "switch.ecn",
        "switch.mtu",
        "switch.link",
        "switch.nos",
    ] {
        assert!(checks.contains(c), "no {c} finding: {checks:?}");
    }
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
}

fn node(i: u32) -> String {
    format!("gpu{:03}", i + 1)
}

/// A generated pod with one configuration or cabling defect of each kind
/// on drawn components, and the component each must be named at.
fn planted(dir: &std::path::Path, seed: u64) -> (String, Vec<(String, String)>) {
    let mut d = Draw(seed);
    let out = rocegate()
        .args(["inventory", "generate", "--name", "audit-pod"])
        .output()
        .unwrap();
    assert!(out.status.success());
    // Distinct nodes, so no defect hides another.
    let mut used = BTreeSet::new();
    let mut fresh = |d: &mut Draw| loop {
        let n = d.below(16);
        if used.insert(n) {
            return n;
        }
    };
    let speed = format!("{}:mlx5_{}", node(fresh(&mut d)), d.below(8));
    let fw = node(fresh(&mut d));
    let extra = format!("{}:mlx5_{}", node(fresh(&mut d)), d.below(8));
    // Two NICs of one rail on two nodes behind different ports.
    let rail = d.below(8);
    let (a, b) = (fresh(&mut d), fresh(&mut d));
    let swap_a = format!("{}:mlx5_{rail}", node(a));
    let swap_b = format!("{}:mlx5_{rail}", node(b));
    let pfc = format!("r{}-leaf{}", d.below(8), 1 + d.below(2));
    let ecn = loop {
        let e = format!("r{}-leaf{}", d.below(8), 1 + d.below(2));
        if e != pfc {
            break e;
        }
    };
    let yaml = format!(
        "emulation:\n  defects:\n\
         \x20 - nic_speed: {{nic: \"{speed}\", gbps: 100}}\n\
         \x20 - firmware: {{node: {fw}, version: 28.36.2024}}\n\
         \x20 - extra_pfc: {{nic: \"{extra}\", priorities: [0, 3]}}\n\
         \x20 - swapped_cables: {{a: \"{swap_a}\", b: \"{swap_b}\"}}\n\
         \x20 - pfc_off: {{switch: {pfc}}}\n\
         \x20 - ecn_thresholds: {{switch: {ecn}, min_kb: 40, max_kb: 400}}\n"
    );
    let path = dir.join(format!("pod{seed}.yaml"));
    std::fs::write(&path, String::from_utf8(out.stdout).unwrap() + &yaml).unwrap();
    let want = vec![
        ("nic.link".to_string(), speed),
        ("nic.firmware".to_string(), format!("{fw}:mlx5_0")),
        ("nic.pfc".to_string(), extra),
        ("cabling.swap".to_string(), swap_a.clone()),
        ("cabling.swap".to_string(), swap_b.clone()),
        ("switch.pfc".to_string(), pfc),
        ("switch.ecn".to_string(), ecn),
    ];
    (path.display().to_string(), want)
}

#[test]
fn planted_configuration_and_cabling_defects_are_named_at_their_component() {
    let dir = tempfile::tempdir().unwrap();
    for seed in [3u64, 41, 2026] {
        let (inv, want) = planted(dir.path(), seed);
        let (code, findings) = audit(&inv);
        assert_eq!(code, 1, "seed {seed}");
        let bad: Vec<&serde_json::Value> = findings
            .iter()
            .filter(|f| f["outcome"] == "deviation")
            .collect();
        for (check, component) in &want {
            assert!(
                bad.iter()
                    .any(|f| f["check"] == check.as_str() && f["component"] == component.as_str()),
                "seed {seed}: no {check} deviation at {component}; deviations: {:#?}",
                bad.iter()
                    .map(|f| format!("{} {} {}", f["check"], f["component"], f["message"]))
                    .collect::<Vec<_>>()
            );
        }
        // The swap names both NICs and both ports in one message.
        let swap = bad.iter().find(|f| f["check"] == "cabling.swap").unwrap();
        let msg = swap["message"].as_str().unwrap();
        assert_eq!(msg.matches(":swp").count(), 4, "{msg}");
        // Nothing the draw did not plant deviates: every deviation is on a
        // planted component, or on the far end of a planted NIC's cable.
        let planted: Vec<&str> = want.iter().map(|(_, c)| c.as_str()).collect();
        for f in &bad {
            let c = f["component"].as_str().unwrap();
            let m = f["message"].as_str().unwrap();
            let node_of = |p: &str| p.split(':').next().unwrap().to_string();
            assert!(
                planted.iter().any(|p| c == *p
                    || m.contains(p)
                    || c.starts_with(&format!("{}:", node_of(p)))
                    || c.starts_with(&format!("{p}:"))),
                "seed {seed}: a deviation names nothing planted: {f:#}"
            );
        }
    }
}

#[test]
fn bad_arguments_exit_2_with_the_reason() {
    let out = rocegate()
        .args(["audit", "--check", "bogus.thing"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--check bogus.thing"), "{err}");
    let out = rocegate()
        .args(["audit", "--nodes", "gpu[900-901]"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("gpu900") && err.contains("not in"), "{err}");
}

#[test]
fn check_prefixes_narrow_the_audit() {
    let out = rocegate()
        .args([
            "audit", "--json", "--check", "cabling", "--check", "nic.pfc",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let findings: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).unwrap();
    assert!(!findings.is_empty());
    for f in &findings {
        let c = f["check"].as_str().unwrap();
        assert!(c.starts_with("cabling.") || c == "nic.pfc", "{c}");
    }
}
