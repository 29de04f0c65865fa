//! Faults through the CLI without the lab: on the emulated pod (recovery
//! read from the workloads' time series, nothing journaled), the
//! interlocks that refuse before anything is touched, and `rocegate
//! recover` healing a journal through the `local` transport.

use std::path::Path;

use assert_cmd::Command;
use serde_json::Value;

fn rocegate(state: &Path) -> Command {
    let mut c = Command::cargo_bin("rocegate").expect("binary is built");
    c.current_dir(env!("CARGO_MANIFEST_DIR"));
    // The default journal lives under the user's state directory: point it
    // at the test's own.
    c.env("XDG_STATE_HOME", state);
    c
}

fn records(out: &Path) -> Vec<Value> {
    std::fs::read_to_string(out.join("results.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn fault_verdicts(recs: &[Value]) -> Vec<&Value> {
    recs.iter()
        .filter(|r| r["event"] == "verdict" && r["kind"] == "fault")
        .collect()
}

/// The acceptance suite's uplink flap and leaf reset on the healthy
/// emulated pod: both survived, with the measured recovery in the
/// message, every later test passing, and no journal written.
#[test]
fn the_healthy_pod_survives_the_acceptance_faults() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("run");
    let state = tmp.path().join("state");
    let o = rocegate(&state)
        .args(["run", "--progress", "none", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    let recs = records(&out);
    let faults = fault_verdicts(&recs);
    let names: Vec<&str> = faults.iter().map(|v| v["test"].as_str().unwrap()).collect();
    assert_eq!(names, ["link-flap", "leaf-reset"]);
    for v in &faults {
        let m = v["message"].as_str().unwrap();
        assert_eq!(v["verdict"], "pass", "{m}");
        assert!(m.contains("recovery: back to"), "{m}");
        assert_eq!(v["unit"], "s", "{v}");
    }
    // The reset stopped routing for 5 s: traffic cannot be back sooner.
    let reset = faults[1];
    let back: f64 = reset["message"]
        .as_str()
        .unwrap()
        .split("pre-fault level ")
        .nth(1)
        .and_then(|r| r.split(" s after").next())
        .and_then(|s| s.parse().ok())
        .unwrap();
    assert!((5.0..=15.0).contains(&back), "{reset}");
    // Every test after the faults passed.
    // The faults run last (suites/acceptance.yaml says why); every
    // traffic test of the healthy pod passes.
    let traffic: Vec<&Value> = recs
        .iter()
        .filter(|r| r["event"] == "verdict" && r["kind"] != "fault")
        .collect();
    assert!(traffic.len() > 100, "{}", traffic.len());
    assert!(traffic
        .iter()
        .all(|v| v["verdict"] == "pass" || v["verdict"] == "warn"));
    // Emulated faults never touch a journal, so they never block a run,
    // and there is nothing for `recover` to do.
    assert!(!state.exists(), "an emulated run wrote {}", state.display());
    let o = rocegate(&state).arg("recover").output().unwrap();
    assert_eq!(o.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&o.stdout).contains("nothing to recover"));
    assert!(!state.exists(), "recover wrote {}", state.display());
}

const STRICT: &str = "\
suite: {name: strict}
tests:
  - name: allreduce
    nccl: {tool: all_reduce_perf, min_bytes: 8G, max_bytes: 8G, gpus_per_node: 8}
    pattern: all-nodes
    timeout: 600s
    expect: {min: 30}
  - name: reset
    fault:
      leaf_reset: {switch: r0-leaf2, mode: routing_restart}
      during: allreduce
      at: 20s
      for: 5s
    expect: {workload: completes, recovers_within: 2s, min_fraction: 0.9}
";

/// A recovery limit the pod cannot meet fails, and the JUnit message
/// carries the measured recovery time and the limit.
#[test]
fn an_unmet_recovery_limit_fails_with_the_measured_time_in_junit() {
    let tmp = tempfile::tempdir().unwrap();
    let suite = tmp.path().join("strict.yaml");
    std::fs::write(&suite, STRICT).unwrap();
    let out = tmp.path().join("run");
    let o = rocegate(tmp.path())
        .args(["run", "--progress", "none", "-s"])
        .arg(&suite)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    let recs = records(&out);
    let v = fault_verdicts(&recs)[0];
    assert_eq!(v["verdict"], "fail", "{v}");
    let m = v["message"].as_str().unwrap();
    let secs: f64 = m
        .split("recovery: ")
        .nth(1)
        .and_then(|r| r.split(" s to get back").next())
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no measured time: {m}"));
    assert!(secs >= 5.0, "a 5 s outage cannot recover in {secs} s: {m}");
    let value = v["value"].as_f64().unwrap();
    assert!(
        (value - secs).abs() < 0.051,
        "the value is the recovery time: {v}"
    );
    let junit = std::fs::read_to_string(out.join("junit.xml")).unwrap();
    assert!(
        junit.contains(&format!("recovery: {secs:.1} s to get back to 90 %")),
        "{junit}"
    );
    assert!(junit.contains("(limit 2.0 s"), "{junit}");
}

/// The emulated pod's inventory with `from` replaced by `to`, written to `dir`.
fn emulated_with(dir: &Path, from: &str, to: &str) -> std::path::PathBuf {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("inventory/emulated.yaml"),
    )
    .unwrap()
    .replace(from, to);
    let p = dir.join("inventory.yaml");
    std::fs::write(&p, text).unwrap();
    p
}

/// Production refuses disruptive faults without the flag, before any run
/// directory exists; `plan` shows what each fault would isolate; with the
/// flag the run goes ahead.
#[test]
fn production_refuses_faults_without_the_flag_and_plan_shows_the_blast_radius() {
    let tmp = tempfile::tempdir().unwrap();
    let inv = emulated_with(tmp.path(), "environment: lab", "environment: production");
    let out = tmp.path().join("run");
    let o = rocegate(tmp.path())
        .args(["run", "--only", "link-flap", "-i"])
        .arg(&inv)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("environment: production") && err.contains("--allow-disruptive"),
        "{err}"
    );
    assert!(!out.exists(), "refused, yet it created {}", out.display());

    let o = rocegate(tmp.path())
        .args(["plan", "-i"])
        .arg(&inv)
        .output()
        .unwrap();
    let plan = String::from_utf8_lossy(&o.stdout);
    assert!(plan.contains("disruptive steps:"), "{plan}");
    assert!(
        plan.contains("leaf-reset: leaf_reset (routing_restart) on r0-leaf1 during allreduce; isolates 8 NIC(s)"),
        "{plan}"
    );
    assert!(
        plan.contains("link-flap: link_flap on gpu005:mlx5_0 during allreduce; isolates 1 NIC(s)"),
        "{plan}"
    );

    let o = rocegate(tmp.path())
        .args([
            "run",
            "--progress",
            "none",
            "--only",
            "link-flap",
            "--allow-disruptive",
            "-i",
        ])
        .arg(&inv)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// A fault a platform cannot guard (a reload of a SONiC leaf: nothing arms
/// a timer over a reboot, nothing undoes it) is refused before anything
/// runs, naming the switch and what to do instead.
#[test]
fn a_fault_the_platform_cannot_guard_is_refused_before_anything_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let inv = emulated_with(tmp.path(), "driver: linux", "driver: sonic");
    let suite = tmp.path().join("suite.yaml");
    std::fs::write(
        &suite,
        std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("suites/acceptance.yaml"),
        )
        .unwrap()
        .replace("mode: routing_restart", "mode: reload"),
    )
    .unwrap();
    let o = rocegate(tmp.path())
        .args(["run", "--only", "leaf-reset", "-i"])
        .arg(&inv)
        .arg("-s")
        .arg(&suite)
        .arg("--out")
        .arg(tmp.path().join("run"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("switch r0-leaf") && err.contains("reload is refused on sonic"),
        "{err}"
    );
    assert!(!tmp.path().join("run").exists(), "nothing ran");
}

