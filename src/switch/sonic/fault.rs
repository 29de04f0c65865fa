//! Faults on a SONiC switch: `config interface shutdown|startup` for ports
//! (CONFIG_DB, never saved to config_db.json), the `bgp` service (FRR runs
//! in the `bgp` container) for routing, `vtysh` for one BGP session. The
//! dead-man is a transient systemd timer armed before the change.
//!
//! Why a systemd timer and not linux's `setsid sleep`: SONiC is Debian with
//! systemd, and a timer that PID 1 holds outlives the ssh session by
//! construction (no detaching, no closed descriptors to get right), is
//! named (`rocegate-deadman-ID.timer`, so the undo disarms exactly this
//! fault's), and `systemd-run` fails when it cannot arm it, which stops
//! the apply before anything changes. `--collect` unloads it once it has
//! run, whatever the restore's exit.

use std::net::IpAddr;
use std::time::Duration;

use super::platform::{argv, is_port_name};
use super::Sonic;
use crate::exec::quote;
use crate::switch::fault::{runs_over, Action, Change, Driver, PortState, State};
use crate::switch::table::ruled_tables;
use crate::switch::{Answer, Platform, Query};

/// `sh -c SCRIPT`.
fn sh(script: String) -> Query {
    Query::Argv(vec!["sh".into(), "-c".into(), script])
}

fn ports_of(action: &Action) -> &[String] {
    match action {
        Action::PortsDown(p) | Action::Reload { ports: p } => p,
        Action::RoutingStop | Action::BgpPeerDown { .. } => &[],
    }
}

/// The ports the prior read takes: those taken down, or the one a
/// withdrawn session runs over (which must stay up).
fn ports_read(action: &Action) -> &[String] {
    match action {
        Action::BgpPeerDown { port } => std::slice::from_ref(port),
        _ => ports_of(action),
    }
}

/// The unit a fault's timer is, from its id: systemd unit names take
/// `[A-Za-z0-9:_.\-]`; anything else becomes `_`.
pub fn unit(id: &str) -> String {
    let id: String = id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "_.-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("rocegate-deadman-{id}")
}

const VTYSH_SUMMARY: &str = "vtysh -c 'show bgp vrf all summary json'";

/// The change and the restore, as commands run as root (the apply and the
/// undo prefix `sudo -n`; the timer runs as root already).
fn commands(action: &Action, prior: &State) -> (Vec<String>, Vec<String>) {
    let vtysh = |line: &str| -> Vec<String> {
        let asn = prior.asn.as_deref().unwrap_or_default();
        prior
            .bgp
            .iter()
            .flatten()
            .map(|(n, _)| {
                format!(
                    "vtysh -c 'configure terminal' -c {} -c {}",
                    quote(&format!("router bgp {asn}")),
                    quote(&line.replace("{}", n))
                )
            })
            .collect()
    };
    let links = |verb: &str| -> Vec<String> {
        ports_of(action)
            .iter()
            .map(|p| format!("{}config interface {verb} {}", alias_mode(p), quote(p)))
            .collect()
    };
    match action {
        Action::PortsDown(_) => (links("shutdown"), links("startup")),
        Action::RoutingStop => (
            vec!["systemctl stop bgp".into()],
            vec!["systemctl start bgp".into()],
        ),
        // `no neighbor X shutdown` on a session that is not shut changes
        // nothing and succeeds: the restore is idempotent.
        Action::BgpPeerDown { .. } => (
            vtysh("neighbor {} shutdown"),
            vtysh("no neighbor {} shutdown"),
        ),
        // Refused by `supports`; never sent.
        Action::Reload { .. } => (Vec::new(), Vec::new()),
    }
}

/// `config interface` takes a CONFIG_DB alias (`etp1`) only in alias mode
/// (it then maps it to the port's name, and passes a name through
/// unchanged); a port written as its name runs in the default mode.
fn alias_mode(port: &str) -> &'static str {
    if is_port_name(port) {
        ""
    } else {
        "env SONIC_CLI_IFACE_MODE=alias "
    }
}

fn sudo(cmds: &[String]) -> Vec<String> {
    cmds.iter().map(|c| format!("sudo -n {c}")).collect()
}

/// BGP neighbours as [`State::bgp`] holds them: name, Established.
type Peers = Vec<(String, bool)>;

