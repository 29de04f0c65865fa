//! What the emulated `linux` switches print: a Spectrum ASIC under the
//! mainline `mlxsw` driver, ports `swp1`, `swp2`, … Each function renders
//! one command's stdout from the model's [`PortConfig`] and [`PortCounters`]:
//!
//! | function | command line |
//! |---|---|
//! | [`ethtool_stats`] | `ethtool -S swpN` |
//! | [`ip_link`] | `ip [-s [-s]] -j link show dev swpN` (and a host's netdev) |
//! | [`dcb_pfc`] | `dcb [-j] [-s] pfc show dev swpN` |
//! | [`tc_qdisc`] | `tc -s -d qdisc show dev swpN` |
//!
//! Formats follow the sources that print them: mlxsw's
//! `spectrum_ethtool.c` (names, group order, 16 TCs), iproute2's
//! `print_link_stats64`, `dcb_pfc.c`, `q_ets.c`, `q_red.c` and
//! `print_tcstats2_attr` (field order, trailing spaces, `sprint_size`).
//! Totals are the model's `f64`s rounded down; a reloaded switch is simply a
//! zeroed [`PortCounters`]. It parses nothing and decides nothing.
//!
//! # Bands, traffic classes and priorities
//!
//! The root qdisc is `ets 1:` with 8 strict bands and priomap
//! `7 6 5 4 3 2 1 0`, so priority `p` goes to band `7 - p`, which is class
//! `1:(8 - p)`. mlxsw maps band `b` to traffic class `7 - b`
//! (`MLXSW_SP_PRIO_BAND_TO_TCLASS`), so priority `p` ends in TC `p`: the
//! model's per-priority counters and per-TC counters line up by index. Each
//! TC with ECN thresholds gets `red` handle `1(8 - tc):` under class
//! `1:(8 - tc)`.

use super::state::{PortConfig, PortCounters};

/// Spectrum has 8 unicast and 8 multicast traffic classes per port and
/// mlxsw prints both (`TC_MAX_QUEUE`); the model's are the unicast 0..7.
const MLXSW_TCS: usize = 16;

/// The root qdisc handle's major number.
const ROOT_MAJOR: u32 = 1;

/// RED `limit` is not offloaded by mlxsw; this is what the emulated
/// operator configured (the value mlxsw's selftests use).
const RED_LIMIT_BYTES: u64 = 1_000_000;

/// RED `avpkt` the emulated operator configured (mlxsw's recommendation);
/// only `ewma` and `Scell_log` depend on it.
const RED_AVPKT: u64 = 1000;

/// Band of the root `ets` that feeds traffic class `tc`.
pub fn band_of_tc(tc: usize) -> usize {
    7 - tc
}

/// A counter as the hardware reports it: the model's total rounded down.
fn n(x: f64) -> u64 {
    if x.is_finite() && x > 0.0 {
        x.floor() as u64
    } else {
        0
    }
}

fn lower_up(cfg: &PortConfig) -> bool {
    cfg.admin_up && cfg.link_up
}

// ------------------------------------------------------------- ethtool -S

