//! iperf3 on the emulated pod, read back as the harness reads it: the
//! client's `-J` document parsed with serde_json, numbers checked against
//! what the model's parameters give by hand (derivations in the comments),
//! shapes checked against real iperf3 3.12 output in `testdata/iperf3/`.
//!
//! Common ground: the default pod (16 nodes × 8 rails × 400G, RoCE MTU
//! 4096, host MTU 9000). gpu001 and gpu002 share r0-leaf1 (swp1, swp2);
//! gpu009 sits on r0-leaf2. A client starts 0.05 s into the batch and
//! sends from 0.07 s (`SETUP_S`), so test time = batch time − 0.07.

use std::time::Duration;

use serde_json::Value;

use super::noise::{self, tcp_mean_dip, TCP_RUN_MAX_LOSS, TCP_TICK_MAX_DIP};
use super::tcp::{self, PROCESS_GBPS};
use super::testutil::pod;
use super::Emulator;
use crate::config::inventory::Defect;
use crate::counters::{host, Canonical, Reading};
use crate::exec::types::{ExecFailure, Invocation, InvocationOutput, Role, StepCommands};

/// Test time 0 in batch time: the client's head start plus setup.
const T0: f64 = 0.05 + 0.02;
/// TCP payload per wire bit at MTU 9000: 8948 / 9038.
const TCP_EFF: f64 = 8948.0 / 9038.0;

fn at(host: &str, line: &str, role: Role, secs: f64) -> Invocation {
    Invocation {
        host: host.into(),
        argv: line.split_whitespace().map(String::from).collect(),
        env: Vec::new(),
        role,
        timeout: Duration::from_secs(120),
        at: Duration::from_secs_f64(secs),
    }
}

fn client_line(server: &str, client: &str, secs: u32, streams: u32, interval: &str) -> String {
    format!(
        "iperf3 -c {server}-r0 -B {client}-r0 -p 5301 -t {secs} -P {streams} -i {interval} -J --connect-timeout 5000"
    )
}

/// The server and client lines rocegate sends, rail 0, port 5301.
fn iperf_pair(server: &str, client: &str, secs: u32, streams: u32, interval: &str) -> StepCommands {
    StepCommands {
        invocations: vec![
            at(
                server,
                &format!("iperf3 -s -1 -p 5301 -B {server}-r0"),
                Role::Server,
                0.0,
            ),
            at(
                client,
                &client_line(server, client, secs, streams, interval),
                Role::Client,
                0.0,
            ),
        ],
    }
}

fn step(invs: Vec<Invocation>) -> StepCommands {
    StepCommands { invocations: invs }
}

fn json(o: &InvocationOutput) -> Value {
    serde_json::from_str(&o.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}):\n{}\n{}", o.stdout, o.stderr))
}

fn gbps(v: &Value) -> f64 {
    v["bits_per_second"].as_f64().unwrap() / 1e9
}

fn num(v: &Value, key: &str) -> f64 {
    v[key]
        .as_f64()
        .unwrap_or_else(|| panic!("no number {key} in {v}"))
}

fn intervals(j: &Value) -> &Vec<Value> {
    j["intervals"].as_array().unwrap()
}

/// The loss rate a run shows: each retransmitted segment was lost once
/// for every delivered one (`retransmits × MSS / bytes`).
fn loss(j: &Value) -> f64 {
    let s = &j["end"]["sum_sent"];
    num(s, "retransmits") * 8948.0 / num(s, "bytes")
}

/// The band a CPU-bound process (or `share` of it) prints over any stretch
/// of its test: its run keeps at least 1 − TCP_RUN_MAX_LOSS of
/// PROCESS_GBPS, its thread pushes that over 1 − the mean dip, and a tick
/// dips at most TCP_TICK_MAX_DIP (`noise`).
fn cpu_band(share: f64) -> std::ops::RangeInclusive<f64> {
    let top = PROCESS_GBPS * share / (1.0 - tcp_mean_dip());
    top * (1.0 - TCP_RUN_MAX_LOSS) * (1.0 - TCP_TICK_MAX_DIP)..=top * 1.0001
}

