//! The `sonic` platform: a SONiC switch reached by command lines over the
//! inventory's ssh transport, as the account the inventory logs in with
//! (`admin` on a stock image), with passwordless `sudo -n` for what needs
//! root. One switch's queries of a snapshot are composed into one `sh -c`
//! like `linux`'s ([`super::super::invocation`]).
//!
//! - counters: `portstat -r -i PORT` (raw, whatever anyone cleared),
//!   `pfcstat -s all`, `queuestat -p PORT`, read by the parsers in
//!   [`super`];
//! - configuration: `sudo -n sonic-cfggen -d --print-data` (the running
//!   CONFIG_DB), `show interfaces status`, `/etc/sonic/sonic_version.yml`
//!   ([`super::config`]);
//! - LLDP: `docker exec lldp lldpctl -f json0`;
//! - faults: `config interface`, the `bgp` container, `vtysh`, with a
//!   systemd timer as the dead-man ([`super::fault`]).
//!
//! Why these reads and not `show …`: `show interfaces counters`, `show pfc
//! counters` and `show queue counters` print values relative to the last
//! `sonic-clear` of the *same Unix account* (sonic-utilities keeps the
//! baseline in `/tmp/cache/<tool>/<uid>`, `UserCache`). `portstat` has
//! `-r` (raw, ignores the baseline); `pfcstat` and `queuestat` have none,
//! so they run without `sudo`, as the inventory's account, whose baseline
//! rocegate never writes. A `sonic-clear` by a person logged in as that
//! same account during a run would show as a counter going backwards.

use std::time::Duration;

use super::config;
use super::{parse_interfaces_counters, parse_pfc_counters, parse_queue_counters};
use crate::counters::host::{parse_lldpctl_json, LldpNeighbor};
use crate::counters::{ParseError, PortReadings, Reading};
use crate::switch::{Answer, Driver, Needs, Platform, Query, SwitchConfig};

/// A SONiC switch.
pub struct Sonic;

/// Tools the preflight looks for on a `sonic` switch.
const TOOLS: [&str; 9] = [
    "show",
    "config",
    "portstat",
    "pfcstat",
    "queuestat",
    "sonic-cfggen",
    "systemd-run",
    "vtysh",
    "docker",
];

pub(crate) fn argv(words: &[&str]) -> Query {
    Query::Argv(words.iter().map(|w| w.to_string()).collect())
}

/// The one port of a per-port answer that names every port.
fn only(port: &str, tool: &str, all: Vec<PortReadings>) -> Result<Vec<Reading>, ParseError> {
    all.into_iter()
        .find(|p| Sonic.normalise_port(&p.port) == Sonic.normalise_port(port))
        .map(|p| p.readings)
        .ok_or_else(|| ParseError(format!("{tool}: no row for {port}")))
}

/// The port a counter query names (`-i PORT`, `-p PORT`,
/// `ROCEGATE_PORT=PORT`).
fn port_of(q: &Query) -> Option<&str> {
    let Query::Argv(a) = q else { return None };
    if let Some(p) = a.iter().find_map(|w| w.strip_prefix("ROCEGATE_PORT=")) {
        return Some(p);
    }
    a.iter()
        .position(|w| w == "-i" || w == "-p" || w == "--port")
        .and_then(|i| a.get(i + 1))
        .map(String::as_str)
}

impl Platform for Sonic {
    fn name(&self) -> &'static str {
        "sonic"
    }

    fn needs(&self) -> Needs {
        Needs {
            // `sonic-cfggen -d` reads CONFIG_DB through redis, which a
            // stock image opens to root (`show runningconfiguration all`
            // runs it under sudo too).
            root_for_config: true,
            root_for_faults: true,
            // SONiC's flex counters poll the ASIC: ports every 1 s, queues
            // every 10 s, watermarks every 60 s (`counterpoll show`). A
            // ledger window waits for the slowest counter it reads: queues.
            counter_interval: Duration::from_secs(10),
            // As on linux: past the planned outage, long enough for a slow
            // undo to win the race with the timer.
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
        vec![
            // `-r`: raw, not relative to anyone's `sonic-clear`.
            argv(&["portstat", "-r", "-i", port]),
            // pfcstat has no port filter: it prints every port of every
            // ASIC (`-s all`). The port rides in an environment variable
            // pfcstat ignores, so that the answer's reader knows its row.
            argv(&[
                "env",
                &format!("ROCEGATE_PORT={port}"),
                "pfcstat",
                "-s",
                "all",
            ]),
            argv(&["queuestat", "-p", port]),
        ]
    }

    fn parse_counters(&self, q: &Query, a: &Answer) -> Result<Vec<Reading>, ParseError> {
        let src = self.counter_source(q);
        match src {
            "portstat -r" => {
                let port = port_of(q).unwrap_or_default();
                let rows = parse_interfaces_counters(&a.text)?;
                only(
                    port,
                    src,
                    rows.into_iter().map(|r| r.counters).collect::<Vec<_>>(),
                )
            }
            "pfcstat" => {
                let port = port_of(q).unwrap_or_default();
                only(port, src, parse_pfc_counters(&a.text)?)
            }
            "queuestat" => {
                let port = port_of(q).unwrap_or_default();
                only(port, src, parse_queue_counters(&a.text)?)
            }
            _ => Err(ParseError(format!(
                "`{}` is not a counter read of the sonic platform",
                q.display()
            ))),
        }
    }

    fn counter_source(&self, q: &Query) -> &'static str {
        let Query::Argv(a) = q else {
            return "unknown";
        };
        let tool = a.iter().find(|w| !w.contains('=') && *w != "env");
        match tool.map(String::as_str) {
            Some("portstat") => "portstat -r",
            Some("pfcstat") => "pfcstat",
            Some("queuestat") => "queuestat",
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
        // lldpd runs in the `lldp` container; `json0` keeps one shape
        // whatever the number of neighbours (see the linux platform).
        argv(&["docker", "exec", "lldp", "lldpctl", "-f", "json0"])
    }

    fn parse_lldp(&self, a: &Answer) -> Result<Vec<LldpNeighbor>, ParseError> {
        parse_lldpctl_json(&a.text)
    }

    fn optics_query(&self, port: &str) -> Option<Query> {
        // `sfputil show eeprom -d` prints SONiC's own layout, not `ethtool
        // -m`'s: no parser reads it yet.
        let _ = port;
        None
    }

    /// SONiC names ports `Ethernet0`, `Ethernet4`, … (the kernel netdev and
    /// CONFIG_DB key); case and surrounding space are normalised. Vendor
    /// aliases (`etp1`, `fortyGigE0/0`, CONFIG_DB `PORT|…|alias`) are
    /// another name space: an inventory writes the `Ethernet` name.
    fn normalise_port(&self, name: &str) -> String {
        name.trim().to_ascii_lowercase()
    }
}

#[cfg(test)]
#[path = "tests_platform.rs"]
mod tests;
