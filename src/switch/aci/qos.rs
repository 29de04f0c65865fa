//! The audit's reading of an ACI fabric's RoCE QoS (aci.md §3): the
//! fabric-wide classes (`qosClass` level1..6 with `qosCong` and
//! `qosPfcPol`), the DSCP classification of the custom QoS policies
//! (`qosDscpClass`), the interface PFC policies (`qosPfcIfPol`) and, per
//! port of this switch, the PFC policy the switch actually resolved for it
//! (`l1RsQosPfcIfPolCons` under the port's `l1PhysIf`).
//!
//! The answers come in [`super::Aci`]'s `config_queries` order: the
//! switch's `topSystem`, the class tree, the DSCP classes, the interface
//! PFC policies, then one `l1PhysIf` per port.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::{attr, imdata, number, objects, phys};
use crate::switch::config::{DscpClass, EcnQueue, Fact, PortSettings, SwitchConfig};
use crate::switch::Answer;

type Attrs = Map<String, Value>;

/// One QoS level of the fabric as its `qosClass` subtree says.
#[derive(Debug, Default, Clone)]
pub(super) struct Level {
    /// PFC on the class (`qosPfcPol.adminSt=yes`) and the CoS it makes
    /// no-drop.
    pub no_drop_cos: Option<u8>,
    /// `qosCong`: `wred` with `ecn=enabled` marks; the thresholds are in
    /// percent of the queue.
    pub ecn: Option<(u64, u64)>,
    pub algo: String,
}

/// The CoS a `qosPfcPol` makes no-drop, when PFC is on for its class.
fn no_drop(pol: &Attrs) -> Option<u8> {
    if attr(pol, "adminSt") != Some("yes") {
        return None;
    }
    attr(pol, "noDropCos")?
        .strip_prefix("cos")?
        .parse::<u8>()
        .ok()
        .filter(|c| *c < 8)
}

/// `level2` from a class's `prio`, or from its DN (`…/class-level2/…`).
fn level_of(a: &Attrs) -> Option<String> {
    if let Some(p) = attr(a, "prio").filter(|p| p.starts_with("level")) {
        return Some(p.to_string());
    }
    let dn = attr(a, "dn")?;
    let rest = dn.split("/class-").nth(1)?;
    Some(rest.split('/').next()?.to_string())
}

/// Every level of the class tree (`qosinst-default?rsp-subtree=full`).
pub(super) fn levels(items: &[Value]) -> BTreeMap<String, Level> {
    let mut out = BTreeMap::new();
    let mut stack: Vec<&Value> = items.iter().collect();
    while let Some(v) = stack.pop() {
        let Some(m) = v.as_object() else { continue };
        for (cls, o) in m {
            let kids = o.get("children").and_then(Value::as_array);
            if cls == "qosClass" {
                let Some(a) = o.get("attributes").and_then(Value::as_object) else {
                    continue;
                };
                let Some(name) = level_of(a) else { continue };
                let kids = kids.map(Vec::as_slice).unwrap_or_default();
                let mut pfc = Vec::new();
                objects(kids, "qosPfcPol", &mut pfc);
                let mut cong = Vec::new();
                objects(kids, "qosCong", &mut cong);
                let cong = cong.first();
                let algo = cong.and_then(|c| attr(c, "algo")).unwrap_or("tail-drop");
                let ecn = cong
                    .filter(|c| algo == "wred" && attr(c, "ecn") == Some("enabled"))
                    .map(|c| {
                        (
                            number(c, "wredMinThreshold").unwrap_or(0),
                            number(c, "wredMaxThreshold").unwrap_or(100),
                        )
                    });
                out.insert(
                    name,
                    Level {
                        no_drop_cos: pfc.first().and_then(|p| no_drop(p)),
                        ecn,
                        algo: algo.to_string(),
                    },
                );
            } else if let Some(k) = kids {
                stack.extend(k.iter());
            }
        }
    }
    out
}

/// The no-drop CoS of each level from `qosPfcPol` objects read by class
/// (their DN names the level): what the per-class counters need.
pub(super) fn no_drop_by_level(items: &[Value]) -> BTreeMap<String, u8> {
    let mut pols = Vec::new();
    objects(items, "qosPfcPol", &mut pols);
    pols.iter()
        .filter_map(|p| Some((level_of(p)?, no_drop(p)?)))
        .collect()
}

/// A DSCP as the APIC writes it: `AF31`, `CS6`, `EF`, `VA` or `0`..`63`.
pub fn dscp_value(name: &str) -> Option<u8> {
    let n = name.trim().to_ascii_uppercase();
    if let Ok(v) = n.parse::<u8>() {
        return (v < 64).then_some(v);
    }
    match n.as_str() {
        "EF" => return Some(46),
        "VA" => return Some(44),
        _ => {}
    }
    if let Some(c) = n.strip_prefix("CS") {
        return c.parse::<u8>().ok().filter(|c| *c < 8).map(|c| c * 8);
    }
    let af = n.strip_prefix("AF")?;
    let mut d = af.chars().map(|c| c.to_digit(10));
    match (d.next()??, d.next()??, d.next()) {
        (x @ 1..=4, y @ 1..=3, None) => Some((8 * x + 2 * y) as u8),
        _ => None,
    }
}

