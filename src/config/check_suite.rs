//! Validation of a suite against an inventory: test kinds, tool rules (the
//! ones perftest itself enforces), patterns, expectations and fault targets.

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use super::check::{read_source, sha256_hex};
use super::diag::{quote, Diagnostics, Sink};
use super::hostlist;
use super::inventory::SwitchRole;
use super::model::*;
use super::names::{is_path_name, PATH_NAME_RULE};
use super::select::{self, Part, Selection};
use super::suite::*;
use super::units::Span;

#[derive(Debug, Clone)]
pub struct Suite {
    pub source: SourceFile,
    pub name: String,
    pub description: Option<String>,
    pub gate: Gate,
    pub ledger: LedgerSpec,
    pub baseline: Option<crate::config::suite::BaselineSpec>,
    pub localise: crate::config::suite::LocaliseSpec,
    pub max_concurrent: Option<usize>,
    pub tests: Vec<Test>,
    /// Every selector of the suite with the names it resolved to.
    pub selections: Vec<Selection>,
}

#[derive(Debug, Clone)]
pub struct Test {
    pub name: String,
    pub kind: TestKind,
    pub pattern: Option<Pattern>,
    /// Nodes the test may use, in inventory order.
    pub nodes: Vec<NodeId>,
    pub rails: Vec<u32>,
    pub repeat: u32,
    pub timeout: Duration,
    pub contention: bool,
    pub expect: Expect,
    /// The metric thresholds apply to (from `expect.metric` or the kind's default).
    pub metric: Option<Metric>,
    pub counters: Option<crate::config::suite::CounterSampling>,
}

#[derive(Debug, Clone)]
pub enum TestKind {
    Perftest(PerftestSpec),
    Nccl(NcclSpec),
    Iperf(IperfSpec),
    Fault(Fault),
    Audit(crate::config::suite::AuditSpec),
}

impl TestKind {
    pub fn label(&self) -> &'static str {
        match self {
            TestKind::Perftest(_) => "perftest",
            TestKind::Nccl(_) => "nccl",
            TestKind::Iperf(_) => "iperf",
            TestKind::Fault(_) => "fault",
            TestKind::Audit(_) => "audit",
        }
    }

    /// Tests without traffic steps of their own (a fault runs during
    /// another test; the audit reads configuration).
    pub fn has_steps(&self) -> bool {
        !matches!(self, TestKind::Fault(_) | TestKind::Audit(_))
    }
}

#[derive(Debug, Clone)]
pub struct Fault {
    pub action: FaultAction,
    /// Index of the test the fault runs during.
    pub during: usize,
    pub at: Duration,
    pub duration: Duration,
    pub repeat: u32,
    pub pace: Option<Duration>,
}

/// Flap protection on switches: Cumulus protodowns a port after 5 flaps
/// in 10 s; a suite must stay under it.
pub const FLAP_LIMIT: u32 = 5;
pub const FLAP_WINDOW: Duration = Duration::from_secs(10);

impl Fault {
    /// Start to start of consecutive repetitions: `pace`, but never less
    /// than the outage plus a second of link up in between.
    pub fn period(&self) -> Duration {
        match self.pace {
            Some(p) => p.max(self.duration + Duration::from_secs(1)),
            None => self.duration * 2,
        }
    }

    /// The most repetitions that start within any [`FLAP_WINDOW`].
    pub fn flaps_per_window(&self) -> u32 {
        let period = self.period().as_secs_f64().max(1e-3);
        let fit = (FLAP_WINDOW.as_secs_f64() / period).floor() as u32 + 1;
        fit.min(self.repeat.max(1))
    }
}

#[derive(Debug, Clone)]
pub enum FaultAction {
    LinkFlap {
        end: End,
        link: LinkId,
    },
    LeafReset {
        switch: SwitchId,
        mode: LeafResetMode,
    },
    /// A spine's ports down, its routing stopped, or it reloaded.
    SpineLoss {
        switch: SwitchId,
        mode: LeafResetMode,
    },
    /// The BGP session(s) `switch` runs over `port` shut; `link` is the
    /// cable at that port, which stays up.
    RouteChange {
        switch: SwitchId,
        port: String,
        link: LinkId,
    },
}

fn node_names(inv: &Inventory) -> String {
    let names: Vec<String> = inv.nodes.iter().map(|n| n.name.clone()).collect();
    hostlist::compress(&names)
}

const DEFAULT_TIMEOUT: Duration = Duration::from_secs(300);

/// The seed selectors draw with when the caller names none (`--seed`'s
/// default), so `validate` resolves them as a default `run` would.
pub const DEFAULT_SEED: u64 = 1;

pub fn load_suite(path: &str, inv: &Inventory) -> Result<Suite, Diagnostics> {
    let text = read_source(path)?;
    parse_suite(path, &text, inv)
}

pub fn parse_suite(path: &str, text: &str, inv: &Inventory) -> Result<Suite, Diagnostics> {
    parse_suite_seeded(path, text, inv, DEFAULT_SEED)
}

/// Checks a suite against an inventory, resolving its selectors with
/// `seed` (the run's seed: `pick: random` draws with it).
pub fn parse_suite_seeded(
    path: &str,
    text: &str,
    inv: &Inventory,
    seed: u64,
) -> Result<Suite, Diagnostics> {
    let raw: SuiteFile = super::yaml_guard::from_str(path, text)?;
    let mut sink = Sink::new(path, text);
    let mut sel = Selections {
        seed,
        found: Vec::new(),
    };
    let suite = check_suite(raw, text, inv, &mut sink, &mut sel);
    if sink.is_empty() {
        Ok(suite)
    } else {
        Err(Diagnostics(sink.found))
    }
}

