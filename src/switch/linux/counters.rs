//! Counters and QoS configuration of a Linux box used as a switch: a Spectrum
//! ASIC under the mainline `mlxsw` driver (switchdev), ports `swp1`, `swp2`, …
//! This is what the `linux` switch driver reads, from four tools:
//!
//! - `ethtool -S swpN`: the PPCNT counter groups mlxsw exposes
//!   (`drivers/net/ethernet/mellanox/mlxsw/spectrum_ethtool.c`): IEEE 802.3,
//!   RFC 2863/2819/3635, the port's `ecn_marked`, per-priority octets,
//!   frames, pause frames and pause duration (`*_prio_N`), and per-traffic
//!   class `tc_no_buffer_discard_uc_tc_N` and `tc_transmit_queue_tc_N`
//!   for TC 0..15 (8..15 are the multicast TCs).
//! - `ip -s -s -j link show dev swpN`: the netdev's `stats64`, and with the
//!   second `-s` the `carrier_changes` that are the only link-down count a
//!   Linux switch port has (mlxsw prints no link-down counter in `ethtool -S`).
//! - `tc -s -d qdisc show dev swpN`: the offloaded root `ets`/`prio` and the
//!   `red … ecn` qdisc of each band. The per-TC ECN marks and WRED (early)
//!   drops exist only here, as the red qdisc's `marked` and `early`.
//! - `dcb pfc show dev swpN`: PFC enabled per priority (and, with `-s`, the
//!   PFC frames sent and received as `requests` and `indications`).
//!
//! It knows text formats and command lines, not who produced the text; it
//! never imports `emu`. A counter the tool does not print yields no
//! [`Reading`] (not a zero); names this module does not know are skipped.

use serde::Deserialize;

use crate::counters::{value as counter_value, Canonical, ParseError, Reading};

/// mlxsw maps qdisc band `b` of a root `prio` or `ets` to traffic class
/// `7 - b` (`MLXSW_SP_PRIO_BAND_TO_TCLASS` in `spectrum_qdisc.c`); band `b`
/// is class `<major>:<b + 1>`. So class `1:1` feeds TC 7 and `1:8` TC 0.
pub fn band_to_tc(band: u8) -> Option<u8> {
    7u8.checked_sub(band)
}

/// Inverse of [`band_to_tc`].
pub fn tc_to_band(tc: u8) -> Option<u8> {
    7u8.checked_sub(tc)
}

/// The command lines the sampler runs on a switch port, each as argv.
///
/// `ip` gets `-s` twice because only the second one prints `carrier_changes`
/// (iproute2 `print_link_stats64`), and `tc` gets `-d` because red's
/// `probability` is printed only with details (`red_print_opt`).
pub fn sample_argv(port: &str) -> Vec<Vec<String>> {
    let argv = |words: &[&str]| -> Vec<String> {
        words
            .iter()
            .map(|w| w.to_string())
            .chain(std::iter::once(port.to_string()))
            .collect()
    };
    vec![
        argv(&["ethtool", "-S"]),
        argv(&["ip", "-s", "-s", "-j", "link", "show", "dev"]),
        argv(&["tc", "-s", "-d", "qdisc", "show", "dev"]),
    ]
}

fn err(tool: &str, reason: impl std::fmt::Display) -> ParseError {
    ParseError(format!("{tool}: {reason}"))
}

// ---------------------------------------------------------------- ethtool -S

/// Port-wide mlxsw counters and their canonical names. The RFC 3635
/// duplicates of the 802.3 error counters (`dot3stats_fcs_errors`,
/// `dot3stats_symbol_errors`) read the same hardware counter and are left
/// out so a delta is not counted twice.
const ETHTOOL_PORT: &[(&str, Canonical)] = &[
    ("a_octets_received_ok", Canonical::RxBytes),
    ("a_octets_transmitted_ok", Canonical::TxBytes),
    ("a_frames_received_ok", Canonical::RxPackets),
    ("a_frames_transmitted_ok", Canonical::TxPackets),
    ("a_frame_check_sequence_errors", Canonical::CrcErrors),
    ("a_symbol_error_during_carrier", Canonical::SymbolErrors),
    ("ecn_marked", Canonical::EcnMarked),
    ("if_in_discards", Canonical::Discards),
    ("if_out_discards", Canonical::Drops),
];

/// Per-priority groups: `<stem>_N`, N = 0..7.
const ETHTOOL_PRIO: &[(&str, Canonical)] = &[
    ("rx_octets_prio", Canonical::RxBytes),
    ("tx_octets_prio", Canonical::TxBytes),
    ("rx_frames_prio", Canonical::RxPackets),
    ("tx_frames_prio", Canonical::TxPackets),
    ("rx_pause_prio", Canonical::PfcPauseRx),
    ("tx_pause_prio", Canonical::PfcPauseTx),
    ("rx_pause_duration_prio", Canonical::PfcPauseDurationRxUs),
    ("tx_pause_duration_prio", Canonical::PfcPauseDurationTxUs),
];

