//! Cisco NX-OS: what rocegate sends to NX-API (`POST /ins`) and how it reads
//! the answers into the crate's canonical types. Pure functions: the HTTPS
//! channel lives in `switch::api`; this module knows request bodies and
//! answer shapes, never a connection.
//!
//! - Requests ([`ins_api_request`], [`jsonrpc_request`]) and answers
//!   ([`parse_ins_api`], [`parse_jsonrpc`]): one [`CommandReply`] per
//!   command, with the errors sorted by what the caller does next (ask again
//!   as text, report the read as not available, name the role it needs).
//! - Structured bodies are `TABLE_x`/`ROW_x` trees whose shape follows the
//!   data: one row is an object and several a list, an empty table is left
//!   out, and a number may be a JSON number or a string, within one object.
//!   [`rows`] and [`counter`] take every form.
//! - Counters ([`parse_interface_counters`], [`parse_counters_errors_json`],
//!   [`parse_pfc_interface_json`], [`parse_queuing_interface`]) carry the
//!   canonical names `linux` gives the same meaning; a counter the switch
//!   does not print is listed as not available, never read as 0.
//! - Prior state and audit: port state and err-disable cause, BGP peers of
//!   every VRF and address family, `show version`, LLDP neighbours (JSON and
//!   text), the PFC/ECN part of `show running-config ipqos`, and
//!   [`switch_config`], which turns those answers into a [`SwitchConfig`].
//! - The text parsers of `show interface counters errors` and `show
//!   interface priority-flow-control` read answers taken over SSH or as
//!   `cli_show_ascii`.
//! - [`normalise_port`]: `Eth1/1` (LLDP, text tables), `Ethernet1/1` (JSON)
//!   and `eth1/1` (the DME) name one port.
//!
//! Everything read here is untrusted: nothing panics on it, and an error
//! names what was expected.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::{Map, Value};

use super::config::excerpt;
use super::{EcnQueue, Fact, PortSettings, SwitchConfig};
use crate::counters::host::LldpNeighbor;
use crate::counters::{
    cell, first_line, port_entry, value, Canonical, ParseError, PortReadings, Reading,
};

fn reading(canonical: Canonical, vendor: &str, value: u64) -> Reading {
    Reading {
        canonical,
        vendor: vendor.to_string(),
        priority: None,
        queue: None,
        value,
        bits: None,
    }
}

/// The counters of `show interface counters errors` that have a canonical
/// name; the others (alignment, collisions, runts, giants…) go to `other`.
fn errors_canonical(name: &str) -> Option<Canonical> {
    Some(match name {
        "FCS-Err" => Canonical::CrcErrors,
        "Symbol-Err" => Canonical::SymbolErrors,
        "OutDiscards" => Canonical::Drops,
        "InDiscards" => Canonical::Discards,
        _ => return None,
    })
}

/// `show interface counters errors`: several sub-tables, each a header
/// line between two dashed rulers and one row per port. Columns are read
/// by whitespace, not position: real outputs (and genie's test data) have
/// values that drift out of their column. `--` is not applicable.
pub fn parse_counters_errors(text: &str) -> Result<Vec<PortReadings>, ParseError> {
    const TOOL: &str = "show interface counters errors";
    let err = |r: String| ParseError(format!("{TOOL}: {r}"));
    let is_ruler = |l: &str| l.len() >= 10 && l.trim().chars().all(|c| c == '-');
    let lines: Vec<&str> = text.lines().collect();
    let mut ports = Vec::new();
    let mut header: Option<Vec<&str>> = None;
    let mut tables = 0;
    for (n, line) in lines.iter().enumerate() {
        let toks: Vec<&str> = line.split_whitespace().collect();
        if is_ruler(line) || toks.is_empty() {
            continue;
        }
        if toks[0] == "Port" && n > 0 && is_ruler(lines[n - 1]) {
            header = Some(toks);
            tables += 1;
            continue;
        }
        let Some(h) = &header else { continue };
        if toks.len() != h.len() {
            return Err(err(format!(
                "line {}: {} values under a header of {} (`{}`)",
                n + 1,
                toks.len(),
                h.len(),
                line.trim()
            )));
        }
        let entry = port_entry(&mut ports, toks[0]);
        for (name, tok) in h.iter().zip(&toks).skip(1) {
            match (
                cell(TOOL, &format!("{} {name}", toks[0]), tok)?,
                errors_canonical(name),
            ) {
                (None, _) => entry.not_available.push(name.to_string()),
                (Some(v), Some(c)) => entry.readings.push(reading(c, name, v)),
                (Some(v), None) => {
                    entry.other.insert(name.to_string(), v);
                }
            }
        }
    }
    if tables == 0 {
        return Err(err(format!(
            "no `Port …` header between rulers in {}",
            first_line(text)
        )));
    }
    Ok(ports)
}

/// One port of `show interface priority-flow-control`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PfcPort {
    pub port: String,
    /// Admin mode: `Auto`, `On`, `Off`.
    pub mode: String,
    /// Operational state: `On` or `Off`.
    pub oper: String,
    /// The VL bitmap printed after `On` (`(8)`), when there is one.
    pub vl_bitmap: Option<String>,
    /// RxPPP and TxPPP as PFC pause frames received and sent (all
    /// priorities together).
    pub counters: PortReadings,
}

/// `show interface priority-flow-control`: `=` rulers, then `PORT MODE
/// OPER[(VL bmap)] RxPPP TxPPP` rows, with trailing spaces.
pub fn parse_pfc_interface(text: &str) -> Result<Vec<PfcPort>, ParseError> {
    const TOOL: &str = "show interface priority-flow-control";
    let err = |r: String| ParseError(format!("{TOOL}: {r}"));
    let mut header = false;
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let toks: Vec<&str> = line.split_whitespace().collect();
        if toks.first() == Some(&"Port") && toks.contains(&"RxPPP") {
            header = true;
            continue;
        }
        if !header || toks.is_empty() || line.trim().chars().all(|c| c == '=') {
            continue;
        }
        let (port, mode, oper, bitmap, rx, tx) = match toks[..] {
            [p, m, o, rx, tx] => (p, m, o, None, rx, tx),
            [p, m, o, b, rx, tx] if b.starts_with('(') => (p, m, o, Some(b), rx, tx),
            _ => {
                return Err(err(format!(
                    "line {}: expected PORT MODE OPER RxPPP TxPPP, got `{}`",
                    n + 1,
                    line.trim()
                )))
            }
        };
        let mut counters = PortReadings::new(port);
        for (name, tok, c) in [
            ("RxPPP", rx, Canonical::PfcPauseRx),
            ("TxPPP", tx, Canonical::PfcPauseTx),
        ] {
            match cell(TOOL, &format!("{port} {name}"), tok)? {
                Some(v) => counters.readings.push(reading(c, name, v)),
                None => counters.not_available.push(name.to_string()),
            }
        }
        out.push(PfcPort {
            port: port.to_string(),
            mode: mode.to_string(),
            oper: oper.to_string(),
            vl_bitmap: bitmap.map(|b| b.trim_matches(['(', ')']).to_string()),
            counters,
        });
    }
    if !header {
        return Err(err(format!(
            "no `Port Mode Oper … RxPPP TxPPP` header in {}",
            first_line(text)
        )));
    }
    Ok(out)
}

// ------------------------------------------------------------------ requests

/// How NX-API runs the commands of one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CliType {
    /// Structured output: `ins_api` `cli_show`, JSON-RPC `cli`.
    Show,
    /// The CLI's own text: `cli_show_ascii`, JSON-RPC `cli_ascii`. For a
    /// command that answers [`Reply::NoJson`], and for the running
    /// configuration.
    ShowAscii,
    /// Configuration commands, run in order in one configuration context:
    /// `cli_conf`, JSON-RPC `cli`. NX-API wants show and configuration
    /// commands in separate requests.
    Conf,
}

impl CliType {
    /// The `ins_api` `type`.
    pub fn ins_api_type(self) -> &'static str {
        match self {
            CliType::Show => "cli_show",
            CliType::ShowAscii => "cli_show_ascii",
            CliType::Conf => "cli_conf",
        }
    }

    /// The JSON-RPC `method`.
    pub fn rpc_method(self) -> &'static str {
        match self {
            CliType::Show | CliType::Conf => "cli",
            CliType::ShowAscii => "cli_ascii",
        }
    }
}

/// A request NX-API would not run as the commands it lists.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("NX-API request: {0}")]
pub struct BadCommand(pub String);

/// NX-API splits `input` at `;`, and a line break ends a CLI line: either
/// in a command (a port name from an inventory, say) would run a command of
/// its own, so both are refused rather than sent.
fn check_commands(commands: &[&str]) -> Result<(), BadCommand> {
    if commands.is_empty() {
        return Err(BadCommand("no command to send".into()));
    }
    for (i, c) in commands.iter().enumerate() {
        if c.trim().is_empty() {
            return Err(BadCommand(format!("command {} is empty", i + 1)));
        }
        if let Some(bad) = c.chars().find(|ch| *ch == ';' || ch.is_control()) {
            return Err(BadCommand(format!(
                "command {} (`{}`) holds {bad:?}, which NX-API reads as the end of a command",
                i + 1,
                c.escape_debug()
            )));
        }
    }
    Ok(())
}

#[derive(Serialize)]
struct InsApiRequest<'a> {
    ins_api: InsApiFields<'a>,
}

/// Declared in wire order, which serde keeps whatever map type
/// `serde_json` is built with: "some versions of NX-OS software fail to
/// process the payload properly if 'input' gets serialized before 'type'
/// and the payload of 'input' contains the word 'type'" (cisco.nxos
/// httpapi `request_builder`).
#[derive(Serialize)]
struct InsApiFields<'a> {
    version: &'a str,
    #[serde(rename = "type")]
    kind: &'a str,
    chunk: &'a str,
    sid: &'a str,
    input: String,
    output_format: &'a str,
}

/// The `ins_api` body that runs `commands` as `kind`, for `POST /ins` with
/// `Content-Type: application/json`: `{"ins_api":{"version":"1.0","type":
/// "cli_show","chunk":"0","sid":"1","input":"cmd1 ;cmd2","output_format":
/// "json"}}`. Unchunked (`chunk` "0"), so the answer is whole (`sid` "eoc").
pub fn ins_api_request(kind: CliType, commands: &[&str]) -> Result<String, BadCommand> {
    check_commands(commands)?;
    let input: Vec<&str> = commands.iter().map(|c| c.trim()).collect();
    let body = InsApiRequest {
        ins_api: InsApiFields {
            version: "1.0",
            kind: kind.ins_api_type(),
            chunk: "0",
            sid: "1",
            input: input.join(" ;"),
            output_format: "json",
        },
    };
    serde_json::to_string(&body).map_err(|e| BadCommand(e.to_string()))
}

#[derive(Serialize)]
struct RpcCall<'a> {
    jsonrpc: &'a str,
    method: &'a str,
    params: RpcParams<'a>,
    id: usize,
}

#[derive(Serialize)]
struct RpcParams<'a> {
    cmd: &'a str,
    version: u8,
}

/// The JSON-RPC batch that runs `commands` as `kind`, for `POST /ins` with
/// `Content-Type: application/json-rpc`: one `{"jsonrpc":"2.0","method":
/// "cli","params":{"cmd":…,"version":1},"id":n}` per command, ids 1, 2, …
/// in order. A batch of one is still a list.
pub fn jsonrpc_request(kind: CliType, commands: &[&str]) -> Result<String, BadCommand> {
    check_commands(commands)?;
    let calls: Vec<RpcCall> = commands
        .iter()
        .enumerate()
        .map(|(i, c)| RpcCall {
            jsonrpc: "2.0",
            method: kind.rpc_method(),
            params: RpcParams {
                cmd: c.trim(),
                version: 1,
            },
            id: i + 1,
        })
        .collect();
    serde_json::to_string(&calls).map_err(|e| BadCommand(e.to_string()))
}

// ------------------------------------------------------------------- answers

/// What NX-API answered to one command.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Reply {
    /// A structured body (`cli_show`, JSON-RPC `cli`).
    Json(Value),
    /// Text (`cli_show_ascii`'s body, JSON-RPC `cli_ascii`'s `msg`).
    Text(String),
    /// Success with nothing to say: configuration commands (`result:
    /// null`), or a show that printed nothing.
    Empty,
    /// Code 501 "Structured output unsupported": the command has no JSON
    /// form on this release; ask again as [`CliType::ShowAscii`].
    NoJson(String),
    /// The switch does not know the command ("% Invalid command", "Input
    /// CLI command error"): this platform or release lacks it.
    Unsupported(String),
    /// The account's role may not run the command.
    NeedsRole(String),
    /// Any other error, with NX-API's code (`400`, `-32603`) and message.
    Failed { code: String, why: String },
}

/// The body of an [`Reply::Empty`] read as structured output: null, which
/// [`rows`] reads as a table without rows.
static NO_BODY: Value = Value::Null;

impl Reply {
    /// The structured body, or why there is none.
    pub fn json(&self) -> Result<&Value, String> {
        match self {
            Reply::Json(v) => Ok(v),
            Reply::Empty => Ok(&NO_BODY),
            Reply::Text(t) => Err(format!(
                "answered text where structured output was asked: {}",
                excerpt(t)
            )),
            other => Err(other.failure()),
        }
    }

    /// The text, or why there is none.
    pub fn text(&self) -> Result<&str, String> {
        match self {
            Reply::Text(t) => Ok(t),
            Reply::Empty => Ok(""),
            Reply::Json(v) => Err(format!(
                "answered structured output where text was asked: {}",
                excerpt(&v.to_string())
            )),
            other => Err(other.failure()),
        }
    }

    fn failure(&self) -> String {
        match self {
            Reply::NoJson(m) => format!("has no structured output on this release ({m})"),
            Reply::Unsupported(m) => format!("is not supported by this switch ({m})"),
            Reply::NeedsRole(m) => format!("is not allowed for this account's role ({m})"),
            Reply::Failed { code, why } => format!("failed (code {code}): {why}"),
            Reply::Json(_) | Reply::Text(_) | Reply::Empty => "succeeded".into(),
        }
    }
}

/// One command and what NX-API answered to it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CommandReply {
    pub command: String,
    pub reply: Reply,
}

impl CommandReply {
    /// The reply as an audit [`Fact`]: an unsupported command, one the
    /// account's role may not run and one without the structured form asked
    /// for are `NotAvailable`; any other error, and an answer `read` cannot
    /// take, is `Failed`. Each names `switch` and the command.
    pub fn fact<T>(&self, switch: &str, read: impl FnOnce(&Reply) -> Result<T, String>) -> Fact<T> {
        let cmd = &self.command;
        let not_available = |why: String| Fact::NotAvailable {
            tried: vec![cmd.clone()],
            why,
        };
        match &self.reply {
            Reply::NoJson(m) => not_available(format!(
                "{switch}: `{cmd}` has no structured output on this release ({m}); it reads only as cli_show_ascii"
            )),
            Reply::Unsupported(m) => not_available(format!(
                "{switch}: `{cmd}` is not supported by this switch ({m})"
            )),
            Reply::NeedsRole(m) => not_available(format!(
                "{switch}: the account's role may not run `{cmd}` ({m}): give it a role that may"
            )),
            Reply::Failed { code, why } => {
                Fact::Failed(format!("{switch}: `{cmd}` failed (code {code}): {why}"))
            }
            ok => match read(ok) {
                Ok(v) => Fact::Known(v),
                Err(e) => {
                    let said = match ok {
                        Reply::Json(v) => excerpt(&v.to_string()),
                        Reply::Text(t) => excerpt(t),
                        _ => "nothing".into(),
                    };
                    Fact::Failed(format!("{switch}: `{cmd}`: {e}; it answered {said}"))
                }
            },
        }
    }
}

/// Why an answer could not be split into one reply per command.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ResponseError {
    /// The web server in front of NX-API answered with its own page, not
    /// NX-API: nginx's "401 Authorization Required" for refused credentials,
    /// "405 Not Allowed" for a method other than POST.
    #[error("NX-API answered with a web server page, not JSON: \"{title}\"{}", html_hint(.title))]
    Html { title: String },
    /// An `ins_api` answer in XML: NX-API answers so a request it could not
    /// read, whatever `output_format` asked.
    #[error("NX-API answered in XML, not JSON: code {code}: {msg}")]
    Xml { code: String, msg: String },
    /// A JSON-RPC error for the whole request (`id` null), such as -32600
    /// "Invalid request".
    #[error("NX-API refused the request: JSON-RPC error {code} ({message}): {detail}")]
    Refused {
        code: i64,
        message: String,
        detail: String,
    },
    /// Anything else off the documented shape; says what was expected.
    #[error("NX-API: {0}")]
    Shape(String),
}

fn html_hint(title: &str) -> &'static str {
    match title.split_whitespace().next() {
        Some("401") => " (the user name or password was refused)",
        Some("403") => " (the account may not use NX-API)",
        Some("404") => " (nothing at /ins: is `feature nxapi` on?)",
        Some("405") => " (NX-API takes only POST)",
        _ => "",
    }
}

fn shape(why: impl Into<String>) -> ResponseError {
    ResponseError::Shape(why.into())
}

fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

/// The text between the first `<name>` and its `</name>`, on one line.
fn xml_tag(text: &str, name: &str) -> Option<String> {
    // ASCII lowercasing keeps every byte offset.
    let lower = text.to_ascii_lowercase();
    let open = format!("<{name}>");
    let start = lower.find(&open)? + open.len();
    let end = start + lower[start..].find(&format!("</{name}>"))?;
    let inner = text.get(start..end)?;
    let inner = inner
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&amp;", "&");
    let one_line = inner.split_whitespace().collect::<Vec<_>>().join(" ");
    Some(one_line.chars().take(200).collect())
}

/// The JSON of an answer, or what the answer was instead.
fn json_root(text: &str) -> Result<Value, ResponseError> {
    let t = text.trim_start_matches('\u{feff}').trim();
    if t.is_empty() {
        return Err(shape("the answer is empty, expected JSON"));
    }
    if t.starts_with('<') {
        let lower = t.to_ascii_lowercase();
        if lower.starts_with("<?xml") || lower.starts_with("<ins_api") {
            let msg = [xml_tag(t, "msg"), xml_tag(t, "clierror")]
                .into_iter()
                .flatten()
                .collect::<Vec<_>>()
                .join(": ");
            return Err(ResponseError::Xml {
                code: xml_tag(t, "code").unwrap_or_else(|| "none".into()),
                msg: if msg.is_empty() {
                    "no message".into()
                } else {
                    msg
                },
            });
        }
        let title = xml_tag(t, "title")
            .or_else(|| xml_tag(t, "h1"))
            .unwrap_or_else(|| first_line(t));
        return Err(ResponseError::Html { title });
    }
    serde_json::from_str(t).map_err(|e| {
        shape(format!(
            "the answer is not JSON ({e}); it begins {}",
            first_line(t)
        ))
    })
}