/// The band a stream the network holds at `gbps` prints in: its dips only
/// take away.
fn net_band(gbps: f64) -> std::ops::RangeInclusive<f64> {
    gbps * (1.0 - TCP_TICK_MAX_DIP)..=gbps * 1.0001
}

fn run(defects: &[Defect], batch: &[StepCommands]) -> Vec<Vec<InvocationOutput>> {
    Emulator::new(&pod(4096, defects), 1).run_batch(batch)
}

#[test]
fn one_iperf3_process_is_held_by_its_cpu_thread_not_by_the_400g_nic() {
    // A 400G link carries 400 × 0.990 = 396 Gb/s of TCP payload; one
    // iperf3 3.12 process moves PROCESS_GBPS (45) whatever -P is, and
    // its streams split it evenly, each wobbling on its own (`noise`).
    for streams in [1u32, 4] {
        let out = run(&[], &[iperf_pair("gpu002", "gpu001", 10, streams, "1")]);
        assert_eq!(out[0][1].exit, Some(0), "{:?}", out[0][1]);
        let j = json(&out[0][1]);
        let sent = gbps(&j["end"]["sum_sent"]);
        assert!(cpu_band(1.0).contains(&sent), "-P {streams}: {sent}");
        // The total is what the intervals carried (whole 128 KiB blocks).
        let total: f64 = intervals(&j)
            .iter()
            .map(|iv| num(&iv["sum"], "bytes"))
            .sum();
        assert_eq!(total, num(&j["end"]["sum_sent"], "bytes"));
        assert_eq!(num(&j["end"]["sum_sent"], "retransmits"), 0.0);
        for iv in intervals(&j) {
            for s in iv["streams"].as_array().unwrap() {
                let per = gbps(s);
                let fair = 1.0 / f64::from(streams);
                assert!(
                    cpu_band(fair).contains(&per),
                    "{per} vs {fair} of the process"
                );
                // A loaded stream's host RTT (200 µs) plus one leaf of
                // wire (2.5 µs), ±10 % of sampling jitter.
                assert!((180.0..=225.0).contains(&num(s, "rtt")), "{s}");
                assert_eq!(num(s, "pmtu"), 9000.0);
            }
        }
        assert_eq!(intervals(&j).len(), 10);
        assert_eq!(num(&j["start"], "tcp_mss_default"), 8948.0);
        assert_eq!(
            j["start"]["connected"].as_array().unwrap().len(),
            streams as usize
        );
        // 10 s of test after 20 ms of setup, the client starting at 0.05 s.
        let c = &out[0][1];
        assert!((c.ended_s - (T0 + 10.0)).abs() < 0.01, "{}", c.ended_s);
        let server = &out[0][0];
        assert_eq!(server.exit, Some(0));
        assert!(server.stdout.contains("Server listening on 5301 (test #1)"));
        assert!(server.stdout.trim_end().ends_with("receiver"));
    }
}

/// `ib_write_bw` from `client` to `server` on rail 0, 10 s.
fn perftest_pair(server: &str, client: &str) -> StepCommands {
    let s = "ib_write_bw -d mlx5_0 -x 3 -F --report_gbits -s 1048576 -D 10 -p 18515";
    step(vec![
        at(server, s, Role::Server, 0.0),
        at(client, &format!("{s} {server}.mgmt"), Role::Client, 0.0),
    ])
}

fn perftest_gbps(o: &InvocationOutput) -> f64 {
    let row = o
        .stdout
        .lines()
        .rev()
        .find(|l| l.trim_start().starts_with(|c: char| c.is_ascii_digit()))
        .unwrap_or_else(|| panic!("no row in:\n{}\n{}", o.stdout, o.stderr));
    row.split_whitespace().nth(3).unwrap().parse().unwrap()
}

