//! Localisation: every failing result, audit deviation, counter finding and
//! peer outlier of a run, turned into a ranked list of components to blame.
//! A pure function of the event log (the topology comes from `run_started`),
//! so `rocegate report` names the same suspects as the run did.
//!
//! Each observation touches the components that could explain it: a NIC
//! pair touches both NICs, their cables, nodes, rails and leaves, and when
//! the NICs sit on different leaves, both leaves' uplinks; a finding touches
//! the component it was read on and what contains it (a NIC's node, a
//! port's cable or uplink). Suspects are then accepted by explaining away:
//!
//! ```text
//! score(c) = Σ over tests and checks q of
//!            (unexplained failures of q that c touches, weighted)
//!          × (share of c's results in q that failed)
//! ```
//!
//! The first factor is how much a component would explain; the second is
//! how consistently its results failed, so a node whose every NIC is slow
//! outranks each NIC, and a NIC whose pairs all fail outranks its node,
//! whose other NICs pass. The best component is accepted, the failures it
//! touches are removed, and the rest are scored again, until no component
//! reaches [`MIN_SCORE`]. Ties go to the more specific component (NIC, then
//! cable, then uplinks, node, switch, rail). A score is therefore "failures
//! explained, discounted by inconsistency"; it compares suspects of one run,
//! not runs.
//!
//! A warning on a pair across leaves is an ECMP collision (static hashing
//! put two flows on one uplink; the test's cross-spine distribution is
//! judged on its own): it is reported as a collision between the two
//! leaves, never as a suspect. A collective implicates each of its nodes
//! only by 1/n, so a failing all_reduce alone names nobody: it is left
//! unexplained for bisection.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use serde::{Deserialize, Serialize};

use super::findings::listed;
use super::stats::modified_z;
use super::Verdict;
use crate::report::events::{Finding, Outcome, Record, TopoNic, Topology, VerdictRecord};

/// A peer outlier must differ from its peers' median by at least this much
/// (percent) as well as by its modified z-score.
pub const PEER_TOLERANCE_PCT: f64 = 3.0;
/// The same for latencies, which wobble by a few percent from run to run
/// on a healthy fabric (a 1 µs latency moves by 0.01–0.05 µs, and perftest
/// prints two decimals): only a tenth more than the peers is worth a look.
pub const LATENCY_TOLERANCE_PCT: f64 = 10.0;
/// Fewer peers than this and peer comparison is not attempted (absolute
/// thresholds decide alone).
pub const MIN_PEERS: usize = 5;
/// The MAD is floored at this fraction of the median: values capped at
/// line rate agree to the last digit and would make every wobble an outlier.
pub const MAD_FLOOR: f64 = 0.005;
/// |modified z| above this is an outlier (Iglewicz and Hoaglin's 3.5).
pub const Z_LIMIT: f64 = 3.5;
/// A component explaining less than this is not named.
pub const MIN_SCORE: f64 = 0.5;
/// The counter rule that names an uplink ECMP loaded above its siblings.
const ECMP_CHECK: &str = "counters.ecmp_balance";
/// The second pass's finding on a suspect (`runner::retest`): `ok` clears
/// it, `deviation` confirms it.
pub const RETEST_CHECK: &str = "localise.retest";
/// Bisection's finding on a node that fails a collective with a healthy
/// reference (`runner::bisect`): any of its NICs or cables may be why.
pub const BISECT_CHECK: &str = "collective.bisect";
/// The verdict kind of the second pass's and bisection's findings: not
/// traffic, so their components are read from the findings alone.
pub const LOCALISE_KIND: &str = "localise";

/// One component to blame.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Suspect {
    /// Inventory names: `gpu003:mlx5_1`, `gpu010`, `r0-leaf2:swp11 <-> spine3:swp2`.
    pub component: String,
    /// `nic`, `cable`, `uplink`, `node`, `leaf`, `spine`, `switch`, `rail`.
    pub kind: String,
    pub score: f64,
    /// One line per test or check that implicates it, then what the checks read.
    pub evidence: Vec<String>,
    /// The failing results it explains: `test component`.
    pub results: Vec<ResultRef>,
    /// Whether traffic implicates it (failing results or a peer
    /// comparison), not only what a check read: only these are retested.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub from_traffic: bool,
}

