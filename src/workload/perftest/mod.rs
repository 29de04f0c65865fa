//! perftest.
pub mod parse;
