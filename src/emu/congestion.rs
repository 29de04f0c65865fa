//! A fluid model of one congested switch egress queue (one port, one
//! priority) under RoCEv2: ECN marking, DCQCN at the NICs, PFC or drops.
//! From the flows that feed the queue it computes how every congestion
//! counter grows with time: marks, CNPs, pause frames and pause time,
//! drops, out-of-sequence packets and retransmissions, the watermark.
//! `QueueTrace::at` reads them at any instant, so the emulator can print
//! what `ethtool -S`, the RDMA `hw_counters` and the switches show after any
//! step. It does not decide bandwidth (max-min sharing in `share` does;
//! `goodput_factor` only says how much of a share survives go-back-N), and
//! it knows one queue: no PFC spreading to other hops, no other priorities.
//! The equations, parameters and checks are in docs/model-congestion.md.
//!
//! # The model
//!
//! Deterministic, in expected values (a mark is p(q) of a packet, not a
//! coin toss). Flows with the same rate cap and start share one state
//! (every flow of an incast is one state). A flow's cap is its offered
//! rate, or its max-min share when that is below this queue's own fair
//! level λ (Σ min(offered, λ) = C): another bottleneck holds it there.
//!
//! **Queue.** dq/dt = Σ aᵢ − C, q ≥ 0, aᵢ a sender's rate (0 while
//! paused). Departures split by each flow's share of the backlog (a fluid
//! FIFO). Lossy: what exceeds `buffer_bytes` is dropped, each flow losing
//! its share of the arrivals.
//!
//! **ECN.** p(q) = 0 for q ≤ Kmin, pmax·(q − Kmin)/(Kmax − Kmin) up to Kmax,
//! 1 above. A packet joining at occupancy q is marked with p(q) and reaches
//! the receiver q/C later; the receiver counts it then
//! (`np_ecn_marked_roce_packets`), the switch when it marks.
//!
//! **Notification point.** At most one CNP per flow per τ =
//! `min_time_between_cnps`: marked packets arriving at rate r give CNPs at
//! r/(1 + r·τ) (a renewal: τ of dead time, then the next marked packet).
//! A CNP reaches its sender `base_rtt_us` later.
//!
//! **Reaction point** (per flow; Zhu et al., SIGCOMM 2015, with the
//! ConnectX rules below). With x CNPs handled in a step of m monitor
//! periods (`rate_reduce_monitor_period`, 4 µs; m = 1, or 2 at the 8 µs
//! step), n = min(x, m) cuts: R_C ← R_C·(1 − α/2)ⁿ, taken as 1 − n·α/2
//! for n < 1 (α/2 is α/2^`rpg_gd` in 1/1024 units; a cut keeps at least
//! `rpg_min_dec_fac` of the rate); R_T ← R_C first, but
//! only if the timer raised the rate since the previous cut
//! (`clamp_tgt_rate_after_time_inc`). α, every τ' = `dce_tcp_rtt`:
//! α ← (g/1024)·α + (1 − g/1024)·c, c = 1 when a CNP arrived within τ',
//! g = `dce_tcp_g`, from `initial_alpha_value`/1024 at the first
//! CNP. Increases: the timer (T = `rpg_time_reset`) and the byte counter
//! (B = `rpg_byte_reset` bytes sent) fire their k-th event k periods after
//! the last cut. A flow has had no cut for s seconds with probability
//! P(s) = e^{−N(s)}, N(s) its expected cuts within s (and 0 before its
//! counters have run s), so a counter of period w fires stage k at rate
//! (P(k·w) − P((k+1)·w))/w: fast recovery for k ≤ F = `rpg_threshold`,
//! then additive increase R_T += `rpg_ai_rate`, or hyper increase
//! R_T += `rpg_hai_rate` once both counters are past F. Every event moves
//! R_C half way to R_T. R_C stays within [`rpg_min_rate`, cap].
//!
//! **PFC.** Hysteresis on the queue: q ≥ xoff pauses every sender feeding
//! it, q ≤ xon resumes them, each `base_rtt_us` after the switch decides.
//! A paused sender's side counts one pause frame when the pause starts and
//! one per refresh while it lasts (switches refresh at half the pause time:
//! 65535 quanta × 512 bit times at the port's line rate, C·(MTU + 82)/MTU:
//! 41.9 µs at 400G), and the microseconds it is paused. A lossless queue
//! never drops (the switch's headroom is assumed big enough).
//!
//! **Go-back-N.** After a drop the receiver discards the flow's packets
//! until the resent one arrives, W = base RTT + q/C later; the sender
//! resends all of them. With D drops of a flow within W, it spends
//! D/(1 + D) of the time discarding: out_of_sequence = its departures ×
//! D/(1 + D), retransmitted = out_of_sequence + drops. `goodput_factor` =
//! 1 − out_of_sequence/tx at steady state.
//!
//! **Time.** 1 µs steps for 0.5 ms from the last start (the onset, where
//! the order of marks and pauses is decided). If DCQCN acted, the flows it
//! governs and no cap holds share one state from then on (DCQCN converges
//! flows on one queue to equal rates), and 30 ms more run at 8 µs steps:
//! after a line-rate onset DCQCN needs ~10 ms to settle. The steady rates
//! are the growth of every counter over whole periods of the queue's
//! oscillation in the last 4 ms (0.25 ms when only the onset ran); `at`
//! interpolates the samples (every µs for 50 µs, then every 5, 20, 100,
//! 500 µs) and goes on linearly at the steady rates. A gap between starts
//! runs ≤ 1 ms, then goes on at that segment's rates. Cost (release, on a
//! shared 2-core machine): ~0.25 ms for an incast with DCQCN, ~0.35 ms for
//! 16 flows of 16 different rates, ~15 µs with PFC alone.
//!
//! # Defaults (`DcqcnParams::default`, ConnectX firmware)
//!
//! `mlxconfig -d <dev> query` on ConnectX-4 and later, and NVIDIA's "DCQCN
//! CC parameters" page: min_time_between_cnps 4 µs,
//! rate_reduce_monitor_period 4 µs, dce_tcp_g 1019, dce_tcp_rtt 1 µs,
//! initial_alpha_value 1023, rpg_time_reset 300 µs, rpg_byte_reset 32767,
//! rpg_threshold 1, rpg_ai_rate 5 Mb/s, rpg_hai_rate 50 Mb/s, rpg_gd 11,
//! rpg_min_dec_fac 50 %, rpg_min_rate 1 Mb/s, clamp_tgt_rate 0,
//! clamp_tgt_rate_after_time_inc 1, rate_to_set_on_first_cnp 0 (off). The
//! byte counter's unit is taken as 64 bytes (32767 → 2 MiB, as Spirent's
//! DCQCN emulation defaults to 2 MB; the paper uses 10 MB); in bytes
//! (32 KB) the counter would fire every µs at 400G. The paper's own values
//! (CNP interval 50 µs, timer 55 µs, g = 1/256 per 55 µs) are not the
//! NICs' defaults.
//!
//! # Not modelled
//!
//! Per-ingress-port PFC accounting (one threshold on the egress queue
//! instead), headroom exhaustion, pauses spreading upstream and victim
//! flows, the PFC watchdog; other priorities and schedulers on the port;
//! randomness (counters are expectations; real ones jitter and real flows
//! desynchronise); ECN marking on dequeue; per-QP versus per-port CNP
//! pacing (per flow here); rate_to_set_on_first_cnp; a growing hyper
//! increase step; slow start (RoCE NICs start at line rate, so do flows
//! here); selective repeat and retransmission timeouts
//! (`local_ack_timeout_err`); receive-side discards; flows that end.

use super::fabric::ROCE_OVERHEAD_BYTES;

/// RED-style ECN marking on the queue.
#[derive(Clone, Debug, PartialEq)]
pub struct Ecn {
    pub kmin_bytes: f64,
    pub kmax_bytes: f64,
    /// Marking probability at `kmax_bytes`, 0..1.
    pub pmax: f64,
}

impl Ecn {
    /// Probability that a packet joining the queue at occupancy `q` is
    /// marked: 0 up to kmin, linear to pmax at kmax, 1 above kmax.
    pub fn probability(&self, q: f64) -> f64 {
        if q > self.kmax_bytes {
            1.0
        } else if q <= self.kmin_bytes {
            0.0
        } else {
            self.pmax.clamp(0.0, 1.0) * (q - self.kmin_bytes) / (self.kmax_bytes - self.kmin_bytes)
        }
    }
}

