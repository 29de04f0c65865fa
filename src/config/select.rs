//! Selectors resolved against the inventory: `{select: leaf, rail: 0, pick:
//! fewest_isolated}` into the concrete names a suite would otherwise have
//! to spell out (`r0-leaf1`), so one suite fits every pod of a design.
//!
//! Resolution is deterministic: matches come in inventory order, and
//! `pick: random` draws with the run's seed keyed by where the selector is
//! written, so the same seed picks the same parts. This module only chooses
//! names; what a choice means (a fault's target, a test's nodes) is checked by
//! the caller. It knows nothing of the emulator.

use super::hostlist;
use super::inventory::SwitchRole;
use super::model::{Inventory, LinkKind, NicId, NodeId, SwitchId};
use super::suite::{Pick, Position, SelectKind, Selector};

/// A selector as written and the names it resolved to, for `plan` to print
/// beside each other.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Selection {
    /// Where it is written (`tests[1].fault.link_flap.target`).
    pub at: String,
    pub selector: String,
    pub names: Vec<String>,
}

/// One part of the pod a selector can match.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Part {
    Switch(SwitchId),
    /// A leaf–spine link, by its leaf-side port.
    Uplink {
        leaf: SwitchId,
        port: String,
    },
    Node(NodeId),
    Nic(NicId),
}

impl Part {
    pub fn name(&self, inv: &Inventory) -> String {
        match self {
            Part::Switch(s) => inv.switches[*s].name.clone(),
            Part::Uplink { leaf, port } => format!("{}:{port}", inv.switches[*leaf].name),
            Part::Node(n) => inv.nodes[*n].name.clone(),
            Part::Nic(n) => inv.nic_name(*n),
        }
    }

    /// NICs cut off from the fabric if this part goes away: a switch's
    /// host-facing NICs, a node's NICs, a NIC itself; an uplink or a spine
    /// isolates none (the other paths remain).
    fn isolates(&self, inv: &Inventory) -> usize {
        match self {
            Part::Switch(s) => inv.switches[*s]
                .links
                .iter()
                .filter(|&&l| inv.links[l].kind == LinkKind::Host)
                .count(),
            Part::Uplink { .. } => 0,
            Part::Node(n) => inv.nodes[*n].nics.len(),
            Part::Nic(_) => 1,
        }
    }
}

/// The selector as one line of YAML flow style, for messages and `plan`.
pub fn describe(s: &Selector) -> String {
    let mut parts = vec![format!("select: {}", s.select.label())];
    if let Some(r) = s.rail {
        parts.push(format!("rail: {r}"));
    }
    if let Some(l) = &s.leaf {
        parts.push(format!("leaf: {l}"));
    }
    if let Some(l) = &s.spine {
        parts.push(format!("spine: {l}"));
    }
    if let Some(n) = &s.node {
        parts.push(format!("node: {n}"));
    }
    if let Some(r) = s.role {
        parts.push(format!("role: {}", format!("{r:?}").to_lowercase()));
    }
    match s.position {
        Some(Position::First) => parts.push("position: first".into()),
        Some(Position::Last) => parts.push("position: last".into()),
        Some(Position::Index(i)) => parts.push(format!("position: {i}")),
        None => {}
    }
    if let Some(p) = s.pick {
        parts.push(format!("pick: {}", p.label()));
    }
    if let Some(m) = s.max {
        parts.push(format!("max: {m}"));
    }
    format!("{{{}}}", parts.join(", "))
}

/// Which filters each kind understands; anything else is an error, so a
/// filter that would silently match everything is never ignored.
fn allowed(kind: SelectKind) -> &'static [&'static str] {
    match kind {
        SelectKind::Leaf => &["rail"],
        SelectKind::Spine => &[],
        SelectKind::Switch => &["role", "rail"],
        SelectKind::Uplink => &["rail", "leaf", "spine"],
        SelectKind::Node => &["leaf", "node"],
        SelectKind::Nic => &["rail", "leaf", "node"],
    }
}

