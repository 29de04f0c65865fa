//! The engine: plan rounds into batches, batches through a transport,
//! outputs through the parsers into samples, samples into verdicts. Every
//! result is an event handed to the sinks as it happens; the engine itself
//! writes no file and prints nothing.

use std::collections::HashMap;

use crate::config::check_suite::{Suite, Test, TestKind};
use crate::config::hostlist;
use crate::config::model::Inventory;
use crate::exec::{Cancel, StepCommands, Transport};
use crate::plan::{render::pattern_name, Plan, Step};
use crate::report::events::*;
use crate::report::sink::{keep_raw, Sink};
use crate::score::values::Gathered;
use crate::score::{Counts, Verdict};
use crate::workload::failure::StepFailure;
use crate::workload::measure::{self, Measurement};
use crate::workload::ports::Ports;
use crate::workload::{iperf, nccl, perftest};

mod bisect;
mod fault;
mod ledger;
mod retest;
mod sampler;

pub struct Engine<'a> {
    pub inv: &'a Inventory,
    pub suite: &'a Suite,
    pub plan: &'a Plan,
    pub transport: &'a dyn Transport,
    /// The fault journal, for faults on real devices; `None` on the
    /// emulated fabric, where faults are timed into the workload's batch.
    pub faults: Option<&'a crate::fault::live::Control>,
    /// Where every device the counter ledger reads sits in the inventory
    /// (`score::counters::Places::new(inv)`).
    pub places: crate::score::counters::Places,
}

pub struct Outcome {
    pub counts: Counts,
    pub gate_passed: bool,
    pub interrupted: bool,
}

/// Stable, unique names for what a step measures.
pub fn component(inv: &Inventory, step: &Step) -> String {
    match step {
        Step::Pair { a, b } => format!("{}<->{}", inv.nic_name(*a), inv.nic_name(*b)),
        Step::Incast(i) => {
            let senders: Vec<String> = i
                .senders
                .iter()
                .map(|&s| inv.nodes[inv.nics[s].node].name.clone())
                .collect();
            format!(
                "{}<-{}",
                inv.nic_name(i.receiver),
                hostlist::compress(&senders)
            )
        }
        Step::Collective(c) => {
            let names: Vec<String> = c.nodes.iter().map(|&n| inv.nodes[n].name.clone()).collect();
            let rails = match (c.rails.first(), c.rails.last()) {
                (Some(a), Some(b)) if a != b => format!(" rails {a}-{b}"),
                (Some(a), _) => format!(" rail {a}"),
                _ => String::new(),
            };
            format!("{}{rails}", hostlist::compress(&names))
        }
    }
}

/// The commands of one step. With `series = Some(secs)`, a step that can
/// be read as a time series is built that way and runs at least `secs`
/// (a fault test's recovery is read from it): perftest bandwidth tools as
/// `--run_infinitely` 1 s windows, nccl as `-N` cycles at the largest
/// size; iperf3 always prints `-i` intervals, and latency tools have no
/// series.
fn build(
    inv: &Inventory,
    test: &Test,
    step: &Step,
    ports: &mut Ports,
    series: Option<f64>,
) -> Result<StepCommands, String> {
    match (&test.kind, step) {
        (TestKind::Perftest(p), Step::Pair { a, b }) => {
            let s = series.and_then(|secs| perftest::command::series_for(test, p, secs));
            perftest::command::pair_step(test, p, inv, *a, *b, ports, s)
        }
        (TestKind::Perftest(p), Step::Incast(i)) => {
            let s = series.and_then(|secs| perftest::command::series_for(test, p, secs));
            perftest::command::incast_step(test, p, inv, i.receiver, &i.senders, ports, s)
        }
        (TestKind::Iperf(s), Step::Pair { a, b }) => {
            iperf::command::pair_step(test, s, inv, *a, *b, ports)
        }
        (TestKind::Iperf(s), Step::Incast(i)) => {
            iperf::command::incast_step(test, s, inv, i.receiver, &i.senders, ports)
        }
        (TestKind::Nccl(n), Step::Collective(c)) => {
            let s = series
                .map(|secs| nccl::command::series_for(test, n, inv, &c.nodes, &c.rails, secs));
            nccl::command::collective_step(test, n, inv, &c.nodes, &c.rails, s)
        }
        (kind, _) => Err(format!("{} tests cannot run this step yet", kind.label())),
    }
}

