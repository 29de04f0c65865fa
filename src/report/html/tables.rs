//! The tables: counters, audit, baseline, preflight, plan and coverage, and
//! every result, sortable and filterable.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt::Write as _;

use crate::counters::delta::DeltaStatus;
use crate::score::Verdict;

use super::super::events::{Finding, LedgerRecord, Outcome, Record};
use super::{by_test, esc, fmt_value, is_pass, threshold_text, worst_first, Ctx, VerdictRecord};

/// Counter rows listed; the rest are counted (results.jsonl has them).
const LEDGER_ROWS: usize = 2000;
/// Audit findings that are not `ok`, listed.
const FINDING_ROWS: usize = 3000;

/// The results the table lists, by test in plan order, worst first: every
/// non-pass (up to `NONPASS_ROWS`) and the worst `PASS_ROWS` passes.
fn listed<'a>(ctx: &Ctx<'a>) -> (Vec<&'a VerdictRecord>, Vec<(String, usize)>) {
    let mut rows = Vec::new();
    let mut left_out = Vec::new();
    for (name, vs) in by_test(ctx) {
        let sorted = worst_first(&vs);
        let (bad, good): (Vec<_>, Vec<_>) = sorted.into_iter().partition(|v| !is_pass(v));
        let out = bad.len().saturating_sub(super::NONPASS_ROWS)
            + good.len().saturating_sub(super::PASS_ROWS);
        rows.extend(bad.into_iter().take(super::NONPASS_ROWS));
        rows.extend(good.into_iter().take(super::PASS_ROWS));
        if out > 0 {
            left_out.push((name, out));
        }
    }
    (rows, left_out)
}

pub(super) fn listed_rows<'a>(ctx: &Ctx<'a>) -> HashMap<(&'a str, &'a str), String> {
    let mut out = HashMap::new();
    for (i, v) in listed(ctx).0.into_iter().enumerate() {
        out.entry((v.test.as_str(), v.component.as_str()))
            .or_insert_with(|| format!("r{i}"));
    }
    out
}

fn head(cols: &[&str]) -> String {
    let mut h = String::from("<thead><tr>");
    for c in cols {
        let _ = write!(
            h,
            "<th scope=\"col\"><button type=\"button\">{c}</button></th>"
        );
    }
    h.push_str("</tr></thead>");
    h
}

