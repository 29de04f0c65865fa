//! perftest as the emulator answers it: the command line parsed with
//! perftest's own getopt string and rules (the messages are perftest's, from
//! `src/perftest_parameters.c` and `src/write_bw.c` of linux-rdma/perftest),
//! and the 24.07 output layout (banner, address lines, result tables in
//! Gb/sec or MiB/sec, latency tables with percentiles).
//!
//! It computes nothing about the network: the emulator hands it per-QP rates
//! and path latencies and it turns them into rows and durations.

use super::noise;
use super::rng::Rng;

/// perftest's `RESULT_LINE`.
pub const RESULT_LINE: &str =
    "---------------------------------------------------------------------------------------\n";

/// Default TCP port of the out-of-band exchange (`DEF_PORT`).
pub const DEF_PORT: u16 = 18515;

/// Messages per second one QP sustains for small messages (ib_write_bw with
/// perftest defaults: TX depth 128, CQ moderation 100). ConnectX-6/7
/// single-QP small-message runs land near 10 M msg/s; the adapter-level
/// figure (ConnectX-7 product brief: up to 330–370 M msg/s) is never reached
/// by one QP. Reads keep only 16 requests outstanding and run slower.
pub const QP_MSG_RATE: f64 = 10.0e6;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verb {
    Write,
    Read,
    Send,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Test {
    Bw,
    Lat,
}

/// A parsed perftest command line.
#[derive(Debug, Clone, PartialEq)]
pub struct Params {
    pub tool: String,
    pub verb: Verb,
    pub test: Test,
    pub device: Option<String>,
    pub ib_port: u32,
    pub gid_index: Option<u32>,
    pub port: u16,
    pub size: Option<u64>,
    pub all: bool,
    pub duration: Option<u64>,
    pub iters: Option<u64>,
    pub qps: u32,
    pub bidir: bool,
    pub gbits: bool,
    pub rdma_cm: bool,
    pub cuda: Option<u32>,
    /// `-u`: the QP's local ACK timeout exponent (4.096 µs × 2^u per try).
    pub qp_timeout: u32,
    /// The positional argument: the server's address (client side only).
    pub server: Option<String>,
    /// `--run_infinitely`: print the bandwidth of every `-D` window until
    /// stopped (perftest's `run_iter_bw_infinitely` never returns by itself).
    pub run_infinitely: bool,
}

/// What a run that stops early printed, and its exit status.
#[derive(Debug, Clone, PartialEq)]
pub struct Refusal {
    pub stdout: String,
    pub stderr: String,
    pub exit: i32,
}

impl Refusal {
    fn parser(msg: &str) -> Self {
        Refusal {
            stdout: String::new(),
            stderr: format!("{msg}\n Parser function exited with Error\n"),
            exit: 1,
        }
    }
}

pub fn tool_kind(name: &str) -> Option<(Verb, Test)> {
    Some(match name {
        "ib_write_bw" => (Verb::Write, Test::Bw),
        "ib_read_bw" => (Verb::Read, Test::Bw),
        "ib_send_bw" => (Verb::Send, Test::Bw),
        "ib_write_lat" => (Verb::Write, Test::Lat),
        "ib_read_lat" => (Verb::Read, Test::Lat),
        "ib_send_lat" => (Verb::Send, Test::Lat),
        _ => return None,
    })
}

const SHORT_WITH_ARG: &str = "wypdimsntuSxcqIoMrQAlDfBTLEJjKkXW";
const SHORT_FLAGS: &str = "aFegzRvhbNVCHUOZP";

/// Long options perftest knows: (name, takes an argument, short equivalent).
const LONG: &[(&str, bool, Option<char>)] = &[
    ("port", true, Some('p')),
    ("ib-dev", true, Some('d')),
    ("ib-port", true, Some('i')),
    ("mtu", true, Some('m')),
    ("size", true, Some('s')),
    ("iters", true, Some('n')),
    ("tx-depth", true, Some('t')),
    ("qp-timeout", true, Some('u')),
    ("sl", true, Some('S')),
    ("gid-index", true, Some('x')),
    ("all", false, Some('a')),
    ("CPU-freq", false, Some('F')),
    ("connection", true, Some('c')),
    ("qp", true, Some('q')),
    ("events", false, Some('e')),
    ("inline_size", true, Some('I')),
    ("outs", true, Some('o')),
    ("rdma_cm", false, Some('R')),
    ("rx-depth", true, Some('r')),
    ("bidirectional", false, Some('b')),
    ("cq-mod", true, Some('Q')),
    ("noPeak", false, Some('N')),
    ("version", false, Some('V')),
    ("post_list", true, Some('l')),
    ("duration", true, Some('D')),
    ("margin", true, Some('f')),
    ("report_gbits", false, None),
    ("use_cuda", true, None),
    ("use_cuda_dmabuf", false, None),
    ("tclass", true, None),
    ("out_json", false, None),
    ("out_json_file", true, None),
    ("dont_xchg_versions", false, None),
    ("ipv6", false, None),
    ("report-both", false, None),
    ("use-srq", false, None),
    ("cpu_util", false, None),
    ("perform_warm_up", false, None),
    ("use_hugepages", false, None),
    ("odp", false, None),
    ("use_old_post_send", false, None),
    ("run_infinitely", false, None),
];

/// `strtol(s, NULL, 0)` with perftest's K/M suffixes for `-s`.
fn parse_size(s: &str) -> u64 {
    let (num, factor) = match s.chars().last() {
        Some('K') => (&s[..s.len() - 1], 1024),
        Some('M') => (&s[..s.len() - 1], 1024 * 1024),
        _ => (s, 1),
    };
    parse_c_int(num).max(0) as u64 * factor
}

/// The leading integer of `s` as C's `strtol(s, NULL, 0)` reads it.
fn parse_c_int(s: &str) -> i64 {
    let t = s.trim_start();
    let (neg, t) = match t.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, t.strip_prefix('+').unwrap_or(t)),
    };
    let (radix, digits) = if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        (16, h)
    } else if t.len() > 1 && t.starts_with('0') {
        (8, &t[1..])
    } else {
        (10, t)
    };
    let end = digits
        .find(|c: char| !c.is_digit(radix))
        .unwrap_or(digits.len());
    let v = i64::from_str_radix(&digits[..end], radix).unwrap_or(0);
    if neg {
        -v
    } else {
        v
    }
}

