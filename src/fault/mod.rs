//! Faults: what a suite's `link_flap`, `leaf_reset`, `spine_loss` or
//! `route_change` does to which device and when, sent through a switch
//! driver, journaled before it is sent and healed whatever happens (see
//! `live`), and the recovery of the traffic it ran during read from that
//! traffic's time series (`recovery`).
//!
//! On the emulated fabric the same commands are timed into the workload's
//! batch (`emulated_step`): the model heals itself with the batch, so
//! nothing is journaled and nothing can be left open.

use std::time::Duration;

use crate::config::check_suite::{Fault, FaultAction};
use crate::config::model::{End, Inventory, SwitchId};
use crate::config::suite::LeafResetMode;
use crate::exec::{Invocation, Role, StepCommands};

pub mod journal;
pub mod live;
pub mod lock;
pub mod recovery;

use crate::switch::fault::{Action, Driver};
use crate::switch::Platform;

/// How long one fault command may take before it counts as hung.
pub const COMMAND_TIMEOUT: Duration = Duration::from_secs(30);

/// One device a fault changes, with its platform.
pub struct Target {
    pub host: String,
    pub platform: &'static dyn Platform,
    pub action: Action,
    /// For messages and the journal, e.g. `leaf1: swp31, swp32 down`.
    pub what: String,
    /// A node's own port: how its root commands are run.
    pub node: Option<NodePrivilege>,
}

/// How a node's root commands run (a host-side fault changes the node).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NodePrivilege {
    /// The account is root: sent as they are.
    Root,
    /// Through `sudo -n` unless the account is root.
    Sudo,
}

impl Target {
    /// How the platform changes and undoes this fault.
    pub fn driver(&self) -> &'static dyn Driver {
        match self.node {
            Some(NodePrivilege::Sudo) => &crate::switch::linux::fault::SudoFaults,
            _ => self.platform.faults(),
        }
    }
}

/// How the inventory's node commands get root, or why they cannot: over
/// `slurm` they run as the user running rocegate, who must be root or
/// allowed `sudo -n` (`transport.slurm.sudo: true`).
pub fn node_privilege(inv: &Inventory) -> Result<NodePrivilege, String> {
    // SAFETY: geteuid has no preconditions.
    node_privilege_as(inv, unsafe { libc::geteuid() })
}

/// [`node_privilege`] for a controller running as `euid`.
fn node_privilege_as(inv: &Inventory, euid: u32) -> Result<NodePrivilege, String> {
    match &inv.transport {
        crate::config::inventory::TransportSpec::Slurm(s) if !inv.transport.emulated() => {
            if s.sudo {
                return Ok(NodePrivilege::Sudo);
            }
            if euid == 0 {
                Ok(NodePrivilege::Root)
            } else {
                Err("not available: needs root: over slurm node commands run as the user running rocegate, who is not root; run rocegate as root, or set transport.slurm.sudo: true and give that user passwordless sudo for ip, setsid and pkill on the nodes".into())
            }
        }
        _ => Ok(NodePrivilege::Root),
    }
}

/// Start of each repetition: `pace` apart, or the outage and as long again.
pub fn starts(f: &Fault) -> Vec<Duration> {
    let period = f.period();
    (0..f.repeat.max(1)).map(|r| f.at + period * r).collect()
}

/// What the fault acts on, for names and messages.
pub fn name(inv: &Inventory, f: &Fault) -> String {
    match &f.action {
        FaultAction::LinkFlap { end, .. } => format!("link flap {}", inv.end_name(end)),
        FaultAction::LeafReset { switch, mode } => {
            format!(
                "leaf reset {} ({})",
                inv.switches[*switch].name,
                mode.label()
            )
        }
        FaultAction::SpineLoss { switch, mode } => {
            format!(
                "spine loss {} ({})",
                inv.switches[*switch].name,
                mode.label()
            )
        }
        FaultAction::RouteChange { switch, port, link } => {
            let l = &inv.links[*link];
            let far = if matches!(&l.a, End::Port { switch: s, port: p } if s == switch && p == port)
            {
                &l.b
            } else {
                &l.a
            };
            format!(
                "route change {}:{port} (session to {})",
                inv.switches[*switch].name,
                inv.end_name(far)
            )
        }
    }
}

/// The device the fault changes and how, or why it cannot be sent.
pub fn target(inv: &Inventory, f: &Fault) -> Result<Target, String> {
    let t = target_of(inv, f)?;
    let kind = if t.node.is_some() { "node" } else { "switch" };
    t.driver()
        .supports(&t.action)
        .map_err(|e| format!("{kind} {}: {e}", t.host))?;
    Ok(t)
}

