//! junit.xml for Jenkins and GitLab: one testsuite per suite test, one
//! testcase per component (pair, incast receiver, collective) named by the
//! component, failures and errors with the measured value, the threshold,
//! the suspect that explains them and the raw output in the element's text.
//! A pure function of the records and raw files.
//!
//! The file validates against the Ant JUnit schema (windyroad's
//! `JUnit.xsd`, checked in `tests/junit_schema.rs`): each testsuite holds
//! `properties`, its testcases, then `system-out` and `system-err`, and a
//! testcase holds nothing but its `failure`, `error` or `skipped`. So what
//! a passing testcase would print (a warning's message, a skip's reason)
//! goes into its testsuite's `system-out`.
//!
//! A run that did not finish (killed, interrupted, out of disk) gains a
//! first testsuite `<suite>.run` with an `error` testcase "run incomplete"
//! saying why and which tests did not run, so CI never reads a cut-short
//! run as a clean one.
//!
//! Everything from records and raw files is untrusted text: attribute
//! values are escaped by the writer, CDATA content goes through
//! [`cdata_safe`], control characters are removed.
//!
//! Past `rollup_limit` results in one test (a full mesh of hundreds of
//! nodes), its passing results become one testcase; every other result
//! keeps its own, up to `rollup_limit` of them (see [`cases`]). With the
//! raw output capped per testcase and per file, the file stays under
//! GitLab's 30 MB at 1,024 nodes.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;

use junit_report::{
    Duration, OffsetDateTime, ReportBuilder, TestCase, TestCaseBuilder, TestSuite, TestSuiteBuilder,
};

use crate::config::suite::{Gate, VerdictName};
use crate::score::{fails_gate, Verdict};

use super::events::{Record, VerdictRecord};
use super::raw;
use super::sanitize::{cdata_safe, html_escape, xml_safe};

/// Raw output in one testcase's text is capped so the file stays usable.
const RAW_PER_CASE: usize = 32 * 1024;
/// Raw output in the whole file: once spent, failures name their raw files
/// without copying them, so a pod where everything fails still fits.
const RAW_PER_FILE: usize = 8 * 1024 * 1024;
/// One testsuite's `system-out` (warnings, skips, roll-ups).
const NOTES_CAP: usize = 64 * 1024;
/// Components a rolled-up testcase lists by name.
const ROLLED_LISTED: usize = 100;
/// Results in one test past which its passing results are rolled up.
pub const DEFAULT_ROLLUP: usize = 2000;

fn gate_of(records: &[Record]) -> Gate {
    let names = super::events::run_started(records).map(|s| s.gate_fail_on.clone());
    let fail_on = names
        .unwrap_or_else(|| vec!["fail".into(), "error".into()])
        .iter()
        .filter_map(|n| {
            serde_json::from_value::<VerdictName>(serde_json::Value::String(n.clone())).ok()
        })
        .collect();
    Gate {
        fail_on,
        ..Gate::default()
    }
}

/// A testcase `time`: junit-report panics on a duration it cannot hold.
fn seconds(s: f64) -> Duration {
    if s.is_finite() && s > 0.0 {
        Duration::seconds_f64(s.min(1e9))
    } else {
        Duration::ZERO
    }
}

/// A failure's details as text: what was measured against what, the
/// suspect that explains it, and where the evidence is.
fn details(v: &VerdictRecord, suspect: Option<&str>) -> String {
    let mut out = format!("{} {}: {}\n", v.test, v.component, v.message);
    if let Some(x) = v.value {
        out += &format!("value: {x} {}\n", v.unit.as_deref().unwrap_or(""));
    }
    let t = &v.threshold;
    for (k, x) in [
        ("min", t.min),
        ("max", t.max),
        ("warn_min", t.warn_min),
        ("warn_max", t.warn_max),
    ] {
        if let Some(x) = x {
            out += &format!("{k}: {x}\n");
        }
    }
    if let Some(b) = &t.basis {
        out += &format!("threshold basis: {b}\n");
    }
    if !v.samples.is_empty() {
        let s: Vec<String> = v.samples.iter().map(|x| x.to_string()).collect();
        out += &format!("samples: {}\n", s.join(", "));
    }
    if let Some(s) = suspect {
        out += &format!("suspect: {s}\n");
    }
    for e in v.evidence.iter().take(3) {
        out += &format!("evidence: {e}\n");
    }
    out
}

