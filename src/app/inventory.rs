//! `rocegate inventory import`: reads what the operator already has (an
//! Ansible inventory, Slurm's node list), runs `ansible-inventory` where
//! Ansible's own reader is needed, and writes the skeleton. The parsing
//! itself is `config::import`; this is the I/O around it.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::cli::ImportArgs;
use crate::config::diag::{escaped, quote};
use crate::config::import::{self, ansible};
use crate::exit::{AppError, PASS};

/// How long `ansible-inventory` may take: it reads local files only (the
/// plugins that call out are disabled), so this is generous.
const ANSIBLE_TIMEOUT: Duration = Duration::from_secs(120);

pub fn import(a: &ImportArgs) -> Result<i32, AppError> {
    let (source, imported, command) = if let Some(file) = &a.ansible {
        let json = ansible_json(file)?;
        let imported =
            ansible::parse_list(file, &json, a.group.as_deref()).map_err(AppError::Input)?;
        (file.clone(), imported, format!("--ansible {file}"))
    } else if let Some(arg) = &a.slurm {
        let (label, text) = slurm_text(arg)?;
        let imported =
            import::slurm::parse(&label, &text, a.group.as_deref()).map_err(AppError::Input)?;
        (label, imported, format!("--slurm {arg}"))
    } else {
        return Err(AppError::Input(
            "inventory import: give --ansible FILE or --slurm FILE|HOSTLIST".into(),
        ));
    };
    let group = a
        .group
        .as_deref()
        .map(|g| format!(" --group {g}"))
        .unwrap_or_default();
    let name = a
        .name
        .clone()
        .or_else(|| {
            a.group
                .clone()
                .filter(|g| crate::config::names::is_path_name(g))
        })
        .unwrap_or_else(|| "pod".to_string());
    let yaml = import::skeleton(
        &source,
        &name,
        &format!("rocegate inventory import {command}{group}"),
        &imported,
    )
    .map_err(AppError::Input)?;
    write_output(a.output.as_deref(), &yaml)?;
    if let Some(out) = &a.output {
        eprintln!(
            "rocegate: wrote {out}: {} hosts; next: rocegate inventory discover -i {out} -o <pod.yaml>",
            imported.hosts.len()
        );
    }
    Ok(PASS)
}

/// Writes `text` to `path` whole or not at all (a temporary file renamed
/// over it), or to standard output.
pub fn write_output(path: Option<&str>, text: &str) -> Result<(), AppError> {
    let Some(path) = path else {
        use std::io::Write;
        let _ = std::io::stdout().write_all(text.as_bytes());
        return Ok(());
    };
    crate::paths::write_atomic(Path::new(path), text.as_bytes())
        .map_err(|e| AppError::Input(format!("{path}: cannot write: {e}")))
}

/// The `--slurm` argument's text: standard input for `-`, a file's content
/// when such a file exists, else the argument itself as a hostlist.
fn slurm_text(arg: &str) -> Result<(String, String), AppError> {
    let limit = crate::inputs::max_input_bytes().map_err(AppError::Input)?;
    if arg == "-" {
        let t = crate::inputs::read_stdin_limited(limit)
            .map_err(|e| AppError::Input(format!("standard input: {e}")))?;
        return Ok(("standard input".into(), t));
    }
    if Path::new(arg).exists() {
        let t = crate::inputs::read_limited_reason(arg, limit)
            .map_err(|e| AppError::Input(format!("{arg}: {e}")))?;
        return Ok((arg.to_string(), t));
    }
    // Said aloud: a mistyped file name would otherwise import one host
    // named after it.
    eprintln!(
        "rocegate: --slurm: no file named {}; reading it as a hostlist",
        quote(arg)
    );
    Ok(("--slurm".into(), arg.to_string()))
}

