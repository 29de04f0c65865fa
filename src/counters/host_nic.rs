//! `ethtool -S` of RoCE NICs other than mlx5: Intel `ice` (E810, RDMA by
//! `irdma`) and Broadcom `bnxt_en` (RDMA by `bnxt_re`). Names come from the
//! kernel's `ice_ethtool.c` (`ice_gstrings_pf_stats`, `ICE_PF_STAT(...".nic")`
//! and the per-priority `rx_priority_%u_xoff.nic`) and `bnxt_ethtool.c`
//! (`bnxt_port_stats_arr`, `bnxt_port_stats_ext_arr` and the `_pri%d`
//! arrays). mlx5 has its own parser in [`super::host`], which this one does
//! not replace. Per-queue and per-ring counters (`[3]: rx_ucast_packets`,
//! `rx_queue_3_bytes`) are software views and are skipped.

use super::{value, Canonical, ParseError, Reading};

fn reading(canonical: Canonical, vendor: &str, priority: Option<u8>, value: u64) -> Reading {
    Reading {
        canonical,
        vendor: vendor.to_string(),
        priority,
        queue: None,
        value,
        bits: None,
    }
}

/// `3_xoff` → (3, `_xoff`), a priority below 8.
fn prio(s: &str) -> Option<(u8, &str)> {
    let end = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let p: u8 = s[..end].parse().ok()?;
    (p < 8).then_some((p, &s[end..]))
}

/// One ice port counter. ice suffixes port (wire) counters with `.nic`;
/// the out-of-tree driver and i40e prefix them with `port.` instead.
fn ice(name: &str, v: u64) -> Option<Reading> {
    use Canonical::*;
    let base = name
        .strip_suffix(".nic")
        .or_else(|| name.strip_prefix("port."))?;
    let fixed = match base {
        "rx_bytes" => Some(RxBytes),
        "tx_bytes" => Some(TxBytes),
        // `stats.eth.rx_discards`: no receive descriptor for the packet.
        "rx_dropped" => Some(Discards),
        "tx_dropped_link_down" => Some(Drops),
        "rx_crc_errors" => Some(CrcErrors),
        // 802.3x link-level pause, not per priority.
        "link_xoff_rx" => Some(PfcPauseRx),
        "link_xoff_tx" => Some(PfcPauseTx),
        _ => None,
    };
    if let Some(c) = fixed {
        return Some(reading(c, name, None, v));
    }
    // XOFF frames are the pauses; XON ends one early and is not counted.
    if let Some((p, "_xoff")) = base.strip_prefix("rx_priority_").and_then(prio) {
        return Some(reading(PfcPauseRx, name, Some(p), v));
    }
    if let Some((p, "_xoff")) = base.strip_prefix("tx_priority_").and_then(prio) {
        return Some(reading(PfcPauseTx, name, Some(p), v));
    }
    None
}

/// One bnxt_en port counter (MAC statistics, not the per-ring ones).
fn bnxt(name: &str, v: u64) -> Option<Reading> {
    use Canonical::*;
    let fixed = match name {
        "rx_bytes" => Some(RxBytes),
        "tx_bytes" => Some(TxBytes),
        "rx_total_frames" => Some(RxPackets),
        "tx_total_frames" => Some(TxPackets),
        "rx_fcs_err_frames" => Some(CrcErrors),
        "rx_stat_discard" => Some(Discards),
        "tx_stat_discard" => Some(Drops),
        "rx_pcs_symbol_err" => Some(SymbolErrors),
        // Pre-FEC bit errors the FEC corrected, as mlx5's rx_corrected_bits_phy.
        "rx_corrected_bits" => Some(FecCorrected),
        "rx_fec_uncorrectable_blocks" => Some(FecUncorrected),
        "link_down_events" => Some(LinkDown),
        "rx_pause_frames" => Some(PfcPauseRx),
        "tx_pause_frames" => Some(PfcPauseTx),
        _ => None,
    };
    if let Some(c) = fixed {
        return Some(reading(c, name, None, v));
    }
    let per_prio: [(&str, &str, Canonical); 8] = [
        ("rx_pfc_ena_frames_pri", "", PfcPauseRx),
        ("tx_pfc_ena_frames_pri", "", PfcPauseTx),
        ("rx_bytes_pri", "", RxBytes),
        ("tx_bytes_pri", "", TxBytes),
        ("rx_packets_pri", "", RxPackets),
        ("tx_packets_pri", "", TxPackets),
        ("pfc_pri", "_rx_duration_us", PfcPauseDurationRxUs),
        ("pfc_pri", "_tx_duration_us", PfcPauseDurationTxUs),
    ];
    for (prefix, suffix, c) in per_prio {
        if let Some((p, rest)) = name.strip_prefix(prefix).and_then(prio) {
            if rest == suffix {
                return Some(reading(c, name, Some(p), v));
            }
        }
    }
    // Per class of service: discards of the queue the priority maps to.
    if let Some((q, "")) = name.strip_prefix("rx_discard_packets_cos").and_then(prio) {
        return Some(Reading {
            queue: Some(q),
            ..reading(Discards, name, None, v)
        });
    }
    None
}

/// One `rdma statistic` / `hw_counters` name of irdma (`irdma_hw_stat_names`
/// in the kernel's `irdma/verbs.c`) or bnxt_re (`bnxt_re_stat_descs` in
/// `bnxt_re/hw_counters.c`), for the names mlx5 does not share. irdma's
/// gen3 names hold spaces (`RNR sent`) and cannot be read from the
/// one-line `rdma statistic` form, so they are not listed.
pub fn rdma_counter(name: &str, v: u64) -> Option<Reading> {
    use Canonical::*;
    let c = match name {
        // irdma
        "cnpSent" => CnpSent,
        "cnpHandled" => CnpHandled,
        "RxECNMrkd" => EcnMarked,
        // bnxt_re
        "tx_cnp_pkts" => CnpSent,
        "rx_cnp_pkts" => CnpHandled,
        "rx_ecn_marked_pkts" => EcnMarked,
        "to_retransmits" => Retransmits,
        "seq_err_naks_rcvd" => PacketSeqErr,
        "rx_out_of_buffer" => Drops,
        _ => return None,
    };
    Some(reading(c, name, None, v))
}

