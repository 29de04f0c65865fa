//! What the terminal says at the end of a run and from `rocegate report`, in
//! the order a person on call reads it: the gate (one line, the exit code
//! with it), the suspects (a few lines each), the results that did not
//! pass (grouped by test, capped unless `--verbose`), and where the reports
//! are. A pure function of the event records, so `run` and `report` print
//! the same account of the same run. Progress while a run goes is
//! `progress.rs`; the full story is report.html.

use crate::score::suspects::Localisation;
use crate::score::{Counts, Verdict};

use super::events::{completeness, run_finished, run_started, Record, VerdictRecord};

/// Result lines shown without `--verbose`, test headings included.
pub const CAP: usize = 20;
/// Suspects shown without `--verbose`, evidence lines under each, and
/// notes on ECMP collisions (a busy run can have dozens).
const SUSPECTS: usize = 5;
const EVIDENCE: usize = 2;
const NOTES: usize = 3;
/// Longest line without `--verbose`: a tool's message can run to
/// hundreds of characters; the rest is in report.html.
const LINE: usize = 160;

/// The exit code the records make: the run's own, or 3 when the log is not
/// a whole run (whatever its verdicts say).
pub fn exit_code(records: &[Record]) -> i32 {
    match run_finished(records) {
        Some(f) if completeness(records).complete => f.exit_code,
        _ => crate::exit::INCOMPLETE,
    }
}

/// `GATE PASSED`, `GATE FAILED` or `RUN INCOMPLETE` with the counts and the
/// exit code, then for a run that did not finish why, and what did not run.
pub fn gate_text(records: &[Record]) -> String {
    let done = completeness(records);
    let finished = run_finished(records);
    let counts = counts(records);
    let label = match finished {
        _ if !done.complete => "RUN INCOMPLETE",
        Some(f) if f.gate_passed => "GATE PASSED",
        _ => "GATE FAILED",
    };
    let mut out = format!(
        "{label}{}: {} pass, {} warn, {} fail, {} error, {} skipped -> exit {}\n",
        partial(records),
        counts.pass,
        counts.warn,
        counts.fail,
        counts.error,
        counts.skipped,
        exit_code(records)
    );
    if !done.complete {
        out += &format!("  {}\n", done.describe());
    }
    out
}

/// The gate line when the reports could not be written: the run cannot
/// count as complete (exit 3), whatever its verdicts.
pub fn unwritten(records: &[Record], why: &str) -> String {
    let c = counts(records);
    format!(
        "RUN INCOMPLETE{}: {} pass, {} warn, {} fail, {} error, {} skipped -> exit {}\n  the reports could not be written: {why}\n",
        partial(records),
        c.pass,
        c.warn,
        c.fail,
        c.error,
        c.skipped,
        crate::exit::INCOMPLETE
    )
}

/// The run's counts, or for a log without its end the verdicts it holds.
fn counts(records: &[Record]) -> Counts {
    run_finished(records).map(|f| f.counts).unwrap_or_else(|| {
        let mut c = Counts::default();
        for r in records {
            if let Record::Verdict(v) = r {
                c.add(v.verdict);
            }
        }
        c
    })
}

/// ` (PARTIAL RUN: <narrowing>; N test(s) skipped)` for a narrowed run: the
/// tests skipped are those the plan left out (verdicts of tests it does
/// not list).
fn partial(records: &[Record]) -> String {
    let Some(started) = run_started(records) else {
        return String::new();
    };
    let Some(narrowing) = &started.partial else {
        return String::new();
    };
    let planned: std::collections::HashSet<&str> =
        started.tests.iter().map(|t| t.name.as_str()).collect();
    let left_out: std::collections::BTreeSet<&str> = records
        .iter()
        .filter_map(|r| match r {
            Record::Verdict(v)
                if v.verdict == Verdict::Skipped && !planned.contains(v.test.as_str()) =>
            {
                Some(v.test.as_str())
            }
            _ => None,
        })
        .collect();
    format!(
        " (PARTIAL RUN: {narrowing}; {} test(s) skipped)",
        left_out.len()
    )
}

/// The suspects, then the results that did not pass. Empty for a clean run.
pub fn body(records: &[Record], run_dir: &str, verbose: bool) -> String {
    let loc = crate::score::suspects::localise(records);
    let mut results = results_text(records, run_dir, verbose);
    if !verbose {
        results += &skipped_text(records);
    }
    let sections = [suspects_text(&loc, run_dir, verbose), results];
    sections
        .iter()
        .filter(|s| !s.is_empty())
        .map(|s| format!("\n{s}"))
        .collect()
}

/// Where the reports are. `rebuilt`: how many records `report` read.
pub fn reports_text(run_dir: &str, rebuilt: Option<usize>) -> String {
    let head = match rebuilt {
        Some(n) => format!("\nREPORTS, rebuilt from {n} records:\n"),
        None => "\nREPORTS:\n".to_string(),
    };
    head + &format!(
        "  report.html    {run_dir}/report.html\n  junit.xml      {run_dir}/junit.xml\n  summary.json   {run_dir}/summary.json\n  results.jsonl  {run_dir}/results.jsonl (every event; raw/ keeps each command's output)\n"
    )
}

