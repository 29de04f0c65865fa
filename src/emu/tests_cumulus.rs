//! The `cumulus` leaves of the emulated pod, read and changed the way the
//! harness does: queries built by the cumulus platform, composed into one
//! `sh -c` per switch, answers split by `switch::answers` and read by the
//! platform's own parsers.

use super::tests_switch_harness::{answers, batched as composed, bw_pair, counters, line, total};
use super::Emulator;
use crate::config::check::parse_inventory;
use crate::config::model::Inventory;
use crate::counters::Canonical;
use crate::exec::types::StepCommands;
use crate::switch::fault::Action;
use crate::switch::{self, Fact, Query};

fn pod() -> Inventory {
    let text = include_str!("../../inventory/emulated-cumulus.yaml");
    parse_inventory("emulated-cumulus.yaml", text).unwrap_or_else(|e| panic!("{e}"))
}

/// A rail pair through one leaf, read once it has ended: the link stats
/// count what the model sent to the server's port, the RoCE traffic class
/// the same bytes, the ECN marks the port's.
#[test]
fn cumulus_counters_are_the_models_through_the_platforms_parsers() {
    let inv = pod();
    let p = switch::platform(inv.switches[0].driver);
    assert_eq!(p.name(), "cumulus");
    let mut emu = Emulator::new(&inv, 3);
    let qs = p.counter_queries("swp2");
    let out = emu.run_batch(&[
        bw_pair("gpu002", "gpu001"),
        StepCommands {
            invocations: vec![composed("r0-leaf1", &qs, 30.0)],
        },
    ]);
    let got = counters(p, &out[1][0], "swp2");
    let port = &emu.world.port[emu.fabric.port(0, "swp2").unwrap()];
    let bytes = total(&got[0], Canonical::TxBytes);
    assert!(bytes > 300_000_000_000, "{bytes}");
    assert_eq!(bytes, port.tx_bytes.floor() as u64);
    assert_eq!(total(&got[0], Canonical::LinkDown), 0);
    let tc3: u64 = got[1]
        .iter()
        .filter(|r| r.canonical == Canonical::TxBytes && r.queue == Some(3))
        .map(|r| r.value)
        .sum();
    assert_eq!(tc3, port.prio[3].tx_bytes.floor() as u64);
    let ecn: f64 = port.tc_ecn_marked.iter().sum();
    assert_eq!(total(&got[1], Canonical::EcnMarked), ecn.floor() as u64);
    // The RoCE counters: the same marks, the RoCE priority's pauses and
    // its class's drops; no ingress discards in the model, none printed.
    assert_eq!(total(&got[2], Canonical::EcnMarked), ecn.floor() as u64);
    assert_eq!(
        total(&got[2], Canonical::PfcPauseTx),
        port.prio[3].tx_pause.floor() as u64
    );
    assert_eq!(
        total(&got[2], Canonical::Drops),
        port.tc_drops[3].floor() as u64
    );
    assert!(!got[2].iter().any(|r| r.canonical == Canonical::Discards));
    // A port the switch does not have is NVUE's error, never zeros.
    let bad = p.counter_queries("swp99");
    let out = emu.run_batch(&[StepCommands {
        invocations: vec![composed("r0-leaf1", &bad, 31.0)],
    }]);
    let a = answers(&bad, &out[0][0]);
    assert_eq!(a[0].exit, Some(1));
    assert!(p.parse_counters("", &bad[0], &a[0]).is_err());
    assert!(p.parse_counters("", &bad[1], &a[1]).is_err());
}

