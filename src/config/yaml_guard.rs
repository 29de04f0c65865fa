//! Bounds on the shape of a YAML file, checked in one linear pass before the
//! parser sees it: nesting at most [`MAX_DEPTH`] levels and one document.
//!
//! yaml_serde stops deserializing at 128 levels, but only after libyaml has
//! scanned the whole document into events, and libyaml's scanner is quadratic
//! in the nesting of flow collections (`[[[[...` or `{a: {a: ...` under a
//! key: 60,000 levels take 20 seconds); its parser is private, so there is no
//! event stream to stop early. This scan over-estimates depth (it counts
//! every deeper indentation and every `- `, `? ` and `key:` as a level, and
//! every flow bracket outside quotes and comments), never under-estimates
//! it, and an inventory or suite is about eight levels deep, so the margin
//! is wide. It is not a YAML parser: anything it lets through still meets
//! the real one.

use super::diag::{from_yaml_error, Diagnostic, Diagnostics};

/// Deepest nesting accepted. Inventories and suites need under ten levels.
pub const MAX_DEPTH: usize = 64;

/// Why a file was refused, with the 1-based line and column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShapeError {
    pub line: usize,
    pub column: usize,
    pub message: String,
}

/// Parses `text` as one YAML document into `T`, after [`check`]; every
/// problem is a diagnostic naming `file` and, where known, line and column.
pub fn from_str<T: serde::de::DeserializeOwned>(file: &str, text: &str) -> Result<T, Diagnostics> {
    check(text).map_err(|e| {
        Diagnostics(vec![Diagnostic {
            file: file.to_string(),
            line: Some(e.line),
            column: Some(e.column),
            path: String::new(),
            message: e.message,
        }])
    })?;
    serde_yaml::from_str(text).map_err(|e| Diagnostics(vec![from_yaml_error(file, &e)]))
}

#[derive(Clone, Copy, PartialEq)]
enum Quote {
    Double,
    Single,
}

struct Scan {
    /// Columns of the open block levels, innermost last.
    levels: Vec<usize>,
    /// Open flow brackets.
    flow: usize,
    /// Inside a quoted scalar that may span lines.
    quote: Option<Quote>,
    /// A block scalar (`|`, `>`) is open; its lines are more indented than this.
    block_scalar: Option<usize>,
    line: usize,
}

impl Scan {
    fn depth_error(&self, column: usize) -> ShapeError {
        ShapeError {
            line: self.line,
            column,
            message: format!(
                "YAML nested deeper than {MAX_DEPTH} levels; inventories and suites need far fewer (is the file generated wrongly or corrupted?)"
            ),
        }
    }

    fn push_level(&mut self, column: usize) -> Result<(), ShapeError> {
        if self.levels.last() != Some(&column) {
            self.levels.push(column);
        }
        self.check_depth(column)
    }

    fn check_depth(&self, column: usize) -> Result<(), ShapeError> {
        if self.levels.len() + self.flow > MAX_DEPTH {
            return Err(self.depth_error(column + 1));
        }
        Ok(())
    }

    /// Scans `line[pos..]` in flow or quoted context; returns where block
    /// context resumes (`None`: the line ended inside flow or quotes, or in
    /// a comment).
    fn flow(&mut self, line: &str, mut pos: usize) -> Result<Option<usize>, ShapeError> {
        let bytes = line.as_bytes();
        let mut token_start = true;
        while pos < bytes.len() {
            let b = bytes[pos];
            match self.quote {
                Some(Quote::Double) => {
                    match b {
                        b'\\' => pos += 1,
                        b'"' => self.quote = None,
                        _ => {}
                    }
                    pos += 1;
                    if self.quote.is_none() && self.flow == 0 {
                        return Ok(Some(pos));
                    }
                    continue;
                }
                Some(Quote::Single) => {
                    if b == b'\'' {
                        if bytes.get(pos + 1) == Some(&b'\'') {
                            pos += 1;
                        } else {
                            self.quote = None;
                        }
                    }
                    pos += 1;
                    if self.quote.is_none() && self.flow == 0 {
                        return Ok(Some(pos));
                    }
                    continue;
                }
                None => {}
            }
            if self.flow == 0 {
                return Ok(Some(pos));
            }
            match b {
                b'[' | b'{' => {
                    self.flow += 1;
                    self.check_depth(pos)?;
                    token_start = true;
                }
                b']' | b'}' => {
                    self.flow -= 1;
                    token_start = false;
                }
                b',' | b':' | b'?' => token_start = true,
                b' ' | b'\t' => {}
                b'#' if pos == 0 || matches!(bytes[pos - 1], b' ' | b'\t') => return Ok(None),
                b'"' if token_start => self.quote = Some(Quote::Double),
                b'\'' if token_start => self.quote = Some(Quote::Single),
                _ => token_start = false,
            }
            pos += 1;
        }
        Ok(None)
    }

