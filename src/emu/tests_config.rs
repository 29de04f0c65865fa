//! The configuration audit's reads on the emulated pod, sent the way the
//! audit sends them (composed into one `sh -c` per host) and read back with
//! the real-format parsers: every read answers, and every planted
//! configuration defect shows in what the audit would read.

use std::time::Duration;

use super::testutil::pod;
use super::Emulator;
use crate::config::inventory::Defect;
use crate::counters::host::{parse_ethtool_info, parse_lldpctl_json, parse_mlnx_qos};
use crate::counters::host_cfg::{parse_dcb_app, parse_dcb_pfc_json, parse_ethtool_link};
use crate::counters::optics::parse_ethtool_m;
use crate::exec::compose::{compose, split, Part};
use crate::exec::types::{Invocation, Role, StepCommands};
use crate::switch::linux::config::parse_ethtool_link as parse_switch_link;
use crate::switch::linux::counters::{parse_dcb_pfc, parse_ip_link_json, parse_tc_qdisc};

fn invocation(host: &str, argv: Vec<String>, secs: f64) -> Invocation {
    Invocation {
        host: host.into(),
        argv,
        env: Vec::new(),
        role: Role::Probe,
        timeout: Duration::from_secs(60),
        at: Duration::from_secs_f64(secs),
    }
}

fn words(line: &str) -> Vec<String> {
    line.split_whitespace().map(String::from).collect()
}

/// `lines` composed into one command on `host`, answered, split back.
fn composed(emu: &mut Emulator, host: &str, lines: &[String]) -> Vec<Part> {
    let parts: Vec<Vec<String>> = lines.iter().map(|l| words(l)).collect();
    let out = emu.run_batch(&[StepCommands {
        invocations: vec![invocation(host, compose(&parts), 0.0)],
    }]);
    let o = &out[0][0];
    assert_eq!(o.exit, Some(0), "{o:?}");
    split(&o.stdout, lines.len())
}

/// The audit's reads of one NIC (`N` netdev, `D` device, GID 3, priority 3).
fn nic_lines(n: &str, d: &str) -> Vec<String> {
    let ib = format!("/sys/class/infiniband/{d}");
    let net = format!("/sys/class/net/{n}");
    vec![
        format!("ethtool -i {n}"),
        format!("grep -H . {ib}/hca_type {ib}/board_id"),
        format!("ethtool {n}"),
        format!("ip -j link show dev {n}"),
        format!("dcb -j pfc show dev {n}"),
        format!("dcb app show dev {n}"),
        format!("mlnx_qos -i {n}"),
        format!(
            "grep -H . {ib}/ports/1/gid_attrs/types/3 {ib}/ports/1/gids/3 {ib}/ports/1/gid_attrs/ndevs/3"
        ),
        format!("grep -H . {net}/ecn/roce_np/enable/3 {net}/ecn/roce_rp/enable/3"),
        format!("ethtool -m {n}"),
    ]
}

fn node_lines(nics: &[(&str, &str)]) -> Vec<String> {
    let mut v = vec!["lldpctl -f json0".to_string()];
    for (n, d) in nics {
        v.extend(nic_lines(n, d));
    }
    v
}

/// The audit's reads of a `linux` switch for its ports.
fn switch_lines(ports: &[&str]) -> Vec<String> {
    let mut v = vec!["uname -r".to_string(), "lldpctl -f json0".to_string()];
    for p in ports {
        v.extend([
            format!("dcb pfc show dev {p}"),
            format!("tc -s -d qdisc show dev {p}"),
            format!("ip -j link show dev {p}"),
            format!("ethtool {p}"),
            format!("ethtool -m {p}"),
        ]);
    }
    v
}

fn ok(parts: &[Part]) {
    for (i, p) in parts.iter().enumerate() {
        assert_eq!(p.exit, Some(0), "part {i}: {}", p.text);
    }
}

