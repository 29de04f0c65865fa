//! report.html in a real browser: Debian's chromium, headless, driven over
//! the DevTools protocol by chromedriver and python3-selenium
//! (tests/browser/check_report.py). The healthy pod's report, the defects
//! pod's, a 256-node pod's (drawn on a canvas) and two hostile ones (an
//! inventory path and tool output carrying `<script>` and `onerror`
//! payloads) must load with no console error (a Content-Security-Policy
//! violation is one), show every section their run has, and never fire the
//! canary. Screenshots and the printed PDF are kept under
//! target/browser-screenshots/ for a person to read. Without chromium, chromedriver or selenium the tests say
//! so and skip.

use std::path::{Path, PathBuf};
use std::process::Command as StdCommand;

use assert_cmd::Command;
use serde_json::Value;

fn rocegate() -> Command {
    let mut c = Command::cargo_bin("rocegate").expect("binary is built");
    c.current_dir(env!("CARGO_MANIFEST_DIR"));
    c
}

/// The python that imports selenium, with chromium and chromedriver
/// installed, or why there is none.
fn browser() -> Result<&'static str, String> {
    for bin in ["/usr/bin/chromium", "/usr/bin/chromedriver"] {
        if !Path::new(bin).exists() {
            return Err(format!(
                "{bin} is not installed: apt-get install chromium chromium-driver python3-selenium"
            ));
        }
    }
    // A pyenv or virtualenv python3 first on PATH does not see Debian's
    // python3-selenium; Debian's own is tried next.
    for py in ["python3", "/usr/bin/python3"] {
        let ok = StdCommand::new(py)
            .args(["-c", "import selenium"])
            .output()
            .is_ok_and(|o| o.status.success());
        if ok {
            return Ok(py);
        }
    }
    Err("python3 cannot import selenium: apt-get install python3-selenium".into())
}

/// The python to drive the browser with, or `None` after saying why the
/// test skips.
fn browser_or_skip() -> Option<&'static str> {
    browser().map_err(|why| println!("skipped: {why}")).ok()
}

/// Opens `report` and returns what check_report.py saw.
fn open(py: &str, report: &Path, name: &str) -> Value {
    let shots = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/browser-screenshots");
    std::fs::create_dir_all(&shots).expect("screenshot directory");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/browser/check_report.py");
    let out = StdCommand::new(py)
        .arg(&script)
        .arg(report)
        .arg(shots.join(format!("{name}.png")))
        .output()
        .expect("check_report.py runs");
    assert!(
        out.status.success(),
        "check_report.py on {}: {}",
        report.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "check_report.py printed no JSON ({e}): {}",
            String::from_utf8_lossy(&out.stdout)
        )
    })
}

/// What every report must be: loaded, its script run, nothing logged,
/// nothing injected, the gate and the results there.
fn assert_sound(seen: &Value, what: &str) {
    assert_eq!(
        seen["ready"], true,
        "{what}: the page's script did not finish: {seen}"
    );
    assert_eq!(
        seen["console"].as_array().map(Vec::len),
        Some(0),
        "{what}: console errors: {}",
        seen["console"]
    );
    assert_eq!(seen["canary"], Value::Null, "{what}: injected script ran");
    assert_eq!(
        seen["foreign_elements"], 0,
        "{what}: injected elements: {seen}"
    );
    assert_eq!(
        seen["scripts"], 1,
        "{what}: only rocegate's own script may run"
    );
    for s in ["gate", "reason", "suspects", "plan", "results"] {
        assert_eq!(seen["sections"][s], true, "{what}: no #{s}: {seen}");
    }
    assert_eq!(
        seen["sorted"], true,
        "{what}: sorting by value failed: {seen}"
    );
    assert_eq!(
        seen["fail_rows_shown"], seen["fail_rows_total"],
        "{what}: the verdict filter shows the wrong rows: {seen}"
    );
    println!(
        "{what}: loaded and scripted in {} s, {} result rows, {} charts, {} screenshots",
        seen["load_s"],
        seen["result_rows"],
        seen["svg_charts"],
        seen["screenshots"].as_array().map_or(0, Vec::len)
    );
}

