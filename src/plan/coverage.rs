//! What the plan exercises: node pairs, NICs, rails and leaf–spine links its
//! flows can cross (with ECMP a cross-leaf flow may take any uplink of its
//! leaf towards a spine that reaches the far leaf).

use std::collections::{HashMap, HashSet};

use serde::Serialize;

use crate::config::model::{Inventory, LinkId, NicId, NodeId, SwitchId};

use super::patterns::Step;
use super::TestPlan;

#[derive(Debug, Clone, Serialize)]
pub struct Coverage {
    pub node_pairs_covered: u64,
    pub node_pairs_total: u64,
    pub nics_covered: usize,
    pub nics_total: usize,
    pub rails_covered: Vec<u32>,
    pub rails_total: u32,
    pub fabric_links_covered: usize,
    pub fabric_links_total: usize,
    /// Up to 20 leaf–spine links no flow of the plan can cross.
    pub uncovered_fabric_links: Vec<String>,
}

struct PairBits {
    n: usize,
    words: Vec<u64>,
    count: u64,
}

impl PairBits {
    fn new(n: usize) -> Self {
        PairBits {
            n,
            words: vec![0; (n * n).div_ceil(64)],
            count: 0,
        }
    }
    fn set(&mut self, a: usize, b: usize) {
        if a == b {
            return;
        }
        let (a, b) = (a.min(b), a.max(b));
        let i = a * self.n + b;
        let (w, bit) = (i / 64, 1u64 << (i % 64));
        if self.words[w] & bit == 0 {
            self.words[w] |= bit;
            self.count += 1;
        }
    }
}

/// Node-level flows of a step (for pair coverage) and NIC flows (for links).
fn flows(inv: &Inventory, step: &Step, mut f: impl FnMut(NicId, NicId)) {
    match step {
        Step::Pair { a, b } => f(*a, *b),
        Step::Incast(i) => i.senders.iter().for_each(|&s| f(s, i.receiver)),
        Step::Collective(c) => {
            // Ring per rail: each node sends to the next.
            for nics in c.rings(inv) {
                for i in 0..nics.len() {
                    f(nics[i], nics[(i + 1) % nics.len()]);
                }
            }
        }
    }
}

pub fn compute(inv: &Inventory, tests: &[TestPlan], nodes: &HashSet<NodeId>) -> Coverage {
    let index: HashMap<NodeId, usize> = {
        let mut v: Vec<NodeId> = nodes.iter().copied().collect();
        v.sort_unstable();
        v.into_iter().enumerate().map(|(i, n)| (n, i)).collect()
    };
    let mut pairs = PairBits::new(index.len());
    let mut nics = vec![false; inv.nics.len()];
    let mut rails = HashSet::new();
    let mut leaf_pairs: HashSet<(SwitchId, SwitchId)> = HashSet::new();
    let leaf_of: Vec<Option<SwitchId>> = (0..inv.nics.len())
        .map(|n| inv.nic_leaf(n).map(|(s, _)| s))
        .collect();
    for tp in tests {
        for round in &tp.rounds {
            for step in round {
                flows(inv, step, |a, b| {
                    nics[a] = true;
                    nics[b] = true;
                    rails.insert(inv.nics[a].rail);
                    let (na, nb) = (inv.nics[a].node, inv.nics[b].node);
                    if let (Some(&x), Some(&y)) = (index.get(&na), index.get(&nb)) {
                        pairs.set(x, y);
                    }
                    if let (Some(la), Some(lb)) = (leaf_of[a], leaf_of[b]) {
                        if la != lb {
                            leaf_pairs.insert((la, lb));
                        }
                    }
                });
            }
        }
    }
    // Leaf → spine → links.
    let mut up: HashMap<SwitchId, HashMap<SwitchId, Vec<LinkId>>> = HashMap::new();
    for leaf in 0..inv.switches.len() {
        for (link, spine) in inv.uplinks(leaf) {
            if inv.switches[leaf].role == crate::config::inventory::SwitchRole::Leaf {
                up.entry(leaf)
                    .or_default()
                    .entry(spine)
                    .or_default()
                    .push(link);
            }
        }
    }
    let mut covered: HashSet<LinkId> = HashSet::new();
    let empty = HashMap::new();
    for (la, lb) in leaf_pairs {
        let (ua, ub) = (up.get(&la).unwrap_or(&empty), up.get(&lb).unwrap_or(&empty));
        for (spine, links) in ua {
            if let Some(back) = ub.get(spine) {
                covered.extend(links);
                covered.extend(back);
            }
        }
    }
    let fabric: Vec<LinkId> = (0..inv.links.len())
        .filter(|&l| inv.links[l].kind == crate::config::model::LinkKind::Fabric)
        .collect();
    let mut rails_covered: Vec<u32> = rails.into_iter().collect();
    rails_covered.sort_unstable();
    let n = index.len() as u64;
    Coverage {
        node_pairs_covered: pairs.count,
        node_pairs_total: n * n.saturating_sub(1) / 2,
        nics_covered: nics.iter().filter(|&&c| c).count(),
        nics_total: inv.nics.len(),
        rails_covered,
        rails_total: inv.fabric.rails,
        fabric_links_covered: fabric.iter().filter(|l| covered.contains(l)).count(),
        fabric_links_total: fabric.len(),
        uncovered_fabric_links: fabric
            .iter()
            .filter(|l| !covered.contains(l))
            .take(20)
            .map(|&l| inv.link_name(l))
            .collect(),
    }
}
