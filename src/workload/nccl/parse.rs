//! Parser for nccl-tests output (`all_reduce_perf`, `all_gather_perf`, …) and the
//! NCCL debug log interleaved with it.
//!
//! It returns the result table (out-of-place and in-place), the summary lines,
//! the transport and HCAs NCCL says it used (`NCCL_DEBUG=INFO`), and the failures
//! it recognises. It does not judge bandwidth: `score` does, on the largest sizes.
//!
//! The table is read through its header: the columns before the first `time`
//! (`size count type [redop] [root]`) and one group of `time algbw busbw
//! #wrong|error` per placement. Rows are split on whitespace; a blank `redop`
//! cell (alltoall in some versions) is handled by mapping the measurement groups
//! from the end of the row. Launcher prefixes are removed first (`text`).
//!
//! NCCL log lines (from NCCL's source): `NET/IB : Using [0]mlx5_0:1/RoCE [1]mlx5_3:1/RoCE
//! [RO]; OOB eth0:10.0.0.1<0>` (`src/transport/net_ib.cc`, `ncclIbInit`; merged
//! devices print as `[0]{mlx5_0:1/RoCE, mlx5_1:1/RoCE}`), `NET/Socket : Using
//! [0]eth0:10.0.0.1<0>` (`net_socket.cc`), `Using network IB|Socket` (`init.cc`),
//! channel lines `... via NET/IB/0/GDRDMA` or `via NET/Socket/0`, and `NET/IB :
//! Got completion from peer %s with error %d, opcode %d, len %d, vendor err %d`.
//! nccl-tests prints `# Out of bounds values : %d %s` with `FAILED` when its data
//! check counted errors (`src/common.cu`), and `Test CUDA failure` / `Test NCCL
//! failure` when a call fails.

use std::collections::BTreeSet;

use serde::Serialize;

use crate::plausible::{self, number, Impossible, Number, Quantity};
use crate::workload::failure::{classify_common_line, Failure, FailureKind};
use crate::workload::text::{clean_lines, excerpt, parse_i64, parse_u64, CleanLine, ParseError};

const TOOL: &str = "nccl-tests";

/// Known nccl-tests collectives (binary name without `_perf`).
const COLLECTIVES: [&str; 11] = [
    "all_reduce",
    "all_gather",
    "reduce_scatter",
    "alltoall",
    "alltoallv",
    "broadcast",
    "reduce",
    "sendrecv",
    "scatter",
    "gather",
    "hypercube",
];

/// A float `error` cell above this is a clear validation failure whatever the
/// data type (nccl-tests' own tolerances are far smaller; values such as 5e-07
/// are rounding noise of floating-point reductions and stay informational).
const FLOAT_ERROR_CLEAR_FAILURE: f64 = 1e-2;

/// How to parse.
#[derive(Debug, Clone, Default)]
pub struct NcclParseOptions {
    /// The harness killed the run at its timeout.
    pub killed_by_timeout: bool,
}

/// The network NCCL used between nodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Transport {
    /// NET/IB: InfiniBand or RoCE verbs.
    Ib,
    /// NET/Socket: TCP. On a RoCE fabric this means RDMA is broken.
    Socket,
}

/// The parsed output of one nccl-tests run. JSON field names are a public interface.
#[derive(Debug, Clone, Serialize)]
pub struct NcclReport {
    /// `all_reduce`, … from `# Collective test starting:`, the binary name in the
    /// text, or inferred from the table; null when it cannot be told.
    pub collective: Option<String>,
    pub nranks: Option<u32>,
    pub rows: Vec<NcclRow>,
    /// `# Avg bus bandwidth`: averages the whole sweep; never gate on it.
    pub avg_busbw_gbs: Option<f64>,
    /// `# Out of bounds values : N`.
    pub out_of_bounds: Option<u64>,
    pub errors: Vec<Failure>,
    pub transport: Option<Transport>,
    /// HCAs from `NET/IB : Using [0]mlx5_0:1/RoCE …`, e.g. `mlx5_0:1/RoCE`.
    pub hcas: Vec<String>,
    /// `banner`, `command` or `inferred`.
    pub collective_source: Option<String>,
    /// When the table fits several collectives (all_gather and alltoall print alike).
    pub collective_candidates: Vec<String>,
    /// `Using network X` as NCCL printed it (`IB`, `Socket`, `AWS Libfabric`).
    pub network: Option<String>,
    /// Interfaces from `NET/Socket : Using [0]eth0:…`.
    pub socket_devices: Vec<String>,
    pub nccl_version: Option<String>,
    pub nccl_tests_version: Option<String>,
    pub n_gpus: Option<u32>,
    pub n_threads: Option<u32>,
    /// `validation: 0` (`-c 0`) turns the error column into `N/A`.
    pub validation: Option<bool>,
    pub hosts: Vec<String>,
    /// `#wrong` (newer nccl-tests) or `error` (older, float).
    pub error_column: Option<String>,
    /// `OK`/`FAILED` after the average when `NCCL_TESTS_MIN_BW` was set.
    pub avg_busbw_check: Option<String>,
    /// The summary lines were printed (the run was not cut off).
    pub complete: bool,
    pub warnings: Vec<String>,
    /// Values no fabric could have produced (see [`crate::plausible`]), in
    /// output order. Their rows are not in `rows`; the first of `errors` is
    /// `unrecognised` with [`plausible::summary`] of them. Not in the JSON:
    /// `errors` says it there.
    #[serde(skip)]
    pub impossible: Vec<Impossible>,
}

