//! `rocegate run --campaign`: each fabric is one `rocegate run` of this
//! binary (the ordinary run path, with its own run directory, fault
//! journal, run lock and healing), started when a lane is free, nothing it
//! shares a device with is running, and its re-estimated duration fits the
//! time left.
//!
//! Interrupts: the campaign catches SIGINT, SIGTERM, SIGHUP and SIGQUIT,
//! starts nothing more, and forwards SIGINT to every run in flight, which
//! stops its steps and heals its faults as an interrupted single run does.
//! The runs are in their own process groups, so a Ctrl-C at the terminal
//! reaches them once, through the campaign, and a killed campaign leaves
//! them to finish and heal on their own. A run is signalled only once its
//! own handler is in place (its results.jsonl has a record, or it has run
//! for [`HANDLER_GRACE`]), so the signal never kills it outright.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use time::OffsetDateTime;

use super::file::{fmt, Campaign, Fabric, Policy};
use super::output::{self, BaselineOutcome, CampaignOutcome, FabricOutcome, Status};
use crate::cli::RunArgs;
use crate::exit::{AppError, GATE_FAILED, INCOMPLETE, PASS};

/// How long a run may go unsignalled for want of a first record: by then
/// its signal handler has long been installed.
pub const HANDLER_GRACE: Duration = Duration::from_secs(5);

const POLL: Duration = Duration::from_millis(50);

struct Running {
    child: Child,
    wall_start: Instant,
    /// The campaign clock when it started.
    clock_start: Duration,
    started_at: OffsetDateTime,
    scaled: Duration,
    /// Why the campaign wants it stopped, once it does.
    stop: Option<String>,
    signalled: bool,
}

enum State {
    Pending,
    Running(Box<Running>),
    Done(Box<FabricOutcome>),
}

struct Driver<'a> {
    c: &'a Campaign,
    dir: PathBuf,
    bin: PathBuf,
    args: &'a RunArgs,
    states: Vec<State>,
    conflicts: Vec<Vec<bool>>,
    wall0: Instant,
    start_abs: OffsetDateTime,
    /// When the window opened (before `start_abs` when started late).
    window_start: OffsetDateTime,
    deadline: OffsetDateTime,
    /// The latest end, on the campaign clock, of a finished fabric.
    clock: Duration,
    measured_sum: f64,
    estimated_sum: f64,
    interrupted: bool,
    stopped: Option<String>,
    no_more: bool,
}

/// `rocegate run --campaign FILE`.
pub fn run(a: &RunArgs, path: &str) -> Result<i32, AppError> {
    super::check_narrowing(
        &a.narrow,
        a.input.inventory.as_deref(),
        a.input.suite.as_deref(),
    )?;
    if a.journal.is_some() {
        return Err(AppError::Input(
            "--campaign cannot be combined with --journal: each fabric keeps its own journal (the default per fabric name)".into(),
        ));
    }
    if !(a.pace >= 0.0 && a.pace.is_finite()) {
        return Err(AppError::Input(format!(
            "--pace {}: must be 0 (as fast as possible) or a positive number",
            a.pace
        )));
    }
    let c = super::file::load(path, a.narrow.seed)?;
    super::refused(&c)?;
    let prod: Vec<&str> = c
        .fabrics
        .iter()
        .filter(|f| f.inventory.is_production() && !f.plan.disruptions.is_empty())
        .map(|f| f.name.as_str())
        .collect();
    if !prod.is_empty() && !a.allow_disruptive {
        return Err(AppError::Input(format!(
            "campaign {}: {} are environment: production with disruptive steps; rerun with --allow-disruptive after reading `rocegate plan --campaign {path}`",
            c.name,
            prod.join(", ")
        )));
    }
    let p = super::make_plan(&c);
    let now = OffsetDateTime::now_utc();
    let (start_abs, deadline) = c.window.resolve(now);
    if start_abs > now {
        let wait: Duration = (start_abs - now).try_into().unwrap_or_default();
        return Err(AppError::Input(format!(
            "campaign {}: the window opens at {} (in {}): start the campaign then; `rocegate plan --campaign {path}` checks it now",
            c.name,
            super::file::at(start_abs),
            fmt(wait)
        )));
    }
    let dir = claim_dir(a.out.as_deref(), &c.name, now)?;
    let bin = std::env::current_exe().map_err(|e| {
        AppError::Incomplete(format!(
            "cannot find the rocegate binary to run each fabric: {e}"
        ))
    })?;
    let signalled = Arc::new(AtomicBool::new(false));
    let _rt = listen(signalled.clone())?;
    super::out(&super::plan_text(&c, &p));
    if let Some(m) = super::no_fit(&c, &p) {
        super::out(&format!(
            "warning: {m}\nfabrics that no longer fit when their turn comes are skipped, not started\n"
        ));
    }
    super::out(&format!("campaign: running into {}\n", dir.display()));
    let mut d = Driver {
        c: &c,
        dir,
        bin,
        args: a,
        states: c.fabrics.iter().map(|_| State::Pending).collect(),
        conflicts: p.conflicts,
        wall0: Instant::now(),
        start_abs: now,
        window_start: start_abs,
        deadline,
        clock: Duration::ZERO,
        measured_sum: 0.0,
        estimated_sum: 0.0,
        interrupted: false,
        stopped: None,
        no_more: false,
    };
    d.drive(&signalled);
    let outcome = d.outcome();
    if let Err(e) = output::write(&d.dir, &outcome) {
        eprintln!("rocegate: {e}");
        super::out(&output::terminal(&outcome));
        return Ok(INCOMPLETE);
    }
    super::out(&output::terminal(&outcome));
    Ok(outcome.exit_code)
}

