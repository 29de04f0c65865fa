//! Honest variation: what makes two runs of a healthy pair differ in the
//! last digits, as they do on real hardware. Two levels, as docs/emulator.md
//! ("Variation") describes with the figures and their sources:
//!
//! - **run to run**, fixed for one `--seed`: each NIC's host side (PCIe,
//!   memory, firmware state of one boot) carries a small steady loss of
//!   bandwidth and a small steady excess of latency;
//! - **sample to sample**: every execution of a step (each repetition, each
//!   round) draws its own loss per NIC, its collectives a loss of their own,
//!   and within an execution every second of a RoCE flow (every half second
//!   of a TCP stream) its own dip, every nccl-tests row its own time and
//!   every latency row its own tail.
//!
//! Every draw is a pure function of the emulator's seed and of stable
//! identities (a NIC's `node:device`, a command line without its TCP port,
//! how many times that command line ran before, the index of a second within
//! a flow), never of the order in which things were called, so a step added
//! elsewhere reshuffles nobody's noise. Bandwidth noise only ever takes away
//! (an efficiency ≤ 1 of what the model computes), so no value exceeds what
//! the link can carry.
//!
//! What is not here: defects (`fabric`), congestion (`congestion`), ECMP
//! placement (`fabric`); those act as before, on top of this.

use crate::rng::{hash_bytes, mix64, Rng};

/// Half-normal draws stop at this many σ (and log-normal ones at ±this many
/// σ), so every band below is a hard bound a test can assert.
pub const TRUNC_SIGMA: f64 = 3.0;
/// Exponential draws stop at this many means.
pub const TRUNC_MEANS: f64 = 5.0;

/// RoCE bandwidth: a NIC's steady host-side loss (σ of a half-normal, as a
/// fraction of what the NIC carries), fixed for one seed.
pub const BW_NIC_SIGMA: f64 = 0.0015;
/// RoCE bandwidth: each execution's loss on each of its NICs.
pub const BW_RUN_SIGMA: f64 = 0.001;
/// RoCE bandwidth: each second of a flow dips by this much (half-normal).
pub const BW_TICK_SIGMA: f64 = 0.0004;
/// Length of a RoCE flow's tick, seconds, counted from its first byte.
pub const BW_TICK_S: f64 = 1.0;
/// The most noise can take from a perftest bandwidth: its sending host with
/// every draw at its truncation ((1 − a)(1 − b) ≥ 1 − a − b).
#[cfg_attr(not(test), allow(dead_code))]
pub const BW_MAX_LOSS: f64 = TRUNC_SIGMA * (BW_NIC_SIGMA + BW_RUN_SIGMA + BW_TICK_SIGMA);

/// nccl-tests: one job's common loss (NCCL's proxies, GPU clocks, the
/// launch), on top of its NICs' own.
pub const NCCL_JOB_SIGMA: f64 = 0.005;
/// nccl-tests: each printed time is this much longer (half-normal) ...
pub const NCCL_ROW_SIGMA: f64 = 0.002;
/// ... plus this much of the share of it that is latency (launch, steps):
/// small sizes wobble by percents, the plateau by tenths.
pub const NCCL_ROW_LAT_SIGMA: f64 = 0.03;
/// The most noise can take from a ring's bandwidth (its slowest sending
/// host, the job's own loss), before each row's own.
#[cfg_attr(not(test), allow(dead_code))]
pub const NCCL_MAX_LOSS: f64 = TRUNC_SIGMA * (BW_NIC_SIGMA + BW_RUN_SIGMA + NCCL_JOB_SIGMA);

/// iperf3: one process's loss of its CPU-bound rate per execution.
pub const TCP_RUN_SIGMA: f64 = 0.02;
/// iperf3: mean dip of each stream in each tick (exponential: most ticks
/// near the rate, a few well under it).
pub const TCP_TICK_MEAN: f64 = 0.03;
/// Length of a TCP stream's tick, seconds.
pub const TCP_TICK_S: f64 = 0.5;
/// The most an iperf3 process's run takes from its rate.
#[cfg_attr(not(test), allow(dead_code))]
pub const TCP_RUN_MAX_LOSS: f64 = TRUNC_SIGMA * TCP_RUN_SIGMA;
/// The most one tick of a TCP stream dips.
#[cfg_attr(not(test), allow(dead_code))]
pub const TCP_TICK_MAX_DIP: f64 = TRUNC_MEANS * TCP_TICK_MEAN;

