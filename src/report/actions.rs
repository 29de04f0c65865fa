//! Actions out: for a failed gate, what an operator does next, as
//! `actions.json` (a ticket-ready summary per suspect, and the commands)
//! and `actions.sh` (the same commands, commented, for Slurm or
//! Kubernetes). The script is for a person to read and run; only `run
//! --apply-drain` on the slurm transport applies the Slurm drains itself
//! (`app::drain`). A pure function of the event log, so `rocegate report`
//! writes the same files.
//!
//! Only node and NIC suspects are acted on (a switch, cable or uplink is
//! not a schedulable node; its ticket says so), only at a localisation
//! score of at least [`MIN_SCORE`], and never on `error` verdicts alone:
//! an error is rocegate's inability to judge, not a defect. A NIC's
//! action drains its node, naming the NIC.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde_json::json;

use super::events::{Outcome, Record};
use crate::exec::quote;
use crate::score::suspects::Suspect;
use crate::score::Verdict;

/// The confidence a suspect needs before its node is drained: a
/// localisation score (`score::suspects`: failures explained, discounted
/// by the share of the component's results that failed) of at least one
/// whole failing result with every result of it failing, twice the score
/// at which a suspect is named at all (`suspects::MIN_SCORE`, 0.5). A
/// suspect that a retest against healthy partners cleared is not a suspect.
pub const MIN_SCORE: f64 = 1.0;

/// Slurm keeps a node's reason in its accounting database's event table as
/// `reason tinytext not null` (SchedMD/slurm,
/// src/plugins/accounting_storage/mysql/accounting_storage_mysql.c,
/// `event_table_fields`); a MySQL TINYTEXT holds at most 255 bytes, so a
/// longer reason is cut or refused there. Reasons are kept within it.
pub const SLURM_REASON_MAX: usize = 255;

/// Kubernetes label (and taint) values: at most 63 characters.
const TAINT_VALUE_MAX: usize = 63;

/// The taint key the Kubernetes commands set.
pub const TAINT_KEY: &str = "rocegate/suspect";

/// What [`build`] made.
#[derive(Debug, Clone, PartialEq)]
pub struct Actions {
    pub json: serde_json::Value,
    pub sh: String,
}

/// Whether the run finished with its gate failed (not passed, not cut short).
pub fn gate_failed(records: &[Record]) -> bool {
    let done = super::events::completeness(records);
    super::events::run_finished(records)
        .is_some_and(|f| !f.gate_passed && f.exit_code == crate::exit::GATE_FAILED && done.complete)
}

/// One line of printable text: control characters (a newline would end a
/// shell comment early) become spaces.
fn one_line(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

/// `s` cut to at most `max` bytes at a character boundary, `...` marking a cut.
fn within(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    let mut end = max.saturating_sub(3);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}...", &s[..end])
}

/// A Kubernetes label value: `[A-Za-z0-9._-]`, at most 63, alphanumeric at
/// both ends.
fn label_value(s: &str) -> String {
    let v: String = s
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .take(TAINT_VALUE_MAX)
        .collect();
    v.trim_matches(|c: char| !c.is_ascii_alphanumeric())
        .to_string()
}

