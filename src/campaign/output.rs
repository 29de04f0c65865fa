//! What a campaign leaves and says: `campaign.json` for machines,
//! `index.html` (one self-contained page linking every fabric's
//! report.html; no external resources, all text escaped) for people, and
//! the terminal summary, gate first. Pure functions of the outcome.

use serde::Serialize;
use serde_json::json;

use super::file::{fmt, Campaign};
use super::CampaignPlan;
use crate::exit::{GATE_FAILED, INCOMPLETE, PASS};

/// How one fabric of the campaign ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Passed,
    Failed,
    /// Its run did not complete (harness failure, unhealed fault, …).
    Incomplete,
    /// Its run was stopped by the campaign's interrupt or `stop` policy.
    Interrupted,
    /// Not started on purpose: no time left, or the failure policy.
    Skipped,
    /// Never ran: the campaign was interrupted first, or its run refused
    /// to start (see `reason`).
    NotRun,
}

impl Status {
    pub fn word(self) -> &'static str {
        match self {
            Status::Passed => "PASS",
            Status::Failed => "FAIL",
            Status::Incomplete => "INCOMPLETE",
            Status::Interrupted => "INTERRUPTED",
            Status::Skipped => "SKIPPED",
            Status::NotRun => "NOT RUN",
        }
    }
}

