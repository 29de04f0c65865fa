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
        (_, TestKind::Fault(_)) => "-".into(),
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
            if d.fabric_links_down > 0 {
                out += &format!("; {} leaf-spine link(s) down", d.fabric_links_down);
            }
            if !d.dark_rails.is_empty() {
                out += &format!("; rail(s) {:?} go dark", d.dark_rails);
            }
            out += "\n";
            if let Some(r) = &d.refused {
                out += &format!("    REFUSED: {r}\n");
            }
        }
    }
    out += &skipped_text(plan, suite);
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
