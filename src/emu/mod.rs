//! The emulated fabric: a model of a RoCEv2 pod that answers the command
//! lines rocegate sends (perftest, nccl-tests under mpirun or srun, iperf3,
//! the counter reads and fault commands) with the
//! output the real tools print, computed from the inventory's topology and
//! from every flow running at the same time. It is not a packet simulator, it
//! never returns canned numbers, it never sleeps (time is virtual), and it is
//! reached only through the emulated transport: nothing that parses, scores
//! or reports imports it.
//!
//! # The model
//!
//! **Topology** (`fabric`). Every inventory cable is two directed links (full
//! duplex). A host cable runs at the slower of the cable and the NIC
//! (`nic_speed` lowers it, `slow_node` scales every cable of the node by its
//! factor, `uplink_down` removes a leaf–spine cable from routing). A flow
//! between NICs on one leaf crosses NIC→leaf and leaf→NIC; across leaves it
//! crosses NIC→leaf, leaf→spine, spine→leaf and leaf→NIC.
//!
//! **Capacities in payload terms.** Each link carries at most
//! `line × MTU / (MTU + 82)` of payload, 82 bytes being a RoCEv2 packet's
//! Ethernet header, FCS, preamble, inter-packet gap, IPv4, UDP, BTH and ICRC.
//! For 400G: 392.15 Gb/s at MTU 4096, 370.34 Gb/s at MTU 1024 (DESIGN.md,
//! "Reference numbers"). MTU is `fabric.roce.mtu`.
//!
//! **ECMP.** Each QP is its own flow. Its UDP source port comes from the two
//! QP numbers as the Linux kernel computes it for mlx5
//! (`rdma_calc_flow_label`, `rdma_flow_label_to_udp_sport`); QP numbers are
//! handed out per NIC from a seeded counter, as a real NIC hands them out.
//! The source leaf hashes (src IP, dst IP, sport, 4791) with its identity and
//! the emulator's seed onto one of its uplinks; the spine hashes the same
//! tuple onto one of its parallel downlinks to the destination leaf. So two
//! flows can land on one uplink while another stays idle, as in real fabrics,
//! and a different seed places them differently.
//!
//! **Sharing.** All flows of a batch (every perftest QP, every NCCL ring
//! connection) are shared max-min fairly over every directed link at once
//! (`share`, progressive filling): a steady-state picture of what DCQCN and
//! PFC converge to on a lossless fabric.
//!
//! **perftest bandwidth.** A pair with `-q N` has N flows (and N more the
//! other way with `-b`); its bandwidth is their sum. A QP also moves at most
//! `QP_MSG_RATE` (10 M msg/s for writes; ×0.9 send, ×0.6 read) × message
//! size, so `-a` curves rise with size and reach the network share near
//! 4–8 KiB. Each QP's network share is computed once per batch (with its
//! largest size); the row at size s is `Σ min(share, rate × s)`. A step lasts
//! 2 s of connection setup plus `-D`, or iterations × QPs × size / bandwidth
//! per size (default iterations 5000 for ib_write_bw, 1000 otherwise, as in
//! perftest). Peaks carry a seeded 0.1–0.6% excess, never above the cable's
//! payload capacity; with `-D` they print 0.00.
//!
//! **perftest latency.** One-way latency is 1.0 µs through one switch plus
//! 0.6 µs per further switch (single-digit µs through a leaf–spine–leaf path,
//! in line with Imbue's 4.2 µs p99 gate), plus serialisation of the message
//! at the path's payload rate. ib_write_lat prints it (half a round trip),
//! ib_send_lat adds 0.15 µs of receive-side work, ib_read_lat prints a full
//! round trip (2 × one-way + 0.3 µs). The hosts' and the run's excess
//! lengthen the fixed part, and each row draws t_min, t_avg, a tail skewed
//! upward and t_max around it (`noise`, `perftest::lat_stats`). Latency
//! probes are not added as flows (a ping-pong of one message loads nothing).
//!
//! **Collectives** (`nccl`). One ring per rail: with g GPUs per node and the
//! HCAs that `NCCL_IB_HCA` selects, rail r's ring sends from node i's NIC r
//! to node i+1's NIC r, with 2 channels × `NCCL_IB_QPS_PER_CONNECTION` flows
//! per edge, shared with everything else in the batch. A ring is as fast as
//! its slowest edge and the rails run in lockstep, so
//! `busbw_plateau = rails × min over rails and edges(edge rate) / 8 × 0.94`
//! GB/s, capped by NVLink (480 GB/s); one node alone gets the NVLink figure.
//! An operation of S bytes over N ranks on n nodes takes the sum of a
//! launch (6 µs), per-step latency `steps × (0.35 + 2.2 × n / N) µs`, a
//! pipeline fill `steps × min(256 KiB, S / N) / (busbw_plateau / rails)` and
//! streaming `S × factor / busbw_plateau`, where steps = 2(N−1) for all_reduce and N−1 otherwise, factor = 2(N−1)/N for
//! all_reduce and (N−1)/N for all_gather, reduce_scatter and alltoall. The
//! plateau is reached only at hundreds of MiB to GiB. With no usable HCA NCCL
//! falls back to sockets (2.5 GB/s) and says so in its INFO lines.
//!
//! **TCP (iperf3)** (`iperf_run`, `tcp`, `iperf`). One flow per stream
//! with its own ephemeral source port, sharing the links max-min in wire
//! bits with everything else and, with the other streams of its process,
//! one CPU thread (45 Gb/s); goodput is the share × (MTU − 52)/(MTU + 38)
//! less what bit errors and a full lossy queue take (Mathis); an outage
//! stalls a stream until its retransmission timer fires with a path.
//!
//! **Variation** (`noise`). Nothing healthy prints the same number twice:
//! every NIC carries a steady host-side loss for one seed, every execution
//! of a step (keyed by its command line without its port and by how many
//! times it ran, never by call order) its own loss on each NIC, and inside
//! an execution every tick of a flow its own dip. The losses are virtual
//! links of the sharing (a host's share of its NIC), the dips a pace that
//! goodput and byte counters both integrate, so counters and results agree
//! and bandwidth never exceeds what a link carries. nccl-tests runs and
//! latency rows draw their own excess. docs/emulator.md, "Variation", has
//! the figures and their sources.
//!
//! **Virtual time.** A batch's steps all start at `now_s()`; the clock
//! advances to the end of the longest. Faults and timed reads cut it into
//! segments (`batch`); congestion and counters follow (`congestion`,
//! `world`).
//!
//! # Not modelled
//!
//! See docs/emulator.md, "Not modelled": packet-level behaviour, PCIe and
//! GPU-memory limits, NCCL's Tree/NVLS algorithms (every collective is a
//! ring), alltoall's real traffic matrix (modelled as the ring), traffic
//! classes' scheduling weights, and the iperf3 options besides the ones
//! rocegate sends.

mod aci_out;
mod api_eos;
mod api_nxos;
mod api_out;
mod batch;
mod cjson;
mod config_out;
mod congestion;
mod cumulus_out;
mod fabric;
mod host_out;
mod iperf;
mod iperf_run;
mod lldp;
mod nccl;
mod noise;
mod optics;
mod perftest;
mod probe;
mod share;
mod sonic_out;
pub mod state;
mod switch_out;
mod sysfs;
mod tcp;
mod world;

use crate::rng;

use std::collections::HashMap;

use crate::config::model::{Inventory, NicId, NodeId};
use crate::exec::types::{ExecFailure, Invocation, InvocationOutput, StepCommands};

