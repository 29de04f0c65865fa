//! summary.json for machines, and the end-of-run list on the terminal.

use std::collections::BTreeSet;

use serde_json::json;

use crate::score::Verdict;

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

/// The suspects first, each with the failing results it explains (the
/// first few), then every other non-pass result: component, value,
/// threshold, verdict, evidence.
pub fn terminal_list(records: &[Record], run_dir: &str) -> String {
    let loc = crate::score::suspects::localise(records);
    let verdicts: std::collections::BTreeMap<(&str, &str), &super::events::VerdictRecord> = records
        .iter()
        .filter_map(|r| match r {
            Record::Verdict(v) => Some(((v.test.as_str(), v.component.as_str()), v)),
            _ => None,
        })
        .collect();
    let mut out = suspects_text(&loc);
    // Each suspect's first failing results, in full, under it.
    if !loc.suspects.is_empty() {
        out += "\nFailing results by suspect:\n";
    }
    for s in &loc.suspects {
        let shown: Vec<&super::events::VerdictRecord> = s
            .results
            .iter()
            .filter_map(|r| {
                verdicts
                    .get(&(r.test.as_str(), r.component.as_str()))
                    .copied()
            })
            .collect();
        if shown.is_empty() {
            continue;
        }
        out += &format!("{} {}:\n", s.kind, s.component);
        for v in shown.iter().take(3) {
            out += &verdict_lines(v, run_dir);
        }
        if shown.len() > 3 {
            out += &format!("        … and {} more\n", shown.len() - 3);
        }
    }
    let grouped: BTreeSet<(&str, &str)> = loc
        .suspects
        .iter()
        .flat_map(|s| &s.results)
        .map(|r| (r.test.as_str(), r.component.as_str()))
        .collect();
    let collided: BTreeSet<(&str, &str)> = loc
        .collisions
        .iter()
        .flat_map(|c| &c.results)
        .map(|r| (r.test.as_str(), r.component.as_str()))
        .collect();
    let mut n = 0;
    let mut header = false;
    for r in records {
        let Record::Verdict(v) = r else { continue };
        let key = (v.test.as_str(), v.component.as_str());
        if v.verdict == Verdict::Pass || grouped.contains(&key) || collided.contains(&key) {
            continue;
        }
        n += 1;
        if n > 200 {
            continue;
        }
        if !header && !out.is_empty() {
            out += "\nOther non-pass results:\n";
            header = true;
        }
        out += &verdict_lines(v, run_dir);
    }
    if n > 200 {
        out += &format!(
            "… and {} more non-pass results in {run_dir}/results.jsonl\n",
            n - 200
        );
    }
    out
}

/// One result for the terminal: verdict, test, component, value,
/// threshold, message and where its evidence is.
fn verdict_lines(v: &super::events::VerdictRecord, run_dir: &str) -> String {
    let value = v
        .value
        .map(|x| format!("{x:.2} {}", v.unit.as_deref().unwrap_or("")))
        .unwrap_or_else(|| "-".into());
    let t = &v.threshold;
    let threshold = [
        t.min.map(|x| format!("min {x:.1}")),
        t.max.map(|x| format!("max {x:.1}")),
    ]
    .into_iter()
    .flatten()
    .collect::<Vec<_>>()
    .join(" ");
    let evidence = v
        .evidence
        .first()
        .map(|e| format!("{run_dir}/{e}"))
        .unwrap_or_else(|| "-".into());
    format!(
        "{:<7} {} {}\n        value {value}  threshold {}  {}\n        evidence {evidence}\n",
        v.verdict.as_str().to_uppercase(),
        v.test,
        v.component,
        if threshold.is_empty() {
            "-".into()
        } else {
            threshold
        },
        v.message
    )
}

/// The suspects, ranked, each with its evidence and the results it
/// explains; then the ECMP collisions. Empty when nothing is suspected.
pub fn suspects_text(loc: &crate::score::suspects::Localisation) -> String {
    let mut out = String::new();
    if !loc.suspects.is_empty() {
        out += &format!(
            "SUSPECTS ({}), most likely first (score: failures explained, discounted by inconsistency):\n",
            loc.suspects.len()
        );
    }
    for (i, s) in loc.suspects.iter().enumerate() {
        out += &format!(
            "{:>2}. {} {}  score {:.2}, explains {} result(s)\n",
            i + 1,
            s.kind,
            s.component,
            s.score,
            s.results.len()
        );
        for e in &s.evidence {
            out += &format!("      {e}\n");
        }
    }
    for s in &loc.cleared {
        out += &format!(
            "cleared by retest: {} {} ({})\n",
            s.kind,
            s.component,
            s.evidence.first().map(String::as_str).unwrap_or("")
        );
    }
    for c in &loc.collisions {
        out += &format!("note: {}\n", c.message);
    }
    if !loc.unexplained.is_empty() {
        out += &format!(
            "{} failing result(s) not attributed to one component (listed below)\n",
            loc.unexplained.len()
        );
    }
    out
}
