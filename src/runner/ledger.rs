//! The counter ledger in the engine: a snapshot of every NIC and switch
//! port a round's flows can cross before the round, and one after it (once
//! the slowest platform's counters have caught up), each a batch of its own
//! with one round trip per host. The records and the rule findings go out
//! as events; the rules themselves are `score::counters`.

use std::collections::HashSet;

use crate::config::check_suite::{Fault, FaultAction};
use crate::config::model::LinkId;
use crate::config::suite::LeafResetMode;
use crate::counters::ledger;
use std::time::Duration;

use crate::exec::{Cancel, InvocationOutput, StepCommands};
use crate::plan::Step;
use crate::report::events::{CounterRecord, Finding, LedgerRecord, RawOutput, RawPart};
use crate::report::sink::{keep_raw, Sink};

use super::sampler;
use super::Engine;

/// An opened window: the snapshot before, with the devices it covers.
pub(super) struct Opened {
    before: Vec<CounterRecord>,
    /// The steps whose NICs (and leaves) the window covers.
    steps: Vec<Step>,
}

/// The links a fault takes down on purpose: a flapped link; every link of
/// a leaf or spine whose ports go down or that reloads. A routing restart
/// takes no link down, and neither does a route change: its withdrawn link
/// stays up, so a link-down on it is a finding like anywhere else.
pub(super) fn flapped_links(inv: &crate::config::model::Inventory, f: &Fault) -> Vec<LinkId> {
    match &f.action {
        FaultAction::LinkFlap { link, .. } => vec![*link],
        FaultAction::LeafReset {
            mode: LeafResetMode::RoutingRestart,
            ..
        }
        | FaultAction::SpineLoss {
            mode: LeafResetMode::RoutingRestart,
            ..
        }
        | FaultAction::RouteChange { .. } => Vec::new(),
        FaultAction::LeafReset { switch, .. } | FaultAction::SpineLoss { switch, .. } => {
            inv.switches[*switch].links.clone()
        }
    }
}

impl Engine<'_> {
    /// One snapshot of every device `steps` can cross, taken `at` into a
    /// batch of its own: the parsed records and the raw outputs (kept only
    /// until the window is judged).
    async fn snapshot(
        &self,
        test: &str,
        (ri, rep): (usize, u32),
        steps: &[Step],
        at: std::time::Duration,
        cancel: &Cancel,
    ) -> (Vec<CounterRecord>, StepCommands, Vec<InvocationOutput>) {
        let plan = sampler::snapshot(self.inv, steps, at);
        let outs = self
            .transport
            .run_batch(std::slice::from_ref(&plan.step), cancel.clone())
            .await
            .into_iter()
            .next()
            .unwrap_or_default();
        (plan.read(test, ri, rep, &outs), plan.step, outs)
    }

    /// Opens a window over every device `steps` can cross, when the suite
    /// keeps a ledger. A test opens one before its first round and each
    /// round's closing snapshot opens the next window, so a test of N
    /// rounds takes N + 1 snapshots.
    pub(super) async fn ledger_open(
        &self,
        test: &str,
        steps: &[Step],
        cancel: &Cancel,
    ) -> Option<Opened> {
        if !self.suite.ledger.enabled || steps.is_empty() {
            return None;
        }
        let (before, _, _) = self
            .snapshot(test, (0, 0), steps, Duration::ZERO, cancel)
            .await;
        Some(Opened {
            before,
            steps: steps.to_vec(),
        })
    }

    /// Closes a window after round `ri` (its last repetition `rep`): the
    /// records, the findings of the counter rules (`flapped`: links a fault
    /// in the window took down on purpose), and the window the closing
    /// snapshot opens. The closing snapshot waits for the slowest
    /// platform's counter update interval. Raw snapshots are written for
    /// the hosts a rule names (their evidence); the records carry every
    /// counter that changed elsewhere.
    #[allow(clippy::too_many_arguments)]
    pub(super) async fn ledger_close(
        &self,
        opened: Opened,
        test: &str,
        (ri, rep): (usize, u32),
        flapped: &[LinkId],
        cancel: &Cancel,
        sinks: &mut [&mut dyn Sink],
    ) -> (Vec<LedgerRecord>, Vec<Finding>, Opened) {
        let settle = sampler::settle(self.inv, &opened.steps);
        let (after, step, outs) = self
            .snapshot(test, (ri, rep), &opened.steps, settle, cancel)
            .await;
        let mut records = ledger::window(test, ri, rep, &opened.before, &after);
        let ends: HashSet<String> = self.places.ends_of(self.inv, flapped);
        let mut findings = crate::score::counters::findings(
            self.inv,
            &self.places,
            &self.suite.ledger,
            &records,
            &ends,
        );
        let named: HashSet<&str> = findings.iter().map(|f| f.host.as_str()).collect();
        if !named.is_empty() {
            let keep: Vec<usize> = step
                .invocations
                .iter()
                .enumerate()
                .filter(|(_, i)| named.contains(i.host.as_str()))
                .map(|(k, _)| k)
                .collect();
            let sub = StepCommands {
                invocations: keep.iter().map(|&k| step.invocations[k].clone()).collect(),
            };
            let sub_outs: Vec<InvocationOutput> =
                keep.iter().filter_map(|&k| outs.get(k).cloned()).collect();
            let out = RawOutput {
                test,
                round: ri,
                rep,
                part: RawPart::Ledger,
                commands: &sub,
                outputs: &sub_outs,
            };
            if let Some(path) = keep_raw(sinks, &out) {
                for r in records
                    .iter_mut()
                    .filter(|r| named.contains(r.host.as_str()))
                {
                    r.raw = vec![path.clone()];
                }
                for f in findings.iter_mut() {
                    f.evidence = vec![path.clone()];
                }
            }
        }
        let next = Opened {
            before: after,
            steps: opened.steps,
        };
        (records, findings, next)
    }
}

