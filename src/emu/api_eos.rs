//! What an emulated Arista switch answers over eAPI: the `runCmds` envelope
//! (a `result` with one entry per command, or EOS's JSON-RPC `error` with
//! the outputs of the commands that ran and the failed one's `errors`), the
//! JSON models of the show commands the `eos` platform reads, and the
//! configuration it sends: plain `configure`, and configuration sessions
//! committed with `commit timer`, which the switch rolls back by itself
//! when no abort or confirmation comes in time.
//!
//! Shapes follow the captures in tests/fixtures/eos (ANTA's and napalm's);
//! values come from the model ([`Ctx`]). Two models of switch: a leaf is a
//! VOQ switch (7280R3: Jericho2), which answers `show interfaces X counters
//! queue drops`; a spine a 7060X (Tomahawk), which has no VOQs and answers
//! that command with error 1002 `Invalid input`, as a real one does.

use serde_json::{json, Map, Value};

use crate::config::inventory::SwitchRole;
use crate::config::model::SwitchId;
use crate::exec::apicall::CallResult;
use crate::switch::eos::normalise_port;

use super::api_out::{self, asn, count, name_mac, p2p_address, ApiCall, Ctx, Kind, Op, Out};
use super::state::Neighbor;

/// EOS the emulated switches run unless the inventory's `versions.nos`
/// names one.
const EOS_VERSION: &str = "4.32.2F";

/// Where a command of a call runs.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Mode {
    Exec,
    /// `configure` (no session) or `configure session` (its index).
    Config(Option<usize>),
    Interface(Option<usize>, usize),
    Router(Option<usize>),
}

impl Mode {
    fn session(self) -> Option<usize> {
        match self {
            Mode::Exec => None,
            Mode::Config(s) | Mode::Interface(s, _) | Mode::Router(s) => s,
        }
    }
}

fn invalid(cmd: &str, token: usize) -> (i64, String) {
    let word = cmd.split_whitespace().nth(token).unwrap_or_default();
    (1002, format!("Invalid input (at token {token}: '{word}')"))
}

fn failed(why: String) -> (i64, String) {
    (1000, why)
}

/// Whether switch `s` has VOQs (a leaf: 7280R3) or not (a spine: 7060X).
fn voq(ctx: &Ctx, s: SwitchId) -> bool {
    ctx.inv.switches[s].role == SwitchRole::Leaf
}

fn model_name(ctx: &Ctx, s: SwitchId) -> &'static str {
    if voq(ctx, s) {
        "DCS-7280DR3-24-F"
    } else {
        "DCS-7060DX5-64S-F"
    }
}

/// Answers one `runCmds` call.
pub fn call(ctx: &mut Ctx, s: SwitchId, call: &ApiCall) -> CallResult {
    let Kind::Eapi { id, text } = &call.kind else {
        return CallResult {
            status: 404,
            body: String::new(),
        };
    };
    let mut mode = Mode::Exec;
    let mut outs: Vec<Value> = Vec::new();
    let n = call.cmds.len();
    for (i, cmd) in call.cmds.iter().enumerate() {
        match command(ctx, s, &mut mode, cmd, *text) {
            Ok(v) => outs.push(v),
            Err((code, why)) => {
                outs.push(json!({ "errors": [why] }));
                let what = if code == 1002 {
                    "invalid command"
                } else {
                    "could not run command"
                };
                return CallResult {
                    status: 200,
                    body: json!({
                        "jsonrpc": "2.0",
                        "id": id,
                        "error": {
                            "code": code,
                            "message": format!("CLI command {} of {n} '{cmd}' failed: {what}", i + 1),
                            "data": outs,
                        }
                    })
                    .to_string(),
                };
            }
        }
    }
    CallResult {
        status: 200,
        body: json!({"jsonrpc": "2.0", "id": id, "result": outs}).to_string(),
    }
}