/// The mean dip of a TCP tick (the exponential's mean, less what the
/// truncation cuts off).
pub fn tcp_mean_dip() -> f64 {
    TCP_TICK_MEAN * (1.0 - (-TRUNC_MEANS).exp())
}

/// Latency: a NIC's steady excess on the fixed (non-serialisation) part.
pub const LAT_NIC_SIGMA: f64 = 0.01;
/// Latency: each execution's excess.
pub const LAT_RUN_SIGMA: f64 = 0.015;
/// Latency: each row's own t_typical wobble.
pub const LAT_ROW_SIGMA: f64 = 0.003;
/// The most noise can add to a t_typical's fixed part.
#[cfg_attr(not(test), allow(dead_code))]
pub const LAT_MAX_EXCESS: f64 = (1.0 + TRUNC_SIGMA * LAT_NIC_SIGMA)
    * (1.0 + TRUNC_SIGMA * LAT_NIC_SIGMA)
    * (1.0 + TRUNC_SIGMA * LAT_RUN_SIGMA)
    - 1.0;

/// What a draw is for: each kind its own hash stream.
#[derive(Debug, Clone, Copy)]
#[repr(u64)]
enum Kind {
    NicBw = 1,
    RunBw,
    Job,
    Tick,
    TcpRun,
    NicLat,
    RunLat,
    Stream,
    Exec,
}

/// Uniform in (0, 1), from a well-mixed 64-bit word.
fn open_unit(h: u64) -> f64 {
    ((h >> 11) as f64 + 0.5) / (1u64 << 53) as f64
}

