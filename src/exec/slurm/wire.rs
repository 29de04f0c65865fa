//! What the controller and the node agent exchange over one Slurm step:
//! the round's plan (every node's share, broadcast as a file), the control
//! lines on the step's standard input (`go`, `stop STEP`; end of input
//! means the controller is gone) and the agent's output lines.
//!
//! Output lines are short (a chunk of output is at most [`CHUNK`] bytes
//! before base64) and each names its node and invocation, so lines of
//! different tasks may interleave in srun's output in any order and be
//! read back whole: slurmstepd forwards a task's output line by line, and
//! a line far below its buffer is never split.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::exec::types::{ExecFailure, Role};

/// Every agent line starts with this.
pub const MARK: &str = "@@rg";
/// Bytes of output per line, before base64.
pub const CHUNK: usize = 600;
/// Bytes of an `end` or `broken` line's note, before base64: the line stays
/// within srun's 1,024-byte I/O message whatever the note says.
pub const NOTE_MAX: usize = 400;

/// `s` cut to at most `max` bytes, at a character boundary.
fn cut(s: &str, max: usize) -> &str {
    let mut end = s.len().min(max);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// One round: what each node runs. Invocations are numbered across the
/// whole round (`id`), so every answer names exactly one of them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RoundPlan {
    pub round: String,
    pub shares: BTreeMap<String, Vec<Task>>,
}

/// One invocation of a node's share.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Task {
    pub id: usize,
    /// The batch step it belongs to: its servers are stopped together.
    pub step: usize,
    pub argv: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub env: Vec<(String, String)>,
    pub role: Role,
    /// The in-task dead-man (`timeout -k`), in milliseconds.
    pub limit_ms: u64,
    /// When to start after `go`, in milliseconds (servers start before it).
    #[serde(default)]
    pub at_ms: u64,
}

/// What the controller writes to the step's standard input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Control {
    /// Every task is ready (its servers listen): start the rest.
    Go,
    /// The clients of `step` have ended: stop its servers.
    Stop(usize),
}

impl Control {
    pub fn line(&self) -> String {
        match self {
            Control::Go => "go\n".into(),
            Control::Stop(s) => format!("stop {s}\n"),
        }
    }

    pub fn parse(line: &str) -> Option<Control> {
        let mut w = line.split_whitespace();
        match (w.next()?, w.next()) {
            ("go", None) => Some(Control::Go),
            ("stop", Some(s)) => s.parse().ok().map(Control::Stop),
            _ => None,
        }
    }
}

/// How an invocation ended, as the agent saw it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// It exited by itself (its status says how).
    Exited,
    /// A server stopped because its clients were done.
    Stopped,
    /// Killed because the controller went away or the run was interrupted.
    Cancelled,
    /// Killed by the agent past its limit (the in-task `timeout` failed to).
    TimedOut,
    /// It could not be started.
    NotStarted,
    /// Its node could not be reached.
    Unreachable,
}

impl Ending {
    fn word(self) -> &'static str {
        match self {
            Ending::Exited => "exited",
            Ending::Stopped => "stopped",
            Ending::Cancelled => "cancelled",
            Ending::TimedOut => "timed_out",
            Ending::NotStarted => "not_started",
            Ending::Unreachable => "unreachable",
        }
    }

    fn from_word(w: &str) -> Option<Ending> {
        Some(match w {
            "exited" => Ending::Exited,
            "stopped" => Ending::Stopped,
            "cancelled" => Ending::Cancelled,
            "timed_out" => Ending::TimedOut,
            "not_started" => Ending::NotStarted,
            "unreachable" => Ending::Unreachable,
            _ => return None,
        })
    }
}

/// One agent output line, decoded.
#[derive(Debug, Clone, PartialEq)]
pub enum Line {
    /// The node's servers listen; `step` is Slurm's `JOB.STEP`.
    Ready {
        node: String,
        step: String,
    },
    Stdout {
        node: String,
        id: usize,
        bytes: Vec<u8>,
    },
    Stderr {
        node: String,
        id: usize,
        bytes: Vec<u8>,
    },
    End(End),
    /// The agent could not run its share at all (no plan, no share).
    Broken {
        node: String,
        why: String,
    },
    /// The node's share is done.
    Bye {
        node: String,
    },
}

#[derive(Debug, Clone, PartialEq)]
pub struct End {
    pub node: String,
    pub id: usize,
    pub exit: Option<i32>,
    pub ending: Ending,
    /// Seconds after `go` (negative: before it, a server).
    pub started: f64,
    pub ended: f64,
    pub note: String,
}

fn b64(s: &str) -> String {
    crate::encode::base64(cut(s, NOTE_MAX).as_bytes())
}

fn text(b: &str) -> Option<String> {
    Some(String::from_utf8_lossy(&crate::encode::unbase64(b)?).into_owned())
}

/// The lines that carry `bytes` of one stream (`out` or `err`).
pub fn chunks(node: &str, id: usize, stream: &str, bytes: &[u8]) -> Vec<String> {
    bytes
        .chunks(CHUNK)
        .map(|c| format!("{MARK} {stream} {node} {id} {}", crate::encode::base64(c)))
        .collect()
}