fn command(ctx: &mut Ctx, s: SwitchId, mode: &mut Mode, cmd: &str, text: bool) -> Out {
    let done = || {
        Ok(if text {
            json!({"output": ""})
        } else {
            json!({})
        })
    };
    if cmd == "enable" {
        return done();
    }
    if cmd.starts_with("show ") {
        if text {
            return Err(failed(format!(
                "the emulated switch prints `{cmd}` in JSON only"
            )));
        }
        return show(ctx, s, cmd);
    }
    let w: Vec<&str> = cmd.split_whitespace().collect();
    match w.as_slice() {
        ["configure"] | ["configure", "terminal"] => *mode = Mode::Config(None),
        ["configure", "session", name] => {
            let k = session(ctx, s, name);
            *mode = Mode::Config(Some(k));
        }
        ["configure", "session", name, "abort"] => abort(ctx, s, name)?,
        ["configure", "session", name, "commit"] => {
            let k = open_session(ctx, s, name).ok_or_else(|| no_session(name))?;
            commit(ctx, s, k, None)?;
        }
        ["commit", "timer", hms] if mode.session().is_some() => {
            let secs = parse_hms(hms).ok_or_else(|| invalid(cmd, 2))?;
            commit(ctx, s, mode.session().unwrap_or_default(), Some(secs))?;
            *mode = Mode::Exec;
        }
        ["commit"] if mode.session().is_some() => {
            commit(ctx, s, mode.session().unwrap_or_default(), None)?;
            *mode = Mode::Exec;
        }
        ["abort"] if mode.session().is_some() => {
            let k = mode.session().unwrap_or_default();
            ctx.world.api.sessions[k].staged.clear();
            ctx.world.api.sessions[k].completed = true;
            *mode = Mode::Exec;
        }
        ["interface", port] if *mode != Mode::Exec => {
            let p = ctx
                .port(s, port, normalise_port)
                .ok_or_else(|| invalid(cmd, 1))?;
            *mode = Mode::Interface(mode.session(), p);
        }
        ["router", "bgp", n] if *mode != Mode::Exec => {
            let mine = asn(ctx.inv, s);
            match n.parse::<u32>() {
                Ok(a) if a == mine => *mode = Mode::Router(mode.session()),
                Ok(a) if a > 0 => {
                    return Err(failed(format!(
                        "% BGP is already running with AS number {mine}"
                    )))
                }
                _ => return Err(invalid(cmd, 2)),
            }
        }
        ["neighbor", x, "shutdown"] | ["no", "neighbor", x, "shutdown"]
            if matches!(*mode, Mode::Router(_)) =>
        {
            let shut = w[0] == "neighbor";
            // The session whose far end has address `x`.
            let Some((link, side)) = ctx
                .sessions(s)
                .into_iter()
                .map(|(l, mine, _)| (l, mine % 2))
                .find(|&(l, side)| api_out::p2p_address(l, 1 - side) == *x)
            else {
                return Err(failed(format!("% Neighbor {x} does not exist")));
            };
            let op = Op::Peer { link, side, shut };
            match mode.session() {
                Some(k) => ctx.world.api.sessions[k].staged.push(op),
                None => ctx.apply(op),
            }
        }
        ["shutdown"] | ["no", "shutdown"] => {
            let up = w.len() == 2;
            let op = match *mode {
                Mode::Interface(_, port) => Op::Port { port, up },
                Mode::Router(_) => Op::Bgp { switch: s, up },
                _ => return Err(invalid(cmd, 0)),
            };
            match mode.session() {
                Some(k) => ctx.world.api.sessions[k].staged.push(op),
                None => ctx.apply(op),
            }
        }
        ["end"] => *mode = Mode::Exec,
        ["exit"] => {
            *mode = match *mode {
                Mode::Interface(k, _) | Mode::Router(k) => Mode::Config(k),
                _ => Mode::Exec,
            }
        }
        _ => return Err(invalid(cmd, 0)),
    }
    done()
}

fn no_session(name: &str) -> (i64, String) {
    failed(format!("% Session {name} does not exist"))
}

/// `HH:MM:SS` → seconds.
fn parse_hms(s: &str) -> Option<f64> {
    let p: Vec<u64> = s
        .split(':')
        .map(|x| x.parse().ok())
        .collect::<Option<_>>()?;
    match p.as_slice() {
        [h, m, s] if *m < 60 && *s < 60 => Some((h * 3600 + m * 60 + s) as f64),
        _ => None,
    }
}

/// The open (not completed) session `name` of switch `s`.
fn open_session(ctx: &Ctx, s: SwitchId, name: &str) -> Option<usize> {
    ctx.world
        .api
        .sessions
        .iter()
        .position(|x| x.switch == s && x.name == name && !x.completed)
}

