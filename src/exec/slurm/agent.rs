//! The node agent: `rocegate slurm-task PLAN`, one task per node of a
//! round's step. It runs its node's share of the plan: servers first; once
//! they listen it says `ready` and waits for the controller's `go` (every
//! node's servers listen: the barrier); then its clients and probes, each
//! at its offset after `go`. `stop STEP` on standard input stops that
//! step's servers (their clients ended, here or on another node); the end
//! of standard input means the controller is gone, and everything still
//! running is killed. Each command runs under `timeout -k` (its dead-man)
//! in the task's own session, never `setsid`: `scancel JOB.STEP` and
//! Slurm's process tracking reach every process.

use std::collections::{BTreeMap, HashSet};
use std::io::Write;
use std::process::Stdio;
use std::time::{Duration, Instant};

use tokio::sync::mpsc;

use super::wire::{self, Control, End, Ending, RoundPlan, Task};
use crate::exec::types::Role;

/// The `-k` of every command's `timeout`: SIGKILL this long after SIGTERM.
const KILL_AFTER_S: u64 = 5;
/// How long a started server may take to listen before the node says
/// ready anyway (a server listening by other means than TCP, e.g. RDMA CM).
const LISTEN_WAIT: Duration = Duration::from_secs(3);
/// What the agent allows past a command's own dead-man before it kills the
/// command's process group itself.
const AGENT_GRACE: Duration = Duration::from_secs(15);

/// The node this task runs on: Slurm's name for it.
fn node_name() -> String {
    std::env::var("SLURMD_NODENAME")
        .ok()
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| {
            std::fs::read_to_string("/proc/sys/kernel/hostname")
                .map(|h| h.trim().to_string())
                .unwrap_or_default()
        })
}

fn say(line: &str) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

/// Runs the share; always exits 0 once it has said what happened (a
/// command's own failure is in its `end` line, not in srun's status).
pub fn main(plan_path: &str) -> i32 {
    let node = node_name();
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            say(&wire::broken(&node, &format!("cannot start: {e}")));
            return 1;
        }
    };
    rt.block_on(run(plan_path, &node));
    say(&wire::bye(&node));
    0
}

fn read_share(plan_path: &str, node: &str) -> Result<Vec<Task>, String> {
    let text = std::fs::read_to_string(plan_path)
        .map_err(|e| format!("cannot read the round's plan {plan_path}: {e}"))?;
    // Each round broadcasts its own plan: this node's copy is done with.
    let _ = std::fs::remove_file(plan_path);
    let mut plan: RoundPlan = serde_json::from_str(&text)
        .map_err(|e| format!("the round's plan {plan_path} is not a plan: {e}"))?;
    plan.shares.remove(node).ok_or_else(|| {
        format!(
            "the plan of round {} has no share for node {node:?} (SLURMD_NODENAME)",
            plan.round
        )
    })
}

/// What a finished command sends back to the loop.
struct Done {
    id: usize,
    exit: Option<i32>,
    stdout: String,
    stderr: String,
}

struct Running {
    pid: u32,
    step: usize,
    role: Role,
    started: Instant,
    deadline: Instant,
    /// Why the agent killed it, if it did.
    killed: Option<(Ending, String)>,
}

fn start(task: &Task, done: &mpsc::UnboundedSender<Done>) -> Result<u32, String> {
    let secs = Duration::from_millis(task.limit_ms).as_secs().max(1);
    let mut cmd = tokio::process::Command::new("timeout");
    cmd.args(["-k", &KILL_AFTER_S.to_string(), &secs.to_string()])
        .args(&task.argv)
        .envs(task.env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("cannot start timeout {secs} {:?}: {e}", task.argv))?;
    let pid = child.id().unwrap_or(0);
    let out = child.stdout.take();
    let err = child.stderr.take();
    let id = task.id;
    let done = done.clone();
    tokio::spawn(async move {
        let o = tokio::spawn(async move {
            match out {
                Some(o) => crate::exec::stream::read_capped(o).await,
                None => String::new(),
            }
        });
        let e = tokio::spawn(async move {
            match err {
                Some(e) => crate::exec::stream::read_capped(e).await,
                None => String::new(),
            }
        });
        let status = child.wait().await.ok();
        // A daemonised grandchild may hold the pipes: wait for them only
        // briefly once the command itself has ended.
        let grace = Duration::from_secs(5);
        let stdout = tokio::time::timeout(grace, o)
            .await
            .ok()
            .and_then(Result::ok)
            .unwrap_or_default();
        let stderr = tokio::time::timeout(grace, e)
            .await
            .ok()
            .and_then(Result::ok)
            .unwrap_or_default();
        let _ = done.send(Done {
            id,
            exit: status.and_then(|s| s.code()),
            stdout,
            stderr,
        });
    });
    Ok(pid)
}

