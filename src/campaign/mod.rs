//! Campaigns: several fabrics in one change window, with one plan, one
//! deadline and one gate (`plan --campaign`, `run --campaign`).
//!
//! A campaign does not run fabrics itself: each fabric is one ordinary
//! `rocegate run` of this same binary, into its own run directory under
//! the campaign directory, so every per-fabric output, its fault journal,
//! its run lock and its healing are exactly a single run's. The campaign
//! orders them, checks each against the time left before it starts it,
//! forwards an interrupt to the runs in flight, and sums them up
//! (`campaign.json`, `index.html`, the terminal).
//!
//! Choices where the issue is silent, as a 2 a.m. change window wants them:
//! - A fabric is started only when its estimate, scaled by how long the
//!   finished fabrics took against their estimates, fits the time left;
//!   otherwise it is skipped with the reason, and later, shorter fabrics
//!   may still run. `run` does not refuse a campaign that `plan` says
//!   overruns: it runs what fits, and the skipped ones make it incomplete.
//! - The campaign's clock is the later of the wall clock and the run's
//!   own clock (the emulated fabric's is virtual), so a paced or instant
//!   emulated run spends the window as a real one would.
//! - The failure policy (`stop` by default) applies to any fabric that
//!   does not pass: a failed gate or an incomplete run.
//! - A baseline regression fails the fabric's gate; a comparison that
//!   cannot be made leaves it incomplete.
//! - The exit code is the highest of the fabrics' (see `exit.rs`): any
//!   fabric skipped, not run or interrupted makes the campaign incomplete
//!   (3), never a pass.

pub mod file;
pub mod output;
pub mod run;
pub mod schedule;

use std::io::Write;
use std::time::Duration;

use crate::cli::{NarrowArgs, PlanArgs};
use crate::exit::{AppError, PASS};

use file::{fmt, Campaign, Start};

fn out(text: &str) {
    let _ = std::io::stdout().write_all(text.as_bytes());
}

/// Refuses the single-run options a campaign file replaces.
pub fn check_narrowing(
    n: &NarrowArgs,
    inventory: Option<&str>,
    suite: Option<&str>,
) -> Result<(), AppError> {
    let mut given = Vec::new();
    if inventory.is_some() {
        given.push("--inventory");
    }
    if suite.is_some() {
        given.push("--suite");
    }
    if !n.only.is_empty() {
        given.push("--only");
    }
    if n.nodes.is_some() {
        given.push("--nodes");
    }
    if n.exclude.is_some() {
        given.push("--exclude");
    }
    if n.skip_faults {
        given.push("--skip-faults");
    }
    if n.deadline.is_some() {
        given.push("--deadline");
    }
    if given.is_empty() {
        return Ok(());
    }
    Err(AppError::Input(format!(
        "--campaign cannot be combined with {}: the campaign file names each fabric's inventory and suite and the window's deadline (narrow a fabric in its suite)",
        given.join(", ")
    )))
}

/// The campaign's plan: each fabric's estimate and slot, which fabrics
/// may not run together, the critical path and what fits the window.
pub struct CampaignPlan {
    pub estimates: Vec<Duration>,
    pub conflicts: Vec<Vec<bool>>,
    /// `(i, j, why)` for each pair that may not run at once, i < j.
    pub conflict_notes: Vec<(usize, usize, String)>,
    pub slots: Vec<Option<schedule::Slot>>,
    pub critical: Duration,
    pub window: Duration,
    /// The fabrics, in file order, that fit the window together.
    pub fits: Vec<bool>,
}

