//! The `ssh` transport: the system OpenSSH client, one ControlMaster
//! connection per host reused by every command, `BatchMode` so a missing key
//! fails instead of prompting, bounded concurrency (global and per host:
//! sshd's default MaxSessions is 10 per connection).
//!
//! The limits admit whole steps, never single commands: a step starts when
//! all the slots its commands need are free and holds them until its last
//! command ends. A server waits for its own clients only, so a round with
//! more steps than slots runs in waves instead of filling every slot with
//! servers whose clients can never start.
//!
//! Every remote command runs as
//! `setsid -w sh -c 'echo "@@rocegate-pgid $$" >&2; exec timeout -k 5 T …'`:
//! in a session and process group of its own, whose id comes back first on
//! stderr, under a dead-man `timeout` that kills it even if rocegate dies.
//! Cancelling or timing out an invocation kills that remote process group
//! over the master connection, so no `ib_write_bw` is left listening.

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::io::{AsyncBufReadExt, AsyncReadExt, BufReader};
use tokio::process::Command;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::transport::{BatchFuture, Cancel, Transport};
use super::types::{quote, ExecFailure, Invocation, InvocationOutput, Role, StepCommands};
use crate::config::inventory::SshSpec;
use crate::config::model::Inventory;

/// The first stderr line of every remote command: its process group id.
const PGID_MARK: &str = "@@rocegate-pgid ";
/// How long a stop waits for a just-started command to report its process
/// group before it gives up on killing the remote group.
const PGID_WAIT: Duration = Duration::from_secs(3);
/// How long a server gets to start listening before its client starts.
const SERVER_HEAD_START: Duration = Duration::from_millis(500);
/// What the controller allows beyond the remote dead-man timeout before it
/// gives up on a command itself (connection setup, a slow kill).
const LOCAL_GRACE: Duration = Duration::from_secs(15);
/// The dead-man timeout's `-k`: SIGKILL this long after its SIGTERM.
const KILL_AFTER_S: u64 = 5;

pub struct SshTransport {
    spec: SshSpec,
    /// Inventory name of every node and switch → management address.
    address: HashMap<String, String>,
    control_dir: PathBuf,
    global: Arc<Semaphore>,
    per_host: Mutex<HashMap<String, Arc<Semaphore>>>,
    /// Hosts the preflight could not reach, and why.
    down: Mutex<HashMap<String, ExecFailure>>,
    start: Instant,
}

/// How one ssh run ended, before it becomes an [`InvocationOutput`].
struct Ended {
    stdout: String,
    stderr: String,
    exit: Option<i32>,
    /// The remote process group, when the remote command started.
    pgid: Option<u32>,
    failure: Option<ExecFailure>,
}

impl Ended {
    /// A command that never ran, or whose end is unknown, and why.
    fn failed(why: ExecFailure) -> Self {
        Ended {
            stdout: String::new(),
            stderr: String::new(),
            exit: None,
            pgid: None,
            failure: Some(why),
        }
    }
}

impl SshTransport {
    pub fn new(inv: &Inventory, spec: &SshSpec) -> std::io::Result<Self> {
        let mut address: HashMap<String, String> = inv
            .nodes
            .iter()
            .map(|n| (n.name.clone(), n.address.clone()))
            .collect();
        for s in &inv.switches {
            address.insert(s.name.clone(), s.address.clone());
        }
        Self::with_addresses(spec, address)
    }

    /// A transport that reaches each host name at the given address.
    pub fn with_addresses(
        spec: &SshSpec,
        address: HashMap<String, String>,
    ) -> std::io::Result<Self> {
        let control_dir = crate::paths::private_temp_dir("rocegate-ssh")?;
        Ok(SshTransport {
            spec: spec.clone(),
            address,
            control_dir,
            global: Arc::new(Semaphore::new(spec.parallelism.max(1))),
            per_host: Mutex::new(HashMap::new()),
            down: Mutex::new(HashMap::new()),
            start: Instant::now(),
        })
    }

    /// The `ssh` words that reach `host`, up to and including the address.
    pub fn ssh_argv(&self, host: &str) -> Vec<String> {
        let addr = self.address.get(host).map_or(host, String::as_str);
        let mut a: Vec<String> = vec!["ssh".into()];
        a.extend(client_options(&self.spec));
        if self.spec.control_master {
            for o in [
                "ControlMaster=auto".to_string(),
                format!("ControlPath={}/%C", self.control_dir.display()),
                "ControlPersist=120".to_string(),
            ] {
                a.extend(["-o".into(), o]);
            }
        }
        a.push("-T".into());
        a.push("--".into());
        a.push(addr.to_string());
        a
    }

