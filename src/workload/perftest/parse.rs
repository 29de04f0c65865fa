//! Parser for perftest output (`ib_write_bw`, `ib_read_lat`, …), text or `--out_json`.
//!
//! It reads what one perftest process printed (or several merged into one
//! stream) and returns the result table with bandwidth normalised to decimal
//! Gb/s and latency in µs, the run's settings, and a recognised failure if the
//! tool failed. It does not judge results: thresholds live in `score`.
//!
//! Output formats differ across perftest versions and vendors, so nothing here
//! relies on column positions: the table header is read by column names, rows
//! are split on whitespace and mapped through the header, and foreign lines are
//! skipped (and recorded in `warnings` when they sit inside the table).
//!
//! Units, from perftest's source (linux-rdma/perftest):
//! - `src/perftest_resources.c`, `print_report_bw`: `format_factor =
//!   (user_param->report_fmt == MBS) ? 0x100000 : 125000000;` and `bw_avg =
//!   bytes * cycles_to_units / (cycles * format_factor)`. So `MB/sec` is 2^20
//!   bytes/s, and `--report_gbits` gives 10^9 bits/s (125,000,000 bytes).
//! - `src/perftest_parameters.c`, `usage()`: "Note: MB=2^20 byte, while Gb=10^9 bits".
//! - Pull request linux-rdma/perftest#257 (merged 2024-04, first released in
//!   24.07) renamed the printed unit to `MiB/sec` without changing the number:
//!   "MB is for Megabytes, perftest is reporting in Mebibyte".
//! - `MsgRate` is `iters * cycles_to_units / (cycles * 1000000)`: millions of
//!   messages per second, so `bytes * MsgRate * 8 / 1000` is the average in Gb/s;
//!   rows are cross-checked against it (`msg_rate_check`).

use std::collections::{BTreeMap, HashSet};

use serde::{Serialize, Serializer};

use crate::plausible::{self, number, Ceiling, Impossible, Number, Quantity};
use crate::workload::failure::{classify_common_line, Failure, FailureKind};
use crate::workload::text::{clean_lines, excerpt, is_ruler, parse_f64, parse_u64, ParseError};

/// A bandwidth unit perftest prints (or that the caller asserts for `--out_json`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BwUnit {
    /// `MB/sec`: perftest before 24.07. 2^20 bytes per second despite the name.
    MBps,
    /// `MiB/sec`: perftest 24.07 and later; the same number as `MB/sec`.
    MiBps,
    /// `Gb/sec`: `--report_gbits`, 10^9 bits per second.
    Gbps,
}

impl BwUnit {
    /// Parses the unit as printed (`MB/sec`, `MiB/sec`, `Gb/sec`) or a short
    /// alias (`mb`, `mib`, `gb`, `gbits`), case-insensitively.
    pub fn parse(s: &str) -> Option<BwUnit> {
        match s.trim().to_ascii_lowercase().as_str() {
            "mb/sec" | "mb/s" | "mb" | "mbps" => Some(BwUnit::MBps),
            "mib/sec" | "mib/s" | "mib" => Some(BwUnit::MiBps),
            "gb/sec" | "gb/s" | "gb" | "gbits" | "gbit/s" | "gbps" => Some(BwUnit::Gbps),
            _ => None,
        }
    }

    /// The unit as perftest prints it.
    pub fn as_str(self) -> &'static str {
        match self {
            BwUnit::MBps => "MB/sec",
            BwUnit::MiBps => "MiB/sec",
            BwUnit::Gbps => "Gb/sec",
        }
    }

    /// Converts a value in this unit to decimal Gb/s.
    pub fn to_gbps(self, v: f64) -> f64 {
        match self {
            BwUnit::MBps | BwUnit::MiBps => v * 1_048_576.0 * 8.0 / 1e9,
            BwUnit::Gbps => v,
        }
    }
}

/// How to parse.
#[derive(Debug, Clone, Default)]
pub struct PerftestParseOptions {
    /// The unit of an output that prints none (`--out_json`). A unit printed in a
    /// table header wins; a disagreement is recorded in `warnings`.
    pub unit_override: Option<BwUnit>,
    /// The harness killed the tool at its timeout.
    pub killed_by_timeout: bool,
    /// The link's rate in one direction (the slower NIC of the pair), Gb/s.
    /// Bandwidth above [`plausible::LINK_MARGIN`] × this × the directions
    /// (`-b` counts 2) × the ports (dual-port counts 2) is impossible;
    /// without it the ceiling is [`plausible::PORT_CEILING_GBPS`] per port
    /// and direction.
    pub link_gbps: Option<f64>,
}

/// Bandwidth or latency test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PerftestKind {
    Bw,
    Lat,
}

/// The parsed output of one perftest run. JSON field names are a public interface.
#[derive(Debug, Clone, Serialize)]
pub struct PerftestReport {
    /// `ib_write_bw`, … derived from the title line; null when there is none.
    pub tool: Option<String>,
    pub kind: Option<PerftestKind>,
    pub bidirectional: bool,
    /// `Ethernet` (RoCE) or `IB`, as printed.
    pub link_type: Option<String>,
    pub gid_index: Option<u32>,
    /// Bytes.
    pub mtu: Option<u32>,
    pub qps: Option<u32>,
    /// The bandwidth unit as printed (or as given for `--out_json`); null for latency.
    pub unit: Option<String>,
    pub rows: Vec<PerftestRow>,
    pub error: Option<Failure>,
    /// The title line, e.g. `RDMA_Write Bidirectional BW Test`.
    pub title: Option<String>,
    pub device: Option<String>,
    /// `header`, `override` or `msg_rate` (inferred for `--out_json`); null without rows.
    pub unit_source: Option<String>,
    /// `text` or `out_json`.
    pub format: String,
    /// Every `Key : value` setting the banner printed (first occurrence wins).
    pub settings: BTreeMap<String, String>,
    /// Foreign lines found inside the table, and other oddities.
    pub warnings: Vec<String>,
    /// Identical rows dropped (merged server and client streams print the table twice).
    pub duplicate_rows_dropped: usize,
    /// Rows whose average bandwidth disagrees with `bytes × MsgRate`.
    pub msg_rate_mismatches: usize,
    /// Failures after the first one (the first is `error`).
    pub other_errors: Vec<Failure>,
    /// Values no link or NIC could have produced (see [`crate::plausible`]),
    /// in output order. Their rows are not in `rows`; `error` is
    /// `unrecognised` with [`plausible::summary`] of them. Not in the JSON:
    /// `error` says it there.
    #[serde(skip)]
    pub impossible: Vec<Impossible>,
}

