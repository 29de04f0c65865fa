//! junit.xml as CI reads it: validated against the Ant JUnit schema
//! (`tests/fixtures/junit/JUnit.xsd`, windyroad's, see SOURCES.md) with
//! lxml, and read back with junitparser, for the healthy emulated pod and
//! the one with planted defects. The counts must be summary.json's, every
//! failure must say what was measured against what and where the evidence
//! is, testcase names must be unique and the same from one seed to
//! another, the roll-up of a large test must still validate, and
//! `gate.fail_on: [warn]` must fail the gate on a pod that only warns.
//!
//! Without a Python 3 that has lxml and junitparser the tests say what is
//! missing and skip.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command as StdCommand;

use assert_cmd::Command;
use serde_json::Value;

const XSD: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/junit/JUnit.xsd"
);

/// Validates `argv[2]` against the schema `argv[1]`, then reads it with
/// junitparser; prints one JSON document. A testsuite's `system-out` is
/// read with lxml (junitparser reads it only on testcases).
const SCRIPT: &str = r#"
import json, sys
from lxml import etree
from junitparser import JUnitXml, Failure, Error, Skipped

schema = etree.XMLSchema(etree.parse(sys.argv[1]))
doc = etree.parse(sys.argv[2])
errors = []
if not schema.validate(doc):
    errors = ["line %d: %s" % (e.line, e.message) for e in list(schema.error_log)[:20]]
out = {n.get("name"): n.findtext("system-out") or "" for n in doc.getroot().iter("testsuite")}

suites = []
for ts in JUnitXml.fromfile(sys.argv[2]):
    cases = []
    for tc in ts:
        r = tc.result[0] if tc.result else None
        kind = "pass"
        if isinstance(r, Failure):
            kind = "failure"
        elif isinstance(r, Error):
            kind = "error"
        elif isinstance(r, Skipped):
            kind = "skipped"
        cases.append({
            "classname": tc.classname, "name": tc.name, "result": kind,
            "type": getattr(r, "type", None) if r is not None else None,
            "message": (r.message or "") if r is not None else "",
            "text": (r.text or "") if r is not None else "",
        })
    suites.append({
        "name": ts.name, "tests": ts.tests, "failures": ts.failures,
        "errors": ts.errors, "timestamp": ts.timestamp,
        "properties": {p.name: p.value for p in ts.properties()},
        "system_out": out.get(ts.name, ""), "cases": cases,
    })
print(json.dumps({"errors": errors, "suites": suites}))
"#;

/// A Python 3 with lxml and junitparser, or why there is none. `python3`
/// on PATH comes first; Debian's own is tried next because a pyenv or
/// virtualenv `python3` ahead of it does not see Debian's packages.
fn python() -> Result<&'static str, String> {
    let mut why = Vec::new();
    for py in ["python3", "/usr/bin/python3"] {
        match StdCommand::new(py)
            .args(["-c", "import lxml.etree, junitparser"])
            .output()
        {
            Ok(o) if o.status.success() => return Ok(py),
            Ok(_) => why.push(format!("{py} has no lxml or no junitparser")),
            Err(e) => why.push(format!("{py} is not installed ({e})")),
        }
    }
    Err(format!(
        "{}: apt-get install python3-lxml python3-junitparser",
        why.join("; ")
    ))
}

fn rocegate() -> Command {
    let mut c = Command::cargo_bin("rocegate").expect("binary is built");
    c.current_dir(env!("CARGO_MANIFEST_DIR"));
    c
}

/// Runs `rocegate run` into `dir`; returns its exit code.
fn run(dir: &Path, args: &[&str]) -> i32 {
    let out = rocegate()
        .args(["run", "--progress", "none", "--out"])
        .arg(dir)
        .args(args)
        .output()
        .expect("rocegate runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(
        dir.join("junit.xml").is_file(),
        "no junit.xml: {}\n{stderr}",
        String::from_utf8_lossy(&out.stdout)
    );
    out.status.code().unwrap_or(-1)
}

