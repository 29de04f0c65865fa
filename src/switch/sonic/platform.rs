//! The `sonic` platform: a SONiC switch reached by command lines over the
//! inventory's ssh transport, as the account the inventory logs in with
//! (`admin` on a stock image), with passwordless `sudo -n` for what needs
//! root. One switch's queries of a snapshot are composed into one `sh -c`
//! like `linux`'s ([`super::super::invocation`]).
//!
//! - counters: `portstat -r` (raw, whatever anyone cleared), `pfcstat -s
//!   all`, `queuestat`, the persistent PG and unicast queue watermarks
//!   (`watermarkstat -p -t pg_shared|q_shared_uni`), the PFC watchdog
//!   (`pfcwd show stats -e`), the WRED/ECN queue counters (`wredstat`) and
//!   the ports' flap counts (`show interfaces flap`), read by the parsers in
//!   [`super`]. Each prints every port of every ASIC, so a snapshot asks
//!   each once per switch, whatever the number of ports ([`READS`]); a port
//!   the inventory names by alias is read after SONiC's alias table
//!   ([`WITH_ALIASES`]);
//! - configuration: `sudo -n sonic-cfggen -d --print-data` (the running
//!   CONFIG_DB), `show interfaces status`, `/etc/sonic/sonic_version.yml`
//!   ([`super::config`]);
//! - LLDP: `docker exec lldp lldpctl -f json0`;
//! - faults: `config interface`, the `bgp` container, `vtysh`, with a
//!   systemd timer as the dead-man ([`super::fault`]).
//!
//! Why these reads and not `show …`: `show interfaces counters`, `show pfc
//! counters`, `show queue counters` and `show queue wredcounters` print
//! values relative to the last `sonic-clear` of the *same Unix account*
//! (sonic-utilities keeps the baseline in `/tmp/cache/<tool>/<uid>`,
//! `UserCache`). `portstat` has `-r` (raw, ignores the baseline);
//! `pfcstat`, `queuestat` and `wredstat` have none, so they run without
//! `sudo`, as the inventory's account, whose baseline rocegate never
//! writes. A `sonic-clear` by a person logged in as that same account
//! during a run would show as a counter going backwards.
//!
//! Watermarks: `watermarkstat` keeps three tables in COUNTERS_DB. USER
//! (`show … watermark`) is reset for *everyone* by any account's `sonic-clear
//! priority-group|queue watermark` (a request to the watermark orch, not a
//! per-uid baseline); PERIODIC is reset by the orch itself every telemetry
//! interval; PERSISTENT (`-p`) is reset only by an explicit `sonic-clear …
//! persistent-watermark`. Reading resets none of them. rocegate reads the
//! persistent ones: the peak occupancy since that last explicit clear (or
//! boot), a gauge read at each snapshot, not differenced. A rise between a
//! window's snapshots says the window (or the minute before it, see
//! [`Sonic::needs`]) set a new peak; an unchanged value says nothing about
//! the window. `pfcwd show stats` reads the watchdog's COUNTERS_DB fields
//! directly (no baseline at all); `-e` prints queues whose counters are all zero, so a storm that
//! starts during a window is a change from 0, not a counter that appeared.
//! The flap count lives in APPL_DB (no baseline) and is written on each
//! oper change, not polled.

use std::time::Duration;

use super::config;
use super::{
    parse_interfaces_counters, parse_interfaces_flap, parse_pfc_counters, parse_pfcwd_stats,
    parse_queue_counters, parse_watermark, parse_wred_counters, pfcwd_readings,
};
use crate::counters::host::{parse_lldpctl_json, LldpNeighbor};
use crate::counters::{ParseError, PortReadings, Reading};
use crate::switch::{Answer, Driver, Needs, Platform, Query, SwitchConfig};

/// A SONiC switch.
pub struct Sonic;

/// Tools the preflight looks for on a `sonic` switch. `watermarkstat`,
/// `pfcwd` and `ip` (every image has them) and `wredstat` (2025 images
/// only) are not required here: a counter read whose tool is missing says
/// so itself (exit 127, reported), and a switch without the newer tools still
/// serves its other reads.
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