fn default_metric(kind: &TestKind) -> Option<Metric> {
    match kind {
        TestKind::Perftest(p) if p.tool.is_bw() => Some(Metric::BwAvgGbps),
        TestKind::Perftest(_) => Some(Metric::TTypicalUs),
        TestKind::Nccl(_) => Some(Metric::BusbwGbs),
        TestKind::Iperf(_) => Some(Metric::ThroughputGbps),
        TestKind::Fault(_) | TestKind::Audit(_) => None,
    }
}

/// Resolves selectors and keeps what they resolved to.
struct Selections {
    seed: u64,
    found: Vec<Selection>,
}

impl Selections {
    /// Resolves `target` written at `at`; a plain name comes back as it is.
    /// Errors go to the sink at `at`.
    fn names(
        &mut self,
        target: &Target,
        at: &str,
        inv: &Inventory,
        one: bool,
        kinds: &[SelectKind],
        sink: &mut Sink,
    ) -> Option<Vec<String>> {
        let s = match target {
            Target::Name(n) => return Some(vec![n.clone()]),
            Target::Select(s) => s,
        };
        if !kinds.contains(&s.select) {
            let k: Vec<&str> = kinds.iter().map(|k| k.label()).collect();
            sink.error(
                at,
                format!(
                    "select: {} cannot be used here; this takes select: {}",
                    s.select.label(),
                    k.join(" or ")
                ),
            );
            return None;
        }
        let r = if one {
            select::resolve_one(s, inv, self.seed, at).map(|p| vec![p])
        } else {
            select::resolve(s, inv, self.seed, at)
        };
        match r {
            Ok(parts) => {
                let names: Vec<String> = parts.iter().map(|p: &Part| p.name(inv)).collect();
                self.found.push(Selection {
                    at: at.to_string(),
                    selector: select::describe(s),
                    names: names.clone(),
                });
                Some(names)
            }
            Err(e) => {
                sink.error(at, e);
                None
            }
        }
    }
}

