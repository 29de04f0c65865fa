//! Two-sample statistics for baselines and `compare`: robust location and
//! spread (median, MAD, modified z-scores), the Mann–Whitney U test with
//! its Hodges–Lehmann shift, Welch's t-test, Holm's step-down adjustment and
//! the sample sizes an exact test needs to clear it. Pure functions of the
//! values, checked against scipy by `tests/stats_scipy.rs`. Deciding what
//! is a regression is not done here: callers turn these numbers into
//! verdicts.
//!
//! NaN values are dropped before anything is computed (a failed repetition
//! is not a measurement); degenerate inputs give `None` or a documented
//! value, never a panic.

use statrs::distribution::{ContinuousCDF, Normal, StudentsT};

/// Samples up to this size per side, without ties, get the exact
/// Mann–Whitney p-value: the arrangement counts fit a `u128` (C(100, 50) is
/// about 1e29), and past this the normal approximation is as good.
const EXACT_MAX_PER_SIDE: usize = 50;

/// Scale from the MAD to a normal standard deviation's z (Iglewicz and
/// Hoaglin, 1993): 0.6745 is the standard normal's third quartile.
const MODIFIED_Z_SCALE: f64 = 0.6745;

/// The largest n that `min_n_per_side` considers.
const MAX_N_PER_SIDE: usize = 64;

fn without_nan(v: &[f64]) -> Vec<f64> {
    v.iter().copied().filter(|x| !x.is_nan()).collect()
}

/// The median of `v` (NaN-free; the mean of the middle two for an even
/// count), `None` when it is empty. Reorders `v`.
fn median_in_place(v: &mut [f64]) -> Option<f64> {
    let n = v.len();
    if n == 0 {
        return None;
    }
    let (below, &mut mid, _) = v.select_nth_unstable_by(n / 2, f64::total_cmp);
    if n % 2 == 1 {
        return Some(mid);
    }
    // The lower middle is the largest value below the upper one.
    let lower = below.iter().copied().max_by(f64::total_cmp)?;
    Some((lower + mid) / 2.0)
}

/// The median of `v`, NaN ignored (the mean of the two middle values for an
/// even count). `None` when `v` has no non-NaN value.
pub fn median(v: &[f64]) -> Option<f64> {
    median_in_place(&mut without_nan(v))
}

/// The median absolute deviation from the median, unscaled (multiply by
/// 1.4826 for a normal standard deviation), NaN ignored. `None` when `v`
/// has no non-NaN value; 0 when more than half the values are equal.
pub fn mad(v: &[f64]) -> Option<f64> {
    let mut v = without_nan(v);
    let m = median_in_place(&mut v)?;
    let mut dev: Vec<f64> = v.iter().map(|x| (x - m).abs()).collect();
    median_in_place(&mut dev)
}

/// The Iglewicz–Hoaglin modified z-score `0.6745 (x - median) / MAD` of
/// each value, in input order. The MAD is floored at `floor_frac * |median|`
/// (`floor_frac >= 0`; callers pass 0.005): values capped at line rate are
/// mostly equal, their MAD is 0, and without the floor a 0.1 % dip would
/// score as an infinite outlier.
///
/// NaN values are left out of the median and MAD and score NaN. When the
/// floored MAD is still 0 (median and MAD both 0, or `floor_frac` 0 with a
/// MAD of 0) nothing can be scaled and every score is 0: more than half the
/// values are the median, so this score cannot single one out. Empty input
/// gives an empty vec, all-NaN input all NaN.
pub fn modified_z(values: &[f64], floor_frac: f64) -> Vec<f64> {
    let (Some(m), Some(d)) = (median(values), mad(values)) else {
        return vec![f64::NAN; values.len()];
    };
    let scale = d.max(floor_frac * m.abs());
    values
        .iter()
        .map(|&x| match x {
            x if x.is_nan() => f64::NAN,
            _ if scale == 0.0 => 0.0,
            x => MODIFIED_Z_SCALE * (x - m) / scale,
        })
        .collect()
}

