//! The short commands the emulated pod answers besides the workloads: reads
//! of counters and configuration (`ethtool -S|-i`, the RDMA sysfs counters,
//! `mlnx_qos`, `lldpctl`, and on a Linux switch `ip -s -j link show`, `dcb
//! pfc show`, `tc -s -d qdisc show`), and the fault commands a host or a
//! `linux` switch driver sends (`ip link set … down|up`, `systemctl
//! stop|start|restart frr`, `reboot`).

use crate::config::model::{End, Inventory, NicId, NodeId, SwitchId};
use crate::exec::types::{ExecFailure, InvocationOutput};

use super::batch::{FaultCmd, RoutingAction};
use super::fabric::Fabric;
use super::{host_out, switch_out, Emulator, Parsed};

/// A read-only command, resolved to what it reads.
#[derive(Debug, Clone, PartialEq)]
pub enum Probe {
    NicStats(NicId),
    NicInfo(NicId),
    /// The RDMA sysfs counters, limited to the directories the command named.
    NicSysfs(NicId, Vec<String>),
    NicQos(NicId),
    Lldp(NodeId),
    PortStats(usize),
    /// `ip -s -j link show`; with `true`, `-s` twice.
    PortLink(usize, bool),
    PortPfc(usize),
    PortQdisc(usize),
    /// Several reads in one command (`exec::compose`): each a read, or the
    /// output and exit status of a part that is not one.
    Composed(Vec<Result<Probe, (String, i32)>>),
}

fn fail(stderr: String, exit: i32) -> Parsed {
    Parsed::Done {
        stdout: String::new(),
        stderr,
        exit,
        secs: 0.01,
    }
}

fn no_device(tool: &str, dev: &str) -> Parsed {
    match tool {
        "ip" => fail(format!("Cannot find device \"{dev}\"\n"), 1),
        "ethtool" => fail(
            format!("netlink error: no device matches name (offset 24)\nnetlink error: No such device\nCannot get stats strings information: No such device\n(device: {dev})\n"),
            1,
        ),
        "mlnx_qos" => fail(format!("Interface {dev} doesn't exist\n"), 1),
        _ => fail(format!("{tool}: {dev}: No such device\n"), 1),
    }
}

/// `ip link set [dev] X up|down`: (X, up).
fn ip_link_set(w: &[&str]) -> Option<(String, bool)> {
    let rest = w.strip_prefix(&["ip", "link", "set"])?;
    let rest = rest.strip_prefix(&["dev"]).unwrap_or(rest);
    match rest {
        [x, "up"] => Some((x.to_string(), true)),
        [x, "down"] => Some((x.to_string(), false)),
        _ => None,
    }
}

/// The device an `ip [-s] [-s] [-j] [-d] link show [dev] X` reads, and
/// whether `-s` was given twice (the extended error counters).
fn ip_link_show(w: &[&str]) -> Option<(String, bool)> {
    let (&first, rest) = w.split_first()?;
    if first != "ip" {
        return None;
    }
    let i = rest.iter().position(|x| !x.starts_with('-'))?;
    let twice = rest[..i].iter().filter(|f| **f == "-s").count() >= 2;
    match &rest[i..] {
        ["link", "show", "dev", x] | ["link", "show", x] => Some((x.to_string(), twice)),
        _ => None,
    }
}

/// The device a `tc [-s] [-d] qdisc show dev X` reads.
fn tc_qdisc_show(w: &[&str]) -> Option<String> {
    let (&first, rest) = w.split_first()?;
    if first != "tc" {
        return None;
    }
    let i = rest.iter().position(|x| !x.starts_with('-'))?;
    match &rest[i..] {
        ["qdisc", "show", "dev", x] => Some(x.to_string()),
        _ => None,
    }
}

