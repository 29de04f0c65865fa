//! The `sonic` platform (SONiC over ssh: [`platform`], faults in
//! [`fault`], the audit's reads in [`config`]) and the SONiC CLI output
//! parsers it reads counters with (`show pfc counters`, `show queue
//! counters`, `show queue wredcounters`, the watermark views, `pfcwd show
//! stats`, `show interfaces counters`, `show interfaces flap`), which
//! `rocegate parse` also offers (all but the wred and flap views). The tables are
//! `tabulate` output (see [`super::table`]); values may carry thousands
//! separators (`1,200`) and `N/A` means the counter is not available,
//! never zero.

use serde::Serialize;

pub mod config;
pub mod fault;
pub mod platform;

pub use platform::Sonic;

use super::table::{ruled_tables, Table};
use crate::counters::{cell, first_line, port_entry, Canonical, ParseError, PortReadings, Reading};

fn err(tool: &str, reason: impl std::fmt::Display) -> ParseError {
    ParseError(format!("{tool}: {reason}"))
}

/// The tables whose first header cell is `first` (`Port Rx`, `Port`), or an
/// error quoting the text when there is none.
fn tables(tool: &str, text: &str, first: &[&str]) -> Result<Vec<Table>, ParseError> {
    let found: Vec<Table> = ruled_tables(text)
        .into_iter()
        .filter(|t| {
            t.header
                .first()
                .is_some_and(|h| first.contains(&h.as_str()))
        })
        .collect();
    if found.is_empty() {
        return Err(err(
            tool,
            format!(
                "no table headed {} in {}",
                first.join(" or "),
                first_line(text)
            ),
        ));
    }
    Ok(found)
}

/// The row's cell `i`, or an error naming the line when it is empty (a
/// truncated row).
fn at<'a>(
    tool: &str,
    line: usize,
    row: &'a [String],
    i: usize,
    name: &str,
) -> Result<&'a str, ParseError> {
    match row.get(i).map(String::as_str) {
        Some(c) if !c.is_empty() => Ok(c),
        _ => Err(err(tool, format!("line {line}: no value under {name}"))),
    }
}

/// `PFC3` → 3, `UC7` → 7, `MC12` → 12, `ALL20` → 20, `PG0` → 0.
fn index(name: &str, prefixes: &[&str]) -> Option<u8> {
    prefixes
        .iter()
        .find_map(|p| name.strip_prefix(p))
        .and_then(|n| n.parse().ok())
}

/// Stores one cell: a reading, or the vendor name in `not_available`.
fn put(
    tool: &str,
    entry: &mut PortReadings,
    label: String,
    tok: &str,
    make: impl FnOnce(u64) -> Reading,
) -> Result<(), ParseError> {
    match cell(tool, &format!("{} {label}", entry.port), tok)? {
        Some(v) => entry.readings.push(make(v)),
        None => entry.not_available.push(label),
    }
    Ok(())
}

// ------------------------------------------------------------ show pfc counters

/// `show pfc counters`: a `Port Rx` table and a `Port Tx` table, PFC0–PFC7
/// columns; one entry per port with the received and sent pause frames per
/// priority. Multi-ASIC backplane ports (`Ethernet-BP256`) print `N/A`.
pub fn parse_pfc_counters(text: &str) -> Result<Vec<PortReadings>, ParseError> {
    const TOOL: &str = "show pfc counters";
    let mut ports = Vec::new();
    for t in tables(TOOL, text, &["Port Rx", "Port Tx"])? {
        let canonical = if t.header[0] == "Port Rx" {
            Canonical::PfcPauseRx
        } else {
            Canonical::PfcPauseTx
        };
        for (line, row) in &t.rows {
            let port = at(TOOL, *line, row, 0, &t.header[0])?;
            let entry = port_entry(&mut ports, port);
            for (i, h) in t.header.iter().enumerate().skip(1) {
                let Some(prio) = index(h, &["PFC"]).filter(|p| *p < 8) else {
                    continue;
                };
                let tok = at(TOOL, *line, row, i, h)?;
                let vendor = format!("{} {h}", t.header[0]);
                put(TOOL, entry, vendor.clone(), tok, |v| Reading {
                    priority: Some(prio),
                    ..Reading::new(canonical, &vendor, v)
                })?;
            }
        }
    }
    Ok(ports)
}

// ---------------------------------------------------------- show queue counters

