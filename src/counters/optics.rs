//! `ethtool -m DEV`: a transceiver's identity and its diagnostics (DOM) as
//! ethtool prints them for SFF-8472 (SFP), SFF-8636 (QSFP+/QSFP28) and CMIS
//! (QSFP-DD, OSFP) modules. The labels differ by standard and ethtool
//! version (`Laser output power` on an SFP, `Transmit avg optical power
//! (Channel 1)` on a QSFP, `Rcvr signal avg optical power(Channel 1)` with
//! no space), so lines are classified by what they measure, not matched
//! exactly. The output is what the optics audit compares: each lane against
//! the module's own alarm and warning thresholds, and lanes against their
//! siblings.

use serde::Serialize;

use super::{first_line, ParseError};

const TOOL: &str = "ethtool -m";

/// A module's own limits for one quantity.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Limits {
    pub high_alarm: Option<f64>,
    pub low_alarm: Option<f64>,
    pub high_warning: Option<f64>,
    pub low_warning: Option<f64>,
}

/// The thresholds the module stores (page 3 / upper page 02h). Powers in mW.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Thresholds {
    pub temperature_c: Limits,
    pub voltage_v: Limits,
    pub tx_bias_ma: Limits,
    pub tx_power_mw: Limits,
    pub rx_power_mw: Limits,
}

/// One lane (channel) as the module reports it. A single-lane SFP is lane 1.
/// `dBm` is `None` where ethtool prints `-inf` (no light).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Lane {
    pub lane: u8,
    pub tx_bias_ma: Option<f64>,
    pub tx_power_mw: Option<f64>,
    pub tx_power_dbm: Option<f64>,
    pub rx_power_mw: Option<f64>,
    pub rx_power_dbm: Option<f64>,
}

/// What `ethtool -m` printed about one module.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ModuleDiagnostics {
    /// `0x11 (QSFP28)`, `0x18 (QSFP-DD Double Density 8X Pluggable Transceiver)`.
    pub identifier: Option<String>,
    pub vendor: Option<String>,
    pub part_number: Option<String>,
    pub serial: Option<String>,
    pub temperature_c: Option<f64>,
    pub voltage_v: Option<f64>,
    pub lanes: Vec<Lane>,
    pub thresholds: Thresholds,
    /// Alarm and warning flags the module raises (`On`), by ethtool's label
    /// (`Laser rx power low alarm (Chan 2)`, `Module temperature high warning`).
    pub flags_on: Vec<String>,
    /// `Rx loss of signal` / `Tx loss of signal` as printed (`None`,
    /// `[ Yes, No, No, No ]`, `Yes`).
    pub rx_loss_of_signal: Option<String>,
    pub tx_loss_of_signal: Option<String>,
}

#[derive(Clone, Copy, PartialEq)]
enum Quantity {
    Temperature,
    Voltage,
    Bias,
    TxPower,
    RxPower,
}

fn quantity(label: &str) -> Option<Quantity> {
    let l = label.to_ascii_lowercase();
    if l.contains("temperature") {
        Some(Quantity::Temperature)
    } else if l.contains("voltage") {
        Some(Quantity::Voltage)
    } else if l.contains("bias") {
        Some(Quantity::Bias)
    } else if l.contains("rx power")
        || l.contains("rcvr signal")
        || l.contains("receiver signal")
        || l.contains("receiver power")
    {
        Some(Quantity::RxPower)
    } else if l.contains("output power") || l.contains("tx power") || l.contains("transmit avg") {
        Some(Quantity::TxPower)
    } else {
        None
    }
}

/// `(Channel 3)`, `(Chan 3)`, `Channel 3` → 3.
fn lane_of(label: &str) -> Option<u8> {
    let l = label.replace(['(', ')'], " ");
    let mut toks = l.split_whitespace();
    while let Some(t) = toks.next() {
        if t == "Channel" || t == "Chan" || t == "Lane" {
            return toks.next()?.parse().ok();
        }
    }
    None
}

/// A measurement: the first number of the value, and for powers the dBm
/// figure after the slash (`0.9240 mW / -0.34 dBm`).
fn measure(label: &str, v: &str) -> Result<(f64, Option<f64>), ParseError> {
    let bad = |why: &str| {
        ParseError(format!(
            "{TOOL}: {label}: `{v}` {why}; the output is damaged"
        ))
    };
    let first = v
        .split_whitespace()
        .next()
        .ok_or_else(|| bad("has no value"))?;
    let x: f64 = first.parse().map_err(|_| bad("is not a number"))?;
    if !x.is_finite() {
        return Err(bad("is not a finite number"));
    }
    let dbm = v
        .split_once('/')
        .map(|(_, r)| r.trim())
        .filter(|r| r.ends_with("dBm"))
        .and_then(|r| r.split_whitespace().next())
        .and_then(|d| d.parse::<f64>().ok())
        .filter(|d| d.is_finite());
    Ok((x, dbm))
}

