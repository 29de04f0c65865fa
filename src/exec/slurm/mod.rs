//! The `slurm` transport: every node command of a batch runs in ONE Slurm
//! job step (`srun --overlap -N<n> --ntasks-per-node=1`) whose task on
//! each node is rocegate's own agent running that node's share of a plan
//! file broadcast with `sbcast`: its servers, a barrier until every node's
//! servers listen (each task says `ready`; the controller answers `go` on
//! the step's input, which srun gives every task), then its clients and
//! probes. The step's output lines map back to the same outputs, errors and
//! raw files as the ssh transport's. Switches are not Slurm nodes: their
//! commands go to the ssh (or API) transport beside it, and a launcher on
//! the controller (nccl-tests' `srun`) runs locally inside the allocation.
//!
//! The allocation is the one rocegate runs in (`SLURM_JOB_ID`) or one it
//! requests with `salloc`, held by a command reading salloc's input: when
//! rocegate ends or is killed, the input closes and Slurm takes the nodes
//! back. Likewise each step's input is the agents' lifeline: if it closes
//! before their work is done, they kill what they run, and the step ends.

pub mod agent;
pub mod launch;
pub mod wire;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Mutex;
use std::time::Duration;

use tokio::sync::{mpsc, OnceCell};

use self::launch::{Allocation, Launcher, StepIo};
use self::wire::{Control, Line, RoundPlan, Task};
use super::local::LocalTransport;
use super::transport::{BatchFuture, Cancel, Transport};
use super::types::{ExecFailure, Invocation, InvocationOutput, Role, StepCommands};

/// What the controller allows past the longest command of a step before
/// it cancels the step itself (slow node start, a kill that hangs).
const STEP_GRACE: Duration = Duration::from_secs(60);
/// How long a step may take to end once its input closed (interrupt).
const CANCEL_WAIT: Duration = Duration::from_secs(20);

pub struct SlurmTransport {
    launcher: Box<dyn Launcher>,
    /// Inventory node names: what runs as a step. Everything else (switches,
    /// `localhost`) goes to `others` or `local`.
    nodes: HashSet<String>,
    others: Option<Box<dyn Transport>>,
    local: LocalTransport,
    alloc: OnceCell<Result<Allocation, String>>,
    /// Hosts the preflight could not reach, and why.
    down: Mutex<HashMap<String, ExecFailure>>,
    rounds: std::sync::atomic::AtomicU64,
}

impl SlurmTransport {
    /// `others` reaches the switches; `None` when the launcher answers them
    /// itself (the emulated pod).
    pub fn new(
        launcher: Box<dyn Launcher>,
        nodes: impl IntoIterator<Item = String>,
        others: Option<Box<dyn Transport>>,
    ) -> Self {
        SlurmTransport {
            launcher,
            nodes: nodes.into_iter().collect(),
            others,
            local: LocalTransport::default(),
            alloc: OnceCell::new(),
            down: Mutex::new(HashMap::new()),
            rounds: std::sync::atomic::AtomicU64::new(0),
        }
    }

    async fn allocation(&self) -> &Result<Allocation, String> {
        self.alloc
            .get_or_init(|| async {
                let mut nodes: Vec<String> = self.nodes.iter().cloned().collect();
                nodes.sort();
                self.launcher.prepare(&nodes).await
            })
            .await
    }

    fn failed(&self, f: ExecFailure) -> InvocationOutput {
        let now = self.launcher.now_s();
        InvocationOutput {
            failure: Some(f),
            started_s: now,
            ended_s: now,
            ..Default::default()
        }
    }

