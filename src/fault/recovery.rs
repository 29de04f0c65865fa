//! Recovery read from a workload's time series: the level before the
//! fault, how far it fell, and when it was back.
//!
//! A series is `(t, value)` points, `t` the end of each interval on the
//! transport's clock. The baseline is the median of the intervals that
//! ended before the (first) fault began, without the first interval when
//! there are two or more (TCP slow start, QP warm-up). Traffic is back once
//! every interval from then on reaches `fraction` of the baseline; the
//! recovery time runs from the moment the (last) fault began to the end of
//! the first interval of that good stretch. An interval's mean can reach
//! the bar while it began below it, so the true moment lies within that
//! interval: the time errs long by less than one interval, never short.

use crate::score::threshold::median;

#[derive(Debug, Clone, PartialEq)]
pub struct Recovery {
    pub baseline: f64,
    /// The lowest interval after the fault began, and when it ended.
    pub floor: f64,
    pub floor_at: f64,
    /// Seconds from the start of the (last) fault until traffic was back;
    /// `None` when it never was before the series ended.
    pub back_after: Option<f64>,
    /// The shortest interval (the resolution of `back_after`).
    pub step: f64,
    /// When the series ended.
    pub last_t: f64,
}

/// `first_s`: when the first repetition began (the baseline ends there);
/// `fault_s`: when the last one began (recovery is timed from there).
pub fn analyse(
    series: &[(f64, f64)],
    first_s: f64,
    fault_s: f64,
    fraction: f64,
) -> Result<Recovery, String> {
    if let Some(p) = series.iter().find(|p| !p.0.is_finite() || !p.1.is_finite()) {
        return Err(format!(
            "the series holds a value that is not a number: {} at {} s",
            p.1, p.0
        ));
    }
    let mut series = series.to_vec();
    series.sort_by(|a, b| a.0.total_cmp(&b.0));
    series.dedup_by(|b, a| (b.0 - a.0).abs() < 1e-9);
    let before: Vec<f64> = series
        .iter()
        .filter(|p| p.0 <= first_s + 1e-9)
        .map(|p| p.1)
        .collect();
    if before.is_empty() {
        return Err(format!(
            "no interval ended before the fault began ({first_s:.1} s into the run): start the fault later so a pre-fault level can be measured"
        ));
    }
    let settled = if before.len() >= 2 {
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
        Some(i) => Some(after[i + 1].0 - fault_s),
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
        let v = [3.0, 10.0, 10.0, 10.0, 4.0, 0.0, 0.0, 5.0, 9.5, 10.0];
        let r = analyse(&s(&v), 4.5, 4.5, 0.9).unwrap();
        assert_eq!(r.baseline, 10.0);
        assert_eq!((r.floor, r.floor_at), (0.0, 6.0));
        // Last interval under 9 ends at 8 s; the next, good, at 9 s.
        assert_eq!(r.back_after, Some(4.5));
        assert_eq!(r.step, 1.0);
    }

    #[test]
    fn no_dip_is_zero_and_no_return_is_none() {
        let r = analyse(&s(&[10.0, 10.0, 9.8, 10.0]), 2.0, 2.0, 0.9).unwrap();
        assert_eq!(r.back_after, Some(0.0));
        let r = analyse(&s(&[10.0, 10.0, 0.0, 0.0]), 2.0, 2.0, 0.9).unwrap();
        assert_eq!(r.back_after, None);
        assert_eq!(r.last_t, 4.0);
    }

    #[test]
    fn a_dip_that_came_back_then_fell_again_counts_to_the_last_fall() {
        let r = analyse(&s(&[10.0, 10.0, 0.0, 10.0, 2.0, 10.0]), 2.0, 2.0, 0.9).unwrap();
        assert_eq!(r.back_after, Some(4.0));
    }

    #[test]
    fn repeated_faults_keep_the_first_baseline_and_time_the_last() {
        // Flaps at 2.5 and 6.5: the dips after the first do not lower
        // the level to recover to, and recovery runs from the last.
        let v = [10.0, 10.0, 0.0, 10.0, 10.0, 10.0, 0.0, 0.0, 10.0];
        let r = analyse(&s(&v), 2.5, 6.5, 0.9).unwrap();
        assert_eq!(r.baseline, 10.0);
        assert_eq!(r.back_after, Some(2.5));
    }

    #[test]
    fn out_of_order_duplicated_or_broken_points() {
        let mut v = s(&[10.0, 10.0, 0.0, 10.0]);
        v.reverse();
        v.push((4.0, 10.0));
        let r = analyse(&v, 2.0, 2.0, 0.9).unwrap();
        assert_eq!((r.back_after, r.step), (Some(2.0), 1.0));
        let e = analyse(&[(1.0, 10.0), (2.0, f64::NAN), (3.0, 10.0)], 1.5, 1.5, 0.9).unwrap_err();
        assert!(e.contains("not a number"), "{e}");
    }

    #[test]
    fn without_a_pre_fault_level_it_says_what_to_change() {
        let e = analyse(&s(&[10.0, 10.0]), 0.2, 0.2, 0.9).unwrap_err();
        assert!(e.contains("start the fault later"), "{e}");
        let e = analyse(&s(&[0.0, 0.0, 5.0]), 2.5, 2.5, 0.9).unwrap_err();
        assert!(e.contains("no traffic before"), "{e}");
    }

    proptest::proptest! {
        /// Traffic may have come back anywhere inside the first good
        /// interval after the last bad one: the time read is that
        /// interval's end, never earlier.
        #[test]
        fn never_short(v in proptest::collection::vec(0.0f64..20.0, 4..30), at in 1usize..3, frac in 0.1f64..1.0) {
            let series = s(&v);
            let fault = at as f64 + 0.5;
            if let Ok(r) = analyse(&series, fault, fault, frac) {
                let bar = frac * r.baseline;
                let after: Vec<&(f64, f64)> = series.iter().filter(|p| p.0 > fault).collect();
                let last_bad = after.iter().rposition(|p| p.1 < bar);
                match (last_bad, r.back_after) {
                    (None, b) => proptest::prop_assert_eq!(b, Some(0.0)),
                    (Some(i), Some(b)) => {
                        // Every interval from the one it names on is good,
                        // and the one before it was not.
                        proptest::prop_assert!((b - (after[i + 1].0 - fault)).abs() < 1e-9);
                        proptest::prop_assert!(after.iter().filter(|p| p.0 - fault >= b - 1e-9).all(|p| p.1 >= bar));
                    }
                    (Some(i), None) => proptest::prop_assert_eq!(i + 1, after.len()),
                }
            }
        }
    }
}