/// A fault an API platform cannot guard (a reload over eAPI: no commit
/// timer covers it, nothing undoes it) is refused by `plan`, before
/// anything is touched, naming the switch and what to use instead.
#[test]
fn a_reload_on_an_eos_leaf_is_refused_at_plan_time() {
    let tmp = tempfile::tempdir().unwrap();
    let inv = emulated_with(
        tmp.path(),
        "driver: linux",
        "driver: eos\n  credentials: {env: ROCEGATE_TEST_EAPI}\n  api: {user: rocegate}",
    );
    let suite = tmp.path().join("suite.yaml");
    std::fs::write(
        &suite,
        std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("suites/acceptance.yaml"),
        )
        .unwrap()
        .replace("mode: routing_restart", "mode: reload"),
    )
    .unwrap();
    let o = rocegate(tmp.path())
        .args(["plan", "--only", "leaf-reset", "-i"])
        .arg(&inv)
        .arg("-s")
        .arg(&suite)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("a reload over eAPI has no dead-man")
            && err.contains("use mode ports_down or routing_restart on eos"),
        "{err}"
    );
    assert!(err.contains("switch r0-leaf"), "{err}");
}

const LOCAL: &str = "\
fabric:
  name: loopback-faults
  environment: lab
  rails: 1
  roce: {pfc_priority: 3, dscp_roce: 26, dscp_cnp: 48, dcqcn: false, mtu: 4096}
