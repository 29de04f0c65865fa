//! Run against run, or run against baseline: per test, per NIC and per
//! node, all of a component's samples in a run against all of its samples
//! in the other, never pair against pair (ECMP placement and pairings
//! change from run to run). Pure functions of the event logs.
//!
//! A component's samples are every sample of every result it took part
//! in, except pairs across leaves, whose value is as much the hash's as
//! the NIC's: those are pooled per test as one `cross-spine` distribution.
//! A NIC measured with fewer than three partners in a test cannot be told
//! from its partner, so there the pair itself is the component. A
//! collective is its own component.
//!
//! A component regressed when its shift (Hodges–Lehmann, as a percentage
//! of the reference median) is worse than the practical tolerance **and**
//! the two-sided Mann–Whitney test rejects at α after Holm's adjustment
//! over every comparison made. Mann–Whitney ranks with mid-ranks, so
//! perftest's two-decimal ties are handled, and it is exact without ties
//! up to 50 per side (`score::stats`).

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use super::stats;
use super::Verdict;
use crate::report::events::{Outcome, Record, Topology};

/// Default family-wise error rate.
pub const ALPHA: f64 = 0.05;

/// What one run (or several, promoted into a baseline) measured.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Profile {
    pub fabric: String,
    /// SHA-256 of the topology (NICs, their leaf ports, switch links).
    pub topology_hash: String,
    pub nics: BTreeSet<String>,
    pub nodes: BTreeSet<String>,
    /// What each component ran, as the run saw it: kind (`NIC firmware`,
    /// `driver`, `NOS`, `NCCL`) → version → components.
    pub versions: BTreeMap<String, BTreeMap<String, BTreeSet<String>>>,
    /// The runs it was built from (`run_started.started_at` and fabric).
    pub runs: Vec<String>,
    pub tests: BTreeMap<String, TestProfile>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TestProfile {
    pub unit: String,
    pub lower_is_better: bool,
    pub components: BTreeMap<String, Samples>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Samples {
    /// `nic`, `node`, `pair`, `collective`, `cross-spine`.
    pub kind: String,
    pub median: f64,
    /// Median absolute deviation of the samples.
    pub mad: f64,
    pub n: usize,
    /// Each run's median: the between-run variation a baseline carries.
    pub run_medians: Vec<f64>,
    pub values: Vec<f64>,
}

impl Samples {
    fn of(kind: &str, values: Vec<f64>) -> Samples {
        let median = stats::median(&values).unwrap_or(f64::NAN);
        Samples {
            kind: kind.into(),
            median,
            mad: stats::mad(&values).unwrap_or(f64::NAN),
            n: values.len(),
            run_medians: vec![median],
            values,
        }
    }
}

fn topology_hash(t: &Topology) -> String {
    let text = serde_json::to_string(t).unwrap_or_default();
    crate::config::check::sha256_hex(text.as_bytes())
}

fn lower_is_better(unit: &str) -> bool {
    matches!(unit, "us" | "ms" | "s")
}

/// The profile of one run's log.
pub fn profile(records: &[Record]) -> Profile {
    let started = crate::report::events::run_started(records);
    let empty = Topology::default();
    let topo = started.map_or(&empty, |s| &s.topology);
    let leaf: BTreeMap<&str, &str> = topo
        .nics
        .iter()
        .filter_map(|n| Some((n.name.as_str(), n.port.as_deref()?.split(':').next()?)))
        .collect();
    let node_of: BTreeMap<&str, &str> = topo
        .nics
        .iter()
        .map(|n| (n.name.as_str(), n.node.as_str()))
        .collect();
    let mut p = Profile {
        fabric: started.map(|s| s.fabric.clone()).unwrap_or_default(),
        topology_hash: topology_hash(topo),
        nics: topo.nics.iter().map(|n| n.name.clone()).collect(),
        nodes: topo.nics.iter().map(|n| n.node.clone()).collect(),
        runs: started
            .map(|s| vec![format!("{} {}", s.fabric, s.started_at)])
            .unwrap_or_default(),
        ..Default::default()
    };
    // Per test: each result's NICs (or whole component) and samples.
    type Results<'a> = Vec<(Vec<&'a str>, &'a str, &'a [f64])>;
    let mut by_test: BTreeMap<&str, (String, Results)> = BTreeMap::new();
    for r in records {
        match r {
            Record::Verdict(v)
                if matches!(v.kind.as_str(), "perftest" | "iperf" | "nccl")
                    && !matches!(v.verdict, Verdict::Error | Verdict::Skipped)
                    && !v.samples.is_empty() =>
            {
                let c = v.component.as_str();
                let nics: Vec<&str> = if let Some((a, b)) = c.split_once("<->") {
                    vec![a.trim(), b.trim()]
                } else if let Some((r, _)) = c.split_once("<-") {
                    vec![r.trim()]
                } else {
                    Vec::new()
                };
                let e = by_test
                    .entry(&v.test)
                    .or_insert_with(|| (v.unit.clone().unwrap_or_default(), Vec::new()));
                e.1.push((nics, c, &v.samples));
            }
            Record::Finding(f) if f.outcome != Outcome::NotAvailable => {
                let kind = match f.check.as_str() {
                    "nic.firmware" => "NIC firmware",
                    "nic.driver" => "NIC driver",
                    "switch.nos" => "switch NOS",
                    _ => continue,
                };
                if let Some(v) = &f.observed {
                    p.versions
                        .entry(kind.into())
                        .or_default()
                        .entry(v.clone())
                        .or_default()
                        .insert(f.component.clone());
                }
            }
            Record::Sample(s) => {
                for (key, kind) in [
                    ("nccl_version", "NCCL"),
                    ("nccl_tests_version", "nccl-tests"),
                    ("iperf3_version", "iperf3"),
                ] {
                    if let Some(v) = s.details.get(key).and_then(|v| v.as_str()) {
                        p.versions
                            .entry(kind.into())
                            .or_default()
                            .entry(v.to_string())
                            .or_default()
                            .extend(s.hosts.iter().cloned());
                    }
                }
            }
            _ => {}
        }
    }
    for (test, (unit, results)) in by_test {
        let mut partners: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
        for (nics, _, _) in &results {
            for n in nics {
                partners
                    .entry(n)
                    .or_default()
                    .extend(nics.iter().filter(|p| *p != n));
            }
        }
        let mut values: BTreeMap<String, (&str, Vec<f64>)> = BTreeMap::new();
        let mut add = |key: String, kind: &'static str, v: &[f64]| {
            values
                .entry(key)
                .or_insert_with(|| (kind, Vec::new()))
                .1
                .extend(v.iter().copied().filter(|x| x.is_finite()));
        };
        for (nics, component, samples) in &results {
            if nics.is_empty() {
                add(component.to_string(), "collective", samples);
                continue;
            }
            let leaves: BTreeSet<Option<&&str>> = nics.iter().map(|n| leaf.get(n)).collect();
            if leaves.len() > 1 {
                add("cross-spine".into(), "cross-spine", samples);
                continue;
            }
            let separable = nics.iter().all(|n| {
                partners
                    .get(n)
                    .is_some_and(|p| p.len() >= 3 || nics.len() == 1)
            });
            if !separable {
                add(component.to_string(), "pair", samples);
                continue;
            }
            for n in nics {
                add(n.to_string(), "nic", samples);
                if let Some(node) = node_of.get(n) {
                    add(node.to_string(), "node", samples);
                }
            }
        }
        p.tests.insert(
            test.to_string(),
            TestProfile {
                lower_is_better: lower_is_better(&unit),
                unit,
                components: values
                    .into_iter()
                    .map(|(k, (kind, v))| (k, Samples::of(kind, v)))
                    .collect(),
            },
        );
    }
    p
}

