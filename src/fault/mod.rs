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
}

impl Target {
    /// How the platform changes and undoes this fault.
    pub fn driver(&self) -> &'static dyn Driver {
        self.platform.faults()
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
    t.driver()
        .supports(&t.action)
        .map_err(|e| format!("switch {}: {e}", t.host))?;
    Ok(t)
}

fn target_of(inv: &Inventory, f: &Fault) -> Result<Target, String> {
    let switch = |s: SwitchId| -> Result<(String, &'static dyn Platform), String> {
        let sw = &inv.switches[s];
        Ok((sw.name.clone(), crate::switch::platform(sw.driver)))
    };
    Ok(match &f.action {
        FaultAction::LinkFlap { end, .. } => {
            let (host, platform, dev) = match end {
                End::Nic(n) => {
                    let nic = &inv.nics[*n];
                    (
                        inv.nodes[nic.node].name.clone(),
                        crate::switch::for_node(),
                        nic.netdev.clone(),
                    )
                }
                End::Port { switch: s, port } => {
                    let (h, d) = switch(*s)?;
                    (h, d, port.clone())
                }
            };
            Target {
                what: format!("{host}: {dev} down"),
                host,
                platform,
                action: Action::PortsDown(vec![dev]),
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