use batch::{Event, Flow, HostLimit, Segment};
use fabric::{roce_sport, Fabric};
use noise::{Exec, Noise};
use perftest::{Params, Refusal, Side, Test, Verb};
use rng::{hash_words, Rng};
use world::{Change, World};

/// Seconds perftest spends connecting before the first message.
const PERFTEST_SETUP_S: f64 = 2.0;
/// A client starts this long after its server (the transports' head start).
const CLIENT_DELAY_S: f64 = 0.05;

/// The emulated pod: topology, a virtual clock, and a seed that fixes every
/// hash and every jitter.
#[derive(Debug, Clone)]
pub struct Emulator {
    inv: Inventory,
    fabric: Fabric,
    world: World,
    seed: u64,
    now: f64,
    batches: u64,
    next_qpn: Vec<u32>,
    /// Congested-queue traces by their inputs.
    traces: HashMap<Vec<i64>, std::sync::Arc<congestion::QueueTrace>>,
    noise: Noise,
    /// How many times each workload command line (`noise::command_identity`)
    /// has run: its next execution's occurrence.
    runs: HashMap<String, u64>,
}

/// What one invocation turned out to be.
enum Parsed {
    Done {
        stdout: String,
        stderr: String,
        exit: i32,
        secs: f64,
    },
    Perf {
        p: Params,
        node: NodeId,
        nic: NicId,
        /// A `timeout` wrapper, which is what ends `--run_infinitely`.
        stop: Option<Deadline>,
        /// The transport's own limit on the invocation, seconds.
        limit_s: f64,
    },
    Nccl(Box<nccl::Job>),
    Iperf(Box<iperf_run::IperfCmd>),
    Probe(probe::Probe),
    Fault(batch::FaultCmd),
    /// A call to an `eos` or `nxos` switch's API (`api_out`).
    Api(Box<api_out::ApiCmd>),
}

fn done(r: Refusal) -> Parsed {
    Parsed::Done {
        stdout: r.stdout,
        stderr: r.stderr,
        exit: r.exit,
        secs: 0.01,
    }
}

/// Strips `sudo …`, `numactl …`, `timeout …`, `stdbuf …` and `env VAR=…` in front of a command.
fn strip_wrappers(argv: &[String]) -> &[String] {
    let mut a = argv;
    loop {
        let Some(first) = a.first() else { return a };
        let base = first.rsplit('/').next().unwrap_or(first);
        match base {
            "numactl" => {
                let mut i = 1;
                while i < a.len() && a[i].starts_with('-') {
                    let w = &a[i];
                    i += 1;
                    let short_with_arg = ["-N", "-m", "-C", "-p", "-i", "-P"];
                    if short_with_arg.contains(&w.as_str()) {
                        i += 1;
                    }
                }
                a = &a[i.min(a.len())..];
            }
            "timeout" => {
                let mut i = 1;
                while i < a.len() && a[i].starts_with('-') {
                    if a[i] == "-s" || a[i] == "-k" {
                        i += 1;
                    }
                    i += 1;
                }
                a = &a[(i + 1).min(a.len())..];
            }
            "sudo" => {
                let mut i = 1;
                while i < a.len() && a[i].starts_with('-') {
                    if ["-u", "-g", "-C", "-D"].contains(&a[i].as_str()) {
                        i += 1;
                    }
                    i += 1;
                }
                a = &a[i.min(a.len())..];
            }
            "env" => {
                let mut i = 1;
                while i < a.len() && (a[i].contains('=') || a[i].starts_with('-')) {
                    i += 1;
                }
                a = &a[i..];
            }
            "stdbuf" => {
                let mut i = 1;
                while i < a.len() && a[i].starts_with('-') {
                    if ["-i", "-o", "-e"].contains(&a[i].as_str()) {
                        i += 1;
                    }
                    i += 1;
                }
                a = &a[i.min(a.len())..];
            }
            _ => return a,
        }
    }
}

/// A coreutils `timeout` in front of a command: when it signals the
/// command, and the status its caller then sees.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Deadline {
    after_s: f64,
    /// 124, or 128 + the signal with `--preserve-status` (the command dies
    /// of the signal: perftest installs no handler for SIGINT or SIGTERM).
    exit: i32,
}

/// The first `timeout` among the wrappers of `argv`, if any.
fn deadline(argv: &[String]) -> Option<Deadline> {
    let first = argv.first()?;
    let base = first.rsplit('/').next().unwrap_or(first);
    if base != "timeout" {
        let rest = strip_wrappers(argv);
        // Only wrappers in front count; stop when nothing was stripped.
        if rest.len() == argv.len() {
            return None;
        }
        let skipped = argv.len() - rest.len();
        return argv[..skipped]
            .iter()
            .position(|w| w.rsplit('/').next() == Some("timeout"))
            .and_then(|i| deadline(&argv[i..]));
    }
    let mut sig = 15;
    let mut preserve = false;
    let mut i = 1;
    while i < argv.len() && argv[i].starts_with('-') {
        let w = argv[i].as_str();
        let value = if w == "-s" || w == "--signal" || w == "-k" || w == "--kill-after" {
            i += 1;
            argv.get(i).map(String::as_str)
        } else {
            w.strip_prefix("--signal=")
        };
        if w == "-s" || w == "--signal" || w.starts_with("--signal=") {
            sig = match value.map(|v| v.trim_start_matches("SIG")) {
                Some("INT") | Some("2") => 2,
                Some("KILL") | Some("9") => 9,
                Some("HUP") | Some("1") => 1,
                _ => 15,
            };
        }
        if w == "--preserve-status" {
            preserve = true;
        }
        i += 1;
    }
    let d = argv.get(i)?;
    let (num, unit) = match d.chars().last() {
        Some('s') => (&d[..d.len() - 1], 1.0),
        Some('m') => (&d[..d.len() - 1], 60.0),
        Some('h') => (&d[..d.len() - 1], 3600.0),
        Some('d') => (&d[..d.len() - 1], 86400.0),
        _ => (d.as_str(), 1.0),
    };
    let after_s = num.parse::<f64>().ok()? * unit;
    Some(Deadline {
        after_s,
        exit: if preserve { 128 + sig } else { 124 },
    })
}

fn not_found(cmd: &str) -> Parsed {
    Parsed::Done {
        stdout: String::new(),
        stderr: format!("bash: line 1: {cmd}: command not found\n"),
        exit: 127,
        secs: 0.001,
    }
}

/// A perftest pair found in the batch.
struct Pair {
    server: (usize, usize),
    client: (usize, usize),
    /// Flow indices, forward then (with `-b`) reverse.
    fwd: Vec<usize>,
    rev: Vec<usize>,
    /// A latency test's path-only flow.
    lat: Option<usize>,
    server_qpns: Vec<u32>,
    client_qpns: Vec<u32>,
}

/// A collective's ring flows.
struct Ring {
    at: (usize, usize),
    /// Per rail, per edge, the flow indices.
    edges: Vec<Vec<Vec<usize>>>,
    hcas: Vec<String>,
    socket: bool,
}

impl Emulator {
    pub fn new(inv: &crate::config::model::Inventory, seed: u64) -> Self {
        let fabric = Fabric::new(inv, seed);
        let next_qpn = (0..inv.nics.len())
            .map(|n| 0x100 + (hash_words(seed, &[n as u64, 0x9F]) % 0x4000) as u32)
            .collect();
        let world = World::new(inv, &fabric);
        Emulator {
            inv: inv.clone(),
            fabric,
            world,
            traces: HashMap::new(),
            noise: Noise::new(seed),
            runs: HashMap::new(),
            seed,
            now: 0.0,
            batches: 0,
            next_qpn,
        }
    }

