//! The configuration reads the audit sends to a node's NICs and to a `linux`
//! switch's ports, printed as the real tools print them: plain `ethtool DEV`
//! (netlink ethtool 6.x over mlx5 or mlxsw), `dcb [-j] [-s] pfc show` and
//! `dcb [-j] [-N] app show` (iproute2's `dcb_pfc.c`, `dcb_app.c`) and
//! `uname -r`. Rendered from the model's configuration only; which port and
//! which command is `probe`'s business.

use std::fmt::Write as _;

/// The kernel every emulated `linux` switch runs (Debian 12's, which carries
/// mlxsw); `uname -r` prints it and the audit reads it as the NOS version.
pub const SWITCH_KERNEL: &str = "6.1.0-18-amd64";

/// The driver behind a port, for what only one of them prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Driver {
    /// A ConnectX-7 netdev.
    Mlx5,
    /// A Spectrum switch port.
    Mlxsw,
}

/// What plain `ethtool DEV` shows of a port.
#[derive(Debug, Clone, Copy)]
pub struct LinkView<'a> {
    pub name: &'a str,
    pub driver: Driver,
    /// Negotiated speed; ignored while the link is down.
    pub speed_mbps: u64,
    pub link_up: bool,
    /// PFC on for some priority: global pause is then off (mlx5 advertises
    /// symmetric pause only when no priority has PFC).
    pub pfc_any: bool,
}

/// The link modes both the ConnectX-7 and the Spectrum port report, in
/// ethtool's bit order (`ethtool_link_mode_bit_indices`): 1G to 400G over
/// 1, 2 and 4 lanes. Neither driver's full list (mlx5 adds legacy modes,
/// Spectrum-4 800G ones); the audit reads speed and lanes, not the list.
const LINK_MODES: [&str; 47] = [
    "1000baseKX/Full",
    "10000baseKR/Full",
    "25000baseCR/Full",
    "25000baseKR/Full",
    "25000baseSR/Full",
    "50000baseCR2/Full",
    "50000baseKR2/Full",
    "100000baseKR4/Full",
    "100000baseSR4/Full",
    "100000baseCR4/Full",
    "100000baseLR4_ER4/Full",
    "50000baseSR2/Full",
    "1000baseX/Full",
    "10000baseCR/Full",
    "10000baseSR/Full",
    "10000baseLR/Full",
    "10000baseER/Full",
    "50000baseKR/Full",
    "50000baseSR/Full",
    "50000baseCR/Full",
    "50000baseLR_ER_FR/Full",
    "50000baseDR/Full",
    "100000baseKR2/Full",
    "100000baseSR2/Full",
    "100000baseCR2/Full",
    "100000baseLR2_ER2_FR2/Full",
    "100000baseDR2/Full",
    "200000baseKR4/Full",
    "200000baseSR4/Full",
    "200000baseLR4_ER4_FR4/Full",
    "200000baseDR4/Full",
    "200000baseCR4/Full",
    "100000baseKR/Full",
    "100000baseSR/Full",
    "100000baseLR_ER_FR/Full",
    "100000baseCR/Full",
    "100000baseDR/Full",
    "200000baseKR2/Full",
    "200000baseSR2/Full",
    "200000baseLR2_ER2_FR2/Full",
    "200000baseDR2/Full",
    "200000baseCR2/Full",
    "400000baseKR4/Full",
    "400000baseSR4/Full",
    "400000baseLR4_ER4_FR4/Full",
    "400000baseDR4/Full",
    "400000baseCR4/Full",
];

/// Lanes of the link mode a port settles on at `speed_mbps` with the
/// emulated 4-lane SR4 optics: 4 lanes from 100G up (100G-SR4 at 25G NRZ,
/// 200G-SR4 at 50G, 400G-SR4 at 100G PAM4), one lane below.
pub fn lanes(speed_mbps: u64) -> u32 {
    if speed_mbps >= 100_000 {
        4
    } else {
        1
    }
}

/// ethtool's netlink `dump_link_modes`: the first mode after the label,
/// each further one on its own line under the first.
fn modes(out: &mut String, label: &str, modes: &[&str]) {
    let _ = write!(out, "\t{label:<24}");
    for (i, m) in modes.iter().enumerate() {
        if i > 0 {
            out.push_str("\n\t                        ");
        }
        out.push_str(m);
    }
    out.push('\n');
}

