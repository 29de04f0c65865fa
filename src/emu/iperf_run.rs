//! iperf3 tests in an emulated batch: the addresses on the command line
//! resolved to NICs the way the hosts would resolve them, every client
//! paired with the server listening on its target address and port, one
//! TCP flow per stream (its own ephemeral source port, so ECMP places each
//! stream on its own) plus one for the control connection, and the
//! outputs rendered from the streams' time series once the batch's
//! segments are known.
//!
//! What a stream does with its share is `tcp`'s; what the outputs look
//! like is `iperf`'s.

use std::collections::HashMap;

use crate::config::model::{NicId, NodeId};
use crate::exec::types::{ExecFailure, Invocation, InvocationOutput};

use super::batch::{Flow, Segment, TcpFlow};
use super::fabric::IPPROTO_TCP;
use super::iperf::{self, ClientReport, Params, Sample, ServerReport, StreamReport, BLKSIZE};
use super::noise::Exec;
use super::perftest::Refusal;
use super::rng::{hash_words, Rng};
use super::tcp::{self, Timeline};
use super::{done, Emulator, Parsed, CLIENT_DELAY_S};

/// Seconds from the client's start to its first data byte: the control
/// connection, the parameter exchange and one connect per stream. iperf3
/// 3.12 over loopback on a build machine of this project spends 10–30 ms
/// outside `-t`.
pub const SETUP_S: f64 = 0.02;
/// Seconds of the end exchange (TEST_END, results, IPERF_DONE) once the
/// control connection delivers.
pub const END_S: f64 = 0.005;
/// How much later the receiver's clock stops than the sender's (0.45 ms
/// in the real 3.12 run in testdata/iperf3/client-P2-t2-i0.5.json).
const RECV_LAG_S: f64 = 0.000_45;
/// Virtual time zero as wall-clock time (2026-01-01T00:00:00Z), for the
/// `timestamp` iperf3 prints.
pub const EPOCH_UNIX: i64 = 1_767_225_600;
/// `uname` of a Debian 12 node, after its host name.
const UNAME: &str = "6.1.0-18-amd64 #1 SMP PREEMPT_DYNAMIC Debian 6.1.76-1 (2024-02-01) x86_64";
/// MTU of the management network and of the loopback device.
const MGMT_MTU: u32 = 1500;
const LOOPBACK_MTU: u32 = 65_536;
/// Names of the host itself.
const LOOPBACK: [&str; 3] = ["localhost", "127.0.0.1", "::1"];
/// Linux `ip_local_port_range` default.
const EPHEMERAL: (u16, u16) = (32_768, 60_999);

/// What an address on an iperf3 command line names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Addr {
    /// A NIC's data address (its inventory address or its IP).
    Nic(NicId),
    /// A node by its name or management address (or the loopback).
    Host(NodeId),
}

/// One end of a test.
#[derive(Debug, Clone, PartialEq)]
pub struct End {
    pub addr: Addr,
    pub node: NodeId,
    pub ip: String,
}

/// An iperf3 command line that resolved.
#[derive(Debug, Clone)]
pub struct IperfCmd {
    pub p: Params,
    pub node: NodeId,
    /// The client's source and target; `None` for a server.
    pub client: Option<(End, End)>,
    /// A server's listening address (`None`: every address of its node).
    pub listen: Option<Addr>,
}

/// A client in a batch, its flows and what it connects to.
pub struct IperfTest {
    pub at: (usize, usize),
    pub server: Option<(usize, usize)>,
    /// The server already had a client (`-1` serves one test).
    pub busy: bool,
    pub ctrl: usize,
    pub ctrl_port: u16,
    pub streams: Vec<usize>,
    pub sports: Vec<u16>,
}

fn system_info(host: &str) -> String {
    format!("Linux {host} {UNAME}")
}

