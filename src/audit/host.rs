//! The host side of the audit: what to ask one node about each of its NICs,
//! and what the answers say, as [`Fact`]s. Every setting has its sources in
//! order (PFC from `dcb`, then from `mlnx_qos`, which Debian does not
//! package); the first that answers decides, and a setting no source answers
//! is `NotAvailable` with every command tried. The comparison with the
//! inventory lives in [`super::checks`].

use std::collections::BTreeMap;

use crate::config::inventory::GidIndex;
use crate::config::model::{Inventory, NicId, NodeId};
use crate::counters::host::{parse_ethtool_info, parse_lldpctl_json, parse_mlnx_qos, DriverInfo};
use crate::counters::host::{LldpNeighbor, QosConfig};
use crate::counters::host_cfg::{parse_dcb_app, parse_dcb_pfc_json, parse_ethtool_link};
use crate::counters::host_cfg::{DcbApp, LinkSettings};
use crate::counters::optics::{parse_ethtool_m, ModuleDiagnostics};
use crate::switch::config::{answered, fact};
use crate::switch::linux::counters::{parse_ip_link_json, PfcConfig};
use crate::switch::{Answer, Fact, Query};

/// Reads per NIC, in this order.
const PER_NIC: usize = 10;

fn argv(words: &[&str]) -> Query {
    Query::Argv(words.iter().map(|w| w.to_string()).collect())
}

/// The sysfs files `grep -H .` prints as `path:value`.
fn grep(files: &[String]) -> Query {
    let mut w = vec!["grep".to_string(), "-H".to_string(), ".".to_string()];
    w.extend(files.iter().cloned());
    Query::Argv(w)
}

fn ib(dev: &str, rest: &str) -> String {
    format!("/sys/class/infiniband/{dev}/{rest}")
}

/// The GID index the audit reads: the inventory's, or the one RoCE v2
/// IPv4 index mlx5 uses when the inventory says `discover` (3: entries 0–1
/// are the link-local v1/v2 pair, 2–3 the IPv4 pair).
fn gid_index(g: &GidIndex) -> u32 {
    match g {
        GidIndex::Fixed(i) => *i,
        GidIndex::Discover => 3,
    }
}

fn nic_queries(inv: &Inventory, n: NicId) -> Vec<Query> {
    let nic = &inv.nics[n];
    let nd = nic.netdev.as_str();
    let dev = nic.device.as_str();
    let port = nic.port;
    let g = gid_index(&nic.gid_index);
    let prio = inv.fabric.roce.pfc_priority;
    vec![
        argv(&["ethtool", "-i", nd]),
        grep(&[ib(dev, "hca_type"), ib(dev, "board_id")]),
        argv(&["ethtool", nd]),
        argv(&["ip", "-j", "link", "show", "dev", nd]),
        argv(&["dcb", "-j", "pfc", "show", "dev", nd]),
        argv(&["dcb", "app", "show", "dev", nd]),
        argv(&["mlnx_qos", "-i", nd]),
        grep(&[
            ib(dev, &format!("ports/{port}/gid_attrs/types/{g}")),
            ib(dev, &format!("ports/{port}/gids/{g}")),
            ib(dev, &format!("ports/{port}/gid_attrs/ndevs/{g}")),
        ]),
        grep(&[
            format!("/sys/class/net/{nd}/ecn/roce_np/enable/{prio}"),
            format!("/sys/class/net/{nd}/ecn/roce_rp/enable/{prio}"),
        ]),
        argv(&["ethtool", "-m", nd]),
    ]
}

/// Everything the audit asks `node`, in one list: LLDP first, then
/// [`PER_NIC`] reads per NIC in inventory order. Composed into one command,
/// so a node costs one round trip.
pub fn queries(inv: &Inventory, node: NodeId) -> Vec<Query> {
    let mut q = vec![argv(&["lldpctl", "-f", "json0"])];
    for &n in &inv.nodes[node].nics {
        q.extend(nic_queries(inv, n));
    }
    q
}

/// The model and board of a NIC (`hca_type`, `board_id`: the PSID on mlx5),
/// which firmware homogeneity is judged within.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Model {
    pub hca_type: String,
    pub board_id: String,
}

/// One GID table entry as sysfs shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Gid {
    pub index: u32,
    /// `RoCE v2`, `IB/RoCE v1`.
    pub kind: String,
    pub gid: String,
    pub ndev: Option<String>,
}

