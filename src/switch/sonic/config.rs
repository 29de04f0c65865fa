//! The audit's reads of a SONiC switch: the running CONFIG_DB as
//! `sonic-cfggen -d --print-data` prints it (JSON, one object per table,
//! keys `Ethernet0` or `Ethernet0|3`), `show interfaces status` for the
//! link, and the image's version file. What CONFIG_DB does not hold is
//! not available, with the reason; nothing is guessed.
//!
//! A port may be asked for by its CONFIG_DB alias (`etp1`, `PORT|Ethernet0
//! alias`): every read here looks it up under the `Ethernet` name the
//! alias belongs to ([`port_names`]), and reports it under the name asked.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::platform::argv;
use crate::counters::ParseError;
use crate::switch::config::{answered, excerpt, fact};
use crate::switch::table::ruled_tables;
use crate::switch::{Answer, DscpClass, EcnQueue, Fact, PortSettings, Query, SwitchConfig};

const CFGGEN: [&str; 5] = ["sudo", "-n", "sonic-cfggen", "-d", "--print-data"];

pub fn queries(_ports: &[String]) -> Vec<Query> {
    vec![
        argv(&CFGGEN),
        argv(&["show", "interfaces", "status"]),
        argv(&["cat", "/etc/sonic/sonic_version.yml"]),
    ]
}

/// `build_version: 'SONiC.202311.1-…'`.
fn version(text: &str) -> Result<String, ParseError> {
    text.lines()
        .find_map(|l| l.trim().strip_prefix("build_version:"))
        .map(|v| v.trim().trim_matches(|c| c == '\'' || c == '"').to_string())
        .filter(|v| !v.is_empty())
        .ok_or_else(|| ParseError("no build_version line".into()))
}

/// `show interfaces status`: port → operationally up.
fn oper(text: &str) -> Result<Vec<(String, bool)>, ParseError> {
    let t = ruled_tables(text)
        .into_iter()
        .find(|t| t.header.first().is_some_and(|h| h == "Interface"))
        .ok_or_else(|| ParseError("no table headed Interface".into()))?;
    let o = t
        .column("Oper")
        .ok_or_else(|| ParseError("no Oper column".into()))?;
    Ok(t.rows
        .iter()
        .filter_map(|(_, r)| Some((r.first()?.clone(), r.get(o)? == "up")))
        .collect())
}

/// Whether a CONFIG_DB key's port part (`Ethernet0,Ethernet4`) names `port`.
fn names(ports: &str, port: &str) -> bool {
    ports.split(',').any(|p| p.trim() == port)
}

/// Queue ids of `3`, `3-4`.
fn ids(spec: &str) -> Vec<u8> {
    match spec.split_once('-') {
        Some((a, b)) => match (a.parse::<u8>(), b.parse::<u8>()) {
            (Ok(a), Ok(b)) if a <= b && b < 16 => (a..=b).collect(),
            _ => Vec::new(),
        },
        None => spec.parse().into_iter().collect(),
    }
}

/// A table of the dump, or an empty one.
fn table<'a>(db: &'a Value, name: &str) -> Option<&'a Map<String, Value>> {
    db.get(name).and_then(Value::as_object)
}

fn field<'a>(row: &'a Value, name: &str) -> Option<&'a str> {
    row.get(name).and_then(Value::as_str)
}

fn not_in_db<T>(what: &str, why: String) -> Fact<T> {
    Fact::NotAvailable {
        tried: vec![CFGGEN.join(" ")],
        why: format!("{what}: {why}"),
    }
}

/// `PORT_QOS_MAP|Ethernet0` `pfc_enable: "3,4"`.
fn pfc(db: &Value, sw: &str, port: &str) -> Fact<[bool; 8]> {
    let Some(t) = table(db, "PORT_QOS_MAP") else {
        return Fact::Known([false; 8]);
    };
    let mut on = [false; 8];
    for (k, row) in t {
        if !names(k, port) {
            continue;
        }
        let Some(list) = field(row, "pfc_enable") else {
            continue;
        };
        for p in list.split(',').filter(|p| !p.trim().is_empty()) {
            match p.trim().parse::<usize>() {
                Ok(i) if i < 8 => on[i] = true,
                _ => {
                    return Fact::Failed(format!(
                        "{sw}: PORT_QOS_MAP|{k} pfc_enable {list:?} is not a list of priorities 0-7"
                    ))
                }
            }
        }
    }
    Fact::Known(on)
}

