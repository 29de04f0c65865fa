//! Hostlist expressions, the HPC convention for naming many hosts at once.
//!
//! `gpu[001-128]`, `gpu[1-3,7]`, `rack[1-2]-node[01-04]` (several bracket groups
//! expand as a cartesian product, left to right) and comma-separated lists of
//! such terms (`gpu[01-04],login1`). Zero padding follows the width of the lower
//! bound, as in Slurm. This module knows nothing about nodes or switches.

use std::fmt;

/// Upper bound on the hosts one expression may produce: a typo such as
/// `gpu[1-10000000]` must be an error, not an out-of-memory.
pub const MAX_EXPANSION: usize = 1 << 20;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostlistError {
    pub expr: String,
    pub reason: String,
}

impl fmt::Display for HostlistError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "bad hostlist \"{}\": {}", self.expr, self.reason)
    }
}

impl std::error::Error for HostlistError {}

/// Expands a hostlist expression into names, in written order.
pub fn expand(expr: &str) -> Result<Vec<String>, HostlistError> {
    let err = |reason: String| HostlistError {
        expr: expr.to_string(),
        reason,
    };
    if expr.trim().is_empty() {
        return Err(err("the expression is empty".into()));
    }
    let mut out = Vec::new();
    for term in split_top_level(expr).map_err(err)? {
        let term = term.trim();
        if term.is_empty() {
            return Err(err("empty item between commas".into()));
        }
        let expanded = expand_term(term).map_err(err)?;
        if out.len() + expanded.len() > MAX_EXPANSION {
            return Err(err(format!("expands to more than {MAX_EXPANSION} names")));
        }
        out.extend(expanded);
    }
    Ok(out)
}

