//! The one list of every tool output rocegate can read as counters or
//! configuration, by the name `rocegate parse counters --format NAME` takes.
//! Each entry calls the parser that owns the format and turns what it read
//! into canonical JSON; nothing here parses text itself. Tests and
//! documentation enumerate [`FORMATS`], so a parser registered here is
//! reachable from the command line and covered by the fixture table.

use serde::Serialize;
use serde_json::{json, Value};

use super::{host, host_cfg, host_nic, optics, ParseError};
use crate::switch::linux::counters as switch_linux;
use crate::switch::{cumulus, eos, nxos, sonic};

/// Every format: the name and a one-line description of the command whose
/// output it reads.
pub const FORMATS: &[(&str, &str)] = &[
    ("ethtool-mlx5", "ethtool -S DEV on an mlx5 (ConnectX) NIC"),
    (
        "ethtool-s",
        "ethtool -S DEV on an ice (E810/irdma) or bnxt_en (bnxt_re) NIC",
    ),
    (
        "sysfs",
        "grep -r . /sys/class/infiniband/DEV/ports/1/{counters,hw_counters}",
    ),
    (
        "rdma-statistic",
        "rdma statistic show [-p] (mlx5, irdma, bnxt_re)",
    ),
    ("ethtool-i", "ethtool -i DEV: driver and firmware"),
    (
        "ethtool-link",
        "ethtool DEV: speed, duplex, link detected, link modes",
    ),
    (
        "ethtool-m",
        "ethtool -m DEV: transceiver identity, per-lane diagnostics, thresholds",
    ),
    (
        "ethtool-fec",
        "ethtool [-I] --show-fec DEV: FEC encoding and statistics",
    ),
    ("mlnx_qos", "mlnx_qos -i DEV: PFC, trust and DSCP map"),
    ("dcb-pfc", "dcb [-j] [-s] pfc show dev DEV (host or switch)"),
    (
        "dcb-app",
        "dcb [-j] app show dev DEV: DSCP and other APP priority maps",
    ),
    ("show-gids", "show_gids: the GID table"),
    ("cma-roce-tos", "cma_roce_tos -d DEV: RDMA-CM default ToS"),
    (
        "ibstat",
        "ibstat: CAs, firmware, port state, rate and link layer",
    ),
    (
        "mlxfwmanager",
        "mlxfwmanager (query): device, PSID and image versions",
    ),
    (
        "lldpctl-json",
        "lldpctl -f json0 (or lldpcli -f json) show neighbors",
    ),
    ("lldpcli-text", "lldpcli show neighbors (text)"),
    ("ethtool-mlxsw", "ethtool -S PORT on a Linux switch (mlxsw)"),
    ("ip-link-json", "ip [-s [-s]] -j link show"),
    ("tc", "tc [-s] [-d] qdisc show dev PORT: RED/ECN bands"),
    ("sonic-pfc-counters", "SONiC show pfc counters"),
    ("sonic-queue-counters", "SONiC show queue counters [PORT]"),
    (
        "sonic-pg-watermark",
        "SONiC show priority-group watermark shared|headroom",
    ),
    (
        "sonic-queue-watermark",
        "SONiC show queue watermark unicast|multicast|all [--json]",
    ),
    ("sonic-pfcwd-stats", "SONiC pfcwd show stats"),
    (
        "sonic-wred-counters",
        "SONiC show queue wredcounters [PORT] (wredstat)",
    ),
    ("sonic-interfaces-flap", "SONiC show interfaces flap [PORT]"),
    (
        "sonic-interfaces-counters",
        "SONiC show interfaces counters [-p N]",
    ),
    (
        "eos-queue-counters",
        "Arista EOS show interfaces counters queue detail",
    ),
    (
        "nxos-counters-errors",
        "Cisco NX-OS show interface counters errors",
    ),
    (
        "nxos-pfc-interface",
        "Cisco NX-OS show interface priority-flow-control",
    ),
    (
        "cumulus-nvue-counters",
        "Cumulus NVUE nv show interface IF counters qos",
    ),
    (
        "cumulus-roce-status",
        "Cumulus NVUE nv show [interface IF] qos roce [status] [-o json]",
    ),
    (
        "cumulus-roce-dscp",
        "Cumulus NVUE nv show qos roce [-o json]: the DSCP map",
    ),
    (
        "cumulus-roce-counters",
        "Cumulus NVUE nv show interface IF qos roce counters [-o json]",
    ),
];

/// The format names, comma-separated, for messages.
pub fn names() -> String {
    FORMATS
        .iter()
        .map(|(n, _)| *n)
        .collect::<Vec<_>>()
        .join(", ")
}

fn to_json<T: Serialize>(v: Result<T, ParseError>) -> Result<Value, ParseError> {
    let v = v?;
    serde_json::to_value(v).map_err(|e| ParseError(format!("cannot encode as JSON: {e}")))
}

/// Per-device readings as `[{"device": …, "readings": […]}]`.
fn devices(list: Vec<(String, Vec<super::Reading>)>) -> Result<Value, ParseError> {
    to_json(Ok(list
        .into_iter()
        .map(|(device, readings)| json!({ "device": device, "readings": readings }))
        .collect::<Vec<_>>()))
}