/// `QUEUE|Ethernet0|3` `wred_profile` → `WRED_PROFILE|NAME` thresholds
/// (bytes) and `ecn` (`ecn_none` means marking is off).
fn ecn(db: &Value, sw: &str, port: &str) -> Fact<Vec<EcnQueue>> {
    let (Some(queues), profiles) = (table(db, "QUEUE"), table(db, "WRED_PROFILE")) else {
        return Fact::Known(Vec::new());
    };
    let mut out = Vec::new();
    for (k, row) in queues {
        let Some((ps, q)) = k.split_once('|') else {
            continue;
        };
        let Some(name) = field(row, "wred_profile") else {
            continue;
        };
        if !names(ps, port) {
            continue;
        }
        // Older images write the reference `[WRED_PROFILE|AZURE_LOSSLESS]`.
        let name = name
            .trim_matches(|c| c == '[' || c == ']')
            .trim_start_matches("WRED_PROFILE|");
        let Some(p) = profiles.and_then(|t| t.get(name)) else {
            return Fact::Failed(format!(
                "{sw}: QUEUE|{k} names WRED_PROFILE {name}, which CONFIG_DB does not hold"
            ));
        };
        let num = |f: &str| field(p, f).and_then(|v| v.parse::<u64>().ok());
        let (Some(min), Some(max)) = (num("green_min_threshold"), num("green_max_threshold"))
        else {
            return not_in_db(
                &format!("{sw}: WRED_PROFILE|{name}"),
                "no green_min_threshold/green_max_threshold in bytes".into(),
            );
        };
        let marks = field(p, "ecn").is_some_and(|e| e != "ecn_none");
        for tc in ids(q) {
            out.push(EcnQueue {
                tc,
                min_bytes: min,
                max_bytes: max,
                ecn: marks,
            });
        }
    }
    out.sort_by_key(|e| e.tc);
    Fact::Known(out)
}