/// A standard normal from one hash (Box–Muller on two words of it).
fn normal(h: u64) -> f64 {
    let u1 = open_unit(h);
    let u2 = open_unit(mix64(h ^ 0x5851_F42D_4C95_7F2D));
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

/// |N(0, σ)|, at most `TRUNC_SIGMA` σ.
fn half_normal(h: u64, sigma: f64) -> f64 {
    normal(h).abs().min(TRUNC_SIGMA) * sigma
}

/// Exponential with `mean`, at most `TRUNC_MEANS` means.
fn exponential(h: u64, mean: f64) -> f64 {
    (-open_unit(h).ln()).min(TRUNC_MEANS) * mean
}

/// |N(0, σ)| from a stream, at most `TRUNC_SIGMA` σ.
pub fn half_normal_from(rng: &mut Rng, sigma: f64) -> f64 {
    half_normal(rng.next_u64(), sigma)
}

/// A log-normal factor with median 1 and log-σ `sigma`, its log at most
/// `TRUNC_SIGMA` σ either way: a tail that is sometimes short and now and
/// then long.
pub fn lognormal_from(rng: &mut Rng, sigma: f64) -> f64 {
    (normal(rng.next_u64()).clamp(-TRUNC_SIGMA, TRUNC_SIGMA) * sigma).exp()
}

/// One execution of a workload (a perftest pair, an nccl-tests job, an
/// iperf3 client): the key of its sample-to-sample draws.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Exec(pub u64);

/// A command line as the identity of what it measures: the host, then the
/// words without the value of `-p`/`--port` (a harness hands ports out by
/// position in a round, which says nothing about what is measured).
pub fn command_identity(host: &str, argv: &[String]) -> String {
    let mut id = String::from(host);
    let mut skip = false;
    for w in argv {
        if skip {
            skip = false;
            continue;
        }
        if w == "-p" || w == "--port" {
            skip = true;
            continue;
        }
        if w.starts_with("--port=") {
            continue;
        }
        id.push('\u{1f}');
        id.push_str(w);
    }
    id
}

/// The seeded source of every variation.
#[derive(Debug, Clone, Copy)]
pub struct Noise {
    seed: u64,
}

impl Noise {
    pub fn new(seed: u64) -> Self {
        Noise { seed }
    }

    fn hash(&self, kind: Kind, text: &str, words: &[u64]) -> u64 {
        let mut h = hash_bytes(self.seed ^ mix64(kind as u64), text.as_bytes());
        for &w in words {
            h = mix64(h ^ mix64(w));
        }
        h
    }

    /// The `occurrence`-th execution (from 0) of the command `identity`.
    pub fn exec(&self, identity: &str, occurrence: u64) -> Exec {
        Exec(self.hash(Kind::Exec, identity, &[occurrence]))
    }

    /// A stream of draws for what an execution prints besides its
    /// measurement (interval timer lateness, cookies, latency tails), keyed
    /// by the execution and `salt`.
    pub fn rng(&self, exec: Exec, salt: u64) -> Rng {
        Rng::new(mix64(exec.0 ^ mix64(salt ^ self.seed)))
    }

    /// The share of what `nic` (`node:device`) can carry that its host
    /// moves in `exec`: its steady loss, the execution's loss on it and,
    /// with `job_sigma` > 0, the execution's common loss. At most 1.
    pub fn host_eff(&self, nic: &str, exec: Exec, job_sigma: f64) -> f64 {
        let boot = half_normal(self.hash(Kind::NicBw, nic, &[]), BW_NIC_SIGMA);
        let run = half_normal(self.hash(Kind::RunBw, nic, &[exec.0]), BW_RUN_SIGMA);
        (1.0 - boot) * (1.0 - run) * self.job_eff(exec, job_sigma)
    }

    /// The share an execution keeps of what its hosts move: its common
    /// loss (half-normal with `sigma`; 1 with `sigma` 0).
    pub fn job_eff(&self, exec: Exec, sigma: f64) -> f64 {
        if sigma > 0.0 {
            1.0 - half_normal(self.hash(Kind::Job, "", &[exec.0]), sigma)
        } else {
            1.0
        }
    }

    /// How much longer (a fraction ≥ 0) one timed nccl-tests run takes than
    /// the model says, of which `lat_frac` is latency; `rng` is the job's.
    pub fn nccl_row_excess(rng: &mut Rng, lat_frac: f64) -> f64 {
        half_normal(
            rng.next_u64(),
            NCCL_ROW_SIGMA + NCCL_ROW_LAT_SIGMA * lat_frac.clamp(0.0, 1.0),
        )
    }

    /// The key of the virtual link of `nic`'s sending host in `exec`.
    pub fn host_key(&self, nic: &str, exec: Exec) -> u64 {
        self.hash(Kind::RunBw, nic, &[exec.0, 0x4057])
    }

    /// The share of its CPU-bound rate an iperf3 process keeps in `exec`.
    pub fn tcp_process_eff(&self, exec: Exec) -> f64 {
        1.0 - half_normal(self.hash(Kind::TcpRun, "", &[exec.0]), TCP_RUN_SIGMA)
    }

    /// What an iperf3 process's thread can push in `exec`, Gb/s, when it
    /// averages `mean_gbps`: its run's share of it, and as much above as its
    /// streams' dips take away on average, so that a CPU-bound test still
    /// averages its run's rate (the dips move bytes between intervals; a
    /// stream the network holds dips below its share).
    pub fn tcp_process_gbps(&self, exec: Exec, mean_gbps: f64) -> f64 {
        mean_gbps * self.tcp_process_eff(exec) / (1.0 - tcp_mean_dip())
    }

    /// The second-by-second dips of a RoCE flow of `exec` that starts at
    /// `origin`; `salt` tells the flows of one execution apart where they
    /// should differ (each direction of a pair).
    pub fn roce_wobble(&self, exec: Exec, salt: u64, origin: f64) -> Wobble {
        Wobble {
            key: self.hash(Kind::Tick, "roce", &[exec.0, salt]),
            origin,
            tick_s: BW_TICK_S,
            dist: Dist::HalfNormal(BW_TICK_SIGMA),
        }
    }

    /// The dips of TCP stream `stream` of `exec`, from `origin`.
    pub fn tcp_wobble(&self, exec: Exec, stream: u64, origin: f64) -> Wobble {
        Wobble {
            key: self.hash(Kind::Stream, "tcp", &[exec.0, stream]),
            origin,
            tick_s: TCP_TICK_S,
            dist: Dist::Exponential(TCP_TICK_MEAN),
        }
    }

    /// The factor (≥ 1) on the fixed part of a latency between `client` and
    /// `server` in `exec`: each NIC's steady excess and the execution's.
    pub fn latency_factor(&self, client: &str, server: &str, exec: Exec) -> f64 {
        let nic = |n: &str| 1.0 + half_normal(self.hash(Kind::NicLat, n, &[]), LAT_NIC_SIGMA);
        let run = 1.0 + half_normal(self.hash(Kind::RunLat, "", &[exec.0]), LAT_RUN_SIGMA);
        nic(client) * nic(server) * run
    }
}

/// How a tick's dip is drawn.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Dist {
    HalfNormal(f64),
    Exponential(f64),
}