/// What a test's ledger saw over all its windows, for its verdicts.
#[derive(Default)]
pub(super) struct Book {
    windows: usize,
    records: usize,
    /// Device windows not read: the reason, and the devices.
    unread: Vec<(String, Vec<String>)>,
    findings: Vec<Finding>,
}

impl Book {
    pub(super) fn add(&mut self, recs: &[LedgerRecord], fs: &[Finding]) {
        self.windows += 1;
        self.records += recs.len();
        // One line per distinct reason, the host's own name left out so
        // that the same missing source on many hosts reads once.
        for r in recs {
            let Some(e) = &r.error else { continue };
            let first = e.lines().next().unwrap_or_default();
            let reason = first.replace(&format!("{}: ", r.host), "");
            let reason: String = reason.chars().take(200).collect();
            let dev = format!("{}:{}", r.host, r.device);
            match self.unread.iter_mut().find(|(x, _)| *x == reason) {
                Some((_, devs)) => devs.push(dev),
                None => self.unread.push((reason, vec![dev])),
            }
        }
        self.findings.extend_from_slice(fs);
    }

    /// One verdict per component a rule found wrong, and one for the
    /// ledger as a whole (`counter ledger`): what it covered, and as `not
    /// available` the device windows it could not read.
    pub(super) fn verdicts(
        &self,
        gate: &crate::config::suite::Gate,
        test: &str,
    ) -> Vec<crate::report::events::VerdictRecord> {
        if self.windows == 0 {
            return Vec::new();
        }
        // The same check on the same component in several windows (a bad
        // cable in every round) is one finding: the first, with the count.
        let mut fs: Vec<Finding> = Vec::new();
        let mut count: std::collections::HashMap<(String, String), (usize, usize)> =
            std::collections::HashMap::new();
        for f in &self.findings {
            let key = (f.component.clone(), f.check.clone());
            match count.get_mut(&key) {
                Some((_, n)) => *n += 1,
                None => {
                    count.insert(key, (fs.len(), 1));
                    fs.push(f.clone());
                }
            }
        }
        for (i, n) in count.values() {
            if *n > 1 {
                fs[*i].message = format!("{} (and in {} more window(s))", fs[*i].message, n - 1);
            }
        }
        let mut summary = Finding {
            test: test.to_string(),
            check: "counters.ledger".into(),
            component: "counter ledger".into(),
            host: String::new(),
            outcome: crate::report::events::Outcome::Ok,
            observed: None,
            expected: None,
            message: format!(
                "{} window(s), {} device record(s), {} rule violation(s)",
                self.windows,
                self.records,
                self.findings.len()
            ),
            sources: vec![
                "ethtool -S".into(),
                "sysfs".into(),
                "the switch platforms' counter reads".into(),
            ],
            needs_root: false,
            round: None,
            evidence: Vec::new(),
        };
        if !self.unread.is_empty() {
            summary.outcome = crate::report::events::Outcome::NotAvailable;
            let n: usize = self.unread.iter().map(|(_, d)| d.len()).sum();
            let shown: Vec<String> = self
                .unread
                .iter()
                .take(5)
                .map(|(why, devs)| {
                    let mut d = devs.clone();
                    d.sort();
                    d.dedup();
                    let list = if d.len() > 4 {
                        format!("{} and {} more", d[..4].join(", "), d.len() - 4)
                    } else {
                        d.join(", ")
                    };
                    format!("{why} ({list})")
                })
                .collect();
            summary.message = format!(
                "{}; {n} device window(s) could not be read: {}{}",
                summary.message,
                shown.join("; "),
                if self.unread.len() > 5 { "; …" } else { "" }
            );
        }
        fs.push(summary);
        crate::score::findings::verdicts(gate, "counters", &fs)
    }
}

