//! One batch on the emulated fabric, in virtual time.
//!
//! A batch is every step of one round started together, plus any timed
//! command (`Invocation::at`): a fault's `ip link set … down`, a counter
//! read every second. The batch is cut into *segments* at every change of
//! link or routing state; within a segment paths and max-min rates are
//! constant. Workloads integrate their rates over the segments (so a flap
//! lowers an average, and an outage longer than a QP's retry budget fails
//! it), counters accrue from the same rates, and a read at time t sees
//! exactly what had happened by t.

use std::collections::HashMap;
use std::sync::Arc;

use crate::config::model::{End, NicId};
use crate::exec::types::{InvocationOutput, StepCommands};

use super::congestion::{Ecn, FlowIn, QueueConfig, QueueCounts, QueueTrace};
use super::fabric::{goodput_factor, Fabric, IPPROTO_TCP, ROCE_OVERHEAD_BYTES};
use super::noise::Wobble;
use super::share::{self, Demand};
use super::tcp::{self, TcpSeg};
use super::world::{Change, EndRef, World};
use super::{Emulator, Parsed};

/// Seconds a leaf's or spine's BGP sessions take to come back after the
/// routing daemons restart (FRR with default timers re-establishes in a few
/// seconds once the peer's TCP session is reset).
pub const ROUTING_RESTART_S: f64 = 5.0;
/// Seconds a BGP session takes to carry routes again after `no neighbor X
/// shutdown`: the unshut end connects at once and OPEN and KEEPALIVE cross
/// in milliseconds (FRR on the lab: Established within 0.1 s); then the
/// UPDATEs and the switch's route programming, a round second here.
pub const SESSION_UP_S: f64 = 1.0;
/// Seconds a switch takes to reboot and bring its ports up again.
pub const REBOOT_S: f64 = 90.0;
/// A RoCE switch queue: occupancy at which PFC pauses the sender (Xoff) and
/// resumes it (Xon). A lossless priority draws on the large lossless pool
/// (Spectrum-class switches have tens of MB of shared buffer and a dynamic
/// threshold that gives one congested queue MBs), so Xoff sits above the ECN
/// range and DCQCN gets to act first.
pub const XOFF_BYTES: f64 = 2048.0 * 1024.0;
pub const XON_BYTES: f64 = 1900.0 * 1024.0;
/// A priority without PFC is served from the lossy pool, which a switch tuned
/// for RoCE keeps small: what one queue may hold before it drops.
pub const LOSSY_BUFFER_BYTES: f64 = 256.0 * 1024.0;
/// Base round trip of a leaf–spine–leaf path, µs (feedback delay).
pub const BASE_RTT_US: f64 = 5.0;
/// Packets in flight on one QP at line rate and the base RTT: what go-back-N
/// resends after one lost packet.
fn window_pkts(gbps: f64, mtu: u32) -> f64 {
    (gbps * 1e3 * BASE_RTT_US / 8.0 / f64::from(mtu)).max(1.0)
}

/// Seconds a QP keeps retrying before it gives up: 4.096 µs × 2^timeout per
/// try, retry count + 1 tries (IB spec, local ACK timeout).
pub fn retry_budget_s(timeout_exp: u32, retries: u32) -> f64 {
    4.096e-6 * 2f64.powi(timeout_exp.min(31) as i32) * f64::from(retries + 1)
}

/// One flow: a RoCE QP's direction, or one TCP stream of an iperf3 test.
#[derive(Debug, Clone)]
pub struct Flow {
    pub src: NicId,
    pub dst: NicId,
    pub sport: u16,
    /// Largest rate the QP can use on its own (message-rate cap), Gb/s.
    pub cap: f64,
    /// When it moves data; set once the workload's outcome is known.
    pub window: (f64, f64),
    /// A TCP stream: lossy class, its own 5-tuple and its process's CPU.
    pub tcp: Option<TcpFlow>,
    /// Spans of the window in which it sends nothing (a TCP stream waiting
    /// for its retransmission timer after an outage).
    pub gaps: Vec<(f64, f64)>,
    /// What its sending host pushes of its NIC in this execution
    /// (`noise`): a virtual link the sharing respects, shared by every flow
    /// with the same key. Only the sender's: a receiver's limit would sit
    /// behind the switch queue, where the sharing cannot put it without
    /// hiding the queue a slower receiver builds.
    pub host: Option<HostLimit>,
    /// Its tick-by-tick dips (`noise`): the share of its rate it moves at
    /// each instant, for goodput and byte counters alike.
    pub wobble: Option<Wobble>,
}