/// The comparison of a fabric's run with its baseline.
#[derive(Debug, Clone, Serialize)]
pub struct BaselineOutcome {
    /// What the campaign file named.
    pub reference: String,
    /// `no regression`, `regressed` or `error`.
    pub result: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub regressions: Vec<serde_json::Value>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub version_changes: Vec<serde_json::Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// One fabric in `campaign.json`.
#[derive(Debug, Clone, Serialize)]
pub struct FabricOutcome {
    pub name: String,
    /// The inventory's `fabric.name`.
    pub fabric: String,
    pub inventory: String,
    pub suite: String,
    pub status: Status,
    /// `pass`, `fail` or `incomplete`: what this fabric means for the gate.
    pub gate: &'static str,
    /// What this fabric counts for in the campaign's exit code.
    pub exit_code: i32,
    /// The exit code of the fabric's own `rocegate run`, when it ran.
    pub run_exit_code: Option<i32>,
    /// Relative to the campaign directory.
    pub run_dir: Option<String>,
    pub report: Option<String>,
    pub log: Option<String>,
    pub estimate_s: f64,
    /// The estimate scaled by measured/estimated of the fabrics finished
    /// before it started: what its start was judged on.
    pub scaled_estimate_s: Option<f64>,
    /// How long it took: the later of the wall clock and the run's own
    /// clock (virtual on the emulated fabric).
    pub measured_s: Option<f64>,
    pub wall_s: Option<f64>,
    pub measured_over_estimate: Option<f64>,
    pub started_at: Option<String>,
    pub ended_at: Option<String>,
    /// The run's suspects, from its summary.json.
    pub suspects: Vec<serde_json::Value>,
    pub baseline: Option<BaselineOutcome>,
    /// Why it was skipped, not run, stopped or incomplete.
    pub reason: Option<String>,
}

impl FabricOutcome {
    pub fn gate_of(code: i32) -> &'static str {
        match code {
            PASS => "pass",
            GATE_FAILED => "fail",
            _ => "incomplete",
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct CampaignOutcome {
    pub campaign: String,
    pub file: String,
    pub dir: String,
    pub window_start: String,
    pub deadline: String,
    pub parallel: usize,
    pub on_failure: &'static str,
    pub started_at: String,
    pub ended_at: String,
    pub interrupted: bool,
    /// Why the campaign stopped starting fabrics early, if it did.
    pub stopped: Option<String>,
    pub gate: &'static str,
    pub exit_code: i32,
    /// Sum of measured over sum of estimated, over the fabrics that finished.
    pub measured_over_estimate: Option<f64>,
    pub fabrics: Vec<FabricOutcome>,
}

/// The campaign's exit code: the highest of its fabrics' (fail over pass,
/// incomplete over both), and incomplete when interrupted.
pub fn exit_code(fabrics: &[FabricOutcome], interrupted: bool) -> i32 {
    let worst = fabrics
        .iter()
        .map(|f| f.exit_code)
        .max()
        .unwrap_or(INCOMPLETE);
    if interrupted {
        worst.max(INCOMPLETE)
    } else {
        worst
    }
}

pub fn plan_json(c: &Campaign, p: &CampaignPlan) -> serde_json::Value {
    let fabrics: Vec<_> = c
        .fabrics
        .iter()
        .enumerate()
        .map(|(i, f)| {
            json!({
                "name": f.name,
                "fabric": f.inventory.fabric.name,
                "inventory": f.inventory_path,
                "suite": f.suite_path,
                "baseline": f.baseline,
                "tests": f.plan.tests.len(),
                "steps": f.plan.tests.iter().map(|t| t.steps()).sum::<usize>(),
                "disruptive_steps": f.plan.disruptions.len(),
                "estimate_s": f.plan.estimate.as_secs_f64(),
                "start_s": p.slots[i].map(|s| s.start.as_secs_f64()),
                "end_s": p.slots[i].map(|s| s.end.as_secs_f64()),
                "fits": p.fits[i],
            })
        })
        .collect();
    let conflicts: Vec<_> = p
        .conflict_notes
        .iter()
        .map(|(i, j, why)| json!({"a": c.fabrics[*i].name, "b": c.fabrics[*j].name, "why": why}))
        .collect();
    json!({
        "campaign": c.name,
        "file": c.path,
        "parallel": c.parallel,
        "on_failure": c.policy.name(),
        "window_s": p.window.as_secs_f64(),
        "critical_path_s": p.critical.as_secs_f64(),
        "fits": p.critical <= p.window,
        "over_s": p.critical.saturating_sub(p.window).as_secs_f64(),
        "conflicts": conflicts,
        "fabrics": fabrics,
    })
}

fn secs(s: Option<f64>) -> String {
    s.map(|s| fmt(std::time::Duration::from_secs_f64(s.max(0.0))))
        .unwrap_or_else(|| "-".into())
}

/// One suspect as a line: `node gpu010`.
fn suspect_text(v: &serde_json::Value) -> String {
    let kind = v
        .get("kind")
        .and_then(|k| k.as_str())
        .unwrap_or("component");
    let comp = v.get("component").and_then(|k| k.as_str()).unwrap_or("?");
    format!("{kind} {comp}")
}

fn suspects_line(f: &FabricOutcome) -> Option<String> {
    if f.suspects.is_empty() {
        return None;
    }
    let mut names: Vec<String> = f.suspects.iter().take(5).map(suspect_text).collect();
    if f.suspects.len() > 5 {
        names.push(format!("… and {} more", f.suspects.len() - 5));
    }
    Some(names.join(", "))
}

fn gate_word(code: i32) -> &'static str {
    match code {
        PASS => "PASS",
        GATE_FAILED => "FAIL",
        _ => "INCOMPLETE",
    }
}

fn counts(o: &CampaignOutcome) -> String {
    let mut parts = Vec::new();
    for s in [
        Status::Passed,
        Status::Failed,
        Status::Incomplete,
        Status::Interrupted,
        Status::Skipped,
        Status::NotRun,
    ] {
        let n = o.fabrics.iter().filter(|f| f.status == s).count();
        if n > 0 {
            parts.push(format!("{n} {}", s.word().to_lowercase()));
        }
    }
    parts.join(", ")
}

/// The terminal summary, the campaign's gate on its first line.
pub fn terminal(o: &CampaignOutcome) -> String {
    let mut t = format!(
        "CAMPAIGN {} {}: {} (exit {})\n",
        gate_word(o.exit_code),
        o.campaign,
        counts(o),
        o.exit_code
    );
    if o.interrupted {
        t += "  interrupted: no fabric started after the signal; the runs in flight were stopped, each healing its own faults (see below)\n";
    }
    if let Some(s) = &o.stopped {
        t += &format!("  stopped: {s}\n");
    }
    for f in &o.fabrics {
        t += &format!(
            "  {:<11} {:<16} exit {:<2} {} of {} estimated",
            f.status.word(),
            f.name,
            f.run_exit_code
                .map(|c| c.to_string())
                .unwrap_or_else(|| "-".into()),
            secs(f.measured_s),
            fmt(std::time::Duration::from_secs_f64(f.estimate_s)),
        );
        if let Some(r) = &f.report {
            t += &format!("  {}/{r}", o.dir);
        }
        t += "\n";
        if let Some(s) = suspects_line(f) {
            t += &format!("      suspects: {s}\n");
        }
        if let Some(b) = &f.baseline {
            t += &format!("      baseline {}: {}", b.reference, b.result);
            if let Some(m) = &b.message {
                t += &format!(" ({m})");
            }
            t += "\n";
        }
        if let Some(r) = &f.reason {
            t += &format!("      {r}\n");
        }
    }
    t += &format!("campaign: {0}/campaign.json, {0}/index.html\n", o.dir);
    t
}

fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c if c.is_control() && c != '\n' => o.push_str(&format!("&#x{:x};", c as u32)),
            c => o.push(c),
        }
    }
    o
}

