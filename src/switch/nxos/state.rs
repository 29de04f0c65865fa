//! Prior state and what the switch is: port state and err-disable cause
//! (JSON and text), BGP peers of every VRF and address family, `show
//! version`, and LLDP neighbours (JSON and text). Counters are `counters`'
//! to read, the QoS configuration `qos`'s.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use super::rows::{first_text, keys, kind_of, required, table, table_of, text_of, Row};
use crate::counters::host::LldpNeighbor;
use crate::counters::{first_line, ParseError};

// ------------------------------------------------------------- prior state

/// One port's state, from `show interface`, `show interface brief`, `show
/// interface status` or `show interface status err-disabled`. A field is
/// `None` where the command does not say.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PortState {
    /// As the switch printed it.
    pub port: String,
    pub admin_up: Option<bool>,
    pub oper_up: Option<bool>,
    /// The err-disable cause (`linkFlapErrDisabled`, `bpduguard`), when the
    /// port is err-disabled.
    pub err_disabled: Option<String>,
    /// Why the port is down, in NX-OS's words (`SFP not inserted`,
    /// `Administratively down`).
    pub reason: Option<String>,
}

/// `show interface`, `show interface brief` or `show interface status` as
/// structured output. Their rows share `interface` and differ in the rest:
/// `admin_state` (`show interface` only); `state` (`up`/`down`, or
/// `connected`, `notconnect`, `disabled`, `sfpAbsent`, `err-disabled`…
/// in `status`), `oper_state` on SVIs; the reason in `state_rsn_desc`
/// (`svi_rsn_desc` on SVIs), where `none` means none.
pub fn parse_port_states(body: &Value) -> Result<Vec<PortState>, ParseError> {
    const TOOL: &str = "show interface";
    let mut out = Vec::new();
    for row in table(TOOL, body, "interface")? {
        let port = required(TOOL, row, &["interface"], "interface")?;
        let state = first_text(row, &["state", "oper_state"]);
        let reason = first_text(row, &["state_rsn_desc", "svi_rsn_desc"])
            .filter(|r| !r.eq_ignore_ascii_case("none"));
        let admin = text_of(row, "admin_state");
        out.push(port_state(port, admin.as_deref(), state.as_deref(), reason));
    }
    Ok(out)
}

fn port_state(
    port: String,
    admin: Option<&str>,
    state: Option<&str>,
    reason: Option<String>,
) -> PortState {
    let word = state.map(str::to_ascii_lowercase);
    let w = word.as_deref();
    let low_reason = reason.as_deref().map(str::to_ascii_lowercase);
    let err_reason = low_reason
        .as_deref()
        .is_some_and(|r| r.contains("err") && r.contains("disab"));
    let err_disabled = if err_reason {
        reason.clone()
    } else if w.is_some_and(|w| w.contains("err")) {
        state.map(str::to_string)
    } else {
        None
    };
    let oper_up = match w {
        Some("up" | "connected") => Some(true),
        Some(_) if err_disabled.is_some() => Some(false),
        Some(
            "down" | "notconnect" | "sfpabsent" | "xcvrabsent" | "disabled" | "noopermembers"
            | "suspndbyvpc" | "inactive",
        ) => Some(false),
        _ => None,
    };
    let admin_down = w == Some("disabled")
        || low_reason
            .as_deref()
            .is_some_and(|r| r.contains("administratively down"));
    let admin_up = match admin.map(str::to_ascii_lowercase).as_deref() {
        Some("up") => Some(true),
        Some("down") => Some(false),
        _ if admin_down => Some(false),
        _ if oper_up == Some(true) || err_disabled.is_some() => Some(true),
        // Up by configuration, down for want of a link or a transceiver.
        _ if matches!(w, Some("notconnect" | "sfpabsent" | "xcvrabsent")) => Some(true),
        _ => None,
    };
    PortState {
        port,
        admin_up,
        oper_up,
        err_disabled,
        reason,
    }
}

