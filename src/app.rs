//! What each command does, in library form so tests can call it too.

use std::io::Write;

use crate::cli::{GenerateArgs, InputArgs, NarrowArgs, PlanArgs};
use crate::config::generate::{generate, to_yaml, PodShape};
use crate::config::inventory::Environment;
use crate::config::units::{format_duration, parse_duration};
use crate::exit::{AppError, PASS};
use crate::inputs;
use crate::plan::{self, render, Narrowing, Plan};

pub fn validate(args: &InputArgs) -> Result<i32, AppError> {
    let i = inputs::load(args.inventory.as_deref(), args.suite.as_deref())?;
    let inv = &i.inventory;
    println!(
        "ok: inventory {} ({} nodes, {} NICs, {} switches, {} links); suite {} ({} tests)",
        inv.source.path,
        inv.nodes.len(),
        inv.nics.len(),
        inv.switches.len(),
        inv.links.len(),
        i.suite.source.path,
        i.suite.tests.len()
    );
    Ok(PASS)
}

pub fn narrowing(n: &NarrowArgs) -> Narrowing {
    Narrowing {
        only: n.only.clone(),
        nodes: n.nodes.clone(),
        exclude: n.exclude.clone(),
    }
}

/// Refuses a plan whose estimate does not fit `--deadline`.
pub fn check_deadline(plan: &Plan, deadline: Option<&str>) -> Result<(), AppError> {
    let Some(d) = deadline else { return Ok(()) };
    let limit = parse_duration(d).map_err(|e| AppError::Input(format!("--deadline: {e}")))?;
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
    let i = inputs::load(args.input.inventory.as_deref(), args.input.suite.as_deref())?;
    let p = plan::build(
        &i.suite,
        &i.inventory,
        &narrowing(&args.narrow),
        args.narrow.seed,
    )?;
    let out = if args.json {
        serde_json::to_string_pretty(&render::to_json(&p, &i.suite, &i.inventory))
            .unwrap_or_default()
            + "\n"
    } else {
        render::to_text(&p, &i.suite, &i.inventory)
    };
    print!("{out}");
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

pub fn run(_a: &crate::cli::RunArgs) -> Result<i32, AppError> {
    Err(AppError::Incomplete("run is not wired yet".into()))
}

pub fn report(_a: &crate::cli::ReportArgs) -> Result<i32, AppError> {
    Err(AppError::Incomplete("report is not wired yet".into()))
}

pub fn parse(a: &crate::cli::ParseArgs) -> Result<i32, AppError> {
    use crate::workload::parse_cmd::{run_parse, ParseTool};
    let tool = match a.tool {
        crate::cli::ParseTool::Perftest => ParseTool::Perftest,
        crate::cli::ParseTool::Nccl => ParseTool::Nccl,
    };
    let json = run_parse(tool, &a.file, a.unit.as_deref()).map_err(|e| AppError::Input(e.to_string()))?;
    println!("{json}");
    Ok(PASS)
}
