//! A switch's configuration as the audit sees it: what each platform's
//! [`super::Platform::parse_config`] returns. Plain data in one vocabulary
//! for every platform; the checks that compare it with the inventory's RoCE
//! profile live in the audit, the verdicts in `score`.

use serde::Serialize;

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

/// RED/ECN on one traffic class.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EcnQueue {
    pub tc: u8,
    pub min_bytes: u64,
    pub max_bytes: u64,
    /// Marks ECN-capable packets instead of dropping them.
    pub ecn: bool,
}
