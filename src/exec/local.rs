//! The `local` transport: commands on the controller itself, each in its own
//! process group so that a timeout or a cancelled run kills the whole tree
//! (a perftest server forked by a wrapper must not outlive the run).

use std::process::Stdio;
use std::time::{Duration, Instant};

use tokio::process::{Child, Command};
use tokio::task::JoinSet;

use super::transport::{BatchFuture, Cancel, Transport};
use super::types::{ExecFailure, Invocation, InvocationOutput, Role, StepCommands};

/// How long a server gets to start listening before its client starts.
const SERVER_HEAD_START: Duration = Duration::from_millis(500);
/// How long a server may linger after its clients ended before it is killed.
const SERVER_GRACE: Duration = Duration::from_secs(3);

pub struct LocalTransport {
    start: Instant,
}

impl Default for LocalTransport {
    fn default() -> Self {
        LocalTransport {
            start: Instant::now(),
        }
    }
}

/// Sends `sig` to the process group led by `pid`.
pub fn kill_group(pid: u32, sig: i32) {
    // SAFETY: kill(2) with a negative pid signals a process group; no memory is touched.
    unsafe {
        libc::kill(-(pid as i32), sig);
    }
}

struct Running {
    child: Child,
    started: f64,
    stdout: tokio::task::JoinHandle<String>,
    stderr: tokio::task::JoinHandle<String>,
}

fn spawn(inv: &Invocation, now: f64) -> Result<Running, ExecFailure> {
    let Some((prog, args)) = inv.argv.split_first() else {
        return Err(ExecFailure::Transport("empty command line".into()));
    };
    let mut cmd = Command::new(prog);
    cmd.args(args)
        .envs(inv.env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    let mut child = cmd.spawn().map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => {
            ExecFailure::MissingBinary(format!("{prog}: command not found"))
        }
        _ => ExecFailure::Transport(format!("cannot start {prog}: {e}")),
    })?;
    let out = child.stdout.take().expect("stdout is piped");
    let err = child.stderr.take().expect("stderr is piped");
    let stdout = tokio::spawn(async move { super::stream::read_capped(out).await });
    let stderr = tokio::spawn(async move { super::stream::read_capped(err).await });
    Ok(Running {
        child,
        started: now,
        stdout,
        stderr,
    })
}

/// Waits for a process until it exits, its deadline passes or the run is
/// cancelled; then collects its output.
async fn finish(
    mut r: Running,
    deadline: Instant,
    mut cancel: Cancel,
    clock: Instant,
) -> InvocationOutput {
    let pid = r.child.id();
    let mut failure = None;
    let status = tokio::select! {
        s = r.child.wait() => s.ok(),
        _ = tokio::time::sleep_until(deadline.into()) => {
            failure = Some(ExecFailure::TimedOut("killed at its timeout".into()));
            None
        }
        _ = cancel.wait_for(|c| *c) => {
            failure = Some(ExecFailure::Cancelled("the run was interrupted".into()));
            None
        }
    };
    if status.is_none() {
        if let Some(pid) = pid {
            kill_group(pid, libc::SIGTERM);
            if tokio::time::timeout(Duration::from_secs(2), r.child.wait())
                .await
                .is_err()
            {
                kill_group(pid, libc::SIGKILL);
                let _ = r.child.wait().await;
            }
        }
    }
    let exit = status.and_then(|s| s.code());
    let stdout = r.stdout.await.unwrap_or_default();
    let stderr = r.stderr.await.unwrap_or_default();
    if exit == Some(127) && failure.is_none() {
        failure = Some(ExecFailure::MissingBinary(stderr.trim().to_string()));
    }
    InvocationOutput {
        stdout,
        stderr,
        exit,
        failure,
        started_s: r.started,
        ended_s: clock.elapsed().as_secs_f64(),
    }
}

fn not_started(f: ExecFailure, now: f64) -> InvocationOutput {
    InvocationOutput {
        stdout: String::new(),
        stderr: String::new(),
        exit: None,
        failure: Some(f),
        started_s: now,
        ended_s: now,
    }
}