/// 0 and the end of every `-i` interval of a test of `span` seconds
/// (one interval with `-i 0`), each a little late as a timer fires.
fn interval_bounds(interval: f64, span: f64, rng: &mut Rng) -> Vec<f64> {
    let n = if interval > 0.0 {
        ((span / interval) - 1e-9).ceil().max(1.0) as usize
    } else {
        1
    };
    let mut bounds = vec![0.0];
    for k in 1..=n {
        let nominal = if interval > 0.0 {
            (k as f64 * interval).min(span)
        } else {
            span
        };
        bounds.push(round_us(nominal + rng.range(0.000_1, 0.000_9)));
    }
    bounds
}

fn round_us(t: f64) -> f64 {
    (t * 1e6).round() / 1e6
}

/// `Sun, 22 Nov 2026 13:57:52 GMT` for a virtual time.
fn timestamp(t: f64) -> (String, i64) {
    let secs = EPOCH_UNIX + t.floor() as i64;
    let fmt = time::macros::format_description!(
        "[weekday repr:short], [day] [month repr:short] [year] [hour]:[minute]:[second] GMT"
    );
    let text = time::OffsetDateTime::from_unix_timestamp(secs)
        .ok()
        .and_then(|d| d.format(&fmt).ok())
        .unwrap_or_default();
    (text, secs)
}

/// What a client prints when it gives up before or during its test.
fn client_error(p: &Params, host: &str, msg: &str) -> Refusal {
    if p.json {
        // iperf3 3.12 exits 0 after printing an error as JSON
        // (esnet/iperf#1405, fixed in 3.13); without -J it exits 1.
        Refusal {
            stdout: iperf::connect_error_json(&system_info(host), msg),
            stderr: String::new(),
            exit: 0,
        }
    } else {
        Refusal {
            stdout: String::new(),
            stderr: format!("iperf3: error - {msg}\n"),
            exit: 1,
        }
    }
}

