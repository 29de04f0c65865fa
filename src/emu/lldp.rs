//! What `lldpctl` prints on an emulated host or `linux` switch: lldpd's
//! (1.0.x) `json` and `json0` writers over the neighbours the model's cables
//! give each port. It decides nothing: who is plugged where is `world`'s
//! business (the cable as plugged, so `swapped_cables` shows on both sides);
//! a port whose link is down has no neighbour, as lldpd forgets the remote
//! ports of an interface that goes down.
//!
//! What each side advertises: a switch names its chassis and gives its port
//! as an `ifname` port id with the port name as description (what lldpd
//! does on Cumulus and on a plain Linux switch once `portidsubtype ifname`
//! is configured); a host runs lldpd's defaults, which per `lldpcli(8)`
//! ("configure lldp portidsubtype") are the interface's MAC address as port
//! id and its name as port description. Chassis MACs and neighbour ages are
//! made up, stable per name.

use std::fmt::Write as _;

use super::host_out::fnv;
use super::state::{Neighbor, NicConfig, PortConfig};

/// A JSON value as lldpd's writer holds it: objects keep their key order.
enum J {
    S(String),
    B(bool),
    O(Vec<(String, J)>),
    A(Vec<J>),
}

fn s(v: impl Into<String>) -> J {
    J::S(v.into())
}

fn o(kv: Vec<(&str, J)>) -> J {
    J::O(kv.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
}

/// lldpd's `json_element_dump`: two-space indent, `"key": value`, an empty
/// object as `{`, a line of spaces, `}`.
fn dump(out: &mut String, j: &J, indent: usize) {
    let quote = |t: &str| serde_json::to_string(t).unwrap_or_else(|_| "\"\"".into());
    match j {
        J::S(t) => out.push_str(&quote(t)),
        J::B(b) => out.push_str(if *b { "true" } else { "false" }),
        J::O(_) | J::A(_) => {
            let (open, close) = if matches!(j, J::O(_)) {
                ('{', '}')
            } else {
                ('[', ']')
            };
            let _ = write!(out, "{open}\n{:1$}", "", indent + 2);
            let mut first = true;
            let mut child = |out: &mut String, key: Option<&str>, v: &J| {
                if !first {
                    let _ = write!(out, ",\n{:1$}", "", indent + 2);
                }
                first = false;
                if let Some(k) = key {
                    let _ = write!(out, "{}: ", quote(k));
                }
                dump(out, v, indent + 2);
            };
            match j {
                J::O(kv) => kv.iter().for_each(|(k, v)| child(out, Some(k), v)),
                J::A(items) => items.iter().for_each(|v| child(out, None, v)),
                _ => {}
            }
            let _ = write!(out, "\n{:1$}{close}", "", indent);
        }
    }
}

/// One neighbour as lldpd holds it, before a writer shapes it.
struct Seen<'a> {
    /// The local interface it was heard on.
    local: &'a str,
    chassis_name: &'a str,
    chassis_mac: String,
    descr: String,
    mgmt: &'a str,
    caps: &'static [(&'static str, bool)],
    /// (subtype, value) of the port id.
    port_id: (&'static str, String),
    port_descr: &'a str,
}

const SWITCH_CAPS: &[(&str, bool)] = &[("Bridge", true), ("Router", true)];
/// lldpd on a host without IP forwarding or bridges is a station only.
const HOST_CAPS: &[(&str, bool)] = &[("Station", true)];

fn mac_text(m: [u8; 6]) -> String {
    m.iter()
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(":")
}

/// A locally administered MAC made up from a name.
fn made_up_mac(name: &str) -> String {
    let m = fnv(&[name]).to_be_bytes();
    mac_text([(m[0] & 0xfc) | 0x02, m[1], m[2], m[3], m[4], m[5]])
}

fn age(host: &str, local: &str) -> String {
    let age = fnv(&[host, local]) % 86_400;
    format!(
        "0 day, {:02}:{:02}:{:02}",
        age / 3600,
        age / 60 % 60,
        age % 60
    )
}

/// lldpd numbers remote chassis in the order it learns them.
fn rids<'a>(seen: &[Seen<'a>]) -> Vec<usize> {
    let mut names: Vec<&str> = Vec::new();
    seen.iter()
        .map(|n| match names.iter().position(|r| *r == n.chassis_name) {
            Some(i) => i + 1,
            None => {
                names.push(n.chassis_name);
                names.len()
            }
        })
        .collect()
}

