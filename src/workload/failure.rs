//! Failure classification shared by the perftest, nccl-tests and iperf3 parsers.
//!
//! A parser that recognises a failure in a tool's output names it with a
//! [`FailureKind`] and keeps the tool's own words in the message. The kind decides
//! the verdict class: a fabric failure makes the test FAIL (the network did
//! something wrong), an infrastructure failure makes it ERROR (the harness could
//! not measure). This module does not decide verdicts; `score` does, from the class.

use serde::{Deserialize, Serialize};

/// What went wrong, as recognised from a tool's output.
///
/// The verdict class of each kind ([`FailureKind::verdict_class`]):
///
/// | kind | class | why |
/// |---|---|---|
/// | `no_device` | infrastructure | no RDMA device (driver down, wrong `-d`) |
/// | `missing_binary` | infrastructure | `command not found`, exit 127 |
/// | `launcher_failure` | infrastructure | mpirun/srun/ssh could not start the job |
/// | `connection_refused` | infrastructure | the out-of-band TCP connect failed before any data (perftest's exchange, iperf3's control connection): nothing listened |
/// | `server_busy` | infrastructure | the iperf3 server's port was taken: `the server is busy running a test`, `unable to start listener … Address already in use` (a stale server or another test) |
/// | `usage_error` | infrastructure | the tool rejected its command line (iperf3's `parameter error`) |
/// | `resource_creation` | infrastructure | QP/CQ/MR/PD creation or QP state change refused (config, limits); iperf3's `unable to create a new stream` |
/// | `cuda_failure` | infrastructure | the GPU side failed, not the network |
/// | `timeout` | infrastructure by default; see [`Failure::class`] | killed by the harness |
/// | `unrecognised` | infrastructure | the output says nothing we can judge |
/// | `completion_error` | fabric | a work completion with an error status (retry exceeded, …) |
/// | `rdma_cm` | fabric | rdma_cm failed after the out-of-band exchange (address/route resolution, CM events) |
/// | `no_route` | fabric | a connect over the data network failed with `No route to host`, `Network is unreachable` or a timeout: the data path does not work (a host firewall that rejects with ICMP also says `No route to host`) |
/// | `nccl_failure` | fabric | NCCL failed at run time (NET/IB warnings, `Test NCCL failure`) |
/// | `socket_fallback` | fabric | NCCL used NET/Socket instead of NET/IB: RDMA is broken |
/// | `wrong_results` | fabric | data arrived corrupted (`#wrong` > 0) |
/// | `out_of_bounds` | fabric | nccl-tests' `# Out of bounds values : N FAILED` |
///
/// A timeout is infrastructure when the workload never produced a result (it
/// could not start) and fabric when results had started to arrive (a hang after
/// data moved); the parser knows which and records it in [`Failure::class`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FailureKind {
    NoDevice,
    ConnectionRefused,
    ServerBusy,
    UsageError,
    NoRoute,
    ResourceCreation,
    CompletionError,
    RdmaCm,
    Timeout,
    NcclFailure,
    SocketFallback,
    CudaFailure,
    WrongResults,
    OutOfBounds,
    LauncherFailure,
    MissingBinary,
    Unrecognised,
}

/// Whether a failure means the fabric failed (FAIL) or the harness could not
/// measure (ERROR).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FailureClass {
    /// The test FAILS: the network misbehaved.
    Fabric,
    /// The test is an ERROR: the infrastructure prevented a measurement.
    Infrastructure,
}

impl FailureKind {
    /// The class of this kind (table on [`FailureKind`]). For `timeout` this is
    /// the class of a timeout before any data moved; see [`Failure::timeout`].
    pub fn verdict_class(self) -> FailureClass {
        use FailureKind::*;
        match self {
            CompletionError | RdmaCm | NoRoute | NcclFailure | SocketFallback | WrongResults
            | OutOfBounds => FailureClass::Fabric,
            NoDevice | ConnectionRefused | ServerBusy | UsageError | ResourceCreation | Timeout
            | CudaFailure | LauncherFailure | MissingBinary | Unrecognised => {
                FailureClass::Infrastructure
            }
        }
    }

    /// The snake_case name used in JSON.
    pub fn as_str(self) -> &'static str {
        use FailureKind::*;
        match self {
            NoDevice => "no_device",
            ConnectionRefused => "connection_refused",
            ServerBusy => "server_busy",
            UsageError => "usage_error",
            NoRoute => "no_route",
            ResourceCreation => "resource_creation",
            CompletionError => "completion_error",
            RdmaCm => "rdma_cm",
            Timeout => "timeout",
            NcclFailure => "nccl_failure",
            SocketFallback => "socket_fallback",
            CudaFailure => "cuda_failure",
            WrongResults => "wrong_results",
            OutOfBounds => "out_of_bounds",
            LauncherFailure => "launcher_failure",
            MissingBinary => "missing_binary",
            Unrecognised => "unrecognised",
        }
    }
}

