//! `show running-config ipqos` and the audit view on the reference
//! configuration (`tests/fixtures/nxos/`) and on written ones.

use super::testutil::{fixture, json, PFC_JSON};
use super::*;
use crate::switch::{EcnQueue, Fact};

fn ok(command: &str, reply: Reply) -> CommandReply {
    CommandReply {
        command: command.into(),
        reply,
    }
}

// ------------------------------------------------------------ ipqos

#[test]
fn ipqos_reference_configuration() {
    let q =
        parse_running_ipqos(&fixture("qos-config-roce-pfc-ecn-azurelocal-reference.txt")).unwrap();
    assert_eq!(q.system_network_qos.as_deref(), Some("QOS_NETWORK"));
    assert_eq!(q.system_queuing_output.as_deref(), Some("QOS_EGRESS_PORT"));
    let mut pfc3 = [false; 8];
    pfc3[3] = true;
    assert_eq!(q.no_drop().unwrap(), (pfc3, Some(9216)));
    let want = vec![EcnQueue {
        tc: 3,
        min_bytes: 300 * 1024,
        max_bytes: 300 * 1024,
        ecn: true,
    }];
    assert_eq!(q.ecn_for("Ethernet1/17").unwrap(), want);
    assert_eq!(q.ecn_for("eth1/1").unwrap(), want, "the system policy");
    let i = &q.interfaces["ethernet1/17"];
    assert_eq!(i.pfc_mode.as_deref(), Some("on"));
    assert_eq!(q.pfc_watchdog, None);
    assert_eq!(q.queuing["QOS_EGRESS_PORT"].len(), 8);
    assert_eq!(q.queuing["QOS_EGRESS_PORT"][1].queue, Some(0));
}

const IPQOS: &str = "!Command: show running-config ipqos
!Running configuration last done at: Mon Jan  1 00:00:00 2024

version 10.3(4a) Bios:version 05.47
priority-flow-control watch-dog-interval on

policy-map type network-qos RoCE-NQ
  class type network-qos c-8q-nq3
    pause pfc-cos 3,4
    mtu 4200
  class type network-qos c-8q-nq-default
    mtu 9216
policy-map type queuing RoCE-OUT
  class type queuing c-out-8q-q3
    bandwidth remaining percent 50
    random-detect minimum-threshold 150 kbytes maximum-threshold 3 mbytes drop-probability 7 weight 0 ecn
  class type queuing c-out-8q-q1
    random-detect minimum-threshold 10 ms maximum-threshold 20 ms
policy-map type queuing PLAIN
  class type queuing c-out-8q-q4
    random-detect minimum-threshold 1000 bytes maximum-threshold 2000 bytes
system qos
  service-policy type network-qos RoCE-NQ
  service-policy type queuing output PLAIN

interface Ethernet1/1
  priority-flow-control mode on
  service-policy type queuing output RoCE-OUT
interface Ethernet1/2
  priority-flow-control mode off
interface Ethernet1/3/2
  priority-flow-control mode auto
";

#[test]
fn ipqos_policies_interfaces_and_what_cannot_be_known() {
    let q = parse_running_ipqos(IPQOS).unwrap();
    assert_eq!(q.pfc_watchdog, Some(true));
    let (pfc, mtu) = q.no_drop().unwrap();
    assert_eq!(pfc, [false, false, false, true, true, false, false, false]);
    assert_eq!(mtu, Some(4200));
    // Ethernet1/1's own policy sets a time-based RED: not in bytes.
    let e = q.ecn_for("Eth1/1").unwrap_err();
    assert!(
        e.contains(
            "class c-out-8q-q1 of queuing policy RoCE-OUT sets RED thresholds in packets or time"
        ),
        "{e}"
    );
    assert_eq!(
        q.ecn_for("Ethernet1/2").unwrap(),
        [EcnQueue {
            tc: 4,
            min_bytes: 1000,
            max_bytes: 2000,
            ecn: false
        }]
    );
    assert_eq!(
        q.interfaces["ethernet1/3/2"].pfc_mode.as_deref(),
        Some("auto")
    );
    // System templates and class-map-based no-drop classes are not guessed.
    let t = parse_running_ipqos("system qos\n  service-policy type network-qos default-nq-8e-policy\n  service-policy type queuing output default-8q-out-policy\n").unwrap();
    assert!(t
        .no_drop()
        .unwrap_err()
        .contains("default-nq-8e-policy, which the running configuration does not define"));
    assert!(t
        .ecn_for("Ethernet1/1")
        .unwrap_err()
        .contains("default-8q-out-policy"));
    let nd = parse_running_ipqos("policy-map type network-qos N\n  class type network-qos c1\n    pause no-drop\nsystem qos\n  service-policy type network-qos N\n").unwrap();
    assert!(nd.no_drop().unwrap_err().contains("names no `pfc-cos`"));
    // No policy applied: the defaults, which have no no-drop class and no RED.
    let none = parse_running_ipqos("").unwrap();
    assert_eq!(none.no_drop().unwrap(), ([false; 8], None));
    assert_eq!(none.ecn_for("Ethernet1/1").unwrap(), []);
    let odd = parse_running_ipqos("policy-map type queuing Q\n  class type queuing c-out-8q-q2\n    random-detect threshold burst-optimized ecn\n  class type queuing MINE\n    random-detect minimum-threshold 1 kbytes maximum-threshold 2 kbytes ecn\nsystem qos\n  service-policy type queuing output Q\n").unwrap();
    let e = odd.ecn_for("e1/1").unwrap_err();
    assert!(
        e.contains("`random-detect threshold burst-optimized ecn` is not a RED line"),
        "{e}"
    );
    for (bad, want) in [
        (
            "% Invalid command at '^' marker.\n",
            "line 1: the switch answered",
        ),
        (
            "policy-map type network-qos N\n  class type network-qos c\n    pause pfc-cos 9\n",
            "line 3: `pause pfc-cos 9`: `9` is not a CoS",
        ),
        (
            "policy-map type network-qos N\n  class type network-qos c\n    mtu big\n",
            "`big` is not an MTU",
        ),
        (
            "policy-map type network-qos N\n  mtu 9216\n",
            "comes before any class",
        ),
        (
            "priority-flow-control watch-dog-interval maybe\n",
            "neither on nor off",
        ),
    ] {
        let e = parse_running_ipqos(bad).unwrap_err().0;
        assert!(
            e.starts_with("show running-config ipqos: ") && e.contains(want),
            "{bad:?}: {e}"
        );
    }
}

