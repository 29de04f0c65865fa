//! Planning: a checked suite and inventory into rounds of steps, with the
//! time it will take, what it covers and what its faults would isolate.
//! `rocegate plan` prints this without touching anything.

pub mod capacity;
pub mod coverage;
pub mod estimate;
pub mod patterns;
pub mod render;

use std::collections::HashSet;
use std::time::Duration;

use serde::Serialize;

use crate::config::check_suite::{FaultAction, Suite, Test, TestKind};
use crate::config::hostlist;
use crate::config::model::{End, Inventory, LinkKind, NicId, NodeId};
use crate::config::suite::Pattern;

pub use patterns::{Round, Step};

/// How the user narrowed the plan on the command line.
#[derive(Debug, Clone, Default)]
pub struct Narrowing {
    pub only: Vec<String>,
    pub nodes: Option<String>,
    pub exclude: Option<String>,
    /// Leave every fault out: a run that must not touch switch or NIC state.
    pub skip_faults: bool,
}

impl Narrowing {
    /// The narrowing as the command line gave it, for "partial run"
    /// notes; `None` when the whole suite runs on the whole pod.
    pub fn describe(&self) -> Option<String> {
        let mut parts = Vec::new();
        if !self.only.is_empty() {
            parts.push(format!("--only {}", self.only.join(" ")));
        }
        if let Some(n) = &self.nodes {
            parts.push(format!("--nodes {n}"));
        }
        if let Some(x) = &self.exclude {
            parts.push(format!("--exclude {x}"));
        }
        if self.skip_faults {
            parts.push("--skip-faults".into());
        }
        (!parts.is_empty()).then(|| parts.join(" "))
    }
}

/// A test of the suite the plan leaves out, and why.
#[derive(Debug, Clone, Serialize)]
pub struct SkippedTest {
    /// Index into `Suite::tests`.
    pub test: usize,
    pub reason: String,
}

#[derive(Debug)]
pub struct Plan {
    pub tests: Vec<TestPlan>,
    pub coverage: coverage::Coverage,
    pub estimate: Duration,
    pub disruptions: Vec<Disruption>,
    /// Tests left out (by narrowing, or with no steps on this pod), in
    /// suite order; each becomes a `skipped` verdict with its reason.
    pub skipped: Vec<SkippedTest>,
    /// The narrowing, when the run covers less than the whole suite on the
    /// whole pod.
    pub partial: Option<String>,
}

#[derive(Debug)]
pub struct TestPlan {
    /// Index into `Suite::tests`.
    pub test: usize,
    pub rounds: Vec<Round>,
    /// The nodes the test may use once narrowing is applied, in inventory
    /// order (what an audit reads).
    pub nodes: Vec<NodeId>,
    pub estimate: Duration,
    /// Fair shares of every step, for a test whose thresholds are written
    /// relative to them (`expect.fair_share`).
    pub capacity: Option<capacity::TestCapacity>,
}

impl TestPlan {
    pub fn steps(&self) -> usize {
        self.rounds.iter().map(Vec::len).sum()
    }
    pub fn max_concurrent(&self) -> usize {
        self.rounds.iter().map(Vec::len).max().unwrap_or(0)
    }
}

