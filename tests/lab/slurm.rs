//! The lab over its real Slurm (`lab.sh slurm-up`: munged, slurmctld, a
//! slurmd in each host): the lab suite through `transport: {slurm: …}`
//! gives the verdicts it gives over ssh; a run SIGKILLed mid-round leaves
//! no step, no allocation and no traffic; `--apply-drain` drains exactly
//! the planted suspect (undone by the test); a drained node is an error
//! naming it and its reason.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::{lab, lab_processes, rocegate, root, run, sh, spawn, test_verdicts};

const CONF: &str = "/run/rocegate-lab/slurm/slurm.conf";

/// Why the lab's Slurm cannot run here, if it cannot.
pub fn missing() -> Option<String> {
    let need = [
        ("/usr/sbin/slurmctld", "slurmctld"),
        ("/usr/sbin/slurmd", "slurmd"),
        ("/usr/bin/srun", "slurm-client"),
        ("/usr/sbin/munged", "munge"),
    ];
    let absent: Vec<String> = need
        .iter()
        .filter(|(p, _)| !Path::new(p).exists())
        .map(|(p, pkg)| format!("{p} (apt-get install {pkg})"))
        .collect();
    (!absent.is_empty()).then(|| format!("not installed: {}", absent.join(", ")))
}

fn slurm(prog: &str, args: &[&str]) -> String {
    let o = sh(Command::new(prog).env("SLURM_CONF", CONF).args(args));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// `(node, state, reason)` of every lab host.
fn nodes() -> Vec<(String, String, String)> {
    slurm("sinfo", &["--noheader", "--Node", "--format=%N|%T|%E"])
        .lines()
        .filter_map(|l| {
            let mut f = l.splitn(3, '|');
            Some((
                f.next()?.to_string(),
                f.next()?.to_string(),
                f.next().unwrap_or("").to_string(),
            ))
        })
        .collect()
}

/// Puts every lab host back in service, whatever a check did.
struct Resume;

impl Drop for Resume {
    fn drop(&mut self) {
        for h in super::HOSTS {
            let _ = Command::new("scontrol")
                .env("SLURM_CONF", CONF)
                .args(["update", &format!("NodeName={h}"), "State=RESUME"])
                .output();
        }
        let _ = Command::new(root().join(super::LAB))
            .args(["shape", "host2", "default"])
            .output();
    }
}

fn verdict_set(recs: &[Value]) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = test_verdicts(recs)
        .iter()
        .map(|v| {
            (
                v["component"].as_str().unwrap_or("").to_string(),
                v["verdict"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    v.sort();
    v
}

fn agents_left() -> Vec<String> {
    super::HOSTS
        .iter()
        .filter_map(|h| {
            let o = sh(Command::new(root().join(super::LAB)).args([
                "exec",
                h,
                "sh",
                "-c",
                "ls /run | grep rocegate-agent-",
            ]));
            let t = String::from_utf8_lossy(&o.stdout).trim().to_string();
            (!t.is_empty()).then(|| format!("{h}: {t}"))
        })
        .collect()
}

/// The lab suite over Slurm and over ssh: the same verdicts, every
/// pair measured through a step; afterwards no job, no step, no agent.
pub fn the_suite_over_slurm_gives_the_ssh_verdicts(tmp: &Path, suite: &Path) {
    let (code_ssh, ssh, text) = run(
        &tmp.join("ssh-ref"),
        &root().join("inventory/lab.yaml"),
        suite,
        &[],
    );
    assert_eq!(code_ssh, 0, "{text}");
    let inv = root().join("inventory/lab-slurm.yaml");
    let (code, recs, text) = run(&tmp.join("slurm"), &inv, suite, &[]);
    assert_eq!(code, 0, "{text}");
    assert_eq!(verdict_set(&recs), verdict_set(&ssh), "{text}");
    assert_eq!(verdict_set(&recs).len(), 6, "six host pairs: {text}");
    let started = &recs[0];
    assert!(
        started["transport"]
            .as_str()
            .unwrap_or("")
            .starts_with("slurm (srun"),
        "{started}"
    );
    for v in test_verdicts(&recs) {
        let gbps = v["value"].as_f64().unwrap();
        assert!((0.9..=1.1).contains(&gbps), "{v}");
    }
    assert_eq!(
        slurm("squeue", &["--noheader"]).trim(),
        "",
        "the allocation is given back"
    );
    assert_eq!(
        agents_left(),
        Vec::<String>::new(),
        "the agent is removed from the nodes"
    );
    eprintln!("lab: the suite over Slurm gave the ssh verdicts");
}

/// SIGKILL in the middle of a round: the step's input ends, every agent
/// kills its iperf3, the step ends, and the allocation's holder ends.
pub fn sigkill_over_slurm_leaves_no_step(tmp: &Path) {
    let inv = root().join("inventory/lab-slurm.yaml");
    let mut child = spawn(
        rocegate()
            .args([
                "run",
                "--progress",
                "none",
                "-s",
                "suites/lab.yaml",
                "--out",
            ])
            .arg(tmp.join("killed"))
            .arg("-i")
            .arg(&inv),
    );
    let deadline = Instant::now() + Duration::from_secs(60);
    while slurm("squeue", &["--noheader", "--steps"])
        .trim()
        .is_empty()
        || lab_processes("iperf3 -c").is_empty()
    {
        assert!(
            Instant::now() < deadline,
            "no step with traffic within 60 s"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    super::signal(&child, libc::SIGKILL);
    let _ = child.wait();
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let steps = slurm("squeue", &["--noheader", "--steps"]);
        let jobs = slurm("squeue", &["--noheader"]);
        let left = lab_processes("iperf3");
        let agents = lab_processes("slurm-task");
        if steps.trim().is_empty() && jobs.trim().is_empty() && left.is_empty() && agents.is_empty()
        {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "30 s after SIGKILL: steps {steps:?}, jobs {jobs:?}, iperf3 {left:?}, agents {agents:?}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    // sacct needs slurmdbd for steps; the lab's jobcomp record says the job ended.
    let done = slurm("sacct", &["-c", "--noheader", "-o", "JobID,JobName,State"]);
    eprintln!(
        "lab: SIGKILL over Slurm left no step, no job, no traffic; jobcomp: {}",
        done.trim().replace('\n', "; ")
    );
}

/// A half-speed host link: `--apply-drain` drains exactly that host with a
/// reason naming the run; the next run errs on it naming Slurm's state and
/// reason, and measures everything else; the test puts it back.
pub fn apply_drain_drains_the_suspect_and_a_drained_node_errs(tmp: &Path, suite: &Path) {
    let _resume = Resume;
    let inv = root().join("inventory/lab-slurm.yaml");
    lab(&["shape", "host2", "500mbit"]);
    let (code, _recs, text) = run(&tmp.join("drain"), &inv, suite, &["--apply-drain"]);
    lab(&["shape", "host2", "default"]);
    assert_eq!(code, 1, "{text}");
    assert!(
        text.contains("apply-drain: drained host2 as root"),
        "{text}"
    );
    let drained = std::fs::read_to_string(tmp.join("drain/drained.json")).unwrap();
    let d: Value = serde_json::from_str(&drained).unwrap();
    let list = d["drained"].as_array().unwrap();
    assert_eq!(list.len(), 1, "only the planted suspect: {drained}");
    assert_eq!(list[0]["node"], "host2");
    let states = nodes();
    for (node, state, reason) in &states {
        if node == "host2" {
            assert!(state.contains("drain"), "{states:?}");
            assert!(
                reason.starts_with("rocegate ") && reason.contains("host2"),
                "{reason}"
            );
        } else {
            assert_eq!(state, "idle", "{states:?}");
        }
    }
    // Drained: an error naming the node, Slurm's state and the reason.
    let (code, recs, text) = run(&tmp.join("drained"), &inv, suite, &[]);
    assert_eq!(code, 1, "{text}");
    for v in test_verdicts(&recs) {
        let comp = v["component"].as_str().unwrap();
        if comp.contains("host2") {
            assert_eq!(v["verdict"], "error", "{v}");
            let m = v["message"].as_str().unwrap_or("");
            assert!(
                m.contains("host2: Slurm reports it drained") && m.contains("reason: rocegate"),
                "{m}"
            );
        } else {
            assert_eq!(v["verdict"], "pass", "{v}");
        }
    }
    drop(_resume);
    let deadline = Instant::now() + Duration::from_secs(20);
    while nodes().iter().any(|(_, s, _)| s != "idle") {
        assert!(Instant::now() < deadline, "not resumed: {:?}", nodes());
        std::thread::sleep(Duration::from_millis(200));
    }
    eprintln!(
        "lab: --apply-drain drained host2 only; drained, it was an error naming Slurm's reason"
    );
}
