//! The short commands the emulated pod answers besides the workloads: reads
//! of counters and configuration, and the fault commands a host or a
//! `linux` switch driver sends (`ip link set … down|up`, `systemctl
//! stop|start|restart frr`, `reboot`).
//!
//! Reads on a node: `ethtool -S|-i|-m N`, plain `ethtool N`, the RDMA
//! sysfs counters (`grep -r .`), sysfs files (`grep -H . FILE…`),
//! `mlnx_qos -i N`, `ip [-s] -j link show dev N`, `dcb [-j] [-s] pfc show
//! dev N`, `dcb [-j] [-N] app show dev N`, `lldpctl -f json|json0`. On a
//! `linux` switch: `ethtool -S|-m S`, plain `ethtool S`, `ip [-s] [-s] -j
//! link show dev S`, `dcb [-j] [-s] pfc show dev S`, `tc -s -d qdisc show
//! dev S`, `lldpctl -f json|json0`, `uname -r`. Any of them may come
//! composed into one `sh -c` (`exec::compose`). A device the host does not
//! have fails with the tool's own message and status.

use crate::config::inventory::Defect;
use crate::config::model::{End, Inventory, NicId, NodeId, SwitchId};
use crate::exec::types::{ExecFailure, InvocationOutput};

use super::batch::{FaultCmd, RoutingAction};
use super::config_out::{self, Driver, LinkView};
use super::fabric::Fabric;
use super::optics::{self, Light};
use super::switch_out::{NetdevStats, NetdevView};
use super::sysfs::{self, NodeFs};
use super::{host_out, lldp, switch_out, Emulator, Parsed};

/// The two LLDP writers of lldpd.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LldpFormat {
    /// `-f json`: one-element lists collapse.
    Json,
    /// `-f json0`: every value a list.
    Json0,
}

/// Which `dcb` output, and its options.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DcbOpts {
    pub json: bool,
    /// `-s`: PFC frame counters.
    pub stats: bool,
    /// `-N`: DSCPs as numbers, not names.
    pub numeric: bool,
}

/// A read-only command, resolved to what it reads.
#[derive(Debug, Clone, PartialEq)]
pub enum Probe {
    NicStats(NicId),
    NicInfo(NicId),
    /// Plain `ethtool N`.
    NicSettings(NicId),
    /// `ip -j link show dev N`, with the number of `-s`.
    NicLink(NicId, u8),
    NicPfc(NicId, DcbOpts),
    NicApp(NicId, DcbOpts),
    /// `ethtool -m N`.
    NicModule(NicId),
    /// The RDMA sysfs counters, limited to the directories the command named.
    NicSysfs(NicId, Vec<String>),
    /// `grep -H . FILE…` on a node.
    Files(NodeId, Vec<String>),
    NicQos(NicId),
    Lldp(NodeId, LldpFormat),
    PortStats(usize),
    /// Plain `ethtool S`.
    PortSettings(usize),
    /// `ip -j link show`, with the number of `-s`.
    PortLink(usize, u8),
    PortPfc(usize, DcbOpts),
    PortQdisc(usize),
    /// `ethtool -m S`.
    PortModule(usize),
    SwitchLldp(SwitchId, LldpFormat),
    /// `uname -r` on a switch.
    Kernel,
    /// A read of a `sonic` switch (`sonic_out`).
    Sonic(SwitchId, super::sonic_out::Read),
    /// A read of a `cumulus` switch (`cumulus_out`).
    Cumulus(super::cumulus_out::Read),
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
        // `ip link show dev X` looks the name up itself (ipaddress.c).
        "ip show" => fail(format!("Device \"{dev}\" does not exist.\n"), 1),
        "ethtool" => fail(
            format!("netlink error: no device matches name (offset 24)\nnetlink error: No such device\nCannot get stats strings information: No such device\n(device: {dev})\n"),
            1,
        ),
        // Plain `ethtool X` and `ethtool -m X`: the netlink request fails.
        "ethtool netlink" => fail(
            "netlink error: no device matches name (offset 24)\nnetlink error: No such device\n"
                .into(),
            1,
        ),
        // dcb checks the name's syntax only; the kernel's ENODEV comes back
        // through `perror("Attribute read")` (dcb.c).
        "dcb" => fail("Attribute read: No such device\n".into(), 1),
        "mlnx_qos" => fail(format!("Interface {dev} doesn't exist\n"), 1),
        _ => fail(format!("{tool}: {dev}: No such device\n"), 1),
    }
}