    fn host_slot(&self, host: &str) -> Arc<Semaphore> {
        let mut m = self.per_host.lock().unwrap_or_else(|p| p.into_inner());
        m.entry(host.to_string())
            .or_insert_with(|| Arc::new(Semaphore::new(self.spec.per_host.max(1))))
            .clone()
    }

    /// Kills a remote process group over the master connection: SIGTERM,
    /// then SIGKILL after two seconds if anything is left.
    async fn kill_remote(&self, host: &str, pgid: u32) {
        let line = format!(
            "kill -TERM -- -{pgid} 2>/dev/null; sleep 2; kill -KILL -- -{pgid} 2>/dev/null; true"
        );
        let mut argv = self.ssh_argv(host);
        argv.push(line);
        let mut cmd = Command::new(&argv[0]);
        cmd.args(&argv[1..])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .kill_on_drop(true);
        let _ = tokio::time::timeout(Duration::from_secs(15), cmd.status()).await;
    }

    /// One attempt at an invocation: connect, run, read, and on timeout or
    /// cancel kill the remote group.
    async fn attempt(&self, inv: &Invocation, mut cancel: Cancel) -> Ended {
        let mut argv = self.ssh_argv(&inv.host);
        argv.push(remote_command(inv));
        let mut cmd = Command::new(&argv[0]);
        cmd.args(&argv[1..])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .kill_on_drop(true);
        let mut child = match cmd.spawn() {
            Ok(c) => c,
            Err(e) => {
                let f = if e.kind() == std::io::ErrorKind::NotFound {
                    ExecFailure::MissingBinary(
                        "ssh: the OpenSSH client is not installed on the controller".into(),
                    )
                } else {
                    ExecFailure::Transport(format!("cannot start ssh: {e}"))
                };
                return Ended::failed(f);
            }
        };
        let out = child.stdout.take().expect("stdout is piped");
        let err = child.stderr.take().expect("stderr is piped");
        let pgid: Arc<Mutex<Option<u32>>> = Arc::new(Mutex::new(None));
        let seen = pgid.clone();
        let stderr_task = tokio::spawn(async move {
            // Bytes, not `lines()`: a line that is not UTF-8 must not end
            // the reading and leave the remote command blocked on a full pipe.
            let mut reader = BufReader::new(err.take(super::stream::STREAM_CAP));
            let mut text = String::new();
            let mut line = Vec::new();
            loop {
                line.clear();
                match reader.read_until(b'\n', &mut line).await {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {}
                }
                let l = String::from_utf8_lossy(&line);
                let l = l.strip_suffix('\n').unwrap_or(&l);
                let l = l.strip_suffix('\r').unwrap_or(l);
                if let Some(id) = l.strip_prefix(PGID_MARK) {
                    if let Ok(id) = id.trim().parse() {
                        *seen.lock().unwrap_or_else(|p| p.into_inner()) = Some(id);
                        continue;
                    }
                }
                text.push_str(l);
                text.push('\n');
            }
            let dropped = super::stream::drain(&mut reader.into_inner().into_inner()).await;
            if dropped > 0 {
                text += &super::stream::cut_note(dropped);
            }
            text
        });
        let stdout_task = tokio::spawn(async move { super::stream::read_capped(out).await });
        let deadline = inv.limit() + LOCAL_GRACE;
        let mut failure = None;
        let status = tokio::select! {
            s = child.wait() => s.ok(),
            _ = tokio::time::sleep(deadline) => {
                failure = Some(ExecFailure::TimedOut(format!(
                    "{}: no answer within {}s; its process group was killed",
                    inv.host,
                    deadline.as_secs()
                )));
                None
            }
            _ = cancel.wait_for(|c| *c) => {
                failure = Some(ExecFailure::Cancelled("the run was interrupted".into()));
                None
            }
        };
        if status.is_none() {
            // A command stopped just after it started (a server whose
            // client was done at once) may not have reported its process
            // group yet: wait briefly for it, or the remote group outlives
            // the stop until its dead-man timeout.
            let until = Instant::now() + PGID_WAIT;
            let mut id = *pgid.lock().unwrap_or_else(|p| p.into_inner());
            while id.is_none()
                && Instant::now() < until
                && child.try_wait().ok().flatten().is_none()
            {
                tokio::time::sleep(Duration::from_millis(20)).await;
                id = *pgid.lock().unwrap_or_else(|p| p.into_inner());
            }
            if let Some(id) = id {
                self.kill_remote(&inv.host, id).await;
            }
            let _ = child.start_kill();
            let _ = child.wait().await;
        }
        // With a master connection the session's output pipes live in the
        // master: after a kill, wait for them only briefly.
        let wait = if status.is_some() {
            Duration::from_secs(3600)
        } else {
            Duration::from_secs(5)
        };
        let stdout = read_for(stdout_task, wait).await;
        let stderr = read_for(stderr_task, wait).await;
        let id = *pgid.lock().unwrap_or_else(|p| p.into_inner());
        Ended {
            stdout,
            stderr,
            exit: status.and_then(|s| s.code()),
            pgid: id,
            failure,
        }
    }

