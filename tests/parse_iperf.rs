//! iperf3 parsers against real outputs (`tests/fixtures/iperf3/`: captured
//! with iperf 3.12 over loopback on a build machine, copied from the shared
//! fixtures, or copied from public repositories; see `tests/fixtures/SOURCES.md`).
//! Expected values were read from the files by hand.

use rocegate::workload::failure::{FailureClass, FailureKind};
use rocegate::workload::iperf::parse::{
    parse, parse_server, Interval, IperfParseOptions, IperfReport,
};
use rocegate::workload::text::ParseError;

fn fixture(name: &str) -> String {
    let path = format!(
        "{}/tests/fixtures/iperf3/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    String::from_utf8_lossy(&bytes).into_owned()
}

fn client(name: &str) -> IperfReport {
    parse(&fixture(name), &IperfParseOptions::default()).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn killed(name: &str) -> IperfReport {
    parse(
        &fixture(name),
        &IperfParseOptions {
            killed_by_timeout: true,
            ..Default::default()
        },
    )
    .unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn close(a: Option<f64>, b: f64) -> bool {
    a.is_some_and(|a| (a - b).abs() <= 1e-9 * b.abs().max(1.0))
}

/// The interval series against `(start, end, bits_per_second / 1e9)` read from the file.
fn assert_series(r: &IperfReport, want: &[(f64, f64, f64)]) {
    assert_eq!(r.intervals.len(), want.len(), "{:?}", r.intervals);
    for (got, &(start, end, gbps)) in r.intervals.iter().zip(want) {
        assert_eq!((got.start_s, got.end_s), (start, end));
        assert!(close(Some(got.gbps), gbps), "{got:?} vs {gbps}");
    }
}

#[test]
fn tcp_one_stream_one_second_intervals() {
    let r = client("iperf3-3.12-J-tcp-P1-i1-t3-loopback.json");
    assert!(r.error.is_none(), "{:?}", r.error);
    assert_eq!(r.version.as_deref(), Some("iperf 3.12"));
    assert_eq!(r.protocol.as_deref(), Some("TCP"));
    assert_eq!(r.streams, Some(1));
    // end.sum_received.bits_per_second 19916295333.238907
    assert!(close(r.received_gbps, 19.9162953332389), "{r:?}");
    assert_eq!(r.received_bytes, Some(7469793280));
    assert_eq!(r.value_source.as_deref(), Some("sum_received"));
    // end.sum_sent: 19916534293.815006 b/s, 37 retransmits
    assert!(close(r.sent_gbps, 19.916534293815));
    assert_eq!(r.retransmits, Some(37));
    assert_series(
        &r,
        &[
            (0.0, 1.000275, 19.8545691191747),
            (1.000275, 2.00027, 20.21664650050679),
            (2.00027, 3.000439, 19.678445099794),
        ],
    );
    let retr: Vec<Option<u64>> = r.intervals.iter().map(|i| i.retransmits).collect();
    assert_eq!(retr, [Some(16), Some(10), Some(11)]);
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
}

#[test]
fn tcp_four_streams_are_summed_by_iperf3() {
    let r = client("iperf3-3.12-J-tcp-P4-i1-t3-loopback.json");
    assert!(r.error.is_none());
    assert_eq!(r.streams, Some(4));
    assert!(close(r.received_gbps, 23.1545218964691));
    assert!(close(r.sent_gbps, 23.1547841812307));
    assert_eq!(r.retransmits, Some(0));
    assert_series(
        &r,
        &[
            (0.0, 1.001083, 27.0239933721043),
            (1.001083, 2.000739, 21.5661408467304),
            (2.000739, 3.001523, 20.871270019944),
        ],
    );
}

#[test]
fn half_second_intervals() {
    let r = client("iperf3-3.12-J-tcp-P1-i0.5-t2-loopback.json");
    assert!(close(r.received_gbps, 19.5651270790492));
    assert_eq!(r.retransmits, Some(25));
    assert_eq!(r.intervals.len(), 4);
    assert_eq!(
        r.intervals[3],
        Interval {
            start_s: 1.500088,
            end_s: 2.000088,
            gbps: 19.73420032,
            retransmits: Some(9),
            omitted: false,
        }
    );
    assert!(close(Some(r.intervals[0].end_s), 0.500507));
}

#[test]
fn veth_run_from_the_lab() {
    let r = client("iperf3-J-tcp-2s-veth.json");
    assert!(close(r.received_gbps, 42.2770080387026));
    assert!(close(r.sent_gbps, 42.2777810421602));
    assert_eq!(r.retransmits, Some(3036));
    assert_series(
        &r,
        &[
            (0.0, 1.000138, 42.59776249925338),
            (1.000138, 2.000038, 41.9577222284665),
        ],
    );
}

#[test]
fn omitted_warm_up_intervals_are_marked_and_crlf_is_fine() {
    let r = client("iperf3-3.9-J-tcp-omit3-t10-cloudpilot-crlf.json");
    assert!(r.error.is_none());
    assert_eq!(r.version.as_deref(), Some("iperf 3.9"));
    assert!(close(r.received_gbps, 1.82278975143208));
    assert!(close(r.sent_gbps, 1.82348770485533));
    assert_eq!(r.retransmits, Some(752));
    assert_eq!(r.intervals.len(), 13);
    let omitted: Vec<bool> = r.intervals.iter().map(|i| i.omitted).collect();
    assert_eq!(&omitted[..4], [true, true, true, false]);
    assert!(omitted[3..].iter().all(|o| !o));
    // After the warm-up iperf3 restarts its clock.
    assert_eq!(r.intervals[3].start_s, 5.1e-05);
    assert!(close(Some(r.intervals[3].gbps), 1.87679330950607));
    assert!(close(Some(r.intervals[12].end_s), 9.999923));
}

#[test]
fn udp_output_falls_back_to_end_sum() {
    let r = client("iperf3-3.1.3-J-udp-selfhealing.json");
    assert!(r.error.is_none());
    assert_eq!(r.protocol.as_deref(), Some("UDP"));
    assert_eq!(r.value_source.as_deref(), Some("sum"));
    assert!(close(r.received_gbps, 0.834711189017002));
    assert_eq!(r.received_bytes, Some(81920000));
    assert_eq!(r.sent_gbps, None);
    assert_eq!(r.retransmits, None);
    assert_series(&r, &[(0.0, 0.785134, 0.834711189017002)]);
}

#[test]
fn connection_refused_is_an_error_object_with_exit_status_zero() {
    let r = client("iperf3-3.12-J-connection-refused-exit0.json");
    let e = r.error.expect("a failure");
    assert_eq!(e.kind, FailureKind::ConnectionRefused);
    assert_eq!(e.class, FailureClass::Infrastructure);
    assert_eq!(
        e.message,
        "iperf3: unable to connect to server: Connection refused"
    );
    assert_eq!(r.received_gbps, None);
    assert!(r.intervals.is_empty());
    // The same failure without -J is one line on stderr.
    let r = client("iperf3-3.12-connection-refused-text.stderr.txt");
    assert_eq!(r.error.unwrap().kind, FailureKind::ConnectionRefused);
}

#[test]
fn a_busy_server_is_an_infrastructure_error() {
    let r = client("iperf3-3.12-J-server-busy-exit0.json");
    let e = r.error.unwrap();
    assert_eq!(e.kind, FailureKind::ServerBusy);
    assert_eq!(e.class, FailureClass::Infrastructure);
    assert!(e.message.contains("the server is busy running a test"));
}

#[test]
fn sigterm_prints_whole_json_with_an_interrupt_error() {
    let name = "iperf3-3.12-J-client-sigterm-at-2.5s.json";
    let r = client(name);
    // sum_received is 0 (no results exchange); the error, not 0 Gb/s, is the outcome.
    assert_eq!(r.received_gbps, Some(0.0));
    assert!(close(r.sent_gbps, 19.82288924316053));
    assert_eq!(r.intervals.len(), 3);
    assert!(close(Some(r.intervals[2].end_s), 2.499024));
    let e = r.error.unwrap();
    assert_eq!(e.kind, FailureKind::Unrecognised);
    assert!(e.message.contains("interrupt - the client has terminated"));
    // Killed by the harness at its timeout after data moved: a hang, fabric.
    let e = killed(name).error.unwrap();
    assert_eq!(e.kind, FailureKind::Timeout);
    assert_eq!(e.class, FailureClass::Fabric);
}

#[test]
fn sigkill_prints_nothing() {
    let name = "iperf3-3.12-J-client-sigkill-at-2.5s-empty.json";
    assert!(fixture(name).is_empty());
    assert!(matches!(
        parse(&fixture(name), &IperfParseOptions::default()),
        Err(ParseError::NotRecognised { .. })
    ));
    let e = killed(name).error.unwrap();
    assert_eq!(e.kind, FailureKind::Timeout);
    assert_eq!(e.class, FailureClass::Infrastructure);
}

#[test]
fn servers() {
    for (name, port) in [
        ("iperf3-3.12-server-P1-i1-t3-loopback.txt", 5201),
        ("iperf3-3.12-server-P4-i1-t3-loopback.txt", 5202),
        ("iperf3-3.12-server-client-sigterm.txt", 5204),
        ("iperf3-3.12-server-client-sigkill.txt", 5205),
        ("iperf3-3.12-server-idle-sigterm.txt", 5207),
    ] {
        let r = parse_server(&fixture(name));
        assert_eq!(r.listening_port, Some(port), "{name}");
        assert_eq!(r.error, None, "{name}");
    }
    // The server's own words when its client died or it was stopped: not its failure.
    for name in [
        "iperf3-3.12-server-client-sigterm.stderr.txt",
        "iperf3-3.12-server-client-sigkill.stderr.txt",
        "iperf3-3.12-server-idle-sigterm.stderr.txt",
    ] {
        assert_eq!(parse_server(&fixture(name)).error, None, "{name}");
    }
    let r = parse_server(&fixture("iperf3-3.12-server-address-in-use.stderr.txt"));
    let e = r.error.unwrap();
    assert_eq!(e.kind, FailureKind::ServerBusy);
    assert_eq!(
        e.message,
        "iperf3: unable to start listener for connections: Address already in use"
    );
    assert_eq!(r.listening_port, None);
}

#[test]
fn stdout_and_stderr_merged_keep_the_result_and_the_noise() {
    let text = format!(
        "{}\niperf3: interrupt - the client has terminated\n",
        fixture("iperf3-3.12-J-tcp-P1-i1-t3-loopback.json")
    );
    let r = parse(&text, &IperfParseOptions::default()).unwrap();
    assert!(close(r.received_gbps, 19.9162953332389));
    assert_eq!(r.warnings.len(), 1, "{:?}", r.warnings);
    assert!(
        r.error.is_some(),
        "an interrupt after the JSON is not a clean run"
    );
}

/// Every cut of a real output: a clean error, or (harness-killed) a timeout;
/// never a panic and never a value from a cut object.
#[test]
fn every_truncation_is_a_clean_error() {
    let text = fixture("iperf3-3.12-J-tcp-P1-i1-t3-loopback.json");
    let end = text.trim_end().len();
    for at in 0..end {
        match parse(&text[..at], &IperfParseOptions::default()) {
            Err(e) => assert!(!e.to_string().contains('\n'), "{at}: {e}"),
            Ok(r) => panic!("cut at {at} parsed: {r:?}"),
        }
        let r = parse(
            &text[..at],
            &IperfParseOptions {
                killed_by_timeout: true,
                ..Default::default()
            },
        )
        .unwrap_or_else(|e| panic!("{at}: {e}"));
        assert_eq!(r.error.map(|e| e.kind), Some(FailureKind::Timeout), "{at}");
    }
}

mod props {
    use super::*;
    use proptest::prelude::*;

    const FILES: [&str; 4] = [
        "iperf3-3.12-J-tcp-P4-i1-t3-loopback.json",
        "iperf3-3.12-J-client-sigterm-at-2.5s.json",
        "iperf3-3.9-J-tcp-omit3-t10-cloudpilot-crlf.json",
        "iperf3-3.1.3-J-udp-selfhealing.json",
    ];

    fn check(text: &str) {
        match parse(text, &IperfParseOptions::default()) {
            Ok(r) => {
                assert!(r.received_gbps.is_none_or(f64::is_finite));
                serde_json::to_string(&r).expect("report encodes");
            }
            Err(e) => assert!(!e.to_string().contains('\n'), "{e}"),
        }
        let _ = parse_server(text);
    }

    proptest! {
        #[test]
        fn truncated_never_panics(file in 0..FILES.len(), cut in 0.0f64..1.0) {
            let text = fixture(FILES[file]);
            let mut at = (text.len() as f64 * cut) as usize;
            while !text.is_char_boundary(at) { at -= 1; }
            check(&text[..at]);
        }

        #[test]
        fn shuffled_lines_never_panic(file in 0..FILES.len(), seed in any::<u64>()) {
            let text = fixture(FILES[file]);
            let mut lines: Vec<&str> = text.lines().collect();
            let mut s = seed | 1;
            for i in (1..lines.len()).rev() {
                s ^= s << 13; s ^= s >> 7; s ^= s << 17;
                lines.swap(i, (s % (i as u64 + 1)) as usize);
            }
            check(&lines.join("\n"));
        }

        #[test]
        fn random_text_never_panics(text in "(?s).{0,400}") {
            check(&text);
        }

        #[test]
        fn json_like_noise_never_panics(body in "[{}\\[\\]\":,0-9a-z_ .e+-]{0,300}") {
            check(&format!("{{\"end\": {body}"));
            check(&format!("{{\"intervals\": [{body}], \"end\": {{\"sum_received\": {{\"bits_per_second\": {body}}}}}}}"));
        }
    }
}

/// Impossible values embedded in a real `-J` output: the report is
/// `unrecognised` with a reason naming the field and the value, and
/// possible values in the same places still parse.
mod impossible {
    use super::*;
    use proptest::prelude::*;

    const FILE: &str = "iperf3-3.12-J-tcp-P1-i1-t3-loopback.json";

    fn with(path: &[&str], v: serde_json::Value, link: Option<f64>) -> IperfReport {
        let mut j: serde_json::Value = serde_json::from_str(&fixture(FILE)).unwrap();
        let mut at = &mut j;
        for p in path {
            at = match p.parse::<usize>() {
                Ok(i) => &mut at[i],
                Err(_) => &mut at[*p],
            };
        }
        *at = v;
        let opts = IperfParseOptions {
            link_gbps: link,
            ..Default::default()
        };
        rocegate::workload::iperf::parse::parse(&j.to_string(), &opts).unwrap()
    }

    fn rejected(r: &IperfReport, at: &str) {
        let e = r.error.as_ref().expect("an impossible value is an error");
        assert_eq!(e.kind, FailureKind::Unrecognised, "{}", e.message);
        assert!(e.message.starts_with(at), "{} (want {at})", e.message);
        assert!(e.message.contains("is not a possible"), "{}", e.message);
    }

    #[test]
    fn negative_null_and_too_fast() {
        let r = with(
            &["end", "sum_received", "bits_per_second"],
            serde_json::json!(-5e9),
            None,
        );
        assert_eq!(
            r.error.as_ref().unwrap().message,
            "end.sum_received: bits_per_second -5000000000.0 is not a possible bandwidth (negative)"
        );
        assert_eq!(r.received_gbps, None);
        let r = with(
            &["intervals", "1", "sum", "bits_per_second"],
            serde_json::Value::Null,
            None,
        );
        rejected(&r, "intervals[1].sum: bits_per_second null");
        assert_eq!(r.intervals.len(), 2);
        // The loopback fixture reads about 20 Gb/s: impossible on a 10 Gb/s link.
        let r = with(
            &["start", "version"],
            serde_json::json!("iperf 3.12"),
            Some(10.0),
        );
        rejected(&r, "intervals[0].sum: bits_per_second");
        assert!(r.error.unwrap().message.contains("1.5 × the 10 Gb/s link"));
        let r = with(
            &["start", "version"],
            serde_json::json!("iperf 3.12"),
            Some(25.0),
        );
        assert!(r.error.is_none());
    }

    proptest! {
        #[test]
        fn impossible_rates_counts_and_times(
            interval in 0usize..3,
            field in prop_oneof![
                Just("bits_per_second"), Just("bytes"), Just("start"), Just("end"), Just("retransmits")
            ],
            v in prop_oneof![
                (1.0f64..1e15).prop_map(|v| serde_json::json!(-v)),
                Just(serde_json::Value::Null),
            ]
        ) {
            let r = with(&["intervals", &interval.to_string(), "sum", field], v, None);
            rejected(&r, &format!("intervals[{interval}].sum: {field}"));
        }

        #[test]
        fn above_any_port(bps in 3.3e12f64..1e300, total in any::<bool>()) {
            let path: &[&str] = if total {
                &["end", "sum_received", "bits_per_second"]
            } else {
                &["intervals", "2", "sum", "bits_per_second"]
            };
            let r = with(path, serde_json::json!(bps), None);
            let at = if total { "end.sum_received" } else { "intervals[2].sum" };
            rejected(&r, &format!("{at}: bits_per_second"));
        }

        #[test]
        fn possible_rates_still_parse(bps in 0.0f64..3e12) {
            let r = with(&["end", "sum_received", "bits_per_second"], serde_json::json!(bps), None);
            prop_assert!(r.error.is_none(), "{:?}", r.error);
            prop_assert_eq!(r.intervals.len(), 3);
            prop_assert!((r.received_gbps.unwrap() - bps / 1e9).abs() <= 1e-9 * (bps / 1e9).max(1.0));
        }
    }
}
