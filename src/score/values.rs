//! A traffic component's verdict from the samples the engine gathered:
//! the median of its repetitions against its thresholds, or the failure
//! that stopped it. The engine gathers; this judges.

use crate::config::check_suite::{Test, TestKind};
use crate::config::model::{Inventory, NicId};
use crate::plan::capacity::Share;
use crate::plan::Step;
use crate::report::events::VerdictRecord;
use crate::workload::failure::StepFailure;

use super::threshold::{judge, median, resolve, resolve_fair};
use super::Verdict;

/// Where a step's NICs are cabled, by the inventory: a slow pair across
/// leaves points at the leaves and the uplinks between them.
pub fn placement(inv: &Inventory, step: &Step) -> Option<String> {
    let at = |n: NicId| {
        inv.nic_leaf(n)
            .map(|(s, p)| format!("{} on {}:{p}", inv.nic_name(n), inv.switches[s].name))
    };
    match step {
        Step::Pair { a, b } => {
            let (x, y) = (at(*a)?, at(*b)?);
            let cross = inv.nic_leaf(*a).map(|l| l.0) != inv.nic_leaf(*b).map(|l| l.0);
            Some(format!(
                "{x}, {y}{}",
                if cross { ", across the spines" } else { "" }
            ))
        }
        Step::Incast(i) => at(i.receiver).map(|r| format!("receiver {r}")),
        Step::Collective(_) => None,
    }
}

/// The rate a component can carry, for `min_pct_of_line_rate`.
pub fn line_rate(inv: &Inventory, test: &Test, step: &Step) -> Option<f64> {
    let link = link_speed(inv, step)?;
    match &test.kind {
        TestKind::Perftest(p) if p.bidirectional && matches!(step, Step::Pair { .. }) => {
            Some(link * 2.0)
        }
        _ => Some(link),
    }
}

/// The rate of a step's link in one direction, Gb/s: the slower NIC of a
/// pair, an incast's receiver (which bounds every sender's share); `None`
/// for a collective, whose GPUs also talk over NVLink.
pub fn link_speed(inv: &Inventory, step: &Step) -> Option<f64> {
    let speed = |n: NicId| f64::from(inv.nics[n].speed_gbps);
    match step {
        Step::Pair { a, b } => Some(speed(*a).min(speed(*b))),
        Step::Incast(i) => Some(speed(i.receiver)),
        Step::Collective(_) => None,
    }
}

/// Samples gathered for one component until its verdict.
#[derive(Default)]
pub struct Gathered {
    pub values: Vec<f64>,
    pub failures: Vec<StepFailure>,
    pub evidence: Vec<String>,
    pub duration_s: f64,
    pub line: Option<f64>,
    pub place: Option<String>,
    /// The step's fair share, when the test's thresholds are relative to it
    /// (the lowest, if the component runs in several rounds).
    pub share: Option<Share>,
}

impl Gathered {
    /// Adds one sample of the component: its value or failure, raw files
    /// and duration; where its step sits (`line`, `place`); and its fair
    /// share, the lowest kept when the component runs in several rounds.
    pub fn add(
        &mut self,
        sample: &crate::report::events::Sample,
        line: Option<f64>,
        place: Option<String>,
        share: Option<Share>,
    ) {
        self.line = line;
        self.place = place;
        if let Some(x) = share {
            if self.share.is_none_or(|old| x.value < old.value) {
                self.share = Some(x);
            }
        }
        self.values.extend(sample.value);
        self.failures.extend(sample.failure.clone());
        self.evidence.extend(sample.raw.clone());
        self.duration_s += (sample.ended_s - sample.started_s).max(0.0);
    }
}

/// The verdict on one component: a fabric failure fails, an
/// infrastructure failure is an error, otherwise the median of the samples
/// against the thresholds (of the line rate, or of the step's fair share).
pub fn verdict(test: &Test, component: &str, p: Gathered) -> VerdictRecord {
    let metric = test.metric;
    let threshold = match (&test.expect.fair_share, p.share, metric) {
        (Some(fs), Some(share), Some(m)) => {
            resolve_fair(&test.expect, fs, share.value, share.cross_spine, m.unit())
        }
        _ => resolve(&test.expect, p.line),
    };
    let value = median(&p.values);
    let (verdict, message) = if let Some(f) = p.failures.iter().find(|f| f.class == "fabric") {
        (Verdict::Fail, format!("{} ({})", f.message, f.kind))
    } else if let Some(f) = p.failures.first() {
        (
            Verdict::Error,
            format!("could not measure: {} ({})", f.message, f.kind),
        )
    } else {
        match (metric, value) {
            (Some(m), Some(v)) => {
                let (verdict, msg) = judge(m, &threshold, v);
                let samples = if p.values.len() > 1 {
                    format!(" [median of {}]", p.values.len())
                } else {
                    String::new()
                };
                (verdict, format!("{msg}{samples}"))
            }
            _ => (Verdict::Error, "no value was measured".to_string()),
        }
    };
    let message = match (&p.place, verdict) {
        (Some(place), Verdict::Fail | Verdict::Warn) => format!("{message} [{place}]"),
        _ => message,
    };
    VerdictRecord {
        test: test.name.clone(),
        kind: test.kind.label().into(),
        component: component.to_string(),
        verdict,
        metric: metric.map(|m| m.name().to_string()),
        value,
        unit: metric.map(|m| m.unit().to_string()),
        threshold,
        samples: p.values,
        message,
        evidence: p.evidence,
        duration_s: p.duration_s,
        series: Vec::new(),
    }
}