fn switch_named(inv: &Inventory, name: &str, role: SwitchRole) -> Result<SwitchId, String> {
    let role_name = format!("{role:?}").to_lowercase();
    let known = || {
        let names: Vec<String> = inv
            .switches
            .iter()
            .filter(|s| s.role == role)
            .map(|s| s.name.clone())
            .collect();
        hostlist::compress(&names)
    };
    match inv.switch_by_name.get(name) {
        Some(&s) if inv.switches[s].role == role => Ok(s),
        Some(_) => Err(format!("\"{name}\" is not a {role_name}")),
        None => Err(format!(
            "{role_name} \"{name}\" is not in the inventory ({role_name}s are {})",
            known()
        )),
    }
}

/// Every match of the filters, in inventory order, before `position`,
/// `max` and `pick`.
fn matches(s: &Selector, inv: &Inventory) -> Result<Vec<Part>, String> {
    let ok = allowed(s.select);
    for (key, set) in [
        ("rail", s.rail.is_some()),
        ("leaf", s.leaf.is_some()),
        ("spine", s.spine.is_some()),
        ("node", s.node.is_some()),
        ("role", s.role.is_some()),
    ] {
        if set && !ok.contains(&key) {
            return Err(format!(
                "`{key}` does not filter a {} (it takes {})",
                s.select.label(),
                if ok.is_empty() {
                    "position, pick and max".to_string()
                } else {
                    format!("{}, position, pick and max", ok.join(", "))
                }
            ));
        }
    }
    if let Some(r) = s.rail {
        if r >= inv.fabric.rails {
            return Err(format!(
                "rail {r} is not declared by the fabric (rails are 0-{})",
                inv.fabric.rails.saturating_sub(1)
            ));
        }
    }
    let leaf = s
        .leaf
        .as_deref()
        .map(|l| switch_named(inv, l, SwitchRole::Leaf))
        .transpose()?;
    let spine = s
        .spine
        .as_deref()
        .map(|l| switch_named(inv, l, SwitchRole::Spine))
        .transpose()?;
    let nodes: Option<Vec<NodeId>> = match &s.node {
        Some(expr) => {
            let names = hostlist::expand(expr).map_err(|e| e.to_string())?;
            let mut ids = Vec::new();
            for n in names {
                match inv.node_by_name.get(&n) {
                    Some(&id) => ids.push(id),
                    None => return Err(format!("node \"{n}\" is not in the inventory")),
                }
            }
            Some(ids)
        }
        None => None,
    };
    let nic_ok = |n: NicId| {
        s.rail.is_none_or(|r| inv.nics[n].rail == r)
            && leaf.is_none_or(|l| inv.nic_leaf(n).map(|x| x.0) == Some(l))
            && nodes
                .as_ref()
                .is_none_or(|ns| ns.contains(&inv.nics[n].node))
    };
    let switches = |role: Option<SwitchRole>| -> Vec<Part> {
        (0..inv.switches.len())
            .filter(|&i| role.is_none_or(|r| inv.switches[i].role == r))
            .filter(|&i| s.rail.is_none_or(|r| inv.switches[i].rail == Some(r)))
            .map(Part::Switch)
            .collect()
    };
    Ok(match s.select {
        SelectKind::Leaf => switches(Some(SwitchRole::Leaf)),
        SelectKind::Spine => switches(Some(SwitchRole::Spine)),
        SelectKind::Switch => switches(s.role),
        SelectKind::Uplink => {
            let mut out = Vec::new();
            for l in 0..inv.switches.len() {
                let sw = &inv.switches[l];
                if sw.role != SwitchRole::Leaf
                    || leaf.is_some_and(|x| x != l)
                    || s.rail.is_some_and(|r| sw.rail != Some(r))
                {
                    continue;
                }
                for (link, other) in inv.uplinks(l) {
                    if spine.is_some_and(|x| x != other) {
                        continue;
                    }
                    let l_ = &inv.links[link];
                    let port = [&l_.a, &l_.b].into_iter().find_map(|e| match e {
                        super::model::End::Port { switch, port } if *switch == l => {
                            Some(port.clone())
                        }
                        _ => None,
                    });
                    if let Some(port) = port {
                        out.push(Part::Uplink { leaf: l, port });
                    }
                }
            }
            out
        }
        SelectKind::Node => (0..inv.nodes.len())
            .filter(|&n| nodes.as_ref().is_none_or(|ns| ns.contains(&n)))
            .filter(|&n| {
                leaf.is_none_or(|l| {
                    inv.nodes[n]
                        .nics
                        .iter()
                        .any(|&nic| inv.nic_leaf(nic).map(|x| x.0) == Some(l))
                })
            })
            .map(Part::Node)
            .collect(),
        SelectKind::Nic => (0..inv.nics.len())
            .filter(|&n| nic_ok(n))
            .map(Part::Nic)
            .collect(),
    })
}