/// Sets `flag` on SIGINT, SIGTERM, SIGHUP or SIGQUIT, for as long as the
/// returned runtime lives.
fn listen(flag: Arc<AtomicBool>) -> Result<tokio::runtime::Runtime, AppError> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .map_err(|e| AppError::Incomplete(format!("cannot start the signal listener: {e}")))?;
    use tokio::signal::unix::{signal, SignalKind};
    let kinds = [
        SignalKind::interrupt(),
        SignalKind::terminate(),
        SignalKind::hangup(),
        SignalKind::quit(),
    ];
    for k in kinds {
        // Registered here, before any fabric starts, so no signal is missed.
        let mut s = rt
            .block_on(async { signal(k) })
            .map_err(|e| AppError::Incomplete(format!("cannot listen for signals: {e}")))?;
        let flag = flag.clone();
        rt.spawn(async move {
            while s.recv().await.is_some() {
                if !flag.swap(true, Ordering::SeqCst) {
                    eprintln!("rocegate: campaign interrupted: starting no more fabrics, stopping and healing the runs in flight");
                }
            }
        });
    }
    Ok(rt)
}

/// The campaign directory: `--out`, else `reports/campaign-<name>-<UTC
/// time>`. An existing directory must be empty: a campaign never mixes
/// its runs with another's.
fn claim_dir(out: Option<&str>, name: &str, now: OffsetDateTime) -> Result<PathBuf, AppError> {
    let safe: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect();
    let dir = match out {
        Some(o) => PathBuf::from(o),
        None => PathBuf::from(format!(
            "reports/campaign-{safe}-{}",
            crate::app::rundir::stamp(now)
        )),
    };
    let cannot = |e: std::io::Error| {
        AppError::Input(format!(
            "{}: cannot create the campaign directory: {e}",
            dir.display()
        ))
    };
    if dir.is_dir() {
        let empty = std::fs::read_dir(&dir).map_err(cannot)?.next().is_none();
        if !empty {
            return Err(AppError::Input(format!(
                "{}: not empty; give --out a new or empty directory",
                dir.display()
            )));
        }
    } else {
        std::fs::create_dir_all(&dir).map_err(cannot)?;
    }
    Ok(dir)
}

