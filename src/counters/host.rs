//! Host-side sources: the command lines the sampler runs on a node and the
//! parsers for what they print. Counters come from `ethtool -S <netdev>` (mlx5
//! names) and from the RDMA device's sysfs files read in one `grep -r`; the
//! audit reads `ethtool -i`, `mlnx_qos -i`, `lldpctl -f json`, `show_gids` and
//! `rdma statistic show`. Nothing here runs a command or knows where the text
//! came from.
//!
//! Names a parser does not know are skipped, and a counter a source does not
//! print is simply absent: mlx5 prints the per-priority PFC counters only for
//! priorities with PFC enabled (`mlx5e_grp_per_prio_pfc_fill_strings` in the
//! kernel's `en_stats.c`), a kernel upgrade adds and removes names, and a veth
//! prints none of them.

use std::collections::{BTreeMap, HashMap};

use serde::Serialize;
use serde_json::Value;

use super::{Canonical, ParseError, Reading};
use crate::plausible;

/// The RDMA port the sampler reads. RoCE NICs expose one port per device.
pub const RDMA_PORT: u8 = 1;

/// The command lines that sample one NIC's counters: `ethtool -S <netdev>`, then
/// one `grep -r . <counters> <hw_counters>` that prints every sysfs counter file
/// as `path:value` (one process instead of one `cat` per file).
pub fn sample_argv(netdev: &str, device: &str) -> Vec<Vec<String>> {
    let port_dir = format!("/sys/class/infiniband/{device}/ports/{RDMA_PORT}");
    vec![
        vec!["ethtool".into(), "-S".into(), netdev.into()],
        vec![
            "grep".into(),
            "-r".into(),
            ".".into(),
            format!("{port_dir}/counters"),
            format!("{port_dir}/hw_counters"),
        ],
    ]
}

fn reading(canonical: Canonical, vendor: &str, priority: Option<u8>, value: u64) -> Reading {
    Reading {
        canonical,
        vendor: vendor.to_string(),
        priority,
        queue: None,
        value,
        bits: None,
    }
}

// ---------------------------------------------------------------------------
// ethtool -S

/// Reads `ethtool -S <netdev>`: a `NIC statistics:` line, then `name: value`
/// lines. Known mlx5 names become readings (per-priority ones carry the
/// priority); everything else is skipped, so a veth or a cut listing parses to
/// a small set. Text without the header (`no stats available`, an ethtool
/// error) is an error, and so is a known counter whose value cannot be one
/// (`-5`, `1.5`, `nan`, above 2^64 − 1).
pub fn parse_ethtool_stats(text: &str) -> Result<Vec<Reading>, ParseError> {
    let mut lines = text.lines().map(str::trim);
    if !lines.any(|l| l == "NIC statistics:") {
        return Err(ParseError(format!(
            "ethtool -S: no \"NIC statistics:\" line in {}",
            excerpt(text)
        )));
    }
    let mut out = Vec::new();
    for line in lines {
        let Some((name, value)) = line.split_once(':') else {
            continue;
        };
        let (name, value) = (name.trim(), value.trim());
        // Only the counters this parser reads must hold a value: other
        // lines may be anything a driver or a wrapper printed.
        if ethtool_reading(name, 0).is_none() {
            continue;
        }
        let value = super::value("ethtool -S", name, value)?;
        if let Some(r) = ethtool_reading(name, value) {
            out.push(r);
        }
    }
    Ok(out)
}

