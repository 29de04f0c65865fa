//! What the host tools print for an emulated NIC: `ethtool -S` and `ethtool -i`
//! as mlx5 prints them, the RDMA device's sysfs counters as
//! `grep -r . …/counters …/hw_counters` prints them, and `mlnx_qos -i`
//! (`lldp`, `config_out`, `sysfs` and `optics` print the rest). Rendered from
//! [`NicConfig`] and [`NicCounters`] only; the
//! harness reads this text with the same parsers it uses on a real node
//! (`counters::host`).
//!
//! Key sets and their order follow the kernel (`en_stats.c` group order: sw,
//! qcnt, vnic_env, vport, 802_3, 2863, 2819, phy, eth_ext, pcie, per_prio, pme,
//! channels). Values are the model's totals rounded down. What the model does
//! not track prints as zero: the netdev's software counters (RoCE bypasses the
//! kernel, and the model carries no other traffic), PCIe and module events.

use std::fmt::Write as _;

use super::state::{NicConfig, NicCounters};

/// A model total as the u64 a counter holds (rounded down; never negative).
fn int(v: f64) -> u64 {
    // `as` saturates and maps NaN to 0.
    v.max(0.0).floor() as u64
}

/// The software counters (`sw_stats_desc`): traffic through the kernel stack,
/// which RoCE bypasses.
const SW: &str = "rx_packets rx_bytes tx_packets tx_bytes tx_tso_packets tx_tso_bytes \
    tx_tso_inner_packets tx_tso_inner_bytes tx_added_vlan_packets tx_nop tx_mpwqe_blks \
    tx_mpwqe_pkts rx_lro_packets rx_lro_bytes rx_gro_packets rx_gro_bytes rx_gro_skbs \
    rx_gro_match_packets rx_gro_large_hds rx_ecn_mark rx_removed_vlan_packets \
    rx_csum_unnecessary rx_csum_none rx_csum_complete rx_csum_complete_tail \
    rx_csum_complete_tail_slow rx_csum_unnecessary_inner rx_xdp_drop rx_xdp_redirect \
    rx_xdp_tx_xmit rx_xdp_tx_mpwqe rx_xdp_tx_inlnw rx_xdp_tx_nops rx_xdp_tx_full \
    rx_xdp_tx_err rx_xdp_tx_cqe tx_csum_none tx_csum_partial tx_csum_partial_inner \
    tx_queue_stopped tx_queue_dropped tx_xmit_more tx_recover tx_cqes tx_queue_wake \
    tx_cqe_err tx_xdp_xmit tx_xdp_mpwqe tx_xdp_inlnw tx_xdp_nops tx_xdp_full tx_xdp_err \
    tx_xdp_cqes rx_wqe_err rx_mpwqe_filler_cqes rx_mpwqe_filler_strides \
    rx_oversize_pkts_sw_drop rx_buff_alloc_err rx_cqe_compress_blks rx_cqe_compress_pkts \
    rx_congst_umr rx_arfs_err rx_recover ch_events ch_poll ch_arm ch_aff_change \
    ch_force_irq ch_eq_rearm";

const VPORT_RDMA_MULTICAST: &str = "rx_vport_rdma_multicast_packets \
    rx_vport_rdma_multicast_bytes tx_vport_rdma_multicast_packets tx_vport_rdma_multicast_bytes";

/// IEEE 802.3 counters the model has no traffic for (no multicast, no length errors).
const IEEE_802_3_UNMODELLED: &str = "tx_multicast_phy tx_broadcast_phy rx_multicast_phy \
    rx_broadcast_phy rx_in_range_len_errors_phy rx_out_of_range_len_phy rx_oversize_pkts_phy";

const PCIE: &str = "rx_pci_signal_integrity tx_pci_signal_integrity \
    outbound_pci_buffer_overflow outbound_pci_stalled_rd outbound_pci_stalled_wr \
    outbound_pci_stalled_rd_events outbound_pci_stalled_wr_events";

/// Module (transceiver) events.
const PME: &str = "module_unplug module_bus_stuck module_high_temp module_bad_shorted";

/// Per-channel (`ch<N>_`), receive ring (`rx<N>_`) and send ring (`tx<N>_`) names.
const CHANNEL: &str = "events poll arm aff_change force_irq eq_rearm";
const RQ: &str = "packets bytes csum_complete csum_unnecessary csum_none xdp_drop \
    lro_packets lro_bytes ecn_mark wqe_err buff_alloc_err recover";
