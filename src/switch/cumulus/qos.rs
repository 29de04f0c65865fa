//! NVUE's RoCE QoS objects: `nv show qos roce -o json` (the switch's RoCE
//! mode, trust and the PCP/DSCP→switch-priority map), `nv show interface
//! IF qos roce status -o json` (one port's PFC and ECN as programmed) and
//! `nv show interface IF qos roce counters -o json` (its RoCE pauses, ECN
//! marks and buffer discards).
//!
//! Where the shapes come from: NVUE prints one object tree, as JSON with
//! `-o json` and as an indented key/value table without it (the rows of
//! the table are the tree's keys; `congestion-control` →
//! `congestion-mode` is read the same way from the JSON by public
//! scripts). The only public captures are those tables (NVIDIA's Cumulus
//! Linux 5.14 RoCE page, tests/fixtures/public/SOURCES.md), so the
//! parsers here take either form: JSON, or the table turned into the same
//! tree by [`tree`]. Values may be numbers or strings, and sizes may carry
//! NVUE's binary units (`146.48 KB` is 150 000 bytes rounded): a
//! threshold is converted, a counter with a rounded unit is not a count and
//! is left out (not available), never rounded into one.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use crate::counters::{first_line, Canonical, ParseError, PortReadings, Reading};
use crate::switch::config::{DscpClass, EcnQueue};
use crate::switch::table::ruled_tables;

/// The answer as an NVUE tree: JSON when it is JSON, else the text table.
pub fn tree(tool: &str, text: &str) -> Result<Value, ParseError> {
    let t = text.trim();
    if t.starts_with('{') {
        return serde_json::from_str(t)
            .map_err(|e| ParseError(format!("{tool}: not JSON ({e}): {}", first_line(text))));
    }
    text_tree(text).ok_or_else(|| {
        ParseError(format!(
            "{tool}: neither JSON nor NVUE's key/value table: {}",
            first_line(text)
        ))
    })
}

/// NVUE's text form: a header (`operational  applied  description`), a
/// dash ruler whose runs give the columns, then `key  value` rows indented
/// two spaces per level (a row without a value opens an object), then
/// titled tables (`Title` / `====`) whose rows are keyed by their first
/// cell. A value is the operational column, or the applied one when the
/// operational is empty.
fn text_tree(text: &str) -> Option<Value> {
    let lines: Vec<&str> = text.lines().collect();
    let ruler = lines
        .iter()
        .position(|l| l.trim_start().starts_with("---") && l.contains("  "))?;
    let cols: Vec<usize> = {
        let r = lines[ruler];
        let mut v = Vec::new();
        let mut prev = ' ';
        for (i, c) in r.char_indices() {
            if c == '-' && prev == ' ' {
                v.push(i);
            }
            prev = c;
        }
        v
    };
    if cols.len() < 2 {
        return None;
    }
    let cell = |l: &str, k: usize| -> String {
        let from = cols[k].min(l.len());
        let to = cols.get(k + 1).copied().unwrap_or(l.len()).min(l.len());
        l.get(from..to).unwrap_or("").trim().to_string()
    };
    let mut root = Map::new();
    let mut path: Vec<String> = Vec::new();
    let mut i = ruler + 1;
    while i < lines.len() {
        let l = lines[i];
        if l.trim().is_empty()
            || lines
                .get(i + 1)
                .is_some_and(|n| n.trim_start().starts_with("==="))
        {
            break;
        }
        let indent = (l.len() - l.trim_start().len()) / 2;
        let key = l[..cols[1].min(l.len())].trim().to_string();
        let op = cell(l, 1);
        let value = if op.is_empty() && cols.len() > 2 {
            cell(l, 2)
        } else {
            op
        };
        path.truncate(indent);
        let mut obj = &mut root;
        for p in &path {
            obj = obj
                .entry(p.clone())
                .or_insert_with(|| Value::Object(Map::new()))
                .as_object_mut()?;
        }
        if value.is_empty() {
            obj.entry(key.clone())
                .or_insert_with(|| Value::Object(Map::new()));
            path.push(key);
        } else {
            obj.insert(key, Value::String(value));
        }
        i += 1;
    }
    // The titled tables below the tree, each read alone: a title and its
    // `===` are not rows of the table before them.
    let rest = &lines[i.min(lines.len())..];
    let titles: Vec<usize> = (0..rest.len().saturating_sub(1))
        .filter(|&k| rest[k + 1].trim_start().starts_with("==="))
        .collect();
    for (n, &k) in titles.iter().enumerate() {
        let end = titles.get(n + 1).copied().unwrap_or(rest.len());
        let body = rest[(k + 2).min(end)..end].join("\n");
        let Some(t) = ruled_tables(&body).into_iter().next() else {
            continue;
        };
        let mut rows = Map::new();
        for (_, r) in &t.rows {
            let mut row = Map::new();
            for (h, c) in t.header.iter().zip(r) {
                if !h.is_empty() {
                    row.insert(h.clone(), Value::String(c.clone()));
                }
            }
            // The first column is unnamed: an index, or `roce`/`cnp`.
            rows.insert(r.first().cloned().unwrap_or_default(), Value::Object(row));
        }
        root.insert(rest[k].trim().to_string(), Value::Object(rows));
    }
    Some(Value::Object(root))
}

