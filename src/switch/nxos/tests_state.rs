//! The state readers on public captures (`tests/fixtures/nxos/`).

use serde_json::Value;

use super::testutil::{fixture, json, rpc_body};
use super::*;
use crate::counters::host::LldpNeighbor;

// ------------------------------------------------------- prior state

#[test]
fn port_states_from_status_brief_and_show_interface() {
    let r = parse_ins_api(
        &["show interface status"],
        &fixture("show-interface-status-insapi-greenpau.json"),
    )
    .unwrap();
    let v = parse_port_states(r[0].reply.json().unwrap()).unwrap();
    assert_eq!(v.len(), 59);
    let s = |p: &str| v.iter().find(|s| s.port == p).unwrap().clone();
    assert_eq!(
        (s("mgmt0").admin_up, s("mgmt0").oper_up),
        (Some(true), Some(true))
    );
    assert_eq!(
        (s("Ethernet9/4").admin_up, s("Ethernet9/4").oper_up),
        (Some(true), Some(false))
    );
    assert_eq!(
        (s("Ethernet9/1").admin_up, s("Ethernet9/1").oper_up),
        (Some(true), Some(false))
    );
    assert_eq!(
        (s("port-channel154").admin_up, s("port-channel154").oper_up),
        (None, Some(false))
    );
    assert!(v.iter().all(|s| s.err_disabled.is_none()));
    let v = parse_port_states(&json("show-interface-brief-body-greenpau.json")).unwrap();
    assert_eq!(v.len(), 23);
    let s = |p: &str| v.iter().find(|s| s.port == p).unwrap().clone();
    assert_eq!(
        s("Ethernet2/33").reason.as_deref(),
        Some("SFP not inserted")
    );
    assert_eq!(s("Ethernet2/33").oper_up, Some(false));
    assert_eq!(s("Ethernet10/1").reason, None, "`none` is no reason");
    assert_eq!(s("Ethernet10/1").oper_up, Some(true));
    let vlan = s("Vlan1");
    assert_eq!((vlan.admin_up, vlan.oper_up), (Some(false), Some(false)));
    assert_eq!(vlan.reason.as_deref(), Some("Administratively down"));
    let body =
        &json("show-interface-n9k-c9336c-fx2-10.2.4-output-body-harvest.json")["output"]["body"];
    let v = parse_port_states(body).unwrap();
    assert_eq!(
        (v[0].port.as_str(), v[0].admin_up, v[0].oper_up),
        ("mgmt0", Some(true), Some(false))
    );
    // Err-disabled, as a status word and as a reason.
    let body = serde_json::json!({"TABLE_interface": {"ROW_interface": [
        {"interface": "Ethernet1/3", "state": "err-disabled"},
        {"interface": "Ethernet1/4", "admin_state": "up", "state": "down", "state_rsn_desc": "Link flap error disabled"}]}});
    let v = parse_port_states(&body).unwrap();
    assert_eq!(v[0].err_disabled.as_deref(), Some("err-disabled"));
    assert_eq!((v[0].admin_up, v[0].oper_up), (Some(true), Some(false)));
    assert_eq!(
        v[1].err_disabled.as_deref(),
        Some("Link flap error disabled")
    );
}

#[test]
fn err_disabled_text_reads_the_cause_past_long_descriptions() {
    let v = parse_err_disabled(&fixture(
        "show-interface-status-err-disabled-linkflap-text-ntc.txt",
    ))
    .unwrap();
    let got: Vec<(&str, &str)> = v
        .iter()
        .map(|s| (s.port.as_str(), s.err_disabled.as_deref().unwrap()))
        .collect();
    assert_eq!(
        got,
        [
            ("Eth1", "linkFlapErrDisabled"),
            ("Eth2", "linkFlapErrDisabled"),
            ("Eth3", "Error disabled"),
            ("Eth4", "linkFlapErrDisabled")
        ]
    );
    assert!(v.iter().all(|s| s.oper_up == Some(false)));
    assert!(parse_err_disabled("").unwrap().is_empty());
    for (bad, want) in [
        (
            "Eth1  x  linkFlapErr  y\n",
            "before the `Port Name Status Reason` header",
        ),
        ("% Invalid command\n", "before the"),
        ("Port Name Status Reason\nEth1\n", "nothing under Status"),
    ] {
        let e = parse_err_disabled(bad).unwrap_err().0;
        assert!(e.contains(want), "{bad:?}: {e}");
    }
}

