//! Parsers for iperf3 output: the client's `-J` JSON and the server's text.
//!
//! The client's value is the receiver-side goodput, `end.sum_received`
//! (`end.sum` in UDP-shaped output, which has no `sum_received`), in decimal
//! Gb/s; the sender's rate, the retransmits and the `-i` interval series come
//! with it so that a recovery analysis can read the time series. Nothing here
//! judges a result: thresholds live in `score`.
//!
//! What iperf3 3.x really prints (see `tests/fixtures/iperf3/`):
//! - `-J` collects everything in memory and prints one JSON object at exit,
//!   so a client killed with SIGKILL prints nothing, and one stopped with
//!   SIGTERM prints the whole object with `"error": "interrupt - the client
//!   has terminated"` and a zero `sum_received` (the results exchange never
//!   happened). Truncated JSON is still possible when the pipe is cut.
//! - A failure before any data is an object with empty `intervals`, an empty
//!   `end` and `"error"`; iperf3 3.12 exits 0 in that case, so the exit
//!   status proves nothing.
//! - The words of an error changed across versions: 3.1 prefixed `error - `
//!   inside the JSON; 3.13–3.16 said `unable to connect to server - server may
//!   have stopped running or use a different port, firewall issue, etc.:`
//!   before the system's reason. The reason (`Connection refused`, `No route
//!   to host`, …) is what classifies.
//! - A transport that merges stderr after stdout may put text before or after
//!   the object; that text is kept in `warnings` and searched for errors.
//! - `-O N` marks the first intervals `"omitted": true` and restarts their clock.

use serde::Serialize;
use serde_json::Value;

use crate::plausible::{self, Ceiling, Impossible, Quantity};
use crate::workload::failure::{classify_common_line, Failure, FailureKind};
use crate::workload::text::{excerpt, ParseError};

const TOOL: &str = "iperf3";

/// How to parse.
#[derive(Debug, Clone, Default)]
pub struct IperfParseOptions {
    /// The harness killed the client at its timeout.
    pub killed_by_timeout: bool,
    /// The link's rate in one direction, Gb/s: a rate above
    /// [`plausible::LINK_MARGIN`] × this is impossible; without it the
    /// ceiling is [`plausible::PORT_CEILING_GBPS`].
    pub link_gbps: Option<f64>,
}

/// One `-i` report: `intervals[].sum`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Interval {
    /// Seconds from the start of the test (restarting after `-O` omitted ones).
    pub start_s: f64,
    pub end_s: f64,
    pub gbps: f64,
    /// TCP sender only.
    pub retransmits: Option<u64>,
    /// Inside the `-O` warm-up; not part of the totals.
    pub omitted: bool,
}

/// The parsed `-J` output of one iperf3 client. JSON field names are a public
/// interface (they land in results.jsonl).
#[derive(Debug, Clone, Default, Serialize)]
pub struct IperfReport {
    /// `iperf 3.12` as printed in `start.version`.
    pub version: Option<String>,
    /// `TCP` or `UDP`, from `start.test_start.protocol`.
    pub protocol: Option<String>,
    pub streams: Option<u64>,
    /// Receiver-side goodput, Gb/s.
    pub received_gbps: Option<f64>,
    pub received_bytes: Option<u64>,
    /// Sender-side rate, Gb/s (`end.sum_sent`).
    pub sent_gbps: Option<f64>,
    pub sent_bytes: Option<u64>,
    /// `end.sum_sent.retransmits` (TCP only).
    pub retransmits: Option<u64>,
    /// Where `received_gbps` came from: `sum_received` or `sum` (UDP).
    pub value_source: Option<String>,
    pub intervals: Vec<Interval>,
    pub error: Option<Failure>,
    /// Text around the JSON object and other oddities.
    pub warnings: Vec<String>,
    /// Values no link could have produced (see [`crate::plausible`]). Their
    /// intervals are not in `intervals` and their totals are null; `error`
    /// is `unrecognised` with [`plausible::summary`] of them. Not in the JSON:
    /// `error` says it there.
    #[serde(skip)]
    pub impossible: Vec<Impossible>,
}

impl IperfReport {
    /// Whether any data moved (an interval with bytes), for a timeout's class.
    pub fn data_moved(&self) -> bool {
        self.intervals.iter().any(|i| i.gbps > 0.0)
    }
}

/// What an iperf3 server (`-s -1`, text output) said.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ServerReport {
    /// The port of `Server listening on PORT`, when it got that far.
    pub listening_port: Option<u16>,
    pub error: Option<Failure>,
}

