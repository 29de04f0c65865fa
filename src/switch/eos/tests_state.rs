//! The state and audit parsers on captured EOS answers
//! (`tests/fixtures/eos/`).

use super::testutil::fixture;
use super::*;
use crate::counters::host::LldpNeighbor;

#[test]
fn interfaces_status_errdisabled_with_and_without_causes() {
    let s = parse_interfaces_status(&fixture(
        "show-interfaces-status-errdisabled-anta-unittest.json",
    ))
    .unwrap();
    assert_eq!(s.len(), 1);
    assert_eq!(s[0].name, "Ethernet2");
    assert_eq!(s[0].errdisabled, Some(vec!["bpduguard".to_string()]));
    assert!(s[0].admin_up && !s[0].oper_up);
    let s = parse_interfaces_status(&fixture(
        "show-interfaces-status-linkstatus-errdisabled-anta-unittest.json",
    ))
    .unwrap();
    assert_eq!(s.len(), 2);
    assert!(s.iter().all(|s| s.errdisabled == Some(vec![])));
    let up = parse_interfaces_status(
        r#"{"interfaceStatuses":{"Ethernet7":{"linkStatus":"connected","lineProtocolStatus":"up","bandwidth":400000000000},
                "Ethernet8":{"linkStatus":"disabled"}}}"#,
    )
    .unwrap();
    assert!(up[0].admin_up && up[0].oper_up);
    assert_eq!(up[0].speed_mbps, Some(400_000));
    assert!(!up[1].admin_up && !up[1].oper_up);
    let e = parse_interfaces_status(r#"{"interfaceStatuses":{"Ethernet1":{"description":""}}}"#)
        .unwrap_err()
        .0;
    assert!(
        e.contains("interfaceStatuses.Ethernet1: no `linkStatus`"),
        "{e}"
    );
}