/// What a fault would take away, computed from the cabling.
#[derive(Debug, Clone, Serialize)]
pub struct Disruption {
    pub test: String,
    pub action: String,
    pub target: String,
    pub during: String,
    pub isolated_nics: Vec<String>,
    /// Nodes that lose at least one NIC.
    pub affected_nodes: Vec<String>,
    /// Nodes that lose every NIC.
    pub isolated_nodes: Vec<String>,
    /// Rails on which every NIC is isolated.
    pub dark_rails: Vec<u32>,
    /// Leaf–spine links taken down or out of routing (capacity lost,
    /// nothing isolated).
    pub fabric_links_down: usize,
    /// Why it is refused (the blast-radius limit, a switch no driver of
    /// this build can change), if it is.
    pub refused: Option<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    #[error("--only: no test named \"{0}\" in the suite (tests: {1})")]
    UnknownTest(String, String),
    #[error("--{0}: {1}")]
    BadHostlist(&'static str, String),
    #[error("--nodes/--exclude leave no node to test")]
    NoNodes,
    #[error("test \"{0}\" runs during \"{1}\", which has no steps on this inventory ({2}); a fault needs traffic to judge recovery: change the pattern or the nodes of \"{1}\"")]
    FaultWithoutTraffic(String, String, String),
}

/// Resolves `--only`, `--nodes`, `--exclude` into the tests and nodes that run.
fn narrow(
    suite: &Suite,
    inv: &Inventory,
    n: &Narrowing,
) -> Result<(Vec<usize>, HashSet<NodeId>), PlanError> {
    let mut keep: Vec<usize> = if n.only.is_empty() {
        (0..suite.tests.len()).collect()
    } else {
        let mut v = Vec::new();
        for name in &n.only {
            let Some(i) = suite.tests.iter().position(|t| &t.name == name) else {
                let all: Vec<&str> = suite.tests.iter().map(|t| t.name.as_str()).collect();
                return Err(PlanError::UnknownTest(name.clone(), all.join(", ")));
            };
            v.push(i);
            // A fault needs the traffic it runs during.
            if let TestKind::Fault(f) = &suite.tests[i].kind {
                v.push(f.during);
            }
        }
        v
    };
    keep.sort_unstable();
    keep.dedup();
    let resolve = |flag: &'static str, expr: &str| -> Result<HashSet<NodeId>, PlanError> {
        let names =
            hostlist::expand(expr).map_err(|e| PlanError::BadHostlist(flag, e.to_string()))?;
        names
            .iter()
            .map(|name| {
                inv.node_by_name.get(name).copied().ok_or_else(|| {
                    PlanError::BadHostlist(flag, format!("node \"{name}\" is not in the inventory"))
                })
            })
            .collect()
    };
    let mut nodes: HashSet<NodeId> = match &n.nodes {
        Some(e) => resolve("nodes", e)?,
        None => (0..inv.nodes.len()).collect(),
    };
    if let Some(e) = &n.exclude {
        for x in resolve("exclude", e)? {
            nodes.remove(&x);
        }
    }
    if nodes.is_empty() {
        return Err(PlanError::NoNodes);
    }
    Ok((keep, nodes))
}

fn rounds_for(test: &Test, inv: &Inventory, nodes: &[NodeId], seed: u64) -> Vec<Round> {
    let rails = &test.rails;
    let collective = matches!(test.kind, TestKind::Nccl(_));
    match (&test.kind, &test.pattern) {
        (TestKind::Fault(_) | TestKind::Audit(_), _) => Vec::new(),
        (TestKind::Nccl(_), None) => patterns::all_nodes(nodes, rails),
        (_, None) => Vec::new(),
        (_, Some(p)) => match p {
            Pattern::RailPairs => patterns::rail_pairs(inv, nodes, rails),
            Pattern::FullMesh => patterns::full_mesh(inv, nodes, rails),
            Pattern::Random(r) => {
                patterns::random(inv, nodes, rails, r.rounds, r.seed.unwrap_or(seed))
            }
            Pattern::Incast(i) => patterns::incast(inv, nodes, rails, i.senders, i.samples),
            Pattern::AllNodes => patterns::all_nodes(nodes, rails),
            Pattern::PerLeaf => patterns::per_leaf(inv, nodes, rails, collective),
            Pattern::CrossLeaf => patterns::cross_leaf(inv, nodes, rails),
        },
    }
}

/// Splits rounds larger than the concurrency cap, keeping step order.
fn cap_rounds(rounds: Vec<Round>, cap: Option<usize>) -> Vec<Round> {
    let Some(cap) = cap.filter(|&c| c > 0) else {
        return rounds;
    };
    let mut out = Vec::new();
    for round in rounds {
        if round.len() <= cap {
            out.push(round);
            continue;
        }
        let mut it = round.into_iter().peekable();
        while it.peek().is_some() {
            out.push(it.by_ref().take(cap).collect());
        }
    }
    out
}