/// `ethtool -S swpN` on a Spectrum-2 or later port (Spectrum-1 adds PTP
/// counters between the per-TC group and `transceiver_overheat`).
pub fn ethtool_stats(cfg: &PortConfig, c: &PortCounters) -> String {
    let rx_pause: u64 = c.prio.iter().map(|p| n(p.rx_pause)).sum();
    let tx_pause: u64 = c.prio.iter().map(|p| n(p.tx_pause)).sum();
    let tc_drops: u64 = c.tc_drops.iter().map(|&d| n(d)).sum();
    let ecn: u64 = c.tc_ecn_marked.iter().map(|&m| n(m)).sum();
    let fcs = n(c.rx_crc_errors);
    let sym = n(c.rx_symbol_errors);

    // RMON size histogram: the model has one frame size per port, a full
    // MTU (Ethernet header and FCS added).
    let frame = u64::from(cfg.mtu) + 18;
    let buckets: [(&str, u64); 10] = [
        ("ether_pkts64octets", 64),
        ("ether_pkts65to127octets", 127),
        ("ether_pkts128to255octets", 255),
        ("ether_pkts256to511octets", 511),
        ("ether_pkts512to1023octets", 1023),
        ("ether_pkts1024to1518octets", 1518),
        ("ether_pkts1519to2047octets", 2047),
        ("ether_pkts2048to4095octets", 4095),
        ("ether_pkts4096to8191octets", 8191),
        ("ether_pkts8192to10239octets", 10239),
    ];
    let bucket = buckets
        .iter()
        .position(|&(_, hi)| frame <= hi)
        .unwrap_or(buckets.len() - 1);

    let mut rows: Vec<(String, u64)> = Vec::with_capacity(160);
    let mut put = |name: &str, v: u64| rows.push((name.to_string(), v));
    // IEEE 802.3
    put("a_frames_transmitted_ok", n(c.tx_packets));
    put("a_frames_received_ok", n(c.rx_packets));
    put("a_frame_check_sequence_errors", fcs);
    put("a_alignment_errors", 0);
    put("a_octets_transmitted_ok", n(c.tx_bytes));
    put("a_octets_received_ok", n(c.rx_bytes));
    put("a_multicast_frames_xmitted_ok", 0);
    put("a_broadcast_frames_xmitted_ok", 0);
    put("a_multicast_frames_received_ok", 0);
    put("a_broadcast_frames_received_ok", 0);
    put("a_in_range_length_errors", 0);
    put("a_out_of_range_length_field", 0);
    put("a_frame_too_long_errors", 0);
    put("a_symbol_error_during_carrier", sym);
    // PFC frames are MAC control frames.
    put("a_mac_control_frames_transmitted", tx_pause);
    put("a_mac_control_frames_received", rx_pause);
    put("a_unsupported_opcodes_received", 0);
    put("a_pause_mac_ctrl_frames_received", 0);
    put("a_pause_mac_ctrl_frames_xmitted", 0);
    // RFC 2863
    put("if_in_discards", 0);
    put("if_out_discards", tc_drops);
    put("if_out_errors", 0);
    // RFC 2819
    put("ether_stats_undersize_pkts", 0);
    put("ether_stats_oversize_pkts", 0);
    put("ether_stats_fragments", 0);
    for (i, (name, _)) in buckets.iter().enumerate() {
        put(name, if i == bucket { n(c.rx_packets) } else { 0 });
    }
    // RFC 3635: the same hardware counters as the 802.3 ones.
    put("dot3stats_fcs_errors", fcs);
    put("dot3stats_symbol_errors", sym);
    put("dot3control_in_unknown_opcodes", 0);
    put("dot3in_pause_frames", 0);
    // Extended
    put("ecn_marked", ecn);
    // Discards
    for name in [
        "discard_ingress_general",
        "discard_ingress_policy_engine",
        "discard_ingress_vlan_membership",
        "discard_ingress_tag_frame_type",
        "discard_egress_vlan_membership",
        "discard_loopback_filter",
        "discard_egress_general",
        "discard_egress_hoq",
        "discard_egress_policy_engine",
        "discard_ingress_tx_link_down",
        "discard_egress_stp_filter",
        "discard_egress_sll",
    ] {
        put(name, 0);
    }
    // Per priority
    for (p, pc) in c.prio.iter().enumerate() {
        put(&format!("rx_octets_prio_{p}"), n(pc.rx_bytes));
        put(&format!("rx_frames_prio_{p}"), n(pc.rx_packets));
        put(&format!("tx_octets_prio_{p}"), n(pc.tx_bytes));
        put(&format!("tx_frames_prio_{p}"), n(pc.tx_packets));
        put(&format!("rx_pause_prio_{p}"), n(pc.rx_pause));
        put(
            &format!("rx_pause_duration_prio_{p}"),
            n(pc.rx_pause_duration_us),
        );
        put(&format!("tx_pause_prio_{p}"), n(pc.tx_pause));
        put(
            &format!("tx_pause_duration_prio_{p}"),
            n(pc.tx_pause_duration_us),
        );
    }
    // Per TC. `tc_transmit_queue_tc_N` is the queue's depth when read; the
    // emulator is read between steps, when every queue has drained.
    for tc in 0..MLXSW_TCS {
        put(&format!("tc_transmit_queue_tc_{tc}"), 0);
        put(
            &format!("tc_no_buffer_discard_uc_tc_{tc}"),
            c.tc_drops.get(tc).map_or(0, |&d| n(d)),
        );
    }
    put("transceiver_overheat", 0);

    let mut out = String::from("NIC statistics:\n");
    for (name, v) in rows {
        out.push_str(&format!("     {name}: {v}\n"));
    }
    out
}

