//! The distribution verdict for steps that cross the spines. Static ECMP
//! hashes each flow onto one uplink, so on a healthy fabric some pairs
//! collide and land well under their fair share while most reach it: a
//! per-pair minimum either fails healthy pods or misses a bad one. The
//! test's cross-spine steps are judged together instead, by their median
//! and a lower quantile, each as a percentage of the step's own fair share
//! (`expect.fair_share.cross_spine`). A pure function of the values.

use crate::config::suite::CrossSpineExpect;

use super::Verdict;

/// The nearest-rank `q`th percentile of `sorted` (ascending, non-empty).
pub fn quantile(sorted: &[f64], q: f64) -> f64 {
    let n = sorted.len();
    let rank = ((q / 100.0) * n as f64).ceil() as usize;
    sorted[rank.clamp(1, n) - 1]
}

/// What the verdict found.
#[derive(Debug, Clone, PartialEq)]
pub struct Spread {
    pub verdict: Verdict,
    pub steps: usize,
    /// Median percentage of fair share.
    pub median_pct: f64,
    /// The `quantile`th percentile, in percent of fair share.
    pub quantile_pct: f64,
    pub message: String,
}

/// Judges `pcts` (each cross-spine step's value as a percentage of its fair
/// share, with its component name). `None` when there is nothing to judge.
pub fn judge(pcts: &[(String, f64)], cs: &CrossSpineExpect) -> Option<Spread> {
    let mut v: Vec<f64> = pcts.iter().map(|p| p.1).filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(|a, b| a.total_cmp(b));
    let median = quantile(&v, 50.0);
    let low = quantile(&v, cs.quantile);
    let mut worst: Vec<&(String, f64)> = pcts.iter().collect();
    worst.sort_by(|a, b| a.1.total_cmp(&b.1));
    let worst: Vec<String> = worst
        .iter()
        .take(3)
        .map(|(c, p)| format!("{c} {p:.1}%"))
        .collect();
    let q = cs.quantile;
    let mut why = Vec::new();
    if median < cs.median_pct {
        why.push(format!("median {median:.1}% < {}%", cs.median_pct));
    }
    if low < cs.quantile_min_pct {
        why.push(format!("p{q} {low:.1}% < {}%", cs.quantile_min_pct));
    }
    let verdict = if why.is_empty() {
        Verdict::Pass
    } else {
        Verdict::Fail
    };
    let head = format!(
        "{} cross-spine steps: median {median:.1}% (min {}%), p{q} {low:.1}% (min {}%) of their fair share",
        v.len(),
        cs.median_pct,
        cs.quantile_min_pct
    );
    let message = if why.is_empty() {
        format!("{head}; lowest: {}", worst.join(", "))
    } else {
        format!("{head}: {}; lowest: {}", why.join(", "), worst.join(", "))
    };
    Some(Spread {
        verdict,
        steps: v.len(),
        median_pct: median,
        quantile_pct: low,
        message,
    })
}

/// The distribution verdict of a test's cross-spine steps; its component
/// is `cross-spine steps`, its value the median percentage of fair share.
pub fn verdict(
    test: &crate::config::check_suite::Test,
    pcts: &[(String, f64)],
    cs: &crate::config::suite::CrossSpineExpect,
) -> Option<crate::report::events::VerdictRecord> {
    let s = judge(pcts, cs)?;
    Some(crate::report::events::VerdictRecord {
        test: test.name.clone(),
        kind: test.kind.label().into(),
        component: "cross-spine steps".into(),
        verdict: s.verdict,
        metric: Some("pct_of_fair_share".into()),
        value: Some((s.median_pct * 100.0).round() / 100.0),
        unit: Some("%".into()),
        threshold: crate::score::threshold::Resolved {
            min: Some(cs.median_pct),
            basis: Some(format!(
                "median of {} steps; p{} at least {}%",
                s.steps, cs.quantile, cs.quantile_min_pct
            )),
            ..Default::default()
        },
        samples: Vec::new(),
        message: s.message,
        evidence: Vec::new(),
        duration_s: 0.0,
        series: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cs() -> CrossSpineExpect {
        CrossSpineExpect {
            floor_pct: 40.0,
            median_pct: 90.0,
            quantile: 5.0,
            quantile_min_pct: 60.0,
        }
    }

    fn pcts(v: &[f64]) -> Vec<(String, f64)> {
        v.iter()
            .enumerate()
            .map(|(i, &x)| (format!("p{i}"), x))
            .collect()
    }

    #[test]
    fn nearest_rank_quantiles() {
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(quantile(&v, 5.0), 5.0);
        assert_eq!(quantile(&v, 50.0), 50.0);
        assert_eq!(quantile(&[3.0], 5.0), 3.0);
    }

    #[test]
    fn a_few_collisions_pass_a_shifted_distribution_fails() {
        // 100 steps: 97 at fair share, 3 collided at 55 %.
        let mut v = vec![100.0; 97];
        v.extend([55.0, 55.0, 55.0]);
        let s = judge(&pcts(&v), &cs()).unwrap();
        assert_eq!(s.verdict, Verdict::Pass, "{}", s.message);
        // Every step at 85 %: nothing collided, everything is slow.
        let s = judge(&pcts(&[85.0; 100]), &cs()).unwrap();
        assert_eq!(s.verdict, Verdict::Fail);
        assert!(s.message.contains("median 85.0% < 90%"), "{}", s.message);
        // A fat low tail: 10 % of steps at 50 %.
        let mut v = vec![100.0; 90];
        v.extend([50.0; 10]);
        let s = judge(&pcts(&v), &cs()).unwrap();
        assert_eq!(s.verdict, Verdict::Fail);
        assert!(s.message.contains("p5 50.0% < 60%"), "{}", s.message);
        assert!(judge(&[], &cs()).is_none());
    }
}
