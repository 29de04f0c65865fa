//! What an emulated SONiC switch prints for the command lines the `sonic`
//! platform sends (`switch::sonic`): its counter reads, each of every port
//! (`portstat -r`, `pfcstat -s all`, `queuestat`, the persistent PG and
//! unicast queue watermarks, `pfcwd show stats -e`, `wredstat`, `show
//! interfaces flap`; after `show interfaces alias` for a port named by its
//! `etpN` alias), the
//! CONFIG_DB dump (`sonic-cfggen -d
//! --print-data`), `show interfaces status`, `/etc/sonic/sonic_version.yml`,
//! lldpd in its container (`docker exec lldp lldpctl -f json0`) and the
//! fault driver's prior-state script (the status table, FRR's `show bgp
//! vrf all summary json`), from the same model the `linux` switches print
//! from. The one change it reads is `config interface shutdown|startup
//! PORT`; `systemctl stop|start bgp` and `vtysh` are FRR's and answered as
//! on a linux switch (`probe`).
//!
//! It parses no answer: the platform does, on what this prints. Not
//! printed: rates (`RX_BPS`, `RX_UTIL`, … are `N/A`: portstat computes
//! them from a poll the model does not keep) and drop bytes (`N/A`: the
//! model counts dropped packets only).
//!
//! From the model: the unicast queue watermarks are the egress queues'
//! peak occupancy (`tc_watermark_bytes`); the PG (ingress) watermarks are
//! `N/A`, the model keeps no ingress occupancy. ECN marks are the queues'
//! marked packets (`tc_ecn_marked`); WRED drops are 0 because the model's
//! WRED profiles mark (`ecn_all`) instead of dropping; byte columns are
//! `N/A`. The flap count is orchagent's (one per oper change: twice the
//! model's link-downs, plus one while the link is up, since a port starts
//! down at boot); its timestamps are `N/A` (no wall clock in the model).
//! The PFC watchdog rows are those of the lossless queues (PFC on) with
//! the model's storms: none, since no defect of the model holds a queue
//! paused past the watchdog's 200 ms; TX/RX are the queue's packets and
//! drops.

use std::collections::BTreeMap;

use serde_json::{json, Map, Value};

use crate::config::inventory::{SwitchDriver, SwitchRole};
use crate::config::model::{Inventory, SwitchId};

use crate::config::model::End;
use crate::switch::fault::{Action, Driver};
use crate::switch::sonic::platform::{is_port_name, WITH_ALIASES};
use crate::switch::sonic::Sonic;
use crate::switch::Query;

use super::api_out::{asn, count};
use super::batch::FaultCmd;
use super::fabric::Fabric;
use super::lldp;
use super::probe::Probe;
use super::world::World;
use super::Parsed;

/// The SONiC the emulated switches run unless the inventory's
/// `versions.nos` names one.
/// 202505: the first release with `wredstat` and `show interfaces flap`.
const SONIC_VERSION: &str = "SONiC.202505.1-b7d2c5e1";

/// A read of the sonic platform, resolved to what it reads.
#[derive(Debug, Clone, PartialEq)]
pub enum Read {
    /// `portstat -r [-i PORT]`: the ports' rows (every port without `-i`).
    Portstat(Vec<usize>),
    /// `pfcstat -s all`: every port of the switch.
    Pfcstat,
    /// `queuestat [-p PORT]`.
    Queuestat(Vec<usize>),
    /// `watermarkstat -p -t pg_shared` (`true`) or `q_shared_uni`: every
    /// port of the switch.
    Watermark { pg: bool },
    /// `pfcwd show stats -e [PORT:Q …]`: the named queues that exist, or
    /// every watched queue.
    Pfcwd(Vec<(usize, usize)>),
    /// `wredstat [-p PORT]`.
    Wred(Vec<usize>),
    /// `show interfaces flap [PORT]`.
    Flap(Vec<usize>),
    /// A read after SONiC's alias table (the platform's `WITH_ALIASES`):
    /// the table, the marker, then the read's output.
    Aliased(Box<Read>),
    /// `show interfaces alias`: every port's name and alias.
    Aliases,
    /// `sonic-cfggen -d --print-data`.
    ConfigDb,
    /// `show interfaces status`.
    Status,
    /// `cat /etc/sonic/sonic_version.yml`.
    Version,
    /// `docker exec lldp lldpctl -f json0`.
    Lldp,
    /// The fault driver's prior-state read (`Driver::read_prior`): the
    /// status table, the addresses of the port a withdrawn session runs
    /// over, FRR's BGP summary.
    Prior { addr_of: Option<usize> },
}

