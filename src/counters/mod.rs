//! Counters read from hosts and switches through the transport, parsed like
//! any other tool output into one canonical vocabulary, with the vendor's own
//! name kept beside it. This module knows command lines and text formats; it
//! knows nothing about how the text was produced (a real NIC or the emulated
//! fabric) and never imports `emu`.
//!
//! Counter sets differ by NIC, driver, kernel and NOS, so nothing here assumes
//! a fixed key set: a counter a source does not print is "not available",
//! which is different from zero.
//!
//! Every source prints counters as unsigned 64-bit decimals. A counter this
//! module knows whose value is written as a number but cannot be one
//! (negative, fractional, above 2^64 − 1, `nan`) makes the source's output an
//! error naming the counter and the reason ([`value`]): such text is damaged,
//! and reading it as zero or leaving the counter out would hide that.

use serde::{Deserialize, Serialize};

pub mod delta;
pub mod formats;
pub mod host;
pub mod host_cfg;
pub mod host_nic;
pub mod ledger;
pub mod optics;

/// The canonical counter names. Per-priority and per-queue counters carry the
/// priority or queue in [`Reading`], not in the name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Canonical {
    RxBytes,
    TxBytes,
    RxPackets,
    TxPackets,
    /// PFC pause frames received (per priority).
    PfcPauseRx,
    /// PFC pause frames sent (per priority).
    PfcPauseTx,
    /// Microseconds paused by received pause frames (per priority).
    PfcPauseDurationRxUs,
    PfcPauseDurationTxUs,
    /// Packets ECN-marked (by a switch queue, or received marked by a NIC).
    EcnMarked,
    CnpSent,
    CnpHandled,
    /// Packets dropped (per queue when the source says which).
    Drops,
    /// Received packets discarded by the port for lack of buffer.
    Discards,
    CrcErrors,
    SymbolErrors,
    FecCorrected,
    FecUncorrected,
    LinkDown,
    OutOfSequence,
    PacketSeqErr,
    LocalAckTimeout,
    Retransmits,
    /// Peak buffer occupancy in bytes (per queue); a gauge, not a counter.
    BufferWatermark,
    /// PFC storms a switch's PFC watchdog detected on a lossless queue (per
    /// queue): the queue was held paused longer than the watchdog's
    /// detection time (SONiC `pfcwd show stats`, STORM DETECTED).
    PfcStormDetected,
}

impl Canonical {
    pub fn name(self) -> &'static str {
        match self {
            Canonical::RxBytes => "rx_bytes",
            Canonical::TxBytes => "tx_bytes",
            Canonical::RxPackets => "rx_packets",
            Canonical::TxPackets => "tx_packets",
            Canonical::PfcPauseRx => "pfc_pause_rx",
            Canonical::PfcPauseTx => "pfc_pause_tx",
            Canonical::PfcPauseDurationRxUs => "pfc_pause_duration_rx_us",
            Canonical::PfcPauseDurationTxUs => "pfc_pause_duration_tx_us",
            Canonical::EcnMarked => "ecn_marked",
            Canonical::CnpSent => "cnp_sent",
            Canonical::CnpHandled => "cnp_handled",
            Canonical::Drops => "drops",
            Canonical::Discards => "discards",
            Canonical::CrcErrors => "crc_errors",
            Canonical::SymbolErrors => "symbol_errors",
            Canonical::FecCorrected => "fec_corrected",
            Canonical::FecUncorrected => "fec_uncorrected",
            Canonical::LinkDown => "link_down",
            Canonical::OutOfSequence => "out_of_sequence",
            Canonical::PacketSeqErr => "packet_seq_err",
            Canonical::LocalAckTimeout => "local_ack_timeout",
            Canonical::Retransmits => "retransmits",
            Canonical::BufferWatermark => "buffer_watermark",
            Canonical::PfcStormDetected => "pfc_storm_detected",
        }
    }

    /// Gauges are not differenced.
    pub fn is_gauge(self) -> bool {
        matches!(self, Canonical::BufferWatermark)
    }
}