impl Suspect {
    /// What a person reads: `nic gpu003:mlx5_1`, `rail 0` (a rail's name
    /// already says what it is, so the kind is not repeated).
    pub fn label(&self) -> String {
        if self.component.starts_with(&format!("{} ", self.kind)) {
            self.component.clone()
        } else {
            format!("{} {}", self.kind, self.component)
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ResultRef {
    pub test: String,
    pub component: String,
}

/// ECMP collisions: cross-leaf pairs under their warning line, by leaf
/// pair, or an uplink the counter ledger found loaded above its siblings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Collision {
    /// The two leaves (`r0-leaf1 <-> r0-leaf2`) or the uplink port.
    pub leaves: String,
    pub results: Vec<ResultRef>,
    pub message: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Localisation {
    pub suspects: Vec<Suspect>,
    /// Suspects a retest against healthy partners cleared, with why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cleared: Vec<Suspect>,
    pub collisions: Vec<Collision>,
    /// Failing results no component explains well enough to name.
    pub unexplained: Vec<ResultRef>,
}

/// What an observation can blame. The variant order is the tie-break.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Comp {
    Nic(String),
    Cable(String),
    Uplinks(String),
    Link(usize),
    Node(String),
    Switch(String),
    Rail(u32),
    Other(String),
}

#[derive(Debug)]
struct Obs {
    class: String,
    failing: bool,
    weight: f64,
    touches: BTreeSet<Comp>,
    result: Option<ResultRef>,
    /// A line of evidence shown under the suspect that explains it.
    note: Option<String>,
    /// Where its note goes among the evidence: what a check read (0), a
    /// peer comparison (1), then the failing results (2).
    rank: u8,
    /// A cross-leaf warning: the leaf pair, reported as an ECMP collision
    /// unless a suspect explains it.
    collision: Option<String>,
}

struct Topo<'a> {
    nic: HashMap<&'a str, &'a TopoNic>,
    port_nic: HashMap<&'a str, &'a str>,
    port_link: HashMap<&'a str, usize>,
    role: HashMap<&'a str, &'a str>,
    leaf_links: HashMap<&'a str, Vec<usize>>,
    nodes: BTreeSet<&'a str>,
    links: &'a [[String; 2]],
}

impl<'a> Topo<'a> {
    fn new(t: &'a Topology) -> Topo<'a> {
        let mut port_link = HashMap::new();
        let mut leaf_links: HashMap<&str, Vec<usize>> = HashMap::new();
        let role: HashMap<&str, &str> = t
            .switches
            .iter()
            .map(|s| (s.name.as_str(), s.role.as_str()))
            .collect();
        for (i, [a, b]) in t.fabric_links.iter().enumerate() {
            for end in [a, b] {
                port_link.insert(end.as_str(), i);
                let sw = end.split(':').next().unwrap_or("");
                if role.get(sw) == Some(&"leaf") {
                    leaf_links.entry(sw).or_default().push(i);
                }
            }
        }
        Topo {
            nic: t.nics.iter().map(|n| (n.name.as_str(), n)).collect(),
            port_nic: t
                .nics
                .iter()
                .filter_map(|n| Some((n.port.as_deref()?, n.name.as_str())))
                .collect(),
            port_link,
            role,
            leaf_links,
            nodes: t.nics.iter().map(|n| n.node.as_str()).collect(),
            links: &t.fabric_links,
        }
    }

    fn leaf_of(&self, nic: &str) -> Option<&'a str> {
        let port = self.nic.get(nic)?.port.as_deref()?;
        port.split(':').next()
    }

    /// What a NIC's own results touch.
    fn nic_touches(&self, nic: &str, into: &mut BTreeSet<Comp>) {
        let Some(n) = self.nic.get(nic) else {
            into.insert(Comp::Other(nic.to_string()));
            return;
        };
        into.insert(Comp::Nic(n.name.clone()));
        into.insert(Comp::Cable(n.name.clone()));
        into.insert(Comp::Node(n.node.clone()));
        into.insert(Comp::Rail(n.rail));
        if let Some(leaf) = self.leaf_of(nic) {
            into.insert(Comp::Switch(leaf.to_string()));
        }
    }

    /// What a result over whole nodes touches (a collective, a bisection
    /// finding): the nodes, their NICs and cables, and the rails.
    fn nodes_touch(&self, nodes: &[String], into: &mut BTreeSet<Comp>) {
        let set: BTreeSet<&str> = nodes.iter().map(String::as_str).collect();
        for n in nodes {
            into.insert(Comp::Node(n.clone()));
        }
        for nic in self.nic.values().filter(|n| set.contains(n.node.as_str())) {
            into.insert(Comp::Nic(nic.name.clone()));
            into.insert(Comp::Cable(nic.name.clone()));
            into.insert(Comp::Rail(nic.rail));
        }
    }

    /// What traffic between `nics` touches: each NIC's own components, and
    /// when they sit on different leaves, those leaves' uplinks.
    fn traffic(&self, nics: &[String]) -> BTreeSet<Comp> {
        let mut t = BTreeSet::new();
        for n in nics {
            self.nic_touches(n, &mut t);
        }
        let leaves: BTreeSet<&str> = nics.iter().filter_map(|n| self.leaf_of(n)).collect();
        if leaves.len() > 1 {
            for l in leaves {
                t.insert(Comp::Uplinks(l.to_string()));
                for &i in self.leaf_links.get(l).into_iter().flatten() {
                    t.insert(Comp::Link(i));
                }
            }
        }
        t
    }

