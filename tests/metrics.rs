//! Metrics and actions out, end to end: `rocegate run` on the embedded
//! emulated pod (gate passes) and on inventory/emulated-defects.yaml (gate
//! fails), the .prom file checked by `promtool check metrics` (Debian's
//! `prometheus`), rebuilt byte for byte by `rocegate report`, the drain
//! actions against the suspects the report names, and a push to a real
//! `prometheus-pushgateway` on loopback.

use std::collections::BTreeSet;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command as StdCommand, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use assert_cmd::Command;

fn rocegate() -> Command {
    let mut c = Command::cargo_bin("rocegate").expect("binary is built");
    c.current_dir(env!("CARGO_MANIFEST_DIR"));
    c
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

struct Ran {
    _tmp: tempfile::TempDir,
    run: PathBuf,
    metrics: PathBuf,
    code: Option<i32>,
    stdout: String,
}

/// `rocegate run` into a fresh temporary directory with `--metrics-dir`.
fn run(inventory: Option<&str>) -> Ran {
    let tmp = tempfile::tempdir().unwrap();
    let (run, metrics) = (tmp.path().join("run"), tmp.path().join("m1"));
    let mut args = vec![
        "run".to_string(),
        "--progress".into(),
        "none".into(),
        "--out".into(),
        run.display().to_string(),
        "--metrics-dir".into(),
        metrics.display().to_string(),
    ];
    if let Some(i) = inventory {
        args.extend(["--inventory".into(), i.into()]);
    }
    let out = rocegate().args(&args).output().expect("rocegate runs");
    Ran {
        _tmp: tmp,
        run,
        metrics,
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned()
            + &String::from_utf8_lossy(&out.stderr),
    }
}

fn pod() -> &'static Ran {
    static R: OnceLock<Ran> = OnceLock::new();
    R.get_or_init(|| run(None))
}

fn defects() -> &'static Ran {
    static R: OnceLock<Ran> = OnceLock::new();
    R.get_or_init(|| run(Some("inventory/emulated-defects.yaml")))
}

fn on_path(tool: &str) -> bool {
    StdCommand::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// `promtool check metrics` on `text`: its verdict, when promtool is installed.
fn promtool(text: &str) -> Option<(bool, String)> {
    if !on_path("promtool") {
        eprintln!("skipped: promtool not found (Debian package prometheus; .ci/run installs it)");
        return None;
    }
    let mut c = StdCommand::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    c.stdin.take().unwrap().write_all(text.as_bytes()).unwrap();
    let o = c.wait_with_output().unwrap();
    Some((
        o.status.success(),
        String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr),
    ))
}

/// `rocegate report RUN --metrics-dir DIR [extra]`: exit code and output.
fn report(run: &Path, metrics: &Path, extra: &[&str]) -> (Option<i32>, String) {
    let mut args = vec![
        "report".to_string(),
        run.display().to_string(),
        "--metrics-dir".into(),
        metrics.display().to_string(),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    let out = rocegate()
        .args(&args)
        .output()
        .expect("rocegate report runs");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr),
    )
}

fn series<'a>(text: &'a str, name: &str) -> Vec<&'a str> {
    text.lines()
        .filter(|l| l.starts_with(&format!("{name}{{")))
        .collect()
}