#[test]
fn eight_streams_share_a_25g_bottleneck_max_min_with_a_perftest_qp() {
    // gpu002's NIC negotiated 25G: its leaf→NIC link is the bottleneck of
    // 8 TCP streams from gpu001 and 1 RoCE QP from gpu003, all in one
    // batch (the model counts every flow of a batch for its whole length).
    // Max-min in wire bits: 9 flows, 25/9 Gb/s of wire each. In payload:
    //   RoCE QP: 25 × 4096/4178 / 9 = 2.7233 Gb/s
    //   TCP: 8 × 25/9 × 8948/9038 = 22.000 Gb/s before losses,
    // well under the process's 45 Gb/s, so the network holds the streams:
    // they fill the lossy queue and lose segments (loss() reads the rate
    // back from the retransmit count), the RoCE QP is paused, not dropped.
    let slow = [Defect::NicSpeed {
        nic: "gpu002:mlx5_0".into(),
        gbps: 25,
    }];
    let out = run(
        &slow,
        &[
            iperf_pair("gpu002", "gpu001", 10, 8, "1"),
            perftest_pair("gpu002", "gpu003"),
        ],
    );
    let rdma = perftest_gbps(&out[1][1]);
    let roce_share = 25.0 * 4096.0 / 4178.0 / 9.0;
    assert!(
        rdma <= roce_share + 0.005 && rdma >= roce_share * (1.0 - noise::BW_MAX_LOSS) - 0.005,
        "{rdma} vs {roce_share}"
    );
    let j = json(&out[0][1]);
    let tcp_gbps = gbps(&j["end"]["sum_sent"]);
    let p = loss(&j);
    assert!(p > 0.001 && p < 0.2, "a full lossy queue drops: {p}");
    // Held by the network, the streams' dips leave some of it unused.
    let wire = tcp_gbps / TCP_EFF / (1.0 - p);
    assert!(
        net_band(8.0 * 25.0 / 9.0).contains(&wire),
        "{tcp_gbps} ({wire} on the wire)"
    );
    // Each stream gets an eighth of that share, less its own dips.
    for s in j["end"]["streams"].as_array().unwrap() {
        let per = gbps(&s["sender"]) / TCP_EFF / (1.0 - p);
        assert!(net_band(25.0 / 9.0).contains(&per), "{per}");
    }
}

#[test]
fn a_slower_nic_lowers_the_result_only_below_the_process_cap() {
    let batch = [iperf_pair("gpu002", "gpu001", 10, 8, "1")];
    let healthy = gbps(&json(&run(&[], &batch)[0][1])["end"]["sum_sent"]);
    let nic = |g: u32| Defect::NicSpeed {
        nic: "gpu002:mlx5_0".into(),
        gbps: g,
    };
    // 200G: 198 Gb/s of TCP payload, above the 45 the process moves.
    let half = gbps(&json(&run(&[nic(200)], &batch)[0][1])["end"]["sum_sent"]);
    assert!((half / healthy - 1.0).abs() < 1e-3, "{healthy} → {half}");
    // 25G: 25 × 8948/9038 = 24.75 Gb/s less what the lossy queue drops.
    let j = json(&run(&[nic(25)], &batch)[0][1]);
    let slow = gbps(&j["end"]["sum_sent"]);
    let want = 25.0 * TCP_EFF * (1.0 - loss(&j));
    assert!(net_band(want).contains(&slow), "{slow} vs {want}");
    assert!(slow < healthy * 0.6);
}

/// Sum of the interval whose span contains test time `t`.
fn interval_at(j: &Value, t: f64) -> &Value {
    intervals(j)
        .iter()
        .find(|iv| num(&iv["sum"], "start") <= t && t < num(&iv["sum"], "end"))
        .unwrap_or_else(|| panic!("no interval at {t}"))
}

