//! The `eos` platform: an Arista switch reached over eAPI. Reads are
//! `runCmds` calls in JSON (one call per switch per snapshot); a fault is a
//! configuration session committed with `commit timer`, so the switch
//! itself rolls the change back when nobody aborts it in time.
//!
//! - Fault apply, one call: `configure session rocegate-ID`, the change,
//!   `commit timer HH:MM:SS` (the outage + the platform's dead-man delay).
//! - Undo: `configure session rocegate-ID abort`. When the session is gone
//!   (its timer already rolled it back, or the switch reloaded), read the
//!   ports and send `no shutdown` only to those still administratively
//!   down; anything else is left as it is.
//! - A timer rollback restores the configuration as it was when the
//!   session committed: a change someone else committed during the window
//!   is rolled back with it (docs/switches.md).

use std::time::Duration;

use serde_json::Value;

use super::{
    normalise_port, parse_bgp_summary, parse_counters_discards, parse_counters_errors,
    parse_ecn_counters, parse_interfaces_counters, parse_interfaces_state, parse_interfaces_status,
    parse_lldp_neighbors_detail, parse_pfc_counters, parse_queue_drops, parse_version,
    InterfaceState,
};
use crate::config::inventory::SwitchDriver;
use crate::counters::host::LldpNeighbor;
use crate::counters::{ParseError, PortReadings, Reading};
use crate::switch::config::{answered, excerpt, Fact, PortSettings, SwitchConfig};
use crate::switch::fault::{refusal, runs_over, Action, Change, Driver, Init, Next, State};
use crate::switch::{Answer, Api, Form, Needs, Platform, Query};

/// An Arista switch reached over eAPI.
pub struct Eos;

fn json(cmds: &[&str]) -> Query {
    Query::api(Api::Eapi, Form::Json, cmds)
}

fn conf(cmds: Vec<String>) -> Query {
    Query::Api(crate::switch::ApiQuery {
        api: Api::Eapi,
        form: Form::Conf,
        cmds,
    })
}

/// The counter reads of one port: (what the snapshot records as its
/// source, the command, its parser).
type CounterParser = fn(&str) -> Result<Vec<PortReadings>, ParseError>;
const COUNTERS: [(&str, &str, CounterParser); 6] = [
    (
        "show interfaces",
        "show interfaces {}",
        parse_interfaces_counters,
    ),
    (
        "show interfaces counters errors",
        "show interfaces {} counters errors",
        parse_counters_errors,
    ),
    (
        "show interfaces counters discards",
        "show interfaces {} counters discards",
        parse_counters_discards,
    ),
    (
        "show priority-flow-control counters",
        "show priority-flow-control interfaces {} counters",
        parse_pfc_counters,
    ),
    (
        "show qos interfaces ecn counters queue",
        "show qos interfaces {} ecn counters queue",
        parse_ecn_counters,
    ),
    (
        // VOQ platforms (7800R, 7280R); a 7060X answers "not available".
        "show interfaces counters queue drops",
        "show interfaces {} counters queue drops",
        parse_queue_drops,
    ),
];

/// The command of a counter source for `port`.
fn counter_cmd(template: &str, port: &str) -> String {
    template.replace("{}", port)
}

/// Which [`COUNTERS`] entry a query is, and the port it asks about.
fn counter_of(q: &Query) -> Option<(usize, String)> {
    crate::switch::call::templated(q, COUNTERS.iter().map(|c| c.1))
}

/// The session a fault's change is made in: `rocegate-` and the fault id,
/// with anything EOS would not take in a session name replaced.
pub fn session_name(id: &str) -> String {
    let clean: String = id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .collect();
    format!("rocegate-{clean}")
}

/// `HH:MM:SS`, as `commit timer` takes it.
fn hms(d: Duration) -> String {
    let s = d.as_secs().max(1);
    format!("{:02}:{:02}:{:02}", s / 3600, (s / 60) % 60, s % 60)
}