/// Several runs of one fabric pooled into one profile: every sample, and
/// each run's median beside it. Refuses runs of different topologies.
pub fn merge(profiles: Vec<Profile>) -> Result<Profile, String> {
    let mut it = profiles.into_iter();
    let Some(mut out) = it.next() else {
        return Err("no run to promote".into());
    };
    for p in it {
        if p.topology_hash != out.topology_hash {
            return Err(format!(
                "{} has another topology than {} (the fabric changed): promote them separately",
                p.runs.join(", "),
                out.runs.join(", ")
            ));
        }
        out.runs.extend(p.runs);
        for (kind, vs) in p.versions {
            let e = out.versions.entry(kind).or_default();
            for (v, comps) in vs {
                e.entry(v).or_default().extend(comps);
            }
        }
        for (test, tp) in p.tests {
            let e = out.tests.entry(test).or_insert_with(|| TestProfile {
                unit: tp.unit.clone(),
                lower_is_better: tp.lower_is_better,
                components: BTreeMap::new(),
            });
            for (c, s) in tp.components {
                match e.components.get_mut(&c) {
                    Some(have) => {
                        let mut values = std::mem::take(&mut have.values);
                        values.extend(s.values);
                        let mut run_medians = std::mem::take(&mut have.run_medians);
                        run_medians.extend(s.run_medians);
                        *have = Samples::of(&s.kind, values);
                        have.run_medians = run_medians;
                    }
                    None => {
                        e.components.insert(c, s);
                    }
                }
            }
        }
    }
    Ok(out)
}

