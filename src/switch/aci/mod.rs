//! The `aci` platform: a Cisco ACI leaf reached through its APIC's REST
//! API (research: `../shared/research/aci.md`). The inventory's `address`
//! is the APIC's; `api.pod` and `api.node` name the switch, and a call's
//! path names them as `{pod}` and `{node}`, which the transport fills in
//! for the switch it is sent for.
//!
//! - Faults: a port is taken out of service by creating
//!   `uni/fabric/outofsvc/rsoosPath-[topology/pod-P/paths-N/pathep-[ethX/Y]]`
//!   (`fabricRsOosPath`, `lc=blacklist`, `annotation=orchestrator:rocegate`)
//!   and brought back by deleting that exact DN. The APIC has no
//!   device-side dead-man: the object **persists** (it is pushed again with
//!   policy, on an upgrade too), so the journal holds its DN and `recover`
//!   deletes it. A port that already has an out-of-service object (someone
//!   else's) is refused, as is a port facing a spine.
//! - Audit: the RoCE QoS policy (`uni/infra/qosinst-default`, every
//!   `qosClass` with its `qosCong` and `qosPfcPol`), the port's `l1PhysIf`
//!   (MTU, speed), the switch's `topSystem` version.
//! - Counters: `rmonIfIn`/`rmonIfOut` (octets, discards), `rmonDot3Stats`
//!   (FCS and symbol errors). Per-priority PFC pause and ECN-marked counters
//!   have no verified REST class (aci.md §4.4, §4.5): not available.

use std::time::Duration;

use serde_json::Value;

use crate::config::inventory::SwitchDriver;
use crate::counters::host::LldpNeighbor;
use crate::counters::{Canonical, ParseError, Reading};
use crate::switch::config::{excerpt, SwitchConfig};
use crate::switch::fault::{refusal, Action, Change, Driver, Next, PortState, State};
use crate::switch::{Answer, Api, ApiQuery, Form, Needs, Platform, Query};

/// A Cisco ACI switch reached through its APIC.
pub struct Aci;

mod qos;

/// The fabric's QoS policy, every class with its children.
const QOS_TREE: &str = "/api/mo/uni/infra/qosinst-default.json?rsp-subtree=full";

/// The tag every object rocegate creates carries (aci.md §5.2).
pub const ANNOTATION: &str = "orchestrator:rocegate";

/// REST requests, one per entry: `METHOD PATH` or `METHOD PATH BODY`.
fn rest(requests: Vec<String>) -> Query {
    Query::Api(ApiQuery {
        api: Api::Apic,
        form: Form::Json,
        cmds: requests,
    })
}

fn get(path: &str) -> String {
    format!("GET {path}")
}

/// `eth1/1` from `Eth1/1`, `ethernet1/1`, `eth1/1` (the APIC's form).
pub fn normalise_port(name: &str) -> String {
    let n = name.trim().to_ascii_lowercase();
    let n = n
        .strip_prefix("ethernet")
        .or_else(|| n.strip_prefix("eth"))
        .unwrap_or(&n);
    format!("eth{}", n.trim_start())
}

/// The path endpoint of a port: what a `fabricRsOosPath` points at.
fn path_ep(port: &str) -> String {
    format!(
        "topology/pod-{{pod}}/paths-{{node}}/pathep-[{}]",
        normalise_port(port)
    )
}

/// The out-of-service object of a port.
pub fn oos_dn(port: &str) -> String {
    format!("uni/fabric/outofsvc/rsoosPath-[{}]", path_ep(port))
}

fn phys(port: &str) -> String {
    format!(
        "/api/mo/topology/pod-{{pod}}/node-{{node}}/sys/phys-[{}]",
        normalise_port(port)
    )
}

/// `imdata` of an APIC answer, or the APIC's error in its words.
fn imdata(text: &str) -> Result<Vec<Value>, String> {
    let v: Value = serde_json::from_str(text)
        .map_err(|e| format!("the APIC's answer is not JSON ({e}): {}", excerpt(text)))?;
    let Some(items) = v.get("imdata").and_then(Value::as_array) else {
        return Err(format!(
            "the APIC's answer has no imdata: {}",
            excerpt(text)
        ));
    };
    if let Some(e) = items.first().and_then(|i| i.pointer("/error/attributes")) {
        return Err(format!(
            "the APIC refused it (code {}): {}",
            e.get("code").and_then(Value::as_str).unwrap_or("?"),
            e.get("text").and_then(Value::as_str).unwrap_or("")
        ));
    }
    Ok(items.clone())
}

