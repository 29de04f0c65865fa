//! Narrowing a run (`--only`, `--nodes`, `--exclude`, `--skip-faults`) on
//! the emulated pod: what it leaves out is `skipped` with the reason, the
//! run says it was partial everywhere, and narrowing alone never fails the
//! gate. And `validate` and `plan` refuse what `run` refuses, in the same
//! words.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use serde_json::Value;

fn rocegate() -> Command {
    let mut c = Command::cargo_bin("rocegate").expect("binary is built");
    c.current_dir(env!("CARGO_MANIFEST_DIR"));
    c
}

fn read(p: PathBuf) -> String {
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// Runs the acceptance suite on the emulated pod into `dir` with `extra`.
fn run(dir: &Path, extra: &[&str]) -> (Option<i32>, String) {
    let out = rocegate()
        .args(["run", "--progress", "none", "--out"])
        .arg(dir)
        .args(extra)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    (out.status.code(), format!("{stdout}{stderr}"))
}

/// `test -> message` of every skipped verdict.
fn skipped(dir: &Path) -> Vec<(String, String)> {
    read(dir.join("results.jsonl"))
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|r| r["event"] == "verdict" && r["verdict"] == "skipped")
        .map(|r| {
            (
                r["test"].as_str().unwrap().to_string(),
                r["message"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn message_of<'a>(list: &'a [(String, String)], test: &str) -> &'a str {
    list.iter()
        .find(|(t, _)| t == test)
        .map(|(_, m)| m.as_str())
        .unwrap_or_else(|| panic!("{test} is not skipped: {list:#?}"))
}

#[test]
fn four_nodes_skip_what_cannot_run_there_and_still_pass() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("run");
    let (code, out) = run(&dir, &["--nodes", "gpu[001-004]"]);
    assert_eq!(code, Some(0), "{out}");
    assert!(
        out.contains("GATE PASSED (PARTIAL RUN: --nodes gpu[001-004]; 2 test(s) skipped)"),
        "{out}"
    );
    let s = skipped(&dir);
    assert_eq!(s.len(), 2, "{s:#?}");
    // The four nodes share one leaf per rail: no pair crosses a spine.
    assert!(message_of(&s, "cross-leaf-bw").contains("no steps on the 4 node(s)"));
    // The flapped NIC (drawn on the whole pod) is not among the four nodes:
    // flapping it would judge nothing.
    assert!(message_of(&s, "link-flap").contains("none of which carries \"allreduce\""));
    // The reset leaf serves the four nodes: that fault still runs.
    assert!(s.iter().all(|(t, _)| t != "leaf-reset"));
    let summary: Value = serde_json::from_str(&read(dir.join("summary.json"))).unwrap();
    assert_eq!(summary["partial"], true);
    assert_eq!(summary["narrowing"], "--nodes gpu[001-004]");
    assert_eq!(summary["exit_code"], 0);
    let junit = read(dir.join("junit.xml"));
    assert!(
        junit.contains("<property name=\"rocegate.partial\" value=\"true\"/>"),
        "{junit:.600}"
    );
    assert!(junit.contains("<skipped"), "skips are in the JUnit");
    assert!(read(dir.join("report.html")).contains("id=\"partial\""));
}

#[test]
fn skip_faults_and_only_say_why_each_test_was_left_out() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("run");
    let (code, out) = run(&dir, &["--skip-faults", "--only", "rail-lat", "link-flap"]);
    assert_eq!(code, Some(0), "{out}");
    let s = skipped(&dir);
    assert!(message_of(&s, "link-flap").contains("--skip-faults"));
    assert!(message_of(&s, "mesh-bw").contains("not selected: --only rail-lat link-flap"));
    // The flap's traffic came along with it and ran.
    assert!(s.iter().all(|(t, _)| t != "allreduce" && t != "rail-lat"));
    assert!(
        out.contains("PARTIAL RUN: --only rail-lat link-flap --skip-faults"),
        "{out}"
    );
}

#[test]
fn a_whole_run_is_not_partial() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("run");
    let (code, out) = run(&dir, &[]);
    assert_eq!(code, Some(0), "{out}");
    assert!(!out.contains("PARTIAL"), "{out}");
    assert!(skipped(&dir).is_empty());
    let summary: Value = serde_json::from_str(&read(dir.join("summary.json"))).unwrap();
    assert_eq!(summary["partial"], false);
    let junit = read(dir.join("junit.xml"));
    assert!(!junit.contains("rocegate.partial"), "{junit:.600}");
    assert!(junit.contains("<property name=\"rocegate.seed\""));
}

/// The last line of stderr that starts with `rocegate: `.
fn refusal(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr)
        .lines()
        .rfind(|l| l.starts_with("rocegate: "))
        .unwrap_or_default()
        .to_string()
}

#[test]
fn validate_plan_and_run_refuse_the_same_things_in_the_same_words() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let inv = read(Path::new(env!("CARGO_MANIFEST_DIR")).join("inventory/emulated.yaml")).replacen(
        "    max_isolated_nics: 16\n",
        "    max_isolated_nics: 4\n",
        1,
    );
    assert!(inv.contains("max_isolated_nics: 4"));
    std::fs::write(d.join("small-radius.yaml"), inv).unwrap();
    let lonely = "\
suite: {name: lonely}
tests:
  - name: lonely
    perftest: {tool: ib_write_bw, size: 1M, duration: 2s}
    pattern: rail-pairs
    nodes: gpu001
  - name: flap
    fault:
      link_flap: {target: r0-leaf1:swp9}
      during: lonely
      at: 1s
      for: 1s
    expect: {workload: completes}
";
    std::fs::write(d.join("lonely.yaml"), lonely).unwrap();
    let suite = Path::new(env!("CARGO_MANIFEST_DIR")).join("suites/acceptance.yaml");
    let emulated = Path::new(env!("CARGO_MANIFEST_DIR")).join("inventory/emulated.yaml");
    for (inv, suite, words) in [
        (
            d.join("small-radius.yaml"),
            suite.clone(),
            "leaf-reset: isolates 8 NICs, limit is 4 (fabric.blast_radius.max_isolated_nics)",
        ),
        (
            emulated.clone(),
            d.join("lonely.yaml"),
            "test \"flap\" runs during \"lonely\", which has no steps on this inventory",
        ),
    ] {
        let mut said = Vec::new();
        for cmd in ["validate", "plan", "run"] {
            let out = rocegate()
                .args([cmd, "-i"])
                .arg(&inv)
                .arg("-s")
                .arg(&suite)
                .args(if cmd == "run" {
                    vec!["--progress", "none", "--out"]
                } else {
                    vec![]
                })
                .args(if cmd == "run" {
                    vec![d.join(format!("run-{}", said.len())).display().to_string()]
                } else {
                    vec![]
                })
                .output()
                .unwrap();
            assert_eq!(out.status.code(), Some(2), "{cmd}: {}", refusal(&out));
            let line = refusal(&out);
            assert!(line.contains(words), "{cmd}: {line}");
            said.push(line);
        }
        assert!(
            said.windows(2).all(|w| w[0] == w[1]),
            "validate, plan and run say the same: {said:#?}"
        );
    }
}
