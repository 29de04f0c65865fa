//! Where the inventory and suite come from: the paths given, else the
//! shipped files in the working directory, else copies built into the
//! binary, so `rocegate run` works from anywhere. Every input file is read
//! the same bounded way ([`read_limited`]): only a regular file, at most
//! [`max_input_bytes`] bytes, valid UTF-8.

use std::io::Read;
use std::sync::OnceLock;

use crate::config::check::{parse_inventory, read_source};
use crate::config::check_suite::Suite;
use crate::config::model::Inventory;
use crate::config::units::{format_size, parse_size};
use crate::exit::AppError;

/// The largest input file read by default. A generated 4,096-node inventory
/// is about 4 MB; 16 MiB leaves room for four times that and still refuses
/// a log or a disk image given by mistake before it fills memory.
pub const DEFAULT_MAX_INPUT_BYTES: u64 = 16 << 20;

/// Environment variable that raises (or lowers) the input size limit;
/// `--max-input-size` wins over it.
pub const MAX_INPUT_ENV: &str = "ROCEGATE_MAX_INPUT_BYTES";

static MAX_INPUT_FROM_CLI: OnceLock<u64> = OnceLock::new();

/// Sets the input size limit from the command line (`--max-input-size`,
/// e.g. `64MiB`); called once by main before anything is read.
pub fn set_max_input_size(size: Option<&str>) -> Result<(), AppError> {
    let Some(size) = size else {
        return Ok(());
    };
    let n = parse_limit(size).map_err(|e| AppError::Input(format!("--max-input-size: {e}")))?;
    let _ = MAX_INPUT_FROM_CLI.set(n);
    Ok(())
}

fn parse_limit(s: &str) -> Result<u64, String> {
    match parse_size(s) {
        Ok(0) => Err(format!("\"{s}\" is zero; give a size such as 64MiB")),
        Ok(n) => Ok(n),
        Err(e) => Err(e),
    }
}

/// The input size limit: `--max-input-size`, else `ROCEGATE_MAX_INPUT_BYTES`,
/// else [`DEFAULT_MAX_INPUT_BYTES`]. A malformed environment value is an
/// error rather than silently the default.
pub fn max_input_bytes() -> Result<u64, String> {
    if let Some(n) = MAX_INPUT_FROM_CLI.get() {
        return Ok(*n);
    }
    match std::env::var(MAX_INPUT_ENV) {
        Ok(v) => parse_limit(&v).map_err(|e| format!("{MAX_INPUT_ENV}: {e}")),
        Err(std::env::VarError::NotPresent) => Ok(DEFAULT_MAX_INPUT_BYTES),
        Err(std::env::VarError::NotUnicode(_)) => {
            Err(format!("{MAX_INPUT_ENV} is not valid UTF-8"))
        }
    }
}

/// Why `path` cannot be read as an input, without the path; see
/// [`read_limited`].
pub fn read_limited_reason(path: &str, limit: u64) -> Result<String, String> {
    utf8(read_bytes_reason(path, limit)?)
}

/// The bytes of `path`, checked as [`read_limited`] checks it but not
/// required to be UTF-8 (a tool's log may hold stray bytes); the error is
/// `PATH: reason`.
pub fn read_bytes_limited(path: &str, limit: u64) -> Result<Vec<u8>, String> {
    read_bytes_reason(path, limit).map_err(|e| format!("{path}: {e}"))
}

/// Standard input as [`read_bytes_limited`] reads a file.
pub fn read_stdin_bytes_limited(limit: u64) -> Result<Vec<u8>, String> {
    read_bounded(std::io::stdin().lock(), limit).map_err(|e| format!("<stdin>: {e}"))
}

fn read_bytes_reason(path: &str, limit: u64) -> Result<Vec<u8>, String> {
    // Refuse anything but a regular file before opening it: opening a FIFO
    // with no writer blocks forever, and /dev/zero never ends. metadata()
    // follows symlinks, so a link to a regular file is fine.
    let meta = std::fs::metadata(path).map_err(|e| format!("cannot read: {e}"))?;
    not_regular(&meta)?;
    if meta.len() > limit {
        return Err(too_large(limit, Some(meta.len())));
    }
    // O_NONBLOCK: should the path have been swapped for a FIFO since the
    // check, the open returns at once and the check below refuses it.
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| format!("cannot read: {e}"))?;
    not_regular(&file.metadata().map_err(|e| format!("cannot read: {e}"))?)?;
    read_bounded(file, limit)
}

/// Reads the input file `path`: a regular file (symlinks followed; a FIFO,
/// device or directory is refused before it is opened), at most `limit`
/// bytes, valid UTF-8. The error is one line, `PATH: reason`, naming the
/// limit and how to raise it when the file is too large.
pub fn read_limited(path: &str, limit: u64) -> Result<String, String> {
    read_limited_reason(path, limit).map_err(|e| format!("{path}: {e}"))
}

