//! Inventories from what operators already keep: an Ansible inventory
//! (`ansible`) or Slurm's view of its nodes (`slurm`), turned into the
//! hosts of an inventory skeleton. Hosts only: NICs, rails and links come
//! from `rocegate inventory discover`, which asks the hosts themselves.
//!
//! Pure parsers and a writer. Running `ansible-inventory` is the app's job;
//! nothing here starts a process or touches a machine.

pub mod ansible;
pub mod slurm;

use super::diag::{escaped, quote};
use super::hostlist;
use super::inventory::{
    BlastRadius, Environment, FabricSpec, InventoryFile, NodeGroup, RoceProfile, SshSpec,
    TransportSpec, Versions,
};
use super::names::{is_address, is_path_name, ADDRESS_RULE, PATH_NAME_RULE};
use super::units::Span;

/// How rocegate reaches one host over ssh, as the source says it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HostSsh {
    pub user: Option<String>,
    pub port: Option<u16>,
    pub key: Option<String>,
    pub jump: Option<String>,
    /// `Name=value` options for `ssh -o`.
    pub options: Vec<String>,
}

/// One host as an operator's source names it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ImportedHost {
    pub name: String,
    /// Management address when it is not the name itself.
    pub address: Option<String>,
    pub ssh: HostSsh,
}

/// What a source yielded: its hosts, and sentences for the skeleton's
/// header (what was left out and why).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Imported {
    pub hosts: Vec<ImportedHost>,
    pub notes: Vec<String>,
}

/// Node groups for hosts with their management addresses: consecutive
/// hosts whose names and addresses both count up together share one group
/// (`gpu[001-004]` at `10.0.0.[1-4]`); hosts reached at their own name
/// share a group without an address. Every group is checked by expanding
/// it back, so what is written means exactly these hosts at these
/// addresses; a host that fits no run gets a group of its own.
pub fn node_groups(hosts: &[(String, String)]) -> Vec<NodeGroup> {
    let mut groups = Vec::new();
    let mut start = 0;
    while start < hosts.len() {
        let mut end = start + 1;
        while end < hosts.len() && continues(&hosts[end - 1], &hosts[end]) {
            end += 1;
        }
        let run = &hosts[start..end];
        match group_of(run) {
            Some(g) => groups.push(g),
            None => {
                for h in run {
                    groups.push(
                        group_of(std::slice::from_ref(h)).unwrap_or_else(|| NodeGroup {
                            hosts: h.0.clone(),
                            address: (h.1 != h.0).then(|| h.1.clone()),
                            nics: Vec::new(),
                        }),
                    );
                }
            }
        }
        start = end;
    }
    groups
}

/// Splits `gpu017` into `("gpu", 17, 3)`.
fn numbered(s: &str) -> Option<(&str, u64, usize)> {
    let digits = s.bytes().rev().take_while(u8::is_ascii_digit).count();
    if digits == 0 || digits > 18 {
        return None;
    }
    let (prefix, num) = s.split_at(s.len() - digits);
    Some((prefix, num.parse().ok()?, digits))
}

fn next_of(a: &str, b: &str) -> bool {
    match (numbered(a), numbered(b)) {
        (Some((pa, na, wa)), Some((pb, nb, wb))) => pa == pb && wa == wb && nb == na + 1,
        _ => false,
    }
}

fn continues(prev: &(String, String), next: &(String, String)) -> bool {
    let by_name = prev.0 == prev.1 && next.0 == next.1;
    next_of(&prev.0, &next.0) && (by_name || next_of(&prev.1, &next.1))
}

/// One group for `run`, if its expressions expand back to exactly it.
fn group_of(run: &[(String, String)]) -> Option<NodeGroup> {
    let names: Vec<String> = run.iter().map(|h| h.0.clone()).collect();
    let addrs: Vec<String> = run.iter().map(|h| h.1.clone()).collect();
    let hosts = hostlist::compress(&names);
    if hostlist::expand(&hosts).ok()? != names {
        return None;
    }
    let address = if names == addrs {
        None
    } else {
        let a = hostlist::compress(&addrs);
        if hostlist::expand(&a).ok()? != addrs {
            return None;
        }
        Some(a)
    };
    Some(NodeGroup {
        hosts,
        address,
        nics: Vec::new(),
    })
}

