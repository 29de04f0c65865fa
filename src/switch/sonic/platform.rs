//! The `sonic` platform: a SONiC switch reached by command lines over the
//! inventory's ssh transport, as the account the inventory logs in with
//! (`admin` on a stock image), with passwordless `sudo -n` for what needs
//! root. One switch's queries of a snapshot are composed into one `sh -c`
//! like `linux`'s ([`super::super::invocation`]).
//!
//! - counters: `portstat -r -i PORT` (raw, whatever anyone cleared),
//!   `pfcstat -s all`, `queuestat -p PORT`, the persistent PG and unicast
//!   queue watermarks (`watermarkstat -p -t pg_shared|q_shared_uni`), the
//!   PFC watchdog (`pfcwd show stats -e PORT:0 … PORT:7`), the WRED/ECN
//!   queue counters (`wredstat -p PORT`) and the port's flap count (`show
//!   interfaces flap PORT`), read by the parsers in [`super`], each through
//!   [`RESOLVE`] (alias → name, the ASIC that holds the port);
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
//! directly (no baseline at all) and, given queue names, searches every
//! ASIC; `-e` prints queues whose counters are all zero, so a storm that
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
/// so itself ([`RESOLVE`]), and a switch without the newer tools still
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

/// The script every counter read runs in: `sh -c RESOLVE rocegate PORT
/// WHERE TOOL ARGS…`. It prints `@@port NAME` and then TOOL's output, with
/// `@PORT@` in ARGS replaced by NAME:
///
/// - NAME is PORT when PORT is shaped like a SONiC port name (`Ethernet8`,
///   `Ethernet-BP256`), otherwise the port whose CONFIG_DB alias PORT is,
///   as `show interfaces alias` in alias mode finds it (every ASIC's
///   CONFIG_DB; `etp9`, `fortyGigE0/8`, `Ethernet1/1` on SKUs that alias
///   ports so); no such alias is an error naming PORT;
/// - WHERE `each`: on a multi-ASIC switch (`ip netns list` shows `asicN`)
///   TOOL runs with `-n asicN` for each ASIC until one answers, because
///   `queuestat -p` and `wredstat -p` without `-n` walk the namespaces and
///   exit at the first that lacks the port ("Port doesn't exist!"); a port
///   on none of them is an error naming it and the ASICs. WHERE `all`: TOOL
///   searches every ASIC itself (portstat, pfcstat, watermarkstat, pfcwd
///   with queue names, `show interfaces flap PORT`);
/// - a TOOL the image lacks (`wredstat` before sonic-utilities 2025) is
///   an error saying it is not available, exit 127.
pub const RESOLVE: &str = r#"p=$1 w=$2; shift 2
case $p in *[!A-Za-z0-9-]*|'') n= ;; Ethernet[0-9]*|Ethernet-BP[0-9]*) n=$p ;; *) n= ;; esac
if [ -z "$n" ]; then
n=$(SONIC_CLI_IFACE_MODE=alias show interfaces alias "$p" 2>/dev/null | awk 'NR > 2 && NF { print $1; exit }')
[ -n "$n" ] || { echo "rocegate: $p is neither a port nor a port alias of this switch (show interfaces alias)" >&2; exit 3; }
fi
for a do shift; case $a in *@PORT@*) a="${a%%@PORT@*}$n${a#*@PORT@}" ;; esac; set -- "$@" "$a"; done
command -v "$1" >/dev/null 2>&1 || { echo "rocegate: $1 is not available on this SONiC image" >&2; exit 127; }
echo "@@port $n"
if [ "$w" = each ]; then
l=$(ip netns list 2>/dev/null | awk '$1 ~ /^asic[0-9]+$/ { print $1 }')
if [ -n "$l" ]; then
for k in $l; do o=$("$@" -n "$k" 2>&1) && { printf '%s\n' "$o"; exit 0; }; done
echo "rocegate: $n is on none of the ASICs" $l "($1 -n asicN: $o)" >&2; exit 1
fi
fi
exec "$@""#;