/// `show queue counters [PORT]`: one row per port and queue (`UC0`–`UC9`
/// unicast, `MC10`–`MC19` multicast, `ALL20`… on platforms that count both
/// together). Packets and bytes sent become per-queue TxPackets/TxBytes,
/// dropped packets Drops; dropped bytes go to `other`. The queue number is
/// SONiC's queue index (the digits of the name).
pub fn parse_queue_counters(text: &str) -> Result<Vec<PortReadings>, ParseError> {
    queue_table(
        "show queue counters",
        text,
        &[
            ("Counter/pkts", Some(Canonical::TxPackets)),
            ("Counter/bytes", Some(Canonical::TxBytes)),
            ("Drop/pkts", Some(Canonical::Drops)),
            ("Drop/bytes", None),
        ],
    )
}

/// `show queue wredcounters [PORT]` (`wredstat -p PORT`; sonic-utilities
/// since February 2025, so absent from older images): one row per port and
/// queue like `show queue counters`. ECN-marked packets become per-queue
/// EcnMarked; the WRED drops and the byte columns go to `other` (the queue's
/// own Drop/pkts already counts what WRED dropped, so reading them as
/// Drops too would count those packets twice).
pub fn parse_wred_counters(text: &str) -> Result<Vec<PortReadings>, ParseError> {
    queue_table(
        "show queue wredcounters",
        text,
        &[
            ("EcnMarked/pkts", Some(Canonical::EcnMarked)),
            ("EcnMarked/bytes", None),
            ("WredDrp/pkts", None),
            ("WredDrp/bytes", None),
        ],
    )
}

/// A `Port`/`TxQ` table: the columns named in `columns` that the header
/// has, as readings of their canonical counter per queue, or in `other`.
fn queue_table(
    tool: &str,
    text: &str,
    columns: &[(&str, Option<Canonical>)],
) -> Result<Vec<PortReadings>, ParseError> {
    let mut ports = Vec::new();
    for t in tables(tool, text, &["Port"])? {
        let q = t
            .column("TxQ")
            .ok_or_else(|| err(tool, "no TxQ column in the header"))?;
        if !columns.iter().any(|(name, _)| t.column(name).is_some()) {
            return Err(err(
                tool,
                format!("none of the columns {} in the header", {
                    let names: Vec<&str> = columns.iter().map(|c| c.0).collect();
                    names.join(", ")
                }),
            ));
        }
        for (line, row) in &t.rows {
            let port = at(tool, *line, row, 0, "Port")?;
            let qname = at(tool, *line, row, q, "TxQ")?;
            let queue = index(qname, &["UC", "MC", "ALL"]).ok_or_else(|| {
                err(
                    tool,
                    format!("line {line}: queue `{qname}` is not UCn, MCn or ALLn"),
                )
            })?;
            let entry = port_entry(&mut ports, port);
            for &(name, canonical) in columns {
                let Some(i) = t.column(name) else { continue };
                let tok = at(tool, *line, row, i, name)?;
                let vendor = format!("{qname} {name}");
                match canonical {
                    Some(c) => put(tool, entry, vendor.clone(), tok, |v| Reading {
                        queue: Some(queue),
                        ..Reading::new(c, &vendor, v)
                    })?,
                    None => match cell(tool, &format!("{port} {vendor}"), tok)? {
                        Some(v) => {
                            entry.other.insert(vendor, v);
                        }
                        None => entry.not_available.push(vendor),
                    },
                }
            }
        }
    }
    Ok(ports)
}

// -------------------------------------------------------------- watermarks

/// `show priority-group watermark shared|headroom` and `show queue
/// watermark unicast|multicast|all` (text): one row per port, one column
/// per PG or queue, peak occupancy in bytes. A PG's index is carried in
/// `queue` (the vendor name, `PG3`, says which it is). On a multi-ASIC
/// switch each namespace's table follows the last row of the one before
/// under its own title (`… per unicast queue: (Namespace asic1)`), with no
/// blank line between; a title is the only line with a `:`.
pub fn parse_watermark(text: &str) -> Result<Vec<PortReadings>, ParseError> {
    const TOOL: &str = "show watermark";
    let mut ports = Vec::new();
    let text: String = text
        .lines()
        .map(|l| {
            if l.contains(':') {
                format!("\n{l}\n")
            } else {
                format!("{l}\n")
            }
        })
        .collect();
    for t in tables(TOOL, &text, &["Port"])? {
        for (line, row) in &t.rows {
            let port = at(TOOL, *line, row, 0, "Port")?;
            let entry = port_entry(&mut ports, port);
            for (i, h) in t.header.iter().enumerate().skip(1) {
                let Some(q) = index(h, &["PG", "UC", "MC", "ALL"]) else {
                    return Err(err(TOOL, format!("column `{h}` is not a PG or queue")));
                };
                let tok = at(TOOL, *line, row, i, h)?;
                put(TOOL, entry, h.clone(), tok, |v| Reading {
                    queue: Some(q),
                    ..Reading::new(Canonical::BufferWatermark, h, v)
                })?;
            }
        }
    }
    Ok(ports)
}