/// Every object of class `cls` in `items`, children included, with its
/// attributes.
fn objects<'a>(items: &'a [Value], cls: &str, out: &mut Vec<&'a serde_json::Map<String, Value>>) {
    for i in items {
        let Some(m) = i.as_object() else { continue };
        for (k, o) in m {
            if let Some(a) = o.get("attributes").and_then(Value::as_object) {
                if k == cls {
                    out.push(a);
                }
            }
            if let Some(Value::Array(kids)) = o.get("children") {
                objects(kids, cls, out);
            }
        }
    }
}

fn attr<'a>(a: &'a serde_json::Map<String, Value>, k: &str) -> Option<&'a str> {
    a.get(k).and_then(Value::as_str)
}

fn number(a: &serde_json::Map<String, Value>, k: &str) -> Option<u64> {
    attr(a, k).and_then(|v| v.trim().parse().ok())
}

/// The parts of an answer to a query of several requests.
fn parts(text: &str, n: usize) -> Result<Vec<String>, String> {
    if n == 1 {
        return Ok(vec![text.to_string()]);
    }
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Array(a)) if a.len() == n => Ok(a.iter().map(Value::to_string).collect()),
        _ => Err(format!("expected {n} answers, got {}", excerpt(text))),
    }
}

impl Driver for Aci {
    fn platform(&self) -> &'static str {
        "aci"
    }

    fn supports(&self, action: &Action) -> Result<(), String> {
        match action {
            Action::PortsDown(_) => Ok(()),
            _ => Err("on aci only a port can be taken down (an out-of-service object at the APIC): no REST reload is verified, and routing is the fabric's own; use link_flap or leaf_reset mode ports_down".into()),
        }
    }

    fn needs(&self, _action: &Action) -> Vec<&'static str> {
        Vec::new()
    }

    /// Each port's `ethpmPhysIf` (operSt, and `usage` holding `blacklist`
    /// while out of service) and every out-of-service object.
    fn read_prior(&self, action: &Action) -> Query {
        let mut r: Vec<String> = action
            .ports()
            .iter()
            .map(|p| get(&format!("{}/phys.json", phys(p))))
            .collect();
        // This switch's out-of-service objects (the transport fills in
        // `{node}`): someone else's on a port of the fault refuses it. The
        // filter's quotes are percent-encoded (HTTP refuses a raw `"` in a
        // query); the DNs' brackets are sent raw, as the APIC's own
        // clients do.
        r.push(get(
            "/api/class/fabricRsOosPath.json?query-target-filter=wcard(fabricRsOosPath.tDn,%22paths-{node}/%22)",
        ));
        rest(r)
    }

    fn parse_prior(&self, action: &Action, answer: &Answer) -> Result<State, String> {
        let ports = action.ports();
        let p = parts(&answer.text, ports.len() + 1)?;
        let mut st = State::default();
        for (port, text) in ports.iter().zip(&p) {
            let items = imdata(text)?;
            let mut found = Vec::new();
            objects(&items, "ethpmPhysIf", &mut found);
            let a = found
                .first()
                .ok_or_else(|| format!("port {port}: the APIC has no ethpmPhysIf for it"))?;
            let usage = attr(a, "usage").unwrap_or_default();
            st.ports.push(PortState {
                name: port.clone(),
                admin_up: !usage.contains("blacklist"),
                oper_up: attr(a, "operSt") == Some("up"),
            });
            if usage.contains("fabric") {
                st.errdisabled
                    .push(format!("{port} (a fabric port, facing a spine)"));
            }
        }
        let mut oos = Vec::new();
        let items = imdata(&p[ports.len()])?;
        objects(&items, "fabricRsOosPath", &mut oos);
        st.pending = oos
            .iter()
            .filter(|o| attr(o, "annotation") != Some(ANNOTATION))
            .filter_map(|o| attr(o, "tDn").map(str::to_string))
            .collect();
        Ok(st)
    }

    fn check_prior(&self, action: &Action, prior: &State) -> Result<(), String> {
        self.supports(action)?;
        if !prior.errdisabled.is_empty() {
            return Err(format!(
                "{}: rocegate takes only access ports out of service on aci",
                prior.errdisabled.join(", ")
            ));
        }
        // `pending` holds this switch's out-of-service objects rocegate did
        // not create, by tDn (`…/pathep-[eth1/1]`): named first, since it
        // is also why such a port reads as out of service.
        for p in action.ports() {
            let ep = format!("/pathep-[{}]", normalise_port(p));
            if let Some(other) = prior.pending.iter().find(|t| t.ends_with(&ep)) {
                return Err(format!(
                    "{other} already has an out-of-service object that rocegate did not create: leave it to its owner"
                ));
            }
        }
        let down: Vec<&str> = prior
            .ports
            .iter()
            .filter(|p| !p.admin_up)
            .map(|p| p.name.as_str())
            .collect();
        if !down.is_empty() {
            return Err(format!(
                "{} already out of service at the APIC: a fault starts only from ports in service",
                down.join(", ")
            ));
        }
        Ok(())
    }

    /// First a configuration snapshot (a record of the fabric before the
    /// change, never the way back: the way back is the DELETE), then the
    /// out-of-service objects; the undo deletes their exact DNs. Nothing on
    /// the APIC undoes them by itself (`armed: false`): the journal does.
    fn change(&self, action: &Action, _prior: &State, deadman: Option<(&str, Duration)>) -> Change {
        let id = deadman.map(|(id, _)| id).unwrap_or("emulated");
        let ports = action.ports();
        let create = ports
            .iter()
            .map(|p| {
                let body = serde_json::json!({"fabricRsOosPath": {"attributes": {
                    "tDn": path_ep(p), "lc": "blacklist", "annotation": ANNOTATION}}});
                format!("POST /api/mo/{}.json {body}", oos_dn(p))
            })
            .collect();
        let delete = ports
            .iter()
            .map(|p| format!("DELETE /api/mo/{}.json", oos_dn(p)))
            .collect();
        Change {
            apply: vec![rest(vec![snapshot(id)]), rest(create)],
            undo: rest(delete),
            armed: false,
            reboots: false,
        }
    }

    /// The snapshot (step 0) refused: the out-of-service object was never
    /// sent.
    fn unchanged(&self, step: usize, _sent: &Query, _a: &Answer) -> bool {
        step == 0
    }

    fn undo_next(&self, _ports: &[String], sent: &Query, a: &Answer) -> Next {
        // A DELETE of an object that is gone already succeeds: the undo is
        // idempotent.
        match a.exit {
            Some(0) => Next::Done,
            _ => Next::Failed(refusal(sent, a)),
        }
    }
}

