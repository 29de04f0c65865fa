//! `results.jsonl`: one record per line, appended and flushed (and synced)
//! as each step ends, so a crash loses nothing that finished.

use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;

use super::events::Record;

pub struct JsonlWriter {
    file: File,
    /// Bytes of whole records written so far: a failed write is cut back
    /// to this, so the file never ends in a torn record that a later
    /// successful write would bury mid-file.
    len: u64,
}

impl JsonlWriter {
    pub fn create(path: &Path) -> std::io::Result<Self> {
        let file = OpenOptions::new().create(true).append(true).open(path)?;
        let len = file.metadata()?.len();
        Ok(JsonlWriter { file, len })
    }

    pub fn write(&mut self, r: &Record) -> std::io::Result<()> {
        let mut line = serde_json::to_string(r).map_err(std::io::Error::other)?;
        line.push('\n');
        match self
            .file
            .write_all(line.as_bytes())
            .and_then(|_| self.file.flush())
        {
            Ok(()) => {
                self.len += line.len() as u64;
                Ok(())
            }
            Err(e) => {
                let _ = self.file.set_len(self.len);
                Err(e)
            }
        }
    }

    /// Forces what was written to disk (after verdicts and at the end).
    pub fn sync(&mut self) -> std::io::Result<()> {
        self.file.sync_data()
    }
}

/// Reads every record; a torn last line (a crash mid-write) is skipped, any
/// other bad line is an error naming its line number.
pub fn read(path: &Path) -> Result<Vec<Record>, String> {
    let f = File::open(path).map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
    let lines: Vec<String> = BufReader::new(f)
        .lines()
        .collect::<Result<_, _>>()
        .map_err(|e| format!("{}: {e}", path.display()))?;
    let mut out = Vec::with_capacity(lines.len());
    for (i, line) in lines.iter().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<Record>(line) {
            Ok(r) => out.push(r),
            Err(_) if i + 1 == lines.len() => break,
            Err(e) => {
                return Err(format!(
                    "{}:{}: not a rocegate record: {e}",
                    path.display(),
                    i + 1
                ))
            }
        }
    }
    Ok(out)
}