/// Runs one step: servers, then (after a head start) everything else, each
/// timed command at its `at` from `t0`; servers are stopped once the rest
/// has ended.
pub async fn run_step(
    step: StepCommands,
    cancel: Cancel,
    clock: Instant,
    t0: Instant,
) -> Vec<InvocationOutput> {
    let n = step.invocations.len();
    let mut outputs: Vec<Option<InvocationOutput>> = vec![None; n];
    let mut servers = Vec::new();
    for (i, inv) in step
        .invocations
        .iter()
        .enumerate()
        .filter(|(_, i)| i.role == Role::Server)
    {
        match spawn(inv, clock.elapsed().as_secs_f64()) {
            Ok(r) => servers.push((i, r, Instant::now() + inv.limit())),
            Err(f) => outputs[i] = Some(not_started(f, clock.elapsed().as_secs_f64())),
        }
    }
    if !servers.is_empty() {
        tokio::time::sleep(SERVER_HEAD_START).await;
    }
    let mut others = JoinSet::new();
    for (i, inv) in step
        .invocations
        .iter()
        .enumerate()
        .filter(|(_, i)| i.role != Role::Server)
    {
        let inv = inv.clone();
        let mut c = cancel.clone();
        others.spawn(async move {
            if !inv.at.is_zero() {
                let due = tokio::time::sleep_until((t0 + inv.at).into());
                tokio::select! {
                    _ = due => {}
                    _ = c.wait_for(|c| *c) => {
                        let f = ExecFailure::Cancelled("the run was interrupted before it was due".into());
                        return (i, not_started(f, clock.elapsed().as_secs_f64()));
                    }
                }
            }
            let now = clock.elapsed().as_secs_f64();
            match spawn(&inv, now) {
                Ok(r) => {
                    let deadline = Instant::now() + inv.timeout;
                    (i, finish(r, deadline, c, clock).await)
                }
                Err(f) => (i, not_started(f, now)),
            }
        });
    }
    while let Some(res) = others.join_next().await {
        if let Ok((i, out)) = res {
            outputs[i] = Some(out);
        }
    }
    for (i, r, deadline) in servers {
        let d = deadline.min(Instant::now() + SERVER_GRACE);
        let mut out = finish(r, d, cancel.clone(), clock).await;
        // A server we stopped after its clients ended did not time out.
        if matches!(out.failure, Some(ExecFailure::TimedOut(_))) && Instant::now() < deadline {
            out.failure = None;
        }
        outputs[i] = Some(out);
    }
    outputs
        .into_iter()
        .map(|o| {
            o.unwrap_or_else(|| {
                not_started(
                    ExecFailure::Transport("lost".into()),
                    clock.elapsed().as_secs_f64(),
                )
            })
        })
        .collect()
}

impl Transport for LocalTransport {
    fn describe(&self) -> String {
        "local".into()
    }

    fn run_batch<'a>(&'a self, batch: &'a [StepCommands], cancel: Cancel) -> BatchFuture<'a> {
        let clock = self.start;
        Box::pin(async move {
            let t0 = Instant::now();
            let mut set = JoinSet::new();
            for (i, step) in batch.iter().enumerate() {
                let c = cancel.clone();
                let step = step.clone();
                set.spawn(async move { (i, run_step(step, c, clock, t0).await) });
            }
            let mut out: Vec<Vec<InvocationOutput>> = vec![Vec::new(); batch.len()];
            while let Some(Ok((i, o))) = set.join_next().await {
                out[i] = o;
            }
            out
        })
    }

    fn now_s(&self) -> f64 {
        self.start.elapsed().as_secs_f64()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::sync::watch;

    fn inv(argv: &str, role: Role, timeout_ms: u64) -> Invocation {
        Invocation {
            host: "localhost".into(),
            argv: argv.split(' ').map(String::from).collect(),
            env: vec![("ROCEGATE_T".into(), "x y".into())],
            role,
            timeout: Duration::from_millis(timeout_ms),
            at: Duration::ZERO,
        }
    }

    #[tokio::test]
    async fn a_timed_command_starts_at_its_offset_and_in_order() {
        let t = LocalTransport::default();
        let (_tx, rx) = watch::channel(false);
        let mut late = inv("true", Role::Probe, 5000);
        late.at = Duration::from_millis(400);
        let mut early = inv("true", Role::Probe, 5000);
        early.at = Duration::from_millis(100);
        let before = t.now_s();
        let out = t
            .run_batch(
                &[StepCommands {
                    invocations: vec![late, early],
                }],
                rx,
            )
            .await;
        let (late, early) = (&out[0][0], &out[0][1]);
        assert_eq!(late.exit, Some(0));
        assert!(late.started_s - before >= 0.4, "{late:?}");
        assert!(early.started_s - before >= 0.1, "{early:?}");
        assert!(early.started_s < late.started_s);
    }

    #[tokio::test]
    async fn output_exit_missing_binary_and_timeout() {
        let t = LocalTransport::default();
        let (_tx, rx) = watch::channel(false);
        let mut echo = inv("sh", Role::Probe, 5000);
        echo.argv.extend(["-c".into(), "echo $ROCEGATE_T".into()]);
        let mut sleeper = inv("sh", Role::Probe, 300);
        sleeper.argv.extend(["-c".into(), "sleep 30".into()]);
        let batch = vec![
            StepCommands {
                invocations: vec![echo],
            },
            StepCommands {
                invocations: vec![inv("rocegate-no-such-binary", Role::Probe, 5000)],
            },
            StepCommands {
                invocations: vec![sleeper],
            },
        ];
        let out = t.run_batch(&batch, rx).await;
        assert_eq!(out[0][0].stdout, "x y\n");
        assert_eq!(out[0][0].exit, Some(0));
        assert!(matches!(
            out[1][0].failure,
            Some(ExecFailure::MissingBinary(_))
        ));
        assert!(
            matches!(out[2][0].failure, Some(ExecFailure::TimedOut(_))),
            "{:?}",
            out[2][0]
        );
        assert!(out[2][0].ended_s - out[2][0].started_s < 10.0);
    }

    #[tokio::test]
    async fn cancel_stops_running_commands() {
        let t = LocalTransport::default();
        let (tx, rx) = watch::channel(false);
        let mut i = inv("sleep 30", Role::Probe, 60_000);
        i.env.clear();
        let batch = vec![StepCommands {
            invocations: vec![i],
        }];
        let fut = t.run_batch(&batch, rx);
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(200)).await;
            let _ = tx.send(true);
        });
        let out = fut.await;
        assert!(matches!(out[0][0].failure, Some(ExecFailure::Cancelled(_))));
    }
}