/// A host's neighbours: the switch port of each NIC whose link is up.
fn host_seen<'a>(nics: &[&'a NicConfig]) -> Vec<Seen<'a>> {
    nics.iter()
        .filter(|nic| nic.link_up)
        .filter_map(|nic| {
            let (switch, port, mgmt) = nic.neighbor.as_ref()?;
            Some(Seen {
                local: &nic.netdev,
                chassis_name: switch,
                chassis_mac: made_up_mac(switch),
                descr: format!("rocegate emulated switch {switch}"),
                mgmt,
                caps: SWITCH_CAPS,
                port_id: ("ifname", port.clone()),
                port_descr: port,
            })
        })
        .collect()
}

/// A switch's neighbours: whatever is plugged into each port whose link is up.
fn switch_seen<'a>(ports: &[&'a PortConfig]) -> Vec<Seen<'a>> {
    ports
        .iter()
        .filter(|p| p.link_up)
        .filter_map(|p| {
            Some(match p.neighbor.as_ref()? {
                Neighbor::Host {
                    node,
                    netdev,
                    mac,
                    mgmt,
                } => Seen {
                    local: &p.name,
                    chassis_name: node,
                    chassis_mac: made_up_mac(node),
                    descr: format!("rocegate emulated host {node}"),
                    mgmt,
                    caps: HOST_CAPS,
                    port_id: ("mac", mac_text(*mac)),
                    port_descr: netdev,
                },
                Neighbor::Switch { name, port, mgmt } => Seen {
                    local: &p.name,
                    chassis_name: name,
                    chassis_mac: made_up_mac(name),
                    descr: format!("rocegate emulated switch {name}"),
                    mgmt,
                    caps: SWITCH_CAPS,
                    port_id: ("ifname", port.clone()),
                    port_descr: port,
                },
            })
        })
        .collect()
}

fn caps(c: &[(&str, bool)]) -> J {
    J::A(
        c.iter()
            .map(|(t, on)| o(vec![("type", s(*t)), ("enabled", J::B(*on))]))
            .collect(),
    )
}

/// lldpd's `json` writer: one-element lists collapse, a named element is
/// keyed by its name (one interface prints as an object, several as a list).
fn render_json(host: &str, seen: &[Seen]) -> String {
    let rid = rids(seen);
    let mut ifaces: Vec<J> = seen
        .iter()
        .zip(rid)
        .map(|(n, rid)| {
            let body = o(vec![
                ("via", s("LLDP")),
                ("rid", s(rid.to_string())),
                ("age", s(age(host, n.local))),
                (
                    "chassis",
                    o(vec![(
                        n.chassis_name,
                        o(vec![
                            (
                                "id",
                                o(vec![
                                    ("type", s("mac")),
                                    ("value", s(n.chassis_mac.clone())),
                                ]),
                            ),
                            ("descr", s(n.descr.clone())),
                            ("mgmt-ip", s(n.mgmt)),
                            ("mgmt-iface", s("2")),
                            ("capability", caps(n.caps)),
                        ]),
                    )]),
                ),
                (
                    "port",
                    o(vec![
                        (
                            "id",
                            o(vec![
                                ("type", s(n.port_id.0)),
                                ("value", s(n.port_id.1.clone())),
                            ]),
                        ),
                        ("descr", s(n.port_descr)),
                        ("ttl", s("120")),
                    ]),
                ),
            ]);
            o(vec![(n.local, body)])
        })
        .collect();
    let lldp = match ifaces.len() {
        0 => o(vec![]),
        1 => o(vec![("interface", ifaces.remove(0))]),
        _ => o(vec![("interface", J::A(ifaces))]),
    };
    finish(&o(vec![("lldp", lldp)]))
}

/// `{"value": v}` in a list: how `json0` prints a data tag.
fn v0(v: impl Into<String>) -> J {
    J::A(vec![o(vec![("value", s(v))])])
}

/// lldpd's `json0` writer: every tag a list, every data tag a list of
/// `{"value": …}`, names as `name` attributes, never as keys.
fn render_json0(host: &str, seen: &[Seen]) -> String {
    let rid = rids(seen);
    let ifaces: Vec<J> = seen
        .iter()
        .zip(rid)
        .map(|(n, rid)| {
            let id = |(t, v): (&str, String)| J::A(vec![o(vec![("type", s(t)), ("value", s(v))])]);
            o(vec![
                ("name", s(n.local)),
                ("via", s("LLDP")),
                ("rid", s(rid.to_string())),
                ("age", s(age(host, n.local))),
                (
                    "chassis",
                    J::A(vec![o(vec![
                        ("id", id(("mac", n.chassis_mac.clone()))),
                        ("name", v0(n.chassis_name)),
                        ("descr", v0(n.descr.clone())),
                        ("mgmt-ip", v0(n.mgmt)),
                        ("mgmt-iface", v0("2")),
                        ("capability", caps(n.caps)),
                    ])]),
                ),
                (
                    "port",
                    J::A(vec![o(vec![
                        ("id", id((n.port_id.0, n.port_id.1.clone()))),
                        ("descr", v0(n.port_descr)),
                        ("ttl", v0("120")),
                    ])]),
                ),
            ])
        })
        .collect();
    let lldp = if ifaces.is_empty() {
        o(vec![])
    } else {
        o(vec![("interface", J::A(ifaces))])
    };
    finish(&o(vec![("lldp", J::A(vec![lldp]))]))
}

