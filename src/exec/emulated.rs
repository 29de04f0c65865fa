//! The `emulated` transport: hands each batch to the emulated fabric, which
//! answers the same command lines real tools get. Time is virtual; with a
//! pace (virtual seconds per wall second) the transport sleeps so a run can
//! be watched or interrupted in the middle.

use std::sync::Mutex;
use std::time::Duration;

use crate::config::model::Inventory;
use crate::emu::Emulator;

use super::transport::{BatchFuture, Cancel, Transport};
use super::types::{ExecFailure, InvocationOutput, StepCommands};

pub struct EmulatedTransport {
    emu: Mutex<Emulator>,
    seed: u64,
    /// Virtual seconds per wall second; 0 runs as fast as possible.
    pace: f64,
}

impl EmulatedTransport {
    pub fn new(inv: &Inventory, seed: u64, pace: f64) -> Self {
        EmulatedTransport {
            emu: Mutex::new(Emulator::new(inv, seed)),
            seed,
            pace,
        }
    }
}

/// Applies each invocation's timeout on the virtual clock, as a real
/// dead-man timer would: the command is cut off at its deadline.
fn enforce_timeouts(batch: &[StepCommands], outs: &mut [Vec<InvocationOutput>]) {
    for (step, outs) in batch.iter().zip(outs.iter_mut()) {
        for (inv, out) in step.invocations.iter().zip(outs.iter_mut()) {
            let limit = inv.timeout.as_secs_f64();
            if out.ended_s - out.started_s > limit {
                out.ended_s = out.started_s + limit;
                out.exit = None;
                out.failure = Some(ExecFailure::TimedOut(format!("killed after {limit:.0}s")));
            }
        }
    }
}

impl Transport for EmulatedTransport {
    fn describe(&self) -> String {
        format!("emulated (seed {})", self.seed)
    }

    fn run_batch<'a>(&'a self, batch: &'a [StepCommands], mut cancel: Cancel) -> BatchFuture<'a> {
        Box::pin(async move {
            let (mut outs, start) = {
                let mut emu = self.emu.lock().unwrap_or_else(|p| p.into_inner());
                let start = emu.now_s();
                (emu.run_batch(batch), start)
            };
            enforce_timeouts(batch, &mut outs);
            if self.pace > 0.0 {
                let end = outs
                    .iter()
                    .flatten()
                    .map(|o| o.ended_s)
                    .fold(start, f64::max);
                let wall = Duration::from_secs_f64(((end - start) / self.pace).min(86_400.0));
                let interrupted = tokio::select! {
                    _ = tokio::time::sleep(wall) => false,
                    _ = cancel.wait_for(|c| *c) => true,
                };
                if interrupted {
                    for o in outs.iter_mut().flatten() {
                        o.failure = Some(ExecFailure::Cancelled("the run was interrupted".into()));
                    }
                }
            }
            outs
        })
    }

    fn now_s(&self) -> f64 {
        self.emu.lock().unwrap_or_else(|p| p.into_inner()).now_s()
    }
}
