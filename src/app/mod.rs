//! What each command does, in library form so tests can call it too.

use std::io::Write;

/// Writes to stdout; a closed pipe (`| head`) ends output quietly instead of panicking.
fn out(text: &str) {
    let _ = std::io::stdout().write_all(text.as_bytes());
}

use crate::cli::{GenerateArgs, NarrowArgs, PlanArgs};
use crate::config::generate::{generate, to_yaml, PodShape};
use crate::config::inventory::Environment;
use crate::config::units::{format_duration, parse_duration};
use crate::exit::{AppError, PASS};
use crate::inputs;
use crate::plan::{self, render, Narrowing, Plan};

pub mod baseline;
pub mod discover;
pub mod drain;
pub mod faults;
pub mod inventory;
pub mod remote;
pub mod rundir;
pub mod session;
pub mod shell;

use rundir::write_outputs;

pub fn validate(v: &crate::cli::ValidateArgs) -> Result<i32, AppError> {
    let args = &v.inputs;
    let i = inputs::load(args.inventory.as_deref(), args.suite.as_deref())?;
    let inv = &i.inventory;
    // What `run` would refuse on the whole suite and pod, validate refuses.
    let p = plan::build(&i.suite, inv, &Narrowing::default(), 1)?;
    check_refused(&p)?;
    if let Some(note) = production_note(&p, inv) {
        out(&note);
    }
    for w in api_reference_warnings(inv) {
        out(&format!("warning: {w}\n"));
    }
    out(&format!(
        "ok: inventory {} ({} nodes, {} NICs, {} switches, {} links); suite {} ({} tests)\n",
        inv.source.path,
        inv.nodes.len(),
        inv.nics.len(),
        inv.switches.len(),
        inv.links.len(),
        i.suite.source.path,
        i.suite.tests.len()
    ));
    if v.probe {
        return probe(inv);
    }
    Ok(PASS)
}

/// `validate --probe`: each API switch asked, in one batch, what its
/// platform needs to know (version, the account's privilege); one line per
/// switch. Exit 3 when any cannot be used as the suite needs.
fn probe(inv: &crate::config::model::Inventory) -> Result<i32, AppError> {
    let switches: Vec<_> = inv
        .switches
        .iter()
        .filter_map(|s| {
            let p = crate::switch::platform(s.driver);
            let user = s.api.as_ref().map(|a| a.user.clone()).unwrap_or_default();
            let qs = p.probe_queries(&user);
            (!qs.is_empty()).then_some((s, p, qs))
        })
        .collect();
    if switches.is_empty() {
        out("probe: no switch is reached over an API: nothing to probe\n");
        return Ok(PASS);
    }
    let step = crate::exec::StepCommands {
        invocations: switches
            .iter()
            .map(|(s, _, qs)| {
                crate::switch::invocation(
                    &s.name,
                    qs,
                    std::time::Duration::from_secs(30),
                    std::time::Duration::ZERO,
                )
            })
            .collect(),
    };
    let transport = remote::transport(inv, 1, 0.0, None)?;
    let rt = remote::runtime()?;
    let (_keep, never) = tokio::sync::watch::channel(false);
    let outs = rt.block_on(transport.run_batch(std::slice::from_ref(&step), never));
    let mut bad = 0;
    for ((s, p, qs), o) in switches.iter().zip(outs.into_iter().flatten()) {
        let answers = crate::switch::answers(qs, &o);
        let line = match (&o.failure, p.read_probe(&answers)) {
            (Some(f), _) if answers.iter().all(|a| a.exit.is_none()) => Err(f.to_string()),
            (_, r) => r,
        };
        match line {
            Ok(what) => out(&format!("probe {}: {} {what}\n", s.name, p.name())),
            Err(why) => {
                bad += 1;
                out(&format!("probe {}: {} FAILED: {why}\n", s.name, p.name()));
            }
        }
    }
    Ok(if bad > 0 {
        crate::exit::INCOMPLETE
    } else {
        PASS
    })
}

