//! What the `rocegate run` tests on an emulated pod share.

use std::path::Path;

use assert_cmd::Command;

/// `rocegate run` on `inventory` into `dir`, which must pass the gate; its
/// results.jsonl records.
pub fn run(inventory: &str, dir: &Path, extra: &[&str]) -> Vec<serde_json::Value> {
    let mut args = vec![
        "run",
        "--progress",
        "none",
        "--inventory",
        inventory,
        "--out",
        dir.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let out = Command::cargo_bin("rocegate")
        .expect("binary is built")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(&args)
        .output()
        .expect("rocegate runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("GATE PASSED"), "{stdout}");
    std::fs::read_to_string(dir.join("results.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The sum of one canonical counter's changes in a ledger record.
pub fn ledger_value(r: &serde_json::Value, canonical: &str) -> u64 {
    r["changes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["canonical"] == canonical)
        .filter_map(|c| c["status"]["value"].as_u64())
        .sum()
}

/// `rocegate run` on `inventory` into `dir` whatever its gate says: its
/// exit code, stdout and results.jsonl records.
pub fn run_any(
    inventory: &str,
    dir: &Path,
    extra: &[&str],
) -> (Option<i32>, String, Vec<serde_json::Value>) {
    let mut args = vec![
        "run",
        "--progress",
        "none",
        "--inventory",
        inventory,
        "--out",
        dir.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let out = Command::cargo_bin("rocegate")
        .expect("binary is built")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(&args)
        .output()
        .expect("rocegate runs");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let records = std::fs::read_to_string(dir.join("results.jsonl"))
        .unwrap_or_else(|e| panic!("{e}: {stdout}\n{}", String::from_utf8_lossy(&out.stderr)))
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    (out.status.code(), stdout, records)
}
