//! The interface the engine writes to. The runner hands every event to a
//! list of sinks as it happens; results.jsonl, the terminal's progress and
//! (through them) every later output implement it. It lives here, with the
//! event types, so that the engine depends on what reports accept and no
//! report depends on the engine.

use super::events::Record;

/// Receives every record as it happens, and round boundaries for progress.
pub trait Sink {
    fn record(&mut self, r: &Record);
    fn round_started(
        &mut self,
        _test: &str,
        _round: usize,
        _rounds: usize,
        _rep: u32,
        _steps: usize,
    ) {
    }
    /// Every record so far, for a sink that keeps them (the run's log):
    /// the second pass localises from them.
    fn recorded(&self) -> Option<&[Record]> {
        None
    }
}