/// The prior-state read: ports, BGP in every VRF and family, sessions.
const PRIOR: [&str; 3] = [
    "show interfaces status",
    "show bgp summary vrf all",
    "show configuration sessions detail",
];

/// The commands that make the change (inside a session or `configure`).
fn change_cmds(action: &Action, prior: &State, up: bool) -> Vec<String> {
    let no = if up { "no " } else { "" };
    match action {
        Action::PortsDown(ports) => ports
            .iter()
            .flat_map(|p| [format!("interface {p}"), format!("{no}shutdown")])
            .collect(),
        Action::RoutingStop => vec![
            format!("router bgp {}", prior.asn.as_deref().unwrap_or("0")),
            format!("{no}shutdown"),
        ],
        // Each session over the port, in its VRF (`default` is the
        // instance itself).
        Action::BgpPeerDown { .. } => prior
            .bgp
            .iter()
            .flatten()
            .flat_map(|(key, _)| {
                let (vrf, peer) = key.split_once(' ').unwrap_or(("default", key));
                let mut v = vec![format!(
                    "router bgp {}",
                    prior.asn.as_deref().unwrap_or("0")
                )];
                if vrf != "default" {
                    v.push(format!("vrf {vrf}"));
                }
                v.push(format!("{no}neighbor {peer} shutdown"));
                v
            })
            .collect(),
        Action::Reload { .. } => Vec::new(),
    }
}

fn elements(text: &str, n: usize) -> Result<Vec<String>, String> {
    let v: Value = serde_json::from_str(text)
        .map_err(|e| format!("the state read is not JSON ({e}): {}", excerpt(text)))?;
    match v {
        Value::Array(items) if items.len() == n => Ok(items.iter().map(Value::to_string).collect()),
        other => Err(format!(
            "expected {n} answers to the state read, got {}",
            excerpt(&other.to_string())
        )),
    }
}

/// The IPv4 addresses of `port` in `show ip interface PORT`:
/// `interfaces.<port>.interfaceAddress` (an object; a list of them on older
/// releases) with `primaryIp` and `secondaryIpsOrderedList`, each
/// `{address, maskLen}`.
fn ip_addresses(text: &str, port: &str) -> Result<Vec<(std::net::IpAddr, u8)>, String> {
    let v: Value = serde_json::from_str(text)
        .map_err(|e| format!("`show ip interface {port}` is not JSON ({e})"))?;
    let Some(ifs) = v.get("interfaces").and_then(Value::as_object) else {
        return Err(format!(
            "`show ip interface {port}` has no interfaces: {}",
            excerpt(text)
        ));
    };
    let want = normalise_port(port);
    let mut out = Vec::new();
    for (name, i) in ifs {
        if normalise_port(name) != want {
            continue;
        }
        let blocks: Vec<&Value> = match i.get("interfaceAddress") {
            Some(Value::Array(a)) => a.iter().collect(),
            Some(o @ Value::Object(_)) => vec![o],
            _ => Vec::new(),
        };
        for b in blocks {
            let mut ips: Vec<&Value> = b.get("primaryIp").into_iter().collect();
            if let Some(Value::Array(more)) = b.get("secondaryIpsOrderedList") {
                ips.extend(more);
            }
            for ip in ips {
                let addr = ip.get("address").and_then(Value::as_str);
                let len = ip.get("maskLen").and_then(Value::as_u64);
                if let (Some(Ok(a)), Some(l)) = (addr.map(str::parse), len) {
                    // 0.0.0.0/0: no address configured.
                    if l > 0 && l <= 128 {
                        out.push((a, l as u8));
                    }
                }
            }
        }
    }
    Ok(out)
}

