//! The audit's comparisons: facts read from hosts and switches against the
//! inventory's RoCE profile, its versions and the majority of peers. Each
//! comparison is a [`Finding`] (ok, warning, deviation, not available,
//! error); what a finding means for the gate is decided in
//! `score::findings`.

use std::collections::BTreeMap;

use crate::config::inventory::RoceProfile;
use crate::counters::optics::ModuleDiagnostics;
use crate::report::events::{Finding, Outcome};
use crate::switch::{DscpClass, Fact};

/// RoCE headers between the netdev MTU and the RDMA path MTU: the kernel
/// takes the largest IB MTU at most `netdev MTU − 96` (GRH 40, UDP 8, BTH
/// 12, the largest extended headers 28, ICRC 4: `iboe_get_mtu` in
/// include/rdma/ib_addr.h), so a 4096-byte RoCE MTU needs at least 4192.
pub const ROCE_HEADERS: u32 = 96;

/// A finding under construction for one component.
pub struct Seen<'a> {
    pub test: &'a str,
    pub component: String,
    pub host: String,
    pub evidence: Vec<String>,
}

impl Seen<'_> {
    pub fn finding(&self, check: &str, outcome: Outcome, message: String) -> Finding {
        Finding {
            test: self.test.to_string(),
            check: check.to_string(),
            component: self.component.clone(),
            host: self.host.clone(),
            outcome,
            observed: None,
            expected: None,
            message,
            sources: Vec::new(),
            needs_root: false,
            round: None,
            evidence: self.evidence.clone(),
        }
    }

    /// A finding from a fact: `judge` compares a known value (returning
    /// outcome, observed, expected and message); a fact that is not known
    /// becomes `not available` or `error` with what was tried.
    pub fn judge<T>(
        &self,
        check: &str,
        fact: &Fact<T>,
        sources: &[String],
        judge: impl FnOnce(&T) -> (Outcome, String, String, String),
    ) -> Finding {
        match fact {
            Fact::Known(v) => {
                let (outcome, observed, expected, message) = judge(v);
                let mut f = self.finding(check, outcome, message);
                f.observed = Some(observed);
                f.expected = Some(expected);
                f.sources = sources.to_vec();
                f
            }
            Fact::NotAvailable { tried, why } => {
                let mut f = self.finding(check, Outcome::NotAvailable, why.clone());
                f.sources = tried.clone();
                f.needs_root = why.contains("needs root");
                f
            }
            Fact::Failed(e) => {
                let mut f = self.finding(check, Outcome::Error, e.clone());
                f.sources = sources.to_vec();
                f
            }
        }
    }

    /// The finding for a fact that could not be read: `not available`
    /// (with every command tried, and whether it needs root) or `error`;
    /// `None` for a known fact. A setting the platform does not have (no
    /// command to try) keeps no sources.
    pub fn unread<T>(&self, check: &str, fact: &Fact<T>, sources: &[String]) -> Option<Finding> {
        match fact {
            Fact::Known(_) => None,
            _ => Some(self.judge(check, fact, sources, |_| {
                (Outcome::Ok, String::new(), String::new(), String::new())
            })),
        }
    }
}

fn ok_or(cond: bool, bad: Outcome) -> Outcome {
    if cond {
        Outcome::Ok
    } else {
        bad
    }
}

/// Priorities with PFC on, as `3` or `3,4` (`none`).
pub fn prios(p: &[bool; 8]) -> String {
    let v: Vec<String> = (0..8).filter(|&i| p[i]).map(|i| i.to_string()).collect();
    if v.is_empty() {
        "none".into()
    } else {
        v.join(",")
    }
}

/// PFC on exactly the RoCE priority. `what` names the side (`NIC`, `port`).
pub fn pfc(profile: &RoceProfile, p: &[bool; 8], what: &str) -> (Outcome, String, String, String) {
    let want = profile.pfc_priority;
    let got = prios(p);
    let exact = (0..8u8).all(|i| p[usize::from(i)] == (i == want));
    let msg = if exact {
        format!("PFC on priority {want} only")
    } else if !p[usize::from(want)] {
        format!("PFC is off on the RoCE priority {want} ({what} has PFC on: {got}): RoCE traffic is lossy here")
    } else {
        format!("PFC on priorities {got}; only the RoCE priority {want} should be lossless (a pause on another priority stalls traffic that does not expect it)")
    };
    (ok_or(exact, Outcome::Deviation), got, want.to_string(), msg)
}

