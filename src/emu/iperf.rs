//! iperf3 3.12 (Debian 12) as the emulator answers it: the command line
//! parsed as iperf3's `iperf_parse_arguments` does under glibc's
//! `getopt_long` (the messages, the usage text and which stream they go to
//! were captured from the real binary, `testdata/iperf3/`), the client's
//! `-J` document as cJSON prints it, and the server's plain-text report.
//!
//! It computes nothing about the network: `iperf_run` hands it the samples
//! the TCP model produced and it lays them out.

use super::cjson::{self, J};
use super::perftest::Refusal;

/// `usage_longstr` of iperf3 3.12, as `iperf3 -h` prints it.
pub const USAGE: &str = include_str!("iperf3_usage.txt");
pub const VERSION: &str = "iperf 3.12";
/// What `iperf3 -v` lists after the version on Debian 12.
const FEATURES: &str = "CPU affinity setting, IPv6 flow label, SCTP, TCP congestion algorithm setting, sendfile / zerocopy, socket pacing, authentication, bind to device, support IPv4 don't fragment";
/// `PORT`.
pub const DEFAULT_PORT: u16 = 5201;
/// Default `-l` for TCP (`DEFAULT_TCP_BLKSIZE`, 128 KiB): the sender's
/// byte counts move in whole blocks.
pub const BLKSIZE: u64 = 131_072;
/// Debian 12's `net.ipv4.tcp_wmem`/`tcp_rmem` defaults, which iperf3
/// reports as `sndbuf_actual`/`rcvbuf_actual` when `-w` is not given.
pub const SNDBUF: i64 = 16_384;
pub const RCVBUF: i64 = 131_072;
/// Half of Debian 12's `tcp_rmem` maximum (6 MiB): the largest window a
/// receiver advertises with `tcp_adv_win_scale` 1.
pub const MAX_RCV_WINDOW: f64 = 3_145_728.0;
/// The congestion control Debian 12 runs by default.
pub const CONGESTION: &str = "cubic";