fn check_suite(
    raw: SuiteFile,
    text: &str,
    inv: &Inventory,
    sink: &mut Sink,
    sel: &mut Selections,
) -> Suite {
    if !is_path_name(&raw.suite.name) {
        sink.error(
            "suite.name",
            format!(
                "{} is not a valid name ({PATH_NAME_RULE})",
                quote(&raw.suite.name)
            ),
        );
    }
    if raw.tests.is_empty() {
        sink.error("tests", "the suite has no tests");
    }
    if raw.gate.fail_on.contains(&VerdictName::Pass) {
        sink.error(
            "gate.fail_on",
            "a gate that fails on pass can never pass (usually [fail, error])",
        );
    }
    if let Some(0) = raw.defaults.max_concurrent {
        sink.error("defaults.max_concurrent", "must be at least 1");
    }
    let l = &raw.ledger;
    if l.max_events_per_fault == 0 {
        sink.error(
            "ledger.max_events_per_fault",
            "must be at least 1 (a flap takes its link down once)",
        );
    }
    for (key, v) in [
        ("max_pre_fec_ber", l.max_pre_fec_ber),
        ("max_fcs_per_frame", l.max_fcs_per_frame),
    ] {
        if !(v > 0.0 && v < 1.0) {
            sink.error(
                format!("ledger.{key}"),
                "must be a rate above 0 and below 1 (e.g. 1e-5)",
            );
        }
    }
    if !(l.ecmp_imbalance_pct > 0.0 && l.ecmp_imbalance_pct.is_finite()) {
        sink.error("ledger.ecmp_imbalance_pct", "must be above 0");
    }
    if let Some(0) = raw.localise.max_runs {
        sink.error("localise.max_runs", "must be at least 1");
    }
    if let Some(b) = &raw.baseline {
        if !(b.alpha > 0.0 && b.alpha < 1.0) {
            sink.error("baseline.alpha", "must lie between 0 and 1 (e.g. 0.05)");
        }
        if !(b.tolerance_pct >= 0.0 && b.tolerance_pct.is_finite()) {
            sink.error("baseline.tolerance_pct", "must be 0 or more (e.g. 3)");
        }
    }
    if let Some(0) = raw.defaults.repeat {
        sink.error("defaults.repeat", "must be at least 1");
    }
    let names: HashMap<&str, usize> = raw
        .tests
        .iter()
        .enumerate()
        .rev()
        .map(|(i, t)| (t.name.as_str(), i))
        .collect();
    let mut seen = HashSet::new();
    let mut tests = Vec::new();
    for (i, t) in raw.tests.iter().enumerate() {
        let base = format!("tests[{i}]");
        if !is_path_name(&t.name) {
            sink.error(
                format!("{base}.name"),
                format!(
                    "{} is not a valid test name ({PATH_NAME_RULE})",
                    quote(&t.name)
                ),
            );
        }
        if !seen.insert(t.name.as_str()) {
            sink.error(
                format!("{base}.name"),
                format!("test name {} is used twice", quote(&t.name)),
            );
        }
        let kinds: Vec<&str> = [
            t.perftest.as_ref().map(|_| "perftest"),
            t.nccl.as_ref().map(|_| "nccl"),
            t.iperf.as_ref().map(|_| "iperf"),
            t.fault.as_ref().map(|_| "fault"),
            t.audit.as_ref().map(|_| "audit"),
        ]
        .into_iter()
        .flatten()
        .collect();
        let kind = match kinds.as_slice() {
            [_] => {
                if let Some(p) = &t.perftest {
                    check_perftest(p, &base, sink);
                    TestKind::Perftest(p.clone())
                } else if let Some(n) = &t.nccl {
                    check_nccl(n, &base, sink);
                    TestKind::Nccl(n.clone())
                } else if let Some(ip) = &t.iperf {
                    check_iperf(ip, &base, sink);
                    TestKind::Iperf(ip.clone())
                } else if let Some(a) = &t.audit {
                    check_audit(a, &base, sink);
                    TestKind::Audit(a.clone())
                } else {
                    let f = t.fault.as_ref().expect("one kind is set");
                    match check_fault(f, &base, i, &names, &raw.tests, inv, sink, sel) {
                        Some(f) => TestKind::Fault(f),
                        None => continue,
                    }
                }
            }
            [] => {
                sink.error(
                    base.clone(),
                    format!(
                        "test \"{}\" has no kind: add one of perftest, nccl, iperf, fault, audit",
                        t.name
                    ),
                );
                continue;
            }
            many => {
                sink.error(
                    base.clone(),
                    format!(
                        "test \"{}\" has several kinds ({}); a test has exactly one",
                        t.name,
                        many.join(", ")
                    ),
                );
                continue;
            }
        };
        check_pattern(t, &kind, &base, sink);
        let hostlist_expr = match &t.nodes {
            Some(target) => sel
                .names(
                    target,
                    &format!("{base}.nodes"),
                    inv,
                    false,
                    &[SelectKind::Node],
                    sink,
                )
                .map(|names| match target {
                    Target::Name(expr) => expr.clone(),
                    Target::Select(_) => hostlist::compress(&names),
                }),
            None => None,
        };
        let nodes = match &hostlist_expr {
            Some(expr) => match hostlist::expand(expr) {
                Ok(list) => {
                    let mut ids = Vec::new();
                    for n in list {
                        match inv.node_by_name.get(&n) {
                            Some(&id) => ids.push(id),
                            None => sink.error(
                                format!("{base}.nodes"),
                                format!(
                                    "node \"{n}\" is not in the inventory (nodes are {})",
                                    node_names(inv)
                                ),
                            ),
                        }
                    }
                    ids.sort_unstable();
                    ids.dedup();
                    ids
                }
                Err(e) => {
                    sink.error(format!("{base}.nodes"), e.to_string());
                    Vec::new()
                }
            },
            None if t.nodes.is_some() => Vec::new(),
            None => (0..inv.nodes.len()).collect(),
        };
        let rails = match &t.rails {
            Some(r) => {
                for (ri, rail) in r.iter().enumerate() {
                    if *rail >= inv.fabric.rails {
                        sink.error(
                            format!("{base}.rails[{ri}]"),
                            format!(
                                "rail {rail} is not declared by the fabric (rails are 0-{})",
                                inv.fabric.rails - 1
                            ),
                        );
                    }
                }
                if r.is_empty() {
                    sink.error(
                        format!("{base}.rails"),
                        "an empty rail list selects nothing",
                    );
                }
                r.clone()
            }
            None => (0..inv.fabric.rails).collect(),
        };
        let repeat = t.repeat.or(raw.defaults.repeat).unwrap_or(1);
        if repeat == 0 {
            sink.error(format!("{base}.repeat"), "must be at least 1");
        }
        if let Some(c) = &t.counters {
            if !kind.has_steps() {
                sink.error(
                    format!("{base}.counters"),
                    "a fault or an audit has no steps of its own to sample; sample a traffic test instead",
                );
            }
            if c.samples.is_some_and(|n| n == 0 || n > 10_000) {
                sink.error(
                    format!("{base}.counters.samples"),
                    "must be between 1 and 10000",
                );
            }
        }
        let expect = t.expect.clone().unwrap_or_default();
        let metric = expect.metric.or_else(|| default_metric(&kind));
        check_expect(&expect, &kind, metric, &base, sink);
        tests.push(Test {
            name: t.name.clone(),
            kind,
            pattern: t.pattern.clone(),
            nodes,
            rails,
            repeat,
            timeout: t
                .timeout
                .or(raw.defaults.timeout)
                .map(|s| s.0)
                .unwrap_or(DEFAULT_TIMEOUT),
            contention: t.contention,
            expect,
            metric,
            counters: t.counters,
        });
    }
    Suite {
        source: SourceFile {
            path: sink.file().to_string(),
            sha256: sha256_hex(text.as_bytes()),
        },
        name: raw.suite.name.clone(),
        description: raw.suite.description.clone(),
        gate: raw.gate.clone(),
        ledger: raw.ledger.clone(),
        baseline: raw.baseline.clone(),
        localise: raw.localise.clone(),
        max_concurrent: raw.defaults.max_concurrent,
        tests,
        selections: std::mem::take(&mut sel.found),
    }
}

