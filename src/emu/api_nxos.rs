//! What an emulated Cisco Nexus answers over NX-API (`POST /ins`,
//! `ins_api`): one output per command (`code`, `msg`, `body`, the command
//! echoed as `input`), structured `TABLE_x`/`ROW_x` bodies for `cli_show`
//! (one row an object, several a list), text for `cli_show_ascii`, and
//! configuration lines for `cli_conf`, each answered on its own as the CLI
//! runs them one by one. `run bash` runs the `nxos` platform's dead-man: a
//! detached timer that restores the change after its `sleep` unless a
//! `pkill` of its name comes first, printed as its pid.
//!
//! Field names are the ones the `nxos` parsers read (taken from captures
//! and from Cisco's show-command reference); values come from the model
//! ([`Ctx`]). The RoCE priority is QoS group and queue of the same number.

use serde_json::{json, Map, Value};

use crate::config::model::SwitchId;
use crate::exec::apicall::CallResult;
use crate::switch::nxos::normalise_port;

use super::api_out::{asn, count, name_mac, p2p_address, ApiCall, Ctx, Kind, Op, Out};
use super::state::Neighbor;

/// NX-OS the emulated switches run unless the inventory's `versions.nos`
/// names one.
const NXOS_VERSION: &str = "10.3(4a)";

fn colon_mac(m: [u8; 6]) -> String {
    format!(
        "{:02x}{:02x}.{:02x}{:02x}.{:02x}{:02x}",
        m[0], m[1], m[2], m[3], m[4], m[5]
    )
}

/// `TABLE_x: {ROW_x: …}`: one row an object, several a list, none no table.
fn table(name: &str, rows: Vec<Value>) -> Value {
    let mut m = Map::new();
    let row = match rows.len() {
        0 => return Value::Object(m),
        1 => rows.into_iter().next().unwrap_or_default(),
        _ => Value::Array(rows),
    };
    m.insert(
        format!("TABLE_{name}"),
        json!({ format!("ROW_{name}"): row }),
    );
    Value::Object(m)
}

fn cli_error(why: &str) -> (i64, String) {
    (400, why.to_string())
}

/// Answers one `ins_api` call.
pub fn call(ctx: &mut Ctx, s: SwitchId, call: &ApiCall) -> CallResult {
    let Kind::Nxapi { ty } = &call.kind else {
        return CallResult {
            status: 404,
            body: String::new(),
        };
    };
    let mut router = false;
    let mut port: Option<usize> = None;
    let outputs: Vec<Value> = call
        .cmds
        .iter()
        .map(|cmd| {
            let r = match ty.as_str() {
                "cli_show" if cmd.starts_with("run bash") => {
                    Err((501, "Structured output unsupported".to_string()))
                }
                "cli_show" => show(ctx, s, cmd),
                "cli_show_ascii" if cmd.starts_with("run bash") => {
                    bash(ctx, s, cmd).map(Value::String)
                }
                "cli_show_ascii" => ascii(ctx, s, cmd).map(Value::String),
                "cli_conf" => conf(ctx, s, cmd, &mut port, &mut router).map(|()| json!({})),
                other => Err((400, format!("Invalid type {other}"))),
            };
            match r {
                Ok(body) => json!({"input": cmd, "msg": "Success", "code": "200", "body": body}),
                Err((501, why)) => json!({"input": cmd, "msg": why, "code": "501"}),
                Err((code, why)) => json!({
                    "input": cmd,
                    "msg": "Input CLI command error",
                    "code": code.to_string(),
                    "clierror": format!("{why}\n"),
                }),
            }
        })
        .collect();
    let output = if outputs.len() == 1 {
        outputs.into_iter().next().unwrap_or_default()
    } else {
        Value::Array(outputs)
    };
    CallResult {
        status: 200,
        body: json!({"ins_api": {
            "type": ty,
            "version": "1.0",
            "sid": "eoc",
            "outputs": {"output": output},
        }})
        .to_string(),
    }
}

