//! A traffic component's verdict from the samples the engine gathered:
//! the median of its repetitions against its thresholds, or the failure
//! that stopped it. The engine gathers; this judges.

use crate::config::check_suite::Test;
use crate::plan::capacity::Share;
use crate::report::events::{FailureRecord, VerdictRecord};

use super::threshold::{judge, median, resolve, resolve_fair};
use super::Verdict;

/// Samples gathered for one component until its verdict.
#[derive(Default)]
pub struct Gathered {
    pub values: Vec<f64>,
    pub failures: Vec<FailureRecord>,
    pub evidence: Vec<String>,
    pub duration_s: f64,
    pub line: Option<f64>,
    pub place: Option<String>,
    /// The step's fair share, when the test's thresholds are relative to it
    /// (the lowest, if the component runs in several rounds).
    pub share: Option<Share>,
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
