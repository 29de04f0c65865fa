//! Counters, as [`PortReadings`] with the canonical names `linux` gives the
//! same meaning: `show interface`, `show interface counters errors`, `show
//! interface priority-flow-control` and `show queuing interface` as
//! structured output, and the first two's text (taken over SSH or as
//! `cli_show_ascii`). A counter the switch does not print is listed as not
//! available, never read as 0. Port states in the same answers are
//! `state`'s to read.

use serde::Serialize;
use serde_json::Value;

use super::rows::{counter, first_text, keys, numeric, required, table, table_of, text_of, Row};
use crate::counters::{cell, first_line, port_entry, Canonical, ParseError, PortReadings, Reading};

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
                (Some(v), Some(c)) => entry.readings.push(Reading::new(c, name, v)),
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
                Some(v) => counters.readings.push(Reading::new(c, name, v)),
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

// ----------------------------------------------------------- JSON counters

/// `show interface` counters with a canonical name, each with the fields
/// that may carry it, in order of preference: Ethernet ports count as
/// `eth_*`, mgmt0 (and NX-OSv) at VDC level as `vdc_lvl_*`. The meanings
/// are those of `linux`: `eth_crc` is the FCS error count
/// (`a_frame_check_sequence_errors`), `eth_indiscard`/`eth_outdiscard` the
/// interface discards (`if_in_discards` → Discards, `if_out_discards` →
/// Drops), as [`parse_counters_errors`] reads InDiscards and OutDiscards.
const IF_CANONICAL: &[(Canonical, &[&str])] = &[
    (Canonical::RxBytes, &["eth_inbytes", "vdc_lvl_in_bytes"]),
    (Canonical::TxBytes, &["eth_outbytes", "vdc_lvl_out_bytes"]),
    (Canonical::RxPackets, &["eth_inpkts", "vdc_lvl_in_pkts"]),
    (Canonical::TxPackets, &["eth_outpkts", "vdc_lvl_out_pkts"]),
    (Canonical::CrcErrors, &["eth_crc"]),
    (Canonical::Discards, &["eth_indiscard"]),
    (Canonical::Drops, &["eth_outdiscard"]),
];

/// `show interface` counters the vocabulary has no name for, kept in
/// `other`. `eth_inpause`/`eth_outpause` are 802.3x pause frames, not PFC;
/// `eth_reset_cntr` counts interface resets, which is not the same as link
/// downs; `eth_stomped_crc` counts frames that arrived already stomped by
/// a cut-through hop upstream, not errors of this link. Rates
/// (`eth_inrate1_bits`) are not counters and are left out.
const IF_OTHER: &[&str] = &[
    "eth_inerr",
    "eth_outerr",
    "eth_runts",
    "eth_giants",
    "eth_nobuf",
    "eth_inpause",
    "eth_outpause",
    "eth_reset_cntr",
    "eth_stomped_crc",
    "eth_in_ifdown_drops",
    "eth_overrun",
    "eth_underrun",
    "eth_ignored",
    "eth_frame",
    "eth_watchdog",
    "eth_bad_eth",
    "eth_bad_proto",
    "eth_dribble",
    "eth_storm_supp",
    "eth_coll",
    "eth_deferred",
    "eth_latecoll",
    "eth_lostcarrier",
    "eth_nocarrier",
    "eth_babbles",
    "eth_jumbo_inpkts",
    "eth_jumbo_outpkts",
    "eth_inucast",
    "eth_inmcast",
    "eth_inbcast",
    "eth_outucast",
    "eth_outmcast",
    "eth_outbcast",
];