/// A parsed iperf3 command line.
#[derive(Debug, Clone, PartialEq)]
pub struct Params {
    /// `-c HOST`: the client and what it connects to (`%dev` removed).
    pub client: Option<String>,
    pub server: bool,
    pub port: u16,
    /// `-B ADDR` (`%dev` removed).
    pub bind: Option<String>,
    pub one_off: bool,
    pub json: bool,
    /// `-t`, seconds (`atoi`; 0 runs until killed).
    pub duration: u32,
    /// `-P`.
    pub streams: u32,
    /// `-i`, seconds (0: one interval for the whole test).
    pub interval: f64,
    /// `--connect-timeout`, ms.
    pub connect_timeout_ms: Option<i64>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Arg {
    No,
    Required,
    Optional,
}

/// Long options in the order of iperf3 3.12's `longopts` (glibc lists
/// ambiguous prefixes in this order), with the short option or long name
/// each one sets.
const LONG: &[(&str, Arg, &str)] = &[
    ("port", Arg::Required, "p"),
    ("format", Arg::Required, "f"),
    ("interval", Arg::Required, "i"),
    ("daemon", Arg::No, "D"),
    ("one-off", Arg::No, "1"),
    ("verbose", Arg::No, "V"),
    ("json", Arg::No, "J"),
    ("version", Arg::No, "v"),
    ("server", Arg::No, "s"),
    ("client", Arg::Required, "c"),
    ("udp", Arg::No, "u"),
    ("bitrate", Arg::Required, "b"),
    ("bandwidth", Arg::Required, "b"),
    (
        "server-bitrate-limit",
        Arg::Required,
        "server-bitrate-limit",
    ),
    ("time", Arg::Required, "t"),
    ("bytes", Arg::Required, "n"),
    ("blockcount", Arg::Required, "k"),
    ("length", Arg::Required, "l"),
    ("parallel", Arg::Required, "P"),
    ("reverse", Arg::No, "R"),
    ("bidir", Arg::No, "bidir"),
    ("window", Arg::Required, "w"),
    ("bind", Arg::Required, "B"),
    ("bind-dev", Arg::Required, "bind-dev"),
    ("cport", Arg::Required, "cport"),
    ("set-mss", Arg::Required, "M"),
    ("no-delay", Arg::No, "N"),
    ("version4", Arg::No, "4"),
    ("version6", Arg::No, "6"),
    ("tos", Arg::Required, "S"),
    ("dscp", Arg::Required, "dscp"),
    ("extra-data", Arg::Required, "extra-data"),
    ("flowlabel", Arg::Required, "L"),
    ("zerocopy", Arg::No, "Z"),
    ("omit", Arg::Required, "O"),
    ("file", Arg::Required, "F"),
    ("repeating-payload", Arg::No, "repeating-payload"),
    ("timestamps", Arg::Optional, "timestamps"),
    ("title", Arg::Required, "T"),
    ("affinity", Arg::Required, "A"),
    ("congestion", Arg::Required, "C"),
    ("linux-congestion", Arg::Required, "C"),
    ("sctp", Arg::No, "sctp"),
    ("nstreams", Arg::Required, "nstreams"),
    ("xbind", Arg::Required, "X"),
    ("pidfile", Arg::Required, "I"),
    ("logfile", Arg::Required, "logfile"),
    ("forceflush", Arg::No, "forceflush"),
    ("get-server-output", Arg::No, "get-server-output"),
    ("udp-counters-64bit", Arg::No, "udp-counters-64bit"),
    ("no-fq-socket-pacing", Arg::No, "no-fq-socket-pacing"),
    ("dont-fragment", Arg::No, "dont-fragment"),
    ("username", Arg::Required, "username"),
    ("rsa-public-key-path", Arg::Required, "rsa-public-key-path"),
    (
        "rsa-private-key-path",
        Arg::Required,
        "rsa-private-key-path",
    ),
    (
        "authorized-users-path",
        Arg::Required,
        "authorized-users-path",
    ),
    ("time-skew-threshold", Arg::Required, "time-skew-threshold"),
    ("fq-rate", Arg::Required, "fq-rate"),
    ("pacing-timer", Arg::Required, "pacing-timer"),
    ("connect-timeout", Arg::Required, "connect-timeout"),
    ("idle-timeout", Arg::Required, "idle-timeout"),
    ("rcv-timeout", Arg::Required, "rcv-timeout"),
    ("snd-timeout", Arg::Required, "snd-timeout"),
    ("debug", Arg::Optional, "d"),
    ("help", Arg::No, "h"),
];

/// iperf3 3.12's `getopt_long` string.
const SHORT: &str = "p:f:i:D1VJvsc:ub:t:n:k:l:P:Rw:B:M:N46S:L:ZO:F:A:T:C:dI:hX:";

/// Options that make a command line a client's (`client_flag`).
const CLIENT_ONLY: &[&str] = &[
    "u",
    "b",
    "t",
    "n",
    "k",
    "l",
    "P",
    "R",
    "bidir",
    "w",
    "M",
    "N",
    "S",
    "dscp",
    "L",
    "Z",
    "O",
    "T",
    "C",
    "connect-timeout",
    "extra-data",
    "get-server-output",
    "repeating-payload",
    "dont-fragment",
    "fq-rate",
    "pacing-timer",
    "sctp",
    "no-fq-socket-pacing",
    "username",
    "rsa-public-key-path",
    "nstreams",
    "X",
];
/// And a server's (`server_flag`).
const SERVER_ONLY: &[&str] = &[
    "D",
    "1",
    "server-bitrate-limit",
    "idle-timeout",
    "rsa-private-key-path",
    "authorized-users-path",
    "time-skew-threshold",
];

/// getopt's complaint, then the usage text, on stderr.
fn getopt_error(msg: String) -> Refusal {
    Refusal {
        stdout: String::new(),
        stderr: format!("iperf3: {msg}\n{USAGE}"),
        exit: 1,
    }
}

/// `iperf_parse_arguments` failing: usage on stdout, the error on stderr.
fn param_error(msg: &str) -> Refusal {
    Refusal {
        stdout: USAGE.into(),
        stderr: format!("iperf3: parameter error - {msg}\n\n"),
        exit: 1,
    }
}

/// C's `atoi`/`strtol(s, NULL, 10)`: the leading integer, 0 if none.
pub fn atoi(s: &str) -> i64 {
    let t = s.trim_start();
    let (neg, t) = match t.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, t.strip_prefix('+').unwrap_or(t)),
    };
    let end = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let v = t[..end]
        .parse::<i64>()
        .unwrap_or(if end > 0 { i64::MAX } else { 0 });
    if neg {
        -v
    } else {
        v
    }
}

/// C's `atof`: the longest leading decimal number, 0 if none.
pub fn atof(s: &str) -> f64 {
    let t = s.trim_start();
    let b = t.as_bytes();
    let mut end = 0;
    if end < b.len() && (b[end] == b'+' || b[end] == b'-') {
        end += 1;
    }
    let digits = |mut i: usize| {
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        i
    };
    end = digits(end);
    if end < b.len() && b[end] == b'.' {
        end = digits(end + 1);
    }
    if end < b.len() && (b[end] == b'e' || b[end] == b'E') {
        let mut e = end + 1;
        if e < b.len() && (b[e] == b'+' || b[e] == b'-') {
            e += 1;
        }
        let after = digits(e);
        if after > e {
            end = after;
        }
    }
    (1..=end)
        .rev()
        .find_map(|n| t[..n].parse::<f64>().ok())
        .unwrap_or(0.0)
}

/// `-c host%dev` and `-B addr%dev` name a device after the address.
fn strip_dev(s: &str) -> String {
    s.split('%').next().unwrap_or(s).to_string()
}

