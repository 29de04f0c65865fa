//! `rocegate run` and `rocegate report` end to end on the emulated pod.

use std::path::{Path, PathBuf};
use std::process::Command as StdCommand;
use std::time::{Duration, Instant};

use assert_cmd::Command;

fn rocegate() -> Command {
    let mut c = Command::cargo_bin("rocegate").expect("binary is built");
    c.current_dir(env!("CARGO_MANIFEST_DIR"));
    c
}

fn run_to(dir: &Path, extra: &[&str]) -> std::process::Output {
    let mut args = vec!["run", "--progress", "none", "--out", dir.to_str().unwrap()];
    args.extend_from_slice(extra);
    rocegate().args(&args).output().expect("rocegate runs")
}

fn read(p: PathBuf) -> String {
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// results.jsonl without the wall-clock fields.
fn virtual_records(dir: &Path) -> Vec<serde_json::Value> {
    read(dir.join("results.jsonl"))
        .lines()
        .map(|l| {
            let mut v: serde_json::Value = serde_json::from_str(l).unwrap();
            if let Some(o) = v.as_object_mut() {
                // Wall clock, and the run id made from it and the pid.
                o.remove("started_at");
                o.remove("ended_at");
                o.remove("run_id");
            }
            v
        })
        .collect()
}

#[test]
fn default_run_passes_and_writes_every_output() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("run");
    let out = run_to(&dir, &[]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("GATE PASSED"), "{stdout}");
    for f in ["results.jsonl", "junit.xml", "summary.json", "report.html"] {
        assert!(dir.join(f).is_file(), "{f} missing");
    }
    let junit = read(dir.join("junit.xml"));
    assert!(
        junit.contains("<testsuites"),
        "{}",
        &junit[..200.min(junit.len())]
    );
    assert!(junit.contains("<testsuite ") && junit.contains("<testcase "));
    // Testcase names are unique within their class.
    let mut seen = std::collections::HashSet::new();
    for case in junit.split("<testcase ").skip(1) {
        let attr = |name: &str| {
            case.split(&format!("{name}=\""))
                .nth(1)
                .and_then(|s| s.split('"').next())
                .unwrap_or("")
                .to_string()
        };
        assert!(
            seen.insert((attr("classname"), attr("name"))),
            "duplicate testcase {}",
            attr("name")
        );
    }
    assert!(
        seen.iter()
            .any(|(_, n)| n == "gpu001:mlx5_0&lt;-&gt;gpu002:mlx5_0"),
        "pair names carry the NICs"
    );
    let summary: serde_json::Value = serde_json::from_str(&read(dir.join("summary.json"))).unwrap();
    assert_eq!(summary["exit_code"], 0);
    assert_eq!(
        summary["inputs"]["inventory"]["sha256"]
            .as_str()
            .unwrap()
            .len(),
        64
    );
    let html = read(dir.join("report.html"));
    assert!(
        html.contains("GATE PASSED") && !html.contains("http://") && !html.contains("https://"),
        "self-contained"
    );
}

