//! TCP streams on the emulated fabric (what iperf3 measures): the share a
//! stream gets is computed with every other flow in `batch` (its process's
//! CPU being one more shared link), and this module says what TCP makes of
//! it: goodput after TCP/IP headers and losses, the loss rate bit errors and
//! congestion impose, the window and RTT `tcp_info` would show, and how a
//! stream rides out an outage (retransmission timer with exponential
//! backoff, resuming at the first firing after the path is back).
//!
//! It knows nothing of iperf3's command line or output formats (`iperf`
//! does) and holds no state between batches. The parameters, their sources
//! and what is left out are in docs/emulator.md, "TCP and iperf3".

use super::batch::{packet_error, Segment, BASE_RTT_US, LOSSY_BUFFER_BYTES};
use super::fabric::{Fabric, HostLink};
use super::noise::Wobble;

/// Goodput one iperf3 3.12 process sustains, Gb/s. Before 3.16 iperf3 is
/// single-threaded: all `-P` streams of a test share one core, which copies
/// every byte through `send()`/`recv()` (ESnet's iperf3 FAQ; the 3.16
/// release notes). Reported single-process figures on 100G hosts with
/// jumbo frames sit at 35–50 Gb/s (esnet/iperf#55: 36.7 Gb/s with `-Z` on a
/// 100G link; Canonical's DGX tests in canonical/pycloudlib#477 need several
/// processes above 40 Gb/s; Red Hat KB 4486291 for 40/100G), so a 400G NIC
/// never shows line rate from one iperf3.
pub const PROCESS_GBPS: f64 = 45.0;

/// The smoothed RTT `tcp_info` shows for a loaded stream between two hosts,
/// µs, before fabric queueing. Under load the hosts' own queues (TSO
/// bursts, NIC rings, interrupt moderation, GRO, the reader's wake-ups)
/// dominate the few µs of wire and switches (`BASE_RTT_US`): the 100G
/// single stream in esnet/iperf#55 keeps a 1.0–1.36 MB window at
/// 30–41 Gb/s (200–300 µs if the window were full), and loopback runs on
/// a build machine of this project report 28–290 µs.
pub const HOST_RTT_US: f64 = 200.0;

/// Linux `TCP_RTO_MIN` and `TCP_RTO_MAX`: the first retransmission comes
/// 200 ms (+ srtt) after a loss with no acknowledgement, each next one
/// twice as late, at most 120 s apart.
pub const RTO_MIN_S: f64 = 0.2;
pub const RTO_MAX_S: f64 = 120.0;
/// `net.ipv4.tcp_retries2` default.
pub const RETRIES2: u32 = 15;
/// `TCP_RESOURCE_PROBE_INTERVAL`: when a retransmission fails locally (the
/// sender's own NIC has no carrier and its queue drops), the timer is re-armed
/// at 500 ms without backoff.
pub const PROBE_INTERVAL_S: f64 = 0.5;
/// Seconds before `connect()` fails with `No route to host` when nothing
/// answers ARP on the way (3 solicitations 1 s apart; 3.07 s measured for
/// iperf3 3.12 towards a peer without carrier on a build machine of this
/// project).
pub const NEIGH_FAIL_S: f64 = 3.07;

/// IPv4 (20) + TCP (20) + the timestamp option (12): the MSS is MTU − 52.
pub const TCPIP_HEADER_BYTES: f64 = 52.0;
/// Ethernet header (14) + FCS (4) + preamble/SFD (8) + inter-frame gap (12).
pub const ETHERNET_FRAMING_BYTES: f64 = 38.0;
/// Mathis et al. (CCR 1997): a loss-driven window averages sqrt(3/(2p))
/// segments; CUBIC in its Reno-friendly region (µs RTTs) keeps that
/// (RFC 8312 §4.2).
pub const MATHIS_C2: f64 = 1.5;

/// Payload bytes per segment at `mtu`.
pub fn mss(mtu: u32) -> f64 {
    f64::from(mtu) - TCPIP_HEADER_BYTES
}