    /// The slots a step needs, taken all before any of its commands start:
    /// one global slot per command (at most `parallelism`), then, host by
    /// host in name order (so two steps never wait on each other), one per
    /// command on that host (at most `per_host`). A step with more commands
    /// on one host than `per_host` (an incast of many senders) runs them
    /// all: sshd refuses the sessions past its MaxSessions on the master
    /// and the client opens a connection of its own (docs/scale.md).
    async fn admit(&self, step: &StepCommands) -> Vec<OwnedSemaphorePermit> {
        let mut on_host: std::collections::BTreeMap<&str, usize> = Default::default();
        for inv in &step.invocations {
            *on_host.entry(inv.host.as_str()).or_default() += 1;
        }
        let want = |n: usize, cap: usize| n.min(cap.max(1)).try_into().unwrap_or(u32::MAX);
        let mut held = Vec::with_capacity(on_host.len() + 1);
        let global = want(step.invocations.len(), self.spec.parallelism);
        // The semaphores are never closed, so acquiring cannot fail.
        if let Ok(p) = self.global.clone().acquire_many_owned(global).await {
            held.push(p);
        }
        for (host, n) in on_host {
            let slot = self.host_slot(host);
            if let Ok(p) = slot.acquire_many_owned(want(n, self.spec.per_host)).await {
                held.push(p);
            }
        }
        held
    }

