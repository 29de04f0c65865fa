//! The fault journal: one append-only JSON-lines file per fabric, outside
//! any run directory, so that the next run (or `rocegate recover`) sees
//! what a killed one left behind.
//!
//! A fault is `opened` (and the file synced) before its command is sent,
//! with the prior state and the exact command that restores it; it is
//! `healed` once that command succeeded. Open = opened and never healed.
//! The journal is written only under the fabric's run lock
//! ([`super::lock`], the file beside it), so two rocegate processes never
//! fault the same fabric at once.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use super::lock::{self, sync_dir, FabricLock};

use serde::{Deserialize, Serialize};

/// A fault about to be sent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Opened {
    pub id: String,
    pub run: String,
    pub pid: u32,
    /// When it was written (RFC 3339, UTC).
    pub at: String,
    pub fabric: String,
    /// The suite test that sent it.
    pub test: String,
    /// Inventory name of the device.
    pub host: String,
    /// What is changed, e.g. `leaf1: swp31 down`.
    pub what: String,
    /// The device before the change, in words.
    pub prior: String,
    /// The command that restores it (run through the inventory's
    /// transport), as a person reads it.
    pub undo: Vec<String>,
    /// The same request as the platform asks it, and the platform that
    /// reads its answer and decides what follows (an EOS undo that finds
    /// its session gone reads the ports next). Absent in entries written
    /// before rocegate knew API platforms: `undo` runs as a command line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub undo_query: Option<crate::switch::Query>,
    #[serde(default = "linux", skip_serializing_if = "is_linux")]
    pub platform: String,
    /// The ports the fault took down, for an undo that checks them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ports: Vec<String>,
    /// When the device's own dead-man switch undoes it, if one is armed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deadman_s: Option<u64>,
}

fn linux() -> String {
    "linux".into()
}

fn is_linux(p: &String) -> bool {
    p == "linux"
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Entry {
    Opened(Box<Opened>),
    Healed {
        id: String,
        at: String,
        /// `run` (the run that sent it), `recover`.
        by: String,
    },
}

pub struct Journal {
    path: PathBuf,
    file: File,
}

/// `$XDG_STATE_HOME/rocegate/journal/<fabric>.jsonl`, else
/// `~/.local/state/rocegate/journal/<fabric>.jsonl`.
pub fn default_path(fabric: &str) -> Result<PathBuf, String> {
    let base = crate::paths::state_base().ok_or(
        "neither XDG_STATE_HOME nor HOME is set: give the fault journal's path with --journal",
    )?;
    let name: String = fabric
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    crate::paths::join_within(&base, &format!("rocegate/journal/{name}.jsonl"))
        .map_err(|e| format!("fault journal for fabric {fabric:?}: {e}"))
}

pub fn now() -> String {
    time::OffsetDateTime::now_utc()
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default()
}

/// Reads every entry. A last line cut short (a power cut mid-write) is
/// ignored: the write it belonged to was never acknowledged. Any other bad
/// line is an error naming it.
pub fn read(path: &Path) -> Result<Vec<Entry>, String> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => {
            return Err(format!(
                "{}: cannot read the fault journal: {e}",
                path.display()
            ))
        }
    };
    let lines: Vec<&str> = text.lines().collect();
    let mut entries = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<Entry>(line) {
            Ok(e) => entries.push(e),
            Err(_) if i + 1 == lines.len() && !text.ends_with('\n') => {}
            Err(e) => {
                return Err(format!(
                    "{}:{}: not a journal entry ({e}); the file is damaged: read it, heal what it lists by hand, then move it away",
                    path.display(),
                    i + 1
                ))
            }
        }
    }
    Ok(entries)
}

/// The faults opened and never healed, in the order they were opened.
pub fn open_faults(entries: &[Entry]) -> Vec<Opened> {
    let mut open: Vec<Opened> = Vec::new();
    for e in entries {
        match e {
            Entry::Opened(o) => open.push((**o).clone()),
            Entry::Healed { id, .. } => open.retain(|o| &o.id != id),
        }
    }
    open
}

