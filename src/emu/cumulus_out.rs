//! What an emulated Cumulus Linux 5.x switch prints for the NVUE reads the
//! `cumulus` platform sends (`switch::cumulus`): `nv show interface IF
//! link stats -o json`, `nv show interface IF counters qos`, `nv show
//! interface IF link -o json` and `/etc/lsb-release`, from the same model
//! the `linux` switches print from. Everything else the platform sends is
//! linux's and answered as on a linux switch (`probe`): `lldpctl -f json0`,
//! `ethtool -m`, the faults' `ip link set`, FRR.
//!
//! It parses no answer: the platform does, on what this prints. Byte
//! counters in `counters qos` are printed `N Bytes`, the one form the
//! public capture shows (tests/fixtures/switch/cumulus-nvue-counters-qos-
//! swp1-docs59.txt); pause durations are 0: the model keeps them in
//! microseconds and NVUE does not print their unit.

use serde_json::json;

use crate::config::inventory::SwitchDriver;
use crate::config::model::{Inventory, SwitchId};

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
        ["cat", "/etc/lsb-release"] => return Some(Parsed::Probe(Probe::Cumulus(Read::Release))),
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
    }
}