fn plural(k: SelectKind) -> &'static str {
    match k {
        SelectKind::Leaf => "leaves",
        SelectKind::Spine => "spines",
        SelectKind::Switch => "switches",
        SelectKind::Uplink => "uplinks",
        SelectKind::Node => "nodes",
        SelectKind::Nic => "NICs",
    }
}

/// Resolves a selector. `at` (where it is written) keys the random draw so
/// two selectors in one suite draw independently. Errors say what matched.
pub fn resolve(s: &Selector, inv: &Inventory, seed: u64, at: &str) -> Result<Vec<Part>, String> {
    let mut found = matches(s, inv)?;
    let what = s.select.label();
    if found.is_empty() {
        return Err(format!(
            "{} matches no {what} of the inventory",
            describe(s)
        ));
    }
    if let Some(p) = s.position {
        let i = match p {
            Position::First => 0,
            Position::Last => found.len() - 1,
            Position::Index(i) => i,
        };
        if i >= found.len() {
            return Err(format!(
                "{}: position {i} is past the {} {what}(s) that match (0-{})",
                describe(s),
                found.len(),
                found.len() - 1
            ));
        }
        found = vec![found.swap_remove(i)];
    }
    if let Some(max) = s.max {
        if found.len() > max {
            let names: Vec<String> = found.iter().map(|p| p.name(inv)).collect();
            return Err(format!(
                "{} matches {} {} ({}), more than max {max}",
                describe(s),
                found.len(),
                plural(s.select),
                hostlist::compress(&names)
            ));
        }
    }
    Ok(match s.pick {
        None => found,
        Some(Pick::First) => vec![found.swap_remove(0)],
        Some(Pick::Random) => {
            let h = crate::rng::hash_bytes(seed, at.as_bytes());
            let i = (h % found.len() as u64) as usize;
            vec![found.swap_remove(i)]
        }
        Some(Pick::FewestIsolated) => {
            let best = found
                .iter()
                .enumerate()
                .min_by_key(|(i, p)| (p.isolates(inv), *i))
                .map(|(i, _)| i)
                .unwrap_or(0);
            vec![found.swap_remove(best)]
        }
    })
}