/// Whether `port` is shaped like a SONiC port name (`Ethernet8`,
/// `Ethernet-BP256`) rather than a vendor alias (`etp9`, `fortyGigE0/8`,
/// `Ethernet1/1`).
pub fn is_port_name(port: &str) -> bool {
    port.strip_prefix("Ethernet")
        .is_some_and(|r| r.starts_with(|c: char| c.is_ascii_digit()) || r.starts_with("-BP"))
        && port.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
}

/// The counter reads of a switch, each printing **every** port (every ASIC
/// of a multi-ASIC switch: the tools walk the front-panel namespaces
/// themselves, `run_on_multi_asic`). They are the same for every port, so
/// a snapshot asks each once per switch however many ports it reads, and
/// each port's row is read from the one answer:
///
/// - `portstat -r`: raw, not relative to anyone's `sonic-clear`;
/// - `pfcstat -s all`, `queuestat`, `wredstat` (2025 images): no raw mode,
///   so they run as the inventory's account, whose baseline rocegate never
///   writes;
/// - `watermarkstat -p`: the *persistent* watermarks, reset only by an
///   explicit `sonic-clear … persistent-watermark` (the user watermarks
///   are reset by anyone's clear, the periodic ones by SONiC's timer);
///   reading resets none;
/// - `pfcwd show stats -e`: from the counter database, every watched queue
///   including those with nothing to show;
/// - `show interfaces flap`: the flap count orchagent keeps per port.
///
/// A tool the image lacks exits 127 and that read is reported, never 0.
const READS: [&[&str]; 8] = [
    &["portstat", "-r"],
    &["pfcstat", "-s", "all"],
    &["queuestat"],
    &["watermarkstat", "-p", "-t", "pg_shared"],
    &["watermarkstat", "-p", "-t", "q_shared_uni"],
    &["pfcwd", "show", "stats", "-e"],
    &["wredstat"],
    &["show", "interfaces", "flap"],
];

/// A read for a port the inventory names by its alias: SONiC's alias table
/// (`show interfaces alias`, every ASIC), a marker, then the tool. The
/// tools print SONiC names; the table says which one the alias is.
pub const WITH_ALIASES: &str =
    "show interfaces alias || exit; echo @@rocegate-counters; exec \"$@\"";

const ALIAS_MARK: &str = "@@rocegate-counters";

/// The counter read `tool` as a port named `port` needs it.
fn read_for(port: &str, tool: &[&str]) -> Query {
    if is_port_name(port) {
        argv(tool)
    } else {
        let mut a = vec!["sh", "-c", WITH_ALIASES, "rocegate"];
        a.extend_from_slice(tool);
        argv(&a)
    }
}

/// The tool of a counter read, without the alias wrapper.
pub fn tool_of(argv: &[String]) -> &[String] {
    match argv {
        [sh, c, script, tag, tool @ ..]
            if sh == "sh" && c == "-c" && script == WITH_ALIASES && tag == "rocegate" =>
        {
            tool
        }
        a => a,
    }
}

/// The SONiC name of `port` and the tool's output: `port` itself, or,
/// after the alias table, the name whose alias it is.
fn name_and_output(src: &str, port: &str, text: &str) -> Result<(String, String), ParseError> {
    if is_port_name(port) {
        return Ok((port.to_string(), text.to_string()));
    }
    let Some((table, out)) = text.split_once(&format!("{ALIAS_MARK}\n")) else {
        return Err(ParseError(format!(
            "{src}: no alias table before the counters (`show interfaces alias`): {}",
            crate::counters::first_line(text)
        )));
    };
    let name = crate::switch::table::ruled_tables(table)
        .into_iter()
        .flat_map(|t| t.rows)
        .find(|(_, r)| {
            r.get(1)
                .is_some_and(|a| a.eq_ignore_ascii_case(port.trim()))
        })
        .and_then(|(_, r)| r.first().cloned())
        .ok_or_else(|| {
            ParseError(format!(
                "{port} is neither a port nor a port alias of this switch (show interfaces alias)"
            ))
        })?;
    Ok((name, out.to_string()))
}