/// One switch egress queue (one port, one priority) and the feedback loops
/// around it.
#[derive(Clone, Debug, PartialEq)]
pub struct QueueConfig {
    /// Payload rate the egress link drains, Gb/s.
    pub capacity_gbps: f64,
    /// RoCE MTU (packet payload), bytes.
    pub mtu: u32,
    /// `None`: this queue never marks.
    pub ecn: Option<Ecn>,
    /// PFC on for the RoCE priority at this switch (lossless). Off: lossy,
    /// arrivals beyond `buffer_bytes` are dropped.
    pub pfc: bool,
    /// The senders' NICs run DCQCN: receivers send CNPs for marked packets
    /// and senders cut their rate on them. Needs `ecn` to do anything.
    pub dcqcn: bool,
    /// Occupancy at which a lossy queue drops.
    pub buffer_bytes: f64,
    /// Occupancy at which the switch pauses every sender feeding the queue.
    pub xoff_bytes: f64,
    /// Occupancy at which it resumes them (at most `xoff_bytes`).
    pub xon_bytes: f64,
    /// Feedback delay: a CNP (once its marked packet has left the queue)
    /// and a pause or resume act on the sender this long after the fact.
    pub base_rtt_us: f64,
}

/// One flow into the queue.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FlowIn {
    /// What the sender would push unconstrained (its NIC's share), Gb/s.
    pub offered_gbps: f64,
    /// Its max-min steady-state share of this queue, Gb/s. A share below
    /// this queue's own fair level means another bottleneck holds the flow
    /// there; the model then caps the flow at its share.
    pub share_gbps: f64,
    /// When it starts, seconds from the trace origin (negative counts as 0).
    pub start_s: f64,
}

/// DCQCN parameters of the senders' (reaction point) and receivers'
/// (notification point) NICs, named as mlx5 names them (sysfs
/// `/sys/class/net/<if>/ecn/roce_rp/params/*` and `roce_np/params/*`;
/// mlxconfig `*_P1`). `Default` is the
/// ConnectX firmware default as `mlxconfig -d <dev> query` prints it.
#[derive(Clone, Debug, PartialEq)]
pub struct DcqcnParams {
    /// NP: at most one CNP per flow per this interval, µs (default 4).
    pub min_time_between_cnps_us: f64,
    /// RP: at most one rate cut per this period, µs (default 4).
    pub rate_reduce_monitor_period_us: f64,
    /// RP: every `dce_tcp_rtt_us`, α ← (g/1024)·α + (1 − g/1024)·[a CNP
    /// arrived in the period] (default g = 1019, period 1 µs).
    pub dce_tcp_g: f64,
    pub dce_tcp_rtt_us: f64,
    /// α at a flow's first CNP, out of 1024 (default 1023).
    pub initial_alpha_value: f64,
    /// Rate-increase timer, µs (default 300).
    pub rpg_time_reset_us: f64,
    /// Rate-increase byte counter, bytes (default 32767 units of 64 bytes).
    pub rpg_byte_reset_bytes: f64,
    /// Increase events per counter spent in fast recovery (default 1).
    pub rpg_threshold: f64,
    /// Additive and hyper-additive steps of the target rate, Mb/s
    /// (default 5 and 50).
    pub rpg_ai_rate_mbps: f64,
    pub rpg_hai_rate_mbps: f64,
    /// Floor of a flow's rate, Mb/s (default 1).
    pub rpg_min_rate_mbps: f64,
    /// Percent of the rate a single cut keeps at least (default 50).
    pub rpg_min_dec_fac: f64,
    /// Every cut also lowers the target rate to the current rate (default off).
    pub clamp_tgt_rate: bool,
    /// ... only when the timer has raised the rate since the previous cut
    /// (default on).
    pub clamp_tgt_rate_after_time_inc: bool,
}

impl Default for DcqcnParams {
    fn default() -> Self {
        DcqcnParams {
            min_time_between_cnps_us: 4.0,
            rate_reduce_monitor_period_us: 4.0,
            dce_tcp_g: 1019.0,
            dce_tcp_rtt_us: 1.0,
            initial_alpha_value: 1023.0,
            rpg_time_reset_us: 300.0,
            rpg_byte_reset_bytes: 32767.0 * 64.0,
            rpg_threshold: 1.0,
            rpg_ai_rate_mbps: 5.0,
            rpg_hai_rate_mbps: 50.0,
            rpg_min_rate_mbps: 1.0,
            rpg_min_dec_fac: 50.0,
            clamp_tgt_rate: false,
            clamp_tgt_rate_after_time_inc: true,
        }
    }
}

/// Cumulative counts of one flow at one instant.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FlowCounts {
    /// Marked packets of this flow, counted where the receiver NIC counts
    /// them (`np_ecn_marked_roce_packets`): as they leave the queue.
    pub ecn_marked_pkts: f64,
    /// CNPs the receiver sent for this flow (`np_cnp_sent`); the sender
    /// handles each (`rp_cnp_handled`) one feedback delay later.
    pub cnp: f64,
    /// PFC pause frames the sender's side received for this flow's ingress port.
    pub pause_frames: f64,
    /// Microseconds the sender was paused.
    pub pause_us: f64,
    /// Its packets dropped at this queue.
    pub drops_pkts: f64,
    /// Packets the receiver got out of order after a drop (go-back-N).
    pub out_of_sequence: f64,
    /// Packets the sender sent again.
    pub retransmitted_pkts: f64,
}

/// Cumulative counts of the queue and its flows at one instant.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct QueueCounts {
    pub tx_pkts: f64,
    /// Packets the switch marked, counted as they join the queue.
    pub ecn_marked_pkts: f64,
    pub drops_pkts: f64,
    /// Peak occupancy so far, bytes.
    pub watermark_bytes: f64,
    /// One per input flow, same order.
    pub flows: Vec<FlowCounts>,
}

/// Step of the onset: finer than the 4 µs DCQCN period and than a
/// leaf–spine base RTT (at 400G it is 12 MTU packets).
const FINE_DT_S: f64 = 1e-6;
/// Step while DCQCN settles: two DCQCN monitor periods (at most two cuts
/// a step). Checked against 1 µs steps over the same span: rates within a
/// few percent.
const COARSE_DT_S: f64 = 8e-6;
/// Simulated at the fine step after the last start: the incast onset, the
/// first pauses and cuts, the first recovery (the 300 µs timer).
const ONSET_S: f64 = 0.5e-3;
/// Then, while DCQCN acts, simulated at the coarse step: after a line-rate
/// onset DCQCN takes ~10 ms to settle (each ~1 ms cycle of the queue
/// halves the target rate's excess over the fair share).
const SETTLE_S: f64 = 30e-3;
/// Simulated for a segment that a later start interrupts.
const MID_WINDOW_S: f64 = 1e-3;
/// The end of the window whose rates carry the counters forward, trimmed
/// to whole periods of the queue's oscillation when it oscillates.
const FINE_AVG_S: f64 = 0.25e-3;
const COARSE_AVG_S: f64 = 4e-3;
/// Counter snapshots over an averaging span.
const SNAPSHOTS: usize = 100;
/// PFC: quanta a pause frame asks for (802.1Qbb maximum, what switches
/// send) and bit times per quantum.
const PAUSE_QUANTA: f64 = 65535.0;
const QUANTUM_BITS: f64 = 512.0;
/// Reaction-point steps of cut history a class keeps (2 ms at 4 µs, 4 ms
/// at 8 µs); a longer span counts the cuts within these.
const CUT_TICKS: usize = 512;

/// Slots of a sample: the queue's (tx, marks, drops, watermark), then
/// `FLOW_FIELDS` per class.
const QUEUE_FIELDS: usize = 4;
const FLOW_FIELDS: usize = 7;

/// The queue's history: samples of every cumulative counter over the
/// simulated window, and the steady rates that continue them.
#[derive(Clone, Debug, PartialEq)]
pub struct QueueTrace {
    congested: bool,
    /// Class of each input flow (identical flows share one state).
    class_of: Vec<usize>,
    classes: usize,
    times: Vec<f64>,
    /// `times.len()` rows of `QUEUE_FIELDS + FLOW_FIELDS * classes`.
    samples: Vec<f64>,
    /// Growth per second of each slot after the last sample.
    rates: Vec<f64>,
    goodput: f64,
    mean_queue: f64,
    throughput_gbps: f64,
}

impl QueueTrace {
    /// Runs the model with the ConnectX default DCQCN parameters.
    pub fn simulate(cfg: &QueueConfig, flows: &[FlowIn]) -> QueueTrace {
        Self::simulate_with(cfg, &DcqcnParams::default(), flows)
    }

    pub fn simulate_with(cfg: &QueueConfig, p: &DcqcnParams, flows: &[FlowIn]) -> QueueTrace {
        Sim::new(cfg, p, flows).run()
    }

    /// Whether the load offered to the queue ever exceeded its capacity.
    /// When it did not, every congestion count stays zero.
    pub fn congested(&self) -> bool {
        self.congested
    }

