//! Switch platforms: everything rocegate does with a switch, one home per
//! platform. A caller (the sampler, the audit, a fault, `inventory
//! discover`) asks [`platform`] for the switch's [`Platform`] and speaks to
//! it in [`Query`]s the platform builds and [`Answer`]s the platform parses;
//! nothing outside this module matches on [`SwitchDriver`].
//!
//! Requests are data, not command lines, so that a platform reached over
//! HTTPS (Arista eAPI's `runCmds`, NX-API's `/ins`, the APIC REST API: one
//! call per batch) can sit beside the argv-over-transport ones without
//! touching callers: [`invocation`] turns one switch's batch of queries into
//! the one round trip that asks them all, and [`answers`] splits what came
//! back. Built: `linux` (a Linux box used as a switch: mlxsw, `ip`, `tc`,
//! `dcb`, FRR; also every GPU node's own NICs for faults), `sonic` and
//! `cumulus` over ssh, `eos`, `nxos` and `aci` over HTTPS
//! (docs/switches.md).
//!
//! This module knows requests and text formats, not transports: it builds
//! [`Invocation`]s and never runs one.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::config::inventory::SwitchDriver;
use crate::counters::host::LldpNeighbor;
use crate::counters::{ParseError, Reading};
use crate::exec::compose::{compose, split};
use crate::exec::{Invocation, InvocationOutput, Role};

pub mod aci;
pub mod call;
pub mod config;
pub mod cumulus;
pub mod eos;
pub mod fault;
pub mod linux;
pub mod nxos;
pub mod sonic;
pub mod table;

pub use config::{DscpClass, EcnQueue, Fact, PortSettings, SwitchConfig};
pub use fault::Driver;

/// One request to a switch. Built by its platform, answered by the
/// transport, read back by the same platform. Serialised in the fault
/// journal, so `recover` can send an undo and read its answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Query {
    /// A command line run on the switch over the inventory's transport
    /// (ssh, or the emulated fabric).
    Argv(Vec<String>),
    /// CLI commands run through the switch's HTTPS API.
    Api(ApiQuery),
}

/// Commands asked through a switch's API, answered together.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApiQuery {
    pub api: Api,
    pub form: Form,
    /// In order; one command for a read, several for a change.
    pub cmds: Vec<String>,
}

/// Which API carries a query.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Api {
    /// Arista eAPI: `POST /command-api`, JSON-RPC `runCmds`.
    Eapi,
    /// Cisco NX-API: `POST /ins`, `ins_api`.
    Nxapi,
    /// The Cisco APIC's REST API: each command is one request, `METHOD
    /// PATH` or `METHOD PATH BODY`.
    Apic,
}

/// How the commands are run and answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Form {
    /// Structured (JSON) output.
    Json,
    /// The CLI's text, for a command with no JSON form.
    Text,
    /// Configuration commands, in order, in one configuration context.
    Conf,
}

impl Query {
    /// The request as a person would type it, for messages.
    pub fn display(&self) -> String {
        match self {
            Query::Argv(argv) => argv.join(" "),
            Query::Api(q) => q.cmds.join("; "),
        }
    }

    /// The argv a transport runs for this query alone ([`single`]'s).
    pub fn command_line(&self) -> Vec<String> {
        single("", self, Duration::ZERO).argv
    }

    pub(crate) fn api(api: Api, form: Form, cmds: &[&str]) -> Query {
        Query::Api(ApiQuery {
            api,
            form,
            cmds: cmds.iter().map(|c| c.to_string()).collect(),
        })
    }

    fn argv(words: &[&str]) -> Query {
        Query::Argv(words.iter().map(|w| w.to_string()).collect())
    }
}

/// What one [`Query`] got back.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Answer {
    /// The command's exit status (an HTTP platform maps its status here);
    /// `None` when the answer was cut off or never came.
    pub exit: Option<i32>,
    /// stdout and stderr together (an HTTP platform: the body).
    pub text: String,
}

/// What a platform's operations need from the controller and from time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Needs {
    /// Configuration reads need root (or the NOS's admin role).
    pub root_for_config: bool,
    /// Faults need root.
    pub root_for_faults: bool,
    /// How long after a change its counters show it: a ledger window closes
    /// this long after traffic stops (SONiC: port counters 1 s, queue
    /// counters 10 s; `linux` reads the hardware, 0).
    pub counter_interval: Duration,
    /// How long the device-side dead-man waits beyond a fault's planned
    /// end before it undoes the change itself.
    pub deadman_delay: Duration,
}