/// One mlx5 (or generic per-queue) `ethtool -S` name in the canonical vocabulary.
///
/// Port totals come from the `_phy` counters, which count what crossed the
/// wire. The software counters (`rx_bytes`, `tx_packets`) are skipped: RoCE
/// traffic bypasses the kernel, so they miss exactly the traffic under test.
fn ethtool_reading(name: &str, value: u64) -> Option<Reading> {
    use Canonical::*;
    let fixed = match name {
        "rx_bytes_phy" => Some(RxBytes),
        "tx_bytes_phy" => Some(TxBytes),
        "rx_packets_phy" => Some(RxPackets),
        "tx_packets_phy" => Some(TxPackets),
        "rx_discards_phy" => Some(Discards),
        // Receive queue had no buffer posted: the host, not the port, dropped it.
        "rx_out_of_buffer" => Some(Discards),
        "tx_discards_phy" => Some(Drops),
        "rx_crc_errors_phy" => Some(CrcErrors),
        "rx_symbol_err_phy" => Some(SymbolErrors),
        "rx_corrected_bits_phy" => Some(FecCorrected),
        // "symbol errors that weren't corrected by FEC" (mlx5 counters.rst).
        "rx_pcs_symbol_err_phy" => Some(FecUncorrected),
        "link_down_events_phy" => Some(LinkDown),
        // 802.3x global pause, printed instead of the per-priority set when
        // global pause is on: port-wide pauses, so no priority.
        "rx_global_pause" => Some(PfcPauseRx),
        "tx_global_pause" => Some(PfcPauseTx),
        "rx_global_pause_duration" => Some(PfcPauseDurationRxUs),
        "tx_global_pause_duration" => Some(PfcPauseDurationTxUs),
        _ => None,
    };
    if let Some(c) = fixed {
        return Some(reading(c, name, None, value));
    }
    if let Some(rest) = name.strip_prefix("rx_prio") {
        let (prio, suffix) = split_number(rest)?;
        let c = match suffix {
            "_bytes" => RxBytes,
            "_packets" => RxPackets,
            "_discards" => Discards,
            "_pause" => PfcPauseRx,
            "_pause_duration" => PfcPauseDurationRxUs,
            // ECN-marked packets the NIC received on this priority.
            "_marked" => EcnMarked,
            _ => return None,
        };
        return Some(reading(c, name, Some(prio), value));
    }
    if let Some(rest) = name.strip_prefix("tx_prio") {
        let (prio, suffix) = split_number(rest)?;
        let c = match suffix {
            "_bytes" => TxBytes,
            "_packets" => TxPackets,
            "_pause" => PfcPauseTx,
            "_pause_duration" => PfcPauseDurationTxUs,
            _ => return None,
        };
        return Some(reading(c, name, Some(prio), value));
    }
    // veth and virtio name their queues `rx_queue_<n>_drops`.
    if let Some(rest) = name.strip_prefix("rx_queue_") {
        let (queue, suffix) = split_number(rest)?;
        if suffix == "_drops" {
            let mut r = reading(Drops, name, None, value);
            r.queue = Some(queue);
            return Some(r);
        }
    }
    None
}

/// `3_pause` → (3, `_pause`); the number must fit a u8.
fn split_number(s: &str) -> Option<(u8, &str)> {
    let end = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let n = s[..end].parse().ok()?;
    Some((n, &s[end..]))
}

// ---------------------------------------------------------------------------
// sysfs: grep -r . .../ports/1/counters .../ports/1/hw_counters

/// Width in bits of each IB PMA counter in `ports/<n>/counters/` when the
/// device has no extended (64-bit) counters: `PORT_PMA_ATTR` in the kernel's
/// `drivers/infiniband/core/sysfs.c`. A PMA counter stops at its maximum
/// instead of wrapping.
const PMA_WIDTHS: [(&str, u8); 17] = [
    ("symbol_error", 16),
    ("link_error_recovery", 8),
    ("link_downed", 8),
    ("port_rcv_errors", 16),
    ("port_rcv_remote_physical_errors", 16),
    ("port_rcv_switch_relay_errors", 16),
    ("port_xmit_discards", 16),
    ("port_xmit_constraint_errors", 8),
    ("port_rcv_constraint_errors", 8),
    ("local_link_integrity_errors", 4),
    ("excessive_buffer_overrun_errors", 4),
    ("VL15_dropped", 16),
    ("port_xmit_data", 32),
    ("port_rcv_data", 32),
    ("port_xmit_packets", 32),
    ("port_rcv_packets", 32),
    ("port_xmit_wait", 32),
];

/// Files only the extended PMA set (`pma_attrs_ext`) has.
const PMA_EXT_ONLY: [&str; 4] = [
    "unicast_xmit_packets",
    "unicast_rcv_packets",
    "multicast_xmit_packets",
    "multicast_rcv_packets",
];