impl Driver<'_> {
    fn elapsed(&self) -> Duration {
        self.wall0.elapsed().max(self.clock)
    }

    fn now_abs(&self) -> OffsetDateTime {
        self.start_abs + self.elapsed()
    }

    fn ratio(&self) -> f64 {
        if self.estimated_sum > 0.0 && self.measured_sum > 0.0 {
            self.measured_sum / self.estimated_sum
        } else {
            1.0
        }
    }

    fn running(&self) -> impl Iterator<Item = usize> + '_ {
        self.states
            .iter()
            .enumerate()
            .filter(|(_, s)| matches!(s, State::Running(_)))
            .map(|(i, _)| i)
    }

    fn drive(&mut self, signalled: &AtomicBool) {
        loop {
            if signalled.load(Ordering::SeqCst) && !self.interrupted {
                self.interrupted = true;
                self.no_more = true;
                self.stop_running("the campaign was interrupted");
            }
            self.signal_ready();
            self.reap();
            if !self.no_more {
                self.start_next();
            }
            if self.no_more {
                self.close_pending();
            }
            let pending = self.states.iter().any(|s| matches!(s, State::Pending));
            if !pending && self.running().next().is_none() {
                return;
            }
            std::thread::sleep(POLL);
        }
    }

    fn stop_running(&mut self, why: &str) {
        for s in &mut self.states {
            if let State::Running(r) = s {
                r.stop.get_or_insert_with(|| why.to_string());
            }
        }
    }

    /// Forwards SIGINT to each run the campaign wants stopped, once its
    /// handler is in place.
    fn signal_ready(&mut self) {
        for (i, s) in self.states.iter_mut().enumerate() {
            let State::Running(r) = s else { continue };
            if r.stop.is_none() || r.signalled {
                continue;
            }
            let results = self.dir.join(&self.c.fabrics[i].name).join("results.jsonl");
            let ready = std::fs::metadata(&results)
                .map(|m| m.len() > 0)
                .unwrap_or(false)
                || r.wall_start.elapsed() >= HANDLER_GRACE;
            if ready {
                // SAFETY: signalling our own child, which has not been reaped.
                unsafe {
                    libc::kill(r.child.id() as i32, libc::SIGINT);
                }
                r.signalled = true;
            }
        }
    }

    fn reap(&mut self) {
        for i in 0..self.states.len() {
            let exited = match &mut self.states[i] {
                State::Running(r) => match r.child.try_wait() {
                    Ok(Some(st)) => Some(Ok(st)),
                    Ok(None) => None,
                    Err(e) => Some(Err(e)),
                },
                _ => None,
            };
            let Some(status) = exited else { continue };
            let State::Running(r) = std::mem::replace(&mut self.states[i], State::Pending) else {
                continue;
            };
            let o = self.finished(i, *r, status);
            let line = format!(
                "campaign: {} {} (exit {}) in {} of {} estimated{}\n",
                o.name,
                o.status.word(),
                o.run_exit_code
                    .map(|c| c.to_string())
                    .unwrap_or_else(|| "-".into()),
                o.measured_s
                    .map(|s| fmt(Duration::from_secs_f64(s)))
                    .unwrap_or_default(),
                fmt(Duration::from_secs_f64(o.estimate_s)),
                o.reason
                    .as_ref()
                    .map(|r| format!(": {r}"))
                    .unwrap_or_default()
            );
            super::out(&line);
            let failed = !matches!(o.status, Status::Passed);
            let (name, status) = (o.name.clone(), o.status);
            self.states[i] = State::Done(Box::new(o));
            if failed && !self.interrupted && status != Status::Interrupted {
                self.apply_policy(&name, status);
            }
            let snapshot = self.outcome();
            if let Err(e) = output::write(&self.dir, &snapshot) {
                eprintln!("rocegate: {e}");
            }
        }
    }

    fn apply_policy(&mut self, name: &str, status: Status) {
        let why = format!(
            "{name} did not pass ({}) and on_failure is {}",
            status.word().to_lowercase(),
            self.c.policy.name()
        );
        match self.c.policy {
            Policy::Continue => {}
            Policy::SkipRest => {
                self.no_more = true;
                self.stopped.get_or_insert(why);
            }
            Policy::Stop => {
                self.no_more = true;
                self.stop_running(&why);
                self.stopped.get_or_insert(why);
            }
        }
    }

    /// Marks every fabric not started: skipped after a failure under the
    /// policy, not run after an interrupt.
    fn close_pending(&mut self) {
        for i in 0..self.states.len() {
            if !matches!(self.states[i], State::Pending) {
                continue;
            }
            let (status, reason) = if self.interrupted {
                (
                    Status::NotRun,
                    "not started: the campaign was interrupted".to_string(),
                )
            } else {
                (
                    Status::Skipped,
                    format!(
                        "not started: {}",
                        self.stopped
                            .clone()
                            .unwrap_or_else(|| "the campaign stopped".into())
                    ),
                )
            };
            self.states[i] = State::Done(Box::new(self.unstarted(i, status, reason, None)));
        }
    }

    fn start_next(&mut self) {
        for i in 0..self.states.len() {
            if !matches!(self.states[i], State::Pending) {
                continue;
            }
            if self.running().count() >= self.c.parallel {
                return;
            }
            if self.running().any(|j| self.conflicts[i][j]) {
                continue;
            }
            let f = &self.c.fabrics[i];
            let scaled = f.plan.estimate.mul_f64(self.ratio());
            let now = self.now_abs();
            let left: Duration = (self.deadline - now).try_into().unwrap_or_default();
            if scaled > left {
                let reason = if left.is_zero() {
                    format!(
                        "skipped: the deadline {} has passed",
                        super::file::at(self.deadline)
                    )
                } else {
                    let basis = if self.estimated_sum > 0.0 {
                        format!(
                            "{} scaled by {:.2}, measured/estimated of the fabrics finished so far",
                            fmt(f.plan.estimate),
                            self.ratio()
                        )
                    } else {
                        "the plan's estimate; no fabric has finished to scale it by".to_string()
                    };
                    format!(
                        "skipped: estimated {} ({basis}) but only {} left before the deadline {}",
                        fmt(scaled),
                        fmt(left),
                        super::file::at(self.deadline)
                    )
                };
                super::out(&format!("campaign: {} {reason}\n", f.name));
                self.states[i] = State::Done(Box::new(self.unstarted(
                    i,
                    Status::Skipped,
                    reason,
                    Some(scaled),
                )));
                continue;
            }
            super::out(&format!(
                "campaign: starting {} (estimate {}, {} left before the deadline)\n",
                f.name,
                fmt(scaled),
                fmt(left)
            ));
            match self.spawn(f) {
                Ok(child) => {
                    self.states[i] = State::Running(Box::new(Running {
                        child,
                        wall_start: Instant::now(),
                        clock_start: self.elapsed(),
                        started_at: OffsetDateTime::now_utc(),
                        scaled,
                        stop: None,
                        signalled: false,
                    }))
                }
                Err(e) => {
                    let o = self.unstarted(i, Status::NotRun, e, Some(scaled));
                    self.states[i] = State::Done(Box::new(o));
                    self.apply_policy(&f.name, Status::NotRun);
                }
            }
        }
    }

    fn spawn(&self, f: &Fabric) -> Result<Child, String> {
        let log = self.dir.join(format!("{}.log", f.name));
        let file = std::fs::File::create(&log)
            .map_err(|e| format!("{}: cannot write: {e}", log.display()))?;
        let err = file
            .try_clone()
            .map_err(|e| format!("{}: cannot write: {e}", log.display()))?;
        let mut cmd = Command::new(&self.bin);
        cmd.arg("run")
            .arg("--inventory")
            .arg(&f.inventory_path)
            .arg("--suite")
            .arg(&f.suite_path)
            .arg("--out")
            .arg(self.dir.join(&f.name))
            .args(["--progress", "lines"])
            .arg("--seed")
            .arg(self.args.narrow.seed.to_string())
            .arg("--pace")
            .arg(self.args.pace.to_string());
        if self.args.allow_disruptive {
            cmd.arg("--allow-disruptive");
        }
        if self.args.verbose {
            cmd.arg("--verbose");
        }
        cmd.stdin(Stdio::null())
            .stdout(Stdio::from(file))
            .stderr(Stdio::from(err))
            .process_group(0);
        cmd.spawn()
            .map_err(|e| format!("cannot start {}: {e}", self.bin.display()))
    }

    fn unstarted(
        &self,
        i: usize,
        status: Status,
        reason: String,
        scaled: Option<Duration>,
    ) -> FabricOutcome {
        let f = &self.c.fabrics[i];
        FabricOutcome {
            name: f.name.clone(),
            fabric: f.inventory.fabric.name.clone(),
            inventory: f.inventory_path.clone(),
            suite: f.suite_path.clone(),
            status,
            gate: "incomplete",
            exit_code: INCOMPLETE,
            run_exit_code: None,
            run_dir: None,
            report: None,
            log: self
                .dir
                .join(format!("{}.log", f.name))
                .is_file()
                .then(|| format!("{}.log", f.name)),
            estimate_s: f.plan.estimate.as_secs_f64(),
            scaled_estimate_s: scaled.map(|d| d.as_secs_f64()),
            measured_s: None,
            wall_s: None,
            measured_over_estimate: None,
            started_at: None,
            ended_at: None,
            suspects: Vec::new(),
            baseline: None,
            reason: Some(reason),
        }
    }

    /// What a finished run left: its exit code, summary.json, how long it
    /// took, its baseline comparison, and its journal.
    fn finished(
        &mut self,
        i: usize,
        r: Running,
        status: std::io::Result<std::process::ExitStatus>,
    ) -> FabricOutcome {
        let f = &self.c.fabrics[i];
        let wall = r.wall_start.elapsed();
        let run_dir = self.dir.join(&f.name);
        let code = status.as_ref().ok().and_then(|s| s.code());
        let summary: Option<serde_json::Value> =
            std::fs::read_to_string(run_dir.join("summary.json"))
                .ok()
                .and_then(|t| serde_json::from_str(&t).ok());
        let own_clock = run_clock(&run_dir);
        let measured = wall.max(own_clock);
        let mut o = self.unstarted(i, Status::Incomplete, String::new(), Some(r.scaled));
        o.reason = None;
        o.run_exit_code = code;
        o.wall_s = Some(wall.as_secs_f64());
        o.measured_s = Some(measured.as_secs_f64());
        o.measured_over_estimate =
            Some(measured.as_secs_f64() / f.plan.estimate.as_secs_f64().max(1e-9));
        o.started_at = Some(super::file::at(r.started_at));
        o.ended_at = Some(super::file::at(OffsetDateTime::now_utc()));
        if run_dir.join("results.jsonl").is_file() {
            o.run_dir = Some(f.name.clone());
        }
        if run_dir.join("report.html").is_file() {
            o.report = Some(format!("{}/report.html", f.name));
        }
        o.suspects = summary
            .as_ref()
            .and_then(|s| s.get("suspects"))
            .and_then(|s| s.as_array())
            .cloned()
            .unwrap_or_default();
        let incomplete_reason = summary
            .as_ref()
            .and_then(|s| s.get("incomplete_reason"))
            .and_then(|s| s.as_str())
            .map(String::from);
        let (status, mut exit, reason) = match (code, &r.stop) {
            (_, Some(why)) if code != Some(PASS) && code != Some(GATE_FAILED) => (
                Status::Interrupted,
                INCOMPLETE,
                Some(format!(
                    "stopped: {why}; {}",
                    incomplete_reason.unwrap_or_else(|| "its run ended early".into())
                )),
            ),
            (Some(PASS), _) => (Status::Passed, PASS, None),
            (Some(GATE_FAILED), _) => (Status::Failed, GATE_FAILED, None),
            (Some(crate::exit::BAD_INPUT), _) => (
                Status::NotRun,
                INCOMPLETE,
                Some(format!(
                    "its run refused to start: {}",
                    last_error(&self.dir, &f.name)
                )),
            ),
            (Some(_), _) => (
                Status::Incomplete,
                INCOMPLETE,
                Some(incomplete_reason.unwrap_or_else(|| last_error(&self.dir, &f.name))),
            ),
            (None, _) => (
                Status::Incomplete,
                INCOMPLETE,
                Some(match &status {
                    Ok(s) => format!(
                        "its run was killed ({s}); heal what it left with `rocegate recover -i {}`",
                        f.inventory_path
                    ),
                    Err(e) => format!("cannot wait for its run: {e}"),
                }),
            ),
        };
        o.status = status;
        o.reason = reason;
        if matches!(status, Status::Passed | Status::Failed) {
            self.measured_sum += measured.as_secs_f64();
            self.estimated_sum += f.plan.estimate.as_secs_f64();
            if let Some(b) = &f.baseline {
                let cmp = self.compare(b, &super::file::baseline_ref(&self.c.path, b), &run_dir);
                match cmp.result.as_str() {
                    "regressed" => {
                        exit = exit.max(GATE_FAILED);
                        o.status = Status::Failed;
                    }
                    "error" => {
                        exit = exit.max(INCOMPLETE);
                        o.status = Status::Incomplete;
                    }
                    _ => {}
                }
                o.baseline = Some(cmp);
            }
        }
        if let Some(open) = open_faults(f) {
            exit = exit.max(INCOMPLETE);
            o.status = Status::Incomplete;
            o.reason = Some(match o.reason.take() {
                Some(r) => format!("{r}; {open}"),
                None => open,
            });
        }
        o.exit_code = exit;
        o.gate = FabricOutcome::gate_of(exit);
        self.clock = self.clock.max(r.clock_start + measured);
        o
    }

    /// `rocegate compare BASELINE RUN --json`, as an operator would run it.
    fn compare(&self, reference: &str, path: &str, run_dir: &Path) -> BaselineOutcome {
        let out = Command::new(&self.bin)
            .arg("compare")
            .arg(path)
            .arg(run_dir)
            .arg("--json")
            .stdin(Stdio::null())
            .process_group(0)
            .output();
        let mut b = BaselineOutcome {
            reference: reference.to_string(),
            result: "error".into(),
            regressions: Vec::new(),
            version_changes: Vec::new(),
            message: None,
        };
        let out = match out {
            Ok(o) => o,
            Err(e) => {
                b.message = Some(format!("cannot run compare: {e}"));
                return b;
            }
        };
        let v: Option<serde_json::Value> = serde_json::from_slice(&out.stdout).ok();
        let list = |k: &str| {
            v.as_ref()
                .and_then(|v| v.get(k))
                .and_then(|x| x.as_array())
                .cloned()
                .unwrap_or_default()
        };
        match (out.status.code(), &v) {
            (Some(0), Some(_)) => b.result = "no regression".into(),
            (Some(1), Some(_)) => {
                b.result = "regressed".into();
                b.regressions = list("regressions");
                b.message = Some(format!("{} significant regression(s)", b.regressions.len()));
            }
            _ => {
                let err = String::from_utf8_lossy(&out.stderr);
                let line = err
                    .lines()
                    .rev()
                    .find(|l| !l.trim().is_empty())
                    .unwrap_or("no output");
                b.message = Some(crate::config::diag::bound(
                    line.trim_start_matches("rocegate: "),
                ));
            }
        }
        b.version_changes = list("version_changes");
        b
    }

    fn outcome(&self) -> CampaignOutcome {
        let fabrics: Vec<FabricOutcome> = self
            .states
            .iter()
            .enumerate()
            .map(|(i, s)| match s {
                State::Done(o) => (**o).clone(),
                State::Pending => self.unstarted(i, Status::NotRun, "not started yet".into(), None),
                State::Running(_) => {
                    self.unstarted(i, Status::Incomplete, "still running".into(), None)
                }
            })
            .collect();
        let exit = output::exit_code(&fabrics, self.interrupted);
        CampaignOutcome {
            campaign: self.c.name.clone(),
            file: self.c.path.clone(),
            dir: self.dir.display().to_string(),
            window_start: super::file::at(self.window_start),
            deadline: super::file::at(self.deadline),
            parallel: self.c.parallel,
            on_failure: self.c.policy.name(),
            started_at: super::file::at(self.start_abs),
            ended_at: super::file::at(OffsetDateTime::now_utc()),
            interrupted: self.interrupted,
            stopped: self.stopped.clone(),
            gate: FabricOutcome::gate_of(exit),
            exit_code: exit,
            measured_over_estimate: (self.estimated_sum > 0.0).then(|| self.ratio()),
            fabrics,
        }
    }
}