/// One component of one test, in both runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Row {
    pub test: String,
    pub component: String,
    pub kind: String,
    pub unit: String,
    pub median_a: f64,
    pub median_b: f64,
    pub n_a: usize,
    pub n_b: usize,
    /// Hodges–Lehmann shift of B against A (the difference of medians
    /// past 250,000 sample pairs), percent of A's median; negative is
    /// slower for bandwidth.
    pub change_pct: f64,
    /// Two-sided Mann–Whitney p, and after Holm over every row.
    pub p: f64,
    pub p_holm: f64,
    pub significant: bool,
    /// Worse beyond the tolerance and significant.
    pub regressed: bool,
    /// Better beyond the tolerance and significant.
    pub improved: bool,
}

/// A regression to act on, with the rows folded into it (a node's NICs,
/// the pairs and collectives it takes part in).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Regression {
    pub component: String,
    pub kind: String,
    pub tests: Vec<String>,
    /// The worst change among its rows, percent.
    pub change_pct: f64,
    pub p_holm: f64,
    pub folded: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    pub a: Vec<String>,
    pub b: Vec<String>,
    pub topology_match: bool,
    /// "NIC firmware 28.39.1002 → 28.41.1000 on 8 components".
    pub version_changes: Vec<String>,
    pub alpha: f64,
    pub tolerance_pct: f64,
    pub latency_tolerance_pct: f64,
    pub rows: Vec<Row>,
    pub regressions: Vec<Regression>,
    pub improvements: Vec<String>,
    /// `test component` present on one side only.
    pub only_in_a: Vec<String>,
    pub only_in_b: Vec<String>,
    /// The smallest samples per side at which an exact test could clear
    /// Holm's first step over this many comparisons; `None` if none up to 64.
    pub min_samples_per_side: Option<usize>,
    /// Rows with fewer samples on a side than that.
    pub underpowered: usize,
}

