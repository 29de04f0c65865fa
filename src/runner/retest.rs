//! The second pass (suite `localise: {retest: true}`): after the traffic
//! tests and before the first fault (on the fabric the traffic saw), each
//! NIC, cable or node suspect that traffic implicates (a configuration
//! finding is not cleared by traffic) is run again against partners that passed
//! everything, on the same rail and on another leaf where there is one, so
//! a suspect that failed only beside a bad partner is cleared and one that
//! fails again is confirmed. One NIC per step at a time (NIC exclusivity),
//! every retest of a round in parallel, at most one pair across the spines
//! per leaf and round (so no two retests collide on an uplink by ECMP),
//! at most [`MAX_ROUNDS`] rounds. The
//! verdicts are the first pair bandwidth test's, against the fair share the
//! capacity model computes for the retest round.

use std::collections::{BTreeMap, BTreeSet};

use crate::config::check_suite::TestKind;
use crate::config::model::NicId;
use crate::exec::Cancel;
use crate::plan::Step;
use crate::report::events::{Finding, Outcome, Record, VerdictRecord};
use crate::report::sink::Sink;
use crate::score::suspects::Localisation;
use crate::score::values::{line_rate, placement, Gathered};
use crate::score::Verdict;

use super::{component, Engine};

/// Rounds a retest may take (each as long as one step of its test).
pub const MAX_ROUNDS: usize = 8;

