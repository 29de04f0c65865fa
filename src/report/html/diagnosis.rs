//! The top of the page: the gate, one paragraph saying why, and the
//! suspects with what implicates them.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;

use crate::score::Verdict;

use super::{esc, fmt_value, threshold_text, Ctx, VerdictRecord};

/// Results listed under one suspect; the rest are counted.
const RESULTS_PER_SUSPECT: usize = 20;
/// Raw outputs shown inline under one suspect.
const RAW_PER_SUSPECT: usize = 3;

pub(super) fn gate(ctx: &Ctx, h: &mut String) {
    let finished = super::super::events::run_finished(ctx.records);
    let done = super::super::events::completeness(ctx.records);
    let (cls, text, code) = match finished {
        _ if !done.complete => ("no", "RUN INCOMPLETE", crate::exit::INCOMPLETE),
        Some(f) if f.gate_passed => ("ok", "GATE PASSED", f.exit_code),
        Some(f) => ("no", "GATE FAILED", f.exit_code),
        None => ("no", "RUN INCOMPLETE", crate::exit::INCOMPLETE),
    };
    let _ = write!(
        h,
        "<p class=\"gate {cls}\" id=\"gate\">{text} — exit {code}</p>"
    );
    if let Some(f) = finished {
        let c = &f.counts;
        let _ = write!(
            h,
            "<p id=\"counts\">{} pass · {} warn · {} fail · {} error · {} skipped</p>",
            c.pass, c.warn, c.fail, c.error, c.skipped
        );
    }
    let _ = write!(
        h,
        "<p class=\"reason\" id=\"reason\">{}</p>",
        esc(&reason(ctx))
    );
    if !done.complete {
        let _ = write!(
            h,
            "<p class=\"error\" id=\"incomplete\">{}</p>",
            esc(&done.describe())
        );
    }
    if let Some(n) = ctx.started.and_then(|s| s.rejudged_with.as_ref()) {
        let _ = write!(
            h,
            "<p class=\"warn\" id=\"rejudged\">Judged again against {} (not the run's own suite): traffic and audit verdicts are this suite's; fault, counter-ledger, bisection and baseline verdicts are as recorded.</p>",
            esc(n)
        );
    }
    if let Some(n) = ctx.started.and_then(|s| s.partial.as_ref()) {
        let _ = write!(
            h,
            "<p class=\"warn\" id=\"partial\">Partial run ({}): what it left out is listed as skipped, with the reason.</p>",
            esc(n)
        );
    }
}