/// Resolves a command on a node. `None`: not a probe or fault command.
pub fn parse_node(inv: &Inventory, node: NodeId, argv: &[String]) -> Option<Parsed> {
    let w: Vec<&str> = argv.iter().map(String::as_str).collect();
    let nic_by_netdev = |x: &str| {
        inv.nodes[node]
            .nics
            .iter()
            .copied()
            .find(|&n| inv.nics[n].netdev == x)
    };
    if let Some((x, up)) = ip_link_set(&w) {
        let Some(n) = nic_by_netdev(&x) else {
            return Some(no_device("ip", &x));
        };
        let Some(l) = inv.nics[n].uplink else {
            return Some(fail(String::new(), 0));
        };
        let side = usize::from(inv.links[l].a != End::Nic(n));
        return Some(Parsed::Fault(FaultCmd::Link { link: l, side, up }));
    }
    let probe = match w.as_slice() {
        ["ethtool", "-S", x] | ["ethtool", "--statistics", x] => match nic_by_netdev(x) {
            Some(n) => Probe::NicStats(n),
            None => return Some(no_device("ethtool", x)),
        },
        ["ethtool", "-i", x] | ["ethtool", "--driver", x] => match nic_by_netdev(x) {
            Some(n) => Probe::NicInfo(n),
            None => return Some(no_device("ethtool", x)),
        },
        ["mlnx_qos", "-i", x] => match nic_by_netdev(x) {
            Some(n) => Probe::NicQos(n),
            None => return Some(no_device("mlnx_qos", x)),
        },
        ["lldpctl", "-f", "json"] | ["lldpcli", "-f", "json", "show", "neighbors"] => {
            Probe::Lldp(node)
        }
        ["grep", "-r", ".", dirs @ ..] if !dirs.is_empty() => {
            let dev = dirs[0]
                .strip_prefix("/sys/class/infiniband/")
                .and_then(|r| r.split('/').next())
                .unwrap_or_default();
            let Some(n) = inv.nodes[node]
                .nics
                .iter()
                .copied()
                .find(|&n| inv.nics[n].device == dev)
            else {
                return Some(fail(
                    format!("grep: {}: No such file or directory\n", dirs[0]),
                    2,
                ));
            };
            Probe::NicSysfs(n, dirs.iter().map(|d| d.to_string()).collect())
        }
        ["ethtool", ..] | ["mlnx_qos", ..] | ["lldpctl", ..] => {
            return Some(fail(format!("{}: bad command line\n", w[0]), 1))
        }
        _ => return None,
    };
    Some(Parsed::Probe(probe))
}

/// Resolves a command on a switch. `None`: not a probe or fault command.
pub fn parse_switch(fabric: &Fabric, switch: SwitchId, argv: &[String]) -> Option<Parsed> {
    let w: Vec<&str> = argv.iter().map(String::as_str).collect();
    let port = |x: &str| fabric.port(switch, x);
    if let Some((x, up)) = ip_link_set(&w) {
        let Some(p) = port(&x) else {
            return Some(no_device("ip", &x));
        };
        return Some(Parsed::Fault(FaultCmd::Link {
            link: p / 2,
            side: p % 2,
            up,
        }));
    }
    let routing = |a: &str, unit: &str| -> Option<Parsed> {
        let unit = unit.trim_end_matches(".service");
        if unit != "frr" && unit != "bgp" {
            return Some(fail(
                format!("Failed to {a} {unit}.service: Unit {unit}.service not found.\n"),
                5,
            ));
        }
        let action = match a {
            "stop" => RoutingAction::Stop,
            "start" => RoutingAction::Start,
            _ => RoutingAction::Restart,
        };
        Some(Parsed::Fault(FaultCmd::Routing { switch, action }))
    };
    if let Some((x, twice)) = ip_link_show(&w) {
        return Some(match port(&x) {
            Some(p) => Parsed::Probe(Probe::PortLink(p, twice)),
            None => no_device("ip", &x),
        });
    }
    if let Some(x) = tc_qdisc_show(&w) {
        return Some(match port(&x) {
            Some(p) => Parsed::Probe(Probe::PortQdisc(p)),
            None => no_device("tc", &x),
        });
    }
    let probe = match w.as_slice() {
        ["systemctl", a @ ("stop" | "start" | "restart"), unit] => return routing(a, unit),
        ["reboot"] | ["systemctl", "reboot"] => {
            return Some(Parsed::Fault(FaultCmd::Reboot { switch }))
        }
        ["ethtool", "-S", x] => match port(x) {
            Some(p) => Probe::PortStats(p),
            None => return Some(no_device("ethtool", x)),
        },
        ["dcb", "pfc", "show", "dev", x] => match port(x) {
            Some(p) => Probe::PortPfc(p),
            None => return Some(no_device("dcb", x)),
        },
        _ => return None,
    };
    Some(Parsed::Probe(probe))
}