    pub fn now_s(&self) -> f64 {
        self.now
    }

    /// A NIC's stable name, `node:device`: what its noise is keyed by.
    fn nic_name(&self, nic: NicId) -> String {
        let n = &self.inv.nics[nic];
        format!("{}:{}", self.inv.nodes[n.node].name, n.device)
    }

    /// The execution each workload invocation of a batch is: its command
    /// line and how many times that line ran before (in batch order within
    /// the batch). Other invocations get a key nothing reads.
    fn executions(&mut self, batch: &[StepCommands], parsed: &[Vec<Parsed>]) -> Vec<Vec<Exec>> {
        let mut execs = Vec::with_capacity(batch.len());
        for (step, ps) in batch.iter().zip(parsed) {
            let mut row = Vec::with_capacity(ps.len());
            for (inv, p) in step.invocations.iter().zip(ps) {
                if !matches!(p, Parsed::Perf { .. } | Parsed::Nccl(_) | Parsed::Iperf(_)) {
                    row.push(Exec(0));
                    continue;
                }
                let id = noise::command_identity(&inv.host, &inv.argv);
                let n = self.runs.entry(id.clone()).or_insert(0);
                row.push(self.noise.exec(&id, *n));
                *n += 1;
            }
            execs.push(row);
        }
        execs
    }

    fn alloc_qpns(&mut self, nic: NicId, n: u32) -> Vec<u32> {
        let base = self.next_qpn[nic];
        self.next_qpn[nic] = (base + n).max(0x100) & 0xFF_FFFF;
        (0..n).map(|i| (base + i) & 0xFF_FFFF).collect()
    }

    fn node_of_address(&self, addr: &str) -> Option<NodeId> {
        if let Some(&n) = self.inv.node_by_name.get(addr) {
            return Some(n);
        }
        if let Some(n) = self.inv.nodes.iter().position(|n| n.address == addr) {
            return Some(n);
        }
        self.inv
            .nics
            .iter()
            .enumerate()
            .find(|(i, n)| {
                n.address.as_deref() == Some(addr) || self.fabric.nic_ip(*i).to_string() == addr
            })
            .map(|(_, n)| n.node)
    }

    fn parse(&self, inv: &Invocation) -> Parsed {
        let argv = strip_wrappers(&inv.argv);
        let Some(cmd) = argv.first() else {
            return Parsed::Done {
                stdout: String::new(),
                stderr: String::new(),
                exit: 0,
                secs: 0.0,
            };
        };
        if let Some(parts) = crate::exec::compose::decompose(argv) {
            let parts = parts
                .into_iter()
                .map(|argv| {
                    let one = Invocation {
                        argv,
                        ..inv.clone()
                    };
                    match self.parse(&one) {
                        Parsed::Probe(p) => Ok(p),
                        Parsed::Done {
                            stdout,
                            stderr,
                            exit,
                            ..
                        } => Err((stdout + &stderr, exit)),
                        _ => Err(("rocegate emulator: only reads can be composed\n".into(), 2)),
                    }
                })
                .collect();
            return Parsed::Probe(probe::Probe::Composed(parts));
        }
        let base = cmd.rsplit('/').next().unwrap_or(cmd);
        if let Some(&sw) = self.inv.switch_by_name.get(&inv.host) {
            if let Some(p) = api_out::parse(&self.inv, sw, argv) {
                return p;
            }
            if let Some(p) = sonic_out::parse(&self.inv, &self.world, sw, argv) {
                return p;
            }
            if let Some(p) = cumulus_out::parse(&self.inv, &self.world, sw, argv) {
                return p;
            }
            return probe::parse_switch(&self.fabric, sw, argv).unwrap_or_else(|| not_found(cmd));
        }
        if let Some(&node) = self.inv.node_by_name.get(&inv.host) {
            if let Some(p) = probe::parse_node(&self.inv, node, argv) {
                return p;
            }
        }
        if base == "iperf3" {
            return self.parse_iperf(inv, argv);
        }
        if perftest::tool_kind(base).is_some() {
            let p = match perftest::parse(argv) {
                Ok(p) => p,
                Err(r) => return done(r),
            };
            let node = self.inv.node_by_name.get(&inv.host).copied();
            let nics: Vec<NicId> = node
                .map(|n| self.inv.nodes[n].nics.clone())
                .unwrap_or_default();
            let (Some(node), false) = (node, nics.is_empty()) else {
                return done(Refusal {
                    stdout: String::new(),
                    stderr: " Did not detect devices \n If device exists, check if driver is up\n Unable to find the Infiniband/RoCE device\n".into(),
                    exit: 1,
                });
            };
            let nic = match &p.device {
                None => Some(nics[0]),
                Some(d) => nics
                    .iter()
                    .copied()
                    .find(|&n| self.inv.nics[n].device == *d),
            };
            let Some(nic) = nic else {
                return done(Refusal {
                    stdout: String::new(),
                    stderr: format!(
                        "IB device {} not found\n Unable to find the Infiniband/RoCE device\n",
                        p.device.clone().unwrap_or_default()
                    ),
                    exit: 1,
                });
            };
            return Parsed::Perf {
                p,
                node,
                nic,
                stop: deadline(&inv.argv),
                limit_s: inv.timeout.as_secs_f64(),
            };
        }
        let parsed = match base {
            "mpirun" | "mpiexec" | "orterun" => nccl::parse_mpirun(argv, &inv.env),
            "srun" => nccl::parse_srun(argv, &inv.env),
            _ => return not_found(cmd),
        };
        match parsed {
            Ok(mut job) => {
                // mpirun/srun reach hosts by whatever name resolves: the
                // inventory name or the management address.
                for (h, _) in job.hosts.iter_mut() {
                    if let Some(n) = self.node_of_address(h) {
                        *h = self.inv.nodes[n].name.clone();
                    }
                }
                if let Some((h, _)) = job
                    .hosts
                    .iter()
                    .find(|(h, _)| !self.inv.node_by_name.contains_key(h))
                {
                    return done(Refusal {
                        stdout: String::new(),
                        stderr: format!(
                            "ssh: Could not resolve hostname {h}: Name or service not known\n\
                             --------------------------------------------------------------------------\n\
                             ORTE was unable to reliably start one or more daemons.\n\
                             --------------------------------------------------------------------------\n"
                        ),
                        exit: 1,
                    });
                }
                if job.hosts.is_empty() {
                    return done(Refusal {
                        stdout: String::new(),
                        stderr: "--------------------------------------------------------------------------\nThere are no nodes allocated to this job.\n--------------------------------------------------------------------------\n".into(),
                        exit: 1,
                    });
                }
                Parsed::Nccl(Box::new(job))
            }
            Err(r) => done(r),
        }
    }

    /// Applies the changes that fell due between batches.
    fn settle(&mut self, t: f64) {
        let mut due: Vec<(f64, Change)> = Vec::new();
        self.world.pending.retain(|&(tc, c)| {
            if tc <= t {
                due.push((tc, c));
                false
            } else {
                true
            }
        });
        due.sort_by(|a, b| a.0.total_cmp(&b.0));
        for (tc, c) in due {
            let mut later = Vec::new();
            batch::apply(
                &self.inv,
                &mut self.fabric,
                &mut self.world,
                &[],
                &Event::Change(c),
                tc,
                true,
                &mut later,
            );
            self.world.pending.extend(later);
        }
    }