    /// Cumulative counts from the origin to `t_s`, for any `t_s` (zero
    /// before the origin, linear in the steady rates after the window).
    pub fn at(&self, t_s: f64) -> QueueCounts {
        let width = QUEUE_FIELDS + FLOW_FIELDS * self.classes;
        let mut row = vec![0.0; width];
        let n = self.times.len();
        if t_s > 0.0 && n > 0 {
            let last = self.times[n - 1];
            if t_s >= last {
                let base = &self.samples[(n - 1) * width..];
                for ((v, b), r) in row.iter_mut().zip(base).zip(&self.rates) {
                    *v = b + r * (t_s - last);
                }
            } else {
                // The first sample is at the origin, so 1 ≤ hi < n.
                let hi = self.times.partition_point(|&x| x <= t_s).max(1);
                let lo = hi - 1;
                let (t0, t1) = (self.times[lo], self.times[hi]);
                let w = if t1 > t0 { (t_s - t0) / (t1 - t0) } else { 1.0 };
                let a = &self.samples[lo * width..hi * width];
                let b = &self.samples[hi * width..(hi + 1) * width];
                for ((v, a), b) in row.iter_mut().zip(a).zip(b) {
                    *v = a + (b - a) * w;
                }
            }
        }
        let flows = self
            .class_of
            .iter()
            .map(|&k| {
                let f = &row[QUEUE_FIELDS + k * FLOW_FIELDS..][..FLOW_FIELDS];
                FlowCounts {
                    ecn_marked_pkts: f[0],
                    cnp: f[1],
                    pause_frames: f[2],
                    pause_us: f[3],
                    drops_pkts: f[4],
                    out_of_sequence: f[5],
                    retransmitted_pkts: f[6],
                }
            })
            .collect();
        QueueCounts {
            tx_pkts: row[0],
            ecn_marked_pkts: row[1],
            drops_pkts: row[2],
            watermark_bytes: row[3],
            flows,
        }
    }

    /// Steady state: the fraction of what crosses the queue that receivers
    /// keep, so the fraction of each flow's share that is useful (1.0 when
    /// nothing is dropped; below 1 when go-back-N discards what follows a
    /// drop, and lower the more drops).
    pub fn goodput_factor(&self) -> f64 {
        self.goodput
    }

    /// Steady-state mean occupancy, bytes (queueing delay = this / capacity).
    pub fn mean_queue_bytes(&self) -> f64 {
        self.mean_queue
    }
}

/// Per-member counters of a class.
#[derive(Clone, Copy, Debug, Default)]
struct Counters {
    ecn: f64,
    cnp: f64,
    pause_frames: f64,
    pause_us: f64,
    drops: f64,
    oos: f64,
    retx: f64,
}

impl Counters {
    fn to_row(self, out: &mut [f64]) {
        out[..FLOW_FIELDS].copy_from_slice(&[
            self.ecn,
            self.cnp,
            self.pause_frames,
            self.pause_us,
            self.drops,
            self.oos,
            self.retx,
        ]);
    }

    fn plus(self, o: Counters) -> Counters {
        Counters {
            ecn: self.ecn + o.ecn,
            cnp: self.cnp + o.cnp,
            pause_frames: self.pause_frames + o.pause_frames,
            pause_us: self.pause_us + o.pause_us,
            drops: self.drops + o.drops,
            oos: self.oos + o.oos,
            retx: self.retx + o.retx,
        }
    }

    fn from_row(f: &[f64]) -> Counters {
        Counters {
            ecn: f[0],
            cnp: f[1],
            pause_frames: f[2],
            pause_us: f[3],
            drops: f[4],
            oos: f[5],
            retx: f[6],
        }
    }
}

/// Identical flows (same rate cap, same start) as one state with `mult`
/// members. Rates and counters are per member, `backlog` the whole class's.
/// The DCQCN state is a member's expected state.
#[derive(Clone, Debug)]
struct Class {
    mult: f64,
    /// Rate cap, bytes/s.
    cap: f64,
    start: f64,
    /// DCQCN current and target rates (bytes/s) and α.
    rc: f64,
    rt: f64,
    alpha: f64,
    /// CNPs handled so far, and in the current monitor period.
    cnp_seen: f64,
    tick_cnp: f64,
    /// Bytes sent in the current monitor period.
    tick_bytes: f64,
    /// Expected cuts since the first CNP, and its value at the end of each
    /// of the last `CUT_TICKS` monitor periods (a ring).
    cuts: f64,
    cut_ring: Vec<f64>,
    ticks: usize,
    /// Chance that the timer raised the rate since a member's last cut
    /// (refreshed with the increase events).
    clamp_w: f64,
    /// Bytes of this class in the queue.
    backlog: f64,
    /// The sender is paused; time since the last pause frame it received.
    paused: bool,
    since_frame: f64,
    c: Counters,
}

/// One class of the input as the output sees it: the state that now
/// carries it (classes can be merged after the onset) and what to add to
/// that state's counters to get its own.
#[derive(Clone, Debug)]
struct Group {
    state: usize,
    mult: f64,
    offset: Counters,
}

/// Steady rates of a window's end.
struct Steady {
    rates: Vec<f64>,
    mean_queue: f64,
}

struct Sim<'a> {
    p: &'a DcqcnParams,
    /// Capacity, bytes/s; MTU, bytes; base RTT, s.
    cap: f64,
    mtu: f64,
    rtt: f64,
    ecn: Option<Ecn>,
    pfc: bool,
    dcqcn: bool,
    buffer: f64,
    xoff: f64,
    xon: f64,
    /// A switch holding a pause refreshes it every half pause time (65535
    /// quanta at the port's line rate).
    refresh: f64,
    congested: bool,
    /// The deepest the queue can get (for the feedback rings' length).
    deepest: f64,
    class_of: Vec<usize>,
    groups: Vec<Group>,
    cls: Vec<Class>,
    // Step-dependent.
    dt: f64,
    rtt_steps: usize,
    tick_steps: usize,
    /// What α keeps of itself over one monitor period: (g/1024)^(periods of
    /// dce_tcp_rtt in it).
    alpha_decay: f64,
    // Dynamic state. `rtt_slot` is step mod rtt_steps and `tick_left` the
    // steps to the end of the monitor period (kept as counters: integer
    // division was a tenth of the run time).
    step: usize,
    seg_start: f64,
    rtt_slot: usize,
    tick_left: usize,
    t: f64,
    q: f64,
    watermark: f64,
    tx: f64,
    marks: f64,
    switch_xoff: bool,
    /// Rings indexed by step: the switch's pause state (the senders read it
    /// `rtt_steps` later: the ring is that long), marked packets reaching
    /// the receivers and CNPs reaching the senders (per member; power-of-two
    /// long), each class's drops so far (per member; power-of-two long).
    pause_ring: Vec<bool>,
    np_ring: Vec<f64>,
    rp_ring: Vec<f64>,
    drop_ring: Vec<f64>,
    mask: usize,
    /// Scratch: this step's arrivals per class; the ring slots its marked
    /// packets reach the receivers in, with each slot's share of the marks.
    arr: Vec<f64>,
    spread: Vec<(usize, f64)>,
    // Output.
    times: Vec<f64>,
    samples: Vec<f64>,
}

