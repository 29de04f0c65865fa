//! Cumulus Linux (NVUE) outputs read into canonical counters. Parse
//! functions only.

use super::table::ruled_tables;
use crate::counters::{cell, first_line, Canonical, ParseError, PortReadings, Reading};

/// Reads a cell that may carry a unit (`0 Bytes`); `n/a` is not available.
fn count(tool: &str, what: &str, tok: &str) -> Result<Option<u64>, ParseError> {
    let t = tok.trim();
    let t = t
        .strip_suffix(" Bytes")
        .or_else(|| t.strip_suffix(" Byte"))
        .unwrap_or(t);
    cell(tool, what, t)
}

/// `nv show interface IF counters qos`: four ruled tables under `===`
/// titles. Per switch priority, PFC pause frames received and sent become
/// PfcPauseRx/PfcPauseTx; per traffic class, frames and bytes sent become
/// per-queue TxPackets/TxBytes and WRED discards Drops; the port's
/// `ecn-marked-packets` (transmit) EcnMarked and `pause-frames` the
/// port-wide pauses. Everything else (ingress PG frames, buffer discards in
/// bytes, pause durations whose unit the output does not print) goes to
/// `other` as `TABLE-KEY INDEX COLUMN`. The interface is named on the
/// command line, not in the output, so `port` is empty.
pub fn parse_qos_counters(text: &str) -> Result<PortReadings, ParseError> {
    const TOOL: &str = "nv show interface counters qos";
    let mut out = PortReadings::default();
    let tables = ruled_tables(text);
    let mut known = 0;
    for t in &tables {
        let Some(key) = t.header.first() else {
            continue;
        };
        let kind = match key.as_str() {
            "priority-group" | "traffic-class" | "switch-priority" | "Counter" => key.as_str(),
            _ => continue,
        };
        known += 1;
        for (line, row) in &t.rows {
            let Some(idx) = row.first().filter(|c| !c.is_empty()) else {
                return Err(ParseError(format!(
                    "{TOOL}: line {line}: no {kind} in the row"
                )));
            };
            let number: Option<u8> = idx.parse().ok();
            for (i, col) in t.header.iter().enumerate().skip(1) {
                let tok = row.get(i).map(String::as_str).unwrap_or("");
                if tok.is_empty() {
                    return Err(ParseError(format!(
                        "{TOOL}: line {line}: no value under {col}"
                    )));
                }
                let label = format!("{kind} {idx} {col}");
                let canonical = match (kind, col.as_str(), idx.as_str()) {
                    ("switch-priority", "rx-pause-frames", _) => {
                        Some((Canonical::PfcPauseRx, number, None))
                    }
                    ("switch-priority", "tx-pause-frames", _) => {
                        Some((Canonical::PfcPauseTx, number, None))
                    }
                    ("traffic-class", "tx-frames", _) => Some((Canonical::TxPackets, None, number)),
                    ("traffic-class", "tx-bytes", _) => Some((Canonical::TxBytes, None, number)),
                    ("traffic-class", "wred-discards", _) => Some((Canonical::Drops, None, number)),
                    ("Counter", "Transmit", "ecn-marked-packets") => {
                        Some((Canonical::EcnMarked, None, None))
                    }
                    ("Counter", "Receive", "pause-frames") => {
                        Some((Canonical::PfcPauseRx, None, None))
                    }
                    ("Counter", "Transmit", "pause-frames") => {
                        Some((Canonical::PfcPauseTx, None, None))
                    }
                    _ => None,
                };
                match (count(TOOL, &label, tok)?, canonical) {
                    (None, _) => out.not_available.push(label),
                    (Some(v), Some((c, priority, queue))) => out.readings.push(Reading {
                        canonical: c,
                        vendor: label,
                        priority,
                        queue,
                        value: v,
                        bits: None,
                    }),
                    (Some(v), None) => {
                        out.other.insert(label, v);
                    }
                }
            }
        }
    }
    if known == 0 {
        return Err(ParseError(format!(
            "{TOOL}: no priority-group, traffic-class, switch-priority or Counter table in {}",
            first_line(text)
        )));
    }
    Ok(out)
}