    /// What a finding on `component` by `check` touches. A cable's own
    /// findings (its component names both ends: counter rules, cabling)
    /// blame the cable alone; a physical reading on one end (link speed,
    /// optics, a port's counters) blames the cable and what sits at that
    /// end; a configuration reading blames the NIC or the switch.
    fn finding(&self, check: &str, component: &str) -> BTreeSet<Comp> {
        let mut t = BTreeSet::new();
        let cable = component.contains("<->") || check.starts_with("cabling.");
        let physical =
            !check.starts_with("nic.") && !check.starts_with("switch.") || check == "switch.link";
        let switch_of = |part: &str| Comp::Switch(part.split(':').next().unwrap_or(part).into());
        for part in component.split("<->").map(str::trim) {
            if let Some(n) = self.nic.get(part) {
                if cable {
                    t.insert(Comp::Cable(n.name.clone()));
                } else if check.starts_with("nic.") {
                    t.insert(Comp::Nic(n.name.clone()));
                    t.insert(Comp::Node(n.node.clone()));
                    t.insert(Comp::Rail(n.rail));
                } else {
                    t.insert(Comp::Cable(n.name.clone()));
                    t.insert(Comp::Nic(n.name.clone()));
                    t.insert(Comp::Node(n.node.clone()));
                }
            } else if let Some(nic) = self.port_nic.get(part) {
                if cable {
                    t.insert(Comp::Cable(nic.to_string()));
                } else if physical {
                    t.insert(Comp::Cable(nic.to_string()));
                    t.insert(Comp::Nic(nic.to_string()));
                    t.insert(switch_of(part));
                } else {
                    t.insert(switch_of(part));
                }
            } else if let Some(&i) = self.port_link.get(part) {
                if cable || physical {
                    t.insert(Comp::Link(i));
                }
                if !cable {
                    if physical {
                        let leaf = self.links[i][0].split(':').next().unwrap_or("");
                        if self.role.get(leaf) == Some(&"leaf") {
                            t.insert(Comp::Uplinks(leaf.to_string()));
                        }
                    }
                    t.insert(switch_of(part));
                }
            } else if self.role.contains_key(part) {
                t.insert(Comp::Switch(part.to_string()));
            } else if self.nodes.contains(part) {
                if check == BISECT_CHECK {
                    self.nodes_touch(&[part.to_string()], &mut t);
                } else {
                    t.insert(Comp::Node(part.to_string()));
                }
            } else if let Some((sw, _)) = part
                .split_once(':')
                .filter(|(sw, _)| self.role.contains_key(sw))
            {
                t.insert(Comp::Switch(sw.to_string()));
            } else {
                t.insert(Comp::Other(part.to_string()));
            }
        }
        t
    }

