//! The plan as a table for people and as JSON for machines.

use serde_json::{json, Value};

use crate::config::check_suite::{Suite, TestKind};
use crate::config::hostlist;
use crate::config::model::Inventory;
use crate::config::suite::Pattern;
use crate::config::units::format_duration;

use super::Plan;

pub fn pattern_name(p: Option<&Pattern>, kind: &TestKind) -> String {
    match (p, kind) {
        (_, TestKind::Fault(_) | TestKind::Audit(_)) => "-".into(),
        (None, TestKind::Nccl(_)) => "all-nodes".into(),
        (None, _) => "-".into(),
        (Some(p), _) => match p {
            Pattern::RailPairs => "rail-pairs".into(),
            Pattern::FullMesh => "full-mesh".into(),
            Pattern::Random(r) => format!("random({})", r.rounds),
            Pattern::Incast(i) => format!("incast({}:1)", i.senders),
            Pattern::AllNodes => "all-nodes".into(),
            Pattern::PerLeaf => "per-leaf".into(),
            Pattern::CrossLeaf => "cross-leaf".into(),
        },
    }
}

fn pct(a: u64, b: u64) -> String {
    if b == 0 {
        "n/a".into()
    } else {
        format!("{:.1}%", 100.0 * a as f64 / b as f64)
    }
}

pub fn to_json(plan: &Plan, suite: &Suite, inv: &Inventory) -> Value {
    let tests: Vec<Value> = plan
        .tests
        .iter()
        .map(|tp| {
            let t = &suite.tests[tp.test];
            json!({
                "name": t.name,
                "kind": t.kind.label(),
                "pattern": pattern_name(t.pattern.as_ref(), &t.kind),
                "rounds": tp.rounds.len(),
                "steps": tp.steps(),
                "max_concurrent": tp.max_concurrent(),
                "repeat": t.repeat,
                "estimate_s": tp.estimate.as_secs_f64(),
            })
        })
        .collect();
    json!({
        "suite": suite.name,
        "fabric": inv.fabric.name,
        "nodes": inv.nodes.len(),
        "nics": inv.nics.len(),
        "estimate_s": plan.estimate.as_secs_f64(),
        "estimate": format_duration(plan.estimate),
        "tests": tests,
        "coverage": plan.coverage,
        "disruptive": plan.disruptions,
        "skipped": plan.skipped.iter().map(|sk| json!({
            "test": suite.tests[sk.test].name,
            "reason": sk.reason,
        })).collect::<Vec<_>>(),
        "partial": plan.partial,
        "selectors": suite.selections,
    })
}

