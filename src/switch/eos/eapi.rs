//! The eAPI envelope: the body of one `runCmds` call ([`request`]) and the
//! answer read back into one [`Reply`] per command ([`parse_response`]),
//! refusals sorted into not available, no JSON form, needs privilege,
//! failed and not run. What an output means is the counters' and state
//! parsers' business; the HTTPS channel that carries the call is
//! `exec::https`'s.

use serde_json::{json, Value};

use super::{err, join, kind, member, object, opt_string, parse_json, string};
use crate::counters::ParseError;
use crate::switch::config::excerpt;

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
        let words: Vec<&str> = cmd.split_whitespace().collect();
        let cmd = words.join(" ");
        // The model is the command's, whichever ports it is narrowed to:
        // `show priority-flow-control interfaces Ethernet1 counters` is
        // read at the revision of `show priority-flow-control counters`.
        let mut key: Vec<&str> = Vec::new();
        let mut i = 0;
        while i < words.len() {
            if words[i] == "interfaces"
                && words
                    .get(i + 1)
                    .is_some_and(|w| w.chars().any(|c| c.is_ascii_digit()))
            {
                i += 2;
                continue;
            }
            key.push(words[i]);
            i += 1;
        }
        let key = key.join(" ");
        let revision = REVISIONS.iter().find(|(c, _)| *c == key).map(|(_, r)| *r);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::switch::eos::testutil::{fixture, json_of, replies};
    use crate::switch::eos::{parse_errdisable_recovery, parse_version};

    // ------------------------------------------------------------ envelope

    /// Narrowed to one port, a command keeps its pinned revision; `show
    /// interfaces phy detail` is not mistaken for a port filter.
    #[test]
    fn a_port_filter_keeps_the_revision() {
        let c = Command::new("show priority-flow-control interfaces Ethernet3/1 counters");
        assert_eq!(c.revision, Some(3));
        assert_eq!(
            c.cmd,
            "show priority-flow-control interfaces Ethernet3/1 counters"
        );
        assert_eq!(Command::new("show interfaces phy detail").revision, Some(2));
        assert_eq!(Command::new("show interfaces Ethernet1").revision, None);
    }

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

    proptest::proptest! {
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
    }
}