/// Everything rocegate does with one switch platform. Each operation is a
/// request the platform builds and an answer it parses; callers never build
/// a switch's command line themselves.
pub trait Platform: Sync {
    /// The name an inventory writes (`linux`).
    fn name(&self) -> &'static str;

    /// Privilege, counter update interval and dead-man delay.
    fn needs(&self) -> Needs;

    /// Commands the preflight looks for on the switch (empty for a platform
    /// reached over HTTPS).
    fn tools(&self) -> &[&'static str];

    /// Whether the switch is reached by running command lines over the
    /// inventory's transport (and so answers the preflight script), rather
    /// than through an HTTPS API.
    fn reached_by_argv(&self) -> bool;

    /// Faults: prior state, change and undo with the device-side dead-man.
    fn faults(&self) -> &dyn Driver;

    /// The counter reads of one port, in the order [`Platform::parse_counters`]
    /// expects their answers.
    fn counter_queries(&self, port: &str) -> Vec<Query>;

    /// Reads one answer of [`Platform::counter_queries`] for `port` (the
    /// port the queries were built for: a read of every port, which several
    /// ports' queries share, is asked once and read once per port). Only
    /// called with an answer that exited 0; the caller reports the others.
    fn parse_counters(&self, port: &str, q: &Query, a: &Answer)
        -> Result<Vec<Reading>, ParseError>;

    /// The tool a counter query reads, as recorded in a snapshot's `source`
    /// (`ethtool -S`, `tc -s -d qdisc`): stable across ports.
    fn counter_source(&self, q: &Query) -> &'static str;

    /// The configuration reads the audit needs for these ports, in the order
    /// [`Platform::parse_config`] expects their answers.
    fn config_queries(&self, ports: &[String]) -> Vec<Query>;

    /// Reads the answers to [`Platform::config_queries`] (same `ports`, one
    /// answer per query, in order; missing answers count as cut off). Never
    /// fails as a whole: each [`Fact`] says what it could not learn, naming
    /// `switch`, the command and an excerpt of what it printed.
    fn parse_config(&self, switch: &str, ports: &[String], answers: &[Answer]) -> SwitchConfig;

    /// The LLDP neighbour table.
    fn lldp_query(&self) -> Query;

    fn parse_lldp(&self, a: &Answer) -> Result<Vec<LldpNeighbor>, ParseError>;

    /// The transceiver diagnostics of one port, where the platform has a
    /// view of them. Parsing belongs with the optics checks (for `linux`,
    /// the same `ethtool -m` text a host prints), so the caller gets the raw
    /// [`Answer`] for now.
    fn optics_query(&self, port: &str) -> Option<Query>;

    /// What `validate --probe` asks a switch reached over an API, logged
    /// in as `user`: empty for a platform the preflight reaches.
    fn probe_queries(&self, _user: &str) -> Vec<Query> {
        Vec::new()
    }

    /// Reads the probe's answers: what the switch is and what the account
    /// may do, or why the suite could not use it.
    fn read_probe(&self, _answers: &[Answer]) -> Result<String, String> {
        Ok("reachable".into())
    }

    /// The form in which an inventory port name, an LLDP port id and an API
    /// path segment of the same port compare equal (`swp1`, `Ethernet0`,
    /// `Ethernet1/1`, `eth1/1` → `ethernet1/1` on NX-OS). Idempotent.
    fn normalise_port(&self, name: &str) -> String;

    /// Where the port lives in the platform's API (`interfaces/swp1` for
    /// NVUE, `sys/intf/phys-[eth1/1]` for NX-API); the port name itself for
    /// a platform reached by argv.
    fn port_path(&self, name: &str) -> String {
        name.to_string()
    }
}

/// The platform of a switch, or why there is none yet.
pub fn platform(driver: SwitchDriver) -> &'static dyn Platform {
    match driver {
        SwitchDriver::Linux => &linux::Linux,
        SwitchDriver::Eos => &eos::Eos,
        SwitchDriver::Nxos => &nxos::Nxos,
        SwitchDriver::Aci => &aci::Aci,
        SwitchDriver::Cumulus => &cumulus::Cumulus,
        SwitchDriver::Sonic => &sonic::Sonic,
    }
}

