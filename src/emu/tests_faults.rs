//! Faults and counters on the emulated pod, read back the way the harness
//! reads a real pod: through the command lines and the real-format parsers.

use std::time::Duration;

use super::testutil::pod;
use super::Emulator;
use crate::config::inventory::Defect;
use crate::counters::{host, Canonical, Reading};
use crate::exec::types::{ExecFailure, Invocation, InvocationOutput, Role, StepCommands};
use crate::switch::linux::counters as switch_linux;

fn at(host: &str, line: &str, role: Role, secs: f64) -> Invocation {
    Invocation {
        host: host.into(),
        argv: line.split_whitespace().map(String::from).collect(),
        env: Vec::new(),
        role,
        timeout: Duration::from_secs(300),
        at: Duration::from_secs_f64(secs),
    }
}

/// A 10-second `ib_write_bw` from `client` to `server` (rail 0).
fn bw_pair(server: &str, client: &str, extra: &str) -> StepCommands {
    let s =
        format!("ib_write_bw -d mlx5_0 -x 3 -F --report_gbits -s 1048576 -D 10 {extra} -p 18515");
    let c = format!("{s} {server}.mgmt");
    StepCommands {
        invocations: vec![
            at(server, &s, Role::Server, 0.0),
            at(client, &c, Role::Client, 0.0),
        ],
    }
}

fn step(invs: Vec<Invocation>) -> StepCommands {
    StepCommands { invocations: invs }
}

fn bw(o: &InvocationOutput) -> f64 {
    let row = o
        .stdout
        .lines()
        .rev()
        .find(|l| l.trim_start().starts_with(|c: char| c.is_ascii_digit()))
        .unwrap_or_else(|| panic!("no row in:\n{}\n{}", o.stdout, o.stderr));
    row.split_whitespace().nth(3).unwrap().parse().unwrap()
}

fn value(r: &[Reading], c: Canonical, prio: Option<u8>) -> u64 {
    r.iter()
        .filter(|x| x.canonical == c && x.priority == prio)
        .map(|x| x.value)
        .sum()
}

#[test]
fn a_host_flap_longer_than_the_retry_budget_kills_perftest_and_counts_one_link_down() {
    let mut emu = Emulator::new(&pod(4096, &[]), 1);
    let out = emu.run_batch(&[
        bw_pair("gpu002", "gpu001", ""),
        step(vec![
            at("gpu001", "ip link set dev rdma0 down", Role::Probe, 5.0),
            at("gpu001", "ip link set dev rdma0 up", Role::Probe, 8.0),
            at("gpu001", "ethtool -S rdma0", Role::Probe, 9.0),
            at(
                "r0-leaf1",
                "ip -s -s -j link show dev swp1",
                Role::Probe,
                9.0,
            ),
        ]),
    ]);
    let client = &out[0][1];
    assert_eq!(client.exit, Some(1), "{client:?}");
    assert!(client.stderr.contains("Completion with error"));
    // Down at 5 s, the QP gives up after 8 tries of 4.096 µs × 2^14.
    assert!((client.ended_s - (5.0 + 8.0 * 4.096e-6 * 16384.0)).abs() < 1e-6);
    let nic = host::parse_ethtool_stats(&out[1][2].stdout).unwrap();
    assert_eq!(value(&nic, Canonical::LinkDown, None), 1);
    let port = switch_linux::parse_ip_link_json(&out[1][3].stdout).unwrap();
    assert_eq!(value(&port[0].readings, Canonical::LinkDown, None), 1);
    assert!(
        port[0].admin_up && port[0].lower_up,
        "back up at 8 s: {port:?}"
    );
}

