//! The interface the engine writes to. The runner hands every event to a
//! list of sinks as it happens, raw outputs included; the run directory
//! (results.jsonl and `raw/`) and the terminal's progress implement it,
//! and every later output is built from what they kept. It lives here,
//! with the event types, so that the engine depends on what reports
//! accept, knows nothing of the run directory's layout, and no report
//! depends on the engine.

use super::events::{RawOutput, Record};

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
    /// A step's raw output, as it ran. Returns where the sink kept it,
    /// relative to the run directory, for the records that cite it as
    /// evidence; `None` when it keeps no raw output (or could not write
    /// this one).
    fn raw(&mut self, _out: &RawOutput) -> Option<String> {
        None
    }
}

/// Hands a raw output to every sink; the path of the first that kept it.
pub fn keep_raw(sinks: &mut [&mut dyn Sink], out: &RawOutput) -> Option<String> {
    let mut kept = None;
    for s in sinks.iter_mut() {
        let path = s.raw(out);
        kept = kept.or(path);
    }
    kept
}