/// A platform by the name [`Platform::name`] gives (the fault journal's).
pub fn platform_named(name: &str) -> Option<&'static dyn Platform> {
    [
        SwitchDriver::Linux,
        SwitchDriver::Eos,
        SwitchDriver::Nxos,
        SwitchDriver::Sonic,
        SwitchDriver::Cumulus,
        SwitchDriver::Aci,
    ]
    .into_iter()
    .filter(|d| d.name() == name)
    .map(platform)
    .next()
}

/// A GPU node's own NICs: every node is a Linux box, so its links are
/// flapped the way a `linux` switch's ports are.
pub fn for_node() -> &'static dyn Platform {
    &linux::Linux
}

impl SwitchDriver {
    /// The name an inventory writes (`driver: eos`).
    pub fn name(self) -> &'static str {
        match self {
            SwitchDriver::Eos => "eos",
            SwitchDriver::Nxos => "nxos",
            SwitchDriver::Sonic => "sonic",
            SwitchDriver::Cumulus => "cumulus",
            SwitchDriver::Linux => "linux",
            SwitchDriver::Aci => "aci",
        }
    }

    /// Reached through an HTTPS API (and so given `api:` in an inventory)
    /// rather than by command lines over ssh.
    pub fn over_https(self) -> bool {
        matches!(
            self,
            SwitchDriver::Eos | SwitchDriver::Nxos | SwitchDriver::Aci
        )
    }

    /// Whether its API keeps a session opened by a login (the APIC's
    /// `aaaLogin`, refreshed before it expires) rather than taking basic
    /// authentication on every request (eAPI, NX-API).
    pub fn session_login(self) -> bool {
        matches!(self, SwitchDriver::Aci)
    }

    /// Reached through a controller that manages many switches (an ACI
    /// leaf through its APIC): the inventory's address is the controller's,
    /// shared by every switch it manages, and names none of them.
    pub fn through_controller(self) -> bool {
        matches!(self, SwitchDriver::Aci)
    }

    /// The platform an LLDP system description names, if any: a guess for
    /// `inventory discover` to mark unverified.
    pub fn from_lldp_description(descr: &str) -> Option<Self> {
        let d = descr.to_ascii_lowercase();
        if d.contains("cumulus") {
            Some(SwitchDriver::Cumulus)
        } else if d.contains("sonic") {
            Some(SwitchDriver::Sonic)
        } else if d.contains("arista") || d.contains(" eos") {
            Some(SwitchDriver::Eos)
        } else if d.contains("nx-os") || d.contains("nexus") {
            Some(SwitchDriver::Nxos)
        } else if d.contains("linux") {
            Some(SwitchDriver::Linux)
        } else {
            None
        }
    }
}

/// The one round trip that asks `switch` every query of `queries`, in
/// order, started `at` into its batch. Argv queries are composed into one
/// `sh -c` ([`compose`]), so a switch costs one connection per batch; API
/// queries become one HTTPS call per run of queries of one form
/// (`exec::apicall`). A batch is one kind or the other: a platform is
/// reached one way.
pub fn invocation(switch: &str, queries: &[Query], timeout: Duration, at: Duration) -> Invocation {
    let (argvs, apis) = kinds(queries);
    let argv = if apis.is_empty() {
        compose(&argvs)
    } else {
        crate::exec::apicall::argv(&call::calls(&apis))
    };
    Invocation {
        host: switch.to_string(),
        argv,
        env: Vec::new(),
        role: Role::Probe,
        timeout,
        at,
    }
}

fn kinds(queries: &[Query]) -> (Vec<Vec<String>>, Vec<&ApiQuery>) {
    let mut argvs = Vec::new();
    let mut apis = Vec::new();
    for q in queries {
        match q {
            Query::Argv(a) => argvs.push(a.clone()),
            Query::Api(a) => apis.push(a),
        }
    }
    (argvs, apis)
}

/// Splits the output of [`invocation`] back into one [`Answer`] per query.
/// A transport failure (unreachable, timed out) leaves every answer it cut
/// off without an exit status; the caller reports the failure itself.
pub fn answers(queries: &[Query], out: &InvocationOutput) -> Vec<Answer> {
    let (_, apis) = kinds(queries);
    if !apis.is_empty() {
        return call::answers(&apis, out);
    }
    if out.failure.is_some() {
        return vec![Answer::default(); queries.len()];
    }
    split(&out.stdout, queries.len())
        .into_iter()
        .map(|p| Answer {
            exit: p.exit,
            text: p.text,
        })
        .collect()
}