fn run(args: &[&str], out: &Path) {
    let mut c = rocegate();
    c.arg("run").args(args).arg("--out").arg(out);
    let o = c.output().expect("rocegate runs");
    assert!(
        matches!(o.status.code(), Some(0 | 1)),
        "rocegate run {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn the_healthy_and_the_defects_reports_open_and_show_their_diagnosis() {
    let Some(py) = browser_or_skip() else {
        return;
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let healthy = dir.path().join("healthy");
    run(&[], &healthy);
    let seen = open(py, &healthy.join("report.html"), "healthy");
    assert_sound(&seen, "healthy");
    assert!(
        seen["gate"]
            .as_str()
            .is_some_and(|g| g.starts_with("GATE PASSED")),
        "{seen}"
    );
    for s in [
        "heatmaps",
        "distribution",
        "curves",
        "faults",
        "counters",
        "audit",
    ] {
        assert_eq!(seen["sections"][s], true, "healthy: no #{s}");
    }
    assert!(seen["heat_tables"].as_u64() > Some(0), "{seen}");
    assert_eq!(
        seen["heat_link_target"], "hit",
        "a heatmap cell leads to its pair's row: {seen}"
    );
    // The fault timelines and curves are charts.
    assert!(seen["svg_charts"].as_u64() >= Some(4), "{seen}");

    let defects = dir.path().join("defects");
    run(&["-i", "inventory/emulated-defects.yaml"], &defects);
    let seen = open(py, &defects.join("report.html"), "defects");
    assert_sound(&seen, "defects");
    assert!(
        seen["gate"]
            .as_str()
            .is_some_and(|g| g.starts_with("GATE FAILED")),
        "{seen}"
    );
    assert!(
        seen["suspects"].as_u64() > Some(0),
        "the defects have suspects: {seen}"
    );
    assert!(seen["fail_rows_total"].as_u64() > Some(0), "{seen}");
}

#[test]
fn a_large_pod_is_drawn_on_a_canvas_and_drills_down_by_leaf() {
    let Some(py) = browser_or_skip() else {
        return;
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let inv = dir.path().join("large.yaml");
    rocegate()
        .args([
            "inventory",
            "generate",
            "--nodes",
            "256",
            "--name",
            "large",
            "-o",
        ])
        .arg(&inv)
        .assert()
        .success();
    let suite = dir.path().join("large-suite.yaml");
    std::fs::write(
        &suite,
        "suite:\n  name: large\n  description: pair traffic on a large pod\ngate:\n  fail_on: [fail, error]\ntests:\n  - name: random-bw\n    perftest: {tool: ib_write_bw, size: 1M, duration: 5s, qps: 8}\n    pattern: {random: {rounds: 2, seed: 7}}\n    expect:\n      fair_share: {min_pct: 92, warn_pct: 97, cross_spine: {floor_pct: 35, median_pct: 90, quantile: 5, quantile_min_pct: 65}}\n",
    )
    .expect("suite written");
    let out = dir.path().join("run");
    run(
        &[
            "-i",
            inv.to_str().expect("utf-8"),
            "-s",
            suite.to_str().expect("utf-8"),
        ],
        &out,
    );
    let seen = open(py, &out.join("report.html"), "large-256");
    assert_sound(&seen, "256 nodes");
    let drawn = seen["heat_canvases"].as_array().expect("canvases");
    assert_eq!(drawn.len(), 1, "{seen}");
    assert_eq!(drawn[0], 256 * 256, "the whole pod is drawn: {seen}");
    // Eight nodes per leaf: a leaf pair is 8 x 8 cells.
    assert_eq!(seen["drilled_cells"], 64, "{seen}");
}

const CANARY: &str = "<script>window.__canary=1</script><img src=x onerror=\"window.__canary=2\"><svg onload=\"window.__canary=3\">";

/// Every string of a record carrying the payload: components, messages,
/// hosts, tests, checks, counter names.
fn poison(v: &mut Value) {
    match v {
        Value::String(s) if !s.starts_with("raw/") => s.push_str(CANARY),
        Value::Array(a) => a.iter_mut().for_each(poison),
        Value::Object(o) => {
            for (k, x) in o.iter_mut() {
                // Keys that must still parse as the schema's enums.
                if matches!(
                    k.as_str(),
                    "event" | "verdict" | "outcome" | "canonical" | "status" | "role"
                ) {
                    continue;
                }
                poison(x);
            }
        }
        _ => {}
    }
}

#[test]
fn hostile_names_and_tool_output_never_run_in_the_report() {
    let Some(py) = browser_or_skip() else {
        return;
    };
    let dir = tempfile::tempdir().expect("temp dir");
    // 1. An inventory whose path carries the payload (names inside an
    //    inventory are refused by validation, paths are not).
    let evil_dir = dir.path().join("<img src=x onerror=window.__canary=4>");
    std::fs::create_dir_all(&evil_dir).expect("dir");
    let inv = evil_dir.join("<script>window.__canary=5<\\script>.yaml");
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("inventory/emulated-defects.yaml"),
        &inv,
    )
    .expect("inventory copied");
    let out = dir.path().join("run");
    run(&["-i", inv.to_str().expect("utf-8")], &out);
    let seen = open(py, &out.join("report.html"), "hostile-path");
    assert_sound(&seen, "hostile inventory path");

    // 2. Every string in the log and every raw output carrying it, as a
    //    tampered or hostile tool would print: rebuilt by `rocegate report`.
    let log = std::fs::read_to_string(out.join("results.jsonl")).expect("log");
    let mut lines = Vec::new();
    for line in log.lines() {
        let mut v: Value = serde_json::from_str(line).expect("a record");
        if v["event"] == "run_started" {
            // Without the embedded inputs `report` keeps the recorded
            // verdicts instead of judging the samples again.
            v.as_object_mut().expect("object").remove("inputs");
        }
        poison(&mut v);
        lines.push(v.to_string());
    }
    std::fs::write(out.join("results.jsonl"), lines.join("\n") + "\n").expect("log written");
    for entry in walk(&out.join("raw")) {
        let mut text = std::fs::read_to_string(&entry).unwrap_or_default();
        text.push_str(CANARY);
        std::fs::write(&entry, text).expect("raw written");
    }
    let o = rocegate()
        .arg("report")
        .arg(&out)
        .output()
        .expect("report runs");
    assert!(
        o.status.code().is_some_and(|c| c != 2 && c < 100),
        "rocegate report: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let html = std::fs::read_to_string(out.join("report.html")).expect("report.html");
    assert!(
        html.contains("&lt;script&gt;window.__canary=1"),
        "the payload is shown, escaped"
    );
    let seen = open(py, &out.join("report.html"), "hostile-log");
    assert_sound(&seen, "hostile log and raw outputs");
    assert!(seen["suspects"].as_u64() > Some(0), "{seen}");
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                out.extend(walk(&p));
            } else {
                out.push(p);
            }
        }
    }
    out
}
