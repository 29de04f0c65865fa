//! Absolute and line-rate thresholds. Repeated samples are reduced to their
//! median, so one noisy repetition neither passes nor fails a component.

use serde::{Deserialize, Serialize};

use crate::config::suite::{Expect, FairShareExpect, Metric};

use super::Verdict;

/// Thresholds resolved to absolute values in the metric's unit.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Resolved {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warn_min: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warn_max: Option<f64>,
    /// Where a minimum came from, e.g. "90% of 400 Gb/s line rate".
    #[serde(skip_serializing_if = "Option::is_none")]
    pub basis: Option<String>,
}

fn max_opt(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.max(y)),
        (x, None) => x,
        (None, y) => y,
    }
}

/// Resolves percentages of line rate against `line_gbps` (the rate the
/// component can carry: the slower NIC of a pair, doubled when bidirectional).
pub fn resolve(e: &Expect, line_gbps: Option<f64>) -> Resolved {
    let mut r = Resolved {
        min: e.min,
        max: e.max,
        warn_min: e.warn_min,
        warn_max: e.warn_max,
        basis: None,
    };
    if let Some(line) = line_gbps {
        if let Some(p) = e.min_pct_of_line_rate {
            r.min = max_opt(r.min, Some(line * p / 100.0));
            r.basis = Some(format!("{p}% of {line} Gb/s line rate"));
        }
        if let Some(p) = e.warn_pct_of_line_rate {
            r.warn_min = max_opt(r.warn_min, Some(line * p / 100.0));
        }
    }
    r
}

/// Resolves `expect.fair_share` against a step's fair share (`share`, in
/// the metric's unit, from the plan's capacity model). A cross-spine step
/// of a test with an ECMP allowance is held to its floor only; its test's
/// distribution is judged on its own (`score::spread`). Absolute `min`/`max`
/// written beside it still apply.
pub fn resolve_fair(
    e: &Expect,
    fs: &FairShareExpect,
    share: f64,
    cross_spine: bool,
    unit: &str,
) -> Resolved {
    let mut r = Resolved {
        min: e.min,
        max: e.max,
        warn_min: e.warn_min,
        warn_max: e.warn_max,
        basis: None,
    };
    let at = |p: f64| share * p / 100.0;
    match (&fs.cross_spine, cross_spine) {
        (Some(cs), true) => {
            r.min = max_opt(r.min, Some(at(cs.floor_pct)));
            r.basis = Some(format!(
                "floor {}% of {} {unit} fair share, cross-spine",
                cs.floor_pct,
                fmt(share)
            ));
        }
        _ => {
            r.min = max_opt(r.min, Some(at(fs.min_pct)));
            r.warn_min = max_opt(r.warn_min, fs.warn_pct.map(at));
            r.basis = Some(format!(
                "{}% of {} {unit} fair share",
                fs.min_pct,
                fmt(share)
            ));
        }
    }
    r
}

pub fn median(values: &[f64]) -> Option<f64> {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    })
}

fn fmt(v: f64) -> String {
    if v.abs() >= 100.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// Judges one value. Returns the verdict and a message that carries the
/// value and the threshold it was held against.
pub fn judge(metric: Metric, r: &Resolved, value: f64) -> (Verdict, String) {
    let unit = metric.unit();
    let name = metric.name();
    let basis = r
        .basis
        .as_ref()
        .map(|b| format!(" ({b})"))
        .unwrap_or_default();
    if let Some(min) = r.min {
        if value < min {
            return (
                Verdict::Fail,
                format!(
                    "{name} {} {unit} < min {} {unit}{basis}",
                    fmt(value),
                    fmt(min)
                ),
            );
        }
    }
    if let Some(max) = r.max {
        if value > max {
            return (
                Verdict::Fail,
                format!("{name} {} {unit} > max {} {unit}", fmt(value), fmt(max)),
            );
        }
    }
    if let Some(w) = r.warn_min {
        if value < w {
            return (
                Verdict::Warn,
                format!("{name} {} {unit} < warn_min {} {unit}", fmt(value), fmt(w)),
            );
        }
    }
    if let Some(w) = r.warn_max {
        if value > w {
            return (
                Verdict::Warn,
                format!("{name} {} {unit} > warn_max {} {unit}", fmt(value), fmt(w)),
            );
        }
    }
    let bound = match (r.min, r.max) {
        (Some(lo), Some(hi)) => format!("within [{}, {}] {unit}", fmt(lo), fmt(hi)),
        (Some(lo), None) => format!(">= min {} {unit}{basis}", fmt(lo)),
        (None, Some(hi)) => format!("<= max {} {unit}", fmt(hi)),
        (None, None) => "no threshold set".to_string(),
    };
    (
        Verdict::Pass,
        format!("{name} {} {unit} {bound}", fmt(value)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_rate_percentages_and_warn_bands() {
        let e = Expect {
            min_pct_of_line_rate: Some(90.0),
            warn_pct_of_line_rate: Some(95.0),
            ..Default::default()
        };
        let r = resolve(&e, Some(400.0));
        assert_eq!(r.min, Some(360.0));
        assert_eq!(r.warn_min, Some(380.0));
        let (v, m) = judge(Metric::BwAvgGbps, &r, 356.2);
        assert_eq!(v, Verdict::Fail);
        assert_eq!(
            m,
            "bw_avg_gbps 356.2 Gb/s < min 360.0 Gb/s (90% of 400 Gb/s line rate)"
        );
        assert_eq!(judge(Metric::BwAvgGbps, &r, 370.0).0, Verdict::Warn);
        assert_eq!(judge(Metric::BwAvgGbps, &r, 391.0).0, Verdict::Pass);
        let lat = Resolved {
            max: Some(4.0),
            warn_max: Some(3.0),
            ..Default::default()
        };
        assert_eq!(judge(Metric::TTypicalUs, &lat, 4.5).0, Verdict::Fail);
        assert_eq!(judge(Metric::TTypicalUs, &lat, 3.5).0, Verdict::Warn);
        assert_eq!(judge(Metric::TTypicalUs, &lat, 1.5).0, Verdict::Pass);
    }

    #[test]
    fn median_of_samples() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), Some(2.5));
        assert_eq!(median(&[]), None);
    }
}
