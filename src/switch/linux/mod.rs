//! The `linux` platform: a Linux box used as a switch (a Spectrum ASIC
//! under mainline `mlxsw`, ports `swp1`, …; FRR for routing), reached by
//! command lines over the inventory's transport. This is what the lab runs,
//! and what Cumulus and SONiC are underneath. Its faults also serve every
//! GPU node's own NICs ([`super::for_node`]).
//!
//! - counters: `ethtool -S`, `ip -s -s -j link`, `tc -s -d qdisc`
//!   ([`counters`]);
//! - configuration: `dcb pfc show`, `tc -s -d qdisc show`, `ip -j link
//!   show`, `ethtool` per port and `uname -r` once ([`config`]);
//! - LLDP: `lldpctl -f json0`; optics: `ethtool -m`;
//! - faults: `ip link`, FRR's init, a `setsid` dead-man ([`fault`]).

use std::time::Duration;

use super::{Answer, Driver, Needs, Platform, Query, SwitchConfig};
use crate::counters::host::{parse_lldpctl_json, LldpNeighbor};
use crate::counters::{ParseError, Reading};

pub mod config;
pub mod counters;
pub mod fault;

/// A Linux box used as a switch, or a node's own NICs.
pub struct Linux;

/// Tools the preflight looks for on a `linux` switch.
const TOOLS: [&str; 6] = ["ip", "ethtool", "tc", "dcb", "vtysh", "lldpctl"];

impl Platform for Linux {
    fn name(&self) -> &'static str {
        "linux"
    }

    fn needs(&self) -> Needs {
        Needs {
            // `dcb`, `tc`, `ip` and `ethtool` read as any user; only
            // `ethtool -m` (not part of the config reads) wants root.
            root_for_config: false,
            root_for_faults: true,
            // mlxsw reads PPCNT from the hardware at every `ethtool -S`.
            counter_interval: Duration::ZERO,
            // Past the planned outage: long enough for a slow undo over a
            // loaded management network to win the race with the timer.
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
        self
    }

    fn counter_queries(&self, port: &str) -> Vec<Query> {
        counters::sample_argv(port)
            .into_iter()
            .map(Query::Argv)
            .collect()
    }

    fn parse_counters(
        &self,
        _port: &str,
        q: &Query,
        a: &Answer,
    ) -> Result<Vec<Reading>, ParseError> {
        match self.counter_source(q) {
            "ethtool -S" => counters::parse_ethtool_stats(&a.text),
            "ip -s -s -j link" => counters::parse_ip_link_json(&a.text)
                .map(|links| links.into_iter().flat_map(|l| l.readings).collect()),
            "tc -s -d qdisc" => counters::parse_tc_qdisc(&a.text)
                .map(|bands| bands.iter().flat_map(|b| b.readings()).collect()),
            _ => Err(ParseError(format!(
                "`{}` is not a counter read of the linux platform",
                q.display()
            ))),
        }
    }

    fn counter_source(&self, q: &Query) -> &'static str {
        let Query::Argv(argv) = q else {
            return "unknown";
        };
        match argv.first().map(String::as_str) {
            Some("ethtool") => "ethtool -S",
            Some("ip") => "ip -s -s -j link",
            Some("tc") => "tc -s -d qdisc",
            _ => "unknown",
        }
    }

    fn config_queries(&self, ports: &[String]) -> Vec<Query> {
        config::queries(ports)
    }

    fn parse_config(&self, switch: &str, ports: &[String], answers: &[Answer]) -> SwitchConfig {
        config::parse(switch, ports, answers)
    }

    fn lldp_query(&self) -> Query {
        // `json0`, not `json`: lldpd's `json` collapses one-element lists,
        // so its shape changes with the number of neighbours.
        Query::argv(&["lldpctl", "-f", "json0"])
    }

    fn parse_lldp(&self, a: &Answer) -> Result<Vec<LldpNeighbor>, ParseError> {
        parse_lldpctl_json(&a.text)
    }

    fn optics_query(&self, port: &str) -> Option<Query> {
        Some(Query::argv(&["ethtool", "-m", port]))
    }

    /// Linux names are case-sensitive, but an LLDP port id or a hand-written
    /// inventory may differ from the netdev in case (`SWP1`) or carry a
    /// subinterface `.0`; neither can name a different port on a switch.
    fn normalise_port(&self, name: &str) -> String {
        let n = name.trim();
        n.strip_suffix(".0").unwrap_or(n).to_ascii_lowercase()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counter_queries_parse_by_their_tool() {
        let qs = Linux.counter_queries("swp7");
        let sources: Vec<_> = qs.iter().map(|q| Linux.counter_source(q)).collect();
        assert_eq!(
            sources,
            ["ethtool -S", "ip -s -s -j link", "tc -s -d qdisc"]
        );
        let a = Answer {
            exit: Some(0),
            text: "NIC statistics:\n     ecn_marked: 5\n".into(),
        };
        let r = Linux.parse_counters("", &qs[0], &a).unwrap();
        assert_eq!(r[0].value, 5);
        assert!(Linux.parse_counters("", &qs[1], &a).is_err());
    }

    #[test]
    fn port_names_compare_equal_after_normalising() {
        for n in ["swp1", "SWP1", " swp1.0", "swp1"] {
            assert_eq!(Linux.normalise_port(n), "swp1", "{n}");
        }
        assert_ne!(Linux.normalise_port("swp1.10"), "swp1");
        let once = Linux.normalise_port("Swp3.0");
        assert_eq!(Linux.normalise_port(&once), once);
        assert_eq!(Linux.port_path("swp1"), "swp1");
    }

    #[test]
    fn lldp_reads_json0_and_optics_are_ethtool_m() {
        assert_eq!(
            Linux.lldp_query(),
            Query::Argv(vec!["lldpctl".into(), "-f".into(), "json0".into()])
        );
        assert!(Linux
            .parse_lldp(&Answer {
                exit: Some(0),
                text: "not json".into()
            })
            .is_err());
        assert_eq!(
            Linux.optics_query("swp2").map(|q| q.display()),
            Some("ethtool -m swp2".into())
        );
    }
}