/// The JSON of `ansible-inventory --list` for `file`: the file itself when
/// it is that JSON, else what `ansible-inventory` prints for it.
fn ansible_json(file: &str) -> Result<String, AppError> {
    let p = Path::new(file);
    let meta = std::fs::metadata(p).map_err(|e| AppError::Input(format!("{file}: {e}")))?;
    if meta.is_file() {
        let limit = crate::inputs::max_input_bytes().map_err(AppError::Input)?;
        let text = crate::inputs::read_limited_reason(file, limit)
            .map_err(|e| AppError::Input(format!("{file}: {e}")))?;
        match ansible::detect(&text) {
            ansible::Kind::ListJson => return Ok(text),
            ansible::Kind::Vault => {
                return Err(AppError::Input(format!(
                    "{file}: the whole inventory is vault-encrypted (ansible-vault); rocegate does not decrypt: run `ansible-inventory -i {file} --list --ask-vault-pass > inventory.json`, check that it holds no secrets, and import that"
                )))
            }
            ansible::Kind::Plugin(name) => {
                return Err(AppError::Input(format!(
                    "{file}: a dynamic inventory (plugin: {}): its hosts come from the plugin's API, which rocegate does not call: run `ansible-inventory -i {file} --list > inventory.json` where the plugin's credentials are, and import that JSON",
                    escaped(&name)
                )))
            }
            ansible::Kind::Text => {}
        }
        use std::os::unix::fs::PermissionsExt;
        if meta.permissions().mode() & 0o111 != 0 {
            return Err(AppError::Input(format!(
                "{file}: an executable file is a dynamic inventory script, which rocegate does not run: run `{file} --list > inventory.json` (or `ansible-inventory -i {file} --list`) yourself and import that JSON"
            )));
        }
    }
    run_ansible_inventory(file)
}

/// Runs `ansible-inventory -i FILE --list` with only the `ini` and `yaml`
/// inventory plugins enabled: scripts and API plugins (and `auto`, which
/// loads them) cannot run, and a file neither plugin reads is an error
/// instead of Ansible's warning and an empty inventory.
fn run_ansible_inventory(file: &str) -> Result<String, AppError> {
    // duct captures both pipes on its own threads, so a large inventory
    // cannot fill one and stall the other.
    let handle = duct::cmd("ansible-inventory", ["-i", file, "--list"])
        .env("ANSIBLE_INVENTORY_ENABLED", "ini,yaml")
        .env("ANSIBLE_INVENTORY_UNPARSED_FAILED", "true")
        .env("ANSIBLE_INVENTORY_ANY_UNPARSED_IS_FAILED", "true")
        .env("ANSIBLE_NOCOLOR", "1")
        .env("ANSIBLE_DEPRECATION_WARNINGS", "false")
        .stdin_null()
        .stdout_capture()
        .stderr_capture()
        .unchecked()
        .start()
        .map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                AppError::Input(format!(
                    "{file}: an INI or YAML Ansible inventory is read through Ansible's own `ansible-inventory`, which is not installed: install ansible-core (Debian/Ubuntu: apt-get install ansible-core; elsewhere: pipx install ansible-core), or run `ansible-inventory -i {file} --list > inventory.json` where Ansible is and import that JSON"
                ))
            } else {
                AppError::Input(format!("{file}: cannot run ansible-inventory: {e}"))
            }
        })?;
    let start = Instant::now();
    let out = loop {
        match handle.try_wait() {
            Ok(Some(out)) => break out.clone(),
            Ok(None) if start.elapsed() > ANSIBLE_TIMEOUT => {
                let _ = handle.kill();
                return Err(AppError::Input(format!(
                    "{file}: ansible-inventory did not finish in {} s",
                    ANSIBLE_TIMEOUT.as_secs()
                )));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => return Err(AppError::Input(format!("{file}: ansible-inventory: {e}"))),
        }
    };
    let status = out.status;
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    if !status.success() {
        let tail = crate::workload::text::excerpt(stderr.trim(), 600);
        let why = if stderr.contains("vault") || stderr.contains("Vault") {
            "it holds vault-encrypted content that Ansible could not decrypt (rocegate never asks for a vault password): decrypt the inventory or import `ansible-inventory --list --ask-vault-pass` output you have checked; "
        } else {
            ""
        };
        return Err(AppError::Input(format!(
            "{file}: ansible-inventory could not read it ({status}): {why}{}",
            escaped(&tail)
        )));
    }
    Ok(stdout)
}
