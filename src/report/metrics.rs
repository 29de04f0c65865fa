//! Metrics out: a run as Prometheus text exposition format 0.0.4, for a
//! node_exporter textfile collector (`<dir>/rocegate_<fabric>_<suite>.prom`)
//! or a Pushgateway (`PUT /metrics/job/rocegate/fabric/<f>/suite/<s>`).
//! A pure function of the event log, like every other output, so
//! `rocegate report` writes the same file byte for byte. Not a scrape
//! endpoint, and no timestamps: the run's end time is a gauge value
//! (`rocegate_run_end_timestamp_seconds`), which is what a dashboard asks
//! ("when did the gate last run, and did it pass?").
//!
//! Series are per run, per test, per node, per NIC and per switch port,
//! never per pair: a pair's result is folded onto both of its NICs (the
//! worst value each NIC saw), so the series grow with the pod, not with
//! its square. Every series carries `fabric` and `suite`, so the files of
//! several fabrics can sit in one textfile directory without colliding.
//!
//! **Cardinality budget**: at most [`SERIES_PER_NODE`] series per node
//! plus [`SERIES_PER_SWITCH_PORT`] per switch port (ports cabled to a NIC
//! and both ends of every switch-to-switch cable, from the run's
//! topology). Beyond it, whole families are dropped, the most detailed
//! first (switch-port counters, NIC counters, per-NIC failed results,
//! per-NIC and per-node values, suspect scores); the run, gate, verdict and
//! recovery series are never dropped. `rocegate_metrics_dropped_series_total`
//! says how many were left out and `rocegate_metrics_budget_series` what
//! the budget was.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use super::events::{Record, VerdictRecord};
use crate::counters::delta::DeltaStatus;
use crate::score::Verdict;

/// Series allowed per node in the pod (its NICs' values and counters
/// included): 8 NICs × (24 canonical counters + 8 per-test values).
pub const SERIES_PER_NODE: usize = 256;
/// Series allowed per switch port: its canonical counters, with room.
pub const SERIES_PER_SWITCH_PORT: usize = 32;
/// The HTTP Content-Type of the format, for a push.
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

