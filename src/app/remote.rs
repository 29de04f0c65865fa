//! Commands that talk to real hosts without running a suite: `preflight`
//! (is every host ready?) and `exec` (one command on many hosts, the way an
//! operator would use pdsh), and the transport every command builds from
//! the inventory.

use std::time::{Duration, Instant};

use crate::audit::preflight::{self, HostReport};
use crate::cli::{AuditArgs, ExecArgs, PreflightArgs};
use crate::config::inventory::{SlurmLauncher, TransportSpec};
use crate::config::model::Inventory;
use crate::config::units::parse_duration;
use crate::exec::{Invocation, Role, StepCommands, Transport};
use crate::exit::{AppError, GATE_FAILED, PASS};
use crate::inputs;

use super::{narrowing, out};

/// The inventory's transport. `reuse` overrides the ssh ControlMaster setting.
pub fn transport(
    inv: &Inventory,
    seed: u64,
    pace: f64,
    reuse: Option<bool>,
) -> Result<Box<dyn Transport>, AppError> {
    let inner = host_transport(inv, seed, pace, reuse)?;
    // Switches reached over HTTPS (eos, nxos) take their calls beside the
    // hosts' transport; the emulated fabric answers them itself.
    if inv.transport.emulated() {
        return Ok(inner);
    }
    let mut api = Vec::new();
    for sw in inv.switches.iter().filter(|s| s.api.is_some()) {
        let t = crate::exec::https::ApiTarget::of(sw)
            .map_err(|e| AppError::Input(format!("switch {}: {e}", sw.name)))?;
        api.push((sw.name.clone(), t));
    }
    Ok(if api.is_empty() {
        inner
    } else {
        Box::new(crate::exec::apicall::Routed::new(inner, api))
    })
}

fn host_transport(
    inv: &Inventory,
    seed: u64,
    pace: f64,
    reuse: Option<bool>,
) -> Result<Box<dyn Transport>, AppError> {
    Ok(match &inv.transport {
        TransportSpec::Emulated => Box::new(crate::exec::emulated::EmulatedTransport::new(
            inv, seed, pace,
        )),
        TransportSpec::Local => Box::new(crate::exec::local::LocalTransport::default()),
        TransportSpec::Ssh(spec) => ssh_transport(inv, spec, reuse)?,
        TransportSpec::Slurm(spec) => {
            use crate::exec::slurm::{launch, SlurmTransport};
            let nodes = inv.nodes.iter().map(|n| n.name.clone());
            match spec.launcher {
                SlurmLauncher::Emulated => Box::new(SlurmTransport::new(
                    Box::new(launch::Emulated::new(inv, seed, pace)),
                    nodes,
                    None,
                )),
                SlurmLauncher::Srun => {
                    let srun = launch::Srun::new(spec).map_err(|e| {
                        AppError::Input(format!(
                            "cannot prepare the Slurm plan directory in {}: {e}",
                            std::env::temp_dir().display()
                        ))
                    })?;
                    let switches = ssh_transport(inv, &spec.ssh, reuse)?;
                    Box::new(SlurmTransport::new(Box::new(srun), nodes, Some(switches)))
                }
            }
        }
    })
}

fn ssh_transport(
    inv: &Inventory,
    spec: &crate::config::inventory::SshSpec,
    reuse: Option<bool>,
) -> Result<Box<dyn Transport>, AppError> {
    let mut spec = spec.clone();
    if let Some(r) = reuse {
        spec.control_master = r;
    }
    Ok(Box::new(
        crate::exec::ssh::SshTransport::new(inv, &spec).map_err(|e| {
            AppError::Input(format!(
                "cannot prepare the ssh control directory in {}: {e}",
                std::env::temp_dir().display()
            ))
        })?,
    ))
}

/// Whether the inventory's hosts are real machines a preflight can ask.
pub fn has_hosts(inv: &Inventory) -> bool {
    !inv.transport.emulated()
        && matches!(
            inv.transport,
            TransportSpec::Ssh(_) | TransportSpec::Slurm(_)
        )
}

pub(super) fn runtime() -> Result<tokio::runtime::Runtime, AppError> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| AppError::Incomplete(format!("cannot start the async runtime: {e}")))
}

/// A cancel flag that Ctrl-C and SIGTERM set, printing `note` when they do.
pub(super) fn cancel_on_signal(
    rt: &tokio::runtime::Runtime,
    note: &'static str,
) -> crate::exec::Cancel {
    cancel_channel(rt, note).1
}

/// [`cancel_on_signal`], with the sender for other reasons to stop (an
/// output that cannot be written).
pub(super) fn cancel_channel(
    rt: &tokio::runtime::Runtime,
    note: &'static str,
) -> (tokio::sync::watch::Sender<bool>, crate::exec::Cancel) {
    let (tx, rx) = tokio::sync::watch::channel(false);
    let signal_tx = tx.clone();
    rt.spawn(async move {
        use tokio::signal::unix::{signal, SignalKind};
        // SIGHUP too: a dropped ssh session to the controller must not
        // kill a run that has ports down without healing them.
        let mut others: Vec<_> = [
            SignalKind::terminate(),
            SignalKind::hangup(),
            SignalKind::quit(),
        ]
        .into_iter()
        .filter_map(|k| signal(k).ok())
        .collect();
        let any = futures_any(&mut others);
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = any => {}
        }
        eprintln!("{note}");
        let _ = signal_tx.send(true);
    });
    (tx, rx)
}

