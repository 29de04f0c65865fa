//! What an emulated Cumulus Linux 5.x switch prints for the NVUE reads the
//! `cumulus` platform sends (`switch::cumulus`): `nv show interface IF
//! link stats -o json`, `nv show interface IF counters qos`, `nv show
//! interface IF link -o json`, the RoCE QoS objects (`nv show qos roce -o
//! json`, `nv show interface IF qos roce status|counters -o json`) and
//! `/etc/lsb-release`, from the same model the `linux` switches print
//! from, and the fault driver's prior-state read. Everything else the
//! platform sends is linux's and answered as on a linux switch (`probe`):
//! `lldpctl -f json0`, `ethtool -m`, the faults' `ip link set` (behind
//! `sudo -n`, which the emulator strips), FRR.
//!
//! The switch is a stock one: the account is `cumulus` (not root) with
//! passwordless sudo, link-flap protection at NVUE's defaults (5 in 10 s)
//! and no port protodown. The RoCE objects render the model's port
//! settings (PFC per priority, ECN per traffic class, planted defects
//! included) in NVUE's one-profile shape; the DSCP map is NVUE's default
//! (DSCP d to switch priority d/8) with the pod profile's RoCE and CNP
//! DSCPs set to its priorities, as `nv set qos mapping` would. NVUE's
//! JSON shapes follow its text tables (see `switch::cumulus::qos`).
//!
//! It parses no answer: the platform does, on what this prints. Byte
//! counters in `counters qos` are printed `N Bytes`, the one form the
//! public capture shows (tests/fixtures/switch/cumulus-nvue-counters-qos-
//! swp1-docs59.txt); pause durations are 0: the model keeps them in
//! microseconds and NVUE does not print their unit.

use serde_json::json;

use crate::config::inventory::SwitchDriver;
use crate::config::model::{Inventory, SwitchId};
use crate::switch::cumulus::fault::CumulusFaults;
use crate::switch::fault::{Action, Driver};
use crate::switch::Query;

use super::api_out::count;
use super::probe::Probe;
use super::world::World;
use super::Parsed;

/// The release the emulated switches run unless the inventory's
/// `versions.nos` names one.
const CUMULUS_RELEASE: &str = "5.9.0";

/// A read of the cumulus platform, resolved to the port it reads.
#[derive(Debug, Clone, PartialEq)]
pub enum Read {
    /// `nv show interface IF link stats -o json`.
    LinkStats(usize),
    /// `nv show interface IF counters qos`.
    Qos(usize),
    /// `nv show interface IF link -o json`.
    Link(usize),
    /// `cat /etc/lsb-release`.
    Release,
    /// `nv show qos roce -o json`.
    Roce,
    /// `nv show interface IF qos roce status -o json`.
    RoceStatus(usize),
    /// `nv show interface IF qos roce counters -o json`.
    RoceCounters(usize),
    /// The fault driver's prior-state read for this action, its ports
    /// resolved.
    Prior(Action, Vec<usize>),
}

/// The port of switch `s` named `name`; Cumulus names are exact (`swp1`).
fn port(world: &World, s: SwitchId, name: &str) -> Option<usize> {
    (0..world.port_cfg.len())
        .find(|&i| world.port_switch[i] == Some(s) && world.port_cfg[i].name == name)
}

/// Resolves a command on a `cumulus` switch (wrappers already stripped).
/// `None`: not an NVUE read or the release file, or not a cumulus switch.
pub fn parse(inv: &Inventory, world: &World, s: SwitchId, argv: &[String]) -> Option<Parsed> {
    if inv.switches[s].driver != SwitchDriver::Cumulus {
        return None;
    }
    let w: Vec<&str> = argv.iter().map(String::as_str).collect();
    let (x, read): (&str, fn(usize) -> Read) = match w.as_slice() {
        ["nv", "show", "interface", x, "link", "stats", "-o", "json"] => (x, Read::LinkStats),
        ["nv", "show", "interface", x, "counters", "qos"] => (x, Read::Qos),
        ["nv", "show", "interface", x, "link", "-o", "json"] => (x, Read::Link),
        ["nv", "show", "interface", x, "qos", "roce", "status", "-o", "json"] => {
            (x, Read::RoceStatus)
        }
        ["nv", "show", "interface", x, "qos", "roce", "counters", "-o", "json"] => {
            (x, Read::RoceCounters)
        }
        ["nv", "show", "qos", "roce", "-o", "json"] => {
            return Some(Parsed::Probe(Probe::Cumulus(Read::Roce)))
        }
        ["cat", "/etc/lsb-release"] => return Some(Parsed::Probe(Probe::Cumulus(Read::Release))),
        ["sh", "-c", script] => {
            return prior(world, s, argv, script).map(|r| Parsed::Probe(Probe::Cumulus(r)))
        }
        _ => return None,
    };
    Some(match port(world, s, x) {
        Some(p) => Parsed::Probe(Probe::Cumulus(read(p))),
        // NVUE's answer to an object its tree does not hold.
        None => Parsed::Done {
            stdout: String::new(),
            stderr: "Error: The requested item does not exist.\n".into(),
            exit: 1,
            secs: 0.3,
        },
    })
}