/// Per-TC groups: `<stem>_N`, N = 0..15. `tc_transmit_queue_tc_N` is left
/// out on purpose: it is the queue's depth at the moment of reading, not a
/// peak, so it is not a [`Canonical::BufferWatermark`] (the peak is in
/// `devlink sb occupancy`).
const ETHTOOL_TC: &[(&str, Canonical)] = &[("tc_no_buffer_discard_uc_tc", Canonical::Drops)];

/// Splits `rx_pause_prio_3` into (`rx_pause_prio`, 3).
fn split_index(name: &str) -> Option<(&str, u8)> {
    let (stem, idx) = name.rsplit_once('_')?;
    if idx.is_empty() || !idx.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((stem, idx.parse().ok()?))
}

fn ethtool_reading(name: &str, value: u64) -> Option<Reading> {
    if let Some((_, c)) = ETHTOOL_PORT.iter().find(|(n, _)| *n == name) {
        return Some(Reading::new(*c, name, value));
    }
    let (stem, idx) = split_index(name)?;
    if let Some((_, c)) = ETHTOOL_PRIO.iter().find(|(n, _)| *n == stem) {
        return (idx < 8).then(|| Reading {
            priority: Some(idx),
            ..Reading::new(*c, name, value)
        });
    }
    if let Some((_, c)) = ETHTOOL_TC.iter().find(|(n, _)| *n == stem) {
        return (idx < 16).then(|| Reading {
            queue: Some(idx),
            ..Reading::new(*c, name, value)
        });
    }
    None
}

/// Parses `ethtool -S <port>`: a `NIC statistics:` line, then one
/// `     name: value` line per counter. Every line must have that shape (a
/// cut line is an error), but names other than mlxsw's are skipped, so a
/// veth's or an mlx5's output parses to the readings it shares with mlxsw.
pub fn parse_ethtool_stats(text: &str) -> Result<Vec<Reading>, ParseError> {
    const TOOL: &str = "ethtool -S";
    let mut lines = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty());
    match lines.next() {
        Some((_, l)) if l.trim_end() == "NIC statistics:" => {}
        Some((i, l)) => {
            return Err(err(
                TOOL,
                format!(
                    "line {}: expected `NIC statistics:`, got `{}`",
                    i + 1,
                    l.trim()
                ),
            ))
        }
        None => return Err(err(TOOL, "empty output")),
    }
    let mut out = Vec::new();
    for (i, line) in lines {
        let (name, value) = line.trim().rsplit_once(':').ok_or_else(|| {
            err(
                TOOL,
                format!(
                    "line {}: expected `name: value`, got `{}`",
                    i + 1,
                    line.trim()
                ),
            )
        })?;
        // The context is built only for an error: this runs per line of
        // every port's snapshot.
        let value = match crate::plausible::counter(value) {
            Ok(v) => v,
            Err(_) => counter_value(TOOL, &format!("line {} ({})", i + 1, name.trim()), value)?,
        };
        if let Some(r) = ethtool_reading(name.trim(), value) {
            out.push(r);
        }
    }
    Ok(out)
}

// ------------------------------------------------------------ ip -s -j link

/// One interface of `ip [-s [-s]] -j link show`.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct LinkInfo {
    pub ifname: String,
    /// RFC 2863 state as `ip` prints it: `UP`, `DOWN`, `LOWERLAYERDOWN`, `UNKNOWN`.
    pub operstate: String,
    /// `UP` in `flags`: administratively up (`ip link set … up`).
    pub admin_up: bool,
    /// `LOWER_UP` in `flags`: the driver has carrier.
    pub lower_up: bool,
    pub mtu: Option<u32>,
    /// Empty without `-s`.
    pub readings: Vec<Reading>,
}

#[derive(Deserialize)]
struct IpLink {
    ifname: String,
    #[serde(default)]
    flags: Vec<String>,
    mtu: Option<u32>,
    operstate: Option<String>,
    stats64: Option<IpStats>,
    /// Kernels without 64-bit stats (`print_link_stats32`).
    stats: Option<IpStats>,
}

#[derive(Deserialize)]
struct IpStats {
    rx: IpDir,
    tx: IpDir,
}

#[derive(Deserialize)]
struct IpDir {
    bytes: Option<u64>,
    packets: Option<u64>,
    dropped: Option<u64>,
    /// rx only, second `-s` only.
    crc_errors: Option<u64>,
    /// tx only, second `-s` only.
    carrier_changes: Option<u64>,
}

