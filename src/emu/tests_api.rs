//! The API switches of the emulated pod, read and changed the way the
//! harness does: queries built by the `eos` and `nxos` platforms, sent as
//! one `rocegate-api` invocation, answers split by `switch::answers` and
//! read by the platform's own parsers.

use std::time::Duration;

use super::tests_switch_harness::{
    answers, batched as api, bw_pair, counters, line as inv_at, total as sum,
};
use super::Emulator;
use crate::config::check::parse_inventory;
use crate::config::model::Inventory;
use crate::counters::Canonical;
use crate::exec::types::{InvocationOutput, StepCommands};
use crate::switch::fault::{Action, Next, State};
use crate::switch::{self, Platform, Query};

/// The embedded pod with every switch on `driver` (ports renamed as it
/// names them), or with only the leaves on it.
fn pod(driver: &str, leaves_only: bool) -> Inventory {
    let text = include_str!("../../inventory/emulated.yaml");
    let port = if driver == "eos" {
        "Ethernet"
    } else {
        "Ethernet1/"
    };
    let mut out = Vec::new();
    let mut last_name = String::new();
    for l in text.lines() {
        if let Some(n) = l.strip_prefix("- name: ") {
            last_name = n.to_string();
        }
        let api_driver = driver != "linux";
        if api_driver && l.trim() == "driver: linux" && (!leaves_only || last_name.contains("leaf"))
        {
            out.push(format!("  driver: {driver}"));
            out.push("  credentials: {env: API_PASSWORD}".into());
            out.push("  api: {user: rocegate}".into());
            continue;
        }
        let mut l = l.to_string();
        for s in [
            "leaf1:", "leaf2:", "spine1:", "spine2:", "spine3:", "spine4:",
        ] {
            if !api_driver || (leaves_only && s.starts_with("spine")) {
                continue;
            }
            l = l.replace(&format!("{s}swp["), &format!("{s}{port}["));
        }
        out.push(l);
    }
    parse_inventory("pod.yaml", &out.join("\n")).unwrap_or_else(|e| panic!("{e}"))
}

/// A rail pair through one leaf: the leaf's port to the server counts what
/// the linux model's `ethtool -S` counts on the same port, through the
/// eos and the nxos parsers.
#[test]
fn api_counters_are_the_models_through_the_platforms_parsers() {
    let mut linux = Emulator::new(&pod("linux", false), 3);
    let out = linux.run_batch(&[
        bw_pair("gpu002", "gpu001"),
        StepCommands {
            invocations: vec![inv_at(
                "r0-leaf1",
                vec!["ethtool".into(), "-S".into(), "swp2".into()],
                9.0,
            )],
        },
    ]);
    let want = crate::switch::linux::counters::parse_ethtool_stats(&out[1][0].stdout).unwrap();
    let tx = sum(&want, Canonical::TxBytes);
    assert!(tx > 300_000_000_000, "{tx}");
    for (driver, port) in [("eos", "Ethernet2"), ("nxos", "Ethernet1/2")] {
        let inv = pod(driver, false);
        let p = switch::platform(inv.switches[0].driver);
        let mut emu = Emulator::new(&inv, 3);
        let out = emu.run_batch(&[
            bw_pair("gpu002", "gpu001"),
            StepCommands {
                invocations: vec![api("r0-leaf1", &p.counter_queries(port), 9.0)],
            },
        ]);
        let got = counters(p, &out[1][0], port);
        assert_eq!(sum(&got[0], Canonical::TxBytes), tx, "{driver}");
        assert_eq!(
            sum(&got[0], Canonical::TxPackets),
            sum(&want, Canonical::TxPackets),
            "{driver}"
        );
        assert_eq!(sum(&got[1], Canonical::CrcErrors), 0, "{driver}");
    }
}

