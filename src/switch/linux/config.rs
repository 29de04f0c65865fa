//! The `linux` platform's configuration reads for the audit. Per port:
//! `dcb pfc show dev P` (PFC per priority), `tc -s -d qdisc show dev P`
//! (each band's `red … ecn` thresholds, placed on its traffic class the way
//! mlxsw does), `ip -j link show dev P` (MTU, carrier) and `ethtool P`
//! (speed, `Link detected`); once, `uname -r` (the kernel carries mlxsw, so
//! it is the NOS version).
//!
//! mlxsw has no PFC watchdog, and prints no PFC Xoff threshold in bytes
//! (it derives Xoff from the port's headroom buffer), so both facts are
//! `NotAvailable` with the reason.

use super::counters::{parse_dcb_pfc, parse_ip_link_json, parse_tc_qdisc, LinkInfo};
use crate::counters::ParseError;
use crate::switch::config::fact;
use crate::switch::{Answer, EcnQueue, Fact, PortSettings, Query, SwitchConfig};

/// Per port, in this order.
const PER_PORT: usize = 4;

pub fn queries(ports: &[String]) -> Vec<Query> {
    let mut q = vec![Query::argv(&["uname", "-r"])];
    for p in ports {
        let p = p.as_str();
        q.push(Query::argv(&["dcb", "pfc", "show", "dev", p]));
        q.push(Query::argv(&["tc", "-s", "-d", "qdisc", "show", "dev", p]));
        q.push(Query::argv(&["ip", "-j", "link", "show", "dev", p]));
        q.push(Query::argv(&["ethtool", p]));
    }
    q
}

/// What `ethtool DEV` (no option) says about the link.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EthtoolLink {
    /// `None` when the driver prints `Speed: Unknown!` (no link, or a
    /// driver that does not know).
    pub speed_mbps: Option<u64>,
    pub duplex: Option<String>,
    /// `Link detected: yes|no`; absent when ethtool could not ask.
    pub link_detected: Option<bool>,
}

/// Parses `ethtool DEV`: `Settings for DEV:`, then indented `Key: value`
/// lines (the link-mode lists continue over unkeyed lines, skipped).
pub fn parse_ethtool_link(text: &str) -> Result<EthtoolLink, ParseError> {
    const TOOL: &str = "ethtool";
    let mut lines = text.lines().filter(|l| !l.trim().is_empty());
    match lines.next() {
        Some(l) if l.trim_start().starts_with("Settings for ") => {}
        Some(l) => {
            return Err(ParseError(format!(
                "{TOOL}: expected `Settings for DEV:`, got `{}`",
                l.trim()
            )))
        }
        None => return Err(ParseError(format!("{TOOL}: empty output"))),
    }
    let mut link = EthtoolLink::default();
    for line in lines {
        let Some((k, v)) = line.trim().split_once(':') else {
            continue;
        };
        let v = v.trim();
        match k.trim() {
            "Speed" => {
                link.speed_mbps = match v.strip_suffix("Mb/s") {
                    Some(n) => {
                        Some(n.trim().parse().map_err(|_| {
                            ParseError(format!("{TOOL}: `Speed: {v}` is not a speed"))
                        })?)
                    }
                    None if v.starts_with("Unknown") => None,
                    None => return Err(ParseError(format!("{TOOL}: `Speed: {v}` is not a speed"))),
                }
            }
            "Duplex" => link.duplex = Some(v.to_string()),
            "Link detected" => {
                link.link_detected = match v {
                    "yes" => Some(true),
                    "no" => Some(false),
                    _ => {
                        return Err(ParseError(format!(
                            "{TOOL}: `Link detected: {v}` is neither yes nor no"
                        )))
                    }
                }
            }
            _ => {}
        }
    }
    Ok(link)
}

fn one_link(port: &str, links: Vec<LinkInfo>) -> Result<LinkInfo, String> {
    links
        .into_iter()
        .find(|l| l.ifname == port)
        .ok_or_else(|| format!("no interface {port} in the output"))
}