/// Sorts an NX-API error into what the caller does next. `texts` are the
/// message and its detail (`clierror`, JSON-RPC `data.msg`).
fn classify(code: &str, texts: &[&str]) -> Reply {
    let said: Vec<&str> = texts
        .iter()
        .map(|t| t.trim())
        .filter(|t| !t.is_empty())
        .collect();
    let why = if said.is_empty() {
        "no message".to_string()
    } else {
        said.join(": ")
    };
    let lower = why.to_ascii_lowercase();
    let has = |words: &[&str]| words.iter().any(|w| lower.contains(w));
    if code == "501" || lower.contains("structured output unsupported") {
        Reply::NoJson(why)
    } else if has(&[
        "permission denied",
        "not authorized",
        "authorization failed",
        "unauthorized",
    ]) {
        Reply::NeedsRole(why)
    } else if has(&[
        "invalid command",
        "input cli command error",
        "syntax error",
        "invalid input",
        "incomplete command",
        "not supported",
        "invalid params",
    ]) {
        Reply::Unsupported(why)
    } else {
        Reply::Failed {
            code: code.to_string(),
            why,
        }
    }
}

/// A body as NX-API gives it: an object (or list) for structured output, a
/// string for text; none, null or an empty string is [`Reply::Empty`].
fn body_reply(body: Option<&Value>, at: &str) -> Result<Reply, ResponseError> {
    Ok(match body {
        None | Some(Value::Null) => Reply::Empty,
        Some(Value::String(s)) if s.is_empty() => Reply::Empty,
        Some(Value::String(s)) => Reply::Text(s.clone()),
        Some(v @ (Value::Object(_) | Value::Array(_))) => Reply::Json(v.clone()),
        Some(other) => {
            return Err(shape(format!(
                "{at}: the body is {}, expected an object or a string",
                kind_of(other)
            )))
        }
    })
}

fn same_command(a: &str, b: &str) -> bool {
    let words = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    words(a).eq_ignore_ascii_case(&words(b))
}

/// Splits an `ins_api` answer into one reply per command of `commands`.
///
/// `ins_api.outputs.output` is an object for one command and a list for
/// several; `code` is a string (`"200"`; a number is taken too), `msg` says
/// why, `body` is an object (`cli_show`) or a string (`cli_show_ascii`). An
/// output that echoes its `input` must echo the command asked. One output
/// for a `cli_conf` batch answers every command (older releases run
/// configuration in one context and answer once).
pub fn parse_ins_api(commands: &[&str], text: &str) -> Result<Vec<CommandReply>, ResponseError> {
    let root = json_root(text)?;
    let Some(api) = root.get("ins_api").and_then(Value::as_object) else {
        return Err(shape(format!(
            "expected an object `ins_api` at the top of the answer, found {}",
            match &root {
                Value::Object(o) => format!("the keys {:?}", o.keys().take(5).collect::<Vec<_>>()),
                other => kind_of(other).to_string(),
            }
        )));
    };
    if let Some(sid) = api.get("sid").and_then(Value::as_str) {
        if sid != "eoc" {
            return Err(shape(format!(
                "the answer is chunked (sid {sid:?}); rocegate asks for whole answers (chunk \"0\")"
            )));
        }
    }
    let outputs: Vec<&Value> = match api.get("outputs").and_then(|o| o.get("output")) {
        Some(Value::Array(a)) => a.iter().collect(),
        Some(o @ Value::Object(_)) => vec![o],
        Some(other) => {
            return Err(shape(format!(
                "`ins_api.outputs.output` is {}, expected an object or a list",
                kind_of(other)
            )))
        }
        None => return Err(shape("the answer has no `ins_api.outputs.output`")),
    };
    let mut replies = Vec::with_capacity(outputs.len());
    for (i, o) in outputs.iter().enumerate() {
        replies.push(ins_output(i, o)?);
    }
    let conf = api.get("type").and_then(Value::as_str) == Some("cli_conf");
    if replies.len() == 1 && commands.len() > 1 && conf {
        let reply = replies.remove(0).1;
        return Ok(commands
            .iter()
            .map(|c| CommandReply {
                command: c.trim().to_string(),
                reply: reply.clone(),
            })
            .collect());
    }
    if replies.len() != commands.len() {
        return Err(shape(format!(
            "expected {} outputs (one per command), got {}",
            commands.len(),
            replies.len()
        )));
    }
    commands
        .iter()
        .zip(replies)
        .enumerate()
        .map(|(i, (c, (input, reply)))| match input {
            Some(input) if !same_command(&input, c) => Err(shape(format!(
                "output {} answers `{input}`, but command {} was `{}`",
                i + 1,
                i + 1,
                c.trim()
            ))),
            _ => Ok(CommandReply {
                command: c.trim().to_string(),
                reply,
            }),
        })
        .collect()
}

/// One `ins_api` output: the command it echoes, if any, and the reply.
fn ins_output(i: usize, o: &Value) -> Result<(Option<String>, Reply), ResponseError> {
    let at = format!("output {}", i + 1);
    let Some(o) = o.as_object() else {
        return Err(shape(format!("{at} is {}, expected an object", kind_of(o))));
    };
    let code = match o.get("code") {
        Some(Value::String(s)) => s.trim().to_string(),
        Some(Value::Number(n)) => n.to_string(),
        Some(other) => {
            return Err(shape(format!(
                "{at}: `code` is {}, expected a string such as \"200\"",
                kind_of(other)
            )))
        }
        None => return Err(shape(format!("{at} has no `code`"))),
    };
    let text = |k: &str| o.get(k).and_then(Value::as_str).unwrap_or_default();
    let input = o
        .get("input")
        .and_then(Value::as_str)
        .map(|s| s.trim().to_string());
    let reply = if code == "200" {
        body_reply(o.get("body"), &at)?
    } else {
        classify(&code, &[text("msg"), text("clierror")])
    };
    Ok((input, reply))
}

/// Splits a JSON-RPC answer into one reply per command of `commands`, asked
/// with ids 1, 2, … ([`jsonrpc_request`]).
///
/// The answer is a list of `{"result": {"body": …} | {"msg": …} | null,
/// "id": n}` or `{"error": {"code", "message", "data": {"msg"}}, "id": n}`,
/// in any order, or one such object. An error with a null `id` is about the
/// whole request ([`ResponseError::Refused`]).
pub fn parse_jsonrpc(commands: &[&str], text: &str) -> Result<Vec<CommandReply>, ResponseError> {
    let root = json_root(text)?;
    let entries: Vec<&Value> = match &root {
        Value::Array(a) => a.iter().collect(),
        o @ Value::Object(_) => vec![o],
        other => {
            return Err(shape(format!(
                "the answer is {}, expected a list of JSON-RPC answers",
                kind_of(other)
            )))
        }
    };
    let mut slots: Vec<Option<Reply>> = vec![None; commands.len()];
    for (i, e) in entries.iter().enumerate() {
        let at = format!("answer {}", i + 1);
        let Some(e) = e.as_object() else {
            return Err(shape(format!("{at} is {}, expected an object", kind_of(e))));
        };
        let id = match e.get("id") {
            None | Some(Value::Null) => {
                if let Some(err) = e.get("error") {
                    let (code, message, detail) = rpc_error(err, &at)?;
                    return Err(ResponseError::Refused {
                        code,
                        message,
                        detail,
                    });
                }
                return Err(shape(format!("{at} has no `id`")));
            }
            Some(Value::Number(n)) => n.as_u64(),
            Some(Value::String(s)) => s.trim().parse().ok(),
            Some(_) => None,
        };
        let slot = id
            .and_then(|n| usize::try_from(n).ok())
            .filter(|n| (1..=commands.len()).contains(n))
            .ok_or_else(|| {
                shape(format!(
                    "{at}: `id` {} is not one of the ids asked (1 to {})",
                    e.get("id").map(Value::to_string).unwrap_or_default(),
                    commands.len()
                ))
            })?;
        if slots[slot - 1].is_some() {
            return Err(shape(format!("id {slot} is answered twice")));
        }
        let reply = if let Some(err) = e.get("error") {
            let (code, message, detail) = rpc_error(err, &at)?;
            classify(&code.to_string(), &[&message, &detail])
        } else {
            match e.get("result") {
                Some(Value::Null) => Reply::Empty,
                Some(Value::Object(r)) => match (r.get("body"), r.get("msg")) {
                    (Some(b), _) => body_reply(Some(b), &at)?,
                    (None, Some(m)) => body_reply(Some(m), &at)?,
                    (None, None) if r.is_empty() => Reply::Empty,
                    (None, None) => {
                        return Err(shape(format!(
                            "{at}: `result` has neither `body` nor `msg`"
                        )))
                    }
                },
                Some(other) => {
                    return Err(shape(format!(
                        "{at}: `result` is {}, expected an object or null",
                        kind_of(other)
                    )))
                }
                None => return Err(shape(format!("{at} has neither `result` nor `error`"))),
            }
        };
        slots[slot - 1] = Some(reply);
    }
    let missing: Vec<String> = slots
        .iter()
        .enumerate()
        .filter(|(_, s)| s.is_none())
        .map(|(i, _)| format!("{} (`{}`)", i + 1, commands[i].trim()))
        .collect();
    if !missing.is_empty() {
        return Err(shape(format!(
            "no answer for command {}",
            missing.join(", ")
        )));
    }
    Ok(commands
        .iter()
        .zip(slots.into_iter().flatten())
        .map(|(c, reply)| CommandReply {
            command: c.trim().to_string(),
            reply,
        })
        .collect())
}

/// `{"code": -32602, "message": "Invalid params", "data": {"msg": "% Invalid
/// command\n"}}`, as (code, message, detail).
fn rpc_error(err: &Value, at: &str) -> Result<(i64, String, String), ResponseError> {
    let Some(err) = err.as_object() else {
        return Err(shape(format!(
            "{at}: `error` is {}, expected an object",
            kind_of(err)
        )));
    };
    let code = match err.get("code") {
        Some(Value::Number(n)) => n.as_i64(),
        Some(Value::String(s)) => s.trim().parse().ok(),
        _ => None,
    }
    .ok_or_else(|| shape(format!("{at}: `error` has no numeric `code`")))?;
    let message = err
        .get("message")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .trim()
        .to_string();
    let detail = match err.get("data") {
        Some(Value::Object(d)) => d.get("msg").and_then(Value::as_str).unwrap_or_default(),
        Some(Value::String(s)) => s.as_str(),
        _ => "",
    }
    .trim()
    .to_string();
    Ok((code, message, detail))
}

// ------------------------------------------------------------ TABLE_x/ROW_x

/// One `ROW_x` object.
pub type Row = Map<String, Value>;

/// The rows of `TABLE_<name>`/`ROW_<name>` in `obj`, in order, whatever
/// shape NX-OS chose: `ROW_<name>` an object (one row) or a list of rows;
/// `TABLE_<name>` an object or a list of `{ROW_<name>: …}` objects; a table
/// left out (NX-OS omits an empty one) or null has no rows, and so has a
/// null `obj` (an empty answer). Works at any depth: pass a row to read the
/// table nested in it.
pub fn rows<'a>(obj: &'a Value, name: &str) -> Result<Vec<&'a Row>, ParseError> {
    match obj {
        Value::Null => Ok(Vec::new()),
        Value::Object(o) => rows_of(o, name),
        other => Err(ParseError(format!(
            "expected an object holding TABLE_{name}, found {}",
            kind_of(other)
        ))),
    }
}

/// [`rows`] of a row.
pub fn rows_of<'a>(obj: &'a Row, name: &str) -> Result<Vec<&'a Row>, ParseError> {
    let table_key = format!("TABLE_{name}");
    let row_key = format!("ROW_{name}");
    let parts: Vec<&Value> = match obj.get(&table_key) {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(t @ Value::Object(_)) => vec![t],
        Some(Value::Array(a)) => a.iter().collect(),
        Some(other) => {
            return Err(ParseError(format!(
                "{table_key} is {}, expected an object holding {row_key}",
                kind_of(other)
            )))
        }
    };
    let mut out = Vec::new();
    for (i, part) in parts.iter().enumerate() {
        let Some(part) = part.as_object() else {
            return Err(ParseError(format!(
                "{table_key}[{i}] is {}, expected an object holding {row_key}",
                kind_of(part)
            )));
        };
        match part.get(&row_key) {
            None | Some(Value::Null) => {}
            Some(Value::Object(r)) => out.push(r),
            Some(Value::Array(items)) => {
                for (j, item) in items.iter().enumerate() {
                    match item {
                        Value::Object(r) => out.push(r),
                        other => {
                            return Err(ParseError(format!(
                                "{row_key}[{j}] is {}, expected an object (one row)",
                                kind_of(other)
                            )))
                        }
                    }
                }
            }
            Some(other) => {
                return Err(ParseError(format!(
                    "{row_key} is {}, expected an object (one row) or a list of rows",
                    kind_of(other)
                )))
            }
        }
    }
    Ok(out)
}

/// [`rows`], with `tool` in front of an error.
fn table<'a>(tool: &str, obj: &'a Value, name: &str) -> Result<Vec<&'a Row>, ParseError> {
    rows(obj, name).map_err(|e| ParseError(format!("{tool}: {}", e.0)))
}

fn table_of<'a>(tool: &str, obj: &'a Row, name: &str) -> Result<Vec<&'a Row>, ParseError> {
    rows_of(obj, name).map_err(|e| ParseError(format!("{tool}: {}", e.0)))
}

/// A counter of a row as NX-OS writes it: a JSON number or a string of
/// digits, side by side in one row. `None` when the row lacks it, holds
/// null or an empty string, or writes not applicable (`n/a`, `--`); any
/// other value is an error naming `tool` and the field.
pub fn counter(tool: &str, row: &Row, field: &str) -> Result<Option<u64>, ParseError> {
    match row.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => match n.as_u64() {
            Some(v) => Ok(Some(v)),
            None => value(tool, field, &n.to_string()).map(Some),
        },
        Some(Value::String(s)) if s.trim().is_empty() => Ok(None),
        Some(Value::String(s)) => cell(tool, field, s),
        Some(other) => Err(ParseError(format!(
            "{tool}: {field}: expected a number or a numeric string, found {}",
            kind_of(other)
        ))),
    }
}

/// A text field: a string (trimmed, not empty) or a number.
fn text_of(row: &Row, field: &str) -> Option<String> {
    match row.get(field)? {
        Value::String(s) => {
            let t = s.trim();
            (!t.is_empty()).then(|| t.to_string())
        }
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

fn first_text(row: &Row, fields: &[&str]) -> Option<String> {
    fields.iter().find_map(|f| text_of(row, f))
}

fn keys(row: &Row) -> String {
    let k: Vec<&str> = row.keys().take(6).map(String::as_str).collect();
    if k.is_empty() {
        return "no field".into();
    }
    format!(
        "`{}`{}",
        k.join("`, `"),
        if row.len() > 6 { ", …" } else { "" }
    )
}

/// The first of `fields` the row has as text, or an error naming the table.
fn required(tool: &str, row: &Row, fields: &[&str], table: &str) -> Result<String, ParseError> {
    first_text(row, fields).ok_or_else(|| {
        ParseError(format!(
            "{tool}: a row of TABLE_{table} has no `{}` (it has {})",
            fields.join("` or `"),
            keys(row)
        ))
    })
}

/// Whether a value of a field this module has no name for reads as a
/// counter (other fields of a row are text: speeds, states, addresses).
fn numeric(v: &Value) -> bool {
    match v {
        Value::Number(_) => true,
        Value::String(s) => crate::plausible::looks_numeric(s),
        _ => false,
    }
}

// ----------------------------------------------------------- JSON counters

/// `show interface` counters with a canonical name, each with the fields
/// that may carry it, in order of preference: Ethernet ports count as
/// `eth_*`, mgmt0 (and NX-OSv) at VDC level as `vdc_lvl_*`. The meanings
/// are those of `linux`: `eth_crc` is the FCS error count
/// (`a_frame_check_sequence_errors`), `eth_indiscard`/`eth_outdiscard` the
/// interface discards (`if_in_discards` → Discards, `if_out_discards` →
/// Drops), as [`parse_counters_errors`] reads InDiscards and OutDiscards.
const IF_CANONICAL: &[(Canonical, &[&str])] = &[
    (Canonical::RxBytes, &["eth_inbytes", "vdc_lvl_in_bytes"]),
    (Canonical::TxBytes, &["eth_outbytes", "vdc_lvl_out_bytes"]),
    (Canonical::RxPackets, &["eth_inpkts", "vdc_lvl_in_pkts"]),
    (Canonical::TxPackets, &["eth_outpkts", "vdc_lvl_out_pkts"]),
    (Canonical::CrcErrors, &["eth_crc"]),
    (Canonical::Discards, &["eth_indiscard"]),
    (Canonical::Drops, &["eth_outdiscard"]),
];

/// `show interface` counters the vocabulary has no name for, kept in
/// `other`. `eth_inpause`/`eth_outpause` are 802.3x pause frames, not PFC;
/// `eth_reset_cntr` counts interface resets, which is not the same as link
/// downs; `eth_stomped_crc` counts frames that arrived already stomped by
/// a cut-through hop upstream, not errors of this link. Rates
/// (`eth_inrate1_bits`) are not counters and are left out.
const IF_OTHER: &[&str] = &[
    "eth_inerr",
    "eth_outerr",
    "eth_runts",
    "eth_giants",
    "eth_nobuf",
    "eth_inpause",
    "eth_outpause",
    "eth_reset_cntr",
    "eth_stomped_crc",
    "eth_in_ifdown_drops",
    "eth_overrun",
    "eth_underrun",
    "eth_ignored",
    "eth_frame",
    "eth_watchdog",
    "eth_bad_eth",
    "eth_bad_proto",
    "eth_dribble",
    "eth_storm_supp",
    "eth_coll",
    "eth_deferred",
    "eth_latecoll",
    "eth_lostcarrier",
    "eth_nocarrier",
    "eth_babbles",
    "eth_jumbo_inpkts",
    "eth_jumbo_outpkts",
    "eth_inucast",
    "eth_inmcast",
    "eth_inbcast",
    "eth_outucast",
    "eth_outmcast",
    "eth_outbcast",
];

/// `show interface [PORT]` as structured output: one row per interface
/// (one row, as an object, for one port). Every counter of
/// [`IF_CANONICAL`] the row lacks is listed in `not_available` under its
/// first field name.
pub fn parse_interface_counters(body: &Value) -> Result<Vec<PortReadings>, ParseError> {
    const TOOL: &str = "show interface";
    let mut out = Vec::new();
    for row in table(TOOL, body, "interface")? {
        let port = required(TOOL, row, &["interface"], "interface")?;
        let mut entry = PortReadings::new(&port);
        for (canonical, fields) in IF_CANONICAL {
            let mut found = None;
            for field in *fields {
                if let Some(v) = counter(TOOL, row, field)? {
                    found = Some((*field, v));
                    break;
                }
            }
            match found {
                Some((field, v)) => entry.readings.push(reading(*canonical, field, v)),
                None => entry.not_available.push(fields[0].to_string()),
            }
        }
        for field in IF_OTHER {
            if let Some(v) = counter(TOOL, row, field)? {
                entry.other.insert(field.to_string(), v);
            }
        }
        out.push(entry);
    }
    Ok(out)
}

/// The counters of `show interface counters errors` with a canonical name,
/// the same as [`parse_counters_errors`] gives the text's FCS-Err,
/// Symbol-Err, OutDiscards and InDiscards.
const ERR_CANONICAL: &[(&str, Canonical)] = &[
    ("eth_fcs_err", Canonical::CrcErrors),
    ("eth_symbol_err", Canonical::SymbolErrors),
    ("eth_outdisc", Canonical::Drops),
    ("eth_indisc", Canonical::Discards),
];

/// `show interface counters errors` as structured output. The text's
/// sub-tables become one row per interface per sub-table (mgmt0 four
/// times, the last with `interface` alone), so rows are merged by
/// interface; a counter printed twice with two values is an error. The
/// numbers without a canonical name (alignment, collisions, runts,
/// giants…) go to `other`; a canonical one no row printed is not available.
pub fn parse_counters_errors_json(body: &Value) -> Result<Vec<PortReadings>, ParseError> {
    const TOOL: &str = "show interface counters errors";
    let mut ports: Vec<PortReadings> = Vec::new();
    for row in table(TOOL, body, "interface")? {
        let port = required(TOOL, row, &["interface"], "interface")?;
        let entry = port_entry(&mut ports, &port);
        for (field, raw) in row {
            if field == "interface" {
                continue;
            }
            let canonical = ERR_CANONICAL
                .iter()
                .find(|(n, _)| n == field)
                .map(|(_, c)| *c);
            if canonical.is_none() && !numeric(raw) {
                continue;
            }
            let Some(v) = counter(TOOL, row, field)? else {
                if canonical.is_some() && !entry.not_available.contains(field) {
                    entry.not_available.push(field.clone());
                }
                continue;
            };
            let before = entry
                .readings
                .iter()
                .find(|r| &r.vendor == field)
                .map(|r| r.value)
                .or_else(|| entry.other.get(field).copied());
            match before {
                Some(b) if b == v => {}
                Some(b) => {
                    return Err(ParseError(format!(
                        "{TOOL}: {port} {field} is printed twice, as {b} and {v}"
                    )))
                }
                None => match canonical {
                    Some(c) => entry.readings.push(reading(c, field, v)),
                    None => {
                        entry.other.insert(field.clone(), v);
                    }
                },
            }
        }
    }
    for p in &mut ports {
        for (field, _) in ERR_CANONICAL {
            let printed = p.readings.iter().any(|r| r.vendor == *field);
            if !printed && !p.not_available.iter().any(|n| n == field) {
                p.not_available.push(field.to_string());
            }
        }
    }
    Ok(ports)
}

/// The rows of `TABLE_<name>` in `body` and in every row of its
/// `TABLE_module` (the queuing and PFC views nest per linecard).
fn module_rows<'a>(tool: &str, body: &'a Value, name: &str) -> Result<Vec<&'a Row>, ParseError> {
    let mut out = table(tool, body, name)?;
    for module in table(tool, body, "module")? {
        out.extend(table_of(tool, module, name)?);
    }
    Ok(out)
}

