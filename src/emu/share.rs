//! Max-min fair sharing of directed links among flows, by progressive filling
//! (water-filling): every unfrozen flow's rate rises at the same pace; when a
//! link fills, the flows crossing it freeze; when a flow reaches its own cap
//! (message rate, host limit), it freezes alone. The result is the unique
//! max-min fair allocation (Bertsekas & Gallager, *Data Networks*, §6.5.2).
//!
//! This is a steady-state model of what DCQCN/PFC converge to on a lossless
//! fabric; it knows nothing about queues, transients or unfairness between
//! congestion-control implementations.

/// One flow: the directed links it crosses and its own rate cap.
#[derive(Debug, Clone)]
pub struct Demand {
    pub links: Vec<usize>,
    /// Largest rate the flow can use on its own (`f64::INFINITY` for none).
    pub cap: f64,
}

/// Rates for `flows` over links of `capacity` (same unit as the capacities).
/// A flow crossing a zero-capacity link gets zero; a flow with no link gets
/// its cap (or zero when it has none, so no rate is ever infinite).
pub fn max_min(capacity: &[f64], flows: &[Demand]) -> Vec<f64> {
    let mut rate = vec![0.0; flows.len()];
    let mut rem: Vec<f64> = capacity.to_vec();
    let mut count = vec![0usize; capacity.len()];
    let mut active: Vec<usize> = Vec::new();
    for (i, f) in flows.iter().enumerate() {
        if f.links.is_empty() {
            rate[i] = if f.cap.is_finite() { f.cap } else { 0.0 };
            continue;
        }
        if f.cap <= 0.0 || f.links.iter().any(|&l| capacity[l] <= 0.0) {
            continue;
        }
        for &l in &f.links {
            count[l] += 1;
        }
        active.push(i);
    }
    let eps = 1e-9;
    while !active.is_empty() {
        let mut delta = f64::INFINITY;
        for (l, &n) in count.iter().enumerate() {
            if n > 0 {
                delta = delta.min(rem[l] / n as f64);
            }
        }
        for &i in &active {
            delta = delta.min(flows[i].cap - rate[i]);
        }
        let delta = delta.max(0.0);
        for &i in &active {
            rate[i] += delta;
        }
        for (l, &n) in count.iter().enumerate() {
            if n > 0 {
                rem[l] -= delta * n as f64;
            }
        }
        let full = |l: usize| rem[l] <= eps * capacity[l].max(1.0);
        let mut still = Vec::with_capacity(active.len());
        for &i in &active {
            let f = &flows[i];
            let capped = f.cap.is_finite() && f.cap - rate[i] <= eps * f.cap.max(1.0);
            if capped || f.links.iter().any(|&l| full(l)) {
                for &l in &f.links {
                    count[l] -= 1;
                }
            } else {
                still.push(i);
            }
        }
        active = still;
    }
    rate
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(links: &[usize]) -> Demand {
        Demand {
            links: links.to_vec(),
            cap: f64::INFINITY,
        }
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-6
    }

    #[test]
    fn three_flows_over_two_links() {
        // Link 0 = 100, link 1 = 100. A uses link 0, B uses both, C uses
        // link 1. By hand: all rise together to 50, where both links are full
        // (A+B = 100, B+C = 100): A = B = C = 50.
        let r = max_min(&[100.0, 100.0], &[d(&[0]), d(&[0, 1]), d(&[1])]);
        assert!(r.iter().all(|&x| close(x, 50.0)), "{r:?}");
    }

    #[test]
    fn unequal_links_give_the_rest_to_the_unconstrained_flow() {
        // Link 0 = 100 carries A and B, link 1 = 40 carries B and C.
        // Level 20: link 1 full (B + C = 40) → B = C = 20 frozen.
        // A continues alone on link 0 up to 100 − 20 = 80.
        let r = max_min(&[100.0, 40.0], &[d(&[0]), d(&[0, 1]), d(&[1])]);
        assert!(
            close(r[0], 80.0) && close(r[1], 20.0) && close(r[2], 20.0),
            "{r:?}"
        );
    }

    #[test]
    fn caps_freeze_a_flow_and_free_capacity_for_others() {
        // Three flows on one 90 link, one capped at 10: 10, 40, 40.
        let mut capped = d(&[0]);
        capped.cap = 10.0;
        let r = max_min(&[90.0], &[capped, d(&[0]), d(&[0])]);
        assert!(
            close(r[0], 10.0) && close(r[1], 40.0) && close(r[2], 40.0),
            "{r:?}"
        );
    }

    #[test]
    fn dead_links_and_empty_paths() {
        let mut looped = d(&[]);
        looped.cap = 7.0;
        let r = max_min(&[0.0, 10.0], &[d(&[0, 1]), d(&[1]), looped]);
        assert!(
            close(r[0], 0.0) && close(r[1], 10.0) && close(r[2], 7.0),
            "{r:?}"
        );
    }
}