#[test]
fn every_node_read_answers_in_the_format_its_parser_reads() {
    let mut emu = Emulator::new(&pod(4096, &[]), 1);
    let parts = composed(&mut emu, "gpu003", &node_lines(&[("rdma2", "mlx5_2")]));
    ok(&parts);
    let t = |i: usize| parts[i].text.as_str();

    let lldp = parse_lldpctl_json(t(0)).unwrap();
    assert_eq!(lldp.len(), 8, "one neighbour per rail");
    let r2 = lldp.iter().find(|n| n.interface == "rdma2").unwrap();
    assert_eq!(
        (r2.chassis_name.as_deref(), r2.port_id.as_str()),
        (Some("r2-leaf1"), "swp3")
    );

    let info = parse_ethtool_info(t(1)).unwrap();
    assert_eq!(info.firmware_version(), Some("28.39.1002"));
    assert_eq!(
        t(2),
        "/sys/class/infiniband/mlx5_2/hca_type:MT4129\n\
         /sys/class/infiniband/mlx5_2/board_id:MT_0000000834\n"
    );
    let link = parse_ethtool_link(t(3)).unwrap();
    assert_eq!(
        (link.speed_mbps, link.lanes, link.link_detected),
        (Some(400_000), Some(4), Some(true))
    );
    let ip = parse_ip_link_json(t(4)).unwrap();
    assert_eq!((ip[0].ifname.as_str(), ip[0].mtu), ("rdma2", Some(9000)));
    assert!(ip[0].admin_up && ip[0].lower_up && ip[0].operstate == "UP");
    assert_eq!(parse_dcb_pfc_json(t(5)).unwrap().enabled(), [3]);
    let app = parse_dcb_app(t(6)).unwrap();
    assert_eq!(
        (app.dscp(26), app.dscp(48), app.dscp(0)),
        (Some(3), Some(6), Some(0))
    );
    let qos = parse_mlnx_qos(t(7)).unwrap();
    assert_eq!(qos.pfc.map(|p| p[3]), Some(true));
    assert!(t(8).contains("/gid_attrs/types/3:RoCE v2\n"), "{}", t(8));
    assert!(t(8).contains("/gids/3:0000:0000:0000:0000:0000:ffff:0a02:0003\n"));
    assert!(t(8).ends_with("/gid_attrs/ndevs/3:rdma2\n"));
    assert_eq!(
        t(9),
        "/sys/class/net/rdma2/ecn/roce_np/enable/3:1\n/sys/class/net/rdma2/ecn/roce_rp/enable/3:1\n"
    );
    let m = parse_ethtool_m(t(10)).unwrap();
    assert!(m.flags_on.is_empty(), "{:?}", m.flags_on);
    assert!(m.lanes[0].rx_power_dbm.is_some());
}

#[test]
fn every_switch_read_answers_in_the_format_its_parser_reads() {
    let mut emu = Emulator::new(&pod(4096, &[]), 1);
    let parts = composed(&mut emu, "r0-leaf1", &switch_lines(&["swp1", "swp9"]));
    ok(&parts);
    let t = |i: usize| parts[i].text.as_str();
    assert_eq!(t(0), "6.1.0-18-amd64\n");
    let lldp = parse_lldpctl_json(t(1)).unwrap();
    // 8 hosts and 8 uplinks (2 per spine).
    assert_eq!(lldp.len(), 16);
    let swp1 = lldp.iter().find(|n| n.interface == "swp1").unwrap();
    assert_eq!(swp1.chassis_name.as_deref(), Some("gpu001"));
    assert_eq!(swp1.port_descr.as_deref(), Some("rdma0"));
    assert_eq!(swp1.port_id.len(), 17, "a MAC: {}", swp1.port_id);
    let swp9 = lldp.iter().find(|n| n.interface == "swp9").unwrap();
    assert_eq!(swp9.chassis_name.as_deref(), Some("spine1"));
    assert_eq!(swp9.port_id, "swp1");

    for (k, port) in ["swp1", "swp9"].iter().enumerate() {
        let b = 2 + 5 * k;
        assert_eq!(parse_dcb_pfc(t(b)).unwrap().enabled(), [3]);
        assert!(!parse_tc_qdisc(t(b + 1)).unwrap().is_empty());
        let ip = parse_ip_link_json(t(b + 2)).unwrap();
        assert_eq!((ip[0].ifname.as_str(), ip[0].mtu), (*port, Some(9216)));
        let l = parse_switch_link(t(b + 3)).unwrap();
        assert_eq!((l.speed_mbps, l.link_detected), (Some(400_000), Some(true)));
        let m = parse_ethtool_m(t(b + 4)).unwrap();
        assert!(m.flags_on.is_empty(), "{port}: {:?}", m.flags_on);
    }
}

