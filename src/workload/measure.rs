//! From what a step's commands printed to one measurement: a value for the
//! test's metric, or a classified failure. Parsing only: this module never
//! learns anything from how the commands ran except their text, exit status
//! and whether the transport killed them.

use serde_json::json;

use crate::config::suite::Metric;
use crate::exec::{exit_text, ExecFailure, InvocationOutput, Role, StepCommands};
use crate::workload::failure::{Failure, FailureClass, StepFailure};
use crate::workload::iperf::parse as iperf;
use crate::workload::nccl::parse as nccl;
use crate::workload::perftest::parse as perftest;

#[derive(Debug, Clone, Default)]
pub struct Measurement {
    pub value: Option<f64>,
    pub failure: Option<StepFailure>,
    pub details: serde_json::Value,
    /// `(t_s, value)`: the end of each interval on the transport clock (the
    /// clock of `InvocationOutput::started_s`), and the metric over that
    /// interval (Gb/s for perftest and iperf3, GB/s for nccl). A step with
    /// several clients sums them ([`sum_series`]). Sorted by time; empty
    /// when the tool printed no series.
    pub series: Vec<(f64, f64)>,
}

/// One client's intervals: `(start_s, end_s, value)` on the transport clock.
pub type Spans = Vec<(f64, f64, f64)>;

/// Sums the series of several clients on one grid: the intervals of the
/// first client that has any. A grid interval is kept only where every
/// client's intervals cover it completely, and each client contributes
/// its time-weighted mean over it (its rate is constant within each of its
/// own intervals), so misaligned clients are summed exactly and an edge
/// where one client had not started (or had stopped) is dropped rather
/// than shown as a dip. Points are the grid intervals' ends.
pub fn sum_series(clients: &[Spans]) -> Vec<(f64, f64)> {
    let clients: Vec<&Spans> = clients.iter().filter(|c| !c.is_empty()).collect();
    let Some(grid) = clients.first() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    'grid: for &(a, b, _) in grid.iter() {
        let len = b - a;
        if len <= 0.0 {
            continue;
        }
        let mut total = 0.0;
        for c in &clients {
            let mut covered = 0.0;
            let mut integral = 0.0;
            for &(s, e, v) in c.iter() {
                let o = (e.min(b) - s.max(a)).max(0.0);
                covered += o;
                integral += v * o;
            }
            if covered < len * (1.0 - 1e-6) {
                continue 'grid;
            }
            total += integral / len;
        }
        out.push((b, total));
    }
    out.sort_by(|x, y| x.0.total_cmp(&y.0));
    out
}

/// Spans ending at `ended_s`, `d` seconds each, one per value in order: a
/// stream of windows whose last one closed when the process was stopped.
/// The partial window cut by the stop (0 to `d` s) is not known, so each
/// end may be up to `d` late: a recovery read from it errs long, never short.
fn spans_back_from(ended_s: f64, d: f64, values: &[f64]) -> Spans {
    let n = values.len();
    values
        .iter()
        .enumerate()
        .map(|(k, &v)| {
            let end = ended_s - (n - 1 - k) as f64 * d;
            (end - d, end, v)
        })
        .collect()
}

fn record(f: &Failure, host: &str) -> StepFailure {
    StepFailure {
        kind: f.kind.as_str().to_string(),
        class: class_name(f.class),
        message: format!("{host}: {}", f.message),
    }
}

fn class_name(c: FailureClass) -> String {
    match c {
        FailureClass::Fabric => "fabric".into(),
        FailureClass::Infrastructure => "infrastructure".into(),
    }
}

fn infra(kind: &str, message: String) -> StepFailure {
    StepFailure {
        kind: kind.into(),
        class: "infrastructure".into(),
        message,
    }
}

/// A transport-level failure that leaves nothing to parse.
fn exec_failure(f: &ExecFailure, host: &str, argv0: &str) -> Option<StepFailure> {
    Some(match f {
        ExecFailure::Unreachable(m) => infra("unreachable", format!("{host}: unreachable: {m}")),
        ExecFailure::AuthRefused(m) => infra(
            "auth_refused",
            format!("{host}: authentication refused: {m}"),
        ),
        ExecFailure::MissingBinary(m) => infra(
            "missing_binary",
            format!("{host}: {argv0} is not installed: {m}"),
        ),
        ExecFailure::Cancelled(m) => infra("cancelled", format!("{host}: interrupted: {m}")),
        ExecFailure::Transport(m) => infra("transport", format!("{host}: {m}")),
        ExecFailure::TimedOut(_) => return None,
    })
}

