//! Text helpers shared by the workload parsers: launcher prefixes, ANSI escapes,
//! timestamps and number parsing.
//!
//! Tools are rarely run bare. `mpirun --tag-output` prefixes every line with
//! `[1,0]<stdout>:`, `srun -l` with a task label (`0: `, `12: `), log shippers
//! with a timestamp, and some wrappers colour their output. These helpers remove
//! that wrapping so a parser sees the line the tool printed. They know nothing
//! about any particular tool.

use std::borrow::Cow;

/// Why a parser rejected its input. `Display` is one line, lowercase, with the
/// tool's name and the reason.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    /// The text is neither the tool's result table nor a failure it prints.
    #[error("not {tool} output: {reason}")]
    NotRecognised { tool: &'static str, reason: String },
    /// The text claims to be the tool's output but cannot be read (bad JSON, …).
    #[error("malformed {tool} output: {reason}")]
    Malformed { tool: &'static str, reason: String },
}

impl ParseError {
    pub fn not_recognised(tool: &'static str, reason: impl Into<String>) -> Self {
        ParseError::NotRecognised {
            tool,
            reason: reason.into(),
        }
    }

    pub fn malformed(tool: &'static str, reason: impl Into<String>) -> Self {
        ParseError::Malformed {
            tool,
            reason: reason.into(),
        }
    }
}

/// One input line with its wrapping removed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CleanLine {
    /// The text the tool printed, without launcher prefix, ANSI escapes or `\r`.
    pub text: String,
    /// The MPI rank (`[1,RANK]<stdout>:`) or Slurm task label the line carried.
    pub rank: Option<u32>,
    /// Whether the launcher said the line came from stderr (`<stderr>:`).
    pub stderr: bool,
}

/// Splits `text` into lines and removes the wrapping from each (see [`clean_line`]).
pub fn clean_lines(text: &str) -> Vec<CleanLine> {
    text.lines().map(clean_line).collect()
}

/// Removes ANSI escapes, a trailing `\r`, a leading timestamp, an OpenMPI
/// `--tag-output` prefix and a Slurm `srun -l` label, in that order.
pub fn clean_line(raw: &str) -> CleanLine {
    let no_ansi = strip_ansi(raw);
    let mut s: &str = no_ansi.trim_end_matches(['\r', '\n']);
    s = strip_timestamp(s);
    let mut rank = None;
    let mut stderr = false;
    if let Some((r, is_err, rest)) = strip_mpi_tag(s) {
        rank = Some(r);
        stderr = is_err;
        s = rest;
    } else if let Some((r, rest)) = strip_srun_label(s) {
        rank = Some(r);
        s = rest;
    }
    CleanLine {
        text: s.to_string(),
        rank,
        stderr,
    }
}

/// Removes ANSI CSI sequences (`ESC [ ... final`) and lone ESC characters.
pub fn strip_ansi(s: &str) -> Cow<'_, str> {
    if !s.contains('\u{1b}') {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\u{1b}' {
            out.push(c);
            continue;
        }
        match chars.peek() {
            Some('[') => {
                chars.next();
                // Parameter and intermediate bytes, then one final byte in @..~.
                for c2 in chars.by_ref() {
                    if ('@'..='~').contains(&c2) {
                        break;
                    }
                }
            }
            // OSC (`ESC ] … BEL` or `ESC ] … ESC \`), e.g. terminal titles.
            Some(']') => {
                chars.next();
                while let Some(c2) = chars.next() {
                    if c2 == '\u{7}' {
                        break;
                    }
                    if c2 == '\u{1b}' {
                        chars.next();
                        break;
                    }
                }
            }
            _ => {}
        }
    }
    Cow::Owned(out)
}

/// Strips `[1,0]<stdout>:` / `[1,12]<stderr>:` (OpenMPI `--tag-output`).
/// Returns the rank, whether it was stderr, and the rest of the line. The rest
/// is not trimmed: `<stdout>: 17179869184` and `<stdout>:#` both occur.
pub fn strip_mpi_tag(s: &str) -> Option<(u32, bool, &str)> {
    let body = s.strip_prefix('[')?;
    let close = body.find(']')?;
    let inside = &body[..close];
    let (job, rank) = inside.split_once(',')?;
    if job.is_empty() || !job.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let rank: u32 = rank.trim().parse().ok()?;
    let after = &body[close + 1..];
    if let Some(rest) = after.strip_prefix("<stdout>:") {
        Some((rank, false, rest))
    } else if let Some(rest) = after.strip_prefix("<stderr>:") {
        Some((rank, true, rest))
    } else {
        None
    }
}

/// Strips a Slurm `srun -l` task label: optional spaces, digits, `:` and one space
/// (`0: `, `12: `). A table row such as `8  20000 ...` has no colon after its
/// first number, so it is never mistaken for a label.
pub fn strip_srun_label(s: &str) -> Option<(u32, &str)> {
    let t = s.trim_start_matches(' ');
    let digits = t.bytes().take_while(|b| b.is_ascii_digit()).count();
    if digits == 0 || digits > 6 {
        return None;
    }
    let rest = &t[digits..];
    let rest = rest.strip_prefix(": ").or_else(|| {
        // A label on an empty line: `0:` alone.
        if rest == ":" {
            Some("")
        } else {
            None
        }
    })?;
    let label: u32 = t[..digits].parse().ok()?;
    Some((label, rest))
}