/// What the audit learned about one NIC.
#[derive(Debug, Clone)]
pub struct NicFacts {
    pub nic: NicId,
    pub info: Fact<DriverInfo>,
    pub model: Fact<Model>,
    pub link: Fact<LinkSettings>,
    pub mtu: Fact<u32>,
    pub pfc: Fact<[bool; 8]>,
    /// Trust DSCP (true) or PCP (false).
    pub trust_dscp: Fact<bool>,
    /// DSCP → priority for the DSCPs that have an entry.
    pub dscp_prio: Fact<BTreeMap<u8, u8>>,
    pub gid: Fact<Gid>,
    /// DCQCN as notification point and as reaction point on the RoCE priority.
    pub dcqcn: Fact<(bool, bool)>,
    pub optics: Fact<ModuleDiagnostics>,
    /// The commands behind each fact, for evidence and `not available`.
    pub sources: BTreeMap<&'static str, Vec<String>>,
}

/// What the audit learned about one node.
#[derive(Debug, Clone)]
pub struct NodeFacts {
    pub node: NodeId,
    pub lldp: Fact<Vec<LldpNeighbor>>,
    pub nics: Vec<NicFacts>,
}

/// The first source that knows; else `NotAvailable` when every source said
/// so (all commands listed), else the failures.
pub fn first_known<T>(facts: Vec<Fact<T>>) -> Fact<T> {
    let mut tried = Vec::new();
    let mut whys = Vec::new();
    let mut failed = Vec::new();
    for f in facts {
        match f {
            Fact::Known(v) => return Fact::Known(v),
            Fact::NotAvailable { tried: t, why } => {
                tried.extend(t);
                whys.push(why);
            }
            Fact::Failed(e) => failed.push(e),
        }
    }
    if failed.is_empty() {
        Fact::NotAvailable {
            tried,
            why: whys.join("; "),
        }
    } else {
        Fact::Failed(failed.join("; "))
    }
}

/// `path:value` lines of `grep -H .`, by the file's last path segments.
fn sysfs_values(text: &str) -> BTreeMap<String, String> {
    text.lines()
        .filter_map(|l| {
            // The path has no colon; the value (a GID) may.
            let (path, value) = l.split_once(':')?;
            Some((path.trim().to_string(), value.trim().to_string()))
        })
        .collect()
}

/// One file's value from a `grep -H .` answer that may have exited 2
/// because another file is missing: what was printed still counts.
fn sysfs_file(host: &str, q: &Query, a: Option<&Answer>, file: &str) -> Fact<String> {
    let cmd = q.display();
    if let Some(a) = a.filter(|a| a.exit == Some(2) || a.exit == Some(0)) {
        if let Some(v) = sysfs_values(&a.text).remove(file) {
            return Fact::Known(v);
        }
        if a.text.contains(&format!("{file}: No such file")) || a.exit == Some(0) {
            return Fact::NotAvailable {
                tried: vec![cmd],
                why: format!("{host}: {file} does not exist"),
            };
        }
    }
    match answered::<String>(host, q, a) {
        Ok(_) => Fact::NotAvailable {
            tried: vec![cmd],
            why: format!("{host}: {file} printed nothing"),
        },
        Err(f) => f,
    }
}

fn bit(host: &str, file: &str, v: &str) -> Result<bool, String> {
    match v {
        "0" => Ok(false),
        "1" => Ok(true),
        other => Err(format!("{host}: {file} holds `{other}`, not 0 or 1")),
    }
}