/// Plain `ethtool DEV`. While the link is down the speed and duplex are
/// unknown and no lane count is reported (the kernel leaves
/// `ETHTOOL_A_LINKMODES_LANES` out when lanes are unknown). mlx5 adds the
/// Wake-on and message-level lines; mlxsw implements neither.
pub fn ethtool_settings(v: &LinkView) -> String {
    let mlx5 = v.driver == Driver::Mlx5;
    let mut out = format!("Settings for {}:\n\tSupported ports: [ FIBRE ]\n", v.name);
    modes(&mut out, "Supported link modes:", &LINK_MODES);
    out.push_str(if mlx5 {
        "\tSupported pause frame use: Symmetric\n"
    } else {
        "\tSupported pause frame use: Symmetric Receive-only\n"
    });
    out.push_str("\tSupports auto-negotiation: Yes\n");
    out.push_str(if mlx5 {
        "\tSupported FEC modes: None RS BASER\n"
    } else {
        "\tSupported FEC modes: Not reported\n"
    });
    modes(&mut out, "Advertised link modes:", &LINK_MODES);
    let pause = if mlx5 && !v.pfc_any {
        "Symmetric"
    } else {
        "No"
    };
    let _ = writeln!(out, "\tAdvertised pause frame use: {pause}");
    out.push_str("\tAdvertised auto-negotiation: Yes\n");
    out.push_str(if mlx5 {
        "\tAdvertised FEC modes: RS\n"
    } else {
        "\tAdvertised FEC modes: Not reported\n"
    });
    if v.link_up && v.speed_mbps > 0 {
        let _ = writeln!(out, "\tSpeed: {}Mb/s", v.speed_mbps);
        let _ = writeln!(out, "\tLanes: {}", lanes(v.speed_mbps));
        out.push_str("\tDuplex: Full\n");
    } else {
        out.push_str("\tSpeed: Unknown!\n\tDuplex: Unknown! (255)\n");
    }
    out.push_str("\tAuto-negotiation: on\n\tPort: FIBRE\n\tPHYAD: 0\n\tTransceiver: internal\n");
    if mlx5 {
        // mlx5e's default message level is NETIF_MSG_LINK.
        out.push_str("\tSupports Wake-on: d\n\tWake-on: d\n");
        out.push_str("\tCurrent message level: 0x00000004 (4)\n\t\t\t       link\n");
    }
    let _ = writeln!(
        out,
        "\tLink detected: {}",
        if v.link_up { "yes" } else { "no" }
    );
    out
}

/// What `dcb pfc show` reads from a port (`struct ieee_pfc`).
#[derive(Debug, Clone, Copy)]
pub struct Pfc {
    pub enabled: [bool; 8],
    /// Allowance for the cable's delay: mlx5 reports its cable length
    /// here, mlxsw what the operator set (0).
    pub delay: u16,
    /// PFC frames sent and received per priority, printed with `-s`.
    pub requests: [u64; 8],
    pub indications: [u64; 8],
}

fn on_off(b: bool) -> &'static str {
    if b {
        "on"
    } else {
        "off"
    }
}

/// `dcb [-s] pfc show dev X` as text: `print_uint`/`print_on_off` leave a
/// space after every value, `print_nl` ends each group.
pub fn dcb_pfc_text(p: &Pfc, stats: bool) -> String {
    let mut out = format!("pfc-cap 8 macsec-bypass off delay {} \nprio-pfc ", p.delay);
    for (i, on) in p.enabled.iter().enumerate() {
        let _ = write!(out, "{i}:{} ", on_off(*on));
    }
    out.push('\n');
    if stats {
        for (name, v) in [("requests", &p.requests), ("indications", &p.indications)] {
            out.push_str(name);
            out.push(' ');
            for (i, n) in v.iter().enumerate() {
                let _ = write!(out, "{i}:{n} ");
            }
            out.push('\n');
        }
    }
    out
}

/// `dcb -j [-s] pfc show dev X`: one object without spaces (iproute2's
/// json_writer unless `-p`), `prio_pfc` an array of booleans by priority
/// (`dcb_print_named_array`), the counters arrays of numbers; the writer's
/// destruction ends the line.
pub fn dcb_pfc_json(p: &Pfc, stats: bool) -> String {
    let list = |v: &[String]| v.join(",");
    let prio: Vec<String> = p.enabled.iter().map(|b| b.to_string()).collect();
    let mut out = format!(
        "{{\"pfc_cap\":8,\"macsec_bypass\":false,\"delay\":{},\"prio_pfc\":[{}]",
        p.delay,
        list(&prio)
    );
    if stats {
        for (name, v) in [("requests", &p.requests), ("indications", &p.indications)] {
            let v: Vec<String> = v.iter().map(u64::to_string).collect();
            let _ = write!(out, ",\"{name}\":[{}]", list(&v));
        }
    }
    out.push_str("}\n");
    out
}

