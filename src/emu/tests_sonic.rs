//! The `sonic` leaves of the emulated pod, read and changed the way the
//! harness does: queries built by the sonic platform, composed into one
//! `sh -c` per switch, answers split by `switch::answers` and read by the
//! platform's own parsers.

use super::tests_switch_harness::{answers, batched as composed, bw_pair, counters, line, total};
use super::Emulator;
use crate::config::check::parse_inventory;
use crate::config::model::Inventory;
use crate::counters::{Canonical, Reading};
use crate::exec::types::StepCommands;
use crate::switch::fault::Action;
use crate::switch::{self, Fact, Query};

fn pod() -> Inventory {
    let text = include_str!("../../inventory/emulated-sonic.yaml");
    parse_inventory("emulated-sonic.yaml", text).unwrap_or_else(|e| panic!("{e}"))
}

/// A rail pair through one leaf, read once it has ended: `portstat -r` and
/// `queuestat` count what the model sent to the server's port, the RoCE
/// queue's bytes the same traffic; `pfcstat`'s row is the asked port's.
#[test]
fn sonic_counters_are_the_models_through_the_platforms_parsers() {
    let inv = pod();
    let p = switch::platform(inv.switches[0].driver);
    assert_eq!(p.name(), "sonic");
    let mut emu = Emulator::new(&inv, 3);
    let qs = p.counter_queries("Ethernet2");
    let out = emu.run_batch(&[
        bw_pair("gpu002", "gpu001"),
        StepCommands {
            invocations: vec![composed("r0-leaf1", &qs, 30.0)],
        },
    ]);
    let got = counters(p, &out[1][0], "Ethernet2");
    let port = &emu.world.port[emu.fabric.port(0, "Ethernet2").unwrap()];
    let pkts = total(&got[0], Canonical::TxPackets);
    assert!(pkts > 10_000_000, "{pkts}");
    assert_eq!(pkts, port.tx_packets.floor() as u64);
    let q3: u64 = got[2]
        .iter()
        .filter(|r| r.canonical == Canonical::TxBytes && r.queue == Some(3))
        .map(|r| r.value)
        .sum();
    assert_eq!(q3, port.prio[3].tx_bytes.floor() as u64);
    assert!(q3 > 300_000_000_000, "{q3}");
    // pfcstat prints every port; the reading is Ethernet2's 8+8 values.
    assert_eq!(got[1].len(), 16);
    // Watermarks: the unicast queues' peaks are the model's egress peaks;
    // the PGs' (ingress, not modelled) are not available, never 0.
    assert!(got[3].is_empty(), "{:?}", got[3]);
    let wm = |q| {
        got[4]
            .iter()
            .find(|r| r.canonical == Canonical::BufferWatermark && r.queue == Some(q))
            .map(|r| r.value)
    };
    assert_eq!(wm(3), Some(port.tc_watermark_bytes[3].floor() as u64));
    assert_eq!(got[4].len(), 8);
    // The watchdog: one storm counter per queue it watches (the lossless
    // one), 0 in the model.
    let storms: Vec<&Reading> = got[5]
        .iter()
        .filter(|r| r.canonical == Canonical::PfcStormDetected)
        .collect();
    assert_eq!(storms.len(), 1, "{storms:?}");
    assert!(storms.iter().all(|r| r.value == 0));
    assert_eq!(storms[0].vendor, "Ethernet2:3 STORM DETECTED");
    // ECN marks per queue and link-downs are the model's.
    let ecn: Vec<u64> = (0..8)
        .map(|q| {
            got[6]
                .iter()
                .find(|r| r.canonical == Canonical::EcnMarked && r.queue == Some(q))
                .map_or(u64::MAX, |r| r.value)
        })
        .collect();
    let model: Vec<u64> = port
        .tc_ecn_marked
        .iter()
        .map(|v| v.floor() as u64)
        .collect();
    assert_eq!(ecn, model);
    assert_eq!(
        total(&got[7], Canonical::LinkDown),
        port.link_down_events.floor() as u64
    );
    // The alias CONFIG_DB gives the port (etpN by front-panel position)
    // reads the same port.
    let k = emu
        .world
        .port_cfg
        .iter()
        .enumerate()
        .filter(|(i, _)| emu.world.port_switch[*i] == Some(0))
        .map(|(_, c)| {
            let d = c.name.trim_start_matches("Ethernet");
            d.parse::<u32>().unwrap()
        })
        .filter(|n| *n < 2)
        .count();
    let alias = format!("etp{}", k + 1);
    let aq = p.counter_queries(&alias);
    let out = emu.run_batch(&[StepCommands {
        invocations: vec![composed("r0-leaf1", &aq, 32.0)],
    }]);
    let by_alias = counters(p, &out[0][0], &alias);
    assert_eq!(
        total(&by_alias[0], Canonical::TxPackets),
        total(&got[0], Canonical::TxPackets)
    );
    // A port the switch does not have, by name or alias, is an error
    // naming it, never zeros.
    for name in ["Ethernet99", "etp99", "fortyGigE0/0"] {
        let bad = p.counter_queries(name);
        let out = emu.run_batch(&[StepCommands {
            invocations: vec![composed("r0-leaf1", &bad, 33.0)],
        }]);
        let a = answers(&bad, &out[0][0]);
        for (q, a) in bad.iter().zip(&a) {
            let r = p.parse_counters(name, q, a);
            if name == "Ethernet99" && p.counter_source(q) == "pfcwd show stats" {
                // No watchdog row: nothing watched, which is no storm.
                assert_eq!(r, Ok(Vec::new()));
                continue;
            }
            let e = r.expect_err(name).0;
            assert!(
                e.contains(&format!("no row for {name}"))
                    || e.contains(&format!("{name} is neither a port")),
                "{name}: {e}"
            );
        }
    }
}

