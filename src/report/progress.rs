//! Progress while a run goes, on stderr: an indicatif bar on a terminal,
//! plain timestamped lines when stderr is not a terminal or `CI` is set
//! (logs stay readable). Both say how far the run is overall and in its
//! current test, an ETA, and the verdicts so far. What failed is not
//! listed here: the end of the run leads with it (`terminal.rs`).
//!
//! The ETA starts from the plan's estimates (each planned test's
//! `estimate_s`) and is scaled by how long the run has actually taken for
//! the estimated work done so far, so an emulated run that goes a hundred
//! times faster than its virtual clock shows seconds, not minutes. The
//! work done is never more than the plan: steps the plan did not count
//! (retests, bisection) move the ETA, never the percentage past 100.

use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::cli::ProgressMode;
use crate::score::{Counts, Verdict};

use super::events::{PlannedTest, Record};
use super::sink::Sink;

/// Line mode prints at each new test and otherwise at most this often.
pub const LINE_EVERY: Duration = Duration::from_secs(10);
/// A test with no step finished yet is shown as advancing with time, up
/// to this share of it: its own steps say when it is done.
const BY_TIME: f64 = 0.9;

/// A planned test, as progress counts it.
#[derive(Debug)]
struct Planned {
    name: String,
    /// Estimated seconds, or steps where the plan has no estimates.
    weight: f64,
    /// Steps in all repetitions.
    steps: usize,
    repeat: u32,
}

/// How far a run is, in the plan's estimated seconds.
#[derive(Debug, Default)]
struct Tracker {
    tests: Vec<Planned>,
    total: f64,
    /// The test that runs now, and the weight of those before it.
    current: Option<usize>,
    before: f64,
    /// When the current test started, and the run's pace then (wall
    /// seconds per estimated second).
    started: Duration,
    pace: Option<f64>,
    /// Of the current test: steps finished, and the share its rounds say.
    steps: usize,
    rounds: f64,
    counts: Counts,
    finished: bool,
}

impl Tracker {
    fn new(tests: &[PlannedTest]) -> Self {
        let estimated = tests.iter().any(|t| t.estimate_s > 0.0);
        let tests: Vec<Planned> = tests
            .iter()
            .map(|t| {
                let steps = t.steps * t.repeat as usize;
                Planned {
                    name: t.name.clone(),
                    weight: if estimated {
                        t.estimate_s.max(0.0)
                    } else {
                        steps as f64
                    },
                    steps,
                    repeat: t.repeat.max(1),
                }
            })
            .collect();
        let total = tests.iter().map(|t| t.weight).sum();
        Tracker {
            tests,
            total,
            ..Default::default()
        }
    }

    fn index(&self, test: &str) -> Option<usize> {
        self.tests.iter().position(|t| t.name == test)
    }

    /// A planned test starts (tests run in plan order; those before it are
    /// done). Whether it is a new one.
    fn start(&mut self, k: usize, now: Duration) -> bool {
        if self.current.is_some_and(|c| c >= k) {
            return false;
        }
        self.pace = self.pace_at(now);
        self.before = self.tests[..k].iter().map(|t| t.weight).sum();
        self.current = Some(k);
        self.started = now;
        self.steps = 0;
        self.rounds = 0.0;
        true
    }

    /// The current test's share done by what finished: its steps, or the
    /// rounds it has started.
    fn measured(&self) -> f64 {
        let Some(k) = self.current else { return 0.0 };
        let t = &self.tests[k];
        let by_steps = if t.steps > 0 {
            self.steps as f64 / t.steps as f64
        } else {
            0.0
        };
        by_steps.max(self.rounds).clamp(0.0, 1.0)
    }

    /// The current test's share done: [`Tracker::measured`], or while
    /// that says less, the time it has taken against its estimate at the
    /// run's pace (a fault or an audit has no steps to count).
    fn share(&self, now: Duration) -> f64 {
        let Some(k) = self.current else { return 0.0 };
        let expected = self.tests[k].weight * self.pace.unwrap_or(1.0);
        let by_time = if expected > 0.0 {
            (now.saturating_sub(self.started).as_secs_f64() / expected).min(BY_TIME)
        } else {
            0.0
        };
        self.measured().max(by_time)
    }

    /// Estimated seconds of the plan done by `now`.
    fn done(&self, now: Duration) -> f64 {
        let current = self.current.map_or(0.0, |k| self.tests[k].weight);
        (self.before + current * self.share(now)).min(self.total)
    }