impl IpStats {
    fn readings(&self) -> Vec<Reading> {
        let fields = [
            (Canonical::RxBytes, "rx.bytes", self.rx.bytes),
            (Canonical::TxBytes, "tx.bytes", self.tx.bytes),
            (Canonical::RxPackets, "rx.packets", self.rx.packets),
            (Canonical::TxPackets, "tx.packets", self.tx.packets),
            (Canonical::Drops, "rx.dropped", self.rx.dropped),
            (Canonical::Drops, "tx.dropped", self.tx.dropped),
            (Canonical::CrcErrors, "rx.crc_errors", self.rx.crc_errors),
            // A flap is two carrier changes (down, then up) and a port that
            // came up once has one, so half the count, rounded down, moves
            // by exactly one per link-down event whether the port is read
            // while up or while down.
            (
                Canonical::LinkDown,
                "tx.carrier_changes/2",
                self.tx.carrier_changes.map(|c| c / 2),
            ),
        ];
        fields
            .into_iter()
            .filter_map(|(c, name, v)| v.map(|v| Reading::new(c, name, v)))
            .collect()
    }
}

/// Parses `ip -j link show` with zero, one or two `-s`, for one interface
/// (`dev X`) or all of them. `ip -j` prints one JSON array of objects.
pub fn parse_ip_link_json(text: &str) -> Result<Vec<LinkInfo>, ParseError> {
    const TOOL: &str = "ip -j link show";
    if text.trim().is_empty() {
        return Err(err(TOOL, "empty output"));
    }
    let links: Vec<IpLink> = serde_json::from_str(text)
        .map_err(|e| err(TOOL, format!("not the JSON `ip -j` prints: {e}")))?;
    Ok(links
        .into_iter()
        .map(|l| {
            let has = |f: &str| l.flags.iter().any(|x| x == f);
            LinkInfo {
                admin_up: has("UP"),
                lower_up: has("LOWER_UP"),
                operstate: l.operstate.clone().unwrap_or_else(|| "UNKNOWN".into()),
                mtu: l.mtu,
                readings: l
                    .stats64
                    .as_ref()
                    .or(l.stats.as_ref())
                    .map(IpStats::readings)
                    .unwrap_or_default(),
                ifname: l.ifname,
            }
        })
        .collect())
}

// ----------------------------------------------------------- dcb pfc show

/// `dcb [-s] pfc show dev X`. Each field is `None` where the output did not
/// print it (`requests` and `indications` only come with `-s` or when asked).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct PfcConfig {
    pub pfc_cap: Option<u8>,
    pub macsec_bypass: Option<bool>,
    /// Allowance for the link's round-trip delay, in bit times.
    pub delay: Option<u16>,
    pub prio_pfc: [Option<bool>; 8],
    /// PFC frames sent, per priority.
    pub requests: [Option<u64>; 8],
    /// PFC frames received, per priority.
    pub indications: [Option<u64>; 8],
}

impl PfcConfig {
    /// The priorities PFC is on for.
    pub fn enabled(&self) -> Vec<u8> {
        (0u8..8)
            .filter(|&p| self.prio_pfc[usize::from(p)] == Some(true))
            .collect()
    }

    /// `requests` as PFC frames sent and `indications` as received, per
    /// priority (mlxsw fills them from the same PPCNT counters as
    /// `tx_pause_prio_N` and `rx_pause_prio_N`).
    pub fn readings(&self) -> Vec<Reading> {
        let mut out = Vec::new();
        for (canonical, vendor, values) in [
            (Canonical::PfcPauseTx, "requests", &self.requests),
            (Canonical::PfcPauseRx, "indications", &self.indications),
        ] {
            for (p, v) in values.iter().enumerate() {
                if let Some(v) = v {
                    out.push(Reading {
                        priority: Some(p as u8),
                        ..Reading::new(canonical, vendor, *v)
                    });
                }
            }
        }
        out
    }
}

fn dcb_array<'a, T>(
    key: &str,
    tokens: &mut std::iter::Peekable<impl Iterator<Item = &'a str>>,
    parse: impl Fn(&str) -> Option<T>,
) -> Result<[Option<T>; 8], ParseError> {
    let mut arr: [Option<T>; 8] = Default::default();
    while let Some(tok) = tokens.peek() {
        let Some((idx, val)) = tok.split_once(':') else {
            break;
        };
        let bad = || err("dcb pfc show", format!("{key}: bad entry `{tok}`"));
        let idx: usize = idx.parse().map_err(|_| bad())?;
        let slot = arr.get_mut(idx).ok_or_else(bad)?;
        *slot = Some(parse(val).ok_or_else(bad)?);
        tokens.next();
    }
    Ok(arr)
}

fn on_off(s: &str) -> Option<bool> {
    match s {
        "on" => Some(true),
        "off" => Some(false),
        _ => None,
    }
}