/// The options of `argv` (the tool first) as getopt returns them: (key,
/// argument), or the error getopt prints.
fn getopt(argv: &[String]) -> Result<Vec<(String, Option<String>)>, Refusal> {
    let mut opts = Vec::new();
    let mut i = 1;
    while i < argv.len() {
        let w = &argv[i];
        i += 1;
        if w == "--" {
            break;
        }
        if let Some(long) = w.strip_prefix("--") {
            let (name, inline) = match long.split_once('=') {
                Some((n, v)) => (n, Some(v.to_string())),
                None => (long, None),
            };
            let exact = LONG.iter().find(|(n, _, _)| *n == name);
            let found = match exact {
                Some(o) => o,
                None => {
                    let cands: Vec<&(&str, Arg, &str)> = LONG
                        .iter()
                        .filter(|(n, _, _)| n.starts_with(name))
                        .collect();
                    let Some(&first) = cands.first() else {
                        return Err(getopt_error(format!("unrecognized option '{w}'")));
                    };
                    // glibc compares each match with the first: one that
                    // sets the same thing the same way (`--bandwidth` after
                    // `--bitrate`) is not a second possibility.
                    let differs = |c: &&(&str, Arg, &str)| c.1 != first.1 || c.2 != first.2;
                    if cands.iter().any(differs) {
                        let list: String = cands
                            .iter()
                            .enumerate()
                            .filter(|(k, c)| *k == 0 || differs(c))
                            .map(|(_, c)| format!(" '--{}'", c.0))
                            .collect();
                        return Err(getopt_error(format!(
                            "option '--{name}' is ambiguous; possibilities:{list}"
                        )));
                    }
                    first
                }
            };
            let (lname, has_arg, key) = *found;
            let val = match (has_arg, inline) {
                (Arg::No, Some(_)) => {
                    return Err(getopt_error(format!(
                        "option '--{lname}' doesn't allow an argument"
                    )))
                }
                (Arg::No, None) => None,
                (Arg::Optional, v) => v,
                (Arg::Required, Some(v)) => Some(v),
                (Arg::Required, None) if i < argv.len() => {
                    i += 1;
                    Some(argv[i - 1].clone())
                }
                (Arg::Required, None) => {
                    return Err(getopt_error(format!(
                        "option '--{lname}' requires an argument"
                    )))
                }
            };
            opts.push((key.to_string(), val));
        } else if w.len() > 1 && w.starts_with('-') {
            let body = &w[1..];
            for (pos, c) in body.char_indices() {
                let Some(at) = SHORT.find(c).filter(|_| c != ':') else {
                    return Err(getopt_error(format!("invalid option -- '{c}'")));
                };
                if SHORT[at + c.len_utf8()..].starts_with(':') {
                    let rest = &body[pos + c.len_utf8()..];
                    let val = if !rest.is_empty() {
                        rest.to_string()
                    } else if i < argv.len() {
                        i += 1;
                        argv[i - 1].clone()
                    } else {
                        return Err(getopt_error(format!(
                            "option requires an argument -- '{c}'"
                        )));
                    };
                    opts.push((c.to_string(), Some(val)));
                    break;
                }
                opts.push((c.to_string(), None));
            }
        }
        // Anything else is an operand: getopt moves it out of the way and
        // iperf3 ignores it.
    }
    Ok(opts)
}

