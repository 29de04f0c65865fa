//! The audit's reads of a SONiC switch: the running CONFIG_DB as
//! `sonic-cfggen -d --print-data` prints it (JSON, one object per table,
//! keys `Ethernet0` or `Ethernet0|3`), `show interfaces status` for the
//! link, and the image's version file. What CONFIG_DB does not hold is
//! not available, with the reason; nothing is guessed.

use serde_json::{Map, Value};

use super::platform::argv;
use crate::counters::ParseError;
use crate::switch::config::{answered, excerpt, fact};
use crate::switch::table::ruled_tables;
use crate::switch::{Answer, EcnQueue, Fact, PortSettings, Query, SwitchConfig};

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
                && ports
                    .iter()
                    .all(|p| table(db, "PFC_WD").is_some_and(|t| t.contains_key(p.as_str()))),
        ),
        Err(e) => Fact::Failed(fail(e)),
    };
    let ports = ports
        .iter()
        .map(|port| {
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
                name: port.clone(),
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
        dscp_prio: crate::switch::config::dscp_not_read(
            switch,
            "CONFIG_DB's DSCP_TO_TC_MAP is not read yet",
        ),
        ports,
    }
}
