//! nccl-tests as the emulator answers it: the launcher line (OpenMPI
//! `mpirun`, Slurm `srun`) and the nccl-tests options parsed, the job's
//! shape (nodes, GPUs per node, HCAs from `NCCL_IB_HCA`) worked out, and the
//! output printed in the nccl-tests 2.13+ layout with NCCL 2.21 INFO lines
//! from rank 0 (`NET/IB : Using …`, `Channel …/0 : … via NET/IB/…`).
//!
//! The bandwidth itself comes from the emulator (ring flows water-filled with
//! everything else in the batch); this module turns a plateau into a sweep.

use std::collections::HashMap;

use crate::config::hostlist;

use super::noise::Noise;
use super::perftest::Refusal;
use super::rng::Rng;

/// NVLink bus bandwidth of one 8×H100 node for all_reduce (≈480 GB/s peak,
/// the single-node figure in DESIGN.md's reference numbers).
pub const NVLINK_BUSBW: f64 = 480.0;

/// Share of the per-NIC RoCE goodput that the Ring algorithm turns into bus
/// bandwidth (Simple-protocol flags and FIFO slots, proxy pipelining). Chosen
/// so 8×400G at MTU 4096 lands at 8 × 392.1 / 8 × 0.94 ≈ 368.6 GB/s, next to
/// the 369.9 GB/s measured on AWS p5en at 16 GiB and the nccl-tests
/// maintainers' 46–49 GB/s per 400G NIC.
pub const RING_EFFICIENCY: f64 = 0.94;

/// Bus bandwidth NCCL reaches over TCP sockets when it finds no IB device
/// (one 25G management port per node at ≈80% TCP efficiency).
pub const SOCKET_BUSBW: f64 = 2.5;

/// NCCL opens two channels per NIC on 8-GPU/8-NIC nodes; each channel is a
/// connection with `NCCL_IB_QPS_PER_CONNECTION` QPs.
pub const CHANNELS_PER_NIC: u32 = 2;

/// Latency terms (µs): kernel launch and completion, and per ring step an
/// intra-node NVLink hop plus a network hop shared out over the ranks.
pub const LAUNCH_US: f64 = 6.0;
pub const NVLINK_STEP_US: f64 = 0.35;
pub const NET_STEP_US: f64 = 2.2;

/// Bytes a channel pipeline moves per step before it streams (NCCL's Simple
/// protocol slices a buffer into chunks); filling the ring costs
/// `steps × min(256 KiB, S / N) / per-lane bandwidth`, which is why the
/// plateau is reached only at hundreds of MiB to GiB.
pub const PIPELINE_CHUNK: f64 = 262_144.0;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Coll {
    AllReduce,
    AllGather,
    ReduceScatter,
    AllToAll,
    Broadcast,
    Reduce,
    SendRecv,
}

impl Coll {
    pub fn from_binary(name: &str) -> Option<Coll> {
        Some(match name {
            "all_reduce_perf" => Coll::AllReduce,
            "all_gather_perf" => Coll::AllGather,
            "reduce_scatter_perf" => Coll::ReduceScatter,
            "alltoall_perf" => Coll::AllToAll,
            "broadcast_perf" => Coll::Broadcast,
            "reduce_perf" => Coll::Reduce,
            "sendrecv_perf" => Coll::SendRecv,
            _ => return None,
        })
    }

    /// busbw / algbw (nccl-tests PERFORMANCE.md).
    pub fn factor(self, n: u32) -> f64 {
        let n = f64::from(n.max(1));
        match self {
            Coll::AllReduce => 2.0 * (n - 1.0) / n,
            Coll::AllGather | Coll::ReduceScatter | Coll::AllToAll => (n - 1.0) / n,
            Coll::Broadcast | Coll::Reduce | Coll::SendRecv => 1.0,
        }
    }

    /// Ring steps of one operation over `n` ranks.
    pub fn steps(self, n: u32) -> f64 {
        let n = f64::from(n.max(1));
        match self {
            Coll::AllReduce => 2.0 * (n - 1.0),
            _ => n - 1.0,
        }
    }