// ------------------------------------------------------------- ip -j link

/// One netdev as `ip -j link show` prints it, switch port or host NIC.
#[derive(Debug, Clone, Copy)]
pub struct NetdevView<'a> {
    pub ifindex: u32,
    pub name: &'a str,
    pub admin_up: bool,
    pub carrier: bool,
    pub mtu: u32,
    /// The root qdisc: `ets` on an emulated switch port, `mq` on mlx5.
    pub qdisc: &'a str,
    pub mac: [u8; 6],
}

/// What the netdev's `ndo_get_stats64` returns, already rounded.
#[derive(Debug, Clone, Copy, Default)]
pub struct NetdevStats {
    pub rx_bytes: u64,
    pub rx_packets: u64,
    pub tx_bytes: u64,
    pub tx_packets: u64,
    pub crc_errors: u64,
    pub link_down_events: u64,
}

impl NetdevStats {
    /// mlxsw's: frames and octets from the 802.3 group.
    pub fn of_port(c: &PortCounters) -> Self {
        NetdevStats {
            rx_bytes: n(c.rx_bytes),
            rx_packets: n(c.rx_packets),
            tx_bytes: n(c.tx_bytes),
            tx_packets: n(c.tx_packets),
            crc_errors: n(c.rx_crc_errors),
            link_down_events: n(c.link_down_events),
        }
    }
}

/// `ip [-s [-s]] -j link show dev X` (iproute2 6.x field order); `level`
/// is the number of `-s`. `UP` in flags is the admin state, `LOWER_UP` the
/// carrier; a physical port without carrier is `operstate` `DOWN`. Errors
/// are FCS errors only (`rx_errors` = FCS + alignment + length errors on
/// both drivers), nothing is dropped.
pub fn ip_link(v: &NetdevView, st: &NetdevStats, level: u8) -> String {
    let up = v.admin_up && v.carrier;
    let mut flags = Vec::new();
    if v.admin_up && !up {
        flags.push("NO-CARRIER");
    }
    flags.extend(["BROADCAST", "MULTICAST"]);
    if v.admin_up {
        flags.push("UP");
    }
    if up {
        flags.push("LOWER_UP");
    }
    let flags: Vec<String> = flags.iter().map(|f| format!("\"{f}\"")).collect();
    let mac = v
        .mac
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(":");
    let mut out = format!(
        "[{{\"ifindex\":{},\"ifname\":\"{}\",\"flags\":[{}],\"mtu\":{},\"qdisc\":\"{}\",\"operstate\":\"{}\",\"linkmode\":\"DEFAULT\",\"group\":\"default\",\"txqlen\":1000,\"link_type\":\"ether\",\"address\":\"{mac}\",\"broadcast\":\"ff:ff:ff:ff:ff:ff\"",
        v.ifindex,
        v.name,
        flags.join(","),
        v.mtu,
        v.qdisc,
        if up { "UP" } else { "DOWN" },
    );
    if level > 0 {
        let crc = st.crc_errors;
        let mut rx = format!(
            "\"bytes\":{},\"packets\":{},\"errors\":{crc},\"dropped\":0,\"over_errors\":0,\"multicast\":0",
            st.rx_bytes, st.rx_packets
        );
        let mut tx = format!(
            "\"bytes\":{},\"packets\":{},\"errors\":0,\"dropped\":0,\"carrier_errors\":0,\"collisions\":0",
            st.tx_bytes, st.tx_packets
        );
        if level > 1 {
            // One carrier change when the port first came up, two per flap.
            let carrier_changes = 2 * st.link_down_events + u64::from(up);
            rx.push_str(&format!(
                ",\"length_errors\":0,\"crc_errors\":{crc},\"frame_errors\":0,\"fifo_errors\":0,\"missed_errors\":0"
            ));
            tx.push_str(&format!(
                ",\"aborted_errors\":0,\"fifo_errors\":0,\"window_errors\":0,\"heartbeat_errors\":0,\"carrier_changes\":{carrier_changes}"
            ));
        }
        out.push_str(&format!(",\"stats64\":{{\"rx\":{{{rx}}},\"tx\":{{{tx}}}}}"));
    }
    out.push_str("}]\n");
    out
}

