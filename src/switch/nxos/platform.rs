//! The `nxos` platform: a Cisco Nexus reached over NX-API (`POST /ins`,
//! `ins_api`). Reads are `cli_show` calls (one call per switch per
//! snapshot); the running configuration is `cli_show_ascii`.
//!
//! NX-OS has no commit-confirmed for CLI changes, so a fault's dead-man is
//! a detached timer in the switch's own Linux shell, started through `run
//! bash` before the change (needs `feature bash-shell`):
//! - apply, two calls, the second only once the first worked: `run bash
//!   setsid sh -c ': rocegate-deadman-HASH && sleep N && vsh -c "…restore…"'`
//!   (which answers with the timer's pid, read back as proof it runs), then
//!   the change (`cli_conf`: `interface Ethernet1/1`, `shutdown`);
//! - undo: the restore itself (`no shutdown`, `router bgp ASN` + `no
//!   shutdown`), never a rollback, then `run bash pkill` of the timer. A
//!   timer that fires after the undo sends the same `no shutdown` again,
//!   which changes nothing.
//!
//! NX-API splits a request at `;`, so the restore the timer runs writes its
//! separators as `$(printf \\073)`, which the shell turns back into `;`.

use std::time::Duration;

use serde_json::Value;

use super::{
    normalise_port, parse_bgp_summary, parse_counters_errors_json, parse_interface_counters,
    parse_lldp_json, parse_pfc_interface_json, parse_port_states, parse_queuing_interface,
    switch_config, CliType, CommandReply, ConfigReplies, Reply, CONFIG_COMMANDS,
};
use crate::config::inventory::SwitchDriver;
use crate::counters::host::LldpNeighbor;
use crate::counters::{ParseError, PortReadings, Reading};
use crate::switch::call::{NEEDS_PRIVILEGE, NOT_AVAILABLE, NO_JSON};
use crate::switch::config::{excerpt, SwitchConfig};
use crate::switch::fault::{refusal, Action, Change, Driver, Next, State};
use crate::switch::{Answer, Api, ApiQuery, Form, Needs, Platform, Query};

/// A Cisco Nexus switch reached over NX-API.
pub struct Nxos;

fn q(form: Form, cmds: Vec<String>) -> Query {
    Query::Api(ApiQuery {
        api: Api::Nxapi,
        form,
        cmds,
    })
}

fn show(cmd: &str) -> Query {
    q(Form::Json, vec![cmd.to_string()])
}

/// The reply a [`crate::switch::call`] answer stands for.
fn reply_of(cmd: &str, form: Form, a: &Answer) -> CommandReply {
    let reply = match a.exit {
        Some(0) => match form {
            Form::Text => Reply::Text(a.text.clone()),
            _ if a.text.trim().is_empty() => Reply::Empty,
            _ => match serde_json::from_str::<Value>(&a.text) {
                Ok(v) => Reply::Json(v),
                Err(e) => Reply::Failed {
                    code: "json".into(),
                    why: format!("not JSON ({e}): {}", excerpt(&a.text)),
                },
            },
        },
        Some(NOT_AVAILABLE) => Reply::Unsupported(a.text.clone()),
        Some(NEEDS_PRIVILEGE) => Reply::NeedsRole(a.text.clone()),
        Some(NO_JSON) => Reply::NoJson(a.text.clone()),
        Some(code) => Reply::Failed {
            code: code.to_string(),
            why: a.text.clone(),
        },
        None => Reply::Failed {
            code: "none".into(),
            why: format!("no answer: {}", a.text.trim()),
        },
    };
    CommandReply {
        command: cmd.to_string(),
        reply,
    }
}

type CounterParser = fn(&Value) -> Result<Vec<PortReadings>, ParseError>;

fn pfc_counters(v: &Value) -> Result<Vec<PortReadings>, ParseError> {
    Ok(parse_pfc_interface_json(v)?
        .into_iter()
        .map(|p| p.counters)
        .collect())
}