/// The failure a step is judged on. A command that could not be started on
/// its host (unreachable, key refused, binary missing) comes first: the step
/// was never set up, so whatever its peer saw (a client finding no server
/// is "no route" or "refused") says nothing about the fabric. Then fabric
/// failures, which are the finding; then the other infrastructure ones.
fn first_failure(mut failures: Vec<StepFailure>) -> Option<StepFailure> {
    let rank = |f: &StepFailure| match f.kind.as_str() {
        "unreachable" | "auth_refused" | "missing_binary" => 0,
        _ if f.class == "fabric" => 1,
        _ => 2,
    };
    failures.sort_by_key(rank);
    failures.into_iter().next()
}

/// The tool's binary name, skipping wrappers such as numactl and timeout.
fn tool_name(argv: &[String]) -> &str {
    let mut i = 0;
    while i < argv.len() {
        let w = argv[i].as_str();
        if w == "numactl" || w == "timeout" || w == "env" || w == "setsid" || w == "stdbuf" {
            i += 1;
            while i < argv.len()
                && (argv[i].starts_with('-')
                    || argv[i].contains('=')
                    || argv[i].parse::<f64>().is_ok())
            {
                i += 1;
            }
            continue;
        }
        return w.rsplit('/').next().unwrap_or(w);
    }
    ""
}

fn text_of(o: &InvocationOutput) -> String {
    if o.stderr.is_empty() {
        o.stdout.clone()
    } else {
        format!("{}\n{}", o.stdout, o.stderr)
    }
}

fn perftest_metric(report: &perftest::PerftestReport, metric: Metric) -> Option<f64> {
    let row = report.rows.last()?;
    match (row, metric) {
        (perftest::PerftestRow::Bw(r), Metric::BwAvgGbps) => r.bw_avg_gbps,
        (perftest::PerftestRow::Bw(r), Metric::BwPeakGbps) => r.bw_peak_gbps,
        (perftest::PerftestRow::Lat(r), Metric::TTypicalUs) => r.t_typical_us,
        (perftest::PerftestRow::Lat(r), Metric::TAvgUs) => r.t_avg_us,
        (perftest::PerftestRow::Lat(r), Metric::P99Us) => r.p99_us,
        _ => None,
    }
}