/// Classifies one iperf3 error message, as printed in `"error"` or after
/// `iperf3: error - ` (either form is accepted). The message is kept.
pub fn classify_error(message: &str) -> Failure {
    let m = message.trim();
    let m = m.strip_prefix("iperf3:").map(str::trim).unwrap_or(m);
    let m = m.strip_prefix("error - ").unwrap_or(m);
    let l = m.to_ascii_lowercase();
    let has = |p: &str| l.contains(p);
    let kind = if has("parameter error") {
        FailureKind::UsageError
    } else if has("connection refused") {
        FailureKind::ConnectionRefused
    } else if has("no route to host")
        || has("network is unreachable")
        || has("host is unreachable")
        || (has("unable to connect") && (has("timed out") || has("timeout")))
    {
        FailureKind::NoRoute
    } else if has("server is busy")
        || has("address already in use")
        || has("unable to start listener")
    {
        FailureKind::ServerBusy
    } else if has("unable to create a new stream") {
        FailureKind::ResourceCreation
    } else {
        FailureKind::Unrecognised
    };
    Failure::new(kind, format!("iperf3: {}", one_line(m, 300)))
}

/// Whether an error is iperf3 reporting that it was stopped by a signal.
fn is_interrupt(message: &str) -> bool {
    message.to_ascii_lowercase().contains("interrupt - the")
}

/// An error line iperf3 printed as text (stderr, or a run without `-J`).
fn text_error(line: &str) -> Option<&str> {
    let t = line.trim();
    let rest = t.strip_prefix("iperf3:")?.trim();
    if rest.starts_with("error")
        || rest.starts_with("parameter error")
        || rest.starts_with("interrupt")
    {
        Some(rest)
    } else {
        None
    }
}

/// The first failure named by text lines: an iperf3 error, a missing binary,
/// a launcher that could not start it.
fn error_in_text(text: &str) -> Option<Failure> {
    for line in text.lines() {
        if let Some(e) = text_error(line) {
            return Some(classify_error(e));
        }
        if let Some(k) = classify_common_line(line) {
            return Some(Failure::new(k, excerpt(line, 300)));
        }
    }
    None
}

/// `excerpt` on one line: runs of whitespace (newlines included) become one space.
fn one_line(text: &str, max: usize) -> String {
    excerpt(&text.split_whitespace().collect::<Vec<_>>().join(" "), max)
}

fn num(v: &Value, key: &str) -> Option<f64> {
    v.get(key).and_then(Value::as_f64).filter(|x| x.is_finite())
}

fn count(v: &Value, key: &str) -> Option<u64> {
    v.get(key).and_then(|x| {
        x.as_u64().or_else(|| {
            x.as_f64()
                .filter(|f| *f >= 0.0 && f.is_finite())
                .map(|f| f as u64)
        })
    })
}

fn gbps(v: &Value) -> Option<f64> {
    num(v, "bits_per_second").map(|b| b / 1e9)
}

/// The first value of a `sum` object at `at` that cannot be a measurement:
/// a negative or non-finite number, or a rate above `ceiling`. iperf3's
/// cJSON writes NaN and infinity as `null`, so a `null` where a number
/// belongs counts as not finite.
fn sum_impossible(sum: &Value, at: &str, ceiling: Ceiling) -> Option<Impossible> {
    const FIELDS: [(&str, &str); 5] = [
        ("start", "time in seconds"),
        ("end", "time in seconds"),
        ("bytes", "byte count"),
        ("bits_per_second", "bandwidth"),
        ("retransmits", "retransmit count"),
    ];
    for (key, what) in FIELDS {
        let Some(v) = sum.get(key) else { continue };
        let why = match v {
            Value::Null => Some("not a finite number (null)".to_string()),
            Value::Number(n) => match n.as_f64() {
                Some(b) if key == "bits_per_second" && b >= 0.0 => {
                    Quantity::Bandwidth(ceiling).check(b / 1e9)
                }
                Some(x) => Quantity::Amount.check(x),
                None => None,
            },
            _ => None,
        };
        if let Some(why) = why {
            return Some(Impossible::new(at, format!("{key} {v}"), what, why));
        }
    }
    None
}

