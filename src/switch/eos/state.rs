//! State and audit reads: port states (`show interfaces`, `show interfaces
//! status`), BGP peers in every VRF, `show version`, configuration
//! sessions (the commit-timer dead-man), LLDP neighbours, and `show
//! errdisable recovery` (text: it has no JSON form). Counters are
//! `counters`' to read, even from the same `show interfaces` answer.

use serde::Serialize;
use serde_json::Value;

use super::{
    err, join, keyed, kind, member, object, opt_f64, opt_string, opt_u64, parse_root, string,
    Object,
};
use crate::counters::host::LldpNeighbor;
use crate::counters::{first_line, ParseError};
use crate::switch::fault::PortState;

/// One port as EOS reports it, for prior state, `recover` and the audit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct InterfaceState {
    /// As EOS keys it (`Ethernet1`, `Ethernet3/1/1`).
    pub name: String,
    /// `interfaceStatus` (`show interfaces`) or `linkStatus` (`show
    /// interfaces status`): `connected`, `notconnect`, `disabled`,
    /// `errdisabled`, `inactive`, …
    pub status: String,
    /// Not `shutdown`: every status but `disabled`. An errdisabled port is
    /// administratively up; `no shutdown` does not bring it back.
    pub admin_up: bool,
    /// Line protocol up (`lineProtocolStatus`; without it, `connected`).
    pub oper_up: bool,
    /// Why an errdisabled port was disabled (`link-flap`, `bpduguard`);
    /// `Some` (possibly empty) exactly when the status is `errdisabled`.
    pub errdisabled: Option<Vec<String>>,
    pub mtu: Option<u32>,
    /// From `bandwidth` (bit/s); `None` where EOS prints 0 (a port-channel
    /// without members).
    pub speed_mbps: Option<u64>,
}

impl InterfaceState {
    /// The port as a fault's prior state records it.
    pub fn port_state(&self) -> PortState {
        PortState {
            name: self.name.clone(),
            admin_up: self.admin_up,
            oper_up: self.oper_up,
        }
    }

    fn new(
        tool: &str,
        path: &str,
        name: &str,
        status: &str,
        m: &Object,
    ) -> Result<InterfaceState, ParseError> {
        let line = opt_string(tool, path, m, "lineProtocolStatus")?;
        let mtu = opt_u64(tool, path, m, "mtu")?
            .map(|v| {
                u32::try_from(v)
                    .map_err(|_| err(tool, format!("{}: {v} is not an MTU", join(path, "mtu"))))
            })
            .transpose()?;
        let errdisabled = if status == "errdisabled" {
            Some(match m.get("causes") {
                None | Some(Value::Null) => Vec::new(),
                Some(Value::Array(a)) => a
                    .iter()
                    .enumerate()
                    .map(|(i, c)| {
                        string(tool, &format!("{}[{i}]", join(path, "causes")), c)
                            .map(str::to_string)
                    })
                    .collect::<Result<_, _>>()?,
                Some(other) => {
                    return Err(err(
                        tool,
                        format!(
                            "{}: expected a list, got {}",
                            join(path, "causes"),
                            kind(other)
                        ),
                    ))
                }
            })
        } else {
            None
        };
        Ok(InterfaceState {
            name: name.to_string(),
            status: status.to_string(),
            admin_up: status != "disabled",
            oper_up: line.map_or(status == "connected", |l| l == "up"),
            errdisabled,
            mtu,
            speed_mbps: opt_u64(tool, path, m, "bandwidth")?
                .filter(|b| *b > 0)
                .map(|b| b / 1_000_000),
        })
    }
}

/// `show interfaces` (all, or one port): each port's state, MTU and speed.
pub fn parse_interfaces_state(text: &str) -> Result<Vec<InterfaceState>, ParseError> {
    const TOOL: &str = "show interfaces";
    let root = parse_root(TOOL, text)?;
    keyed(TOOL, "", &root, "interfaces")?
        .into_iter()
        .map(|(name, m)| {
            let at = join("interfaces", name);
            let status = string(
                TOOL,
                &join(&at, "interfaceStatus"),
                member(TOOL, &at, m, "interfaceStatus")?,
            )?;
            InterfaceState::new(TOOL, &at, name, status, m)
        })
        .collect()
}

