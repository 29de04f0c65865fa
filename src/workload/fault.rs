//! The commands a fault sends, as a host or a `linux` switch takes them:
//! `ip link set dev X down|up`, `systemctl stop|start frr`, `reboot`. Each
//! carries its time (`Invocation::at`) from the fault's `at`, `for`,
//! `repeat` and `pace`, so the transport sends it while the workload runs.
//!
//! This is the minimal fault step: it neither journals nor heals (the
//! faults work adds the journal, the dead-man switches and the other switch
//! drivers), so every down it sends is followed by its up in the same step.

use std::time::Duration;

use crate::config::check_suite::{Fault, FaultAction};
use crate::config::inventory::SwitchDriver;
use crate::config::model::{End, Inventory, SwitchId};
use crate::config::suite::LeafResetMode;
use crate::exec::{Invocation, Role, StepCommands};

/// How long a fault command may take before it counts as hung.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(30);

fn cmd(host: &str, line: &str, at: Duration) -> Invocation {
    Invocation {
        host: host.to_string(),
        argv: line.split(' ').map(String::from).collect(),
        env: Vec::new(),
        role: Role::Probe,
        timeout: COMMAND_TIMEOUT,
        at,
    }
}

/// Start of each repetition: `pace` apart, or the outage and as long again.
pub fn starts(f: &Fault) -> Vec<Duration> {
    let period = f.period();
    (0..f.repeat.max(1)).map(|r| f.at + period * r).collect()
}

fn linux_switch(inv: &Inventory, s: SwitchId) -> Result<&str, String> {
    let sw = &inv.switches[s];
    if sw.driver != SwitchDriver::Linux {
        return Err(format!(
            "switch {} uses the {:?} driver, which this build cannot send faults to (only linux switches and host links)",
            sw.name, sw.driver
        )
        .to_lowercase());
    }
    Ok(&sw.name)
}

/// The ports of a switch, by name.
fn ports(inv: &Inventory, s: SwitchId) -> Vec<String> {
    inv.switches[s]
        .links
        .iter()
        .flat_map(|&l| [&inv.links[l].a, &inv.links[l].b])
        .filter_map(|e| match e {
            End::Port { switch, port } if *switch == s => Some(port.clone()),
            _ => None,
        })
        .collect()
}

/// What the fault acts on, for names and messages.
pub fn target(inv: &Inventory, f: &Fault) -> String {
    match &f.action {
        FaultAction::LinkFlap { end, .. } => format!("link flap {}", inv.end_name(end)),
        FaultAction::LeafReset { switch, mode } => {
            format!(
                "leaf reset {} ({})",
                inv.switches[*switch].name,
                mode.label()
            )
        }
    }
}

/// The fault's commands, timed from the start of the workload's round.
pub fn fault_step(inv: &Inventory, f: &Fault) -> Result<StepCommands, String> {
    let mut invocations = Vec::new();
    for t in starts(f) {
        let back = t + f.duration;
        match &f.action {
            FaultAction::LinkFlap { end, .. } => {
                let (host, dev) = match end {
                    End::Nic(n) => {
                        let nic = &inv.nics[*n];
                        (inv.nodes[nic.node].name.as_str(), nic.netdev.as_str())
                    }
                    End::Port { switch, port } => (linux_switch(inv, *switch)?, port.as_str()),
                };
                invocations.push(cmd(host, &format!("ip link set dev {dev} down"), t));
                invocations.push(cmd(host, &format!("ip link set dev {dev} up"), back));
            }
            FaultAction::LeafReset { switch, mode } => {
                let host = linux_switch(inv, *switch)?;
                match mode {
                    LeafResetMode::PortsDown => {
                        for p in ports(inv, *switch) {
                            invocations.push(cmd(host, &format!("ip link set dev {p} down"), t));
                            invocations.push(cmd(host, &format!("ip link set dev {p} up"), back));
                        }
                    }
                    LeafResetMode::RoutingRestart => {
                        invocations.push(cmd(host, "systemctl stop frr", t));
                        invocations.push(cmd(host, "systemctl start frr", back));
                    }
                    LeafResetMode::Reload => invocations.push(cmd(host, "systemctl reboot", t)),
                }
            }
        }
    }
    Ok(StepCommands { invocations })
}