impl<'a> Sim<'a> {
    fn new(cfg: &QueueConfig, p: &'a DcqcnParams, flows: &[FlowIn]) -> Sim<'a> {
        let bytes_per_s = |gbps: f64| gbps.max(0.0) * 1e9 / 8.0;
        let cap = bytes_per_s(cfg.capacity_gbps);
        let offered: Vec<f64> = flows.iter().map(|f| bytes_per_s(f.offered_gbps)).collect();
        let level = fair_level(cap, &offered);
        let mut cls: Vec<Class> = Vec::new();
        let mut class_of = Vec::with_capacity(flows.len());
        for (f, &off) in flows.iter().zip(&offered) {
            let share = bytes_per_s(f.share_gbps);
            let limit = if share < off.min(level) * (1.0 - 1e-6) {
                share
            } else {
                off
            };
            let start = if f.start_s.is_finite() {
                f.start_s.max(0.0)
            } else {
                0.0
            };
            let k = match cls.iter().position(|c| c.cap == limit && c.start == start) {
                Some(k) => k,
                None => {
                    cls.push(Class {
                        mult: 0.0,
                        cap: limit,
                        start,
                        rc: limit,
                        rt: limit,
                        alpha: p.initial_alpha_value / 1024.0,
                        cnp_seen: 0.0,
                        tick_cnp: 0.0,
                        tick_bytes: 0.0,
                        cuts: 0.0,
                        cut_ring: vec![0.0; CUT_TICKS],
                        ticks: 0,
                        clamp_w: 0.0,
                        backlog: 0.0,
                        paused: false,
                        since_frame: 0.0,
                        c: Counters::default(),
                    });
                    cls.len() - 1
                }
            };
            cls[k].mult += 1.0;
            class_of.push(k);
        }
        let load: f64 = cls.iter().map(|c| c.cap * c.mult).sum();
        let mtu = f64::from(cfg.mtu.max(1));
        let rtt = cfg.base_rtt_us.max(0.0) * 1e-6;
        let line_bps = cap * 8.0 * (mtu + ROCE_OVERHEAD_BYTES) / mtu;
        let deepest = if cfg.pfc {
            cfg.xoff_bytes.max(0.0) + load * (rtt + 2.0 * COARSE_DT_S)
        } else {
            cfg.buffer_bytes.max(0.0)
        };
        let mut sim = Sim {
            p,
            cap,
            mtu,
            rtt,
            ecn: cfg.ecn.clone(),
            pfc: cfg.pfc,
            dcqcn: cfg.dcqcn && cfg.ecn.is_some(),
            buffer: cfg.buffer_bytes.max(0.0),
            xoff: cfg.xoff_bytes,
            xon: cfg.xon_bytes.min(cfg.xoff_bytes),
            refresh: PAUSE_QUANTA * QUANTUM_BITS / line_bps / 2.0,
            congested: load > cap * (1.0 + 1e-9),
            deepest,
            class_of,
            groups: cls
                .iter()
                .enumerate()
                .map(|(state, c)| Group {
                    state,
                    mult: c.mult,
                    offset: Counters::default(),
                })
                .collect(),
            dt: FINE_DT_S,
            rtt_steps: 1,
            tick_steps: 1,
            alpha_decay: 1.0,
            step: 0,
            seg_start: 0.0,
            rtt_slot: 0,
            tick_left: 1,
            t: 0.0,
            q: 0.0,
            watermark: 0.0,
            tx: 0.0,
            marks: 0.0,
            switch_xoff: false,
            pause_ring: Vec::new(),
            np_ring: Vec::new(),
            rp_ring: Vec::new(),
            drop_ring: Vec::new(),
            mask: 0,
            arr: vec![0.0; cls.len()],
            spread: Vec::new(),
            times: Vec::new(),
            samples: Vec::new(),
            cls,
        };
        sim.set_dt(FINE_DT_S);
        sim
    }

    /// Sets the step, carrying what is in flight in the rings over to the
    /// new step's slots.
    fn set_dt(&mut self, dt: f64) {
        let n = self.cls.len();
        let ratio = self.dt / dt;
        let rtt_steps = ((self.rtt / dt).round() as usize).max(1);
        let max_steps = ((self.deepest / self.cap.max(1.0) + self.rtt) / dt).min(1e6);
        let len = (max_steps as usize + 4)
            .next_power_of_two()
            .clamp(8, 1 << 14);
        let mut np = vec![0.0; len * n];
        let mut rp = vec![0.0; len * n];
        if !self.np_ring.is_empty() {
            let old_len = self.mask + 1;
            for o in 0..old_len {
                let from = ((self.step + o) & self.mask) * n;
                let to = (((o as f64 * ratio) as usize).min(len - 1)) * n;
                for k in 0..n {
                    np[to + k] += self.np_ring[from + k];
                    rp[to + k] += self.rp_ring[from + k];
                }
            }
        }
        // The pause states still on their way, re-timed.
        let old_rtt = self.pause_ring.len();
        let pause: Vec<bool> = (0..rtt_steps)
            .map(|i| {
                let o = (i as f64 / ratio) as usize;
                if o < old_rtt {
                    self.pause_ring[(self.rtt_slot + o) % old_rtt]
                } else {
                    self.switch_xoff
                }
            })
            .collect();
        self.np_ring = np;
        self.rp_ring = rp;
        self.pause_ring = pause;
        self.mask = len - 1;
        self.reset_drop_ring();
        self.dt = dt;
        self.rtt_steps = rtt_steps;
        self.tick_steps =
            ((self.p.rate_reduce_monitor_period_us * 1e-6 / dt).round() as usize).max(1);
        let periods = self.tick_steps as f64 * dt / (self.p.dce_tcp_rtt_us * 1e-6);
        self.alpha_decay = (self.p.dce_tcp_g / 1024.0).clamp(0.0, 1.0).powf(periods);
        self.step = 0;
        self.rtt_slot = 0;
        self.tick_left = self.tick_steps;
    }

    fn width(&self) -> usize {
        QUEUE_FIELDS + FLOW_FIELDS * self.groups.len()
    }

    fn row(&self, out: &mut Vec<f64>) {
        let at = out.len();
        out.resize(at + self.width(), 0.0);
        let row = &mut out[at..];
        row[0] = self.tx;
        row[1] = self.marks;
        row[3] = self.watermark;
        for (k, g) in self.groups.iter().enumerate() {
            let c = self.cls[g.state].c.plus(g.offset);
            row[2] += c.drops * g.mult;
            c.to_row(&mut row[QUEUE_FIELDS + k * FLOW_FIELDS..]);
        }
    }

    fn record(&mut self) {
        let mut s = std::mem::take(&mut self.samples);
        self.row(&mut s);
        self.samples = s;
        self.times.push(self.t);
    }

    fn run(mut self) -> QueueTrace {
        // The last segment's samples (see simulate_span), and a few more.
        let rows = 50 + 30 + 40 + 20 + (SETTLE_S / 500e-6) as usize + 16;
        self.samples.reserve(rows * self.width());
        self.times.reserve(rows);
        self.record();
        let mut starts: Vec<f64> = self.cls.iter().map(|c| c.start).collect();
        starts.sort_by(f64::total_cmp);
        starts.dedup();
        let mut steady = Steady {
            rates: vec![0.0; self.width()],
            mean_queue: 0.0,
        };
        if !self.congested || self.cap <= 0.0 {
            // Nothing queues: packets cross at the offered rates. (A queue
            // that drains nothing is not modelled: it counts nothing.)
            for &s in &starts {
                self.advance_to(s, &steady.rates);
                if self.cap > 0.0 {
                    let rate: f64 = self
                        .cls
                        .iter()
                        .filter(|c| c.start <= s)
                        .map(|c| c.cap * c.mult)
                        .sum();
                    steady.rates[0] = rate / self.mtu;
                }
            }
            return self.finish(steady);
        }
        for (j, &s) in starts.iter().enumerate() {
            // Before the first start nothing flows; a gap between starts
            // longer than MID_WINDOW_S goes on at its steady rates.
            self.advance_to(s, &steady.rates);
            self.seg_start = s;
            steady = match starts.get(j + 1) {
                Some(next) => {
                    let span = (next - s).min(MID_WINDOW_S);
                    self.simulate_span(span, FINE_AVG_S.min(span / 2.0))
                }
                None => {
                    let onset = self.simulate_span(ONSET_S, FINE_AVG_S);
                    if self.dcqcn && self.cls.iter().any(|c| c.cnp_seen > 0.0) {
                        self.merge_unbound();
                        self.set_dt(COARSE_DT_S);
                        self.simulate_span(SETTLE_S, COARSE_AVG_S)
                    } else {
                        onset
                    }
                }
            };
        }
        self.finish(steady)
    }

    /// After the onset, flows that DCQCN governs and that no cap of their
    /// own holds (caps above this queue's fair level) share one state: they
    /// see the same queue, and DCQCN converges such flows to equal rates
    /// (Zhu et al., §5), so only their common dynamics matter for the
    /// steady state. The merged state is the member-weighted mean; each
    /// group keeps its own counts so far as an offset.
    fn merge_unbound(&mut self) {
        let n = self.cls.len();
        let level = {
            let caps: Vec<f64> = self
                .cls
                .iter()
                .flat_map(|c| std::iter::repeat_n(c.cap, c.mult as usize))
                .collect();
            fair_level(self.cap, &caps)
        };
        let join: Vec<bool> = self
            .cls
            .iter()
            .map(|c| c.cnp_seen > 0.0 && c.start <= self.t && c.cap > 1.05 * level)
            .collect();
        let members: Vec<usize> = (0..n).filter(|&k| join[k]).collect();
        if members.len() < 2 {
            return;
        }
        let total: f64 = members.iter().map(|&k| self.cls[k].mult).sum();
        let mean = |f: &dyn Fn(&Class) -> f64| -> f64 {
            members
                .iter()
                .map(|&k| f(&self.cls[k]) * self.cls[k].mult)
                .sum::<f64>()
                / total
        };
        let ticks = members
            .iter()
            .map(|&k| self.cls[k].ticks)
            .max()
            .unwrap_or(0);
        let mut ring = vec![0.0; CUT_TICKS];
        for j in 0..CUT_TICKS.min(ticks + 1) {
            // Cumulative cuts j periods ago, aligned on the present.
            ring[(ticks + CUT_TICKS - j) % CUT_TICKS] = mean(&|c: &Class| {
                if j <= c.ticks {
                    c.cut_ring[(c.ticks + CUT_TICKS - j) % CUT_TICKS]
                } else {
                    0.0
                }
            });
        }
        let first = &self.cls[members[0]];
        let merged = Class {
            mult: total,
            cap: members
                .iter()
                .map(|&k| self.cls[k].cap)
                .fold(f64::INFINITY, f64::min),
            start: first.start,
            rc: mean(&|c| c.rc),
            rt: mean(&|c| c.rt),
            alpha: mean(&|c| c.alpha),
            cnp_seen: mean(&|c| c.cnp_seen),
            tick_cnp: mean(&|c| c.tick_cnp),
            tick_bytes: mean(&|c| c.tick_bytes),
            cuts: mean(&|c| c.cuts),
            cut_ring: ring,
            ticks,
            clamp_w: mean(&|c| c.clamp_w),
            backlog: members.iter().map(|&k| self.cls[k].backlog).sum(),
            paused: first.paused,
            since_frame: first.since_frame,
            c: Counters::default(),
        };
        // New states: the others in order, then the merged one.
        let mut index = vec![0; n];
        let mut cls = Vec::with_capacity(n - members.len() + 1);
        for k in 0..n {
            if !join[k] {
                index[k] = cls.len();
                cls.push(self.cls[k].clone());
            }
        }
        let m = cls.len();
        for &k in &members {
            index[k] = m;
        }
        cls.push(merged);
        for g in &mut self.groups {
            if join[g.state] {
                g.offset = self.cls[g.state].c.plus(g.offset);
            }
            g.state = index[g.state];
        }
        // Per-member quantities in flight: the merged state's is the mean.
        let nn = cls.len();
        let remap = |ring: &[f64], slots: usize| -> Vec<f64> {
            let mut out = vec![0.0; slots * nn];
            for s in 0..slots {
                for k in 0..n {
                    let v = ring[s * n + k];
                    out[s * nn + index[k]] += if join[k] {
                        v * self.cls[k].mult / total
                    } else {
                        v
                    };
                }
            }
            out
        };
        self.np_ring = remap(&self.np_ring, self.mask + 1);
        self.rp_ring = remap(&self.rp_ring, self.mask + 1);
        self.arr = vec![0.0; nn];
        self.cls = cls;
        self.reset_drop_ring();
    }

    /// Restarts the drop history at the present (drops in flight across a
    /// change of step or of states are forgotten; the onset's drops are
    /// long past by then).
    fn reset_drop_ring(&mut self) {
        let n = self.cls.len();
        self.drop_ring = (0..=self.mask)
            .flat_map(|_| self.cls.iter().map(|c| c.c.drops))
            .collect();
        debug_assert_eq!(self.drop_ring.len(), (self.mask + 1) * n);
    }

    fn finish(self, steady: Steady) -> QueueTrace {
        let rates = steady.rates;
        let tx = rates[0];
        let oos: f64 = self
            .groups
            .iter()
            .enumerate()
            .map(|(k, g)| rates[QUEUE_FIELDS + k * FLOW_FIELDS + 5] * g.mult)
            .sum();
        let goodput = if tx > 0.0 {
            (1.0 - oos / tx).clamp(0.0, 1.0)
        } else {
            1.0
        };
        QueueTrace {
            congested: self.congested,
            class_of: self.class_of,
            classes: self.groups.len(),
            times: self.times,
            samples: self.samples,
            throughput_gbps: tx * self.mtu * 8.0 / 1e9,
            rates,
            goodput,
            mean_queue: steady.mean_queue,
        }
    }

    /// Moves the clock forward to `t` at steady `rates` without simulating.
    fn advance_to(&mut self, t: f64, rates: &[f64]) {
        let secs = t - self.t;
        if secs <= 0.0 {
            return;
        }
        let mut row = Vec::new();
        self.row(&mut row);
        for (v, r) in row.iter_mut().zip(rates) {
            *v += r * secs;
        }
        self.tx = row[0];
        self.marks = row[1];
        // Only before the last segment, so before any merge: group k is
        // state k.
        for (k, g) in self.groups.iter().enumerate() {
            let own = Counters::from_row(&row[QUEUE_FIELDS + k * FLOW_FIELDS..]);
            let mut c = own;
            c.ecn -= g.offset.ecn;
            c.cnp -= g.offset.cnp;
            c.pause_frames -= g.offset.pause_frames;
            c.pause_us -= g.offset.pause_us;
            c.drops -= g.offset.drops;
            c.oos -= g.offset.oos;
            c.retx -= g.offset.retx;
            self.cls[g.state].c = c;
        }
        self.t = t;
        self.record();
    }

    /// Simulates `span` seconds at the current step, sampling densely at
    /// first, and returns the steady rates of the last `avg_span`, taken
    /// over whole periods of the queue's oscillation when it oscillates.
    fn simulate_span(&mut self, span: f64, avg_span: f64) -> Steady {
        let steps = ((span / self.dt).round() as usize).max(2);
        let avg = ((avg_span / self.dt).round() as usize).clamp(1, steps / 2);
        let from = steps - avg;
        let snap_every = (avg / SNAPSHOTS).max(1);
        let mut qs = Vec::with_capacity(avg);
        let mut snaps = Vec::with_capacity((avg / snap_every + 2) * self.width());
        let mut next_sample = self.t;
        for i in 0..steps {
            if i >= from && (i - from) % snap_every == 0 {
                self.row(&mut snaps);
            }
            self.step_once();
            if i >= from {
                qs.push(self.q);
            }
            // Samples: every µs for the first 50 µs after the segment's
            // start (where marks, CNPs and pauses begin), every 5 µs to
            // 200 µs, 20 µs to 1 ms, 100 µs to 3 ms, then every 500 µs (the
            // settled part is nearly linear).
            if self.t >= next_sample || i + 1 == steps {
                let since = self.t - self.seg_start;
                let gap = match since {
                    s if s < 50e-6 => 1e-6,
                    s if s < 200e-6 => 5e-6,
                    s if s < 1e-3 => 20e-6,
                    s if s < 3e-3 => 100e-6,
                    _ => 500e-6,
                };
                next_sample = self.t + gap - self.dt / 2.0;
                self.record();
            }
        }
        let w = self.width();
        let mut end = Vec::new();
        self.row(&mut end);
        snaps.extend_from_slice(&end);
        let last = snaps.len() / w - 1;
        // Snapshot j is at step from + j·snap_every (the last at `steps`).
        // Whole periods: from the first to the last upward crossing of the
        // mean occupancy, when the queue swings at all.
        let mean = qs.iter().sum::<f64>() / qs.len() as f64;
        let (lo, hi) = qs
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &x| {
                (a.min(x), b.max(x))
            });
        let band = 0.1 * (hi - lo);
        let mut ups = Vec::new();
        let mut below = false;
        for (i, &x) in qs.iter().enumerate() {
            if x < mean - band {
                below = true;
            } else if below && x >= mean {
                below = false;
                ups.push((i + 1 + snap_every / 2) / snap_every);
            }
        }
        let (a, b) = match (ups.first(), ups.last()) {
            (Some(&f), Some(&l)) if band > 0.0 && l > f && (l - f) * 3 >= last => (f, l.min(last)),
            _ => (0, last),
        };
        let secs = |j: usize| (j * snap_every).min(avg) as f64 * self.dt;
        let span_s = secs(b) - secs(a);
        let ra = &snaps[a * w..(a + 1) * w];
        let rb = &snaps[b * w..(b + 1) * w];
        let mut rates: Vec<f64> = ra
            .iter()
            .zip(rb)
            .map(|(x, y)| ((y - x) / span_s).max(0.0))
            .collect();
        rates[3] = 0.0; // the watermark holds its peak
        let qa = (a * snap_every).min(avg);
        let qb = (b * snap_every).min(avg).max(qa + 1);
        let qr = &qs[qa..qb.min(qs.len())];
        Steady {
            rates,
            mean_queue: qr.iter().sum::<f64>() / qr.len().max(1) as f64,
        }
    }