/// One configuration line, in the context the lines before it opened.
fn conf(
    ctx: &mut Ctx,
    s: SwitchId,
    cmd: &str,
    port: &mut Option<usize>,
    router: &mut bool,
) -> Result<(), (i64, String)> {
    let w: Vec<&str> = cmd.split_whitespace().collect();
    match w.as_slice() {
        ["configure"] | ["configure", "terminal"] | ["end"] | ["exit"] => {
            *port = None;
            *router = false;
        }
        ["interface", name @ ..] if !name.is_empty() => {
            let p = ctx
                .port(s, &name.concat(), normalise_port)
                .ok_or_else(|| cli_error("% Invalid interface format at '^' marker."))?;
            *port = Some(p);
            *router = false;
        }
        ["router", "bgp", n] => {
            let mine = asn(ctx.inv, s);
            match n.parse::<u32>() {
                Ok(a) if a == mine => {
                    *router = true;
                    *port = None;
                }
                Ok(a) if a > 0 => {
                    return Err(cli_error(&format!(
                        "% BGP is already running; AS is {mine}"
                    )))
                }
                _ => return Err(cli_error("% Invalid number at '^' marker.")),
            }
        }
        ["shutdown"] | ["no", "shutdown"] => {
            let up = w.len() == 2;
            let op = match (*port, *router) {
                (Some(port), _) => Op::Port { port, up },
                (None, true) => Op::Bgp { switch: s, up },
                _ => return Err(cli_error("% Invalid command at '^' marker.")),
            };
            ctx.apply(op);
        }
        _ => return Err(cli_error("% Invalid command at '^' marker.")),
    }
    Ok(())
}

/// The restore a dead-man's `vsh -c "…"` runs, as changes.
fn restore_ops(ctx: &Ctx, s: SwitchId, script: &str) -> Vec<Op> {
    let lines: Vec<String> = script
        .replace("$(printf \\\\073)", ";")
        .replace("$(printf \\073)", ";")
        .split(';')
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect();
    let mut ops = Vec::new();
    let (mut port, mut router) = (None, false);
    for l in &lines {
        let w: Vec<&str> = l.split_whitespace().collect();
        match w.as_slice() {
            ["interface", name @ ..] => {
                port = ctx.port(s, &name.concat(), normalise_port);
                router = false;
            }
            ["router", "bgp", ..] => {
                router = true;
                port = None;
            }
            ["shutdown"] | ["no", "shutdown"] => {
                let up = w.len() == 2;
                match (port, router) {
                    (Some(port), _) => ops.push(Op::Port { port, up }),
                    (None, true) => ops.push(Op::Bgp { switch: s, up }),
                    _ => {}
                }
            }
            _ => {}
        }
    }
    ops
}

/// `run bash …`: the dead-man the `nxos` platform arms (`setsid sh -c ':
/// NAME && sleep N && vsh -c "…"' … & sleep 0.5 && pgrep -f 'PATTERN'`),
/// which prints its pid, and its `pkill -f 'PATTERN' || true`.
fn bash(ctx: &mut Ctx, s: SwitchId, cmd: &str) -> Result<String, (i64, String)> {
    let quoted = |after: &str| -> Option<String> {
        let rest = &cmd[cmd.find(after)? + after.len()..];
        Some(rest[..rest.find('\'')?].to_string())
    };
    if cmd.contains("pkill -f '") {
        let name = quoted("pkill -f '")
            .unwrap_or_default()
            .replace(['[', ']'], "");
        for t in ctx.world.api.timers.iter_mut() {
            if t.switch == s && t.armed && t.name == name {
                t.armed = false;
            }
        }
        return Ok(String::new());
    }
    let Some(script) = quoted("setsid sh -c ': ") else {
        return Err((
            400,
            format!("bash: {cmd}: not modelled by the emulated switch"),
        ));
    };
    let name = script.split(" &&").next().unwrap_or_default().to_string();
    let secs: f64 = script
        .split("&& sleep ")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .ok_or_else(|| (400, format!("bash: no sleep in {script}")))?;
    let vsh = script
        .split("vsh -c \"")
        .nth(1)
        .and_then(|r| r.split('"').next())
        .unwrap_or_default();
    let ops = restore_ops(ctx, s, vsh);
    let k = ctx.arm(s, ops, secs, &name);
    Ok(format!("{}\n", ctx.world.api.timers[k].pid))
}

fn ascii(ctx: &Ctx, s: SwitchId, cmd: &str) -> Result<String, (i64, String)> {
    match cmd {
        "show running-config ipqos" => Ok(running_ipqos(ctx, s)),
        _ => Err(cli_error("% Invalid command at '^' marker.")),
    }
}

