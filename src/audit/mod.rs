//! Checks before load: the preflight (can every host be reached, are its
//! tools, devices and clock ready) and, beside it, the configuration and
//! cabling audit.

pub mod preflight;
