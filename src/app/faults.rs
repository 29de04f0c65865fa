//! The fault journal as the commands use it: `run` refuses to start while
//! it holds open faults and heals what it opened before it exits, whatever
//! ended it; `recover` heals what a killed run left. Both act under the
//! fabric's run lock ([`crate::fault::lock`]).

use std::path::PathBuf;

use crate::cli::RecoverArgs;
use crate::config::model::Inventory;
use crate::exit::{AppError, INCOMPLETE, PASS};
use crate::fault::journal::{self, Journal, Opened};
use crate::fault::live::{self, Control};
use crate::fault::lock::{FabricLock, Holder};
use crate::inputs;

/// Whether faults on this inventory touch real devices (and so journal).
pub fn journaled(inv: &Inventory) -> bool {
    !inv.transport.emulated()
}

pub fn journal_path(inv: &Inventory, given: Option<&str>) -> Result<PathBuf, AppError> {
    match given {
        Some(p) => Ok(PathBuf::from(p)),
        None => journal::default_path(&inv.fabric.name).map_err(AppError::Input),
    }
}

/// Takes the fabric's run lock for `run` before anything is touched, or
/// refuses (exit 2) naming who holds it; says so when it takes over the
/// record of a holder that died. `None` on the emulated fabric: nothing
/// real is touched there, so emulated runs never wait for each other.
pub fn lock_fabric(
    inv: &Inventory,
    journal: Option<&str>,
    run: &str,
    started: &str,
) -> Result<Option<FabricLock>, AppError> {
    if !journaled(inv) {
        return Ok(None);
    }
    let path = journal_path(inv, journal)?;
    let me = Holder::this_process(run, started);
    let (lock, note) =
        FabricLock::acquire(&path, &inv.fabric.name, &me).map_err(AppError::Input)?;
    if let Some(note) = note {
        eprintln!("rocegate: {note}");
    }
    Ok(Some(lock))
}

fn list(open: &[Opened]) -> String {
    open.iter()
        .map(|o| {
            format!(
                "  {} {} (test {}, run {} pid {}, opened {}; prior: {})\n",
                o.id, o.what, o.test, o.run, o.pid, o.at, o.prior
            )
        })
        .collect()
}

/// For a run on real devices, under the fabric's run lock `held`: refused
/// while the journal holds open faults; with faults to send, the journal
/// opened for writing. A run without faults only reads it.
pub fn open_for_run(
    inv: &Inventory,
    given: Option<&str>,
    run: &str,
    sends_faults: bool,
    held: &FabricLock,
) -> Result<Option<Control>, AppError> {
    let path = journal_path(inv, given)?;
    let j = if sends_faults {
        Some(Journal::open(&path, held).map_err(AppError::Input)?)
    } else {
        None
    };
    let open = journal::open_faults(&journal::read(&path).map_err(AppError::Input)?);
    if !open.is_empty() {
        return Err(AppError::Input(format!(
            "{}: {} fault(s) on fabric {} are still open, from a run that was killed (or one running now: see its pid); the fabric is not in the state a run needs:\n{}heal them with `rocegate recover -i {} --journal {}`",
            path.display(),
            open.len(),
            inv.fabric.name,
            list(&open),
            inv.source.path,
            path.display()
        )));
    }
    Ok(j.map(|j| Control::new(j, run.to_string(), inv.fabric.name.clone())))
}

/// After the engine, however it ended: heal what this run left open, and
/// say what could not be healed.
pub fn heal_after_run(
    rt: &tokio::runtime::Runtime,
    transport: &dyn crate::exec::Transport,
    ctl: &Control,
    inventory: &str,
) -> Result<(), String> {
    let mine = ctl.mine();
    if !mine.is_empty() {
        eprintln!(
            "rocegate: healing {} fault(s) this run left open; do not kill -9 now",
            mine.len()
        );
    }
    let healed = rt.block_on(live::heal(transport, ctl, mine, "run"));
    let mut still = Vec::new();
    for h in healed {
        match h.result {
            Ok(()) => eprintln!("rocegate: healed {} ({})", h.fault.id, h.fault.what),
            Err(e) => still.push(format!("{} {}: {e}", h.fault.id, h.fault.what)),
        }
    }
    if still.is_empty() {
        return Ok(());
    }
    let journal = ctl
        .journal
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .path()
        .display()
        .to_string();
    Err(format!(
        "FAULTS STILL OPEN on fabric {}: {}; fix what stops the undo (the device does not answer? the journal cannot be written?), then run `rocegate recover -i {inventory} --journal {journal}`",
        ctl.fabric,
        still.join("; ")
    ))
}

pub fn recover(a: &RecoverArgs) -> Result<i32, AppError> {
    let (path, text) = inputs::read(a.inventory.as_deref(), inputs::DEFAULT_INVENTORY)?;
    let inv = crate::config::check::parse_inventory(&path, &text)?;
    if !journaled(&inv) && a.journal.is_none() {
        println!(
            "{path}: the emulated fabric heals its faults itself and never journals them: nothing to recover"
        );
        return Ok(PASS);
    }
    let jpath = journal_path(&inv, a.journal.as_deref())?;
    let started = super::rfc3339(time::OffsetDateTime::now_utc());
    let me = Holder::this_process("recover", &started);
    let (held, note) =
        FabricLock::acquire(&jpath, &inv.fabric.name, &me).map_err(AppError::Input)?;
    if let Some(note) = note {
        eprintln!("rocegate: {note}");
    }
    let j = Journal::open(&jpath, &held).map_err(AppError::Input)?;
    let ctl = Control::new(j, "recover".into(), inv.fabric.name.clone());
    let open = ctl.open_faults().map_err(AppError::Input)?;
    if open.is_empty() {
        println!(
            "{}: no open faults on fabric {}",
            jpath.display(),
            inv.fabric.name
        );
        return Ok(PASS);
    }
    println!(
        "{}: {} open fault(s) on fabric {}:\n{}",
        jpath.display(),
        open.len(),
        inv.fabric.name,
        list(&open)
    );
    let transport = super::remote::transport(&inv, 1, 0.0, None)?;
    let rt = super::remote::runtime()?;
    let healed = rt.block_on(live::heal(transport.as_ref(), &ctl, open, "recover"));
    let mut left = 0;
    for h in &healed {
        match &h.result {
            Ok(()) => println!("healed   {} {}", h.fault.id, h.fault.what),
            Err(e) => {
                left += 1;
                println!("OPEN     {} {}: {e}", h.fault.id, h.fault.what);
            }
        }
    }
    if left > 0 {
        eprintln!(
            "rocegate: {left} fault(s) still open: fix what the lines above say (host down? key refused?) and run `rocegate recover` again"
        );
        return Ok(INCOMPLETE);
    }
    println!("all {} healed", healed.len());
    Ok(PASS)
}
