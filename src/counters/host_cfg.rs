//! Host configuration read by the audit, beside the counters: `dcb app
//! show`, plain `ethtool DEV`, `ethtool [-I] --show-fec DEV`, `ibstat`,
//! `mlxfwmanager` (query), `cma_roce_tos` and `lldpcli show neighbors`
//! (text). Parsers only; which host and which command is the audit's
//! business. A field the output does not print is `None`, never a default.

use std::collections::BTreeMap;

use serde::Serialize;

use super::{first_line, ParseError};

fn err(tool: &str, reason: impl std::fmt::Display) -> ParseError {
    ParseError(format!("{tool}: {reason}"))
}

// ---------------------------------------------------------------- dcb app show

/// What `dcb app show dev X` prints: the APP table by selector. Maps are
/// key → priorities, since the table may hold several priorities for one key
/// (`dcb app add` appends; the NIC uses one).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct DcbApp {
    pub default_prio: Vec<u8>,
    /// DSCP (0–63) → priorities; symbolic names (`CS4`, `AF31`, `EF`) are
    /// read as their DSCP.
    pub dscp_prio: BTreeMap<u8, Vec<u8>>,
    /// PCP+DEI as dcb prints it (`0nd`…`7de`, or a number with `-N`).
    pub pcp_prio: BTreeMap<String, Vec<u8>>,
    pub ethtype_prio: BTreeMap<u16, Vec<u8>>,
    pub stream_port_prio: BTreeMap<u16, Vec<u8>>,
    pub dgram_port_prio: BTreeMap<u16, Vec<u8>>,
    pub port_prio: BTreeMap<u16, Vec<u8>>,
}

impl DcbApp {
    /// The priority DSCP `dscp` is mapped to, when the table has exactly one.
    pub fn dscp(&self, dscp: u8) -> Option<u8> {
        match self.dscp_prio.get(&dscp)?.as_slice() {
            [p] => Some(*p),
            _ => None,
        }
    }
}

/// The DSCP names iproute2 prints from `/etc/iproute2/rt_dsfield` (the
/// shipped file's values, shifted right by the two ECN bits).
fn dscp_name(s: &str) -> Option<u8> {
    let v = match s {
        "default" => 0,
        "CS1" => 8,
        "AF11" => 10,
        "AF12" => 12,
        "AF13" => 14,
        "CS2" => 16,
        "AF21" => 18,
        "AF22" => 20,
        "AF23" => 22,
        "CS3" => 24,
        "AF31" => 26,
        "AF32" => 28,
        "AF33" => 30,
        "CS4" => 32,
        "AF41" => 34,
        "AF42" => 36,
        "AF43" => 38,
        "CS5" => 40,
        "EF" => 46,
        "CS6" => 48,
        "CS7" => 56,
        _ => return None,
    };
    Some(v)
}

fn prio(tool: &str, what: &str, tok: &str) -> Result<u8, ParseError> {
    match tok.parse::<u8>() {
        Ok(p) if p < 8 => Ok(p),
        _ => Err(err(tool, format!("{what}: priority `{tok}` is not 0–7"))),
    }
}