fn show(ctx: &Ctx, s: SwitchId, cmd: &str) -> Out {
    let w: Vec<&str> = cmd.split_whitespace().collect();
    let port = |name: &str| {
        ctx.port(s, name, normalise_port)
            .ok_or_else(|| cli_error("% Invalid interface format at '^' marker."))
    };
    Ok(match w.as_slice() {
        ["show", "interface"] => interface(ctx, &ctx.ports(s)),
        ["show", "interface", "status"] => status(ctx, s),
        ["show", "interface", "priority-flow-control"] => pfc(ctx, &ctx.ports(s)),
        ["show", "interface", x] => interface(ctx, &[port(x)?]),
        ["show", "interface", x, "counters", "errors"] => errors(ctx, port(x)?),
        ["show", "interface", x, "priority-flow-control"] => pfc(ctx, &[port(x)?]),
        ["show", "queuing", "interface", x] => queuing(ctx, port(x)?),
        ["show", "bgp", "all", "summary", "vrf", "all"] => bgp(ctx, s),
        ["show", "version"] => version(ctx, s),
        ["show", "lldp", "neighbors", "detail"] => lldp(ctx, s),
        _ => return Err(cli_error("% Invalid command at '^' marker.")),
    })
}

fn states(ctx: &Ctx, p: usize) -> (&'static str, &'static str, &'static str) {
    let c = &ctx.world.port_cfg[p];
    match (c.admin_up, c.link_up) {
        (false, _) => ("down", "down", "Administratively down"),
        (true, true) => ("up", "up", "none"),
        (true, false) => ("up", "down", "Link not connected"),
    }
}

fn interface(ctx: &Ctx, ports: &[usize]) -> Value {
    let rows = ports
        .iter()
        .map(|&p| {
            let cfg = &ctx.world.port_cfg[p];
            let c = &ctx.world.port[p];
            let (admin, state, why) = states(ctx, p);
            let drops: f64 = c.tc_drops.iter().sum();
            json!({
                "interface": cfg.name,
                "state": state,
                "state_rsn_desc": why,
                "admin_state": admin,
                "eth_hw_desc": "100/200/400/800 Ethernet",
                "eth_mtu": cfg.mtu.to_string(),
                "eth_bw": cfg.speed_mbps * 1000,
                "eth_speed": format!("{} Gb/s", cfg.speed_mbps / 1000),
                "eth_duplex": "full",
                "eth_mode": "routed",
                "eth_reset_cntr": count(c.link_down_events),
                "eth_inpkts": count(c.rx_packets),
                "eth_inbytes": count(c.rx_bytes),
                "eth_inucast": count(c.rx_packets),
                "eth_inmcast": 0,
                "eth_inbcast": 0,
                "eth_outpkts": count(c.tx_packets),
                "eth_outbytes": count(c.tx_bytes),
                "eth_outucast": count(c.tx_packets),
                "eth_outmcast": 0,
                "eth_outbcast": 0,
                "eth_crc": count(c.rx_crc_errors),
                "eth_inerr": count(c.rx_crc_errors),
                "eth_outerr": 0,
                "eth_indiscard": 0,
                "eth_outdiscard": count(drops),
                "eth_runts": 0,
                "eth_giants": 0,
                "eth_inpause": 0,
                "eth_outpause": 0,
            })
        })
        .collect();
    table("interface", rows)
}

fn errors(ctx: &Ctx, p: usize) -> Value {
    let c = &ctx.world.port[p];
    let drops: f64 = c.tc_drops.iter().sum();
    table(
        "interface",
        vec![json!({
            "interface": ctx.world.port_cfg[p].name,
            "eth_align_err": 0,
            "eth_fcs_err": count(c.rx_crc_errors),
            "eth_xmit_err": 0,
            "eth_rcv_err": count(c.rx_crc_errors),
            "eth_undersize": 0,
            "eth_outdisc": count(drops),
            "eth_single_col": 0,
            "eth_multi_col": 0,
            "eth_late_col": 0,
            "eth_excess_col": 0,
            "eth_carri_sen": 0,
            "eth_runts": 0,
            "eth_giants": 0,
            "eth_sqetest": 0,
            "eth_deferred_tx": 0,
            "eth_symbol_err": count(c.rx_symbol_errors),
            "eth_indisc": 0,
        })],
    )
}

/// PFC per port: mode `On` (the running configuration's `mode on`), `oper`
/// on while the link is up, frames of every priority together.
fn pfc(ctx: &Ctx, ports: &[usize]) -> Value {
    let rows = ports
        .iter()
        .map(|&p| {
            let cfg = &ctx.world.port_cfg[p];
            let c = &ctx.world.port[p];
            let rx: f64 = c.prio.iter().map(|x| x.rx_pause).sum();
            let tx: f64 = c.prio.iter().map(|x| x.tx_pause).sum();
            let on = cfg.link_up && cfg.pfc.iter().any(|&x| x);
            json!({
                "if_name_str": cfg.name,
                "admin": "On",
                "oper": if on { "On" } else { "Off" },
                "rx-stats": count(rx),
                "tx-stats": count(tx),
            })
        })
        .collect();
    json!({"TABLE_module": {"ROW_module": table("pfc_interface", rows)}})
}