/// The raw output of up to three evidence files, within `RAW_PER_CASE` and
/// what is left of the file's `RAW_PER_FILE` in `left`.
fn raw_text(run_dir: &Path, v: &VerdictRecord, left: &mut usize) -> String {
    let mut out = String::new();
    let mut budget = RAW_PER_CASE.min(*left);
    for rel in v.evidence.iter().take(3) {
        if budget == 0 {
            let spent = if *left == 0 {
                format!("this file's {} MiB", RAW_PER_FILE >> 20)
            } else {
                format!("this testcase's {} KiB", RAW_PER_CASE >> 10)
            };
            out += &format!("--- {rel}: not copied here ({spent} of raw output is spent)\n");
            continue;
        }
        out += &format!("--- {rel}\n");
        if let Some(text) = raw::read_capped(run_dir, rel, budget) {
            budget = budget.saturating_sub(text.len());
            *left = left.saturating_sub(text.len());
            out += &text;
        }
    }
    out
}

/// What one testcase stands for.
enum Case<'a> {
    One(&'a VerdictRecord),
    /// A passing counter-ledger finding (an observe-only rule such as
    /// `counters.ecmp_balance`): listed in the testsuite's `system-out`,
    /// not a testcase, since which uplinks it names changes from run to run.
    Observed(&'a VerdictRecord),
    /// A large test's passing results, as one passing testcase.
    Passing {
        test: &'a str,
        count: usize,
        longest_s: f64,
    },
    /// A large test's non-pass results of one verdict past the limit.
    Rest {
        verdict: Verdict,
        results: Vec<&'a VerdictRecord>,
    },
}

const PASSING_ROLLED: &str = "passing results (rolled up)";

fn rest_name(verdict: Verdict) -> String {
    format!("more {} results (rolled up)", verdict.as_str())
}

/// Whether `v` is a passing finding of the counter ledger on one
/// component (the ledger's own `counter ledger` verdict is not).
fn observed(v: &VerdictRecord) -> bool {
    v.kind == "counters" && v.verdict == Verdict::Pass && v.component != LEDGER
}

const LEDGER: &str = "counter ledger";

/// The testcases of one test. Up to `limit` results, one testcase each.
/// Past it (decided by the number of results, which the plan fixes, so
/// whether a test rolls up does not change with its verdicts): every non-pass
/// result keeps its own testcase, the first `limit` of them; the passing
/// results become one passing testcase; non-pass results past the first
/// `limit` become one testcase per verdict that lists them. Passing
/// counter findings are never testcases (see [`Case::Observed`]).
fn cases<'a>(vs: &[&'a VerdictRecord], limit: usize) -> Vec<Case<'a>> {
    let mut out: Vec<Case> = vs
        .iter()
        .filter(|v| observed(v))
        .map(|v| Case::Observed(v))
        .collect();
    let vs: Vec<&VerdictRecord> = vs.iter().copied().filter(|v| !observed(v)).collect();
    if vs.len() <= limit {
        out.extend(vs.iter().map(|v| Case::One(v)));
        return out;
    }
    let (mut count, mut longest_s) = (0, 0.0f64);
    let mut rest: BTreeMap<Verdict, Vec<&VerdictRecord>> = BTreeMap::new();
    let mut kept = 0;
    for &v in &vs {
        if v.verdict == Verdict::Pass {
            count += 1;
            longest_s = longest_s.max(v.duration_s);
        } else if kept < limit {
            kept += 1;
            out.push(Case::One(v));
        } else {
            rest.entry(v.verdict).or_default().push(v);
        }
    }
    if count > 0 {
        out.push(Case::Passing {
            test: &vs[0].test,
            count,
            longest_s,
        });
    }
    for (verdict, results) in rest.into_iter().rev() {
        out.push(Case::Rest { verdict, results });
    }
    out
}