/// One message size.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NcclRow {
    pub bytes: u64,
    pub count: Option<u64>,
    #[serde(rename = "type")]
    pub dtype: Option<String>,
    pub redop: Option<String>,
    pub root: Option<i64>,
    pub out_of_place: Option<NcclResult>,
    pub in_place: Option<NcclResult>,
}

/// One placement's measurements.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NcclResult {
    pub time_us: Option<f64>,
    pub algbw_gbs: Option<f64>,
    pub busbw_gbs: Option<f64>,
    /// `#wrong` count; null for `N/A` or a float `error` column.
    pub wrong: Option<u64>,
    /// Float `error` column (older nccl-tests); null for `N/A` or `#wrong`.
    pub error: Option<f64>,
    /// nccl-tests marked the error cell with `*` (above its threshold).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub error_flagged: bool,
}

/// Column layout read from the header line.
#[derive(Debug, Clone)]
struct Layout {
    has_redop: bool,
    has_root: bool,
    /// Per placement, the measurement column names (`time`, `algbw`, `busbw`, `wrong`|`error`).
    groups: Vec<Vec<String>>,
}

impl Layout {
    fn width(&self) -> usize {
        self.groups.iter().map(Vec::len).sum()
    }

    /// Reads `#  size count type redop root time algbw busbw #wrong time …`.
    fn from_header(line: &str) -> Option<Layout> {
        let t = line.trim_start().strip_prefix('#')?;
        let names: Vec<String> = t
            .split_whitespace()
            .map(|w| w.trim_start_matches('#').to_ascii_lowercase())
            .filter(|w| !w.is_empty())
            .collect();
        if names.first().map(String::as_str) != Some("size") || !names.iter().any(|n| n == "busbw")
        {
            return None;
        }
        let first_time = names.iter().position(|n| n == "time")?;
        let left = &names[..first_time];
        if !left.iter().any(|n| n == "count") {
            return None;
        }
        let mut groups: Vec<Vec<String>> = Vec::new();
        for n in &names[first_time..] {
            if n == "time" || groups.is_empty() {
                groups.push(Vec::new());
            }
            if let Some(g) = groups.last_mut() {
                g.push(n.clone());
            }
        }
        Some(Layout {
            has_redop: left.iter().any(|n| n == "redop"),
            has_root: left.iter().any(|n| n == "root"),
            groups,
        })
    }

    fn error_column(&self) -> Option<String> {
        self.groups
            .first()?
            .iter()
            .find(|n| *n == "wrong" || *n == "error")
            .map(|n| {
                if n == "wrong" {
                    "#wrong".to_string()
                } else {
                    n.clone()
                }
            })
    }

