//! The nightly user, end to end on the emulated pod: two good nights are
//! promoted into a baseline; a third good night compares clean; a night
//! with one node slowed by 4 % fails the suite's baseline test naming that
//! node, and `rocegate compare` flags that node and nothing else.

use std::path::Path;

use assert_cmd::Command;

fn rocegate(state: &Path) -> Command {
    let mut c = Command::cargo_bin("rocegate").expect("binary is built");
    c.current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("XDG_STATE_HOME", state);
    c
}

fn run(state: &Path, inventory: &Path, seed: u64, out: &Path) -> (i32, String) {
    let o = rocegate(state)
        .args([
            "run",
            "--progress",
            "none",
            "--suite",
            "suites/nightly.yaml",
        ])
        .arg("--inventory")
        .arg(inventory)
        .args(["--seed", &seed.to_string()])
        .arg("--out")
        .arg(out)
        .output()
        .expect("rocegate runs");
    let results = std::fs::read_to_string(out.join("results.jsonl")).unwrap_or_default();
    let baseline: Vec<String> = results
        .lines()
        .filter(|l| l.contains("\"test\":\"baseline\""))
        .map(String::from)
        .collect();
    (o.status.code().unwrap_or(-1), baseline.join("\n"))
}

#[test]
fn a_node_slowed_a_few_percent_is_the_one_regression() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let gen = rocegate(&state)
        .args(["inventory", "generate", "--name", "nightly-pod"])
        .output()
        .unwrap();
    assert!(gen.status.success());
    let healthy = dir.path().join("healthy.yaml");
    std::fs::write(&healthy, &gen.stdout).unwrap();
    let slow = dir.path().join("slow.yaml");
    let mut text = String::from_utf8(gen.stdout).unwrap();
    text += "emulation:\n  defects:\n  - slow_node: {node: gpu011, factor: 0.96}\n";
    std::fs::write(&slow, text).unwrap();

    // No baseline yet: the comparison is skipped with how to make one.
    let (code, baseline) = run(&state, &healthy, 1, &dir.path().join("n1"));
    assert_eq!(code, 0, "{baseline}");
    assert!(
        baseline.contains("\"verdict\":\"skipped\"")
            && baseline.contains("rocegate baseline promote"),
        "{baseline}"
    );
    let (code, _) = run(&state, &healthy, 2, &dir.path().join("n2"));
    assert_eq!(code, 0);
    let promote = rocegate(&state)
        .args(["baseline", "promote"])
        .arg(dir.path().join("n1"))
        .arg(dir.path().join("n2"))
        .output()
        .unwrap();
    assert!(
        promote.status.success(),
        "{}",
        String::from_utf8_lossy(&promote.stderr)
    );
    let show = rocegate(&state)
        .args(["baseline", "show", "nightly-pod"])
        .output()
        .unwrap();
    let show = String::from_utf8_lossy(&show.stdout);
    assert!(show.contains("runs: nightly-pod"), "{show}");
    assert!(show.contains("gpu011:mlx5_0"), "{show}");

    // Another good night: nothing regressed.
    let (code, baseline) = run(&state, &healthy, 3, &dir.path().join("n3"));
    assert_eq!(code, 0, "{baseline}");
    assert!(baseline.contains("no significant regression"), "{baseline}");

    // One node 4 % slower: the suite fails on it, and compare says so.
    let n4 = dir.path().join("n4");
    let (code, baseline) = run(&state, &slow, 4, &n4);
    assert_eq!(code, 1, "{baseline}");
    assert_eq!(baseline.lines().count(), 1, "{baseline}");
    assert!(
        baseline.contains("\"component\":\"gpu011\"") && baseline.contains("\"verdict\":\"fail\""),
        "{baseline}"
    );
    let out = rocegate(&state)
        .args(["compare", "nightly-pod"])
        .arg(&n4)
        .arg("--json")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let c: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let regressed: Vec<&str> = c["regressions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["component"].as_str().unwrap())
        .collect();
    assert_eq!(regressed, vec!["gpu011"], "{:#}", c["regressions"]);
    let change = c["regressions"][0]["change_pct"].as_f64().unwrap();
    assert!((-5.0..-3.0).contains(&change), "{change}");
    assert_eq!(c["topology_match"], true);

    // Two runs compare directly too, and a run against itself is clean.
    let out = rocegate(&state)
        .arg("compare")
        .arg(dir.path().join("n3"))
        .arg(dir.path().join("n3"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    // Another fabric's run is refused, not compared.
    let other = dir.path().join("other.yaml");
    let gen = rocegate(&state)
        .args(["inventory", "generate", "--name", "other", "--nodes", "8"])
        .output()
        .unwrap();
    std::fs::write(&other, &gen.stdout).unwrap();
    let o = rocegate(&state)
        .args([
            "run",
            "--progress",
            "none",
            "--only",
            "rail-bw",
            "--inventory",
        ])
        .arg(&other)
        .arg("--out")
        .arg(dir.path().join("o1"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0));
    let out = rocegate(&state)
        .arg("compare")
        .arg(dir.path().join("n3"))
        .arg(dir.path().join("o1"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("different topologies"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