/// Parses `dcb [-s] pfc show dev X` in its plain-text form
/// (`pfc-cap 8 macsec-bypass off delay 0`, `prio-pfc 0:off … 3:on …`).
pub fn parse_dcb_pfc(text: &str) -> Result<PfcConfig, ParseError> {
    const TOOL: &str = "dcb pfc show";
    let mut cfg = PfcConfig::default();
    let mut known = 0;
    let mut tokens = text.split_whitespace().peekable();
    while let Some(tok) = tokens.next() {
        let mut value = |what: &str| {
            tokens
                .next()
                .ok_or_else(|| err(TOOL, format!("`{what}` has no value")))
        };
        match tok {
            "pfc-cap" => {
                let v = value(tok)?;
                cfg.pfc_cap = Some(v.parse().map_err(|_| err(TOOL, format!("pfc-cap `{v}`")))?);
            }
            "macsec-bypass" => {
                let v = value(tok)?;
                cfg.macsec_bypass =
                    Some(on_off(v).ok_or_else(|| err(TOOL, format!("macsec-bypass `{v}`")))?);
            }
            "delay" => {
                let v = value(tok)?;
                cfg.delay = Some(v.parse().map_err(|_| err(TOOL, format!("delay `{v}`")))?);
            }
            "prio-pfc" => cfg.prio_pfc = dcb_array(tok, &mut tokens, on_off)?,
            "requests" => cfg.requests = dcb_array(tok, &mut tokens, |v| v.parse().ok())?,
            "indications" => cfg.indications = dcb_array(tok, &mut tokens, |v| v.parse().ok())?,
            _ => continue,
        }
        known += 1;
    }
    if known == 0 {
        return Err(err(TOOL, "no PFC attribute in the output"));
    }
    Ok(cfg)
}

// ---------------------------------------------------- tc -s -d qdisc show

/// One `red` qdisc of `tc [-s] [-d] qdisc show dev X`, with where it sits.
/// Sizes are as `tc` printed them: `sprint_size` rounds to `Kb`/`Mb` when
/// the value is within 16 bytes (or 1 KiB) of a multiple, so a parsed size
/// can differ from the configured one by that much.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct RedBand {
    /// `15:`.
    pub handle: String,
    /// `1:5`, or `root`.
    pub parent: String,
    /// Band of the root `ets`/`prio` this red is the child of (`parent`'s
    /// minor − 1); `None` when the parent is not the root `ets`/`prio`.
    pub band: Option<u8>,
    /// Traffic class mlxsw configures: `7 - band` (see [`band_to_tc`]); a
    /// root red configures TC 0 (`MLXSW_SP_PORT_DEFAULT_TCLASS`).
    pub tc: Option<u8>,
    /// Priorities the root's priomap sends to this band.
    pub priorities: Vec<u8>,
    pub limit_bytes: u64,
    pub min_bytes: u64,
    pub max_bytes: u64,
    /// Marking/drop probability at `max` (0..1); printed only with `-d`.
    pub probability: Option<f64>,
    pub ecn: bool,
    pub harddrop: bool,
    pub nodrop: bool,
    /// The driver took it into hardware.
    pub offloaded: bool,
    pub sent_bytes: Option<u64>,
    pub sent_packets: Option<u64>,
    pub dropped: Option<u64>,
    pub overlimits: Option<u64>,
    /// Packets ECN-marked (mlxsw: the TC's `ecn_marked_tc`).
    pub marked: Option<u64>,
    /// Early (WRED) drops.
    pub early: Option<u64>,
    /// Tail drops (mlxsw: the TC's no-buffer discards, unicast and multicast).
    pub pdrop: Option<u64>,
    pub other: Option<u64>,
}

impl RedBand {
    /// `marked` as per-queue ECN marks and `early` as per-queue drops. `pdrop`
    /// is left out: it is the same hardware counter as ethtool's
    /// `tc_no_buffer_discard_uc_tc_N`.
    pub fn readings(&self) -> Vec<Reading> {
        [
            (Canonical::EcnMarked, "red.marked", self.marked),
            (Canonical::Drops, "red.early", self.early),
        ]
        .into_iter()
        .filter_map(|(c, n, v)| {
            v.map(|v| Reading {
                queue: self.tc,
                ..Reading::new(c, n, v)
            })
        })
        .collect()
    }
}

/// Parses a size as `sprint_size` prints it: `400000b`, `500Kb`, `2Mb`, `1Gb`.
fn parse_size(s: &str) -> Option<u64> {
    let (num, mult) = if let Some(n) = s.strip_suffix("Gb") {
        (n, 1u64 << 30)
    } else if let Some(n) = s.strip_suffix("Mb") {
        (n, 1 << 20)
    } else if let Some(n) = s.strip_suffix("Kb") {
        (n, 1 << 10)
    } else {
        (s.strip_suffix('b')?, 1)
    };
    let v: f64 = num.parse().ok()?;
    (v.is_finite() && v >= 0.0 && v * (mult as f64) < 1.8e19)
        .then(|| (v * mult as f64).round() as u64)
}

