//! The library side of `rocegate parse perftest|nccl FILE`: read a saved output,
//! parse it, print the report as JSON. It does not run anything.

use crate::workload::nccl::parse as nccl;
use crate::workload::perftest::parse as perftest;
use crate::workload::text::ParseError;

/// Which parser to use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParseTool {
    Perftest,
    Nccl,
}

/// Why `rocegate parse` failed. `Display` is one line naming the file and the reason.
#[derive(Debug, thiserror::Error)]
pub enum ParseCmdError {
    /// The file could not be read as an input: missing, not a regular
    /// file, over the size limit; the message names it.
    #[error("{0}")]
    Input(String),
    #[error("{path}: {source}")]
    Parse {
        path: String,
        #[source]
        source: ParseError,
    },
    #[error("--unit {unit:?}: unknown unit (use MB/sec, MiB/sec or Gb/sec)")]
    BadUnit { unit: String },
    #[error("--unit applies to perftest --out_json files only, not to nccl-tests output")]
    UnitForNccl,
    /// A value no link or NIC could have measured (see `crate::plausible`):
    /// the file is damaged or edited, not a run's output.
    #[error("{path}: impossible value, so this is not a measurement (check the file is the tool's unedited output): {reason}")]
    Impossible { path: String, reason: String },
    #[error("{path}: cannot encode the report as JSON: {message}")]
    Encode { path: String, message: String },
}

/// Parses the file at `path` (`-` reads stdin) and returns the report as pretty
/// JSON. `unit` is the bandwidth unit of a perftest `--out_json` file, which
/// prints none. A report with a recognised failure is `Ok`; text that is not the
/// tool's output is `Err`, and so is output with a value no link could have
/// measured ([`ParseCmdError::Impossible`]). Without a link rate, bandwidth
/// is bounded by [`crate::plausible::PORT_CEILING_GBPS`] per port and
/// direction.
pub fn run_parse(tool: ParseTool, path: &str, unit: Option<&str>) -> Result<String, ParseCmdError> {
    let unit_override = match unit {
        None => None,
        Some(_) if tool == ParseTool::Nccl => return Err(ParseCmdError::UnitForNccl),
        Some(u) => Some(
            perftest::BwUnit::parse(u).ok_or_else(|| ParseCmdError::BadUnit {
                unit: u.to_string(),
            })?,
        ),
    };
    let text = read_input(path)?;
    let display = if path == "-" { "<stdin>" } else { path };
    recognise(tool, &text).map_err(|source| ParseCmdError::Parse {
        path: display.to_string(),
        source,
    })?;
    let json = match tool {
        ParseTool::Perftest => {
            let opts = perftest::PerftestParseOptions {
                unit_override,
                killed_by_timeout: false,
                link_gbps: None,
            };
            let report = perftest::parse(&text, &opts).map_err(|source| ParseCmdError::Parse {
                path: display.to_string(),
                source,
            })?;
            impossible(display, &report.impossible)?;
            serde_json::to_string_pretty(&report)
        }
        ParseTool::Nccl => {
            let report =
                nccl::parse(&text, &nccl::NcclParseOptions::default()).map_err(|source| {
                    ParseCmdError::Parse {
                        path: display.to_string(),
                        source,
                    }
                })?;
            impossible(display, &report.impossible)?;
            serde_json::to_string_pretty(&report)
        }
    };
    json.map_err(|e| ParseCmdError::Encode {
        path: display.to_string(),
        message: e.to_string(),
    })
}