pub fn to_text(plan: &Plan, suite: &Suite, inv: &Inventory) -> String {
    let mut out = String::new();
    let leaves = inv
        .switches
        .iter()
        .filter(|s| s.role == crate::config::inventory::SwitchRole::Leaf)
        .count();
    out += &format!(
        "plan: suite {} on fabric {} ({} nodes, {} NICs, {} leaves, {} spines)\n\n",
        suite.name,
        inv.fabric.name,
        inv.nodes.len(),
        inv.nics.len(),
        leaves,
        inv.switches.len() - leaves
    );
    let w = plan
        .tests
        .iter()
        .map(|t| suite.tests[t.test].name.len())
        .max()
        .unwrap_or(4)
        .max(4);
    out += &format!(
        "{:<w$}  {:<8}  {:<13}  {:>6}  {:>8}  {:>10}  {:>6}  {:>9}\n",
        "TEST", "KIND", "PATTERN", "ROUNDS", "STEPS", "CONCURRENT", "REPEAT", "ESTIMATE"
    );
    for tp in &plan.tests {
        let t = &suite.tests[tp.test];
        out += &format!(
            "{:<w$}  {:<8}  {:<13}  {:>6}  {:>8}  {:>10}  {:>6}  {:>9}\n",
            t.name,
            t.kind.label(),
            pattern_name(t.pattern.as_ref(), &t.kind),
            tp.rounds.len(),
            tp.steps(),
            tp.max_concurrent(),
            t.repeat,
            format_duration(tp.estimate)
        );
    }
    out += &format!("\nestimated duration: {}\n", format_duration(plan.estimate));
    if !suite.selections.is_empty() {
        out += "\nselectors:\n";
        for s in &suite.selections {
            out += &format!(
                "  {}: {} -> {}\n",
                s.at,
                s.selector,
                hostlist::compress(&s.names)
            );
        }
    }
    out += &thresholds_text(plan, suite, inv);
    let c = &plan.coverage;
    out += "\ncoverage:\n";
    out += &format!(
        "  node pairs   {}/{} ({})\n",
        c.node_pairs_covered,
        c.node_pairs_total,
        pct(c.node_pairs_covered, c.node_pairs_total)
    );
    out += &format!(
        "  NICs         {}/{} ({})\n",
        c.nics_covered,
        c.nics_total,
        pct(c.nics_covered as u64, c.nics_total as u64)
    );
    out += &format!(
        "  rails        {}/{}\n",
        c.rails_covered.len(),
        c.rails_total
    );
    out += &format!(
        "  leaf-spine   {}/{} ({})\n",
        c.fabric_links_covered,
        c.fabric_links_total,
        pct(c.fabric_links_covered as u64, c.fabric_links_total as u64)
    );
    for l in &c.uncovered_fabric_links {
        out += &format!("    not crossed: {l}\n");
    }
    if !plan.disruptions.is_empty() {
        out += "\ndisruptive steps:\n";
        for d in &plan.disruptions {
            let isolates = if d.isolated_nics.is_empty() {
                "isolates no NIC".to_string()
            } else {
                format!(
                    "isolates {} NIC(s) ({}) on {} node(s)",
                    d.isolated_nics.len(),
                    hostlist::compress(&d.isolated_nics),
                    d.affected_nodes.len()
                )
            };
            out += &format!(
                "  {}: {} on {} during {}; {isolates}",
                d.test, d.action, d.target, d.during
            );
            if d.fabric_links_down > 0 && d.action == "route_change" {
                out += &format!(
                    "; {} leaf-spine link(s) withdrawn from ECMP (left up)",
                    d.fabric_links_down
                );
            } else if d.fabric_links_down > 0 {
                out += &format!("; {} leaf-spine link(s) down", d.fabric_links_down);
            }
            if !d.dark_rails.is_empty() {
                out += &format!("; rail(s) {} go dark", super::list(&d.dark_rails));
            }
            out += "\n";
            if let Some(r) = &d.refused {
                out += &format!("    REFUSED: {r}\n");
            }
        }
    }
    out += &skipped_text(plan, suite);
    if let Some(b) = &suite.baseline {
        out += &statistics_text(plan, suite, inv, b.alpha);
    }
    out
}

/// For a suite compared with a baseline: how many samples a side each
/// test gives its components (`score::compare`), against the smallest
/// count at which an exact test can be significant over all comparisons.
fn statistics_text(plan: &Plan, suite: &Suite, inv: &Inventory, alpha: f64) -> String {
    use std::collections::{BTreeMap, BTreeSet};
    let mut per_test: Vec<(String, usize, usize)> = Vec::new();
    let mut comparisons = 0usize;
    for tp in &plan.tests {
        let t = &suite.tests[tp.test];
        if !t.kind.has_steps() || matches!(t.kind, crate::config::check_suite::TestKind::Fault(_)) {
            continue;
        }
        let mut partners: BTreeMap<usize, BTreeSet<usize>> = BTreeMap::new();
        let mut collectives = 0usize;
        for step in tp.rounds.iter().flatten() {
            match step {
                // Pairs across leaves are pooled as one cross-spine
                // distribution, not counted for their NICs.
                crate::plan::Step::Pair { a, b }
                    if inv.nic_leaf(*a).map(|l| l.0) == inv.nic_leaf(*b).map(|l| l.0) =>
                {
                    partners.entry(*a).or_default().insert(*b);
                    partners.entry(*b).or_default().insert(*a);
                }
                crate::plan::Step::Pair { .. } => {}
                crate::plan::Step::Incast(i) => {
                    partners
                        .entry(i.receiver)
                        .or_default()
                        .extend(i.senders.iter().copied());
                }
                crate::plan::Step::Collective(_) => collectives += 1,
            }
        }
        let repeat = t.repeat as usize;
        let least = partners
            .values()
            .map(|p| {
                if p.len() >= 3 {
                    p.len() * repeat
                } else {
                    repeat
                }
            })
            .chain((collectives > 0).then_some(repeat))
            .min()
            .unwrap_or(repeat);
        comparisons += partners.len() * 2 + collectives;
        per_test.push((t.name.clone(), least, partners.len() + collectives));
    }
    let need = crate::score::stats::min_n_per_side(comparisons.max(1), alpha);
    let mut out = format!(
        "\nbaseline statistics: about {comparisons} comparisons at alpha {alpha} (Holm) need {} samples a side\n",
        need.map_or("more than 64".into(), |n| n.to_string())
    );
    for (name, least, _) in per_test {
        let short = need.is_none_or(|n| least < n);
        out += &format!(
            "  {name}: at least {least} sample(s) per component (same-leaf partners x repeat){}\n",
            if short {
                " - WARNING: too few for significance; raise repeat (a pair-wise pattern gives one partner, so repeat is the sample count)"
            } else {
                ""
            }
        );
    }
    out
}