    /// Reads a table row: `None` for a line that is not one, `Err` for a
    /// row with a value that cannot be a measurement (limits in
    /// [`crate::plausible`]). A cell written as a number counts as one
    /// (`nan`, `-5.00`): it makes the row impossible, not foreign.
    fn read_row(&self, line: &str) -> Option<Result<NcclRow, Impossible>> {
        let toks: Vec<&str> = line.split_whitespace().collect();
        let m = self.width();
        let optional = usize::from(self.has_redop) + usize::from(self.has_root);
        if toks.len() < 3 + m || toks.len() > 3 + m + optional.max(2) {
            return None;
        }
        let dtype = toks[2];
        if !dtype.starts_with(|c: char| c.is_ascii_alphabetic()) {
            return None;
        }
        let whole = |i: usize, what: &str| match parse_u64(toks[i]) {
            Some(v) => Some(Ok(v)),
            None if plausible::looks_numeric(toks[i]) => Some(Err(Impossible::new(
                format!("row {}", toks[0]),
                toks[i],
                what,
                plausible::counter(toks[i]).err().unwrap_or_default(),
            ))),
            None => None,
        };
        let bytes = match whole(0, "message size in bytes")? {
            Ok(b) => b,
            Err(e) => return Some(Err(e)),
        };
        let count = match whole(1, "element count")? {
            Ok(c) => c,
            Err(e) => return Some(Err(e)),
        };
        let mut redop = None;
        let mut root = None;
        for tok in &toks[3..toks.len() - m] {
            match parse_i64(tok) {
                Some(r) => root = Some(r),
                None if tok.starts_with(|c: char| c.is_ascii_alphabetic()) => {
                    redop = Some(tok.to_string())
                }
                None => return None,
            }
        }
        let mut results = Vec::new();
        let mut at = toks.len() - m;
        let mut impossible = None;
        for (gi, g) in self.groups.iter().enumerate() {
            let place = match gi {
                0 => "out-of-place".to_string(),
                1 => "in-place".to_string(),
                n => format!("group {}", n + 1),
            };
            let mut reject = |tok: &str, unit: &str, what: &str, why: String| {
                impossible.get_or_insert_with(|| {
                    Impossible::new(
                        format!("row {bytes} bytes, {place}"),
                        format!("{tok}{unit}"),
                        what,
                        why,
                    )
                });
            };
            let mut r = NcclResult {
                time_us: None,
                algbw_gbs: None,
                busbw_gbs: None,
                wrong: None,
                error: None,
                error_flagged: false,
            };
            for name in g {
                let tok = toks[at];
                at += 1;
                let na = tok.eq_ignore_ascii_case("n/a");
                // `Some(None)`: N/A or impossible (recorded); `None`: not a
                // number, so not a row.
                let mut num = |q: Quantity, unit: &str, what: &str| {
                    if na {
                        return Some(None);
                    }
                    match q.read(tok) {
                        Ok(Some(v)) => Some(Some(v)),
                        Ok(None) => None,
                        Err(why) => {
                            reject(tok, unit, what, why);
                            Some(None)
                        }
                    }
                };
                match name.as_str() {
                    "time" => r.time_us = num(Quantity::TimeUs, " us", "time")?,
                    "algbw" => {
                        r.algbw_gbs = num(
                            Quantity::CollectiveBandwidth,
                            " GB/s",
                            "algorithm bandwidth",
                        )?
                    }
                    "busbw" => {
                        r.busbw_gbs = num(Quantity::CollectiveBandwidth, " GB/s", "bus bandwidth")?
                    }
                    "wrong" | "error" => {
                        if na {
                            continue;
                        }
                        let flagged = tok.ends_with('*');
                        let t = tok.trim_end_matches('*');
                        if name == "wrong" {
                            if let Some(w) = parse_u64(t) {
                                r.wrong = Some(w);
                                r.error_flagged = flagged;
                                continue;
                            }
                        }
                        match number(t) {
                            Number::Finite(e) if e < 0.0 => {
                                reject(tok, "", "data check error", "negative".to_string())
                            }
                            Number::Finite(e) => r.error = Some(e),
                            // A `nan` error is a data check that met garbage:
                            // wrong results, not an impossible output.
                            Number::NonFinite => r.error_flagged = true,
                            Number::NotANumber => return None,
                        }
                        r.error_flagged |= flagged;
                    }
                    _ => {
                        // An unknown column: it must still be a finite value.
                        num(Quantity::Amount, "", name)?;
                    }
                }
            }
            results.push(r);
        }
        if let Some(e) = impossible {
            return Some(Err(e));
        }
        let mut it = results.into_iter();
        Some(Ok(NcclRow {
            bytes,
            count: Some(count),
            dtype: Some(dtype.to_string()),
            redop,
            root,
            out_of_place: it.next(),
            in_place: it.next(),
        }))
    }
}

/// Evidence gathered from NCCL's INFO lines.
#[derive(Default)]
struct NetEvidence {
    ib_init: bool,
    socket_init: bool,
    via_ib: bool,
    via_socket: bool,
    via_other: bool,
    socket_line: Option<String>,
    ib_no_device: bool,
    ib_disabled: bool,
    comm_nranks: Option<u32>,
}

struct State {
    r: NcclReport,
    layout: Option<Layout>,
    recognised: bool,
    max_rank: Option<u32>,
    rank_lines: u32,
    hosts: BTreeSet<String>,
    net: NetEvidence,
    command_collective: Option<String>,
    seen_errors: BTreeSet<(FailureKind, String)>,
    test_failure_seen: bool,
}

/// The first line that only nccl-tests or the NCCL library prints, if
/// `text` has one: the results table header, a `#` banner line of
/// nccl-tests (version, "Collective test starting", `nThread`, the
/// closing "Out of bounds values" and "Avg bus bandwidth"), an NCCL log
/// line as NCCL writes it (`host:pid:tid [dev] … NCCL WARN …`, not a
/// quotation of one), a `Test NCCL|CUDA failure file:line` line, or the
/// shell saying a `*_perf` binary is missing.
///
/// `rocegate parse` refuses text without one; the runner does not ask,
/// since what it parses is what the nccl-tests it started printed.
pub fn signature(text: &str) -> Option<String> {
    const BANNER: [&str; 5] = [
        "nccl-tests version ",
        "Collective test starting:",
        "nThread ",
        "Out of bounds values",
        "Avg bus bandwidth",
    ];
    for l in clean_lines(text) {
        let t = l.text.trim();
        let banner = t.strip_prefix('#').is_some_and(|body| {
            let body = body.trim_start();
            BANNER.iter().any(|b| body.starts_with(b))
        });
        let missing_binary =
            classify_common_line(t) == Some(FailureKind::MissingBinary) && t.contains("_perf");
        if banner
            || missing_binary
            || is_nccl_log_line(t)
            || is_test_failure_line(t)
            || Layout::from_header(t).is_some()
        {
            return Some(t.to_string());
        }
    }
    None
}