pub fn build(
    suite: &Suite,
    inv: &Inventory,
    narrowing: &Narrowing,
    seed: u64,
) -> Result<Plan, PlanError> {
    let (keep, node_set) = narrow(suite, inv, narrowing)?;
    let narrowed_nodes = narrowing.nodes.is_some() || narrowing.exclude.is_some();
    let mut skipped: Vec<SkippedTest> = (0..suite.tests.len())
        .filter(|i| !keep.contains(i))
        .map(|test| SkippedTest {
            test,
            reason: format!("not selected: --only {}", narrowing.only.join(" ")),
        })
        .collect();
    let mut tests = Vec::new();
    for &i in &keep {
        let test = &suite.tests[i];
        let nodes: Vec<NodeId> = test
            .nodes
            .iter()
            .copied()
            .filter(|n| node_set.contains(n))
            .collect();
        let rounds = cap_rounds(rounds_for(test, inv, &nodes, seed), suite.max_concurrent);
        if rounds.is_empty() && test.kind.has_steps() {
            skipped.push(SkippedTest {
                test: i,
                reason: no_steps(test, &nodes, narrowed_nodes),
            });
            continue;
        }
        let estimate = match test.kind {
            TestKind::Audit(_) => estimate::AUDIT,
            _ => estimate::test_duration(test, inv, &rounds),
        };
        let capacity = test
            .expect
            .fair_share
            .is_some()
            .then(|| capacity::compute(test, inv, &rounds));
        tests.push(TestPlan {
            test: i,
            rounds,
            nodes,
            estimate,
            capacity,
        });
    }
    // A fault whose traffic has no steps cannot be judged: on the whole
    // pod that is a suite error, on a narrowed one a skip with the reason.
    // --skip-faults leaves every fault out.
    let mut faults_out = Vec::new();
    for tp in &tests {
        let test = &suite.tests[tp.test];
        let TestKind::Fault(f) = &test.kind else {
            continue;
        };
        let reason = if narrowing.skip_faults {
            Some("--skip-faults: this run changes no switch or NIC state".to_string())
        } else if let Some(why) = skipped.iter().find(|s| s.test == f.during) {
            if narrowing.describe().is_none() {
                return Err(PlanError::FaultWithoutTraffic(
                    test.name.clone(),
                    suite.tests[f.during].name.clone(),
                    why.reason.clone(),
                ));
            }
            Some(format!(
                "its traffic \"{}\" does not run: {}",
                suite.tests[f.during].name, why.reason
            ))
        } else if narrowed_nodes {
            // On a narrowed pod, a fault that cuts off NICs none of which
            // carries the narrowed traffic would change a device and judge
            // nothing (an uplink's effect depends on ECMP and is kept).
            let cut = cut_off(inv, f);
            let used: HashSet<NicId> = tests
                .iter()
                .filter(|t| t.test == f.during)
                .flat_map(|t| t.rounds.iter().flatten())
                .flat_map(|step| step.nics(inv).collect::<Vec<_>>())
                .collect();
            (!cut.is_empty() && !cut.iter().any(|n| used.contains(n))).then(|| {
                format!(
                    "it cuts off {} NIC(s), none of which carries \"{}\" on the nodes left by --nodes/--exclude",
                    cut.len(),
                    suite.tests[f.during].name
                )
            })
        } else {
            None
        };
        if let Some(reason) = reason {
            faults_out.push(tp.test);
            skipped.push(SkippedTest {
                test: tp.test,
                reason,
            });
        }
    }
    tests.retain(|tp| !faults_out.contains(&tp.test));
    skipped.sort_by_key(|s| s.test);
    // Faults run during their target's first round, as planned above
    // (narrowing always keeps a fault's target).
    for k in 0..tests.len() {
        let test = &suite.tests[tests[k].test];
        if let TestKind::Fault(f) = &test.kind {
            let target_round = tests
                .iter()
                .find(|tp| tp.test == f.during)
                .and_then(|tp| tp.rounds.first().map(|r| (tp, r)))
                .map(|(tp, r)| estimate::round_duration(&suite.tests[tp.test], inv, r))
                .unwrap_or_default();
            tests[k].estimate = estimate::fault_duration(test, f, target_round);
        }
    }
    let estimate = tests.iter().map(|t| t.estimate).sum();
    let coverage = coverage::compute(inv, &tests, &node_set);
    let disruptions = tests
        .iter()
        .filter_map(|tp| match &suite.tests[tp.test].kind {
            TestKind::Fault(f) => Some(disruption(suite, inv, tp.test, f)),
            _ => None,
        })
        .collect();
    Ok(Plan {
        tests,
        coverage,
        estimate,
        disruptions,
        skipped,
        partial: narrowing.describe(),
    })
}

/// Why `test` has no steps on `nodes`.
fn no_steps(test: &Test, nodes: &[NodeId], narrowed: bool) -> String {
    let pattern = format!(
        "pattern {}",
        render::pattern_name(test.pattern.as_ref(), &test.kind)
    );
    if narrowed {
        format!(
            "no steps on the {} node(s) left by --nodes/--exclude ({pattern} finds no pair or group among them)",
            nodes.len()
        )
    } else {
        format!(
            "no steps on this inventory ({pattern} finds no pair or group among its {} node(s))",
            nodes.len()
        )
    }
}

/// NICs whose only cable is `link`.
fn nics_behind_link(inv: &Inventory, link: usize) -> Vec<NicId> {
    let l = &inv.links[link];
    match (&l.a, &l.b) {
        (End::Nic(n), _) | (_, End::Nic(n)) => vec![*n],
        _ => Vec::new(),
    }
}

