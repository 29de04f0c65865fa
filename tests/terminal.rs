//! What a person reads on the terminal, on the emulated pod: the end of a
//! run leads with the gate, caps its list of results and says where the
//! reports are, `report` prints the same; progress under CI is a few plain
//! lines with a percentage and an ETA; and no Rust debug text (`Some(127)`,
//! `TimedOut(…)`) reaches the terminal, JUnit or summary.json.

use std::path::Path;
use std::time::Instant;

use assert_cmd::Command;

fn rocegate() -> Command {
    let mut c = Command::cargo_bin("rocegate").expect("binary is built");
    c.current_dir(env!("CARGO_MANIFEST_DIR"));
    c.env_remove("CI");
    c
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A suite whose bandwidth test fails every rail-pair of the pod: 64
/// failing results, more than the terminal shows.
fn impossible(dir: &Path) -> String {
    let suite = dir.join("impossible.yaml");
    std::fs::write(
        &suite,
        "suite: {name: impossible}\ntests:\n  - name: bw\n    perftest: {tool: ib_write_bw, size: 1M, duration: 5s}\n    pattern: rail-pairs\n    expect: {min: 500}\n  - name: lat\n    perftest: {tool: ib_write_lat, size: 2}\n    pattern: rail-pairs\n    rails: [0]\n    expect: {max: 0.01}\n",
    )
    .unwrap();
    suite.to_str().unwrap().to_string()
}

/// The lines of `out` from the one that starts with `head` to the next
/// blank line.
fn section<'a>(out: &'a str, head: &str) -> Vec<&'a str> {
    out.lines()
        .skip_while(|l| !l.starts_with(head))
        .take_while(|l| !l.is_empty())
        .collect()
}

#[test]
fn the_end_of_a_run_leads_with_the_gate_and_caps_the_list() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("run");
    let d = dir.to_str().unwrap();
    let suite = impossible(tmp.path());
    let out = rocegate()
        .args(["run", "--progress", "none", "-s", &suite, "--out", d])
        .output()
        .unwrap();
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}{}", text(&out.stderr));
    let first = stdout.lines().next().unwrap_or_default();
    assert!(
        first.starts_with("GATE FAILED: ") && first.ends_with("-> exit 1"),
        "{stdout}"
    );
    // The suspects come before the list, the list before the reports.
    let at = |s: &str| stdout.find(s).unwrap_or_else(|| panic!("no {s}: {stdout}"));
    assert!(at("SUSPECTS") < at("NOT PASSED") && at("NOT PASSED") < at("REPORTS"));
    // 72 failing results, grouped by test, 20 lines with the headings.
    let list = section(&stdout, "NOT PASSED");
    assert!(
        list[0].starts_with("NOT PASSED (72), by test, 18 shown"),
        "{list:#?}"
    );
    assert!(list.contains(&"bw: 64 fail") && list.contains(&"lat: 8 fail"));
    let shown = &list[1..list.len() - 1];
    assert_eq!(shown.len(), 20, "{list:#?}");
    assert_eq!(
        list.last().unwrap(),
        &format!("…and 54 more in {d}/report.html (--verbose lists them all)")
    );
    for l in shown {
        assert!(l.chars().count() <= 160, "{l}");
    }
    let reports = section(&stdout, "REPORTS");
    for f in ["report.html", "junit.xml", "summary.json", "results.jsonl"] {
        assert!(
            reports.iter().any(|l| l.contains(&format!("{d}/{f}"))),
            "{reports:#?}"
        );
    }

    // `report` says the same, from the run directory alone.
    let again = rocegate().args(["report", d]).output().unwrap();
    assert_eq!(again.status.code(), Some(1));
    let without_reports = |s: &str| s[..s.find("\nREPORTS").unwrap()].to_string();
    assert_eq!(
        without_reports(&text(&again.stdout)),
        without_reports(&stdout)
    );

    // --verbose: every result in full, with its evidence.
    let all = rocegate()
        .args(["report", d, "--verbose"])
        .output()
        .unwrap();
    let all = text(&all.stdout);
    assert!(all.starts_with("GATE FAILED: "), "{all}");
    assert!(!all.contains("more in"), "nothing left out: {all}");
    for n in [1, 15] {
        for rail in 0..8 {
            let pair = format!("gpu{n:03}:mlx5_{rail}<->gpu{:03}:mlx5_{rail}", n + 1);
            assert!(all.contains(&pair), "{pair} missing");
        }
    }
    assert_eq!(all.matches("evidence ").count(), 72, "{all}");
}

#[test]
fn a_narrowed_run_says_what_it_skipped_in_one_line() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("run");
    let out = rocegate()
        .args(["run", "--progress", "none", "--only", "rail-lat", "--out"])
        .arg(&dir)
        .output()
        .unwrap();
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(
        stdout.starts_with("GATE PASSED (PARTIAL RUN: --only rail-lat; 7 test(s) skipped): "),
        "{stdout}"
    );
    assert!(
        stdout.contains("\nskipped audit, rail-bw, mesh-bw, cross-leaf-bw, allreduce, link-flap, leaf-reset: not selected: --only rail-lat\n"),
        "{stdout}"
    );
    assert!(!stdout.contains("NOT PASSED"), "{stdout}");
}