/// Parses `argv` (the tool name first) as perftest's `parser()` and
/// `force_dependecies()` would, refusing what perftest refuses.
pub fn parse(argv: &[String]) -> Result<Params, Refusal> {
    let tool = argv.first().cloned().unwrap_or_default();
    let base = tool.rsplit('/').next().unwrap_or(&tool).to_string();
    let Some((verb, test)) = tool_kind(&base) else {
        return Err(Refusal {
            stdout: String::new(),
            stderr: format!("bash: line 1: {tool}: command not found\n"),
            exit: 127,
        });
    };
    let mut p = Params {
        tool: base.clone(),
        verb,
        test,
        device: None,
        ib_port: 1,
        gid_index: None,
        port: DEF_PORT,
        size: None,
        all: false,
        duration: None,
        iters: None,
        qps: 1,
        bidir: false,
        gbits: false,
        rdma_cm: false,
        cuda: None,
        qp_timeout: 14,
        server: None,
        run_infinitely: false,
    };
    let mut opts: Vec<(String, Option<String>)> = Vec::new();
    let mut positional: Vec<String> = Vec::new();
    let mut i = 1;
    let unknown = |what: String| {
        Refusal {
        stdout: String::new(),
        stderr: format!(
            "{base}: {what}\n Invalid Command or flag.\n Please check command line and run again.\n\n Parser function exited with Error\n"
        ),
        exit: 1,
    }
    };
    while i < argv.len() {
        let w = &argv[i];
        i += 1;
        if let Some(long) = w.strip_prefix("--") {
            if long.is_empty() {
                positional.extend(argv[i..].iter().cloned());
                break;
            }
            let (name, inline) = match long.split_once('=') {
                Some((n, v)) => (n, Some(v.to_string())),
                None => (long, None),
            };
            let Some(&(lname, has_arg, short)) = LONG.iter().find(|(n, _, _)| *n == name) else {
                return Err(unknown(format!("unrecognized option '{w}'")));
            };
            let val = if has_arg {
                match inline {
                    Some(v) => Some(v),
                    None if i < argv.len() => {
                        i += 1;
                        Some(argv[i - 1].clone())
                    }
                    None => {
                        return Err(unknown(format!("option '--{lname}' requires an argument")))
                    }
                }
            } else {
                None
            };
            let key = short
                .map(|c| c.to_string())
                .unwrap_or_else(|| lname.to_string());
            opts.push((key, val));
        } else if w.len() > 1 && w.starts_with('-') {
            for (pos, c) in w[1..].char_indices() {
                if SHORT_WITH_ARG.contains(c) {
                    let rest = &w[1 + pos + c.len_utf8()..];
                    let val = if !rest.is_empty() {
                        rest.to_string()
                    } else if i < argv.len() {
                        i += 1;
                        argv[i - 1].clone()
                    } else {
                        return Err(unknown(format!("option requires an argument -- '{c}'")));
                    };
                    opts.push((c.to_string(), Some(val)));
                    break;
                } else if SHORT_FLAGS.contains(c) {
                    opts.push((c.to_string(), None));
                } else {
                    return Err(unknown(format!("invalid option -- '{c}'")));
                }
            }
        } else {
            positional.push(w.clone());
        }
    }
    for (key, val) in opts {
        let v = val.unwrap_or_default();
        match key.as_str() {
            "p" => p.port = parse_c_int(&v).clamp(0, 65535) as u16,
            "d" => p.device = Some(v),
            "i" => p.ib_port = parse_c_int(&v).max(0) as u32,
            "x" => p.gid_index = Some(parse_c_int(&v).max(0) as u32),
            "n" => p.iters = Some(parse_c_int(&v).max(0) as u64),
            "q" => {
                if test != Test::Bw {
                    return Err(Refusal::parser(" Multiple QPs only available on bw tests"));
                }
                p.qps = parse_c_int(&v).max(1) as u32;
            }
            "D" => {
                let d = parse_c_int(&v);
                if d <= 0 {
                    return Err(Refusal::parser(" Duration period must be greater than 0"));
                }
                p.duration = Some(d as u64);
            }
            "a" => p.all = true,
            "u" => p.qp_timeout = parse_c_int(&v).clamp(0, 31) as u32,
            "R" => p.rdma_cm = true,
            "s" => {
                let s = parse_size(&v);
                if !(1..=u64::from(u32::MAX / 2)).contains(&s) {
                    return Err(Refusal::parser(&format!(
                        " Message Size should be between 1 and {}",
                        u32::MAX / 2
                    )));
                }
                p.size = Some(s);
            }
            "b" => {
                if test == Test::Lat {
                    return Err(Refusal::parser(
                        " Bidirectional is only available in BW test",
                    ));
                }
                p.bidir = true;
            }
            "N" if test == Test::Lat => {
                return Err(Refusal::parser(" NoPeak only valid for BW tests"));
            }
            "e" if verb == Verb::Write => {
                return Err(Refusal::parser(
                    " Events feature not available on WRITE verb",
                ));
            }
            "report_gbits" => p.gbits = true,
            "use_cuda" => p.cuda = Some(parse_c_int(&v).max(0) as u32),
            "run_infinitely" => p.run_infinitely = true,
            _ => {}
        }
    }
    p.server = positional.into_iter().next();
    // force_dependecies(): exits directly, after a RESULT_LINE on stdout.
    if p.run_infinitely {
        let refuse = |msg: &str| Refusal {
            stdout: RESULT_LINE.into(),
            stderr: format!("{msg}\n"),
            exit: 1,
        };
        if test == Test::Lat {
            return Err(refuse(" run_infinitely exists only in BW tests for now."));
        }
        if p.bidir && verb == Verb::Send {
            return Err(refuse(
                " run_infinitely mode is not supported in SEND Bidirectional BW test",
            ));
        }
        // It forces duration mode; the window is `-D`, DEF_DURATION (5 s)
        // without one.
        if p.duration.is_none() {
            p.duration = Some(5);
        }
    }
    if p.duration.is_some() && p.all {
        let mut stdout = String::new();
        if test == Test::Bw {
            stdout.push_str(" WARNING: BW peak won't be measured in this run.\n");
        }
        stdout.push_str(RESULT_LINE);
        return Err(Refusal {
            stdout,
            stderr: "Duration mode currently doesn't support running on all sizes.\n".into(),
            exit: 1,
        });
    }
    Ok(p)
}

