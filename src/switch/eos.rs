//! Arista EOS: the eAPI `runCmds` call and the outputs of the show commands
//! rocegate reads, turned into the crate's canonical values. Parse functions
//! only: this module builds the request body and reads the answer body; the
//! HTTPS channel that carries them and the [`super::Platform`] wiring live
//! elsewhere.
//!
//! - The envelope ([`request`], [`parse_response`]): one `runCmds` call per
//!   batch at `version: 1`, with a per-command `revision` where a parsed
//!   model needs a newer one ([`Command::new`]); each command comes back as
//!   a [`Reply`], refusals sorted into not available, no JSON form, needs
//!   privilege, failed and not run.
//! - Counters, as [`PortReadings`] named the way the `linux` platform names
//!   the same meaning: `show interfaces`, `show interfaces counters errors`
//!   and `… discards`, `show priority-flow-control counters`, `show qos
//!   interfaces ecn counters queue`, `show interfaces counters queue drops`
//!   (VOQ platforms) and `… queue detail` (JSON here; the text form is
//!   [`parse_queue_counters_detail`]).
//! - State and audit reads: port states, BGP peers in every VRF, `show
//!   version`, configuration sessions (the commit-timer dead-man), LLDP
//!   neighbours, and `show errdisable recovery` (text: it has no JSON form).
//! - [`normalise_port`]: the one form in which `Et1`, `Ethernet1` and an
//!   LLDP port id compare equal.
//!
//! Every answer is untrusted text: a wrong type, a missing field, a number no
//! counter can hold or a body that is not JSON is a [`ParseError`] naming the
//! command, the place in the answer and what was expected, never a panic. A
//! counter EOS does not print, or prints as `-`, is `not_available`, never 0.

use std::fmt::Display;

use serde::Serialize;
use serde_json::{json, Map, Value};

use crate::counters::host::LldpNeighbor;
use crate::counters::{
    cell, first_line, port_entry, value, Canonical, ParseError, PortReadings, Reading,
};
use crate::switch::config::excerpt;
use crate::switch::fault::PortState;

// ------------------------------------------------------------ JSON helpers

/// A JSON object of an answer.
type Object = Map<String, Value>;

fn err(tool: &str, why: impl Display) -> ParseError {
    ParseError(format!("{tool}: {why}"))
}

/// `a.b` from a path and a key; the root path is empty.
fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

/// A path for a message: the root is "the answer".
fn here(path: &str) -> &str {
    if path.is_empty() {
        "the answer"
    } else {
        path
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

fn parse_json(tool: &str, text: &str) -> Result<Value, ParseError> {
    serde_json::from_str(text).map_err(|e| {
        err(
            tool,
            format!(
                "expected the JSON eAPI returns, got {} ({e})",
                first_line(text)
            ),
        )
    })
}

/// The top-level object of one command's JSON answer.
fn parse_root(tool: &str, text: &str) -> Result<Object, ParseError> {
    match parse_json(tool, text)? {
        Value::Object(m) => Ok(m),
        other => Err(err(
            tool,
            format!("the answer: expected an object, got {}", kind(&other)),
        )),
    }
}

fn object<'a>(tool: &str, path: &str, v: &'a Value) -> Result<&'a Object, ParseError> {
    v.as_object().ok_or_else(|| {
        err(
            tool,
            format!("{}: expected an object, got {}", here(path), kind(v)),
        )
    })
}

/// `key` of the object at `path`, which must be there.
fn member<'a>(tool: &str, path: &str, m: &'a Object, key: &str) -> Result<&'a Value, ParseError> {
    m.get(key)
        .ok_or_else(|| err(tool, format!("{}: no `{key}`", here(path))))
}

fn string<'a>(tool: &str, path: &str, v: &'a Value) -> Result<&'a str, ParseError> {
    v.as_str().ok_or_else(|| {
        err(
            tool,
            format!("{}: expected a string, got {}", here(path), kind(v)),
        )
    })
}

/// A string field that may be absent (or null); empty counts as absent.
fn opt_string<'a>(
    tool: &str,
    path: &str,
    m: &'a Object,
    key: &str,
) -> Result<Option<&'a str>, ParseError> {
    match m.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => string(tool, &join(path, key), v).map(|s| (!s.is_empty()).then_some(s)),
    }
}

/// A whole number field that may be absent (`mtu`, `bandwidth`).
fn opt_u64(tool: &str, path: &str, m: &Object, key: &str) -> Result<Option<u64>, ParseError> {
    match m.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => counter(tool, &join(path, key), v),
    }
}

/// A seconds field that may be absent (`uptime`, `commitBy`): finite.
fn opt_f64(tool: &str, path: &str, m: &Object, key: &str) -> Result<Option<f64>, ParseError> {
    match m.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => match v.as_f64() {
            Some(x) if x.is_finite() => Ok(Some(x)),
            _ => Err(err(
                tool,
                format!(
                    "{}: expected seconds, got {}",
                    join(path, key),
                    excerpt(&v.to_string())
                ),
            )),
        },
    }
}

/// A counter as eAPI writes it: a JSON integer, or (the ECN queue counters) a
/// string holding one, `-` where the queue counts nothing. `None` is "not
/// available"; a negative, fractional or too large number is an error.
fn counter(tool: &str, path: &str, v: &Value) -> Result<Option<u64>, ParseError> {
    match v {
        Value::Number(n) => match n.as_u64() {
            Some(x) => Ok(Some(x)),
            // serde_json reads an integer past u64 as a float, which would
            // print as `1.8446744073709552e19`: say what is wrong with it.
            None if n.as_f64().is_some_and(|f| f >= u64::MAX as f64) => Err(err(
                tool,
                format!("{path}: `{n}` is not a possible counter value (above 2^64 − 1, wider than any counter); the output is damaged"),
            )),
            None => value(tool, path, &n.to_string()).map(Some),
        },
        Value::String(s) => cell(tool, path, s),
        Value::Null => Ok(None),
        other => Err(err(
            tool,
            format!("{path}: expected a counter, got {}", kind(other)),
        )),
    }
}

/// The value at `dotted` (`inputErrorsDetail.fcsErrors`) under `m`, which
/// sits at `path`: `None` where a level is missing, an error where a level
/// is not an object.
fn lookup<'a>(
    tool: &str,
    path: &str,
    m: &'a Object,
    dotted: &str,
) -> Result<Option<&'a Value>, ParseError> {
    let mut cur = m;
    let mut at = path.to_string();
    let mut parts = dotted.split('.').peekable();
    while let Some(part) = parts.next() {
        let Some(v) = cur.get(part) else {
            return Ok(None);
        };
        at = join(&at, part);
        if parts.peek().is_none() {
            return Ok(Some(v));
        }
        cur = object(tool, &at, v)?;
    }
    Ok(None)
}

/// The objects of `m.<key>` (`m` at `path`), one per interface, VRF or
/// session, in the answer's order.
fn keyed<'a>(
    tool: &str,
    path: &str,
    m: &'a Object,
    key: &str,
) -> Result<Vec<(&'a str, &'a Object)>, ParseError> {
    let at = join(path, key);
    object(tool, &at, member(tool, path, m, key)?)?
        .iter()
        .map(|(name, v)| Ok((name.as_str(), object(tool, &join(&at, name), v)?)))
        .collect()
}

/// Where one counter goes: its canonical name (`None`: `other`), and the
/// priority or queue it counts.
#[derive(Clone, Copy)]
struct Slot {
    canonical: Option<Canonical>,
    priority: Option<u8>,
    queue: Option<u8>,
}

impl Slot {
    fn port(canonical: Option<Canonical>) -> Slot {
        Slot {
            canonical,
            priority: None,
            queue: None,
        }
    }
}

/// One counter into `entry`: a reading where EOS printed a number, the
/// vendor name in `not_available` where it printed nothing (`v` is `None`)
/// or `-`, `other` where the vocabulary has no name for it.
fn put(
    tool: &str,
    path: &str,
    entry: &mut PortReadings,
    vendor: String,
    v: Option<&Value>,
    slot: Slot,
) -> Result<(), ParseError> {
    let read = match v {
        Some(v) => counter(tool, path, v)?,
        None => None,
    };
    match (read, slot.canonical) {
        (None, _) => entry.not_available.push(vendor),
        (Some(value), Some(canonical)) => entry.readings.push(Reading {
            canonical,
            vendor,
            priority: slot.priority,
            queue: slot.queue,
            value,
            bits: None,
        }),
        (Some(value), None) => {
            entry.other.insert(vendor, value);
        }
    }
    Ok(())
}

/// The counters of `table` found under `m` (at `path`), then every other
/// whole number under `m`, nested objects included, into `other` under its
/// dotted name. Floats (`counterRefreshTime`) and strings are not counters.
fn table_and_others(
    tool: &str,
    path: &str,
    entry: &mut PortReadings,
    m: &Object,
    table: &[(&str, Option<Canonical>)],
) -> Result<(), ParseError> {
    for (name, canonical) in table {
        let v = lookup(tool, path, m, name)?;
        put(
            tool,
            &join(path, name),
            entry,
            name.to_string(),
            v,
            Slot::port(*canonical),
        )?;
    }
    others(entry, "", m, &|p| table.iter().any(|(n, _)| *n == p));
    Ok(())
}

fn others(entry: &mut PortReadings, prefix: &str, m: &Object, known: &dyn Fn(&str) -> bool) {
    for (k, v) in m {
        let p = join(prefix, k);
        if known(&p) {
            continue;
        }
        match v {
            Value::Number(n) => {
                if let Some(x) = n.as_u64() {
                    entry.other.insert(p, x);
                }
            }
            Value::Object(o) => others(entry, &p, o, known),
            _ => {}
        }
    }
}

/// `TC3` → 3.
fn traffic_class(tool: &str, path: &str, tc: &str) -> Result<u8, ParseError> {
    tc.strip_prefix("TC")
        .and_then(|n| n.parse().ok())
        .ok_or_else(|| err(tool, format!("{path}: `{tc}` is not a traffic class TCn")))
}

// ------------------------------------------------------------------ runCmds

/// Commands whose parsed model is newer than `version: 1` gives, with the
/// revision the parsers here read. eAPI: a command's `revision` "has
/// precedence over version" (ANTA's `AntaCommand`, which pins these two;
/// its PFC check reads `interfaceCounters` at revision 3).
const REVISIONS: &[(&str, u32)] = &[
    ("show priority-flow-control counters", 3),
    ("show interfaces phy detail", 2),
];

/// One command of a `runCmds` call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Command {
    /// The command, with single spaces.
    pub cmd: String,
    /// The model revision asked for; `None` takes the call's `version`.
    pub revision: Option<u32>,
}

impl Command {
    /// `cmd` with its whitespace collapsed, pinned to the revision
    /// [`REVISIONS`] names for it.
    pub fn new(cmd: &str) -> Command {
        let cmd = cmd.split_whitespace().collect::<Vec<_>>().join(" ");
        let revision = REVISIONS.iter().find(|(c, _)| *c == cmd).map(|(_, r)| *r);
        Command { cmd, revision }
    }

    /// A plain string, or `{"cmd", "revision"}` when pinned.
    fn to_json(&self) -> Value {
        match self.revision {
            None => Value::String(self.cmd.clone()),
            Some(r) => json!({ "cmd": self.cmd, "revision": r }),
        }
    }
}

/// The `format` of a call: one for all its commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Json,
    /// What a command with no JSON form is asked for again in.
    Text,
}

impl Format {
    fn name(self) -> &'static str {
        match self {
            Format::Json => "json",
            Format::Text => "text",
        }
    }
}

/// The body of one `POST /command-api`: JSON-RPC 2.0 `runCmds` at model
/// `version` 1 (revisions pinned per command), `id` echoed back by the
/// switch. Credentials and `enable` are the channel's, never in here.
pub fn request(id: &str, cmds: &[Command], format: Format) -> String {
    json!({
        "jsonrpc": "2.0",
        "method": "runCmds",
        "params": {
            "version": 1,
            "cmds": cmds.iter().map(Command::to_json).collect::<Vec<_>>(),
            "format": format.name(),
        },
        "id": id,
    })
    .to_string()
}