/// `link_gbps`: the step's [`link_speed`], which bounds what a parser
/// accepts as a possible bandwidth.
fn measure(
    test: &Test,
    cmds: &StepCommands,
    outs: &[crate::exec::InvocationOutput],
    link_gbps: Option<f64>,
) -> Measurement {
    let metric = test
        .metric
        .unwrap_or(crate::config::suite::Metric::BwAvgGbps);
    match &test.kind {
        TestKind::Perftest(_) => measure::perftest_step(cmds, outs, metric, link_gbps),
        TestKind::Nccl(n) => {
            measure::nccl_step(cmds, outs, metric, swept_to(cmds).unwrap_or(n.max_bytes.0))
        }
        TestKind::Iperf(_) => measure::iperf_step(cmds, outs, link_gbps),
        _ => Measurement::default(),
    }
}

/// The largest size the step's nccl-tests command sweeps to (`-e`): the
/// suite's `max_bytes`, or a recovery series' lowered size.
fn swept_to(cmds: &StepCommands) -> Option<u64> {
    cmds.invocations.iter().find_map(|inv| {
        let at = inv.argv.iter().position(|a| a == "-e")?;
        crate::config::units::parse_size(inv.argv.get(at + 1)?).ok()
    })
}

impl Engine<'_> {
    pub fn run_started(&self, seed: u64, started_at: String) -> RunStarted {
        let tests = self
            .plan
            .tests
            .iter()
            .map(|tp| {
                let t = &self.suite.tests[tp.test];
                PlannedTest {
                    name: t.name.clone(),
                    kind: t.kind.label().into(),
                    pattern: pattern_name(t.pattern.as_ref(), &t.kind),
                    rounds: tp.rounds.len(),
                    steps: tp.steps(),
                    repeat: t.repeat,
                    metric: t.metric.map(|m| m.name().into()),
                    unit: t.metric.map(|m| m.unit().into()),
                    estimate_s: tp.estimate.as_secs_f64(),
                }
            })
            .collect();
        RunStarted {
            rocegate_version: env!("CARGO_PKG_VERSION").into(),
            suite: self.suite.name.clone(),
            fabric: self.inv.fabric.name.clone(),
            environment: format!("{:?}", self.inv.fabric.environment).to_lowercase(),
            transport: self.transport.describe(),
            seed,
            run_id: String::new(),
            started_at,
            inventory: InputFile {
                path: self.inv.source.path.clone(),
                sha256: self.inv.source.sha256.clone(),
            },
            suite_file: InputFile {
                path: self.suite.source.path.clone(),
                sha256: self.suite.source.sha256.clone(),
            },
            gate_fail_on: self
                .suite
                .gate
                .fail_on
                .iter()
                .map(|v| {
                    serde_json::to_value(v)
                        .ok()
                        .and_then(|v| v.as_str().map(String::from))
                        .unwrap_or_default()
                })
                .collect(),
            gate_observe_only: self.suite.gate.observe_only.clone(),
            tests,
            estimate_s: self.plan.estimate.as_secs_f64(),
            coverage: serde_json::to_value(&self.plan.coverage).unwrap_or_default(),
            disruptive: serde_json::to_value(&self.plan.disruptions).unwrap_or_default(),
            partial: self.plan.partial.clone(),
            topology: Box::new(Topology::of(self.inv)),
            inputs: None,
            rejudged_with: None,
        }
    }

    /// Runs one round (one repetition) of `test`, with `extra` steps (a
    /// fault, a counter sampler) in the same batch. Returns the round's
    /// samples with their line rates, and the outputs of the extra steps.
    #[allow(clippy::too_many_arguments)]
    async fn execute_round(
        &self,
        test: &Test,
        as_test: &str,
        round: &[Step],
        names: &[String],
        (ri, rep): (usize, u32),
        series: Option<f64>,
        extra: &[StepCommands],
        cancel: &Cancel,
        sinks: &mut [&mut dyn Sink],
    ) -> RoundResult {
        let mut ports = Ports::starting_at(match test.kind {
            TestKind::Iperf(_) => iperf::command::BASE_PORT,
            _ => perftest::command::BASE_PORT,
        });
        let built: Vec<Result<StepCommands, String>> = round
            .iter()
            .map(|s| build(self.inv, test, s, &mut ports, series))
            .collect();
        let mut batch: Vec<StepCommands> = built
            .iter()
            .filter_map(|b| b.as_ref().ok().cloned())
            .collect();
        batch.extend(extra.iter().cloned());
        let mut outputs = self
            .transport
            .run_batch(&batch, cancel.clone())
            .await
            .into_iter();
        let cancelled = *cancel.borrow();
        let mut samples = Vec::new();
        for (si, (step, b)) in round.iter().zip(built).enumerate() {
            let comp = names[si].clone();
            let now = self.transport.now_s();
            let (m, raw, commands, hosts, started, ended) = match b {
                Err(e) => (
                    Measurement {
                        failure: Some(StepFailure {
                            kind: "invalid_step".into(),
                            class: "infrastructure".into(),
                            message: e,
                        }),
                        ..Default::default()
                    },
                    Vec::new(),
                    Vec::new(),
                    Vec::new(),
                    now,
                    now,
                ),
                Ok(cmds) => {
                    let outs = outputs.next().unwrap_or_default();
                    let started = outs
                        .iter()
                        .map(|o| o.started_s)
                        .fold(f64::MAX, f64::min)
                        .min(now);
                    let ended = outs.iter().map(|o| o.ended_s).fold(0.0, f64::max);
                    let m = measure(
                        test,
                        &cmds,
                        &outs,
                        crate::score::values::link_speed(self.inv, step),
                    );
                    let out = RawOutput {
                        test: as_test,
                        round: ri,
                        rep,
                        part: RawPart::Step(si),
                        commands: &cmds,
                        outputs: &outs,
                    };
                    let raw = keep_raw(sinks, &out).into_iter().collect();
                    let commands = cmds
                        .invocations
                        .iter()
                        .map(|i| format!("{}: {}", i.host, i.command_line()))
                        .collect();
                    let hosts = cmds.invocations.iter().map(|i| i.host.clone()).collect();
                    (m, raw, commands, hosts, started, ended)
                }
            };
            if cancelled && m.failure.as_ref().is_some_and(|f| f.kind == "cancelled") {
                continue;
            }
            let sample = Sample {
                test: as_test.to_string(),
                component: comp,
                round: ri,
                rep,
                step: si,
                started_s: started,
                ended_s: ended,
                value: m.value,
                failure: m.failure.clone(),
                raw,
                commands,
                hosts,
                details: m.details.clone(),
                series: m.series.clone(),
            };
            samples.push((
                sample,
                crate::score::values::line_rate(self.inv, test, step),
                crate::score::values::placement(self.inv, step),
            ));
        }
        // Records in order of (virtual) end time, then step.
        samples.sort_by(|a, b| {
            a.0.ended_s
                .total_cmp(&b.0.ended_s)
                .then(a.0.step.cmp(&b.0.step))
        });
        RoundResult {
            samples,
            extra: outputs.collect(),
            cancelled,
        }
    }

    /// Runs the plan; sinks receive every record and raw output.
    pub async fn run(&self, cancel: Cancel, sinks: &mut [&mut dyn Sink]) -> Outcome {
        let mut counts = Counts::default();
        let mut gate_passed = true;
        let mut interrupted = false;
        let mut faults_blocked: Option<String> = None;
        let mut retested = false;
        let emit = |r: Record, sinks: &mut [&mut dyn Sink]| {
            for s in sinks.iter_mut() {
                s.record(&r);
            }
        };
        // Tests the plan left out: skipped with the reason, never counted
        // against the gate (narrowing alone never fails a run).
        for sk in &self.plan.skipped {
            let test = &self.suite.tests[sk.test];
            let component = match &test.kind {
                TestKind::Fault(f) => crate::fault::name(self.inv, f),
                _ => test.name.clone(),
            };
            let mut v = skipped(test, &component);
            v.message = format!("skipped: {}", sk.reason);
            counts.add(Verdict::Skipped);
            emit(Record::Verdict(v), sinks);
        }
        let mut judged = |v: VerdictRecord, sinks: &mut [&mut dyn Sink]| {
            counts.add(v.verdict);
            if crate::score::fails_gate(&self.suite.gate, v.verdict) {
                gate_passed = false;
            }
            emit(Record::Verdict(v), sinks);
        };
        'tests: for tp in &self.plan.tests {
            let test = &self.suite.tests[tp.test];
            if *cancel.borrow() {
                interrupted = true;
                break;
            }
            if let TestKind::Audit(spec) = &test.kind {
                for v in self.run_audit(test, spec, &tp.nodes, &cancel, sinks).await {
                    judged(v, sinks);
                }
                if *cancel.borrow() {
                    interrupted = true;
                    break;
                }
                continue;
            }
            // The second pass runs after the traffic and before the first
            // fault, on the fabric the traffic saw.
            if matches!(test.kind, TestKind::Fault(_)) && !retested {
                retested = true;
                for v in self.second_pass(&cancel, sinks).await {
                    judged(v, sinks);
                }
            }
            if let TestKind::Fault(f) = &test.kind {
                // A fault left open changes the fabric every later fault
                // was planned against: no more faults in this run.
                if let Some(why) = &faults_blocked {
                    let mut v = skipped(test, &crate::fault::name(self.inv, f));
                    v.message = format!("not sent: {why}");
                    judged(v, sinks);
                    continue;
                }
                let mut also = Vec::new();
                let (v, left_open) = self.run_fault(test, f, &cancel, sinks, &mut also).await;
                if left_open {
                    faults_blocked = Some(format!(
                        "test \"{}\" left a fault open (run `rocegate recover`)",
                        test.name
                    ));
                }
                if v.message.contains("(run interrupted") {
                    interrupted = true;
                }
                judged(v, sinks);
                for x in also {
                    judged(x, sinks);
                }
                if interrupted {
                    break;
                }
                continue;
            }
            // A component's verdict comes after the last round it appears in.
            let mut last_round: HashMap<String, usize> = HashMap::new();
            let names: Vec<Vec<String>> = tp
                .rounds
                .iter()
                .enumerate()
                .map(|(ri, round)| {
                    round
                        .iter()
                        .map(|s| {
                            let c = component(self.inv, s);
                            last_round.insert(c.clone(), ri);
                            c
                        })
                        .collect()
                })
                .collect();
            let mut pending: HashMap<String, Gathered> = HashMap::new();
            let mut book = ledger::Book::default();
            // One counter window per round, over every device the test's
            // rounds can cross; each closing snapshot opens the next.
            let all_steps: Vec<Step> = tp.rounds.iter().flatten().cloned().collect();
            let mut window = self.ledger_open(&test.name, &all_steps, &cancel).await;
            // Cross-spine steps as a percentage of their fair share, for the
            // test's distribution verdict.
            let mut spread: Vec<(String, f64)> = Vec::new();
            // Collectives that failed, for bisection after the test.
            let mut failed_collectives = Vec::new();
            for (ri, round) in tp.rounds.iter().enumerate() {
                for rep in 0..test.repeat {
                    if *cancel.borrow() {
                        interrupted = true;
                        break;
                    }
                    for s in sinks.iter_mut() {
                        s.round_started(&test.name, ri, tp.rounds.len(), rep, round.len());
                    }
                    let sampler = sampler::plan(self.inv, test, round);
                    let extra: Vec<StepCommands> = sampler.iter().map(|s| s.step.clone()).collect();
                    let r = self
                        .execute_round(
                            test,
                            &test.name,
                            round,
                            &names[ri],
                            (ri, rep),
                            None,
                            &extra,
                            &cancel,
                            sinks,
                        )
                        .await;
                    let mut records = Vec::new();
                    for (sample, line, place) in r.samples {
                        let share = tp
                            .capacity
                            .as_ref()
                            .and_then(|c| c.shares.get(ri)?.get(sample.step).copied());
                        pending
                            .entry(sample.component.clone())
                            .or_default()
                            .add(&sample, line, place, share);
                        records.push(Record::Sample(sample));
                    }
                    if let (Some(plan), Some(outs)) = (&sampler, r.extra.first()) {
                        records.extend(
                            plan.read(&test.name, ri, rep, outs)
                                .into_iter()
                                .map(Record::Counters),
                        );
                    }
                    for rec in in_time_order(records) {
                        emit(rec, sinks);
                    }
                    if r.cancelled {
                        interrupted = true;
                        break;
                    }
                }
                // The round's window closes after its last repetition.
                if let Some(o) = window.take().filter(|_| !interrupted) {
                    let (recs, fs, next) = self
                        .ledger_close(
                            o,
                            &test.name,
                            (ri, test.repeat.saturating_sub(1)),
                            &[],
                            &cancel,
                            sinks,
                        )
                        .await;
                    book.add(&recs, &fs);
                    for rec in recs {
                        emit(Record::Ledger(rec), sinks);
                    }
                    for f in fs {
                        emit(Record::Finding(f), sinks);
                    }
                    window = Some(next);
                }
                // Interrupted: what finished is still judged, and says so.
                let due: Vec<String> = if interrupted {
                    let mut all: Vec<String> = pending.keys().cloned().collect();
                    all.sort();
                    all
                } else {
                    names[ri]
                        .iter()
                        .filter(|c| last_round.get(*c) == Some(&ri))
                        .cloned()
                        .collect()
                };
                for comp in &due {
                    if let Some(p) = pending.remove(comp) {
                        let cross = p.share.filter(|s| s.cross_spine && s.value > 0.0);
                        let share = p.share;
                        let mut v = crate::score::values::verdict(test, comp, p);
                        if let (Some(s), Some(value), true) =
                            (cross, v.value, v.verdict != Verdict::Error)
                        {
                            spread.push((comp.clone(), 100.0 * value / s.value));
                        }
                        if interrupted {
                            v.message.push_str(
                                " (run interrupted: judged on the samples that finished)",
                            );
                        }
                        if v.verdict == Verdict::Fail {
                            let at = names[ri].iter().position(|c| c == comp);
                            if let Some(Step::Collective(c)) = at.map(|i| &round[i]) {
                                failed_collectives.push((c.clone(), share));
                            }
                        }
                        judged(v, sinks);
                    }
                }
                if interrupted {
                    break 'tests;
                }
            }
            if let Some(cs) = test
                .expect
                .fair_share
                .as_ref()
                .and_then(|f| f.cross_spine.as_ref())
            {
                if let Some(v) = crate::score::spread::verdict(test, &spread, cs) {
                    judged(v, sinks);
                }
            }
            for v in book.verdicts(&self.suite.gate, &test.name) {
                judged(v, sinks);
            }
            if self.suite.localise.bisect {
                for (c, share) in failed_collectives {
                    let (verdicts, findings) = self.bisect(test, &c, share, &cancel, sinks).await;
                    for f in findings {
                        emit(Record::Finding(f), sinks);
                    }
                    for v in verdicts {
                        judged(v, sinks);
                    }
                    if *cancel.borrow() {
                        interrupted = true;
                        break 'tests;
                    }
                }
            }
        }
        if !retested && !interrupted {
            for v in self.second_pass(&cancel, sinks).await {
                judged(v, sinks);
            }
        }
        Outcome {
            counts,
            gate_passed,
            interrupted,
        }
    }

    /// `localise: retest`: the suspects so far, from the records a sink
    /// kept, run again against healthy partners.
    async fn second_pass(
        &self,
        cancel: &Cancel,
        sinks: &mut [&mut dyn Sink],
    ) -> Vec<VerdictRecord> {
        if !self.suite.localise.retest || *cancel.borrow() {
            return Vec::new();
        }
        let Some((loc, tainted)) = sinks.iter().find_map(|s| {
            let records = s.recorded()?;
            let loc = crate::score::suspects::localise(records);
            let tainted = crate::score::suspects::tainted_nics(records, &loc);
            Some((loc, tainted))
        }) else {
            return Vec::new();
        };
        self.retest(&loc, &tainted, cancel, sinks).await
    }
}