/// Parses what an iperf3 client printed with `-J` (stdout, possibly with its
/// stderr after it).
///
/// A recognised failure is `Ok` with `error` set. Text that holds neither an
/// iperf3 JSON object nor a known failure is an `Err`; so is a JSON object
/// cut short, unless the harness killed the client (then it is a timeout).
pub fn parse(text: &str, opts: &IperfParseOptions) -> Result<IperfReport, ParseError> {
    let mut report = IperfReport::default();
    let Some(start) = json_start(text) else {
        if let Some(e) = error_in_text(text) {
            report.error = Some(timeout_or(e, false, opts));
            return Ok(report);
        }
        if opts.killed_by_timeout {
            report.error = Some(Failure::timeout(
                false,
                "iperf3 was killed at its timeout before it printed anything",
            ));
            return Ok(report);
        }
        return Err(ParseError::not_recognised(
            TOOL,
            if text.trim().is_empty() {
                "empty output".to_string()
            } else {
                format!("no JSON object in \"{}\"", one_line(text, 120))
            },
        ));
    };
    let before = text[..start].trim();
    if !before.is_empty() {
        report
            .warnings
            .push(format!("text before the JSON: {}", one_line(before, 200)));
    }
    let mut stream = serde_json::Deserializer::from_str(&text[start..]).into_iter::<Value>();
    let value = match stream.next() {
        Some(Ok(v)) => v,
        Some(Err(e)) => {
            // Cut short (a killed process, a broken pipe) or not JSON at all.
            let partial = &text[start..];
            let moved = partial.contains("\"bits_per_second\"");
            if let Some(e) = error_in_text(before).or_else(|| error_in_text(partial)) {
                report.error = Some(timeout_or(e, moved, opts));
                return Ok(report);
            }
            if opts.killed_by_timeout {
                report.error = Some(Failure::timeout(
                    moved,
                    format!("iperf3 was killed at its timeout; its JSON ends early ({e})"),
                ));
                return Ok(report);
            }
            return Err(ParseError::malformed(
                TOOL,
                format!("the JSON object is cut short or broken: {e}"),
            ));
        }
        None => return Err(ParseError::not_recognised(TOOL, "empty output")),
    };
    let after = text[start + stream.byte_offset()..].trim();
    if !after.is_empty() {
        report
            .warnings
            .push(format!("text after the JSON: {}", one_line(after, 200)));
    }
    let Some(obj) = value.as_object() else {
        return Err(ParseError::not_recognised(
            TOOL,
            "the JSON is not an object",
        ));
    };
    if !["start", "intervals", "end", "error"]
        .iter()
        .any(|k| obj.contains_key(*k))
    {
        return Err(ParseError::not_recognised(
            TOOL,
            "the JSON object has none of start, intervals, end, error",
        ));
    }
    let ceiling = Ceiling::new(opts.link_gbps, 1, 1);
    read_object(&value, &mut report, ceiling);
    let moved = report.data_moved();
    let json_error = value
        .get("error")
        .and_then(Value::as_str)
        .map(str::to_string);
    report.error = match json_error {
        Some(e) => Some(timeout_or(classify_error(&e), moved, opts)),
        None => error_in_text(before)
            .or_else(|| error_in_text(after))
            .map(|e| timeout_or(e, moved, opts)),
    };
    if report.error.is_none() && opts.killed_by_timeout {
        report.error = Some(Failure::timeout(
            moved,
            "iperf3 was killed at its timeout after it printed its results",
        ));
    }
    // A value no link could produce makes the report unrecognised; the
    // error it would have had is kept as a warning.
    if let Some(why) = plausible::summary(&report.impossible) {
        if let Some(e) = report.error.take() {
            report
                .warnings
                .push(format!("also: {} ({})", e.message, e.kind.as_str()));
        }
        report.error = Some(Failure::new(FailureKind::Unrecognised, why));
    }
    Ok(report)
}

/// An interrupt by the harness at its timeout is a timeout; every other
/// failure keeps its own kind.
fn timeout_or(f: Failure, moved: bool, opts: &IperfParseOptions) -> Failure {
    if opts.killed_by_timeout && (is_interrupt(&f.message) || f.kind == FailureKind::Unrecognised) {
        Failure::timeout(moved, format!("killed at its timeout: {}", f.message))
    } else {
        f
    }
}

/// Byte offset of the JSON object: the first line that starts with `{`
/// (iperf3 prints the brace at the start of a line), else the first `{`.
fn json_start(text: &str) -> Option<usize> {
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        if line.trim_start().starts_with('{') {
            return Some(offset + (line.len() - line.trim_start().len()));
        }
        offset += line.len();
    }
    text.find('{')
}

