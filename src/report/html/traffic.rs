//! The traffic views: a node × node heatmap per pair test, per-rail and
//! per-leaf distributions, curves over message size, and each fault's
//! timeline.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt::Write as _;

use serde_json::json;

use crate::score::Verdict;

use super::svg::{self, Chart, Group, Line, Rule, Scale};
use super::{by_test, esc, fmt_value, lower_is_worse, Ctx, VerdictRecord};

/// Past this many nodes a heatmap is drawn on a canvas from JSON, with a
/// leaf × leaf table to drill down from; below it, a table whose cells
/// link to their results.
const TABLE_NODES: usize = 128;

/// The pair results of a test whose both ends are NICs of the topology.
/// A pair result and its two nodes.
type Pair<'a> = (&'a VerdictRecord, &'a str, &'a str);

fn pair_tests<'a>(ctx: &Ctx<'a>) -> Vec<(String, Vec<Pair<'a>>)> {
    by_test(ctx)
        .into_iter()
        .filter_map(|(name, vs)| {
            let pairs: Vec<_> = vs
                .into_iter()
                .filter(|v| v.value.is_some() || v.verdict != Verdict::Pass)
                .filter_map(|v| {
                    let mut e = super::ends(&v.component);
                    let (a, b) = (e.next()?, e.next()?);
                    let (na, nb) = (ctx.nics.get(a)?, ctx.nics.get(b)?);
                    Some((v, na.node.as_str(), nb.node.as_str()))
                })
                .collect();
            (!pairs.is_empty()).then_some((name, pairs))
        })
        .collect()
}

/// Colour class of a result: failing and erroring results by verdict,
/// passes graded by how close they came to the test's best.
fn bucket(v: &VerdictRecord, best: f64) -> &'static str {
    match v.verdict {
        Verdict::Error => "hx",
        Verdict::Fail => "h7",
        Verdict::Warn => "h5",
        Verdict::Skipped => "hn",
        Verdict::Pass => {
            let Some(x) = v.value else { return "h0" };
            let r = if lower_is_worse(v) {
                x / best
            } else {
                best / x
            };
            if !r.is_finite() || r >= 0.98 {
                "h0"
            } else if r >= 0.95 {
                "h1"
            } else if r >= 0.90 {
                "h2"
            } else {
                "h3"
            }
        }
    }
}

const LEGEND: &str = "<p class=\"legend\"><span class=\"h0\">pass ≥ 98 % of the test's best</span><span class=\"h1\">≥ 95 %</span><span class=\"h2\">≥ 90 %</span><span class=\"h3\">pass, lower</span><span class=\"h5\">warn</span><span class=\"h7\">fail</span><span class=\"hx\">error</span><span class=\"hn\">not tested</span></p>";

/// The best value of a test (its 98th percentile in the good direction),
/// so one outlier does not stretch the scale.
fn best_of(vs: &[&VerdictRecord]) -> f64 {
    let mut x: Vec<f64> = vs
        .iter()
        .filter_map(|v| v.value)
        .filter(|v| v.is_finite())
        .collect();
    if x.is_empty() {
        return 1.0;
    }
    x.sort_by(f64::total_cmp);
    let lower_worse = vs.first().is_none_or(|v| lower_is_worse(v));
    let k = ((x.len() - 1) as f64 * if lower_worse { 0.98 } else { 0.02 }).round() as usize;
    x[k]
}

/// Per node pair: the worst result (by verdict, then value) and how many
/// NIC pairs it covers.
struct Cell<'a> {
    worst: &'a VerdictRecord,
    count: usize,
}