/// Strips a leading ISO-8601-like timestamp, optionally in brackets, followed by
/// whitespace: `2024-05-01T10:00:00.123Z `, `[2024-05-01 10:00:00] `,
/// `2024-05-01 10:00:00,123 `. Anything else is returned unchanged.
pub fn strip_timestamp(s: &str) -> &str {
    let (body, bracketed) = match s.strip_prefix('[') {
        Some(b) => (b, true),
        None => (s, false),
    };
    let b = body.as_bytes();
    let is_digit = |i: usize| b.get(i).is_some_and(|c| c.is_ascii_digit());
    // YYYY-MM-DD
    if !(0..4).all(is_digit) || b.get(4) != Some(&b'-') || !(5..7).all(is_digit) {
        return s;
    }
    if b.get(7) != Some(&b'-') || !(8..10).all(is_digit) {
        return s;
    }
    // [T ]HH:MM:SS
    if !matches!(b.get(10), Some(b'T') | Some(b' ')) {
        return s;
    }
    if !(11..13).all(is_digit) || b.get(13) != Some(&b':') || !(14..16).all(is_digit) {
        return s;
    }
    if b.get(16) != Some(&b':') || !(17..19).all(is_digit) {
        return s;
    }
    let mut i = 19;
    // Fraction, zone.
    while i < b.len() && (b[i].is_ascii_digit() || matches!(b[i], b'.' | b',' | b'Z' | b'+' | b':'))
    {
        i += 1;
    }
    if b.get(i) == Some(&b'-') {
        // -hh:mm zone
        i += 1;
        while i < b.len() && (b[i].is_ascii_digit() || b[i] == b':') {
            i += 1;
        }
    }
    if bracketed {
        if b.get(i) != Some(&b']') {
            return s;
        }
        i += 1;
    }
    match b.get(i) {
        None => "",
        Some(c) if c.is_ascii_whitespace() => &body[i + 1..],
        _ => s,
    }
}

/// Parses a finite float. Rejects `inf`, `nan` and empty strings, which Rust's
/// `f64::from_str` would accept or which no tool prints as a measurement.
pub fn parse_f64(tok: &str) -> Option<f64> {
    let t = tok.trim();
    if t.is_empty() {
        return None;
    }
    let first = t.as_bytes()[0];
    if !(first.is_ascii_digit() || first == b'-' || first == b'+' || first == b'.') {
        return None;
    }
    let v: f64 = t.parse().ok()?;
    v.is_finite().then_some(v)
}

/// Parses an unsigned decimal integer (digits only, no sign).
pub fn parse_u64(tok: &str) -> Option<u64> {
    let t = tok.trim();
    if t.is_empty() || !t.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    t.parse().ok()
}

/// Parses a signed decimal integer (`-1` is nccl-tests' "no root").
pub fn parse_i64(tok: &str) -> Option<i64> {
    let t = tok.trim();
    let digits = t.strip_prefix('-').unwrap_or(t);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    t.parse().ok()
}

/// Whether the line is a ruler made of one repeated character (`-----`, `*****`),
/// ignoring surrounding whitespace. Empty lines are not rulers.
pub fn is_ruler(line: &str, ch: char) -> bool {
    let t = line.trim();
    t.len() >= 3 && t.chars().all(|c| c == ch)
}

/// Shortens a line for an error message: at most `max` characters, with `…`.
pub fn excerpt(line: &str, max: usize) -> String {
    let t = line.trim();
    if t.chars().count() <= max {
        t.to_string()
    } else {
        let mut s: String = t.chars().take(max).collect();
        s.push('…');
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mpi_tag_is_removed_even_when_it_abuts_the_number() {
        let l = clean_line("[1,0]<stdout>: 17179869184    4294967296");
        assert_eq!(l.text, " 17179869184    4294967296");
        assert_eq!(l.rank, Some(0));
        let l = clean_line("[1,15]<stderr>:node NCCL WARN x");
        assert_eq!(l.rank, Some(15));
        assert!(l.stderr);
        assert_eq!(l.text, "node NCCL WARN x");
    }

    #[test]
    fn srun_label_is_removed_but_table_rows_are_kept() {
        let l = clean_line("12: #  size count");
        assert_eq!(l.text, "#  size count");
        assert_eq!(l.rank, Some(12));
        let row = " 8388608    20000            24056.74";
        assert_eq!(clean_line(row).text, row);
        assert_eq!(clean_line(row).rank, None);
    }

    #[test]
    fn ansi_and_cr_are_removed() {
        assert_eq!(clean_line("\u{1b}[1;31mFAIL\u{1b}[0m ok\r").text, "FAIL ok");
    }

    #[test]
    fn timestamps_are_removed() {
        assert_eq!(strip_timestamp("2024-05-01T10:00:00.123Z hello"), "hello");
        assert_eq!(strip_timestamp("[2024-05-01 10:00:00] hello"), "hello");
        assert_eq!(strip_timestamp("2024-05-01 10:00:00,5+02:00 x"), "x");
        assert_eq!(
            strip_timestamp("2024-05-01 not a time"),
            "2024-05-01 not a time"
        );
        assert_eq!(strip_timestamp(" 8388608 20000"), " 8388608 20000");
    }

    #[test]
    fn numbers() {
        assert_eq!(parse_f64("2e-07"), Some(2e-7));
        assert_eq!(parse_f64("nan"), None);
        assert_eq!(parse_f64("inf"), None);
        assert_eq!(parse_f64("N/A"), None);
        assert_eq!(parse_u64("-1"), None);
        assert_eq!(parse_i64("-1"), Some(-1));
        assert_eq!(parse_i64("-"), None);
    }
}
