//! `rocegate inventory discover`: asks every node of an inventory (usually
//! a skeleton from `inventory import`) what RDMA NICs it has, over the
//! inventory's own ssh transport, one composed command per host
//! (`exec::discover`), and writes the inventory back with NICs, rails,
//! the leaves LLDP names, and the host links.
//!
//! What LLDP confirms is written as fact; what is inferred without it is
//! listed under "unverified" in the output's header comment (a comment,
//! not a field: the inventory schema stays what `run` reads, and the list
//! is for the person who reviews the file before trusting a cabling
//! audit). A rail is verified when the NIC's LLDP neighbour is a leaf
//! whose rail the inventory declares, or a leaf that only NICs of the same
//! position reach; otherwise it is the NIC's position on its host in PCI
//! order, unverified.
//!
//! Any host that cannot be read, or has no RDMA device, stops the command
//! with every such host named, and nothing is written.

use std::collections::{BTreeMap, BTreeSet};

use crate::audit::preflight::roce_v2_index;
use crate::cli::DiscoverArgs;
use crate::config::check;
use crate::config::diag::{escaped, quote};
use crate::config::hostlist;
use crate::config::import::node_groups;
use crate::config::inventory::{
    GidIndex, InventoryFile, LinkSpec, NicSpec, NodeGroup, SwitchDriver, SwitchGroup, SwitchRole,
    TransportSpec,
};
use crate::config::model::Inventory;
use crate::config::names::{is_address, is_path_name, is_safe_name};
use crate::counters::host::LldpNeighbor;
use crate::exec::discover::{Device, Findings};
use crate::exit::{AppError, PASS};

use super::remote;

/// Unverified items listed in the header before the rest are counted.
const MAX_LISTED: usize = 200;

pub fn discover(a: &DiscoverArgs) -> Result<i32, AppError> {
    let path = &a.inventory;
    let text = check::read_source(path)?;
    let (raw, inv) = check::parse_partial_inventory(path, &text)?;
    if !matches!(inv.transport, TransportSpec::Ssh(_)) {
        return Err(AppError::Input(format!(
            "{path}: discover reads each node over ssh, and this inventory's transport is not ssh: set transport: {{ssh: {{user: …, key: …}}}}"
        )));
    }
    let hosts: Vec<String> = inv.nodes.iter().map(|n| n.name.clone()).collect();
    let t = remote::transport(&inv, 1, 0.0, None)?;
    let rt = remote::runtime()?;
    let cancel = remote::cancel_on_signal(&rt, "rocegate: interrupted: nothing is written");
    eprintln!("discover: asking {} nodes over ssh", hosts.len());
    let findings = rt.block_on(crate::exec::discover::run(
        t.as_ref(),
        &hosts,
        cancel.clone(),
    ));
    eprint!("{}", render(&findings));
    if *cancel.borrow() {
        return Err(AppError::Incomplete(
            "interrupted: nothing is written".into(),
        ));
    }
    let command = format!("rocegate inventory discover -i {path}");
    let built = build(&raw, &inv, &findings, &command)?;
    let label = a.output.as_deref().unwrap_or("the discovered inventory");
    if let Err(d) = check::parse_inventory(label, &built.yaml) {
        return Err(AppError::Input(format!(
            "what discover found does not make a valid inventory, so nothing is written:\n{d}"
        )));
    }
    super::inventory::write_output(a.output.as_deref(), &built.yaml)?;
    eprintln!(
        "discover: {} nodes, {} NICs on {} rails, {} host links from LLDP, {} unverified items{}",
        hosts.len(),
        built.nics,
        built.rails,
        built.links,
        built.unverified,
        a.output
            .as_deref()
            .map(|o| format!("; wrote {o}"))
            .unwrap_or_default()
    );
    Ok(PASS)
}