pub(super) fn results(ctx: &Ctx) -> String {
    let (rows, left_out) = listed(ctx);
    if rows.is_empty() {
        return String::new();
    }
    let tests: Vec<String> = by_test(ctx).into_iter().map(|t| t.0).collect();
    let rails: BTreeSet<u32> = ctx.nics.values().map(|n| n.rail).collect();
    let mut h = String::from(
        "<form id=\"filters\" class=\"controls\" role=\"search\"><label>verdict <select name=\"verdict\"><option value=\"\">any</option><option value=\"nonpass\">not pass</option>",
    );
    for v in ["pass", "warn", "fail", "error", "skipped"] {
        let _ = write!(h, "<option value=\"{v}\">{v}</option>");
    }
    h.push_str(
        "</select></label><label>test <select name=\"test\"><option value=\"\">any</option>",
    );
    for t in &tests {
        let _ = write!(h, "<option value=\"{0}\">{0}</option>", esc(t));
    }
    h.push_str(
        "</select></label><label>rail <select name=\"rail\"><option value=\"\">any</option>",
    );
    for r in &rails {
        let _ = write!(h, "<option value=\"{r}\">{r}</option>");
    }
    h.push_str("</select></label><label>node or component <input name=\"node\" type=\"search\" size=\"24\" placeholder=\"gpu001 gpu002\"></label><button type=\"reset\">clear</button><output id=\"shown\"></output></form>");
    h.push_str("<table class=\"sortable\" id=\"results-table\">");
    h.push_str(&head(&[
        "verdict",
        "test",
        "component",
        "value",
        "threshold",
        "message",
        "evidence",
    ]));
    h.push_str("<tbody>");
    for (i, v) in rows.iter().enumerate() {
        let nodes = ctx.nodes_of(&v.component);
        let rails: Vec<String> = ctx
            .rails_of(&v.component)
            .iter()
            .map(u32::to_string)
            .collect();
        let evidence = if is_pass(v) {
            if v.evidence.is_empty() {
                String::new()
            } else {
                format!("<small>{}</small>", esc(&v.evidence.join(" ")))
            }
        } else {
            v.evidence
                .iter()
                .take(2)
                .map(|rel| ctx.raw_block(rel))
                .collect::<String>()
        };
        let _ = write!(
            h,
            "<tr id=\"r{i}\" data-verdict=\"{c}\" data-test=\"{}\" data-nodes=\"{}\" data-rails=\"{}\"><td class=\"{c}\" data-v=\"{}\">{c}</td><td>{}</td><td>{}</td><td class=\"num\" data-v=\"{}\">{}</td><td>{}</td><td>{}</td><td>{evidence}</td></tr>",
            esc(&v.test),
            esc(&nodes.join(" ")),
            rails.join(" "),
            v.verdict as u8,
            esc(&v.test),
            esc(&v.component),
            v.value.filter(|x| x.is_finite()).unwrap_or(f64::NAN),
            esc(&fmt_value(v.value, v.unit.as_deref())),
            esc(&threshold_text(v)),
            esc(&v.message),
            c = v.verdict.as_str()
        );
    }
    h.push_str("</tbody></table>");
    for (test, n) in left_out {
        let _ = write!(
            h,
            "<p><small>{}: {n} more results not listed here, each at least as good as the last one listed; results.jsonl has them all.</small></p>",
            esc(&test)
        );
    }
    h
}

fn delta_text(d: &crate::counters::delta::Delta) -> String {
    let mut name = d.vendor.clone();
    if let Some(p) = d.priority {
        name += &format!(" prio {p}");
    }
    if let Some(q) = d.queue {
        name += &format!(" queue {q}");
    }
    match d.status {
        DeltaStatus::Value(v) => format!("{name} +{v}"),
        DeltaStatus::Reset { before, after } => format!("{name} reset ({before} → {after})"),
        DeltaStatus::Saturated { bits } => format!("{name} saturated ({bits}-bit)"),
        DeltaStatus::Unavailable => format!("{name} not available"),
    }
}

fn gating(f: &Finding) -> bool {
    matches!(
        f.outcome,
        Outcome::Deviation | Outcome::Warning | Outcome::Error
    )
}