fn stat(kind: &str, units: &str, uc: u64) -> Value {
    json!({
        "eq-stat-type": kind,
        "eq-stat-units": units,
        "eq-uc-stat-value": uc,
        "eq-oobfc-uc-stat-value": 0,
        "eq-mc-stat-value": 0,
    })
}

/// Egress statistics per QoS group 0–7 (Tx, drops and ECN marks of the
/// model's queue of the same number) and PFC frames per CoS.
fn queuing(ctx: &Ctx, p: usize) -> Value {
    let c = &ctx.world.port[p];
    let groups: Vec<Value> = (0..8)
        .map(|q| {
            let mut g = table(
                "qosgrp_egress_stats_entry",
                vec![
                    stat("Tx", "Pkts", count(c.prio[q].tx_packets)),
                    stat("Tx", "Byts", count(c.prio[q].tx_bytes)),
                    stat("WRED/AFD & Tail Drop", "Pkts", count(c.tc_drops[q])),
                    stat("ECN", "Pkts", count(c.tc_ecn_marked[q])),
                    stat("Q Depth", "Byts", 0),
                ],
            );
            g["eq-qosgrp"] = Value::String(q.to_string());
            g
        })
        .collect();
    let cos: Vec<Value> = (0..8)
        .map(|q| {
            json!({
                "cos": q.to_string(),
                "tx-pause-count": count(c.prio[q].tx_pause),
                "rx-pause-count": count(c.prio[q].rx_pause),
            })
        })
        .collect();
    let mut qi = table("qosgrp_egress_stats", groups);
    if let (Value::Object(m), Value::Object(pfc)) = (&mut qi, table("pfc_stats", cos)) {
        m.extend(pfc);
        m.insert(
            "if_name_str".into(),
            Value::String(ctx.world.port_cfg[p].name.clone()),
        );
    }
    json!({"TABLE_module": {"ROW_module": table("queuing_interface", vec![qi])}})
}

fn status(ctx: &Ctx, s: SwitchId) -> Value {
    let rows = ctx
        .ports(s)
        .into_iter()
        .map(|p| {
            let cfg = &ctx.world.port_cfg[p];
            let state = match (cfg.admin_up, cfg.link_up) {
                (false, _) => "disabled",
                (true, true) => "connected",
                (true, false) => "notconnect",
            };
            json!({
                "interface": cfg.name,
                "name": "",
                "state": state,
                "vlan": "routed",
                "duplex": "full",
                "speed": format!("{}G", cfg.speed_mbps / 1000),
                "type": "QSFP-DD-400G-DR4",
            })
        })
        .collect();
    table("interface", rows)
}

fn bgp(ctx: &Ctx, s: SwitchId) -> Value {
    let neighbors: Vec<Value> = ctx
        .sessions(s)
        .into_iter()
        .map(|(l, mine, far)| {
            let state = if ctx.world.api.bgp_shut[s] {
                "Shut (Admin)"
            } else if ctx.session_up(l) {
                "Established"
            } else {
                "Active"
            };
            json!({
                "neighborid": p2p_address(l, 1 - mine % 2),
                "neighborversion": "4",
                "neighboras": asn(ctx.inv, far).to_string(),
                "state": state,
            })
        })
        .collect();
    let mut saf = table("neighbor", neighbors);
    saf["safi"] = json!("1");
    saf["af-name"] = json!("IPv4 Unicast");
    json!({"TABLE_vrf": {"ROW_vrf": {
        "vrf-name-out": "default",
        "vrf-router-id": format!("10.255.255.{}", (s + 1) & 0xFF),
        "vrf-local-as": asn(ctx.inv, s).to_string(),
        "TABLE_af": {"ROW_af": {"af-id": "1", "TABLE_saf": {"ROW_saf": saf}}},
    }}})
}