/// The netdev or port MTU against what the RoCE MTU needs.
pub fn mtu(profile: &RoceProfile, m: u32) -> (Outcome, String, String, String) {
    let need = profile.mtu + ROCE_HEADERS;
    let msg = if m >= need {
        format!("MTU {m} carries the RoCE MTU {}", profile.mtu)
    } else {
        format!(
            "MTU {m} is below {need}, the least that carries the profile's RoCE MTU {} (RoCE falls back to a smaller path MTU)",
            profile.mtu
        )
    };
    (
        ok_or(m >= need, Outcome::Deviation),
        m.to_string(),
        format!(">= {need}"),
        msg,
    )
}

/// A link up at its expected speed.
pub fn link(
    up: Option<bool>,
    speed_mbps: Option<u64>,
    want_gbps: u32,
) -> (Outcome, String, String, String) {
    let want = u64::from(want_gbps) * 1000;
    let observed = match (up, speed_mbps) {
        (Some(false), _) => "down".to_string(),
        (_, Some(s)) => format!("{} Gb/s", s / 1000),
        (_, None) => "up, speed unknown".to_string(),
    };
    let expected = format!("up at {want_gbps} Gb/s");
    match (up, speed_mbps) {
        (Some(false), _) => (Outcome::Deviation, observed, expected, "the link is down".into()),
        (_, Some(s)) if s == want => (Outcome::Ok, observed, expected, format!("up at {want_gbps} Gb/s")),
        (_, Some(s)) => (
            Outcome::Deviation,
            observed,
            expected,
            format!("negotiated {} Gb/s, expected {want_gbps} Gb/s (cable, optic or port speed setting)", s / 1000),
        ),
        (_, None) => (
            Outcome::Warning,
            observed,
            expected,
            "the link is up but reports no speed".into(),
        ),
    }
}

/// Versions homogeneous within groups: `members` is (component, group,
/// version). The majority within a group is the reference; a tie for the
/// most common version is a warning on every member, naming the versions.
/// `want` is the inventory's version, when it states one: a member that
/// differs from it deviates whatever the majority runs.
pub fn homogeneity(
    what: &str,
    members: &[(String, String, String)],
    want: Option<&str>,
) -> BTreeMap<String, (Outcome, String, String, String)> {
    let mut groups: BTreeMap<&str, BTreeMap<&str, usize>> = BTreeMap::new();
    for (_, g, v) in members {
        *groups.entry(g).or_default().entry(v).or_default() += 1;
    }
    members
        .iter()
        .map(|(c, g, v)| {
            let counts = &groups[g.as_str()];
            let total: usize = counts.values().sum();
            let top = counts.values().copied().max().unwrap_or(0);
            let leaders: Vec<&str> = counts
                .iter()
                .filter(|(_, &n)| n == top)
                .map(|(v, _)| *v)
                .collect();
            let listing = counts
                .iter()
                .map(|(v, n)| format!("{v} on {n}"))
                .collect::<Vec<_>>()
                .join(", ");
            let r = match want {
                Some(w) if !same_version(w, v) => (
                    Outcome::Deviation,
                    v.clone(),
                    w.to_string(),
                    format!("{what} {v}, but the inventory says {w} ({listing} of {total} in group {g})"),
                ),
                _ if leaders.len() > 1 => (
                    Outcome::Warning,
                    v.clone(),
                    leaders.join(" or "),
                    format!("{what}s are split with no majority in group {g}: {listing}"),
                ),
                _ if leaders[0] != v => (
                    Outcome::Deviation,
                    v.clone(),
                    leaders[0].to_string(),
                    format!(
                        "{what} {v}, while {top} of {total} in group {g} run {}",
                        leaders[0]
                    ),
                ),
                _ => (
                    Outcome::Ok,
                    v.clone(),
                    v.clone(),
                    format!("{what} {v}, like {top} of {total} in group {g}"),
                ),
            };
            (c.clone(), r)
        })
        .collect()
}