/// `show interface status err-disabled` (text; its JSON form is not
/// known): a `Port Name Status Reason` header between dashed rulers, then
/// one row per err-disabled port. Columns are cut where the header puts
/// them, since a description may hold spaces and run up to the status
/// (`SD 180848 OFFER EM linkFlapErr`). The cause is the Reason
/// (`linkFlapErrDisabled`), else the Status. An empty answer is no
/// err-disabled port.
pub fn parse_err_disabled(text: &str) -> Result<Vec<PortState>, ParseError> {
    const TOOL: &str = "show interface status err-disabled";
    let err = |r: String| ParseError(format!("{TOOL}: {r}"));
    let mut columns: Option<(usize, usize)> = None;
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let t = line.trim();
        if t.is_empty() || t.chars().all(|c| c == '-') {
            continue;
        }
        let words: Vec<&str> = t.split_whitespace().collect();
        if words.first() == Some(&"Port") && words.contains(&"Status") && words.contains(&"Reason")
        {
            let at = |w: &str| line.find(w).map(|i| line[..i].chars().count());
            match (at("Status"), at("Reason")) {
                (Some(s), Some(r)) if s < r => columns = Some((s, r)),
                _ => return Err(err(format!("line {}: `{t}` is not a usable header", n + 1))),
            }
            continue;
        }
        let Some((s, r)) = columns else {
            return Err(err(format!(
                "line {}: `{t}` comes before the `Port Name Status Reason` header",
                n + 1
            )));
        };
        let chars: Vec<char> = line.chars().collect();
        let cut = |from: usize, to: usize| -> String {
            chars
                .get(from.min(chars.len())..to.min(chars.len()))
                .map(|c| c.iter().collect::<String>().trim().to_string())
                .unwrap_or_default()
        };
        let status = cut(s, r);
        let reason = cut(r, chars.len());
        if status.is_empty() {
            return Err(err(format!(
                "line {}: `{t}` has nothing under Status",
                n + 1
            )));
        }
        let cause = if reason.is_empty() { status } else { reason };
        out.push(PortState {
            port: words[0].to_string(),
            admin_up: Some(true),
            oper_up: Some(false),
            err_disabled: Some(cause.clone()),
            reason: Some(cause),
        });
    }
    if columns.is_none() && !text.trim().is_empty() {
        return Err(err(format!(
            "no `Port Name Status Reason` header in {}",
            first_line(text)
        )));
    }
    Ok(out)
}

/// One BGP session of a summary.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BgpPeer {
    pub vrf: String,
    /// `IPv4 Unicast`, `L2VPN EVPN`; `None` where the view has no address
    /// family (`show bgp sessions`).
    pub address_family: Option<String>,
    pub neighbor: String,
    pub remote_as: Option<String>,
    /// `Established`, `Idle`, `Active`, `Connect`, …
    pub state: String,
}

impl BgpPeer {
    pub fn established(&self) -> bool {
        self.state.eq_ignore_ascii_case("established")
    }
}

/// `show ip bgp summary vrf all`, `show bgp all summary vrf all` or `show
/// bgp sessions vrf all` as structured output: every peer of every VRF and
/// address family, read through `TABLE_vrf`/`TABLE_af`/`TABLE_saf`/
/// `TABLE_neighbor` whatever the shape of each level (a VRF may appear
/// twice, once without address families). The VRF is `vrf-name-out`, the
/// address family `af-name`, the peer `neighborid` (`neighbor-id` in
/// `sessions`), its AS `neighboras` (`remoteas`). No VRF table (BGP not
/// running, an empty answer) is no peer.
pub fn parse_bgp_summary(body: &Value) -> Result<Vec<BgpPeer>, ParseError> {
    const TOOL: &str = "show bgp summary";
    let mut out = Vec::new();
    match body {
        Value::Null => {}
        Value::Object(o) => bgp_level(TOOL, o, &["vrf", "af", "saf"], None, None, &mut out)?,
        other => {
            return Err(ParseError(format!(
                "{TOOL}: expected an object holding TABLE_vrf, found {}",
                kind_of(other)
            )))
        }
    }
    Ok(out)
}