pub fn make_plan(c: &Campaign) -> CampaignPlan {
    let n = c.fabrics.len();
    let estimates: Vec<Duration> = c.fabrics.iter().map(|f| f.plan.estimate).collect();
    let mut conflicts = vec![vec![false; n]; n];
    let mut conflict_notes = Vec::new();
    let pairs = (0..n).flat_map(|i| (i + 1..n).map(move |j| (i, j)));
    for (i, j) in pairs {
        if let Some(why) = schedule::conflict(&c.fabrics[i].inventory, &c.fabrics[j].inventory) {
            conflicts[i][j] = true;
            conflicts[j][i] = true;
            conflict_notes.push((i, j, why));
        }
    }
    let (slots, critical) = schedule::schedule(&estimates, &vec![true; n], &conflicts, c.parallel);
    let window = c.window.length();
    let fits = schedule::fitting(&estimates, &conflicts, c.parallel, window);
    CampaignPlan {
        estimates,
        conflicts,
        conflict_notes,
        slots,
        critical,
        window,
        fits,
    }
}

fn lanes(c: &Campaign) -> String {
    if c.parallel <= 1 {
        "one after another".to_string()
    } else {
        format!("up to {} at once", c.parallel)
    }
}

fn window_text(c: &Campaign) -> String {
    let now = time::OffsetDateTime::now_utc();
    let (s, d) = c.window.resolve(now);
    let len = fmt((d - s).try_into().unwrap_or_default());
    match c.window.start {
        Start::Now => format!("opens when the command starts, {len} long"),
        Start::At(_) if s < now && now < d => format!(
            "{} to {} ({len}), open now: {} left",
            file::at(s),
            file::at(d),
            fmt(c.window.length())
        ),
        Start::At(_) => format!("{} to {} ({len})", file::at(s), file::at(d)),
    }
}

/// What `plan --campaign` prints, and the verdict on the window.
pub fn plan_text(c: &Campaign, p: &CampaignPlan) -> String {
    let mut t = format!(
        "campaign {} ({}): {} fabric(s), {}, on failure: {}\nwindow: {}\n",
        c.name,
        c.path,
        c.fabrics.len(),
        lanes(c),
        c.policy.name(),
        window_text(c)
    );
    let rows: Vec<[String; 9]> = c
        .fabrics
        .iter()
        .zip(&p.slots)
        .map(|(f, s)| {
            let steps: usize = f.plan.tests.iter().map(|t| t.steps()).sum();
            let (st, en) = s
                .map(|s| (format!("+{}", fmt(s.start)), format!("+{}", fmt(s.end))))
                .unwrap_or_default();
            [
                f.name.clone(),
                f.inventory.fabric.name.clone(),
                f.suite_name.clone(),
                f.plan.tests.len().to_string(),
                steps.to_string(),
                f.plan.disruptions.len().to_string(),
                fmt(f.plan.estimate),
                st,
                en,
            ]
        })
        .collect();
    let head = [
        "NAME", "FABRIC", "SUITE", "TESTS", "STEPS", "FAULTS", "ESTIMATE", "START", "END",
    ];
    let mut width: Vec<usize> = head.iter().map(|h| h.len()).collect();
    for r in &rows {
        for (w, v) in width.iter_mut().zip(r) {
            *w = (*w).max(v.chars().count());
        }
    }
    let line = |cells: Vec<&str>| {
        let mut l = String::new();
        for (v, w) in cells.iter().zip(&width) {
            l += &format!("{v:<w$}  ");
        }
        l.trim_end().to_string() + "\n"
    };
    t += &line(head.to_vec());
    for r in &rows {
        t += &line(r.iter().map(String::as_str).collect());
    }
    for f in &c.fabrics {
        t += &format!("  {}: {} + {}\n", f.name, f.inventory_path, f.suite_path);
        if let Some(b) = &f.baseline {
            t += &format!("  {}: compared with baseline {b}\n", f.name);
        }
        if f.inventory.is_production() && !f.plan.disruptions.is_empty() {
            t += &format!(
                "  note: {} is environment: production with disruptive steps; `run --campaign` refuses it without --allow-disruptive\n",
                f.name
            );
        }
    }
    for (i, j, why) in &p.conflict_notes {
        t += &format!(
            "not at once: {} and {} ({why})\n",
            c.fabrics[*i].name, c.fabrics[*j].name
        );
    }
    let how = if c.parallel <= 1 {
        "the sum, one after another"
    } else {
        "the parallel schedule"
    };
    t += &format!(
        "critical path: {} ({how}) against a {} window: ",
        fmt(p.critical),
        fmt(p.window)
    );
    if p.critical <= p.window {
        t += &format!("fits, {} to spare\n", fmt(p.window - p.critical));
    } else {
        t += &format!("does NOT fit, {} over\n", fmt(p.critical - p.window));
    }
    t
}