/// A switch port as `ip -j link` shows it.
pub fn port_netdev(cfg: &PortConfig, ifindex: u32, mac: [u8; 6]) -> NetdevView<'_> {
    NetdevView {
        ifindex,
        name: &cfg.name,
        admin_up: cfg.admin_up,
        carrier: lower_up(cfg),
        mtu: cfg.mtu,
        qdisc: "ets",
        mac,
    }
}

// ----------------------------------------------------------- dcb pfc show

/// `dcb pfc show dev swpN`. mlxsw reports 8 PFC-capable priorities; the
/// emulated operator never sets `delay` or MACsec bypass.
pub fn dcb_pfc(cfg: &PortConfig, c: &PortCounters, json: bool, stats: bool) -> String {
    let p = super::config_out::Pfc {
        enabled: cfg.pfc,
        delay: 0,
        // mlxsw fills them from the same PPCNT counters as
        // `tx_pause_prio_N` and `rx_pause_prio_N`.
        requests: c.prio.map(|p| n(p.tx_pause)),
        indications: c.prio.map(|p| n(p.rx_pause)),
    };
    if json {
        super::config_out::dcb_pfc_json(&p, stats)
    } else {
        super::config_out::dcb_pfc_text(&p, stats)
    }
}

// ---------------------------------------------------- tc -s -d qdisc show

/// C's `%g`: 6 significant digits, trailing zeros dropped, exponent form
/// below 1e-4 and from 1e6.
fn fmt_g(x: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        return "0".into();
    }
    let sci = format!("{x:.5e}");
    let (mant, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let trim = |s: &str| -> String {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s.to_string()
        }
    };
    if !(-4..6).contains(&exp) {
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{}e{sign}{:02}", trim(mant), exp.abs())
    } else {
        let decimals = (5 - exp).max(0) as usize;
        trim(&format!("{x:.decimals$}"))
    }
}

/// iproute2's `sprint_size`: whole Gb, Mb or Kb when within 1 KiB (Gb, Mb)
/// or 16 bytes (Kb) of one, bytes otherwise.
fn sprint_size(sz: u64) -> String {
    const KILO: f64 = 1024.0;
    let tmp = sz as f64;
    let near =
        |unit: f64, slack: f64| tmp >= unit && (unit * (tmp / unit).round() - tmp).abs() < slack;
    if near(KILO * KILO * KILO, 1024.0) {
        format!("{}Gb", fmt_g((tmp / (KILO * KILO * KILO)).round()))
    } else if near(KILO * KILO, 1024.0) {
        format!("{}Mb", fmt_g((tmp / (KILO * KILO)).round()))
    } else if near(KILO, 16.0) {
        format!("{}Kb", fmt_g((tmp / KILO).round()))
    } else {
        format!("{sz}b")
    }
}

/// `tc_red_eval_ewma` with `tc`'s default burst `(2 min + max) / (3 avpkt)`.
fn red_wlog(min: u64, max: u64) -> u32 {
    let burst = (2 * min + max) / (3 * RED_AVPKT);
    let a = burst as f64 + 1.0 - min as f64 / RED_AVPKT as f64;
    let mut w = 0.5f64;
    for wlog in 1..32 {
        if a <= (1.0 - (1.0 - w).powi(burst as i32)) / w {
            return wlog;
        }
        w /= 2.0;
    }
    31
}

/// `tc_red_eval_idle_damping`'s cell log at `tc`'s default 10 Mbit
/// bandwidth, with the 15.625 ticks per µs of a kernel whose
/// `/proc/net/psched` reads `000003e8 00000040 000f4240 3b9aca00`.
fn red_scell_log(wlog: u32) -> u32 {
    let xmit_time = 15.625 * 1e6 * RED_AVPKT as f64 / 1_250_000.0;
    let lw = -(1.0 - 1.0 / f64::from(1u32 << wlog.min(31))).ln() / xmit_time;
    let maxtime = 31.0 / lw;
    (0..32)
        .find(|&c| maxtime / f64::from(1u32 << c) < 512.0)
        .unwrap_or(31)
}

