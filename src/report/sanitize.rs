//! Tool output goes into XML and HTML: strip ANSI escapes and the control
//! characters XML 1.0 forbids, keep CDATA sections closed where we close
//! them, and escape for HTML. Tool output and switch responses are
//! untrusted text: whatever they hold, the file around them stays
//! well-formed and holds only the elements rocegate wrote.

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

/// Text for the inside of a CDATA section: [`xml_safe`], and every `]]>`
/// (which would end the section early and let the rest be read as markup)
/// split across two sections, so a reader sees the same characters.
pub fn cdata_safe(s: &str) -> String {
    xml_safe(s).replace("]]>", "]]]]><![CDATA[>")
}

/// HTML-escaped text with the control characters removed that browsers
/// render as replacement boxes or that cut a copied log short (NUL).
pub fn html_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c if c.is_control() && !matches!(c, '\t' | '\n' | '\r') => {}
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
            cdata_safe("a]]>b\u{0}]]]>"),
            "a]]]]><![CDATA[>b]]]]]><![CDATA[>"
        );
        assert_eq!(html_escape("a\u{0}b\u{1b}c\n"), "abc\n");
        assert_eq!(
            html_escape("<a href='x'>&"),
            "&lt;a href=&#39;x&#39;&gt;&amp;"
        );
    }
}
