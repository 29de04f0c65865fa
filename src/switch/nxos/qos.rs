//! The audit's view of an NX-OS switch: the PFC/ECN part of `show
//! running-config ipqos`, each port's link from `show interface`, and
//! [`switch_config`], which turns the answers to [`CONFIG_COMMANDS`] into a
//! [`SwitchConfig`]. What the configuration does not say is a fact not
//! available, never a guess.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use super::api::{CliType, CommandReply, Reply};
use super::counters::{parse_pfc_interface, parse_pfc_interface_json, PfcPort};
use super::normalise_port;
use super::rows::{counter, required, table, text_of};
use super::state::parse_version;
use crate::counters::ParseError;
use crate::switch::{EcnQueue, Fact, PortSettings, SwitchConfig};

// ------------------------------------------------------ running-config ipqos

/// The RoCE-relevant part of `show running-config ipqos`: which network-qos
/// and egress queuing policies `system qos` applies, what their classes
/// say about PFC, MTU and RED/ECN, and each interface's PFC mode and own
/// queuing policy. What the text does not set (a default, a system-defined
/// policy) is absent, and the readers say so instead of guessing.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct QosConfig {
    /// `policy-map type network-qos NAME` → its classes.
    pub network_qos: BTreeMap<String, Vec<NetworkQosClass>>,
    /// `policy-map type queuing NAME` → its classes.
    pub queuing: BTreeMap<String, Vec<QueuingClass>>,
    /// `system qos` / `service-policy type network-qos NAME`.
    pub system_network_qos: Option<String>,
    /// `system qos` / `service-policy type queuing output NAME`.
    pub system_queuing_output: Option<String>,
    /// `priority-flow-control watch-dog-interval on|off` at the top level.
    pub pfc_watchdog: Option<bool>,
    /// Interface blocks, by [`normalise_port`] name.
    pub interfaces: BTreeMap<String, InterfaceQos>,
}

/// `class type network-qos NAME` in a network-qos policy.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct NetworkQosClass {
    pub class: String,
    /// `pause pfc-cos …` or `pause no-drop`: a lossless class.
    pub pause: bool,
    /// The CoS values of `pause pfc-cos`.
    pub pfc_cos: Vec<u8>,
    pub mtu: Option<u32>,
}

/// `class type queuing NAME` in a queuing policy.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct QueuingClass {
    pub class: String,
    /// The queue a system-defined class names (`c-out-8q-q3` → 3,
    /// `c-out-8q-q-default` → 0); `None` for any other name.
    pub queue: Option<u8>,
    pub red: Option<Red>,
}

/// A `random-detect` line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Red {
    Thresholds {
        min: Threshold,
        max: Threshold,
        drop_probability: Option<u32>,
        ecn: bool,
    },
    /// A form this reader does not know, as written.
    Unread(String),
}

/// A RED threshold. NX-OS takes bytes, kbytes, mbytes, packets, ms or us.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Threshold {
    Bytes(u64),
    /// Not a size (`ms`, `us`, `packets`, or no unit written).
    Other {
        value: u64,
        unit: String,
    },
}

/// The QoS lines of one `interface` block.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct InterfaceQos {
    /// `priority-flow-control mode on|off|auto`; absent means auto.
    pub pfc_mode: Option<String>,
    pub pfc_watchdog: Option<bool>,
    /// `service-policy type queuing output NAME`, overriding `system qos`.
    pub queuing_output: Option<String>,
}

/// The queue of a system-defined queuing class: `c-out-8q-q3`, `c-out-q3`,
/// `c-in-q3` → 3; `…-q-default` → 0.
fn queue_of(class: &str) -> Option<u8> {
    if class.ends_with("-q-default") {
        return Some(0);
    }
    let (_, n) = class.rsplit_once("-q")?;
    n.parse::<u8>().ok().filter(|q| *q < 8)
}

