//! Counters, as [`PortReadings`] named the way the `linux` platform names
//! the same meaning: `show interfaces`, `show interfaces counters errors`
//! and `… discards`, `show priority-flow-control counters`, `show qos
//! interfaces ecn counters queue`, `show interfaces counters queue drops`
//! (VOQ platforms) and `… queue detail`, as JSON and as text. A counter EOS
//! does not print, or prints as `-`, is `not_available`, never 0. The port
//! states in the same `show interfaces` answer are `state`'s to read.

use serde_json::Value;

use super::{counter, err, join, keyed, lookup, member, object, parse_root, Object};
use crate::counters::{cell, first_line, port_entry, Canonical, ParseError, PortReadings, Reading};

/// Where one counter goes: its canonical name (`None`: `other`), and the
/// priority or queue it counts.
#[derive(Clone, Copy)]
struct Slot {
    canonical: Option<Canonical>,
    priority: Option<u8>,
    queue: Option<u8>,
}

impl Slot {
    fn port(canonical: Option<Canonical>) -> Slot {
        Slot {
            canonical,
            priority: None,
            queue: None,
        }
    }
}

/// One counter into `entry`: a reading where EOS printed a number, the
/// vendor name in `not_available` where it printed nothing (`v` is `None`)
/// or `-`, `other` where the vocabulary has no name for it.
fn put(
    tool: &str,
    path: &str,
    entry: &mut PortReadings,
    vendor: String,
    v: Option<&Value>,
    slot: Slot,
) -> Result<(), ParseError> {
    let read = match v {
        Some(v) => counter(tool, path, v)?,
        None => None,
    };
    match (read, slot.canonical) {
        (None, _) => entry.not_available.push(vendor),
        (Some(value), Some(canonical)) => entry.readings.push(Reading {
            canonical,
            vendor,
            priority: slot.priority,
            queue: slot.queue,
            value,
            bits: None,
        }),
        (Some(value), None) => {
            entry.other.insert(vendor, value);
        }
    }
    Ok(())
}

/// The counters of `table` found under `m` (at `path`), then every other
/// whole number under `m`, nested objects included, into `other` under its
/// dotted name. Floats (`counterRefreshTime`) and strings are not counters.
fn table_and_others(
    tool: &str,
    path: &str,
    entry: &mut PortReadings,
    m: &Object,
    table: &[(&str, Option<Canonical>)],
) -> Result<(), ParseError> {
    for (name, canonical) in table {
        let v = lookup(tool, path, m, name)?;
        put(
            tool,
            &join(path, name),
            entry,
            name.to_string(),
            v,
            Slot::port(*canonical),
        )?;
    }
    others(entry, "", m, &|p| table.iter().any(|(n, _)| *n == p));
    Ok(())
}

fn others(entry: &mut PortReadings, prefix: &str, m: &Object, known: &dyn Fn(&str) -> bool) {
    for (k, v) in m {
        let p = join(prefix, k);
        if known(&p) {
            continue;
        }
        match v {
            Value::Number(n) => {
                if let Some(x) = n.as_u64() {
                    entry.other.insert(p, x);
                }
            }
            Value::Object(o) => others(entry, &p, o, known),
            _ => {}
        }
    }
}

/// `TC3` → 3.
fn traffic_class(tool: &str, path: &str, tc: &str) -> Result<u8, ParseError> {
    tc.strip_prefix("TC")
        .and_then(|n| n.parse().ok())
        .ok_or_else(|| err(tool, format!("{path}: `{tc}` is not a traffic class TCn")))
}

/// `show interfaces` → `interfaces.<port>.interfaceCounters`, the counters
/// read for their meaning, named by their path under `interfaceCounters`.
/// As on `linux`: FCS errors are CrcErrors, input discards Discards (`ip`'s
/// rx dropped), output discards Drops. A port's packets are the three
/// RxPackets (TxPackets) readings together: EOS counts unicast, multicast
/// and broadcast apart, where `ip` counts them as one.
const INTERFACE_COUNTERS: &[(&str, Option<Canonical>)] = &[
    ("inOctets", Some(Canonical::RxBytes)),
    ("outOctets", Some(Canonical::TxBytes)),
    ("inUcastPkts", Some(Canonical::RxPackets)),
    ("inMulticastPkts", Some(Canonical::RxPackets)),
    ("inBroadcastPkts", Some(Canonical::RxPackets)),
    ("outUcastPkts", Some(Canonical::TxPackets)),
    ("outMulticastPkts", Some(Canonical::TxPackets)),
    ("outBroadcastPkts", Some(Canonical::TxPackets)),
    ("inDiscards", Some(Canonical::Discards)),
    ("outDiscards", Some(Canonical::Drops)),
    ("inputErrorsDetail.fcsErrors", Some(Canonical::CrcErrors)),
    (
        "inputErrorsDetail.symbolErrors",
        Some(Canonical::SymbolErrors),
    ),
    ("totalInErrors", None),
    ("totalOutErrors", None),
    ("inputErrorsDetail.alignmentErrors", None),
    ("inputErrorsDetail.runtFrames", None),
    ("inputErrorsDetail.giantFrames", None),
    ("inputErrorsDetail.rxPause", None),
    ("outputErrorsDetail.txPause", None),
];

