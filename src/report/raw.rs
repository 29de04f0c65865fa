//! `raw/`: every command's output kept verbatim, with its command line, host,
//! exit status and times, one file per step execution.

use std::path::{Path, PathBuf};

use crate::exec::{InvocationOutput, StepCommands};

use super::events::{RawOutput, RawPart};

/// Relative path of a step's raw file inside the run directory.
pub fn rel_path(test: &str, round: usize, rep: u32, step: usize) -> String {
    format!("raw/{test}/r{round:04}-x{rep:02}-s{step:05}.txt")
}

/// Where `out` is kept, relative to the run directory.
pub fn rel_path_of(out: &RawOutput) -> String {
    match out.part {
        RawPart::Step(step) => rel_path(out.test, out.round, out.rep, step),
        RawPart::Ledger => format!(
            "raw/{}/r{:04}-x{:02}-ledger.txt",
            out.test, out.round, out.rep
        ),
    }
}

pub fn render(cmds: &StepCommands, outs: &[InvocationOutput]) -> String {
    let mut s = String::new();
    for (inv, out) in cmds.invocations.iter().zip(outs) {
        s += &format!(
            "### host: {}\n### role: {}\n### command: {}\n",
            inv.host,
            inv.role.name(),
            inv.command_line()
        );
        s += &format!(
            "### started_s: {:.3}  ended_s: {:.3}  exit: {}\n",
            out.started_s,
            out.ended_s,
            out.exit
                .map(|c| c.to_string())
                .unwrap_or_else(|| "none".into())
        );
        if let Some(f) = &out.failure {
            s += &format!("### failure: {f}\n");
        }
        s += "### stdout:\n";
        s += &out.stdout;
        if !out.stdout.ends_with('\n') && !out.stdout.is_empty() {
            s.push('\n');
        }
        s += "### stderr:\n";
        s += &out.stderr;
        if !out.stderr.ends_with('\n') && !out.stderr.is_empty() {
            s.push('\n');
        }
        s.push('\n');
    }
    s
}

/// Writes a step's raw file; `rel` must stay inside the run directory.
/// Written to a temporary name and renamed, so a full disk leaves no torn
/// file that a report would read as the tool's whole output.
pub fn write(run_dir: &Path, rel: &str, text: &str) -> std::io::Result<()> {
    let path: PathBuf = crate::paths::join_within(run_dir, rel)
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    crate::paths::write_atomic(&path, text.as_bytes())
}

/// Reads a raw file back (for reports), capped so one runaway log cannot
/// blow up a report (only `cap` bytes are read); the cut is said where it
/// happened. Bytes that are not UTF-8 are shown as U+FFFD.
pub fn read_capped(run_dir: &Path, rel: &str, cap: usize) -> Option<String> {
    use std::io::Read;
    let path = crate::paths::join_within(run_dir, rel).ok()?;
    let f = std::fs::File::open(&path).ok()?;
    if !f.metadata().ok()?.is_file() {
        return None;
    }
    let mut bytes = Vec::new();
    f.take(cap as u64 + 1).read_to_end(&mut bytes).ok()?;
    if bytes.len() <= cap {
        return Some(String::from_utf8_lossy(&bytes).into_owned());
    }
    let total = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
    bytes.truncate(cap);
    let text = String::from_utf8_lossy(&bytes);
    // A character cut in half at the cap is dropped, not shown as U+FFFD.
    let text = text.strip_suffix('\u{fffd}').unwrap_or(&text);
    Some(format!(
        "{text}\n[... cut: {cap} of {total} bytes shown; full output in {rel}]\n"
    ))
}
