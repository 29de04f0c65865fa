//! Recovery read from a workload's time series: the level before the
//! fault, how far it fell, and when it was back.
//!
//! A series is `(t, value)` points, `t` the end of each interval on the
//! transport's clock. The baseline is the median of the intervals that
//! ended before the fault began, without the first when there are three
//! or more (TCP slow start, QP warm-up). Traffic is back once every
//! interval from then on reaches `fraction` of the baseline; the recovery
//! time is counted from the moment the fault began to the end of the last
//! interval below that, so it errs long by less than one interval, never
//! short.

use crate::score::threshold::median;

#[derive(Debug, Clone, PartialEq)]
pub struct Recovery {
    pub baseline: f64,
    /// The lowest interval after the fault began, and when it ended.
    pub floor: f64,
    pub floor_at: f64,
    /// Seconds from the start of the fault until traffic was back; `None`
    /// when it never was before the series ended.
    pub back_after: Option<f64>,
    /// The interval length (the resolution of `back_after`).
    pub step: f64,
    /// When the series ended.
    pub last_t: f64,
}

pub fn analyse(series: &[(f64, f64)], fault_s: f64, fraction: f64) -> Result<Recovery, String> {
    let before: Vec<f64> = series
        .iter()
        .filter(|p| p.0 <= fault_s + 1e-9)
        .map(|p| p.1)
        .collect();
    if before.is_empty() {
        return Err(format!(
            "no interval ended before the fault began ({fault_s:.1} s into the run): start the fault later so a pre-fault level can be measured"
        ));
    }
    let settled = if before.len() >= 3 {
        &before[1..]
    } else {
        &before[..]
    };
    let baseline = median(settled).unwrap_or(0.0);
    if baseline <= 0.0 {
        return Err("no traffic before the fault began: nothing to recover to".into());
    }
    let after: Vec<(f64, f64)> = series
        .iter()
        .copied()
        .filter(|p| p.0 > fault_s + 1e-9)
        .collect();
    let step = series
        .windows(2)
        .map(|w| w[1].0 - w[0].0)
        .fold(f64::NAN, f64::min);
    let last_t = series.last().map_or(fault_s, |p| p.0);
    let Some(&(floor_at, floor)) = after.iter().min_by(|a, b| a.1.total_cmp(&b.1)) else {
        return Err("the series ended before the fault began".into());
    };
    let bar = fraction * baseline;
    let back_after = match after.iter().rposition(|p| p.1 < bar) {
        None => Some(0.0),
        Some(i) if i + 1 == after.len() => None,
        Some(i) => Some(after[i].0 - fault_s),
    };
    Ok(Recovery {
        baseline,
        floor,
        floor_at,
        back_after,
        step: if step.is_finite() { step } else { 0.0 },
        last_t,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[f64]) -> Vec<(f64, f64)> {
        v.iter()
            .enumerate()
            .map(|(i, &x)| ((i + 1) as f64, x))
            .collect()
    }

    #[test]
    fn a_dip_and_its_recovery() {
        // Slow start, steady 10, a fault at 4.5 s, nothing for two
        // intervals, half, then back.
        let r = analyse(
            &s(&[3.0, 10.0, 10.0, 10.0, 4.0, 0.0, 0.0, 5.0, 9.5, 10.0]),
            4.5,
            0.9,
        )
        .unwrap();
        assert_eq!(r.baseline, 10.0);
        assert_eq!((r.floor, r.floor_at), (0.0, 6.0));
        // Last interval under 9: the one ending at 8 s.
        assert_eq!(r.back_after, Some(3.5));
        assert_eq!(r.step, 1.0);
    }

    #[test]
    fn no_dip_is_zero_and_no_return_is_none() {
        let r = analyse(&s(&[10.0, 10.0, 9.8, 10.0]), 2.0, 0.9).unwrap();
        assert_eq!(r.back_after, Some(0.0));
        let r = analyse(&s(&[10.0, 10.0, 0.0, 0.0]), 2.0, 0.9).unwrap();
        assert_eq!(r.back_after, None);
        assert_eq!(r.last_t, 4.0);
    }

    #[test]
    fn a_dip_that_came_back_then_fell_again_counts_to_the_last_fall() {
        let r = analyse(&s(&[10.0, 10.0, 0.0, 10.0, 2.0, 10.0]), 2.0, 0.9).unwrap();
        assert_eq!(r.back_after, Some(3.0));
    }

    #[test]
    fn without_a_pre_fault_level_it_says_what_to_change() {
        let e = analyse(&s(&[10.0, 10.0]), 0.2, 0.9).unwrap_err();
        assert!(e.contains("start the fault later"), "{e}");
        let e = analyse(&s(&[0.0, 0.0, 5.0]), 2.5, 0.9).unwrap_err();
        assert!(e.contains("no traffic before"), "{e}");
    }

    proptest::proptest! {
        /// Recovery never reads shorter than the last interval under the bar.
        #[test]
        fn never_short(v in proptest::collection::vec(0.0f64..20.0, 4..30), at in 1usize..3, frac in 0.1f64..1.0) {
            let series = s(&v);
            let fault = at as f64 + 0.5;
            if let Ok(r) = analyse(&series, fault, frac) {
                let bar = frac * r.baseline;
                let last_bad = series.iter().filter(|p| p.0 > fault && p.1 < bar).map(|p| p.0).fold(None, |_, t| Some(t));
                match (last_bad, r.back_after) {
                    (None, b) => proptest::prop_assert_eq!(b, Some(0.0)),
                    (Some(t), Some(b)) => proptest::prop_assert!((b - (t - fault)).abs() < 1e-9),
                    (Some(t), None) => proptest::prop_assert_eq!(t, r.last_t),
                }
            }
        }
    }
}
