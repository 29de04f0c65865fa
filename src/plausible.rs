//! Physical limits on what a tool can have measured, shared by every parser
//! (perftest, nccl-tests, iperf3, the counter sources).
//!
//! A number a tool printed is either a measurement or proof that the output
//! is not one: a negative bandwidth, a `nan` latency, `1e308` Gb/s. This
//! module says which, and why, in words a parser puts in its error. It does
//! not judge whether a possible value is good: thresholds live in `score`.
//!
//! The limits, and why they are where they are:
//! - Every measured value (bandwidth, bus bandwidth, message rate, latency,
//!   time, bytes, iterations, counters) is finite and not negative.
//! - Bandwidth, when the link rate is known (the step's NIC speed), is at
//!   most [`LINK_MARGIN`] × the link rate × the directions that carry the
//!   traffic (perftest `-b` counts 2) × the ports (perftest dual-port counts
//!   2). The margin is wide on purpose: it must never fail a real run
//!   (rounding, a NIC a little faster than its inventory entry) and only
//!   catch numbers no link could carry.
//! - Bandwidth, when the link rate is not known (`rocegate parse`), is at
//!   most [`PORT_CEILING_GBPS`] per port and direction: four times the
//!   fastest Ethernet/InfiniBand NIC port shipping (800 Gb/s) and twice the
//!   1.6 Tb/s ports announced.
//! - nccl-tests' `algbw` and `busbw` are at most [`COLLECTIVE_CEILING_GBS`]
//!   GB/s whatever the step: a GPU's share can ride NVLink (900 GB/s per
//!   H100, 1,800 GB/s per B200) or, with one rank, its own HBM (8 TB/s on a
//!   B200), so the NIC speed bounds nothing here.
//! - A message rate is at most [`MESSAGE_RATE_CEILING_MPPS`]: NICs reach
//!   a few hundred million messages per second.
//! - A latency or a duration is at most [`TIME_CEILING_US`] (one hour): no
//!   step runs that long, so no single operation inside one can take longer.

use std::fmt;

/// Bandwidth ceiling per port and direction when the link rate is unknown, Gb/s.
pub const PORT_CEILING_GBPS: f64 = 3200.0;
/// How far above the link rate a bandwidth may read before it is impossible.
pub const LINK_MARGIN: f64 = 1.5;
/// nccl-tests `algbw`/`busbw` ceiling, GB/s.
pub const COLLECTIVE_CEILING_GBS: f64 = 10_000.0;
/// Message rate ceiling, millions of messages per second.
pub const MESSAGE_RATE_CEILING_MPPS: f64 = 10_000.0;
/// Latency and duration ceiling, µs (one hour).
pub const TIME_CEILING_US: f64 = 3.6e9;

/// A token read as a number.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Number {
    Finite(f64),
    /// `nan`, `inf`, `-nan`, `1e999`: written as a number, but none.
    NonFinite,
    /// Not written as a number at all (`N/A`, a word).
    NotANumber,
}

/// Reads a token the way a C `printf` would have written a double: digits
/// with an optional sign, point and exponent, or `nan`/`inf` in any case.
pub fn number(tok: &str) -> Number {
    let t = tok.trim();
    let body = t.strip_prefix(['-', '+']).unwrap_or(t);
    let starts_numeric = body
        .bytes()
        .next()
        .is_some_and(|b| b.is_ascii_digit() || b == b'.');
    let lower = body.to_ascii_lowercase();
    let word = matches!(lower.as_str(), "nan" | "inf" | "infinity")
        || (lower.starts_with("nan(") && lower.ends_with(')'));
    if !starts_numeric && !word {
        return Number::NotANumber;
    }
    if word {
        return Number::NonFinite;
    }
    match t.parse::<f64>() {
        Ok(v) if v.is_finite() => Number::Finite(v),
        Ok(_) => Number::NonFinite,
        Err(_) => Number::NotANumber,
    }
}

/// The most bandwidth a step's traffic can show, in Gb/s.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ceiling {
    /// The link rate in one direction; `None` when unknown.
    link_gbps: Option<f64>,
    directions: u32,
    ports: u32,
}

impl Ceiling {
    /// `link_gbps`: the rate of the slower end of the link, one direction
    /// (a zero, negative or non-finite rate counts as unknown);
    /// `directions`: 2 for a bidirectional test; `ports`: 2 for a
    /// dual-port one. Zero counts as one.
    pub fn new(link_gbps: Option<f64>, directions: u32, ports: u32) -> Ceiling {
        Ceiling {
            link_gbps: link_gbps.filter(|l| l.is_finite() && *l > 0.0),
            directions: directions.max(1),
            ports: ports.max(1),
        }
    }