/// What to replace or check, from the kind and the checks in its evidence.
fn advice(s: &Suspect) -> String {
    let classes: BTreeSet<&str> = s
        .evidence
        .iter()
        .filter_map(|e| e.split([':', ' ']).next())
        .collect();
    let has = |p: &str| classes.iter().any(|c| c.starts_with(p));
    let mut out: Vec<&str> = Vec::new();
    if has("nic.firmware") {
        out.push("update the NIC firmware to the version the inventory expects");
    }
    if has("nic.link") || has("switch.link") || has("optics.") {
        out.push("check the link's cable, optic and port speed setting; reseat or replace the optic or cable");
    }
    if classes
        .iter()
        .any(|c| c.starts_with("nic.") && !matches!(*c, "nic.firmware" | "nic.link"))
    {
        out.push("set the NIC's RoCE QoS (PFC, ECN, trust, DSCP) to the inventory's profile");
    }
    if has("counters.") {
        out.push("inspect the physical link: its error counters rose under load");
    }
    if has("cabling.") {
        out.push("recable to match the inventory");
    }
    if s.from_traffic {
        out.push(match s.kind.as_str() {
            "node" => "check the host side of every NIC: PCIe link width and speed, NUMA placement, CPU frequency; run the NIC vendor's diagnostics",
            "nic" => "check the NIC, its PCIe slot and its transceiver; reseat or replace the NIC",
            "cable" => "clean or replace the cable and its optics, end to end",
            "uplink" => "check the leaf-spine cables, their optics and both ports' state",
            "rail" => "check what the rail's NICs share: its leaves and their configuration",
            _ => "check the switch's ports and configuration against the inventory's profile",
        });
    }
    if out.is_empty() {
        out.push("read the evidence in the report");
    }
    out.join("; ")
}

/// The node a node or NIC suspect sits on.
fn node_of(records: &[Record], s: &Suspect) -> Option<String> {
    match s.kind.as_str() {
        "node" => Some(s.component.clone()),
        "nic" => Some(
            super::events::run_started(records)
                .and_then(|r| r.topology.nics.iter().find(|n| n.name == s.component))
                .map(|n| n.node.clone())
                .unwrap_or_else(|| {
                    s.component
                        .split_once(':')
                        .map_or(s.component.clone(), |(n, _)| n.to_string())
                }),
        ),
        _ => None,
    }
}

/// The actions of a run whose gate failed; `None` otherwise. `report` is
/// the report's path as the tickets should name it.
pub fn build(records: &[Record], report: &str) -> Option<Actions> {
    if !gate_failed(records) {
        return None;
    }
    let started = super::events::run_started(records);
    let fabric = started.map_or("unknown", |s| s.fabric.as_str());
    let suite = started.map_or("unknown", |s| s.suite.as_str());
    let run_id = super::metrics::run_id(records);
    // Results rocegate could not judge: never a reason to act.
    let mut errors: BTreeSet<(&str, &str)> = BTreeSet::new();
    for r in records {
        match r {
            Record::Verdict(v) if v.verdict == Verdict::Error => {
                errors.insert((&v.test, &v.component));
            }
            Record::Finding(f) if matches!(f.outcome, Outcome::Error | Outcome::NotAvailable) => {
                errors.insert((&f.test, &f.component));
            }
            _ => {}
        }
    }
    let loc = crate::score::suspects::localise(records);
    let mut tickets = Vec::new();
    // Node -> its suspects to drain it for, in rank order.
    let mut drains: BTreeMap<String, Vec<&Suspect>> = BTreeMap::new();
    for s in &loc.suspects {
        let node = node_of(records, s);
        let judged = s
            .results
            .iter()
            .any(|r| !errors.contains(&(r.test.as_str(), r.component.as_str())));
        let why_not = if node.is_none() {
            Some(format!(
                "{} {} is not a schedulable node: nothing to drain; fix it on the fabric side",
                if s.kind.starts_with(['a', 'e', 'i', 'o', 'u']) {
                    "an"
                } else {
                    "a"
                },
                s.kind
            ))
        } else if s.score < MIN_SCORE {
            Some(format!(
                "score {:.2} is below the drain threshold {MIN_SCORE:.1}",
                s.score
            ))
        } else if !judged {
            Some("only results rocegate could not judge (error) name it".to_string())
        } else {
            None
        };
        if let (Some(n), None) = (&node, &why_not) {
            drains.entry(n.clone()).or_default().push(s);
        }
        tickets.push(json!({
            "title": format!("rocegate {run_id}: {} on fabric {fabric} failed suite {suite}", s.label()),
            "component": s.component,
            "kind": s.kind,
            "score": (s.score * 100.0).round() / 100.0,
            "node": node,
            "drain": why_not.is_none(),
            "not_drained_because": why_not,
            "check": advice(s),
            "evidence": s.evidence.iter().take(12).collect::<Vec<_>>(),
            "results_explained": s.results.len(),
            "run_id": run_id,
            "report": report,
        }));
    }
    let mut actions = Vec::new();
    for (node, ss) in &drains {
        let named: Vec<String> = ss
            .iter()
            .map(|s| format!("{} (score {:.1})", s.label(), s.score))
            .collect();
        let reason = within(
            &one_line(&format!(
                "rocegate {run_id}: suspect {}; see {report}",
                named.join(", ")
            )),
            SLURM_REASON_MAX,
        );
        let taint = {
            let parts: Vec<String> = ss
                .iter()
                .map(|s| match s.kind.as_str() {
                    "nic" => s
                        .component
                        .split_once(':')
                        .map_or(s.component.clone(), |(_, d)| d.to_string()),
                    _ => s.component.clone(),
                })
                .collect();
            let v = label_value(&parts.join("."));
            if v.is_empty() {
                "node".to_string()
            } else {
                v
            }
        };
        let slurm = format!(
            "scontrol update nodename={} state=drain reason={}",
            quote(node),
            quote(&reason)
        );
        let kubernetes = vec![
            format!("kubectl cordon {}", quote(node)),
            format!(
                "kubectl taint nodes {} {}={taint}:NoSchedule --overwrite",
                quote(node),
                TAINT_KEY
            ),
        ];
        actions.push(json!({
            "node": node,
            "suspects": ss.iter().map(|s| s.component.clone()).collect::<Vec<_>>(),
            "reason": reason,
            "slurm": [slurm],
            "kubernetes": kubernetes,
        }));
    }
    let json = json!({
        "run_id": run_id,
        "fabric": fabric,
        "suite": suite,
        "report": report,
        "min_score": MIN_SCORE,
        "note": "rocegate never runs these; error verdicts are never acted on",
        "drain": actions,
        "tickets": tickets,
    });
    let sh = script(&json);
    Some(Actions { json, sh })
}

