//! The campaign file (`campaigns/*.yaml`): parsed into plain types with
//! unknown keys refused, then checked into a [`Campaign`] whose every
//! fabric has a loaded inventory, suite and plan. Problems are collected
//! and reported together, each with the file, the line and what to write
//! instead, as inventories and suites are. Nothing here runs anything.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use time::OffsetDateTime;

use crate::config::diag::{quote, Diagnostics, Sink};
use crate::config::model::Inventory;
use crate::config::units::{format_duration, parse_duration};
use crate::exit::AppError;
use crate::plan::{self, Narrowing, Plan};

/// The file as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CampaignFile {
    /// Names the campaign directory and the summary; the file's stem when absent.
    #[serde(default)]
    pub name: Option<String>,
    pub window: WindowSpec,
    /// How many fabrics may run at once; 1 (one after another, in file
    /// order) when absent.
    #[serde(default)]
    pub parallel: Option<u32>,
    /// What a fabric that does not pass does to the rest; `stop` when absent.
    #[serde(default)]
    pub on_failure: Option<Policy>,
    /// The order to start the fabrics in, by name, every fabric once; the
    /// file's order when absent.
    #[serde(default)]
    pub order: Option<Vec<String>>,
    pub fabrics: Vec<FabricSpec>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WindowSpec {
    /// RFC 3339 time, or `now`; when absent, the window opens when the
    /// command starts.
    #[serde(default)]
    pub start: Option<String>,
    /// RFC 3339 time, or a duration from the start (`4h`, `3h30m`).
    pub deadline: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FabricSpec {
    /// Unique in the campaign; names the fabric's run directory.
    pub name: String,
    pub inventory: String,
    pub suite: String,
    /// What `rocegate compare` takes as its reference: a run directory, a
    /// baseline directory or file, or a fabric name in the baseline store.
    #[serde(default)]
    pub baseline: Option<String>,
}

/// What a fabric that does not pass (gate failed, or its run incomplete)
/// does to the fabrics after it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Policy {
    /// Stop the campaign now: start nothing more, and interrupt (and so
    /// heal) the fabrics running beside it.
    Stop,
    /// Let the fabrics already running finish; start nothing more.
    #[serde(alias = "skip-rest")]
    SkipRest,
    /// Go on with every fabric and report them all.
    Continue,
}

impl Policy {
    pub fn name(self) -> &'static str {
        match self {
            Policy::Stop => "stop",
            Policy::SkipRest => "skip_rest",
            Policy::Continue => "continue",
        }
    }
}

/// When the window opens.
#[derive(Debug, Clone, Copy)]
pub enum Start {
    /// When the command starts (`start` absent or `now`).
    Now,
    At(OffsetDateTime),
}

#[derive(Debug, Clone, Copy)]
pub enum Deadline {
    At(OffsetDateTime),
    After(Duration),
}

#[derive(Debug, Clone, Copy)]
pub struct Window {
    pub start: Start,
    pub deadline: Deadline,
}

impl Window {
    /// The window's start and deadline when the command starts at `now`.
    pub fn resolve(&self, now: OffsetDateTime) -> (OffsetDateTime, OffsetDateTime) {
        let start = match self.start {
            Start::Now => now,
            Start::At(t) => t,
        };
        let deadline = match self.deadline {
            Deadline::At(t) => t,
            Deadline::After(d) => start + d,
        };
        (start, deadline)
    }

    /// The time a plan has: the whole window before it opens, what is
    /// left of it once it has (zero once it has closed).
    pub fn length(&self) -> Duration {
        let now = OffsetDateTime::now_utc();
        let (s, d) = self.resolve(now);
        (d - s.max(now)).try_into().unwrap_or_default()
    }
}

/// One fabric, loaded and planned.
pub struct Fabric {
    pub name: String,
    pub inventory_path: String,
    pub suite_path: String,
    pub baseline: Option<String>,
    pub inventory: Inventory,
    pub suite_name: String,
    pub plan: Plan,
}

/// A checked campaign: every file read, every plan built.
pub struct Campaign {
    pub path: String,
    pub name: String,
    pub window: Window,
    pub parallel: usize,
    pub policy: Policy,
    pub fabrics: Vec<Fabric>,
}