/// A host-side limit: `eff` of what the NIC's cable carries, as one more
/// link of the sharing (keyed, so the flows of one NIC in one execution
/// share it).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HostLimit {
    pub key: u64,
    pub eff: f64,
}

impl Flow {
    pub fn roce(src: NicId, dst: NicId, sport: u16, cap: f64, window: (f64, f64)) -> Self {
        Flow {
            src,
            dst,
            sport,
            cap,
            window,
            tcp: None,
            gaps: Vec::new(),
            host: None,
            wobble: None,
        }
    }

    /// Seconds of [lo, hi] at the flow's own pace: `hi − lo` less its
    /// wobble's dips (no window, no gaps).
    pub fn gain(&self, lo: f64, hi: f64) -> f64 {
        match &self.wobble {
            Some(w) => w.integral(lo, hi),
            None => (hi - lo).max(0.0),
        }
    }

    /// Seconds of [lo, hi] inside the window and outside the gaps, at the
    /// flow's own pace.
    fn active(&self, lo: f64, hi: f64) -> f64 {
        let a = lo.max(self.window.0);
        let b = hi.min(self.window.1);
        if b <= a {
            return 0.0;
        }
        let idle: f64 = self
            .gaps
            .iter()
            .map(|&(g0, g1)| self.gain(a.max(g0), b.min(g1)))
            .sum();
        (self.gain(a, b) - idle).max(0.0)
    }
}

/// What makes a flow a TCP stream.
#[derive(Debug, Clone)]
pub struct TcpFlow {
    pub dport: u16,
    /// The iperf3 process (one per client): its streams share one CPU thread.
    pub process: usize,
    /// Goodput that process's thread sustains, Gb/s.
    pub process_gbps: f64,
    /// The netdev MTU.
    pub mtu: u32,
    /// Carried by the host itself or the management network (an address
    /// of the same host, or a management address): no fabric link.
    pub off_fabric: bool,
}

/// Rates and paths between two state changes.
pub struct Segment {
    pub t0: f64,
    pub t1: f64,
    pub paths: Vec<Option<Vec<usize>>>,
    /// Share of each flow on the wire, Gb/s (zero without a path).
    pub rate: Vec<f64>,
    /// Fraction of the share that is new data (losses force resends).
    pub eff: Vec<f64>,
    pub queues: Vec<Queue>,
    /// Mean queueing delay of each congested directed link, µs.
    pub delay_us: HashMap<usize, f64>,
    /// TCP streams' state (`None` for RoCE flows; empty when the batch
    /// has no TCP flow).
    pub tcp: Vec<Option<TcpSeg>>,
}

impl Segment {
    pub fn goodput(&self, f: usize) -> f64 {
        self.rate[f] * self.eff[f]
    }
}

/// A congested switch egress queue within a segment.
pub struct Queue {
    pub dir: usize,
    pub trace: Arc<QueueTrace>,
    /// Flows through it, in the trace's order, with the position of this
    /// link in each flow's path.
    pub flows: Vec<(usize, usize)>,
}

/// A timed command or change, in the order it happens.
#[derive(Debug, Clone)]
pub enum Event {
    /// A fault command of the batch (step, invocation).
    Cmd(usize, usize),
    Change(Change),
}

/// Probability that a packet of `bytes` on the wire carries a bit error.
pub fn packet_error(ber: f64, bytes: f64) -> f64 {
    if ber <= 0.0 {
        0.0
    } else {
        1.0 - (1.0 - ber).powf(bytes * 8.0)
    }
}

/// Integrates one flow's piecewise-constant `rate` (Gb/s) over [a, b] at
/// the flow's own pace (its wobble): gigabits.
pub fn integrate_flow(
    segs: &[Segment],
    flow: &Flow,
    a: f64,
    b: f64,
    rate: &dyn Fn(&Segment) -> f64,
) -> f64 {
    segs.iter()
        .map(|s| {
            let lo = a.max(s.t0);
            let hi = b.min(s.t1);
            if hi > lo {
                rate(s) * flow.gain(lo, hi)
            } else {
                0.0
            }
        })
        .sum()
}