/// A value as a word, whatever JSON type it came as.
fn word(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.trim().to_string()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

fn at<'a>(v: &'a Value, path: &[&str]) -> Option<&'a Value> {
    path.iter().try_fold(v, |v, k| v.get(*k))
}

/// `yes`, `enabled`, `on`, `true` / `no`, `disabled`, `off`, `false`.
fn flag(v: &Value) -> Option<bool> {
    match word(v)?.to_ascii_lowercase().as_str() {
        "yes" | "enabled" | "enable" | "on" | "true" => Some(true),
        "no" | "disabled" | "disable" | "off" | "false" => Some(false),
        _ => None,
    }
}

/// `3`, `0,3`, `0-2,5`, `[0, 3]`: a list of small numbers.
fn numbers(v: &Value) -> Option<Vec<u8>> {
    if let Value::Array(a) = v {
        return a.iter().map(|x| word(x)?.parse().ok()).collect();
    }
    let s = word(v)?;
    let mut out = Vec::new();
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b): (u8, u8) = (a.trim().parse().ok()?, b.trim().parse().ok()?);
                out.extend(a..=b);
            }
            None => out.push(part.parse().ok()?),
        }
    }
    Some(out)
}

/// A size in bytes: a number, `N`, `N Bytes`, or `X.YZ KB|MB|GB` (NVUE's
/// units are binary: 1 KB = 1024 bytes). The second value says whether
/// it was exact (no rounded unit).
fn bytes(v: &Value) -> Option<(u64, bool)> {
    if let Some(n) = v.as_u64() {
        return Some((n, true));
    }
    let s = word(v)?;
    let (num, unit) = match s.split_once(' ') {
        Some((n, u)) => (n, u.trim()),
        None => (s.as_str(), ""),
    };
    let scale: u64 = match unit.to_ascii_uppercase().as_str() {
        "" | "B" | "BYTE" | "BYTES" => {
            return num.parse().ok().map(|n| (n, true));
        }
        "KB" => 1 << 10,
        "MB" => 1 << 20,
        "GB" => 1 << 30,
        _ => return None,
    };
    let x: f64 = num.parse().ok()?;
    (x >= 0.0 && x.is_finite()).then(|| ((x * scale as f64).round() as u64, false))
}

/// One port's RoCE settings as `nv show interface IF qos roce status`
/// shows them. `None` where the answer does not say.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct RoceStatus {
    /// `mode`: `lossless`, `lossy`, `lossless-single-ipool`, ….
    pub mode: Option<String>,
    /// PFC per switch priority: the `pfc-priority` list, on when both
    /// `rx-enabled` and `tx-enabled` say so.
    pub pfc: Option<[bool; 8]>,
    /// ECN/RED per traffic class of `enabled-tc`.
    pub ecn: Option<Vec<EcnQueue>>,
    /// `trust-mode`: `pcp,dscp`, `dscp`, `pcp`.
    pub trust: Option<String>,
    /// Why a part could not be read.
    pub missing: Vec<String>,
}

