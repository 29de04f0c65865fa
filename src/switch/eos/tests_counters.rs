//! The counters parsers on captured EOS answers (`tests/fixtures/eos/`).

use super::testutil::{fixture, json_of, port, read, replies};
use super::*;
use crate::counters::Canonical;
use crate::switch::fault::PortState;

/// pyeapi's vEOS `show interfaces` is a `result` list of one answer:
/// read it through the envelope, then as counters and as state.
#[test]
fn show_interfaces_veos_through_the_envelope() {
    let body = format!(
        r#"{{"jsonrpc": "2.0", "id": "t", "result": {}}}"#,
        fixture("show-interfaces-veos-pyeapi.json")
    );
    let r = replies(&body, &["show interfaces"], Format::Json).unwrap();
    let text = json_of(&r[0]);
    let ports = parse_interfaces_counters(&text).unwrap();
    assert_eq!(ports.len(), 9);
    let e1 = port(&ports, "Ethernet1");
    assert_eq!(
        read(e1, "inOctets"),
        (Canonical::RxBytes, None, None, 582780)
    );
    assert_eq!(
        read(e1, "outOctets"),
        (Canonical::TxBytes, None, None, 1231864)
    );
    assert_eq!(read(e1, "inMulticastPkts").3, 2553);
    assert_eq!(
        read(e1, "inBroadcastPkts"),
        (Canonical::RxPackets, None, None, 425)
    );
    assert_eq!(
        read(e1, "outMulticastPkts"),
        (Canonical::TxPackets, None, None, 8250)
    );
    assert_eq!(
        read(e1, "inputErrorsDetail.fcsErrors").0,
        Canonical::CrcErrors
    );
    assert_eq!(
        read(e1, "linkStatusChanges/2"),
        (Canonical::LinkDown, None, None, 0)
    );
    assert_eq!(e1.other.get("outputErrorsDetail.collisions"), Some(&0));
    assert!(!e1.other.contains_key("counterRefreshTime"));
    assert!(e1.not_available.is_empty(), "{:?}", e1.not_available);
    let m1 = port(&ports, "Management1");
    assert_eq!(read(m1, "inOctets").3, 15172431);
    assert_eq!(read(m1, "outUcastPkts").3, 7823);
    assert_eq!(read(m1, "linkStatusChanges/2").3, 1); // 3 changes
    let lo = port(&ports, "Loopback0");
    assert!(lo.readings.is_empty());
    assert!(lo.not_available.contains(&"inOctets".to_string()));
    assert!(lo
        .not_available
        .contains(&"linkStatusChanges/2".to_string()));

    let states = parse_interfaces_state(&text).unwrap();
    let s = |n: &str| states.iter().find(|s| s.name == n).unwrap();
    assert_eq!(
        s("Ethernet1").port_state(),
        PortState {
            name: "Ethernet1".into(),
            admin_up: true,
            oper_up: true
        }
    );
    assert_eq!(s("Ethernet1").mtu, Some(1500));
    assert_eq!(s("Ethernet1").speed_mbps, Some(10_000));
    assert_eq!(s("Ethernet3").status, "disabled");
    assert!(!s("Ethernet3").admin_up && !s("Ethernet3").oper_up);
    assert_eq!(s("Ethernet3").mtu, Some(9214));
    assert_eq!(s("Management1").speed_mbps, Some(1000));
    assert_eq!(s("Loopback0").speed_mbps, None);
    assert_eq!(s("Loopback0").errdisabled, None);
}

#[test]
fn show_interfaces_napalm_missing_blocks_are_not_available() {
    let text = fixture("show-interfaces-counters-napalm.json");
    let ports = parse_interfaces_counters(&text).unwrap();
    let e1 = port(&ports, "Ethernet1");
    assert_eq!(read(e1, "linkStatusChanges/2").3, 1); // 2 changes
    assert_eq!(e1.other.get("inputErrorsDetail.rxPause"), Some(&0));
    // A port-channel prints no error details: not available, never 0.
    let po = port(&ports, "Port-Channel1");
    for n in [
        "inputErrorsDetail.fcsErrors",
        "inputErrorsDetail.symbolErrors",
        "outputErrorsDetail.txPause",
    ] {
        assert!(
            po.not_available.contains(&n.to_string()),
            "{n}: {:?}",
            po.not_available
        );
        assert!(po.readings.iter().all(|r| r.vendor != n));
    }
    assert_eq!(read(po, "inDiscards"), (Canonical::Discards, None, None, 0));
    assert_eq!(port(&ports, "Port-Channel1.20").readings, vec![]);
    let states = parse_interfaces_state(&text).unwrap();
    assert_eq!(states[0].status, "notconnect");
    assert!(states[0].admin_up && !states[0].oper_up);
    assert_eq!(states[0].mtu, Some(9214));
    // bandwidth 0: no speed.
    assert_eq!(states[1].speed_mbps, None);
}

