//! The transceivers at both ends of every emulated cable and what
//! `ethtool -m` prints about them. Every port carries the same module, a
//! 400G-SR4 OSFP (4 lit lanes of 8, 850 nm VCSELs over MPO), read through
//! ethtool's CMIS code (`cmis.c`, `sff-common.c`): the lines, labels and
//! `%-41s` padding it prints, and its register units, so a value prints
//! exactly as the 16-bit register the module would hold (0.1 µW, 2 µA,
//! 1/256 °C, 100 µV).
//!
//! Light levels are computed, not canned: each end's laser has its own
//! seeded output per lane (about +1.5 dBm), and a lane's received power is
//! the far end's output on that lane less a seeded link loss (0.3–0.7 dB),
//! so received power sits around +1 dBm ± 0.5. Seeds are the ends' names
//! (`gpu003:mlx5_2`, `r0-leaf1:swp3`), so a module reads the same in every
//! run. A port that is administratively down has its laser off; a lane
//! receives light only while the far laser is on and the fibre carries it
//! (the link is up, or this end is the one that is down). A `weak_lane`
//! defect overrides one lane's received power at one end (a dirty
//! connector).
//!
//! Not modelled: module temperature following load, laser ageing, Tx
//! loss-of-signal and faults (always `None`).

use std::fmt::Write as _;

use super::host_out::fnv;

/// Lanes the module has (CMIS bank 0) and lanes a 400G-SR4 lights.
const LANES: usize = 8;
const LIT: usize = 4;

/// What decides one module's readings.
#[derive(Debug, Clone, PartialEq)]
pub struct Light {
    /// This end's name, the seed of its module (`node:device`, `switch:port`).
    pub end: String,
    /// The far end's name: its laser is what this end receives.
    pub peer: String,
    /// This end's laser is on (the port is administratively up).
    pub tx_on: bool,
    /// Light arrives from the far end.
    pub rx_lit: bool,
    /// Lanes (1-based) whose received power is this many dBm instead.
    pub weak: Vec<(u8, f64)>,
}

/// A uniform number in [0, 1) from names. FNV-1a alone barely moves its
/// high bits when only the last byte differs (lane 1 vs lane 2), so its
/// hash goes through splitmix64's finaliser first.
fn unit(parts: &[&str]) -> f64 {
    let mut z = fnv(parts);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^= z >> 31;
    (z >> 11) as f64 / (1u64 << 53) as f64
}

/// mW as the module's 16-bit register in 0.1 µW (saturating).
fn mw_reg(mw: f64) -> u16 {
    (mw * 10_000.0).round().clamp(0.0, f64::from(u16::MAX)) as u16
}

fn dbm_reg(dbm: f64) -> u16 {
    mw_reg(10f64.powf(dbm / 10.0))
}

/// A laser's launch power on one lane, dBm.
fn tx_dbm(end: &str, lane: usize) -> f64 {
    1.2 + 0.6 * unit(&[end, "tx", &lane.to_string()])
}

/// Loss of one fibre lane between two ends, dB; the same both ways.
fn loss_db(a: &str, b: &str, lane: usize) -> f64 {
    let (x, y) = if a <= b { (a, b) } else { (b, a) };
    0.3 + 0.4 * unit(&[x, y, "loss", &lane.to_string()])
}

/// Alarm and warning thresholds the module stores (page 02h), as registers:
/// (high alarm, low alarm, high warning, low warning).
struct Limits {
    temp: [i16; 4],
    vcc: [u16; 4],
    bias: [u16; 4],
    tx: [u16; 4],
    rx: [u16; 4],
}

fn limits() -> Limits {
    let t = |c: f64| (c * 256.0).round() as i16;
    let v = |volts: f64| (volts * 10_000.0).round() as u16;
    let b = |ma: f64| (ma * 500.0).round() as u16;
    Limits {
        temp: [t(75.0), t(-5.0), t(70.0), t(0.0)],
        vcc: [v(3.63), v(2.97), v(3.465), v(3.135)],
        bias: [b(13.0), b(2.0), b(12.0), b(3.0)],
        tx: [dbm_reg(5.0), dbm_reg(-7.6), dbm_reg(4.0), dbm_reg(-6.6)],
        rx: [dbm_reg(5.0), dbm_reg(-10.4), dbm_reg(4.0), dbm_reg(-8.4)],
    }
}

/// Register readings of one module.
struct Readings {
    temp: i16,
    vcc: u16,
    bias: [u16; LANES],
    tx: [u16; LANES],
    rx: [u16; LANES],
}

