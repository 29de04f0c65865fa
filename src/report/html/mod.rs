//! report.html: one self-contained offline file for the people who must
//! trust a pass or act on a fail, built from the event log (and the raw
//! files it points at) alone. Diagnosis first: the gate and why, the
//! suspects, then the views that back them (pair heatmaps, per-rail and
//! per-leaf distributions, curves, fault timelines, counters, audit,
//! baseline), the plan and its coverage, and every result in one sortable,
//! filterable table.
//!
//! Every inventory and tool string reaches the page as escaped text, or as
//! JSON inside `<script type="application/json">` with `<`, `>`, `&`,
//! U+2028 and U+2029 escaped. A Content-Security-Policy allows the one
//! inline script and style by their hashes and images only from `data:`,
//! so a missed escape cannot run anything.

mod diagnosis;
mod svg;
mod tables;
mod traffic;

use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::path::Path;

use sha2::{Digest, Sha256};

use crate::score::suspects::Localisation;
use crate::score::Verdict;

use super::events::{Record, RunStarted, Sample, TopoNic, VerdictRecord};
use super::raw;
pub(crate) use super::sanitize::html_escape as esc;

const CSS: &str = include_str!("report.css");
const SCRIPT: &str = include_str!("report.js");

/// One raw output shown inline is cut here; the file stays in `raw/`.
const RAW_CAP: usize = 16 * 1024;
/// All raw outputs shown inline together, so a run with thousands of
/// failures still gives a page a browser opens.
const RAW_BUDGET: usize = 4 * 1024 * 1024;
/// Passing results listed per test (worst first); every non-pass is listed
/// up to `NONPASS_ROWS` per test. The rest are counted, and are in
/// results.jsonl.
const PASS_ROWS: usize = 1500;
const NONPASS_ROWS: usize = 3000;

/// What every section reads: the records sorted by kind, where each NIC
/// sits, the localisation, and which results the results table lists.
struct Ctx<'a> {
    run_dir: &'a Path,
    started: Option<&'a RunStarted>,
    records: &'a [Record],
    verdicts: Vec<&'a VerdictRecord>,
    samples: Vec<&'a Sample>,
    nics: HashMap<&'a str, &'a TopoNic>,
    /// Node → the leaf of its lowest-rail NIC: its place in leaf views.
    node_leaf: HashMap<&'a str, &'a str>,
    loc: Localisation,
    /// (test, component) → the id of its row in the results table.
    rows: HashMap<(&'a str, &'a str), String>,
    raw_left: Cell<usize>,
    /// JSON data blocks (`id`, text) written at the end of the page.
    data: RefCell<Vec<(String, String)>>,
}