/// The fault driver's prior-state script, recognised by building it
/// again: for the ports it names (`@@port PORT`), as a flap, a reload, a
/// withdrawn session, or for no port a routing stop.
fn prior(world: &World, s: SwitchId, argv: &[String], script: &str) -> Option<Read> {
    let names: Vec<String> = script
        .split("@@port ")
        .skip(1)
        .filter_map(|r| r.split_whitespace().next().map(String::from))
        .collect();
    let mut candidates = vec![
        Action::PortsDown(names.clone()),
        Action::Reload {
            ports: names.clone(),
        },
        Action::RoutingStop,
    ];
    if let [one] = names.as_slice() {
        candidates.push(Action::BgpPeerDown { port: one.clone() });
    }
    let sent = Query::Argv(argv.to_vec());
    let action = candidates
        .into_iter()
        .find(|a| CumulusFaults.read_prior(a) == sent)?;
    // A port the switch does not have reads `missing`, as sysfs would.
    let ports = names
        .iter()
        .map(|n| port(world, s, n).unwrap_or(usize::MAX))
        .collect();
    Some(Read::Prior(action, ports))
}

/// The prior read's answer: the `linux` part (init, each port's sysfs
/// flags and operstate), the account's privilege, and for a flap the
/// link-flap protection read (NVUE's defaults, no protodown, no earlier
/// flap recorded: the emulated run sends the plain commands, which record
/// none). FRR's summary is not printed: this module does not see the
/// fabric's routing state, so a routing fault's read finds no routing
/// daemon and is refused rather than answered with a made-up session.
fn prior_answer(world: &World, action: &Action, ports: &[usize]) -> String {
    let mut out = String::from("@@init systemd\n");
    for (name, &p) in action.ports_named().iter().zip(ports) {
        match world.port_cfg.get(p) {
            None => out += &format!("@@port {name} missing missing\n"),
            Some(c) => {
                // IFF_UP|IFF_BROADCAST|IFF_MULTICAST, and IFF_UP cleared.
                let flags = if c.admin_up { "0x1003" } else { "0x1002" };
                let oper = if c.admin_up && c.link_up {
                    "up"
                } else {
                    "down"
                };
                out += &format!("@@port {name} {flags} {oper}\n");
            }
        }
    }
    out += "@@priv sudo\n";
    if let Action::PortsDown(names) = action {
        out += "@@flapprot 0\n{\n  \"interval\": 10,\n  \"threshold\": 5\n}\n@@end-flapprot\n";
        out += &format!("@@now {}\n", super::iperf_run::EPOCH_UNIX);
        for n in names {
            out += &format!("@@protodown {n} 0\n@@flaps {n} \n");
        }
    }
    out
}

trait PortsNamed {
    fn ports_named(&self) -> Vec<String>;
}

impl PortsNamed for Action {
    /// The ports the prior read names: those taken down, or the port a
    /// withdrawn session runs over.
    fn ports_named(&self) -> Vec<String> {
        match self {
            Action::BgpPeerDown { port } => vec![port.clone()],
            a => a.ports().to_vec(),
        }
    }
}

/// The DSCP map: NVUE's default (DSCP d to switch priority d/8) with the
/// pod's RoCE and CNP DSCPs set to its priorities.
fn dscp_map(inv: &Inventory) -> [u8; 64] {
    let r = &inv.fabric.roce;
    let mut m: [u8; 64] = std::array::from_fn(|d| (d / 8) as u8);
    m[usize::from(r.dscp_roce.min(63))] = r.pfc_priority.min(7);
    m[usize::from(r.dscp_cnp.min(63))] = r.cnp_priority.min(7);
    m
}