fn done(stdout: String, stderr: String, exit: i32) -> Parsed {
    Parsed::Done {
        stdout,
        stderr,
        exit,
        secs: 0.05,
    }
}

/// The port of switch `s` named `name` as SONiC compares names (case and
/// surrounding space aside).
fn port(world: &World, s: SwitchId, name: &str) -> Option<usize> {
    let want = name.trim().to_ascii_lowercase();
    (0..world.port_cfg.len())
        .find(|&i| world.port_switch[i] == Some(s) && world.port_cfg[i].name.to_lowercase() == want)
}

/// The port a counter read names: by its SONiC name when it is shaped
/// like one (as the resolver script decides), else by its alias (`etpN`,
/// the front-panel position, as CONFIG_DB and `show interfaces status`
/// print it).
fn named(world: &World, s: SwitchId, name: &str) -> Option<usize> {
    if is_port_name(name) {
        return port(world, s, name);
    }
    let k: usize = name.strip_prefix("etp")?.parse().ok()?;
    ports(world, s).get(k.checked_sub(1)?).copied()
}

/// Port indices of switch `s` in the order SONiC lists them (`Ethernet2`
/// before `Ethernet10`).
fn ports(world: &World, s: SwitchId) -> Vec<usize> {
    let mut v: Vec<usize> = (0..world.port_cfg.len())
        .filter(|&i| world.port_switch[i] == Some(s))
        .collect();
    v.sort_by_key(|&i| {
        let n = &world.port_cfg[i].name;
        let digits = n.trim_start_matches(|c: char| !c.is_ascii_digit());
        (
            n[..n.len() - digits.len()].to_string(),
            digits.parse::<u64>().unwrap_or(0),
        )
    });
    v
}

