//! Duration estimates, so a change window can be checked before starting.
//!
//! The model is deliberately simple and errs long: every perftest step pays
//! a fixed setup (server start, out-of-band exchange, QP connection), every
//! nccl-tests launch pays mpirun start and NCCL init, an iperf3 step runs its
//! whole seconds plus a second to connect and exchange results, and data
//! moves at 90 % of line rate. Rounds run one after another; steps of a round at once.

use std::time::Duration;

use crate::config::check_suite::{Fault, Test, TestKind};
use crate::config::model::Inventory;
use crate::config::suite::PerftestSpec;

use super::patterns::{Round, Step};

/// Server start, connection setup and teardown of one perftest run.
pub const PERFTEST_SETUP: Duration = Duration::from_secs(3);
/// mpirun start plus NCCL bootstrap and communicator init.
pub const NCCL_LAUNCH: Duration = Duration::from_secs(15);
/// iperf3 server start, control connection and the results exchange.
pub const IPERF_SETUP: Duration = Duration::from_secs(1);
/// Time a fault test keeps watching when it declares no recovery bound.
pub const DEFAULT_RECOVERY_WATCH: Duration = Duration::from_secs(30);

/// perftest's default iteration counts (bandwidth tools 5000, latency 1000).
fn default_iterations(p: &PerftestSpec) -> u64 {
    if p.tool.is_bw() {
        5000
    } else {
        1000
    }
}

fn perftest_run(p: &PerftestSpec, line_gbps: f64) -> Duration {
    if let Some(d) = p.duration {
        return d.0 + PERFTEST_SETUP;
    }
    let iters = p.iterations.unwrap_or_else(|| default_iterations(p)) as f64;
    let sizes: Vec<u64> = if p.all_sizes {
        (1..=23).map(|e| 1u64 << e).collect()
    } else {
        vec![p.size.map(|b| b.0).unwrap_or(65536)]
    };
    let rate = (line_gbps * 0.9 * 1e9 / 8.0).max(1.0);
    // A message costs at least ~2 µs of round trip on the latency tools.
    let secs: f64 = sizes
        .iter()
        .map(|&s| iters * (s as f64 / rate + 2e-6))
        .sum();
    Duration::from_secs_f64(secs) + PERFTEST_SETUP
}

fn nccl_run(n: &crate::config::suite::NcclSpec, rails: usize, line_gbps: f64) -> Duration {
    let bw = (rails.max(1) as f64 * line_gbps * 0.9 / 8.0 * 1e9).max(1.0);
    let mut size = n.min_bytes.0.max(1);
    let mut secs = 0.0;
    loop {
        let t = 50e-6 + 2.0 * size as f64 / bw;
        secs += 2.0 * f64::from(n.iters + n.warmup) * t;
        if size >= n.max_bytes.0 {
            break;
        }
        size = size.saturating_mul(u64::from(n.step_factor.max(2)));
    }
    Duration::from_secs_f64(secs) + NCCL_LAUNCH
}

fn step_line_rate(inv: &Inventory, step: &Step) -> f64 {
    step.nics(inv)
        .map(|n| f64::from(inv.nics[n].speed_gbps))
        .fold(f64::MAX, f64::min)
        .min(1e6)
}

/// The audit: one round trip to every node and switch at once, each a
/// few dozen short reads (`ethtool`, `dcb`, sysfs, `ethtool -m`).
pub const AUDIT: Duration = Duration::from_secs(10);

/// Estimated duration of one round of `test`.
pub fn round_duration(test: &Test, inv: &Inventory, round: &Round) -> Duration {
    round
        .iter()
        .map(|step| {
            let line = step_line_rate(inv, step);
            match (&test.kind, step) {
                (TestKind::Perftest(p), _) => perftest_run(p, line),
                (TestKind::Nccl(n), Step::Collective(c)) => nccl_run(n, c.rails.len(), line),
                (TestKind::Iperf(i), _) => Duration::from_secs(i.seconds()) + IPERF_SETUP,
                _ => Duration::ZERO,
            }
        })
        .max()
        .unwrap_or(Duration::ZERO)
        * test.repeat
}

/// A traffic test: its rounds one after another.
pub fn test_duration(test: &Test, inv: &Inventory, rounds: &[Round]) -> Duration {
    rounds.iter().map(|r| round_duration(test, inv, r)).sum()
}

/// A fault test runs during a fresh first round of its target test (whose
/// planned first round is `target_round`), and lasts at least until every
/// injection is healed and the recovery watch is over.
pub fn fault_duration(test: &Test, f: &Fault, target_round: Duration) -> Duration {
    let watch = test
        .expect
        .recovers_within
        .map(|s| s.0)
        .unwrap_or(DEFAULT_RECOVERY_WATCH);
    let pace = f.pace.unwrap_or(Duration::ZERO);
    let fault = f.at + f.duration * f.repeat + pace * f.repeat.saturating_sub(1) + watch;
    fault.max(target_round)
}
