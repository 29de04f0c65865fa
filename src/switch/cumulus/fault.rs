//! Faults on Cumulus Linux: the `linux` platform's driver (Cumulus is
//! Debian with FRR under systemd: `ip link set swpN down`, `systemctl stop
//! frr`, `vtysh` for one BGP session, the detached `setsid` dead-man), with
//! one thing Cumulus adds read first: **link-flap protection**. A port that
//! flaps `threshold` times within `interval` seconds (`nv show system link
//! flap-protection`, 5 in 10 s by default, 5.7 and later) is protodowned
//! with reason `linkflap` and stays down until someone clears it, which no
//! undo of rocegate's does.
//!
//! So before a port flap the prior read also asks the thresholds, each
//! port's `proto_down`, and the times of the flaps rocegate itself made on
//! that port (each apply first appends the time to
//! `/run/rocegate/flaps-PORT` on the switch). A flap is refused when its
//! port is already protodown, when it would be the `threshold`-th within
//! `interval`, and when the thresholds cannot be read: without them no
//! flap is known to be safe.
//!
//! **Privilege.** A stock Cumulus account (`cumulus`) is not root: every
//! script decides on the switch, from `id -u`, whether its root commands
//! (`ip link set`, `systemctl`, `vtysh`, the dead-man and its disarm, the
//! flap log under `/run`) go through `sudo -n`; as root they run as they
//! are. The prior read says which (`@@priv`), and an account that may not
//! `sudo -n` is refused there, before anything changes; the apply checks
//! again before it arms the dead-man.
//!
//! Not used: `nv set interface swpN link state down` + `nv config apply`.
//! An apply takes the whole pending revision (someone else's staged edits
//! too) and, from 5.9, saves it to the startup configuration; `ip link` is
//! immediate, not persistent, and undone by the same dead-man as `linux`.

use std::time::Duration;

use crate::exec::quote;
use crate::switch::fault::{Action, Change, Driver, Next, State};
use crate::switch::linux::fault::{privilege_refusal, Privilege};
use crate::switch::linux::Linux;
use crate::switch::{Answer, Query};

/// The `linux` driver with Cumulus's link-flap protodown read first.
pub struct CumulusFaults;

/// Where the switch keeps the times of rocegate's flaps of `port`.
fn flap_log(port: &str) -> String {
    format!("/run/rocegate/flaps-{port}")
}

/// What the prior read learned about link-flap protection, before it is
/// folded into [`State::errdisabled`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FlapGuard {
    /// `(threshold, interval s)`, or why they could not be read.
    pub limits: Result<(u32, u32), String>,
    /// Per port: protodown (with its reason) and rocegate's flap times.
    pub ports: Vec<(String, Option<String>, Vec<u64>)>,
    /// The switch's clock at the read, in seconds since the epoch.
    pub now: Option<u64>,
}

impl FlapGuard {
    /// Why a flap of these ports would be unsafe, one entry per reason;
    /// empty when it is safe.
    pub fn refusals(&self) -> Vec<String> {
        let mut out = Vec::new();
        for (port, protodown, _) in &self.ports {
            if let Some(r) = protodown {
                out.push(format!(
                    "{port} (protodown{}: clear it with `nv action clear interface {port} link flap-protection` first)",
                    if r.is_empty() { String::new() } else { format!(" {r}") }
                ));
            }
        }
        let (threshold, interval) = match &self.limits {
            Ok(l) => *l,
            Err(e) => {
                out.push(format!(
                    "{} (the link-flap protection thresholds could not be read: {e}; a flap is refused rather than risk a protodown)",
                    self.ports.iter().map(|p| p.0.as_str()).collect::<Vec<_>>().join(", ")
                ));
                return out;
            }
        };
        let Some(now) = self.now else {
            out.push("the switch's clock was not read: recent flaps cannot be counted".into());
            return out;
        };
        for (port, _, times) in &self.ports {
            let recent = times
                .iter()
                .filter(|&&t| now.saturating_sub(t) < u64::from(interval))
                .count() as u32;
            if recent + 1 >= threshold {
                out.push(format!(
                    "{port} (this flap would be {} within {interval} s; the switch's link-flap protection protodowns a port at threshold {threshold} in {interval} s: pace the repetitions further apart)",
                    recent + 1
                ));
            }
        }
        out
    }
}