/// Reads the output of `grep -r . <dev>/ports/<n>/counters <dev>/ports/<n>/hw_counters`
/// (see [`sample_argv`]): one `path:value` line per file. Returns the RDMA
/// device named in the paths and the readings.
///
/// A file whose value is not a number (`N/A (no PMA)` on a device without a
/// PMA) is left out: not available, not zero. A counter this parser reads
/// whose value is a number that cannot be a counter (`-5`, `1.5`, `nan`) is
/// an error naming it. `hw_counters/lifespan` is the
/// cache lifetime in ms, not a counter. `grep:` error lines are ignored.
///
/// The 32-bit data and packet counters are marked with their width unless the
/// listing shows the extended set (its `unicast_*` files, or a value above
/// 2^32 − 1); a device with 64-bit counters but without the IETF files cannot
/// be told apart and is marked 32-bit, which errs towards "saturated".
pub fn parse_sysfs_counters(text: &str) -> Result<(String, Vec<Reading>), ParseError> {
    let mut device: Option<&str> = None;
    // (group, name, value), in input order.
    let mut files: Vec<(&str, &str, Option<u64>)> = Vec::new();
    for line in text.lines() {
        let line = line.trim_end_matches('\r');
        if line.starts_with("grep:") {
            continue;
        }
        let Some((path, value)) = line.split_once(':') else {
            continue;
        };
        let Some((dev, group, name)) = split_sysfs_path(path) else {
            continue;
        };
        match device {
            None => device = Some(dev),
            Some(d) if d != dev => {
                return Err(ParseError(format!(
                "sysfs counters: lines for two devices, {d} and {dev}; sample one device at a time"
            )))
            }
            Some(_) => {}
        }
        // Text in place of a value (`N/A (no PMA)`) means not available; a
        // number that cannot be a counter means the listing is damaged.
        let value = value.trim();
        let known = match group {
            "counters" => pma_reading(name, 0, false).is_some(),
            _ => hw_counter_reading(name, 0).is_some(),
        };
        let value = match value.parse::<u64>() {
            Ok(v) => Some(v),
            Err(_) if known && plausible::looks_numeric(value) => {
                Some(super::value("sysfs counters", name, value)?)
            }
            Err(_) => None,
        };
        files.push((group, name, value));
    }
    let Some(device) = device else {
        return Err(ParseError(format!(
            "sysfs counters: no /sys/class/infiniband/<dev>/ports/<n>/{{counters,hw_counters}}/<file>:<value> line in {}",
            excerpt(text)
        )));
    };

    let extended = files.iter().any(|&(group, name, value)| {
        group == "counters"
            && (PMA_EXT_ONLY.contains(&name)
                || (matches!(
                    name,
                    "port_xmit_data" | "port_rcv_data" | "port_xmit_packets" | "port_rcv_packets"
                ) && value.is_some_and(|v| v > u64::from(u32::MAX))))
    });

    let mut out = Vec::new();
    for (group, name, value) in files {
        let Some(value) = value else { continue };
        let r = match group {
            "counters" => pma_reading(name, value, extended),
            _ => hw_counter_reading(name, value),
        };
        out.extend(r);
    }
    Ok((device.to_string(), out))
}

/// `/sys/class/infiniband/mlx5_0/ports/1/hw_counters/np_cnp_sent` →
/// (`mlx5_0`, `hw_counters`, `np_cnp_sent`).
fn split_sysfs_path(path: &str) -> Option<(&str, &str, &str)> {
    let parts: Vec<&str> = path.split('/').collect();
    let i = parts.iter().position(|p| *p == "infiniband")?;
    match parts.get(i + 1..)? {
        [dev, "ports", port, group @ ("counters" | "hw_counters"), name]
            if !dev.is_empty() && !name.is_empty() && port.parse::<u8>().is_ok() =>
        {
            Some((dev, group, name))
        }
        _ => None,
    }
}

fn pma_reading(name: &str, value: u64, extended: bool) -> Option<Reading> {
    use Canonical::*;
    let canonical = match name {
        "port_xmit_data" => TxBytes,
        "port_rcv_data" => RxBytes,
        "port_xmit_packets" => TxPackets,
        "port_rcv_packets" => RxPackets,
        "symbol_error" => SymbolErrors,
        "link_downed" => LinkDown,
        // PortRcvErrors: received packets with an error (FCS/ICRC, length, …).
        "port_rcv_errors" => CrcErrors,
        "port_xmit_discards" => Drops,
        _ => return None,
    };
    let width = PMA_WIDTHS.iter().find(|(n, _)| *n == name).map(|&(_, w)| w);
    let wide = extended
        && matches!(
            name,
            "port_xmit_data" | "port_rcv_data" | "port_xmit_packets" | "port_rcv_packets"
        );
    let bits = if wide { None } else { width };
    let mut r = reading(canonical, name, None, value);
    r.bits = bits;
    if matches!(name, "port_xmit_data" | "port_rcv_data") {
        // PortXmitData/PortRcvData count 4-octet words (the IB spec's unit,
        // "divided by 4 unconditionally"): convert to bytes. In bytes the
        // 32-bit word counter is a 34-bit quantity that stops at
        // 4 × (2^32 − 1) = 2^34 − 4; a stopped counter is reported as 2^34 − 1
        // so that `bits` keeps its meaning ("stopped at 2^bits − 1").
        match bits {
            Some(32) if value >= u64::from(u32::MAX) => {
                r.value = (1u64 << 34) - 1;
                r.bits = Some(34);
            }
            Some(32) => {
                r.value = value * 4;
                r.bits = Some(34);
            }
            _ => r.value = value.saturating_mul(4),
        }
    }
    Some(r)
}

/// One mlx5 RDMA counter (`hw_counters/` file or `rdma statistic` name).
/// These are 64-bit in sysfs; the q-counters behind most of them are 32-bit
/// in hardware and wrap, which `delta` reports as a reset.
fn hw_counter_reading(name: &str, value: u64) -> Option<Reading> {
    use Canonical::*;
    let canonical = match name {
        "np_cnp_sent" => CnpSent,
        "rp_cnp_handled" => CnpHandled,
        "np_ecn_marked_roce_packets" => EcnMarked,
        "out_of_sequence" => OutOfSequence,
        "packet_seq_err" => PacketSeqErr,
        "local_ack_timeout_err" => LocalAckTimeout,
        // Adaptive retransmissions: mlx5's count of retransmitted RoCE packets.
        "roce_adp_retrans" => Retransmits,
        // RDMA packets dropped for lack of a posted receive WQE.
        "out_of_buffer" => Drops,
        // RoCE packets received with a bad ICRC.
        "rx_icrc_encapsulated" => CrcErrors,
        // irdma and bnxt_re name theirs differently.
        _ => return super::host_nic::rdma_counter(name, value),
    };
    Some(reading(canonical, name, None, value))
}