/// FRR's `show bgp vrf all summary json`: `{"default": {"ipv4Unicast":
/// {"as": 65100, "peers": {"ADDR": {"state": …}}}, …}, "Vrf1": {…}}`.
/// Peers of the default VRF are named by their address, others
/// `ADDR@VRF`; the AS is the default VRF's.
fn bgp_summary(json: &str) -> Result<(Option<String>, Peers), String> {
    let v: serde_json::Value = serde_json::from_str(json.trim())
        .map_err(|e| format!("`{VTYSH_SUMMARY}` is not JSON: {e}"))?;
    let mut peers: Vec<(String, bool)> = Vec::new();
    let mut asn = None;
    for (vrf, afs) in v.as_object().into_iter().flatten() {
        for af in afs.as_object().into_iter().flat_map(|o| o.values()) {
            if vrf == "default" {
                if let Some(a) = af.get("as").and_then(|a| a.as_u64()) {
                    asn = Some(a.to_string());
                }
            }
            for (addr, p) in af
                .get("peers")
                .and_then(|p| p.as_object())
                .into_iter()
                .flatten()
            {
                let name = if vrf == "default" {
                    addr.clone()
                } else {
                    format!("{addr}@{vrf}")
                };
                let up = p.get("state").and_then(|s| s.as_str()) == Some("Established");
                match peers.iter_mut().find(|(a, _)| *a == name) {
                    Some(e) => e.1 &= up,
                    None => peers.push((name, up)),
                }
            }
        }
    }
    peers.sort();
    Ok((asn, peers))
}