/// The eos platform's prior-state read, its configuration reads and LLDP
/// parse; a leaf has VOQs, a spine (7060X) refuses `queue drops` as EOS does.
#[test]
fn eos_state_config_and_lldp_parse() {
    let inv = pod("eos", false);
    let p = switch::platform(inv.switches[0].driver);
    let d = p.faults();
    let action = Action::PortsDown(vec!["Ethernet1".into(), "Ethernet9".into()]);
    let ports = vec!["Ethernet1".to_string(), "Ethernet9".to_string()];
    let qs = vec![d.read_prior(&action)];
    let cfg = p.config_queries(&ports);
    let mut emu = Emulator::new(&inv, 1);
    let out = emu.run_batch(&[StepCommands {
        invocations: vec![
            api("r0-leaf1", &qs, 0.0),
            api("r0-leaf1", &cfg, 0.0),
            api("r0-leaf1", &[p.lldp_query()], 0.0),
            api("spine1", &p.counter_queries("Ethernet1"), 0.0),
        ],
    }]);
    let prior = d
        .parse_prior(&action, &answers(&qs, &out[0][0])[0])
        .unwrap();
    assert!(prior.ports.iter().all(|x| x.admin_up && x.oper_up));
    assert_eq!(prior.asn.as_deref(), Some("65101"));
    let bgp = prior.bgp.clone().unwrap();
    assert_eq!(bgp.len(), 8, "{bgp:?}");
    assert!(bgp.iter().all(|b| b.1));
    d.check_prior(&action, &prior).unwrap();
    let c = p.parse_config("r0-leaf1", &ports, &answers(&cfg, &out[0][1]));
    assert!(format!("{:?}", c.nos_version).contains("4.32.2F"), "{c:?}");
    assert!(format!("{:?}", c.ports[0].speed_mbps).contains("400000"));
    let lldp = p
        .parse_lldp(&answers(&[p.lldp_query()], &out[0][2])[0])
        .unwrap();
    assert_eq!(lldp.len(), 16);
    let n1 = lldp.iter().find(|n| n.interface == "Ethernet1").unwrap();
    assert_eq!(n1.chassis_name.as_deref(), Some("gpu001"));
    assert_eq!(n1.port_descr.as_deref(), Some("rdma0"));
    let n9 = lldp.iter().find(|n| n.interface == "Ethernet9").unwrap();
    assert_eq!(n9.chassis_name.as_deref(), Some("spine1"));
    assert_eq!(n9.port_id, "Ethernet1");
    let spine = switch::answers(&p.counter_queries("Ethernet1"), &out[0][3]);
    assert_eq!(spine[5].exit, Some(crate::switch::call::NOT_AVAILABLE));
    assert!(spine[5].text.contains("Invalid input"), "{}", spine[5].text);
    assert_eq!(spine[0].exit, Some(0));
}

fn status_of(p: &dyn Platform, o: &InvocationOutput, port: &str) -> (bool, bool) {
    let action = Action::PortsDown(vec![port.to_string()]);
    let q = p.faults().read_prior(&action);
    let st = p
        .faults()
        .parse_prior(&action, &answers(&[q], o)[0])
        .unwrap();
    (st.ports[0].admin_up, st.ports[0].oper_up)
}

/// The plain change `fault::emulated_step` sends takes the port down in the
/// model (the host's link with it) and the undo brings it back; the link
/// counts one loss.
#[test]
fn plain_ports_down_and_back_on_eos_and_nxos() {
    for (driver, port) in [("eos", "Ethernet1"), ("nxos", "Ethernet1/1")] {
        let inv = pod(driver, true);
        let p = switch::platform(inv.switches[0].driver);
        let (apply, undo) = p.faults().plain(
            &Action::PortsDown(vec![port.to_string()]),
            &Default::default(),
        );
        let prior = p.faults().read_prior(&Action::PortsDown(vec![port.into()]));
        let cq = p.counter_queries(port);
        let mut emu = Emulator::new(&inv, 1);
        let line = |q: &Query, t| inv_at("r0-leaf1", q.command_line(), t);
        let out = emu.run_batch(&[StepCommands {
            invocations: vec![
                line(&apply[0], 1.0),
                api("r0-leaf1", std::slice::from_ref(&prior), 2.0),
                inv_at("gpu001", vec!["ethtool".into(), "rdma0".into()], 2.0),
                line(&undo[0], 4.0),
                api("r0-leaf1", std::slice::from_ref(&prior), 5.0),
                api("r0-leaf1", &cq, 5.0),
            ],
        }]);
        let applied = switch::single_answer(&apply[0], &out[0][0]);
        assert_eq!(applied.exit, Some(0), "{driver}: {}", applied.text);
        assert_eq!(status_of(p, &out[0][1], port), (false, false), "{driver}");
        assert!(out[0][2].stdout.contains("Link detected: no"), "{driver}");
        assert_eq!(status_of(p, &out[0][4], port), (true, true), "{driver}");
        let c = counters(p, &out[0][5], port);
        if driver == "eos" {
            assert_eq!(sum(&c[0], Canonical::LinkDown), 1);
        }
    }
}

