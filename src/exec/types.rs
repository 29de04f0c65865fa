//! The data exchanged with transports.

use serde::{Deserialize, Serialize};
use std::time::Duration;

/// What an invocation is for, so a transport can order them: servers start
/// first and are stopped once their clients end.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// Listens until its client has run (perftest server, `iperf3 -s`).
    Server,
    /// Connects to a server of the same step.
    Client,
    /// Starts a multi-node job itself (mpirun, srun), run on the controller.
    Launcher,
    /// A short command (counters, versions, configuration).
    Probe,
}

/// One command on one host.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Invocation {
    /// Inventory name of the node or switch; `localhost` for the controller.
    pub host: String,
    pub argv: Vec<String>,
    /// Environment for the command (the launcher's `-x` carries NCCL_* to ranks).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub env: Vec<(String, String)>,
    pub role: Role,
    pub timeout: Duration,
    /// When to start, measured from the start of the batch: a fault's
    /// `ip link set … down` at `at: 5s`, a counter read every second. Zero
    /// starts with the step.
    #[serde(default, skip_serializing_if = "Duration::is_zero")]
    pub at: Duration,
}

/// How much longer than its own timeout a server may live: it starts
/// first and is stopped as soon as its clients end, so its limit must never
/// be what ends a step (a client killed by its own timeout says more than
/// one whose server vanished).
pub const SERVER_SLACK: Duration = Duration::from_secs(10);

impl Invocation {
    /// The limit a transport enforces: the timeout, plus [`SERVER_SLACK`]
    /// for a server.
    pub fn limit(&self) -> Duration {
        match self.role {
            Role::Server => self.timeout + SERVER_SLACK,
            _ => self.timeout,
        }
    }

    /// The command line as a shell would show it, every word quoted as needed.
    pub fn command_line(&self) -> String {
        let words = self.argv.iter().map(|w| quote(w));
        let env = self.env.iter().map(|(k, v)| format!("{k}={}", quote(v)));
        env.chain(words).collect::<Vec<_>>().join(" ")
    }
}

/// Quotes a word for a POSIX shell: words made only of safe characters stay
/// bare (what an operator would type); anything else is single-quoted, with
/// embedded single quotes closed, escaped and reopened.
pub fn quote(w: &str) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || "_@%+=:,./-".contains(c);
    if !w.is_empty() && w.chars().all(safe) {
        return w.to_string();
    }
    format!("'{}'", w.replace('\0', "").replace('\'', "'\\''"))
}

#[cfg(test)]
mod tests {
    #[test]
    fn quotes_only_what_needs_it() {
        assert_eq!(super::quote("--cpunodebind=0"), "--cpunodebind=0");
        assert_eq!(
            super::quote("NCCL_IB_HCA==mlx5_0:1,mlx5_1:1"),
            "NCCL_IB_HCA==mlx5_0:1,mlx5_1:1"
        );
        assert_eq!(super::quote("a b"), "'a b'");
        assert_eq!(super::quote("it's"), "'it'\\''s'");
        assert_eq!(super::quote(""), "''");
        assert_eq!(super::quote("$(rm -rf /)"), "'$(rm -rf /)'");
    }

    #[test]
    fn exits_and_failures_read_as_text() {
        assert_eq!(super::exit_text(Some(127)), "exited with status 127");
        assert!(super::exit_text(None).starts_with("ended without an exit status"));
        let f = super::ExecFailure::TimedOut("killed after 30s".into());
        assert_eq!(f.to_string(), "timed out: killed after 30s");
    }
}

/// The invocations of one step, started together.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepCommands {
    pub invocations: Vec<Invocation>,
}

impl Role {
    /// Its name for a person (raw files, messages).
    pub fn name(self) -> &'static str {
        match self {
            Role::Server => "server",
            Role::Client => "client",
            Role::Launcher => "launcher",
            Role::Probe => "probe",
        }
    }
}

/// How a command ended, for a person: `exited with status 127`. Without
/// a status the process was killed by a signal (the number is not kept)
/// or never started.
pub fn exit_text(exit: Option<i32>) -> String {
    match exit {
        Some(code) => format!("exited with status {code}"),
        None => "ended without an exit status (killed by a signal, or never started)".to_string(),
    }
}

/// What an exit status means for a command run under the `timeout -k`
/// dead-man (the ssh and Slurm transports): 124 is that timeout, 127 a
/// binary the host does not have; any other status is the command's own.
pub fn exit_failure(
    host: &str,
    argv0: &str,
    limit_s: u64,
    exit: Option<i32>,
    stderr: &str,
) -> Option<ExecFailure> {
    match exit {
        Some(124) => Some(ExecFailure::TimedOut(format!(
            "{host}: killed by its dead-man timeout after {limit_s}s"
        ))),
        Some(127) => Some(ExecFailure::MissingBinary(format!(
            "{host}: {argv0}: command not found ({})",
            stderr.trim()
        ))),
        _ => None,
    }
}

/// Why a command could not produce a normal result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind", content = "message")]
pub enum ExecFailure {
    /// The host could not be reached (ssh exit 255 before the command ran).
    Unreachable(String),
    /// The key or password was refused.
    AuthRefused(String),
    /// The binary is not installed on the host (exit 127).
    MissingBinary(String),
    /// Killed at its timeout.
    TimedOut(String),
    /// The run was interrupted (Ctrl-C, SIGTERM) while it ran.
    Cancelled(String),
    /// The transport itself failed (spawn error, I/O error).
    Transport(String),
}

/// What went wrong, for a person: `timed out: killed after 30s`.
impl std::fmt::Display for ExecFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ExecFailure::Unreachable(m) => write!(f, "unreachable: {m}"),
            ExecFailure::AuthRefused(m) => write!(f, "authentication refused: {m}"),
            ExecFailure::MissingBinary(m) => write!(f, "missing binary: {m}"),
            ExecFailure::TimedOut(m) => write!(f, "timed out: {m}"),
            ExecFailure::Cancelled(m) => write!(f, "cancelled: {m}"),
            ExecFailure::Transport(m) => write!(f, "transport: {m}"),
        }
    }
}

/// What came back from one invocation.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct InvocationOutput {
    pub stdout: String,
    pub stderr: String,
    /// Exit status; `None` when killed by a signal or never started.
    pub exit: Option<i32>,
    pub failure: Option<ExecFailure>,
    /// Seconds since the run started (virtual on the emulated fabric).
    pub started_s: f64,
    pub ended_s: f64,
}