#[test]
fn a_link_flap_under_the_server_stalls_the_streams_until_the_timer_fires_after_it() {
    // gpu002's cable goes down on the leaf (swp2) at 4 s for 2 s. The
    // sender (gpu001) sees its segments vanish: RTO = 200 ms + srtt, then
    // doubling. Down at test time 4 − 0.07 = 3.93: firings at +0.2, +0.6,
    // +1.4 (no path: one retransmit each), +3.0 = 6.93 → the link is back
    // (5.93), the retransmission gets through and the lost window follows.
    // So the intervals from 4.0 to 6.5 carry nothing, 6.5–7.0 a little,
    // and the rest the full 45 Gb/s. Same shape as the real capture in
    // testdata/iperf3/client-P2-t8-i0.5-blackhole-2s.json.
    let out = run(
        &[],
        &[
            iperf_pair("gpu002", "gpu001", 10, 2, "0.5"),
            step(vec![
                at("r0-leaf1", "ip link set dev swp2 down", Role::Probe, 4.0),
                at("r0-leaf1", "ip link set dev swp2 up", Role::Probe, 6.0),
            ]),
        ],
    );
    assert_eq!(
        out[0][1].exit,
        Some(0),
        "TCP rides out 2 s: {:?}",
        out[0][1]
    );
    let j = json(&out[0][1]);
    let down = 4.0 - T0;
    // RTO = 200 ms + srtt (202.5 µs: 200 of hosts, 2.5 of one leaf),
    // then 2×, 4×, 8× that: the fourth firing comes 15 RTOs after the loss.
    let resume = down + 15.0 * (tcp::RTO_MIN_S + 202.5e-6);
    for iv in intervals(&j) {
        let s = &iv["sum"];
        let (a, b) = (num(s, "start"), num(s, "end"));
        let g = gbps(s);
        if b < down {
            assert!(cpu_band(1.0).contains(&g), "before: {a} {g}");
        } else if a > down && b < resume {
            assert_eq!(num(s, "bytes"), 0.0, "stalled: {a}-{b}");
            // The window collapses to one segment after the timeout.
            for st in iv["streams"].as_array().unwrap() {
                assert_eq!(num(st, "snd_cwnd"), 8948.0);
            }
        } else if a > resume {
            assert!(cpu_band(1.0).contains(&g), "after: {a} {g}");
        }
    }
    // The interval where it resumes carries what 45 Gb/s moves in the rest
    // of it.
    let iv = interval_at(&j, resume);
    let rest = num(&iv["sum"], "end") - resume;
    let got = num(&iv["sum"], "bytes") * 8.0 / 1e9 / rest;
    let band = cpu_band(1.0);
    assert!(
        got >= band.start() * 0.98 && got <= band.end() * 1.02,
        "{got} Gb/s in {rest} s"
    );
    // Three failed firings per stream, each in its own interval, then the
    // lost windows (a CPU-bound stream's window is a little above its BDP:
    // 22.5 Gb/s × 202.5 µs = 64 segments).
    for t in [down + 0.2, down + 0.6, down + 1.4] {
        assert_eq!(
            num(&interval_at(&j, t + 0.01)["sum"], "retransmits"),
            2.0,
            "at {t}"
        );
    }
    let burst = num(&iv["sum"], "retransmits");
    assert!(
        burst > 2.0 * 64.0 && burst < 2.0 * 90.0,
        "the lost windows: {burst}"
    );
    // The server saw the same gap in its 1 s intervals.
    let rows: Vec<&str> = out[0][0]
        .stdout
        .lines()
        .filter(|l| l.starts_with("[SUM]"))
        .collect();
    assert!(
        rows[4].contains("4.00-5.00") && rows[4].contains("0.00 Bytes"),
        "{rows:?}"
    );
    assert!(
        rows[5].contains("5.00-6.00") && rows[5].contains("0.00 Bytes"),
        "{rows:?}"
    );
}