fn bgp_level(
    tool: &str,
    obj: &Row,
    below: &[&str],
    vrf: Option<&str>,
    af: Option<&str>,
    out: &mut Vec<BgpPeer>,
) -> Result<(), ParseError> {
    let vrf_here = text_of(obj, "vrf-name-out");
    let vrf = vrf_here.as_deref().or(vrf);
    let af_here = text_of(obj, "af-name");
    let af = af_here.as_deref().or(af);
    for n in table_of(tool, obj, "neighbor")? {
        let neighbor = required(
            tool,
            n,
            &["neighborid", "neighbor-id", "neighbor"],
            "neighbor",
        )?;
        let state = text_of(n, "state")
            .ok_or_else(|| ParseError(format!("{tool}: neighbor {neighbor} has no `state`")))?;
        let vrf = vrf.ok_or_else(|| {
            ParseError(format!(
                "{tool}: neighbor {neighbor} is not inside a TABLE_vrf row with a `vrf-name-out`"
            ))
        })?;
        out.push(BgpPeer {
            vrf: vrf.to_string(),
            address_family: af.map(str::to_string),
            neighbor,
            remote_as: first_text(n, &["neighboras", "remoteas"]),
            state,
        });
    }
    for (i, level) in below.iter().enumerate() {
        for row in table_of(tool, obj, level)? {
            bgp_level(tool, row, &below[i + 1..], vrf, af, out)?;
        }
    }
    Ok(())
}

/// The peers that are not Established, in order.
pub fn not_established(peers: &[BgpPeer]) -> Vec<&BgpPeer> {
    peers.iter().filter(|p| !p.established()).collect()
}

/// What `show version` says of the switch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Version {
    /// `nxos_ver_str` (recent releases), else `sys_ver_str` (7.x), else
    /// `kickstart_ver_str`: `9.2(2)`, `7.3(1)D1(1) [build 7.3(1)D1(0.10)]`.
    pub version: String,
    /// `chassis_id`: `Nexus9000 C93180YC-FX Chassis`, the model.
    pub chassis: Option<String>,
    pub hostname: Option<String>,
}

/// `show version` as structured output.
pub fn parse_version(body: &Value) -> Result<Version, ParseError> {
    const TOOL: &str = "show version";
    let Some(row) = body.as_object() else {
        return Err(ParseError(format!(
            "{TOOL}: expected an object, found {}",
            kind_of(body)
        )));
    };
    let version = first_text(row, &["nxos_ver_str", "sys_ver_str", "kickstart_ver_str"])
        .ok_or_else(|| {
            ParseError(format!(
                "{TOOL}: no `nxos_ver_str`, `sys_ver_str` or `kickstart_ver_str` (it has {})",
                keys(row)
            ))
        })?;
    Ok(Version {
        version,
        chassis: text_of(row, "chassis_id"),
        hostname: text_of(row, "host_name"),
    })
}

// -------------------------------------------------------------------- LLDP

/// An LLDP value NX-OS prints when the neighbour sent none.
fn advertised(v: Option<String>) -> Option<String> {
    v.filter(|s| {
        !matches!(
            s.to_ascii_lowercase().as_str(),
            "not advertised" | "null" | "n/a" | ""
        )
    })
}

/// `show lldp neighbors detail` as structured output
/// (`TABLE_nbor_detail/ROW_nbor_detail`): the local port `l_port_id` (short
/// form, `Eth1/9`), `sys_name`, `port_id`, `port_desc`, `chassis_id`,
/// `sys_desc`, `mgmt_addr`; `not advertised` and `null` are absent.
pub fn parse_lldp_json(body: &Value) -> Result<Vec<LldpNeighbor>, ParseError> {
    const TOOL: &str = "show lldp neighbors detail";
    let mut out = Vec::new();
    for r in table(TOOL, body, "nbor_detail")? {
        out.push(LldpNeighbor {
            interface: required(TOOL, r, &["l_port_id"], "nbor_detail")?,
            chassis_name: advertised(text_of(r, "sys_name")),
            chassis_id: advertised(text_of(r, "chassis_id")),
            chassis_descr: advertised(text_of(r, "sys_desc")),
            port_id: required(TOOL, r, &["port_id"], "nbor_detail")?,
            port_descr: advertised(text_of(r, "port_desc")),
            mgmt_ip: advertised(text_of(r, "mgmt_addr")),
        });
    }
    Ok(out)
}