impl Params {
    /// Message sizes in the order perftest runs them.
    pub fn sizes(&self) -> Vec<u64> {
        if self.all {
            (1..24).map(|i| 1u64 << i).collect()
        } else {
            vec![self.size.unwrap_or(match self.test {
                Test::Bw => 65536,
                Test::Lat => 2,
            })]
        }
    }

    /// Iterations per QP and size (`DEF_ITERS_WB` 5000 for write BW,
    /// `DEF_ITERS` 1000 otherwise).
    pub fn iterations(&self) -> u64 {
        self.iters.unwrap_or(match (self.verb, self.test) {
            (Verb::Write, Test::Bw) => 5000,
            _ => 1000,
        })
    }

    pub fn title(&self) -> String {
        let verb = match self.verb {
            Verb::Write => "RDMA_Write",
            Verb::Read => "RDMA_Read",
            Verb::Send => "Send",
        };
        match (self.test, self.bidir) {
            (Test::Bw, true) => format!("{verb} Bidirectional BW Test"),
            (Test::Bw, false) => format!("{verb} BW Test"),
            (Test::Lat, _) => format!("{verb} Latency Test"),
        }
    }

    /// Per-QP message rate for small messages.
    pub fn qp_msg_rate(&self) -> f64 {
        match self.verb {
            Verb::Write => QP_MSG_RATE,
            Verb::Send => QP_MSG_RATE * 0.9,
            Verb::Read => QP_MSG_RATE * 0.6,
        }
    }

