//! Finds the line and column of a document path (`tests[3].expect.min`) in
//! YAML text, for errors found after parsing (a link to an unknown NIC) where
//! the parser no longer knows positions.
//!
//! It reads the block structure by indentation, which is how inventories and
//! suites are written. Inside flow collections (`{a: 1}`, `[1, 2]`) it stops
//! and returns the enclosing key: a position close to the problem is better
//! than none, and a wrong one is never given for a path that is not there.

#[derive(Debug)]
struct Line<'a> {
    /// 1-based line number.
    number: usize,
    /// Column (0-based) where the content starts, after any `- ` markers.
    indent: usize,
    /// Columns of the `-` sequence markers that start this line, outermost first.
    dashes: Vec<usize>,
    content: &'a str,
}

pub struct Locator<'a> {
    lines: Vec<Line<'a>>,
}

#[derive(Debug, Clone, PartialEq)]
enum Seg {
    Key(String),
    Index(usize),
}

fn parse_path(path: &str) -> Vec<Seg> {
    let mut segs = Vec::new();
    for part in path.split('.') {
        let mut rest = part;
        if let Some(i) = rest.find('[') {
            if i > 0 {
                segs.push(Seg::Key(rest[..i].to_string()));
            }
            rest = &rest[i..];
            while let Some(stripped) = rest.strip_prefix('[') {
                let Some(end) = stripped.find(']') else { break };
                if let Ok(n) = stripped[..end].parse() {
                    segs.push(Seg::Index(n));
                }
                rest = &stripped[end + 1..];
            }
        } else if !rest.is_empty() {
            segs.push(Seg::Key(rest.to_string()));
        }
    }
    segs
}

impl<'a> Locator<'a> {
    pub fn new(text: &'a str) -> Self {
        let mut lines = Vec::new();
        let mut block_scalar_indent: Option<usize> = None;
        for (i, raw) in text.lines().enumerate() {
            let trimmed = raw.trim_start();
            let indent = raw.len() - trimmed.len();
            if trimmed.is_empty() || trimmed.starts_with('#') {
                continue;
            }
            if let Some(bi) = block_scalar_indent {
                if indent > bi {
                    continue;
                }
                block_scalar_indent = None;
            }
            if trimmed == "---" || trimmed == "..." {
                continue;
            }
            let mut dashes = Vec::new();
            let mut col = indent;
            let mut content = trimmed;
            while content == "-" || content.starts_with("- ") {
                dashes.push(col);
                let after = content[1..].trim_start();
                col += content.len() - after.len();
                content = after;
            }
            let content = strip_comment(content);
            if content.ends_with('|')
                || content.ends_with('>')
                || content.ends_with("|-")
                || content.ends_with(">-")
            {
                block_scalar_indent = Some(col);
            }
            lines.push(Line {
                number: i + 1,
                indent: col,
                dashes,
                content,
            });
        }
        Locator { lines }
    }

    /// Returns (line, column), both 1-based, of the deepest part of `path`
    /// that exists in the text.
    pub fn find(&self, path: &str) -> Option<(usize, usize)> {
        let segs = parse_path(path);
        // The root mapping's keys sit at the smallest indent.
        let root_indent = self
            .lines
            .iter()
            .map(|l| l.dashes.first().copied().unwrap_or(l.indent))
            .min()?;
        let mut best = None;
        self.walk(0, self.lines.len(), root_indent, &segs, &mut best);
        best
    }

    /// Searches lines [from, to) for a node at `indent` matching `segs[0]`.
    fn walk(
        &self,
        from: usize,
        to: usize,
        indent: usize,
        segs: &[Seg],
        best: &mut Option<(usize, usize)>,
    ) {
        let Some(seg) = segs.first() else { return };
        match seg {
            Seg::Key(key) => {
                for i in from..to {
                    let l = &self.lines[i];
                    if l.indent != indent {
                        continue;
                    }
                    if key_of(l.content) == Some(key.as_str()) {
                        *best = Some((l.number, l.indent + 1));
                        let end = self.block_end(i, indent);
                        let value = value_of(l.content);
                        if value.is_empty() {
                            // Nested block on the next lines: its indent is that of the first child.
                            if let Some(child) = self.lines.get(i + 1).filter(|_| i + 1 < end) {
                                let child_indent =
                                    child.dashes.first().copied().unwrap_or(child.indent);
                                self.walk(i + 1, end, child_indent, &segs[1..], best);
                            }
                        }
                        return;
                    }
                }
            }
            Seg::Index(n) => {
                // Items are lines whose dash sits at `indent`.
                let mut count = 0;
                for i in from..to {
                    let l = &self.lines[i];
                    let Some(pos) = l.dashes.iter().position(|&d| d == indent) else {
                        continue;
                    };
                    if count == *n {
                        *best = Some((l.number, indent + 1));
                        let end = self.item_end(i, indent);
                        let inner = if pos + 1 < l.dashes.len() {
                            l.dashes[pos + 1]
                        } else {
                            l.indent
                        };
                        self.walk(i, end, inner, &segs[1..], best);
                        return;
                    }
                    count += 1;
                }
            }
        }
    }