/// Reads `dcb app show dev X` in its text form (`dscp-prio CS4:4 26:3`) or
/// as JSON (`dcb -j app show`: `{"dscp_prio":[[26,3]], "default_prio":[0]}`,
/// keys with underscores, DSCP always numeric). Lines dcb prints for other
/// objects are an error rather than an empty table.
pub fn parse_dcb_app(text: &str) -> Result<DcbApp, ParseError> {
    const TOOL: &str = "dcb app show";
    if text.trim_start().starts_with('{') {
        return parse_dcb_app_json(text);
    }
    let mut app = DcbApp::default();
    let mut selector: Option<&str> = None;
    let mut known = 0;
    for tok in text.split_whitespace() {
        match tok {
            "default-prio" | "dscp-prio" | "pcp-prio" | "ethtype-prio" | "stream-port-prio"
            | "dgram-port-prio" | "port-prio" => {
                selector = Some(tok);
                known += 1;
                continue;
            }
            _ => {}
        }
        let Some(sel) = selector else {
            return Err(err(
                TOOL,
                format!(
                    "`{tok}` before any selector (dscp-prio, default-prio, …) in {}",
                    first_line(text)
                ),
            ));
        };
        if sel == "default-prio" {
            app.default_prio.push(prio(TOOL, sel, tok)?);
            continue;
        }
        let (key, p) = tok
            .rsplit_once(':')
            .ok_or_else(|| err(TOOL, format!("{sel}: `{tok}` is not KEY:PRIO")))?;
        let p = prio(TOOL, sel, p)?;
        let bad = || err(TOOL, format!("{sel}: `{key}` is not a valid key"));
        match sel {
            "dscp-prio" => {
                let d = match key.parse::<u8>() {
                    Ok(d) if d < 64 => d,
                    Ok(_) => return Err(bad()),
                    Err(_) => dscp_name(key).ok_or_else(bad)?,
                };
                app.dscp_prio.entry(d).or_default().push(p);
            }
            "pcp-prio" => app.pcp_prio.entry(key.to_string()).or_default().push(p),
            _ => {
                let k = if sel == "ethtype-prio" {
                    u16::from_str_radix(key.trim_start_matches("0x"), 16).map_err(|_| bad())?
                } else {
                    key.parse::<u16>().map_err(|_| bad())?
                };
                let map = match sel {
                    "ethtype-prio" => &mut app.ethtype_prio,
                    "stream-port-prio" => &mut app.stream_port_prio,
                    "dgram-port-prio" => &mut app.dgram_port_prio,
                    _ => &mut app.port_prio,
                };
                map.entry(k).or_default().push(p);
            }
        }
    }
    if known == 0 && !text.trim().is_empty() {
        return Err(err(
            TOOL,
            format!(
                "no APP selector (dscp-prio, default-prio, …) in {}",
                first_line(text)
            ),
        ));
    }
    Ok(app)
}

