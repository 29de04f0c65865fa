//! Validation of the inventory: hostlists expanded, names unique, links
//! resolved, values in range. Every problem is reported with its place.

use std::collections::{HashMap, HashSet};

use sha2::{Digest, Sha256};

use super::diag::{quote, Diagnostics, Sink};
use super::hostlist;
use super::inventory::{
    Credentials, Defect, InventoryFile, SwitchDriver, SwitchRole, TransportSpec,
};
use super::model::*;

pub use super::names::{is_address, is_path_name, is_safe_name, ADDRESS_RULE, PATH_NAME_RULE};

pub fn sha256_hex(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// Reads an input file within the input limits (`inputs::read_limited`);
/// an unreadable, special or oversized file is a diagnostic, not a panic
/// or a hang.
pub fn read_source(path: &str) -> Result<String, Diagnostics> {
    crate::inputs::max_input_bytes()
        .and_then(|limit| crate::inputs::read_limited_reason(path, limit))
        .map_err(|message| {
            Diagnostics(vec![super::diag::Diagnostic {
                file: path.to_string(),
                line: None,
                column: None,
                path: String::new(),
                message,
            }])
        })
}

pub fn load_inventory(path: &str) -> Result<Inventory, Diagnostics> {
    let text = read_source(path)?;
    parse_inventory(path, &text)
}

pub fn parse_inventory(path: &str, text: &str) -> Result<Inventory, Diagnostics> {
    let raw: InventoryFile = super::yaml_guard::from_str(path, text)?;
    let mut sink = Sink::new(path, text);
    let inv = check_inventory(raw, text, &mut sink);
    if sink.is_empty() {
        Ok(inv)
    } else {
        Err(Diagnostics(sink.found))
    }
}

/// The device name a NIC-less node group is checked with by
/// [`parse_partial_inventory`]; never written anywhere.
pub const PENDING_NIC: &str = "rocegate-pending";

/// Checks an inventory whose node groups may still lack NICs (a skeleton
/// from `inventory import`): everything else is checked as usual, so
/// `inventory discover` reaches the same hosts, at the same addresses, with
/// the same ssh settings as `run` would. Returns the file as written too.
pub fn parse_partial_inventory(
    path: &str,
    text: &str,
) -> Result<(InventoryFile, Inventory), Diagnostics> {
    let raw: InventoryFile = super::yaml_guard::from_str(path, text)?;
    let mut patched = raw.clone();
    for g in &mut patched.nodes {
        if g.nics.is_empty() {
            g.nics.push(super::inventory::NicSpec {
                device: PENDING_NIC.into(),
                netdev: PENDING_NIC.into(),
                port: None,
                gid_index: super::inventory::GidIndex::Discover,
                numa: None,
                gpu: None,
                rail: 0,
                speed_gbps: 1,
                address: None,
            });
        }
    }
    let mut sink = Sink::new(path, text);
    let inv = check_inventory(patched, text, &mut sink);
    if sink.is_empty() {
        Ok((raw, inv))
    } else {
        Err(Diagnostics(sink.found))
    }
}

/// Expands an address written for a group: a `{host}`/`{name}` template, a
/// hostlist zipped with the names, or a literal (only for one name, unless
/// `shared`: switches reached through their controller, whose address it
/// is).
fn expand_addresses(
    spec: Option<&str>,
    names: &[String],
    placeholder: &str,
    shared: bool,
) -> Result<Vec<String>, String> {
    let Some(spec) = spec else {
        return Ok(names.to_vec());
    };
    if spec.contains(placeholder) {
        return Ok(names.iter().map(|n| spec.replace(placeholder, n)).collect());
    }
    let list = hostlist::expand(spec).map_err(|e| e.to_string())?;
    if list.len() == names.len() {
        Ok(list)
    } else if list.len() == 1 && shared {
        Ok(vec![list[0].clone(); names.len()])
    } else if list.len() == 1 {
        Err(format!(
            "one address \"{spec}\" for {} names; use a template such as \"{placeholder}.mgmt\" or a hostlist with one address per name",
            names.len()
        ))
    } else {
        Err(format!(
            "\"{spec}\" expands to {} addresses for {} names",
            list.len(),
            names.len()
        ))
    }
}

/// A NIC's data address from its template (`{host}`, `{rail}`, `{index}`
/// counted from 1, `{nic}`) or literal.
fn nic_address(template: &str, host: &str, rail: u32, host_index: usize, nic: usize) -> String {
    template
        .replace("{host}", host)
        .replace("{rail}", &rail.to_string())
        .replace("{index}", &(host_index + 1).to_string())
        .replace("{nic}", &nic.to_string())
}

/// The first of `names` that may not become a path, said with the rule and
/// how many more there are; `None` when all pass.
fn bad_names(names: &[String], what: &str) -> Option<String> {
    let (first, more) = first_and_more(names.iter().filter(|n| !is_path_name(n)))?;
    Some(format!(
        "{what} name {} is not a valid name ({PATH_NAME_RULE}){more}",
        quote(first)
    ))
}

/// The first item, and ` (and N more)` for the rest (empty when none).
fn first_and_more<T>(mut items: impl Iterator<Item = T>) -> Option<(T, String)> {
    let first = items.next()?;
    let more = match items.count() {
        0 => String::new(),
        n => format!(" (and {n} more)"),
    };
    Some((first, more))
}

/// The first address (of `owners[i]`, a node or switch) that is neither an
/// IP address nor a DNS name, with the rule; `None` when all pass.
fn bad_addresses(owners: &[String], addresses: &[String], what: &str) -> Option<String> {
    let ((owner, first), more) =
        first_and_more(owners.iter().zip(addresses).filter(|(_, a)| !is_address(a)))?;
    Some(format!(
        "{what} {owner}: address {} is not an IP address or DNS name ({ADDRESS_RULE}){more}",
        quote(first)
    ))
}

/// A jump host as `ssh -J` takes it: `[user@]host[:port]`, comma-separated.
fn check_jump(jump: &str) -> Result<(), String> {
    for hop in jump.split(',') {
        let (user, rest) = match hop.rsplit_once('@') {
            Some((u, r)) => (Some(u), r),
            None => (None, hop),
        };
        let (host, port) = match rest.rsplit_once(':') {
            Some((h, p)) if !h.contains(':') => (h, Some(p)),
            _ => (rest, None),
        };
        let ok = user.is_none_or(is_safe_name)
            && is_address(host)
            && port.is_none_or(|p| p.parse::<u16>().is_ok_and(|n| n > 0));
        if !ok {
            return Err(format!(
                "{} is not a jump host (write [user@]host[:port], several separated by commas; host is {ADDRESS_RULE})",
                quote(hop)
            ));
        }
    }
    Ok(())
}

fn check_inventory(raw: InventoryFile, text: &str, sink: &mut Sink) -> Inventory {
    let f = &raw.fabric;
    if !is_path_name(&f.name) {
        sink.error(
            "fabric.name",
            format!("{} is not a valid name ({PATH_NAME_RULE})", quote(&f.name)),
        );
    }
    if f.rails == 0 || f.rails > 64 {
        sink.error(
            "fabric.rails",
            format!("{} rails is impossible (1-64)", f.rails),
        );
    }
    let r = &f.roce;
    if r.pfc_priority > 7 {
        sink.error(
            "fabric.roce.pfc_priority",
            format!("priority {} is out of range (0-7)", r.pfc_priority),
        );
    }
    if r.cnp_priority > 7 {
        sink.error(
            "fabric.roce.cnp_priority",
            format!("priority {} is out of range (0-7)", r.cnp_priority),
        );
    } else if r.cnp_priority == r.pfc_priority {
        sink.error(
            "fabric.roce.cnp_priority",
            "CNPs must not share the lossless RoCE priority (commonly RoCE 3, CNP 6)",
        );
    }
    for (key, v) in [("dscp_roce", r.dscp_roce), ("dscp_cnp", r.dscp_cnp)] {
        if v > 63 {
            sink.error(
                format!("fabric.roce.{key}"),
                format!("DSCP {v} is out of range (0-63)"),
            );
        }
    }
    if r.dscp_roce == r.dscp_cnp {
        sink.error(
            "fabric.roce.dscp_cnp",
            "must differ from dscp_roce (commonly 26 and 48)",
        );
    }
    if ![256, 512, 1024, 2048, 4096].contains(&r.mtu) {
        sink.error(
            "fabric.roce.mtu",
            format!("{} is not a RoCE MTU (256, 512, 1024, 2048 or 4096)", r.mtu),
        );
    }
    match r.ecn {
        Some(e) if e.min_kb == 0 || e.min_kb >= e.max_kb => sink.error(
            "fabric.roce.ecn",
            format!(
                "min_kb {} must be above 0 and below max_kb {}",
                e.min_kb, e.max_kb
            ),
        ),
        None if r.dcqcn => sink.error(
            "fabric.roce",
            "dcqcn is true but ecn thresholds are missing (add ecn: {min_kb: 150, max_kb: 1500})",
        ),
        _ => {}
    }

    if let TransportSpec::Slurm(sl) = &raw.transport {
        for (key, v) in [("partition", &sl.partition), ("account", &sl.account)] {
            if let Some(v) = v {
                if !is_safe_name(v) {
                    sink.error(
                        format!("transport.slurm.{key}"),
                        format!("{} is not a Slurm {key} name", quote(v)),
                    );
                }
            }
        }
        for (key, v) in [
            ("agent_dir", Some(&sl.agent_dir)),
            ("agent", sl.agent.as_ref()),
            ("conf", sl.conf.as_ref()),
        ] {
            if let Some(v) = v {
                if !v.starts_with('/') || v.contains(char::is_whitespace) || v.contains("..") {
                    sink.error(
                        format!("transport.slurm.{key}"),
                        format!("{} must be an absolute path without spaces or ..", quote(v)),
                    );
                }
            }
        }
    }
    let ssh_key = match &raw.transport {
        TransportSpec::Slurm(_) => "transport.slurm.ssh",
        _ => "transport.ssh",
    };
    if let Some(ssh) = raw.transport.ssh() {
        if let Some(u) = &ssh.user {
            if !is_safe_name(u) {
                sink.error(
                    format!("{ssh_key}.user"),
                    format!("{} is not a valid user name", quote(u)),
                );
            }
        }
        if let Some(j) = &ssh.jump {
            if let Err(e) = check_jump(j) {
                sink.error(format!("{ssh_key}.jump"), e);
            }
        }
        if ssh.parallelism == 0 {
            sink.error(format!("{ssh_key}.parallelism"), "must be at least 1");
        }
        if ssh.per_host == 0 {
            sink.error(format!("{ssh_key}.per_host"), "must be at least 1");
        }
        for (i, o) in ssh.options.iter().enumerate() {
            if let Some(name) = super::names::ssh_command_option(o) {
                if !ssh.allow_ssh_commands {
                    sink.error(
                        format!("{ssh_key}.options[{i}]"),
                        format!(
                            "{} makes ssh run a local command or load local code ({name}); refused so that an inventory cannot become code by accident (set allow_ssh_commands: true under {ssh_key} if it is meant; for a jump host use jump:)",
                            quote(o)
                        ),
                    );
                    continue;
                }
            }
            // One word: nccl's launcher joins the options into one string.
            if !o.contains('=') || o.contains(char::is_whitespace) {
                sink.error(
                    format!("{ssh_key}.options[{i}]"),
                    format!(
                        "{} is not an ssh option (write Name=value, no spaces)",
                        quote(o)
                    ),
                );
            }
        }
    }

    // Nodes.
    let mut names_seen: HashMap<String, String> = HashMap::new();
    let mut nodes = Vec::new();
    let mut nics = Vec::new();
    for (gi, group) in raw.nodes.iter().enumerate() {
        let base = format!("nodes[{gi}]");
        let hosts = match hostlist::expand(&group.hosts) {
            Ok(h) => h,
            Err(e) => {
                sink.error(format!("{base}.hosts"), e.to_string());
                continue;
            }
        };
        if let Some(msg) = bad_names(&hosts, "node") {
            sink.error(format!("{base}.hosts"), msg);
            continue;
        }
        let addresses = match expand_addresses(group.address.as_deref(), &hosts, "{host}", false) {
            Ok(a) => {
                if let Some(msg) = bad_addresses(&hosts, &a, "node") {
                    sink.error(format!("{base}.address"), msg);
                }
                a
            }
            Err(e) => {
                sink.error(format!("{base}.address"), e);
                hosts.clone()
            }
        };
        if group.nics.is_empty() {
            sink.error(format!("{base}.nics"), "a node needs at least one RDMA NIC");
        }
        let mut devices = HashSet::new();
        for (ni, nic) in group.nics.iter().enumerate() {
            let p = format!("{base}.nics[{ni}]");
            if !is_safe_name(&nic.device) {
                sink.error(
                    format!("{p}.device"),
                    format!("\"{}\" is not a valid device name", nic.device),
                );
            }
            if !is_safe_name(&nic.netdev) {
                sink.error(
                    format!("{p}.netdev"),
                    format!("\"{}\" is not a valid netdev name", nic.netdev),
                );
            }
            if !devices.insert(nic.device.clone()) {
                sink.error(
                    format!("{p}.device"),
                    format!("device {} appears twice in this node group", nic.device),
                );
            }
            if f.rails > 0 && nic.rail >= f.rails {
                sink.error(
                    format!("{p}.rail"),
                    format!(
                        "rail {} is not declared by the fabric (rails are 0-{})",
                        nic.rail,
                        f.rails.saturating_sub(1)
                    ),
                );
            }
            if nic.speed_gbps == 0 || nic.speed_gbps > 1600 {
                sink.error(
                    format!("{p}.speed_gbps"),
                    format!("{} Gb/s is not a NIC speed (1-1600)", nic.speed_gbps),
                );
            }
            if let Some(0) = nic.port {
                sink.error(format!("{p}.port"), "RDMA ports are numbered from 1");
            }
            if let Some(t) = &nic.address {
                let expanded: Vec<String> = hosts
                    .iter()
                    .enumerate()
                    .map(|(hi, host)| nic_address(t, host, nic.rail, hi, ni))
                    .collect();
                if let Some(msg) = bad_addresses(&hosts, &expanded, "node") {
                    sink.error(format!("{p}.address"), format!("{}: {msg}", nic.device));
                }
            }
        }
        for (hi, host) in hosts.iter().enumerate() {
            if let Some(prev) = names_seen.insert(host.clone(), base.clone()) {
                sink.error(
                    format!("{base}.hosts"),
                    format!("node {host} is already defined in {prev}"),
                );
                continue;
            }
            let node_id = nodes.len();
            let mut ids = Vec::new();
            for (ri, nic) in group.nics.iter().enumerate() {
                let address = nic
                    .address
                    .as_ref()
                    .map(|t| nic_address(t, host, nic.rail, hi, ri));
                ids.push(nics.len());
                nics.push(Nic {
                    node: node_id,
                    device: nic.device.clone(),
                    netdev: nic.netdev.clone(),
                    port: nic.port.unwrap_or(1),
                    gid_index: nic.gid_index,
                    numa: nic.numa,
                    gpu: nic.gpu,
                    rail: nic.rail,
                    speed_gbps: nic.speed_gbps,
                    address,
                    uplink: None,
                });
            }
            nodes.push(Node {
                name: host.clone(),
                address: addresses.get(hi).cloned().unwrap_or_else(|| host.clone()),
                nics: ids,
            });
        }
    }
    if raw.nodes.is_empty() {
        sink.error("nodes", "the inventory has no nodes");
    }

    // Switches.
    let mut switches = Vec::new();
    for (si, group) in raw.switches.iter().enumerate() {
        let base = format!("switches[{si}]");
        let names = match hostlist::expand(&group.name) {
            Ok(n) => n,
            Err(e) => {
                sink.error(format!("{base}.name"), e.to_string());
                continue;
            }
        };
        if let Some(msg) = bad_names(&names, "switch") {
            sink.error(format!("{base}.name"), msg);
            continue;
        }
        let addresses = match expand_addresses(
            group.address.as_deref(),
            &names,
            "{name}",
            group.driver.through_controller(),
        ) {
            Ok(a) => {
                if let Some(msg) = bad_addresses(&names, &a, "switch") {
                    sink.error(format!("{base}.address"), msg);
                }
                a
            }
            Err(e) => {
                sink.error(format!("{base}.address"), e);
                names.clone()
            }
        };
        if let Some(rail) = group.rail {
            if group.role != SwitchRole::Leaf {
                sink.error(format!("{base}.rail"), "only leaves serve a rail");
            } else if f.rails > 0 && rail >= f.rails {
                sink.error(
                    format!("{base}.rail"),
                    format!(
                        "rail {rail} is not declared by the fabric (rails are 0-{})",
                        f.rails.saturating_sub(1)
                    ),
                );
            }
        }
        if let Some(Credentials::Env(var)) = &group.credentials {
            if var.is_empty() || !var.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                sink.error(
                    format!("{base}.credentials.env"),
                    format!("\"{var}\" is not an environment variable name"),
                );
            }
        }
        if let Some(api) = &group.api {
            if !group.driver.over_https() {
                sink.error(
                    format!("{base}.api"),
                    format!(
                        "a {} switch is reached by command lines over ssh, not an HTTPS API: remove api (it is for eos, nxos and aci)",
                        group.driver.name()
                    ),
                );
            }
            if group.driver == SwitchDriver::Aci && api.node.is_none() {
                sink.error(
                    format!("{base}.api.node"),
                    "an aci switch is reached through its APIC (address): give its node id (api: {node: 101, pod: 1})".to_string(),
                );
            }
            if api.user.is_empty() || !crate::config::names::is_safe_name(&api.user) {
                sink.error(
                    format!("{base}.api.user"),
                    format!("\"{}\" is not a user name", api.user),
                );
            }
            if group.credentials.is_none() {
                sink.error(
                    format!("{base}.credentials"),
                    "an API needs a password: credentials: {env: VAR} or {file: PATH} (a reference, never the secret)".to_string(),
                );
            }
            if api.max_in_flight == Some(0) {
                sink.error(
                    format!("{base}.api.max_in_flight"),
                    "must be at least 1".to_string(),
                );
            }
        }
        for (i, name) in names.iter().enumerate() {
            if let Some(prev) = names_seen.insert(name.clone(), base.clone()) {
                sink.error(
                    format!("{base}.name"),
                    format!("{name} is already defined in {prev}"),
                );
                continue;
            }
            switches.push(Switch {
                name: name.clone(),
                role: group.role,
                driver: group.driver,
                address: addresses.get(i).cloned().unwrap_or_else(|| name.clone()),
                credentials: group.credentials.clone(),
                // ACI: the group's first switch has `node`, the next ones
                // the ids after it, in the order the names expand.
                api: group.api.clone().map(|mut a| {
                    a.node = a.node.map(|n| n + i as u32);
                    a
                }),
                rail: group.rail,
                links: Vec::new(),
            });
        }
    }
    let node_by_name: HashMap<String, NodeId> = nodes
        .iter()
        .enumerate()
        .map(|(i, n)| (n.name.clone(), i))
        .collect();
    let switch_by_name: HashMap<String, SwitchId> = switches
        .iter()
        .enumerate()
        .map(|(i, s)| (s.name.clone(), i))
        .collect();

    let mut inv = Inventory {
        source: SourceFile {
            path: sink.file().to_string(),
            sha256: sha256_hex(text.as_bytes()),
        },
        fabric: raw.fabric.clone(),
        transport: raw.transport.clone(),
        nodes,
        nics,
        switches,
        links: Vec::new(),
        defects: raw
            .emulation
            .as_ref()
            .map(|e| e.defects.clone())
            .unwrap_or_default(),
        node_by_name,
        switch_by_name,
    };
    check_links(&raw, &mut inv, sink);
    check_defects(&inv, sink);
    inv
}