fn finish(root: &J) -> String {
    let mut out = String::new();
    dump(&mut out, root, 0);
    // json_dump ends the document with a newline and json_end adds another.
    out.push_str("\n\n");
    out
}

/// `lldpctl -f json` on host `host`: every NIC with a neighbour, in order.
pub(crate) fn lldpctl_json(host: &str, nics: &[&NicConfig]) -> String {
    render_json(host, &host_seen(nics))
}

/// `lldpctl -f json0` on host `host`.
pub(crate) fn lldpctl_json0(host: &str, nics: &[&NicConfig]) -> String {
    render_json0(host, &host_seen(nics))
}

/// `lldpctl -f json` on switch `switch`: every port with a neighbour, in
/// the order given.
pub(crate) fn switch_lldpctl_json(switch: &str, ports: &[&PortConfig]) -> String {
    render_json(switch, &switch_seen(ports))
}

/// `lldpctl -f json0` on switch `switch`.
pub(crate) fn switch_lldpctl_json0(switch: &str, ports: &[&PortConfig]) -> String {
    render_json0(switch, &switch_seen(ports))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::counters::host::parse_lldpctl_json;

    fn cfg() -> NicConfig {
        NicConfig {
            netdev: "eth2".into(),
            device: "mlx5_2".into(),
            speed_mbps: 400_000,
            link_up: true,
            admin_up: true,
            mtu: 4096,
            driver_version: "24.10-1.1.4".into(),
            firmware: "28.39.1002".into(),
            bus_info: "0000:1a:00.0".into(),
            pfc: [false; 8],
            trust_dscp: true,
            dscp2prio: [0; 64],
            neighbor: Some(("leaf1".into(), "Ethernet8".into(), "10.0.0.11".into())),
            mac: [0x02, 0, 0, 0, 0, 1],
        }
    }

    fn port(name: &str, neighbor: Option<Neighbor>) -> PortConfig {
        PortConfig {
            name: name.into(),
            speed_mbps: 400_000,
            link_up: true,
            admin_up: true,
            mtu: 9216,
            pfc: [false; 8],
            ecn: [None; 8],
            neighbor,
        }
    }

    #[test]
    fn lldpctl_json_round_trip_none_one_several() {
        let a = cfg();
        let mut b = cfg();
        b.netdev = "eth3".into();
        b.neighbor = Some(("leaf2".into(), "Ethernet12".into(), "10.0.0.12".into()));
        let mut lone = cfg();
        lone.netdev = "eth9".into();
        lone.neighbor = None;

        let none = lldpctl_json("gpu01", &[&lone]);
        assert_eq!(none, "{\n  \"lldp\": {\n    \n  }\n}\n\n");
        assert!(parse_lldpctl_json(&none).unwrap().is_empty());

        let single = lldpctl_json("gpu01", &[&lone, &a]);
        assert!(
            single.contains("\"interface\": {\n      \"eth2\": {"),
            "{single}"
        );
        let n = parse_lldpctl_json(&single).unwrap();
        assert_eq!(n.len(), 1);
        assert_eq!(n[0].interface, "eth2");
        assert_eq!(n[0].chassis_name.as_deref(), Some("leaf1"));
        assert_eq!(n[0].port_id, "Ethernet8");
        assert_eq!(n[0].port_descr.as_deref(), Some("Ethernet8"));
        assert_eq!(n[0].mgmt_ip.as_deref(), Some("10.0.0.11"));

        let several = lldpctl_json("gpu01", &[&a, &lone, &b]);
        assert!(several.contains("\"interface\": [\n"), "{several}");
        let n = parse_lldpctl_json(&several).unwrap();
        let got: Vec<(&str, Option<&str>, &str)> = n
            .iter()
            .map(|n| {
                (
                    n.interface.as_str(),
                    n.chassis_name.as_deref(),
                    n.port_id.as_str(),
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                ("eth2", Some("leaf1"), "Ethernet8"),
                ("eth3", Some("leaf2"), "Ethernet12")
            ]
        );
        assert_ne!(n[0].chassis_id, n[1].chassis_id);
        // Same input, same text.
        assert_eq!(several, lldpctl_json("gpu01", &[&a, &lone, &b]));
    }

    #[test]
    fn json0_round_trip_keeps_every_list() {
        let a = cfg();
        let mut b = cfg();
        b.netdev = "eth3".into();
        b.neighbor = Some(("leaf2".into(), "swp12".into(), "10.0.0.12".into()));
        let mut down = cfg();
        down.netdev = "eth4".into();
        down.link_up = false;

        let none = lldpctl_json0("gpu01", &[&down]);
        assert_eq!(none, "{\n  \"lldp\": [\n    {\n      \n    }\n  ]\n}\n\n");
        assert!(parse_lldpctl_json(&none).unwrap().is_empty());

        // One neighbour is still a list of one: json0 never collapses.
        let one = lldpctl_json0("gpu01", &[&a, &down]);
        assert!(one.contains("\"interface\": [\n"), "{one}");
        assert!(one.contains("\"name\": [\n"), "{one}");
        let v: serde_json::Value = serde_json::from_str(&one).unwrap();
        let i = &v["lldp"][0]["interface"][0];
        assert_eq!(i["name"], "eth2");
        assert_eq!(i["chassis"][0]["name"][0]["value"], "leaf1");
        assert_eq!(i["chassis"][0]["id"][0]["type"], "mac");
        assert_eq!(i["port"][0]["id"][0]["type"], "ifname");
        assert_eq!(i["port"][0]["id"][0]["value"], "Ethernet8");
        assert_eq!(i["chassis"][0]["mgmt-ip"][0]["value"], "10.0.0.11");

        let n = parse_lldpctl_json(&lldpctl_json0("gpu01", &[&a, &down, &b])).unwrap();
        let got: Vec<(&str, Option<&str>, &str, Option<&str>)> = n
            .iter()
            .map(|n| {
                (
                    n.interface.as_str(),
                    n.chassis_name.as_deref(),
                    n.port_id.as_str(),
                    n.mgmt_ip.as_deref(),
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                ("eth2", Some("leaf1"), "Ethernet8", Some("10.0.0.11")),
                ("eth3", Some("leaf2"), "swp12", Some("10.0.0.12"))
            ]
        );
        // The same neighbour through either writer.
        let j = parse_lldpctl_json(&lldpctl_json("gpu01", &[&a, &down, &b])).unwrap();
        assert_eq!(n, j);
    }

    #[test]
    fn switch_sees_hosts_by_mac_and_switches_by_ifname() {
        let host = port(
            "swp3",
            Some(Neighbor::Host {
                node: "gpu003".into(),
                netdev: "rdma2".into(),
                mac: [0x02, 0x4e, 0, 0, 0, 0x13],
                mgmt: "gpu003.mgmt".into(),
            }),
        );
        let spine = port(
            "swp33",
            Some(Neighbor::Switch {
                name: "spine1".into(),
                port: "swp5".into(),
                mgmt: "spine1.mgmt".into(),
            }),
        );
        let empty = port("swp4", None);
        let mut dark = host.clone();
        dark.name = "swp5".into();
        dark.link_up = false;
        let ports = [&host, &empty, &dark, &spine];
        for text in [
            switch_lldpctl_json0("r0-leaf1", &ports),
            switch_lldpctl_json("r0-leaf1", &ports),
        ] {
            let n = parse_lldpctl_json(&text).unwrap();
            assert_eq!(n.len(), 2, "{text}");
            assert_eq!(n[0].interface, "swp3");
            assert_eq!(n[0].chassis_name.as_deref(), Some("gpu003"));
            assert_eq!(n[0].port_id, "02:4e:00:00:00:13");
            assert_eq!(n[0].port_descr.as_deref(), Some("rdma2"));
            assert_eq!(n[0].mgmt_ip.as_deref(), Some("gpu003.mgmt"));
            assert_eq!(n[1].interface, "swp33");
            assert_eq!(n[1].chassis_name.as_deref(), Some("spine1"));
            assert_eq!(n[1].port_id, "swp5");
            assert_ne!(n[0].chassis_id, n[1].chassis_id);
        }
        let v: serde_json::Value =
            serde_json::from_str(&switch_lldpctl_json0("r0-leaf1", &ports)).unwrap();
        let caps = &v["lldp"][0]["interface"][0]["chassis"][0]["capability"];
        assert_eq!(caps[0]["type"], "Station");
    }
}