/// One query as its own invocation: an argv query runs as it is (no
/// composing), so a journal can hold it and a person can read it.
pub fn single(switch: &str, q: &Query, timeout: Duration) -> Invocation {
    match q {
        Query::Argv(a) => Invocation {
            host: switch.to_string(),
            argv: a.clone(),
            env: Vec::new(),
            role: Role::Probe,
            timeout,
            at: Duration::ZERO,
        },
        Query::Api(_) => invocation(switch, std::slice::from_ref(q), timeout, Duration::ZERO),
    }
}

/// What [`single`] got back.
pub fn single_answer(q: &Query, out: &InvocationOutput) -> Answer {
    match q {
        Query::Argv(_) => Answer {
            exit: if out.failure.is_some() {
                None
            } else {
                out.exit
            },
            text: if out.stderr.trim().is_empty() {
                out.stdout.clone()
            } else {
                format!("{}{}", out.stdout, out.stderr)
            },
        },
        Query::Api(_) => answers(std::slice::from_ref(q), out)
            .pop()
            .unwrap_or_default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linux_eos_and_nxos_are_built() {
        for d in [
            SwitchDriver::Linux,
            SwitchDriver::Eos,
            SwitchDriver::Nxos,
            SwitchDriver::Sonic,
        ] {
            assert_eq!(platform(d).name(), d.name());
            assert_eq!(platform_named(d.name()).unwrap().name(), d.name());
        }
        assert_eq!(
            platform_named("cumulus").unwrap().faults().platform(),
            "cumulus"
        );
        assert_eq!(for_node().faults().platform(), "linux");
    }

    /// Queries composed into one `sh -c`, run by a real shell, split back
    /// into one answer per query with its own exit status.
    #[test]
    fn queries_round_trip_through_one_invocation() {
        let qs = vec![
            Query::argv(&["echo", "it's one"]),
            Query::argv(&["sh", "-c", "echo two >&2; exit 3"]),
            Query::argv(&["rocegate-no-such-tool", "x"]),
        ];
        let inv = invocation("leaf1", &qs, Duration::from_secs(5), Duration::ZERO);
        assert_eq!(inv.host, "leaf1");
        assert_eq!(inv.role, Role::Probe);
        assert_eq!(
            crate::exec::compose::decompose(&inv.argv),
            Some(
                qs.iter()
                    .map(|q| match q {
                        Query::Argv(a) => a.clone(),
                        Query::Api(_) => unreachable!(),
                    })
                    .collect()
            )
        );
        let o = std::process::Command::new(&inv.argv[0])
            .args(&inv.argv[1..])
            .output()
            .unwrap();
        let out = InvocationOutput {
            stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
            exit: o.status.code(),
            ..Default::default()
        };
        let a = answers(&qs, &out);
        assert_eq!(a.len(), 3);
        assert_eq!(
            a[0],
            Answer {
                exit: Some(0),
                text: "it's one\n".into()
            }
        );
        assert_eq!(
            a[1],
            Answer {
                exit: Some(3),
                text: "two\n".into()
            }
        );
        assert_eq!(a[2].exit, Some(127));
        // A transport failure: every answer cut off, none invented.
        let failed = InvocationOutput {
            failure: Some(crate::exec::ExecFailure::Unreachable("no route".into())),
            ..out
        };
        assert!(answers(&qs, &failed).iter().all(|a| a.exit.is_none()));
    }

    #[test]
    fn lldp_descriptions_name_platforms() {
        for (d, want) in [
            ("Arista Networks EOS version 4.31", Some(SwitchDriver::Eos)),
            (
                "SONiC Software Version: SONiC.202311",
                Some(SwitchDriver::Sonic),
            ),
            ("Cumulus Linux version 5.9", Some(SwitchDriver::Cumulus)),
            (
                "Cisco Nexus Operating System (NX-OS) Software",
                Some(SwitchDriver::Nxos),
            ),
            (
                "Debian GNU/Linux 12 (bookworm) Linux 6.1.0",
                Some(SwitchDriver::Linux),
            ),
            ("JUNOS", None),
        ] {
            assert_eq!(SwitchDriver::from_lldp_description(d), want, "{d}");
        }
    }
}