#[test]
fn without_carrier_the_sender_retries_every_half_second_and_counts_nothing() {
    // Now gpu001's own cable goes down on the leaf (swp1): its NIC loses
    // carrier, the retransmission fails locally and Linux re-arms the timer
    // at 500 ms without backoff (TCP_RESOURCE_PROBE_INTERVAL): firings at
    // 3.93 + 0.2 = 4.13, then 4.63, 5.13, 5.63, 6.13 → up at 5.93, so it
    // resumes at 6.13, 0.8 s sooner than through a remote outage. Same
    // shape as testdata/iperf3/client-P2-t8-i0.5-peer-carrier-down-2s.json.
    let out = run(
        &[],
        &[
            iperf_pair("gpu002", "gpu001", 10, 2, "0.5"),
            step(vec![
                at("r0-leaf1", "ip link set dev swp1 down", Role::Probe, 4.0),
                at("r0-leaf1", "ip link set dev swp1 up", Role::Probe, 6.0),
            ]),
        ],
    );
    let j = json(&out[0][1]);
    let resume = 4.0 - T0 + tcp::RTO_MIN_S + 202.5e-6 + 4.0 * tcp::PROBE_INTERVAL_S;
    let iv = interval_at(&j, resume);
    assert!(num(&iv["sum"], "bytes") > 0.0);
    let before = interval_at(&j, resume - 0.5);
    assert_eq!(num(&before["sum"], "bytes"), 0.0);
    // Failed local retransmissions are not counted: the only retransmits
    // are the lost windows, sent when the path is back.
    let during: f64 = intervals(&j)
        .iter()
        .filter(|iv| num(&iv["sum"], "end") < resume)
        .map(|iv| num(&iv["sum"], "retransmits"))
        .sum();
    assert_eq!(during, 0.0);
    assert!(num(&iv["sum"], "retransmits") > 0.0);
}

#[test]
fn streams_on_a_failed_uplink_resume_on_another_after_one_timeout() {
    // gpu001 → gpu009 crosses the spines; at 4 s seven of r0-leaf1's eight
    // uplinks go down for 5 s. The leaf rehashes every stream onto swp16 at
    // once; a stream whose uplink died lost what was in flight and resends
    // it on its first timeout (200 ms), on the new path. Nothing else
    // stops: the process stays at 45 Gb/s, one 400G uplink being plenty.
    let mut flaps = Vec::new();
    for p in 9..=15 {
        flaps.push(at(
            "r0-leaf1",
            &format!("ip link set dev swp{p} down"),
            Role::Probe,
            4.0,
        ));
        flaps.push(at(
            "r0-leaf1",
            &format!("ip link set dev swp{p} up"),
            Role::Probe,
            9.0,
        ));
    }
    let out = run(
        &[],
        &[iperf_pair("gpu009", "gpu001", 10, 8, "0.5"), step(flaps)],
    );
    let j = json(&out[0][1]);
    let down = 4.0 - T0;
    let hit = interval_at(&j, down + 0.1);
    // A stream that lost 0.13 s of the 0.5 s moves at most 74 % of its
    // process's best; one that did not, at least 82 % (`cpu_band`).
    let stalled = hit["streams"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| gbps(s) < PROCESS_GBPS / 8.0 * 0.78)
        .count();
    // With 8 uplinks and 8 streams, most hashed onto one that went down.
    assert!(stalled >= 4, "{stalled} streams lost their uplink");
    for iv in intervals(&j) {
        assert!(num(&iv["sum"], "bytes") > 0.0, "never all stopped: {iv}");
    }
    let after = interval_at(&j, down + 1.0);
    assert!(cpu_band(1.0).contains(&gbps(&after["sum"])), "{after}");
    assert!(num(&hit["sum"], "retransmits") >= stalled as f64);
}