/// Whether an observed version is what the inventory states: equal, or the
/// inventory's last word (`mlx5_core 24.10-1.1.4` states `24.10-1.1.4` of
/// driver `mlx5_core`).
pub fn same_version(want: &str, got: &str) -> bool {
    let w = want.trim();
    let g = got.trim();
    w == g || w.split_whitespace().last() == g.split_whitespace().last()
}

/// Transceiver diagnostics against the module's own thresholds, and lanes
/// far below their siblings. Returns (check, outcome, message) per
/// problem, or one `ok`.
pub fn optics(m: &ModuleDiagnostics, weak_lane_db: f64) -> Vec<(&'static str, Outcome, String)> {
    let mut out = Vec::new();
    let t = &m.thresholds;
    let mut limit = |check: &'static str,
                     name: &str,
                     unit: &str,
                     v: Option<f64>,
                     l: &crate::counters::optics::Limits| {
        let Some(v) = v else { return };
        let alarm = l.high_alarm.is_some_and(|h| v >= h) || l.low_alarm.is_some_and(|lo| v <= lo);
        let warn =
            l.high_warning.is_some_and(|h| v >= h) || l.low_warning.is_some_and(|lo| v <= lo);
        if alarm {
            out.push((
                check,
                Outcome::Deviation,
                format!("{name} {v:.2} {unit} is past the module's alarm threshold"),
            ));
        } else if warn {
            out.push((
                check,
                Outcome::Warning,
                format!("{name} {v:.2} {unit} is past the module's warning threshold"),
            ));
        }
    };
    limit(
        "optics.temperature",
        "module temperature",
        "°C",
        m.temperature_c,
        &t.temperature_c,
    );
    limit(
        "optics.voltage",
        "supply voltage",
        "V",
        m.voltage_v,
        &t.voltage_v,
    );
    for lane in &m.lanes {
        let n = lane.lane;
        // A dark lane (no light at all) is judged by the link, not here:
        // a DR4 module in an 8-lane cage leaves four lanes dark.
        if lane.rx_power_mw.is_some_and(|p| p > 0.0) {
            limit(
                "optics.rx_power",
                &format!("lane {n} Rx power"),
                "mW",
                lane.rx_power_mw,
                &t.rx_power_mw,
            );
        }
        if lane.tx_power_mw.is_some_and(|p| p > 0.0) {
            limit(
                "optics.tx_power",
                &format!("lane {n} Tx power"),
                "mW",
                lane.tx_power_mw,
                &t.tx_power_mw,
            );
        }
    }
    // Weak lanes: lit lanes (above -20 dBm) far below their siblings' median.
    let mut lit: Vec<(u8, f64)> = m
        .lanes
        .iter()
        .filter_map(|l| Some((l.lane, l.rx_power_dbm?)))
        .filter(|(_, d)| *d > -20.0)
        .collect();
    if lit.len() >= 2 {
        let mut v: Vec<f64> = lit.iter().map(|(_, d)| *d).collect();
        v.sort_by(f64::total_cmp);
        let median = if v.len() % 2 == 1 {
            v[v.len() / 2]
        } else {
            (v[v.len() / 2 - 1] + v[v.len() / 2]) / 2.0
        };
        lit.retain(|(_, d)| *d < median - weak_lane_db);
        for (n, d) in lit {
            out.push((
                "optics.weak_lane",
                Outcome::Deviation,
                format!(
                    "lane {n} receives {d:.2} dBm, {:.1} dB below its siblings' median {median:.2} dBm (a dirty or damaged fibre, or a failing laser at the far end)",
                    median - d
                ),
            ));
        }
    }
    // Flags the module raised that no value above explains.
    if out.is_empty() {
        let alarms: Vec<&String> = m.flags_on.iter().filter(|f| f.contains("alarm")).collect();
        if !alarms.is_empty() {
            out.push((
                "optics.alarm",
                Outcome::Deviation,
                format!(
                    "the module raises {}",
                    alarms
                        .iter()
                        .map(|s| s.split_whitespace().collect::<Vec<_>>().join(" "))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ));
        }
    }
    if out.is_empty() {
        out.push((
            "optics",
            Outcome::Ok,
            format!("{} lane(s) inside the module's thresholds", m.lanes.len()),
        ));
    }
    out
}

/// The DSCPs the planned workloads send, each with the priority it must
/// land on: RoCE data on the lossless priority, CNPs on theirs. NCCL sends
/// `NCCL_IB_TC` (built from the profile's RoCE DSCP); perftest's
/// `--tclass`, where a suite sets one, is added by the caller.
pub fn dscp_expectations(profile: &RoceProfile, extra: &[u8]) -> Vec<(u8, u8, &'static str)> {
    let mut v = vec![
        (profile.dscp_roce, profile.pfc_priority, "RoCE"),
        (profile.dscp_cnp, profile.cnp_priority, "CNP"),
    ];
    for &d in extra {
        if !v.iter().any(|(x, _, _)| *x == d) {
            v.push((d, profile.pfc_priority, "perftest --tclass"));
        }
    }
    v
}

/// A switch's DSCP classification against the profile: the RoCE DSCP (and
/// any `--tclass` the workloads send) must land in the class of the PFC
/// priority; the CNP DSCP in the CNP priority, or at least in a class of
/// its own where the platform gives classes no priority number (an ACI
/// level without a CoS rewrite). Unlike a NIC, a DSCP without an entry is
/// not classified at all: it lands in the switch's default class.
pub fn switch_dscp(
    profile: &RoceProfile,
    m: &BTreeMap<u8, DscpClass>,
    extra: &[u8],
) -> (Outcome, String, String, String) {
    let roce_class = m.get(&profile.dscp_roce).map(|c| c.class.as_str());
    let mut worst = Outcome::Ok;
    let mut said = Vec::new();
    let mut seen = Vec::new();
    for (dscp, want, what) in dscp_expectations(profile, extra) {
        let cnp = what == "CNP";
        let (outcome, msg) = match m.get(&dscp) {
            None => {
                seen.push(format!("{dscp}->default"));
                if cnp {
                    (Outcome::Warning, format!("CNP DSCP {dscp} is not classified: congestion notifications queue in the default class behind bulk traffic, which slows DCQCN's reaction"))
                } else {
                    (Outcome::Deviation, format!("{what} DSCP {dscp} is not classified: it lands in the default class, which is lossy"))
                }
            }
            Some(c) => {
                seen.push(match c.priority {
                    Some(p) => format!("{dscp}->{} (priority {p})", c.class),
                    None => format!("{dscp}->{}", c.class),
                });
                match c.priority {
                    Some(p) if p == want => (Outcome::Ok, String::new()),
                    Some(p) => (Outcome::Deviation, format!("{what} DSCP {dscp} lands in {} (priority {p}), not priority {want}", c.class)),
                    None if cnp && roce_class != Some(c.class.as_str()) => (Outcome::Ok, String::new()),
                    None if cnp => (Outcome::Warning, format!("CNP DSCP {dscp} shares the RoCE class {}: notifications wait behind the data they are about", c.class)),
                    None => (Outcome::Deviation, format!("{what} DSCP {dscp} lands in {}, which carries no PFC priority: lossy", c.class)),
                }
            }
        };
        if outcome != Outcome::Ok {
            said.push(msg);
            if worst == Outcome::Ok || outcome == Outcome::Deviation {
                worst = outcome;
            }
        }
    }
    let expected = format!(
        "{}->priority {} {}->priority {}",
        profile.dscp_roce, profile.pfc_priority, profile.dscp_cnp, profile.cnp_priority
    );
    let msg = if said.is_empty() {
        "the DSCPs the workloads send land in their priorities' classes".to_string()
    } else {
        said.join("; ")
    };
    (worst, seen.join(" "), expected, msg)
}

/// Every host-side check of one NIC, from what its host printed.
pub fn nic_findings(
    inv: &crate::config::model::Inventory,
    nf: &super::host::NicFacts,
    seen: &Seen,
    opts: &super::Options,
) -> Vec<Finding> {
    let profile = &inv.fabric.roce;
    let nic = &inv.nics[nf.nic];
    let src = |k: &str| nf.sources.get(k).cloned().unwrap_or_default();
    let mut out = vec![
        seen.judge("nic.link", &nf.link, &src("link"), |l| {
            let (o, obs, exp, msg) = link(l.link_detected, l.speed_mbps, nic.speed_gbps);
            match nic.uplink {
                Some(u) => {
                    let ln = &inv.links[u];
                    let me = crate::config::model::End::Nic(nf.nic);
                    let peer = inv.end_name(if ln.a == me { &ln.b } else { &ln.a });
                    (o, obs, exp, format!("cable to {peer}: {msg}"))
                }
                None => (o, obs, exp, msg),
            }
        }),
        seen.judge("nic.mtu", &nf.mtu, &src("mtu"), |m| mtu(profile, *m)),
        seen.judge("nic.pfc", &nf.pfc, &src("pfc"), |p| pfc(profile, p, "the NIC")),
        seen.judge("nic.trust", &nf.trust_dscp, &src("trust"), |t| {
            if *t {
                (Outcome::Ok, "dscp".into(), "dscp".into(), "trusts DSCP".into())
            } else {
                (
                    Outcome::Deviation,
                    "pcp".into(),
                    "dscp".into(),
                    "trusts PCP, not DSCP: routed RoCEv2 traffic carries no VLAN priority, so it lands on priority 0 (lossy)".into(),
                )
            }
        }),
        seen.judge("nic.dscp_map", &nf.dscp_prio, &src("dscp_map"), |m| {
            let mut wrong = Vec::new();
            let mut seen_ = Vec::new();
            for (dscp, want, what) in dscp_expectations(profile, &opts.tclass_dscps) {
                // A DSCP without an entry keeps the default DSCP>>3 mapping.
                let got = m.get(&dscp).copied().unwrap_or(dscp >> 3);
                seen_.push(format!("{dscp}->{got}"));
                if got != want {
                    wrong.push(format!("{what} DSCP {dscp} maps to priority {got}, not {want}"));
                }
            }
            let obs = seen_.join(" ");
            if wrong.is_empty() {
                (Outcome::Ok, obs.clone(), obs, "DSCPs the workloads send map to their priorities".into())
            } else {
                (Outcome::Deviation, obs, format!("{}->{} {}->{}", profile.dscp_roce, profile.pfc_priority, profile.dscp_cnp, profile.cnp_priority), wrong.join("; "))
            }
        }),
        seen.judge("nic.gid", &nf.gid, &src("gid"), |g| {
            let v2 = g.kind.trim() == "RoCE v2";
            let ipv4 = g.gid.to_ascii_lowercase().starts_with("0000:0000:0000:0000:0000:ffff:");
            let on_netdev = g.ndev.as_deref().is_none_or(|d| d == nic.netdev);
            let obs = format!("index {} {} {}", g.index, g.kind, g.gid);
            let msg = if v2 && ipv4 && on_netdev {
                format!("GID index {} is RoCE v2 with an IPv4 address", g.index)
            } else if !v2 {
                format!("GID index {} is {}, not RoCE v2: traffic on it is not routable", g.index, g.kind)
            } else if !ipv4 {
                format!("GID index {} holds {}, not an IPv4-mapped address", g.index, g.gid)
            } else {
                format!("GID index {} belongs to {}, not {}", g.index, g.ndev.clone().unwrap_or_default(), nic.netdev)
            };
            (ok_or(v2 && ipv4 && on_netdev, Outcome::Deviation), obs, "RoCE v2, IPv4".into(), msg)
        }),
        seen.judge("nic.dcqcn", &nf.dcqcn, &src("dcqcn"), |(np, rp)| {
            let want = profile.dcqcn;
            let obs = format!("np {} rp {}", u8::from(*np), u8::from(*rp));
            let exp = format!("np {0} rp {0}", u8::from(want));
            let good = *np == want && *rp == want;
            let msg = match (good, want) {
                (true, true) => format!("DCQCN on for priority {}", profile.pfc_priority),
                (true, false) => "DCQCN off, as the profile says".into(),
                (false, true) => format!("DCQCN is off on priority {} (notification point {}, reaction point {}): congestion becomes PFC pauses", profile.pfc_priority, np, rp),
                (false, false) => "DCQCN is on but the profile says PFC only".into(),
            };
            (ok_or(good, Outcome::Deviation), obs, exp, msg)
        }),
    ];
    match &nf.optics {
        Fact::Known(m) => {
            for (check, outcome, message) in optics(m, opts.weak_lane_db) {
                let mut f = seen.finding(check, outcome, message);
                f.sources = src("optics");
                out.push(f);
            }
        }
        other => out.extend(seen.unread("optics", other, &src("optics"))),
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::counters::optics::{Lane, Limits};

    fn profile() -> RoceProfile {
        RoceProfile::nvidia_default(4096)
    }

    #[test]
    fn pfc_exactly_on_the_roce_priority() {
        let mut p = [false; 8];
        p[3] = true;
        assert_eq!(pfc(&profile(), &p, "NIC").0, Outcome::Ok);
        p[4] = true;
        let (o, got, _, msg) = pfc(&profile(), &p, "NIC");
        assert_eq!((o, got.as_str()), (Outcome::Deviation, "3,4"));
        assert!(msg.contains("only the RoCE priority 3"));
        let (o, got, _, msg) = pfc(&profile(), &[false; 8], "port");
        assert_eq!((o, got.as_str()), (Outcome::Deviation, "none"));
        assert!(msg.contains("PFC is off on the RoCE priority 3"));
    }

    #[test]
    fn mtu_must_carry_the_roce_mtu_and_its_headers() {
        assert_eq!(mtu(&profile(), 4200).0, Outcome::Ok);
        assert_eq!(mtu(&profile(), 4192).0, Outcome::Ok);
        assert_eq!(mtu(&profile(), 4191).0, Outcome::Deviation);
        assert_eq!(mtu(&profile(), 1500).0, Outcome::Deviation);
    }

    #[test]
    fn link_speed_and_state() {
        assert_eq!(link(Some(true), Some(400_000), 400).0, Outcome::Ok);
        let (o, obs, _, msg) = link(Some(true), Some(200_000), 400);
        assert_eq!((o, obs.as_str()), (Outcome::Deviation, "200 Gb/s"));
        assert!(msg.contains("negotiated 200 Gb/s"));
        assert_eq!(link(Some(false), None, 400).0, Outcome::Deviation);
    }

    #[test]
    fn majority_minority_ties_and_the_inventory() {
        let m = |c: &str, g: &str, v: &str| (c.to_string(), g.to_string(), v.to_string());
        let members = vec![
            m("a", "cx7", "28.39"),
            m("b", "cx7", "28.39"),
            m("c", "cx7", "28.37"),
            m("d", "cx6", "22.1"),
            m("e", "cx6", "22.2"),
        ];
        let r = homogeneity("firmware", &members, None);
        assert_eq!(r["a"].0, Outcome::Ok);
        assert_eq!(r["c"].0, Outcome::Deviation);
        assert!(
            r["c"].3.contains("2 of 3 in group cx7 run 28.39"),
            "{}",
            r["c"].3
        );
        assert_eq!(r["d"].0, Outcome::Warning);
        assert_eq!(r["e"].0, Outcome::Warning);
        let r = homogeneity("firmware", &members, Some("28.39"));
        assert_eq!(r["a"].0, Outcome::Ok);
        assert_eq!(r["c"].0, Outcome::Deviation);
        assert_eq!(r["d"].0, Outcome::Deviation);
        assert!(same_version("mlx5_core 24.10-1.1.4", "24.10-1.1.4"));
        assert!(!same_version("mlx5_core 24.10-1.1.4", "24.07-0.6.1"));
    }

    #[test]
    fn a_weak_lane_and_thresholds() {
        let lane = |n: u8, dbm: f64| Lane {
            lane: n,
            rx_power_mw: Some(10f64.powf(dbm / 10.0)),
            rx_power_dbm: Some(dbm),
            ..Default::default()
        };
        let mut m = ModuleDiagnostics {
            lanes: vec![lane(1, 1.0), lane(2, 0.8), lane(3, -9.5), lane(4, 1.2)],
            temperature_c: Some(48.0),
            ..Default::default()
        };
        m.thresholds.temperature_c = Limits {
            high_alarm: Some(75.0),
            high_warning: Some(70.0),
            ..Default::default()
        };
        let r = optics(&m, 3.0);
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(r[0].0, "optics.weak_lane");
        assert!(
            r[0].2.starts_with("lane 3 receives -9.50 dBm"),
            "{}",
            r[0].2
        );
        m.lanes[2] = lane(3, 1.1);
        m.temperature_c = Some(71.0);
        let r = optics(&m, 3.0);
        assert_eq!((r[0].0, r[0].1), ("optics.temperature", Outcome::Warning));
        m.temperature_c = Some(50.0);
        assert_eq!(optics(&m, 3.0)[0].1, Outcome::Ok);
    }
}
