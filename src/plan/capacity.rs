//! What the topology can carry: the ideal max-min fair share of every step
//! among the concurrent flows of its round, from the inventory alone (NIC
//! speeds, leaf–spine link speeds, the MTU), for thresholds written as a
//! fraction of it (`expect.fair_share`).
//!
//! The model is the fluid ideal of a two-tier Clos with perfect ECMP: a
//! flow crosses its sender NIC, its leaf's uplinks as one bundle (when the
//! other end is behind another leaf), the other leaf's downlinks as one
//! bundle, and the receiver NIC; every resource is shared max-min fairly
//! (progressive filling). Static ECMP hashing does worse than this ideal (two
//! flows on one uplink while another idles), which is why a suite states an
//! allowance for cross-spine steps instead of this module guessing one. It
//! never looks at the emulator: a real pod gets the same numbers.

use crate::config::check_suite::{Test, TestKind};
use crate::config::model::{Inventory, NicId, SwitchId};

use super::{Round, Step};

/// Bytes a RoCEv2 packet spends outside its payload on the wire: Ethernet
/// header and FCS, IPv4, UDP, BTH, ICRC, preamble and inter-packet gap
/// (DESIGN.md "Reference numbers": ~392 Gb/s of payload on 400G at MTU 4096).
pub const ROCE_OVERHEAD_BYTES: u32 = 82;
/// TCP over IPv4 with timestamps: 52 header bytes inside the MTU and 38 of
/// Ethernet framing, preamble and gap outside it.
pub const TCP_IN_MTU_BYTES: u32 = 52;
pub const ETH_FRAMING_BYTES: u32 = 38;

/// A step's fair share and how it was reached.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Share {
    /// In the test's metric unit: Gb/s for perftest and iperf3 (all of the
    /// step's flows together), GB/s of bus bandwidth for a collective.
    pub value: f64,
    /// Whether a flow of the step crosses the spines (its two ends sit
    /// behind different leaves), where static ECMP can collide.
    pub cross_spine: bool,
    /// Index into [`TestCapacity::derivations`].
    pub via: usize,
}

/// The fair shares of one test's plan, round by round, step by step.
#[derive(Debug, Clone, Default)]
pub struct TestCapacity {
    pub shares: Vec<Vec<Share>>,
    /// Distinct bottleneck descriptions (what limits the flows).
    pub derivations: Vec<String>,
    /// Payload fraction of the wire rate, e.g. 4096/(4096+82).
    pub payload: f64,
    pub payload_text: String,
}

impl TestCapacity {
    /// Steps grouped by (same leaf or cross-spine, share, bottleneck):
    /// `(cross_spine, value, via, count)`, lowest share first.
    pub fn classes(&self) -> Vec<(bool, f64, usize, usize)> {
        let mut out: Vec<(bool, f64, usize, usize)> = Vec::new();
        for s in self.shares.iter().flatten() {
            let v = (s.value * 10.0).round() / 10.0;
            match out
                .iter_mut()
                .find(|c| c.0 == s.cross_spine && c.1 == v && c.2 == s.via)
            {
                Some(c) => c.3 += 1,
                None => out.push((s.cross_spine, v, s.via, 1)),
            }
        }
        out.sort_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)));
        out
    }
}

/// A resource: one direction of a NIC, or one direction of a leaf's uplink
/// bundle. Dense ids: `2·nic` (NIC sends), `2·nic+1` (NIC receives),
/// `2·(nics+leaf)` (leaf to spines), `+1` (spines to leaf).
type Res = usize;

struct Net<'a> {
    inv: &'a Inventory,
    payload: f64,
    /// Fabric link count and total speed of each switch.
    uplinks: Vec<(usize, f64, u32)>,
}

impl<'a> Net<'a> {
    fn new(inv: &'a Inventory, payload: f64) -> Self {
        let uplinks = (0..inv.switches.len())
            .map(|s| {
                let speeds: Vec<u32> = inv
                    .uplinks(s)
                    .map(|(l, _)| inv.links[l].speed_gbps)
                    .collect();
                let first = speeds.first().copied().unwrap_or(0);
                let uniform = if speeds.iter().all(|&x| x == first) {
                    first
                } else {
                    0
                };
                (
                    speeds.len(),
                    speeds.iter().map(|&x| f64::from(x)).sum(),
                    uniform,
                )
            })
            .collect();
        Net {
            inv,
            payload,
            uplinks,
        }
    }