#[test]
fn a_bad_cable_costs_retransmits_and_goodput_as_its_loss_rate_says() {
    // BER b on gpu001's cable: a 9038-byte frame is bad with
    // p = 1 − (1 − b)^(8 × 9038). A CUBIC stream losing p can carry at most
    // Mathis's 8948 × 8 / RTT × sqrt(1.5 / p), RTT = 200 µs of hosts + 2.5
    // of a leaf.
    //   b = 1e-9: p = 0.0072 %, 50.9 Gb/s a stream: the process's 45 Gb/s
    //     still holds 8 streams, less the p of it spent on resends;
    //   b = 1e-7: p = 0.72 %, 5.10 Gb/s a stream: 8 streams make 40.8,
    //     below what the process could move.
    for (ber, cpu_bound) in [(1e-9, true), (1e-7, false)] {
        let bad = [Defect::BadCable {
            link: "gpu001:mlx5_0".into(),
            ber,
        }];
        let p = 1.0 - (1.0 - ber).powf(8.0 * 9038.0);
        let mathis = tcp::mathis_gbps(9000, 202.5, p);
        assert_eq!(mathis * 8.0 > PROCESS_GBPS, cpu_bound);
        let j = json(&run(&bad, &[iperf_pair("gpu002", "gpu001", 10, 8, "1")])[0][1]);
        let g = gbps(&j["end"]["sum_sent"]);
        let band = if cpu_bound {
            let b = cpu_band(1.0 - p);
            *b.start()..=*b.end()
        } else {
            net_band(8.0 * mathis)
        };
        assert!(band.contains(&g), "BER {ber}: {g} vs {band:?}");
        assert!(num(&j["end"]["sum_sent"], "retransmits") > 100.0);
        assert!((loss(&j) / p - 1.0).abs() < 0.05, "{} vs {p}", loss(&j));
    }
    // A single stream at 1e-7 carries its Mathis bound.
    let bad = [Defect::BadCable {
        link: "gpu001:mlx5_0".into(),
        ber: 1e-7,
    }];
    let p = 1.0 - (1.0 - 1e-7f64).powf(8.0 * 9038.0);
    let one = json(&run(&bad, &[iperf_pair("gpu002", "gpu001", 10, 1, "1")])[0][1]);
    let g1 = gbps(&one["end"]["sum_sent"]);
    assert!(
        net_band(tcp::mathis_gbps(9000, 202.5, p) * 1.004).contains(&g1),
        "{g1}"
    );
}

#[test]
fn no_server_is_connection_refused_in_3_12s_json_with_exit_status_0() {
    // iperf3 3.12 prints the error inside the JSON and exits 0 with -J
    // (esnet/iperf#1405, fixed in 3.13; captured in
    // testdata/iperf3/client-refused.json). Without -J: stderr, exit 1.
    let client = client_line("gpu002", "gpu001", 10, 2, "1");
    let out = run(
        &[],
        &[step(vec![
            at("gpu001", &client, Role::Client, 0.0),
            at("gpu001", &client.replace(" -J", ""), Role::Client, 0.0),
        ])],
    );
    let o = &out[0][0];
    assert_eq!(o.exit, Some(0));
    let j = json(o);
    assert_eq!(
        j["error"],
        "unable to connect to server: Connection refused"
    );
    assert_eq!(j["start"]["connected"], Value::Array(Vec::new()));
    assert_eq!(j["intervals"], Value::Array(Vec::new()));
    assert_eq!(j["end"], Value::Object(Default::default()));
    assert!(o.ended_s - o.started_s < 0.01, "a RST comes back at once");
    let t = &out[0][1];
    assert_eq!(t.exit, Some(1));
    assert_eq!(
        t.stderr,
        "iperf3: error - unable to connect to server: Connection refused\n"
    );
}

