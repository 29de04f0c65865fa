//! Outputs: the event records, the sink interface the engine writes them
//! to, and everything built from them (results.jsonl, raw output files,
//! JUnit, HTML, summary.json, terminal progress and the end-of-run account).

pub mod actions;
pub mod audit;
pub mod events;

pub use audit::audit_text;
pub mod html;
pub mod jsonl;
pub mod junit;
pub mod metrics;
pub mod progress;
pub mod raw;
pub mod sanitize;
pub mod sink;
pub mod summary;
pub mod terminal;