#[test]
fn line_progress_under_ci_has_percent_and_eta_and_is_not_chatty() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("run");
    let t0 = Instant::now();
    let out = rocegate()
        .env("CI", "true")
        .args(["run", "--only", "rail-bw", "rail-lat", "--out"])
        .arg(&dir)
        .output()
        .unwrap();
    let wall = t0.elapsed().as_secs();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stderr = text(&out.stderr);
    let lines: Vec<&str> = stderr.lines().collect();
    // The start, one line per test (two), one per ten seconds, the end.
    assert!(
        lines.len() <= 4 + wall as usize / 10 + 1,
        "{} lines in {wall} s: {stderr}",
        lines.len()
    );
    assert!(lines[0].contains("run acceptance on emu-pod"), "{stderr}");
    let mut last = 0;
    for l in &lines[1..lines.len() - 1] {
        assert!(l.starts_with('[') && l.contains("% ETA "), "{l}");
        let pct: u32 = l
            .split('%')
            .next()
            .unwrap()
            .rsplit(' ')
            .next()
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        assert!(pct >= last && pct < 100, "{stderr}");
        last = pct;
    }
    assert!(
        stderr.contains("rail-bw (1/2)") && stderr.contains("rail-lat (2/2)"),
        "{stderr}"
    );
    assert!(
        lines.last().unwrap().contains("100% finished in"),
        "{stderr}"
    );
}

/// Debug text that must never reach a person.
const DEBUG: [&str; 5] = ["Some(", "None", "TimedOut(", "Err(", "Ok("];

fn no_debug(what: &str, s: &str) {
    for d in DEBUG {
        if let Some(at) = s.find(d) {
            let from = s[..at].char_indices().rev().nth(80).map_or(0, |(i, _)| i);
            panic!(
                "{what}: Rust debug text {d:?}: …{}…",
                &s[from..(at + 40).min(s.len())]
            );
        }
    }
}

/// What rocegate wrote itself. JUnit carries the tools' own output
/// verbatim (ethtool prints `FEC modes: None`): in system-out and
/// system-err, and in a failure's text after each raw file's `### stdout:`
/// and `### stderr:` lines.
fn ours(s: &str) -> String {
    let mut out = String::new();
    let mut rest = s;
    while let Some(at) = rest.find("<system-") {
        out += &rest[..at];
        let close = rest[at..]
            .find("</system-")
            .and_then(|c| rest[at + c..].find('>').map(|e| at + c + e + 1));
        rest = close.map_or("", |end| &rest[end..]);
    }
    out += rest;
    let mut tool = false;
    let mut kept = String::new();
    for line in out.lines() {
        if line.starts_with("### ") || line.starts_with("--- raw/") || line.contains("</") {
            tool = false;
        }
        if !tool {
            kept += line;
            kept.push('\n');
        }
        if line == "### stdout:" || line == "### stderr:" {
            tool = true;
        }
    }
    kept
}

#[test]
fn no_rust_debug_text_reaches_a_person() {
    let tmp = tempfile::tempdir().unwrap();
    // The pod with planted defects, every result in full.
    let dir = tmp.path().join("defects");
    let out = rocegate()
        .args(["run", "--progress", "lines", "--verbose"])
        .args(["-i", "inventory/emulated-defects.yaml", "--out"])
        .arg(&dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    no_debug("run stdout", &text(&out.stdout));
    no_debug("run stderr", &text(&out.stderr));
    for f in ["junit.xml", "summary.json"] {
        no_debug(f, &ours(&std::fs::read_to_string(dir.join(f)).unwrap()));
    }
    // Steps killed at their timeout.
    let suite = tmp.path().join("hang.yaml");
    std::fs::write(
        &suite,
        "suite: {name: hang}\ntests:\n  - name: bw\n    perftest: {tool: ib_write_bw, size: 1M, duration: 5s}\n    pattern: rail-pairs\n    rails: [0]\n    timeout: 3s\n    expect: {min: 100}\n",
    )
    .unwrap();
    let dir = tmp.path().join("hang");
    let out = rocegate()
        .args(["run", "--progress", "lines", "--verbose", "-s"])
        .arg(&suite)
        .arg("--out")
        .arg(&dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("killed by the harness at its timeout"),
        "{stdout}"
    );
    no_debug("timeout stdout", &stdout);
    no_debug("timeout stderr", &text(&out.stderr));
    for f in ["junit.xml", "summary.json"] {
        no_debug(f, &ours(&std::fs::read_to_string(dir.join(f)).unwrap()));
    }
    // A command that is not installed, through `exec`.
    let out = rocegate()
        .args(["exec", "-w", "gpu001", "--", "nosuchtool"])
        .output()
        .unwrap();
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("gpu001: exited with status 127"),
        "{stderr}"
    );
    no_debug("exec stderr", &stderr);
}