/// The ssh settings every host shares, or which hosts disagree: rocegate's
/// ssh transport has one user, port, key, jump host and option list for
/// the whole inventory.
fn common_ssh(file: &str, hosts: &[ImportedHost]) -> Result<HostSsh, String> {
    let first = &hosts[0];
    type Show = fn(&HostSsh) -> String;
    let fields: [(&str, Show); 5] = [
        ("ansible_user", |s| or_none_s(&s.user)),
        ("ansible_port", |s| s.port.unwrap_or(22).to_string()),
        ("ansible_ssh_private_key_file", |s| or_none_s(&s.key)),
        ("the jump host", |s| or_none_s(&s.jump)),
        ("the ssh options", |s| format!("[{}]", s.options.join(" "))),
    ];
    for h in &hosts[1..] {
        for (what, show) in &fields {
            let (a, b) = (show(&first.ssh), show(&h.ssh));
            if a != b {
                return Err(format!(
                    "{file}: {what} differs between hosts: {} has {a}, {} has {b}; rocegate's ssh transport uses one user, port, key and option list for every node: import one group at a time with --group, or make them agree (a Host block in ~/.ssh/config can carry per-host settings)",
                    first.name, h.name
                ));
            }
        }
    }
    Ok(first.ssh.clone())
}

fn or_none_s(v: &Option<String>) -> String {
    v.as_deref().map_or_else(|| "none".to_string(), quote)
}

/// Names and addresses that cannot be used, each with its host.
fn check_hosts(file: &str, hosts: &[ImportedHost]) -> Result<(), String> {
    let mut bad = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for h in hosts {
        if !is_path_name(&h.name) {
            bad.push(format!(
                "host {} cannot be a node name ({PATH_NAME_RULE}); give it such a name and put the address in ansible_host",
                quote(&h.name)
            ));
        } else if !seen.insert(h.name.as_str()) {
            bad.push(format!("host {} is listed twice", h.name));
        }
        if let Some(a) = &h.address {
            if !is_address(a) {
                bad.push(format!(
                    "host {}: address {} is not an IP address or DNS name ({ADDRESS_RULE})",
                    quote(&h.name),
                    quote(a)
                ));
            }
        }
        if bad.len() >= 10 {
            bad.push("(stopped after 10 problems)".into());
            break;
        }
    }
    if bad.is_empty() {
        Ok(())
    } else {
        Err(format!("{file}: {}", bad.join("; ")))
    }
}

/// The skeleton as commented YAML: fabric defaults to check, the ssh
/// transport, every host as a node with no NICs yet. `file` names the
/// source in messages; `command` is the command line that made it, for the
/// header. Refuses (with the file and the hosts named) anything that
/// would not load, so what it returns differs from a valid inventory only
/// by its missing NICs.
pub fn skeleton(
    file: &str,
    name: &str,
    command: &str,
    imported: &Imported,
) -> Result<String, String> {
    if imported.hosts.is_empty() {
        return Err(format!("{file}: no hosts to import"));
    }
    if !is_path_name(name) {
        return Err(format!(
            "--name {}: not a valid fabric name ({PATH_NAME_RULE})",
            quote(name)
        ));
    }
    check_hosts(file, &imported.hosts)?;
    let ssh = common_ssh(file, &imported.hosts)?;
    let pairs: Vec<(String, String)> = imported
        .hosts
        .iter()
        .map(|h| {
            (
                h.name.clone(),
                h.address.clone().unwrap_or_else(|| h.name.clone()),
            )
        })
        .collect();
    let inv = InventoryFile {
        fabric: FabricSpec {
            name: name.to_string(),
            environment: Environment::Production,
            rails: 1,
            roce: RoceProfile::nvidia_default(4096),
            versions: Versions::default(),
            blast_radius: BlastRadius::default(),
        },
        transport: TransportSpec::Ssh(SshSpec {
            user: ssh.user,
            port: ssh.port.unwrap_or(22),
            key: ssh.key,
            jump: ssh.jump,
            options: ssh.options,
            parallelism: 64,
            per_host: 8,
            connect_timeout: Span::from_secs(10),
            control_master: true,
            allow_ssh_commands: false,
        }),
        nodes: node_groups(&pairs),
        switches: Vec::new(),
        links: Vec::new(),
        emulation: None,
    };
    let body = serde_yaml::to_string(&inv).map_err(|e| format!("cannot write YAML: {e}"))?;
    let mut head = format!(
        "# Inventory skeleton written by `{}`:\n\
         # {} hosts. It does not validate yet; what is missing:\n\
         #   - every node's NICs (nics: []), rails, switches and links: run\n\
         #       rocegate inventory discover -i THIS-FILE -o pod.yaml\n\
         #     which reads them from each host over ssh (RDMA devices, GID tables, LLDP).\n\
         #   - fabric.environment is production (disruptive faults need --allow-disruptive):\n\
         #     set lab or staging if that is what this pod is.\n\
         #   - fabric.roce is NVIDIA's lossless default (PFC 3, DSCP 26/48, ECN 150-1500 KB,\n\
         #     MTU 4096): set it to this pod's design.\n",
        escaped(command),
        imported.hosts.len()
    );
    // Notes carry names from the source (variable names, states): escaped,
    // so a newline in one cannot end the comment and become YAML.
    for n in &imported.notes {
        head.push_str(&format!("# note: {}\n", escaped(n)));
    }
    let yaml = format!("{head}{body}");
    still_loads(file, &yaml)?;
    Ok(yaml)
}