#[test]
fn a_flap_within_the_retry_budget_only_lowers_the_average() {
    let clean = Emulator::new(&pod(4096, &[]), 1).run_batch(&[bw_pair("gpu002", "gpu001", "")]);
    let mut emu = Emulator::new(&pod(4096, &[]), 1);
    let out = emu.run_batch(&[
        bw_pair("gpu002", "gpu001", ""),
        step(vec![
            at("r0-leaf1", "ip link set dev swp2 down", Role::Probe, 6.0),
            at("r0-leaf1", "ip link set dev swp2 up", Role::Probe, 6.3),
        ]),
    ]);
    assert_eq!(out[0][1].exit, Some(0), "{:?}", out[0][1]);
    let (b0, b1) = (bw(&clean[0][1]), bw(&out[0][1]));
    // 0.3 s of 10 s without a path: 3 % less.
    assert!((b1 / b0 - 0.97).abs() < 0.002, "{b0} → {b1}");
}

#[test]
fn an_uplink_flap_rehashes_cross_leaf_flows_onto_the_survivors() {
    let mut emu = Emulator::new(&pod(4096, &[]), 1);
    // gpu001 (r0-leaf1) → gpu009 (r0-leaf2), 8 QPs; all 8 uplinks down but one.
    let mut flaps = Vec::new();
    for p in 9..=15 {
        flaps.push(at(
            "r0-leaf1",
            &format!("ip link set dev swp{p} down"),
            Role::Probe,
            4.0,
        ));
        flaps.push(at(
            "r0-leaf1",
            &format!("ip link set dev swp{p} up"),
            Role::Probe,
            9.0,
        ));
    }
    let out = emu.run_batch(&[bw_pair("gpu009", "gpu001", "-q 8"), step(flaps)]);
    let client = &out[0][1];
    assert_eq!(client.exit, Some(0), "{client:?}");
    // Every QP found swp16 while the others were down: nothing stalled, and
    // one uplink carries a whole NIC's worth.
    assert!(bw(client) > 390.0, "{}", bw(client));
}

#[test]
fn stopping_routing_on_a_leaf_cuts_cross_leaf_pairs_but_not_local_ones() {
    let mut emu = Emulator::new(&pod(4096, &[]), 1);
    let local = bw_pair("gpu002", "gpu001", "");
    let cross = bw_pair("gpu010", "gpu003", "");
    let out = emu.run_batch(&[
        local,
        cross,
        step(vec![
            at("r0-leaf1", "systemctl stop frr", Role::Probe, 4.0),
            at("r0-leaf1", "systemctl start frr", Role::Probe, 20.0),
        ]),
    ]);
    assert_eq!(out[0][1].exit, Some(0), "same leaf: {:?}", out[0][1]);
    assert_eq!(
        out[1][1].exit,
        Some(1),
        "across the spines: {:?}",
        out[1][1]
    );
}

#[test]
fn a_rebooting_switch_answers_nothing_and_comes_back_with_zeroed_counters() {
    let mut emu = Emulator::new(&pod(4096, &[]), 1);
    let before = emu.run_batch(&[
        bw_pair("gpu002", "gpu001", ""),
        step(vec![at("r0-leaf1", "ethtool -S swp1", Role::Probe, 11.0)]),
    ]);
    let rx = |o: &InvocationOutput| {
        let r = switch_linux::parse_ethtool_stats(&o.stdout).unwrap();
        value(&r, Canonical::RxBytes, None)
    };
    assert!(rx(&before[1][0]) > 100_000_000_000, "10 s at 392 Gb/s");
    let out = emu.run_batch(&[step(vec![
        at("r0-leaf1", "systemctl reboot", Role::Probe, 0.0),
        at("r0-leaf1", "ethtool -S swp1", Role::Probe, 10.0),
        at("gpu001", "ethtool -S rdma0", Role::Probe, 10.0),
    ])]);
    assert!(matches!(
        out[0][1].failure,
        Some(ExecFailure::Unreachable(_))
    ));
    let nic = host::parse_ethtool_stats(&out[0][2].stdout).unwrap();
    assert_eq!(
        value(&nic, Canonical::LinkDown, None),
        1,
        "the leaf took the link down"
    );
    // 90 s later the leaf is back and counts from zero; the NIC keeps its totals.
    let after = emu.run_batch(&[step(vec![
        at("r0-leaf1", "ethtool -S swp1", Role::Probe, 100.0),
        at("gpu001", "ethtool -S rdma0", Role::Probe, 100.0),
    ])]);
    assert_eq!(after[0][0].exit, Some(0), "{:?}", after[0][0]);
    assert_eq!(rx(&after[0][0]), 0);
    let nic = host::parse_ethtool_stats(&after[0][1].stdout).unwrap();
    assert!(value(&nic, Canonical::TxBytes, None) > 100_000_000_000);
    assert_eq!(value(&nic, Canonical::LinkDown, None), 1);
}