/// The audit's reads (CONFIG_DB, `show interfaces status`, the version
/// file) and LLDP, through the platform's parsers.
#[test]
fn sonic_config_and_lldp_parse() {
    let inv = pod();
    let p = switch::platform(inv.switches[0].driver);
    let ports = vec!["Ethernet1".to_string(), "Ethernet9".to_string()];
    let cfg = p.config_queries(&ports);
    let mut emu = Emulator::new(&inv, 1);
    let out = emu.run_batch(&[StepCommands {
        invocations: vec![
            composed("r0-leaf1", &cfg, 0.0),
            composed("r0-leaf1", &[p.lldp_query()], 0.0),
        ],
    }]);
    let c = p.parse_config("r0-leaf1", &ports, &answers(&cfg, &out[0][0]));
    assert!(format!("{:?}", c.nos_version).contains("SONiC."), "{c:?}");
    assert_eq!(c.pfc_watchdog, Fact::Known(true));
    // The DSCP map CONFIG_DB binds: RoCE's DSCP to the PFC priority's TC,
    // CNP's to its own.
    let roce = &inv.fabric.roce;
    let m = c
        .dscp_prio
        .known()
        .unwrap_or_else(|| panic!("{:?}", c.dscp_prio));
    assert_eq!(m[&roce.dscp_roce].priority, Some(roce.pfc_priority));
    assert_eq!(m[&roce.dscp_cnp].class, format!("TC{}", roce.cnp_priority));
    assert_eq!(m.len(), 64);
    // A port asked for by its alias reads as its Ethernet name.
    let by_alias = p.parse_config(
        "r0-leaf1",
        &["etp1".to_string()],
        &switch::answers(&p.config_queries(&["etp1".to_string()]), &out[0][0]),
    );
    assert_eq!(by_alias.ports[0].name, "etp1");
    assert_eq!(by_alias.ports[0].speed_mbps, Fact::Known(400_000));
    assert_eq!(by_alias.ports[0].link_up, c.ports[0].link_up);
    let e1 = &c.ports[0];
    assert_eq!(e1.link_up, Fact::Known(true));
    assert_eq!(e1.speed_mbps, Fact::Known(400_000));
    let cfg1 = &emu.world.port_cfg[emu.fabric.port(0, "Ethernet1").unwrap()];
    assert_eq!(e1.mtu, Fact::Known(cfg1.mtu));
    assert_eq!(e1.pfc, Fact::Known(cfg1.pfc));
    let ecn = e1.ecn.known().unwrap();
    let (min, max, _) = cfg1.ecn[3].unwrap();
    assert_eq!(ecn.len(), 1, "{ecn:?}");
    assert_eq!(
        (ecn[0].tc, ecn[0].min_bytes, ecn[0].max_bytes, ecn[0].ecn),
        (3, min, max, true)
    );
    let lldp = p
        .parse_lldp(&answers(&[p.lldp_query()], &out[0][1])[0])
        .unwrap();
    assert_eq!(lldp.len(), 16);
    let n9 = lldp.iter().find(|n| n.interface == "Ethernet9").unwrap();
    assert_eq!(n9.chassis_name.as_deref(), Some("spine1"));
}

