//! `rocegate run` as a session built in steps, the way ripgrep builds its
//! working parts from parsed arguments: each step takes what the one
//! before made and either refuses, with the error the user sees, or hands
//! on what the next one needs.
//!
//! 1. [`Checked::new`]: the inputs loaded and the plan built and checked
//!    against `--deadline`, `--allow-disruptive` and `--pace`. Nothing is
//!    touched.
//! 2. [`Checked::hold`]: the fabric's run lock, the transport, and the
//!    fault journal (refused while it holds open faults).
//! 3. [`Held::record`]: the run directory claimed, its sinks, the runtime,
//!    and the cancel cord that signals and failed writes pull.
//! 4. [`Session::execute`]: preflight, the engine, and healing whatever
//!    the run opened, however it ended.
//! 5. [`Session::finish`]: the baseline comparison, the exit code, the
//!    run_finished record, the outputs and what the terminal says, gate
//!    first.
//!
//! What each step does inside lives elsewhere (`faults`, `rundir`,
//! `remote`, the runner); this file only orders them.

use crate::audit::preflight::HostReport;
use crate::cli::RunArgs;
use crate::exec::{Cancel, Transport};
use crate::exit::{AppError, GATE_FAILED, INCOMPLETE, PASS};
use crate::fault::live::Control;
use crate::fault::lock::FabricLock;
use crate::inputs::{self, Inputs};
use crate::plan::{self, Plan};
use crate::report::events::{Record, RunFinished, RunInputs};
use crate::report::progress::Progress;
use crate::report::sink::Sink;
use crate::report::terminal;
use crate::runner::Outcome;

use super::rundir::{self, OutputFailure, RunSinks};
use super::{faults, remote};
use super::{narrowing, out, rfc3339, utc_now};

/// Inputs and plan, checked against the command line.
pub struct Checked<'a> {
    args: &'a RunArgs,
    inputs: Inputs,
    plan: Plan,
}

impl<'a> Checked<'a> {
    pub fn new(a: &'a RunArgs) -> Result<Self, AppError> {
        super::parse_deadline(a.narrow.deadline.as_deref())?;
        let inputs = inputs::load_seeded(
            a.input.inventory.as_deref(),
            a.input.suite.as_deref(),
            a.narrow.seed,
        )?;
        let plan = plan::build(
            &inputs.suite,
            &inputs.inventory,
            &narrowing(&a.narrow),
            a.narrow.seed,
        )?;
        super::check_deadline(&plan, a.narrow.deadline.as_deref())?;
        super::check_disruptive(&plan, &inputs.inventory, a.allow_disruptive)?;
        if a.apply_drain
            && !matches!(&inputs.inventory.transport, crate::config::inventory::TransportSpec::Slurm(s) if s.launcher == crate::config::inventory::SlurmLauncher::Srun)
        {
            return Err(AppError::Input(
                "--apply-drain drains nodes through Slurm, and the inventory's transport is not slurm (srun): leave it out and run actions.sh by hand".into(),
            ));
        }
        if !(a.pace >= 0.0 && a.pace.is_finite()) {
            return Err(AppError::Input(format!(
                "--pace {}: must be 0 (as fast as possible) or a positive number",
                a.pace
            )));
        }
        Ok(Checked {
            args: a,
            inputs,
            plan,
        })
    }

    /// Takes the fabric for this run. One run at a time on a real fabric:
    /// a second refuses here, naming the first, before anything is
    /// touched. Faults on real devices are journaled, and a journal with
    /// open faults (a killed run) stops the run here too.
    pub fn hold(self) -> Result<Held<'a>, AppError> {
        let (a, inv) = (self.args, &self.inputs.inventory);
        let started = utc_now();
        let run_id = format!("{}-{}", rundir::stamp(started), std::process::id());
        let lock = faults::lock_fabric(inv, a.journal.as_deref(), &run_id, &rfc3339(started))?;
        let transport = remote::transport(inv, a.narrow.seed, a.pace, None)?;
        let control = match &lock {
            Some(held) => faults::open_for_run(
                inv,
                a.journal.as_deref(),
                &run_id,
                !self.plan.disruptions.is_empty(),
                held,
            )?,
            None => None,
        };
        Ok(Held {
            checked: self,
            started,
            run_id,
            _lock: lock,
            transport,
            control,
        })
    }
}

