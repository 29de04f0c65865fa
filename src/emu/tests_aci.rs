//! The `aci` switches of the emulated pod (inventory/emulated-aci.yaml),
//! read and changed the way the harness does: queries built by the aci
//! platform, sent as one `rocegate-api` invocation, answers split by
//! `switch::answers` and read by the platform's own parsers.

use std::time::Duration;

use super::tests_switch_harness::{answers, batched as api, bw_pair, line};
use super::Emulator;
use crate::config::check::parse_inventory;
use crate::config::model::Inventory;
use crate::counters::{Canonical, Reading};
use crate::exec::apicall::{self, Call, CallResult};
use crate::exec::types::{Invocation, InvocationOutput, StepCommands};
use crate::switch::fault::{Action, Next, State};
use crate::switch::{self, Fact, Platform};

const POD: &str = include_str!("../../inventory/emulated-aci.yaml");

fn pod(extra: &str) -> Inventory {
    parse_inventory("emulated-aci.yaml", &format!("{POD}{extra}")).unwrap_or_else(|e| panic!("{e}"))
}

fn platform() -> &'static dyn Platform {
    switch::platform(crate::config::inventory::SwitchDriver::Aci)
}

fn step(invocations: Vec<Invocation>) -> StepCommands {
    StepCommands { invocations }
}

fn total(r: &[Reading], c: Canonical) -> Option<u64> {
    let v: Vec<u64> = r
        .iter()
        .filter(|x| x.canonical == c)
        .map(|x| x.value)
        .collect();
    (!v.is_empty()).then(|| v.iter().sum())
}

/// Every counter reading of `port`, parsed by the platform.
fn counters(o: &InvocationOutput, port: &str) -> Vec<Reading> {
    let p = platform();
    let qs = p.counter_queries(port);
    answers(&qs, o)
        .iter()
        .zip(&qs)
        .flat_map(|(a, q)| {
            assert_eq!(a.exit, Some(0), "{}: {}", q.display(), a.text);
            p.parse_counters("", q, a)
                .unwrap_or_else(|e| panic!("{}: {e}\n{}", q.display(), a.text))
        })
        .collect()
}

/// Raw REST calls to the APIC through switch `host`, as the transport
/// prints their results.
fn raw(host: &str, calls: &[(&str, &str, &str)], secs: f64) -> Invocation {
    let calls: Vec<Call> = calls
        .iter()
        .map(|(m, path, body)| Call {
            method: m.to_string(),
            path: path.to_string(),
            content_type: "application/json".into(),
            body: body.to_string(),
            what: format!("{m} {path}"),
        })
        .collect();
    line(host, apicall::argv(&calls), secs)
}