const SQ: &str = "packets bytes tso_packets tso_bytes csum_partial nop stopped dropped \
    xmit_more recover cqes wake cqe_err";

/// `ethtool -S <netdev>` for an mlx5 port.
///
/// As in the kernel (`mlx5e_grp_per_prio_pfc_fill_strings`), the per-priority
/// pause counters appear only for priorities with PFC enabled, and the
/// `*_global_pause*` set appears only when no priority has PFC (802.3x global
/// pause is then on, the mlx5 default). Per-priority discards are charged to
/// the priority that received the most packets: the model keeps discards per
/// port only. Pause transitions (Xoff → Xon) are approximated by the pause
/// frame count: the model keeps no episode count.
pub(crate) fn ethtool_stats(cfg: &NicConfig, c: &NicCounters) -> String {
    let mut s: Vec<(String, u64)> = Vec::with_capacity(260);
    let mut put = |name: &str, v: u64| s.push((name.to_string(), v));

    // sw: kernel-stack traffic only.
    for name in SW.split_whitespace() {
        put(name, 0);
    }
    // qcnt, vnic_env.
    put("rx_out_of_buffer", 0);
    put("rx_if_down_packets", 0);
    put("rx_steer_missed_packets", 0);
    // vport: every packet in the model is RoCE.
    for dir in ["rx", "tx"] {
        for kind in ["unicast", "multicast", "broadcast"] {
            put(&format!("{dir}_vport_{kind}_packets"), 0);
            put(&format!("{dir}_vport_{kind}_bytes"), 0);
        }
    }
    put("rx_vport_rdma_unicast_packets", int(c.rx_packets));
    put("rx_vport_rdma_unicast_bytes", int(c.rx_bytes));
    put("tx_vport_rdma_unicast_packets", int(c.tx_packets));
    put("tx_vport_rdma_unicast_bytes", int(c.tx_bytes));
    for name in VPORT_RDMA_MULTICAST.split_whitespace() {
        put(name, 0);
    }
    // 802_3. PFC frames are MAC control frames.
    let rx_pause: f64 = c.prio.iter().map(|p| p.rx_pause).sum();
    let tx_pause: f64 = c.prio.iter().map(|p| p.tx_pause).sum();
    put("tx_packets_phy", int(c.tx_packets));
    put("rx_packets_phy", int(c.rx_packets));
    put("rx_crc_errors_phy", int(c.rx_crc_errors));
    put("tx_bytes_phy", int(c.tx_bytes));
    put("rx_bytes_phy", int(c.rx_bytes));
    for name in IEEE_802_3_UNMODELLED.split_whitespace() {
        put(name, 0);
    }
    put("rx_symbol_err_phy", int(c.rx_symbol_errors));
    put("tx_mac_control_phy", int(tx_pause));
    put("rx_mac_control_phy", int(rx_pause));
    put("rx_unsupported_op_phy", 0);
    put("rx_pause_ctrl_phy", int(rx_pause));
    put("tx_pause_ctrl_phy", int(tx_pause));
    // 2863.
    put("rx_discards_phy", int(c.rx_discards));
    put("tx_discards_phy", 0);
    put("tx_errors_phy", 0);
    // 2819: every RoCE frame is one MTU of payload plus 62 bytes of headers,
    // so the received packets land in one size bucket.
    put("rx_undersize_pkts_phy", 0);
    put("rx_fragments_phy", 0);
    put("rx_jabbers_phy", 0);
    let frame = u64::from(cfg.mtu) + 62;
    for (lo, hi) in [
        (0, 64),
        (65, 127),
        (128, 255),
        (256, 511),
        (512, 1023),
        (1024, 1518),
        (1519, 2047),
        (2048, 4095),
        (4096, 8191),
        (8192, 10239),
    ] {
        let name = if lo == 0 {
            "rx_64_bytes_phy".to_string()
        } else {
            format!("rx_{lo}_to_{hi}_bytes_phy")
        };
        put(
            &name,
            if (lo..=hi).contains(&frame) {
                int(c.rx_packets)
            } else {
                0
            },
        );
    }
    // phy: per-lane raw errors are the corrected bits spread over 4 lanes.
    put("link_down_events_phy", int(c.link_down_events));
    put("rx_pcs_symbol_err_phy", int(c.fec_uncorrectable));
    let corrected = int(c.rx_corrected_bits);
    put("rx_corrected_bits_phy", corrected);
    for lane in 0..4u64 {
        put(
            &format!("rx_err_lane_{lane}_phy"),
            corrected / 4 + u64::from(lane < corrected % 4),
        );
    }
    // eth_ext, pcie.
    put("rx_buffer_passed_thres_phy", 0);
    for name in PCIE.split_whitespace() {
        put(name, 0);
    }
    // per_prio: traffic for every priority, then PFC for the enabled ones.
    let busiest = (0..8).fold(0, |best, p| {
        if c.prio[p].rx_packets > c.prio[best].rx_packets {
            p
        } else {
            best
        }
    });
    for (p, pc) in c.prio.iter().enumerate() {
        put(&format!("rx_prio{p}_bytes"), int(pc.rx_bytes));
        put(&format!("rx_prio{p}_packets"), int(pc.rx_packets));
        put(
            &format!("rx_prio{p}_discards"),
            if p == busiest { int(c.rx_discards) } else { 0 },
        );
        put(&format!("tx_prio{p}_bytes"), int(pc.tx_bytes));
        put(&format!("tx_prio{p}_packets"), int(pc.tx_packets));
    }
    for (p, pc) in c.prio.iter().enumerate().filter(|&(p, _)| cfg.pfc[p]) {
        put(&format!("rx_prio{p}_pause"), int(pc.rx_pause));
        put(
            &format!("rx_prio{p}_pause_duration"),
            int(pc.rx_pause_duration_us),
        );
        put(&format!("tx_prio{p}_pause"), int(pc.tx_pause));
        put(
            &format!("tx_prio{p}_pause_duration"),
            int(pc.tx_pause_duration_us),
        );
        put(&format!("rx_prio{p}_pause_transition"), int(pc.rx_pause));
    }
    if !cfg.pfc.iter().any(|&on| on) {
        let sum = |f: fn(&super::state::PrioCounters) -> f64| int(c.prio.iter().map(f).sum());
        put("rx_global_pause", sum(|p| p.rx_pause));
        put("rx_global_pause_duration", sum(|p| p.rx_pause_duration_us));
        put("tx_global_pause", sum(|p| p.tx_pause));
        put("tx_global_pause_duration", sum(|p| p.tx_pause_duration_us));
        put("rx_global_pause_transition", sum(|p| p.rx_pause));
    }
    put("tx_pause_storm_warning_events", 0);
    put("tx_pause_storm_error_events", 0);
    // pme.
    for name in PME.split_whitespace() {
        put(name, 0);
    }
    // channels: one channel's rings, as on a NIC limited to one queue.
    for name in CHANNEL.split_whitespace() {
        put(&format!("ch0_{name}"), 0);
    }
    for name in RQ.split_whitespace() {
        put(&format!("rx0_{name}"), 0);
    }
    for name in SQ.split_whitespace() {
        put(&format!("tx0_{name}"), 0);
    }

    let mut out = String::from("NIC statistics:\n");
    for (name, v) in s {
        let _ = writeln!(out, "     {name}: {v}");
    }
    out
}