transport: local
nodes:
  - hosts: lo[1-2]
    nics:
      - {device: lo, netdev: lo, gid_index: 0, rail: 0, speed_gbps: 100, address: '127.0.0.{index}'}
";

/// `recover` runs each open fault's undo through the inventory's transport,
/// newest first, marks it healed, and a run is refused until it has.
#[test]
fn recover_heals_what_the_journal_holds_open() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let inv = d.join("inv.yaml");
    std::fs::write(&inv, LOCAL).unwrap();
    let marks = d.join("marks");
    let journal = d.join("j.jsonl");
    let open = |id: &str, undo: &str| {
        serde_json::json!({
            "event": "opened", "id": id, "run": "r1", "pid": 1, "at": "2026-11-22T02:00:00Z",
            "fabric": "loopback-faults", "test": "t", "host": "lo1", "what": format!("lo1: {id}"),
            "prior": "up", "undo": ["sh", "-c", undo]
        })
        .to_string()
    };
    let lines = [
        open("a", &format!("echo a >> {}", marks.display())),
        open("b", &format!("echo b >> {}", marks.display())),
        serde_json::json!({"event": "healed", "id": "a", "at": "x", "by": "run"}).to_string(),
        open("c", &format!("echo c >> {}", marks.display())),
    ];
    std::fs::write(&journal, lines.join("\n") + "\n").unwrap();

    // A run on that fabric refuses, and says how to fix it.
    let suite = d.join("s.yaml");
    std::fs::write(
        &suite,
        "suite: {name: s}\ntests:\n  - {name: t, iperf: {duration: 1s}, pattern: rail-pairs, expect: {min: 0.01}}\n",
    )
    .unwrap();
    let o = rocegate(d)
        .args(["run", "-i"])
        .arg(&inv)
        .arg("-s")
        .arg(&suite)
        .arg("--journal")
        .arg(&journal)
        .arg("--out")
        .arg(d.join("run"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("2 fault(s) on fabric loopback-faults are still open"),
        "{err}"
    );
    assert!(err.contains("rocegate recover"), "{err}");

    let o = rocegate(d)
        .args(["recover", "-i"])
        .arg(&inv)
        .arg("--journal")
        .arg(&journal)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{said}");
    // Newest first; the healed one not again.
    assert_eq!(std::fs::read_to_string(&marks).unwrap(), "c\nb\n");
    assert!(said.contains("all 2 healed"), "{said}");
    let healed = std::fs::read_to_string(&journal).unwrap();
    assert_eq!(healed.matches("\"by\":\"recover\"").count(), 2, "{healed}");

    let o = rocegate(d)
        .args(["recover", "-i"])
        .arg(&inv)
        .arg("--journal")
        .arg(&journal)
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&o.stdout).contains("no open faults"));

    // An undo that keeps failing stays open, and recover says so.
    std::fs::write(&journal, open("d", "echo nope >&2; exit 3") + "\n").unwrap();
    let o = rocegate(d)
        .args(["recover", "-i"])
        .arg(&inv)
        .arg("--journal")
        .arg(&journal)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(3), "{said}");
    assert!(said.contains("OPEN     d lo1: d: exit 3: nope"), "{said}");
}

