//! The cumulus parsers on public NVUE output and on damaged input.

use super::*;
use crate::switch::{Answer, Platform, Query};

fn fixture(name: &str) -> String {
    let p = format!(
        "{}/tests/fixtures/cumulus/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{p}: {e}"))
}

fn one(r: &PortReadings, c: Canonical) -> Option<u64> {
    r.readings
        .iter()
        .find(|x| x.canonical == c)
        .map(|x| x.value)
}

/// The `link.stats` object of the NVUE REST API docs (index id
/// 3505245647): every key read under its canonical name; a flap is two
/// carrier transitions.
#[test]
fn link_stats_from_the_public_rest_answer() {
    let r = parse_link_stats(&fixture("nvue-link-stats-eth0-rest-api-docs.json")).unwrap();
    assert_eq!(one(&r, Canonical::RxBytes), Some(184151));
    assert_eq!(one(&r, Canonical::TxBytes), Some(117506));
    assert_eq!(one(&r, Canonical::RxPackets), Some(2371));
    assert_eq!(one(&r, Canonical::TxPackets), Some(762));
    assert_eq!(one(&r, Canonical::LinkDown), Some(1));
    assert_eq!(r.other.get("in-errors"), Some(&0));
    assert!(r.not_available.is_empty());
}

#[test]
fn a_key_not_printed_is_not_available_never_zero() {
    let r = parse_link_stats(r#"{"in-bytes": 5}"#).unwrap();
    assert_eq!(one(&r, Canonical::RxBytes), Some(5));
    assert_eq!(one(&r, Canonical::TxBytes), None);
    assert!(r.not_available.contains(&"out-bytes".to_string()));
    for bad in [
        "",
        "{",
        "[1]",
        r#"{"in-bytes": "x"}"#,
        r#"{"in-bytes": -1}"#,
    ] {
        assert!(parse_link_stats(bad).is_err(), "{bad:?}");
    }
}

#[test]
fn link_reads_state_speed_mtu_and_protodown() {
    let l = parse_link(
        r#"{"auto-negotiate":"off","duplex":"full","mac":"44:38:39:00:00:01","mtu":9216,"speed":"1G","state":{"up":{}},"oper-status":"up","protodown":"enabled","protodown-reason":"linkflap"}"#,
    )
    .unwrap();
    assert_eq!(
        l,
        Link {
            admin_up: Some(true),
            oper_up: Some(true),
            speed_mbps: Some(1000),
            mtu: Some(9216),
            protodown: Some(true),
            protodown_reason: Some("linkflap".into()),
        }
    );
    // Keys it lacks stay unknown; `auto` is not a speed.
    let l = parse_link(r#"{"state":{"down":{}},"speed":"auto"}"#).unwrap();
    assert_eq!(
        (l.admin_up, l.oper_up, l.speed_mbps, l.mtu),
        (Some(false), None, None, None)
    );
    assert!(parse_link("not json").is_err());
    assert!(parse_link(r#"{"mtu":"big"}"#).is_err());
}

/// The thresholds as `nv show system link flap-protection` prints them in
/// NVIDIA's NVUE reference (8 and 30 in its example; 5 and 10 by default).
#[test]
fn flap_protection_thresholds() {
    assert_eq!(
        parse_flap_protection(r#"{"threshold": 8, "interval": 30}"#).unwrap(),
        (8, 30)
    );
    assert_eq!(
        parse_flap_protection(r#"{"threshold": "5", "interval": "10"}"#).unwrap(),
        (5, 10)
    );
    let e = parse_flap_protection(r#"{"interval": 10}"#).unwrap_err().0;
    assert!(e.contains("no threshold"), "{e}");
    assert!(parse_flap_protection("Error: unknown command").is_err());
}

#[test]
fn release_from_lsb_release() {
    let t = "DISTRIB_ID=\"Cumulus Linux\"\nDISTRIB_RELEASE=5.9.0\nDISTRIB_DESCRIPTION=\"Cumulus Linux 5.9.0\"\n";
    assert_eq!(parse_lsb_release(t).unwrap(), "Cumulus Linux 5.9.0");
    assert_eq!(
        parse_lsb_release("DISTRIB_ID=\"Cumulus Linux\"\nDISTRIB_RELEASE=5.9.0\n").unwrap(),
        "Cumulus Linux 5.9.0"
    );
    assert!(parse_lsb_release("").is_err());
}

#[test]
fn platform_reads_are_nv_show_argv() {
    let p = Cumulus;
    assert!(p.reached_by_argv());
    let qs = p.counter_queries("swp3");
    assert_eq!(
        qs.iter().map(Query::display).collect::<Vec<_>>(),
        [
            "nv show interface swp3 link stats -o json",
            "nv show interface swp3 counters qos",
            "nv show interface swp3 qos roce counters -o json"
        ]
    );
    assert_eq!(
        p.counter_source(&qs[2]),
        "nv show interface qos roce counters"
    );
    let a = Answer {
        exit: Some(0),
        text: r#"{"in-bytes": 7}"#.into(),
    };
    assert_eq!(p.parse_counters("", &qs[0], &a).unwrap()[0].value, 7);
    assert!(p.parse_counters("", &qs[1], &a).is_err());
    assert!(p.parse_counters("", &qs[2], &a).is_err());
    assert_eq!(p.normalise_port("SWP3.0"), "swp3");
    assert_eq!(p.lldp_query().display(), "lldpctl -f json0");
}

/// Link facts from NVUE, PFC and ECN from the port's RoCE status, the
/// DSCP map from the switch's RoCE object, the release from lsb-release;
/// what an answer does not say is not available, naming the switch and
/// the command, never a pass.
#[test]
fn config_reads_link_roce_and_says_what_it_cannot() {
    let p = Cumulus;
    let ports = vec!["swp1".to_string()];
    let qs = p.config_queries(&ports);
    assert_eq!(
        qs.iter().map(Query::display).collect::<Vec<_>>(),
        [
            "nv show interface swp1 link -o json",
            "nv show interface swp1 qos roce status -o json",
            "nv show qos roce -o json",
            "cat /etc/lsb-release"
        ]
    );
    let ok = |t: &str| Answer {
        exit: Some(0),
        text: t.into(),
    };
    let fixture = |n: &str| {
        let p = format!("{}/tests/fixtures/public/{n}", env!("CARGO_MANIFEST_DIR"));
        std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{p}: {e}"))
    };
    let c = p.parse_config(
        "leaf1",
        &ports,
        &[
            ok(r#"{"mtu":9216,"speed":"400G","state":{"up":{}},"oper-status":"up"}"#),
            ok(&fixture(
                "nvue-show-interface-qos-roce-status-swp16-cl514-docs.txt",
            )),
            ok(&fixture("nvue-show-qos-roce-cl514-docs.txt")),
            ok("DISTRIB_DESCRIPTION=\"Cumulus Linux 5.9.0\"\n"),
        ],
    );
    assert_eq!(
        c.nos_version.known().map(String::as_str),
        Some("Cumulus Linux 5.9.0")
    );
    let port = &c.ports[0];
    assert_eq!(port.link_up.known(), Some(&true));
    assert_eq!(port.speed_mbps.known(), Some(&400_000));
    assert_eq!(port.mtu.known(), Some(&9216));
    assert_eq!(port.pfc.known().map(|p| p[3]), Some(true));
    assert_eq!(port.ecn.known().map(Vec::len), Some(2));
    assert_eq!(c.dscp_prio.known().map(|m| m[&26].priority), Some(Some(3)));
    match &port.pfc_xoff_bytes {
        crate::switch::Fact::NotAvailable { why, .. } => {
            assert!(why.contains("leaf1") && why.contains("Xoff"), "{why}")
        }
        other => panic!("{other:?}"),
    }
    // A RoCE object without PFC or congestion control: not available,
    // naming the command, never `false`.
    let c = p.parse_config(
        "leaf1",
        &ports,
        &[ok("{}"), ok(r#"{"mode":"lossless"}"#), ok("{}"), ok("")],
    );
    match &c.ports[0].pfc {
        crate::switch::Fact::NotAvailable { why, tried } => assert!(
            why.contains("leaf1")
                && why.contains("no pfc object")
                && tried[0].contains("qos roce status"),
            "{why}"
        ),
        other => panic!("{other:?}"),
    }
    assert!(matches!(c.dscp_prio, crate::switch::Fact::Failed(_)));
    // A missing answer is a failure naming the switch and the command.
    let c = p.parse_config("leaf1", &ports, &[]);
    match &c.ports[0].mtu {
        crate::switch::Fact::Failed(e) => assert!(
            e.contains("leaf1") && e.contains("nv show interface swp1 link"),
            "{e}"
        ),
        other => panic!("{other:?}"),
    }
}
