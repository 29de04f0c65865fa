//! Tool output goes into XML and HTML: strip ANSI escapes and the control
//! characters XML 1.0 forbids, and escape for HTML.

pub use crate::workload::text::strip_ansi;

/// Text that XML 1.0 accepts: tab, newline and carriage return are the only
/// control characters allowed; also drops non-characters U+FFFE/U+FFFF.
pub fn xml_safe(s: &str) -> String {
    strip_ansi(s)
        .chars()
        .filter(|&c| {
            matches!(c, '\t' | '\n' | '\r')
                || (c >= ' ' && c != '\u{7f}' && c != '\u{fffe}' && c != '\u{ffff}')
        })
        .collect()
}

pub fn html_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_escapes_and_controls() {
        assert_eq!(
            xml_safe("\u{1b}[31mred\u{1b}[0m ok\u{0}\u{8}\tx\n"),
            "red ok\tx\n"
        );
        assert_eq!(strip_ansi("\u{1b}]0;title\u{7}text"), "text");
        assert_eq!(
            html_escape("<a href='x'>&"),
            "&lt;a href=&#39;x&#39;&gt;&amp;"
        );
    }
}