    fn redop_root(self) -> (&'static str, i32) {
        match self {
            Coll::AllReduce | Coll::ReduceScatter | Coll::SendRecv => ("sum", -1),
            Coll::AllGather | Coll::AllToAll => ("none", -1),
            Coll::Broadcast => ("none", 0),
            Coll::Reduce => ("sum", 0),
        }
    }

    /// Element count for a requested size, as nccl-tests rounds it.
    pub fn count(self, size: u64, n: u32) -> u64 {
        let n = u64::from(n.max(1));
        match self {
            Coll::AllGather | Coll::ReduceScatter | Coll::AllToAll => size / 4 / n,
            _ => size / 4,
        }
    }

    pub fn bytes(self, count: u64, n: u32) -> u64 {
        match self {
            Coll::AllGather | Coll::ReduceScatter | Coll::AllToAll => count * 4 * u64::from(n),
            _ => count * 4,
        }
    }
}

/// A parsed collective job.
#[derive(Debug, Clone)]
pub struct Job {
    pub coll: Coll,
    /// Node names with the number of ranks each runs, in rank order.
    pub hosts: Vec<(String, u32)>,
    pub env: HashMap<String, String>,
    pub tag_output: bool,
    pub label: bool,
    pub min_bytes: u64,
    pub max_bytes: u64,
    pub step_factor: u64,
    pub step_bytes: u64,
    pub ngpus: u32,
    pub iters: u64,
    pub warmup: u64,
    pub check: bool,
    /// `-N`: sweeps run back to back, each printing its rows.
    pub cycles: u64,
}

impl Job {
    pub fn ranks(&self) -> u32 {
        self.hosts.iter().map(|(_, r)| r * self.ngpus).sum()
    }

    pub fn sizes(&self) -> Vec<u64> {
        let mut out = Vec::new();
        let mut s = self.min_bytes;
        while s <= self.max_bytes && out.len() < 64 {
            out.push(s);
            let next = if self.step_factor > 1 {
                s.saturating_mul(self.step_factor)
            } else {
                s.saturating_add(self.step_bytes.max(1))
            };
            if next == s {
                break;
            }
            s = next;
        }
        out
    }

    /// `NCCL_IB_HCA` filter applied to a node's devices, in NCCL's order.
    pub fn hcas<'a>(&self, devices: &[&'a str]) -> Vec<&'a str> {
        let Some(spec) = self.env.get("NCCL_IB_HCA") else {
            return devices.to_vec();
        };
        let (exclude, rest) = match spec.strip_prefix('^') {
            Some(r) => (true, r),
            None => (false, spec.as_str()),
        };
        let (exact, rest) = match rest.strip_prefix('=') {
            Some(r) => (true, r),
            None => (false, rest),
        };
        let names: Vec<&str> = rest
            .split(',')
            .map(|w| w.split(':').next().unwrap_or(""))
            .filter(|w| !w.is_empty())
            .collect();
        let hit = |d: &str| {
            names
                .iter()
                .any(|n| if exact { d == *n } else { d.starts_with(n) })
        };
        devices
            .iter()
            .copied()
            .filter(|d| hit(d) != exclude)
            .collect()
    }
}

/// nccl-tests `parsesize`: a number with an optional K, M or G (powers of 1024).
fn parse_bytes(s: &str) -> Option<u64> {
    let (num, mult) = match s.chars().last()? {
        'K' | 'k' => (&s[..s.len() - 1], 1u64 << 10),
        'M' | 'm' => (&s[..s.len() - 1], 1 << 20),
        'G' | 'g' => (&s[..s.len() - 1], 1 << 30),
        _ => (s, 1),
    };
    num.parse::<u64>().ok().map(|n| n * mult)
}

fn refuse(stderr: String) -> Refusal {
    Refusal {
        stdout: String::new(),
        stderr,
        exit: 1,
    }
}