/// Resolves a command on a `sonic` switch (wrappers such as `sudo -n` and
/// `env VAR=…` already stripped). `None`: not one of its commands, or not
/// a sonic switch; FRR's and the other linux tools are `probe`'s.
pub fn parse(inv: &Inventory, world: &World, s: SwitchId, argv: &[String]) -> Option<Parsed> {
    if inv.switches[s].driver != SwitchDriver::Sonic {
        return None;
    }
    if let Some(read) = prior(world, s, argv) {
        return Some(Parsed::Probe(Probe::Sonic(s, read)));
    }
    if let [sh, c, script, tag, tool @ ..] = argv {
        if sh == "sh" && c == "-c" && script == WITH_ALIASES && tag == "rocegate" {
            return match parse(inv, world, s, tool) {
                Some(Parsed::Probe(Probe::Sonic(_, read))) => Some(Parsed::Probe(Probe::Sonic(
                    s,
                    Read::Aliased(Box::new(read)),
                ))),
                Some(other) => Some(other),
                None => Some(done(
                    String::new(),
                    format!(
                        "sh: 1: exec: {}: not found\n",
                        tool.first().map_or("", String::as_str)
                    ),
                    127,
                )),
            };
        }
    }
    let w: Vec<&str> = argv.iter().map(String::as_str).collect();
    // portstat's and queuestat's answer to a port the switch does not have.
    let unknown = |tool: &str, x: &str| {
        let text = match tool {
            "portstat" => format!("Interface {x} does not exist\n"),
            _ => format!("Port {x} doesn't exist!\n"),
        };
        Some(done(String::new(), text, 1))
    };
    let read = match w.as_slice() {
        ["portstat", "-r"] => Read::Portstat(ports(world, s)),
        ["portstat", "-r", "-i", x] | ["portstat", "-i", x, "-r"] => match port(world, s, x) {
            Some(p) => Read::Portstat(vec![p]),
            None => return unknown("portstat", x),
        },
        ["pfcstat", "-s", "all"] | ["pfcstat"] => Read::Pfcstat,
        ["queuestat"] => Read::Queuestat(ports(world, s)),
        ["queuestat", "-p", x] => match port(world, s, x) {
            Some(p) => Read::Queuestat(vec![p]),
            None => return unknown("queuestat", x),
        },
        ["watermarkstat", "-p", "-t", t @ ("pg_shared" | "q_shared_uni")] => Read::Watermark {
            pg: *t == "pg_shared",
        },
        ["pfcwd", "show", "stats", "-e"] => Read::Pfcwd(
            ports(world, s)
                .into_iter()
                .flat_map(|p| (0..8).map(move |q| (p, q)))
                .filter(|&(p, q)| world.port_cfg[p].pfc[q])
                .collect(),
        ),
        ["pfcwd", "show", "stats", "-e", queues @ ..] => Read::Pfcwd(
            queues
                .iter()
                .filter_map(|q| {
                    let (x, n) = q.rsplit_once(':')?;
                    let n: usize = n.parse().ok().filter(|n| *n < 8)?;
                    Some((port(world, s, x)?, n))
                })
                .collect(),
        ),
        ["wredstat"] => Read::Wred(ports(world, s)),
        ["wredstat", "-p", x] => match port(world, s, x) {
            Some(p) => Read::Wred(vec![p]),
            None => return unknown("wredstat", x),
        },
        ["show", "interfaces", "flap"] => Read::Flap(ports(world, s)),
        ["show", "interfaces", "alias"] => Read::Aliases,
        ["show", "interfaces", "flap", x] => match port(world, s, x) {
            Some(p) => Read::Flap(vec![p]),
            // click's `ctx.fail`.
            None => {
                return Some(done(
                    String::new(),
                    format!("Usage: show interfaces flap [OPTIONS] [INTERFACENAME]\nTry \"show interfaces flap -h\" for help.\n\nError: Invalid interface name {x}\n"),
                    2,
                ))
            }
        },
        ["sonic-cfggen", "-d", "--print-data"] => Read::ConfigDb,
        ["show", "interfaces", "status"] => Read::Status,
        ["cat", "/etc/sonic/sonic_version.yml"] => Read::Version,
        ["docker", "exec", "lldp", "lldpctl", "-f", "json0"] => Read::Lldp,
        ["config", "interface", verb @ ("shutdown" | "startup"), x] => {
            // By name, or by alias (the platform sends an alias in
            // SONIC_CLI_IFACE_MODE=alias, stripped with `env` before here).
            let Some(p) = named(world, s, x) else {
                // sonic-utilities' `config interface` on a name that is
                // not a port (click's usage error).
                return Some(done(
                    String::new(),
                    format!("Usage: config interface {verb} [OPTIONS] <interface_name>\nTry \"config interface {verb} -h\" for help.\n\nError: Interface name is invalid. Please enter a valid interface name!!\n"),
                    2,
                ));
            };
            return Some(Parsed::Fault(FaultCmd::Link {
                link: p / 2,
                side: p % 2,
                up: *verb == "startup",
            }));
        }
        _ => return None,
    };
    Some(Parsed::Probe(Probe::Sonic(s, read)))
}

/// The platform's prior-state script, recognised by building it again:
/// the one every action but a withdrawn session sends, or that of a
/// withdrawn session over one of the switch's ports.
fn prior(world: &World, s: SwitchId, argv: &[String]) -> Option<Read> {
    if argv.first().map(String::as_str) != Some("sh") {
        return None;
    }
    let sent = Query::Argv(argv.to_vec());
    if Sonic.read_prior(&Action::RoutingStop) == sent {
        return Some(Read::Prior { addr_of: None });
    }
    ports(world, s)
        .into_iter()
        .find(|&p| {
            let port = world.port_cfg[p].name.clone();
            Sonic.read_prior(&Action::BgpPeerDown { port }) == sent
        })
        .map(|p| Read::Prior { addr_of: Some(p) })
}

