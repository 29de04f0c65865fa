use std::path::Path;

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
    assert!(html.contains("<p>1 of 2 hosts ready</p>"), "{html}");
    assert!(
        html.contains("<td>gpu002</td><td>unreachable: gpu002: ssh"),
        "{html}"
    );
    assert!(!html.contains("<td>gpu001</td>"), "{html}");
}

#[test]
fn results_are_listed_worst_first() {
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
fn a_long_test_keeps_every_failure_and_the_worst_passes_and_counts_the_rest() {
    let mut records: Vec<Record> = (0..PASS_ROWS + 2)
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
    let table = &html[html
        .find("id=\"results-table\"")
        .expect("the results table")..];
    assert!(
        table.contains("bw: 2 more results not listed here"),
        "{}",
        &table[table.len() - 400..]
    );
    let slow = table
        .find("<td>slow</td>")
        .expect("the failing pair is listed");
    assert!(
        slow < table
            .find("<td>pair0</td>")
            .expect("the slowest pass is listed")
    );
    assert!(!table.contains(&format!("<td>pair{}</td>", PASS_ROWS + 1)));
}

#[test]
fn json_in_a_script_element_cannot_close_it_or_start_markup() {
    let v = serde_json::json!({"name": "</script><img src=x onerror=alert(1)>&\u{2028}\u{2029}"});
    let s = json_text(&v);
    for bad in ["<", ">", "&", "\u{2028}", "\u{2029}"] {
        assert!(!s.contains(bad), "{s}");
    }
    let back: serde_json::Value = serde_json::from_str(&s).expect("still JSON");
    assert_eq!(back, v);
}

#[test]
fn the_policy_allows_exactly_the_inline_script_and_style() {
    let html = render(&[], Path::new("/nonexistent"));
    assert!(
        html.contains(&format!("script-src {}", csp_hash(SCRIPT))),
        "{html}"
    );
    assert!(html.contains(&format!("style-src {}", csp_hash(CSS))));
    assert!(html.contains("default-src 'none'"));
    assert!(html.contains("img-src data:"));
    // One inline script, byte for byte the hashed text.
    assert_eq!(html.matches("<script>").count(), 1);
    assert!(html.contains(&format!("<script>{SCRIPT}</script>")));
    assert!(!html.contains("http://") && !html.contains("https://"));
}

#[test]
fn base64_matches_the_standard_alphabet_and_padding() {
    assert_eq!(base64(b""), "");
    assert_eq!(base64(b"f"), "Zg==");
    assert_eq!(base64(b"fo"), "Zm8=");
    assert_eq!(base64(b"foo"), "Zm9v");
    assert_eq!(base64(b"foobar"), "Zm9vYmFy");
}

#[test]
fn hostile_strings_in_every_field_reach_the_page_escaped() {
    let evil = "<script>window.__canary=1</script><img src=x onerror=\"window.__canary=1\">";
    let mut v = verdict(&format!("{evil}<->{evil}"), Verdict::Fail, 10.0);
    v.test = evil.into();
    v.message = evil.into();
    v.unit = Some(evil.into());
    v.evidence = vec![evil.into()];
    let f = Finding {
        test: evil.into(),
        check: evil.into(),
        component: evil.into(),
        host: evil.into(),
        outcome: Outcome::Deviation,
        observed: Some(evil.into()),
        expected: Some(evil.into()),
        message: evil.into(),
        sources: vec![evil.into()],
        needs_root: false,
        round: None,
        evidence: Vec::new(),
    };
    let html = render(
        &[Record::Verdict(v), Record::Finding(f)],
        Path::new("/nonexistent"),
    );
    assert!(!html.contains("<img"), "an image element got through");
    assert_eq!(
        html.matches("<script").count(),
        1,
        "only rocegate's own script"
    );
    assert!(html.contains("&lt;script&gt;window.__canary=1&lt;/script&gt;"));
}

use super::super::events::{Finding, Outcome};