#[test]
fn narrow_ib_port_counters_saturate_while_ethtool_keeps_counting() {
    let mut emu = Emulator::new(&pod(4096, &[]), 1);
    let mut long = bw_pair("gpu002", "gpu001", "");
    for i in &mut long.invocations {
        let pos = i.argv.iter().position(|w| w == "-D").unwrap();
        i.argv[pos + 1] = "300".into();
    }
    let dir = "/sys/class/infiniband/mlx5_0/ports/1";
    let out = emu.run_batch(&[
        long,
        step(vec![
            at(
                "gpu001",
                &format!("grep -r . {dir}/counters {dir}/hw_counters"),
                Role::Probe,
                303.0,
            ),
            at("gpu001", "ethtool -S rdma0", Role::Probe, 303.0),
        ]),
    ]);
    let (dev, sysfs) = host::parse_sysfs_counters(&out[1][0].stdout).unwrap();
    assert_eq!(dev, "mlx5_0");
    let xmit = sysfs
        .iter()
        .find(|r| r.vendor.contains("port_xmit_data"))
        .expect("port_xmit_data is read");
    let bits = xmit.bits.expect("a narrow counter says so");
    assert_eq!(xmit.value, (1u64 << bits) - 1, "{xmit:?}");
    let eth = host::parse_ethtool_stats(&out[1][1].stdout).unwrap();
    // 300 s at 392 Gb/s is about 14.7 TB: far past 2^34 bytes.
    assert!(value(&eth, Canonical::TxBytes, None) > 10_000_000_000_000);
}

#[test]
fn a_bad_cable_shows_crc_errors_at_its_receiving_end_and_costs_goodput() {
    let bad = pod(
        4096,
        &[Defect::BadCable {
            link: "gpu001:mlx5_0".into(),
            ber: 1e-7,
        }],
    );
    let mut emu = Emulator::new(&bad, 1);
    let out = emu.run_batch(&[
        bw_pair("gpu002", "gpu001", ""),
        step(vec![
            at("r0-leaf1", "ethtool -S swp1", Role::Probe, 13.0),
            at("r0-leaf1", "ethtool -S swp2", Role::Probe, 13.0),
            at("gpu002", "ethtool -S rdma0", Role::Probe, 13.0),
        ]),
    ]);
    let g = bw(&out[0][1]);
    assert!(g < 360.0 && g > 300.0, "{g}");
    let crc = |o: &InvocationOutput| {
        value(
            &switch_linux::parse_ethtool_stats(&o.stdout).unwrap(),
            Canonical::CrcErrors,
            None,
        )
    };
    assert!(crc(&out[1][0]) > 1000, "gpu001's cable, leaf side");
    assert_eq!(crc(&out[1][1]), 0, "gpu002's cable is clean");
    let rx = host::parse_ethtool_stats(&out[1][2].stdout).unwrap();
    assert_eq!(
        value(&rx, Canonical::CrcErrors, None),
        0,
        "gpu002 receives clean frames"
    );
}

/// A command line as the `linux` driver's `plain` sends it: `vtysh` with
/// its `-c` arguments kept whole.
fn vtysh(host: &str, line: &str, secs: f64) -> Invocation {
    let mut i = at(host, "vtysh", Role::Probe, secs);
    i.argv
        .extend(["-c", "configure terminal", "-c", "router bgp", "-c", line].map(String::from));
    i
}

/// `ip -s -s -j link show dev PORT` on `host` at `secs`.
fn port_state(host: &str, port: &str, secs: f64) -> Invocation {
    at(
        host,
        &format!("ip -s -s -j link show dev {port}"),
        Role::Probe,
        secs,
    )
}