/// Starts `task` and keeps it among the running, or says it could not start.
fn launch(
    node: &str,
    task: &Task,
    done: &mpsc::UnboundedSender<Done>,
    running: &mut BTreeMap<usize, Running>,
) {
    match start(task, done) {
        Ok(pid) => {
            let now = Instant::now();
            running.insert(
                task.id,
                Running {
                    pid,
                    step: task.step,
                    role: task.role,
                    started: now,
                    deadline: now + Duration::from_millis(task.limit_ms) + AGENT_GRACE,
                    killed: None,
                },
            );
        }
        Err(why) => not_run(node, task.id, Ending::NotStarted, &why),
    }
}

/// SIGTERM to the command's process group (`timeout` leads its own),
/// SIGKILL two seconds later.
fn kill_group(pid: u32) {
    if pid == 0 {
        return;
    }
    let pg = -(pid as i32);
    // SAFETY: kill has no memory preconditions.
    unsafe { libc::kill(pg, libc::SIGTERM) };
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_secs(2)).await;
        // SAFETY: as above.
        unsafe { libc::kill(pg, libc::SIGKILL) };
    });
}

/// Whether any process of group `pgid` holds a listening TCP socket.
fn listening(pgid: u32) -> bool {
    let mut inodes = HashSet::new();
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return false;
    };
    for p in procs.flatten() {
        let name = p.file_name();
        let Some(pid) = name
            .to_str()
            .filter(|n| n.bytes().all(|b| b.is_ascii_digit()))
        else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // pid (comm) state ppid pgrp …: comm may hold spaces and parens.
        let pgrp = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().nth(2))
            .and_then(|g| g.parse::<u32>().ok());
        if pgrp != Some(pgid) {
            continue;
        }
        let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
            continue;
        };
        for fd in fds.flatten() {
            if let Ok(link) = std::fs::read_link(fd.path()) {
                let l = link.to_string_lossy();
                if let Some(ino) = l.strip_prefix("socket:[").and_then(|r| r.strip_suffix(']')) {
                    inodes.insert(ino.to_string());
                }
            }
        }
    }
    if inodes.is_empty() {
        return false;
    }
    ["/proc/net/tcp", "/proc/net/tcp6"].iter().any(|t| {
        std::fs::read_to_string(t).is_ok_and(|text| {
            text.lines().skip(1).any(|l| {
                let f: Vec<&str> = l.split_whitespace().collect();
                f.len() > 9 && f[3] == "0A" && inodes.contains(f[9])
            })
        })
    })
}

fn secs_since(t: Instant, base: Instant) -> f64 {
    if t >= base {
        t.duration_since(base).as_secs_f64()
    } else {
        -base.duration_since(t).as_secs_f64()
    }
}

fn report(node: &str, d: &Done, r: &Running, go: Instant) {
    for l in wire::chunks(node, d.id, "out", d.stdout.as_bytes()) {
        say(&l);
    }
    for l in wire::chunks(node, d.id, "err", d.stderr.as_bytes()) {
        say(&l);
    }
    let (ending, note) = r.killed.clone().unwrap_or((Ending::Exited, String::new()));
    say(&wire::end(&End {
        node: node.to_string(),
        id: d.id,
        exit: d.exit,
        ending,
        started: secs_since(r.started, go),
        ended: secs_since(Instant::now(), go),
        note,
    }));
}

fn not_run(node: &str, id: usize, ending: Ending, note: &str) {
    say(&wire::end(&End {
        node: node.to_string(),
        id,
        exit: None,
        ending,
        started: 0.0,
        ended: 0.0,
        note: note.to_string(),
    }));
}

const GONE: &str = "the controller is gone (the step's input ended): killed";