/// `show interfaces` (all ports, or `show interfaces EthernetN`): the
/// counters of [`INTERFACE_COUNTERS`], plus LinkDown as half of
/// `linkStatusChanges` (one change down, one up per flap: the rule `linux`
/// applies to `carrier_changes`). A port without `interfaceCounters` (a
/// loopback, a subinterface) lists them all as not available. Also read by
/// [`parse_interfaces_state`], so one call serves both.
///
/// [`parse_interfaces_state`]: super::parse_interfaces_state
pub fn parse_interfaces_counters(text: &str) -> Result<Vec<PortReadings>, ParseError> {
    const TOOL: &str = "show interfaces";
    const LINK_DOWN: &str = "linkStatusChanges/2";
    let root = parse_root(TOOL, text)?;
    let mut out = Vec::new();
    for (name, intf) in keyed(TOOL, "", &root, "interfaces")? {
        let mut entry = PortReadings::new(name);
        let at = format!("interfaces.{name}.interfaceCounters");
        let Some(c) = intf.get("interfaceCounters") else {
            entry.not_available = INTERFACE_COUNTERS
                .iter()
                .map(|(n, _)| n.to_string())
                .chain([LINK_DOWN.to_string()])
                .collect();
            out.push(entry);
            continue;
        };
        let c = object(TOOL, &at, c)?;
        table_and_others(TOOL, &at, &mut entry, c, INTERFACE_COUNTERS)?;
        entry.other.remove("linkStatusChanges");
        let changes = match c.get("linkStatusChanges") {
            Some(v) => counter(TOOL, &join(&at, "linkStatusChanges"), v)?,
            None => None,
        };
        match changes {
            Some(n) => entry.readings.push(Reading {
                canonical: Canonical::LinkDown,
                vendor: LINK_DOWN.into(),
                priority: None,
                queue: None,
                value: n / 2,
                bits: None,
            }),
            None => entry.not_available.push(LINK_DOWN.into()),
        }
        out.push(entry);
    }
    Ok(out)
}

/// `show interfaces counters errors` → `interfaceErrorCounters.<port>`.
const ERROR_COUNTERS: &[(&str, Option<Canonical>)] = &[
    ("fcsErrors", Some(Canonical::CrcErrors)),
    ("symbolErrors", Some(Canonical::SymbolErrors)),
    ("inErrors", None),
    ("outErrors", None),
    ("alignmentErrors", None),
    ("frameTooLongs", None),
    ("frameTooShorts", None),
];

/// `show interfaces counters errors`: FCS errors as CrcErrors and symbol
/// errors as SymbolErrors (the same hardware counters as `show interfaces`'
/// `inputErrorsDetail`: read one or the other, not both), the rest in
/// `other`.
pub fn parse_counters_errors(text: &str) -> Result<Vec<PortReadings>, ParseError> {
    flat_counters(
        "show interfaces counters errors",
        text,
        "interfaceErrorCounters",
        ERROR_COUNTERS,
    )
}

/// `show interfaces counters discards` → `interfaces.<port>.{inDiscards,
/// outDiscards}` as Discards and Drops (the switch-wide totals beside
/// `interfaces` are left out).
pub fn parse_counters_discards(text: &str) -> Result<Vec<PortReadings>, ParseError> {
    flat_counters(
        "show interfaces counters discards",
        text,
        "interfaces",
        &[
            ("inDiscards", Some(Canonical::Discards)),
            ("outDiscards", Some(Canonical::Drops)),
        ],
    )
}

fn flat_counters(
    tool: &str,
    text: &str,
    key: &str,
    table: &[(&str, Option<Canonical>)],
) -> Result<Vec<PortReadings>, ParseError> {
    let root = parse_root(tool, text)?;
    keyed(tool, "", &root, key)?
        .into_iter()
        .map(|(name, m)| {
            let mut entry = PortReadings::new(name);
            table_and_others(tool, &join(key, name), &mut entry, m, table)?;
            Ok(entry)
        })
        .collect()
}