/// Resolves a selector that must name exactly one part.
pub fn resolve_one(s: &Selector, inv: &Inventory, seed: u64, at: &str) -> Result<Part, String> {
    let mut found = resolve(s, inv, seed, at)?;
    if found.len() > 1 {
        let names: Vec<String> = found.iter().map(|p| p.name(inv)).collect();
        return Err(format!(
            "{} matches {} {} ({}) where one is needed; add `pick: first` (or random, fewest_isolated) or `position`",
            describe(s),
            found.len(),
            plural(s.select),
            hostlist::compress(&names)
        ));
    }
    Ok(found.swap_remove(0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::check::parse_inventory;
    use crate::config::generate::{generate, to_yaml, PodShape};

    fn pod(nodes: u32, per_leaf: u32) -> Inventory {
        let shape = PodShape {
            nodes,
            nodes_per_leaf: per_leaf,
            rails: 2,
            spines: 2,
            ..PodShape::default()
        };
        let inv = generate(&shape).unwrap();
        parse_inventory("pod.yaml", &to_yaml(&shape, &inv).unwrap()).unwrap()
    }

    fn sel(yaml: &str) -> Selector {
        serde_yaml::from_str(yaml).unwrap()
    }

    fn names(inv: &Inventory, s: &str) -> Result<Vec<String>, String> {
        resolve(&sel(s), inv, 1, "here").map(|v| v.iter().map(|p| p.name(inv)).collect())
    }

    #[test]
    fn leaves_uplinks_nics_and_nodes() {
        let inv = pod(24, 8);
        let leaves = names(&inv, "{select: leaf, rail: 1}").unwrap();
        assert_eq!(leaves.len(), 3, "{leaves:?}");
        assert!(leaves.iter().all(|l| l.starts_with("r1-")), "{leaves:?}");
        let first = names(&inv, "{select: leaf, rail: 0, position: first}").unwrap();
        let last = names(&inv, "{select: leaf, rail: 0, position: last}").unwrap();
        assert_ne!(first, last);
        let up = names(&inv, "{select: uplink, rail: 0, pick: first}").unwrap();
        assert_eq!(up.len(), 1);
        assert!(up[0].starts_with(&format!("{}:", first[0])), "{up:?}");
        let nics = names(&inv, "{select: nic, rail: 1, leaf: r1-leaf2}").unwrap();
        assert_eq!(nics.len(), 8, "{nics:?}");
        let nodes = names(&inv, "{select: node, leaf: r0-leaf1}").unwrap();
        assert_eq!(nodes.len(), 8);
        assert_eq!(
            names(&inv, "{select: switch, role: spine}").unwrap().len(),
            2
        );
    }

    #[test]
    fn random_picks_follow_the_seed() {
        let inv = pod(64, 8);
        let s = sel("{select: leaf, rail: 0, pick: random}");
        let draw = |seed| resolve(&s, &inv, seed, "t").unwrap()[0].name(&inv);
        assert_eq!(draw(7), draw(7));
        let all: std::collections::HashSet<String> = (0..32).map(draw).collect();
        assert!(all.len() > 1, "{all:?}");
    }

    #[test]
    fn fewest_isolated_prefers_the_smallest_leaf() {
        // 20 nodes, 8 per leaf: the third leaf of each rail has 4 NICs.
        let inv = pod(20, 8);
        let got = names(&inv, "{select: leaf, rail: 0, pick: fewest_isolated}").unwrap();
        assert_eq!(got, vec!["r0-leaf3".to_string()]);
    }

    #[test]
    fn nothing_too_much_and_wrong_filters_are_errors() {
        let inv = pod(16, 8);
        let e = names(&inv, "{select: nic, leaf: r0-leaf1, rail: 1}").unwrap_err();
        assert!(e.contains("matches no nic"), "{e}");
        let e = names(&inv, "{select: leaf, max: 2}").unwrap_err();
        assert!(e.contains("matches 4 leaves") && e.contains("max 2"), "{e}");
        let e = names(&inv, "{select: spine, rail: 0}").unwrap_err();
        assert!(e.contains("`rail` does not filter a spine"), "{e}");
        let e = names(&inv, "{select: leaf, rail: 9}").unwrap_err();
        assert!(e.contains("rail 9 is not declared"), "{e}");
        let e = names(&inv, "{select: uplink, leaf: r0-leaf9}").unwrap_err();
        assert!(
            e.contains("leaf \"r0-leaf9\" is not in the inventory"),
            "{e}"
        );
        let e = names(&inv, "{select: leaf, rail: 0, position: 5}").unwrap_err();
        assert!(e.contains("position 5 is past"), "{e}");
        let e = resolve_one(&sel("{select: leaf, rail: 0}"), &inv, 1, "t").unwrap_err();
        assert!(e.contains("where one is needed"), "{e}");
    }
}
