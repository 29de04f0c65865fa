//! `rocegate plan --campaign` and `rocegate run --campaign` end to end on
//! emulated pods: the embedded pod and the same pod with planted defects
//! (inventory/emulated-defects.yaml), with a short suite so each fabric's
//! run takes about a second.

use std::path::{Path, PathBuf};
use std::process::Command as StdCommand;
use std::time::{Duration, Instant};

use assert_cmd::Command;
use serde_json::Value;

use rocegate::config::units::format_duration;

/// One perftest test over every rail: the emulated pod passes it, the
/// defects pod fails it (its slow node, swapped cables and 200G NIC).
const QUICK: &str = "\
suite: {name: quick}
tests:
  - name: rail-bw
    perftest: {tool: ib_write_bw, size: 1M, duration: 2s, qps: 1}
    pattern: rail-pairs
    expect: {fair_share: {min_pct: 92, warn_pct: 97}}
";

fn rocegate() -> Command {
    let mut c = Command::cargo_bin("rocegate").expect("binary is built");
    c.current_dir(env!("CARGO_MANIFEST_DIR"));
    c
}

/// A temporary directory holding quick.yaml and a campaign file with
/// `body` (its fabrics list and whatever else), returning the campaign's path.
fn campaign(tmp: &Path, body: &str) -> PathBuf {
    std::fs::write(tmp.join("quick.yaml"), QUICK).unwrap();
    let path = tmp.join("tonight.yaml");
    std::fs::write(&path, body).unwrap();
    path
}

/// `quick` on a pod: inventory read from the working directory (the
/// checkout), the suite next to the campaign file.
fn fabric(name: &str, inventory: &str) -> String {
    format!("  - name: {name}\n    inventory: inventory/{inventory}.yaml\n    suite: quick.yaml\n")
}