/// `3`, `3,4`, `3 4`, `2-3`: CoS values 0–7.
fn cos_list(words: &[&str]) -> Result<Vec<u8>, String> {
    let joined = words.join(",");
    let mut out = Vec::new();
    for part in joined.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let one = |s: &str| s.parse::<u8>().ok().filter(|c| *c < 8);
        let (a, b) = match part.split_once('-') {
            Some((a, b)) => (one(a), one(b)),
            None => (one(part), one(part)),
        };
        match (a, b) {
            (Some(a), Some(b)) if a <= b => out.extend(a..=b),
            _ => {
                return Err(format!(
                    "`{part}` is not a CoS value 0–7 or a range of them"
                ))
            }
        }
    }
    if out.is_empty() {
        return Err("no CoS value".into());
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

/// `random-detect minimum-threshold 300 kbytes maximum-threshold 300 kbytes
/// drop-probability 100 weight 0 ecn`. A kbyte is taken as 1024 bytes, the
/// unit `tc` and the switch buffer carving use.
fn parse_red(line: &str, words: &[&str]) -> Red {
    let unread = || Red::Unread(line.trim().to_string());
    let (mut min, mut max, mut prob, mut ecn) = (None, None, None, false);
    let mut i = 1;
    while i < words.len() {
        match words[i] {
            w @ ("minimum-threshold" | "maximum-threshold") => {
                let Some(v) = words.get(i + 1).and_then(|v| v.parse::<u64>().ok()) else {
                    return unread();
                };
                let unit = words.get(i + 2).copied();
                let scale = match unit {
                    Some("bytes") => Some(1u64),
                    Some("kbytes") => Some(1 << 10),
                    Some("mbytes") => Some(1 << 20),
                    _ => None,
                };
                let (threshold, used) = match (scale, unit) {
                    (Some(s), _) => match v.checked_mul(s) {
                        Some(b) => (Threshold::Bytes(b), 2),
                        None => return unread(),
                    },
                    (None, Some(u @ ("packets" | "ms" | "us"))) => (
                        Threshold::Other {
                            value: v,
                            unit: u.to_string(),
                        },
                        2,
                    ),
                    (None, _) => (
                        Threshold::Other {
                            value: v,
                            unit: String::new(),
                        },
                        1,
                    ),
                };
                if w == "minimum-threshold" {
                    min = Some(threshold);
                } else {
                    max = Some(threshold);
                }
                i += 1 + used;
            }
            "drop-probability" => {
                prob = words.get(i + 1).and_then(|p| p.parse().ok());
                i += 2;
            }
            "weight" => i += 2,
            "ecn" => {
                ecn = true;
                i += 1;
            }
            _ => return unread(),
        }
    }
    match (min, max) {
        (Some(min), Some(max)) => Red::Thresholds {
            min,
            max,
            drop_probability: prob,
            ecn,
        },
        _ => unread(),
    }
}

fn on_off(v: &str) -> Option<bool> {
    match v {
        "on" => Some(true),
        "off" => Some(false),
        _ => None,
    }
}

/// `show running-config ipqos` (text, `cli_show_ascii`): policy maps of
/// type network-qos and queuing, `system qos`, interface blocks and the
/// global PFC watchdog, read by indentation (a block starts at column 0).
/// Other lines (class maps, type qos policies, `!` comments and headers)
/// are skipped. A `%` line is the switch refusing the command, and a
/// `pause pfc-cos` or `mtu` that is not a number is an error naming the
/// line.
pub fn parse_running_ipqos(text: &str) -> Result<QosConfig, ParseError> {
    const TOOL: &str = "show running-config ipqos";
    enum Block {
        Other,
        NetworkQos(String),
        Queuing(String),
        System,
        Interface(String),
    }
    let mut cfg = QosConfig::default();
    let mut block = Block::Other;
    for (n, raw) in text.lines().enumerate() {
        let err = |why: String| ParseError(format!("{TOOL}: line {}: {why}", n + 1));
        let line = raw.trim_end();
        let t = line.trim_start();
        if t.is_empty() || t.starts_with('!') {
            continue;
        }
        if t.starts_with('%') {
            return Err(err(format!("the switch answered `{t}`")));
        }
        let words: Vec<&str> = t.split_whitespace().collect();
        if !line.starts_with(char::is_whitespace) {
            block = match words[..] {
                ["policy-map", "type", "network-qos", name] => {
                    cfg.network_qos.entry(name.to_string()).or_default();
                    Block::NetworkQos(name.to_string())
                }
                ["policy-map", "type", "queuing", name] => {
                    cfg.queuing.entry(name.to_string()).or_default();
                    Block::Queuing(name.to_string())
                }
                ["system", "qos"] => Block::System,
                ["interface", ..] if words.len() > 1 => {
                    let port = normalise_port(&words[1..].concat());
                    cfg.interfaces.entry(port.clone()).or_default();
                    Block::Interface(port)
                }
                ["priority-flow-control", "watch-dog-interval", v] => {
                    cfg.pfc_watchdog =
                        Some(on_off(v).ok_or_else(|| err(format!("`{t}` is neither on nor off")))?);
                    Block::Other
                }
                ["no", "priority-flow-control", "watch-dog-interval", ..] => {
                    cfg.pfc_watchdog = Some(false);
                    Block::Other
                }
                _ => Block::Other,
            };
            continue;
        }
        match &block {
            Block::Other => {}
            Block::NetworkQos(policy) => {
                let classes = cfg.network_qos.entry(policy.clone()).or_default();
                if let ["class", "type", "network-qos", class] = words[..] {
                    classes.push(NetworkQosClass {
                        class: class.to_string(),
                        ..Default::default()
                    });
                    continue;
                }
                let in_class = classes.last_mut();
                match (&words[..], in_class) {
                    (["pause", rest @ ..], Some(c)) => {
                        c.pause = true;
                        if let Some(i) = rest.iter().position(|w| *w == "pfc-cos") {
                            let cos = cos_list(&rest[i + 1..])
                                .map_err(|why| err(format!("`{t}`: {why}")))?;
                            c.pfc_cos.extend(cos);
                            c.pfc_cos.sort_unstable();
                            c.pfc_cos.dedup();
                        }
                    }
                    (["mtu", v], Some(c)) => {
                        c.mtu = Some(
                            v.parse()
                                .map_err(|_| err(format!("`{t}`: `{v}` is not an MTU")))?,
                        );
                    }
                    (["pause" | "mtu", ..], None) => {
                        return Err(err(format!(
                            "`{t}` in network-qos policy {policy} comes before any class"
                        )))
                    }
                    _ => {}
                }
            }
            Block::Queuing(policy) => {
                let classes = cfg.queuing.entry(policy.clone()).or_default();
                match (&words[..], classes.last_mut()) {
                    (["class", "type", "queuing", class], _) => classes.push(QueuingClass {
                        class: class.to_string(),
                        queue: queue_of(class),
                        red: None,
                    }),
                    (["random-detect", ..], Some(c)) => c.red = Some(parse_red(t, &words)),
                    (["random-detect", ..], None) => {
                        return Err(err(format!(
                            "`{t}` in queuing policy {policy} comes before any class"
                        )))
                    }
                    _ => {}
                }
            }
            Block::System => match words[..] {
                ["service-policy", "type", "network-qos", name] => {
                    cfg.system_network_qos = Some(name.to_string())
                }
                ["service-policy", "type", "queuing", "output", name] => {
                    cfg.system_queuing_output = Some(name.to_string())
                }
                _ => {}
            },
            Block::Interface(port) => {
                let i = cfg.interfaces.entry(port.clone()).or_default();
                match words[..] {
                    ["priority-flow-control", "mode", mode, ..] => {
                        i.pfc_mode = Some(mode.to_ascii_lowercase())
                    }
                    ["no", "priority-flow-control", "mode", ..] => i.pfc_mode = None,
                    ["priority-flow-control", "watch-dog-interval", v] => {
                        i.pfc_watchdog = on_off(v)
                    }
                    ["service-policy", "type", "queuing", "output", name] => {
                        i.queuing_output = Some(name.to_string())
                    }
                    _ => {}
                }
            }
        }
    }
    Ok(cfg)
}

impl QosConfig {
    /// The priorities PFC protects (the `pause pfc-cos` of the network-qos
    /// policy `system qos` applies) and the smallest MTU of those no-drop
    /// classes. No policy applied is the default one, which has no no-drop
    /// class; a policy the text does not define (a system template), or a
    /// `pause no-drop` class without `pfc-cos`, cannot be known.
    pub fn no_drop(&self) -> Result<([bool; 8], Option<u32>), String> {
        let Some(name) = &self.system_network_qos else {
            return Ok(([false; 8], None));
        };
        let Some(classes) = self.network_qos.get(name) else {
            return Err(format!(
                "`system qos` applies network-qos policy {name}, which the running configuration does not define (a system template?): its no-drop classes are not known"
            ));
        };
        let mut pfc = [false; 8];
        let mut mtu: Option<u32> = None;
        for c in classes.iter().filter(|c| c.pause) {
            if c.pfc_cos.is_empty() {
                return Err(format!(
                    "class {} of network-qos policy {name} is no-drop but names no `pfc-cos`: its priorities depend on class maps rocegate does not read",
                    c.class
                ));
            }
            for cos in &c.pfc_cos {
                pfc[usize::from(*cos)] = true;
            }
            if let Some(m) = c.mtu {
                mtu = Some(mtu.map_or(m, |x| x.min(m)));
            }
        }
        Ok((pfc, mtu))
    }

    /// The RED/ECN thresholds of the egress queuing policy on `port`: its
    /// own `service-policy type queuing output`, else the one `system qos`
    /// applies, else the default policy, which has none. Sorted by queue;
    /// the queue is the traffic class (QoS group N is served by queue N).
    pub fn ecn_for(&self, port: &str) -> Result<Vec<EcnQueue>, String> {
        let own = self
            .interfaces
            .get(&normalise_port(port))
            .and_then(|i| i.queuing_output.as_ref());
        let Some(name) = own.or(self.system_queuing_output.as_ref()) else {
            return Ok(Vec::new());
        };
        let Some(classes) = self.queuing.get(name) else {
            return Err(format!(
                "{port} uses queuing policy {name}, which the running configuration does not define (a system template?): its RED/ECN thresholds are not known"
            ));
        };
        let mut out = Vec::new();
        for c in classes {
            let Some(red) = &c.red else { continue };
            let Some(tc) = c.queue else {
                return Err(format!(
                    "class {} of queuing policy {name} has RED but is not a system class `c-out-8q-qN`, so its queue is not known",
                    c.class
                ));
            };
            match red {
                Red::Thresholds {
                    min: Threshold::Bytes(min),
                    max: Threshold::Bytes(max),
                    ecn,
                    ..
                } => out.push(EcnQueue {
                    tc,
                    min_bytes: *min,
                    max_bytes: *max,
                    ecn: *ecn,
                }),
                Red::Thresholds { .. } => {
                    return Err(format!(
                        "class {} of queuing policy {name} sets RED thresholds in packets or time, not bytes",
                        c.class
                    ))
                }
                Red::Unread(line) => {
                    return Err(format!(
                        "class {} of queuing policy {name}: `{line}` is not a RED line rocegate reads",
                        c.class
                    ))
                }
            }
        }
        out.sort_by_key(|e| e.tc);
        Ok(out)
    }
}

// ------------------------------------------------------------------- audit

/// What `show interface` says of one port's link, for the audit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct InterfaceSettings {
    pub port: String,
    /// `state` up or down; `None` for any other word.
    pub up: Option<bool>,
    pub mtu: Option<u32>,
    /// From `eth_speed` (`100 Gb/s`, `1000 Mb/s`); `None` when the link is
    /// down (`auto-speed`).
    pub speed_mbps: Option<u64>,
}