#[test]
fn a_passing_run_writes_a_valid_prom_file_and_no_actions() {
    let r = pod();
    assert_eq!(r.code, Some(0), "{}", r.stdout);
    let prom = r.metrics.join("rocegate_emu_pod_acceptance.prom");
    let text = read(&prom);
    let names: Vec<_> = std::fs::read_dir(&r.metrics)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(
        names,
        vec!["rocegate_emu_pod_acceptance.prom"],
        "no temporary left"
    );
    assert_eq!(
        series(&text, "rocegate_gate"),
        vec!["rocegate_gate{fabric=\"emu-pod\",suite=\"acceptance\"} 1"]
    );
    let info = series(&text, "rocegate_run_info");
    assert_eq!(info.len(), 1);
    // The id the run locked the fabric and journaled its faults under:
    // `<UTC stamp>-<pid>`.
    let id = info[0]
        .split("run_id=\"")
        .nth(1)
        .and_then(|r| r.split('"').next())
        .unwrap_or_default();
    let (stamp, pid) = id.split_once('-').unwrap_or_default();
    assert!(
        stamp.starts_with("20") && stamp.ends_with('Z') && pid.parse::<u32>().is_ok(),
        "{}",
        info[0]
    );
    assert_eq!(series(&text, "rocegate_run_end_timestamp_seconds").len(), 1);
    // Per NIC, never per pair: 16 nodes × 8 NICs at most per test.
    let nic = series(&text, "rocegate_nic_result");
    assert!(!nic.is_empty());
    assert!(nic.iter().all(|l| !l.contains("<->")));
    let rail_bw = nic
        .iter()
        .filter(|l| l.contains("test=\"rail-bw\""))
        .count();
    assert_eq!(rail_bw, 128, "one series per NIC of the pod");
    assert_eq!(series(&text, "rocegate_fault_recovery_seconds").len(), 2);
    assert!(!series(&text, "rocegate_nic_increase").is_empty());
    assert!(text.contains(
        "rocegate_metrics_dropped_series_total{fabric=\"emu-pod\",suite=\"acceptance\"} 0\n"
    ));
    assert!(!r.run.join("actions.json").exists() && !r.run.join("actions.sh").exists());
    if let Some((ok, out)) = promtool(&text) {
        assert!(ok, "promtool check metrics: {out}");
    }
    // Rebuilt from the run directory alone: the same bytes.
    let m2 = r._tmp.path().join("m2");
    let (code, out) = report(&r.run, &m2, &[]);
    assert_eq!(code, Some(0), "{out}");
    assert_eq!(read(&m2.join("rocegate_emu_pod_acceptance.prom")), text);
}

/// The suspects summary.json names that actions.rs must drain: node and
/// NIC suspects at or above its threshold.
fn expected_drains(summary: &serde_json::Value) -> BTreeSet<(String, String)> {
    summary["suspects"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| matches!(s["kind"].as_str(), Some("node" | "nic")))
        .filter(|s| s["score"].as_f64().unwrap() >= rocegate::report::actions::MIN_SCORE)
        .map(|s| {
            let c = s["component"].as_str().unwrap().to_string();
            (c.split(':').next().unwrap().to_string(), c)
        })
        .collect()
}