/// Why the campaign does not fit, and what would: exit 2's message.
pub fn no_fit(c: &Campaign, p: &CampaignPlan) -> Option<String> {
    if p.critical <= p.window {
        return None;
    }
    let keep: Vec<usize> = (0..c.fabrics.len()).filter(|&i| p.fits[i]).collect();
    let drop: Vec<String> = (0..c.fabrics.len())
        .filter(|&i| !p.fits[i])
        .map(|i| format!("{} ({})", c.fabrics[i].name, fmt(p.estimates[i])))
        .collect();
    let mut msg = format!(
        "campaign {}: the critical path is {} but the window is {}: {} over.",
        c.name,
        fmt(p.critical),
        fmt(p.window),
        fmt(p.critical - p.window)
    );
    if keep.is_empty() {
        let shortest = p.estimates.iter().min().copied().unwrap_or_default();
        msg += &format!(
            " No fabric fits alone (the shortest needs {}): widen the window by at least {}, or narrow the suites.",
            fmt(shortest),
            fmt(shortest.saturating_sub(p.window))
        );
    } else {
        let (_, end) = schedule::schedule(&p.estimates, &p.fits, &p.conflicts, c.parallel);
        let names: Vec<&str> = keep.iter().map(|&i| c.fabrics[i].name.as_str()).collect();
        msg += &format!(
            " What fits, in this order: {} ({} of {}); leave out {} for another window, or widen it by {}.",
            names.join(", "),
            fmt(end),
            fmt(p.window),
            drop.join(", "),
            fmt(p.critical - p.window)
        );
        if c.parallel <= 1 && p.conflict_notes.len() < c.fabrics.len() * (c.fabrics.len() - 1) / 2 {
            msg += " Fabrics that share nothing may also run at once: set `parallel:`.";
        }
    }
    Some(msg)
}

/// `rocegate plan --campaign FILE`.
pub fn plan(args: &PlanArgs, path: &str) -> Result<i32, AppError> {
    check_narrowing(
        &args.narrow,
        args.input.inventory.as_deref(),
        args.input.suite.as_deref(),
    )?;
    let c = file::load(path, args.narrow.seed)?;
    let p = make_plan(&c);
    if args.json {
        let v = output::plan_json(&c, &p);
        out(&(serde_json::to_string_pretty(&v).unwrap_or_default() + "\n"));
    } else {
        out(&plan_text(&c, &p));
    }
    refused(&c)?;
    let now = time::OffsetDateTime::now_utc();
    let (_, d) = c.window.resolve(now);
    if d <= now {
        return Err(AppError::Input(format!(
            "campaign {}: the window closed at {}; give the next window's start and deadline",
            c.name,
            file::at(d)
        )));
    }
    if let Some(msg) = no_fit(&c, &p) {
        return Err(AppError::Input(msg));
    }
    Ok(PASS)
}

/// What every fabric's `run` would refuse whatever the command line says:
/// a fault over the blast-radius limit or on a device no driver changes.
pub fn refused(c: &Campaign) -> Result<(), AppError> {
    let refused: Vec<String> = c
        .fabrics
        .iter()
        .flat_map(|f| {
            f.plan.disruptions.iter().filter_map(move |d| {
                d.refused
                    .as_ref()
                    .map(|r| format!("{}: {}: {r}", f.name, d.test))
            })
        })
        .collect();
    if refused.is_empty() {
        return Ok(());
    }
    Err(AppError::Input(format!(
        "refused before anything was touched: {}",
        refused.join("; ")
    )))
}