fn parse_speed(s: &str) -> Option<u64> {
    let mut w = s.split_whitespace();
    let n: u64 = w.next()?.parse().ok()?;
    match w.next()? {
        "Gb/s" => n.checked_mul(1000),
        "Mb/s" => Some(n),
        _ => None,
    }
}

/// `show interface` as structured output, for each port's state, MTU
/// (`eth_mtu`) and speed.
pub fn parse_interface_settings(body: &Value) -> Result<Vec<InterfaceSettings>, ParseError> {
    const TOOL: &str = "show interface";
    let mut out = Vec::new();
    for row in table(TOOL, body, "interface")? {
        let port = required(TOOL, row, &["interface"], "interface")?;
        let mtu = match counter(TOOL, row, "eth_mtu")? {
            Some(m) => Some(u32::try_from(m).map_err(|_| {
                ParseError(format!("{TOOL}: {port} eth_mtu {m} is not a possible MTU"))
            })?),
            None => None,
        };
        out.push(InterfaceSettings {
            up: match text_of(row, "state").as_deref() {
                Some("up") => Some(true),
                Some("down") => Some(false),
                _ => None,
            },
            mtu,
            speed_mbps: text_of(row, "eth_speed").as_deref().and_then(parse_speed),
            port,
        });
    }
    Ok(out)
}