fn node_list(inv: &Inventory) -> String {
    let names: Vec<String> = inv.nodes.iter().map(|n| n.name.clone()).collect();
    if names.is_empty() {
        return "none valid; see the errors above".into();
    }
    hostlist::compress(&names)
}

/// Resolves one link end, or says precisely why it does not resolve.
fn resolve(inv: &Inventory, text: &str) -> Result<End, String> {
    let Some((left, right)) = text.split_once(':') else {
        return Err(format!("\"{text}\" must be node:device or switch:port"));
    };
    if let Some(&node) = inv.node_by_name.get(left) {
        let devices: Vec<&str> = inv.nodes[node]
            .nics
            .iter()
            .map(|&n| inv.nics[n].device.as_str())
            .collect();
        return inv.nodes[node]
            .nics
            .iter()
            .find(|&&n| inv.nics[n].device == right)
            .map(|&n| End::Nic(n))
            .ok_or_else(|| {
                format!(
                    "node {left} has no NIC {right} (it has {})",
                    devices.join(", ")
                )
            });
    }
    if let Some(&switch) = inv.switch_by_name.get(left) {
        if !is_safe_name(right) {
            return Err(format!("\"{right}\" is not a valid port name"));
        }
        return Ok(End::Port {
            switch,
            port: right.to_string(),
        });
    }
    Err(format!(
        "\"{left}\" is neither a node nor a switch of the inventory (nodes are {})",
        node_list(inv)
    ))
}