/// A recognised failure: its kind, the tool's own words, and its verdict class.
///
/// JSON: `{"kind": "completion_error", "message": "...", "class": "fabric"}`.
/// `class` is an addition to `{kind, message}`; it equals
/// `kind.verdict_class()` except for a timeout after data moved.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Failure {
    pub kind: FailureKind,
    pub message: String,
    pub class: FailureClass,
}

impl Failure {
    /// A failure whose class is its kind's class.
    pub fn new(kind: FailureKind, message: impl Into<String>) -> Self {
        Failure {
            kind,
            message: message.into(),
            class: kind.verdict_class(),
        }
    }

    /// The harness killed the tool at its timeout. `data_moved`: the output had
    /// result rows, so the run hung after traffic started (fabric); otherwise the
    /// workload never started (infrastructure).
    pub fn timeout(data_moved: bool, message: impl Into<String>) -> Self {
        Failure {
            kind: FailureKind::Timeout,
            message: message.into(),
            class: if data_moved {
                FailureClass::Fabric
            } else {
                FailureClass::Infrastructure
            },
        }
    }

    /// The verdict class of this failure.
    pub fn verdict_class(&self) -> FailureClass {
        self.class
    }
}

/// Why a step has no value, as its sample records it and every report
/// reads it: a [`Failure`] a parser recognised (its host named in the
/// message), or one the harness met running the step. `kind` is a
/// [`FailureKind`] name or one of the harness's own: `unreachable`,
/// `auth_refused`, `cancelled`, `transport`, `timed_out`, `invalid_step`,
/// `fault_command`, `fault_open`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepFailure {
    pub kind: String,
    /// `fabric` (the fabric misbehaved: fail) or `infrastructure` (could not measure: error).
    pub class: String,
    pub message: String,
}

/// Recognises failures that any tool's output may contain, whatever the tool:
/// a missing binary and a launcher (mpirun, srun, ssh) that could not start the job.
pub fn classify_common_line(line: &str) -> Option<FailureKind> {
    let l = line.trim();
    let lower = l.to_ascii_lowercase();
    if lower.ends_with("command not found")
        || (lower.contains(": not found") && lower.contains("sh"))
        || (lower.contains("no such file or directory") && lower.contains("exec"))
    {
        return Some(FailureKind::MissingBinary);
    }
    const LAUNCHER: [&str; 10] = [
        "mpirun was unable to",
        "orte was unable to",
        "prte was unable to",
        "there are not enough slots available",
        "srun: error:",
        "slurmstepd: error:",
        "ssh: connect to host",
        "ssh: could not resolve hostname",
        "an orte daemon has unexpectedly failed",
        "mpirun has detected an attempt to run as root",
    ];
    if LAUNCHER.iter().any(|p| lower.contains(p)) {
        return Some(FailureKind::LauncherFailure);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_follow_the_table() {
        assert_eq!(
            FailureKind::CompletionError.verdict_class(),
            FailureClass::Fabric
        );
        assert_eq!(
            FailureKind::MissingBinary.verdict_class(),
            FailureClass::Infrastructure
        );
        assert_eq!(FailureKind::NoRoute.verdict_class(), FailureClass::Fabric);
        for k in [FailureKind::ServerBusy, FailureKind::UsageError] {
            assert_eq!(k.verdict_class(), FailureClass::Infrastructure);
        }
        assert_eq!(Failure::timeout(true, "x").class, FailureClass::Fabric);
        assert_eq!(
            Failure::timeout(false, "x").class,
            FailureClass::Infrastructure
        );
    }

    #[test]
    fn json_shape() {
        let f = Failure::new(FailureKind::SocketFallback, "NET/Socket");
        let v = serde_json::to_value(&f).unwrap();
        assert_eq!(v["kind"], "socket_fallback");
        assert_eq!(v["message"], "NET/Socket");
        assert_eq!(v["class"], "fabric");
        assert_eq!(FailureKind::OutOfBounds.as_str(), "out_of_bounds");
        assert_eq!(FailureKind::NoRoute.as_str(), "no_route");
        assert_eq!(FailureKind::ServerBusy.as_str(), "server_busy");
        assert_eq!(FailureKind::UsageError.as_str(), "usage_error");
    }

    #[test]
    fn common_lines() {
        assert_eq!(
            classify_common_line("bash: ib_write_bw: command not found"),
            Some(FailureKind::MissingBinary)
        );
        assert_eq!(
            classify_common_line("srun: error: node1: task 0: Exited with exit code 1"),
            Some(FailureKind::LauncherFailure)
        );
        assert_eq!(classify_common_line(" 2  1000  7.51  7.21"), None);
    }
}