#[test]
fn addresses_of_nobody_or_of_another_host() {
    let out = run(
        &[],
        &[step(vec![
            at(
                "gpu001",
                &client_line("gpu099", "gpu001", 10, 1, "1"),
                Role::Client,
                0.0,
            ),
            at(
                "gpu001",
                &client_line("gpu002", "gpu003", 10, 1, "1"),
                Role::Client,
                0.0,
            ),
            at(
                "gpu002",
                "iperf3 -s -1 -p 5301 -B gpu001-r0",
                Role::Server,
                0.0,
            ),
            at(
                "gpu001",
                "iperf3 -c 10.99.0.1 -p 5301 -t 10 -J --connect-timeout 5000",
                Role::Client,
                0.0,
            ),
        ])],
    );
    let err = |o: &InvocationOutput| json(o)["error"].as_str().unwrap().to_string();
    assert_eq!(
        err(&out[0][0]),
        "unable to connect to server: Name or service not known"
    );
    assert_eq!(
        err(&out[0][1]),
        "unable to connect to server: Cannot assign requested address"
    );
    let s = &out[0][2];
    assert_eq!(s.exit, Some(1));
    assert_eq!(
        s.stderr,
        "iperf3: error - unable to start listener for connections: Cannot assign requested address\niperf3: exiting\n"
    );
    // An IP nobody has: ARP gives up after 3 tries a second apart.
    let o = &out[0][3];
    assert_eq!(err(o), "unable to connect to server: No route to host");
    assert!(
        (o.ended_s - (0.05 + tcp::NEIGH_FAIL_S)).abs() < 1e-9,
        "{}",
        o.ended_s
    );
}

#[test]
fn a_path_that_is_not_there_is_no_route_to_host_and_the_server_waits() {
    // gpu001's and gpu003's cables are swapped: gpu001's address is routed
    // to a port where nothing answers ARP.
    let swapped = [Defect::SwappedCables {
        a: "gpu001:mlx5_0".into(),
        b: "gpu003:mlx5_0".into(),
    }];
    let out = run(&swapped, &[iperf_pair("gpu002", "gpu001", 10, 2, "1")]);
    let c = &out[0][1];
    assert_eq!(
        json(c)["error"],
        "unable to connect to server: No route to host"
    );
    assert!((c.ended_s - (0.05 + tcp::NEIGH_FAIL_S)).abs() < 1e-9);
    let s = &out[0][0];
    assert!(matches!(s.failure, Some(ExecFailure::TimedOut(_))), "{s:?}");
    assert_eq!(s.stdout, super::iperf::server_banner(5301));
    // A second client of a -1 server is turned away.
    let two = run(
        &[],
        &[
            iperf_pair("gpu002", "gpu001", 10, 1, "1"),
            step(vec![at(
                "gpu003",
                &client_line("gpu002", "gpu003", 10, 1, "1"),
                Role::Client,
                0.0,
            )]),
        ],
    );
    assert_eq!(
        json(&two[1][0])["error"],
        "the server is busy running a test. try again later"
    );
    assert_eq!(two[0][1].exit, Some(0));
}

/// Keys, nesting and value kinds of cJSON text, one line each: what stays
/// when every value is replaced by its type.
fn skeleton(text: &str) -> Vec<String> {
    text.lines()
        .map(|l| match l.split_once(":\t") {
            Some((key, v)) => {
                let kind = match v.chars().next() {
                    Some('{') => "{",
                    Some('[') if v.starts_with("[]") => "[]",
                    Some('[') => "[",
                    Some('"') => "str",
                    Some('t') | Some('f') => "bool",
                    _ => "num",
                };
                format!("{key}:{kind}{}", if v.ends_with(',') { "," } else { "" })
            }
            None => l.to_string(),
        })
        .collect()
}

#[test]
fn the_json_has_the_shape_of_a_real_3_12_run() {
    // The same command line as the loopback capture: -t 2 -P 2 -i 0.5.
    let out = run(&[], &[iperf_pair("gpu002", "gpu001", 2, 2, "0.5")]);
    let real = include_str!("testdata/iperf3/client-P2-t2-i0.5.json");
    let mut ours = skeleton(&out[0][1].stdout);
    let mut theirs = skeleton(real);
    // This machine runs BBR; Debian's default is CUBIC: both strings.
    assert_eq!(ours, theirs);
    let refused = run(
        &[],
        &[step(vec![at(
            "gpu001",
            &client_line("gpu002", "gpu001", 2, 2, "0.5"),
            Role::Client,
            0.0,
        )])],
    );
    ours = skeleton(&refused[0][0].stdout);
    theirs = skeleton(include_str!("testdata/iperf3/client-refused.json"));
    assert_eq!(ours, theirs);
    // Numbers print as cJSON prints them: a float32 duration in 17 digits,
    // integers without a fraction.
    let text = &out[0][1].stdout;
    let seconds = text
        .lines()
        .find(|l| l.contains("\"seconds\":\t") && l.contains('.'))
        .unwrap();
    let digits = seconds.split('.').nth(1).unwrap().trim_end_matches(',');
    assert!(digits.len() >= 14, "{seconds}");
    assert!(text.contains("\t\t\t\t\t\"start\":\t0,\n"));
}