/// `tc -s -d qdisc show dev swpN`: the offloaded root `ets` and one `red …
/// ecn` per TC that has ECN thresholds, in band order. mlxsw offloads a red
/// only with `0 < min <= max`; one it refuses is shown without `offloaded`
/// and with the software qdisc's (empty) counters.
pub fn tc_qdisc(cfg: &PortConfig, c: &PortCounters) -> String {
    let tail_drops: u64 = c.tc_drops.iter().map(|&d| n(d)).sum();
    let mut out = format!(
        "qdisc ets {ROOT_MAJOR}: root refcnt 2 offloaded bands 8 strict 8 priomap 7 6 5 4 3 2 1 0 7 7 7 7 7 7 7 7 \n \
         Sent {} bytes {} pkt (dropped {tail_drops}, overlimits 0 requeues 0) \n \
         backlog 0b 0p requeues 0\n",
        n(c.tx_bytes),
        n(c.tx_packets),
    );
    // Band order is TC 7 first.
    for tc in (0..8).rev() {
        let band = band_of_tc(tc);
        let Some((min, max, pct)) = cfg.ecn[tc] else {
            continue;
        };
        let offloaded = min > 0 && max > 0 && min <= max;
        let wlog = red_wlog(min, max);
        // TCA_RED_MAX_P is a u32 fraction of 2^32; 100 % saturates it.
        let max_p = (f64::from(pct) / 100.0 * 4_294_967_296.0).min(f64::from(u32::MAX)) as u32;
        let prob = if max_p > 0 {
            format!("probability {} ", fmt_g(f64::from(max_p) / 4_294_967_296.0))
        } else {
            "Plog 0 ".to_string()
        };
        let (sent_b, sent_p, marked, pdrop) = if offloaded {
            (
                n(c.prio[tc].tx_bytes),
                n(c.prio[tc].tx_packets),
                n(c.tc_ecn_marked[tc]),
                n(c.tc_drops[tc]),
            )
        } else {
            (0, 0, 0, 0)
        };
        out.push_str(&format!(
            "qdisc red {ROOT_MAJOR}{class:x}: parent {ROOT_MAJOR}:{class:x} {off}limit {limit} min {min} max {max} ecn ewma {wlog} {prob}Scell_log {scell}\n \
             Sent {sent_b} bytes {sent_p} pkt (dropped {pdrop}, overlimits {marked} requeues 0) \n \
             backlog 0b 0p requeues 0\n  \
             marked {marked} early 0 pdrop {pdrop} other 0 \n",
            class = band + 1,
            off = if offloaded { "offloaded " } else { "" },
            limit = sprint_size(RED_LIMIT_BYTES.max(2 * max)),
            min = sprint_size(min),
            max = sprint_size(max),
            scell = red_scell_log(wlog),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::counters::{Canonical, Reading};
    use crate::emu::state::PrioCounters;
    use crate::switch::linux::counters as parse;

    /// `ip -s -j link show dev swpN`.
    fn ip_link_json(cfg: &PortConfig, c: &PortCounters, ifindex: u32, mac: [u8; 6]) -> String {
        ip_link(&port_netdev(cfg, ifindex, mac), &NetdevStats::of_port(c), 1)
    }

    /// `ip -s -s -j link show dev swpN`: adds the error breakdown and
    /// `carrier_changes`, the port's only link-down count.
    fn ip_link_json_ss(cfg: &PortConfig, c: &PortCounters, ifindex: u32, mac: [u8; 6]) -> String {
        ip_link(&port_netdev(cfg, ifindex, mac), &NetdevStats::of_port(c), 2)
    }

    fn cfg() -> PortConfig {
        let mut ecn = [None; 8];
        ecn[3] = Some((150_000, 1_500_000, 10));
        ecn[5] = Some((524_288, 2 << 20, 100));
        PortConfig {
            name: "swp7".into(),
            speed_mbps: 400_000,
            link_up: true,
            admin_up: true,
            mtu: 9216,
            pfc: [false, false, false, true, false, false, false, false],
            ecn,
            neighbor: None,
        }
    }

    /// Distinct values in every field, with fractions to round down.
    fn counters() -> PortCounters {
        let mut c = PortCounters {
            rx_bytes: 1_000_001.7,
            tx_bytes: 2_000_002.7,
            rx_packets: 3_003.2,
            tx_packets: 4_004.9,
            rx_crc_errors: 17.5,
            rx_symbol_errors: 23.9,
            link_down_events: 3.0,
            ..PortCounters::default()
        };
        for p in 0..8 {
            let k = p as f64;
            c.prio[p] = PrioCounters {
                rx_bytes: 100.0 + k,
                rx_packets: 200.0 + k,
                tx_bytes: 300.0 + k,
                tx_packets: 400.0 + k,
                rx_pause: 500.0 + k,
                rx_pause_duration_us: 600.0 + k + 0.9,
                tx_pause: 700.0 + k,
                tx_pause_duration_us: 800.0 + k,
            };
            c.tc_drops[p] = 900.0 + k;
            c.tc_ecn_marked[p] = 1000.0 + k + 0.5;
            c.tc_watermark_bytes[p] = 1100.0 + k;
        }
        c
    }

    fn find(
        rs: &[Reading],
        canonical: Canonical,
        prio: Option<u8>,
        queue: Option<u8>,
    ) -> Vec<&Reading> {
        rs.iter()
            .filter(|r| r.canonical == canonical && r.priority == prio && r.queue == queue)
            .collect()
    }

    fn one(rs: &[Reading], canonical: Canonical, prio: Option<u8>, queue: Option<u8>) -> u64 {
        let found = find(rs, canonical, prio, queue);
        assert_eq!(
            found.len(),
            1,
            "{canonical:?} {prio:?} {queue:?}: {found:?}"
        );
        found[0].value
    }

    #[test]
    fn ethtool_round_trip() {
        let c = counters();
        let text = ethtool_stats(&cfg(), &c);
        let rs = parse::parse_ethtool_stats(&text).unwrap();
        assert_eq!(one(&rs, Canonical::RxBytes, None, None), 1_000_001);
        assert_eq!(one(&rs, Canonical::TxBytes, None, None), 2_000_002);
        assert_eq!(one(&rs, Canonical::RxPackets, None, None), 3_003);
        assert_eq!(one(&rs, Canonical::TxPackets, None, None), 4_004);
        assert_eq!(one(&rs, Canonical::CrcErrors, None, None), 17);
        assert_eq!(one(&rs, Canonical::SymbolErrors, None, None), 23);
        assert_eq!(
            one(&rs, Canonical::EcnMarked, None, None),
            (0..8).map(|k| 1000 + k).sum::<u64>()
        );
        assert_eq!(
            one(&rs, Canonical::Drops, None, None),
            (0..8).map(|k| 900 + k).sum::<u64>()
        );
        for p in 0..8u8 {
            let k = u64::from(p);
            let q = Some(p);
            assert_eq!(one(&rs, Canonical::RxBytes, q, None), 100 + k);
            assert_eq!(one(&rs, Canonical::RxPackets, q, None), 200 + k);
            assert_eq!(one(&rs, Canonical::TxBytes, q, None), 300 + k);
            assert_eq!(one(&rs, Canonical::TxPackets, q, None), 400 + k);
            assert_eq!(one(&rs, Canonical::PfcPauseRx, q, None), 500 + k);
            assert_eq!(one(&rs, Canonical::PfcPauseDurationRxUs, q, None), 600 + k);
            assert_eq!(one(&rs, Canonical::PfcPauseTx, q, None), 700 + k);
            assert_eq!(one(&rs, Canonical::PfcPauseDurationTxUs, q, None), 800 + k);
            assert_eq!(one(&rs, Canonical::Drops, None, q), 900 + k);
        }
        // The multicast TCs are printed, and zero.
        for tc in 8..16u8 {
            assert_eq!(one(&rs, Canonical::Drops, None, Some(tc)), 0);
        }
        assert!(text.starts_with("NIC statistics:\n     a_frames_transmitted_ok: 4004\n"));
        assert!(text.ends_with("     transceiver_overheat: 0\n"));
        assert_eq!(text.lines().count(), 150);
        // A 9216-byte MTU frame is 9234 bytes on the wire.
        assert!(text.contains("     ether_pkts8192to10239octets: 3003\n"));
    }

    #[test]
    fn ethtool_key_set_matches_a_real_spectrum_port() {
        let real = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/switch_linux/ethtool-S-mlxsw-swp31-spectrum.txt"
        ))
        .unwrap();
        let names = |t: &str| -> Vec<String> {
            t.lines()
                .filter_map(|l| l.split_once(':').map(|(n, _)| n.to_string()))
                .collect()
        };
        assert_eq!(
            names(&ethtool_stats(&cfg(), &PortCounters::default())),
            names(&real)
        );
    }

    #[test]
    fn reloaded_switch_prints_zeros() {
        let text = ethtool_stats(&cfg(), &PortCounters::default());
        assert!(text.lines().skip(1).all(|l| l.ends_with(": 0")));
    }

    #[test]
    fn ip_link_round_trip_up() {
        let c = counters();
        let one_s = ip_link_json(&cfg(), &c, 12, [0x7c, 0xfe, 0x90, 0x0a, 0xb1, 0x07]);
        let links = parse::parse_ip_link_json(&one_s).unwrap();
        let l = &links[0];
        assert_eq!(
            (l.ifname.as_str(), l.operstate.as_str(), l.mtu),
            ("swp7", "UP", Some(9216))
        );
        assert!(l.admin_up && l.lower_up);
        assert_eq!(one(&l.readings, Canonical::RxBytes, None, None), 1_000_001);
        assert_eq!(one(&l.readings, Canonical::TxPackets, None, None), 4_004);
        assert!(find(&l.readings, Canonical::LinkDown, None, None).is_empty());
        assert!(one_s.contains("\"address\":\"7c:fe:90:0a:b1:07\""));
        assert!(one_s.starts_with("[{\"ifindex\":12,\"ifname\":\"swp7\",\"flags\":[\"BROADCAST\",\"MULTICAST\",\"UP\",\"LOWER_UP\"]"));

        let two_s = ip_link_json_ss(&cfg(), &c, 12, [0; 6]);
        let l = &parse::parse_ip_link_json(&two_s).unwrap()[0];
        assert_eq!(one(&l.readings, Canonical::CrcErrors, None, None), 17);
        // 3 flaps after first coming up: 7 carrier changes.
        assert!(two_s.contains("\"carrier_changes\":7}"));
        assert_eq!(one(&l.readings, Canonical::LinkDown, None, None), 3);
    }

    #[test]
    fn ip_link_down_states() {
        let mut c = counters();
        let mut cfg = cfg();
        cfg.link_up = false;
        c.link_down_events = 4.0;
        let l = &parse::parse_ip_link_json(&ip_link_json_ss(&cfg, &c, 1, [0; 6])).unwrap()[0];
        assert!(l.admin_up && !l.lower_up);
        assert_eq!(l.operstate, "DOWN");
        // Down now, after 4 link-down events: still 4.
        assert_eq!(one(&l.readings, Canonical::LinkDown, None, None), 4);

        cfg.admin_up = false;
        cfg.link_up = true;
        let text = ip_link_json(&cfg, &c, 1, [0; 6]);
        assert!(text.contains("\"flags\":[\"BROADCAST\",\"MULTICAST\"]"));
        let l = &parse::parse_ip_link_json(&text).unwrap()[0];
        assert!(!l.admin_up && !l.lower_up);
    }

    #[test]
    fn dcb_round_trip() {
        let c = counters();
        let text = dcb_pfc(&cfg(), &c, false, false);
        assert_eq!(
            text,
            "pfc-cap 8 macsec-bypass off delay 0 \nprio-pfc 0:off 1:off 2:off 3:on 4:off 5:off 6:off 7:off \n"
        );
        let p = parse::parse_dcb_pfc(&text).unwrap();
        assert_eq!(p.enabled(), vec![3]);
        assert_eq!(
            (p.pfc_cap, p.delay, p.macsec_bypass),
            (Some(8), Some(0), Some(false))
        );
        let mut all = cfg();
        all.pfc = [true, false, true, false, true, false, true, false];
        assert_eq!(
            parse::parse_dcb_pfc(&dcb_pfc(&all, &c, false, false))
                .unwrap()
                .enabled(),
            vec![0, 2, 4, 6]
        );
        // -s adds the PFC frames each way; -j reads back the same.
        let text = dcb_pfc(&cfg(), &c, false, true);
        let p = parse::parse_dcb_pfc(&text).unwrap();
        assert_eq!((p.requests[3], p.indications[3]), (Some(703), Some(503)));
        let j = crate::counters::host_cfg::parse_dcb_pfc_json(&dcb_pfc(&cfg(), &c, true, true));
        assert_eq!(j.unwrap(), p);
    }

    #[test]
    fn ip_link_without_stats_has_no_stats64() {
        let text = ip_link(
            &port_netdev(&cfg(), 12, [0; 6]),
            &NetdevStats::of_port(&counters()),
            0,
        );
        assert!(!text.contains("stats64"), "{text}");
        let l = &parse::parse_ip_link_json(&text).unwrap()[0];
        assert_eq!(
            (l.ifname.as_str(), l.mtu, l.lower_up),
            ("swp7", Some(9216), true)
        );
        assert!(l.readings.is_empty());
    }

    #[test]
    fn tc_round_trip() {
        let c = counters();
        let text = tc_qdisc(&cfg(), &c);
        let reds = parse::parse_tc_qdisc(&text).unwrap();
        assert_eq!(reds.len(), 2, "{text}");
        // Band order: TC 5 (band 2, class 1:3) before TC 3 (band 4, class 1:5).
        let (r5, r3) = (&reds[0], &reds[1]);
        assert_eq!(
            (r5.parent.as_str(), r5.band, r5.tc),
            ("1:3", Some(2), Some(5))
        );
        assert_eq!(
            (r3.parent.as_str(), r3.band, r3.tc),
            ("1:5", Some(4), Some(3))
        );
        assert_eq!(
            (r3.priorities.clone(), r5.priorities.clone()),
            (vec![3], vec![5])
        );
        assert_eq!((r3.min_bytes, r3.max_bytes), (150_000, 1_500_000));
        assert_eq!((r5.min_bytes, r5.max_bytes), (524_288, 2 << 20));
        assert_eq!(r3.probability, Some(0.1));
        assert_eq!(r5.probability, Some(1.0));
        assert!(r3.ecn && r3.offloaded);
        assert_eq!((r3.sent_bytes, r3.sent_packets), (Some(303), Some(403)));
        assert_eq!(
            (r3.marked, r3.early, r3.pdrop, r3.other),
            (Some(1003), Some(0), Some(903), Some(0))
        );
        assert_eq!((r3.dropped, r3.overlimits), (Some(903), Some(1003)));
        assert_eq!((r5.marked, r5.pdrop), (Some(1005), Some(905)));
        assert!(text
            .contains("qdisc red 13: parent 1:3 offloaded limit 4Mb min 512Kb max 2Mb ecn ewma "));
        assert!(text.starts_with("qdisc ets 1: root refcnt 2 offloaded bands 8 strict 8 priomap 7 6 5 4 3 2 1 0 7 7 7 7 7 7 7 7 \n Sent 2000002 bytes 4004 pkt (dropped 7228, overlimits 0 requeues 0) \n backlog 0b 0p requeues 0\n"));
    }

    #[test]
    fn tc_red_not_offloaded_when_mlxsw_refuses_it() {
        let mut cfg = cfg();
        cfg.ecn = [None; 8];
        cfg.ecn[0] = Some((0, 90_000, 5));
        let reds = parse::parse_tc_qdisc(&tc_qdisc(&cfg, &counters())).unwrap();
        assert_eq!(reds.len(), 1);
        assert!(!reds[0].offloaded);
        assert_eq!((reds[0].tc, reds[0].marked), (Some(0), Some(0)));
        assert_eq!(reds[0].probability, Some(0.05));
    }

    #[test]
    fn no_ecn_means_only_the_root() {
        let mut cfg = cfg();
        cfg.ecn = [None; 8];
        let text = tc_qdisc(&cfg, &PortCounters::default());
        assert_eq!(text.lines().count(), 3);
        assert_eq!(parse::parse_tc_qdisc(&text).unwrap(), vec![]);
    }

    #[test]
    fn sizes_and_g_format_follow_iproute2() {
        assert_eq!(sprint_size(30000), "30000b");
        assert_eq!(sprint_size(400000), "400000b");
        assert_eq!(sprint_size(1_000_000), "1000000b");
        assert_eq!(sprint_size(524_288), "512Kb");
        assert_eq!(sprint_size(1030), "1Kb");
        assert_eq!(sprint_size(1_572_864), "1536Kb");
        assert_eq!(sprint_size(2 << 20), "2Mb");
        assert_eq!(fmt_g(0.1), "0.1");
        assert_eq!(fmt_g(429_496_729.0 / 4_294_967_296.0), "0.1");
        assert_eq!(fmt_g(1.0), "1");
        assert_eq!(fmt_g(1e6), "1e+06");
        assert_eq!(fmt_g(0.00001), "1e-05");
        assert_eq!(fmt_g(977.0), "977");
        assert_eq!(fmt_g(0.123456789), "0.123457");
    }

    #[test]
    fn red_ewma_and_cell_log_match_tc_for_a_worked_case() {
        // min 30000, max 90000, avpkt 1000: burst 50, a = 21, so W = 1/32.
        assert_eq!(red_wlog(30_000, 90_000), 5);
        assert_eq!(red_scell_log(5), 15);
    }
}