fn check_links(raw: &InventoryFile, inv: &mut Inventory, sink: &mut Sink) {
    let mut used: HashMap<End, String> = HashMap::new();
    for (li, spec) in raw.links.iter().enumerate() {
        let base = format!("links[{li}]");
        let a_list = hostlist::expand(&spec.a);
        let b_list = hostlist::expand(&spec.b);
        let (a_list, b_list) = match (a_list, b_list) {
            (Ok(a), Ok(b)) => (a, b),
            (Err(e), _) => {
                sink.error(format!("{base}.a"), e.to_string());
                continue;
            }
            (_, Err(e)) => {
                sink.error(format!("{base}.b"), e.to_string());
                continue;
            }
        };
        if a_list.len() != b_list.len() {
            sink.error(
                base.clone(),
                format!(
                    "a expands to {} ends but b to {}; both sides must match one to one",
                    a_list.len(),
                    b_list.len()
                ),
            );
            continue;
        }
        for (a_text, b_text) in a_list.iter().zip(&b_list) {
            let a = resolve(inv, a_text);
            let b = resolve(inv, b_text);
            let (a, b) = match (a, b) {
                (Ok(a), Ok(b)) => (a, b),
                (Err(e), _) => {
                    sink.error(format!("{base}.a"), e);
                    continue;
                }
                (_, Err(e)) => {
                    sink.error(format!("{base}.b"), e);
                    continue;
                }
            };
            let mut bad = false;
            for (end, key) in [(&a, "a"), (&b, "b")] {
                if let Some(prev) = used.insert(end.clone(), base.clone()) {
                    sink.error(
                        format!("{base}.{key}"),
                        format!("{} is already cabled in {prev}", inv.end_name(end)),
                    );
                    bad = true;
                }
            }
            if bad {
                continue;
            }
            let (kind, speed) = match (&a, &b) {
                (End::Nic(_), End::Nic(_)) => {
                    sink.error(
                        base.clone(),
                        format!(
                            "{a_text} and {b_text} are both NICs; a NIC connects to a switch port"
                        ),
                    );
                    continue;
                }
                (End::Nic(n), End::Port { switch, .. })
                | (End::Port { switch, .. }, End::Nic(n)) => {
                    if inv.switches[*switch].role != SwitchRole::Leaf {
                        sink.error(
                            base.clone(),
                            format!(
                                "{} connects a NIC to spine {}; NICs connect to leaves",
                                inv.nic_name(*n),
                                inv.switches[*switch].name
                            ),
                        );
                    }
                    (
                        LinkKind::Host,
                        spec.speed_gbps.unwrap_or(inv.nics[*n].speed_gbps),
                    )
                }
                (End::Port { switch: s1, .. }, End::Port { switch: s2, .. }) => {
                    if s1 == s2 {
                        sink.error(
                            base.clone(),
                            format!("{a_text} and {b_text} are on the same switch"),
                        );
                        continue;
                    }
                    let roles = (inv.switches[*s1].role, inv.switches[*s2].role);
                    let kind = if roles.0 != roles.1 {
                        LinkKind::Fabric
                    } else {
                        LinkKind::Other
                    };
                    let Some(speed) = spec.speed_gbps else {
                        sink.error(
                            base.clone(),
                            "speed_gbps is required for switch-to-switch links",
                        );
                        continue;
                    };
                    (kind, speed)
                }
            };
            if speed == 0 || speed > 1600 {
                sink.error(
                    format!("{base}.speed_gbps"),
                    format!("{speed} Gb/s is not a link speed (1-1600)"),
                );
            }
            // Keep fabric links oriented leaf → spine, so readers can rely on it.
            let (a, b) = match (&a, &b) {
                (End::Port { switch, .. }, End::Port { .. })
                    if kind == LinkKind::Fabric
                        && inv.switches[*switch].role == SwitchRole::Spine =>
                {
                    (b, a)
                }
                (End::Port { .. }, End::Nic(_)) => (b, a),
                _ => (a, b),
            };
            let id = inv.links.len();
            for end in [&a, &b] {
                match end {
                    End::Nic(n) => inv.nics[*n].uplink = Some(id),
                    End::Port { switch, .. } => inv.switches[*switch].links.push(id),
                }
            }
            inv.links.push(Link {
                a,
                b,
                speed_gbps: speed,
                kind,
            });
        }
    }
    // A leaf that declares a rail should only carry NICs of that rail.
    for (id, link) in inv.links.iter().enumerate() {
        if let (End::Nic(n), End::Port { switch, .. }) = (&link.a, &link.b) {
            if let Some(rail) = inv.switches[*switch].rail {
                if inv.nics[*n].rail != rail {
                    let li = raw_link_index(raw, inv, id);
                    sink.error(
                        li,
                        format!(
                            "{} is on rail {} but leaf {} serves rail {rail}",
                            inv.nic_name(*n),
                            inv.nics[*n].rail,
                            inv.switches[*switch].name
                        ),
                    );
                }
            }
        }
    }
}

