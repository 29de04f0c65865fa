//! Faults on real devices. Each repetition of a fault is, in order:
//! journal `opened` (synced) → apply (the driver arms the device's dead-man
//! first) → wait out the outage → undo, retried → journal `healed` → time
//! until the device is back to its prior state. A cancel (Ctrl-C, SIGTERM)
//! cuts the outage short and undoes at once; an undo that keeps failing
//! leaves the fault open in the journal for `rocegate recover`, and says so.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use tokio::sync::watch;

use super::journal::{self, Journal, Opened};
use super::Target;
use crate::config::check_suite::Fault;
use crate::exec::{Cancel, InvocationOutput, StepCommands, Transport};
use crate::switch::fault::{Next, State};
use crate::switch::{self, Answer, Query};

/// How long to watch a device come back after the undo.
pub const SETTLE_LIMIT: Duration = Duration::from_secs(90);
const SETTLE_POLL: Duration = Duration::from_millis(500);
const UNDO_TRIES: u32 = 3;

/// Test-only crash points (`ROCEGATE_FAILPOINT=name`): the process kills
/// itself with SIGKILL there, as a power cut or `kill -9` would, or with
/// `name:panic` panics there (a bug in rocegate). Names: `journal-written`
/// (journaled, nothing sent), `fault-applied` (the change made, the undo
/// not sent), `undo-sent` (undone, not yet marked healed).
pub fn failpoint(name: &str) {
    let Ok(v) = std::env::var("ROCEGATE_FAILPOINT") else {
        return;
    };
    if v == name {
        eprintln!("rocegate: ROCEGATE_FAILPOINT={name}: killing myself with SIGKILL");
        // SAFETY: signals this process; never returns.
        unsafe {
            libc::kill(libc::getpid(), libc::SIGKILL);
        }
    }
    if v.strip_suffix(":panic") == Some(name) {
        panic!("ROCEGATE_FAILPOINT={v}");
    }
}

/// The journal and who writes to it.
pub struct Control {
    pub journal: Mutex<Journal>,
    pub run: String,
    pub fabric: String,
    seq: AtomicUsize,
    /// This run's faults not yet healed, kept in memory too: they are
    /// healed at the end of the run even if the journal file cannot be read.
    mine: Mutex<Vec<Opened>>,
}

impl Control {
    pub fn new(journal: Journal, run: String, fabric: String) -> Self {
        Control {
            journal: Mutex::new(journal),
            run,
            fabric,
            seq: AtomicUsize::new(0),
            mine: Mutex::new(Vec::new()),
        }
    }

    fn opened(&self, o: Opened) -> Result<(), String> {
        // In memory first: a write that fails halfway may still reach the
        // disk, and this run must heal it either way.
        self.mine
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(o.clone());
        self.journal
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .append(&journal::Entry::Opened(Box::new(o)))
    }

    pub fn healed(&self, id: &str, by: &str) -> Result<(), String> {
        self.mine
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .retain(|o| o.id != id);
        self.journal
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .healed(id, by)
    }

