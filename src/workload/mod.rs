//! Workloads: for each tool (perftest, nccl-tests, iperf3), a command-line
//! builder and an output parser.
//!
//! A parser reads text a tool printed and knows nothing about how it ran.

pub mod failure;
pub mod fault;
pub mod iperf;
pub mod measure;
pub mod nccl;
pub mod parse_cmd;
pub mod perftest;
pub mod ports;
pub mod text;
