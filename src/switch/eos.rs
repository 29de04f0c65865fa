//! Arista EOS outputs read into canonical counters. Parse functions only.

use crate::counters::{cell, first_line, port_entry, Canonical, ParseError, PortReadings, Reading};

/// `show interfaces counters queue detail` (the egress section): one row
/// per port, traffic class, drop precedence and destination type. The
/// header spans two lines (`Traffic` over `Class`), so rows are read by
/// whitespace: PORT TCn DP DESTTYPE four numbers. Enqueued packets and
/// octets become per-queue TxPackets/TxBytes, dropped packets Drops,
/// dropped octets go to `other`; the queue is the traffic class.
pub fn parse_queue_counters_detail(text: &str) -> Result<Vec<PortReadings>, ParseError> {
    const TOOL: &str = "show interfaces counters queue detail";
    let err = |r: String| ParseError(format!("{TOOL}: {r}"));
    let mut ports = Vec::new();
    let mut header = false;
    for (n, line) in text.lines().enumerate() {
        let toks: Vec<&str> = line.split_whitespace().collect();
        if toks.first() == Some(&"Port") && toks.contains(&"OutEnqPkts") {
            header = true;
            continue;
        }
        if !header || toks.is_empty() || toks == ["Class"] {
            continue;
        }
        let [port, tc, dp, dest, enq_pkts, enq_octets, drop_pkts, drop_octets] = toks[..] else {
            return Err(err(format!(
                "line {}: expected PORT TC DROPPREC DESTTYPE and four counters, got `{}`",
                n + 1,
                line.trim()
            )));
        };
        let queue: u8 = tc
            .strip_prefix("TC")
            .and_then(|q| q.parse().ok())
            .ok_or_else(|| err(format!("line {}: traffic class `{tc}` is not TCn", n + 1)))?;
        let entry = port_entry(&mut ports, port);
        let label = |name: &str| format!("{tc} {dp} {dest} {name}");
        for (name, tok, canonical) in [
            ("OutEnqPkts", enq_pkts, Some(Canonical::TxPackets)),
            ("OutEnqOctets", enq_octets, Some(Canonical::TxBytes)),
            ("OutDropPkts", drop_pkts, Some(Canonical::Drops)),
            ("OutDropOctets", drop_octets, None),
        ] {
            let vendor = label(name);
            match (cell(TOOL, &format!("{port} {vendor}"), tok)?, canonical) {
                (None, _) => entry.not_available.push(vendor),
                (Some(v), Some(c)) => entry.readings.push(Reading {
                    canonical: c,
                    vendor,
                    priority: None,
                    queue: Some(queue),
                    value: v,
                    bits: None,
                }),
                (Some(v), None) => {
                    entry.other.insert(vendor, v);
                }
            }
        }
    }
    if !header {
        return Err(err(format!(
            "no `Port … OutEnqPkts` header in {}",
            first_line(text)
        )));
    }
    Ok(ports)
}