    /// Runs a batch: the nodes' share as one step, the rest beside it.
    async fn batch(
        &self,
        batch: &[StepCommands],
        mut cancel: Cancel,
    ) -> Vec<Vec<InvocationOutput>> {
        let mut outs: Vec<Vec<Option<InvocationOutput>>> = batch
            .iter()
            .map(|s| vec![None; s.invocations.len()])
            .collect();
        // Ids number the invocations of the batch in order.
        let at: Vec<(usize, usize)> = batch
            .iter()
            .enumerate()
            .flat_map(|(s, step)| (0..step.invocations.len()).map(move |i| (s, i)))
            .collect();
        let alloc = self.allocation_for(batch, &at, &mut outs).await;
        let shares = self.shares(batch, &at, alloc, &mut outs);
        let emulated_others = self.others.is_none();
        let ((local_b, local_back), (remote_b, remote_back)) = if emulated_others {
            Default::default()
        } else {
            (
                self.beside(batch, alloc, true),
                self.beside(batch, alloc, false),
            )
        };
        let others_fut = {
            let c1 = cancel.clone();
            let c2 = cancel.clone();
            let local_b = &local_b;
            let remote_b = &remote_b;
            async move {
                let l = async {
                    if local_b.is_empty() {
                        Vec::new()
                    } else {
                        self.local.run_batch(local_b, c1).await
                    }
                };
                let r = async {
                    match &self.others {
                        Some(t) if !remote_b.is_empty() => t.run_batch(remote_b, c2).await,
                        _ => Vec::new(),
                    }
                };
                tokio::join!(l, r)
            }
        };
        let step_nodes: Vec<String> = shares.keys().cloned().collect();
        let run_step = !step_nodes.is_empty() || emulated_others && !at.is_empty();
        let (line_tx, mut line_rx) = mpsc::unbounded_channel::<String>();
        let (ctl_tx, ctl_rx) = mpsc::unbounded_channel::<Control>();
        let mut pump = Pump::new(batch, &at, &shares, ctl_tx);
        let round = self
            .rounds
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let plan = RoundPlan {
            round: format!("{}-{round}", alloc.map_or("none", |a| a.job.as_str())),
            shares,
        };
        let limit = batch
            .iter()
            .flat_map(|s| &s.invocations)
            .map(|i| i.at + i.limit())
            .max()
            .unwrap_or_default()
            + STEP_GRACE;
        let empty = Allocation::default();
        let step_fut = async {
            if run_step {
                let io = StepIo {
                    lines: line_tx,
                    control: ctl_rx,
                };
                let a = alloc.unwrap_or(&empty);
                Some(self.launcher.step(a, &step_nodes, &plan, batch, io).await)
            } else {
                drop(line_tx);
                drop(ctl_rx);
                None
            }
        };
        tokio::pin!(step_fut);
        tokio::pin!(others_fut);
        // No node in this batch: nothing to wait for at the barrier.
        if step_nodes.is_empty() {
            pump.go(self.launcher.now_s());
        }
        let mut step_end = None;
        let mut others_out = None;
        let mut lines_open = true;
        let mut cancelled = false;
        let deadline = tokio::time::Instant::now() + limit;
        let mut cancel_deadline: Option<tokio::time::Instant> = None;
        while step_end.is_none() || others_out.is_none() || lines_open {
            let timer = cancel_deadline.unwrap_or(deadline);
            tokio::select! {
                l = line_rx.recv(), if lines_open => match l {
                    Some(l) => {
                        if let Some(line) = wire::parse(&l) {
                            pump.on_line(line, self.launcher.now_s());
                        }
                    }
                    None => lines_open = false,
                },
                e = &mut step_fut, if step_end.is_none() => step_end = Some(e),
                o = &mut others_fut, if others_out.is_none() => {
                    if !emulated_others {
                        pump.others_ended(|host| self.nodes.contains(host));
                    }
                    others_out = Some(o);
                }
                () = async { let _ = cancel.wait_for(|c| *c).await; }, if !cancelled => {
                    cancelled = true;
                    // The tasks' input ends: each agent kills what it runs.
                    pump.ctl = None;
                    cancel_deadline = Some(tokio::time::Instant::now() + CANCEL_WAIT);
                }
                _ = tokio::time::sleep_until(timer), if step_end.is_none() => {
                    for s in &pump.slurm_steps {
                        self.launcher.cancel_step(s).await;
                    }
                    pump.ctl = None;
                    // Once more only: then the step is abandoned.
                    if cancel_deadline.is_some() {
                        break;
                    }
                    cancel_deadline = Some(tokio::time::Instant::now() + CANCEL_WAIT);
                }
            }
        }
        pump.ctl = None;
        let step_end = step_end.flatten();
        let after = After {
            go: pump.go_s.unwrap_or_else(|| self.launcher.now_s()),
            now: self.launcher.now_s(),
            cancelled,
            srun_said: step_end
                .as_ref()
                .map(|e| e.stderr.trim().to_string())
                .unwrap_or_default(),
        };
        for (id, &(s, i)) in at.iter().enumerate() {
            let inv = &batch[s].invocations[i];
            if outs[s][i].is_none() && self.nodes.contains(&inv.host) {
                outs[s][i] = Some(pump.output(id, inv, &after));
            }
        }
        // What ran beside the step: answered by the emulated launcher, or
        // by the transports beside it.
        if let Some(all) = step_end.and_then(|e| e.others) {
            for (s, row) in all.into_iter().enumerate() {
                for (i, o) in row.into_iter().enumerate() {
                    if let Some(slot @ None) = outs.get_mut(s).and_then(|r| r.get_mut(i)) {
                        *slot = Some(o);
                    }
                }
            }
        }
        if let Some((l, r)) = others_out {
            for (back, got) in [(&local_back, l), (&remote_back, r)] {
                for (&(s, i), o) in back.iter().zip(got.into_iter().flatten()) {
                    outs[s][i] = Some(o);
                }
            }
        }
        outs.into_iter()
            .map(|row| {
                row.into_iter()
                    .map(|o| {
                        o.unwrap_or_else(|| self.failed(ExecFailure::Transport("lost".into())))
                    })
                    .collect()
            })
            .collect()
    }