/// The audit's reads (the link per port, the release) and LLDP through
/// the platform's parsers; a port taken down by the plain fault (`ip link
/// set`) reads down and counts one loss of link once it is back.
#[test]
fn cumulus_config_lldp_and_a_plain_fault() {
    let inv = pod();
    let p = switch::platform(inv.switches[0].driver);
    let ports = vec!["swp1".to_string(), "swp9".to_string()];
    let cfg = p.config_queries(&ports);
    let (apply, undo) = p
        .faults()
        .plain(&Action::PortsDown(vec!["swp1".into()]), &Default::default());
    let cq = p.counter_queries("swp1");
    let mut emu = Emulator::new(&inv, 1);
    let at = |q: &Query, t| line("r0-leaf1", q.command_line(), t);
    let out = emu.run_batch(&[StepCommands {
        invocations: vec![
            composed("r0-leaf1", &cfg, 0.0),
            composed("r0-leaf1", &[p.lldp_query()], 0.0),
            at(&apply[0], 1.0),
            composed("r0-leaf1", &cfg, 2.0),
            at(&undo[0], 4.0),
            composed("r0-leaf1", &cq, 5.0),
        ],
    }]);
    let c = p.parse_config("r0-leaf1", &ports, &answers(&cfg, &out[0][0]));
    assert_eq!(c.nos_version, Fact::Known("Cumulus Linux 5.9.0".into()));
    let cfg1 = &emu.world.port_cfg[emu.fabric.port(0, "swp1").unwrap()];
    assert_eq!(c.ports[0].link_up, Fact::Known(true));
    assert_eq!(c.ports[0].speed_mbps, Fact::Known(400_000));
    assert_eq!(c.ports[0].mtu, Fact::Known(cfg1.mtu));
    assert_eq!(c.ports[1].link_up, Fact::Known(true));
    // PFC and ECN from the port's RoCE status, the DSCP map from qos roce.
    let mut pfc = [false; 8];
    pfc[3] = true;
    assert_eq!(c.ports[0].pfc, Fact::Known(pfc));
    assert_eq!(cfg1.pfc, pfc);
    let (min, max, _) = cfg1.ecn[3].unwrap();
    let ecn = c.ports[0].ecn.known().unwrap();
    assert!(ecn
        .iter()
        .any(|q| q.tc == 3 && q.min_bytes == min && q.max_bytes == max && q.ecn));
    assert!(
        matches!(&c.ports[0].pfc_xoff_bytes, Fact::NotAvailable { why, .. } if why.contains("r0-leaf1"))
    );
    let dscp = c.dscp_prio.known().unwrap();
    assert_eq!(dscp[&26].priority, Some(3));
    assert_eq!(dscp[&48].priority, Some(6));
    assert_eq!(dscp.len(), 64);
    let lldp = p
        .parse_lldp(&answers(&[p.lldp_query()], &out[0][1])[0])
        .unwrap();
    assert_eq!(lldp.len(), 16);
    let n9 = lldp.iter().find(|n| n.interface == "swp9").unwrap();
    assert_eq!(n9.chassis_name.as_deref(), Some("spine1"));
    let applied = switch::single_answer(&apply[0], &out[0][2]);
    assert_eq!(applied.exit, Some(0), "{}", applied.text);
    let down = p.parse_config("r0-leaf1", &ports, &answers(&cfg, &out[0][3]));
    assert_eq!(down.ports[0].link_up, Fact::Known(false));
    let got = counters(p, &out[0][5], "swp1");
    assert_eq!(total(&got[0], Canonical::LinkDown), 1);
}

/// A defect planted in the model (PFC off on swp9, ECN off on its RoCE
/// class) is what NVUE's RoCE status of swp9 says; swp1 is untouched.
#[test]
fn cumulus_roce_status_shows_a_planted_defect() {
    let inv = pod();
    let p = switch::platform(inv.switches[0].driver);
    let ports = vec!["swp1".to_string(), "swp9".to_string()];
    let cfg = p.config_queries(&ports);
    let mut emu = Emulator::new(&inv, 1);
    let i9 = emu.fabric.port(0, "swp9").unwrap();
    emu.world.port_cfg[i9].pfc = [false; 8];
    emu.world.port_cfg[i9].ecn = [None; 8];
    let out = emu.run_batch(&[StepCommands {
        invocations: vec![composed("r0-leaf1", &cfg, 0.0)],
    }]);
    let c = p.parse_config("r0-leaf1", &ports, &answers(&cfg, &out[0][0]));
    assert_eq!(c.ports[1].pfc, Fact::Known([false; 8]));
    assert_eq!(c.ports[1].ecn, Fact::Known(Vec::new()));
    assert!(matches!(c.ports[0].pfc, Fact::Known(p) if p[3]));
}

/// The fault driver's prior read of a flap is answered from the model:
/// swp9 up, the account may sudo, NVUE's flap-protection defaults, no
/// protodown; after the plain apply (`sudo -n ip link set`) it reads down
/// and a second flap is refused as already down.
#[test]
fn cumulus_prior_state_read_is_answered() {
    let inv = pod();
    let p = switch::platform(inv.switches[0].driver);
    let d = p.faults();
    let flap = Action::PortsDown(vec!["swp9".into()]);
    let (down, up) = d.plain(&flap, &Default::default());
    assert_eq!(
        down[0].command_line()[..2],
        ["sudo".to_string(), "-n".to_string()]
    );
    let at = |q: &Query, t| line("r0-leaf1", q.command_line(), t);
    let mut emu = Emulator::new(&inv, 1);
    let out = emu.run_batch(&[StepCommands {
        invocations: vec![
            at(&d.read_prior(&flap), 0.0),
            at(&down[0], 1.0),
            at(&d.read_prior(&flap), 2.0),
            at(&up[0], 3.0),
            at(&d.read_prior(&Action::PortsDown(vec!["swp99".into()])), 4.0),
        ],
    }]);
    let read = |i: usize, a: &Action| {
        let ans = switch::single_answer(&d.read_prior(a), &out[0][i]);
        assert_eq!(ans.exit, Some(0), "{}", ans.text);
        d.parse_prior(a, &ans)
    };
    let before = read(0, &flap).unwrap();
    assert!(before.ports[0].admin_up && before.ports[0].oper_up);
    assert!(before.errdisabled.is_empty(), "{:?}", before.errdisabled);
    d.check_prior(&flap, &before).unwrap();
    let applied = switch::single_answer(&down[0], &out[0][1]);
    assert_eq!(applied.exit, Some(0), "{}", applied.text);
    let during = read(2, &flap).unwrap();
    assert!(!during.ports[0].admin_up && !during.ports[0].oper_up);
    let e = d.check_prior(&flap, &during).unwrap_err();
    assert!(e.contains("swp9 already administratively down"), "{e}");
    let e = read(4, &Action::PortsDown(vec!["swp99".into()])).unwrap_err();
    assert!(e.contains("swp99 does not exist"), "{e}");
}