impl Journal {
    /// Opens the journal (creating it and its directory) under `held`,
    /// the fabric's run lock, which the caller keeps for as long as it
    /// writes.
    pub fn open(path: &Path, held: &FabricLock) -> Result<Journal, String> {
        if held.path() != lock::path_for(path) {
            return Err(format!(
                "{}: opened without its run lock (held: {}); this is a rocegate bug",
                path.display(),
                held.path().display()
            ));
        }
        let dir = path
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        lock::create_dir_synced(dir, "the fault journal's directory")?;
        let existed = path.exists();
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(|e| format!("{}: cannot open the fault journal: {e}", path.display()))?;
        if !existed {
            sync_dir(dir);
        }
        // A last line cut short (power cut mid-write) was never
        // acknowledged: cut it off, or the next entry would be glued to it.
        let text = std::fs::read(path)
            .map_err(|e| format!("{}: cannot read the fault journal: {e}", path.display()))?;
        if !text.is_empty() && !text.ends_with(b"\n") {
            let keep = text.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
            file.set_len(keep as u64)
                .and_then(|_| file.sync_data())
                .map_err(|e| format!("{}: cannot cut its torn last line: {e}", path.display()))?;
        }
        Ok(Journal {
            path: path.to_path_buf(),
            file,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn entries(&self) -> Result<Vec<Entry>, String> {
        read(&self.path)
    }

    /// Appends one entry and waits until it is on disk.
    pub fn append(&mut self, e: &Entry) -> Result<(), String> {
        let mut line = serde_json::to_string(e).map_err(|e| e.to_string())?;
        line.push('\n');
        let before = self.file.metadata().map(|m| m.len()).ok();
        let r = self
            .file
            .write_all(line.as_bytes())
            .and_then(|_| self.file.sync_data());
        r.map_err(|err| {
            // Half a line would corrupt the next one: take it back.
            if let Some(len) = before {
                let _ = self.file.set_len(len);
            }
            format!(
                "{}: cannot write the fault journal: {err}",
                self.path.display()
            )
        })
    }

    pub fn healed(&mut self, id: &str, by: &str) -> Result<(), String> {
        self.append(&Entry::Healed {
            id: id.to_string(),
            at: now(),
            by: by.to_string(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opened(id: &str) -> Opened {
        Opened {
            id: id.into(),
            run: "r1".into(),
            pid: 7,
            at: "2026-11-22T02:00:00Z".into(),
            fabric: "lab".into(),
            test: "leaf-reset".into(),
            host: "leaf1".into(),
            what: "leaf1: swp31 down".into(),
            prior: "swp31 admin up 1/1".into(),
            undo: vec!["sh".into(), "-c".into(), "ip link set dev swp31 up".into()],
            undo_query: None,
            platform: "linux".into(),
            ports: vec!["swp31".into()],
            deadman_s: Some(70),
        }
    }

    fn locked(journal: &Path) -> FabricLock {
        let me = lock::Holder::this_process("r1", "2026-11-22T02:00:00Z");
        FabricLock::acquire(journal, "lab", &me).unwrap().0
    }

    #[test]
    fn open_until_healed_and_survives_reopening() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state/rocegate/journal/lab.jsonl");
        {
            let held = locked(&path);
            let mut j = Journal::open(&path, &held).unwrap();
            j.append(&Entry::Opened(Box::new(opened("a")))).unwrap();
            j.append(&Entry::Opened(Box::new(opened("b")))).unwrap();
            j.healed("a", "run").unwrap();
        }
        let held = locked(&path);
        let j = Journal::open(&path, &held).unwrap();
        let open = open_faults(&j.entries().unwrap());
        assert_eq!(open, vec![opened("b")]);
    }

    #[test]
    fn opening_cuts_a_torn_last_line_so_the_next_entry_stands_alone() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("lab.jsonl");
        let good = serde_json::to_string(&Entry::Opened(Box::new(opened("a")))).unwrap();
        std::fs::write(&path, format!("{good}\n{{\"event\":\"hea")).unwrap();
        let held = locked(&path);
        let mut j = Journal::open(&path, &held).unwrap();
        j.healed("a", "recover").unwrap();
        assert!(open_faults(&j.entries().unwrap()).is_empty());
        // The lock file sits beside it, whatever the journal is called.
        assert!(dir.path().join("lab.jsonl.lock").exists());
    }

    #[test]
    fn opening_without_its_lock_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let other = locked(&dir.path().join("other.jsonl"));
        let e = Journal::open(&dir.path().join("lab.jsonl"), &other)
            .err()
            .unwrap();
        assert!(e.contains("opened without its run lock"), "{e}");
    }

    #[test]
    fn a_torn_last_line_is_ignored_a_damaged_middle_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("lab.jsonl");
        let good = serde_json::to_string(&Entry::Opened(Box::new(opened("a")))).unwrap();
        std::fs::write(&path, format!("{good}\n{{\"event\":\"hea")).unwrap();
        assert_eq!(open_faults(&read(&path).unwrap()).len(), 1);
        std::fs::write(&path, format!("garbage\n{good}\n")).unwrap();
        let e = read(&path).unwrap_err();
        assert!(e.contains("lab.jsonl:1: not a journal entry"), "{e}");
        assert!(read(&dir.path().join("none.jsonl")).unwrap().is_empty());
    }

    #[test]
    fn default_path_is_per_fabric_under_the_state_directory() {
        // Only the shape: the environment is the process's own.
        if let Ok(p) = default_path("emu pod/1") {
            assert!(
                p.ends_with("rocegate/journal/emu_pod_1.jsonl"),
                "{}",
                p.display()
            );
        }
    }
}