    /// The ceiling in Gb/s.
    pub fn gbps(&self) -> f64 {
        let lanes = f64::from(self.directions) * f64::from(self.ports);
        match self.link_gbps {
            Some(l) => l * lanes * LINK_MARGIN,
            None => PORT_CEILING_GBPS * lanes,
        }
    }

    fn why(&self) -> String {
        let mut lanes = String::new();
        if self.directions > 1 {
            lanes.push_str(&format!(" × {} directions", self.directions));
        }
        if self.ports > 1 {
            lanes.push_str(&format!(" × {} ports", self.ports));
        }
        match self.link_gbps {
            Some(l) => format!("{LINK_MARGIN} × the {} Gb/s link{lanes}", fmt_num(l)),
            None => format!(
                "{} Gb/s per port and direction{lanes}, faster than any NIC (no link rate given)",
                fmt_num(PORT_CEILING_GBPS)
            ),
        }
    }
}

/// What a value is, with the limits it must keep.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Quantity {
    /// Decimal Gb/s, under a [`Ceiling`].
    Bandwidth(Ceiling),
    /// nccl-tests `algbw` or `busbw`, GB/s.
    CollectiveBandwidth,
    /// Millions of messages per second.
    MessageRate,
    /// Microseconds: a latency or an operation's time.
    TimeUs,
    /// Bytes, iterations, seconds since a start, a count: only finite and
    /// not negative.
    Amount,
}

impl Quantity {
    /// The largest possible value and why, or `None` when only the sign and
    /// finiteness are checked.
    fn max(&self) -> Option<(f64, &'static str, String)> {
        match self {
            Quantity::Bandwidth(c) => Some((c.gbps(), "Gb/s", c.why())),
            Quantity::CollectiveBandwidth => Some((
                COLLECTIVE_CEILING_GBS,
                "GB/s",
                "more than NVLink or HBM moves".to_string(),
            )),
            Quantity::MessageRate => Some((
                MESSAGE_RATE_CEILING_MPPS,
                "Mpps",
                "more messages than any NIC sends".to_string(),
            )),
            Quantity::TimeUs => Some((TIME_CEILING_US, "µs", "one hour".to_string())),
            Quantity::Amount => None,
        }
    }

    /// Why `value` is impossible, or `None` when it is possible.
    pub fn check(&self, value: f64) -> Option<String> {
        if !value.is_finite() {
            return Some("not a finite number".to_string());
        }
        if value < 0.0 {
            return Some("negative".to_string());
        }
        let (max, unit, why) = self.max()?;
        (value > max).then(|| format!("above {} {unit}: {why}", fmt_num(max)))
    }

    /// Reads a token as this quantity: `Ok(Some(v))` for a possible value,
    /// `Ok(None)` for a token that is not a number, `Err(reason)` for a
    /// number that cannot be this quantity.
    pub fn read(&self, tok: &str) -> Result<Option<f64>, String> {
        match number(tok) {
            Number::Finite(v) => match self.check(v) {
                None => Ok(Some(v)),
                Some(why) => Err(why),
            },
            Number::NonFinite => Err("not a finite number".to_string()),
            Number::NotANumber => Ok(None),
        }
    }
}

/// A value a parser rejected: where it was, as printed, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Impossible {
    /// Where: `row 65536 bytes`, `intervals[2].sum`.
    pub at: String,
    /// The value as printed, with its unit: `-5.00 Gb/sec`.
    pub printed: String,
    /// What it should have been: `bandwidth`, `latency`.
    pub what: String,
    pub reason: String,
}

impl Impossible {
    pub fn new(
        at: impl Into<String>,
        printed: impl Into<String>,
        what: impl Into<String>,
        reason: impl Into<String>,
    ) -> Impossible {
        Impossible {
            at: at.into(),
            printed: printed.into(),
            what: what.into(),
            reason: reason.into(),
        }
    }
}

impl fmt::Display for Impossible {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: {} is not a possible {} ({})",
            self.at, self.printed, self.what, self.reason
        )
    }
}

/// One message for every impossible value of a report: the first in full,
/// then how many more. `None` when there are none.
pub fn summary(found: &[Impossible]) -> Option<String> {
    let first = found.first()?;
    Some(match found.len() {
        1 => first.to_string(),
        n => format!("{first} (and {} more impossible values)", n - 1),
    })
}

/// Reads a counter value: a decimal integer from 0 to 2^64 − 1, as every
/// counter source prints with `%llu`. The error says why the token cannot be
/// one (`negative`, `fractional`, `above 2^64 − 1`, `not a number`).
pub fn counter(tok: &str) -> Result<u64, String> {
    let t = tok.trim();
    if !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) {
        return t
            .parse::<u64>()
            .map_err(|_| "above 2^64 − 1, wider than any counter".to_string());
    }
    match number(t) {
        Number::NonFinite => Err("not a finite number".to_string()),
        Number::Finite(v) if v < 0.0 || t.starts_with('-') => Err("negative".to_string()),
        Number::Finite(v) if v.fract() != 0.0 => Err("fractional".to_string()),
        Number::Finite(v) if v > u64::MAX as f64 => {
            Err("above 2^64 − 1, wider than any counter".to_string())
        }
        // `1e3`, `+5`, `7.0`: a number, but not as a counter is printed.
        Number::Finite(_) => Err("not an integer as counters are printed".to_string()),
        Number::NotANumber => Err("not a number".to_string()),
    }
}

