//! `rocegate baseline promote|list|show` and `rocegate compare`: the store
//! (one directory per fabric under the state directory, `baseline.json`
//! for machines and `baseline.txt` for people) and the command output.
//! The statistics are `score::compare`'s.

use std::path::{Path, PathBuf};

use crate::cli::{BaselinePromoteArgs, BaselineShowArgs, BaselineStoreArgs, CompareArgs};
use crate::exit::{AppError, GATE_FAILED, PASS};
use crate::score::compare::{self, Comparison, Profile};

fn store(dir: Option<&str>) -> Result<PathBuf, AppError> {
    match dir {
        Some(d) => Ok(PathBuf::from(d)),
        None => crate::paths::state_base()
            .map(|b| b.join("rocegate/baselines"))
            .ok_or_else(|| {
                AppError::Input(
                    "neither XDG_STATE_HOME nor HOME is set: give the baseline store with --store"
                        .into(),
                )
            }),
    }
}

fn fabric_dir(store: &Path, fabric: &str) -> Result<PathBuf, AppError> {
    crate::paths::join_within(store, fabric).map_err(|e| AppError::Input(format!("fabric: {e}")))
}

/// A run directory's profile, refusing a run that did not finish.
fn run_profile(dir: &Path) -> Result<Profile, AppError> {
    let records =
        crate::report::jsonl::read(&dir.join("results.jsonl")).map_err(AppError::Input)?;
    let done = crate::report::events::completeness(&records);
    if crate::report::events::run_started(&records).is_none() {
        return Err(AppError::Input(format!(
            "{}: results.jsonl has no run_started record: not a rocegate run",
            dir.display()
        )));
    }
    if !done.complete {
        eprintln!(
            "rocegate: {}: {} (compared on what it holds)",
            dir.display(),
            done.describe()
        );
    }
    let p = compare::profile(&records);
    if p.topology_hash.is_empty() || p.nics.is_empty() {
        return Err(AppError::Input(format!(
            "{}: the run records no topology (written by an older rocegate): rerun it",
            dir.display()
        )));
    }
    Ok(p)
}

fn read_baseline(path: &Path) -> Result<Profile, AppError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| AppError::Input(format!("{}: cannot read: {e}", path.display())))?;
    serde_json::from_str(&text).map_err(|e| {
        AppError::Input(format!(
            "{}: not a rocegate baseline ({e}); promote it again with `rocegate baseline promote`",
            path.display()
        ))
    })
}

/// A run directory, a baseline directory or file, or a fabric in the store.
fn resolve(what: &str, store_dir: Option<&str>) -> Result<Profile, AppError> {
    let path = Path::new(what);
    if path.join("results.jsonl").is_file() {
        return run_profile(path);
    }
    if path.join("baseline.json").is_file() {
        return read_baseline(&path.join("baseline.json"));
    }
    if path.is_file() {
        return read_baseline(path);
    }
    let s = store(store_dir)?;
    let file = fabric_dir(&s, what)?.join("baseline.json");
    if file.is_file() {
        return read_baseline(&file);
    }
    Err(AppError::Input(format!(
        "{what}: neither a run directory (no results.jsonl), a baseline file, nor a fabric with a baseline in {} (see `rocegate baseline list`)",
        s.display()
    )))
}

pub fn promote(a: &BaselinePromoteArgs) -> Result<i32, AppError> {
    let profiles = a
        .runs
        .iter()
        .map(|r| run_profile(Path::new(r)))
        .collect::<Result<Vec<_>, _>>()?;
    let fabrics: std::collections::BTreeSet<&str> =
        profiles.iter().map(|p| p.fabric.as_str()).collect();
    if fabrics.len() > 1 {
        return Err(AppError::Input(format!(
            "the runs are of different fabrics ({}): promote each fabric's runs separately",
            fabrics.into_iter().collect::<Vec<_>>().join(", ")
        )));
    }
    let merged = compare::merge(profiles).map_err(AppError::Input)?;
    let s = store(a.store.store.as_deref())?;
    let dir = fabric_dir(&s, &merged.fabric)?;
    std::fs::create_dir_all(&dir)
        .map_err(|e| AppError::Incomplete(format!("{}: cannot create: {e}", dir.display())))?;
    let json = serde_json::to_string_pretty(&merged).unwrap_or_default() + "\n";
    for (name, bytes) in [
        ("baseline.json", json.into_bytes()),
        ("baseline.txt", describe(&merged).into_bytes()),
    ] {
        crate::paths::write_atomic(&dir.join(name), &bytes).map_err(|e| {
            AppError::Incomplete(format!("{}: cannot write: {e}", dir.join(name).display()))
        })?;
    }
    println!(
        "baseline of {} from {} run(s): {}",
        merged.fabric,
        merged.runs.len(),
        dir.display()
    );
    Ok(PASS)
}

