//! Workloads: for each tool (perftest, nccl-tests, iperf3), a command-line
//! builder and an output parser.
//!
//! A parser reads text a tool printed and knows nothing about how it ran.

pub mod failure;
pub mod iperf;
pub mod measure;
pub mod nccl;
pub mod parse_cmd;
pub mod perftest;
pub mod ports;
pub mod text;

use crate::config::model::NicId;
use crate::exec::{Invocation, Role, StepCommands};

/// An incast step from a tool's pair builder: one server/client pair per
/// sender, every server on the receiver, servers first so that a transport
/// that starts in order has them listening.
pub fn incast(
    senders: &[NicId],
    mut pair: impl FnMut(NicId) -> Result<Vec<Invocation>, String>,
) -> Result<StepCommands, String> {
    let mut invocations = Vec::new();
    for &s in senders {
        invocations.extend(pair(s)?);
    }
    invocations.sort_by_key(|i| i.role != Role::Server);
    Ok(StepCommands { invocations })
}