fn readings(l: &Light) -> Readings {
    let end = l.end.as_str();
    let temp = 40.0 + 15.0 * unit(&[end, "temp"]);
    let vcc = 3.28 + 0.04 * unit(&[end, "vcc"]);
    let mut r = Readings {
        temp: (temp * 256.0).round() as i16,
        vcc: (vcc * 10_000.0).round() as u16,
        bias: [0; LANES],
        tx: [0; LANES],
        rx: [0; LANES],
    };
    for lane in 0..LIT {
        if l.tx_on {
            let ma = 6.5 + 1.5 * unit(&[end, "bias", &lane.to_string()]);
            r.bias[lane] = (ma * 500.0).round() as u16;
            r.tx[lane] = dbm_reg(tx_dbm(end, lane));
        }
        if l.rx_lit {
            let dbm = match l.weak.iter().find(|(w, _)| usize::from(*w) == lane + 1) {
                Some((_, dbm)) => *dbm,
                None => tx_dbm(&l.peer, lane) - loss_db(end, &l.peer, lane),
            };
            r.rx[lane] = dbm_reg(dbm);
        }
    }
    r
}

fn line(out: &mut String, label: &str, value: &str) {
    let _ = writeln!(out, "\t{label:<41} : {value}");
}

/// `PRINT_xX_PWR`.
fn power(reg: u16) -> String {
    let mw = f64::from(reg) / 10_000.0;
    format!("{mw:.4} mW / {:.2} dBm", 10.0 * mw.log10())
}

/// `PRINT_TEMP`.
fn temp(reg: i16) -> String {
    let c = f64::from(reg) / 256.0;
    format!("{c:.2} degrees C / {:.2} degrees F", c * 1.8 + 32.0)
}

/// `PRINT_VCC`.
fn vcc(reg: u16) -> String {
    format!("{:.4} V", f64::from(reg) / 10_000.0)
}

/// `PRINT_BIAS`.
fn bias(reg: u16) -> String {
    format!("{:.3} mA", f64::from(reg) / 500.0)
}

fn on(b: bool) -> &'static str {
    if b {
        "On"
    } else {
        "Off"
    }
}

/// `sff_show_lane_status`: `None` when no lane is flagged, else every lane.
fn lane_status(flags: &[bool; LANES]) -> String {
    if !flags.iter().any(|&f| f) {
        return "None".into();
    }
    let v: Vec<&str> = flags
        .iter()
        .map(|&f| if f { "Yes" } else { "No" })
        .collect();
    format!("[ {} ]", v.join(", "))
}

/// The module's serial number, date code: stable per end.
fn serial(end: &str) -> (String, String) {
    let h = fnv(&[end, "module"]);
    let sn = format!("MT{:010}", h % 10_000_000_000);
    let date = format!(
        "{:02}{:02}{:02}",
        23 + (h >> 40) % 2,
        1 + (h >> 44) % 12,
        1 + (h >> 50) % 28
    );
    (sn, date)
}