type Labels = Vec<(&'static str, String)>;

/// One metric family: its series in a stable order.
struct Family {
    name: &'static str,
    kind: &'static str,
    help: &'static str,
    /// 0 is never dropped; higher is dropped first.
    detail: u8,
    series: Vec<(Labels, f64)>,
}

impl Family {
    fn new(name: &'static str, kind: &'static str, detail: u8, help: &'static str) -> Family {
        Family {
            name,
            kind,
            help,
            detail,
            series: Vec::new(),
        }
    }
}

/// What [`render`] made: the text and its account.
#[derive(Debug, Clone, PartialEq)]
pub struct Exposition {
    pub text: String,
    /// Series written.
    pub series: usize,
    /// Series left out to stay within the budget.
    pub dropped: usize,
    pub budget: usize,
}

/// `[a-zA-Z0-9_]` only: anything else becomes `_` (for file names).
pub fn sanitise(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect()
}

/// `rocegate_<fabric>_<suite>.prom`, the names sanitised.
pub fn file_name(fabric: &str, suite: &str) -> String {
    format!("rocegate_{}_{}.prom", sanitise(fabric), sanitise(suite))
}

/// A label value as the format wants it: backslash, double quote and line
/// feed escaped; nothing else is.
pub fn escape_label(v: &str) -> String {
    let mut out = String::with_capacity(v.len());
    for c in v.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out
}

/// A sample value: Go's spelling of the special values.
fn value(v: f64) -> String {
    if v.is_nan() {
        "NaN".into()
    } else if v.is_infinite() {
        if v > 0.0 { "+Inf" } else { "-Inf" }.into()
    } else {
        format!("{v}")
    }
}

/// The run's id, from its `run_started` record alone: the id the run
/// locked the fabric and journaled its faults under, or for an older log
/// `<suite>-<UTC start stamp>`, the name `rocegate run` gives a run
/// directory by default.
pub fn run_id(records: &[Record]) -> String {
    let Some(s) = super::events::run_started(records) else {
        return "unknown".into();
    };
    // The id its lock and fault journal use; a log from before it was
    // kept falls back to the run directory's default name.
    if !s.run_id.is_empty() {
        return s.run_id.clone();
    }
    match parse_time(&s.started_at) {
        Some(t) => format!(
            "{}-{:04}{:02}{:02}T{:02}{:02}{:02}Z",
            s.suite,
            t.year(),
            t.month() as u8,
            t.day(),
            t.hour(),
            t.minute(),
            t.second()
        ),
        None => format!("{}-{}", s.suite, s.started_at),
    }
}

fn parse_time(s: &str) -> Option<time::OffsetDateTime> {
    time::OffsetDateTime::parse(s, &time::format_description::well_known::Rfc3339).ok()
}

fn unix_seconds(s: &str) -> Option<f64> {
    parse_time(s).map(|t| t.unix_timestamp_nanos() as f64 / 1e9)
}

/// Whether smaller values of this unit are better (latency).
fn lower_is_better(unit: Option<&str>) -> bool {
    matches!(unit, Some("us" | "ms" | "s"))
}

/// The budget of a run's topology; with no topology, none beyond the
/// run-level series.
pub fn budget(records: &[Record]) -> usize {
    let Some(s) = super::events::run_started(records) else {
        return 0;
    };
    let t = &s.topology;
    let nodes: BTreeSet<&str> = t.nics.iter().map(|n| n.node.as_str()).collect();
    let mut ports: BTreeSet<&str> = t.nics.iter().filter_map(|n| n.port.as_deref()).collect();
    for [a, b] in &t.fabric_links {
        ports.insert(a);
        ports.insert(b);
    }
    nodes.len() * SERIES_PER_NODE + ports.len() * SERIES_PER_SWITCH_PORT
}

/// The run as Prometheus text, within its topology's [`budget`].
pub fn render(records: &[Record]) -> Exposition {
    render_within(records, budget(records))
}

/// [`render`] with an explicit budget (tests).
pub fn render_within(records: &[Record], budget: usize) -> Exposition {
    let started = super::events::run_started(records);
    let finished = super::events::run_finished(records);
    let fabric = started.map_or("unknown", |s| s.fabric.as_str()).to_string();
    let suite = started.map_or("unknown", |s| s.suite.as_str()).to_string();
    let base = |mut extra: Labels| -> Labels {
        let mut l: Labels = vec![("fabric", fabric.clone()), ("suite", suite.clone())];
        l.append(&mut extra);
        l
    };
    let mut fams: Vec<Family> = Vec::new();

    let mut info = Family::new(
        "rocegate_run_info",
        "gauge",
        0,
        "Always 1: the run this file describes (its id, environment, transport and rocegate version).",
    );
    info.series.push((
        base(vec![
            ("run_id", run_id(records)),
            (
                "environment",
                started.map_or(String::new(), |s| s.environment.clone()),
            ),
            (
                "transport",
                started.map_or(String::new(), |s| s.transport.clone()),
            ),
            (
                "rocegate_version",
                started.map_or(String::new(), |s| s.rocegate_version.clone()),
            ),
        ]),
        1.0,
    ));
    fams.push(info);
    let mut start = Family::new(
        "rocegate_run_start_timestamp_seconds",
        "gauge",
        0,
        "When the run started, seconds since the Unix epoch.",
    );
    if let Some(t) = started.and_then(|s| unix_seconds(&s.started_at)) {
        start.series.push((base(vec![]), t));
    }
    fams.push(start);
    let mut end = Family::new(
        "rocegate_run_end_timestamp_seconds",
        "gauge",
        0,
        "When the run finished, seconds since the Unix epoch (absent for a run that did not finish).",
    );
    if let Some(t) = finished.and_then(|f| unix_seconds(&f.ended_at)) {
        end.series.push((base(vec![]), t));
    }
    fams.push(end);

    let done = super::events::completeness(records);
    let passed = finished.is_some_and(|f| f.gate_passed) && done.complete;
    let exit = finished
        .map(|f| f.exit_code)
        .unwrap_or(crate::exit::INCOMPLETE);
    let mut gate = Family::new(
        "rocegate_gate",
        "gauge",
        0,
        "1 when the gate passed, 0 when it failed or the run is incomplete.",
    );
    gate.series
        .push((base(vec![]), if passed { 1.0 } else { 0.0 }));
    fams.push(gate);
    let mut code = Family::new(
        "rocegate_run_exit_code",
        "gauge",
        0,
        "rocegate's exit code for the run: 0 passed, 1 gate failed, 3 incomplete.",
    );
    code.series.push((base(vec![]), f64::from(exit)));
    fams.push(code);
    let mut complete = Family::new(
        "rocegate_run_complete",
        "gauge",
        0,
        "1 when the run finished and every output could be judged, 0 when it was cut short.",
    );
    complete
        .series
        .push((base(vec![]), if done.complete { 1.0 } else { 0.0 }));
    fams.push(complete);

    let verdicts: Vec<&VerdictRecord> = records
        .iter()
        .filter_map(|r| match r {
            Record::Verdict(v) => Some(v),
            _ => None,
        })
        .collect();
    const ALL: [Verdict; 5] = [
        Verdict::Pass,
        Verdict::Warn,
        Verdict::Fail,
        Verdict::Error,
        Verdict::Skipped,
    ];
    let mut total: BTreeMap<Verdict, usize> = ALL.iter().map(|v| (*v, 0)).collect();
    let mut per_test: BTreeMap<&str, BTreeMap<Verdict, usize>> = BTreeMap::new();
    for t in started.map(|s| s.tests.as_slice()).unwrap_or_default() {
        per_test.insert(&t.name, ALL.iter().map(|v| (*v, 0)).collect());
    }
    for v in &verdicts {
        *total.entry(v.verdict).or_default() += 1;
        *per_test
            .entry(&v.test)
            .or_insert_with(|| ALL.iter().map(|v| (*v, 0)).collect())
            .entry(v.verdict)
            .or_default() += 1;
    }
    let mut vf = Family::new(
        "rocegate_verdicts",
        "gauge",
        0,
        "Verdicts of the run, by verdict (error: rocegate could not judge, not a defect).",
    );
    for (v, n) in &total {
        vf.series
            .push((base(vec![("verdict", v.as_str().into())]), *n as f64));
    }
    fams.push(vf);
    let mut tf = Family::new(
        "rocegate_test_verdicts",
        "gauge",
        0,
        "Verdicts of the run, by test and verdict.",
    );
    for (test, counts) in &per_test {
        for (v, n) in counts {
            tf.series.push((
                base(vec![
                    ("test", (*test).into()),
                    ("verdict", v.as_str().into()),
                ]),
                *n as f64,
            ));
        }
    }
    fams.push(tf);

    let mut rec = Family::new(
        "rocegate_fault_recovery_seconds",
        "gauge",
        0,
        "Seconds from a fault's start until the workload was back to its recovered level (the slowest step).",
    );
    let mut lim = Family::new(
        "rocegate_fault_recovery_limit_seconds",
        "gauge",
        0,
        "The suite's recovers_within limit for the fault.",
    );
    for v in verdicts
        .iter()
        .filter(|v| v.kind == "fault" && v.metric.as_deref() == Some("recovery_s"))
    {
        let labels = base(vec![
            ("test", v.test.clone()),
            ("fault", v.component.clone()),
        ]);
        if let Some(x) = v.value.filter(|x| x.is_finite()) {
            rec.series.push((labels.clone(), x));
        }
        if let Some(m) = v.threshold.max.filter(|x| x.is_finite()) {
            lim.series.push((labels, m));
        }
    }
    fams.push(rec);
    fams.push(lim);

    let loc = crate::score::suspects::localise(records);
    let mut sc = Family::new(
        "rocegate_suspect_score",
        "gauge",
        1,
        "Localisation score of each suspect: failures explained, discounted by inconsistency.",
    );
    for s in &loc.suspects {
        sc.series.push((
            base(vec![
                ("kind", s.kind.clone()),
                ("component", s.component.clone()),
            ]),
            s.score,
        ));
    }
    fams.push(sc);

    let (nic_values, node_values, nic_failed) = per_end(records, &verdicts);
    let mut nv = Family::new(
        "rocegate_nic_result",
        "gauge",
        2,
        "Per test and NIC, the worst value among the results it took part in (pairs folded onto both NICs).",
    );
    for ((test, metric, unit, node, nic), x) in nic_values {
        nv.series.push((
            base(vec![
                ("test", test),
                ("metric", metric),
                ("unit", unit),
                ("node", node),
                ("nic", nic),
            ]),
            x,
        ));
    }
    let mut nf = Family::new(
        "rocegate_nic_failed_results",
        "gauge",
        2,
        "Per test and NIC, how many of the results it took part in failed.",
    );
    for ((test, node, nic), n) in nic_failed {
        nf.series.push((
            base(vec![("test", test), ("node", node), ("nic", nic)]),
            n as f64,
        ));
    }
    let mut dv = Family::new(
        "rocegate_node_result",
        "gauge",
        2,
        "Per test and node, the worst value among node-to-node results it took part in.",
    );
    for ((test, metric, unit, node), x) in node_values {
        dv.series.push((
            base(vec![
                ("test", test),
                ("metric", metric),
                ("unit", unit),
                ("node", node),
            ]),
            x,
        ));
    }
    fams.push(dv);
    fams.push(nv);
    fams.push(nf);

    let (nic_counters, port_counters) = counter_deltas(records);
    let mut ncf = Family::new(
        "rocegate_nic_increase",
        "gauge",
        3,
        "Per host device and canonical counter, the increase summed over the run's counter windows (priorities and queues summed; resets and saturated windows left out).",
    );
    for ((node, device, counter), x) in nic_counters {
        ncf.series.push((
            base(vec![
                ("node", node),
                ("device", device),
                ("counter", counter.into()),
            ]),
            x as f64,
        ));
    }
    fams.push(ncf);
    let mut pcf = Family::new(
        "rocegate_switch_port_increase",
        "gauge",
        4,
        "Per switch port and canonical counter, the increase summed over the run's counter windows (priorities and queues summed; resets and saturated windows left out).",
    );
    for ((switch, port, counter), x) in port_counters {
        pcf.series.push((
            base(vec![
                ("switch", switch),
                ("port", port),
                ("counter", counter.into()),
            ]),
            x as f64,
        ));
    }
    fams.push(pcf);

    // Two series below are never dropped: count them in.
    let mut count: usize = fams.iter().map(|f| f.series.len()).sum::<usize>() + 2;
    let mut dropped = 0usize;
    let mut order: Vec<usize> = (0..fams.len()).filter(|&i| fams[i].detail > 0).collect();
    order.sort_by_key(|&i| (std::cmp::Reverse(fams[i].detail), std::cmp::Reverse(i)));
    for i in order {
        if count <= budget {
            break;
        }
        let n = fams[i].series.len();
        fams[i].series.clear();
        count -= n;
        dropped += n;
    }
    let mut b = Family::new(
        "rocegate_metrics_budget_series",
        "gauge",
        0,
        "The cardinality budget: series allowed per node and per switch port, summed over the pod.",
    );
    b.series.push((base(vec![]), budget as f64));
    fams.push(b);
    let mut d = Family::new(
        "rocegate_metrics_dropped_series_total",
        "counter",
        0,
        "Series left out of this file to stay within the cardinality budget (the most detailed families first).",
    );
    d.series.push((base(vec![]), dropped as f64));
    fams.push(d);

    let mut text = String::new();
    let mut series = 0;
    for f in &fams {
        text += &format!(
            "# HELP {} {}\n# TYPE {} {}\n",
            f.name, f.help, f.name, f.kind
        );
        for (labels, x) in &f.series {
            let l: Vec<String> = labels
                .iter()
                .map(|(k, v)| format!("{k}=\"{}\"", escape_label(v)))
                .collect();
            text += &format!("{}{{{}}} {}\n", f.name, l.join(","), value(*x));
            series += 1;
        }
    }
    Exposition {
        text,
        series,
        dropped,
        budget,
    }
}

type NicValues = BTreeMap<(String, String, String, String, String), f64>;
type NodeValues = BTreeMap<(String, String, String, String), f64>;
type NicFailed = BTreeMap<(String, String, String), usize>;

/// Traffic verdicts folded onto the NICs (or nodes) at their ends: the
/// worst value each saw per test, and how many of its results failed.
/// Collectives (a whole set of nodes) name no single end: left out.
fn per_end(records: &[Record], verdicts: &[&VerdictRecord]) -> (NicValues, NodeValues, NicFailed) {
    let topo = super::events::run_started(records).map(|s| &s.topology);
    let nic_node: BTreeMap<&str, &str> = topo
        .map(|t| {
            t.nics
                .iter()
                .map(|n| (n.name.as_str(), n.node.as_str()))
                .collect()
        })
        .unwrap_or_default();
    let nodes: BTreeSet<&str> = nic_node.values().copied().collect();
    let (mut nics, mut nodev, mut failed) = (NicValues::new(), NodeValues::new(), NicFailed::new());
    for v in verdicts {
        if !matches!(v.kind.as_str(), "perftest" | "iperf" | "nccl") {
            continue;
        }
        let c = v.component.as_str();
        let ends: Vec<&str> = if let Some((a, b)) = c.split_once("<->") {
            vec![a.trim(), b.trim()]
        } else if let Some((r, _)) = c.split_once("<-") {
            // An incast is judged at its receiver.
            vec![r.trim()]
        } else {
            vec![c.trim()]
        };
        let lower = lower_is_better(v.unit.as_deref());
        let worse = |old: f64, new: f64| if lower { old.max(new) } else { old.min(new) };
        let metric = v.metric.clone().unwrap_or_default();
        let unit = v.unit.clone().unwrap_or_default();
        for e in ends {
            if let Some(node) = nic_node.get(e) {
                let nic = e.split_once(':').map_or(e, |(_, d)| d).to_string();
                if v.verdict == Verdict::Fail {
                    *failed
                        .entry((v.test.clone(), node.to_string(), nic.clone()))
                        .or_default() += 1;
                }
                if let Some(x) = v.value.filter(|x| x.is_finite()) {
                    let k = (
                        v.test.clone(),
                        metric.clone(),
                        unit.clone(),
                        node.to_string(),
                        nic,
                    );
                    let cur = nics.get(&k).map_or(x, |&o| worse(o, x));
                    nics.insert(k, cur);
                }
            } else if nodes.contains(e) {
                if let Some(x) = v.value.filter(|x| x.is_finite()) {
                    let k = (v.test.clone(), metric.clone(), unit.clone(), e.to_string());
                    let cur = nodev.get(&k).map_or(x, |&o| worse(o, x));
                    nodev.insert(k, cur);
                }
            }
        }
    }
    (nics, nodev, failed)
}

type Counters = BTreeMap<(String, String, &'static str), u64>;

/// The counter ledger summed per device and canonical counter, split into
/// host devices and switch ports. Gauges (watermarks) are not deltas and
/// are left out; a reset or saturated window's true increase is unknown
/// and is left out too.
fn counter_deltas(records: &[Record]) -> (Counters, Counters) {
    let switches: BTreeSet<&str> = super::events::run_started(records)
        .map(|s| {
            s.topology
                .switches
                .iter()
                .map(|s| s.name.as_str())
                .collect()
        })
        .unwrap_or_default();
    let (mut nic, mut port) = (Counters::new(), Counters::new());
    for r in records {
        let Record::Ledger(l) = r else { continue };
        let into = if switches.contains(l.host.as_str()) {
            &mut port
        } else {
            &mut nic
        };
        for d in &l.changes {
            if d.canonical.is_gauge() {
                continue;
            }
            if let DeltaStatus::Value(x) = d.status {
                let e = into
                    .entry((l.host.clone(), l.device.clone(), d.canonical.name()))
                    .or_default();
                *e = e.saturating_add(x);
            }
        }
    }
    (nic, port)
}

const NO_START: &str =
    "no metrics: results.jsonl has no run_started record, so the fabric and suite are unknown";

/// Writes the run's file into `dir` (created if missing); its path.
pub fn write(dir: &Path, records: &[Record]) -> Result<PathBuf, String> {
    // Without it the fabric and suite are unknown: no file of theirs to replace.
    let Some(started) = super::events::run_started(records) else {
        return Err(NO_START.into());
    };
    let name = file_name(&started.fabric, &started.suite);
    std::fs::create_dir_all(dir)
        .map_err(|e| format!("--metrics-dir {}: cannot create: {e}", dir.display()))?;
    let path = dir.join(name);
    crate::paths::write_atomic(&path, render(records).text.as_bytes())
        .map_err(|e| format!("{}: cannot write the metrics: {e}", path.display()))?;
    Ok(path)
}

/// A grouping-key value in a Pushgateway path: as it is when made of
/// URL-safe characters, else in the `@base64` form the Pushgateway
/// documents for values holding `/` or other characters (base64url).
fn path_value(label: &str, v: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "-._~".contains(c);
    if !v.is_empty() && v.chars().all(plain) {
        return format!("{label}/{v}");
    }
    format!("{label}@base64/{}", base64url(v.as_bytes()))
}

fn base64url(b: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut out = String::new();
    for chunk in b.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, &x)| n | (u32::from(x) << (16 - 8 * i)));
        for i in 0..=chunk.len() {
            out.push(A[((n >> (18 - 6 * i)) & 63) as usize] as char);
        }
        for _ in chunk.len()..3 {
            out.push('=');
        }
    }
    out
}