/// PFC frames, as PfcPauseRx/PfcPauseTx. Two shapes:
/// - `show priority-flow-control counters` at revision 3 (what
///   [`Command::new`] pins): `interfaceCounters.<port>.{rxFrames,txFrames}`,
///   the port's totals over all priorities, so the readings carry no
///   priority;
/// - `show interfaces EthernetN priority-flow-control counters detail`:
///   `interfaces.<port>.priorities."<p>".{rxFrames,txFrames}`, per priority
///   (the shape Meta's DNE-TaaC reads on 7800-class switches; no captured
///   output was found).
///
/// [`Command::new`]: super::Command::new
pub fn parse_pfc_counters(text: &str) -> Result<Vec<PortReadings>, ParseError> {
    const TOOL: &str = "show priority-flow-control counters";
    const FRAMES: &[(&str, Option<Canonical>)] = &[
        ("rxFrames", Some(Canonical::PfcPauseRx)),
        ("txFrames", Some(Canonical::PfcPauseTx)),
    ];
    let root = parse_root(TOOL, text)?;
    if root.contains_key("interfaceCounters") {
        return keyed(TOOL, "", &root, "interfaceCounters")?
            .into_iter()
            .map(|(name, m)| {
                let mut entry = PortReadings::new(name);
                table_and_others(
                    TOOL,
                    &join("interfaceCounters", name),
                    &mut entry,
                    m,
                    FRAMES,
                )?;
                Ok(entry)
            })
            .collect();
    }
    if !root.contains_key("interfaces") {
        return Err(err(
            TOOL,
            "expected `interfaceCounters` (revision 3) or `interfaces.<port>.priorities` (counters detail)",
        ));
    }
    let mut out = Vec::new();
    for (name, m) in keyed(TOOL, "", &root, "interfaces")? {
        let at = format!("interfaces.{name}");
        let prios = object(
            TOOL,
            &join(&at, "priorities"),
            member(TOOL, &at, m, "priorities")?,
        )?;
        let mut entry = PortReadings::new(name);
        for (p, v) in prios {
            let pat = join(&join(&at, "priorities"), p);
            let priority = p
                .parse::<u8>()
                .ok()
                .filter(|p| *p < 8)
                .ok_or_else(|| err(TOOL, format!("{pat}: `{p}` is not a priority 0..7")))?;
            let frames = object(TOOL, &pat, v)?;
            for (key, canonical) in FRAMES {
                put(
                    TOOL,
                    &join(&pat, key),
                    &mut entry,
                    format!("priorities.{p}.{key}"),
                    frames.get(*key),
                    Slot {
                        canonical: *canonical,
                        priority: Some(priority),
                        queue: None,
                    },
                )?;
            }
        }
        out.push(entry);
    }
    Ok(out)
}

/// `show qos interfaces ecn counters queue` → `intfQueueCounters.<port>.
/// queueCounters."<queue>"`: packets ECN-marked per transmit queue, written
/// as a string; `-` where ECN is not configured on that queue, which is not
/// available, not 0.
pub fn parse_ecn_counters(text: &str) -> Result<Vec<PortReadings>, ParseError> {
    const TOOL: &str = "show qos interfaces ecn counters queue";
    let root = parse_root(TOOL, text)?;
    let mut out = Vec::new();
    for (name, m) in keyed(TOOL, "", &root, "intfQueueCounters")? {
        let at = format!("intfQueueCounters.{name}");
        let queues = object(
            TOOL,
            &join(&at, "queueCounters"),
            member(TOOL, &at, m, "queueCounters")?,
        )?;
        let mut entry = PortReadings::new(name);
        for (q, v) in queues {
            let path = join(&join(&at, "queueCounters"), q);
            let queue = q
                .parse::<u8>()
                .map_err(|_| err(TOOL, format!("{path}: `{q}` is not a queue number")))?;
            put(
                TOOL,
                &path,
                &mut entry,
                format!("queueCounters.{q}"),
                Some(v),
                Slot {
                    canonical: Some(Canonical::EcnMarked),
                    priority: None,
                    queue: Some(queue),
                },
            )?;
        }
        out.push(entry);
    }
    Ok(out)
}