fn read_json(p: PathBuf) -> Value {
    let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// Whether a verdict is a passing counter-ledger finding, which JUnit
/// lists in its testsuite's system-out instead of as a testcase.
fn observed(v: &Value) -> bool {
    v["kind"] == "counters" && v["verdict"] == "pass" && v["component"] != "counter ledger"
}

/// A verdict's testcase name: its component, or `fault` for a fault's.
fn case_name(v: &Value) -> String {
    if v["kind"] == "fault" {
        "fault".to_string()
    } else {
        str_of(v, "component").to_string()
    }
}

/// The verdict records of a run, by `(test, testcase name)`.
fn verdicts(dir: &Path) -> BTreeMap<(String, String), Value> {
    let text = std::fs::read_to_string(dir.join("results.jsonl")).expect("results.jsonl");
    text.lines()
        .map(|l| serde_json::from_str::<Value>(l).expect("a JSON record"))
        .filter(|v| v["event"] == "verdict")
        .map(|v| {
            let key = (str_of(&v, "test").to_string(), case_name(&v));
            (key, v)
        })
        .collect()
}

/// `file` validated and read back; panics on a schema error.
fn read_back(py: &str, file: &Path) -> Vec<Value> {
    let out = StdCommand::new(py)
        .args(["-c", SCRIPT, XSD])
        .arg(file)
        .output()
        .expect("python runs");
    assert!(
        out.status.success(),
        "{}: junitparser cannot read it: {}",
        file.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).expect("the script prints JSON");
    let errors = doc["errors"].as_array().cloned().unwrap_or_default();
    assert!(
        errors.is_empty(),
        "{} does not validate against the Ant JUnit schema:\n{}",
        file.display(),
        errors
            .iter()
            .map(|e| e.as_str().unwrap_or_default())
            .collect::<Vec<_>>()
            .join("\n")
    );
    doc["suites"].as_array().cloned().unwrap_or_default()
}

fn cases(suites: &[Value]) -> impl Iterator<Item = &Value> {
    suites
        .iter()
        .flat_map(|s| s["cases"].as_array().into_iter().flatten())
}

fn str_of<'a>(v: &'a Value, key: &str) -> &'a str {
    v[key].as_str().unwrap_or_default()
}

/// `(classname, name)` of every testcase; panics on a duplicate.
fn names(suites: &[Value]) -> BTreeSet<(String, String)> {
    let mut seen = BTreeSet::new();
    for c in cases(suites) {
        let key = (
            str_of(c, "classname").to_string(),
            str_of(c, "name").to_string(),
        );
        assert!(seen.insert(key.clone()), "two testcases named {key:?}");
    }
    seen
}

/// The number on the line `key: NUMBER [unit]` of `text`.
fn line_value(text: &str, key: &str) -> Option<f64> {
    text.lines()
        .find_map(|l| l.strip_prefix(&format!("{key}: ")))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
}

/// Equal but for the last digits (serde_json's float parsing is not
/// always correctly rounded).
fn close(got: Option<f64>, want: f64) -> bool {
    got.is_some_and(|g| (g - want).abs() <= 1e-9 * want.abs().max(1.0))
}