/// Link-down events and (admin, carrier) of one port from its `ip -j` output.
fn downs(o: &InvocationOutput) -> (u64, bool, bool) {
    let p =
        &switch_linux::parse_ip_link_json(&o.stdout).unwrap_or_else(|e| panic!("{e}: {o:?}"))[0];
    (
        value(&p.readings, Canonical::LinkDown, None),
        p.admin_up,
        p.lower_up,
    )
}

#[test]
fn losing_a_spine_moves_cross_leaf_flows_onto_the_others_and_counts_its_link_downs() {
    let mut emu = Emulator::new(&pod(4096, &[]), 1);
    // spine1's 32 ports (two to each of the 16 leaves) down from 4 s to 9 s.
    let mut cmds = Vec::new();
    for p in 1..=32 {
        cmds.push(at(
            "spine1",
            &format!("ip link set dev swp{p} down"),
            Role::Probe,
            4.0,
        ));
        cmds.push(at(
            "spine1",
            &format!("ip link set dev swp{p} up"),
            Role::Probe,
            9.0,
        ));
    }
    // r0-leaf1's swp9 goes to spine1, swp11 to spine2.
    cmds.push(port_state("r0-leaf1", "swp9", 6.0));
    cmds.push(port_state("r0-leaf1", "swp11", 6.0));
    cmds.push(port_state("r0-leaf1", "swp9", 10.0));
    let out = emu.run_batch(&[bw_pair("gpu009", "gpu001", "-q 8"), step(cmds)]);
    let client = &out[0][1];
    assert_eq!(client.exit, Some(0), "{client:?}");
    // Three spines left: six uplinks for one NIC's worth.
    assert!(bw(client) > 390.0, "{}", bw(client));
    let probes = &out[1][64..];
    assert_eq!(
        downs(&probes[0]),
        (1, true, false),
        "leaf side of spine1's link"
    );
    assert_eq!(
        downs(&probes[1]),
        (0, true, true),
        "spine2's link untouched"
    );
    assert_eq!(downs(&probes[2]), (1, true, true), "back up at 9 s");
}

#[test]
fn routing_stopped_on_a_spine_takes_its_paths_but_no_link() {
    let mut emu = Emulator::new(&pod(4096, &[]), 1);
    let out = emu.run_batch(&[
        bw_pair("gpu009", "gpu001", "-q 8"),
        step(vec![
            at("spine1", "systemctl stop frr", Role::Probe, 4.0),
            at("spine1", "systemctl start frr", Role::Probe, 9.0),
            port_state("r0-leaf1", "swp9", 6.0),
        ]),
    ]);
    assert_eq!(out[0][1].exit, Some(0), "{:?}", out[0][1]);
    assert!(bw(&out[0][1]) > 390.0, "{}", bw(&out[0][1]));
    assert_eq!(downs(&out[1][2]), (0, true, true), "the links stay up");
    // Every spine's routing stopped: nothing crosses, the leaf's own pairs do.
    let mut emu = Emulator::new(&pod(4096, &[]), 1);
    let mut cmds = Vec::new();
    for s in 1..=4 {
        cmds.push(at(
            &format!("spine{s}"),
            "systemctl stop frr",
            Role::Probe,
            4.0,
        ));
        cmds.push(at(
            &format!("spine{s}"),
            "systemctl start frr",
            Role::Probe,
            20.0,
        ));
    }
    let out = emu.run_batch(&[
        bw_pair("gpu002", "gpu001", ""),
        bw_pair("gpu010", "gpu003", ""),
        step(cmds),
    ]);
    assert_eq!(out[0][1].exit, Some(0), "same leaf: {:?}", out[0][1]);
    assert_eq!(out[1][1].exit, Some(1), "across: {:?}", out[1][1]);
}