/// Parses the nccl-tests part of a command line (binary first).
fn parse_test(words: &[String], job: &mut Job) -> Result<(), Refusal> {
    let mut i = 1;
    while i < words.len() {
        let w = words[i].as_str();
        i += 1;
        let (key, inline) = match w.split_once('=') {
            Some((k, v)) if w.starts_with("--") => (k, Some(v.to_string())),
            _ => (w, None),
        };
        let takes = [
            "-t",
            "-g",
            "-b",
            "-e",
            "-i",
            "-f",
            "-n",
            "-m",
            "-w",
            "-p",
            "-c",
            "-o",
            "-d",
            "-r",
            "-z",
            "-y",
            "-T",
            "-G",
            "-C",
            "-a",
            "-R",
            "-N",
            "-u",
            "-M",
            "--nthreads",
            "--ngpus",
            "--minbytes",
            "--maxbytes",
            "--stepbytes",
            "--stepfactor",
            "--iters",
            "--agg_iters",
            "--warmup_iters",
            "--parallel_init",
            "--check",
            "--op",
            "--datatype",
            "--root",
            "--blocking",
            "--stream_null",
            "--timeout",
            "--cudagraph",
            "--report_cputime",
            "--average",
            "--local_register",
        ];
        if !takes.contains(&key) {
            continue;
        }
        let val = match inline {
            Some(v) => v,
            None if i < words.len() => {
                i += 1;
                words[i - 1].clone()
            }
            None => String::new(),
        };
        let bad = || {
            refuse(format!(
                "invalid value '{val}' for {key}\n",
                val = val.clone(),
                key = key
            ))
        };
        match key {
            "-b" | "--minbytes" => job.min_bytes = parse_bytes(&val).ok_or_else(bad)?,
            "-e" | "--maxbytes" => job.max_bytes = parse_bytes(&val).ok_or_else(bad)?,
            "-i" | "--stepbytes" => job.step_bytes = parse_bytes(&val).ok_or_else(bad)?,
            "-f" | "--stepfactor" => job.step_factor = val.parse().map_err(|_| bad())?,
            "-g" | "--ngpus" => job.ngpus = val.parse::<u32>().map_err(|_| bad())?.max(1),
            "-n" | "--iters" => job.iters = val.parse().map_err(|_| bad())?,
            "-w" | "--warmup_iters" => job.warmup = val.parse().map_err(|_| bad())?,
            "-c" | "--check" => job.check = val.parse::<u32>().map_err(|_| bad())? != 0,
            "-N" | "--run_cycles" => job.cycles = val.parse().map_err(|_| bad())?,
            _ => {}
        }
    }
    Ok(())
}

fn empty_job(coll: Coll) -> Job {
    // nccl-tests defaults: 32 MiB to 32 MiB, step 1 MiB, 20 iterations,
    // 5 warm-up iterations, validation on.
    Job {
        coll,
        hosts: Vec::new(),
        env: HashMap::new(),
        tag_output: false,
        label: false,
        min_bytes: 32 << 20,
        max_bytes: 32 << 20,
        step_factor: 1,
        step_bytes: 1 << 20,
        ngpus: 1,
        iters: 20,
        warmup: 5,
        check: true,
        cycles: 1,
    }
}

fn not_launchable(prog: &str, host: &str) -> Refusal {
    refuse(format!(
        "--------------------------------------------------------------------------\n\
         mpirun was unable to launch the specified application as it could not access\n\
         or execute an executable:\n\n\
         Executable: {prog}\n\
         Node: {host}\n\n\
         while attempting to start process rank 0.\n\
         --------------------------------------------------------------------------\n"
    ))
}