fn run(path: &Path, out: &Path, extra: &[&str]) -> std::process::Output {
    let mut args = vec![
        "run",
        "--campaign",
        path.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    rocegate().args(&args).output().expect("rocegate runs")
}

fn json(p: PathBuf) -> Value {
    let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    serde_json::from_str(&text).unwrap()
}

fn text(o: &std::process::Output) -> String {
    format!(
        "stdout:\n{}\nstderr:\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn by_name<'a>(c: &'a Value, name: &str) -> &'a Value {
    c["fabrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["name"] == name)
        .unwrap_or_else(|| panic!("no fabric {name} in {c}"))
}

#[test]
fn the_shipped_example_plans_and_fits() {
    let o = rocegate()
        .args(["plan", "--campaign", "campaigns/example.yaml"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("emu-pod-defects") && out.contains("emu-pod "),
        "{out}"
    );
    assert!(
        out.contains("critical path:") && out.contains("fits"),
        "{out}"
    );
}

#[test]
fn a_campaign_over_its_window_is_refused_saying_by_how_much_and_what_fits() {
    let tmp = tempfile::tempdir().unwrap();
    let body = format!(
        "window: {{deadline: 1m}}\nfabrics:\n{}  - name: big\n    inventory: inventory/emulated.yaml\n    suite: suites/acceptance.yaml\n{}",
        fabric("a", "emulated"),
        fabric("b", "emulated-defects")
    );
    let path = campaign(tmp.path(), &body);
    let o = rocegate()
        .args(["plan", "--json", "--campaign", path.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let plan: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(plan["fits"], false);
    let (critical, window) = (
        plan["critical_path_s"].as_f64().unwrap(),
        plan["window_s"].as_f64().unwrap(),
    );
    let sum: f64 = plan["fabrics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["estimate_s"].as_f64().unwrap())
        .sum();
    assert!((critical - sum).abs() < 1e-6, "one after another: the sum");
    assert_eq!(window, 60.0);
    let over = format_duration(Duration::from_secs((critical - window) as u64));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains(&format!("{over} over")), "{err}");
    assert!(err.contains("What fits, in this order: a, b"), "{err}");
    assert!(err.contains("leave out big"), "{err}");
    assert_eq!(by_name(&plan, "big")["fits"], false);
    assert_eq!(by_name(&plan, "b")["fits"], true);
}

#[test]
fn parallel_fabrics_share_the_window_unless_their_inventories_share_a_fabric() {
    let tmp = tempfile::tempdir().unwrap();
    let body = format!(
        "window: {{deadline: 4h}}\nparallel: 3\nfabrics:\n{}{}{}",
        fabric("a", "emulated"),
        fabric("b", "emulated-defects"),
        fabric("a-again", "emulated")
    );
    let path = campaign(tmp.path(), &body);
    let o = rocegate()
        .args(["plan", "--json", "--campaign", path.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let plan: Value = serde_json::from_slice(&o.stdout).unwrap();
    let (a, b, again) = (
        by_name(&plan, "a"),
        by_name(&plan, "b"),
        by_name(&plan, "a-again"),
    );
    assert_eq!(b["start_s"], 0.0, "shares nothing with a: starts at once");
    assert_eq!(
        again["start_s"], a["end_s"],
        "the same fabric twice waits for the first"
    );
    let conflicts = plan["conflicts"].as_array().unwrap();
    assert_eq!(conflicts.len(), 1, "{conflicts:?}");
    assert!(conflicts[0]["why"].as_str().unwrap().contains("emu-pod"));
}

#[test]
fn continue_runs_every_fabric_and_the_gate_is_the_worst() {
    let tmp = tempfile::tempdir().unwrap();
    let body = format!(
        "window: {{deadline: 4h}}\non_failure: continue\nfabrics:\n{}{}{}",
        fabric("defects", "emulated-defects"),
        fabric("pod", "emulated"),
        fabric("pod2", "emulated")
    );
    let path = campaign(tmp.path(), &body);
    let out = tmp.path().join("out");
    let o = run(&path, &out, &[]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let stdout = String::from_utf8_lossy(&o.stdout);
    let summary = stdout
        .lines()
        .find(|l| l.starts_with("CAMPAIGN"))
        .expect("a summary");
    assert!(summary.starts_with("CAMPAIGN FAIL"), "{stdout}");
    let c = json(out.join("campaign.json"));
    assert_eq!(c["exit_code"], 1);
    assert_eq!(c["gate"], "fail");
    let d = by_name(&c, "defects");
    assert_eq!(d["status"], "failed");
    assert_eq!(d["run_exit_code"], 1);
    assert!(!d["suspects"].as_array().unwrap().is_empty(), "{d}");
    // Each fabric's suspects are its run's own.
    let s = json(out.join("defects/summary.json"));
    assert_eq!(d["suspects"], s["suspects"]);
    for name in ["pod", "pod2"] {
        let f = by_name(&c, name);
        assert_eq!(f["status"], "passed", "{f}");
        assert_eq!(f["exit_code"], 0);
        assert!(f["measured_s"].as_f64().unwrap() > 0.0);
        assert!(f["estimate_s"].as_f64().unwrap() > 0.0);
    }
    // Every per-fabric output, as a single run writes it.
    for name in ["defects", "pod", "pod2"] {
        for file in ["report.html", "junit.xml", "summary.json", "results.jsonl"] {
            assert!(out.join(name).join(file).is_file(), "{name}/{file}");
        }
    }
    let html = std::fs::read_to_string(out.join("index.html")).unwrap();
    for name in ["defects", "pod", "pod2"] {
        assert!(
            html.contains(&format!("href=\"{name}/report.html\"")),
            "{html}"
        );
    }
    assert!(!html.contains("http://") && !html.contains("https://"));
}

#[test]
fn stop_and_skip_rest_start_nothing_after_a_failure() {
    for policy in ["stop", "skip_rest"] {
        let tmp = tempfile::tempdir().unwrap();
        let body = format!(
            "window: {{deadline: 4h}}\non_failure: {policy}\nfabrics:\n{}{}",
            fabric("defects", "emulated-defects"),
            fabric("pod", "emulated")
        );
        let path = campaign(tmp.path(), &body);
        let out = tmp.path().join("out");
        let o = run(&path, &out, &[]);
        assert_eq!(
            o.status.code(),
            Some(3),
            "a skipped fabric is never a pass: {}",
            text(&o)
        );
        let c = json(out.join("campaign.json"));
        assert_eq!(by_name(&c, "defects")["status"], "failed");
        let pod = by_name(&c, "pod");
        assert_eq!(pod["status"], "skipped", "{policy}: {pod}");
        let why = pod["reason"].as_str().unwrap();
        assert!(
            why.contains("defects did not pass") && why.contains(policy),
            "{why}"
        );
        assert!(!out.join("pod").exists(), "{policy}: pod must not start");
        assert!(c["stopped"].as_str().unwrap().contains(policy));
    }
}

#[test]
fn a_window_that_fits_some_fabrics_skips_the_others_with_the_reason() {
    let tmp = tempfile::tempdir().unwrap();
    let body = format!(
        "window: {{start: now, deadline: 1m}}\non_failure: continue\nfabrics:\n{}  - name: big\n    inventory: inventory/emulated.yaml\n    suite: suites/acceptance.yaml\n{}",
        fabric("first", "emulated"),
        fabric("defects", "emulated-defects")
    );
    let path = campaign(tmp.path(), &body);
    let out = tmp.path().join("out");
    let o = run(&path, &out, &[]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    let c = json(out.join("campaign.json"));
    assert_eq!(by_name(&c, "first")["status"], "passed");
    let big = by_name(&c, "big");
    assert_eq!(big["status"], "skipped");
    let why = big["reason"].as_str().unwrap();
    assert!(
        why.contains("left before the deadline") && why.contains("scaled by"),
        "re-estimated from the first fabric's measured duration: {why}"
    );
    assert!(!out.join("big").exists(), "big must not start");
    // A shorter fabric after it still fits and runs.
    assert_eq!(by_name(&c, "defects")["status"], "failed");
    assert!(c["measured_over_estimate"].as_f64().unwrap() > 0.0);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("CAMPAIGN INCOMPLETE"), "{stdout}");
}

#[test]
fn an_interrupt_stops_the_campaign_heals_the_fabric_and_starts_no_other() {
    let tmp = tempfile::tempdir().unwrap();
    let state = tmp.path().join("state");
    let body = format!(
        "window: {{deadline: 4h}}\non_failure: continue\nfabrics:\n{}{}",
        fabric("first", "emulated"),
        fabric("second", "emulated-defects")
    );
    let path = campaign(tmp.path(), &body);
    let out = tmp.path().join("out");
    // Half a virtual second per wall second: the first fabric's 2-second
    // steps take several seconds, time enough to be interrupted.
    let mut child = StdCommand::new(assert_cmd::cargo::cargo_bin("rocegate"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("XDG_STATE_HOME", &state)
        .args(["run", "--campaign", path.to_str().unwrap(), "--pace", "0.5"])
        .arg("--out")
        .arg(&out)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while !out.join("first").is_dir() {
        assert!(Instant::now() < deadline, "no run directory within 60 s");
        assert!(
            child.try_wait().unwrap().is_none(),
            "the campaign ended before it could be interrupted"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // SAFETY: signalling our own child.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGINT);
    }
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    let c = json(out.join("campaign.json"));
    assert_eq!(c["interrupted"], true);
    assert_eq!(c["exit_code"], 3);
    let first = by_name(&c, "first");
    assert_eq!(first["status"], "interrupted", "{first}");
    // The fabric's own run took the signal: it stopped, healed what it
    // had open and closed its log as interrupted.
    let records = std::fs::read_to_string(out.join("first/results.jsonl")).unwrap();
    let last: Value = serde_json::from_str(records.lines().last().unwrap()).unwrap();
    assert_eq!(last["event"], "run_finished");
    assert_eq!(last["interrupted"], true);
    assert!(out.join("first/report.html").is_file());
    // Nothing is left open in the journal of the fabric it touched.
    let recover = rocegate()
        .env("XDG_STATE_HOME", &state)
        .args(["recover", "-i", "inventory/emulated.yaml"])
        .output()
        .unwrap();
    assert_eq!(recover.status.code(), Some(0), "{}", text(&recover));
    // No later fabric started.
    let second = by_name(&c, "second");
    assert_eq!(second["status"], "not_run");
    assert!(second["reason"].as_str().unwrap().contains("interrupted"));
    assert!(!out.join("second").exists());
    assert!(!out.join("second.log").exists());
}

#[test]
fn a_baseline_is_compared_after_the_fabric_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let first = campaign(
        tmp.path(),
        &format!(
            "window: {{deadline: 4h}}\nfabrics:\n{}",
            fabric("pod", "emulated")
        ),
    );
    let out1 = tmp.path().join("out1");
    let o = run(&first, &out1, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    // The same pod again, against the first run (relative to the campaign file).
    let second = tmp.path().join("again.yaml");
    std::fs::write(
        &second,
        format!(
            "window: {{deadline: 4h}}\nfabrics:\n{}    baseline: out1/pod\n",
            fabric("pod", "emulated")
        ),
    )
    .unwrap();
    let out2 = tmp.path().join("out2");
    let o = run(&second, &out2, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let c = json(out2.join("campaign.json"));
    let b = &by_name(&c, "pod")["baseline"];
    assert_eq!(b["result"], "no regression", "{b}");
    // A baseline that is nowhere is refused before anything runs.
    std::fs::write(
        &second,
        format!(
            "window: {{deadline: 4h}}\nfabrics:\n{}    baseline: out9/pod\n",
            fabric("pod", "emulated")
        ),
    )
    .unwrap();
    let o = rocegate()
        .args(["plan", "--campaign", second.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("again.yaml:6:") && err.contains("fabrics[0].baseline"),
        "{err}"
    );
}

#[test]
fn bad_campaign_files_name_the_file_and_line_and_exit_2() {
    let cases: &[(&str, &str, &str)] = &[
        (
            "window: {deadline: 4h}\nfabrics:\n  - name: a\n    inventory: inventory/missing.yaml\n    suite: quick.yaml\n",
            "tonight.yaml:4:",
            "fabrics[0].inventory: \"inventory/missing.yaml\" not found",
        ),
        (
            "window: {deadline: 4h\nfabrics: []\n",
            "tonight.yaml:2:",
            "",
        ),
        (
            "window:\n  start: 2026-11-28T06:00:00Z\n  deadline: 2026-11-28T02:00:00Z\nfabrics:\n  - name: a\n    inventory: inventory/emulated.yaml\n    suite: quick.yaml\n",
            "tonight.yaml:3:",
            "is not after the start",
        ),
        (
            "window: {deadline: 4h}\nfabrics:\n  - name: a\n    inventory: inventory/emulated.yaml\n    suite: quick.yaml\n  - name: a\n    inventory: inventory/emulated-defects.yaml\n    suite: quick.yaml\n",
            "tonight.yaml:6:",
            "\"a\" is already the name of fabrics[0]",
        ),
        (
            "window: {deadline: soon}\nfabrics:\n  - name: a\n    inventory: inventory/emulated.yaml\n    suite: quick.yaml\n",
            "tonight.yaml:1:",
            "neither an RFC 3339 time",
        ),
        (
            "window: {deadline: 4h}\non_failure: retry\nfabrics:\n  - name: a\n    inventory: inventory/emulated.yaml\n    suite: quick.yaml\n",
            "tonight.yaml:2:",
            "on_failure",
        ),
    ];
    for (body, place, what) in cases {
        let tmp = tempfile::tempdir().unwrap();
        let path = campaign(tmp.path(), body);
        for cmd in ["plan", "run"] {
            let out = tmp.path().join("out");
            let mut c = rocegate();
            c.args([cmd, "--campaign", path.to_str().unwrap()]);
            if cmd == "run" {
                c.arg("--out").arg(&out);
            }
            let o = c.output().unwrap();
            assert_eq!(o.status.code(), Some(2), "{cmd} {body}: {}", text(&o));
            let err = String::from_utf8_lossy(&o.stderr);
            assert!(
                err.contains(place) && err.contains(what),
                "{cmd} {body}: {err}"
            );
            assert!(!err.contains("panicked"), "{err}");
            assert!(
                !tmp.path().join("out").exists(),
                "nothing ran: {cmd} {body}"
            );
        }
    }
}

#[test]
fn stop_in_parallel_interrupts_the_fabric_beside_the_failed_one() {
    let tmp = tempfile::tempdir().unwrap();
    // Two fabrics at once: the defects pod fails its short suite while the
    // embedded pod is still in its longer cutover suite (2 virtual seconds
    // per wall second: about 12 s of it).
    let body = format!(
        "window: {{deadline: 4h}}\nparallel: 2\non_failure: stop\norder: [defects, long, later]\nfabrics:\n  - name: long\n    inventory: inventory/emulated.yaml\n    suite: suites/cutover.yaml\n{}{}",
        fabric("defects", "emulated-defects"),
        fabric("later", "emulated-eos")
    );
    let path = campaign(tmp.path(), &body);
    let out = tmp.path().join("out");
    let o = run(&path, &out, &["--pace", "2"]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    let c = json(out.join("campaign.json"));
    let names: Vec<&str> = c["fabrics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["defects", "long", "later"], "in `order`");
    assert_eq!(by_name(&c, "defects")["status"], "failed");
    let long = by_name(&c, "long");
    assert_eq!(long["status"], "interrupted", "{long}");
    assert!(
        long["reason"]
            .as_str()
            .unwrap()
            .contains("defects did not pass"),
        "{long}"
    );
    let records = std::fs::read_to_string(out.join("long/results.jsonl")).unwrap();
    let last: Value = serde_json::from_str(records.lines().last().unwrap()).unwrap();
    assert_eq!(last["interrupted"], true, "its run stopped and healed");
    assert_eq!(by_name(&c, "later")["status"], "skipped");
    assert!(!out.join("later").exists());
}