#[test]
fn an_impossible_threshold_fails_the_gate_naming_each_pair() {
    let tmp = tempfile::tempdir().unwrap();
    let suite = tmp.path().join("s.yaml");
    std::fs::write(
        &suite,
        "suite: {name: impossible}\ntests:\n  - name: bw\n    perftest: {tool: ib_write_bw, size: 1M, duration: 5s}\n    pattern: rail-pairs\n    rails: [0]\n    expect: {min: 500}\n",
    )
    .unwrap();
    let dir = tmp.path().join("run");
    let out = run_to(&dir, &["--suite", suite.to_str().unwrap(), "--verbose"]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let junit = read(dir.join("junit.xml"));
    let failures = junit.matches("<failure type=\"fail\"").count();
    assert_eq!(failures, 8, "one failure per rail-0 pair of 16 nodes");
    // Each failure says what and against what in its text, not only in
    // `message` (GitLab shows the text); the suspects have a suite.
    assert!(junit.contains("min: 500"), "threshold in the failure text");
    assert!(junit.contains("name=\"impossible.suspects\""));
    let stamp = junit
        .split("timestamp=\"")
        .nth(1)
        .and_then(|r| r.split('"').next())
        .unwrap();
    assert_eq!(
        stamp.len(),
        19,
        "Ant's YYYY-MM-DDTHH:MM:SS, no zone: {stamp}"
    );
    for pair in [
        "gpu001:mlx5_0&lt;-&gt;gpu002:mlx5_0",
        "gpu015:mlx5_0&lt;-&gt;gpu016:mlx5_0",
    ] {
        assert!(junit.contains(pair), "{pair} missing");
    }
    assert!(
        junit.contains("Gb/s &lt; min 500.0 Gb/s"),
        "value and threshold in the message"
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("FAIL") && stdout.contains("evidence"),
        "{stdout}"
    );
}

#[test]
fn report_rebuilds_junit_byte_for_byte() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("run");
    assert_eq!(
        run_to(&dir, &["--only", "rail-bw", "allreduce"])
            .status
            .code(),
        Some(0)
    );
    let junit = read(dir.join("junit.xml"));
    std::fs::remove_file(dir.join("junit.xml")).unwrap();
    std::fs::remove_file(dir.join("report.html")).unwrap();
    let out = rocegate()
        .args(["report", dir.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(read(dir.join("junit.xml")), junit);
    assert!(read(dir.join("report.html")).contains("allreduce"));

    // New expectations: the recorded samples judged against them, said so
    // in the outputs; the run's own suite again restores its verdicts.
    let strict = tmp.path().join("strict.yaml");
    std::fs::write(
        &strict,
        read(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("suites/acceptance.yaml")).replace(
            "fair_share: {min_pct: 92, warn_pct: 97}",
            "fair_share: {min_pct: 99.9, warn_pct: 99.95}",
        ),
    )
    .unwrap();
    let out = rocegate()
        .args([
            "report",
            dir.to_str().unwrap(),
            "--suite",
            strict.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("re-judged rail-bw, allreduce against"));
    let summary: serde_json::Value = serde_json::from_str(&read(dir.join("summary.json"))).unwrap();
    assert_eq!(summary["gate_passed"], false);
    assert!(summary["rejudged_with"]
        .as_str()
        .unwrap()
        .ends_with("strict.yaml"));
    assert!(read(dir.join("junit.xml")).contains("99.9% of"));
    assert!(read(dir.join("report.html")).contains("id=\"rejudged\""));
    let out = rocegate()
        .args(["report", dir.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(read(dir.join("junit.xml")), junit);
}

#[test]
fn same_seed_same_results_other_seed_other_placement() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b, c) = (
        tmp.path().join("a"),
        tmp.path().join("b"),
        tmp.path().join("c"),
    );
    for (d, seed) in [(&a, "7"), (&b, "7"), (&c, "8")] {
        assert_eq!(
            run_to(d, &["--only", "cross-leaf-bw", "--seed", seed])
                .status
                .code(),
            Some(0)
        );
    }
    assert_eq!(virtual_records(&a), virtual_records(&b));
    assert_ne!(
        virtual_records(&a),
        virtual_records(&c),
        "a different seed hashes flows differently"
    );
}

#[test]
fn sigint_in_a_paced_run_keeps_finished_steps_and_exits_3() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("run");
    let bin = assert_cmd::cargo::cargo_bin("rocegate");
    // 2 virtual seconds per wall second: each 12-second rail-bw batch takes 6 s.
    let mut child = StdCommand::new(bin)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args([
            "run",
            "--progress",
            "none",
            "--pace",
            "2",
            "--out",
            dir.to_str().unwrap(),
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let text = std::fs::read_to_string(dir.join("results.jsonl")).unwrap_or_default();
        if text.contains("\"event\":\"sample\"") {
            break;
        }
        assert!(Instant::now() < deadline, "no finished step within 60 s");
        assert!(
            child.try_wait().unwrap().is_none(),
            "the run ended before it could be interrupted"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    // SAFETY: signalling our own child.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGINT);
    }
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let records = virtual_records(&dir);
    let samples = records.iter().filter(|r| r["event"] == "sample").count();
    assert!(samples >= 1);
    let last = records.last().unwrap();
    assert_eq!(last["event"], "run_finished");
    assert_eq!(last["interrupted"], true);
    let junit = read(dir.join("junit.xml"));
    assert!(
        junit.contains("<testcase "),
        "finished steps are judged and in JUnit"
    );
    // The run-incomplete error says why (passing testcases carry no text
    // in the Ant schema, so the verdicts' own "run interrupted" notes are
    // not in it).
    assert!(
        junit.contains("name=\"run incomplete\"") && junit.contains("interrupted"),
        "{junit:.600}"
    );
    // Every sample that finished is in results.jsonl; the run stopped early.
    assert!(samples < 1153, "the run was cut short");
}

#[test]
fn a_bare_rocegate_is_rocegate_run_with_the_same_defaults() {
    let tmp = tempfile::tempdir().unwrap();
    let (bare, run) = (tmp.path().join("bare"), tmp.path().join("run"));
    let out = rocegate()
        .args([
            "--progress",
            "none",
            "--only",
            "rail-lat",
            "--out",
            bare.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(run_to(&run, &["--only", "rail-lat"]).status.code(), Some(0));
    let (a, b) = (virtual_records(&bare), virtual_records(&run));
    assert_eq!(a[0]["seed"], 1);
    assert_eq!(a, b);
}

#[test]
fn the_faults_suite_delivers_each_fault_and_judges_its_workload() {
    let dir = tempfile::tempdir().unwrap();
    let out = run_to(dir.path(), &["--suite", "suites/faults.yaml"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let records = virtual_records(dir.path());
    let verdict = |test: &str| {
        records
            .iter()
            .find(|r| r["event"] == "verdict" && r["test"] == test)
            .unwrap_or_else(|| panic!("no verdict for {test}"))
            .clone()
    };
    // ECMP moves the flows off a flapped uplink: nothing fails.
    assert_eq!(verdict("uplink-flap")["value"], 0.0);
    // A 10 s host flap outlasts perftest's 0.54 s retry budget: exactly the
    // pair on that NIC fails, with the completion error perftest prints.
    let host = verdict("host-flap");
    assert_eq!(host["value"], 1.0);
    let msg = host["message"].as_str().unwrap();
    assert!(
        msg.contains("gpu003:mlx5_0<->") && msg.contains("Failed status 12"),
        "{msg}"
    );
    // Routing stopped on r0-leaf2 cuts every cross-leaf pair of rail 0.
    assert_eq!(verdict("leaf-routing")["value"], 8.0);
    // NCCL rides out 10 s within its 34 s budget: the flap (200 ms in)
    // stalls its warm-up, and no timed cycle of its series ends before
    // the link is back.
    assert_eq!(verdict("nccl-rides-out-a-flap")["verdict"], "pass");
    let samples: Vec<&serde_json::Value> = records
        .iter()
        .filter(|r| r["event"] == "sample" && r["test"] == "nccl-rides-out-a-flap")
        .collect();
    let flap = samples.iter().find(|r| r["value"].is_null()).unwrap();
    let job = samples.iter().find(|r| r["value"].is_number()).unwrap();
    let first = job["series"][0][0].as_f64().unwrap();
    let back = flap["ended_s"].as_f64().unwrap();
    assert!(
        first > back,
        "a cycle ended at {first} before the link was back at {back}"
    );
    assert!(job["series"].as_array().unwrap().len() >= 2, "{job}");
    // The fault commands are in the raw evidence, timed.
    let cmds: Vec<String> = records
        .iter()
        .filter(|r| r["event"] == "sample" && r["test"] == "leaf-routing")
        .flat_map(|r| r["commands"].as_array().unwrap().clone())
        .map(|c| c.as_str().unwrap().to_string())
        .collect();
    assert!(
        cmds.iter()
            .any(|c| c.contains("r0-leaf2 (at 5.0s): systemctl stop frr")),
        "{cmds:?}"
    );
    assert!(
        cmds.iter()
            .any(|c| c.contains("r0-leaf2 (at 13.0s): systemctl start frr")),
        "{cmds:?}"
    );
}