pub(super) fn counters(ctx: &Ctx) -> String {
    let ledgers: Vec<&LedgerRecord> = ctx
        .records
        .iter()
        .filter_map(|r| match r {
            Record::Ledger(l) if !l.changes.is_empty() || l.error.is_some() => Some(l),
            _ => None,
        })
        .collect();
    let rules: Vec<&Finding> = ctx
        .records
        .iter()
        .filter_map(|r| match r {
            Record::Finding(f) if f.round.is_some() && gating(f) => Some(f),
            _ => None,
        })
        .collect();
    if ledgers.is_empty() && rules.is_empty() {
        return String::new();
    }
    let mut h = String::new();
    if !rules.is_empty() {
        let _ = write!(
            h,
            "<h3>Rule violations</h3><table class=\"sortable\">{}<tbody>",
            head(&[
                "outcome",
                "test",
                "round",
                "check",
                "component",
                "observed",
                "expected",
                "message"
            ])
        );
        for f in rules.iter().take(FINDING_ROWS) {
            let _ = write!(
                h,
                "<tr class=\"violation\"><td class=\"{o}\">{o}</td><td>{}</td><td class=\"num\" data-v=\"{r}\">{r}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                esc(&f.test),
                esc(&f.check),
                esc(&f.component),
                esc(f.observed.as_deref().unwrap_or("")),
                esc(f.expected.as_deref().unwrap_or("")),
                esc(&f.message),
                o = f.outcome.as_str(),
                r = f.round.unwrap_or(0) + 1
            );
        }
        h.push_str("</tbody></table>");
    }
    // Devices and ports a rule named, to highlight their ledger rows.
    let flagged: BTreeSet<(&str, usize, String)> = rules
        .iter()
        .flat_map(|f| {
            super::ends(&f.component)
                .map(move |e| (f.test.as_str(), f.round.unwrap_or(0), e.to_string()))
        })
        .collect();
    let _ = write!(
        h,
        "<h3>Counter changes</h3><p>{} device windows with non-zero changes, per round (rounds counted from 1; a snapshot before the round's traffic and one after it).</p><table class=\"sortable\">{}<tbody>",
        ledgers.len(),
        head(&["test", "round", "host", "device", "source", "window (s)", "changes"])
    );
    for l in ledgers.iter().take(LEDGER_ROWS) {
        let me = format!("{}:{}", l.host, l.device);
        let hit = flagged.contains(&(l.test.as_str(), l.round, me.clone()))
            || flagged.contains(&(l.test.as_str(), l.round, l.host.clone()));
        let changes: Vec<String> = l.changes.iter().map(delta_text).collect();
        let _ = write!(
            h,
            "<tr{}><td>{}</td><td class=\"num\" data-v=\"{r}\">{r}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"num\">{:.1}–{:.1}</td><td>{}</td></tr>",
            if hit { " class=\"violation\"" } else { "" },
            esc(&l.test),
            esc(&l.host),
            esc(&l.device),
            esc(&l.source),
            l.t0_s,
            l.t1_s,
            esc(&match &l.error {
                Some(e) => format!("not read: {e}"),
                None => changes.join(", "),
            }),
            r = l.round + 1
        );
    }
    h.push_str("</tbody></table>");
    if ledgers.len() > LEDGER_ROWS {
        let _ = write!(
            h,
            "<p><small>… {} more device windows in results.jsonl.</small></p>",
            ledgers.len() - LEDGER_ROWS
        );
    }
    h
}

pub(super) fn audit(ctx: &Ctx) -> String {
    let findings: Vec<&Finding> = ctx
        .records
        .iter()
        .filter_map(|r| match r {
            Record::Finding(f) if f.round.is_none() => Some(f),
            _ => None,
        })
        .collect();
    if findings.is_empty() {
        return String::new();
    }
    let mut hosts: BTreeMap<&str, BTreeMap<Outcome, usize>> = BTreeMap::new();
    for f in &findings {
        *hosts
            .entry(&f.host)
            .or_default()
            .entry(f.outcome)
            .or_default() += 1;
    }
    let switches: BTreeSet<&str> = ctx
        .started
        .map(|s| {
            s.topology
                .switches
                .iter()
                .map(|x| x.name.as_str())
                .collect()
        })
        .unwrap_or_default();
    let clean: Vec<String> = hosts
        .iter()
        .filter(|(_, o)| o.keys().all(|k| *k == Outcome::Ok))
        .map(|(h, _)| h.to_string())
        .collect();
    let mut h = format!(
        "<p>{} hosts and switches read; {} with every check as expected{}.</p>",
        hosts.len(),
        clean.len(),
        if clean.is_empty() {
            String::new()
        } else {
            format!(": {}", esc(&crate::config::hostlist::compress(&clean)))
        }
    );
    let mut rows: Vec<&&Finding> = findings
        .iter()
        .filter(|f| f.outcome != Outcome::Ok)
        .collect();
    rows.sort_by(|a, b| b.outcome.cmp(&a.outcome).then(a.host.cmp(&b.host)));
    for (title, want_switch) in [("Switches", true), ("Hosts", false)] {
        let part: Vec<&&&Finding> = rows
            .iter()
            .filter(|f| switches.contains(f.host.as_str()) == want_switch)
            .collect();
        if part.is_empty() {
            continue;
        }
        let _ = write!(
            h,
            "<h3>{title}: {} findings not as expected</h3><table class=\"sortable\">{}<tbody>",
            part.len(),
            head(&[
                "outcome",
                "host",
                "check",
                "component",
                "observed",
                "expected",
                "message"
            ])
        );
        for f in part.iter().take(FINDING_ROWS) {
            let mut message = f.message.clone();
            if f.outcome == Outcome::NotAvailable && !f.sources.is_empty() {
                message += &format!(" (tried: {})", f.sources.join("; "));
            }
            let _ = write!(
                h,
                "<tr><td class=\"{o}\">{o}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                esc(&f.host),
                esc(&f.check),
                esc(&f.component),
                esc(f.observed.as_deref().unwrap_or("")),
                esc(f.expected.as_deref().unwrap_or("")),
                esc(&message),
                o = f.outcome.as_str()
            );
        }
        h.push_str("</tbody></table>");
        if part.len() > FINDING_ROWS {
            let _ = write!(
                h,
                "<p><small>… {} more in results.jsonl.</small></p>",
                part.len() - FINDING_ROWS
            );
        }
    }
    h
}