/// actions.sh: `sh actions.sh slurm` or `sh actions.sh kubernetes`; without
/// an argument it only says so, so running it by accident changes nothing.
fn script(j: &serde_json::Value) -> String {
    let text = |k: &str| one_line(j[k].as_str().unwrap_or(""));
    let mut s = String::from("#!/bin/sh\n");
    s += &format!(
        "# rocegate actions for run {} (fabric {}, suite {}): the gate failed.\n",
        text("run_id"),
        text("fabric"),
        text("suite")
    );
    s += &format!("# Report: {}\n", text("report"));
    s += "# Written by rocegate and never run by it: read it, then run it on a host\n";
    s += "# allowed to drain (Slurm operator) or cordon (Kubernetes), as\n";
    s += "#   sh actions.sh slurm    or    sh actions.sh kubernetes\n";
    s += &format!(
        "# Only node and NIC suspects with a localisation score of at least {MIN_SCORE:.1};\n"
    );
    s += "# error verdicts (rocegate could not judge) are never acted on.\n";
    s += "# actions.json holds a ticket-ready summary of every suspect.\n";
    s += "set -eu\n\n";
    let drain = j["drain"].as_array().cloned().unwrap_or_default();
    let lines = |key: &str| -> String {
        let mut out = String::new();
        if drain.is_empty() {
            out += "    : # no node or NIC suspect reached the threshold: nothing to do\n";
        }
        for d in &drain {
            let names: Vec<String> = d["suspects"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|x| x.as_str().map(one_line))
                .collect();
            out += &format!(
                "    # {}: {}\n",
                one_line(d["node"].as_str().unwrap_or("")),
                names.join(", ")
            );
            for c in d[key].as_array().into_iter().flatten() {
                out += &format!("    {}\n", c.as_str().unwrap_or(":"));
            }
        }
        out
    };
    s += "case \"${1:-}\" in\nslurm)\n";
    s += &lines("slurm");
    s += "    ;;\nkubernetes)\n";
    s += &lines("kubernetes");
    s += "    ;;\n*)\n";
    s += "    echo \"usage: sh $0 slurm|kubernetes (read it first: it drains or cordons nodes)\" >&2\n";
    s += "    exit 2\n    ;;\nesac\n";
    s
}

