//! How a round's step reaches the nodes: `srun` inside an allocation (the
//! real launcher), or the emulated pod answering the same plan the way the
//! agents would (benchmarks and tests of the transport itself).

use std::collections::HashMap;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
use tokio::process::Command;
use tokio::sync::mpsc;

use super::wire::{self, Control, End, Ending, RoundPlan};
use crate::config::hostlist;
use crate::config::inventory::SlurmSpec;
use crate::exec::types::{ExecFailure, InvocationOutput, StepCommands};

pub type BoxFut<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// What the launcher works in: the job, the agent's path on the nodes,
/// and the nodes it cannot use, each with why.
#[derive(Debug, Clone, Default)]
pub struct Allocation {
    pub job: String,
    pub agent: String,
    /// The nodes the agent was broadcast to (removed from them at the end);
    /// empty when the agent is the inventory's own path.
    pub broadcast_to: Vec<String>,
    pub down: HashMap<String, ExecFailure>,
    /// Environment for a launcher run on the controller (nccl-tests' own
    /// `srun`): the job, overlap, and PMIx where this Slurm has it.
    pub launcher_env: Vec<(String, String)>,
}

/// The two ends of one step: the agents' output lines come in, control
/// lines go out (dropping the sender closes the tasks' input).
pub struct StepIo {
    pub lines: mpsc::UnboundedSender<String>,
    pub control: mpsc::UnboundedReceiver<Control>,
}

#[derive(Debug, Default)]
pub struct StepEnd {
    pub exit: Option<i32>,
    /// srun's own messages (not the agents' lines).
    pub stderr: String,
    /// The emulated launcher answers the whole batch at once: the outputs
    /// of what did not run on a node (switches, the controller).
    pub others: Option<Vec<Vec<InvocationOutput>>>,
}

/// Counts of what the controller launched, for the benchmark: totals over
/// the process (every slurm transport adds to them).
pub static COUNTERS: Counters = Counters {
    batches: AtomicU64::new(0),
    steps: AtomicU64::new(0),
    broadcasts: AtomicU64::new(0),
    processes: AtomicU64::new(0),
    tasks: AtomicU64::new(0),
};

#[derive(Debug)]
pub struct Counters {
    /// Batches (rounds, counter snapshots, audit reads) with node work.
    pub batches: AtomicU64,
    /// Job steps started (one per round that touches nodes).
    pub steps: AtomicU64,
    /// File broadcasts (`sbcast`): the agent once, each round's plan.
    pub broadcasts: AtomicU64,
    /// Processes the controller started for Slurm (srun, sbcast, salloc, sinfo).
    pub processes: AtomicU64,
    /// Node tasks across all steps.
    pub tasks: AtomicU64,
}

pub trait Launcher: Send + Sync {
    fn describe(&self) -> String;
    /// The allocation for `nodes`, the agent on them, and which are unusable.
    fn prepare<'a>(&'a self, nodes: &'a [String]) -> BoxFut<'a, Result<Allocation, String>>;
    /// Runs one step of `plan` over `nodes` until every task has ended.
    fn step<'a>(
        &'a self,
        alloc: &'a Allocation,
        nodes: &'a [String],
        plan: &'a RoundPlan,
        batch: &'a [StepCommands],
        io: StepIo,
    ) -> BoxFut<'a, StepEnd>;
    /// Cancels a step that did not end after its input closed.
    fn cancel_step<'a>(&'a self, _step: &'a str) -> BoxFut<'a, ()> {
        Box::pin(async {})
    }
    /// Seconds on the launcher's clock.
    fn now_s(&self) -> f64;
    /// Gives the allocation back (at the end of the run); blocking, short.
    fn release(&self, _alloc: &Allocation) {}
}

/// The real launcher: Slurm's own commands.
pub struct Srun {
    spec: SlurmSpec,
    work: PathBuf,
    start: Instant,
    /// The `salloc` holding the allocation rocegate requested; its input
    /// is the lifeline (closed at the end, or when rocegate dies).
    holder: Mutex<Option<std::process::Child>>,
    rounds: AtomicU64,
}

/// Node states that cannot run a step (`sinfo %T`, long form; a `*` or
/// other flag suffix is stripped first).
const UNUSABLE: [&str; 8] = [
    "down", "drained", "draining", "drain", "fail", "failing", "maint", "unknown",
];

