//! The switch side of the audit, through each switch's platform
//! ([`crate::switch::Platform`]): its configuration reads, its LLDP table
//! and its transceiver view, judged per port (PFC, ECN, MTU, link, optics)
//! and per switch (NOS version, PFC watchdog). Also where an LLDP
//! neighbour's advertised name and port are resolved to an inventory end,
//! since only a platform knows how its port names compare.

use crate::config::model::{End, Inventory, LinkKind, SwitchId};
use crate::counters::host::LldpNeighbor;
use crate::counters::optics::parse_ethtool_m;
use crate::report::events::{Finding, Outcome};
use crate::switch::config::fact;
use crate::switch::{self, Answer, Fact, Platform, Query};

use super::cabling::{Heard, Observation};
use super::checks::{self, Seen};
use super::Options;

fn platform_of(inv: &Inventory, s: SwitchId) -> &'static dyn Platform {
    switch::platform(inv.switches[s].driver)
}

/// Configuration reads, then the LLDP table, then each port's optics.
pub fn queries(inv: &Inventory, s: SwitchId, ports: &[String]) -> Vec<Query> {
    let p = platform_of(inv, s);
    let mut q = p.config_queries(ports);
    q.push(p.lldp_query());
    q.extend(ports.iter().filter_map(|port| p.optics_query(port)));
    q
}

/// The switch and port an LLDP neighbour names, as an inventory end: its
/// system name (or the first label of it, or else a management address
/// that is one switch's) names the switch, and the switch's platform compares the port id (or its
/// description) with the inventory's port names.
pub fn resolve_neighbor(inv: &Inventory, n: &LldpNeighbor) -> Heard {
    let name = n.chassis_name.as_deref().unwrap_or_default();
    let short = name.split('.').next().unwrap_or_default();
    // By name first, across every switch; then by management address, but
    // only an address that names one switch (switches managed through a
    // controller, ACI's behind their APIC, share the controller's).
    let by_address = || {
        let ip = n.mgmt_ip.as_deref()?;
        let mut at = inv
            .switches
            .iter()
            .enumerate()
            .filter(|(_, s)| s.address == ip);
        match (at.next(), at.next()) {
            (Some((k, _)), None) => Some(k),
            _ => None,
        }
    };
    let sw = inv
        .switches
        .iter()
        .position(|s| s.name == name || s.name.eq_ignore_ascii_case(short))
        .or_else(by_address);
    let Some(s) = sw else {
        return Heard::Unknown(format!(
            "chassis {} port {}",
            n.chassis_name
                .clone()
                .or_else(|| n.chassis_id.clone())
                .unwrap_or_else(|| "(unnamed)".into()),
            n.port_id
        ));
    };
    let sw = &inv.switches[s];
    let rail = sw.rail;
    let p = platform_of(inv, s);
    let ports = inv.switch_ports(s);
    let wanted: Vec<String> = std::iter::once(n.port_id.as_str())
        .chain(n.port_descr.as_deref())
        .map(|x| p.normalise_port(x))
        .collect();
    let port = ports
        .iter()
        .find(|x| wanted.contains(&p.normalise_port(x)))
        .map(|x| x.to_string())
        .unwrap_or_else(|| n.port_id.clone());
    Heard::Peer {
        end: format!("{}:{port}", sw.name),
        rail,
    }
}

