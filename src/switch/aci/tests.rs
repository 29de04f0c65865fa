//! The aci platform against the APIC's documented shapes
//! (`../shared/research/aci.md` §1–§6: `imdata` of `{class: {attributes,
//! children}}`, numbers as strings, errors as `imdata[0].error`).

use serde_json::json;

use super::*;
use crate::switch::Fact;

fn ok(v: Value) -> Answer {
    Answer {
        exit: Some(0),
        text: v.to_string(),
    }
}

fn cmds(q: &Query) -> Vec<String> {
    match q {
        Query::Api(a) => a.cmds.clone(),
        Query::Argv(_) => panic!("argv"),
    }
}

fn phys_if(oper: &str, usage: &str) -> Value {
    json!({"totalCount": "1", "imdata": [{"ethpmPhysIf": {"attributes": {
        "dn": "topology/pod-1/node-101/sys/phys-[eth1/1]/phys", "operSt": oper, "usage": usage}}}]})
}

fn oos(items: Value) -> Value {
    json!({"totalCount": "0", "imdata": items})
}

fn flap() -> Action {
    Action::PortsDown(vec!["Eth1/1".into()])
}

/// The change creates the out-of-service object with its tag, the undo
/// deletes that exact DN; nothing on the APIC undoes it by itself.
#[test]
fn a_flap_creates_the_out_of_service_object_and_the_undo_deletes_its_dn() {
    let c = Aci.change(
        &flap(),
        &State::default(),
        Some(("r-1", Duration::from_secs(70))),
    );
    assert!(!c.armed);
    // First the snapshot, a record named by the fault.
    let snap = cmds(&c.apply[0]);
    let (head, body) = snap[0].split_once(" {").unwrap();
    assert_eq!(head, "POST /api/mo/uni/fabric/configexp-rocegate.json");
    let body: Value = serde_json::from_str(&format!("{{{body}")).unwrap();
    let a = &body["configExportP"]["attributes"];
    assert_eq!(
        (a["snapshot"].as_str(), a["adminSt"].as_str()),
        (Some("yes"), Some("triggered"))
    );
    assert!(a["descr"].as_str().unwrap().contains("r-1"));
    let dn = "uni/fabric/outofsvc/rsoosPath-[topology/pod-{pod}/paths-{node}/pathep-[eth1/1]]";
    let apply = cmds(&c.apply[1]);
    assert_eq!(apply.len(), 1);
    let (head, body) = apply[0].split_once(" {").unwrap();
    assert_eq!(head, format!("POST /api/mo/{dn}.json"));
    let body: Value = serde_json::from_str(&format!("{{{body}")).unwrap();
    assert_eq!(
        body,
        json!({"fabricRsOosPath": {"attributes": {
            "tDn": "topology/pod-{pod}/paths-{node}/pathep-[eth1/1]",
            "lc": "blacklist", "annotation": "orchestrator:rocegate"}}})
    );
    assert_eq!(cmds(&c.undo), [format!("DELETE /api/mo/{dn}.json")]);
    // Only ports: a reload or a routing stop has no REST path.
    assert!(Aci.supports(&Action::RoutingStop).is_err());
    assert!(Aci.supports(&Action::Reload { ports: vec![] }).is_err());
}

