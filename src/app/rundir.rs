//! The run directory: claimed atomically so two runs never share one, and
//! written so that a failed write stops the run instead of losing results.
//!
//! Claiming: the directory's `claim` file is created exclusively
//! (`O_EXCL`), holding who took it (run id, pid, host, start time). A
//! second run into the same `--out` finds it and refuses, naming the
//! holder. The default directory `reports/<suite>-<UTC time>` gains a
//! `-2`, `-3`… suffix when another run of the same suite took that second.
//!
//! Writing: `results.jsonl` is appended record by record; the first write
//! that fails (a full disk, a revoked mount) is cut back to the last whole
//! record, said at once on stderr with the file and the OS error, and
//! cancels the run like a Ctrl-C: running steps stop, faults are healed,
//! the exit is 3. From then on no record is kept in memory either, so no
//! output claims a result that results.jsonl does not hold.
//!
//! Until the run finishes, junit.xml is a provisional one (rewritten at
//! the start and at each new test) whose first testcase is the "run
//! incomplete" error: a run killed outright leaves a JUnit that fails CI.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::exit::AppError;
use crate::report::events::{RawOutput, Record};

/// The claim file's name inside a run directory.
pub const CLAIM: &str = "claim";

/// `20261122T021500Z`: for names.
pub fn stamp(now: time::OffsetDateTime) -> String {
    format!(
        "{:04}{:02}{:02}T{:02}{:02}{:02}Z",
        now.year(),
        now.month() as u8,
        now.day(),
        now.hour(),
        now.minute(),
        now.second()
    )
}

use crate::fault::lock::hostname;

/// Creates `dir/claim` exclusively; `Ok(false)` when another run holds it.
/// The claim is written under a name of its own and then linked into
/// place, so a run that loses the race always reads who won, never an
/// empty file.
fn claim(dir: &Path, run_id: &str, started: &str) -> std::io::Result<bool> {
    use std::io::Write;
    let mine = dir.join(format!(".{CLAIM}.{}", std::process::id()));
    let mut f = std::fs::File::create(&mine)?;
    let text = format!(
        "run {run_id} (pid {} on {}, started {started})\n",
        std::process::id(),
        hostname()
    );
    let linked = f
        .write_all(text.as_bytes())
        .and_then(|()| f.sync_all())
        .and_then(|()| std::fs::hard_link(&mine, dir.join(CLAIM)));
    let _ = std::fs::remove_file(&mine);
    match linked {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(false),
        // A file system without hard links: created exclusively, then
        // written (a loser may read it empty and say "another run").
        Err(_) => match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(dir.join(CLAIM))
        {
            Ok(mut f) => {
                f.write_all(text.as_bytes())?;
                f.sync_all()?;
                Ok(true)
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(false),
            Err(e) => Err(e),
        },
    }
}

/// Who holds `dir`, as its claim file says (or what else is there).
fn holder(dir: &Path) -> String {
    let text = std::fs::read(dir.join(CLAIM))
        .map(|b| {
            String::from_utf8_lossy(&b[..b.len().min(200)])
                .trim()
                .to_string()
        })
        .unwrap_or_default();
    if !text.is_empty() {
        text
    } else if dir.join("results.jsonl").exists() {
        "an earlier run (its results.jsonl is there)".into()
    } else {
        "another run".into()
    }
}

/// Claims the run directory: `out` as given, else `reports/<suite>-<stamp>`
/// (suffixed when taken). `suite` becomes a path component and must be one.
pub fn claim_run_dir(
    out: Option<&str>,
    suite: &str,
    now: time::OffsetDateTime,
    run_id: &str,
) -> Result<PathBuf, AppError> {
    let started = super::rfc3339(now);
    let cannot = |dir: &Path, e: std::io::Error| {
        AppError::Input(format!(
            "{}: cannot create the run directory: {e}",
            dir.display()
        ))
    };
    let make = |dir: &Path| -> Result<Option<PathBuf>, AppError> {
        if let Some(parent) = dir.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(|e| cannot(parent, e))?;
        }
        match std::fs::create_dir(dir) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && dir.is_dir() => {
                // An empty directory the user made for us is fine;
                // the claim below decides who gets it.
                if dir.join("results.jsonl").exists() && !dir.join(CLAIM).exists() {
                    return Ok(None);
                }
            }
            Err(e) => return Err(cannot(dir, e)),
        }
        if !claim(dir, run_id, &started).map_err(|e| cannot(dir, e))? {
            return Ok(None);
        }
        std::fs::create_dir_all(dir.join("raw")).map_err(|e| cannot(dir, e))?;
        Ok(Some(dir.to_path_buf()))
    };
    match out {
        Some(o) => {
            let dir = PathBuf::from(o);
            make(&dir)?.ok_or_else(|| {
                AppError::Input(format!(
                    "{}: already used by {}; choose another --out or remove it",
                    dir.display(),
                    holder(&dir)
                ))
            })
        }
        None => {
            let name = format!("{suite}-{}", stamp(now));
            let base = crate::paths::join_within(Path::new("reports"), &name)
                .map_err(|e| AppError::Input(format!("suite name: {e}")))?;
            for n in 1..=100 {
                let dir = if n == 1 {
                    base.clone()
                } else {
                    PathBuf::from(format!("{}-{n}", base.display()))
                };
                if let Some(d) = make(&dir)? {
                    return Ok(d);
                }
            }
            Err(AppError::Input(format!(
                "{}: 100 runs of this suite already started this second; use --out",
                base.display()
            )))
        }
    }
}