/// `show interface [PORT] priority-flow-control` as structured output:
/// `TABLE_module/ROW_module/TABLE_pfc_interface/ROW_pfc_interface` with
/// `if_name_str`, `admin` (mode), `oper`, `rx-stats` and `tx-stats` (PFC
/// frames received and sent, all priorities together), read as
/// [`parse_pfc_interface`] reads RxPPP and TxPPP.
///
/// The field names come from two independent NX-API scripts (no captured
/// answer or Cisco reference was found); a row without them is an error
/// that says so.
pub fn parse_pfc_interface_json(body: &Value) -> Result<Vec<PfcPort>, ParseError> {
    const TOOL: &str = "show interface priority-flow-control";
    let mut out = Vec::new();
    for row in module_rows(TOOL, body, "pfc_interface")? {
        let port = required(TOOL, row, &["if_name_str", "interface"], "pfc_interface")?;
        let mode = required(TOOL, row, &["admin"], "pfc_interface")?;
        let oper = required(TOOL, row, &["oper"], "pfc_interface")?;
        let mut counters = PortReadings::new(&port);
        for (field, c) in [
            ("rx-stats", Canonical::PfcPauseRx),
            ("tx-stats", Canonical::PfcPauseTx),
        ] {
            match counter(TOOL, row, field)? {
                Some(v) => counters.readings.push(reading(c, field, v)),
                None => counters.not_available.push(field.to_string()),
            }
        }
        out.push(PfcPort {
            port,
            mode,
            oper,
            vl_bitmap: None,
            counters,
        });
    }
    Ok(out)
}

/// Egress drop counters of `show queuing interface`, by preference. A
/// platform prints one or two per queue, and "WD & Tail Drop" (PFC
/// watchdog and tail drops) repeats the tail drops of "WRED/AFD & Tail
/// Drop" where both appear; so only the first one present is Drops, and
/// the others go to `other` rather than be counted twice.
const DROP_TYPES: [&str; 4] = [
    "WRED/AFD & Tail Drop",
    "Tail Drop",
    "Dropped",
    "WD & Tail Drop",
];

/// The unicast, out-of-band-flow-control unicast and multicast values of
/// one egress statistic.
const CASTS: [(&str, &str); 3] = [
    ("eq-uc-stat-value", "uc"),
    ("eq-oobfc-uc-stat-value", "oobfc-uc"),
    ("eq-mc-stat-value", "mc"),
];

/// `show queuing interface [PORT]` as structured output, per queue
/// (QoS group 0–7; the control and SPAN groups go to `other`):
///
/// - egress statistics (`TABLE_qosgrp_egress_stats_entry`): Tx Pkts/Byts
///   as TxPackets/TxBytes, ECN Pkts as EcnMarked, the first of
///   [`DROP_TYPES`] in packets as Drops, one reading per unicast,
///   OOBFC-unicast and multicast value, labelled `qos-group 3 ECN Pkts uc`;
///   Q Depth (a momentary depth, not a peak) and the rest go to `other`;
/// - PFC per CoS (`TABLE_pfc_stats`): `tx-pause-count`/`rx-pause-count` as
///   PfcPauseTx/Rx of that priority. The port totals `tx-ppp`/`rx-ppp` are
///   the PFC frames only where no per-CoS row exists; otherwise `other`;
/// - ingress and port egress statistics go to `other`.
///
/// A queue without an ECN or a drop statistic lists `qos-group N ECN Pkts`
/// or `qos-group N drops` as not available: platforms differ (older ones
/// print only Tx and Dropped).
///
/// Shape from the NX-OS 9.3 show-command reference (`show queuing`
/// `__readonly__` grammar) and the statistic names from a Cisco engineer's
/// NX-API code; no captured answer was found.
pub fn parse_queuing_interface(body: &Value) -> Result<Vec<PortReadings>, ParseError> {
    const TOOL: &str = "show queuing interface";
    let mut ports: Vec<PortReadings> = Vec::new();
    for qi in module_rows(TOOL, body, "queuing_interface")? {
        let port = required(TOOL, qi, &["if_name_str", "interface"], "queuing_interface")?;
        let entry = port_entry(&mut ports, &port);
        for group in table_of(TOOL, qi, "qosgrp_egress_stats")? {
            egress_group(TOOL, &port, group, entry)?;
        }
        let pfc = table_of(TOOL, qi, "pfc_stats")?;
        for row in &pfc {
            let cos = text_of(row, "cos")
                .and_then(|c| c.parse::<u8>().ok())
                .filter(|c| *c < 8)
                .ok_or_else(|| {
                    ParseError(format!(
                        "{TOOL}: {port}: a TABLE_pfc_stats row has no `cos` 0–7 (it has {})",
                        keys(row)
                    ))
                })?;
            for (field, c) in [
                ("tx-pause-count", Canonical::PfcPauseTx),
                ("rx-pause-count", Canonical::PfcPauseRx),
            ] {
                match counter(TOOL, row, field)? {
                    Some(v) => entry.readings.push(Reading {
                        priority: Some(cos),
                        ..reading(c, field, v)
                    }),
                    None => entry.not_available.push(format!("cos {cos} {field}")),
                }
            }
        }
        for (field, c) in [
            ("tx-ppp", Canonical::PfcPauseTx),
            ("rx-ppp", Canonical::PfcPauseRx),
        ] {
            if let Some(v) = counter(TOOL, qi, field)? {
                if pfc.is_empty() {
                    entry.readings.push(reading(c, field, v));
                } else {
                    entry.other.insert(field.to_string(), v);
                }
            }
        }
        for (name, prefix) in [("ingress_stats_entry", "ip"), ("egress_stats_entry", "ep")] {
            for row in table_of(TOOL, qi, name)? {
                let kind = first_text(row, &[&format!("{prefix}-stat-type")]).unwrap_or_default();
                let units = first_text(row, &[&format!("{prefix}-stat-units")]).unwrap_or_default();
                let field = format!("{prefix}-stat-value");
                if let Some(v) = counter(TOOL, row, &field)? {
                    let side = if prefix == "ip" { "ingress" } else { "egress" };
                    entry.other.insert(format!("{side} {kind} {units}"), v);
                }
            }
        }
    }
    Ok(ports)
}

fn egress_group(
    tool: &str,
    port: &str,
    group: &Row,
    entry: &mut PortReadings,
) -> Result<(), ParseError> {
    let name = text_of(group, "eq-qosgrp").ok_or_else(|| {
        ParseError(format!(
            "{tool}: {port}: a TABLE_qosgrp_egress_stats row has no `eq-qosgrp` (it has {})",
            keys(group)
        ))
    })?;
    let queue = name.parse::<u8>().ok().filter(|q| *q < 8);
    let stats = table_of(tool, group, "qosgrp_egress_stats_entry")?;
    let kind_units = |s: &Row| {
        (
            text_of(s, "eq-stat-type").unwrap_or_default(),
            text_of(s, "eq-stat-units").unwrap_or_default(),
        )
    };
    let drop_type = DROP_TYPES.iter().copied().find(|t| {
        stats
            .iter()
            .any(|s| kind_units(s) == (t.to_string(), "Pkts".to_string()))
    });
    let (mut ecn, mut drops) = (false, false);
    for s in &stats {
        let (kind, units) = kind_units(s);
        let canonical = match (kind.as_str(), units.as_str()) {
            _ if queue.is_none() => None,
            ("Tx", "Pkts") => Some(Canonical::TxPackets),
            ("Tx", "Byts") => Some(Canonical::TxBytes),
            ("ECN", "Pkts") => Some(Canonical::EcnMarked),
            (k, "Pkts") if Some(k) == drop_type => Some(Canonical::Drops),
            _ => None,
        };
        for (field, cast) in CASTS {
            let label = format!("qos-group {name} {kind} {units} {cast}");
            let Some(v) = counter(&format!("{tool}: {port} {label}"), s, field)? else {
                continue;
            };
            match canonical {
                Some(c) => {
                    ecn |= c == Canonical::EcnMarked;
                    drops |= c == Canonical::Drops;
                    entry.readings.push(Reading {
                        queue,
                        ..reading(c, &label, v)
                    });
                }
                None => {
                    entry.other.insert(label, v);
                }
            }
        }
    }
    if queue.is_some() {
        if !ecn {
            entry
                .not_available
                .push(format!("qos-group {name} ECN Pkts"));
        }
        if !drops {
            entry.not_available.push(format!("qos-group {name} drops"));
        }
    }
    Ok(())
}

// ------------------------------------------------------------- prior state

/// One port's state, from `show interface`, `show interface brief`, `show
/// interface status` or `show interface status err-disabled`. A field is
/// `None` where the command does not say.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PortState {
    /// As the switch printed it.
    pub port: String,
    pub admin_up: Option<bool>,
    pub oper_up: Option<bool>,
    /// The err-disable cause (`linkFlapErrDisabled`, `bpduguard`), when the
    /// port is err-disabled.
    pub err_disabled: Option<String>,
    /// Why the port is down, in NX-OS's words (`SFP not inserted`,
    /// `Administratively down`).
    pub reason: Option<String>,
}

/// `show interface`, `show interface brief` or `show interface status` as
/// structured output. Their rows share `interface` and differ in the rest:
/// `admin_state` (`show interface` only); `state` (`up`/`down`, or
/// `connected`, `notconnect`, `disabled`, `sfpAbsent`, `err-disabled`…
/// in `status`), `oper_state` on SVIs; the reason in `state_rsn_desc`
/// (`svi_rsn_desc` on SVIs), where `none` means none.
pub fn parse_port_states(body: &Value) -> Result<Vec<PortState>, ParseError> {
    const TOOL: &str = "show interface";
    let mut out = Vec::new();
    for row in table(TOOL, body, "interface")? {
        let port = required(TOOL, row, &["interface"], "interface")?;
        let state = first_text(row, &["state", "oper_state"]);
        let reason = first_text(row, &["state_rsn_desc", "svi_rsn_desc"])
            .filter(|r| !r.eq_ignore_ascii_case("none"));
        let admin = text_of(row, "admin_state");
        out.push(port_state(port, admin.as_deref(), state.as_deref(), reason));
    }
    Ok(out)
}

fn port_state(
    port: String,
    admin: Option<&str>,
    state: Option<&str>,
    reason: Option<String>,
) -> PortState {
    let word = state.map(str::to_ascii_lowercase);
    let w = word.as_deref();
    let low_reason = reason.as_deref().map(str::to_ascii_lowercase);
    let err_reason = low_reason
        .as_deref()
        .is_some_and(|r| r.contains("err") && r.contains("disab"));
    let err_disabled = if err_reason {
        reason.clone()
    } else if w.is_some_and(|w| w.contains("err")) {
        state.map(str::to_string)
    } else {
        None
    };
    let oper_up = match w {
        Some("up" | "connected") => Some(true),
        Some(_) if err_disabled.is_some() => Some(false),
        Some(
            "down" | "notconnect" | "sfpabsent" | "xcvrabsent" | "disabled" | "noopermembers"
            | "suspndbyvpc" | "inactive",
        ) => Some(false),
        _ => None,
    };
    let admin_down = w == Some("disabled")
        || low_reason
            .as_deref()
            .is_some_and(|r| r.contains("administratively down"));
    let admin_up = match admin.map(str::to_ascii_lowercase).as_deref() {
        Some("up") => Some(true),
        Some("down") => Some(false),
        _ if admin_down => Some(false),
        _ if oper_up == Some(true) || err_disabled.is_some() => Some(true),
        // Up by configuration, down for want of a link or a transceiver.
        _ if matches!(w, Some("notconnect" | "sfpabsent" | "xcvrabsent")) => Some(true),
        _ => None,
    };
    PortState {
        port,
        admin_up,
        oper_up,
        err_disabled,
        reason,
    }
}

/// `show interface status err-disabled` (text; its JSON form is not
/// known): a `Port Name Status Reason` header between dashed rulers, then
/// one row per err-disabled port. Columns are cut where the header puts
/// them, since a description may hold spaces and run up to the status
/// (`SD 180848 OFFER EM linkFlapErr`). The cause is the Reason
/// (`linkFlapErrDisabled`), else the Status. An empty answer is no
/// err-disabled port.
pub fn parse_err_disabled(text: &str) -> Result<Vec<PortState>, ParseError> {
    const TOOL: &str = "show interface status err-disabled";
    let err = |r: String| ParseError(format!("{TOOL}: {r}"));
    let mut columns: Option<(usize, usize)> = None;
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let t = line.trim();
        if t.is_empty() || t.chars().all(|c| c == '-') {
            continue;
        }
        let words: Vec<&str> = t.split_whitespace().collect();
        if words.first() == Some(&"Port") && words.contains(&"Status") && words.contains(&"Reason")
        {
            let at = |w: &str| line.find(w).map(|i| line[..i].chars().count());
            match (at("Status"), at("Reason")) {
                (Some(s), Some(r)) if s < r => columns = Some((s, r)),
                _ => return Err(err(format!("line {}: `{t}` is not a usable header", n + 1))),
            }
            continue;
        }
        let Some((s, r)) = columns else {
            return Err(err(format!(
                "line {}: `{t}` comes before the `Port Name Status Reason` header",
                n + 1
            )));
        };
        let chars: Vec<char> = line.chars().collect();
        let cut = |from: usize, to: usize| -> String {
            chars
                .get(from.min(chars.len())..to.min(chars.len()))
                .map(|c| c.iter().collect::<String>().trim().to_string())
                .unwrap_or_default()
        };
        let status = cut(s, r);
        let reason = cut(r, chars.len());
        if status.is_empty() {
            return Err(err(format!(
                "line {}: `{t}` has nothing under Status",
                n + 1
            )));
        }
        let cause = if reason.is_empty() { status } else { reason };
        out.push(PortState {
            port: words[0].to_string(),
            admin_up: Some(true),
            oper_up: Some(false),
            err_disabled: Some(cause.clone()),
            reason: Some(cause),
        });
    }
    if columns.is_none() && !text.trim().is_empty() {
        return Err(err(format!(
            "no `Port Name Status Reason` header in {}",
            first_line(text)
        )));
    }
    Ok(out)
}

/// One BGP session of a summary.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BgpPeer {
    pub vrf: String,
    /// `IPv4 Unicast`, `L2VPN EVPN`; `None` where the view has no address
    /// family (`show bgp sessions`).
    pub address_family: Option<String>,
    pub neighbor: String,
    pub remote_as: Option<String>,
    /// `Established`, `Idle`, `Active`, `Connect`, …
    pub state: String,
}

impl BgpPeer {
    pub fn established(&self) -> bool {
        self.state.eq_ignore_ascii_case("established")
    }
}

/// `show ip bgp summary vrf all`, `show bgp all summary vrf all` or `show
/// bgp sessions vrf all` as structured output: every peer of every VRF and
/// address family, read through `TABLE_vrf`/`TABLE_af`/`TABLE_saf`/
/// `TABLE_neighbor` whatever the shape of each level (a VRF may appear
/// twice, once without address families). The VRF is `vrf-name-out`, the
/// address family `af-name`, the peer `neighborid` (`neighbor-id` in
/// `sessions`), its AS `neighboras` (`remoteas`). No VRF table (BGP not
/// running, an empty answer) is no peer.
pub fn parse_bgp_summary(body: &Value) -> Result<Vec<BgpPeer>, ParseError> {
    const TOOL: &str = "show bgp summary";
    let mut out = Vec::new();
    match body {
        Value::Null => {}
        Value::Object(o) => bgp_level(TOOL, o, &["vrf", "af", "saf"], None, None, &mut out)?,
        other => {
            return Err(ParseError(format!(
                "{TOOL}: expected an object holding TABLE_vrf, found {}",
                kind_of(other)
            )))
        }
    }
    Ok(out)
}

fn bgp_level(
    tool: &str,
    obj: &Row,
    below: &[&str],
    vrf: Option<&str>,
    af: Option<&str>,
    out: &mut Vec<BgpPeer>,
) -> Result<(), ParseError> {
    let vrf_here = text_of(obj, "vrf-name-out");
    let vrf = vrf_here.as_deref().or(vrf);
    let af_here = text_of(obj, "af-name");
    let af = af_here.as_deref().or(af);
    for n in table_of(tool, obj, "neighbor")? {
        let neighbor = required(
            tool,
            n,
            &["neighborid", "neighbor-id", "neighbor"],
            "neighbor",
        )?;
        let state = text_of(n, "state")
            .ok_or_else(|| ParseError(format!("{tool}: neighbor {neighbor} has no `state`")))?;
        let vrf = vrf.ok_or_else(|| {
            ParseError(format!(
                "{tool}: neighbor {neighbor} is not inside a TABLE_vrf row with a `vrf-name-out`"
            ))
        })?;
        out.push(BgpPeer {
            vrf: vrf.to_string(),
            address_family: af.map(str::to_string),
            neighbor,
            remote_as: first_text(n, &["neighboras", "remoteas"]),
            state,
        });
    }
    for (i, level) in below.iter().enumerate() {
        for row in table_of(tool, obj, level)? {
            bgp_level(tool, row, &below[i + 1..], vrf, af, out)?;
        }
    }
    Ok(())
}