    /// Runs one batch: every step starts at the current virtual time (each
    /// invocation after its own `at`), all flows share the fabric, timed
    /// commands change it as they happen. Returns one output per invocation,
    /// in the batch's shape, and advances the clock to the end of the last.
    pub fn run_batch(&mut self, batch: &[StepCommands]) -> Vec<Vec<InvocationOutput>> {
        self.batches += 1;
        let start = self.now;
        self.settle(start);
        let at = |si: usize, ii: usize| start + batch[si].invocations[ii].at.as_secs_f64();
        let parsed: Vec<Vec<Parsed>> = batch
            .iter()
            .map(|s| s.invocations.iter().map(|i| self.parse(i)).collect())
            .collect();
        let execs = self.executions(batch, &parsed);
        let noise = self.noise;

        // Pair perftest clients with servers by (server node, port).
        let mut servers: HashMap<(NodeId, u16), (usize, usize)> = HashMap::new();
        for (si, step) in parsed.iter().enumerate() {
            for (ii, p) in step.iter().enumerate() {
                if let Parsed::Perf { p, node, .. } = p {
                    if p.server.is_none() {
                        servers.insert((*node, p.port), (si, ii));
                    }
                }
            }
        }
        let mut flows: Vec<Flow> = Vec::new();
        let mut pairs: Vec<Pair> = Vec::new();
        let mut paired: HashMap<(usize, usize), usize> = HashMap::new();
        for (si, step) in parsed.iter().enumerate() {
            for (ii, pp) in step.iter().enumerate() {
                let Parsed::Perf { p, nic, .. } = pp else {
                    continue;
                };
                let Some(addr) = &p.server else { continue };
                let Some(target) = self.node_of_address(addr) else {
                    continue;
                };
                let Some(&sv) = servers.get(&(target, p.port)) else {
                    continue;
                };
                if paired.contains_key(&sv) {
                    continue;
                }
                let Parsed::Perf {
                    p: sp, nic: snic, ..
                } = &parsed[sv.0][sv.1]
                else {
                    continue;
                };
                if sp.tool != p.tool {
                    continue;
                }
                let (cnic, snic) = (*nic, *snic);
                let qps = p.qps;
                let client_qpns = self.alloc_qpns(cnic, if p.test == Test::Bw { qps } else { 1 });
                let server_qpns = self.alloc_qpns(snic, if p.test == Test::Bw { qps } else { 1 });
                let mut pair = Pair {
                    server: sv,
                    client: (si, ii),
                    fwd: Vec::new(),
                    rev: Vec::new(),
                    lat: None,
                    server_qpns,
                    client_qpns,
                };
                if p.test == Test::Bw {
                    // Writes and sends flow client → server; reads server → client.
                    let (src, dst) = if p.verb == Verb::Read {
                        (snic, cnic)
                    } else {
                        (cnic, snic)
                    };
                    let largest = p.sizes().last().copied().unwrap_or(65536);
                    let cap = p.msg_cap_gbps(largest);
                    let from = at(si, ii) + CLIENT_DELAY_S + PERFTEST_SETUP_S;
                    let exec = execs[si][ii];
                    let host = |nic: NicId| {
                        let name = self.nic_name(nic);
                        Some(HostLimit {
                            key: noise.host_key(&name, exec),
                            eff: noise.host_eff(&name, exec, 0.0),
                        })
                    };
                    for k in 0..qps as usize {
                        let sport = roce_sport(pair.client_qpns[k], pair.server_qpns[k]);
                        for (dir, (a, b)) in [(0, (src, dst)), (1, (dst, src))] {
                            if dir == 1 && !p.bidir {
                                continue;
                            }
                            let idx = flows.len();
                            let mut f = Flow::roce(a, b, sport, cap, (from, f64::INFINITY));
                            f.host = host(a);
                            f.wobble = Some(noise.roce_wobble(exec, dir, from));
                            flows.push(f);
                            if dir == 0 {
                                pair.fwd.push(idx);
                            } else {
                                pair.rev.push(idx);
                            }
                        }
                    }
                }
                if p.test == Test::Lat {
                    // A ping-pong loads nothing; a flow without a rate still
                    // finds its path in every segment.
                    pair.lat = Some(flows.len());
                    flows.push(Flow::roce(
                        cnic,
                        snic,
                        roce_sport(pair.client_qpns[0], pair.server_qpns[0]),
                        0.0,
                        (f64::INFINITY, f64::INFINITY),
                    ));
                }
                paired.insert(sv, pairs.len());
                paired.insert((si, ii), pairs.len());
                pairs.push(pair);
            }
        }

        // Ring flows of every collective.
        let mut rings: Vec<Ring> = Vec::new();
        for (si, step) in parsed.iter().enumerate() {
            for (ii, pp) in step.iter().enumerate() {
                let Parsed::Nccl(job) = pp else { continue };
                let nodes: Vec<NodeId> = job
                    .hosts
                    .iter()
                    .filter_map(|(h, _)| self.inv.node_by_name.get(h).copied())
                    .collect();
                let devs0: Vec<&str> = self.inv.nodes[nodes[0]]
                    .nics
                    .iter()
                    .map(|&n| self.inv.nics[n].device.as_str())
                    .collect();
                let hcas: Vec<String> = job.hcas(&devs0).into_iter().map(String::from).collect();
                let gpus = job.hosts[0].1 * job.ngpus;
                let rails = hcas.len().min(gpus as usize);
                let qps: u32 = job
                    .env
                    .get("NCCL_IB_QPS_PER_CONNECTION")
                    .and_then(|v| v.parse().ok())
                    .unwrap_or(1u32)
                    .max(1);
                let mut ring = Ring {
                    at: (si, ii),
                    edges: Vec::new(),
                    hcas: hcas.clone(),
                    socket: hcas.is_empty(),
                };
                if nodes.len() > 1 {
                    for dev in hcas.iter().take(rails) {
                        let on_rail: Vec<Option<NicId>> = nodes
                            .iter()
                            .map(|&node| {
                                self.inv.nodes[node]
                                    .nics
                                    .iter()
                                    .copied()
                                    .find(|&n| self.inv.nics[n].device == *dev)
                            })
                            .collect();
                        let mut rail_edges = Vec::new();
                        for i in 0..nodes.len() {
                            let a = on_rail[i];
                            let b = on_rail[(i + 1) % nodes.len()];
                            let mut edge = Vec::new();
                            let n_flows = nccl::CHANNELS_PER_NIC * qps;
                            // A node without this HCA: the edge never gets a path.
                            let (a, b, ok) = match (a, b) {
                                (Some(a), Some(b)) => (a, b, true),
                                _ => (0, 0, false),
                            };
                            let qa = self.alloc_qpns(a, n_flows);
                            let qb = self.alloc_qpns(b, n_flows);
                            let exec = execs[si][ii];
                            let name = self.nic_name(a);
                            let limit = Some(HostLimit {
                                key: noise.host_key(&name, exec),
                                eff: noise.host_eff(&name, exec, noise::NCCL_JOB_SIGMA),
                            });
                            for k in 0..n_flows as usize {
                                edge.push(flows.len());
                                let mut f = Flow::roce(
                                    a,
                                    b,
                                    roce_sport(qa[k], qb[k]),
                                    if ok { f64::INFINITY } else { 0.0 },
                                    (at(si, ii), f64::INFINITY),
                                );
                                f.host = limit;
                                flows.push(f);
                            }
                            rail_edges.push(edge);
                        }
                        ring.edges.push(rail_edges);
                    }
                }
                rings.push(ring);
            }
        }

        // iperf3 clients, their servers and their TCP streams.
        let iperf_tests = self.iperf_flows(&parsed, &execs, &mut flows, &at);

        // Timed commands and changes, and reads.
        let mut events: Vec<(f64, Event)> = Vec::new();
        let mut probes: Vec<(f64, usize, usize)> = Vec::new();
        for (si, step) in parsed.iter().enumerate() {
            for (ii, pp) in step.iter().enumerate() {
                match pp {
                    // A rebooting switch never receives the command.
                    Parsed::Fault(_) if !self.unreachable(&batch[si].invocations[ii].host) => {
                        events.push((at(si, ii), Event::Cmd(si, ii)))
                    }
                    Parsed::Probe(_) => probes.push((at(si, ii), si, ii)),
                    // An API change cuts the segments; an API read does not.
                    Parsed::Api(a) if a.changes() => events.push((at(si, ii), Event::Cmd(si, ii))),
                    Parsed::Api(_) => probes.push((at(si, ii), si, ii)),
                    _ => {}
                }
            }
        }
        events.extend(
            self.world
                .pending
                .drain(..)
                .map(|(t, c)| (t, Event::Change(c))),
        );
        events.sort_by(|a, b| a.0.total_cmp(&b.0));
        probes.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)));
        let (segs, ordered) = self.segments(&parsed, &flows, &events);

        // Render.
        let mut out: Vec<Vec<InvocationOutput>> = batch
            .iter()
            .enumerate()
            .map(|(si, s)| {
                (0..s.invocations.len())
                    .map(|ii| InvocationOutput {
                        stdout: String::new(),
                        stderr: String::new(),
                        exit: Some(0),
                        failure: None,
                        started_s: at(si, ii),
                        ended_s: at(si, ii),
                    })
                    .collect()
            })
            .collect();
        // What an execution prints besides its measurement is drawn from
        // its own key too, so it does not move when other steps come or go.
        let jitter = |si: usize, ii: usize| noise.rng(execs[si][ii], 0x317);
        for (si, step) in parsed.iter().enumerate() {
            for (ii, pp) in step.iter().enumerate() {
                let o = &mut out[si][ii];
                let t0 = at(si, ii);
                match pp {
                    Parsed::Done {
                        stdout,
                        stderr,
                        exit,
                        secs,
                    } => {
                        o.stdout = stdout.clone();
                        o.stderr = stderr.clone();
                        o.exit = Some(*exit);
                        o.ended_s = t0 + secs;
                    }
                    // Reads are answered at their time, in `replay`.
                    Parsed::Fault(_) => {
                        *o = self.short_output(&batch[si].invocations[ii].host, t0);
                    }
                    Parsed::Perf { p, .. } if !paired.contains_key(&(si, ii)) => {
                        if p.server.is_none() {
                            // A server nobody connects to waits until killed.
                            let t = batch[si].invocations[ii].timeout.as_secs_f64();
                            o.stdout = "\n************************************\n* Waiting for client to connect... *\n************************************\n".into();
                            o.exit = None;
                            o.failure = Some(ExecFailure::TimedOut(format!(
                                "{} on {} timed out after {t:.0}s waiting for a client",
                                p.tool, batch[si].invocations[ii].host
                            )));
                            o.ended_s = t0 + t;
                        } else {
                            let addr = p.server.clone().unwrap_or_default();
                            o.stderr = format!(
                                "Couldn't connect to {addr}:{}\n Unable to open file descriptor for socket connection Unable to init the socket connection\n",
                                p.port
                            );
                            o.exit = Some(1);
                            o.ended_s = t0 + 0.05;
                        }
                    }
                    _ => {}
                }
            }
        }
        for pair in &pairs {
            let exec = execs[pair.client.0][pair.client.1];
            self.render_pair(
                pair, &parsed, &segs, &mut flows, &mut out, &at, &jitter, exec,
            );
        }
        for ring in &rings {
            self.render_ring(
                ring,
                &parsed,
                &segs,
                &mut flows,
                &mut out,
                at(ring.at.0, ring.at.1),
                execs[ring.at.0][ring.at.1],
            );
        }
        self.render_iperf(
            &iperf_tests,
            batch,
            &parsed,
            &segs,
            &mut flows,
            &mut out,
            &at,
            &jitter,
        );
        let end = out
            .iter()
            .flat_map(|s| s.iter())
            .map(|o| o.ended_s)
            .fold(start, f64::max);
        self.replay(
            batch, &parsed, &segs, &flows, ordered, &probes, end, &mut out,
        );
        self.now = end;
        out
    }

    /// Renders a collective from its ring flows' rates over the segments.
    #[allow(clippy::too_many_arguments)]
    fn render_ring(
        &self,
        ring: &Ring,
        parsed: &[Vec<Parsed>],
        segs: &[Segment],
        flows: &mut [Flow],
        out: &mut [Vec<InvocationOutput>],
        t0: f64,
        exec: Exec,
    ) {
        let Parsed::Nccl(job) = &parsed[ring.at.0][ring.at.1] else {
            return;
        };
        let nodes = job.hosts.len();
        let rails = ring.edges.len() as f64;
        let busbw_in = |s: &Segment| -> f64 {
            let edge_min = ring
                .edges
                .iter()
                .flat_map(|rail| rail.iter())
                .map(|edge| edge.iter().map(|&f| s.goodput(f)).sum::<f64>())
                .fold(f64::INFINITY, f64::min);
            let edge_min = if edge_min.is_finite() { edge_min } else { 0.0 };
            (rails * edge_min / 8.0 * nccl::RING_EFFICIENCY).min(nccl::NVLINK_BUSBW)
        };
        let all: Vec<usize> = ring.edges.iter().flatten().flatten().copied().collect();
        let node0 = self.inv.node_by_name[&job.hosts[0].0];
        let oob_ip = {
            let a = &self.inv.nodes[node0].address;
            if a.parse::<std::net::Ipv4Addr>().is_ok() {
                a.clone()
            } else {
                let n1 = node0 as u32 + 1;
                format!("10.255.{}.{}", n1 >> 8, n1 & 0xFF)
            }
        };
        let outcome = |busbw: f64| nccl::Outcome {
            net: if ring.socket {
                nccl::Net::Socket
            } else {
                nccl::Net::Ib(ring.hcas.clone())
            },
            busbw,
            lanes: if ring.edges.is_empty() {
                (job.hosts[0].1 * job.ngpus).max(1)
            } else {
                ring.edges.len() as u32
            },
            oob_ip: oob_ip.clone(),
            seed: self.noise.rng(exec, 7).next_u64(),
        };
        // Without ring flows (sockets, one node) the job's own loss is all
        // the noise there is; with them it is in their host limits.
        let fixed = if ring.socket {
            Some(nccl::SOCKET_BUSBW)
        } else if nodes <= 1 {
            Some(nccl::NVLINK_BUSBW)
        } else {
            None
        }
        .map(|b| b * self.noise.job_eff(exec, noise::NCCL_JOB_SIGMA));
        let budget = batch::retry_budget_s(
            job.env
                .get("NCCL_IB_TIMEOUT")
                .and_then(|v| v.parse().ok())
                .unwrap_or(20),
            job.env
                .get("NCCL_IB_RETRY_CNT")
                .and_then(|v| v.parse().ok())
                .unwrap_or(7),
        );
        // The job moves a fixed amount of data: what its bandwidth moves in
        // the time the job takes at that bandwidth. Under
        // a fault it takes until that much has moved, and reports the average.
        // (A ring that starts without a path waits for one: its reference
        // bandwidth is the first it gets.)
        let first = segs
            .iter()
            .filter(|s| s.t1 > t0)
            .map(&busbw_in)
            .find(|&b| b > 0.0)
            .unwrap_or(0.0);
        let fail_text = |peer: &str| {
            let host = &job.hosts[0].0;
            format!(
                "{host}:4242:4301 [0] transport/net_ib.cc:1296 NCCL WARN NET/IB : Got completion from peer {peer}<43125> with error 12, opcode 0, len 0, vendor err 129 (Recv)\n\
                 {host}:4242:4301 [0] NCCL INFO transport/net.cc:1134 -> 6\n\
                 {host}: Test NCCL failure common.cu:1005 'remote process exited or there was a network error'\n"
            )
        };
        let peer_of = |flows: &[Flow]| {
            ring.edges
                .iter()
                .flatten()
                .flatten()
                .find(|&&f| segs.iter().any(|s| s.paths[f].is_none()))
                .map(|&f| self.fabric.nic_ip(flows[f].dst).to_string())
                .unwrap_or_else(|| oob_ip.clone())
        };
        let b_ref = fixed.unwrap_or(first);
        if job.cycles > 1 && b_ref > 0.0 {
            // `-N` cycles: every timed run (out-of-place, then in-place, of
            // each size) moves what it would in `iters` operations at the
            // reference bandwidth, and takes as long as the ring's rates
            // over the segments need to move it; its printed time is that
            // span per operation, so a cycle across an outage shows it.
            let rate = |s: &Segment| fixed.unwrap_or_else(|| busbw_in(s));
            let n = job.ranks();
            let lanes = outcome(b_ref).lanes;
            let op = |bytes: u64| nccl::op_time_us(job, nodes as u32, b_ref, lanes, bytes) * 1e-6;
            let data0 = t0 + nccl::setup_s(job);
            let sizes = job.sizes();
            let mut c = data0;
            if let Some(&max) = sizes.last() {
                let bytes = job.coll.bytes(job.coll.count(max, n), n);
                let warm = op(bytes) * job.warmup as f64;
                c = batch::finish_time(segs, c, b_ref * warm, &rate).unwrap_or(f64::INFINITY);
            }
            let iters = job.iters.max(1) as f64;
            let mut rows: Vec<(u64, [f64; 2], f64)> = Vec::new();
            // Each timed run is a little slower than the model, by its own
            // draw (`noise`): it moves its data at the ring's rates less
            // that share.
            let mut wobble = self.noise.rng(exec, 0x80);
            'cycles: for _ in 0..job.cycles {
                for &req in &sizes {
                    let bytes = job.coll.bytes(job.coll.count(req, n), n);
                    let lat_frac = op(0) / op(bytes);
                    let mut times = [0.0; 2];
                    for t in times.iter_mut() {
                        let slow = 1.0 + Noise::nccl_row_excess(&mut wobble, lat_frac);
                        let work = b_ref * op(bytes) * iters * slow;
                        let Some(e) = batch::finish_time(segs, c, work, &rate) else {
                            c = f64::INFINITY;
                            break 'cycles;
                        };
                        *t = (e - c) / iters * 1e6;
                        c = e;
                    }
                    rows.push((req, times, c));
                }
            }
            let stall = if fixed.is_none() {
                batch::stall_failure(segs, &all, data0, c, budget)
            } else {
                None
            };
            let end = stall.unwrap_or(c);
            let end = if end.is_finite() { end } else { data0 + budget };
            for &f in &all {
                flows[f].window = (data0, end);
            }
            let done: Vec<(u64, [f64; 2])> = rows
                .iter()
                .filter(|r| r.2 <= end + 1e-9)
                .map(|r| (r.0, r.1))
                .collect();
            let complete = stall.is_none() && c.is_finite();
            let text = nccl::render_rows(job, &outcome(b_ref), &done, complete);
            let o = &mut out[ring.at.0][ring.at.1];
            o.stdout = if job.tag_output {
                nccl::prefix_lines(&text, "[1,0]<stdout>:")
            } else if job.label {
                nccl::prefix_lines(&text, "0: ")
            } else {
                text
            };
            if complete {
                o.exit = Some(0);
            } else {
                o.stderr = fail_text(&peer_of(flows));
                o.exit = Some(1);
            }
            o.ended_s = end;
            return;
        }
        let mut busbw = fixed.unwrap_or(first);
        let mut rendered = nccl::render(job, &outcome(busbw.max(1e-3)));
        if fixed.is_none() && busbw > 0.0 {
            let work = busbw * rendered.1;
            if let Some(t1) = batch::finish_time(segs, t0, work, &busbw_in) {
                let avg = work / (t1 - t0).max(1e-9);
                if (avg - busbw).abs() > busbw * 1e-9 {
                    busbw = avg;
                    rendered = nccl::render(job, &outcome(busbw));
                }
            }
        }
        let stall = if fixed.is_none() {
            batch::stall_failure(segs, &all, t0, t0 + rendered.1, budget)
        } else {
            None
        };
        let o = &mut out[ring.at.0][ring.at.1];
        if stall.is_some() || busbw <= 0.0 {
            let t_fail = stall.unwrap_or(t0 + budget);
            for &f in &all {
                flows[f].window.1 = t_fail;
            }
            o.stdout = String::new();
            o.stderr = fail_text(&peer_of(flows));
            o.exit = Some(1);
            o.ended_s = t_fail;
            return;
        }
        for &f in &all {
            flows[f].window.1 = t0 + rendered.1;
        }
        let (text, secs) = rendered;
        o.stdout = if job.tag_output {
            nccl::prefix_lines(&text, "[1,0]<stdout>:")
        } else if job.label {
            nccl::prefix_lines(&text, "0: ")
        } else {
            text
        };
        o.exit = Some(0);
        o.ended_s = t0 + secs;
    }

    #[allow(clippy::too_many_arguments)]
    fn render_pair(
        &self,
        pair: &Pair,
        parsed: &[Vec<Parsed>],
        segs: &[Segment],
        flows: &mut [Flow],
        out: &mut [Vec<InvocationOutput>],
        at: &dyn Fn(usize, usize) -> f64,
        jitter: &dyn Fn(usize, usize) -> Rng,
        exec: Exec,
    ) {
        let start = at(pair.server.0, pair.server.1);
        let client_start = at(pair.client.0, pair.client.1) + CLIENT_DELAY_S;
        let measure_from = client_start + PERFTEST_SETUP_S;
        let (cs, ci) = pair.client;
        let (ss, sidx) = pair.server;
        let Parsed::Perf {
            p,
            nic: cnic,
            stop,
            limit_s,
            ..
        } = &parsed[cs][ci]
        else {
            return;
        };
        let Parsed::Perf {
            p: sp, nic: snic, ..
        } = &parsed[ss][sidx]
        else {
            return;
        };
        let mut rng = jitter(cs, ci);
        let gid_of = |nic: NicId, p: &Params| {
            p.gid_index.unwrap_or(match self.inv.nics[nic].gid_index {
                crate::config::inventory::GidIndex::Fixed(g) => g,
                crate::config::inventory::GidIndex::Discover => 3,
            })
        };
        let endpoint = |nic: NicId, qpns: &[u32], salt: u64| perftest::Endpoint {
            qpns: qpns.to_vec(),
            ip: self.fabric.nic_ip(nic).octets(),
            rng_seed: hash_words(self.seed, &[self.batches, nic as u64, salt]),
        };
        let cctx = perftest::Context {
            device: self.inv.nics[*cnic].device.clone(),
            gid_index: gid_of(*cnic, p),
            mtu: self.fabric.mtu,
            local: endpoint(*cnic, &pair.client_qpns, 1),
            remote: endpoint(*snic, &pair.server_qpns, 2),
        };
        let sctx = perftest::Context {
            device: self.inv.nics[*snic].device.clone(),
            gid_index: gid_of(*snic, sp),
            mtu: self.fabric.mtu,
            local: cctx.remote.clone(),
            remote: cctx.local.clone(),
        };
        let mut client = perftest::header(p, Side::Client, &cctx);
        let mut server = perftest::header(p, Side::Server, &sctx);
        if p.run_infinitely && p.test == Test::Bw {
            let w = Windows {
                client_start,
                measure_from,
                stop: *stop,
                limit_s: *limit_s,
            };
            client.push_str(&perftest::bw_table_header(p));
            server.push_str(&perftest::bw_table_header(p));
            self.render_windows(pair, p, &w, segs, flows, out, client, server, start);
            return;
        }
        let mut secs = PERFTEST_SETUP_S;
        let mut fail_at: Option<f64> = None;
        match p.test {
            Test::Bw => {
                // Each QP moves min(its goodput, the message-rate cap of the
                // size); the largest size's window decides the average.
                let largest = p.sizes().last().copied().unwrap_or(65536);
                let cap = p.msg_cap_gbps(largest);
                let all: Vec<usize> = pair.fwd.iter().chain(&pair.rev).copied().collect();
                let fwd_rate =
                    |s: &Segment| -> f64 { pair.fwd.iter().map(|&f| s.goodput(f).min(cap)).sum() };
                let moved = |flows: &[Flow], to: f64| -> f64 {
                    pair.fwd
                        .iter()
                        .map(|&f| {
                            batch::integrate_flow(segs, &flows[f], measure_from, to, &|s| {
                                s.goodput(f).min(cap)
                            })
                        })
                        .sum()
                };
                let window_end = match p.duration {
                    Some(d) => Some(measure_from + d as f64),
                    None => {
                        let gbits =
                            p.iterations() as f64 * f64::from(p.qps) * largest as f64 * 8.0 / 1e9;
                        // At the flows' own pace (their wobble) the last
                        // message lands a little later than the rates say.
                        batch::finish_time(segs, measure_from, gbits, &fwd_rate).map(|mut e| {
                            for _ in 0..4 {
                                let short = gbits - moved(flows, e);
                                let r = segs
                                    .iter()
                                    .find(|s| s.t0 <= e && e < s.t1)
                                    .map_or(0.0, &fwd_rate);
                                if short <= gbits * 1e-12 || r <= 0.0 {
                                    break;
                                }
                                e += short / r;
                            }
                            e
                        })
                    }
                };
                let budget = batch::retry_budget_s(p.qp_timeout, 7);
                fail_at = batch::stall_failure(
                    segs,
                    &all,
                    measure_from,
                    window_end.unwrap_or(f64::INFINITY),
                    budget,
                );
                let w_end = window_end.unwrap_or(f64::INFINITY);
                let span = (w_end - measure_from).max(1e-9);
                let avg = |f: usize| -> f64 {
                    if w_end.is_finite() {
                        batch::integrate_flow(segs, &flows[f], measure_from, w_end, &|s| {
                            s.goodput(f).min(cap)
                        }) / span
                    } else {
                        0.0
                    }
                };
                let fwd: Vec<f64> = pair.fwd.iter().map(|&f| avg(f)).collect();
                let rev: Vec<f64> = pair.rev.iter().map(|&f| avg(f)).collect();
                if fail_at.is_none() && fwd.iter().chain(&rev).any(|&r| r <= 0.0) {
                    fail_at = Some(measure_from + budget);
                }
                let until = fail_at.unwrap_or(w_end);
                for &f in &all {
                    flows[f].window.1 = until;
                }
                let head = perftest::bw_table_header(p);
                client.push_str(&head);
                server.push_str(&head);
                // No direction moves more than the slower of the two cables
                // carries: the peak column stays under it.
                let ceiling = self
                    .fabric
                    .nic_goodput(*cnic)
                    .min(self.fabric.nic_goodput(*snic))
                    * if p.bidir { 2.0 } else { 1.0 };
                let mut rows = Vec::new();
                for s in p.sizes() {
                    let cap = p.msg_cap_gbps(s);
                    // With -a each size is its own measurement over its own
                    // stretch of time: its own dip (`noise`).
                    let dip = if p.all {
                        1.0 - noise::half_normal_from(&mut rng, noise::BW_TICK_SIGMA)
                    } else {
                        1.0
                    };
                    let f: f64 = fwd.iter().map(|r| r.min(cap)).sum::<f64>() * dip;
                    let r: f64 = rev.iter().map(|r| r.min(cap)).sum::<f64>() * dip;
                    let total = f + r;
                    let msg_rate = total * 1e9 / 8.0 / s as f64;
                    let (iters, peak) = match p.duration {
                        Some(d) => {
                            secs += d as f64;
                            ((msg_rate * d as f64) as u64, None)
                        }
                        None => {
                            let it = p.iterations();
                            if f > 0.0 {
                                secs += it as f64 * f64::from(p.qps) * s as f64 * 8.0 / (f * 1e9);
                            }
                            let peak = total * (1.0 + rng.range(0.001, 0.006));
                            (it, Some(peak.min(ceiling.max(total))))
                        }
                    };
                    rows.push(perftest::BwRow {
                        size: s,
                        iters,
                        peak_gbps: peak,
                        avg_gbps: total,
                        msg_rate,
                    });
                }
                if fail_at.is_none() {
                    for r in &rows {
                        client.push_str(&perftest::bw_row(p, r));
                    }
                    let server_rows: &[perftest::BwRow] = if p.bidir {
                        &rows
                    } else {
                        &rows[rows.len().saturating_sub(1)..]
                    };
                    for r in server_rows {
                        server.push_str(&perftest::bw_row(p, r));
                    }
                    client.push_str(perftest::RESULT_LINE);
                    server.push_str(perftest::RESULT_LINE);
                }
            }
            Test::Lat => {
                // A ping-pong loads nothing: it sees the path and the
                // queues of the segment it starts in.
                let seg = segs.iter().find(|s| s.t1 > measure_from);
                let path = seg.and_then(|s| pair.lat.and_then(|f| s.paths[f].clone()));
                let queueing: f64 = match (&path, seg) {
                    (Some(links), Some(s)) => links.iter().filter_map(|d| s.delay_us.get(d)).sum(),
                    _ => 0.0,
                };
                match path {
                    None => fail_at = Some(measure_from + batch::retry_budget_s(p.qp_timeout, 7)),
                    Some(links) => {
                        let switches = links.len().saturating_sub(1);
                        // Each host adds its steady excess and the run its
                        // own to the fixed part (`noise`).
                        let hosts = self.noise.latency_factor(
                            &self.nic_name(*cnic),
                            &self.nic_name(*snic),
                            exec,
                        );
                        let one_way = if links.is_empty() {
                            0.6
                        } else {
                            1.0 + 0.6 * (switches.saturating_sub(1)) as f64
                        } * hosts
                            + queueing;
                        let rate = links
                            .iter()
                            .map(|&l| self.fabric.capacity[l])
                            .fold(f64::INFINITY, f64::min);
                        let rate = if rate.is_finite() {
                            rate
                        } else {
                            self.fabric.nic_goodput(*cnic)
                        };
                        if rate <= 0.0 {
                            fail_at = Some(measure_from + batch::retry_budget_s(p.qp_timeout, 7));
                        } else {
                            let head = if p.duration.is_some() {
                                perftest::LAT_DUR_HEADER
                            } else {
                                perftest::LAT_HEADER
                            };
                            client.push_str(head);
                            server.push_str(head);
                            for s in p.sizes() {
                                let ser = s as f64 * 8.0 / (rate * 1e3);
                                let (t, rtt) = match p.verb {
                                    Verb::Write => (one_way + ser, 2.0 * (one_way + ser)),
                                    Verb::Send => {
                                        (one_way + 0.15 + ser, 2.0 * (one_way + 0.15 + ser))
                                    }
                                    Verb::Read => {
                                        let t = 2.0 * one_way + 0.3 + ser;
                                        (t, t)
                                    }
                                };
                                let iters = match p.duration {
                                    Some(d) => (d as f64 * 1e6 / rtt) as u64,
                                    None => p.iterations(),
                                };
                                secs += iters as f64 * rtt * 1e-6;
                                let row = perftest::lat_stats(s, iters, t, ser, &mut rng);
                                let line = if p.duration.is_some() {
                                    perftest::lat_dur_row(&row)
                                } else {
                                    perftest::lat_row(&row)
                                };
                                client.push_str(&line);
                                if p.verb != Verb::Read {
                                    server.push_str(&line);
                                }
                            }
                            client.push_str(perftest::RESULT_LINE);
                            server.push_str(perftest::RESULT_LINE);
                        }
                    }
                }
            }
        }
        let (c_err, s_err, exit, end) = if let Some(t) = fail_at {
            // No route (or a dead link) under the QPs for longer than their
            // retry budget (-u 14: ≈67 ms × 8 tries): transport retry
            // counter exceeded.
            (
                " Completion with error at client\n Failed status 12: wr_id 0 syndrom 0x81\nscnt=128, ccnt=0\n Failed to complete run_iter_bw function successfully\n",
                " Failed to exchange data between server and clients\n",
                1,
                t,
            )
        } else {
            ("", "", 0, client_start + secs)
        };
        let c = &mut out[cs][ci];
        c.started_s = client_start;
        c.stdout = client;
        c.stderr = c_err.into();
        c.exit = Some(exit);
        c.ended_s = end;
        let s = &mut out[ss][sidx];
        s.started_s = start;
        s.stdout = server;
        s.stderr = s_err.into();
        s.exit = Some(exit);
        s.ended_s = end;
    }
}

