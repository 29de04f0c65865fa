//! The per-fabric run lock: one file beside the fault journal
//! (`<journal>.lock`, so `$XDG_STATE_HOME/rocegate/journal/<fabric>.jsonl.lock`
//! by default), `flock`ed for as long as a `run` or `recover` acts on real
//! devices of that fabric, and holding who that is (user, host, pid, run
//! id, start time) so the next one can say whom it waits for.
//!
//! It protects one controller host. `flock` is the authority on the host
//! that holds it: a holder killed outright releases it with its last
//! descriptor, and the next run on that host takes over the record it left
//! (saying so). A record written on another host cannot be checked from
//! here (its pid means nothing here, and `flock` over NFS is not to be
//! trusted), so it is refused with the way to clear it. Two controllers
//! with separate state directories do not see each other at all.
//!
//! Not a lock on the emulated fabric: nothing real is touched there, and
//! many emulated runs side by side are how the tests and benchmarks work.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, Write};
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// Who holds the lock: one JSON line in the lock file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Holder {
    pub user: String,
    pub host: String,
    pub pid: u32,
    /// The run id (`<stamp>-<pid>`), or `recover`.
    pub run: String,
    /// RFC 3339, UTC.
    pub started: String,
}

impl Holder {
    /// This process, acting as `run`.
    pub fn this_process(run: &str, started: &str) -> Holder {
        Holder {
            user: user(),
            host: hostname(),
            pid: std::process::id(),
            run: run.to_string(),
            started: started.to_string(),
        }
    }

    fn describe(&self) -> String {
        format!(
            "run {} (user {}, pid {} on {}, started {})",
            self.run, self.user, self.pid, self.host, self.started
        )
    }
}

/// The held lock. Dropping it empties the record, then closes the file,
/// which releases the `flock`.
#[derive(Debug)]
pub struct FabricLock {
    path: PathBuf,
    file: File,
}

/// `<journal>.lock`, whatever the journal is called.
pub fn path_for(journal: &Path) -> PathBuf {
    let mut name = journal.as_os_str().to_os_string();
    name.push(".lock");
    PathBuf::from(name)
}

/// This machine's name, as `gethostname` gives it.
pub fn hostname() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: the buffer is valid for its length; gethostname NUL-terminates
    // within it or truncates, and we stop at the first NUL either way.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    if rc != 0 {
        return "unknown host".into();
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).into_owned()
}

fn user() -> String {
    ["USER", "LOGNAME"]
        .iter()
        .filter_map(|k| std::env::var(k).ok())
        .find(|v| !v.is_empty())
        // SAFETY: getuid cannot fail.
        .unwrap_or_else(|| format!("uid {}", unsafe { libc::getuid() }))
}