#[test]
fn bgp_peers_of_every_vrf_and_family() {
    let v = parse_bgp_summary(&json(
        "show-bgp-all-summary-vrf-all-row-saf-object-napalm.json",
    ))
    .unwrap();
    assert_eq!(v.len(), 14);
    assert!(not_established(&v).is_empty());
    let evpn = v.iter().find(|p| p.neighbor == "10.1.1.134").unwrap();
    assert_eq!(evpn.vrf, "default");
    assert_eq!(evpn.address_family.as_deref(), Some("L2VPN EVPN"));
    assert_eq!(evpn.remote_as.as_deref(), Some("64861"));
    let blue: Vec<_> = v
        .iter()
        .filter(|p| p.vrf == "BLUE")
        .map(|p| p.neighbor.as_str())
        .collect();
    assert_eq!(blue, ["10.1.1.185", "10.1.1.187"]);
    // `show bgp sessions`: one VRF row as an object, three peers down.
    let r = parse_ins_api(
        &["show bgp sessions"],
        &fixture("show-bgp-sessions-insapi-greenpau.json"),
    )
    .unwrap();
    let v = parse_bgp_summary(r[0].reply.json().unwrap()).unwrap();
    assert_eq!(v.len(), 8);
    let down: Vec<_> = not_established(&v)
        .iter()
        .map(|p| (p.neighbor.as_str(), p.state.as_str()))
        .collect();
    assert_eq!(
        down,
        [
            ("19.0.200.200", "Idle"),
            ("fec0::1002", "Idle"),
            ("fec0::2002", "Idle")
        ]
    );
    assert!(v
        .iter()
        .all(|p| p.vrf == "default" && p.address_family.is_none()));
    assert!(parse_bgp_summary(&Value::Null).unwrap().is_empty());
    assert!(parse_bgp_summary(&serde_json::json!({}))
        .unwrap()
        .is_empty());
    for (bad, want) in [
        (
            serde_json::json!({"TABLE_vrf": {"ROW_vrf": {"vrf-name-out": "default", "TABLE_neighbor": {"ROW_neighbor": {"neighborid": "10.0.0.1"}}}}}),
            "neighbor 10.0.0.1 has no `state`",
        ),
        (
            serde_json::json!({"TABLE_neighbor": {"ROW_neighbor": {"neighborid": "10.0.0.1", "state": "Idle"}}}),
            "not inside a TABLE_vrf row",
        ),
        (
            serde_json::json!({"TABLE_vrf": {"ROW_vrf": {"TABLE_af": 5}}}),
            "TABLE_af is a number",
        ),
        (serde_json::json!("BGP summary"), "found a string"),
    ] {
        let e = parse_bgp_summary(&bad).unwrap_err().0;
        assert!(
            e.starts_with("show bgp summary: ") && e.contains(want),
            "{e}"
        );
    }
}

#[test]
fn version_and_model() {
    let v = parse_version(&json("show-version-body-napalm-n9000.json")).unwrap();
    assert_eq!(v.version, "7.3(1)D1(1) [build 7.3(1)D1(0.10)]");
    assert_eq!(v.chassis.as_deref(), Some("NX-OSv Chassis"));
    assert_eq!(v.hostname.as_deref(), Some("nxos-spine1"));
    let body = rpc_body(
        "show-version-n9kv-9.2.2-jsonrpc-greenpau.json",
        "show version",
    );
    let v = parse_version(&body).unwrap();
    assert_eq!(v.version, "9.2(2)");
    assert_eq!(v.chassis.as_deref(), Some("Nexus9000 9000v Chassis"));
    let newer = serde_json::json!({"nxos_ver_str": "10.3(4a)", "kickstart_ver_str": "x", "chassis_id": "Nexus9000 C93180YC-FX Chassis"});
    assert_eq!(parse_version(&newer).unwrap().version, "10.3(4a)");
    assert!(parse_version(&serde_json::json!({"host_name": "x"}))
        .unwrap_err()
        .0
        .contains("no `nxos_ver_str`"));
    assert!(parse_version(&Value::Null).is_err());
}

// --------------------------------------------------------------- LLDP