/// (snapshot source, command for one port, parser).
const COUNTERS: [(&str, &str, CounterParser); 4] = [
    (
        "show interface",
        "show interface {}",
        parse_interface_counters,
    ),
    (
        "show interface counters errors",
        "show interface {} counters errors",
        parse_counters_errors_json,
    ),
    (
        "show interface priority-flow-control",
        "show interface {} priority-flow-control",
        pfc_counters,
    ),
    (
        "show queuing interface",
        "show queuing interface {}",
        parse_queuing_interface,
    ),
];

fn counter_of(query: &Query) -> Option<(usize, String)> {
    crate::switch::call::templated(query, COUNTERS.iter().map(|c| c.1))
}

/// The prior-state read: every port's state, BGP in every VRF and family.
const PRIOR: [&str; 2] = ["show interface status", "show bgp all summary vrf all"];

/// The first `vrf-local-as` in a BGP summary: the AS of `router bgp`.
fn local_asn(v: &Value) -> Option<String> {
    match v {
        Value::Object(m) => m
            .get("vrf-local-as")
            .and_then(|a| match a {
                Value::String(s) => Some(s.clone()),
                Value::Number(n) => Some(n.to_string()),
                _ => None,
            })
            .or_else(|| m.values().find_map(local_asn)),
        Value::Array(a) => a.iter().find_map(local_asn),
        _ => None,
    }
}

/// The configuration lines that take the fault down (`up: false`) or
/// restore it.
fn lines(action: &Action, asn: &str, up: bool) -> Vec<String> {
    let no = if up { "no " } else { "" };
    match action {
        Action::PortsDown(ports) => ports
            .iter()
            .flat_map(|p| [format!("interface {p}"), format!("{no}shutdown")])
            .collect(),
        Action::RoutingStop => vec![format!("router bgp {asn}"), format!("{no}shutdown")],
        _ => Vec::new(),
    }
}