/// What one command of a `runCmds` call came back as. Every message names
/// the command and quotes what EOS said.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// It ran; its JSON model (format json).
    Json(Value),
    /// It ran; what it printed (format text).
    Text(String),
    /// This switch has no such read: the hardware does not support it, or
    /// this EOS does not know the command (error 1002 with `Invalid input`
    /// or `Incomplete command`, or `not supported on this hardware
    /// platform`). What it would have counted is not available, never 0.
    NotAvailable(String),
    /// The command has no JSON form (error 1003): ask for it again alone
    /// with [`Format::Text`] and read it with a text parser.
    NoJson(String),
    /// The account may not run it (error 1005, or `privileged mode
    /// required`). Reads need privileged EXEC; configuration sessions, and
    /// so every fault, need privilege 15.
    NeedsPrivilege(String),
    /// Any other refusal.
    Failed(String),
    /// Never ran: eAPI stops at the first command that fails.
    NotRun(String),
}

/// Error texts EOS gives for a command this platform or release does not
/// have (ANTA's `UNSUPPORTED_PLATFORM_ERRORS` are instances of these:
/// `Incomplete command (at token 4: 'drops')` is `… queue drops` on a
/// switch without VOQs, `Invalid input (at token 2: 'trident')` a Trident
/// command elsewhere). The parser errors count only with code 1002.
const UNSUPPORTED_ANY_CODE: &[&str] = &["not supported on this hardware platform"];
const UNSUPPORTED_1002: &[&str] = &["Incomplete command", "Invalid input"];

/// Sorts one command's refusal. `errors` are the command's own error lines
/// (from `data`), `message` the call's.
fn refusal(cmd: &str, code: i64, message: &str, errors: &[String]) -> Reply {
    let said = if errors.is_empty() {
        message.to_string()
    } else {
        errors.join("; ")
    };
    let quote = excerpt(&said);
    let all = format!("{said} {message}").to_ascii_lowercase();
    if code == 1005
        || all.contains("privileged mode required")
        || all.contains("insufficient permissions")
        || all.contains("unauthorized")
    {
        Reply::NeedsPrivilege(format!(
            "`{cmd}` needs more privilege than the eAPI account has (eAPI error {code}: {quote}): give the account privilege 15, which EOS configuration sessions need"
        ))
    } else if code == 1003 {
        Reply::NoJson(format!(
            "`{cmd}` has no JSON form (eAPI error 1003: {quote}): ask for it again with format text"
        ))
    } else if UNSUPPORTED_ANY_CODE.iter().any(|t| said.contains(t))
        || (code == 1002 && UNSUPPORTED_1002.iter().any(|t| said.contains(t)))
    {
        Reply::NotAvailable(format!(
            "`{cmd}` is not available on this switch (eAPI error {code}: {quote})"
        ))
    } else {
        Reply::Failed(format!("`{cmd}` failed (eAPI error {code}: {quote})"))
    }
}

/// A command's error entry in `data`: `{"errors": [...]}`.
fn errors_of(v: &Value) -> Option<Vec<String>> {
    let e = v.as_object()?.get("errors")?;
    Some(match e {
        Value::Array(a) => a
            .iter()
            .map(|x| x.as_str().map_or_else(|| x.to_string(), str::to_string))
            .collect(),
        Value::String(s) => vec![s.clone()],
        other => vec![other.to_string()],
    })
}

/// One command's output: the JSON object, or `{"output": "…"}` for text.
fn output(tool: &str, path: &str, v: &Value, format: Format) -> Result<Reply, ParseError> {
    let m = object(tool, path, v)?;
    match format {
        Format::Json => Ok(Reply::Json(v.clone())),
        Format::Text => Ok(Reply::Text(
            string(
                tool,
                &join(path, "output"),
                member(tool, path, m, "output")?,
            )?
            .to_string(),
        )),
    }
}

/// Reads the body of a `runCmds` answer into one [`Reply`] per command of
/// `cmds` (the call sent with `id` and `format`).
///
/// A success is `result: [one entry per command]`. A failure is `error:
/// {code, message, data}`, where `data` holds the outputs of the commands
/// that ran and `{"errors": [...]}` for the one that failed; the commands
/// after it never ran. An empty `data` means the call failed before any
/// command ran (a bad request, an account refused outright): every command
/// then carries the call's error.
/// Anything else (a body that is not JSON, such as a proxy's HTML page,
/// another call's `id`, a count that does not match) is an error.
pub fn parse_response(
    body: &str,
    id: &str,
    cmds: &[Command],
    format: Format,
) -> Result<Vec<Reply>, ParseError> {
    const TOOL: &str = "eAPI runCmds";
    let root = parse_json(TOOL, body)?;
    let top = object(TOOL, "", &root)?;
    match top.get("jsonrpc") {
        None => {}
        Some(Value::String(v)) if v == "2.0" => {}
        Some(other) => {
            return Err(err(
                TOOL,
                format!(
                    "jsonrpc: expected \"2.0\", got {}",
                    excerpt(&other.to_string())
                ),
            ))
        }
    }
    match top.get("id") {
        None | Some(Value::Null) => {}
        Some(Value::String(got)) if got == id => {}
        Some(other) => {
            return Err(err(
                TOOL,
                format!(
                    "id: the answer is to call {}, not {id:?}",
                    excerpt(&other.to_string())
                ),
            ))
        }
    }
    match (top.get("result"), top.get("error")) {
        (Some(result), None) => {
            let list = result.as_array().ok_or_else(|| {
                err(
                    TOOL,
                    format!(
                        "result: expected a list with one entry per command, got {}",
                        kind(result)
                    ),
                )
            })?;
            if list.len() != cmds.len() {
                return Err(err(
                    TOOL,
                    format!("result: {} entries for {} commands", list.len(), cmds.len()),
                ));
            }
            list.iter()
                .enumerate()
                .map(|(i, v)| output(TOOL, &format!("result[{i}]"), v, format))
                .collect()
        }
        (None, Some(error)) => failure(TOOL, error, cmds, format),
        (Some(_), Some(_)) => Err(err(TOOL, "the answer has both `result` and `error`")),
        (None, None) => Err(err(
            TOOL,
            format!("expected `result` or `error`, got {}", excerpt(body)),
        )),
    }
}

fn failure(
    tool: &str,
    error: &Value,
    cmds: &[Command],
    format: Format,
) -> Result<Vec<Reply>, ParseError> {
    let e = object(tool, "error", error)?;
    let code = member(tool, "error", e, "code")?;
    let code = code.as_i64().ok_or_else(|| {
        err(
            tool,
            format!(
                "error.code: expected an integer, got {}",
                excerpt(&code.to_string())
            ),
        )
    })?;
    let message = opt_string(tool, "error", e, "message")?.unwrap_or_default();
    let data: &[Value] = match e.get("data") {
        None | Some(Value::Null) => &[],
        Some(Value::Array(a)) => a,
        Some(other) => {
            return Err(err(
                tool,
                format!("error.data: expected a list, got {}", kind(other)),
            ))
        }
    };
    if data.len() > cmds.len() {
        return Err(err(
            tool,
            format!(
                "error.data: {} entries for {} commands",
                data.len(),
                cmds.len()
            ),
        ));
    }
    let has_error = data.iter().any(|d| errors_of(d).is_some());
    if !has_error && !data.is_empty() && data.len() == cmds.len() {
        return Err(err(
            tool,
            format!(
                "error {code} ({}) but every command has an output",
                excerpt(message)
            ),
        ));
    }
    // With `stopOnError: false` (never sent by rocegate) outputs may follow
    // an error entry; each entry is read for what it is.
    cmds.iter()
        .enumerate()
        .map(|(i, c)| match data.get(i) {
            Some(d) => match errors_of(d) {
                Some(errors) => Ok(refusal(&c.cmd, code, message, &errors)),
                None => output(tool, &format!("error.data[{i}]"), d, format),
            },
            // Nothing ran: the call's error is every command's.
            None if data.is_empty() => Ok(refusal(&c.cmd, code, message, &[])),
            // `data` stops without an error entry: the next command failed.
            None if !has_error && i == data.len() => Ok(refusal(&c.cmd, code, message, &[])),
            None => Ok(Reply::NotRun(format!(
                "`{}` did not run: an earlier command of the call failed",
                c.cmd
            ))),
        })
        .collect()
}

// ------------------------------------------------------------------ counters

/// `show interfaces` → `interfaces.<port>.interfaceCounters`, the counters
/// read for their meaning, named by their path under `interfaceCounters`.
/// As on `linux`: FCS errors are CrcErrors, input discards Discards (`ip`'s
/// rx dropped), output discards Drops. A port's packets are the three
/// RxPackets (TxPackets) readings together: EOS counts unicast, multicast
/// and broadcast apart, where `ip` counts them as one.
const INTERFACE_COUNTERS: &[(&str, Option<Canonical>)] = &[
    ("inOctets", Some(Canonical::RxBytes)),
    ("outOctets", Some(Canonical::TxBytes)),
    ("inUcastPkts", Some(Canonical::RxPackets)),
    ("inMulticastPkts", Some(Canonical::RxPackets)),
    ("inBroadcastPkts", Some(Canonical::RxPackets)),
    ("outUcastPkts", Some(Canonical::TxPackets)),
    ("outMulticastPkts", Some(Canonical::TxPackets)),
    ("outBroadcastPkts", Some(Canonical::TxPackets)),
    ("inDiscards", Some(Canonical::Discards)),
    ("outDiscards", Some(Canonical::Drops)),
    ("inputErrorsDetail.fcsErrors", Some(Canonical::CrcErrors)),
    (
        "inputErrorsDetail.symbolErrors",
        Some(Canonical::SymbolErrors),
    ),
    ("totalInErrors", None),
    ("totalOutErrors", None),
    ("inputErrorsDetail.alignmentErrors", None),
    ("inputErrorsDetail.runtFrames", None),
    ("inputErrorsDetail.giantFrames", None),
    ("inputErrorsDetail.rxPause", None),
    ("outputErrorsDetail.txPause", None),
];

/// `show interfaces` (all ports, or `show interfaces EthernetN`): the
/// counters of [`INTERFACE_COUNTERS`], plus LinkDown as half of
/// `linkStatusChanges` (one change down, one up per flap: the rule `linux`
/// applies to `carrier_changes`). A port without `interfaceCounters` (a
/// loopback, a subinterface) lists them all as not available. Also read by
/// [`parse_interfaces_state`], so one call serves both.
pub fn parse_interfaces_counters(text: &str) -> Result<Vec<PortReadings>, ParseError> {
    const TOOL: &str = "show interfaces";
    const LINK_DOWN: &str = "linkStatusChanges/2";
    let root = parse_root(TOOL, text)?;
    let mut out = Vec::new();
    for (name, intf) in keyed(TOOL, "", &root, "interfaces")? {
        let mut entry = PortReadings::new(name);
        let at = format!("interfaces.{name}.interfaceCounters");
        let Some(c) = intf.get("interfaceCounters") else {
            entry.not_available = INTERFACE_COUNTERS
                .iter()
                .map(|(n, _)| n.to_string())
                .chain([LINK_DOWN.to_string()])
                .collect();
            out.push(entry);
            continue;
        };
        let c = object(TOOL, &at, c)?;
        table_and_others(TOOL, &at, &mut entry, c, INTERFACE_COUNTERS)?;
        entry.other.remove("linkStatusChanges");
        let changes = match c.get("linkStatusChanges") {
            Some(v) => counter(TOOL, &join(&at, "linkStatusChanges"), v)?,
            None => None,
        };
        match changes {
            Some(n) => entry.readings.push(Reading {
                canonical: Canonical::LinkDown,
                vendor: LINK_DOWN.into(),
                priority: None,
                queue: None,
                value: n / 2,
                bits: None,
            }),
            None => entry.not_available.push(LINK_DOWN.into()),
        }
        out.push(entry);
    }
    Ok(out)
}

/// `show interfaces counters errors` → `interfaceErrorCounters.<port>`.
const ERROR_COUNTERS: &[(&str, Option<Canonical>)] = &[
    ("fcsErrors", Some(Canonical::CrcErrors)),
    ("symbolErrors", Some(Canonical::SymbolErrors)),
    ("inErrors", None),
    ("outErrors", None),
    ("alignmentErrors", None),
    ("frameTooLongs", None),
    ("frameTooShorts", None),
];

/// `show interfaces counters errors`: FCS errors as CrcErrors and symbol
/// errors as SymbolErrors (the same hardware counters as `show interfaces`'
/// `inputErrorsDetail`: read one or the other, not both), the rest in
/// `other`.
pub fn parse_counters_errors(text: &str) -> Result<Vec<PortReadings>, ParseError> {
    flat_counters(
        "show interfaces counters errors",
        text,
        "interfaceErrorCounters",
        ERROR_COUNTERS,
    )
}