    fn name(&self, c: &Comp) -> (String, String) {
        match c {
            Comp::Nic(n) => (n.clone(), "nic".into()),
            Comp::Cable(n) => {
                let port = self
                    .nic
                    .get(n.as_str())
                    .and_then(|x| x.port.clone())
                    .unwrap_or_else(|| "its leaf".into());
                (format!("{n} <-> {port}"), "cable".into())
            }
            Comp::Uplinks(l) => (format!("{l} uplinks"), "uplink".into()),
            Comp::Link(i) => {
                let [a, b] = &self.links[*i];
                (format!("{a} <-> {b}"), "uplink".into())
            }
            Comp::Node(n) => (n.clone(), "node".into()),
            Comp::Switch(s) => (
                s.clone(),
                self.role
                    .get(s.as_str())
                    .copied()
                    .unwrap_or("switch")
                    .into(),
            ),
            Comp::Rail(r) => (format!("rail {r}"), "rail".into()),
            Comp::Other(s) => (s.clone(), "component".into()),
        }
    }
}

/// The NICs (or nodes) a traffic verdict's component names.
enum Parties {
    Nics(Vec<String>),
    Nodes(Vec<String>),
}

fn parties(topo: &Topo, v: &VerdictRecord) -> Option<Parties> {
    let c = v.component.as_str();
    if let Some((a, b)) = c.split_once("<->") {
        return Some(Parties::Nics(vec![
            a.trim().to_string(),
            b.trim().to_string(),
        ]));
    }
    if let Some((r, _senders)) = c.split_once("<-") {
        // An incast is judged at its receiver.
        return Some(Parties::Nics(vec![r.trim().to_string()]));
    }
    // A collective: `gpu[001-016] rails 0-7`.
    let hosts = c.split(" rail").next().unwrap_or(c);
    let nodes = crate::config::hostlist::expand(hosts).ok()?;
    (!nodes.is_empty() && nodes.iter().all(|n| topo.nodes.contains(n.as_str())))
        .then_some(Parties::Nodes(nodes))
}

/// Whether smaller values of this unit are better (latency).
fn lower_is_better(unit: Option<&str>) -> bool {
    matches!(unit, Some("us" | "ms" | "s"))
}

fn is_traffic(kind: &str) -> bool {
    matches!(kind, "perftest" | "iperf" | "nccl")
}

/// Names and ranks the suspects of a run.
pub fn localise(records: &[Record]) -> Localisation {
    let started = crate::report::events::run_started(records);
    let empty = Topology::default();
    let topology = started.map_or(&empty, |s| &s.topology);
    let observe_only: &[String] = started.map_or(&[], |s| &s.gate_observe_only);
    let topo = Topo::new(topology);
    let mut obs: Vec<Obs> = Vec::new();
    let mut traffic: Vec<&VerdictRecord> = Vec::new();
    let mut cleared: BTreeMap<&str, &str> = BTreeMap::new();
    for r in records {
        match r {
            Record::Verdict(v) if is_traffic(&v.kind) => {
                traffic.push(v);
                if let Some(o) = traffic_obs(&topo, v) {
                    obs.push(o);
                }
            }
            Record::Finding(f) if f.check == RETEST_CHECK => {
                if f.outcome == Outcome::Ok {
                    cleared.insert(f.component.as_str(), f.message.as_str());
                } else if let Some(o) = finding_obs(&topo, f, observe_only) {
                    obs.push(o);
                }
            }
            Record::Finding(f) => {
                if let Some(o) = finding_obs(&topo, f, observe_only) {
                    obs.push(o);
                }
            }
            _ => {}
        }
    }
    obs.extend(peer_obs(&topo, &traffic));
    let mut loc = explain_away(&topo, obs);
    // A suspect a retest cleared is listed as cleared; what it explained
    // is left unexplained.
    let (kept, gone): (Vec<Suspect>, Vec<Suspect>) = std::mem::take(&mut loc.suspects)
        .into_iter()
        .partition(|s| !cleared.contains_key(s.component.as_str()));
    for mut s in gone {
        loc.unexplained.extend(s.results.clone());
        s.evidence
            .insert(0, cleared[s.component.as_str()].to_string());
        loc.cleared.push(s);
    }
    loc.unexplained.sort();
    loc.unexplained.dedup();
    loc.suspects = kept;
    loc
}

fn traffic_obs(topo: &Topo, v: &VerdictRecord) -> Option<Obs> {
    if matches!(v.verdict, Verdict::Error | Verdict::Skipped) {
        return None;
    }
    let result = ResultRef {
        test: v.test.clone(),
        component: v.component.clone(),
    };
    let failing = matches!(v.verdict, Verdict::Fail | Verdict::Warn);
    let (touches, weight) = match parties(topo, v)? {
        Parties::Nics(nics) => {
            let leaves: BTreeSet<&str> = nics.iter().filter_map(|n| topo.leaf_of(n)).collect();
            if v.verdict == Verdict::Warn && leaves.len() > 1 {
                // Only the uplinks can explain it; if none is named, it
                // is reported as a collision.
                let key = leaves.iter().copied().collect::<Vec<_>>().join(" <-> ");
                return Some(Obs {
                    class: v.test.clone(),
                    failing: true,
                    weight: 1.0,
                    touches: topo.traffic(&nics),
                    note: Some(format!("{} {}: {}", v.test, v.component, v.message)),
                    result: Some(result),
                    rank: 2,
                    collision: Some(key),
                });
            }
            (topo.traffic(&nics), 1.0)
        }
        Parties::Nodes(nodes) => {
            // Any NIC or cable of its nodes can explain a collective.
            let mut t = BTreeSet::new();
            topo.nodes_touch(&nodes, &mut t);
            (t, 1.0 / nodes.len().max(1) as f64)
        }
    };
    Some(Obs {
        class: v.test.clone(),
        failing,
        weight,
        touches,
        note: failing.then(|| format!("{} {}: {}", v.test, v.component, v.message)),
        result: Some(result),
        rank: 2,
        collision: None,
    })
}

fn finding_obs(topo: &Topo, f: &Finding, observe_only: &[String]) -> Option<Obs> {
    let (failing, weight) = match f.outcome {
        Outcome::Ok => (false, 1.0),
        Outcome::Deviation => (true, 1.0),
        Outcome::Warning => (true, 0.5),
        Outcome::NotAvailable | Outcome::Error => return None,
    };
    // A hot uplink is ECMP placing more flows on one link: a collision,
    // named at that uplink, unless a suspect on those uplinks explains it.
    if f.check == ECMP_CHECK && failing {
        return Some(Obs {
            class: f.check.clone(),
            failing: true,
            weight,
            touches: topo.finding(&f.check, &f.component),
            result: Some(ResultRef {
                test: f.test.clone(),
                component: f.component.clone(),
            }),
            note: Some(format!("{} {}: {}", f.check, f.component, f.message)),
            rank: 0,
            collision: Some(f.component.clone()),
        });
    }
    let failing = failing && !listed(observe_only, &f.check);
    Some(Obs {
        class: f.check.clone(),
        failing,
        weight,
        touches: topo.finding(&f.check, &f.component),
        result: failing.then(|| ResultRef {
            test: f.test.clone(),
            component: f.component.clone(),
        }),
        note: failing.then(|| format!("{} {}: {}", f.check, f.component, f.message)),
        rank: 0,
        collision: None,
    })
}

/// Peer outliers: per test, each NIC's median over its results, against
/// the other NICs of its rail and of its leaf.
fn peer_obs(topo: &Topo, traffic: &[&VerdictRecord]) -> Vec<Obs> {
    // Per test and NIC: its values, and the partners they were measured with.
    type Values = (Vec<f64>, BTreeSet<String>);
    let mut by_test: BTreeMap<&str, BTreeMap<String, Values>> = BTreeMap::new();
    let mut lower: HashMap<&str, bool> = HashMap::new();
    let mut units: HashMap<&str, &str> = HashMap::new();
    for v in traffic {
        let (Some(value), Some(Parties::Nics(nics))) = (v.value, parties(topo, v)) else {
            continue;
        };
        if matches!(v.verdict, Verdict::Error | Verdict::Skipped) || !value.is_finite() {
            continue;
        }
        // Pairs across leaves carry ECMP placement, not the NIC.
        let leaves: BTreeSet<&str> = nics.iter().filter_map(|n| topo.leaf_of(n)).collect();
        if leaves.len() > 1 {
            continue;
        }
        lower.insert(&v.test, lower_is_better(v.unit.as_deref()));
        units.insert(&v.test, v.unit.as_deref().unwrap_or(""));
        let per = by_test.entry(&v.test).or_default();
        for n in &nics {
            let e = per.entry(n.clone()).or_default();
            e.0.push(value);
            e.1.extend(nics.iter().filter(|p| *p != n).cloned());
        }
    }
    let mut out = Vec::new();
    for (test, per) in by_test {
        let medians: BTreeMap<&str, f64> = per
            .iter()
            .filter_map(|(n, v)| Some((n.as_str(), super::stats::median(&v.0)?)))
            .collect();
        let mut flagged: BTreeMap<&str, String> = BTreeMap::new();
        let mut judged: BTreeSet<&str> = BTreeSet::new();
        let groups = peer_groups(topo, &medians);
        for (label, members) in groups {
            if members.len() < MIN_PEERS {
                continue;
            }
            let values: Vec<f64> = members.iter().map(|n| medians[n]).collect();
            let Some(mid) = super::stats::median(&values) else {
                continue;
            };
            let z = modified_z(&values, MAD_FLOOR);
            for (i, n) in members.iter().enumerate() {
                judged.insert(n);
                let effect = if mid != 0.0 {
                    100.0 * (values[i] - mid) / mid.abs()
                } else {
                    0.0
                };
                let worse = if lower[test] {
                    z[i] > Z_LIMIT && effect >= LATENCY_TOLERANCE_PCT
                } else {
                    z[i] < -Z_LIMIT && effect <= -PEER_TOLERANCE_PCT
                };
                if worse && !flagged.contains_key(n) {
                    let unit = units[test];
                    flagged.insert(
                        n,
                        format!(
                            "{test}: {n} median {:.2} {unit} against {label} median {:.2} {unit} ({effect:+.1} %, modified z {:.1}, {} peers)",
                            values[i],
                            mid,
                            z[i],
                            members.len()
                        ),
                    );
                }
            }
        }
        for n in judged {
            let mut touches = BTreeSet::new();
            topo.nic_touches(n, &mut touches);
            // Measured with fewer than three partners, a NIC's value is
            // as much theirs: a slow partner explains it too.
            let partners = &per[n].1;
            if partners.len() < 3 {
                for p in partners {
                    topo.nic_touches(p, &mut touches);
                }
            }
            let note = flagged.get(n).cloned();
            out.push(Obs {
                class: format!("{test} (peers)"),
                failing: note.is_some(),
                weight: 1.0,
                touches,
                result: None,
                note,
                rank: 1,
                collision: None,
            });
        }
    }
    out
}

/// A test's NICs by rail and by leaf.
fn peer_groups<'a>(topo: &Topo, medians: &BTreeMap<&'a str, f64>) -> Vec<(String, Vec<&'a str>)> {
    let mut groups: BTreeMap<String, Vec<&str>> = BTreeMap::new();
    for &n in medians.keys() {
        if let Some(nic) = topo.nic.get(n) {
            groups
                .entry(format!("rail {}", nic.rail))
                .or_default()
                .push(n);
        }
        if let Some(leaf) = topo.leaf_of(n) {
            groups.entry(leaf.to_string()).or_default().push(n);
        }
    }
    groups.into_iter().collect()
}

