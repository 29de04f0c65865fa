//! A fault test: one round of its target workload, in series mode, with the
//! fault sent while it runs; judged on whether the fault was delivered and
//! healed, whether the workload completed as declared, and how long its
//! traffic took to come back (from the time series, per component, the
//! slowest one reported).

use std::time::Instant;

use crate::config::check_suite::{Fault, Test};
use crate::config::suite::WorkloadOutcome;
use crate::config::units::format_duration;
use crate::exec::{Cancel, Invocation, InvocationOutput, StepCommands};
use crate::fault::{self, live};
use crate::report::events::*;
use crate::report::sink::{keep_raw, Sink};
use crate::score::Verdict;
use crate::workload::failure::StepFailure;

use super::{component, sampler, Engine};

/// The traffic is "back" at this fraction of its pre-fault level when the
/// suite sets `recovers_within` without `min_fraction`.
pub const DEFAULT_FRACTION: f64 = 0.9;

/// What the fault did, whichever way it was sent.
#[derive(Default)]
struct Delivered {
    /// Every command sent, with its output, for the raw file and the sample.
    commands: Vec<(Invocation, InvocationOutput)>,
    /// When the first change was sent, the last one, and when the last
    /// undo ended.
    down_s: Option<f64>,
    last_down_s: Option<f64>,
    up_s: Option<f64>,
    /// Commands that failed: the fault was not (fully) delivered.
    refused: Vec<String>,
    /// Faults the run could not heal (still open in the journal).
    open: Vec<String>,
    /// How the device came back, in words.
    settled: Vec<String>,
    /// What went wrong besides a command: not sent (not for a cancel), or
    /// the device not back to its prior state.
    trouble: Vec<String>,
    repetitions: usize,
}

fn failed(i: &Invocation, o: &InvocationOutput) -> Option<String> {
    // An API call is named by its commands, not its JSON body.
    let what = match crate::exec::apicall::calls(&i.argv) {
        Some(calls) => calls
            .iter()
            .map(|c| c.what.as_str())
            .collect::<Vec<_>>()
            .join("; "),
        None => i.command_line(),
    };
    (o.failure.is_some() || o.exit != Some(0))
        .then(|| format!("{}: {what}: {}", i.host, live::why(o)))
}

impl Delivered {
    fn emulated(
        step: &StepCommands,
        queries: &[crate::switch::Query],
        driver: &dyn crate::switch::Driver,
        outs: &[InvocationOutput],
        f: &Fault,
    ) -> Self {
        let starts = fault::starts(f);
        let repetitions = starts.len();
        let mut d = Delivered {
            repetitions,
            ..Default::default()
        };
        for ((i, q), o) in step.invocations.iter().zip(queries).zip(outs) {
            // An API call exits 0 with a refused command inside its answer:
            // the platform reads the answer.
            let a = crate::switch::single_answer(q, o);
            match (failed(i, o), driver.applied(q, &a)) {
                (Some(e), _) => d.refused.push(e),
                (None, Err(e)) => d.refused.push(format!("{}: {e}", i.host)),
                (None, Ok(())) => {}
            }
            d.commands.push((i.clone(), o.clone()));
        }
        d.down_s = outs.iter().map(|o| o.started_s).reduce(f64::min);
        // The batch sends each repetition exactly `pace` apart.
        let span = match (starts.first(), starts.last()) {
            (Some(a), Some(b)) => (*b - *a).as_secs_f64(),
            _ => 0.0,
        };
        d.last_down_s = d.down_s.map(|t| t + span);
        d.up_s = outs.iter().map(|o| o.ended_s).reduce(f64::max);
        d
    }