/// The plain change `fault::emulated_step` sends (`config interface
/// shutdown`) takes the port down in the model and the status read shows
/// it; `startup` brings it back; the bgp service stop takes routing down.
#[test]
fn sonic_plain_faults_act_on_the_model() {
    let inv = pod();
    let p = switch::platform(inv.switches[0].driver);
    let d = p.faults();
    let action = Action::PortsDown(vec!["Ethernet1".into()]);
    let (apply, undo) = d.plain(&action, &Default::default());
    let cfg = p.config_queries(&["Ethernet1".to_string()]);
    let mut emu = Emulator::new(&inv, 1);
    let at = |q: &Query, t| line("r0-leaf1", q.command_line(), t);
    let out = emu.run_batch(&[StepCommands {
        invocations: vec![
            at(&apply[0], 1.0),
            composed("r0-leaf1", &cfg, 2.0),
            line("gpu001", vec!["ethtool".into(), "rdma0".into()], 2.0),
            at(&undo[0], 4.0),
            composed("r0-leaf1", &cfg, 5.0),
        ],
    }]);
    let applied = switch::single_answer(&apply[0], &out[0][0]);
    assert_eq!(applied.exit, Some(0), "{}", applied.text);
    let down = p.parse_config(
        "r0-leaf1",
        &["Ethernet1".into()],
        &answers(&cfg, &out[0][1]),
    );
    assert_eq!(down.ports[0].link_up, Fact::Known(false));
    assert!(out[0][2].stdout.contains("Link detected: no"));
    let up = p.parse_config(
        "r0-leaf1",
        &["Ethernet1".into()],
        &answers(&cfg, &out[0][4]),
    );
    assert_eq!(up.ports[0].link_up, Fact::Known(true));

    // The same port by its alias (etp1: the leaf's first port), in alias mode.
    let (apply, _) = d.plain(&Action::PortsDown(vec!["etp1".into()]), &Default::default());
    assert!(apply[0].display().contains("SONIC_CLI_IFACE_MODE=alias"));
    let mut emu = Emulator::new(&inv, 1);
    let out = emu.run_batch(&[StepCommands {
        invocations: vec![at(&apply[0], 1.0), composed("r0-leaf1", &cfg, 2.0)],
    }]);
    assert_eq!(out[0][0].exit, Some(0), "{:?}", out[0][0]);
    let down = p.parse_config(
        "r0-leaf1",
        &["Ethernet1".into()],
        &answers(&cfg, &out[0][1]),
    );
    assert_eq!(down.ports[0].link_up, Fact::Known(false));

    let (stop, _) = d.plain(&Action::RoutingStop, &Default::default());
    let mut emu = Emulator::new(&inv, 1);
    let out = emu.run_batch(&[StepCommands {
        invocations: vec![at(&stop[0], 1.0)],
    }]);
    assert_eq!(out[0][0].exit, Some(0), "{:?}", out[0][0]);
    assert!(!emu.fabric.routing[0]);
    // A port the switch does not have is refused as sonic-utilities does.
    let (bad, _) = d.plain(
        &Action::PortsDown(vec!["Ethernet99".into()]),
        &Default::default(),
    );
    let out = emu.run_batch(&[StepCommands {
        invocations: vec![at(&bad[0], 2.0)],
    }]);
    assert_ne!(out[0][0].exit, Some(0));
}

/// The fault driver's prior-state read (as a live fault sends it): the
/// status table shows a port shut by `config interface shutdown`, FRR's
/// summary names the leaf's AS and its eight sessions by port (BGP
/// unnumbered), a withdrawn session's port is found, and with the bgp
/// service stopped no routing daemon answers.
#[test]
fn sonic_prior_state_read_parses() {
    let inv = pod();
    let p = switch::platform(inv.switches[0].driver);
    let d = p.faults();
    let ports = Action::PortsDown(vec!["Ethernet1".into()]);
    let peer = Action::BgpPeerDown {
        port: "Ethernet9".into(),
    };
    let (shut, _) = d.plain(&ports, &Default::default());
    let (stop, _) = d.plain(&Action::RoutingStop, &Default::default());
    let at = |q: &Query, t| line("r0-leaf1", q.command_line(), t);
    let mut emu = Emulator::new(&inv, 1);
    let out = emu.run_batch(&[StepCommands {
        invocations: vec![
            at(&d.read_prior(&peer), 0.0),
            at(&shut[0], 1.0),
            at(&d.read_prior(&ports), 2.0),
            at(&stop[0], 3.0),
            at(&d.read_prior(&ports), 4.0),
        ],
    }]);
    let read = |i: usize, a: &Action| {
        let ans = switch::single_answer(&d.read_prior(a), &out[0][i]);
        assert_eq!(ans.exit, Some(0), "{}", ans.text);
        d.parse_prior(a, &ans)
            .unwrap_or_else(|e| panic!("{e}\n{}", ans.text))
    };
    let before = read(0, &peer);
    assert_eq!(before.asn.as_deref(), Some("65101"));
    assert_eq!(
        before.bgp.clone().unwrap(),
        vec![("Ethernet9".to_string(), true)]
    );
    d.check_prior(&peer, &before).unwrap();
    let down = read(2, &ports);
    assert!(!down.ports[0].admin_up && !down.ports[0].oper_up);
    assert_eq!(down.bgp.clone().unwrap().len(), 8);
    let stopped = read(4, &ports);
    assert!(stopped.bgp.is_none());
}