fn parse_dcb_app_json(text: &str) -> Result<DcbApp, ParseError> {
    const TOOL: &str = "dcb -j app show";
    let v: serde_json::Value =
        serde_json::from_str(text).map_err(|e| err(TOOL, format!("not JSON: {e}")))?;
    let obj = v
        .as_object()
        .ok_or_else(|| err(TOOL, "not a JSON object"))?;
    let mut app = DcbApp::default();
    let num = |v: &serde_json::Value, what: &str| {
        v.as_u64()
            .ok_or_else(|| err(TOOL, format!("{what}: {v} is not a number")))
    };
    for (k, v) in obj {
        let list = v
            .as_array()
            .ok_or_else(|| err(TOOL, format!("{k} is not a list")))?;
        for item in list {
            if k == "default_prio" {
                app.default_prio
                    .push(prio(TOOL, k, &num(item, k)?.to_string())?);
                continue;
            }
            let pair = item
                .as_array()
                .filter(|a| a.len() == 2)
                .ok_or_else(|| err(TOOL, format!("{k}: {item} is not a [key, priority] pair")))?;
            let p = prio(TOOL, k, &num(&pair[1], k)?.to_string())?;
            if k == "pcp_prio" {
                let key = match &pair[0] {
                    serde_json::Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                app.pcp_prio.entry(key).or_default().push(p);
                continue;
            }
            let key = num(&pair[0], k)?;
            let bad = || err(TOOL, format!("{k}: key {key} is out of range"));
            match k.as_str() {
                "dscp_prio" => {
                    let d = u8::try_from(key).ok().filter(|d| *d < 64).ok_or_else(bad)?;
                    app.dscp_prio.entry(d).or_default().push(p);
                }
                "ethtype_prio" | "stream_port_prio" | "dgram_port_prio" | "port_prio" => {
                    let key = u16::try_from(key).map_err(|_| bad())?;
                    let map = match k.as_str() {
                        "ethtype_prio" => &mut app.ethtype_prio,
                        "stream_port_prio" => &mut app.stream_port_prio,
                        "dgram_port_prio" => &mut app.dgram_port_prio,
                        _ => &mut app.port_prio,
                    };
                    map.entry(key).or_default().push(p);
                }
                _ => return Err(err(TOOL, format!("unknown key `{k}`"))),
            }
        }
    }
    Ok(app)
}

// ------------------------------------------------------------ dcb -j pfc show

/// Reads `dcb -j [-s] pfc show dev X` into the same [`PfcConfig`] as the text
/// form (`switch::linux::counters::parse_dcb_pfc`). The shape is `dcb_pfc.c`'s: scalars
/// `pfc_cap`, `macsec_bypass` (a JSON bool), `delay`, and `prio_pfc`,
/// `requests`, `indications` as arrays indexed by priority
/// (`dcb_print_named_array` opens a JSON array and prints unnamed values).
pub fn parse_dcb_pfc_json(
    text: &str,
) -> Result<crate::switch::linux::counters::PfcConfig, ParseError> {
    const TOOL: &str = "dcb -j pfc show";
    let v: serde_json::Value =
        serde_json::from_str(text).map_err(|e| err(TOOL, format!("not JSON: {e}")))?;
    let obj = v
        .as_object()
        .ok_or_else(|| err(TOOL, "not a JSON object"))?;
    let mut cfg = crate::switch::linux::counters::PfcConfig::default();
    let uint = |k: &str, max: u64| -> Result<Option<u64>, ParseError> {
        match obj.get(k) {
            None => Ok(None),
            Some(x) => match x.as_u64() {
                Some(n) if n <= max => Ok(Some(n)),
                _ => Err(err(TOOL, format!("{k}: {x} is not a number up to {max}"))),
            },
        }
    };
    cfg.pfc_cap = uint("pfc_cap", 8)?.map(|n| n as u8);
    cfg.delay = uint("delay", u64::from(u16::MAX))?.map(|n| n as u16);
    cfg.macsec_bypass = match obj.get("macsec_bypass") {
        None => None,
        Some(b) => Some(
            b.as_bool()
                .ok_or_else(|| err(TOOL, format!("macsec_bypass: {b} is not true or false")))?,
        ),
    };
    let array = |k: &str| -> Result<Option<&Vec<serde_json::Value>>, ParseError> {
        match obj.get(k) {
            None => Ok(None),
            Some(a) => match a.as_array() {
                Some(a) if a.len() <= 8 => Ok(Some(a)),
                _ => Err(err(
                    TOOL,
                    format!("{k}: {a} is not a list of at most 8 values"),
                )),
            },
        }
    };
    if let Some(a) = array("prio_pfc")? {
        for (p, x) in a.iter().enumerate() {
            cfg.prio_pfc[p] =
                Some(x.as_bool().ok_or_else(|| {
                    err(TOOL, format!("prio_pfc[{p}]: {x} is not true or false"))
                })?);
        }
    }
    for (k, slot) in [
        ("requests", &mut cfg.requests),
        ("indications", &mut cfg.indications),
    ] {
        if let Some(a) = array(k)? {
            for (p, x) in a.iter().enumerate() {
                slot[p] = Some(super::value(TOOL, &format!("{k}[{p}]"), &x.to_string())?);
            }
        }
    }
    if cfg == crate::switch::linux::counters::PfcConfig::default() {
        return Err(err(TOOL, "no PFC attribute in the output"));
    }
    Ok(cfg)
}

// ----------------------------------------------------------------- ethtool DEV

/// What plain `ethtool DEV` prints about the link.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct LinkSettings {
    pub device: Option<String>,
    /// `None` for `Unknown!` (no link, or the driver does not know).
    pub speed_mbps: Option<u64>,
    pub duplex: Option<String>,
    pub lanes: Option<u32>,
    pub auto_negotiation: Option<bool>,
    pub port: Option<String>,
    pub link_detected: Option<bool>,
    pub supported_link_modes: Vec<String>,
    pub advertised_link_modes: Vec<String>,
    pub supported_fec_modes: Vec<String>,
    pub advertised_fec_modes: Vec<String>,
}

/// `key: value` lines, where a line without a colon continues the previous
/// key's value (the link mode lists wrap onto indented lines).
fn continued_fields(text: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for line in text.lines() {
        let t = line.trim();
        if t.is_empty() {
            continue;
        }
        match t.split_once(':') {
            Some((k, v)) if !k.contains('/') || k.contains(' ') => {
                out.push((k.trim().to_string(), v.trim().to_string()))
            }
            _ => {
                if let Some((_, v)) = out.last_mut() {
                    v.push(' ');
                    v.push_str(t);
                }
            }
        }
    }
    out
}

