//! The `cumulus` platform: NVIDIA Cumulus Linux 5.x, reached by command
//! lines over ssh. Reads go through NVUE (`nv show … -o json` where NVUE
//! has a JSON form whose shape is public, its text tables where only those
//! are public); faults are the `linux` platform's (`ip link`, FRR, the
//! detached `setsid` dead-man), with Cumulus's link-flap protodown read
//! first ([`fault`]). This file holds the parsers; [`platform`] the
//! requests. It does not use `nv set`/`nv config apply`: an apply takes the
//! whole pending revision and, from 5.9, saves it to the startup file.

use super::table::ruled_tables;
use crate::counters::{cell, first_line, Canonical, ParseError, PortReadings, Reading};

pub mod fault;
pub mod platform;
pub mod qos;

pub use platform::Cumulus;

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

/// `nv show interface IF link stats -o json`: the NVUE object
/// `interface.IF.link.stats`, `{"carrier-transitions": 2, "in-bytes": …,
/// "in-pkts", "in-drops", "in-errors", "out-bytes", "out-pkts",
/// "out-drops", "out-errors"}` (the shape the NVUE REST API and `-o json`
/// share). A key the switch does not print is not available, never 0;
/// `carrier-transitions` counts both edges, so a flap (down and up) is two.
pub fn parse_link_stats(text: &str) -> Result<PortReadings, ParseError> {
    const TOOL: &str = "nv show interface link stats -o json";
    let v: serde_json::Value = serde_json::from_str(text.trim())
        .map_err(|e| ParseError(format!("{TOOL}: not JSON ({e}): {}", first_line(text))))?;
    let obj = v
        .as_object()
        .ok_or_else(|| ParseError(format!("{TOOL}: not an object: {}", first_line(text))))?;
    let mut out = PortReadings::default();
    const KEYS: [(&str, Canonical); 7] = [
        ("in-bytes", Canonical::RxBytes),
        ("out-bytes", Canonical::TxBytes),
        ("in-pkts", Canonical::RxPackets),
        ("out-pkts", Canonical::TxPackets),
        ("in-drops", Canonical::Discards),
        ("out-drops", Canonical::Drops),
        ("carrier-transitions", Canonical::LinkDown),
    ];
    for (key, c) in KEYS {
        match obj.get(key) {
            None => out.not_available.push(key.to_string()),
            Some(x) => {
                let n = x
                    .as_u64()
                    .ok_or_else(|| ParseError(format!("{TOOL}: {key} is {x}, not a count")))?;
                out.readings.push(Reading {
                    canonical: c,
                    vendor: key.to_string(),
                    priority: None,
                    queue: None,
                    value: if c == Canonical::LinkDown { n / 2 } else { n },
                    bits: None,
                });
            }
        }
    }
    for (k, x) in obj {
        if !KEYS.iter().any(|(key, _)| key == k) {
            if let Some(n) = x.as_u64() {
                out.other.insert(k.clone(), n);
            }
        }
    }
    Ok(out)
}

/// One port's link as `nv show interface IF link -o json` prints it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Link {
    /// `state`: `{"up": {}}` or `{"down": {}}`, the administrative state.
    pub admin_up: Option<bool>,
    /// `oper-status`: `up` or `down`.
    pub oper_up: Option<bool>,
    /// `speed`: `400G`, `100G`, `1G`; `auto` or absent on a port without link.
    pub speed_mbps: Option<u64>,
    pub mtu: Option<u32>,
    /// `protodown`: `enabled` when the switch holds the port down.
    pub protodown: Option<bool>,
    /// `protodown-reason`, e.g. `linkflap`.
    pub protodown_reason: Option<String>,
}