pub fn list(a: &BaselineStoreArgs) -> Result<i32, AppError> {
    let s = store(a.store.as_deref())?;
    let mut found = Vec::new();
    if let Ok(rd) = std::fs::read_dir(&s) {
        for e in rd.flatten() {
            let file = e.path().join("baseline.json");
            if let Ok(p) = read_baseline(&file) {
                found.push(format!(
                    "{}  {} run(s), {} test(s), {} NICs  {}",
                    p.fabric,
                    p.runs.len(),
                    p.tests.len(),
                    p.nics.len(),
                    p.runs.last().cloned().unwrap_or_default()
                ));
            }
        }
    }
    found.sort();
    if found.is_empty() {
        println!("no baselines in {}", s.display());
    }
    for f in found {
        println!("{f}");
    }
    Ok(PASS)
}

pub fn show(a: &BaselineShowArgs) -> Result<i32, AppError> {
    let s = store(a.store.store.as_deref())?;
    let p = read_baseline(&fabric_dir(&s, &a.fabric)?.join("baseline.json"))?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&p).unwrap_or_default());
    } else {
        print!("{}", describe(&p));
    }
    Ok(PASS)
}

/// The human-readable form: runs, versions, and per test each component's
/// median, MAD and sample count.
fn describe(p: &Profile) -> String {
    let mut out = format!(
        "baseline of {} ({} NICs on {} nodes, topology {})\nruns: {}\n",
        p.fabric,
        p.nics.len(),
        p.nodes.len(),
        &p.topology_hash[..p.topology_hash.len().min(12)],
        p.runs.join(", ")
    );
    for (kind, vs) in &p.versions {
        for (v, comps) in vs {
            out += &format!("{kind} {v} on {} component(s)\n", comps.len());
        }
    }
    for (test, t) in &p.tests {
        out += &format!("\n{test} ({})\n", t.unit);
        for (c, s) in &t.components {
            let spread: Vec<String> = s.run_medians.iter().map(|m| format!("{m:.2}")).collect();
            out += &format!(
                "  {c:<40} {:<11} median {:>9.2}  MAD {:>7.3}  n {:>4}  per run [{}]\n",
                s.kind,
                s.median,
                s.mad,
                s.n,
                spread.join(", ")
            );
        }
    }
    out
}

pub fn compare(a: &CompareArgs) -> Result<i32, AppError> {
    if !(a.alpha > 0.0 && a.alpha < 1.0 && a.tolerance >= 0.0 && a.tolerance.is_finite()) {
        return Err(AppError::Input(format!(
            "--alpha {} must lie in (0, 1) and --tolerance {} must be 0 or more",
            a.alpha, a.tolerance
        )));
    }
    let pa = resolve(&a.a, a.store.as_deref())?;
    let pb = resolve(&a.b, a.store.as_deref())?;
    if pa.topology_hash != pb.topology_hash {
        return Err(AppError::Input(format!(
            "{} and {} are of different topologies ({} vs {}): a comparison would compare other NICs and cables",
            a.a, a.b, pa.fabric, pb.fabric
        )));
    }
    let c = compare::compare(&pa, &pb, a.alpha, a.tolerance);
    if a.json {
        println!("{}", serde_json::to_string_pretty(&c).unwrap_or_default());
    } else {
        print!("{}", compare_text(&c));
    }
    Ok(if c.regressions.is_empty() {
        PASS
    } else {
        GATE_FAILED
    })
}