pub(super) fn heatmaps(ctx: &Ctx) -> String {
    let tests = pair_tests(ctx);
    if tests.is_empty() {
        return String::new();
    }
    let mut nodes: Vec<&str> = Vec::new();
    if let Some(s) = ctx.started {
        for n in &s.topology.nics {
            if nodes.last() != Some(&n.node.as_str()) && !nodes.contains(&n.node.as_str()) {
                nodes.push(&n.node);
            }
        }
    }
    let index: HashMap<&str, usize> = nodes.iter().enumerate().map(|(i, n)| (*n, i)).collect();
    let mut leaves: Vec<&str> = nodes
        .iter()
        .map(|n| ctx.node_leaf.get(n).copied().unwrap_or("?"))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    leaves.sort();
    let leaf_index: HashMap<&str, usize> =
        leaves.iter().enumerate().map(|(i, l)| (*l, i)).collect();
    let node_group: Vec<usize> = nodes
        .iter()
        .map(|n| leaf_index[ctx.node_leaf.get(n).copied().unwrap_or("?")])
        .collect();
    let mut h = String::from(
        "<p>Each cell is a node pair: its worst NIC-pair result in the test. A node sits at the leaf of its lowest-rail NIC.</p>",
    );
    h.push_str(LEGEND);
    for (t, (name, pairs)) in tests.iter().enumerate() {
        let vs: Vec<&VerdictRecord> = pairs.iter().map(|p| p.0).collect();
        let best = best_of(&vs);
        let mut cells: BTreeMap<(usize, usize), Cell> = BTreeMap::new();
        for (v, a, b) in pairs {
            let (Some(&i), Some(&j)) = (index.get(a), index.get(b)) else {
                continue;
            };
            let key = (i.min(j), i.max(j));
            let e = cells.entry(key).or_insert(Cell { worst: v, count: 0 });
            e.count += 1;
            if super::worst_first(&[v, e.worst])[0].component == v.component {
                e.worst = v;
            }
        }
        let label = |c: &Cell| {
            format!(
                "{} {} ({} NIC pair(s); worst {})",
                fmt_value(c.worst.value, c.worst.unit.as_deref()),
                c.worst.verdict.as_str(),
                c.count,
                c.worst.component
            )
        };
        let _ = write!(
            h,
            "<h3 id=\"heat-{t}-title\">{} <small>{} node pairs tested</small></h3>",
            esc(name),
            cells.len()
        );
        if nodes.len() <= TABLE_NODES {
            h.push_str("<table class=\"heat\" role=\"grid\"><thead><tr><th></th>");
            for (j, n) in nodes.iter().enumerate() {
                let _ = write!(h, "<th scope=\"col\" title=\"{}\">{}</th>", esc(n), j + 1);
            }
            h.push_str("</tr></thead><tbody>");
            for (i, a) in nodes.iter().enumerate() {
                let _ = write!(h, "<tr><th scope=\"row\">{} {}</th>", i + 1, esc(a));
                for (j, b) in nodes.iter().enumerate() {
                    match cells.get(&(i.min(j), i.max(j))) {
                        Some(c) => {
                            let text = format!("{a} × {b}: {}", label(c));
                            let cls = bucket(c.worst, best);
                            match ctx
                                .rows
                                .get(&(c.worst.test.as_str(), c.worst.component.as_str()))
                            {
                                Some(id) => {
                                    let _ = write!(
                                        h,
                                        "<td class=\"{cls}\"><a href=\"#{id}\" title=\"{t}\" aria-label=\"{t}\"></a></td>",
                                        t = esc(&text)
                                    );
                                }
                                None => {
                                    let _ = write!(
                                        h,
                                        "<td class=\"{cls}\" title=\"{}\"></td>",
                                        esc(&text)
                                    );
                                }
                            }
                        }
                        None => h.push_str("<td class=\"hn\"></td>"),
                    }
                }
                h.push_str("</tr>");
            }
            h.push_str("</tbody></table>");
        } else {
            // Leaf × leaf, each cell drilling down into the canvas.
            let mut agg: BTreeMap<(usize, usize), (usize, usize, &VerdictRecord)> = BTreeMap::new();
            for (&(i, j), c) in &cells {
                let (gi, gj) = (
                    node_group[i].min(node_group[j]),
                    node_group[i].max(node_group[j]),
                );
                let e = agg.entry((gi, gj)).or_insert((0, 0, c.worst));
                e.0 += 1;
                if c.worst.verdict >= Verdict::Fail {
                    e.1 += 1;
                }
                if super::worst_first(&[c.worst, e.2])[0].component == c.worst.component {
                    e.2 = c.worst;
                }
            }
            let canvas = format!("heat-{t}");
            let _ = write!(
                h,
                "<p>{} nodes: leaf × leaf below, each cell the worst of its node pairs; choose a cell to draw its nodes below, or <button type=\"button\" data-drill=\"{canvas}\" data-label=\"whole pod\">the whole pod</button>.</p>",
                nodes.len()
            );
            h.push_str("<table class=\"heat leafheat\"><thead><tr><th></th>");
            for (j, l) in leaves.iter().enumerate() {
                let _ = write!(h, "<th scope=\"col\" title=\"{}\">{}</th>", esc(l), j + 1);
            }
            h.push_str("</tr></thead><tbody>");
            for (i, a) in leaves.iter().enumerate() {
                let _ = write!(h, "<tr><th scope=\"row\">{} {}</th>", i + 1, esc(a));
                for (j, b) in leaves.iter().enumerate() {
                    match agg.get(&(i.min(j), i.max(j))) {
                        Some((n, bad, worst)) => {
                            let text = format!("{a} × {b}");
                            let _ = write!(
                                h,
                                "<td class=\"{}\"><a href=\"#{canvas}\" data-drill=\"{canvas}\" data-a=\"{i}\" data-b=\"{j}\" data-label=\"{}\" title=\"{t}: {n} node pairs, {bad} failing\" aria-label=\"{t}: {n} node pairs, {bad} failing\"></a></td>",
                                bucket(worst, best),
                                esc(&text),
                                t = esc(&text)
                            );
                        }
                        None => h.push_str("<td class=\"hn\"></td>"),
                    }
                }
                h.push_str("</tr>");
            }
            h.push_str("</tbody></table>");
            let data = json!({
                "nodes": nodes,
                "leaf": node_group,
                "cells": cells.iter().map(|(&(i, j), c)| json!([i, j, bucket(c.worst, best), label(c)])).collect::<Vec<_>>(),
            });
            let src = ctx.add_data(format!("heatdata-{t}"), &data);
            let _ = write!(
                h,
                "<p id=\"{canvas}-view\">whole pod</p><canvas class=\"heat\" id=\"{canvas}\" tabindex=\"0\" data-src=\"{src}\" data-info=\"{canvas}-info\" aria-label=\"{} node pair heatmap: arrow keys move, Enter filters the results\">Drawing the heatmap needs JavaScript; the leaf table above and the results table below hold the same results.</canvas><p class=\"cellinfo\" id=\"{canvas}-info\" aria-live=\"polite\"></p>",
                esc(name)
            );
        }
    }
    h
}