/// `gpu1:1234:5678 [0] NCCL INFO …`: the marker after a `[device]` token.
fn is_nccl_log_line(t: &str) -> bool {
    ["NCCL INFO", "NCCL WARN", "NCCL TRACE"].iter().any(|m| {
        t.find(m).is_some_and(|at| {
            t[..at].split_whitespace().any(|w| {
                w.len() > 2
                    && w.starts_with('[')
                    && w.ends_with(']')
                    && w[1..w.len() - 1].bytes().all(|b| b.is_ascii_digit())
            })
        })
    })
}

/// `gpu1: Test NCCL failure common.cu:1005 'unhandled system error'`.
fn is_test_failure_line(t: &str) -> bool {
    ["Test NCCL failure ", "Test CUDA failure "]
        .iter()
        .any(|m| {
            t.find(m).is_some_and(|at| {
                let place = t[at + m.len()..].split_whitespace().next().unwrap_or("");
                place.rsplit_once(':').is_some_and(|(file, line)| {
                    !file.is_empty() && !line.is_empty() && line.bytes().all(|b| b.is_ascii_digit())
                })
            })
        })
}

/// Parses nccl-tests output, with or without NCCL debug lines and launcher prefixes.
///
/// A recognisable failure without a table is `Ok` with `errors` set and no rows.
/// Text with no table, no NCCL line and no known failure is an `Err`.
pub fn parse(text: &str, opts: &NcclParseOptions) -> Result<NcclReport, ParseError> {
    let lines = clean_lines(text);
    let mut st = State {
        r: NcclReport {
            collective: None,
            nranks: None,
            rows: Vec::new(),
            avg_busbw_gbs: None,
            out_of_bounds: None,
            errors: Vec::new(),
            transport: None,
            hcas: Vec::new(),
            collective_source: None,
            collective_candidates: Vec::new(),
            network: None,
            socket_devices: Vec::new(),
            nccl_version: None,
            nccl_tests_version: None,
            n_gpus: None,
            n_threads: None,
            validation: None,
            hosts: Vec::new(),
            error_column: None,
            avg_busbw_check: None,
            complete: false,
            warnings: Vec::new(),
            impossible: Vec::new(),
        },
        layout: None,
        recognised: false,
        max_rank: None,
        rank_lines: 0,
        hosts: BTreeSet::new(),
        net: NetEvidence::default(),
        command_collective: None,
        seen_errors: BTreeSet::new(),
        test_failure_seen: false,
    };
    let mut i = 0;
    while i < lines.len() {
        let consumed = read_line(&mut st, &lines, i);
        i += consumed.max(1);
    }
    finish(st, opts)
}

fn is_log_line(t: &str) -> bool {
    t.contains("NCCL INFO") || t.contains("NCCL WARN") || t.contains("NCCL TRACE")
}

/// Handles line `i`; returns how many lines it consumed.
fn read_line(st: &mut State, lines: &[CleanLine], i: usize) -> usize {
    let t = lines[i].text.trim();
    if t.is_empty() {
        return 1;
    }
    if let Some(v) = after(t, "NCCL version ") {
        st.recognised = true;
        if st.r.nccl_version.is_none() {
            st.r.nccl_version = v.split_whitespace().next().map(str::to_string);
        }
    }
    if is_log_line(t) {
        st.recognised = true;
        return read_log_line(st, lines, i);
    }
    if t.starts_with('#') {
        read_comment(st, t);
        return 1;
    }
    if let Some(layout) = &st.layout {
        if let Some(row) = layout.read_row(t) {
            match row {
                Ok(row) => st.r.rows.push(row),
                Err(e) => st.r.impossible.push(e),
            }
            return 1;
        }
    }
    if let Some(c) = collective_in_command(t) {
        st.command_collective.get_or_insert(c);
    }
    read_failure_line(st, t);
    1
}

fn after<'a>(t: &'a str, marker: &str) -> Option<&'a str> {
    t.find(marker).map(|p| &t[p + marker.len()..])
}