    fn step_once(&mut self) {
        let n = self.cls.len();
        let dt = self.dt;
        let mask = self.mask;
        let slot = self.step & mask;
        let t = self.t;

        // PFC: the switch's hysteresis; senders act on it rtt_steps later.
        if self.pfc {
            if self.q >= self.xoff {
                self.switch_xoff = true;
            } else if self.q <= self.xon {
                self.switch_xoff = false;
            }
        }
        let pr = self.rtt_slot;
        let sender_paused = std::mem::replace(&mut self.pause_ring[pr], self.switch_xoff);

        // Feedback landing now. Receivers: marked packets, for which they
        // send CNPs, at most one per flow per tau: for marked packets at
        // rate r that is a renewal every tau + 1/r. Senders: CNPs.
        let rp_slot = ((self.step + self.rtt_steps) & mask) * n;
        let tau = self.p.min_time_between_cnps_us * 1e-6;
        for (k, cl) in self.cls.iter_mut().enumerate() {
            let m = std::mem::take(&mut self.np_ring[slot * n + k]);
            if m > 0.0 {
                cl.c.ecn += m;
                if self.dcqcn {
                    let r = m / dt;
                    let cnp = r / (1.0 + r * tau) * dt;
                    cl.c.cnp += cnp;
                    self.rp_ring[rp_slot + k] += cnp;
                }
            }
            let x = std::mem::take(&mut self.rp_ring[slot * n + k]);
            cl.tick_cnp += x;
            cl.cnp_seen += x;
        }

        // Arrivals, and pause accounting on the senders' side.
        let mut arr = std::mem::take(&mut self.arr);
        let mut total = 0.0;
        for (a, cl) in arr.iter_mut().zip(self.cls.iter_mut()) {
            *a = 0.0;
            let active = t >= cl.start;
            let paused = active && sender_paused;
            if paused {
                if cl.paused {
                    cl.since_frame += dt;
                    if cl.since_frame >= self.refresh {
                        cl.c.pause_frames += 1.0;
                        cl.since_frame -= self.refresh;
                    }
                } else {
                    cl.c.pause_frames += 1.0;
                    cl.since_frame = 0.0;
                }
                cl.c.pause_us += dt * 1e6;
            }
            cl.paused = paused;
            if active && !paused {
                *a = cl.rc * cl.mult * dt;
                cl.tick_bytes += cl.rc * dt;
                total += *a;
            }
        }

        // The queue drains at capacity and, lossy, drops what the buffer
        // cannot hold (tail drop: each class loses its share of arrivals).
        let per_step = self.cap * dt;
        let mut q = self.q + total - per_step;
        let mut dropped = 0.0;
        if !self.pfc && q > self.buffer {
            dropped = q - self.buffer;
            q = self.buffer;
        }
        let accepted = total - dropped;
        let content = self.q + accepted;
        let out = if q < 0.0 {
            q = 0.0;
            content
        } else {
            per_step
        };
        let keep = if total > 0.0 { accepted / total } else { 1.0 };

        // ECN. A packet x bytes into this step's arrivals joins the queue at
        // q0 + x·(1 − per_step/accepted) and leaves (q0 + x)/C from now. It
        // is marked by the occupancy it joins at; the receiver sees it leave,
        // so the marks spread over the slots this step's arrivals leave in.
        if let Some(ecn) = &self.ecn {
            if accepted > 0.0 && q.max(self.q) > ecn.kmin_bytes {
                let mut spread = std::mem::take(&mut self.spread);
                spread.clear();
                let (s0, s1) = (self.q / per_step, content / per_step);
                let slope = 1.0 - per_step / accepted;
                let mut joined_marked = 0.0;
                let mut j = (s0 as usize) as f64; // s0 ≥ 0
                while j < s1 && j <= mask as f64 {
                    let lo = s0.max(j);
                    let hi = s1.min(j + 1.0);
                    let pm = ecn.probability(self.q + ((lo + hi) / 2.0 - s0) * per_step * slope);
                    if pm > 0.0 {
                        let w = (hi - lo) / (s1 - s0) * pm;
                        let off = (j as usize).max(1);
                        spread.push((((self.step + off) & mask) * n, w));
                        joined_marked += w;
                    }
                    j += 1.0;
                }
                if joined_marked > 0.0 {
                    for (k, &a) in arr.iter().enumerate() {
                        if a > 0.0 {
                            let pkts = a * keep / self.mtu;
                            self.marks += joined_marked * pkts;
                            let per_member = pkts / self.cls[k].mult;
                            for &(base, w) in &spread {
                                self.np_ring[base + k] += per_member * w;
                            }
                        }
                    }
                }
                self.spread = spread;
            }
        }

        // Departures: each class's share of what the queue holds (a fluid
        // FIFO). Go-back-N: after a drop the receiver discards the flow's
        // packets until the resent one arrives, a base RTT plus the
        // queueing delay later, and the sender resends them all; with D
        // drops per such window a flow spends D/(1+D) of the time there.
        let window = (self.rtt_steps + (self.q / per_step) as usize).min(mask);
        let back = ((self.step + mask + 1 - window) & mask) * n;
        for (k, cl) in self.cls.iter_mut().enumerate() {
            let a = arr[k] * keep;
            let d = if content > 0.0 {
                out * (cl.backlog + a) / content
            } else {
                0.0
            };
            cl.backlog = (cl.backlog + a - d).max(0.0);
            if !self.pfc {
                let lost = arr[k] * (1.0 - keep) / cl.mult / self.mtu;
                cl.c.drops += lost;
                self.drop_ring[slot * n + k] = cl.c.drops;
                let dr = (cl.c.drops - self.drop_ring[back + k]).max(0.0);
                let oos = d / cl.mult / self.mtu * dr / (1.0 + dr);
                cl.c.oos += oos;
                cl.c.retx += oos + lost;
            }
        }
        self.arr = arr;
        self.tx += out / self.mtu;
        self.q = q;
        self.watermark = self.watermark.max(q);
        self.step += 1;
        self.rtt_slot += 1;
        if self.rtt_slot == self.rtt_steps {
            self.rtt_slot = 0;
        }
        self.t += dt;

        self.tick_left -= 1;
        if self.tick_left == 0 {
            self.tick_left = self.tick_steps;
        }
        if self.dcqcn && self.tick_left == self.tick_steps {
            let span = self.tick_steps as f64 * dt;
            for cl in &mut self.cls {
                // A flow's DCQCN state machine starts with its first CNP.
                if cl.cnp_seen > 0.0 {
                    rp_tick(cl, self.p, span, self.alpha_decay);
                }
            }
        }
    }
}