/// `show interface [PORT]` as structured output: one row per interface
/// (one row, as an object, for one port). Every counter of
/// [`IF_CANONICAL`] the row lacks is listed in `not_available` under its
/// first field name.
pub fn parse_interface_counters(body: &Value) -> Result<Vec<PortReadings>, ParseError> {
    const TOOL: &str = "show interface";
    let mut out = Vec::new();
    for row in table(TOOL, body, "interface")? {
        let port = required(TOOL, row, &["interface"], "interface")?;
        let mut entry = PortReadings::new(&port);
        for (canonical, fields) in IF_CANONICAL {
            let mut found = None;
            for field in *fields {
                if let Some(v) = counter(TOOL, row, field)? {
                    found = Some((*field, v));
                    break;
                }
            }
            match found {
                Some((field, v)) => entry.readings.push(Reading::new(*canonical, field, v)),
                None => entry.not_available.push(fields[0].to_string()),
            }
        }
        for field in IF_OTHER {
            if let Some(v) = counter(TOOL, row, field)? {
                entry.other.insert(field.to_string(), v);
            }
        }
        out.push(entry);
    }
    Ok(out)
}

/// The counters of `show interface counters errors` with a canonical name,
/// the same as [`parse_counters_errors`] gives the text's FCS-Err,
/// Symbol-Err, OutDiscards and InDiscards.
const ERR_CANONICAL: &[(&str, Canonical)] = &[
    ("eth_fcs_err", Canonical::CrcErrors),
    ("eth_symbol_err", Canonical::SymbolErrors),
    ("eth_outdisc", Canonical::Drops),
    ("eth_indisc", Canonical::Discards),
];

/// `show interface counters errors` as structured output. The text's
/// sub-tables become one row per interface per sub-table (mgmt0 four
/// times, the last with `interface` alone), so rows are merged by
/// interface; a counter printed twice with two values is an error. The
/// numbers without a canonical name (alignment, collisions, runts,
/// giants…) go to `other`; a canonical one no row printed is not available.
pub fn parse_counters_errors_json(body: &Value) -> Result<Vec<PortReadings>, ParseError> {
    const TOOL: &str = "show interface counters errors";
    let mut ports: Vec<PortReadings> = Vec::new();
    for row in table(TOOL, body, "interface")? {
        let port = required(TOOL, row, &["interface"], "interface")?;
        let entry = port_entry(&mut ports, &port);
        for (field, raw) in row {
            if field == "interface" {
                continue;
            }
            let canonical = ERR_CANONICAL
                .iter()
                .find(|(n, _)| n == field)
                .map(|(_, c)| *c);
            if canonical.is_none() && !numeric(raw) {
                continue;
            }
            let Some(v) = counter(TOOL, row, field)? else {
                if canonical.is_some() && !entry.not_available.contains(field) {
                    entry.not_available.push(field.clone());
                }
                continue;
            };
            let before = entry
                .readings
                .iter()
                .find(|r| &r.vendor == field)
                .map(|r| r.value)
                .or_else(|| entry.other.get(field).copied());
            match before {
                Some(b) if b == v => {}
                Some(b) => {
                    return Err(ParseError(format!(
                        "{TOOL}: {port} {field} is printed twice, as {b} and {v}"
                    )))
                }
                None => match canonical {
                    Some(c) => entry.readings.push(Reading::new(c, field, v)),
                    None => {
                        entry.other.insert(field.clone(), v);
                    }
                },
            }
        }
    }
    for p in &mut ports {
        for (field, _) in ERR_CANONICAL {
            let printed = p.readings.iter().any(|r| r.vendor == *field);
            if !printed && !p.not_available.iter().any(|n| n == field) {
                p.not_available.push(field.to_string());
            }
        }
    }
    Ok(ports)
}

/// The rows of `TABLE_<name>` in `body` and in every row of its
/// `TABLE_module` (the queuing and PFC views nest per linecard).
fn module_rows<'a>(tool: &str, body: &'a Value, name: &str) -> Result<Vec<&'a Row>, ParseError> {
    let mut out = table(tool, body, name)?;
    for module in table(tool, body, "module")? {
        out.extend(table_of(tool, module, name)?);
    }
    Ok(out)
}

