//! Diagnostics for bad input: file, line and column, document path, what is
//! wrong and what would be right. All problems of a file are collected, so a
//! user fixes them in one pass instead of one per run.

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

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file)?;
        if let Some(l) = self.line {
            write!(f, ":{l}")?;
            if let Some(c) = self.column {
                write!(f, ":{c}")?;
            }
        }
        if !self.path.is_empty() {
            write!(f, ": {}", self.path)?;
        }
        write!(f, ": {}", self.message)
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
}
