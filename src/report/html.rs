//! report.html: one self-contained file (inline CSS and SVG, no scripts
//! fetched from anywhere) for the people who must trust a pass or act on a
//! fail. A pure function of the records and the raw files.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use crate::score::Verdict;

use super::events::{Record, Sample, VerdictRecord};
use super::raw;
use super::sanitize::html_escape as esc;

const RAW_CAP: usize = 16 * 1024;

/// Rows of a test's component table. A 1,024-node pod's random pairs give
/// 16,384 components; past this many the table keeps the worst and says how
/// many it left to results.jsonl, so the file stays a few MiB.
const COMPONENT_ROWS: usize = 5000;

const CSS: &str = "body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222}\
h1{margin:0 0 4px}table{border-collapse:collapse;margin:8px 0 20px;width:100%}\
th,td{border:1px solid #ddd;padding:3px 8px;text-align:left;vertical-align:top}\
th{background:#f4f4f4}.pass{color:#17692e}.warn{color:#9a6700}.fail{color:#b3261e;font-weight:bold}\
.error{color:#6f2da8;font-weight:bold}.skipped{color:#777}.gate{font-size:20px;padding:8px 12px;display:inline-block;border-radius:4px}\
.gate.ok{background:#dff3e4}.gate.no{background:#fbe0de}pre{background:#f8f8f8;padding:8px;overflow:auto;max-height:400px;font-size:12px}\
details summary{cursor:pointer}.num{text-align:right;font-variant-numeric:tabular-nums}small{color:#666}";

fn fmt_value(v: Option<f64>, unit: Option<&str>) -> String {
    match v {
        Some(x) => format!("{x:.2} {}", unit.unwrap_or("")),
        None => "—".into(),
    }
}

fn threshold_text(v: &VerdictRecord) -> String {
    let t = &v.threshold;
    let mut parts = Vec::new();
    if let Some(x) = t.min {
        parts.push(format!("min {x:.1}"));
    }
    if let Some(x) = t.warn_min {
        parts.push(format!("warn below {x:.1}"));
    }
    if let Some(x) = t.max {
        parts.push(format!("max {x:.1}"));
    }
    if let Some(x) = t.warn_max {
        parts.push(format!("warn above {x:.1}"));
    }
    parts.join(", ")
}

/// busbw against message size on log scales, from a collective's samples.
fn curve_svg(points: &[(f64, f64)]) -> String {
    let pts: Vec<(f64, f64)> = points
        .iter()
        .copied()
        .filter(|(x, y)| *x > 0.0 && *y >= 0.0)
        .collect();
    if pts.len() < 2 {
        return String::new();
    }
    let (w, h, pad) = (520.0, 220.0, 40.0);
    let xmin = pts.iter().map(|p| p.0.log2()).fold(f64::MAX, f64::min);
    let xmax = pts
        .iter()
        .map(|p| p.0.log2())
        .fold(f64::MIN, f64::max)
        .max(xmin + 1.0);
    let ymax = pts.iter().map(|p| p.1).fold(0.0, f64::max).max(1.0);
    let px = |x: f64| pad + (x.log2() - xmin) / (xmax - xmin) * (w - 2.0 * pad);
    let py = |y: f64| h - pad - y / ymax * (h - 2.0 * pad);
    let path: Vec<String> = pts
        .iter()
        .map(|&(x, y)| format!("{:.1},{:.1}", px(x), py(y)))
        .collect();
    format!(
        "<svg width=\"{w}\" height=\"{h}\" role=\"img\" aria-label=\"bus bandwidth by message size\">\
<line x1=\"{pad}\" y1=\"{b}\" x2=\"{r}\" y2=\"{b}\" stroke=\"#999\"/><line x1=\"{pad}\" y1=\"{pad}\" x2=\"{pad}\" y2=\"{b}\" stroke=\"#999\"/>\
<polyline fill=\"none\" stroke=\"#1f6feb\" stroke-width=\"2\" points=\"{}\"/>\
<text x=\"{pad}\" y=\"{t}\" font-size=\"11\">{ymax:.0} GB/s</text><text x=\"{pad}\" y=\"{bl}\" font-size=\"11\">{} B</text>\
<text x=\"{r}\" y=\"{bl}\" font-size=\"11\" text-anchor=\"end\">{} B</text></svg>",
        path.join(" "),
        pts[0].0,
        pts[pts.len() - 1].0,
        b = h - pad,
        r = w - pad,
        t = pad - 6.0,
        bl = h - pad + 16.0,
    )
}

