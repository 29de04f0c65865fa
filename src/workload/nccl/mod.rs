//! nccl-tests.
pub mod parse;