/// What every run's JUnit must satisfy against its summary and its records.
fn check_run(py: &str, dir: &Path, fail_on_warn: bool) -> Vec<Value> {
    let suites = read_back(py, &dir.join("junit.xml"));
    let summary = read_json(dir.join("summary.json"));
    let records = verdicts(dir);
    let suite = str_of(&summary, "suite").to_string();
    let counts = &summary["counts"];
    let count = |k: &str| counts[k].as_u64().unwrap_or(0) as usize;
    names(&suites);

    let (mut total, mut failures, mut errors) = (0, 0, 0);
    for s in &suites {
        let list = s["cases"].as_array().unwrap();
        let props = &s["properties"];
        for p in ["fabric", "suite", "seed", "version", "transport"] {
            assert!(
                props.get(format!("rocegate.{p}")).is_some(),
                "{}: no property rocegate.{p}: {props}",
                s["name"]
            );
        }
        let of = |kind: &str| list.iter().filter(|c| c["result"] == kind).count();
        assert_eq!(
            s["tests"].as_u64(),
            Some(list.len() as u64),
            "{}",
            s["name"]
        );
        assert_eq!(
            s["failures"].as_u64(),
            Some(of("failure") as u64),
            "{}",
            s["name"]
        );
        assert_eq!(
            s["errors"].as_u64(),
            Some(of("error") as u64),
            "{}",
            s["name"]
        );
        if s["name"] == format!("{suite}.suspects") {
            continue;
        }
        total += list.len();
        failures += of("failure");
        errors += of("error");
    }
    // No roll-up at 16 nodes: one testcase per result but the observed
    // counter findings, failing as the gate fails.
    let warn_fails = if fail_on_warn { count("warn") } else { 0 };
    let seen = records.values().filter(|v| observed(v)).count();
    assert_eq!(
        total + seen,
        ["pass", "warn", "fail", "error", "skipped"]
            .iter()
            .map(|k| count(k))
            .sum::<usize>(),
        "testcases and {seen} observed findings against summary.json {counts}"
    );
    assert_eq!(failures, count("fail") + warn_fails, "{counts}");
    assert_eq!(errors, count("error"), "{counts}");

    // Each failure and error says what, against what, which suspect, and
    // where the raw output is, in the text CI shows.
    // The first (highest ranked) suspect that explains a result is named.
    let mut suspects: BTreeMap<(String, String), String> = BTreeMap::new();
    for sp in summary["suspects"].as_array().into_iter().flatten() {
        let who = format!("{} {}", str_of(sp, "kind"), str_of(sp, "component"));
        for r in sp["results"].as_array().into_iter().flatten() {
            let key = (
                str_of(r, "test").to_string(),
                str_of(r, "component").to_string(),
            );
            suspects.entry(key).or_insert_with(|| who.clone());
        }
    }
    for c in cases(&suites).filter(|c| c["result"] == "failure" || c["result"] == "error") {
        let text = str_of(c, "text");
        let classname = str_of(c, "classname");
        if classname == format!("{suite}.suspects") {
            assert!(text.contains("results:"), "{c:#}");
            continue;
        }
        let test = classname
            .strip_prefix(&format!("{suite}."))
            .unwrap_or(classname);
        let key = (test.to_string(), str_of(c, "name").to_string());
        let v = records
            .get(&key)
            .unwrap_or_else(|| panic!("testcase {key:?} is no verdict of results.jsonl"));
        assert!(!str_of(c, "message").is_empty(), "{c:#}");
        assert!(text.contains(str_of(v, "message")), "{c:#}");
        if let Some(x) = v["value"].as_f64() {
            assert!(close(line_value(text, "value"), x), "value {x}: {c:#}");
        }
        for k in ["min", "max", "warn_min", "warn_max"] {
            if let Some(x) = v["threshold"][k].as_f64() {
                assert!(close(line_value(text, k), x), "{k} {x}: {c:#}");
            }
        }
        for e in v["evidence"].as_array().into_iter().flatten().take(3) {
            let e = e.as_str().unwrap_or_default();
            assert!(text.contains(&format!("evidence: {e}")), "{c:#}");
            assert!(
                text.contains(&format!("--- {e}")),
                "raw output of {e}: {c:#}"
            );
        }
        let component = (test.to_string(), str_of(v, "component").to_string());
        if let Some(who) = suspects.get(&component) {
            assert!(text.contains(&format!("suspect: {who}")), "{c:#}");
        }
    }
    // A warning that does not fail the gate is a passing testcase, and an
    // observed finding none: their messages are in the testsuite's
    // system-out.
    for ((test, _), v) in records.iter() {
        let what = if observed(v) {
            "observed"
        } else if v["verdict"] == "warn" && !fail_on_warn {
            "warn"
        } else {
            continue;
        };
        let s = suites
            .iter()
            .find(|s| s["name"] == format!("{suite}.{test}"))
            .unwrap_or_else(|| panic!("no testsuite for {test}"));
        let line = format!(
            "{what} {}: {}",
            str_of(v, "component"),
            str_of(v, "message")
        );
        assert!(
            str_of(s, "system_out").contains(&line),
            "{line:?} not in system-out of {}",
            s["name"]
        );
    }
    suites
}