fn words(v: &str) -> Vec<String> {
    v.split_whitespace()
        .filter(|w| *w != "Not" && *w != "reported" && *w != "None")
        .map(str::to_string)
        .collect()
}

/// Reads plain `ethtool DEV` (or a `grep` of it); a `Settings for DEV:`,
/// `Speed:` or `Link detected:` line is required.
pub fn parse_ethtool_link(text: &str) -> Result<LinkSettings, ParseError> {
    const TOOL: &str = "ethtool";
    let mut s = LinkSettings::default();
    let mut seen = false;
    for (k, v) in continued_fields(text) {
        let yes_no = |v: &str| match v {
            "yes" | "Yes" | "on" => Some(true),
            "no" | "No" | "off" => Some(false),
            _ => None,
        };
        match k.as_str() {
            _ if k.starts_with("Settings for ") => {
                s.device = Some(k["Settings for ".len()..].to_string());
                seen = true;
            }
            "Speed" => {
                seen = true;
                s.speed_mbps = match v.strip_suffix("Mb/s") {
                    Some(n) => Some(
                        n.parse()
                            .map_err(|_| err(TOOL, format!("Speed: `{v}` is not NMb/s")))?,
                    ),
                    None if v.starts_with("Unknown") => None,
                    None => {
                        return Err(err(TOOL, format!("Speed: `{v}` is not NMb/s or Unknown!")))
                    }
                }
            }
            "Duplex" => s.duplex = Some(v).filter(|v| !v.starts_with("Unknown")),
            "Lanes" => s.lanes = v.parse().ok(),
            "Auto-negotiation" => s.auto_negotiation = yes_no(&v),
            "Port" => s.port = Some(v),
            "Link detected" => {
                seen = true;
                s.link_detected =
                    Some(yes_no(&v).ok_or_else(|| {
                        err(TOOL, format!("Link detected: `{v}` is not yes or no"))
                    })?);
            }
            "Supported link modes" => s.supported_link_modes = words(&v),
            "Advertised link modes" => s.advertised_link_modes = words(&v),
            "Supported FEC modes" => s.supported_fec_modes = words(&v),
            "Advertised FEC modes" => s.advertised_fec_modes = words(&v),
            _ => {}
        }
    }
    if !seen {
        return Err(err(
            TOOL,
            format!(
                "no \"Settings for DEV:\", \"Speed:\" or \"Link detected:\" line in {}",
                first_line(text)
            ),
        ));
    }
    Ok(s)
}

// ------------------------------------------------------ ethtool -I --show-fec

/// One FEC statistic of `ethtool -I --show-fec`, with its per-lane values
/// when the driver reports them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct FecStat {
    pub total: Option<u64>,
    pub lanes: Vec<u64>,
}

/// What `ethtool [-I] --show-fec DEV` prints.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct FecInfo {
    pub device: Option<String>,
    /// `Supported/Configured FEC encodings` (older ethtool: `Configured`).
    pub configured: Vec<String>,
    /// `Active FEC encoding`: `RS`, `BaseR`, `Off`, `None`, `LLRS`.
    pub active: Vec<String>,
    /// `corrected_blocks`, `uncorrectable_blocks`, `corrected_bits` (with -I).
    pub statistics: BTreeMap<String, FecStat>,
}