    fn size(&self) -> usize {
        2 * (self.inv.nics.len() + self.inv.switches.len())
    }

    fn capacity(&self, r: Res) -> f64 {
        let nics = self.inv.nics.len();
        if r < 2 * nics {
            f64::from(self.inv.nics[r / 2].speed_gbps) * self.payload
        } else {
            self.uplinks[(r - 2 * nics) / 2].1 * self.payload
        }
    }

    fn leaf(&self, nic: NicId) -> Option<SwitchId> {
        self.inv.nic_leaf(nic).map(|(s, _)| s)
    }

    /// The resources of a flow from `tx` to `rx`, and whether it crosses
    /// the spines.
    fn path(&self, tx: NicId, rx: NicId) -> (Vec<Res>, bool) {
        let nics = self.inv.nics.len();
        let mut p = vec![2 * tx, 2 * rx + 1];
        let (a, b) = (self.leaf(tx), self.leaf(rx));
        let cross = matches!((a, b), (Some(x), Some(y)) if x != y);
        if let (true, Some(x), Some(y)) = (cross, a, b) {
            p.push(2 * (nics + x));
            p.push(2 * (nics + y) + 1);
        }
        (p, cross)
    }

    fn describe(&self, r: Res, flows: usize, mtu_text: &str) -> String {
        let nics = self.inv.nics.len();
        if r < 2 * nics {
            let speed = self.inv.nics[r / 2].speed_gbps;
            let cap = self.capacity(r);
            let dir = if r % 2 == 0 { "out of" } else { "into" };
            if flows <= 1 {
                format!("one flow at the {speed}G NIC's payload rate: {speed} x {mtu_text} = {cap:.1} Gb/s")
            } else {
                format!("{flows} flows {dir} one {speed}G NIC: {speed} x {mtu_text} / {flows} = {:.1} Gb/s", cap / flows as f64)
            }
        } else {
            let (n, total, uniform) = self.uplinks[(r - 2 * nics) / 2];
            let cap = self.capacity(r);
            let links = if uniform > 0 {
                format!("{n} uplinks x {uniform}G")
            } else {
                format!("{n} uplinks ({total}G)")
            };
            let dir = if r % 2 == 0 { "up from" } else { "down into" };
            format!(
                "{flows} flows {dir} one leaf over {links} x {mtu_text} = {cap:.1} Gb/s / {flows} = {:.1} Gb/s",
                cap / flows.max(1) as f64
            )
        }
    }
}

/// Max-min fair rates of `flows` (progressive filling). Returns each
/// flow's rate and the resource that stopped it, with how many flows shared
/// that resource.
fn fill(net: &Net, flows: &[Vec<Res>]) -> Vec<(f64, Res, usize)> {
    let mut rem = vec![0.0f64; net.size()];
    let mut active = vec![0usize; net.size()];
    let mut users = vec![0usize; net.size()];
    let mut touched = Vec::new();
    for f in flows {
        for &r in f {
            if users[r] == 0 {
                rem[r] = net.capacity(r);
                touched.push(r);
            }
            users[r] += 1;
            active[r] += 1;
        }
    }
    let mut out = vec![(0.0, 0, 0); flows.len()];
    let mut frozen = vec![false; flows.len()];
    let mut level = 0.0;
    let mut left = flows.len();
    while left > 0 {
        let Some((delta, _)) = touched
            .iter()
            .filter(|&&r| active[r] > 0)
            .map(|&r| (rem[r] / active[r] as f64, r))
            .min_by(|a, b| a.0.total_cmp(&b.0))
        else {
            break;
        };
        let delta = delta.max(0.0);
        level += delta;
        for &r in &touched {
            rem[r] -= delta * active[r] as f64;
        }
        let saturated = |r: Res| active[r] > 0 && rem[r] <= 1e-9 * net.capacity(r).max(1.0);
        let mut newly = Vec::new();
        for (i, f) in flows.iter().enumerate() {
            if frozen[i] {
                continue;
            }
            if let Some(&r) = f.iter().find(|&&r| saturated(r)) {
                newly.push((i, r));
            }
        }
        if newly.is_empty() {
            break;
        }
        for (i, r) in newly {
            frozen[i] = true;
            left -= 1;
            out[i] = (level, r, users[r]);
            for &q in &flows[i] {
                active[q] -= 1;
            }
        }
    }
    out
}