/// The fabric, held for the run.
pub struct Held<'a> {
    checked: Checked<'a>,
    started: time::OffsetDateTime,
    run_id: String,
    /// The fabric's run lock, released when the session ends.
    _lock: Option<FabricLock>,
    transport: Box<dyn Transport>,
    /// The fault journal, on a real fabric with faults to send.
    control: Option<Control>,
}

impl<'a> Held<'a> {
    /// Claims the run directory and sets up what records into it.
    /// Ctrl-C and SIGTERM start nothing new, stop what runs and keep what
    /// finished; a failed output write pulls the same cord.
    pub fn record(self) -> Result<Session<'a>, AppError> {
        let a = self.checked.args;
        let dir = rundir::claim_run_dir(
            a.out.as_deref(),
            &self.checked.inputs.suite.name,
            self.started,
            &self.run_id,
        )?;
        let path = dir.join("results.jsonl");
        let jsonl = crate::report::jsonl::JsonlWriter::create(&path)
            .map_err(|e| AppError::Incomplete(format!("{}: cannot write: {e}", path.display())))?;
        let rt = remote::runtime()?;
        let (cancel_tx, cancel) = remote::cancel_channel(
            &rt,
            "rocegate: interrupted: stopping running steps, keeping finished results",
        );
        let failure = OutputFailure::new(cancel_tx);
        let sinks = RunSinks {
            jsonl,
            path,
            records: Vec::new(),
            failure: failure.clone(),
            dir: dir.clone(),
            current_test: None,
        };
        Ok(Session {
            progress: Progress::new(a.progress),
            held: self,
            dir,
            rt,
            cancel,
            failure,
            sinks,
        })
    }
}

/// A run with its directory, its sinks and its runtime.
pub struct Session<'a> {
    held: Held<'a>,
    dir: std::path::PathBuf,
    rt: tokio::runtime::Runtime,
    cancel: Cancel,
    failure: OutputFailure,
    sinks: RunSinks,
    progress: Progress,
}

/// How the engine's part of a run ended.
pub struct Ran {
    outcome: Outcome,
    /// Faults this run opened and could not heal.
    unhealed: Option<String>,
}