// ------------------------------------------------------------- audit

#[test]
fn switch_config_from_the_answers() {
    let version = ok(
        "show version",
        Reply::Json(json("show-version-body-napalm-n9000.json")),
    );
    let body = json("show-interface-n9k-c9336c-fx2-10.2.4-output-body-harvest.json")["output"]
        ["body"]
        .clone();
    let interfaces = ok("show interface", Reply::Json(body));
    let ipqos = ok(
        "show running-config ipqos",
        Reply::Text(IPQOS.replace(
            "interface Ethernet1/2\n  priority-flow-control mode off\n",
            "",
        )),
    );
    let pfc = ok(
        "show interface priority-flow-control",
        Reply::Json(serde_json::from_str(PFC_JSON).unwrap()),
    );
    let replies = ConfigReplies {
        version: Some(&version),
        interfaces: Some(&interfaces),
        ipqos: Some(&ipqos),
        pfc: Some(&pfc),
    };
    let ports: Vec<String> = ["Eth1/1", "ethernet1/2", "Ethernet1/9"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let c = switch_config("leaf1", &ports, &replies);
    assert_eq!(
        c.nos_version,
        Fact::Known("7.3(1)D1(1) [build 7.3(1)D1(0.10)]".into())
    );
    assert_eq!(c.pfc_watchdog, Fact::Known(true));
    let p = &c.ports[0];
    assert_eq!(p.name, "Eth1/1");
    assert_eq!(p.link_up, Fact::Known(true));
    assert_eq!(p.speed_mbps, Fact::Known(40_000));
    assert_eq!(
        p.mtu,
        Fact::Known(4200),
        "the no-drop class's MTU is smaller"
    );
    assert_eq!(
        p.pfc,
        Fact::Known([false, false, false, true, true, false, false, false])
    );
    assert!(
        matches!(&p.ecn, Fact::NotAvailable { why, .. } if why.starts_with("leaf1: ")),
        "{:?}",
        p.ecn
    );
    assert!(matches!(&p.pfc_xoff_bytes, Fact::NotAvailable { .. }));
    // Mode auto (no line): Oper Off in `show interface priority-flow-control`.
    let p = &c.ports[1];
    assert_eq!(p.pfc, Fact::Known([false; 8]));
    assert_eq!(
        p.ecn,
        Fact::Known(vec![EcnQueue {
            tc: 4,
            min_bytes: 1000,
            max_bytes: 2000,
            ecn: false
        }])
    );
    let p = &c.ports[2];
    assert_eq!(
        p.link_up,
        Fact::Failed("leaf1: `show interface` printed no Ethernet1/9".into())
    );
    assert!(
        matches!(&p.pfc, Fact::Failed(e) if e.contains("priority-flow-control` printed no Ethernet1/9"))
    );
    // Without the PFC read, mode auto is not available; failures carry over.
    let unsupported = ok(
        "show running-config ipqos",
        Reply::Unsupported("% Invalid command".into()),
    );
    let c = switch_config(
        "leaf2",
        &ports[..1],
        &ConfigReplies {
            version: None,
            interfaces: Some(&interfaces),
            ipqos: Some(&unsupported),
            pfc: None,
        },
    );
    assert_eq!(
        c.nos_version,
        Fact::Failed("leaf2: `show version` got no answer".into())
    );
    assert!(
        matches!(&c.pfc_watchdog, Fact::NotAvailable { tried, .. } if tried == &["show running-config ipqos"])
    );
    assert!(
        matches!(&c.ports[0].pfc, Fact::NotAvailable { why, .. } if why.contains("not supported"))
    );
    assert_eq!(c.ports[0].mtu, Fact::Known(9216));
    let c = switch_config(
        "leaf3",
        &ports[1..2],
        &ConfigReplies {
            ipqos: Some(&ipqos),
            ..Default::default()
        },
    );
    assert!(
        matches!(&c.ports[0].pfc, Fact::NotAvailable { why, .. } if why.contains("mode auto")),
        "{:?}",
        c.ports[0].pfc
    );
    // A body that is not what the parser reads: failed, with an excerpt.
    let text_version = ok(
        "show version",
        Reply::Text("Cisco Nexus Operating System".into()),
    );
    let c = switch_config(
        "leaf4",
        &[],
        &ConfigReplies {
            version: Some(&text_version),
            ..Default::default()
        },
    );
    assert!(
        matches!(&c.nos_version, Fact::Failed(e) if e.starts_with("leaf4: `show version`: answered text where structured output was asked")),
        "{:?}",
        c.nos_version
    );
}
