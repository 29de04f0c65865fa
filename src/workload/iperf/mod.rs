//! iperf3: command lines and the output parsers (the TCP baseline).
pub mod command;
pub mod parse;