    /// End (exclusive) of the value block of the key on line `start`.
    /// YAML allows a key's sequence value at the key's own indent
    /// (`tests:\n- name: a`); those dash lines belong to the key.
    fn block_end(&self, start: usize, indent: usize) -> usize {
        let seq_at_same_indent = value_of(self.lines[start].content).is_empty()
            && self
                .lines
                .get(start + 1)
                .is_some_and(|n| n.dashes.first() == Some(&indent));
        (start + 1..self.lines.len())
            .find(|&j| {
                let l = &self.lines[j];
                let first = l.dashes.first().copied().unwrap_or(l.indent);
                first < indent || (first == indent && (!seq_at_same_indent || l.dashes.is_empty()))
            })
            .unwrap_or(self.lines.len())
    }

    fn item_end(&self, start: usize, dash: usize) -> usize {
        (start + 1..self.lines.len())
            .find(|&j| {
                let l = &self.lines[j];
                let first = l.dashes.first().copied().unwrap_or(l.indent);
                first <= dash
            })
            .unwrap_or(self.lines.len())
    }
}

fn strip_comment(s: &str) -> &str {
    // A '#' starts a comment only after whitespace and outside quotes.
    let mut in_single = false;
    let mut in_double = false;
    let bytes = s.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        match b {
            b'\'' if !in_double => in_single = !in_single,
            b'"' if !in_single => in_double = !in_double,
            b'#' if !in_single && !in_double && (i == 0 || bytes[i - 1] == b' ') => {
                return s[..i].trim_end();
            }
            _ => {}
        }
    }
    s.trim_end()
}

fn key_of(content: &str) -> Option<&str> {
    if content.starts_with('{') || content.starts_with('[') {
        return None;
    }
    let idx = content
        .find(": ")
        .or_else(|| content.strip_suffix(':').map(|s| s.len()))?;
    let key = content[..idx].trim();
    Some(key.trim_matches(|c| c == '"' || c == '\''))
}

fn value_of(content: &str) -> &str {
    match content.find(": ") {
        Some(i) => content[i + 2..].trim(),
        None => "",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOC: &str = "\
suite:
  name: x
tests:
  - name: a
    perftest:
      tool: ib_write_bw
    pattern: rail-pairs
  - name: b   # second
    pattern:
      random: {rounds: 3}
    expect: {min: 3}
gate:
  fail_on: [fail]
";

    #[test]
    fn finds_nested_paths() {
        let l = Locator::new(DOC);
        assert_eq!(l.find("suite.name"), Some((2, 3)));
        assert_eq!(l.find("tests[0].perftest.tool"), Some((6, 7)));
        assert_eq!(l.find("tests[1].pattern"), Some((9, 5)));
        assert_eq!(l.find("tests[1].pattern.random"), Some((10, 7)));
        assert_eq!(l.find("tests[1].name"), Some((8, 5)));
        // Inside a flow mapping: the enclosing key.
        assert_eq!(l.find("tests[1].expect.min"), Some((11, 5)));
        assert_eq!(l.find("gate.fail_on[0]"), Some((13, 3)));
    }

    #[test]
    fn sequences_at_key_indent() {
        let doc = "tests:\n- name: a\n- name: b\n  pattern: x\nother: 1\n";
        let l = Locator::new(doc);
        assert_eq!(l.find("tests[1].pattern"), Some((4, 3)));
        assert_eq!(l.find("other"), Some((5, 1)));
    }

    #[test]
    fn missing_path_gives_deepest_known() {
        let l = Locator::new(DOC);
        assert_eq!(l.find("tests[0].nothing"), Some((4, 3)));
        assert_eq!(l.find("nowhere"), None);
    }
}