impl Srun {
    pub fn new(spec: &SlurmSpec) -> std::io::Result<Self> {
        let work = crate::paths::private_temp_dir("rocegate-slurm")?;
        Ok(Srun {
            spec: spec.clone(),
            work,
            start: Instant::now(),
            holder: Mutex::new(None),
            rounds: AtomicU64::new(0),
        })
    }

    fn command(&self, prog: &str) -> Command {
        let mut c = Command::new(prog);
        if let Some(conf) = &self.spec.conf {
            c.env("SLURM_CONF", conf);
        }
        c.stdin(Stdio::null()).kill_on_drop(true);
        COUNTERS.processes.fetch_add(1, Ordering::Relaxed);
        c
    }

    /// A short Slurm command's output, or an error naming it.
    async fn query(&self, prog: &str, args: &[String]) -> Result<String, String> {
        let line = format!("{prog} {}", args.join(" "));
        let out = tokio::time::timeout(
            Duration::from_secs(60),
            self.command(prog).args(args).output(),
        )
        .await
        .map_err(|_| format!("{line}: no answer within 60 s"))?
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => {
                format!("{prog} is not installed on the controller (Debian package slurm-client)")
            }
            _ => format!("{line}: {e}"),
        })?;
        if !out.status.success() {
            return Err(format!(
                "{line}: {} ({})",
                crate::exec::types::exit_text(out.status.code()),
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }

    async fn broadcast(&self, job: &str, src: &Path, dest: &str) -> Result<(), String> {
        COUNTERS.broadcasts.fetch_add(1, Ordering::Relaxed);
        self.query(
            "sbcast",
            &[
                format!("--jobid={job}"),
                "--force".into(),
                "--preserve".into(),
                src.display().to_string(),
                dest.to_string(),
            ],
        )
        .await
        .map(|_| ())
    }

    /// Requests the allocation with `salloc`, held by a command that reads
    /// salloc's input: when rocegate closes it (or dies), the command ends
    /// and Slurm takes the nodes back.
    async fn allocate(&self, nodes: &[String]) -> Result<String, String> {
        let minutes = self.spec.time.0.as_secs().div_ceil(60).max(1);
        let mut args = vec![
            format!("--nodes={}", nodes.len()),
            format!("--nodelist={}", hostlist::compress(nodes)),
            "--ntasks-per-node=1".into(),
            format!("--time={minutes}"),
            format!("--immediate={}", self.spec.wait.0.as_secs().max(1)),
            "--job-name=rocegate".into(),
        ];
        if let Some(p) = &self.spec.partition {
            args.push(format!("--partition={p}"));
        }
        if let Some(a) = &self.spec.account {
            args.push(format!("--account={a}"));
        }
        args.extend([
            "sh".into(),
            "-c".into(),
            "echo \"@@rocegate-job $SLURM_JOB_ID\"; exec cat >/dev/null".into(),
        ]);
        let line = format!("salloc {}", args.join(" "));
        COUNTERS.processes.fetch_add(1, Ordering::Relaxed);
        let mut cmd = std::process::Command::new("salloc");
        if let Some(conf) = &self.spec.conf {
            cmd.env("SLURM_CONF", conf);
        }
        let mut child = cmd
            .args(&args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("{line}: cannot start: {e}"))?;
        let stdout = child.stdout.take();
        let stderr = child.stderr.take();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            use std::io::BufRead;
            let mut job = None;
            if let Some(o) = stdout {
                for l in std::io::BufReader::new(o).lines().map_while(Result::ok) {
                    if let Some(j) = l.trim().strip_prefix("@@rocegate-job ") {
                        job = Some(j.trim().to_string());
                        break;
                    }
                }
            }
            let _ = tx.send(job);
        });
        let wait = self.spec.wait.0 + Duration::from_secs(30);
        let job = tokio::task::spawn_blocking(move || rx.recv_timeout(wait).ok().flatten())
            .await
            .ok()
            .flatten();
        match job.filter(|j| !j.is_empty()) {
            Some(job) => {
                *self.holder.lock().unwrap_or_else(|p| p.into_inner()) = Some(child);
                Ok(job)
            }
            None => {
                let _ = child.kill();
                let _ = child.wait();
                let mut why = String::new();
                if let Some(mut e) = stderr {
                    use std::io::Read;
                    let _ = (&mut e).take(64 << 10).read_to_string(&mut why);
                }
                Err(format!(
                    "{line}: no allocation within {}s: {}",
                    wait.as_secs(),
                    why.trim()
                ))
            }
        }
    }
}