/// What the switch APIs will lack at run time, read here without showing
/// a secret: a password reference that does not resolve, a CA file that
/// cannot be read. One line per problem, naming its switches.
fn api_reference_warnings(inv: &crate::config::model::Inventory) -> Vec<String> {
    let mut by_problem: std::collections::BTreeMap<String, Vec<String>> = Default::default();
    for sw in inv.switches.iter().filter(|s| s.api.is_some()) {
        if let Some(c) = &sw.credentials {
            if let Err(why) = crate::exec::https::read_secret(c) {
                by_problem
                    .entry(format!(
                        "{why}: their API calls will fail until it is set where rocegate runs"
                    ))
                    .or_default()
                    .push(sw.name.clone());
            }
        }
        if let Some(ca) = sw.api.as_ref().and_then(|a| a.ca_file.as_ref()) {
            if let Err(e) = std::fs::read(ca) {
                by_problem
                    .entry(format!("api.ca_file {ca}: {e}: TLS to them will fail"))
                    .or_default()
                    .push(sw.name.clone());
            }
        }
    }
    by_problem
        .into_iter()
        .map(|(why, names)| format!("{}: {why}", crate::config::hostlist::compress(&names)))
        .collect()
}

pub fn narrowing(n: &NarrowArgs) -> Narrowing {
    Narrowing {
        only: n.only.clone(),
        nodes: n.nodes.clone(),
        exclude: n.exclude.clone(),
        skip_faults: n.skip_faults,
    }
}

/// Refuses a plan whose estimate does not fit `--deadline`.
fn parse_deadline(deadline: Option<&str>) -> Result<Option<std::time::Duration>, AppError> {
    deadline
        .map(|d| parse_duration(d).map_err(|e| AppError::Input(format!("--deadline: {e}"))))
        .transpose()
}

pub fn check_deadline(plan: &Plan, deadline: Option<&str>) -> Result<(), AppError> {
    let Some(limit) = parse_deadline(deadline)? else {
        return Ok(());
    };
    if plan.estimate > limit {
        return Err(AppError::Input(format!(
            "the plan needs an estimated {} but --deadline is {}: {} over; narrow it with --only, --nodes or --exclude, or use fewer rounds",
            format_duration(plan.estimate),
            format_duration(limit),
            format_duration(plan.estimate - limit)
        )));
    }
    Ok(())
}

pub fn plan(args: &PlanArgs) -> Result<i32, AppError> {
    if let Some(c) = &args.campaign {
        return crate::campaign::plan(args, c);
    }
    parse_deadline(args.narrow.deadline.as_deref())?;
    let i = inputs::load_seeded(
        args.input.inventory.as_deref(),
        args.input.suite.as_deref(),
        args.narrow.seed,
    )?;
    let p = plan::build(
        &i.suite,
        &i.inventory,
        &narrowing(&args.narrow),
        args.narrow.seed,
    )?;
    let text = if args.json {
        serde_json::to_string_pretty(&render::to_json(&p, &i.suite, &i.inventory))
            .unwrap_or_default()
            + "\n"
    } else {
        render::to_text(&p, &i.suite, &i.inventory)
    };
    out(&text);
    if let Some(note) = production_note(&p, &i.inventory) {
        out(&note);
    }
    check_refused(&p)?;
    check_deadline(&p, args.narrow.deadline.as_deref())?;
    Ok(PASS)
}

pub fn generate_inventory(a: &GenerateArgs) -> Result<i32, AppError> {
    let environment = match a.environment.as_str() {
        "lab" => Environment::Lab,
        "staging" => Environment::Staging,
        "production" => Environment::Production,
        other => {
            return Err(AppError::Input(format!(
                "--environment: \"{other}\" is not lab, staging or production"
            )))
        }
    };
    let shape = PodShape {
        name: a.name.clone(),
        environment,
        nodes: a.nodes,
        nodes_per_leaf: a.nodes_per_leaf,
        rails: a.rails,
        spines: a.spines,
        uplinks_per_spine: a.uplinks_per_spine,
        speed_gbps: a.speed_gbps,
        node_prefix: a.node_prefix.clone(),
        mtu: a.mtu,
        ..PodShape::default()
    };
    let inv = generate(&shape).map_err(AppError::Input)?;
    let yaml = to_yaml(&shape, &inv).map_err(AppError::Input)?;
    // What we write must load: check before handing it over.
    crate::config::check::parse_inventory("generated", &yaml)?;
    match &a.output {
        Some(path) => std::fs::write(path, &yaml)
            .map_err(|e| AppError::Input(format!("{path}: cannot write: {e}")))?,
        None => {
            let _ = std::io::stdout().write_all(yaml.as_bytes());
        }
    }
    Ok(PASS)
}

fn utc_now() -> time::OffsetDateTime {
    time::OffsetDateTime::now_utc()
}

pub(crate) fn rfc3339(t: time::OffsetDateTime) -> String {
    t.format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default()
}