/// Which driver's names an `ethtool -S` listing uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Driver {
    Ice,
    BnxtEn,
}

/// Reads `ethtool -S` of an ice or bnxt_en port. The `NIC statistics:`
/// line may be missing (the output piped through `grep`), but then at least
/// one name must be one this parser knows. The driver is told by its names:
/// any `.nic`/`port.` name means ice, else bnxt. A known counter whose value
/// cannot be one is an error naming it.
pub fn parse_ethtool_stats(text: &str) -> Result<(Driver, Vec<Reading>), ParseError> {
    const TOOL: &str = "ethtool -S";
    let header = text.lines().any(|l| l.trim() == "NIC statistics:");
    let pairs: Vec<(&str, &str)> = text
        .lines()
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim(), v.trim()))
        .filter(|(n, _)| !n.is_empty() && !n.contains(' '))
        .collect();
    let driver = if pairs
        .iter()
        .any(|(n, _)| n.ends_with(".nic") || n.starts_with("port."))
    {
        Driver::Ice
    } else {
        Driver::BnxtEn
    };
    let known = |n: &str| match driver {
        Driver::Ice => ice(n, 0),
        Driver::BnxtEn => bnxt(n, 0),
    };
    let mut out = Vec::new();
    for (name, tok) in pairs {
        if known(name).is_none() {
            continue;
        }
        let v = value(TOOL, name, tok)?;
        out.extend(match driver {
            Driver::Ice => ice(name, v),
            Driver::BnxtEn => bnxt(name, v),
        });
    }
    if out.is_empty() && !header {
        return Err(ParseError(format!(
            "{TOOL}: no \"NIC statistics:\" line and no ice or bnxt_en counter in {}",
            super::first_line(text)
        )));
    }
    Ok((driver, out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ice_priority_pauses() {
        let (d, rs) = parse_ethtool_stats(
            "NIC statistics:\n     rx_bytes.nic: 10\n     rx_priority_3_xoff.nic: 7\n     rx_priority_3_xon.nic: 9\n",
        )
        .unwrap();
        assert_eq!(d, Driver::Ice);
        assert_eq!(rs.len(), 2);
        assert_eq!(
            (rs[1].canonical, rs[1].priority, rs[1].value),
            (Canonical::PfcPauseRx, Some(3), 7)
        );
    }

    #[test]
    fn irdma_and_bnxt_re_rdma_statistic() {
        let out = crate::counters::host::parse_rdma_statistic(
            "link irdma1/1 cnpSent 4 cnpHandled 5 RxECNMrkd 6 RxUDP 9\nlink bnxt_re0/1 tx_cnp_pkts 7 rx_ecn_marked_pkts 8\n",
        )
        .unwrap();
        let irdma: Vec<_> = out[0].1.iter().map(|r| (r.canonical, r.value)).collect();
        assert_eq!(
            irdma,
            vec![
                (Canonical::CnpSent, 4),
                (Canonical::CnpHandled, 5),
                (Canonical::EcnMarked, 6)
            ]
        );
        let bnxt: Vec<_> = out[1].1.iter().map(|r| (r.canonical, r.value)).collect();
        assert_eq!(
            bnxt,
            vec![(Canonical::CnpSent, 7), (Canonical::EcnMarked, 8)]
        );
    }

    #[test]
    fn bnxt_port_names_from_bnxt_ethtool_c() {
        let text = "NIC statistics:\n     [0]: rx_ucast_packets: 5\n     rx_bytes: 100\n     rx_pfc_ena_frames_pri3: 7\n     \
                    pfc_pri3_rx_duration_us: 40\n     rx_discard_packets_cos2: 1\n     rx_corrected_bits: 12\n     \
                    rx_fec_uncorrectable_blocks: 0\n     link_down_events: 2\n     rx_bytes_pri3: 64\n";
        let (d, rs) = parse_ethtool_stats(text).unwrap();
        assert_eq!(d, Driver::BnxtEn);
        let got: Vec<_> = rs
            .iter()
            .map(|r| (r.vendor.as_str(), r.canonical, r.priority, r.queue, r.value))
            .collect();
        use Canonical::*;
        assert_eq!(
            got,
            vec![
                ("rx_bytes", RxBytes, None, None, 100),
                ("rx_pfc_ena_frames_pri3", PfcPauseRx, Some(3), None, 7),
                (
                    "pfc_pri3_rx_duration_us",
                    PfcPauseDurationRxUs,
                    Some(3),
                    None,
                    40
                ),
                ("rx_discard_packets_cos2", Discards, None, Some(2), 1),
                ("rx_corrected_bits", FecCorrected, None, None, 12),
                ("rx_fec_uncorrectable_blocks", FecUncorrected, None, None, 0),
                ("link_down_events", LinkDown, None, None, 2),
                ("rx_bytes_pri3", RxBytes, Some(3), None, 64),
            ],
            "per-ring `[0]:` counters are skipped"
        );
    }

    #[test]
    fn bnxt_damaged_value() {
        let e = parse_ethtool_stats("NIC statistics:\n     tx_pfc_ena_frames_pri3: -1\n")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("tx_pfc_ena_frames_pri3") && e.contains("negative"),
            "{e}"
        );
        assert!(parse_ethtool_stats("hello: world").is_err());
    }
}