/// The tests the plan leaves out, each with its reason, and whether the
/// run is partial.
fn skipped_text(plan: &Plan, suite: &Suite) -> String {
    let mut out = String::new();
    if let Some(n) = &plan.partial {
        out += &format!("\npartial run ({n}): the gate covers only what is planned above\n");
    }
    if !plan.skipped.is_empty() {
        out += "\nskipped:\n";
        for sk in &plan.skipped {
            out += &format!("  {}: {}\n", suite.tests[sk.test].name, sk.reason);
        }
    }
    out
}

fn g(v: f64) -> String {
    if v.abs() >= 100.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// At most this many share classes printed per test (lowest first).
const CLASSES_SHOWN: usize = 4;

/// Each test's thresholds with where they come from: fixed numbers, a
/// percentage of line rate, or a percentage of the fair share the plan
/// computed from the inventory (with the bottleneck that sets it).
pub fn thresholds_text(plan: &Plan, suite: &Suite, inv: &Inventory) -> String {
    let mut out = String::new();
    for tp in &plan.tests {
        let t = &suite.tests[tp.test];
        let (Some(m), false) = (t.metric, matches!(t.kind, TestKind::Fault(_))) else {
            continue;
        };
        let unit = m.unit();
        let e = &t.expect;
        let mut lines = Vec::new();
        for (k, v) in [
            ("min", e.min),
            ("warn_min", e.warn_min),
            ("max", e.max),
            ("warn_max", e.warn_max),
        ] {
            if let Some(v) = v {
                lines.push(format!("{k} {} {unit} (fixed)", g(v)));
            }
        }
        if let Some(p) = e.min_pct_of_line_rate {
            let speeds: std::collections::BTreeSet<u32> =
                inv.nics.iter().map(|n| n.speed_gbps).collect();
            for sp in speeds {
                lines.push(format!(
                    "min {p}% of {sp} Gb/s line rate = {} {unit}{}",
                    g(f64::from(sp) * p / 100.0),
                    e.warn_pct_of_line_rate
                        .map(|w| format!(", warn {w}% = {} {unit}", g(f64::from(sp) * w / 100.0)))
                        .unwrap_or_default()
                ));
            }
        }
        if let (Some(fs), Some(cap)) = (&e.fair_share, &tp.capacity) {
            let classes = cap.classes();
            for (cross, share, via, n) in classes.iter().take(CLASSES_SHOWN) {
                let what = if *cross { "cross-spine" } else { "same-leaf" };
                let mut line = format!(
                    "{n} {what} step(s): fair share {} {unit} = {}; ",
                    g(*share),
                    cap.derivations[*via]
                );
                match (&fs.cross_spine, cross) {
                    (Some(cs), true) => line += &format!(
                        "floor {}% = {} {unit} each; together median >= {}%, p{} >= {}% of fair share (ECMP collision allowance)",
                        cs.floor_pct,
                        g(share * cs.floor_pct / 100.0),
                        cs.median_pct,
                        cs.quantile,
                        cs.quantile_min_pct
                    ),
                    _ => {
                        line += &format!(
                            "min {}% = {} {unit}",
                            fs.min_pct,
                            g(share * fs.min_pct / 100.0)
                        );
                        if let Some(w) = fs.warn_pct {
                            line += &format!(", warn {w}% = {} {unit}", g(share * w / 100.0));
                        }
                    }
                }
                lines.push(line);
            }
            if classes.len() > CLASSES_SHOWN {
                let rest = &classes[CLASSES_SHOWN..];
                let steps: usize = rest.iter().map(|c| c.3).sum();
                let hi = rest.iter().map(|c| c.1).fold(0.0, f64::max);
                lines.push(format!(
                    "{steps} more step(s) with fair shares up to {} {unit} ({} more bottleneck(s))",
                    g(hi),
                    rest.len()
                ));
            }
        }
        if lines.is_empty() {
            continue;
        }
        if out.is_empty() {
            out += "\nthresholds:\n";
        }
        out += &format!("  {} ({}):\n", t.name, m.name());
        for l in lines {
            out += &format!("    {l}\n");
        }
    }
    out
}