/// `show interfaces status` and `show interfaces status errdisabled` →
/// `interfaceStatuses.<port>`. The status is `linkStatus` (what ANTA read
/// from `show interfaces status` until 2025); ANTA's test data for the
/// `errdisabled` form writes it `status`, with `causes`, so either is read.
pub fn parse_interfaces_status(text: &str) -> Result<Vec<InterfaceState>, ParseError> {
    const TOOL: &str = "show interfaces status";
    let root = parse_root(TOOL, text)?;
    keyed(TOOL, "", &root, "interfaceStatuses")?
        .into_iter()
        .map(|(name, m)| {
            let at = join("interfaceStatuses", name);
            let (key, v) = ["linkStatus", "status"]
                .into_iter()
                .find_map(|k| m.get(k).map(|v| (k, v)))
                .ok_or_else(|| err(TOOL, format!("{at}: no `linkStatus` (or `status`)")))?;
            let status = string(TOOL, &join(&at, key), v)?;
            InterfaceState::new(TOOL, &at, name, status, m)
        })
        .collect()
}

// ---------------------------------------------------------------------- BGP

/// One BGP peer in one VRF.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BgpPeer {
    pub vrf: String,
    pub peer: String,
    /// `peerState`: `Established`, `Active`, `Idle`, `Connect`, …
    pub state: String,
    /// Per address family (`ipv4Unicast`, `l2VpnEvpn`), its `afiSafiState`
    /// (`negotiated`, `advertised`, …); printed by `show bgp summary vrf
    /// all`, not by the per-family `show ip bgp summary vrf all`.
    pub families: Vec<(String, String)>,
}

impl BgpPeer {
    pub fn established(&self) -> bool {
        self.state == "Established"
    }
}

/// `show ip bgp summary vrf all`, `show ipv6 bgp summary vrf all` and `show
/// bgp summary vrf all` → `vrfs.<vrf>.peers.<peer>.peerState`: every peer
/// of every VRF. `{"vrfs": {}}` (no BGP configured) is no peers.
pub fn parse_bgp_summary(text: &str) -> Result<Vec<BgpPeer>, ParseError> {
    const TOOL: &str = "show bgp summary vrf all";
    let root = parse_root(TOOL, text)?;
    let mut out = Vec::new();
    for (vrf, m) in keyed(TOOL, "", &root, "vrfs")? {
        let at = join("vrfs", vrf);
        let peers = object(TOOL, &join(&at, "peers"), member(TOOL, &at, m, "peers")?)?;
        for (peer, p) in peers {
            let pat = join(&join(&at, "peers"), peer);
            let p = object(TOOL, &pat, p)?;
            let state = string(
                TOOL,
                &join(&pat, "peerState"),
                member(TOOL, &pat, p, "peerState")?,
            )?;
            let mut families = Vec::new();
            for (family, f) in p {
                if let Some(s) = f.as_object().and_then(|f| f.get("afiSafiState")) {
                    let s = string(TOOL, &join(&join(&pat, family), "afiSafiState"), s)?;
                    families.push((family.clone(), s.to_string()));
                }
            }
            out.push(BgpPeer {
                vrf: vrf.to_string(),
                peer: peer.clone(),
                state: state.to_string(),
                families,
            });
        }
    }
    Ok(out)
}

/// The peers a fault must not start from (or that have not come back).
pub fn not_established(peers: &[BgpPeer]) -> Vec<&BgpPeer> {
    peers.iter().filter(|p| !p.established()).collect()
}

// ------------------------------------------------------------- show version

/// What `show version` says about the switch.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EosVersion {
    /// As printed, suffix and all (`4.31.1F-34554157.4311F (engineering
    /// build)`).
    pub version: String,
    /// `modelName`: `DCS-7060DX5-64S`, `cEOSLab`, `vEOS`.
    pub model: String,
    pub internal_version: Option<String>,
    /// Empty on vEOS, so `None` there.
    pub serial: Option<String>,
    /// Seconds since boot: the clock `commitBy` and `commitTimerExpireTime`
    /// of [`ConfigSessions`] count in.
    pub uptime_s: Option<f64>,
}

pub fn parse_version(text: &str) -> Result<EosVersion, ParseError> {
    const TOOL: &str = "show version";
    let root = parse_root(TOOL, text)?;
    let required = |key: &str| -> Result<String, ParseError> {
        Ok(string(TOOL, key, member(TOOL, "", &root, key)?)?.to_string())
    };
    Ok(EosVersion {
        version: required("version")?,
        model: required("modelName")?,
        internal_version: opt_string(TOOL, "", &root, "internalVersion")?.map(str::to_string),
        serial: opt_string(TOOL, "", &root, "serialNumber")?.map(str::to_string),
        uptime_s: opt_f64(TOOL, "", &root, "uptime")?,
    })
}

// ---------------------------------------------------- configuration sessions

/// One configuration session.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ConfigSession {
    pub name: String,
    /// `pending`, `completed`, `pendingCommitTimer` (before EOS 4.32).
    pub state: String,
    /// Before 4.32: when its commit timer runs out, in seconds of uptime.
    pub commit_by_uptime_s: Option<f64>,
}