/// Parses `argv` (the tool first) as iperf3 3.12 does. `-v` and `-h`
/// come back as a `Refusal` with exit status 0 (their whole output).
pub fn parse(argv: &[String], system_info: &str) -> Result<Params, Refusal> {
    let mut p = Params {
        client: None,
        server: false,
        port: DEFAULT_PORT,
        bind: None,
        one_off: false,
        json: false,
        duration: 10,
        streams: 1,
        interval: 1.0,
        connect_timeout_ms: None,
    };
    let (mut client_flag, mut server_flag) = (false, false);
    for (key, val) in getopt(argv)? {
        let v = val.unwrap_or_default();
        client_flag |= CLIENT_ONLY.contains(&key.as_str());
        server_flag |= SERVER_ONLY.contains(&key.as_str());
        match key.as_str() {
            "p" => {
                let port = atoi(&v);
                if !(1..=65535).contains(&port) {
                    return Err(param_error(
                        "port number must be between 1 and 65535 inclusive",
                    ));
                }
                p.port = port as u16;
            }
            "i" => {
                p.interval = atof(&v);
                if (p.interval < 0.1 || p.interval > 60.0) && p.interval != 0.0 {
                    return Err(param_error(
                        "invalid report interval (min = 0.1, max = 60 seconds)",
                    ));
                }
            }
            "s" => {
                if p.client.is_some() {
                    return Err(param_error("cannot be both server and client"));
                }
                p.server = true;
            }
            "c" => {
                if p.server {
                    return Err(param_error("cannot be both server and client"));
                }
                p.client = Some(strip_dev(&v));
            }
            "t" => {
                let t = atoi(&v);
                if t > 86_400 {
                    return Err(param_error(
                        "test duration too long (maximum = 86400 seconds)",
                    ));
                }
                p.duration = t.max(0) as u32;
            }
            "P" => {
                let n = atoi(&v);
                if n > 128 {
                    return Err(param_error(
                        "number of parallel streams too large (maximum = 128)",
                    ));
                }
                // -P 0 or less still opens one stream here (iperf3 would
                // run a test with none).
                p.streams = n.max(1) as u32;
            }
            "B" => p.bind = Some(strip_dev(&v)),
            "1" => p.one_off = true,
            "J" => p.json = true,
            "connect-timeout" => p.connect_timeout_ms = Some(atoi(&v)),
            "v" => {
                return Err(Refusal {
                    stdout: format!(
                        "{VERSION} (cJSON 1.7.15)\n{system_info}\nOptional features available: {FEATURES}\n"
                    ),
                    stderr: String::new(),
                    exit: 0,
                })
            }
            "h" => {
                return Err(Refusal {
                    stdout: USAGE.into(),
                    stderr: String::new(),
                    exit: 0,
                })
            }
            _ => {}
        }
    }
    if p.client.is_some() && server_flag {
        return Err(param_error(
            "some option you are trying to set is server only",
        ));
    }
    if p.server && client_flag {
        return Err(param_error(
            "some option you are trying to set is client only",
        ));
    }
    if p.client.is_none() && !p.server {
        return Err(param_error("must either be a client (-c) or server (-s)"));
    }
    Ok(p)
}

/// One interval of one stream, as the sender's `tcp_info` and byte counts
/// show it. Times are seconds from the start of the test.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    pub start: f64,
    pub end: f64,
    pub bytes: u64,
    pub retransmits: u64,
    pub snd_cwnd: u64,
    pub snd_wnd: u64,
    pub rtt: u64,
    pub rttvar: u64,
}

/// One stream of a client's test.
#[derive(Debug, Clone, PartialEq)]
pub struct StreamReport {
    pub socket: i64,
    pub local_port: u16,
    pub samples: Vec<Sample>,
    pub bytes: u64,
    pub retransmits: u64,
}

/// What a client prints with `-J`.
#[derive(Debug, Clone, PartialEq)]
pub struct ClientReport {
    pub local_host: String,
    pub remote_host: String,
    /// `-c` as given.
    pub host_arg: String,
    pub port: u16,
    pub system_info: String,
    /// (`time`, `timesecs`).
    pub timestamp: (String, i64),
    pub cookie: String,
    pub mss: u64,
    pub pmtu: u64,
    pub duration: u32,
    pub streams: Vec<StreamReport>,
    /// The sender's end of the test and the receiver's, seconds.
    pub end: f64,
    pub recv_end: f64,
    /// host_total, host_user, host_system, remote_total, remote_user,
    /// remote_system.
    pub cpu: [f64; 6],
}

/// The start block of a connected client.
fn start_block(r: &ClientReport) -> J {
    let connected = r
        .streams
        .iter()
        .map(|s| {
            J::Obj(vec![
                ("socket", J::int(s.socket)),
                ("local_host", J::str(&r.local_host)),
                ("local_port", J::int(s.local_port)),
                ("remote_host", J::str(&r.remote_host)),
                ("remote_port", J::int(r.port)),
            ])
        })
        .collect();
    let mut start = vec![
        ("connected", J::Arr(connected)),
        ("version", J::str(VERSION)),
        ("system_info", J::str(&r.system_info)),
        (
            "timestamp",
            J::Obj(vec![
                ("time", J::str(&r.timestamp.0)),
                ("timesecs", J::int(r.timestamp.1)),
            ]),
        ),
        (
            "connecting_to",
            J::Obj(vec![
                ("host", J::str(&r.host_arg)),
                ("port", J::int(r.port)),
            ]),
        ),
        ("cookie", J::str(&r.cookie)),
        ("tcp_mss_default", J::int(r.mss as i64)),
        ("target_bitrate", J::int(0)),
    ];
    // 3.12 adds the socket buffer sizes once per stream.
    for _ in &r.streams {
        start.push(("sock_bufsize", J::int(0)));
        start.push(("sndbuf_actual", J::int(SNDBUF)));
        start.push(("rcvbuf_actual", J::int(RCVBUF)));
    }
    start.push((
        "test_start",
        J::Obj(vec![
            ("protocol", J::str("TCP")),
            ("num_streams", J::int(r.streams.len() as i64)),
            ("blksize", J::int(BLKSIZE as i64)),
            ("omit", J::int(0)),
            ("duration", J::int(r.duration)),
            ("bytes", J::int(0)),
            ("blocks", J::int(0)),
            ("reverse", J::int(0)),
            ("tos", J::int(0)),
            ("target_bitrate", J::int(0)),
        ]),
    ));
    J::Obj(start)
}