/// Findings for one switch, its leaf–spine LLDP observations, and its NOS
/// version when it could be read.
pub fn switch_findings(
    inv: &Inventory,
    s: SwitchId,
    ports: &[String],
    answers: &[Answer],
    test: &str,
    evidence: &[String],
    opts: &Options,
) -> (Vec<Finding>, Vec<Observation>, Option<String>) {
    let p = platform_of(inv, s);
    let sw = &inv.switches[s];
    let name = sw.name.as_str();
    let profile = &inv.fabric.roce;
    let n_config = p.config_queries(ports).len();
    let cfg = p.parse_config(name, ports, answers.get(..n_config).unwrap_or(answers));
    // Sources as a person would re-run them: the switch-wide reads for a
    // switch's findings, one port's reads for that port's.
    let cfg_sources: Vec<String> = p.config_queries(&[]).iter().map(Query::display).collect();
    let whole = Seen {
        test,
        component: name.to_string(),
        host: name.to_string(),
        evidence: evidence.to_vec(),
    };
    let mut out = Vec::new();
    out.push(whole.judge("switch.pfc_watchdog", &cfg.pfc_watchdog, &cfg_sources, |on| {
        if *on {
            (Outcome::Ok, "on".into(), "on".into(), "PFC watchdog on".into())
        } else {
            (
                Outcome::Warning,
                "off".into(),
                "on".into(),
                "the PFC watchdog is off: a NIC that pauses without end (a PFC storm) stalls every port behind this switch".into(),
            )
        }
    }));
    out.push(
        whole.judge("switch.dscp_map", &cfg.dscp_prio, &cfg_sources, |m| {
            checks::switch_dscp(profile, m, &opts.tclass_dscps)
        }),
    );
    // A known version is judged with the other switches' (homogeneity).
    out.extend(whole.unread("switch.nos", &cfg.nos_version, &cfg_sources));
    let link_speed = |port: &str| {
        sw.links.iter().find_map(|&l| {
            let link = &inv.links[l];
            [&link.a, &link.b].into_iter().find_map(|e| match e {
                End::Port { switch, port: x } if *switch == s && x == port => {
                    Some((l, link.speed_gbps))
                }
                _ => None,
            })
        })
    };
    for ps in &cfg.ports {
        let cfg_sources: Vec<String> = p
            .config_queries(std::slice::from_ref(&ps.name))
            .iter()
            .map(Query::display)
            .collect();
        let seen = Seen {
            test,
            component: format!("{name}:{}", ps.name),
            host: name.to_string(),
            evidence: evidence.to_vec(),
        };
        let cabled = link_speed(&ps.name);
        let want_gbps = cabled.map(|(_, g)| g).unwrap_or(0);
        let peer = cabled.map(|(l, _)| {
            let link = &inv.links[l];
            let me = End::Port {
                switch: s,
                port: ps.name.clone(),
            };
            inv.end_name(if link.a == me { &link.b } else { &link.a })
        });
        let speed = ps.speed_mbps.known().copied();
        out.push(seen.judge("switch.link", &ps.link_up, &cfg_sources, |up| {
            let (o, obs, exp, msg) = checks::link(Some(*up), speed, want_gbps);
            match &peer {
                Some(p) => (o, obs, exp, format!("cable to {p}: {msg}")),
                None => (o, obs, exp, msg),
            }
        }));
        out.push(seen.judge("switch.mtu", &ps.mtu, &cfg_sources, |m| {
            checks::mtu(profile, *m)
        }));
        out.push(seen.judge("switch.pfc", &ps.pfc, &cfg_sources, |pfc| {
            checks::pfc(profile, pfc, "the port")
        }));
        let xoff = ps.pfc_xoff_bytes.known().and_then(|v| {
            v.iter()
                .find(|(p, _)| *p == profile.pfc_priority)
                .map(|(_, b)| *b)
        });
        out.push(seen.judge("switch.ecn", &ps.ecn, &cfg_sources, |queues| {
            ecn(profile, queues, xoff, opts.ecn_tolerance_pct)
        }));
    }
    let mut out = fold_ports(name, out);
    // Optics, one read per port after the LLDP table.
    let optics_at = n_config + 1;
    let mut k = optics_at;
    for port in ports {
        let Some(q) = p.optics_query(port) else {
            continue;
        };
        let seen = Seen {
            test,
            component: format!("{name}:{port}"),
            host: name.to_string(),
            evidence: evidence.to_vec(),
        };
        let f = fact(name, &q, answers.get(k), parse_ethtool_m, Ok);
        k += 1;
        match f {
            Fact::Known(m) => {
                for (check, outcome, message) in checks::optics(&m, opts.weak_lane_db) {
                    let mut x = seen.finding(check, outcome, message);
                    x.sources = vec![q.display()];
                    out.push(x);
                }
            }
            other => out.extend(seen.unread("optics", &other, &[q.display()])),
        }
    }
    // LLDP: leaf–spine cables (host cables are judged from the host side,
    // where the NIC is named).
    let lq = p.lldp_query();
    let table = fact(
        name,
        &lq,
        answers.get(n_config),
        |t| {
            p.parse_lldp(&Answer {
                exit: Some(0),
                text: t.to_string(),
            })
        },
        Ok,
    );
    let mut obs = Vec::new();
    for port in ports {
        let Some((l, _)) = link_speed(port) else {
            continue;
        };
        let link = &inv.links[l];
        if link.kind != LinkKind::Fabric {
            continue;
        }
        let me = End::Port {
            switch: s,
            port: port.clone(),
        };
        let peer = if link.a == me { &link.b } else { &link.a };
        let heard = match &table {
            Fact::Known(ns) => {
                let mine = p.normalise_port(port);
                match ns.iter().find(|n| p.normalise_port(&n.interface) == mine) {
                    Some(n) => resolve_neighbor(inv, n),
                    None if ps_down(&cfg, port) => Heard::Unread {
                        outcome: Outcome::NotAvailable,
                        why: format!("{name}:{port}: no LLDP neighbour: the link is down"),
                        tried: vec![lq.display()],
                    },
                    None => Heard::Nothing,
                }
            }
            Fact::NotAvailable { tried, why } => Heard::Unread {
                outcome: Outcome::NotAvailable,
                why: why.clone(),
                tried: tried.clone(),
            },
            Fact::Failed(e) => Heard::Unread {
                outcome: Outcome::Error,
                why: e.clone(),
                tried: vec![lq.display()],
            },
        };
        obs.push(Observation {
            local: format!("{name}:{port}"),
            host: name.to_string(),
            expected: inv.end_name(peer),
            rail: None,
            heard,
            sources: vec![lq.display()],
            evidence: evidence.to_vec(),
        });
    }
    (out, obs, cfg.nos_version.known().cloned())
}