/// Prior state: a port already out of service, a fabric port, and someone
/// else's out-of-service object on the port each refuse the fault.
#[test]
fn prior_state_refuses_ports_out_of_service_fabric_ports_and_others_objects() {
    let read = cmds(&Aci.read_prior(&flap()));
    assert_eq!(
        read[0],
        "GET /api/mo/topology/pod-{pod}/node-{node}/sys/phys-[eth1/1]/phys.json"
    );
    assert!(
        read[1].contains("wcard(fabricRsOosPath.tDn,%22paths-{node}/%22)"),
        "{read:?}"
    );
    let answer = |phys: Value, o: Value| ok(json!([phys, o]));
    let st = Aci
        .parse_prior(&flap(), &answer(phys_if("up", "epg"), oos(json!([]))))
        .unwrap();
    assert_eq!(
        st.ports[0],
        PortState {
            name: "Eth1/1".into(),
            admin_up: true,
            oper_up: true
        }
    );
    Aci.check_prior(&flap(), &st).unwrap();
    let st = Aci
        .parse_prior(
            &flap(),
            &answer(phys_if("down", "blacklist,epg"), oos(json!([]))),
        )
        .unwrap();
    let e = Aci.check_prior(&flap(), &st).unwrap_err();
    assert!(e.contains("already out of service"), "{e}");
    let st = Aci
        .parse_prior(&flap(), &answer(phys_if("up", "fabric"), oos(json!([]))))
        .unwrap();
    assert!(Aci
        .check_prior(&flap(), &st)
        .unwrap_err()
        .contains("facing a spine"));
    let theirs = oos(json!([{"fabricRsOosPath": {"attributes": {
        "tDn": "topology/pod-1/paths-101/pathep-[eth1/1]", "lc": "blacklist", "annotation": ""}}}]));
    let st = Aci
        .parse_prior(&flap(), &answer(phys_if("up", "epg"), theirs))
        .unwrap();
    let e = Aci.check_prior(&flap(), &st).unwrap_err();
    assert!(e.contains("that rocegate did not create"), "{e}");
    // Ours (a run's own, tagged) does not count as someone else's.
    let ours = oos(json!([{"fabricRsOosPath": {"attributes": {
        "tDn": "topology/pod-1/paths-101/pathep-[eth1/2]", "annotation": "orchestrator:rocegate"}}}]));
    let st = Aci
        .parse_prior(&flap(), &answer(phys_if("up", "epg"), ours))
        .unwrap();
    assert!(st.pending.is_empty());
    // An APIC error is an error, naming its code and text.
    let refused = json!({"totalCount": "1", "imdata": [{"error": {"attributes": {
        "code": "403", "text": "Token was invalid (Error: Token timeout)"}}}]});
    let e = Aci
        .parse_prior(&flap(), &answer(refused, oos(json!([]))))
        .unwrap_err();
    assert!(e.contains("code 403") && e.contains("Token timeout"), "{e}");
}

/// The RoCE QoS policy (aci.md §6's class-level2) read into the audit's
/// facts: PFC no-drop on CoS 3 from qosPfcPol, the port's MTU and speed
/// from l1PhysIf, the switch version from topSystem; ECN per class in
/// percent is not comparable to byte thresholds: not available, saying so.
#[test]
fn the_qos_policy_and_ports_become_audit_facts() {
    let qos = json!({"totalCount": "1", "imdata": [{"qosInstPol": {"attributes": {"dn": "uni/infra/qosinst-default"},
        "children": [{"qosClass": {"attributes": {"dn": "uni/infra/qosinst-default/class-level2", "prio": "level2", "admin": "enabled", "mtu": "9216"},
            "children": [
                {"qosCong": {"attributes": {"algo": "wred", "ecn": "enabled", "forwardNonEcn": "enabled", "wredMinThreshold": "40", "wredMaxThreshold": "60", "wredProbability": "10", "wredWeight": "0"}}},
                {"qosPfcPol": {"attributes": {"name": "default", "adminSt": "yes", "noDropCos": "cos3", "enableScope": "fabric"}}},
                {"qosSched": {"attributes": {"bw": "60", "meth": "wrr"}}}]}},
            {"qosClass": {"attributes": {"prio": "level3", "admin": "enabled"}, "children": [
                {"qosPfcPol": {"attributes": {"name": "default", "adminSt": "no", "noDropCos": ""}}}]}}]}}]});
    let sys = json!({"totalCount": "1", "imdata": [{"topSystem": {"attributes": {"dn": "topology/pod-1/node-101/sys", "version": "n9000-16.0(3e)", "role": "leaf"}}}]});
    let l1 = json!({"totalCount": "1", "imdata": [{"l1PhysIf": {"attributes": {"id": "eth1/1", "mtu": "9216", "speed": "400G", "adminSt": "up"}}}]});
    let dscp = json!({"totalCount": "0", "imdata": []});
    let pols = json!({"totalCount": "1", "imdata": [{"qosPfcIfPol": {"attributes": {"dn": "uni/infra/pfc-default", "name": "default", "adminSt": "auto"}}}]});
    let ports = vec!["eth1/1".to_string()];
    assert_eq!(Aci.config_queries(&ports).len(), 5);
    let c = Aci.parse_config(
        "leaf101",
        &ports,
        &[ok(sys), ok(qos), ok(dscp), ok(pols), ok(l1)],
    );
    assert_eq!(c.nos_version, Fact::Known("n9000-16.0(3e)".into()));
    let p = &c.ports[0];
    let mut want = [false; 8];
    want[3] = true;
    assert_eq!(p.pfc, Fact::Known(want));
    assert_eq!(p.mtu, Fact::Known(9216));
    assert_eq!(p.speed_mbps, Fact::Known(400_000));
    assert!(matches!(&p.ecn, Fact::NotAvailable { why, .. } if why.contains("percent")));
    // The APIC refusing the read: a failed fact naming the switch.
    let no = Answer {
        exit: Some(crate::switch::call::FAILED),
        text: "`GET /api/mo/…`: HTTP 400: the APIC refused it (code 400): bad request".into(),
    };
    let c = Aci.parse_config("leaf101", &ports, &vec![no; 5]);
    assert!(matches!(&c.nos_version, Fact::Failed(m) if m.starts_with("leaf101: ")));
}