/// A right-aligned `tabulate` table as sonic-utilities prints it
/// (`stralign='right'`): two spaces between columns, a dash ruler.
fn tabulate(header: &[&str], rows: &[Vec<String>]) -> String {
    let mut width: Vec<usize> = header.iter().map(|h| h.len()).collect();
    for r in rows {
        for (i, c) in r.iter().enumerate() {
            width[i] = width[i].max(c.len());
        }
    }
    let line = |cells: Vec<String>| -> String {
        let s: Vec<String> = cells
            .iter()
            .zip(&width)
            .map(|(c, w)| format!("{c:>w$}"))
            .collect();
        format!("{}\n", s.join("  "))
    };
    let mut out = line(header.iter().map(|h| h.to_string()).collect());
    out += &line(width.iter().map(|w| "-".repeat(*w)).collect());
    for r in rows {
        out += &line(r.clone());
    }
    out
}

/// A counter as sonic-utilities prints it (`format_number_with_comma`).
fn comma(v: f64) -> String {
    let s = count(v).to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `portstat`'s STATE: `X` administratively down, `U` up, `D` down.
fn state(world: &World, p: usize) -> &'static str {
    let c = &world.port_cfg[p];
    match (c.admin_up, c.link_up) {
        (false, _) => "X",
        (true, true) => "U",
        (true, false) => "D",
    }
}

fn portstat(world: &World, ps: &[usize]) -> String {
    let na = || "N/A".to_string();
    let rows: Vec<Vec<String>> = ps
        .iter()
        .map(|&p| {
            let c = &world.port[p];
            let drops: f64 = c.tc_drops.iter().sum();
            vec![
                world.port_cfg[p].name.clone(),
                state(world, p).into(),
                comma(c.rx_packets),
                na(),
                na(),
                comma(c.rx_crc_errors),
                "0".into(),
                "0".into(),
                comma(c.tx_packets),
                na(),
                na(),
                "0".into(),
                comma(drops),
                "0".into(),
            ]
        })
        .collect();
    tabulate(
        &[
            "IFACE", "STATE", "RX_OK", "RX_BPS", "RX_UTIL", "RX_ERR", "RX_DRP", "RX_OVR", "TX_OK",
            "TX_BPS", "TX_UTIL", "TX_ERR", "TX_DRP", "TX_OVR",
        ],
        &rows,
    )
}

/// `show interfaces alias`: each port's name and its `etpN` alias.
fn aliases(world: &World, s: SwitchId) -> String {
    let rows: Vec<Vec<String>> = ports(world, s)
        .iter()
        .enumerate()
        .map(|(k, &p)| vec![world.port_cfg[p].name.clone(), format!("etp{}", k + 1)])
        .collect();
    tabulate(&["Name", "Alias"], &rows)
}

fn pfcstat(world: &World, s: SwitchId) -> String {
    let ps = ports(world, s);
    let table = |title: &str, rx: bool| {
        let mut header = vec![title];
        let names: Vec<String> = (0..8).map(|i| format!("PFC{i}")).collect();
        header.extend(names.iter().map(String::as_str));
        let rows: Vec<Vec<String>> = ps
            .iter()
            .map(|&p| {
                let mut r = vec![world.port_cfg[p].name.clone()];
                r.extend(
                    world.port[p]
                        .prio
                        .iter()
                        .map(|x| comma(if rx { x.rx_pause } else { x.tx_pause })),
                );
                r
            })
            .collect();
        tabulate(&header, &rows)
    };
    format!("{}\n{}", table("Port Rx", true), table("Port Tx", false))
}