/// One result row: bandwidth or latency.
#[derive(Debug, Clone, PartialEq)]
pub enum PerftestRow {
    Bw(BwRow),
    Lat(LatRow),
}

impl Serialize for PerftestRow {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            PerftestRow::Bw(r) => r.serialize(s),
            PerftestRow::Lat(r) => r.serialize(s),
        }
    }
}

impl PerftestRow {
    /// The message size of the row.
    pub fn bytes(&self) -> u64 {
        match self {
            PerftestRow::Bw(r) => r.bytes,
            PerftestRow::Lat(r) => r.bytes,
        }
    }

    /// The bandwidth row, if this is one.
    pub fn as_bw(&self) -> Option<&BwRow> {
        match self {
            PerftestRow::Bw(r) => Some(r),
            PerftestRow::Lat(_) => None,
        }
    }

    /// The latency row, if this is one.
    pub fn as_lat(&self) -> Option<&LatRow> {
        match self {
            PerftestRow::Lat(r) => Some(r),
            PerftestRow::Bw(_) => None,
        }
    }
}

/// A bandwidth row. Bandwidths in decimal Gb/s.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BwRow {
    pub bytes: u64,
    pub iterations: Option<u64>,
    /// Null when perftest printed 0.00 with a non-zero average (`-D` duration mode).
    pub bw_peak_gbps: Option<f64>,
    pub bw_avg_gbps: Option<f64>,
    pub msg_rate_mpps: Option<f64>,
    /// The average as printed, in `unit`.
    pub bw_avg_raw: Option<String>,
    pub bw_peak_raw: Option<String>,
    pub msg_rate_check: Option<MsgRateCheck>,
    /// Columns with no field of their own (`#sl`, `CPU_Util[%]`, per-port columns), as printed.
    pub extra_columns: BTreeMap<String, String>,
}

/// `bytes × MsgRate` against the average bandwidth.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MsgRateCheck {
    /// `bytes * MsgRate[Mpps] * 8 / 1000`, in Gb/s.
    pub expected_gbps: f64,
    /// `bw_avg_gbps / expected_gbps`.
    pub ratio: f64,
    /// Within the tolerance (2 % plus the rounding of the printed digits).
    pub ok: bool,
}

/// A latency row, in µs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LatRow {
    pub bytes: u64,
    pub iterations: Option<u64>,
    pub t_min_us: Option<f64>,
    pub t_max_us: Option<f64>,
    pub t_typical_us: Option<f64>,
    pub t_avg_us: Option<f64>,
    pub t_stdev_us: Option<f64>,
    pub p99_us: Option<f64>,
    pub p999_us: Option<f64>,
    pub extra_columns: BTreeMap<String, String>,
}

const TOOL: &str = "perftest";

/// Parses perftest output: a text report (client or server side, possibly
/// merged, possibly wrapped by a launcher) or an `--out_json` file.
///
/// A recognisable failure without a table is `Ok` with `error` set and no rows.
/// Text that is neither a table nor a known failure is an `Err`.
pub fn parse(text: &str, opts: &PerftestParseOptions) -> Result<PerftestReport, ParseError> {
    if text.trim_start().starts_with('{') {
        return parse_json(text, opts);
    }
    parse_text(text, opts, false)
}

/// The first line that only perftest prints, if `text` has one: a
/// `#bytes` table header, the server's "Waiting for client to connect"
/// box, a test title with the settings block under it, one of perftest's
/// own error messages as it prints them (a whole line, not a quotation in
/// prose), or the shell saying an `ib_*` binary is missing. An
/// `--out_json` file (`{…`) is left to [`parse`], which checks its keys.
///
/// `rocegate parse` refuses text without one (a README, an nccl-tests
/// log, iperf3's stderr): keywords alone (`rdma_cm`, `failed`) would call
/// any prose a fabric failure. The runner does not ask: the text it
/// parses is what the perftest it started printed.
pub fn signature(text: &str) -> Option<String> {
    if text.trim_start().starts_with('{') {
        return Some("--out_json".to_string());
    }
    // perftest's own failures, as the start of the line it prints.
    const OWN_ERRORS: [&str; 11] = [
        "did not detect devices",
        "unable to find the infiniband/roce device",
        "no ib devices found",
        "couldn't get device list",
        "failed to get ib devices list",
        "couldn't get context for",
        "couldn't connect to ",
        "unable to open file descriptor for socket connection",
        "failed to exchange data between server and clients",
        "completion with error at",
        "failed status ",
    ];
    let lines = clean_lines(text);
    let mut title = None;
    let mut settings = false;
    for l in &lines {
        let t = l.text.trim();
        let lower = t.to_ascii_lowercase();
        let own_error = OWN_ERRORS.iter().any(|e| lower.starts_with(e));
        let missing_binary =
            classify_common_line(t) == Some(FailureKind::MissingBinary) && lower.contains("ib_");
        if own_error
            || missing_binary
            || t.contains("Waiting for client to connect")
            || (t.starts_with("#bytes") && Table::from_header(t).is_some())
        {
            return Some(t.to_string());
        }
        if title.is_none() && parse_title(t).is_some() {
            title = Some(t.to_string());
        }
        settings = settings || read_settings(t, &mut BTreeMap::new());
    }
    title.filter(|_| settings)
}

/// Parses the client of a `--run_infinitely -D <s>` run: the banner, then
/// one bandwidth row per window (`catch_alarm_infintely` calls
/// `print_report_bw` on every SIGALRM), with no closing ruler when the run
/// was stopped by a signal. Every row is a window, in order: unlike
/// [`parse`], equal rows are kept (two windows can print the same numbers),
/// so this must not be fed merged server and client streams. The peak
/// column prints 0.00 in this mode (it forces `noPeak`) and reads as null.
pub fn parse_windows(
    text: &str,
    opts: &PerftestParseOptions,
) -> Result<PerftestReport, ParseError> {
    parse_text(text, opts, true)
}

fn empty_report(format: &str) -> PerftestReport {
    PerftestReport {
        tool: None,
        kind: None,
        bidirectional: false,
        link_type: None,
        gid_index: None,
        mtu: None,
        qps: None,
        unit: None,
        rows: Vec::new(),
        error: None,
        title: None,
        device: None,
        unit_source: None,
        format: format.to_string(),
        settings: BTreeMap::new(),
        warnings: Vec::new(),
        duplicate_rows_dropped: 0,
        msg_rate_mismatches: 0,
        other_errors: Vec::new(),
        impossible: Vec::new(),
    }
}