/// The URL a run's metrics are PUT to: `<base>/metrics/job/rocegate/fabric/<f>/suite/<s>`.
pub fn push_url(base: &str, fabric: &str, suite: &str) -> String {
    format!(
        "{}/metrics/job/rocegate/{}/{}",
        base.trim_end_matches('/'),
        path_value("fabric", fabric),
        path_value("suite", suite)
    )
}

/// PUTs the run's metrics to a Pushgateway at `base` (`http://host:9091`),
/// replacing what this fabric and suite pushed before. The error names the
/// URL and the status or the connection failure; it never fails the gate.
pub fn push(base: &str, records: &[Record]) -> Result<String, String> {
    let Some(started) = super::events::run_started(records) else {
        return Err(NO_START.into());
    };
    let url = push_url(base, &started.fabric, &started.suite);
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(std::time::Duration::from_secs(30)))
        .http_status_as_error(false)
        .max_redirects(0)
        .user_agent(concat!("rocegate/", env!("CARGO_PKG_VERSION")))
        .build()
        .into();
    let text = render(records).text;
    match agent
        .put(&url)
        .header("Content-Type", CONTENT_TYPE)
        .send(&text)
    {
        Ok(mut resp) => {
            let status = resp.status();
            if status.is_success() {
                return Ok(url);
            }
            let body = resp
                .body_mut()
                .with_config()
                .limit(4096)
                .read_to_string()
                .unwrap_or_default();
            Err(format!(
                "pushgateway PUT {url}: HTTP {}: {}",
                status.as_u16(),
                body.trim()
            ))
        }
        Err(e) => Err(format!("pushgateway PUT {url}: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn label_values_escape_backslash_quote_and_newline_only() {
        assert_eq!(escape_label(r#"a\b"c"#), r#"a\\b\"c"#);
        assert_eq!(escape_label("x\ny"), "x\\ny");
        assert_eq!(
            escape_label("gpu001:mlx5_0 <-> r0-leaf1:swp1"),
            "gpu001:mlx5_0 <-> r0-leaf1:swp1"
        );
        assert_eq!(escape_label("tab\tstays"), "tab\tstays");
    }

    #[test]
    fn file_names_keep_only_word_characters() {
        assert_eq!(
            file_name("emu-pod", "acceptance"),
            "rocegate_emu_pod_acceptance.prom"
        );
        assert_eq!(file_name("a/b c", "x.y"), "rocegate_a_b_c_x_y.prom");
        assert_eq!(sanitise("é"), "_");
    }

    #[test]
    fn values_spell_special_values_as_go_does() {
        assert_eq!(value(1.0), "1");
        assert_eq!(value(2.5), "2.5");
        assert_eq!(value(f64::INFINITY), "+Inf");
        assert_eq!(value(f64::NEG_INFINITY), "-Inf");
        assert_eq!(value(f64::NAN), "NaN");
        assert_eq!(value(1e-7), "0.0000001");
    }

    #[test]
    fn push_paths_use_base64_for_unsafe_values() {
        assert_eq!(
            push_url("http://h:9091/", "emu-pod", "acceptance"),
            "http://h:9091/metrics/job/rocegate/fabric/emu-pod/suite/acceptance"
        );
        // The Pushgateway README's own example: "/path/to/job" is L3BhdGgvdG8vam9i.
        assert_eq!(base64url(b"/path/to/job"), "L3BhdGgvdG8vam9i");
        assert_eq!(base64url(b"a"), "YQ==");
        assert_eq!(base64url(b"ab"), "YWI=");
        assert_eq!(path_value("suite", "a/b"), "suite@base64/YS9i");
    }

    /// Two nodes of one NIC each on one leaf, a spine cable, one failing
    /// pair, a ledger window on each NIC and on a switch port, a fault.
    fn records() -> Vec<Record> {
        let lines = [
            r#"{"event":"run_started","rocegate_version":"0.1.0","suite":"acceptance","fabric":"pod \"a\"","environment":"lab","transport":"emulated","seed":1,"started_at":"2026-11-27T11:39:49.5Z","inventory":{"path":"i","sha256":"x"},"suite_file":{"path":"s","sha256":"y"},"gate_fail_on":["fail","error"],"tests":[{"name":"rail-bw","kind":"perftest","pattern":"rail-pairs","rounds":1,"steps":1,"repeat":1,"estimate_s":1.0}],"estimate_s":1.0,"coverage":null,"topology":{"nics":[{"name":"n1:mlx5_0","node":"n1","rail":0,"speed_gbps":400,"port":"leaf:swp1"},{"name":"n2:mlx5_0","node":"n2","rail":0,"speed_gbps":400,"port":"leaf:swp2"}],"switches":[{"name":"leaf","role":"leaf"},{"name":"spine","role":"spine"}],"fabric_links":[["leaf:swp9","spine:swp1"]]}}"#,
            r#"{"event":"verdict","test":"rail-bw","kind":"perftest","component":"n1:mlx5_0<->n2:mlx5_0","verdict":"fail","metric":"bw_avg_gbps","value":196.5,"unit":"Gb/s","threshold":{"min":360.0},"samples":[196.5],"message":"slow","evidence":[],"duration_s":1.0}"#,
            r#"{"event":"verdict","test":"rail-bw","kind":"perftest","component":"n2:mlx5_0<->n1:mlx5_0","verdict":"error","message":"unreachable","threshold":{},"samples":[],"evidence":[],"duration_s":1.0}"#,
            r#"{"event":"verdict","test":"link-flap","kind":"fault","component":"link flap n1:mlx5_0","verdict":"pass","metric":"recovery_s","value":2.5,"unit":"s","threshold":{"max":5.0},"samples":[],"message":"ok","evidence":[],"duration_s":9.0}"#,
            r#"{"event":"ledger","test":"rail-bw","round":0,"rep":0,"host":"n1","device":"eth0","source":"ethtool -S","t0_s":0.0,"t1_s":1.0,"changes":[{"canonical":"rx_bytes","vendor":"rx_bytes_phy","status":{"value":100}},{"canonical":"pfc_pause_rx","vendor":"rx_prio3_pause","priority":3,"status":{"value":4}},{"canonical":"crc_errors","vendor":"rx_crc","status":{"reset":{"before":9,"after":1}}}]}"#,
            r#"{"event":"ledger","test":"rail-bw","round":0,"rep":1,"host":"n1","device":"eth0","source":"ethtool -S","t0_s":1.0,"t1_s":2.0,"changes":[{"canonical":"rx_bytes","vendor":"rx_bytes_phy","status":{"value":50}}]}"#,
            r#"{"event":"ledger","test":"rail-bw","round":0,"rep":0,"host":"leaf","device":"swp1","source":"x","t0_s":0.0,"t1_s":1.0,"changes":[{"canonical":"drops","vendor":"d","queue":3,"status":{"value":7}},{"canonical":"drops","vendor":"d","queue":4,"status":{"value":1}},{"canonical":"buffer_watermark","vendor":"w","status":{"value":9000}}]}"#,
            r#"{"event":"run_finished","ended_at":"2026-11-27T11:40:00Z","interrupted":false,"counts":{"pass":1,"warn":0,"fail":1,"error":1,"skipped":0},"gate_passed":false,"exit_code":1}"#,
        ];
        lines
            .iter()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    fn lines_of<'a>(text: &'a str, name: &str) -> Vec<&'a str> {
        text.lines()
            .filter(|l| l.starts_with(&format!("{name}{{")))
            .collect()
    }

    #[test]
    fn a_run_becomes_series_per_nic_and_port_never_per_pair() {
        let r = records();
        let e = render(&r);
        // 2 nodes × 256 + 3 ports (two NIC ports, the spine cable's two ends: 4) × 32.
        assert_eq!(e.budget, 2 * SERIES_PER_NODE + 4 * SERIES_PER_SWITCH_PORT);
        assert_eq!(e.dropped, 0);
        let t = &e.text;
        assert!(t.contains("rocegate_run_info{fabric=\"pod \\\"a\\\"\",suite=\"acceptance\",run_id=\"acceptance-20261127T113949Z\",environment=\"lab\",transport=\"emulated\",rocegate_version=\"0.1.0\"} 1\n"), "{t}");
        assert!(t.contains("rocegate_run_end_timestamp_seconds{fabric=\"pod \\\"a\\\"\",suite=\"acceptance\"} 1795779600\n"), "{t}");
        assert!(t.contains("rocegate_gate{fabric=\"pod \\\"a\\\"\",suite=\"acceptance\"} 0\n"));
        assert!(
            t.contains("rocegate_run_exit_code{fabric=\"pod \\\"a\\\"\",suite=\"acceptance\"} 1\n")
        );
        assert!(t.contains(",verdict=\"error\"} 1\n"));
        // The failing pair on both NICs; the error pair adds no value and no failure.
        let nic = lines_of(t, "rocegate_nic_result");
        assert_eq!(nic.len(), 2, "{nic:?}");
        assert!(nic
            .iter()
            .all(|l| l.ends_with("} 196.5") && !l.contains("<->")));
        let failed = lines_of(t, "rocegate_nic_failed_results");
        assert_eq!(failed.len(), 2);
        assert!(failed.iter().all(|l| l.ends_with("} 1")));
        // Counters summed over windows and priorities; a reset and a gauge left out.
        assert!(t.contains("node=\"n1\",device=\"eth0\",counter=\"rx_bytes\"} 150\n"));
        assert!(t.contains("node=\"n1\",device=\"eth0\",counter=\"pfc_pause_rx\"} 4\n"));
        assert!(!t.contains("crc_errors") && !t.contains("buffer_watermark"));
        assert!(t.contains("rocegate_switch_port_increase{fabric=\"pod \\\"a\\\"\",suite=\"acceptance\",switch=\"leaf\",port=\"swp1\",counter=\"drops\"} 8\n"));
        assert!(t.contains("fault=\"link flap n1:mlx5_0\"} 2.5\n"));
        assert!(t.contains("rocegate_metrics_dropped_series_total{fabric=\"pod \\\"a\\\"\",suite=\"acceptance\"} 0\n"));
        // Every family has its HELP and TYPE, once, before its series; no timestamps.
        for l in t.lines().filter(|l| !l.starts_with('#')) {
            let name = l.split('{').next().unwrap();
            assert!(
                t.contains(&format!("# HELP {name} ")) && t.contains(&format!("# TYPE {name} "))
            );
            assert_eq!(l.rsplit("} ").count(), 2, "{l}");
            assert!(
                !l.rsplit("} ").next().unwrap().contains(' '),
                "a timestamp: {l}"
            );
        }
        assert_eq!(e.series, t.lines().filter(|l| !l.starts_with('#')).count());
        // The same records, the same bytes.
        assert_eq!(render(&r).text, e.text);
    }

    #[test]
    fn a_log_without_its_start_writes_and_pushes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let e = write(dir.path(), &[]).unwrap_err();
        assert!(e.contains("no run_started record"), "{e}");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
        assert!(push("http://127.0.0.1:9", &[]).is_err());
    }

    #[test]
    fn over_budget_the_most_detailed_families_go_first() {
        let r = records();
        let full = render_within(&r, usize::MAX);
        let all = full.series;
        let ports = lines_of(&full.text, "rocegate_switch_port_increase").len();
        let nics = lines_of(&full.text, "rocegate_nic_increase").len();
        assert_eq!((ports, nics), (1, 2));
        // One over: the switch-port counters go, nothing else.
        let e = render_within(&r, all - 1);
        assert_eq!(e.dropped, ports);
        assert!(lines_of(&e.text, "rocegate_switch_port_increase").is_empty());
        assert_eq!(lines_of(&e.text, "rocegate_nic_increase").len(), nics);
        assert!(e.text.contains(&format!("rocegate_metrics_dropped_series_total{{fabric=\"pod \\\"a\\\"\",suite=\"acceptance\"}} {ports}\n")));
        assert_eq!(e.series + e.dropped, all);
        assert!(e.series < all);
        // No budget at all: only what is never dropped remains.
        let z = render_within(&r, 0);
        for f in [
            "rocegate_nic_increase",
            "rocegate_nic_result",
            "rocegate_nic_failed_results",
            "rocegate_suspect_score",
        ] {
            assert!(lines_of(&z.text, f).is_empty(), "{f}");
        }
        assert_eq!(lines_of(&z.text, "rocegate_gate").len(), 1);
        assert_eq!(
            lines_of(&z.text, "rocegate_fault_recovery_seconds").len(),
            1
        );
        assert_eq!(z.series + z.dropped, all);
    }
}
