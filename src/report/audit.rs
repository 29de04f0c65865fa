//! The audit as text for a terminal: every component that is not as
//! expected with each of its findings, then one count line. Built from
//! findings and the verdicts `score::findings` made of them, nothing else.

use crate::config::suite::Gate;
use crate::report::events::{Finding, Outcome, VerdictRecord};
use crate::score::Verdict;

pub fn audit_text(gate: &Gate, findings: &[Finding], verdicts: &[VerdictRecord]) -> String {
    let mut s = String::new();
    let mut counts = [0usize; 5];
    for v in verdicts {
        let k = match v.verdict {
            Verdict::Pass => 0,
            Verdict::Warn => 1,
            Verdict::Fail => 2,
            Verdict::Error => 3,
            Verdict::Skipped => 4,
        };
        counts[k] += 1;
        if v.verdict == Verdict::Pass {
            continue;
        }
        s += &format!("{:<5} {}\n", v.verdict.as_str().to_uppercase(), v.component);
        for f in findings
            .iter()
            .filter(|f| f.component == v.component && f.outcome != Outcome::Ok)
        {
            s += &format!("      {}\n", crate::score::findings::describe(gate, f));
        }
    }
    let na = findings
        .iter()
        .filter(|f| f.outcome == Outcome::NotAvailable)
        .count();
    s += &format!(
        "audit: {} components: {} pass, {} warn, {} fail, {} error; {} finding(s), {na} not available\n",
        verdicts.len(),
        counts[0],
        counts[1],
        counts[2],
        counts[3],
        findings.len()
    );
    s
}