impl Emulator {
    /// What `a` names, seen from `node`; `Err` with the resolver's words.
    fn resolve(&self, a: &str, node: NodeId) -> Result<Addr, &'static str> {
        if LOOPBACK.contains(&a) {
            return Ok(Addr::Host(node));
        }
        let ip = a.parse::<std::net::Ipv4Addr>().ok();
        if let Some(n) = (0..self.inv.nics.len()).find(|&i| {
            self.inv.nics[i].address.as_deref() == Some(a) || Some(self.fabric.nic_ip(i)) == ip
        }) {
            return Ok(Addr::Nic(n));
        }
        if let Some(&n) = self.inv.node_by_name.get(a) {
            return Ok(Addr::Host(n));
        }
        if let Some(n) = self.inv.nodes.iter().position(|n| n.address == a) {
            return Ok(Addr::Host(n));
        }
        if a.parse::<std::net::IpAddr>().is_ok() {
            // An address nobody in the pod has: nothing answers ARP for it.
            Err("No route to host")
        } else {
            Err("Name or service not known")
        }
    }

    fn node_of(&self, a: Addr) -> NodeId {
        match a {
            Addr::Nic(n) => self.inv.nics[n].node,
            Addr::Host(n) => n,
        }
    }

    fn end_of(&self, addr: Addr, arg: &str) -> End {
        let node = self.node_of(addr);
        let ip = match addr {
            Addr::Nic(n) => self.fabric.nic_ip(n).to_string(),
            Addr::Host(_) if LOOPBACK.contains(&arg) => "127.0.0.1".into(),
            Addr::Host(n) => {
                let a = &self.inv.nodes[n].address;
                if a.parse::<std::net::Ipv4Addr>().is_ok() {
                    a.clone()
                } else {
                    let n1 = n as u32 + 1;
                    format!("10.255.{}.{}", n1 >> 8, n1 & 0xFF)
                }
            }
        };
        End { addr, node, ip }
    }

    /// An `iperf3` command line on `inv.host`.
    pub(super) fn parse_iperf(&self, inv: &Invocation, argv: &[String]) -> Parsed {
        let host = inv.host.as_str();
        let Some(&node) = self.inv.node_by_name.get(host) else {
            return super::not_found(&argv[0]);
        };
        let p = match iperf::parse(argv, &system_info(host)) {
            Ok(p) => p,
            Err(r) => return done(r),
        };
        if p.server {
            let listen = match p.bind.as_deref().map(|b| (b, self.resolve(b, node))) {
                None => None,
                Some((_, Ok(a))) if self.node_of(a) == node => Some(a),
                Some((_, r)) => {
                    let why = match r {
                        Err("Name or service not known") => "Name or service not known",
                        _ => "Cannot assign requested address",
                    };
                    return done(Refusal {
                        stdout: String::new(),
                        stderr: format!(
                            "iperf3: error - unable to start listener for connections: {why}\niperf3: exiting\n"
                        ),
                        exit: 1,
                    });
                }
            };
            return Parsed::Iperf(Box::new(IperfCmd {
                p,
                node,
                client: None,
                listen,
            }));
        }
        let target_arg = p.client.clone().unwrap_or_default();
        // iperf3 resolves the local address, then the server, then binds.
        let src = match p.bind.as_deref().map(|b| self.resolve(b, node)) {
            Some(Err("Name or service not known")) => {
                return done(client_error(
                    &p,
                    host,
                    "unable to connect to server: Name or service not known",
                ))
            }
            other => other,
        };
        let dst = match self.resolve(&target_arg, node) {
            Ok(a) => a,
            Err(why) => {
                let mut r = done(client_error(
                    &p,
                    host,
                    &format!("unable to connect to server: {why}"),
                ));
                if why == "No route to host" {
                    if let Parsed::Done { secs, .. } = &mut r {
                        *secs = CLIENT_DELAY_S + self.no_route_s(&p).0;
                    }
                }
                return r;
            }
        };
        let src = match src {
            None => {
                // The kernel picks the source: the NIC on the target's rail.
                let nics = &self.inv.nodes[node].nics;
                let rail = match dst {
                    Addr::Nic(n) => Some(self.inv.nics[n].rail),
                    Addr::Host(_) => None,
                };
                match (rail, nics.first()) {
                    (Some(r), Some(&first)) => Addr::Nic(
                        nics.iter()
                            .copied()
                            .find(|&n| self.inv.nics[n].rail == r)
                            .unwrap_or(first),
                    ),
                    _ => Addr::Host(node),
                }
            }
            Some(Ok(a)) if self.node_of(a) == node => a,
            Some(_) => {
                return done(client_error(
                    &p,
                    host,
                    "unable to connect to server: Cannot assign requested address",
                ))
            }
        };
        let src_arg = p.bind.clone().unwrap_or_default();
        let ends = (self.end_of(src, &src_arg), self.end_of(dst, &target_arg));
        Parsed::Iperf(Box::new(IperfCmd {
            p,
            node,
            client: Some(ends),
            listen: None,
        }))
    }

    /// How long a connect to an unreachable address takes and what it
    /// says: ARP gives up first unless `--connect-timeout` is shorter.
    fn no_route_s(&self, p: &Params) -> (f64, &'static str) {
        match p.connect_timeout_ms {
            Some(ms) if ms >= 0 && (ms as f64) / 1e3 < tcp::NEIGH_FAIL_S => {
                (ms as f64 / 1e3, "Connection timed out")
            }
            _ => (tcp::NEIGH_FAIL_S, "No route to host"),
        }
    }

    fn ephemeral(&self, used: &mut Vec<u16>, salt: &[u64]) -> u16 {
        let span = u64::from(EPHEMERAL.1 - EPHEMERAL.0) + 1;
        let mut words = vec![self.batches, 0x1FE3];
        words.extend_from_slice(salt);
        let mut port = EPHEMERAL.0 + (hash_words(self.seed, &words) % span) as u16;
        while used.contains(&port) {
            port = if port >= EPHEMERAL.1 {
                EPHEMERAL.0
            } else {
                port + 1
            };
        }
        used.push(port);
        port
    }

    /// Pairs every iperf3 client of the batch with its server and adds
    /// their flows: one per stream from the client's NIC to the server's,
    /// and one without rate for the control connection (its path decides
    /// whether the client can connect and finish).
    pub(super) fn iperf_flows(
        &self,
        parsed: &[Vec<Parsed>],
        execs: &[Vec<Exec>],
        flows: &mut Vec<Flow>,
        at: &dyn Fn(usize, usize) -> f64,
    ) -> Vec<IperfTest> {
        let mut servers: HashMap<(NodeId, u16), Vec<(usize, usize)>> = HashMap::new();
        for (si, step) in parsed.iter().enumerate() {
            for (ii, pp) in step.iter().enumerate() {
                if let Parsed::Iperf(c) = pp {
                    if c.client.is_none() {
                        servers
                            .entry((c.node, c.p.port))
                            .or_default()
                            .push((si, ii));
                    }
                }
            }
        }
        let mut taken: HashMap<(usize, usize), ()> = HashMap::new();
        let mut tests = Vec::new();
        for (si, step) in parsed.iter().enumerate() {
            for (ii, pp) in step.iter().enumerate() {
                let Parsed::Iperf(c) = pp else { continue };
                let Some((src, dst)) = &c.client else {
                    continue;
                };
                let server = servers
                    .get(&(dst.node, c.p.port))
                    .into_iter()
                    .flatten()
                    .copied()
                    .find(|&(ssi, sii)| match &parsed[ssi][sii] {
                        Parsed::Iperf(s) => s.listen.is_none() || s.listen == Some(dst.addr),
                        _ => false,
                    });
                // Same host or a management address: not on the fabric.
                let off_fabric = src.node == dst.node
                    || matches!(src.addr, Addr::Host(_))
                    || matches!(dst.addr, Addr::Host(_));
                let mtu = self.stream_mtu(src, dst);
                let nic_or_first = |e: &End| match e.addr {
                    Addr::Nic(n) => n,
                    Addr::Host(node) => self.inv.nodes[node].nics.first().copied().unwrap_or(0),
                };
                let (a, b) = (nic_or_first(src), nic_or_first(dst));
                let process = tests.len();
                let mut used = Vec::new();
                let ctrl_port = self.ephemeral(&mut used, &[si as u64, ii as u64, 0xC]);
                // A client that cannot reach its server as the batch starts
                // never opens its streams (and never takes the server).
                let reachable = off_fabric
                    || self
                        .fabric
                        .path_l4(a, b, IPPROTO_TCP, ctrl_port, c.p.port)
                        .is_some();
                let busy = server.is_some_and(|sv| taken.contains_key(&sv));
                if let (Some(sv), true) = (server, reachable) {
                    taken.insert(sv, ());
                }
                // What one core moves varies from run to run (`noise`).
                let exec = execs[si][ii];
                let process_gbps = self.noise.tcp_process_gbps(exec, tcp::PROCESS_GBPS);
                let tcp = || TcpFlow {
                    dport: c.p.port,
                    process,
                    process_gbps,
                    mtu,
                    off_fabric,
                };
                let ctrl = flows.len();
                let mut control = Flow::roce(a, b, ctrl_port, 0.0, (f64::INFINITY, f64::INFINITY));
                control.tcp = Some(tcp());
                flows.push(control);
                let mut streams = Vec::new();
                let mut sports = Vec::new();
                if server.is_some() && !busy && reachable {
                    let from = at(si, ii) + CLIENT_DELAY_S + SETUP_S;
                    for k in 0..c.p.streams {
                        let sport =
                            self.ephemeral(&mut used, &[si as u64, ii as u64, u64::from(k)]);
                        streams.push(flows.len());
                        sports.push(sport);
                        let mut f = Flow::roce(a, b, sport, f64::INFINITY, (from, f64::INFINITY));
                        f.tcp = Some(tcp());
                        f.wobble = Some(self.noise.tcp_wobble(exec, u64::from(k), from));
                        flows.push(f);
                    }
                }
                tests.push(IperfTest {
                    at: (si, ii),
                    server,
                    busy,
                    ctrl,
                    ctrl_port,
                    streams,
                    sports,
                });
            }
        }
        tests
    }

    /// Renders every iperf3 invocation of the batch: the clients from
    /// their streams' time series, the servers from what their client did
    /// (or, with no client, waiting until the harness kills them).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn render_iperf(
        &self,
        tests: &[IperfTest],
        batch: &[crate::exec::types::StepCommands],
        parsed: &[Vec<Parsed>],
        segs: &[Segment],
        flows: &mut [Flow],
        out: &mut [Vec<InvocationOutput>],
        at: &dyn Fn(usize, usize) -> f64,
        jitter: &dyn Fn(usize, usize) -> Rng,
    ) {
        let mut served: HashMap<(usize, usize), ()> = HashMap::new();
        for t in tests {
            if let Some(sv) = self.render_test(t, batch, parsed, segs, flows, out, at, jitter) {
                served.insert(sv, ());
            }
        }
        for (si, step) in parsed.iter().enumerate() {
            for (ii, pp) in step.iter().enumerate() {
                let Parsed::Iperf(c) = pp else { continue };
                if c.client.is_some() || served.contains_key(&(si, ii)) {
                    continue;
                }
                // A server nobody ran a test with waits until killed.
                let inv = &batch[si].invocations[ii];
                let limit = inv.timeout.as_secs_f64();
                let o = &mut out[si][ii];
                o.stdout = iperf::server_banner(c.p.port);
                o.stderr = "iperf3: interrupt - the server has terminated\n".into();
                o.exit = None;
                o.failure = Some(ExecFailure::TimedOut(format!(
                    "iperf3 on {} timed out after {limit:.0}s waiting for a client",
                    inv.host
                )));
                o.ended_s = at(si, ii) + limit;
            }
        }
    }

    /// One client (and its server, when the test ran): returns the server
    /// it served.
    #[allow(clippy::too_many_arguments)]
    fn render_test(
        &self,
        t: &IperfTest,
        batch: &[crate::exec::types::StepCommands],
        parsed: &[Vec<Parsed>],
        segs: &[Segment],
        flows: &mut [Flow],
        out: &mut [Vec<InvocationOutput>],
        at: &dyn Fn(usize, usize) -> f64,
        jitter: &dyn Fn(usize, usize) -> Rng,
    ) -> Option<(usize, usize)> {
        let (cs, ci) = t.at;
        let Parsed::Iperf(c) = &parsed[cs][ci] else {
            return None;
        };
        let (src, dst) = c.client.as_ref()?;
        let p = &c.p;
        let inv = &batch[cs].invocations[ci];
        let host = inv.host.as_str();
        let t_c = at(cs, ci) + CLIENT_DELAY_S;
        let limit = at(cs, ci) + inv.timeout.as_secs_f64();
        let live = |f: usize, when: f64| {
            segs.iter()
                .find(|s| s.t0 <= when && when < s.t1)
                .is_some_and(|s| s.paths[f].is_some())
        };
        let fail = |o: &mut InvocationOutput, msg: &str, when: f64| {
            let r = client_error(p, host, msg);
            o.started_s = t_c;
            o.stdout = r.stdout;
            o.stderr = r.stderr;
            o.exit = Some(r.exit);
            o.ended_s = when;
        };
        // Streams send nothing unless the test below runs.
        for &f in &t.streams {
            flows[f].window = (f64::INFINITY, f64::INFINITY);
        }
        let o = &mut out[cs][ci];
        if !live(t.ctrl, t_c) {
            let (secs, why) = self.no_route_s(p);
            fail(
                o,
                &format!("unable to connect to server: {why}"),
                t_c + secs,
            );
            return None;
        }
        let Some(sv) = t.server else {
            fail(
                o,
                "unable to connect to server: Connection refused",
                t_c + 0.001,
            );
            return None;
        };
        if t.busy {
            fail(
                o,
                "the server is busy running a test. try again later",
                t_c + 0.002,
            );
            return None;
        }
        let Parsed::Iperf(server) = &parsed[sv.0][sv.1] else {
            return None;
        };
        if t.streams.is_empty() {
            // No path as the batch started, one by the time it connected:
            // too close to call; it is answered as the start saw it.
            let (secs, why) = self.no_route_s(p);
            fail(
                o,
                &format!("unable to connect to server: {why}"),
                t_c + secs,
            );
            return None;
        }
        let t0 = t_c + SETUP_S;
        // -t 0 runs until the harness kills it.
        let dur = if p.duration == 0 {
            (limit - t0).max(0.0)
        } else {
            f64::from(p.duration)
        };
        // Interval ends, seconds from the start: the timer fires a little
        // late, and the last firing ends the test.
        let mut rng = jitter(cs, ci);
        let mut bounds = interval_bounds(p.interval, dur, &mut rng);
        let t_end = t0 + bounds.last().copied().unwrap_or(dur);
        let mss = tcp::mss(self.stream_mtu(src, dst));
        let lines: Vec<Timeline> = t
            .streams
            .iter()
            .map(|&f| Timeline::build(segs, f, t0, t_end, mss, flows[f].wobble))
            .collect();
        let failed_at = lines.iter().filter_map(|l| l.failed_at).reduce(f64::min);
        // The end exchange needs the control connection: lost while its
        // path is down, it is resent on the retransmission timer.
        let finish = |from: f64| -> Option<f64> {
            let mut when = from;
            let mut step = tcp::RTO_MIN_S;
            while when - from < tcp::give_up_s() && when < limit {
                if live(t.ctrl, when) {
                    return Some(when + END_S);
                }
                when += step;
                step = (step * 2.0).min(tcp::RTO_MAX_S);
            }
            None
        };
        let stop = failed_at.unwrap_or(t_end);
        let done_at = if p.duration == 0 { None } else { finish(stop) };
        for (k, &f) in t.streams.iter().enumerate() {
            flows[f].window = (t0, stop);
            flows[f].gaps = lines[k].gaps.clone();
        }
        // A test that failed reports the intervals it finished.
        bounds.retain(|&b| t0 + b <= stop + 1e-9);
        let report = self.client_report(p, src, dst, t, &lines, t_c, t0, &bounds, &mut rng);
        let server_report = self.server_report(&server.p, src, dst, t, &lines, t0, &report);
        let o = &mut out[cs][ci];
        o.started_s = t_c;
        let s = &mut out[sv.0][sv.1];
        s.started_s = at(sv.0, sv.1);
        match (done_at, failed_at) {
            (Some(end), None) if end <= limit => {
                let o = &mut out[cs][ci];
                o.stdout = if p.json {
                    iperf::client_json(&report)
                } else {
                    iperf::client_text(&report)
                };
                o.exit = Some(0);
                o.ended_s = end;
                let s = &mut out[sv.0][sv.1];
                s.stdout = iperf::server_text(&server_report);
                s.exit = Some(0);
                s.ended_s = end + RECV_LAG_S;
            }
            (Some(end), Some(_)) if end <= limit => {
                // A stream's connection timed out (tcp_retries2).
                let msg = "unable to write to stream socket: Connection timed out";
                let o = &mut out[cs][ci];
                if p.json {
                    o.stdout = iperf::client_json_failed(&report, msg);
                    o.exit = Some(0);
                } else {
                    o.stderr = format!("iperf3: error - {msg}\n");
                    o.exit = Some(1);
                }
                o.ended_s = end;
                let s = &mut out[sv.0][sv.1];
                s.stdout = iperf::server_banner(server.p.port);
                s.stderr = "iperf3: error - control socket has closed unexpectedly\n".into();
                s.exit = Some(1);
                s.ended_s = end;
            }
            _ => {
                // Never finished: killed at the harness's timeout, with -J
                // before it printed anything.
                let o = &mut out[cs][ci];
                o.stdout = if p.json {
                    String::new()
                } else {
                    format!(
                        "Connecting to host {}, port {}\n",
                        p.client.as_deref().unwrap_or_default(),
                        p.port
                    )
                };
                o.exit = None;
                o.failure = Some(ExecFailure::TimedOut(format!(
                    "iperf3 on {host} timed out after {:.0}s",
                    inv.timeout.as_secs_f64()
                )));
                o.ended_s = limit;
                let sinv = &batch[sv.0].invocations[sv.1];
                let s = &mut out[sv.0][sv.1];
                s.stdout = iperf::server_banner(server.p.port);
                s.stderr = "iperf3: interrupt - the server has terminated\n".into();
                s.exit = None;
                s.failure = Some(ExecFailure::TimedOut(format!(
                    "iperf3 on {} timed out after {:.0}s",
                    sinv.host,
                    sinv.timeout.as_secs_f64()
                )));
                s.ended_s = at(sv.0, sv.1) + sinv.timeout.as_secs_f64();
            }
        }
        Some(sv)
    }

    /// The client's samples: one per stream per `-i` interval, from the
    /// streams' time series. `span` is how long the test ran.
    #[allow(clippy::too_many_arguments)]
    fn client_report(
        &self,
        p: &Params,
        src: &End,
        dst: &End,
        t: &IperfTest,
        lines: &[Timeline],
        t_c: f64,
        t0: f64,
        bounds: &[f64],
        rng: &mut Rng,
    ) -> ClientReport {
        let mtu = self.stream_mtu(src, dst);
        let mss = tcp::mss(mtu);
        let end = bounds.last().copied().unwrap_or(0.0);
        let blocks =
            |l: &Timeline, x: f64| ((l.bytes(t0 + x) / BLKSIZE as f64).floor() as u64) * BLKSIZE;
        let mut streams = Vec::new();
        let mut total_gbits = 0.0;
        for (j, l) in lines.iter().enumerate() {
            let wnd_factor = rng.range(0.85, 1.0);
            // The other streams are read a few µs after the first.
            let ends: Vec<f64> = bounds
                .iter()
                .enumerate()
                .map(|(k, &b)| {
                    if k == 0 || j == 0 {
                        b
                    } else {
                        round_us(b + rng.range(0.000_002, 0.000_02))
                    }
                })
                .collect();
            let mut samples: Vec<Sample> = Vec::new();
            for k in 1..ends.len() {
                let (a, b) = (ends[k - 1], ends[k]);
                let (rtt, cwnd) = l.info(t0 + b);
                let bytes = blocks(l, b) - blocks(l, a);
                // Nothing acknowledged, no new RTT sample: tcp_info keeps
                // the last smoothed RTT.
                let (rtt, rttvar) = match samples.last() {
                    Some(prev) if bytes == 0 => (prev.rtt as f64, prev.rttvar as f64),
                    _ => {
                        let rtt = (rtt * rng.range(0.9, 1.1)).round().max(1.0);
                        (rtt, (rtt * rng.range(0.05, 0.3)).round().max(1.0))
                    }
                };
                let cwnd = (cwnd / mss).round().max(1.0) * mss;
                let wnd = (cwnd * 2.0).clamp(64.0 * 1024.0, iperf::MAX_RCV_WINDOW) * wnd_factor;
                samples.push(Sample {
                    start: a,
                    end: b,
                    bytes,
                    retransmits: (l.retransmits(t0 + b).floor() - l.retransmits(t0 + a).floor())
                        .max(0.0) as u64,
                    snd_cwnd: cwnd as u64,
                    snd_wnd: ((wnd / 128.0).floor() * 128.0) as u64,
                    rtt: rtt as u64,
                    rttvar: rttvar as u64,
                });
            }
            let last = *ends.last().unwrap_or(&end);
            let bytes = blocks(l, last);
            total_gbits += bytes as f64 * 8.0 / 1e9;
            streams.push(StreamReport {
                socket: 5 + 2 * j as i64,
                local_port: t.sports[j],
                samples,
                bytes,
                retransmits: l.retransmits(t0 + last).floor().max(0.0) as u64,
            });
        }
        // CPU: the sending thread is busy in proportion to what it moves
        // of what one core can move; the receiver spends about half as much.
        let util = if end > 0.0 {
            (total_gbits / end / tcp::PROCESS_GBPS).min(1.0)
        } else {
            0.0
        };
        let host_total = (100.0 * (0.02 + 0.965 * util) + rng.range(-0.5, 0.5)).clamp(0.5, 99.9);
        let host_user = host_total * rng.range(0.005, 0.03);
        let remote_total = host_total * rng.range(0.35, 0.55);
        let remote_user = remote_total * rng.range(0.02, 0.06);
        let mut cookie = String::new();
        for _ in 0..36 {
            let c = b"abcdefghijklmnopqrstuvwxyz234567"[rng.below(32)];
            cookie.push(c as char);
        }
        ClientReport {
            local_host: src.ip.clone(),
            remote_host: dst.ip.clone(),
            host_arg: p.client.clone().unwrap_or_default(),
            port: p.port,
            system_info: system_info(&self.inv.nodes[src.node].name),
            timestamp: timestamp(t_c),
            cookie,
            mss: mss as u64,
            pmtu: u64::from(mtu),
            duration: p.duration,
            streams,
            end,
            recv_end: round_us(end + RECV_LAG_S),
            cpu: [
                host_total,
                host_user,
                host_total - host_user,
                remote_total,
                remote_user,
                remote_total - remote_user,
            ],
        }
    }

    fn stream_mtu(&self, src: &End, dst: &End) -> u32 {
        if src.node == dst.node {
            LOOPBACK_MTU
        } else {
            match (src.addr, dst.addr) {
                (Addr::Nic(n), Addr::Nic(_)) => self.world.nic_cfg[n].mtu,
                _ => MGMT_MTU,
            }
        }
    }

    /// The server's view: its own report interval (`-i`, 1 s by default),
    /// bytes as received, and the last, short interval iperf3 prints when
    /// it still received something in it.
    #[allow(clippy::too_many_arguments)]
    fn server_report(
        &self,
        sp: &Params,
        src: &End,
        dst: &End,
        t: &IperfTest,
        lines: &[Timeline],
        t0: f64,
        r: &ClientReport,
    ) -> ServerReport {
        let span = r.recv_end;
        let got = |k: usize, x: f64| -> u64 {
            (lines[k].bytes(t0 + x).floor() as u64).min(r.streams[k].bytes)
        };
        let mut intervals = Vec::new();
        let step = if sp.interval > 0.0 { sp.interval } else { span };
        let mut a = 0.0;
        while a < span - 1e-9 {
            let b = (a + step).min(span);
            let bytes: Vec<u64> = (0..lines.len()).map(|k| got(k, b) - got(k, a)).collect();
            let short = b - a < 0.1 * step;
            if !short || bytes.iter().any(|&x| x > 0) {
                intervals.push((a, b, bytes));
            }
            a = b;
        }
        ServerReport {
            port: sp.port,
            client_host: src.ip.clone(),
            ctrl_port: t.ctrl_port,
            local_host: dst.ip.clone(),
            streams: t
                .sports
                .iter()
                .enumerate()
                .map(|(k, &port)| (5 + 3 * k as i64, port))
                .collect(),
            intervals,
            total: (span, r.streams.iter().map(|s| s.bytes).collect()),
        }
    }
}