/// Time between evaluations of the increase events (their timescales are
/// the timer, 300 µs, and the byte counter, ≥ 40 µs at 400G).
const INC_S: f64 = 32e-6;

/// One DCQCN monitor period of one class, in expected values over its
/// members: the cut CNPs cause, α's moving average, and (every `INC_S`)
/// the increase events of the timer and the byte
/// counter. A counter with period w fires its k-th event k·w after a
/// member's last cut, and a member has had no cut for the last s seconds
/// with probability e^{−N(s)}, N(s) the expected cuts within s (cuts taken
/// as Poisson).
fn rp_tick(cl: &mut Class, p: &DcqcnParams, span: f64, decay: f64) {
    let x = std::mem::take(&mut cl.tick_cnp);
    let t_timer = p.rpg_time_reset_us * 1e-6;
    let mbps = 1e6 / 8.0;
    let min_rate = (p.rpg_min_rate_mbps * mbps).min(cl.cap);

    // Cuts: at most one per rate_reduce_monitor_period, as many as CNPs
    // arrived (expected). The target drops to the current rate if the timer
    // has raised the rate since the previous cut
    // (clamp_tgt_rate_after_time_inc): `clamp_w`, the chance of that.
    let period = p.rate_reduce_monitor_period_us * 1e-6;
    let cuts = x.min((span / period).max(1.0));
    if cuts > 0.0 {
        let keep_min = (p.rpg_min_dec_fac / 100.0).clamp(0.0, 1.0);
        let factor = (1.0 - cl.alpha / 2.0).max(keep_min);
        let clamp = if p.clamp_tgt_rate {
            1.0
        } else if p.clamp_tgt_rate_after_time_inc {
            cl.clamp_w
        } else {
            0.0
        };
        cl.rt -= (cl.rt - cl.rc) * cuts.min(1.0) * clamp;
        let kept = if cuts <= 1.0 {
            1.0 - cuts * (1.0 - factor)
        } else {
            factor.powf(cuts)
        };
        cl.rc = (cl.rc * kept).max(min_rate);
    }

    // α, every dce_tcp_rtt: towards 1 if a CNP arrived in that period.
    let a_period = p.dce_tcp_rtt_us * 1e-6;
    let cnp_in_period = (x / span * a_period).min(1.0);
    let next = cl.alpha * decay + (1.0 - decay) * cnp_in_period;
    cl.alpha += (next - cl.alpha) * cl.cnp_seen.min(1.0);

    cl.cuts += cuts;
    cl.ticks += 1;
    cl.cut_ring[cl.ticks % CUT_TICKS] = cl.cuts;
    let inc_ticks = ((INC_S / span).round() as usize).max(1);
    if cl.ticks % inc_ticks != 0 {
        return;
    }

    // Increase events over the last INC_S. Stage k of a counter
    // with period w fires at rate (1/w)·(P(quiet k·w) − P(quiet (k+1)·w)):
    // fast recovery for k ≤ F, then additive, or hyper once both counters
    // are past F.
    let tick = span;
    let span = span * inc_ticks as f64;
    let bytes = std::mem::take(&mut cl.tick_bytes);
    // No cut within the last `s` seconds, and the counters have run that
    // long (they start with the first CNP).
    let quiet = |cl: &Class, s: f64| -> f64 {
        let back = s / tick;
        if back > cl.ticks as f64 {
            return 0.0;
        }
        let kept = cl.ticks.min(CUT_TICKS - 1);
        let back = back.min(kept as f64);
        let i = back as usize; // back ≥ 0: truncation is floor
        let at = |j: usize| cl.cut_ring[(cl.ticks + CUT_TICKS - j) % CUT_TICKS];
        let lo = at(i);
        let then = if i < kept {
            lo + (at(i + 1) - lo) * (back - i as f64)
        } else {
            lo
        };
        exp_neg(cl.cuts - then)
    };
    let f = p.rpg_threshold.max(0.0).round();
    let sent = bytes / span;
    let w_bytes = if sent > 0.0 {
        p.rpg_byte_reset_bytes / sent
    } else {
        f64::INFINITY
    };
    // (first event, past F) probabilities per counter; the slower counter's
    // "past F" is both counters' (hyper increase).
    let stages = |w: f64| -> (f64, f64) {
        if w.is_finite() && w > 0.0 {
            let first = quiet(cl, w);
            (first, quiet(cl, (f + 1.0) * w).min(first))
        } else {
            (0.0, 0.0)
        }
    };
    let timer = stages(t_timer);
    let byte = stages(w_bytes);
    cl.clamp_w = timer.0;
    let hyper = timer.1.min(byte.1);
    let (mut n_fr, mut n_ai, mut n_hi) = (0.0, 0.0, 0.0);
    for ((first, past_f), w) in [(timer, t_timer), (byte, w_bytes)] {
        if first > 0.0 {
            let per = span / w;
            n_fr += (first - past_f) * per;
            n_ai += (past_f - hyper) * per;
            n_hi += hyper * per;
        }
    }
    let events = n_fr + n_ai + n_hi;
    if events > 0.0 {
        let step = n_ai * p.rpg_ai_rate_mbps + n_hi * p.rpg_hai_rate_mbps;
        cl.rt = (cl.rt + step * mbps).min(cl.cap);
        // Each event moves the current rate half way to the target.
        cl.rc += (cl.rt - cl.rc).max(0.0) * (1.0 - exp_neg(events * std::f64::consts::LN_2));
    }
    cl.rc = cl.rc.clamp(min_rate, cl.cap);
}