fn read_comment(st: &mut State, t: &str) {
    let body = t.trim_start_matches('#').trim();
    if let Some(layout) = Layout::from_header(t) {
        st.recognised = true;
        if st.r.error_column.is_none() {
            st.r.error_column = layout.error_column();
        }
        st.layout = Some(layout);
        return;
    }
    if let Some(v) = after(body, "nccl-tests version ") {
        st.recognised = true;
        st.r.nccl_tests_version = v.split_whitespace().next().map(str::to_string);
    } else if let Some(v) = after(body, "Collective test starting:") {
        st.recognised = true;
        let name = v.trim().trim_end_matches("_perf");
        if !name.is_empty() && st.r.collective.is_none() {
            st.r.collective = Some(name.to_string());
            st.r.collective_source = Some("banner".to_string());
        }
    } else if body.starts_with("nThread ") {
        st.recognised = true;
        let toks: Vec<&str> = body.split_whitespace().collect();
        for w in toks.windows(2) {
            match w[0] {
                "nThread" => st.r.n_threads = w[1].parse().ok(),
                "nGpus" => st.r.n_gpus = w[1].parse().ok(),
                "validation:" => st.r.validation = w[1].parse::<u32>().ok().map(|v| v != 0),
                _ => {}
            }
        }
    } else if body.starts_with("Rank ") {
        st.recognised = true;
        let toks: Vec<&str> = body.split_whitespace().collect();
        if let Some(rank) = toks.get(1).and_then(|r| r.parse::<u32>().ok()) {
            st.rank_lines += 1;
            st.max_rank = Some(st.max_rank.map_or(rank, |m| m.max(rank)));
        }
        if let Some(p) = toks.iter().position(|w| *w == "on") {
            if let Some(h) = toks.get(p + 1) {
                st.hosts.insert(h.to_string());
            }
        }
    } else if let Some(v) = after(body, "Out of bounds values :") {
        st.recognised = true;
        st.r.complete = true;
        let mut it = v.split_whitespace();
        let tok = it.next();
        let n = tok.and_then(parse_u64);
        if let Some(t) = tok.filter(|t| n.is_none() && plausible::looks_numeric(t)) {
            let why = plausible::counter(t).err().unwrap_or_default();
            let e = Impossible::new("# Out of bounds values", t, "count", why);
            st.r.impossible.push(e);
        }
        st.r.out_of_bounds = n;
        let failed = it.next().is_some_and(|w| w.eq_ignore_ascii_case("FAILED"));
        if failed || n.is_some_and(|n| n > 0) {
            add_error(
                st,
                FailureKind::OutOfBounds,
                format!("nccl-tests: {}", excerpt(body, 200)),
            );
        }
    } else if let Some(v) = after(body, "Avg bus bandwidth") {
        st.recognised = true;
        st.r.complete = true;
        let v = v.trim_start().trim_start_matches(':');
        let mut it = v.split_whitespace();
        let tok = it.next().unwrap_or("");
        st.r.avg_busbw_gbs = match Quantity::CollectiveBandwidth.read(tok) {
            Ok(v) => v,
            Err(why) => {
                let e = Impossible::new(
                    "# Avg bus bandwidth",
                    format!("{tok} GB/s"),
                    "bus bandwidth",
                    why,
                );
                st.r.impossible.push(e);
                None
            }
        };
        st.r.avg_busbw_check = it.next().map(str::to_string);
    }
}

/// `.../build/all_reduce_perf -b 8 ...` → `all_reduce`.
fn collective_in_command(t: &str) -> Option<String> {
    t.split_whitespace().find_map(|w| {
        let base = w.rsplit('/').next().unwrap_or(w);
        let name = base.strip_suffix("_perf")?;
        COLLECTIVES.contains(&name).then(|| name.to_string())
    })
}

fn add_error(st: &mut State, kind: FailureKind, message: String) {
    const MAX_ERRORS: usize = 50;
    // Sixteen ranks print the same WARN: keep one per distinct text.
    let key_text = match message.find("NCCL WARN") {
        Some(p) => message[p..].to_string(),
        None => message.clone(),
    };
    if !st.seen_errors.insert((kind, key_text)) {
        return;
    }
    if st.r.errors.len() < MAX_ERRORS {
        st.r.errors.push(Failure::new(kind, message));
    }
}

/// Lines that are neither NCCL log lines nor table lines: nccl-tests' own
/// failure messages and the common ones (missing binary, launcher).
fn read_failure_line(st: &mut State, t: &str) {
    let lower = t.to_ascii_lowercase();
    if lower.contains("test cuda failure") {
        st.test_failure_seen = true;
        add_error(st, FailureKind::CudaFailure, excerpt(t, 300));
    } else if lower.contains("test nccl failure") {
        st.test_failure_seen = true;
        add_error(st, FailureKind::NcclFailure, excerpt(t, 300));
    } else if lower.contains(": test failure ") || lower.starts_with("test failure") {
        // The traceback lines after a Test CUDA/NCCL failure repeat it.
        if !st.test_failure_seen {
            st.test_failure_seen = true;
            add_error(st, FailureKind::NcclFailure, excerpt(t, 300));
        }
    } else if let Some(kind) = classify_common_line(t) {
        add_error(st, kind, excerpt(t, 300));
    }
}