/// A counter of `tc -s`: `None` when absent or not written as a number,
/// an error when written as a number that cannot be a counter.
fn counter_tok(name: &str, tok: Option<&str>) -> Result<Option<u64>, ParseError> {
    let Some(t) = tok.map(|t| t.trim_matches(|c| c == ',' || c == ')' || c == '(')) else {
        return Ok(None);
    };
    if !crate::plausible::looks_numeric(t) {
        return Ok(None);
    }
    counter_value("tc qdisc show", name, t).map(Some)
}

#[derive(Default)]
struct QdiscBlock {
    kind: String,
    handle: String,
    parent: String,
    offloaded: bool,
    /// Option tokens after the fixed header.
    options: Vec<String>,
    sent: Option<(u64, u64)>,
    dropped: Option<u64>,
    overlimits: Option<u64>,
    xstats: Vec<(String, u64)>,
}

fn parse_qdisc_header(line: &str) -> Result<QdiscBlock, ParseError> {
    const TOOL: &str = "tc qdisc show";
    let mut t = line.split_whitespace();
    t.next(); // "qdisc"
    let kind = t
        .next()
        .ok_or_else(|| err(TOOL, format!("`{line}` has no kind")))?;
    let handle = t
        .next()
        .ok_or_else(|| err(TOOL, format!("`{line}` has no handle")))?;
    if !handle.ends_with(':') {
        return Err(err(TOOL, format!("`{handle}` is not a qdisc handle")));
    }
    let mut b = QdiscBlock {
        kind: kind.to_string(),
        handle: handle.to_string(),
        ..Default::default()
    };
    let mut t = t.peekable();
    while let Some(&tok) = t.peek() {
        match tok {
            "root" => b.parent = "root".into(),
            "offloaded" => b.offloaded = true,
            "dev" | "parent" | "refcnt" | "ingress_block" | "egress_block" => {
                t.next();
                let v = t
                    .peek()
                    .ok_or_else(|| err(TOOL, format!("`{tok}` has no value in `{line}`")))?;
                if tok == "parent" {
                    b.parent = v.to_string();
                }
            }
            _ => break,
        }
        t.next();
    }
    b.options = t.map(str::to_string).collect();
    Ok(b)
}

fn parse_qdisc_stats(b: &mut QdiscBlock, line: &str) -> Result<(), ParseError> {
    let toks: Vec<&str> = line.split_whitespace().collect();
    let at = |i: usize| toks.get(i).copied();
    match toks.first() {
        // `Sent 0 bytes 0 pkt (dropped 0, overlimits 0 requeues 0)`; the
        // `Sent hardware …`/`Sent software …` lines of offloaded stats are
        // not the totals and are skipped.
        Some(&"Sent") if b.sent.is_none() => {
            let bytes = counter_tok("sent bytes", at(1))?;
            let pkts = counter_tok("sent packets", at(3))?;
            if let (Some(bytes), Some(pkts)) = (bytes, pkts) {
                b.sent = Some((bytes, pkts));
            }
            for (i, w) in toks.iter().enumerate() {
                match *w {
                    "(dropped" => b.dropped = counter_tok("dropped", at(i + 1))?,
                    "overlimits" => b.overlimits = counter_tok("overlimits", at(i + 1))?,
                    _ => {}
                }
            }
        }
        // red's xstats: `marked 0 early 0 pdrop 0 other 0`.
        Some(&"marked") => {
            for pair in toks.chunks(2) {
                if let [k, v] = pair {
                    if let Some(v) = counter_tok(k, Some(v))? {
                        b.xstats.push((k.to_string(), v));
                    }
                }
            }
        }
        _ => {}
    }
    Ok(())
}

