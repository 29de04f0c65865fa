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

/// A run_started record of `nodes` nodes, one NIC each on rail 0, eight
/// nodes to a leaf.
fn started(nodes: usize) -> Record {
    let nics: Vec<serde_json::Value> = (0..nodes)
        .map(|i| {
            serde_json::json!({
                "name": format!("n{i:04}:mlx5_0"), "node": format!("n{i:04}"), "rail": 0,
                "speed_gbps": 400, "port": format!("leaf{:02}:swp{}", i / 8, i % 8 + 1)
            })
        })
        .collect();
    Record::RunStarted(
        serde_json::from_value(serde_json::json!({
            "rocegate_version": "0", "suite": "s", "fabric": "f", "environment": "lab",
            "transport": "emulated", "seed": 1, "started_at": "2026-11-27T00:00:00Z",
            "inventory": {"path": "i.yaml", "sha256": "0"}, "suite_file": {"path": "s.yaml", "sha256": "0"},
            "gate_fail_on": ["fail", "error"], "tests": [], "estimate_s": 1.0, "coverage": {},
            "topology": {"nics": nics, "switches": [], "fabric_links": []}
        }))
        .expect("a run_started record"),
    )
}

fn pair(a: usize, b: usize, v: Verdict, value: f64) -> Record {
    Record::Verdict(verdict(
        &format!("n{a:04}:mlx5_0<->n{b:04}:mlx5_0"),
        v,
        value,
    ))
}

#[test]
fn a_small_pod_gets_a_heatmap_table_whose_cells_link_to_their_rows() {
    let recs = vec![
        started(16),
        pair(0, 1, Verdict::Pass, 390.0),
        pair(2, 3, Verdict::Fail, 100.0),
    ];
    let html = render(&recs, Path::new("/nonexistent"));
    let heat = &html[html.find("id=\"heatmaps\"").expect("heatmaps")
        ..html.find("id=\"distribution\"").expect("distribution")];
    assert!(!heat.contains("<canvas"), "16 nodes need no canvas");
    // The failing pair's cell, both ways round, leads to its row.
    let fail_row = &html[..html
        .find("<td>n0002:mlx5_0&lt;-&gt;n0003:mlx5_0</td>")
        .expect("the failing row")];
    let id = &fail_row[fail_row.rfind("<tr id=\"").expect("its row") + 8..];
    let id = &id[..id.find('"').expect("id")];
    assert_eq!(
        heat.matches(&format!("<td class=\"h7\"><a href=\"#{id}\""))
            .count(),
        2,
        "{heat}"
    );
    assert!(heat.contains("class=\"h0\""));
}

#[test]
fn a_large_pod_gets_a_leaf_table_and_a_canvas_fed_by_json() {
    let mut recs = vec![started(200)];
    for i in (0..200).step_by(2) {
        recs.push(pair(
            i,
            i + 1,
            if i == 42 {
                Verdict::Fail
            } else {
                Verdict::Pass
            },
            390.0,
        ));
    }
    let html = render(&recs, Path::new("/nonexistent"));
    assert!(html.contains("<canvas class=\"heat\" id=\"heat-0\""));
    assert!(html.contains("<script type=\"application/json\" id=\"heatdata-0\">"));
    // 25 leaves of eight nodes: a 25 x 25 leaf table, each pair within one leaf.
    assert!(html.contains("data-drill=\"heat-0\" data-a=\"5\" data-b=\"5\""));
    let data = &html[html.find("id=\"heatdata-0\">").expect("data") + 16..];
    let data: serde_json::Value =
        serde_json::from_str(&data[..data.find("</script>").expect("end")]).expect("JSON");
    assert_eq!(data["nodes"].as_array().map(Vec::len), Some(200));
    assert_eq!(data["cells"].as_array().map(Vec::len), Some(100));
    assert!(data["cells"]
        .as_array()
        .expect("cells")
        .iter()
        .any(|c| c[0] == 42 && c[2] == "h7"));
}

#[test]
fn a_fault_timeline_draws_the_fault_its_recovery_and_the_limit() {
    let mut v = verdict("link flap n0001:mlx5_0", Verdict::Pass, 2.5);
    v.test = "flap".into();
    v.kind = "fault".into();
    v.unit = Some("s".into());
    v.threshold = Resolved {
        max: Some(5.0),
        ..Default::default()
    };
    v.series = (0..60)
        .map(|t| {
            (
                80.0 + t as f64,
                if (90..93).contains(&(80 + t)) {
                    10.0
                } else {
                    300.0
                },
            )
        })
        .collect();
    let fault = Sample {
        test: "flap".into(),
        component: "link flap n0001:mlx5_0".into(),
        round: 0,
        rep: 0,
        step: 1,
        started_s: 90.0,
        ended_s: 92.0,
        value: None,
        failure: None,
        raw: Vec::new(),
        commands: Vec::new(),
        hosts: Vec::new(),
        details: serde_json::Value::Null,
        series: Vec::new(),
    };
    let html = render(
        &[Record::Sample(fault), Record::Verdict(v)],
        Path::new("/nonexistent"),
    );
    let f = &html[html.find("id=\"faults\"").expect("the fault timeline")..];
    assert!(
        f.contains("fault 90.0 s to 92.0 s on the run's clock · recovery 2.50 s · limit 5.0 s"),
        "{f}"
    );
    assert!(f.contains(">recovered 2.5 s</text>"));
    assert!(f.contains(">limit 5.0 s</text>"));
    assert!(f.contains("<rect class=\"fault\""));
}
