//! Bisection of a failing collective (suite `localise: {bisect: true}`):
//! the engine runs the node sets `score::bisect` names, each judged like
//! the collective that failed (same thresholds, same fair share; a part
//! under the warning line counts as failing, since a healthy part clears
//! it), and
//! reports the nodes that fail with a healthy reference as findings.

use crate::config::check_suite::Test;
use crate::exec::Cancel;
use crate::plan::capacity::Share;
use crate::plan::patterns::Collective;
use crate::plan::Step;
use crate::report::events::{Finding, Outcome, Record, VerdictRecord};
use crate::report::sink::Sink;
use crate::score::bisect::{Bisection, Next};
use crate::score::values::Gathered;
use crate::score::Verdict;

use super::{component, Engine};

/// Most collective runs one bisection takes unless the suite says.
const DEFAULT_MAX_RUNS: usize = 24;

impl Engine<'_> {
    /// Bisects `c`, a collective of `test` that failed. Returns the
    /// verdicts (each run, the culprits' findings judged, or why nothing
    /// was named) and the findings.
    pub(super) async fn bisect(
        &self,
        test: &Test,
        c: &Collective,
        share: Option<Share>,
        cancel: &Cancel,
        sinks: &mut [&mut dyn Sink],
    ) -> (Vec<VerdictRecord>, Vec<Finding>) {
        let as_test = format!("{}.bisect", test.name);
        let max = self.suite.localise.max_runs.unwrap_or(DEFAULT_MAX_RUNS);
        let ids = &c.nodes;
        let whole = component(self.inv, &Step::Collective(Box::new(c.clone())));
        let mut b = Bisection::new((0..ids.len()).collect(), max);
        let mut verdicts = Vec::new();
        let mut stopped = None;
        let mut run = 0;
        while let Next::Run(idx) = b.next_run() {
            if *cancel.borrow() {
                stopped = Some("the run was interrupted".to_string());
                break;
            }
            let step = Step::Collective(Box::new(Collective {
                nodes: idx.iter().map(|&i| ids[i]).collect(),
                rails: c.rails.clone(),
            }));
            let name = component(self.inv, &step);
            for s in sinks.iter_mut() {
                s.round_started(&as_test, run, max, 0, 1);
            }
            let r = self
                .execute_round(
                    test,
                    &as_test,
                    std::slice::from_ref(&step),
                    std::slice::from_ref(&name),
                    (run, 0),
                    None,
                    &[],
                    cancel,
                    sinks,
                )
                .await;
            let mut g = Gathered::default();
            for (sample, line, place) in r.samples {
                g.add(&sample, line, place, share);
                for s in sinks.iter_mut() {
                    s.record(&Record::Sample(sample.clone()));
                }
            }
            let mut v = crate::score::values::verdict(test, &name, g);
            v.test = as_test.clone();
            let verdict = v.verdict;
            v.message = format!("bisection run {} of {whole}: {}", run + 1, v.message);
            verdicts.push(v);
            run += 1;
            if verdict == Verdict::Error {
                // A run that could not measure cannot say which half is bad.
                stopped = Some(format!("run {run} could not measure"));
                break;
            }
            // Under the warning line counts: a healthy part clears it.
            b.record(matches!(verdict, Verdict::Fail | Verdict::Warn));
        }
        let out = b.outcome();
        let node = |i: usize| self.inv.nodes[ids[i]].name.clone();
        let findings: Vec<Finding> = out
            .culprits
            .iter()
            .map(|&i| {
                let with: Vec<&(Vec<usize>, bool)> =
                    out.runs.iter().filter(|(n, _)| n.contains(&i)).collect();
                let failed = with.iter().filter(|(_, f)| *f).count();
                Finding {
                    test: as_test.clone(),
                    check: crate::score::suspects::BISECT_CHECK.into(),
                    component: node(i),
                    host: node(i),
                    outcome: Outcome::Deviation,
                    observed: Some(format!("failed {failed} of {} runs holding it", with.len())),
                    expected: None,
                    message: format!(
                        "{} fails {} ({}) with a healthy reference node: {failed} of the {} bisection runs holding it failed, {} runs in all",
                        node(i),
                        test.name,
                        whole,
                        with.len(),
                        out.runs.len()
                    ),
                    sources: Vec::new(),
                    needs_root: false,
                    round: None,
                    evidence: Vec::new(),
                }
            })
            .collect();
        verdicts.extend(crate::score::findings::verdicts(
            &self.suite.gate,
            crate::score::suspects::LOCALISE_KIND,
            &findings,
        ));
        let why = match (&stopped, out.not_reproduced, out.unresolved.is_empty()) {
            (Some(s), _, _) => Some(format!("bisection stopped: {s}")),
            (None, true, _) => Some(format!(
                "not localised in {} runs: every part of {whole} passed on its own, so the failure needs the whole collective (congestion or load only at full scale); bisection cannot find it",
                out.runs.len()
            )),
            (None, false, false) => Some(format!(
                "left unresolved after {} runs (budget {max}): {}",
                out.runs.len(),
                out.unresolved
                    .iter()
                    .map(|s| {
                        let names: Vec<String> = s.iter().map(|&i| node(i)).collect();
                        crate::config::hostlist::compress(&names)
                    })
                    .collect::<Vec<_>>()
                    .join("; ")
            )),
            (None, false, true) => None,
        };
        if let Some(message) = why {
            verdicts.push(VerdictRecord {
                test: as_test.clone(),
                kind: test.kind.label().into(),
                component: whole.clone(),
                verdict: Verdict::Warn,
                metric: None,
                value: None,
                unit: None,
                threshold: Default::default(),
                samples: Vec::new(),
                message,
                evidence: Vec::new(),
                duration_s: 0.0,
                series: Vec::new(),
            });
        }
        (verdicts, findings)
    }
}