fn compare_text(c: &Comparison) -> String {
    let mut out = format!("A: {}\nB: {}\n", c.a.join(", "), c.b.join(", "));
    if c.version_changes.is_empty() {
        out += "versions: no change seen\n";
    }
    for v in &c.version_changes {
        out += &format!("version change: {v}\n");
    }
    out += &format!(
        "{} comparisons at alpha {} (Holm), tolerance {} % ({} % for latency)",
        c.rows.len(),
        c.alpha,
        c.tolerance_pct,
        c.latency_tolerance_pct
    );
    match c.min_samples_per_side {
        Some(m) if c.underpowered > 0 => {
            out += &format!(
                "; {} have fewer than the {m} samples a side that significance needs: raise the tests' repeat\n",
                c.underpowered
            )
        }
        _ => out += "\n",
    }
    if c.regressions.is_empty() {
        out += "no significant regression beyond the tolerance\n";
    }
    for r in &c.regressions {
        out += &format!(
            "REGRESSED {} {}: {:+.1} % (p {:.2e} after Holm) in {}\n",
            r.kind,
            r.component,
            r.change_pct,
            r.p_holm,
            r.tests.join(", ")
        );
        if !r.folded.is_empty() {
            let shown: Vec<&str> = r.folded.iter().take(8).map(String::as_str).collect();
            out += &format!(
                "          with {}{}\n",
                shown.join(", "),
                if r.folded.len() > 8 {
                    format!(" and {} more", r.folded.len() - 8)
                } else {
                    String::new()
                }
            );
        }
    }
    for i in &c.improvements {
        out += &format!("improved  {i}\n");
    }
    for o in &c.only_in_a {
        out += &format!("only in A: {o}\n");
    }
    for o in &c.only_in_b {
        out += &format!("only in B: {o}\n");
    }
    out
}

/// The suite's `baseline:` comparison at the end of a run: one `fail` per
/// regression, one `pass` when there is none, `skipped` (or `fail` when
/// required) without a stored baseline, `error` when the stored one is of
/// another topology or unreadable.
pub fn run_verdicts(
    spec: &crate::config::suite::BaselineSpec,
    fabric: &str,
    records: &[crate::report::events::Record],
) -> Vec<crate::report::events::VerdictRecord> {
    use crate::score::Verdict;
    let verdict = |component: &str, v: Verdict, message: String, value: Option<f64>| {
        crate::report::events::VerdictRecord {
            test: "baseline".into(),
            kind: "baseline".into(),
            component: component.into(),
            verdict: v,
            metric: value.map(|_| "change_pct".into()),
            value,
            unit: value.map(|_| "%".into()),
            threshold: Default::default(),
            samples: Vec::new(),
            message,
            evidence: Vec::new(),
            duration_s: 0.0,
            series: Vec::new(),
        }
    };
    let file = store(spec.store.as_deref())
        .and_then(|s| fabric_dir(&s, fabric))
        .map(|d| d.join("baseline.json"));
    let file = match file {
        Ok(f) if f.is_file() => f,
        Ok(f) => {
            let v = if spec.require {
                Verdict::Fail
            } else {
                Verdict::Skipped
            };
            return vec![verdict(
                fabric,
                v,
                format!(
                    "no baseline for fabric {fabric} ({} does not exist): promote a good run with `rocegate baseline promote RUN_DIR`",
                    f.display()
                ),
                None,
            )];
        }
        Err(e) => return vec![verdict(fabric, Verdict::Error, e.to_string(), None)],
    };
    let base = match read_baseline(&file) {
        Ok(b) => b,
        Err(e) => return vec![verdict(fabric, Verdict::Error, e.to_string(), None)],
    };
    let now = compare::profile(records);
    if base.topology_hash != now.topology_hash {
        return vec![verdict(
            fabric,
            Verdict::Error,
            format!(
                "the baseline in {} is of another topology (cables, NICs or switches changed): promote a new one",
                file.display()
            ),
            None,
        )];
    }
    let c = compare::compare(&base, &now, spec.alpha, spec.tolerance_pct);
    let versions = if c.version_changes.is_empty() {
        "no version change".to_string()
    } else {
        c.version_changes.join("; ")
    };
    if c.regressions.is_empty() {
        let power = match c.min_samples_per_side {
            Some(m) if c.underpowered > 0 => format!(
                "; {} comparison(s) have fewer than the {m} samples a side significance needs",
                c.underpowered
            ),
            _ => String::new(),
        };
        return vec![verdict(
            fabric,
            Verdict::Pass,
            format!(
                "{} comparisons with the baseline of {}: no significant regression beyond {} % (alpha {}, Holm); {versions}{power}",
                c.rows.len(),
                base.runs.join(", "),
                c.tolerance_pct,
                c.alpha
            ),
            None,
        )];
    }
    c.regressions
        .iter()
        .map(|r| {
            verdict(
                &r.component,
                Verdict::Fail,
                format!(
                    "{} {} regressed {:+.1} % against the baseline (p {:.2e} after Holm, alpha {}) in {}{}; {versions}",
                    r.kind,
                    r.component,
                    r.change_pct,
                    r.p_holm,
                    c.alpha,
                    r.tests.join(", "),
                    if r.folded.is_empty() {
                        String::new()
                    } else {
                        format!(" (with {} more result(s) it takes part in)", r.folded.len())
                    }
                ),
                Some((r.change_pct * 100.0).round() / 100.0),
            )
        })
        .collect()
}