/// Reads `sinfo -N -o %N|%T|%E`: each node's state and reason.
pub fn node_states(text: &str) -> HashMap<String, (String, String)> {
    text.lines()
        .filter_map(|l| {
            let mut f = l.trim().splitn(3, '|');
            let node = f.next()?.trim();
            let state = f.next()?.trim();
            (!node.is_empty()).then(|| {
                (
                    node.to_string(),
                    (state.to_string(), f.next().unwrap_or("").trim().to_string()),
                )
            })
        })
        .collect()
}

/// Why Slurm cannot run a step on a node in `state`, if it cannot.
pub fn unusable(node: &str, state: &str, reason: &str) -> Option<ExecFailure> {
    let base = state
        .trim_end_matches(|c: char| "*~#!%$@^-".contains(c))
        .to_ascii_lowercase();
    let bad = base
        .split('+')
        .any(|s| UNUSABLE.contains(&s) || s.starts_with("drain"));
    let not_responding = state.ends_with('*');
    (bad || not_responding).then(|| {
        let reason = if reason.is_empty() || reason == "none" {
            String::new()
        } else {
            format!(", reason: {reason}")
        };
        ExecFailure::Unreachable(format!(
            "{node}: Slurm reports it {state}{reason}; nothing runs there (resume it with scontrol update NodeName={node} State=RESUME once it is fixed, or leave it out of the inventory)"
        ))
    })
}

impl Launcher for Srun {
    fn describe(&self) -> String {
        match &self.spec.conf {
            Some(c) => format!("slurm (srun, SLURM_CONF={c})"),
            None => "slurm (srun)".into(),
        }
    }

    fn prepare<'a>(&'a self, nodes: &'a [String]) -> BoxFut<'a, Result<Allocation, String>> {
        Box::pin(async move {
            let states = node_states(
                &self
                    .query(
                        "sinfo",
                        &[
                            "--noheader".into(),
                            "--Node".into(),
                            format!("--nodes={}", hostlist::compress(nodes)),
                            "--format=%N|%T|%E".into(),
                        ],
                    )
                    .await?,
            );
            let mut down = HashMap::new();
            for n in nodes {
                match states.get(n) {
                    None => {
                        down.insert(
                            n.clone(),
                            ExecFailure::Unreachable(format!(
                                "{n}: Slurm does not know this node (sinfo lists no node of that name): the inventory's node names must be Slurm's NodeNames"
                            )),
                        );
                    }
                    Some((state, reason)) => {
                        if let Some(f) = unusable(n, state, reason) {
                            down.insert(n.clone(), f);
                        }
                    }
                }
            }
            let usable: Vec<String> = nodes
                .iter()
                .filter(|n| !down.contains_key(*n))
                .cloned()
                .collect();
            if usable.is_empty() {
                return Ok(Allocation {
                    down,
                    ..Default::default()
                });
            }
            let job = match std::env::var("SLURM_JOB_ID").ok().filter(|j| !j.is_empty()) {
                Some(job) => {
                    let list = std::env::var("SLURM_JOB_NODELIST").unwrap_or_default();
                    let held = hostlist::expand(&list).unwrap_or_default();
                    for n in &usable {
                        if !held.contains(n) {
                            down.insert(
                                n.clone(),
                                ExecFailure::Unreachable(format!(
                                    "{n}: not in this allocation (job {job}, SLURM_JOB_NODELIST={list}): run rocegate in an allocation holding every inventory node, or outside one so it requests its own"
                                )),
                            );
                        }
                    }
                    job
                }
                None => self.allocate(&usable).await?,
            };
            let usable: Vec<String> = usable
                .into_iter()
                .filter(|n| !down.contains_key(n))
                .collect();
            let mut broadcast_to = Vec::new();
            let agent = match &self.spec.agent {
                Some(a) => a.clone(),
                None => {
                    let exe = std::env::current_exe().map_err(|e| {
                        format!("cannot find rocegate's own binary to broadcast: {e}")
                    })?;
                    let dest = format!(
                        "{}/rocegate-agent-{job}",
                        self.spec.agent_dir.trim_end_matches('/')
                    );
                    self.broadcast(&job, &exe, &dest).await.map_err(|e| {
                        format!("cannot put the node agent on the nodes: {e} (transport.slurm.agent_dir must be a node-local directory with room for it that allows executables; slurmd's log on the node says more)")
                    })?;
                    broadcast_to = usable;
                    dest
                }
            };
            let mut launcher_env = vec![
                ("SLURM_JOB_ID".to_string(), job.clone()),
                ("SLURM_OVERLAP".to_string(), "1".to_string()),
            ];
            if let Some(conf) = &self.spec.conf {
                launcher_env.push(("SLURM_CONF".into(), conf.clone()));
            }
            if self
                .query("srun", &["--mpi=list".into()])
                .await
                .is_ok_and(|t| t.contains("pmix"))
            {
                launcher_env.push(("SLURM_MPI_TYPE".into(), "pmix".into()));
            }
            Ok(Allocation {
                job,
                agent,
                broadcast_to,
                down,
                launcher_env,
            })
        })
    }