#[test]
fn healthy_and_defects_validate_and_read_back() {
    let py = match python() {
        Ok(py) => py,
        Err(why) => {
            eprintln!("skipped: {why}");
            return;
        }
    };
    let tmp = tempfile::tempdir().unwrap();

    let healthy = tmp.path().join("healthy");
    assert_eq!(run(&healthy, &["--seed", "1"]), 0);
    let suites = check_run(py, &healthy, false);
    let summary = read_json(healthy.join("summary.json"));
    assert!(
        summary["counts"]["warn"].as_u64().unwrap_or(0) > 0,
        "the healthy pod has warnings (the checks it cannot answer)"
    );

    // Another seed: other measurements, the same testcases.
    let again = tmp.path().join("healthy-seed2");
    assert_eq!(run(&again, &["--seed", "2"]), 0);
    let second = check_run(py, &again, false);
    let (one, two) = (names(&suites), names(&second));
    let only: Vec<_> = one.symmetric_difference(&two).collect();
    assert!(
        only.is_empty(),
        "testcases in one seed's run only: {only:?}"
    );

    let defects = tmp.path().join("defects");
    let code = run(
        &defects,
        &["--seed", "1", "-i", "inventory/emulated-defects.yaml"],
    );
    assert_eq!(code, 1);
    let suites = check_run(py, &defects, false);
    let summary = read_json(defects.join("summary.json"));
    let suspects = summary["suspects"].as_array().map_or(0, |a| a.len());
    assert!(suspects > 0);
    let listed = suites
        .iter()
        .find(|s| s["name"] == "acceptance.suspects")
        .expect("a suspects testsuite");
    assert_eq!(listed["cases"].as_array().map(|a| a.len()), Some(suspects));

    // The same records with a small roll-up limit: a large test keeps each
    // non-pass result (up to the limit) and rolls its passes into one
    // testcase; the file still validates.
    let records = rocegate::report::jsonl::read(&defects.join("results.jsonl")).unwrap();
    const LIMIT: usize = 50;
    let xml = rocegate::report::junit::render(&records, &defects, LIMIT).unwrap();
    let rolled = tmp.path().join("rolled.xml");
    std::fs::write(&rolled, xml).unwrap();
    let suites = read_back(py, &rolled);
    names(&suites);
    let by_test = verdicts(&defects);
    let mut tested = 0;
    for s in &suites {
        let Some(test) = str_of(s, "name").strip_prefix("acceptance.") else {
            continue;
        };
        if test == "suspects" {
            continue;
        }
        let results: Vec<&Value> = by_test
            .iter()
            .filter(|((t, _), v)| t == test && !observed(v))
            .map(|(_, v)| v)
            .collect();
        let list = s["cases"].as_array().unwrap();
        if results.len() <= LIMIT {
            assert_eq!(list.len(), results.len(), "{test}");
            continue;
        }
        tested += 1;
        let of = |v: &str| results.iter().filter(|r| r["verdict"] == v).count();
        let fails = of("fail");
        let rolled = list
            .iter()
            .find(|c| c["name"] == "passing results (rolled up)")
            .unwrap_or_else(|| panic!("{test}: no rolled-up passes"));
        assert_eq!(rolled["result"], "pass");
        assert!(
            str_of(s, "system_out").contains(&format!("the {} passing ones", of("pass"))),
            "{test}: {}",
            str_of(s, "system_out")
        );
        let failing = list.iter().filter(|c| c["result"] == "failure").count();
        let non_pass = results.len() - of("pass");
        if non_pass <= LIMIT {
            assert_eq!(failing, fails, "{test}");
            assert_eq!(list.len(), non_pass + 1, "{test}");
        } else {
            assert!(
                list.iter()
                    .any(|c| str_of(c, "name").ends_with("results (rolled up)")
                        && c["result"] != "pass"),
                "{test}"
            );
            assert!(list.len() <= LIMIT + 1 + 4, "{test}: {}", list.len());
        }
    }
    assert!(tested >= 2, "the roll-up was exercised on {tested} tests");
}

#[test]
fn fail_on_warn_fails_the_gate_on_a_pod_that_only_warns() {
    let py = match python() {
        Ok(py) => py,
        Err(why) => {
            eprintln!("skipped: {why}");
            return;
        }
    };
    let tmp = tempfile::tempdir().unwrap();
    let suite = tmp.path().join("strict.yaml");
    // The audit alone: on the healthy emulated pod it fails nothing and
    // warns on the checks no source answers (the switches' PFC watchdog).
    std::fs::write(
        &suite,
        "suite: {name: strict}\ngate: {fail_on: [fail, error, warn]}\ntests:\n  - name: audit\n    audit: {}\n",
    )
    .unwrap();
    let dir = tmp.path().join("run");
    let code = run(&dir, &["--seed", "1", "-s", suite.to_str().unwrap()]);
    let summary = read_json(dir.join("summary.json"));
    let counts = &summary["counts"];
    assert_eq!(counts["fail"], 0, "{counts}");
    assert!(counts["warn"].as_u64().unwrap_or(0) > 0, "{counts}");
    assert_eq!(code, 1, "a warning fails the gate with warn in fail_on");
    assert_eq!(summary["gate_passed"], false);
    let suites = check_run(py, &dir, true);
    let warned: Vec<&Value> = cases(&suites)
        .filter(|c| c["result"] == "failure")
        .collect();
    assert_eq!(warned.len() as u64, counts["warn"].as_u64().unwrap());
    assert!(warned.iter().all(|c| c["type"] == "warn"), "{warned:#?}");
}