/// perftest's own rules, so a suite fails here rather than on 500 nodes.
fn check_perftest(p: &PerftestSpec, base: &str, sink: &mut Sink) {
    let b = format!("{base}.perftest");
    if p.all_sizes && p.size.is_some() {
        sink.error(
            format!("{b}.size"),
            "size and all_sizes exclude each other (-s vs -a)",
        );
    }
    if p.all_sizes && p.duration.is_some() {
        sink.error(
            format!("{b}.duration"),
            "perftest cannot combine -a (all_sizes) with -D (duration); pick one",
        );
    }
    if p.duration.is_some() && p.iterations.is_some() {
        sink.error(
            format!("{b}.iterations"),
            "iterations (-n) and duration (-D) exclude each other",
        );
    }
    if let Some(s) = p.size {
        if s.0 == 0 || s.0 > 1 << 30 {
            sink.error(
                format!("{b}.size"),
                format!("{} bytes is outside perftest's range (1 byte to 1G)", s.0),
            );
        }
    }
    if let Some(0) = p.iterations {
        sink.error(format!("{b}.iterations"), "must be at least 1");
    }
    if let Some(d) = p.duration {
        if d.0 < Duration::from_secs(1) {
            sink.error(
                format!("{b}.duration"),
                "perftest's -D takes whole seconds (at least 1s)",
            );
        }
    }
    if !p.tool.is_bw() {
        if p.qps.is_some() {
            sink.error(
                format!("{b}.qps"),
                format!(
                    "-q belongs to the bandwidth tools; {} has no queue-pair option",
                    p.tool.binary()
                ),
            );
        }
        if p.bidirectional {
            sink.error(
                format!("{b}.bidirectional"),
                format!("-b belongs to the bandwidth tools, not {}", p.tool.binary()),
            );
        }
    }
    if let Some(q) = p.qps {
        if q == 0 || q > 256 {
            sink.error(
                format!("{b}.qps"),
                format!("{q} queue pairs is out of range (1-256)"),
            );
        }
    }
}

/// iperf3's own limits (3.12: `-P` at most 128, `-i` from 0.1 to 60 s), so
/// a suite fails here rather than with a `parameter error` on every host.
fn check_iperf(i: &IperfSpec, base: &str, sink: &mut Sink) {
    let b = format!("{base}.iperf");
    if i.streams == 0 || i.streams > 128 {
        sink.error(
            format!("{b}.streams"),
            format!("{} streams is outside iperf3's range (1-128)", i.streams),
        );
    }
    if let Some(iv) = i.interval {
        let s = iv.secs_f64();
        if !(0.1..=60.0).contains(&s) {
            sink.error(
                format!("{b}.interval"),
                format!("{s} s is outside iperf3's report interval range (100ms to 60s)"),
            );
        }
    }
}

fn check_nccl(n: &NcclSpec, base: &str, sink: &mut Sink) {
    let b = format!("{base}.nccl");
    if n.min_bytes.0 == 0 && n.max_bytes.0 == 0 {
        sink.error(format!("{b}.max_bytes"), "max_bytes must be above 0");
    }
    if n.min_bytes > n.max_bytes {
        sink.error(
            format!("{b}.min_bytes"),
            format!(
                "min_bytes {} is above max_bytes {}",
                n.min_bytes.0, n.max_bytes.0
            ),
        );
    }
    if n.step_factor < 2 {
        sink.error(format!("{b}.step_factor"), "must be at least 2");
    }
    if n.iters == 0 {
        sink.error(format!("{b}.iters"), "must be at least 1");
    }
    if n.gpus_per_node == 0 || n.gpus_per_node > 64 {
        sink.error(
            format!("{b}.gpus_per_node"),
            format!("{} GPUs per node is out of range (1-64)", n.gpus_per_node),
        );
    }
    for key in n.env.keys() {
        if !key.starts_with("NCCL_") && !key.starts_with("UCX_") && !key.starts_with("CUDA_") {
            sink.error(
                format!("{b}.env.{key}"),
                "only NCCL_*, UCX_* and CUDA_* variables are passed through",
            );
        } else if !key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            sink.error(format!("{b}.env.{key}"), "not a valid variable name");
        }
    }
}

fn check_audit(a: &crate::config::suite::AuditSpec, base: &str, sink: &mut Sink) {
    const FAMILIES: [&str; 4] = ["nic", "switch", "cabling", "optics"];
    for (i, c) in a.checks.iter().enumerate() {
        let family = c.split('.').next().unwrap_or_default();
        if !FAMILIES.contains(&family) {
            sink.error(
                format!("{base}.audit.checks[{i}]"),
                format!(
                    "unknown check {}: checks start with {}",
                    quote(c),
                    FAMILIES.join(", ")
                ),
            );
        }
    }
    if a.ecn_tolerance_pct
        .is_some_and(|t| !(0.0..=100.0).contains(&t))
    {
        sink.error(
            format!("{base}.audit.ecn_tolerance_pct"),
            "must be between 0 and 100",
        );
    }
    if a.weak_lane_db.is_some_and(|d| !(d > 0.0 && d <= 30.0)) {
        sink.error(
            format!("{base}.audit.weak_lane_db"),
            "must be above 0 and at most 30 dB",
        );
    }
}