/// Resolves when any of `signals` arrives (never, when there are none).
async fn futures_any(signals: &mut [tokio::signal::unix::Signal]) {
    if signals.is_empty() {
        return std::future::pending().await;
    }
    std::future::poll_fn(|cx| {
        for s in signals.iter_mut() {
            if s.poll_recv(cx).is_ready() {
                return std::task::Poll::Ready(());
            }
        }
        std::task::Poll::Pending
    })
    .await
}

/// One line per host: ready, or what is wrong.
pub fn render_preflight(reports: &[HostReport]) -> String {
    let mut s = String::new();
    for r in reports {
        let what = if r.switch { "switch" } else { "node" };
        if !r.reachable {
            s.push_str(&format!(
                "{:<12} {what:<6} DOWN   {}\n",
                r.host,
                r.error.as_deref().unwrap_or("no answer")
            ));
            continue;
        }
        let rdma: Vec<&str> = r.rdma.iter().map(|d| d.name.as_str()).collect();
        let skew = r
            .clock_skew_s
            .map(|k| format!("{k:+.3}s±{:.3}", r.skew_uncertainty_s.unwrap_or(0.0)))
            .unwrap_or_else(|| "-".into());
        s.push_str(&format!(
            "{:<12} {what:<6} {:<6} rtt {:.3}s  clock {skew}  rdma [{}]  {}\n",
            r.host,
            if r.problems.is_empty() {
                "ready"
            } else {
                "NOT"
            },
            r.round_trip_s,
            rdma.join(","),
            r.problems.join("; ")
        ));
    }
    let bad = reports.iter().filter(|r| !r.problems.is_empty()).count();
    s.push_str(&format!(
        "{} of {} hosts ready\n",
        reports.len() - bad,
        reports.len()
    ));
    s
}

/// `rocegate preflight`: asks every host the plan touches, once, and exits
/// 0 only if all are ready.
pub fn preflight_cmd(a: &PreflightArgs) -> Result<i32, AppError> {
    let i = inputs::load_seeded(
        a.input.inventory.as_deref(),
        a.input.suite.as_deref(),
        a.narrow.seed,
    )?;
    if !has_hosts(&i.inventory) {
        return Err(AppError::Input(format!(
            "{}: the preflight asks real hosts over ssh; this inventory's transport has none",
            i.inventory.source.path
        )));
    }
    let p = crate::plan::build(&i.suite, &i.inventory, &narrowing(&a.narrow), a.narrow.seed)?;
    let t = transport(&i.inventory, a.narrow.seed, 0.0, None)?;
    let rt = runtime()?;
    let cancel = cancel_on_signal(&rt, "rocegate: interrupted: stopping the preflight");
    let targets = preflight::targets(&i.inventory, &i.suite, &p);
    let reports = rt.block_on(preflight::run(t.as_ref(), &targets, cancel));
    let mut inv = i.inventory.clone();
    let notes = preflight::resolve_gids(&mut inv, &reports);
    if a.json {
        out(&(serde_json::to_string_pretty(&reports).unwrap_or_default() + "\n"));
    } else {
        out(&render_preflight(&reports));
        for n in &notes {
            out(&format!("gid_index discover: {n}\n"));
        }
    }
    let ready = reports.iter().all(|r| r.problems.is_empty()) && notes.is_empty();
    Ok(if ready { PASS } else { GATE_FAILED })
}

/// `rocegate audit`: the configuration and cabling audit on its own, over
/// the inventory's transport, judged under the default gate policy. Prints
/// every component that is not as expected, with each finding, then a
/// count; exits 1 when any verdict fails the default gate.
pub fn audit_cmd(a: &AuditArgs) -> Result<i32, AppError> {
    let (path, text) = inputs::read(a.inventory.as_deref(), inputs::DEFAULT_INVENTORY)?;
    let inv = crate::config::check::parse_inventory(&path, &text)?;
    let nodes: Vec<crate::config::model::NodeId> = match &a.nodes {
        None => (0..inv.nodes.len()).collect(),
        Some(expr) => crate::config::hostlist::expand(expr)
            .map_err(|e| AppError::Input(format!("--nodes: {e}")))?
            .iter()
            .map(|n| {
                inv.node_by_name.get(n).copied().ok_or_else(|| {
                    AppError::Input(format!("--nodes: node \"{n}\" is not in {path}"))
                })
            })
            .collect::<Result<_, _>>()?,
    };
    for (i, c) in a.checks.iter().enumerate() {
        let family = c.split('.').next().unwrap_or_default();
        if !["nic", "switch", "cabling", "optics"].contains(&family) {
            return Err(AppError::Input(format!(
                "--check {c}: checks start with nic, switch, cabling or optics (argument {})",
                i + 1
            )));
        }
    }
    let opts = crate::audit::Options {
        checks: a.checks.clone(),
        ..Default::default()
    };
    let t = transport(&inv, a.seed, 0.0, None)?;
    let rt = runtime()?;
    let cancel = cancel_on_signal(&rt, "rocegate: interrupted: stopping the audit");
    let findings = rt.block_on(crate::audit::run(
        t.as_ref(),
        &inv,
        &nodes,
        "audit",
        &opts,
        cancel,
        &mut |_| None,
    ));
    let gate = crate::config::suite::Gate::default();
    let verdicts = crate::score::findings::verdicts(&gate, "audit", &findings);
    if a.json {
        out(&(serde_json::to_string_pretty(&findings).unwrap_or_default() + "\n"));
    } else {
        out(&crate::report::audit_text(&gate, &findings, &verdicts));
    }
    let failed = verdicts
        .iter()
        .any(|v| crate::score::fails_gate(&gate, v.verdict));
    Ok(if failed { GATE_FAILED } else { PASS })
}