/// The name of the timer that restores `restore`: derived from the
/// restore itself (FNV-1a), so the undo, which carries only the restore,
/// finds the timer of its own fault and no other.
fn timer_name(restore: &[String]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in restore.join("\n").bytes() {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    format!("rocegate-deadman-{h:016x}")
}

/// A pattern matching the timer, not the shell that searches for it.
fn timer_pattern(name: &str) -> String {
    format!("{}[{}]", &name[..name.len() - 1], &name[name.len() - 1..])
}

impl Driver for Nxos {
    fn platform(&self) -> &'static str {
        "nxos"
    }

    fn needs(&self, _action: &Action) -> Vec<&'static str> {
        Vec::new()
    }

    fn read_prior(&self, _action: &Action) -> Query {
        q(Form::Json, PRIOR.iter().map(|c| c.to_string()).collect())
    }

    fn parse_prior(&self, action: &Action, answer: &Answer) -> Result<State, String> {
        let v: Value = serde_json::from_str(&answer.text)
            .map_err(|e| format!("the state read is not JSON ({e})"))?;
        let Some([ports, bgp]) = v
            .as_array()
            .and_then(|a| <&[Value; 2]>::try_from(a.as_slice()).ok())
        else {
            return Err(format!(
                "expected 2 answers to the state read, got {}",
                excerpt(&answer.text)
            ));
        };
        let states = parse_port_states(ports).map_err(|e| e.to_string())?;
        let mut st = State::default();
        for p in action.ports() {
            let want = normalise_port(p);
            let s = states
                .iter()
                .find(|s| normalise_port(&s.port) == want)
                .ok_or_else(|| format!("port {p} does not exist on the switch"))?;
            if let Some(cause) = &s.err_disabled {
                st.errdisabled.push(format!("{p} ({cause})"));
            }
            st.ports.push(crate::switch::fault::PortState {
                name: p.clone(),
                // `show interface status` says `disabled` for shutdown.
                admin_up: s.admin_up.unwrap_or(true),
                oper_up: s.oper_up.unwrap_or(false),
            });
        }
        let peers = parse_bgp_summary(bgp).map_err(|e| e.to_string())?;
        st.asn = local_asn(bgp);
        st.bgp = (!peers.is_empty() || st.asn.is_some()).then(|| {
            let mut v: Vec<(String, bool)> = Vec::new();
            for p in &peers {
                let key = format!("{} {}", p.vrf, p.neighbor);
                match v.iter_mut().find(|(k, _)| *k == key) {
                    Some(e) => e.1 &= p.established(),
                    None => v.push((key, p.established())),
                }
            }
            v
        });
        Ok(st)
    }

    fn supports(&self, action: &Action) -> Result<(), String> {
        match action {
            Action::PortsDown(_) | Action::RoutingStop => Ok(()),
            Action::Reload { .. } => Err("a reload over NX-API has no dead-man to guard it and nothing for rocegate to undo: use mode ports_down or routing_restart on nxos"
                .into()),
            Action::BgpPeerDown { .. } => Err(
                "route_change is not built on nxos yet: use a link flap, a leaf reset (ports_down, routing_restart) or a spine loss".into(),
            ),
        }
    }

    fn check_prior(&self, action: &Action, prior: &State) -> Result<(), String> {
        self.supports(action)?;
        if !prior.errdisabled.is_empty() {
            return Err(format!(
                "{} err-disabled: `no shutdown` would not bring it back; recover it first (`errdisable recovery`, or shutdown/no shutdown by hand)",
                prior.errdisabled.join(", ")
            ));
        }
        prior.healthy()?;
        if matches!(action, Action::RoutingStop) && prior.asn.is_none() {
            return Err("no BGP instance answers `show bgp all summary vrf all`: routing is already stopped, or this switch runs none".into());
        }
        Ok(())
    }

    fn change(&self, action: &Action, prior: &State, deadman: Option<(&str, Duration)>) -> Change {
        let asn = prior.asn.as_deref().unwrap_or("0");
        let down = q(Form::Conf, lines(action, asn, false));
        let restore = lines(action, asn, true);
        let undo = q(Form::Conf, restore.clone());
        match deadman {
            Some((_, after)) => {
                let name = timer_name(&restore);
                let sep = " $(printf \\\\073) ";
                let vsh = format!("configure terminal{sep}{}", restore.join(sep));
                let arm = format!(
                    "run bash setsid sh -c ': {name} && sleep {} && /isan/bin/vsh -c \"{vsh}\"' </dev/null >/dev/null 2>&1 & sleep 0.5 && pgrep -f '{}'",
                    after.as_secs().max(1),
                    timer_pattern(&name)
                );
                Change {
                    apply: vec![q(Form::Text, vec![arm]), down],
                    undo,
                    armed: true,
                    reboots: false,
                }
            }
            None => Change {
                apply: vec![down],
                undo,
                armed: false,
                reboots: false,
            },
        }
    }

    fn applied(&self, sent: &Query, a: &Answer) -> Result<(), String> {
        let Query::Api(qq) = sent else {
            return Err(format!("`{}` is not an NX-API request", sent.display()));
        };
        let arm = qq.cmds.first().is_some_and(|c| c.starts_with("run bash"));
        match a.exit {
            Some(0) if !arm => Ok(()),
            // The timer answers with its pid: proof that it runs.
            Some(0) if a.text.split_whitespace().any(|w| w.parse::<u32>().is_ok()) => Ok(()),
            Some(0) => Err(format!(
                "the dead-man timer did not start (`run bash` printed {}): nothing changed; is `feature bash-shell` on?",
                excerpt(a.text.trim())
            )),
            _ => Err(refusal(sent, a)),
        }
    }

    fn undo_next(&self, _ports: &[String], sent: &Query, a: &Answer) -> Next {
        let Query::Api(qq) = sent else {
            return Next::Failed(format!("`{}` is not an NX-API request", sent.display()));
        };
        match (qq.form, a.exit) {
            // Restored: now the timer, which would only repeat the restore.
            (Form::Conf, Some(0)) => Next::Then(q(
                Form::Text,
                vec![format!(
                    "run bash pkill -f '{}' || true",
                    timer_pattern(&timer_name(&qq.cmds))
                )],
            )),
            (Form::Text, _) => Next::Done,
            _ => Next::Failed(refusal(sent, a)),
        }
    }
}