/// `nv show qos roce -o json`: the mode and trust, and the PCP/DSCP→SP
/// rows (one per switch priority, its DSCPs listed as NVUE's table does).
fn roce(inv: &Inventory) -> serde_json::Value {
    let m = dscp_map(inv);
    let rows: serde_json::Map<String, serde_json::Value> = (0..8u8)
        .map(|sp| {
            let dscps: Vec<String> = (0..64)
                .filter(|&d| m[d] == sp)
                .map(|d| d.to_string())
                .collect();
            (
                sp.to_string(),
                json!({"pcp": sp, "dscp": dscps.join(","), "switch-prio": sp}),
            )
        })
        .collect();
    json!({
        "enable": "on",
        "mode": "lossless",
        "trust": {"trust-mode": "pcp,dscp"},
        "prio-map": rows,
    })
}

/// `nv show interface IF qos roce status -o json`: the port's PFC
/// priorities (none: the lossy mode), and ECN on the traffic classes that
/// share the RoCE class's thresholds (NVUE has one setting per profile).
fn roce_status(world: &World, p: usize) -> serde_json::Value {
    let c = &world.port_cfg[p];
    let prios: Vec<String> = (0..8)
        .filter(|&i| c.pfc[i])
        .map(|i| i.to_string())
        .collect();
    let roce = usize::from(world.roce_prio);
    let setting = c.ecn[roce].or_else(|| c.ecn.iter().flatten().next().copied());
    let tcs: Vec<String> = (0..8)
        .filter(|&i| setting.is_some() && c.ecn[i] == setting)
        .map(|i| i.to_string())
        .collect();
    let mut v = json!({
        "mode": if prios.is_empty() { "lossy" } else { "lossless" },
        "trust": {"trust-mode": "pcp,dscp"},
        "congestion-control": {
            "congestion-mode": "ecn, absolute",
            "enabled-tc": tcs.join(","),
        },
    });
    if let Some((min, max, prob)) = setting {
        v["congestion-control"]["min-threshold"] = json!(min);
        v["congestion-control"]["max-threshold"] = json!(max);
        v["congestion-control"]["probability"] = json!(prob);
    }
    if !prios.is_empty() {
        v["pfc"] = json!({
            "pfc-priority": prios.join(","),
            "rx-enabled": "yes",
            "tx-enabled": "yes",
        });
    }
    v
}

/// `nv show interface IF qos roce counters -o json`: the RoCE priority's
/// pauses and traffic, the port's ECN marks, the RoCE class's drops. The
/// model keeps no ingress buffer discards: those keys are not printed.
fn roce_counters(world: &World, p: usize) -> serde_json::Value {
    let c = &world.port[p];
    let r = usize::from(world.roce_prio);
    json!({
        "rx-stats": {
            "rx-pfc-stats": {"pause-packets": count(c.prio[r].rx_pause)},
            "rx-roce-stats": {
                "roce-packets": count(c.prio[r].rx_packets),
            },
        },
        "tx-stats": {
            "tx-ecn-stats": {"ecn-marked-packets": count(c.tc_ecn_marked.iter().sum())},
            "tx-pfc-stats": {"pause-packets": count(c.prio[r].tx_pause)},
            "tx-roce-stats": {
                "roce-bytes": count(c.prio[r].tx_bytes),
                "roce-packets": count(c.prio[r].tx_packets),
                "unicast-no-buffer-discard": count(c.tc_drops[r]),
            },
        },
    })
}

fn pretty(v: &serde_json::Value) -> String {
    format!("{}\n", serde_json::to_string_pretty(v).unwrap_or_default())
}

/// `carrier-transitions`: both edges of every loss of link; a port down
/// now has not had its edge up yet.
fn transitions(world: &World, p: usize) -> u64 {
    let downs = count(world.port[p].link_down_events);
    let down = !(world.port_cfg[p].admin_up && world.port_cfg[p].link_up);
    (2 * downs).saturating_sub(u64::from(down && downs > 0))
}

fn link_stats(world: &World, p: usize) -> serde_json::Value {
    let c = &world.port[p];
    json!({
        "carrier-transitions": transitions(world, p),
        "in-bytes": count(c.rx_bytes),
        "in-drops": 0,
        "in-errors": count(c.rx_crc_errors),
        "in-pkts": count(c.rx_packets),
        "out-bytes": count(c.tx_bytes),
        "out-drops": count(c.tc_drops.iter().sum()),
        "out-errors": 0,
        "out-pkts": count(c.tx_packets),
    })
}

