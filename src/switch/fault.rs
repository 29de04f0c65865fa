//! Faults on a switch (or a node's NICs): how one device is changed by a fault, how the change is
//! undone, and how the device itself is told to undo it should rocegate die.
//!
//! Every platform answers the same questions, in this order:
//! 1. **Prior state** ([`Driver::read_prior`], [`Driver::parse_prior`]): what
//!    the device looks like now. A fault only starts from a healthy state
//!    (every port it takes down administratively up, the routing daemons
//!    running); anything else is someone else's work and is refused.
//! 2. **Dead-man switch** (armed by [`Driver::change`]'s apply): armed on the device before the
//!    change, so that a controller killed mid-fault cannot leave a port
//!    down. `linux` (and Cumulus, which faults through it) leaves a
//!    detached timer that runs the undo; SONiC a transient systemd timer;
//!    EOS opens a configuration session and applies it with `commit
//!    timer`, which rolls back unless aborted sooner; NX-OS starts a
//!    detached timer through `run bash`; the APIC has none, so an ACI
//!    fault relies on the journal and `recover` alone (docs/switches.md).
//! 3. **Apply and undo** ([`Driver::change`]): the undo
//!    restores the prior state, disarms the dead-man, and is idempotent: it
//!    is safe when the change never happened and safe to send twice, which
//!    is what `rocegate recover` relies on.
//! 4. **Settled** ([`Driver::read_prior`] again, [`Driver::settled`]): links
//!    up and routing sessions established again, timed after the undo.
//!
//! The types and the trait live here; each platform implements [`Driver`]
//! in its own module (`linux/fault.rs`, `eos/platform.rs`, …) and hands it
//! out through [`super::Platform::faults`]. The journal of what was sent
//! stays in `crate::fault`. What a platform cannot guard is refused at plan
//! time by [`Driver::supports`].

use std::net::IpAddr;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::{Answer, Query};

/// Exit statuses of an apply script that stopped before it changed
/// anything: 96 the account may not sudo, 97 a dead-man tool is missing,
/// 98 the dead-man would not arm.
pub const NOTHING_CHANGED: std::ops::RangeInclusive<i32> = 96..=98;

/// What a fault does to one device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// These ports (switch ports, or a node's netdevs) administratively down.
    PortsDown(Vec<String>),
    /// The routing daemons stopped.
    RoutingStop,
    /// The device restarted. `linux` reboots a systemd box (it comes back by
    /// itself); on a box without systemd (a lab namespace) it takes every
    /// port down and stops routing, then restores both.
    Reload { ports: Vec<String> },
    /// Every BGP session that runs over `port` administratively shut, so
    /// that routing withdraws the port's link from ECMP while the link stays
    /// up; restored by undoing the shutdown. Which sessions those are is
    /// found in the prior-state read (the inventory has no BGP addresses).
    BgpPeerDown { port: String },
}

impl Action {
    /// The ports it takes down (none for a routing change).
    pub fn ports(&self) -> &[String] {
        match self {
            Action::PortsDown(p) | Action::Reload { ports: p } => p,
            _ => &[],
        }
    }
}

/// How routing daemons are stopped and started on a Linux box.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Init {
    /// `systemctl stop|start frr`.
    #[default]
    Systemd,
    /// `/usr/lib/frr/frrinit.sh stop|start` (no systemd: containers, the lab).
    Frrinit,
}

/// One port as read: administratively up, and carrier (operstate up).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PortState {
    pub name: String,
    pub admin_up: bool,
    pub oper_up: bool,
}

/// The device before the change (and, read again, after the undo).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct State {
    pub init: Init,
    pub ports: Vec<PortState>,
    /// BGP neighbours and whether each is Established; `None` when no
    /// routing daemon answered.
    pub bgp: Option<Vec<(String, bool)>>,
    /// The local BGP AS, where the platform's change names it (`router
    /// bgp 65001` on EOS and NX-OS).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub asn: Option<String>,
    /// Ports of the fault that the switch has error-disabled, with the
    /// cause (`Ethernet1 (link-flap)`): `no shutdown` does not bring them back.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub errdisabled: Vec<String>,
    /// Configuration sessions with a commit timer running (EOS keeps one
    /// per switch).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pending: Vec<String>,
}