/// The export policy whose snapshots record the fabric before each fault
/// (`uni/fabric/configexp-rocegate`; the APIC keeps them under
/// `uni/backupst/snapshots-[uni/fabric/configexp-rocegate]`).
pub const SNAPSHOT_POLICY: &str = "rocegate";

/// Trigger a snapshot of the whole fabric's configuration (aci.md §5.4),
/// described with the fault it precedes.
fn snapshot(id: &str) -> String {
    let body = serde_json::json!({"configExportP": {"attributes": {
        "name": SNAPSHOT_POLICY, "snapshot": "yes", "adminSt": "triggered",
        "format": "json", "descr": format!("rocegate: before fault {id}"),
        "annotation": ANNOTATION}}});
    format!("POST /api/mo/uni/fabric/configexp-{SNAPSHOT_POLICY}.json {body}")
}

/// Counter reads of a port: the RMON children of its `l1PhysIf`.
fn counters_path(port: &str) -> String {
    format!(
        "{}.json?query-target=children&target-subtree-class=rmonIfIn,rmonIfOut,rmonDot3Stats",
        phys(port)
    )
}

/// The port's drop statistics: the current 5-minute objects, whose `*Cum`
/// attributes count since the switch booted (aci.md §4.1, §4.2).
fn drops_path(port: &str) -> String {
    format!(
        "{}.json?rsp-subtree-include=stats&rsp-subtree-class=eqptIngrDropPkts5min,eqptEgrDropPkts5min",
        phys(port)
    )
}

/// The port's per-QoS-class counters (`qosmIfClass`, APIC 6.0(2)+).
fn classes_path(port: &str) -> String {
    format!(
        "/api/mo/topology/pod-{{pod}}/node-{{node}}/sys/qosm/if-[{}].json?query-target=children&target-subtree-class=qosmIfClass",
        normalise_port(port)
    )
}

/// Every class's PFC policy, read with the per-class counters so that a
/// no-drop class's drops count on its priority.
const PFC_POLICIES: &str = "/api/class/qosPfcPol.json";

/// Which of the port's counter reads a query is.
fn counter_kind(q: &Query) -> &'static str {
    let Query::Api(a) = q else { return "unknown" };
    let first = a.cmds.first().map(String::as_str).unwrap_or_default();
    if first.contains("target-subtree-class=rmonIfIn") {
        "APIC rmon counters"
    } else if first.contains("eqptIngrDropPkts5min") {
        "APIC drop statistics (eqpt*DropPkts5min)"
    } else if first.contains("qosmIfClass") {
        "APIC per-class counters (qosmIfClass)"
    } else {
        "unknown"
    }
}