fn parse_red(b: &QdiscBlock) -> Result<RedBand, ParseError> {
    const TOOL: &str = "tc qdisc show";
    let mut red = RedBand {
        handle: b.handle.clone(),
        parent: b.parent.clone(),
        band: None,
        tc: None,
        priorities: Vec::new(),
        limit_bytes: 0,
        min_bytes: 0,
        max_bytes: 0,
        probability: None,
        ecn: false,
        harddrop: false,
        nodrop: false,
        offloaded: b.offloaded,
        sent_bytes: b.sent.map(|s| s.0),
        sent_packets: b.sent.map(|s| s.1),
        dropped: b.dropped,
        overlimits: b.overlimits,
        marked: None,
        early: None,
        pdrop: None,
        other: None,
    };
    let (mut limit, mut min, mut max) = (None, None, None);
    let mut t = b.options.iter().map(String::as_str);
    while let Some(tok) = t.next() {
        let size = |v: Option<&str>| {
            let v =
                v.ok_or_else(|| err(TOOL, format!("red {}: `{tok}` has no value", b.handle)))?;
            parse_size(v).ok_or_else(|| err(TOOL, format!("red {}: `{v}` is not a size", b.handle)))
        };
        match tok {
            "limit" => limit = Some(size(t.next())?),
            "min" => min = Some(size(t.next())?),
            "max" => max = Some(size(t.next())?),
            "probability" => {
                let v = t.next().unwrap_or_default();
                red.probability = Some(
                    v.parse()
                        .map_err(|_| err(TOOL, format!("red {}: probability `{v}`", b.handle)))?,
                );
            }
            "ecn" => red.ecn = true,
            "harddrop" => red.harddrop = true,
            "nodrop" => red.nodrop = true,
            "ewma" | "Plog" | "Scell_log" => {
                t.next();
            }
            _ => {}
        }
    }
    match (limit, min, max) {
        (Some(l), Some(mi), Some(ma)) => {
            red.limit_bytes = l;
            red.min_bytes = mi;
            red.max_bytes = ma;
        }
        _ => {
            return Err(err(
                TOOL,
                format!("red {}: limit, min and max are not all there", b.handle),
            ))
        }
    }
    for (k, v) in &b.xstats {
        match k.as_str() {
            "marked" => red.marked = Some(*v),
            "early" => red.early = Some(*v),
            "pdrop" => red.pdrop = Some(*v),
            "other" => red.other = Some(*v),
            _ => {}
        }
    }
    Ok(red)
}

/// The root's priority → band map (`priomap` of `ets` and `prio`).
fn priomap(b: &QdiscBlock) -> Vec<u8> {
    b.options
        .iter()
        .skip_while(|t| *t != "priomap")
        .skip(1)
        .map_while(|t| t.parse().ok())
        .collect()
}