fn median(x: &mut [f64]) -> Option<f64> {
    if x.is_empty() {
        return None;
    }
    x.sort_by(f64::total_cmp);
    let m = x.len() / 2;
    Some(if x.len() % 2 == 1 {
        x[m]
    } else {
        (x[m - 1] + x[m]) / 2.0
    })
}

pub(super) fn distributions(ctx: &Ctx) -> String {
    let tests = pair_tests(ctx);
    if tests.is_empty() {
        return String::new();
    }
    // NICs a suspect names, alone or as a cable's end.
    let suspected: BTreeSet<&str> = ctx
        .loc
        .suspects
        .iter()
        .flat_map(|s| super::ends(&s.component))
        .filter(|e| ctx.nics.contains_key(e))
        .collect();
    let mut h = String::from("<p>Each NIC's median over its results in the test, grouped by rail and by leaf: the box spans the middle half, whiskers reach the last value within 1.5 times that span, dots are outliers beyond it and NICs a suspect names or whose median fails the threshold (hover for the name).</p>");
    for (name, pairs) in &tests {
        let mut per_nic: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
        for (v, _, _) in pairs {
            let Some(x) = v.value else { continue };
            for e in super::ends(&v.component) {
                per_nic.entry(e).or_default().push(x);
            }
        }
        let first = pairs[0].0;
        let unit = first.unit.clone().unwrap_or_default();
        let mut mins: Vec<f64> = pairs.iter().filter_map(|p| p.0.threshold.min).collect();
        let mut maxs: Vec<f64> = pairs.iter().filter_map(|p| p.0.threshold.max).collect();
        let threshold = median(&mut mins)
            .map(|m| ("min", m))
            .or_else(|| median(&mut maxs).map(|m| ("max", m)));
        let fails = |x: f64| match threshold {
            Some(("min", t)) => x < t,
            Some((_, t)) => x > t,
            None => false,
        };
        let medians: Vec<(&str, f64)> = per_nic
            .iter_mut()
            .filter_map(|(n, x)| Some((*n, median(x)?)))
            .collect();
        let rule = threshold.map(|(k, t)| Rule {
            at: t,
            class: "thr",
            label: format!("{k} {t:.1} (median threshold)"),
        });
        let _ = write!(h, "<h3>{}</h3><div class=\"two\">", esc(name));
        for (title, key) in [("per rail", true), ("per leaf", false)] {
            let mut groups: BTreeMap<String, Group> = BTreeMap::new();
            for (nic, x) in &medians {
                let Some(t) = ctx.nics.get(nic) else { continue };
                let label = if key {
                    format!("rail {:02}", t.rail)
                } else {
                    t.port
                        .as_deref()
                        .and_then(|p| p.split(':').next())
                        .unwrap_or("no leaf")
                        .to_string()
                };
                let g = groups.entry(label.clone()).or_insert(Group {
                    label,
                    values: Vec::new(),
                    marked: Vec::new(),
                });
                g.values.push((nic.to_string(), *x));
                if suspected.contains(nic) || fails(*x) {
                    g.marked.push(nic.to_string());
                }
            }
            let groups: Vec<Group> = groups.into_values().collect();
            let _ = write!(
                h,
                "<figure><figcaption>{} {title}</figcaption>{}</figure>",
                esc(name),
                svg::boxes(&format!("{name} {title}"), &unit, &groups, rule.as_ref())
            );
        }
        h.push_str("</div>");
    }
    h
}