/// Reads standard input as [`read_limited`] reads a file (for `-`).
pub fn read_stdin_limited(limit: u64) -> Result<String, String> {
    read_bounded(std::io::stdin().lock(), limit)
        .and_then(utf8)
        .map_err(|e| format!("<stdin>: {e}"))
}

fn not_regular(meta: &std::fs::Metadata) -> Result<(), String> {
    use std::os::unix::fs::FileTypeExt;
    let t = meta.file_type();
    let what = if t.is_file() {
        return Ok(());
    } else if t.is_dir() {
        "a directory"
    } else if t.is_fifo() {
        "a FIFO (named pipe)"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_socket() {
        "a socket"
    } else {
        "not a regular file"
    };
    Err(format!(
        "is {what}, not a regular file; give the path of a file (for a pipe, use - where a command reads standard input)"
    ))
}

fn too_large(limit: u64, size: Option<u64>) -> String {
    let size = match size {
        Some(n) => format!("is {n} bytes, over"),
        None => "is over".to_string(),
    };
    format!(
        "{size} the input limit of {}; raise it with --max-input-size SIZE or {MAX_INPUT_ENV}=SIZE (e.g. 64MiB)",
        format_limit(limit)
    )
}

/// `16 MiB`, `1500 bytes`: the limit as it was most likely written.
fn format_limit(n: u64) -> String {
    match format_size(n) {
        s if s.ends_with(['K', 'M', 'G']) => {
            format!("{} {}iB", &s[..s.len() - 1], &s[s.len() - 1..])
        }
        _ => format!("{n} bytes"),
    }
}

fn read_bounded(r: impl Read, limit: u64) -> Result<Vec<u8>, String> {
    let mut buf = Vec::new();
    r.take(limit.saturating_add(1))
        .read_to_end(&mut buf)
        .map_err(|e| format!("cannot read: {e}"))?;
    if buf.len() as u64 > limit {
        return Err(too_large(limit, None));
    }
    Ok(buf)
}

fn utf8(buf: Vec<u8>) -> Result<String, String> {
    String::from_utf8(buf).map_err(|e| {
        format!(
            "is not valid UTF-8 (first bad byte at offset {}); save it as UTF-8",
            e.utf8_error().valid_up_to()
        )
    })
}

pub const DEFAULT_INVENTORY: &str = "inventory/emulated.yaml";
pub const DEFAULT_SUITE: &str = "suites/acceptance.yaml";

const EMBEDDED: &[(&str, &str)] = &[
    (
        "inventory/emulated.yaml",
        include_str!("../inventory/emulated.yaml"),
    ),
    (
        "inventory/emulated-defects.yaml",
        include_str!("../inventory/emulated-defects.yaml"),
    ),
    (
        "suites/acceptance.yaml",
        include_str!("../suites/acceptance.yaml"),
    ),
];

/// Reads `path` with the input limits, falling back to the embedded copy of
/// a shipped default when no path is given and the default is not in the
/// working directory.
pub fn read(path: Option<&str>, default: &str) -> Result<(String, String), AppError> {
    match path {
        Some(p) => read_source(p)
            .map(|t| (p.to_string(), t))
            .map_err(AppError::from),
        None if std::path::Path::new(default).exists() => read_source(default)
            .map(|t| (default.to_string(), t))
            .map_err(AppError::from),
        None => EMBEDDED
            .iter()
            .find(|(name, _)| *name == default)
            .map(|(name, text)| (format!("<built-in>/{name}"), text.to_string()))
            .ok_or_else(|| AppError::Input(format!("{default}: not found and no built-in copy"))),
    }
}

pub struct Inputs {
    pub inventory: Inventory,
    pub suite: Suite,
    pub inventory_text: String,
    pub suite_text: String,
}

/// Loads and validates both files, reporting the problems of both at once.
pub fn load(inventory: Option<&str>, suite: Option<&str>) -> Result<Inputs, AppError> {
    load_seeded(inventory, suite, crate::config::check_suite::DEFAULT_SEED)
}

/// [`load`], resolving the suite's selectors with the run's `seed`.
pub fn load_seeded(
    inventory: Option<&str>,
    suite: Option<&str>,
    seed: u64,
) -> Result<Inputs, AppError> {
    let (ipath, itext) = read(inventory, DEFAULT_INVENTORY)?;
    let (spath, stext) = read(suite, DEFAULT_SUITE)?;
    let inv = match parse_inventory(&ipath, &itext) {
        Ok(inv) => inv,
        Err(mut d) => {
            // The suite cannot be checked against a broken inventory, but its
            // own YAML and schema can: report both files' problems at once.
            if let Err(e) = crate::config::yaml_guard::from_str::<crate::config::suite::SuiteFile>(
                &spath, &stext,
            ) {
                d.0.extend(e.0);
            }
            return Err(d.into());
        }
    };
    let suite = crate::config::check_suite::parse_suite_seeded(&spath, &stext, &inv, seed)?;
    Ok(Inputs {
        inventory: inv,
        suite,
        inventory_text: itext,
        suite_text: stext,
    })
}