/// What a header column means.
#[derive(Debug, Clone, PartialEq)]
enum Col {
    Bytes,
    Iterations,
    BwPeak(Option<String>),
    BwAvg(Option<String>),
    MsgRate,
    TMin(String),
    TMax(String),
    TTypical(String),
    TAvg(String),
    TStdev(String),
    P99(String),
    P999(String),
    Other(String),
}

/// Splits a `#bytes` header into column names. Names may contain spaces
/// (`BW peak[MB/sec]`, `99% percentile[usec]`) but end with `]` or start with `#`;
/// `#bytes #iterations` in latency headers is separated by a single space.
fn header_names(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut pending: Vec<&str> = Vec::new();
    for tok in line.split_whitespace() {
        if tok.starts_with('#') {
            if !pending.is_empty() {
                out.push(pending.join(" "));
                pending.clear();
            }
            out.push(tok.to_string());
            continue;
        }
        pending.push(tok);
        if tok.ends_with(']') {
            out.push(pending.join(" "));
            pending.clear();
        }
    }
    if !pending.is_empty() {
        out.push(pending.join(" "));
    }
    out
}

fn bracket(name: &str) -> Option<String> {
    let open = name.find('[')?;
    let close = name.rfind(']')?;
    (close > open).then(|| name[open + 1..close].to_string())
}

fn classify_col(name: &str) -> Col {
    let base = match name.find('[') {
        Some(i) => &name[..i],
        None => name,
    };
    let base = base.trim().to_ascii_lowercase();
    let unit = bracket(name);
    let lat_unit = || unit.clone().unwrap_or_default();
    match base.as_str() {
        "#bytes" => Col::Bytes,
        "#iterations" => Col::Iterations,
        "bw peak" => Col::BwPeak(unit),
        "bw average" => Col::BwAvg(unit),
        "msgrate" => Col::MsgRate,
        "t_min" => Col::TMin(lat_unit()),
        "t_max" => Col::TMax(lat_unit()),
        "t_typical" => Col::TTypical(lat_unit()),
        "t_avg" => Col::TAvg(lat_unit()),
        "t_stdev" => Col::TStdev(lat_unit()),
        "99% percentile" => Col::P99(lat_unit()),
        "99.9% percentile" => Col::P999(lat_unit()),
        _ => Col::Other(name.to_string()),
    }
}

struct Table {
    names: Vec<String>,
    cols: Vec<Col>,
}

impl Table {
    fn from_header(line: &str) -> Option<Table> {
        let names = header_names(line);
        let cols: Vec<Col> = names.iter().map(|n| classify_col(n)).collect();
        if cols.first() != Some(&Col::Bytes) {
            return None;
        }
        Some(Table { names, cols })
    }

    fn kind(&self) -> PerftestKind {
        let is_bw = self
            .cols
            .iter()
            .any(|c| matches!(c, Col::BwPeak(_) | Col::BwAvg(_)));
        if is_bw {
            PerftestKind::Bw
        } else {
            PerftestKind::Lat
        }
    }

    fn unit(&self) -> Option<String> {
        let mut found = None;
        for c in &self.cols {
            match c {
                Col::BwAvg(Some(u)) => return Some(u.clone()),
                Col::BwPeak(Some(u)) => found = Some(u.clone()),
                _ => {}
            }
        }
        found
    }
}

/// Settings keys perftest's banner prints (`ctx_print_test_info`), matched by name
/// rather than by position: the banner puts two settings on one line, pads with
/// spaces or tabs, and sometimes leaves no space before the colon.
const SETTING_KEYS: [&str; 27] = [
    "Dual-port",
    "Device",
    "Number of qps",
    "Transport type",
    "Connection type",
    "Using SRQ",
    "PCIe relax order",
    "Lock-free",
    "ibv_wr* API",
    "Using DDP",
    "TX depth",
    "RX depth",
    "CQ Moderation",
    "CQE Poll Batch",
    "Mtu",
    "Link type",
    "GID index",
    "Max inline data",
    "rdma_cm QPs",
    "Data ex. method",
    "Outstand reads",
    "CPU freq",
    "Use ROCm memory",
    "Use CUDA memory",
    "Use Neuron memory",
    "SL",
    "Number of flows",
];

/// `SETTING_KEYS` lowercased once.
static SETTING_KEYS_LOWER: std::sync::LazyLock<Vec<String>> = std::sync::LazyLock::new(|| {
    SETTING_KEYS
        .iter()
        .map(|k| k.to_ascii_lowercase())
        .collect()
});

fn read_settings(line: &str, settings: &mut BTreeMap<String, String>) -> bool {
    // Every setting is `Key : value`; the address and GID lines that make
    // up most of a many-QP header hold none.
    let t = line.trim_start();
    if !line.contains(':')
        || t.starts_with("local address")
        || t.starts_with("remote address")
        || t.starts_with("GID:")
    {
        return false;
    }
    let mut any = false;
    let lower = line.to_ascii_lowercase();
    for (key, lk) in SETTING_KEYS.iter().zip(SETTING_KEYS_LOWER.iter()) {
        let mut from = 0;
        while let Some(pos) = lower[from..].find(lk.as_str()) {
            let start = from + pos;
            from = start + lk.len();
            let boundary = start == 0 || lower.as_bytes()[start - 1].is_ascii_whitespace();
            if !boundary {
                continue;
            }
            let rest = line[from..].trim_start_matches([' ', '\t']);
            let Some(rest) = rest.strip_prefix(':') else {
                continue;
            };
            let value = rest.split_whitespace().next().unwrap_or("");
            if value.is_empty() {
                continue;
            }
            settings
                .entry(key.to_string())
                .or_insert_with(|| value.to_string());
            any = true;
            break;
        }
    }
    any
}

/// `8388608[B]` or `2048` → 2048.
fn leading_u32(v: &str) -> Option<u32> {
    let digits: String = v.chars().take_while(|c| c.is_ascii_digit()).collect();
    digits.parse().ok()
}