/// Whether a token is written as a number (possible or not): a counter
/// source that prints text in place of a value (`N/A (no PMA)`) has no
/// value, while a number that cannot be a counter is an error.
pub fn looks_numeric(tok: &str) -> bool {
    number(tok) != Number::NotANumber
}

/// `3200`, `1.5`, `3.6e9`: short, without trailing zeros.
fn fmt_num(v: f64) -> String {
    if v.abs() >= 1e7 {
        format!("{v:e}")
    } else if v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        let s = format!("{v:.3}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_as_printf_writes_them() {
        assert_eq!(number("-5.00"), Number::Finite(-5.0));
        assert_eq!(number("1e308"), Number::Finite(1e308));
        for t in ["nan", "-nan", "NaN", "inf", "-inf", "Infinity", "1e999"] {
            assert_eq!(number(t), Number::NonFinite, "{t}");
        }
        for t in ["N/A", "", "-", "abc", "1.2.3", "0x10"] {
            assert_eq!(number(t), Number::NotANumber, "{t}");
        }
    }

    #[test]
    fn bandwidth_ceilings() {
        let known = Ceiling::new(Some(400.0), 1, 1);
        assert_eq!(known.gbps(), 600.0);
        assert_eq!(Ceiling::new(Some(400.0), 2, 1).gbps(), 1200.0);
        assert_eq!(Ceiling::new(None, 1, 1).gbps(), 3200.0);
        assert_eq!(Ceiling::new(Some(0.0), 2, 2).gbps(), 12800.0);
        let q = Quantity::Bandwidth(known);
        assert_eq!(q.check(599.0), None);
        assert_eq!(q.check(0.0), None);
        assert_eq!(q.check(-5.0).as_deref(), Some("negative"));
        assert_eq!(q.check(f64::NAN).as_deref(), Some("not a finite number"));
        assert_eq!(
            q.check(601.0).as_deref(),
            Some("above 600 Gb/s: 1.5 × the 400 Gb/s link")
        );
        let why = Quantity::Bandwidth(Ceiling::new(None, 2, 1))
            .check(1e308)
            .unwrap();
        assert_eq!(
            why,
            "above 6400 Gb/s: 3200 Gb/s per port and direction × 2 directions, faster than any NIC (no link rate given)"
        );
    }

    #[test]
    fn other_quantities() {
        assert!(Quantity::CollectiveBandwidth.check(9_999.0).is_none());
        assert!(Quantity::CollectiveBandwidth.check(10_001.0).is_some());
        assert!(Quantity::TimeUs.check(3.7e9).unwrap().contains("one hour"));
        assert!(Quantity::MessageRate.check(1e5).is_some());
        assert_eq!(Quantity::Amount.check(1e300), None);
        assert_eq!(Quantity::Amount.read("N/A"), Ok(None));
        assert_eq!(Quantity::Amount.read("7"), Ok(Some(7.0)));
        assert_eq!(
            Quantity::Amount.read("inf"),
            Err("not a finite number".into())
        );
    }

    #[test]
    fn message_names_the_place_the_value_and_the_reason() {
        let e = Impossible::new("row 65536 bytes", "-5.00 Gb/sec", "bandwidth", "negative");
        assert_eq!(
            e.to_string(),
            "row 65536 bytes: -5.00 Gb/sec is not a possible bandwidth (negative)"
        );
        let two = [e.clone(), e];
        assert!(summary(&two)
            .unwrap()
            .ends_with("(and 1 more impossible values)"));
        assert_eq!(summary(&[]), None);
    }

    #[test]
    fn counters_are_unsigned_integers() {
        assert_eq!(counter("0"), Ok(0));
        assert_eq!(counter(" 18446744073709551615 "), Ok(u64::MAX));
        assert_eq!(counter("-5"), Err("negative".into()));
        assert_eq!(counter("-0"), Err("negative".into()));
        assert_eq!(counter("1.5"), Err("fractional".into()));
        assert!(counter("18446744073709551616")
            .unwrap_err()
            .contains("2^64"));
        assert!(counter("1e30").unwrap_err().contains("2^64"));
        assert_eq!(counter("nan"), Err("not a finite number".into()));
        assert_eq!(counter("N/A (no PMA)"), Err("not a number".into()));
        assert!(looks_numeric("-5") && looks_numeric("inf") && !looks_numeric("N/A"));
    }
}