impl Engine<'_> {
    /// The audit: its findings as events, then one verdict per component
    /// (judged in `score::findings` under the suite's gate policy).
    async fn run_audit(
        &self,
        test: &Test,
        spec: &crate::config::suite::AuditSpec,
        nodes: &[crate::config::model::NodeId],
        cancel: &Cancel,
        sinks: &mut [&mut dyn Sink],
    ) -> Vec<VerdictRecord> {
        for s in sinks.iter_mut() {
            s.round_started(&test.name, 0, 1, 0, nodes.len());
        }
        let mut opts = crate::audit::Options::from(spec);
        opts.tclass_dscps = self
            .suite
            .tests
            .iter()
            .filter_map(|t| match &t.kind {
                TestKind::Perftest(p) => p.tclass.map(|c| c >> 2),
                _ => None,
            })
            .collect();
        let findings = crate::audit::run(
            self.transport,
            self.inv,
            nodes,
            &test.name,
            &opts,
            cancel.clone(),
            &mut |out| keep_raw(sinks, out),
        )
        .await;
        for f in &findings {
            for s in sinks.iter_mut() {
                s.record(&Record::Finding(f.clone()));
            }
        }
        crate::score::findings::verdicts(&self.suite.gate, test.kind.label(), &findings)
    }
}

