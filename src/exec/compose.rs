//! Several short commands for one host as one remote command, so that a
//! node's whole counter snapshot (every NIC's `ethtool -S` and sysfs
//! counters) costs one round trip instead of one per file. Each part's
//! output (stdout and stderr together) is framed by marker lines carrying
//! its index and exit status, and split back apart on return.

use super::types::quote;

const PART: &str = "@@rocegate-part";
const EXIT: &str = "@@rocegate-exit";

/// `sh -c` running `parts` in order, each framed by markers.
pub fn compose(parts: &[Vec<String>]) -> Vec<String> {
    let script: Vec<String> = parts
        .iter()
        .enumerate()
        .map(|(i, argv)| {
            let words: Vec<String> = argv.iter().map(|w| quote(w)).collect();
            format!(
                "echo '{PART} {i}'; {} 2>&1; echo \"{EXIT} {i} $?\"",
                words.join(" ")
            )
        })
        .collect();
    vec!["sh".into(), "-c".into(), script.join("; ")]
}

/// The parts of a command built by [`compose`], or `None` for any other
/// command (what a model of the hosts needs to answer it part by part).
pub fn decompose(argv: &[String]) -> Option<Vec<Vec<String>>> {
    let [sh, c, script] = argv else { return None };
    if sh != "sh" || c != "-c" || !script.starts_with(&format!("echo '{PART} 0'")) {
        return None;
    }
    let mut parts = Vec::new();
    for (i, piece) in script.split(&format!("echo '{PART} ")).skip(1).enumerate() {
        let body = piece.strip_prefix(&format!("{i}'; "))?;
        let end = body.find(&format!(" 2>&1; echo \"{EXIT} {i} $?\""))?;
        parts.push(shlex::split(&body[..end])?);
    }
    Some(parts)
}

/// Frames one part's output the way the composed script prints it.
pub fn frame(i: usize, text: &str, exit: i32) -> String {
    format!("{PART} {i}\n{text}{EXIT} {i} {exit}\n")
}

/// One part's output and exit status; `None` when its end marker never
/// came (the command was killed, the connection dropped).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Part {
    pub text: String,
    pub exit: Option<i32>,
}

/// Splits a composed command's stdout into `n` parts.
pub fn split(stdout: &str, n: usize) -> Vec<Part> {
    let mut parts = vec![Part::default(); n];
    let mut cur: Option<usize> = None;
    for line in stdout.split_inclusive('\n') {
        let bare = line.trim_end_matches('\n');
        if let Some(i) = bare
            .strip_prefix(PART)
            .and_then(|r| r.trim().parse::<usize>().ok())
        {
            cur = (i < n).then_some(i);
            continue;
        }
        // Output without a final newline runs into the exit marker.
        // Most lines hold no marker: look for its first byte (memchr)
        // before setting up a substring search.
        let marker = bare
            .find('@')
            .and_then(|at| bare[at..].find(EXIT).map(|p| at + p));
        if let Some(pos) = marker {
            if let (Some(i), true) = (cur, pos > 0) {
                parts[i].text.push_str(&bare[..pos]);
            }
            let rest = &bare[pos + EXIT.len()..];
            let mut f = rest.split_whitespace();
            if let (Some(Ok(i)), Some(Ok(code))) = (
                f.next().map(str::parse::<usize>),
                f.next().map(str::parse::<i32>),
            ) {
                if i < n {
                    parts[i].exit = Some(code);
                }
            }
            cur = None;
            continue;
        }
        if let Some(i) = cur {
            parts[i].text.push_str(line);
        }
    }
    parts
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        s.split(' ').map(String::from).collect()
    }

    #[test]
    fn round_trip_through_a_real_shell() {
        let parts = vec![
            words("echo one"),
            vec![
                "sh".into(),
                "-c".into(),
                "echo 'it''s two' >&2; exit 3".into(),
            ],
            words("printf no-newline"),
        ];
        let argv = compose(&parts);
        assert_eq!(decompose(&argv), Some(parts.clone()));
        let o = std::process::Command::new(&argv[0])
            .args(&argv[1..])
            .output()
            .unwrap();
        let got = split(&String::from_utf8_lossy(&o.stdout), 3);
        assert_eq!(
            got[0],
            Part {
                text: "one\n".into(),
                exit: Some(0)
            }
        );
        assert_eq!(
            got[1],
            Part {
                text: "its two\n".into(),
                exit: Some(3)
            }
        );
        assert_eq!(got[2].text, "no-newline");
        assert_eq!(got[2].exit, Some(0));
    }

    #[test]
    fn a_cut_off_part_has_no_exit_and_others_are_not_touched() {
        let text = format!("{}{PART} 1\npartial\n", frame(0, "a\nb", 0));
        let got = split(&text, 3);
        assert_eq!(
            got[0],
            Part {
                text: "a\nb".into(),
                exit: Some(0)
            }
        );
        assert_eq!(
            got[1],
            Part {
                text: "partial\n".into(),
                exit: None
            }
        );
        assert_eq!(got[2], Part::default());
        assert_eq!(decompose(&words("ethtool -S eth0")), None);
    }
}