#[test]
fn bgp_peers_in_every_vrf() {
    let p = parse_bgp_summary(&fixture(
        "show-ip-bgp-summary-vrf-all-established-active-napalm.json",
    ))
    .unwrap();
    assert_eq!(p.len(), 2);
    assert_eq!(
        (p[0].vrf.as_str(), p[0].peer.as_str(), p[0].state.as_str()),
        ("default", "10.0.0.1", "Established")
    );
    let down = not_established(&p);
    assert_eq!(down.len(), 1);
    assert_eq!(
        (down[0].peer.as_str(), down[0].state.as_str()),
        ("10.0.0.3", "Active")
    );
    assert!(
        parse_bgp_summary(&fixture("show-ip-bgp-summary-vrf-all-nopeers-napalm.json"))
            .unwrap()
            .is_empty()
    );
    assert!(
        parse_bgp_summary(&fixture("show-ip-bgp-summary-vrf-all-nobgp-napalm.json"))
            .unwrap()
            .is_empty()
    );
    let p = parse_bgp_summary(&fixture(
        "show-bgp-summary-vrf-all-afisafi-anta-unittest.json",
    ))
    .unwrap();
    assert_eq!(p.len(), 3);
    assert_eq!(not_established(&p).len(), 3);
    let dev = p.iter().find(|p| p.vrf == "DEV").unwrap();
    assert_eq!(
        (dev.peer.as_str(), dev.state.as_str()),
        ("10.1.254.1", "Idle")
    );
    assert_eq!(
        dev.families,
        vec![("ipv4Unicast".to_string(), "negotiated".to_string())]
    );
    let p1 = p.iter().find(|p| p.peer == "10.1.0.1").unwrap();
    assert_eq!(p1.families.len(), 2);
    let e = parse_bgp_summary(r#"{"vrfs":{"default":{"peers":{"10.0.0.1":{"peerState":4}}}}}"#)
        .unwrap_err()
        .0;
    assert!(
        e.contains("vrfs.default.peers.10.0.0.1.peerState: expected a string, got a number"),
        "{e}"
    );
}

#[test]
fn versions() {
    let v = parse_version(&fixture("show-version-pyeapi.json")).unwrap();
    assert_eq!(
        v.version,
        "4.14.1-2055159.fldaytonamplspush (engineering build)"
    );
    assert_eq!(v.model, "DCS-7048T-A-F");
    assert_eq!(v.serial.as_deref(), Some("JPE14151521"));
    assert_eq!(v.uptime_s, None);
    let v = parse_version(&fixture("show-version-veos-4.15.5M-napalm.json")).unwrap();
    assert_eq!((v.version.as_str(), v.model.as_str()), ("4.15.5M", "vEOS"));
    assert_eq!(v.serial, None);
    assert_eq!(v.internal_version.as_deref(), Some("4.15.5M-3054042.4155M"));
    let e = parse_version(r#"{"version":"4.32.1F"}"#).unwrap_err().0;
    assert_eq!(e, "show version: the answer: no `modelName`");
    let e = parse_version(r#"{"version":"4.32.1F","modelName":"x","uptime":"long"}"#)
        .unwrap_err()
        .0;
    assert!(e.contains("uptime: expected seconds"), "{e}");
}

#[test]
fn config_sessions_before_and_after_4_32() {
    let s = parse_config_sessions(&fixture(
        "show-configuration-sessions-detail-pre432-asynceapi-docstring.json",
    ))
    .unwrap();
    assert_eq!(s.sessions.len(), 2);
    let j = s.sessions.iter().find(|s| s.name == "jeremy1").unwrap();
    assert_eq!(j.state, "pending");
    assert_eq!(s.pending, None);
    // Before 4.32: the session's own state and commitBy (keys as napalm reads them).
    let old = r#"{"sessions": {"rocegate-f1": {"state": "pendingCommitTimer", "commitBy": 1300502.5},
                                   "other": {"state": "completed"}}}"#;
    let p = parse_config_sessions(old).unwrap().pending.unwrap();
    assert_eq!(p.session, "rocegate-f1");
    assert_eq!(p.seconds_left(1300202.5), Some(300.0));
    assert_eq!(p.seconds_left(1400000.0), Some(0.0));
    // 4.32 on: at the top.
    let new = r#"{"sessions": {}, "commitTimerSessionName": "rocegate-f2", "commitTimerExpireTime": 500.0}"#;
    let p = parse_config_sessions(new).unwrap().pending.unwrap();
    assert_eq!(
        (p.session.as_str(), p.expires_at_uptime_s),
        ("rocegate-f2", Some(500.0))
    );
    let unknown = r#"{"commitTimerSessionName": "s", "commitTimerExpireTime": -1}"#;
    assert_eq!(
        parse_config_sessions(unknown)
            .unwrap()
            .pending
            .unwrap()
            .seconds_left(1.0),
        None
    );
    let none = r#"{"sessions": {}, "commitTimerSessionName": ""}"#;
    assert_eq!(parse_config_sessions(none).unwrap().pending, None);
    let e = parse_config_sessions(r#"{"maxOpenSessions": 5}"#)
        .unwrap_err()
        .0;
    assert!(e.contains("expected `sessions` (EOS before 4.32)"), "{e}");
}

#[test]
fn lldp_mac_port_ids_and_quoted_names() {
    let n = parse_lldp_neighbors_detail(&fixture(
        "show-lldp-neighbors-detail-macaddress-portid-napalm.json",
    ))
    .unwrap();
    assert_eq!(n.len(), 41);
    let e8 = n.iter().find(|n| n.interface == "Ethernet8").unwrap();
    assert_eq!(
        *e8,
        LldpNeighbor {
            interface: "Ethernet8".into(),
            chassis_name: Some("78m3".into()),
            chassis_id: Some("2c:60:0c:ad:30:de".into()),
            chassis_descr: Some(e8.chassis_descr.clone().unwrap()),
            port_id: "00:0f:53:2e:ce:d1".into(),
            port_descr: Some("eth3".into()),
            mgmt_ip: Some("192.168.8.21".into()),
        }
    );
    assert!(e8
        .chassis_descr
        .as_deref()
        .unwrap()
        .starts_with("Linux 3.18.22-cloudflare"));
    // A Juniper neighbour with a `local` port id, quoted, and no address.
    let e47 = n.iter().find(|n| n.interface == "Ethernet47").unwrap();
    assert_eq!(
        (e47.port_id.as_str(), e47.mgmt_ip.as_deref()),
        ("597", None)
    );
    assert_eq!(e47.chassis_name.as_deref(), Some("ms01.bru01"));

    let n = parse_lldp_neighbors_detail(&fixture(
        "show-lldp-neighbors-detail-quoted-interfacename-napalm-issue1153.json",
    ))
    .unwrap();
    let q = n.iter().find(|n| n.interface == "Ethernet27/1").unwrap();
    assert_eq!(q.port_id, "et-0/0/20");
    assert_eq!(q.chassis_name.as_deref(), Some("some-switch"));
    let h = n.iter().find(|n| n.interface == "Ethernet1/1").unwrap();
    assert_eq!(h.mgmt_ip.as_deref(), Some("10.0.0.1"));
    assert_eq!(h.port_descr.as_deref(), Some("eth0"));

    let n = parse_lldp_neighbors_detail(&fixture(
        "show-lldp-neighbors-detail-interfaceid-v2-anta-unittest.json",
    ))
    .unwrap();
    assert_eq!(n.len(), 2);
    assert_eq!(n[0].chassis_name.as_deref(), Some("DC1-SPINE1.local.com"));
    assert_eq!(n[1].port_id, "Ethernet1");
    assert_eq!(normalise_port(&n[1].port_id), normalise_port("Et1"));
    // `show lldp neighbors` (not detail) lists; this reader says so.
    let e = parse_lldp_neighbors_detail(r#"{"lldpNeighbors": [{"port": "Ethernet1"}]}"#)
        .unwrap_err()
        .0;
    assert!(
        e.contains("lldpNeighbors: expected an object, got a list"),
        "{e}"
    );
    let e = parse_lldp_neighbors_detail(
        r#"{"lldpNeighbors": {"Ethernet1": {"lldpNeighborInfo": {"systemName": "x"}}}}"#,
    )
    .unwrap_err()
    .0;
    assert!(
        e.contains("lldpNeighbors.Ethernet1.lldpNeighborInfo: expected a list, got an object"),
        "{e}"
    );
}

#[test]
fn errdisable_recovery_text() {
    let r = parse_errdisable_recovery(&fixture("show-errdisable-recovery-text-anta-unittest.txt"))
        .unwrap();
    assert_eq!(
        r,
        vec![
            ErrdisableRecovery {
                reason: "acl".into(),
                enabled: true,
                interval_s: Some(300)
            },
            ErrdisableRecovery {
                reason: "bpduguard".into(),
                enabled: false,
                interval_s: None
            },
            ErrdisableRecovery {
                reason: "arp-inspection".into(),
                enabled: true,
                interval_s: Some(30)
            },
        ]
    );
    let e = parse_errdisable_recovery("% Invalid input").unwrap_err().0;
    assert!(
        e.contains("no `Errdisable Reason … Timer Status` header"),
        "{e}"
    );
    let cut =
        "Errdisable Reason  Timer Status  Timer Interval\n----- ----- -----\nlink-flap Enabled\n";
    let e = parse_errdisable_recovery(cut).unwrap_err().0;
    assert!(e.contains("line 3: expected REASON STATUS INTERVAL"), "{e}");
    let bad = "Errdisable Reason  Timer Status  Timer Interval\nlink-flap Enabled -300\n";
    assert!(parse_errdisable_recovery(bad)
        .unwrap_err()
        .0
        .contains("`-300` is not seconds"));
}