/// A two-sided Mann–Whitney U test of `a` against `b`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MannWhitney {
    /// U of `a`: the number of pairs (a_i, b_j) with a_i > b_j, ties counting
    /// half (scipy's `mannwhitneyu(a, b).statistic`). `n1 * n2 - u` is U of `b`.
    pub u: f64,
    /// Two-sided p-value, in [0, 1].
    pub p: f64,
    /// Whether `p` is exact (counted over all arrangements) rather than the
    /// normal approximation.
    pub exact: bool,
    /// Whether any two values in the pooled sample are equal.
    pub ties: bool,
}

/// The two-sided Mann–Whitney U test, NaN dropped from both samples. Values
/// are compared exactly; equal values share the mean of their ranks.
///
/// Without ties and with at most 50 values per side, `p` is exact:
/// `min(1, 2 min(P(U <= u), P(U >= u)))` over all C(n1 + n2, n1)
/// equally likely arrangements, as scipy's `method='exact'`. Otherwise it is
/// the normal approximation with the tie correction of the variance and a
/// continuity correction of 0.5, as scipy's `method='asymptotic'`. When
/// every value is equal the test has nothing to go on and `p` is 1.
///
/// `None` when either sample is empty after dropping NaN.
pub fn mann_whitney(a: &[f64], b: &[f64]) -> Option<MannWhitney> {
    let a = without_nan(a);
    let b = without_nan(b);
    let (n1, n2) = (a.len(), b.len());
    if n1 == 0 || n2 == 0 {
        return None;
    }
    let ranked = MidRanks::of(&a, &b);
    let n1f = n1 as f64;
    let u = ranked.rank_sum_a - n1f * (n1f + 1.0) / 2.0;
    let ties = ranked.tie_term > 0.0;
    let exact = !ties && n1 <= EXACT_MAX_PER_SIDE && n2 <= EXACT_MAX_PER_SIDE;
    let p = if exact {
        // Without ties, U is a whole number of pairs.
        exact_p(n1, n2, u as usize)
    } else {
        asymptotic_p(u, n1, n2, ranked.tie_term)
    };
    Some(MannWhitney { u, p, exact, ties })
}

/// Mid-ranks of the pooled sample, reduced to what the test needs.
struct MidRanks {
    /// The sum of the ranks of `a`'s values (1-based).
    rank_sum_a: f64,
    /// Σ (t³ − t) over groups of t equal values; 0 without ties.
    tie_term: f64,
}

impl MidRanks {
    fn of(a: &[f64], b: &[f64]) -> MidRanks {
        let mut pooled: Vec<(f64, bool)> = a
            .iter()
            .map(|&x| (x, true))
            .chain(b.iter().map(|&x| (x, false)))
            .collect();
        // -0.0 sorts just before 0.0, and `==` below puts them in one group.
        pooled.sort_by(|x, y| x.0.total_cmp(&y.0));
        let mut rank_sum_a = 0.0;
        let mut tie_term = 0.0;
        let mut start = 0;
        while start < pooled.len() {
            let end = start
                + pooled[start..]
                    .iter()
                    .take_while(|p| p.0 == pooled[start].0)
                    .count();
            // Ranks start+1..=end, all given their mean.
            let mid = (start + 1 + end) as f64 / 2.0;
            let in_a = pooled[start..end].iter().filter(|p| p.1).count();
            rank_sum_a += mid * in_a as f64;
            let t = (end - start) as f64;
            tie_term += t * t * t - t;
            start = end;
        }
        MidRanks {
            rank_sum_a,
            tie_term,
        }
    }
}

/// `ways[u]`: in how many of the C(n1 + n2, n1) arrangements of two
/// tie-free samples `a` has statistic `u` (0 ..= n1 n2).
fn u_distribution(n1: usize, n2: usize) -> Vec<u128> {
    let max_u = n1 * n2;
    // by_taken[j][u]: arrangements of the pooled values seen so far with
    // j of them from `a` and U of those j equal to u.
    let mut by_taken = vec![vec![0u128; max_u + 1]; n1 + 1];
    by_taken[0][0] = 1;
    for i in 1..=n1 + n2 {
        // The i-th smallest value, if it is `a`'s j-th, has i - j of `b`'s
        // below it. Taking j downwards reads row j - 1 before it is updated.
        for j in (1..=n1.min(i)).rev() {
            let below = i - j;
            if below > n2 {
                // More of `b` than there are: no arrangement gets here.
                continue;
            }
            let (done, rest) = by_taken.split_at_mut(j);
            let (prev, row) = (&done[j - 1], &mut rest[0]);
            for (u, &w) in prev[..=max_u - below].iter().enumerate() {
                row[u + below] += w;
            }
        }
    }
    by_taken.swap_remove(n1)
}

