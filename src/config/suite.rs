//! The suite file as written: named tests, their kind, pattern and
//! expectations, and the gate policy. Plain serde types; `check` validates
//! them against the inventory.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

use super::units::{Bytes, Span};

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SuiteFile {
    pub suite: SuiteMeta,
    #[serde(default)]
    pub gate: Gate,
    #[serde(default)]
    pub defaults: Defaults,
    pub tests: Vec<TestSpec>,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SuiteMeta {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// Which verdicts fail the gate. `error` fails it unless the suite says
/// otherwise: an unmeasured component is not a passed one.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Gate {
    #[serde(default = "default_fail_on")]
    pub fail_on: Vec<VerdictName>,
}

fn default_fail_on() -> Vec<VerdictName> {
    vec![VerdictName::Fail, VerdictName::Error]
}

impl Default for Gate {
    fn default() -> Self {
        Gate {
            fail_on: default_fail_on(),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum VerdictName {
    Pass,
    Warn,
    Fail,
    Error,
    Skipped,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Defaults {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout: Option<Span>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeat: Option<u32>,
    /// At most this many workload steps run at once (a round larger than
    /// this is split).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_concurrent: Option<usize>,
}

/// One test. Exactly one of `perftest`, `nccl`, `iperf`, `fault` says its kind.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct TestSpec {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub perftest: Option<PerftestSpec>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nccl: Option<NcclSpec>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iperf: Option<IperfSpec>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fault: Option<FaultSpec>,
    #[serde(
        default,
        deserialize_with = "super::tagged::option",
        skip_serializing_if = "Option::is_none"
    )]
    pub pattern: Option<Pattern>,
    /// Restrict the test to these nodes (hostlist).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nodes: Option<String>,
    /// Restrict the test to these rails.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rails: Option<Vec<u32>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeat: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout: Option<Span>,
    /// Allow a NIC to be in several steps of one round on purpose.
    #[serde(default)]
    pub contention: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expect: Option<Expect>,
    /// Read the counters of every NIC a step uses (and the leaf ports in
    /// front of them) at a fixed interval while the step runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counters: Option<CounterSampling>,
}

/// A counter time series inside each step: reads at `from`, `from + every`, …
#[derive(Debug, Clone, Copy, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CounterSampling {
    pub every: Span,
    /// Offset of the first read from the step's start (default: at once).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<Span>,
    /// How many reads (default: enough to cover the step's estimate, at most 1000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub samples: Option<u32>,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Pattern {
    /// NIC r of node a ↔ NIC r of node b, all rails in parallel; one
    /// matching that covers every NIC.
    RailPairs,
    /// Every node pair once (circle method).
    FullMesh,
    /// Seeded random matchings.
    Random(RandomPattern),
    /// k senders into one receiver, per rail.
    Incast(IncastPattern),
    /// One collective over every node.
    AllNodes,
    /// Pairs (or collectives) within each leaf.
    PerLeaf,
    /// Pairs whose two NICs sit on different leaves, so traffic crosses spines.
    CrossLeaf,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RandomPattern {
    pub rounds: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct IncastPattern {
    pub senders: u32,
    /// How many incast groups to run in all (default: one round of disjoint groups).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub samples: Option<u32>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PerftestTool {
    IbWriteBw,
    IbReadBw,
    IbSendBw,
    IbWriteLat,
    IbReadLat,
    IbSendLat,
}

impl PerftestTool {
    pub fn binary(self) -> &'static str {
        match self {
            PerftestTool::IbWriteBw => "ib_write_bw",
            PerftestTool::IbReadBw => "ib_read_bw",
            PerftestTool::IbSendBw => "ib_send_bw",
            PerftestTool::IbWriteLat => "ib_write_lat",
            PerftestTool::IbReadLat => "ib_read_lat",
            PerftestTool::IbSendLat => "ib_send_lat",
        }
    }
    pub fn is_bw(self) -> bool {
        matches!(
            self,
            PerftestTool::IbWriteBw | PerftestTool::IbReadBw | PerftestTool::IbSendBw
        )
    }
    pub fn from_binary(s: &str) -> Option<Self> {
        [
            PerftestTool::IbWriteBw,
            PerftestTool::IbReadBw,
            PerftestTool::IbSendBw,
            PerftestTool::IbWriteLat,
            PerftestTool::IbReadLat,
            PerftestTool::IbSendLat,
        ]
        .into_iter()
        .find(|t| t.binary() == s)
    }
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct PerftestSpec {
    pub tool: PerftestTool,
    /// Message size (`-s`). Mutually exclusive with `all_sizes`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<Bytes>,
    /// Sweep every size 2..2^23 (`-a`); perftest refuses it with `-D`.
    #[serde(default)]
    pub all_sizes: bool,
    /// Run for a duration (`-D`); the peak column then prints 0.00.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration: Option<Span>,
    /// Iterations per size (`-n`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iterations: Option<u64>,
    /// Queue pairs (`-q`); bandwidth tools only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub qps: Option<u32>,
    /// Both directions at once (`-b`); bandwidth tools only.
    #[serde(default)]
    pub bidirectional: bool,
    /// Traffic class (`--tclass`), e.g. 106 for DSCP 26 with ECN bits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tclass: Option<u8>,
    /// Connect with rdma_cm (`-R`).
    #[serde(default)]
    pub rdma_cm: bool,
    /// GPU memory (`--use_cuda=<gpu>`), using the NIC's GPU.
    #[serde(default)]
    pub use_cuda: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum NcclTool {
    AllReducePerf,
    AllGatherPerf,
    ReduceScatterPerf,
    AlltoallPerf,
    BroadcastPerf,
    SendrecvPerf,
}

impl NcclTool {
    pub fn binary(self) -> &'static str {
        match self {
            NcclTool::AllReducePerf => "all_reduce_perf",
            NcclTool::AllGatherPerf => "all_gather_perf",
            NcclTool::ReduceScatterPerf => "reduce_scatter_perf",
            NcclTool::AlltoallPerf => "alltoall_perf",
            NcclTool::BroadcastPerf => "broadcast_perf",
            NcclTool::SendrecvPerf => "sendrecv_perf",
        }
    }
    pub fn from_binary(s: &str) -> Option<Self> {
        [
            NcclTool::AllReducePerf,
            NcclTool::AllGatherPerf,
            NcclTool::ReduceScatterPerf,
            NcclTool::AlltoallPerf,
            NcclTool::BroadcastPerf,
            NcclTool::SendrecvPerf,
        ]
        .into_iter()
        .find(|t| t.binary() == s)
    }
    /// busbw = algbw × factor(n), from nccl-tests' PERFORMANCE.md.
    pub fn bus_factor(self, n: u32) -> f64 {
        let n = n.max(1) as f64;
        match self {
            NcclTool::AllReducePerf => 2.0 * (n - 1.0) / n,
            NcclTool::AllGatherPerf | NcclTool::ReduceScatterPerf | NcclTool::AlltoallPerf => {
                (n - 1.0) / n
            }
            NcclTool::BroadcastPerf | NcclTool::SendrecvPerf => 1.0,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Launcher {
    #[default]
    Mpirun,
    Srun,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct NcclSpec {
    pub tool: NcclTool,
    /// Smallest message (`-b`).
    pub min_bytes: Bytes,
    /// Largest message (`-e`); the gate reads this size.
    pub max_bytes: Bytes,
    /// Size multiplier (`-f`).
    #[serde(default = "default_step_factor")]
    pub step_factor: u32,
    /// Timed iterations per size (`-n`).
    #[serde(default = "default_nccl_iters")]
    pub iters: u32,
    /// Warm-up iterations (`-w`).
    #[serde(default = "default_nccl_warmup")]
    pub warmup: u32,
    /// GPUs (ranks) per node.
    #[serde(default = "default_gpus")]
    pub gpus_per_node: u32,
    #[serde(default)]
    pub launcher: Launcher,
    /// Check results (`-c 1`).
    #[serde(default = "default_true")]
    pub check: bool,
    /// Extra NCCL_* variables; they win over rocegate's defaults.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
}

fn default_step_factor() -> u32 {
    2
}
fn default_nccl_iters() -> u32 {
    20
}
fn default_nccl_warmup() -> u32 {
    5
}
fn default_gpus() -> u32 {
    8
}
fn default_true() -> bool {
    true
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct IperfSpec {
    pub duration: Span,
    /// Parallel streams (`-P`).
    #[serde(default = "default_streams")]
    pub streams: u32,
    /// Report interval (`-i`), the time series recovery is read from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval: Option<Span>,
}

fn default_streams() -> u32 {
    1
}

impl IperfSpec {
    /// The `-t` value: the duration in whole seconds, rounded up, at least 1
    /// (iperf3 takes whole seconds only).
    pub fn seconds(&self) -> u64 {
        let d = self.duration.0;
        (d.as_secs() + u64::from(d.subsec_nanos() > 0)).max(1)
    }

    /// The `-i` value in seconds (default 1; iperf3 accepts fractions).
    pub fn interval_s(&self) -> f64 {
        self.interval.map(|i| i.secs_f64()).unwrap_or(1.0)
    }
}

/// A fault injected while another test runs. The same syntax drives the
/// emulator and the real switch drivers.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FaultSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link_flap: Option<LinkFlap>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub leaf_reset: Option<LeafReset>,
    /// The traffic test the fault runs during.
    pub during: String,
    /// Delay after the workload starts.
    pub at: Span,
    /// How long the fault lasts before it is healed.
    #[serde(rename = "for")]
    pub duration: Span,
    #[serde(default = "default_one")]
    pub repeat: u32,
    /// Minimum time between two injections on the same target (flap protection).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pace: Option<Span>,
}

fn default_one() -> u32 {
    1
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct LinkFlap {
    /// `switch:port` (switch side) or `node:device` (host side).
    pub target: String,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct LeafReset {
    pub switch: String,
    pub mode: LeafResetMode,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LeafResetMode {
    PortsDown,
    RoutingRestart,
    Reload,
}

impl LeafResetMode {
    /// The name a suite spells it with.
    pub fn label(self) -> &'static str {
        match self {
            LeafResetMode::PortsDown => "ports_down",
            LeafResetMode::RoutingRestart => "routing_restart",
            LeafResetMode::Reload => "reload",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Metric {
    /// perftest bandwidth, Gb/s, at the largest size.
    BwAvgGbps,
    BwPeakGbps,
    /// perftest latency, µs.
    TTypicalUs,
    TAvgUs,
    P99Us,
    /// nccl-tests bus bandwidth, GB/s, at the largest size (out of place).
    BusbwGbs,
    AlgbwGbs,
    /// iperf3 throughput, Gb/s.
    ThroughputGbps,
}

impl Metric {
    pub fn unit(self) -> &'static str {
        match self {
            Metric::BwAvgGbps | Metric::BwPeakGbps | Metric::ThroughputGbps => "Gb/s",
            Metric::TTypicalUs | Metric::TAvgUs | Metric::P99Us => "us",
            Metric::BusbwGbs | Metric::AlgbwGbs => "GB/s",
        }
    }
    pub fn higher_is_better(self) -> bool {
        !matches!(self, Metric::TTypicalUs | Metric::TAvgUs | Metric::P99Us)
    }
    pub fn name(self) -> &'static str {
        match self {
            Metric::BwAvgGbps => "bw_avg_gbps",
            Metric::BwPeakGbps => "bw_peak_gbps",
            Metric::TTypicalUs => "t_typical_us",
            Metric::TAvgUs => "t_avg_us",
            Metric::P99Us => "p99_us",
            Metric::BusbwGbs => "busbw_gbs",
            Metric::AlgbwGbs => "algbw_gbs",
            Metric::ThroughputGbps => "throughput_gbps",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum WorkloadOutcome {
    Completes,
    MayFail,
}

/// What "good" means. Values are in the metric's unit (Gb/s for perftest
/// and iperf3, GB/s for nccl-tests, µs for latency). `warn_*` thresholds give
/// `warn` where the plain ones give `fail`.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Expect {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metric: Option<Metric>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warn_min: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warn_max: Option<f64>,
    /// Minimum as a percentage of the NIC's line rate (90 is NVIDIA's
    /// certification criterion).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_pct_of_line_rate: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warn_pct_of_line_rate: Option<f64>,
    /// Fault tests: whether the workload must complete.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workload: Option<WorkloadOutcome>,
    /// Fault tests: traffic back to `min_fraction` of its pre-fault level within this.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recovers_within: Option<Span>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_fraction: Option<f64>,
}