fn check_pattern(t: &TestSpec, kind: &TestKind, base: &str, sink: &mut Sink) {
    let p = format!("{base}.pattern");
    match (kind, &t.pattern) {
        (TestKind::Fault(_), Some(_)) => sink.error(
            p,
            "a fault test has no pattern; it runs during the test named by fault.during",
        ),
        (TestKind::Audit(_), Some(_)) => sink.error(
            p,
            "an audit has no pattern; it reads every node the test selects and the switches they reach",
        ),
        (TestKind::Fault(_) | TestKind::Audit(_), None) | (TestKind::Nccl(_), None) => {}
        (_, None) => sink.error(
            p,
            "missing pattern (rail-pairs, full-mesh, random, incast, per-leaf, cross-leaf)",
        ),
        (TestKind::Perftest(_) | TestKind::Iperf(_), Some(Pattern::AllNodes)) => sink.error(
            p,
            "all-nodes is a collective pattern, for nccl tests; use full-mesh or rail-pairs",
        ),
        (
            TestKind::Nccl(_),
            Some(
                Pattern::FullMesh
                | Pattern::Random(_)
                | Pattern::Incast(_)
                | Pattern::RailPairs
                | Pattern::CrossLeaf,
            ),
        ) => sink.error(p, "nccl tests run all-nodes or per-leaf collectives"),
        (_, Some(Pattern::Random(r))) if r.rounds == 0 => {
            sink.error(format!("{p}.random.rounds"), "must be at least 1")
        }
        (_, Some(Pattern::Incast(ic))) if ic.senders == 0 => {
            sink.error(format!("{p}.incast.senders"), "must be at least 1")
        }
        _ => {}
    }
}

fn check_expect(e: &Expect, kind: &TestKind, metric: Option<Metric>, base: &str, sink: &mut Sink) {
    let b = format!("{base}.expect");
    let is_fault = matches!(kind, TestKind::Fault(_));
    let thresholds = [
        e.min,
        e.max,
        e.warn_min,
        e.warn_max,
        e.min_pct_of_line_rate,
        e.warn_pct_of_line_rate,
    ];
    if is_fault && (thresholds.iter().any(Option::is_some) || e.fair_share.is_some()) {
        sink.error(
            b.clone(),
            "a fault test's expectations are workload, recovers_within and min_fraction",
        );
    }
    if !is_fault
        && (e.workload.is_some() || e.recovers_within.is_some() || e.min_fraction.is_some())
    {
        sink.error(
            b.clone(),
            "workload, recovers_within and min_fraction belong to fault tests",
        );
    }
    for (key, v) in [
        ("min", e.min),
        ("max", e.max),
        ("warn_min", e.warn_min),
        ("warn_max", e.warn_max),
    ] {
        if let Some(v) = v {
            if !v.is_finite() || v < 0.0 {
                sink.error(
                    format!("{b}.{key}"),
                    format!("{v} is not a valid threshold (a non-negative number)"),
                );
            }
        }
    }
    if let (Some(lo), Some(hi)) = (e.min, e.max) {
        if lo > hi {
            sink.error(
                format!("{b}.min"),
                format!("min {lo} is above max {hi}; nothing could pass"),
            );
        }
    }
    if let (Some(m), Some(w)) = (e.min, e.warn_min) {
        if w < m {
            sink.error(format!("{b}.warn_min"), format!("warn_min {w} is below min {m}; the warning band must sit above the failure threshold"));
        }
    }
    if let (Some(m), Some(w)) = (e.max, e.warn_max) {
        if w > m {
            sink.error(format!("{b}.warn_max"), format!("warn_max {w} is above max {m}; the warning band must sit below the failure threshold"));
        }
    }
    for (key, v) in [
        ("min_pct_of_line_rate", e.min_pct_of_line_rate),
        ("warn_pct_of_line_rate", e.warn_pct_of_line_rate),
    ] {
        if let Some(v) = v {
            if !(v > 0.0 && v <= 100.0) {
                sink.error(
                    format!("{b}.{key}"),
                    format!("{v} is not a percentage (0-100]"),
                );
            }
            if !matches!(
                metric,
                Some(Metric::BwAvgGbps | Metric::BwPeakGbps | Metric::ThroughputGbps)
            ) {
                sink.error(
                    format!("{b}.{key}"),
                    "a percentage of line rate applies to perftest bandwidth or iperf3 throughput",
                );
            }
        }
    }
    if let (Some(m), Some(w)) = (e.min_pct_of_line_rate, e.warn_pct_of_line_rate) {
        if w < m {
            sink.error(
                format!("{b}.warn_pct_of_line_rate"),
                format!(
                    "{w} is below min_pct_of_line_rate {m}; the warning band must sit above it"
                ),
            );
        }
    }
    if let Some(fs) = &e.fair_share {
        check_fair_share(fs, metric, e, &b, sink);
    }
    if let Some(f) = e.min_fraction {
        if !(f > 0.0 && f <= 1.0) {
            sink.error(
                format!("{b}.min_fraction"),
                format!("{f} is not a fraction (0-1]"),
            );
        }
    }
    if let (Some(m), TestKind::Perftest(p)) = (e.metric, kind) {
        let lat = matches!(m, Metric::TTypicalUs | Metric::TAvgUs | Metric::P99Us);
        let bw = matches!(m, Metric::BwAvgGbps | Metric::BwPeakGbps);
        if (lat && p.tool.is_bw()) || (bw && !p.tool.is_bw()) || !(lat || bw) {
            sink.error(
                format!("{b}.metric"),
                format!("{} does not report {}", p.tool.binary(), m.name()),
            );
        }
        if m == Metric::BwPeakGbps && p.duration.is_some() {
            sink.error(
                format!("{b}.metric"),
                "with duration (-D) perftest prints no peak; use bw_avg_gbps",
            );
        }
    }
    if let (Some(m), TestKind::Iperf(_)) = (e.metric, kind) {
        if m != Metric::ThroughputGbps {
            sink.error(
                format!("{b}.metric"),
                format!("iperf3 reports throughput_gbps, not {}", m.name()),
            );
        }
    }
    if let (Some(m), TestKind::Nccl(_)) = (e.metric, kind) {
        if !matches!(m, Metric::BusbwGbs | Metric::AlgbwGbs) {
            sink.error(
                format!("{b}.metric"),
                format!("nccl-tests does not report {}", m.name()),
            );
        }
    }
}