/// The payload fraction of the wire for the test's traffic, and how to say it.
pub fn payload(test: &Test, inv: &Inventory) -> (f64, String) {
    let mtu = inv.fabric.roce.mtu;
    match test.kind {
        TestKind::Iperf(_) => {
            let p = mtu.saturating_sub(TCP_IN_MTU_BYTES);
            let w = mtu + ETH_FRAMING_BYTES;
            (f64::from(p) / f64::from(w), format!("{p}/{w}"))
        }
        _ => (
            f64::from(mtu) / f64::from(mtu + ROCE_OVERHEAD_BYTES),
            format!("{mtu}/({mtu}+{ROCE_OVERHEAD_BYTES})"),
        ),
    }
}

/// Fair shares of every step of `rounds`.
pub fn compute(test: &Test, inv: &Inventory, rounds: &[Round]) -> TestCapacity {
    let (payload, payload_text) = payload(test, inv);
    let net = Net::new(inv, payload);
    let bidir = matches!(&test.kind, TestKind::Perftest(p) if p.bidirectional);
    let mut derivations: Vec<String> = Vec::new();
    let mut shares = Vec::with_capacity(rounds.len());
    for round in rounds {
        // Flows of the whole round, each tagged with its step.
        let mut flows: Vec<Vec<Res>> = Vec::new();
        let mut owner: Vec<usize> = Vec::new();
        let mut cross = vec![false; round.len()];
        for (si, step) in round.iter().enumerate() {
            let mut add = |tx: NicId, rx: NicId| {
                let (p, c) = net.path(tx, rx);
                cross[si] |= c;
                flows.push(p);
                owner.push(si);
            };
            match step {
                // perftest's client (b) writes to its server (a).
                Step::Pair { a, b } => {
                    add(*b, *a);
                    if bidir {
                        add(*a, *b);
                    }
                }
                Step::Incast(i) => {
                    for &s in &i.senders {
                        add(s, i.receiver);
                    }
                }
                // A ring per rail in the collective's node order.
                Step::Collective(c) => {
                    for ring in c.rings(inv) {
                        for k in 0..ring.len() {
                            add(ring[k], ring[(k + 1) % ring.len()]);
                        }
                    }
                }
            }
        }
        let rates = fill(&net, &flows);
        // Per step: the sum of its flows (pairs, incast) or, for a
        // collective, rails x its slowest ring edge in GB/s.
        let mut sum = vec![0.0; round.len()];
        let mut slowest: Vec<Option<(f64, Res, usize)>> = vec![None; round.len()];
        let mut count = vec![0usize; round.len()];
        for (fi, &(rate, r, n)) in rates.iter().enumerate() {
            let si = owner[fi];
            sum[si] += rate;
            count[si] += 1;
            if slowest[si].is_none_or(|s| rate < s.0) {
                slowest[si] = Some((rate, r, n));
            }
        }
        let mut row = Vec::with_capacity(round.len());
        for (si, step) in round.iter().enumerate() {
            let (value, via_text) = match (step, slowest[si]) {
                (_, None) => (0.0, "no flow: nothing to carry".to_string()),
                (Step::Collective(c), Some((rate, r, n))) => {
                    let rails = c.rails.len().max(1) as f64;
                    (
                        rails * rate / 8.0,
                        format!(
                            "ring per rail, slowest edge: {}; busbw = {} rails x {:.1} Gb/s / 8",
                            net.describe(r, n, &payload_text),
                            c.rails.len(),
                            rate
                        ),
                    )
                }
                (_, Some((_, r, n))) => {
                    let mut t = net.describe(r, n, &payload_text);
                    if count[si] > 1 {
                        t = format!("{} flows of the step, the slowest: {t}", count[si]);
                    }
                    (sum[si], t)
                }
            };
            let via = match derivations.iter().position(|d| *d == via_text) {
                Some(i) => i,
                None => {
                    derivations.push(via_text);
                    derivations.len() - 1
                }
            };
            row.push(Share {
                value,
                cross_spine: cross[si] && !matches!(step, Step::Collective(_)),
                via,
            });
        }
        shares.push(row);
    }
    TestCapacity {
        shares,
        derivations,
        payload,
        payload_text,
    }
}