// ---------------------------------------------------------------------------
// rdma statistic show

/// Reads `rdma statistic show [link DEV/PORT]` in its one-line form or the
/// `-p` form (one `name value` per line): `link mlx5_0/1 name value …`, one
/// block per port. Tokens are read across line breaks, so a listing wrapped by
/// a terminal or a mail client parses the same. Returns `(DEV/PORT, readings)`
/// per block.
pub fn parse_rdma_statistic(text: &str) -> Result<Vec<(String, Vec<Reading>)>, ParseError> {
    let mut out: Vec<(String, Vec<Reading>)> = Vec::new();
    let mut tokens = text.split_whitespace().peekable();
    while let Some(tok) = tokens.next() {
        if tok == "link" {
            match tokens.next() {
                Some(link) if link.contains('/') => out.push((link.to_string(), Vec::new())),
                _ => {
                    return Err(ParseError(
                        "rdma statistic: \"link\" is not followed by DEV/PORT".into(),
                    ))
                }
            }
            continue;
        }
        let Some((_, readings)) = out.last_mut() else {
            continue;
        };
        let Some(&next) = tokens.peek() else {
            continue;
        };
        let value = match next.parse::<u64>() {
            Ok(v) => v,
            // A counter this parser reads, followed by a number that
            // cannot be a counter: damaged, not absent.
            Err(_) if hw_counter_reading(tok, 0).is_some() && plausible::looks_numeric(next) => {
                super::value("rdma statistic", tok, next)?
            }
            Err(_) => continue,
        };
        tokens.next();
        readings.extend(hw_counter_reading(tok, value));
    }
    if out.is_empty() {
        return Err(ParseError(format!(
            "rdma statistic: no \"link DEV/PORT\" block in {}",
            excerpt(text)
        )));
    }
    Ok(out)
}

// ---------------------------------------------------------------------------
// ethtool -i

/// What `ethtool -i <netdev>` says about the driver and the device. Values the
/// tool leaves blank are `None`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DriverInfo {
    pub driver: String,
    /// The driver's version: the kernel release for an in-tree driver, the
    /// OFED/DOCA version (`5.4-3.0.3`) for an out-of-tree one.
    pub version: Option<String>,
    /// As printed; mlx5 appends the board id: `28.42.1000 (MT_0000000834)`.
    pub firmware: Option<String>,
    /// PCI address, `0000:1a:00.0`.
    pub bus_info: Option<String>,
}

impl DriverInfo {
    /// The firmware version without the board id (`28.42.1000`).
    pub fn firmware_version(&self) -> Option<&str> {
        self.firmware.as_deref()?.split_whitespace().next()
    }
}

/// Reads `ethtool -i <netdev>`: `key: value` lines; `driver:` is required.
pub fn parse_ethtool_info(text: &str) -> Result<DriverInfo, ParseError> {
    let mut fields: HashMap<&str, &str> = HashMap::new();
    for line in text.lines() {
        if let Some((k, v)) = line.split_once(':') {
            fields.entry(k.trim()).or_insert(v.trim());
        }
    }
    let get = |k: &str| {
        fields
            .get(k)
            .filter(|v| !v.is_empty())
            .map(|v| v.to_string())
    };
    let Some(driver) = get("driver") else {
        return Err(ParseError(format!(
            "ethtool -i: no \"driver:\" line in {}",
            excerpt(text)
        )));
    };
    Ok(DriverInfo {
        driver,
        version: get("version"),
        firmware: get("firmware-version"),
        bus_info: get("bus-info"),
    })
}

// ---------------------------------------------------------------------------
// mlnx_qos -i

/// What `mlnx_qos -i <netdev>` prints about PFC, trust and priority mapping.
/// A part the output does not contain is `None` or empty (a cut listing, an
/// older mlnx_qos, trust PCP without a DSCP table).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct QosConfig {
    /// `DCBX mode: OS controlled` (true) or `Firmware controlled` (false).
    pub dcbx_os: Option<bool>,
    /// `Priority trust state: dscp` (true) or `pcp` (false); `None` when the
    /// tool says trust is not supported.
    pub trust_dscp: Option<bool>,
    /// DSCP → priority, from the `dscp2prio mapping:` block.
    pub dscp2prio: BTreeMap<u8, u8>,
    /// PFC enabled per priority, from the `enabled` row of `PFC configuration:`.
    pub pfc: Option<[bool; 8]>,
    /// Priority → traffic class, from the `tc: N …` blocks.
    pub prio_tc: BTreeMap<u8, u8>,
}