/// Recognises a test title (`RDMA_Write Bidirectional BW Test`, `Send Latency Test`,
/// `RDMA_Write_BW_Test` in JSON) and returns (tool, kind, bidirectional).
fn parse_title(line: &str) -> Option<(Option<String>, PerftestKind, bool)> {
    let norm = line.trim().replace('_', " ");
    let lower = norm.to_ascii_lowercase();
    let kind = if lower.ends_with("bw test") {
        PerftestKind::Bw
    } else if lower.ends_with("latency test") || lower.ends_with("lat test") {
        PerftestKind::Lat
    } else {
        return None;
    };
    // A title is short and has no colon; this keeps log lines out.
    if lower.contains(':') || lower.split_whitespace().count() > 6 {
        return None;
    }
    let verb = if lower.starts_with("rdma write") {
        Some("write")
    } else if lower.starts_with("rdma read") {
        Some("read")
    } else if lower.starts_with("send") {
        Some("send")
    } else if lower.starts_with("atomic") {
        Some("atomic")
    } else {
        None
    };
    let suffix = match kind {
        PerftestKind::Bw => "bw",
        PerftestKind::Lat => "lat",
    };
    let tool = verb.map(|v| format!("ib_{v}_{suffix}"));
    Some((tool, kind, lower.contains("bidirectional")))
}

/// Recognises perftest's own failure messages (and the common ones).
fn classify_line(line: &str) -> Option<FailureKind> {
    if let Some(k) = classify_common_line(line) {
        return Some(k);
    }
    let l = line.to_ascii_lowercase();
    let has = |p: &str| l.contains(p);
    let failing = has("fail")
        || has("error")
        || has("couldn't")
        || has("could not")
        || has("unable")
        || has("cannot")
        || has("can't")
        || has("unexpected")
        || has("reject");
    if has("did not detect devices")
        || has("unable to find the infiniband/roce device")
        || has("no ib devices found")
        || has("couldn't get device list")
        || has("failed to get ib devices list")
        || has("couldn't get context for")
        || (has("ib device") && has("not found"))
    {
        return Some(FailureKind::NoDevice);
    }
    if has("completion with error") || (has("failed status") && has("syndrom")) {
        return Some(FailureKind::CompletionError);
    }
    if has("couldn't connect to")
        || has("unable to open file descriptor for socket connection")
        || has("connection refused")
        || has("failed to exchange data between server and clients")
    {
        return Some(FailureKind::ConnectionRefused);
    }
    let cm = has("rdma_cm")
        || has("rdma cm")
        || has("cm event")
        || has("rdma_resolve")
        || has("rdma_connect")
        || has("rdma_get_cm_event")
        || has("rdma_create_id")
        || has("rdma_listen")
        || has("rdma_bind")
        || has("rdma_accept")
        || has("rdma_client")
        || has("rdma_server");
    if cm && failing {
        return Some(FailureKind::RdmaCm);
    }
    const RESOURCES: [&str; 16] = [
        "create qp",
        "create cq",
        "create srq",
        "create ah",
        "allocate pd",
        "alloc pd",
        "register mr",
        "allocate mr",
        "create mr",
        "reg mr",
        "create the resources",
        "create resources",
        "modify qp",
        "completion channel",
        "create comp channel",
        "create event channel",
    ];
    if failing && RESOURCES.iter().any(|p| has(p)) {
        return Some(FailureKind::ResourceCreation);
    }
    if failing && (has("cuda") || has("rocm") || has("gpu memory") || has("gpu buffer")) {
        return Some(FailureKind::CudaFailure);
    }
    None
}

struct TextState {
    report: PerftestReport,
    table: Option<Table>,
    in_table: bool,
    seen_rows: HashSet<String>,
    failures: Vec<Failure>,
    last_failure_line: Option<usize>,
    recognised: bool,
}

fn parse_text(
    text: &str,
    opts: &PerftestParseOptions,
    keep_repeats: bool,
) -> Result<PerftestReport, ParseError> {
    let lines = clean_lines(text);
    let mut st = TextState {
        report: empty_report("text"),
        table: None,
        in_table: false,
        seen_rows: HashSet::new(),
        failures: Vec::new(),
        last_failure_line: None,
        recognised: false,
    };
    let mut i = 0;
    while i < lines.len() {
        let t = lines[i].text.trim();
        i += 1;
        if t.is_empty() {
            continue;
        }
        if is_ruler(t, '-') {
            st.in_table = false;
            continue;
        }
        if is_ruler(t, '*') || t.contains("Waiting for client to connect") {
            st.recognised = true;
            continue;
        }
        if let Some((tool, kind, bidir)) = parse_title(t) {
            st.recognised = true;
            if st.report.title.is_none() {
                st.report.title = Some(t.to_string());
                st.report.tool = tool;
                st.report.kind = Some(kind);
                st.report.bidirectional = bidir;
            }
            continue;
        }
        if t.starts_with("#bytes") {
            if let Some(table) = Table::from_header(t) {
                st.recognised = true;
                st.in_table = true;
                st.table = Some(table);
                continue;
            }
        }
        if let Some(table) = &st.table {
            if let Some(row) = read_row(t, table) {
                let key = t.split_whitespace().collect::<Vec<_>>().join(" ");
                if st.seen_rows.insert(key) || keep_repeats {
                    match row {
                        Ok(row) => st.report.rows.push(row),
                        Err(e) => st.report.impossible.push(e),
                    }
                } else {
                    st.report.duplicate_rows_dropped += 1;
                }
                continue;
            }
        }
        if let Some(kind) = classify_line(t) {
            let message = failure_message(kind, &lines, i - 1);
            // Consecutive lines that say the same thing ("Did not detect devices",
            // "Unable to find the Infiniband/RoCE device") make one failure.
            match (st.failures.last_mut(), st.last_failure_line) {
                (Some(prev), Some(at)) if prev.kind == kind && i - 1 - at <= 2 => {
                    prev.message = excerpt(&format!("{} | {message}", prev.message), 400);
                }
                _ => st.failures.push(Failure::new(kind, message)),
            }
            st.last_failure_line = Some(i - 1);
            continue;
        }
        if read_settings(t, &mut st.report.settings) {
            st.recognised = true;
            continue;
        }
        if st.in_table || t.starts_with("Conflicting CPU frequency") {
            st.report.warnings.push(excerpt(t, 200));
        }
    }
    finish_text(st, opts)
}

/// The failure's own line plus the detail lines perftest prints after it
/// (`Failed status 12: wr_id 0 syndrom 0x81`, `scnt=128, ccnt=0`).
fn failure_message(
    kind: FailureKind,
    lines: &[crate::workload::text::CleanLine],
    at: usize,
) -> String {
    let mut parts = vec![lines[at].text.trim().to_string()];
    if kind == FailureKind::CompletionError {
        for l in lines.iter().skip(at + 1).take(3) {
            let t = l.text.trim();
            let lower = t.to_ascii_lowercase();
            if lower.contains("status") || lower.contains("syndrom") || lower.contains("cnt=") {
                parts.push(t.to_string());
            } else {
                break;
            }
        }
    }
    excerpt(&parts.join(" | "), 400)
}