/// `show queue watermark … --json`: a list of objects, `"Port"` and one
/// string-typed number per queue (`"UC0": "2057328"`).
pub fn parse_watermark_json(text: &str) -> Result<Vec<PortReadings>, ParseError> {
    const TOOL: &str = "show watermark --json";
    let rows: Vec<serde_json::Map<String, serde_json::Value>> = serde_json::from_str(text)
        .map_err(|e| err(TOOL, format!("not a JSON list of objects: {e}")))?;
    let mut ports = Vec::new();
    for (n, row) in rows.iter().enumerate() {
        let port = row
            .get("Port")
            .and_then(|p| p.as_str())
            .ok_or_else(|| err(TOOL, format!("[{n}]: no \"Port\" string")))?;
        let entry = port_entry(&mut ports, port);
        for (k, v) in row.iter().filter(|(k, _)| k.as_str() != "Port") {
            let q = index(k, &["PG", "UC", "MC", "ALL"])
                .ok_or_else(|| err(TOOL, format!("[{n}]: key `{k}` is not a PG or queue")))?;
            let tok = match v {
                serde_json::Value::String(s) => s.clone(),
                serde_json::Value::Number(x) => x.to_string(),
                other => return Err(err(TOOL, format!("[{n}].{k}: {other} is not a value"))),
            };
            put(TOOL, entry, k.clone(), &tok, |val| Reading {
                queue: Some(q),
                ..Reading::new(Canonical::BufferWatermark, k, val)
            })?;
        }
    }
    Ok(ports)
}

// ----------------------------------------------------------- pfcwd show stats

/// One `port:queue` row of `pfcwd show stats`. Each `A/B` column is a pair
/// of counters (OK/DROP, DETECTED/RESTORED).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PfcwdQueue {
    pub port: String,
    pub queue: u8,
    /// `operational` or `stormed`.
    pub status: String,
    pub storm_detected: Option<u64>,
    pub storm_restored: Option<u64>,
    pub tx_ok: Option<u64>,
    pub tx_drop: Option<u64>,
    pub rx_ok: Option<u64>,
    pub rx_drop: Option<u64>,
    pub tx_last_ok: Option<u64>,
    pub tx_last_drop: Option<u64>,
    pub rx_last_ok: Option<u64>,
    pub rx_last_drop: Option<u64>,
}

/// `pfcwd show stats`: the PFC watchdog's storms and the packets it let
/// through or dropped per lossless queue.
pub fn parse_pfcwd_stats(text: &str) -> Result<Vec<PfcwdQueue>, ParseError> {
    const TOOL: &str = "pfcwd show stats";
    let mut out = Vec::new();
    for t in tables(TOOL, text, &["QUEUE"])? {
        let col = |name: &str| {
            t.column(name)
                .ok_or_else(|| err(TOOL, format!("no `{name}` column in the header")))
        };
        let (status, storm, tx, rx, txl, rxl) = (
            col("STATUS")?,
            col("STORM DETECTED/RESTORED")?,
            col("TX OK/DROP")?,
            col("RX OK/DROP")?,
            col("TX LAST OK/DROP")?,
            col("RX LAST OK/DROP")?,
        );
        for (line, row) in &t.rows {
            let q = at(TOOL, *line, row, 0, "QUEUE")?;
            let (port, queue) = q
                .rsplit_once(':')
                .and_then(|(p, n)| Some((p, n.parse::<u8>().ok()?)))
                .ok_or_else(|| err(TOOL, format!("line {line}: QUEUE `{q}` is not PORT:QUEUE")))?;
            let pair = |i: usize, name: &str| -> Result<(Option<u64>, Option<u64>), ParseError> {
                let tok = at(TOOL, *line, row, i, name)?;
                let (a, b) = tok
                    .split_once('/')
                    .ok_or_else(|| err(TOOL, format!("line {line}: {name} `{tok}` is not A/B")))?;
                let what = format!("{q} {name}");
                Ok((cell(TOOL, &what, a)?, cell(TOOL, &what, b)?))
            };
            let (storm_detected, storm_restored) = pair(storm, "STORM DETECTED/RESTORED")?;
            let (tx_ok, tx_drop) = pair(tx, "TX OK/DROP")?;
            let (rx_ok, rx_drop) = pair(rx, "RX OK/DROP")?;
            let (tx_last_ok, tx_last_drop) = pair(txl, "TX LAST OK/DROP")?;
            let (rx_last_ok, rx_last_drop) = pair(rxl, "RX LAST OK/DROP")?;
            out.push(PfcwdQueue {
                port: port.to_string(),
                queue,
                status: at(TOOL, *line, row, status, "STATUS")?.to_string(),
                storm_detected,
                storm_restored,
                tx_ok,
                tx_drop,
                rx_ok,
                rx_drop,
                tx_last_ok,
                tx_last_drop,
                rx_last_ok,
                rx_last_drop,
            });
        }
    }
    Ok(out)
}