/// The peers that are not Established, in order.
pub fn not_established(peers: &[BgpPeer]) -> Vec<&BgpPeer> {
    peers.iter().filter(|p| !p.established()).collect()
}

/// What `show version` says of the switch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Version {
    /// `nxos_ver_str` (recent releases), else `sys_ver_str` (7.x), else
    /// `kickstart_ver_str`: `9.2(2)`, `7.3(1)D1(1) [build 7.3(1)D1(0.10)]`.
    pub version: String,
    /// `chassis_id`: `Nexus9000 C93180YC-FX Chassis`, the model.
    pub chassis: Option<String>,
    pub hostname: Option<String>,
}

/// `show version` as structured output.
pub fn parse_version(body: &Value) -> Result<Version, ParseError> {
    const TOOL: &str = "show version";
    let Some(row) = body.as_object() else {
        return Err(ParseError(format!(
            "{TOOL}: expected an object, found {}",
            kind_of(body)
        )));
    };
    let version = first_text(row, &["nxos_ver_str", "sys_ver_str", "kickstart_ver_str"])
        .ok_or_else(|| {
            ParseError(format!(
                "{TOOL}: no `nxos_ver_str`, `sys_ver_str` or `kickstart_ver_str` (it has {})",
                keys(row)
            ))
        })?;
    Ok(Version {
        version,
        chassis: text_of(row, "chassis_id"),
        hostname: text_of(row, "host_name"),
    })
}

// -------------------------------------------------------------------- LLDP

/// An LLDP value NX-OS prints when the neighbour sent none.
fn advertised(v: Option<String>) -> Option<String> {
    v.filter(|s| {
        !matches!(
            s.to_ascii_lowercase().as_str(),
            "not advertised" | "null" | "n/a" | ""
        )
    })
}

/// `show lldp neighbors detail` as structured output
/// (`TABLE_nbor_detail/ROW_nbor_detail`): the local port `l_port_id` (short
/// form, `Eth1/9`), `sys_name`, `port_id`, `port_desc`, `chassis_id`,
/// `sys_desc`, `mgmt_addr`; `not advertised` and `null` are absent.
pub fn parse_lldp_json(body: &Value) -> Result<Vec<LldpNeighbor>, ParseError> {
    const TOOL: &str = "show lldp neighbors detail";
    let mut out = Vec::new();
    for r in table(TOOL, body, "nbor_detail")? {
        out.push(LldpNeighbor {
            interface: required(TOOL, r, &["l_port_id"], "nbor_detail")?,
            chassis_name: advertised(text_of(r, "sys_name")),
            chassis_id: advertised(text_of(r, "chassis_id")),
            chassis_descr: advertised(text_of(r, "sys_desc")),
            port_id: required(TOOL, r, &["port_id"], "nbor_detail")?,
            port_descr: advertised(text_of(r, "port_desc")),
            mgmt_ip: advertised(text_of(r, "mgmt_addr")),
        });
    }
    Ok(out)
}

/// The keys of a `show lldp neighbors detail` record; a line that starts
/// with none of them continues the System Description (`TAC support: …`,
/// `Copyright …`).
const LLDP_KEYS: &[&str] = &[
    "Chassis id",
    "Port id",
    "Local Port id",
    "Port Description",
    "System Name",
    "System Description",
    "Time remaining",
    "System Capabilities",
    "Enabled Capabilities",
    "Management Address",
    "Management Address IPV6",
    "Vlan ID",
    "Vlan Name",
    "Max Frame Size",
    "Link Aggregation Capability",
    "Link Aggregation Status",
    "Link Aggregation ID",
    "Total entries displayed",
];

/// `show lldp neighbors detail` as text: after the capability legend, one
/// record per neighbour from `Chassis id:` on, with `Local Port id` (short
/// form), `Port id` and `System Name`; `not advertised` is absent. A
/// `Total entries displayed: N` that disagrees with the records read means
/// the text was cut, and is an error.
pub fn parse_lldp_text(text: &str) -> Result<Vec<LldpNeighbor>, ParseError> {
    const TOOL: &str = "show lldp neighbors detail";
    let err = |r: String| ParseError(format!("{TOOL}: {r}"));
    let mut records: Vec<BTreeMap<&str, String>> = Vec::new();
    let mut last_key: Option<&str> = None;
    let mut total: Option<usize> = None;
    for line in text.lines() {
        let t = line.trim();
        if t.is_empty() {
            continue;
        }
        let key = t.split_once(':').and_then(|(k, v)| {
            LLDP_KEYS
                .iter()
                .find(|key| **key == k.trim())
                .map(|key| (*key, v.trim()))
        });
        match key {
            Some(("Total entries displayed", v)) => {
                total = Some(
                    v.parse()
                        .map_err(|_| err(format!("`{t}` does not end in a number")))?,
                );
                last_key = None;
            }
            Some(("Chassis id", v)) => {
                records.push(BTreeMap::from([("Chassis id", v.to_string())]));
                last_key = Some("Chassis id");
            }
            Some((k, v)) => {
                if let Some(r) = records.last_mut() {
                    r.insert(k, v.to_string());
                    last_key = Some(k);
                }
            }
            None => {
                if let (Some("System Description"), Some(r)) = (last_key, records.last_mut()) {
                    if let Some(d) = r.get_mut("System Description") {
                        d.push('\n');
                        d.push_str(t);
                    }
                }
            }
        }
    }
    if records.is_empty() && total.unwrap_or(0) == 0 && !text.contains("Capability codes") {
        return Err(err(format!(
            "no `Chassis id:` record and no `Capability codes` legend in {}",
            first_line(text)
        )));
    }
    if let Some(n) = total {
        if n != records.len() {
            return Err(err(format!(
                "the switch says {n} entries, but {} records were read: the text is cut",
                records.len()
            )));
        }
    }
    records
        .into_iter()
        .enumerate()
        .map(|(i, mut r)| {
            let mut take = |k: &str| advertised(r.remove(k));
            let chassis_id = take("Chassis id");
            let need = |v: Option<String>, k: &str| {
                v.ok_or_else(|| {
                    err(format!(
                        "record {} (chassis {}) has no `{k}`",
                        i + 1,
                        chassis_id.as_deref().unwrap_or("not advertised")
                    ))
                })
            };
            Ok(LldpNeighbor {
                interface: need(take("Local Port id"), "Local Port id")?,
                port_id: need(take("Port id"), "Port id")?,
                chassis_name: take("System Name"),
                chassis_descr: take("System Description"),
                port_descr: take("Port Description"),
                mgmt_ip: take("Management Address"),
                chassis_id: chassis_id.clone(),
            })
        })
        .collect()
}

// ------------------------------------------------------ running-config ipqos

/// The RoCE-relevant part of `show running-config ipqos`: which network-qos
/// and egress queuing policies `system qos` applies, what their classes
/// say about PFC, MTU and RED/ECN, and each interface's PFC mode and own
/// queuing policy. What the text does not set (a default, a system-defined
/// policy) is absent, and the readers say so instead of guessing.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct QosConfig {
    /// `policy-map type network-qos NAME` → its classes.
    pub network_qos: BTreeMap<String, Vec<NetworkQosClass>>,
    /// `policy-map type queuing NAME` → its classes.
    pub queuing: BTreeMap<String, Vec<QueuingClass>>,
    /// `system qos` / `service-policy type network-qos NAME`.
    pub system_network_qos: Option<String>,
    /// `system qos` / `service-policy type queuing output NAME`.
    pub system_queuing_output: Option<String>,
    /// `priority-flow-control watch-dog-interval on|off` at the top level.
    pub pfc_watchdog: Option<bool>,
    /// Interface blocks, by [`normalise_port`] name.
    pub interfaces: BTreeMap<String, InterfaceQos>,
}

/// `class type network-qos NAME` in a network-qos policy.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct NetworkQosClass {
    pub class: String,
    /// `pause pfc-cos …` or `pause no-drop`: a lossless class.
    pub pause: bool,
    /// The CoS values of `pause pfc-cos`.
    pub pfc_cos: Vec<u8>,
    pub mtu: Option<u32>,
}

/// `class type queuing NAME` in a queuing policy.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct QueuingClass {
    pub class: String,
    /// The queue a system-defined class names (`c-out-8q-q3` → 3,
    /// `c-out-8q-q-default` → 0); `None` for any other name.
    pub queue: Option<u8>,
    pub red: Option<Red>,
}

/// A `random-detect` line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Red {
    Thresholds {
        min: Threshold,
        max: Threshold,
        drop_probability: Option<u32>,
        ecn: bool,
    },
    /// A form this reader does not know, as written.
    Unread(String),
}

/// A RED threshold. NX-OS takes bytes, kbytes, mbytes, packets, ms or us.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Threshold {
    Bytes(u64),
    /// Not a size (`ms`, `us`, `packets`, or no unit written).
    Other {
        value: u64,
        unit: String,
    },
}

/// The QoS lines of one `interface` block.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct InterfaceQos {
    /// `priority-flow-control mode on|off|auto`; absent means auto.
    pub pfc_mode: Option<String>,
    pub pfc_watchdog: Option<bool>,
    /// `service-policy type queuing output NAME`, overriding `system qos`.
    pub queuing_output: Option<String>,
}

/// The queue of a system-defined queuing class: `c-out-8q-q3`, `c-out-q3`,
/// `c-in-q3` → 3; `…-q-default` → 0.
fn queue_of(class: &str) -> Option<u8> {
    if class.ends_with("-q-default") {
        return Some(0);
    }
    let (_, n) = class.rsplit_once("-q")?;
    n.parse::<u8>().ok().filter(|q| *q < 8)
}

/// `3`, `3,4`, `3 4`, `2-3`: CoS values 0–7.
fn cos_list(words: &[&str]) -> Result<Vec<u8>, String> {
    let joined = words.join(",");
    let mut out = Vec::new();
    for part in joined.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let one = |s: &str| s.parse::<u8>().ok().filter(|c| *c < 8);
        let (a, b) = match part.split_once('-') {
            Some((a, b)) => (one(a), one(b)),
            None => (one(part), one(part)),
        };
        match (a, b) {
            (Some(a), Some(b)) if a <= b => out.extend(a..=b),
            _ => {
                return Err(format!(
                    "`{part}` is not a CoS value 0–7 or a range of them"
                ))
            }
        }
    }
    if out.is_empty() {
        return Err("no CoS value".into());
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

/// `random-detect minimum-threshold 300 kbytes maximum-threshold 300 kbytes
/// drop-probability 100 weight 0 ecn`. A kbyte is taken as 1024 bytes, the
/// unit `tc` and the switch buffer carving use.
fn parse_red(line: &str, words: &[&str]) -> Red {
    let unread = || Red::Unread(line.trim().to_string());
    let (mut min, mut max, mut prob, mut ecn) = (None, None, None, false);
    let mut i = 1;
    while i < words.len() {
        match words[i] {
            w @ ("minimum-threshold" | "maximum-threshold") => {
                let Some(v) = words.get(i + 1).and_then(|v| v.parse::<u64>().ok()) else {
                    return unread();
                };
                let unit = words.get(i + 2).copied();
                let scale = match unit {
                    Some("bytes") => Some(1u64),
                    Some("kbytes") => Some(1 << 10),
                    Some("mbytes") => Some(1 << 20),
                    _ => None,
                };
                let (threshold, used) = match (scale, unit) {
                    (Some(s), _) => match v.checked_mul(s) {
                        Some(b) => (Threshold::Bytes(b), 2),
                        None => return unread(),
                    },
                    (None, Some(u @ ("packets" | "ms" | "us"))) => (
                        Threshold::Other {
                            value: v,
                            unit: u.to_string(),
                        },
                        2,
                    ),
                    (None, _) => (
                        Threshold::Other {
                            value: v,
                            unit: String::new(),
                        },
                        1,
                    ),
                };
                if w == "minimum-threshold" {
                    min = Some(threshold);
                } else {
                    max = Some(threshold);
                }
                i += 1 + used;
            }
            "drop-probability" => {
                prob = words.get(i + 1).and_then(|p| p.parse().ok());
                i += 2;
            }
            "weight" => i += 2,
            "ecn" => {
                ecn = true;
                i += 1;
            }
            _ => return unread(),
        }
    }
    match (min, max) {
        (Some(min), Some(max)) => Red::Thresholds {
            min,
            max,
            drop_probability: prob,
            ecn,
        },
        _ => unread(),
    }
}

fn on_off(v: &str) -> Option<bool> {
    match v {
        "on" => Some(true),
        "off" => Some(false),
        _ => None,
    }
}

/// `show running-config ipqos` (text, `cli_show_ascii`): policy maps of
/// type network-qos and queuing, `system qos`, interface blocks and the
/// global PFC watchdog, read by indentation (a block starts at column 0).
/// Other lines (class maps, type qos policies, `!` comments and headers)
/// are skipped. A `%` line is the switch refusing the command, and a
/// `pause pfc-cos` or `mtu` that is not a number is an error naming the
/// line.
pub fn parse_running_ipqos(text: &str) -> Result<QosConfig, ParseError> {
    const TOOL: &str = "show running-config ipqos";
    enum Block {
        Other,
        NetworkQos(String),
        Queuing(String),
        System,
        Interface(String),
    }
    let mut cfg = QosConfig::default();
    let mut block = Block::Other;
    for (n, raw) in text.lines().enumerate() {
        let err = |why: String| ParseError(format!("{TOOL}: line {}: {why}", n + 1));
        let line = raw.trim_end();
        let t = line.trim_start();
        if t.is_empty() || t.starts_with('!') {
            continue;
        }
        if t.starts_with('%') {
            return Err(err(format!("the switch answered `{t}`")));
        }
        let words: Vec<&str> = t.split_whitespace().collect();
        if !line.starts_with(char::is_whitespace) {
            block = match words[..] {
                ["policy-map", "type", "network-qos", name] => {
                    cfg.network_qos.entry(name.to_string()).or_default();
                    Block::NetworkQos(name.to_string())
                }
                ["policy-map", "type", "queuing", name] => {
                    cfg.queuing.entry(name.to_string()).or_default();
                    Block::Queuing(name.to_string())
                }
                ["system", "qos"] => Block::System,
                ["interface", ..] if words.len() > 1 => {
                    let port = normalise_port(&words[1..].concat());
                    cfg.interfaces.entry(port.clone()).or_default();
                    Block::Interface(port)
                }
                ["priority-flow-control", "watch-dog-interval", v] => {
                    cfg.pfc_watchdog =
                        Some(on_off(v).ok_or_else(|| err(format!("`{t}` is neither on nor off")))?);
                    Block::Other
                }
                ["no", "priority-flow-control", "watch-dog-interval", ..] => {
                    cfg.pfc_watchdog = Some(false);
                    Block::Other
                }
                _ => Block::Other,
            };
            continue;
        }
        match &block {
            Block::Other => {}
            Block::NetworkQos(policy) => {
                let classes = cfg.network_qos.entry(policy.clone()).or_default();
                if let ["class", "type", "network-qos", class] = words[..] {
                    classes.push(NetworkQosClass {
                        class: class.to_string(),
                        ..Default::default()
                    });
                    continue;
                }
                let in_class = classes.last_mut();
                match (&words[..], in_class) {
                    (["pause", rest @ ..], Some(c)) => {
                        c.pause = true;
                        if let Some(i) = rest.iter().position(|w| *w == "pfc-cos") {
                            let cos = cos_list(&rest[i + 1..])
                                .map_err(|why| err(format!("`{t}`: {why}")))?;
                            c.pfc_cos.extend(cos);
                            c.pfc_cos.sort_unstable();
                            c.pfc_cos.dedup();
                        }
                    }
                    (["mtu", v], Some(c)) => {
                        c.mtu = Some(
                            v.parse()
                                .map_err(|_| err(format!("`{t}`: `{v}` is not an MTU")))?,
                        );
                    }
                    (["pause" | "mtu", ..], None) => {
                        return Err(err(format!(
                            "`{t}` in network-qos policy {policy} comes before any class"
                        )))
                    }
                    _ => {}
                }
            }
            Block::Queuing(policy) => {
                let classes = cfg.queuing.entry(policy.clone()).or_default();
                match (&words[..], classes.last_mut()) {
                    (["class", "type", "queuing", class], _) => classes.push(QueuingClass {
                        class: class.to_string(),
                        queue: queue_of(class),
                        red: None,
                    }),
                    (["random-detect", ..], Some(c)) => c.red = Some(parse_red(t, &words)),
                    (["random-detect", ..], None) => {
                        return Err(err(format!(
                            "`{t}` in queuing policy {policy} comes before any class"
                        )))
                    }
                    _ => {}
                }
            }
            Block::System => match words[..] {
                ["service-policy", "type", "network-qos", name] => {
                    cfg.system_network_qos = Some(name.to_string())
                }
                ["service-policy", "type", "queuing", "output", name] => {
                    cfg.system_queuing_output = Some(name.to_string())
                }
                _ => {}
            },
            Block::Interface(port) => {
                let i = cfg.interfaces.entry(port.clone()).or_default();
                match words[..] {
                    ["priority-flow-control", "mode", mode, ..] => {
                        i.pfc_mode = Some(mode.to_ascii_lowercase())
                    }
                    ["no", "priority-flow-control", "mode", ..] => i.pfc_mode = None,
                    ["priority-flow-control", "watch-dog-interval", v] => {
                        i.pfc_watchdog = on_off(v)
                    }
                    ["service-policy", "type", "queuing", "output", name] => {
                        i.queuing_output = Some(name.to_string())
                    }
                    _ => {}
                }
            }
        }
    }
    Ok(cfg)
}

impl QosConfig {
    /// The priorities PFC protects (the `pause pfc-cos` of the network-qos
    /// policy `system qos` applies) and the smallest MTU of those no-drop
    /// classes. No policy applied is the default one, which has no no-drop
    /// class; a policy the text does not define (a system template), or a
    /// `pause no-drop` class without `pfc-cos`, cannot be known.
    pub fn no_drop(&self) -> Result<([bool; 8], Option<u32>), String> {
        let Some(name) = &self.system_network_qos else {
            return Ok(([false; 8], None));
        };
        let Some(classes) = self.network_qos.get(name) else {
            return Err(format!(
                "`system qos` applies network-qos policy {name}, which the running configuration does not define (a system template?): its no-drop classes are not known"
            ));
        };
        let mut pfc = [false; 8];
        let mut mtu: Option<u32> = None;
        for c in classes.iter().filter(|c| c.pause) {
            if c.pfc_cos.is_empty() {
                return Err(format!(
                    "class {} of network-qos policy {name} is no-drop but names no `pfc-cos`: its priorities depend on class maps rocegate does not read",
                    c.class
                ));
            }
            for cos in &c.pfc_cos {
                pfc[usize::from(*cos)] = true;
            }
            if let Some(m) = c.mtu {
                mtu = Some(mtu.map_or(m, |x| x.min(m)));
            }
        }
        Ok((pfc, mtu))
    }

    /// The RED/ECN thresholds of the egress queuing policy on `port`: its
    /// own `service-policy type queuing output`, else the one `system qos`
    /// applies, else the default policy, which has none. Sorted by queue;
    /// the queue is the traffic class (QoS group N is served by queue N).
    pub fn ecn_for(&self, port: &str) -> Result<Vec<EcnQueue>, String> {
        let own = self
            .interfaces
            .get(&normalise_port(port))
            .and_then(|i| i.queuing_output.as_ref());
        let Some(name) = own.or(self.system_queuing_output.as_ref()) else {
            return Ok(Vec::new());
        };
        let Some(classes) = self.queuing.get(name) else {
            return Err(format!(
                "{port} uses queuing policy {name}, which the running configuration does not define (a system template?): its RED/ECN thresholds are not known"
            ));
        };
        let mut out = Vec::new();
        for c in classes {
            let Some(red) = &c.red else { continue };
            let Some(tc) = c.queue else {
                return Err(format!(
                    "class {} of queuing policy {name} has RED but is not a system class `c-out-8q-qN`, so its queue is not known",
                    c.class
                ));
            };
            match red {
                Red::Thresholds {
                    min: Threshold::Bytes(min),
                    max: Threshold::Bytes(max),
                    ecn,
                    ..
                } => out.push(EcnQueue {
                    tc,
                    min_bytes: *min,
                    max_bytes: *max,
                    ecn: *ecn,
                }),
                Red::Thresholds { .. } => {
                    return Err(format!(
                        "class {} of queuing policy {name} sets RED thresholds in packets or time, not bytes",
                        c.class
                    ))
                }
                Red::Unread(line) => {
                    return Err(format!(
                        "class {} of queuing policy {name}: `{line}` is not a RED line rocegate reads",
                        c.class
                    ))
                }
            }
        }
        out.sort_by_key(|e| e.tc);
        Ok(out)
    }
}

// ------------------------------------------------------------------- audit

/// What `show interface` says of one port's link, for the audit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct InterfaceSettings {
    pub port: String,
    /// `state` up or down; `None` for any other word.
    pub up: Option<bool>,
    pub mtu: Option<u32>,
    /// From `eth_speed` (`100 Gb/s`, `1000 Mb/s`); `None` when the link is
    /// down (`auto-speed`).
    pub speed_mbps: Option<u64>,
}