/// Configuration deviations shared by several ports of one switch (PFC
/// off switch-wide, ECN thresholds set on every port) become one finding
/// on the switch naming the ports, so a switch-wide mistake reads as one
/// line, not one per port.
fn fold_ports(switch: &str, findings: Vec<Finding>) -> Vec<Finding> {
    const FOLDED: [&str; 3] = ["switch.pfc", "switch.ecn", "switch.mtu"];
    let mut groups: std::collections::BTreeMap<(String, String), Vec<usize>> = Default::default();
    for (i, f) in findings.iter().enumerate() {
        if FOLDED.contains(&f.check.as_str()) && f.outcome != Outcome::Ok {
            groups
                .entry((f.check.clone(), f.message.clone()))
                .or_default()
                .push(i);
        }
    }
    let mut drop = std::collections::BTreeSet::new();
    let mut out = Vec::new();
    for idx in groups.values().filter(|v| v.len() > 1) {
        let ports: Vec<String> = idx
            .iter()
            .map(|&i| {
                let c = &findings[i].component;
                c.strip_prefix(&format!("{switch}:"))
                    .unwrap_or(c)
                    .to_string()
            })
            .collect();
        let mut f = findings[idx[0]].clone();
        f.component = switch.to_string();
        f.message = format!(
            "{} port(s) ({}): {}",
            ports.len(),
            crate::config::hostlist::compress(&ports),
            f.message
        );
        out.push(f);
        drop.extend(idx.iter().copied());
    }
    findings
        .into_iter()
        .enumerate()
        .filter(|(i, _)| !drop.contains(i))
        .map(|(_, f)| f)
        .chain(out)
        .collect()
}

fn ps_down(cfg: &switch::SwitchConfig, port: &str) -> bool {
    cfg.ports
        .iter()
        .any(|p| p.name == port && p.link_up.known() == Some(&false))
}