#[test]
fn a_failed_gate_drains_exactly_the_node_and_nic_suspects() {
    let r = defects();
    assert_eq!(r.code, Some(1), "{}", r.stdout);
    let summary: serde_json::Value =
        serde_json::from_str(&read(&r.run.join("summary.json"))).unwrap();
    let actions: serde_json::Value =
        serde_json::from_str(&read(&r.run.join("actions.json"))).unwrap();
    let got: BTreeSet<(String, String)> = actions["drain"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|d| {
            let node = d["node"].as_str().unwrap().to_string();
            d["suspects"]
                .as_array()
                .unwrap()
                .iter()
                .map(move |s| (node.clone(), s.as_str().unwrap().to_string()))
        })
        .collect();
    assert_eq!(got, expected_drains(&summary));
    // The planted node and NIC defects (slow_node, nic_speed, firmware,
    // extra_pfc); the cables, uplink and leaves are tickets, not drains.
    let nodes: BTreeSet<&str> = got.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        nodes,
        BTreeSet::from(["gpu003", "gpu010", "gpu015", "gpu016"])
    );
    // No node drained on error verdicts alone.
    let records: Vec<serde_json::Value> = read(&r.run.join("results.jsonl"))
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let errors: BTreeSet<&str> = records
        .iter()
        .filter(|v| v["event"] == "verdict" && v["verdict"] == "error")
        .filter_map(|v| v["component"].as_str())
        .collect();
    for (_, s) in &got {
        let results = summary["suspects"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["component"] == s.as_str())
            .unwrap()["results"]
            .as_array()
            .unwrap()
            .clone();
        assert!(results
            .iter()
            .any(|x| !errors.contains(x["component"].as_str().unwrap())));
    }
    // Every suspect has a ticket; the script drains the same nodes.
    assert_eq!(
        actions["tickets"].as_array().unwrap().len(),
        summary["suspects"].as_array().unwrap().len()
    );
    let sh = read(&r.run.join("actions.sh"));
    assert!(sh.starts_with("#!/bin/sh\n") && sh.contains("\nset -eu\n"));
    let drained: BTreeSet<String> = sh
        .lines()
        .filter_map(|l| l.trim().strip_prefix("scontrol update nodename="))
        .map(|l| l.split(' ').next().unwrap().to_string())
        .collect();
    assert_eq!(drained, nodes.iter().map(|n| n.to_string()).collect());
    for l in sh.lines().filter(|l| l.contains("scontrol update")) {
        let words = shlex::split(l.trim()).expect("the line is valid sh");
        let reason = words.last().unwrap().strip_prefix("reason=").unwrap();
        assert!(reason.len() <= rocegate::report::actions::SLURM_REASON_MAX);
        assert!(reason.starts_with("rocegate 20"), "{reason}");
    }
    let o = StdCommand::new("sh")
        .arg("-n")
        .arg(r.run.join("actions.sh"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));

    let text = read(&r.metrics.join("rocegate_emu_pod_defects_acceptance.prom"));
    assert_eq!(
        series(&text, "rocegate_gate"),
        vec!["rocegate_gate{fabric=\"emu-pod-defects\",suite=\"acceptance\"} 0"]
    );
    assert!(text.contains("rocegate_suspect_score{fabric=\"emu-pod-defects\",suite=\"acceptance\",kind=\"node\",component=\"gpu010\"}"));
    if let Some((ok, out)) = promtool(&text) {
        assert!(ok, "promtool check metrics: {out}");
    }
    // `rocegate report` rebuilds the same actions and the same metrics.
    let (json, sh) = (read(&r.run.join("actions.json")), sh);
    let m2 = r._tmp.path().join("m2");
    let (code, out) = report(&r.run, &m2, &[]);
    assert_eq!(code, Some(1), "{out}");
    assert_eq!(
        read(&m2.join("rocegate_emu_pod_defects_acceptance.prom")),
        text
    );
    assert_eq!(read(&r.run.join("actions.json")), json);
    assert_eq!(read(&r.run.join("actions.sh")), sh);
}

#[test]
fn a_node_that_only_errored_is_never_drained() {
    let r = defects();
    assert_eq!(r.code, Some(1), "{}", r.stdout);
    // The defects run again, as if gpu001 (healthy) had been unreachable in
    // every perftest step: its results become errors when re-judged.
    let tmp = tempfile::tempdir().unwrap();
    let copy = tmp.path().join("run");
    let cp = StdCommand::new("cp")
        .arg("-r")
        .arg(&r.run)
        .arg(&copy)
        .status()
        .unwrap();
    assert!(cp.success());
    let mut touched = 0;
    let lines: Vec<String> = read(&copy.join("results.jsonl"))
        .lines()
        .map(|l| {
            let mut v: serde_json::Value = serde_json::from_str(l).unwrap();
            let perftest = ["rail-bw", "mesh-bw", "rail-lat", "cross-leaf-bw"];
            if v["event"] == "sample"
                && perftest.contains(&v["test"].as_str().unwrap())
                && v["component"].as_str().unwrap().contains("gpu001:")
            {
                touched += 1;
                v["value"] = serde_json::Value::Null;
                v["failure"] = serde_json::json!({
                    "kind": "unreachable",
                    "class": "infrastructure",
                    "message": "ssh: connect to host gpu001 port 22: No route to host"
                });
            }
            serde_json::to_string(&v).unwrap()
        })
        .collect();
    assert!(touched > 0);
    std::fs::write(copy.join("results.jsonl"), lines.join("\n") + "\n").unwrap();
    let (code, out) = report(&copy, &tmp.path().join("m"), &[]);
    assert_eq!(code, Some(1), "{out}");
    let summary: serde_json::Value =
        serde_json::from_str(&read(&copy.join("summary.json"))).unwrap();
    assert!(summary["counts"]["error"].as_u64().unwrap() > 0, "{out}");
    let actions: serde_json::Value =
        serde_json::from_str(&read(&copy.join("actions.json"))).unwrap();
    let nodes: BTreeSet<&str> = actions["drain"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["node"].as_str().unwrap())
        .collect();
    assert!(!nodes.contains("gpu001"), "{nodes:?}");
    assert!(!read(&copy.join("actions.sh")).contains("gpu001"));
    let expected: BTreeSet<String> = expected_drains(&summary)
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    assert_eq!(
        nodes.iter().map(|n| n.to_string()).collect::<BTreeSet<_>>(),
        expected
    );
}