/// The DSCP classification of every custom QoS policy. A DSCP two
/// policies put in different levels lands in either, depending on the EPG:
/// its class then names both and carries no priority.
fn classification(
    dscp: &[Value],
    levels: &BTreeMap<String, Level>,
) -> Result<BTreeMap<u8, DscpClass>, String> {
    let mut rules = Vec::new();
    objects(dscp, "qosDscpClass", &mut rules);
    // dscp -> (level, CoS rewrite) per rule.
    let mut by: BTreeMap<u8, Vec<(String, Option<u8>)>> = BTreeMap::new();
    for r in &rules {
        let from = attr(r, "from").unwrap_or_default();
        let to = attr(r, "to").unwrap_or(from);
        let (Some(lo), Some(hi)) = (dscp_value(from), dscp_value(to)) else {
            return Err(format!(
                "qosDscpClass {} has a DSCP range the APIC does not write: {from}..{to}",
                attr(r, "dn").unwrap_or("?")
            ));
        };
        let level = attr(r, "prio").unwrap_or("unspecified").to_string();
        let cos = attr(r, "targetCos").and_then(|c| c.parse::<u8>().ok());
        for d in lo.min(hi)..=hi.max(lo) {
            let e = by.entry(d).or_default();
            if !e.iter().any(|(l, _)| *l == level) {
                e.push((level.clone(), cos));
            }
        }
    }
    Ok(by
        .into_iter()
        .map(|(d, ls)| {
            let c = match ls.as_slice() {
                [(l, cos)] => DscpClass {
                    class: l.clone(),
                    priority: levels.get(l).and_then(|x| x.no_drop_cos).or(*cos),
                },
                several => DscpClass {
                    class: several
                        .iter()
                        .map(|(l, _)| l.as_str())
                        .collect::<Vec<_>>()
                        .join(" or "),
                    priority: None,
                },
            };
            (d, c)
        })
        .collect())
}

/// The switch's configuration from its APIC's answers.
pub(super) fn parse_config(switch: &str, ports: &[String], answers: &[Answer]) -> SwitchConfig {
    let read = |k: usize| -> Result<Vec<Value>, String> {
        match answers.get(k) {
            Some(a) if a.exit == Some(0) => imdata(&a.text),
            Some(a) => Err(a.text.trim().to_string()),
            None => Err("no answer".into()),
        }
    };
    let failed = |e: &str| format!("{switch}: {e}");
    let nos_version = match read(0) {
        Ok(items) => {
            let mut s = Vec::new();
            objects(&items, "topSystem", &mut s);
            match s.first().and_then(|a| attr(a, "version")) {
                Some(v) => Fact::Known(v.to_string()),
                None => Fact::Failed(failed("topSystem has no version")),
            }
        }
        Err(e) => Fact::Failed(failed(&e)),
    };
    let levels = read(1).map(|items| levels(&items));
    let dscp_prio = match (&levels, read(2)) {
        (Ok(l), Ok(items)) => match classification(&items, l) {
            Ok(m) => Fact::Known(m),
            Err(e) => Fact::Failed(failed(&e)),
        },
        (Err(e), _) => Fact::Failed(failed(e)),
        (_, Err(e)) => Fact::Failed(failed(&e)),
    };
    // PFC no-drop priorities: every class whose qosPfcPol is on, by its
    // noDropCos. Fabric-wide; a port's interface policy may turn it off.
    let class_pfc: Result<[bool; 8], String> = levels.clone().map(|l| {
        let mut v = [false; 8];
        for c in l.values().filter_map(|x| x.no_drop_cos) {
            v[usize::from(c)] = true;
        }
        v
    });
    let ecn = ecn_fact(switch, &levels);
    let if_pols: Result<BTreeMap<String, String>, String> = read(3).map(|items| {
        let mut p = Vec::new();
        objects(&items, "qosPfcIfPol", &mut p);
        p.iter()
            .filter_map(|a| Some((attr(a, "dn")?.to_string(), attr(a, "adminSt")?.to_string())))
            .collect()
    });
    let ports = ports
        .iter()
        .enumerate()
        .map(|(k, p)| port(switch, p, read(k + 4), &class_pfc, &if_pols, &ecn))
        .collect();
    SwitchConfig {
        nos_version,
        pfc_watchdog: Fact::NotAvailable {
            tried: vec![super::QOS_TREE.into()],
            why: format!("{switch}: no verified APIC class for the PFC watchdog (aci.md §7)"),
        },
        dscp_prio,
        ports,
    }
}