    /// Largest rate (Gb/s) one QP can carry at `size` from message rate alone.
    pub fn msg_cap_gbps(&self, size: u64) -> f64 {
        self.qp_msg_rate() * size as f64 * 8.0 / 1e9
    }
}

/// Side of a perftest run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    Server,
    Client,
}

/// One end's identity as printed in the address lines.
#[derive(Debug, Clone)]
pub struct Endpoint {
    pub qpns: Vec<u32>,
    pub ip: [u8; 4],
    pub rng_seed: u64,
}

/// Everything the banner needs besides the parameters.
#[derive(Debug, Clone)]
pub struct Context {
    pub device: String,
    pub gid_index: u32,
    pub mtu: u32,
    pub local: Endpoint,
    pub remote: Endpoint,
}

fn gid(ip: [u8; 4]) -> String {
    let mut b = [0u8; 16];
    b[10] = 255;
    b[11] = 255;
    b[12..].copy_from_slice(&ip);
    b.iter()
        .map(|x| format!("{x:02}"))
        .collect::<Vec<_>>()
        .join(":")
}

fn address_lines(p: &Params, which: &str, e: &Endpoint, out: &mut String) {
    let mut rng = Rng::new(e.rng_seed);
    for &qpn in &e.qpns {
        let psn = rng.next_u64() & 0xFF_FFFF;
        let rkey = (rng.next_u64() & 0x3F_FFFF) | 0x1000;
        let vaddr = 0x7f00_0000_0000u64 | ((rng.next_u64() & 0xFF_FFFF) << 12);
        let qpn_s = format!("{qpn:#06x}");
        if p.verb == Verb::Send || p.rdma_cm {
            out.push_str(&format!(
                " {which} address: LID 0000 QPN {qpn_s} PSN {psn:#08x}\n"
            ));
        } else if p.verb == Verb::Read {
            out.push_str(&format!(
                " {which} address: LID 0000 QPN {qpn_s} PSN {psn:#08x} OUT 0x10 RKey {rkey:#08x} VAddr {vaddr:#016x}\n"
            ));
        } else {
            out.push_str(&format!(
                " {which} address: LID 0000 QPN {qpn_s} PSN {psn:#08x} RKey {rkey:#08x} VAddr {vaddr:#016x}\n"
            ));
        }
        out.push_str(&format!(" GID: {}\n", gid(e.ip)));
    }
}