/// The answers [`switch_config`] reads; `None` for one never asked or
/// never answered.
#[derive(Debug, Clone, Copy, Default)]
pub struct ConfigReplies<'a> {
    /// `show version`, structured.
    pub version: Option<&'a CommandReply>,
    /// `show interface`, structured: every port's state, MTU and speed.
    pub interfaces: Option<&'a CommandReply>,
    /// `show running-config ipqos`, as text.
    pub ipqos: Option<&'a CommandReply>,
    /// `show interface priority-flow-control`, structured or text: whether
    /// PFC runs on a port whose mode is auto.
    pub pfc: Option<&'a CommandReply>,
}

/// The commands of [`ConfigReplies`], in its order, with how to ask them.
pub const CONFIG_COMMANDS: [(&str, CliType); 4] = [
    ("show version", CliType::Show),
    ("show interface", CliType::Show),
    ("show running-config ipqos", CliType::ShowAscii),
    ("show interface priority-flow-control", CliType::Show),
];

fn reply_fact<T>(
    switch: &str,
    command: &str,
    reply: Option<&CommandReply>,
    read: impl FnOnce(&Reply) -> Result<T, String>,
) -> Fact<T> {
    match reply {
        Some(r) => r.fact(switch, read),
        None => Fact::Failed(format!("{switch}: `{command}` got no answer")),
    }
}