fn explain_away(topo: &Topo, obs: Vec<Obs>) -> Localisation {
    // Per (component, class): results and failures, over every observation.
    let mut total: HashMap<(&Comp, &str), (f64, f64)> = HashMap::new();
    for o in &obs {
        for c in &o.touches {
            let e = total.entry((c, o.class.as_str())).or_default();
            e.0 += 1.0;
            if o.failing {
                e.1 += 1.0;
            }
        }
    }
    let consistency = |c: &Comp, class: &str| {
        total
            .get(&(c, class))
            .map_or(0.0, |(n, f)| if *n > 0.0 { f / n } else { 0.0 })
    };
    let mut open: Vec<usize> = (0..obs.len()).filter(|&i| obs[i].failing).collect();
    let mut suspects = Vec::new();
    loop {
        // A collision counts only for the uplinks, and only for uplinks
        // that something else (a failing pair, a port reading) implicates:
        // collisions alone are ECMP, not a suspect. A hot uplink speaks of
        // its own link only: a weak optic on one uplink does not move flows
        // onto its siblings, so their hashing luck must not turn that link's
        // suspect into "all of the leaf's uplinks".
        let solid: BTreeSet<&Comp> = open
            .iter()
            .filter(|&&i| obs[i].collision.is_none())
            .flat_map(|&i| &obs[i].touches)
            .collect();
        let mut score: BTreeMap<&Comp, f64> = BTreeMap::new();
        for &i in &open {
            let o = &obs[i];
            for c in &o.touches {
                let counts = o.collision.is_none()
                    || solid.contains(c)
                        && match c {
                            Comp::Link(_) => true,
                            Comp::Uplinks(_) => o.class != ECMP_CHECK,
                            _ => false,
                        };
                if counts {
                    *score.entry(c).or_default() += o.weight * consistency(c, &o.class);
                }
            }
        }
        // Highest score; ties to the earlier (more specific) component.
        let best = score
            .iter()
            .fold(None::<(&Comp, f64)>, |acc, (c, s)| match acc {
                Some((_, bs)) if bs >= *s - 1e-9 => acc,
                _ => Some((c, *s)),
            });
        let Some((comp, s)) = best else { break };
        if s < MIN_SCORE {
            break;
        }
        let comp = (*comp).clone();
        let (explained, rest): (Vec<usize>, Vec<usize>) =
            open.iter().partition(|&&i| obs[i].touches.contains(&comp));
        open = rest;
        suspects.push(describe(topo, &comp, s, &explained, &obs, &consistency));
    }
    let mut collided: BTreeMap<&str, Vec<ResultRef>> = BTreeMap::new();
    let mut unexplained: Vec<ResultRef> = Vec::new();
    for &i in &open {
        let Some(r) = obs[i].result.clone() else {
            continue;
        };
        match &obs[i].collision {
            Some(leaves) => collided.entry(leaves).or_default().push(r),
            None => unexplained.push(r),
        }
    }
    unexplained.sort();
    unexplained.dedup();
    let collisions = collided
        .into_iter()
        .map(|(at, results)| Collision {
            message: if at.contains("<->") {
                format!(
                    "{} cross-leaf result(s) between {at} under their warning line only, and nothing else wrong on those leaves' uplinks: ECMP collisions (static hashing put two flows on one uplink), not a fault",
                    results.len()
                )
            } else {
                format!(
                    "hot uplink {at} in {} window(s): ECMP placed more flows on it than on its siblings (a collision, not a fault; the pairs through it were slower)",
                    results.len()
                )
            },
            leaves: at.to_string(),
            results,
        })
        .collect();
    Localisation {
        suspects,
        cleared: Vec::new(),
        collisions,
        unexplained,
    }
}