/// NICs a fault cuts off: those behind the flapped link, or behind any
/// link of the reset leaf or lost spine. A route change cuts off nothing:
/// it withdraws one switch-to-switch link from ECMP.
pub fn cut_off(inv: &Inventory, f: &crate::config::check_suite::Fault) -> Vec<NicId> {
    match &f.action {
        FaultAction::LinkFlap { link, .. } => nics_behind_link(inv, *link),
        FaultAction::LeafReset { switch, .. } | FaultAction::SpineLoss { switch, .. } => inv
            .switches[*switch]
            .links
            .iter()
            .flat_map(|&l| nics_behind_link(inv, l))
            .collect(),
        FaultAction::RouteChange { .. } => Vec::new(),
    }
}

pub fn disruption(
    suite: &Suite,
    inv: &Inventory,
    test: usize,
    f: &crate::config::check_suite::Fault,
) -> Disruption {
    let nics = cut_off(inv, f);
    let (action, target, fabric_down) = match &f.action {
        FaultAction::LinkFlap { end, link } => {
            let fabric = usize::from(inv.links[*link].kind == LinkKind::Fabric);
            ("link_flap".to_string(), inv.end_name(end), fabric)
        }
        FaultAction::LeafReset { switch, mode } | FaultAction::SpineLoss { switch, mode } => {
            let fabric = inv.switches[*switch]
                .links
                .iter()
                .filter(|&&l| inv.links[l].kind == LinkKind::Fabric)
                .count();
            let kind = match f.action {
                FaultAction::SpineLoss { .. } => "spine_loss",
                _ => "leaf_reset",
            };
            (
                format!("{kind} ({})", mode.label()),
                inv.switches[*switch].name.clone(),
                fabric,
            )
        }
        // The link stays up, but carries nothing routed: its capacity is lost.
        FaultAction::RouteChange { switch, port, link } => (
            "route_change".to_string(),
            format!("{}:{port}", inv.switches[*switch].name),
            usize::from(inv.links[*link].kind == LinkKind::Fabric),
        ),
    };
    let nic_set: HashSet<NicId> = nics.iter().copied().collect();
    let mut affected: Vec<NodeId> = nics.iter().map(|&n| inv.nics[n].node).collect();
    affected.sort_unstable();
    affected.dedup();
    let isolated: Vec<NodeId> = affected
        .iter()
        .copied()
        .filter(|&node| inv.nodes[node].nics.iter().all(|n| nic_set.contains(n)))
        .collect();
    let dark_rails: Vec<u32> = (0..inv.fabric.rails)
        .filter(|&r| {
            let on_rail: Vec<NicId> = (0..inv.nics.len())
                .filter(|&n| inv.nics[n].rail == r)
                .collect();
            !on_rail.is_empty() && on_rail.iter().all(|n| nic_set.contains(n))
        })
        .collect();
    let limit = &inv.fabric.blast_radius;
    let mut refused = Vec::new();
    // A device no driver of this build can change is refused up front.
    if let Err(e) = crate::fault::target(inv, f) {
        refused.push(e);
    }
    if nics.len() as u32 > limit.max_isolated_nics {
        refused.push(format!(
            "isolates {} NICs, limit is {} (fabric.blast_radius.max_isolated_nics)",
            nics.len(),
            limit.max_isolated_nics
        ));
    }
    if isolated.len() as u32 > limit.max_isolated_nodes {
        refused.push(format!(
            "isolates {} nodes, limit is {} (fabric.blast_radius.max_isolated_nodes)",
            isolated.len(),
            limit.max_isolated_nodes
        ));
    }
    if !dark_rails.is_empty() && !limit.allow_rail_dark {
        refused.push(format!(
            "takes rail(s) {} dark (fabric.blast_radius.allow_rail_dark is false)",
            list(&dark_rails)
        ));
    }
    let names = |v: &[NodeId]| {
        v.iter()
            .map(|&n| inv.nodes[n].name.clone())
            .collect::<Vec<_>>()
    };
    Disruption {
        test: suite.tests[test].name.clone(),
        action,
        target,
        during: suite.tests[f.during].name.clone(),
        isolated_nics: nics.iter().map(|&n| inv.nic_name(n)).collect(),
        affected_nodes: names(&affected),
        isolated_nodes: names(&isolated),
        dark_rails,
        fabric_links_down: fabric_down,
        refused: (!refused.is_empty()).then(|| refused.join("; ")),
    }
}

/// `0, 1, 3`: rail numbers for a person.
fn list(xs: &[u32]) -> String {
    xs.iter().map(u32::to_string).collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod tests;