fn target_of(inv: &Inventory, f: &Fault) -> Result<Target, String> {
    let switch = |s: SwitchId| -> Result<(String, &'static dyn Platform), String> {
        let sw = &inv.switches[s];
        Ok((sw.name.clone(), crate::switch::platform(sw.driver)))
    };
    Ok(match &f.action {
        FaultAction::LinkFlap { end, .. } => {
            let (host, platform, dev, node) = match end {
                End::Nic(n) => {
                    let nic = &inv.nics[*n];
                    let host = inv.nodes[nic.node].name.clone();
                    let how = node_privilege(inv).map_err(|e| format!("node {host}: {e}"))?;
                    (
                        host,
                        crate::switch::for_node(),
                        nic.netdev.clone(),
                        Some(how),
                    )
                }
                End::Port { switch: s, port } => {
                    let (h, d) = switch(*s)?;
                    (h, d, port.clone(), None)
                }
            };
            Target {
                what: format!("{host}: {dev} down"),
                host,
                platform,
                action: Action::PortsDown(vec![dev]),
                node,
            }
        }
        FaultAction::LeafReset { switch: s, mode } | FaultAction::SpineLoss { switch: s, mode } => {
            let (host, platform) = switch(*s)?;
            let p = inv.switch_ports(*s);
            let (action, what) = match mode {
                LeafResetMode::PortsDown => (
                    Action::PortsDown(p.clone()),
                    format!("{host}: {} down", p.join(", ")),
                ),
                LeafResetMode::RoutingRestart => {
                    (Action::RoutingStop, format!("{host}: routing stopped"))
                }
                LeafResetMode::Reload => (Action::Reload { ports: p }, format!("{host}: reloaded")),
            };
            Target {
                host,
                platform,
                action,
                what,
                node: None,
            }
        }
        FaultAction::RouteChange {
            switch: s, port, ..
        } => {
            let (host, platform) = switch(*s)?;
            Target {
                what: format!("{host}: bgp session over {port} shut"),
                host,
                platform,
                action: Action::BgpPeerDown { port: port.clone() },
                node: None,
            }
        }
    })
}

fn invocation(host: &str, argv: Vec<String>, at: Duration) -> Invocation {
    Invocation {
        host: host.to_string(),
        argv,
        env: Vec::new(),
        role: Role::Probe,
        timeout: COMMAND_TIMEOUT,
        at,
    }
}

/// `argv` on `host`, started at once.
pub fn command(host: &str, argv: Vec<String>) -> Invocation {
    invocation(host, argv, Duration::ZERO)
}

/// `sh -c SCRIPT` on `host`, started at once.
pub fn shell(host: &str, script: &str) -> Invocation {
    command(host, vec!["sh".into(), "-c".into(), script.to_string()])
}

/// The emulated fabric's fault step: the driver's plain commands timed
/// from the start of the workload's round, every down followed by its up.
pub fn emulated_step(
    inv: &Inventory,
    f: &Fault,
    prior: &crate::switch::fault::State,
) -> Result<(StepCommands, Vec<crate::switch::Query>), String> {
    let t = target(inv, f)?;
    let (apply, undo) = t.driver().plain(&t.action, prior);
    let mut invocations = Vec::new();
    let mut queries = Vec::new();
    for at in starts(f) {
        for a in &apply {
            invocations.push(invocation(&t.host, a.command_line(), at));
            queries.push(a.clone());
        }
        for u in &undo {
            invocations.push(invocation(&t.host, u.command_line(), at + f.duration));
            queries.push(u.clone());
        }
    }
    Ok((StepCommands { invocations }, queries))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inv(transport: &str) -> Inventory {
        let text = format!(
            "fabric: {{name: t, environment: lab, rails: 1, roce: {{pfc_priority: 3, cnp_priority: 6, dscp_roce: 26, dscp_cnp: 48, dcqcn: false, mtu: 4096}}}}\ntransport: {transport}\nnodes:\n  - hosts: n[1-2]\n    address: 10.0.0.[1-2]\n    nics: [{{device: mlx5_0, netdev: eth1, gid_index: 3, rail: 0, speed_gbps: 400}}]\n"
        );
        crate::config::check::parse_inventory("i.yaml", &text).unwrap()
    }

    /// Over slurm a host-side fault needs root on the node: the user
    /// running rocegate is root, or sudo is configured; otherwise it is
    /// refused before the run, saying what would give it root.
    #[test]
    fn a_node_fault_over_slurm_names_its_privilege_path() {
        let plain = inv("{slurm: {}}");
        assert_eq!(node_privilege_as(&plain, 0), Ok(NodePrivilege::Root));
        let e = node_privilege_as(&plain, 1000).unwrap_err();
        assert!(
            e.starts_with("not available: needs root") && e.contains("transport.slurm.sudo: true"),
            "{e}"
        );
        let sudo = inv("{slurm: {sudo: true}}");
        assert_eq!(node_privilege_as(&sudo, 1000), Ok(NodePrivilege::Sudo));
        // The emulated pod and ssh keep their commands as they are.
        for t in [
            "emulated",
            "{slurm: {launcher: emulated}}",
            "{ssh: {user: ops}}",
        ] {
            assert_eq!(
                node_privilege_as(&inv(t), 1000),
                Ok(NodePrivilege::Root),
                "{t}"
            );
        }
        // Through sudo: every root command under `sudo -n` unless root,
        // and the account's right read before anything changes.
        let t = Target {
            host: "n1".into(),
            platform: crate::switch::for_node(),
            action: Action::PortsDown(vec!["eth1".into()]),
            what: "n1: eth1 down".into(),
            node: Some(NodePrivilege::Sudo),
        };
        let crate::switch::Query::Argv(read) = t.driver().read_prior(&t.action) else {
            panic!("a shell read")
        };
        assert!(read.join(" ").contains("sudo -n true"), "{read:?}");
        let answer = crate::switch::Answer {
            text: "@@init systemd\n@@port eth1 0x1003 up\n@@priv none ops\n".into(),
            exit: Some(0),
        };
        let prior = t.driver().parse_prior(&t.action, &answer).unwrap();
        let why = t.driver().check_prior(&t.action, &prior).unwrap_err();
        assert!(why.contains("the account ops is not root"), "{why}");
    }
}