/// Compares B against A (A is the reference: a baseline or the earlier run).
pub fn compare(a: &Profile, b: &Profile, alpha: f64, tolerance_pct: f64) -> Comparison {
    let latency_tolerance_pct = super::suspects::LATENCY_TOLERANCE_PCT.max(tolerance_pct);
    let mut rows = Vec::new();
    let mut p_values = Vec::new();
    let mut only_in_a = Vec::new();
    let mut only_in_b = Vec::new();
    for (test, ta) in &a.tests {
        let Some(tb) = b.tests.get(test) else {
            only_in_a.push(test.clone());
            continue;
        };
        for (c, sa) in &ta.components {
            let Some(sb) = tb.components.get(c) else {
                only_in_a.push(format!("{test} {c}"));
                continue;
            };
            let (Some(mw), Some(shift)) = (
                stats::mann_whitney(&sa.values, &sb.values),
                shift(&sa.values, &sb.values, sa.median, sb.median),
            ) else {
                continue;
            };
            let change_pct = if sa.median != 0.0 {
                100.0 * shift / sa.median.abs()
            } else {
                0.0
            };
            p_values.push(mw.p);
            rows.push(Row {
                test: test.clone(),
                component: c.clone(),
                kind: sa.kind.clone(),
                unit: ta.unit.clone(),
                median_a: sa.median,
                median_b: sb.median,
                n_a: sa.n,
                n_b: sb.n,
                change_pct,
                p: mw.p,
                p_holm: f64::NAN,
                significant: false,
                regressed: false,
                improved: false,
            });
        }
        for c in tb
            .components
            .keys()
            .filter(|c| !ta.components.contains_key(*c))
        {
            only_in_b.push(format!("{test} {c}"));
        }
    }
    for test in b.tests.keys().filter(|t| !a.tests.contains_key(*t)) {
        only_in_b.push(test.clone());
    }
    let adjusted = stats::holm(&p_values);
    for (row, p) in rows.iter_mut().zip(adjusted) {
        let lower = lower_is_better(&row.unit);
        let tol = if lower {
            latency_tolerance_pct
        } else {
            tolerance_pct
        };
        let worse = if lower {
            row.change_pct
        } else {
            -row.change_pct
        };
        row.p_holm = p;
        row.significant = p <= alpha;
        row.regressed = row.significant && worse > tol;
        row.improved = row.significant && -worse > tol;
    }
    let min_samples_per_side = stats::min_n_per_side(rows.len().max(1), alpha);
    let underpowered = rows
        .iter()
        .filter(|r| min_samples_per_side.is_none_or(|m| r.n_a.min(r.n_b) < m))
        .count();
    let improvements = rows
        .iter()
        .filter(|r| r.improved)
        .map(|r| format!("{} {} {:+.1} %", r.test, r.component, r.change_pct))
        .collect();
    Comparison {
        a: a.runs.clone(),
        b: b.runs.clone(),
        topology_match: a.topology_hash == b.topology_hash,
        version_changes: version_changes(a, b),
        alpha,
        tolerance_pct,
        latency_tolerance_pct,
        regressions: fold(&rows, b),
        rows,
        improvements,
        only_in_a,
        only_in_b,
        min_samples_per_side,
        underpowered,
    }
}

/// Past this many pairs of samples the Hodges–Lehmann estimate (the
/// median of every pairwise difference) costs more than it tells: a
/// pooled cross-spine distribution of a 1,024-node pod holds tens of
/// thousands of samples a side. The difference of medians stands in.
const HL_MAX_PAIRS: usize = 250_000;

/// B's shift against A: Hodges–Lehmann, or the difference of medians for
/// large samples.
fn shift(a: &[f64], b: &[f64], median_a: f64, median_b: f64) -> Option<f64> {
    if a.len().saturating_mul(b.len()) > HL_MAX_PAIRS {
        let d = median_b - median_a;
        return d.is_finite().then_some(d);
    }
    stats::hodges_lehmann(b, a)
}

/// Regressed rows as components to act on: a node that regressed absorbs
/// its NICs and every pair or collective it takes part in.
fn fold(rows: &[Row], b: &Profile) -> Vec<Regression> {
    let regressed: Vec<&Row> = rows.iter().filter(|r| r.regressed).collect();
    let nodes: BTreeSet<&str> = regressed
        .iter()
        .filter(|r| r.kind == "node")
        .map(|r| r.component.as_str())
        .collect();
    let holder = |r: &Row| -> Option<String> {
        if r.kind == "node" {
            return None;
        }
        let names: Vec<String> = match r.kind.as_str() {
            "collective" => {
                let hosts = r.component.split(" rail").next().unwrap_or(&r.component);
                crate::config::hostlist::expand(hosts).unwrap_or_default()
            }
            _ => r
                .component
                .split("<->")
                .map(|n| n.trim().split(':').next().unwrap_or("").to_string())
                .collect(),
        };
        names
            .into_iter()
            .find(|n| nodes.contains(n.as_str()) && b.nodes.contains(n))
    };
    let mut out: BTreeMap<(String, String), Regression> = BTreeMap::new();
    for r in &regressed {
        let (component, kind) = match holder(r) {
            Some(node) => (node, "node".to_string()),
            None => (r.component.clone(), r.kind.clone()),
        };
        let e = out
            .entry((kind.clone(), component.clone()))
            .or_insert_with(|| Regression {
                component,
                kind,
                tests: Vec::new(),
                change_pct: 0.0,
                p_holm: 1.0,
                folded: Vec::new(),
            });
        if !e.tests.contains(&r.test) {
            e.tests.push(r.test.clone());
        }
        if r.change_pct.abs() > e.change_pct.abs() {
            e.change_pct = r.change_pct;
        }
        e.p_holm = e.p_holm.min(r.p_holm);
        if r.component != e.component {
            e.folded.push(format!("{} {}", r.test, r.component));
        }
    }
    let mut v: Vec<Regression> = out.into_values().collect();
    v.sort_by(|x, y| x.change_pct.abs().total_cmp(&y.change_pct.abs()).reverse());
    v
}