/// Reads and checks `path`, loading every fabric's inventory and suite and
/// planning each with `seed`. Every problem of every file is reported at once.
pub fn load(path: &str, seed: u64) -> Result<Campaign, AppError> {
    let text = crate::config::check::read_source(path)?;
    let raw: CampaignFile = crate::config::yaml_guard::from_str(path, &text)?;
    let mut sink = Sink::new(path, &text);
    let mut others: Vec<String> = Vec::new();
    if let Some(n) = &raw.name {
        check_name(n, "name", &mut sink);
    }
    let window = check_window(&raw.window, &mut sink);
    let parallel = match raw.parallel {
        None => 1,
        Some(0) => {
            sink.error(
                "parallel",
                "0 fabrics at once runs nothing; write 1 (one after another) or more",
            );
            1
        }
        Some(n) => n as usize,
    };
    if raw.fabrics.is_empty() {
        sink.error(
            "fabrics",
            "no fabrics: list at least one, each with name, inventory and suite",
        );
    }
    let dir = Path::new(path).parent().unwrap_or(Path::new(""));
    let mut fabrics = Vec::new();
    for (i, f) in raw.fabrics.iter().enumerate() {
        let at = format!("fabrics[{i}]");
        check_name(&f.name, &format!("{at}.name"), &mut sink);
        if let Some(j) = raw.fabrics[..i].iter().position(|g| g.name == f.name) {
            sink.error(
                format!("{at}.name"),
                format!(
                    "{} is already the name of fabrics[{j}]; give each fabric its own name (it names the fabric's run directory)",
                    quote(&f.name)
                ),
            );
        }
        let inv = find(dir, &f.inventory, &format!("{at}.inventory"), &mut sink);
        let suite = find(dir, &f.suite, &format!("{at}.suite"), &mut sink);
        if let Some(b) = &f.baseline {
            if let Err(why) = check_baseline(dir, b) {
                sink.error(format!("{at}.baseline"), why);
            }
        }
        let (Some(inv), Some(suite)) = (inv, suite) else {
            continue;
        };
        match crate::inputs::load_seeded(Some(&inv), Some(&suite), seed) {
            Err(e) => others.push(format!("{e}\n  (fabric {} of {path})", f.name)),
            Ok(inputs) => match plan::build(
                &inputs.suite,
                &inputs.inventory,
                &Narrowing::default(),
                seed,
            ) {
                Err(e) => others.push(format!("{e}\n  (fabric {} of {path})", f.name)),
                Ok(p) => fabrics.push(Fabric {
                    name: f.name.clone(),
                    inventory_path: inv,
                    suite_path: suite,
                    baseline: f.baseline.clone(),
                    suite_name: inputs.suite.name.clone(),
                    inventory: inputs.inventory,
                    plan: p,
                }),
            },
        }
    }
    if let Some(order) = &raw.order {
        check_order(order, &raw.fabrics, &mut sink);
        if sink.is_empty() && others.is_empty() {
            fabrics.sort_by_key(|f: &Fabric| order.iter().position(|n| *n == f.name));
        }
    }
    if !sink.is_empty() || !others.is_empty() {
        let mut msg = Diagnostics(sink.found).to_string();
        for o in others {
            if !msg.is_empty() {
                msg.push('\n');
            }
            msg += &o;
        }
        return Err(AppError::Input(msg));
    }
    let name = raw.name.clone().unwrap_or_else(|| {
        Path::new(path)
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "campaign".into())
    });
    Ok(Campaign {
        path: path.to_string(),
        name,
        window: window.unwrap_or(Window {
            start: Start::Now,
            deadline: Deadline::After(Duration::ZERO),
        }),
        parallel,
        policy: raw.on_failure.unwrap_or(Policy::Stop),
        fabrics,
    })
}

/// `order` names every fabric once, and nothing else.
fn check_order(order: &[String], fabrics: &[FabricSpec], sink: &mut Sink) {
    for (i, n) in order.iter().enumerate() {
        if !fabrics.iter().any(|f| f.name == *n) {
            let names: Vec<&str> = fabrics.iter().map(|f| f.name.as_str()).collect();
            sink.error(
                format!("order[{i}]"),
                format!(
                    "{} is not a fabric of this campaign (they are {})",
                    quote(n),
                    names.join(", ")
                ),
            );
        } else if order[..i].contains(n) {
            sink.error(
                format!("order[{i}]"),
                format!("{} is listed twice; name each fabric once", quote(n)),
            );
        }
    }
    let missing: Vec<&str> = fabrics
        .iter()
        .filter(|f| !order.contains(&f.name))
        .map(|f| f.name.as_str())
        .collect();
    if !missing.is_empty() {
        sink.error(
            "order",
            format!(
                "leaves out {}: list every fabric once (or drop `order` to run them in file order)",
                missing.join(", ")
            ),
        );
    }
}

/// A fabric name becomes a directory name: letters, digits, `.`, `_`, `-`.
fn check_name(name: &str, at: &str, sink: &mut Sink) {
    let ok = !name.is_empty()
        && name.len() <= 64
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    if !ok {
        sink.error(
            at,
            format!(
                "{} is not a usable name: it names a directory, so write 1 to 64 letters, digits, '.', '_' or '-', not starting with '.' (e.g. pod-a)",
                quote(name)
            ),
        );
    }
}

