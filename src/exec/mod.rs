//! Transports: how a command line reaches a machine and its output comes
//! back. A transport knows nothing about perftest or NCCL; it runs argv
//! vectors on named hosts and returns what they printed.
//!
//! Work is handed over as a *batch*: every step of a plan round, each step a
//! group of invocations that belong together (a perftest server and its
//! client, an mpirun launcher). Everything in a batch runs concurrently; this
//! is what lets the emulated fabric see all flows that share its links.

pub mod apicall;
pub mod compose;
pub mod discover;
pub mod emulated;
pub mod https;
pub mod local;
pub mod slurm;
pub mod ssh;
pub mod stream;
pub mod transport;
pub mod types;

pub use transport::{Cancel, Transport};
pub use types::*;