/// RMON counters by class and attribute (aci.md §4.2), numbers as
/// strings; PFC and ECN are not read at all (not available, never 0).
#[test]
fn rmon_counters_read_into_canonical_names() {
    let a = ok(json!({"totalCount": "3", "imdata": [
        {"rmonIfIn": {"attributes": {"octets": "123456", "discards": "2", "errors": "0"}}},
        {"rmonIfOut": {"attributes": {"octets": "654321", "discards": "0"}}},
        {"rmonDot3Stats": {"attributes": {"fCSErrors": "7", "symbolErrors": "1", "alignmentErrors": "0"}}}]}));
    let q = &Aci.counter_queries("Eth1/1")[0];
    assert!(cmds(q)[0].contains("sys/phys-[eth1/1].json?query-target=children"));
    let r = Aci.parse_counters("", q, &a).unwrap();
    let v = |c: Canonical| r.iter().find(|x| x.canonical == c).map(|x| x.value);
    assert_eq!(v(Canonical::RxBytes), Some(123_456));
    assert_eq!(v(Canonical::TxBytes), Some(654_321));
    assert_eq!(v(Canonical::CrcErrors), Some(7));
    assert_eq!(v(Canonical::Drops), Some(0));
    assert_eq!(v(Canonical::Discards), Some(2));
    assert_eq!(v(Canonical::PfcPauseRx), None);
    assert!(Aci.parse_counters("", q, &ok(json!({"nope": 1}))).is_err());
}

#[test]
fn lldp_neighbours_come_with_their_local_port_from_the_dn() {
    let a = ok(
        json!({"totalCount": "1", "imdata": [{"lldpAdjEp": {"attributes": {
        "dn": "topology/pod-1/node-101/sys/lldp/inst/if-[eth1/49]/adj-1",
        "sysName": "spine201", "portIdV": "Eth1/1", "chassisIdV": "00:3a:9c:00:00:01",
        "sysDesc": "topology/pod-1/node-201", "mgmtIp": "10.0.0.201"}}}]}),
    );
    let n = Aci.parse_lldp(&a).unwrap();
    assert_eq!(n[0].interface, "eth1/49");
    assert_eq!(n[0].chassis_name.as_deref(), Some("spine201"));
    assert_eq!(Aci.normalise_port(&n[0].port_id), "eth1/1");
    for name in ["Eth1/1", "ethernet1/1", "eth1/1", " ETH1/1"] {
        assert_eq!(normalise_port(name), "eth1/1", "{name}");
    }
}

#[test]
fn the_probe_says_the_login_worked_and_the_switch_exists() {
    let q = &Aci.probe_queries("rocegate")[0];
    assert_eq!(
        cmds(q),
        ["GET /api/mo/topology/pod-{pod}/node-{node}/sys.json"]
    );
    let sys = ok(
        json!({"totalCount": "1", "imdata": [{"topSystem": {"attributes": {
        "name": "leaf101", "role": "leaf", "version": "n9000-16.0(3e)"}}}]}),
    );
    let r = Aci.read_probe(&[sys]).unwrap();
    assert!(r.contains("leaf leaf101 n9000-16.0(3e)"), "{r}");
    let none = ok(json!({"totalCount": "0", "imdata": []}));
    assert!(Aci
        .read_probe(&[none])
        .unwrap_err()
        .contains("check api.node"));
}

/// The RoCE class tree of aci.md §3.7 (level2: WRED+ECN 40-60 %, PFC on
/// cos3) next to a lossy level1.
fn roce_tree(ecn: &str) -> Value {
    json!({"totalCount": "1", "imdata": [{"qosInstPol": {"attributes": {"dn": "uni/infra/qosinst-default"}, "children": [
        {"qosClass": {"attributes": {"dn": "uni/infra/qosinst-default/class-level2", "prio": "level2"}, "children": [
            {"qosCong": {"attributes": {"algo": "wred", "ecn": ecn, "wredMinThreshold": "40", "wredMaxThreshold": "60"}}},
            {"qosPfcPol": {"attributes": {"dn": "uni/infra/qosinst-default/class-level2/pfcpol-default", "adminSt": "yes", "noDropCos": "cos3"}}}]}},
        {"qosClass": {"attributes": {"dn": "uni/infra/qosinst-default/class-level1", "prio": "level1"}, "children": [
            {"qosCong": {"attributes": {"algo": "tail-drop", "ecn": "disabled"}}},
            {"qosPfcPol": {"attributes": {"adminSt": "no", "noDropCos": ""}}}]}}]}}]})
}