/// The time at which `gbits` have been moved starting at `a`, or `None`
/// when the rate stays zero.
pub fn finish_time(
    segs: &[Segment],
    a: f64,
    gbits: f64,
    rate: &dyn Fn(&Segment) -> f64,
) -> Option<f64> {
    let mut left = gbits;
    for s in segs {
        if s.t1 <= a {
            continue;
        }
        let lo = a.max(s.t0);
        let r = rate(s);
        let span = s.t1 - lo;
        if r > 0.0 {
            if r * span >= left {
                return Some(lo + left / r);
            }
            left -= r * span;
        }
    }
    None
}

/// First time in [a, b) at which a flow set has been without a path for
/// `budget` seconds straight: when its QPs give up.
pub fn stall_failure(
    segs: &[Segment],
    flows: &[usize],
    a: f64,
    b: f64,
    budget: f64,
) -> Option<f64> {
    let mut since: Option<f64> = None;
    for s in segs {
        if s.t1 <= a || s.t0 >= b {
            continue;
        }
        let stalled = flows.iter().any(|&f| s.paths[f].is_none());
        if stalled {
            let start = *since.get_or_insert(a.max(s.t0));
            // A stall that began in the window kills the QPs once it
            // outlasts their budget, even past the window's planned end.
            if start + budget < s.t1 {
                return Some(start + budget);
            }
        } else {
            since = None;
        }
    }
    None
}