/// perftest step (a pair, or an incast's pairs): the value is the sum of the
/// clients' results (an incast's aggregate at the receiver; a pair's own).
/// `link_gbps`: the rate of the step's link in one direction (the slower
/// NIC of a pair, an incast's receiver), which bounds each client's
/// bandwidth (see [`crate::plausible`]); `None` when unknown.
pub fn perftest_step(
    cmds: &StepCommands,
    outs: &[InvocationOutput],
    metric: Metric,
    link_gbps: Option<f64>,
) -> Measurement {
    let mut m = Measurement::default();
    let mut total = 0.0;
    let mut clients = 0;
    let mut facts = Vec::new();
    let mut spans: Vec<Spans> = Vec::new();
    // Fabric failures win over infrastructure ones: they are the finding.
    let mut failures: Vec<StepFailure> = Vec::new();
    let windows = windows_of(cmds);
    for (inv, out) in cmds.invocations.iter().zip(outs) {
        let tool = tool_name(&inv.argv);
        if let Some(f) = out
            .failure
            .as_ref()
            .and_then(|f| exec_failure(f, &inv.host, tool))
        {
            failures.push(f);
            continue;
        }
        let timed_out = matches!(out.failure, Some(ExecFailure::TimedOut(_)));
        let opts = perftest::PerftestParseOptions {
            unit_override: None,
            killed_by_timeout: timed_out,
            link_gbps,
        };
        let text = text_of(out);
        let parsed = match (windows, inv.role) {
            (Some(_), Role::Client) => perftest::parse_windows(&text, &opts),
            _ => perftest::parse(&text, &opts),
        };
        match parsed {
            Ok(report) => {
                // A report with an impossible value is no series either.
                if let (Some(d), Role::Client, true) =
                    (windows, inv.role, report.impossible.is_empty())
                {
                    let v: Vec<f64> = report
                        .rows
                        .iter()
                        .filter_map(|r| r.as_bw().and_then(|b| b.bw_avg_gbps))
                        .collect();
                    spans.push(spans_back_from(out.ended_s, d, &v));
                }
                if let Some(e) = &report.error {
                    // Stopping a --run_infinitely client closes its socket
                    // while its server waits in the final handshake: that
                    // failure is how every series run ends.
                    let ended_by_client = windows.is_some()
                        && inv.role == Role::Server
                        && e.kind == crate::workload::failure::FailureKind::ConnectionRefused
                        && e.message
                            .to_ascii_lowercase()
                            .contains("failed to exchange data");
                    if !ended_by_client {
                        failures.push(record(e, &inv.host));
                    }
                    continue;
                }
                if inv.role == Role::Client {
                    clients += 1;
                    let value = match windows {
                        Some(_) => window_metric(&report, metric),
                        None => perftest_metric(&report, metric),
                    };
                    match value {
                        Some(v) => total += v,
                        None => failures.push(infra(
                            "metric_missing",
                            format!(
                                "{}: {tool} printed no {} (rows: {})",
                                inv.host,
                                metric.name(),
                                report.rows.len()
                            ),
                        )),
                    }
                    let mut fact = json!({
                        "host": inv.host, "tool": report.tool, "unit": report.unit, "link_type": report.link_type,
                        "gid_index": report.gid_index, "mtu": report.mtu, "qps": report.qps,
                        "rows": report.rows.len(), "warnings": report.warnings,
                    });
                    // A size sweep (`-a`): the metric per message size, for
                    // the report's curves.
                    if report.rows.len() > 1 {
                        fact["curve"] = report
                            .rows
                            .iter()
                            .map(|r| match r {
                                perftest::PerftestRow::Bw(b) => json!([b.bytes, b.bw_avg_gbps]),
                                perftest::PerftestRow::Lat(l) => json!([l.bytes, l.t_typical_us]),
                            })
                            .collect();
                    }
                    facts.push(fact);
                }
            }
            Err(e) if out.exit == Some(0) || inv.role == Role::Client => failures.push(infra(
                "unrecognised",
                format!(
                    "{}: output of `{tool}` ({}) is not perftest output: {e}",
                    inv.host,
                    exit_text(out.exit)
                ),
            )),
            // A server killed after its client finished may print nothing useful.
            Err(_) => {}
        }
    }
    m.failure = first_failure(failures);
    if m.failure.is_none() && clients > 0 {
        m.value = Some(total);
    }
    m.details = json!({ "clients": facts });
    m.series = sum_series(&spans);
    m
}

/// The window length of a `--run_infinitely` step (its clients' `-D`,
/// perftest's 5 s default without one), or `None` for a normal run.
fn windows_of(cmds: &StepCommands) -> Option<f64> {
    let client = cmds
        .invocations
        .iter()
        .find(|i| i.role == Role::Client && i.argv.iter().any(|w| w == "--run_infinitely"))?;
    Some(
        flag_value(&client.argv, "-D")
            .and_then(|v| v.parse::<f64>().ok())
            .filter(|d| *d > 0.0)
            .unwrap_or(5.0),
    )
}

/// A windowed run's value: the mean of its windows' averages (the run's
/// average), or for the peak metric the best window (perftest measures no
/// peak in this mode).
fn window_metric(report: &perftest::PerftestReport, metric: Metric) -> Option<f64> {
    let v: Vec<f64> = report
        .rows
        .iter()
        .filter_map(|r| r.as_bw().and_then(|b| b.bw_avg_gbps))
        .collect();
    if v.is_empty() {
        return None;
    }
    match metric {
        Metric::BwAvgGbps => Some(v.iter().sum::<f64>() / v.len() as f64),
        Metric::BwPeakGbps => v.iter().copied().reduce(f64::max),
        _ => None,
    }
}

/// The value of `flag` in an argv (`-p 5201` gives `5201`).
fn flag_value<'a>(argv: &'a [String], flag: &str) -> Option<&'a str> {
    argv.iter()
        .position(|w| w == flag)
        .and_then(|i| argv.get(i + 1))
        .map(String::as_str)
}