/// Reads a node's answers (one per [`queries`] entry, in order; missing
/// answers count as cut off).
pub fn parse(inv: &Inventory, node: NodeId, answers: &[Answer]) -> NodeFacts {
    let host = inv.nodes[node].name.as_str();
    let qs = queries(inv, node);
    let at = |i: usize| (&qs[i], answers.get(i));
    let (q, a) = at(0);
    let lldp = fact(host, q, a, parse_lldpctl_json, Ok);
    let nics = inv.nodes[node]
        .nics
        .iter()
        .enumerate()
        .map(|(k, &n)| {
            let nic = &inv.nics[n];
            let base = 1 + k * PER_NIC;
            let cmd = |i: usize| qs[base + i].display();
            let mut sources: BTreeMap<&'static str, Vec<String>> = BTreeMap::new();
            let (q, a) = at(base);
            let info = fact(host, q, a, parse_ethtool_info, Ok);
            sources.insert("firmware", vec![cmd(0)]);
            sources.insert("driver", vec![cmd(0)]);
            let (q, a) = at(base + 1);
            let ht = sysfs_file(host, q, a, &ib(&nic.device, "hca_type"));
            let bid = sysfs_file(host, q, a, &ib(&nic.device, "board_id"));
            let model = match (ht, bid) {
                (Fact::Known(h), Fact::Known(b)) => Fact::Known(Model {
                    hca_type: h,
                    board_id: b,
                }),
                (Fact::Known(_), other) | (other, _) => other.map(|_| Model {
                    hca_type: String::new(),
                    board_id: String::new(),
                }),
            };
            let (q, a) = at(base + 2);
            let link = fact(host, q, a, parse_ethtool_link, Ok);
            sources.insert("link", vec![cmd(2)]);
            let (q, a) = at(base + 3);
            let nd = nic.netdev.clone();
            let mtu = fact(host, q, a, parse_ip_link_json, |links| {
                links
                    .into_iter()
                    .find(|l| l.ifname == nd)
                    .and_then(|l| l.mtu)
                    .ok_or_else(|| format!("no mtu for {nd} in the output"))
            });
            sources.insert("mtu", vec![cmd(3)]);
            let (q, a) = at(base + 4);
            let dcb_pfc = fact(host, q, a, parse_dcb_pfc_json, pfc_of);
            let (q, a) = at(base + 5);
            let dcb_app: Fact<DcbApp> = fact(host, q, a, parse_dcb_app, Ok);
            let (q, a) = at(base + 6);
            let qos: Fact<QosConfig> = fact(host, q, a, parse_mlnx_qos, Ok);
            let qos_pfc = match &qos {
                Fact::Known(c) => match c.pfc {
                    Some(p) => Fact::Known(p),
                    None => Fact::NotAvailable {
                        tried: vec![cmd(6)],
                        why: format!("{host}: `{}` printed no PFC table", cmd(6)),
                    },
                },
                other => other.clone().map(|_| [false; 8]),
            };
            let pfc = first_known(vec![dcb_pfc, qos_pfc]);
            sources.insert("pfc", vec![cmd(4), cmd(6)]);
            // mlx5 switches to trust DSCP when the first DSCP APP entry is
            // added through dcbnl (mlx5e_dcbnl_setapp), so with `dcb` a DSCP
            // table is trust DSCP; mlnx_qos prints the trust state itself.
            let qos_trust = match &qos {
                Fact::Known(c) => match c.trust_dscp {
                    Some(t) => Fact::Known(t),
                    None => Fact::NotAvailable {
                        tried: vec![cmd(6)],
                        why: format!("{host}: `{}` says trust is not supported", cmd(6)),
                    },
                },
                other => other.clone().map(|_| false),
            };
            let qos_map = qos.clone().map(|c| c.dscp2prio);
            let app_trust = dcb_app.clone().map(|t| !t.dscp_prio.is_empty());
            let app_map = dcb_app.map(|t| {
                t.dscp_prio
                    .iter()
                    .filter_map(|(d, ps)| match ps.as_slice() {
                        [p] => Some((*d, *p)),
                        _ => None,
                    })
                    .collect::<BTreeMap<u8, u8>>()
            });
            // An empty APP table says nothing about trust PCP set through
            // mlnx_qos: ask mlnx_qos before concluding PCP.
            let trust_dscp = match app_trust {
                Fact::Known(true) => Fact::Known(true),
                Fact::Known(false) => match qos_trust {
                    Fact::Known(t) => Fact::Known(t),
                    _ => Fact::Known(false),
                },
                other => first_known(vec![other, qos_trust]),
            };
            let dscp_prio = match app_map {
                Fact::Known(m) if !m.is_empty() => Fact::Known(m),
                other => first_known(vec![qos_map, other]),
            };
            sources.insert("trust", vec![cmd(5), cmd(6)]);
            sources.insert("dscp_map", vec![cmd(5), cmd(6)]);
            let (q, a) = at(base + 7);
            let g = gid_index(&nic.gid_index);
            let dir = format!("ports/{}", nic.port);
            let kind = sysfs_file(host, q, a, &ib(&nic.device, &format!("{dir}/gid_attrs/types/{g}")));
            let value = sysfs_file(host, q, a, &ib(&nic.device, &format!("{dir}/gids/{g}")));
            let ndev = sysfs_file(host, q, a, &ib(&nic.device, &format!("{dir}/gid_attrs/ndevs/{g}")));
            let gid = match (kind, value) {
                (Fact::Known(kind), Fact::Known(gid)) => Fact::Known(Gid {
                    index: g,
                    kind,
                    gid,
                    ndev: ndev.known().cloned(),
                }),
                (Fact::Known(_), other) | (other, _) => other.map(|_| Gid {
                    index: g,
                    kind: String::new(),
                    gid: String::new(),
                    ndev: None,
                }),
            };
            sources.insert("gid", vec![cmd(7)]);
            let (q, a) = at(base + 8);
            let prio = inv.fabric.roce.pfc_priority;
            let np_file = format!("/sys/class/net/{}/ecn/roce_np/enable/{prio}", nic.netdev);
            let rp_file = format!("/sys/class/net/{}/ecn/roce_rp/enable/{prio}", nic.netdev);
            let np = sysfs_file(host, q, a, &np_file);
            let rp = sysfs_file(host, q, a, &rp_file);
            let dcqcn = match (np, rp) {
                (Fact::Known(np), Fact::Known(rp)) => {
                    match (bit(host, &np_file, &np), bit(host, &rp_file, &rp)) {
                        (Ok(np), Ok(rp)) => Fact::Known((np, rp)),
                        (Err(e), _) | (_, Err(e)) => Fact::Failed(e),
                    }
                }
                (Fact::Known(_), other) | (other, _) => match other {
                    Fact::NotAvailable { tried, why } => Fact::NotAvailable {
                        tried,
                        why: format!(
                            "{why} (the DCQCN knobs come with MLNX_OFED/DOCA's mlx5_core; the inbox driver has none)"
                        ),
                    },
                    other => other.map(|_| (false, false)),
                },
            };
            sources.insert("dcqcn", vec![cmd(8)]);
            let (q, a) = at(base + 9);
            let optics = fact(host, q, a, parse_ethtool_m, Ok);
            sources.insert("optics", vec![cmd(9)]);
            NicFacts {
                nic: n,
                info,
                model,
                link,
                mtu,
                pfc,
                trust_dscp,
                dscp_prio,
                gid,
                dcqcn,
                optics,
                sources,
            }
        })
        .collect();
    NodeFacts { node, lldp, nics }
}