/// The exact two-sided p-value of statistic `u` for tie-free samples of
/// `n1` and `n2` values (both at most `EXACT_MAX_PER_SIDE`).
fn exact_p(n1: usize, n2: usize, u: usize) -> f64 {
    let ways = u_distribution(n1, n2);
    let u = u.min(ways.len() - 1);
    let total: u128 = ways.iter().sum();
    let at_most: u128 = ways[..=u].iter().sum();
    let at_least: u128 = ways[u..].iter().sum();
    let tail = at_most.min(at_least);
    (2.0 * tail as f64 / total as f64).min(1.0)
}

/// The two-sided p-value of `u` under the normal approximation, with the
/// tie-corrected variance and a continuity correction (scipy's asymptotic
/// method). 1 when every value is tied (the variance is 0).
fn asymptotic_p(u: f64, n1: usize, n2: usize, tie_term: f64) -> f64 {
    let (n1, n2) = (n1 as f64, n2 as f64);
    let n = n1 + n2;
    let mean = n1 * n2 / 2.0;
    let var = n1 * n2 / 12.0 * ((n + 1.0) - tie_term / (n * (n - 1.0)));
    if var <= 0.0 {
        return 1.0;
    }
    // The larger of the two U's: its upper tail, doubled.
    let u = u.max(n1 * n2 - u);
    let z = (u - mean - 0.5) / var.sqrt();
    (2.0 * Normal::standard().sf(z)).min(1.0)
}

/// Welch's unequal-variance t-test of `a` against `b`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Welch {
    /// (mean a − mean b) / sqrt(var a / n1 + var b / n2), sample variances.
    pub t: f64,
    /// Welch–Satterthwaite degrees of freedom (not a whole number).
    pub df: f64,
    /// Two-sided p-value, in [0, 1].
    pub p: f64,
}

/// Welch's two-sided t-test (scipy's `ttest_ind(a, b, equal_var=False)`),
/// NaN dropped from both samples. Assumes roughly normal means, which
/// throughput samples of a few repetitions often are not: report it beside
/// `mann_whitney`, not instead of it.
///
/// `None` when either side has fewer than two values, when both samples
/// have zero variance (t is then 0/0 or ±∞ and no p-value means anything;
/// scipy returns NaN or a p of 0 there), or when a value is infinite.
pub fn welch(a: &[f64], b: &[f64]) -> Option<Welch> {
    let a = without_nan(a);
    let b = without_nan(b);
    let (ma, va) = mean_var(&a)?;
    let (mb, vb) = mean_var(&b)?;
    let (na, nb) = (a.len() as f64, b.len() as f64);
    let (sa, sb) = (va / na, vb / nb);
    if sa + sb == 0.0 {
        return None;
    }
    let t = (ma - mb) / (sa + sb).sqrt();
    let df = (sa + sb).powi(2) / (sa * sa / (na - 1.0) + sb * sb / (nb - 1.0));
    if !t.is_finite() || !df.is_finite() {
        return None;
    }
    let dist = StudentsT::new(0.0, 1.0, df).ok()?;
    let p = (2.0 * dist.sf(t.abs())).min(1.0);
    Some(Welch { t, df, p })
}

/// Mean and sample variance (n − 1 denominator); `None` below two values.
fn mean_var(v: &[f64]) -> Option<(f64, f64)> {
    if v.len() < 2 {
        return None;
    }
    let n = v.len() as f64;
    // Summed as offsets from the first value: eleven copies of 391.23 sum
    // to a mean one ulp off and a variance of 1e-27 instead of 0, which
    // would turn two constant samples into a t of 1e13.
    let first = v[0];
    let mean = first + v.iter().map(|x| x - first).sum::<f64>() / n;
    let ss: f64 = v.iter().map(|x| (x - mean).powi(2)).sum();
    Some((mean, ss / (n - 1.0)))
}