/// Parses an OpenMPI `mpirun` line. `env` is the invocation's environment,
/// where `-x VAR` takes its value from.
pub fn parse_mpirun(argv: &[String], env: &[(String, String)]) -> Result<Job, Refusal> {
    let mut i = 1;
    let mut np: Option<u32> = None;
    let mut hosts: Vec<(String, u32)> = Vec::new();
    let mut ppr: Option<u32> = None;
    let mut vars: HashMap<String, String> = HashMap::new();
    let mut tag = false;
    let lookup = |k: &str| env.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
    while i < argv.len() {
        let w = argv[i].as_str();
        if !w.starts_with('-') {
            break;
        }
        i += 1;
        let mut arg = || {
            i += 1;
            argv.get(i - 1).cloned().unwrap_or_default()
        };
        match w {
            "-np" | "-n" | "--np" | "-c" => np = arg().parse().ok(),
            "-H" | "-host" | "--host" => {
                for h in arg().split(',') {
                    let (name, slots) = match h.split_once(':') {
                        Some((n, s)) => (n.to_string(), s.parse().unwrap_or(1)),
                        None => (h.to_string(), 1),
                    };
                    if !name.is_empty() {
                        hosts.push((name, slots));
                    }
                }
            }
            "--map-by" | "-map-by" => {
                let m = arg();
                if let Some(rest) = m.strip_prefix("ppr:") {
                    ppr = rest.split(':').next().and_then(|n| n.parse().ok());
                }
            }
            "-N" | "--npernode" | "-npernode" => ppr = arg().parse().ok(),
            "-x" => {
                let a = arg();
                match a.split_once('=') {
                    Some((k, v)) => {
                        vars.insert(k.to_string(), v.to_string());
                    }
                    None => {
                        if let Some(v) = lookup(&a) {
                            vars.insert(a, v);
                        }
                    }
                }
            }
            "--mca" | "-mca" | "--gmca" => {
                arg();
                arg();
            }
            "--bind-to"
            | "-bind-to"
            | "--rank-by"
            | "--hostfile"
            | "-hostfile"
            | "--prefix"
            | "-wdir"
            | "--wdir"
            | "--output-filename"
            | "--report-bindings-file" => {
                arg();
            }
            "--tag-output" | "-tag-output" => tag = true,
            _ => {}
        }
    }
    let Some(prog) = argv.get(i) else {
        return Err(refuse(
            "--------------------------------------------------------------------------\n\
             No executable was specified on the mpirun command line.\n\n\
             Aborting.\n\
             --------------------------------------------------------------------------\n"
                .into(),
        ));
    };
    let binary = prog.rsplit('/').next().unwrap_or(prog).to_string();
    let first_host = hosts.first().map(|h| h.0.clone()).unwrap_or_default();
    let Some(coll) = Coll::from_binary(&binary) else {
        return Err(not_launchable(prog, &first_host));
    };
    let mut job = empty_job(coll);
    for (k, v) in env {
        job.env.insert(k.clone(), v.clone());
    }
    job.env.extend(vars);
    job.tag_output = tag;
    // Ranks fill hosts in order: ppr per node when given, else the slots.
    let total: u32 = hosts.iter().map(|(_, s)| ppr.unwrap_or(*s)).sum();
    let np = np.unwrap_or(total);
    if np > total {
        return Err(refuse(format!(
            "--------------------------------------------------------------------------\n\
             There are not enough slots available in the system to satisfy the {np}\n\
             slots that were requested by the application:\n\n  {prog}\n\n\
             Either request fewer slots for your application, or make more slots\n\
             available for use.\n\
             --------------------------------------------------------------------------\n"
        )));
    }
    let mut left = np;
    for (name, slots) in hosts {
        if left == 0 {
            break;
        }
        let r = ppr.unwrap_or(slots).min(left);
        left -= r;
        job.hosts.push((name, r));
    }
    parse_test(&argv[i..], &mut job)?;
    Ok(job)
}