/// One line per host: RDMA devices, netdevs and LLDP neighbours, so what
/// was found is shown even when nothing is written.
pub fn render(findings: &[Findings]) -> String {
    let mut s = String::new();
    for f in findings {
        if !f.report.reachable {
            s.push_str(&format!(
                "{}: DOWN {}\n",
                f.host,
                escaped(f.report.error.as_deref().unwrap_or("no answer"))
            ));
            continue;
        }
        let rdma: Vec<String> = f
            .devices
            .iter()
            .map(|d| format!("{}({})", d.name, d.netdevs.join(",")))
            .collect();
        let nets: Vec<String> = f
            .report
            .netdevs
            .iter()
            .map(|n| {
                let speed = n
                    .speed_mbps
                    .filter(|s| *s > 0)
                    .map(|s| format!(",{s}Mb/s"))
                    .unwrap_or_default();
                format!("{}({}{speed})", n.name, n.state)
            })
            .collect();
        let lldp: Vec<String> = f
            .lldp
            .iter()
            .map(|n| {
                format!(
                    "{}->{}:{}",
                    n.interface,
                    n.chassis_name.as_deref().unwrap_or("?"),
                    n.port_id
                )
            })
            .collect();
        let lldp = if let Some(e) = &f.lldp_error {
            format!("unavailable ({e})")
        } else if lldp.is_empty() {
            "none".into()
        } else {
            lldp.join(" ")
        };
        s.push_str(&escaped(&format!(
            "{}: rdma [{}] netdevs [{}] lldp {}",
            f.host,
            rdma.join(" "),
            nets.join(" "),
            lldp
        )));
        s.push('\n');
    }
    s
}

/// The discovered inventory and what the summary line counts.
pub struct Built {
    pub yaml: String,
    pub nics: usize,
    pub rails: u32,
    pub links: usize,
    pub unverified: usize,
}

/// One NIC as found, before rails are settled.
struct Found {
    node: usize,
    position: u32,
    device: String,
    netdev: String,
    port: u8,
    gid: Option<u32>,
    numa: Option<u32>,
    speed: Option<u32>,
    /// The leaf and port LLDP says the NIC is cabled to.
    peer: Option<(String, String)>,
}

/// Why a host stops the command; the worst kind decides the exit code.
enum Stop {
    Input(String),
    Unreachable(String),
}

/// A port id usable as an inventory port name: not a MAC (lldpd's
/// default port id subtype on Linux), no `:` (it separates switch and
/// port in a link end), nothing a shell or hostlist would read.
fn port_name(n: &LldpNeighbor) -> Option<String> {
    let mac_like = |s: &str| s.len() == 17 && s.matches(':').count() == 5;
    [Some(n.port_id.as_str()), n.port_descr.as_deref()]
        .into_iter()
        .flatten()
        .find(|p| is_safe_name(p) && !p.contains(':') && !mac_like(p))
        .map(str::to_string)
}

/// The NICs of one host, in PCI order, or why the host stops discover.
fn host_nics(
    node: usize,
    f: &Findings,
    inv: &Inventory,
    unverified: &mut Vec<String>,
) -> Result<Vec<Found>, Stop> {
    let host = &f.host;
    if !f.report.reachable {
        return Err(Stop::Unreachable(format!(
            "{host}: {}",
            escaped(f.report.error.as_deref().unwrap_or("no answer"))
        )));
    }
    if f.devices.is_empty() {
        let nets: Vec<&str> = f.report.netdevs.iter().map(|n| n.name.as_str()).collect();
        return Err(Stop::Input(format!(
            "no RDMA device on {host}: /sys/class/infiniband is empty or absent (is the NIC's RDMA driver loaded? mlx5_ib for ConnectX); its netdevs are [{}]",
            escaped(&nets.join(" "))
        )));
    }
    let mut devices: Vec<&Device> = f
        .devices
        .iter()
        .filter(|d| d.ports.iter().any(|p| p.1 == "Ethernet"))
        .collect();
    if devices.is_empty() {
        let all: Vec<String> = f
            .devices
            .iter()
            .map(|d| {
                let ll: Vec<&str> = d.ports.iter().map(|p| p.1.as_str()).collect();
                format!("{} ({})", d.name, ll.join(","))
            })
            .collect();
        return Err(Stop::Input(format!(
            "no RoCE device on {host}: its RDMA devices {} have no Ethernet port (InfiniBand is not RoCE)",
            escaped(&all.join(", "))
        )));
    }
    devices.sort_by(|a, b| {
        (a.pci.is_none(), &a.pci, &a.name).cmp(&(b.pci.is_none(), &b.pci, &b.name))
    });
    let mut out = Vec::new();
    for (i, d) in devices.iter().enumerate() {
        let Some(&(port, _, rate)) = d.ports.iter().find(|p| p.1 == "Ethernet") else {
            continue;
        };
        let netdev = d.netdevs.first().cloned().or_else(|| {
            f.report
                .gids
                .iter()
                .find(|g| g.device == d.name && g.port == port && g.netdev != "-")
                .map(|g| g.netdev.clone())
        });
        let Some(netdev) = netdev else {
            return Err(Stop::Input(format!(
                "{host}: RDMA device {} has no netdev (neither under device/net nor in its GID table)",
                quote(&d.name)
            )));
        };
        if !is_safe_name(&d.name) || !is_safe_name(&netdev) {
            return Err(Stop::Input(format!(
                "{host}: device {} or netdev {} is not a usable name",
                quote(&d.name),
                quote(&netdev)
            )));
        }
        let speed = rate.or_else(|| {
            f.report
                .netdevs
                .iter()
                .find(|n| n.name == netdev)
                .and_then(|n| n.speed_mbps)
                .filter(|s| *s >= 1000)
                .map(|s| (s / 1000) as u32)
        });
        let gid = roce_v2_index(&f.report.gids, &d.name, port, &netdev);
        if gid.is_none() {
            unverified.push(format!(
                "{host}:{}: gid_index left as discover: no RoCE v2 GID with an IPv4 address on port {port} yet (configure {netdev}'s address; run reads it again)",
                d.name
            ));
        }
        let lldp = f.lldp.iter().find(|n| n.interface == netdev);
        let peer = match lldp {
            None => None,
            Some(n) => {
                let leaf = n.chassis_name.clone().filter(|c| is_path_name(c));
                match (leaf, port_name(n)) {
                    (Some(l), _) if inv.node_by_name.contains_key(&l) => {
                        unverified.push(format!(
                            "{host}:{}: LLDP on {netdev} hears node {l}, not a switch: no link written",
                            d.name
                        ));
                        None
                    }
                    (Some(l), Some(p)) => Some((l, p)),
                    _ => {
                        unverified.push(format!(
                            "{host}:{}: the LLDP neighbour on {netdev} (chassis {}, port {}) has no usable switch or port name: no link written",
                            d.name,
                            quote(n.chassis_name.as_deref().unwrap_or("")),
                            quote(&n.port_id)
                        ));
                        None
                    }
                }
            }
        };
        out.push(Found {
            node,
            position: i as u32,
            device: d.name.clone(),
            netdev,
            port,
            gid,
            numa: d.numa,
            speed,
            peer,
        });
    }
    Ok(out)
}