/// Holm–Bonferroni step-down adjusted p-values, in input order: the k-th
/// smallest of m p-values is multiplied by m − k + 1, then made
/// non-decreasing in that order and capped at 1 (statsmodels'
/// `multipletests(p, method='holm')[1]`). Reject where the adjusted value is
/// at most α; the family-wise error rate is then at most α.
///
/// Assumes each p is in [0, 1]. A NaN p (a comparison that could not be
/// made) stays NaN and does not count towards m, as in R's `p.adjust`.
pub fn holm(p: &[f64]) -> Vec<f64> {
    let mut order: Vec<usize> = (0..p.len()).filter(|&i| !p[i].is_nan()).collect();
    order.sort_by(|&i, &j| p[i].total_cmp(&p[j]));
    let m = order.len();
    let mut adjusted = vec![f64::NAN; p.len()];
    let mut running = 0.0_f64;
    for (k, &i) in order.iter().enumerate() {
        running = running.max(p[i] * (m - k) as f64).min(1.0);
        adjusted[i] = running;
    }
    adjusted
}

/// The smallest two-sided p-value an exact Mann–Whitney test with `n`
/// values per side and no ties can return: `2 / C(2n, n)`, capped at 1
/// (n = 3 gives 0.10, so three repetitions can never clear α = 0.05).
pub fn min_exact_p(n: usize) -> f64 {
    // C(2n, n) as a running product, exact in f64 while it fits 2^53.
    let arrangements = (1..=n).fold(1.0_f64, |c, i| c * (n + i) as f64 / i as f64);
    (2.0 / arrangements).min(1.0)
}

/// The fewest values per side at which an exact Mann–Whitney test can
/// clear `alpha` after a Holm adjustment over `comparisons` tests: Holm's
/// first step is Bonferroni's, so the smallest p must reach
/// `alpha / comparisons` (1,024 comparisons at 0.05 need 9 per side; one
/// needs 4). `None` when `comparisons` is 0, `alpha` is not positive, or
/// no n up to 64 suffices.
pub fn min_n_per_side(comparisons: usize, alpha: f64) -> Option<usize> {
    if comparisons == 0 || alpha.is_nan() || alpha <= 0.0 {
        return None;
    }
    let threshold = alpha / comparisons as f64;
    (1..=MAX_N_PER_SIDE).find(|&n| min_exact_p(n) <= threshold)
}

