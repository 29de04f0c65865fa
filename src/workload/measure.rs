//! From what a step's commands printed to one measurement: a value for the
//! test's metric, or a classified failure. Parsing only: this module never
//! learns anything from how the commands ran except their text, exit status
//! and whether the transport killed them.

use serde_json::json;

use crate::config::suite::Metric;
use crate::exec::{ExecFailure, InvocationOutput, Role, StepCommands};
use crate::report::events::FailureRecord;
use crate::workload::failure::{Failure, FailureClass};
use crate::workload::iperf::parse as iperf;
use crate::workload::nccl::parse as nccl;
use crate::workload::perftest::parse as perftest;

#[derive(Debug, Clone, Default)]
pub struct Measurement {
    pub value: Option<f64>,
    pub failure: Option<FailureRecord>,
    pub details: serde_json::Value,
    /// `(end of interval, value)` on the transport's clock, in the metric's unit.
    pub series: Vec<(f64, f64)>,
}

fn record(f: &Failure, host: &str) -> FailureRecord {
    FailureRecord {
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

fn infra(kind: &str, message: String) -> FailureRecord {
    FailureRecord {
        kind: kind.into(),
        class: "infrastructure".into(),
        message,
    }
}

/// A transport-level failure that leaves nothing to parse.
fn exec_failure(f: &ExecFailure, host: &str, argv0: &str) -> Option<FailureRecord> {
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
fn first_failure(mut failures: Vec<FailureRecord>) -> Option<FailureRecord> {
    let rank = |f: &FailureRecord| match f.kind.as_str() {
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
        if w == "numactl" || w == "timeout" || w == "env" || w == "setsid" {
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
pub fn perftest_step(
    cmds: &StepCommands,
    outs: &[InvocationOutput],
    metric: Metric,
) -> Measurement {
    let mut m = Measurement::default();
    let mut total = 0.0;
    let mut clients = 0;
    let mut facts = Vec::new();
    // Fabric failures win over infrastructure ones: they are the finding.
    let mut failures: Vec<FailureRecord> = Vec::new();
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
        };
        let text = text_of(out);
        match perftest::parse(&text, &opts) {
            Ok(report) => {
                if let Some(e) = &report.error {
                    failures.push(record(e, &inv.host));
                    continue;
                }
                if inv.role == Role::Client {
                    clients += 1;
                    match perftest_metric(&report, metric) {
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
                    facts.push(json!({
                        "host": inv.host, "tool": report.tool, "unit": report.unit, "link_type": report.link_type,
                        "gid_index": report.gid_index, "mtu": report.mtu, "qps": report.qps,
                        "rows": report.rows.len(), "warnings": report.warnings,
                    }));
                }
            }
            Err(e) if out.exit == Some(0) || inv.role == Role::Client => failures.push(infra(
                "unrecognised",
                format!(
                    "{}: output of `{tool}` (exit {:?}) is not perftest output: {e}",
                    inv.host, out.exit
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
    m
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
/// `details.clients[].intervals` for a recovery analysis.
pub fn iperf_step(cmds: &StepCommands, outs: &[InvocationOutput]) -> Measurement {
    let mut m = Measurement::default();
    let mut total = 0.0;
    let mut clients = 0;
    let mut facts = Vec::new();
    let mut version = None;
    // Fabric failures win over infrastructure ones: they are the finding.
    let mut failures: Vec<FailureRecord> = Vec::new();
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
        };
        match iperf::parse(&text, &opts) {
            Ok(report) => {
                version = version.or(report.version.clone());
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
                    "{} (to {to}): output of `{tool}` (exit {:?}) is not iperf3 -J output: {e}",
                    inv.host, out.exit
                ),
            )),
        }
    }
    m.failure = first_failure(failures);
    if m.failure.is_none() && clients > 0 {
        m.value = Some(total);
    }
    m.details = json!({ "iperf3_version": version, "clients": facts });
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
                    "{}: `{tool}` (exit {:?}) printed no nccl-tests result: {e}",
                    inv.host, out.exit
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
    m.value = last.out_of_place.as_ref().and_then(|o| match metric {
        Metric::AlgbwGbs => o.algbw_gbs,
        _ => o.busbw_gbs,
    });
    if m.value.is_none() {
        m.failure = Some(infra(
            "metric_missing",
            format!("{}: no {} at {} bytes", inv.host, metric.name(), last.bytes),
        ));
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::Invocation;

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
        let m = iperf_step(&cmds, &outs);
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
        let m = iperf_step(&cmds, &outs);
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
        let f = iperf_step(&cmds, &refused).failure.unwrap();
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
        let f = iperf_step(&cmds, &no_route).failure.unwrap();
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
        let m = iperf_step(&cmds, &busy);
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
        let f = iperf_step(&cmds, &[out("", "", 0), killed])
            .failure
            .unwrap();
        assert_eq!((f.kind.as_str(), f.class.as_str()), ("timeout", "fabric"));
        // Not iperf3 at all.
        let f = iperf_step(&cmds, &[out("", "", 0), out("hello", "", 0)])
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
    }
}