fn parse_speed(s: &str) -> Option<u64> {
    let mut w = s.split_whitespace();
    let n: u64 = w.next()?.parse().ok()?;
    match w.next()? {
        "Gb/s" => n.checked_mul(1000),
        "Mb/s" => Some(n),
        _ => None,
    }
}

/// `show interface` as structured output, for each port's state, MTU
/// (`eth_mtu`) and speed.
pub fn parse_interface_settings(body: &Value) -> Result<Vec<InterfaceSettings>, ParseError> {
    const TOOL: &str = "show interface";
    let mut out = Vec::new();
    for row in table(TOOL, body, "interface")? {
        let port = required(TOOL, row, &["interface"], "interface")?;
        let mtu = match counter(TOOL, row, "eth_mtu")? {
            Some(m) => Some(u32::try_from(m).map_err(|_| {
                ParseError(format!("{TOOL}: {port} eth_mtu {m} is not a possible MTU"))
            })?),
            None => None,
        };
        out.push(InterfaceSettings {
            up: match text_of(row, "state").as_deref() {
                Some("up") => Some(true),
                Some("down") => Some(false),
                _ => None,
            },
            mtu,
            speed_mbps: text_of(row, "eth_speed").as_deref().and_then(parse_speed),
            port,
        });
    }
    Ok(out)
}

/// The answers [`switch_config`] reads; `None` for one never asked or
/// never answered.
#[derive(Debug, Clone, Copy, Default)]
pub struct ConfigReplies<'a> {
    /// `show version`, structured.
    pub version: Option<&'a CommandReply>,
    /// `show interface`, structured: every port's state, MTU and speed.
    pub interfaces: Option<&'a CommandReply>,
    /// `show running-config ipqos`, as text.
    pub ipqos: Option<&'a CommandReply>,
    /// `show interface priority-flow-control`, structured or text: whether
    /// PFC runs on a port whose mode is auto.
    pub pfc: Option<&'a CommandReply>,
}

/// The commands of [`ConfigReplies`], in its order, with how to ask them.
pub const CONFIG_COMMANDS: [(&str, CliType); 4] = [
    ("show version", CliType::Show),
    ("show interface", CliType::Show),
    ("show running-config ipqos", CliType::ShowAscii),
    ("show interface priority-flow-control", CliType::Show),
];

fn reply_fact<T>(
    switch: &str,
    command: &str,
    reply: Option<&CommandReply>,
    read: impl FnOnce(&Reply) -> Result<T, String>,
) -> Fact<T> {
    match reply {
        Some(r) => r.fact(switch, read),
        None => Fact::Failed(format!("{switch}: `{command}` got no answer")),
    }
}

/// `then` of a known fact; the same failure otherwise.
fn with<T, U>(f: &Fact<T>, then: impl FnOnce(&T) -> Fact<U>) -> Fact<U> {
    match f {
        Fact::Known(v) => then(v),
        Fact::NotAvailable { tried, why } => Fact::NotAvailable {
            tried: tried.clone(),
            why: why.clone(),
        },
        Fact::Failed(e) => Fact::Failed(e.clone()),
    }
}

/// The audit's view of an NX-OS switch, from the answers to
/// [`CONFIG_COMMANDS`]. Per port (looked up by [`normalise_port`]):
///
/// - link, speed and MTU from `show interface`; the MTU is the smaller of
///   the port's and its no-drop class's network-qos MTU, since RoCE frames
///   travel in that class;
/// - PFC per priority: the no-drop CoS of the system network-qos policy
///   where the port's `priority-flow-control mode` is on, none where it is
///   off; in mode auto (the default) PFC runs only if DCBX agreed with the
///   peer, so `show interface priority-flow-control`'s Oper decides;
/// - ECN per queue from the port's egress queuing policy;
/// - the PFC Xoff threshold is not read (NX-OS sets it as a `pause
///   pause-threshold` of an ingress queuing class, in cells or bytes by
///   platform).
///
/// Never fails as a whole: each [`Fact`] says what it could not learn.
pub fn switch_config(switch: &str, ports: &[String], replies: &ConfigReplies<'_>) -> SwitchConfig {
    let nos_version = reply_fact(switch, "show version", replies.version, |r| {
        parse_version(r.json()?).map(|v| v.version).map_err(|e| e.0)
    });
    let interfaces = reply_fact(switch, "show interface", replies.interfaces, |r| {
        parse_interface_settings(r.json()?).map_err(|e| e.0)
    });
    let qos = reply_fact(switch, "show running-config ipqos", replies.ipqos, |r| {
        parse_running_ipqos(r.text()?).map_err(|e| e.0)
    });
    let pfc_oper = replies.pfc.map(|reply| {
        reply.fact(switch, |r| match r {
            Reply::Text(t) => parse_pfc_interface(t).map_err(|e| e.0),
            other => parse_pfc_interface_json(other.json()?).map_err(|e| e.0),
        })
    });
    let no_drop = with(&qos, |q| match q.no_drop() {
        Ok(v) => Fact::Known(v),
        Err(why) => Fact::NotAvailable {
            tried: vec!["show running-config ipqos".into()],
            why: format!("{switch}: {why}"),
        },
    });
    let pfc_watchdog = with(&qos, |q| {
        match q.pfc_watchdog {
        Some(on) => Fact::Known(on),
        None => Fact::NotAvailable {
            tried: vec!["show running-config ipqos".into()],
            why: format!(
                "{switch}: the running configuration does not set `priority-flow-control watch-dog-interval`, and the default differs between NX-OS releases"
            ),
        },
    }
    });
    let out = ports
        .iter()
        .map(|port| {
            let key = normalise_port(port);
            let row = with(&interfaces, |rows| {
                match rows.iter().find(|r| normalise_port(&r.port) == key) {
                    Some(r) => Fact::Known(r.clone()),
                    None => Fact::Failed(format!("{switch}: `show interface` printed no {port}")),
                }
            });
            let link_up = with(&row, |r| match r.up {
                Some(up) => Fact::Known(up),
                None => Fact::Failed(format!(
                    "{switch}: `show interface` gives {port} no state up or down"
                )),
            });
            let speed_mbps = with(&row, |r| match r.speed_mbps {
                Some(s) => Fact::Known(s),
                None => Fact::NotAvailable {
                    tried: vec!["show interface".into()],
                    why: format!(
                        "{switch}: {port} reports no speed{}",
                        if r.up == Some(false) {
                            ": the link is down"
                        } else {
                            ""
                        }
                    ),
                },
            });
            let mtu = with(&row, |r| match (r.mtu, no_drop.known().and_then(|n| n.1)) {
                (Some(m), Some(class)) => Fact::Known(m.min(class)),
                (Some(m), None) => Fact::Known(m),
                (None, _) => Fact::Failed(format!("{switch}: `show interface` gives {port} no eth_mtu")),
            });
            PortSettings {
                name: port.clone(),
                link_up,
                speed_mbps,
                mtu,
                pfc: port_pfc(switch, port, &qos, &no_drop, pfc_oper.as_ref()),
                ecn: with(&qos, |q| match q.ecn_for(port) {
                    Ok(v) => Fact::Known(v),
                    Err(why) => Fact::NotAvailable {
                        tried: vec!["show running-config ipqos".into()],
                        why: format!("{switch}: {why}"),
                    },
                }),
                pfc_xoff_bytes: Fact::NotAvailable {
                    tried: Vec::new(),
                    why: format!(
                        "{switch}: rocegate does not read NX-OS PFC Xoff thresholds yet (an ingress queuing class's `pause … pause-threshold`)"
                    ),
                },
            }
        })
        .collect();
    SwitchConfig {
        nos_version,
        pfc_watchdog,
        ports: out,
    }
}

fn port_pfc(
    switch: &str,
    port: &str,
    qos: &Fact<QosConfig>,
    no_drop: &Fact<([bool; 8], Option<u32>)>,
    oper: Option<&Fact<Vec<PfcPort>>>,
) -> Fact<[bool; 8]> {
    with(qos, |q| {
        with(no_drop, |(pfc, _)| {
            let key = normalise_port(port);
            let mode = q.interfaces.get(&key).and_then(|i| i.pfc_mode.as_deref());
            match mode {
                Some("on") => Fact::Known(*pfc),
                Some("off") => Fact::Known([false; 8]),
                _ => match oper {
                    None => Fact::NotAvailable {
                        tried: vec!["show running-config ipqos".into()],
                        why: format!(
                            "{switch}: PFC on {port} is in mode auto: it runs only if DCBX agreed with the peer, which `show interface priority-flow-control` says"
                        ),
                    },
                    Some(oper) => with(oper, |rows| {
                        match rows.iter().find(|p| normalise_port(&p.port) == key) {
                            Some(p) if p.oper.eq_ignore_ascii_case("on") => Fact::Known(*pfc),
                            Some(p) if p.oper.eq_ignore_ascii_case("off") => Fact::Known([false; 8]),
                            Some(p) => Fact::Failed(format!(
                                "{switch}: `show interface priority-flow-control` gives {port} the state `{}`, neither On nor Off",
                                p.oper
                            )),
                            None => Fact::Failed(format!(
                                "{switch}: `show interface priority-flow-control` printed no {port}"
                            )),
                        }
                    }),
                },
            }
        })
    })
}

// ------------------------------------------------------------------- names