/// iperf3 keeps an interval's duration in a `float`.
fn float_secs(start: f64, end: f64) -> f64 {
    f64::from((end - start) as f32)
}

fn bps(bytes: u64, secs: f64) -> f64 {
    if secs > 0.0 {
        bytes as f64 * 8.0 / secs
    } else {
        0.0
    }
}

fn intervals_block(r: &ClientReport) -> J {
    let n = r.streams.iter().map(|s| s.samples.len()).min().unwrap_or(0);
    let items = (0..n)
        .map(|k| {
            let streams: Vec<J> = r
                .streams
                .iter()
                .map(|s| {
                    let x = &s.samples[k];
                    let secs = float_secs(x.start, x.end);
                    J::Obj(vec![
                        ("socket", J::int(s.socket)),
                        ("start", J::Num(x.start)),
                        ("end", J::Num(x.end)),
                        ("seconds", J::Num(secs)),
                        ("bytes", J::Num(x.bytes as f64)),
                        ("bits_per_second", J::Num(bps(x.bytes, secs))),
                        ("retransmits", J::Num(x.retransmits as f64)),
                        ("snd_cwnd", J::Num(x.snd_cwnd as f64)),
                        ("snd_wnd", J::Num(x.snd_wnd as f64)),
                        ("rtt", J::Num(x.rtt as f64)),
                        ("rttvar", J::Num(x.rttvar as f64)),
                        ("pmtu", J::Num(r.pmtu as f64)),
                        ("omitted", J::Bool(false)),
                        ("sender", J::Bool(true)),
                    ])
                })
                .collect();
            // The sum takes the first stream's times.
            let first = &r.streams[0].samples[k];
            let secs = float_secs(first.start, first.end);
            let bytes: u64 = r.streams.iter().map(|s| s.samples[k].bytes).sum();
            let retx: u64 = r.streams.iter().map(|s| s.samples[k].retransmits).sum();
            J::Obj(vec![
                ("streams", J::Arr(streams)),
                (
                    "sum",
                    J::Obj(vec![
                        ("start", J::Num(first.start)),
                        ("end", J::Num(first.end)),
                        ("seconds", J::Num(secs)),
                        ("bytes", J::Num(bytes as f64)),
                        ("bits_per_second", J::Num(bps(bytes, secs))),
                        ("retransmits", J::Num(retx as f64)),
                        ("omitted", J::Bool(false)),
                        ("sender", J::Bool(true)),
                    ]),
                ),
            ])
        })
        .collect();
    J::Arr(items)
}

fn end_block(r: &ClientReport) -> J {
    let streams = r
        .streams
        .iter()
        .map(|s| {
            let rtts: Vec<u64> = s.samples.iter().map(|x| x.rtt).collect();
            let max_rtt = rtts.iter().copied().max().unwrap_or(0);
            let min_rtt = rtts.iter().copied().min().unwrap_or(0);
            let mean_rtt = if rtts.is_empty() {
                0
            } else {
                rtts.iter().sum::<u64>() / rtts.len() as u64
            };
            let max_cwnd = s.samples.iter().map(|x| x.snd_cwnd).max().unwrap_or(0);
            let max_wnd = s.samples.iter().map(|x| x.snd_wnd).max().unwrap_or(0);
            J::Obj(vec![
                (
                    "sender",
                    J::Obj(vec![
                        ("socket", J::int(s.socket)),
                        ("start", J::int(0)),
                        ("end", J::Num(r.end)),
                        ("seconds", J::Num(r.end)),
                        ("bytes", J::Num(s.bytes as f64)),
                        ("bits_per_second", J::Num(bps(s.bytes, r.end))),
                        ("retransmits", J::Num(s.retransmits as f64)),
                        ("max_snd_cwnd", J::Num(max_cwnd as f64)),
                        ("max_snd_wnd", J::Num(max_wnd as f64)),
                        ("max_rtt", J::Num(max_rtt as f64)),
                        ("min_rtt", J::Num(min_rtt as f64)),
                        ("mean_rtt", J::Num(mean_rtt as f64)),
                        ("sender", J::Bool(true)),
                    ]),
                ),
                (
                    // 3.12 reports the sender's duration as the receiver's
                    // `seconds`, and `sender: true` on both.
                    "receiver",
                    J::Obj(vec![
                        ("socket", J::int(s.socket)),
                        ("start", J::int(0)),
                        ("end", J::Num(r.recv_end)),
                        ("seconds", J::Num(r.end)),
                        ("bytes", J::Num(s.bytes as f64)),
                        ("bits_per_second", J::Num(bps(s.bytes, r.recv_end))),
                        ("sender", J::Bool(true)),
                    ]),
                ),
            ])
        })
        .collect();
    let bytes: u64 = r.streams.iter().map(|s| s.bytes).sum();
    let retx: u64 = r.streams.iter().map(|s| s.retransmits).sum();
    J::Obj(vec![
        ("streams", J::Arr(streams)),
        (
            "sum_sent",
            J::Obj(vec![
                ("start", J::int(0)),
                ("end", J::Num(r.end)),
                ("seconds", J::Num(r.end)),
                ("bytes", J::Num(bytes as f64)),
                ("bits_per_second", J::Num(bps(bytes, r.end))),
                ("retransmits", J::Num(retx as f64)),
                ("sender", J::Bool(true)),
            ]),
        ),
        (
            "sum_received",
            J::Obj(vec![
                ("start", J::int(0)),
                ("end", J::Num(r.recv_end)),
                ("seconds", J::Num(r.recv_end)),
                ("bytes", J::Num(bytes as f64)),
                ("bits_per_second", J::Num(bps(bytes, r.recv_end))),
                ("sender", J::Bool(true)),
            ]),
        ),
        (
            "cpu_utilization_percent",
            J::Obj(vec![
                ("host_total", J::Num(r.cpu[0])),
                ("host_user", J::Num(r.cpu[1])),
                ("host_system", J::Num(r.cpu[2])),
                ("remote_total", J::Num(r.cpu[3])),
                ("remote_user", J::Num(r.cpu[4])),
                ("remote_system", J::Num(r.cpu[5])),
            ]),
        ),
        ("sender_tcp_congestion", J::str(CONGESTION)),
        ("receiver_tcp_congestion", J::str(CONGESTION)),
    ])
}

