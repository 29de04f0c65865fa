//! A switch's configuration as the audit sees it: what each platform's
//! [`super::Platform::parse_config`] returns. Plain data in one vocabulary
//! for every platform; the checks that compare it with the inventory's RoCE
//! profile live in the audit, the verdicts in `score`.

use std::collections::BTreeMap;

use serde::Serialize;

use super::{Answer, Query};
use crate::counters::ParseError;

/// One thing the audit wanted to learn from a device.
///
/// `NotAvailable` and `Failed` are results, never a silent pass: both name
/// the device and the commands tried, so a report can say what to fix.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Fact<T> {
    Known(T),
    /// The platform, the device or the account has no way to read it: the
    /// tool is not installed, the driver does not support the read, the
    /// platform has no such setting (mlxsw has no PFC watchdog).
    NotAvailable {
        tried: Vec<String>,
        why: String,
    },
    /// The read was attempted and went wrong (non-zero exit, output cut
    /// off, text that does not parse): the device, the command and an
    /// excerpt of what it printed.
    Failed(String),
}

impl<T> Fact<T> {
    pub fn known(&self) -> Option<&T> {
        match self {
            Fact::Known(v) => Some(v),
            _ => None,
        }
    }

    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> Fact<U> {
        match self {
            Fact::Known(v) => Fact::Known(f(v)),
            Fact::NotAvailable { tried, why } => Fact::NotAvailable { tried, why },
            Fact::Failed(e) => Fact::Failed(e),
        }
    }
}

/// One switch's RoCE-relevant configuration.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SwitchConfig {
    /// The NOS (for `linux`, the kernel release: it carries the mlxsw driver).
    pub nos_version: Fact<String>,
    /// Whether a PFC watchdog (storm detection) is enabled.
    pub pfc_watchdog: Fact<bool>,
    /// How the switch classifies by DSCP: the class each DSCP with an entry
    /// lands in. A DSCP without an entry is not classified by DSCP (it goes
    /// to the default class).
    pub dscp_prio: Fact<BTreeMap<u8, DscpClass>>,
    /// One entry per port asked about, in the order asked.
    pub ports: Vec<PortSettings>,
}

/// One switch port's settings.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PortSettings {
    /// The port as the caller named it.
    pub name: String,
    /// Operationally up (carrier).
    pub link_up: Fact<bool>,
    pub speed_mbps: Fact<u64>,
    pub mtu: Fact<u32>,
    /// PFC enabled, per priority 0..7.
    pub pfc: Fact<[bool; 8]>,
    /// ECN/RED marking per traffic class that has it configured; an empty
    /// list means no RED/ECN on the port.
    pub ecn: Fact<Vec<EcnQueue>>,
    /// PFC Xoff threshold in bytes, per priority that has one.
    pub pfc_xoff_bytes: Fact<Vec<(u8, u64)>>,
}

/// Where one DSCP lands on a switch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DscpClass {
    /// The platform's name for the class (`TC3`, `level2`,
    /// `switch-priority 3`).
    pub class: String,
    /// The priority (PFC priority, CoS) the class carries, where it has
    /// one: an ACI level without PFC and without a CoS rewrite has none.
    pub priority: Option<u8>,
}

/// RED/ECN on one traffic class.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EcnQueue {
    pub tc: u8,
    pub min_bytes: u64,
    pub max_bytes: u64,
    /// Marks ECN-capable packets instead of dropping them.
    pub ecn: bool,
}

// ------------------------------------------------ reading facts from answers
// Shared by every platform reached by argv and by the host audit: one rule
// for what a missing tool, an unsupported read and a damaged answer mean.

/// The first 200 characters of an answer, on one line.
pub fn excerpt(text: &str) -> String {
    let t = text.trim();
    let mut e: String = t.chars().take(200).collect();
    if e.len() < t.len() {
        e.push('…');
    }
    if e.is_empty() {
        "nothing".into()
    } else {
        format!("`{}`", e.replace('\n', " | "))
    }
}