/// Whether `pid` names a live process on this host.
fn alive(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    if pid <= 0 {
        return false;
    }
    // SAFETY: signal 0 only checks that the process exists.
    let rc = unsafe { libc::kill(pid, 0) };
    rc == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

/// Creates `dir` and the directories above it that are missing, syncing
/// each new entry so that the journal's own survives a power cut.
pub fn create_dir_synced(dir: &Path, what: &str) -> Result<(), String> {
    let mut created = Vec::new();
    let mut d = Some(dir);
    while let Some(x) = d.filter(|x| !x.as_os_str().is_empty() && !x.exists()) {
        created.push(x.to_path_buf());
        d = x.parent();
    }
    std::fs::create_dir_all(dir).map_err(|e| {
        format!(
            "{}: cannot create {what}: {e} (choose another with --journal)",
            dir.display()
        )
    })?;
    for c in &created {
        sync_dir(c);
        if let Some(p) = c.parent() {
            sync_dir(p);
        }
    }
    Ok(())
}

pub(crate) fn sync_dir(dir: &Path) {
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
}

impl FabricLock {
    /// Takes the lock of the fabric whose journal is `journal`, for `me`.
    /// `Ok` carries a note to show when a dead holder's record was taken
    /// over. `Err` (nothing written) when a live rocegate holds it, when
    /// its record comes from another host, or when the file cannot be
    /// locked; each message says what to do.
    pub fn acquire(
        journal: &Path,
        fabric: &str,
        me: &Holder,
    ) -> Result<(FabricLock, Option<String>), String> {
        let path = path_for(journal);
        let dir = path
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        create_dir_synced(dir, "the fault journal's directory")?;
        let mut file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .read(true)
            .write(true)
            .open(&path)
            .map_err(|e| format!("{}: cannot open the run lock: {e}", path.display()))?;
        // SAFETY: flock on a descriptor this function owns.
        if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
            let e = std::io::Error::last_os_error();
            if e.raw_os_error() != Some(libc::EWOULDBLOCK) {
                return Err(format!(
                    "{}: cannot lock the run lock: {e}; put rocegate's state on a local filesystem (XDG_STATE_HOME, or --journal)",
                    path.display()
                ));
            }
            let who = match read_holder(&mut file) {
                Some(Ok(h)) => h.describe(),
                Some(Err(text)) => format!("another rocegate ({text})"),
                None => "another rocegate".to_string(),
            };
            return Err(format!(
                "fabric {fabric} is in use by {who}: one run at a time acts on a fabric; wait for it to finish, or stop it (a stopped run heals its faults and hands the lock on) [lock: {}]",
                path.display()
            ));
        }
        let note = match read_holder(&mut file) {
            None | Some(Err(_)) => None,
            Some(Ok(h)) if h.host != me.host => {
                return Err(format!(
                    "fabric {fabric} is locked by {}, on another host: the run lock protects one controller host, and rocegate cannot tell from {} whether that run is over. Run from {} or wait for it; if it is over (killed, or its host is gone), run `rocegate recover` to heal what it left open, then remove {}",
                    h.describe(),
                    me.host,
                    h.host,
                    path.display()
                ));
            }
            Some(Ok(h)) => Some(if alive(h.pid) && h.pid != me.pid {
                format!(
                    "taking over the run lock of fabric {fabric} from {}: it no longer holds it (pid {} is now another process)",
                    h.describe(),
                    h.pid
                )
            } else {
                format!(
                    "taking over the run lock of fabric {fabric} from {}, which is no longer running",
                    h.describe()
                )
            }),
        };
        let mut line = serde_json::to_string(me).map_err(|e| e.to_string())?;
        line.push('\n');
        file.set_len(0)
            .and_then(|()| file.rewind())
            .and_then(|()| file.write_all(line.as_bytes()))
            .and_then(|()| file.sync_data())
            .map_err(|e| format!("{}: cannot write the run lock: {e}", path.display()))?;
        Ok((FabricLock { path, file }, note))
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for FabricLock {
    fn drop(&mut self) {
        // An empty record is a free lock; the flock goes with the file.
        let _ = self.file.set_len(0);
        let _ = self.file.sync_data();
    }
}

/// The record in the lock file: `None` when empty, `Err` with the text when
/// it is not a record (an older rocegate wrote `pid N` there).
fn read_holder(file: &mut File) -> Option<Result<Holder, String>> {
    let mut text = String::new();
    let read = file
        .rewind()
        .and_then(|()| file.take(4096).read_to_string(&mut text));
    let text = text.trim();
    if read.is_err() || text.is_empty() {
        return None;
    }
    Some(serde_json::from_str(text).map_err(|_| text.chars().take(200).collect()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn me(run: &str) -> Holder {
        Holder::this_process(run, "2026-11-22T02:00:00Z")
    }

    /// A pid no process has: Linux hands out pids below `pid_max`. (Not a
    /// child that exited: forking here would let the child share, for an
    /// instant, a lock another test holds.)
    fn dead_pid() -> u32 {
        std::fs::read_to_string("/proc/sys/kernel/pid_max")
            .ok()
            .and_then(|t| t.trim().parse().ok())
            .unwrap_or(4_194_304)
    }

    #[test]
    fn a_second_holder_is_refused_by_name_and_the_lock_is_free_after() {
        let dir = tempfile::tempdir().unwrap();
        let journal = dir.path().join("state/rocegate/journal/lab.jsonl");
        let (first, note) = FabricLock::acquire(&journal, "lab", &me("r1")).unwrap();
        assert_eq!(note, None);
        assert!(first.path().ends_with("lab.jsonl.lock"));
        let e = FabricLock::acquire(&journal, "lab", &me("r2")).unwrap_err();
        assert!(
            e.starts_with("fabric lab is in use by run r1 (user "),
            "{e}"
        );
        assert!(
            e.contains(&format!("pid {} on {}", std::process::id(), hostname())),
            "{e}"
        );
        drop(first);
        assert_eq!(std::fs::read(path_for(&journal)).unwrap(), b"");
        let (_again, note) = FabricLock::acquire(&journal, "lab", &me("r3")).unwrap();
        assert_eq!(note, None);
    }

    #[test]
    fn a_dead_holder_on_this_host_is_taken_over_with_a_note() {
        let dir = tempfile::tempdir().unwrap();
        let journal = dir.path().join("lab.jsonl");
        let dead = Holder {
            pid: dead_pid(),
            ..me("r0")
        };
        std::fs::write(
            path_for(&journal),
            serde_json::to_string(&dead).unwrap() + "\n",
        )
        .unwrap();
        let (_lock, note) = FabricLock::acquire(&journal, "lab", &me("r1")).unwrap();
        let note = note.expect("a takeover note");
        assert!(
            note.contains(&format!(
                "from run r0 (user {}, pid {}",
                dead.user, dead.pid
            )) && note.ends_with("which is no longer running"),
            "{note}"
        );
        let now: Holder =
            serde_json::from_str(&std::fs::read_to_string(path_for(&journal)).unwrap()).unwrap();
        assert_eq!(now.run, "r1");
    }

    #[test]
    fn a_holder_on_another_host_is_refused_with_how_to_clear_it() {
        let dir = tempfile::tempdir().unwrap();
        let journal = dir.path().join("lab.jsonl");
        let other = Holder {
            host: "ctl-b".into(),
            ..me("r0")
        };
        let record = serde_json::to_string(&other).unwrap() + "\n";
        std::fs::write(path_for(&journal), &record).unwrap();
        let e = FabricLock::acquire(&journal, "lab", &me("r1")).unwrap_err();
        assert!(
            e.contains("on another host") && e.contains("rocegate recover"),
            "{e}"
        );
        assert!(
            e.ends_with(&format!("remove {}", path_for(&journal).display())),
            "{e}"
        );
        // Refused means untouched.
        assert_eq!(std::fs::read_to_string(path_for(&journal)).unwrap(), record);
    }

    #[test]
    fn an_old_pid_only_record_is_not_a_holder() {
        let dir = tempfile::tempdir().unwrap();
        let journal = dir.path().join("lab.jsonl");
        std::fs::write(path_for(&journal), "pid 12").unwrap();
        let (_lock, note) = FabricLock::acquire(&journal, "lab", &me("r1")).unwrap();
        assert_eq!(note, None);
    }
}