/// Refuses before anything runs: production without --allow-disruptive,
/// and any fault over the blast-radius limit.
fn check_disruptive(
    plan: &Plan,
    inv: &crate::config::model::Inventory,
    allow: bool,
) -> Result<(), AppError> {
    if plan.disruptions.is_empty() {
        return Ok(());
    }
    if inv.is_production() && !allow {
        let names: Vec<&str> = plan.disruptions.iter().map(|d| d.test.as_str()).collect();
        return Err(AppError::Input(format!(
            "fabric {} is environment: production and the plan has disruptive steps ({}); rerun with --allow-disruptive after reading `rocegate plan`, or narrow with --only",
            inv.fabric.name,
            names.join(", ")
        )));
    }
    check_refused(plan)
}

/// What `run` refuses in the plan itself, whatever the command line says:
/// a fault over the blast-radius limit, or on a device no driver of this
/// build can change. `validate` and `plan` refuse it with the same words.
fn check_refused(plan: &Plan) -> Result<(), AppError> {
    let refused: Vec<String> = plan
        .disruptions
        .iter()
        .filter_map(|d| d.refused.as_ref().map(|r| format!("{}: {r}", d.test)))
        .collect();
    if !refused.is_empty() {
        return Err(AppError::Input(format!(
            "refused before anything was touched: {}",
            refused.join("; ")
        )));
    }
    Ok(())
}

/// The note `validate` and `plan` print where `run` needs a flag.
fn production_note(plan: &Plan, inv: &crate::config::model::Inventory) -> Option<String> {
    (inv.is_production() && !plan.disruptions.is_empty()).then(|| {
        format!(
            "note: fabric {} is environment: production; `run` refuses its disruptive steps without --allow-disruptive\n",
            inv.fabric.name
        )
    })
}

/// `rocegate run`: checked, the fabric held, recorded, run, finished
/// (each step in [`session`]).
pub fn run(a: &crate::cli::RunArgs) -> Result<i32, AppError> {
    if let Some(c) = &a.campaign {
        return crate::campaign::run::run(a, c);
    }
    let mut session = session::Checked::new(a)?.hold()?.record()?;
    let ran = session.execute();
    session.finish(ran)
}

/// Rebuilds junit.xml, report.html and summary.json from a run directory,
/// then says what `run` said at its end, and exits with the gate's code.
pub fn report(a: &crate::cli::ReportArgs) -> Result<i32, AppError> {
    use crate::report::terminal;
    let dir = std::path::Path::new(&a.run_dir);
    let records =
        crate::report::jsonl::read(&dir.join("results.jsonl")).map_err(AppError::Input)?;
    let (records, note) = rejudged(dir, records, a.suite.as_deref())?;
    // An empty log is a run killed before its first record: rebuilt, it
    // says so (incomplete, exit 3) like any other cut-short run.
    write_outputs(dir, &records).map_err(AppError::Incomplete)?;
    // A cut-short run is never a pass, whatever its verdicts say.
    let done = crate::report::events::completeness(&records);
    if !done.complete {
        eprintln!("rocegate: {}: {}", dir.display(), done.describe());
    }
    let dir_s = dir.display().to_string();
    out(&terminal::gate_text(&records));
    if let Some(note) = note {
        out(&format!("  {note}\n"));
    }
    out(&terminal::body(&records, &dir_s, a.verbose));
    out(&terminal::reports_text(&dir_s, Some(records.len())));
    write_exports(dir, &records, &a.export);
    Ok(terminal::exit_code(&records))
}

/// What `run` and `report` write besides the reports, all from the event
/// log: actions.json and actions.sh for a failed gate (removed otherwise),
/// the metrics file under `--metrics-dir`, the push to `--pushgateway`.
/// Each failure is said on stderr, naming the file or URL, and leaves the
/// gate and the exit code as they are.
pub(crate) fn write_exports(
    dir: &std::path::Path,
    records: &[crate::report::events::Record],
    export: &crate::cli::ExportArgs,
) {
    match crate::report::actions::write(dir, records) {
        Ok(files) => {
            for f in files {
                out(&format!("  actions        {f}\n"));
            }
        }
        Err(e) => eprintln!("rocegate: {e}"),
    }
    if let Some(m) = &export.metrics_dir {
        match crate::report::metrics::write(std::path::Path::new(m), records) {
            Ok(p) => out(&format!("  metrics        {}\n", p.display())),
            Err(e) => eprintln!("rocegate: {e}"),
        }
    }
    if let Some(url) = &export.pushgateway {
        match crate::report::metrics::push(url, records) {
            Ok(to) => out(&format!("  pushed         {to}\n")),
            Err(e) => eprintln!("rocegate: {e} (the gate is unchanged)"),
        }
    }
}