/// `rocegate exec -- CMD`: runs one command on every chosen host at once
/// (all within the transport's limits), prints each output line prefixed
/// with its host as pdsh does, and exits 1 if any host failed.
pub fn exec_cmd(a: &ExecArgs) -> Result<i32, AppError> {
    let (path, text) = inputs::read(a.inventory.as_deref(), inputs::DEFAULT_INVENTORY)?;
    let inv = crate::config::check::parse_inventory(&path, &text)?;
    if a.command.is_empty() {
        return Err(AppError::Input("exec: give a command after --".into()));
    }
    let timeout =
        parse_duration(&a.timeout).map_err(|e| AppError::Input(format!("--timeout: {e}")))?;
    let hosts = hosts(&inv, a)?;
    // A master connection only pays off when a host runs more than one
    // command: for a single fan-out, setting it up costs more than it saves.
    let reuse = !a.no_reuse && a.repeat > 1;
    let t = transport(&inv, 1, 0.0, Some(reuse))?;
    let rt = runtime()?;
    let cancel = cancel_on_signal(&rt, "rocegate: interrupted: killing the remote commands");
    let batch: Vec<StepCommands> = hosts
        .iter()
        .map(|h| StepCommands {
            invocations: vec![Invocation {
                host: h.clone(),
                argv: a.command.clone(),
                env: Vec::new(),
                role: Role::Probe,
                timeout,
                at: Duration::ZERO,
            }],
        })
        .collect();
    let start = Instant::now();
    let mut failed = std::collections::BTreeSet::new();
    let runs = a.repeat.max(1);
    for run in 1..=runs {
        let t0 = Instant::now();
        let outs = rt.block_on(t.run_batch(&batch, cancel.clone()));
        if runs > 1 {
            eprintln!(
                "exec: run {run}/{runs}: {} hosts in {:.1} ms",
                hosts.len(),
                t0.elapsed().as_secs_f64() * 1000.0
            );
        }
        for (h, o) in hosts.iter().zip(outs) {
            let o = o.into_iter().next().unwrap_or_default();
            if !a.quiet {
                for l in o.stdout.lines() {
                    out(&format!("{h}: {l}\n"));
                }
                for l in o.stderr.lines() {
                    eprintln!("{h}: {l}");
                }
            }
            if let Some(f) = &o.failure {
                eprintln!("{h}: {f}");
                failed.insert(h.clone());
            } else if o.exit != Some(0) {
                eprintln!("{h}: {}", crate::exec::exit_text(o.exit));
                failed.insert(h.clone());
            }
        }
        if *cancel.borrow() {
            break;
        }
    }
    let wall = start.elapsed().as_secs_f64();
    eprintln!(
        "exec: {} hosts x {runs} run(s), {} failed, {wall:.3}s wall",
        hosts.len(),
        failed.len(),
    );
    Ok(if failed.is_empty() { PASS } else { GATE_FAILED })
}

/// The hosts `exec` runs on: `--nodes` (a hostlist of nodes or switches),
/// else every node; `--switches` adds every switch.
fn hosts(inv: &Inventory, a: &ExecArgs) -> Result<Vec<String>, AppError> {
    let mut hosts: Vec<String> = match &a.nodes {
        Some(expr) => {
            let names = crate::config::hostlist::expand(expr)
                .map_err(|e| AppError::Input(format!("--nodes {expr}: {e}")))?;
            for n in &names {
                if !inv.node_by_name.contains_key(n) && !inv.switch_by_name.contains_key(n) {
                    return Err(AppError::Input(format!(
                        "--nodes: {n} is neither a node nor a switch of {}",
                        inv.source.path
                    )));
                }
            }
            names
        }
        None => inv.nodes.iter().map(|n| n.name.clone()).collect(),
    };
    if a.switches {
        hosts.extend(inv.switches.iter().map(|s| s.name.clone()));
    }
    hosts.dedup();
    Ok(hosts)
}