/// One name for a port however NX-OS or a person writes it: `Eth1/1` (LLDP
/// and text tables), `Ethernet1/1` (JSON), `eth1/1` (the DME), `ethernet
/// 1/1` (the CLI), `Eth1/1/2` (a breakout) → `ethernet1/1`, `ethernet1/1/2`.
/// Case-folded, surrounding quotes and blanks dropped, the prefixes `e`,
/// `et`, `eth` expanded to `ethernet`, `po` to `port-channel`, `lo` to
/// `loopback`. Idempotent.
pub fn normalise_port(name: &str) -> String {
    let n = name
        .trim_matches(|c: char| c.is_whitespace() || c == '"')
        .to_ascii_lowercase();
    let Some(digit) = n.find(|c: char| c.is_ascii_digit()) else {
        return n;
    };
    let (prefix, rest) = n.split_at(digit);
    let prefix = match prefix.trim_end() {
        "e" | "et" | "eth" | "ethernet" => "ethernet",
        "po" | "port-channel" => "port-channel",
        "lo" | "loopback" => "loopback",
        other => other,
    };
    format!("{prefix}{rest}")
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIX: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/nxos/");

    fn fixture(name: &str) -> String {
        std::fs::read_to_string(format!("{FIX}{name}")).unwrap()
    }

    fn json(name: &str) -> Value {
        serde_json::from_str(&fixture(name)).unwrap()
    }

    /// The body of a one-command JSON-RPC fixture.
    fn rpc_body(name: &str, command: &str) -> Value {
        let r = parse_jsonrpc(&[command], &fixture(name)).unwrap();
        match &r[0].reply {
            Reply::Json(v) => v.clone(),
            other => panic!("{other:?}"),
        }
    }

    fn port<'a>(ports: &'a [PortReadings], name: &str) -> &'a PortReadings {
        ports.iter().find(|p| p.port == name).unwrap()
    }

    fn get(p: &PortReadings, vendor: &str) -> Option<(Canonical, Option<u8>, Option<u8>, u64)> {
        p.readings
            .iter()
            .find(|r| r.vendor == vendor)
            .map(|r| (r.canonical, r.priority, r.queue, r.value))
    }

    fn ok(command: &str, reply: Reply) -> CommandReply {
        CommandReply {
            command: command.into(),
            reply,
        }
    }

    // ---------------------------------------------------------- requests

    #[test]
    fn ins_api_request_matches_the_documented_body_with_type_before_input() {
        let body = ins_api_request(CliType::ShowAscii, &["show ip bgp summary vrf all"]).unwrap();
        let want = json("request-insapi-cli_show_ascii-greenpau.json");
        assert_eq!(serde_json::from_str::<Value>(&body).unwrap(), want);
        assert_eq!(
            body,
            r#"{"ins_api":{"version":"1.0","type":"cli_show_ascii","chunk":"0","sid":"1","input":"show ip bgp summary vrf all","output_format":"json"}}"#
        );
        let two =
            ins_api_request(CliType::Show, &["show version", " show interface type "]).unwrap();
        assert!(two.find("\"type\"").unwrap() < two.find("\"input\"").unwrap());
        assert!(two.contains(r#""type":"cli_show""#), "{two}");
        assert!(
            two.contains(r#""input":"show version ;show interface type""#),
            "{two}"
        );
        let conf = ins_api_request(CliType::Conf, &["interface ethernet1/1", "shutdown"]).unwrap();
        assert!(conf.contains(r#""type":"cli_conf""#));
    }

    #[test]
    fn jsonrpc_request_matches_the_documented_batch() {
        let body = jsonrpc_request(CliType::Show, &["show interfaces"]).unwrap();
        let want = json("request-jsonrpc-cli-show-interfaces-greenpau.json");
        assert_eq!(serde_json::from_str::<Value>(&body).unwrap(), want);
        let two: Value = serde_json::from_str(
            &jsonrpc_request(CliType::ShowAscii, &["show hostname", "show clock"]).unwrap(),
        )
        .unwrap();
        assert_eq!(two[1]["id"], 2);
        assert_eq!(two[1]["method"], "cli_ascii");
        assert_eq!(two[1]["params"]["cmd"], "show clock");
        assert_eq!(two[0]["params"]["version"], 1);
    }

    #[test]
    fn commands_that_would_split_are_refused() {
        for bad in [
            vec![],
            vec![""],
            vec!["  "],
            vec!["show interface Ethernet1/1 ; configure terminal"],
            vec!["show version", "show interface\nconf t"],
        ] {
            assert!(ins_api_request(CliType::Show, &bad).is_err(), "{bad:?}");
            assert!(jsonrpc_request(CliType::Show, &bad).is_err(), "{bad:?}");
        }
        let e = ins_api_request(CliType::Show, &["show x; reload"]).unwrap_err();
        assert!(e.to_string().contains("command 1"), "{e}");
    }

    // ----------------------------------------------------------- answers

    #[test]
    fn ins_api_one_output_is_an_object() {
        let r = parse_ins_api(
            &["show interface status"],
            &fixture("show-interface-status-insapi-greenpau.json"),
        )
        .unwrap();
        assert_eq!(r.len(), 1);
        assert_eq!(r[0].command, "show interface status");
        let body = r[0].reply.json().unwrap();
        assert_eq!(rows(body, "interface").unwrap().len(), 59);
        // cli_show_ascii: the body is a string.
        let r = parse_ins_api(
            &["show ip bgp summary vrf all"],
            &fixture("show-ip-bgp-summary-vrf-all-cli_show_ascii-insapi-greenpau.json"),
        )
        .unwrap();
        assert!(r[0]
            .reply
            .text()
            .unwrap()
            .starts_with("BGP summary information for VRF global"));
        assert!(r[0].reply.json().is_err());
    }

    #[test]
    fn ins_api_several_outputs_and_their_errors() {
        let text = r#"{"ins_api":{"type":"cli_show","version":"1.0","sid":"eoc","outputs":{"output":[
            {"input":"show version","msg":"Success","code":"200","body":{"host_name":"leaf1","nxos_ver_str":"10.3(4a)"}},
            {"input":"show queuing pfc-queue","msg":"Structured output unsupported","code":"501"},
            {"input":"show bogus","msg":"Input CLI command error","code":"400","clierror":"% Invalid command at '^' marker.\n"},
            {"input":"show running-config","msg":"Input CLI command error","code":"400","clierror":"% Permission denied for the role\n"},
            {"input":"show tech","msg":"Server internal error.","code":400},
            {"input":"show clock","msg":"Success","code":200,"body":""}]}}}"#;
        let cmds = [
            "show version",
            "show queuing pfc-queue",
            "show bogus",
            "show running-config",
            "show tech",
            "show clock",
        ];
        let r = parse_ins_api(&cmds, text).unwrap();
        assert_eq!(
            parse_version(r[0].reply.json().unwrap()).unwrap().version,
            "10.3(4a)"
        );
        assert_eq!(
            r[1].reply,
            Reply::NoJson("Structured output unsupported".into())
        );
        assert!(matches!(&r[2].reply, Reply::Unsupported(m) if m.contains("Invalid command")));
        assert!(matches!(&r[3].reply, Reply::NeedsRole(m) if m.contains("Permission denied")));
        assert_eq!(
            r[4].reply,
            Reply::Failed {
                code: "400".into(),
                why: "Server internal error.".into()
            }
        );
        assert_eq!(r[5].reply, Reply::Empty);
        // Facts name the switch and the command.
        let f = r[2].fact("leaf1", |_| Ok(()));
        assert!(
            matches!(&f, Fact::NotAvailable { tried, why } if tried == &["show bogus"] && why.starts_with("leaf1: `show bogus` is not supported")),
            "{f:?}"
        );
        let f = r[3].fact("leaf1", |_| Ok(()));
        assert!(
            matches!(&f, Fact::NotAvailable { why, .. } if why.contains("role")),
            "{f:?}"
        );
        let f = r[4].fact("leaf1", |_| Ok(()));
        assert!(
            matches!(&f, Fact::Failed(e) if e.contains("leaf1: `show tech` failed (code 400)")),
            "{f:?}"
        );
        let f = r[1].fact("leaf1", |_| Ok(()));
        assert!(
            matches!(&f, Fact::NotAvailable { why, .. } if why.contains("cli_show_ascii")),
            "{f:?}"
        );
    }

    #[test]
    fn ins_api_shapes_that_are_not_an_answer_to_what_was_asked() {
        let one = fixture("show-interface-status-insapi-greenpau.json");
        // Two commands, one output.
        let e = parse_ins_api(&["show interface status", "show version"], &one).unwrap_err();
        assert!(e.to_string().contains("expected 2 outputs"), "{e}");
        // The output echoes another command.
        let e = parse_ins_api(&["show version"], &one).unwrap_err();
        assert!(
            e.to_string().contains("answers `show interface status`"),
            "{e}"
        );
        for (text, want) in [
            ("{}", "`ins_api`"),
            (r#"{"ins_api":{"outputs":{"output":"x"}}}"#, "a string"),
            (
                r#"{"ins_api":{"outputs":{}}}"#,
                "no `ins_api.outputs.output`",
            ),
            (
                r#"{"ins_api":{"sid":"2","outputs":{"output":{"code":"200"}}}}"#,
                "chunked",
            ),
            (
                r#"{"ins_api":{"outputs":{"output":{"msg":"x"}}}}"#,
                "no `code`",
            ),
            (
                r#"{"ins_api":{"outputs":{"output":{"code":true}}}}"#,
                "`code` is a boolean",
            ),
            (
                r#"{"ins_api":{"outputs":{"output":{"code":"200","body":7}}}}"#,
                "body is a number",
            ),
            (
                r#"{"ins_api":{"outputs":{"output":[3]}}}"#,
                "output 1 is a number",
            ),
            ("[1,2", "not JSON"),
            ("", "empty"),
        ] {
            let e = parse_ins_api(&["show version"], text)
                .unwrap_err()
                .to_string();
            assert!(e.contains(want), "{text}: {e}");
        }
    }

    #[test]
    fn cli_conf_answered_once_answers_every_command() {
        let text = r#"{"ins_api":{"type":"cli_conf","version":"1.0","sid":"eoc","outputs":{"output":{"code":"200","msg":"Success","body":{}}}}}"#;
        let r = parse_ins_api(&["interface ethernet1/1", "shutdown"], text).unwrap();
        assert_eq!(r.len(), 2);
        assert_eq!(r[1].command, "shutdown");
        assert_eq!(r[1].reply, Reply::Json(serde_json::json!({})));
    }

    #[test]
    fn jsonrpc_batches_single_objects_and_nulls() {
        let r = parse_jsonrpc(
            &["show hostname", "show version"],
            &fixture("jsonrpc-batch-two-show-commands-napalm.json"),
        )
        .unwrap();
        assert_eq!(r[0].reply.json().unwrap()["hostname"], "nxos.domain.com");
        let v = parse_version(r[1].reply.json().unwrap()).unwrap();
        assert_eq!(v.version, "7.3(1)D1(1) [build 7.3(1)D1(0.10)]");
        assert_eq!(v.hostname.as_deref(), Some("nxos1"));
        // cli_ascii: the text is in `msg`, the answer a single object.
        let r = parse_jsonrpc(
            &["show hostname"],
            &fixture("jsonrpc-cli_ascii-msg-napalm.json"),
        )
        .unwrap();
        assert_eq!(r[0].reply, Reply::Text("nxos.domain.com \n".into()));
        // Configuration commands answer null.
        let r = parse_jsonrpc(
            &[
                "logging history size 200",
                "logging history size 300",
                "logging history size 400",
            ],
            &fixture("jsonrpc-config-three-commands-result-null-napalm.json"),
        )
        .unwrap();
        assert!(r.iter().all(|c| c.reply == Reply::Empty));
        let r = parse_jsonrpc(
            &["interface ethernet1/1", "shutdown"],
            &fixture("jsonrpc-cli_conf-interface-shutdown-result-null-greenpau.json"),
        )
        .unwrap();
        assert_eq!(r.len(), 2);
        // Answers out of order go back to their command by id.
        let r = parse_jsonrpc(
            &["a", "b"],
            r#"[{"jsonrpc":"2.0","result":{"msg":"B"},"id":2},{"jsonrpc":"2.0","result":{"msg":"A"},"id":"1"}]"#,
        )
        .unwrap();
        assert_eq!(
            (r[0].command.as_str(), &r[0].reply),
            ("a", &Reply::Text("A".into()))
        );
        assert_eq!(r[1].reply, Reply::Text("B".into()));
    }

    #[test]
    fn jsonrpc_errors_per_command_and_for_the_request() {
        let r = parse_jsonrpc(
            &["show bogus command"],
            &fixture("jsonrpc-error-32602-invalid-command-napalm.json"),
        )
        .unwrap();
        assert_eq!(
            r[0].reply,
            Reply::Unsupported("Invalid params: % Invalid command".into())
        );
        let e = parse_jsonrpc(
            &["show version"],
            &fixture("jsonrpc-error-32600-invalid-request-greenpau.json"),
        )
        .unwrap_err();
        assert_eq!(
            e,
            ResponseError::Refused {
                code: -32600,
                message: "Invalid request".into(),
                detail: "JSON-RPC version structure was not found in request".into()
            }
        );
        let r = parse_jsonrpc(
            &["show queuing pfc-queue"],
            r#"{"jsonrpc":"2.0","error":{"code":-32603,"message":"Internal error","data":{"msg":"Structured output unsupported"}},"id":1}"#,
        )
        .unwrap();
        assert!(matches!(r[0].reply, Reply::NoJson(_)));
        for (text, want) in [
            (
                r#"[{"jsonrpc":"2.0","result":null,"id":1}]"#,
                "no answer for command 2 (`b`)",
            ),
            (
                r#"[{"result":null,"id":1},{"result":null,"id":1}]"#,
                "answered twice",
            ),
            (
                r#"[{"result":null,"id":7},{"result":null,"id":2}]"#,
                "`id` 7",
            ),
            (r#"[{"result":null}]"#, "no `id`"),
            (r#"[{"id":1},{"id":2}]"#, "neither `result` nor `error`"),
            (r#"[{"result":{"x":1},"id":1}]"#, "neither `body` nor `msg`"),
            (r#"[{"result":5,"id":1}]"#, "`result` is a number"),
            (r#"[{"error":"bad","id":1}]"#, "`error` is a string"),
            (r#"[{"error":{"message":"x"},"id":1}]"#, "numeric `code`"),
            (r#""hello""#, "a string"),
            ("[7]", "answer 1 is a number"),
        ] {
            let e = parse_jsonrpc(&["a", "b"], text).unwrap_err().to_string();
            assert!(e.contains(want), "{text}: {e}");
        }
    }

    #[test]
    fn nginx_pages_and_xml_say_what_they_are() {
        let e =
            parse_jsonrpc(&["show version"], &fixture("http-401-nginx-greenpau.html")).unwrap_err();
        assert_eq!(
            e,
            ResponseError::Html {
                title: "401 Authorization Required".into()
            }
        );
        assert!(e.to_string().contains("password was refused"), "{e}");
        let e =
            parse_ins_api(&["show version"], &fixture("http-405-nginx-greenpau.html")).unwrap_err();
        assert!(
            e.to_string().contains("\"405 Not Allowed\"") && e.to_string().contains("POST"),
            "{e}"
        );
        let e = parse_ins_api(
            &["show version"],
            &fixture("insapi-xml-400-server-internal-error-greenpau.xml"),
        )
        .unwrap_err();
        assert_eq!(
            e,
            ResponseError::Xml {
                code: "400".into(),
                msg: "Server internal error.".into()
            }
        );
        let e = parse_ins_api(
            &["bogus command"],
            &fixture("insapi-xml-clierror-400-napalm.xml"),
        )
        .unwrap_err();
        match e {
            ResponseError::Xml { code, msg } => {
                assert_eq!(code, "400");
                assert!(
                    msg.starts_with("Input CLI command error: Syntax error while parsing"),
                    "{msg}"
                );
            }
            other => panic!("{other:?}"),
        }
    }

    // ------------------------------------------------------ TABLE/ROW

    #[test]
    fn rows_take_every_shape() {
        // A single row is an object.
        let one = json("show-interface-single-row-object-string-numbers-ansible.json");
        assert_eq!(rows(&one, "interface").unwrap().len(), 1);
        // TABLE as a list of {ROW}, ROW an object in one and a list in the other.
        let v = serde_json::json!({"TABLE_intf": [
            {"ROW_intf": {"n": 1}},
            {"ROW_intf": [{"n": 2}, {"n": 3}]},
            {}
        ]});
        let got: Vec<_> = rows(&v, "intf")
            .unwrap()
            .iter()
            .map(|r| r["n"].clone())
            .collect();
        assert_eq!(got, [1, 2, 3]);
        // Left out, null, empty: no rows.
        for empty in [
            serde_json::json!({}),
            Value::Null,
            serde_json::json!({"TABLE_intf": null}),
            serde_json::json!({"TABLE_intf": {}}),
        ] {
            assert!(rows(&empty, "intf").unwrap().is_empty(), "{empty}");
        }
        for (bad, want) in [
            (
                serde_json::json!({"TABLE_intf": 3}),
                "TABLE_intf is a number",
            ),
            (
                serde_json::json!({"TABLE_intf": [4]}),
                "TABLE_intf[0] is a number",
            ),
            (
                serde_json::json!({"TABLE_intf": {"ROW_intf": "x"}}),
                "ROW_intf is a string",
            ),
            (
                serde_json::json!({"TABLE_intf": {"ROW_intf": [{}, true]}}),
                "ROW_intf[1] is a boolean",
            ),
            (
                serde_json::json!([1]),
                "expected an object holding TABLE_intf",
            ),
        ] {
            let e = rows(&bad, "intf").unwrap_err().0;
            assert!(e.contains(want), "{bad}: {e}");
        }
        // Nested: TABLE_vrf/ROW_vrf[]/TABLE_af/ROW_af[]/TABLE_saf/ROW_saf (object).
        let bgp = json("show-bgp-all-summary-vrf-all-row-saf-object-napalm.json");
        let vrfs = rows(&bgp, "vrf").unwrap();
        assert_eq!(vrfs.len(), 16);
        assert!(rows_of(vrfs[0], "af").unwrap().is_empty());
        let afs = rows_of(vrfs[1], "af").unwrap();
        assert_eq!(afs.len(), 2);
        assert_eq!(rows_of(afs[0], "saf").unwrap().len(), 1);
    }

    #[test]
    fn counters_are_numbers_or_strings_and_nothing_else() {
        let row = serde_json::json!({
            "n": 5, "s": "17", "na": "n/a", "dash": "--", "blank": "", "null": null,
            "neg": -1, "frac": 1.5, "t": true, "o": {}, "word": "lots", "big": 18446744073709551615u64
        });
        let row = row.as_object().unwrap();
        let c = |f: &str| counter("t", row, f);
        assert_eq!(c("n").unwrap(), Some(5));
        assert_eq!(c("s").unwrap(), Some(17));
        assert_eq!(c("big").unwrap(), Some(u64::MAX));
        for f in ["na", "dash", "blank", "null", "missing"] {
            assert_eq!(c(f).unwrap(), None, "{f}");
        }
        for (f, want) in [
            ("neg", "negative"),
            ("frac", "fractional"),
            ("t", "found a boolean"),
            ("o", "found an object"),
            ("word", "`lots`"),
        ] {
            let e = c(f).unwrap_err().0;
            assert!(
                e.starts_with(&format!("t: {f}: ")) && e.contains(want),
                "{f}: {e}"
            );
        }
    }

    // ---------------------------------------------------------- counters

    #[test]
    fn show_interface_counters_on_every_fixture() {
        // NX-OSv, one row, every number a string, VDC-level counters only.
        let v = parse_interface_counters(&json(
            "show-interface-single-row-object-string-numbers-ansible.json",
        ))
        .unwrap();
        let e = &v[0];
        assert_eq!(e.port, "Ethernet1/1");
        assert_eq!(
            get(e, "vdc_lvl_in_bytes"),
            Some((Canonical::RxBytes, None, None, 1_391_637_901))
        );
        assert_eq!(
            get(e, "vdc_lvl_out_pkts"),
            Some((Canonical::TxPackets, None, None, 1_079_978))
        );
        assert_eq!(
            e.not_available,
            ["eth_crc", "eth_indiscard", "eth_outdiscard"]
        );
        // The full eth_* set, numbers and strings mixed.
        let v = parse_interface_counters(&json(
            "show-interface-ethernet2-1-single-row-counters-ansible.json",
        ))
        .unwrap();
        let e = &v[0];
        assert_eq!(
            get(e, "eth_crc"),
            Some((Canonical::CrcErrors, None, None, 0))
        );
        assert_eq!(
            get(e, "eth_outdiscard"),
            Some((Canonical::Drops, None, None, 0))
        );
        assert_eq!(e.other["eth_reset_cntr"], 1);
        assert!(e.not_available.is_empty(), "{:?}", e.not_available);
        // A 100G port with non-zero errors, pause and discards.
        let body = rpc_body(
            "show-interface-jsonrpc-pause-discard-counters-greenpau-5.json",
            "show interface",
        );
        let v = parse_interface_counters(&body).unwrap();
        let e = port(&v, "Ethernet1/1");
        assert_eq!(
            get(e, "eth_crc"),
            Some((Canonical::CrcErrors, None, None, 100))
        );
        assert_eq!(
            get(e, "eth_indiscard"),
            Some((Canonical::Discards, None, None, 100))
        );
        assert_eq!(
            get(e, "eth_outbytes"),
            Some((Canonical::TxBytes, None, None, 1_131_751_374_568_997))
        );
        assert_eq!(
            get(e, "eth_inpkts"),
            Some((Canonical::RxPackets, None, None, 1_056_144_398_522))
        );
        assert_eq!((e.other["eth_giants"], e.other["eth_runts"]), (34, 33));
        assert_eq!((e.other["eth_inpause"], e.other["eth_outpause"]), (100, 33));
        assert_eq!(e.other["eth_nobuf"], 23);
        // N9K-C9336C-FX2 on 10.2(4): mgmt0 at VDC level, Ethernet1/1 with 8 output discards.
        let body = &json("show-interface-n9k-c9336c-fx2-10.2.4-output-body-harvest.json")["output"]
            ["body"];
        let v = parse_interface_counters(body).unwrap();
        assert_eq!(v.len(), 3);
        assert_eq!(
            get(port(&v, "mgmt0"), "vdc_lvl_in_bytes").unwrap().3,
            15_655_821_355
        );
        let e = port(&v, "Ethernet1/1");
        assert_eq!(
            get(e, "eth_outdiscard"),
            Some((Canonical::Drops, None, None, 8))
        );
        assert_eq!(get(e, "eth_inbytes").unwrap().3, 65_962_757_720_684);
        assert_eq!(e.other["eth_stomped_crc"], 0);
        assert_eq!(e.other["eth_reset_cntr"], 12);
        assert_eq!(
            get(port(&v, "Ethernet1/2"), "eth_outbytes").unwrap().3,
            65_964_540_318_429
        );
        // Many rows; mgmt0 over JSON-RPC.
        let body = rpc_body("show-interface-jsonrpc-greenpau-2.json", "show interface");
        let v = parse_interface_counters(&body).unwrap();
        assert!(v.len() > 10 && v.iter().all(|p| !p.port.is_empty()));
        let body = rpc_body(
            "show-interface-mgmt0-single-row-jsonrpc-greenpau.json",
            "show interface mgmt0",
        );
        let v = parse_interface_counters(&body).unwrap();
        assert_eq!(get(&v[0], "vdc_lvl_in_pkts").unwrap().3, 160_834_516);
        assert_eq!(get(&v[0], "vdc_lvl_in_bytes").unwrap().3, 11_278_664_305);
    }

    #[test]
    fn show_interface_counters_refuse_damaged_rows() {
        for (body, want) in [
            (
                serde_json::json!({"TABLE_interface": {"ROW_interface": {"eth_crc": 1}}}),
                "no `interface`",
            ),
            (
                serde_json::json!({"TABLE_interface": {"ROW_interface": {"interface": "Ethernet1/1", "eth_crc": "-3"}}}),
                "eth_crc",
            ),
            (
                serde_json::json!({"TABLE_interface": {"ROW_interface": {"interface": "Ethernet1/1", "eth_giants": [1]}}}),
                "eth_giants: expected a number",
            ),
            (serde_json::json!("text"), "found a string"),
        ] {
            let e = parse_interface_counters(&body).unwrap_err().0;
            assert!(e.starts_with("show interface: ") && e.contains(want), "{e}");
        }
        assert!(parse_interface_counters(&Value::Null).unwrap().is_empty());
    }

    #[test]
    fn counters_errors_rows_merge_by_interface() {
        let body = rpc_body(
            "show-interface-counters-errors-rows-per-subtable-jsonrpc-greenpau.json",
            "show interface counters errors",
        );
        let v = parse_counters_errors_json(&body).unwrap();
        assert_eq!(v.len(), 2);
        let e = port(&v, "Ethernet1/1");
        assert_eq!(
            get(e, "eth_outdisc"),
            Some((Canonical::Drops, None, None, 35_393_307))
        );
        assert_eq!(
            get(e, "eth_fcs_err"),
            Some((Canonical::CrcErrors, None, None, 0))
        );
        assert_eq!(
            get(e, "eth_indisc"),
            Some((Canonical::Discards, None, None, 0))
        );
        assert_eq!(
            get(e, "eth_symbol_err"),
            Some((Canonical::SymbolErrors, None, None, 0))
        );
        assert_eq!(e.other["eth_xmit_err"], 29_983_041);
        assert_eq!(e.other["eth_inmactx_err"], 29_983_041);
        assert!(e.not_available.is_empty());
        // mgmt0 prints no discards at all, as the text's `--`.
        let m = port(&v, "mgmt0");
        assert_eq!(m.not_available, ["eth_outdisc", "eth_indisc"]);
        let text =
            parse_counters_errors(&fixture("../switch/nxos-counters-errors-genie-24port.txt"))
                .unwrap();
        assert!(port(&text, "mgmt0")
            .not_available
            .contains(&"OutDiscards".to_string()));
        // Same canonical names as the text parser for the same counters.
        let canon = |p: &PortReadings| {
            let mut c: Vec<Canonical> = p.readings.iter().map(|r| r.canonical).collect();
            c.sort();
            c
        };
        assert_eq!(canon(e), canon(port(&text, "Eth1/13")));
        let body = rpc_body(
            "show-interface-counters-errors-mgmt0-jsonrpc-greenpau.json",
            "show interface counters errors",
        );
        let v = parse_counters_errors_json(&body).unwrap();
        assert_eq!(v.len(), 1);
        assert_eq!(get(&v[0], "eth_fcs_err").unwrap().3, 0);
        assert_eq!(v[0].other["eth_giants"], 0);
        // Printed twice with two values: damaged.
        let twice = serde_json::json!({"TABLE_interface": {"ROW_interface": [
            {"interface": "Ethernet1/1", "eth_giants": 1},
            {"interface": "Ethernet1/1", "eth_giants": 2}]}});
        let e = parse_counters_errors_json(&twice).unwrap_err().0;
        assert!(
            e.contains("Ethernet1/1 eth_giants is printed twice, as 1 and 2"),
            "{e}"
        );
        let na = serde_json::json!({"TABLE_interface": {"ROW_interface": {"interface": "Eth1/1", "eth_fcs_err": "n/a", "eth_note": "text"}}});
        let v = parse_counters_errors_json(&na).unwrap();
        assert_eq!(
            v[0].not_available,
            ["eth_fcs_err", "eth_symbol_err", "eth_outdisc", "eth_indisc"]
        );
        assert!(v[0].other.is_empty());
    }

    // Built from the shape two independent NX-API scripts read (no captured
    // answer was found): TABLE_module/ROW_module/TABLE_pfc_interface.
    const PFC_JSON: &str = r#"{"TABLE_module": {"ROW_module": {"module": "1",
        "TABLE_pfc_interface": {"ROW_pfc_interface": [
            {"if_name_str": "Ethernet1/1", "admin": "On", "oper": "On", "rx-stats": "1024", "tx-stats": 7},
            {"if_name_str": "Ethernet1/2", "admin": "Auto", "oper": "Off", "rx-stats": 0}]}}}}"#;

    #[test]
    fn pfc_interface_json_reads_like_the_text() {
        let v = parse_pfc_interface_json(&serde_json::from_str(PFC_JSON).unwrap()).unwrap();
        assert_eq!(v.len(), 2);
        assert_eq!((v[0].mode.as_str(), v[0].oper.as_str()), ("On", "On"));
        assert_eq!(
            get(&v[0].counters, "rx-stats"),
            Some((Canonical::PfcPauseRx, None, None, 1024))
        );
        assert_eq!(
            get(&v[0].counters, "tx-stats"),
            Some((Canonical::PfcPauseTx, None, None, 7))
        );
        assert_eq!(v[1].counters.not_available, ["tx-stats"]);
        // The text form gives the same canonical names.
        let text =
            parse_pfc_interface(&fixture("../switch/nxos-pfc-interface-n5k-oswalt.txt")).unwrap();
        let c: Vec<Canonical> = text[0]
            .counters
            .readings
            .iter()
            .map(|r| r.canonical)
            .collect();
        assert_eq!(c, [Canonical::PfcPauseRx, Canonical::PfcPauseTx]);
        let e = parse_pfc_interface_json(&serde_json::json!({"TABLE_pfc_interface": {"ROW_pfc_interface": {"if_name_str": "Eth1/1"}}}))
            .unwrap_err()
            .0;
        assert!(e.contains("no `admin`"), "{e}");
    }

    fn stat(kind: &str, units: &str, uc: &str, mc: &str) -> Value {
        serde_json::json!({"eq-stat-type": kind, "eq-stat-units": units, "eq-uc-stat-value": uc, "eq-oobfc-uc-stat-value": "0", "eq-mc-stat-value": mc})
    }

    // Built from the NX-OS 9.3 `show queuing` grammar and the statistic
    // names of Cisco-authored NX-API code; no captured answer was found.
    fn queuing_body() -> Value {
        serde_json::json!({"TABLE_module": {"ROW_module": {"TABLE_queuing_interface": {"ROW_queuing_interface": [
            {"dir": "Egress", "if_name_str": "Ethernet1/1",
             "TABLE_qosgrp_egress_stats": {"ROW_qosgrp_egress_stats": [
                {"eq-qosgrp": "3", "TABLE_qosgrp_egress_stats_entry": {"ROW_qosgrp_egress_stats_entry": [
                    stat("Tx", "Pkts", "5000", "2"), stat("Tx", "Byts", "640000", "128"),
                    stat("WRED/AFD & Tail Drop", "Pkts", "12", "0"), stat("WRED/AFD & Tail Drop", "Byts", "1536", "0"),
                    stat("Q Depth", "Byts", "0", "0"), stat("WD & Tail Drop", "Pkts", "12", "0"),
                    stat("ECN", "Pkts", "77", "0"), stat("ECN", "Byts", "9856", "0")]}},
                {"eq-qosgrp": "0", "TABLE_qosgrp_egress_stats_entry": {"ROW_qosgrp_egress_stats_entry": stat("Tx", "Pkts", "10", "0")}},
                {"eq-qosgrp": "CONTROL QOS GROUP", "TABLE_qosgrp_egress_stats_entry": {"ROW_qosgrp_egress_stats_entry": [stat("Tx", "Pkts", "99", "0")]}}]},
             "TABLE_egress_stats_entry": {"ROW_egress_stats_entry": {"ep-stat-type": "Tx Multicast", "ep-stat-units": "Pkts", "ep-stat-value": "4"}}},
            {"dir": "Ingress", "if_name_str": "Ethernet1/1",
             "TABLE_ingress_stats_entry": {"ROW_ingress_stats_entry": [{"ip-stat-type": "Ingress Overflow Drop", "ip-stat-units": "Pkts", "ip-stat-value": "3"}]},
             "tx-ppp": "40", "rx-ppp": "30",
             "TABLE_pfc_stats": {"ROW_pfc_stats": [
                {"cos": "3", "pfc-qosgrp": "3", "tx-pause-state": "Inactive", "tx-pause-count": "40", "rx-pause-state": "Inactive", "rx-pause-count": "30"},
                {"cos": "0", "tx-pause-state": "Inactive", "tx-pause-count": "0", "rx-pause-state": "Inactive", "rx-pause-count": "0"}]}}
        ]}}}})
    }

    #[test]
    fn queuing_interface_per_queue_drops_ecn_and_pfc_per_cos() {
        let v = parse_queuing_interface(&queuing_body()).unwrap();
        assert_eq!(v.len(), 1);
        let e = &v[0];
        assert_eq!(
            get(e, "qos-group 3 Tx Pkts uc"),
            Some((Canonical::TxPackets, None, Some(3), 5000))
        );
        assert_eq!(
            get(e, "qos-group 3 Tx Pkts mc"),
            Some((Canonical::TxPackets, None, Some(3), 2))
        );
        assert_eq!(
            get(e, "qos-group 3 Tx Byts uc"),
            Some((Canonical::TxBytes, None, Some(3), 640_000))
        );
        assert_eq!(
            get(e, "qos-group 3 ECN Pkts uc"),
            Some((Canonical::EcnMarked, None, Some(3), 77))
        );
        assert_eq!(
            get(e, "qos-group 3 WRED/AFD & Tail Drop Pkts uc"),
            Some((Canonical::Drops, None, Some(3), 12))
        );
        // The overlapping drop count is kept, not counted twice.
        assert_eq!(e.other["qos-group 3 WD & Tail Drop Pkts uc"], 12);
        assert_eq!(e.other["qos-group 3 Q Depth Byts uc"], 0);
        assert_eq!(e.other["qos-group CONTROL QOS GROUP Tx Pkts uc"], 99);
        assert_eq!(e.other["egress Tx Multicast Pkts"], 4);
        assert_eq!(e.other["ingress Ingress Overflow Drop Pkts"], 3);
        // Per-CoS PFC; the port totals go to `other`.
        assert_eq!(
            get(e, "tx-pause-count"),
            Some((Canonical::PfcPauseTx, Some(3), None, 40))
        );
        let rx: Vec<_> = e
            .readings
            .iter()
            .filter(|r| r.canonical == Canonical::PfcPauseRx)
            .map(|r| (r.priority, r.value))
            .collect();
        assert_eq!(rx, [(Some(3), 30), (Some(0), 0)]);
        assert_eq!((e.other["tx-ppp"], e.other["rx-ppp"]), (40, 30));
        // Queue 0 printed no ECN and no drops.
        assert_eq!(
            e.not_available,
            ["qos-group 0 ECN Pkts", "qos-group 0 drops"]
        );
    }

    #[test]
    fn queuing_on_an_older_platform_has_dropped_and_no_ecn() {
        // One group with Tx and Dropped only; port totals without per-CoS rows.
        let body = serde_json::json!({"TABLE_queuing_interface": {"ROW_queuing_interface": {
            "if_name_str": "Ethernet1/5", "tx-ppp": 6, "rx-ppp": 5,
            "TABLE_qosgrp_egress_stats": {"ROW_qosgrp_egress_stats": {"eq-qosgrp": 1,
                "TABLE_qosgrp_egress_stats_entry": {"ROW_qosgrp_egress_stats_entry": [
                    {"eq-stat-type": "Tx", "eq-stat-units": "Pkts", "eq-uc-stat-value": 9},
                    {"eq-stat-type": "Dropped", "eq-stat-units": "Pkts", "eq-uc-stat-value": "2"}]}}}}}});
        let v = parse_queuing_interface(&body).unwrap();
        let e = &v[0];
        assert_eq!(
            get(e, "qos-group 1 Dropped Pkts uc"),
            Some((Canonical::Drops, None, Some(1), 2))
        );
        assert_eq!(e.not_available, ["qos-group 1 ECN Pkts"]);
        assert_eq!(
            get(e, "tx-ppp"),
            Some((Canonical::PfcPauseTx, None, None, 6))
        );
        for (bad, want) in [
            (
                serde_json::json!({"TABLE_queuing_interface": {"ROW_queuing_interface": {"dir": "Egress"}}}),
                "no `if_name_str`",
            ),
            (
                serde_json::json!({"TABLE_queuing_interface": {"ROW_queuing_interface": {"if_name_str": "Eth1/1", "TABLE_pfc_stats": {"ROW_pfc_stats": {"cos": "9"}}}}}),
                "no `cos` 0–7",
            ),
            (
                serde_json::json!({"TABLE_queuing_interface": {"ROW_queuing_interface": {"if_name_str": "Eth1/1", "TABLE_qosgrp_egress_stats": {"ROW_qosgrp_egress_stats": {"eq-qosgrp": "2",
                "TABLE_qosgrp_egress_stats_entry": {"ROW_qosgrp_egress_stats_entry": {"eq-stat-type": "ECN", "eq-stat-units": "Pkts", "eq-uc-stat-value": "x"}}}}}}}),
                "Eth1/1 qos-group 2 ECN Pkts uc: eq-uc-stat-value",
            ),
        ] {
            let e = parse_queuing_interface(&bad).unwrap_err().0;
            assert!(
                e.starts_with("show queuing interface: ") && e.contains(want),
                "{e}"
            );
        }
    }

    // ------------------------------------------------------- prior state

    #[test]
    fn port_states_from_status_brief_and_show_interface() {
        let r = parse_ins_api(
            &["show interface status"],
            &fixture("show-interface-status-insapi-greenpau.json"),
        )
        .unwrap();
        let v = parse_port_states(r[0].reply.json().unwrap()).unwrap();
        assert_eq!(v.len(), 59);
        let s = |p: &str| v.iter().find(|s| s.port == p).unwrap().clone();
        assert_eq!(
            (s("mgmt0").admin_up, s("mgmt0").oper_up),
            (Some(true), Some(true))
        );
        assert_eq!(
            (s("Ethernet9/4").admin_up, s("Ethernet9/4").oper_up),
            (Some(true), Some(false))
        );
        assert_eq!(
            (s("Ethernet9/1").admin_up, s("Ethernet9/1").oper_up),
            (Some(true), Some(false))
        );
        assert_eq!(
            (s("port-channel154").admin_up, s("port-channel154").oper_up),
            (None, Some(false))
        );
        assert!(v.iter().all(|s| s.err_disabled.is_none()));
        let v = parse_port_states(&json("show-interface-brief-body-greenpau.json")).unwrap();
        assert_eq!(v.len(), 23);
        let s = |p: &str| v.iter().find(|s| s.port == p).unwrap().clone();
        assert_eq!(
            s("Ethernet2/33").reason.as_deref(),
            Some("SFP not inserted")
        );
        assert_eq!(s("Ethernet2/33").oper_up, Some(false));
        assert_eq!(s("Ethernet10/1").reason, None, "`none` is no reason");
        assert_eq!(s("Ethernet10/1").oper_up, Some(true));
        let vlan = s("Vlan1");
        assert_eq!((vlan.admin_up, vlan.oper_up), (Some(false), Some(false)));
        assert_eq!(vlan.reason.as_deref(), Some("Administratively down"));
        let body = &json("show-interface-n9k-c9336c-fx2-10.2.4-output-body-harvest.json")["output"]
            ["body"];
        let v = parse_port_states(body).unwrap();
        assert_eq!(
            (v[0].port.as_str(), v[0].admin_up, v[0].oper_up),
            ("mgmt0", Some(true), Some(false))
        );
        // Err-disabled, as a status word and as a reason.
        let body = serde_json::json!({"TABLE_interface": {"ROW_interface": [
            {"interface": "Ethernet1/3", "state": "err-disabled"},
            {"interface": "Ethernet1/4", "admin_state": "up", "state": "down", "state_rsn_desc": "Link flap error disabled"}]}});
        let v = parse_port_states(&body).unwrap();
        assert_eq!(v[0].err_disabled.as_deref(), Some("err-disabled"));
        assert_eq!((v[0].admin_up, v[0].oper_up), (Some(true), Some(false)));
        assert_eq!(
            v[1].err_disabled.as_deref(),
            Some("Link flap error disabled")
        );
    }

    #[test]
    fn err_disabled_text_reads_the_cause_past_long_descriptions() {
        let v = parse_err_disabled(&fixture(
            "show-interface-status-err-disabled-linkflap-text-ntc.txt",
        ))
        .unwrap();
        let got: Vec<(&str, &str)> = v
            .iter()
            .map(|s| (s.port.as_str(), s.err_disabled.as_deref().unwrap()))
            .collect();
        assert_eq!(
            got,
            [
                ("Eth1", "linkFlapErrDisabled"),
                ("Eth2", "linkFlapErrDisabled"),
                ("Eth3", "Error disabled"),
                ("Eth4", "linkFlapErrDisabled")
            ]
        );
        assert!(v.iter().all(|s| s.oper_up == Some(false)));
        assert!(parse_err_disabled("").unwrap().is_empty());
        for (bad, want) in [
            (
                "Eth1  x  linkFlapErr  y\n",
                "before the `Port Name Status Reason` header",
            ),
            ("% Invalid command\n", "before the"),
            ("Port Name Status Reason\nEth1\n", "nothing under Status"),
        ] {
            let e = parse_err_disabled(bad).unwrap_err().0;
            assert!(e.contains(want), "{bad:?}: {e}");
        }
    }

    #[test]
    fn bgp_peers_of_every_vrf_and_family() {
        let v = parse_bgp_summary(&json(
            "show-bgp-all-summary-vrf-all-row-saf-object-napalm.json",
        ))
        .unwrap();
        assert_eq!(v.len(), 14);
        assert!(not_established(&v).is_empty());
        let evpn = v.iter().find(|p| p.neighbor == "10.1.1.134").unwrap();
        assert_eq!(evpn.vrf, "default");
        assert_eq!(evpn.address_family.as_deref(), Some("L2VPN EVPN"));
        assert_eq!(evpn.remote_as.as_deref(), Some("64861"));
        let blue: Vec<_> = v
            .iter()
            .filter(|p| p.vrf == "BLUE")
            .map(|p| p.neighbor.as_str())
            .collect();
        assert_eq!(blue, ["10.1.1.185", "10.1.1.187"]);
        // `show bgp sessions`: one VRF row as an object, three peers down.
        let r = parse_ins_api(
            &["show bgp sessions"],
            &fixture("show-bgp-sessions-insapi-greenpau.json"),
        )
        .unwrap();
        let v = parse_bgp_summary(r[0].reply.json().unwrap()).unwrap();
        assert_eq!(v.len(), 8);
        let down: Vec<_> = not_established(&v)
            .iter()
            .map(|p| (p.neighbor.as_str(), p.state.as_str()))
            .collect();
        assert_eq!(
            down,
            [
                ("19.0.200.200", "Idle"),
                ("fec0::1002", "Idle"),
                ("fec0::2002", "Idle")
            ]
        );
        assert!(v
            .iter()
            .all(|p| p.vrf == "default" && p.address_family.is_none()));
        assert!(parse_bgp_summary(&Value::Null).unwrap().is_empty());
        assert!(parse_bgp_summary(&serde_json::json!({}))
            .unwrap()
            .is_empty());
        for (bad, want) in [
            (
                serde_json::json!({"TABLE_vrf": {"ROW_vrf": {"vrf-name-out": "default", "TABLE_neighbor": {"ROW_neighbor": {"neighborid": "10.0.0.1"}}}}}),
                "neighbor 10.0.0.1 has no `state`",
            ),
            (
                serde_json::json!({"TABLE_neighbor": {"ROW_neighbor": {"neighborid": "10.0.0.1", "state": "Idle"}}}),
                "not inside a TABLE_vrf row",
            ),
            (
                serde_json::json!({"TABLE_vrf": {"ROW_vrf": {"TABLE_af": 5}}}),
                "TABLE_af is a number",
            ),
            (serde_json::json!("BGP summary"), "found a string"),
        ] {
            let e = parse_bgp_summary(&bad).unwrap_err().0;
            assert!(
                e.starts_with("show bgp summary: ") && e.contains(want),
                "{e}"
            );
        }
    }

    #[test]
    fn version_and_model() {
        let v = parse_version(&json("show-version-body-napalm-n9000.json")).unwrap();
        assert_eq!(v.version, "7.3(1)D1(1) [build 7.3(1)D1(0.10)]");
        assert_eq!(v.chassis.as_deref(), Some("NX-OSv Chassis"));
        assert_eq!(v.hostname.as_deref(), Some("nxos-spine1"));
        let body = rpc_body(
            "show-version-n9kv-9.2.2-jsonrpc-greenpau.json",
            "show version",
        );
        let v = parse_version(&body).unwrap();
        assert_eq!(v.version, "9.2(2)");
        assert_eq!(v.chassis.as_deref(), Some("Nexus9000 9000v Chassis"));
        let newer = serde_json::json!({"nxos_ver_str": "10.3(4a)", "kickstart_ver_str": "x", "chassis_id": "Nexus9000 C93180YC-FX Chassis"});
        assert_eq!(parse_version(&newer).unwrap().version, "10.3(4a)");
        assert!(parse_version(&serde_json::json!({"host_name": "x"}))
            .unwrap_err()
            .0
            .contains("no `nxos_ver_str`"));
        assert!(parse_version(&Value::Null).is_err());
    }

    // --------------------------------------------------------------- LLDP

    #[test]
    fn lldp_json_neighbours() {
        let v = parse_lldp_json(&json(
            "show-lldp-neighbors-detail-body-netapp-neighbors-harvest.json",
        ))
        .unwrap();
        assert_eq!(v.len(), 3);
        assert_eq!(
            v[1],
            LldpNeighbor {
                interface: "Eth1/9".into(),
                chassis_name: Some("na2a-mc1-nbg3".into()),
                chassis_id: Some("dead.beef.7fef".into()),
                chassis_descr: Some(
                    "AFF-A800, NetApp Release 9.13.1P9: Fri Apr 19 13:13:02 EDT 2024".into()
                ),
                port_id: "e1b".into(),
                port_descr: None,
                mgmt_ip: None,
            }
        );
        let r = parse_ins_api(
            &["show lldp neighbors detail"],
            &fixture("show-lldp-neighbors-detail-insapi-cli_show_array-harvest.json"),
        )
        .unwrap();
        let v = parse_lldp_json(r[0].reply.json().unwrap()).unwrap();
        assert_eq!(v[0].interface, "mgmt0");
        assert_eq!(
            v[0].chassis_name.as_deref(),
            Some("sa-tme-flexpod-3048TP-gg28-01")
        );
        assert_eq!(
            (v[0].port_id.as_str(), v[0].mgmt_ip.as_deref()),
            ("Ethernet1/44", Some("10.192.116.11"))
        );
        assert_eq!(normalise_port(&v[1].interface), "ethernet1/1");
        let e = parse_lldp_json(
            &serde_json::json!({"TABLE_nbor_detail": {"ROW_nbor_detail": {"port_id": "x"}}}),
        )
        .unwrap_err()
        .0;
        assert!(e.contains("no `l_port_id`"), "{e}");
    }

    #[test]
    fn lldp_text_neighbours() {
        let v = parse_lldp_text(&fixture(
            "show-lldp-neighbors-detail-text-eth-short-names-napalm.txt",
        ))
        .unwrap();
        assert_eq!(v.len(), 3);
        assert_eq!(
            (v[0].interface.as_str(), v[0].port_id.as_str()),
            ("mgmt0", "Fa1/0/9")
        );
        assert_eq!(v[0].chassis_name.as_deref(), Some("PERIMETER.cisco.com"));
        assert_eq!(v[0].mgmt_ip.as_deref(), Some("10.1.100.1"));
        assert!(v[0]
            .chassis_descr
            .as_deref()
            .unwrap()
            .ends_with("Compiled Thu 01-May-08 15:42 by antonino"));
        let n9k = &v[1];
        assert_eq!(
            (n9k.interface.as_str(), n9k.port_id.as_str()),
            ("Eth1/1", "Ethernet1/1")
        );
        assert_eq!(n9k.chassis_id.as_deref(), Some("5087.89a1.d8d6"));
        assert_eq!(normalise_port(&n9k.interface), normalise_port(&n9k.port_id));
        let v = parse_lldp_text(&fixture("show-lldp-neighbors-detail-text-ntc-2.txt")).unwrap();
        assert_eq!(v.len(), 2);
        assert_eq!(
            (v[1].interface.as_str(), v[1].port_id.as_str()),
            ("Eth101/1/10", "1a51.4800.0001")
        );
        assert_eq!(v[1].chassis_name.as_deref(), Some("pure-storage"));
        assert_eq!(v[1].port_descr.as_deref(), Some("eth0"));
        assert_eq!(v[1].mgmt_ip, None, "not advertised");
        assert_eq!(v[0].port_descr.as_deref(), Some("SW-NEXUS-UPLINK"));
        // Cut before the last record, but the total survived: an error.
        let full = fixture("show-lldp-neighbors-detail-text-eth-short-names-napalm.txt");
        let cut_at = full.rfind("Chassis id:").unwrap();
        let cut = format!("{}\nTotal entries displayed: 3\n", &full[..cut_at]);
        let e = parse_lldp_text(&cut).unwrap_err().0;
        assert!(e.contains("says 3 entries, but 2 records"), "{e}");
        assert!(
            parse_lldp_text("Capability codes:\n  (R) Router\nTotal entries displayed: 0\n")
                .unwrap()
                .is_empty()
        );
        assert!(parse_lldp_text("% Invalid command\n")
            .unwrap_err()
            .0
            .contains("no `Chassis id:`"));
        let e = parse_lldp_text("Chassis id: 1\nPort id: Ethernet1/1\n")
            .unwrap_err()
            .0;
        assert!(
            e.contains("record 1 (chassis 1) has no `Local Port id`"),
            "{e}"
        );
        // The one-line table is not the detail view.
        assert!(parse_lldp_text(&fixture("show-lldp-neighbors-text-napalm.txt")).is_err());
    }

    // ------------------------------------------------------------ ipqos

    #[test]
    fn ipqos_reference_configuration() {
        let q = parse_running_ipqos(&fixture("qos-config-roce-pfc-ecn-azurelocal-reference.txt"))
            .unwrap();
        assert_eq!(q.system_network_qos.as_deref(), Some("QOS_NETWORK"));
        assert_eq!(q.system_queuing_output.as_deref(), Some("QOS_EGRESS_PORT"));
        let mut pfc3 = [false; 8];
        pfc3[3] = true;
        assert_eq!(q.no_drop().unwrap(), (pfc3, Some(9216)));
        let want = vec![EcnQueue {
            tc: 3,
            min_bytes: 300 * 1024,
            max_bytes: 300 * 1024,
            ecn: true,
        }];
        assert_eq!(q.ecn_for("Ethernet1/17").unwrap(), want);
        assert_eq!(q.ecn_for("eth1/1").unwrap(), want, "the system policy");
        let i = &q.interfaces["ethernet1/17"];
        assert_eq!(i.pfc_mode.as_deref(), Some("on"));
        assert_eq!(q.pfc_watchdog, None);
        assert_eq!(q.queuing["QOS_EGRESS_PORT"].len(), 8);
        assert_eq!(q.queuing["QOS_EGRESS_PORT"][1].queue, Some(0));
    }

    const IPQOS: &str = "!Command: show running-config ipqos
!Running configuration last done at: Mon Jan  1 00:00:00 2024

version 10.3(4a) Bios:version 05.47
priority-flow-control watch-dog-interval on

policy-map type network-qos RoCE-NQ
  class type network-qos c-8q-nq3
    pause pfc-cos 3,4
    mtu 4200
  class type network-qos c-8q-nq-default
    mtu 9216
policy-map type queuing RoCE-OUT
  class type queuing c-out-8q-q3
    bandwidth remaining percent 50
    random-detect minimum-threshold 150 kbytes maximum-threshold 3 mbytes drop-probability 7 weight 0 ecn
  class type queuing c-out-8q-q1
    random-detect minimum-threshold 10 ms maximum-threshold 20 ms
policy-map type queuing PLAIN
  class type queuing c-out-8q-q4
    random-detect minimum-threshold 1000 bytes maximum-threshold 2000 bytes
system qos
  service-policy type network-qos RoCE-NQ
  service-policy type queuing output PLAIN

interface Ethernet1/1
  priority-flow-control mode on
  service-policy type queuing output RoCE-OUT
interface Ethernet1/2
  priority-flow-control mode off
interface Ethernet1/3/2
  priority-flow-control mode auto
";

    #[test]
    fn ipqos_policies_interfaces_and_what_cannot_be_known() {
        let q = parse_running_ipqos(IPQOS).unwrap();
        assert_eq!(q.pfc_watchdog, Some(true));
        let (pfc, mtu) = q.no_drop().unwrap();
        assert_eq!(pfc, [false, false, false, true, true, false, false, false]);
        assert_eq!(mtu, Some(4200));
        // Ethernet1/1's own policy sets a time-based RED: not in bytes.
        let e = q.ecn_for("Eth1/1").unwrap_err();
        assert!(e.contains("class c-out-8q-q1 of queuing policy RoCE-OUT sets RED thresholds in packets or time"), "{e}");
        assert_eq!(
            q.ecn_for("Ethernet1/2").unwrap(),
            [EcnQueue {
                tc: 4,
                min_bytes: 1000,
                max_bytes: 2000,
                ecn: false
            }]
        );
        assert_eq!(
            q.interfaces["ethernet1/3/2"].pfc_mode.as_deref(),
            Some("auto")
        );
        // System templates and class-map-based no-drop classes are not guessed.
        let t = parse_running_ipqos("system qos\n  service-policy type network-qos default-nq-8e-policy\n  service-policy type queuing output default-8q-out-policy\n").unwrap();
        assert!(t
            .no_drop()
            .unwrap_err()
            .contains("default-nq-8e-policy, which the running configuration does not define"));
        assert!(t
            .ecn_for("Ethernet1/1")
            .unwrap_err()
            .contains("default-8q-out-policy"));
        let nd = parse_running_ipqos("policy-map type network-qos N\n  class type network-qos c1\n    pause no-drop\nsystem qos\n  service-policy type network-qos N\n").unwrap();
        assert!(nd.no_drop().unwrap_err().contains("names no `pfc-cos`"));
        // No policy applied: the defaults, which have no no-drop class and no RED.
        let none = parse_running_ipqos("").unwrap();
        assert_eq!(none.no_drop().unwrap(), ([false; 8], None));
        assert_eq!(none.ecn_for("Ethernet1/1").unwrap(), []);
        let odd = parse_running_ipqos("policy-map type queuing Q\n  class type queuing c-out-8q-q2\n    random-detect threshold burst-optimized ecn\n  class type queuing MINE\n    random-detect minimum-threshold 1 kbytes maximum-threshold 2 kbytes ecn\nsystem qos\n  service-policy type queuing output Q\n").unwrap();
        let e = odd.ecn_for("e1/1").unwrap_err();
        assert!(
            e.contains("`random-detect threshold burst-optimized ecn` is not a RED line"),
            "{e}"
        );
        for (bad, want) in [
            (
                "% Invalid command at '^' marker.\n",
                "line 1: the switch answered",
            ),
            (
                "policy-map type network-qos N\n  class type network-qos c\n    pause pfc-cos 9\n",
                "line 3: `pause pfc-cos 9`: `9` is not a CoS",
            ),
            (
                "policy-map type network-qos N\n  class type network-qos c\n    mtu big\n",
                "`big` is not an MTU",
            ),
            (
                "policy-map type network-qos N\n  mtu 9216\n",
                "comes before any class",
            ),
            (
                "priority-flow-control watch-dog-interval maybe\n",
                "neither on nor off",
            ),
        ] {
            let e = parse_running_ipqos(bad).unwrap_err().0;
            assert!(
                e.starts_with("show running-config ipqos: ") && e.contains(want),
                "{bad:?}: {e}"
            );
        }
    }

    // ------------------------------------------------------------- audit

    #[test]
    fn switch_config_from_the_answers() {
        let version = ok(
            "show version",
            Reply::Json(json("show-version-body-napalm-n9000.json")),
        );
        let body = json("show-interface-n9k-c9336c-fx2-10.2.4-output-body-harvest.json")["output"]
            ["body"]
            .clone();
        let interfaces = ok("show interface", Reply::Json(body));
        let ipqos = ok(
            "show running-config ipqos",
            Reply::Text(IPQOS.replace(
                "interface Ethernet1/2\n  priority-flow-control mode off\n",
                "",
            )),
        );
        let pfc = ok(
            "show interface priority-flow-control",
            Reply::Json(serde_json::from_str(PFC_JSON).unwrap()),
        );
        let replies = ConfigReplies {
            version: Some(&version),
            interfaces: Some(&interfaces),
            ipqos: Some(&ipqos),
            pfc: Some(&pfc),
        };
        let ports: Vec<String> = ["Eth1/1", "ethernet1/2", "Ethernet1/9"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let c = switch_config("leaf1", &ports, &replies);
        assert_eq!(
            c.nos_version,
            Fact::Known("7.3(1)D1(1) [build 7.3(1)D1(0.10)]".into())
        );
        assert_eq!(c.pfc_watchdog, Fact::Known(true));
        let p = &c.ports[0];
        assert_eq!(p.name, "Eth1/1");
        assert_eq!(p.link_up, Fact::Known(true));
        assert_eq!(p.speed_mbps, Fact::Known(40_000));
        assert_eq!(
            p.mtu,
            Fact::Known(4200),
            "the no-drop class's MTU is smaller"
        );
        assert_eq!(
            p.pfc,
            Fact::Known([false, false, false, true, true, false, false, false])
        );
        assert!(
            matches!(&p.ecn, Fact::NotAvailable { why, .. } if why.starts_with("leaf1: ")),
            "{:?}",
            p.ecn
        );
        assert!(matches!(&p.pfc_xoff_bytes, Fact::NotAvailable { .. }));
        // Mode auto (no line): Oper Off in `show interface priority-flow-control`.
        let p = &c.ports[1];
        assert_eq!(p.pfc, Fact::Known([false; 8]));
        assert_eq!(
            p.ecn,
            Fact::Known(vec![EcnQueue {
                tc: 4,
                min_bytes: 1000,
                max_bytes: 2000,
                ecn: false
            }])
        );
        let p = &c.ports[2];
        assert_eq!(
            p.link_up,
            Fact::Failed("leaf1: `show interface` printed no Ethernet1/9".into())
        );
        assert!(
            matches!(&p.pfc, Fact::Failed(e) if e.contains("priority-flow-control` printed no Ethernet1/9"))
        );
        // Without the PFC read, mode auto is not available; failures carry over.
        let unsupported = ok(
            "show running-config ipqos",
            Reply::Unsupported("% Invalid command".into()),
        );
        let c = switch_config(
            "leaf2",
            &ports[..1],
            &ConfigReplies {
                version: None,
                interfaces: Some(&interfaces),
                ipqos: Some(&unsupported),
                pfc: None,
            },
        );
        assert_eq!(
            c.nos_version,
            Fact::Failed("leaf2: `show version` got no answer".into())
        );
        assert!(
            matches!(&c.pfc_watchdog, Fact::NotAvailable { tried, .. } if tried == &["show running-config ipqos"])
        );
        assert!(
            matches!(&c.ports[0].pfc, Fact::NotAvailable { why, .. } if why.contains("not supported"))
        );
        assert_eq!(c.ports[0].mtu, Fact::Known(9216));
        let c = switch_config(
            "leaf3",
            &ports[1..2],
            &ConfigReplies {
                ipqos: Some(&ipqos),
                ..Default::default()
            },
        );
        assert!(
            matches!(&c.ports[0].pfc, Fact::NotAvailable { why, .. } if why.contains("mode auto")),
            "{:?}",
            c.ports[0].pfc
        );
        // A body that is not what the parser reads: failed, with an excerpt.
        let text_version = ok(
            "show version",
            Reply::Text("Cisco Nexus Operating System".into()),
        );
        let c = switch_config(
            "leaf4",
            &[],
            &ConfigReplies {
                version: Some(&text_version),
                ..Default::default()
            },
        );
        assert!(
            matches!(&c.nos_version, Fact::Failed(e) if e.starts_with("leaf4: `show version`: answered text where structured output was asked")),
            "{:?}",
            c.nos_version
        );
    }

    // ------------------------------------------------------------- names

    #[test]
    fn port_names_normalise_to_one_form() {
        for (name, want) in [
            ("Eth1/1", "ethernet1/1"),
            ("eth1/1", "ethernet1/1"),
            ("Ethernet1/1", "ethernet1/1"),
            ("ethernet 1/1", "ethernet1/1"),
            ("e1/1", "ethernet1/1"),
            (" \"Ethernet1/1\" ", "ethernet1/1"),
            ("ethernet1/1/2", "ethernet1/1/2"),
            ("Eth101/1/10", "ethernet101/1/10"),
            ("Po10", "port-channel10"),
            ("port-channel10", "port-channel10"),
            ("lo0", "loopback0"),
            ("mgmt0", "mgmt0"),
            ("Vlan2500", "vlan2500"),
            ("Ethernet1/1.100", "ethernet1/1.100"),
            ("", ""),
        ] {
            assert_eq!(normalise_port(name), want, "{name:?}");
            assert_eq!(normalise_port(want), want, "{want:?}");
        }
        assert_ne!(normalise_port("Eth1/1"), normalise_port("Eth1/11"));
        assert_ne!(normalise_port("Eth1/1/1"), normalise_port("Eth1/1"));
    }
}

#[cfg(test)]
mod props {
    use super::*;
    use proptest::prelude::*;

    const FIX: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/nxos/");

    fn fixtures() -> Vec<String> {
        let mut names: Vec<_> = std::fs::read_dir(FIX)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        names.sort();
        names
            .iter()
            .map(|p| std::fs::read_to_string(p).unwrap())
            .collect()
    }

    /// Every reader of this module on one text: a value or an error,
    /// never a panic.
    fn read_all(text: &str) {
        let cmds = ["show interface", "show version"];
        let _ = parse_ins_api(&cmds[..1], text);
        let _ = parse_ins_api(&cmds, text);
        let _ = parse_jsonrpc(&cmds, text);
        let _ = parse_lldp_text(text);
        let _ = parse_err_disabled(text);
        let _ = parse_running_ipqos(text);
        let _ = parse_counters_errors(text);
        let _ = parse_pfc_interface(text);
        if let Ok(v) = serde_json::from_str::<Value>(text) {
            read_json(&v);
        }
    }

    fn read_json(v: &Value) {
        let _ = parse_interface_counters(v);
        let _ = parse_counters_errors_json(v);
        let _ = parse_pfc_interface_json(v);
        let _ = parse_queuing_interface(v);
        let _ = parse_port_states(v);
        let _ = parse_bgp_summary(v);
        let _ = parse_version(v);
        let _ = parse_lldp_json(v);
        let _ = parse_interface_settings(v);
    }

    /// JSON trees built from the keys NX-OS uses, with values of every type.
    fn nxos_json() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            any::<f64>()
                .prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)),
            "(-?[0-9]{1,22}|n/a|--|[A-Za-z /&]{0,12}|Established|Idle|up|down|on|off|3)"
                .prop_map(Value::String),
        ];
        let key = "(TABLE_|ROW_)?(interface|module|pfc_interface|queuing_interface|qosgrp_egress_stats|qosgrp_egress_stats_entry|pfc_stats|vrf|af|saf|neighbor|nbor_detail)|interface|if_name_str|eth_crc|eth_mtu|eq-qosgrp|eq-stat-type|eq-stat-units|eq-uc-stat-value|cos|state|neighborid|vrf-name-out|l_port_id|port_id|admin|oper|sys_ver_str";
        leaf.prop_recursive(6, 64, 6, move |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                proptest::collection::btree_map(key, inner, 0..5)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest! {
        #[test]
        fn arbitrary_text_never_panics(text in "(?s).{0,300}") {
            read_all(&text);
        }

        /// Every fixture cut anywhere (a dropped connection, a short read).
        #[test]
        fn truncated_fixtures_never_panic(i in 0usize..64, cut in 0.0f64..1.0) {
            let all = fixtures();
            let text = &all[i % all.len()];
            let mut at = (text.len() as f64 * cut) as usize;
            while !text.is_char_boundary(at) {
                at -= 1;
            }
            read_all(&text[..at]);
        }

        #[test]
        fn nxos_shaped_json_never_panics(v in nxos_json()) {
            read_json(&v);
            read_all(&v.to_string());
            let wrapped = serde_json::json!({"ins_api": {"sid": "eoc", "outputs": {"output": {"code": "200", "body": v.clone()}}}});
            let _ = parse_ins_api(&["show interface"], &wrapped.to_string());
            let rpc = serde_json::json!([{"jsonrpc": "2.0", "result": {"body": v}, "id": 1}]);
            let _ = parse_jsonrpc(&["show interface"], &rpc.to_string());
        }

        #[test]
        fn normalise_port_is_idempotent(name in "(?s).{0,24}|[\" ]{0,2}(Eth|eth|Ethernet|e|Po|lo|mgmt|Vlan)[ ]?[0-9]{1,3}(/[0-9]{1,2}){0,2}[\" ]{0,2}") {
            let once = normalise_port(&name);
            prop_assert_eq!(normalise_port(&once), once);
        }
    }
}
