//! Progress while a run goes: indicatif bars on a terminal, plain
//! timestamped lines when not a terminal or under CI (logs stay readable).

use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressStyle};

use crate::cli::ProgressMode;
use crate::score::Verdict;

use super::events::Record;
use super::sink::Sink;

pub struct Progress {
    mode: ProgressMode,
    bar: Option<ProgressBar>,
}

fn clock() -> String {
    let now = time::OffsetDateTime::now_utc();
    format!("{:02}:{:02}:{:02}", now.hour(), now.minute(), now.second())
}

impl Progress {
    pub fn new(mode: ProgressMode) -> Self {
        let mode = match mode {
            ProgressMode::Auto
                if std::io::stderr().is_terminal() && std::env::var_os("CI").is_none() =>
            {
                ProgressMode::Bar
            }
            ProgressMode::Auto => ProgressMode::Lines,
            m => m,
        };
        Progress { mode, bar: None }
    }

    fn line(&self, s: &str) {
        match (&self.bar, self.mode) {
            (Some(b), _) => b.println(s),
            (None, ProgressMode::None) => {}
            (None, _) => eprintln!("[{}] {s}", clock()),
        }
    }

    pub fn finish(&mut self) {
        if let Some(b) = self.bar.take() {
            b.finish_and_clear();
        }
    }
}

impl Sink for Progress {
    fn record(&mut self, r: &Record) {
        match r {
            Record::RunStarted(s) => {
                let total: u64 = s
                    .tests
                    .iter()
                    .map(|t| (t.steps as u64) * u64::from(t.repeat))
                    .sum();
                self.line(&format!(
                    "run {} on {} ({}): {} tests, {} steps, estimated {:.0}s",
                    s.suite,
                    s.fabric,
                    s.transport,
                    s.tests.len(),
                    total,
                    s.estimate_s
                ));
                if self.mode == ProgressMode::Bar {
                    let b = ProgressBar::new(total);
                    b.set_style(
                        ProgressStyle::with_template(
                            "{spinner} [{elapsed_precise}] {bar:40} {pos}/{len} steps  {msg}",
                        )
                        .unwrap_or_else(|_| ProgressStyle::default_bar()),
                    );
                    self.bar = Some(b);
                }
            }
            Record::Sample(_) => {
                if let Some(b) = &self.bar {
                    b.inc(1);
                }
            }
            Record::Verdict(v) if v.verdict != Verdict::Pass => {
                self.line(&format!(
                    "{:<7} {} {}: {}",
                    v.verdict.as_str().to_uppercase(),
                    v.test,
                    v.component,
                    v.message
                ));
            }
            Record::Verdict(_) => {}
            Record::Counters(_) | Record::Finding(_) | Record::Ledger(_) => {}
            Record::Preflight(h) if !h.problems.is_empty() => {
                self.line(&format!("PREFLIGHT {}: {}", h.host, h.problems.join("; ")));
            }
            Record::Preflight(_) => {}
            Record::RunFinished(f) => {
                self.finish();
                let c = &f.counts;
                self.line(&format!(
                    "finished: {} pass, {} warn, {} fail, {} error, {} skipped{}",
                    c.pass,
                    c.warn,
                    c.fail,
                    c.error,
                    c.skipped,
                    if f.interrupted { " (interrupted)" } else { "" }
                ));
            }
        }
    }

    fn round_started(&mut self, test: &str, round: usize, rounds: usize, rep: u32, steps: usize) {
        let msg = format!(
            "{test}: round {}/{rounds}, repetition {}, {steps} steps",
            round + 1,
            rep + 1
        );
        match &self.bar {
            Some(b) => b.set_message(msg),
            None if self.mode == ProgressMode::Lines => self.line(&msg),
            None => {}
        }
    }
}