/// `show interface [PORT] priority-flow-control` as structured output:
/// `TABLE_module/ROW_module/TABLE_pfc_interface/ROW_pfc_interface` with
/// `if_name_str`, `admin` (mode), `oper`, `rx-stats` and `tx-stats` (PFC
/// frames received and sent, all priorities together), read as
/// [`parse_pfc_interface`] reads RxPPP and TxPPP.
///
/// The field names come from two independent NX-API scripts (no captured
/// answer or Cisco reference was found); a row without them is an error
/// that says so.
pub fn parse_pfc_interface_json(body: &Value) -> Result<Vec<PfcPort>, ParseError> {
    const TOOL: &str = "show interface priority-flow-control";
    let mut out = Vec::new();
    for row in module_rows(TOOL, body, "pfc_interface")? {
        let port = required(TOOL, row, &["if_name_str", "interface"], "pfc_interface")?;
        let mode = required(TOOL, row, &["admin"], "pfc_interface")?;
        let oper = required(TOOL, row, &["oper"], "pfc_interface")?;
        let mut counters = PortReadings::new(&port);
        for (field, c) in [
            ("rx-stats", Canonical::PfcPauseRx),
            ("tx-stats", Canonical::PfcPauseTx),
        ] {
            match counter(TOOL, row, field)? {
                Some(v) => counters.readings.push(Reading::new(c, field, v)),
                None => counters.not_available.push(field.to_string()),
            }
        }
        out.push(PfcPort {
            port,
            mode,
            oper,
            vl_bitmap: None,
            counters,
        });
    }
    Ok(out)
}

/// Egress drop counters of `show queuing interface`, by preference. A
/// platform prints one or two per queue, and "WD & Tail Drop" (PFC
/// watchdog and tail drops) repeats the tail drops of "WRED/AFD & Tail
/// Drop" where both appear; so only the first one present is Drops, and
/// the others go to `other` rather than be counted twice.
const DROP_TYPES: [&str; 4] = [
    "WRED/AFD & Tail Drop",
    "Tail Drop",
    "Dropped",
    "WD & Tail Drop",
];

/// The unicast, out-of-band-flow-control unicast and multicast values of
/// one egress statistic.
const CASTS: [(&str, &str); 3] = [
    ("eq-uc-stat-value", "uc"),
    ("eq-oobfc-uc-stat-value", "oobfc-uc"),
    ("eq-mc-stat-value", "mc"),
];

/// `show queuing interface [PORT]` as structured output, per queue
/// (QoS group 0–7; the control and SPAN groups go to `other`):
///
/// - egress statistics (`TABLE_qosgrp_egress_stats_entry`): Tx Pkts/Byts
///   as TxPackets/TxBytes, ECN Pkts as EcnMarked, the first of
///   [`DROP_TYPES`] in packets as Drops, one reading per unicast,
///   OOBFC-unicast and multicast value, labelled `qos-group 3 ECN Pkts uc`;
///   Q Depth (a momentary depth, not a peak) and the rest go to `other`;
/// - PFC per CoS (`TABLE_pfc_stats`): `tx-pause-count`/`rx-pause-count` as
///   PfcPauseTx/Rx of that priority. The port totals `tx-ppp`/`rx-ppp` are
///   the PFC frames only where no per-CoS row exists; otherwise `other`;
/// - ingress and port egress statistics go to `other`.
///
/// A queue without an ECN or a drop statistic lists `qos-group N ECN Pkts`
/// or `qos-group N drops` as not available: platforms differ (older ones
/// print only Tx and Dropped).
///
/// Shape from the NX-OS 9.3 show-command reference (`show queuing`
/// `__readonly__` grammar) and the statistic names from a Cisco engineer's
/// NX-API code; no captured answer was found.
pub fn parse_queuing_interface(body: &Value) -> Result<Vec<PortReadings>, ParseError> {
    const TOOL: &str = "show queuing interface";
    let mut ports: Vec<PortReadings> = Vec::new();
    for qi in module_rows(TOOL, body, "queuing_interface")? {
        let port = required(TOOL, qi, &["if_name_str", "interface"], "queuing_interface")?;
        let entry = port_entry(&mut ports, &port);
        for group in table_of(TOOL, qi, "qosgrp_egress_stats")? {
            egress_group(TOOL, &port, group, entry)?;
        }
        let pfc = table_of(TOOL, qi, "pfc_stats")?;
        for row in &pfc {
            let cos = text_of(row, "cos")
                .and_then(|c| c.parse::<u8>().ok())
                .filter(|c| *c < 8)
                .ok_or_else(|| {
                    ParseError(format!(
                        "{TOOL}: {port}: a TABLE_pfc_stats row has no `cos` 0–7 (it has {})",
                        keys(row)
                    ))
                })?;
            for (field, c) in [
                ("tx-pause-count", Canonical::PfcPauseTx),
                ("rx-pause-count", Canonical::PfcPauseRx),
            ] {
                match counter(TOOL, row, field)? {
                    Some(v) => entry.readings.push(Reading {
                        priority: Some(cos),
                        ..Reading::new(c, field, v)
                    }),
                    None => entry.not_available.push(format!("cos {cos} {field}")),
                }
            }
        }
        for (field, c) in [
            ("tx-ppp", Canonical::PfcPauseTx),
            ("rx-ppp", Canonical::PfcPauseRx),
        ] {
            if let Some(v) = counter(TOOL, qi, field)? {
                if pfc.is_empty() {
                    entry.readings.push(Reading::new(c, field, v));
                } else {
                    entry.other.insert(field.to_string(), v);
                }
            }
        }
        for (name, prefix) in [("ingress_stats_entry", "ip"), ("egress_stats_entry", "ep")] {
            for row in table_of(TOOL, qi, name)? {
                let kind = first_text(row, &[&format!("{prefix}-stat-type")]).unwrap_or_default();
                let units = first_text(row, &[&format!("{prefix}-stat-units")]).unwrap_or_default();
                let field = format!("{prefix}-stat-value");
                if let Some(v) = counter(TOOL, row, &field)? {
                    let side = if prefix == "ip" { "ingress" } else { "egress" };
                    entry.other.insert(format!("{side} {kind} {units}"), v);
                }
            }
        }
    }
    Ok(ports)
}