async fn run(plan_path: &str, node: &str) {
    let share = match read_share(plan_path, node) {
        Ok(s) => s,
        Err(why) => {
            say(&wire::broken(node, &why));
            return;
        }
    };
    let (ctl_tx, mut ctl) = mpsc::unbounded_channel::<Option<Control>>();
    // A thread, as reading standard input blocks.
    std::thread::spawn(move || {
        use std::io::BufRead;
        for l in std::io::stdin().lock().lines().map_while(Result::ok) {
            if let Some(c) = Control::parse(&l) {
                let _ = ctl_tx.send(Some(c));
            }
        }
        let _ = ctl_tx.send(None);
    });
    let (done_tx, mut done) = mpsc::unbounded_channel::<Done>();
    let t0 = Instant::now();
    let mut running: BTreeMap<usize, Running> = BTreeMap::new();
    let mut finished: Vec<Done> = Vec::new();
    let (servers, mut pending): (Vec<Task>, Vec<Task>) =
        share.into_iter().partition(|t| t.role == Role::Server);
    for t in &servers {
        launch(node, t, &done_tx, &mut running);
    }
    // Ready once every server listens, has ended, or had its time.
    let until = Instant::now() + LISTEN_WAIT;
    while Instant::now() < until {
        while let Ok(d) = done.try_recv() {
            finished.push(d);
        }
        let waiting = running
            .iter()
            .filter(|(id, _)| !finished.iter().any(|d| d.id == **id))
            .any(|(_, r)| !listening(r.pid));
        if !waiting {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let step_id = format!(
        "{}.{}",
        std::env::var("SLURM_JOB_ID").unwrap_or_default(),
        std::env::var("SLURM_STEP_ID").unwrap_or_default()
    );
    say(&wire::ready(node, &step_id));
    // The barrier: every node's servers listen.
    let go = loop {
        match ctl.recv().await {
            Some(Some(Control::Go)) => break Some(Instant::now()),
            Some(Some(Control::Stop(_))) => continue,
            Some(None) | None => break None,
        }
    };
    let go = go.unwrap_or_else(|| {
        for r in running.values_mut() {
            r.killed = Some((Ending::Cancelled, GONE.into()));
            kill_group(r.pid);
        }
        for t in pending.drain(..) {
            not_run(node, t.id, Ending::Cancelled, GONE);
        }
        t0
    });
    for d in finished.drain(..) {
        if let Some(r) = running.remove(&d.id) {
            report(node, &d, &r, go);
        }
    }
    pending.sort_by_key(|t| t.at_ms);
    let mut input_open = true;
    loop {
        if pending.is_empty() && running.is_empty() {
            break;
        }
        let now = Instant::now();
        for t in pending
            .iter()
            .filter(|t| go + Duration::from_millis(t.at_ms) <= now)
        {
            launch(node, t, &done_tx, &mut running);
        }
        pending.retain(|t| go + Duration::from_millis(t.at_ms) > now);
        let next_start = pending.first().map(|t| go + Duration::from_millis(t.at_ms));
        let next_deadline = running
            .values()
            .filter(|r| r.killed.is_none())
            .map(|r| r.deadline)
            .min();
        let wake = [next_start, next_deadline]
            .into_iter()
            .flatten()
            .min()
            .unwrap_or(now + Duration::from_secs(3600));
        tokio::select! {
            Some(d) = done.recv() => {
                if let Some(r) = running.remove(&d.id) {
                    report(node, &d, &r, go);
                }
            }
            c = ctl.recv(), if input_open => match c {
                Some(Some(Control::Stop(step))) => {
                    for r in running.values_mut().filter(|r| {
                        r.step == step && r.role == Role::Server && r.killed.is_none()
                    }) {
                        r.killed = Some((Ending::Stopped, "its clients had ended".into()));
                        kill_group(r.pid);
                    }
                }
                Some(Some(Control::Go)) => {}
                Some(None) | None => {
                    input_open = false;
                    for r in running.values_mut().filter(|r| r.killed.is_none()) {
                        r.killed = Some((Ending::Cancelled, GONE.into()));
                        kill_group(r.pid);
                    }
                    for t in pending.drain(..) {
                        not_run(node, t.id, Ending::Cancelled, GONE);
                    }
                }
            },
            _ = tokio::time::sleep_until(wake.into()) => {
                let now = Instant::now();
                for r in running.values_mut().filter(|r| r.killed.is_none() && r.deadline <= now) {
                    r.killed = Some((
                        Ending::TimedOut,
                        "still running past its dead-man: the agent killed its process group".into(),
                    ));
                    kill_group(r.pid);
                }
            }
        }
    }
}