#[test]
fn a_shut_session_takes_its_link_out_of_ecmp_and_leaves_it_up() {
    use super::batch::FaultCmd;
    use super::fabric::Fabric;
    use super::Parsed;
    let inv = pod(4096, &[]);
    let mut f = Fabric::new(&inv, 1);
    let leaf = inv.switch_by_name["r0-leaf1"];
    let line = vtysh("r0-leaf1", "neighbor swp9 shutdown", 0.0).argv;
    let Some(Parsed::Fault(FaultCmd::Peer { link, side, shut })) =
        super::probe::parse_switch(&f, leaf, &line)
    else {
        panic!("not a session shutdown: {line:?}");
    };
    assert!(shut);
    assert_eq!(
        inv.end_name(if side == 0 {
            &inv.links[link].a
        } else {
            &inv.links[link].b
        }),
        "r0-leaf1:swp9"
    );
    let (a, b) = (inv.nodes[0].nics[0], inv.nodes[8].nics[0]);
    let members = |f: &Fabric| -> std::collections::BTreeSet<usize> {
        (0..512u16)
            .filter_map(|s| f.path(a, b, 0xC000 + s))
            .map(|p| p[1] / 2)
            .collect()
    };
    assert_eq!(members(&f).len(), 8);
    assert!(members(&f).contains(&link));
    f.session_down[link] = true;
    let left = members(&f);
    assert_eq!(left.len(), 7, "{left:?}");
    assert!(!left.contains(&link));
    assert!(f.link_up[link], "routing withdrew it; the link is up");
}

#[test]
fn shut_sessions_reroute_cross_leaf_flows_without_a_link_down() {
    let mut emu = Emulator::new(&pod(4096, &[]), 1);
    // Seven of r0-leaf1's eight uplink sessions shut from 4 s to 9 s.
    let mut cmds = Vec::new();
    for p in 9..=15 {
        cmds.push(vtysh("r0-leaf1", &format!("neighbor swp{p} shutdown"), 4.0));
        cmds.push(vtysh(
            "r0-leaf1",
            &format!("no neighbor swp{p} shutdown"),
            9.0,
        ));
    }
    cmds.push(port_state("r0-leaf1", "swp9", 6.0));
    cmds.push(port_state("spine1", "swp1", 6.0));
    let out = emu.run_batch(&[bw_pair("gpu009", "gpu001", "-q 8"), step(cmds)]);
    assert!(
        out[1][..14].iter().all(|o| o.exit == Some(0)),
        "{:?}",
        out[1]
    );
    let client = &out[0][1];
    assert_eq!(client.exit, Some(0), "{client:?}");
    // All eight QPs on swp16 while the rest were withdrawn: nothing stalled.
    assert!(bw(client) > 390.0, "{}", bw(client));
    assert_eq!(
        downs(&out[1][14]),
        (0, true, true),
        "leaf end up, no link-down"
    );
    assert_eq!(downs(&out[1][15]), (0, true, true), "spine end too");

    // Every uplink's session shut: the leaf has no route across, the QPs
    // of a cross-leaf pair give up; a pair on the leaf does not notice.
    let mut emu = Emulator::new(&pod(4096, &[]), 1);
    let mut cmds = Vec::new();
    for p in 9..=16 {
        cmds.push(vtysh("r0-leaf1", &format!("neighbor swp{p} shutdown"), 4.0));
        cmds.push(vtysh(
            "r0-leaf1",
            &format!("no neighbor swp{p} shutdown"),
            20.0,
        ));
    }
    let out = emu.run_batch(&[
        bw_pair("gpu002", "gpu001", ""),
        bw_pair("gpu010", "gpu003", ""),
        step(cmds),
    ]);
    assert_eq!(out[0][1].exit, Some(0), "same leaf: {:?}", out[0][1]);
    assert_eq!(out[1][1].exit, Some(1), "across: {:?}", out[1][1]);
}

#[test]
fn a_neighbour_the_switch_does_not_have_is_frrs_error() {
    let mut emu = Emulator::new(&pod(4096, &[]), 1);
    let out = emu.run_batch(&[step(vec![
        // A host port: hosts do not speak BGP here.
        vtysh("r0-leaf1", "neighbor swp1 shutdown", 0.0),
        vtysh("r0-leaf1", "neighbor swp99 shutdown", 0.0),
    ])]);
    for o in &out[0] {
        assert_eq!(o.exit, Some(1), "{o:?}");
        assert!(
            o.stderr
                .contains("% Create the peer-group or interface first"),
            "{o:?}"
        );
    }
}