/// The client's `-J` document of a finished test, with its newline.
pub fn client_json(r: &ClientReport) -> String {
    let doc = J::Obj(vec![
        ("start", start_block(r)),
        ("intervals", intervals_block(r)),
        ("end", end_block(r)),
    ]);
    cjson::print(&doc) + "\n"
}

/// The client's `-J` document of a test that failed after it started:
/// what was measured until then, an empty `end`, and the error.
pub fn client_json_failed(r: &ClientReport, error: &str) -> String {
    let doc = J::Obj(vec![
        ("start", start_block(r)),
        ("intervals", intervals_block(r)),
        ("end", J::Obj(Vec::new())),
        ("error", J::str(error)),
    ]);
    cjson::print(&doc) + "\n"
}

/// The `-J` document of a client that never connected.
pub fn connect_error_json(system_info: &str, error: &str) -> String {
    let doc = J::Obj(vec![
        (
            "start",
            J::Obj(vec![
                ("connected", J::Arr(Vec::new())),
                ("version", J::str(VERSION)),
                ("system_info", J::str(system_info)),
            ]),
        ),
        ("intervals", J::Arr(Vec::new())),
        ("end", J::Obj(Vec::new())),
        ("error", J::str(error)),
    ]);
    cjson::print(&doc) + "\n"
}

/// `unit_snprintf` with the adaptive formats: 'A' for bytes (1024s), 'a'
/// for bits (1000s, the value given in bytes).
pub fn unit(value: f64, bits: bool) -> String {
    let (mut n, base, labels) = if bits {
        (value * 8.0, 1000.0, ["bit", "Kbit", "Mbit", "Gbit", "Tbit"])
    } else {
        (value, 1024.0, ["Byte", "KByte", "MByte", "GByte", "TByte"])
    };
    let mut conv = 0;
    while n >= base && conv < 4 {
        n /= base;
        conv += 1;
    }
    let num = if n < 9.995 {
        format!("{n:4.2}")
    } else if n < 99.95 {
        format!("{n:4.1}")
    } else {
        format!("{n:4.0}")
    };
    format!("{num} {}", labels[conv])
}

/// What the server's plain-text report needs.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerReport {
    pub port: u16,
    pub client_host: String,
    pub ctrl_port: u16,
    pub local_host: String,
    /// (socket, the client's port) per stream.
    pub streams: Vec<(i64, u16)>,
    /// (start, end, bytes per stream) per interval, seconds from the
    /// server's start of the test.
    pub intervals: Vec<(f64, f64, Vec<u64>)>,
    /// The whole test: end, bytes per stream.
    pub total: (f64, Vec<u64>),
}

const DASHES: &str = "-----------------------------------------------------------\n";
const SEPARATOR: &str = "- - - - - - - - - - - - - - - - - - - - - - - - -\n";
const HEADER: &str = "[ ID] Interval           Transfer     Bitrate\n";

/// What a server prints while it waits for a client.
pub fn server_banner(port: u16) -> String {
    format!("{DASHES}Server listening on {port} (test #1)\n{DASHES}")
}