    /// This run's faults that are not healed yet.
    pub fn mine(&self) -> Vec<Opened> {
        self.mine.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    pub fn open_faults(&self) -> Result<Vec<Opened>, String> {
        let j = self.journal.lock().unwrap_or_else(|p| p.into_inner());
        Ok(journal::open_faults(&j.entries()?))
    }
}

/// One command on one host, never cancelled: a change that was started is
/// always seen through, and an undo is always sent.
async fn once(transport: &dyn Transport, inv: crate::exec::Invocation) -> InvocationOutput {
    let (_keep, never) = watch::channel(false);
    let step = [StepCommands {
        invocations: vec![inv],
    }];
    transport
        .run_batch(&step, never)
        .await
        .into_iter()
        .next()
        .and_then(|s| s.into_iter().next())
        .unwrap_or_default()
}

/// Why a command did not succeed, in one line.
pub fn why(o: &InvocationOutput) -> String {
    if let Some(f) = &o.failure {
        return f.to_string();
    }
    let err = o.stderr.trim();
    format!(
        "exit {}{}",
        o.exit.map_or("none".to_string(), |c| c.to_string()),
        if err.is_empty() {
            String::new()
        } else {
            format!(": {}", err.lines().last().unwrap_or(err))
        }
    )
}

/// Sends `q` to `host` once and reads its answer.
async fn ask(
    transport: &dyn Transport,
    host: &str,
    q: &Query,
) -> (crate::exec::Invocation, InvocationOutput, Answer) {
    let inv = switch::single(host, q, super::COMMAND_TIMEOUT);
    let out = once(transport, inv.clone()).await;
    let a = switch::single_answer(q, &out);
    (inv, out, a)
}

/// Reads the device's state for `target`.
pub async fn read_state(transport: &dyn Transport, t: &Target) -> Result<State, String> {
    let q = t.driver().read_prior(&t.action);
    let (_, o, a) = ask(transport, &t.host, &q).await;
    if o.failure.is_some() || a.exit != Some(0) {
        let said = if o.failure.is_some() || !matches!(q, Query::Api(_)) {
            why(&o)
        } else {
            crate::switch::fault::refusal(&q, &a)
        };
        return Err(format!("{}: reading its state failed: {said}", t.host));
    }
    t.driver()
        .parse_prior(&t.action, &a)
        .map_err(|e| format!("{}: {e}", t.host))
}

/// The prior state, refused unless healthy.
pub async fn prepare(transport: &dyn Transport, t: &Target) -> Result<State, String> {
    let prior = read_state(transport, t).await?;
    t.driver()
        .check_prior(&t.action, &prior)
        .map_err(|e| format!("{}: {e}", t.host))?;
    Ok(prior)
}

/// What one repetition did, on the transport's clock.
#[derive(Debug, Clone, Default)]
pub struct Rep {
    pub id: String,
    /// The last apply step sent, and what came back.
    pub apply: Option<(crate::exec::Invocation, InvocationOutput)>,
    /// Why the platform read that step as failed, when its exit alone
    /// does not say.
    pub apply_error: Option<String>,
    pub undo: Option<(crate::exec::Invocation, InvocationOutput)>,
    /// Seconds from the end of the undo until the device was back to its
    /// prior state, or why that was not seen.
    pub settled: Option<Result<f64, String>>,
    /// Why this repetition is still open in the journal.
    pub left_open: Option<String>,
    /// Why it was not sent at all.
    pub not_sent: Option<String>,
    /// The run was interrupted during it.
    pub cancelled: bool,
}

/// A fault journaled but never sent: marked healed at once.
fn heal_unsent(ctl: &Control, id: &str) -> Option<String> {
    ctl.healed(id, "run (never sent)")
        .err()
        .map(|e| format!("never sent, but marking it healed failed: {e}"))
}

async fn wait_until(t: Instant, cancel: &mut Cancel) -> bool {
    if *cancel.borrow() {
        return false;
    }
    tokio::select! {
        _ = tokio::time::sleep_until(t.into()) => true,
        _ = async { while cancel.changed().await.is_ok() { if *cancel.borrow() { return; } } std::future::pending::<()>().await } => false,
    }
}

/// Longest conversation an undo may have with its device (an EOS undo
/// whose session is gone: abort, read the ports, bring them up).
const UNDO_STEPS: usize = 4;

/// Sends an undo, and what the platform asks after it, until the device is
/// restored; the whole undo is tried [`UNDO_TRIES`] times at most. Returns
/// the last request sent, what came back, and why it failed if it did.
pub async fn undo(
    transport: &dyn Transport,
    host: &str,
    driver: &dyn crate::switch::Driver,
    ports: &[String],
    first: &Query,
) -> (
    crate::exec::Invocation,
    InvocationOutput,
    Result<(), String>,
) {
    let mut last = (
        switch::single(host, first, super::COMMAND_TIMEOUT),
        InvocationOutput::default(),
        Err("not sent".to_string()),
    );
    for attempt in 0..UNDO_TRIES {
        if attempt > 0 {
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
        let mut q = first.clone();
        for _ in 0..UNDO_STEPS {
            let (inv, out, a) = ask(transport, host, &q).await;
            let next = if out.failure.is_some() {
                Next::Failed(why(&out))
            } else {
                driver.undo_next(ports, &q, &a)
            };
            last = (inv, out, Err(String::new()));
            match next {
                Next::Done => {
                    last.2 = Ok(());
                    return last;
                }
                Next::Failed(e) => {
                    last.2 = Err(e);
                    break;
                }
                Next::Then(n) => q = n,
            }
        }
        if last.2.as_ref().is_err_and(|e| e.is_empty()) {
            last.2 = Err(format!(
                "the device was still not restored after {UNDO_STEPS} steps"
            ));
        }
    }
    last
}

/// Runs every repetition of `f` on `t`, timed from `t0`.
#[allow(clippy::too_many_arguments)]
pub async fn run(
    transport: &dyn Transport,
    ctl: &Control,
    test: &str,
    t: &Target,
    prior: &State,
    f: &Fault,
    t0: Instant,
    mut cancel: Cancel,
) -> Vec<Rep> {
    let mut reps = Vec::new();
    for (k, at) in super::starts(f).into_iter().enumerate() {
        let n = ctl.seq.fetch_add(1, Ordering::SeqCst);
        let mut rep = Rep {
            id: format!("{}-{n}", ctl.run),
            ..Default::default()
        };
        if !wait_until(t0 + at, &mut cancel).await {
            rep.cancelled = true;
            rep.not_sent = Some("the run was interrupted before it was due".into());
            reps.push(rep);
            break;
        }
        // A repetition starts from the same healthy state as the first.
        if k > 0 {
            if let Err(e) = prepare(transport, t).await {
                rep.not_sent = Some(format!("not sent: {e}"));
                reps.push(rep);
                break;
            }
        }
        // The device's own dead-man waits past the planned outage by its
        // platform's delay.
        let deadman = f.duration + t.platform.needs().deadman_delay;
        let change = t
            .driver()
            .change(&t.action, prior, Some((&rep.id, deadman)));
        let undo_argv = change.undo.command_line();
        let opened = Opened {
            id: rep.id.clone(),
            run: ctl.run.clone(),
            pid: std::process::id(),
            at: journal::now(),
            fabric: ctl.fabric.clone(),
            test: test.to_string(),
            host: t.host.clone(),
            what: t.what.clone(),
            prior: prior.summary(),
            undo: undo_argv,
            undo_query: Some(change.undo.clone()),
            platform: t.driver().platform().to_string(),
            ports: t.action.ports().to_vec(),
            deadman_s: change.armed.then_some(deadman.as_secs()),
        };
        if let Err(e) = ctl.opened(opened) {
            rep.not_sent = Some(format!("not sent: {e}"));
            rep.left_open = heal_unsent(ctl, &rep.id);
            reps.push(rep);
            break;
        }
        failpoint("journal-written");
        if *cancel.borrow() {
            rep.cancelled = true;
            rep.not_sent = Some("the run was interrupted before it was sent".into());
            rep.left_open = heal_unsent(ctl, &rep.id);
            reps.push(rep);
            break;
        }
        // Each step only once the one before it worked: the dead-man first
        // where it is a request of its own.
        let mut applied = false;
        let mut unchanged = false;
        for (step, q) in change.apply.iter().enumerate() {
            let (inv, out, a) = ask(transport, &t.host, q).await;
            // A reboot drops the connection that asked for it.
            applied = match &out.failure {
                Some(crate::exec::ExecFailure::Unreachable(_)) if change.reboots => true,
                Some(_) => false,
                None => match t.driver().applied(q, &a) {
                    Ok(()) => true,
                    Err(e) => {
                        unchanged = t.driver().unchanged(step, q, &a);
                        rep.apply_error = Some(e);
                        false
                    }
                },
            };
            rep.apply = Some((inv, out));
            if !applied {
                break;
            }
        }
        failpoint("fault-applied");
        // The device stopped before it changed anything (and said so):
        // nothing to undo, and an undo would only be refused the same way
        // (no sudo right) and leave a fault open that never was.
        if !applied && unchanged {
            rep.left_open = ctl
                .healed(&rep.id, "run (refused on the device: nothing changed)")
                .err()
                .map(|e| format!("nothing changed, but marking it healed failed: {e}"));
            reps.push(rep);
            break;
        }
        // A failed apply may have changed part of the device: undo at once.
        if applied {
            wait_until(t0 + at + f.duration, &mut cancel).await;
        }
        let (ports, driver) = (t.action.ports(), t.driver());
        let u = undo(transport, &t.host, driver, ports, &change.undo).await;
        failpoint("undo-sent");
        if u.2.is_ok() {
            if let Err(e) = ctl.healed(&rep.id, "run") {
                rep.left_open = Some(format!("undone, but marking it healed failed: {e}"));
            }
        } else {
            rep.left_open = Some(format!(
                "the undo failed {UNDO_TRIES} times ({}); it stays open in the journal: run `rocegate recover`",
                u.2.as_ref().err().map_or("", String::as_str)
            ));
        }
        rep.undo = Some((u.0, u.1));
        if rep.left_open.is_none() && !*cancel.borrow() {
            rep.settled = Some(settle(transport, t, prior, &mut cancel).await);
        }
        rep.cancelled = *cancel.borrow();
        let unsettled = matches!(rep.settled, Some(Err(_)));
        let stop = !applied || rep.cancelled || rep.left_open.is_some() || unsettled;
        reps.push(rep);
        if stop {
            break;
        }
    }
    reps
}

/// Seconds until the device reads as `prior` again.
async fn settle(
    transport: &dyn Transport,
    t: &Target,
    prior: &State,
    cancel: &mut Cancel,
) -> Result<f64, String> {
    let start = Instant::now();
    let mut last = String::from("not read yet");
    while start.elapsed() < SETTLE_LIMIT {
        match read_state(transport, t).await {
            Ok(now) if t.driver().settled(prior, &now) => return Ok(start.elapsed().as_secs_f64()),
            Ok(now) => last = now.summary(),
            Err(e) => last = e,
        }
        if !wait_until(Instant::now() + SETTLE_POLL, cancel).await {
            return Err("the run was interrupted while it settled".into());
        }
    }
    Err(format!(
        "not back to its prior state ({}) {} s after the undo: last read {last}",
        prior.summary(),
        SETTLE_LIMIT.as_secs()
    ))
}

/// What healing one open fault came to.
pub struct Healed {
    pub fault: Opened,
    pub result: Result<(), String>,
}

/// Undoes `open` (faults the journal holds open), newest first, and marks
/// each healed that was.
pub async fn heal(
    transport: &dyn Transport,
    ctl: &Control,
    open: Vec<Opened>,
    by: &str,
) -> Vec<Healed> {
    let mut out = Vec::new();
    for o in open.into_iter().rev() {
        let q = o
            .undo_query
            .clone()
            .unwrap_or_else(|| Query::Argv(o.undo.clone()));
        let result = match switch::platform_named(&o.platform) {
            None => Err(format!(
                "the journal names platform {:?}, which this rocegate does not know: undo it by hand with `{}`",
                o.platform,
                o.undo.join(" ")
            )),
            Some(p) => match undo(transport, &o.host, p.faults(), &o.ports, &q).await.2 {
                Ok(()) => ctl.healed(&o.id, by),
                Err(e) => Err(e),
            },
        };
        out.push(Healed { fault: o, result });
    }
    out
}