/// Reads `mlnx_qos -i <netdev>` (also what a set command prints after it).
/// Indentation may be tabs or spaces, rows may end with trailing spaces.
pub fn parse_mlnx_qos(text: &str) -> Result<QosConfig, ParseError> {
    let mut q = QosConfig::default();
    let mut recognised = false;
    let mut in_dscp = false;
    let mut in_pfc = false;
    let mut tc: Option<u8> = None;
    for raw in text.lines() {
        let line = raw.trim();
        if let Some(mode) = line.strip_prefix("DCBX mode:") {
            recognised = true;
            q.dcbx_os = Some(mode.trim().starts_with("OS"));
            continue;
        }
        if let Some(state) = line.strip_prefix("Priority trust state:") {
            recognised = true;
            q.trust_dscp = match state.trim() {
                "dscp" => Some(true),
                "pcp" => Some(false),
                _ => None,
            };
            continue;
        }
        if line == "dscp2prio mapping:" {
            in_dscp = true;
            continue;
        }
        if in_dscp {
            if let Some((prio, dscps)) = dscp_line(line) {
                for dscp in dscps.split(',').map(str::trim).filter(|d| !d.is_empty()) {
                    let dscp: u8 = dscp
                        .parse()
                        .ok()
                        .filter(|d| *d < 64)
                        .ok_or_else(|| bad("mlnx_qos", "dscp value", raw))?;
                    q.dscp2prio.insert(dscp, prio);
                }
                continue;
            }
            in_dscp = false;
        }
        if line == "PFC configuration:" {
            recognised = true;
            in_pfc = true;
            continue;
        }
        if in_pfc {
            if let Some(row) = line.strip_prefix("enabled") {
                let bits: Vec<&str> = row.split_whitespace().collect();
                if bits.len() != 8 {
                    return Err(bad("mlnx_qos", "PFC enabled row (want 8 values)", raw));
                }
                let mut pfc = [false; 8];
                for (slot, b) in pfc.iter_mut().zip(&bits) {
                    *slot = match *b {
                        "0" => false,
                        "1" => true,
                        _ => return Err(bad("mlnx_qos", "PFC enabled row", raw)),
                    };
                }
                q.pfc = Some(pfc);
                continue;
            }
            if line.starts_with("priority") || line.starts_with("buffer") {
                continue;
            }
            in_pfc = false;
        }
        if let Some(rest) = line.strip_prefix("tc:") {
            let n = rest.split_whitespace().next().and_then(|n| n.parse().ok());
            tc = Some(n.ok_or_else(|| bad("mlnx_qos", "tc line", raw))?);
            continue;
        }
        if let (Some(t), Some(p)) = (tc, line.strip_prefix("priority:")) {
            let p: u8 = p
                .trim()
                .parse()
                .ok()
                .filter(|p| *p < 8)
                .ok_or_else(|| bad("mlnx_qos", "tc priority line", raw))?;
            q.prio_tc.insert(p, t);
            continue;
        }
    }
    if !recognised {
        return Err(ParseError(format!(
            "mlnx_qos: none of \"DCBX mode:\", \"Priority trust state:\", \"PFC configuration:\" in {}",
            excerpt(text)
        )));
    }
    Ok(q)
}

/// `prio:3 dscp:31,30,29,` → (3, `31,30,29,`). The `default priority:` block's
/// `prio:N` lines have no `dscp:` and do not match.
fn dscp_line(line: &str) -> Option<(u8, &str)> {
    let rest = line.strip_prefix("prio:")?;
    let (prio, dscps) = rest.split_once(" dscp:")?;
    let prio: u8 = prio.trim().parse().ok().filter(|p| *p < 8)?;
    Some((prio, dscps))
}

// ---------------------------------------------------------------------------
// lldpctl -f json

/// One LLDP neighbour seen on a local interface.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LldpNeighbor {
    /// The local interface (netdev) the neighbour was heard on.
    pub interface: String,
    /// The neighbour's system name; a chassis may advertise none.
    pub chassis_name: Option<String>,
    /// The chassis id value (usually a MAC).
    pub chassis_id: Option<String>,
    /// The system description the neighbour advertises (its NOS, often:
    /// "Cumulus Linux …", "Arista Networks EOS …", "SONiC Software …").
    pub chassis_descr: Option<String>,
    /// The port id value (an ifname, a MAC or a local name, as the neighbour
    /// chose its subtype).
    pub port_id: String,
    pub port_descr: Option<String>,
    /// The first management address the neighbour advertises.
    pub mgmt_ip: Option<String>,
}