pub fn parse(switch: &str, ports: &[String], answers: &[Answer]) -> SwitchConfig {
    let qs = queries(ports);
    let at = |i: usize| (&qs[i], answers.get(i));
    let (q, a) = at(0);
    let nos_version = fact(
        switch,
        q,
        a,
        |t| Ok(t.trim().to_string()),
        |v| {
            if v.is_empty() || v.contains(char::is_whitespace) {
                Err("expected one kernel release".to_string())
            } else {
                Ok(v)
            }
        },
    );
    let mut out = Vec::new();
    for (k, port) in ports.iter().enumerate() {
        let base = 1 + k * PER_PORT;
        let (q, a) = at(base);
        let pfc = fact(switch, q, a, parse_dcb_pfc, |c| {
            if c.prio_pfc.iter().all(Option::is_none) {
                return Err("no `prio-pfc` in the output".into());
            }
            Ok(std::array::from_fn(|p| c.prio_pfc[p] == Some(true)))
        });
        let (q, a) = at(base + 1);
        let ecn = fact(switch, q, a, parse_tc_qdisc, |bands| {
            let mut v: Vec<EcnQueue> = bands
                .into_iter()
                .filter_map(|b| {
                    Some(EcnQueue {
                        tc: b.tc?,
                        min_bytes: b.min_bytes,
                        max_bytes: b.max_bytes,
                        ecn: b.ecn,
                    })
                })
                .collect();
            v.sort_by_key(|e| e.tc);
            Ok(v)
        });
        let (q, a) = at(base + 2);
        let link = fact(switch, q, a, parse_ip_link_json, |l| one_link(port, l));
        let mtu = match &link {
            Fact::Known(l) => match l.mtu {
                Some(m) => Fact::Known(m),
                None => Fact::Failed(format!(
                    "{switch}: `{}` printed no mtu for {port}",
                    q.display()
                )),
            },
            other => other.clone().map(|_| 0),
        };
        let (qe, ae) = at(base + 3);
        let eth = fact(switch, qe, ae, parse_ethtool_link, Ok);
        // Carrier: ethtool's `Link detected`, else ip's LOWER_UP flag.
        let link_up = match (&eth, &link) {
            (
                Fact::Known(EthtoolLink {
                    link_detected: Some(up),
                    ..
                }),
                _,
            ) => Fact::Known(*up),
            (_, Fact::Known(l)) => Fact::Known(l.lower_up),
            (_, other) => other.clone().map(|_| false),
        };
        let speed_mbps = match eth {
            Fact::Known(EthtoolLink {
                speed_mbps: Some(s),
                ..
            }) => Fact::Known(s),
            Fact::Known(_) => Fact::NotAvailable {
                tried: vec![qe.display()],
                why: format!(
                    "{switch}: {port} reports no speed (`Speed: Unknown!`){}",
                    if link_up.known() == Some(&false) {
                        ": the link is down"
                    } else {
                        ""
                    }
                ),
            },
            other => other.map(|_| 0),
        };
        out.push(PortSettings {
            name: port.clone(),
            link_up,
            speed_mbps,
            mtu,
            pfc,
            ecn,
            pfc_xoff_bytes: Fact::NotAvailable {
                tried: Vec::new(),
                why: format!(
                    "{switch}: the linux platform (mlxsw) prints no PFC Xoff threshold in bytes: it derives Xoff from {port}'s headroom buffer"
                ),
            },
        });
    }
    SwitchConfig {
        nos_version,
        pfc_watchdog: Fact::NotAvailable {
            tried: Vec::new(),
            why: format!("{switch}: the linux platform (mlxsw) has no PFC watchdog"),
        },
        dscp_prio: crate::switch::config::dscp_not_read(
            switch,
            "mlxsw classifies by the dcb APP table, `dcb app show dev PORT`, which is not read",
        ),
        ports: out,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // `ethtool swp1` on a Spectrum port, in the layout ethtool 6.1's
    // `dump_link_usettings` prints (abridged: the link-mode lists).
    const ETHTOOL_UP: &str = "Settings for swp1:
\tSupported ports: [ FIBRE ]
\tSupported link modes:   100000baseCR4/Full
\t                        100000baseSR4/Full
\tSupported pause frame use: Symmetric Receive-only
\tSupports auto-negotiation: Yes
\tAdvertised link modes:  100000baseCR4/Full
\tSpeed: 100000Mb/s
\tDuplex: Full
\tAuto-negotiation: on
\tPort: Direct Attach Copper
\tPHYAD: 0
\tTransceiver: internal
\tLink detected: yes
";

    const ETHTOOL_DOWN: &str = "Settings for swp2:
\tSupported ports: [ FIBRE ]
\tSpeed: Unknown!
\tDuplex: Unknown! (255)
\tAuto-negotiation: on
\tLink detected: no
";

    // `dcb pfc show dev swpN` (iproute2 `dcb_pfc.c` layout).
    const PFC3: &str = "pfc-cap 8 macsec-bypass off delay 0\nprio-pfc 0:off 1:off 2:off 3:on 4:off 5:off 6:off 7:off\n";
    const PFC_OFF: &str = "pfc-cap 8 macsec-bypass off delay 0\nprio-pfc 0:off 1:off 2:off 3:off 4:off 5:off 6:off 7:off\n";

    // An offloaded root ets with a red on band 4 (TC 3).
    fn tc(min: &str, max: &str, ecn: bool) -> String {
        format!(
            "qdisc ets 1: dev swp1 root refcnt 9 offloaded bands 8 strict 8 priomap 7 7 7 4 7 7 7 7 7 7 7 7 7 7 7 7\n Sent 0 bytes 0 pkt (dropped 0, overlimits 0 requeues 0)\n backlog 0b 0p requeues 0\nqdisc red 15: dev swp1 parent 1:5 offloaded limit 1000000b min {min} max {max} {}probability 0.1\n Sent 0 bytes 0 pkt (dropped 0, overlimits 0 requeues 0)\n  marked 0 early 0 pdrop 0 other 0\n",
            if ecn { "ecn " } else { "" }
        )
    }

    fn ip(port: &str, up: bool) -> String {
        let (flags, oper) = if up {
            ("\"BROADCAST\",\"MULTICAST\",\"UP\",\"LOWER_UP\"", "UP")
        } else {
            ("\"NO-CARRIER\",\"BROADCAST\",\"MULTICAST\",\"UP\"", "DOWN")
        };
        format!(
            "[{{\"ifindex\":5,\"ifname\":\"{port}\",\"flags\":[{flags}],\"mtu\":9216,\"qdisc\":\"ets\",\"operstate\":\"{oper}\",\"linkmode\":\"DEFAULT\",\"group\":\"default\",\"txqlen\":1000,\"link_type\":\"ether\",\"address\":\"7c:fe:90:f5:6a:81\",\"broadcast\":\"ff:ff:ff:ff:ff:ff\"}}]\n"
        )
    }

    fn ok(text: impl Into<String>) -> Answer {
        Answer {
            exit: Some(0),
            text: text.into(),
        }
    }

    fn ports(names: &[&str]) -> Vec<String> {
        names.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn queries_are_one_uname_then_four_per_port() {
        let q: Vec<String> = queries(&ports(&["swp1", "swp2"]))
            .iter()
            .map(Query::display)
            .collect();
        assert_eq!(q.len(), 1 + 2 * PER_PORT);
        assert_eq!(q[0], "uname -r");
        assert_eq!(q[1], "dcb pfc show dev swp1");
        assert_eq!(q[2], "tc -s -d qdisc show dev swp1");
        assert_eq!(q[3], "ip -j link show dev swp1");
        assert_eq!(q[4], "ethtool swp1");
        assert_eq!(q[8], "ethtool swp2");
    }

    #[test]
    fn a_healthy_port() {
        let p = ports(&["swp1"]);
        let a = vec![
            ok("6.1.0-18-amd64\n"),
            ok(PFC3),
            ok(tc("150Kb", "1500Kb", true)),
            ok(ip("swp1", true)),
            ok(ETHTOOL_UP),
        ];
        let c = parse("leaf1", &p, &a);
        assert_eq!(c.nos_version, Fact::Known("6.1.0-18-amd64".into()));
        assert!(
            matches!(&c.pfc_watchdog, Fact::NotAvailable { why, .. } if why.contains("leaf1") && why.contains("no PFC watchdog"))
        );
        let s = &c.ports[0];
        assert_eq!(s.name, "swp1");
        assert_eq!(s.link_up, Fact::Known(true));
        assert_eq!(s.speed_mbps, Fact::Known(100_000));
        assert_eq!(s.mtu, Fact::Known(9216));
        let mut want = [false; 8];
        want[3] = true;
        assert_eq!(s.pfc, Fact::Known(want));
        assert_eq!(
            s.ecn,
            Fact::Known(vec![EcnQueue {
                tc: 3,
                min_bytes: 150 * 1024,
                max_bytes: 1500 * 1024,
                ecn: true
            }])
        );
        assert!(
            matches!(&s.pfc_xoff_bytes, Fact::NotAvailable { why, .. } if why.contains("Xoff"))
        );
    }

    #[test]
    fn pfc_off_ecn_changed_and_a_down_port() {
        let p = ports(&["swp1", "swp2"]);
        let a = vec![
            ok("6.1.0\n"),
            ok(PFC_OFF),
            ok(tc("400Kb", "4Mb", false)),
            ok(ip("swp1", true)),
            ok(ETHTOOL_UP),
            ok(PFC3),
            ok("qdisc noqueue 0: dev swp2 root refcnt 2\n Sent 0 bytes 0 pkt (dropped 0, overlimits 0 requeues 0)\n"),
            ok(ip("swp2", false)),
            ok(ETHTOOL_DOWN),
        ];
        let c = parse("leaf1", &p, &a);
        let s = &c.ports[0];
        assert_eq!(s.pfc, Fact::Known([false; 8]));
        assert_eq!(
            s.ecn,
            Fact::Known(vec![EcnQueue {
                tc: 3,
                min_bytes: 400 * 1024,
                max_bytes: 4 << 20,
                ecn: false
            }])
        );
        let d = &c.ports[1];
        assert_eq!(d.name, "swp2");
        assert_eq!(d.link_up, Fact::Known(false));
        assert_eq!(d.ecn, Fact::Known(Vec::new()), "no red: no ECN configured");
        assert!(
            matches!(&d.speed_mbps, Fact::NotAvailable { tried, why } if tried == &["ethtool swp2"] && why.contains("the link is down")),
            "{:?}",
            d.speed_mbps
        );
    }

    #[test]
    fn missing_tools_unsupported_reads_and_garbage_name_the_switch_and_command() {
        let p = ports(&["swp1"]);
        let a = vec![
            Answer {
                exit: None,
                text: "6.1".into(),
            },
            Answer {
                exit: Some(127),
                text: "sh: 1: dcb: not found\n".into(),
            },
            Answer {
                exit: Some(2),
                text: "Error: Cannot find device \"swp1\"\n".into(),
            },
            ok("{not json"),
            Answer {
                exit: Some(1),
                text: "Attribute read: Operation not supported\n".into(),
            },
        ];
        let c = parse("leaf7", &p, &a);
        assert!(
            matches!(&c.nos_version, Fact::Failed(e) if e.starts_with("leaf7: `uname -r` was cut off"))
        );
        let s = &c.ports[0];
        match &s.pfc {
            Fact::NotAvailable { tried, why } => {
                assert_eq!(tried, &["dcb pfc show dev swp1"]);
                assert!(why.starts_with("leaf7: `dcb` is not installed"), "{why}");
                assert!(why.contains("dcb: not found"), "{why}");
            }
            other => panic!("{other:?}"),
        }
        assert!(
            matches!(&s.ecn, Fact::Failed(e) if e.contains("leaf7: `tc -s -d qdisc show dev swp1` failed (exit 2)") && e.contains("Cannot find device")),
            "{:?}",
            s.ecn
        );
        assert!(
            matches!(&s.mtu, Fact::Failed(e) if e.starts_with("leaf7: `ip -j link show dev swp1`: ip -j link show: not the JSON") && e.contains("{not json")),
            "{:?}",
            s.mtu
        );
        assert!(
            matches!(&s.speed_mbps, Fact::NotAvailable { why, .. } if why.contains("does not support `ethtool swp1`"))
        );
        // Neither ethtool nor ip answered: carrier unknown, not down.
        assert!(matches!(&s.link_up, Fact::Failed(_)), "{:?}", s.link_up);
        // Fewer answers than queries (a cut-off batch): failed, not a panic.
        let c = parse("leaf7", &p, &[]);
        assert!(matches!(&c.ports[0].pfc, Fact::Failed(e) if e.contains("got no answer")));
    }

    #[test]
    fn ethtool_link_settings() {
        let l = parse_ethtool_link(ETHTOOL_UP).unwrap();
        assert_eq!(l.speed_mbps, Some(100_000));
        assert_eq!(l.duplex.as_deref(), Some("Full"));
        assert_eq!(l.link_detected, Some(true));
        let l = parse_ethtool_link(ETHTOOL_DOWN).unwrap();
        assert_eq!((l.speed_mbps, l.link_detected), (None, Some(false)));
        assert!(parse_ethtool_link("").is_err());
        assert!(parse_ethtool_link("NIC statistics:\n rx: 1\n").is_err());
        assert!(parse_ethtool_link("Settings for x:\n\tSpeed: fastMb/s\n").is_err());
        assert!(parse_ethtool_link("Settings for x:\n\tLink detected: maybe\n").is_err());
    }
}