/// The text of an answer that exited 0, or the fact that says why there is
/// none: a missing tool or an operation the driver does not support is
/// `NotAvailable`; any other failure is `Failed`.
pub fn answered<'a, T>(device: &str, q: &Query, a: Option<&'a Answer>) -> Result<&'a str, Fact<T>> {
    let cmd = q.display();
    let Some(a) = a else {
        return Err(Fact::Failed(format!("{device}: `{cmd}` got no answer")));
    };
    if let (Query::Api(_), Some(code)) = (q, a.exit) {
        // The API said why in words (`call`): a command this switch lacks,
        // or one the account may not run, is not available here.
        return match code {
            0 => Ok(&a.text),
            super::call::NOT_AVAILABLE | super::call::NEEDS_PRIVILEGE | super::call::NO_JSON => {
                Err(Fact::NotAvailable {
                    tried: vec![cmd.clone()],
                    why: format!("{device}: {}", a.text.trim()),
                })
            }
            _ => Err(Fact::Failed(format!("{device}: {}", a.text.trim()))),
        };
    }
    match a.exit {
        Some(0) => Ok(&a.text),
        Some(127) => {
            let tool = match q {
                Query::Argv(argv) => argv.first().map(String::as_str).unwrap_or_default(),
                Query::Api(_) => "",
            };
            Err(Fact::NotAvailable {
                tried: vec![cmd.clone()],
                why: format!(
                    "{device}: `{tool}` is not installed (`{cmd}` exited 127: {})",
                    excerpt(&a.text)
                ),
            })
        }
        Some(code) if a.text.contains("not supported") => Err(Fact::NotAvailable {
            tried: vec![cmd.clone()],
            why: format!(
                "{device}: the driver does not support `{cmd}` (exit {code}: {})",
                excerpt(&a.text)
            ),
        }),
        // A sysfs knob or /proc file that this driver does not create
        // (the MLNX_OFED DCQCN files under the inbox mlx5 driver).
        Some(code) if a.text.contains("No such file or directory") => Err(Fact::NotAvailable {
            tried: vec![cmd.clone()],
            why: format!(
                "{device}: `{cmd}` found nothing to read (exit {code}: {})",
                excerpt(&a.text)
            ),
        }),
        Some(code)
            if a.text.contains("Permission denied")
                || a.text.contains("Operation not permitted") =>
        {
            Err(Fact::NotAvailable {
                tried: vec![cmd.clone()],
                why: format!(
                    "{device}: `{cmd}` needs root (exit {code}: {})",
                    excerpt(&a.text)
                ),
            })
        }
        Some(code) => Err(Fact::Failed(format!(
            "{device}: `{cmd}` failed (exit {code}): {}",
            excerpt(&a.text)
        ))),
        None => Err(Fact::Failed(format!(
            "{device}: `{cmd}` was cut off: {}",
            excerpt(&a.text)
        ))),
    }
}

/// `answered`, then `parse`; a parse error names the switch, the command,
/// the reason and what was printed.
pub fn fact<P, T>(
    device: &str,
    q: &Query,
    a: Option<&Answer>,
    parse: impl FnOnce(&str) -> Result<P, ParseError>,
    then: impl FnOnce(P) -> Result<T, String>,
) -> Fact<T> {
    let text = match answered(device, q, a) {
        Ok(t) => t,
        Err(f) => return f,
    };
    match parse(text).map_err(|e| e.0).and_then(then) {
        Ok(v) => Fact::Known(v),
        Err(e) => Fact::Failed(format!(
            "{device}: `{}`: {e}; it printed {}",
            q.display(),
            excerpt(text)
        )),
    }
}

/// The `dscp_prio` fact of a platform that does not read its
/// classification: not available, saying where it lives.
pub fn dscp_not_read(switch: &str, where_: &str) -> Fact<BTreeMap<u8, DscpClass>> {
    Fact::NotAvailable {
        tried: Vec::new(),
        why: format!("{switch}: the DSCP classification is not read on this platform ({where_})"),
    }
}