/// A link target relative to the campaign directory, percent-encoded
/// beyond the characters fabric names may hold.
fn href(rel: &str) -> String {
    rel.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '/') {
                c.to_string()
            } else {
                let mut b = [0u8; 4];
                c.encode_utf8(&mut b)
                    .bytes()
                    .map(|x| format!("%{x:02X}"))
                    .collect()
            }
        })
        .collect()
}

/// index.html: the gate, then one row per fabric linking its report.
pub fn html(o: &CampaignOutcome) -> String {
    let color = match o.exit_code {
        PASS => "#1a7f37",
        GATE_FAILED => "#cf222e",
        _ => "#9a6700",
    };
    let mut h = String::new();
    h += "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n";
    h += &format!("<title>campaign {}</title>\n", esc(&o.campaign));
    h += "<style>body{font-family:system-ui,sans-serif;margin:2em}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:4px 8px;text-align:left;vertical-align:top}.gate{font-size:1.5em;font-weight:bold}</style>\n";
    h += "</head><body>\n";
    h += &format!(
        "<p class=\"gate\" style=\"color:{color}\">CAMPAIGN {} — {} (exit {})</p>\n",
        gate_word(o.exit_code),
        esc(&counts(o)),
        o.exit_code
    );
    h += &format!(
        "<p>{} from {}; window {} to {}; {}; on failure: {}; ran {} to {}.</p>\n",
        esc(&o.campaign),
        esc(&o.file),
        esc(&o.window_start),
        esc(&o.deadline),
        if o.parallel <= 1 {
            "one fabric at a time".to_string()
        } else {
            format!("up to {} fabrics at once", o.parallel)
        },
        o.on_failure,
        esc(&o.started_at),
        esc(&o.ended_at)
    );
    if o.interrupted {
        h += "<p><b>Interrupted:</b> no fabric started after the signal; the runs in flight were stopped and healed their faults.</p>\n";
    }
    if let Some(s) = &o.stopped {
        h += &format!("<p><b>Stopped:</b> {}</p>\n", esc(s));
    }
    h += "<table><tr><th>fabric</th><th>gate</th><th>exit</th><th>took / estimate</th><th>suspects</th><th>baseline</th><th>report</th><th>why</th></tr>\n";
    for f in &o.fabrics {
        let report = match (&f.report, &f.log) {
            (Some(r), _) => format!("<a href=\"{}\">report.html</a>", href(r)),
            (None, Some(l)) => format!("<a href=\"{}\">log</a>", href(l)),
            _ => "-".into(),
        };
        let baseline = f
            .baseline
            .as_ref()
            .map(|b| {
                format!(
                    "{}: {}{}",
                    b.reference,
                    b.result,
                    b.message
                        .as_ref()
                        .map(|m| format!(" ({m})"))
                        .unwrap_or_default()
                )
            })
            .unwrap_or_else(|| "-".into());
        h += &format!(
            "<tr><td>{} <small>({})</small></td><td>{}</td><td>{}</td><td>{} / {}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
            esc(&f.name),
            esc(&f.fabric),
            f.status.word(),
            f.run_exit_code.map(|c| c.to_string()).unwrap_or_else(|| "-".into()),
            esc(&secs(f.measured_s)),
            esc(&fmt(std::time::Duration::from_secs_f64(f.estimate_s))),
            esc(&suspects_line(f).unwrap_or_else(|| "-".into())),
            esc(&baseline),
            report,
            esc(f.reason.as_deref().unwrap_or("")),
        );
    }
    h += "</table>\n</body></html>\n";
    h
}