/// "NIC firmware 28.39.1002 → 28.41.1000 on 1,024 components", per kind.
fn version_changes(a: &Profile, b: &Profile) -> Vec<String> {
    let mut out = Vec::new();
    let kinds: BTreeSet<&String> = a.versions.keys().chain(b.versions.keys()).collect();
    for kind in kinds {
        let by_comp = |p: &Profile| -> BTreeMap<String, String> {
            p.versions
                .get(kind)
                .into_iter()
                .flatten()
                .flat_map(|(v, comps)| comps.iter().map(move |c| (c.clone(), v.clone())))
                .collect()
        };
        let (va, vb) = (by_comp(a), by_comp(b));
        let mut moves: BTreeMap<(String, String), usize> = BTreeMap::new();
        for (c, x) in &va {
            if let Some(y) = vb.get(c).filter(|y| *y != x) {
                *moves.entry((x.clone(), y.clone())).or_default() += 1;
            }
        }
        for ((x, y), n) in moves {
            out.push(format!("{kind} {x} → {y} on {n} component(s)"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prof(values: &[(&str, &str, Vec<f64>)]) -> Profile {
        let mut p = Profile::default();
        let t = p.tests.entry("bw".into()).or_default();
        t.unit = "Gb/s".into();
        for (c, kind, v) in values {
            t.components
                .insert(c.to_string(), Samples::of(kind, v.clone()));
        }
        p.nodes = ["gpu01", "gpu02", "gpu03"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        p
    }

    fn wobble(base: f64, n: usize, seed: u64) -> Vec<f64> {
        let mut r = crate::rng::Rng::new(seed);
        (0..n)
            .map(|_| ((base * (1.0 + r.range(-0.002, 0.002))) * 100.0).round() / 100.0)
            .collect()
    }

    #[test]
    fn a_node_a_few_percent_slower_is_the_only_regression() {
        let a = prof(&[
            ("gpu01", "node", wobble(391.0, 24, 1)),
            ("gpu01:mlx5_0", "nic", wobble(391.0, 24, 2)),
            ("gpu02", "node", wobble(391.0, 24, 3)),
            ("gpu03", "node", wobble(391.0, 24, 4)),
        ]);
        let b = prof(&[
            ("gpu01", "node", wobble(391.0 * 0.95, 24, 5)),
            ("gpu01:mlx5_0", "nic", wobble(391.0 * 0.95, 24, 6)),
            ("gpu02", "node", wobble(391.0, 24, 7)),
            ("gpu03", "node", wobble(391.0, 24, 8)),
        ]);
        let c = compare(&a, &b, ALPHA, 3.0);
        assert_eq!(c.regressions.len(), 1, "{:#?}", c.regressions);
        assert_eq!(c.regressions[0].component, "gpu01");
        assert_eq!(c.regressions[0].folded, vec!["bw gpu01:mlx5_0"]);
        assert!((c.regressions[0].change_pct + 5.0).abs() < 0.5);
        // The same run twice regresses nothing.
        let c = compare(&a, &a, ALPHA, 3.0);
        assert!(c.regressions.is_empty());
    }

    #[test]
    fn a_shift_under_the_tolerance_or_without_enough_samples_is_not_a_regression() {
        let a = prof(&[("gpu01", "node", wobble(391.0, 24, 1))]);
        let b = prof(&[("gpu01", "node", wobble(391.0 * 0.98, 24, 2))]);
        let c = compare(&a, &b, ALPHA, 3.0);
        assert!(c.rows[0].significant, "{:?}", c.rows[0]);
        assert!(!c.rows[0].regressed);
        // Three samples a side can never reach p < 0.10.
        let a = prof(&[("gpu01", "node", wobble(391.0, 3, 1))]);
        let b = prof(&[("gpu01", "node", wobble(300.0, 3, 2))]);
        let c = compare(&a, &b, ALPHA, 3.0);
        assert!(!c.rows[0].regressed);
        assert_eq!(c.min_samples_per_side, Some(4));
        assert_eq!(c.underpowered, 1);
    }
}