/// What a testsuite is being built from, shared by its testcases.
struct Ctx<'a> {
    run_dir: &'a Path,
    gate: &'a Gate,
    suite: &'a str,
    /// The top suspect explaining each failing `(test, component)`.
    suspects: HashMap<(&'a str, &'a str), String>,
    /// Raw output bytes the file may still take.
    raw_left: usize,
}

/// `name`, or `name (2)`, `name (3)`… if the testsuite has it already: CI
/// merges testcases that share a class and a name.
fn unique(seen: &mut HashSet<String>, name: String) -> String {
    if seen.insert(name.clone()) {
        return name;
    }
    let mut n = 2;
    loop {
        let again = format!("{name} ({n})");
        if seen.insert(again.clone()) {
            return again;
        }
        n += 1;
    }
}

/// A testcase with `verdict`: an error, a failure when the gate fails on
/// it (a warning too, with `warn` in `gate.fail_on`), skipped, or a pass.
/// `text` is the element's text, which is what CI shows.
fn judged(
    ctx: &Ctx,
    test: &str,
    name: &str,
    verdict: Verdict,
    time: Duration,
    message: &str,
    text: impl FnOnce() -> String,
) -> TestCase {
    let msg = xml_safe(message);
    let (mut tc, bad) = match verdict {
        Verdict::Skipped => (TestCaseBuilder::skipped(name), false),
        Verdict::Error => (TestCaseBuilder::error(name, time, "error", &msg), true),
        v if fails_gate(ctx.gate, v) => {
            (TestCaseBuilder::failure(name, time, v.as_str(), &msg), true)
        }
        _ => (TestCaseBuilder::success(name, time), false),
    };
    tc.set_classname(&xml_safe(&format!("{}.{test}", ctx.suite)));
    if bad {
        tc.set_trace(&cdata_safe(&text()));
    }
    tc.build()
}

/// A result's testcase name: its component, except a fault's, which is
/// `fault`: a fault test's target may be picked at random per seed (`pick:
/// random`), and CI follows a testcase by its name from run to run.
fn case_name(v: &VerdictRecord) -> String {
    if v.kind == "fault" {
        "fault".to_string()
    } else {
        xml_safe(&v.component)
    }
}

/// `component: message`, or the message alone when it starts with the
/// component already (a fault's: `link flap gpu005:mlx5_0: down 2s…`).
fn about(v: &VerdictRecord) -> String {
    if v.message.starts_with(&v.component) {
        v.message.clone()
    } else {
        format!("{}: {}", v.component, v.message)
    }
}

/// The testcase of `case`; none for an observed finding.
fn testcase(ctx: &mut Ctx, seen: &mut HashSet<String>, case: &Case) -> Option<TestCase> {
    Some(match case {
        Case::Observed(_) => return None,
        Case::One(v) => {
            let name = unique(seen, case_name(v));
            let suspect = ctx
                .suspects
                .get(&(v.test.as_str(), v.component.as_str()))
                .cloned();
            let (run_dir, mut left) = (ctx.run_dir, ctx.raw_left);
            let tc = judged(
                ctx,
                &v.test,
                &name,
                v.verdict,
                seconds(v.duration_s),
                &about(v),
                || details(v, suspect.as_deref()) + &raw_text(run_dir, v, &mut left),
            );
            ctx.raw_left = left;
            tc
        }
        Case::Passing {
            test, longest_s, ..
        } => {
            // The results ran side by side: the longest is the testcase's
            // time, their sum is not.
            let name = unique(seen, PASSING_ROLLED.to_string());
            judged(
                ctx,
                test,
                &name,
                Verdict::Pass,
                seconds(*longest_s),
                "",
                String::new,
            )
        }
        Case::Rest { verdict, results } => {
            let test = results.first().map(|v| v.test.as_str()).unwrap_or("");
            let name = unique(seen, rest_name(*verdict));
            let message = format!(
                "{} more {} results, not listed one by one",
                results.len(),
                verdict.as_str()
            );
            judged(ctx, test, &name, *verdict, Duration::ZERO, &message, || {
                rest_text(results, *verdict)
            })
        }
    })
}