/// `show interfaces counters discards` → `interfaces.<port>.{inDiscards,
/// outDiscards}` as Discards and Drops (the switch-wide totals beside
/// `interfaces` are left out).
pub fn parse_counters_discards(text: &str) -> Result<Vec<PortReadings>, ParseError> {
    flat_counters(
        "show interfaces counters discards",
        text,
        "interfaces",
        &[
            ("inDiscards", Some(Canonical::Discards)),
            ("outDiscards", Some(Canonical::Drops)),
        ],
    )
}

fn flat_counters(
    tool: &str,
    text: &str,
    key: &str,
    table: &[(&str, Option<Canonical>)],
) -> Result<Vec<PortReadings>, ParseError> {
    let root = parse_root(tool, text)?;
    keyed(tool, "", &root, key)?
        .into_iter()
        .map(|(name, m)| {
            let mut entry = PortReadings::new(name);
            table_and_others(tool, &join(key, name), &mut entry, m, table)?;
            Ok(entry)
        })
        .collect()
}

/// PFC frames, as PfcPauseRx/PfcPauseTx. Two shapes:
/// - `show priority-flow-control counters` at revision 3 (what
///   [`Command::new`] pins): `interfaceCounters.<port>.{rxFrames,txFrames}`,
///   the port's totals over all priorities, so the readings carry no
///   priority;
/// - `show interfaces EthernetN priority-flow-control counters detail`:
///   `interfaces.<port>.priorities."<p>".{rxFrames,txFrames}`, per priority
///   (the shape Meta's DNE-TaaC reads on 7800-class switches; no captured
///   output was found).
pub fn parse_pfc_counters(text: &str) -> Result<Vec<PortReadings>, ParseError> {
    const TOOL: &str = "show priority-flow-control counters";
    const FRAMES: &[(&str, Option<Canonical>)] = &[
        ("rxFrames", Some(Canonical::PfcPauseRx)),
        ("txFrames", Some(Canonical::PfcPauseTx)),
    ];
    let root = parse_root(TOOL, text)?;
    if root.contains_key("interfaceCounters") {
        return keyed(TOOL, "", &root, "interfaceCounters")?
            .into_iter()
            .map(|(name, m)| {
                let mut entry = PortReadings::new(name);
                table_and_others(
                    TOOL,
                    &join("interfaceCounters", name),
                    &mut entry,
                    m,
                    FRAMES,
                )?;
                Ok(entry)
            })
            .collect();
    }
    if !root.contains_key("interfaces") {
        return Err(err(
            TOOL,
            "expected `interfaceCounters` (revision 3) or `interfaces.<port>.priorities` (counters detail)",
        ));
    }
    let mut out = Vec::new();
    for (name, m) in keyed(TOOL, "", &root, "interfaces")? {
        let at = format!("interfaces.{name}");
        let prios = object(
            TOOL,
            &join(&at, "priorities"),
            member(TOOL, &at, m, "priorities")?,
        )?;
        let mut entry = PortReadings::new(name);
        for (p, v) in prios {
            let pat = join(&join(&at, "priorities"), p);
            let priority = p
                .parse::<u8>()
                .ok()
                .filter(|p| *p < 8)
                .ok_or_else(|| err(TOOL, format!("{pat}: `{p}` is not a priority 0..7")))?;
            let frames = object(TOOL, &pat, v)?;
            for (key, canonical) in FRAMES {
                put(
                    TOOL,
                    &join(&pat, key),
                    &mut entry,
                    format!("priorities.{p}.{key}"),
                    frames.get(*key),
                    Slot {
                        canonical: *canonical,
                        priority: Some(priority),
                        queue: None,
                    },
                )?;
            }
        }
        out.push(entry);
    }
    Ok(out)
}

/// `show qos interfaces ecn counters queue` → `intfQueueCounters.<port>.
/// queueCounters."<queue>"`: packets ECN-marked per transmit queue, written
/// as a string; `-` where ECN is not configured on that queue, which is not
/// available, not 0.
pub fn parse_ecn_counters(text: &str) -> Result<Vec<PortReadings>, ParseError> {
    const TOOL: &str = "show qos interfaces ecn counters queue";
    let root = parse_root(TOOL, text)?;
    let mut out = Vec::new();
    for (name, m) in keyed(TOOL, "", &root, "intfQueueCounters")? {
        let at = format!("intfQueueCounters.{name}");
        let queues = object(
            TOOL,
            &join(&at, "queueCounters"),
            member(TOOL, &at, m, "queueCounters")?,
        )?;
        let mut entry = PortReadings::new(name);
        for (q, v) in queues {
            let path = join(&join(&at, "queueCounters"), q);
            let queue = q
                .parse::<u8>()
                .map_err(|_| err(TOOL, format!("{path}: `{q}` is not a queue number")))?;
            put(
                TOOL,
                &path,
                &mut entry,
                format!("queueCounters.{q}"),
                Some(v),
                Slot {
                    canonical: Some(Canonical::EcnMarked),
                    priority: None,
                    queue: Some(queue),
                },
            )?;
        }
        out.push(entry);
    }
    Ok(out)
}

/// `show interfaces counters queue drops`, on VOQ platforms (7280R, 7500R,
/// 7800R, 7700R): per port and traffic class, the packets dropped in the
/// ingress VOQs headed for this port and in its egress queue, both as Drops
/// on queue n. Elsewhere (7060X, 7050X) the command itself is refused and
/// [`parse_response`] says not available.
pub fn parse_queue_drops(text: &str) -> Result<Vec<PortReadings>, ParseError> {
    const TOOL: &str = "show interfaces counters queue drops";
    let root = parse_root(TOOL, text)?;
    let mut out = Vec::new();
    for (name, m) in keyed(TOOL, "", &root, "interfaces")? {
        let at = format!("interfaces.{name}");
        let tcs = object(
            TOOL,
            &join(&at, "trafficClasses"),
            member(TOOL, &at, m, "trafficClasses")?,
        )?;
        let mut entry = PortReadings::new(name);
        for (tc, v) in tcs {
            let tat = join(&join(&at, "trafficClasses"), tc);
            let queue = traffic_class(TOOL, &tat, tc)?;
            let t = object(TOOL, &tat, v)?;
            for side in ["ingressVoqCounters", "egressQueueCounters"] {
                let path = format!("{side}.countersSum.droppedPackets");
                put(
                    TOOL,
                    &join(&tat, &path),
                    &mut entry,
                    format!("trafficClasses.{tc}.{path}"),
                    lookup(TOOL, &tat, t, &path)?,
                    Slot {
                        canonical: Some(Canonical::Drops),
                        priority: None,
                        queue: Some(queue),
                    },
                )?;
            }
        }
        out.push(entry);
    }
    Ok(out)
}

/// `show interfaces counters queue detail` as JSON: `egressQueueCounters.
/// interfaces.<port>.{ucastQueues,mcastQueues}.trafficClasses.TCn.
/// dropPrecedences.DPn`. `droppedPackets` is Drops on queue n (not available
/// where missing); `enqueuedPackets` and `enqueuedBytes`, where printed,
/// TxPackets and TxBytes, as in the text form
/// ([`parse_queue_counters_detail`]); other numbers go to `other`.
pub fn parse_queue_counters_detail_json(text: &str) -> Result<Vec<PortReadings>, ParseError> {
    const TOOL: &str = "show interfaces counters queue detail";
    const FIELDS: &[(&str, Option<Canonical>)] = &[
        ("enqueuedPackets", Some(Canonical::TxPackets)),
        ("enqueuedBytes", Some(Canonical::TxBytes)),
    ];
    let root = parse_root(TOOL, text)?;
    let egress = object(
        TOOL,
        "egressQueueCounters",
        member(TOOL, "", &root, "egressQueueCounters")?,
    )?;
    let mut out = Vec::new();
    for (name, m) in keyed(TOOL, "egressQueueCounters", egress, "interfaces")? {
        let mut entry = PortReadings::new(name);
        for dest in ["ucastQueues", "mcastQueues"] {
            let iat = format!("egressQueueCounters.interfaces.{name}");
            let Some(tcs) = lookup(TOOL, &iat, m, &format!("{dest}.trafficClasses"))? else {
                continue;
            };
            let dat = join(&iat, dest);
            let tcs = object(TOOL, &join(&dat, "trafficClasses"), tcs)?;
            for (tc, v) in tcs {
                let tat = join(&join(&dat, "trafficClasses"), tc);
                let queue = traffic_class(TOOL, &tat, tc)?;
                let dps = object(
                    TOOL,
                    &join(&tat, "dropPrecedences"),
                    member(TOOL, &tat, object(TOOL, &tat, v)?, "dropPrecedences")?,
                )?;
                for (dp, v) in dps {
                    let pat = join(&join(&tat, "dropPrecedences"), dp);
                    let d = object(TOOL, &pat, v)?;
                    let label = format!("{dest}.{tc}.{dp}");
                    let slot = |canonical| Slot {
                        canonical,
                        priority: None,
                        queue: Some(queue),
                    };
                    put(
                        TOOL,
                        &join(&pat, "droppedPackets"),
                        &mut entry,
                        format!("{label}.droppedPackets"),
                        d.get("droppedPackets"),
                        slot(Some(Canonical::Drops)),
                    )?;
                    for (key, canonical) in FIELDS {
                        if let Some(v) = d.get(*key) {
                            put(
                                TOOL,
                                &join(&pat, key),
                                &mut entry,
                                format!("{label}.{key}"),
                                Some(v),
                                slot(*canonical),
                            )?;
                        }
                    }
                    for (key, v) in d {
                        if key != "droppedPackets" && !FIELDS.iter().any(|(k, _)| k == key) {
                            if let Some(x) = v.as_u64() {
                                entry.other.insert(format!("{label}.{key}"), x);
                            }
                        }
                    }
                }
            }
        }
        out.push(entry);
    }
    Ok(out)
}

// ------------------------------------------------------------ port states

/// One port as EOS reports it, for prior state, `recover` and the audit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct InterfaceState {
    /// As EOS keys it (`Ethernet1`, `Ethernet3/1/1`).
    pub name: String,
    /// `interfaceStatus` (`show interfaces`) or `linkStatus` (`show
    /// interfaces status`): `connected`, `notconnect`, `disabled`,
    /// `errdisabled`, `inactive`, …
    pub status: String,
    /// Not `shutdown`: every status but `disabled`. An errdisabled port is
    /// administratively up; `no shutdown` does not bring it back.
    pub admin_up: bool,
    /// Line protocol up (`lineProtocolStatus`; without it, `connected`).
    pub oper_up: bool,
    /// Why an errdisabled port was disabled (`link-flap`, `bpduguard`);
    /// `Some` (possibly empty) exactly when the status is `errdisabled`.
    pub errdisabled: Option<Vec<String>>,
    pub mtu: Option<u32>,
    /// From `bandwidth` (bit/s); `None` where EOS prints 0 (a port-channel
    /// without members).
    pub speed_mbps: Option<u64>,
}

impl InterfaceState {
    /// The port as a fault's prior state records it.
    pub fn port_state(&self) -> PortState {
        PortState {
            name: self.name.clone(),
            admin_up: self.admin_up,
            oper_up: self.oper_up,
        }
    }

    fn new(
        tool: &str,
        path: &str,
        name: &str,
        status: &str,
        m: &Object,
    ) -> Result<InterfaceState, ParseError> {
        let line = opt_string(tool, path, m, "lineProtocolStatus")?;
        let mtu = opt_u64(tool, path, m, "mtu")?
            .map(|v| {
                u32::try_from(v)
                    .map_err(|_| err(tool, format!("{}: {v} is not an MTU", join(path, "mtu"))))
            })
            .transpose()?;
        let errdisabled = if status == "errdisabled" {
            Some(match m.get("causes") {
                None | Some(Value::Null) => Vec::new(),
                Some(Value::Array(a)) => a
                    .iter()
                    .enumerate()
                    .map(|(i, c)| {
                        string(tool, &format!("{}[{i}]", join(path, "causes")), c)
                            .map(str::to_string)
                    })
                    .collect::<Result<_, _>>()?,
                Some(other) => {
                    return Err(err(
                        tool,
                        format!(
                            "{}: expected a list, got {}",
                            join(path, "causes"),
                            kind(other)
                        ),
                    ))
                }
            })
        } else {
            None
        };
        Ok(InterfaceState {
            name: name.to_string(),
            status: status.to_string(),
            admin_up: status != "disabled",
            oper_up: line.map_or(status == "connected", |l| l == "up"),
            errdisabled,
            mtu,
            speed_mbps: opt_u64(tool, path, m, "bandwidth")?
                .filter(|b| *b > 0)
                .map(|b| b / 1_000_000),
        })
    }
}