impl Emulator {
    /// Whether a host is a switch that is rebooting (its commands get no answer).
    pub(super) fn unreachable(&self, host: &str) -> bool {
        self.inv
            .switch_by_name
            .get(host)
            .is_some_and(|&s| self.world.rebooting[s])
    }

    /// A short command's output at `t`, before its text: empty and
    /// successful, or ssh's failure when the host is a rebooting switch.
    pub(super) fn short_output(&self, host: &str, t: f64) -> InvocationOutput {
        let mut o = InvocationOutput {
            stdout: String::new(),
            stderr: String::new(),
            exit: Some(0),
            failure: None,
            started_s: t,
            ended_s: t + 0.02,
        };
        if self.unreachable(host) {
            o.exit = Some(255);
            o.stderr = format!("ssh: connect to host {host} port 22: No route to host\n");
            o.failure = Some(ExecFailure::Unreachable(o.stderr.trim().to_string()));
        }
        o
    }

    /// Answers a read at virtual time `t` from the state as it is then.
    pub(super) fn read(&self, probe: &Probe, host: &str, t: f64) -> InvocationOutput {
        let w = &self.world;
        let mut o = self.short_output(host, t);
        if o.failure.is_some() {
            return o;
        }
        o.stdout = match probe {
            Probe::NicStats(n) => host_out::ethtool_stats(&w.nic_cfg[*n], &w.nic[*n]),
            Probe::NicInfo(n) => host_out::ethtool_info(&w.nic_cfg[*n]),
            Probe::NicQos(n) => host_out::mlnx_qos(&w.nic_cfg[*n]),
            Probe::NicSysfs(n, dirs) => {
                let all = host_out::sysfs_counters(&self.inv.nics[*n].device, &w.nic[*n]);
                all.lines()
                    .filter(|l| {
                        dirs.iter()
                            .any(|d| l.starts_with(&format!("{}/", d.trim_end_matches('/'))))
                    })
                    .map(|l| format!("{l}\n"))
                    .collect()
            }
            Probe::Lldp(node) => {
                let cfgs: Vec<_> = self.inv.nodes[*node]
                    .nics
                    .iter()
                    .map(|&n| &w.nic_cfg[n])
                    .collect();
                host_out::lldpctl_json(&self.inv.nodes[*node].name, &cfgs)
            }
            Probe::PortStats(p) => switch_out::ethtool_stats(&w.port_cfg[*p], &w.port[*p]),
            Probe::PortLink(p, twice) => {
                let mac = [0x02, 0x5c, 0, (p >> 16) as u8, (p >> 8) as u8, *p as u8];
                let render = if *twice {
                    switch_out::ip_link_json_ss
                } else {
                    switch_out::ip_link_json
                };
                render(&w.port_cfg[*p], &w.port[*p], *p as u32 + 10, mac)
            }
            Probe::PortPfc(p) => switch_out::dcb_pfc(&w.port_cfg[*p]),
            Probe::PortQdisc(p) => switch_out::tc_qdisc(&w.port_cfg[*p], &w.port[*p]),
            Probe::Composed(parts) => parts
                .iter()
                .enumerate()
                .map(|(i, part)| match part {
                    Ok(p) => {
                        let r = self.read(p, host, t);
                        let code = r.exit.unwrap_or(255);
                        crate::exec::compose::frame(i, &(r.stdout + &r.stderr), code)
                    }
                    Err((text, code)) => crate::exec::compose::frame(i, text, *code),
                })
                .collect(),
        };
        o
    }
}