/// Reads `ethtool [-I] --show-fec DEV`: `FEC parameters for DEV:`, the
/// encodings, then with `-I` a `Statistics:` block of `name: total` lines,
/// each followed by `Lane N: value` lines where the driver has lanes.
pub fn parse_ethtool_fec(text: &str) -> Result<FecInfo, ParseError> {
    const TOOL: &str = "ethtool --show-fec";
    let mut f = FecInfo::default();
    let mut seen = false;
    let mut in_stats = false;
    let mut last: Option<String> = None;
    for (n, line) in text.lines().enumerate() {
        let t = line.trim();
        let Some((k, v)) = t.split_once(':') else {
            continue;
        };
        let (k, v) = (k.trim(), v.trim());
        if let Some(dev) = k.strip_prefix("FEC parameters for ") {
            f.device = Some(dev.to_string());
            seen = true;
        } else if k.ends_with("FEC encodings") || k == "Configured FEC encodings" {
            f.configured = v.split_whitespace().map(str::to_string).collect();
        } else if k == "Active FEC encoding" {
            f.active = v.split_whitespace().map(str::to_string).collect();
        } else if k == "Statistics" {
            in_stats = true;
        } else if in_stats {
            let what = format!("line {} ({k})", n + 1);
            if let Some(lane) = k.strip_prefix("Lane ") {
                let name = last
                    .clone()
                    .ok_or_else(|| err(TOOL, format!("{what}: a lane before any statistic")))?;
                let lane: usize = lane
                    .parse()
                    .map_err(|_| err(TOOL, format!("{what}: not a lane number")))?;
                let stat = f.statistics.entry(name.clone()).or_default();
                if lane != stat.lanes.len() {
                    return Err(err(TOOL, format!("{what}: lane {lane} out of order")));
                }
                stat.lanes
                    .push(super::value(TOOL, &format!("{name} lane {lane}"), v)?);
            } else {
                let total = if v.is_empty() {
                    None
                } else {
                    Some(super::value(TOOL, k, v)?)
                };
                f.statistics.insert(
                    k.to_string(),
                    FecStat {
                        total,
                        lanes: Vec::new(),
                    },
                );
                last = Some(k.to_string());
            }
        }
    }
    if !seen {
        return Err(err(
            TOOL,
            format!(
                "no \"FEC parameters for DEV:\" line in {}",
                first_line(text)
            ),
        ));
    }
    Ok(f)
}

// ---------------------------------------------------------------------- ibstat

/// One port of an `ibstat` CA.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct IbPort {
    pub port: u8,
    pub state: Option<String>,
    pub physical_state: Option<String>,
    /// `Rate:` in Gb/s.
    pub rate_gbps: Option<u32>,
    pub link_layer: Option<String>,
}

/// One CA (`CA 'mlx5_0'`) of `ibstat`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct IbCa {
    pub name: String,
    pub ca_type: Option<String>,
    pub firmware: Option<String>,
    pub ports: Vec<IbPort>,
}

/// Reads `ibstat`: `CA 'NAME'` blocks, each with `Port N:` sub-blocks.
pub fn parse_ibstat(text: &str) -> Result<Vec<IbCa>, ParseError> {
    const TOOL: &str = "ibstat";
    let mut out: Vec<IbCa> = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let t = line.trim();
        if let Some(name) = t.strip_prefix("CA '").and_then(|r| r.strip_suffix('\'')) {
            out.push(IbCa {
                name: name.to_string(),
                ..Default::default()
            });
            continue;
        }
        let Some(ca) = out.last_mut() else { continue };
        let Some((k, v)) = t.split_once(':') else {
            continue;
        };
        let v = v.trim();
        if let Some(p) = k.strip_prefix("Port ").filter(|_| v.is_empty()) {
            let port = p
                .parse()
                .map_err(|_| err(TOOL, format!("line {}: `{t}` is not Port N:", n + 1)))?;
            ca.ports.push(IbPort {
                port,
                ..Default::default()
            });
            continue;
        }
        let text_of = || Some(v.to_string()).filter(|v| !v.is_empty());
        match (k, ca.ports.last_mut()) {
            ("CA type", _) => ca.ca_type = text_of(),
            ("Firmware version", _) => ca.firmware = text_of(),
            ("State", Some(p)) => p.state = text_of(),
            ("Physical state", Some(p)) => p.physical_state = text_of(),
            ("Link layer", Some(p)) => p.link_layer = text_of(),
            ("Rate", Some(p)) => {
                p.rate_gbps = Some(v.parse().map_err(|_| {
                    err(
                        TOOL,
                        format!("line {}: Rate `{v}` is not a whole number of Gb/s", n + 1),
                    )
                })?)
            }
            _ => {}
        }
    }
    if out.is_empty() {
        return Err(err(
            TOOL,
            format!("no \"CA 'NAME'\" line in {}", first_line(text)),
        ));
    }
    Ok(out)
}

// ------------------------------------------------------------- mlxfwmanager

/// One image version line of `mlxfwmanager` (`FW 24.99.0932 N/A`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ImageVersion {
    pub image: String,
    pub current: String,
    /// `None` where the tool prints `N/A` (no image to offer).
    pub available: Option<String>,
}