/// The keys of a `show lldp neighbors detail` record; a line that starts
/// with none of them continues the System Description (`TAC support: …`,
/// `Copyright …`).
const LLDP_KEYS: &[&str] = &[
    "Chassis id",
    "Port id",
    "Local Port id",
    "Port Description",
    "System Name",
    "System Description",
    "Time remaining",
    "System Capabilities",
    "Enabled Capabilities",
    "Management Address",
    "Management Address IPV6",
    "Vlan ID",
    "Vlan Name",
    "Max Frame Size",
    "Link Aggregation Capability",
    "Link Aggregation Status",
    "Link Aggregation ID",
    "Total entries displayed",
];

/// `show lldp neighbors detail` as text: after the capability legend, one
/// record per neighbour from `Chassis id:` on, with `Local Port id` (short
/// form), `Port id` and `System Name`; `not advertised` is absent. A
/// `Total entries displayed: N` that disagrees with the records read means
/// the text was cut, and is an error.
pub fn parse_lldp_text(text: &str) -> Result<Vec<LldpNeighbor>, ParseError> {
    const TOOL: &str = "show lldp neighbors detail";
    let err = |r: String| ParseError(format!("{TOOL}: {r}"));
    let mut records: Vec<BTreeMap<&str, String>> = Vec::new();
    let mut last_key: Option<&str> = None;
    let mut total: Option<usize> = None;
    for line in text.lines() {
        let t = line.trim();
        if t.is_empty() {
            continue;
        }
        let key = t.split_once(':').and_then(|(k, v)| {
            LLDP_KEYS
                .iter()
                .find(|key| **key == k.trim())
                .map(|key| (*key, v.trim()))
        });
        match key {
            Some(("Total entries displayed", v)) => {
                total = Some(
                    v.parse()
                        .map_err(|_| err(format!("`{t}` does not end in a number")))?,
                );
                last_key = None;
            }
            Some(("Chassis id", v)) => {
                records.push(BTreeMap::from([("Chassis id", v.to_string())]));
                last_key = Some("Chassis id");
            }
            Some((k, v)) => {
                if let Some(r) = records.last_mut() {
                    r.insert(k, v.to_string());
                    last_key = Some(k);
                }
            }
            None => {
                if let (Some("System Description"), Some(r)) = (last_key, records.last_mut()) {
                    if let Some(d) = r.get_mut("System Description") {
                        d.push('\n');
                        d.push_str(t);
                    }
                }
            }
        }
    }
    if records.is_empty() && total.unwrap_or(0) == 0 && !text.contains("Capability codes") {
        return Err(err(format!(
            "no `Chassis id:` record and no `Capability codes` legend in {}",
            first_line(text)
        )));
    }
    if let Some(n) = total {
        if n != records.len() {
            return Err(err(format!(
                "the switch says {n} entries, but {} records were read: the text is cut",
                records.len()
            )));
        }
    }
    records
        .into_iter()
        .enumerate()
        .map(|(i, mut r)| {
            let mut take = |k: &str| advertised(r.remove(k));
            let chassis_id = take("Chassis id");
            let need = |v: Option<String>, k: &str| {
                v.ok_or_else(|| {
                    err(format!(
                        "record {} (chassis {}) has no `{k}`",
                        i + 1,
                        chassis_id.as_deref().unwrap_or("not advertised")
                    ))
                })
            };
            Ok(LldpNeighbor {
                interface: need(take("Local Port id"), "Local Port id")?,
                port_id: need(take("Port id"), "Port id")?,
                chassis_name: take("System Name"),
                chassis_descr: take("System Description"),
                port_descr: take("Port Description"),
                mgmt_ip: take("Management Address"),
                chassis_id: chassis_id.clone(),
            })
        })
        .collect()
}