/// The Hodges–Lehmann shift estimate of `a` against `b`: the median of all
/// n1 n2 differences a_i − b_j, NaN dropped (positive when `a` is
/// higher). Reported beside the Mann–Whitney p as the size of the change.
/// Takes O(n1 n2) memory. `None` when either sample is empty after dropping
/// NaN.
pub fn hodges_lehmann(a: &[f64], b: &[f64]) -> Option<f64> {
    let b = without_nan(b);
    let mut diffs: Vec<f64> = a
        .iter()
        .filter(|x| !x.is_nan())
        .flat_map(|x| b.iter().map(move |y| x - y))
        .collect();
    // ∞ − ∞ is NaN: such a pair says nothing about the shift.
    diffs.retain(|d| !d.is_nan());
    median_in_place(&mut diffs)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol * b.abs().max(1e-300)
    }

    #[test]
    fn median_and_mad() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
        assert_eq!(median(&[f64::NAN, 5.0]), Some(5.0));
        assert_eq!(median(&[]), None);
        assert_eq!(median(&[f64::NAN]), None);
        // Deviations from 2: 1, 1, 0, 0, 2, 4, 7.
        assert_eq!(mad(&[1.0, 1.0, 2.0, 2.0, 4.0, 6.0, 9.0]), Some(1.0));
        assert_eq!(mad(&[7.0; 5]), Some(0.0));
        assert_eq!(mad(&[]), None);
    }

    #[test]
    fn modified_z_floors_the_mad_of_capped_values() {
        // Four runs at line rate, one 10 below: the MAD is 0, the floor is
        // 0.005 * 400 = 2.
        let z = modified_z(&[400.0, 400.0, 400.0, 400.0, 390.0], 0.005);
        assert_eq!(&z[..4], &[0.0; 4]);
        assert!(close(z[4], 0.6745 * -10.0 / 2.0, 1e-12), "{z:?}");
        // Unfloored: 0.6745 (x - 3) / 1.
        let z = modified_z(&[1.0, 2.0, 3.0, 4.0, 5.0, f64::NAN], 0.0);
        assert!(close(z[0], -1.349, 1e-12), "{z:?}");
        assert_eq!(z[2], 0.0);
        assert!(z[5].is_nan());
    }

    #[test]
    fn modified_z_degenerate_inputs() {
        assert!(modified_z(&[], 0.005).is_empty());
        assert_eq!(modified_z(&[0.0, 0.0, 0.0, 5.0], 0.005), vec![0.0; 4]);
        let z = modified_z(&[f64::NAN, f64::NAN], 0.005);
        assert!(z.len() == 2 && z.iter().all(|x| x.is_nan()));
    }

    #[test]
    fn mann_whitney_exact_scipy_docs_example() {
        // scipy.stats.mannwhitneyu's documented example (Conover's ages).
        let males = [19.0, 22.0, 16.0, 29.0, 24.0];
        let females = [20.0, 11.0, 17.0, 12.0];
        let r = mann_whitney(&males, &females).unwrap();
        assert_eq!(r.u, 17.0);
        assert!(r.exact && !r.ties);
        assert!(close(r.p, 0.1111111111111111, 1e-12), "{r:?}");
        let r = mann_whitney(&females, &males).unwrap();
        assert_eq!(r.u, 3.0);
        assert!(close(r.p, 0.1111111111111111, 1e-12), "{r:?}");
    }

    #[test]
    fn mann_whitney_complete_separation_reaches_the_minimum() {
        let r = mann_whitney(&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0]).unwrap();
        assert_eq!(r.u, 0.0);
        assert!(close(r.p, 0.1, 1e-12), "{r:?}");
        assert!(close(r.p, min_exact_p(3), 1e-12));
        let r = mann_whitney(&[4.0, 5.0, 6.0], &[1.0, 2.0, 3.0]).unwrap();
        assert_eq!(r.u, 9.0);
        assert!(close(r.p, 0.1, 1e-12), "{r:?}");
    }

    #[test]
    fn mann_whitney_ties_use_mid_ranks_and_the_normal_approximation() {
        // scipy 1.10.1: mannwhitneyu([1,2,2,3], [2,3,4,5],
        // method='asymptotic') = (2.5, 0.1366582477381475).
        let r = mann_whitney(&[1.0, 2.0, 2.0, 3.0], &[2.0, 3.0, 4.0, 5.0]).unwrap();
        assert_eq!(r.u, 2.5);
        assert!(r.ties && !r.exact);
        // statrs' erfc and scipy's agree to about 1e-11.
        assert!(close(r.p, 0.1366582477381475, 1e-9), "{r:?}");
    }

    #[test]
    fn mann_whitney_degenerate_inputs() {
        assert_eq!(mann_whitney(&[], &[1.0]), None);
        assert_eq!(mann_whitney(&[f64::NAN], &[1.0]), None);
        let r = mann_whitney(&[5.0; 4], &[5.0; 6]).unwrap();
        assert_eq!((r.u, r.p, r.ties), (12.0, 1.0, true));
        let r = mann_whitney(&[1.0], &[2.0]).unwrap();
        assert_eq!((r.u, r.p, r.exact), (0.0, 1.0, true));
        assert_eq!(mann_whitney(&[-0.0, 1.0], &[0.0]).unwrap().u, 1.5);
    }

    #[test]
    fn u_distribution_is_symmetric_and_sums_to_the_binomial() {
        let ways = u_distribution(3, 3);
        assert_eq!(ways, vec![1, 1, 2, 3, 3, 3, 3, 2, 1, 1]);
        let ways = u_distribution(50, 50);
        let total: u128 = ways.iter().sum();
        // C(100, 50).
        assert_eq!(total, 100_891_344_545_564_193_334_812_497_256);
        assert!(ways.iter().eq(ways.iter().rev()));
    }

    #[test]
    fn welch_wikipedia_example() {
        // Wikipedia, "Welch's t-test", example 1; scipy 1.10.1 gives
        // t = -2.455356398286006, p = 0.021378001462866985.
        let a = [
            27.5, 21.0, 19.0, 23.6, 17.0, 17.9, 16.9, 20.1, 21.9, 22.6, 23.1, 19.6, 19.0, 21.7,
            21.4,
        ];
        let b = [
            27.1, 22.0, 20.8, 23.4, 23.4, 23.5, 25.8, 22.0, 24.8, 20.2, 21.9, 22.1, 22.9, 20.5,
            24.4,
        ];
        let w = welch(&a, &b).unwrap();
        assert!(close(w.t, -2.455356398286006, 1e-12), "{w:?}");
        assert!(close(w.df, 24.988529290231416, 1e-12), "{w:?}");
        assert!(close(w.p, 0.021378001462866985, 1e-9), "{w:?}");
    }

    #[test]
    fn welch_degenerate_inputs() {
        assert_eq!(welch(&[1.0], &[1.0, 2.0]), None);
        assert_eq!(welch(&[1.0, f64::NAN], &[1.0, 2.0]), None);
        assert_eq!(welch(&[3.0, 3.0], &[4.0, 4.0, 4.0]), None);
        assert_eq!(welch(&[391.23; 11], &[391.25; 13]), None);
        assert_eq!(welch(&[f64::INFINITY, 1.0], &[1.0, 2.0]), None);
        // One side constant: df is the other side's n - 1.
        let w = welch(&[3.0, 3.0, 3.0], &[1.0, 2.0, 3.0, 4.0]).unwrap();
        assert!(close(w.df, 3.0, 1e-12), "{w:?}");
        let w = welch(&[1.0, 2.0, 3.0], &[1.0, 2.0, 3.0]).unwrap();
        assert_eq!((w.t, w.p), (0.0, 1.0));
    }

    #[test]
    fn holm_step_down() {
        // Sorted: 0.005 * 4 = 0.02, 0.01 * 3 = 0.03, 0.03 * 2 = 0.06,
        // 0.04 * 1 = 0.04 raised to 0.06.
        let adj = holm(&[0.01, 0.04, 0.03, 0.005]);
        let want = [0.03, 0.06, 0.06, 0.02];
        for (a, w) in adj.iter().zip(want) {
            assert!(close(*a, w, 1e-12), "{adj:?}");
        }
        assert_eq!(holm(&[0.5, 0.9]), vec![1.0, 1.0]);
        assert!(holm(&[]).is_empty());
        let adj = holm(&[0.01, f64::NAN, 0.02]);
        assert!(close(adj[0], 0.02, 1e-12) && adj[1].is_nan() && close(adj[2], 0.02, 1e-12));
    }

    #[test]
    fn exact_test_sample_sizes() {
        assert!(close(min_exact_p(3), 0.1, 1e-12));
        assert!(close(min_exact_p(4), 2.0 / 70.0, 1e-12));
        assert_eq!(min_exact_p(0), 1.0);
        assert_eq!(min_exact_p(1), 1.0);
        assert_eq!(min_n_per_side(1, 0.05), Some(4));
        assert_eq!(min_n_per_side(1024, 0.05), Some(9));
        assert_eq!(min_n_per_side(0, 0.05), None);
        assert_eq!(min_n_per_side(1, 0.0), None);
        assert_eq!(min_n_per_side(1, 1e-300), None);
    }

    #[test]
    fn hodges_lehmann_shift() {
        assert_eq!(hodges_lehmann(&[1.0, 2.0, 3.0], &[0.0]), Some(2.0));
        // Differences -1, 0, 0, 1, 1, 2: median 0.5.
        assert_eq!(hodges_lehmann(&[2.0, 3.0, 4.0], &[2.0, 3.0]), Some(0.5));
        // Differences 0, 1, 1, 2, 2, 3: median 1.5; b is lower, so positive.
        assert_eq!(hodges_lehmann(&[1.0, 2.0, 3.0], &[0.0, 1.0]), Some(1.5));
        assert_eq!(hodges_lehmann(&[0.0, 1.0], &[1.0, 2.0, 3.0]), Some(-1.5));
        assert_eq!(hodges_lehmann(&[], &[1.0]), None);
        assert_eq!(hodges_lehmann(&[f64::NAN], &[1.0]), None);
    }
}
