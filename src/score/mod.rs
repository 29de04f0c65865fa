//! Scoring: measured samples and expectations into verdicts, verdicts into
//! the gate. `error` (the harness or the infrastructure could not measure) is
//! never reported as `fail` and never as `pass`.

pub mod bisect;
pub mod compare;
pub mod counters;
pub mod findings;
pub mod recovery;
pub mod rejudge;
pub mod spread;
pub mod stats;
pub mod suspects;
pub mod threshold;
pub mod values;

use serde::{Deserialize, Serialize};

use crate::config::suite::{Gate, VerdictName};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Pass,
    Skipped,
    Warn,
    Fail,
    Error,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Skipped => "skipped",
            Verdict::Warn => "warn",
            Verdict::Fail => "fail",
            Verdict::Error => "error",
        }
    }

    fn name(self) -> VerdictName {
        match self {
            Verdict::Pass => VerdictName::Pass,
            Verdict::Skipped => VerdictName::Skipped,
            Verdict::Warn => VerdictName::Warn,
            Verdict::Fail => VerdictName::Fail,
            Verdict::Error => VerdictName::Error,
        }
    }
}

/// Whether this verdict fails the gate under the suite's policy.
pub fn fails_gate(gate: &Gate, v: Verdict) -> bool {
    gate.fail_on.contains(&v.name())
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counts {
    pub pass: usize,
    pub warn: usize,
    pub fail: usize,
    pub error: usize,
    pub skipped: usize,
}

impl Counts {
    pub fn add(&mut self, v: Verdict) {
        match v {
            Verdict::Pass => self.pass += 1,
            Verdict::Warn => self.warn += 1,
            Verdict::Fail => self.fail += 1,
            Verdict::Error => self.error += 1,
            Verdict::Skipped => self.skipped += 1,
        }
    }
    pub fn total(&self) -> usize {
        self.pass + self.warn + self.fail + self.error + self.skipped
    }
}