/// At most this many curves drawn per test: the worst and the first few.
const CURVES_PER_TEST: usize = 5;

pub(super) fn curves(ctx: &Ctx) -> String {
    let mut h = String::new();
    for (name, vs) in by_test(ctx) {
        let mut lines: Vec<(f64, Line)> = Vec::new();
        for s in ctx.samples.iter().filter(|s| s.test == name) {
            // nccl-tests' curve is the step's; perftest's is each client's
            // (the first drawn).
            let curve = s.details.get("curve").or_else(|| {
                s.details
                    .get("clients")
                    .and_then(|c| c.as_array())
                    .and_then(|c| c.iter().find_map(|c| c.get("curve")))
            });
            let Some(curve) = curve.and_then(|c| c.as_array()) else {
                continue;
            };
            let pts: Vec<(f64, f64)> = curve
                .iter()
                .filter_map(|p| Some((p.get(0)?.as_f64()?, p.get(1)?.as_f64()?)))
                .collect();
            let sizes: BTreeSet<u64> = pts.iter().map(|p| p.0 as u64).collect();
            if sizes.len() < 2 {
                continue;
            }
            let last = pts.last().map_or(0.0, |p| p.1);
            lines.push((
                last,
                Line {
                    name: format!("{} (round {}, repetition {})", s.component, s.round, s.rep),
                    points: pts,
                },
            ));
        }
        if lines.is_empty() {
            continue;
        }
        let total = lines.len();
        lines.sort_by(|a, b| a.0.total_cmp(&b.0));
        let lines: Vec<Line> = lines
            .into_iter()
            .take(CURVES_PER_TEST)
            .map(|l| l.1)
            .collect();
        let v = vs[0];
        let unit = v.unit.clone().unwrap_or_default();
        let what = match v.metric.as_deref() {
            Some(m) if m.contains("busbw") => "bus bandwidth",
            Some(m) if m.contains("lat") || m.starts_with("t_") => "latency",
            _ => "bandwidth",
        };
        let mut levels = Vec::new();
        if let Some(m) = v.threshold.min {
            levels.push(Rule {
                at: m,
                class: "thr",
                label: format!(
                    "min {m:.1} {unit} (on {})",
                    v.metric.as_deref().unwrap_or("the metric")
                ),
            });
        }
        if let Some(m) = v.threshold.warn_min {
            levels.push(Rule {
                at: m,
                class: "lim",
                label: format!("warn below {m:.1}"),
            });
        }
        let chart = Chart {
            label: format!("{name}: {what} by message size"),
            x_label: "message size (bytes)".into(),
            y_label: format!("{what} ({unit})"),
            lines,
            levels,
            ..Default::default()
        };
        let _ = write!(
            h,
            "<h3>{}</h3><p><small>{} curve(s){}; the threshold applies to the test's metric.</small></p>{}",
            esc(&name),
            total,
            if total > CURVES_PER_TEST {
                format!(", the {CURVES_PER_TEST} lowest at the largest size drawn")
            } else {
                String::new()
            },
            chart.render(Scale::Bytes)
        );
    }
    h
}