/// The first output write that failed, shared by everything that writes
/// into the run directory; setting it cancels the run.
#[derive(Clone)]
pub struct OutputFailure {
    first: Arc<Mutex<Option<String>>>,
    cancel: tokio::sync::watch::Sender<bool>,
}

impl OutputFailure {
    pub fn new(cancel: tokio::sync::watch::Sender<bool>) -> Self {
        OutputFailure {
            first: Arc::new(Mutex::new(None)),
            cancel,
        }
    }

    /// Records the failure (the first one wins), says it, and stops the run.
    pub fn fail(&self, path: &Path, e: &std::io::Error) {
        let mut first = self.first.lock().unwrap_or_else(|p| p.into_inner());
        if first.is_some() {
            return;
        }
        let msg = format!("{}: cannot write: {e}", path.display());
        eprintln!(
            "rocegate: {msg}: stopping the run (faults are healed; what was written before is intact)"
        );
        *first = Some(msg);
        let _ = self.cancel.send(true);
    }

    pub fn get(&self) -> Option<String> {
        self.first.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

/// Records in memory (for the outputs built at the end) and on disk as they
/// come; after a failed write, neither.
pub struct RunSinks {
    pub jsonl: crate::report::jsonl::JsonlWriter,
    pub path: PathBuf,
    pub records: Vec<Record>,
    pub failure: OutputFailure,
    /// The run directory, for the provisional junit.xml.
    pub dir: PathBuf,
    /// The test whose rounds run now.
    pub current_test: Option<String>,
}

impl RunSinks {
    /// Writes junit.xml as the run stands: until run_finished it carries
    /// the "run incomplete" error, so CI that reads the file of a run
    /// killed with SIGKILL sees an error, never a clean partial pass.
    pub fn provisional_junit(&mut self) {
        if self.failure.get().is_some() {
            return;
        }
        let Ok(xml) = crate::report::junit::render(
            &self.records,
            &self.dir,
            crate::report::junit::DEFAULT_ROLLUP,
        ) else {
            return;
        };
        let path = self.dir.join("junit.xml");
        if let Err(e) = crate::paths::write_atomic(&path, xml.as_bytes()) {
            self.failure.fail(&path, &e);
        }
    }
}

impl crate::report::sink::Sink for RunSinks {
    fn record(&mut self, r: &Record) {
        // After a failure only run_finished is tried: if it lands, the log
        // says why it ends early; if not, it ends without one, which every
        // reader takes as incomplete.
        let last = matches!(r, Record::RunFinished(_));
        if self.failure.get().is_some() && !last {
            return;
        }
        let written = self
            .jsonl
            .write(r)
            .and_then(|_| if last { self.jsonl.sync() } else { Ok(()) });
        match written {
            Ok(()) => self.records.push(r.clone()),
            Err(e) => self.failure.fail(&self.path, &e),
        }
    }

    fn recorded(&self) -> Option<&[Record]> {
        Some(&self.records)
    }

    /// Each raw output in its own file under `raw/`; a write that fails
    /// stops the run like a failed record.
    fn raw(&mut self, out: &RawOutput) -> Option<String> {
        let rel = crate::report::raw::rel_path_of(out);
        let text = crate::report::raw::render(out.commands, out.outputs);
        match crate::report::raw::write(&self.dir, &rel, &text) {
            Ok(()) => Some(rel),
            Err(e) => {
                self.failure.fail(&self.dir.join(&rel), &e);
                None
            }
        }
    }

    /// Every record is written (flushed to the kernel) as it comes; it is
    /// synced to disk once per round, so a power cut loses at most the round
    /// that was running, and a 20,000-step run does not wait on 20,000 syncs.
    fn round_started(&mut self, test: &str, _: usize, _: usize, _: u32, _: usize) {
        if self.failure.get().is_none() {
            if let Err(e) = self.jsonl.sync() {
                self.failure.fail(&self.path, &e);
            }
        }
        if self.current_test.as_deref() != Some(test) {
            self.current_test = Some(test.to_string());
            self.provisional_junit();
        }
    }
}

/// Writes junit.xml, report.html and summary.json, each whole or not at all.
pub fn write_outputs(dir: &Path, records: &[Record]) -> Result<(), String> {
    let write = |name: &str, bytes: &[u8]| {
        crate::paths::write_atomic(&dir.join(name), bytes)
            .map_err(|e| format!("{}: cannot write: {e}", dir.join(name).display()))
    };
    let junit = crate::report::junit::render(records, dir, crate::report::junit::DEFAULT_ROLLUP)?;
    write("junit.xml", junit.as_bytes())?;
    write(
        "report.html",
        crate::report::html::render(records, dir).as_bytes(),
    )?;
    let summary = crate::report::summary::summary_json(records, &dir.display().to_string());
    write(
        "summary.json",
        (serde_json::to_string_pretty(&summary).unwrap_or_default() + "\n").as_bytes(),
    )
}