impl<'a> Ctx<'a> {
    fn new(records: &'a [Record], run_dir: &'a Path) -> Ctx<'a> {
        let started = super::events::run_started(records);
        let verdicts: Vec<&VerdictRecord> = records
            .iter()
            .filter_map(|r| match r {
                Record::Verdict(v) => Some(v),
                _ => None,
            })
            .collect();
        let samples = records
            .iter()
            .filter_map(|r| match r {
                Record::Sample(s) => Some(s),
                _ => None,
            })
            .collect();
        let mut nics = HashMap::new();
        let mut node_leaf: HashMap<&str, (u32, &str)> = HashMap::new();
        if let Some(s) = started {
            for n in &s.topology.nics {
                nics.insert(n.name.as_str(), n);
                if let Some(leaf) = n.port.as_deref().and_then(|p| p.split(':').next()) {
                    let e = node_leaf.entry(n.node.as_str()).or_insert((n.rail, leaf));
                    if n.rail < e.0 {
                        *e = (n.rail, leaf);
                    }
                }
            }
        }
        let mut ctx = Ctx {
            run_dir,
            started,
            records,
            verdicts,
            samples,
            nics,
            node_leaf: node_leaf.into_iter().map(|(k, v)| (k, v.1)).collect(),
            loc: crate::score::suspects::localise(records),
            rows: HashMap::new(),
            raw_left: Cell::new(RAW_BUDGET),
            data: RefCell::new(Vec::new()),
        };
        ctx.rows = tables::listed_rows(&ctx);
        ctx
    }

    /// The nodes a component names: each NIC's node, and any token that is
    /// a node of the topology.
    fn nodes_of(&self, component: &str) -> Vec<&'a str> {
        let mut out: Vec<&str> = Vec::new();
        for end in ends(component) {
            if let Some(n) = self.nics.get(end) {
                out.push(n.node.as_str());
            } else if let Some((node, _)) = self
                .node_leaf
                .get_key_value(end.split(':').next().unwrap_or(end))
            {
                out.push(node);
            }
        }
        out.dedup();
        out
    }

    fn rails_of(&self, component: &str) -> Vec<u32> {
        let mut out: Vec<u32> = ends(component)
            .filter_map(|e| self.nics.get(e).map(|n| n.rail))
            .collect();
        out.sort_unstable();
        out.dedup();
        out
    }

    /// A raw output as a collapsible block, while the page's budget lasts.
    fn raw_block(&self, rel: &str) -> String {
        let left = self.raw_left.get();
        if left == 0 {
            return format!(
                "<p><small>{} (not shown: the page's budget for raw outputs is spent; the file is in the run directory)</small></p>",
                esc(rel)
            );
        }
        let text = raw::read_capped(self.run_dir, rel, RAW_CAP.min(left))
            .unwrap_or_else(|| format!("({rel} is missing from the run directory)"));
        self.raw_left.set(left.saturating_sub(text.len()));
        format!(
            "<details><summary>{}</summary><pre>{}</pre></details>",
            esc(rel),
            esc(&text)
        )
    }

    /// A link to a result's row, or its name where the table left it out.
    fn result_link(&self, test: &str, component: &str) -> String {
        match self.rows.get(&(test, component)) {
            Some(id) => format!("<a href=\"#{id}\">{} {}</a>", esc(test), esc(component)),
            None => format!("{} {}", esc(test), esc(component)),
        }
    }

    /// Stores a JSON data block and returns its id.
    fn add_data(&self, id: String, value: &serde_json::Value) -> String {
        self.data.borrow_mut().push((id.clone(), json_text(value)));
        id
    }
}

/// The ends of a component: `a<->b`, `a <-> b`, or the component itself.
fn ends(component: &str) -> impl Iterator<Item = &str> {
    component.split("<->").map(str::trim)
}

/// JSON for a `<script type="application/json">` block: nothing in it can
/// close the element or start markup, whatever the strings hold.
fn json_text(v: &serde_json::Value) -> String {
    let s = serde_json::to_string(v).unwrap_or_else(|_| "null".into());
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
    out
}

fn csp_hash(text: &str) -> String {
    format!(
        "'sha256-{}'",
        crate::encode::base64(&Sha256::digest(text.as_bytes()))
    )
}