/// `show interfaces` (all, or one port): each port's state, MTU and speed.
pub fn parse_interfaces_state(text: &str) -> Result<Vec<InterfaceState>, ParseError> {
    const TOOL: &str = "show interfaces";
    let root = parse_root(TOOL, text)?;
    keyed(TOOL, "", &root, "interfaces")?
        .into_iter()
        .map(|(name, m)| {
            let at = join("interfaces", name);
            let status = string(
                TOOL,
                &join(&at, "interfaceStatus"),
                member(TOOL, &at, m, "interfaceStatus")?,
            )?;
            InterfaceState::new(TOOL, &at, name, status, m)
        })
        .collect()
}

/// `show interfaces status` and `show interfaces status errdisabled` →
/// `interfaceStatuses.<port>`. The status is `linkStatus` (what ANTA read
/// from `show interfaces status` until 2025); ANTA's test data for the
/// `errdisabled` form writes it `status`, with `causes`, so either is read.
pub fn parse_interfaces_status(text: &str) -> Result<Vec<InterfaceState>, ParseError> {
    const TOOL: &str = "show interfaces status";
    let root = parse_root(TOOL, text)?;
    keyed(TOOL, "", &root, "interfaceStatuses")?
        .into_iter()
        .map(|(name, m)| {
            let at = join("interfaceStatuses", name);
            let (key, v) = ["linkStatus", "status"]
                .into_iter()
                .find_map(|k| m.get(k).map(|v| (k, v)))
                .ok_or_else(|| err(TOOL, format!("{at}: no `linkStatus` (or `status`)")))?;
            let status = string(TOOL, &join(&at, key), v)?;
            InterfaceState::new(TOOL, &at, name, status, m)
        })
        .collect()
}

// ---------------------------------------------------------------------- BGP

/// One BGP peer in one VRF.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BgpPeer {
    pub vrf: String,
    pub peer: String,
    /// `peerState`: `Established`, `Active`, `Idle`, `Connect`, …
    pub state: String,
    /// Per address family (`ipv4Unicast`, `l2VpnEvpn`), its `afiSafiState`
    /// (`negotiated`, `advertised`, …); printed by `show bgp summary vrf
    /// all`, not by the per-family `show ip bgp summary vrf all`.
    pub families: Vec<(String, String)>,
}

impl BgpPeer {
    pub fn established(&self) -> bool {
        self.state == "Established"
    }
}

/// `show ip bgp summary vrf all`, `show ipv6 bgp summary vrf all` and `show
/// bgp summary vrf all` → `vrfs.<vrf>.peers.<peer>.peerState`: every peer
/// of every VRF. `{"vrfs": {}}` (no BGP configured) is no peers.
pub fn parse_bgp_summary(text: &str) -> Result<Vec<BgpPeer>, ParseError> {
    const TOOL: &str = "show bgp summary vrf all";
    let root = parse_root(TOOL, text)?;
    let mut out = Vec::new();
    for (vrf, m) in keyed(TOOL, "", &root, "vrfs")? {
        let at = join("vrfs", vrf);
        let peers = object(TOOL, &join(&at, "peers"), member(TOOL, &at, m, "peers")?)?;
        for (peer, p) in peers {
            let pat = join(&join(&at, "peers"), peer);
            let p = object(TOOL, &pat, p)?;
            let state = string(
                TOOL,
                &join(&pat, "peerState"),
                member(TOOL, &pat, p, "peerState")?,
            )?;
            let mut families = Vec::new();
            for (family, f) in p {
                if let Some(s) = f.as_object().and_then(|f| f.get("afiSafiState")) {
                    let s = string(TOOL, &join(&join(&pat, family), "afiSafiState"), s)?;
                    families.push((family.clone(), s.to_string()));
                }
            }
            out.push(BgpPeer {
                vrf: vrf.to_string(),
                peer: peer.clone(),
                state: state.to_string(),
                families,
            });
        }
    }
    Ok(out)
}

/// The peers a fault must not start from (or that have not come back).
pub fn not_established(peers: &[BgpPeer]) -> Vec<&BgpPeer> {
    peers.iter().filter(|p| !p.established()).collect()
}

// ------------------------------------------------------------- show version

/// What `show version` says about the switch.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EosVersion {
    /// As printed, suffix and all (`4.31.1F-34554157.4311F (engineering
    /// build)`).
    pub version: String,
    /// `modelName`: `DCS-7060DX5-64S`, `cEOSLab`, `vEOS`.
    pub model: String,
    pub internal_version: Option<String>,
    /// Empty on vEOS, so `None` there.
    pub serial: Option<String>,
    /// Seconds since boot: the clock `commitBy` and `commitTimerExpireTime`
    /// of [`ConfigSessions`] count in.
    pub uptime_s: Option<f64>,
}

pub fn parse_version(text: &str) -> Result<EosVersion, ParseError> {
    const TOOL: &str = "show version";
    let root = parse_root(TOOL, text)?;
    let required = |key: &str| -> Result<String, ParseError> {
        Ok(string(TOOL, key, member(TOOL, "", &root, key)?)?.to_string())
    };
    Ok(EosVersion {
        version: required("version")?,
        model: required("modelName")?,
        internal_version: opt_string(TOOL, "", &root, "internalVersion")?.map(str::to_string),
        serial: opt_string(TOOL, "", &root, "serialNumber")?.map(str::to_string),
        uptime_s: opt_f64(TOOL, "", &root, "uptime")?,
    })
}

// ---------------------------------------------------- configuration sessions

/// One configuration session.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ConfigSession {
    pub name: String,
    /// `pending`, `completed`, `pendingCommitTimer` (before EOS 4.32).
    pub state: String,
    /// Before 4.32: when its commit timer runs out, in seconds of uptime.
    pub commit_by_uptime_s: Option<f64>,
}

/// The one commit timer a switch runs: the dead-man of a fault.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PendingCommit {
    pub session: String,
    /// When the switch rolls the session back, in seconds of uptime
    /// ([`EosVersion::uptime_s`]); `None` where EOS did not say.
    pub expires_at_uptime_s: Option<f64>,
}

impl PendingCommit {
    /// Seconds until the rollback, given the switch's uptime now; `None`
    /// when unknown, 0 when already due.
    pub fn seconds_left(&self, uptime_s: f64) -> Option<f64> {
        self.expires_at_uptime_s.map(|t| (t - uptime_s).max(0.0))
    }
}

/// `show configuration sessions detail`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ConfigSessions {
    pub sessions: Vec<ConfigSession>,
    /// The session whose commit timer runs, if any.
    pub pending: Option<PendingCommit>,
}

/// `show configuration sessions detail` in both forms napalm reads: before
/// EOS 4.32 the pending session is the one whose `state` holds
/// `pendingCommitTimer`, with `commitBy`; from 4.32 on the answer carries
/// `commitTimerSessionName` and `commitTimerExpireTime` at the top. Times
/// count from boot; -1 (napalm's "something went wrong") is unknown. An
/// empty session name means no timer runs.
pub fn parse_config_sessions(text: &str) -> Result<ConfigSessions, ParseError> {
    const TOOL: &str = "show configuration sessions detail";
    let root = parse_root(TOOL, text)?;
    let known = |t: Option<f64>| t.filter(|t| *t >= 0.0);
    let mut sessions = Vec::new();
    if let Some(s) = root.get("sessions") {
        for (name, v) in object(TOOL, "sessions", s)? {
            let at = join("sessions", name);
            let m = object(TOOL, &at, v)?;
            sessions.push(ConfigSession {
                name: name.clone(),
                state: string(TOOL, &join(&at, "state"), member(TOOL, &at, m, "state")?)?
                    .to_string(),
                commit_by_uptime_s: known(opt_f64(TOOL, &at, m, "commitBy")?),
            });
        }
    } else if !root.contains_key("commitTimerSessionName") {
        return Err(err(
            TOOL,
            "expected `sessions` (EOS before 4.32) or `commitTimerSessionName` (4.32 on)",
        ));
    }
    let pending = match opt_string(TOOL, "", &root, "commitTimerSessionName")? {
        Some(session) => Some(PendingCommit {
            session: session.to_string(),
            expires_at_uptime_s: known(opt_f64(TOOL, "", &root, "commitTimerExpireTime")?),
        }),
        None => sessions
            .iter()
            .find(|s| s.state.contains("pendingCommitTimer"))
            .map(|s| PendingCommit {
                session: s.name.clone(),
                expires_at_uptime_s: s.commit_by_uptime_s,
            }),
    };
    Ok(ConfigSessions { sessions, pending })
}

// --------------------------------------------------------------------- LLDP

/// `"et-0/0/20"` → `et-0/0/20`: EOS quotes an `interfaceName` or `local`
/// port id (and its text CLI prints `Port ID : "Ethernet1"`).
fn unquote(s: &str) -> &str {
    let t = s.trim();
    t.strip_prefix('"')
        .and_then(|t| t.strip_suffix('"'))
        .unwrap_or(t)
}

/// `000f.532e.ced1` → `00:0f:53:2e:ce:d1`, the form lldpd (and so the
/// `linux` platform) prints; anything that is not 12 hex digits is kept.
fn mac(s: &str) -> String {
    let hex: String = s
        .chars()
        .filter(|c| !matches!(c, '.' | ':' | '-'))
        .collect();
    if hex.len() != 12 || !hex.chars().all(|c| c.is_ascii_hexdigit()) {
        return s.to_string();
    }
    let hex = hex.to_ascii_lowercase();
    (0..6)
        .map(|i| &hex[2 * i..2 * i + 2])
        .collect::<Vec<_>>()
        .join(":")
}

/// `show lldp neighbors detail` → `lldpNeighbors.<local port>.
/// lldpNeighborInfo[]`, one [`LldpNeighbor`] per entry. The port id is
/// `interfaceId_v2` where EOS prints it, else `interfaceId` unquoted; a MAC
/// port id (a Linux host's NIC) is written as lldpd writes it, and the
/// host's netdev name is then in `port_descr` (`interfaceDescription`).
pub fn parse_lldp_neighbors_detail(text: &str) -> Result<Vec<LldpNeighbor>, ParseError> {
    const TOOL: &str = "show lldp neighbors detail";
    let root = parse_root(TOOL, text)?;
    let mut out = Vec::new();
    for (port, m) in keyed(TOOL, "", &root, "lldpNeighbors")? {
        let at = join("lldpNeighbors", port);
        let list = member(TOOL, &at, m, "lldpNeighborInfo")?;
        let list = list.as_array().ok_or_else(|| {
            err(
                TOOL,
                format!("{at}.lldpNeighborInfo: expected a list, got {}", kind(list)),
            )
        })?;
        for (i, n) in list.iter().enumerate() {
            let nat = format!("{at}.lldpNeighborInfo[{i}]");
            let n = object(TOOL, &nat, n)?;
            let iat = join(&nat, "neighborInterfaceInfo");
            let info = object(TOOL, &iat, member(TOOL, &nat, n, "neighborInterfaceInfo")?)?;
            let id = match opt_string(TOOL, &iat, info, "interfaceId_v2")? {
                Some(v2) => v2,
                None => string(
                    TOOL,
                    &join(&iat, "interfaceId"),
                    member(TOOL, &iat, info, "interfaceId")?,
                )?,
            };
            let port_id = match opt_string(TOOL, &iat, info, "interfaceIdType")? {
                Some("macAddress") => mac(unquote(id)),
                _ => unquote(id).to_string(),
            };
            let chassis_id = match (
                opt_string(TOOL, &nat, n, "chassisId")?,
                opt_string(TOOL, &nat, n, "chassisIdType")?,
            ) {
                (Some(c), Some("macAddress")) => Some(mac(c)),
                (c, _) => c.map(str::to_string),
            };
            let mgmt_ip = match n.get("managementAddresses") {
                None | Some(Value::Null) => None,
                Some(Value::Array(a)) => match a.first() {
                    Some(first) => {
                        let mat = format!("{nat}.managementAddresses[0]");
                        opt_string(TOOL, &mat, object(TOOL, &mat, first)?, "address")?
                            .map(str::to_string)
                    }
                    None => None,
                },
                Some(other) => {
                    return Err(err(
                        TOOL,
                        format!(
                            "{nat}.managementAddresses: expected a list, got {}",
                            kind(other)
                        ),
                    ))
                }
            };
            out.push(LldpNeighbor {
                interface: port.to_string(),
                chassis_name: opt_string(TOOL, &nat, n, "systemName")?.map(str::to_string),
                chassis_id,
                chassis_descr: opt_string(TOOL, &nat, n, "systemDescription")?.map(str::to_string),
                port_id,
                port_descr: opt_string(TOOL, &iat, info, "interfaceDescription")?
                    .map(str::to_string),
                mgmt_ip,
            });
        }
    }
    Ok(out)
}