/// One counter value as a source printed it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Reading {
    pub canonical: Canonical,
    /// The name the tool printed (`rx_prio3_pause`, `np_cnp_sent`).
    pub vendor: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<u8>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue: Option<u8>,
    pub value: u64,
    /// Width of the hardware counter when it is narrower than 64 bits: such a
    /// counter stops at `2^bits - 1` (IB PMA counters saturate, they do not wrap).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bits: Option<u8>,
}

impl Reading {
    /// A counter of the whole port: no priority, no queue, full width.
    pub fn new(canonical: Canonical, vendor: &str, value: u64) -> Reading {
        Reading {
            canonical,
            vendor: vendor.to_string(),
            priority: None,
            queue: None,
            value,
            bits: None,
        }
    }
}

/// Every reading of one source on one device at one time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Snapshot {
    /// Inventory name of the node or switch.
    pub host: String,
    /// Netdev, RDMA device or switch port.
    pub device: String,
    /// The command that produced it (`ethtool -S`, `sysfs`).
    pub source: String,
    /// Seconds since the run started (virtual on the emulated fabric).
    pub t_s: f64,
    pub readings: Vec<Reading>,
}

/// The counters one port, NIC or queue table row printed, as a parser read
/// them: known names as [`Reading`]s, a known counter printed as `N/A` (or
/// `--`, `n/a`) in `not_available` (absent, never zero), and the numbers the
/// canonical vocabulary has no name for in `other`, under the tool's label.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct PortReadings {
    pub port: String,
    pub readings: Vec<Reading>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub not_available: Vec<String>,
    #[serde(skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub other: std::collections::BTreeMap<String, u64>,
}

impl PortReadings {
    pub fn new(port: &str) -> PortReadings {
        PortReadings {
            port: port.to_string(),
            ..Default::default()
        }
    }
}

/// Adds `readings` to the entry for `port` in `ports`, keeping the order in
/// which ports first appeared (a table printed in two halves, Rx then Tx,
/// becomes one entry per port).
pub fn port_entry<'a>(ports: &'a mut Vec<PortReadings>, port: &str) -> &'a mut PortReadings {
    let i = match ports.iter().position(|p| p.port == port) {
        Some(i) => i,
        None => {
            ports.push(PortReadings::new(port));
            ports.len() - 1
        }
    };
    &mut ports[i]
}

/// Reads a counter cell as switch CLIs print it: `N/A`, `n/a` and `--` are
/// "not available" (`None`); thousands separators (`1,200`) are accepted
/// only in groups of three; anything else goes through [`value`].
pub fn cell(tool: &str, name: &str, tok: &str) -> Result<Option<u64>, ParseError> {
    let t = tok.trim();
    if matches!(t, "N/A" | "n/a" | "NA" | "--" | "-") {
        return Ok(None);
    }
    if t.contains(',') {
        let groups: Vec<&str> = t.split(',').collect();
        let ok = groups[0].len() <= 3
            && !groups[0].is_empty()
            && groups[1..].iter().all(|g| g.len() == 3)
            && groups.iter().all(|g| g.bytes().all(|b| b.is_ascii_digit()));
        if !ok {
            return Err(ParseError(format!(
                "{tool}: {name}: `{t}` is not a possible counter value (misplaced thousands separator); the output is damaged"
            )));
        }
        return value(tool, name, &t.replace(',', "")).map(Some);
    }
    value(tool, name, t).map(Some)
}

/// A short quote of the first non-blank line of `text`, for error messages.
pub fn first_line(text: &str) -> String {
    match text.lines().map(str::trim).find(|l| !l.is_empty()) {
        None => "empty output".into(),
        Some(l) => {
            let short: String = l.chars().take(60).collect();
            if short.len() < l.len() {
                format!("{short:?}…")
            } else {
                format!("{short:?}")
            }
        }
    }
}

/// Why a tool's output could not be read as counters.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ParseError(pub String);

/// Reads the value `tok` of counter `name` printed by `tool` (see
/// [`crate::plausible::counter`]); the error names both and says why.
pub fn value(tool: &str, name: &str, tok: &str) -> Result<u64, ParseError> {
    crate::plausible::counter(tok).map_err(|why| {
        ParseError(format!(
            "{tool}: {name}: `{}` is not a possible counter value ({why}); the output is damaged",
            tok.trim()
        ))
    })
}