fn check_fair_share(
    fs: &FairShareExpect,
    metric: Option<Metric>,
    e: &Expect,
    b: &str,
    sink: &mut Sink,
) {
    let b = format!("{b}.fair_share");
    if !matches!(
        metric,
        Some(Metric::BwAvgGbps | Metric::BwPeakGbps | Metric::ThroughputGbps | Metric::BusbwGbs)
    ) {
        sink.error(
            b.clone(),
            "a fair share bounds bandwidth: perftest bw_avg_gbps, iperf3 throughput_gbps or nccl busbw_gbs",
        );
    }
    if e.min_pct_of_line_rate.is_some() || e.warn_pct_of_line_rate.is_some() {
        sink.error(
            b.clone(),
            "fair_share replaces min_pct_of_line_rate and warn_pct_of_line_rate; keep one",
        );
    }
    let mut pct = |key: &str, v: f64| {
        if !(v > 0.0 && v <= 100.0) {
            sink.error(
                format!("{b}.{key}"),
                format!("{v} is not a percentage (0-100]"),
            );
        }
    };
    pct("min_pct", fs.min_pct);
    if let Some(w) = fs.warn_pct {
        pct("warn_pct", w);
    }
    if let Some(cs) = &fs.cross_spine {
        let c = "cross_spine";
        pct(&format!("{c}.floor_pct"), cs.floor_pct);
        pct(&format!("{c}.median_pct"), cs.median_pct);
        pct(&format!("{c}.quantile_min_pct"), cs.quantile_min_pct);
        if !(cs.quantile > 0.0 && cs.quantile < 50.0) {
            sink.error(
                format!("{b}.{c}.quantile"),
                format!(
                    "{} is not a lower quantile in percent (0-50), e.g. 5 for the 5th percentile",
                    cs.quantile
                ),
            );
        }
        if cs.quantile_min_pct > cs.median_pct {
            sink.error(
                format!("{b}.{c}.quantile_min_pct"),
                "a lower quantile cannot be held above the median's bar",
            );
        }
        if cs.floor_pct > cs.quantile_min_pct {
            sink.error(
                format!("{b}.{c}.floor_pct"),
                "the per-step floor sits under the quantile's bar (it catches broken parts, the quantile catches spread)",
            );
        }
    }
    if let Some(w) = fs.warn_pct {
        if w < fs.min_pct {
            sink.error(
                format!("{b}.warn_pct"),
                format!(
                    "{w} is below min_pct {}; the warning band must sit above it",
                    fs.min_pct
                ),
            );
        }
    }
}

/// The fault actions a suite can write, for messages.
const FAULT_ACTIONS: &str = "link_flap, leaf_reset, spine_loss or route_change";

/// The switch named `name` when it has `role`; otherwise an error at `at`
/// that lists the switches that do.
fn switch_of_role(
    inv: &Inventory,
    name: &str,
    role: SwitchRole,
    action: &str,
    at: &str,
    sink: &mut Sink,
) -> Option<SwitchId> {
    let label = |r: SwitchRole| match r {
        SwitchRole::Leaf => "leaf",
        SwitchRole::Spine => "spine",
    };
    let of_role: Vec<String> = inv
        .switches
        .iter()
        .filter(|s| s.role == role)
        .map(|s| s.name.clone())
        .collect();
    let plural = match role {
        SwitchRole::Leaf => "leaves",
        SwitchRole::Spine => "spines",
    };
    let listed = if of_role.is_empty() {
        format!("the inventory has no {plural}")
    } else {
        format!("{plural}: {}", hostlist::compress(&of_role))
    };
    match inv.switch_by_name.get(name) {
        Some(&s) if inv.switches[s].role == role => Some(s),
        Some(&s) => {
            let other = label(inv.switches[s].role);
            let hint = match role {
                SwitchRole::Leaf => " (for a spine, use spine_loss)",
                SwitchRole::Spine => " (for a leaf, use leaf_reset)",
            };
            sink.error(
                at,
                format!(
                    "{name} is a {other}; {action} takes a {}{hint} ({listed})",
                    label(role)
                ),
            );
            None
        }
        None => {
            sink.error(
                at,
                format!("switch \"{name}\" is not in the inventory ({listed})"),
            );
            None
        }
    }
}

/// `switch:port` of a switch-to-switch link, for `route_change`: the switch
/// whose BGP session over that port is shut.
fn route_change_link(
    inv: &Inventory,
    target: &str,
    at: &str,
    sink: &mut Sink,
) -> Option<FaultAction> {
    let Some(End::Port { switch, port }) = inv.resolve_end(target) else {
        sink.error(
            at,
            format!("\"{target}\" is not a switch port (switch:port) of the inventory; route_change shuts the BGP session a switch runs over that port"),
        );
        return None;
    };
    let end = End::Port {
        switch,
        port: port.clone(),
    };
    let Some(link) = inv.link_at(&end) else {
        sink.error(at, format!("{target} has no cable in the inventory"));
        return None;
    };
    let l = &inv.links[link];
    let far = if l.a == end { &l.b } else { &l.a };
    if let End::Nic(_) = far {
        sink.error(
            at,
            format!(
                "{target} is cabled to {}, a host: route_change takes a link between two switches (a leaf uplink), whose BGP session is one ECMP member",
                inv.end_name(far)
            ),
        );
        return None;
    }
    Some(FaultAction::RouteChange { switch, port, link })
}