/// The run's verdicts judged again from its samples and findings, with the
/// inventory, suite, seed and narrowing it recorded (`suite`: new
/// expectations instead). A run that did not finish, or was recorded by a
/// rocegate that kept no inputs, keeps its verdicts. With `suite`, also
/// the note that says so.
fn rejudged(
    dir: &std::path::Path,
    records: Vec<crate::report::events::Record>,
    suite: Option<&str>,
) -> Result<(Vec<crate::report::events::Record>, Option<String>), AppError> {
    use crate::report::events::{run_started, Record};
    let done = crate::report::events::completeness(&records);
    let Some(started) = run_started(&records).cloned() else {
        return Ok((records, None));
    };
    let Some(recorded) = started.inputs.clone() else {
        if suite.is_some() {
            return Err(AppError::Input(format!(
                "{}: the run recorded no inventory and suite (an older rocegate wrote it): it cannot be judged again; rerun it",
                dir.display()
            )));
        }
        return Ok((records, None));
    };
    if !done.complete {
        if suite.is_some() {
            return Err(AppError::Input(format!(
                "{}: {}: a run that did not finish is not judged again",
                dir.display(),
                done.describe()
            )));
        }
        return Ok((records, None));
    }
    let label = format!("{} (recorded in results.jsonl)", started.inventory.path);
    let inv = crate::config::check::parse_inventory(&label, &recorded.inventory)
        .map_err(AppError::from)?;
    let (spath, stext) = match suite {
        Some(p) => inputs::read(Some(p), "")?,
        None => (
            format!("{} (recorded in results.jsonl)", started.suite_file.path),
            recorded.suite.clone(),
        ),
    };
    let s = crate::config::check_suite::parse_suite_seeded(&spath, &stext, &inv, started.seed)
        .map_err(AppError::from)?;
    let n = plan::Narrowing {
        only: recorded.only.clone(),
        nodes: recorded.nodes.clone(),
        exclude: recorded.exclude.clone(),
        skip_faults: recorded.skip_faults,
    };
    let p = plan::build(&s, &inv, &n, started.seed)?;
    let (mut judged, tests) = crate::score::rejudge::rejudge(&records, &s, &p, &inv);
    let Some(path) = suite else {
        return Ok((judged, None));
    };
    for r in judged.iter_mut() {
        if let Record::RunStarted(rs) = r {
            rs.rejudged_with = Some(path.to_string());
            rs.gate_fail_on = s
                .gate
                .fail_on
                .iter()
                .filter_map(|v| serde_json::to_value(v).ok()?.as_str().map(String::from))
                .collect();
            rs.gate_observe_only = s.gate.observe_only.clone();
        }
    }
    let note = format!(
        "re-judged {} against {path} (not the run's own suite); fault, counter-ledger, bisection and baseline verdicts are as recorded",
        tests.join(", ")
    );
    Ok((judged, Some(note)))
}

pub fn parse(a: &crate::cli::ParseArgs) -> Result<i32, AppError> {
    use crate::workload::parse_cmd::{run_parse, run_parse_counters, ParseTool};
    let tool = match (a.tool, a.format.as_deref()) {
        (crate::cli::ParseTool::Counters, Some(format)) => {
            let json = run_parse_counters(format, &a.file, a.unit.is_some())
                .map_err(|e| AppError::Input(e.to_string()))?;
            out(&format!("{json}\n"));
            return Ok(PASS);
        }
        (crate::cli::ParseTool::Counters, None) => {
            return Err(AppError::Input(format!(
                "parse counters: --format is required (formats: {})",
                crate::counters::formats::names()
            )))
        }
        (_, Some(_)) => {
            return Err(AppError::Input(
                "--format applies to `parse counters` only".to_string(),
            ))
        }
        (crate::cli::ParseTool::Perftest, None) => ParseTool::Perftest,
        (crate::cli::ParseTool::Nccl, None) => ParseTool::Nccl,
    };
    let json =
        run_parse(tool, &a.file, a.unit.as_deref()).map_err(|e| AppError::Input(e.to_string()))?;
    out(&format!("{json}\n"));
    Ok(PASS)
}