/// Reads a table row: `None` for a line that is not one, `Err` for a row
/// with a value that cannot be a measurement. Every cell must be written as
/// a number (`nan` and `-5` count: they make the row impossible, not
/// foreign). Bandwidth cells are judged later, by
/// [`reject_impossible_bandwidth`], once the unit and the test's direction
/// are known.
fn read_row(line: &str, table: &Table) -> Option<Result<PerftestRow, Impossible>> {
    let toks: Vec<&str> = line.split_whitespace().collect();
    if toks.len() != table.cols.len() || toks.len() < 2 {
        return None;
    }
    if !toks.iter().all(|t| plausible::looks_numeric(t)) {
        return None;
    }
    let Some(bytes) = parse_u64(toks[0]) else {
        let why = plausible::counter(toks[0]).err().unwrap_or_default();
        return Some(Err(Impossible::new(
            format!("row {}", toks[0]),
            toks[0],
            "message size in bytes",
            why,
        )));
    };
    for ((col, name), tok) in table.cols.iter().zip(&table.names).zip(&toks) {
        if let Some(e) = check_cell(col, name, tok, bytes) {
            return Some(Err(e));
        }
    }
    Some(Ok(build_row(bytes, &toks, table)))
}

/// Why a cell other than the size and the bandwidths cannot be a
/// measurement, if it cannot: see [`crate::plausible`] for the limits.
/// Columns this parser does not know are only required to be finite.
fn check_cell(col: &Col, name: &str, tok: &str, bytes: u64) -> Option<Impossible> {
    let us = |u: &String| {
        if u == "usec" {
            Quantity::TimeUs
        } else {
            Quantity::Amount
        }
    };
    let (q, what) = match col {
        Col::Bytes | Col::BwPeak(_) | Col::BwAvg(_) => return None,
        Col::Iterations => (Quantity::Amount, "iteration count"),
        Col::MsgRate => (Quantity::MessageRate, "message rate"),
        Col::TMin(u)
        | Col::TMax(u)
        | Col::TTypical(u)
        | Col::TAvg(u)
        | Col::TStdev(u)
        | Col::P99(u)
        | Col::P999(u) => (us(u), "latency"),
        Col::Other(_) => {
            if number(tok) != Number::NonFinite {
                return None;
            }
            return Some(Impossible::new(
                format!("row {bytes} bytes"),
                tok,
                format!("{name} value"),
                "not a finite number",
            ));
        }
    };
    let why = q.read(tok).err()?;
    let printed = match bracket(name) {
        Some(u) => format!("{tok} {u}"),
        None => tok.to_string(),
    };
    Some(Impossible::new(
        format!("row {bytes} bytes"),
        printed,
        what,
        why,
    ))
}

/// Rejects bandwidth cells that are negative, not finite or above what the
/// link could carry (a [`Ceiling`] from `link_gbps`, the test's direction
/// and dual-port setting), and takes their rows out of `rows`.
fn reject_impossible_bandwidth(r: &mut PerftestReport, opts: &PerftestParseOptions) {
    let on = |k: &str| {
        r.settings
            .get(k)
            .is_some_and(|v| v.eq_ignore_ascii_case("on"))
    };
    let ports = if on("Dual-port") { 2 } else { 1 };
    let directions = if r.bidirectional { 2 } else { 1 };
    let ceiling = Ceiling::new(opts.link_gbps, directions, ports);
    let unit = r.unit.as_deref().and_then(BwUnit::parse);
    let label = r.unit.clone();
    let found = &mut r.impossible;
    r.rows.retain(|row| {
        let Some(b) = row.as_bw() else {
            return true;
        };
        for raw in [&b.bw_peak_raw, &b.bw_avg_raw].into_iter().flatten() {
            let why = match (number(raw), unit) {
                (Number::NotANumber, _) => None,
                (Number::NonFinite, _) => Some("not a finite number".to_string()),
                (Number::Finite(v), Some(u)) if v >= 0.0 => {
                    Quantity::Bandwidth(ceiling).check(u.to_gbps(v))
                }
                (Number::Finite(v), _) => Quantity::Amount.check(v),
            };
            if let Some(why) = why {
                let printed = match &label {
                    Some(l) => format!("{} {l}", raw.trim()),
                    None => raw.trim().to_string(),
                };
                found.push(Impossible::new(
                    format!("row {} bytes", b.bytes),
                    printed,
                    "bandwidth",
                    why,
                ));
                return false;
            }
        }
        true
    });
}

/// Makes the report `unrecognised` when it holds an impossible value: that
/// failure comes first, the others after it.
fn reject_if_impossible(r: &mut PerftestReport, failures: &mut Vec<Failure>) {
    if let Some(why) = plausible::summary(&r.impossible) {
        failures.insert(0, Failure::new(FailureKind::Unrecognised, why));
    }
}

fn build_row(bytes: u64, toks: &[&str], table: &Table) -> PerftestRow {
    let mut iterations = None;
    let mut extra = BTreeMap::new();
    match table.kind() {
        PerftestKind::Bw => {
            let unit = table.unit().as_deref().and_then(BwUnit::parse);
            let mut row = BwRow {
                bytes,
                iterations: None,
                bw_peak_gbps: None,
                bw_avg_gbps: None,
                msg_rate_mpps: None,
                bw_avg_raw: None,
                bw_peak_raw: None,
                msg_rate_check: None,
                extra_columns: BTreeMap::new(),
            };
            let mut peak = None;
            let mut avg = None;
            for ((col, name), tok) in table.cols.iter().zip(&table.names).zip(toks) {
                match col {
                    Col::Bytes => {}
                    Col::Iterations => iterations = parse_u64(tok),
                    Col::BwPeak(_) => {
                        peak = parse_f64(tok);
                        row.bw_peak_raw = Some(tok.to_string());
                    }
                    Col::BwAvg(_) => {
                        avg = parse_f64(tok);
                        row.bw_avg_raw = Some(tok.to_string());
                    }
                    Col::MsgRate => row.msg_rate_mpps = parse_f64(tok),
                    _ => {
                        extra.insert(name.clone(), tok.to_string());
                    }
                }
            }
            row.iterations = iterations;
            row.extra_columns = extra;
            fill_bw(&mut row, peak, avg, unit);
            PerftestRow::Bw(row)
        }
        PerftestKind::Lat => {
            let mut row = LatRow {
                bytes,
                iterations: None,
                t_min_us: None,
                t_max_us: None,
                t_typical_us: None,
                t_avg_us: None,
                t_stdev_us: None,
                p99_us: None,
                p999_us: None,
                extra_columns: BTreeMap::new(),
            };
            for ((col, name), tok) in table.cols.iter().zip(&table.names).zip(toks) {
                // Latency is reported in µs unless `--report-cycles` asked for cycles;
                // cycles are kept as printed, in extra_columns.
                let us = |u: &String| {
                    if u == "usec" {
                        parse_f64(tok)
                    } else {
                        None
                    }
                };
                let slot = match col {
                    Col::Bytes => continue,
                    Col::Iterations => {
                        row.iterations = parse_u64(tok);
                        continue;
                    }
                    Col::TMin(u) => (&mut row.t_min_us, us(u)),
                    Col::TMax(u) => (&mut row.t_max_us, us(u)),
                    Col::TTypical(u) => (&mut row.t_typical_us, us(u)),
                    Col::TAvg(u) => (&mut row.t_avg_us, us(u)),
                    Col::TStdev(u) => (&mut row.t_stdev_us, us(u)),
                    Col::P99(u) => (&mut row.p99_us, us(u)),
                    Col::P999(u) => (&mut row.p999_us, us(u)),
                    _ => {
                        row.extra_columns.insert(name.clone(), tok.to_string());
                        continue;
                    }
                };
                match slot.1 {
                    Some(v) => *slot.0 = Some(v),
                    None => {
                        row.extra_columns.insert(name.clone(), tok.to_string());
                    }
                }
            }
            PerftestRow::Lat(row)
        }
    }
}