fn queuestat(world: &World, ps: &[usize]) -> String {
    let rows: Vec<Vec<String>> = ps
        .iter()
        .flat_map(|&p| (0..8).map(move |q| (p, q)))
        .map(|(p, q)| {
            let c = &world.port[p];
            let name = &world.port_cfg[p].name;
            vec![
                name.clone(),
                format!("UC{q}"),
                comma(c.prio[q].tx_packets),
                comma(c.prio[q].tx_bytes),
                comma(c.tc_drops[q]),
                "N/A".into(),
            ]
        })
        .collect();
    tabulate(
        &[
            "Port",
            "TxQ",
            "Counter/pkts",
            "Counter/bytes",
            "Drop/pkts",
            "Drop/bytes",
        ],
        &rows,
    )
}

/// `watermarkstat -p -t pg_shared|q_shared_uni`: every port's persistent
/// peak per PG (ingress: `N/A`, not modelled) or unicast queue (the egress
/// queue's peak occupancy in bytes).
fn watermark(world: &World, s: SwitchId, pg: bool) -> String {
    let prefix = if pg { "PG" } else { "UC" };
    let names: Vec<String> = (0..8).map(|i| format!("{prefix}{i}")).collect();
    let mut header = vec!["Port"];
    header.extend(names.iter().map(String::as_str));
    let rows: Vec<Vec<String>> = ports(world, s)
        .iter()
        .map(|&p| {
            let mut r = vec![world.port_cfg[p].name.clone()];
            r.extend((0..8).map(|q| {
                if pg {
                    "N/A".to_string()
                } else {
                    count(world.port[p].tc_watermark_bytes[q]).to_string()
                }
            }));
            r
        })
        .collect();
    let title = if pg {
        "Ingress shared pool occupancy per PG:"
    } else {
        "Egress shared pool occupancy per unicast queue:"
    };
    format!("{title}\n{}", tabulate(&header, &rows))
}

/// `pfcwd show stats -e Q…`: one row per named queue, `N/A` status on a
/// queue the watchdog does not watch (PFC off); see the module's comment.
fn pfcwd(world: &World, queues: &[(usize, usize)]) -> String {
    let rows: Vec<Vec<String>> = queues
        .iter()
        .map(|&(p, q)| {
            let c = &world.port[p];
            let watched = world.port_cfg[p].pfc[q];
            let pair = |a: f64, b: f64| format!("{}/{}", count(a), count(b));
            vec![
                format!("{}:{q}", world.port_cfg[p].name),
                if watched { "operational" } else { "N/A" }.into(),
                // The model's storms on this queue: none (see above).
                pair(0.0, 0.0),
                pair(c.prio[q].tx_packets, c.tc_drops[q]),
                pair(c.prio[q].rx_packets, 0.0),
                pair(0.0, 0.0),
                pair(0.0, 0.0),
            ]
        })
        .collect();
    tabulate(
        &[
            "QUEUE",
            "STATUS",
            "STORM DETECTED/RESTORED",
            "TX OK/DROP",
            "RX OK/DROP",
            "TX LAST OK/DROP",
            "RX LAST OK/DROP",
        ],
        &rows,
    )
}

/// `wredstat -p PORT`: ECN marks per unicast queue from the model.
fn wredstat(world: &World, ps: &[usize]) -> String {
    let rows: Vec<Vec<String>> = ps
        .iter()
        .flat_map(|&p| (0..8).map(move |q| (p, q)))
        .map(|(p, q)| {
            let c = &world.port[p];
            let name = &world.port_cfg[p].name;
            vec![
                name.clone(),
                format!("UC{q}"),
                // The model's WRED profiles mark, never drop.
                "0".into(),
                "N/A".into(),
                comma(c.tc_ecn_marked[q]),
                "N/A".into(),
            ]
        })
        .collect();
    let mut out = tabulate(
        &[
            "Port",
            "TxQ",
            "WredDrp/pkts",
            "WredDrp/bytes",
            "EcnMarked/pkts",
            "EcnMarked/bytes",
        ],
        &rows,
    );
    out.push('\n');
    out
}