fn results(o: &InvocationOutput) -> Vec<CallResult> {
    apicall::results(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", o.stdout))
}

fn body(r: &CallResult) -> serde_json::Value {
    serde_json::from_str(&r.body).unwrap_or_else(|e| panic!("{e}: {}", r.body))
}

/// A rail pair through one leaf: the APIC's RMON octets of the server's
/// port are the model's, as the linux pod's `ethtool -S` prints them for
/// the same port, and they grow from zero; the per-class counters put the
/// RoCE traffic in the RoCE class.
#[test]
fn aci_counters_are_the_models_and_grow_with_traffic() {
    let linux = include_str!("../../inventory/emulated.yaml");
    let linux = parse_inventory("emulated.yaml", linux).unwrap();
    let out = Emulator::new(&linux, 3).run_batch(&[
        bw_pair("gpu002", "gpu001"),
        step(vec![line(
            "r0-leaf1",
            vec!["ethtool".into(), "-S".into(), "swp2".into()],
            9.0,
        )]),
    ]);
    let want = crate::switch::linux::counters::parse_ethtool_stats(&out[1][0].stdout).unwrap();
    let want_tx: u64 = want
        .iter()
        .filter(|x| x.canonical == Canonical::TxBytes && x.priority.is_none() && x.queue.is_none())
        .map(|x| x.value)
        .sum();
    assert!(want_tx > 300_000_000_000, "{want_tx}");

    let p = platform();
    let mut emu = Emulator::new(&pod(""), 3);
    let before = emu.run_batch(&[step(vec![api(
        "r0-leaf1",
        &p.counter_queries("eth1/2"),
        0.0,
    )])]);
    let zero = counters(&before[0][0], "eth1/2");
    assert_eq!(total(&zero, Canonical::TxBytes), Some(0));
    let out = emu.run_batch(&[
        bw_pair("gpu002", "gpu001"),
        step(vec![api("r0-leaf1", &p.counter_queries("eth1/2"), 9.0)]),
    ]);
    let got = counters(&out[1][0], "eth1/2");
    assert_eq!(total(&got, Canonical::TxBytes), Some(want_tx));
    assert!(total(&got, Canonical::RxBytes).is_some());
    assert_eq!(total(&got, Canonical::CrcErrors), Some(0));
    // Drop statistics and per-class drops are read (zero on a lossless
    // pair), the RoCE class's on its no-drop priority.
    assert_eq!(total(&got, Canonical::Drops), Some(0), "{got:?}");
    assert!(
        got.iter()
            .any(|r| r.vendor.contains("qosmIfClass.level2") && r.priority == Some(3)),
        "{got:?}"
    );
    // The per-class counters carry the port's traffic in the RoCE class:
    // all of it (a RoCE pair), read at the same instant as RMON.
    let o = emu.run_batch(&[step(vec![raw(
        "r0-leaf1",
        &[
            (
                "GET",
                "/api/mo/topology/pod-{pod}/node-{node}/sys/qosm/if-[eth1/2].json?query-target=children&target-subtree-class=qosmIfClass&query-target-filter=eq(qosmIfClass.id,%22level2%22)",
                "",
            ),
            (
                "GET",
                "/api/mo/topology/pod-{pod}/node-{node}/sys/phys-[eth1/2].json?query-target=children&target-subtree-class=rmonIfOut",
                "",
            ),
        ],
        0.0,
    )])]);
    let r = results(&o[0][0]);
    let (class, rmon) = (body(&r[0]), body(&r[1]));
    assert_eq!(class["totalCount"], "1", "{class}");
    let number = |v: &serde_json::Value| -> u64 { v.as_str().unwrap().parse().unwrap() };
    let tx = number(&class["imdata"][0]["qosmIfClass"]["attributes"]["TxAdmitBytesCount"]);
    let octets = number(&rmon["imdata"][0]["rmonIfOut"]["attributes"]["octets"]);
    assert!(tx >= want_tx, "{tx} < {want_tx}");
    assert_eq!(tx, octets);
}

fn prior(emu: &mut Emulator, host: &str, action: &Action, secs: f64) -> State {
    let d = platform().faults();
    let q = d.read_prior(action);
    let out = emu.run_batch(&[step(vec![api(host, std::slice::from_ref(&q), secs)])]);
    d.parse_prior(action, &answers(std::slice::from_ref(&q), &out[0][0])[0])
        .unwrap_or_else(|e| panic!("{e}\n{}", out[0][0].stdout))
}

/// A port taken out of service: the prior read after the POST shows it
/// blacklisted and down (the host's end too), its object is rocegate's
/// own; the DELETE brings it back, a second DELETE still succeeds; the
/// snapshot taken before it is listed with its virtual time.
#[test]
fn out_of_service_takes_the_port_down_and_delete_restores_it() {
    let inv = pod("");
    let mut emu = Emulator::new(&inv, 1);
    let d = platform().faults();
    let action = Action::PortsDown(vec!["eth1/1".into()]);
    let before = prior(&mut emu, "r0-leaf1", &action, 0.0);
    assert!(
        before.ports[0].admin_up && before.ports[0].oper_up,
        "{before:?}"
    );
    d.check_prior(&action, &before).unwrap();
    let change = d.change(&action, &before, Some(("f1", Duration::from_secs(30))));
    let out = emu.run_batch(&[step(
        change
            .apply
            .iter()
            .map(|q| api("r0-leaf1", std::slice::from_ref(q), 1.0))
            .collect(),
    )]);
    for (q, o) in change.apply.iter().zip(&out[0]) {
        let a = answers(std::slice::from_ref(q), o);
        assert_eq!(a[0].exit, Some(0), "{}: {}", q.display(), a[0].text);
    }
    let during = prior(&mut emu, "r0-leaf1", &action, 2.0);
    assert!(
        !during.ports[0].admin_up && !during.ports[0].oper_up,
        "{during:?}"
    );
    assert!(during.pending.is_empty(), "rocegate's own: {during:?}");
    // The out-of-service port refuses another fault.
    assert!(d.check_prior(&action, &during).is_err());
    // Both ends lost link, like a shutdown.
    let nic = inv.nodes[inv.node_by_name["gpu001"]].nics[0];
    assert!(!emu.world.nic_cfg[nic].link_up);
    // The other leaf's port is untouched.
    let other = prior(&mut emu, "r0-leaf2", &action, 2.5);
    assert!(other.ports[0].admin_up && other.ports[0].oper_up);

    let undo = emu.run_batch(&[step(vec![
        api("r0-leaf1", std::slice::from_ref(&change.undo), 3.0),
        api("r0-leaf1", std::slice::from_ref(&change.undo), 3.5),
    ])]);
    for o in &undo[0] {
        let a = answers(std::slice::from_ref(&change.undo), o);
        assert_eq!(
            d.undo_next(&["eth1/1".into()], &change.undo, &a[0]),
            Next::Done,
            "{}",
            a[0].text
        );
    }
    let after = prior(&mut emu, "r0-leaf1", &action, 4.0);
    assert!(
        after.ports[0].admin_up && after.ports[0].oper_up,
        "{after:?}"
    );
    assert!(emu.world.nic_cfg[nic].link_up);

    let o = emu.run_batch(&[step(vec![raw(
        "r0-leaf1",
        &[(
            "GET",
            "/api/mo/uni/backupst/snapshots-[uni/fabric/configexp-rocegate].json?rsp-subtree=children",
            "",
        )],
        5.0,
    )])]);
    let v = body(&results(&o[0][0])[0]);
    let snaps = v["imdata"][0]["configSnapshotCont"]["children"]
        .as_array()
        .unwrap_or_else(|| panic!("{v}"));
    assert_eq!(snaps.len(), 1, "{v}");
    let name = snaps[0]["configSnapshot"]["attributes"]["name"]
        .as_str()
        .unwrap();
    // Virtual time 1 s after 2026-01-01T00:00:00Z, plus this batch's start.
    assert!(name.starts_with("run-2026-01-01T00-00-"), "{name}");
}

/// The audit's reads: the version, speed and MTU of every port, the DSCP
/// classification into the RoCE class with PFC on its priority, and a
/// planted PFC-off switch whose ports are bound to the off policy.
#[test]
fn config_reads_pfc_per_port_and_a_planted_pfc_off() {
    let inv = pod("emulation:\n  defects:\n  - pfc_off: {switch: r0-leaf1}\n");
    let p = platform();
    let ports: Vec<String> = ["eth1/1", "eth1/9"].map(String::from).to_vec();
    let cfg = p.config_queries(&ports);
    let mut emu = Emulator::new(&inv, 1);
    let out = emu.run_batch(&[step(vec![
        api("r0-leaf1", &cfg, 0.0),
        api("r0-leaf2", &cfg, 0.0),
    ])]);
    let off = p.parse_config("r0-leaf1", &ports, &answers(&cfg, &out[0][0]));
    let on = p.parse_config("r0-leaf2", &ports, &answers(&cfg, &out[0][1]));
    assert_eq!(on.nos_version, Fact::Known("n9000-16.0(3e)".into()));
    let mut want = [false; 8];
    want[3] = true;
    for port in &on.ports {
        assert_eq!(port.pfc, Fact::Known(want), "{port:?}");
        assert_eq!(port.speed_mbps, Fact::Known(400_000));
        assert_eq!(port.mtu, Fact::Known(9216));
    }
    for port in &off.ports {
        assert_eq!(port.pfc, Fact::Known([false; 8]), "{port:?}");
    }
    let Fact::Known(dscp) = &on.dscp_prio else {
        panic!("{:?}", on.dscp_prio)
    };
    assert_eq!(dscp[&26].class, "level2");
    assert_eq!(dscp[&26].priority, Some(3));
    assert_eq!(dscp[&48].priority, Some(6));
}

/// LLDP and the probe's `topSystem`; a class the APIC does not have is
/// refused with 400 and its error, a DN it does not have is an empty
/// answer.
#[test]
fn lldp_probe_and_unknowns() {
    let inv = pod("");
    let p = platform();
    let mut emu = Emulator::new(&inv, 1);
    let probe = p.probe_queries("rocegate");
    let out = emu.run_batch(&[step(vec![
        api("r0-leaf1", &[p.lldp_query()], 0.0),
        api("spine1", &probe, 0.0),
        raw(
            "r0-leaf1",
            &[
                ("GET", "/api/class/fooBar.json", ""),
                ("GET", "/api/mo/topology/pod-1/node-999/sys.json", ""),
                ("GET", "/api/mo/uni/tn-nothere.json", ""),
                ("PUT", "/api/mo/uni.json", ""),
            ],
            0.0,
        ),
    ])]);
    let lldp = p
        .parse_lldp(&answers(&[p.lldp_query()], &out[0][0])[0])
        .unwrap();
    assert_eq!(lldp.len(), 16, "{lldp:?}");
    let n1 = lldp.iter().find(|n| n.interface == "eth1/1").unwrap();
    assert_eq!(n1.chassis_name.as_deref(), Some("gpu001"));
    assert_eq!(n1.port_descr.as_deref(), Some("rdma0"));
    let n9 = lldp.iter().find(|n| n.interface == "eth1/9").unwrap();
    assert_eq!(n9.chassis_name.as_deref(), Some("spine1"));
    assert_eq!(n9.port_id, "eth1/1");
    let said = p.read_probe(&answers(&probe, &out[0][1])).unwrap();
    assert!(said.contains("spine spine1 n9000-16.0(3e)"), "{said}");
    let r = results(&out[0][2]);
    assert_eq!(r[0].status, 400);
    assert_eq!(
        body(&r[0])["imdata"][0]["error"]["attributes"]["text"],
        "Request failed, unresolved class for fooBar"
    );
    assert_eq!(
        (r[1].status, body(&r[1])["totalCount"].clone()),
        (200, "0".into())
    );
    assert_eq!(
        (r[2].status, body(&r[2])["totalCount"].clone()),
        (200, "0".into())
    );
    assert_eq!(r[3].status, 400);
}

/// Garbage in a write is refused with an APIC error, never a panic, and
/// changes nothing.
#[test]
fn bad_writes_are_refused() {
    let inv = pod("");
    let mut emu = Emulator::new(&inv, 1);
    let dn =
        "/api/mo/uni/fabric/outofsvc/rsoosPath-[topology/pod-1/paths-101/pathep-[eth1/1]].json";
    let other = r#"{"fabricRsOosPath":{"attributes":{"tDn":"topology/pod-1/paths-101/pathep-[eth1/2]","lc":"blacklist"}}}"#;
    let nowhere =
        "/api/mo/uni/fabric/outofsvc/rsoosPath-[topology/pod-1/paths-999/pathep-[eth1/1]].json";
    let out = emu.run_batch(&[step(vec![raw(
        "r0-leaf1",
        &[
            ("POST", dn, "not json"),
            ("POST", dn, other),
            ("POST", nowhere, "{\"fabricRsOosPath\":{\"attributes\":{}}}"),
            ("POST", "/api/mo/uni/infra/qosinst-default.json", "{}"),
        ],
        0.0,
    )])]);
    let r = results(&out[0][0]);
    assert_eq!(r.len(), 4);
    for x in &r {
        assert_eq!(x.status, 400, "{x:?}");
        assert!(body(x)["imdata"][0]["error"]["attributes"]["code"].is_string());
    }
    assert!(emu.world.api.aci.oos.is_empty());
    assert!(emu.world.port_cfg.iter().all(|c| c.admin_up));
}

/// Requests nobody should send: answered with an APIC error or an empty
/// answer, never a panic, in the order sent.
#[test]
fn malformed_requests_are_answered() {
    let inv = pod("");
    let mut emu = Emulator::new(&inv, 1);
    let paths = [
        "%",
        "%e2%82",
        "/api/mo/%zz.json",
        "/api/mo/é%2.json",
        "/api/mo/.json",
        "/api/class/.json",
        "/api/mo/topology/pod-x/node-y/sys.json",
        "/api/mo/topology/pod-1/node-101/sys/phys-[eth1/1.json",
        "/api/mo/topology/pod-1/node-101/sys/phys-[eth9/99].json",
        "/api/mo/uni.json?query-target=sideways",
        "/api/mo/uni.json?rsp-subtree=deep",
        "/api/class/l1PhysIf.json?query-target-filter=wcard(",
        "/api/class/l1PhysIf.json?query-target-filter=and(eq(l1PhysIf.id,%22eth1/1%22),",
        "/api/class/l1PhysIf.json?query-target-filter=eq(l1PhysIf.id,eth1/1)",
        "/api/mo/uni/infra/qosinst-default.xml",
    ];
    let calls: Vec<(&str, &str, &str)> = paths.iter().map(|p| ("GET", *p, "")).collect();
    let out = emu.run_batch(&[step(vec![raw("r0-leaf1", &calls, 0.0)])]);
    let r = results(&out[0][0]);
    assert_eq!(r.len(), paths.len());
    for (p, x) in paths.iter().zip(&r) {
        let v = body(x);
        assert!(
            (x.status == 200 && v["imdata"].is_array())
                || (x.status == 400 && v["imdata"][0]["error"]["attributes"]["text"].is_string()),
            "{p}: {x:?}"
        );
    }
    // A filter combining conditions: eth1/1 of the nodes whose DN holds
    // `node-10` (101..109).
    let out = emu.run_batch(&[step(vec![raw(
        "r0-leaf1",
        &[(
            "GET",
            "/api/class/l1PhysIf.json?query-target-filter=and(eq(l1PhysIf.id,%22eth1/1%22),wcard(l1PhysIf.dn,%22node-10%22))",
            "",
        )],
        0.0,
    )])]);
    let v = body(&results(&out[0][0])[0]);
    assert_eq!(v["totalCount"], "9", "{v}");
}