/// `nv show interface IF link -o json`: `state` (admin), `oper-status`,
/// `speed`, `mtu`, `protodown`, `protodown-reason`. Keys it lacks are
/// `None`, never a default.
pub fn parse_link(text: &str) -> Result<Link, ParseError> {
    const TOOL: &str = "nv show interface link -o json";
    let v: serde_json::Value = serde_json::from_str(text.trim())
        .map_err(|e| ParseError(format!("{TOOL}: not JSON ({e}): {}", first_line(text))))?;
    if !v.is_object() {
        return Err(ParseError(format!(
            "{TOOL}: not an object: {}",
            first_line(text)
        )));
    }
    let word = |k: &str| {
        v.get(k)
            .and_then(|x| x.as_str())
            .map(str::to_ascii_lowercase)
    };
    let admin_up = match v.get("state") {
        Some(serde_json::Value::Object(m)) => Some(m.contains_key("up")),
        Some(serde_json::Value::String(s)) => Some(s == "up"),
        _ => None,
    };
    let speed_mbps = match word("speed") {
        Some(s) => speed(&s),
        None => None,
    };
    let mtu = match v.get("mtu") {
        None => None,
        Some(x) => Some(
            x.as_u64()
                .and_then(|m| u32::try_from(m).ok())
                .ok_or_else(|| ParseError(format!("{TOOL}: mtu is {x}, not a number")))?,
        ),
    };
    Ok(Link {
        admin_up,
        oper_up: word("oper-status").map(|s| s == "up"),
        speed_mbps,
        mtu,
        protodown: word("protodown").map(|s| s == "enabled" || s == "on"),
        protodown_reason: word("protodown-reason").filter(|s| !s.is_empty()),
    })
}

/// `400G`, `25G`, `100M` in Mb/s; `auto` and anything else: unknown.
fn speed(s: &str) -> Option<u64> {
    let s = s.trim().to_ascii_uppercase();
    if let Some(g) = s.strip_suffix('G') {
        return g.parse::<u64>().ok().map(|g| g * 1000);
    }
    s.strip_suffix('M').and_then(|m| m.parse().ok())
}

/// `nv show system link flap-protection -o json`: `{"threshold": 5,
/// "interval": 10}` (Cumulus Linux 5.7 and later): a port that flaps
/// `threshold` times within `interval` seconds is protodowned with reason
/// `linkflap`. Values may be printed as strings.
pub fn parse_flap_protection(text: &str) -> Result<(u32, u32), ParseError> {
    const TOOL: &str = "nv show system link flap-protection -o json";
    let v: serde_json::Value = serde_json::from_str(text.trim())
        .map_err(|e| ParseError(format!("{TOOL}: not JSON ({e}): {}", first_line(text))))?;
    let num = |k: &str| -> Result<u32, ParseError> {
        let x = v
            .get(k)
            .ok_or_else(|| ParseError(format!("{TOOL}: no {k} in {}", first_line(text))))?;
        x.as_u64()
            .or_else(|| x.as_str().and_then(|s| s.trim().parse().ok()))
            .and_then(|n| u32::try_from(n).ok())
            .ok_or_else(|| ParseError(format!("{TOOL}: {k} is {x}, not a number")))
    };
    Ok((num("threshold")?, num("interval")?))
}

/// `/etc/lsb-release`: `DISTRIB_DESCRIPTION="Cumulus Linux 5.9.0"`, or
/// `DISTRIB_ID` and `DISTRIB_RELEASE`.
pub fn parse_lsb_release(text: &str) -> Result<String, ParseError> {
    let get = |k: &str| {
        text.lines()
            .find_map(|l| l.trim().strip_prefix(k)?.strip_prefix('='))
            .map(|v| v.trim().trim_matches('"').to_string())
            .filter(|v| !v.is_empty())
    };
    get("DISTRIB_DESCRIPTION")
        .or_else(|| {
            Some(format!(
                "{} {}",
                get("DISTRIB_ID")?,
                get("DISTRIB_RELEASE")?
            ))
        })
        .ok_or_else(|| {
            ParseError(format!(
                "/etc/lsb-release: no DISTRIB_DESCRIPTION or DISTRIB_ID and DISTRIB_RELEASE in {}",
                first_line(text)
            ))
        })
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