/// The watchdog's storms as counters: STORM DETECTED of each `PORT:QUEUE`
/// row becomes PfcStormDetected of that queue (vendor name: the row's
/// QUEUE cell, so the finding names SONiC's port even where the inventory
/// wrote an alias); `N/A` is not available. RESTORED and the packet columns
/// stay in `other`: the watchdog's drops are the queue's drops, which
/// `show queue counters` already reads.
pub fn pfcwd_readings(rows: &[PfcwdQueue]) -> Vec<PortReadings> {
    let mut ports = Vec::new();
    for q in rows {
        let entry = port_entry(&mut ports, &q.port);
        let vendor = format!("{}:{} STORM DETECTED", q.port, q.queue);
        match q.storm_detected {
            Some(v) => entry.readings.push(Reading {
                queue: Some(q.queue),
                ..Reading::new(Canonical::PfcStormDetected, &vendor, v)
            }),
            None => entry.not_available.push(vendor),
        }
        let label = |what: &str| format!("{}:{} {what}", q.port, q.queue);
        for (what, v) in [
            ("STORM RESTORED", q.storm_restored),
            ("TX OK", q.tx_ok),
            ("TX DROP", q.tx_drop),
            ("RX OK", q.rx_ok),
            ("RX DROP", q.rx_drop),
        ] {
            if let Some(v) = v {
                entry.other.insert(label(what), v);
            }
        }
    }
    ports
}

// ------------------------------------------------------- show interfaces flap

/// `show interfaces flap [PORT]` (sonic-utilities since January 2025): per
/// port, APPL_DB's `flap_count`, which orchagent's `updateDbPortFlapCount`
/// increments on **every** oper status change, down and up alike, from a
/// port that starts down at boot (`Never`: it never changed). So the
/// link-downs are the count halved (up 1, down 2, up 3, …: ⌊count / 2⌋),
/// read as LinkDown under the vendor name `Flap Count / 2`; the printed
/// count goes to `other` as `Flap Count`.
pub fn parse_interfaces_flap(text: &str) -> Result<Vec<PortReadings>, ParseError> {
    const TOOL: &str = "show interfaces flap";
    let mut ports = Vec::new();
    for t in tables(TOOL, text, &["Interface"])? {
        let i = t
            .column("Flap Count")
            .ok_or_else(|| err(TOOL, "no `Flap Count` column in the header"))?;
        for (line, row) in &t.rows {
            let port = at(TOOL, *line, row, 0, "Interface")?;
            let tok = at(TOOL, *line, row, i, "Flap Count")?;
            let entry = port_entry(&mut ports, port);
            let count = if tok == "Never" {
                Some(0)
            } else {
                cell(TOOL, &format!("{port} Flap Count"), tok)?
            };
            match count {
                Some(n) => {
                    entry.other.insert("Flap Count".into(), n);
                    entry
                        .readings
                        .push(Reading::new(Canonical::LinkDown, "Flap Count / 2", n / 2));
                }
                None => entry.not_available.push("Flap Count".into()),
            }
        }
    }
    Ok(ports)
}

// ------------------------------------------------------ show interfaces counters

/// One row of `show interfaces counters`: the counters as readings, the
/// rates and utilisation as printed values (rates in bytes per second).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct InterfaceCounters {
    pub port: String,
    /// `U`, `D`, `X` (disabled); `None` for `N/A`.
    pub state: Option<String>,
    pub rx_bytes_per_s: Option<f64>,
    pub tx_bytes_per_s: Option<f64>,
    pub rx_util_pct: Option<f64>,
    pub tx_util_pct: Option<f64>,
    pub counters: PortReadings,
}