/// The one commit timer a switch runs: the dead-man of a fault.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PendingCommit {
    pub session: String,
    /// When the switch rolls the session back, in seconds of uptime
    /// ([`EosVersion::uptime_s`]); `None` where EOS did not say.
    pub expires_at_uptime_s: Option<f64>,
}

impl PendingCommit {
    /// Seconds until the rollback, given the switch's uptime now; `None`
    /// when unknown, 0 when already due.
    pub fn seconds_left(&self, uptime_s: f64) -> Option<f64> {
        self.expires_at_uptime_s.map(|t| (t - uptime_s).max(0.0))
    }
}

/// `show configuration sessions detail`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ConfigSessions {
    pub sessions: Vec<ConfigSession>,
    /// The session whose commit timer runs, if any.
    pub pending: Option<PendingCommit>,
}

/// `show configuration sessions detail` in both forms napalm reads: before
/// EOS 4.32 the pending session is the one whose `state` holds
/// `pendingCommitTimer`, with `commitBy`; from 4.32 on the answer carries
/// `commitTimerSessionName` and `commitTimerExpireTime` at the top. Times
/// count from boot; -1 (napalm's "something went wrong") is unknown. An
/// empty session name means no timer runs.
pub fn parse_config_sessions(text: &str) -> Result<ConfigSessions, ParseError> {
    const TOOL: &str = "show configuration sessions detail";
    let root = parse_root(TOOL, text)?;
    let known = |t: Option<f64>| t.filter(|t| *t >= 0.0);
    let mut sessions = Vec::new();
    if let Some(s) = root.get("sessions") {
        for (name, v) in object(TOOL, "sessions", s)? {
            let at = join("sessions", name);
            let m = object(TOOL, &at, v)?;
            sessions.push(ConfigSession {
                name: name.clone(),
                state: string(TOOL, &join(&at, "state"), member(TOOL, &at, m, "state")?)?
                    .to_string(),
                commit_by_uptime_s: known(opt_f64(TOOL, &at, m, "commitBy")?),
            });
        }
    } else if !root.contains_key("commitTimerSessionName") {
        return Err(err(
            TOOL,
            "expected `sessions` (EOS before 4.32) or `commitTimerSessionName` (4.32 on)",
        ));
    }
    let pending = match opt_string(TOOL, "", &root, "commitTimerSessionName")? {
        Some(session) => Some(PendingCommit {
            session: session.to_string(),
            expires_at_uptime_s: known(opt_f64(TOOL, "", &root, "commitTimerExpireTime")?),
        }),
        None => sessions
            .iter()
            .find(|s| s.state.contains("pendingCommitTimer"))
            .map(|s| PendingCommit {
                session: s.name.clone(),
                expires_at_uptime_s: s.commit_by_uptime_s,
            }),
    };
    Ok(ConfigSessions { sessions, pending })
}

// --------------------------------------------------------------------- LLDP

/// `"et-0/0/20"` → `et-0/0/20`: EOS quotes an `interfaceName` or `local`
/// port id (and its text CLI prints `Port ID : "Ethernet1"`).
fn unquote(s: &str) -> &str {
    let t = s.trim();
    t.strip_prefix('"')
        .and_then(|t| t.strip_suffix('"'))
        .unwrap_or(t)
}

/// `000f.532e.ced1` → `00:0f:53:2e:ce:d1`, the form lldpd (and so the
/// `linux` platform) prints; anything that is not 12 hex digits is kept.
fn mac(s: &str) -> String {
    let hex: String = s
        .chars()
        .filter(|c| !matches!(c, '.' | ':' | '-'))
        .collect();
    if hex.len() != 12 || !hex.chars().all(|c| c.is_ascii_hexdigit()) {
        return s.to_string();
    }
    let hex = hex.to_ascii_lowercase();
    (0..6)
        .map(|i| &hex[2 * i..2 * i + 2])
        .collect::<Vec<_>>()
        .join(":")
}