    fn live(reps: Vec<live::Rep>) -> Self {
        let mut d = Delivered::default();
        for r in reps {
            if let Some(why) = r.not_sent {
                if r.cancelled {
                    d.settled.push(format!("{}: {why}", r.id));
                } else {
                    d.trouble.push(format!("{}: {why}", r.id));
                }
            }
            if let Some((i, o)) = r.apply {
                d.refused.extend(failed(&i, &o));
                d.refused
                    .extend(r.apply_error.map(|e| format!("{}: {e}", i.host)));
                d.down_s = Some(d.down_s.map_or(o.started_s, |t: f64| t.min(o.started_s)));
                d.last_down_s = Some(
                    d.last_down_s
                        .map_or(o.started_s, |t: f64| t.max(o.started_s)),
                );
                d.commands.push((i, o));
                d.repetitions += 1;
            }
            if let Some((i, o)) = r.undo {
                d.up_s = Some(d.up_s.map_or(o.ended_s, |t: f64| t.max(o.ended_s)));
                d.commands.push((i, o));
            }
            if let Some(why) = r.left_open {
                d.open.push(format!("{}: {why}", r.id));
            }
            match r.settled {
                Some(Ok(s)) => d
                    .settled
                    .push(format!("back to its prior state {s:.1} s after the undo")),
                Some(Err(e)) => d.trouble.push(e),
                None => {}
            }
        }
        d
    }
}