/// `then` of a known fact; the same failure otherwise.
fn with<T, U>(f: &Fact<T>, then: impl FnOnce(&T) -> Fact<U>) -> Fact<U> {
    match f {
        Fact::Known(v) => then(v),
        Fact::NotAvailable { tried, why } => Fact::NotAvailable {
            tried: tried.clone(),
            why: why.clone(),
        },
        Fact::Failed(e) => Fact::Failed(e.clone()),
    }
}

/// The audit's view of an NX-OS switch, from the answers to
/// [`CONFIG_COMMANDS`]. Per port (looked up by [`normalise_port`]):
///
/// - link, speed and MTU from `show interface`; the MTU is the smaller of
///   the port's and its no-drop class's network-qos MTU, since RoCE frames
///   travel in that class;
/// - PFC per priority: the no-drop CoS of the system network-qos policy
///   where the port's `priority-flow-control mode` is on, none where it is
///   off; in mode auto (the default) PFC runs only if DCBX agreed with the
///   peer, so `show interface priority-flow-control`'s Oper decides;
/// - ECN per queue from the port's egress queuing policy;
/// - the PFC Xoff threshold is not read (NX-OS sets it as a `pause
///   pause-threshold` of an ingress queuing class, in cells or bytes by
///   platform).
///
/// Never fails as a whole: each [`Fact`] says what it could not learn.
pub fn switch_config(switch: &str, ports: &[String], replies: &ConfigReplies<'_>) -> SwitchConfig {
    let nos_version = reply_fact(switch, "show version", replies.version, |r| {
        parse_version(r.json()?).map(|v| v.version).map_err(|e| e.0)
    });
    let interfaces = reply_fact(switch, "show interface", replies.interfaces, |r| {
        parse_interface_settings(r.json()?).map_err(|e| e.0)
    });
    let qos = reply_fact(switch, "show running-config ipqos", replies.ipqos, |r| {
        parse_running_ipqos(r.text()?).map_err(|e| e.0)
    });
    let pfc_oper = replies.pfc.map(|reply| {
        reply.fact(switch, |r| match r {
            Reply::Text(t) => parse_pfc_interface(t).map_err(|e| e.0),
            other => parse_pfc_interface_json(other.json()?).map_err(|e| e.0),
        })
    });
    let no_drop = with(&qos, |q| match q.no_drop() {
        Ok(v) => Fact::Known(v),
        Err(why) => Fact::NotAvailable {
            tried: vec!["show running-config ipqos".into()],
            why: format!("{switch}: {why}"),
        },
    });
    let pfc_watchdog = with(&qos, |q| {
        match q.pfc_watchdog {
        Some(on) => Fact::Known(on),
        None => Fact::NotAvailable {
            tried: vec!["show running-config ipqos".into()],
            why: format!(
                "{switch}: the running configuration does not set `priority-flow-control watch-dog-interval`, and the default differs between NX-OS releases"
            ),
        },
    }
    });
    let out = ports
        .iter()
        .map(|port| {
            let key = normalise_port(port);
            let row = with(&interfaces, |rows| {
                match rows.iter().find(|r| normalise_port(&r.port) == key) {
                    Some(r) => Fact::Known(r.clone()),
                    None => Fact::Failed(format!("{switch}: `show interface` printed no {port}")),
                }
            });
            let link_up = with(&row, |r| match r.up {
                Some(up) => Fact::Known(up),
                None => Fact::Failed(format!(
                    "{switch}: `show interface` gives {port} no state up or down"
                )),
            });
            let speed_mbps = with(&row, |r| match r.speed_mbps {
                Some(s) => Fact::Known(s),
                None => Fact::NotAvailable {
                    tried: vec!["show interface".into()],
                    why: format!(
                        "{switch}: {port} reports no speed{}",
                        if r.up == Some(false) {
                            ": the link is down"
                        } else {
                            ""
                        }
                    ),
                },
            });
            let mtu = with(&row, |r| match (r.mtu, no_drop.known().and_then(|n| n.1)) {
                (Some(m), Some(class)) => Fact::Known(m.min(class)),
                (Some(m), None) => Fact::Known(m),
                (None, _) => Fact::Failed(format!("{switch}: `show interface` gives {port} no eth_mtu")),
            });
            PortSettings {
                name: port.clone(),
                link_up,
                speed_mbps,
                mtu,
                pfc: port_pfc(switch, port, &qos, &no_drop, pfc_oper.as_ref()),
                ecn: with(&qos, |q| match q.ecn_for(port) {
                    Ok(v) => Fact::Known(v),
                    Err(why) => Fact::NotAvailable {
                        tried: vec!["show running-config ipqos".into()],
                        why: format!("{switch}: {why}"),
                    },
                }),
                pfc_xoff_bytes: Fact::NotAvailable {
                    tried: Vec::new(),
                    why: format!(
                        "{switch}: rocegate does not read NX-OS PFC Xoff thresholds yet (an ingress queuing class's `pause … pause-threshold`)"
                    ),
                },
            }
        })
        .collect();
    SwitchConfig {
        nos_version,
        pfc_watchdog,
        dscp_prio: crate::switch::config::dscp_not_read(
            switch,
            "the class-maps matching DSCP in `show running-config ipqos` are not read",
        ),
        ports: out,
    }
}

