//! nccl-tests: launcher command lines and the output parser.
pub mod command;
pub mod parse;