impl State {
    /// Refuses a start from ports administratively down or BGP sessions
    /// not Established: someone else's work, not a fault's.
    pub fn healthy(&self) -> Result<(), String> {
        let down: Vec<&str> = self
            .ports
            .iter()
            .filter(|p| !p.admin_up)
            .map(|p| p.name.as_str())
            .collect();
        if !down.is_empty() {
            return Err(format!(
                "{} already administratively down: a fault starts only from ports that are up",
                down.join(", ")
            ));
        }
        let idle: Vec<&str> = self
            .bgp
            .iter()
            .flatten()
            .filter(|p| !p.1)
            .map(|p| p.0.as_str())
            .collect();
        if !idle.is_empty() {
            return Err(format!(
                "BGP not Established with {}: a fault starts only from a healthy fabric",
                idle.join(", ")
            ));
        }
        Ok(())
    }

    /// One line for the journal and messages.
    pub fn summary(&self) -> String {
        let mut parts = Vec::new();
        if !self.ports.is_empty() {
            let up = self.ports.iter().filter(|p| p.admin_up).count();
            parts.push(format!(
                "{} admin up {up}/{}",
                self.ports
                    .iter()
                    .map(|p| p.name.as_str())
                    .collect::<Vec<_>>()
                    .join(","),
                self.ports.len()
            ));
        }
        match &self.bgp {
            Some(peers) => parts.push(format!(
                "bgp {}/{} established",
                peers.iter().filter(|p| p.1).count(),
                peers.len()
            )),
            None => parts.push("no routing daemon answering".into()),
        }
        parts.join("; ")
    }
}

/// The change for one device and its undo, as requests to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// Sent in order, each only once the one before it worked: the
    /// dead-man first where it is a request of its own (NX-OS).
    pub apply: Vec<Query>,
    pub undo: Query,
    /// Whether the apply arms a dead-man switch (and refuses to change
    /// anything when it cannot).
    pub armed: bool,
    /// The apply reboots the device: its connection drops, which is the
    /// change succeeding, and the device comes back by itself.
    pub reboots: bool,
}

/// What an undo step's answer leads to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Next {
    /// The device is restored.
    Done,
    /// Ask this next (a follow-up read, or the change that restores).
    Then(Query),
    /// The undo did not work, and why.
    Failed(String),
}

/// How one platform changes a device for a fault and undoes it; reached
/// through [`super::Platform::faults`]. A `linux` change is shell text (its
/// dead-man must detach from the session that armed it); an HTTPS
/// platform's is one API call that arms the device's own timer (EOS
/// `commit timer`) or starts a detached one (NX-OS `run bash`).
pub trait Driver: Sync {
    fn platform(&self) -> &'static str;
    /// Whether this platform can make `action` safely at all: checked at
    /// plan time, before anything is touched.
    fn supports(&self, _action: &Action) -> Result<(), String> {
        Ok(())
    }
    /// Commands the device must have for `action` (the preflight checks).
    fn needs(&self, action: &Action) -> Vec<&'static str>;
    /// One request reading the state `action` will change.
    fn read_prior(&self, action: &Action) -> Query;
    /// Reads its answer (exit 0 only; the caller reports the others).
    fn parse_prior(&self, action: &Action, answer: &Answer) -> Result<State, String>;
    /// Refuses a change from anything but a healthy state, or one this
    /// platform cannot make safely.
    fn check_prior(&self, action: &Action, prior: &State) -> Result<(), String>;
    /// The change and its undo. With `deadman = Some((id, after))`, the
    /// apply arms a switch on the device that undoes the change after
    /// `after` unless the undo (which disarms it) came first.
    fn change(&self, action: &Action, prior: &State, deadman: Option<(&str, Duration)>) -> Change;
    /// Whether one step of [`Change::apply`] worked (exit 0, unless the
    /// platform reads more into the answer).
    fn applied(&self, sent: &Query, a: &Answer) -> Result<(), String> {
        match a.exit {
            Some(0) => Ok(()),
            _ => Err(refusal(sent, a)),
        }
    }
    /// Whether a failed step `step` of [`Change::apply`] (its answer `a`)
    /// left the device as it was, so that there is nothing to undo. The
    /// scripts of the platforms reached by argv exit with
    /// [`NOTHING_CHANGED`] when they stop before changing anything (no sudo
    /// right, no dead-man tool, a timer that would not arm); any other
    /// failure may have changed part of the device and is undone.
    fn unchanged(&self, _step: usize, _sent: &Query, a: &Answer) -> bool {
        a.exit.is_some_and(|c| NOTHING_CHANGED.contains(&c))
    }
    /// After an undo step (`sent`, first the [`Change::undo`]) answered:
    /// done, failed, or what to ask next. `ports` are the ports the fault
    /// took down. Most platforms' undo is one step that either worked or
    /// did not.
    fn undo_next(&self, _ports: &[String], _sent: &Query, a: &Answer) -> Next {
        match a.exit {
            Some(0) => Next::Done,
            code => {
                let said = a.text.trim();
                Next::Failed(format!(
                    "exit {}{}",
                    code.map_or("none".to_string(), |c| c.to_string()),
                    match said.lines().last() {
                        Some(l) => format!(": {l}"),
                        None => String::new(),
                    }
                ))
            }
        }
    }
    /// Whether the device is back to `prior`: every port it had up is up
    /// with carrier, every session it had established is established.
    /// The same on every platform so far.
    fn settled(&self, prior: &State, now: &State) -> bool {
        let ports = prior.ports.iter().all(|p| {
            now.ports
                .iter()
                .find(|n| n.name == p.name)
                .is_some_and(|n| n.admin_up == p.admin_up && (n.oper_up || !p.oper_up))
        });
        let bgp = match (&prior.bgp, &now.bgp) {
            (None, _) => true,
            (Some(_), None) => false,
            (Some(before), Some(after)) => before
                .iter()
                .filter(|p| p.1)
                .all(|p| after.iter().any(|a| a.0 == p.0 && a.1)),
        };
        ports && bgp
    }
    /// The plain requests of a change, one per action, for a model of the
    /// fabric that reads them one by one (the emulator): no dead-man,
    /// systemd. `prior` is what the device answered to
    /// [`Driver::read_prior`] where the change names state it reads first
    /// (the BGP AS of an eos or nxos switch); a platform reached by argv
    /// gets [`State::default`].
    /// By default the change without its dead-man, and its undo.
    fn plain(&self, action: &Action, prior: &State) -> (Vec<Query>, Vec<Query>) {
        let c = self.change(action, prior, None);
        (c.apply, vec![c.undo])
    }
}