// --------------------------------------------------------------- text forms

/// One row of `show errdisable recovery`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ErrdisableRecovery {
    /// `link-flap`, `bpduguard`, `acl`, …
    pub reason: String,
    /// Timer Status `Enabled`: the port comes back by itself.
    pub enabled: bool,
    /// Timer Interval in seconds; `None` for `N/A` (not configurable).
    pub interval_s: Option<u32>,
}

/// `show errdisable recovery`, which has no JSON form (ANTA asks for it as
/// text): a `Errdisable Reason  Timer Status  Timer Interval` header, a
/// ruler, then one `REASON STATUS INTERVAL` row per cause.
pub fn parse_errdisable_recovery(text: &str) -> Result<Vec<ErrdisableRecovery>, ParseError> {
    const TOOL: &str = "show errdisable recovery";
    let mut header = false;
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let t = line.trim();
        if t.starts_with("Errdisable Reason") && t.contains("Timer Status") {
            header = true;
            continue;
        }
        if !header || t.is_empty() || t.chars().all(|c| c == '-' || c.is_whitespace()) {
            continue;
        }
        let bad = |why: String| err(TOOL, format!("line {}: {why}", n + 1));
        let toks: Vec<&str> = t.split_whitespace().collect();
        let [reason, status, interval] = toks[..] else {
            return Err(bad(format!("expected REASON STATUS INTERVAL, got `{t}`")));
        };
        let enabled = match status {
            "Enabled" => true,
            "Disabled" => false,
            _ => {
                return Err(bad(format!(
                    "timer status `{status}` is neither Enabled nor Disabled"
                )))
            }
        };
        let interval_s = match interval {
            "N/A" => None,
            i => Some(
                i.parse()
                    .map_err(|_| bad(format!("timer interval `{i}` is not seconds")))?,
            ),
        };
        out.push(ErrdisableRecovery {
            reason: reason.to_string(),
            enabled,
            interval_s,
        });
    }
    if !header {
        return Err(err(
            TOOL,
            format!(
                "no `Errdisable Reason … Timer Status` header in {}",
                first_line(text)
            ),
        ));
    }
    Ok(out)
}

// --------------------------------------------------------------- port names

/// EOS's interface prefixes, short and long, and the long form they stand
/// for. Every long form maps to itself, so [`normalise_port`] is idempotent.
const PREFIXES: &[(&str, &str)] = &[
    ("et", "ethernet"),
    ("eth", "ethernet"),
    ("ethernet", "ethernet"),
    ("po", "port-channel"),
    ("portchannel", "port-channel"),
    ("port-channel", "port-channel"),
    ("ma", "management"),
    ("mgmt", "management"),
    ("management", "management"),
    ("lo", "loopback"),
    ("loopback", "loopback"),
    ("vl", "vlan"),
    ("vlan", "vlan"),
    ("vx", "vxlan"),
    ("vxlan", "vxlan"),
];

/// The form in which an inventory's port name, an EOS JSON key, the short
/// name of EOS's text output and an LLDP port id of the same port compare
/// equal: `Et1`, `Eth1`, `ethernet1`, ` "Ethernet1" ` → `ethernet1`;
/// `Ethernet1/1`, `Et1/1` → `ethernet1/1`. Surrounding quotes and blanks
/// go, case folds, a short prefix is spelt out, a blank between prefix and
/// number goes. The numbers are kept as written: `Ethernet1` (a port that
/// cannot be split) and `Ethernet1/1` (lane 1 of port 1) are different
/// interfaces, as are `Ethernet3/1` and `Ethernet3/1/1` on a modular
/// chassis. Idempotent.
pub fn normalise_port(name: &str) -> String {
    let n = name
        .trim_matches(|c: char| c == '"' || c.is_whitespace())
        .to_ascii_lowercase();
    let split = n
        .find(|c: char| !(c.is_ascii_alphabetic() || c == '-'))
        .unwrap_or(n.len());
    let (prefix, rest) = n.split_at(split);
    let rest = rest.trim_start();
    if !rest.starts_with(|c: char| c.is_ascii_digit()) {
        return n;
    }
    let full = PREFIXES
        .iter()
        .find(|(short, _)| *short == prefix)
        .map_or(prefix, |(_, long)| long);
    format!("{full}{rest}")
}

// ----------------------------------------------------------- text counters