/// ECN/RED on the RoCE priority's traffic class against the profile. The
/// traffic class is taken to be the priority itself (the identity map
/// mlxsw and most NOS defaults use); thresholds may differ from the profile
/// by `tol_pct` (switches round them to buffer cells). Where the platform
/// reports the PFC Xoff in bytes, marking must start below it: a queue
/// that pauses before it marks never lets DCQCN act.
pub fn ecn(
    profile: &crate::config::inventory::RoceProfile,
    queues: &[switch::EcnQueue],
    xoff: Option<u64>,
    tol_pct: f64,
) -> (Outcome, String, String, String) {
    let tc = profile.pfc_priority;
    let kb = |b: u64| b as f64 / 1024.0;
    let Some(want) = profile.ecn.as_ref().filter(|_| profile.dcqcn) else {
        return (
            Outcome::Ok,
            format!("{} queue(s) with RED/ECN", queues.len()),
            "none required".into(),
            "the profile expects no ECN marking".into(),
        );
    };
    let expected = format!("TC{tc} ECN {}-{} KB", want.min_kb, want.max_kb);
    let Some(q) = queues.iter().find(|q| q.tc == tc) else {
        return (
            Outcome::Deviation,
            "none".into(),
            expected,
            format!("no ECN marking on TC{tc}: DCQCN gets no congestion signal, so congestion turns into PFC pauses"),
        );
    };
    let observed = format!(
        "TC{tc} {} {:.0}-{:.0} KB",
        if q.ecn { "ECN" } else { "RED drop" },
        kb(q.min_bytes),
        kb(q.max_bytes)
    );
    if !q.ecn {
        return (
            Outcome::Deviation,
            observed,
            expected,
            format!("RED on TC{tc} drops instead of marking ECN: the lossless class loses packets"),
        );
    }
    let near =
        |got: f64, want: u32| (got - f64::from(want)).abs() <= f64::from(want) * tol_pct / 100.0;
    if !near(kb(q.min_bytes), want.min_kb) || !near(kb(q.max_bytes), want.max_kb) {
        return (
            Outcome::Deviation,
            observed,
            expected.clone(),
            format!(
                "ECN marks TC{tc} from {:.0} KB to {:.0} KB; the profile says {}-{} KB (±{tol_pct}%)",
                kb(q.min_bytes),
                kb(q.max_bytes),
                want.min_kb,
                want.max_kb
            ),
        );
    }
    if let Some(x) = xoff.filter(|&x| q.min_bytes >= x) {
        return (
            Outcome::Deviation,
            observed,
            expected,
            format!("ECN marking starts at {:.0} KB, at or above the PFC Xoff {:.0} KB: the port pauses before it marks", kb(q.min_bytes), kb(x)),
        );
    }
    (
        Outcome::Ok,
        observed,
        expected,
        format!("ECN on TC{tc} as the profile says"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::inventory::RoceProfile;
    use crate::switch::EcnQueue;

    #[test]
    fn ecn_against_the_profile_and_the_xoff() {
        let p = RoceProfile::nvidia_default(4096);
        let q = |min_kb: u64, max_kb: u64, ecn: bool| EcnQueue {
            tc: 3,
            min_bytes: min_kb * 1024,
            max_bytes: max_kb * 1024,
            ecn,
        };
        assert_eq!(ecn(&p, &[q(150, 1500, true)], None, 10.0).0, Outcome::Ok);
        assert_eq!(ecn(&p, &[q(155, 1480, true)], None, 10.0).0, Outcome::Ok);
        let (o, _, _, m) = ecn(&p, &[q(2000, 4000, true)], None, 10.0);
        assert_eq!(o, Outcome::Deviation);
        assert!(m.contains("from 2000 KB to 4000 KB"), "{m}");
        assert_eq!(
            ecn(&p, &[q(150, 1500, false)], None, 10.0).0,
            Outcome::Deviation
        );
        assert_eq!(ecn(&p, &[], None, 10.0).0, Outcome::Deviation);
        let (o, _, _, m) = ecn(&p, &[q(150, 1500, true)], Some(100 * 1024), 10.0);
        assert_eq!(o, Outcome::Deviation);
        assert!(m.contains("pauses before it marks"));
        let mut pfc_only = p.clone();
        pfc_only.dcqcn = false;
        assert_eq!(ecn(&pfc_only, &[], None, 10.0).0, Outcome::Ok);
    }
}
