//! Diagnostics for bad input: file, line and column, document path, what is
//! wrong and what would be right. All problems of a file are collected, so a
//! user fixes them in one pass instead of one per run.
//!
//! A value quoted back to the user is an excerpt: a 50 MB key or a name full
//! of terminal escapes is shown as its first characters, escaped, and its
//! length. [`quote`] does that for the messages rocegate writes, and
//! `Diagnostic`'s `Display` bounds every quoted segment and every message
//! as a last line, so serde's and the YAML parser's echoes are bounded too.

use std::fmt;

use super::locate::Locator;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    pub file: String,
    pub line: Option<usize>,
    pub column: Option<usize>,
    /// Path in the document, such as `tests[3].pattern`; empty for the root.
    pub path: String,
    pub message: String,
}

/// Characters of a value shown before it is cut.
pub const EXCERPT_CHARS: usize = 40;

/// The longest message (or path) printed whole; longer ones keep their start
/// and their end, where the fix usually is.
const MAX_MESSAGE: usize = 480;

/// `s` as it is safe to print: control and bidirectional-override
/// characters escaped (`\0`, `\n`, `\u{1b}`), and cut to its first
/// [`EXCERPT_CHARS`] characters followed by `…(N bytes)` when longer.
pub fn excerpt(s: &str) -> String {
    let mut out = String::new();
    for (shown, c) in s.chars().enumerate() {
        if shown == EXCERPT_CHARS {
            out.push_str(&format!("…({} bytes)", s.len()));
            return out;
        }
        push_escaped(&mut out, c);
    }
    out
}

/// `s` in double quotes, as an [`excerpt`] with `"` and `\` escaped too:
/// `"gpu001"`, `"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa…(100000 bytes)"`.
pub fn quote(s: &str) -> String {
    let cut: String = s.chars().take(EXCERPT_CHARS + 1).collect();
    let mut out = String::from("\"");
    for (shown, c) in cut.chars().enumerate() {
        if shown == EXCERPT_CHARS {
            out.push_str(&format!("…({} bytes)", s.len()));
            break;
        }
        if matches!(c, '"' | '\\') {
            out.push('\\');
        }
        push_escaped(&mut out, c);
    }
    out.push('"');
    out
}

/// `s` whole, with control and invisible characters escaped: safe on one
/// line of a terminal or of a YAML comment (a newline cannot end it).
pub fn escaped(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        push_escaped(&mut out, c);
    }
    out
}

/// Control characters and the invisible ones that reorder or hide text on a
/// terminal; printed escaped.
fn push_escaped(out: &mut String, c: char) {
    let hidden = matches!(c, '\u{200b}'..='\u{200f}' | '\u{2028}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{feff}');
    if c.is_control() || hidden {
        out.extend(c.escape_debug());
    } else {
        out.push(c);
    }
}

/// Whether a quoted segment is already an excerpt made by [`quote`] or
/// [`excerpt`], so bounding it again would not change the byte count shown.
fn is_excerpt(inner: &str) -> bool {
    inner.len() < 256 && inner.contains("…(") && inner.ends_with(" bytes)")
}

/// `text` made safe to print whole: control characters escaped, each
/// `"..."` or `` `...` `` segment longer than an excerpt cut to one, and the
/// result, if still long, cut in the middle. Short plain messages pass
/// unchanged.
pub fn bound(text: &str) -> String {
    let mut out = String::with_capacity(text.len().min(MAX_MESSAGE * 2));
    let mut i = 0;
    while let Some(c) = text[i..].chars().next() {
        if c != '"' && c != '`' {
            push_escaped(&mut out, c);
            i += c.len_utf8();
            continue;
        }
        let start = i + 1;
        let mut escaped = false;
        let mut close = None;
        for (k, d) in text[start..].char_indices() {
            if escaped {
                escaped = false;
            } else if d == '\\' && c == '"' {
                escaped = true;
            } else if d == c {
                close = Some(start + k);
                break;
            }
        }
        let end = close.unwrap_or(text.len());
        let inner = &text[start..end];
        out.push(c);
        if inner.chars().nth(EXCERPT_CHARS).is_some() && !is_excerpt(inner) {
            out.push_str(&excerpt(inner));
        } else {
            push_str_escaped(&mut out, inner);
        }
        match close {
            Some(e) => {
                out.push(c);
                i = e + 1;
            }
            None => i = end,
        }
    }
    if out.len() <= MAX_MESSAGE {
        return out;
    }
    let head = floor_char_boundary(&out, MAX_MESSAGE * 2 / 3);
    let tail = ceil_char_boundary(&out, out.len() - MAX_MESSAGE / 4);
    format!(
        "{}…({} bytes cut)…{}",
        &out[..head],
        tail - head,
        &out[tail..]
    )
}

fn push_str_escaped(out: &mut String, s: &str) {
    for c in s.chars() {
        push_escaped(out, c);
    }
}

fn floor_char_boundary(s: &str, mut i: usize) -> usize {
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn ceil_char_boundary(s: &str, mut i: usize) -> usize {
    while !s.is_char_boundary(i) {
        i += 1;
    }
    i
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", bound(&self.file))?;
        if let Some(l) = self.line {
            write!(f, ":{l}")?;
            if let Some(c) = self.column {
                write!(f, ":{c}")?;
            }
        }
        if !self.path.is_empty() {
            write!(f, ": {}", bound(&self.path))?;
        }
        write!(f, ": {}", bound(&self.message))
    }
}