/// `show interfaces flap PORT`: orchagent's flap count from the model's
/// link-downs (see the module's comment).
fn flap(world: &World, ps: &[usize]) -> String {
    let cap = |b: bool| if b { "Up" } else { "Down" };
    let rows: Vec<Vec<String>> = ps
        .iter()
        .map(|&p| {
            let c = &world.port_cfg[p];
            let changes = 2 * count(world.port[p].link_down_events) + u64::from(c.link_up);
            vec![
                c.name.clone(),
                if changes == 0 {
                    "Never".into()
                } else {
                    changes.to_string()
                },
                cap(c.admin_up).into(),
                cap(c.admin_up && c.link_up).into(),
                "N/A".into(),
                "N/A".into(),
            ]
        })
        .collect();
    tabulate(
        &[
            "Interface",
            "Flap Count",
            "Admin",
            "Oper",
            "Link Down TimeStamp(UTC)",
            "Link Up TimeStamp(UTC)",
        ],
        &rows,
    )
}

/// `show interfaces status`: the port's eight lanes from its position,
/// `etpN` aliases as SONiC's platform files name the front panel.
fn status(world: &World, s: SwitchId) -> String {
    let rows: Vec<Vec<String>> = ports(world, s)
        .iter()
        .enumerate()
        .map(|(k, &p)| {
            let c = &world.port_cfg[p];
            let n = super::config_out::lanes(c.speed_mbps).max(1) as usize * 2;
            let lanes: Vec<String> = (k * n..(k + 1) * n).map(|l| l.to_string()).collect();
            let up = |b: bool| if b { "up" } else { "down" };
            vec![
                c.name.clone(),
                lanes.join(","),
                format!("{}G", c.speed_mbps / 1000),
                c.mtu.to_string(),
                "rs".into(),
                format!("etp{}", k + 1),
                "routed".into(),
                up(c.admin_up && c.link_up).into(),
                up(c.admin_up).into(),
                "QSFP-DD Double Density 8X Pluggable Transceiver".into(),
                "N/A".into(),
            ]
        })
        .collect();
    tabulate(
        &[
            "Interface",
            "Lanes",
            "Speed",
            "MTU",
            "FEC",
            "Alias",
            "Vlan",
            "Oper",
            "Admin",
            "Type",
            "Asym PFC",
        ],
        &rows,
    )
}