/// One `Device #N:` block of `mlxfwmanager` (query).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct FwDevice {
    pub device_type: Option<String>,
    pub part_number: Option<String>,
    pub description: Option<String>,
    /// The board id the firmware is built for (`MT_0000000767`).
    pub psid: Option<String>,
    pub pci_device_name: Option<String>,
    pub base_guid: Option<String>,
    pub base_mac: Option<String>,
    pub versions: Vec<ImageVersion>,
    pub status: Option<String>,
}

impl FwDevice {
    /// The running firmware (`FW` image) version.
    pub fn firmware(&self) -> Option<&str> {
        self.versions
            .iter()
            .find(|v| v.image == "FW")
            .map(|v| v.current.as_str())
    }
}

/// Reads `mlxfwmanager` (query): `Device #N:` blocks of `Key: value` lines
/// and a `Versions: Current Available` table whose image names may hold
/// spaces (`UEFI Virtio net   21.4.0013      N/A`).
pub fn parse_mlxfwmanager(text: &str) -> Result<Vec<FwDevice>, ParseError> {
    const TOOL: &str = "mlxfwmanager";
    let mut out: Vec<FwDevice> = Vec::new();
    let mut in_versions = false;
    for (n, line) in text.lines().enumerate() {
        let t = line.trim();
        if t.starts_with("Device #") && t.ends_with(':') {
            out.push(FwDevice::default());
            in_versions = false;
            continue;
        }
        let Some(d) = out.last_mut() else { continue };
        if t.is_empty() || t.chars().all(|c| c == '-') {
            in_versions = false;
            continue;
        }
        if let Some((k, v)) = t.split_once(':') {
            let v = Some(v.trim().to_string()).filter(|v| !v.is_empty());
            in_versions = false;
            match k.trim() {
                "Device Type" => d.device_type = v,
                "Part Number" => d.part_number = v,
                "Description" => d.description = v,
                "PSID" => d.psid = v,
                "PCI Device Name" => d.pci_device_name = v,
                "Base GUID" => d.base_guid = v,
                "Base MAC" => d.base_mac = v,
                "Status" => d.status = v,
                "Versions" => in_versions = true,
                _ => {}
            }
            continue;
        }
        if in_versions {
            let toks: Vec<&str> = t.split_whitespace().collect();
            let [name @ .., current, available] = toks.as_slice() else {
                return Err(err(
                    TOOL,
                    format!("line {}: `{t}` is not IMAGE CURRENT AVAILABLE", n + 1),
                ));
            };
            if name.is_empty() {
                return Err(err(
                    TOOL,
                    format!("line {}: `{t}` is not IMAGE CURRENT AVAILABLE", n + 1),
                ));
            }
            d.versions.push(ImageVersion {
                image: name.join(" "),
                current: current.to_string(),
                available: Some(available.to_string()).filter(|a| a != "N/A"),
            });
        }
    }
    if out.is_empty() {
        return Err(err(
            TOOL,
            format!("no \"Device #N:\" block in {}", first_line(text)),
        ));
    }
    Ok(out)
}

// ---------------------------------------------------------------- cma_roce_tos

/// The RDMA-CM default ToS that `cma_roce_tos` prints, split into DSCP and ECN.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct RoceTos {
    pub tos: u8,
    pub dscp: u8,
    pub ecn: u8,
}

/// Reads `cma_roce_tos` output: one number, the ToS byte (0–255).
pub fn parse_cma_roce_tos(text: &str) -> Result<RoceTos, ParseError> {
    let t = text.trim();
    let tos: u8 = t.parse().map_err(|_| {
        err(
            "cma_roce_tos",
            format!("{} is not a ToS byte (0–255)", first_line(text)),
        )
    })?;
    Ok(RoceTos {
        tos,
        dscp: tos >> 2,
        ecn: tos & 3,
    })
}

// ----------------------------------------------------- lldpcli show neighbors

/// One neighbour of `lldpcli show neighbors` (text). The audit reads
/// `lldpctl -f json0`; this form is what people paste.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct LldpTextNeighbor {
    pub interface: String,
    pub chassis_id: Option<String>,
    pub system_name: Option<String>,
    pub port_id: Option<String>,
    pub port_description: Option<String>,
    pub ttl: Option<u32>,
}