/// Parses `tc [-s] [-d] qdisc show dev X` and returns its `red` qdiscs,
/// each placed on its band and traffic class when it hangs off the root
/// `ets` or `prio`. Other qdiscs are read only for the root's priomap.
pub fn parse_tc_qdisc(text: &str) -> Result<Vec<RedBand>, ParseError> {
    const TOOL: &str = "tc qdisc show";
    let mut blocks: Vec<QdiscBlock> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.starts_with("qdisc ") {
            blocks.push(parse_qdisc_header(line)?);
        } else if line.trim().is_empty() {
            continue;
        } else if let Some(b) = blocks.last_mut() {
            parse_qdisc_stats(b, line)?;
        } else {
            return Err(err(
                TOOL,
                format!(
                    "line {}: expected a `qdisc` line, got `{}`",
                    i + 1,
                    line.trim()
                ),
            ));
        }
    }
    if blocks.is_empty() {
        return Err(err(TOOL, "no qdisc in the output"));
    }
    let root = blocks
        .iter()
        .find(|b| b.parent == "root" && (b.kind == "ets" || b.kind == "prio"));
    let root_major = root.map(|r| r.handle.trim_end_matches(':').to_string());
    let map = root.map(priomap).unwrap_or_default();
    let mut out = Vec::new();
    for b in blocks.iter().filter(|b| b.kind == "red") {
        let mut red = parse_red(b)?;
        if red.parent == "root" {
            red.tc = Some(0);
        } else if let (Some(major), Some((pmaj, pmin))) = (&root_major, red.parent.split_once(':'))
        {
            if pmaj == major {
                red.band = u8::from_str_radix(pmin, 16)
                    .ok()
                    .and_then(|m| m.checked_sub(1));
                red.tc = red.band.and_then(band_to_tc);
                if let Some(band) = red.band {
                    red.priorities = map
                        .iter()
                        .take(8)
                        .enumerate()
                        .filter(|(_, &b)| b == band)
                        .map(|(p, _)| p as u8)
                        .collect();
                }
            }
        }
        out.push(red);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIX: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/switch_linux/");

    fn fixture(name: &str) -> String {
        std::fs::read_to_string(format!("{FIX}{name}")).unwrap()
    }

    fn value(rs: &[Reading], vendor: &str) -> Option<u64> {
        rs.iter().find(|r| r.vendor == vendor).map(|r| r.value)
    }

    #[test]
    fn band_and_tc_are_mirror_images() {
        assert_eq!(band_to_tc(0), Some(7));
        assert_eq!(band_to_tc(7), Some(0));
        assert_eq!(band_to_tc(8), None);
        for tc in 0..8 {
            assert_eq!(tc_to_band(tc).and_then(band_to_tc), Some(tc));
        }
    }

    #[test]
    fn sample_argv_reads_counters_carrier_changes_and_red_stats() {
        let argv = sample_argv("swp7");
        assert_eq!(argv[0], ["ethtool", "-S", "swp7"]);
        assert_eq!(
            argv[1],
            ["ip", "-s", "-s", "-j", "link", "show", "dev", "swp7"]
        );
        assert_eq!(argv[2], ["tc", "-s", "-d", "qdisc", "show", "dev", "swp7"]);
    }

    #[test]
    fn ethtool_mlxsw_swp31_fixture() {
        let rs = parse_ethtool_stats(&fixture("ethtool-S-mlxsw-swp31-spectrum.txt")).unwrap();
        assert_eq!(
            value(&rs, "a_octets_transmitted_ok"),
            Some(239_880_508_419_557)
        );
        assert_eq!(value(&rs, "a_frames_received_ok"), Some(63_917_145_378));
        assert_eq!(value(&rs, "ecn_marked"), Some(10));
        let tx4 = rs.iter().find(|r| r.vendor == "tx_octets_prio_4").unwrap();
        assert_eq!(
            (tx4.canonical, tx4.priority, tx4.value),
            (Canonical::TxBytes, Some(4), 221_347_838_755_116)
        );
        // 16 TCs of no-buffer discards, 8 priorities × 8 per-priority counters.
        let drops: Vec<_> = rs
            .iter()
            .filter(|r| r.canonical == Canonical::Drops && r.queue.is_some())
            .collect();
        assert_eq!(drops.len(), 16);
        assert_eq!(drops[15].queue, Some(15));
        assert_eq!(rs.iter().filter(|r| r.priority.is_some()).count(), 64);
        assert!(rs
            .iter()
            .all(|r| !r.vendor.starts_with("tc_transmit_queue")));
    }

    #[test]
    fn ethtool_veth_fixture_has_no_mlxsw_counter() {
        let rs = parse_ethtool_stats(&fixture("ethtool-S-veth.txt")).unwrap();
        assert!(rs.is_empty(), "{rs:?}");
    }

    #[test]
    fn ethtool_rejects_other_text() {
        assert!(parse_ethtool_stats("").is_err());
        assert!(parse_ethtool_stats("no stats available\n").is_err());
        assert!(parse_ethtool_stats("NIC statistics:\n     rx_pause_pr").is_err());
        assert!(parse_ethtool_stats("NIC statistics:\n     ecn_marked: x\n").is_err());
    }

    #[test]
    fn ip_lab_fixture_two_s() {
        let links = parse_ip_link_json(&fixture("ip-s-s-j-link-show-veth.json")).unwrap();
        assert_eq!(links.len(), 1);
        let l = &links[0];
        assert_eq!((l.ifname.as_str(), l.operstate.as_str()), ("va", "UP"));
        assert!(l.admin_up && l.lower_up);
        assert_eq!(l.mtu, Some(1500));
        assert_eq!(value(&l.readings, "tx.bytes"), Some(10_586_746_333));
        assert_eq!(value(&l.readings, "rx.packets"), Some(184_168));
        assert_eq!(value(&l.readings, "rx.crc_errors"), Some(0));
        // carrier_changes 2 → one link-down in the /2 convention.
        assert_eq!(value(&l.readings, "tx.carrier_changes/2"), Some(1));
    }

    #[test]
    fn ip_one_s_has_no_carrier_changes() {
        let links = parse_ip_link_json(&fixture("ip-s-j-link-show-dev-veth-up.json")).unwrap();
        let l = &links[0];
        assert_eq!(value(&l.readings, "rx.bytes"), Some(266));
        assert!(l
            .readings
            .iter()
            .all(|r| r.canonical != Canonical::LinkDown));
        assert!(l
            .readings
            .iter()
            .all(|r| r.canonical != Canonical::CrcErrors));
    }

    #[test]
    fn ip_no_carrier_and_admin_down() {
        let nc =
            &parse_ip_link_json(&fixture("ip-s-j-link-show-dev-veth-nocarrier.json")).unwrap()[0];
        assert!(nc.admin_up && !nc.lower_up);
        assert_eq!(nc.operstate, "LOWERLAYERDOWN");
        let down =
            &parse_ip_link_json(&fixture("ip-s-j-link-show-dev-veth-admindown.json")).unwrap()[0];
        assert!(!down.admin_up && !down.lower_up);
        assert_eq!(down.operstate, "DOWN");
        let ss =
            &parse_ip_link_json(&fixture("ip-s-s-j-link-show-dev-veth-admindown.json")).unwrap()[0];
        assert_eq!(value(&ss.readings, "tx.carrier_changes/2"), Some(1));
    }

    #[test]
    fn ip_rejects_other_text() {
        assert!(parse_ip_link_json("").is_err());
        assert!(parse_ip_link_json("Device \"swp9\" does not exist.\n").is_err());
        assert!(parse_ip_link_json("{\"ifname\":\"swp1\"}").is_err());
        assert!(parse_ip_link_json("[{\"ifindex\":3}]").is_err());
        assert_eq!(parse_ip_link_json("[]\n").unwrap(), vec![]);
    }

    #[test]
    fn dcb_kernel_doc_fixtures() {
        let cfg = parse_dcb_pfc(&fixture("dcb-pfc-show-kernel-doc-prio6-7.txt")).unwrap();
        assert_eq!(cfg.pfc_cap, Some(8));
        assert_eq!(cfg.macsec_bypass, Some(false));
        assert_eq!(cfg.delay, Some(4096));
        assert_eq!(cfg.enabled(), vec![6, 7]);
        assert_eq!(cfg.prio_pfc[0], Some(false));
        let st =
            parse_dcb_pfc(&fixture("dcb-pfc-show-requests-indications-kernel-doc.txt")).unwrap();
        assert_eq!(st.requests[3], Some(1024));
        assert_eq!(st.indications[4], Some(4096));
        assert_eq!(st.prio_pfc, [None; 8]);
        let rs = st.readings();
        assert_eq!(rs.len(), 16);
        let tx4 = rs
            .iter()
            .find(|r| r.canonical == Canonical::PfcPauseTx && r.priority == Some(4))
            .unwrap();
        assert_eq!(tx4.value, 2048);
    }

    #[test]
    fn dcb_rejects_errors_and_bad_entries() {
        assert!(parse_dcb_pfc(&fixture("dcb-pfc-show-dev-veth-unsupported.stderr.txt")).is_err());
        assert!(parse_dcb_pfc("").is_err());
        assert!(parse_dcb_pfc("prio-pfc 0:off 9:on").is_err());
        assert!(parse_dcb_pfc("prio-pfc 0:maybe").is_err());
        assert!(parse_dcb_pfc("pfc-cap").is_err());
    }

    #[test]
    fn tc_htb_fixture_has_no_red() {
        assert_eq!(
            parse_tc_qdisc(&fixture("tc-s-qdisc-show-dev-veth-htb.txt")).unwrap(),
            vec![]
        );
    }

    // The layout of `red_print_opt`/`red_print_xstats` and
    // `print_tcstats2_attr` in iproute2 (tc/q_red.c, tc/tc_util.c), with the
    // root and band layout mlxsw offloads.
    const ETS_RED: &str = "qdisc ets 1: root refcnt 2 offloaded bands 8 strict 8 priomap 7 6 5 4 3 2 1 0 7 7 7 7 7 7 7 7 \n Sent 1000 bytes 10 pkt (dropped 3, overlimits 0 requeues 0) \n backlog 0b 0p requeues 0\nqdisc red 15: parent 1:5 offloaded limit 2Mb min 500Kb max 1536Kb ecn ewma 3 probability 0.1 Scell_log 13\n Sent 700 bytes 7 pkt (dropped 3, overlimits 9 requeues 0) \n backlog 0b 0p requeues 0\n  marked 9 early 0 pdrop 3 other 0 \n";

    #[test]
    fn tc_ets_red_layout() {
        let reds = parse_tc_qdisc(ETS_RED).unwrap();
        assert_eq!(reds.len(), 1);
        let r = &reds[0];
        assert_eq!((r.handle.as_str(), r.parent.as_str()), ("15:", "1:5"));
        assert_eq!(
            (r.band, r.tc, r.priorities.clone()),
            (Some(4), Some(3), vec![3])
        );
        assert_eq!(
            (r.limit_bytes, r.min_bytes, r.max_bytes),
            (2 << 20, 500 << 10, 1536 << 10)
        );
        assert_eq!(r.probability, Some(0.1));
        assert!(r.ecn && r.offloaded && !r.nodrop);
        assert_eq!(
            (r.sent_bytes, r.dropped, r.overlimits),
            (Some(700), Some(3), Some(9))
        );
        assert_eq!(
            (r.marked, r.early, r.pdrop, r.other),
            (Some(9), Some(0), Some(3), Some(0))
        );
        let rs = r.readings();
        assert_eq!(rs[0].canonical, Canonical::EcnMarked);
        assert_eq!((rs[0].queue, rs[0].value), (Some(3), 9));
    }

    #[test]
    fn tc_rejects_other_text() {
        assert!(parse_tc_qdisc("").is_err());
        assert!(parse_tc_qdisc("Cannot find device \"swp9\"\n").is_err());
        assert!(parse_tc_qdisc("qdisc red\n").is_err());
        assert!(parse_tc_qdisc("qdisc red 15: parent 1:5 limit 2Mb min 500Kb\n").is_err());
        assert!(parse_tc_qdisc("qdisc red 15: parent 1:5 limit 2Mb min 500Kb max lots\n").is_err());
    }

    #[test]
    fn sizes_parse_as_sprint_size_prints_them() {
        assert_eq!(parse_size("30000b"), Some(30000));
        assert_eq!(parse_size("512Kb"), Some(524_288));
        assert_eq!(parse_size("1Mb"), Some(1 << 20));
        assert_eq!(parse_size("1e+06Kb"), Some(1_024_000_000));
        assert_eq!(parse_size("4Gb"), Some(4 << 30));
        assert_eq!(parse_size("lots"), None);
        assert_eq!(parse_size("-1b"), None);
    }
}