fn rest_text(results: &[&VerdictRecord], verdict: Verdict) -> String {
    let mut out = format!(
        "{} more {} results past the ones listed one by one:\n",
        results.len(),
        verdict.as_str()
    );
    for v in results.iter().take(ROLLED_LISTED) {
        out += &format!("{}: {}\n", v.component, v.message);
    }
    if results.len() > ROLLED_LISTED {
        out += &format!(
            "... and {} more: every result is in report.html and results.jsonl\n",
            results.len() - ROLLED_LISTED
        );
    }
    out
}

/// A testsuite's `system-out`: what its passing testcases cannot carry
/// (warnings that do not fail the gate, skips, a passing fault's target,
/// the observed counter findings, the roll-up), capped.
fn notes(gate: &Gate, limit: usize, cases: &[Case]) -> String {
    let total: usize = cases
        .iter()
        .map(|c| match c {
            Case::Observed(_) => 0,
            Case::One(_) => 1,
            Case::Passing { count, .. } => *count,
            Case::Rest { results, .. } => results.len(),
        })
        .sum();
    let mut lines = Vec::new();
    for c in cases {
        match c {
            Case::Passing { count, .. } => lines.push(format!(
                "{total} results, more than {limit}: the {count} passing ones are the testcase \
                 \"{PASSING_ROLLED}\"; every result is in report.html and results.jsonl"
            )),
            Case::Observed(v) => lines.push(format!("observed {}: {}", v.component, v.message)),
            // The testcase is named `fault`: say what the fault was.
            Case::One(v) if v.kind == "fault" && v.verdict == Verdict::Pass => {
                lines.push(format!("pass {}", about(v)))
            }
            Case::One(v)
                if matches!(v.verdict, Verdict::Warn | Verdict::Skipped)
                    && !fails_gate(gate, v.verdict) =>
            {
                lines.push(format!(
                    "{} {}: {}",
                    v.verdict.as_str(),
                    v.component,
                    v.message
                ))
            }
            Case::Rest { verdict, results }
                if matches!(verdict, Verdict::Warn | Verdict::Skipped)
                    && !fails_gate(gate, *verdict) =>
            {
                lines.push(rest_text(results, *verdict).trim_end().to_string())
            }
            _ => {}
        }
    }
    let mut out = String::new();
    for (i, l) in lines.iter().enumerate() {
        if out.len() + l.len() > NOTES_CAP {
            out += &format!(
                "... and {} more lines: every result is in report.html and results.jsonl\n",
                lines.len() - i
            );
            break;
        }
        out += l;
        out.push('\n');
    }
    cdata_safe(&out)
}

/// A testsuite as the schema wants it: `package` its suite, `system-out`
/// and `system-err` present.
fn suite_of(
    name: &str,
    package: &str,
    timestamp: OffsetDateTime,
    cases: Vec<TestCase>,
    out: &str,
) -> TestSuite {
    let mut b = TestSuiteBuilder::new(&xml_safe(name));
    b.set_timestamp(timestamp);
    b.add_testcases(cases);
    b.set_system_out(out);
    b.set_system_err("");
    let mut ts = b.build();
    ts.package = xml_safe(package);
    ts
}