/// iperf3 step (a pair, or an incast's pairs): the value is the sum of the
/// receivers' goodputs (`sum_received` of every client), so an incast reads
/// what its receiver took in. Each client's interval series goes into
/// `details.clients[].intervals` for a recovery analysis. `link_gbps` as
/// for [`perftest_step`].
pub fn iperf_step(
    cmds: &StepCommands,
    outs: &[InvocationOutput],
    link_gbps: Option<f64>,
) -> Measurement {
    let mut m = Measurement::default();
    let mut total = 0.0;
    let mut clients = 0;
    let mut facts = Vec::new();
    let mut version = None;
    let mut spans: Vec<Spans> = Vec::new();
    // Fabric failures win over infrastructure ones: they are the finding.
    let mut failures: Vec<StepFailure> = Vec::new();
    for (inv, out) in cmds.invocations.iter().zip(outs) {
        let tool = tool_name(&inv.argv);
        if let Some(f) = out
            .failure
            .as_ref()
            .and_then(|f| exec_failure(f, &inv.host, tool))
        {
            failures.push(f);
            continue;
        }
        let text = text_of(out);
        if inv.role == Role::Server {
            // A server has no value; it matters only when it failed itself
            // (its port taken): then the client may have measured another one.
            if let Some(e) = iperf::parse_server(&text).error {
                failures.push(record(&e, &inv.host));
            }
            continue;
        }
        let to = format!(
            "{} port {}",
            flag_value(&inv.argv, "-c").unwrap_or("?"),
            flag_value(&inv.argv, "-p").unwrap_or("?")
        );
        let opts = iperf::IperfParseOptions {
            killed_by_timeout: matches!(out.failure, Some(ExecFailure::TimedOut(_))),
            link_gbps,
        };
        match iperf::parse(&text, &opts) {
            Ok(report) => {
                version = version.or(report.version.clone());
                // Interval times count from the client's test start;
                // `-O` warm-up intervals are not part of the series, and a
                // report with an impossible value has none.
                spans.push(
                    report
                        .intervals
                        .iter()
                        .filter(|i| !i.omitted && report.impossible.is_empty())
                        .map(|i| (out.started_s + i.start_s, out.started_s + i.end_s, i.gbps))
                        .collect(),
                );
                let mut fact = serde_json::to_value(&report).unwrap_or_default();
                if let Some(o) = fact.as_object_mut() {
                    o.insert("host".into(), json!(inv.host));
                    o.insert("to".into(), json!(to));
                }
                facts.push(fact);
                if let Some(e) = &report.error {
                    failures.push(record(e, &format!("{} (to {to})", inv.host)));
                    continue;
                }
                clients += 1;
                match report.received_gbps {
                    Some(v) => total += v,
                    None => failures.push(infra(
                        "metric_missing",
                        format!(
                            "{} (to {to}): iperf3 printed no receiver total (end.sum_received)",
                            inv.host
                        ),
                    )),
                }
            }
            Err(e) => failures.push(infra(
                "unrecognised",
                format!(
                    "{} (to {to}): output of `{tool}` ({}) is not iperf3 -J output: {e}",
                    inv.host,
                    exit_text(out.exit)
                ),
            )),
        }
    }
    m.failure = first_failure(failures);
    if m.failure.is_none() && clients > 0 {
        m.value = Some(total);
    }
    m.details = json!({ "iperf3_version": version, "clients": facts });
    m.series = sum_series(&spans);
    m
}