fn read_log_line(st: &mut State, lines: &[CleanLine], i: usize) -> usize {
    let t = lines[i].text.trim();
    if let Some(msg) = after(t, "NCCL WARN") {
        let mut message = t.to_string();
        let mut consumed = 1;
        // NCCL writes one line per WARN, but copies of logs get hard-wrapped;
        // a following line that is not a log line, table line or comment continues it.
        if let Some(next) = lines.get(i + 1) {
            let n = next.text.trim();
            let is_row = st.layout.as_ref().is_some_and(|l| l.read_row(n).is_some());
            if !n.is_empty()
                && !is_log_line(n)
                && !n.starts_with('#')
                && !is_row
                && !looks_like_log_prefix(n)
            {
                message.push(' ');
                message.push_str(n);
                consumed = 2;
            }
        }
        let full_msg = match consumed {
            2 => format!("{} {}", msg.trim(), lines[i + 1].text.trim()),
            _ => msg.trim().to_string(),
        };
        let kind = classify_warn(&full_msg);
        if full_msg.contains("NET/IB") {
            st.net.ib_init = true;
        }
        add_error(st, kind, excerpt(&message, 400));
        return consumed;
    }
    let Some(msg) = after(t, "NCCL INFO") else {
        return 1;
    };
    let msg = msg.trim();
    if let Some(rest) = msg.strip_prefix("NET/IB : Using") {
        st.net.ib_init = true;
        for h in ib_devices(rest) {
            if !st.r.hcas.contains(&h) {
                st.r.hcas.push(h);
            }
        }
    } else if msg.starts_with("NET/IB : No device found") {
        st.net.ib_no_device = true;
    } else if let Some(rest) = msg.strip_prefix("NET/Socket : Using") {
        st.net.socket_init = true;
        st.net.socket_line.get_or_insert_with(|| excerpt(t, 300));
        for tok in rest.split(';').next().unwrap_or("").split_whitespace() {
            let dev = strip_index(tok).to_string();
            if !dev.is_empty() && !st.r.socket_devices.contains(&dev) {
                st.r.socket_devices.push(dev);
            }
        }
    } else if let Some(rest) = msg.strip_prefix("Using network ") {
        let net = rest.trim().to_string();
        if net.eq_ignore_ascii_case("socket") {
            st.net.socket_line.get_or_insert_with(|| excerpt(t, 300));
        }
        st.r.network.get_or_insert(net);
    } else if msg.contains("NCCL_IB_DISABLE set by environment to 1") {
        st.net.ib_disabled = true;
    }
    if let Some(v) = after(msg, " via NET/") {
        let lower = v.to_ascii_lowercase();
        if lower.starts_with("ib") {
            st.net.via_ib = true;
        } else if lower.starts_with("socket") {
            st.net.via_socket = true;
            st.net.socket_line.get_or_insert_with(|| excerpt(t, 300));
        } else {
            st.net.via_other = true;
        }
    }
    if let Some(v) = after(msg, " nranks ") {
        if let Some(n) = v.split_whitespace().next().and_then(|n| n.parse().ok()) {
            st.net.comm_nranks.get_or_insert(n);
        }
    }
    1
}

/// `host:123:456 [0] ...`: the prefix NCCL puts on every log line.
fn looks_like_log_prefix(t: &str) -> bool {
    let Some(first) = t.split_whitespace().next() else {
        return false;
    };
    let parts: Vec<&str> = first.split(':').collect();
    parts.len() >= 3
        && parts[parts.len() - 2..]
            .iter()
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
}

/// `[0]mlx5_0:1/RoCE` → `mlx5_0:1/RoCE`.
fn strip_index(tok: &str) -> &str {
    let t = tok.trim_matches(|c| c == '{' || c == '}' || c == ',');
    match t.strip_prefix('[') {
        Some(rest) => match rest.find(']') {
            Some(p) => rest[p + 1..].trim_matches(|c| c == '{' || c == '}' || c == ','),
            None => t,
        },
        None => t,
    }
}

/// The devices of `NET/IB : Using [0]mlx5_0:1/RoCE [1]mlx5_3:1/RoCE [RO]; OOB …`.
fn ib_devices(rest: &str) -> Vec<String> {
    let list = rest.split(';').next().unwrap_or("");
    list.split(|c: char| c.is_whitespace() || c == ',')
        .map(strip_index)
        .filter(|d| !d.is_empty() && d.contains(':') && d.contains('/'))
        .map(str::to_string)
        .collect()
}