fn bw_row(id: &str, start: f64, end: f64, bytes: u64, tail: &str) -> String {
    let secs = end - start;
    let rate = if secs > 0.0 { bytes as f64 / secs } else { 0.0 };
    format!(
        "[{id}] {start:6.2}-{end:<6.2} sec  {}s  {}s/sec                  {tail}\n",
        unit(bytes as f64, false),
        unit(rate, true)
    )
}

/// The server's report of a test it ran with `-1` (it exits after).
pub fn server_text(r: &ServerReport) -> String {
    let mut o = server_banner(r.port);
    o.push_str(&format!(
        "Accepted connection from {}, port {}\n",
        r.client_host, r.ctrl_port
    ));
    for &(sock, cport) in &r.streams {
        o.push_str(&format!(
            "[{sock:3}] local {} port {} connected to {} port {cport}\n",
            r.local_host, r.port, r.client_host
        ));
    }
    o.push_str(HEADER);
    let many = r.streams.len() > 1;
    for (start, end, bytes) in &r.intervals {
        for (&(sock, _), &b) in r.streams.iter().zip(bytes) {
            o.push_str(&bw_row(&format!("{sock:3}"), *start, *end, b, ""));
        }
        if many {
            o.push_str(&bw_row("SUM", *start, *end, bytes.iter().sum(), ""));
            o.push_str(SEPARATOR);
        }
    }
    if !many {
        o.push_str(SEPARATOR);
    }
    o.push_str(HEADER);
    let (end, totals) = &r.total;
    for (&(sock, _), &b) in r.streams.iter().zip(totals) {
        o.push_str(&bw_row(&format!("{sock:3}"), 0.0, *end, b, "receiver"));
    }
    if many {
        o.push_str(&bw_row("SUM", 0.0, *end, totals.iter().sum(), "receiver"));
    }
    o
}