fn session(ctx: &mut Ctx, s: SwitchId, name: &str) -> usize {
    open_session(ctx, s, name).unwrap_or_else(|| {
        ctx.world.api.sessions.push(api_out::Session {
            switch: s,
            name: name.to_string(),
            staged: Vec::new(),
            timer: None,
            due: 0.0,
            completed: false,
        });
        ctx.world.api.sessions.len() - 1
    })
}

/// Commits session `k`: its staged changes apply at once. With a timer,
/// the switch rolls them back after `secs` unless the session is confirmed
/// (`commit`) or aborted first; EOS runs one such timer at a time. Without
/// one, a pending timer is confirmed.
fn commit(ctx: &mut Ctx, s: SwitchId, k: usize, secs: Option<f64>) -> Result<(), (i64, String)> {
    if let Some(t) = ctx.world.api.sessions[k].timer {
        // Confirming: the rollback never comes.
        ctx.world.api.timers[t].armed = false;
        ctx.world.api.sessions[k].timer = None;
        ctx.world.api.sessions[k].completed = true;
        return Ok(());
    }
    if secs.is_some() {
        if let Some(other) = ctx
            .world
            .api
            .sessions
            .iter()
            .find(|x| x.switch == s && x.timer.is_some_and(|t| ctx.world.api.timers[t].armed))
        {
            return Err(failed(format!(
                "% Cannot commit with a timer: session {} has a pending commit timer",
                other.name
            )));
        }
    }
    let staged = std::mem::take(&mut ctx.world.api.sessions[k].staged);
    let mut restore = Vec::new();
    for op in staged {
        restore.push(ctx.inverse(op));
        ctx.apply(op);
    }
    restore.reverse();
    match secs {
        Some(secs) => {
            let name = ctx.world.api.sessions[k].name.clone();
            let t = ctx.arm(s, restore, secs, &name);
            ctx.world.api.sessions[k].timer = Some(t);
            ctx.world.api.sessions[k].due = ctx.t + secs.max(1.0);
        }
        None => ctx.world.api.sessions[k].completed = true,
    }
    Ok(())
}

/// `configure session NAME abort`: a session committed with a timer is
/// rolled back now; one never committed loses its staged changes. A
/// session that is gone (its timer already rolled it back) is an error.
fn abort(ctx: &mut Ctx, s: SwitchId, name: &str) -> Result<(), (i64, String)> {
    let k = open_session(ctx, s, name).ok_or_else(|| no_session(name))?;
    if let Some(t) = ctx.world.api.sessions[k].timer.take() {
        if ctx.world.api.timers[t].armed {
            ctx.world.api.timers[t].armed = false;
            for op in ctx.world.api.timers[t].restore.clone() {
                ctx.apply(op);
            }
        }
    }
    ctx.world.api.sessions[k].staged.clear();
    ctx.world.api.sessions[k].completed = true;
    Ok(())
}

// --------------------------------------------------------------- reads

fn show(ctx: &Ctx, s: SwitchId, cmd: &str) -> Out {
    let w: Vec<&str> = cmd.split_whitespace().collect();
    let port = |name: &str| {
        ctx.port(s, name, normalise_port)
            .ok_or_else(|| failed(format!("% Interface {name} does not exist")))
    };
    Ok(match w.as_slice() {
        ["show", "interfaces", "status"] => interfaces_status(ctx, s),
        ["show", "interfaces"] => interfaces(ctx, &ctx.ports(s)),
        ["show", "interfaces", x] => interfaces(ctx, &[port(x)?]),
        ["show", "interfaces", x, "counters", "errors"] => counters_errors(ctx, port(x)?),
        ["show", "interfaces", x, "counters", "discards"] => counters_discards(ctx, port(x)?),
        ["show", "interfaces", x, "counters", "queue", "drops"] => {
            if !voq(ctx, s) {
                return Err(invalid(cmd, 5));
            }
            queue_drops(ctx, port(x)?)
        }
        ["show", "priority-flow-control", "interfaces", x, "counters"] => {
            pfc_counters(ctx, port(x)?)
        }
        ["show", "qos", "interfaces", x, "ecn", "counters", "queue"] => ecn_counters(ctx, port(x)?),
        ["show", "bgp", "summary", "vrf", "all"]
        | ["show", "ip", "bgp", "summary", "vrf", "all"] => bgp_summary(ctx, s),
        ["show", "ip", "interface", x] => ip_interface(ctx, s, port(x)?),
        ["show", "configuration", "sessions", "detail"] => sessions_detail(ctx, s),
        ["show", "version"] => version(ctx, s),
        ["show", "lldp", "neighbors", "detail"] => lldp(ctx, s),
        _ => return Err(invalid(cmd, 1)),
    })
}

