//! Traffic patterns into rounds of steps. Within a round no NIC is in two
//! steps (unless the test asks for contention), so a round can run at once.

use crate::config::model::{Inventory, NicId, NodeId};

/// One unit of work: what runs together and is scored together.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// A point-to-point test between two NICs (perftest or iperf3); `a`
    /// is the server side.
    Pair { a: NicId, b: NicId },
    /// k senders into one receiver.
    Incast(Box<Incast>),
    /// One collective over several nodes on the given rails.
    Collective(Box<Collective>),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Incast {
    pub receiver: NicId,
    pub senders: Vec<NicId>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Collective {
    pub nodes: Vec<NodeId>,
    pub rails: Vec<u32>,
}

impl Collective {
    /// The ring on each rail, as NCCL's Ring runs it here: the nodes' NICs
    /// on that rail in node order (each sends to the next, the last to the
    /// first). Rails where fewer than two nodes have a NIC have no ring.
    pub fn rings<'a>(&'a self, inv: &'a Inventory) -> impl Iterator<Item = Vec<NicId>> + 'a {
        self.rails.iter().filter_map(move |&r| {
            let ring: Vec<NicId> = self
                .nodes
                .iter()
                .filter_map(|&n| {
                    inv.nodes[n]
                        .nics
                        .iter()
                        .copied()
                        .find(|&x| inv.nics[x].rail == r)
                })
                .collect();
            (ring.len() > 1).then_some(ring)
        })
    }
}

impl Step {
    /// Every NIC the step uses.
    pub fn nics<'a>(&'a self, inv: &'a Inventory) -> Box<dyn Iterator<Item = NicId> + 'a> {
        match self {
            Step::Pair { a, b } => Box::new([*a, *b].into_iter()),
            Step::Incast(i) => {
                Box::new(std::iter::once(i.receiver).chain(i.senders.iter().copied()))
            }
            Step::Collective(c) => Box::new(c.nodes.iter().flat_map(move |&n| {
                inv.nodes[n]
                    .nics
                    .iter()
                    .copied()
                    .filter(move |&nic| c.rails.contains(&inv.nics[nic].rail))
            })),
        }
    }
}

pub type Round = Vec<Step>;

/// Round `k` of the circle method over `n` players: fix the last player,
/// rotate the rest. For odd `n` a phantom player gives one bye per round.
/// Gives the lower bound: n−1 rounds for even n, n for odd n.
pub fn circle_round(n: usize, k: usize) -> Vec<(usize, usize)> {
    if n < 2 {
        return Vec::new();
    }
    let m = if n % 2 == 0 { n } else { n + 1 };
    let rot = m - 1;
    let mut pairs = Vec::with_capacity(m / 2);
    let fixed = m - 1;
    let first = k % rot;
    if fixed < n {
        pairs.push((first, fixed));
    }
    for i in 1..m / 2 {
        let a = (k + i) % rot;
        let b = (k + rot - i) % rot;
        if a < n && b < n {
            pairs.push((a.min(b), a.max(b)));
        }
    }
    pairs
}

pub fn circle_rounds(n: usize) -> usize {
    match n {
        0 | 1 => 0,
        n if n % 2 == 0 => n - 1,
        n => n,
    }
}

/// NIC of `node` on `rail`, if it has one.
fn nic_on(inv: &Inventory, node: NodeId, rail: u32) -> Option<NicId> {
    inv.nodes[node]
        .nics
        .iter()
        .copied()
        .find(|&n| inv.nics[n].rail == rail)
}

/// Node pairs → rail-aligned NIC pairs, all rails in parallel.
fn rail_steps(inv: &Inventory, pairs: &[(NodeId, NodeId)], rails: &[u32]) -> Round {
    let mut round = Vec::with_capacity(pairs.len() * rails.len());
    for &(a, b) in pairs {
        for &r in rails {
            if let (Some(x), Some(y)) = (nic_on(inv, a, r), nic_on(inv, b, r)) {
                round.push(Step::Pair { a: x, b: y });
            }
        }
    }
    round
}

/// One matching that covers every node; an odd node out is paired with the
/// first node in a second round.
pub fn rail_pairs(inv: &Inventory, nodes: &[NodeId], rails: &[u32]) -> Vec<Round> {
    let pairs: Vec<(NodeId, NodeId)> = nodes
        .chunks(2)
        .filter(|c| c.len() == 2)
        .map(|c| (c[0], c[1]))
        .collect();
    let mut rounds = vec![rail_steps(inv, &pairs, rails)];
    if nodes.len() % 2 == 1 && nodes.len() > 1 {
        rounds.push(rail_steps(
            inv,
            &[(nodes[0], nodes[nodes.len() - 1])],
            rails,
        ));
    }
    rounds.retain(|r| !r.is_empty());
    rounds
}

pub fn full_mesh(inv: &Inventory, nodes: &[NodeId], rails: &[u32]) -> Vec<Round> {
    (0..circle_rounds(nodes.len()))
        .map(|k| {
            let pairs: Vec<(NodeId, NodeId)> = circle_round(nodes.len(), k)
                .into_iter()
                .map(|(a, b)| (nodes[a], nodes[b]))
                .collect();
            rail_steps(inv, &pairs, rails)
        })
        .collect()
}

use crate::rng::Rng;

pub fn random(
    inv: &Inventory,
    nodes: &[NodeId],
    rails: &[u32],
    rounds: u32,
    seed: u64,
) -> Vec<Round> {
    let mut rng = Rng::new(seed);
    (0..rounds)
        .map(|_| {
            let mut order = nodes.to_vec();
            rng.shuffle(&mut order);
            let pairs: Vec<(NodeId, NodeId)> = order
                .chunks(2)
                .filter(|c| c.len() == 2)
                .map(|c| (c[0], c[1]))
                .collect();
            rail_steps(inv, &pairs, rails)
        })
        .filter(|r| !r.is_empty())
        .collect()
}

/// Disjoint groups of one receiver and k senders, per rail. Receivers
/// rotate from sample to sample so different nodes take the incast.
pub fn incast(
    inv: &Inventory,
    nodes: &[NodeId],
    rails: &[u32],
    senders: u32,
    samples: Option<u32>,
) -> Vec<Round> {
    let k = senders as usize;
    let group = k + 1;
    if nodes.len() < group {
        return Vec::new();
    }
    let per_round = nodes.len() / group;
    let total = samples.map(|s| s as usize).unwrap_or(per_round);
    let mut rounds = Vec::new();
    let mut done = 0;
    let mut offset = 0;
    while done < total {
        let mut round = Vec::new();
        for g in 0..per_round.min(total - done) {
            let members: Vec<NodeId> = (0..group)
                .map(|i| nodes[(offset + g * group + i) % nodes.len()])
                .collect();
            for &r in rails {
                let Some(rx) = nic_on(inv, members[0], r) else {
                    continue;
                };
                let tx: Vec<NicId> = members[1..]
                    .iter()
                    .filter_map(|&n| nic_on(inv, n, r))
                    .collect();
                if !tx.is_empty() {
                    round.push(Step::Incast(Box::new(Incast {
                        receiver: rx,
                        senders: tx,
                    })));
                }
            }
        }
        done += per_round.min(total - done);
        offset += 1;
        if !round.is_empty() {
            rounds.push(round);
        }
    }
    rounds
}

pub fn all_nodes(nodes: &[NodeId], rails: &[u32]) -> Vec<Round> {
    if nodes.is_empty() {
        return Vec::new();
    }
    vec![vec![Step::Collective(Box::new(Collective {
        nodes: nodes.to_vec(),
        rails: rails.to_vec(),
    }))]]
}

/// NICs of each rail grouped by the leaf they are cabled to, in order.
fn by_leaf(inv: &Inventory, nodes: &[NodeId], rail: u32) -> Vec<Vec<NicId>> {
    let mut groups: Vec<(usize, Vec<NicId>)> = Vec::new();
    for &n in nodes {
        let Some(nic) = nic_on(inv, n, rail) else {
            continue;
        };
        let leaf = inv.nic_leaf(nic).map(|(s, _)| s).unwrap_or(usize::MAX);
        match groups.iter_mut().find(|(l, _)| *l == leaf) {
            Some((_, v)) => v.push(nic),
            None => groups.push((leaf, vec![nic])),
        }
    }
    groups.into_iter().map(|(_, v)| v).collect()
}

/// Pairs within each leaf (traffic that never leaves the leaf); for nccl, a
/// collective over the nodes behind each leaf of the first rail.
pub fn per_leaf(inv: &Inventory, nodes: &[NodeId], rails: &[u32], collective: bool) -> Vec<Round> {
    if collective {
        let first = rails.first().copied().unwrap_or(0);
        let round: Round = by_leaf(inv, nodes, first)
            .into_iter()
            .filter(|g| g.len() > 1)
            .map(|g| {
                let nodes = g.iter().map(|&nic| inv.nics[nic].node).collect();
                Step::Collective(Box::new(Collective {
                    nodes,
                    rails: rails.to_vec(),
                }))
            })
            .collect();
        return if round.is_empty() {
            Vec::new()
        } else {
            vec![round]
        };
    }
    let mut rounds: Vec<Round> = vec![Vec::new(), Vec::new()];
    for &r in rails {
        for g in by_leaf(inv, nodes, r) {
            for c in g.chunks(2).filter(|c| c.len() == 2) {
                rounds[0].push(Step::Pair { a: c[0], b: c[1] });
            }
            if g.len() % 2 == 1 && g.len() > 1 {
                rounds[1].push(Step::Pair {
                    a: g[0],
                    b: g[g.len() - 1],
                });
            }
        }
    }
    rounds.retain(|r| !r.is_empty());
    rounds
}

/// NIC i behind leaf A ↔ NIC i behind leaf B, leaves paired in order, so
/// every flow crosses the spines.
pub fn cross_leaf(inv: &Inventory, nodes: &[NodeId], rails: &[u32]) -> Vec<Round> {
    let mut rounds: Vec<Round> = vec![Vec::new(), Vec::new()];
    for &r in rails {
        let groups = by_leaf(inv, nodes, r);
        for pair in groups.chunks(2) {
            if let [x, y] = pair {
                for (a, b) in x.iter().zip(y) {
                    rounds[0].push(Step::Pair { a: *a, b: *b });
                }
            }
        }
        if groups.len() % 2 == 1 && groups.len() > 1 {
            let (x, y) = (&groups[groups.len() - 1], &groups[0]);
            for (a, b) in x.iter().zip(y) {
                rounds[1].push(Step::Pair { a: *a, b: *b });
            }
        }
    }
    rounds.retain(|r| !r.is_empty());
    rounds
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn circle_method_is_a_round_robin() {
        for n in [2usize, 3, 4, 5, 8, 9, 16, 17] {
            let mut seen = HashSet::new();
            for k in 0..circle_rounds(n) {
                let mut used = HashSet::new();
                for (a, b) in circle_round(n, k) {
                    assert!(a < b && b < n);
                    assert!(
                        used.insert(a) && used.insert(b),
                        "n={n} k={k}: player twice in a round"
                    );
                    assert!(seen.insert((a, b)), "n={n}: pair ({a},{b}) twice");
                }
            }
            assert_eq!(seen.len(), n * (n - 1) / 2, "n={n}");
        }
    }
}