fn cuda_preamble(dev: u32, bytes: u64) -> String {
    format!(
        "initializing CUDA\nListing all CUDA devices in system:\nCUDA device {dev}: PCIe address is {:02X}:00\n\nPicking device No. {dev}\n[pid = 4242, dev = {dev}] device name = [NVIDIA H100 80GB HBM3]\ncreating CUDA Ctx\nmaking it the current CUDA Ctx\ncuMemAlloc() of a {bytes} bytes GPU buffer\nallocated GPU buffer address at 00007f2c{:08x} pointer=0x7f2c{:08x}\n",
        0x18 + dev * 0x10,
        dev << 24,
        dev << 24
    )
}

/// Banner and address block, as `ctx_print_test_info` and
/// `ctx_print_pingpong_data` print them in perftest 24.07.
pub fn header(p: &Params, side: Side, c: &Context) -> String {
    let mut o = String::new();
    if p.test == Test::Bw
        && (p.duration.is_some() || (p.verb == Verb::Send && side == Side::Server && !p.bidir))
    {
        o.push_str(" WARNING: BW peak won't be measured in this run.\n");
    }
    if let Some(dev) = p.cuda {
        let buf = p.sizes().last().copied().unwrap_or(65536) * 2;
        o.push_str(&cuda_preamble(dev, buf.max(1 << 16)));
    }
    if side == Side::Server {
        o.push_str("\n************************************\n* Waiting for client to connect... *\n************************************\n");
    }
    o.push_str(RESULT_LINE);
    o.push_str(&format!("                    {}\n", p.title()));
    o.push_str(&format!(
        " Dual-port       : OFF\t\tDevice         : {}\n",
        c.device
    ));
    o.push_str(&format!(
        " Number of qps   : {}\t\tTransport type : IB\n",
        p.qps
    ));
    o.push_str(" Connection type : RC\t\tUsing SRQ      : OFF\n");
    o.push_str(" PCIe relax order: ON\t\tLock-free      : OFF\n");
    o.push_str(" ibv_wr* API     : ON\t\tUsing DDP      : OFF\n");
    match p.test {
        Test::Bw => {
            if side == Side::Client || p.bidir {
                o.push_str(" TX depth        : 128\n");
            }
            o.push_str(" CQ Moderation   : 100\n");
            o.push_str(" CQE Poll Batch  : 16\n");
        }
        Test::Lat => {
            o.push_str(" TX depth        : 1\n");
            if p.verb == Verb::Send {
                o.push_str(" CQ Moderation   : 1\n");
            }
        }
    }
    o.push_str(&format!(" Mtu             : {}[B]\n", c.mtu));
    o.push_str(" Link type       : Ethernet\n");
    o.push_str(&format!(" GID index       : {}\n", c.gid_index));
    if p.verb == Verb::Read {
        o.push_str(" Outstand reads  : 16\n");
    } else {
        let inline = match (p.test, p.verb, p.cuda) {
            (Test::Lat, _, Some(_)) => 0,
            (Test::Lat, Verb::Write, _) => 220,
            (Test::Lat, Verb::Send, _) => 236,
            _ => 0,
        };
        o.push_str(&format!(" Max inline data : {inline}[B]\n"));
    }
    if p.rdma_cm {
        o.push_str(" rdma_cm QPs\t : ON\n Data ex. method : rdma_cm\n");
    } else {
        o.push_str(" rdma_cm QPs\t : OFF\n Data ex. method : Ethernet\n");
    }
    o.push_str(RESULT_LINE);
    address_lines(p, "local", &c.local, &mut o);
    address_lines(p, "remote", &c.remote, &mut o);
    o.push_str(RESULT_LINE);
    o
}

