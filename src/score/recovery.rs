//! A fault test's recovery verdict: the workload's time series around the
//! fault (`fault::recovery` finds the pre-fault level, the floor and when
//! it came back), held against `expect.recovers_within` and `min_fraction`.
//! The engine gathers the series; this judges them.

use crate::fault::recovery;

use super::Verdict;

type Series = Vec<(f64, f64)>;

/// The slowest recovery among the completed steps, judged: `down` is
/// (first fault command, last fault command) on the run's clock, `fraction`
/// the share of the pre-fault level that counts as recovered, `within` the
/// limit in seconds. Returns the verdict, its message, the seconds to
/// recover and the slowest step's series.
pub fn judge(
    completed: &[(String, Series)],
    down: Option<(f64, f64)>,
    fraction: f64,
    within: Option<f64>,
) -> (Verdict, String, Option<f64>, Series) {
    let pct = fraction * 100.0;
    let Some((first, down)) = down else {
        return (
            Verdict::Error,
            "recovery cannot be judged: the fault was never sent".into(),
            None,
            Vec::new(),
        );
    };
    if completed.is_empty() {
        return (
            Verdict::Error,
            "recovery cannot be judged: no step of the workload completed".into(),
            None,
            Vec::new(),
        );
    }
    let mut worst: Option<(&String, recovery::Recovery, &Series)> = None;
    let mut cannot = Vec::new();
    for (comp, series) in completed {
        if series.is_empty() {
            cannot.push(format!("{comp}: its tool gave no time series"));
            continue;
        }
        match recovery::analyse(series, first, down, fraction) {
            Ok(r) => {
                let slower = match &worst {
                    None => true,
                    Some((_, w, _)) => match (r.back_after, w.back_after) {
                        (None, Some(_)) => true,
                        (Some(a), Some(b)) => a > b,
                        _ => false,
                    },
                };
                if slower {
                    worst = Some((comp, r, series));
                }
            }
            Err(e) => cannot.push(format!("{comp}: {e}")),
        }
    }
    if !cannot.is_empty() {
        return (
            Verdict::Error,
            format!("recovery cannot be judged: {}", cannot.join("; ")),
            None,
            Vec::new(),
        );
    }
    let Some((comp, r, series)) = worst else {
        return (
            Verdict::Error,
            "recovery cannot be judged".into(),
            None,
            Vec::new(),
        );
    };
    let level = format!(
        "{comp} fell from {:.3} to {:.3} ({:.0} %)",
        r.baseline,
        r.floor,
        100.0 * r.floor / r.baseline
    );
    let (verdict, msg) = match (r.back_after, within) {
        (None, _) => (
            Verdict::Fail,
            format!(
                "recovery: not back to {pct:.0} % of its pre-fault level by the end of the workload ({:.1} s after the fault began): {level}",
                r.last_t - down
            ),
        ),
        (Some(b), Some(w)) if b > w => (
            Verdict::Fail,
            format!(
                "recovery: {b:.1} s to get back to {pct:.0} % of the pre-fault level (limit {w:.1} s, resolution {:.1} s): {level}",
                r.step
            ),
        ),
        (Some(b), w) => (
            Verdict::Pass,
            format!(
                "recovery: back to {pct:.0} % of the pre-fault level {b:.1} s after the fault began{} (slowest of {}; {level})",
                w.map_or(String::new(), |w| format!(" (limit {w:.1} s)")),
                completed.len()
            ),
        ),
    };
    (verdict, msg, r.back_after, series.clone())
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
    fn the_slowest_component_decides_with_its_numbers() {
        let comps = vec![
            ("a".to_string(), s(&[10.0, 10.0, 10.0, 10.0, 10.0, 10.0])),
            ("b".to_string(), s(&[10.0, 10.0, 0.0, 0.0, 10.0, 10.0])),
        ];
        let (v, msg, back, series) = judge(&comps, Some((2.5, 2.5)), 0.9, Some(1.0));
        assert_eq!(v, Verdict::Fail);
        assert_eq!(back, Some(2.5));
        assert!(msg.contains("recovery: 2.5 s to get back to 90 %"), "{msg}");
        assert!(msg.contains("(limit 1.0 s"), "{msg}");
        assert!(msg.contains("b fell from 10.000 to 0.000 (0 %)"), "{msg}");
        assert_eq!(series, comps[1].1);
        let (v, msg, _, _) = judge(&comps, Some((2.5, 2.5)), 0.9, Some(3.0));
        assert_eq!(v, Verdict::Pass, "{msg}");
    }

    #[test]
    fn no_series_or_no_return_is_not_a_pass() {
        let comps = vec![("a".to_string(), Vec::new())];
        let (v, msg, _, _) = judge(&comps, Some((2.0, 2.0)), 0.9, Some(5.0));
        assert_eq!(v, Verdict::Error);
        assert!(msg.contains("a: its tool gave no time series"), "{msg}");
        let comps = vec![("a".to_string(), s(&[10.0, 10.0, 0.0, 0.0]))];
        let (v, msg, back, _) = judge(&comps, Some((2.0, 2.0)), 0.5, None);
        assert_eq!(back, None);
        assert_eq!(v, Verdict::Fail);
        assert!(msg.contains("not back to 50 %"), "{msg}");
    }
}