/// Parses a Slurm `srun` line (`-N`, `-w`, `--ntasks-per-node`, `--export`).
pub fn parse_srun(argv: &[String], env: &[(String, String)]) -> Result<Job, Refusal> {
    let mut i = 1;
    let mut nodelist: Vec<String> = Vec::new();
    let mut nnodes: Option<u32> = None;
    let mut per_node: Option<u32> = None;
    let mut ntasks: Option<u32> = None;
    let mut vars: HashMap<String, String> = HashMap::new();
    let mut label = false;
    while i < argv.len() {
        let w = argv[i].clone();
        if !w.starts_with('-') {
            break;
        }
        i += 1;
        let (key, inline) = match w.split_once('=') {
            Some((k, v)) if w.starts_with("--") => (k.to_string(), Some(v.to_string())),
            _ => (w.clone(), None),
        };
        let flag = matches!(
            key.as_str(),
            "-l" | "--label" | "--exclusive" | "-v" | "--verbose" | "-Q" | "--quiet"
        );
        if flag {
            label |= key == "-l" || key == "--label";
            continue;
        }
        let val = match inline {
            Some(v) => v,
            None => {
                i += 1;
                argv.get(i - 1).cloned().unwrap_or_default()
            }
        };
        match key.as_str() {
            "-N" | "--nodes" => nnodes = val.split('-').next().and_then(|n| n.parse().ok()),
            "-w" | "--nodelist" => {
                nodelist = hostlist::expand(&val).map_err(|e| {
                    refuse(format!("srun: error: Invalid node name specified: {e}\n"))
                })?
            }
            "--ntasks-per-node" => per_node = val.parse().ok(),
            "-n" | "--ntasks" => ntasks = val.parse().ok(),
            "--export" => {
                let mut last: Option<String> = None;
                for piece in val.split(',') {
                    match piece.split_once('=') {
                        Some((k, v)) => {
                            vars.insert(k.to_string(), v.to_string());
                            last = Some(k.to_string());
                        }
                        None if piece == "ALL" || piece == "NONE" => last = None,
                        // A comma inside a value (NCCL_IB_HCA=a:1,b:1).
                        None => match &last {
                            Some(k) => {
                                if let Some(v) = vars.get_mut(k) {
                                    v.push(',');
                                    v.push_str(piece);
                                }
                            }
                            None => {
                                if let Some((_, v)) = env.iter().find(|(n, _)| n == piece) {
                                    vars.insert(piece.to_string(), v.clone());
                                }
                            }
                        },
                    }
                }
            }
            _ => {}
        }
    }
    let Some(prog) = argv.get(i) else {
        return Err(refuse("srun: fatal: No command given to execute.\n".into()));
    };
    let binary = prog.rsplit('/').next().unwrap_or(prog).to_string();
    let Some(coll) = Coll::from_binary(&binary) else {
        return Err(refuse(format!(
            "slurmstepd: error: execve(): {prog}: No such file or directory\n\
             srun: error: {}: task 0: Exited with exit code 2\n",
            nodelist.first().cloned().unwrap_or_default()
        )));
    };
    let n = nnodes.unwrap_or(nodelist.len() as u32) as usize;
    if nodelist.len() < n || n == 0 {
        return Err(refuse(
            "srun: error: Unable to allocate resources: Requested node configuration is not available
"
                .to_string(),
        ));
    }
    let per = per_node
        .or_else(|| ntasks.map(|t| t.div_ceil(n as u32)))
        .unwrap_or(1);
    let mut job = empty_job(coll);
    for (k, v) in env {
        job.env.insert(k.clone(), v.clone());
    }
    job.env.extend(vars);
    job.label = label;
    job.hosts = nodelist.into_iter().take(n).map(|h| (h, per)).collect();
    parse_test(&argv[i..], &mut job)?;
    Ok(job)
}

/// The transport NCCL ended up with.
#[derive(Debug, Clone)]
pub enum Net {
    /// IB verbs over these HCAs (names in NCCL's order, with their index).
    Ib(Vec<String>),
    Socket,
}

/// Everything the rendering needs from the model.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub net: Net,
    /// Plateau bus bandwidth, GB/s.
    pub busbw: f64,
    /// Parallel rings (rails, or GPUs on one node).
    pub lanes: u32,
    pub oob_ip: String,
    pub seed: u64,
}

/// H100 SXM bus IDs in an 8-GPU HGX board, by device index.
const BUS_IDS: [u32; 8] = [0x18, 0x2a, 0x3a, 0x5d, 0x9a, 0xab, 0xba, 0xdb];

fn fmt_time(us: f64) -> String {
    if us >= 10000.0 {
        format!("{us:7.0}")
    } else if us >= 100.0 {
        format!("{us:7.1}")
    } else {
        format!("{us:7.2}")
    }
}