fn dscp_rule(dn: &str, from: &str, to: &str, prio: &str) -> Value {
    json!({"qosDscpClass": {"attributes": {"dn": dn, "from": from, "to": to, "prio": prio, "target": "unspecified", "targetCos": "unspecified"}}})
}

fn port_with_policy(pol: Option<&str>) -> Value {
    let kids: Vec<Value> = pol
        .map(|p| vec![json!({"l1RsQosPfcIfPolCons": {"attributes": {"tDn": p}}})])
        .unwrap_or_default();
    json!({"totalCount": "1", "imdata": [{"l1PhysIf": {"attributes": {"id": "eth1/1", "mtu": "9216", "speed": "400G"}, "children": kids}}]})
}

/// DSCP classification resolves through the class tree to the no-drop CoS;
/// names (AF31, CS6) and ranges are read; two custom policies that
/// disagree leave the DSCP without a priority; an interface PFC policy that
/// is off turns PFC off on that port only.
#[test]
fn dscp_classes_and_the_port_pfc_policy_become_audit_facts() {
    let sys = json!({"imdata": [{"topSystem": {"attributes": {"version": "n9000-16.0(3e)"}}}]});
    let dscp = json!({"totalCount": "3", "imdata": [
        dscp_rule("uni/tn-gpu/qoscustom-roce/dcsp-AF31-AF31", "AF31", "AF31", "level2"),
        dscp_rule("uni/tn-gpu/qoscustom-roce/dcsp-CS6-CS6", "CS6", "CS6", "level1"),
        dscp_rule("uni/tn-a/qoscustom-x/dcsp-0-7", "0", "7", "level1"),
        dscp_rule("uni/tn-b/qoscustom-y/dcsp-CS0-CS0", "CS0", "CS0", "level2")]});
    let pols = json!({"imdata": [
        {"qosPfcIfPol": {"attributes": {"dn": "uni/infra/pfc-default", "adminSt": "auto"}}},
        {"qosPfcIfPol": {"attributes": {"dn": "uni/infra/pfc-OFF", "adminSt": "off"}}}]});
    let ports = vec!["eth1/1".to_string(), "eth1/2".to_string()];
    let c = Aci.parse_config(
        "leaf101",
        &ports,
        &[
            ok(sys),
            ok(roce_tree("enabled")),
            ok(dscp),
            ok(pols),
            ok(port_with_policy(None)),
            ok(port_with_policy(Some("uni/infra/pfc-OFF"))),
        ],
    );
    let m = c.dscp_prio.known().expect("classification read");
    assert_eq!(m[&26].class, "level2");
    assert_eq!(m[&26].priority, Some(3));
    assert_eq!((m[&48].class.as_str(), m[&48].priority), ("level1", None));
    assert_eq!(m[&5].class, "level1");
    assert_eq!(
        (m[&0].class.as_str(), m[&0].priority),
        ("level1 or level2", None)
    );
    let mut on3 = [false; 8];
    on3[3] = true;
    assert_eq!(c.ports[0].pfc, Fact::Known(on3));
    assert_eq!(c.ports[1].pfc, Fact::Known([false; 8]));
    assert!(
        matches!(&c.ports[0].ecn, Fact::NotAvailable { why, .. } if why.contains("level2 (cos3) marks ECN from 40% to 60%")),
        "{:?}",
        c.ports[0].ecn
    );
    // The audit's check on it: RoCE in level2 (priority 3), CNP in a class
    // of its own: fine.
    let profile = crate::config::inventory::RoceProfile::nvidia_default(4096);
    let (o, obs, _, msg) = crate::audit::checks::switch_dscp(&profile, m, &[]);
    assert_eq!(o, crate::report::events::Outcome::Ok, "{obs}: {msg}");
    // No ECN on the no-drop class: known, and empty (no marking).
    let c = Aci.parse_config(
        "leaf101",
        &ports[..1],
        &[
            ok(json!({"imdata": []})),
            ok(roce_tree("disabled")),
            ok(json!({"imdata": []})),
            ok(json!({"imdata": [{"qosPfcIfPol": {"attributes": {"dn": "uni/infra/pfc-default", "adminSt": "on"}}}]})),
            ok(port_with_policy(Some("uni/infra/pfc-GONE"))),
        ],
    );
    assert_eq!(c.ports[0].ecn, Fact::Known(Vec::new()));
    assert!(matches!(&c.ports[0].pfc, Fact::Failed(m) if m.contains("pfc-GONE")));
    // Nothing classifies DSCP 26: a deviation naming it.
    let m = c.dscp_prio.known().unwrap();
    let (o, _, _, msg) = crate::audit::checks::switch_dscp(&profile, m, &[]);
    assert_eq!(o, crate::report::events::Outcome::Deviation);
    assert!(msg.contains("RoCE DSCP 26 is not classified"), "{msg}");
}