fn egress_group(
    tool: &str,
    port: &str,
    group: &Row,
    entry: &mut PortReadings,
) -> Result<(), ParseError> {
    let name = text_of(group, "eq-qosgrp").ok_or_else(|| {
        ParseError(format!(
            "{tool}: {port}: a TABLE_qosgrp_egress_stats row has no `eq-qosgrp` (it has {})",
            keys(group)
        ))
    })?;
    let queue = name.parse::<u8>().ok().filter(|q| *q < 8);
    let stats = table_of(tool, group, "qosgrp_egress_stats_entry")?;
    let kind_units = |s: &Row| {
        (
            text_of(s, "eq-stat-type").unwrap_or_default(),
            text_of(s, "eq-stat-units").unwrap_or_default(),
        )
    };
    let drop_type = DROP_TYPES.iter().copied().find(|t| {
        stats
            .iter()
            .any(|s| kind_units(s) == (t.to_string(), "Pkts".to_string()))
    });
    let (mut ecn, mut drops) = (false, false);
    for s in &stats {
        let (kind, units) = kind_units(s);
        let canonical = match (kind.as_str(), units.as_str()) {
            _ if queue.is_none() => None,
            ("Tx", "Pkts") => Some(Canonical::TxPackets),
            ("Tx", "Byts") => Some(Canonical::TxBytes),
            ("ECN", "Pkts") => Some(Canonical::EcnMarked),
            (k, "Pkts") if Some(k) == drop_type => Some(Canonical::Drops),
            _ => None,
        };
        for (field, cast) in CASTS {
            let label = format!("qos-group {name} {kind} {units} {cast}");
            let Some(v) = counter(&format!("{tool}: {port} {label}"), s, field)? else {
                continue;
            };
            match canonical {
                Some(c) => {
                    ecn |= c == Canonical::EcnMarked;
                    drops |= c == Canonical::Drops;
                    entry.readings.push(Reading {
                        queue,
                        ..Reading::new(c, &label, v)
                    });
                }
                None => {
                    entry.other.insert(label, v);
                }
            }
        }
    }
    if queue.is_some() {
        if !ecn {
            entry
                .not_available
                .push(format!("qos-group {name} ECN Pkts"));
        }
        if !drops {
            entry.not_available.push(format!("qos-group {name} drops"));
        }
    }
    Ok(())
}