/// C's `%g` with six significant digits, as nccl-tests prints the average.
fn fmt_g(x: f64) -> String {
    if x == 0.0 {
        return "0".into();
    }
    let exp = x.abs().log10().floor() as i32;
    if !(-5..6).contains(&exp) {
        return format!("{x:e}");
    }
    let decimals = (5 - exp).max(0) as usize;
    let s = format!("{x:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// Microseconds one operation of `bytes` takes over `lanes` parallel rings
/// with a plateau of `busbw` GB/s.
pub fn op_time_us(job: &Job, nodes: u32, busbw: f64, lanes: u32, bytes: u64) -> f64 {
    let n = job.ranks();
    let per_step = if nodes > 1 {
        NVLINK_STEP_US + NET_STEP_US * f64::from(nodes) / f64::from(n.max(1))
    } else {
        NVLINK_STEP_US
    };
    let lat = LAUNCH_US + job.coll.steps(n) * per_step;
    let bw = bytes as f64 * job.coll.factor(n) / (busbw * 1e9) * 1e6;
    let lane_bw = busbw / f64::from(lanes.max(1));
    let slice = PIPELINE_CHUNK.min(bytes as f64 / f64::from(n.max(1)));
    let fill = job.coll.steps(n) * slice / (lane_bw * 1e9) * 1e6;
    lat + fill + bw
}

/// Seconds from launch to the first timed operation: mpirun, bootstrap
/// and communicator init.
pub fn setup_s(job: &Job) -> f64 {
    3.0 + 0.02 * f64::from(job.ranks())
}

/// The full stdout of the job, and the seconds it ran.
pub fn render(job: &Job, out: &Outcome) -> (String, f64) {
    let n = job.ranks();
    let nodes = job.hosts.len() as u32;
    let mut rng = Rng::new(out.seed);
    let mut o = preamble(job, out, &mut rng);
    let (redop, root) = job.coll.redop_root();
    let factor = job.coll.factor(n);
    let wrong = if job.check { "0" } else { "N/A" };
    let mut total_us = 0.0;
    let mut sum_busbw = 0.0;
    let mut count_busbw = 0u32;
    let sizes = job.sizes();
    for &req in &sizes {
        let count = job.coll.count(req, n);
        let bytes = job.coll.bytes(count, n);
        o.push_str(&format!(
            "{bytes:>12}  {count:>12}  {:>8}  {redop:>6}  {root:>6}",
            "float"
        ));
        // Each timed run is a little slower than the model, by its own
        // draw, more so where latency dominates (`noise`).
        let model = op_time_us(job, nodes, out.busbw, out.lanes, bytes);
        let lat_frac = op_time_us(job, nodes, out.busbw, out.lanes, 0) / model;
        for _ in 0..2 {
            let t = model * (1.0 + Noise::nccl_row_excess(&mut rng, lat_frac));
            let algbw = bytes as f64 / (t * 1e-6) / 1e9;
            let busbw = algbw * factor;
            o.push_str(&format!(
                "  {}  {algbw:6.2}  {busbw:6.2}  {wrong:>5}",
                fmt_time(t)
            ));
            total_us += t * job.iters as f64;
            sum_busbw += busbw;
            count_busbw += 1;
        }
        o.push('\n');
    }
    if let Some(&max) = sizes.last() {
        total_us += op_time_us(job, nodes, out.busbw, out.lanes, max) * job.warmup as f64;
    }
    o.push_str(&footer(sum_busbw, count_busbw));
    (o, setup_s(job) + total_us * 1e-6)
}

fn footer(sum_busbw: f64, count: u32) -> String {
    let avg = if count > 0 {
        sum_busbw / f64::from(count)
    } else {
        0.0
    };
    format!(
        "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : {} \n#\n",
        fmt_g(avg)
    )
}

/// The stdout of a `-N` run whose rows the caller timed: `rows` holds each
/// printed row's requested size and its two runs' µs per operation
/// (out-of-place, in-place), cycle after cycle. `complete` adds the
/// closing lines a run that did not fail prints.
pub fn render_rows(job: &Job, out: &Outcome, rows: &[(u64, [f64; 2])], complete: bool) -> String {
    let n = job.ranks();
    let mut rng = Rng::new(out.seed);
    let mut o = preamble(job, out, &mut rng);
    let (redop, root) = job.coll.redop_root();
    let factor = job.coll.factor(n);
    let wrong = if job.check { "0" } else { "N/A" };
    let mut sum_busbw = 0.0;
    for &(req, times) in rows {
        let count = job.coll.count(req, n);
        let bytes = job.coll.bytes(count, n);
        o.push_str(&format!(
            "{bytes:>12}  {count:>12}  {:>8}  {redop:>6}  {root:>6}",
            "float"
        ));
        for t in times {
            let algbw = bytes as f64 / (t * 1e-6) / 1e9;
            let busbw = algbw * factor;
            o.push_str(&format!(
                "  {}  {algbw:6.2}  {busbw:6.2}  {wrong:>5}",
                fmt_time(t)
            ));
            sum_busbw += busbw;
        }
        o.push('\n');
    }
    if complete {
        o.push_str(&footer(sum_busbw, 2 * rows.len() as u32));
    }
    o
}

/// Everything before the first result row.
fn preamble(job: &Job, out: &Outcome, rng: &mut Rng) -> String {
    let n = job.ranks();
    let nodes = job.hosts.len() as u32;
    let mut o = String::new();
    let step = if job.step_factor > 1 {
        format!("{}(factor)", job.step_factor)
    } else {
        format!("{}(bytes)", job.step_bytes)
    };
    o.push_str(&format!(
        "# nThread 1 nGpus {} minBytes {} maxBytes {} step: {} warmup iters: {} iters: {} agg iters: 1 validation: {} graph: 0\n",
        job.ngpus, job.min_bytes, job.max_bytes, step, job.warmup, job.iters, u8::from(job.check)
    ));
    o.push_str("#\n# Using devices\n");
    let mut rank = 0u32;
    for (h, (host, r)) in job.hosts.iter().enumerate() {
        for local in 0..*r {
            let pid = 10_000 + (h as u32 * 97 + local * 13) % 50_000;
            for g in 0..job.ngpus {
                let dev = (local * job.ngpus + g) % 8;
                o.push_str(&format!(
                    "#  Rank {rank:>2} Group  0 Pid {pid:>6} on {host:>10} device {dev:>2} [0x{:02x}] NVIDIA H100 80GB HBM3\n",
                    BUS_IDS[dev as usize]
                ));
                rank += 1;
            }
        }
    }
    let debug = job
        .env
        .get("NCCL_DEBUG")
        .is_some_and(|v| v.eq_ignore_ascii_case("INFO") || v.eq_ignore_ascii_case("TRACE"));
    if let Some((host0, _)) = job.hosts.first() {
        let pid = 10_000;
        let pre = format!("{host0}:{pid}:{pid} [0] NCCL INFO");
        let pre2 = format!("{host0}:{pid}:{} [0] NCCL INFO", pid + 71);
        if debug {
            o.push_str(&format!("{pre} Bootstrap : Using eth0:{}<0>\n", out.oob_ip));
            o.push_str(&format!("{pre} cudaDriverVersion 12040\n"));
        }
        if job.env.contains_key("NCCL_DEBUG") {
            o.push_str("NCCL version 2.21.5+cuda12.4\n");
        }
        if debug {
            match &out.net {
                Net::Ib(hcas) => {
                    let list: String = hcas
                        .iter()
                        .enumerate()
                        .map(|(i, d)| format!(" [{i}]{d}:1/RoCE"))
                        .collect();
                    o.push_str(&format!(
                        "{pre2} NET/IB : Using{list} [RO]; OOB eth0:{}<0>\n",
                        out.oob_ip
                    ));
                    o.push_str(&format!("{pre2} Using non-device net plugin version 0\n"));
                    o.push_str(&format!("{pre2} Using network IB\n"));
                }
                Net::Socket => {
                    o.push_str(&format!("{pre2} NET/IB : No device found.\n"));
                    o.push_str(&format!(
                        "{pre2} NET/Socket : Using [0]eth0:{}<0>\n",
                        out.oob_ip
                    ));
                    o.push_str(&format!("{pre2} Using non-device net plugin version 0\n"));
                    o.push_str(&format!("{pre2} Using network Socket\n"));
                }
            }
            let comm = 0x55d0_c8a0_0000u64 | (rng.next_u64() & 0x00FF_FFF0);
            let comm_id = rng.next_u64();
            o.push_str(&format!(
                "{pre2} ncclCommInitRank comm {comm:#x} rank 0 nranks {n} cudaDev 0 nvmlDev 0 busId 18000 commId {comm_id:#x} - Init START\n"
            ));
            let local = job.hosts[0].1 * job.ngpus;
            o.push_str(&format!(
                "{pre2} comm {comm:#x} rank 0 nRanks {n} nNodes {nodes} localRanks {local} localRank 0 MNNVL 0\n"
            ));
            if nodes > 1 {
                let (net, dev) = match &out.net {
                    Net::Ib(_) => ("IB", 0),
                    Net::Socket => ("Socket", 0),
                };
                let nics = match &out.net {
                    Net::Ib(h) => h.len().max(1) as u32,
                    Net::Socket => 1,
                };
                let next = local;
                let prev = n - local;
                let gdr = if matches!(out.net, Net::Ib(_)) {
                    "/GDRDMA"
                } else {
                    ""
                };
                for c in [0, nics] {
                    o.push_str(&format!(
                        "{pre2} Channel {c:02}/0 : {prev}[0] -> 0[0] [receive] via NET/{net}/{dev}{gdr}\n"
                    ));
                    o.push_str(&format!(
                        "{pre2} Channel {c:02}/0 : 0[0] -> {next}[0] [send] via NET/{net}/{dev}{gdr}\n"
                    ));
                }
            }
            o.push_str(&format!("{pre2} Connected all rings\n"));
            o.push_str(&format!(
                "{pre2} ncclCommInitRank comm {comm:#x} rank 0 nranks {n} cudaDev 0 nvmlDev 0 busId 18000 commId {comm_id:#x} - Init COMPLETE\n"
            ));
        }
    }
    o.push_str("#\n");
    o.push_str("#                                                              out-of-place                       in-place          \n");
    o.push_str("#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n");
    o.push_str("#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)       \n");
    o
}

/// Prefixes every line as `mpirun --tag-output` (`[1,0]<stdout>:`) or
/// `srun -l` (`0: `) would for rank 0.
pub fn prefix_lines(text: &str, prefix: &str) -> String {
    text.lines().map(|l| format!("{prefix}{l}\n")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn parses_the_harness_mpirun_line() {
        let job = parse_mpirun(
            &words("mpirun --allow-run-as-root -np 16 -H gpu001:8,gpu002:8 --map-by ppr:8:node --bind-to numa -x NCCL_IB_HCA==mlx5_0:1,mlx5_1:1 -x NCCL_DEBUG -x NCCL_IB_QPS_PER_CONNECTION=4 all_reduce_perf -b 8 -e 8G -f 2 -g 1 -n 20 -w 5 -c 1"),
            &[("NCCL_DEBUG".into(), "INFO".into())],
        )
        .unwrap();
        assert_eq!(job.hosts, vec![("gpu001".into(), 8), ("gpu002".into(), 8)]);
        assert_eq!(job.ranks(), 16);
        assert_eq!(job.env["NCCL_DEBUG"], "INFO");
        assert_eq!(job.env["NCCL_IB_HCA"], "=mlx5_0:1,mlx5_1:1");
        assert_eq!(job.sizes().len(), 31);
        assert_eq!(*job.sizes().last().unwrap(), 8 << 30);
        assert_eq!(
            job.hcas(&["mlx5_0", "mlx5_1", "mlx5_10", "mlx5_2"]),
            vec!["mlx5_0", "mlx5_1"]
        );
    }

    #[test]
    fn parses_srun_with_commas_in_export() {
        let job = parse_srun(
            &words("srun -N 2 -w gpu[001-002] --ntasks-per-node=8 --export=ALL,NCCL_IB_HCA=mlx5_0:1,mlx5_1:1,NCCL_DEBUG=INFO all_reduce_perf -b 1M -e 1G -f 2"),
            &[],
        )
        .unwrap();
        assert_eq!(job.ranks(), 16);
        assert_eq!(job.env["NCCL_IB_HCA"], "mlx5_0:1,mlx5_1:1");
        assert_eq!(job.env["NCCL_DEBUG"], "INFO");
    }

    #[test]
    fn formats_match_nccl_tests() {
        assert_eq!(fmt_time(12.9), "  12.90");
        assert_eq!(fmt_time(124.04), "  124.0");
        assert_eq!(fmt_time(15791.2), "  15791");
        assert_eq!(fmt_g(156.742), "156.742");
        assert_eq!(fmt_g(0.565546), "0.565546");
        assert_eq!(fmt_g(52.97531), "52.9753");
    }
}