pub fn ready(node: &str, step: &str) -> String {
    format!("{MARK} ready {node} {step}")
}

pub fn end(e: &End) -> String {
    format!(
        "{MARK} end {} {} {} {} {} {} {}",
        e.node,
        e.id,
        e.exit.map_or("-".to_string(), |c| c.to_string()),
        e.ending.word(),
        e.started,
        e.ended,
        b64(&e.note)
    )
}

pub fn broken(node: &str, why: &str) -> String {
    format!("{MARK} broken {node} {}", b64(why))
}

pub fn bye(node: &str) -> String {
    format!("{MARK} bye {node}")
}

/// Reads one line of srun's output; `None` for anything that is not an
/// agent line (srun's own messages, a label, a torn line).
pub fn parse(line: &str) -> Option<Line> {
    let at = line.find(MARK)?;
    let mut w = line[at + MARK.len()..].split_whitespace();
    let kind = w.next()?;
    let node = w.next()?.to_string();
    let line = match kind {
        "ready" => Line::Ready {
            node,
            step: w.next().unwrap_or("").to_string(),
        },
        "out" | "err" => {
            let id = w.next()?.parse().ok()?;
            let bytes = crate::encode::unbase64(w.next()?)?;
            if kind == "out" {
                Line::Stdout { node, id, bytes }
            } else {
                Line::Stderr { node, id, bytes }
            }
        }
        "end" => {
            let id = w.next()?.parse().ok()?;
            let exit = match w.next()? {
                "-" => None,
                c => Some(c.parse().ok()?),
            };
            let ending = Ending::from_word(w.next()?)?;
            let started = w.next()?.parse().ok()?;
            let ended = w.next()?.parse().ok()?;
            let note = text(w.next().unwrap_or(""))?;
            Line::End(End {
                node,
                id,
                exit,
                ending,
                started,
                ended,
                note,
            })
        }
        "broken" => Line::Broken {
            node,
            why: text(w.next().unwrap_or(""))?,
        },
        "bye" => Line::Bye { node },
        _ => return None,
    };
    Some(line)
}

/// The failure an ended invocation reports, the way the ssh transport
/// reads the same exits: the dead-man's 124, a missing binary's 127.
pub fn failure(
    host: &str,
    argv0: &str,
    limit_s: u64,
    e: &End,
    stderr: &str,
) -> Option<ExecFailure> {
    match e.ending {
        Ending::Stopped => None,
        Ending::Cancelled => Some(ExecFailure::Cancelled(format!("{host}: {}", e.note))),
        Ending::TimedOut => Some(ExecFailure::TimedOut(format!("{host}: {}", e.note))),
        Ending::NotStarted => Some(ExecFailure::Transport(format!("{host}: {}", e.note))),
        Ending::Unreachable => Some(ExecFailure::Unreachable(e.note.clone())),
        Ending::Exited => crate::exec::types::exit_failure(host, argv0, limit_s, e.exit, stderr),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_line_reads_back_and_other_text_is_ignored() {
        let e = End {
            node: "gpu001".into(),
            id: 7,
            exit: Some(124),
            ending: Ending::Exited,
            started: -0.5,
            ended: 12.25,
            note: "a note with spaces\nand a newline".into(),
        };
        assert_eq!(parse(&end(&e)), Some(Line::End(e.clone())));
        // A note of any length keeps the line within srun's message.
        let long = End {
            note: "é".repeat(5000),
            ..e.clone()
        };
        let l = end(&long);
        assert!(l.len() < 1024, "{}", l.len());
        let Some(Line::End(back)) = parse(&l) else {
            panic!("{l}")
        };
        assert_eq!(back.note, "é".repeat(NOTE_MAX / 2));
        assert!(broken("n", &"x".repeat(5000)).len() < 1024);
        // srun's --label prefix is tolerated.
        assert_eq!(
            parse(&format!("3: {}", ready("gpu001", "42.7"))),
            Some(Line::Ready {
                node: "gpu001".into(),
                step: "42.7".into()
            })
        );
        let big: Vec<u8> = (0..2000u32).map(|i| (i % 256) as u8).collect();
        let lines = chunks("n", 3, "out", &big);
        assert_eq!(lines.len(), 4);
        assert!(lines.iter().all(|l| l.len() < 1024));
        let mut back = Vec::new();
        for l in &lines {
            let Some(Line::Stdout { id: 3, bytes, .. }) = parse(l) else {
                panic!("{l}")
            };
            back.extend(bytes);
        }
        assert_eq!(back, big);
        for junk in [
            "srun: error: gpu002: task 1: Exited with exit code 1",
            "@@rg end n x 0 exited 0 0 ",
            "@@rg out n 1 not-base64!",
            "@@rg",
        ] {
            assert_eq!(parse(junk), None, "{junk}");
        }
        assert_eq!(Control::parse("stop 12"), Some(Control::Stop(12)));
        assert_eq!(Control::parse(&Control::Go.line()), Some(Control::Go));
        assert_eq!(Control::parse("stop"), None);
    }
}
