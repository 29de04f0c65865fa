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
    /// The counter ledger every traffic round keeps, and its rules.
    #[serde(default)]
    pub ledger: LedgerSpec,
    /// Compare the run with the fabric's stored baseline at its end.
    #[serde(default)]
    pub baseline: Option<BaselineSpec>,
    /// A second pass that narrows failures to components.
    #[serde(default)]
    pub localise: LocaliseSpec,
    pub tests: Vec<TestSpec>,
}

/// `baseline:`: after the last test, the run is compared with the
/// fabric's baseline (`rocegate baseline promote`), per test, NIC and node
/// (`score::compare`); each significant regression beyond the tolerance is
/// a `fail` verdict of the test `baseline`.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct BaselineSpec {
    /// Family-wise error rate (Holm).
    #[serde(default = "default_alpha")]
    pub alpha: f64,
    /// Changes smaller than this (percent) are never regressions.
    #[serde(default = "default_tolerance")]
    pub tolerance_pct: f64,
    /// Without a stored baseline: `fail` when true, else `skipped` with
    /// the reason.
    #[serde(default)]
    pub require: bool,
    /// The store [default: $XDG_STATE_HOME/rocegate/baselines].
    #[serde(default)]
    pub store: Option<String>,
}

/// `localise:`: what the run does beyond the plan to name components.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct LocaliseSpec {
    /// Bisect a failing collective over halves of its nodes (every rail
    /// kept) to the nodes that make it fail (`score::bisect`).
    #[serde(default)]
    pub bisect: bool,
    /// Most collective runs one bisection may take [default: 24].
    #[serde(default)]
    pub max_runs: Option<usize>,
    /// After the plan, run each NIC, cable or node suspect again against
    /// partners that passed everything (same rail, another leaf), and
    /// confirm or clear it.
    #[serde(default)]
    pub retest: bool,
}

fn default_alpha() -> f64 {
    0.05
}
fn default_tolerance() -> f64 {
    3.0
}

/// The counter ledger: a snapshot of every NIC and switch port a round's
/// flows can cross before the round and one after it, every round of every
/// traffic test, and the rules its changes are judged by (see
/// `score::counters`). On by default.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct LedgerSpec {
    #[serde(default = "yes")]
    pub enabled: bool,
    /// Link-down events allowed on a flapped port and on its peer per
    /// injection (real optics may retrain twice); outside a fault's blast
    /// radius none is allowed.
    #[serde(default = "default_link_downs")]
    pub max_events_per_fault: u32,
    /// Pre-FEC bit error rate (corrected bits over lane rate × seconds)
    /// above which a cable is failing. Healthy 400G PAM4 links sit around
    /// 1e-8 to 1e-6; RS(544,514) stops coping near 2.4e-4.
    #[serde(default = "default_pre_fec_ber")]
    pub max_pre_fec_ber: f64,
    /// FCS errors per frame received above which a cable fails; below it,
    /// any FCS error warns.
    #[serde(default = "default_fcs")]
    pub max_fcs_per_frame: f64,
    /// How far the busiest uplink of a leaf may carry above the mean of its
    /// uplinks in one window, in percent, before it is named hot.
    #[serde(default = "default_ecmp")]
    pub ecmp_imbalance_pct: f64,
}

fn yes() -> bool {
    true
}
fn default_link_downs() -> u32 {
    2
}
fn default_pre_fec_ber() -> f64 {
    1e-5
}
fn default_fcs() -> f64 {
    1e-10
}
fn default_ecmp() -> f64 {
    100.0
}

impl Default for LedgerSpec {
    fn default() -> Self {
        LedgerSpec {
            enabled: true,
            max_events_per_fault: default_link_downs(),
            max_pre_fec_ber: default_pre_fec_ber(),
            max_fcs_per_frame: default_fcs(),
            ecmp_imbalance_pct: default_ecmp(),
        }
    }
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
    /// How a check that no source could answer counts: `pass`, `warn`
    /// (the default) or `fail`. Never silent: the verdict says which
    /// commands were tried.
    #[serde(default = "default_not_available")]
    pub not_available: VerdictName,
    /// Checks (`nic.firmware`, `switch.pfc`, or a prefix such as `optics`)
    /// that must be answered: not available then fails.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub require: Vec<String>,
    /// Checks (or prefixes) that are recorded and shown but never gate, for
    /// a rule being introduced: their verdict is `pass` and its message
    /// carries what the check saw.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub observe_only: Vec<String>,
}