/// Whether `port` is shaped like a SONiC port name (`Ethernet8`,
/// `Ethernet-BP256`) rather than a vendor alias (`etp9`, `fortyGigE0/8`,
/// `Ethernet1/1`), as [`RESOLVE`] decides.
pub fn is_port_name(port: &str) -> bool {
    port.strip_prefix("Ethernet")
        .is_some_and(|r| r.starts_with(|c: char| c.is_ascii_digit()) || r.starts_with("-BP"))
        && port.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
}

/// Where a read's tool finds the port on a multi-ASIC switch (see
/// [`RESOLVE`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Where {
    /// The tool searches every ASIC itself.
    All,
    /// The tool must be told the ASIC (`-n asicN`).
    Each,
}

/// A counter read of `port` through [`RESOLVE`]; `@PORT@` in `tool` is
/// the port's SONiC name.
pub fn resolved(port: &str, w: Where, tool: &[&str]) -> Query {
    let mut a = vec!["sh", "-c", RESOLVE, "rocegate", port];
    a.push(match w {
        Where::All => "all",
        Where::Each => "each",
    });
    a.extend_from_slice(tool);
    argv(&a)
}

/// A [`resolved`] query taken apart: the inventory's port, where, and the
/// tool's argv (with `@PORT@` still in it). `None` for any other query.
pub fn unresolve(argv: &[String]) -> Option<(&str, Where, &[String])> {
    match argv {
        [sh, c, script, tag, port, w, tool @ ..]
            if sh == "sh" && c == "-c" && script == RESOLVE && tag == "rocegate" =>
        {
            let w = match w.as_str() {
                "all" => Where::All,
                "each" => Where::Each,
                _ => return None,
            };
            Some((port.as_str(), w, tool))
        }
        _ => None,
    }
}

/// The SONiC name [`RESOLVE`] printed before the tool's output, and the
/// output after it.
fn split_port(src: &str, text: &str) -> Result<(String, String), ParseError> {
    let mut lines = text.splitn(2, '\n');
    let first = lines.next().unwrap_or_default();
    let name = first
        .strip_prefix("@@port ")
        .map(str::trim)
        .filter(|n| !n.is_empty())
        .ok_or_else(|| {
            ParseError(format!(
                "{src}: the answer does not start with the port's name (`@@port NAME`): {}",
                crate::counters::first_line(text)
            ))
        })?;
    Ok((
        name.to_string(),
        lines.next().unwrap_or_default().to_string(),
    ))
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
        let queues: Vec<String> = (0..8).map(|q| format!("@PORT@:{q}")).collect();
        let mut pfcwd = vec!["pfcwd", "show", "stats", "-e"];
        pfcwd.extend(queues.iter().map(String::as_str));
        vec![
            // `-r`: raw, not relative to anyone's `sonic-clear`.
            resolved(port, Where::All, &["portstat", "-r", "-i", "@PORT@"]),
            // pfcstat has no port filter: it prints every port of every
            // ASIC (`-s all`); the port's row is read.
            resolved(port, Where::All, &["pfcstat", "-s", "all"]),
            resolved(port, Where::Each, &["queuestat", "-p", "@PORT@"]),
            // `-p`: the persistent watermarks (see the module's comment).
            resolved(
                port,
                Where::All,
                &["watermarkstat", "-p", "-t", "pg_shared"],
            ),
            resolved(
                port,
                Where::All,
                &["watermarkstat", "-p", "-t", "q_shared_uni"],
            ),
            resolved(port, Where::All, &pfcwd),
            resolved(port, Where::Each, &["wredstat", "-p", "@PORT@"]),
            resolved(port, Where::All, &["show", "interfaces", "flap", "@PORT@"]),
        ]
    }

    fn parse_counters(&self, q: &Query, a: &Answer) -> Result<Vec<Reading>, ParseError> {
        let src = self.counter_source(q);
        if src == "unknown" {
            return Err(ParseError(format!(
                "`{}` is not a counter read of the sonic platform",
                q.display()
            )));
        }
        let (port, text) = split_port(src, &a.text)?;
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
        let Some((_, _, tool)) = unresolve(a) else {
            return "unknown";
        };
        let words: Vec<&str> = tool.iter().map(String::as_str).collect();
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