/// The suspects, ranked, each with its first lines of evidence (all of
/// them and every suspect with `verbose`); then what a retest cleared and
/// the ECMP collisions. Empty when nothing is suspected.
pub fn suspects_text(loc: &Localisation, run_dir: &str, verbose: bool) -> String {
    let mut out = String::new();
    if !loc.suspects.is_empty() {
        out += &format!(
            "SUSPECTS ({}), most likely first (score: failures explained, discounted by inconsistency):\n",
            loc.suspects.len()
        );
    }
    let shown = if verbose { usize::MAX } else { SUSPECTS };
    for (i, s) in loc.suspects.iter().take(shown).enumerate() {
        out += &format!(
            "{:>2}. {}  score {:.2}, explains {} result(s)\n",
            i + 1,
            s.label(),
            s.score,
            s.results.len()
        );
        let lines = if verbose { usize::MAX } else { EVIDENCE };
        for e in s.evidence.iter().take(lines) {
            out += &cut(&format!("      {e}"), verbose);
        }
        if s.evidence.len() > lines {
            out += &format!(
                "      … {} more line(s) of evidence\n",
                s.evidence.len() - lines
            );
        }
    }
    if loc.suspects.len() > shown {
        out += &format!(
            "… and {} more suspect(s) in {run_dir}/report.html\n",
            loc.suspects.len() - shown
        );
    }
    for s in &loc.cleared {
        out += &cut(
            &format!(
                "cleared by retest: {} ({})",
                s.label(),
                s.evidence.first().map(String::as_str).unwrap_or("")
            ),
            verbose,
        );
    }
    let notes = if verbose { usize::MAX } else { NOTES };
    for c in loc.collisions.iter().take(notes) {
        out += &cut(&format!("note: {}", c.message), verbose);
    }
    if loc.collisions.len() > notes {
        out += &format!(
            "… and {} more note(s) on ECMP collisions in {run_dir}/report.html\n",
            loc.collisions.len() - notes
        );
    }
    if !loc.unexplained.is_empty() {
        out += &format!(
            "{} failing result(s) not attributed to one component (listed below)\n",
            loc.unexplained.len()
        );
    }
    out
}

/// How a verdict ranks in the list: what fails the gate first.
fn rank(v: Verdict) -> u8 {
    match v {
        Verdict::Fail => 0,
        Verdict::Error => 1,
        Verdict::Warn => 2,
        Verdict::Skipped => 3,
        Verdict::Pass => 4,
    }
}

/// Every result that failed or warned (`verbose`: was skipped too),
/// grouped by test (the tests with failures first, in plan order), at most
/// [`CAP`] lines unless `verbose`. A capped list gives each test a fair
/// share of the lines and says how many more there are and where.
fn results_text(records: &[Record], run_dir: &str, verbose: bool) -> String {
    let mut groups: Vec<(&str, Vec<&VerdictRecord>)> = Vec::new();
    for r in records {
        let Record::Verdict(v) = r else { continue };
        if v.verdict == Verdict::Pass || (v.verdict == Verdict::Skipped && !verbose) {
            continue;
        }
        match groups.iter_mut().find(|(t, _)| *t == v.test) {
            Some((_, g)) => g.push(v),
            None => groups.push((&v.test, vec![v])),
        }
    }
    if groups.is_empty() {
        return String::new();
    }
    for (_, g) in groups.iter_mut() {
        g.sort_by_key(|v| rank(v.verdict));
    }
    groups.sort_by_key(|(_, g)| rank(g[0].verdict));
    let total: usize = groups.iter().map(|(_, g)| g.len()).sum();
    let quota = if verbose {
        groups.iter().map(|(_, g)| g.len()).collect()
    } else {
        share(
            &groups.iter().map(|(_, g)| g.len()).collect::<Vec<_>>(),
            CAP,
        )
    };
    let shown: usize = quota.iter().sum();
    let mut out = if shown < total {
        format!("NOT PASSED ({total}), by test, {shown} shown:\n")
    } else {
        format!("NOT PASSED ({total}), by test:\n")
    };
    for ((test, g), &n) in groups.iter().zip(&quota) {
        if n == 0 {
            continue;
        }
        out += &format!("{test}: {}\n", tally(g));
        for v in g.iter().take(n) {
            out += &if verbose {
                verdict_lines(v, run_dir)
            } else {
                // Fault verdicts start their message with their component.
                let message = v
                    .message
                    .strip_prefix(&format!("{}: ", v.component))
                    .unwrap_or(&v.message);
                cut(
                    &format!(
                        "  {:<7} {}: {message}",
                        v.verdict.as_str().to_uppercase(),
                        v.component
                    ),
                    false,
                )
            };
        }
    }
    let unheaded: Vec<String> = groups
        .iter()
        .zip(&quota)
        .filter(|(_, &n)| n == 0)
        .map(|((test, g), _)| format!("{test} ({})", tally(g)))
        .collect();
    if !unheaded.is_empty() {
        out += &cut(&format!("also: {}", unheaded.join(", ")), false);
    }
    if shown < total {
        out += &format!(
            "…and {} more in {run_dir}/report.html (--verbose lists them all)\n",
            total - shown
        );
    }
    out
}