    /// The allocation, when the batch touches a node; without one, every
    /// node command fails with why.
    async fn allocation_for(
        &self,
        batch: &[StepCommands],
        at: &[(usize, usize)],
        outs: &mut [Vec<Option<InvocationOutput>>],
    ) -> Option<&Allocation> {
        let on_node = |&(s, i): &(usize, usize)| {
            let host = &batch[s].invocations[i].host;
            self.nodes.contains(host).then_some((s, i, host))
        };
        if !at.iter().any(|x| on_node(x).is_some()) {
            return None;
        }
        launch::COUNTERS
            .batches
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        match self.allocation().await {
            Ok(a) => Some(a),
            Err(e) => {
                for (s, i, host) in at.iter().filter_map(on_node) {
                    let why = format!("{host}: no Slurm allocation: {e}");
                    outs[s][i] = Some(self.failed(ExecFailure::Transport(why)));
                }
                None
            }
        }
    }

    /// The plan: each usable node's share. A command on a node Slurm or the
    /// preflight found unusable fails at once, with why.
    fn shares(
        &self,
        batch: &[StepCommands],
        at: &[(usize, usize)],
        alloc: Option<&Allocation>,
        outs: &mut [Vec<Option<InvocationOutput>>],
    ) -> BTreeMap<String, Vec<Task>> {
        let mut shares: BTreeMap<String, Vec<Task>> = BTreeMap::new();
        let known_down = self.down.lock().unwrap_or_else(|p| p.into_inner()).clone();
        for (id, &(s, i)) in at.iter().enumerate() {
            let inv = &batch[s].invocations[i];
            if !self.nodes.contains(&inv.host) || outs[s][i].is_some() {
                continue;
            }
            let why = alloc
                .and_then(|a| a.down.get(&inv.host))
                .or_else(|| known_down.get(&inv.host));
            if let Some(why) = why {
                outs[s][i] = Some(self.failed(why.clone()));
                continue;
            }
            shares.entry(inv.host.clone()).or_default().push(Task {
                id,
                step: s,
                argv: inv.argv.clone(),
                env: inv.env.clone(),
                role: inv.role,
                limit_ms: inv.limit().as_millis() as u64,
                at_ms: inv.at.as_millis() as u64,
            });
        }
        shares
    }