/// Converts peak and average to Gb/s and cross-checks against MsgRate.
fn fill_bw(row: &mut BwRow, peak: Option<f64>, avg: Option<f64>, unit: Option<BwUnit>) {
    let Some(unit) = unit else {
        return;
    };
    row.bw_avg_gbps = avg.map(|v| unit.to_gbps(v));
    // A peak below the average is impossible; perftest prints 0.00 for the peak
    // in duration mode (-D), where it does not measure it.
    row.bw_peak_gbps = match (peak, avg) {
        (Some(p), Some(a)) if p == 0.0 && a > 0.0 => None,
        (Some(p), _) => Some(unit.to_gbps(p)),
        (None, _) => None,
    };
    row.msg_rate_check = msg_rate_check(row.bytes, row.msg_rate_mpps, avg, unit);
}

fn msg_rate_check(
    bytes: u64,
    mpps: Option<f64>,
    avg: Option<f64>,
    unit: BwUnit,
) -> Option<MsgRateCheck> {
    let mpps = mpps?;
    let avg = avg?;
    let expected = bytes as f64 * mpps * 8.0 / 1000.0;
    if expected <= 0.0 || avg <= 0.0 {
        return None;
    }
    let got = unit.to_gbps(avg);
    let ratio = got / expected;
    // The printed digits bound the precision: MsgRate has 6 decimals, the
    // bandwidth 2 (or 6 below 0.1 Gb/s).
    let tol = 0.02 + 0.5e-6 / mpps + 0.005 / avg;
    Some(MsgRateCheck {
        expected_gbps: expected,
        ratio,
        ok: (ratio - 1.0).abs() <= tol,
    })
}

fn finish_text(
    mut st: TextState,
    opts: &PerftestParseOptions,
) -> Result<PerftestReport, ParseError> {
    let r = &mut st.report;
    if let Some(table) = &st.table {
        if r.kind.is_none() {
            r.kind = Some(table.kind());
        }
        if table.kind() == PerftestKind::Bw {
            match table.unit() {
                Some(u) => {
                    if BwUnit::parse(&u).is_none() {
                        r.warnings
                            .push(format!("unknown bandwidth unit {u:?}: bandwidth left null"));
                    }
                    if let Some(o) = opts.unit_override {
                        if BwUnit::parse(&u) != Some(o) {
                            r.warnings.push(format!(
                                "unit override {} ignored: the table header prints {u}",
                                o.as_str()
                            ));
                        }
                    }
                    r.unit = Some(u);
                    r.unit_source = Some("header".to_string());
                }
                None => {
                    if let Some(o) = opts.unit_override {
                        r.unit = Some(o.as_str().to_string());
                        r.unit_source = Some("override".to_string());
                        for row in &mut r.rows {
                            if let PerftestRow::Bw(b) = row {
                                let peak = b.bw_peak_raw.as_deref().and_then(parse_f64);
                                let avg = b.bw_avg_raw.as_deref().and_then(parse_f64);
                                fill_bw(b, peak, avg, Some(o));
                            }
                        }
                    }
                }
            }
        }
    }
    apply_settings(r);
    reject_impossible_bandwidth(r, opts);
    r.msg_rate_mismatches = count_mismatches(&r.rows);
    let mut failures = std::mem::take(&mut st.failures);
    if opts.killed_by_timeout {
        failures.push(Failure::timeout(
            !r.rows.is_empty(),
            timeout_message(r.rows.len()),
        ));
    }
    reject_if_impossible(r, &mut failures);
    if !failures.is_empty() {
        r.error = Some(failures.remove(0));
        r.other_errors = failures;
    }
    if !r.rows.is_empty() || r.error.is_some() {
        return Ok(st.report);
    }
    if st.recognised {
        r.error = Some(Failure::new(
            FailureKind::Unrecognised,
            "perftest printed its banner but no result rows and no known error message",
        ));
        return Ok(st.report);
    }
    Err(ParseError::not_recognised(
        TOOL,
        "no \"#bytes\" table header and no known error message",
    ))
}

fn timeout_message(rows: usize) -> String {
    if rows == 0 {
        "killed by the harness at its timeout before any result row".to_string()
    } else {
        format!(
            "killed by the harness at its timeout after {rows} result rows (hang after data moved)"
        )
    }
}

fn count_mismatches(rows: &[PerftestRow]) -> usize {
    rows.iter()
        .filter_map(|r| r.as_bw())
        .filter(|b| b.msg_rate_check.as_ref().is_some_and(|c| !c.ok))
        .count()
}

fn apply_settings(r: &mut PerftestReport) {
    let get = |k: &str| r.settings.get(k).cloned();
    r.link_type = get("Link type");
    r.gid_index = get("GID index").as_deref().and_then(leading_u32);
    r.mtu = get("Mtu").as_deref().and_then(leading_u32);
    r.qps = get("Number of qps").as_deref().and_then(leading_u32);
    r.device = get("Device");
}

fn json_num(v: &serde_json::Value) -> Option<f64> {
    match v {
        serde_json::Value::Number(n) => n.as_f64().filter(|f| f.is_finite()),
        serde_json::Value::String(s) => parse_f64(s),
        _ => None,
    }
}