#[test]
fn lldp_json_neighbours() {
    let v = parse_lldp_json(&json(
        "show-lldp-neighbors-detail-body-netapp-neighbors-harvest.json",
    ))
    .unwrap();
    assert_eq!(v.len(), 3);
    assert_eq!(
        v[1],
        LldpNeighbor {
            interface: "Eth1/9".into(),
            chassis_name: Some("na2a-mc1-nbg3".into()),
            chassis_id: Some("dead.beef.7fef".into()),
            chassis_descr: Some(
                "AFF-A800, NetApp Release 9.13.1P9: Fri Apr 19 13:13:02 EDT 2024".into()
            ),
            port_id: "e1b".into(),
            port_descr: None,
            mgmt_ip: None,
        }
    );
    let r = parse_ins_api(
        &["show lldp neighbors detail"],
        &fixture("show-lldp-neighbors-detail-insapi-cli_show_array-harvest.json"),
    )
    .unwrap();
    let v = parse_lldp_json(r[0].reply.json().unwrap()).unwrap();
    assert_eq!(v[0].interface, "mgmt0");
    assert_eq!(
        v[0].chassis_name.as_deref(),
        Some("sa-tme-flexpod-3048TP-gg28-01")
    );
    assert_eq!(
        (v[0].port_id.as_str(), v[0].mgmt_ip.as_deref()),
        ("Ethernet1/44", Some("10.192.116.11"))
    );
    assert_eq!(normalise_port(&v[1].interface), "ethernet1/1");
    let e = parse_lldp_json(
        &serde_json::json!({"TABLE_nbor_detail": {"ROW_nbor_detail": {"port_id": "x"}}}),
    )
    .unwrap_err()
    .0;
    assert!(e.contains("no `l_port_id`"), "{e}");
}

#[test]
fn lldp_text_neighbours() {
    let v = parse_lldp_text(&fixture(
        "show-lldp-neighbors-detail-text-eth-short-names-napalm.txt",
    ))
    .unwrap();
    assert_eq!(v.len(), 3);
    assert_eq!(
        (v[0].interface.as_str(), v[0].port_id.as_str()),
        ("mgmt0", "Fa1/0/9")
    );
    assert_eq!(v[0].chassis_name.as_deref(), Some("PERIMETER.cisco.com"));
    assert_eq!(v[0].mgmt_ip.as_deref(), Some("10.1.100.1"));
    assert!(v[0]
        .chassis_descr
        .as_deref()
        .unwrap()
        .ends_with("Compiled Thu 01-May-08 15:42 by antonino"));
    let n9k = &v[1];
    assert_eq!(
        (n9k.interface.as_str(), n9k.port_id.as_str()),
        ("Eth1/1", "Ethernet1/1")
    );
    assert_eq!(n9k.chassis_id.as_deref(), Some("5087.89a1.d8d6"));
    assert_eq!(normalise_port(&n9k.interface), normalise_port(&n9k.port_id));
    let v = parse_lldp_text(&fixture("show-lldp-neighbors-detail-text-ntc-2.txt")).unwrap();
    assert_eq!(v.len(), 2);
    assert_eq!(
        (v[1].interface.as_str(), v[1].port_id.as_str()),
        ("Eth101/1/10", "1a51.4800.0001")
    );
    assert_eq!(v[1].chassis_name.as_deref(), Some("pure-storage"));
    assert_eq!(v[1].port_descr.as_deref(), Some("eth0"));
    assert_eq!(v[1].mgmt_ip, None, "not advertised");
    assert_eq!(v[0].port_descr.as_deref(), Some("SW-NEXUS-UPLINK"));
    // Cut before the last record, but the total survived: an error.
    let full = fixture("show-lldp-neighbors-detail-text-eth-short-names-napalm.txt");
    let cut_at = full.rfind("Chassis id:").unwrap();
    let cut = format!("{}\nTotal entries displayed: 3\n", &full[..cut_at]);
    let e = parse_lldp_text(&cut).unwrap_err().0;
    assert!(e.contains("says 3 entries, but 2 records"), "{e}");
    assert!(
        parse_lldp_text("Capability codes:\n  (R) Router\nTotal entries displayed: 0\n")
            .unwrap()
            .is_empty()
    );
    assert!(parse_lldp_text("% Invalid command\n")
        .unwrap_err()
        .0
        .contains("no `Chassis id:`"));
    let e = parse_lldp_text("Chassis id: 1\nPort id: Ethernet1/1\n")
        .unwrap_err()
        .0;
    assert!(
        e.contains("record 1 (chassis 1) has no `Local Port id`"),
        "{e}"
    );
    // The one-line table is not the detail view.
    assert!(parse_lldp_text(&fixture("show-lldp-neighbors-text-napalm.txt")).is_err());
}
