//! `raw/`: every command's output kept verbatim, with its command line, host,
//! exit status and times, one file per step execution.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::exec::{ExecFailure, InvocationOutput, StepCommands};

/// Relative path of a step's raw file inside the run directory.
pub fn rel_path(test: &str, round: usize, rep: u32, step: usize) -> String {
    format!("raw/{test}/r{round:04}-x{rep:02}-s{step:05}.txt")
}

pub fn render(cmds: &StepCommands, outs: &[InvocationOutput]) -> String {
    let mut s = String::new();
    for (inv, out) in cmds.invocations.iter().zip(outs) {
        s += &format!(
            "### host: {}\n### role: {:?}\n### command: {}\n",
            inv.host,
            inv.role,
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
            let text = match f {
                ExecFailure::Unreachable(m) => format!("unreachable: {m}"),
                ExecFailure::AuthRefused(m) => format!("authentication refused: {m}"),
                ExecFailure::MissingBinary(m) => format!("missing binary: {m}"),
                ExecFailure::TimedOut(m) => format!("timed out: {m}"),
                ExecFailure::Cancelled(m) => format!("cancelled: {m}"),
                ExecFailure::Transport(m) => format!("transport: {m}"),
            };
            s += &format!("### failure: {text}\n");
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

pub fn write(run_dir: &Path, rel: &str, text: &str) -> std::io::Result<()> {
    let path: PathBuf = run_dir.join(rel);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    let mut f = std::fs::File::create(&path)?;
    f.write_all(text.as_bytes())
}

/// Reads a raw file back (for reports), capped so one runaway log cannot
/// blow up a report; the cut is said where it happened.
pub fn read_capped(run_dir: &Path, rel: &str, cap: usize) -> Option<String> {
    let text = std::fs::read(run_dir.join(rel)).ok()?;
    let text = String::from_utf8_lossy(&text);
    if text.len() <= cap {
        return Some(text.into_owned());
    }
    let mut cut = cap;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    Some(format!(
        "{}\n[... cut: {} of {} bytes shown; full output in {rel}]\n",
        &text[..cut],
        cut,
        text.len()
    ))
}