    /// What runs beside the step: the switches' commands (`local` false) or
    /// the launchers on the controller (`local` true), as a batch of their
    /// own, with where each answer goes back.
    fn beside(
        &self,
        batch: &[StepCommands],
        alloc: Option<&Allocation>,
        local: bool,
    ) -> (Vec<StepCommands>, Vec<(usize, usize)>) {
        let mut b = Vec::new();
        let mut back = Vec::new();
        for (s, step) in batch.iter().enumerate() {
            let mut invs = Vec::new();
            for (i, inv) in step.invocations.iter().enumerate() {
                if self.nodes.contains(&inv.host) || (inv.host == "localhost") != local {
                    continue;
                }
                let mut inv = inv.clone();
                // nccl-tests' launcher runs inside the allocation: srun as a
                // step of it, mpirun through OpenMPI's slurm launcher (which
                // reads SLURM_JOB_ID).
                let launcher = inv
                    .argv
                    .first()
                    .is_some_and(|p| p == "srun" || p == "mpirun");
                if let (true, Some(a)) = (local && launcher, alloc) {
                    inv.env.extend(a.launcher_env.iter().cloned());
                }
                invs.push(inv);
                back.push((s, i));
            }
            if !invs.is_empty() {
                b.push(StepCommands { invocations: invs });
            }
        }
        (b, back)
    }
}

/// What the controller knows of a round while its step runs: which nodes
/// are ready, what each command said and how it ended, and how many
/// clients each step still waits for (when none is left, its servers stop).
struct Pump<'a> {
    batch: &'a [StepCommands],
    at: &'a [(usize, usize)],
    nodes: usize,
    waiting: Vec<usize>,
    node_servers: Vec<bool>,
    /// The step's input; `None` closes it (the agents kill what they run).
    ctl: Option<mpsc::UnboundedSender<Control>>,
    ready: HashSet<String>,
    /// Slurm's ids of the step, from the ready lines (for `scancel`).
    slurm_steps: HashSet<String>,
    go_s: Option<f64>,
    stdout: HashMap<usize, Vec<u8>>,
    stderr: HashMap<usize, Vec<u8>>,
    ended: HashMap<usize, wire::End>,
    broken: HashMap<String, String>,
}

/// How the round ended, for the commands that never reported.
struct After {
    go: f64,
    now: f64,
    cancelled: bool,
    srun_said: String,
}

impl<'a> Pump<'a> {
    fn new(
        batch: &'a [StepCommands],
        at: &'a [(usize, usize)],
        shares: &BTreeMap<String, Vec<Task>>,
        ctl: mpsc::UnboundedSender<Control>,
    ) -> Self {
        // The clients each step waits for, node and other alike.
        let waiting = batch
            .iter()
            .map(|s| {
                s.invocations
                    .iter()
                    .filter(|i| i.role != Role::Server)
                    .count()
            })
            .collect();
        let mut node_servers = vec![false; batch.len()];
        for t in shares.values().flatten() {
            if t.role == Role::Server {
                node_servers[t.step] = true;
            }
        }
        Pump {
            batch,
            at,
            nodes: shares.len(),
            waiting,
            node_servers,
            ctl: Some(ctl),
            ready: HashSet::new(),
            slurm_steps: HashSet::new(),
            go_s: None,
            stdout: HashMap::new(),
            stderr: HashMap::new(),
            ended: HashMap::new(),
            broken: HashMap::new(),
        }
    }

    fn send(&self, c: Control) {
        if let Some(ctl) = &self.ctl {
            let _ = ctl.send(c);
        }
    }

    /// The barrier is passed: clients and probes may start, and a step
    /// with no client left stops its servers.
    fn go(&mut self, now: f64) {
        self.go_s = Some(now);
        self.send(Control::Go);
        for s in 0..self.batch.len() {
            self.release(s);
        }
    }

    /// Stops step `s`'s servers on the nodes once none of its clients runs.
    fn release(&self, s: usize) {
        if self.waiting[s] == 0 && self.node_servers[s] {
            self.send(Control::Stop(s));
        }
    }

