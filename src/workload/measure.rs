//! From what a step's commands printed to one measurement: a value for the
//! test's metric, or a classified failure. Parsing only: this module never
//! learns anything from how the commands ran except their text, exit status
//! and whether the transport killed them.

use serde_json::json;

use crate::config::suite::Metric;
use crate::exec::{ExecFailure, InvocationOutput, Role, StepCommands};
use crate::report::events::FailureRecord;
use crate::workload::failure::{Failure, FailureClass};
use crate::workload::nccl::parse as nccl;
use crate::workload::perftest::parse as perftest;

#[derive(Debug, Clone, Default)]
pub struct Measurement {
    pub value: Option<f64>,
    pub failure: Option<FailureRecord>,
    pub details: serde_json::Value,
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
    failures.sort_by_key(|f| f.class != "fabric");
    m.failure = failures.into_iter().next();
    if m.failure.is_none() && clients > 0 {
        m.value = Some(total);
    }
    m.details = json!({ "clients": facts });
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