fn port_pfc(
    switch: &str,
    port: &str,
    qos: &Fact<QosConfig>,
    no_drop: &Fact<([bool; 8], Option<u32>)>,
    oper: Option<&Fact<Vec<PfcPort>>>,
) -> Fact<[bool; 8]> {
    with(qos, |q| {
        with(no_drop, |(pfc, _)| {
            let key = normalise_port(port);
            let mode = q.interfaces.get(&key).and_then(|i| i.pfc_mode.as_deref());
            match mode {
                Some("on") => Fact::Known(*pfc),
                Some("off") => Fact::Known([false; 8]),
                _ => match oper {
                    None => Fact::NotAvailable {
                        tried: vec!["show running-config ipqos".into()],
                        why: format!(
                            "{switch}: PFC on {port} is in mode auto: it runs only if DCBX agreed with the peer, which `show interface priority-flow-control` says"
                        ),
                    },
                    Some(oper) => with(oper, |rows| {
                        match rows.iter().find(|p| normalise_port(&p.port) == key) {
                            Some(p) if p.oper.eq_ignore_ascii_case("on") => Fact::Known(*pfc),
                            Some(p) if p.oper.eq_ignore_ascii_case("off") => Fact::Known([false; 8]),
                            Some(p) => Fact::Failed(format!(
                                "{switch}: `show interface priority-flow-control` gives {port} the state `{}`, neither On nor Off",
                                p.oper
                            )),
                            None => Fact::Failed(format!(
                                "{switch}: `show interface priority-flow-control` printed no {port}"
                            )),
                        }
                    }),
                },
            }
        })
    })
}
