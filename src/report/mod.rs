//! Outputs: the event records and everything built from them (results.jsonl,
//! raw output files, JUnit, HTML, summary.json, terminal progress).

pub mod events;