/// Payload share of the wire: (MTU − 52) / (MTU + 38); 0.9900 at 9000.
pub fn efficiency(mtu: u32) -> f64 {
    mss(mtu) / (f64::from(mtu) + ETHERNET_FRAMING_BYTES)
}

/// Smoothed RTT over `hops` directed links plus queueing, µs.
pub fn rtt_us(hops: usize, queue_us: f64) -> f64 {
    HOST_RTT_US + BASE_RTT_US * hops as f64 / 4.0 + queue_us
}

/// Probability that a segment is lost to bit errors on `path`.
pub fn path_loss(fabric: &Fabric, path: &[usize], mtu: u32) -> f64 {
    let wire = f64::from(mtu) + ETHERNET_FRAMING_BYTES;
    path.iter()
        .map(|&d| packet_error(fabric.ber[d / 2], wire))
        .sum::<f64>()
        .min(0.5)
}

/// Goodput a loss rate `p` allows one stream, Gb/s (Mathis).
pub fn mathis_gbps(mtu: u32, rtt_us: f64, p: f64) -> f64 {
    mss(mtu) * 8.0 / (rtt_us * 1e3) * (MATHIS_C2 / p.max(1e-15)).sqrt()
}

/// Seconds after the first lost transmission at which Linux gives up on a
/// connection: `tcp_retries2` backoffs from `TCP_RTO_MIN`, each capped at
/// `TCP_RTO_MAX` (924.6 s).
pub fn give_up_s() -> f64 {
    (0..=RETRIES2)
        .map(|k| (RTO_MIN_S * 2f64.powi(k as i32)).min(RTO_MAX_S))
        .sum()
}

/// A TCP stream's state within one segment.
#[derive(Debug, Clone, PartialEq)]
pub struct TcpSeg {
    /// Probability a segment is lost (bit errors, and congestion when a
    /// link of the fabric holds the stream).
    pub loss: f64,
    pub rtt_us: f64,
    /// What `tcp_info` would call the congestion window, bytes.
    pub cwnd_bytes: f64,
    pub mss: f64,
    /// The sender's own cable, for a stream without a path: without carrier
    /// the retransmissions fail locally and are retried every 500 ms.
    pub sender_link: HostLink,
    /// The path changed at this segment's start because a link of the
    /// previous one went down: what was in flight is lost.
    pub rerouted: bool,
}

/// What holds a stream's rate in a segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bound {
    /// Its iperf3 process's CPU (application-limited).
    Cpu,
    /// The loss rate bit errors impose (Mathis).
    Loss,
    /// A link of the fabric: the stream fills the lossy queue there and
    /// loses what makes its window fit its share.
    Network,
}

/// A stream's loss, RTT and window, given its goodput before losses and
/// what holds it.
pub fn segment_state(
    fabric: &Fabric,
    path: Option<&[usize]>,
    mtu: u32,
    goodput_gbps: f64,
    bound: Bound,
    sender_link: HostLink,
) -> TcpSeg {
    let links = path.unwrap_or_default();
    let ber = path_loss(fabric, links, mtu);
    // A stream the network holds fills its lossy queue (no ECN on priority
    // 0): on average half the buffer at the bottleneck.
    let queue_us = match bound {
        Bound::Network => {
            let cap = links
                .iter()
                .map(|&d| fabric.capacity[d])
                .fold(f64::INFINITY, f64::min);
            if cap.is_finite() && cap > 0.0 {
                0.5 * LOSSY_BUFFER_BYTES * 8.0 / (cap * 1e3)
            } else {
                0.0
            }
        }
        _ => 0.0,
    };
    let rtt = rtt_us(links.len(), queue_us);
    let mss = mss(mtu);
    // Segments in flight at this goodput and RTT.
    let bdp = goodput_gbps * 1e3 * rtt / 8.0 / mss;
    // A loss-driven window averages sqrt(1.5 / p); an application-limited
    // one stays a little above what is in flight (Linux only opens the
    // window while it is the limit).
    let (loss, window) = match bound {
        Bound::Network if bdp > 0.0 => {
            let p = (MATHIS_C2 / (bdp * bdp)).max(ber).min(0.5);
            (p, (MATHIS_C2 / p).sqrt().max(bdp))
        }
        Bound::Loss if ber > 0.0 => (ber, (MATHIS_C2 / ber).sqrt()),
        _ => (ber, 1.2 * bdp),
    };
    TcpSeg {
        loss,
        rtt_us: rtt,
        cwnd_bytes: window.max(10.0).round() * mss,
        mss,
        sender_link,
        rerouted: false,
    }
}

