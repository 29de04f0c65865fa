//! JSON as cJSON 1.7.15's `cJSON_Print` writes it, byte for byte: the
//! library iperf3 3.12 prints `-J` output with. Tabs for indentation, a tab
//! after every key's colon, array elements joined by `, ` on one line,
//! keys in insertion order (duplicates kept: iperf3 3.12 repeats
//! `sock_bufsize` once per stream), and numbers as `print_number` formats
//! them: `%d` when the value is an integer that fits an `int`, else `%1.15g`,
//! or `%1.17g` when 15 digits do not read back as the same double.
//!
//! It only writes; the emulator never parses what it prints.

/// A cJSON value.
#[derive(Debug, Clone, PartialEq)]
pub enum J {
    Obj(Vec<(&'static str, J)>),
    Arr(Vec<J>),
    Num(f64),
    Str(String),
    Bool(bool),
}

impl J {
    pub fn int(v: impl Into<i64>) -> J {
        J::Num(v.into() as f64)
    }

    pub fn str(s: impl Into<String>) -> J {
        J::Str(s.into())
    }
}

/// `cJSON_Print`: the formatted text, without a trailing newline (iperf3
/// adds one).
pub fn print(v: &J) -> String {
    let mut out = String::new();
    write(v, 0, &mut out);
    out
}

fn tabs(n: usize, out: &mut String) {
    for _ in 0..n {
        out.push('\t');
    }
}

fn write(v: &J, depth: usize, out: &mut String) {
    match v {
        J::Obj(members) => {
            out.push_str("{\n");
            for (i, (k, val)) in members.iter().enumerate() {
                tabs(depth + 1, out);
                string(k, out);
                out.push_str(":\t");
                write(val, depth + 1, out);
                if i + 1 < members.len() {
                    out.push(',');
                }
                out.push('\n');
            }
            tabs(depth, out);
            out.push('}');
        }
        J::Arr(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                write(item, depth + 1, out);
                if i + 1 < items.len() {
                    out.push_str(", ");
                }
            }
            out.push(']');
        }
        J::Num(d) => out.push_str(&number(*d)),
        J::Str(s) => string(s, out),
        J::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
    }
}

/// `print_string_ptr`: quotes, backslash escapes, `\u00XX` for other
/// control characters.
fn string(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// `print_number`. `valueint` saturates at the `int` range, so a large
/// integer (a byte count above 2³¹) goes through `%1.15g` and still prints
/// as digits below 10¹⁵.
pub fn number(d: f64) -> String {
    if !d.is_finite() {
        return "null".into();
    }
    let valueint = if d >= f64::from(i32::MAX) {
        i32::MAX
    } else if d <= f64::from(i32::MIN) {
        i32::MIN
    } else {
        d as i32
    };
    if d == f64::from(valueint) {
        return valueint.to_string();
    }
    let s = fmt_g(d, 15);
    let back: f64 = s.parse().unwrap_or(f64::NAN);
    // cJSON's compare_double: equal within the larger magnitude × epsilon.
    if (back - d).abs() <= back.abs().max(d.abs()) * f64::EPSILON {
        s
    } else {
        fmt_g(d, 17)
    }
}

/// C's `%1.<prec>g`: `prec` significant digits, fixed notation when the
/// exponent is in [-4, prec), trailing zeros removed.
pub fn fmt_g(d: f64, prec: usize) -> String {
    if d == 0.0 {
        return if d.is_sign_negative() { "-0" } else { "0" }.into();
    }
    let p = prec.max(1);
    // Round to p significant digits first: the exponent is the rounded one.
    let sci = format!("{:.*e}", p - 1, d);
    let (mant, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if exp < -4 || exp >= p as i32 {
        let mant = strip_zeros(mant);
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{mant}e{sign}{:02}", exp.abs())
    } else {
        let decimals = (p as i32 - 1 - exp).max(0) as usize;
        strip_zeros(&format!("{d:.decimals$}")).to_string()
    }
}

fn strip_zeros(s: &str) -> &str {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_print_as_cjson_does() {
        // Values from a real iperf3 3.12 -J run (see tests_iperf.rs).
        assert_eq!(number(0.0), "0");
        assert_eq!(number(5.0), "5");
        assert_eq!(number(0.500858), "0.500858");
        assert_eq!(number(f64::from(0.500_858_f32)), "0.50085800886154175");
        assert_eq!(number(10321247915.6524), "10321247915.6524");
        assert_eq!(number(2451046400.0), "2451046400");
        // Doubles that need all 17 digits to read back.
        for real in ["9802587778.1921558", "98.032560791829241"] {
            assert_eq!(number(real.parse().unwrap()), real);
        }
        assert_eq!(number(1e15), "1e+15");
        assert_eq!(number(-2.5), "-2.5");
        assert_eq!(fmt_g(0.0001234, 15), "0.0001234");
        assert_eq!(fmt_g(0.00001234, 15), "1.234e-05");
    }

    #[test]
    fn layout_matches_cjson_print() {
        let v = J::Obj(vec![
            (
                "start",
                J::Obj(vec![
                    ("connected", J::Arr(vec![])),
                    ("version", J::str("iperf 3.12")),
                ]),
            ),
            (
                "intervals",
                J::Arr(vec![
                    J::Obj(vec![("a", J::int(1))]),
                    J::Obj(vec![("b", J::Bool(false))]),
                ]),
            ),
            ("end", J::Obj(vec![])),
            ("error", J::str("x \"y\"\n")),
        ]);
        assert_eq!(
            print(&v),
            "{\n\t\"start\":\t{\n\t\t\"connected\":\t[],\n\t\t\"version\":\t\"iperf 3.12\"\n\t},\n\t\"intervals\":\t[{\n\t\t\t\"a\":\t1\n\t\t}, {\n\t\t\t\"b\":\tfalse\n\t\t}],\n\t\"end\":\t{\n\t},\n\t\"error\":\t\"x \\\"y\\\"\\n\"\n}"
        );
    }
}
