//! `run --apply-drain`: on the slurm transport, the Slurm drains of a
//! failed gate's actions.json are applied, not only written: first the
//! right to drain is checked (root, Slurm's SlurmUser, or a Slurm operator
//! or administrator), then each node is drained with its reason, then
//! `sinfo` is asked whether it now is. What was done is written to
//! drained.json in the run directory. A drain that fails is said and
//! leaves the gate as it is.

use std::path::Path;

use serde_json::{json, Value};

use crate::config::inventory::SlurmSpec;

fn cmd(spec: &SlurmSpec, prog: &str, args: &[&str]) -> Result<String, String> {
    let mut c = duct::cmd(prog, args)
        .stdin_null()
        .stderr_to_stdout()
        .stdout_capture()
        .unchecked();
    if let Some(conf) = &spec.conf {
        c = c.env("SLURM_CONF", conf);
    }
    let line = format!("{prog} {}", args.join(" "));
    let out = c.run().map_err(|e| format!("{line}: cannot run: {e}"))?;
    let text = String::from_utf8_lossy(&out.stdout).trim().to_string();
    if out.status.success() {
        Ok(text)
    } else {
        Err(format!(
            "{line}: {} ({text})",
            crate::exec::types::exit_text(out.status.code())
        ))
    }
}

/// Who this user is to Slurm, if Slurm lets them drain: `Err` says why not.
pub fn may_drain(spec: &SlurmSpec) -> Result<String, String> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        return Ok("root".into());
    }
    let me = cmd(spec, "id", &["-un"])?;
    let config = cmd(spec, "scontrol", &["show", "config"])?;
    let slurm_user = config
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once('=')?;
            (k.trim() == "SlurmUser").then(|| v.trim().split('(').next().unwrap_or("").to_string())
        })
        .unwrap_or_default();
    if !slurm_user.is_empty() && slurm_user == me {
        return Ok(format!("{me}, Slurm's SlurmUser"));
    }
    let level = cmd(
        spec,
        "sacctmgr",
        &[
            "--noheader",
            "--parsable2",
            "show",
            "user",
            &me,
            "format=AdminLevel",
        ],
    );
    match level {
        Ok(l) if l.contains("Administrator") || l.contains("Operator") => {
            Ok(format!("{me}, a Slurm {}", l.trim()))
        }
        Ok(l) => Err(format!(
            "{me} is neither root, Slurm's SlurmUser ({slurm_user}) nor a Slurm operator or administrator (sacctmgr says admin level {:?})",
            l.trim()
        )),
        Err(e) => Err(format!(
            "{me} is neither root nor Slurm's SlurmUser ({slurm_user}), and the admin level cannot be read: {e}"
        )),
    }
}

/// Applies the drains of `dir/actions.json`; what it printed, line by line.
pub fn apply(dir: &Path, spec: &SlurmSpec) -> Vec<String> {
    let path = dir.join("actions.json");
    let Ok(text) = std::fs::read_to_string(&path) else {
        return vec![
            "apply-drain: the gate did not fail (no actions.json): nothing drained".into(),
        ];
    };
    let Ok(actions) = serde_json::from_str::<Value>(&text) else {
        return vec![format!(
            "apply-drain: {} is not JSON: nothing drained",
            path.display()
        )];
    };
    let drains: Vec<(String, String)> = actions["drain"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|d| {
                    Some((
                        d["node"].as_str()?.to_string(),
                        d["reason"].as_str()?.to_string(),
                    ))
                })
                .collect()
        })
        .unwrap_or_default();
    let mut said = Vec::new();
    let mut done = Vec::new();
    if drains.is_empty() {
        said.push("apply-drain: no node or NIC suspect is confident enough to drain".into());
    } else {
        match may_drain(spec) {
            Err(why) => {
                said.push(format!("apply-drain: nothing drained: {why}"));
                for (node, reason) in &drains {
                    done.push(
                        json!({"node": node, "reason": reason, "drained": false, "error": why}),
                    );
                }
            }
            Ok(who) => {
                for (node, reason) in &drains {
                    let set = cmd(
                        spec,
                        "scontrol",
                        &[
                            "update",
                            &format!("NodeName={node}"),
                            "State=DRAIN",
                            &format!("Reason={reason}"),
                        ],
                    );
                    let state = cmd(
                        spec,
                        "sinfo",
                        &[
                            "--noheader",
                            "--Node",
                            &format!("--nodes={node}"),
                            "--format=%T|%E",
                        ],
                    );
                    let drained = set.is_ok()
                        && state
                            .as_ref()
                            .is_ok_and(|s| s.to_ascii_lowercase().contains("drain"));
                    let error = set.err().or_else(|| state.as_ref().err().cloned());
                    said.push(match &error {
                        None if drained => {
                            format!("apply-drain: drained {node} as {who}: {reason}")
                        }
                        None => format!(
                            "apply-drain: {node}: scontrol accepted the drain but sinfo says {:?}",
                            state.as_deref().unwrap_or("")
                        ),
                        Some(e) => format!("apply-drain: {node}: not drained: {e}"),
                    });
                    done.push(json!({
                        "node": node,
                        "reason": reason,
                        "drained": drained,
                        "state": state.ok(),
                        "error": error,
                        "undo": format!("scontrol update NodeName={node} State=RESUME"),
                    }));
                }
            }
        }
    }
    if !done.is_empty() {
        let p = dir.join("drained.json");
        let body =
            serde_json::to_string_pretty(&json!({"drained": done})).unwrap_or_default() + "\n";
        if let Err(e) = crate::paths::write_atomic(&p, body.as_bytes()) {
            said.push(format!("apply-drain: {}: cannot write: {e}", p.display()));
        }
    }
    said
}