fn json_text(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// `--out_json`: `{"test_info": {...}, "results": {...}}` (or a list of results).
fn parse_json(text: &str, opts: &PerftestParseOptions) -> Result<PerftestReport, ParseError> {
    let v: serde_json::Value = serde_json::from_str(text.trim()).map_err(|e| {
        ParseError::malformed(TOOL, format!("--out_json output is not valid JSON: {e}"))
    })?;
    let info = v.get("test_info");
    let results = v.get("results");
    if info.is_none() && results.is_none() {
        return Err(ParseError::not_recognised(
            TOOL,
            "JSON without \"test_info\" or \"results\" (not perftest --out_json)",
        ));
    }
    let mut r = empty_report("out_json");
    if let Some(serde_json::Value::Object(m)) = info {
        for (k, val) in m {
            // JSON keys use underscores ("GID_index"); store them as the banner names them.
            let key = SETTING_KEYS
                .iter()
                .find(|s| {
                    s.replace([' ', '-', '.'], "_")
                        .eq_ignore_ascii_case(k.trim_end_matches('_'))
                })
                .map(|s| s.to_string())
                .unwrap_or_else(|| k.clone());
            r.settings.insert(key, json_text(val));
        }
        if let Some(test) = m.get("test") {
            let title = json_text(test);
            if let Some((tool, kind, bidir)) = parse_title(&title) {
                r.tool = tool;
                r.kind = Some(kind);
                r.bidirectional = bidir;
            }
            r.title = Some(title);
        }
    }
    apply_settings(&mut r);
    let list: Vec<&serde_json::Value> = match results {
        Some(serde_json::Value::Array(a)) => a.iter().collect(),
        Some(o @ serde_json::Value::Object(_)) => vec![o],
        _ => Vec::new(),
    };
    let is_lat = r.kind == Some(PerftestKind::Lat)
        || list
            .iter()
            .any(|o| o.get("BW_average").is_none() && o.get("t_avg").is_some());
    for (i, o) in list.into_iter().enumerate() {
        let Some(m) = o.as_object() else { continue };
        if let Some(e) = json_impossible(i, m) {
            r.impossible.push(e);
            continue;
        }
        let bytes = m.get("MsgSize").and_then(json_num).map(|f| f as u64);
        let Some(bytes) = bytes else {
            r.warnings
                .push("a result without MsgSize was skipped".to_string());
            continue;
        };
        let iterations = m.get("n_iterations").and_then(json_num).map(|f| f as u64);
        let mut extra = BTreeMap::new();
        for (k, val) in m {
            if !matches!(
                k.as_str(),
                "MsgSize" | "n_iterations" | "BW_peak" | "BW_average" | "MsgRate"
            ) {
                extra.insert(k.clone(), json_text(val));
            }
        }
        if is_lat {
            let g = |k: &str| m.get(k).and_then(json_num);
            r.rows.push(PerftestRow::Lat(LatRow {
                bytes,
                iterations,
                t_min_us: g("t_min"),
                t_max_us: g("t_max"),
                t_typical_us: g("t_typical"),
                t_avg_us: g("t_avg"),
                t_stdev_us: g("t_stdev"),
                p99_us: g("percentile_99").or_else(|| g("99%")),
                p999_us: g("percentile_99.9").or_else(|| g("99.9%")),
                extra_columns: extra,
            }));
        } else {
            r.rows.push(PerftestRow::Bw(BwRow {
                bytes,
                iterations,
                bw_peak_gbps: None,
                bw_avg_gbps: None,
                msg_rate_mpps: m.get("MsgRate").and_then(json_num),
                bw_avg_raw: m.get("BW_average").map(json_text),
                bw_peak_raw: m.get("BW_peak").map(json_text),
                msg_rate_check: None,
                extra_columns: extra,
            }));
        }
    }
    if r.kind.is_none() && !r.rows.is_empty() {
        r.kind = Some(if is_lat {
            PerftestKind::Lat
        } else {
            PerftestKind::Bw
        });
    }
    if !is_lat && !r.rows.is_empty() {
        let unit = match opts.unit_override {
            Some(u) => {
                r.unit_source = Some("override".to_string());
                Some(u)
            }
            None => {
                let u = infer_unit(&r.rows);
                if u.is_some() {
                    r.unit_source = Some("msg_rate".to_string());
                } else {
                    r.warnings.push(
                        "--out_json carries no unit and MsgRate cannot tell MB/sec from Gb/sec: bandwidth left null (pass a unit)"
                            .to_string(),
                    );
                }
                u
            }
        };
        if let Some(u) = unit {
            r.unit = Some(u.as_str().to_string());
            for row in &mut r.rows {
                if let PerftestRow::Bw(b) = row {
                    let peak = b.bw_peak_raw.as_deref().and_then(parse_f64);
                    let avg = b.bw_avg_raw.as_deref().and_then(parse_f64);
                    fill_bw(b, peak, avg, Some(u));
                }
            }
        }
    }
    reject_impossible_bandwidth(&mut r, opts);
    r.msg_rate_mismatches = count_mismatches(&r.rows);
    let mut failures = Vec::new();
    if opts.killed_by_timeout {
        failures.push(Failure::timeout(
            !r.rows.is_empty(),
            timeout_message(r.rows.len()),
        ));
    }
    reject_if_impossible(&mut r, &mut failures);
    if !failures.is_empty() {
        r.error = Some(failures.remove(0));
        r.other_errors = failures;
    }
    Ok(r)
}

/// A number of an `--out_json` result: a JSON number, or a string holding one.
fn json_number(v: &serde_json::Value) -> Number {
    match v {
        serde_json::Value::Number(n) => n.as_f64().map_or(Number::NotANumber, |f| {
            if f.is_finite() {
                Number::Finite(f)
            } else {
                Number::NonFinite
            }
        }),
        serde_json::Value::String(s) => number(s),
        _ => Number::NotANumber,
    }
}

/// The first value of `--out_json` result `i` that cannot be a measurement,
/// other than its bandwidths (see [`reject_impossible_bandwidth`]).
fn json_impossible(i: usize, m: &serde_json::Map<String, serde_json::Value>) -> Option<Impossible> {
    let at = match m.get("MsgSize") {
        Some(v) => format!("row {} bytes", json_text(v)),
        None => format!("results[{i}]"),
    };
    let quantity = |k: &str| match k {
        "MsgSize" => Some((Quantity::Amount, "message size in bytes")),
        "n_iterations" => Some((Quantity::Amount, "iteration count")),
        "MsgRate" => Some((Quantity::MessageRate, "message rate")),
        "t_min" | "t_max" | "t_typical" | "t_avg" | "t_stdev" | "percentile_99"
        | "percentile_99.9" | "99%" | "99.9%" => Some((Quantity::TimeUs, "latency")),
        _ => None,
    };
    for (k, v) in m {
        let Some((q, what)) = quantity(k) else {
            continue;
        };
        let why = match json_number(v) {
            Number::Finite(f) => q.check(f),
            Number::NonFinite => Some("not a finite number".to_string()),
            Number::NotANumber => None,
        };
        if let Some(why) = why {
            return Some(Impossible::new(
                at,
                format!("{k} {}", json_text(v)),
                what,
                why,
            ));
        }
    }
    None
}

/// Picks the unit under which every row agrees with `bytes × MsgRate`.
fn infer_unit(rows: &[PerftestRow]) -> Option<BwUnit> {
    [BwUnit::MiBps, BwUnit::Gbps].into_iter().find(|&u| {
        let mut checked = 0;
        let all_ok = rows.iter().filter_map(|r| r.as_bw()).all(|b| {
            let avg = b.bw_avg_raw.as_deref().and_then(parse_f64);
            match msg_rate_check(b.bytes, b.msg_rate_mpps, avg, u) {
                Some(c) => {
                    checked += 1;
                    c.ok
                }
                None => true,
            }
        });
        all_ok && checked > 0
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_names_join_spaced_names() {
        let n = header_names(
            " #bytes #iterations    t_min[usec]    99% percentile[usec]   99.9% percentile[usec]",
        );
        assert_eq!(
            n,
            [
                "#bytes",
                "#iterations",
                "t_min[usec]",
                "99% percentile[usec]",
                "99.9% percentile[usec]"
            ]
        );
        let n = header_names(
            " #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]",
        );
        assert_eq!(n[2], "BW peak[MB/sec]");
        assert_eq!(n[4], "MsgRate[Mpps]");
    }

    #[test]
    fn units_are_binary_megabytes_or_decimal_gigabits() {
        assert!((BwUnit::MBps.to_gbps(1000.0) - 8.388608).abs() < 1e-9);
        assert_eq!(BwUnit::MiBps.to_gbps(1.0), BwUnit::MBps.to_gbps(1.0));
        assert_eq!(BwUnit::Gbps.to_gbps(52.5), 52.5);
        assert_eq!(BwUnit::parse("MiB/sec"), Some(BwUnit::MiBps));
        assert_eq!(BwUnit::parse("furlongs"), None);
    }

    #[test]
    fn duration_mode_peak_is_null() {
        let text = " #bytes     #iterations    BW peak[MiB/sec]    BW average[MiB/sec]   MsgRate[Mpps]\n 65536      279928           0.00               5830.79               0.093293\n";
        let r = parse(text, &PerftestParseOptions::default()).unwrap();
        let b = r.rows[0].as_bw().unwrap();
        assert_eq!(b.bw_peak_gbps, None);
        assert!(b.bw_avg_gbps.unwrap() > 48.0);
        assert!(b.msg_rate_check.as_ref().unwrap().ok);
    }

    #[test]
    fn titles() {
        assert_eq!(
            parse_title("RDMA_Write Bidirectional BW Test"),
            Some((Some("ib_write_bw".into()), PerftestKind::Bw, true))
        );
        assert_eq!(
            parse_title("Send Latency Test"),
            Some((Some("ib_send_lat".into()), PerftestKind::Lat, false))
        );
        assert_eq!(
            parse_title("RDMA_Write_BW_Test").unwrap().0.as_deref(),
            Some("ib_write_bw")
        );
        assert_eq!(parse_title("note: this BW Test"), None);
    }

    #[test]
    fn completion_error_keeps_status_and_syndrome() {
        let text = " Completion with error at client\n Failed status 12: wr_id 0 syndrom 0x81\nscnt=128, ccnt=0\n";
        let r = parse(text, &PerftestParseOptions::default()).unwrap();
        let e = r.error.unwrap();
        assert_eq!(e.kind, FailureKind::CompletionError);
        assert!(e.message.contains("status 12"), "{}", e.message);
        assert!(e.message.contains("syndrom 0x81"), "{}", e.message);
    }

    #[test]
    fn garbage_is_an_error() {
        let e = parse("hello world\n", &PerftestParseOptions::default()).unwrap_err();
        assert!(e.to_string().contains("#bytes"), "{e}");
    }

    /// A `--run_infinitely -D 1` client stopped by SIGINT: the layout of
    /// `print_report_bw` rows after the banner, no closing ruler. Two
    /// windows print the same numbers; both are windows.
    #[test]
    fn windows_keep_equal_rows_in_order() {
        let text = " WARNING: BW peak won't be measured in this run.\n\
---------------------------------------------------------------------------------------\n\
                    RDMA_Write BW Test\n\
 Number of qps   : 1\t\tTransport type : IB\n\
 Link type       : Ethernet\n\
---------------------------------------------------------------------------------------\n\
 #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]\n\
 1048576    46745            0.00               392.15\t\t   0.046745\n\
 1048576    46745            0.00               392.15\t\t   0.046745\n\
 1048576    2337             0.00               19.61\t\t   0.002337\n";
        let opts = PerftestParseOptions::default();
        let w = parse_windows(text, &opts).unwrap();
        assert!(w.error.is_none(), "{:?}", w.error);
        let avg: Vec<f64> = w
            .rows
            .iter()
            .filter_map(|r| r.as_bw().and_then(|b| b.bw_avg_gbps))
            .collect();
        assert_eq!(avg, vec![392.15, 392.15, 19.61]);
        assert!(w
            .rows
            .iter()
            .all(|r| r.as_bw().unwrap().bw_peak_gbps.is_none()));
        // The ordinary parser drops the repeat (merged server and client
        // streams print the table twice).
        assert_eq!(parse(text, &opts).unwrap().rows.len(), 2);
    }

    #[test]
    fn timeout_before_rows_is_infrastructure() {
        let opts = PerftestParseOptions {
            unit_override: None,
            killed_by_timeout: true,
            ..Default::default()
        };
        let r = parse(
            "************************************\n* Waiting for client to connect... *\n",
            &opts,
        )
        .unwrap();
        let e = r.error.unwrap();
        assert_eq!(e.kind, FailureKind::Timeout);
        assert_eq!(
            e.class,
            crate::workload::failure::FailureClass::Infrastructure
        );
    }
}