/// Reads `ethtool -m DEV`. At least one of `Identifier` and a diagnostic
/// value must be present. A diagnostic that is not a number, a negative
/// power or a bias current, or a power above 100 mW, is an error: the
/// module or the text is broken, and reading it would judge a cable on noise.
pub fn parse_ethtool_m(text: &str) -> Result<ModuleDiagnostics, ParseError> {
    let mut m = ModuleDiagnostics::default();
    let mut seen = false;
    for line in text.lines() {
        let Some((label, v)) = line.split_once(':') else {
            continue;
        };
        let (label, v) = (label.trim(), v.trim());
        let set = |slot: &mut Option<String>| *slot = Some(v.to_string()).filter(|v| !v.is_empty());
        match label {
            "Identifier" => {
                set(&mut m.identifier);
                seen = true;
                continue;
            }
            "Vendor name" => {
                set(&mut m.vendor);
                continue;
            }
            "Vendor PN" => {
                set(&mut m.part_number);
                continue;
            }
            "Vendor SN" => {
                set(&mut m.serial);
                continue;
            }
            "Rx loss of signal" => {
                set(&mut m.rx_loss_of_signal);
                continue;
            }
            "Tx loss of signal" => {
                set(&mut m.tx_loss_of_signal);
                continue;
            }
            _ => {}
        }
        let Some(q) = quantity(label) else { continue };
        let lower = label.to_ascii_lowercase();
        // Flags: `... high alarm : On`, `... low warning (Chan 1) : Off`.
        if (lower.contains("alarm") || lower.contains("warning")) && !lower.ends_with("threshold") {
            if v == "On" {
                m.flags_on.push(label.to_string());
            }
            continue;
        }
        if lower.contains("implemented") || lower.contains("support") {
            continue;
        }
        let (x, dbm) = measure(label, v)?;
        if matches!(q, Quantity::TxPower | Quantity::RxPower) && !(0.0..=100.0).contains(&x) {
            return Err(ParseError(format!(
                "{TOOL}: {label}: {x} mW is not a possible optical power; the output is damaged"
            )));
        }
        if q == Quantity::Bias && x < 0.0 {
            return Err(ParseError(format!(
                "{TOOL}: {label}: {x} mA is not a possible bias current; the output is damaged"
            )));
        }
        seen = true;
        if lower.ends_with("threshold") {
            let limits = match q {
                Quantity::Temperature => &mut m.thresholds.temperature_c,
                Quantity::Voltage => &mut m.thresholds.voltage_v,
                Quantity::Bias => &mut m.thresholds.tx_bias_ma,
                Quantity::TxPower => &mut m.thresholds.tx_power_mw,
                Quantity::RxPower => &mut m.thresholds.rx_power_mw,
            };
            let slot = match (lower.contains("high"), lower.contains("alarm")) {
                (true, true) => &mut limits.high_alarm,
                (false, true) => &mut limits.low_alarm,
                (true, false) => &mut limits.high_warning,
                (false, false) => &mut limits.low_warning,
            };
            *slot = Some(x);
            continue;
        }
        match q {
            Quantity::Temperature => m.temperature_c = Some(x),
            Quantity::Voltage => m.voltage_v = Some(x),
            _ => {
                let n = lane_of(label).unwrap_or(1);
                let i = match m.lanes.iter().position(|l| l.lane == n) {
                    Some(i) => i,
                    None => {
                        m.lanes.push(Lane {
                            lane: n,
                            ..Default::default()
                        });
                        m.lanes.len() - 1
                    }
                };
                let lane = &mut m.lanes[i];
                match q {
                    Quantity::Bias => lane.tx_bias_ma = Some(x),
                    Quantity::TxPower => (lane.tx_power_mw, lane.tx_power_dbm) = (Some(x), dbm),
                    _ => (lane.rx_power_mw, lane.rx_power_dbm) = (Some(x), dbm),
                }
            }
        }
    }
    if !seen {
        return Err(ParseError(format!(
            "{TOOL}: no \"Identifier\" line and no diagnostic value in {}",
            first_line(text)
        )));
    }
    m.lanes.sort_by_key(|l| l.lane);
    Ok(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn qsfp_lanes_thresholds_and_flags() {
        let m = parse_ethtool_m(
            "\tIdentifier                                : 0x11 (QSFP28)\n\
             \tModule temperature                        : 32.43 degrees C / 90.37 degrees F\n\
             \tLaser tx bias current (Channel 2)         : 6.750 mA\n\
             \tRcvr signal avg optical power(Channel 2)  : 0.0000 mW / -inf dBm\n\
             \tLaser rx power low alarm   (Chan 2)       : On\n\
             \tLaser rx power low alarm threshold        : 0.0100 mW / -20.00 dBm\n",
        )
        .unwrap();
        assert_eq!(m.temperature_c, Some(32.43));
        assert_eq!(m.lanes[0].lane, 2);
        assert_eq!(m.lanes[0].rx_power_mw, Some(0.0));
        assert_eq!(m.lanes[0].rx_power_dbm, None);
        assert_eq!(m.thresholds.rx_power_mw.low_alarm, Some(0.01));
        assert_eq!(m.flags_on, vec!["Laser rx power low alarm   (Chan 2)"]);
    }

    #[test]
    fn damaged_values() {
        for bad in [
            "Laser output power : -1.0 mW / 0 dBm",
            "Laser bias current : x mA",
            "Module voltage : nan V",
        ] {
            assert!(parse_ethtool_m(bad).is_err(), "{bad}");
        }
        assert!(parse_ethtool_m("hello").is_err());
    }
}