#[test]
fn counters_errors_and_discards() {
    let p = parse_counters_errors(&fixture(
        "show-interfaces-counters-errors-anta-unittest.json",
    ))
    .unwrap();
    let e1 = port(&p, "Ethernet1");
    assert_eq!(e1.other.get("inErrors"), Some(&42));
    assert_eq!(e1.other.get("outErrors"), Some(&10));
    assert_eq!(read(e1, "fcsErrors"), (Canonical::CrcErrors, None, None, 0));
    let e6 = port(&p, "Ethernet6");
    assert_eq!(
        read(e6, "symbolErrors"),
        (Canonical::SymbolErrors, None, None, 10)
    );
    assert_eq!(e6.other.get("alignmentErrors"), Some(&6));
    assert_eq!(e6.other.get("frameTooShorts"), Some(&0));

    let p = parse_counters_discards(&fixture(
        "show-interfaces-counters-discards-anta-unittest.json",
    ))
    .unwrap();
    assert_eq!(p.len(), 2);
    assert_eq!(
        read(port(&p, "Ethernet1"), "inDiscards"),
        (Canonical::Discards, None, None, 42)
    );
    assert_eq!(
        read(port(&p, "Ethernet2"), "outDiscards"),
        (Canonical::Drops, None, None, 42)
    );
    let missing =
        parse_counters_discards(r#"{"interfaces":{"Ethernet1":{"inDiscards":5}}}"#).unwrap();
    assert_eq!(missing[0].not_available, vec!["outDiscards"]);
}

#[test]
fn pfc_totals_and_per_priority() {
    let p = parse_pfc_counters(&fixture(
        "show-priority-flow-control-counters-rev3-anta-unittest.json",
    ))
    .unwrap();
    assert_eq!(p.len(), 4);
    assert_eq!(
        read(port(&p, "Ethernet3/1/1"), "rxFrames"),
        (Canonical::PfcPauseRx, None, None, 1)
    );
    assert_eq!(
        read(port(&p, "Ethernet3/2/1"), "txFrames"),
        (Canonical::PfcPauseTx, None, None, 2)
    );
    // The `counters detail` shape (no capture found; shape from DNE-TaaC).
    let detail = r#"{"interfaces": {"Ethernet1/1": {"priorities": {
            "3": {"rxFrames": 17, "txFrames": 4},
            "4": {"rxFrames": 0}}}}}"#;
    let p = parse_pfc_counters(detail).unwrap();
    assert_eq!(
        read(&p[0], "priorities.3.rxFrames"),
        (Canonical::PfcPauseRx, Some(3), None, 17)
    );
    assert_eq!(
        read(&p[0], "priorities.3.txFrames"),
        (Canonical::PfcPauseTx, Some(3), None, 4)
    );
    assert_eq!(p[0].not_available, vec!["priorities.4.txFrames"]);
    let e = parse_pfc_counters(r#"{"interfaces": {"Et1": {"priorities": {"9": {}}}}}"#)
        .unwrap_err()
        .0;
    assert!(e.contains("`9` is not a priority 0..7"), "{e}");
    let e = parse_pfc_counters(r#"{"counters": {}}"#).unwrap_err().0;
    assert!(
        e.contains("expected `interfaceCounters` (revision 3)"),
        "{e}"
    );
}

#[test]
fn ecn_dash_is_not_available() {
    let p = parse_ecn_counters(&fixture(
        "show-qos-interfaces-ecn-counters-queue-dash-not-configured-anta-unittest.json",
    ))
    .unwrap();
    assert_eq!(p.len(), 4);
    let a = port(&p, "Ethernet10/28/1");
    assert_eq!(a.not_available, vec!["queueCounters.0"]);
    assert_eq!(
        read(a, "queueCounters.1"),
        (Canonical::EcnMarked, None, Some(1), 0)
    );
    assert_eq!(read(port(&p, "Ethernet10/20/1"), "queueCounters.1").3, 2);
    assert_eq!(
        read(port(&p, "Ethernet10/3/1"), "queueCounters.2"),
        (Canonical::EcnMarked, None, Some(2), 2)
    );
    assert_eq!(
        port(&p, "Ethernet10/16/1").not_available,
        vec!["queueCounters.2"]
    );
}

#[test]
fn voq_and_egress_queue_drops() {
    let p = parse_queue_drops(&fixture(
        "show-interfaces-counters-queue-drops-voq-anta-unittest.json",
    ))
    .unwrap();
    let e48 = port(&p, "Ethernet48");
    assert_eq!(
        read(
            e48,
            "trafficClasses.TC0.ingressVoqCounters.countersSum.droppedPackets"
        ),
        (Canonical::Drops, None, Some(0), 3)
    );
    assert_eq!(
        read(
            e48,
            "trafficClasses.TC1.egressQueueCounters.countersSum.droppedPackets"
        )
        .3,
        5
    );
    assert_eq!(
        read(
            port(&p, "Ethernet49"),
            "trafficClasses.TC1.ingressVoqCounters.countersSum.droppedPackets"
        ),
        (Canonical::Drops, None, Some(1), 7)
    );
    // A platform without VOQs on this TC prints only the egress side.
    let one = r#"{"interfaces":{"Ethernet1":{"trafficClasses":{"TC7":{"egressQueueCounters":{"countersSum":{"droppedPackets":9}}}}}}}"#;
    let p = parse_queue_drops(one).unwrap();
    assert_eq!(
        p[0].not_available,
        vec!["trafficClasses.TC7.ingressVoqCounters.countersSum.droppedPackets"]
    );
    let e = parse_queue_drops(r#"{"interfaces":{"Ethernet1":{"trafficClasses":{"Q1":{}}}}}"#)
        .unwrap_err()
        .0;
    assert!(e.contains("`Q1` is not a traffic class TCn"), "{e}");
}

#[test]
fn queue_detail_json() {
    let p = parse_queue_counters_detail_json(&fixture(
        "show-interfaces-counters-queue-detail-egress-anta-unittest.json",
    ))
    .unwrap();
    let e1 = port(&p, "Ethernet1");
    assert_eq!(
        read(e1, "ucastQueues.TC0.DP0.droppedPackets"),
        (Canonical::Drops, None, Some(0), 2)
    );
    assert_eq!(
        read(e1, "mcastQueues.TC1.DP0.droppedPackets"),
        (Canonical::Drops, None, Some(1), 3)
    );
    assert_eq!(
        read(port(&p, "Ethernet2"), "ucastQueues.TC1.DP0.droppedPackets").3,
        2
    );
}