/// Writes actions.json and actions.sh into the run directory when the gate
/// failed; otherwise removes ones an earlier judgement left (a re-judged
/// run that now passes must not keep its old drains). The files written.
pub fn write(dir: &Path, records: &[Record]) -> Result<Vec<String>, String> {
    let report = std::fs::canonicalize(dir)
        .unwrap_or_else(|_| dir.to_path_buf())
        .join("report.html")
        .display()
        .to_string();
    let (json_path, sh_path) = (dir.join("actions.json"), dir.join("actions.sh"));
    let Some(a) = build(records, &report) else {
        for p in [&json_path, &sh_path] {
            match std::fs::remove_file(p) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(format!("{}: cannot remove: {e}", p.display())),
            }
        }
        return Ok(Vec::new());
    };
    let w = |p: &Path, bytes: &[u8]| {
        crate::paths::write_atomic(p, bytes)
            .map_err(|e| format!("{}: cannot write: {e}", p.display()))
    };
    w(
        &json_path,
        (serde_json::to_string_pretty(&a.json).unwrap_or_default() + "\n").as_bytes(),
    )?;
    w(&sh_path, a.sh.as_bytes())?;
    Ok(vec![
        json_path.display().to_string(),
        sh_path.display().to_string(),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(l: &str) -> Record {
        serde_json::from_str(l).unwrap()
    }

    const STARTED: &str = r#"{"event":"run_started","rocegate_version":"0.1.0","suite":"acceptance","fabric":"pod","environment":"lab","transport":"emulated","seed":1,"started_at":"2026-11-27T11:39:49Z","inventory":{"path":"i","sha256":"x"},"suite_file":{"path":"s","sha256":"y"},"gate_fail_on":["fail","error"],"tests":[],"estimate_s":1.0,"coverage":null,"topology":{"nics":[{"name":"n1:mlx5_0","node":"n1","rail":0,"speed_gbps":400,"port":"leaf:swp1"},{"name":"n2:mlx5_0","node":"n2","rail":0,"speed_gbps":400,"port":"leaf:swp2"},{"name":"n3:mlx5_0","node":"n3","rail":0,"speed_gbps":400,"port":"leaf:swp3"}],"switches":[{"name":"leaf","role":"leaf"}],"fabric_links":[]}}"#;
    const FAILED: &str = r#"{"event":"run_finished","ended_at":"2026-11-27T11:40:00Z","interrupted":false,"counts":{"pass":0,"warn":0,"fail":1,"error":1,"skipped":0},"gate_passed":false,"exit_code":1}"#;

    fn finding(component: &str, outcome: &str) -> Record {
        rec(&format!(
            r#"{{"event":"finding","test":"audit","check":"nic.firmware","component":"{component}","host":"n","outcome":"{outcome}","message":"firmware 1, inventory says 2"}}"#
        ))
    }

    #[test]
    fn drains_node_and_nic_suspects_never_errors() {
        let records = vec![
            rec(STARTED),
            finding("n1:mlx5_0", "deviation"),
            finding("n2:mlx5_0", "error"),
            rec(
                r#"{"event":"verdict","test":"rail-bw","kind":"perftest","component":"n2:mlx5_0<->n3:mlx5_0","verdict":"error","message":"unreachable","threshold":{},"samples":[],"evidence":[],"duration_s":1.0}"#,
            ),
            rec(FAILED),
        ];
        let a = build(&records, "/r/report.html").unwrap();
        let drain = a.json["drain"].as_array().unwrap();
        assert_eq!(drain.len(), 1, "{}", a.json);
        assert_eq!(drain[0]["node"], "n1");
        assert_eq!(drain[0]["suspects"], json!(["n1:mlx5_0"]));
        let slurm = drain[0]["slurm"][0].as_str().unwrap();
        assert_eq!(
            slurm,
            "scontrol update nodename=n1 state=drain reason='rocegate acceptance-20261127T113949Z: suspect nic n1:mlx5_0 (score 1.0); see /r/report.html'"
        );
        assert_eq!(
            shlex::split(slurm).unwrap().last().unwrap(),
            "reason=rocegate acceptance-20261127T113949Z: suspect nic n1:mlx5_0 (score 1.0); see /r/report.html"
        );
        assert_eq!(
            drain[0]["kubernetes"],
            json!([
                "kubectl cordon n1",
                "kubectl taint nodes n1 rocegate/suspect=mlx5_0:NoSchedule --overwrite"
            ])
        );
        assert!(!a.sh.contains("n2") && !a.sh.contains("n3"), "{}", a.sh);
        assert!(a.sh.starts_with("#!/bin/sh\n") && a.sh.contains("\nset -eu\n"));
        let t = &a.json["tickets"][0];
        assert_eq!(t["component"], "n1:mlx5_0");
        assert!(t["check"].as_str().unwrap().contains("firmware"));
        assert_eq!(t["report"], "/r/report.html");
    }

    #[test]
    fn advice_follows_the_kind_and_the_checks() {
        let s = |kind: &str, evidence: &[&str], from_traffic: bool| Suspect {
            component: "c".into(),
            kind: kind.into(),
            score: 2.0,
            evidence: evidence.iter().map(|e| e.to_string()).collect(),
            results: Vec::new(),
            from_traffic,
        };
        let cable = advice(&s("cable", &["counters.fcs: 20 failing"], true));
        assert!(
            cable.contains("error counters") && cable.contains("cable"),
            "{cable}"
        );
        assert!(!cable.contains("NIC"), "{cable}");
        let fw = advice(&s("node", &["nic.firmware: 8 failing"], false));
        assert_eq!(
            fw,
            "update the NIC firmware to the version the inventory expects"
        );
        let pfc = advice(&s("nic", &["nic.pfc gpu016:mlx5_7: PFC on 3,4"], false));
        assert!(pfc.contains("RoCE QoS"), "{pfc}");
        assert!(advice(&s("node", &["rail-bw: 8 failing"], true)).contains("PCIe"));
    }

    #[test]
    fn nothing_for_a_passed_or_cut_short_run() {
        let passed = FAILED
            .replace("\"gate_passed\":false", "\"gate_passed\":true")
            .replace("\"exit_code\":1", "\"exit_code\":0");
        let r = vec![
            rec(STARTED),
            finding("n1:mlx5_0", "deviation"),
            rec(&passed),
        ];
        assert!(build(&r, "x").is_none());
        let r = vec![rec(STARTED), finding("n1:mlx5_0", "deviation")];
        assert!(build(&r, "x").is_none());
    }

    #[test]
    fn reasons_stay_within_slurms_limit_and_quoted() {
        let long = format!("é{}'$(reboot)'\n", "x".repeat(400));
        let cut = within(&one_line(&long), SLURM_REASON_MAX);
        assert!(cut.len() <= SLURM_REASON_MAX && cut.ends_with("..."));
        let q = quote(&cut);
        assert_eq!(shlex::split(&q).unwrap(), vec![cut.clone()]);
        assert!(!one_line("a\nb\r").contains(['\n', '\r']));
        assert_eq!(label_value("gpu003:mlx5_1"), "gpu003_mlx5_1");
        assert_eq!(label_value("-x-"), "x");
        assert_eq!(label_value(&"y".repeat(80)).len(), 63);
    }

    #[test]
    fn the_script_is_valid_sh_and_does_nothing_without_an_argument() {
        let records = vec![rec(STARTED), finding("n1:mlx5_0", "deviation"), rec(FAILED)];
        let a = build(&records, "/r/it's here/report.html").unwrap();
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("actions.sh");
        std::fs::write(&p, &a.sh).unwrap();
        let out = std::process::Command::new("sh")
            .arg("-n")
            .arg(&p)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let out = std::process::Command::new("sh").arg(&p).output().unwrap();
        assert_eq!(out.status.code(), Some(2));
    }
}