/// `show lldp neighbors detail` → `lldpNeighbors.<local port>.
/// lldpNeighborInfo[]`, one [`LldpNeighbor`] per entry. The port id is
/// `interfaceId_v2` where EOS prints it, else `interfaceId` unquoted; a MAC
/// port id (a Linux host's NIC) is written as lldpd writes it, and the
/// host's netdev name is then in `port_descr` (`interfaceDescription`).
pub fn parse_lldp_neighbors_detail(text: &str) -> Result<Vec<LldpNeighbor>, ParseError> {
    const TOOL: &str = "show lldp neighbors detail";
    let root = parse_root(TOOL, text)?;
    let mut out = Vec::new();
    for (port, m) in keyed(TOOL, "", &root, "lldpNeighbors")? {
        let at = join("lldpNeighbors", port);
        let list = member(TOOL, &at, m, "lldpNeighborInfo")?;
        let list = list.as_array().ok_or_else(|| {
            err(
                TOOL,
                format!("{at}.lldpNeighborInfo: expected a list, got {}", kind(list)),
            )
        })?;
        for (i, n) in list.iter().enumerate() {
            let nat = format!("{at}.lldpNeighborInfo[{i}]");
            let n = object(TOOL, &nat, n)?;
            let iat = join(&nat, "neighborInterfaceInfo");
            let info = object(TOOL, &iat, member(TOOL, &nat, n, "neighborInterfaceInfo")?)?;
            let id = match opt_string(TOOL, &iat, info, "interfaceId_v2")? {
                Some(v2) => v2,
                None => string(
                    TOOL,
                    &join(&iat, "interfaceId"),
                    member(TOOL, &iat, info, "interfaceId")?,
                )?,
            };
            let port_id = match opt_string(TOOL, &iat, info, "interfaceIdType")? {
                Some("macAddress") => mac(unquote(id)),
                _ => unquote(id).to_string(),
            };
            let chassis_id = match (
                opt_string(TOOL, &nat, n, "chassisId")?,
                opt_string(TOOL, &nat, n, "chassisIdType")?,
            ) {
                (Some(c), Some("macAddress")) => Some(mac(c)),
                (c, _) => c.map(str::to_string),
            };
            let mgmt_ip = match n.get("managementAddresses") {
                None | Some(Value::Null) => None,
                Some(Value::Array(a)) => match a.first() {
                    Some(first) => {
                        let mat = format!("{nat}.managementAddresses[0]");
                        opt_string(TOOL, &mat, object(TOOL, &mat, first)?, "address")?
                            .map(str::to_string)
                    }
                    None => None,
                },
                Some(other) => {
                    return Err(err(
                        TOOL,
                        format!(
                            "{nat}.managementAddresses: expected a list, got {}",
                            kind(other)
                        ),
                    ))
                }
            };
            out.push(LldpNeighbor {
                interface: port.to_string(),
                chassis_name: opt_string(TOOL, &nat, n, "systemName")?.map(str::to_string),
                chassis_id,
                chassis_descr: opt_string(TOOL, &nat, n, "systemDescription")?.map(str::to_string),
                port_id,
                port_descr: opt_string(TOOL, &iat, info, "interfaceDescription")?
                    .map(str::to_string),
                mgmt_ip,
            });
        }
    }
    Ok(out)
}

// --------------------------------------------------------------- text forms

/// One row of `show errdisable recovery`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ErrdisableRecovery {
    /// `link-flap`, `bpduguard`, `acl`, …
    pub reason: String,
    /// Timer Status `Enabled`: the port comes back by itself.
    pub enabled: bool,
    /// Timer Interval in seconds; `None` for `N/A` (not configurable).
    pub interval_s: Option<u32>,
}

/// `show errdisable recovery`, which has no JSON form (ANTA asks for it as
/// text): a `Errdisable Reason  Timer Status  Timer Interval` header, a
/// ruler, then one `REASON STATUS INTERVAL` row per cause.
pub fn parse_errdisable_recovery(text: &str) -> Result<Vec<ErrdisableRecovery>, ParseError> {
    const TOOL: &str = "show errdisable recovery";
    let mut header = false;
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let t = line.trim();
        if t.starts_with("Errdisable Reason") && t.contains("Timer Status") {
            header = true;
            continue;
        }
        if !header || t.is_empty() || t.chars().all(|c| c == '-' || c.is_whitespace()) {
            continue;
        }
        let bad = |why: String| err(TOOL, format!("line {}: {why}", n + 1));
        let toks: Vec<&str> = t.split_whitespace().collect();
        let [reason, status, interval] = toks[..] else {
            return Err(bad(format!("expected REASON STATUS INTERVAL, got `{t}`")));
        };
        let enabled = match status {
            "Enabled" => true,
            "Disabled" => false,
            _ => {
                return Err(bad(format!(
                    "timer status `{status}` is neither Enabled nor Disabled"
                )))
            }
        };
        let interval_s = match interval {
            "N/A" => None,
            i => Some(
                i.parse()
                    .map_err(|_| bad(format!("timer interval `{i}` is not seconds")))?,
            ),
        };
        out.push(ErrdisableRecovery {
            reason: reason.to_string(),
            enabled,
            interval_s,
        });
    }
    if !header {
        return Err(err(
            TOOL,
            format!(
                "no `Errdisable Reason … Timer Status` header in {}",
                first_line(text)
            ),
        ));
    }
    Ok(out)
}