    fn ready(&mut self, node: String, now: f64) {
        self.ready.insert(node);
        if self.go_s.is_none() && self.ready.len() >= self.nodes {
            self.go(now);
        }
    }

    fn on_line(&mut self, line: Line, now: f64) {
        match line {
            Line::Ready { node, step } => {
                if !step.is_empty() {
                    self.slurm_steps.insert(step);
                }
                self.ready(node, now);
            }
            Line::Stdout { id, bytes, .. } => self.stdout.entry(id).or_default().extend(bytes),
            Line::Stderr { id, bytes, .. } => self.stderr.entry(id).or_default().extend(bytes),
            Line::End(e) => {
                if let Some(&(s, i)) = self.at.get(e.id) {
                    let client = self.batch[s].invocations[i].role != Role::Server;
                    if client && !self.ended.contains_key(&e.id) {
                        self.waiting[s] = self.waiting[s].saturating_sub(1);
                        self.release(s);
                    }
                    self.ended.insert(e.id, e);
                }
            }
            Line::Broken { node, why } => {
                self.broken.insert(node.clone(), why);
                // A node that cannot run its share is ready for the barrier.
                self.ready(node, now);
            }
            Line::Bye { .. } => {}
        }
    }

    /// Every client beside the step (not on a node) has ended.
    fn others_ended(&mut self, on_node: impl Fn(&str) -> bool) {
        for s in 0..self.batch.len() {
            let done = self.batch[s]
                .invocations
                .iter()
                .filter(|i| i.role != Role::Server && !on_node(&i.host))
                .count();
            self.waiting[s] = self.waiting[s].saturating_sub(done);
            self.release(s);
        }
    }

    /// The output of node command `id`: what it said and how it ended, or
    /// why it never reported.
    fn output(&mut self, id: usize, inv: &Invocation, after: &After) -> InvocationOutput {
        let text =
            |b: Option<Vec<u8>>| String::from_utf8_lossy(&b.unwrap_or_default()).into_owned();
        let stdout = text(self.stdout.remove(&id));
        let stderr = text(self.stderr.remove(&id));
        if let Some(e) = self.ended.get(&id) {
            let program = inv.argv.first().map_or("", String::as_str);
            return InvocationOutput {
                failure: wire::failure(&inv.host, program, inv.limit().as_secs(), e, &stderr),
                stdout,
                stderr,
                exit: e.exit,
                started_s: after.go + e.started,
                ended_s: after.go + e.ended,
            };
        }
        let why = if let Some(b) = self.broken.get(&inv.host) {
            ExecFailure::Transport(format!("{}: the node agent could not run: {b}", inv.host))
        } else if after.cancelled {
            ExecFailure::Cancelled("the run was interrupted".into())
        } else {
            let srun = if after.srun_said.is_empty() {
                String::new()
            } else {
                format!("; srun said: {}", last_lines(&after.srun_said, 5))
            };
            ExecFailure::Transport(format!(
                "{}: the Slurm step ended before this command reported{srun}",
                inv.host
            ))
        };
        InvocationOutput {
            stdout,
            stderr,
            failure: Some(why),
            started_s: after.go,
            ended_s: after.now,
            exit: None,
        }
    }
}

fn last_lines(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join(" | ")
}

impl Transport for SlurmTransport {
    fn describe(&self) -> String {
        self.launcher.describe()
    }

    fn run_batch<'a>(&'a self, batch: &'a [StepCommands], cancel: Cancel) -> BatchFuture<'a> {
        Box::pin(self.batch(batch, cancel))
    }

    fn now_s(&self) -> f64 {
        self.launcher.now_s()
    }

    fn set_unreachable(&self, host: &str, why: ExecFailure) {
        if self.nodes.contains(host) {
            self.down
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .insert(host.to_string(), why);
        } else if let Some(t) = &self.others {
            t.set_unreachable(host, why);
        }
    }
}

impl Drop for SlurmTransport {
    fn drop(&mut self) {
        if let Some(Ok(a)) = self.alloc.get() {
            self.launcher.release(a);
        }
    }
}
