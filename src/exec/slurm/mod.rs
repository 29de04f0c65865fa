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
use super::types::{ExecFailure, InvocationOutput, Role, StepCommands};

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
        let mut at: Vec<(usize, usize)> = Vec::new();
        for (s, step) in batch.iter().enumerate() {
            for i in 0..step.invocations.len() {
                at.push((s, i));
            }
        }
        let on_node = |host: &str| self.nodes.contains(host);
        let any_node = at
            .iter()
            .any(|&(s, i)| on_node(&batch[s].invocations[i].host));
        if any_node {
            launch::COUNTERS
                .batches
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        let alloc = if any_node {
            match self.allocation().await {
                Ok(a) => Some(a),
                Err(e) => {
                    for &(s, i) in &at {
                        let inv = &batch[s].invocations[i];
                        if on_node(&inv.host) {
                            outs[s][i] = Some(self.failed(ExecFailure::Transport(format!(
                                "{}: no Slurm allocation: {e}",
                                inv.host
                            ))));
                        }
                    }
                    None
                }
            }
        } else {
            None
        };
        // The plan: each usable node's share; the rest fail at once.
        let mut shares: BTreeMap<String, Vec<Task>> = BTreeMap::new();
        let known_down = self.down.lock().unwrap_or_else(|p| p.into_inner()).clone();
        for (id, &(s, i)) in at.iter().enumerate() {
            let inv = &batch[s].invocations[i];
            if !on_node(&inv.host) || outs[s][i].is_some() {
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
        let emulated_others = self.others.is_none();
        // The clients each step still waits for, node and other alike: when
        // none is left its servers are stopped.
        let mut waiting: Vec<usize> = batch
            .iter()
            .map(|s| {
                s.invocations
                    .iter()
                    .filter(|i| i.role != Role::Server)
                    .count()
            })
            .collect();
        let mut node_servers: Vec<bool> = vec![false; batch.len()];
        for t in shares.values().flatten() {
            if t.role == Role::Server {
                node_servers[t.step] = true;
            }
        }
        // What runs beside the step: switches, and launchers on the controller.
        let others_batch = |local: bool| -> (Vec<StepCommands>, Vec<(usize, usize)>) {
            let mut b = Vec::new();
            let mut back = Vec::new();
            for (s, step) in batch.iter().enumerate() {
                let mut invs = Vec::new();
                for (i, inv) in step.invocations.iter().enumerate() {
                    let is_local = inv.host == "localhost";
                    if on_node(&inv.host) || is_local != local {
                        continue;
                    }
                    let mut inv = inv.clone();
                    // nccl-tests' launcher runs inside the allocation: srun
                    // as a step of it, mpirun through OpenMPI's slurm
                    // launcher (which reads SLURM_JOB_ID).
                    if local
                        && inv
                            .argv
                            .first()
                            .is_some_and(|p| p == "srun" || p == "mpirun")
                    {
                        if let Some(a) = alloc {
                            inv.env.extend(a.launcher_env.iter().cloned());
                        }
                    }
                    invs.push(inv);
                    back.push((s, i));
                }
                if !invs.is_empty() {
                    b.push(StepCommands { invocations: invs });
                }
            }
            (b, back)
        };
        let ((local_b, local_back), (remote_b, remote_back)) = if emulated_others {
            Default::default()
        } else {
            (others_batch(true), others_batch(false))
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
        let mut step_nodes: Vec<String> = shares.keys().cloned().collect();
        step_nodes.sort();
        let run_step = !step_nodes.is_empty() || emulated_others && !at.is_empty();
        let (line_tx, mut line_rx) = mpsc::unbounded_channel::<String>();
        let (ctl_tx, ctl_rx) = mpsc::unbounded_channel::<Control>();
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
                Some(
                    self.launcher
                        .step(
                            alloc.unwrap_or(&empty),
                            &step_nodes,
                            &plan,
                            batch,
                            StepIo {
                                lines: line_tx,
                                control: ctl_rx,
                            },
                        )
                        .await,
                )
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
            let _ = ctl_tx.send(Control::Go);
        }
        let mut ctl = Some(ctl_tx);
        let mut ready: HashSet<String> = HashSet::new();
        let mut slurm_steps: HashSet<String> = HashSet::new();
        let mut go_s: Option<f64> = None;
        let mut stdout: HashMap<usize, Vec<u8>> = HashMap::new();
        let mut stderr: HashMap<usize, Vec<u8>> = HashMap::new();
        let mut ended: HashMap<usize, wire::End> = HashMap::new();
        let mut broken: HashMap<String, String> = HashMap::new();
        let mut step_end = None;
        let mut others_out = None;
        let mut lines_open = true;
        let mut cancelled = false;
        let deadline = tokio::time::Instant::now() + limit;
        let mut cancel_deadline: Option<tokio::time::Instant> = None;
        let stop_if_done =
            |s: usize, waiting: &[usize], ctl: &Option<mpsc::UnboundedSender<Control>>| {
                if waiting[s] == 0 && node_servers[s] {
                    if let Some(c) = ctl {
                        let _ = c.send(Control::Stop(s));
                    }
                }
            };
        while step_end.is_none() || others_out.is_none() || lines_open {
            let timer = cancel_deadline.unwrap_or(deadline);
            tokio::select! {
                l = line_rx.recv(), if lines_open => match l.as_deref().and_then(wire::parse) {
                    Some(Line::Ready { node, step }) => {
                        ready.insert(node);
                        if !step.is_empty() {
                            slurm_steps.insert(step);
                        }
                        if go_s.is_none() && ready.len() >= step_nodes.len() {
                            go_s = Some(self.launcher.now_s());
                            if let Some(c) = &ctl {
                                let _ = c.send(Control::Go);
                            }
                            for s in 0..batch.len() {
                                stop_if_done(s, &waiting, &ctl);
                            }
                        }
                    }
                    Some(Line::Stdout { id, bytes, .. }) => stdout.entry(id).or_default().extend(bytes),
                    Some(Line::Stderr { id, bytes, .. }) => stderr.entry(id).or_default().extend(bytes),
                    Some(Line::End(e)) => {
                        if let Some(&(s, i)) = at.get(e.id) {
                            if batch[s].invocations[i].role != Role::Server && !ended.contains_key(&e.id) {
                                waiting[s] = waiting[s].saturating_sub(1);
                                stop_if_done(s, &waiting, &ctl);
                            }
                            ended.insert(e.id, e);
                        }
                    }
                    Some(Line::Broken { node, why }) => {
                        broken.insert(node.clone(), why);
                        // A node that cannot run its share is ready for the barrier.
                        ready.insert(node);
                        if go_s.is_none() && ready.len() >= step_nodes.len() {
                            go_s = Some(self.launcher.now_s());
                            if let Some(c) = &ctl {
                                let _ = c.send(Control::Go);
                            }
                        }
                    }
                    Some(Line::Bye { .. }) => {}
                    None => {
                        if l.is_none() {
                            lines_open = false;
                        }
                    }
                },
                e = &mut step_fut, if step_end.is_none() => {
                    step_end = Some(e);
                }
                o = &mut others_fut, if others_out.is_none() => {
                    for (s, step) in batch.iter().enumerate() {
                        let done = step
                            .invocations
                            .iter()
                            .filter(|i| i.role != Role::Server && !on_node(&i.host) && !emulated_others)
                            .count();
                        waiting[s] = waiting[s].saturating_sub(done);
                        stop_if_done(s, &waiting, &ctl);
                    }
                    others_out = Some(o);
                }
                () = async { let _ = cancel.wait_for(|c| *c).await; }, if !cancelled => {
                    cancelled = true;
                    // The tasks' input ends: each agent kills what it runs.
                    ctl = None;
                    cancel_deadline = Some(tokio::time::Instant::now() + CANCEL_WAIT);
                }
                _ = tokio::time::sleep_until(timer), if step_end.is_none() => {
                    for s in &slurm_steps {
                        self.launcher.cancel_step(s).await;
                    }
                    ctl = None;
                    // Once more only: then the step is abandoned.
                    if cancel_deadline.is_some() {
                        break;
                    }
                    cancel_deadline = Some(tokio::time::Instant::now() + CANCEL_WAIT);
                }
            }
        }
        drop(ctl);
        let step_end = step_end.flatten();
        // Put every answer in its place.
        let go = go_s.unwrap_or_else(|| self.launcher.now_s());
        let srun_said = step_end
            .as_ref()
            .map(|e| e.stderr.trim().to_string())
            .unwrap_or_default();
        for (id, &(s, i)) in at.iter().enumerate() {
            if outs[s][i].is_some() {
                continue;
            }
            let inv = &batch[s].invocations[i];
            if !on_node(&inv.host) {
                continue;
            }
            let out_text =
                String::from_utf8_lossy(&stdout.remove(&id).unwrap_or_default()).into_owned();
            let err_text =
                String::from_utf8_lossy(&stderr.remove(&id).unwrap_or_default()).into_owned();
            let o = match ended.get(&id) {
                Some(e) => InvocationOutput {
                    failure: wire::failure(
                        &inv.host,
                        inv.argv.first().map_or("", String::as_str),
                        inv.limit().as_secs(),
                        e,
                        &err_text,
                    ),
                    stdout: out_text,
                    stderr: err_text,
                    exit: e.exit,
                    started_s: go + e.started,
                    ended_s: go + e.ended,
                },
                None => {
                    let why = if let Some(b) = broken.get(&inv.host) {
                        ExecFailure::Transport(format!(
                            "{}: the node agent could not run: {b}",
                            inv.host
                        ))
                    } else if cancelled {
                        ExecFailure::Cancelled("the run was interrupted".into())
                    } else {
                        ExecFailure::Transport(format!(
                            "{}: the Slurm step ended before this command reported{}",
                            inv.host,
                            if srun_said.is_empty() {
                                String::new()
                            } else {
                                format!("; srun said: {}", last_lines(&srun_said, 5))
                            }
                        ))
                    };
                    InvocationOutput {
                        stdout: out_text,
                        stderr: err_text,
                        failure: Some(why),
                        started_s: go,
                        ended_s: self.launcher.now_s(),
                        exit: None,
                    }
                }
            };
            outs[s][i] = Some(o);
        }
        // What ran beside the step.
        let emulated = step_end.and_then(|e| e.others);
        if let Some(all) = emulated {
            for (s, row) in all.into_iter().enumerate() {
                for (i, o) in row.into_iter().enumerate() {
                    if outs
                        .get(s)
                        .and_then(|r| r.get(i))
                        .is_some_and(Option::is_none)
                    {
                        outs[s][i] = Some(o);
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
