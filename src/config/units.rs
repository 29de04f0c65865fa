//! Durations (`10s`, `4h`, `1m30s`, `500ms`) and byte sizes (`64K`, `8G`,
//! `65536`) as they are written in inventories and suites.
//!
//! Sizes use binary multiples, as nccl-tests' `-b`/`-e` and perftest's `-s` do.

use serde::{de, Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use std::time::Duration;

/// A strictly positive duration written with a unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Span(pub Duration);

impl Span {
    pub fn secs_f64(self) -> f64 {
        self.0.as_secs_f64()
    }
    pub fn from_secs(s: u64) -> Self {
        Span(Duration::from_secs(s))
    }
}

pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let t = s.trim();
    if t.is_empty() {
        return Err("empty duration (write e.g. 10s, 500ms, 2m, 4h)".into());
    }
    if t.starts_with('-') {
        return Err(format!("\"{t}\" is negative; durations must be positive"));
    }
    let mut total = 0f64;
    let mut rest = t;
    while !rest.is_empty() {
        let num_len = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        if num_len == 0 {
            return Err(format!(
                "\"{t}\" is not a duration (write e.g. 10s, 500ms, 2m, 4h)"
            ));
        }
        let value: f64 = rest[..num_len]
            .parse()
            .map_err(|_| format!("\"{t}\" is not a duration (write e.g. 10s, 500ms, 2m, 4h)"))?;
        rest = &rest[num_len..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let unit = rest[..unit_len].trim();
        rest = &rest[unit_len..];
        let factor = match unit {
            "us" | "µs" => 1e-6,
            "ms" => 0.001,
            "s" => 1.0,
            "m" | "min" => 60.0,
            "h" => 3600.0,
            "d" => 86400.0,
            "" => {
                return Err(format!(
                    "\"{t}\" has no unit (write {value}s, {value}m or {value}h)"
                ))
            }
            other => {
                return Err(format!(
                    "unknown unit \"{other}\" in \"{t}\" (use us, ms, s, m, h or d)"
                ))
            }
        };
        total += value * factor;
    }
    if !total.is_finite() || total <= 0.0 {
        return Err(format!("\"{t}\" is zero; durations must be positive"));
    }
    if total > 365.0 * 86400.0 {
        return Err(format!("\"{t}\" is longer than a year"));
    }
    Ok(Duration::from_secs_f64(total))
}

pub fn format_duration(d: Duration) -> String {
    let ms = d.as_millis();
    if ms == 0 {
        return "0s".into();
    }
    if ms % 1000 != 0 && ms < 60_000 {
        return if ms < 1000 {
            format!("{ms}ms")
        } else {
            format!("{:.1}s", d.as_secs_f64())
        };
    }
    let s = d.as_secs();
    let (h, m, s) = (s / 3600, (s % 3600) / 60, s % 60);
    let mut out = String::new();
    if h > 0 {
        out += &format!("{h}h");
    }
    if m > 0 {
        out += &format!("{m}m");
    }
    if s > 0 || out.is_empty() {
        out += &format!("{s}s");
    }
    out
}

impl fmt::Display for Span {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&format_duration(self.0))
    }
}

impl<'de> Deserialize<'de> for Span {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl de::Visitor<'_> for V {
            type Value = Span;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a duration with a unit, such as 10s, 500ms, 2m or 4h")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Span, E> {
                parse_duration(v).map(Span).map_err(E::custom)
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Span, E> {
                Err(E::custom(format!(
                    "{v} has no unit (write {v}s, {v}m or {v}h)"
                )))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Span, E> {
                self.visit_i64(v as i64)
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Span, E> {
                Err(E::custom(format!("{v} has no unit (write {v}s)")))
            }
        }
        d.deserialize_any(V)
    }
}

impl Serialize for Span {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&format_duration(self.0))
    }
}

/// A byte count, written as an integer or with a binary suffix (K, M, G).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Bytes(pub u64);

pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    if num.is_empty() {
        return Err(format!(
            "\"{t}\" is not a size (write e.g. 65536, 64K, 1M, 8G)"
        ));
    }
    let n: u64 = num.parse().map_err(|_| format!("\"{t}\" is too large"))?;
    let mult: u64 = match unit.trim() {
        "" | "B" => 1,
        "K" | "KB" | "KiB" | "k" => 1 << 10,
        "M" | "MB" | "MiB" => 1 << 20,
        "G" | "GB" | "GiB" => 1 << 30,
        other => {
            return Err(format!(
                "unknown size unit \"{other}\" in \"{t}\" (use K, M or G)"
            ))
        }
    };
    n.checked_mul(mult)
        .ok_or_else(|| format!("\"{t}\" is too large"))
}

/// Formats a byte count the way nccl-tests' `-b`/`-e` accept it.
pub fn format_size(b: u64) -> String {
    for (suffix, mult) in [("G", 1u64 << 30), ("M", 1 << 20), ("K", 1 << 10)] {
        if b >= mult && b % mult == 0 {
            return format!("{}{suffix}", b / mult);
        }
    }
    b.to_string()
}

impl<'de> Deserialize<'de> for Bytes {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl de::Visitor<'_> for V {
            type Value = Bytes;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a size in bytes such as 65536, 64K, 1M or 8G")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Bytes, E> {
                parse_size(v).map(Bytes).map_err(E::custom)
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Bytes, E> {
                Ok(Bytes(v))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Bytes, E> {
                u64::try_from(v)
                    .map(Bytes)
                    .map_err(|_| E::custom(format!("{v} is negative; sizes must be positive")))
            }
        }
        d.deserialize_any(V)
    }
}

impl Serialize for Bytes {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&format_size(self.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("10s").unwrap(), Duration::from_secs(10));
        assert_eq!(parse_duration("1m30s").unwrap(), Duration::from_secs(90));
        assert_eq!(parse_duration("500ms").unwrap(), Duration::from_millis(500));
        assert_eq!(parse_duration("4h").unwrap(), Duration::from_secs(4 * 3600));
        assert!(parse_duration("-5s").unwrap_err().contains("negative"));
        assert!(parse_duration("0s").unwrap_err().contains("zero"));
        assert!(parse_duration("10").unwrap_err().contains("no unit"));
        assert!(parse_duration("10x").unwrap_err().contains("unknown unit"));
        assert_eq!(format_duration(Duration::from_secs(5430)), "1h30m30s");
        assert_eq!(format_duration(Duration::from_millis(1500)), "1.5s");
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("64K").unwrap(), 65536);
        assert_eq!(parse_size("8G").unwrap(), 8 << 30);
        assert_eq!(parse_size("65536").unwrap(), 65536);
        assert!(parse_size("8T").is_err());
        assert_eq!(format_size(8 << 30), "8G");
        assert_eq!(format_size(1000), "1000");
    }
}