#[test]
fn configuration_defects_show_in_what_the_audit_reads() {
    let defects = [
        Defect::Firmware {
            node: "gpu004".into(),
            version: "28.39.2048".into(),
        },
        Defect::ExtraPfc {
            nic: "gpu003:mlx5_1".into(),
            priorities: vec![4],
        },
        Defect::NicSpeed {
            nic: "gpu002:mlx5_0".into(),
            gbps: 200,
        },
        Defect::PfcOff {
            switch: "r1-leaf1".into(),
        },
        Defect::EcnThresholds {
            switch: "r2-leaf1".into(),
            min_kb: 10,
            max_kb: 20,
        },
    ];
    let mut bad = Emulator::new(&pod(4096, &defects), 1);
    let mut good = Emulator::new(&pod(4096, &[]), 1);
    let read = |emu: &mut Emulator, host: &str, line: &str| {
        let p = composed(emu, host, &[line.to_string()]).remove(0);
        assert_eq!(p.exit, Some(0), "{host}: {line}: {}", p.text);
        p.text
    };

    // firmware: ethtool -i and sysfs fw_ver.
    for emu in [&mut bad, &mut good] {
        let fw = read(emu, "gpu004", "ethtool -i rdma5");
        let fw = parse_ethtool_info(&fw).unwrap();
        let sys = read(
            emu,
            "gpu004",
            "grep -H . /sys/class/infiniband/mlx5_5/fw_ver",
        );
        let v = fw.firmware_version().unwrap().to_string();
        assert!(sys.ends_with(&format!(":{v}\n")), "{sys}");
    }
    let v = |emu: &mut Emulator| {
        parse_ethtool_info(&read(emu, "gpu004", "ethtool -i rdma5"))
            .unwrap()
            .firmware_version()
            .map(String::from)
    };
    assert_eq!(v(&mut bad).as_deref(), Some("28.39.2048"));
    assert_eq!(v(&mut good).as_deref(), Some("28.39.1002"));

    // extra_pfc: dcb -j pfc and mlnx_qos.
    let pfc = |emu: &mut Emulator| {
        let j = parse_dcb_pfc_json(&read(emu, "gpu003", "dcb -j pfc show dev rdma1")).unwrap();
        let q = parse_mlnx_qos(&read(emu, "gpu003", "mlnx_qos -i rdma1")).unwrap();
        assert_eq!(
            q.pfc
                .map(|p| (0u8..8).filter(|&i| p[usize::from(i)]).collect()),
            Some(j.enabled())
        );
        j.enabled()
    };
    assert_eq!(pfc(&mut bad), [3, 4]);
    assert_eq!(pfc(&mut good), [3]);

    // nic_speed: both ends of the cable run at the lower speed.
    let speed = |emu: &mut Emulator| {
        let host = parse_ethtool_link(&read(emu, "gpu002", "ethtool rdma0")).unwrap();
        let port = parse_switch_link(&read(emu, "r0-leaf1", "ethtool swp2")).unwrap();
        assert_eq!(host.speed_mbps, port.speed_mbps);
        host.speed_mbps
    };
    assert_eq!(speed(&mut bad), Some(200_000));
    assert_eq!(speed(&mut good), Some(400_000));

    // pfc_off: that switch's dcb pfc, not another's.
    let sw = |emu: &mut Emulator, s: &str| {
        parse_dcb_pfc(&read(emu, s, "dcb pfc show dev swp1"))
            .unwrap()
            .enabled()
    };
    assert!(sw(&mut bad, "r1-leaf1").is_empty());
    assert_eq!(sw(&mut bad, "r0-leaf1"), [3]);
    assert_eq!(sw(&mut good, "r1-leaf1"), [3]);

    // ecn_thresholds: that switch's tc.
    let ecn = |emu: &mut Emulator| {
        let bands = parse_tc_qdisc(&read(emu, "r2-leaf1", "tc -s -d qdisc show dev swp1")).unwrap();
        let b = bands.iter().find(|b| b.tc == Some(3)).unwrap();
        (b.min_bytes, b.max_bytes)
    };
    assert_ne!(ecn(&mut bad), ecn(&mut good));
}

#[test]
fn swapped_cables_show_in_lldp_on_both_sides() {
    let d = Defect::SwappedCables {
        a: "gpu001:mlx5_0".into(),
        b: "gpu009:mlx5_0".into(),
    };
    let mut emu = Emulator::new(&pod(4096, &[d]), 1);
    let host = |emu: &mut Emulator, node: &str| {
        let p = composed(emu, node, &["lldpctl -f json0".to_string()]).remove(0);
        let n = parse_lldpctl_json(&p.text).unwrap();
        let r0 = n.into_iter().find(|n| n.interface == "rdma0").unwrap();
        (r0.chassis_name.unwrap_or_default(), r0.port_id)
    };
    assert_eq!(host(&mut emu, "gpu001"), ("r0-leaf2".into(), "swp1".into()));
    assert_eq!(host(&mut emu, "gpu009"), ("r0-leaf1".into(), "swp1".into()));
    assert_eq!(host(&mut emu, "gpu002"), ("r0-leaf1".into(), "swp2".into()));

    let switch = |emu: &mut Emulator, s: &str| {
        let p = composed(emu, s, &["lldpctl -f json0".to_string()]).remove(0);
        let n = parse_lldpctl_json(&p.text).unwrap();
        let swp1 = n.into_iter().find(|n| n.interface == "swp1").unwrap();
        (
            swp1.chassis_name.unwrap_or_default(),
            swp1.port_descr.unwrap_or_default(),
        )
    };
    assert_eq!(
        switch(&mut emu, "r0-leaf1"),
        ("gpu009".into(), "rdma0".into())
    );
    assert_eq!(
        switch(&mut emu, "r0-leaf2"),
        ("gpu001".into(), "rdma0".into())
    );
}

