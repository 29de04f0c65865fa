//! Congestion on the emulated pod, read the way the harness reads a real
//! one: eight senders into one 400G NIC with the counters sampled every
//! microsecond from the moment traffic starts, through `rocegate run`, and
//! the time series rebuilt from the `counters` records of results.jsonl.
//!
//! - With DCQCN and the profile's ECN thresholds, ECN marks and CNPs rise
//!   before any PFC pause.
//! - With ECN thresholds above the PFC threshold, pauses come first.
//! - With PFC off on the RoCE priority, drops and out-of-sequence packets
//!   appear instead of pauses, and bandwidth falls.

use std::collections::BTreeMap;
use std::path::Path;

use assert_cmd::Command;
use rocegate::counters::delta::first_rise;
use rocegate::counters::{Canonical, Snapshot};

const SUITE: &str = "suite:
  name: incast
tests:
  - name: incast
    perftest:
      tool: ib_write_bw
      size: 1M
      duration: 5s
    pattern:
      incast:
        senders: 8
        samples: 1
    rails: [6]
    nodes: gpu[001-009]
    counters:
      every: 1us
      from: 2.05s
      samples: 40
  - name: incast-steady
    perftest:
      tool: ib_write_bw
      size: 1M
      duration: 5s
    pattern:
      incast:
        senders: 8
        samples: 1
    rails: [6]
    nodes: gpu[001-009]
    counters:
      every: 1s
      samples: 9
";

fn rocegate() -> Command {
    let mut c = Command::cargo_bin("rocegate").expect("binary is built");
    c.current_dir(env!("CARGO_MANIFEST_DIR"));
    c
}

struct Run {
    /// The sampled series of the first test, per (host, device, source).
    onset: BTreeMap<(String, String, String), Vec<Snapshot>>,
    /// Same for the steady-state test.
    steady: BTreeMap<(String, String, String), Vec<Snapshot>>,
    /// Bandwidth of the steady-state incast, Gb/s.
    bw: f64,
}

fn run(dir: &Path, name: &str, defects: &str) -> Run {
    let out = rocegate()
        .args(["inventory", "generate", "--name", name])
        .output()
        .expect("rocegate runs");
    assert!(out.status.success());
    let inv = dir.join(format!("{name}.yaml"));
    let text = String::from_utf8(out.stdout).unwrap() + defects;
    std::fs::write(&inv, text).unwrap();
    let suite = dir.join("incast.yaml");
    std::fs::write(&suite, SUITE).unwrap();
    let run_dir = dir.join(format!("run-{name}"));
    let out = rocegate()
        .args(["run", "--progress", "none", "--inventory"])
        .arg(&inv)
        .arg("--suite")
        .arg(&suite)
        .arg("--out")
        .arg(&run_dir)
        .output()
        .expect("rocegate runs");
    let results = std::fs::read_to_string(run_dir.join("results.jsonl"))
        .unwrap_or_else(|e| panic!("{name}: {e}: {}", String::from_utf8_lossy(&out.stderr)));
    let mut r = Run {
        onset: BTreeMap::new(),
        steady: BTreeMap::new(),
        bw: 0.0,
    };
    for line in results.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        match v["event"].as_str() {
            Some("counters") => {
                assert!(v.get("error").is_none(), "{v}");
                let s: Snapshot = serde_json::from_value(v["snapshot"].clone()).unwrap();
                let key = (s.host.clone(), s.device.clone(), s.source.clone());
                let series = if v["test"] == "incast" {
                    &mut r.onset
                } else {
                    &mut r.steady
                };
                series.entry(key).or_default().push(s);
            }
            Some("verdict") if v["test"] == "incast-steady" && v["kind"] != "counters" => {
                r.bw = v["value"].as_f64().expect("a bandwidth");
            }
            _ => {}
        }
    }
    assert!(!r.onset.is_empty() && r.bw > 0.0, "{name}: nothing sampled");
    r
}

/// The earliest time any device's `canonical` rose, on priority `prio`.
fn first(
    series: &BTreeMap<(String, String, String), Vec<Snapshot>>,
    c: Canonical,
    prio: Option<u8>,
) -> Option<f64> {
    series
        .values()
        .filter_map(|s| first_rise(s, c, prio))
        .min_by(f64::total_cmp)
}

/// How much `canonical` grew over the whole series, summed over devices.
fn growth(
    series: &BTreeMap<(String, String, String), Vec<Snapshot>>,
    c: Canonical,
    prio: Option<u8>,
) -> u64 {
    let sum = |s: &Snapshot| -> u64 {
        s.readings
            .iter()
            .filter(|r| r.canonical == c && r.priority == prio)
            .map(|r| r.value)
            .sum()
    };
    series
        .values()
        .map(|s| sum(&s[s.len() - 1]).saturating_sub(sum(&s[0])))
        .sum()
}

#[test]
fn ecn_and_cnps_come_before_pauses_unless_thresholds_or_pfc_say_otherwise() {
    let dir = tempfile::tempdir().unwrap();
    let p3 = Some(3);
    let healthy = run(dir.path(), "healthy", "");
    let marks = first(&healthy.onset, Canonical::EcnMarked, None).expect("the leaf marks");
    let cnps = first(&healthy.onset, Canonical::CnpSent, None).expect("the receiver sends CNPs");
    let pause = first(&healthy.onset, Canonical::PfcPauseRx, p3);
    assert!(
        pause.is_none_or(|p| marks < p && cnps < p),
        "marks {marks}, CNPs {cnps}, first pause {pause:?}"
    );
    assert_eq!(growth(&healthy.onset, Canonical::Drops, None), 0);
    // Once DCQCN has settled, marks keep coming and pauses do not.
    let steady_pauses: Vec<u64> = healthy
        .steady
        .values()
        .map(|s| {
            let n = s.len();
            let v = |i: usize| -> u64 {
                s[i].readings
                    .iter()
                    .filter(|r| r.canonical == Canonical::PfcPauseRx && r.priority == p3)
                    .map(|r| r.value)
                    .sum()
            };
            v(n - 1) - v(n - 3)
        })
        .collect();
    assert!(steady_pauses.iter().all(|&p| p == 0), "{steady_pauses:?}");
    assert!(growth(&healthy.steady, Canonical::EcnMarked, None) > 1000);

    let high = run(
        dir.path(),
        "ecn-high",
        "emulation:\n  defects:\n  - ecn_thresholds: {switch: r6-leaf1, min_kb: 5000, max_kb: 10000}\n",
    );
    let pause = first(&high.onset, Canonical::PfcPauseRx, p3).expect("the leaf pauses");
    let marks = first(&high.onset, Canonical::EcnMarked, None);
    assert!(
        marks.is_none_or(|m| m > pause),
        "pause {pause}, marks {marks:?}"
    );
    assert!(
        growth(&high.steady, Canonical::PfcPauseRx, p3) > 1000,
        "pauses carry the load"
    );

    let lossy = run(
        dir.path(),
        "pfc-off",
        "emulation:\n  defects:\n  - pfc_off: {switch: r6-leaf1}\n",
    );
    assert_eq!(growth(&lossy.steady, Canonical::PfcPauseRx, p3), 0);
    assert_eq!(growth(&lossy.steady, Canonical::PfcPauseTx, p3), 0);
    assert!(growth(&lossy.steady, Canonical::Drops, None) > 0);
    assert!(growth(&lossy.steady, Canonical::OutOfSequence, None) > 0);
    assert!(
        lossy.bw < healthy.bw,
        "lossy {} Gb/s vs lossless {} Gb/s",
        lossy.bw,
        healthy.bw
    );
}