/// CONFIG_DB's `PORT` table as (name, alias) pairs, in key order; a port
/// without an `alias` field is aliased by its own name (as `show
/// interfaces alias` prints it).
pub fn port_names(db: &Value) -> Vec<(String, String)> {
    table(db, "PORT")
        .map(|t| {
            t.iter()
                .map(|(k, row)| {
                    (
                        k.clone(),
                        field(row, "alias").unwrap_or(k.as_str()).to_string(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The CONFIG_DB name of `port`: itself when `PORT` has it (or has no row
/// for it either way), else the port whose alias it is.
fn db_name(db: &Value, port: &str) -> String {
    if table(db, "PORT").is_some_and(|t| t.contains_key(port)) {
        return port.to_string();
    }
    port_names(db)
        .into_iter()
        .find(|(_, a)| a == port)
        .map_or_else(|| port.to_string(), |(n, _)| n)
}

/// A map name as a `PORT_QOS_MAP` field holds it: `AZURE`, or the older
/// reference form `[DSCP_TO_TC_MAP|AZURE]`.
fn map_name<'a>(v: &'a str, table: &str) -> &'a str {
    let v = v.trim_matches(|c| c == '[' || c == ']');
    v.strip_prefix(table)
        .and_then(|r| r.strip_prefix('|'))
        .unwrap_or(v)
}

/// The `PORT_QOS_MAP` field `f` that applies to `port`: its own entry's
/// (a key listing it), else the switch-wide `global` entry's.
fn qos_field<'a>(db: &'a Value, port: &str, f: &str) -> Option<(&'a str, &'a str)> {
    let t = table(db, "PORT_QOS_MAP")?;
    t.iter()
        .find(|(k, row)| names(k, port) && field(row, f).is_some())
        .or_else(|| {
            t.get_key_value("global")
                .filter(|(_, r)| field(r, f).is_some())
        })
        .and_then(|(k, row)| Some((k.as_str(), field(row, f)?)))
}

/// A `{"0": "1", …}` map table entry as numbers below `below`.
fn numeric_map(
    db: &Value,
    sw: &str,
    table_name: &str,
    name: &str,
    below: (u8, u8),
) -> Result<BTreeMap<u8, u8>, String> {
    let Some(m) = table(db, table_name)
        .and_then(|t| t.get(name))
        .and_then(Value::as_object)
    else {
        return Err(format!(
            "{sw}: PORT_QOS_MAP binds {table_name} {name}, which CONFIG_DB does not hold"
        ));
    };
    let mut out = BTreeMap::new();
    for (k, v) in m {
        let (Some(a), Some(b)) = (
            k.trim().parse::<u8>().ok().filter(|a| *a < below.0),
            v.as_str()
                .and_then(|v| v.trim().parse::<u8>().ok())
                .filter(|b| *b < below.1),
        ) else {
            return Err(format!(
                "{sw}: {table_name}|{name} maps {k:?} to {v}, not a number below {} to one below {}",
                below.0, below.1
            ));
        };
        out.insert(a, b);
    }
    Ok(out)
}

/// The DSCP classification of the audited ports: the `DSCP_TO_TC_MAP`
/// their `PORT_QOS_MAP` entries bind (`dscp_to_tc_map`; a port without one
/// uses the `global` entry's), DSCP → traffic class `TCn`. The class's
/// priority is the TC itself (SONiC's RoCE templates map TC n to PG and
/// PFC priority n), unless the port binds both `tc_to_pg_map` and
/// `pfc_to_pg_map`: then it is the PFC priority whose PG is the TC's PG
/// (the TC's own number when several are, the lowest otherwise; none when
/// no PFC priority maps to that PG). No map bound: no DSCP is classified
/// (everything lands in TC 0, the default). Ports binding different maps
/// cannot be one switch-wide fact: that is an error naming them.
fn dscp_prio(db: &Value, sw: &str, ports: &[String]) -> Fact<BTreeMap<u8, DscpClass>> {
    let mut bound: Vec<(Option<String>, String)> = Vec::new();
    for p in ports {
        let name = db_name(db, p);
        let m = qos_field(db, &name, "dscp_to_tc_map")
            .map(|(_, v)| map_name(v, "DSCP_TO_TC_MAP").to_string());
        if !bound.iter().any(|(b, _)| *b == m) {
            bound.push((m, name));
        }
    }
    if bound.len() > 1 {
        let said: Vec<String> = bound
            .iter()
            .map(|(m, p)| format!("{p} -> {}", m.as_deref().unwrap_or("none")))
            .collect();
        return Fact::Failed(format!(
            "{sw}: the audited ports bind different DSCP_TO_TC_MAPs ({}); the switch-wide DSCP map cannot say which",
            said.join(", ")
        ));
    }
    let Some((Some(map), port)) = bound.into_iter().next() else {
        return Fact::Known(BTreeMap::new());
    };
    let dscp_tc = match numeric_map(db, sw, "DSCP_TO_TC_MAP", &map, (64, 16)) {
        Ok(m) => m,
        Err(e) => return Fact::Failed(e),
    };
    let pg_maps = match (
        qos_field(db, &port, "tc_to_pg_map"),
        qos_field(db, &port, "pfc_to_pg_map"),
    ) {
        (Some((_, tc)), Some((_, pfc))) => {
            let tc = numeric_map(
                db,
                sw,
                "TC_TO_PRIORITY_GROUP_MAP",
                map_name(tc, "TC_TO_PRIORITY_GROUP_MAP"),
                (16, 16),
            );
            let pfc = numeric_map(
                db,
                sw,
                "PFC_PRIORITY_TO_PRIORITY_GROUP_MAP",
                map_name(pfc, "PFC_PRIORITY_TO_PRIORITY_GROUP_MAP"),
                (8, 16),
            );
            match (tc, pfc) {
                (Ok(tc), Ok(pfc)) => Some((tc, pfc)),
                (Err(e), _) | (_, Err(e)) => return Fact::Failed(e),
            }
        }
        _ => None,
    };
    let priority = |tc: u8| -> Option<u8> {
        let Some((tc_pg, pfc_pg)) = &pg_maps else {
            return (tc < 8).then_some(tc);
        };
        let pg = tc_pg.get(&tc)?;
        let prios: Vec<u8> = pfc_pg
            .iter()
            .filter(|(_, g)| *g == pg)
            .map(|(p, _)| *p)
            .collect();
        if prios.contains(&tc) {
            Some(tc)
        } else {
            prios.first().copied()
        }
    };
    Fact::Known(
        dscp_tc
            .into_iter()
            .map(|(d, tc)| {
                (
                    d,
                    DscpClass {
                        class: format!("TC{tc}"),
                        priority: priority(tc),
                    },
                )
            })
            .collect(),
    )
}

pub fn parse(switch: &str, ports: &[String], answers: &[Answer]) -> SwitchConfig {
    let qs = queries(ports);
    let nos_version = fact(switch, &qs[2], answers.get(2), version, Ok);
    let db: Result<Value, Fact<()>> = answered(switch, &qs[0], answers.first()).and_then(|t| {
        serde_json::from_str::<Value>(t.trim()).map_err(|e| {
            Fact::Failed(format!(
                "{switch}: `{}` is not JSON ({e}); it printed {}",
                qs[0].display(),
                excerpt(t)
            ))
        })
    });
    let links = fact(switch, &qs[1], answers.get(1), oper, Ok);
    let fail = |e: &Fact<()>| -> String {
        match e {
            Fact::Failed(s) => s.clone(),
            Fact::NotAvailable { why, .. } => why.clone(),
            Fact::Known(()) => String::new(),
        }
    };
    let pfc_watchdog = match &db {
        // `PFC_WD|Ethernet0 {action, detection_time, restoration_time}`
        // per port, `PFC_WD|GLOBAL {POLL_INTERVAL}`: armed where every
        // audited port has an entry.
        Ok(db) => Fact::Known(
            !ports.is_empty()
                && ports.iter().all(|p| {
                    table(db, "PFC_WD").is_some_and(|t| t.contains_key(db_name(db, p).as_str()))
                }),
        ),
        Err(e) => Fact::Failed(fail(e)),
    };
    let dscp = match &db {
        Ok(db) => dscp_prio(db, switch, ports),
        Err(e) => Fact::Failed(fail(e)),
    };
    let ports = ports
        .iter()
        .map(|asked| {
            // The CONFIG_DB name of a port asked for by its alias.
            let name = db.as_ref().map_or_else(|_| asked.clone(), |db| db_name(db, asked));
            let port = &name;
            let link_up = match &links {
                Fact::Known(l) => match l.iter().find(|(n, _)| n == port) {
                    Some((_, up)) => Fact::Known(*up),
                    None => Fact::Failed(format!(
                        "{switch}: `show interfaces status` has no row for {port}"
                    )),
                },
                Fact::NotAvailable { tried, why } => Fact::NotAvailable {
                    tried: tried.clone(),
                    why: why.clone(),
                },
                Fact::Failed(e) => Fact::Failed(e.clone()),
            };
            let (speed_mbps, mtu, pfc, ecn) = match &db {
                Ok(db) => {
                    let row = table(db, "PORT").and_then(|t| t.get(port.as_str()));
                    let num = |f: &str| -> Fact<u64> {
                        match row.and_then(|r| field(r, f)).map(|v| v.parse::<u64>()) {
                            Some(Ok(v)) => Fact::Known(v),
                            Some(Err(_)) => Fact::Failed(format!(
                                "{switch}: PORT|{port} {f} is not a number"
                            )),
                            None => not_in_db(
                                &format!("{switch}: PORT|{port}"),
                                format!("no {f} in CONFIG_DB"),
                            ),
                        }
                    };
                    (
                        num("speed"),
                        num("mtu").map(|m| u32::try_from(m).unwrap_or(u32::MAX)),
                        pfc(db, switch, port),
                        ecn(db, switch, port),
                    )
                }
                Err(e) => (
                    Fact::Failed(fail(e)),
                    Fact::Failed(fail(e)),
                    Fact::Failed(fail(e)),
                    Fact::Failed(fail(e)),
                ),
            };
            PortSettings {
                name: asked.clone(),
                link_up,
                speed_mbps,
                mtu,
                pfc,
                ecn,
                // The Xoff size lives in BUFFER_PROFILE, or in APPL_DB where
                // the dynamic buffer model computes it: not read.
                pfc_xoff_bytes: not_in_db(
                    &format!("{switch}: {port}"),
                    "the PFC Xoff threshold is in BUFFER_PROFILE or computed by the dynamic buffer manager; rocegate does not read it on sonic".into(),
                ),
            }
        })
        .collect();
    SwitchConfig {
        nos_version,
        pfc_watchdog,
        dscp_prio: dscp,
        ports,
    }
}