/// The local AS of the default VRF in `show bgp summary vrf all`.
fn local_asn(text: &str) -> Option<String> {
    let v: Value = serde_json::from_str(text).ok()?;
    match v.pointer("/vrfs/default/asn")? {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

impl Driver for Eos {
    fn platform(&self) -> &'static str {
        "eos"
    }

    fn needs(&self, _action: &Action) -> Vec<&'static str> {
        Vec::new()
    }

    fn read_prior(&self, action: &Action) -> Query {
        let mut cmds: Vec<String> = PRIOR.iter().map(|c| c.to_string()).collect();
        // A withdrawn session is found by the port's subnet.
        if let Action::BgpPeerDown { port } = action {
            cmds.push(format!("show ip interface {port}"));
        }
        Query::Api(crate::switch::ApiQuery {
            api: Api::Eapi,
            form: Form::Json,
            cmds,
        })
    }

    fn parse_prior(&self, action: &Action, answer: &Answer) -> Result<State, String> {
        let over = match action {
            Action::BgpPeerDown { port } => Some(port),
            _ => None,
        };
        let parts = elements(&answer.text, PRIOR.len() + usize::from(over.is_some()))?;
        let status = parse_interfaces_status(&parts[0]).map_err(|e| e.to_string())?;
        let mut st = State {
            init: Init::default(),
            ..Default::default()
        };
        for p in action.ports().iter().chain(over) {
            let want = normalise_port(p);
            let s = status
                .iter()
                .find(|s| normalise_port(&s.name) == want)
                .ok_or_else(|| format!("port {p} does not exist on the switch"))?;
            st.ports.push(s.port_state());
            if let Some(causes) = &s.errdisabled {
                st.errdisabled.push(format!("{p} ({})", causes.join(", ")));
            }
        }
        let peers = parse_bgp_summary(&parts[1]).map_err(|e| e.to_string())?;
        st.asn = local_asn(&parts[1]);
        st.bgp = (!peers.is_empty() || st.asn.is_some()).then(|| {
            peers
                .iter()
                .map(|p| (format!("{} {}", p.vrf, p.peer), p.established()))
                .collect()
        });
        let sessions = super::parse_config_sessions(&parts[2]).map_err(|e| e.to_string())?;
        st.pending = sessions.pending.into_iter().map(|p| p.session).collect();
        if let Some((port, peers)) = over.zip(st.bgp.clone()) {
            let addrs = ip_addresses(&parts[3], port)?;
            // Only the sessions over the port: what is shut, undone and
            // waited for.
            let over: Vec<(String, bool)> = peers
                .into_iter()
                .filter(|(key, _)| {
                    let peer = key.split_once(' ').map_or(key.as_str(), |(_, p)| p);
                    runs_over(peer, port, &addrs)
                })
                .collect();
            if over.is_empty() {
                return Err(format!(
                    "no BGP session runs over {port} (its addresses: {}): route_change needs a neighbour on the port's subnet",
                    if addrs.is_empty() {
                        "none".to_string()
                    } else {
                        addrs.iter().map(|(a, l)| format!("{a}/{l}")).collect::<Vec<_>>().join(", ")
                    }
                ));
            }
            st.bgp = Some(over);
        }
        Ok(st)
    }

    fn supports(&self, action: &Action) -> Result<(), String> {
        match action {
            Action::PortsDown(_) | Action::RoutingStop | Action::BgpPeerDown { .. } => Ok(()),
            Action::Reload { .. } => Err("a reload over eAPI has no dead-man to guard it and nothing for rocegate to undo: use mode ports_down or routing_restart on eos"
                .into()),
        }
    }

    fn check_prior(&self, action: &Action, prior: &State) -> Result<(), String> {
        self.supports(action)?;
        if let Some(s) = prior.pending.first() {
            return Err(format!(
                "configuration session {s} has a pending commit timer: EOS keeps one per switch, so a fault now would confirm or lose it; wait for it, or confirm it with `configure session {s} commit`"
            ));
        }
        if !prior.errdisabled.is_empty() {
            return Err(format!(
                "{} errdisabled: a flap there would not come back with `no shutdown`; recover the port (errdisable recovery, or shutdown/no shutdown by hand) first",
                prior.errdisabled.join(", ")
            ));
        }
        prior.healthy()?;
        if let Action::BgpPeerDown { port } = action {
            if let Some(p) = prior.ports.iter().find(|p| !p.oper_up) {
                return Err(format!(
                    "{} has no carrier: a route change on {port} starts from a link that is up",
                    p.name
                ));
            }
        }
        if matches!(action, Action::RoutingStop | Action::BgpPeerDown { .. }) && prior.asn.is_none()
        {
            return Err("no BGP instance answers `show bgp summary vrf all`: routing is already stopped, or this switch runs none".into());
        }
        Ok(())
    }

    fn change(&self, action: &Action, prior: &State, deadman: Option<(&str, Duration)>) -> Change {
        let down = change_cmds(action, prior, false);
        match deadman {
            Some((id, after)) => {
                let session = session_name(id);
                let mut apply = vec![format!("configure session {session}")];
                apply.extend(down);
                apply.push(format!("commit timer {}", hms(after)));
                Change {
                    apply: vec![conf(apply)],
                    undo: conf(vec![format!("configure session {session} abort")]),
                    armed: true,
                    reboots: false,
                }
            }
            None => {
                let wrap = |mut cmds: Vec<String>| {
                    cmds.insert(0, "configure".into());
                    cmds.push("end".into());
                    conf(cmds)
                };
                Change {
                    apply: vec![wrap(down)],
                    undo: wrap(change_cmds(action, prior, true)),
                    armed: false,
                    reboots: false,
                }
            }
        }
    }

    fn undo_next(&self, ports: &[String], sent: &Query, a: &Answer) -> Next {
        let Query::Api(q) = sent else {
            return Next::Failed(format!("`{}` is not an eAPI request", sent.display()));
        };
        let first = q.cmds.first().map(String::as_str).unwrap_or_default();
        let failed = || Next::Failed(refusal(sent, a));
        if first.starts_with("configure session") && first.ends_with(" abort") {
            return match a.exit {
                Some(0) => Next::Done,
                // No such session: its timer rolled it back already, or
                // the switch lost it. Look at the ports themselves.
                Some(_) if !ports.is_empty() => Next::Then(json(&["show interfaces status"])),
                Some(_) => Next::Done,
                None => failed(),
            };
        }
        if first == "show interfaces status" {
            if a.exit != Some(0) {
                return failed();
            }
            let status = match parse_interfaces_status(&a.text) {
                Ok(s) => s,
                Err(e) => return Next::Failed(e.to_string()),
            };
            let still_down: Vec<&String> = ports
                .iter()
                .filter(|p| {
                    let want = normalise_port(p);
                    status
                        .iter()
                        .any(|s| normalise_port(&s.name) == want && !s.admin_up)
                })
                .collect();
            if still_down.is_empty() {
                return Next::Done;
            }
            let mut cmds = vec!["configure".to_string()];
            for p in still_down {
                cmds.push(format!("interface {p}"));
                cmds.push("no shutdown".into());
            }
            cmds.push("end".into());
            return Next::Then(conf(cmds));
        }
        match a.exit {
            Some(0) => Next::Done,
            _ => failed(),
        }
    }
}