/// What was skipped, one line per reason (a narrowed run skips many tests
/// for one reason), at most [`NOTES`] lines.
fn skipped_text(records: &[Record]) -> String {
    let mut reasons: Vec<(&str, Vec<&str>)> = Vec::new();
    for r in records {
        let Record::Verdict(v) = r else { continue };
        if v.verdict != Verdict::Skipped {
            continue;
        }
        let why = v.message.strip_prefix("skipped: ").unwrap_or(&v.message);
        match reasons.iter_mut().find(|(w, _)| *w == why) {
            Some((_, tests)) => tests.push(&v.test),
            None => reasons.push((why, vec![&v.test])),
        }
    }
    let mut out = String::new();
    for (why, tests) in reasons.iter().take(NOTES) {
        out += &cut(&format!("skipped {}: {why}", tests.join(", ")), false);
    }
    if reasons.len() > NOTES {
        out += &format!(
            "… and {} more reason(s) for skipping (--verbose lists them)\n",
            reasons.len() - NOTES
        );
    }
    out
}

/// Lines for each group out of `cap` (a heading counts as one): one round
/// at a time, a line to each group that has more, so one test with
/// hundreds of failures cannot hide the others. Groups past what the cap
/// can head get none.
fn share(sizes: &[usize], cap: usize) -> Vec<usize> {
    let headed = sizes.len().min(cap / 2).max(1);
    let mut quota = vec![0; sizes.len()];
    let mut left = cap.saturating_sub(headed);
    loop {
        let before = left;
        for (q, &n) in quota.iter_mut().zip(sizes).take(headed) {
            if left > 0 && *q < n {
                *q += 1;
                left -= 1;
            }
        }
        if left == 0 || left == before {
            return quota;
        }
    }
}

/// `3 fail, 1 warn`: a test's results that did not pass, by verdict.
fn tally(g: &[&VerdictRecord]) -> String {
    let mut c = Counts::default();
    for v in g {
        c.add(v.verdict);
    }
    [
        (c.fail, "fail"),
        (c.error, "error"),
        (c.warn, "warn"),
        (c.skipped, "skipped"),
    ]
    .into_iter()
    .filter(|(n, _)| *n > 0)
    .map(|(n, what)| format!("{n} {what}"))
    .collect::<Vec<_>>()
    .join(", ")
}

/// `line` and a newline, cut to [`LINE`] characters unless `whole`.
fn cut(line: &str, whole: bool) -> String {
    if whole || line.chars().count() <= LINE {
        return format!("{line}\n");
    }
    let kept: String = line.chars().take(LINE - 1).collect();
    format!("{kept}…\n")
}

/// One result in full (`--verbose`): verdict, component, value, threshold,
/// message and where its evidence is.
fn verdict_lines(v: &VerdictRecord, run_dir: &str) -> String {
    let value = v
        .value
        .map(|x| format!("{x:.2} {}", v.unit.as_deref().unwrap_or("")))
        .unwrap_or_else(|| "-".into());
    let t = &v.threshold;
    let threshold = [
        t.min.map(|x| format!("min {x:.1}")),
        t.max.map(|x| format!("max {x:.1}")),
    ]
    .into_iter()
    .flatten()
    .collect::<Vec<_>>()
    .join(" ");
    let evidence = v
        .evidence
        .first()
        .map(|e| format!("{run_dir}/{e}"))
        .unwrap_or_else(|| "-".into());
    format!(
        "  {:<7} {}\n          value {value}  threshold {}  {}\n          evidence {evidence}\n",
        v.verdict.as_str().to_uppercase(),
        v.component,
        if threshold.is_empty() {
            "-".into()
        } else {
            threshold
        },
        v.message
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cap_shares_lines_between_tests() {
        // One test with hundreds of failures does not hide the others.
        assert_eq!(share(&[300, 2, 1], 20), vec![14, 2, 1]);
        assert_eq!(share(&[1, 1], 20), vec![1, 1]);
        // More tests than the cap can head: the first ten, one line each.
        let q = share(&[5; 30], 20);
        assert_eq!(q.iter().filter(|&&n| n > 0).count(), 10);
        assert_eq!(q.iter().sum::<usize>(), 10);
    }

    #[test]
    fn a_long_message_is_cut_with_an_ellipsis() {
        let long = "x".repeat(500);
        let line = cut(&long, false);
        assert_eq!(line.chars().count(), LINE + 1);
        assert!(line.ends_with("…\n"));
        assert_eq!(cut(&long, true).len(), 501);
    }
}