/// A flow's rate over time as a share of what the model gives it:
/// 1 − (the dip of the tick), each tick `tick_s` long from `origin`.
/// Goodput and byte counters both integrate it, so they stay consistent.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Wobble {
    key: u64,
    origin: f64,
    tick_s: f64,
    dist: Dist,
}

impl Wobble {
    /// The dip of tick `k` (k = 0 starts at the origin).
    pub fn dip(&self, k: i64) -> f64 {
        let h = mix64(self.key ^ mix64(k as u64));
        match self.dist {
            Dist::HalfNormal(s) => half_normal(h, s),
            Dist::Exponential(m) => exponential(h, m),
        }
    }

    /// ∫ from `a` to `b` of the share, seconds (`b − a` less the dips).
    pub fn integral(&self, a: f64, b: f64) -> f64 {
        if b <= a {
            return 0.0;
        }
        if !b.is_finite() || !a.is_finite() {
            return b - a;
        }
        let k0 = ((a - self.origin) / self.tick_s).floor() as i64;
        let k1 = ((b - self.origin) / self.tick_s).floor() as i64;
        let mut lost = 0.0;
        for k in k0..=k1 {
            let t0 = self.origin + k as f64 * self.tick_s;
            let lo = a.max(t0);
            let hi = b.min(t0 + self.tick_s);
            if hi > lo {
                lost += (hi - lo) * self.dip(k);
            }
        }
        b - a - lost
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_are_seeded_bounded_and_keyed_by_identity() {
        let a = Noise::new(1);
        let e = a.exec("gpu001\u{1f}ib_write_bw", 0);
        assert_eq!(e, Noise::new(1).exec("gpu001\u{1f}ib_write_bw", 0));
        assert_ne!(e, a.exec("gpu001\u{1f}ib_write_bw", 1));
        assert_ne!(e, Noise::new(2).exec("gpu001\u{1f}ib_write_bw", 0));
        let effs: Vec<f64> = (0..2000)
            .map(|i| a.host_eff(&format!("gpu{i:03}:mlx5_0"), e, NCCL_JOB_SIGMA))
            .collect();
        assert!(effs.iter().all(|x| (1.0 - NCCL_MAX_LOSS..=1.0).contains(x)));
        // Half-normal: the mean loss is σ√(2/π) per level.
        let mean = effs.iter().map(|x| 1.0 - x).sum::<f64>() / effs.len() as f64;
        assert!(mean > 0.0005 && mean < 0.01, "{mean}");
    }

    #[test]
    fn a_port_does_not_change_the_identity() {
        let w = |s: &str| s.split_whitespace().map(String::from).collect::<Vec<_>>();
        assert_eq!(
            command_identity("h", &w("ib_write_bw -p 18515 -s 1M x")),
            command_identity("h", &w("ib_write_bw -p 18517 -s 1M x"))
        );
        assert_ne!(
            command_identity("h", &w("ib_write_bw -s 1M x")),
            command_identity("h", &w("ib_write_bw -s 2M x"))
        );
    }

    #[test]
    fn a_wobble_integrates_its_ticks() {
        let w = Noise::new(3).roce_wobble(Exec(9), 0, 10.0);
        let whole = w.integral(10.0, 20.0);
        let parts: f64 = (0..20)
            .map(|i| w.integral(10.0 + 0.5 * i as f64, 10.5 + 0.5 * i as f64))
            .sum();
        assert!((whole - parts).abs() < 1e-12);
        assert!(whole < 10.0 && whole > 10.0 * (1.0 - TRUNC_SIGMA * BW_TICK_SIGMA));
        let first = w.integral(10.0, 11.0);
        assert!((first - (1.0 - w.dip(0))).abs() < 1e-12);
        assert_ne!(w.dip(0), w.dip(1));
    }
}