fn read_object(v: &Value, r: &mut IperfReport, ceiling: Ceiling) {
    let start = v.get("start");
    r.version = start
        .and_then(|s| s.get("version"))
        .and_then(Value::as_str)
        .map(str::to_string);
    let test = start.and_then(|s| s.get("test_start"));
    r.protocol = test
        .and_then(|t| t.get("protocol"))
        .and_then(Value::as_str)
        .map(str::to_string);
    r.streams = test.and_then(|t| count(t, "num_streams"));
    if let Some(list) = v.get("intervals").and_then(Value::as_array) {
        for (i, iv) in list.iter().enumerate() {
            let Some(sum) = iv.get("sum") else {
                r.warnings.push(format!("intervals[{i}] has no sum"));
                continue;
            };
            if let Some(e) = sum_impossible(sum, &format!("intervals[{i}].sum"), ceiling) {
                r.impossible.push(e);
                continue;
            }
            match (num(sum, "start"), num(sum, "end"), gbps(sum)) {
                (Some(start_s), Some(end_s), Some(g)) => r.intervals.push(Interval {
                    start_s,
                    end_s,
                    gbps: g,
                    retransmits: count(sum, "retransmits"),
                    omitted: sum.get("omitted").and_then(Value::as_bool).unwrap_or(false),
                }),
                _ => r.warnings.push(format!(
                    "intervals[{i}].sum lacks start, end or bits_per_second"
                )),
            }
        }
    }
    let end = v.get("end");
    let mut total = |key: &str| {
        let sum = end.and_then(|e| e.get(key))?;
        match sum_impossible(sum, &format!("end.{key}"), ceiling) {
            Some(e) => {
                r.impossible.push(e);
                None
            }
            None => Some(sum),
        }
    };
    let sent = total("sum_sent");
    let received = total("sum_received");
    let udp_sum = total("sum");
    r.sent_gbps = sent.and_then(gbps);
    r.sent_bytes = sent.and_then(|s| count(s, "bytes"));
    r.retransmits = sent.and_then(|s| count(s, "retransmits"));
    if let Some(g) = received.and_then(gbps) {
        r.received_gbps = Some(g);
        r.received_bytes = received.and_then(|s| count(s, "bytes"));
        r.value_source = Some("sum_received".into());
    } else if let Some(g) = udp_sum.and_then(gbps) {
        r.received_gbps = Some(g);
        r.received_bytes = udp_sum.and_then(|s| count(s, "bytes"));
        r.value_source = Some("sum".into());
    }
}