#[allow(clippy::too_many_arguments)]
fn check_fault(
    f: &FaultSpec,
    base: &str,
    index: usize,
    names: &HashMap<&str, usize>,
    tests: &[TestSpec],
    inv: &Inventory,
    sink: &mut Sink,
    sel: &mut Selections,
) -> Option<Fault> {
    let b = format!("{base}.fault");
    let one = |v: Vec<String>| v.into_iter().next();
    let given: Vec<&str> = [
        ("link_flap", f.link_flap.is_some()),
        ("leaf_reset", f.leaf_reset.is_some()),
        ("spine_loss", f.spine_loss.is_some()),
        ("route_change", f.route_change.is_some()),
    ]
    .iter()
    .filter(|k| k.1)
    .map(|k| k.0)
    .collect();
    let action = if given.len() != 1 {
        sink.error(
            b.clone(),
            if given.is_empty() {
                format!("a fault needs one action: {FAULT_ACTIONS}")
            } else {
                format!(
                    "a fault has one action ({FAULT_ACTIONS}), not {}",
                    given.join(" and ")
                )
            },
        );
        None
    } else if let Some(flap) = &f.link_flap {
        let at = format!("{b}.link_flap.target");
        let target = sel
            .names(
                &flap.target,
                &at,
                inv,
                true,
                &[SelectKind::Uplink, SelectKind::Nic],
                sink,
            )
            .and_then(one)?;
        match inv.resolve_end(&target) {
            Some(end) => match inv.link_at(&end) {
                Some(link) => Some(FaultAction::LinkFlap { end, link }),
                None => {
                    sink.error(at, format!("{target} has no cable in the inventory"));
                    None
                }
            },
            None => {
                sink.error(at, format!("\"{target}\" is not a NIC (node:device) or a switch port (switch:port) of the inventory"));
                None
            }
        }
    } else if let Some(reset) = &f.leaf_reset {
        let at = format!("{b}.leaf_reset.switch");
        let switch = sel
            .names(
                &reset.switch,
                &at,
                inv,
                true,
                &[SelectKind::Leaf, SelectKind::Switch],
                sink,
            )
            .and_then(one)?;
        switch_of_role(inv, &switch, SwitchRole::Leaf, "leaf_reset", &at, sink).map(|s| {
            FaultAction::LeafReset {
                switch: s,
                mode: reset.mode,
            }
        })
    } else if let Some(loss) = &f.spine_loss {
        let at = format!("{b}.spine_loss.switch");
        let switch = sel
            .names(
                &loss.switch,
                &at,
                inv,
                true,
                &[SelectKind::Spine, SelectKind::Switch],
                sink,
            )
            .and_then(one)?;
        switch_of_role(inv, &switch, SwitchRole::Spine, "spine_loss", &at, sink).map(|s| {
            FaultAction::SpineLoss {
                switch: s,
                mode: loss.mode,
            }
        })
    } else if let Some(change) = &f.route_change {
        let at = format!("{b}.route_change.link");
        let target = sel
            .names(&change.link, &at, inv, true, &[SelectKind::Uplink], sink)
            .and_then(one)?;
        route_change_link(inv, &target, &at, sink)
    } else {
        None
    };
    let during = match names.get(f.during.as_str()) {
        Some(&d) if d == index => {
            sink.error(format!("{b}.during"), "a fault cannot run during itself");
            None
        }
        Some(&d) if tests[d].fault.is_some() => {
            sink.error(
                format!("{b}.during"),
                format!("\"{}\" is a fault test; name a traffic test", f.during),
            );
            None
        }
        Some(&d) => Some(d),
        None => {
            let known: Vec<&str> = tests
                .iter()
                .filter(|t| t.fault.is_none())
                .map(|t| t.name.as_str())
                .collect();
            sink.error(
                format!("{b}.during"),
                format!(
                    "no test is named \"{}\" (traffic tests: {})",
                    f.during,
                    known.join(", ")
                ),
            );
            None
        }
    };
    if f.repeat == 0 {
        sink.error(format!("{b}.repeat"), "must be at least 1");
    }
    if f.repeat > 1 && f.pace.is_none() {
        sink.error(format!("{b}.pace"), "a repeated fault needs pace (e.g. 30s): Cumulus protodowns a port after 5 flaps in 10s");
    }
    let fault = Fault {
        action: action?,
        during: during?,
        at: f.at.0,
        duration: f.duration.0,
        repeat: f.repeat,
        pace: f.pace.map(|Span(p)| p),
    };
    let n = fault.flaps_per_window();
    if f.repeat > 1 && n >= FLAP_LIMIT {
        sink.error(
            format!("{b}.pace"),
            format!(
                "{n} flaps would start within {}s (one every {:.1}s): switches protodown a port after {FLAP_LIMIT} flaps in {}s; pace them at least {}s apart",
                FLAP_WINDOW.as_secs(),
                fault.period().as_secs_f64(),
                FLAP_WINDOW.as_secs(),
                FLAP_WINDOW.as_secs() / u64::from(FLAP_LIMIT - 1) + 1
            ),
        );
    }
    Some(fault)
}

#[cfg(test)]
mod fault_tests {
    use super::*;
    use crate::config::check::parse_inventory;
    use crate::config::generate::{generate, to_yaml, PodShape};

