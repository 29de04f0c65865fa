//! The counters readers on public captures (`tests/fixtures/nxos/`) and on
//! bodies built from the documented shapes where no capture was found.

use serde_json::Value;

use super::testutil::{fixture, json, rpc_body, PFC_JSON};
use super::*;
use crate::counters::{Canonical, PortReadings};

fn port<'a>(ports: &'a [PortReadings], name: &str) -> &'a PortReadings {
    ports.iter().find(|p| p.port == name).unwrap()
}

fn get(p: &PortReadings, vendor: &str) -> Option<(Canonical, Option<u8>, Option<u8>, u64)> {
    p.readings
        .iter()
        .find(|r| r.vendor == vendor)
        .map(|r| (r.canonical, r.priority, r.queue, r.value))
}

// ---------------------------------------------------------- counters

#[test]
fn show_interface_counters_on_every_fixture() {
    // NX-OSv, one row, every number a string, VDC-level counters only.
    let v = parse_interface_counters(&json(
        "show-interface-single-row-object-string-numbers-ansible.json",
    ))
    .unwrap();
    let e = &v[0];
    assert_eq!(e.port, "Ethernet1/1");
    assert_eq!(
        get(e, "vdc_lvl_in_bytes"),
        Some((Canonical::RxBytes, None, None, 1_391_637_901))
    );
    assert_eq!(
        get(e, "vdc_lvl_out_pkts"),
        Some((Canonical::TxPackets, None, None, 1_079_978))
    );
    assert_eq!(
        e.not_available,
        ["eth_crc", "eth_indiscard", "eth_outdiscard"]
    );
    // The full eth_* set, numbers and strings mixed.
    let v = parse_interface_counters(&json(
        "show-interface-ethernet2-1-single-row-counters-ansible.json",
    ))
    .unwrap();
    let e = &v[0];
    assert_eq!(
        get(e, "eth_crc"),
        Some((Canonical::CrcErrors, None, None, 0))
    );
    assert_eq!(
        get(e, "eth_outdiscard"),
        Some((Canonical::Drops, None, None, 0))
    );
    assert_eq!(e.other["eth_reset_cntr"], 1);
    assert!(e.not_available.is_empty(), "{:?}", e.not_available);
    // A 100G port with non-zero errors, pause and discards.
    let body = rpc_body(
        "show-interface-jsonrpc-pause-discard-counters-greenpau-5.json",
        "show interface",
    );
    let v = parse_interface_counters(&body).unwrap();
    let e = port(&v, "Ethernet1/1");
    assert_eq!(
        get(e, "eth_crc"),
        Some((Canonical::CrcErrors, None, None, 100))
    );
    assert_eq!(
        get(e, "eth_indiscard"),
        Some((Canonical::Discards, None, None, 100))
    );
    assert_eq!(
        get(e, "eth_outbytes"),
        Some((Canonical::TxBytes, None, None, 1_131_751_374_568_997))
    );
    assert_eq!(
        get(e, "eth_inpkts"),
        Some((Canonical::RxPackets, None, None, 1_056_144_398_522))
    );
    assert_eq!((e.other["eth_giants"], e.other["eth_runts"]), (34, 33));
    assert_eq!((e.other["eth_inpause"], e.other["eth_outpause"]), (100, 33));
    assert_eq!(e.other["eth_nobuf"], 23);
    // N9K-C9336C-FX2 on 10.2(4): mgmt0 at VDC level, Ethernet1/1 with 8 output discards.
    let body =
        &json("show-interface-n9k-c9336c-fx2-10.2.4-output-body-harvest.json")["output"]["body"];
    let v = parse_interface_counters(body).unwrap();
    assert_eq!(v.len(), 3);
    assert_eq!(
        get(port(&v, "mgmt0"), "vdc_lvl_in_bytes").unwrap().3,
        15_655_821_355
    );
    let e = port(&v, "Ethernet1/1");
    assert_eq!(
        get(e, "eth_outdiscard"),
        Some((Canonical::Drops, None, None, 8))
    );
    assert_eq!(get(e, "eth_inbytes").unwrap().3, 65_962_757_720_684);
    assert_eq!(e.other["eth_stomped_crc"], 0);
    assert_eq!(e.other["eth_reset_cntr"], 12);
    assert_eq!(
        get(port(&v, "Ethernet1/2"), "eth_outbytes").unwrap().3,
        65_964_540_318_429
    );
    // Many rows; mgmt0 over JSON-RPC.
    let body = rpc_body("show-interface-jsonrpc-greenpau-2.json", "show interface");
    let v = parse_interface_counters(&body).unwrap();
    assert!(v.len() > 10 && v.iter().all(|p| !p.port.is_empty()));
    let body = rpc_body(
        "show-interface-mgmt0-single-row-jsonrpc-greenpau.json",
        "show interface mgmt0",
    );
    let v = parse_interface_counters(&body).unwrap();
    assert_eq!(get(&v[0], "vdc_lvl_in_pkts").unwrap().3, 160_834_516);
    assert_eq!(get(&v[0], "vdc_lvl_in_bytes").unwrap().3, 11_278_664_305);
}

