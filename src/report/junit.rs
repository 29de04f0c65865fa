//! junit.xml for Jenkins and GitLab: one testsuite per suite test, one
//! testcase per component (pair, incast receiver, collective) named by the
//! component, failure messages with the measured value and the threshold,
//! raw output in system-out. A pure function of the records and raw files.
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
//! Past `rollup_limit` components in one test (a full mesh of hundreds of
//! nodes), pair results are rolled up per NIC: one testcase per NIC with its
//! worst verdict and the partners that made it so.

use std::collections::BTreeMap;
use std::path::Path;

use junit_report::{
    Duration, OffsetDateTime, ReportBuilder, TestCase, TestCaseBuilder, TestSuiteBuilder,
};

use crate::config::suite::{Gate, VerdictName};
use crate::score::{fails_gate, Verdict};

use super::events::{Record, VerdictRecord};
use super::raw;
use super::sanitize::{cdata_safe, html_escape, xml_safe};

/// Raw output per testcase is capped so the file stays usable.
const SYSTEM_OUT_CAP: usize = 32 * 1024;
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

fn evidence_text(run_dir: &Path, v: &VerdictRecord) -> String {
    let mut out = format!("{}\n", v.message);
    if !v.samples.is_empty() {
        out += &format!("samples: {:?}\n", v.samples);
    }
    if v.verdict != Verdict::Pass {
        let mut budget = SYSTEM_OUT_CAP;
        for rel in v.evidence.iter().take(3) {
            out += &format!("--- {rel}\n");
            if let Some(text) = raw::read_capped(run_dir, rel, budget) {
                budget = budget.saturating_sub(text.len());
                out += &text;
            }
            if budget == 0 {
                break;
            }
        }
    } else if let Some(rel) = v.evidence.first() {
        out += &format!("evidence: {rel}\n");
    }
    cdata_safe(&out)
}

fn testcase(run_dir: &Path, gate: &Gate, suite: &str, v: &VerdictRecord) -> TestCase {
    let time = Duration::seconds_f64(v.duration_s.max(0.0));
    let name = xml_safe(&v.component);
    let msg = xml_safe(&format!("{}: {}", v.component, v.message));
    let (mut tc, bad) = match v.verdict {
        Verdict::Skipped => (TestCaseBuilder::skipped(&name), false),
        Verdict::Error => (TestCaseBuilder::error(&name, time, "error", &msg), true),
        verdict if fails_gate(gate, verdict) => (
            TestCaseBuilder::failure(&name, time, verdict.as_str(), &msg),
            true,
        ),
        _ => (TestCaseBuilder::success(&name, time), false),
    };
    tc.set_classname(&xml_safe(&format!("{suite}.{}", v.test)));
    if bad {
        // The element's text, which CI shows (GitLab shows no `message`).
        tc.set_trace(&cdata_safe(&details(v)));
    }
    tc.set_system_out(&evidence_text(run_dir, v));
    tc.build()
}

/// A failure's details as text: what was measured against what, and
/// where the evidence is.
fn details(v: &VerdictRecord) -> String {
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
    for e in v.evidence.iter().take(3) {
        out += &format!("evidence: {e}\n");
    }
    out
}

/// One verdict per NIC: the worst over all pairs it was in.
fn rollup(verdicts: &[&VerdictRecord]) -> Vec<VerdictRecord> {
    let mut by_nic: BTreeMap<String, Vec<&VerdictRecord>> = BTreeMap::new();
    for v in verdicts {
        match v.component.split_once("<->") {
            Some((a, b)) => {
                by_nic.entry(a.to_string()).or_default().push(v);
                by_nic.entry(b.to_string()).or_default().push(v);
            }
            None => by_nic.entry(v.component.clone()).or_default().push(v),
        }
    }
    by_nic
        .into_iter()
        .map(|(nic, vs)| {
            let worst = vs.iter().map(|v| v.verdict).max().unwrap_or(Verdict::Pass);
            let bad: Vec<&&VerdictRecord> = vs
                .iter()
                .filter(|v| v.verdict == worst && worst != Verdict::Pass)
                .collect();
            let message = if bad.is_empty() {
                format!("all {} pairs pass", vs.len())
            } else {
                let list: Vec<String> = bad
                    .iter()
                    .take(5)
                    .map(|v| format!("{} ({})", v.component, v.message))
                    .collect();
                format!(
                    "{} of {} pairs {}: {}{}",
                    bad.len(),
                    vs.len(),
                    worst.as_str(),
                    list.join("; "),
                    if bad.len() > 5 { "; …" } else { "" }
                )
            };
            VerdictRecord {
                test: vs[0].test.clone(),
                kind: vs[0].kind.clone(),
                component: nic,
                verdict: worst,
                metric: vs[0].metric.clone(),
                value: None,
                unit: vs[0].unit.clone(),
                threshold: vs[0].threshold.clone(),
                samples: Vec::new(),
                message,
                evidence: bad
                    .iter()
                    .take(3)
                    .flat_map(|v| v.evidence.iter().take(1).cloned())
                    .collect(),
                duration_s: vs.iter().map(|v| v.duration_s).sum(),
                series: Vec::new(),
            }
        })
        .collect()
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
    let mut report = ReportBuilder::new();
    let done = super::events::completeness(records);
    if !done.complete {
        let mut tc = TestCase::error(
            "run incomplete",
            Duration::ZERO,
            "incomplete",
            &xml_safe(&done.describe()),
        );
        tc.set_classname(&xml_safe(&format!("{suite}.run")));
        tc.set_system_out(&cdata_safe(&format!("{}\n", done.describe())));
        let mut ts = TestSuiteBuilder::new(&xml_safe(&format!("{suite}.run")));
        ts.set_timestamp(timestamp);
        ts.add_testcase(tc);
        report.add_testsuite(ts.build());
    }
    for test in order {
        let Some(vs) = groups.get(&test) else {
            continue;
        };
        let rolled;
        let list: Vec<&VerdictRecord> =
            if vs.len() > rollup_limit && vs.iter().any(|v| v.component.contains("<->")) {
                rolled = rollup(vs);
                rolled.iter().collect()
            } else {
                vs.clone()
            };
        let mut ts = TestSuiteBuilder::new(&xml_safe(&format!("{suite}.{test}")));
        ts.set_timestamp(timestamp);
        ts.add_testcases(list.iter().map(|v| testcase(run_dir, &gate, suite, v)));
        report.add_testsuite(ts.build());
    }
    // The suspects, one testcase each, named by component.
    let loc = crate::score::suspects::localise(records);
    if !loc.suspects.is_empty() {
        let mut ts = TestSuiteBuilder::new(&xml_safe(&format!("{suite}.suspects")));
        ts.set_timestamp(timestamp);
        for (i, sp) in loc.suspects.iter().enumerate() {
            let name = xml_safe(&format!("{} {}", sp.kind, sp.component));
            let msg = xml_safe(&format!(
                "suspect {} of {}: {} {} (score {:.2}, explains {} result(s))",
                i + 1,
                loc.suspects.len(),
                sp.kind,
                sp.component,
                sp.score,
                sp.results.len()
            ));
            let mut tc = TestCaseBuilder::failure(&name, Duration::ZERO, "suspect", &msg);
            tc.set_classname(&xml_safe(&format!("{suite}.suspects")));
            let mut text = sp.evidence.join("\n") + "\nresults:\n";
            for r in sp.results.iter().take(50) {
                text += &format!("  {} {}\n", r.test, r.component);
            }
            tc.set_trace(&cdata_safe(&text));
            ts.add_testcase(tc.build());
        }
        report.add_testsuite(ts.build());
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