    /// Scans one line in block context from `pos`, the first non-space:
    /// indicators, then a key or a node, then the key's value.
    fn block(&mut self, line: &str, mut pos: usize) -> Result<(), ShapeError> {
        let bytes = line.as_bytes();
        // The line's own indentation is a level.
        self.push_level(pos)?;
        // `- - - x` and `? ? x`: one level per indicator.
        while matches!(bytes.get(pos), Some(b'-' | b'?'))
            && matches!(bytes.get(pos + 1), None | Some(b' ' | b'\t'))
        {
            self.push_level(pos)?;
            pos = skip_spaces(line, pos + 1);
        }
        let Some(after) = self.node(line, pos)? else {
            return Ok(());
        };
        // `key: value` (the key plain or quoted): a mapping level at the
        // key's column, then the value.
        let after = skip_spaces(line, after);
        if bytes.get(after) == Some(&b':')
            && matches!(bytes.get(after + 1), None | Some(b' ' | b'\t'))
        {
            self.push_level(pos)?;
            self.node(line, skip_spaces(line, after + 1))?;
        }
        Ok(())
    }

    /// Scans a node starting at `pos` in block context: flow collections
    /// and quoted scalars are followed (maybe onto later lines), a block
    /// scalar header is remembered. Returns where a `:` after the node would
    /// be, if the node ended on this line.
    fn node(&mut self, line: &str, pos: usize) -> Result<Option<usize>, ShapeError> {
        let bytes = line.as_bytes();
        // Anchors and tags (`&a`, `!!seq`) come before the node itself.
        let mut pos = pos;
        while matches!(bytes.get(pos), Some(b'&' | b'!')) {
            while pos < bytes.len() && !matches!(bytes[pos], b' ' | b'\t') {
                pos += 1;
            }
            pos = skip_spaces(line, pos);
        }
        match bytes.get(pos) {
            None | Some(b'#') => Ok(None),
            Some(b'[' | b'{') => {
                self.flow = 1;
                self.check_depth(pos)?;
                self.flow(line, pos + 1)
            }
            Some(b'"') => {
                self.quote = Some(Quote::Double);
                self.flow(line, pos + 1)
            }
            Some(b'\'') => {
                self.quote = Some(Quote::Single);
                self.flow(line, pos + 1)
            }
            Some(b'|' | b'>') => {
                self.block_scalar = Some(self.levels.last().copied().unwrap_or(0));
                Ok(None)
            }
            Some(_) => Ok(find_key_colon(bytes, pos)),
        }
    }
}

/// The column of the `:` ending a plain key at `pos`, if the line has one
/// (`name: x`, `name:`); not inside a value such as `http://x`.
fn find_key_colon(bytes: &[u8], pos: usize) -> Option<usize> {
    let mut i = pos;
    while i < bytes.len() {
        match bytes[i] {
            b':' if matches!(bytes.get(i + 1), None | Some(b' ' | b'\t')) => return Some(i),
            b'#' if i > pos && matches!(bytes[i - 1], b' ' | b'\t') => return None,
            _ => {}
        }
        i += 1;
    }
    None
}

/// Checks nesting depth and document count; see the module comment.
pub fn check(text: &str) -> Result<(), ShapeError> {
    let mut s = Scan {
        levels: Vec::new(),
        flow: 0,
        quote: None,
        block_scalar: None,
        line: 0,
    };
    let mut content = false;
    let mut markers = 0usize;
    let mut ended = false;
    for line in text.split('\n') {
        s.line += 1;
        let line = line.strip_suffix('\r').unwrap_or(line);
        let indent = line.bytes().take_while(|&b| b == b' ').count();
        let blank = line[indent..].trim().is_empty();
        if s.quote.is_some() || s.flow > 0 {
            // What follows a flow collection or quoted scalar that closes
            // on this line is at most a comment or a value on one line.
            s.flow(line, 0)?;
            continue;
        }
        if let Some(parent) = s.block_scalar {
            if blank || indent > parent {
                continue;
            }
            s.block_scalar = None;
        }
        let marker = |m: &str| {
            line.starts_with(m) && matches!(line.as_bytes().get(3), None | Some(b' ' | b'\t'))
        };
        if marker("---") {
            if content || markers > 0 || ended {
                return Err(second_document(s.line));
            }
            markers += 1;
            s.levels.clear();
            let rest = skip_spaces(line, 3);
            if rest < line.len() && !line[rest..].starts_with('#') {
                content = true;
                s.block(line, rest)?;
            }
            continue;
        }
        if marker("...") {
            ended = true;
            continue;
        }
        if blank || line[indent..].starts_with('#') || (indent == 0 && line.starts_with('%')) {
            continue;
        }
        if ended {
            return Err(second_document(s.line));
        }
        content = true;
        while s.levels.last().is_some_and(|&c| c > indent) {
            s.levels.pop();
        }
        s.block(line, indent)?;
    }
    Ok(())
}