fn excerpt(s: &str) -> String {
    super::config::excerpt(s)
}

/// Why a request did not work, in one line. An API answer already names
/// its command and the switch's words; a command line gets its exit.
pub fn refusal(sent: &Query, a: &Answer) -> String {
    let said = a.text.trim();
    match (sent, a.exit) {
        (Query::Api(_), None) => format!("no answer: {said}"),
        (Query::Api(_), Some(_)) => said.to_string(),
        (Query::Argv(_), code) => format!(
            "{} {}: {}",
            excerpt(&sent.display()),
            crate::exec::exit_text(code),
            excerpt(said)
        ),
    }
}

/// Whether the BGP neighbour `peer` (as the platform's summary keys it) runs its
/// session over `port`, whose addresses are `addrs` (`ADDR/LEN`): BGP
/// unnumbered names the interface (`swp31`), a link-local neighbour carries
/// it as a scope (`fe80::1%swp31`), and a numbered one is an address of a
/// subnet on the port (the /31 of a leaf-spine link). Link-local subnets
/// are on every port, so they decide nothing.
pub fn runs_over(peer: &str, port: &str, addrs: &[(IpAddr, u8)]) -> bool {
    if peer == port || peer.rsplit_once('%').is_some_and(|(_, p)| p == port) {
        return true;
    }
    let Ok(ip) = peer.parse::<IpAddr>() else {
        return false;
    };
    addrs.iter().any(|&(net, len)| {
        let local = match net {
            IpAddr::V6(v6) => v6.segments()[0] & 0xffc0 == 0xfe80,
            IpAddr::V4(v4) => v4.is_link_local(),
        };
        !local && ip != net && same_subnet(ip, net, len)
    })
}

fn same_subnet(a: IpAddr, b: IpAddr, len: u8) -> bool {
    match (a, b) {
        (IpAddr::V4(a), IpAddr::V4(b)) => {
            let m = u32::MAX
                .checked_shl(32 - u32::from(len.min(32)))
                .unwrap_or(0);
            u32::from(a) & m == u32::from(b) & m
        }
        (IpAddr::V6(a), IpAddr::V6(b)) => {
            let m = u128::MAX
                .checked_shl(128 - u32::from(len.min(128)))
                .unwrap_or(0);
            u128::from(a) & m == u128::from(b) & m
        }
        _ => false,
    }
}
