//! Every path rocegate writes or reads back under a directory of its own
//! (a run directory, its `raw/`, the journal directory) is built here, from
//! relative parts that cannot leave that directory: no absolute paths, no
//! `..`, no empty or `.` components, no control characters. Names are
//! validated at load already; this is the second line, for names that come
//! back from a hand-edited `results.jsonl` or a future caller that forgot.
//!
//! Not for paths the user chose (`--out`, `-o`, `-i`): those go where the
//! user said.

use std::fmt;
use std::path::{Component, Path, PathBuf};

/// A relative path that would leave its directory, with the reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Escape {
    pub rel: String,
    pub why: &'static str,
}

impl fmt::Display for Escape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "refused path {}: {}",
            crate::config::diag::quote(&self.rel),
            self.why
        )
    }
}

impl std::error::Error for Escape {}

/// Where rocegate keeps state between runs (the fault journal, baselines):
/// `$XDG_STATE_HOME`, else `~/.local/state`; `None` when neither is set.
pub fn state_base() -> Option<PathBuf> {
    std::env::var_os("XDG_STATE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|v| !v.is_empty())
                .map(|h| PathBuf::from(h).join(".local/state"))
        })
}

/// Checks one component: a plain file or directory name.
/// A new directory `<tmp>/<prefix>-<pid>-<n>`, created exclusively and
/// private (0700 from the start): a directory someone else made at the same
/// predictable name is never used.
pub fn private_temp_dir(prefix: &str) -> std::io::Result<PathBuf> {
    use std::os::unix::fs::DirBuilderExt;
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    loop {
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("{prefix}-{}-{n}", std::process::id()));
        match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && n < 1000 => continue,
            Err(e) => return Err(e),
        }
    }
}

/// `path` holds all of `bytes` or, on any error, is left as it was. The
/// temporary file is hidden (a `*.prom` textfile collector or a glob over
/// the run directory never reads half a file) and named for this writer
/// (process and call), so two writers of one file, e.g. two `rocegate
/// report` over one run, never rename each other's half-written bytes; the
/// last rename wins whole.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    static SEQ: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let seq = SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.{}-{seq}.tmp", std::process::id()));
    let result = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&tmp)
        .and_then(|mut f| {
            std::io::Write::write_all(&mut f, bytes).and_then(|()| std::io::Write::flush(&mut f))
        })
        .and_then(|()| std::fs::rename(&tmp, path));
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

pub fn component(name: &str) -> Result<&str, Escape> {
    let why = if name.is_empty() {
        Some("an empty name")
    } else if name == "." || name == ".." {
        Some("`.` and `..` are not names")
    } else if name.contains(['/', '\\']) {
        Some("a name cannot hold a path separator")
    } else if name.chars().any(char::is_control) {
        Some("a name cannot hold control characters")
    } else if name.len() > 255 {
        Some("a name is at most 255 bytes")
    } else {
        None
    };
    match why {
        Some(why) => Err(Escape {
            rel: name.to_string(),
            why,
        }),
        None => Ok(name),
    }
}

/// `base` joined with `rel` (`/`-separated), refusing any `rel` that is
/// absolute or has a component that is not a plain name.
pub fn join_within(base: &Path, rel: &str) -> Result<PathBuf, Escape> {
    let escape = |why| Escape {
        rel: rel.to_string(),
        why,
    };
    if rel.is_empty() {
        return Err(escape("an empty path"));
    }
    if Path::new(rel).is_absolute() {
        return Err(escape("an absolute path"));
    }
    let mut out = base.to_path_buf();
    for part in rel.split('/') {
        component(part).map_err(|e| escape(e.why))?;
        // Belt and braces: std's own reading of the part is a plain name.
        let mut parts = Path::new(part).components();
        match (parts.next(), parts.next()) {
            (Some(Component::Normal(_)), None) => out.push(part),
            _ => return Err(escape("not a plain name")),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn plain_relative_paths_join() {
        let p = join_within(Path::new("/run"), "raw/rail-bw/r0000-x00-s00001.txt").unwrap();
        assert_eq!(p, Path::new("/run/raw/rail-bw/r0000-x00-s00001.txt"));
    }

    #[test]
    fn escapes_are_refused() {
        for bad in [
            "",
            "/etc/passwd",
            "../x",
            "raw/../../x",
            "raw/./x",
            "raw//x",
            "raw/x/",
            "raw/\u{0}",
            "raw/a\nb",
            "..",
            "raw\\..\\x",
        ] {
            let e = join_within(Path::new("/run"), bad).unwrap_err();
            assert!(!e.to_string().is_empty(), "{bad:?}");
        }
        assert!(component("../../../../x").is_err());
        assert!(component(&"a".repeat(300)).is_err());
    }

    proptest! {
        /// Whatever the input, a joined path stays under its base.
        #[test]
        fn never_leaves_its_base(rel in "[a-z./\\\\\u{0}-\u{1f}]{0,24}") {
            let base = Path::new("/base/dir");
            if let Ok(p) = join_within(base, &rel) {
                prop_assert!(p.starts_with(base));
                prop_assert!(p.components().all(|c| matches!(c, Component::RootDir | Component::Normal(_))));
                prop_assert!(p.components().count() > base.components().count());
            }
        }
    }

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn atomic_write_replaces_whole_and_leaves_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("rocegate_f_s.prom");
        std::fs::write(&p, "old\n").unwrap();
        write_atomic(&p, b"new\n").unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "new\n");
        assert_eq!(names(dir.path()), vec!["rocegate_f_s.prom".to_string()]);
        // A directory that does not exist: an error, nothing written.
        let missing = dir.path().join("no/such/x.prom");
        assert!(write_atomic(&missing, b"x").is_err());
        assert!(!missing.exists());
    }

    /// Many writers of one file at once (two `rocegate report` over one
    /// run): every write succeeds and the file is one writer's bytes whole.
    #[test]
    fn concurrent_writers_of_one_file_never_fail_or_tear() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("summary.json");
        let bodies: Vec<Vec<u8>> = (0..8u8).map(|i| vec![b'a' + i; 64 * 1024]).collect();
        std::thread::scope(|s| {
            for body in &bodies {
                let p = &p;
                s.spawn(move || {
                    for _ in 0..50 {
                        write_atomic(p, body).unwrap();
                    }
                });
            }
        });
        let got = std::fs::read(&p).unwrap();
        assert!(
            bodies.contains(&got),
            "the file is no one writer's whole bytes"
        );
        assert_eq!(names(dir.path()), vec!["summary.json".to_string()]);
    }
}