/// Parses the file at `path` (`-` reads stdin) as the counter or
/// configuration `format` (see [`crate::counters::formats`]) and returns
/// what the parser read as pretty JSON. An unknown format is an error
/// listing the known ones. `unit_given` is whether `--unit` was given, which only perftest
/// takes.
pub fn run_parse_counters(
    format: &str,
    path: &str,
    unit_given: bool,
) -> Result<String, ParseCmdError> {
    use crate::counters::formats;
    if unit_given {
        return Err(ParseCmdError::Input(
            "--unit applies to perftest --out_json files only, not to counters".to_string(),
        ));
    }
    if !formats::FORMATS.iter().any(|(n, _)| *n == format) {
        return Err(ParseCmdError::Input(format!(
            "--format {format:?}: unknown format (formats: {})",
            formats::names()
        )));
    }
    let text = read_input(path)?;
    let display = if path == "-" { "<stdin>" } else { path };
    let value = formats::parse(format, &text)
        .map_err(|e| ParseCmdError::Input(format!("{display}: {e}")))?;
    serde_json::to_string_pretty(&value).map_err(|e| ParseCmdError::Encode {
        path: display.to_string(),
        message: e.to_string(),
    })
}

/// `Err` unless `text` has a line only `tool` prints (its signature): the
/// parsers alone would take any prose that says "rdma_cm … failed" for a
/// fabric failure.
fn recognise(tool: ParseTool, text: &str) -> Result<(), ParseError> {
    let (found, name, what) = match tool {
        ParseTool::Perftest => (
            perftest::signature(text),
            "perftest",
            "no line perftest prints: no \"#bytes\" table header, no test banner and none of its own error messages",
        ),
        ParseTool::Nccl => (
            nccl::signature(text),
            "nccl-tests",
            "no line nccl-tests or NCCL prints: no table header, no \"# nccl-tests\" banner, no NCCL log line and no \"Test NCCL failure\"",
        ),
    };
    match found {
        Some(_) => Ok(()),
        None => Err(ParseError::not_recognised(name, what)),
    }
}

/// `Err` when a parser found values no link could have measured.
fn impossible(path: &str, found: &[crate::plausible::Impossible]) -> Result<(), ParseCmdError> {
    match crate::plausible::summary(found) {
        Some(reason) => Err(ParseCmdError::Impossible {
            path: path.to_string(),
            reason,
        }),
        None => Ok(()),
    }
}

/// Reads the whole input as text; invalid UTF-8 (binary noise in a log) is
/// replaced rather than rejected.
/// The tool's output: a regular file or stdin, at most the input limit
/// (`--max-input-size`), bytes that are not UTF-8 shown as U+FFFD.
fn read_input(path: &str) -> Result<String, ParseCmdError> {
    let limit = crate::inputs::max_input_bytes().map_err(ParseCmdError::Input)?;
    let bytes = if path == "-" {
        crate::inputs::read_stdin_bytes_limited(limit)
    } else {
        crate::inputs::read_bytes_limited(path, limit)
    }
    .map_err(ParseCmdError::Input)?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_name_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x.txt");
        std::fs::write(&p, "hello\n").unwrap();
        let path = p.to_string_lossy().to_string();
        let e = run_parse(ParseTool::Perftest, &path, None)
            .unwrap_err()
            .to_string();
        assert!(e.starts_with(&path), "{e}");
        assert!(e.contains("not perftest output"), "{e}");
        assert!(!e.contains('\n'));
        let e = run_parse(ParseTool::Nccl, "/nonexistent/file", None)
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("/nonexistent/file: cannot read"), "{e}");
        assert!(matches!(
            run_parse(ParseTool::Perftest, &path, Some("furlongs")),
            Err(ParseCmdError::BadUnit { .. })
        ));
    }

    #[test]
    fn json_out() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("j.json");
        std::fs::write(
            &p,
            r#"{"test_info": {"test": "RDMA_Write_BW_Test"}, "results": {"MsgSize": 65536, "n_iterations": 5000, "BW_peak": 10.0, "BW_average": 9.0, "MsgRate": 0.01}}"#,
        )
        .unwrap();
        let out = run_parse(ParseTool::Perftest, &p.to_string_lossy(), Some("Gb/sec")).unwrap();
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["unit"], "Gb/sec");
        assert_eq!(v["rows"][0]["bw_avg_gbps"], 9.0);
        assert_eq!(v["tool"], "ib_write_bw");
    }
}