pub fn nccl_step(
    cmds: &StepCommands,
    outs: &[InvocationOutput],
    metric: Metric,
    max_bytes: u64,
) -> Measurement {
    let mut m = Measurement::default();
    let (Some(inv), Some(out)) = (cmds.invocations.first(), outs.first()) else {
        m.failure = Some(infra("transport", "no launcher output".into()));
        return m;
    };
    let tool = tool_name(&inv.argv);
    if let Some(f) = out
        .failure
        .as_ref()
        .and_then(|f| exec_failure(f, &inv.host, tool))
    {
        m.failure = Some(f);
        return m;
    }
    let timed_out = matches!(out.failure, Some(ExecFailure::TimedOut(_)));
    let report = match nccl::parse(
        &text_of(out),
        &nccl::NcclParseOptions {
            killed_by_timeout: timed_out,
        },
    ) {
        Ok(r) => r,
        Err(e) => {
            m.failure = Some(infra(
                "launcher_failure",
                format!(
                    "{}: `{tool}` ({}) printed no nccl-tests result: {e}",
                    inv.host,
                    exit_text(out.exit)
                ),
            ));
            return m;
        }
    };
    m.details = json!({
        "collective": report.collective, "nranks": report.nranks, "transport": report.transport,
        "hcas": report.hcas, "nccl_version": report.nccl_version, "nccl_tests_version": report.nccl_tests_version,
        "rows": report.rows.len(), "avg_busbw_gbs": report.avg_busbw_gbs,
        "curve": report.rows.iter().map(|r| json!([r.bytes, r.out_of_place.as_ref().and_then(|o| o.busbw_gbs)])).collect::<Vec<_>>(),
    });
    let mut errors = report.errors.clone();
    errors.sort_by_key(|f| f.class != FailureClass::Fabric);
    if let Some(f) = errors.first() {
        m.failure = Some(record(f, &inv.host));
        return m;
    }
    // Gate on the largest size, never on the sweep average.
    let Some(last) = report.rows.last() else {
        m.failure = Some(infra(
            "launcher_failure",
            format!("{}: nccl-tests printed no result rows", inv.host),
        ));
        return m;
    };
    if last.bytes < max_bytes {
        m.failure = Some(infra(
            "incomplete",
            format!(
                "{}: the sweep stopped at {} bytes, before the {} bytes the gate reads",
                inv.host, last.bytes, max_bytes
            ),
        ));
        return m;
    }
    let pick = |o: &nccl::NcclResult| match metric {
        Metric::AlgbwGbs => o.algbw_gbs,
        _ => o.busbw_gbs,
    };
    m.value = last.out_of_place.as_ref().and_then(pick);
    if let Some(c) = cycles_of(&inv.argv) {
        m.series = cycle_series(&report.rows, last.bytes, &c, out.ended_s, &pick);
        // Several cycles: the value is the mean of every timed run, not the
        // last one.
        let v: Vec<f64> = m.series.iter().map(|p| p.1).collect();
        if !v.is_empty() {
            m.value = Some(v.iter().sum::<f64>() / v.len() as f64);
        }
    }
    if m.value.is_none() {
        m.failure = Some(infra(
            "metric_missing",
            format!("{}: no {} at {} bytes", inv.host, metric.name(), last.bytes),
        ));
    }
    m
}

/// What the series of an nccl-tests `-N` run needs from its command line.
struct Cycles {
    /// `-n` timed iterations per measurement (20 by default).
    iters: f64,
    /// `-m` operations aggregated per iteration (1 by default).
    agg: f64,
}

/// `Some` when the launcher runs an nccl-tests binary with `-N` (or
/// `--run_cycles`) above 1. Only words after the binary are read: mpirun
/// has a `-N` of its own.
fn cycles_of(argv: &[String]) -> Option<Cycles> {
    let at = argv.iter().position(|w| {
        let base = w.rsplit('/').next().unwrap_or(w);
        base.ends_with("_perf")
    })?;
    let tool = &argv[at + 1..];
    let value = |short: &str, long: &str| {
        flag_value(tool, short)
            .or_else(|| flag_value(tool, long))
            .or_else(|| {
                tool.iter()
                    .find_map(|w| w.strip_prefix(long).and_then(|r| r.strip_prefix('=')))
            })
            .and_then(|v| v.parse::<f64>().ok())
    };
    let cycles = value("-N", "--run_cycles")?;
    (cycles > 1.0).then(|| Cycles {
        iters: value("-n", "--iters").unwrap_or(20.0).max(1.0),
        agg: value("-m", "--agg_iters").unwrap_or(1.0).max(1.0),
    })
}