/// The running CONFIG_DB, tables of keys of string fields: `PORT`,
/// `PORT_QOS_MAP` (`pfc_enable`, `dscp_to_tc_map`), `DSCP_TO_TC_MAP`, `QUEUE` → `WRED_PROFILE` for the queues
/// the model marks ECN on, `PFC_WD` on every port with a lossless queue
/// (what `pfcwd start_default` arms when the image enables it by default;
/// the model has no watchdog of its own), `DEVICE_METADATA`.
fn config_db(inv: &Inventory, world: &World, s: SwitchId) -> String {
    let ps = ports(world, s);
    let mut port = Map::new();
    let mut qos = Map::new();
    let mut queue = Map::new();
    let mut wd = Map::new();
    // One WRED profile per distinct setting, named as SONiC's RoCE
    // templates name the first.
    let mut profiles: BTreeMap<(u64, u64, u32), String> = BTreeMap::new();
    for (k, &p) in ps.iter().enumerate() {
        let c = &world.port_cfg[p];
        port.insert(
            c.name.clone(),
            json!({
                "admin_status": if c.admin_up { "up" } else { "down" },
                "alias": format!("etp{}", k + 1),
                "index": (k + 1).to_string(),
                "mtu": c.mtu.to_string(),
                "speed": c.speed_mbps.to_string(),
                "fec": "rs",
            }),
        );
        let on: Vec<String> = (0..8)
            .filter(|&i| c.pfc[i])
            .map(|i| i.to_string())
            .collect();
        if !on.is_empty() {
            qos.insert(
                c.name.clone(),
                json!({"dscp_to_tc_map": "AZURE", "pfc_enable": on.join(","), "pfc_to_queue_map": "AZURE", "tc_to_queue_map": "AZURE"}),
            );
            wd.insert(
                c.name.clone(),
                json!({"action": "drop", "detection_time": "200", "restoration_time": "200"}),
            );
        }
        for (tc, e) in c.ecn.iter().enumerate() {
            let Some(e) = e else { continue };
            let n = profiles.len();
            let name = profiles
                .entry(*e)
                .or_insert_with(|| match n {
                    0 => "AZURE_LOSSLESS".to_string(),
                    n => format!("AZURE_LOSSLESS_{n}"),
                })
                .clone();
            queue.insert(
                format!("{}|{tc}", c.name),
                json!({"scheduler": "scheduler.0", "wred_profile": name}),
            );
        }
    }
    let wred: Map<String, Value> = profiles
        .iter()
        .map(|((min, max, pct), name)| {
            (
                name.clone(),
                json!({
                    "ecn": "ecn_all",
                    "green_min_threshold": min.to_string(),
                    "green_max_threshold": max.to_string(),
                    "green_drop_probability": pct.to_string(),
                    "wred_green_enable": "true",
                }),
            )
        })
        .collect();
    if !wd.is_empty() {
        wd.insert("GLOBAL".into(), json!({"POLL_INTERVAL": "200"}));
    }
    let sw = &inv.switches[s];
    let mut db = Map::new();
    db.insert(
        "DEVICE_METADATA".into(),
        json!({"localhost": {
            "hostname": sw.name,
            "bgp_asn": asn(inv, s).to_string(),
            "type": if sw.role == SwitchRole::Leaf { "LeafRouter" } else { "SpineRouter" },
            "hwsku": "Mellanox-SN4600C-C64",
            "platform": "x86_64-mlnx_msn4600c-r0",
        }}),
    );
    db.insert("PORT".into(), Value::Object(port));
    if !qos.is_empty() {
        db.insert("DSCP_TO_TC_MAP".into(), json!({"AZURE": dscp_to_tc(inv)}));
    }
    for (name, t) in [
        ("PORT_QOS_MAP", qos),
        ("QUEUE", queue),
        ("WRED_PROFILE", wred),
        ("PFC_WD", wd),
    ] {
        if !t.is_empty() {
            db.insert(name.into(), Value::Object(t));
        }
    }
    // sonic-cfggen prints with json.dumps(indent=4, sort_keys=True).
    format!(
        "{}\n",
        serde_json::to_string_pretty(&Value::Object(db)).unwrap_or_default()
    )
}

/// The `AZURE` DSCP_TO_TC_MAP the lossless ports bind: every DSCP to TC 1
/// (the bulk class of SONiC's `qos.json.j2`), the pod's RoCE and CNP DSCPs
/// to its PFC and CNP priorities (the model has no switch classification
/// of its own: the switch is configured as the profile says).
fn dscp_to_tc(inv: &Inventory) -> Value {
    let r = &inv.fabric.roce;
    let m: Map<String, Value> = (0..64u8)
        .map(|d| {
            let tc = if d == r.dscp_roce {
                r.pfc_priority
            } else if d == r.dscp_cnp {
                r.cnp_priority
            } else {
                1
            };
            (d.to_string(), Value::String(tc.to_string()))
        })
        .collect();
    Value::Object(m)
}

/// Whether the BGP session over inventory link `l` is Established: the
/// link up, neither end shut, both switches routing.
fn established(inv: &Inventory, fabric: &Fabric, world: &World, l: usize) -> bool {
    let link = &inv.links[l];
    let (End::Port { switch: a, .. }, End::Port { switch: b, .. }) = (&link.a, &link.b) else {
        return false;
    };
    fabric.link_up[l]
        && !fabric.session_down[l]
        && [*a, *b]
            .iter()
            .all(|&x| fabric.routing[x] && !world.rebooting[x] && !world.api.bgp_shut[x])
}