fn pfc_of(c: PfcConfig) -> Result<[bool; 8], String> {
    if c.prio_pfc.iter().all(Option::is_none) {
        return Err("no `prio_pfc` in the output".into());
    }
    Ok(std::array::from_fn(|p| c.prio_pfc[p] == Some(true)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn a(exit: i32, text: &str) -> Option<Answer> {
        Some(Answer {
            exit: Some(exit),
            text: text.into(),
        })
    }

    #[test]
    fn grep_answers_keep_what_was_printed_when_another_file_is_missing() {
        let q = grep(&["/x/a".into(), "/x/b".into()]);
        let ans = a(2, "/x/a:RoCE v2\ngrep: /x/b: No such file or directory\n");
        assert_eq!(
            sysfs_file("gpu1", &q, ans.as_ref(), "/x/a"),
            Fact::Known("RoCE v2".into())
        );
        match sysfs_file("gpu1", &q, ans.as_ref(), "/x/b") {
            Fact::NotAvailable { tried, why } => {
                assert_eq!(tried, vec![q.display()]);
                assert!(why.contains("/x/b does not exist"), "{why}");
            }
            other => panic!("{other:?}"),
        }
        // A GID holds colons: only the first one splits path from value.
        let ans = a(0, "/x/a:0000:0000:0000:0000:0000:ffff:c612:0001\n");
        assert_eq!(
            sysfs_file("gpu1", &q, ans.as_ref(), "/x/a"),
            Fact::Known("0000:0000:0000:0000:0000:ffff:c612:0001".into())
        );
        // A host that did not answer: failed, never not available.
        assert!(matches!(
            sysfs_file("gpu1", &q, None, "/x/a"),
            Fact::Failed(_)
        ));
    }

    #[test]
    fn the_first_source_that_knows_decides() {
        let na = |c: &str| Fact::<u8>::NotAvailable {
            tried: vec![c.into()],
            why: format!("{c} missing"),
        };
        assert_eq!(first_known(vec![na("dcb"), Fact::Known(3)]), Fact::Known(3));
        match first_known(vec![na("dcb"), na("mlnx_qos")]) {
            Fact::NotAvailable { tried, .. } => assert_eq!(tried, vec!["dcb", "mlnx_qos"]),
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            first_known(vec![na("dcb"), Fact::Failed("cut".into())]),
            Fact::Failed(_)
        ));
    }
}
