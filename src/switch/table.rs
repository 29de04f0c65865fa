//! Column tables as network OSes print them: a header line, a ruler of
//! dash runs (`---------  -------`), then rows. The ruler says where the
//! columns are, so a cell may hold a space (`0.00 B/s`) and a column may be
//! right- or left-aligned. This module only splits text into cells; what a
//! cell means is the platform parser's business.

/// One table: the header cells and the row cells, one `Vec` per line, with
/// the 1-based line number of each row for error messages.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    pub header: Vec<String>,
    pub rows: Vec<(usize, Vec<String>)>,
}

impl Table {
    /// The index of the header cell `name`.
    pub fn column(&self, name: &str) -> Option<usize> {
        self.header.iter().position(|h| h == name)
    }
}

/// The column spans of a ruler line made of dash runs separated by spaces,
/// in characters; `None` when the line is not such a ruler.
fn ruler(line: &str) -> Option<Vec<(usize, usize)>> {
    let chars: Vec<char> = line.trim_end().chars().collect();
    if chars.is_empty() || !chars.iter().all(|&c| c == '-' || c == ' ') {
        return None;
    }
    let mut spans = Vec::new();
    let mut start = None;
    for (i, &c) in chars.iter().enumerate() {
        match (c, start) {
            ('-', None) => start = Some(i),
            (' ', Some(s)) => {
                spans.push((s, i));
                start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        spans.push((s, chars.len()));
    }
    Some(spans)
}

/// Splits `line` into the cells under `spans`. A run of text (words joined
/// by single spaces) belongs to the span it overlaps most, or, in a gap, to
/// the nearest one; several runs under one span are joined with a space.
fn cells(line: &str, spans: &[(usize, usize)]) -> Vec<String> {
    let chars: Vec<char> = line.chars().collect();
    let mut out = vec![String::new(); spans.len()];
    let mut i = 0;
    while i < chars.len() {
        if chars[i].is_whitespace() {
            i += 1;
            continue;
        }
        let start = i;
        while i < chars.len()
            && !(chars[i].is_whitespace() && chars.get(i + 1).is_none_or(|c| c.is_whitespace()))
        {
            i += 1;
        }
        let end = i;
        let overlap = |&(s, e): &(usize, usize)| end.min(e).saturating_sub(start.max(s));
        let distance = |&(s, e): &(usize, usize)| {
            if end <= s {
                s - end
            } else {
                start.saturating_sub(e)
            }
        };
        let best = (0..spans.len())
            .max_by_key(|&k| (overlap(&spans[k]), std::cmp::Reverse(distance(&spans[k]))));
        if let Some(k) = best {
            let run: String = chars[start..end].iter().collect();
            if !out[k].is_empty() {
                out[k].push(' ');
            }
            out[k].push_str(&run);
        }
    }
    out
}

/// Every ruled table in `text`: the line above each ruler is its header,
/// the rows run to the next blank line, ruler or end. Lines before the
/// first header (`For namespace :`, a title) and after a blank line
/// (`Reminder: …`) belong to no table.
pub fn ruled_tables(text: &str) -> Vec<Table> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut i = 1;
    while i < lines.len() {
        let Some(spans) = ruler(lines[i]).filter(|s| !s.is_empty()) else {
            i += 1;
            continue;
        };
        if lines[i - 1].trim().is_empty() {
            i += 1;
            continue;
        }
        let header = cells(lines[i - 1], &spans);
        let mut rows = Vec::new();
        let mut j = i + 1;
        while j < lines.len() && !lines[j].trim().is_empty() && ruler(lines[j]).is_none() {
            // The next table's header: a line followed by a ruler.
            if lines.get(j + 1).is_some_and(|l| ruler(l).is_some()) {
                break;
            }
            rows.push((j + 1, cells(lines[j], &spans)));
            j += 1;
        }
        out.push(Table { header, rows });
        i = j.max(i + 1);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_follow_the_ruler() {
        let t = ruled_tables(
            "    IFACE    RX_BPS\n---------  --------\nEthernet0  0.00 B/s\n\nReminder: x\n",
        );
        assert_eq!(t.len(), 1);
        assert_eq!(t[0].header, vec!["IFACE", "RX_BPS"]);
        assert_eq!(
            t[0].rows,
            vec![(3, vec!["Ethernet0".into(), "0.00 B/s".into()])]
        );
    }

    #[test]
    fn odd_input_does_not_panic() {
        for text in ["", "-", "\n---", "a\n- -\né ü 1\n", "x\n--\n   \u{0}   9"] {
            let _ = ruled_tables(text);
        }
    }
}
