//! NX-API requests and answers: the `ins_api` and JSON-RPC bodies of `POST
//! /ins`, and the split of an answer into one [`CommandReply`] per command,
//! with its errors sorted by what the caller does next (ask again as text,
//! report the read as not available, name the role it needs). Knows the
//! envelope, not what a body says: reading a body is for `counters`,
//! `state` and `qos`, and the HTTPS channel is `exec::https`'s.

use serde::Serialize;
use serde_json::Value;

use super::rows::kind_of;
use crate::counters::first_line;
use crate::switch::config::excerpt;
use crate::switch::Fact;

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
/// [`rows`](fn@super::rows) reads as a table without rows.
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