/// The IB PMA port counters of a device without extended counters, in the
/// order of `pma_attrs` (`drivers/infiniband/core/sysfs.c`), with their width.
const PMA: [(&str, u32); 17] = [
    ("symbol_error", 16),
    ("link_error_recovery", 8),
    ("link_downed", 8),
    ("port_rcv_errors", 16),
    ("port_rcv_remote_physical_errors", 16),
    ("port_rcv_switch_relay_errors", 16),
    ("port_xmit_discards", 16),
    ("port_xmit_constraint_errors", 8),
    ("port_rcv_constraint_errors", 8),
    ("local_link_integrity_errors", 4),
    ("excessive_buffer_overrun_errors", 4),
    ("VL15_dropped", 16),
    ("port_xmit_data", 32),
    ("port_rcv_data", 32),
    ("port_xmit_packets", 32),
    ("port_rcv_packets", 32),
    ("port_xmit_wait", 32),
];

/// mlx5's `hw_counters` files in the driver's order (`drivers/infiniband/hw/mlx5/counters.c`:
/// basic, out-of-sequence, retransmission, extended error, RoCE acceleration,
/// congestion, extended PPCNT).
const HW_COUNTERS: [&str; 31] = [
    "rx_write_requests",
    "rx_read_requests",
    "rx_atomic_requests",
    "rx_dct_connect",
    "out_of_buffer",
    "out_of_sequence",
    "duplicate_request",
    "rnr_nak_retry_err",
    "packet_seq_err",
    "implied_nak_seq_err",
    "local_ack_timeout_err",
    "resp_local_length_error",
    "resp_cqe_error",
    "req_cqe_error",
    "req_remote_invalid_request",
    "req_remote_access_errors",
    "resp_remote_access_errors",
    "resp_cqe_flush_error",
    "req_cqe_flush_error",
    "req_transport_retries_exceeded",
    "req_rnr_retries_exceeded",
    "roce_adp_retrans",
    "roce_adp_retrans_to",
    "roce_slow_restart",
    "roce_slow_restart_cnps",
    "roce_slow_restart_trans",
    "rp_cnp_ignored",
    "rp_cnp_handled",
    "np_ecn_marked_roce_packets",
    "np_cnp_sent",
    "rx_icrc_encapsulated",
];