#[test]
fn show_interface_counters_refuse_damaged_rows() {
    for (body, want) in [
        (
            serde_json::json!({"TABLE_interface": {"ROW_interface": {"eth_crc": 1}}}),
            "no `interface`",
        ),
        (
            serde_json::json!({"TABLE_interface": {"ROW_interface": {"interface": "Ethernet1/1", "eth_crc": "-3"}}}),
            "eth_crc",
        ),
        (
            serde_json::json!({"TABLE_interface": {"ROW_interface": {"interface": "Ethernet1/1", "eth_giants": [1]}}}),
            "eth_giants: expected a number",
        ),
        (serde_json::json!("text"), "found a string"),
    ] {
        let e = parse_interface_counters(&body).unwrap_err().0;
        assert!(e.starts_with("show interface: ") && e.contains(want), "{e}");
    }
    assert!(parse_interface_counters(&Value::Null).unwrap().is_empty());
}

#[test]
fn counters_errors_rows_merge_by_interface() {
    let body = rpc_body(
        "show-interface-counters-errors-rows-per-subtable-jsonrpc-greenpau.json",
        "show interface counters errors",
    );
    let v = parse_counters_errors_json(&body).unwrap();
    assert_eq!(v.len(), 2);
    let e = port(&v, "Ethernet1/1");
    assert_eq!(
        get(e, "eth_outdisc"),
        Some((Canonical::Drops, None, None, 35_393_307))
    );
    assert_eq!(
        get(e, "eth_fcs_err"),
        Some((Canonical::CrcErrors, None, None, 0))
    );
    assert_eq!(
        get(e, "eth_indisc"),
        Some((Canonical::Discards, None, None, 0))
    );
    assert_eq!(
        get(e, "eth_symbol_err"),
        Some((Canonical::SymbolErrors, None, None, 0))
    );
    assert_eq!(e.other["eth_xmit_err"], 29_983_041);
    assert_eq!(e.other["eth_inmactx_err"], 29_983_041);
    assert!(e.not_available.is_empty());
    // mgmt0 prints no discards at all, as the text's `--`.
    let m = port(&v, "mgmt0");
    assert_eq!(m.not_available, ["eth_outdisc", "eth_indisc"]);
    let text =
        parse_counters_errors(&fixture("../switch/nxos-counters-errors-genie-24port.txt")).unwrap();
    assert!(port(&text, "mgmt0")
        .not_available
        .contains(&"OutDiscards".to_string()));
    // Same canonical names as the text parser for the same counters.
    let canon = |p: &PortReadings| {
        let mut c: Vec<Canonical> = p.readings.iter().map(|r| r.canonical).collect();
        c.sort();
        c
    };
    assert_eq!(canon(e), canon(port(&text, "Eth1/13")));
    let body = rpc_body(
        "show-interface-counters-errors-mgmt0-jsonrpc-greenpau.json",
        "show interface counters errors",
    );
    let v = parse_counters_errors_json(&body).unwrap();
    assert_eq!(v.len(), 1);
    assert_eq!(get(&v[0], "eth_fcs_err").unwrap().3, 0);
    assert_eq!(v[0].other["eth_giants"], 0);
    // Printed twice with two values: damaged.
    let twice = serde_json::json!({"TABLE_interface": {"ROW_interface": [
        {"interface": "Ethernet1/1", "eth_giants": 1},
        {"interface": "Ethernet1/1", "eth_giants": 2}]}});
    let e = parse_counters_errors_json(&twice).unwrap_err().0;
    assert!(
        e.contains("Ethernet1/1 eth_giants is printed twice, as 1 and 2"),
        "{e}"
    );
    let na = serde_json::json!({"TABLE_interface": {"ROW_interface": {"interface": "Eth1/1", "eth_fcs_err": "n/a", "eth_note": "text"}}});
    let v = parse_counters_errors_json(&na).unwrap();
    assert_eq!(
        v[0].not_available,
        ["eth_fcs_err", "eth_symbol_err", "eth_outdisc", "eth_indisc"]
    );
    assert!(v[0].other.is_empty());
}