const SPINE_AND_ROUTE: &str = "\
suite: {name: spine-and-route}
tests:
  - name: cross-bw
    perftest: {tool: ib_write_bw, size: 1M, duration: 12s, qps: 8}
    pattern: cross-leaf
    rails: [0]
    expect: {min_pct_of_line_rate: 50}
  - name: spine-loss
    fault: {spine_loss: {switch: {select: spine, position: first}, mode: ports_down}, during: cross-bw, at: 4s, for: 3s}
    expect: {workload: completes, recovers_within: 8s, min_fraction: 0.9}
  - name: route-change
    fault: {route_change: {link: r0-leaf1:swp9}, during: cross-bw, at: 4s, for: 3s}
    expect: {workload: completes, recovers_within: 8s, min_fraction: 0.9}
";

/// A spine lost and one ECMP member withdrawn on the emulated pod: every
/// flow completes on the surviving paths, fewer paths cost throughput for
/// as long as the fault lasts (it cannot be back sooner), the spine's
/// links count their link-downs and the withdrawn link none.
#[test]
fn a_lost_spine_and_a_withdrawn_route_are_ridden_out_and_healed() {
    let tmp = tempfile::tempdir().unwrap();
    let suite = tmp.path().join("s.yaml");
    std::fs::write(&suite, SPINE_AND_ROUTE).unwrap();
    let o = rocegate(tmp.path())
        .arg("plan")
        .arg("-s")
        .arg(&suite)
        .output()
        .unwrap();
    let plan = String::from_utf8_lossy(&o.stdout);
    assert!(
        plan.contains("spine-loss: spine_loss (ports_down) on spine1 during cross-bw; isolates no NIC; 32 leaf-spine link(s) down"),
        "{plan}"
    );
    assert!(
        plan.contains("route-change: route_change on r0-leaf1:swp9 during cross-bw; isolates no NIC; 1 leaf-spine link(s) withdrawn from ECMP (left up)"),
        "{plan}"
    );
    assert!(
        plan.contains(
            "tests[1].fault.spine_loss.switch: {select: spine, position: first} -> spine1"
        ),
        "{plan}"
    );
    let out = tmp.path().join("run");
    let o = rocegate(tmp.path())
        .args(["run", "--progress", "none", "-s"])
        .arg(&suite)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    let recs = records(&out);
    let faults = fault_verdicts(&recs);
    let names: Vec<&str> = faults
        .iter()
        .map(|v| v["message"].as_str().unwrap().split(':').next().unwrap())
        .collect();
    assert_eq!(
        names,
        ["spine loss spine1 (ports_down)", "route change r0-leaf1"]
    );
    assert!(faults[1]["message"]
        .as_str()
        .unwrap()
        .starts_with("route change r0-leaf1:swp9 (session to spine1:swp1)"));
    for v in &faults {
        let m = v["message"].as_str().unwrap();
        assert_eq!(v["verdict"], "pass", "{m}");
        assert!(m.contains("8 of 8 steps completed"), "{m}");
        // Fewer paths collide more: under 90 % until the 3 s fault ends.
        let back = v["value"].as_f64().unwrap();
        assert!((3.0..=8.0).contains(&back), "{m}");
    }
    // Link-downs: on spine1's links (both ends) for the spine loss; none at
    // all for the route change, whose link stayed up.
    let downs = |test: &str| -> Vec<String> {
        recs.iter()
            .filter(|r| r["event"] == "ledger" && r["test"] == test)
            .filter(|r| {
                r["changes"].as_array().is_some_and(|c| {
                    c.iter()
                        .any(|d| d["canonical"] == "link_down" && d["vendor"] != "link_downed")
                })
            })
            .map(|r| {
                format!(
                    "{}:{}",
                    r["host"].as_str().unwrap(),
                    r["device"].as_str().unwrap()
                )
            })
            .collect()
    };
    let spine = downs("spine-loss");
    assert!(spine.contains(&"r0-leaf1:swp9".to_string()), "{spine:?}");
    assert!(spine.contains(&"spine1:swp1".to_string()), "{spine:?}");
    assert!(
        spine.iter().all(|d| d.starts_with("spine1:")
            || [
                "r0-leaf1:swp9",
                "r0-leaf1:swp10",
                "r0-leaf2:swp9",
                "r0-leaf2:swp10"
            ]
            .contains(&d.as_str())),
        "{spine:?}"
    );
    assert_eq!(downs("route-change"), Vec::<String>::new());
    assert!(!recs
        .iter()
        .any(|r| r["event"] == "finding" && r["check"] == "counters.link_down"));
}