/// `nv show interface IF qos roce status -o json` (or the whole-switch
/// `nv show qos roce -o json`, which has the same `pfc`,
/// `congestion-control`, `trust` and `mode`).
pub fn parse_roce_status(text: &str) -> Result<RoceStatus, ParseError> {
    const TOOL: &str = "nv show qos roce -o json";
    let v = tree(TOOL, text)?;
    if !v.is_object() {
        return Err(ParseError(format!(
            "{TOOL}: not an object: {}",
            first_line(text)
        )));
    }
    let mut st = RoceStatus {
        mode: at(&v, &["mode"]).and_then(word),
        trust: at(&v, &["trust", "trust-mode"]).and_then(word),
        ..Default::default()
    };
    let lossy = st.mode.as_deref().is_some_and(|m| m.starts_with("lossy"));
    match at(&v, &["pfc"]) {
        Some(p) => {
            let prios = at(p, &["pfc-priority"]).and_then(numbers);
            let rx = at(p, &["rx-enabled"]).and_then(flag);
            let tx = at(p, &["tx-enabled"]).and_then(flag);
            match (prios, rx, tx) {
                (Some(prios), Some(rx), Some(tx)) => {
                    let mut on = [false; 8];
                    for p in prios {
                        let slot = on.get_mut(usize::from(p)).ok_or_else(|| {
                            ParseError(format!("{TOOL}: pfc-priority {p} is not a priority 0..7"))
                        })?;
                        *slot = rx && tx;
                    }
                    st.pfc = Some(on);
                }
                _ => st
                    .missing
                    .push("pfc: no pfc-priority, rx-enabled or tx-enabled it can read".into()),
            }
        }
        // A lossy profile has no PFC at all.
        None if lossy => st.pfc = Some([false; 8]),
        None => st.missing.push("no pfc object".into()),
    }
    match at(&v, &["congestion-control"]) {
        Some(c) => {
            let mode = at(c, &["congestion-mode"]).and_then(word);
            let tcs = at(c, &["enabled-tc"]).and_then(numbers);
            let min = at(c, &["min-threshold"]).and_then(bytes);
            let max = at(c, &["max-threshold"]).and_then(bytes);
            match (mode, tcs, min, max) {
                // No traffic class marks: no ECN on the port.
                (Some(_), Some(tcs), _, _) if tcs.is_empty() => st.ecn = Some(Vec::new()),
                (Some(mode), Some(tcs), Some((min, _)), Some((max, _))) => {
                    let ecn = mode.to_ascii_lowercase().contains("ecn");
                    st.ecn = Some(
                        tcs.into_iter()
                            .map(|tc| EcnQueue {
                                tc,
                                min_bytes: min,
                                max_bytes: max,
                                ecn,
                            })
                            .collect(),
                    );
                }
                _ => st.missing.push(
                    "congestion-control: no congestion-mode, enabled-tc, min-threshold or max-threshold it can read"
                        .into(),
                ),
            }
        }
        None => st.missing.push("no congestion-control object".into()),
    }
    Ok(st)
}

/// The DSCP→switch-priority map of `nv show qos roce -o json`: every
/// object whose entries carry `dscp` and `switch-prio` (the columns of
/// NVUE's "RoCE PCP/DSCP->SP mapping configurations"), `dscp` one value
/// or a list. A switch that does not trust DSCP (`trust-mode` without
/// `dscp`) classifies no DSCP: an empty map. `Err` when neither is there.
pub fn parse_dscp_map(text: &str) -> Result<BTreeMap<u8, DscpClass>, ParseError> {
    const TOOL: &str = "nv show qos roce -o json";
    let v = tree(TOOL, text)?;
    if let Some(t) = at(&v, &["trust", "trust-mode"]).and_then(word) {
        if !t.to_ascii_lowercase().contains("dscp") && !t.eq_ignore_ascii_case("both") {
            return Ok(BTreeMap::new());
        }
    }
    let mut out = BTreeMap::new();
    let mut found = false;
    for table in v.as_object().into_iter().flat_map(|m| m.values()) {
        let Some(rows) = table.as_object() else {
            continue;
        };
        for row in rows.values() {
            let (Some(d), Some(sp)) = (row.get("dscp"), row.get("switch-prio")) else {
                continue;
            };
            found = true;
            let dscps = numbers(d)
                .ok_or_else(|| ParseError(format!("{TOOL}: dscp {d} is not a list of DSCPs")))?;
            let sp: u8 = word(sp)
                .and_then(|s| s.parse().ok())
                .filter(|p| *p < 8)
                .ok_or_else(|| ParseError(format!("{TOOL}: switch-prio {sp} is not 0..7")))?;
            for d in dscps {
                out.insert(
                    d,
                    DscpClass {
                        class: format!("switch-priority {sp}"),
                        priority: Some(sp),
                    },
                );
            }
        }
    }
    if !found {
        return Err(ParseError(format!(
            "{TOOL}: no PCP/DSCP->SP mapping (entries with dscp and switch-prio) and no trust-mode: {}",
            first_line(text)
        )));
    }
    Ok(out)
}