#[test]
fn pfc_interface_json_reads_like_the_text() {
    let v = parse_pfc_interface_json(&serde_json::from_str(PFC_JSON).unwrap()).unwrap();
    assert_eq!(v.len(), 2);
    assert_eq!((v[0].mode.as_str(), v[0].oper.as_str()), ("On", "On"));
    assert_eq!(
        get(&v[0].counters, "rx-stats"),
        Some((Canonical::PfcPauseRx, None, None, 1024))
    );
    assert_eq!(
        get(&v[0].counters, "tx-stats"),
        Some((Canonical::PfcPauseTx, None, None, 7))
    );
    assert_eq!(v[1].counters.not_available, ["tx-stats"]);
    // The text form gives the same canonical names.
    let text =
        parse_pfc_interface(&fixture("../switch/nxos-pfc-interface-n5k-oswalt.txt")).unwrap();
    let c: Vec<Canonical> = text[0]
        .counters
        .readings
        .iter()
        .map(|r| r.canonical)
        .collect();
    assert_eq!(c, [Canonical::PfcPauseRx, Canonical::PfcPauseTx]);
    let e = parse_pfc_interface_json(&serde_json::json!({"TABLE_pfc_interface": {"ROW_pfc_interface": {"if_name_str": "Eth1/1"}}}))
        .unwrap_err()
        .0;
    assert!(e.contains("no `admin`"), "{e}");
}

fn stat(kind: &str, units: &str, uc: &str, mc: &str) -> Value {
    serde_json::json!({"eq-stat-type": kind, "eq-stat-units": units, "eq-uc-stat-value": uc, "eq-oobfc-uc-stat-value": "0", "eq-mc-stat-value": mc})
}

// Built from the NX-OS 9.3 `show queuing` grammar and the statistic
// names of Cisco-authored NX-API code; no captured answer was found.
fn queuing_body() -> Value {
    serde_json::json!({"TABLE_module": {"ROW_module": {"TABLE_queuing_interface": {"ROW_queuing_interface": [
        {"dir": "Egress", "if_name_str": "Ethernet1/1",
         "TABLE_qosgrp_egress_stats": {"ROW_qosgrp_egress_stats": [
            {"eq-qosgrp": "3", "TABLE_qosgrp_egress_stats_entry": {"ROW_qosgrp_egress_stats_entry": [
                stat("Tx", "Pkts", "5000", "2"), stat("Tx", "Byts", "640000", "128"),
                stat("WRED/AFD & Tail Drop", "Pkts", "12", "0"), stat("WRED/AFD & Tail Drop", "Byts", "1536", "0"),
                stat("Q Depth", "Byts", "0", "0"), stat("WD & Tail Drop", "Pkts", "12", "0"),
                stat("ECN", "Pkts", "77", "0"), stat("ECN", "Byts", "9856", "0")]}},
            {"eq-qosgrp": "0", "TABLE_qosgrp_egress_stats_entry": {"ROW_qosgrp_egress_stats_entry": stat("Tx", "Pkts", "10", "0")}},
            {"eq-qosgrp": "CONTROL QOS GROUP", "TABLE_qosgrp_egress_stats_entry": {"ROW_qosgrp_egress_stats_entry": [stat("Tx", "Pkts", "99", "0")]}}]},
         "TABLE_egress_stats_entry": {"ROW_egress_stats_entry": {"ep-stat-type": "Tx Multicast", "ep-stat-units": "Pkts", "ep-stat-value": "4"}}},
        {"dir": "Ingress", "if_name_str": "Ethernet1/1",
         "TABLE_ingress_stats_entry": {"ROW_ingress_stats_entry": [{"ip-stat-type": "Ingress Overflow Drop", "ip-stat-units": "Pkts", "ip-stat-value": "3"}]},
         "tx-ppp": "40", "rx-ppp": "30",
         "TABLE_pfc_stats": {"ROW_pfc_stats": [
            {"cos": "3", "pfc-qosgrp": "3", "tx-pause-state": "Inactive", "tx-pause-count": "40", "rx-pause-state": "Inactive", "rx-pause-count": "30"},
            {"cos": "0", "tx-pause-state": "Inactive", "tx-pause-count": "0", "rx-pause-state": "Inactive", "rx-pause-count": "0"}]}}
    ]}}}})
}