/// What each line of a server report is.
fn line_kinds(text: &str) -> Vec<&'static str> {
    text.lines()
        .map(|l| {
            let row = |l: &str| {
                l.contains(" sec  ")
                    && (l.ends_with("bits/sec                  ")
                        || l.ends_with("bits/sec                  receiver"))
            };
            if l.starts_with("------") {
                "dashes"
            } else if l.starts_with("Server listening on ") {
                "listening"
            } else if l.starts_with("Accepted connection from ") {
                "accepted"
            } else if l.contains(" connected to ") {
                "connected"
            } else if l == "[ ID] Interval           Transfer     Bitrate" {
                "header"
            } else if l == "- - - - - - - - - - - - - - - - - - - - - - - - -" {
                "separator"
            } else if l.starts_with("[SUM]") && row(l) {
                "sum"
            } else if l.starts_with('[') && row(l) {
                "row"
            } else {
                "other"
            }
        })
        .collect()
}

#[test]
fn the_server_report_has_the_shape_of_a_real_3_12_server() {
    let out = run(&[], &[iperf_pair("gpu002", "gpu001", 2, 2, "0.5")]);
    let ours = line_kinds(&out[0][0].stdout);
    let real = line_kinds(include_str!("testdata/iperf3/server-P2-t2.txt"));
    assert_eq!(ours, real);
    assert!(!ours.contains(&"other"));
    let one = run(&[], &[iperf_pair("gpu002", "gpu001", 1, 1, "0.5")]);
    assert_eq!(
        line_kinds(&one[0][0].stdout),
        line_kinds(include_str!("testdata/iperf3/server-P1-t1.txt"))
    );
}

fn value(r: &[Reading], c: Canonical, prio: Option<u8>) -> u64 {
    r.iter()
        .filter(|x| x.canonical == c && x.priority == prio)
        .map(|x| x.value)
        .sum()
}

#[test]
fn tcp_traffic_is_counted_on_priority_0_not_on_the_roce_priority() {
    let out = run(
        &[],
        &[
            iperf_pair("gpu002", "gpu001", 10, 1, "1"),
            step(vec![at("gpu001", "ethtool -S rdma0", Role::Probe, 11.0)]),
        ],
    );
    let r = host::parse_ethtool_stats(&out[1][0].stdout).unwrap();
    let prio0 = value(&r, Canonical::TxBytes, Some(0)) as f64;
    let prio3 = value(&r, Canonical::TxBytes, Some(3));
    // What iperf3 says it sent, in frames of MTU + 18 bytes carrying
    // MTU − 52 of it: the counters follow the same stream, dips and all.
    let sent = num(&json(&out[0][1])["end"]["sum_sent"], "bytes");
    let want = sent * 9018.0 / 8948.0;
    assert!((prio0 / want - 1.0).abs() < 0.001, "{prio0} vs {want}");
    assert!(
        cpu_band(1.0).contains(&(sent * 8.0 / 10.0 / 1e9)),
        "10 s at about PROCESS_GBPS: {sent}"
    );
    assert_eq!(prio3, 0);
}

#[test]
fn the_same_seed_gives_the_same_bytes() {
    let batch = [iperf_pair("gpu009", "gpu001", 3, 4, "0.5")];
    let a = run(&[], &batch);
    let b = run(&[], &batch);
    assert_eq!(a[0][1].stdout, b[0][1].stdout);
    assert_eq!(a[0][0].stdout, b[0][0].stdout);
}