/// When a `--run_infinitely` client runs and how it is stopped.
struct Windows {
    client_start: f64,
    /// When the first window opens (after the connection setup).
    measure_from: f64,
    stop: Option<Deadline>,
    limit_s: f64,
}

impl Emulator {
    /// A `--run_infinitely` pair: the client prints one row per `-D`
    /// window (perftest's `catch_alarm_infintely` calls `print_report_bw`
    /// on every SIGALRM and re-arms it), each the goodput its QPs moved in
    /// that window, until its `timeout` signals it (or the transport kills
    /// it at its limit, or its QPs give up in an outage). The server waits
    /// in its final handshake and fails it when the client's socket closes.
    #[allow(clippy::too_many_arguments)]
    fn render_windows(
        &self,
        pair: &Pair,
        p: &Params,
        w: &Windows,
        segs: &[Segment],
        flows: &mut [Flow],
        out: &mut [Vec<InvocationOutput>],
        mut client: String,
        server: String,
        server_start: f64,
    ) {
        let size = p.sizes().last().copied().unwrap_or(65536);
        let cap = p.msg_cap_gbps(size);
        let d = p.duration.unwrap_or(5).max(1) as f64;
        let (stop, exit) = match w.stop {
            Some(dl) if dl.after_s < w.limit_s => (w.client_start + dl.after_s, Some(dl.exit)),
            _ => (w.client_start + w.limit_s, None),
        };
        let all: Vec<usize> = pair.fwd.iter().chain(&pair.rev).copied().collect();
        let budget = batch::retry_budget_s(p.qp_timeout, 7);
        let fail_at = batch::stall_failure(segs, &all, w.measure_from, stop, budget);
        let until = fail_at.unwrap_or(stop).max(w.measure_from);
        for &f in &all {
            flows[f].window.1 = until;
        }
        let mut k = 1.0;
        while w.measure_from + k * d <= until + 1e-9 {
            let (a, b) = (w.measure_from + (k - 1.0) * d, w.measure_from + k * d);
            let gbits: f64 = pair
                .fwd
                .iter()
                .map(|&f| batch::integrate_flow(segs, &flows[f], a, b, &|s| s.goodput(f).min(cap)))
                .sum();
            let avg = gbits / d;
            let iters = (avg * 1e9 / 8.0 * d / size as f64) as u64;
            client.push_str(&perftest::bw_row(
                p,
                &perftest::BwRow {
                    size,
                    iters,
                    peak_gbps: None,
                    avg_gbps: avg,
                    msg_rate: iters as f64 / d,
                },
            ));
            k += 1.0;
        }
        let c = &mut out[pair.client.0][pair.client.1];
        c.started_s = w.client_start;
        c.stdout = client;
        c.ended_s = until;
        if fail_at.is_some() {
            c.stderr = " Completion with error at client\n Failed status 12: wr_id 0 syndrom 0x81\nscnt=128, ccnt=0\n Error occurred while running infinitely! aborting ...\n".into();
            c.exit = Some(1);
        } else if let Some(e) = exit {
            c.exit = Some(e);
        } else {
            c.exit = None;
            c.failure = Some(ExecFailure::TimedOut(format!(
                "{} timed out after {:.0}s (--run_infinitely never ends by itself)",
                p.tool, w.limit_s
            )));
        }
        let s = &mut out[pair.server.0][pair.server.1];
        s.started_s = server_start;
        s.stdout = server;
        s.stderr = " Failed to exchange data between server and clients\n".into();
        s.exit = Some(1);
        s.ended_s = until;
    }
}