#[test]
fn queuing_interface_per_queue_drops_ecn_and_pfc_per_cos() {
    let v = parse_queuing_interface(&queuing_body()).unwrap();
    assert_eq!(v.len(), 1);
    let e = &v[0];
    assert_eq!(
        get(e, "qos-group 3 Tx Pkts uc"),
        Some((Canonical::TxPackets, None, Some(3), 5000))
    );
    assert_eq!(
        get(e, "qos-group 3 Tx Pkts mc"),
        Some((Canonical::TxPackets, None, Some(3), 2))
    );
    assert_eq!(
        get(e, "qos-group 3 Tx Byts uc"),
        Some((Canonical::TxBytes, None, Some(3), 640_000))
    );
    assert_eq!(
        get(e, "qos-group 3 ECN Pkts uc"),
        Some((Canonical::EcnMarked, None, Some(3), 77))
    );
    assert_eq!(
        get(e, "qos-group 3 WRED/AFD & Tail Drop Pkts uc"),
        Some((Canonical::Drops, None, Some(3), 12))
    );
    // The overlapping drop count is kept, not counted twice.
    assert_eq!(e.other["qos-group 3 WD & Tail Drop Pkts uc"], 12);
    assert_eq!(e.other["qos-group 3 Q Depth Byts uc"], 0);
    assert_eq!(e.other["qos-group CONTROL QOS GROUP Tx Pkts uc"], 99);
    assert_eq!(e.other["egress Tx Multicast Pkts"], 4);
    assert_eq!(e.other["ingress Ingress Overflow Drop Pkts"], 3);
    // Per-CoS PFC; the port totals go to `other`.
    assert_eq!(
        get(e, "tx-pause-count"),
        Some((Canonical::PfcPauseTx, Some(3), None, 40))
    );
    let rx: Vec<_> = e
        .readings
        .iter()
        .filter(|r| r.canonical == Canonical::PfcPauseRx)
        .map(|r| (r.priority, r.value))
        .collect();
    assert_eq!(rx, [(Some(3), 30), (Some(0), 0)]);
    assert_eq!((e.other["tx-ppp"], e.other["rx-ppp"]), (40, 30));
    // Queue 0 printed no ECN and no drops.
    assert_eq!(
        e.not_available,
        ["qos-group 0 ECN Pkts", "qos-group 0 drops"]
    );
}

#[test]
fn queuing_on_an_older_platform_has_dropped_and_no_ecn() {
    // One group with Tx and Dropped only; port totals without per-CoS rows.
    let body = serde_json::json!({"TABLE_queuing_interface": {"ROW_queuing_interface": {
        "if_name_str": "Ethernet1/5", "tx-ppp": 6, "rx-ppp": 5,
        "TABLE_qosgrp_egress_stats": {"ROW_qosgrp_egress_stats": {"eq-qosgrp": 1,
            "TABLE_qosgrp_egress_stats_entry": {"ROW_qosgrp_egress_stats_entry": [
                {"eq-stat-type": "Tx", "eq-stat-units": "Pkts", "eq-uc-stat-value": 9},
                {"eq-stat-type": "Dropped", "eq-stat-units": "Pkts", "eq-uc-stat-value": "2"}]}}}}}});
    let v = parse_queuing_interface(&body).unwrap();
    let e = &v[0];
    assert_eq!(
        get(e, "qos-group 1 Dropped Pkts uc"),
        Some((Canonical::Drops, None, Some(1), 2))
    );
    assert_eq!(e.not_available, ["qos-group 1 ECN Pkts"]);
    assert_eq!(
        get(e, "tx-ppp"),
        Some((Canonical::PfcPauseTx, None, None, 6))
    );
    for (bad, want) in [
        (
            serde_json::json!({"TABLE_queuing_interface": {"ROW_queuing_interface": {"dir": "Egress"}}}),
            "no `if_name_str`",
        ),
        (
            serde_json::json!({"TABLE_queuing_interface": {"ROW_queuing_interface": {"if_name_str": "Eth1/1", "TABLE_pfc_stats": {"ROW_pfc_stats": {"cos": "9"}}}}}),
            "no `cos` 0–7",
        ),
        (
            serde_json::json!({"TABLE_queuing_interface": {"ROW_queuing_interface": {"if_name_str": "Eth1/1", "TABLE_qosgrp_egress_stats": {"ROW_qosgrp_egress_stats": {"eq-qosgrp": "2",
            "TABLE_qosgrp_egress_stats_entry": {"ROW_qosgrp_egress_stats_entry": {"eq-stat-type": "ECN", "eq-stat-units": "Pkts", "eq-uc-stat-value": "x"}}}}}}}),
            "Eth1/1 qos-group 2 ECN Pkts uc: eq-uc-stat-value",
        ),
    ] {
        let e = parse_queuing_interface(&bad).unwrap_err().0;
        assert!(
            e.starts_with("show queuing interface: ") && e.contains(want),
            "{e}"
        );
    }
}