#[test]
fn a_port_taken_down_loses_its_neighbour_speed_and_light() {
    let mut emu = Emulator::new(&pod(4096, &[]), 1);
    let lines = |l: &[&str]| -> Vec<Vec<String>> { l.iter().map(|x| words(x)).collect() };
    let host_reads = [
        "lldpctl -f json0",
        "ethtool rdma0",
        "ethtool -m rdma0",
        "ip -j link show dev rdma0",
    ];
    let switch_reads = [
        "lldpctl -f json0",
        "ethtool swp1",
        "ethtool -m swp1",
        "ip -j link show dev swp1",
    ];
    let out = emu.run_batch(&[StepCommands {
        invocations: vec![
            invocation("r0-leaf1", words("ip link set dev swp1 down"), 1.0),
            invocation("gpu001", compose(&lines(&host_reads)), 2.0),
            invocation("r0-leaf1", compose(&lines(&switch_reads)), 2.0),
        ],
    }]);
    let h = split(&out[0][1].stdout, 4);
    let s = split(&out[0][2].stdout, 4);
    ok(&h);
    ok(&s);

    let n = parse_lldpctl_json(&h[0].text).unwrap();
    assert!(n.iter().all(|n| n.interface != "rdma0"), "{n:?}");
    let link = parse_ethtool_link(&h[1].text).unwrap();
    assert_eq!((link.speed_mbps, link.link_detected), (None, Some(false)));
    // The host's laser is on; the switch port's is off, so the host is dark.
    let m = parse_ethtool_m(&h[2].text).unwrap();
    assert!(m.lanes.iter().all(|l| l.rx_power_mw == Some(0.0)));
    assert!(m.lanes[0].tx_power_mw.unwrap() > 1.0);
    let ip = parse_ip_link_json(&h[3].text).unwrap();
    assert!(ip[0].admin_up && !ip[0].lower_up && ip[0].operstate == "DOWN");

    let n = parse_lldpctl_json(&s[0].text).unwrap();
    assert!(n.iter().all(|n| n.interface != "swp1"));
    assert_eq!(
        parse_switch_link(&s[1].text).unwrap().link_detected,
        Some(false)
    );
    let m = parse_ethtool_m(&s[2].text).unwrap();
    assert_eq!(m.lanes[0].tx_power_mw, Some(0.0));
    assert!(
        m.lanes[0].rx_power_mw.unwrap() > 1.0,
        "the host still lights it"
    );
    let ip = parse_ip_link_json(&s[3].text).unwrap();
    assert!(!ip[0].admin_up);
}