impl Engine<'_> {
    pub(super) async fn run_fault(
        &self,
        test: &Test,
        f: &Fault,
        cancel: &Cancel,
        sinks: &mut [&mut dyn Sink],
        also: &mut Vec<VerdictRecord>,
    ) -> (VerdictRecord, bool) {
        let what = fault::name(self.inv, f);
        let work = &self.suite.tests[f.during];
        let mut v = super::skipped(test, &what);
        v.verdict = Verdict::Error;
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
            return (v, false);
        };
        let target = match fault::target(self.inv, f) {
            Ok(t) => t,
            Err(e) => {
                v.message = format!("cannot inject the fault: {e}");
                return (v, false);
            }
        };
        // Real devices: the prior state is read, and must be healthy,
        // before any traffic starts.
        let prior = match self.faults {
            Some(_) => match live::prepare(self.transport, &target).await {
                Ok(p) => Some(p),
                Err(e) => {
                    v.message = format!("{what}: refused before anything was touched: {e}");
                    return (v, false);
                }
            },
            None => None,
        };
        let names: Vec<String> = round.iter().map(|s| component(self.inv, s)).collect();
        for s in sinks.iter_mut() {
            s.round_started(&test.name, 0, 1, 0, round.len());
        }
        // The series must outlast the fault and the recovery it allows.
        let cover = (fault::starts(f).last().copied().unwrap_or_default() + f.duration)
            .as_secs_f64()
            + test.expect.recovers_within.map_or(10.0, |s| s.secs_f64())
            + 3.0;
        let samp = sampler::plan(self.inv, work, round);
        let opened = self.ledger_open(&test.name, round, cancel).await;
        let sampler_steps: Vec<StepCommands> = samp.iter().map(|s| s.step.clone()).collect();
        let (r, delivered) = match (self.faults, &prior) {
            (Some(ctl), Some(prior)) => {
                let t0 = Instant::now();
                let (r, reps) = tokio::join!(
                    self.execute_round(
                        work,
                        &test.name,
                        round,
                        &names,
                        (0, 0),
                        Some(cover),
                        &sampler_steps,
                        cancel,
                        sinks,
                    ),
                    live::run(
                        self.transport,
                        ctl,
                        &test.name,
                        &target,
                        prior,
                        f,
                        t0,
                        cancel.clone()
                    )
                );
                (r, Delivered::live(reps))
            }
            _ => {
                // An API platform's change names state it reads first (the
                // BGP AS): the emulated fabric answers that read as the
                // switch would, and refuses an unhealthy one the same way.
                let prior = if target.platform.reached_by_argv() {
                    Default::default()
                } else {
                    match live::prepare(self.transport, &target).await {
                        Ok(p) => p,
                        Err(e) => {
                            v.message = format!("{what}: refused before anything was touched: {e}");
                            return (v, false);
                        }
                    }
                };
                let (step, queries) = match fault::emulated_step(self.inv, f, &prior) {
                    Ok(s) => s,
                    Err(e) => {
                        v.message = format!("cannot inject the fault: {e}");
                        return (v, false);
                    }
                };
                let mut extra = vec![step.clone()];
                extra.extend(sampler_steps);
                let mut r = self
                    .execute_round(
                        work,
                        &test.name,
                        round,
                        &names,
                        (0, 0),
                        Some(cover),
                        &extra,
                        cancel,
                        sinks,
                    )
                    .await;
                let outs = if r.extra.is_empty() {
                    Vec::new()
                } else {
                    r.extra.remove(0)
                };
                (
                    r,
                    Delivered::emulated(&step, &queries, target.driver(), &outs, f),
                )
            }
        };
        // The fault's own commands are a sample too, with their raw output.
        let fault_step = StepCommands {
            invocations: delivered.commands.iter().map(|c| c.0.clone()).collect(),
        };
        let fault_outs: Vec<InvocationOutput> =
            delivered.commands.iter().map(|c| c.1.clone()).collect();
        let out = RawOutput {
            test: &test.name,
            round: 0,
            rep: 0,
            part: RawPart::Step(round.len()),
            commands: &fault_step,
            outputs: &fault_outs,
        };
        let raw: Vec<String> = keep_raw(sinks, &out).into_iter().collect();
        let mut failed_steps: Vec<String> = Vec::new();
        let mut hung = 0usize;
        let mut completed = Vec::new();
        let mut evidence = raw.clone();
        let mut t_start = delivered.down_s.unwrap_or(f64::MAX);
        let mut t_end = delivered.up_s.unwrap_or(0.0);
        let mut records = Vec::new();
        for (sample, _, _) in r.samples {
            match &sample.failure {
                Some(fr) => {
                    hung += usize::from(fr.kind == "timed_out");
                    failed_steps.push(format!("{}: {}", sample.component, fr.message));
                }
                None => completed.push((sample.component.clone(), sample.series.clone())),
            }
            evidence.extend(sample.raw.clone());
            t_start = t_start.min(sample.started_s);
            t_end = t_end.max(sample.ended_s);
            records.push(Record::Sample(sample));
        }
        let round_t0 = records
            .iter()
            .filter_map(|r| match r {
                Record::Sample(s) => Some(s.started_s),
                _ => None,
            })
            .fold(t_start, f64::min);
        let problems: Vec<String> = delivered
            .refused
            .iter()
            .chain(&delivered.open)
            .cloned()
            .collect();
        records.push(Record::Sample(Sample {
            test: test.name.clone(),
            component: what.clone(),
            round: 0,
            rep: 0,
            step: round.len(),
            started_s: delivered.down_s.unwrap_or(0.0),
            ended_s: delivered.up_s.unwrap_or(0.0),
            value: None,
            failure: (!problems.is_empty()).then(|| StepFailure {
                kind: if delivered.open.is_empty() {
                    "fault_command".into()
                } else {
                    "fault_open".into()
                },
                class: "infrastructure".into(),
                message: problems.join("; "),
            }),
            raw,
            // When each was sent, from the start of the workload's round.
            commands: delivered
                .commands
                .iter()
                .map(|(i, o)| {
                    format!(
                        "{} (at {:.1}s): {}",
                        i.host,
                        (o.started_s - round_t0).max(0.0),
                        i.command_line()
                    )
                })
                .collect(),
            hosts: vec![target.host.clone()],
            details: serde_json::json!({
                "what": target.what,
                "prior": prior.as_ref().map(|p| p.summary()),
                "settled": delivered.settled,
            }),
            series: Vec::new(),
        }));
        if let (Some(plan), Some(outs)) = (&samp, r.extra.first()) {
            records.extend(
                plan.read(&test.name, 0, 0, outs)
                    .into_iter()
                    .map(Record::Counters),
            );
        }
        if let Some(o) = opened {
            // The fault's window: link-downs belong on what it took down.
            let flapped = super::ledger::flapped_links(self.inv, f);
            let (recs, fs, _) = self
                .ledger_close(o, &test.name, (0, 0), &flapped, cancel, sinks)
                .await;
            let mut book = super::ledger::Book::default();
            book.add(&recs, &fs);
            records.extend(recs.into_iter().map(Record::Ledger));
            records.extend(fs.into_iter().map(Record::Finding));
            also.extend(book.verdicts(&self.suite.gate, &test.name));
        }
        for rec in super::in_time_order(records) {
            for s in sinks.iter_mut() {
                s.record(&rec);
            }
        }
        v.evidence = evidence;
        v.duration_s = (t_end - t_start).max(0.0);
        let times = delivered.repetitions;
        let schedule = format!(
            "{what}: down {} at {}{}, during \"{}\"",
            format_duration(f.duration),
            format_duration(f.at),
            if times > 1 {
                format!(", {times} times")
            } else {
                String::new()
            },
            work.name
        );
        let expect = test.expect.workload.unwrap_or(WorkloadOutcome::Completes);
        let total = failed_steps.len() + completed.len();
        let workload = format!(
            "{} of {total} steps completed{}{}",
            completed.len(),
            if hung > 0 {
                format!(", {hung} hung (killed at their timeout)")
            } else {
                String::new()
            },
            if failed_steps.is_empty() {
                String::new()
            } else {
                format!(" ({})", failed_steps.join("; "))
            }
        );
        let mut notes: Vec<String> = Vec::new();
        let mut verdict = if !delivered.open.is_empty() {
            notes.push(format!(
                "STILL OPEN (its undo failed; the run tries once more before it exits): {}",
                delivered.open.join("; ")
            ));
            Verdict::Error
        } else if !delivered.trouble.is_empty() {
            notes.push(delivered.trouble.join("; "));
            Verdict::Error
        } else if !delivered.refused.is_empty() {
            notes.push(format!(
                "the fault could not be delivered: {}",
                delivered.refused.join("; ")
            ));
            Verdict::Error
        } else if !failed_steps.is_empty() && expect == WorkloadOutcome::Completes {
            notes.push(format!("the workload must complete but {workload}"));
            Verdict::Fail
        } else {
            notes.push(format!(
                "{workload}; {}",
                match expect {
                    WorkloadOutcome::Completes => "the workload must complete",
                    WorkloadOutcome::MayFail => "the workload may fail",
                }
            ));
            Verdict::Pass
        };
        v.value = Some(failed_steps.len() as f64);
        v.unit = Some("failed steps".into());
        // Recovery, from each completed step's series: then the value is
        // the recovery time.
        let within = test.expect.recovers_within.map(|s| s.secs_f64());
        let fraction = test.expect.min_fraction;
        if verdict == Verdict::Pass && (within.is_some() || fraction.is_some()) {
            let frac = fraction.unwrap_or(DEFAULT_FRACTION);
            let (rv, msg, back, series) = crate::score::recovery::judge(
                &completed,
                delivered.down_s.zip(delivered.last_down_s),
                frac,
                within,
            );
            verdict = rv;
            v.value = back;
            notes.push(msg);
            v.series = series;
            v.metric = Some("recovery_s".into());
            v.unit = Some("s".into());
            v.threshold.max = within;
        }
        notes.extend(
            delivered
                .settled
                .iter()
                .map(|s| format!("{}: {s}", target.host)),
        );
        let mut message = format!("{schedule}: {}", notes.join("; "));
        if r.cancelled {
            message.push_str(" (run interrupted: judged on the samples that finished)");
        }
        v.verdict = verdict;
        v.message = message;
        (v, !delivered.open.is_empty())
    }
}