impl Platform for Eos {
    fn name(&self) -> &'static str {
        SwitchDriver::Eos.name()
    }

    fn needs(&self) -> Needs {
        Needs {
            // Reads need privileged EXEC (`enable`), not privilege 15.
            root_for_config: false,
            // Configuration sessions need privilege 15.
            root_for_faults: true,
            // EOS refreshes interface and queue counters from the ASIC
            // every few seconds; wait that long after traffic stops.
            counter_interval: Duration::from_secs(5),
            // `commit timer` fires this long past the planned outage.
            deadman_delay: Duration::from_secs(60),
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
        COUNTERS
            .iter()
            .map(|(_, t, _)| json(&[&counter_cmd(t, port)]))
            .collect()
    }

    fn parse_counters(
        &self,
        _port: &str,
        q: &Query,
        a: &Answer,
    ) -> Result<Vec<Reading>, ParseError> {
        let (i, port) = counter_of(q).ok_or_else(|| {
            ParseError(format!(
                "`{}` is not a counter read of the eos platform",
                q.display()
            ))
        })?;
        let want = normalise_port(&port);
        let all = (COUNTERS[i].2)(&a.text)?;
        Ok(all
            .into_iter()
            .filter(|p| normalise_port(&p.port) == want)
            .flat_map(|p| p.readings)
            .collect())
    }

    fn counter_source(&self, q: &Query) -> &'static str {
        counter_of(q).map_or("unknown", |(i, _)| COUNTERS[i].0)
    }

    fn config_queries(&self, ports: &[String]) -> Vec<Query> {
        let mut q = vec![json(&["show version"])];
        q.extend(
            ports
                .iter()
                .map(|p| json(&[&format!("show interfaces {p}")])),
        );
        q
    }

    fn parse_config(&self, switch: &str, ports: &[String], answers: &[Answer]) -> SwitchConfig {
        let queries = self.config_queries(ports);
        let nos_version = match answered(switch, &queries[0], answers.first()) {
            Ok(t) => match parse_version(t) {
                Ok(v) => Fact::Known(v.version),
                Err(e) => Fact::Failed(format!("{switch}: {e}")),
            },
            Err(f) => f,
        };
        fn unknown<T>(switch: &str, what: &str) -> Fact<T> {
            Fact::NotAvailable {
                tried: Vec::new(),
                why: format!(
                    "{switch}: rocegate does not read {what} on eos yet: no public capture of its eAPI JSON to build and test a parser from (docs/switches.md)"
                ),
            }
        }
        let ports = ports
            .iter()
            .enumerate()
            .map(|(k, p)| {
                let st: Result<InterfaceState, Fact<()>> =
                    match answered(switch, &queries[k + 1], answers.get(k + 1)) {
                        Ok(t) => parse_interfaces_state(t)
                            .map_err(|e| Fact::Failed(format!("{switch}: {e}")))
                            .and_then(|all| {
                                all.into_iter()
                                    .find(|s| normalise_port(&s.name) == normalise_port(p))
                                    .ok_or_else(|| {
                                        Fact::Failed(format!(
                                            "{switch}: `show interfaces {p}` does not list {p}"
                                        ))
                                    })
                            }),
                        Err(f) => Err(f),
                    };
                let from = |f: &Fact<()>| -> String {
                    match f {
                        Fact::Failed(m) => m.clone(),
                        Fact::NotAvailable { why, .. } => why.clone(),
                        Fact::Known(()) => String::new(),
                    }
                };
                let fact =
                    |v: Option<Option<u64>>, st: &Result<InterfaceState, Fact<()>>| match (v, st) {
                        (Some(Some(x)), _) => Fact::Known(x),
                        (Some(None), _) => Fact::NotAvailable {
                            tried: vec![format!("show interfaces {p}")],
                            why: format!("{switch}: EOS does not print it for {p}"),
                        },
                        (None, Err(f)) => Fact::Failed(from(f)),
                        (None, Ok(_)) => unreachable!(),
                    };
                let ok = st.as_ref().ok();
                PortSettings {
                    name: p.clone(),
                    link_up: match &st {
                        Ok(s) => Fact::Known(s.oper_up),
                        Err(f) => Fact::Failed(from(f)),
                    },
                    speed_mbps: fact(ok.map(|s| s.speed_mbps), &st),
                    mtu: fact(ok.map(|s| s.mtu.map(u64::from)), &st).map(|m| m as u32),
                    pfc: unknown(switch, "PFC priorities"),
                    ecn: unknown(switch, "ECN/RED thresholds"),
                    pfc_xoff_bytes: unknown(switch, "PFC Xoff thresholds"),
                }
            })
            .collect();
        SwitchConfig {
            nos_version,
            pfc_watchdog: unknown(switch, "the PFC watchdog"),
            dscp_prio: crate::switch::config::dscp_not_read(switch, "`show qos maps` is not read"),
            ports,
        }
    }

    fn lldp_query(&self) -> Query {
        json(&["show lldp neighbors detail"])
    }

    fn parse_lldp(&self, a: &Answer) -> Result<Vec<LldpNeighbor>, ParseError> {
        parse_lldp_neighbors_detail(&a.text)
    }

    fn optics_query(&self, _port: &str) -> Option<Query> {
        None
    }

    fn probe_queries(&self, _user: &str) -> Vec<Query> {
        vec![json(&["show version"]), json(&["show privilege"])]
    }

    /// `show privilege` → `{"privilegeLevel": 15}`: configuration sessions,
    /// and so every fault, need 15; reads need privileged EXEC.
    fn read_probe(&self, answers: &[Answer]) -> Result<String, String> {
        let text = |k: usize| -> Result<&str, String> {
            match answers.get(k) {
                Some(a) if a.exit == Some(0) => Ok(&a.text),
                Some(a) => Err(a.text.trim().to_string()),
                None => Err("no answer".into()),
            }
        };
        let v = parse_version(text(0)?).map_err(|e| e.to_string())?;
        let p: Value = serde_json::from_str(text(1)?)
            .map_err(|e| format!("`show privilege` is not JSON: {e}"))?;
        let level = p
            .get("privilegeLevel")
            .and_then(Value::as_u64)
            .ok_or_else(|| {
                format!(
                    "`show privilege` gives no privilegeLevel: {}",
                    excerpt(&p.to_string())
                )
            })?;
        if level < 15 {
            return Err(format!(
                "EOS {}, account privilege {level}: counters and the audit work, but faults need configuration sessions, which need privilege 15",
                v.version
            ));
        }
        Ok(format!(
            "EOS {}, account privilege {level}: reads and faults allowed",
            v.version
        ))
    }

    fn normalise_port(&self, name: &str) -> String {
        normalise_port(name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> Value {
        let p = format!("{}/tests/fixtures/eos/{name}", env!("CARGO_MANIFEST_DIR"));
        serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
    }

    fn ok(v: Value) -> Answer {
        Answer {
            exit: Some(0),
            text: v.to_string(),
        }
    }

    fn cmds(q: &Query) -> Vec<String> {
        match q {
            Query::Api(a) => a.cmds.clone(),
            Query::Argv(_) => panic!("argv"),
        }
    }

    fn flap(p: &str) -> Action {
        Action::PortsDown(vec![p.to_string()])
    }

    fn status(ports: &[(&str, &str)]) -> Value {
        let m: serde_json::Map<String, Value> = ports
            .iter()
            .map(|(p, s)| (p.to_string(), serde_json::json!({ "linkStatus": s })))
            .collect();
        serde_json::json!({ "interfaceStatuses": m })
    }

    /// The session, the change and the commit timer go in one call; the
    /// undo is the session's abort.
    #[test]
    fn a_flap_is_one_session_with_its_commit_timer() {
        let c = Eos.change(
            &flap("Ethernet1"),
            &State::default(),
            Some(("run-7:1", Duration::from_secs(95))),
        );
        assert!(c.armed);
        assert_eq!(c.apply.len(), 1);
        assert_eq!(
            cmds(&c.apply[0]),
            [
                "configure session rocegate-run-7-1",
                "interface Ethernet1",
                "shutdown",
                "commit timer 00:01:35"
            ]
        );
        assert_eq!(cmds(&c.undo), ["configure session rocegate-run-7-1 abort"]);
    }

    /// Abort worked: done. Session gone: read the ports, and bring up only
    /// the one still administratively down.
    #[test]
    fn an_undo_whose_session_is_gone_restores_only_what_is_still_down() {
        let ports = vec!["Ethernet1".to_string(), "Ethernet2".to_string()];
        let abort = conf(vec!["configure session rocegate-x abort".into()]);
        assert_eq!(Eos.undo_next(&ports, &abort, &ok(Value::Null)), Next::Done);
        let gone = Answer {
            exit: Some(crate::switch::call::FAILED),
            text:
                "`configure session rocegate-x abort` failed (eAPI error 1000: session not found)"
                    .into(),
        };
        let Next::Then(read) = Eos.undo_next(&ports, &abort, &gone) else {
            panic!("expected a read")
        };
        assert_eq!(cmds(&read), ["show interfaces status"]);
        let now = ok(status(&[
            ("Ethernet1", "disabled"),
            ("Ethernet2", "connected"),
        ]));
        let Next::Then(up) = Eos.undo_next(&ports, &read, &now) else {
            panic!("expected a no shutdown")
        };
        assert_eq!(
            cmds(&up),
            ["configure", "interface Ethernet1", "no shutdown", "end"]
        );
        assert_eq!(Eos.undo_next(&ports, &up, &ok(Value::Null)), Next::Done);
        // Both up already (the timer rolled back): nothing is sent.
        let both = ok(status(&[
            ("Ethernet1", "connected"),
            ("Ethernet2", "notconnect"),
        ]));
        assert_eq!(Eos.undo_next(&ports, &read, &both), Next::Done);
        // The switch unreachable mid-undo: failed, stays open.
        let cut = Answer::default();
        assert!(matches!(
            Eos.undo_next(&ports, &abort, &cut),
            Next::Failed(_)
        ));
    }

    /// Prior state from real outputs: BGP in every VRF with the local AS,
    /// an errdisabled port, a pending session; each refuses the fault.
    #[test]
    fn prior_state_refuses_errdisabled_ports_idle_peers_and_a_pending_timer() {
        let bgp = fixture("show-bgp-summary-vrf-all-afisafi-anta-unittest.json");
        let sessions =
            fixture("show-configuration-sessions-detail-pre432-asynceapi-docstring.json");
        let a = ok(serde_json::json!([
            status(&[("Ethernet8", "errdisabled"), ("Ethernet1", "connected")]),
            bgp,
            sessions
        ]));
        let st = Eos.parse_prior(&flap("Et8"), &a).unwrap();
        assert_eq!(st.asn.as_deref(), Some("65120"));
        assert_eq!(st.errdisabled.len(), 1, "{st:?}");
        let e = Eos.check_prior(&flap("Et8"), &st).unwrap_err();
        assert!(e.contains("errdisabled"), "{e}");
        let st = Eos.parse_prior(&flap("Ethernet1"), &a).unwrap();
        let e = Eos.check_prior(&flap("Ethernet1"), &st).unwrap_err();
        assert!(e.contains("BGP not Established"), "{e}");
        let e = Eos.parse_prior(&flap("Ethernet99"), &a).unwrap_err();
        assert!(e.contains("Ethernet99 does not exist"), "{e}");
        let e = Eos
            .check_prior(&Action::Reload { ports: vec![] }, &State::default())
            .unwrap_err();
        assert!(e.contains("ports_down or routing_restart"), "{e}");
        let pending = State {
            pending: vec!["someone".into()],
            ..Default::default()
        };
        let e = Eos.check_prior(&flap("Ethernet1"), &pending).unwrap_err();
        assert!(e.contains("pending commit timer"), "{e}");
    }

    #[test]
    fn routing_stop_shuts_the_bgp_instance_by_its_as() {
        let prior = State {
            asn: Some("65120".into()),
            ..Default::default()
        };
        let c = Eos.change(
            &Action::RoutingStop,
            &prior,
            Some(("f", Duration::from_secs(3600))),
        );
        assert_eq!(
            cmds(&c.apply[0])[1..],
            ["router bgp 65120", "shutdown", "commit timer 01:00:00"]
        );
    }

    #[test]
    fn the_probe_names_the_privilege_faults_need() {
        let version = ok(fixture("show-version-pyeapi.json"));
        let p15 = ok(serde_json::json!({"privilegeLevel": 15}));
        let r = Eos.read_probe(&[version.clone(), p15]).unwrap();
        assert!(r.contains("privilege 15: reads and faults allowed"), "{r}");
        let p1 = ok(serde_json::json!({"privilegeLevel": 1}));
        let e = Eos.read_probe(&[version.clone(), p1]).unwrap_err();
        assert!(
            e.contains("faults need configuration sessions, which need privilege 15"),
            "{e}"
        );
        let refused = Answer {
            exit: Some(crate::switch::call::NEEDS_PRIVILEGE),
            text: "`show privilege` needs more privilege".into(),
        };
        assert!(Eos.read_probe(&[version, refused]).is_err());
    }

    /// A route change finds the sessions over the port by its subnet, in
    /// whichever VRF, and shuts each in one session with its timer.
    #[test]
    fn a_route_change_shuts_the_sessions_on_the_ports_subnet() {
        let action = Action::BgpPeerDown {
            port: "Ethernet49/1".into(),
        };
        let bgp = serde_json::json!({"vrfs": {
            "default": {"asn": "65101", "peers": {
                "10.0.0.1": {"peerState": "Established"},
                "10.0.0.3": {"peerState": "Established"}}},
            "red": {"asn": "65101", "peers": {"10.9.0.1": {"peerState": "Established"}}}}});
        let ip = serde_json::json!({"interfaces": {"Ethernet49/1": {"interfaceAddress": {
            "primaryIp": {"address": "10.0.0.0", "maskLen": 31},
            "secondaryIpsOrderedList": [{"address": "10.9.0.0", "maskLen": 31}]}}}});
        let sessions = serde_json::json!({"sessions": {}});
        let a = ok(serde_json::json!([
            status(&[("Ethernet49/1", "connected")]),
            bgp,
            sessions,
            ip
        ]));
        let st = Eos.parse_prior(&action, &a).unwrap();
        assert_eq!(
            st.bgp,
            Some(vec![
                ("default 10.0.0.1".to_string(), true),
                ("red 10.9.0.1".to_string(), true)
            ])
        );
        Eos.check_prior(&action, &st).unwrap();
        let c = Eos.change(&action, &st, Some(("f", Duration::from_secs(65))));
        assert_eq!(
            cmds(&c.apply[0]),
            [
                "configure session rocegate-f",
                "router bgp 65101",
                "neighbor 10.0.0.1 shutdown",
                "router bgp 65101",
                "vrf red",
                "neighbor 10.9.0.1 shutdown",
                "commit timer 00:01:05"
            ]
        );
        assert_eq!(
            cmds(&Eos.read_prior(&action))[3],
            "show ip interface Ethernet49/1"
        );
        // No session on the port's subnet: refused, naming its addresses.
        let lonely = serde_json::json!({"interfaces": {"Ethernet49/1": {"interfaceAddress": {
            "primaryIp": {"address": "10.7.0.0", "maskLen": 31}}}}});
        let a = ok(serde_json::json!([
            status(&[("Ethernet49/1", "connected")]),
            serde_json::json!({"vrfs": {"default": {"asn": "65101", "peers": {}}}}),
            serde_json::json!({"sessions": {}}),
            lonely
        ]));
        let e = Eos.parse_prior(&action, &a).unwrap_err();
        assert!(e.contains("10.7.0.0/31"), "{e}");
    }
}