/// Worst first: by verdict, then by how close the value came to its
/// threshold (lowest first where the threshold is a minimum, highest first
/// where it is a maximum), so a table cut at `COMPONENT_ROWS` drops the best.
fn worst_first<'a>(vs: &[&'a VerdictRecord]) -> Vec<&'a VerdictRecord> {
    let mut out = vs.to_vec();
    out.sort_by(|a, b| {
        let t = &a.threshold;
        let lower_is_worse = t.min.is_some() || t.warn_min.is_some();
        let by_value = match (a.value, b.value) {
            (Some(x), Some(y)) if lower_is_worse => x.total_cmp(&y),
            (Some(x), Some(y)) => y.total_cmp(&x),
            (None, Some(_)) => std::cmp::Ordering::Less,
            (Some(_), None) => std::cmp::Ordering::Greater,
            (None, None) => std::cmp::Ordering::Equal,
        };
        b.verdict.cmp(&a.verdict).then(by_value)
    });
    out
}

pub fn render(records: &[Record], run_dir: &Path) -> String {
    let started = super::events::run_started(records);
    let finished = super::events::run_finished(records);
    let verdicts: Vec<&VerdictRecord> = records
        .iter()
        .filter_map(|r| {
            if let Record::Verdict(v) = r {
                Some(v)
            } else {
                None
            }
        })
        .collect();
    let samples: Vec<&Sample> = records
        .iter()
        .filter_map(|r| {
            if let Record::Sample(s) = r {
                Some(s)
            } else {
                None
            }
        })
        .collect();
    let mut h = String::new();
    let title = started
        .map(|s| format!("rocegate: {} on {}", s.suite, s.fabric))
        .unwrap_or_else(|| "rocegate report".into());
    let _ = write!(h, "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title><style>{CSS}</style></head><body>", esc(&title));
    let _ = write!(h, "<h1>{}</h1>", esc(&title));
    if let Some(s) = started {
        let _ = write!(
            h,
            "<p><small>started {} · environment {} · transport {} · seed {} · inventory {} (sha256 {}) · suite {} (sha256 {})</small></p>",
            esc(&s.started_at),
            esc(&s.environment),
            esc(&s.transport),
            s.seed,
            esc(&s.inventory.path),
            esc(&s.inventory.sha256.chars().take(12).collect::<String>()),
            esc(&s.suite_file.path),
            esc(&s.suite_file.sha256.chars().take(12).collect::<String>())
        );
    }
    let done = super::events::completeness(records);
    match finished {
        Some(f) => {
            let (cls, text) = if !done.complete {
                ("no", "RUN INCOMPLETE".to_string())
            } else if f.gate_passed {
                ("ok", "GATE PASSED".to_string())
            } else {
                ("no", "GATE FAILED".to_string())
            };
            let c = &f.counts;
            let _ = write!(
                h,
                "<p class=\"gate {cls}\">{text} — exit {}</p><p>{} pass · {} warn · {} fail · {} error · {} skipped</p>",
                f.exit_code, c.pass, c.warn, c.fail, c.error, c.skipped
            );
        }
        None => h.push_str("<p class=\"gate no\">RUN INCOMPLETE — exit 3</p>"),
    }
    if !done.complete {
        let _ = write!(
            h,
            "<p class=\"error\" id=\"incomplete\">{}</p>",
            esc(&done.describe())
        );
    }
    if let Some(n) = started.and_then(|s| s.rejudged_with.as_ref()) {
        let _ = write!(
            h,
            "<p class=\"warn\" id=\"rejudged\">Judged again against {} (not the run's own suite): traffic and audit verdicts are this suite's; fault, counter-ledger, bisection and baseline verdicts are as recorded.</p>",
            esc(n)
        );
    }
    if let Some(n) = started.and_then(|s| s.partial.as_ref()) {
        let _ = write!(
            h,
            "<p class=\"warn\" id=\"partial\">Partial run ({}): what it left out is listed as skipped, with the reason.</p>",
            esc(n)
        );
    }
    // The suspects lead: what to replace or fix, with why.
    let loc = crate::score::suspects::localise(records);
    if !loc.suspects.is_empty() || !loc.collisions.is_empty() {
        h.push_str("<h2 id=\"suspects\">Suspects</h2><table><tr><th>#</th><th>kind</th><th>component</th><th>score</th><th>evidence</th><th>results it explains</th></tr>");
        for (i, s) in loc.suspects.iter().enumerate() {
            let results: Vec<String> = s
                .results
                .iter()
                .take(20)
                .map(|r| format!("{} {}", r.test, r.component))
                .collect();
            let _ = write!(
                h,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{:.2}</td><td>{}</td><td><details><summary>{}</summary>{}</details></td></tr>",
                i + 1,
                esc(&s.kind),
                esc(&s.component),
                s.score,
                esc(&s.evidence.join("\n")).replace('\n', "<br>"),
                s.results.len(),
                esc(&results.join("\n")).replace('\n', "<br>")
            );
        }
        h.push_str("</table>");
        for c in &loc.collisions {
            let _ = write!(h, "<p class=\"warn\">{}</p>", esc(&c.message));
        }
    }
    // The hosts, as the preflight found them: problems listed, the ready counted.
    let pre: Vec<&crate::audit::preflight::HostReport> = records
        .iter()
        .filter_map(|r| match r {
            Record::Preflight(p) => Some(p),
            _ => None,
        })
        .collect();
    if !pre.is_empty() {
        let bad: Vec<_> = pre.iter().filter(|p| !p.problems.is_empty()).collect();
        let _ = write!(
            h,
            "<h2>Preflight</h2><p>{} of {} hosts ready</p>",
            pre.len() - bad.len(),
            pre.len()
        );
        if !bad.is_empty() {
            h.push_str("<table><tr><th>host</th><th>problems</th></tr>");
            for p in bad {
                let _ = write!(
                    h,
                    "<tr><td>{}</td><td>{}</td></tr>",
                    esc(&p.host),
                    esc(&p.problems.join("; "))
                );
            }
            h.push_str("</table>");
        }
    }
    // Every non-pass first: what to act on.
    let bad: Vec<&&VerdictRecord> = verdicts
        .iter()
        .filter(|v| !matches!(v.verdict, Verdict::Pass))
        .collect();
    if !bad.is_empty() {
        h.push_str("<h2>Needs attention</h2><table><tr><th>verdict</th><th>test</th><th>component</th><th>value</th><th>threshold</th><th>message and evidence</th></tr>");
        for v in bad.iter().take(500) {
            let mut evidence = String::new();
            for rel in v.evidence.iter().take(2) {
                let text = raw::read_capped(run_dir, rel, RAW_CAP)
                    .unwrap_or_else(|| format!("({rel} is missing)"));
                let _ = write!(
                    evidence,
                    "<details><summary>{}</summary><pre>{}</pre></details>",
                    esc(rel),
                    esc(&text)
                );
            }
            let _ = write!(
                h,
                "<tr><td class=\"{c}\">{c}</td><td>{}</td><td>{}</td><td class=\"num\">{}</td><td>{}</td><td>{}{evidence}</td></tr>",
                esc(&v.test),
                esc(&v.component),
                esc(&fmt_value(v.value, v.unit.as_deref())),
                esc(&threshold_text(v)),
                esc(&v.message),
                c = v.verdict.as_str()
            );
        }
        if bad.len() > 500 {
            let _ = write!(
                h,
                "<tr><td colspan=\"6\">… {} more in results.jsonl</td></tr>",
                bad.len() - 500
            );
        }
        h.push_str("</table>");
    }
    // Per test.
    let mut by_test: BTreeMap<&str, Vec<&VerdictRecord>> = BTreeMap::new();
    for v in &verdicts {
        by_test.entry(v.test.as_str()).or_default().push(v);
    }
    let order: Vec<String> = started
        .map(|s| s.tests.iter().map(|t| t.name.clone()).collect())
        .unwrap_or_else(|| by_test.keys().map(|k| k.to_string()).collect());
    for name in &order {
        let Some(vs) = by_test.get(name.as_str()) else {
            continue;
        };
        let planned = started.and_then(|s| s.tests.iter().find(|t| &t.name == name));
        let _ = write!(h, "<h2>{}</h2>", esc(name));
        if let Some(p) = planned {
            let _ = write!(
                h,
                "<p><small>{} · pattern {} · {} rounds · {} steps · repeat {}</small></p>",
                esc(&p.kind),
                esc(&p.pattern),
                p.rounds,
                p.steps,
                p.repeat
            );
        }
        // Collective curves.
        for s in samples.iter().filter(|s| &s.test == name) {
            if let Some(curve) = s.details.get("curve").and_then(|c| c.as_array()) {
                let pts: Vec<(f64, f64)> = curve
                    .iter()
                    .filter_map(|p| Some((p.get(0)?.as_f64()?, p.get(1)?.as_f64()?)))
                    .collect();
                let svg = curve_svg(&pts);
                if !svg.is_empty() {
                    let _ = write!(
                        h,
                        "<p>{} (round {}, repetition {})</p>{svg}",
                        esc(&s.component),
                        s.round,
                        s.rep
                    );
                    break;
                }
            }
        }
        let values: Vec<f64> = vs.iter().filter_map(|v| v.value).collect();
        if let (Some(lo), Some(hi)) = (
            values.iter().copied().reduce(f64::min),
            values.iter().copied().reduce(f64::max),
        ) {
            let _ = write!(
                h,
                "<p>{} components · values from {lo:.2} to {hi:.2} {}</p>",
                vs.len(),
                esc(vs[0].unit.as_deref().unwrap_or(""))
            );
        }
        let rows = worst_first(vs);
        if rows.len() > COMPONENT_ROWS {
            let _ = write!(
                h,
                "<details><summary>the worst {COMPONENT_ROWS} of {} components</summary>",
                rows.len()
            );
        } else if rows.len() == 1 {
            h.push_str("<details><summary>the component</summary>");
        } else {
            let _ = write!(
                h,
                "<details><summary>all {} components, worst first</summary>",
                rows.len()
            );
        }
        h.push_str("<table><tr><th>component</th><th>verdict</th><th>value</th><th>samples</th><th>message</th></tr>");
        for v in rows.iter().take(COMPONENT_ROWS) {
            let samples: Vec<String> = v.samples.iter().map(|x| format!("{x:.2}")).collect();
            let _ = write!(
                h,
                "<tr><td>{}</td><td class=\"{c}\">{c}</td><td class=\"num\">{}</td><td>{}</td><td>{}</td></tr>",
                esc(&v.component),
                esc(&fmt_value(v.value, v.unit.as_deref())),
                esc(&samples.join(" ")),
                esc(&v.message),
                c = v.verdict.as_str()
            );
        }
        if rows.len() > COMPONENT_ROWS {
            let _ = write!(
                h,
                "<tr><td colspan=\"5\">… {} more, each at least as good as the last row above, in results.jsonl</td></tr>",
                rows.len() - COMPONENT_ROWS
            );
        }
        h.push_str("</table></details>");
    }
    if let Some(s) = started {
        let _ = write!(
            h,
            "<h2>Plan and coverage</h2><pre>{}</pre>",
            esc(&serde_json::to_string_pretty(&s.coverage).unwrap_or_default())
        );
        if s.disruptive.as_array().is_some_and(|a| !a.is_empty()) {
            let _ = write!(
                h,
                "<h3>Disruptive steps</h3><pre>{}</pre>",
                esc(&serde_json::to_string_pretty(&s.disruptive).unwrap_or_default())
            );
        }
    }
    h.push_str("</body></html>\n");
    h
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::score::threshold::Resolved;

    fn verdict(component: &str, verdict: Verdict, value: f64) -> VerdictRecord {
        VerdictRecord {
            test: "bw".into(),
            kind: "perftest".into(),
            component: component.into(),
            verdict,
            metric: Some("bw_avg_gbps".into()),
            value: Some(value),
            unit: Some("Gb/s".into()),
            threshold: Resolved {
                min: Some(220.0),
                warn_min: Some(260.0),
                ..Default::default()
            },
            samples: vec![value],
            message: String::new(),
            evidence: Vec::new(),
            duration_s: 1.0,
            series: Vec::new(),
        }
    }

    #[test]
    fn preflight_problems_are_listed_and_ready_hosts_counted() {
        let host = |name: &str, problems: &[&str]| {
            Record::Preflight(crate::audit::preflight::HostReport {
                host: name.into(),
                reachable: problems.is_empty(),
                problems: problems.iter().map(|p| p.to_string()).collect(),
                ..Default::default()
            })
        };
        let recs = vec![
            host("gpu001", &[]),
            host(
                "gpu002",
                &["unreachable: gpu002: ssh: connect to host 10.0.0.2 port 22: No route to host"],
            ),
        ];
        let html = render(&recs, Path::new("/nonexistent"));
        assert!(
            html.contains("<h2>Preflight</h2><p>1 of 2 hosts ready</p>"),
            "{html}"
        );
        assert!(
            html.contains("<td>gpu002</td><td>unreachable: gpu002: ssh"),
            "{html}"
        );
        assert!(!html.contains("<td>gpu001</td>"), "{html}");
    }

    #[test]
    fn components_are_listed_worst_first() {
        let vs = [
            verdict("a", Verdict::Pass, 390.0),
            verdict("b", Verdict::Fail, 200.0),
            verdict("c", Verdict::Pass, 300.0),
            verdict("d", Verdict::Warn, 250.0),
            verdict("e", Verdict::Error, 0.0),
        ];
        let refs: Vec<&VerdictRecord> = vs.iter().collect();
        let order: Vec<&str> = worst_first(&refs)
            .iter()
            .map(|v| v.component.as_str())
            .collect();
        assert_eq!(order, ["e", "b", "d", "c", "a"]);
    }

    #[test]
    fn a_long_component_table_keeps_the_worst_and_counts_the_rest() {
        let mut records: Vec<Record> = (0..COMPONENT_ROWS + 2)
            .map(|i| {
                Record::Verdict(verdict(
                    &format!("pair{i}"),
                    Verdict::Pass,
                    300.0 + i as f64,
                ))
            })
            .collect();
        records.push(Record::Verdict(verdict("slow", Verdict::Fail, 100.0)));
        let html = render(&records, Path::new("/nonexistent"));
        let table = &html[html.find("<h2>bw</h2>").expect("the test's section")..];
        assert!(table.contains(&format!(
            "the worst {COMPONENT_ROWS} of {} components",
            COMPONENT_ROWS + 3
        )));
        assert!(table.contains("… 3 more, each at least as good"));
        let slow = table
            .find("<td>slow</td>")
            .expect("the failing pair is listed");
        assert!(
            slow < table
                .find("<td>pair0</td>")
                .expect("the slowest pass is listed")
        );
        assert!(!table.contains(&format!("<td>pair{}</td>", COMPONENT_ROWS + 1)));
    }
}