    fn pod() -> Inventory {
        let shape = PodShape {
            nodes: 16,
            rails: 1,
            nodes_per_leaf: 8,
            spines: 2,
            ..PodShape::default()
        };
        let yaml = to_yaml(&shape, &generate(&shape).unwrap()).unwrap();
        parse_inventory("gen.yaml", &yaml).unwrap()
    }

    /// The fault of a suite with one traffic test and `fault`.
    fn fault(inv: &Inventory, fault: &str) -> Result<Fault, String> {
        let text = format!(
            "suite: {{name: t}}\ntests:\n  - name: bw\n    perftest: {{tool: ib_write_bw, size: 1M, duration: 30s}}\n    pattern: cross-leaf\n  - name: f\n    fault: {{{fault}, during: bw, at: 5s, for: 3s}}\n"
        );
        let s = parse_suite("s.yaml", &text, inv).map_err(|e| e.to_string())?;
        match &s.tests[1].kind {
            TestKind::Fault(f) => Ok(f.clone()),
            k => panic!("{}", k.label()),
        }
    }

    #[test]
    fn spine_loss_takes_a_spine_by_name_or_selector() {
        let inv = pod();
        let f = fault(&inv, "spine_loss: {switch: spine2, mode: ports_down}").unwrap();
        assert!(matches!(
            f.action,
            FaultAction::SpineLoss { switch, mode: LeafResetMode::PortsDown }
                if inv.switches[switch].name == "spine2"
        ));
        let f = fault(
            &inv,
            "spine_loss: {switch: {select: spine, position: first}, mode: routing_restart}",
        )
        .unwrap();
        assert!(matches!(
            f.action,
            FaultAction::SpineLoss { switch, mode: LeafResetMode::RoutingRestart }
                if inv.switches[switch].name == "spine1"
        ));
    }

    #[test]
    fn a_leaf_for_spine_loss_or_a_spine_for_leaf_reset_is_refused_with_the_right_ones() {
        let inv = pod();
        let e = fault(&inv, "spine_loss: {switch: r0-leaf1, mode: reload}").unwrap_err();
        assert!(
            e.contains("s.yaml:7:")
                && e.contains("tests[1].fault.spine_loss.switch: r0-leaf1 is a leaf; spine_loss takes a spine (for a leaf, use leaf_reset) (spines: spine[1-2])"),
            "{e}"
        );
        let e = fault(&inv, "spine_loss: {switch: spine9, mode: reload}").unwrap_err();
        assert!(
            e.contains("switch \"spine9\" is not in the inventory (spines: spine[1-2])"),
            "{e}"
        );
        let e = fault(&inv, "leaf_reset: {switch: spine1, mode: reload}").unwrap_err();
        assert!(
            e.contains("spine1 is a spine; leaf_reset takes a leaf (for a spine, use spine_loss) (leaves: r0-leaf[1-2])"),
            "{e}"
        );
        let e = fault(
            &inv,
            "spine_loss: {switch: {select: leaf, rail: 0, pick: first}, mode: reload}",
        )
        .unwrap_err();
        assert!(
            e.contains("select: leaf cannot be used here; this takes select: spine or switch"),
            "{e}"
        );
    }

    #[test]
    fn route_change_takes_a_switch_port_of_a_switch_to_switch_link() {
        let inv = pod();
        let f = fault(&inv, "route_change: {link: r0-leaf1:swp9}").unwrap();
        let FaultAction::RouteChange { switch, port, link } = &f.action else {
            panic!("{:?}", f.action);
        };
        assert_eq!(
            (inv.switches[*switch].name.as_str(), port.as_str()),
            ("r0-leaf1", "swp9")
        );
        assert_eq!(inv.links[*link].kind, LinkKind::Fabric);
        // From the spine's side, and by selector (shut on the leaf).
        let f = fault(&inv, "route_change: {link: spine1:swp1}").unwrap();
        assert!(
            matches!(&f.action, FaultAction::RouteChange { switch, .. } if inv.switches[*switch].name == "spine1")
        );
        let f = fault(
            &inv,
            "route_change: {link: {select: uplink, spine: spine2, pick: first}}",
        )
        .unwrap();
        assert!(
            matches!(&f.action, FaultAction::RouteChange { switch, .. } if inv.switches[*switch].name == "r0-leaf1")
        );
        let e = fault(&inv, "route_change: {link: r0-leaf1:swp1}").unwrap_err();
        assert!(
            e.contains("r0-leaf1:swp1 is cabled to gpu001:mlx5_0, a host: route_change takes a link between two switches"),
            "{e}"
        );
        let e = fault(&inv, "route_change: {link: gpu001:mlx5_0}").unwrap_err();
        assert!(e.contains("\"gpu001:mlx5_0\" is not a switch port"), "{e}");
        let e = fault(&inv, "route_change: {link: r0-leaf1:swp99}").unwrap_err();
        assert!(
            e.contains("r0-leaf1:swp99 has no cable in the inventory"),
            "{e}"
        );
    }

    #[test]
    fn a_fault_has_exactly_one_action() {
        let inv = pod();
        let e = fault(
            &inv,
            "spine_loss: {switch: spine1, mode: ports_down}, route_change: {link: r0-leaf1:swp9}",
        )
        .unwrap_err();
        assert!(
            e.contains("a fault has one action (link_flap, leaf_reset, spine_loss or route_change), not spine_loss and route_change"),
            "{e}"
        );
        let e = fault(&inv, "repeat: 1").unwrap_err();
        assert!(
            e.contains(
                "a fault needs one action: link_flap, leaf_reset, spine_loss or route_change"
            ),
            "{e}"
        );
    }
}