fn default_not_available() -> VerdictName {
    VerdictName::Warn
}

fn default_fail_on() -> Vec<VerdictName> {
    vec![VerdictName::Fail, VerdictName::Error]
}

impl Default for Gate {
    fn default() -> Self {
        Gate {
            fail_on: default_fail_on(),
            not_available: default_not_available(),
            require: Vec::new(),
            observe_only: Vec::new(),
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

/// One test. Exactly one of `perftest`, `nccl`, `iperf`, `fault`, `audit`
/// says its kind.
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
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audit: Option<AuditSpec>,
    #[serde(
        default,
        deserialize_with = "super::tagged::option",
        skip_serializing_if = "Option::is_none"
    )]
    pub pattern: Option<Pattern>,
    /// Restrict the test to these nodes: a hostlist, or a selector of
    /// `node`s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nodes: Option<Target>,
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

/// The configuration and cabling audit: reads every node's NICs and every
/// switch the test's nodes reach, before any load, and compares them with the
/// inventory's RoCE profile, versions and links (see `src/audit/`).
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct AuditSpec {
    /// Only these checks (or dotted prefixes: `nic`, `switch.ecn`,
    /// `cabling`, `optics`); all of them when empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub checks: Vec<String>,
    /// How far a switch's ECN thresholds may be from the profile's, in
    /// percent (switches round thresholds to buffer cells). Default 10.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ecn_tolerance_pct: Option<f64>,
    /// Optics: a lane whose Rx power is this many dB below the median of
    /// its module's lit lanes is weak (a dirty or damaged fibre). Default 3.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weak_lane_db: Option<f64>,
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
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spine_loss: Option<SpineLoss>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub route_change: Option<RouteChange>,
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
    /// `switch:port` (switch side) or `node:device` (host side), or a
    /// selector of an `uplink` or a `nic`.
    pub target: Target,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct LeafReset {
    /// A leaf by name, or a selector of a `leaf`.
    pub switch: Target,
    pub mode: LeafResetMode,
}

/// A whole spine lost: what `leaf_reset` does to a leaf, aimed at a spine.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SpineLoss {
    /// A spine by name, or a selector of a `spine`.
    pub switch: Target,
    pub mode: LeafResetMode,
}

/// One ECMP member withdrawn by routing: the BGP session over one
/// switch-to-switch link shut on one of its switches, the link left up.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RouteChange {
    /// `switch:port`: the switch whose session is shut and the port its
    /// session runs over, or a selector of an `uplink` (shut on the leaf).
    pub link: Target,
}

/// How a switch is reset (`leaf_reset`, `spine_loss`).
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
    /// Minimum relative to what the topology can carry (see
    /// [`FairShareExpect`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fair_share: Option<FairShareExpect>,
    /// Fault tests: whether the workload must complete.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workload: Option<WorkloadOutcome>,
    /// Fault tests: traffic back to `min_fraction` of its pre-fault level within this.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recovers_within: Option<Span>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_fraction: Option<f64>,
}

/// A part of the pod, written out by name (`r0-leaf1:swp9`) or chosen by a
/// [`Selector`] over the inventory (`{select: uplink, rail: 0, pick: first}`),
/// so one suite serves every pod of a design. A plain string is a name, a map
/// is a selector: the YAML's shape says which, with no untagged guessing, and
/// a selector's errors keep the parser's position.
#[derive(Debug, Clone, PartialEq)]
pub enum Target {
    Name(String),
    Select(Selector),
}

impl<'de> Deserialize<'de> for Target {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::{self, value::MapAccessDeserializer, Visitor};
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Target;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a name, or a selector such as {select: leaf, rail: 0, pick: first}")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Target, E> {
                Ok(Target::Name(v.to_string()))
            }
            fn visit_map<A: de::MapAccess<'de>>(self, map: A) -> Result<Target, A::Error> {
                Selector::deserialize(MapAccessDeserializer::new(map)).map(Target::Select)
            }
        }
        d.deserialize_any(V)
    }
}

impl Serialize for Target {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Target::Name(n) => s.serialize_str(n),
            Target::Select(sel) => sel.serialize(s),
        }
    }
}