/// e^{−x} for x ≥ 0, to ~1e-7 relative: 2^{−x·log2 e}, the power of the
/// fraction by its Taylor polynomial. (libm's `exp` and `floor` were a
/// quarter of the run time.)
fn exp_neg(x: f64) -> f64 {
    let y = x.max(0.0) * std::f64::consts::LOG2_E;
    if y >= 1021.0 {
        return 0.0; // below the smallest normal double
    }
    let n = y as u64; // y ≥ 0: truncation is floor
    let z = -(y - n as f64) * std::f64::consts::LN_2; // in (−0.7, 0]
                                                      // e^z to z^8 (error < 0.7^9/9! ≈ 1.1e-7, ample for the probabilities
                                                      // and rate factors it serves), by Estrin's scheme: a short dependency
                                                      // chain.
    let z2 = z * z;
    let z4 = z2 * z2;
    let p01 = 1.0 + z;
    let p23 = 1.0 / 2.0 + z / 6.0;
    let p45 = 1.0 / 24.0 + z / 120.0;
    let p67 = 1.0 / 720.0 + z / 5040.0;
    let e = (p01 + z2 * p23) + z4 * ((p45 + z2 * p67) + z4 / 40320.0);
    e * f64::from_bits((1023 - n) << 52)
}

/// The max-min level of one link of capacity `cap` over demands `offered`:
/// λ with Σ min(offered, λ) = cap (infinite when everything fits).
fn fair_level(cap: f64, offered: &[f64]) -> f64 {
    let mut v: Vec<f64> = offered.iter().copied().filter(|&x| x > 0.0).collect();
    v.sort_by(f64::total_cmp);
    let mut left = cap;
    let mut n = v.len();
    for x in v {
        if x * n as f64 >= left {
            return left / n as f64;
        }
        left -= x;
        n -= 1;
    }
    f64::INFINITY
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 400G at MTU 4096: 400 × 4096 / (4096 + 82) Gb/s of payload.
    const C: f64 = 392.15;

    /// An 8-into-1 incast's queue at 400G. ECN as NVIDIA's lossless profile
    /// (150 KB–1.5 MB, 20 %); PFC xoff 500 KB, inside that ramp, so ECN
    /// starts marking 350 KB before PFC would pause, with 100 KB (25 MTU
    /// packets, 2 µs of drain) of hysteresis; 4 MB of buffer for a lossy
    /// queue; base RTT 4 µs, twice the emulator's one-way latency through
    /// leaf–spine–leaf (1.0 + 2 × 0.6 µs) less rounding.
    fn queue(ecn: Option<Ecn>, pfc: bool, dcqcn: bool) -> QueueConfig {
        QueueConfig {
            capacity_gbps: C,
            mtu: 4096,
            ecn,
            pfc,
            dcqcn,
            buffer_bytes: 4e6,
            xoff_bytes: 500e3,
            xon_bytes: 400e3,
            base_rtt_us: 4.0,
        }
    }

    fn nvidia_ecn() -> Option<Ecn> {
        Some(Ecn {
            kmin_bytes: 150e3,
            kmax_bytes: 1500e3,
            pmax: 0.2,
        })
    }

    /// `n` senders at line rate, each with its fair share.
    fn incast(n: usize) -> Vec<FlowIn> {
        vec![
            FlowIn {
                offered_gbps: C,
                share_gbps: C / n as f64,
                start_s: 0.0,
            };
            n
        ]
    }

    /// First time (scanning every 0.25 µs over the first 2 ms) at which
    /// `pred` holds.
    fn first(tr: &QueueTrace, pred: impl Fn(&QueueCounts) -> bool) -> Option<f64> {
        (0..8000)
            .map(|i| i as f64 * 0.25e-6)
            .find(|&t| pred(&tr.at(t)))
    }

    /// Payload Gb/s out of the queue between t0 and t1.
    fn gbps(tr: &QueueTrace, t0: f64, t1: f64) -> f64 {
        (tr.at(t1).tx_pkts - tr.at(t0).tx_pkts) * 4096.0 * 8.0 / (t1 - t0) / 1e9
    }

    #[test]
    fn dcqcn_marks_before_pfc_pauses_and_keeps_pauses_bounded() {
        let tr = QueueTrace::simulate(&queue(nvidia_ecn(), true, true), &incast(8));
        assert!(tr.congested());
        let mark = first(&tr, |c| c.ecn_marked_pkts > 0.0).unwrap();
        let seen = first(&tr, |c| c.flows[0].ecn_marked_pkts > 0.0).unwrap();
        let cnp = first(&tr, |c| c.flows[0].cnp > 0.0).unwrap();
        let pause = first(&tr, |c| c.flows[0].pause_frames > 0.0).unwrap();
        // The line-rate onset does reach xoff, but only after the queue has
        // marked and the receivers have sent CNPs.
        assert!(
            mark < pause && seen < pause && cnp < pause,
            "{mark} {seen} {cnp} {pause}"
        );
        // After the transient DCQCN holds the queue under xoff: pauses stop,
        // marks and CNPs go on.
        let (a, b) = (tr.at(0.1), tr.at(30.0));
        for (fa, fb) in a.flows.iter().zip(&b.flows) {
            assert!(fa.pause_frames > 0.0);
            assert_eq!(fa.pause_frames, fb.pause_frames);
            assert_eq!(fa.pause_us, fb.pause_us);
            assert!(fb.cnp > 100.0 * fa.cnp, "{} {}", fa.cnp, fb.cnp);
            assert_eq!(fb.drops_pkts, 0.0);
        }
        assert!(b.ecn_marked_pkts > 100.0 * a.ecn_marked_pkts);
        assert!(tr.mean_queue_bytes() > 0.0 && tr.mean_queue_bytes() < 500e3);
        // The link stays busy.
        let thru = gbps(&tr, 1.0, 2.0);
        assert!((thru - C).abs() < 0.02 * C, "{thru}");
        assert_eq!(tr.goodput_factor(), 1.0);
    }

    #[test]
    fn ecn_above_xoff_leaves_pfc_the_only_brake() {
        let high = Some(Ecn {
            kmin_bytes: 5e6,
            kmax_bytes: 10e6,
            pmax: 0.2,
        });
        let tr = QueueTrace::simulate(&queue(high, true, true), &incast(8));
        let pause = first(&tr, |c| c.flows[0].pause_frames > 0.0).unwrap();
        assert!(pause < 10e-6, "{pause}");
        let (a, b, c) = (tr.at(1.0), tr.at(2.0), tr.at(30.0));
        assert_eq!(c.ecn_marked_pkts, 0.0);
        let f = &c.flows[0];
        assert_eq!((f.ecn_marked_pkts, f.cnp), (0.0, 0.0));
        // Pauses grow linearly, and carry the steady state: senders are
        // paused 1 − C/Σoffered = 7/8 of the time.
        let per_s = b.flows[0].pause_frames - a.flows[0].pause_frames;
        assert!(per_s > 1000.0, "{per_s}");
        assert!((f.pause_frames - 30.0 * per_s).abs() < 0.01 * f.pause_frames);
        let paused = (b.flows[0].pause_us - a.flows[0].pause_us) / 1e6;
        assert!((paused - 7.0 / 8.0).abs() < 0.02, "{paused}");
        let thru = gbps(&tr, 1.0, 2.0);
        assert!((thru - C).abs() < 0.01 * C, "{thru}");
        assert_eq!(c.drops_pkts, 0.0);
    }

    #[test]
    fn without_pfc_drops_cost_go_back_n() {
        // The RoCE profile on a lossy queue: the onset overflows the buffer
        // before DCQCN has cut; then DCQCN holds the queue below it.
        let tr = QueueTrace::simulate(&queue(nvidia_ecn(), false, true), &incast(8));
        let (a, b) = (tr.at(0.1), tr.at(30.0));
        assert!(b.drops_pkts > 0.0);
        assert_eq!(b.drops_pkts, a.drops_pkts);
        for f in &b.flows {
            assert!(f.drops_pkts > 0.0 && f.out_of_sequence > 0.0);
            assert!(
                (f.retransmitted_pkts - f.drops_pkts - f.out_of_sequence).abs()
                    < 1e-6 * f.retransmitted_pkts
            );
            assert_eq!((f.pause_frames, f.pause_us), (0.0, 0.0));
        }
        assert_eq!(tr.goodput_factor(), 1.0);
        // No congestion control: drops go on, and go-back-N throws away
        // most of what crosses the queue; more senders, more drops, less
        // goodput.
        let mut last = (0.0, 1.0);
        for n in [2, 4, 8] {
            let tr = QueueTrace::simulate(&queue(nvidia_ecn(), false, false), &incast(n));
            let (a, b) = (tr.at(1.0), tr.at(2.0));
            let drops = b.drops_pkts - a.drops_pkts;
            let oos = b.flows[0].out_of_sequence - a.flows[0].out_of_sequence;
            assert!(drops > last.0 && oos > 0.0, "{n}: {drops} {oos}");
            assert!(tr.goodput_factor() < last.1, "{n}: {}", tr.goodput_factor());
            assert_eq!(b.flows[0].pause_frames, 0.0);
            last = (drops, tr.goodput_factor());
        }
        assert!(last.1 < 0.5, "{}", last.1);
    }

    #[test]
    fn under_capacity_nothing_congests() {
        let flows = vec![
            FlowIn {
                offered_gbps: 0.4 * C,
                share_gbps: 0.4 * C,
                start_s: 0.0,
            };
            2
        ];
        for cfg in [
            queue(nvidia_ecn(), true, true),
            queue(nvidia_ecn(), false, false),
        ] {
            let tr = QueueTrace::simulate(&cfg, &flows);
            assert!(!tr.congested());
            let c = tr.at(30.0);
            assert_eq!(
                (c.ecn_marked_pkts, c.drops_pkts, c.watermark_bytes),
                (0.0, 0.0, 0.0)
            );
            assert!(c.flows.iter().all(|f| *f == FlowCounts::default()));
            let sent = 0.8 * C * 1e9 / 8.0 * 30.0 / 4096.0;
            assert!((c.tx_pkts - sent).abs() < 1e-6 * sent);
            assert_eq!(tr.goodput_factor(), 1.0);
            assert_eq!(tr.mean_queue_bytes(), 0.0);
        }
    }

    #[test]
    fn counts_start_at_zero_and_never_decrease() {
        let late = vec![
            FlowIn {
                offered_gbps: 0.6 * C,
                share_gbps: 0.5 * C,
                start_s: 0.0,
            },
            FlowIn {
                offered_gbps: 0.6 * C,
                share_gbps: 0.5 * C,
                start_s: 0.02,
            },
        ];
        let cases = [
            (queue(nvidia_ecn(), true, true), incast(8)),
            (queue(nvidia_ecn(), true, false), incast(8)),
            (queue(nvidia_ecn(), false, true), incast(8)),
            (queue(nvidia_ecn(), false, false), incast(4)),
            (queue(nvidia_ecn(), true, true), late),
        ];
        let fields = |c: &QueueCounts| -> Vec<f64> {
            let mut v = vec![
                c.tx_pkts,
                c.ecn_marked_pkts,
                c.drops_pkts,
                c.watermark_bytes,
            ];
            for f in &c.flows {
                v.extend([
                    f.ecn_marked_pkts,
                    f.cnp,
                    f.pause_frames,
                    f.pause_us,
                    f.drops_pkts,
                    f.out_of_sequence,
                    f.retransmitted_pkts,
                ]);
            }
            v
        };
        let mut times: Vec<f64> = (0..3000).map(|i| i as f64 * 0.37e-6).collect();
        times.extend((0..400).map(|i| 1.1e-3 + i as f64 * 0.1e-3));
        times.extend([0.1, 1.0, 30.0, 3600.0]);
        times.sort_by(f64::total_cmp);
        for (cfg, flows) in cases {
            let tr = QueueTrace::simulate(&cfg, &flows);
            let zero = QueueCounts {
                flows: vec![FlowCounts::default(); flows.len()],
                ..QueueCounts::default()
            };
            assert_eq!(tr.at(0.0), zero);
            assert_eq!(tr.at(-1.0), zero);
            let mut prev = fields(&zero);
            for &t in &times {
                let now = fields(&tr.at(t));
                for (j, (p, x)) in prev.iter().zip(&now).enumerate() {
                    assert!(
                        x >= p && x.is_finite(),
                        "{cfg:?}: field {j} fell from {p} to {x} at {t}"
                    );
                }
                prev = now;
            }
            assert!(prev[0] > 0.0);
        }
    }

    #[test]
    fn a_later_start_congests_only_from_then() {
        let flows = [0.0, 0.02].map(|start_s| FlowIn {
            offered_gbps: 0.6 * C,
            share_gbps: 0.5 * C,
            start_s,
        });
        let tr = QueueTrace::simulate(&queue(nvidia_ecn(), true, true), &flows);
        assert!(tr.congested());
        let before = tr.at(0.0199);
        assert_eq!((before.ecn_marked_pkts, before.watermark_bytes), (0.0, 0.0));
        assert_eq!(before.flows[1], FlowCounts::default());
        let after = tr.at(0.03);
        assert!(after.ecn_marked_pkts > 0.0 && after.flows[1].cnp > 0.0);
        assert!(after.flows[0].cnp > 0.0);
    }

    #[test]
    fn a_flow_held_by_another_bottleneck_sends_at_its_share() {
        // Four line-rate senders, one of which is limited to 20 Gb/s on
        // another link: it crosses this queue at 20 Gb/s, and it is marked
        // less than the others.
        let mut flows = incast(4);
        flows[0].share_gbps = 20.0;
        for f in &mut flows[1..] {
            f.share_gbps = (C - 20.0) / 3.0;
        }
        let tr = QueueTrace::simulate(&queue(nvidia_ecn(), true, true), &flows);
        let c = tr.at(1.0);
        assert!(c.flows[0].ecn_marked_pkts < 0.5 * c.flows[1].ecn_marked_pkts);
        assert_eq!(c.flows[1], c.flows[2]);
    }

    #[test]
    fn helpers() {
        for x in [0.0, 1e-9, 0.3, 1.0, 7.5, 40.0, 700.0] {
            let (a, b) = (exp_neg(x), (-x).exp());
            assert!((a - b).abs() <= 2e-7 * b, "{x}: {a} {b}");
        }
        assert_eq!(exp_neg(1e6), 0.0);
        assert_eq!(fair_level(100.0, &[10.0, 50.0, 50.0]), 45.0);
        assert_eq!(fair_level(100.0, &[10.0, 20.0]), f64::INFINITY);
        let ecn = nvidia_ecn().unwrap();
        assert_eq!(ecn.probability(150e3), 0.0);
        assert!((ecn.probability(825e3) - 0.1).abs() < 1e-12);
        assert_eq!(ecn.probability(1500e3), 0.2);
        assert_eq!(ecn.probability(1500e3 + 1.0), 1.0);
    }

    #[test]
    #[ignore = "timing, not a check: cargo test --release -- --ignored --nocapture"]
    fn time_one_simulate() {
        let spread: Vec<FlowIn> = (0..16)
            .map(|i| FlowIn {
                offered_gbps: C * (0.5 + i as f64 / 32.0),
                share_gbps: C / 16.0,
                start_s: 0.0,
            })
            .collect();
        let cases = [
            (
                "8 identical flows, PFC + DCQCN",
                queue(nvidia_ecn(), true, true),
                incast(8),
            ),
            (
                "8 identical flows, PFC only",
                queue(nvidia_ecn(), true, false),
                incast(8),
            ),
            (
                "16 identical flows, PFC + DCQCN",
                queue(nvidia_ecn(), true, true),
                incast(16),
            ),
            (
                "16 distinct flows, PFC + DCQCN",
                queue(nvidia_ecn(), true, true),
                spread,
            ),
        ];
        for (name, cfg, flows) in cases {
            // The machine may be shared: the best of several rounds.
            let best = (0..7)
                .map(|_| {
                    let t0 = std::time::Instant::now();
                    for _ in 0..5 {
                        std::hint::black_box(QueueTrace::simulate(&cfg, &flows));
                    }
                    t0.elapsed().as_secs_f64() / 5.0
                })
                .fold(f64::INFINITY, f64::min);
            eprintln!("{name}: {:.0} µs per simulate()", best * 1e6);
        }
    }
}
