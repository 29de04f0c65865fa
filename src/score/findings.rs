//! Findings into verdicts. An audit check or a counter rule has compared
//! what it read with what was expected and says so as a [`Finding`]; this
//! is where the suite's gate policy decides what that means: a deviation
//! fails, a warning warns, `not available` counts as `gate.not_available`
//! says (or fails when the suite lists the check in `gate.require`), and a
//! check listed in `gate.observe_only` is recorded but never gates.
//!
//! One verdict per (test, component): its worst finding decides, and its
//! message lists every finding that was not `ok`, so the engineer reads
//! everything wrong with one NIC, port or cable in one place.

use std::collections::BTreeMap;

use super::threshold::Resolved;
use super::Verdict;
use crate::config::suite::{Gate, VerdictName};
use crate::report::events::{Finding, Outcome, VerdictRecord};

/// Whether `check` is named by `list`: exactly, or by a dotted prefix
/// (`optics` names `optics.rx_power`).
pub fn listed(list: &[String], check: &str) -> bool {
    list.iter().any(|l| {
        check == l
            || check
                .strip_prefix(l.as_str())
                .is_some_and(|rest| rest.starts_with('.'))
    })
}

fn of_name(n: VerdictName) -> Verdict {
    match n {
        VerdictName::Pass => Verdict::Pass,
        VerdictName::Warn => Verdict::Warn,
        VerdictName::Fail => Verdict::Fail,
        VerdictName::Error => Verdict::Error,
        VerdictName::Skipped => Verdict::Skipped,
    }
}

/// The verdict one finding alone earns under `gate`.
pub fn verdict_of(gate: &Gate, f: &Finding) -> Verdict {
    let v = match f.outcome {
        Outcome::Ok => Verdict::Pass,
        Outcome::Warning => Verdict::Warn,
        Outcome::Deviation => Verdict::Fail,
        Outcome::Error => Verdict::Error,
        Outcome::NotAvailable if listed(&gate.require, &f.check) => Verdict::Fail,
        Outcome::NotAvailable => of_name(gate.not_available),
    };
    if listed(&gate.observe_only, &f.check) {
        Verdict::Pass
    } else {
        v
    }
}

/// One line for a finding that is not `ok`.
pub fn describe(gate: &Gate, f: &Finding) -> String {
    let mut s = format!("{} {}: {}", f.check, f.outcome.as_str(), f.message);
    if f.outcome == Outcome::NotAvailable && !f.sources.is_empty() {
        s += &format!(" (tried: {})", f.sources.join("; "));
    }
    if f.needs_root && f.outcome == Outcome::NotAvailable {
        s += " (needs root)";
    }
    if listed(&gate.observe_only, &f.check) && f.outcome != Outcome::Ok {
        s += " [observe only: not gating]";
    }
    s
}