/// Writes campaign.json and index.html (each through a temporary file, so
/// a reader never sees half of one).
pub fn write(dir: &std::path::Path, o: &CampaignOutcome) -> Result<(), String> {
    let json = serde_json::to_string_pretty(o).map_err(|e| e.to_string())? + "\n";
    for (name, text) in [("campaign.json", json), ("index.html", html(o))] {
        let path = dir.join(name);
        crate::paths::write_atomic(&path, text.as_bytes())
            .map_err(|e| format!("{}: cannot write: {e}", path.display()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn html_escapes_every_text_and_loads_nothing_external() {
        let f = FabricOutcome {
            name: "pod-a".into(),
            fabric: "<script>x</script>".into(),
            inventory: "i".into(),
            suite: "s".into(),
            status: Status::Failed,
            gate: "fail",
            exit_code: 1,
            run_exit_code: Some(1),
            run_dir: Some("pod-a".into()),
            report: Some("pod-a/report.html".into()),
            log: None,
            estimate_s: 60.0,
            scaled_estimate_s: None,
            measured_s: Some(61.0),
            wall_s: Some(2.0),
            measured_over_estimate: Some(61.0 / 60.0),
            started_at: None,
            ended_at: None,
            suspects: vec![json!({"kind": "node", "component": "a&b"})],
            baseline: None,
            reason: Some("\"quoted\" <b>".into()),
        };
        let o = CampaignOutcome {
            campaign: "c<1>".into(),
            file: "f".into(),
            dir: "d".into(),
            window_start: "s".into(),
            deadline: "d".into(),
            parallel: 1,
            on_failure: "stop",
            started_at: "a".into(),
            ended_at: "b".into(),
            interrupted: false,
            stopped: None,
            gate: "fail",
            exit_code: exit_code(std::slice::from_ref(&f), false),
            measured_over_estimate: None,
            fabrics: vec![f],
        };
        let h = html(&o);
        assert!(!h.contains("<script>"));
        assert!(
            h.contains("&lt;script&gt;")
                && h.contains("a&amp;b")
                && h.contains("&quot;quoted&quot;")
        );
        assert!(h.contains("href=\"pod-a/report.html\""));
        assert!(!h.contains("http://") && !h.contains("https://") && !h.contains("src="));
        assert!(terminal(&o).starts_with("CAMPAIGN FAIL c<1>"));
    }

    #[test]
    fn the_worst_fabric_sets_the_exit_and_interruption_is_never_a_pass() {
        let base = outcome();
        let with = |c: i32| FabricOutcome {
            exit_code: c,
            ..base.clone()
        };
        assert_eq!(exit_code(&[with(0), with(1)], false), 1);
        assert_eq!(exit_code(&[with(0), with(0)], false), 0);
        assert_eq!(exit_code(&[with(1), with(3)], false), 3);
        assert_eq!(exit_code(&[with(0)], true), 3);
    }

    fn outcome() -> FabricOutcome {
        FabricOutcome {
            name: "x".into(),
            fabric: "x".into(),
            inventory: "i".into(),
            suite: "s".into(),
            status: Status::Passed,
            gate: "pass",
            exit_code: 0,
            run_exit_code: Some(0),
            run_dir: None,
            report: None,
            log: None,
            estimate_s: 1.0,
            scaled_estimate_s: None,
            measured_s: None,
            wall_s: None,
            measured_over_estimate: None,
            started_at: None,
            ended_at: None,
            suspects: vec![],
            baseline: None,
            reason: None,
        }
    }
}
