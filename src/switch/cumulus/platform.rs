//! The requests of the `cumulus` platform and the [`Platform`] that reads
//! their answers: counters from `nv show interface IF link stats -o json`,
//! `nv show interface IF counters qos` (per priority and traffic class) and
//! `nv show interface IF qos roce counters -o json` (RoCE pauses, ECN
//! marks, buffer discards); the audit's link reads from `nv show interface
//! IF link -o json`, each port's PFC and ECN from `nv show interface IF qos
//! roce status -o json`, the DSCP map and trust from `nv show qos roce -o
//! json` (shapes: [`super::qos`]), the release from `/etc/lsb-release`,
//! LLDP from lldpd (`lldpctl -f json0`, as on `linux`).
//!
//! Not available: the PFC Xoff threshold (NVUE shows buffer pools, not a
//! per-priority Xoff) and the PFC watchdog (no public capture of `nv show
//! qos pfc-watchdog`'s answer to build a parser from).

use std::time::Duration;

use crate::counters::host::{parse_lldpctl_json, LldpNeighbor};
use crate::counters::{ParseError, Reading};
use crate::switch::config::{fact, Fact};
use crate::switch::{Answer, Driver, Needs, Platform, PortSettings, Query, SwitchConfig};

/// NVIDIA Cumulus Linux 5.x (NVUE).
pub struct Cumulus;

/// `nv` for reads; the rest for faults (the `linux` driver's tools) and LLDP.
const TOOLS: [&str; 7] = ["nv", "ip", "setsid", "pkill", "pgrep", "vtysh", "lldpctl"];

const STATS: &str = "nv show interface link stats";
const QOS: &str = "nv show interface counters qos";
const ROCE: &str = "nv show interface qos roce counters";

/// Why the PFC watchdog is not read.
const NO_WATCHDOG: &str = "no public capture of NVUE's `nv show qos pfc-watchdog` answer exists to build a parser from; rocegate does not guess its shape";

fn link_query(port: &str) -> Query {
    Query::argv(&["nv", "show", "interface", port, "link", "-o", "json"])
}

fn roce_status_query(port: &str) -> Query {
    Query::argv(&[
        "nv",
        "show",
        "interface",
        port,
        "qos",
        "roce",
        "status",
        "-o",
        "json",
    ])
}

/// A part of a port's RoCE status: known, or not available naming the
/// command and what the answer lacked.
fn roce_part<T>(
    switch: &str,
    q: &Query,
    a: Option<&Answer>,
    what: &'static str,
    get: fn(&super::qos::RoceStatus) -> Option<T>,
) -> Fact<T> {
    match fact(switch, q, a, super::qos::parse_roce_status, Ok) {
        Fact::Known(st) => match get(&st) {
            Some(v) => Fact::Known(v),
            None => Fact::NotAvailable {
                tried: vec![q.display()],
                why: format!(
                    "{switch}: `{}` does not say the {what} ({})",
                    q.display(),
                    st.missing.join("; ")
                ),
            },
        },
        Fact::NotAvailable { tried, why } => Fact::NotAvailable { tried, why },
        Fact::Failed(e) => Fact::Failed(e),
    }
}