/// `router bgp 0` (a routing stop without the AS its prior read gives) is
/// refused as the switch refuses it; with the AS the prior read found, BGP
/// shuts and comes back after `no shutdown`.
#[test]
fn eos_routing_stop_needs_the_as_and_comes_back() {
    let inv = pod("eos", true);
    let p = switch::platform(inv.switches[0].driver);
    let d = p.faults();
    let no_as = State {
        asn: Some("0".into()),
        ..Default::default()
    };
    let (plain, _) = d.plain(&Action::RoutingStop, &no_as);
    let prior = State {
        asn: Some("65101".into()),
        ..Default::default()
    };
    let c = d.change(&Action::RoutingStop, &prior, None);
    let read = d.read_prior(&Action::RoutingStop);
    let mut emu = Emulator::new(&inv, 1);
    let out = emu.run_batch(&[StepCommands {
        invocations: vec![
            api("r0-leaf1", &plain, 0.5),
            api("r0-leaf1", &c.apply, 1.0),
            api("r0-leaf1", std::slice::from_ref(&read), 2.0),
            api("r0-leaf1", std::slice::from_ref(&c.undo), 3.0),
            api("r0-leaf1", std::slice::from_ref(&read), 3.5),
            api("r0-leaf1", std::slice::from_ref(&read), 9.0),
        ],
    }]);
    let refused = switch::single_answer(&plain[0], &out[0][0]);
    assert_ne!(refused.exit, Some(0));
    assert!(refused.text.contains("router bgp 0"), "{}", refused.text);
    let peers = |o: &InvocationOutput| {
        d.parse_prior(
            &Action::RoutingStop,
            &answers(std::slice::from_ref(&read), o)[0],
        )
        .unwrap()
        .bgp
        .unwrap()
    };
    assert!(peers(&out[0][2]).iter().all(|p| !p.1));
    assert!(peers(&out[0][4]).iter().all(|p| !p.1));
    assert!(peers(&out[0][5]).iter().all(|p| p.1));
}

/// A session committed with a timer: the switch rolls it back by itself
/// when nobody aborts; the late abort finds no session and the platform
/// then looks at the ports. An abort in time restores at once.
#[test]
fn eos_commit_timer_rolls_back_and_abort_restores() {
    let inv = pod("eos", true);
    let p = switch::platform(inv.switches[0].driver);
    let d = p.faults();
    let ports = vec!["Ethernet1".to_string()];
    let action = Action::PortsDown(ports.clone());
    let read = d.read_prior(&action);
    let first = d.change(
        &action,
        &State::default(),
        Some(("f1", Duration::from_secs(10))),
    );
    let second = d.change(
        &action,
        &State::default(),
        Some(("f2", Duration::from_secs(10))),
    );
    let mut emu = Emulator::new(&inv, 1);
    let out = emu.run_batch(&[StepCommands {
        invocations: vec![
            api("r0-leaf1", &first.apply, 1.0),
            api("r0-leaf1", std::slice::from_ref(&read), 2.0),
            api("r0-leaf1", std::slice::from_ref(&read), 12.0),
            api("r0-leaf1", std::slice::from_ref(&first.undo), 13.0),
            api("r0-leaf1", &second.apply, 20.0),
            api("r0-leaf1", std::slice::from_ref(&second.undo), 22.0),
            api("r0-leaf1", std::slice::from_ref(&read), 23.0),
            api("r0-leaf1", std::slice::from_ref(&read), 40.0),
        ],
    }]);
    let applied = switch::single_answer(&first.apply[0], &out[0][0]);
    assert_eq!(applied.exit, Some(0), "{}", applied.text);
    let st = d
        .parse_prior(
            &action,
            &answers(std::slice::from_ref(&read), &out[0][1])[0],
        )
        .unwrap();
    assert!(!st.ports[0].admin_up);
    assert_eq!(st.pending, vec![crate::switch::eos::session_name("f1")]);
    let st = d
        .parse_prior(
            &action,
            &answers(std::slice::from_ref(&read), &out[0][2])[0],
        )
        .unwrap();
    assert!(st.ports[0].admin_up && st.ports[0].oper_up, "{st:?}");
    assert!(st.pending.is_empty());
    let late = switch::single_answer(&first.undo, &out[0][3]);
    assert!(late.exit.is_some_and(|c| c != 0), "{late:?}");
    assert!(matches!(
        d.undo_next(&ports, &first.undo, &late),
        Next::Then(_)
    ));
    let aborted = switch::single_answer(&second.undo, &out[0][5]);
    assert_eq!(aborted.exit, Some(0), "{}", aborted.text);
    assert_eq!(d.undo_next(&ports, &second.undo, &aborted), Next::Done);
    for o in [&out[0][6], &out[0][7]] {
        let st = d
            .parse_prior(&action, &answers(std::slice::from_ref(&read), o)[0])
            .unwrap();
        assert!(st.ports[0].admin_up && st.pending.is_empty(), "{st:?}");
    }
}