    /// One invocation of an admitted step, retried once when ssh failed
    /// before the remote command started (exit 255 and no process group).
    async fn run_one(&self, inv: &Invocation, cancel: Cancel, t0: Instant) -> InvocationOutput {
        if !inv.at.is_zero() {
            let mut c = cancel.clone();
            tokio::select! {
                _ = tokio::time::sleep_until((t0 + inv.at).into()) => {}
                _ = c.wait_for(|c| *c) => {
                    let why = "the run was interrupted before it was due";
                    let ended = Ended::failed(ExecFailure::Cancelled(why.into()));
                    return self.output(inv, ended, self.now_s());
                }
            }
        }
        let known = self
            .down
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&inv.host)
            .cloned();
        if let Some(why) = known {
            let now = self.now_s();
            let why = match why {
                ExecFailure::Unreachable(m) => {
                    ExecFailure::Unreachable(format!("{m} (at preflight; not tried again)"))
                }
                ExecFailure::AuthRefused(m) => {
                    ExecFailure::AuthRefused(format!("{m} (at preflight; not tried again)"))
                }
                other => other,
            };
            let ended = Ended::failed(why);
            return self.output(inv, ended, now);
        }
        let started = self.now_s();
        let mut ended = self.attempt(inv, cancel.clone()).await;
        if ended.exit == Some(255) && ended.pgid.is_none() && !auth_refused(&ended.stderr) {
            tokio::time::sleep(Duration::from_secs(1)).await;
            ended = self.attempt(inv, cancel).await;
        }
        self.output(inv, ended, started)
    }

    fn output(&self, inv: &Invocation, e: Ended, started: f64) -> InvocationOutput {
        let stderr = e.stderr.trim().to_string();
        let failure = e.failure.or_else(|| match e.exit {
            Some(255) if e.pgid.is_none() => Some(if auth_refused(&e.stderr) {
                ExecFailure::AuthRefused(format!(
                    "{}: the key was refused ({stderr}); check the inventory's ssh user and key",
                    inv.host
                ))
            } else {
                ExecFailure::Unreachable(format!("{}: {stderr}", inv.host))
            }),
            exit => super::types::exit_failure(
                &inv.host,
                inv.argv.first().map_or("", String::as_str),
                inv.limit().as_secs(),
                exit,
                &stderr,
            ),
        });
        InvocationOutput {
            stdout: e.stdout,
            stderr: e.stderr,
            exit: e.exit,
            failure,
            started_s: started,
            ended_s: self.now_s(),
        }
    }

    /// Runs one step: servers first, the rest after a head start; servers
    /// still running when the rest has ended are stopped (their remote
    /// process group killed), as is everything when the run is cancelled.
    async fn run_step(
        &self,
        step: &StepCommands,
        cancel: Cancel,
        t0: Instant,
    ) -> Vec<InvocationOutput> {
        let n = step.invocations.len();
        // A step asks for its slots when its first command is due, so a
        // timed probe does not hold a slot idle until its offset.
        let due = step
            .invocations
            .iter()
            .map(|i| i.at)
            .min()
            .unwrap_or_default();
        let mut waiting = cancel.clone();
        let _slots = tokio::select! {
            held = async {
                tokio::time::sleep_until((t0 + due).into()).await;
                self.admit(step).await
            } => held,
            _ = waiting.wait_for(|c| *c) => {
                let why = "the run was interrupted before its step started";
                let now = self.now_s();
                return step
                    .invocations
                    .iter()
                    .map(|inv| {
                        let ended = Ended::failed(ExecFailure::Cancelled(why.into()));
                        self.output(inv, ended, now)
                    })
                    .collect();
            }
        };
        let is_server = |i: &usize| step.invocations[*i].role == Role::Server;
        let any_server = (0..n).any(|i| is_server(&i));
        let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
        let servers = join_all((0..n).filter(is_server).map(|i| {
            let stop = stop_rx.clone();
            async move { (i, self.run_one(&step.invocations[i], stop, t0).await) }
        }));
        let others = async {
            if any_server {
                tokio::time::sleep(SERVER_HEAD_START).await;
            }
            let outs = join_all((0..n).filter(|i| !is_server(i)).map(|i| {
                let c = cancel.clone();
                async move { (i, self.run_one(&step.invocations[i], c, t0).await) }
            }))
            .await;
            let _ = stop_tx.send(true);
            outs
        };
        let forward_cancel = async {
            let mut c = cancel.clone();
            let _ = c.wait_for(|x| *x).await;
            let _ = stop_tx.send(true);
            std::future::pending::<()>().await
        };
        let (server_outs, other_outs) = tokio::select! {
            r = async { tokio::join!(servers, others) } => r,
            _ = forward_cancel => unreachable!("pending never completes"),
        };
        let mut outputs: Vec<Option<InvocationOutput>> = vec![None; n];
        for (i, mut o) in server_outs {
            // A server stopped because its clients had ended did not fail.
            if matches!(o.failure, Some(ExecFailure::Cancelled(_))) && !*cancel.borrow() {
                o.failure = None;
            }
            outputs[i] = Some(o);
        }
        for (i, o) in other_outs {
            outputs[i] = Some(o);
        }
        outputs
            .into_iter()
            .map(|o| {
                o.unwrap_or_else(|| InvocationOutput {
                    stdout: String::new(),
                    stderr: String::new(),
                    exit: None,
                    failure: Some(ExecFailure::Transport("lost".into())),
                    started_s: self.now_s(),
                    ended_s: self.now_s(),
                })
            })
            .collect()
    }
}

/// The ssh client options the inventory asks for: batch mode, timeouts,
/// host key policy, port, key, user, jump host. The transport adds its
/// connection reuse; launchers (mpirun's ssh agent) use these as they are.
pub fn client_options(s: &SshSpec) -> Vec<String> {
    let mut a: Vec<String> = Vec::new();
    let mut opt = |o: String| {
        a.push("-o".into());
        a.push(o);
    };
    opt("BatchMode=yes".into());
    opt(format!(
        "ConnectTimeout={}",
        s.connect_timeout.0.as_secs().max(1)
    ));
    opt("ServerAliveInterval=5".into());
    opt("ServerAliveCountMax=3".into());
    opt("LogLevel=ERROR".into());
    for o in &s.options {
        opt(o.clone());
    }
    if s.port != 22 {
        a.extend(["-p".into(), s.port.to_string()]);
    }
    if let Some(k) = &s.key {
        a.extend(["-i".into(), k.clone()]);
    }
    if let Some(u) = &s.user {
        a.extend(["-l".into(), u.clone()]);
    }
    if let Some(j) = &s.jump {
        a.extend(["-J".into(), j.clone()]);
    }
    a
}