impl Engine<'_> {
    /// Retests the suspects of `loc`. `tainted`: NICs (`node:device`) that
    /// took part in any non-passing result, never used as partners.
    /// Returns the verdicts of the retest pairs and of each suspect.
    pub async fn retest(
        &self,
        loc: &Localisation,
        tainted: &BTreeSet<String>,
        cancel: &Cancel,
        sinks: &mut [&mut dyn Sink],
    ) -> Vec<VerdictRecord> {
        let Some(tp) = self.plan.tests.iter().find(|tp| {
            let t = &self.suite.tests[tp.test];
            matches!(&t.kind, TestKind::Perftest(p) if p.tool.is_bw())
                && tp
                    .rounds
                    .iter()
                    .flatten()
                    .any(|s| matches!(s, Step::Pair { .. }))
        }) else {
            return Vec::new();
        };
        let test = &self.suite.tests[tp.test];
        let as_test = format!("{}.retest", test.name);
        let by_name: BTreeMap<String, NicId> = (0..self.inv.nics.len())
            .map(|n| (self.inv.nic_name(n), n))
            .collect();
        // Each suspect's NICs.
        let mut targets: Vec<(String, Vec<NicId>)> = Vec::new();
        // NICs another suspect already names (a node's swapped cable): a
        // node's retest leaves them out.
        let named: BTreeSet<String> = loc
            .suspects
            .iter()
            .filter(|s| matches!(s.kind.as_str(), "nic" | "cable"))
            .filter_map(|s| {
                s.component
                    .split("<->")
                    .next()
                    .map(|n| n.trim().to_string())
            })
            .collect();
        for s in loc.suspects.iter().filter(|s| s.from_traffic) {
            let nics: Vec<NicId> = match s.kind.as_str() {
                "nic" => by_name.get(&s.component).copied().into_iter().collect(),
                "cable" => s
                    .component
                    .split("<->")
                    .filter_map(|p| by_name.get(p.trim()).copied())
                    .collect(),
                "node" => self
                    .inv
                    .node_by_name
                    .get(&s.component)
                    .map(|&n| self.inv.nodes[n].nics.clone())
                    .unwrap_or_default()
                    .into_iter()
                    .filter(|&n| !named.contains(&self.inv.nic_name(n)))
                    .collect(),
                _ => Vec::new(),
            };
            if !nics.is_empty() {
                targets.push((s.component.clone(), nics));
            }
        }
        if targets.is_empty() {
            return Vec::new();
        }
        let healthy: Vec<NicId> = (0..self.inv.nics.len())
            .filter(|&n| !tainted.contains(&self.inv.nic_name(n)))
            .collect();
        let leaf = |n: NicId| self.inv.nic_leaf(n).map(|l| l.0);
        // Rounds of pairs: a NIC in at most one step per round.
        let mut rounds: Vec<Vec<Step>> = Vec::new();
        let mut owner: Vec<Vec<String>> = Vec::new();
        let mut no_partner: Vec<(String, String)> = Vec::new();
        for (suspect, nics) in &targets {
            for &t in nics {
                let rail = self.inv.nics[t].rail;
                let mut placed = false;
                for ri in 0..MAX_ROUNDS {
                    if rounds.len() <= ri {
                        rounds.push(Vec::new());
                        owner.push(Vec::new());
                    }
                    let busy: BTreeSet<NicId> = rounds[ri]
                        .iter()
                        .flat_map(|s| match s {
                            Step::Pair { a, b } => vec![*a, *b],
                            _ => Vec::new(),
                        })
                        .collect();
                    if busy.contains(&t) {
                        continue;
                    }
                    // One pair across the spines per leaf and round: two
                    // would share the leaf's uplinks and could collide on
                    // one by ECMP, which is not what is being retested.
                    let crossing: BTreeSet<_> = rounds[ri]
                        .iter()
                        .filter_map(|s| match s {
                            Step::Pair { a, b } if leaf(*a) != leaf(*b) => {
                                Some([leaf(*a), leaf(*b)])
                            }
                            _ => None,
                        })
                        .flatten()
                        .collect();
                    let free = |p: &&NicId| {
                        **p != t && self.inv.nics[**p].rail == rail && !busy.contains(p)
                    };
                    let across = !crossing.contains(&leaf(t));
                    let partner = healthy
                        .iter()
                        .filter(free)
                        .find(|&&p| across && leaf(p) != leaf(t) && !crossing.contains(&leaf(p)))
                        .or_else(|| healthy.iter().filter(free).find(|&&p| leaf(p) == leaf(t)));
                    if let Some(&p) = partner {
                        rounds[ri].push(Step::Pair { a: t, b: p });
                        owner[ri].push(suspect.clone());
                        placed = true;
                        break;
                    }
                }
                if !placed {
                    no_partner.push((suspect.clone(), self.inv.nic_name(t)));
                }
            }
        }
        rounds.retain(|r| !r.is_empty());
        owner.retain(|o| !o.is_empty());
        let capacity = crate::plan::capacity::compute(test, self.inv, &rounds);
        let mut per_suspect: BTreeMap<String, Vec<VerdictRecord>> = BTreeMap::new();
        let mut out = Vec::new();
        for (ri, round) in rounds.iter().enumerate() {
            if *cancel.borrow() {
                break;
            }
            let names: Vec<String> = round.iter().map(|s| component(self.inv, s)).collect();
            for s in sinks.iter_mut() {
                s.round_started(&as_test, ri, rounds.len(), 0, round.len());
            }
            let r = self
                .execute_round(
                    test,
                    &as_test,
                    round,
                    &names,
                    (ri, 0),
                    None,
                    &[],
                    cancel,
                    sinks,
                )
                .await;
            for (sample, _, _) in r.samples {
                let si = sample.step;
                let step = &round[si];
                let mut g = Gathered::default();
                g.add(
                    &sample,
                    line_rate(self.inv, test, step),
                    placement(self.inv, step),
                    capacity.shares.get(ri).and_then(|s| s.get(si)).copied(),
                );
                for s in sinks.iter_mut() {
                    s.record(&Record::Sample(sample.clone()));
                }
                let mut v = crate::score::values::verdict(test, &sample.component, g);
                v.test = as_test.clone();
                v.message = format!("retest of {}: {}", owner[ri][si], v.message);
                per_suspect
                    .entry(owner[ri][si].clone())
                    .or_default()
                    .push(v.clone());
                out.push(v);
            }
        }
        // Each suspect: confirmed, cleared, or not retested.
        let mut findings = Vec::new();
        for (suspect, _) in &targets {
            let vs = per_suspect.get(suspect).map(Vec::as_slice).unwrap_or(&[]);
            let missing: Vec<&str> = no_partner
                .iter()
                .filter(|(s, _)| s == suspect)
                .map(|(_, n)| n.as_str())
                .collect();
            let bad: Vec<&VerdictRecord> = vs
                .iter()
                .filter(|v| matches!(v.verdict, Verdict::Fail | Verdict::Warn))
                .collect();
            let errors = vs.iter().filter(|v| v.verdict == Verdict::Error).count();
            let (outcome, message) = if !bad.is_empty() {
                (
                    Outcome::Deviation,
                    format!(
                        "confirmed: {} of {} retest pair(s) with healthy partners fail again ({})",
                        bad.len(),
                        vs.len(),
                        bad.iter()
                            .take(3)
                            .map(|v| format!("{}: {}", v.component, v.message))
                            .collect::<Vec<_>>()
                            .join("; ")
                    ),
                )
            } else if vs.is_empty() || errors > 0 || !missing.is_empty() {
                (
                    Outcome::NotAvailable,
                    format!(
                        "not retested{}{}",
                        if missing.is_empty() {
                            String::new()
                        } else {
                            format!(
                                ": no healthy partner free on the rail of {}",
                                missing.join(", ")
                            )
                        },
                        if errors > 0 {
                            format!("; {errors} retest pair(s) could not measure")
                        } else {
                            String::new()
                        }
                    ),
                )
            } else {
                (
                    Outcome::Ok,
                    format!(
                        "cleared: all {} retest pair(s) with healthy partners pass ({})",
                        vs.len(),
                        vs.iter()
                            .take(3)
                            .map(|v| v.component.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                )
            };
            findings.push(Finding {
                test: as_test.clone(),
                check: crate::score::suspects::RETEST_CHECK.into(),
                component: suspect.clone(),
                host: suspect.split(':').next().unwrap_or_default().into(),
                outcome,
                observed: None,
                expected: None,
                message,
                sources: Vec::new(),
                needs_root: false,
                round: None,
                evidence: vs.iter().flat_map(|v| v.evidence.clone()).collect(),
            });
        }
        for f in &findings {
            for s in sinks.iter_mut() {
                s.record(&Record::Finding(f.clone()));
            }
        }
        out.extend(crate::score::findings::verdicts(
            &self.suite.gate,
            crate::score::suspects::LOCALISE_KIND,
            &findings,
        ));
        out
    }
}