/// A relative path is looked up next to the campaign file first, then in
/// the working directory (where `rocegate` finds `inventory/` and
/// `suites/` when run from a checkout).
fn find(dir: &Path, given: &str, at: &str, sink: &mut Sink) -> Option<String> {
    if given.trim().is_empty() {
        sink.error(at, "empty: give the path of the file");
        return None;
    }
    let p = Path::new(given);
    let candidates: Vec<PathBuf> = if p.is_absolute() || dir.as_os_str().is_empty() {
        vec![p.to_path_buf()]
    } else {
        vec![dir.join(p), p.to_path_buf()]
    };
    if let Some(found) = candidates.iter().find(|c| c.is_file()) {
        return Some(found.to_string_lossy().into_owned());
    }
    let tried: Vec<String> = candidates
        .iter()
        .map(|c| c.to_string_lossy().into_owned())
        .collect();
    sink.error(
        at,
        format!(
            "{} not found (looked for {}); a relative path is read next to the campaign file, then from the working directory",
            quote(given),
            tried.join(" and ")
        ),
    );
    None
}

/// The baseline is looked up the way `rocegate compare` will look it up
/// after the run (a relative path next to the campaign file first), so a
/// typo is refused now rather than at the end of the window.
fn check_baseline(dir: &Path, b: &str) -> Result<(), String> {
    if b.trim().is_empty() {
        return Err("empty: give a run directory, a baseline file or a fabric name in the baseline store, or leave the key out".into());
    }
    let p = Path::new(b);
    let mut candidates = vec![p.to_path_buf()];
    if !p.is_absolute() && !dir.as_os_str().is_empty() {
        candidates.insert(0, dir.join(p));
    }
    if candidates.iter().any(|c| c.exists()) {
        return Ok(());
    }
    let store = crate::paths::state_base().map(|s| s.join("rocegate/baselines"));
    if let Some(store) = &store {
        if crate::paths::join_within(store, b)
            .map(|d| d.join("baseline.json").is_file())
            .unwrap_or(false)
        {
            return Ok(());
        }
    }
    Err(format!(
        "{} is neither a run directory, a baseline file nor a fabric with a baseline in {} (see `rocegate baseline list`)",
        quote(b),
        store
            .map(|s| s.display().to_string())
            .unwrap_or_else(|| "the baseline store".into())
    ))
}

/// The baseline as `compare` is given it: the path found next to the
/// campaign file, else as written.
pub fn baseline_ref(campaign: &str, b: &str) -> String {
    let dir = Path::new(campaign).parent().unwrap_or(Path::new(""));
    let p = Path::new(b);
    if !p.is_absolute() && !dir.as_os_str().is_empty() && dir.join(p).exists() {
        return dir.join(p).to_string_lossy().into_owned();
    }
    b.to_string()
}

fn parse_time(s: &str) -> Option<OffsetDateTime> {
    OffsetDateTime::parse(s.trim(), &time::format_description::well_known::Rfc3339).ok()
}

fn check_window(w: &WindowSpec, sink: &mut Sink) -> Option<Window> {
    let start = match w.start.as_deref().map(str::trim) {
        None | Some("now") => Some(Start::Now),
        Some(s) => match parse_time(s) {
            Some(t) => Some(Start::At(t)),
            None => {
                sink.error(
                    "window.start",
                    format!(
                        "{} is not an RFC 3339 time; write e.g. 2026-11-28T02:00:00Z or 2026-11-28T03:00:00+01:00, or `now`",
                        quote(s)
                    ),
                );
                None
            }
        },
    };
    let d = w.deadline.trim();
    let deadline = if let Some(t) = parse_time(d) {
        Some(Deadline::At(t))
    } else if d.starts_with(|c: char| c.is_ascii_digit()) && !d.contains([':', 'T']) {
        match parse_duration(d) {
            Ok(x) if x.is_zero() => {
                sink.error(
                    "window.deadline",
                    "a window of 0s fits nothing; write its length from the start, e.g. 4h",
                );
                None
            }
            Ok(x) => Some(Deadline::After(x)),
            Err(e) => {
                sink.error("window.deadline", format!("{e}; or an RFC 3339 time"));
                None
            }
        }
    } else {
        sink.error(
            "window.deadline",
            format!(
                "{} is neither an RFC 3339 time (2026-11-28T06:00:00Z) nor a duration from the start (4h)",
                quote(d)
            ),
        );
        None
    };
    let (start, deadline) = (start?, deadline?);
    if let (Start::At(s), Deadline::At(e)) = (start, deadline) {
        if e <= s {
            sink.error(
                "window.deadline",
                format!(
                    "{} is not after the start {}; write a later time, or a duration from the start such as 4h",
                    at(e),
                    at(s)
                ),
            );
            return None;
        }
    }
    Some(Window { start, deadline })
}

/// An RFC 3339 time to the second, as campaign messages write times.
pub fn at(t: OffsetDateTime) -> String {
    crate::app::rfc3339(t.replace_nanosecond(0).unwrap_or(t))
}

/// `3h12m` etc.: one place that writes durations for campaign messages.
/// Under a minute to a tenth of a second, else to the second.
pub fn fmt(d: Duration) -> String {
    if d < Duration::from_secs(60) {
        format_duration(Duration::from_millis((d.as_millis() / 100 * 100) as u64))
    } else {
        format_duration(Duration::from_secs(d.as_secs()))
    }
}