/// One bandwidth row: bandwidths in Gb/s, message rate in messages/s.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BwRow {
    pub size: u64,
    pub iters: u64,
    /// `None` in duration mode (printed 0.00).
    pub peak_gbps: Option<f64>,
    pub avg_gbps: f64,
    pub msg_rate: f64,
}

fn unit_value(p: &Params, gbps: f64) -> f64 {
    if p.gbits {
        gbps
    } else {
        // 24.07 prints MiB/sec: 2^20 bytes.
        gbps * 1e9 / 8.0 / 1_048_576.0
    }
}

pub fn bw_table_header(p: &Params) -> String {
    if p.gbits {
        " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]\n".into()
    } else {
        " #bytes     #iterations    BW peak[MiB/sec]    BW average[MiB/sec]   MsgRate[Mpps]\n"
            .into()
    }
}

/// A row as `REPORT_FMT` prints it; below 0.1 the Gb/s columns switch to six
/// decimals (`REPORT_FMT_EXT`), as perftest does.
pub fn bw_row(p: &Params, r: &BwRow) -> String {
    let peak = unit_value(p, r.peak_gbps.unwrap_or(0.0));
    let avg = unit_value(p, r.avg_gbps);
    let mpps = r.msg_rate / 1e6;
    if p.gbits && avg < 0.1 && r.peak_gbps.is_some() {
        format!(
            " {:<7}    {:<10}     {:<7.6}            {:<7.6}            {:<7.6}\n",
            r.size, r.iters, peak, avg, mpps
        )
    } else {
        format!(
            " {:<7}    {:<10}       {:<7.2}            {:<7.2}\t\t   {:<7.6}\n",
            r.size, r.iters, peak, avg, mpps
        )
    }
}

/// One latency row, microseconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LatRow {
    pub size: u64,
    pub iters: u64,
    pub min: f64,
    pub max: f64,
    pub typical: f64,
    pub avg: f64,
    pub stdev: f64,
    pub p99: f64,
    pub p999: f64,
}

pub const LAT_HEADER: &str = " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec] \n";

pub const LAT_DUR_HEADER: &str = " #bytes        #iterations       t_avg[usec]    tps average\n";

pub fn lat_row(r: &LatRow) -> String {
    format!(
        " {:<7} {:<10}     {:<7.2}        {:<7.2}      {:<7.2}            {:<7.2}       {:<7.2}         {:<7.2}                 {:<7.2}\n",
        r.size, r.iters, r.min, r.max, r.typical, r.avg, r.stdev, r.p99, r.p999
    )
}

pub fn lat_dur_row(r: &LatRow) -> String {
    let tps = 1e6 / r.avg.max(1e-9);
    format!(
        " {:<7}       {:<10}        {:<7.2}        {:<7.2}\n",
        r.size, r.iters, r.avg, tps
    )
}