pub fn render(records: &[Record], run_dir: &Path, rollup_limit: usize) -> Result<String, String> {
    let started = super::events::run_started(records);
    let suite = started.map(|s| s.suite.as_str()).unwrap_or("rocegate");
    let timestamp = started
        .and_then(|s| {
            OffsetDateTime::parse(
                &s.started_at,
                &time::format_description::well_known::Rfc3339,
            )
            .ok()
        })
        .unwrap_or(OffsetDateTime::UNIX_EPOCH);
    let gate = gate_of(records);
    // Tests in plan order, then any test seen only in verdicts.
    let mut order: Vec<String> = started
        .map(|s| s.tests.iter().map(|t| t.name.clone()).collect())
        .unwrap_or_default();
    let mut groups: BTreeMap<String, Vec<&VerdictRecord>> = BTreeMap::new();
    for r in records {
        if let Record::Verdict(v) = r {
            if !order.contains(&v.test) {
                order.push(v.test.clone());
            }
            groups.entry(v.test.clone()).or_default().push(v);
        }
    }
    let loc = crate::score::suspects::localise(records);
    let mut ctx = Ctx {
        run_dir,
        gate: &gate,
        suite,
        suspects: HashMap::new(),
        raw_left: RAW_PER_FILE,
    };
    for sp in &loc.suspects {
        for r in &sp.results {
            ctx.suspects
                .entry((r.test.as_str(), r.component.as_str()))
                .or_insert_with(|| sp.label());
        }
    }
    let mut report = ReportBuilder::new();
    let done = super::events::completeness(records);
    if !done.complete {
        let mut tc = TestCaseBuilder::error(
            "run incomplete",
            Duration::ZERO,
            "incomplete",
            &xml_safe(&done.describe()),
        );
        let name = format!("{suite}.run");
        tc.set_classname(&xml_safe(&name));
        tc.set_trace(&cdata_safe(&format!("{}\n", done.describe())));
        report.add_testsuite(suite_of(&name, suite, timestamp, vec![tc.build()], ""));
    }
    for test in order {
        let Some(vs) = groups.get(&test) else {
            continue;
        };
        let list = cases(vs, rollup_limit);
        let mut seen = HashSet::new();
        let mut tcs = Vec::with_capacity(list.len());
        for c in &list {
            tcs.extend(testcase(&mut ctx, &mut seen, c));
        }
        let out = notes(&gate, rollup_limit, &list);
        report.add_testsuite(suite_of(
            &format!("{suite}.{test}"),
            suite,
            timestamp,
            tcs,
            &out,
        ));
    }
    // The suspects, one testcase each, named by component.
    if !loc.suspects.is_empty() {
        let name = format!("{suite}.suspects");
        let mut seen = HashSet::new();
        let mut tcs = Vec::new();
        for (i, sp) in loc.suspects.iter().enumerate() {
            let tc_name = unique(&mut seen, xml_safe(&sp.label()));
            let msg = xml_safe(&format!(
                "suspect {} of {}: {} (score {:.2}, explains {} result(s))",
                i + 1,
                loc.suspects.len(),
                sp.label(),
                sp.score,
                sp.results.len()
            ));
            let mut tc = TestCaseBuilder::failure(&tc_name, Duration::ZERO, "suspect", &msg);
            tc.set_classname(&xml_safe(&name));
            let mut text = sp.evidence.join("\n") + "\nresults:\n";
            for r in sp.results.iter().take(50) {
                text += &format!("  {} {}\n", r.test, r.component);
            }
            if sp.results.len() > 50 {
                text += &format!("  ... and {} more\n", sp.results.len() - 50);
            }
            tc.set_trace(&cdata_safe(&text));
            tcs.push(tc.build());
        }
        report.add_testsuite(suite_of(&name, suite, timestamp, tcs, ""));
    }
    let mut buf = Vec::new();
    report
        .build()
        .write_xml(&mut buf)
        .map_err(|e| format!("cannot write JUnit XML: {e}"))?;
    let xml = String::from_utf8(buf).map_err(|e| e.to_string())?;
    let mut props: Vec<(&str, String)> = Vec::new();
    if let Some(s) = started {
        props.push(("rocegate.fabric", s.fabric.clone()));
        props.push(("rocegate.suite", s.suite.clone()));
        props.push(("rocegate.seed", s.seed.to_string()));
        props.push(("rocegate.version", s.rocegate_version.clone()));
        props.push(("rocegate.transport", s.transport.clone()));
        if let Some(n) = &s.partial {
            props.push(("rocegate.partial", "true".into()));
            props.push(("rocegate.narrowing", n.clone()));
        }
    }
    // Each test's wall time, from its first sample's start to its last end
    // (its testcases overlap in time: their sum is not the test's time).
    let mut wall: BTreeMap<String, (f64, f64)> = BTreeMap::new();
    for r in records {
        if let Record::Sample(x) = r {
            let e = wall
                .entry(xml_safe(&format!("{suite}.{}", x.test)))
                .or_insert((f64::MAX, f64::MIN));
            e.0 = e.0.min(x.started_s);
            e.1 = e.1.max(x.ended_s);
        }
    }
    let stamp = ant_timestamp(timestamp);
    Ok(suite_attributes(&xml, &props, &stamp, &|name| {
        wall.get(name).map(|(a, b)| (b - a).max(0.0))
    }))
}