pub(super) fn baseline(ctx: &Ctx) -> String {
    let vs: Vec<&&VerdictRecord> = ctx
        .verdicts
        .iter()
        .filter(|v| v.kind == "baseline")
        .collect();
    if vs.is_empty() {
        return String::new();
    }
    let mut h = format!(
        "<table class=\"sortable\">{}<tbody>",
        head(&["verdict", "test", "component", "change", "message"])
    );
    for v in vs {
        let _ = write!(
            h,
            "<tr><td class=\"{c}\">{c}</td><td>{}</td><td>{}</td><td class=\"num\">{}</td><td>{}</td></tr>",
            esc(&v.test),
            esc(&v.component),
            esc(&fmt_value(v.value, v.unit.as_deref())),
            esc(&v.message),
            c = v.verdict.as_str()
        );
    }
    h.push_str("</tbody></table>");
    h
}

pub(super) fn preflight(ctx: &Ctx) -> String {
    let pre: Vec<&crate::audit::preflight::HostReport> = ctx
        .records
        .iter()
        .filter_map(|r| match r {
            Record::Preflight(p) => Some(p),
            _ => None,
        })
        .collect();
    if pre.is_empty() {
        return String::new();
    }
    let bad: Vec<_> = pre.iter().filter(|p| !p.problems.is_empty()).collect();
    let mut h = format!(
        "<p>{} of {} hosts ready</p>",
        pre.len() - bad.len(),
        pre.len()
    );
    if !bad.is_empty() {
        h.push_str("<table><thead><tr><th>host</th><th>problems</th></tr></thead><tbody>");
        for p in bad {
            let _ = write!(
                h,
                "<tr><td>{}</td><td>{}</td></tr>",
                esc(&p.host),
                esc(&p.problems.join("; "))
            );
        }
        h.push_str("</tbody></table>");
    }
    h
}