/// `ethtool -m DEV` for the module at one end.
pub fn ethtool_m(l: &Light) -> String {
    let r = readings(l);
    let lim = limits();
    let mut out = String::new();
    let (sn, date) = serial(&l.end);
    for (label, value) in [
        ("Identifier", "0x19 (OSFP 8X Pluggable Transceiver)"),
        ("Power class", "5"),
        ("Max power", "9.00W"),
        ("Connector", "0x0c (MPO Parallel Optic)"),
        ("Cable assembly length", "0.00m"),
        ("Tx CDR bypass control", "No"),
        ("Rx CDR bypass control", "No"),
        ("Tx CDR", "Yes"),
        ("Rx CDR", "Yes"),
        ("Transmitter technology", "0x00 (850 nm VCSEL)"),
        ("Laser wavelength", "850.000nm"),
        ("Laser wavelength tolerance", "10.000nm"),
        ("Length (SMF)", "0.00km"),
        ("Length (OM5)", "50m"),
        ("Length (OM4)", "50m"),
        ("Length (OM3 50/125um)", "30m"),
        ("Length (OM2 50/125um)", "0m"),
        ("Vendor name", "NVIDIA"),
        ("Vendor OUI", "48:b0:2d"),
        ("Vendor PN", "MMA4Z00-NS400"),
        ("Vendor rev", "A3"),
        ("Vendor SN", &sn),
        ("Date code", &date),
        ("Revision compliance", "Rev. 5.0"),
    ] {
        line(&mut out, label, value);
    }
    // A lit lane without light has lost signal, and its CDR its lock.
    let mut los = [false; LANES];
    for (lane, flag) in los.iter_mut().enumerate().take(LIT) {
        *flag = r.rx[lane] == 0;
    }
    let none = [false; LANES];
    line(&mut out, "Rx loss of signal", &lane_status(&los));
    line(&mut out, "Tx loss of signal", &lane_status(&none));
    line(&mut out, "Rx loss of lock", &lane_status(&los));
    line(&mut out, "Tx loss of lock", &lane_status(&none));
    line(&mut out, "Tx fault", &lane_status(&none));
    line(&mut out, "Module State", "0x03 (ModuleReady)");
    line(&mut out, "LowPwrAllowRequestHW", "Off");
    line(&mut out, "LowPwrRequestSW", "Off");

    line(&mut out, "Module temperature", &temp(r.temp));
    line(&mut out, "Module voltage", &vcc(r.vcc));
    for (i, b) in r.bias.iter().enumerate() {
        let label = format!("Laser tx bias current (Channel {})", i + 1);
        line(&mut out, &label, &bias(*b));
    }
    for (i, p) in r.tx.iter().enumerate() {
        let label = format!("Transmit avg optical power (Channel {})", i + 1);
        line(&mut out, &label, &power(*p));
    }
    for (i, p) in r.rx.iter().enumerate() {
        let label = format!("Rcvr signal avg optical power (Channel {})", i + 1);
        line(&mut out, &label, &power(*p));
    }

    // Flags: (high alarm, low alarm, high warning, low warning) against the
    // module's own thresholds. The four dark lanes and a disabled laser
    // raise nothing (their monitors are not in use).
    fn flags<T: PartialOrd + Copy>(v: T, l: [T; 4]) -> [bool; 4] {
        [v > l[0], v < l[1], v > l[2], v < l[3]]
    }
    let kinds = ["high alarm", "low alarm", "high warning", "low warning"];
    for (name, f) in [
        ("Module temperature", flags(r.temp, lim.temp)),
        ("Module voltage", flags(r.vcc, lim.vcc)),
    ] {
        for (k, set) in kinds.iter().zip(f) {
            line(&mut out, &format!("{name} {k}"), on(set));
        }
    }
    let pad = ["  ", "   ", "", " "];
    for lane in 0..LANES {
        let lit = lane < LIT;
        let tx_lit = lit && l.tx_on;
        let groups = [
            (
                "Laser bias current",
                "Chan",
                flags(r.bias[lane], lim.bias),
                tx_lit,
            ),
            (
                "Laser tx power",
                "Channel",
                flags(r.tx[lane], lim.tx),
                tx_lit,
            ),
            ("Laser rx power", "Channel", flags(r.rx[lane], lim.rx), lit),
        ];
        for (name, chan, f, live) in groups {
            for ((k, set), p) in kinds.iter().zip(f).zip(pad) {
                // `%-41s` of "… high alarm   (Chan 1)": ethtool aligns the
                // parentheses by padding the shorter kinds.
                let label = format!("{name} {k}{p} ({chan} {})", lane + 1);
                line(&mut out, &label, on(live && set));
            }
        }
    }

    let thresholds: [(&str, [String; 4]); 5] = [
        ("Laser bias current", lim.bias.map(bias)),
        ("Laser output power", lim.tx.map(power)),
        ("Module temperature", lim.temp.map(temp)),
        ("Module voltage", lim.vcc.map(vcc)),
        ("Laser rx power", lim.rx.map(power)),
    ];
    for (name, values) in thresholds {
        for (k, v) in kinds.iter().zip(values) {
            line(&mut out, &format!("{name} {k} threshold"), &v);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::counters::optics::parse_ethtool_m;

    fn light() -> Light {
        Light {
            end: "gpu003:mlx5_2".into(),
            peer: "r0-leaf1:swp3".into(),
            tx_on: true,
            rx_lit: true,
            weak: Vec::new(),
        }
    }

    #[test]
    fn healthy_module_round_trips_inside_its_thresholds() {
        let text = ethtool_m(&light());
        let m = parse_ethtool_m(&text).unwrap();
        assert_eq!(
            m.identifier.as_deref(),
            Some("0x19 (OSFP 8X Pluggable Transceiver)")
        );
        assert_eq!(m.vendor.as_deref(), Some("NVIDIA"));
        assert_eq!(m.part_number.as_deref(), Some("MMA4Z00-NS400"));
        assert_eq!(m.lanes.len(), 8);
        assert!(m.flags_on.is_empty(), "{:?}", m.flags_on);
        assert_eq!(m.rx_loss_of_signal.as_deref(), Some("None"));
        let t = m.temperature_c.unwrap();
        assert!((40.0..=55.0).contains(&t), "{t}");
        let th = m.thresholds;
        assert_eq!(th.temperature_c.high_alarm, Some(75.0));
        assert_eq!(th.voltage_v.low_warning, Some(3.135));
        assert_eq!(th.tx_bias_ma.high_warning, Some(12.0));
        assert_eq!(th.rx_power_mw.low_alarm, Some(0.0912));
        for lane in &m.lanes[..4] {
            let rx = lane.rx_power_dbm.unwrap();
            assert!((0.5..=1.5).contains(&rx), "lane {}: {rx} dBm", lane.lane);
            let mw = lane.rx_power_mw.unwrap();
            assert!(
                (10f64.powf(rx / 10.0) - mw).abs() < 0.002,
                "{mw} mW vs {rx} dBm"
            );
            assert!(mw > th.rx_power_mw.low_warning.unwrap());
            assert!(mw < th.rx_power_mw.high_warning.unwrap());
            let bias = lane.tx_bias_ma.unwrap();
            assert!((6.5..=8.0).contains(&bias), "{bias}");
        }
        // The four lanes a 400G-SR4 leaves dark print as ethtool prints them.
        for lane in &m.lanes[4..] {
            assert_eq!((lane.rx_power_mw, lane.rx_power_dbm), (Some(0.0), None));
            assert_eq!(lane.tx_bias_ma, Some(0.0));
        }
        assert!(
            text.contains("\tRcvr signal avg optical power (Channel 8) : 0.0000 mW / -inf dBm\n")
        );
        assert!(text.contains("\tLaser bias current high alarm   (Chan 1)  : Off\n"));
        assert!(text.contains("\tLaser rx power low warning  (Channel 4)   : Off\n"));
        // Lanes differ from each other, within the spread.
        let rx: Vec<f64> = m.lanes[..4]
            .iter()
            .map(|l| l.rx_power_mw.unwrap())
            .collect();
        assert!(rx.windows(2).any(|w| (w[0] - w[1]).abs() > 0.01), "{rx:?}");
        // Same names, same module; another end, another module.
        assert_eq!(text, ethtool_m(&light()));
        let other = Light {
            end: "gpu003:mlx5_3".into(),
            ..light()
        };
        assert_ne!(parse_ethtool_m(&ethtool_m(&other)).unwrap().lanes, m.lanes);
    }

    #[test]
    fn both_ends_of_a_fibre_see_each_others_laser() {
        let a = light();
        let b = Light {
            end: a.peer.clone(),
            peer: a.end.clone(),
            ..light()
        };
        let ma = parse_ethtool_m(&ethtool_m(&a)).unwrap();
        let mb = parse_ethtool_m(&ethtool_m(&b)).unwrap();
        for lane in 0..4 {
            let sent = mb.lanes[lane].tx_power_dbm.unwrap();
            let got = ma.lanes[lane].rx_power_dbm.unwrap();
            let loss = sent - got;
            assert!((0.28..=0.72).contains(&loss), "lane {lane}: {loss} dB");
        }
    }

    #[test]
    fn a_dark_fibre_reads_minus_inf_and_raises_loss_of_signal() {
        let dark = Light {
            rx_lit: false,
            ..light()
        };
        let m = parse_ethtool_m(&ethtool_m(&dark)).unwrap();
        for lane in &m.lanes {
            assert_eq!((lane.rx_power_mw, lane.rx_power_dbm), (Some(0.0), None));
        }
        // Own laser still on.
        assert!(m.lanes[0].tx_power_mw.unwrap() > 1.0);
        assert_eq!(
            m.rx_loss_of_signal.as_deref(),
            Some("[ Yes, Yes, Yes, Yes, No, No, No, No ]")
        );
        assert!(m
            .flags_on
            .contains(&"Laser rx power low alarm    (Channel 1)".to_string()));
        assert_eq!(m.flags_on.len(), 8, "{:?}", m.flags_on);

        // An administratively down port: laser off, no Tx alarm for it.
        let off = Light {
            tx_on: false,
            ..light()
        };
        let m = parse_ethtool_m(&ethtool_m(&off)).unwrap();
        assert_eq!(m.lanes[0].tx_power_mw, Some(0.0));
        assert!(m.flags_on.is_empty(), "{:?}", m.flags_on);
    }

    #[test]
    fn a_weak_lane_reads_its_level_and_warns() {
        let weak = Light {
            weak: vec![(2, -9.5)],
            ..light()
        };
        let m = parse_ethtool_m(&ethtool_m(&weak)).unwrap();
        assert_eq!(m.lanes[1].rx_power_dbm, Some(-9.5));
        assert_eq!(m.lanes[1].rx_power_mw, Some(0.1122));
        assert_eq!(
            m.flags_on,
            ["Laser rx power low warning  (Channel 2)".to_string()]
        );
        let healthy = parse_ethtool_m(&ethtool_m(&light())).unwrap();
        for lane in [0, 2, 3] {
            assert_eq!(m.lanes[lane], healthy.lanes[lane]);
        }
    }
}
