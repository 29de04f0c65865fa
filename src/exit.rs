//! The documented exit codes, and the one error type main maps onto them.
//! When several apply, the highest wins.

use std::fmt;

/// The gate passed.
pub const PASS: i32 = 0;
/// The gate failed: fail verdicts, or error verdicts the gate counts.
pub const GATE_FAILED: i32 = 1;
/// Bad input or usage; nothing ran.
pub const BAD_INPUT: i32 = 2;
/// The run could not complete: interrupted, the harness failed, or a fault
/// could not be healed.
pub const INCOMPLETE: i32 = 3;

#[derive(Debug)]
pub enum AppError {
    /// Bad input: every problem, already formatted with its place.
    Input(String),
    /// The run could not complete.
    Incomplete(String),
}

impl AppError {
    pub fn code(&self) -> i32 {
        match self {
            AppError::Input(_) => BAD_INPUT,
            AppError::Incomplete(_) => INCOMPLETE,
        }
    }
}

impl fmt::Display for AppError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AppError::Input(m) | AppError::Incomplete(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for AppError {}

impl From<crate::config::diag::Diagnostics> for AppError {
    fn from(d: crate::config::diag::Diagnostics) -> Self {
        AppError::Input(d.to_string())
    }
}

impl From<crate::plan::PlanError> for AppError {
    fn from(e: crate::plan::PlanError) -> Self {
        AppError::Input(e.to_string())
    }
}