/// The one port of a per-port answer that names every port.
fn only(port: &str, tool: &str, all: Vec<PortReadings>) -> Result<Vec<Reading>, ParseError> {
    all.into_iter()
        .find(|p| Sonic.normalise_port(&p.port) == Sonic.normalise_port(port))
        .map(|p| p.readings)
        .ok_or_else(|| ParseError(format!("{tool}: no row for {port}")))
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
            // (and the WRED/ECN queue counters) every 10 s, watermarks every
            // 60 s (`counterpoll show`); the PFC watchdog's counters follow
            // its own poll (200 ms by default) and the flap count is written
            // on each oper change. A ledger window waits for the slowest
            // *counter* it differences: queues. The watermarks are gauges
            // (peak since the last persistent clear), read at each snapshot
            // and never differenced: waiting 60 s after every round for them
            // would cost a change window more than it tells, so a peak set
            // in a window's last minute may show only in the next window's
            // reading. That is said where the watermark is reported.
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
        READS.iter().map(|tool| read_for(port, tool)).collect()
    }

    fn parse_counters(
        &self,
        port: &str,
        q: &Query,
        a: &Answer,
    ) -> Result<Vec<Reading>, ParseError> {
        let src = self.counter_source(q);
        if src == "unknown" {
            return Err(ParseError(format!(
                "`{}` is not a counter read of the sonic platform",
                q.display()
            )));
        }
        let (port, text) = name_and_output(src, port, &a.text)?;
        let port = port.as_str();
        match src {
            "portstat -r" => {
                let rows = parse_interfaces_counters(&text)?;
                only(
                    port,
                    src,
                    rows.into_iter().map(|r| r.counters).collect::<Vec<_>>(),
                )
            }
            "pfcstat" => only(port, src, parse_pfc_counters(&text)?),
            "queuestat" => only(port, src, parse_queue_counters(&text)?),
            "watermarkstat -p -t pg_shared" | "watermarkstat -p -t q_shared_uni" => {
                only(port, src, parse_watermark(&text)?)
            }
            "pfcwd show stats" => {
                let rows = parse_pfcwd_stats(&text)?;
                // A port without a lossless queue (or without the watchdog)
                // has no row: nothing to count, which is not a storm.
                Ok(pfcwd_readings(&rows)
                    .into_iter()
                    .find(|p| self.normalise_port(&p.port) == self.normalise_port(port))
                    .map(|p| p.readings)
                    .unwrap_or_default())
            }
            "wredstat" => only(port, src, parse_wred_counters(&text)?),
            "show interfaces flap" => only(port, src, parse_interfaces_flap(&text)?),
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
        let words: Vec<&str> = tool_of(a).iter().map(String::as_str).collect();
        match words.as_slice() {
            ["portstat", "-r", ..] => "portstat -r",
            ["pfcstat", ..] => "pfcstat",
            ["queuestat", ..] => "queuestat",
            ["watermarkstat", "-p", "-t", "pg_shared"] => "watermarkstat -p -t pg_shared",
            ["watermarkstat", "-p", "-t", "q_shared_uni"] => "watermarkstat -p -t q_shared_uni",
            ["pfcwd", "show", "stats", ..] => "pfcwd show stats",
            ["wredstat", ..] => "wredstat",
            ["show", "interfaces", "flap", ..] => "show interfaces flap",
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
    /// another name space that this function cannot map (it has no
    /// CONFIG_DB): the counter reads resolve an alias on the switch
    /// ([`RESOLVE`]), the audit through the CONFIG_DB it reads, the faults
    /// in `config`'s alias mode. LLDP neighbours of a SONiC switch see the
    /// alias (lldpmgrd advertises it as the port id, subtype local).
    fn normalise_port(&self, name: &str) -> String {
        name.trim().to_ascii_lowercase()
    }
}

#[cfg(test)]
#[path = "tests_platform.rs"]
mod tests;