/// Marks the TCP streams of `seg` whose path moved because a link of the
/// path they had in `prev` is down now.
pub fn mark_rerouted(prev: &Segment, seg: &mut Segment, fabric: &Fabric) {
    for (fi, st) in seg.tcp.iter_mut().enumerate() {
        let Some(st) = st else { continue };
        if let (Some(old), Some(new)) = (&prev.paths[fi], &seg.paths[fi]) {
            if old != new && old.iter().any(|&d| !fabric.link_up[d / 2]) {
                st.rerouted = true;
            }
        }
    }
}

/// A span of constant behaviour.
#[derive(Debug, Clone, PartialEq)]
struct Piece {
    t0: f64,
    t1: f64,
    gbps: f64,
    retx_per_s: f64,
    rtt_us: f64,
    cwnd_bytes: f64,
}

/// An outage the stream is riding out.
#[derive(Debug, Clone)]
struct Stall {
    since: f64,
    next_fire: f64,
    step: f64,
    /// Failed retransmissions are counted (a loss in the network); a local
    /// failure (no carrier) is not, and does not back off.
    local: bool,
    window_segs: f64,
}

/// One stream's time series over its data window, from the segments: what
/// it delivered, when it retransmitted, and what `tcp_info` showed.
#[derive(Debug, Clone)]
pub struct Timeline {
    pieces: Vec<Piece>,
    /// Retransmissions at an instant: timer firings, and the lost window
    /// resent when the path is back.
    bursts: Vec<(f64, f64)>,
    /// Spans in which it sent nothing: an outage and the wait for the timer.
    pub gaps: Vec<(f64, f64)>,
    /// When the connection timed out (`tcp_retries2`), if it did.
    pub failed_at: Option<f64>,
    mss: f64,
    /// The stream's tick-by-tick dips (`noise`): what it delivers is its
    /// rate at that pace, as the byte counters count it.
    wobble: Option<Wobble>,
}

impl Timeline {
    /// The stream `f` of `segs` between `a` and `b`, at the pace of its
    /// `wobble`.
    pub fn build(
        segs: &[Segment],
        f: usize,
        a: f64,
        b: f64,
        mss: f64,
        wobble: Option<Wobble>,
    ) -> Timeline {
        let mut tl = Timeline {
            pieces: Vec::new(),
            bursts: Vec::new(),
            gaps: Vec::new(),
            failed_at: None,
            mss,
            wobble,
        };
        let mut stall: Option<Stall> = None;
        let mut rtt = HOST_RTT_US;
        let mut window_segs = 10.0;
        let budget = give_up_s();
        for s in segs {
            let lo = a.max(s.t0);
            let hi = b.min(s.t1);
            if hi <= lo {
                continue;
            }
            let st = s.tcp.get(f).and_then(Option::as_ref);
            let path = s.paths[f].as_ref();
            if stall.is_none() {
                let rerouted = st.is_some_and(|x| x.rerouted) && s.t0 > a;
                if path.is_none() || rerouted {
                    let local =
                        path.is_none() && st.is_some_and(|x| x.sender_link == HostLink::NoCarrier);
                    let rto = RTO_MIN_S + rtt * 1e-6;
                    stall = Some(Stall {
                        since: lo,
                        next_fire: lo + rto,
                        step: rto,
                        local,
                        window_segs,
                    });
                }
            }
            let mut t = lo;
            while let Some(sl) = stall.as_mut() {
                if sl.next_fire >= hi {
                    break;
                }
                let tf = sl.next_fire;
                if tf - sl.since >= budget {
                    tl.failed_at = Some(tf);
                    tl.stalled(t, b, rtt);
                    tl.gaps.push((sl.since, b));
                    return tl;
                }
                if path.is_some() {
                    // The timer fires with a path: the retransmission gets
                    // through, then the rest of the lost window.
                    tl.bursts.push((tf, sl.window_segs.max(1.0)));
                    tl.gaps.push((sl.since, tf));
                    tl.stalled(t, tf, rtt);
                    t = tf;
                    stall = None;
                    break;
                }
                if !sl.local {
                    tl.bursts.push((tf, 1.0));
                    sl.step = (sl.step * 2.0).min(RTO_MAX_S);
                    sl.next_fire = tf + sl.step;
                } else {
                    sl.next_fire = tf + PROBE_INTERVAL_S;
                }
            }
            if stall.is_some() {
                tl.stalled(t, hi, rtt);
                continue;
            }
            let Some(st) = st else { continue };
            let gbps = s.goodput(f);
            tl.pieces.push(Piece {
                t0: t,
                t1: hi,
                gbps,
                retx_per_s: gbps * 1e9 / 8.0 / mss * st.loss,
                rtt_us: st.rtt_us,
                cwnd_bytes: st.cwnd_bytes,
            });
            rtt = st.rtt_us;
            window_segs = st.cwnd_bytes / mss;
        }
        if let Some(sl) = stall {
            tl.gaps.push((sl.since, b));
        }
        tl
    }