/// `show interfaces counters queue drops`, on VOQ platforms (7280R, 7500R,
/// 7800R, 7700R): per port and traffic class, the packets dropped in the
/// ingress VOQs headed for this port and in its egress queue, both as Drops
/// on queue n. Elsewhere (7060X, 7050X) the command itself is refused and
/// [`parse_response`] says not available.
///
/// [`parse_response`]: super::parse_response
pub fn parse_queue_drops(text: &str) -> Result<Vec<PortReadings>, ParseError> {
    const TOOL: &str = "show interfaces counters queue drops";
    let root = parse_root(TOOL, text)?;
    let mut out = Vec::new();
    for (name, m) in keyed(TOOL, "", &root, "interfaces")? {
        let at = format!("interfaces.{name}");
        let tcs = object(
            TOOL,
            &join(&at, "trafficClasses"),
            member(TOOL, &at, m, "trafficClasses")?,
        )?;
        let mut entry = PortReadings::new(name);
        for (tc, v) in tcs {
            let tat = join(&join(&at, "trafficClasses"), tc);
            let queue = traffic_class(TOOL, &tat, tc)?;
            let t = object(TOOL, &tat, v)?;
            for side in ["ingressVoqCounters", "egressQueueCounters"] {
                let path = format!("{side}.countersSum.droppedPackets");
                put(
                    TOOL,
                    &join(&tat, &path),
                    &mut entry,
                    format!("trafficClasses.{tc}.{path}"),
                    lookup(TOOL, &tat, t, &path)?,
                    Slot {
                        canonical: Some(Canonical::Drops),
                        priority: None,
                        queue: Some(queue),
                    },
                )?;
            }
        }
        out.push(entry);
    }
    Ok(out)
}

/// `show interfaces counters queue detail` as JSON: `egressQueueCounters.
/// interfaces.<port>.{ucastQueues,mcastQueues}.trafficClasses.TCn.
/// dropPrecedences.DPn`. `droppedPackets` is Drops on queue n (not available
/// where missing); `enqueuedPackets` and `enqueuedBytes`, where printed,
/// TxPackets and TxBytes, as in the text form
/// ([`parse_queue_counters_detail`]); other numbers go to `other`.
pub fn parse_queue_counters_detail_json(text: &str) -> Result<Vec<PortReadings>, ParseError> {
    const TOOL: &str = "show interfaces counters queue detail";
    const FIELDS: &[(&str, Option<Canonical>)] = &[
        ("enqueuedPackets", Some(Canonical::TxPackets)),
        ("enqueuedBytes", Some(Canonical::TxBytes)),
    ];
    let root = parse_root(TOOL, text)?;
    let egress = object(
        TOOL,
        "egressQueueCounters",
        member(TOOL, "", &root, "egressQueueCounters")?,
    )?;
    let mut out = Vec::new();
    for (name, m) in keyed(TOOL, "egressQueueCounters", egress, "interfaces")? {
        let mut entry = PortReadings::new(name);
        for dest in ["ucastQueues", "mcastQueues"] {
            let iat = format!("egressQueueCounters.interfaces.{name}");
            let Some(tcs) = lookup(TOOL, &iat, m, &format!("{dest}.trafficClasses"))? else {
                continue;
            };
            let dat = join(&iat, dest);
            let tcs = object(TOOL, &join(&dat, "trafficClasses"), tcs)?;
            for (tc, v) in tcs {
                let tat = join(&join(&dat, "trafficClasses"), tc);
                let queue = traffic_class(TOOL, &tat, tc)?;
                let dps = object(
                    TOOL,
                    &join(&tat, "dropPrecedences"),
                    member(TOOL, &tat, object(TOOL, &tat, v)?, "dropPrecedences")?,
                )?;
                for (dp, v) in dps {
                    let pat = join(&join(&tat, "dropPrecedences"), dp);
                    let d = object(TOOL, &pat, v)?;
                    let label = format!("{dest}.{tc}.{dp}");
                    let slot = |canonical| Slot {
                        canonical,
                        priority: None,
                        queue: Some(queue),
                    };
                    put(
                        TOOL,
                        &join(&pat, "droppedPackets"),
                        &mut entry,
                        format!("{label}.droppedPackets"),
                        d.get("droppedPackets"),
                        slot(Some(Canonical::Drops)),
                    )?;
                    for (key, canonical) in FIELDS {
                        if let Some(v) = d.get(*key) {
                            put(
                                TOOL,
                                &join(&pat, key),
                                &mut entry,
                                format!("{label}.{key}"),
                                Some(v),
                                slot(*canonical),
                            )?;
                        }
                    }
                    for (key, v) in d {
                        if key != "droppedPackets" && !FIELDS.iter().any(|(k, _)| k == key) {
                            if let Some(x) = v.as_u64() {
                                entry.other.insert(format!("{label}.{key}"), x);
                            }
                        }
                    }
                }
            }
        }
        out.push(entry);
    }
    Ok(out)
}

// ----------------------------------------------------------- text counters

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