/// A latency row around the model's median `t` (µs), `ser` of it the
/// serialisation of the message: the fixed part wobbles a little row to
/// row, min sits a little under, average a little over, and the tail is
/// log-normal and skewed upward, 99.9 % far more than 99 % (host
/// interrupts and scheduling, not the wire: it scales with the fixed part
/// much more than with the serialisation), and the maximum an outlier, so
/// that t_min < t_typical < t_avg < p99 < p99.9 < t_max. Magnitudes and
/// their sources: docs/emulator.md, "Variation".
pub fn lat_stats(size: u64, iters: u64, t: f64, ser: f64, rng: &mut Rng) -> LatRow {
    let ser = ser.clamp(0.0, t);
    let fixed = (t - ser) * (1.0 + noise::half_normal_from(rng, noise::LAT_ROW_SIGMA));
    let typical = fixed + ser;
    let min = typical - fixed * rng.range(0.03, 0.10) - ser * rng.range(0.001, 0.005);
    let avg = typical + fixed * rng.range(0.01, 0.05) + ser * 0.002;
    let p99 = typical
        + 0.15 * fixed * noise::lognormal_from(rng, 0.35)
        + 0.02 * ser * noise::lognormal_from(rng, 0.35);
    let p999 = p99 + (0.6 + 0.1 * fixed + 0.015 * ser) * noise::lognormal_from(rng, 0.5);
    let max = p999 + 4.0 * noise::lognormal_from(rng, 0.8) + 0.05 * typical;
    let stdev = 0.03 + 0.02 * typical + 0.05 * (p999 - typical);
    LatRow {
        size,
        iters,
        min,
        max,
        typical,
        avg,
        stdev,
        p99,
        p999,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn parses_a_real_client_line() {
        let p = parse(&argv(
            "ib_write_bw -d mlx5_0 -i 1 -x 3 -p 18516 -F --report_gbits -s 1048576 -D 10 -q 8 gpu002.mgmt",
        ))
        .unwrap();
        assert_eq!(p.device.as_deref(), Some("mlx5_0"));
        assert_eq!((p.port, p.qps, p.duration), (18516, 8, Some(10)));
        assert_eq!(p.sizes(), vec![1 << 20]);
        assert!(p.gbits);
        assert_eq!(p.server.as_deref(), Some("gpu002.mgmt"));
        let p = parse(&argv("ib_write_lat -d mlx5_0 -a")).unwrap();
        assert_eq!(p.sizes().len(), 23);
        assert_eq!(p.iterations(), 1000);
        assert_eq!(
            parse(&argv("ib_write_bw -s 64K")).unwrap().size,
            Some(65536)
        );
    }

    #[test]
    fn refuses_what_perftest_refuses() {
        let r = parse(&argv("ib_write_bw -a -D 10 --report_gbits")).unwrap_err();
        assert_eq!(r.exit, 1);
        assert_eq!(
            r.stderr,
            "Duration mode currently doesn't support running on all sizes.\n"
        );
        assert!(r.stdout.ends_with(RESULT_LINE));
        let r = parse(&argv("ib_write_lat -q 4")).unwrap_err();
        assert!(r
            .stderr
            .starts_with(" Multiple QPs only available on bw tests\n"));
        let r = parse(&argv("ib_read_lat -b")).unwrap_err();
        assert!(r
            .stderr
            .starts_with(" Bidirectional is only available in BW test\n"));
        let r = parse(&argv("ib_send_bw --bogus")).unwrap_err();
        assert_eq!(r.exit, 1);
    }

    #[test]
    fn rows_have_perftests_layout() {
        let p = parse(&argv("ib_write_bw --report_gbits")).unwrap();
        let row = bw_row(
            &p,
            &BwRow {
                size: 8388608,
                iters: 5000,
                peak_gbps: Some(52.52),
                avg_gbps: 52.52,
                msg_rate: 783.0,
            },
        );
        // The real line from the CNS fixture, byte for byte.
        assert_eq!(
            row,
            " 8388608    5000             52.52              52.52  \t\t   0.000783\n"
        );
    }

    #[test]
    fn latency_rows_are_ordered_whatever_the_draws() {
        let mut rng = Rng::new(1);
        for (t, ser) in [(1.5, 0.01), (1.0, 0.0), (22.4, 21.4), (3.0, 3.0)] {
            for _ in 0..2000 {
                let r = lat_stats(2, 1000, t, ser, &mut rng);
                assert!(
                    r.min < r.typical && r.typical < r.avg && r.avg < r.p99,
                    "{r:?}"
                );
                assert!(r.p99 < r.p999 && r.p999 < r.max, "{r:?}");
                let fixed = t - ser;
                assert!(
                    r.typical >= t && r.typical <= t + fixed * 3.0 * noise::LAT_ROW_SIGMA + 1e-12
                );
            }
        }
    }
}