/// Parses what an iperf3 server (`-s -1`, text) printed: whether it listened,
/// and an error of its own. Its signal messages (`interrupt - the server has
/// terminated` when the harness stops an idle server, `the client has
/// terminated` or `unexpectedly closed the connection` when its client died)
/// are not errors of the server: the client's output tells what happened.
pub fn parse_server(text: &str) -> ServerReport {
    let mut r = ServerReport::default();
    for line in text.lines() {
        let t = line.trim();
        if let Some(rest) = t.strip_prefix("Server listening on ") {
            r.listening_port = rest.split_whitespace().next().and_then(|p| p.parse().ok());
            continue;
        }
        if r.error.is_some() {
            continue;
        }
        if let Some(e) = text_error(t) {
            if !is_interrupt(e) {
                r.error = Some(classify_error(e));
            }
        } else if let Some(k) = classify_common_line(t) {
            r.error = Some(Failure::new(k, excerpt(t, 300)));
        }
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(m: &str) -> FailureKind {
        classify_error(m).kind
    }

    #[test]
    fn errors_are_classified_by_the_system_reason_in_every_version_s_words() {
        assert_eq!(
            kind("unable to connect to server: Connection refused"),
            FailureKind::ConnectionRefused
        );
        assert_eq!(
            kind("error - unable to connect to server: No route to host"),
            FailureKind::NoRoute
        );
        assert_eq!(
            kind("unable to connect to server - server may have stopped running or use a different port, firewall issue, etc.: Network is unreachable"),
            FailureKind::NoRoute
        );
        assert_eq!(
            kind("unable to connect to server: Connection timed out"),
            FailureKind::NoRoute
        );
        assert_eq!(
            kind("the server is busy running a test. try again later"),
            FailureKind::ServerBusy
        );
        assert_eq!(
            kind(
                "iperf3: error - unable to start listener for connections: Address already in use"
            ),
            FailureKind::ServerBusy
        );
        assert_eq!(
            kind("unable to create a new stream: Too many open files"),
            FailureKind::ResourceCreation
        );
        assert_eq!(
            kind("parameter error - invalid report interval (min = 0.1, max = 60 seconds)"),
            FailureKind::UsageError
        );
        assert_eq!(
            kind("control socket has closed unexpectedly"),
            FailureKind::Unrecognised
        );
        let f = classify_error("error - unable to connect to server: No route to host");
        assert_eq!(
            f.message,
            "iperf3: unable to connect to server: No route to host"
        );
    }

    #[test]
    fn an_error_object_is_a_failure_whatever_the_exit_status() {
        let text = "{\"start\":{\"connected\":[],\"version\":\"iperf 3.12\"},\"intervals\":[],\"end\":{},\"error\":\"unable to connect to server: Connection refused\"}";
        let r = parse(text, &IperfParseOptions::default()).unwrap();
        assert_eq!(r.error.unwrap().kind, FailureKind::ConnectionRefused);
        assert_eq!(r.version.as_deref(), Some("iperf 3.12"));
        assert!(r.received_gbps.is_none());
    }

    #[test]
    fn text_around_the_object_is_kept_and_searched() {
        let text = "warning: something\n{\"end\":{\"sum_received\":{\"bits_per_second\":2e9}}}\niperf3: error - the server is busy running a test. try again later\n";
        let r = parse(text, &IperfParseOptions::default()).unwrap();
        assert_eq!(r.received_gbps, Some(2.0));
        assert_eq!(r.warnings.len(), 2, "{:?}", r.warnings);
        assert_eq!(r.error.unwrap().kind, FailureKind::ServerBusy);
    }

    #[test]
    fn stderr_only_and_empty_outputs() {
        let r = parse(
            "iperf3: error - unable to connect to server: Connection refused\n",
            &IperfParseOptions::default(),
        )
        .unwrap();
        assert_eq!(r.error.unwrap().kind, FailureKind::ConnectionRefused);
        assert!(parse("", &IperfParseOptions::default()).is_err());
        let killed = IperfParseOptions {
            killed_by_timeout: true,
            ..Default::default()
        };
        let r = parse("", &killed).unwrap();
        let e = r.error.unwrap();
        assert_eq!(e.kind, FailureKind::Timeout);
        assert_eq!(
            e.class,
            crate::workload::failure::FailureClass::Infrastructure
        );
        assert_eq!(
            parse(
                "bash: iperf3: command not found\n",
                &IperfParseOptions::default()
            )
            .unwrap()
            .error
            .unwrap()
            .kind,
            FailureKind::MissingBinary
        );
    }

    #[test]
    fn a_cut_object_is_malformed_unless_the_harness_killed_it() {
        let text = "{\n\t\"start\":\t{\n\t\t\"version\":\t\"iperf 3.12\"\n\t},\n\t\"intervals\":\t[{\"sum\": {\"start\": 0, \"end\": 1, \"bits_per_second\": 1e9}}, {";
        assert!(matches!(
            parse(text, &IperfParseOptions::default()),
            Err(ParseError::Malformed { .. })
        ));
        let r = parse(
            text,
            &IperfParseOptions {
                killed_by_timeout: true,
                ..Default::default()
            },
        )
        .unwrap();
        let e = r.error.unwrap();
        assert_eq!(e.kind, FailureKind::Timeout);
        assert_eq!(e.class, crate::workload::failure::FailureClass::Fabric);
    }

    #[test]
    fn not_iperf_json() {
        assert!(parse("[1, 2]", &IperfParseOptions::default()).is_err());
        assert!(parse("{\"a\": 1}", &IperfParseOptions::default()).is_err());
        let e = parse("hello\nworld", &IperfParseOptions::default()).unwrap_err();
        assert_eq!(
            e.to_string(),
            "not iperf3 output: no JSON object in \"hello world\""
        );
    }

    #[test]
    fn server_lines() {
        let r = parse_server("-----------------------------------------------------------\nServer listening on 5207 (test #1)\n-----------------------------------------------------------\niperf3: interrupt - the server has terminated\n");
        assert_eq!(r.listening_port, Some(5207));
        assert_eq!(r.error, None);
        let r = parse_server("iperf3: error - unable to start listener for connections: Address already in use\niperf3: exiting\n");
        assert_eq!(r.error.unwrap().kind, FailureKind::ServerBusy);
        assert_eq!(r.listening_port, None);
    }
}