/// `vtysh -c 'configure terminal' -c 'router bgp [AS]' -c '[no] neighbor X
/// shutdown'`: (X, shut). The emulated pod runs BGP unnumbered, so X is
/// the port the session runs over.
fn vtysh_neighbor_shutdown(w: &[&str]) -> Option<(String, bool)> {
    let ["vtysh", "-c", conf, "-c", router, "-c", line] = w else {
        return None;
    };
    if !matches!(*conf, "configure terminal" | "conf t") || !router.starts_with("router bgp") {
        return None;
    }
    let words: Vec<&str> = line.split_whitespace().collect();
    match words.as_slice() {
        ["neighbor", x, "shutdown"] => Some((x.to_string(), true)),
        ["no", "neighbor", x, "shutdown"] => Some((x.to_string(), false)),
        _ => None,
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
/// how many times `-s` was given (twice: the extended error counters).
fn ip_link_show(w: &[&str]) -> Option<(String, u8)> {
    let (&first, rest) = w.split_first()?;
    if first != "ip" {
        return None;
    }
    let i = rest.iter().position(|x| !x.starts_with('-'))?;
    let level = rest[..i].iter().filter(|f| **f == "-s").count().min(2) as u8;
    match &rest[i..] {
        ["link", "show", "dev", x] | ["link", "show", x] => Some((x.to_string(), level)),
        _ => None,
    }
}

/// `dcb [-j] [-s] [-N] pfc|app show dev X`: the object, the device and the
/// options. Other options and objects are not answered.
fn dcb_show(w: &[&str]) -> Option<(&'static str, String, DcbOpts)> {
    let (&first, rest) = w.split_first()?;
    if first != "dcb" {
        return None;
    }
    let mut o = DcbOpts {
        json: false,
        stats: false,
        numeric: false,
    };
    let i = rest.iter().position(|x| !x.starts_with('-'))?;
    for f in &rest[..i] {
        match *f {
            "-j" | "--json" => o.json = true,
            "-s" | "--statistics" => o.stats = true,
            "-N" | "--Numeric" => o.numeric = true,
            _ => return None,
        }
    }
    match &rest[i..] {
        ["pfc", "show", "dev", x] => Some(("pfc", x.to_string(), o)),
        ["app", "show", "dev", x] => Some(("app", x.to_string(), o)),
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
    if let Some((x, level)) = ip_link_show(&w) {
        return Some(match nic_by_netdev(&x) {
            Some(n) => Parsed::Probe(Probe::NicLink(n, level)),
            None => no_device("ip show", &x),
        });
    }
    if let Some((object, x, o)) = dcb_show(&w) {
        return Some(match nic_by_netdev(&x) {
            Some(n) if object == "pfc" => Parsed::Probe(Probe::NicPfc(n, o)),
            Some(n) => Parsed::Probe(Probe::NicApp(n, o)),
            None => no_device("dcb", &x),
        });
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
        ["ethtool", "-m", x] | ["ethtool", "--module-info", x] => match nic_by_netdev(x) {
            Some(n) => Probe::NicModule(n),
            None => return Some(no_device("ethtool netlink", x)),
        },
        ["ethtool", x] if !x.starts_with('-') => match nic_by_netdev(x) {
            Some(n) => Probe::NicSettings(n),
            None => return Some(no_device("ethtool netlink", x)),
        },
        ["mlnx_qos", "-i", x] => match nic_by_netdev(x) {
            Some(n) => Probe::NicQos(n),
            None => return Some(no_device("mlnx_qos", x)),
        },
        ["lldpctl", "-f", "json"] | ["lldpcli", "-f", "json", "show", "neighbors"] => {
            Probe::Lldp(node, LldpFormat::Json)
        }
        ["lldpctl", "-f", "json0"] | ["lldpcli", "-f", "json0", "show", "neighbors"] => {
            Probe::Lldp(node, LldpFormat::Json0)
        }
        ["grep", "-H", ".", files @ ..] if !files.is_empty() => {
            Probe::Files(node, files.iter().map(|f| f.to_string()).collect())
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
    if let Some((x, shut)) = vtysh_neighbor_shutdown(&w) {
        // FRR's answer to a neighbour it does not have, by interface name.
        let Some(p) = port(&x).filter(|p| fabric.has_session(p / 2)) else {
            return Some(fail(
                "% Create the peer-group or interface first\n".into(),
                1,
            ));
        };
        return Some(Parsed::Fault(FaultCmd::Peer {
            link: p / 2,
            side: p % 2,
            shut,
        }));
    }
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
    if let Some((x, level)) = ip_link_show(&w) {
        return Some(match port(&x) {
            Some(p) => Parsed::Probe(Probe::PortLink(p, level)),
            None => no_device("ip show", &x),
        });
    }
    if let Some(x) = tc_qdisc_show(&w) {
        return Some(match port(&x) {
            Some(p) => Parsed::Probe(Probe::PortQdisc(p)),
            None => no_device("tc", &x),
        });
    }
    // mlxsw has no APP-table offload the emulated operator uses: only PFC.
    if let Some(("pfc", x, o)) = dcb_show(&w) {
        return Some(match port(&x) {
            Some(p) => Parsed::Probe(Probe::PortPfc(p, o)),
            None => no_device("dcb", &x),
        });
    }
    let probe = match w.as_slice() {
        ["systemctl", a @ ("stop" | "start" | "restart"), unit] => return routing(a, unit),
        ["reboot"] | ["systemctl", "reboot"] => {
            return Some(Parsed::Fault(FaultCmd::Reboot { switch }))
        }
        ["uname", "-r"] => Probe::Kernel,
        ["ethtool", "-S", x] => match port(x) {
            Some(p) => Probe::PortStats(p),
            None => return Some(no_device("ethtool", x)),
        },
        ["ethtool", "-m", x] | ["ethtool", "--module-info", x] => match port(x) {
            Some(p) => Probe::PortModule(p),
            None => return Some(no_device("ethtool netlink", x)),
        },
        ["ethtool", x] if !x.starts_with('-') => match port(x) {
            Some(p) => Probe::PortSettings(p),
            None => return Some(no_device("ethtool netlink", x)),
        },
        ["lldpctl", "-f", "json"] | ["lldpcli", "-f", "json", "show", "neighbors"] => {
            Probe::SwitchLldp(switch, LldpFormat::Json)
        }
        ["lldpctl", "-f", "json0"] | ["lldpcli", "-f", "json0", "show", "neighbors"] => {
            Probe::SwitchLldp(switch, LldpFormat::Json0)
        }
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

    /// The module at `end`. Light arrives while the far laser is on and the
    /// fibre carries it: the link is up, or it is down only because this
    /// end is (its own laser off, the far one on). A NIC without a cable
    /// has its laser on and receives nothing. `weak_lane` defects planted at
    /// this end override their lanes.
    fn light(&self, end: &End) -> Light {
        let weak = self
            .inv
            .defects
            .iter()
            .filter_map(|d| match d {
                Defect::WeakLane {
                    end: e,
                    lane,
                    rx_dbm,
                } if self.inv.resolve_end(e).as_ref() == Some(end) => Some((*lane, *rx_dbm)),
                _ => None,
            })
            .collect();
        let name = self.inv.end_name(end);
        let Some(l) = self.inv.link_at(end) else {
            return Light {
                end: name,
                peer: String::new(),
                tx_on: true,
                rx_lit: false,
                weak,
            };
        };
        let link = &self.inv.links[l];
        let side = usize::from(&link.a != end);
        let peer = if side == 0 { &link.b } else { &link.a };
        let admin = self.fabric.admin_up[l];
        Light {
            end: name,
            peer: self.inv.end_name(peer),
            tx_on: admin[side],
            rx_lit: admin[1 - side] && (self.fabric.link_up[l] || !admin[side]),
            weak,
        }
    }

    /// Answers a read at virtual time `t` from the state as it is then.
    pub(super) fn read(&self, probe: &Probe, host: &str, t: f64) -> InvocationOutput {
        let w = &self.world;
        let mut o = self.short_output(host, t);
        if o.failure.is_some() {
            return o;
        }
        let node_nics = |node: NodeId| -> Vec<_> {
            self.inv.nodes[node]
                .nics
                .iter()
                .map(|&n| &w.nic_cfg[n])
                .collect()
        };
        let switch_ports = |s: SwitchId| -> Vec<_> {
            (0..w.port_cfg.len())
                .filter(|&i| w.port_switch[i] == Some(s))
                .map(|i| &w.port_cfg[i])
                .collect()
        };
        o.stdout = match probe {
            Probe::NicStats(n) => host_out::ethtool_stats(&w.nic_cfg[*n], &w.nic[*n]),
            Probe::NicInfo(n) => host_out::ethtool_info(&w.nic_cfg[*n]),
            Probe::NicQos(n) => host_out::mlnx_qos(&w.nic_cfg[*n]),
            Probe::NicSettings(n) => {
                let c = &w.nic_cfg[*n];
                config_out::ethtool_settings(&LinkView {
                    name: &c.netdev,
                    driver: Driver::Mlx5,
                    speed_mbps: c.speed_mbps,
                    link_up: c.link_up,
                    pfc_any: c.pfc.iter().any(|&on| on),
                })
            }
            Probe::NicLink(n, level) => {
                let c = &w.nic_cfg[*n];
                let node = &self.inv.nodes[self.inv.nics[*n].node];
                // lo, then the management port, then the NICs in order.
                let k = node.nics.iter().position(|x| x == n).unwrap_or(0);
                let v = NetdevView {
                    ifindex: 3 + k as u32,
                    name: &c.netdev,
                    admin_up: c.admin_up,
                    carrier: c.link_up,
                    mtu: c.mtu,
                    qdisc: "mq",
                    mac: c.mac,
                };
                // mlx5's ndo_get_stats64 counts the kernel's traffic only,
                // which RoCE bypasses; FCS errors come from the port.
                let st = NetdevStats {
                    crc_errors: count(w.nic[*n].rx_crc_errors),
                    link_down_events: count(w.nic[*n].link_down_events),
                    ..NetdevStats::default()
                };
                switch_out::ip_link(&v, &st, *level)
            }
            Probe::NicPfc(n, opts) => {
                let c = &w.nic_cfg[*n];
                let pc = &w.nic[*n].prio;
                let p = config_out::Pfc {
                    enabled: c.pfc,
                    // mlx5 reports its cable length (mlnx_qos's
                    // `Cable len: 7`) as the PFC delay.
                    delay: 7,
                    requests: pc.map(|p| count(p.tx_pause)),
                    indications: pc.map(|p| count(p.rx_pause)),
                };
                if opts.json {
                    config_out::dcb_pfc_json(&p, opts.stats)
                } else {
                    config_out::dcb_pfc_text(&p, opts.stats)
                }
            }
            Probe::NicApp(n, opts) => {
                let c = &w.nic_cfg[*n];
                let entries = config_out::dscp_app(c.trust_dscp, &c.dscp2prio);
                if opts.json {
                    config_out::dcb_app_json(&entries)
                } else {
                    config_out::dcb_app_text(&entries, opts.numeric)
                }
            }
            Probe::NicModule(n) => optics::ethtool_m(&self.light(&End::Nic(*n))),
            Probe::Files(node, files) => {
                let fs = NodeFs {
                    inv: &self.inv,
                    fabric: &self.fabric,
                    world: w,
                    node: *node,
                };
                let (out, err, exit) = sysfs::grep_h(files, |p| fs.read(p));
                o.stderr = err;
                o.exit = Some(exit);
                out
            }
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
            Probe::Lldp(node, format) => {
                let name = &self.inv.nodes[*node].name;
                match format {
                    LldpFormat::Json => lldp::lldpctl_json(name, &node_nics(*node)),
                    LldpFormat::Json0 => lldp::lldpctl_json0(name, &node_nics(*node)),
                }
            }
            Probe::SwitchLldp(s, format) => {
                let name = &self.inv.switches[*s].name;
                match format {
                    LldpFormat::Json => lldp::switch_lldpctl_json(name, &switch_ports(*s)),
                    LldpFormat::Json0 => lldp::switch_lldpctl_json0(name, &switch_ports(*s)),
                }
            }
            Probe::Kernel => format!("{}\n", config_out::SWITCH_KERNEL),
            Probe::Sonic(s, r) => super::sonic_out::answer(&self.inv, &self.fabric, w, *s, r),
            Probe::Cumulus(r) => super::cumulus_out::answer(&self.inv, w, r),
            Probe::PortStats(p) => switch_out::ethtool_stats(&w.port_cfg[*p], &w.port[*p]),
            Probe::PortSettings(p) => {
                let c = &w.port_cfg[*p];
                config_out::ethtool_settings(&LinkView {
                    name: &c.name,
                    driver: Driver::Mlxsw,
                    speed_mbps: c.speed_mbps,
                    link_up: c.admin_up && c.link_up,
                    pfc_any: c.pfc.iter().any(|&on| on),
                })
            }
            Probe::PortLink(p, level) => {
                let mac = [0x02, 0x5c, 0, (p >> 16) as u8, (p >> 8) as u8, *p as u8];
                let v = switch_out::port_netdev(&w.port_cfg[*p], *p as u32 + 10, mac);
                switch_out::ip_link(&v, &NetdevStats::of_port(&w.port[*p]), *level)
            }
            Probe::PortPfc(p, opts) => {
                switch_out::dcb_pfc(&w.port_cfg[*p], &w.port[*p], opts.json, opts.stats)
            }
            Probe::PortQdisc(p) => switch_out::tc_qdisc(&w.port_cfg[*p], &w.port[*p]),
            Probe::PortModule(p) => {
                let l = &self.inv.links[*p / 2];
                optics::ethtool_m(&self.light(if *p % 2 == 0 { &l.a } else { &l.b }))
            }
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

/// A model total as the counter a tool prints (rounded down, never negative).
fn count(v: f64) -> u64 {
    v.max(0.0).floor() as u64
}