/// The skeleton must fail validation only for the NICs discover adds: any
/// other problem (a jump host ssh would refuse, an option with a space) is
/// reported now, against the source, instead of by a later command.
fn still_loads(file: &str, yaml: &str) -> Result<(), String> {
    match super::check::parse_inventory("skeleton", yaml) {
        Ok(_) => Ok(()),
        Err(d) => {
            let other: Vec<String> =
                d.0.iter()
                    .filter(|x| !x.path.ends_with(".nics"))
                    .map(|x| format!("{}: {}", x.path, x.message))
                    .collect();
            if other.is_empty() {
                Ok(())
            } else {
                Err(format!(
                    "{file}: the imported hosts do not make a valid inventory: {}",
                    other.join("; ")
                ))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(v: &[(&str, &str)]) -> Vec<(String, String)> {
        v.iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect()
    }

    #[test]
    fn runs_of_names_and_addresses_share_a_group() {
        let g = node_groups(&pairs(&[
            ("gpu001", "10.0.0.1"),
            ("gpu002", "10.0.0.2"),
            ("gpu003", "10.0.0.3"),
            ("gpu004", "10.0.0.9"),
            ("login1", "login1"),
            ("login2", "login2"),
        ]));
        let got: Vec<(String, Option<String>)> =
            g.into_iter().map(|g| (g.hosts, g.address)).collect();
        assert_eq!(
            got,
            vec![
                ("gpu[001-003]".into(), Some("10.0.0.[1-3]".into())),
                ("gpu004".into(), Some("10.0.0.9".into())),
                ("login[1-2]".into(), None),
            ]
        );
    }

    #[test]
    fn a_skeleton_misses_only_nics() {
        let hosts = (1..=4)
            .map(|i| ImportedHost {
                name: format!("gpu{i:03}"),
                address: Some(format!("10.0.0.{i}")),
                ssh: HostSsh {
                    user: Some("root".into()),
                    port: Some(2222),
                    ..Default::default()
                },
            })
            .collect();
        let imported = Imported {
            hosts,
            notes: vec!["ignored variables: rack".into()],
        };
        let y = skeleton("hosts.ini", "pod", "rocegate inventory import", &imported).unwrap();
        assert!(y.contains("hosts: gpu[001-004]"), "{y}");
        assert!(y.contains("address: 10.0.0.[1-4]"), "{y}");
        assert!(y.contains("port: 2222"), "{y}");
        assert!(y.contains("# note: ignored variables: rack"), "{y}");
        let e = crate::config::check::parse_inventory("s.yaml", &y).unwrap_err();
        assert!(e.0.iter().all(|d| d.path.ends_with(".nics")), "{e}");
    }

    #[test]
    fn hosts_that_disagree_on_ssh_are_named() {
        let mut a = ImportedHost {
            name: "gpu001".into(),
            ..Default::default()
        };
        let mut b = a.clone();
        b.name = "gpu002".into();
        a.ssh.user = Some("root".into());
        b.ssh.user = Some("admin".into());
        let e = skeleton(
            "h.ini",
            "pod",
            "x",
            &Imported {
                hosts: vec![a, b],
                notes: vec![],
            },
        )
        .unwrap_err();
        assert!(e.contains("h.ini: ansible_user differs between hosts: gpu001 has \"root\", gpu002 has \"admin\""), "{e}");
    }

    #[test]
    fn bad_names_and_addresses_are_named() {
        let h = |n: &str, a: Option<&str>| ImportedHost {
            name: n.into(),
            address: a.map(Into::into),
            ..Default::default()
        };
        let e = skeleton(
            "h.yml",
            "pod",
            "x",
            &Imported {
                hosts: vec![h("../x", None), h("gpu1", Some("10.0.0.[1:4]"))],
                notes: vec![],
            },
        )
        .unwrap_err();
        assert!(e.contains("host \"../x\" cannot be a node name"), "{e}");
        assert!(e.contains("host \"gpu1\": address \"10.0.0.[1:4]\""), "{e}");
        assert!(skeleton("h", "pod", "x", &Imported::default()).is_err());
    }
}