/// The name `dcb` prints for a DSCP without `-N`: the entries of the
/// `rt_dsfield` file iproute2 ships, whose values are DSCP << 2.
fn dscp_name(d: u8) -> Option<&'static str> {
    Some(match d {
        0 => "default",
        8 => "CS1",
        10 => "AF11",
        12 => "AF12",
        14 => "AF13",
        16 => "CS2",
        18 => "AF21",
        20 => "AF22",
        22 => "AF23",
        24 => "CS3",
        26 => "AF31",
        28 => "AF32",
        30 => "AF33",
        32 => "CS4",
        34 => "AF41",
        36 => "AF42",
        38 => "AF43",
        40 => "CS5",
        46 => "EF",
        48 => "CS6",
        56 => "CS7",
        _ => return None,
    })
}

/// The DSCP entries of a NIC's APP table. mlx5 keeps one entry for every
/// DSCP while it trusts DSCP (`mlx5e_dcbnl_dscp_app` adds all 64 from its
/// `dscp2prio` when trust becomes DSCP, and `setapp` replaces them one by
/// one), so the table is the whole map, not only the DSCPs someone set;
/// trusting PCP it holds none.
pub fn dscp_app(trust_dscp: bool, dscp2prio: &[u8; 64]) -> Vec<(u8, u8)> {
    if !trust_dscp {
        return Vec::new();
    }
    (0u8..64).map(|d| (d, dscp2prio[usize::from(d)])).collect()
}

/// `dcb [-N] app show dev X` as text, for a table of DSCP entries sorted
/// by DSCP then priority (`dcb_app_table_sort`). An empty table prints
/// nothing at all.
pub fn dcb_app_text(entries: &[(u8, u8)], numeric: bool) -> String {
    if entries.is_empty() {
        return String::new();
    }
    let mut out = String::from("dscp-prio ");
    for &(d, p) in entries {
        match dscp_name(d).filter(|_| !numeric) {
            Some(name) => {
                let _ = write!(out, "{name}:{p} ");
            }
            None => {
                let _ = write!(out, "{d}:{p} ");
            }
        }
    }
    out.push('\n');
    out
}