#[cfg(test)]
pub(crate) mod testutil {
    use crate::config::check::parse_inventory;
    use crate::config::generate::{generate, to_yaml, PodShape};
    use crate::config::inventory::{Defect, EmulationSpec};
    use crate::config::model::Inventory;

    /// The default 16-node × 8-rail × 400G pod at `mtu`, with `defects`.
    pub fn pod(mtu: u32, defects: &[Defect]) -> Inventory {
        let shape = PodShape {
            mtu,
            ..PodShape::default()
        };
        let mut raw = generate(&shape).unwrap();
        if !defects.is_empty() {
            raw.emulation = Some(EmulationSpec {
                defects: defects.to_vec(),
            });
        }
        let yaml = to_yaml(&shape, &raw).unwrap();
        parse_inventory("pod.yaml", &yaml).unwrap_or_else(|e| panic!("{e}"))
    }
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_aci;
#[cfg(test)]
mod tests_api;
#[cfg(test)]
mod tests_config;
#[cfg(test)]
mod tests_cumulus;
#[cfg(test)]
mod tests_faults;
#[cfg(test)]
mod tests_iperf;
#[cfg(test)]
mod tests_noise;
#[cfg(test)]
mod tests_series;
#[cfg(test)]
mod tests_sonic;
#[cfg(test)]
mod tests_switch_harness;