/// What `grep -r . /sys/class/infiniband/<device>/ports/1/counters
/// /sys/class/infiniband/<device>/ports/1/hw_counters` prints: `path:value`
/// per file.
///
/// The device has no extended PMA counters, so each `counters/` file stops at
/// its width's maximum (the PMA spec's counters saturate): 2^32 − 1 for the
/// data and packet counters (`port_*_data` in 4-octet words), 65535 for the
/// 16-bit error counters, 255 for `link_downed`. `hw_counters/lifespan` is the
/// stats cache lifetime in ms (10 by default). Files are listed in name order
/// within each directory; a real sysfs directory lists in kernfs hash order,
/// so nothing may depend on the order.
pub(crate) fn sysfs_counters(device: &str, c: &NicCounters) -> String {
    let pma_value = |name: &str| -> f64 {
        match name {
            "symbol_error" => c.rx_symbol_errors,
            "link_downed" => c.link_down_events,
            "port_rcv_errors" => c.rx_crc_errors,
            "port_xmit_data" => c.tx_bytes / 4.0,
            "port_rcv_data" => c.rx_bytes / 4.0,
            "port_xmit_packets" => c.tx_packets,
            "port_rcv_packets" => c.rx_packets,
            _ => 0.0,
        }
    };
    let mut pma: Vec<(&str, u64)> = PMA
        .iter()
        .map(|&(name, bits)| (name, int(pma_value(name)).min((1u64 << bits) - 1)))
        .collect();
    pma.sort_by_key(|&(name, _)| name);

    let hw_value = |name: &str| -> f64 {
        match name {
            "out_of_sequence" => c.out_of_sequence,
            "packet_seq_err" => c.packet_seq_err,
            "local_ack_timeout_err" => c.local_ack_timeout_err,
            "req_cqe_error" => c.req_cqe_error,
            "roce_adp_retrans" => c.retransmits,
            "rp_cnp_handled" => c.rp_cnp_handled,
            "np_ecn_marked_roce_packets" => c.np_ecn_marked_roce_packets,
            "np_cnp_sent" => c.np_cnp_sent,
            _ => 0.0,
        }
    };
    let mut hw: Vec<(&str, u64)> = HW_COUNTERS.iter().map(|&n| (n, int(hw_value(n)))).collect();
    hw.push(("lifespan", 10));
    hw.sort_by_key(|&(name, _)| name);

    let base = format!("/sys/class/infiniband/{device}/ports/1");
    let mut out = String::new();
    for (name, v) in pma {
        let _ = writeln!(out, "{base}/counters/{name}:{v}");
    }
    for (name, v) in hw {
        let _ = writeln!(out, "{base}/hw_counters/{name}:{v}");
    }
    out
}

/// The board id (PSID) of a ConnectX-7 when the model's firmware string
/// names none (`MT_0000000834`, seen on a real CX-7 with firmware 28.42).
const DEFAULT_PSID: &str = "MT_0000000834";