/// Every problem found in the inputs; never empty when returned as an error.
#[derive(Debug, Clone, Default)]
pub struct Diagnostics(pub Vec<Diagnostic>);

impl fmt::Display for Diagnostics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, d) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{d}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Diagnostics {}

/// Collects diagnostics for one file, locating each path in its text.
pub struct Sink<'a> {
    file: String,
    locator: Locator<'a>,
    pub found: Vec<Diagnostic>,
}

impl<'a> Sink<'a> {
    pub fn new(file: &str, text: &'a str) -> Self {
        Sink {
            file: file.to_string(),
            locator: Locator::new(text),
            found: Vec::new(),
        }
    }

    /// Records a problem at `path` (dotted, with `[i]` indices).
    pub fn error(&mut self, path: impl Into<String>, message: impl Into<String>) {
        let path = path.into();
        let pos = self.locator.find(&path);
        self.found.push(Diagnostic {
            file: self.file.clone(),
            line: pos.map(|p| p.0),
            column: pos.map(|p| p.1),
            path,
            message: message.into(),
        });
    }

    pub fn file(&self) -> &str {
        &self.file
    }

    pub fn is_empty(&self) -> bool {
        self.found.is_empty()
    }
}

/// Turns a YAML/serde error into a diagnostic. serde_yaml prefixes the
/// message with the document path it had reached (`tests[3].pattern: ...`);
/// that path is split off so the message reads like our own.
pub fn from_yaml_error(file: &str, err: &serde_yaml::Error) -> Diagnostic {
    let loc = err.location();
    let raw = err.to_string();
    // Drop the " at line X column Y" suffix; we print the position up front.
    let text = match raw.rfind(" at line ") {
        Some(i) => raw[..i].to_string(),
        None => raw,
    };
    let (path, message) = split_path(&text);
    Diagnostic {
        file: file.to_string(),
        line: loc.as_ref().map(|l| l.line()),
        column: loc.as_ref().map(|l| l.column()),
        path,
        message: humanize(&message),
    }
}

fn split_path(text: &str) -> (String, String) {
    if let Some((p, m)) = text.split_once(": ") {
        let looks_like_path = !p.is_empty()
            && !p.contains(' ')
            && p.chars()
                .all(|c| c.is_alphanumeric() || "_-.[]".contains(c));
        if looks_like_path && p != "." {
            return (p.to_string(), m.to_string());
        }
    }
    (String::new(), text.to_string())
}

/// serde's wording is precise but terse; add the fix where it is obvious.
fn humanize(msg: &str) -> String {
    if let Some(rest) = msg.strip_prefix("unknown field ") {
        return format!("unknown key {rest}");
    }
    if let Some(rest) = msg.strip_prefix("missing field ") {
        return format!("required key {rest} is missing");
    }
    if let Some(rest) = msg.strip_prefix("unknown variant ") {
        return format!("unknown value {rest}");
    }
    msg.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_has_every_part() {
        let d = Diagnostic {
            file: "suites/a.yaml".into(),
            line: Some(4),
            column: Some(7),
            path: "tests[3].pattern".into(),
            message: "unknown pattern".into(),
        };
        assert_eq!(
            d.to_string(),
            "suites/a.yaml:4:7: tests[3].pattern: unknown pattern"
        );
    }

    #[test]
    fn values_are_quoted_as_excerpts() {
        assert_eq!(quote("gpu001"), "\"gpu001\"");
        assert_eq!(quote("a\0b\u{1b}[31m\"c"), "\"a\\0b\\u{1b}[31m\\\"c\"");
        let long = "a".repeat(100_000);
        assert_eq!(
            quote(&long),
            format!("\"{}…(100000 bytes)\"", "a".repeat(40))
        );
        // bound() leaves an excerpt as it is and cuts what serde echoes.
        let q = format!("{} is not a valid name", quote(&long));
        assert_eq!(bound(&q), q);
        let serde = format!("unknown field `{long}`, expected `name`");
        assert_eq!(
            bound(&serde),
            format!(
                "unknown field `{}…(100000 bytes)`, expected `name`",
                "a".repeat(40)
            )
        );
        let echoed = format!("invalid type: string {:?}, expected u32", "x".repeat(50));
        assert!(
            bound(&echoed).contains("…(50 bytes)\""),
            "{}",
            bound(&echoed)
        );
    }

    #[test]
    fn every_message_is_bounded() {
        // An unpaired quote, a long unquoted run, controls: never echoed whole.
        for text in [
            format!("bad \"{}", "b".repeat(50_000_000)),
            format!("bad {} end of the fix", "c ".repeat(100_000)),
            "\u{1b}".repeat(10_000),
        ] {
            let b = bound(&text);
            assert!(b.len() < 1024, "{} bytes", b.len());
            assert!(!b.contains('\u{1b}'));
        }
        let b = bound(&format!("bad {} end of the fix", "c ".repeat(100_000)));
        assert!(b.ends_with("end of the fix"), "{b}");
        let d = Diagnostic {
            file: "i.yaml".into(),
            line: Some(1),
            column: Some(1),
            path: "p".repeat(100_000),
            message: "m".repeat(100_000),
        };
        assert!(d.to_string().len() < 2048);
    }
}