/// `12.5 MB/s` → bytes per second. portstat's `ns_brate` divides by 1000
/// per step (B, KB, MB, GB).
fn rate(tool: &str, what: &str, tok: &str) -> Result<Option<f64>, ParseError> {
    if matches!(tok, "N/A" | "n/a") {
        return Ok(None);
    }
    let bad = || {
        err(
            tool,
            format!("{what}: `{tok}` is not a rate such as `12.50 MB/s`"),
        )
    };
    let (num, unit) = tok.split_once(' ').ok_or_else(bad)?;
    let mult = match unit {
        "B/s" => 1.0,
        "KB/s" => 1e3,
        "MB/s" => 1e6,
        "GB/s" => 1e9,
        _ => return Err(bad()),
    };
    match num.replace(',', "").parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(Some(v * mult)),
        _ => Err(bad()),
    }
}

fn percent(tool: &str, what: &str, tok: &str) -> Result<Option<f64>, ParseError> {
    if matches!(tok, "N/A" | "n/a") {
        return Ok(None);
    }
    match tok.strip_suffix('%').and_then(|n| n.parse::<f64>().ok()) {
        Some(v) if v.is_finite() && v >= 0.0 => Ok(Some(v)),
        _ => Err(err(tool, format!("{what}: `{tok}` is not a percentage"))),
    }
}

/// `show interfaces counters [-p SECONDS]`. RX_OK/TX_OK are packets;
/// RX_ERR (`SAI_PORT_STAT_IF_IN_ERRORS`, frames with FCS and other errors)
/// is read as CrcErrors, RX_DRP as Discards, TX_DRP as Drops; TX_ERR and
/// the overrun columns go to `other`.
pub fn parse_interfaces_counters(text: &str) -> Result<Vec<InterfaceCounters>, ParseError> {
    const TOOL: &str = "show interfaces counters";
    let mut out = Vec::new();
    for t in tables(TOOL, text, &["IFACE"])? {
        for (line, row) in &t.rows {
            let port = at(TOOL, *line, row, 0, "IFACE")?;
            let mut counters = PortReadings::new(port);
            let get = |name: &str| {
                t.column(name)
                    .map(|i| at(TOOL, *line, row, i, name))
                    .transpose()
            };
            for (name, canonical) in [
                ("RX_OK", Some(Canonical::RxPackets)),
                ("TX_OK", Some(Canonical::TxPackets)),
                ("RX_ERR", Some(Canonical::CrcErrors)),
                ("RX_DRP", Some(Canonical::Discards)),
                ("TX_DRP", Some(Canonical::Drops)),
                ("TX_ERR", None),
                ("RX_OVR", None),
                ("TX_OVR", None),
            ] {
                let Some(tok) = get(name)? else { continue };
                match (cell(TOOL, &format!("{port} {name}"), tok)?, canonical) {
                    (None, _) => counters.not_available.push(name.to_string()),
                    (Some(v), Some(c)) => counters.readings.push(Reading::new(c, name, v)),
                    (Some(v), None) => {
                        counters.other.insert(name.to_string(), v);
                    }
                }
            }
            let what = |n: &str| format!("line {line} ({port} {n})");
            out.push(InterfaceCounters {
                state: get("STATE")?.filter(|s| *s != "N/A").map(str::to_string),
                rx_bytes_per_s: get("RX_BPS")?
                    .map(|v| rate(TOOL, &what("RX_BPS"), v))
                    .transpose()?
                    .flatten(),
                tx_bytes_per_s: get("TX_BPS")?
                    .map(|v| rate(TOOL, &what("TX_BPS"), v))
                    .transpose()?
                    .flatten(),
                rx_util_pct: get("RX_UTIL")?
                    .map(|v| percent(TOOL, &what("RX_UTIL"), v))
                    .transpose()?
                    .flatten(),
                tx_util_pct: get("TX_UTIL")?
                    .map(|v| percent(TOOL, &what("TX_UTIL"), v))
                    .transpose()?
                    .flatten(),
                port: port.to_string(),
                counters,
            });
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn na_is_absent_and_separators_are_read() {
        let text =
            "  Port Rx    PFC0    PFC1\n---------  ------  ------\nEthernet0   1,200     N/A\n";
        let p = parse_pfc_counters(text).unwrap();
        assert_eq!(p[0].readings[0].value, 1200);
        assert_eq!(p[0].readings[0].priority, Some(0));
        assert_eq!(p[0].not_available, vec!["Port Rx PFC1"]);
    }

    #[test]
    fn damaged_values_are_errors() {
        for bad in ["1,20", "-5", "1.5", "99999999999999999999999"] {
            let text = format!("  Port Rx    PFC0\n---------  ------\nEthernet0  {bad}\n");
            let e = parse_pfc_counters(&text).unwrap_err().to_string();
            assert!(e.starts_with("show pfc counters: Ethernet0"), "{e}");
        }
        let e = parse_pfc_counters("hello").unwrap_err().to_string();
        assert!(e.contains("no table headed"), "{e}");
    }
}