    /// Wall seconds per estimated second, over the work measured done
    /// (time alone proves nothing about the pace).
    fn pace_at(&self, now: Duration) -> Option<f64> {
        let current = self.current.map_or(0.0, |k| self.tests[k].weight);
        let done = self.before + current * self.measured();
        (done > 0.0 && now > Duration::ZERO).then(|| now.as_secs_f64() / done)
    }

    /// Whole percent done: 100 only once the run has finished.
    fn percent(&self, now: Duration) -> u32 {
        if self.finished {
            return 100;
        }
        if self.total <= 0.0 {
            return 0;
        }
        ((100.0 * self.done(now) / self.total).floor() as u32).min(99)
    }

    /// The plan's remaining estimate at the pace so far (the plan's own
    /// until something has been measured).
    fn eta(&self, now: Duration) -> Duration {
        let pace = self.pace_at(now).unwrap_or(1.0);
        let left = (self.total - self.done(now)).max(0.0) * pace;
        Duration::from_secs_f64(left.min(1e9))
    }

    /// Round `round` (repetition `rep`) of `rounds` of the current test
    /// starts: that much of it is done.
    fn round(&mut self, round: usize, rounds: usize, rep: u32) {
        let Some(k) = self.current else { return };
        let repeat = f64::from(self.tests[k].repeat);
        let share = (round as f64 * repeat + f64::from(rep)) / (rounds.max(1) as f64 * repeat);
        self.rounds = self.rounds.max(share.min(1.0));
    }

    /// `mesh-bw (3/8) 42%, round 12/15`: where the run is.
    fn place(&self, now: Duration, round: &str) -> String {
        match self.current {
            Some(k) => format!(
                "{} ({}/{}) {:.0}%{round}",
                self.tests[k].name,
                k + 1,
                self.tests.len(),
                (100.0 * self.share(now)).floor()
            ),
            None => "starting".to_string(),
        }
    }

    /// `1582 pass, 20 warn, 175 fail, 0 error`.
    fn tally(&self) -> String {
        let c = &self.counts;
        let mut s = format!(
            "{} pass, {} warn, {} fail, {} error",
            c.pass, c.warn, c.fail, c.error
        );
        if c.skipped > 0 {
            s += &format!(", {} skipped", c.skipped);
        }
        s
    }
}

/// `45s`, `2m05s`, `1h02m`: a span for a person, to the second.
pub fn span(d: Duration) -> String {
    let s = d.as_secs_f64().round() as u64;
    match (s / 3600, (s % 3600) / 60, s % 60) {
        (0, 0, s) => format!("{s}s"),
        (0, m, s) => format!("{m}m{s:02}s"),
        (h, m, _) => format!("{h}h{m:02}m"),
    }
}

pub struct Progress {
    mode: ProgressMode,
    bar: Option<ProgressBar>,
    /// Where the bar draws, when not stderr (a test's terminal).
    target: Option<ProgressDrawTarget>,
    /// Where lines go.
    out: Box<dyn Write + Send>,
    /// Time since the run started (a test's clock in tests).
    clock: Box<dyn Fn() -> Duration + Send>,
    track: Tracker,
    /// The round or phase that runs now, for the message.
    round: String,
    /// Where the run was at the last line (line mode), and when.
    last_line: Option<Duration>,
    phase: Option<String>,
}

fn wall_clock() -> String {
    let now = time::OffsetDateTime::now_utc();
    format!("{:02}:{:02}:{:02}", now.hour(), now.minute(), now.second())
}