/// Verdicts for every (test, component) the findings name, in the order
/// the components were first seen. `kind` is the test kind the verdicts
/// carry (`audit`, or the traffic test's kind for counter rules).
pub fn verdicts(gate: &Gate, kind: &str, findings: &[Finding]) -> Vec<VerdictRecord> {
    let mut order: Vec<(String, String)> = Vec::new();
    let mut by: BTreeMap<(String, String), Vec<&Finding>> = BTreeMap::new();
    for f in findings {
        let key = (f.test.clone(), f.component.clone());
        let e = by.entry(key.clone()).or_default();
        if e.is_empty() {
            order.push(key);
        }
        e.push(f);
    }
    order
        .into_iter()
        .map(|key| {
            let fs = &by[&key];
            let verdict = fs
                .iter()
                .map(|f| verdict_of(gate, f))
                .max()
                .unwrap_or(Verdict::Pass);
            // Worst first, so a failed component's message opens with what
            // failed it, not with a not-available read beside it.
            let mut wrong: Vec<&&Finding> =
                fs.iter().filter(|f| f.outcome != Outcome::Ok).collect();
            wrong.sort_by_key(|f| std::cmp::Reverse(verdict_of(gate, f)));
            let wrong: Vec<String> = wrong.into_iter().map(|f| describe(gate, f)).collect();
            let message = if wrong.is_empty() {
                let mut checks: Vec<&str> = fs.iter().map(|f| f.check.as_str()).collect();
                checks.dedup();
                format!("{} check(s) as expected: {}", fs.len(), checks.join(", "))
            } else {
                wrong.join("; ")
            };
            let mut evidence: Vec<String> = fs.iter().flat_map(|f| f.evidence.clone()).collect();
            evidence.sort();
            evidence.dedup();
            VerdictRecord {
                test: key.0.clone(),
                kind: kind.to_string(),
                component: key.1.clone(),
                verdict,
                metric: None,
                value: None,
                unit: None,
                threshold: Resolved::default(),
                samples: Vec::new(),
                message,
                evidence,
                duration_s: 0.0,
                series: Vec::new(),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(check: &str, component: &str, outcome: Outcome) -> Finding {
        Finding {
            test: "audit".into(),
            check: check.into(),
            component: component.into(),
            host: "gpu001".into(),
            outcome,
            observed: None,
            expected: None,
            message: format!("{check} on {component}"),
            sources: vec!["dcb pfc show dev rdma0".into(), "mlnx_qos -i rdma0".into()],
            needs_root: false,
            round: None,
            evidence: Vec::new(),
        }
    }

    #[test]
    fn the_worst_finding_decides_and_every_wrong_one_is_listed() {
        let gate = Gate::default();
        let fs = [
            f("nic.firmware", "gpu001:mlx5_0", Outcome::Ok),
            f("nic.dcqcn", "gpu001:mlx5_0", Outcome::NotAvailable),
            f("nic.pfc", "gpu001:mlx5_0", Outcome::Deviation),
            f("nic.firmware", "gpu002:mlx5_0", Outcome::Ok),
        ];
        let v = verdicts(&gate, "audit", &fs);
        assert_eq!(v.len(), 2);
        assert_eq!(v[0].component, "gpu001:mlx5_0");
        assert_eq!(v[0].verdict, Verdict::Fail);
        // What failed it leads, though it was found after the warning.
        assert!(
            v[0].message.starts_with("nic.pfc deviation"),
            "{}",
            v[0].message
        );
        assert!(v[0].message.contains("; nic.dcqcn not available"));
        assert!(v[0]
            .message
            .contains("tried: dcb pfc show dev rdma0; mlnx_qos -i rdma0"));
        assert_eq!(v[1].verdict, Verdict::Pass);
        assert!(v[1].message.contains("1 check(s) as expected"));
    }

    #[test]
    fn not_available_follows_the_gate_and_require() {
        let na = f("optics.rx_power", "gpu001:mlx5_0", Outcome::NotAvailable);
        let mut gate = Gate::default();
        assert_eq!(verdict_of(&gate, &na), Verdict::Warn);
        gate.not_available = VerdictName::Pass;
        assert_eq!(verdict_of(&gate, &na), Verdict::Pass);
        gate.require = vec!["optics".into()];
        assert_eq!(verdict_of(&gate, &na), Verdict::Fail);
        gate.require = vec!["opt".into()];
        assert_eq!(verdict_of(&gate, &na), Verdict::Pass, "a prefix is dotted");
    }

    #[test]
    fn observe_only_never_gates_but_says_what_it_saw() {
        let gate = Gate {
            observe_only: vec!["counters.ecmp_balance".into()],
            ..Default::default()
        };
        let d = f("counters.ecmp_balance", "r0-leaf1", Outcome::Deviation);
        assert_eq!(verdict_of(&gate, &d), Verdict::Pass);
        let v = verdicts(&gate, "perftest", &[d]);
        assert!(v[0].message.contains("observe only"));
    }
}