#[test]
fn apic_dscp_names() {
    use super::qos::dscp_value;
    for (n, v) in [
        ("AF31", 26),
        ("af41", 34),
        ("CS6", 48),
        ("EF", 46),
        ("VA", 44),
        ("63", 63),
        ("CS0", 0),
    ] {
        assert_eq!(dscp_value(n), Some(v), "{n}");
    }
    for n in ["AF51", "AF34", "CS8", "64", "", "unspecified"] {
        assert_eq!(dscp_value(n), None, "{n}");
    }
}

/// Drop statistics from the current 5-minute objects' `*Cum` attributes,
/// per-class drops on the class's no-drop priority; statistics collection
/// off (no object) is absent, never zero; a damaged number is an error.
#[test]
fn drop_statistics_and_per_class_counters() {
    let qs = Aci.counter_queries("Eth1/1");
    assert_eq!(qs.len(), 3);
    assert!(cmds(&qs[1])[0].contains("rsp-subtree-include=stats"));
    let drops = ok(
        json!({"imdata": [{"l1PhysIf": {"attributes": {"id": "eth1/1"}, "children": [
        {"eqptIngrDropPkts5min": {"attributes": {"bufferCum": "12", "errorCum": "0", "forwardingCum": "3", "lbCum": "0", "bufferPer": "2"}}},
        {"eqptEgrDropPkts5min": {"attributes": {"afdWredCum": "40", "bufferCum": "1", "errorCum": "0"}}}]}}]}),
    );
    let r = Aci.parse_counters("", &qs[1], &drops).unwrap();
    let got: Vec<(Canonical, &str, u64)> = r
        .iter()
        .map(|x| (x.canonical, x.vendor.as_str(), x.value))
        .collect();
    assert_eq!(
        got,
        [
            (Canonical::Discards, "eqptIngrDropPkts5min.bufferCum", 12),
            (Canonical::Drops, "eqptEgrDropPkts5min.bufferCum", 1),
            (Canonical::Drops, "eqptEgrDropPkts5min.afdWredCum", 40)
        ]
    );
    let none = ok(json!({"imdata": [{"l1PhysIf": {"attributes": {"id": "eth1/1"}}}]}));
    assert!(Aci.parse_counters("", &qs[1], &none).unwrap().is_empty());
    let bad = ok(
        json!({"imdata": [{"eqptEgrDropPkts5min": {"attributes": {"afdWredCum": "x", "bufferCum": "1"}}}]}),
    );
    assert!(Aci.parse_counters("", &qs[1], &bad).is_err());
    // Per class, with the PFC policies read alongside.
    assert_eq!(cmds(&qs[2]).len(), 2);
    let classes = json!({"imdata": [
        {"qosmIfClass": {"attributes": {"dn": "topology/pod-1/node-101/sys/qosm/if-[eth1/1]/class-level2", "id": "level2", "RxDropPacketsCount": "0", "TxDropPacketsCount": "5"}}},
        {"qosmIfClass": {"attributes": {"dn": "topology/pod-1/node-101/sys/qosm/if-[eth1/1]/class-level1", "id": "level1", "RxDropPacketsCount": "1", "TxDropPacketsCount": "9"}}}]});
    let pfc = json!({"imdata": [
        {"qosPfcPol": {"attributes": {"dn": "uni/infra/qosinst-default/class-level2/pfcpol-default", "adminSt": "yes", "noDropCos": "cos3"}}},
        {"qosPfcPol": {"attributes": {"dn": "uni/infra/qosinst-default/class-level1/pfcpol-default", "adminSt": "no", "noDropCos": ""}}}]});
    let r = Aci
        .parse_counters("", &qs[2], &ok(json!([classes, pfc])))
        .unwrap();
    let tx2 = r
        .iter()
        .find(|x| x.vendor == "qosmIfClass.level2.TxDropPacketsCount")
        .unwrap();
    assert_eq!(
        (tx2.canonical, tx2.priority, tx2.value),
        (Canonical::Drops, Some(3), 5)
    );
    let tx1 = r
        .iter()
        .find(|x| x.vendor == "qosmIfClass.level1.TxDropPacketsCount")
        .unwrap();
    assert_eq!(tx1.priority, None);
}
