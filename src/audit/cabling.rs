//! Cabling by LLDP: what each end of a cable hears against what the
//! inventory says it should hear. The observed map is decomposed as a
//! permutation of the expected one: where end X hears the peer that the
//! inventory gives to end Y, X's cable sits where Y's should be. A 2-cycle of
//! that relation is a swap (named with both ends and both ports), a longer
//! cycle a rotation, a chain that ends on a port nobody should be on a
//! misplaced cable; a peer on another rail's leaf is a wrong rail, a peer the
//! inventory does not know is an unknown neighbour.

use std::collections::{BTreeMap, HashMap};

use crate::report::events::{Finding, Outcome};

/// What one end heard.
#[derive(Debug, Clone, PartialEq)]
pub enum Heard {
    /// A neighbour resolved to an inventory end (`r0-leaf1:swp3`); with
    /// the rail of its switch, when it has one.
    Peer { end: String, rail: Option<u32> },
    /// A neighbour the inventory does not have: its chassis and port as
    /// advertised.
    Unknown(String),
    /// Nothing heard on a link that is up.
    Nothing,
    /// No LLDP answer at all (tool missing, host unreachable): the reason,
    /// the outcome it earns and the commands tried.
    Unread {
        outcome: Outcome,
        why: String,
        tried: Vec<String>,
    },
}

/// One end of one cable as LLDP saw it.
#[derive(Debug, Clone)]
pub struct Observation {
    /// The local end, in inventory names (`gpu001:mlx5_0`, `r0-leaf1:swp9`).
    pub local: String,
    /// Where the read ran.
    pub host: String,
    /// The peer the inventory cables it to.
    pub expected: String,
    /// The rail the local end belongs to, when it has one (a NIC).
    pub rail: Option<u32>,
    pub heard: Heard,
    pub sources: Vec<String>,
    pub evidence: Vec<String>,
}