fn link(world: &World, p: usize) -> String {
    let c = &world.port_cfg[p];
    let up = c.admin_up && c.link_up;
    let v = json!({
        "auto-negotiate": "off",
        "duplex": "full",
        "fec": "auto",
        "mtu": c.mtu,
        "speed": format!("{}G", c.speed_mbps / 1000),
        "state": if c.admin_up { json!({"up": {}}) } else { json!({"down": {}}) },
        "oper-status": if up { "up" } else { "down" },
        "oper-status-last-change": "never",
        "protodown": "disabled",
        "stats": link_stats(world, p),
    });
    format!("{}\n", serde_json::to_string_pretty(&v).unwrap_or_default())
}

/// One of NVUE's titled tables: the title, a `=` underline, a header and
/// a dash ruler, four spaces in, cells left-aligned and padded.
fn table(title: &str, header: &[&str], rows: &[Vec<String>]) -> String {
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
            .map(|(c, w)| format!("{c:<w$}"))
            .collect();
        format!("    {}\n", s.join("  "))
    };
    let mut out = format!("{title}\n{}\n", "=".repeat(title.len() + 3));
    out += &line(header.iter().map(|h| h.to_string()).collect());
    out += &line(width.iter().map(|w| "-".repeat(*w)).collect());
    for r in rows {
        out += &line(r.clone());
    }
    out
}

fn qos(world: &World, p: usize) -> String {
    let c = &world.port[p];
    let bytes = |v: f64| format!("{} Bytes", count(v));
    let n = |v: f64| count(v).to_string();
    let eight = |f: &dyn Fn(usize) -> Vec<String>| -> Vec<Vec<String>> { (0..8).map(f).collect() };
    let ingress = table(
        "Ingress Buffer Statistics",
        &[
            "priority-group",
            "rx-frames",
            "rx-buffer-discards",
            "rx-shared-buffer-discards",
        ],
        &eight(&|i| {
            vec![
                i.to_string(),
                n(c.prio[i].rx_packets),
                bytes(0.0),
                bytes(0.0),
            ]
        }),
    );
    let egress = table(
        "Egress Queue Statistics",
        &[
            "traffic-class",
            "tx-frames",
            "tx-bytes",
            "tx-uc-buffer-discards",
            "wred-discards",
        ],
        &eight(&|i| {
            vec![
                i.to_string(),
                n(c.prio[i].tx_packets),
                bytes(c.prio[i].tx_bytes),
                bytes(0.0),
                n(c.tc_drops[i]),
            ]
        }),
    );
    let pfc = table(
        "PFC Statistics",
        &[
            "switch-priority",
            "rx-pause-frames",
            "rx-pause-duration",
            "tx-pause-frames",
            "tx-pause-duration",
        ],
        &eight(&|i| {
            vec![
                i.to_string(),
                n(c.prio[i].rx_pause),
                "0".into(),
                n(c.prio[i].tx_pause),
                "0".into(),
            ]
        }),
    );
    let rx: f64 = c.prio.iter().map(|x| x.rx_pause).sum();
    let tx: f64 = c.prio.iter().map(|x| x.tx_pause).sum();
    let port = table(
        "Qos Port Statistics",
        &["Counter", "Receive", "Transmit"],
        &[
            vec![
                "ecn-marked-packets".into(),
                "n/a".into(),
                n(c.tc_ecn_marked.iter().sum()),
            ],
            vec!["mc-buffer-discards".into(), "n/a".into(), "0".into()],
            vec!["pause-frames".into(), n(rx), n(tx)],
        ],
    );
    format!("{ingress}\n{egress}\n{pfc}\n{port}")
}

fn release(inv: &Inventory) -> String {
    let v = inv
        .fabric
        .versions
        .nos
        .clone()
        .unwrap_or_else(|| CUMULUS_RELEASE.into());
    let v = v.trim_start_matches("Cumulus Linux").trim();
    format!("DISTRIB_ID=\"Cumulus Linux\"\nDISTRIB_RELEASE={v}\nDISTRIB_DESCRIPTION=\"Cumulus Linux {v}\"\n")
}

/// What a read prints, from the model as it is now.
pub fn answer(inv: &Inventory, world: &World, read: &Read) -> String {
    match read {
        Read::LinkStats(p) => format!(
            "{}\n",
            serde_json::to_string_pretty(&link_stats(world, *p)).unwrap_or_default()
        ),
        Read::Qos(p) => qos(world, *p),
        Read::Link(p) => link(world, *p),
        Read::Release => release(inv),
        Read::Roce => pretty(&roce(inv)),
        Read::RoceStatus(p) => pretty(&roce_status(world, *p)),
        Read::RoceCounters(p) => pretty(&roce_counters(world, *p)),
        Read::Prior(a, ports) => prior_answer(world, a, ports),
    }
}