pub(super) fn faults(ctx: &Ctx) -> String {
    let mut h = String::new();
    for v in ctx.verdicts.iter().filter(|v| v.kind == "fault") {
        // The fault's own commands are samples under the fault's name.
        let windows: Vec<(f64, f64)> = ctx
            .samples
            .iter()
            .filter(|s| s.test == v.test && s.component == v.component)
            .map(|s| (s.started_s, s.ended_s))
            .collect();
        let start = windows.iter().map(|w| w.0).reduce(f64::min);
        let end = windows.iter().map(|w| w.1).reduce(f64::max);
        let _ = write!(
            h,
            "<h3>{}: {}</h3><p class=\"{c}\">{c}: {}</p>",
            esc(&v.test),
            esc(&v.component),
            esc(&v.message),
            c = v.verdict.as_str()
        );
        let mut chart = Chart {
            label: format!("{}: traffic around the fault", v.component),
            x_label: "seconds since the run started".into(),
            y_label: "workload throughput".into(),
            ..Default::default()
        };
        // Around the fault: from a little before it to past the recovery
        // or the limit, whichever is later.
        let (lo, hi) = match (start, end) {
            (Some(s), Some(e)) => {
                let back = v
                    .value
                    .filter(|_| v.unit.as_deref() == Some("s"))
                    .unwrap_or(0.0);
                let lim = v.threshold.max.unwrap_or(0.0);
                (s - 20.0, s + back.max(lim).max(e - s) + 20.0)
            }
            _ => (f64::MIN, f64::MAX),
        };
        let within = |pts: &[(f64, f64)]| -> Vec<(f64, f64)> {
            pts.iter()
                .copied()
                .filter(|p| p.0 >= lo && p.0 <= hi)
                .collect()
        };
        if !v.series.is_empty() {
            chart.lines.push(Line {
                name: "slowest step".into(),
                points: within(&v.series),
            });
        } else {
            // Not judged on a series (the workload failed): each step's own.
            for s in ctx
                .samples
                .iter()
                .filter(|s| s.test == v.test && s.component != v.component && !s.series.is_empty())
                .take(5)
            {
                chart.lines.push(Line {
                    name: s.component.clone(),
                    points: within(&s.series),
                });
            }
        }
        if let (Some(s), Some(e)) = (start, end) {
            chart
                .spans
                .push((s, e.max(s), format!("fault from {s:.1} s to {e:.1} s")));
            chart.marks.push(Rule {
                at: s,
                class: "thr",
                label: "fault".into(),
            });
            if v.unit.as_deref() == Some("s") {
                if let Some(back) = v.value {
                    chart.marks.push(Rule {
                        at: s + back,
                        class: "rec",
                        label: format!("recovered {back:.1} s"),
                    });
                }
            }
            if let Some(lim) = v.threshold.max.filter(|_| v.unit.as_deref() == Some("s")) {
                chart.marks.push(Rule {
                    at: s + lim,
                    class: "lim",
                    label: format!("limit {lim:.1} s"),
                });
            }
        }
        let _ = write!(
            h,
            "<p>fault {} · recovery {} · limit {}</p>",
            match (start, end) {
                (Some(s), Some(e)) => format!("{s:.1} s to {e:.1} s on the run's clock"),
                _ => "not sent".into(),
            },
            if v.unit.as_deref() == Some("s") {
                esc(&fmt_value(v.value, Some("s")))
            } else {
                "not measured".into()
            },
            v.threshold
                .max
                .filter(|_| v.unit.as_deref() == Some("s"))
                .map_or("none set".into(), |l| format!("{l:.1} s"))
        );
        let svg = chart.render(Scale::Linear);
        if svg.is_empty() {
            h.push_str(
                "<p><small>No time series was recorded for this fault's workload.</small></p>",
            );
        } else {
            h.push_str(&svg);
        }
    }
    h
}