/// Writes NICs, rails, leaves and host links into `raw`.
pub fn build(
    raw: &InventoryFile,
    inv: &Inventory,
    findings: &[Findings],
    command: &str,
) -> Result<Built, AppError> {
    let mut unverified = Vec::new();
    let mut stops = Vec::new();
    let mut found: Vec<Found> = Vec::new();
    for (node, f) in findings.iter().enumerate() {
        match host_nics(node, f, inv, &mut unverified) {
            Ok(v) => found.extend(v),
            Err(s) => stops.push(s),
        }
    }
    if !stops.is_empty() {
        let unreachable = stops.iter().any(|s| matches!(s, Stop::Unreachable(_)));
        let lines: Vec<String> = stops
            .iter()
            .map(|s| match s {
                Stop::Input(m) | Stop::Unreachable(m) => m.clone(),
            })
            .collect();
        let msg = format!(
            "{}\nnothing written ({} of {} hosts could not be discovered)",
            lines.join("\n"),
            stops.len(),
            findings.len()
        );
        return Err(if unreachable {
            AppError::Incomplete(msg)
        } else {
            AppError::Input(msg)
        });
    }
    for f in findings {
        if let Some(e) = &f.lldp_error {
            unverified.push(format!(
                "{}: no LLDP ({}): its rails follow device order and it has no links",
                f.host,
                escaped(e)
            ));
        }
    }

    // Which positions reach each leaf: a leaf reached by one position
    // only confirms that position as a rail.
    let mut leaf_positions: BTreeMap<&str, BTreeSet<u32>> = BTreeMap::new();
    for x in &found {
        if let Some((leaf, _)) = &x.peer {
            leaf_positions.entry(leaf).or_default().insert(x.position);
        }
    }
    let declared_rail = |leaf: &str| {
        inv.switch_by_name
            .get(leaf)
            .and_then(|&s| inv.switches[s].rail)
    };
    let mut rails: Vec<u32> = Vec::with_capacity(found.len());
    for x in &found {
        let host = &inv.nodes[x.node].name;
        let rail = match &x.peer {
            Some((leaf, _)) => match declared_rail(leaf) {
                Some(r) => r,
                None => {
                    if leaf_positions
                        .get(leaf.as_str())
                        .is_some_and(|p| p.len() > 1)
                    {
                        unverified.push(format!(
                            "{host}:{}: rail {} from device order: leaf {leaf} is reached by NICs of several positions (not rail-optimised, or crossed cables)",
                            x.device, x.position
                        ));
                    }
                    x.position
                }
            },
            None => {
                unverified.push(format!(
                    "{host}:{}: rail {} from device order (no LLDP neighbour on {})",
                    x.device, x.position, x.netdev
                ));
                x.position
            }
        };
        rails.push(rail);
    }

    // Speeds a port did not report: the host's (else the pod's) fastest.
    let pod_speed = found.iter().filter_map(|x| x.speed).max();
    let mut nics_of: BTreeMap<usize, Vec<NicSpec>> = BTreeMap::new();
    for (x, &rail) in found.iter().zip(&rails) {
        let host = &inv.nodes[x.node].name;
        let speed = match x.speed {
            Some(s) => s,
            None => {
                let s = found
                    .iter()
                    .filter(|y| y.node == x.node)
                    .filter_map(|y| y.speed)
                    .max()
                    .or(pod_speed)
                    .ok_or_else(|| {
                        AppError::Input(format!(
                            "{host}:{}: no speed could be read (no rate, {} reports none): nothing written",
                            x.device, x.netdev
                        ))
                    })?;
                unverified.push(format!(
                    "{host}:{}: speed_gbps {s} assumed: neither the port's rate nor {} says (link down?)",
                    x.device, x.netdev
                ));
                s
            }
        };
        nics_of.entry(x.node).or_default().push(NicSpec {
            device: x.device.clone(),
            netdev: x.netdev.clone(),
            port: (x.port != 1).then_some(x.port),
            gid_index: x.gid.map_or(GidIndex::Discover, GidIndex::Fixed),
            numa: x.numa,
            gpu: None,
            rail,
            speed_gbps: speed,
            address: None,
        });
    }

    // Node groups: consecutive nodes with the same NICs share one.
    let mut nodes: Vec<NodeGroup> = Vec::new();
    let key = |n: usize| serde_json::to_string(&nics_of.get(&n)).unwrap_or_default();
    let mut start = 0;
    while start < inv.nodes.len() {
        let mut end = start + 1;
        while end < inv.nodes.len() && key(end) == key(start) {
            end += 1;
        }
        let pairs: Vec<(String, String)> = inv.nodes[start..end]
            .iter()
            .map(|n| (n.name.clone(), n.address.clone()))
            .collect();
        for mut g in node_groups(&pairs) {
            g.nics = nics_of.get(&start).cloned().unwrap_or_default();
            nodes.push(g);
        }
        start = end;
    }

    // Leaves LLDP named that the inventory lacks.
    let mut switches = raw.switches.clone();
    let mut new_leaves: BTreeMap<String, (Option<&LldpNeighbor>, BTreeSet<u32>)> = BTreeMap::new();
    for (x, &rail) in found.iter().zip(&rails) {
        if let Some((leaf, _)) = &x.peer {
            if inv.switch_by_name.contains_key(leaf) {
                continue;
            }
            let n = findings[x.node]
                .lldp
                .iter()
                .find(|n| n.interface == x.netdev);
            let e = new_leaves.entry(leaf.clone()).or_default();
            e.0 = e.0.or(n);
            e.1.insert(rail);
        }
    }
    for (leaf, (n, leaf_rails)) in &new_leaves {
        let descr = n.and_then(|n| n.chassis_descr.as_deref());
        let driver = descr.and_then(SwitchDriver::from_lldp_description);
        unverified.push(match driver {
            Some(d) => format!(
                "leaf {leaf}: driver {} inferred from its LLDP description {}; add credentials if the driver needs them",
                d.name(),
                quote(descr.unwrap_or(""))
            ),
            None => format!(
                "leaf {leaf}: driver unknown (LLDP description {}): linux is a placeholder, set eos, nxos, sonic, cumulus or linux",
                quote(descr.unwrap_or(""))
            ),
        });
        switches.push(SwitchGroup {
            name: leaf.clone(),
            role: SwitchRole::Leaf,
            driver: driver.unwrap_or(SwitchDriver::Linux),
            address: n.and_then(|n| n.mgmt_ip.clone()).filter(|a| is_address(a)),
            credentials: None,
            api: None,
            rail: (leaf_rails.len() == 1).then(|| *leaf_rails.iter().next().unwrap_or(&0)),
        });
    }

    // Links: the host links LLDP saw replace any the file had for these
    // nodes; the others (leaf to spine) stay.
    let is_node_end = |end: &str| {
        hostlist::expand(end).is_ok_and(|l| {
            l.iter().any(|e| {
                inv.node_by_name
                    .contains_key(e.split_once(':').map_or(e.as_str(), |x| x.0))
            })
        })
    };
    let mut links: Vec<LinkSpec> = raw
        .links
        .iter()
        .filter(|l| !is_node_end(&l.a) && !is_node_end(&l.b))
        .cloned()
        .collect();
    let mut host_links = 0;
    for x in &found {
        if let Some((leaf, port)) = &x.peer {
            links.push(LinkSpec {
                a: format!("{}:{}", inv.nodes[x.node].name, x.device),
                b: format!("{leaf}:{port}"),
                speed_gbps: None,
            });
            host_links += 1;
        }
    }

    let declared_max = switches.iter().filter_map(|s| s.rail).max();
    let rail_count = rails
        .iter()
        .copied()
        .chain(declared_max)
        .max()
        .map_or(1, |r| r + 1);
    let mut out = raw.clone();
    out.fabric.rails = rail_count;
    out.nodes = nodes;
    out.switches = switches;
    out.links = links;
    let body = serde_yaml::to_string(&out)
        .map_err(|e| AppError::Incomplete(format!("cannot write YAML: {e}")))?;
    let mut head = format!(
        "# Completed by `{}`:\n# {} nodes, {} NICs on {} rails, {} host links from LLDP, {} leaves added from LLDP.\n",
        escaped(command),
        inv.nodes.len(),
        found.len(),
        rail_count,
        host_links,
        new_leaves.len()
    );
    if !unverified.is_empty() {
        head.push_str(
            "# Unverified (inferred without LLDP; check before trusting a cabling audit):\n",
        );
        for u in unverified.iter().take(MAX_LISTED) {
            head.push_str(&format!("#   {}\n", escaped(u)));
        }
        if unverified.len() > MAX_LISTED {
            head.push_str(&format!(
                "#   … and {} more\n",
                unverified.len() - MAX_LISTED
            ));
        }
    }
    head.push_str(
        "# fabric (environment, RoCE profile, versions) and transport are the input's, unchanged.\n\
         # Not discovered: leaf-spine links (they need the switches' own LLDP tables) and NIC data\n\
         # addresses; add them, or write the fabric side with `rocegate inventory generate`.\n",
    );
    let unverified_count = unverified.len();
    Ok(Built {
        yaml: format!("{head}{body}"),
        nics: found.len(),
        rails: rail_count,
        links: host_links,
        unverified: unverified_count,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::discover::tests::{fake_root, run_script};
    use crate::exec::InvocationOutput;

    const SKELETON: &str = "fabric:\n  name: pod\n  environment: lab\n  rails: 1\n  roce: {pfc_priority: 3, dscp_roce: 26, dscp_cnp: 48, dcqcn: false, mtu: 4096}\n\
transport:\n  ssh: {user: root}\n\
nodes:\n  - hosts: gpu[001-002]\n    address: 10.0.0.[1-2]\n    nics: []\n";

    fn lldp(host_ifaces: &[(&str, &str, &str)]) -> String {
        let items: Vec<String> = host_ifaces
            .iter()
            .map(|(i, leaf, port)| {
                format!(
                    r#"{{"{i}": {{"via": "LLDP", "chassis": {{"{leaf}": {{"id": {{"type": "mac", "value": "02:00:00:00:00:01"}}, "descr": "Cumulus Linux version 5.9", "mgmt-ip": "198.18.0.2"}}}}, "port": {{"id": {{"type": "ifname", "value": "{port}"}}, "descr": "{port}"}}}}}}"#
                )
            })
            .collect();
        format!("{{\"lldp\": {{\"interface\": [{}]}}}}", items.join(","))
    }

    fn findings(stdout: &str, host: &str, lldp_json: Option<&str>) -> Findings {
        let mut s = stdout.to_string();
        if let Some(j) = lldp_json {
            s.push_str(&format!("@@lldp-begin\n{j}\n@@lldp-end 0\n"));
        }
        crate::exec::discover::parse(
            host,
            &InvocationOutput {
                stdout: s,
                exit: Some(0),
                ..Default::default()
            },
        )
    }

    #[test]
    fn nics_rails_leaves_and_links_from_a_fake_sysfs() {
        let dir = tempfile::tempdir().unwrap();
        fake_root(dir.path());
        let out = run_script(dir.path());
        let (raw, inv) = check::parse_partial_inventory("pod.yaml", SKELETON).unwrap();
        // gpu001 has LLDP on both NICs; gpu002 on none.
        let f1 = findings(
            &out,
            "gpu001",
            Some(&lldp(&[
                ("ens1f0np0", "leaf1", "swp1"),
                ("ens2f0np0", "leaf0", "swp1"),
            ])),
        );
        let f2 = findings(&out, "gpu002", None);
        let b = build(
            &raw,
            &inv,
            &[f1, f2],
            "rocegate inventory discover -i pod.yaml",
        )
        .unwrap();
        let y = &b.yaml;
        let inv2 = check::parse_inventory("out.yaml", y).unwrap_or_else(|e| panic!("{e}\n{y}"));
        assert_eq!(inv2.nics.len(), 4);
        // PCI order: 0000:03 (mlx5_1) is rail 0, 0000:17 (mlx5_0) rail 1.
        let nic = |n: &str, d: &str| {
            inv2.nics
                .iter()
                .find(|c| inv2.nodes[c.node].name == n && c.device == d)
                .unwrap()
        };
        assert_eq!(nic("gpu001", "mlx5_1").rail, 0);
        assert_eq!(nic("gpu001", "mlx5_0").rail, 1);
        assert_eq!(nic("gpu002", "mlx5_0").numa, Some(0));
        assert_eq!(nic("gpu002", "mlx5_0").gid_index, GidIndex::Fixed(3));
        assert_eq!(nic("gpu002", "mlx5_0").speed_gbps, 400);
        assert_eq!(inv2.links.len(), 2);
        assert!(nic("gpu001", "mlx5_0").uplink.is_some());
        assert_eq!(inv2.switches.len(), 2);
        assert!(inv2.switches.iter().all(|s| s.driver.name() == "cumulus"));
        assert_eq!(inv2.nodes[1].address, "10.0.0.2");
        // What LLDP did not confirm is listed.
        assert!(y.contains("# Unverified"), "{y}");
        assert!(
            y.contains("gpu002:mlx5_1: rail 0 from device order (no LLDP neighbour on ens2f0np0)"),
            "{y}"
        );
        assert!(!y.contains("gpu001:mlx5_1: rail"), "{y}");
        assert!(y.contains("leaf leaf1: driver cumulus inferred"), "{y}");
        assert_eq!(b.links, 2);
    }

    #[test]
    fn a_host_without_rdma_stops_everything() {
        let (raw, inv) = check::parse_partial_inventory("pod.yaml", SKELETON).unwrap();
        let bare = "@@host gpu001\n@@netdev eth1 up 1000 1500\n";
        let f1 = findings(bare, "gpu001", Some(&lldp(&[("eth1", "leaf1", "swp1")])));
        let f2 = findings(bare, "gpu002", None);
        let Err(AppError::Input(m)) = build(&raw, &inv, &[f1, f2], "x") else {
            panic!("want an input error")
        };
        assert!(m.contains("no RDMA device on gpu001"), "{m}");
        assert!(m.contains("no RDMA device on gpu002"), "{m}");
        assert!(m.contains("nothing written"), "{m}");
        let down = crate::exec::discover::parse(
            "gpu002",
            &InvocationOutput {
                exit: Some(255),
                failure: Some(crate::exec::ExecFailure::Unreachable("no route".into())),
                ..Default::default()
            },
        );
        let f1 = findings(bare, "gpu001", None);
        assert!(matches!(
            build(&raw, &inv, &[f1, down], "x"),
            Err(AppError::Incomplete(_))
        ));
    }

    #[test]
    fn port_names_and_drivers() {
        let n = |id: &str, d: Option<&str>| LldpNeighbor {
            interface: "eth1".into(),
            chassis_name: Some("leaf1".into()),
            chassis_id: None,
            chassis_descr: None,
            port_id: id.into(),
            port_descr: d.map(Into::into),
            mgmt_ip: None,
        };
        assert_eq!(port_name(&n("swp1", None)).as_deref(), Some("swp1"));
        assert_eq!(
            port_name(&n("Ethernet1/1", None)).as_deref(),
            Some("Ethernet1/1")
        );
        assert_eq!(
            port_name(&n("92:d0:32:17:f3:6d", Some("vb"))).as_deref(),
            Some("vb")
        );
        assert_eq!(port_name(&n("92:d0:32:17:f3:6d", None)), None);
        assert_eq!(port_name(&n("$(reboot)", Some("a b"))), None);
    }
}