fn skip_spaces(line: &str, mut pos: usize) -> usize {
    let b = line.as_bytes();
    while matches!(b.get(pos), Some(b' ' | b'\t')) {
        pos += 1;
    }
    pos
}

fn second_document(line: usize) -> ShapeError {
    ShapeError {
        line,
        column: 1,
        message: "a second YAML document starts here; an inventory or suite is one document (remove the `---` or `...`, or split the file)".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn depth_err(text: &str) -> ShapeError {
        check(text).expect_err("too deep")
    }

    #[test]
    fn shipped_files_pass() {
        for f in [
            include_str!("../../inventory/emulated.yaml"),
            include_str!("../../inventory/emulated-defects.yaml"),
            include_str!("../../inventory/lab.yaml"),
            include_str!("../../inventory/lab-fanout.yaml"),
            include_str!("../../suites/acceptance.yaml"),
            include_str!("../../suites/faults.yaml"),
            include_str!("../../suites/lab.yaml"),
            include_str!("../../suites/lab-faults.yaml"),
        ] {
            check(f).unwrap_or_else(|e| panic!("{e:?}"));
        }
    }

    #[test]
    fn flow_nesting_is_bounded() {
        let ok = format!(
            "a: {}{}\n",
            "[".repeat(MAX_DEPTH - 1),
            "]".repeat(MAX_DEPTH - 1)
        );
        check(&ok).unwrap();
        let e = depth_err(&format!("fabric:\n  name: {}\n", "[".repeat(60_000)));
        assert_eq!((e.line, e.column), (2, 9 + MAX_DEPTH - 2));
        assert!(e.message.contains("deeper than 64 levels"), "{e:?}");
        depth_err(&format!("a: {}\n", "{a: ".repeat(100)));
        // Brackets inside quotes or a plain scalar are not nesting.
        check(&format!(
            "a: \"{}\"\nb: gpu[001-128]\nc: '{}'\n",
            "[".repeat(100),
            "{".repeat(100)
        ))
        .unwrap();
        check(&format!("a: x # {}\n", "[".repeat(100))).unwrap();
    }

    #[test]
    fn block_nesting_is_bounded() {
        let e = depth_err(&format!("a:\n  {}x\n", "- ".repeat(60_000)));
        assert_eq!(e.line, 2);
        let mut deep = String::new();
        for i in 0..100 {
            deep.push_str(&format!("{}k{i}:\n", " ".repeat(i)));
        }
        assert_eq!(depth_err(&deep).line, MAX_DEPTH + 1);
        // Sibling keys at one indentation are one level, however many.
        let wide: String = (0..10_000).map(|i| format!("k{i}: v\n")).collect();
        check(&wide).unwrap();
    }

    #[test]
    fn block_scalars_are_not_nesting() {
        let mut text = String::from("script: |\n");
        for i in 1..200 {
            text.push_str(&format!("{}echo {i}: [\n", " ".repeat(i)));
        }
        text.push_str("next: 1\n");
        check(&text).unwrap();
    }

    #[test]
    fn one_document_only() {
        check("---\na: 1\n...\n").unwrap();
        check("# c\n%YAML 1.2\n---\na: 1\n").unwrap();
        let e = check("a: 1\n---\nb: 2\n").unwrap_err();
        assert_eq!((e.line, e.column), (2, 1));
        assert!(e.message.contains("second YAML document"), "{e:?}");
        assert_eq!(check("---\na: 1\n--- \n").unwrap_err().line, 3);
        assert_eq!(check("a: 1\n...\nb: 2\n").unwrap_err().line, 3);
        // `---` inside a value is not a marker.
        check("a: |\n  ---\nb: \"x\n  ---\"\n").unwrap();
        check("a: |\n  ---\n").unwrap();
    }
}