impl Platform for Cumulus {
    fn name(&self) -> &'static str {
        "cumulus"
    }

    fn needs(&self) -> Needs {
        Needs {
            // `nv show` runs as any user in the `nvshow` group.
            root_for_config: false,
            // `ip link set`, `systemctl` and the dead-man need root (sudo).
            root_for_faults: true,
            // switchd polls the ASIC's counters: a snapshot taken at once
            // after traffic can miss the last poll.
            counter_interval: Duration::from_secs(2),
            deadman_delay: Duration::from_secs(60),
        }
    }

    fn tools(&self) -> &[&'static str] {
        &TOOLS
    }

    fn reached_by_argv(&self) -> bool {
        true
    }

    fn faults(&self) -> &dyn Driver {
        &super::fault::CumulusFaults
    }

    fn counter_queries(&self, port: &str) -> Vec<Query> {
        vec![
            Query::argv(&[
                "nv",
                "show",
                "interface",
                port,
                "link",
                "stats",
                "-o",
                "json",
            ]),
            Query::argv(&["nv", "show", "interface", port, "counters", "qos"]),
            Query::argv(&[
                "nv",
                "show",
                "interface",
                port,
                "qos",
                "roce",
                "counters",
                "-o",
                "json",
            ]),
        ]
    }

    fn parse_counters(
        &self,
        _port: &str,
        q: &Query,
        a: &Answer,
    ) -> Result<Vec<Reading>, ParseError> {
        match self.counter_source(q) {
            STATS => super::parse_link_stats(&a.text).map(|r| r.readings),
            QOS => super::parse_qos_counters(&a.text).map(|r| r.readings),
            ROCE => super::qos::parse_roce_counters(&a.text).map(|r| r.readings),
            _ => Err(ParseError(format!(
                "`{}` is not a counter read of the cumulus platform",
                q.display()
            ))),
        }
    }

    fn counter_source(&self, q: &Query) -> &'static str {
        let Query::Argv(argv) = q else {
            return "unknown";
        };
        let w: Vec<&str> = argv.iter().map(String::as_str).collect();
        match w.as_slice() {
            ["nv", "show", "interface", _, "link", "stats", ..] => STATS,
            ["nv", "show", "interface", _, "counters", "qos", ..] => QOS,
            ["nv", "show", "interface", _, "qos", "roce", "counters", ..] => ROCE,
            _ => "unknown",
        }
    }

    /// Per port its link, then its RoCE status; then the switch's RoCE
    /// object and the release.
    fn config_queries(&self, ports: &[String]) -> Vec<Query> {
        let mut q: Vec<Query> = ports.iter().map(|p| link_query(p)).collect();
        q.extend(ports.iter().map(|p| roce_status_query(p)));
        q.push(Query::argv(&["nv", "show", "qos", "roce", "-o", "json"]));
        q.push(Query::argv(&["cat", "/etc/lsb-release"]));
        q
    }

    fn parse_config(&self, switch: &str, ports: &[String], answers: &[Answer]) -> SwitchConfig {
        let qs = self.config_queries(ports);
        let n = ports.len();
        let ports = ports
            .iter()
            .enumerate()
            .map(|(i, name)| {
                let a = answers.get(i);
                let (rq, ra) = (&qs[n + i], answers.get(n + i));
                let link = |f: fn(&super::Link) -> Option<u64>, what: &'static str| {
                    fact(switch, &qs[i], a, super::parse_link, move |l| {
                        f(&l).ok_or_else(|| format!("no {what} in the answer"))
                    })
                };
                PortSettings {
                    name: name.clone(),
                    link_up: link(|l| l.oper_up.map(u64::from), "oper-status").map(|v| v == 1),
                    speed_mbps: link(|l| l.speed_mbps, "speed"),
                    mtu: link(|l| l.mtu.map(u64::from), "mtu").map(|m| m as u32),
                    pfc: roce_part(switch, rq, ra, "PFC priorities", |s| s.pfc),
                    ecn: roce_part(switch, rq, ra, "ECN thresholds", |s| s.ecn.clone()),
                    pfc_xoff_bytes: Fact::NotAvailable {
                        tried: vec![rq.display()],
                        why: format!("{switch}: NVUE shows RoCE buffer pools, not a per-priority PFC Xoff threshold"),
                    },
                }
            })
            .collect();
        let last = qs.len() - 1;
        SwitchConfig {
            nos_version: fact(
                switch,
                &qs[last],
                answers.get(last),
                super::parse_lsb_release,
                Ok,
            ),
            pfc_watchdog: Fact::NotAvailable {
                tried: vec!["nv show qos pfc-watchdog -o json".into()],
                why: format!("{switch}: the PFC watchdog: {NO_WATCHDOG}"),
            },
            dscp_prio: fact(
                switch,
                &qs[last - 1],
                answers.get(last - 1),
                super::qos::parse_dscp_map,
                Ok,
            ),
            ports,
        }
    }

    fn lldp_query(&self) -> Query {
        // Cumulus runs lldpd; `json0` keeps one shape whatever the number
        // of neighbours (see the linux platform).
        Query::argv(&["lldpctl", "-f", "json0"])
    }

    fn parse_lldp(&self, a: &Answer) -> Result<Vec<LldpNeighbor>, ParseError> {
        parse_lldpctl_json(&a.text)
    }

    fn optics_query(&self, port: &str) -> Option<Query> {
        // switchd answers the module's EEPROM through ethtool, as on linux.
        Some(Query::argv(&["ethtool", "-m", port]))
    }

    /// Cumulus names ports `swpN` (`swp1s0` for a breakout); LLDP and a
    /// hand-written inventory may differ in case.
    fn normalise_port(&self, name: &str) -> String {
        crate::switch::linux::Linux.normalise_port(name)
    }
}