/// A fault command, as a switch driver or a host would send it.
#[derive(Debug, Clone, PartialEq)]
pub enum FaultCmd {
    /// `ip link set dev X down|up` on the end `side` of inventory link `link`.
    Link { link: usize, side: usize, up: bool },
    /// `systemctl stop|start|restart frr` on a switch.
    Routing {
        switch: usize,
        action: RoutingAction,
    },
    /// `reboot` on a switch.
    Reboot { switch: usize },
    /// `vtysh … neighbor X shutdown` (`shut`) or `no neighbor X shutdown`
    /// on the switch at end `side` of inventory link `link`.
    Peer {
        link: usize,
        side: usize,
        shut: bool,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RoutingAction {
    Stop,
    Start,
    Restart,
}

fn fault(
    fabric: &mut Fabric,
    world: &mut World,
    f: &FaultCmd,
    t: f64,
    later: &mut Vec<(f64, Change)>,
) {
    match *f {
        FaultCmd::Link { link, side, up } => fabric.admin_up[link][side] = up,
        FaultCmd::Routing { switch, action } => {
            if action != RoutingAction::Start {
                fabric.routing[switch] = false;
            }
            if action != RoutingAction::Stop && !world.rebooting[switch] {
                later.push((t + ROUTING_RESTART_S, Change::RoutingUp(switch)));
            }
        }
        FaultCmd::Reboot { switch } => {
            world.rebooting[switch] = true;
            fabric.routing[switch] = false;
            later.push((t + REBOOT_S, Change::BootDone(switch)));
        }
        // A shut session ends at once (a Cease NOTIFICATION to the peer) and
        // both ends withdraw the link's routes; it is back only once neither
        // end holds it shut.
        FaultCmd::Peer { link, side, shut } => {
            fabric.peer_shut[link][side] = shut;
            if shut {
                fabric.session_down[link] = true;
            } else if !fabric.peer_shut[link][1 - side] {
                later.push((t + SESSION_UP_S, Change::SessionUp(link)));
            }
        }
    }
}

/// Applies one event to `fabric`/`world` at time `t`, collecting the changes
/// it implies in `later`. With `counters`, link-down events and cleared
/// counters are recorded too.
#[allow(clippy::too_many_arguments)]
pub fn apply(
    inv: &crate::config::model::Inventory,
    fabric: &mut Fabric,
    world: &mut World,
    parsed: &[Vec<Parsed>],
    ev: &Event,
    t: f64,
    counters: bool,
    later: &mut Vec<(f64, Change)>,
) {
    let before: Vec<bool> = fabric.link_up.clone();
    match ev {
        Event::Change(Change::RoutingUp(s)) => fabric.routing[*s] = true,
        Event::Change(Change::ApiTimer(k)) => {
            super::api_out::fire_timer(inv, fabric, world, *k, t, later)
        }
        Event::Change(Change::SessionUp(l)) => {
            if !fabric.peer_shut[*l].contains(&true) {
                fabric.session_down[*l] = false;
            }
        }
        Event::Change(Change::BootDone(s)) => {
            world.rebooting[*s] = false;
            fabric.routing[*s] = true;
            if counters {
                world.clear_switch(*s);
            }
        }
        Event::Cmd(si, ii) => match &parsed[*si][*ii] {
            Parsed::Fault(f) => fault(fabric, world, f, t, later),
            Parsed::Api(a) => super::api_out::apply(inv, fabric, world, a, t, later),
            _ => {}
        },
    }
    fabric.refresh(inv, &world.rebooting);
    if counters {
        for (l, was) in before.iter().enumerate() {
            if *was && !fabric.link_up[l] {
                world.link_down(l);
            }
        }
        world.sync_links(inv, fabric);
    }
}

impl Emulator {
    /// Computes the segments of a batch from `start` on, on a copy of the
    /// fabric, and returns them with the ordered events and their command results.
    pub(super) fn segments(
        &mut self,
        parsed: &[Vec<Parsed>],
        flows: &[Flow],
        events: &[(f64, Event)],
    ) -> (Vec<Segment>, Vec<(f64, Event)>) {
        let mut fabric = self.fabric.clone();
        let mut world = self.world.clone();
        let mut queue: Vec<(f64, Event)> = events.to_vec();
        let mut ordered: Vec<(f64, Event)> = Vec::new();
        let mut segs = Vec::new();
        let mut t = self.now;
        loop {
            // Everything due at `t` happens before the next segment starts.
            queue.sort_by(|a, b| a.0.total_cmp(&b.0));
            while queue.first().is_some_and(|(te, _)| *te <= t) {
                let (te, ev) = queue.remove(0);
                let mut later = Vec::new();
                apply(
                    &self.inv,
                    &mut fabric,
                    &mut world,
                    parsed,
                    &ev,
                    te,
                    false,
                    &mut later,
                );
                ordered.push((te, ev));
                queue.extend(later.into_iter().map(|(tc, c)| (tc, Event::Change(c))));
                queue.sort_by(|a, b| a.0.total_cmp(&b.0));
            }
            let t1 = queue.first().map_or(f64::INFINITY, |(te, _)| *te);
            let mut seg = self.segment(&fabric, &world, flows, t, t1);
            if let Some(prev) = segs.last() {
                tcp::mark_rerouted(prev, &mut seg, &fabric);
            }
            segs.push(seg);
            if t1.is_infinite() {
                break;
            }
            t = t1;
        }
        (segs, ordered)
    }

    /// Paths, max-min rates and congested queues with the fabric as it is.
    fn segment(
        &mut self,
        fabric: &Fabric,
        world: &World,
        flows: &[Flow],
        t0: f64,
        t1: f64,
    ) -> Segment {
        let paths: Vec<Option<Vec<usize>>> = flows
            .iter()
            .map(|f| match &f.tcp {
                None => fabric.path(f.src, f.dst, f.sport),
                Some(t) if t.off_fabric => Some(Vec::new()),
                Some(t) => fabric.path_l4(f.src, f.dst, IPPROTO_TCP, f.sport, t.dport),
            })
            .collect();
        let mtu = fabric.mtu;
        let roce_eff = goodput_factor(mtu);
        // Each iperf3 process's CPU is one more "link" its streams share;
        // bit errors cap a TCP stream on their own (`tcp::mathis_gbps`).
        let mut capacity: Vec<f64> = Vec::new();
        let mut cpu_link: HashMap<usize, usize> = HashMap::new();
        // Each sending host's share of its NIC in an execution (`noise`) is
        // one more link of the sharing: a network bottleneck below it hides
        // it, as on real hosts.
        let mut host_link: HashMap<u64, usize> = HashMap::new();
        let mut own_cap = vec![f64::INFINITY; flows.len()];
        let demands: Vec<Demand> = flows
            .iter()
            .zip(&paths)
            .enumerate()
            .map(|(fi, (f, p))| {
                let Some(p) = p else {
                    return Demand {
                        cap: 0.0,
                        links: Vec::new(),
                    };
                };
                let Some(t) = &f.tcp else {
                    let mut links = p.clone();
                    if let (Some(h), true) = (&f.host, f.cap > 0.0 && !p.is_empty()) {
                        let k = *host_link.entry(h.key).or_insert_with(|| {
                            capacity.push(fabric.nic_goodput(f.src) * h.eff);
                            fabric.capacity.len() + capacity.len() - 1
                        });
                        links.push(k);
                    }
                    return Demand { cap: f.cap, links };
                };
                let to_share = roce_eff / tcp::efficiency(t.mtu);
                let k = *cpu_link.entry(t.process).or_insert_with(|| {
                    capacity.push(t.process_gbps * to_share);
                    fabric.capacity.len() + capacity.len() - 1
                });
                let ber_loss = tcp::path_loss(fabric, p, t.mtu);
                if ber_loss > 0.0 {
                    let rtt = tcp::rtt_us(p.len(), 0.0);
                    own_cap[fi] =
                        tcp::mathis_gbps(t.mtu, rtt, ber_loss) * to_share / (1.0 - ber_loss);
                }
                let mut links = p.clone();
                links.push(k);
                Demand {
                    // A control connection (cap 0) only needs its path.
                    cap: own_cap[fi].min(f.cap),
                    links,
                }
            })
            .collect();
        let mut rate = if capacity.is_empty() {
            share::max_min(&fabric.capacity, &demands)
        } else {
            let mut all = fabric.capacity.clone();
            all.extend_from_slice(&capacity);
            share::max_min(&all, &demands)
        };
        for (r, p) in rate.iter_mut().zip(&paths) {
            if p.is_none() {
                *r = 0.0;
            }
        }
        let wire_pkt = f64::from(mtu) + ROCE_OVERHEAD_BYTES;
        // Bit errors: each lost packet costs a window of resends (go-back-N).
        let mut eff: Vec<f64> = paths
            .iter()
            .zip(&rate)
            .map(|(p, &r)| {
                let loss: f64 = p
                    .iter()
                    .flatten()
                    .map(|&d| packet_error(fabric.ber[d / 2], wire_pkt))
                    .sum();
                1.0 / (1.0 + loss * window_pkts(r.max(1.0), mtu))
            })
            .collect();
        // TCP streams: goodput, loss and RTT follow from the share.
        let any_tcp = flows.iter().any(|f| f.tcp.is_some());
        let mut tcp_state: Vec<Option<TcpSeg>> = if any_tcp {
            vec![None; flows.len()]
        } else {
            Vec::new()
        };
        let mut tcp_load: HashMap<usize, f64> = HashMap::new();
        if any_tcp {
            let mut cpu_used: HashMap<usize, (f64, f64)> = HashMap::new();
            for (f, &r) in flows.iter().zip(&rate) {
                if let Some(t) = &f.tcp {
                    let e = cpu_used.entry(t.process).or_default();
                    e.0 += r;
                    e.1 = e.1.max(r);
                }
            }
            for (fi, f) in flows.iter().enumerate() {
                let Some(t) = &f.tcp else { continue };
                let r = rate[fi];
                let path = paths[fi].as_deref();
                for &d in path.unwrap_or_default() {
                    *tcp_load.entry(d).or_default() += r;
                }
                let cpu_cap = t.process_gbps * roce_eff / tcp::efficiency(t.mtu);
                let (used, top) = cpu_used.get(&t.process).copied().unwrap_or_default();
                let cpu_bound = used >= cpu_cap * (1.0 - 1e-9) && r >= top * (1.0 - 1e-9);
                let own_bound = r >= own_cap[fi] * (1.0 - 1e-9);
                let bound = if cpu_bound {
                    tcp::Bound::Cpu
                } else if own_bound {
                    tcp::Bound::Loss
                } else {
                    tcp::Bound::Network
                };
                let st = tcp::segment_state(
                    fabric,
                    path,
                    t.mtu,
                    r / roce_eff * tcp::efficiency(t.mtu),
                    bound,
                    fabric.host_link(&self.inv, f.src),
                );
                eff[fi] = tcp::efficiency(t.mtu) / roce_eff * (1.0 - st.loss);
                tcp_state[fi] = Some(st);
            }
        }
        // What each RoCE flow would push if nothing downstream held it
        // back: its NIC's port (less what TCP takes of it) shared by the
        // NIC's QPs, capped by the QP itself. TCP is in the lossy class: it
        // takes its share of a link but not a place in the RoCE queue.
        let mut per_nic: HashMap<NicId, usize> = HashMap::new();
        for (f, p) in flows.iter().zip(&paths) {
            if p.is_some() && f.tcp.is_none() {
                *per_nic.entry(f.src).or_default() += 1;
            }
        }
        let mut on_link: HashMap<usize, Vec<(usize, usize)>> = HashMap::new();
        for (fi, p) in paths.iter().enumerate() {
            if rate[fi] <= 0.0 || flows[fi].tcp.is_some() {
                continue;
            }
            for (pos, &d) in p.iter().flatten().enumerate() {
                if world.queue_config(d).is_some() {
                    on_link.entry(d).or_default().push((fi, pos));
                }
            }
        }
        let mut dirs: Vec<usize> = on_link.keys().copied().collect();
        dirs.sort_unstable();
        let mut queues = Vec::new();
        let mut delay_us = HashMap::new();
        let dcqcn = self.inv.fabric.roce.dcqcn;
        for d in dirs {
            let members = &on_link[&d];
            let cap = fabric.capacity[d] - tcp_load.get(&d).copied().unwrap_or(0.0);
            let offered: Vec<f64> = members
                .iter()
                .map(|&(fi, _)| {
                    let f = &flows[fi];
                    let n = per_nic.get(&f.src).copied().unwrap_or(1).max(1) as f64;
                    let uplink = paths[fi].as_ref().and_then(|p| p.first());
                    let tcp_out = uplink.and_then(|u| tcp_load.get(u)).copied().unwrap_or(0.0);
                    ((fabric.nic_goodput(f.src) - tcp_out).max(0.0) / n).min(f.cap)
                })
                .collect();
            if offered.iter().sum::<f64>() <= cap * (1.0 + 1e-9) {
                continue;
            }
            let Some((pfc, ecn)) = world.queue_config(d) else {
                continue;
            };
            let ins: Vec<FlowIn> = members
                .iter()
                .zip(&offered)
                .map(|(&(fi, _), &o)| FlowIn {
                    offered_gbps: o,
                    share_gbps: rate[fi],
                    start_s: (flows[fi].window.0 - t0).max(0.0),
                })
                .collect();
            let cfg = QueueConfig {
                capacity_gbps: cap,
                mtu,
                ecn: ecn.map(|(lo, hi, p)| Ecn {
                    kmin_bytes: lo as f64,
                    kmax_bytes: hi as f64,
                    pmax: f64::from(p) / 100.0,
                }),
                pfc,
                dcqcn,
                buffer_bytes: LOSSY_BUFFER_BYTES,
                xoff_bytes: XOFF_BYTES,
                xon_bytes: XON_BYTES,
                base_rtt_us: BASE_RTT_US,
            };
            let trace = self.trace(&cfg, &ins);
            if !trace.congested() {
                continue;
            }
            let g = trace.goodput_factor();
            for &(fi, _) in members {
                eff[fi] *= g;
            }
            delay_us.insert(d, trace.mean_queue_bytes() * 8.0 / (cap * 1e3));
            queues.push(Queue {
                dir: d,
                trace,
                flows: members.clone(),
            });
        }
        Segment {
            t0,
            t1,
            paths,
            rate,
            eff,
            queues,
            delay_us,
            tcp: tcp_state,
        }
    }

    /// A queue's trace, memoised on its inputs (an ECMP collision of two
    /// equal flows looks the same on every uplink).
    fn trace(&mut self, cfg: &QueueConfig, flows: &[FlowIn]) -> Arc<QueueTrace> {
        let q = |x: f64| (x * 1000.0).round() as i64;
        let mut key: Vec<i64> = vec![
            q(cfg.capacity_gbps),
            i64::from(cfg.mtu),
            i64::from(cfg.pfc),
            i64::from(cfg.dcqcn),
        ];
        if let Some(e) = &cfg.ecn {
            key.extend([q(e.kmin_bytes), q(e.kmax_bytes), q(e.pmax)]);
        }
        for f in flows {
            key.extend([q(f.offered_gbps), q(f.share_gbps), q(f.start_s)]);
        }
        if let Some(t) = self.traces.get(&key) {
            return t.clone();
        }
        let t = Arc::new(QueueTrace::simulate(cfg, flows));
        if self.traces.len() > 100_000 {
            self.traces.clear();
        }
        self.traces.insert(key, t.clone());
        t
    }

    /// Adds what the traffic of `segs` did between `a` and `b` to the counters.
    pub(super) fn accrue(&mut self, segs: &[Segment], flows: &[Flow], a: f64, b: f64) {
        if b <= a {
            return;
        }
        let mtu = f64::from(self.fabric.mtu);
        let frame = mtu + ROCE_OVERHEAD_BYTES - 20.0;
        let wire_pkt = mtu + ROCE_OVERHEAD_BYTES;
        let roce_eff = goodput_factor(self.fabric.mtu);
        let prio = self.world.roce_prio;
        for s in segs {
            let lo = a.max(s.t0);
            let hi = b.min(s.t1);
            if hi <= lo {
                continue;
            }
            for (fi, f) in flows.iter().enumerate() {
                let r = s.rate[fi];
                let Some(path) = &s.paths[fi] else { continue };
                let secs = f.active(lo, hi);
                if r <= 0.0 || secs <= 0.0 || path.is_empty() {
                    continue;
                }
                // A TCP stream: lossy class (priority 0), MTU-sized frames,
                // nothing in the RDMA counters.
                let (pkts, bytes, on_wire, p) = match &f.tcp {
                    None => {
                        let pkts = r * 1e9 / 8.0 * secs / mtu;
                        (pkts, pkts * frame, wire_pkt, prio)
                    }
                    Some(t) => {
                        let m = f64::from(t.mtu);
                        let pkts =
                            r / roce_eff * 1e9 / 8.0 * secs / (m + tcp::ETHERNET_FRAMING_BYTES);
                        let frame = m + tcp::ETHERNET_FRAMING_BYTES - 20.0;
                        (pkts, pkts * frame, m + tcp::ETHERNET_FRAMING_BYTES, 0)
                    }
                };
                for &d in path {
                    let to = self.world.end(d ^ 1);
                    self.world
                        .add_hop_prio(self.world.end(d), to, bytes, pkts, p);
                    let ber = self.fabric.ber[d / 2];
                    if ber > 0.0 {
                        let bad = pkts * packet_error(ber, on_wire);
                        // FEC corrects most errored bits; what reaches the
                        // MAC as a bad FCS is the post-FEC residue.
                        self.world.add_crc(to, bad, bad * 1000.0);
                        if f.tcp.is_some() {
                            continue;
                        }
                        let n = &mut self.world.nic[f.dst];
                        n.out_of_sequence += bad * window_pkts(r, self.fabric.mtu);
                        let sn = &mut self.world.nic[f.src];
                        sn.packet_seq_err += bad;
                        sn.retransmits += bad * window_pkts(r, self.fabric.mtu);
                    }
                }
            }
            for q in &s.queues {
                let c1 = q.trace.at(hi - s.t0);
                let c0 = q.trace.at(lo - s.t0);
                self.add_queue(q, s, &c0, &c1, prio);
            }
        }
    }

    fn add_queue(&mut self, q: &Queue, s: &Segment, c0: &QueueCounts, c1: &QueueCounts, prio: u8) {
        let p = usize::from(prio);
        let port = &mut self.world.port[q.dir];
        port.tc_ecn_marked[p] += c1.ecn_marked_pkts - c0.ecn_marked_pkts;
        port.tc_drops[p] += c1.drops_pkts - c0.drops_pkts;
        port.tc_watermark_bytes[p] = port.tc_watermark_bytes[p].max(c1.watermark_bytes);
        // Pauses go out of every ingress port feeding the queue, and spread
        // hop by hop back to the senders; a port pauses once for all the
        // flows it carries.
        let mut paused: HashMap<usize, (f64, f64)> = HashMap::new();
        for (k, &(fi, pos)) in q.flows.iter().enumerate() {
            let (Some(f1), Some(f0)) = (c1.flows.get(k), c0.flows.get(k)) else {
                continue;
            };
            let Some(path) = &s.paths[fi] else { continue };
            let d = f1.ecn_marked_pkts - f0.ecn_marked_pkts;
            let cnp = f1.cnp - f0.cnp;
            let drops = f1.drops_pkts - f0.drops_pkts;
            let (src, dst) = (self.nic_of(path[0]), self.nic_of(path[path.len() - 1] ^ 1));
            if let Some(n) = dst {
                let c = &mut self.world.nic[n];
                c.np_ecn_marked_roce_packets += d;
                c.np_cnp_sent += cnp;
                c.out_of_sequence += f1.out_of_sequence - f0.out_of_sequence;
            }
            if let Some(n) = src {
                let c = &mut self.world.nic[n];
                c.rp_cnp_handled += cnp;
                c.packet_seq_err += drops;
                c.retransmits += f1.retransmitted_pkts - f0.retransmitted_pkts;
            }
            let frames = f1.pause_frames - f0.pause_frames;
            let us = f1.pause_us - f0.pause_us;
            if frames > 0.0 || us > 0.0 {
                for &i in path[..pos].iter().rev() {
                    let e = paused.entry(i).or_default();
                    e.0 = e.0.max(frames);
                    e.1 = e.1.max(us);
                }
            }
        }
        for (i, (frames, us)) in paused {
            // Directed link i: its receiving port sends the pause, its
            // sending end receives it.
            let tx = self.world.prio(EndRef::Port(i ^ 1), prio);
            tx.tx_pause += frames;
            tx.tx_pause_duration_us += us;
            let from = self.world.end(i);
            let rx = self.world.prio(from, prio);
            rx.rx_pause += frames;
            rx.rx_pause_duration_us += us;
        }
    }

    fn nic_of(&self, port: usize) -> Option<NicId> {
        let l = &self.inv.links[port / 2];
        match if port % 2 == 0 { &l.a } else { &l.b } {
            End::Nic(n) => Some(*n),
            End::Port { .. } => None,
        }
    }

    /// Runs the events of a finished batch on the real state, in time order,
    /// accruing traffic between them and answering reads at their times.
    /// Events after `end` stay pending for later batches.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn replay(
        &mut self,
        batch: &[StepCommands],
        parsed: &[Vec<Parsed>],
        segs: &[Segment],
        flows: &[Flow],
        ordered: Vec<(f64, Event)>,
        probes: &[(f64, usize, usize)],
        end: f64,
        out: &mut [Vec<InvocationOutput>],
    ) {
        let mut cursor = self.now;
        let mut ev = ordered.into_iter().peekable();
        let mut pr = probes.iter().peekable();
        loop {
            let te = ev.peek().map_or(f64::INFINITY, |(t, _)| *t);
            let tp = pr.peek().map_or(f64::INFINITY, |(t, _, _)| *t);
            let t = te.min(tp);
            if t > end || t.is_infinite() {
                break;
            }
            self.accrue(segs, flows, cursor, t);
            cursor = cursor.max(t);
            if te <= tp {
                let Some((te, e)) = ev.next() else { break };
                // An API change answers as it applies (`api_out`).
                if let Event::Cmd(si, ii) = e {
                    if let Parsed::Api(a) = &parsed[si][ii] {
                        out[si][ii] = self.answer_api(a, &batch[si].invocations[ii].host, te);
                        self.fabric.refresh(&self.inv, &self.world.rebooting);
                        self.world.sync_links(&self.inv, &self.fabric);
                        continue;
                    }
                }
                // The changes this implies are already in `ordered`.
                let mut later = Vec::new();
                apply(
                    &self.inv,
                    &mut self.fabric,
                    &mut self.world,
                    parsed,
                    &e,
                    te,
                    true,
                    &mut later,
                );
            } else if let Some(&(t, si, ii)) = pr.next() {
                match &parsed[si][ii] {
                    Parsed::Probe(p) => {
                        out[si][ii] = self.read(p, &batch[si].invocations[ii].host, t)
                    }
                    Parsed::Api(a) => {
                        out[si][ii] = self.answer_api(a, &batch[si].invocations[ii].host, t)
                    }
                    _ => {}
                }
            }
        }
        self.accrue(segs, flows, cursor, end);
        for (t, e) in ev {
            if let Event::Change(c) = e {
                self.world.pending.push((t, c));
            }
        }
    }
}
