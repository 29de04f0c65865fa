//! Helpers shared by integration tests; each test crate uses some of them.
#![allow(dead_code)]

pub mod emulated;
pub mod sshd;
pub mod tls;