fn classify_warn(msg: &str) -> FailureKind {
    let l = msg.to_ascii_lowercase();
    if l.contains("got completion from peer") || (l.contains("completion") && l.contains("error")) {
        FailureKind::CompletionError
    } else if l.contains("connection refused") || (l.contains("connect to") && l.contains("failed"))
    {
        FailureKind::ConnectionRefused
    } else if l.contains("cuda failure") || l.contains("cuda error") || l.contains("cudaerror") {
        FailureKind::CudaFailure
    } else {
        FailureKind::NcclFailure
    }
}

fn type_size(t: &str) -> Option<u64> {
    Some(match t {
        "int8" | "uint8" | "char" | "f8e4m3" | "f8e5m2" | "fp8_e4m3" | "fp8_e5m2" => 1,
        "half" | "float16" | "bfloat16" | "bf16" => 2,
        "float" | "float32" | "int32" | "uint32" | "int" => 4,
        "double" | "float64" | "int64" | "uint64" => 8,
        _ => return None,
    })
}

/// Infers the collective from a row's count/size ratio and the redop/root cells.
fn infer_collective(rows: &[NcclRow], nranks: Option<u32>) -> Vec<&'static str> {
    let Some(row) = rows
        .iter()
        .find(|r| r.bytes > 0 && r.count.unwrap_or(0) > 0)
    else {
        return Vec::new();
    };
    let Some(ts) = row.dtype.as_deref().and_then(type_size) else {
        return Vec::new();
    };
    let elems = row.bytes / ts;
    let count = row.count.unwrap_or(0);
    let n = u64::from(nranks.unwrap_or(0));
    let whole = count == elems;
    let split = n > 1 && count * n == elems;
    let reducing = row
        .redop
        .as_deref()
        .is_some_and(|r| !r.eq_ignore_ascii_case("none"));
    let rooted = row.root.is_some_and(|r| r >= 0);
    match (whole, split, reducing, rooted) {
        (true, _, true, true) => vec!["reduce"],
        (true, _, true, false) => vec!["all_reduce"],
        (true, _, false, true) => vec!["broadcast"],
        (true, _, false, false) => vec!["sendrecv"],
        (false, true, true, _) => vec!["reduce_scatter"],
        (false, true, false, true) => vec!["scatter", "gather"],
        (false, true, false, false) => vec!["all_gather", "alltoall"],
        _ => Vec::new(),
    }
}

fn finish(mut st: State, opts: &NcclParseOptions) -> Result<NcclReport, ParseError> {
    let r = &mut st.r;
    r.hosts = st.hosts.iter().cloned().collect();
    r.nranks = match (st.max_rank, st.rank_lines) {
        (Some(m), n) => Some((m + 1).max(n)),
        (None, _) => st.net.comm_nranks,
    };
    if r.collective.is_none() {
        if let Some(c) = st.command_collective.take() {
            r.collective = Some(c);
            r.collective_source = Some("command".to_string());
        } else {
            let cands = infer_collective(&r.rows, r.nranks);
            if cands.len() == 1 {
                r.collective = Some(cands[0].to_string());
                r.collective_source = Some("inferred".to_string());
            } else {
                r.collective_candidates = cands.iter().map(|c| c.to_string()).collect();
            }
        }
    }
    // Transport: any sign of NET/Socket carrying data wins, because a run over
    // sockets must fail even when some ranks used IB.
    let net_says = |name: &str| {
        r.network
            .as_deref()
            .is_some_and(|n| n.eq_ignore_ascii_case(name))
    };
    let ib_seen = st.net.via_ib || net_says("IB") || st.net.ib_init;
    r.transport = if st.net.via_socket || net_says("Socket") || (st.net.socket_init && !ib_seen) {
        Some(Transport::Socket)
    } else if ib_seen {
        Some(Transport::Ib)
    } else {
        None
    };
    if r.transport == Some(Transport::Socket) {
        let mut why = String::from("NCCL used NET/Socket (TCP) instead of NET/IB");
        if st.net.ib_no_device {
            why.push_str("; NET/IB found no device");
        }
        if st.net.ib_disabled {
            why.push_str("; NCCL_IB_DISABLE=1");
        }
        if let Some(l) = &st.net.socket_line {
            why.push_str(": ");
            why.push_str(l);
        }
        let f = Failure::new(FailureKind::SocketFallback, why);
        r.errors.insert(0, f);
    }
    if st.net.via_other && r.transport.is_none() {
        r.warnings.push(format!(
            "NCCL used a network plugin ({}), neither NET/IB nor NET/Socket",
            r.network.as_deref().unwrap_or("unknown")
        ));
    }
    wrong_results(r);
    if !r.rows.is_empty() && !r.complete && !opts.killed_by_timeout {
        r.warnings.push(
            "no summary (# Out of bounds values / # Avg bus bandwidth): the output was cut off"
                .to_string(),
        );
    }
    if opts.killed_by_timeout {
        let n = r.rows.len();
        let msg = if n == 0 {
            "killed by the harness at its timeout before any result row".to_string()
        } else {
            format!("killed by the harness at its timeout after {n} result rows (hang after data moved)")
        };
        r.errors.push(Failure::timeout(n > 0, msg));
    }
    // A value no fabric could produce makes the report unrecognised; that
    // failure comes first.
    if let Some(why) = plausible::summary(&r.impossible) {
        r.errors
            .insert(0, Failure::new(FailureKind::Unrecognised, why));
    }
    if !r.rows.is_empty() || !r.errors.is_empty() {
        return Ok(st.r);
    }
    if st.recognised {
        r.errors.push(Failure::new(
            FailureKind::Unrecognised,
            "nccl-tests or NCCL printed no result rows and no known error message",
        ));
        return Ok(st.r);
    }
    Err(ParseError::not_recognised(
        TOOL,
        "no table header (size count type … busbw), no NCCL log line and no known error message",
    ))
}