    fn step<'a>(
        &'a self,
        alloc: &'a Allocation,
        nodes: &'a [String],
        plan: &'a RoundPlan,
        _batch: &'a [StepCommands],
        io: StepIo,
    ) -> BoxFut<'a, StepEnd> {
        Box::pin(async move {
            let fail = |m: String| StepEnd {
                exit: None,
                stderr: m,
                others: None,
            };
            let n = self.rounds.fetch_add(1, Ordering::Relaxed);
            let local = self.work.join(format!("plan-{n}.json"));
            let body = serde_json::to_vec(plan).unwrap_or_default();
            if let Err(e) = crate::paths::write_atomic(&local, &body) {
                return fail(format!(
                    "cannot write the round's plan {}: {e}",
                    local.display()
                ));
            }
            let dest = format!(
                "{}/rocegate-plan-{}-{n}.json",
                self.spec.agent_dir.trim_end_matches('/'),
                alloc.job
            );
            let sent = self.broadcast(&alloc.job, &local, &dest).await;
            let _ = std::fs::remove_file(&local);
            if let Err(e) = sent {
                return fail(format!("cannot put the round's plan on the nodes: {e}"));
            }
            COUNTERS.steps.fetch_add(1, Ordering::Relaxed);
            COUNTERS
                .tasks
                .fetch_add(nodes.len() as u64, Ordering::Relaxed);
            let mut cmd = self.command("srun");
            cmd.args([
                format!("--jobid={}", alloc.job),
                "--overlap".into(),
                format!("--nodes={}", nodes.len()),
                format!("--nodelist={}", hostlist::compress(nodes)),
                "--ntasks-per-node=1".into(),
                "--input=all".into(),
                "--kill-on-bad-exit=0".into(),
                "--job-name=rocegate".into(),
                alloc.agent.clone(),
                "slurm-task".into(),
                dest,
            ])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
            let mut child = match cmd.spawn() {
                Ok(c) => c,
                Err(e) => return fail(format!("cannot start srun: {e}")),
            };
            let stdin = child.stdin.take();
            let stdout = child.stdout.take();
            let stderr = child.stderr.take();
            let StepIo { lines, mut control } = io;
            let pump = async move {
                if let Some(o) = stdout {
                    let mut r = tokio::io::BufReader::new(o);
                    let mut buf = Vec::new();
                    loop {
                        buf.clear();
                        match r.read_until(b'\n', &mut buf).await {
                            Ok(0) | Err(_) => break,
                            Ok(_) => {
                                let _ = lines
                                    .send(String::from_utf8_lossy(&buf).trim_end().to_string());
                            }
                        }
                    }
                }
            };
            let feed = async move {
                let mut stdin = stdin;
                while let Some(c) = control.recv().await {
                    if let Some(s) = stdin.as_mut() {
                        if s.write_all(c.line().as_bytes()).await.is_err()
                            || s.flush().await.is_err()
                        {
                            stdin = None;
                        }
                    }
                }
                // The sender is gone: the run is over or interrupted, and
                // the tasks' input ends.
                drop(stdin);
            };
            let err = async move {
                match stderr {
                    Some(e) => crate::exec::stream::read_capped(e).await,
                    None => String::new(),
                }
            };
            let feeder = tokio::spawn(feed);
            let (_, stderr, status) = tokio::join!(pump, err, child.wait());
            feeder.abort();
            StepEnd {
                exit: status.ok().and_then(|s| s.code()),
                stderr,
                others: None,
            }
        })
    }

    fn cancel_step<'a>(&'a self, step: &'a str) -> BoxFut<'a, ()> {
        Box::pin(async move {
            let _ = self
                .query("scancel", &["--signal=KILL".into(), step.to_string()])
                .await;
        })
    }

    fn now_s(&self) -> f64 {
        self.start.elapsed().as_secs_f64()
    }

    fn release(&self, alloc: &Allocation) {
        // The agent and any plan an agent never read leave the nodes: one
        // last step, bounded.
        if !alloc.broadcast_to.is_empty() {
            let script = format!(
                "rm -f {} {}/rocegate-plan-{}-*.json",
                crate::exec::types::quote(&alloc.agent),
                self.spec.agent_dir.trim_end_matches('/'),
                alloc.job
            );
            let mut cmd = std::process::Command::new("srun");
            if let Some(conf) = &self.spec.conf {
                cmd.env("SLURM_CONF", conf);
            }
            COUNTERS.processes.fetch_add(1, Ordering::Relaxed);
            let cleanup = cmd
                .args([
                    format!("--jobid={}", alloc.job),
                    "--overlap".into(),
                    format!("--nodes={}", alloc.broadcast_to.len()),
                    format!("--nodelist={}", hostlist::compress(&alloc.broadcast_to)),
                    "--ntasks-per-node=1".into(),
                    "--job-name=rocegate".into(),
                    "sh".into(),
                    "-c".into(),
                    script,
                ])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn();
            if let Ok(mut c) = cleanup {
                let until = Instant::now() + Duration::from_secs(30);
                while Instant::now() < until && c.try_wait().ok().flatten().is_none() {
                    std::thread::sleep(Duration::from_millis(50));
                }
                let _ = c.kill();
                let _ = c.wait();
            }
        }
        let holder = self.holder.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(mut h) = holder {
            // The end of its input ends the holding command; salloc then
            // gives the nodes back. Wait a little so the release is done
            // when rocegate exits, never long.
            drop(h.stdin.take());
            let until = Instant::now() + Duration::from_secs(10);
            while Instant::now() < until {
                if h.try_wait().ok().flatten().is_some() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            let _ = h.kill();
            let _ = h.wait();
        }
        let _ = std::fs::remove_dir_all(&self.work);
    }
}