/// The firmware version and board id (PSID) of a NIC: a firmware string
/// may carry its board in parentheses (`22.41.1000 (MT_0000000359)`, a
/// `firmware` defect naming another board), else the NIC is the default
/// ConnectX-7 board.
pub(crate) fn firmware_and_psid(cfg: &NicConfig) -> (&str, &str) {
    match cfg.firmware.split_once('(') {
        Some((fw, rest)) => (fw.trim(), rest.trim_end_matches(')').trim()),
        None => (cfg.firmware.trim(), DEFAULT_PSID),
    }
}

/// `ethtool -i <netdev>` for mlx5. The driver prints the firmware as
/// `%d.%d.%04d (board id)`.
pub(crate) fn ethtool_info(cfg: &NicConfig) -> String {
    let (fw, psid) = firmware_and_psid(cfg);
    format!(
        "driver: mlx5_core\nversion: {}\nfirmware-version: {fw} ({psid})\nexpansion-rom-version: \n\
         bus-info: {}\nsupports-statistics: yes\nsupports-test: yes\nsupports-eeprom-access: no\n\
         supports-register-dump: no\nsupports-priv-flags: yes\n",
        cfg.driver_version, cfg.bus_info
    )
}

/// `mlnx_qos -i <netdev>` as the mlnx-tools version of the shared fixtures
/// prints it (no buffer rows): DCBX mode, trust, the DSCP table (highest DSCP
/// first, at most 8 per line, a prio with more gets more lines), cable length,
/// the PFC table, then each TC with its priorities. The TC map is mlx5's
/// default, which swaps priorities 0 and 1 (priority 0 on TC 1).
pub(crate) fn mlnx_qos(cfg: &NicConfig) -> String {
    let mut out = String::from("DCBX mode: OS controlled\n");
    if cfg.trust_dscp {
        out.push_str("Priority trust state: dscp\ndscp2prio mapping:\n");
        for prio in 0..8u8 {
            let dscps: Vec<String> = (0..64usize)
                .rev()
                .filter(|&d| cfg.dscp2prio[d] == prio)
                .map(|d| format!("{d:02},"))
                .collect();
            for chunk in dscps.chunks(8) {
                let _ = writeln!(out, "\tprio:{prio} dscp:{}", chunk.concat());
            }
        }
    } else {
        out.push_str("Priority trust state: pcp\n");
    }
    out.push_str("Cable len: 7\nPFC configuration:\n");
    out.push_str("\tpriority    0   1   2   3   4   5   6   7\n\tenabled     ");
    for on in cfg.pfc {
        let _ = write!(out, "{}   ", u8::from(on));
    }
    out.push('\n');
    let prio_tc = |p: u8| match p {
        0 => 1,
        1 => 0,
        p => p,
    };
    for tc in 0..8u8 {
        let _ = writeln!(out, "tc: {tc} ratelimit: unlimited, tsa: vendor");
        for p in (0..8u8).filter(|&p| prio_tc(p) == tc) {
            let _ = writeln!(out, "\t priority:  {p}");
        }
    }
    out
}

