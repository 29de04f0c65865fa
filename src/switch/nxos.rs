//! Cisco NX-OS outputs read into canonical counters. Parse functions only.

use serde::Serialize;

use crate::counters::{cell, first_line, port_entry, Canonical, ParseError, PortReadings, Reading};

fn reading(canonical: Canonical, vendor: &str, value: u64) -> Reading {
    Reading {
        canonical,
        vendor: vendor.to_string(),
        priority: None,
        queue: None,
        value,
        bits: None,
    }
}

/// The counters of `show interface counters errors` that have a canonical
/// name; the others (alignment, collisions, runts, giants…) go to `other`.
fn errors_canonical(name: &str) -> Option<Canonical> {
    Some(match name {
        "FCS-Err" => Canonical::CrcErrors,
        "Symbol-Err" => Canonical::SymbolErrors,
        "OutDiscards" => Canonical::Drops,
        "InDiscards" => Canonical::Discards,
        _ => return None,
    })
}

/// `show interface counters errors`: several sub-tables, each a header
/// line between two dashed rulers and one row per port. Columns are read
/// by whitespace, not position: real outputs (and genie's test data) have
/// values that drift out of their column. `--` is not applicable.
pub fn parse_counters_errors(text: &str) -> Result<Vec<PortReadings>, ParseError> {
    const TOOL: &str = "show interface counters errors";
    let err = |r: String| ParseError(format!("{TOOL}: {r}"));
    let is_ruler = |l: &str| l.len() >= 10 && l.trim().chars().all(|c| c == '-');
    let lines: Vec<&str> = text.lines().collect();
    let mut ports = Vec::new();
    let mut header: Option<Vec<&str>> = None;
    let mut tables = 0;
    for (n, line) in lines.iter().enumerate() {
        let toks: Vec<&str> = line.split_whitespace().collect();
        if is_ruler(line) || toks.is_empty() {
            continue;
        }
        if toks[0] == "Port" && n > 0 && is_ruler(lines[n - 1]) {
            header = Some(toks);
            tables += 1;
            continue;
        }
        let Some(h) = &header else { continue };
        if toks.len() != h.len() {
            return Err(err(format!(
                "line {}: {} values under a header of {} (`{}`)",
                n + 1,
                toks.len(),
                h.len(),
                line.trim()
            )));
        }
        let entry = port_entry(&mut ports, toks[0]);
        for (name, tok) in h.iter().zip(&toks).skip(1) {
            match (
                cell(TOOL, &format!("{} {name}", toks[0]), tok)?,
                errors_canonical(name),
            ) {
                (None, _) => entry.not_available.push(name.to_string()),
                (Some(v), Some(c)) => entry.readings.push(reading(c, name, v)),
                (Some(v), None) => {
                    entry.other.insert(name.to_string(), v);
                }
            }
        }
    }
    if tables == 0 {
        return Err(err(format!(
            "no `Port …` header between rulers in {}",
            first_line(text)
        )));
    }
    Ok(ports)
}

/// One port of `show interface priority-flow-control`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PfcPort {
    pub port: String,
    /// Admin mode: `Auto`, `On`, `Off`.
    pub mode: String,
    /// Operational state: `On` or `Off`.
    pub oper: String,
    /// The VL bitmap printed after `On` (`(8)`), when there is one.
    pub vl_bitmap: Option<String>,
    /// RxPPP and TxPPP as PFC pause frames received and sent (all
    /// priorities together).
    pub counters: PortReadings,
}

/// `show interface priority-flow-control`: `=` rulers, then `PORT MODE
/// OPER[(VL bmap)] RxPPP TxPPP` rows, with trailing spaces.
pub fn parse_pfc_interface(text: &str) -> Result<Vec<PfcPort>, ParseError> {
    const TOOL: &str = "show interface priority-flow-control";
    let err = |r: String| ParseError(format!("{TOOL}: {r}"));
    let mut header = false;
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let toks: Vec<&str> = line.split_whitespace().collect();
        if toks.first() == Some(&"Port") && toks.contains(&"RxPPP") {
            header = true;
            continue;
        }
        if !header || toks.is_empty() || line.trim().chars().all(|c| c == '=') {
            continue;
        }
        let (port, mode, oper, bitmap, rx, tx) = match toks[..] {
            [p, m, o, rx, tx] => (p, m, o, None, rx, tx),
            [p, m, o, b, rx, tx] if b.starts_with('(') => (p, m, o, Some(b), rx, tx),
            _ => {
                return Err(err(format!(
                    "line {}: expected PORT MODE OPER RxPPP TxPPP, got `{}`",
                    n + 1,
                    line.trim()
                )))
            }
        };
        let mut counters = PortReadings::new(port);
        for (name, tok, c) in [
            ("RxPPP", rx, Canonical::PfcPauseRx),
            ("TxPPP", tx, Canonical::PfcPauseTx),
        ] {
            match cell(TOOL, &format!("{port} {name}"), tok)? {
                Some(v) => counters.readings.push(reading(c, name, v)),
                None => counters.not_available.push(name.to_string()),
            }
        }
        out.push(PfcPort {
            port: port.to_string(),
            mode: mode.to_string(),
            oper: oper.to_string(),
            vl_bitmap: bitmap.map(|b| b.trim_matches(['(', ')']).to_string()),
            counters,
        });
    }
    if !header {
        return Err(err(format!(
            "no `Port Mode Oper … RxPPP TxPPP` header in {}",
            first_line(text)
        )));
    }
    Ok(out)
}
