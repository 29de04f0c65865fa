//! The transport interface.

use std::future::Future;
use std::pin::Pin;

use tokio::sync::watch;

use super::types::{ExecFailure, InvocationOutput, StepCommands};

pub type BatchFuture<'a> = Pin<Box<dyn Future<Output = Vec<Vec<InvocationOutput>>> + Send + 'a>>;

/// Set to true when the run must stop (Ctrl-C, SIGTERM).
pub type Cancel = watch::Receiver<bool>;

pub trait Transport: Send + Sync {
    /// One line for logs and summary.json, e.g. `emulated (seed 1)`.
    fn describe(&self) -> String;

    /// Runs every step of the batch concurrently and returns one output per
    /// invocation, in order. Never fails as a whole: what could not run is
    /// an `ExecFailure` on that invocation. On cancel, running commands are
    /// stopped and marked `Cancelled`.
    fn run_batch<'a>(&'a self, batch: &'a [StepCommands], cancel: Cancel) -> BatchFuture<'a>;

    /// Seconds since the transport started, on its clock (virtual for the
    /// emulated fabric).
    fn now_s(&self) -> f64;

    /// The preflight found `host` unreachable (or its key refused): later
    /// commands to it fail at once with this, instead of each waiting for
    /// a connect timeout. Transports that cannot lose a host ignore it.
    fn set_unreachable(&self, _host: &str, _why: ExecFailure) {}
}