/// Findings for every observation, in the order given.
pub fn findings(test: &str, obs: &[Observation]) -> Vec<Finding> {
    // Whose cable belongs on each peer end.
    let owner: HashMap<&str, usize> = obs
        .iter()
        .enumerate()
        .map(|(i, o)| (o.expected.as_str(), i))
        .collect();
    let heard_end = |i: usize| match &obs[i].heard {
        Heard::Peer { end, .. } if *end != obs[i].expected => Some(end.as_str()),
        _ => None,
    };
    // x → y: x's cable sits on the port that y's should be on.
    let next = |i: usize| heard_end(i).and_then(|e| owner.get(e).copied());
    let mut cycle_of: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for start in 0..obs.len() {
        if cycle_of.contains_key(&start) || heard_end(start).is_none() {
            continue;
        }
        let mut path = vec![start];
        let mut cur = start;
        while let Some(n) = next(cur) {
            if n == start {
                for &m in &path {
                    cycle_of.insert(m, path.clone());
                }
                break;
            }
            if path.contains(&n) || path.len() > obs.len() {
                break;
            }
            path.push(n);
            cur = n;
        }
    }
    obs.iter()
        .enumerate()
        .map(|(i, o)| {
            let mut f = Finding {
                test: test.to_string(),
                check: "cabling.lldp".into(),
                component: o.local.clone(),
                host: o.host.clone(),
                outcome: Outcome::Ok,
                observed: None,
                expected: Some(o.expected.clone()),
                message: String::new(),
                sources: o.sources.clone(),
                needs_root: false,
                round: None,
                evidence: o.evidence.clone(),
            };
            match &o.heard {
                Heard::Peer { end, .. } if *end == o.expected => {
                    f.observed = Some(end.clone());
                    f.message = format!("{} hears {end}, as cabled", o.local);
                }
                Heard::Peer { end, rail } => {
                    f.observed = Some(end.clone());
                    f.outcome = Outcome::Deviation;
                    let wrong_rail = matches!((o.rail, rail), (Some(a), Some(b)) if a != *b);
                    if let Some(cycle) = cycle_of.get(&i) {
                        let others: Vec<&Observation> =
                            cycle.iter().filter(|&&j| j != i).map(|&j| &obs[j]).collect();
                        if let [other] = others[..] {
                            f.check = "cabling.swap".into();
                            f.message = format!(
                                "cables of {} and {} are swapped: {} is on {end} (inventory: {}), {} is on {} (inventory: {end})",
                                o.local, other.local, o.local, o.expected, other.local, o.expected
                            );
                        } else {
                            f.check = "cabling.rotation".into();
                            let ring: Vec<String> = cycle
                                .iter()
                                .map(|&j| {
                                    let h = heard_end(j).unwrap_or_default();
                                    format!("{} on {h}", obs[j].local)
                                })
                                .collect();
                            f.message = format!(
                                "{} cables are rotated: {} (each is on the port the next should be on); {} belongs on {}",
                                cycle.len(),
                                ring.join(", "),
                                o.local,
                                o.expected
                            );
                        }
                    } else if wrong_rail {
                        f.check = "cabling.wrong_rail".into();
                        f.message = format!(
                            "{} (rail {}) is cabled to {end} on rail {}; the inventory cables it to {}",
                            o.local,
                            o.rail.unwrap_or_default(),
                            rail.unwrap_or_default(),
                            o.expected
                        );
                    } else {
                        f.check = "cabling.misplaced".into();
                        let whose = owner
                            .get(end.as_str())
                            .map(|&j| format!(", which is {}'s port", obs[j].local))
                            .unwrap_or_else(|| ", a port the inventory leaves free".into());
                        f.message = format!(
                            "{} is cabled to {end}{whose}; the inventory cables it to {}",
                            o.local, o.expected
                        );
                    }
                }
                Heard::Unknown(what) => {
                    f.check = "cabling.unknown_neighbor".into();
                    f.outcome = Outcome::Deviation;
                    f.observed = Some(what.clone());
                    f.message = format!(
                        "{} hears {what}, which is not in the inventory; the inventory cables it to {}",
                        o.local, o.expected
                    );
                }
                Heard::Nothing => {
                    f.outcome = Outcome::NotAvailable;
                    f.message = format!(
                        "{} hears no LLDP neighbour though its link is up (is LLDP enabled on {}?)",
                        o.local, o.expected
                    );
                }
                Heard::Unread { outcome, why, tried } => {
                    f.outcome = *outcome;
                    f.sources = tried.clone();
                    f.message = why.clone();
                }
            }
            f
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn o(
        local: &str,
        expected: &str,
        heard: Option<&str>,
        rail: u32,
        heard_rail: u32,
    ) -> Observation {
        Observation {
            local: local.into(),
            host: local.split(':').next().unwrap().into(),
            expected: expected.into(),
            rail: Some(rail),
            heard: match heard {
                Some(h) => Heard::Peer {
                    end: h.into(),
                    rail: Some(heard_rail),
                },
                None => Heard::Nothing,
            },
            sources: vec!["lldpctl -f json0".into()],
            evidence: Vec::new(),
        }
    }

    #[test]
    fn a_two_cycle_is_a_swap_naming_both_ends_and_ports() {
        let obs = [
            o("g1:m0", "l1:swp1", Some("l1:swp1"), 0, 0),
            o("g2:m0", "l1:swp2", Some("l1:swp5"), 0, 0),
            o("g5:m0", "l1:swp5", Some("l1:swp2"), 0, 0),
        ];
        let f = findings("audit", &obs);
        assert_eq!(f[0].outcome, Outcome::Ok);
        for k in [1, 2] {
            assert_eq!(f[k].check, "cabling.swap");
            assert_eq!(f[k].outcome, Outcome::Deviation);
            for name in ["g2:m0", "g5:m0", "l1:swp2", "l1:swp5"] {
                assert!(f[k].message.contains(name), "{}", f[k].message);
            }
        }
    }

    #[test]
    fn longer_cycles_rotations_and_open_chains_misplaced() {
        let obs = [
            o("a:m", "l:1", Some("l:2"), 0, 0),
            o("b:m", "l:2", Some("l:3"), 0, 0),
            o("c:m", "l:3", Some("l:1"), 0, 0),
            o("d:m", "l:4", Some("l:9"), 0, 0),
            o("e:m", "l:5", Some("x:1"), 0, 1),
        ];
        let f = findings("audit", &obs);
        for x in &f[..3] {
            assert_eq!(x.check, "cabling.rotation", "{}", x.message);
            assert!(x.message.starts_with("3 cables are rotated"));
        }
        assert_eq!(f[3].check, "cabling.misplaced");
        assert!(f[3].message.contains("a port the inventory leaves free"));
        assert_eq!(f[4].check, "cabling.wrong_rail");
        assert!(f[4].message.contains("rail 0") && f[4].message.contains("rail 1"));
    }

    #[test]
    fn silence_is_not_available_and_strangers_deviate() {
        let mut obs = vec![o("a:m", "l:1", None, 0, 0)];
        obs.push(Observation {
            heard: Heard::Unknown("chassis core9 port Et1".into()),
            ..o("b:m", "l:2", None, 0, 0)
        });
        let f = findings("audit", &obs);
        assert_eq!(f[0].outcome, Outcome::NotAvailable);
        assert_eq!(f[1].check, "cabling.unknown_neighbor");
        assert_eq!(f[1].outcome, Outcome::Deviation);
    }
}