/// How long the run took on its own clock: the end of its last step
/// (virtual seconds on the emulated fabric).
fn run_clock(run_dir: &Path) -> Duration {
    let Ok(records) = crate::report::jsonl::read(&run_dir.join("results.jsonl")) else {
        return Duration::ZERO;
    };
    let end = records
        .iter()
        .filter_map(|r| match r {
            crate::report::events::Record::Sample(s) => Some(s.ended_s),
            _ => None,
        })
        .fold(0.0f64, f64::max);
    if end.is_finite() && end > 0.0 {
        Duration::from_secs_f64(end)
    } else {
        Duration::ZERO
    }
}

/// The last `rocegate:` line of a fabric's log: why its run stopped.
fn last_error(dir: &Path, name: &str) -> String {
    let text = std::fs::read_to_string(dir.join(format!("{name}.log"))).unwrap_or_default();
    text.lines()
        .rev()
        .find(|l| l.starts_with("rocegate: "))
        .map(|l| crate::config::diag::bound(l.trim_start_matches("rocegate: ")))
        .unwrap_or_else(|| format!("see {name}.log"))
}

/// Faults the fabric's journal still holds open after its run (real
/// fabrics only; the emulated one journals nothing).
fn open_faults(f: &Fabric) -> Option<String> {
    if !crate::app::faults::journaled(&f.inventory) {
        return None;
    }
    let path = crate::fault::journal::default_path(&f.inventory.fabric.name).ok()?;
    let entries = crate::fault::journal::read(&path).ok()?;
    let open = crate::fault::journal::open_faults(&entries);
    (!open.is_empty()).then(|| {
        format!(
            "{} fault(s) still open in {}: heal them with `rocegate recover -i {}`",
            open.len(),
            path.display(),
            f.inventory_path
        )
    })
}