impl Session<'_> {
    /// Real hosts are asked first, all at once: who answers, what is
    /// installed, and the GID index of NICs set to `discover`. Returns the
    /// inventory the engine runs on (GIDs resolved) and the answers.
    fn preflight(&self) -> (crate::config::model::Inventory, Vec<HostReport>) {
        let i = &self.held.checked.inputs;
        let mut inv = i.inventory.clone();
        if !remote::has_hosts(&inv) {
            return (inv, Vec::new());
        }
        let targets = crate::audit::preflight::targets(&inv, &i.suite, &self.held.checked.plan);
        let reports = self.rt.block_on(crate::audit::preflight::run(
            self.held.transport.as_ref(),
            &targets,
            self.cancel.clone(),
        ));
        crate::audit::preflight::resolve_gids(&mut inv, &reports);
        (inv, reports)
    }

    /// The run_started record, with the inputs `report` re-judges with.
    fn run_started(&self, engine: &crate::runner::Engine) -> Record {
        let (a, i) = (self.held.checked.args, &self.held.checked.inputs);
        let mut rs = engine.run_started(a.narrow.seed, rfc3339(self.held.started));
        rs.run_id = self.held.run_id.clone();
        let n = narrowing(&a.narrow);
        rs.inputs = Some(Box::new(RunInputs {
            inventory: i.inventory_text.clone(),
            suite: i.suite_text.clone(),
            only: n.only,
            nodes: n.nodes,
            exclude: n.exclude,
            skip_faults: n.skip_faults,
        }));
        Record::RunStarted(rs)
    }

    /// Preflight and the engine, then healing what the run opened. A panic
    /// inside the engine still heals before it goes on unwinding.
    pub fn execute(&mut self) -> Ran {
        let (inv, preflight) = self.preflight();
        let held = &self.held;
        let engine = crate::runner::Engine {
            inv: &inv,
            suite: &held.checked.inputs.suite,
            plan: &held.checked.plan,
            transport: held.transport.as_ref(),
            faults: held.control.as_ref(),
            places: crate::score::counters::Places::new(&inv),
        };
        let mut head = vec![self.run_started(&engine)];
        head.extend(preflight.into_iter().map(Record::Preflight));
        let (sinks, progress) = (&mut self.sinks, &mut self.progress);
        let cancel = self.cancel.clone();
        let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            self.rt.block_on(async {
                for r in &head {
                    sinks.record(r);
                    progress.record(r);
                }
                sinks.provisional_junit();
                let mut all: [&mut dyn Sink; 2] = [sinks, progress];
                engine.run(cancel, &mut all).await
            })
        }));
        let unhealed = held.control.as_ref().and_then(|c| {
            let path = &held.checked.inputs.inventory.source.path;
            faults::heal_after_run(&self.rt, held.transport.as_ref(), c, path).err()
        });
        if let Some(e) = &unhealed {
            eprintln!("rocegate: {e}");
        }
        match run {
            Ok(outcome) => Ran { outcome, unhealed },
            Err(panic) => std::panic::resume_unwind(panic),
        }
    }

    /// Closes the run and says how it went: the exit code.
    pub fn finish(mut self, ran: Ran) -> Result<i32, AppError> {
        let (code, write_failed) = self.close(&ran);
        let code = self.account(code);
        if let Some(e) = &write_failed {
            eprintln!("rocegate: the run stopped early: {e}; results.jsonl holds every record written before it");
        }
        Ok(code)
    }

    /// Judges the suite's baseline section on what the run recorded, and
    /// closes the log with run_finished. Returns the exit code, and the
    /// output write that failed during the run, if one did.
    fn close(&mut self, ran: &Ran) -> (i32, Option<String>) {
        let mut gate_passed = ran.outcome.gate_passed;
        if !ran.outcome.interrupted {
            gate_passed &= self.judge_baseline();
        }
        let write_failed = self.failure.get();
        let incomplete =
            ran.outcome.interrupted || ran.unhealed.is_some() || write_failed.is_some();
        let code = if incomplete {
            INCOMPLETE
        } else if gate_passed {
            PASS
        } else {
            GATE_FAILED
        };
        // Counted from what was recorded: after a failed write, verdicts the
        // engine made but results.jsonl does not hold are not claimed.
        let mut counts = crate::score::Counts::default();
        for r in &self.sinks.records {
            if let Record::Verdict(v) = r {
                counts.add(v.verdict);
            }
        }
        let fin = Record::RunFinished(RunFinished {
            ended_at: rfc3339(utc_now()),
            interrupted: incomplete,
            counts,
            gate_passed: gate_passed && !incomplete,
            exit_code: code,
            reason: write_failed.clone().or(ran.unhealed.clone()).or_else(|| {
                ran.outcome
                    .interrupted
                    .then(|| "interrupted by a signal".to_string())
            }),
        });
        self.sinks.record(&fin);
        self.progress.record(&fin);
        (code, write_failed)
    }

    /// Writes junit.xml, report.html and summary.json, then prints the
    /// account of the run (`report::terminal`), gate first. Reports that
    /// cannot be written make the run incomplete, and that is its gate
    /// line. Returns the exit code.
    fn account(self, code: i32) -> i32 {
        let Session {
            held,
            dir,
            rt,
            sinks,
            ..
        } = self;
        drop(rt);
        let (dir_s, records) = (dir.display().to_string(), &sinks.records);
        let verbose = held.checked.args.verbose;
        match rundir::write_outputs(&dir, records) {
            Ok(()) => {
                out(&terminal::gate_text(records));
                out(&terminal::body(records, &dir_s, verbose));
                out(&terminal::reports_text(&dir_s, None));
                super::write_exports(&dir, records, &held.checked.args.export);
                if let (true, crate::config::inventory::TransportSpec::Slurm(spec)) = (
                    held.checked.args.apply_drain,
                    &held.checked.inputs.inventory.transport,
                ) {
                    for line in super::drain::apply(&dir, spec) {
                        out(&format!("  {line}\n"));
                    }
                }
                code
            }
            Err(e) => {
                eprintln!("rocegate: {e}");
                out(&terminal::unwritten(records, &e));
                out(&terminal::body(records, &dir_s, verbose));
                INCOMPLETE.max(code)
            }
        }
    }

    /// The suite's baseline comparison, judged on what the run recorded and
    /// recorded with the rest. Whether it leaves the gate passed.
    fn judge_baseline(&mut self) -> bool {
        let i = &self.held.checked.inputs;
        let Some(spec) = &i.suite.baseline else {
            return true;
        };
        let mut passed = true;
        let verdicts =
            super::baseline::run_verdicts(spec, &i.inventory.fabric.name, &self.sinks.records);
        for v in verdicts {
            if crate::score::fails_gate(&i.suite.gate, v.verdict) {
                passed = false;
            }
            let r = Record::Verdict(v);
            self.sinks.record(&r);
            self.progress.record(&r);
        }
        passed
    }
}