/// EOS's link states: `disabled` (shut down), `connected`, `notconnect`.
fn link_status(ctx: &Ctx, p: usize) -> (&'static str, &'static str) {
    let c = &ctx.world.port_cfg[p];
    if !c.admin_up {
        ("disabled", "down")
    } else if c.link_up {
        ("connected", "up")
    } else {
        ("notconnect", "down")
    }
}

fn dotted(m: [u8; 6]) -> String {
    format!(
        "{:02x}{:02x}.{:02x}{:02x}.{:02x}{:02x}",
        m[0], m[1], m[2], m[3], m[4], m[5]
    )
}

fn colons(m: [u8; 6]) -> String {
    m.iter()
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(":")
}

fn port_mac(ctx: &Ctx, p: usize) -> [u8; 6] {
    let s = ctx.world.port_switch[p].unwrap_or_default();
    let mut m = name_mac(&ctx.inv.switches[s].name);
    m[5] = m[5].wrapping_add(1 + (p % 200) as u8);
    m
}

fn interfaces(ctx: &Ctx, ports: &[usize]) -> Value {
    let mut m = Map::new();
    for &p in ports {
        let cfg = &ctx.world.port_cfg[p];
        let c = &ctx.world.port[p];
        let (status, line) = link_status(ctx, p);
        let downs = count(c.link_down_events);
        let drops: f64 = c.tc_drops.iter().sum();
        m.insert(
            cfg.name.clone(),
            json!({
                "name": cfg.name,
                "forwardingModel": "routed",
                "lineProtocolStatus": line,
                "interfaceStatus": status,
                "hardware": "ethernet",
                "duplex": "duplexFull",
                "mtu": cfg.mtu,
                "bandwidth": cfg.speed_mbps * 1_000_000,
                "description": "",
                "physicalAddress": colons(port_mac(ctx, p)),
                "burnedInAddress": colons(port_mac(ctx, p)),
                "interfaceCounters": {
                    "inOctets": count(c.rx_bytes),
                    "inUcastPkts": count(c.rx_packets),
                    "inMulticastPkts": 0,
                    "inBroadcastPkts": 0,
                    "inDiscards": 0,
                    "inTotalPkts": count(c.rx_packets),
                    "outOctets": count(c.tx_bytes),
                    "outUcastPkts": count(c.tx_packets),
                    "outMulticastPkts": 0,
                    "outBroadcastPkts": 0,
                    "outDiscards": count(drops),
                    "totalInErrors": count(c.rx_crc_errors),
                    "totalOutErrors": 0,
                    "inputErrorsDetail": {
                        "runtFrames": 0,
                        "giantFrames": 0,
                        "fcsErrors": count(c.rx_crc_errors),
                        "alignmentErrors": 0,
                        "symbolErrors": count(c.rx_symbol_errors),
                        "rxPause": 0,
                    },
                    "outputErrorsDetail": {
                        "collisions": 0,
                        "lateCollisions": 0,
                        "deferredTransmissions": 0,
                        "txPause": 0,
                    },
                    // Every loss of link is a change down and one up; a
                    // port down now has not had its change up yet.
                    "linkStatusChanges": (2 * downs).saturating_sub(u64::from(line == "down" && downs > 0)),
                    "counterRefreshTime": ctx.t,
                },
            }),
        );
    }
    json!({ "interfaces": m })
}

fn counters_errors(ctx: &Ctx, p: usize) -> Value {
    let c = &ctx.world.port[p];
    json!({"interfaceErrorCounters": {ctx.world.port_cfg[p].name.clone(): {
        "inErrors": count(c.rx_crc_errors),
        "frameTooLongs": 0,
        "outErrors": 0,
        "frameTooShorts": 0,
        "fcsErrors": count(c.rx_crc_errors),
        "alignmentErrors": 0,
        "symbolErrors": count(c.rx_symbol_errors),
    }}})
}