#[test]
fn what_a_real_host_refuses_fails_as_the_real_tool_does() {
    let mut emu = Emulator::new(&pod(4096, &[]), 1);
    let lines: Vec<String> = [
        "ethtool rdma9",
        "ethtool -m rdma9",
        "ip -j link show dev rdma9",
        "dcb -j pfc show dev rdma9",
        "dcb app show dev rdma9",
        "grep -H . /sys/class/infiniband/mlx5_9/hca_type",
        "ethtool --bogus rdma0",
        "lldpctl -f xml",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let p = composed(&mut emu, "gpu001", &lines);
    let got: Vec<(Option<i32>, &str)> = p.iter().map(|p| (p.exit, p.text.as_str())).collect();
    assert_eq!(got[0].0, Some(1));
    assert!(got[0].1.contains("No such device"));
    assert_eq!(got[1].0, Some(1));
    assert_eq!(got[2], (Some(1), "Device \"rdma9\" does not exist.\n"));
    assert_eq!(got[3], (Some(1), "Attribute read: No such device\n"));
    assert_eq!(got[4], (Some(1), "Attribute read: No such device\n"));
    assert_eq!(
        got[5],
        (
            Some(2),
            "grep: /sys/class/infiniband/mlx5_9/hca_type: No such file or directory\n"
        )
    );
    assert_eq!(got[6], (Some(1), "ethtool: bad command line\n"));
    assert_eq!(got[7], (Some(1), "lldpctl: bad command line\n"));

    let p = composed(
        &mut emu,
        "r0-leaf1",
        &[
            "ethtool swp99".to_string(),
            "ip -j link show dev swp99".to_string(),
            "dcb pfc show dev swp99".to_string(),
        ],
    );
    assert_eq!(p[0].exit, Some(1));
    assert_eq!(p[1].text, "Device \"swp99\" does not exist.\n");
    assert_eq!(p[2].text, "Attribute read: No such device\n");
}

#[test]
fn a_weak_lane_shows_in_ethtool_m_at_its_end_only() {
    let defects = [
        Defect::WeakLane {
            end: "gpu003:mlx5_2".into(),
            lane: 2,
            rx_dbm: -9.5,
        },
        Defect::WeakLane {
            end: "r0-leaf1:swp3".into(),
            lane: 4,
            rx_dbm: -11.0,
        },
    ];
    let mut bad = Emulator::new(&pod(4096, &defects), 1);
    let mut good = Emulator::new(&pod(4096, &[]), 1);
    let module = |emu: &mut Emulator, host: &str, dev: &str| {
        let p = composed(emu, host, &[format!("ethtool -m {dev}")]).remove(0);
        assert_eq!(p.exit, Some(0), "{}", p.text);
        parse_ethtool_m(&p.text).unwrap()
    };

    let m = module(&mut bad, "gpu003", "rdma2");
    assert_eq!(m.lanes[1].rx_power_dbm, Some(-9.5));
    assert_eq!(m.flags_on, ["Laser rx power low warning  (Channel 2)"]);
    let clean = module(&mut good, "gpu003", "rdma2");
    assert!(clean.flags_on.is_empty());
    assert_eq!(
        (m.lanes[0].clone(), m.lanes[2].clone()),
        (clean.lanes[0].clone(), clean.lanes[2].clone())
    );
    // The far end of that cable, and the NIC's neighbours, are untouched.
    assert_eq!(
        module(&mut bad, "r2-leaf1", "swp3"),
        module(&mut good, "r2-leaf1", "swp3")
    );
    assert_eq!(
        module(&mut bad, "gpu003", "rdma1"),
        module(&mut good, "gpu003", "rdma1")
    );

    // Below the low alarm threshold on a switch port: alarm and warning.
    let m = module(&mut bad, "r0-leaf1", "swp3");
    assert_eq!(m.lanes[3].rx_power_dbm, Some(-11.0));
    assert_eq!(
        m.flags_on,
        [
            "Laser rx power low alarm    (Channel 4)",
            "Laser rx power low warning  (Channel 4)"
        ]
    );
}

#[test]
fn weak_lane_defects_are_checked_against_the_inventory() {
    use crate::config::check::parse_inventory;
    use crate::config::generate::{generate, to_yaml, PodShape};
    use crate::config::inventory::EmulationSpec;

    let check = |d: Defect| {
        let shape = PodShape::default();
        let mut raw = generate(&shape).unwrap();
        raw.emulation = Some(EmulationSpec { defects: vec![d] });
        let yaml = to_yaml(&shape, &raw).unwrap();
        parse_inventory("pod.yaml", &yaml)
            .map(|_| ())
            .map_err(|e| e.to_string())
    };
    let weak = |end: &str, lane: u8, rx_dbm: f64| Defect::WeakLane {
        end: end.into(),
        lane,
        rx_dbm,
    };
    assert_eq!(check(weak("gpu003:mlx5_2", 2, -9.5)), Ok(()));
    assert_eq!(check(weak("spine1:swp1", 1, -9.5)), Ok(()));
    let err = check(weak("gpu003:mlx5_9", 2, -9.5)).unwrap_err();
    assert!(
        err.contains("no cable has an end at gpu003:mlx5_9"),
        "{err}"
    );
    let err = check(weak("gpu003:mlx5_2", 5, -9.5)).unwrap_err();
    assert!(err.contains("lane 5 must be 1-4"), "{err}");
    let err = check(weak("gpu003:mlx5_2", 0, -9.5)).unwrap_err();
    assert!(err.contains("lane 0 must be 1-4"), "{err}");
    let err = check(weak("gpu003:mlx5_2", 1, 20.0)).unwrap_err();
    assert!(
        err.contains("rx_dbm 20 must be between -40 and 10"),
        "{err}"
    );
    assert!(err.contains("emulation.defects[0]"), "{err}");
    // The YAML spelling.
    let yaml = serde_yaml::to_string(&weak("r0-leaf1:swp3", 2, -9.5)).unwrap();
    assert!(yaml.contains("weak_lane"), "{yaml}");
}
