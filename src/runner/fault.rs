//! A fault test: one round of its target workload run again with the
//! fault's commands timed into the same batch, judged on whether the fault
//! was delivered and the workload behaved as the suite declares.
//!
//! Recovery time (`recovers_within`, `min_fraction`) needs a time series of
//! the workload; this minimal step does not judge it and says so.

use crate::config::check_suite::{Fault, Test};
use crate::config::suite::WorkloadOutcome;
use crate::exec::Cancel;
use crate::report::events::*;
use crate::score::Verdict;
use crate::workload::fault::{fault_step, starts, target};

use super::{component, sampler, Engine, Sink};

impl Engine<'_> {
    pub(super) async fn run_fault(
        &self,
        test: &Test,
        f: &Fault,
        cancel: &Cancel,
        sinks: &mut [&mut dyn Sink],
        write_raw: &mut dyn FnMut(&str, String) -> Option<String>,
    ) -> VerdictRecord {
        let what = target(self.inv, f);
        let work = &self.suite.tests[f.during];
        let mut v = VerdictRecord {
            test: test.name.clone(),
            kind: test.kind.label().into(),
            component: what.clone(),
            verdict: Verdict::Error,
            metric: None,
            value: None,
            unit: None,
            threshold: Default::default(),
            samples: Vec::new(),
            message: String::new(),
            evidence: Vec::new(),
            duration_s: 0.0,
            series: Vec::new(),
        };
        let Some(round) = self
            .plan
            .tests
            .iter()
            .find(|tp| tp.test == f.during)
            .and_then(|tp| {
                // The first round that exercises what the fault cuts off.
                let cut = crate::plan::cut_off(self.inv, f);
                tp.rounds
                    .iter()
                    .find(|r| r.iter().any(|s| s.nics(self.inv).any(|n| cut.contains(&n))))
                    .or(tp.rounds.first())
            })
        else {
            v.message = format!(
                "its workload \"{}\" has no steps to run during the fault",
                work.name
            );
            return v;
        };
        let step = match fault_step(self.inv, f) {
            Ok(s) => s,
            Err(e) => {
                v.message = format!("cannot inject the fault: {e}");
                return v;
            }
        };
        let names: Vec<String> = round.iter().map(|s| component(self.inv, s)).collect();
        for s in sinks.iter_mut() {
            s.round_started(&test.name, 0, 1, 0, round.len());
        }
        let samp = sampler::plan(self.inv, work, round);
        let mut extra = vec![step.clone()];
        extra.extend(samp.iter().map(|s| s.step.clone()));
        let r = self
            .execute_round(
                work,
                &test.name,
                round,
                &names,
                (0, 0),
                &extra,
                cancel,
                write_raw,
            )
            .await;
        let fault_outs = r.extra.first().cloned().unwrap_or_default();
        // The fault's own commands are a sample too, with their raw output.
        let rel = crate::report::raw::rel_path(&test.name, 0, 0, round.len());
        let raw: Vec<String> = write_raw(&rel, crate::report::raw::render(&step, &fault_outs))
            .into_iter()
            .collect();
        let refused: Vec<String> = step
            .invocations
            .iter()
            .zip(&fault_outs)
            .filter(|(_, o)| o.failure.is_some() || o.exit != Some(0))
            .map(|(i, o)| {
                let why = o.stderr.trim();
                format!(
                    "{}: {}: {}",
                    i.host,
                    i.command_line(),
                    if why.is_empty() { "failed" } else { why }
                )
            })
            .collect();
        let started = fault_outs
            .iter()
            .map(|o| o.started_s)
            .fold(f64::MAX, f64::min);
        let ended = fault_outs.iter().map(|o| o.ended_s).fold(0.0, f64::max);
        let mut failed: Vec<String> = Vec::new();
        let mut completed = 0usize;
        let mut evidence = raw.clone();
        let mut t_end = ended;
        let mut t_start = started;
        let mut records = Vec::new();
        for (sample, _, _) in r.samples {
            match &sample.failure {
                Some(fr) => failed.push(format!("{}: {}", sample.component, fr.message)),
                None => completed += 1,
            }
            evidence.extend(sample.raw.clone());
            t_start = t_start.min(sample.started_s);
            t_end = t_end.max(sample.ended_s);
            records.push(Record::Sample(sample));
        }
        let fault_sample = Sample {
            test: test.name.clone(),
            component: what.clone(),
            round: 0,
            rep: 0,
            step: round.len(),
            started_s: started.min(ended),
            ended_s: ended,
            value: None,
            failure: (!refused.is_empty()).then(|| FailureRecord {
                kind: "fault_command".into(),
                class: "infrastructure".into(),
                message: refused.join("; "),
            }),
            raw,
            commands: step
                .invocations
                .iter()
                .map(|i| format!("{} (at {:?}): {}", i.host, i.at, i.command_line()))
                .collect(),
            hosts: step.invocations.iter().map(|i| i.host.clone()).collect(),
            details: serde_json::Value::Null,
        };
        records.push(Record::Sample(fault_sample));
        if let (Some(plan), Some(outs)) = (&samp, r.extra.get(1)) {
            records.extend(
                plan.read(&test.name, 0, 0, outs)
                    .into_iter()
                    .map(Record::Counters),
            );
        }
        for rec in super::in_time_order(records) {
            for s in sinks.iter_mut() {
                s.record(&rec);
            }
        }
        v.evidence = evidence;
        v.duration_s = (t_end - t_start).max(0.0);
        v.value = Some(failed.len() as f64);
        v.unit = Some("failed steps".into());
        let times = starts(f).len();
        let schedule = format!(
            "{what}: down {:?} at {:?}{}, during \"{}\"",
            f.duration,
            f.at,
            if times > 1 {
                format!(", {times} times")
            } else {
                String::new()
            },
            work.name
        );
        let expect = test.expect.workload.unwrap_or(WorkloadOutcome::Completes);
        let (verdict, mut message) = if !refused.is_empty() {
            (
                Verdict::Error,
                format!(
                    "{schedule}: the fault could not be delivered: {}",
                    refused.join("; ")
                ),
            )
        } else if !failed.is_empty() && expect == WorkloadOutcome::Completes {
            (
                Verdict::Fail,
                format!(
                    "{schedule}: the workload must complete but {} of {} steps failed: {}",
                    failed.len(),
                    failed.len() + completed,
                    failed.join("; ")
                ),
            )
        } else {
            (
                Verdict::Pass,
                format!(
                    "{schedule}: {completed} steps completed, {} failed ({}){}",
                    failed.len(),
                    match expect {
                        WorkloadOutcome::Completes => "the workload must complete",
                        WorkloadOutcome::MayFail => "the workload may fail",
                    },
                    if failed.is_empty() {
                        String::new()
                    } else {
                        format!(": {}", failed.join("; "))
                    }
                ),
            )
        };
        if test.expect.recovers_within.is_some() || test.expect.min_fraction.is_some() {
            message.push_str(
                "; recovery (recovers_within, min_fraction) is not judged by this build: it needs the workload's time series",
            );
        }
        if r.cancelled {
            message.push_str(" (run interrupted: judged on the samples that finished)");
        }
        v.verdict = verdict;
        v.message = message;
        v
    }
}