/// FNV-1a, for stable made-up identifiers.
pub(super) fn fnv(parts: &[&str]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in parts.iter().flat_map(|p| p.bytes().chain([0])) {
        h = (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::counters::host::{
        parse_ethtool_info, parse_ethtool_stats, parse_mlnx_qos, parse_sysfs_counters,
    };
    use crate::counters::{Canonical, Reading};
    use crate::emu::state::PrioCounters;

    fn cfg(pfc: [bool; 8]) -> NicConfig {
        let mut dscp2prio = [0u8; 64];
        for (d, p) in dscp2prio.iter_mut().enumerate() {
            *p = (d >> 3) as u8;
        }
        dscp2prio[26] = 3;
        dscp2prio[48] = 6;
        dscp2prio[5] = 3;
        NicConfig {
            netdev: "eth2".into(),
            device: "mlx5_2".into(),
            speed_mbps: 400_000,
            link_up: true,
            admin_up: true,
            mtu: 4096,
            driver_version: "24.10-1.1.4".into(),
            firmware: "28.39.1002".into(),
            bus_info: "0000:1a:00.0".into(),
            pfc,
            trust_dscp: true,
            dscp2prio,
            neighbor: Some(("leaf1".into(), "Ethernet8".into(), "10.0.0.11".into())),
            mac: [0x02, 0, 0, 0, 0, 1],
        }
    }

    /// Every field a distinct value with a fraction that must be rounded down.
    fn counters() -> NicCounters {
        let mut c = NicCounters {
            rx_bytes: 1_000_000_001.7,
            tx_bytes: 2_000_000_002.9,
            rx_packets: 3_000_003.5,
            tx_packets: 4_000_004.5,
            rx_discards: 5005.5,
            rx_crc_errors: 6006.2,
            rx_symbol_errors: 7007.9,
            rx_corrected_bits: 8008.1,
            fec_uncorrectable: 9009.9,
            link_down_events: 11.4,
            np_cnp_sent: 12012.2,
            np_ecn_marked_roce_packets: 13013.3,
            rp_cnp_handled: 14014.4,
            out_of_sequence: 15015.5,
            packet_seq_err: 16016.6,
            local_ack_timeout_err: 17017.7,
            retransmits: 18018.8,
            req_cqe_error: 19019.9,
            ..NicCounters::default()
        };
        for (p, pc) in c.prio.iter_mut().enumerate() {
            let b = 100_000.0 * (p as f64 + 1.0);
            *pc = PrioCounters {
                rx_bytes: b + 1.5,
                rx_packets: b + 2.5,
                tx_bytes: b + 3.5,
                tx_packets: b + 4.5,
                rx_pause: b + 5.5,
                rx_pause_duration_us: b + 6.5,
                tx_pause: b + 7.5,
                tx_pause_duration_us: b + 8.5,
            };
        }
        c
    }

    fn one(rs: &[Reading], canonical: Canonical, vendor: &str, priority: Option<u8>) -> u64 {
        let hits: Vec<&Reading> = rs
            .iter()
            .filter(|r| r.canonical == canonical && r.vendor == vendor && r.priority == priority)
            .collect();
        assert_eq!(
            hits.len(),
            1,
            "{canonical:?} {vendor} {priority:?}: {hits:?}"
        );
        hits[0].value
    }

    #[test]
    fn ethtool_stats_round_trip_every_field() {
        let c = counters();
        let rs = parse_ethtool_stats(&ethtool_stats(&cfg([true; 8]), &c)).unwrap();
        use Canonical::*;
        assert_eq!(one(&rs, RxBytes, "rx_bytes_phy", None), 1_000_000_001);
        assert_eq!(one(&rs, TxBytes, "tx_bytes_phy", None), 2_000_000_002);
        assert_eq!(one(&rs, RxPackets, "rx_packets_phy", None), 3_000_003);
        assert_eq!(one(&rs, TxPackets, "tx_packets_phy", None), 4_000_004);
        assert_eq!(one(&rs, Discards, "rx_discards_phy", None), 5005);
        assert_eq!(one(&rs, CrcErrors, "rx_crc_errors_phy", None), 6006);
        assert_eq!(one(&rs, SymbolErrors, "rx_symbol_err_phy", None), 7007);
        assert_eq!(one(&rs, FecCorrected, "rx_corrected_bits_phy", None), 8008);
        assert_eq!(
            one(&rs, FecUncorrected, "rx_pcs_symbol_err_phy", None),
            9009
        );
        assert_eq!(one(&rs, LinkDown, "link_down_events_phy", None), 11);
        for p in 0..8u8 {
            let b = 100_000 * (u64::from(p) + 1);
            let v = |name: &str, c| one(&rs, c, &name.replace('N', &p.to_string()), Some(p));
            assert_eq!(v("rx_prioN_bytes", RxBytes), b + 1);
            assert_eq!(v("rx_prioN_packets", RxPackets), b + 2);
            assert_eq!(v("tx_prioN_bytes", TxBytes), b + 3);
            assert_eq!(v("tx_prioN_packets", TxPackets), b + 4);
            assert_eq!(v("rx_prioN_pause", PfcPauseRx), b + 5);
            assert_eq!(v("rx_prioN_pause_duration", PfcPauseDurationRxUs), b + 6);
            assert_eq!(v("tx_prioN_pause", PfcPauseTx), b + 7);
            assert_eq!(v("tx_prioN_pause_duration", PfcPauseDurationTxUs), b + 8);
        }
        // Port discards are charged to the busiest priority (7 here).
        assert_eq!(one(&rs, Discards, "rx_prio7_discards", Some(7)), 5005);
        assert_eq!(one(&rs, Discards, "rx_prio0_discards", Some(0)), 0);
        assert!(rs.iter().all(|r| !r.vendor.contains("global")));
    }

    #[test]
    fn ethtool_stats_lines_are_well_formed_and_unique() {
        let text = ethtool_stats(&cfg([true; 8]), &counters());
        let mut seen = std::collections::HashSet::new();
        let body: Vec<&str> = text.lines().skip(1).collect();
        for line in &body {
            let (name, v) = line
                .strip_prefix("     ")
                .and_then(|l| l.split_once(": "))
                .unwrap_or_else(|| panic!("{line:?}"));
            assert!(
                name.bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_'),
                "{line:?}"
            );
            assert!(v.parse::<u64>().is_ok(), "{line:?}");
            assert!(seen.insert(name), "{name} twice");
        }
        // Kernel group order: sw first, then q counters, …, channels last.
        assert!(text.contains("\n     ch_eq_rearm: 0\n     rx_out_of_buffer: 0\n"));
        assert!(text.ends_with("     tx0_cqe_err: 0\n"));
        // 69 sw, 3 q/vnic, 20 vport, 18 + 3 + 13 IEEE/RFC, 7 phy, 1 eth_ext,
        // 7 pcie, 40 per-priority traffic, 8 × 5 PFC, 2 stall, 4 module, 31 ring.
        assert_eq!(body.len(), 258);
    }

    #[test]
    fn ethtool_stats_pause_counters_only_where_pfc_is_on() {
        let c = counters();
        let mut pfc = [false; 8];
        pfc[3] = true;
        let text = ethtool_stats(&cfg(pfc), &c);
        assert!(text.starts_with("NIC statistics:\n     rx_packets: 0\n"));
        assert!(text.contains("\n     rx_prio3_pause_transition: 400005\n"));
        let rs = parse_ethtool_stats(&text).unwrap();
        let pauses: Vec<&Reading> = rs
            .iter()
            .filter(|r| r.canonical == Canonical::PfcPauseRx)
            .collect();
        assert_eq!(pauses.len(), 1);
        assert_eq!((pauses[0].priority, pauses[0].value), (Some(3), 400_005));

        // No PFC at all: 802.3x global pause, port-wide.
        let rs = parse_ethtool_stats(&ethtool_stats(&cfg([false; 8]), &c)).unwrap();
        // The total is rounded, not the priorities: 8 × 0.5 adds 4.
        let sum: u64 = (1..=8).map(|k| 100_000 * k + 5).sum::<u64>() + 4;
        assert_eq!(
            one(&rs, Canonical::PfcPauseRx, "rx_global_pause", None),
            sum
        );
        assert!(rs
            .iter()
            .all(|r| r.canonical != Canonical::PfcPauseTx || r.priority.is_none()));
    }

    #[test]
    fn sysfs_round_trip_and_saturation() {
        let c = counters();
        let (dev, rs) = parse_sysfs_counters(&sysfs_counters("mlx5_2", &c)).unwrap();
        assert_eq!(dev, "mlx5_2");
        use Canonical::*;
        let get = |v: &str| {
            rs.iter()
                .find(|r| r.vendor == v)
                .unwrap_or_else(|| panic!("{v}"))
        };
        // Bytes in 4-octet words, converted back (rounded down to a word).
        assert_eq!(
            (get("port_rcv_data").value, get("port_rcv_data").bits),
            (1_000_000_000, Some(34))
        );
        assert_eq!(get("port_xmit_data").value, 2_000_000_000);
        assert_eq!(
            (get("port_rcv_packets").value, get("port_rcv_packets").bits),
            (3_000_003, Some(32))
        );
        assert_eq!(get("port_xmit_packets").value, 4_000_004);
        assert_eq!(
            (get("symbol_error").canonical, get("symbol_error").value),
            (SymbolErrors, 7007)
        );
        assert_eq!(
            (
                get("port_rcv_errors").canonical,
                get("port_rcv_errors").value
            ),
            (CrcErrors, 6006)
        );
        assert_eq!(
            (get("link_downed").value, get("link_downed").bits),
            (11, Some(8))
        );
        assert_eq!(get("np_cnp_sent").value, 12012);
        assert_eq!(get("np_ecn_marked_roce_packets").value, 13013);
        assert_eq!(get("rp_cnp_handled").value, 14014);
        assert_eq!(get("out_of_sequence").value, 15015);
        assert_eq!(get("packet_seq_err").value, 16016);
        assert_eq!(get("local_ack_timeout_err").value, 17017);
        assert_eq!(
            (
                get("roce_adp_retrans").canonical,
                get("roce_adp_retrans").value
            ),
            (Retransmits, 18018)
        );

        // Past every width: the PMA counters stop at their maximum.
        let big = NicCounters {
            rx_bytes: 4.0 * 5e9,
            tx_bytes: 4.0 * 4_294_967_295.0,
            rx_packets: 5e9,
            rx_symbol_errors: 70_000.0,
            rx_crc_errors: 65_535.0,
            link_down_events: 300.0,
            np_cnp_sent: 6e12,
            ..NicCounters::default()
        };
        let text = sysfs_counters("mlx5_0", &big);
        assert!(text
            .contains("/sys/class/infiniband/mlx5_0/ports/1/counters/port_rcv_data:4294967295\n"));
        assert!(text.contains("/counters/symbol_error:65535\n"));
        assert!(text.contains("/counters/link_downed:255\n"));
        assert!(text.contains("/hw_counters/lifespan:10\n"));
        let (_, rs) = parse_sysfs_counters(&text).unwrap();
        let get = |v: &str| {
            rs.iter()
                .find(|r| r.vendor == v)
                .unwrap_or_else(|| panic!("{v}"))
        };
        assert_eq!(get("port_rcv_data").value, (1 << 34) - 1);
        assert_eq!(get("port_xmit_data").value, (1 << 34) - 1);
        assert_eq!(get("port_rcv_packets").value, u64::from(u32::MAX));
        assert_eq!(
            (get("symbol_error").value, get("symbol_error").bits),
            (65535, Some(16))
        );
        assert_eq!(get("port_rcv_errors").value, 65535);
        assert_eq!(
            (get("link_downed").value, get("link_downed").bits),
            (255, Some(8))
        );
        // hw_counters are 64-bit in sysfs.
        assert_eq!(
            (get("np_cnp_sent").value, get("np_cnp_sent").bits),
            (6_000_000_000_000, None)
        );
    }

    #[test]
    fn ethtool_info_round_trip() {
        let mut c = cfg([false; 8]);
        let i = parse_ethtool_info(&ethtool_info(&c)).unwrap();
        assert_eq!(i.driver, "mlx5_core");
        assert_eq!(i.version.as_deref(), Some("24.10-1.1.4"));
        assert_eq!(i.firmware.as_deref(), Some("28.39.1002 (MT_0000000834)"));
        assert_eq!(i.firmware_version(), Some("28.39.1002"));
        assert_eq!(i.bus_info.as_deref(), Some("0000:1a:00.0"));
        c.firmware = "22.41.1000 (MT_0000000359)".into();
        let i = parse_ethtool_info(&ethtool_info(&c)).unwrap();
        assert_eq!(i.firmware.as_deref(), Some("22.41.1000 (MT_0000000359)"));
    }

    #[test]
    fn mlnx_qos_round_trip() {
        let mut pfc = [false; 8];
        pfc[3] = true;
        let c = cfg(pfc);
        let text = mlnx_qos(&c);
        // Priority 3 has 9 DSCP values: two lines, highest first.
        assert!(text.contains("\tprio:3 dscp:31,30,29,28,27,26,25,24,\n\tprio:3 dscp:05,\n"));
        assert!(text.contains("\tenabled     0   0   0   1   0   0   0   0   \n"));
        let q = parse_mlnx_qos(&text).unwrap();
        assert_eq!(q.trust_dscp, Some(true));
        assert_eq!(q.pfc, Some(pfc));
        assert_eq!(q.dscp2prio.len(), 64);
        for d in 0..64u8 {
            assert_eq!(q.dscp2prio[&d], c.dscp2prio[usize::from(d)], "dscp {d}");
        }
        assert_eq!(q.prio_tc[&0], 1);
        assert_eq!(q.prio_tc[&1], 0);
        assert_eq!(q.prio_tc[&3], 3);

        let pcp = NicConfig {
            trust_dscp: false,
            ..cfg([true; 8])
        };
        let q = parse_mlnx_qos(&mlnx_qos(&pcp)).unwrap();
        assert_eq!((q.trust_dscp, q.pfc), (Some(false), Some([true; 8])));
        assert!(q.dscp2prio.is_empty());
    }
}