fn version(ctx: &Ctx, s: SwitchId) -> Value {
    let name = &ctx.inv.switches[s].name;
    let v = ctx
        .inv
        .fabric
        .versions
        .nos
        .clone()
        .unwrap_or_else(|| NXOS_VERSION.into());
    let up = super::api_out::BOOT_UPTIME_S + ctx.t;
    let secs = up as u64;
    json!({
        "host_name": name,
        "nxos_ver_str": v,
        "bios_ver_str": "05.47",
        "chassis_id": "Nexus9000 C9364D-GX2A Chassis",
        "kern_uptm_days": secs / 86_400,
        "kern_uptm_hrs": (secs / 3600) % 24,
        "kern_uptm_mins": (secs / 60) % 60,
        "kern_uptm_secs": secs % 60,
        "proc_board_id": format!("FDO{:08}", u32::from_be_bytes({ let m = name_mac(name); [m[2], m[3], m[4], m[5]] }) % 100_000_000),
    })
}

fn lldp(ctx: &Ctx, s: SwitchId) -> Value {
    let rows = ctx
        .ports(s)
        .into_iter()
        .filter_map(|p| {
            let cfg = &ctx.world.port_cfg[p];
            let n = cfg.neighbor.as_ref().filter(|_| cfg.link_up)?;
            // NX-OS writes its own port short: Eth1/1.
            let local = cfg.name.replacen("Ethernet", "Eth", 1);
            Some(match n {
                Neighbor::Host {
                    node,
                    netdev,
                    mac,
                    mgmt,
                } => json!({
                    "chassis_type": "Mac Address",
                    "chassis_id": colon_mac(name_mac(node)),
                    "l_port_id": local,
                    "port_type": "Mac Address",
                    "port_id": colon_mac(*mac),
                    "port_desc": netdev,
                    "sys_name": node,
                    "sys_desc": format!("rocegate emulated host {node}"),
                    "ttl": 120,
                    "system_capability": "S",
                    "enabled_capability": "S",
                    "mgmt_addr_type": "IPV4",
                    "mgmt_addr": mgmt,
                }),
                Neighbor::Switch { name, port, mgmt } => json!({
                    "chassis_type": "Mac Address",
                    "chassis_id": colon_mac(name_mac(name)),
                    "l_port_id": local,
                    "port_type": "Interface Name",
                    "port_id": port,
                    "port_desc": port,
                    "sys_name": name,
                    "sys_desc": format!("rocegate emulated switch {name}"),
                    "ttl": 120,
                    "system_capability": "B, R",
                    "enabled_capability": "B, R",
                    "mgmt_addr_type": "IPV4",
                    "mgmt_addr": mgmt,
                }),
            })
        })
        .collect();
    table("nbor_detail", rows)
}

/// `show running-config ipqos`: the no-drop class of the RoCE priority
/// (`pause pfc-cos`, where the switch's ports run PFC on it), its MTU, the
/// RED/ECN of each queue with thresholds, and every port's PFC mode.
fn running_ipqos(ctx: &Ctx, s: SwitchId) -> String {
    let ports = ctx.ports(s);
    let first = ports.first().map(|&p| &ctx.world.port_cfg[p]);
    let prio = usize::from(ctx.world.roce_prio);
    let mut t = String::from("\n!Command: show running-config ipqos\n!Running configuration last done at: Mon Jun  3 09:12:44 2024\n\nversion 10.3(4a) Bios:version 05.47\n");
    t.push_str("policy-map type network-qos ROCE_NETWORK\n");
    t.push_str(&format!(
        "  class type network-qos c-8q-nq{prio}\n    mtu 9216\n"
    ));
    if first.is_some_and(|c| c.pfc[prio]) {
        t.push_str(&format!("    pause pfc-cos {prio}\n"));
    }
    t.push_str("  class type network-qos c-8q-nq-default\n    mtu 9216\n");
    t.push_str("policy-map type queuing ROCE_EGRESS\n");
    for q in (0..8).rev() {
        let class = if q == 0 {
            "c-out-8q-q-default".to_string()
        } else {
            format!("c-out-8q-q{q}")
        };
        t.push_str(&format!("  class type queuing {class}\n"));
        match first.and_then(|c| c.ecn[q]) {
            Some((lo, hi, pct)) => t.push_str(&format!(
                "    bandwidth remaining percent 50\n    random-detect minimum-threshold {} kbytes maximum-threshold {} kbytes drop-probability {pct} weight 0 ecn\n",
                lo / 1024,
                hi / 1024
            )),
            None => t.push_str("    bandwidth remaining percent 0\n"),
        }
    }
    t.push_str("system qos\n  service-policy type queuing output ROCE_EGRESS\n  service-policy type network-qos ROCE_NETWORK\n");
    for p in ports {
        let c = &ctx.world.port_cfg[p];
        t.push_str(&format!(
            "\ninterface {}\n  priority-flow-control mode on\n",
            c.name
        ));
    }
    t
}