#[cfg(test)]
mod tests {
    use crate::config::check::parse_inventory;
    use crate::config::check_suite::{parse_suite, TestKind};
    use crate::config::generate::{generate, to_yaml, PodShape};

    /// The links the ledger expects a link-down on, for each fault of `faults`.
    fn flapped(faults: &[&str]) -> Vec<Vec<String>> {
        let shape = PodShape {
            nodes: 16,
            rails: 1,
            nodes_per_leaf: 8,
            spines: 2,
            ..PodShape::default()
        };
        let inv = parse_inventory(
            "gen.yaml",
            &to_yaml(&shape, &generate(&shape).unwrap()).unwrap(),
        )
        .unwrap();
        let mut text = String::from("suite: {name: t}\ntests:\n  - {name: bw, perftest: {tool: ib_write_bw, size: 1M, duration: 30s}, pattern: cross-leaf}\n");
        for (i, f) in faults.iter().enumerate() {
            text += &format!("  - {{name: f{i}, fault: {{{f}, during: bw, at: 5s, for: 3s}}}}\n");
        }
        let s = parse_suite("s.yaml", &text, &inv).unwrap_or_else(|e| panic!("{e}"));
        s.tests
            .iter()
            .filter_map(|t| match &t.kind {
                TestKind::Fault(f) => Some(
                    super::flapped_links(&inv, f)
                        .into_iter()
                        .map(|l| inv.link_name(l))
                        .collect(),
                ),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn a_lost_spines_links_flap_and_a_withdrawn_route_takes_none_down() {
        let f = flapped(&[
            "spine_loss: {switch: spine1, mode: ports_down}",
            "spine_loss: {switch: spine1, mode: reload}",
            "spine_loss: {switch: spine1, mode: routing_restart}",
            "route_change: {link: r0-leaf1:swp9}",
        ]);
        // Two leaves, each with its uplinks split over two spines.
        assert!(
            !f[0].is_empty() && f[0].iter().all(|l| l.contains("spine1:")),
            "{f:?}"
        );
        assert_eq!(f[1], f[0]);
        assert!(f[2].is_empty(), "routing stopped: no link goes down");
        assert!(f[3].is_empty(), "a withdrawn link stays up: {f:?}");
    }
}