/// Runs futures concurrently on this task and returns their outputs in
/// order (they borrow the transport, so they cannot be spawned).
async fn join_all<F, T>(futs: impl Iterator<Item = F>) -> Vec<T>
where
    F: std::future::Future<Output = T>,
{
    let mut pending: Vec<Option<std::pin::Pin<Box<F>>>> = futs.map(|f| Some(Box::pin(f))).collect();
    let mut done: Vec<Option<T>> = pending.iter().map(|_| None).collect();
    std::future::poll_fn(|cx| {
        let mut all = true;
        for (slot, f) in done.iter_mut().zip(pending.iter_mut()) {
            if let Some(fut) = f {
                match fut.as_mut().poll(cx) {
                    std::task::Poll::Ready(v) => {
                        *slot = Some(v);
                        *f = None;
                    }
                    std::task::Poll::Pending => all = false,
                }
            }
        }
        if all {
            std::task::Poll::Ready(())
        } else {
            std::task::Poll::Pending
        }
    })
    .await;
    done.into_iter().flatten().collect()
}

/// What a reader task collected, waiting at most `wait` for it to finish.
async fn read_for(task: tokio::task::JoinHandle<String>, wait: Duration) -> String {
    let abort = task.abort_handle();
    match tokio::time::timeout(wait, task).await {
        Ok(r) => r.unwrap_or_default(),
        Err(_) => {
            abort.abort();
            String::new()
        }
    }
}

fn auth_refused(stderr: &str) -> bool {
    stderr.contains("Permission denied") || stderr.contains("Too many authentication failures")
}

/// The string the remote shell runs for an invocation: its own session and
/// process group (`setsid -w`), the group id announced on stderr, and a
/// dead-man `timeout` around the command with its environment.
pub fn remote_command(inv: &Invocation) -> String {
    let secs = inv.limit().as_secs().max(1);
    let env = inv.env.iter().map(|(k, v)| format!("{k}={}", quote(v)));
    let words = inv.argv.iter().map(|w| quote(w));
    let cmd: Vec<String> = env.chain(words).collect();
    let env_prefix = if inv.env.is_empty() { "" } else { "env " };
    let inner = format!(
        "echo \"{PGID_MARK}$$\" >&2; exec timeout -k {KILL_AFTER_S} {secs} {env_prefix}{}",
        cmd.join(" ")
    );
    format!("setsid -w sh -c {}", quote(&inner))
}

impl Drop for SshTransport {
    fn drop(&mut self) {
        // Close the master connections, then their socket directory.
        let hosts: Vec<String> = if !self.spec.control_master {
            Vec::new()
        } else {
            self.per_host
                .lock()
                .map(|m| m.keys().cloned().collect())
                .unwrap_or_default()
        };
        // All at once: one by one, 64 hosts cost most of a second.
        let closing: Vec<std::process::Child> = hosts
            .iter()
            .filter_map(|h| {
                let mut argv = self.ssh_argv(h);
                let addr = argv.pop().unwrap_or_default();
                argv.pop(); // "--"
                argv.extend(["-O".into(), "exit".into(), "--".into(), addr]);
                std::process::Command::new(&argv[0])
                    .args(&argv[1..])
                    .stdin(Stdio::null())
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .spawn()
                    .ok()
            })
            .collect();
        for mut c in closing {
            let _ = c.wait();
        }
        let _ = std::fs::remove_dir_all(&self.control_dir);
    }
}

impl Transport for SshTransport {
    fn describe(&self) -> String {
        format!(
            "ssh ({} at once, {} per host)",
            self.spec.parallelism, self.spec.per_host
        )
    }

    fn run_batch<'a>(&'a self, batch: &'a [StepCommands], cancel: Cancel) -> BatchFuture<'a> {
        Box::pin(async move {
            let t0 = Instant::now();
            join_all(batch.iter().map(|s| self.run_step(s, cancel.clone(), t0))).await
        })
    }

    fn now_s(&self) -> f64 {
        self.start.elapsed().as_secs_f64()
    }

    fn set_unreachable(&self, host: &str, why: ExecFailure) {
        self.down
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(host.to_string(), why);
    }
}