impl Driver for Sonic {
    fn platform(&self) -> &'static str {
        "sonic"
    }

    fn supports(&self, action: &Action) -> Result<(), String> {
        match action {
            Action::Reload { .. } => Err(
                "reload is refused on sonic: nothing guards a reboot and nothing undoes it (fault the ports or routing instead)"
                    .into(),
            ),
            // FRR and the kernel know the port by its name only.
            Action::BgpPeerDown { port } if !is_port_name(port) => Err(format!(
                "route_change on sonic needs the port's Ethernet name: {port} looks like a CONFIG_DB alias, which FRR and `ip` do not know"
            )),
            _ => Ok(()),
        }
    }

    fn needs(&self, action: &Action) -> Vec<&'static str> {
        let mut v = vec!["sudo", "systemd-run", "systemctl", "pgrep", "show"];
        match action {
            Action::PortsDown(_) | Action::Reload { .. } => v.push("config"),
            Action::RoutingStop => {}
            Action::BgpPeerDown { .. } => v.extend(["vtysh", "ip"]),
        }
        v
    }

    fn read_prior(&self, action: &Action) -> Query {
        let mut s = String::from("echo '@@status'; show interfaces status; echo '@@end'");
        if let Action::BgpPeerDown { port } = action {
            s += &format!(
                "; ip -o addr show dev {} 2>/dev/null | sed 's/^/@@addr /'",
                quote(port)
            );
        }
        s += &format!("; echo '@@bgp'; sudo -n {VTYSH_SUMMARY} 2>/dev/null; echo '@@end'");
        sh(s)
    }

    fn parse_prior(&self, action: &Action, answer: &Answer) -> Result<State, String> {
        let mut st = State::default();
        let mut section: Option<(&str, String)> = None;
        let mut status = None;
        let mut addrs: Vec<(IpAddr, u8)> = Vec::new();
        for line in answer.text.lines() {
            if let Some((name, body)) = section.as_mut() {
                if line.trim() == "@@end" {
                    let body = std::mem::take(body);
                    if *name == "status" {
                        status = Some(body);
                    } else if !body.trim().is_empty() {
                        let (asn, peers) = bgp_summary(&body)?;
                        st.asn = asn;
                        st.bgp = Some(peers);
                    }
                    section = None;
                } else {
                    body.push_str(line);
                    body.push('\n');
                }
                continue;
            }
            let w: Vec<&str> = line.split_whitespace().collect();
            match w.as_slice() {
                ["@@status"] => section = Some(("status", String::new())),
                ["@@bgp"] => section = Some(("bgp", String::new())),
                ["@@addr", _, _, "inet" | "inet6", cidr, ..] => {
                    let (a, l) = cidr.split_once('/').unwrap_or((cidr, "128"));
                    match (a.parse::<IpAddr>(), l.parse::<u8>()) {
                        (Ok(a), Ok(l)) => addrs.push((a, l)),
                        _ => return Err(format!("`ip -o addr` printed {cidr:?}, not ADDR/LEN")),
                    }
                }
                _ => {}
            }
        }
        let Some(status) = status else {
            return Err(format!(
                "the state read printed no `show interfaces status` section (got {:?})",
                answer.text.chars().take(200).collect::<String>()
            ));
        };
        let t = ruled_tables(&status)
            .into_iter()
            .find(|t| t.header.first().is_some_and(|h| h == "Interface"))
            .ok_or_else(|| {
                format!(
                    "`show interfaces status` printed no table headed Interface (got {:?})",
                    status.chars().take(200).collect::<String>()
                )
            })?;
        let (Some(oper), Some(admin)) = (t.column("Oper"), t.column("Admin")) else {
            return Err("`show interfaces status` has no Oper or Admin column".into());
        };
        let alias = t.column("Alias");
        for p in ports_read(action) {
            let row = t
                .rows
                .iter()
                .map(|(_, r)| r)
                .find(|r| {
                    r.first().is_some_and(|n| Sonic.normalise_port(n) == Sonic.normalise_port(p))
                        // A port written as its CONFIG_DB alias (exact, as
                        // SONiC compares aliases).
                        || alias.is_some_and(|a| r.get(a).is_some_and(|x| x == p))
                })
                .ok_or_else(|| format!("port {p} does not exist on the switch (`show interfaces status` has no row for it, by name or alias)"))?;
            st.ports.push(PortState {
                name: p.clone(),
                admin_up: row.get(admin).is_some_and(|a| a == "up"),
                oper_up: row.get(oper).is_some_and(|o| o == "up"),
            });
        }
        if let (Action::BgpPeerDown { port }, Some(peers)) = (action, st.bgp.clone()) {
            // Sessions of the default VRF over the port: what is shut,
            // undone and waited for.
            let over: Vec<(String, bool)> = peers
                .iter()
                .filter(|(p, _)| !p.contains('@') && runs_over(p, port, &addrs))
                .cloned()
                .collect();
            if over.is_empty() || st.asn.is_none() {
                let subnets: Vec<String> = addrs.iter().map(|(a, l)| format!("{a}/{l}")).collect();
                let names: Vec<&str> = peers.iter().map(|p| p.0.as_str()).collect();
                return Err(format!(
                    "no BGP session of the default VRF runs over {port} (its addresses: {}; BGP neighbours: {}): route_change needs a neighbour on the port's subnet, or one named by the port (BGP unnumbered)",
                    if subnets.is_empty() { "none".to_string() } else { subnets.join(", ") },
                    if names.is_empty() { "none".to_string() } else { names.join(", ") }
                ));
            }
            st.bgp = Some(over);
        }
        Ok(st)
    }

    fn check_prior(&self, action: &Action, prior: &State) -> Result<(), String> {
        self.supports(action)?;
        let down: Vec<&str> = prior
            .ports
            .iter()
            .filter(|p| !p.admin_up)
            .map(|p| p.name.as_str())
            .collect();
        if !down.is_empty() {
            return Err(format!(
                "{} already administratively down: a fault starts only from ports that are up (`sudo config interface startup`, or fault another port)",
                down.join(", ")
            ));
        }
        let routed = matches!(action, Action::RoutingStop | Action::BgpPeerDown { .. });
        if routed && prior.bgp.is_none() {
            return Err(format!(
                "no routing daemon answers `sudo -n {VTYSH_SUMMARY}`: the bgp container is already stopped, or the account may not sudo"
            ));
        }
        if let Action::BgpPeerDown { port } = action {
            if let Some(p) = prior.ports.iter().find(|p| !p.oper_up) {
                return Err(format!(
                    "{} is down (Oper): a route change starts from a link that is up",
                    p.name
                ));
            }
            let idle: Vec<&str> = prior
                .bgp
                .iter()
                .flatten()
                .filter(|(_, up)| !up)
                .map(|(n, _)| n.as_str())
                .collect();
            if !idle.is_empty() {
                return Err(format!(
                    "the BGP session with {} over {port} is not Established: a route change starts from an established session",
                    idle.join(", ")
                ));
            }
        }
        Ok(())
    }

    fn change(&self, action: &Action, prior: &State, deadman: Option<(&str, Duration)>) -> Change {
        let (apply, restore) = commands(action, prior);
        if apply.is_empty() {
            return Change {
                apply: vec![sh(format!(
                    "echo {} >&2; exit 1",
                    quote(&self.supports(action).err().unwrap_or_default())
                ))],
                undo: sh("true".into()),
                armed: false,
                reboots: false,
            };
        }
        // Every restore runs whatever the others did; the undo fails if any did.
        let mut undo = String::from("rc=0");
        for c in sudo(&restore) {
            undo += &format!("; {c} || rc=$?");
        }
        let Some((id, after)) = deadman else {
            return Change {
                apply: vec![sh(sudo(&apply).join(" && "))],
                undo: sh(undo + "; exit $rc"),
                armed: false,
                reboots: false,
            };
        };
        let unit = unit(id);
        let timer = format!("{unit}.timer");
        let apply = format!(
            ": rocegate-apply {id}; \
command -v systemd-run >/dev/null 2>&1 || {{ echo 'rocegate: systemd-run is not installed: no dead-man switch, nothing changed' >&2; exit 97; }}; \
sudo -n systemd-run --quiet --collect --unit={unit} --on-active={}s sh -c {} || {{ echo 'rocegate: the dead-man timer could not be armed: nothing changed' >&2; exit 98; }}; \
sudo -n systemctl is-active --quiet {timer} || {{ echo 'rocegate: the dead-man timer is not running: nothing changed' >&2; exit 98; }}; \
{}",
            after.as_secs().max(1),
            quote(&restore.join("; ")),
            sudo(&apply).join(" && ")
        );
        // A controller killed while its apply was in flight leaves that
        // apply running on the switch: wait for it to end, or the change
        // would land after this undo. The timer is disarmed only once the
        // restore worked: a failed restore leaves it to try again.
        let undo = format!(
            "i=0; while pgrep -f {} >/dev/null; do i=$((i+1)); if [ $i -ge 200 ]; then echo 'rocegate: the change is still being made on the switch; undo again later' >&2; exit 99; fi; sleep 0.1; done; \
{undo}; \
if [ $rc -eq 0 ]; then sudo -n systemctl stop {timer} 2>/dev/null; if sudo -n systemctl is-active --quiet {timer}; then echo 'rocegate: the dead-man timer {timer} is still armed' >&2; rc=97; fi; fi; exit $rc",
            quote(&format!("^sh -c : rocegate-appl[y] {id};"))
        );
        Change {
            apply: vec![sh(apply)],
            undo: sh(undo),
            armed: true,
            reboots: false,
        }
    }

    fn plain(&self, action: &Action, _prior: &State) -> (Vec<Query>, Vec<Query>) {
        let ports = ports_of(action);
        let each = |verb: &str| -> Vec<Query> {
            ports
                .iter()
                .map(|p| {
                    if is_port_name(p) {
                        argv(&["sudo", "-n", "config", "interface", verb, p])
                    } else {
                        argv(&[
                            "sudo",
                            "-n",
                            "env",
                            "SONIC_CLI_IFACE_MODE=alias",
                            "config",
                            "interface",
                            verb,
                            p,
                        ])
                    }
                })
                .collect()
        };
        match action {
            Action::PortsDown(_) => (each("shutdown"), each("startup")),
            Action::RoutingStop => (
                vec![argv(&["sudo", "-n", "systemctl", "stop", "bgp"])],
                vec![argv(&["sudo", "-n", "systemctl", "start", "bgp"])],
            ),
            Action::Reload { .. } => (Vec::new(), Vec::new()),
            // Without a state read: the neighbour named by its port (BGP
            // unnumbered), in the instance `router bgp` enters without an AS.
            Action::BgpPeerDown { port } => {
                let vtysh = |line: String| {
                    argv(&[
                        "sudo",
                        "-n",
                        "vtysh",
                        "-c",
                        "configure terminal",
                        "-c",
                        "router bgp",
                        "-c",
                        &line,
                    ])
                };
                (
                    vec![vtysh(format!("neighbor {port} shutdown"))],
                    vec![vtysh(format!("no neighbor {port} shutdown"))],
                )
            }
        }
    }
}

#[cfg(test)]
#[path = "tests_fault.rs"]
mod tests;