/// A free loopback port: bound, read, released.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn http_get(port: u16, path: &str) -> Option<String> {
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    write!(s, "GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").ok()?;
    let mut body = String::new();
    s.read_to_string(&mut body).ok()?;
    Some(body)
}

struct Killed(std::process::Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn metrics_push_to_a_real_pushgateway_and_a_failed_push_keeps_the_gate() {
    if !on_path("prometheus-pushgateway") {
        eprintln!("skipped: prometheus-pushgateway not found (Debian package prometheus-pushgateway; .ci/run installs it)");
        return;
    }
    let r = pod();
    assert_eq!(r.code, Some(0), "{}", r.stdout);
    let port = free_port();
    let _gw = Killed(
        StdCommand::new("prometheus-pushgateway")
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let deadline = Instant::now() + Duration::from_secs(30);
    while http_get(port, "/-/ready").is_none_or(|b| !b.contains(" 200 ")) {
        assert!(
            Instant::now() < deadline,
            "the pushgateway did not listen on {port}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let url = format!("http://127.0.0.1:{port}");
    let m3 = r._tmp.path().join("m3");
    let (code, out) = report(&r.run, &m3, &["--pushgateway", &url]);
    assert_eq!(code, Some(0), "{out}");
    assert!(
        out.contains(&format!(
            "{url}/metrics/job/rocegate/fabric/emu-pod/suite/acceptance"
        )),
        "{out}"
    );
    let body = http_get(port, "/metrics").unwrap();
    let gate: Vec<&str> = body
        .lines()
        .filter(|l| l.starts_with("rocegate_gate{"))
        .collect();
    assert_eq!(gate.len(), 1, "{body}");
    for want in [
        "fabric=\"emu-pod\"",
        "suite=\"acceptance\"",
        "job=\"rocegate\"",
    ] {
        assert!(gate[0].contains(want), "{}", gate[0]);
    }
    assert!(gate[0].ends_with(" 1"), "{}", gate[0]);
    // Every series the file holds came back.
    let file = read(&m3.join("rocegate_emu_pod_acceptance.prom"));
    let pushed = file.lines().filter(|l| !l.starts_with('#')).count();
    let back = body.lines().filter(|l| l.starts_with("rocegate_")).count();
    assert_eq!(back, pushed);

    // Nobody listening: the error names the URL, the gate is unchanged.
    let dead = format!("http://127.0.0.1:{}", free_port());
    let (code, out) = report(&r.run, &m3, &["--pushgateway", &dead]);
    assert_eq!(code, Some(0), "{out}");
    assert!(
        out.contains(&format!(
            "pushgateway PUT {dead}/metrics/job/rocegate/fabric/emu-pod/suite/acceptance: "
        )),
        "{out}"
    );
}