/// `dcb -j app show dev X`: `[dscp, prio]` pairs, DSCP always numeric.
pub fn dcb_app_json(entries: &[(u8, u8)]) -> String {
    if entries.is_empty() {
        return "{}\n".into();
    }
    let pairs: Vec<String> = entries.iter().map(|(d, p)| format!("[{d},{p}]")).collect();
    format!("{{\"dscp_prio\":[{}]}}\n", pairs.join(","))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::counters::host_cfg::{parse_dcb_app, parse_dcb_pfc_json, parse_ethtool_link};
    use crate::switch::linux::config::parse_ethtool_link as parse_switch_link;
    use crate::switch::linux::counters::parse_dcb_pfc;

    fn view(driver: Driver, speed_mbps: u64, link_up: bool) -> LinkView<'static> {
        LinkView {
            name: "rdma0",
            driver,
            speed_mbps,
            link_up,
            pfc_any: true,
        }
    }

    #[test]
    fn ethtool_settings_round_trip_through_both_parsers() {
        for driver in [Driver::Mlx5, Driver::Mlxsw] {
            let text = ethtool_settings(&view(driver, 400_000, true));
            let s = parse_ethtool_link(&text).unwrap();
            assert_eq!(s.device.as_deref(), Some("rdma0"));
            assert_eq!(s.speed_mbps, Some(400_000));
            assert_eq!(s.lanes, Some(4));
            assert_eq!(s.duplex.as_deref(), Some("Full"));
            assert_eq!(s.auto_negotiation, Some(true));
            assert_eq!(s.port.as_deref(), Some("FIBRE"));
            assert_eq!(s.link_detected, Some(true));
            assert_eq!(s.supported_link_modes.len(), LINK_MODES.len(), "{text}");
            assert!(s
                .advertised_link_modes
                .contains(&"400000baseSR4/Full".to_string()));
            let l = parse_switch_link(&text).unwrap();
            assert_eq!(
                (l.speed_mbps, l.duplex.as_deref(), l.link_detected),
                (Some(400_000), Some("Full"), Some(true))
            );
            assert_eq!(text.contains("Wake-on"), driver == Driver::Mlx5);
        }
        // mlx5 prints the FEC modes it has; mlxsw reports none.
        let s = parse_ethtool_link(&ethtool_settings(&view(Driver::Mlx5, 400_000, true))).unwrap();
        assert_eq!(s.advertised_fec_modes, ["RS"]);
    }

    #[test]
    fn ethtool_settings_shows_a_lower_speed_and_a_dead_link() {
        let s = parse_ethtool_link(&ethtool_settings(&view(Driver::Mlx5, 200_000, true))).unwrap();
        assert_eq!((s.speed_mbps, s.lanes), (Some(200_000), Some(4)));

        let text = ethtool_settings(&view(Driver::Mlx5, 400_000, false));
        assert!(text.contains("\tSpeed: Unknown!\n\tDuplex: Unknown! (255)\n"));
        assert!(!text.contains("Lanes"));
        let s = parse_ethtool_link(&text).unwrap();
        assert_eq!(
            (s.speed_mbps, s.duplex, s.lanes, s.link_detected),
            (None, None, None, Some(false))
        );
        let l = parse_switch_link(&ethtool_settings(&view(Driver::Mlxsw, 400_000, false))).unwrap();
        assert_eq!((l.speed_mbps, l.link_detected), (None, Some(false)));
    }

    fn pfc() -> Pfc {
        let mut enabled = [false; 8];
        enabled[3] = true;
        enabled[4] = true;
        Pfc {
            enabled,
            delay: 7,
            requests: [0, 1, 2, 3, 4, 5, 6, 7],
            indications: [10, 11, 12, 13, 14, 15, 16, 17],
        }
    }

    #[test]
    fn dcb_pfc_json_and_text_read_back_alike() {
        let p = pfc();
        let json = dcb_pfc_json(&p, false);
        assert_eq!(
            json,
            "{\"pfc_cap\":8,\"macsec_bypass\":false,\"delay\":7,\"prio_pfc\":\
             [false,false,false,true,true,false,false,false]}\n"
        );
        let j = parse_dcb_pfc_json(&json).unwrap();
        assert_eq!(j.enabled(), [3, 4]);
        assert_eq!(
            (j.pfc_cap, j.delay, j.macsec_bypass),
            (Some(8), Some(7), Some(false))
        );
        assert_eq!(j.requests, [None; 8]);
        let t = parse_dcb_pfc(&dcb_pfc_text(&p, false)).unwrap();
        assert_eq!(t, j);

        let js = parse_dcb_pfc_json(&dcb_pfc_json(&p, true)).unwrap();
        let ts = parse_dcb_pfc(&dcb_pfc_text(&p, true)).unwrap();
        assert_eq!(js, ts);
        assert_eq!(js.requests[7], Some(7));
        assert_eq!(js.indications[0], Some(10));
    }

    #[test]
    fn dcb_app_prints_every_dscp_by_name_where_iproute2_has_one() {
        let mut map = [0u8; 64];
        for (d, p) in map.iter_mut().enumerate() {
            *p = (d >> 3) as u8;
        }
        map[26] = 3;
        map[48] = 6;
        let entries = dscp_app(true, &map);
        let text = dcb_app_text(&entries, false);
        assert!(text.starts_with("dscp-prio default:0 1:0 "), "{text}");
        assert!(text.contains(" AF31:3 "), "{text}");
        assert!(text.contains(" CS6:6 "), "{text}");
        assert!(text.ends_with(" 63:7 \n"), "{text}");
        for text in [text, dcb_app_text(&entries, true), dcb_app_json(&entries)] {
            let app = parse_dcb_app(&text).unwrap();
            assert_eq!(app.dscp_prio.len(), 64, "{text}");
            for d in 0..64u8 {
                assert_eq!(app.dscp(d), Some(map[usize::from(d)]), "dscp {d}");
            }
        }
        // Trust PCP: no DSCP entry, and dcb prints nothing.
        let none = dscp_app(false, &map);
        assert_eq!(dcb_app_text(&none, false), "");
        assert!(parse_dcb_app("").unwrap().dscp_prio.is_empty());
        assert!(parse_dcb_app(&dcb_app_json(&none))
            .unwrap()
            .dscp_prio
            .is_empty());
    }
}