    fn stalled(&mut self, t0: f64, t1: f64, rtt_us: f64) {
        if t1 > t0 {
            self.pieces.push(Piece {
                t0,
                t1,
                gbps: 0.0,
                retx_per_s: 0.0,
                rtt_us,
                cwnd_bytes: self.mss,
            });
        }
    }

    /// Bytes delivered from the start to `t`.
    pub fn bytes(&self, t: f64) -> f64 {
        self.pieces
            .iter()
            .filter(|p| p.gbps > 0.0)
            .map(|p| {
                let hi = t.min(p.t1);
                let secs = match &self.wobble {
                    Some(w) => w.integral(p.t0, hi),
                    None => (hi - p.t0).max(0.0),
                };
                secs * p.gbps * 1e9 / 8.0
            })
            .sum()
    }

    /// Segments retransmitted from the start to `t` (expected value): a
    /// steady share of what it sends, at the same pace.
    pub fn retransmits(&self, t: f64) -> f64 {
        let steady: f64 = self
            .pieces
            .iter()
            .filter(|p| p.retx_per_s > 0.0)
            .map(|p| {
                let hi = t.min(p.t1);
                let secs = match &self.wobble {
                    Some(w) => w.integral(p.t0, hi),
                    None => (hi - p.t0).max(0.0),
                };
                secs * p.retx_per_s
            })
            .sum();
        let bursts: f64 = self
            .bursts
            .iter()
            .filter(|(tb, _)| *tb <= t)
            .map(|(_, n)| n)
            .sum();
        steady + bursts
    }

    /// `tcp_info` at `t`: (smoothed RTT µs, congestion window bytes).
    pub fn info(&self, t: f64) -> (f64, f64) {
        self.pieces
            .iter()
            .rev()
            .find(|p| p.t0 < t)
            .or(self.pieces.first())
            .map_or((HOST_RTT_US, 10.0 * self.mss), |p| (p.rtt_us, p.cwnd_bytes))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn efficiency_and_mss_at_jumbo_and_standard_mtu() {
        // 8948 / 9038 and 1448 / 1538.
        assert!((efficiency(9000) - 0.990_042).abs() < 1e-6);
        assert!((efficiency(1500) - 0.941_482).abs() < 1e-6);
        assert_eq!(mss(9000), 8948.0);
    }

    #[test]
    fn linux_gives_up_after_924_6_seconds() {
        // 0.2 × (2^10 − 1) + 6 × 120.
        assert!((give_up_s() - 924.6).abs() < 1e-9, "{}", give_up_s());
    }

    #[test]
    fn mathis_at_one_loss_in_a_thousand() {
        // 8948 B × 8 / 200 µs × sqrt(1500) = 13.86 Gb/s.
        let g = mathis_gbps(9000, 200.0, 1e-3);
        assert!((g - 13.862).abs() < 1e-3, "{g}");
    }
}