/// One paragraph: why the gate is what it is, in the terms a person acts on.
fn reason(ctx: &Ctx) -> String {
    let done = super::super::events::completeness(ctx.records);
    if !done.complete {
        return format!(
            "Not a pass: {}. Whatever the verdicts below say, a run cut short cannot gate a change.",
            done.reason.as_deref().unwrap_or("the run did not finish")
        );
    }
    let fail_on: Vec<&str> = ctx
        .started
        .map(|s| s.gate_fail_on.iter().map(String::as_str).collect())
        .unwrap_or_else(|| vec!["fail", "error"]);
    let mut gating: BTreeMap<&str, usize> = BTreeMap::new();
    let mut warned: BTreeMap<&str, usize> = BTreeMap::new();
    let mut n = 0;
    for v in &ctx.verdicts {
        n += 1;
        if fail_on.contains(&v.verdict.as_str()) {
            *gating.entry(&v.test).or_default() += 1;
        } else if v.verdict == Verdict::Warn {
            *warned.entry(&v.test).or_default() += 1;
        }
    }
    let list = |m: &BTreeMap<&str, usize>| {
        m.iter()
            .map(|(t, k)| format!("{t} ({k})"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut s = String::new();
    let passed = super::super::events::run_finished(ctx.records).is_some_and(|f| f.gate_passed);
    if passed || gating.is_empty() {
        s += &format!(
            "The gate passed: none of the {n} results is {}.",
            fail_on.join(" or ")
        );
        if !warned.is_empty() {
            s += &format!(
                " {} warning(s) do not gate but deserve a look: {}.",
                warned.values().sum::<usize>(),
                list(&warned)
            );
        }
        if let Some(c) = ctx.started.map(|s| &s.coverage) {
            let frac = |a: &str, b: &str| match (
                c.get(a).and_then(|x| x.as_u64()),
                c.get(b).and_then(|x| x.as_u64()),
            ) {
                (Some(x), Some(y)) => Some(format!("{x} of {y}")),
                _ => None,
            };
            let mut parts = Vec::new();
            if let Some(x) = frac("nics_covered", "nics_total") {
                parts.push(format!("{x} NICs"));
            }
            if let Some(x) = frac("node_pairs_covered", "node_pairs_total") {
                parts.push(format!("{x} node pairs"));
            }
            if let Some(x) = frac("fabric_links_covered", "fabric_links_total") {
                parts.push(format!("{x} leaf–spine links"));
            }
            if !parts.is_empty() {
                s += &format!(" The traffic covered {}.", parts.join(", "));
            }
        }
    } else {
        s += &format!(
            "The gate failed on {} result(s) that are {}: {}.",
            gating.values().sum::<usize>(),
            fail_on.join(" or "),
            list(&gating)
        );
        let loc = &ctx.loc;
        if let Some(first) = loc.suspects.first() {
            let explained = loc
                .suspects
                .iter()
                .flat_map(|x| &x.results)
                .collect::<std::collections::BTreeSet<_>>()
                .len();
            s += &format!(
                " {} suspect(s) explain {explained} failing result(s); the first is {}{}.",
                loc.suspects.len(),
                first.label(),
                first
                    .evidence
                    .first()
                    .map(|e| format!(" ({e})"))
                    .unwrap_or_default()
            );
        } else {
            s += " No single component explains the failures: start from the results table.";
        }
        if !loc.unexplained.is_empty() {
            s += &format!(
                " {} failing result(s) are not explained by any suspect.",
                loc.unexplained.len()
            );
        }
        if !warned.is_empty() {
            s += &format!(
                " {} warning(s) do not gate.",
                warned.values().sum::<usize>()
            );
        }
    }
    s
}

pub(super) fn suspects(ctx: &Ctx) -> String {
    let loc = &ctx.loc;
    let verdicts: HashMap<(&str, &str), &VerdictRecord> = ctx
        .verdicts
        .iter()
        .map(|v| ((v.test.as_str(), v.component.as_str()), *v))
        .collect();
    let mut h = String::new();
    if loc.suspects.is_empty() {
        h.push_str("<p id=\"no-suspects\">No suspects: no failing result, outlier or deviation points at a component.</p>");
    }
    for (i, s) in loc.suspects.iter().enumerate() {
        let mut tests: BTreeMap<&str, usize> = BTreeMap::new();
        for r in &s.results {
            *tests.entry(r.test.as_str()).or_default() += 1;
        }
        let tests: Vec<String> = tests.iter().map(|(t, n)| format!("{t} ({n})")).collect();
        let _ = write!(
            h,
            "<details class=\"suspect\" id=\"suspect-{}\"{}><summary>#{} {} · score {:.2} · {} failing result(s){}</summary>",
            i + 1,
            if i < 3 { " open" } else { "" },
            i + 1,
            esc(&s.label()),
            s.score,
            s.results.len(),
            if tests.is_empty() {
                String::new()
            } else {
                format!(" in {}", esc(&tests.join(", ")))
            }
        );
        h.push_str("<ul class=\"evidence\">");
        for e in &s.evidence {
            let _ = write!(h, "<li>{}</li>", esc(e));
        }
        h.push_str("</ul>");
        if !s.results.is_empty() {
            h.push_str("<table><thead><tr><th>result</th><th>verdict</th><th>value</th><th>threshold</th><th>message</th></tr></thead><tbody>");
            for r in s.results.iter().take(RESULTS_PER_SUSPECT) {
                let v = verdicts.get(&(r.test.as_str(), r.component.as_str()));
                let _ = write!(
                    h,
                    "<tr><td>{}</td><td class=\"{c}\">{c}</td><td class=\"num\">{}</td><td>{}</td><td>{}</td></tr>",
                    ctx.result_link(&r.test, &r.component),
                    esc(&fmt_value(v.and_then(|v| v.value), v.and_then(|v| v.unit.as_deref()))),
                    esc(&v.map(|v| threshold_text(v)).unwrap_or_default()),
                    esc(v.map(|v| v.message.as_str()).unwrap_or("")),
                    c = v.map_or("fail", |v| v.verdict.as_str())
                );
            }
            h.push_str("</tbody></table>");
            if s.results.len() > RESULTS_PER_SUSPECT {
                let _ = write!(
                    h,
                    "<p><small>… and {} more results; filter the results table by {}.</small></p>",
                    s.results.len() - RESULTS_PER_SUSPECT,
                    esc(&s.component)
                );
            }
            let raws: Vec<&str> = s
                .results
                .iter()
                .filter_map(|r| verdicts.get(&(r.test.as_str(), r.component.as_str())))
                .filter_map(|v| v.evidence.first().map(String::as_str))
                .take(RAW_PER_SUSPECT)
                .collect();
            if !raws.is_empty() {
                h.push_str("<p>Raw outputs:</p>");
                for rel in raws {
                    h.push_str(&ctx.raw_block(rel));
                }
            }
        }
        h.push_str("</details>");
    }
    if !loc.collisions.is_empty() {
        let _ = write!(
            h,
            "<details id=\"collisions\"{}><summary>{} ECMP collision(s): flows hashed onto the same uplink, slower but not a fault</summary><ul>",
            if loc.collisions.len() <= 5 { " open" } else { "" },
            loc.collisions.len()
        );
        for c in &loc.collisions {
            let _ = write!(
                h,
                "<li class=\"warn\">{}: {}</li>",
                esc(&c.leaves),
                esc(&c.message)
            );
        }
        h.push_str("</ul></details>");
    }
    if !loc.cleared.is_empty() {
        h.push_str("<h3>Cleared by a retest</h3><ul>");
        for c in &loc.cleared {
            let _ = write!(
                h,
                "<li>{}: {}</li>",
                esc(&c.label()),
                esc(&c.evidence.join("; "))
            );
        }
        h.push_str("</ul>");
    }
    if !loc.unexplained.is_empty() {
        let _ = write!(
            h,
            "<h3>Not explained by a suspect</h3><p>{} failing result(s) no single component explains well enough to name:</p><ul>",
            loc.unexplained.len()
        );
        for r in loc.unexplained.iter().take(50) {
            let _ = write!(h, "<li>{}</li>", ctx.result_link(&r.test, &r.component));
        }
        if loc.unexplained.len() > 50 {
            let _ = write!(h, "<li>… and {} more</li>", loc.unexplained.len() - 50);
        }
        h.push_str("</ul>");
    }
    h
}