/// Reads `lldpctl -f json` (`lldpcli -f json show neighbors`), and the `json0`
/// format too. lldpd's `json` writer collapses one-element lists and lifts
/// `name` into a key, so the shape depends on the data: one interface prints
/// as `"interface": {"eth0": {…}}`, several as a list of such objects; a named
/// chassis is `{"leaf1": {…}}`, an unnamed one is the object itself; one
/// management address is a string, several a list. `json0` keeps every list.
pub fn parse_lldpctl_json(text: &str) -> Result<Vec<LldpNeighbor>, ParseError> {
    let root: Value =
        serde_json::from_str(text).map_err(|e| ParseError(format!("lldpctl: not JSON: {e}")))?;
    let Some(lldp) = root.get("lldp") else {
        return Err(ParseError(
            "lldpctl: no \"lldp\" key at the top level".into(),
        ));
    };
    let Some(lldp) = single(lldp).as_object() else {
        return Ok(Vec::new());
    };
    let Some(ifaces) = lldp.get("interface") else {
        return Ok(Vec::new());
    };
    let items: Vec<&Value> = match ifaces {
        Value::Array(a) => a.iter().collect(),
        other => vec![other],
    };
    let mut out = Vec::new();
    for item in items {
        let Some(obj) = item.as_object() else {
            return Err(ParseError(
                "lldpctl: an interface entry is not an object".into(),
            ));
        };
        if let Some(name) = obj.get("name").and_then(text_of) {
            out.push(neighbor(&name, item)?);
        } else {
            for (name, body) in obj {
                out.push(neighbor(name, body)?);
            }
        }
    }
    Ok(out)
}

fn neighbor(interface: &str, body: &Value) -> Result<LldpNeighbor, ParseError> {
    let chassis = body.get("chassis").map(single);
    let (chassis_name, chassis_body) = match chassis.and_then(Value::as_object) {
        Some(ch) if ch.contains_key("name") => (ch.get("name").and_then(text_of), chassis),
        Some(ch) if ch.contains_key("id") => (None, chassis),
        Some(ch) if ch.len() == 1 => {
            let (k, v) = ch.iter().next().expect("one entry");
            (Some(k.clone()), Some(single(v)))
        }
        _ => (None, None),
    };
    let chassis_id = chassis_body
        .and_then(|c| c.get("id"))
        .map(single)
        .and_then(|id| id.get("value"))
        .and_then(text_of);
    let chassis_descr = chassis_body.and_then(|c| c.get("descr")).and_then(text_of);
    let mgmt_ip = chassis_body
        .and_then(|c| c.get("mgmt-ip"))
        .and_then(|m| match m {
            Value::Array(a) => a.first(),
            other => Some(other),
        })
        .and_then(text_of);
    let port = body.get("port").map(single);
    let port_id = port
        .and_then(|p| p.get("id"))
        .map(single)
        .and_then(|id| id.get("value"))
        .and_then(text_of)
        .ok_or_else(|| ParseError(format!("lldpctl: {interface}: neighbour without a port id")))?;
    let port_descr = port.and_then(|p| p.get("descr")).and_then(text_of);
    Ok(LldpNeighbor {
        interface: interface.to_string(),
        chassis_name,
        chassis_id,
        chassis_descr,
        port_id,
        port_descr,
        mgmt_ip,
    })
}

/// A one-element list stands for its element (json0 wraps everything).
fn single(v: &Value) -> &Value {
    match v {
        Value::Array(a) if a.len() == 1 => &a[0],
        other => other,
    }
}

/// A string, or json0's `[{"value": "…"}]` wrapping of one.
fn text_of(v: &Value) -> Option<String> {
    match single(v) {
        Value::String(s) => Some(s.clone()),
        Value::Object(o) => o.get("value").and_then(text_of),
        _ => None,
    }
}

// ---------------------------------------------------------------------------
// show_gids

/// One row of `show_gids`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct GidEntry {
    pub device: String,
    pub port: u8,
    pub index: u32,
    pub gid: String,
    /// The IPv4 address of an IPv4-mapped GID; link-local GIDs have none.
    pub ipv4: Option<String>,
    /// `v1` or `v2` (RoCE version).
    pub version: String,
    pub netdev: String,
}

impl GidEntry {
    pub fn is_roce_v2(&self) -> bool {
        self.version == "v2"
    }
}

/// Reads `show_gids`: a tab-separated table whose IPv4 column is empty for
/// link-local GIDs, ending with `n_gids_found=N`. Rows are split on whitespace
/// and read by field count (7 with an IPv4 address, 6 without).
pub fn parse_show_gids(text: &str) -> Result<Vec<GidEntry>, ParseError> {
    let mut header = false;
    let mut out = Vec::new();
    for raw in text.lines() {
        let f: Vec<&str> = raw.split_whitespace().collect();
        match f.first() {
            None => continue,
            Some(&"DEV") => {
                header = true;
                continue;
            }
            Some(first) if first.starts_with("---") || first.starts_with("n_gids_found") => {
                continue
            }
            _ => {}
        }
        let (ipv4, version, netdev) = match f.len() {
            7 => (Some(f[4]), f[5], f[6]),
            6 => (None, f[4], f[5]),
            _ => continue,
        };
        let (Ok(port), Ok(index)) = (f[1].parse::<u8>(), f[2].parse::<u32>()) else {
            continue;
        };
        if !version.starts_with('v') {
            continue;
        }
        out.push(GidEntry {
            device: f[0].to_string(),
            port,
            index,
            gid: f[3].to_string(),
            ipv4: ipv4.map(str::to_string),
            version: version.to_string(),
            netdev: netdev.to_string(),
        });
    }
    if out.is_empty() && !header {
        return Err(ParseError(format!(
            "show_gids: no DEV header and no GID row in {}",
            excerpt(text)
        )));
    }
    Ok(out)
}