/// The series of an nccl-tests `-N` run: for every row at `bytes` (one per
/// cycle at a fixed size), two points, its out-of-place then its in-place
/// run, each valued by `pick` (an outage inside either shows). nccl-tests
/// prints no timestamps; a run took its `time` column (µs per operation)
/// × iterations × aggregation, so the runs are laid back to back ending at
/// the launcher's `ended_s`. Counting back from the end skips NCCL's
/// start-up (seconds of bootstrap and communicator init) but not the
/// teardown after the last row (typically well under a second) nor the
/// untimed `-c` check runs: points may sit that much late.
fn cycle_series(
    rows: &[nccl::NcclRow],
    bytes: u64,
    c: &Cycles,
    ended_s: f64,
    pick: &dyn Fn(&nccl::NcclResult) -> Option<f64>,
) -> Vec<(f64, f64)> {
    let secs = |o: &nccl::NcclResult| o.time_us.unwrap_or(0.0) * c.iters * c.agg * 1e-6;
    let mut t = ended_s;
    let mut out = Vec::new();
    for r in rows.iter().rev() {
        for o in [&r.in_place, &r.out_of_place].into_iter().flatten() {
            if r.bytes == bytes {
                if let Some(v) = pick(o) {
                    out.push((t, v));
                }
            }
            t -= secs(o);
        }
    }
    out.reverse();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::Invocation;

    fn iperf_step_at(cmds: &StepCommands, outs: &[InvocationOutput]) -> Measurement {
        iperf_step(cmds, outs, Some(100.0))
    }

    fn iperf_fixture(name: &str) -> String {
        let path = format!(
            "{}/tests/fixtures/iperf3/{name}",
            env!("CARGO_MANIFEST_DIR")
        );
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    fn inv(host: &str, line: &str, role: Role) -> Invocation {
        Invocation {
            host: host.into(),
            argv: line.split(' ').map(String::from).collect(),
            env: Vec::new(),
            role,
            timeout: std::time::Duration::from_secs(60),
            at: std::time::Duration::ZERO,
        }
    }

    fn out(stdout: &str, stderr: &str, exit: i32) -> InvocationOutput {
        InvocationOutput {
            stdout: stdout.into(),
            stderr: stderr.into(),
            exit: Some(exit),
            failure: None,
            started_s: 0.0,
            ended_s: 3.0,
        }
    }

    /// One iperf3 pair (or several) on port 5201 upwards, servers first.
    fn iperf_pairs(n: usize) -> StepCommands {
        let mut invocations = Vec::new();
        for i in 0..n {
            invocations.push(inv(
                "gpu002",
                &format!("iperf3 -s -1 -p {} -B 10.0.0.2", 5201 + i),
                Role::Server,
            ));
        }
        for i in 0..n {
            invocations.push(inv(
                &format!("gpu00{}", 3 + i),
                &format!(
                    "iperf3 -c 10.0.0.2 -B 10.0.0.{} -p {} -t 3 -P 1 -i 1 -J --connect-timeout 5000",
                    3 + i,
                    5201 + i
                ),
                Role::Client,
            ));
        }
        StepCommands { invocations }
    }

    #[test]
    fn iperf_pair_reads_the_receiver_total_and_keeps_the_series() {
        let cmds = iperf_pairs(1);
        let outs = [
            out(
                &iperf_fixture("iperf3-3.12-server-P1-i1-t3-loopback.txt"),
                "",
                0,
            ),
            out(
                &iperf_fixture("iperf3-3.12-J-tcp-P1-i1-t3-loopback.json"),
                "",
                0,
            ),
        ];
        let m = iperf_step_at(&cmds, &outs);
        assert!(m.failure.is_none(), "{:?}", m.failure);
        assert!((m.value.unwrap() - 19.916295333238907).abs() < 1e-9);
        assert_eq!(m.details["iperf3_version"], "iperf 3.12");
        let c = &m.details["clients"][0];
        assert_eq!(c["host"], "gpu003");
        assert_eq!(c["to"], "10.0.0.2 port 5201");
        assert_eq!(c["retransmits"], 37);
        assert_eq!(c["intervals"].as_array().unwrap().len(), 3);
        assert_eq!(c["intervals"][1]["start_s"], 1.000275);
    }

    #[test]
    fn iperf_incast_sums_the_receivers() {
        let cmds = iperf_pairs(2);
        let outs = [
            out("", "", 0),
            out("", "", 0),
            out(
                &iperf_fixture("iperf3-3.12-J-tcp-P1-i1-t3-loopback.json"),
                "",
                0,
            ),
            out(
                &iperf_fixture("iperf3-3.12-J-tcp-P4-i1-t3-loopback.json"),
                "",
                0,
            ),
        ];
        let m = iperf_step_at(&cmds, &outs);
        let want = 19.916295333238907 + 23.154521896469067;
        assert!((m.value.unwrap() - want).abs() < 1e-9, "{:?}", m.value);
        assert_eq!(m.details["clients"].as_array().unwrap().len(), 2);
    }

    #[test]
    fn iperf_failures_name_the_host_and_the_target() {
        let cmds = iperf_pairs(1);
        let refused = [
            out("", "", 0),
            out(
                &iperf_fixture("iperf3-3.12-J-connection-refused-exit0.json"),
                "",
                0,
            ),
        ];
        let f = iperf_step_at(&cmds, &refused).failure.unwrap();
        assert_eq!(
            (f.kind.as_str(), f.class.as_str()),
            ("connection_refused", "infrastructure")
        );
        assert_eq!(
            f.message,
            "gpu003 (to 10.0.0.2 port 5201): iperf3: unable to connect to server: Connection refused"
        );
        let no_route = [
            out("", "iperf3: interrupt - the server has terminated\n", 1),
            out("{\"start\":{},\"intervals\":[],\"end\":{},\"error\":\"unable to connect to server: No route to host\"}", "", 1),
        ];
        let f = iperf_step_at(&cmds, &no_route).failure.unwrap();
        assert_eq!((f.kind.as_str(), f.class.as_str()), ("no_route", "fabric"));
        // A server whose port was taken: the client measured something else.
        let busy = [
            out(
                "",
                &iperf_fixture("iperf3-3.12-server-address-in-use.stderr.txt"),
                1,
            ),
            out(
                &iperf_fixture("iperf3-3.12-J-tcp-P1-i1-t3-loopback.json"),
                "",
                0,
            ),
        ];
        let m = iperf_step_at(&cmds, &busy);
        assert_eq!(m.value, None);
        let f = m.failure.unwrap();
        assert_eq!(f.kind, "server_busy");
        assert!(
            f.message
                .starts_with("gpu002: iperf3: unable to start listener"),
            "{}",
            f.message
        );
        // The harness killed a client mid-run: a hang after data moved.
        let mut killed = out(
            &iperf_fixture("iperf3-3.12-J-client-sigterm-at-2.5s.json"),
            "",
            1,
        );
        killed.exit = None;
        killed.failure = Some(ExecFailure::TimedOut("killed at its timeout".into()));
        let f = iperf_step_at(&cmds, &[out("", "", 0), killed])
            .failure
            .unwrap();
        assert_eq!((f.kind.as_str(), f.class.as_str()), ("timeout", "fabric"));
        // Not iperf3 at all.
        let f = iperf_step_at(&cmds, &[out("", "", 0), out("hello", "", 0)])
            .failure
            .unwrap();
        assert_eq!(f.kind, "unrecognised");
        assert!(
            f.message.contains("is not iperf3 -J output"),
            "{}",
            f.message
        );
    }

    #[test]
    fn an_impossible_rate_is_unrecognised_and_no_series() {
        let cmds = iperf_pairs(1);
        let text = iperf_fixture("iperf3-3.12-J-tcp-P1-i1-t3-loopback.json");
        let outs = [out("", "", 0), out(&text, "", 0)];
        // The loopback run reads about 20 Gb/s: possible on 100 Gb/s, not on 10.
        assert!(iperf_step(&cmds, &outs, Some(100.0)).failure.is_none());
        let m = iperf_step(&cmds, &outs, Some(10.0));
        let f = m.failure.unwrap();
        assert_eq!(
            (f.kind.as_str(), f.class.as_str()),
            ("unrecognised", "infrastructure")
        );
        assert!(
            f.message.contains("is not a possible bandwidth"),
            "{}",
            f.message
        );
        assert_eq!(m.value, None);
        assert!(m.series.is_empty(), "{:?}", m.series);
    }

    #[test]
    fn sum_series_uses_the_first_clients_grid_and_drops_uncovered_edges() {
        // Client b starts 0.5 s later: its intervals straddle a's.
        let a: Spans = vec![(0.0, 1.0, 10.0), (1.0, 2.0, 10.0), (2.0, 3.0, 4.0)];
        let b: Spans = vec![(0.5, 1.5, 2.0), (1.5, 2.5, 6.0), (2.5, 3.5, 6.0)];
        let s = sum_series(&[Vec::new(), a.clone(), b]);
        // [0,1]: b covers only half of it, dropped. [1,2]: 10 + (2+6)/2.
        // [2,3]: 4 + 6.
        assert_eq!(s, vec![(2.0, 14.0), (3.0, 10.0)]);
        // One client: its own series.
        assert_eq!(sum_series(&[a]), vec![(1.0, 10.0), (2.0, 10.0), (3.0, 4.0)]);
        assert!(sum_series(&[]).is_empty());
    }

    #[test]
    fn iperf_incast_series_sums_the_clients_intervals() {
        let cmds = iperf_pairs(2);
        let mut c1 = out(
            &iperf_fixture("iperf3-3.12-J-tcp-P1-i1-t3-loopback.json"),
            "",
            0,
        );
        let mut c2 = out(
            &iperf_fixture("iperf3-3.12-J-tcp-P4-i1-t3-loopback.json"),
            "",
            0,
        );
        c1.started_s = 10.0;
        c2.started_s = 10.0;
        let outs = [out("", "", 0), out("", "", 0), c1.clone(), c2.clone()];
        let m = iperf_step_at(&cmds, &outs);
        let one = iperf_step_at(&iperf_pairs(1), &[out("", "", 0), c1]);
        let other = iperf_step_at(&iperf_pairs(1), &[out("", "", 0), c2]);
        assert_eq!(one.series.len(), 3, "{:?}", one.series);
        // Interval ends on the transport clock: the client's start plus
        // iperf3's own `end`.
        assert!(
            (one.series[0].0 - 11.000275).abs() < 1e-3,
            "{:?}",
            one.series
        );
        assert!(m.series.len() >= 2, "{:?}", m.series);
        for (t, v) in &m.series {
            let at = |s: &[(f64, f64)]| s.iter().find(|p| (p.0 - t).abs() < 1e-9).map(|p| p.1);
            if let (Some(x), Some(y)) = (at(&one.series), at(&other.series)) {
                assert!((v - (x + y)).abs() < 0.05 * v, "{v} vs {x} + {y}");
            }
        }
    }

    #[test]
    fn nccl_cycles_lay_runs_back_to_back_from_the_end() {
        let argv: Vec<String> = "mpirun -N 2 all_reduce_perf -b 1G -e 1G -n 10 -N 3"
            .split(' ')
            .map(String::from)
            .collect();
        let c = cycles_of(&argv).unwrap();
        assert_eq!((c.iters, c.agg), (10.0, 1.0));
        // mpirun's own -N is not nccl-tests'.
        let argv: Vec<String> = "mpirun -N 2 all_reduce_perf -b 1G -e 1G"
            .split(' ')
            .map(String::from)
            .collect();
        assert!(cycles_of(&argv).is_none());
        let run = |us: f64, bw: f64| nccl::NcclResult {
            time_us: Some(us),
            algbw_gbs: Some(bw / 2.0),
            busbw_gbs: Some(bw),
            wrong: None,
            error: None,
            error_flagged: false,
        };
        let row = |oop: f64| nccl::NcclRow {
            bytes: 1 << 30,
            count: None,
            dtype: None,
            redop: None,
            root: None,
            out_of_place: Some(run(100_000.0, oop)),
            in_place: Some(run(100_000.0, oop)),
        };
        let rows = [row(40.0), row(10.0), row(40.0)];
        let pick = |o: &nccl::NcclResult| o.busbw_gbs;
        // Each run: 100 ms × 10 = 1 s.
        let s = cycle_series(&rows, 1 << 30, &c, 20.0, &pick);
        let t: Vec<f64> = s.iter().map(|p| p.0).collect();
        assert_eq!(t, vec![15.0, 16.0, 17.0, 18.0, 19.0, 20.0]);
        assert_eq!(s[2].1, 10.0);
    }

    #[test]
    fn tool_name_skips_wrappers() {
        let argv: Vec<String> = "numactl --cpunodebind=0 --membind=0 ib_write_bw -d mlx5_0"
            .split(' ')
            .map(String::from)
            .collect();
        assert_eq!(tool_name(&argv), "ib_write_bw");
        let argv: Vec<String> = "timeout -k 5 60 /usr/bin/ib_read_lat"
            .split(' ')
            .map(String::from)
            .collect();
        assert_eq!(tool_name(&argv), "ib_read_lat");
        let argv: Vec<String> =
            "timeout --signal=INT --preserve-status 13 stdbuf -oL numactl --cpunodebind=0 ib_write_bw"
                .split(' ')
                .map(String::from)
                .collect();
        assert_eq!(tool_name(&argv), "ib_write_bw");
    }
}