fn counters_discards(ctx: &Ctx, p: usize) -> Value {
    let drops = count(ctx.world.port[p].tc_drops.iter().sum());
    json!({
        "inDiscardsTotal": 0,
        "outDiscardsTotal": drops,
        "interfaces": {ctx.world.port_cfg[p].name.clone(): {"inDiscards": 0, "outDiscards": drops}},
    })
}

/// A VOQ switch drops in the ingress VOQ of the egress port's queue: the
/// model's egress drops are counted there, the egress queue drops nothing.
fn queue_drops(ctx: &Ctx, p: usize) -> Value {
    let c = &ctx.world.port[p];
    let tcs: Map<String, Value> = (0..8)
        .map(|tc| {
            (
                format!("TC{tc}"),
                json!({
                    "ingressVoqCounters": {"countersSum": {"droppedPackets": count(c.tc_drops[tc])}},
                    "egressQueueCounters": {"countersSum": {"droppedPackets": 0}},
                }),
            )
        })
        .collect();
    json!({"interfaces": {ctx.world.port_cfg[p].name.clone(): {"trafficClasses": tcs}}})
}

/// Revision 3: the port's PFC frames, every priority together.
fn pfc_counters(ctx: &Ctx, p: usize) -> Value {
    let c = &ctx.world.port[p];
    let rx: f64 = c.prio.iter().map(|x| x.rx_pause).sum();
    let tx: f64 = c.prio.iter().map(|x| x.tx_pause).sum();
    json!({"interfaceCounters": {ctx.world.port_cfg[p].name.clone(): {
        "rxFrames": count(rx),
        "txFrames": count(tx),
    }}})
}

/// Marked packets per queue, as strings; `-` where the queue has no ECN.
fn ecn_counters(ctx: &Ctx, p: usize) -> Value {
    let cfg = &ctx.world.port_cfg[p];
    let c = &ctx.world.port[p];
    let q: Map<String, Value> = (0..8)
        .map(|tc| {
            let v = if cfg.ecn[tc].is_some() {
                count(c.tc_ecn_marked[tc]).to_string()
            } else {
                "-".to_string()
            };
            (tc.to_string(), Value::String(v))
        })
        .collect();
    json!({"intfQueueCounters": {cfg.name.clone(): {"queueCounters": q}}})
}

fn interfaces_status(ctx: &Ctx, s: SwitchId) -> Value {
    let m: Map<String, Value> = ctx
        .ports(s)
        .into_iter()
        .map(|p| {
            let cfg = &ctx.world.port_cfg[p];
            let (status, line) = link_status(ctx, p);
            (
                cfg.name.clone(),
                json!({
                    "description": "",
                    "linkStatus": status,
                    "lineProtocolStatus": line,
                    "bandwidth": cfg.speed_mbps * 1_000_000,
                    "duplex": "duplexFull",
                    "autoNegotiateActive": false,
                    "vlanInformation": {"interfaceMode": "routed", "interfaceForwardingModel": "routed"},
                }),
            )
        })
        .collect();
    json!({ "interfaceStatuses": m })
}

/// `show ip interface X`: a leaf–spine port's /31 (the address its BGP
/// peer sees); a host-facing port has none (`0.0.0.0/0`).
fn ip_interface(ctx: &Ctx, s: SwitchId, p: usize) -> Value {
    let (link, side) = (p / 2, p % 2);
    let routed = ctx.sessions(s).iter().any(|(l, _, _)| *l == link);
    let (address, len) = if routed {
        (api_out::p2p_address(link, side), 31)
    } else {
        ("0.0.0.0".to_string(), 0)
    };
    json!({"interfaces": {ctx.world.port_cfg[p].name.clone(): {
        "name": ctx.world.port_cfg[p].name,
        "interfaceAddress": {
            "primaryIp": {"address": address, "maskLen": len},
            "secondaryIpsOrderedList": [],
        },
    }}})
}

fn bgp_summary(ctx: &Ctx, s: SwitchId) -> Value {
    let mut peers = Map::new();
    for (l, mine, far) in ctx.sessions(s) {
        let state = if ctx.world.api.bgp_shut[s] {
            "Idle"
        } else if ctx.session_up(l) {
            "Established"
        } else {
            "Active"
        };
        let family = if state == "Established" {
            "negotiated"
        } else {
            "advertised"
        };
        peers.insert(
            p2p_address(l, 1 - mine % 2),
            json!({
                "peerState": state,
                "peerAsn": asn(ctx.inv, far).to_string(),
                "ipv4Unicast": {"afiSafiState": family},
            }),
        );
    }
    let id = s + 1;
    json!({"vrfs": {"default": {
        "vrf": "default",
        "routerId": format!("10.255.255.{}", id & 0xFF),
        "asn": asn(ctx.inv, s).to_string(),
        "peers": peers,
    }}})
}