/// Splits on commas that are outside brackets.
fn split_top_level(expr: &str) -> Result<Vec<&str>, String> {
    let mut parts = Vec::new();
    let mut depth = 0usize;
    let mut start = 0;
    for (i, c) in expr.char_indices() {
        match c {
            '[' if depth > 0 => return Err("nested '[' is not allowed".into()),
            '[' => depth += 1,
            ']' if depth == 0 => return Err(format!("']' at offset {i} has no matching '['")),
            ']' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&expr[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    if depth != 0 {
        return Err("'[' is never closed".into());
    }
    parts.push(&expr[start..]);
    Ok(parts)
}

fn expand_term(term: &str) -> Result<Vec<String>, String> {
    let Some(open) = term.find('[') else {
        validate_literal(term)?;
        return Ok(vec![term.to_string()]);
    };
    let close = term[open..]
        .find(']')
        .map(|c| open + c)
        .ok_or_else(|| "'[' is never closed".to_string())?;
    let prefix = &term[..open];
    validate_literal(prefix)?;
    let values = expand_ranges(&term[open + 1..close])?;
    let rest = expand_term_suffix(&term[close + 1..])?;
    let mut out = Vec::with_capacity(values.len() * rest.len());
    for v in &values {
        for r in &rest {
            out.push(format!("{prefix}{v}{r}"));
        }
    }
    Ok(out)
}

fn expand_term_suffix(rest: &str) -> Result<Vec<String>, String> {
    if rest.is_empty() {
        Ok(vec![String::new()])
    } else {
        expand_term(rest)
    }
}

fn validate_literal(s: &str) -> Result<(), String> {
    if let Some(c) = s
        .chars()
        .find(|c| c.is_whitespace() || matches!(c, '\'' | '"' | '`' | '$' | ';' | '&' | '|'))
    {
        return Err(format!("character {c:?} is not allowed in a name"));
    }
    Ok(())
}

/// Expands `1-3,7,010-012` into zero-padded strings.
fn expand_ranges(body: &str) -> Result<Vec<String>, String> {
    if body.trim().is_empty() {
        return Err("empty range \"[]\"".into());
    }
    let mut out = Vec::new();
    for item in body.split(',') {
        let item = item.trim();
        if item.is_empty() {
            return Err(format!("empty item in range \"[{body}]\""));
        }
        let (lo, hi) = match item.split_once('-') {
            Some((lo, hi)) => (lo.trim(), hi.trim()),
            None => (item, item),
        };
        let parse = |s: &str| -> Result<u64, String> {
            if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
                return Err(format!("\"{item}\" is not a number or a range like 1-16"));
            }
            s.parse::<u64>()
                .map_err(|_| format!("\"{s}\" is too large"))
        };
        let (l, h) = (parse(lo)?, parse(hi)?);
        if l > h {
            return Err(format!("range \"{item}\" is reversed (write {hi}-{lo})"));
        }
        if (h - l) as usize >= MAX_EXPANSION {
            return Err(format!(
                "range \"{item}\" expands to more than {MAX_EXPANSION} names"
            ));
        }
        let width = lo.len();
        for n in l..=h {
            out.push(format!("{n:0width$}"));
        }
    }
    Ok(out)
}

/// Compresses names back into a short expression for messages
/// (`gpu001..gpu016` → `gpu[001-016]`). Names that share a prefix and a
/// zero-padded numeric suffix of one width are grouped; others are listed.
pub fn compress(names: &[String]) -> String {
    let mut groups: Vec<(String, usize, Vec<u64>)> = Vec::new();
    let mut singles: Vec<String> = Vec::new();
    for name in names {
        let digits = name
            .bytes()
            .rev()
            .take_while(|b| b.is_ascii_digit())
            .count();
        if digits == 0 || digits > 18 {
            singles.push(name.clone());
            continue;
        }
        let (prefix, num) = name.split_at(name.len() - digits);
        let n: u64 = num.parse().unwrap_or(0);
        match groups
            .iter_mut()
            .find(|(p, w, _)| p == prefix && *w == digits)
        {
            Some((_, _, ns)) => ns.push(n),
            None => groups.push((prefix.to_string(), digits, vec![n])),
        }
    }
    let mut parts = Vec::new();
    for (prefix, width, mut ns) in groups {
        ns.sort_unstable();
        ns.dedup();
        if ns.len() == 1 {
            parts.push(format!("{prefix}{:0width$}", ns[0]));
            continue;
        }
        let mut ranges = Vec::new();
        let mut i = 0;
        while i < ns.len() {
            let mut j = i;
            while j + 1 < ns.len() && ns[j + 1] == ns[j] + 1 {
                j += 1;
            }
            if i == j {
                ranges.push(format!("{:0width$}", ns[i]));
            } else {
                ranges.push(format!("{:0width$}-{:0width$}", ns[i], ns[j]));
            }
            i = j + 1;
        }
        parts.push(format!("{prefix}[{}]", ranges.join(",")));
    }
    parts.extend(singles);
    parts.join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expands_padded_ranges() {
        let v = expand("gpu[001-003]").unwrap();
        assert_eq!(v, ["gpu001", "gpu002", "gpu003"]);
    }

    #[test]
    fn expands_lists_and_several_groups() {
        assert_eq!(
            expand("gpu[1-3,7]").unwrap(),
            ["gpu1", "gpu2", "gpu3", "gpu7"]
        );
        assert_eq!(
            expand("r[1-2]-n[01-02],login").unwrap(),
            ["r1-n01", "r1-n02", "r2-n01", "r2-n02", "login"]
        );
        assert_eq!(
            expand("leaf01:Ethernet1/[1-2]").unwrap(),
            ["leaf01:Ethernet1/1", "leaf01:Ethernet1/2"]
        );
    }

    #[test]
    fn rejects_bad_expressions_with_reasons() {
        for (expr, needle) in [
            ("gpu[]", "empty range"),
            ("gpu[5-1]", "reversed"),
            ("gpu[1-", "never closed"),
            ("gpu1]", "no matching"),
            ("gpu[a-b]", "not a number"),
            ("", "empty"),
            ("gpu[1-2],,x", "empty item"),
            ("gpu;rm", "not allowed"),
            ("gpu[1-99999999]", "more than"),
        ] {
            let e = expand(expr).unwrap_err();
            assert!(e.to_string().contains(needle), "{expr}: {e}");
        }
    }

    #[test]
    fn compress_round_trips() {
        let names = expand("gpu[001-016],gpu020,login").unwrap();
        let c = compress(&names);
        assert_eq!(c, "gpu[001-016,020],login");
        assert_eq!(expand(&c).unwrap(), names);
    }
}