/// The client's plain-text report (no `-J`).
pub fn client_text(r: &ClientReport) -> String {
    let mut o = format!("Connecting to host {}, port {}\n", r.host_arg, r.port);
    for s in &r.streams {
        o.push_str(&format!(
            "[{:3}] local {} port {} connected to {} port {}\n",
            s.socket, r.local_host, s.local_port, r.remote_host, r.port
        ));
    }
    o.push_str("[ ID] Interval           Transfer     Bitrate         Retr  Cwnd\n");
    let many = r.streams.len() > 1;
    let n = r.streams.iter().map(|s| s.samples.len()).min().unwrap_or(0);
    let rate = |bytes: u64, secs: f64| if secs > 0.0 { bytes as f64 / secs } else { 0.0 };
    for k in 0..n {
        for s in &r.streams {
            let x = &s.samples[k];
            let secs = float_secs(x.start, x.end);
            o.push_str(&format!(
                "[{:3}] {:6.2}-{:<6.2} sec  {}s  {}s/sec  {:3}   {}s       \n",
                s.socket,
                x.start,
                x.end,
                unit(x.bytes as f64, false),
                unit(rate(x.bytes, secs), true),
                x.retransmits,
                unit(x.snd_cwnd as f64, false)
            ));
        }
        if many {
            let first = &r.streams[0].samples[k];
            let secs = float_secs(first.start, first.end);
            let bytes: u64 = r.streams.iter().map(|s| s.samples[k].bytes).sum();
            let retx: u64 = r.streams.iter().map(|s| s.samples[k].retransmits).sum();
            o.push_str(&format!(
                "[SUM] {:6.2}-{:<6.2} sec  {}s  {}s/sec  {:3}             \n",
                first.start,
                first.end,
                unit(bytes as f64, false),
                unit(rate(bytes, secs), true),
                retx
            ));
            o.push_str(SEPARATOR);
        }
    }
    if !many {
        o.push_str(SEPARATOR);
    }
    o.push_str("[ ID] Interval           Transfer     Bitrate         Retr\n");
    let sender = |id: &str, bytes: u64, retx: u64| {
        format!(
            "[{id}] {:6.2}-{:<6.2} sec  {}s  {}s/sec  {:3}             sender\n",
            0.0,
            r.end,
            unit(bytes as f64, false),
            unit(rate(bytes, r.end), true),
            retx
        )
    };
    let receiver = |id: &str, bytes: u64| bw_row(id, 0.0, r.recv_end, bytes, "receiver");
    for s in &r.streams {
        let id = format!("{:3}", s.socket);
        o.push_str(&sender(&id, s.bytes, s.retransmits));
        o.push_str(&receiver(&id, s.bytes));
    }
    if many {
        let bytes: u64 = r.streams.iter().map(|s| s.bytes).sum();
        let retx: u64 = r.streams.iter().map(|s| s.retransmits).sum();
        o.push_str(&sender("SUM", bytes, retx));
        o.push_str(&receiver("SUM", bytes));
    }
    o.push_str("\niperf Done.\n");
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn parses_the_lines_rocegate_sends() {
        let p = parse(&argv("iperf3 -s -1 -p 5301 -B gpu002-r0"), "").unwrap();
        assert!(p.server && p.one_off);
        assert_eq!((p.port, p.bind.as_deref()), (5301, Some("gpu002-r0")));
        let p = parse(
            &argv("iperf3 -c gpu002-r0 -B gpu001-r0 -p 5301 -t 10 -P 8 -i 0.5 -J --connect-timeout 5000"),
            "",
        )
        .unwrap();
        assert_eq!(p.client.as_deref(), Some("gpu002-r0"));
        assert_eq!((p.duration, p.streams, p.interval), (10, 8, 0.5));
        assert_eq!(p.connect_timeout_ms, Some(5000));
        assert!(p.json);
        // Prefixes of long options, attached arguments.
        let p = parse(&argv("iperf3 -cgpu002-r0 --conn=100 --par 2"), "").unwrap();
        assert_eq!((p.streams, p.connect_timeout_ms), (2, Some(100)));
    }

    #[test]
    fn refuses_what_iperf3_refuses_with_its_words() {
        // Every message below was printed by iperf3 3.12 on Debian 12.
        let r = parse(&argv("iperf3 --bogus"), "").unwrap_err();
        assert_eq!(r.exit, 1);
        assert!(r.stdout.is_empty());
        assert_eq!(
            r.stderr,
            format!("iperf3: unrecognized option '--bogus'\n{USAGE}")
        );
        let r = parse(&argv("iperf3 -c h -x"), "").unwrap_err();
        assert!(r
            .stderr
            .starts_with("iperf3: invalid option -- 'x'\nUsage: iperf3"));
        let r = parse(&argv("iperf3 -c h -i 0.05"), "").unwrap_err();
        assert_eq!(r.stdout, USAGE);
        assert_eq!(
            r.stderr,
            "iperf3: parameter error - invalid report interval (min = 0.1, max = 60 seconds)\n\n"
        );
        let r = parse(&argv("iperf3 -c h --c 1"), "").unwrap_err();
        assert!(r.stderr.starts_with(
            "iperf3: option '--c' is ambiguous; possibilities: '--client' '--cport' '--congestion' '--connect-timeout'\n"
        ), "{}", r.stderr);
        let r = parse(&argv("iperf3 --b 1"), "").unwrap_err();
        assert!(r.stderr.starts_with(
            "iperf3: option '--b' is ambiguous; possibilities: '--bitrate' '--bytes' '--blockcount' '--bidir' '--bind' '--bind-dev'\n"
        ), "{}", r.stderr);
        for (line, msg) in [
            (
                "iperf3 -c h -P 200",
                "number of parallel streams too large (maximum = 128)",
            ),
            (
                "iperf3 -c h -t 100000",
                "test duration too long (maximum = 86400 seconds)",
            ),
            ("iperf3 -c h -s", "cannot be both server and client"),
            (
                "iperf3 -p 5998",
                "must either be a client (-c) or server (-s)",
            ),
            (
                "iperf3 -c h -p 70000",
                "port number must be between 1 and 65535 inclusive",
            ),
            (
                "iperf3 -s -t 5",
                "some option you are trying to set is client only",
            ),
            (
                "iperf3 -c h -1",
                "some option you are trying to set is server only",
            ),
        ] {
            let r = parse(&argv(line), "").unwrap_err();
            assert_eq!(
                r.stderr,
                format!("iperf3: parameter error - {msg}\n\n"),
                "{line}"
            );
        }
        let r = parse(&argv("iperf3 -c h -p"), "").unwrap_err();
        assert!(r
            .stderr
            .starts_with("iperf3: option requires an argument -- 'p'\n"));
        let r = parse(&argv("iperf3 -c h --port"), "").unwrap_err();
        assert!(r
            .stderr
            .starts_with("iperf3: option '--port' requires an argument\n"));
    }

    #[test]
    fn c_number_parsing() {
        assert_eq!(atoi("0.5"), 0);
        assert_eq!(atoi(" 12abc"), 12);
        assert_eq!(atoi("x"), 0);
        assert_eq!(atof("0.5abc"), 0.5);
        assert_eq!(atof("1e-1"), 0.1);
        assert_eq!(atof("2e"), 2.0);
        assert_eq!(atof("."), 0.0);
    }

    #[test]
    fn units_as_unit_snprintf() {
        // From the real server report in testdata/iperf3/server-P2-t2.txt.
        assert_eq!(unit(2.33 * 1024.0 * 1024.0 * 1024.0, false), "2.33 GByte");
        assert_eq!(unit(960.0 * 1024.0, false), " 960 KByte");
        assert_eq!(unit(1024.0 * 1024.0, false), "1.00 MByte");
        assert_eq!(unit(10.0e9 / 8.0, true), "10.0 Gbit");
        assert_eq!(unit(9.80e9 / 8.0, true), "9.80 Gbit");
        assert_eq!(unit(0.0, true), "0.00 bit");
    }
}