impl Progress {
    /// `Auto`: bars when stderr is a terminal and `CI` is not set, lines
    /// otherwise.
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
        let start = Instant::now();
        Progress::build(
            mode,
            Box::new(std::io::stderr()),
            Box::new(move || start.elapsed()),
            None,
        )
    }

    fn build(
        mode: ProgressMode,
        out: Box<dyn Write + Send>,
        clock: Box<dyn Fn() -> Duration + Send>,
        target: Option<ProgressDrawTarget>,
    ) -> Self {
        Progress {
            mode,
            bar: None,
            target,
            out,
            clock,
            track: Tracker::default(),
            round: String::new(),
            last_line: None,
            phase: None,
        }
    }

    fn line(&mut self, s: &str) {
        match (&self.bar, self.mode) {
            (Some(b), _) => b.println(s),
            (None, ProgressMode::None) => {}
            (None, _) => {
                let _ = writeln!(self.out, "[{}] {s}", wall_clock());
            }
        }
    }

    /// `43% ETA 16s`.
    fn head(&self, now: Duration) -> String {
        format!(
            "{:>3}% ETA {}",
            self.track.percent(now),
            span(self.track.eta(now))
        )
    }

    /// Where the run is, for the bar's second line and for lines.
    fn status(&self, now: Duration) -> String {
        let place = match &self.phase {
            Some(p) => p.clone(),
            None => self.track.place(now, &self.round),
        };
        format!("{place} · {}", self.track.tally())
    }

    /// Redraws the bar, or in line mode prints a line when `due` or when
    /// the last one is [`LINE_EVERY`] old.
    fn show(&mut self, due: bool) {
        let now = (self.clock)();
        if let Some(b) = &self.bar {
            b.set_position((10.0 * self.track.percent(now) as f64) as u64);
            b.set_prefix(self.head(now));
            b.set_message(self.status(now));
            return;
        }
        if self.mode != ProgressMode::Lines {
            return;
        }
        let stale = self
            .last_line
            .is_none_or(|t| now.saturating_sub(t) >= LINE_EVERY);
        if due || stale {
            self.last_line = Some(now);
            let text = format!("{} · {}", self.head(now), self.status(now));
            self.line(&text);
        }
    }

    fn start_bar(&mut self) {
        if self.mode != ProgressMode::Bar {
            return;
        }
        let b = ProgressBar::with_draw_target(
            Some(1000),
            self.target
                .take()
                .unwrap_or_else(ProgressDrawTarget::stderr),
        );
        // Every part but the bar and the message is short and fixed, so
        // the lines fit a narrow terminal: the bar shrinks and the message
        // is cut to what is left.
        b.set_style(
            ProgressStyle::with_template("{prefix} {wide_bar} {elapsed}\n{wide_msg}")
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        b.enable_steady_tick(Duration::from_secs(1));
        self.bar = Some(b);
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
                self.track = Tracker::new(&s.tests);
                let steps: usize = s.tests.iter().map(|t| t.steps * t.repeat as usize).sum();
                let est = Duration::from_secs_f64(s.estimate_s.clamp(0.0, 1e9));
                self.line(&format!(
                    "run {} on {} ({}): {} tests, {steps} steps, estimated {}",
                    s.suite,
                    s.fabric,
                    s.transport,
                    s.tests.len(),
                    span(est)
                ));
                self.start_bar();
                if self.bar.is_some() {
                    self.show(false);
                }
            }
            Record::Sample(s) => {
                let current = self
                    .track
                    .current
                    .map(|k| self.track.tests[k].name.as_str());
                if current == Some(s.test.as_str()) {
                    self.track.steps += 1;
                }
                self.show(false);
            }
            Record::Verdict(v) => {
                self.track.counts.add(v.verdict);
                if v.verdict != Verdict::Pass {
                    self.show(false);
                }
            }
            Record::Counters(_) | Record::Finding(_) | Record::Ledger(_) => {}
            Record::Preflight(h) if !h.problems.is_empty() => {
                self.line(&format!("PREFLIGHT {}: {}", h.host, h.problems.join("; ")));
            }
            Record::Preflight(_) => {}
            Record::RunFinished(f) => {
                let now = (self.clock)();
                self.track.finished = !f.interrupted;
                let at = self.track.percent(now);
                self.finish();
                let how = if f.interrupted {
                    format!("stopped at {at}% after {}", span(now))
                } else {
                    format!("100% finished in {}", span(now))
                };
                self.track.counts = f.counts;
                let tally = self.track.tally();
                self.line(&format!("{how}: {tally}"));
            }
        }
    }

    fn round_started(&mut self, test: &str, round: usize, rounds: usize, rep: u32, _: usize) {
        let now = (self.clock)();
        let new = match self.track.index(test) {
            Some(k) => {
                let new = self.track.start(k, now);
                self.track.round(round, rounds, rep);
                self.round = if rounds > 1 {
                    format!(", round {}/{rounds}", round + 1)
                } else {
                    String::new()
                };
                let was = self.phase.take();
                new || was.is_some()
            }
            // Steps the plan did not count: a retest or a bisection.
            None => {
                let phase = format!("localising: {test}, run {}", round + 1);
                let new = self
                    .phase
                    .as_deref()
                    .is_none_or(|p| !p.starts_with(&format!("localising: {test},")));
                self.phase = Some(phase);
                new
            }
        };
        self.show(new);
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use super::*;
    use crate::report::events::{RunFinished, RunStarted, Sample};

    /// A clock the test moves.
    #[derive(Clone, Default)]
    struct Clock(Arc<Mutex<Duration>>);
    impl Clock {
        fn set(&self, secs: f64) {
            *self.0.lock().unwrap() = Duration::from_secs_f64(secs);
        }
        fn boxed(&self) -> Box<dyn Fn() -> Duration + Send> {
            let c = self.0.clone();
            Box::new(move || *c.lock().unwrap())
        }
    }

    /// What progress wrote.
    #[derive(Clone, Default)]
    struct Written(Arc<Mutex<Vec<u8>>>);
    impl Write for Written {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    impl Written {
        fn lines(&self) -> Vec<String> {
            String::from_utf8_lossy(&self.0.lock().unwrap())
                .lines()
                .map(String::from)
                .collect()
        }
    }

    fn planned(name: &str, steps: usize, estimate_s: f64) -> PlannedTest {
        PlannedTest {
            name: name.into(),
            kind: "perftest".into(),
            pattern: "rail-pairs".into(),
            rounds: 1,
            steps,
            repeat: 1,
            metric: None,
            unit: None,
            estimate_s,
        }
    }

    fn started(tests: Vec<PlannedTest>) -> Record {
        let mut v = serde_json::json!({
            "rocegate_version": "0", "suite": "s", "fabric": "f", "environment": "lab",
            "transport": "emulated", "seed": 1, "started_at": "", "gate_fail_on": [],
            "tests": [], "estimate_s": 40.0, "coverage": null,
            "inventory": {"path": "i", "sha256": ""}, "suite_file": {"path": "s", "sha256": ""},
        });
        v["tests"] = serde_json::to_value(&tests).unwrap();
        Record::RunStarted(serde_json::from_value::<RunStarted>(v).unwrap())
    }

    fn sample(test: &str) -> Record {
        Record::Sample(Sample {
            test: test.into(),
            component: "a<->b".into(),
            round: 0,
            rep: 0,
            step: 0,
            started_s: 0.0,
            ended_s: 0.0,
            value: Some(1.0),
            failure: None,
            raw: Vec::new(),
            commands: Vec::new(),
            hosts: Vec::new(),
            details: serde_json::Value::Null,
            series: Vec::new(),
        })
    }

    fn finished(interrupted: bool) -> Record {
        Record::RunFinished(RunFinished {
            ended_at: String::new(),
            interrupted,
            counts: Counts::default(),
            gate_passed: !interrupted,
            exit_code: 0,
            reason: None,
        })
    }

    /// The percentages of the lines written, in order.
    fn percents(lines: &[String]) -> Vec<u32> {
        lines
            .iter()
            .filter_map(|l| {
                let (pct, _) = l.split_once('%')?;
                pct.rsplit(' ').next()?.trim().parse().ok()
            })
            .collect()
    }

    #[test]
    fn the_eta_is_the_plan_scaled_by_the_measured_pace() {
        let mut t = Tracker::new(&[planned("a", 10, 10.0), planned("b", 10, 30.0)]);
        let at = |s: f64| Duration::from_secs_f64(s);
        assert!(t.start(0, at(0.0)));
        // Nothing measured yet: the plan's own estimate.
        assert_eq!(t.eta(at(0.0)), at(40.0));
        t.steps = 10;
        // 10 estimated seconds done in 1 wall second: the remaining 30
        // take 3.
        assert!((t.eta(at(1.0)).as_secs_f64() - 3.0).abs() < 1e-6);
        assert_eq!(t.percent(at(1.0)), 25);
        assert!(t.start(1, at(1.0)));
        assert!(!t.start(0, at(1.5)), "tests run in plan order");
        // More steps than planned (retests) never pass 99 %.
        t.steps = 1000;
        assert_eq!(t.percent(at(2.0)), 99);
        t.finished = true;
        assert_eq!(t.percent(at(2.0)), 100);
    }

    #[test]
    fn a_test_without_steps_advances_with_time_but_not_to_its_end() {
        let mut t = Tracker::new(&[planned("audit", 0, 10.0), planned("b", 10, 10.0)]);
        t.start(0, Duration::ZERO);
        assert_eq!(t.percent(Duration::from_secs(5)), 25);
        assert_eq!(t.percent(Duration::from_secs(500)), 45);
    }

    #[test]
    fn line_mode_prints_each_test_and_otherwise_every_ten_seconds() {
        let (clock, out) = (Clock::default(), Written::default());
        let mut p = Progress::build(
            ProgressMode::Lines,
            Box::new(out.clone()),
            clock.boxed(),
            None,
        );
        p.record(&started(vec![
            planned("a", 100, 10.0),
            planned("b", 100, 30.0),
        ]));
        p.round_started("a", 0, 1, 0, 100);
        for i in 0..100 {
            clock.set(0.05 * f64::from(i));
            p.record(&sample("a"));
        }
        // Five seconds of steps: the line at the start of the test only.
        assert_eq!(out.lines().len(), 2, "{:#?}", out.lines());
        clock.set(5.0);
        p.round_started("b", 0, 1, 0, 100);
        for i in 0..100 {
            clock.set(5.0 + 0.25 * f64::from(i));
            p.record(&sample("b"));
        }
        clock.set(30.0);
        p.record(&finished(false));
        let lines = out.lines();
        // The start, one line per test, two more in b's 25 s, the end.
        assert_eq!(lines.len(), 6, "{lines:#?}");
        assert!(lines[1].contains("ETA") && lines[1].contains("a (1/2)"));
        assert!(lines[2].contains("b (2/2)"), "{lines:#?}");
        let pct = percents(&lines);
        assert!(pct.windows(2).all(|w| w[0] <= w[1]), "{pct:?}");
        assert_eq!(pct.last(), Some(&100));
        assert!(lines[5].contains("100% finished in 30s"), "{lines:#?}");
    }

    #[test]
    fn an_interrupted_run_never_claims_100() {
        let (clock, out) = (Clock::default(), Written::default());
        let mut p = Progress::build(
            ProgressMode::Lines,
            Box::new(out.clone()),
            clock.boxed(),
            None,
        );
        p.record(&started(vec![planned("a", 100, 10.0)]));
        p.round_started("a", 0, 1, 0, 100);
        p.record(&sample("a"));
        clock.set(2.0);
        p.record(&finished(true));
        let last = out.lines().pop().unwrap();
        assert!(
            last.contains("stopped at 20% after 2s") && !last.contains("100%"),
            "{last}"
        );
    }

    /// A terminal 40 columns wide that keeps what is drawn on it.
    #[derive(Debug, Clone, Default)]
    struct Narrow(Arc<Mutex<Vec<String>>>);
    impl indicatif::TermLike for Narrow {
        fn width(&self) -> u16 {
            40
        }
        fn move_cursor_up(&self, _: usize) -> std::io::Result<()> {
            Ok(())
        }
        fn move_cursor_down(&self, _: usize) -> std::io::Result<()> {
            Ok(())
        }
        fn move_cursor_right(&self, _: usize) -> std::io::Result<()> {
            Ok(())
        }
        fn move_cursor_left(&self, _: usize) -> std::io::Result<()> {
            Ok(())
        }
        fn write_line(&self, s: &str) -> std::io::Result<()> {
            self.0.lock().unwrap().push(s.to_string());
            Ok(())
        }
        fn write_str(&self, s: &str) -> std::io::Result<()> {
            self.0.lock().unwrap().push(s.to_string());
            Ok(())
        }
        fn clear_line(&self) -> std::io::Result<()> {
            Ok(())
        }
        fn flush(&self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn the_bar_fits_a_narrow_terminal() {
        let (clock, term) = (Clock::default(), Narrow::default());
        let target = ProgressDrawTarget::term_like_with_hz(Box::new(term.clone()), 100);
        let mut p = Progress::build(
            ProgressMode::Bar,
            Box::new(std::io::sink()),
            clock.boxed(),
            Some(target),
        );
        p.record(&started(vec![
            planned("a-test-with-a-rather-long-name", 100, 10.0),
            planned("b", 100, 30.0),
        ]));
        p.round_started("a-test-with-a-rather-long-name", 3, 15, 0, 100);
        for i in 0..50 {
            clock.set(f64::from(i));
            p.record(&sample("a-test-with-a-rather-long-name"));
        }
        if let Some(b) = &p.bar {
            b.tick();
        }
        let drawn: Vec<String> = term
            .0
            .lock()
            .unwrap()
            .iter()
            .flat_map(|s| s.lines().map(String::from).collect::<Vec<_>>())
            .collect();
        assert!(drawn.iter().any(|l| l.contains("% ETA")), "{drawn:#?}");
        for l in &drawn {
            assert!(
                l.chars().count() <= 40,
                "{} columns: {l:?}",
                l.chars().count()
            );
        }
        p.record(&finished(false));
    }
}