/// ECN of the no-drop classes. The APIC sets WRED/ECN per class in percent
/// of the queue, which cannot be compared with the profile's KB: known
/// only when no no-drop class marks at all (`[]`: no ECN marking).
fn ecn_fact(switch: &str, levels: &Result<BTreeMap<String, Level>, String>) -> Fact<Vec<EcnQueue>> {
    let l = match levels {
        Ok(l) => l,
        Err(e) => return Fact::Failed(format!("{switch}: {e}")),
    };
    let lossless: Vec<(&String, &Level)> =
        l.iter().filter(|(_, x)| x.no_drop_cos.is_some()).collect();
    if !lossless.is_empty() && lossless.iter().all(|(_, x)| x.ecn.is_none()) {
        return Fact::Known(Vec::new());
    }
    let said: Vec<String> = lossless
        .iter()
        .map(|(n, x)| match x.ecn {
            Some((lo, hi)) => format!(
                "{n} (cos{}) marks ECN from {lo}% to {hi}% of the queue",
                x.no_drop_cos.unwrap_or_default()
            ),
            None => format!(
                "{n} (cos{}) does not mark ({})",
                x.no_drop_cos.unwrap_or_default(),
                x.algo
            ),
        })
        .collect();
    Fact::NotAvailable {
        tried: vec![super::QOS_TREE.into()],
        why: format!(
            "{switch}: ACI sets WRED/ECN per QoS class in percent of the queue, not in bytes: {}",
            if said.is_empty() {
                "no class is no-drop".to_string()
            } else {
                said.join("; ")
            }
        ),
    }
}

/// One port: `l1PhysIf` (MTU, speed) and the interface PFC policy the
/// switch resolved for it. A port without the relation uses the policy
/// named `default`; a policy that is `off` turns PFC off on the port
/// whatever the classes say (`auto` follows DCBX, `on` forces it).
fn port(
    switch: &str,
    p: &str,
    l1: Result<Vec<Value>, String>,
    class_pfc: &Result<[bool; 8], String>,
    if_pols: &Result<BTreeMap<String, String>, String>,
    ecn: &Fact<Vec<EcnQueue>>,
) -> PortSettings {
    let src = format!("{}.json", phys(p));
    fn failed<T>(switch: &str, p: &str, e: &str) -> Fact<T> {
        Fact::Failed(format!("{switch}: {p}: {e}"))
    }
    fn not<T>(src: &str, switch: &str, why: String) -> Fact<T> {
        Fact::NotAvailable {
            tried: vec![src.to_string()],
            why: format!("{switch}: {why}"),
        }
    }
    let l1 = l1.and_then(|items| {
        let mut f = Vec::new();
        objects(&items, "l1PhysIf", &mut f);
        let a = f.first().map(|a| (*a).clone()).ok_or("no l1PhysIf")?;
        let mut rel = Vec::new();
        objects(&items, "l1RsQosPfcIfPolCons", &mut rel);
        let pol = rel
            .first()
            .and_then(|r| attr(r, "tDn"))
            .unwrap_or("uni/infra/pfc-default")
            .to_string();
        Ok((a, pol))
    });
    let pfc = match (&l1, class_pfc, if_pols) {
        (Ok((_, pol)), Ok(classes), Ok(pols)) => match pols.get(pol).map(String::as_str) {
            Some("off") => Fact::Known([false; 8]),
            Some(_) => Fact::Known(*classes),
            None => failed(
                switch,
                p,
                &format!("its interface PFC policy {pol} is not among the APIC's qosPfcIfPol"),
            ),
        },
        (Err(e), _, _) | (_, Err(e), _) | (_, _, Err(e)) => failed(switch, p, e),
    };
    PortSettings {
        name: p.to_string(),
        link_up: not(
            &src,
            switch,
            format!(
                "{p}: the link state is read with the fault's prior state (ethpmPhysIf), not here"
            ),
        ),
        speed_mbps: match &l1 {
            Ok((a, _)) => match attr(a, "speed")
                .and_then(|s| s.strip_suffix('G'))
                .and_then(|s| s.parse::<u64>().ok())
            {
                Some(g) => Fact::Known(g * 1000),
                None => not(
                    &src,
                    switch,
                    format!("{p}: l1PhysIf gives no speed in gigabits (auto, or inherit)"),
                ),
            },
            Err(e) => failed(switch, p, e),
        },
        mtu: match &l1 {
            Ok((a, _)) => match number(a, "mtu") {
                Some(m) => Fact::Known(m as u32),
                None => not(
                    &src,
                    switch,
                    format!("{p}: l1PhysIf gives no numeric mtu (inherit: the fabric's)"),
                ),
            },
            Err(e) => failed(switch, p, e),
        },
        pfc,
        ecn: ecn.clone(),
        pfc_xoff_bytes: not(
            &src,
            switch,
            format!("{p}: ACI does not expose the PFC Xoff threshold"),
        ),
    }
}