/// `nv show interface IF qos roce counters -o json`: under `rx-stats` and
/// `tx-stats`, `rx-pfc-stats`/`tx-pfc-stats` `pause-packets` (RoCE's PFC
/// priority: the output does not name it, so no priority is given) become
/// PfcPauseRx/PfcPauseTx, `tx-ecn-stats` `ecn-marked-packets` EcnMarked,
/// `tx-roce-stats` `unicast-no-buffer-discard` Drops and `rx-roce-stats`
/// `no-buffer-discard` Discards. Every other exact count goes to `other`
/// as `SECTION.GROUP.KEY`; a size with a rounded unit (`92824.38 GB`) is
/// not available.
pub fn parse_roce_counters(text: &str) -> Result<PortReadings, ParseError> {
    const TOOL: &str = "nv show interface qos roce counters -o json";
    let v = tree(TOOL, text)?;
    let Some(top) = v.as_object() else {
        return Err(ParseError(format!(
            "{TOOL}: not an object: {}",
            first_line(text)
        )));
    };
    if !top.contains_key("rx-stats") && !top.contains_key("tx-stats") {
        return Err(ParseError(format!(
            "{TOOL}: no rx-stats or tx-stats in {}",
            first_line(text)
        )));
    }
    const KNOWN: [(&str, &str, &str, Canonical); 5] = [
        (
            "rx-stats",
            "rx-pfc-stats",
            "pause-packets",
            Canonical::PfcPauseRx,
        ),
        (
            "tx-stats",
            "tx-pfc-stats",
            "pause-packets",
            Canonical::PfcPauseTx,
        ),
        (
            "tx-stats",
            "tx-ecn-stats",
            "ecn-marked-packets",
            Canonical::EcnMarked,
        ),
        (
            "tx-stats",
            "tx-roce-stats",
            "unicast-no-buffer-discard",
            Canonical::Drops,
        ),
        (
            "rx-stats",
            "rx-roce-stats",
            "no-buffer-discard",
            Canonical::Discards,
        ),
    ];
    let mut out = PortReadings::default();
    for (s, g, k, _) in KNOWN {
        if at(&v, &[s, g, k]).is_none() {
            out.not_available.push(format!("{s}.{g}.{k}"));
        }
    }
    for (s, groups) in top {
        for (g, keys) in groups.as_object().into_iter().flatten() {
            for (k, x) in keys.as_object().into_iter().flatten() {
                let label = format!("{s}.{g}.{k}");
                let Some((n, exact)) = bytes(x) else {
                    return Err(ParseError(format!("{TOOL}: {label} is {x}, not a count")));
                };
                if !exact {
                    out.not_available.push(label);
                    continue;
                }
                match KNOWN.iter().find(|(a, b, c, _)| (*a, *b, *c) == (s, g, k)) {
                    Some((.., c)) => out.readings.push(Reading {
                        canonical: *c,
                        vendor: label,
                        priority: None,
                        queue: None,
                        value: n,
                        bits: None,
                    }),
                    None => {
                        out.other.insert(label, n);
                    }
                }
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
#[path = "tests_qos.rs"]
mod tests;