/// Reads `lldpcli show neighbors`: `Interface: IF, via: …` blocks.
pub fn parse_lldpcli_text(text: &str) -> Result<Vec<LldpTextNeighbor>, ParseError> {
    const TOOL: &str = "lldpcli show neighbors";
    if !text.contains("LLDP neighbors:") {
        return Err(err(
            TOOL,
            format!("no \"LLDP neighbors:\" line in {}", first_line(text)),
        ));
    }
    let mut out: Vec<LldpTextNeighbor> = Vec::new();
    for line in text.lines() {
        let Some((k, v)) = line.trim().split_once(':') else {
            continue;
        };
        let v = v.trim();
        if k == "Interface" {
            let ifname = v.split(',').next().unwrap_or("").trim();
            out.push(LldpTextNeighbor {
                interface: ifname.to_string(),
                ..Default::default()
            });
            continue;
        }
        let Some(n) = out.last_mut() else { continue };
        let val = Some(v.to_string()).filter(|v| !v.is_empty());
        match k {
            "ChassisID" => n.chassis_id = val,
            "SysName" => n.system_name = val,
            "PortID" => n.port_id = val,
            "PortDescr" => n.port_description = val,
            "TTL" => n.ttl = v.parse().ok(),
            _ => {}
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dcb_app_text_and_names() {
        let a = parse_dcb_app("dscp-prio CS4:4 26:3 AF31:3 48:6\ndefault-prio 0\n").unwrap();
        assert_eq!(a.dscp_prio[&32], vec![4]);
        assert_eq!(a.dscp_prio[&26], vec![3, 3]);
        assert_eq!(a.dscp(48), Some(6));
        assert_eq!(a.default_prio, vec![0]);
        assert!(parse_dcb_app("dscp-prio 64:3").is_err());
        assert!(parse_dcb_app("dscp-prio 26:9").is_err());
        assert!(parse_dcb_app("pfc-cap 8").is_err());
    }

    #[test]
    fn dcb_app_json() {
        let a = parse_dcb_app(
            r#"{"default_prio":[0],"dscp_prio":[[26,3],[48,6]],"pcp_prio":[["1de",1]]}"#,
        )
        .unwrap();
        assert_eq!(a.dscp(26), Some(3));
        assert_eq!(a.pcp_prio["1de"], vec![1]);
    }

    #[test]
    fn dcb_pfc_json_as_dcb_pfc_c_prints_it() {
        let c = parse_dcb_pfc_json(
            r#"{"pfc_cap":8,"macsec_bypass":false,"delay":4096,"prio_pfc":[false,false,false,true,false,false,false,false],"requests":[0,0,0,12,0,0,0,0]}"#,
        )
        .unwrap();
        assert_eq!(c.enabled(), vec![3]);
        assert_eq!(
            (c.pfc_cap, c.delay, c.requests[3]),
            (Some(8), Some(4096), Some(12))
        );
        assert!(parse_dcb_pfc_json(r#"{"requests":[-1]}"#).is_err());
        assert!(parse_dcb_pfc_json(r#"{"prio_pfc":[1,2,3,4,5,6,7,8,9]}"#).is_err());
        assert!(parse_dcb_pfc_json("{}").is_err());
    }

    #[test]
    fn fec_with_lanes() {
        let f = parse_ethtool_fec(
            "FEC parameters for eth0:\nSupported/Configured FEC encodings: Auto RS\nActive FEC encoding: RS\nStatistics:\n  corrected_blocks: 3\n    Lane 0: 1\n    Lane 1: 2\n  uncorrectable_blocks: 0\n",
        )
        .unwrap();
        assert_eq!(f.active, vec!["RS"]);
        assert_eq!(f.statistics["corrected_blocks"].lanes, vec![1, 2]);
        assert_eq!(f.statistics["uncorrectable_blocks"].total, Some(0));
    }

    #[test]
    fn tos_splits() {
        let t = parse_cma_roce_tos("106\n").unwrap();
        assert_eq!((t.dscp, t.ecn), (26, 2));
        assert!(parse_cma_roce_tos("-1").is_err());
    }
}