/// `YYYY-MM-DDTHH:MM:SS` in UTC, without a zone, as the Ant JUnit schema's
/// `timestamp` requires (junit-report writes RFC 3339).
fn ant_timestamp(t: OffsetDateTime) -> String {
    let t = t.to_offset(time::UtcOffset::UTC);
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}",
        t.year(),
        u8::from(t.month()),
        t.day(),
        t.hour(),
        t.minute(),
        t.second()
    )
}

/// Replaces the value of attribute `key` in one start tag.
fn set_attr(tag: &str, key: &str, value: &str) -> String {
    let pat = format!(" {key}=\"");
    match tag.find(&pat) {
        Some(i) => {
            let start = i + pat.len();
            match tag[start..].find('"') {
                Some(len) => format!("{}{value}{}", &tag[..start], &tag[start + len..]),
                None => tag.to_string(),
            }
        }
        None => tag.to_string(),
    }
}

/// The value of attribute `key` in one start tag (still escaped).
fn attr<'a>(tag: &'a str, key: &str) -> Option<&'a str> {
    let pat = format!(" {key}=\"");
    let start = tag.find(&pat)? + pat.len();
    let len = tag[start..].find('"')?;
    Some(&tag[start..start + len])
}

/// `xml` with every `<testsuite>` tag fixed: its `timestamp` in the Ant
/// schema's form, its `time` the test's wall time where `wall` knows it
/// (by the suite's escaped name), and a `<properties>` block first inside
/// it. junit-report writes no properties; every attribute value it writes
/// is escaped (`>` included), so the first `>` after `<testsuite ` ends
/// the tag.
fn suite_attributes(
    xml: &str,
    props: &[(&str, String)],
    stamp: &str,
    wall: &dyn Fn(&str) -> Option<f64>,
) -> String {
    let block: String = props
        .iter()
        .map(|(k, v)| {
            format!(
                "<property name=\"{}\" value=\"{}\"/>",
                html_escape(&xml_safe(k)),
                html_escape(&xml_safe(v))
            )
        })
        .collect();
    let block = if block.is_empty() {
        String::new()
    } else {
        format!("<properties>{block}</properties>")
    };
    let mut out = String::with_capacity(xml.len() + block.len() * 8);
    let mut rest = xml;
    while let Some(i) = rest.find("<testsuite ") {
        let Some(end) = rest[i..].find('>').map(|e| i + e) else {
            break;
        };
        out.push_str(&rest[..i]);
        let closed = rest[..end].ends_with('/');
        let mut tag = rest[i..if closed { end - 1 } else { end }].to_string();
        tag = set_attr(&tag, "timestamp", stamp);
        if let Some(t) = attr(&tag, "name").and_then(wall) {
            tag = set_attr(&tag, "time", &format!("{t:.3}"));
        }
        out.push_str(&tag);
        out.push('>');
        out.push_str(&block);
        if closed {
            out.push_str("</testsuite>");
        }
        rest = &rest[end + 1..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::score::threshold::Resolved;

    fn v(test: &str, kind: &str, component: &str, verdict: Verdict) -> VerdictRecord {
        VerdictRecord {
            test: test.into(),
            kind: kind.into(),
            component: component.into(),
            verdict,
            metric: None,
            value: None,
            unit: None,
            threshold: Resolved::default(),
            samples: Vec::new(),
            message: format!("{component} is {}", verdict.as_str()),
            evidence: Vec::new(),
            duration_s: 1.0,
            series: Vec::new(),
        }
    }

    fn shape(cs: &[Case]) -> Vec<String> {
        cs.iter()
            .map(|c| match c {
                Case::One(v) => v.component.clone(),
                Case::Observed(v) => format!("observed {}", v.component),
                Case::Passing { count, .. } => format!("{count} passing"),
                Case::Rest { verdict, results } => {
                    format!("{} more {}", results.len(), verdict.as_str())
                }
            })
            .collect()
    }

    #[test]
    fn up_to_the_limit_every_result_is_a_testcase() {
        let rs = [
            v("t", "perftest", "a", Verdict::Pass),
            v("t", "perftest", "b", Verdict::Fail),
            v("t", "perftest", "c", Verdict::Warn),
        ];
        let refs: Vec<&VerdictRecord> = rs.iter().collect();
        assert_eq!(shape(&cases(&refs, 3)), ["a", "b", "c"]);
    }

    #[test]
    fn past_the_limit_passes_roll_up_and_non_passes_stay_up_to_the_limit() {
        let mut rs: Vec<VerdictRecord> = (0..6)
            .map(|i| v("t", "perftest", &format!("p{i}"), Verdict::Pass))
            .collect();
        for i in 0..4 {
            rs.push(v("t", "perftest", &format!("f{i}"), Verdict::Fail));
        }
        rs.push(v("t", "perftest", "e0", Verdict::Error));
        let refs: Vec<&VerdictRecord> = rs.iter().collect();
        assert_eq!(
            shape(&cases(&refs, 3)),
            ["f0", "f1", "f2", "6 passing", "1 more error", "1 more fail"]
        );
    }

    #[test]
    fn passing_counter_findings_are_notes_and_do_not_count_toward_the_limit() {
        let rs = [
            v("t", "counters", "r0-leaf1:swp9", Verdict::Pass),
            v("t", "counters", "r0-leaf1:swp10", Verdict::Fail),
            v("t", "counters", LEDGER, Verdict::Pass),
            v("t", "perftest", "a", Verdict::Pass),
        ];
        let refs: Vec<&VerdictRecord> = rs.iter().collect();
        assert_eq!(
            shape(&cases(&refs, 3)),
            ["observed r0-leaf1:swp9", "r0-leaf1:swp10", LEDGER, "a"]
        );
        let gate = Gate::default();
        let out = notes(&gate, 3, &cases(&refs, 3));
        assert!(
            out.contains("observed r0-leaf1:swp9: r0-leaf1:swp9 is pass"),
            "{out}"
        );
    }

    #[test]
    fn a_fault_is_named_fault_whatever_its_target() {
        let f = v("flap", "fault", "link flap gpu005:mlx5_0", Verdict::Pass);
        assert_eq!(case_name(&f), "fault");
        let p = v(
            "bw",
            "perftest",
            "gpu001:mlx5_0<->gpu002:mlx5_0",
            Verdict::Pass,
        );
        assert_eq!(case_name(&p), "gpu001:mlx5_0<->gpu002:mlx5_0");
    }

    #[test]
    fn names_repeated_in_a_testsuite_are_numbered() {
        let mut seen = HashSet::new();
        let got: Vec<String> = ["a", "a", "b", "a"]
            .iter()
            .map(|n| unique(&mut seen, n.to_string()))
            .collect();
        assert_eq!(got, ["a", "a (2)", "b", "a (3)"]);
    }

    #[test]
    fn seconds_junit_report_cannot_hold_are_zero() {
        assert_eq!(seconds(f64::NAN), Duration::ZERO);
        assert_eq!(seconds(f64::INFINITY), Duration::ZERO);
        assert_eq!(seconds(-1.0), Duration::ZERO);
        assert_eq!(seconds(1.5), Duration::milliseconds(1500));
    }

    #[test]
    fn warnings_that_do_not_fail_the_gate_are_notes_and_fail_with_warn_in_fail_on() {
        let rs = [v("t", "audit", "r0-leaf1", Verdict::Warn)];
        let refs: Vec<&VerdictRecord> = rs.iter().collect();
        let list = cases(&refs, 10);
        let lenient = Gate::default();
        assert!(notes(&lenient, 10, &list).contains("warn r0-leaf1: r0-leaf1 is warn"));
        let strict = Gate {
            fail_on: vec![VerdictName::Fail, VerdictName::Error, VerdictName::Warn],
            ..Gate::default()
        };
        assert_eq!(notes(&strict, 10, &list), "");
        let ctx = Ctx {
            run_dir: Path::new("/nonexistent"),
            gate: &strict,
            suite: "s",
            suspects: HashMap::new(),
            raw_left: 0,
        };
        let tc = judged(
            &ctx,
            "t",
            "r0-leaf1",
            Verdict::Warn,
            Duration::ZERO,
            "m",
            || "text".into(),
        );
        assert!(tc.is_failure());
    }
}