/// Finds which `links[i]` entry produced link `id`, for error paths.
fn raw_link_index(raw: &InventoryFile, inv: &Inventory, id: LinkId) -> String {
    let name_a = inv.end_name(&inv.links[id].a);
    let name_b = inv.end_name(&inv.links[id].b);
    for (i, spec) in raw.links.iter().enumerate() {
        let a = hostlist::expand(&spec.a).unwrap_or_default();
        let b = hostlist::expand(&spec.b).unwrap_or_default();
        if a.iter().chain(&b).any(|t| *t == name_a || *t == name_b) {
            return format!("links[{i}]");
        }
    }
    "links".into()
}

fn check_defects(inv: &Inventory, sink: &mut Sink) {
    let nic_ok = |s: &str| matches!(inv.resolve_end(s), Some(End::Nic(_)));
    let node_ok = |s: &str| inv.node_by_name.contains_key(s);
    let switch_ok = |s: &str| inv.switch_by_name.contains_key(s);
    for (i, d) in inv.defects.iter().enumerate() {
        let p = format!("emulation.defects[{i}]");
        let problem = match d {
            Defect::NicSpeed { nic, gbps } => (!nic_ok(nic))
                .then(|| format!("nic {nic} is not in the inventory (write node:device)"))
                .or_else(|| (*gbps == 0).then(|| "gbps must be above 0".to_string())),
            Defect::BadCable { link, ber } => (inv
                .resolve_end(link)
                .and_then(|e| inv.link_at(&e))
                .is_none())
            .then(|| format!("no cable has an end at {link}"))
            .or_else(|| {
                (!(*ber > 0.0 && *ber < 1.0))
                    .then(|| format!("ber {ber} must be between 0 and 1 (e.g. 1e-6)"))
            }),
            Defect::SlowNode { node, factor } => (!node_ok(node))
                .then(|| format!("node {node} is not in the inventory"))
                .or_else(|| {
                    (!(*factor > 0.0 && *factor < 1.0))
                        .then(|| format!("factor {factor} must be between 0 and 1"))
                }),
            Defect::UplinkDown { port } => {
                match inv.resolve_end(port).and_then(|e| inv.link_at(&e)) {
                    Some(l) if inv.links[l].kind == LinkKind::Fabric => None,
                    Some(_) => Some(format!("{port} is not a leaf–spine uplink")),
                    None => Some(format!("no cable has an end at {port}")),
                }
            }
            Defect::SwappedCables { a, b } => (!nic_ok(a) || !nic_ok(b) || a == b)
                .then(|| format!("{a} and {b} must be two different NICs of the inventory")),
            Defect::PfcOff { switch } => {
                (!switch_ok(switch)).then(|| format!("switch {switch} is not in the inventory"))
            }
            Defect::EcnThresholds {
                switch,
                min_kb,
                max_kb,
            } => (!switch_ok(switch))
                .then(|| format!("switch {switch} is not in the inventory"))
                .or_else(|| {
                    (min_kb >= max_kb)
                        .then(|| format!("min_kb {min_kb} must be below max_kb {max_kb}"))
                }),
            Defect::Firmware { node, .. } => {
                (!node_ok(node)).then(|| format!("node {node} is not in the inventory"))
            }
            Defect::ExtraPfc { nic, priorities } => (!nic_ok(nic))
                .then(|| format!("nic {nic} is not in the inventory (write node:device)"))
                .or_else(|| {
                    priorities
                        .iter()
                        .any(|p| *p > 7)
                        .then(|| "priorities are 0-7".to_string())
                }),
            Defect::WeakLane { end, lane, rx_dbm } => (inv
                .resolve_end(end)
                .and_then(|e| inv.link_at(&e))
                .is_none())
            .then(|| format!("no cable has an end at {end} (write node:device or switch:port)"))
            .or_else(|| {
                // The emulated modules are 400G-SR4: four lit lanes.
                (!(1..=4).contains(lane)).then(|| format!("lane {lane} must be 1-4"))
            })
            .or_else(|| {
                (!(-40.0..=10.0).contains(rx_dbm))
                    .then(|| format!("rx_dbm {rx_dbm} must be between -40 and 10 (dBm)"))
            }),
        };
        if let Some(msg) = problem {
            sink.error(p, msg);
        }
    }
}
