//! Judging a recorded run again: the samples and findings of its log held
//! against a suite (the one the run recorded, or new expectations), with
//! the plan rebuilt from the recorded inventory, seed and narrowing, so
//! every sample finds its step's line rate and fair share again.
//!
//! Re-judged: traffic values (`score::values`), cross-spine distributions
//! (`score::spread`) and the audit's findings (`score::findings`) under the
//! suite's gate. Kept as recorded: fault recovery, counter-ledger,
//! bisection and baseline verdicts (their inputs are judged as they run),
//! and every verdict of a run that did not finish.

use std::collections::HashMap;

use crate::config::check_suite::{Suite, TestKind};
use crate::config::model::Inventory;
use crate::plan::Plan;
use crate::report::events::{Record, RunFinished, VerdictRecord};

use super::values::{line_rate, placement, verdict, Gathered};
use super::{Counts, Verdict};

/// The log with its verdicts judged again and `run_finished` recounted;
/// the names of the tests re-judged.
pub fn rejudge(
    records: &[Record],
    suite: &Suite,
    plan: &Plan,
    inv: &Inventory,
) -> (Vec<Record>, Vec<String>) {
    let mut fresh: HashMap<(String, String), VerdictRecord> = HashMap::new();
    let mut order: Vec<(String, String)> = Vec::new();
    let mut judged: Vec<(String, &'static str)> = Vec::new();
    for tp in &plan.tests {
        let test = &suite.tests[tp.test];
        let found: Vec<VerdictRecord> = match &test.kind {
            TestKind::Fault(_) => continue,
            TestKind::Audit(_) => {
                let fs: Vec<_> = records
                    .iter()
                    .filter_map(|r| match r {
                        Record::Finding(f) if f.test == test.name => Some(f.clone()),
                        _ => None,
                    })
                    .collect();
                super::findings::verdicts(&suite.gate, test.kind.label(), &fs)
            }
            _ => traffic(records, test, tp, inv),
        };
        judged.push((test.name.clone(), test.kind.label()));
        for v in found {
            let key = (v.test.clone(), v.component.clone());
            order.push(key.clone());
            fresh.insert(key, v);
        }
    }
    let is_judged = |v: &VerdictRecord| judged.iter().any(|(t, k)| *t == v.test && *k == v.kind);
    let mut out = Vec::with_capacity(records.len());
    for r in records {
        match r {
            Record::Verdict(v) if is_judged(v) => {
                if let Some(n) = fresh.remove(&(v.test.clone(), v.component.clone())) {
                    out.push(Record::Verdict(n));
                }
            }
            Record::RunFinished(_) => {}
            r => out.push(r.clone()),
        }
    }
    // Components the recorded run had no verdict for (a new threshold
    // kind, a distribution verdict the old suite did not ask for).
    for key in order {
        if let Some(v) = fresh.remove(&key) {
            out.push(Record::Verdict(v));
        }
    }
    if let Some(f) = crate::report::events::run_finished(records) {
        let mut counts = Counts::default();
        let mut passed = !f.interrupted;
        for r in &out {
            if let Record::Verdict(v) = r {
                counts.add(v.verdict);
                if super::fails_gate(&suite.gate, v.verdict) {
                    passed = false;
                }
            }
        }
        out.push(Record::RunFinished(RunFinished {
            counts,
            gate_passed: passed,
            exit_code: if f.interrupted {
                f.exit_code
            } else if passed {
                crate::exit::PASS
            } else {
                crate::exit::GATE_FAILED
            },
            ..f.clone()
        }));
    }
    (out, judged.into_iter().map(|(t, _)| t).collect())
}

/// A traffic test's verdicts from its samples, as the engine judges them.
fn traffic(
    records: &[Record],
    test: &crate::config::check_suite::Test,
    tp: &crate::plan::TestPlan,
    inv: &Inventory,
) -> Vec<VerdictRecord> {
    let mut order: Vec<String> = Vec::new();
    let mut by: HashMap<String, Gathered> = HashMap::new();
    for r in records {
        let Record::Sample(s) = r else { continue };
        if s.test != test.name {
            continue;
        }
        let Some(step) = tp.rounds.get(s.round).and_then(|r| r.get(s.step)) else {
            continue;
        };
        let share = tp
            .capacity
            .as_ref()
            .and_then(|c| c.shares.get(s.round)?.get(s.step).copied());
        let g = by.entry(s.component.clone()).or_insert_with(|| {
            order.push(s.component.clone());
            Gathered::default()
        });
        g.add(s, line_rate(inv, test, step), placement(inv, step), share);
    }
    let mut out = Vec::new();
    let mut spread = Vec::new();
    for comp in order {
        let Some(g) = by.remove(&comp) else { continue };
        let cross = g.share.filter(|s| s.cross_spine && s.value > 0.0);
        let v = verdict(test, &comp, g);
        if let (Some(s), Some(value), true) = (cross, v.value, v.verdict != Verdict::Error) {
            spread.push((comp.clone(), 100.0 * value / s.value));
        }
        out.push(v);
    }
    if let Some(cs) = test
        .expect
        .fair_share
        .as_ref()
        .and_then(|f| f.cross_spine.as_ref())
    {
        out.extend(super::spread::verdict(test, &spread, cs));
    }
    out
}
