//! summary.json: the run's facts for machines (versions seen, input
//! hashes, command lines, counts, gate, suspects). What a person reads on
//! the terminal is `terminal.rs`.

use std::collections::BTreeSet;

use serde_json::json;

use super::events::Record;

/// Tool and firmware versions seen in the outputs, input hashes, command lines.
pub fn summary_json(records: &[Record], run_dir: &str) -> serde_json::Value {
    let started = super::events::run_started(records);
    let finished = super::events::run_finished(records);
    let done = super::events::completeness(records);
    let mut versions: BTreeSet<String> = BTreeSet::new();
    let mut commands: Vec<serde_json::Value> = Vec::new();
    let mut seen_tests: BTreeSet<&str> = BTreeSet::new();
    let mut command_count = 0usize;
    for r in records {
        if let Record::Sample(s) = r {
            command_count += s.commands.len();
            if seen_tests.insert(&s.test) {
                commands.push(json!({"test": s.test, "example": s.commands}));
            }
            for key in ["nccl_version", "nccl_tests_version", "iperf3_version"] {
                if let Some(v) = s.details.get(key).and_then(|v| v.as_str()) {
                    versions.insert(format!("{key}={v}"));
                }
            }
            if let Some(clients) = s.details.get("clients").and_then(|c| c.as_array()) {
                for c in clients {
                    if let Some(t) = c.get("link_type").and_then(|v| v.as_str()) {
                        versions.insert(format!("perftest link_type={t}"));
                    }
                    if let Some(m) = c.get("mtu").and_then(|v| v.as_u64()) {
                        versions.insert(format!("perftest mtu={m}"));
                    }
                }
            }
        }
    }
    let loc = crate::score::suspects::localise(records);
    json!({
        "rocegate_version": env!("CARGO_PKG_VERSION"),
        "run_dir": run_dir,
        "suite": started.map(|s| &s.suite),
        "fabric": started.map(|s| &s.fabric),
        "transport": started.map(|s| &s.transport),
        "seed": started.map(|s| s.seed),
        "started_at": started.map(|s| &s.started_at),
        "ended_at": finished.map(|f| &f.ended_at),
        "inputs": started.map(|s| json!({"inventory": s.inventory, "suite": s.suite_file})),
        "seen": versions,
        "commands": {"total": command_count, "per_test_example": commands},
        "counts": finished.map(|f| f.counts),
        "gate_passed": finished.map(|f| f.gate_passed),
        "interrupted": finished.map(|f| f.interrupted),
        // A run without run_finished was cut short: exit 3, as `report` says.
        "exit_code": finished.map(|f| f.exit_code).unwrap_or(crate::exit::INCOMPLETE),
        "partial": started.is_some_and(|s| s.partial.is_some()),
        "narrowing": started.and_then(|s| s.partial.as_ref()),
        "rejudged_with": started.and_then(|s| s.rejudged_with.as_ref()),
        "complete": done.complete,
        "incomplete_reason": done.reason,
        "not_run": done.not_run,
        "suspects": loc.suspects,
        "cleared": loc.cleared,
        "collisions": loc.collisions,
        "unexplained": loc.unexplained,
    })
}