impl Platform for Nxos {
    fn name(&self) -> &'static str {
        SwitchDriver::Nxos.name()
    }

    fn needs(&self) -> Needs {
        Needs {
            // Show commands run as network-operator.
            root_for_config: false,
            // Configuration and `run bash` need network-admin.
            root_for_faults: true,
            // Nexus 9000 interface counters are polled from the ASIC about
            // every 2 s; queuing counters are read on demand.
            counter_interval: Duration::from_secs(3),
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
            .map(|(_, t, _)| show(&t.replace("{}", port)))
            .collect()
    }

    fn parse_counters(
        &self,
        _port: &str,
        query: &Query,
        a: &Answer,
    ) -> Result<Vec<Reading>, ParseError> {
        let (i, port) = counter_of(query).ok_or_else(|| {
            ParseError(format!(
                "`{}` is not a counter read of the nxos platform",
                query.display()
            ))
        })?;
        let v: Value = serde_json::from_str(&a.text).map_err(|e| {
            ParseError(format!(
                "`{}` did not answer JSON ({e}): {}",
                query.display(),
                excerpt(&a.text)
            ))
        })?;
        let want = normalise_port(&port);
        Ok((COUNTERS[i].2)(&v)?
            .into_iter()
            .filter(|p| normalise_port(&p.port) == want)
            .flat_map(|p| p.readings)
            .collect())
    }

    fn counter_source(&self, query: &Query) -> &'static str {
        counter_of(query).map_or("unknown", |(i, _)| COUNTERS[i].0)
    }

    fn config_queries(&self, _ports: &[String]) -> Vec<Query> {
        CONFIG_COMMANDS
            .iter()
            .map(|(cmd, t)| {
                let form = match t {
                    CliType::ShowAscii => Form::Text,
                    CliType::Conf => Form::Conf,
                    CliType::Show => Form::Json,
                };
                q(form, vec![cmd.to_string()])
            })
            .collect()
    }

    fn parse_config(&self, switch: &str, ports: &[String], answers: &[Answer]) -> SwitchConfig {
        let replies: Vec<CommandReply> = CONFIG_COMMANDS
            .iter()
            .zip(self.config_queries(ports))
            .enumerate()
            .map(|(k, ((cmd, _), query))| {
                let form = match query {
                    Query::Api(a) => a.form,
                    Query::Argv(_) => Form::Json,
                };
                reply_of(cmd, form, answers.get(k).unwrap_or(&Answer::default()))
            })
            .collect();
        switch_config(
            switch,
            ports,
            &ConfigReplies {
                version: replies.first(),
                interfaces: replies.get(1),
                ipqos: replies.get(2),
                pfc: replies.get(3),
            },
        )
    }

    fn lldp_query(&self) -> Query {
        show("show lldp neighbors detail")
    }

    fn parse_lldp(&self, a: &Answer) -> Result<Vec<LldpNeighbor>, ParseError> {
        let v: Value = serde_json::from_str(&a.text).map_err(|e| {
            ParseError(format!(
                "`show lldp neighbors detail` did not answer JSON ({e})"
            ))
        })?;
        parse_lldp_json(&v)
    }

    fn optics_query(&self, _port: &str) -> Option<Query> {
        None
    }

    fn normalise_port(&self, name: &str) -> String {
        normalise_port(name)
    }

    fn probe_queries(&self, user: &str) -> Vec<Query> {
        vec![
            show("show version"),
            q(Form::Text, vec![format!("show user-account {user}")]),
        ]
    }

    /// `show user-account USER` prints `roles:network-admin …`: the change
    /// and `run bash` (the dead-man) need network-admin (or vdc-admin).
    fn read_probe(&self, answers: &[Answer]) -> Result<String, String> {
        let ok = |k: usize| -> Result<&Answer, String> {
            match answers.get(k) {
                Some(a) if a.exit == Some(0) => Ok(a),
                Some(a) => Err(a.text.trim().to_string()),
                None => Err("no answer".into()),
            }
        };
        let v = reply_of("show version", Form::Json, ok(0)?);
        let version = v
            .reply
            .json()
            .and_then(|b| super::parse_version(b).map_err(|e| e.0))?
            .version;
        let roles: Vec<&str> = ok(1)?
            .text
            .lines()
            .filter_map(|l| l.trim().strip_prefix("roles:"))
            .flat_map(str::split_whitespace)
            .collect();
        if roles
            .iter()
            .any(|r| *r == "network-admin" || *r == "vdc-admin")
        {
            Ok(format!(
                "NX-OS {version}, roles {}: reads and faults allowed (faults also need `feature bash-shell`)",
                roles.join(" ")
            ))
        } else {
            Err(format!(
                "NX-OS {version}, roles {}: reads work, but faults need network-admin (configuration and `run bash`)",
                if roles.is_empty() { "none listed".to_string() } else { roles.join(" ") }
            ))
        }
    }

    fn port_path(&self, name: &str) -> String {
        format!(
            "sys/intf/phys-[{}]",
            normalise_port(name).replace("ethernet", "eth")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cmds(q: &Query) -> (Form, Vec<String>) {
        match q {
            Query::Api(a) => (a.form, a.cmds.clone()),
            Query::Argv(_) => panic!("argv"),
        }
    }

    fn said(text: &str) -> Answer {
        Answer {
            exit: Some(0),
            text: text.into(),
        }
    }

    fn flap() -> Action {
        Action::PortsDown(vec!["Ethernet1/1".into()])
    }

    /// The timer is armed (and seen running) before the change, in a call
    /// of its own; the restore it runs reaches vsh with its `;` intact.
    #[test]
    fn the_dead_man_is_a_detached_timer_armed_first() {
        let c = Nxos.change(
            &flap(),
            &State::default(),
            Some(("r-1", Duration::from_secs(90))),
        );
        assert!(c.armed);
        let (form, arm) = cmds(&c.apply[0]);
        assert_eq!(form, Form::Text);
        assert!(
            arm[0].starts_with("run bash setsid sh -c ': rocegate-deadman-"),
            "{}",
            arm[0]
        );
        assert!(
            arm[0].contains("sleep 90 && /isan/bin/vsh -c"),
            "{}",
            arm[0]
        );
        assert!(!arm[0].contains(';'), "NX-API would split {}", arm[0]);
        assert_eq!(
            cmds(&c.apply[1]),
            (
                Form::Conf,
                vec!["interface Ethernet1/1".into(), "shutdown".into()]
            )
        );
        assert_eq!(
            cmds(&c.undo),
            (
                Form::Conf,
                vec!["interface Ethernet1/1".into(), "no shutdown".into()]
            )
        );
        // What the switch's shell would hand vsh: run the timer's script
        // with vsh replaced by printf and no sleep.
        let inner = arm[0]
            .split_once("sh -c '")
            .and_then(|(_, r)| r.split_once("' </dev/null"))
            .map(|(s, _)| {
                s.replace("/isan/bin/vsh -c", "printf %s")
                    .replace("sleep 90", "true")
            })
            .unwrap();
        let o = std::process::Command::new("sh")
            .args(["-c", &inner])
            .output()
            .unwrap();
        assert_eq!(
            String::from_utf8_lossy(&o.stdout),
            "configure terminal ; interface Ethernet1/1 ; no shutdown"
        );
        // No pid back: the timer is not running, and nothing is changed.
        assert!(Nxos.applied(&c.apply[0], &said("  4242\n")).is_ok());
        let e = Nxos
            .applied(&c.apply[0], &said("bash: setsid: command not found"))
            .unwrap_err();
        assert!(e.contains("feature bash-shell"), "{e}");
    }

    /// Undo: the restore, then the timer of this fault (and no other) killed.
    #[test]
    fn the_undo_restores_then_disarms_its_own_timer() {
        let c = Nxos.change(
            &flap(),
            &State::default(),
            Some(("r-1", Duration::from_secs(90))),
        );
        let other = Nxos.change(
            &Action::PortsDown(vec!["Ethernet1/2".into()]),
            &State::default(),
            Some(("r-2", Duration::from_secs(90))),
        );
        let ports = vec!["Ethernet1/1".to_string()];
        let Next::Then(kill) = Nxos.undo_next(&ports, &c.undo, &said("")) else {
            panic!("expected the disarm")
        };
        let (form, k) = cmds(&kill);
        assert_eq!(form, Form::Text);
        let name = cmds(&c.apply[0]).1[0]
            .split_whitespace()
            .find(|w| w.starts_with("rocegate-deadman-"))
            .unwrap()
            .to_string();
        let pattern = format!("{}[{}]", &name[..name.len() - 1], &name[name.len() - 1..]);
        assert_eq!(k[0], format!("run bash pkill -f '{pattern}' || true"));
        assert!(!cmds(&other.apply[0]).1[0].contains(&name));
        assert_eq!(Nxos.undo_next(&ports, &kill, &said("")), Next::Done);
        let refused = Answer {
            exit: Some(crate::switch::call::NEEDS_PRIVILEGE),
            text: "`interface Ethernet1/1` is not allowed for this account's role".into(),
        };
        assert!(matches!(
            Nxos.undo_next(&ports, &c.undo, &refused),
            Next::Failed(e) if e.contains("not allowed")
        ));
    }

    #[test]
    fn prior_state_reads_ports_and_bgp_in_every_vrf() {
        let read = |n: &str| -> Value {
            let p = format!("{}/tests/fixtures/nxos/{n}", env!("CARGO_MANIFEST_DIR"));
            serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
        };
        let status = read("show-interface-status-insapi-greenpau.json");
        let body = status
            .pointer("/ins_api/outputs/output/body")
            .unwrap()
            .clone();
        let bgp = read("show-bgp-all-summary-vrf-all-row-saf-object-napalm.json");
        let a = said(&serde_json::json!([body, bgp]).to_string());
        let st = Nxos.parse_prior(&Action::RoutingStop, &a).unwrap();
        assert_eq!(st.asn.as_deref(), Some("64861"));
        assert!(st.bgp.as_ref().is_some_and(|b| !b.is_empty()), "{st:?}");
        let e = Nxos
            .parse_prior(&Action::PortsDown(vec!["Eth9/99".into()]), &a)
            .unwrap_err();
        assert!(e.contains("does not exist"), "{e}");
    }

    #[test]
    fn the_probe_reads_the_account_roles() {
        let p = format!(
            "{}/tests/fixtures/nxos/show-version-body-napalm-n9000.json",
            env!("CARGO_MANIFEST_DIR")
        );
        let version = said(&std::fs::read_to_string(p).unwrap());
        let admin = said("user:rocegate\n        this user account has no expiry date\n        roles:network-admin \n");
        let r = Nxos.read_probe(&[version.clone(), admin]).unwrap();
        assert!(r.contains("roles network-admin"), "{r}");
        let op = said("user:rocegate\n        roles:network-operator \n");
        let e = Nxos.read_probe(&[version, op]).unwrap_err();
        assert!(e.contains("faults need network-admin"), "{e}");
    }
}