/// A verdict record for a test that was not run.
fn skipped(test: &Test, component: &str) -> VerdictRecord {
    VerdictRecord {
        test: test.name.clone(),
        kind: test.kind.label().into(),
        component: component.to_string(),
        verdict: Verdict::Skipped,
        metric: None,
        value: None,
        unit: None,
        threshold: Default::default(),
        samples: Vec::new(),
        message: String::new(),
        evidence: Vec::new(),
        duration_s: 0.0,
        series: Vec::new(),
    }
}

/// A round's records in order of virtual time (a sample by its end, a
/// counter read by its time), ties kept in the order given.
fn in_time_order(mut records: Vec<Record>) -> Vec<Record> {
    let t = |r: &Record| match r {
        Record::Sample(s) => s.ended_s,
        Record::Counters(c) => c.snapshot.t_s,
        Record::Ledger(l) => l.t1_s,
        _ => f64::MAX,
    };
    records.sort_by(|a, b| t(a).total_cmp(&t(b)));
    records
}

/// What one round produced.
struct RoundResult {
    /// Samples with the line rate of their component.
    samples: Vec<(Sample, Option<f64>, Option<String>)>,
    /// Outputs of the extra steps, in order.
    extra: Vec<Vec<crate::exec::InvocationOutput>>,
    cancelled: bool,
}