/// Reads the `@@` lines [`CumulusFaults::read_prior`] adds.
pub fn parse_guard(text: &str) -> FlapGuard {
    let mut g = FlapGuard {
        limits: Err("not asked".into()),
        ports: Vec::new(),
        now: None,
    };
    let mut limits = String::new();
    let mut in_limits = false;
    for line in text.lines() {
        if in_limits {
            if line.trim() == "@@end-flapprot" {
                in_limits = false;
                g.limits = super::parse_flap_protection(&limits).map_err(|e| e.0);
            } else {
                limits.push_str(line);
                limits.push('\n');
            }
            continue;
        }
        let w: Vec<&str> = line.split_whitespace().collect();
        match w.as_slice() {
            ["@@flapprot", "0"] => in_limits = true,
            ["@@flapprot", code, said @ ..] => {
                g.limits = Err(format!(
                    "`nv show system link flap-protection -o json` exited {code}: {}",
                    said.join(" ")
                ))
            }
            ["@@now", t] => g.now = t.parse().ok(),
            ["@@protodown", port, flag, reason @ ..] => {
                let down = *flag == "1";
                let reason = reason.join(" ");
                g.ports
                    .push((port.to_string(), down.then_some(reason), Vec::new()));
            }
            ["@@flaps", port, times @ ..] => {
                if let Some(p) = g.ports.iter_mut().find(|p| p.0 == *port) {
                    p.2 = times.iter().filter_map(|t| t.parse().ok()).collect();
                }
            }
            _ => {}
        }
    }
    g
}

impl Driver for CumulusFaults {
    fn platform(&self) -> &'static str {
        "cumulus"
    }

    fn supports(&self, action: &Action) -> Result<(), String> {
        Linux.supports(action)
    }

    fn needs(&self, action: &Action) -> Vec<&'static str> {
        let mut v = Linux.needs(action);
        if matches!(action, Action::PortsDown(_)) {
            v.push("nv");
        }
        v
    }

    fn read_prior(&self, action: &Action) -> Query {
        let base = Linux.read_prior_as(action, Privilege::SudoUnlessRoot);
        let (Action::PortsDown(ports), Query::Argv(argv)) = (action, &base) else {
            return base;
        };
        let mut s = argv.last().cloned().unwrap_or_default();
        s += "; fp=$(nv show system link flap-protection -o json 2>&1); rc=$?; if [ $rc -eq 0 ]; then echo '@@flapprot 0'; printf '%s\\n' \"$fp\"; echo '@@end-flapprot'; else echo \"@@flapprot $rc $(printf '%s' \"$fp\" | tr '\\n' ' ')\"; fi; echo \"@@now $(date +%s)\"";
        for p in ports {
            let q = quote(p);
            s += &format!(
                "; echo \"@@protodown {q} $(cat /sys/class/net/{q}/proto_down 2>/dev/null || echo 0)\"; echo \"@@flaps {q} $(tail -n 64 {} 2>/dev/null | tr '\\n' ' ')\"",
                quote(&flap_log(p))
            );
        }
        Query::Argv(vec!["sh".into(), "-c".into(), s])
    }

    fn parse_prior(&self, action: &Action, answer: &Answer) -> Result<State, String> {
        let mut st = Linux.parse_prior(action, answer)?;
        // `errdisabled` is where a prior state names what a fault must
        // not touch, with the cause; check_prior refuses them.
        if let Some(why) = privilege_refusal(&answer.text) {
            st.errdisabled.push(why);
        }
        if matches!(action, Action::PortsDown(_)) {
            st.errdisabled.extend(
                parse_guard(&answer.text)
                    .refusals()
                    .into_iter()
                    .map(|r| format!("link-flap protodown: {r}")),
            );
        }
        Ok(st)
    }

    fn check_prior(&self, action: &Action, prior: &State) -> Result<(), String> {
        if !prior.errdisabled.is_empty() {
            return Err(format!("refused: {}", prior.errdisabled.join("; ")));
        }
        Linux.check_prior(action, prior)
    }

    fn change(&self, action: &Action, prior: &State, deadman: Option<(&str, Duration)>) -> Change {
        let privilege = Privilege::SudoUnlessRoot;
        let mut c = Linux.change_as(action, prior, deadman, privilege);
        if let Action::PortsDown(ports) = action {
            // Recorded before the change: a flap that then fails counts
            // too, which errs on the side of fewer flaps. /run is root's.
            let record: Vec<String> = ports
                .iter()
                .map(|p| format!("date +%s | $S tee -a {} >/dev/null", quote(&flap_log(p))))
                .collect();
            c.apply.insert(
                0,
                privilege.sh(format!(
                    "$S mkdir -p /run/rocegate && {}",
                    record.join(" && ")
                )),
            );
        }
        c
    }

    fn applied(&self, sent: &Query, a: &Answer) -> Result<(), String> {
        Linux.applied(sent, a)
    }

    fn undo_next(&self, ports: &[String], sent: &Query, a: &Answer) -> Next {
        Linux.undo_next(ports, sent, a)
    }

    fn plain(&self, action: &Action, prior: &State) -> (Vec<Query>, Vec<Query>) {
        Linux.plain_as(action, prior, Privilege::SudoUnlessRoot)
    }
}

#[cfg(test)]
#[path = "tests_fault.rs"]
mod tests;