/// `#wrong` > 0, a flagged error cell, or a float error far above rounding noise.
fn wrong_results(r: &mut NcclReport) {
    let mut bad: Vec<String> = Vec::new();
    for row in &r.rows {
        for (place, res) in [
            ("out-of-place", &row.out_of_place),
            ("in-place", &row.in_place),
        ] {
            let Some(res) = res else { continue };
            let wrong = res.wrong.is_some_and(|w| w > 0);
            let float_bad = res.error.is_some_and(|e| e > FLOAT_ERROR_CLEAR_FAILURE);
            if wrong || float_bad || res.error_flagged {
                let what = match (res.wrong, res.error) {
                    (Some(w), _) => format!("{w} wrong"),
                    (None, Some(e)) => format!("error {e:e}"),
                    _ => "flagged".to_string(),
                };
                bad.push(format!("{} B {place}: {what}", row.bytes));
            }
        }
    }
    if !bad.is_empty() {
        let n = bad.len();
        let shown: Vec<String> = bad.into_iter().take(8).collect();
        let more = if n > 8 {
            format!(" (and {} more)", n - 8)
        } else {
            String::new()
        };
        r.errors.push(Failure::new(
            FailureKind::WrongResults,
            format!("nccl-tests data check failed: {}{more}", shown.join("; ")),
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ib_device_list_with_merged_devices_and_ro() {
        assert_eq!(
            ib_devices(" [0]mlx5_0:1/RoCE [1]mlx5_3:1/RoCE [RO]; OOB eth0:10.0.0.1<0>"),
            ["mlx5_0:1/RoCE", "mlx5_3:1/RoCE"]
        );
        assert_eq!(
            ib_devices(" [0]{mlx5_0:1/IB, mlx5_1:1/IB} ; OOB ib0:1.2.3.4<0>"),
            ["mlx5_0:1/IB", "mlx5_1:1/IB"]
        );
    }

    #[test]
    fn socket_transport_is_a_fabric_failure() {
        let text = "node1:1:1 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.1<0>\n\
                    node1:1:1 [0] NCCL INFO Using network Socket\n\
                    node1:1:9 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[0] [send] via NET/Socket/0\n";
        let r = parse(text, &NcclParseOptions::default()).unwrap();
        assert_eq!(r.transport, Some(Transport::Socket));
        assert_eq!(r.socket_devices, ["eth0:10.0.0.1<0>"]);
        assert_eq!(r.errors[0].kind, FailureKind::SocketFallback);
    }

    #[test]
    fn ib_transport_and_hcas() {
        let text = "n:1:1 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/RoCE [1]mlx5_3:1/RoCE ; OOB eth0:10.0.0.1<0>\n\
                    n:1:1 [0] NCCL INFO Using network IB\n\
                    n:1:9 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[0] [send] via NET/IB/0/GDRDMA\n";
        let r = parse(text, &NcclParseOptions::default()).unwrap();
        assert_eq!(r.transport, Some(Transport::Ib));
        assert_eq!(r.hcas, ["mlx5_0:1/RoCE", "mlx5_3:1/RoCE"]);
        assert_eq!(r.errors.len(), 1, "{:?}", r.errors);
        assert_eq!(r.errors[0].kind, FailureKind::Unrecognised);
    }

    #[test]
    fn wrong_counts_fail() {
        let text =
            "#  size count type redop root time algbw busbw #wrong time algbw busbw #wrong\n\
                    1024 256 float sum -1 10.0 0.1 0.2 3 10.0 0.1 0.2 0\n";
        let r = parse(text, &NcclParseOptions::default()).unwrap();
        assert_eq!(r.rows[0].out_of_place.as_ref().unwrap().wrong, Some(3));
        assert!(r.errors.iter().any(|e| e.kind == FailureKind::WrongResults));
    }

    #[test]
    fn garbage_is_an_error() {
        assert!(parse("hello\n", &NcclParseOptions::default()).is_err());
    }
}