fn rmon(items: &[Value]) -> Vec<Reading> {
    let mut out = Vec::new();
    let mut push = |cls: &str, field: &str, c: Canonical| {
        let mut found = Vec::new();
        objects(items, cls, &mut found);
        if let Some(v) = found.first().and_then(|o| number(o, field)) {
            out.push(Reading::new(c, &format!("{cls}.{field}"), v));
        }
    };
    push("rmonIfIn", "octets", Canonical::RxBytes);
    push("rmonIfOut", "octets", Canonical::TxBytes);
    push("rmonIfIn", "discards", Canonical::Discards);
    push("rmonIfOut", "discards", Canonical::Drops);
    push("rmonDot3Stats", "fCSErrors", Canonical::CrcErrors);
    push("rmonDot3Stats", "symbolErrors", Canonical::SymbolErrors);
    out
}

/// Ingress buffer drops are discards for lack of buffer; egress WRED/AFD
/// and buffer drops are drops. Cumulative (`*Cum`) values only: the
/// interval's `*Per` resets every five minutes.
fn drop_stats(items: &[Value]) -> Result<Vec<Reading>, String> {
    let mut out = Vec::new();
    for (cls, field, c) in [
        ("eqptIngrDropPkts5min", "bufferCum", Canonical::Discards),
        ("eqptEgrDropPkts5min", "bufferCum", Canonical::Drops),
        ("eqptEgrDropPkts5min", "afdWredCum", Canonical::Drops),
    ] {
        let mut found = Vec::new();
        objects(items, cls, &mut found);
        // Statistics collection off for this granularity (monitoring
        // policy): no object, not available, never zero. An attribute this
        // release or ASIC does not carry is absent; one that is there but
        // not a number is a damaged answer.
        if let Some(o) = found.first() {
            match (attr(o, field), number(o, field)) {
                (None, _) => {}
                (Some(_), Some(v)) => out.push(Reading::new(c, &format!("{cls}.{field}"), v)),
                (Some(x), None) => return Err(format!("{cls}.{field} is not a count: {x:?}")),
            }
        }
    }
    Ok(out)
}

/// Per class: drops in and out, on the class's no-drop priority when the
/// class has PFC on (`queue` then names nothing: ACI has no queue number).
fn class_counters(text: &str) -> Result<Vec<Reading>, String> {
    let p = parts(text, 2)?;
    let items = imdata(&p[0])?;
    let cos = qos::no_drop_by_level(&imdata(&p[1])?);
    let mut cls = Vec::new();
    objects(&items, "qosmIfClass", &mut cls);
    let mut out = Vec::new();
    for c in &cls {
        let Some(id) = attr(c, "id") else { continue };
        for (field, canonical) in [
            ("RxDropPacketsCount", Canonical::Discards),
            ("TxDropPacketsCount", Canonical::Drops),
        ] {
            match (attr(c, field), number(c, field)) {
                (None, _) => {}
                (Some(_), Some(v)) => out.push(Reading {
                    priority: cos.get(id).copied(),
                    ..Reading::new(canonical, &format!("qosmIfClass.{id}.{field}"), v)
                }),
                (Some(x), None) => {
                    return Err(format!("qosmIfClass {id}: {field} is not a count: {x:?}"))
                }
            }
        }
    }
    Ok(out)
}