fn describe(
    topo: &Topo,
    comp: &Comp,
    score: f64,
    explained: &[usize],
    obs: &[Obs],
    consistency: &dyn Fn(&Comp, &str) -> f64,
) -> Suspect {
    let (component, kind) = topo.name(comp);
    let mut per_class: BTreeMap<&str, usize> = BTreeMap::new();
    let mut notes: Vec<(u8, &str)> = Vec::new();
    let mut from_traffic = false;
    let mut results = Vec::new();
    for &i in explained {
        let o = &obs[i];
        *per_class.entry(&o.class).or_default() += 1;
        if let Some(r) = &o.result {
            results.push(r.clone());
        }
        if let Some(n) = &o.note {
            notes.push((o.rank, n));
        }
        from_traffic |= o.rank > 0 && o.collision.is_none();
    }
    let mut evidence: Vec<String> = per_class
        .iter()
        .map(|(class, n)| {
            format!(
                "{class}: {n} failing, {:.0} % of its results there failed",
                100.0 * consistency(comp, class)
            )
        })
        .collect();
    // What the checks read and the peer comparisons first, then a few results.
    notes.sort_by_key(|n| n.0);
    let shown = 6;
    evidence.extend(notes.iter().take(shown).map(|n| n.1.to_string()));
    if notes.len() > shown {
        evidence.push(format!("… and {} more", notes.len() - shown));
    }
    results.sort();
    results.dedup();
    Suspect {
        component,
        kind,
        score: (score * 100.0).round() / 100.0,
        evidence,
        results,
        from_traffic,
    }
}