/// Picks parts of the pod from the inventory at plan time. `select` says
/// what kind of part; the other keys filter (all must hold), `position`
/// keeps one match by its place in inventory order, `pick` chooses one of
/// the matches, and `max` bounds how many may match. A selector that
/// matches nothing, or more than `max`, is an error before anything runs.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Selector {
    pub select: SelectKind,
    /// Leaves of this rail; uplinks and NICs of those leaves; NICs on this rail.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rail: Option<u32>,
    /// Uplinks, NICs and nodes behind this leaf (by name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub leaf: Option<String>,
    /// Uplinks to this spine (by name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spine: Option<String>,
    /// NICs of these nodes (a hostlist).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    /// `select: switch` only: leaf or spine.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<super::inventory::SwitchRole>,
    /// Keep the match at this place in inventory order: `first`, `last`, or
    /// a 0-based index.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub position: Option<Position>,
    /// Choose one of the matches.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pick: Option<Pick>,
    /// At most this many matches (checked before `pick`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<usize>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SelectKind {
    /// A leaf switch.
    Leaf,
    /// A spine switch.
    Spine,
    /// Any switch (filter with `role`).
    Switch,
    /// A leaf–spine link, named by its leaf-side port (`leaf:port`).
    Uplink,
    /// A node.
    Node,
    /// A NIC (`node:device`).
    Nic,
}

impl SelectKind {
    pub fn label(self) -> &'static str {
        match self {
            SelectKind::Leaf => "leaf",
            SelectKind::Spine => "spine",
            SelectKind::Switch => "switch",
            SelectKind::Uplink => "uplink",
            SelectKind::Node => "node",
            SelectKind::Nic => "nic",
        }
    }
}

/// A match's place in inventory order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Position {
    First,
    Last,
    Index(usize),
}

impl<'de> Deserialize<'de> for Position {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::{self, Visitor};
        struct V;
        impl Visitor<'_> for V {
            type Value = Position;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("first, last, or a 0-based index")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Position, E> {
                match v {
                    "first" => Ok(Position::First),
                    "last" => Ok(Position::Last),
                    other => Err(E::invalid_value(de::Unexpected::Str(other), &self)),
                }
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Position, E> {
                Ok(Position::Index(v as usize))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Position, E> {
                usize::try_from(v)
                    .map(Position::Index)
                    .map_err(|_| E::invalid_value(de::Unexpected::Signed(v), &self))
            }
        }
        d.deserialize_any(V)
    }
}

impl Serialize for Position {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Position::First => s.serialize_str("first"),
            Position::Last => s.serialize_str("last"),
            Position::Index(i) => s.serialize_u64(*i as u64),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Pick {
    /// The first match in inventory order.
    First,
    /// A match drawn with the run's seed (`--seed`): the same seed, the same part.
    Random,
    /// The match whose loss cuts off the fewest NICs (ties: the first).
    FewestIsolated,
}

impl Pick {
    pub fn label(self) -> &'static str {
        match self {
            Pick::First => "first",
            Pick::Random => "random",
            Pick::FewestIsolated => "fewest_isolated",
        }
    }
}

/// Bandwidth thresholds relative to what the topology can carry: the ideal
/// max-min fair share of each step's flows among every flow of its round,
/// computed by the plan from the inventory's link speeds and the MTU (see
/// `rocegate plan`). Percentages are of each step's own fair share.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FairShareExpect {
    /// Fail a step under this percentage of its fair share.
    pub min_pct: f64,
    /// Warn under this percentage.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warn_pct: Option<f64>,
    /// Steps whose flows cross the spines, where static ECMP hashing puts
    /// several flows on one uplink while another idles: the stated
    /// allowance for those collisions. Such steps are held each to `floor_pct`
    /// only, and together by their distribution. Without it, they are judged
    /// as every other step.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cross_spine: Option<CrossSpineExpect>,
}

/// The ECMP collision allowance for steps that cross the spines.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CrossSpineExpect {
    /// Each step: fail under this percentage of its fair share (a broken
    /// NIC or link, not a collision, lands there).
    pub floor_pct: f64,
    /// The test's cross-spine steps together: their median must reach this
    /// percentage of fair share.
    pub median_pct: f64,
    /// The lower quantile judged, in percent (5 = the 5th percentile).
    pub quantile: f64,
    /// ...and that quantile must reach this percentage of fair share.
    pub quantile_min_pct: f64,
}