/// The emulated launcher: the emulated pod answers every step the way the
/// agents would, framed in the same lines, so everything between the plan
/// and the outputs is the real transport's code.
pub struct Emulated {
    emu: crate::exec::emulated::EmulatedTransport,
}

impl Emulated {
    pub fn new(inv: &crate::config::model::Inventory, seed: u64, pace: f64) -> Self {
        Emulated {
            emu: crate::exec::emulated::EmulatedTransport::new(inv, seed, pace),
        }
    }
}

impl Launcher for Emulated {
    fn describe(&self) -> String {
        format!(
            "slurm over the {}",
            crate::exec::Transport::describe(&self.emu)
        )
    }

    fn prepare<'a>(&'a self, _nodes: &'a [String]) -> BoxFut<'a, Result<Allocation, String>> {
        Box::pin(async {
            Ok(Allocation {
                job: "emulated".into(),
                agent: "rocegate".into(),
                ..Default::default()
            })
        })
    }

    fn step<'a>(
        &'a self,
        _alloc: &'a Allocation,
        nodes: &'a [String],
        plan: &'a RoundPlan,
        batch: &'a [StepCommands],
        io: StepIo,
    ) -> BoxFut<'a, StepEnd> {
        Box::pin(async move {
            if !nodes.is_empty() {
                COUNTERS.steps.fetch_add(1, Ordering::Relaxed);
                COUNTERS.broadcasts.fetch_add(1, Ordering::Relaxed);
                // One srun and one sbcast per step, as the real launcher.
                COUNTERS.processes.fetch_add(2, Ordering::Relaxed);
                COUNTERS
                    .tasks
                    .fetch_add(nodes.len() as u64, Ordering::Relaxed);
            }
            let StepIo { lines, mut control } = io;
            let step_id = format!("emulated.{}", COUNTERS.steps.load(Ordering::Relaxed));
            for n in nodes {
                let _ = lines.send(wire::ready(n, &step_id));
            }
            // The whole round at once: the model sees every flow together.
            let (_, cancel) = tokio::sync::watch::channel(false);
            loop {
                match control.recv().await {
                    Some(Control::Go) => break,
                    Some(Control::Stop(_)) => continue,
                    None => {
                        return StepEnd {
                            exit: None,
                            stderr: "the step's input closed before go".into(),
                            others: None,
                        }
                    }
                }
            }
            let go = crate::exec::Transport::now_s(&self.emu);
            let outs = crate::exec::Transport::run_batch(&self.emu, batch, cancel).await;
            // Ids number the batch's invocations in order, as the plan does.
            let by_id: Vec<&InvocationOutput> = outs.iter().flatten().collect();
            for (node, tasks) in &plan.shares {
                for t in tasks {
                    let Some(o) = by_id.get(t.id) else { continue };
                    for l in wire::chunks(node, t.id, "out", o.stdout.as_bytes()) {
                        let _ = lines.send(l);
                    }
                    for l in wire::chunks(node, t.id, "err", o.stderr.as_bytes()) {
                        let _ = lines.send(l);
                    }
                    let (ending, note) = match &o.failure {
                        Some(ExecFailure::TimedOut(m)) if o.exit.is_none() => {
                            (Ending::TimedOut, m.clone())
                        }
                        Some(ExecFailure::Cancelled(m)) => (Ending::Cancelled, m.clone()),
                        Some(ExecFailure::Unreachable(m)) => (Ending::Unreachable, m.clone()),
                        Some(ExecFailure::MissingBinary(_)) | None => {
                            (Ending::Exited, String::new())
                        }
                        Some(other) => (Ending::NotStarted, other.to_string()),
                    };
                    // The emulated pod says a missing binary with its
                    // failure, not exit 127: keep it as a note.
                    let exit = match &o.failure {
                        Some(ExecFailure::MissingBinary(_)) if o.exit.is_none() => Some(127),
                        _ => o.exit,
                    };
                    let _ = lines.send(wire::end(&End {
                        node: node.clone(),
                        id: t.id,
                        exit,
                        ending,
                        started: o.started_s - go,
                        ended: o.ended_s - go,
                        note,
                    }));
                }
                let _ = lines.send(wire::bye(node));
            }
            drop(by_id);
            StepEnd {
                exit: Some(0),
                stderr: String::new(),
                others: Some(outs),
            }
        })
    }

    fn now_s(&self) -> f64 {
        crate::exec::Transport::now_s(&self.emu)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `sinfo --noheader --Node --format=%N|%T|%E` as Slurm 22.05 prints it
    /// (a node in two partitions is listed twice; flags trail the state).
    #[test]
    fn node_states_name_what_cannot_run_a_step() {
        let text = "host1|idle|none\nhost2|drained|rocegate 20261127T1: suspect nic host2:mlx5_0 (score 3.0)\nhost3|down*|Not responding\nhost4|mixed|none\nhost4|mixed|none\nhost5|draining|maintenance\nhost6|idle~|none\nhost7|allocated+drain|x\n";
        let s = node_states(text);
        assert_eq!(s.len(), 7);
        let why = |n: &str| {
            let (st, r) = &s[n];
            unusable(n, st, r).map(|f| f.to_string())
        };
        assert_eq!(why("host1"), None);
        assert_eq!(why("host4"), None);
        assert_eq!(why("host6"), None, "powered down, resumable by Slurm");
        let d = why("host2").unwrap();
        assert!(
            d.contains("host2: Slurm reports it drained, reason: rocegate 20261127T1")
                && d.contains("State=RESUME"),
            "{d}"
        );
        assert!(why("host3")
            .unwrap()
            .contains("down*, reason: Not responding"));
        assert!(why("host5").unwrap().contains("draining"));
        assert!(why("host7").unwrap().contains("allocated+drain"));
        assert!(node_states("garbage without fields\n\n").is_empty());
    }
}