/// NICs (`node:device`) in a suspect (every NIC of a suspect node) or in
/// a failing result no suspect explains: never a retest's healthy partner.
pub fn tainted_nics(records: &[Record], loc: &Localisation) -> std::collections::BTreeSet<String> {
    let mut out = std::collections::BTreeSet::new();
    let mut add = |text: &str| {
        for part in text.split("<-").flat_map(|p| p.split("<->")) {
            let part = part.trim().trim_start_matches('>').trim();
            if part.contains(':') {
                out.insert(part.to_string());
            }
        }
    };
    // A NIC whose failures a suspect explains is as healthy as anyone
    // knows; one in a failure nobody explains is not.
    for r in &loc.unexplained {
        add(&r.component);
    }
    for s in &loc.suspects {
        add(&s.component);
    }
    // A suspect node's every NIC.
    let nodes: std::collections::BTreeSet<&str> = loc
        .suspects
        .iter()
        .filter(|s| s.kind == "node")
        .map(|s| s.component.as_str())
        .collect();
    if let Some(rs) = crate::report::events::run_started(records) {
        for n in &rs.topology.nics {
            if nodes.contains(n.node.as_str()) {
                out.insert(n.name.clone());
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::events::{TopoSwitch, VerdictRecord};
    use serde_json::json;

    /// `nodes` nodes on one rail, half on each of two leaves, each leaf
    /// with four uplinks to two spines.
    fn started(nodes: usize) -> Record {
        let half = nodes / 2;
        let mut topo = Topology::default();
        for i in 0..nodes {
            let leaf = if i < half { 1 } else { 2 };
            topo.nics.push(TopoNic {
                name: format!("gpu{:02}:mlx5_0", i + 1),
                node: format!("gpu{:02}", i + 1),
                rail: 0,
                speed_gbps: 400,
                port: Some(format!("r0-leaf{leaf}:swp{}", i % half + 1)),
            });
        }
        for (name, role) in [
            ("r0-leaf1", "leaf"),
            ("r0-leaf2", "leaf"),
            ("spine1", "spine"),
            ("spine2", "spine"),
        ] {
            topo.switches.push(TopoSwitch {
                name: name.into(),
                role: role.into(),
            });
        }
        topo.fabric_links = fabric_links();
        let mut s: crate::report::events::RunStarted = serde_json::from_value(json!({
            "rocegate_version": "0", "suite": "s", "fabric": "f", "environment": "lab",
            "transport": "emulated", "seed": 1, "started_at": "2026-01-01T00:00:00Z",
            "inventory": {"path": "i", "sha256": ""}, "suite_file": {"path": "s", "sha256": ""},
            "gate_fail_on": ["fail"], "tests": [], "estimate_s": 0.0, "coverage": null
        }))
        .unwrap();
        s.topology = Box::new(topo);
        Record::RunStarted(s)
    }

    /// The test pod's leaf–spine links: uplink u of leaf L is its swp(31+u)
    /// to spine (1 + u % 2), port L*10+u.
    fn fabric_links() -> Vec<[String; 2]> {
        (1..=2)
            .flat_map(|leaf| {
                (0..4).map(move |u| {
                    [
                        format!("r0-leaf{leaf}:swp{}", 31 + u),
                        format!("spine{}:swp{}", 1 + u % 2, leaf * 10 + u),
                    ]
                })
            })
            .collect()
    }

    fn nic(i: usize) -> String {
        format!("gpu{i:02}:mlx5_0")
    }

    fn pair(test: &str, a: usize, b: usize, value: f64, verdict: Verdict) -> Record {
        Record::Verdict(VerdictRecord {
            test: test.into(),
            kind: "perftest".into(),
            component: format!("{}<->{}", nic(a), nic(b)),
            verdict,
            metric: Some("bw_avg_gbps".into()),
            value: Some(value),
            unit: Some("Gb/s".into()),
            threshold: Default::default(),
            samples: vec![value],
            message: format!("{value} Gb/s"),
            evidence: Vec::new(),
            duration_s: 1.0,
            series: Vec::new(),
        })
    }

    /// A full mesh among `nodes` NICs, each pair at `rate(a, b)`, failing
    /// under 350 and warning under 370.
    fn mesh(nodes: usize, rate: &dyn Fn(usize, usize) -> f64) -> Vec<Record> {
        let mut out = vec![started(nodes)];
        for a in 1..=nodes {
            for b in a + 1..=nodes {
                let v = rate(a, b);
                let verdict = if v < 350.0 {
                    Verdict::Fail
                } else if v < 370.0 {
                    Verdict::Warn
                } else {
                    Verdict::Pass
                };
                out.push(pair("mesh", a, b, v, verdict));
            }
        }
        out
    }

    fn finding(check: &str, component: &str, outcome: Outcome) -> Record {
        Record::Finding(Finding {
            test: "audit".into(),
            check: check.into(),
            component: component.into(),
            host: component.split(':').next().unwrap_or_default().into(),
            outcome,
            observed: None,
            expected: None,
            message: format!("{check} {}", outcome.as_str()),
            sources: Vec::new(),
            needs_root: false,
            round: None,
            evidence: Vec::new(),
        })
    }

    fn named(loc: &Localisation) -> Vec<(&str, &str)> {
        loc.suspects
            .iter()
            .map(|s| (s.kind.as_str(), s.component.as_str()))
            .collect()
    }

    #[test]
    fn a_healthy_mesh_names_nobody() {
        let loc = localise(&mesh(16, &|a, b| {
            391.0 + ((a * 7 + b * 3) % 5) as f64 * 0.2
        }));
        assert!(loc.suspects.is_empty(), "{:?}", named(&loc));
        assert!(loc.unexplained.is_empty());
    }

    #[test]
    fn a_slow_nic_is_named_not_its_partners() {
        let loc = localise(&mesh(16, &|a, b| {
            if a == 5 || b == 5 {
                235.0
            } else {
                391.0
            }
        }));
        assert_eq!(named(&loc), vec![("nic", "gpu05:mlx5_0")]);
        assert_eq!(loc.suspects[0].results.len(), 15);
        assert!(loc.unexplained.is_empty());
    }

    #[test]
    fn a_nic_a_few_percent_below_its_peers_is_named_while_it_passes() {
        let loc = localise(&mesh(16, &|a, b| {
            if a == 3 || b == 3 {
                360.0
            } else {
                391.0
            }
        }));
        // A warning on each of its pairs: the NIC is what to look at.
        assert_eq!(named(&loc), vec![("nic", "gpu03:mlx5_0")]);
        assert_eq!(loc.suspects[0].results.len(), 15);
        let loc = localise(&mesh(16, &|a, b| {
            if a == 3 || b == 3 {
                376.0
            } else {
                391.0
            }
        }));
        assert_eq!(named(&loc), vec![("nic", "gpu03:mlx5_0")]);
        assert!(loc.suspects[0].results.is_empty(), "every pair passed");
        assert!(
            loc.suspects[0]
                .evidence
                .iter()
                .any(|e| e.contains("-3.8 %")),
            "{:?}",
            loc.suspects[0].evidence
        );
        // 1 % below is within the practical tolerance: nobody.
        let loc = localise(&mesh(16, &|a, b| {
            if a == 3 || b == 3 {
                387.0
            } else {
                391.0
            }
        }));
        assert!(loc.suspects.is_empty(), "{:?}", named(&loc));
    }

    #[test]
    fn a_cross_leaf_warning_alone_is_a_collision() {
        let loc = localise(&mesh(16, &|a, b| {
            if (a, b) == (2, 12) {
                360.0
            } else {
                391.0
            }
        }));
        assert!(loc.suspects.is_empty(), "{:?}", named(&loc));
        assert_eq!(loc.collisions.len(), 1);
        assert_eq!(loc.collisions[0].leaves, "r0-leaf1 <-> r0-leaf2");
    }

    #[test]
    fn a_hot_uplink_alone_is_a_collision_named_at_the_uplink() {
        let mut records = mesh(16, &|_, _| 391.0);
        records.push(finding(
            "counters.ecmp_balance",
            "r0-leaf1:swp32",
            Outcome::Deviation,
        ));
        let loc = localise(&records);
        assert!(loc.suspects.is_empty(), "{:?}", named(&loc));
        assert_eq!(loc.collisions.len(), 1);
        assert_eq!(loc.collisions[0].leaves, "r0-leaf1:swp32");
        assert!(loc.collisions[0]
            .message
            .starts_with("hot uplink r0-leaf1:swp32"));
    }

    #[test]
    fn a_dark_uplink_is_named_by_its_port_readings() {
        let mut records = mesh(16, &|a, b| {
            let cross = (a <= 8) != (b <= 8);
            if cross && (a + b) % 2 == 0 {
                300.0
            } else {
                391.0
            }
        });
        records.push(finding("switch.link", "r0-leaf2:swp33", Outcome::Deviation));
        records.push(finding("switch.link", "spine1:swp22", Outcome::Deviation));
        for p in [31, 32, 34] {
            records.push(finding(
                "switch.link",
                &format!("r0-leaf2:swp{p}"),
                Outcome::Ok,
            ));
        }
        let loc = localise(&records);
        assert_eq!(
            named(&loc)[0],
            ("uplink", "r0-leaf2:swp33 <-> spine1:swp22")
        );
        assert!(loc.unexplained.is_empty(), "{:?}", loc.unexplained);
    }

    #[test]
    fn a_weak_optic_on_one_uplink_is_that_link_not_its_leafs_hot_siblings() {
        let mut records = mesh(16, &|_, _| 391.0);
        records.push(finding(
            "optics.weak_lane",
            "spine1:swp22",
            Outcome::Deviation,
        ));
        // The audit read every other optic of the fabric links: fine.
        for end in fabric_links().iter().flatten() {
            if end != "spine1:swp22" {
                records.push(finding("optics.weak_lane", end, Outcome::Ok));
            }
        }
        for p in [31, 32, 34] {
            records.push(finding(
                "counters.ecmp_balance",
                &format!("r0-leaf2:swp{p}"),
                Outcome::Deviation,
            ));
        }
        let loc = localise(&records);
        assert_eq!(
            named(&loc),
            vec![("uplink", "r0-leaf2:swp33 <-> spine1:swp22")],
            "{:?}",
            loc.suspects
        );
        // The siblings' hot windows stay what they are: ECMP collisions.
        let hot: Vec<&str> = loc.collisions.iter().map(|c| c.leaves.as_str()).collect();
        assert_eq!(hot, ["r0-leaf2:swp31", "r0-leaf2:swp32", "r0-leaf2:swp34"]);
    }

    #[test]
    fn configuration_deviations_name_their_component() {
        let mut records = mesh(16, &|_, _| 391.0);
        records.push(finding("nic.pfc", &nic(4), Outcome::Deviation));
        records.push(finding("nic.pfc", &nic(5), Outcome::Ok));
        records.push(finding("switch.ecn", "r0-leaf1", Outcome::Deviation));
        records.push(finding(
            "switch.pfc_watchdog",
            "r0-leaf2",
            Outcome::NotAvailable,
        ));
        let loc = localise(&records);
        assert_eq!(
            named(&loc),
            vec![("nic", "gpu04:mlx5_0"), ("leaf", "r0-leaf1")]
        );
    }

    #[test]
    fn a_suspect_a_retest_cleared_is_listed_as_cleared() {
        let mut records = mesh(16, &|a, b| if a == 5 || b == 5 { 300.0 } else { 391.0 });
        let mut f = finding(RETEST_CHECK, &nic(5), Outcome::Ok);
        f = match f {
            Record::Finding(mut x) => {
                x.message = "cleared: all 1 retest pair(s) pass".into();
                Record::Finding(x)
            }
            r => r,
        };
        records.push(f);
        let loc = localise(&records);
        assert!(loc.suspects.is_empty(), "{:?}", named(&loc));
        assert_eq!(loc.cleared.len(), 1);
        assert_eq!(loc.cleared[0].component, nic(5));
        assert!(loc.cleared[0].evidence[0].starts_with("cleared"));
        assert_eq!(loc.unexplained.len(), 15);
    }

    #[test]
    fn a_failing_collective_alone_names_nobody() {
        let mut records = mesh(16, &|_, _| 391.0);
        records.push(Record::Verdict(VerdictRecord {
            test: "allreduce".into(),
            kind: "nccl".into(),
            component: "gpu[01-16] rail 0".into(),
            verdict: Verdict::Fail,
            metric: None,
            value: Some(10.0),
            unit: Some("GB/s".into()),
            threshold: Default::default(),
            samples: Vec::new(),
            message: String::new(),
            evidence: Vec::new(),
            duration_s: 1.0,
            series: Vec::new(),
        }));
        let loc = localise(&records);
        assert!(loc.suspects.is_empty(), "{:?}", named(&loc));
        assert_eq!(loc.unexplained.len(), 1);
    }
}