// ---------------------------------------------------------------------------

fn bad(tool: &str, what: &str, line: &str) -> ParseError {
    ParseError(format!("{tool}: bad {what}: {:?}", line.trim()))
}

/// The first non-empty line, shortened, for error messages.
fn excerpt(text: &str) -> String {
    let first = text.lines().map(str::trim).find(|l| !l.is_empty());
    match first {
        None => "empty output".into(),
        Some(l) => {
            let short: String = l.chars().take(60).collect();
            if short.len() < l.len() {
                format!("{short:?}…")
            } else {
                format!("{short:?}")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn find<'a>(rs: &'a [Reading], vendor: &str) -> &'a Reading {
        rs.iter()
            .find(|r| r.vendor == vendor)
            .unwrap_or_else(|| panic!("{vendor} missing"))
    }

    #[test]
    fn sample_argv_reads_both_sysfs_dirs_in_one_grep() {
        let argv = sample_argv("eth2", "mlx5_2");
        assert_eq!(argv[0], ["ethtool", "-S", "eth2"]);
        assert_eq!(
            argv[1],
            [
                "grep",
                "-r",
                ".",
                "/sys/class/infiniband/mlx5_2/ports/1/counters",
                "/sys/class/infiniband/mlx5_2/ports/1/hw_counters"
            ]
        );
    }

    #[test]
    fn ethtool_stats_maps_per_priority_names() {
        let text = "NIC statistics:\n     rx_prio3_pause: 7\n     tx_prio12_pause_duration: 9\n     \
                    rx_prio3_pause_transition: 4\n     rx_prio999_bytes: 1\n     rx_prio_bytes: 2\n";
        let rs = parse_ethtool_stats(text).unwrap();
        assert_eq!(rs.len(), 2, "{rs:?}");
        let r = find(&rs, "rx_prio3_pause");
        assert_eq!(
            (r.canonical, r.priority, r.value),
            (Canonical::PfcPauseRx, Some(3), 7)
        );
        let r = find(&rs, "tx_prio12_pause_duration");
        assert_eq!(r.canonical, Canonical::PfcPauseDurationTxUs);
        assert_eq!(r.priority, Some(12));
    }

    #[test]
    fn ethtool_stats_without_header_is_an_error() {
        let e = parse_ethtool_stats("no stats available\n").unwrap_err();
        assert!(e.0.contains("NIC statistics"), "{e}");
        assert!(parse_ethtool_stats("").is_err());
        assert_eq!(parse_ethtool_stats("NIC statistics:\n").unwrap(), vec![]);
    }

    const SYSFS: &str = "\
/sys/class/infiniband/mlx5_0/ports/1/counters/port_xmit_data:100
/sys/class/infiniband/mlx5_0/ports/1/counters/port_rcv_data:4294967295
/sys/class/infiniband/mlx5_0/ports/1/counters/symbol_error:65535
/sys/class/infiniband/mlx5_0/ports/1/counters/link_downed:N/A (no PMA)
/sys/class/infiniband/mlx5_0/ports/1/counters/VL15_dropped:0
grep: /sys/class/infiniband/mlx5_0/ports/1/counters/port_xmit_wait: Invalid argument
/sys/class/infiniband/mlx5_0/ports/1/hw_counters/lifespan:10
/sys/class/infiniband/mlx5_0/ports/1/hw_counters/np_cnp_sent:42
/sys/class/infiniband/mlx5_0/ports/1/hw_counters/rx_write_requests:5
";

    #[test]
    fn sysfs_words_become_bytes_and_narrow_counters_carry_their_width() {
        let (dev, rs) = parse_sysfs_counters(SYSFS).unwrap();
        assert_eq!(dev, "mlx5_0");
        let tx = find(&rs, "port_xmit_data");
        assert_eq!(
            (tx.canonical, tx.value, tx.bits),
            (Canonical::TxBytes, 400, Some(34))
        );
        let rx = find(&rs, "port_rcv_data");
        assert_eq!((rx.value, rx.bits), ((1 << 34) - 1, Some(34)));
        let sym = find(&rs, "symbol_error");
        assert_eq!((sym.value, sym.bits), (65535, Some(16)));
        // N/A is not available, lifespan is not a counter, unknown names skipped.
        assert!(rs
            .iter()
            .all(|r| r.vendor != "link_downed" && r.vendor != "lifespan"));
        let cnp = find(&rs, "np_cnp_sent");
        assert_eq!(
            (cnp.canonical, cnp.value, cnp.bits),
            (Canonical::CnpSent, 42, None)
        );
        assert_eq!(rs.len(), 4, "{rs:?}");
    }

    #[test]
    fn sysfs_extended_set_is_64_bit() {
        let text = "\
/sys/class/infiniband/mlx5_1/ports/1/counters/port_rcv_data:81408901908
/sys/class/infiniband/mlx5_1/ports/1/counters/port_xmit_packets:12
/sys/class/infiniband/mlx5_1/ports/1/counters/link_downed:3
";
        let (_, rs) = parse_sysfs_counters(text).unwrap();
        let rx = find(&rs, "port_rcv_data");
        assert_eq!((rx.value, rx.bits), (81408901908 * 4, None));
        assert_eq!(find(&rs, "port_xmit_packets").bits, None);
        assert_eq!(find(&rs, "link_downed").bits, Some(8));
    }

    #[test]
    fn sysfs_rejects_two_devices_and_foreign_text() {
        let two = "/sys/class/infiniband/mlx5_0/ports/1/counters/link_downed:0\n\
                   /sys/class/infiniband/mlx5_1/ports/1/counters/link_downed:0\n";
        assert!(parse_sysfs_counters(two)
            .unwrap_err()
            .0
            .contains("two devices"));
        assert!(parse_sysfs_counters("state:4: ACTIVE\n").is_err());
        assert!(parse_sysfs_counters("").is_err());
    }

    #[test]
    fn mlnx_qos_long_dscp_lists_wrap_and_default_priority_is_not_a_mapping() {
        let text =
            "DCBX mode: Firmware controlled\nPriority trust state: dscp\ndscp2prio mapping:\n\
                    \tprio:3 dscp:31,30,29,28,27,26,25,24,\n\tprio:3 dscp:48,\n\
                    default priority:\n\tprio:0\nCable len: 7\n";
        let q = parse_mlnx_qos(text).unwrap();
        assert_eq!(q.dcbx_os, Some(false));
        assert_eq!(q.dscp2prio.len(), 9);
        assert_eq!(q.dscp2prio[&48], 3);
        assert_eq!(q.pfc, None);
    }

    #[test]
    fn mlnx_qos_rejects_a_short_pfc_row_and_foreign_text() {
        let text = "DCBX mode: OS controlled\nPFC configuration:\n\tpriority    0   1\n\tenabled     0   1\n";
        assert!(parse_mlnx_qos(text).is_err());
        assert!(parse_mlnx_qos("Interface name is required\n").is_err());
    }

    #[test]
    fn ethtool_info_blank_values_are_none() {
        let i = parse_ethtool_info("driver: veth\nversion: 1.0\nfirmware-version: \nbus-info: \n")
            .unwrap();
        assert_eq!(i.driver, "veth");
        assert_eq!((i.firmware, i.bus_info), (None, None));
        assert!(parse_ethtool_info("Cannot get driver information: No such device\n").is_err());
    }

    #[test]
    fn lldp_json0_and_unnamed_chassis() {
        let json0 = r#"{"lldp": [{"interface": [{"name": "eth0", "via": "LLDP",
            "chassis": [{"id": [{"type": "mac", "value": "00:11:22:33:44:55"}],
                         "name": [{"value": "leaf1"}],
                         "mgmt-ip": [{"value": "10.0.0.1"}, {"value": "fe80::1"}]}],
            "port": [{"id": [{"type": "ifname", "value": "Ethernet8"}],
                      "descr": [{"value": "gpu01 rail 0"}]}]}]}]}"#;
        let n = parse_lldpctl_json(json0).unwrap();
        assert_eq!(n.len(), 1);
        assert_eq!(n[0].interface, "eth0");
        assert_eq!(n[0].chassis_name.as_deref(), Some("leaf1"));
        assert_eq!(n[0].chassis_id.as_deref(), Some("00:11:22:33:44:55"));
        assert_eq!(n[0].mgmt_ip.as_deref(), Some("10.0.0.1"));
        assert_eq!(n[0].port_id, "Ethernet8");
        assert_eq!(n[0].port_descr.as_deref(), Some("gpu01 rail 0"));
        assert!(parse_lldpctl_json("[]").is_err());
        assert!(parse_lldpctl_json("{\"lldp\": {}}").unwrap().is_empty());
    }

    #[test]
    fn rdma_statistic_needs_a_link() {
        assert!(parse_rdma_statistic("rx_write_requests 0\n").is_err());
        assert!(parse_rdma_statistic("link\n").is_err());
        let v = parse_rdma_statistic(
            "link mlx5_1/1 np_cnp_sent 3 bogus link mlx5_2/1 rp_cnp_handled 4",
        )
        .unwrap();
        assert_eq!(v.len(), 2);
        assert_eq!(v[0].1[0].value, 3);
        assert_eq!(v[1].1[0].canonical, Canonical::CnpHandled);
    }
}