/// Parses `text` as `format` and returns what the parser read. An unknown
/// format is an error listing the known ones; a parser's error is prefixed
/// with the format's name.
pub fn parse(format: &str, text: &str) -> Result<Value, ParseError> {
    let out = match format {
        "ethtool-mlx5" => to_json(host::parse_ethtool_stats(text)),
        "ethtool-s" => host_nic::parse_ethtool_stats(text).and_then(|(driver, readings)| {
            to_json(Ok(json!({ "driver": driver, "readings": readings })))
        }),
        "sysfs" => host::parse_sysfs_counters(text).and_then(|d| devices(vec![d])),
        "rdma-statistic" => host::parse_rdma_statistic(text).and_then(devices),
        "ethtool-i" => to_json(host::parse_ethtool_info(text)),
        "ethtool-link" => to_json(host_cfg::parse_ethtool_link(text)),
        "ethtool-m" => to_json(optics::parse_ethtool_m(text)),
        "ethtool-fec" => to_json(host_cfg::parse_ethtool_fec(text)),
        "mlnx_qos" => to_json(host::parse_mlnx_qos(text)),
        "dcb-pfc" => if text.trim_start().starts_with('{') {
            host_cfg::parse_dcb_pfc_json(text)
        } else {
            switch_linux::parse_dcb_pfc(text)
        }
        .and_then(|c| {
            let readings = c.readings();
            let enabled = c.enabled();
            to_json(Ok(
                json!({ "config": c, "enabled": enabled, "readings": readings }),
            ))
        }),
        "dcb-app" => to_json(host_cfg::parse_dcb_app(text)),
        "show-gids" => to_json(host::parse_show_gids(text)),
        "cma-roce-tos" => to_json(host_cfg::parse_cma_roce_tos(text)),
        "ibstat" => to_json(host_cfg::parse_ibstat(text)),
        "mlxfwmanager" => to_json(host_cfg::parse_mlxfwmanager(text)),
        "lldpctl-json" => to_json(host::parse_lldpctl_json(text)),
        "lldpcli-text" => to_json(host_cfg::parse_lldpcli_text(text)),
        "ethtool-mlxsw" => to_json(switch_linux::parse_ethtool_stats(text)),
        "ip-link-json" => to_json(switch_linux::parse_ip_link_json(text)),
        "tc" => switch_linux::parse_tc_qdisc(text).and_then(|bands| {
            let v: Vec<Value> = bands
                .into_iter()
                .map(|b| json!({ "readings": b.readings(), "band": b }))
                .collect();
            to_json(Ok(v))
        }),
        "sonic-pfc-counters" => to_json(sonic::parse_pfc_counters(text)),
        "sonic-queue-counters" => to_json(sonic::parse_queue_counters(text)),
        "sonic-pg-watermark" => to_json(sonic::parse_watermark(text)),
        "sonic-queue-watermark" if text.trim_start().starts_with('[') => {
            to_json(sonic::parse_watermark_json(text))
        }
        "sonic-queue-watermark" => to_json(sonic::parse_watermark(text)),
        "sonic-pfcwd-stats" => to_json(sonic::parse_pfcwd_stats(text)),
        "sonic-wred-counters" => to_json(sonic::parse_wred_counters(text)),
        "sonic-interfaces-flap" => to_json(sonic::parse_interfaces_flap(text)),
        "sonic-interfaces-counters" => to_json(sonic::parse_interfaces_counters(text)),
        "eos-queue-counters" => to_json(eos::parse_queue_counters_detail(text)),
        "nxos-counters-errors" => to_json(nxos::parse_counters_errors(text)),
        "nxos-pfc-interface" => to_json(nxos::parse_pfc_interface(text)),
        "cumulus-nvue-counters" => to_json(cumulus::parse_qos_counters(text)),
        "cumulus-roce-status" => to_json(cumulus::qos::parse_roce_status(text)),
        "cumulus-roce-dscp" => to_json(cumulus::qos::parse_dscp_map(text)),
        "cumulus-roce-counters" => to_json(cumulus::qos::parse_roce_counters(text)),
        _ => {
            return Err(ParseError(format!(
                "unknown format `{format}` (formats: {})",
                names()
            )))
        }
    };
    out.map_err(|e| ParseError(format!("{format}: {}", e.0)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_format_is_dispatched_and_refuses_garbage_cleanly() {
        for (name, _) in FORMATS {
            for text in [
                "",
                "garbage\n",
                "\u{0}\u{1}ÿ: -1\n",
                "NIC statistics:\n x: 1,2\n",
            ] {
                if let Err(e) = parse(name, text) {
                    assert!(!e.0.starts_with("unknown format"), "{name}: {e}");
                    assert!(e.0.starts_with(name), "{name}: {e}");
                }
            }
        }
        let e = parse("nope", "").unwrap_err().0;
        assert!(
            e.contains("ethtool-mlx5") && e.contains("cumulus-nvue-counters"),
            "{e}"
        );
    }
}

#[cfg(test)]
mod props {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Any text, in any format: a value or an error naming the format,
        /// never a panic.
        #[test]
        fn arbitrary_text_never_panics(text in "(?s).{0,300}", i in 0..FORMATS.len()) {
            let (name, _) = FORMATS[i];
            if let Err(e) = parse(name, &text) {
                prop_assert!(e.0.starts_with(name), "{}", e);
            }
        }

        /// Text shaped like the tables, rulers and `key: value` lines the
        /// parsers look for, with numbers that may be negative, huge or `N/A`.
        #[test]
        fn table_shaped_text_never_panics(
            lines in proptest::collection::vec(
                "( {0,4}(Port|IFACE|QUEUE|Ethernet[0-9]|NIC statistics:|[a-z_.]{1,12}:|-{2,9}|PFC[0-9]|UC[0-9]|N/A|-?[0-9,]{1,24}|Link detected:|Speed:|dscp-prio|[0-9]{1,3}:[0-9]{1,2}|\\(Channel [0-9]\\)|mW|/)){0,8}",
                0..12,
            ),
            i in 0..FORMATS.len(),
        ) {
            let (name, _) = FORMATS[i];
            let text = lines.join("\n");
            if let Err(e) = parse(name, &text) {
                prop_assert!(e.0.starts_with(name), "{}", e);
            }
        }
    }
}