impl Platform for Aci {
    fn name(&self) -> &'static str {
        SwitchDriver::Aci.name()
    }

    fn needs(&self) -> Needs {
        Needs {
            root_for_config: false,
            // Out-of-service objects need a fabric-admin write role.
            root_for_faults: true,
            // The APIC's counters are polled from the switches; the
            // cadence is not documented (aci.md §4.1): wait 10 s.
            counter_interval: Duration::from_secs(10),
            // No device-side dead-man at all: the journal heals.
            deadman_delay: Duration::ZERO,
        }
    }

    fn tools(&self) -> &[&'static str] {
        &[]
    }

    fn reached_by_argv(&self) -> bool {
        false
    }

    fn faults(&self) -> &dyn Driver {
        self
    }

    fn counter_queries(&self, port: &str) -> Vec<Query> {
        vec![
            rest(vec![get(&counters_path(port))]),
            rest(vec![get(&drops_path(port))]),
            rest(vec![get(&classes_path(port)), get(PFC_POLICIES)]),
        ]
    }

    fn parse_counters(
        &self,
        _port: &str,
        q: &Query,
        a: &Answer,
    ) -> Result<Vec<Reading>, ParseError> {
        let kind = counter_kind(q);
        let fail = |e: String| ParseError(format!("{kind}: {e}"));
        match kind {
            "APIC rmon counters" => Ok(rmon(&imdata(&a.text).map_err(fail)?)),
            "APIC drop statistics (eqpt*DropPkts5min)" => {
                drop_stats(&imdata(&a.text).map_err(fail)?).map_err(fail)
            }
            "APIC per-class counters (qosmIfClass)" => class_counters(&a.text).map_err(fail),
            _ => Err(ParseError(format!(
                "`{}` is not a counter read of the aci platform",
                q.display()
            ))),
        }
    }

    fn counter_source(&self, q: &Query) -> &'static str {
        counter_kind(q)
    }

    fn config_queries(&self, ports: &[String]) -> Vec<Query> {
        let mut q = vec![
            rest(vec![get("/api/mo/topology/pod-{pod}/node-{node}/sys.json")]),
            rest(vec![get(QOS_TREE)]),
            rest(vec![get("/api/class/qosDscpClass.json")]),
            rest(vec![get("/api/class/qosPfcIfPol.json")]),
        ];
        q.extend(ports.iter().map(|p| {
            rest(vec![get(&format!(
                "{}.json?rsp-subtree=children&rsp-subtree-class=l1RsQosPfcIfPolCons",
                phys(p)
            ))])
        }));
        q
    }

    fn parse_config(&self, switch: &str, ports: &[String], answers: &[Answer]) -> SwitchConfig {
        qos::parse_config(switch, ports, answers)
    }

    fn lldp_query(&self) -> Query {
        rest(vec![get(
            "/api/mo/topology/pod-{pod}/node-{node}/sys/lldp/inst.json?query-target=subtree&target-subtree-class=lldpAdjEp",
        )])
    }

    /// `lldpAdjEp` under `sys/lldp/inst/if-[eth1/1]/adj-1`: the local port
    /// is in the DN.
    fn parse_lldp(&self, a: &Answer) -> Result<Vec<LldpNeighbor>, ParseError> {
        let items = imdata(&a.text).map_err(ParseError)?;
        let mut adj = Vec::new();
        objects(&items, "lldpAdjEp", &mut adj);
        Ok(adj
            .iter()
            .filter_map(|o| {
                let dn = attr(o, "dn")?;
                let local = dn.split("/if-[").nth(1)?.split(']').next()?;
                Some(LldpNeighbor {
                    interface: local.to_string(),
                    chassis_name: attr(o, "sysName").map(str::to_string),
                    chassis_id: attr(o, "chassisIdV").map(str::to_string),
                    chassis_descr: attr(o, "sysDesc").map(str::to_string),
                    port_id: attr(o, "portIdV").unwrap_or_default().to_string(),
                    port_descr: attr(o, "portDesc").map(str::to_string),
                    mgmt_ip: attr(o, "mgmtIp").map(str::to_string),
                })
            })
            .collect())
    }

    fn optics_query(&self, _port: &str) -> Option<Query> {
        None
    }

    fn normalise_port(&self, name: &str) -> String {
        normalise_port(name)
    }

    /// The login (the session the transport opens) and the switch's
    /// `topSystem` at its APIC: the account can read, and the node id names
    /// a switch the APIC knows.
    fn probe_queries(&self, _user: &str) -> Vec<Query> {
        vec![rest(vec![get(
            "/api/mo/topology/pod-{pod}/node-{node}/sys.json",
        )])]
    }

    fn read_probe(&self, answers: &[Answer]) -> Result<String, String> {
        let a = answers.first().ok_or("no answer")?;
        if a.exit != Some(0) {
            return Err(a.text.trim().to_string());
        }
        let items = imdata(&a.text)?;
        let mut sys = Vec::new();
        objects(&items, "topSystem", &mut sys);
        let s = sys
            .first()
            .ok_or("the APIC knows no switch at this pod and node: check api.node and api.pod")?;
        Ok(format!(
            "APIC login accepted; {} {} {}: reads allowed (the write role faults need is not probed)",
            attr(s, "role").unwrap_or("switch"),
            attr(s, "name").unwrap_or_default(),
            attr(s, "version").unwrap_or_default()
        ))
    }

    fn port_path(&self, name: &str) -> String {
        phys(name)
    }
}

#[cfg(test)]
mod tests;