fn fmt_value(v: Option<f64>, unit: Option<&str>) -> String {
    match v {
        Some(x) if x.abs() >= 100.0 => format!("{x:.1} {}", unit.unwrap_or("")),
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
    let mut s = parts.join(", ");
    if let Some(b) = &t.basis {
        s += &format!(" ({b})");
    }
    s.trim_start().to_string()
}

/// The page. A pure function of the records and the raw files.
pub fn render(records: &[Record], run_dir: &Path) -> String {
    let ctx = Ctx::new(records, run_dir);
    let title = ctx
        .started
        .map(|s| format!("rocegate: {} on {}", s.suite, s.fabric))
        .unwrap_or_else(|| "rocegate report".into());
    let mut body = String::new();
    let _ = write!(body, "<header><h1>{}</h1>", esc(&title));
    if let Some(s) = ctx.started {
        let _ = write!(
            body,
            "<p><small>started {} · rocegate {} · environment {} · transport {} · seed {} · inventory {} (sha256 {}) · suite {} (sha256 {})</small></p>",
            esc(&s.started_at),
            esc(&s.rocegate_version),
            esc(&s.environment),
            esc(&s.transport),
            s.seed,
            esc(&s.inventory.path),
            esc(&s.inventory.sha256.chars().take(12).collect::<String>()),
            esc(&s.suite_file.path),
            esc(&s.suite_file.sha256.chars().take(12).collect::<String>())
        );
    }
    body.push_str("</header><main>");
    diagnosis::gate(&ctx, &mut body);
    let sections: Vec<(&str, &str, String)> = vec![
        ("suspects", "Suspects", diagnosis::suspects(&ctx)),
        ("heatmaps", "Pair heatmaps", traffic::heatmaps(&ctx)),
        (
            "distribution",
            "Per rail and per leaf",
            traffic::distributions(&ctx),
        ),
        ("curves", "Curves", traffic::curves(&ctx)),
        ("faults", "Fault timeline", traffic::faults(&ctx)),
        ("counters", "Counters", tables::counters(&ctx)),
        ("audit", "Audit", tables::audit(&ctx)),
        ("baseline", "Baseline comparison", tables::baseline(&ctx)),
        ("preflight", "Preflight", tables::preflight(&ctx)),
        ("plan", "Plan and coverage", tables::plan(&ctx)),
        ("results", "Results", tables::results(&ctx)),
    ];
    body.push_str("<nav class=\"toc\" aria-label=\"sections\">");
    for (id, name, html) in &sections {
        if !html.is_empty() {
            let _ = write!(body, "<a href=\"#{id}\">{name}</a>");
        }
    }
    body.push_str("</nav>");
    for (id, name, html) in &sections {
        if !html.is_empty() {
            let _ = write!(body, "<section id=\"{id}\"><h2>{name}</h2>{html}</section>");
        }
    }
    body.push_str("</main>");
    for (id, text) in ctx.data.borrow().iter() {
        let _ = write!(
            body,
            "<script type=\"application/json\" id=\"{}\">{text}</script>",
            esc(id)
        );
    }
    let csp = format!(
        "default-src 'none'; script-src {}; style-src {}; img-src data:; base-uri 'none'; form-action 'none'",
        csp_hash(SCRIPT),
        csp_hash(CSS)
    );
    format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">\
<meta http-equiv=\"Content-Security-Policy\" content=\"{csp}\">\
<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
<title>{}</title><style>{CSS}</style></head><body>{body}<script>{SCRIPT}</script></body></html>\n",
        esc(&title)
    )
}

/// Verdicts by test, in plan order (tests the plan does not name last).
fn by_test<'a>(ctx: &Ctx<'a>) -> Vec<(String, Vec<&'a VerdictRecord>)> {
    let mut map: BTreeMap<&str, Vec<&VerdictRecord>> = BTreeMap::new();
    for v in &ctx.verdicts {
        map.entry(v.test.as_str()).or_default().push(v);
    }
    let mut out = Vec::new();
    if let Some(s) = ctx.started {
        for t in &s.tests {
            if let Some(vs) = map.remove(t.name.as_str()) {
                out.push((t.name.clone(), vs));
            }
        }
    }
    out.extend(map.into_iter().map(|(k, v)| (k.to_string(), v)));
    out
}

/// Whether lower values are worse for this verdict's metric (bandwidth)
/// or higher ones are (latency, recovery time).
fn lower_is_worse(v: &VerdictRecord) -> bool {
    let t = &v.threshold;
    t.min.is_some() || t.warn_min.is_some() || (t.max.is_none() && t.warn_max.is_none())
}

/// Worst first: by verdict, then by how close the value came to its
/// threshold, so a list cut short drops the best.
fn worst_first<'a>(vs: &[&'a VerdictRecord]) -> Vec<&'a VerdictRecord> {
    let mut out = vs.to_vec();
    out.sort_by(|a, b| {
        let by_value = match (a.value, b.value) {
            (Some(x), Some(y)) if lower_is_worse(a) => x.total_cmp(&y),
            (Some(x), Some(y)) => y.total_cmp(&x),
            (None, Some(_)) => std::cmp::Ordering::Less,
            (Some(_), None) => std::cmp::Ordering::Greater,
            (None, None) => std::cmp::Ordering::Equal,
        };
        b.verdict.cmp(&a.verdict).then(by_value)
    });
    out
}

fn is_pass(v: &VerdictRecord) -> bool {
    v.verdict == Verdict::Pass
}

#[cfg(test)]
mod tests;