/// NX-OS: the dead-man armed through `run bash` prints its pid and restores
/// the port when it fires; an undo followed by its `pkill` leaves nothing
/// to fire. The audit's reads parse into the switch's configuration.
#[test]
fn nxos_deadman_timer_and_audit_reads() {
    let inv = pod("nxos", true);
    let p = switch::platform(inv.switches[0].driver);
    let d = p.faults();
    let ports = vec!["Ethernet1/1".to_string()];
    let action = Action::PortsDown(ports.clone());
    let read = d.read_prior(&action);
    let c = d.change(
        &action,
        &State::default(),
        Some(("f1", Duration::from_secs(10))),
    );
    let cfg = p.config_queries(&ports);
    let mut emu = Emulator::new(&inv, 1);
    let out = emu.run_batch(&[StepCommands {
        invocations: vec![
            api("r0-leaf1", &c.apply[..1], 1.0),
            api("r0-leaf1", &c.apply[1..], 1.5),
            api("r0-leaf1", std::slice::from_ref(&read), 2.0),
            api("r0-leaf1", std::slice::from_ref(&read), 12.0),
            api("r0-leaf1", &cfg, 13.0),
            api("r0-leaf1", &[p.lldp_query()], 13.0),
        ],
    }]);
    let armed = switch::single_answer(&c.apply[0], &out[0][0]);
    d.applied(&c.apply[0], &armed).unwrap();
    let down = switch::single_answer(&c.apply[1], &out[0][1]);
    d.applied(&c.apply[1], &down).unwrap();
    assert_eq!(status_of(p, &out[0][2], "Ethernet1/1"), (false, false));
    assert_eq!(status_of(p, &out[0][3], "Ethernet1/1"), (true, true));
    let st = d
        .parse_prior(
            &action,
            &answers(std::slice::from_ref(&read), &out[0][3])[0],
        )
        .unwrap();
    assert_eq!(st.asn.as_deref(), Some("65101"));
    assert_eq!(st.bgp.as_ref().map(Vec::len), Some(8));
    let conf = p.parse_config("r0-leaf1", &ports, &answers(&cfg, &out[0][4]));
    let text = format!("{conf:?}");
    assert!(text.contains("10.3(4a)"), "{text}");
    assert!(!text.contains("Failed"), "{text}");
    let lldp = p
        .parse_lldp(&answers(&[p.lldp_query()], &out[0][5])[0])
        .unwrap();
    assert_eq!(lldp.len(), 16);

    // Undo in time: restore, then the pkill the platform asks for.
    let mut emu = Emulator::new(&inv, 1);
    let out = emu.run_batch(&[StepCommands {
        invocations: vec![
            api("r0-leaf1", &c.apply[..1], 1.0),
            api("r0-leaf1", &c.apply[1..], 1.5),
            api("r0-leaf1", std::slice::from_ref(&c.undo), 3.0),
        ],
    }]);
    let undone = switch::single_answer(&c.undo, &out[0][2]);
    let Next::Then(kill) = d.undo_next(&ports, &c.undo, &undone) else {
        panic!("{undone:?}")
    };
    let out = emu.run_batch(&[StepCommands {
        invocations: vec![
            api("r0-leaf1", std::slice::from_ref(&kill), 0.0),
            api("r0-leaf1", std::slice::from_ref(&c.apply[1]), 1.0),
            api("r0-leaf1", std::slice::from_ref(&read), 20.0),
        ],
    }]);
    let killed = switch::single_answer(&kill, &out[0][0]);
    assert_eq!(d.undo_next(&ports, &kill, &killed), Next::Done);
    // Taken down again by hand after the kill: no timer brings it back.
    assert_eq!(status_of(p, &out[0][2], "Ethernet1/1"), (false, false));
    assert_eq!(emu.world.api.timers.iter().filter(|t| t.armed).count(), 0);
}