fn uptime(ctx: &Ctx) -> f64 {
    api_out::BOOT_UPTIME_S + ctx.t
}

fn sessions_detail(ctx: &Ctx, s: SwitchId) -> Value {
    let mut sessions = Map::new();
    let mut pending = (String::new(), 0.0);
    for x in ctx.world.api.sessions.iter().filter(|x| x.switch == s) {
        let armed = x.timer.is_some_and(|t| ctx.world.api.timers[t].armed);
        let state = if armed {
            pending = (x.name.clone(), api_out::BOOT_UPTIME_S + x.due);
            "pendingCommitTimer"
        } else if x.completed {
            "completed"
        } else {
            "pending"
        };
        sessions.insert(
            x.name.clone(),
            json!({"state": state, "commitUser": "", "description": "", "instances": {}}),
        );
    }
    json!({
        "maxSavedSessions": 1,
        "maxOpenSessions": 5,
        "sessions": sessions,
        "commitTimerSessionName": pending.0,
        "commitTimerExpireTime": pending.1,
    })
}

fn version(ctx: &Ctx, s: SwitchId) -> Value {
    let name = &ctx.inv.switches[s].name;
    let v = ctx
        .inv
        .fabric
        .versions
        .nos
        .clone()
        .unwrap_or_else(|| EOS_VERSION.into());
    let mac = name_mac(name);
    json!({
        "mfgName": "Arista",
        "modelName": model_name(ctx, s),
        "hardwareRevision": "11.00",
        "serialNumber": format!("JPE{:08}", u32::from_be_bytes([mac[2], mac[3], mac[4], mac[5]]) % 100_000_000),
        "systemMacAddress": colons(mac),
        "hwMacAddress": colons(mac),
        "configMacAddress": "00:00:00:00:00:00",
        "version": v,
        "architecture": "x86_64",
        "internalVersion": format!("{v}-38195967.{}", v.replace('.', "")),
        "imageFormatVersion": "3.0",
        "imageOptimization": "Default",
        "uptime": uptime(ctx),
        "memTotal": 32_617_004,
        "memFree": 24_871_232,
        "isIntlVersion": false,
    })
}

fn lldp(ctx: &Ctx, s: SwitchId) -> Value {
    let m: Map<String, Value> = ctx
        .ports(s)
        .into_iter()
        .map(|p| {
            let cfg = &ctx.world.port_cfg[p];
            let heard = cfg.neighbor.as_ref().filter(|_| cfg.link_up);
            let info: Vec<Value> = heard
                .map(|n| match n {
                    Neighbor::Host {
                        node,
                        netdev,
                        mac,
                        mgmt,
                    } => json!({
                        "chassisIdType": "macAddress",
                        "chassisId": dotted(name_mac(node)),
                        "systemName": node,
                        "systemDescription": format!("rocegate emulated host {node}"),
                        "managementAddresses": [{"addressType": "ipv4", "address": mgmt}],
                        "ttl": 120,
                        "neighborInterfaceInfo": {
                            "interfaceIdType": "macAddress",
                            "interfaceId": dotted(*mac),
                            "interfaceId_v2": dotted(*mac),
                            "interfaceDescription": netdev,
                        },
                    }),
                    Neighbor::Switch { name, port, mgmt } => json!({
                        "chassisIdType": "macAddress",
                        "chassisId": dotted(name_mac(name)),
                        "systemName": name,
                        "systemDescription": format!("rocegate emulated switch {name}"),
                        "managementAddresses": [{"addressType": "ipv4", "address": mgmt}],
                        "ttl": 120,
                        "neighborInterfaceInfo": {
                            "interfaceIdType": "interfaceName",
                            "interfaceId": format!("\"{port}\""),
                            "interfaceId_v2": port,
                            "interfaceDescription": port,
                        },
                    }),
                })
                .into_iter()
                .collect();
            (cfg.name.clone(), json!({ "lldpNeighborInfo": info }))
        })
        .collect();
    json!({ "lldpNeighbors": m })
}