/// `show interfaces counters queue detail` (the egress section): one row
/// per port, traffic class, drop precedence and destination type. The
/// header spans two lines (`Traffic` over `Class`), so rows are read by
/// whitespace: PORT TCn DP DESTTYPE four numbers. Enqueued packets and
/// octets become per-queue TxPackets/TxBytes, dropped packets Drops,
/// dropped octets go to `other`; the queue is the traffic class.
pub fn parse_queue_counters_detail(text: &str) -> Result<Vec<PortReadings>, ParseError> {
    const TOOL: &str = "show interfaces counters queue detail";
    let err = |r: String| ParseError(format!("{TOOL}: {r}"));
    let mut ports = Vec::new();
    let mut header = false;
    for (n, line) in text.lines().enumerate() {
        let toks: Vec<&str> = line.split_whitespace().collect();
        if toks.first() == Some(&"Port") && toks.contains(&"OutEnqPkts") {
            header = true;
            continue;
        }
        if !header || toks.is_empty() || toks == ["Class"] {
            continue;
        }
        let [port, tc, dp, dest, enq_pkts, enq_octets, drop_pkts, drop_octets] = toks[..] else {
            return Err(err(format!(
                "line {}: expected PORT TC DROPPREC DESTTYPE and four counters, got `{}`",
                n + 1,
                line.trim()
            )));
        };
        let queue: u8 = tc
            .strip_prefix("TC")
            .and_then(|q| q.parse().ok())
            .ok_or_else(|| err(format!("line {}: traffic class `{tc}` is not TCn", n + 1)))?;
        let entry = port_entry(&mut ports, port);
        let label = |name: &str| format!("{tc} {dp} {dest} {name}");
        for (name, tok, canonical) in [
            ("OutEnqPkts", enq_pkts, Some(Canonical::TxPackets)),
            ("OutEnqOctets", enq_octets, Some(Canonical::TxBytes)),
            ("OutDropPkts", drop_pkts, Some(Canonical::Drops)),
            ("OutDropOctets", drop_octets, None),
        ] {
            let vendor = label(name);
            match (cell(TOOL, &format!("{port} {vendor}"), tok)?, canonical) {
                (None, _) => entry.not_available.push(vendor),
                (Some(v), Some(c)) => entry.readings.push(Reading {
                    canonical: c,
                    vendor,
                    priority: None,
                    queue: Some(queue),
                    value: v,
                    bits: None,
                }),
                (Some(v), None) => {
                    entry.other.insert(vendor, v);
                }
            }
        }
    }
    if !header {
        return Err(err(format!(
            "no `Port … OutEnqPkts` header in {}",
            first_line(text)
        )));
    }
    Ok(ports)
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIX: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/eos/");

    fn fixture(name: &str) -> String {
        std::fs::read_to_string(format!("{FIX}{name}")).unwrap()
    }

    fn port<'a>(ports: &'a [PortReadings], name: &str) -> &'a PortReadings {
        ports.iter().find(|p| p.port == name).unwrap()
    }

    /// The reading `vendor` of `p`, as (canonical, priority, queue, value).
    fn read(p: &PortReadings, vendor: &str) -> (Canonical, Option<u8>, Option<u8>, u64) {
        let r = p
            .readings
            .iter()
            .find(|r| r.vendor == vendor)
            .unwrap_or_else(|| panic!("{}: no {vendor} in {:?}", p.port, p.readings));
        (r.canonical, r.priority, r.queue, r.value)
    }

    /// `body` read as the answer to a call with `id` `t`.
    fn replies(body: &str, cmds: &[&str], format: Format) -> Result<Vec<Reply>, ParseError> {
        let cmds: Vec<Command> = cmds.iter().map(|c| Command::new(c)).collect();
        parse_response(body, "t", &cmds, format)
    }

    fn json_of(r: &Reply) -> String {
        match r {
            Reply::Json(v) => v.to_string(),
            other => panic!("not a JSON reply: {other:?}"),
        }
    }

    // ------------------------------------------------------------ envelope

    #[test]
    fn request_pins_revisions_and_names_the_format() {
        let cmds = [
            Command::new("show version"),
            Command::new("show  priority-flow-control   counters"),
        ];
        let body: Value =
            serde_json::from_str(&request("rocegate-7", &cmds, Format::Json)).unwrap();
        assert_eq!(
            body,
            json!({
                "jsonrpc": "2.0",
                "method": "runCmds",
                "params": {
                    "version": 1,
                    "cmds": [
                        "show version",
                        {"cmd": "show priority-flow-control counters", "revision": 3}
                    ],
                    "format": "json"
                },
                "id": "rocegate-7"
            })
        );
        let text: Value = serde_json::from_str(&request(
            "x",
            &[Command::new("show errdisable recovery")],
            Format::Text,
        ))
        .unwrap();
        assert_eq!(text["params"]["format"], "text");
        assert_eq!(text["params"]["cmds"], json!(["show errdisable recovery"]));
    }

    #[test]
    fn a_success_is_one_reply_per_command() {
        let body = fixture("eapi-response-success-show-version-show-clock-ceoslab-anta.json")
            .replace("EapiExplorer-1", "t");
        let r = replies(&body, &["show version", "show clock"], Format::Json).unwrap();
        assert_eq!(r.len(), 2);
        let v = parse_version(&json_of(&r[0])).unwrap();
        assert_eq!(v.version, "4.31.1F-34554157.4311F (engineering build)");
        assert_eq!(v.model, "cEOSLab");
        assert_eq!(
            v.serial.as_deref(),
            Some("5E9D49D20F09DA471333DD835835FD1A")
        );
        assert_eq!(v.uptime_s, Some(1300202.749528885));
        assert!(json_of(&r[1]).contains("\"utcTime\":1724729442.6863558"));
    }

    /// ANTA's cEOSLab error: command 2 of 3 failed with 1002 `Invalid
    /// input`; `data` holds command 1's output and command 2's errors,
    /// nothing for command 3.
    #[test]
    fn an_error_keeps_what_ran_and_names_the_failed_command() {
        let body = fixture("eapi-response-error-1002-command-2-of-3-ceoslab-anta.json")
            .replace("EapiExplorer-1", "t");
        let r = replies(
            &body,
            &["show version", "bad command", "show clock"],
            Format::Json,
        )
        .unwrap();
        assert_eq!(parse_version(&json_of(&r[0])).unwrap().model, "cEOSLab");
        let Reply::NotAvailable(why) = &r[1] else {
            panic!("{:?}", r[1])
        };
        assert!(why.contains("`bad command`"), "{why}");
        assert!(why.contains("error 1002"), "{why}");
        assert!(why.contains("Invalid input (at token 1: 'bad')"), "{why}");
        let Reply::NotRun(why) = &r[2] else {
            panic!("{:?}", r[2])
        };
        assert!(why.contains("`show clock`"), "{why}");
    }

    fn error_body(code: i64, message: &str, data: Value) -> String {
        json!({"jsonrpc": "2.0", "id": "t", "error": {"code": code, "message": message, "data": data}})
            .to_string()
    }

    #[test]
    fn refusals_are_sorted_by_code_and_text() {
        let drops = "show interfaces counters queue drops";
        let cases = [
            (
                1002,
                "Incomplete command (at token 4: 'drops')",
                "not available",
            ),
            (
                1000,
                "Unavailable command (not supported on this hardware platform)",
                "not available",
            ),
            (1003, "unconverted command", "no json"),
            (
                1005,
                "Command unauthorized: user has insufficient permissions to run the command",
                "privilege",
            ),
            (1002, "privileged mode required", "privilege"),
            (1000, "could not run command", "failed"),
            (1002, "% Ambiguous command", "failed"),
        ];
        for (code, text, want) in cases {
            let body = error_body(
                code,
                &format!("CLI command 2 of 2 '{drops}' failed"),
                json!([{"modelName": "DCS-7280CR3-32P4"}, {"errors": [text]}]),
            );
            let r = replies(&body, &["show version", drops], Format::Json).unwrap();
            let (got, why) = match &r[1] {
                Reply::NotAvailable(w) => ("not available", w),
                Reply::NoJson(w) => ("no json", w),
                Reply::NeedsPrivilege(w) => ("privilege", w),
                Reply::Failed(w) => ("failed", w),
                other => panic!("{other:?}"),
            };
            assert_eq!(got, want, "{code} {text}: {why}");
            assert!(why.contains(drops) && why.contains(text), "{why}");
            if got == "privilege" {
                assert!(why.contains("privilege 15"), "{why}");
            }
        }
    }

    #[test]
    fn an_error_before_any_command_ran_falls_on_every_command() {
        let two = ["show version", "show clock"];
        let body = json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32602, "message": "Invalid params"}})
            .to_string();
        let r = replies(&body, &two, Format::Json).unwrap();
        for (reply, cmd) in r.iter().zip(two) {
            assert!(
                matches!(reply, Reply::Failed(w) if w.contains(cmd) && w.contains("-32602") && w.contains("Invalid params")),
                "{reply:?}"
            );
        }
        let body = error_body(
            1005,
            "Command unauthorized: user has insufficient permissions",
            json!([]),
        );
        let r = replies(&body, &two, Format::Json).unwrap();
        assert!(
            r.iter().all(|r| matches!(r, Reply::NeedsPrivilege(_))),
            "{r:?}"
        );
        // `data` that stops without an error entry: the next command failed.
        let body = error_body(
            1000,
            "CLI command 2 of 3 'show clock' failed: could not run command",
            json!([{"modelName": "vEOS"}]),
        );
        let r = replies(
            &body,
            &["show version", "show clock", "show lldp neighbors detail"],
            Format::Json,
        )
        .unwrap();
        assert!(matches!(&r[0], Reply::Json(_)), "{:?}", r[0]);
        assert!(
            matches!(&r[1], Reply::Failed(w) if w.starts_with("`show clock` failed (eAPI error 1000")),
            "{:?}",
            r[1]
        );
        assert!(matches!(&r[2], Reply::NotRun(_)), "{:?}", r[2]);
    }

    #[test]
    fn text_replies_are_their_output() {
        let out = fixture("show-errdisable-recovery-text-anta-unittest.txt");
        let body = json!({"jsonrpc": "2.0", "id": "t", "result": [{"output": out}]}).to_string();
        let r = replies(&body, &["show errdisable recovery"], Format::Text).unwrap();
        let Reply::Text(t) = &r[0] else {
            panic!("{:?}", r[0])
        };
        assert_eq!(parse_errdisable_recovery(t).unwrap().len(), 3);
        // A text answer whose entry has no `output`.
        let body = json!({"jsonrpc": "2.0", "id": "t", "result": [{"messages": []}]}).to_string();
        let e = replies(&body, &["show errdisable recovery"], Format::Text)
            .unwrap_err()
            .0;
        assert!(e.contains("result[0]: no `output`"), "{e}");
    }

    #[test]
    fn damaged_envelopes_are_errors_that_say_what_was_expected() {
        let two = ["show version", "show clock"];
        let cases: [(&str, &str); 10] = [
            (
                "<html><head><title>401 Authorization Required</title></head></html>",
                "expected the JSON eAPI returns",
            ),
            ("", "expected the JSON eAPI returns"),
            ("[]", "expected an object, got a list"),
            (
                r#"{"jsonrpc":"2.0","id":"t","result":{"version":"4.31.1F"}}"#,
                "result: expected a list with one entry per command, got an object",
            ),
            (
                r#"{"jsonrpc":"2.0","id":"t","result":[{}]}"#,
                "result: 1 entries for 2 commands",
            ),
            (
                r#"{"jsonrpc":"2.0","id":"t","result":[{}, "x"]}"#,
                "result[1]: expected an object, got a string",
            ),
            (
                r#"{"jsonrpc":"2.0","id":"other","result":[{},{}]}"#,
                "id: the answer is to call",
            ),
            (
                r#"{"jsonrpc":"1.0","id":"t","result":[{},{}]}"#,
                "jsonrpc: expected \"2.0\"",
            ),
            (
                r#"{"jsonrpc":"2.0","id":"t","error":{"code":"1002","message":"x"}}"#,
                "error.code: expected an integer",
            ),
            (
                r#"{"jsonrpc":"2.0","id":"t"}"#,
                "expected `result` or `error`",
            ),
        ];
        for (body, want) in cases {
            let e = replies(body, &two, Format::Json).unwrap_err().0;
            assert!(e.starts_with("eAPI runCmds: "), "{e}");
            assert!(e.contains(want), "{body}: {e}");
        }
        for (body, want) in [
            (
                r#"{"id":"t","result":[{},{}],"error":{"code":1}}"#,
                "both `result` and `error`",
            ),
            (
                r#"{"id":"t","error":{"code":1002,"data":{"errors":[]}}}"#,
                "error.data: expected a list, got an object",
            ),
            (
                r#"{"id":"t","error":{"code":1002,"data":[{},{},{}]}}"#,
                "error.data: 3 entries for 2 commands",
            ),
            (
                r#"{"id":"t","error":{"code":1002,"message":"x","data":[{},{}]}}"#,
                "every command has an output",
            ),
            (
                r#"{"id":"t","error":{"code":1e400}}"#,
                "expected the JSON eAPI returns",
            ),
        ] {
            let e = replies(body, &two, Format::Json).unwrap_err().0;
            assert!(e.contains(want), "{body}: {e}");
        }
    }

    // ------------------------------------------------------------ counters

    /// pyeapi's vEOS `show interfaces` is a `result` list of one answer:
    /// read it through the envelope, then as counters and as state.
    #[test]
    fn show_interfaces_veos_through_the_envelope() {
        let body = format!(
            r#"{{"jsonrpc": "2.0", "id": "t", "result": {}}}"#,
            fixture("show-interfaces-veos-pyeapi.json")
        );
        let r = replies(&body, &["show interfaces"], Format::Json).unwrap();
        let text = json_of(&r[0]);
        let ports = parse_interfaces_counters(&text).unwrap();
        assert_eq!(ports.len(), 9);
        let e1 = port(&ports, "Ethernet1");
        assert_eq!(
            read(e1, "inOctets"),
            (Canonical::RxBytes, None, None, 582780)
        );
        assert_eq!(
            read(e1, "outOctets"),
            (Canonical::TxBytes, None, None, 1231864)
        );
        assert_eq!(read(e1, "inMulticastPkts").3, 2553);
        assert_eq!(
            read(e1, "inBroadcastPkts"),
            (Canonical::RxPackets, None, None, 425)
        );
        assert_eq!(
            read(e1, "outMulticastPkts"),
            (Canonical::TxPackets, None, None, 8250)
        );
        assert_eq!(
            read(e1, "inputErrorsDetail.fcsErrors").0,
            Canonical::CrcErrors
        );
        assert_eq!(
            read(e1, "linkStatusChanges/2"),
            (Canonical::LinkDown, None, None, 0)
        );
        assert_eq!(e1.other.get("outputErrorsDetail.collisions"), Some(&0));
        assert!(!e1.other.contains_key("counterRefreshTime"));
        assert!(e1.not_available.is_empty(), "{:?}", e1.not_available);
        let m1 = port(&ports, "Management1");
        assert_eq!(read(m1, "inOctets").3, 15172431);
        assert_eq!(read(m1, "outUcastPkts").3, 7823);
        assert_eq!(read(m1, "linkStatusChanges/2").3, 1); // 3 changes
        let lo = port(&ports, "Loopback0");
        assert!(lo.readings.is_empty());
        assert!(lo.not_available.contains(&"inOctets".to_string()));
        assert!(lo
            .not_available
            .contains(&"linkStatusChanges/2".to_string()));

        let states = parse_interfaces_state(&text).unwrap();
        let s = |n: &str| states.iter().find(|s| s.name == n).unwrap();
        assert_eq!(
            s("Ethernet1").port_state(),
            PortState {
                name: "Ethernet1".into(),
                admin_up: true,
                oper_up: true
            }
        );
        assert_eq!(s("Ethernet1").mtu, Some(1500));
        assert_eq!(s("Ethernet1").speed_mbps, Some(10_000));
        assert_eq!(s("Ethernet3").status, "disabled");
        assert!(!s("Ethernet3").admin_up && !s("Ethernet3").oper_up);
        assert_eq!(s("Ethernet3").mtu, Some(9214));
        assert_eq!(s("Management1").speed_mbps, Some(1000));
        assert_eq!(s("Loopback0").speed_mbps, None);
        assert_eq!(s("Loopback0").errdisabled, None);
    }

    #[test]
    fn show_interfaces_napalm_missing_blocks_are_not_available() {
        let text = fixture("show-interfaces-counters-napalm.json");
        let ports = parse_interfaces_counters(&text).unwrap();
        let e1 = port(&ports, "Ethernet1");
        assert_eq!(read(e1, "linkStatusChanges/2").3, 1); // 2 changes
        assert_eq!(e1.other.get("inputErrorsDetail.rxPause"), Some(&0));
        // A port-channel prints no error details: not available, never 0.
        let po = port(&ports, "Port-Channel1");
        for n in [
            "inputErrorsDetail.fcsErrors",
            "inputErrorsDetail.symbolErrors",
            "outputErrorsDetail.txPause",
        ] {
            assert!(
                po.not_available.contains(&n.to_string()),
                "{n}: {:?}",
                po.not_available
            );
            assert!(po.readings.iter().all(|r| r.vendor != n));
        }
        assert_eq!(read(po, "inDiscards"), (Canonical::Discards, None, None, 0));
        assert_eq!(port(&ports, "Port-Channel1.20").readings, vec![]);
        let states = parse_interfaces_state(&text).unwrap();
        assert_eq!(states[0].status, "notconnect");
        assert!(states[0].admin_up && !states[0].oper_up);
        assert_eq!(states[0].mtu, Some(9214));
        // bandwidth 0: no speed.
        assert_eq!(states[1].speed_mbps, None);
    }

    #[test]
    fn counters_errors_and_discards() {
        let p = parse_counters_errors(&fixture(
            "show-interfaces-counters-errors-anta-unittest.json",
        ))
        .unwrap();
        let e1 = port(&p, "Ethernet1");
        assert_eq!(e1.other.get("inErrors"), Some(&42));
        assert_eq!(e1.other.get("outErrors"), Some(&10));
        assert_eq!(read(e1, "fcsErrors"), (Canonical::CrcErrors, None, None, 0));
        let e6 = port(&p, "Ethernet6");
        assert_eq!(
            read(e6, "symbolErrors"),
            (Canonical::SymbolErrors, None, None, 10)
        );
        assert_eq!(e6.other.get("alignmentErrors"), Some(&6));
        assert_eq!(e6.other.get("frameTooShorts"), Some(&0));

        let p = parse_counters_discards(&fixture(
            "show-interfaces-counters-discards-anta-unittest.json",
        ))
        .unwrap();
        assert_eq!(p.len(), 2);
        assert_eq!(
            read(port(&p, "Ethernet1"), "inDiscards"),
            (Canonical::Discards, None, None, 42)
        );
        assert_eq!(
            read(port(&p, "Ethernet2"), "outDiscards"),
            (Canonical::Drops, None, None, 42)
        );
        let missing =
            parse_counters_discards(r#"{"interfaces":{"Ethernet1":{"inDiscards":5}}}"#).unwrap();
        assert_eq!(missing[0].not_available, vec!["outDiscards"]);
    }

    #[test]
    fn pfc_totals_and_per_priority() {
        let p = parse_pfc_counters(&fixture(
            "show-priority-flow-control-counters-rev3-anta-unittest.json",
        ))
        .unwrap();
        assert_eq!(p.len(), 4);
        assert_eq!(
            read(port(&p, "Ethernet3/1/1"), "rxFrames"),
            (Canonical::PfcPauseRx, None, None, 1)
        );
        assert_eq!(
            read(port(&p, "Ethernet3/2/1"), "txFrames"),
            (Canonical::PfcPauseTx, None, None, 2)
        );
        // The `counters detail` shape (no capture found; shape from DNE-TaaC).
        let detail = r#"{"interfaces": {"Ethernet1/1": {"priorities": {
            "3": {"rxFrames": 17, "txFrames": 4},
            "4": {"rxFrames": 0}}}}}"#;
        let p = parse_pfc_counters(detail).unwrap();
        assert_eq!(
            read(&p[0], "priorities.3.rxFrames"),
            (Canonical::PfcPauseRx, Some(3), None, 17)
        );
        assert_eq!(
            read(&p[0], "priorities.3.txFrames"),
            (Canonical::PfcPauseTx, Some(3), None, 4)
        );
        assert_eq!(p[0].not_available, vec!["priorities.4.txFrames"]);
        let e = parse_pfc_counters(r#"{"interfaces": {"Et1": {"priorities": {"9": {}}}}}"#)
            .unwrap_err()
            .0;
        assert!(e.contains("`9` is not a priority 0..7"), "{e}");
        let e = parse_pfc_counters(r#"{"counters": {}}"#).unwrap_err().0;
        assert!(
            e.contains("expected `interfaceCounters` (revision 3)"),
            "{e}"
        );
    }

    #[test]
    fn ecn_dash_is_not_available() {
        let p = parse_ecn_counters(&fixture(
            "show-qos-interfaces-ecn-counters-queue-dash-not-configured-anta-unittest.json",
        ))
        .unwrap();
        assert_eq!(p.len(), 4);
        let a = port(&p, "Ethernet10/28/1");
        assert_eq!(a.not_available, vec!["queueCounters.0"]);
        assert_eq!(
            read(a, "queueCounters.1"),
            (Canonical::EcnMarked, None, Some(1), 0)
        );
        assert_eq!(read(port(&p, "Ethernet10/20/1"), "queueCounters.1").3, 2);
        assert_eq!(
            read(port(&p, "Ethernet10/3/1"), "queueCounters.2"),
            (Canonical::EcnMarked, None, Some(2), 2)
        );
        assert_eq!(
            port(&p, "Ethernet10/16/1").not_available,
            vec!["queueCounters.2"]
        );
    }

    #[test]
    fn voq_and_egress_queue_drops() {
        let p = parse_queue_drops(&fixture(
            "show-interfaces-counters-queue-drops-voq-anta-unittest.json",
        ))
        .unwrap();
        let e48 = port(&p, "Ethernet48");
        assert_eq!(
            read(
                e48,
                "trafficClasses.TC0.ingressVoqCounters.countersSum.droppedPackets"
            ),
            (Canonical::Drops, None, Some(0), 3)
        );
        assert_eq!(
            read(
                e48,
                "trafficClasses.TC1.egressQueueCounters.countersSum.droppedPackets"
            )
            .3,
            5
        );
        assert_eq!(
            read(
                port(&p, "Ethernet49"),
                "trafficClasses.TC1.ingressVoqCounters.countersSum.droppedPackets"
            ),
            (Canonical::Drops, None, Some(1), 7)
        );
        // A platform without VOQs on this TC prints only the egress side.
        let one = r#"{"interfaces":{"Ethernet1":{"trafficClasses":{"TC7":{"egressQueueCounters":{"countersSum":{"droppedPackets":9}}}}}}}"#;
        let p = parse_queue_drops(one).unwrap();
        assert_eq!(
            p[0].not_available,
            vec!["trafficClasses.TC7.ingressVoqCounters.countersSum.droppedPackets"]
        );
        let e = parse_queue_drops(r#"{"interfaces":{"Ethernet1":{"trafficClasses":{"Q1":{}}}}}"#)
            .unwrap_err()
            .0;
        assert!(e.contains("`Q1` is not a traffic class TCn"), "{e}");
    }

    #[test]
    fn queue_detail_json() {
        let p = parse_queue_counters_detail_json(&fixture(
            "show-interfaces-counters-queue-detail-egress-anta-unittest.json",
        ))
        .unwrap();
        let e1 = port(&p, "Ethernet1");
        assert_eq!(
            read(e1, "ucastQueues.TC0.DP0.droppedPackets"),
            (Canonical::Drops, None, Some(0), 2)
        );
        assert_eq!(
            read(e1, "mcastQueues.TC1.DP0.droppedPackets"),
            (Canonical::Drops, None, Some(1), 3)
        );
        assert_eq!(
            read(port(&p, "Ethernet2"), "ucastQueues.TC1.DP0.droppedPackets").3,
            2
        );
    }

    // ------------------------------------------------------ state and audit

    #[test]
    fn interfaces_status_errdisabled_with_and_without_causes() {
        let s = parse_interfaces_status(&fixture(
            "show-interfaces-status-errdisabled-anta-unittest.json",
        ))
        .unwrap();
        assert_eq!(s.len(), 1);
        assert_eq!(s[0].name, "Ethernet2");
        assert_eq!(s[0].errdisabled, Some(vec!["bpduguard".to_string()]));
        assert!(s[0].admin_up && !s[0].oper_up);
        let s = parse_interfaces_status(&fixture(
            "show-interfaces-status-linkstatus-errdisabled-anta-unittest.json",
        ))
        .unwrap();
        assert_eq!(s.len(), 2);
        assert!(s.iter().all(|s| s.errdisabled == Some(vec![])));
        let up = parse_interfaces_status(
            r#"{"interfaceStatuses":{"Ethernet7":{"linkStatus":"connected","lineProtocolStatus":"up","bandwidth":400000000000},
                "Ethernet8":{"linkStatus":"disabled"}}}"#,
        )
        .unwrap();
        assert!(up[0].admin_up && up[0].oper_up);
        assert_eq!(up[0].speed_mbps, Some(400_000));
        assert!(!up[1].admin_up && !up[1].oper_up);
        let e =
            parse_interfaces_status(r#"{"interfaceStatuses":{"Ethernet1":{"description":""}}}"#)
                .unwrap_err()
                .0;
        assert!(
            e.contains("interfaceStatuses.Ethernet1: no `linkStatus`"),
            "{e}"
        );
    }

    #[test]
    fn bgp_peers_in_every_vrf() {
        let p = parse_bgp_summary(&fixture(
            "show-ip-bgp-summary-vrf-all-established-active-napalm.json",
        ))
        .unwrap();
        assert_eq!(p.len(), 2);
        assert_eq!(
            (p[0].vrf.as_str(), p[0].peer.as_str(), p[0].state.as_str()),
            ("default", "10.0.0.1", "Established")
        );
        let down = not_established(&p);
        assert_eq!(down.len(), 1);
        assert_eq!(
            (down[0].peer.as_str(), down[0].state.as_str()),
            ("10.0.0.3", "Active")
        );
        assert!(
            parse_bgp_summary(&fixture("show-ip-bgp-summary-vrf-all-nopeers-napalm.json"))
                .unwrap()
                .is_empty()
        );
        assert!(
            parse_bgp_summary(&fixture("show-ip-bgp-summary-vrf-all-nobgp-napalm.json"))
                .unwrap()
                .is_empty()
        );
        let p = parse_bgp_summary(&fixture(
            "show-bgp-summary-vrf-all-afisafi-anta-unittest.json",
        ))
        .unwrap();
        assert_eq!(p.len(), 3);
        assert_eq!(not_established(&p).len(), 3);
        let dev = p.iter().find(|p| p.vrf == "DEV").unwrap();
        assert_eq!(
            (dev.peer.as_str(), dev.state.as_str()),
            ("10.1.254.1", "Idle")
        );
        assert_eq!(
            dev.families,
            vec![("ipv4Unicast".to_string(), "negotiated".to_string())]
        );
        let p1 = p.iter().find(|p| p.peer == "10.1.0.1").unwrap();
        assert_eq!(p1.families.len(), 2);
        let e = parse_bgp_summary(r#"{"vrfs":{"default":{"peers":{"10.0.0.1":{"peerState":4}}}}}"#)
            .unwrap_err()
            .0;
        assert!(
            e.contains("vrfs.default.peers.10.0.0.1.peerState: expected a string, got a number"),
            "{e}"
        );
    }

    #[test]
    fn versions() {
        let v = parse_version(&fixture("show-version-pyeapi.json")).unwrap();
        assert_eq!(
            v.version,
            "4.14.1-2055159.fldaytonamplspush (engineering build)"
        );
        assert_eq!(v.model, "DCS-7048T-A-F");
        assert_eq!(v.serial.as_deref(), Some("JPE14151521"));
        assert_eq!(v.uptime_s, None);
        let v = parse_version(&fixture("show-version-veos-4.15.5M-napalm.json")).unwrap();
        assert_eq!((v.version.as_str(), v.model.as_str()), ("4.15.5M", "vEOS"));
        assert_eq!(v.serial, None);
        assert_eq!(v.internal_version.as_deref(), Some("4.15.5M-3054042.4155M"));
        let e = parse_version(r#"{"version":"4.32.1F"}"#).unwrap_err().0;
        assert_eq!(e, "show version: the answer: no `modelName`");
        let e = parse_version(r#"{"version":"4.32.1F","modelName":"x","uptime":"long"}"#)
            .unwrap_err()
            .0;
        assert!(e.contains("uptime: expected seconds"), "{e}");
    }

    #[test]
    fn config_sessions_before_and_after_4_32() {
        let s = parse_config_sessions(&fixture(
            "show-configuration-sessions-detail-pre432-asynceapi-docstring.json",
        ))
        .unwrap();
        assert_eq!(s.sessions.len(), 2);
        let j = s.sessions.iter().find(|s| s.name == "jeremy1").unwrap();
        assert_eq!(j.state, "pending");
        assert_eq!(s.pending, None);
        // Before 4.32: the session's own state and commitBy (keys as napalm reads them).
        let old = r#"{"sessions": {"rocegate-f1": {"state": "pendingCommitTimer", "commitBy": 1300502.5},
                                   "other": {"state": "completed"}}}"#;
        let p = parse_config_sessions(old).unwrap().pending.unwrap();
        assert_eq!(p.session, "rocegate-f1");
        assert_eq!(p.seconds_left(1300202.5), Some(300.0));
        assert_eq!(p.seconds_left(1400000.0), Some(0.0));
        // 4.32 on: at the top.
        let new = r#"{"sessions": {}, "commitTimerSessionName": "rocegate-f2", "commitTimerExpireTime": 500.0}"#;
        let p = parse_config_sessions(new).unwrap().pending.unwrap();
        assert_eq!(
            (p.session.as_str(), p.expires_at_uptime_s),
            ("rocegate-f2", Some(500.0))
        );
        let unknown = r#"{"commitTimerSessionName": "s", "commitTimerExpireTime": -1}"#;
        assert_eq!(
            parse_config_sessions(unknown)
                .unwrap()
                .pending
                .unwrap()
                .seconds_left(1.0),
            None
        );
        let none = r#"{"sessions": {}, "commitTimerSessionName": ""}"#;
        assert_eq!(parse_config_sessions(none).unwrap().pending, None);
        let e = parse_config_sessions(r#"{"maxOpenSessions": 5}"#)
            .unwrap_err()
            .0;
        assert!(e.contains("expected `sessions` (EOS before 4.32)"), "{e}");
    }

    #[test]
    fn lldp_mac_port_ids_and_quoted_names() {
        let n = parse_lldp_neighbors_detail(&fixture(
            "show-lldp-neighbors-detail-macaddress-portid-napalm.json",
        ))
        .unwrap();
        assert_eq!(n.len(), 41);
        let e8 = n.iter().find(|n| n.interface == "Ethernet8").unwrap();
        assert_eq!(
            *e8,
            LldpNeighbor {
                interface: "Ethernet8".into(),
                chassis_name: Some("78m3".into()),
                chassis_id: Some("2c:60:0c:ad:30:de".into()),
                chassis_descr: Some(e8.chassis_descr.clone().unwrap()),
                port_id: "00:0f:53:2e:ce:d1".into(),
                port_descr: Some("eth3".into()),
                mgmt_ip: Some("192.168.8.21".into()),
            }
        );
        assert!(e8
            .chassis_descr
            .as_deref()
            .unwrap()
            .starts_with("Linux 3.18.22-cloudflare"));
        // A Juniper neighbour with a `local` port id, quoted, and no address.
        let e47 = n.iter().find(|n| n.interface == "Ethernet47").unwrap();
        assert_eq!(
            (e47.port_id.as_str(), e47.mgmt_ip.as_deref()),
            ("597", None)
        );
        assert_eq!(e47.chassis_name.as_deref(), Some("ms01.bru01"));

        let n = parse_lldp_neighbors_detail(&fixture(
            "show-lldp-neighbors-detail-quoted-interfacename-napalm-issue1153.json",
        ))
        .unwrap();
        let q = n.iter().find(|n| n.interface == "Ethernet27/1").unwrap();
        assert_eq!(q.port_id, "et-0/0/20");
        assert_eq!(q.chassis_name.as_deref(), Some("some-switch"));
        let h = n.iter().find(|n| n.interface == "Ethernet1/1").unwrap();
        assert_eq!(h.mgmt_ip.as_deref(), Some("10.0.0.1"));
        assert_eq!(h.port_descr.as_deref(), Some("eth0"));

        let n = parse_lldp_neighbors_detail(&fixture(
            "show-lldp-neighbors-detail-interfaceid-v2-anta-unittest.json",
        ))
        .unwrap();
        assert_eq!(n.len(), 2);
        assert_eq!(n[0].chassis_name.as_deref(), Some("DC1-SPINE1.local.com"));
        assert_eq!(n[1].port_id, "Ethernet1");
        assert_eq!(normalise_port(&n[1].port_id), normalise_port("Et1"));
        // `show lldp neighbors` (not detail) lists; this reader says so.
        let e = parse_lldp_neighbors_detail(r#"{"lldpNeighbors": [{"port": "Ethernet1"}]}"#)
            .unwrap_err()
            .0;
        assert!(
            e.contains("lldpNeighbors: expected an object, got a list"),
            "{e}"
        );
        let e = parse_lldp_neighbors_detail(
            r#"{"lldpNeighbors": {"Ethernet1": {"lldpNeighborInfo": {"systemName": "x"}}}}"#,
        )
        .unwrap_err()
        .0;
        assert!(
            e.contains("lldpNeighbors.Ethernet1.lldpNeighborInfo: expected a list, got an object"),
            "{e}"
        );
    }

    #[test]
    fn errdisable_recovery_text() {
        let r =
            parse_errdisable_recovery(&fixture("show-errdisable-recovery-text-anta-unittest.txt"))
                .unwrap();
        assert_eq!(
            r,
            vec![
                ErrdisableRecovery {
                    reason: "acl".into(),
                    enabled: true,
                    interval_s: Some(300)
                },
                ErrdisableRecovery {
                    reason: "bpduguard".into(),
                    enabled: false,
                    interval_s: None
                },
                ErrdisableRecovery {
                    reason: "arp-inspection".into(),
                    enabled: true,
                    interval_s: Some(30)
                },
            ]
        );
        let e = parse_errdisable_recovery("% Invalid input").unwrap_err().0;
        assert!(
            e.contains("no `Errdisable Reason … Timer Status` header"),
            "{e}"
        );
        let cut = "Errdisable Reason  Timer Status  Timer Interval\n----- ----- -----\nlink-flap Enabled\n";
        let e = parse_errdisable_recovery(cut).unwrap_err().0;
        assert!(e.contains("line 3: expected REASON STATUS INTERVAL"), "{e}");
        let bad = "Errdisable Reason  Timer Status  Timer Interval\nlink-flap Enabled -300\n";
        assert!(parse_errdisable_recovery(bad)
            .unwrap_err()
            .0
            .contains("`-300` is not seconds"));
    }

    // ------------------------------------------------------ hostile answers

    /// Every JSON reader, by the command it reads.
    #[allow(clippy::type_complexity)]
    const READERS: &[(&str, fn(&str) -> Result<(), ParseError>)] = &[
        ("show interfaces", |t| {
            parse_interfaces_counters(t).map(drop)
        }),
        ("show interfaces", |t| parse_interfaces_state(t).map(drop)),
        ("show interfaces counters errors", |t| {
            parse_counters_errors(t).map(drop)
        }),
        ("show interfaces counters discards", |t| {
            parse_counters_discards(t).map(drop)
        }),
        ("show priority-flow-control counters", |t| {
            parse_pfc_counters(t).map(drop)
        }),
        ("show qos interfaces ecn counters queue", |t| {
            parse_ecn_counters(t).map(drop)
        }),
        ("show interfaces counters queue drops", |t| {
            parse_queue_drops(t).map(drop)
        }),
        ("show interfaces counters queue detail", |t| {
            parse_queue_counters_detail_json(t).map(drop)
        }),
        ("show interfaces status", |t| {
            parse_interfaces_status(t).map(drop)
        }),
        ("show bgp summary vrf all", |t| {
            parse_bgp_summary(t).map(drop)
        }),
        ("show version", |t| parse_version(t).map(drop)),
        ("show configuration sessions detail", |t| {
            parse_config_sessions(t).map(drop)
        }),
        ("show lldp neighbors detail", |t| {
            parse_lldp_neighbors_detail(t).map(drop)
        }),
    ];

    #[test]
    fn every_reader_names_its_command_and_what_it_expected() {
        for (tool, read) in READERS {
            for (text, want) in [
                (
                    "<html>502 Bad Gateway</html>",
                    "expected the JSON eAPI returns",
                ),
                (
                    "[{\"interfaces\": {}}]",
                    "the answer: expected an object, got a list",
                ),
                ("\"ok\"", "expected an object, got a string"),
            ] {
                let e = read(text).unwrap_err().0;
                assert!(e.starts_with(&format!("{tool}: ")), "{e}");
                assert!(e.contains(want), "{tool} on {text}: {e}");
            }
            let e = read("{}").unwrap_err().0;
            assert!(
                e.contains("the answer: no `") || e.contains(": expected `"),
                "{tool}: {e}"
            );
        }
    }

    #[test]
    fn impossible_counters_are_errors_not_zeros() {
        for (bad, why) in [
            ("-5", "negative"),
            ("1.5", "fractional"),
            ("1e30", "above 2^64"),
            ("18446744073709551616", "2^64"),
            ("true", "expected a counter, got a boolean"),
            ("{}", "expected a counter, got an object"),
            ("\"12x\"", "not a possible counter value"),
        ] {
            let text = format!(
                r#"{{"interfaces":{{"Ethernet1":{{"inDiscards":{bad},"outDiscards":0}}}}}}"#
            );
            let e = parse_counters_discards(&text).unwrap_err().0;
            assert!(e.contains("interfaces.Ethernet1.inDiscards"), "{bad}: {e}");
            assert!(e.contains(why), "{bad}: {e}");
        }
        // Wrong types one level up.
        let e = parse_interfaces_counters(
            r#"{"interfaces":{"Ethernet1":{"interfaceCounters":{"inputErrorsDetail":7}}}}"#,
        )
        .unwrap_err()
        .0;
        assert!(e.contains("interfaces.Ethernet1.interfaceCounters.inputErrorsDetail: expected an object, got a number"), "{e}");
        let e = parse_interfaces_counters(r#"{"interfaces":{"Ethernet1":[]}}"#)
            .unwrap_err()
            .0;
        assert!(
            e.contains("interfaces.Ethernet1: expected an object, got a list"),
            "{e}"
        );
        let e = parse_interfaces_state(
            r#"{"interfaces":{"Ethernet1":{"interfaceStatus":"connected","mtu":99999999999}}}"#,
        )
        .unwrap_err()
        .0;
        assert!(e.contains("is not an MTU"), "{e}");
        // The largest counter there is reads.
        let max = format!(
            r#"{{"interfaces":{{"Ethernet1":{{"inDiscards":{},"outDiscards":0}}}}}}"#,
            u64::MAX
        );
        assert_eq!(
            read(&parse_counters_discards(&max).unwrap()[0], "inDiscards").3,
            u64::MAX
        );
    }

    /// Every JSON fixture, cut short anywhere, is an error, never a panic
    /// or a partial reading.
    #[test]
    fn truncated_fixtures_are_errors() {
        let cases: &[(&str, usize)] = &[
            ("show-interfaces-counters-napalm.json", 0),
            ("show-interfaces-counters-errors-anta-unittest.json", 2),
            ("show-interfaces-counters-discards-anta-unittest.json", 3),
            (
                "show-priority-flow-control-counters-rev3-anta-unittest.json",
                4,
            ),
            (
                "show-qos-interfaces-ecn-counters-queue-dash-not-configured-anta-unittest.json",
                5,
            ),
            (
                "show-interfaces-counters-queue-drops-voq-anta-unittest.json",
                6,
            ),
            (
                "show-interfaces-counters-queue-detail-egress-anta-unittest.json",
                7,
            ),
            ("show-interfaces-status-errdisabled-anta-unittest.json", 8),
            (
                "show-ip-bgp-summary-vrf-all-established-active-napalm.json",
                9,
            ),
            ("show-version-pyeapi.json", 10),
            (
                "show-configuration-sessions-detail-pre432-asynceapi-docstring.json",
                11,
            ),
            (
                "show-lldp-neighbors-detail-quoted-interfacename-napalm-issue1153.json",
                12,
            ),
        ];
        for (name, reader) in cases {
            let text = fixture(name);
            let (_, read) = READERS[*reader];
            read(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
            let full = text.trim_end();
            for cut in (0..full.len()).filter(|c| full.is_char_boundary(*c)) {
                assert!(read(&full[..cut]).is_err(), "{name} cut at {cut} parsed");
            }
        }
    }

    proptest::proptest! {
        #[test]
        fn garbage_never_panics(text in "\\PC{0,300}") {
            for (_, read) in READERS {
                let _ = read(&text);
            }
            let _ = parse_errdisable_recovery(&text);
            let cmds = [Command::new("show version"), Command::new("show clock")];
            let _ = parse_response(&text, "t", &cmds, Format::Json);
            let _ = parse_response(&text, "t", &cmds, Format::Text);
        }

        #[test]
        fn json_shaped_garbage_never_panics(
            code in proptest::prop_oneof![proptest::strategy::Just(1002i64), -40000i64..40000],
            data in proptest::collection::vec(
                proptest::prop_oneof![
                    proptest::strategy::Just(json!({})),
                    proptest::strategy::Just(json!({"errors": ["Invalid input"]})),
                    proptest::strategy::Just(json!({"output": "x"})),
                    proptest::strategy::Just(json!("text")),
                    proptest::strategy::Just(json!(7)),
                ],
                0..4,
            ),
            message in "\\PC{0,40}",
        ) {
            let body = json!({"id": "t", "error": {"code": code, "message": message, "data": data}}).to_string();
            let cmds = [Command::new("show version"), Command::new("show clock"), Command::new("show lldp neighbors detail")];
            for format in [Format::Json, Format::Text] {
                if let Ok(r) = parse_response(&body, "t", &cmds, format) {
                    proptest::prop_assert_eq!(r.len(), 3);
                }
            }
        }

        #[test]
        fn normalising_is_idempotent(name in "\\PC{0,24}") {
            let once = normalise_port(&name);
            proptest::prop_assert_eq!(normalise_port(&once), once);
        }
    }

    #[test]
    fn port_names_normalise() {
        for n in [
            "Et1",
            "Eth1",
            "ethernet1",
            "Ethernet1",
            "ETHERNET1",
            " \"Ethernet1\" ",
            "Ethernet 1",
            "et1",
        ] {
            assert_eq!(normalise_port(n), "ethernet1", "{n}");
        }
        for n in ["Ethernet1/1", "Et1/1", "eth1/1", "\"Ethernet1/1\""] {
            assert_eq!(normalise_port(n), "ethernet1/1", "{n}");
        }
        assert_eq!(normalise_port("Et3/1/1"), "ethernet3/1/1");
        assert_eq!(normalise_port("Po10"), "port-channel10");
        assert_eq!(normalise_port("Port-Channel10"), "port-channel10");
        assert_eq!(normalise_port("Ma1"), "management1");
        assert_eq!(normalise_port("Ethernet1.20"), "ethernet1.20");
        // Different interfaces stay different.
        assert_ne!(normalise_port("Ethernet1"), normalise_port("Ethernet1/1"));
        assert_ne!(
            normalise_port("Ethernet3/1"),
            normalise_port("Ethernet3/1/1")
        );
        assert_ne!(normalise_port("Et1"), normalise_port("Et11"));
        // Not a port name: left alone but for case and quotes.
        assert_eq!(normalise_port("CPU"), "cpu");
        assert_eq!(normalise_port(""), "");
    }
}