fn list_text(v: &serde_json::Value, cap: usize) -> String {
    match v {
        serde_json::Value::Array(a) => {
            let items: Vec<String> = a
                .iter()
                .map(|x| x.as_str().map_or_else(|| x.to_string(), str::to_string))
                .collect();
            if items.is_empty() {
                "none".into()
            } else if items.len() > cap {
                format!(
                    "{} ({} in all)",
                    crate::config::hostlist::compress(&items[..cap]),
                    items.len()
                )
            } else {
                crate::config::hostlist::compress(&items)
            }
        }
        serde_json::Value::Null => "—".into(),
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

pub(super) fn plan(ctx: &Ctx) -> String {
    let Some(s) = ctx.started else {
        return String::new();
    };
    let done: HashMap<&str, (f64, Verdict)> = {
        let mut m: HashMap<&str, (f64, Verdict)> = HashMap::new();
        for v in &ctx.verdicts {
            let e = m.entry(v.test.as_str()).or_insert((0.0, Verdict::Pass));
            e.0 = e.0.max(v.duration_s);
            e.1 = e.1.max(v.verdict);
        }
        m
    };
    let mut h = format!(
        "<p>Estimated {:.0} s in all. Gate fails on: {}{}.</p><table class=\"sortable\">{}<tbody>",
        s.estimate_s,
        esc(&s.gate_fail_on.join(", ")),
        if s.gate_observe_only.is_empty() {
            String::new()
        } else {
            format!("; observed only: {}", esc(&s.gate_observe_only.join(", ")))
        },
        head(&[
            "test",
            "kind",
            "pattern",
            "rounds",
            "steps",
            "repeat",
            "metric",
            "estimate (s)",
            "worst verdict"
        ])
    );
    for t in &s.tests {
        let worst = done
            .get(t.name.as_str())
            .map_or("not run", |d| d.1.as_str());
        let _ = write!(
            h,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td class=\"num\" data-v=\"{r}\">{r}</td><td class=\"num\" data-v=\"{st}\">{st}</td><td class=\"num\">{}</td><td>{}</td><td class=\"num\" data-v=\"{e:.1}\">{e:.0}</td><td class=\"{worst}\">{worst}</td></tr>",
            esc(&t.name),
            esc(&t.kind),
            esc(&t.pattern),
            t.repeat,
            esc(&format!("{} {}", t.metric.as_deref().unwrap_or(""), t.unit.as_deref().unwrap_or(""))),
            r = t.rounds,
            st = t.steps,
            e = t.estimate_s
        );
    }
    h.push_str("</tbody></table>");
    if let Some(c) = s.coverage.as_object() {
        h.push_str(
            "<h3>Coverage</h3><table><thead><tr><th>what</th><th>covered</th></tr></thead><tbody>",
        );
        let mut shown = BTreeSet::new();
        for (k, v) in c {
            if let Some(base) = k.strip_suffix("_covered") {
                let total = c.get(&format!("{base}_total"));
                let text = match (v.as_array(), total.and_then(|t| t.as_u64())) {
                    (Some(a), Some(t)) => format!("{} of {t}: {}", a.len(), list_text(v, 64)),
                    (None, Some(t)) => format!("{v} of {t}"),
                    _ => list_text(v, 64),
                };
                let _ = write!(
                    h,
                    "<tr><td>{}</td><td class=\"wrap\">{}</td></tr>",
                    esc(&base.replace('_', " ")),
                    esc(&text)
                );
                shown.insert(k.clone());
                shown.insert(format!("{base}_total"));
            }
        }
        for (k, v) in c {
            if !shown.contains(k) {
                let _ = write!(
                    h,
                    "<tr><td>{}</td><td>{}</td></tr>",
                    esc(&k.replace('_', " ")),
                    esc(&list_text(v, 64))
                );
            }
        }
        h.push_str("</tbody></table>");
    }
    if let Some(d) = s.disruptive.as_array().filter(|a| !a.is_empty()) {
        let _ = write!(
            h,
            "<h3>Disruptive steps: what each isolates</h3><table class=\"sortable\">{}<tbody>",
            head(&[
                "test",
                "action",
                "target",
                "during",
                "affected nodes",
                "isolated NICs",
                "isolated nodes",
                "dark rails",
                "leaf–spine links down",
                "refused"
            ])
        );
        for x in d {
            let f = |k: &str| list_text(x.get(k).unwrap_or(&serde_json::Value::Null), 16);
            let _ = write!(
                h,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"wrap\">{}</td><td class=\"wrap\">{}</td><td class=\"wrap\">{}</td><td>{}</td><td class=\"num\">{}</td><td>{}</td></tr>",
                esc(&f("test")),
                esc(&f("action")),
                esc(&f("target")),
                esc(&f("during")),
                esc(&f("affected_nodes")),
                esc(&f("isolated_nics")),
                esc(&f("isolated_nodes")),
                esc(&f("dark_rails")),
                esc(&f("fabric_links_down")),
                esc(&f("refused"))
            );
        }
        h.push_str("</tbody></table>");
    }
    h
}