/// FRR's `show bgp vrf all summary json`: BGP unnumbered, so each
/// session's peer is named by the port it runs over. Empty when the bgp
/// container is stopped (`vtysh` fails; the script drops its stderr).
fn bgp_summary(inv: &Inventory, fabric: &Fabric, world: &World, s: SwitchId) -> String {
    if !fabric.routing[s] || world.rebooting[s] {
        return String::new();
    }
    let mut peers = Map::new();
    for &l in &inv.switches[s].links {
        let link = &inv.links[l];
        let (End::Port { switch: a, .. }, End::Port { switch: b, .. }) = (&link.a, &link.b) else {
            continue;
        };
        let (p, peer) = if *a == s {
            (2 * l, *b)
        } else {
            (2 * l + 1, *a)
        };
        let up = established(inv, fabric, world, l);
        peers.insert(
            world.port_cfg[p].name.clone(),
            json!({
                "hostname": inv.switches[peer].name,
                "remoteAs": asn(inv, peer),
                "version": 4,
                "state": if up { "Established" } else { "Active" },
                "peerState": if fabric.peer_shut[l][p % 2] { "Admin" } else { "OK" },
                "pfxRcd": if up { 16 } else { 0 },
                "idType": "interface",
            }),
        );
    }
    let v = json!({"default": {"ipv4Unicast": {
        "routerId": format!("10.1.0.{}", s + 1),
        "as": asn(inv, s),
        "vrfId": 0,
        "vrfName": "default",
        "peerCount": peers.len(),
        "peers": peers,
    }}});
    serde_json::to_string_pretty(&v).unwrap_or_default()
}

/// `ip -o addr show dev PORT | sed 's/^/@@addr /'`: a BGP-unnumbered
/// port has its IPv6 link-local address only.
fn addr_lines(world: &World, p: usize, k: usize) -> String {
    format!(
        "@@addr {}: {}    inet6 fe80::5c:{:x}/64 scope link \\       valid_lft forever preferred_lft forever\n",
        k + 20,
        world.port_cfg[p].name,
        p
    )
}

fn version(inv: &Inventory) -> String {
    let v = inv
        .fabric
        .versions
        .nos
        .clone()
        .unwrap_or_else(|| SONIC_VERSION.into());
    format!(
        "---\nbuild_version: '{v}'\ndebian_version: '12.5'\nkernel_version: '6.1.0-11-2-amd64'\nasic_type: mellanox\ncommit_id: 'b7d2c5e1'\nbuild_date: Tue Mar 12 04:11:49 UTC 2024\nbuilt_by: AzDevOps@vmss-soni001\n"
    )
}

/// What a read prints, from the model as it is now.
pub fn answer(inv: &Inventory, fabric: &Fabric, world: &World, s: SwitchId, read: &Read) -> String {
    match read {
        Read::Portstat(ps) => portstat(world, ps),
        Read::Pfcstat => pfcstat(world, s),
        Read::Queuestat(ps) => queuestat(world, ps),
        Read::Watermark { pg } => watermark(world, s, *pg),
        Read::Pfcwd(queues) => pfcwd(world, queues),
        Read::Wred(ps) => wredstat(world, ps),
        Read::Flap(ps) => flap(world, ps),
        Read::Aliases => aliases(world, s),
        Read::Aliased(read) => format!(
            "{}@@rocegate-counters\n{}",
            aliases(world, s),
            answer(inv, fabric, world, s, read)
        ),
        Read::ConfigDb => config_db(inv, world, s),
        Read::Status => status(world, s),
        Read::Version => version(inv),
        Read::Lldp => {
            let ps: Vec<_> = ports(world, s)
                .iter()
                .map(|&p| &world.port_cfg[p])
                .collect();
            lldp::switch_lldpctl_json0(&inv.switches[s].name, &ps)
        }
        Read::Prior { addr_of } => {
            let mut out = format!("@@status\n{}@@end\n", status(world, s));
            if let Some(p) = addr_of {
                let k = ports(world, s).iter().position(|x| x == p).unwrap_or(0);
                out += &addr_lines(world, *p, k);
            }
            let bgp = bgp_summary(inv, fabric, world, s);
            out += &format!(
                "@@bgp\n{bgp}{}@@end\n",
                if bgp.is_empty() { "" } else { "\n" }
            );
            out
        }
    }
}
