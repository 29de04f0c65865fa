//! API queries (EOS eAPI, NX-API) batched into calls and read back: the
//! API half of [`super::invocation`] and [`super::answers`].
//!
//! Consecutive queries of one API and one form go in one call (`runCmds`
//! takes one `format`, `ins_api` one `type`), so a snapshot of every port
//! of a switch is one HTTPS request. Every eAPI call starts with `enable`
//! (reads need privileged EXEC); its reply is dropped. Each query gets an
//! [`Answer`]: exit 0 and the command's output when every command of it
//! ran, else one of the exit codes below and the switch's refusal in
//! words, naming the command.

use serde_json::Value;

use super::{eos, nxos, Answer, Api, ApiQuery, Form, Query};
use crate::exec::apicall::{self, Call, CallResult};
use crate::exec::InvocationOutput;

/// The command does not exist on this switch or release: what it reads is
/// not available here (never 0).
pub const NOT_AVAILABLE: i32 = 2;
/// The account may not run it.
pub const NEEDS_PRIVILEGE: i32 = 5;
/// It has no JSON form: ask for it as text.
pub const NO_JSON: i32 = 3;
/// Any other refusal, or an answer that could not be read.
pub const FAILED: i32 = 1;

/// Which of `templates` (`show interfaces {} counters errors`) a one-command
/// API query fills in, and with which port: how a platform knows what a
/// counter query it built reads.
pub fn templated<'a>(
    q: &Query,
    templates: impl Iterator<Item = &'a str>,
) -> Option<(usize, String)> {
    let Query::Api(a) = q else { return None };
    let cmd = a.cmds.first()?;
    templates.enumerate().find_map(|(i, t)| {
        let (pre, post) = t.split_once("{}")?;
        let port = cmd.strip_prefix(pre)?.strip_suffix(post)?;
        (!port.contains(' ')).then(|| (i, port.to_string()))
    })
}

/// One call and the queries (by index) whose commands it carries.
struct Group<'a> {
    api: Api,
    form: Form,
    queries: Vec<(usize, &'a ApiQuery)>,
}

fn groups<'a>(queries: &[&'a ApiQuery]) -> Vec<Group<'a>> {
    let mut out: Vec<Group> = Vec::new();
    for (i, q) in queries.iter().enumerate() {
        match out.last_mut() {
            Some(g) if g.api == q.api && g.form == q.form => g.queries.push((i, q)),
            _ => out.push(Group {
                api: q.api,
                form: q.form,
                queries: vec![(i, q)],
            }),
        }
    }
    out
}

fn eapi_format(form: Form) -> eos::Format {
    match form {
        Form::Text => eos::Format::Text,
        Form::Json | Form::Conf => eos::Format::Json,
    }
}

fn eapi_commands(g: &Group) -> Vec<eos::Command> {
    std::iter::once("enable")
        .chain(
            g.queries
                .iter()
                .flat_map(|(_, q)| q.cmds.iter().map(String::as_str)),
        )
        .map(eos::Command::new)
        .collect()
}

fn nxapi_type(form: Form) -> nxos::CliType {
    match form {
        Form::Json => nxos::CliType::Show,
        Form::Text => nxos::CliType::ShowAscii,
        Form::Conf => nxos::CliType::Conf,
    }
}

fn all_cmds<'a>(g: &Group<'a>) -> Vec<&'a str> {
    g.queries
        .iter()
        .flat_map(|(_, q)| q.cmds.iter().map(String::as_str))
        .collect()
}

fn call_id(k: usize) -> String {
    format!("rocegate-{}", k + 1)
}

/// One APIC request: `METHOD PATH` or `METHOD PATH BODY`.
fn apic_call(cmd: &str) -> Call {
    let mut w = cmd.splitn(3, ' ');
    let method = w.next().unwrap_or("GET").to_string();
    let path = w.next().unwrap_or_default().to_string();
    let body = w.next().unwrap_or_default().to_string();
    Call {
        what: format!("{method} {path}"),
        method,
        path,
        content_type: "application/json".into(),
        body,
    }
}

/// The calls that ask every query, in order. APIC requests are one call
/// each (REST has no batch); the CLI APIs batch.
pub fn calls(queries: &[&ApiQuery]) -> Vec<Call> {
    if queries.iter().any(|q| q.api == Api::Apic) {
        return queries
            .iter()
            .flat_map(|q| q.cmds.iter().map(|c| apic_call(c)))
            .collect();
    }
    groups(queries)
        .iter()
        .enumerate()
        .map(|(k, g)| {
            let what = all_cmds(g).join(", ");
            match g.api {
                Api::Eapi => Call {
                    method: "POST".into(),
                    path: "/command-api".into(),
                    content_type: "application/json".into(),
                    body: eos::request(&call_id(k), &eapi_commands(g), eapi_format(g.form)),
                    what,
                },
                Api::Apic => unreachable!("APIC requests are calls of their own"),
                Api::Nxapi => Call {
                    method: "POST".into(),
                    path: "/ins".into(),
                    content_type: "application/json".into(),
                    // A command NX-API would split (`;`, a line break) is
                    // refused here; the call then carries none and its
                    // answers say why.
                    body: nxos::ins_api_request(nxapi_type(g.form), &all_cmds(g))
                        .unwrap_or_default(),
                    what,
                },
            }
        })
        .collect()
}

fn refused(code: i32, why: String) -> Answer {
    Answer {
        exit: Some(code),
        text: why,
    }
}

/// One query's answer from its commands' outputs (`Ok`) or the first
/// refusal among them.
fn answer_of(outputs: Vec<Result<Value, (i32, String)>>) -> Answer {
    let mut ok = Vec::new();
    for o in outputs {
        match o {
            Ok(v) => ok.push(v),
            Err((code, why)) => return refused(code, why),
        }
    }
    let text = match ok.as_slice() {
        [Value::String(s)] => s.clone(),
        [v] => v.to_string(),
        many => Value::Array(many.to_vec()).to_string(),
    };
    Answer {
        exit: Some(0),
        text,
    }
}

fn eapi_outputs(g: &Group, k: usize, r: &CallResult) -> Result<Vec<Answer>, String> {
    let cmds = eapi_commands(g);
    let replies = eos::parse_response(&r.body, &call_id(k), &cmds, eapi_format(g.form))
        .map_err(|e| e.to_string())?;
    let conf = g.form == Form::Conf;
    let mut it = replies.into_iter().skip(1).map(|r| match r {
        eos::Reply::Json(v) => Ok(v),
        eos::Reply::Text(t) => Ok(Value::String(t)),
        // A configuration line the switch does not take is refused, not
        // a read this switch lacks.
        eos::Reply::NotAvailable(m) if conf => Err((
            FAILED,
            m.replace(
                "is not available on this switch",
                "was refused by the switch",
            ),
        )),
        eos::Reply::NotAvailable(m) => Err((NOT_AVAILABLE, m)),
        eos::Reply::NoJson(m) => Err((NO_JSON, m)),
        eos::Reply::NeedsPrivilege(m) => Err((NEEDS_PRIVILEGE, m)),
        eos::Reply::Failed(m) | eos::Reply::NotRun(m) => Err((FAILED, m)),
    });
    Ok(g.queries
        .iter()
        .map(|(_, q)| answer_of(it.by_ref().take(q.cmds.len()).collect()))
        .collect())
}

fn nxapi_outputs(g: &Group, r: &CallResult) -> Result<Vec<Answer>, String> {
    let cmds = all_cmds(g);
    let replies = nxos::parse_ins_api(&cmds, &r.body).map_err(|e| e.to_string())?;
    let conf = g.form == Form::Conf;
    let mut it = replies.into_iter().map(|c| {
        let cmd = c.command;
        match c.reply {
            nxos::Reply::Unsupported(m) if conf => {
                Err((FAILED, format!("the switch refused `{cmd}`: {m}")))
            }
            nxos::Reply::Json(v) => Ok(v),
            nxos::Reply::Text(t) => Ok(Value::String(t)),
            nxos::Reply::Empty => Ok(Value::String(String::new())),
            nxos::Reply::NoJson(m) => Err((NO_JSON, format!("`{cmd}` has no JSON form: {m}"))),
            nxos::Reply::Unsupported(m) => Err((
                NOT_AVAILABLE,
                format!("`{cmd}` is not available on this switch: {m}"),
            )),
            nxos::Reply::NeedsRole(m) => Err((
                NEEDS_PRIVILEGE,
                format!("`{cmd}` is not allowed for this account's role: {m}"),
            )),
            nxos::Reply::Failed { code, why } => {
                Err((FAILED, format!("`{cmd}` failed (code {code}): {why}")))
            }
        }
    });
    Ok(g.queries
        .iter()
        .map(|(_, q)| answer_of(it.by_ref().take(q.cmds.len()).collect()))
        .collect())
}

/// One answer per query from what the API invocation of [`calls`] printed.
/// A call never answered (the invocation failed before it) leaves its
/// queries cut off (`exit: None`).
pub fn answers(queries: &[&ApiQuery], out: &InvocationOutput) -> Vec<Answer> {
    let mut answers = vec![Answer::default(); queries.len()];
    let results = apicall::results(&out.stdout).unwrap_or_default();
    if queries.iter().any(|q| q.api == Api::Apic) {
        return apic_answers(queries, &results, out);
    }
    for (k, g) in groups(queries).iter().enumerate() {
        let Some(r) = results.get(k) else {
            if let Some(f) = &out.failure {
                for (i, _) in &g.queries {
                    answers[*i].text = f.to_string();
                }
            }
            continue;
        };
        let got = match g.api {
            Api::Eapi => eapi_outputs(g, k, r),
            Api::Nxapi => nxapi_outputs(g, r),
            // Answered request by request in `apic_answers`.
            Api::Apic => Err("an APIC request is not batched".to_string()),
        };
        match got {
            Ok(per_query) => {
                for ((i, _), a) in g.queries.iter().zip(per_query) {
                    answers[*i] = a;
                }
            }
            Err(e) => {
                for (i, _) in &g.queries {
                    answers[*i] = refused(
                        FAILED,
                        format!("HTTP {}: the answer could not be read: {e}", r.status),
                    );
                }
            }
        }
    }
    answers
}

/// APIC answers: one result per request, in order; a query's answer is
/// its requests' bodies (a list when several), or the first refusal: an
/// HTTP status other than 200, or the APIC's `imdata` error.
fn apic_answers(
    queries: &[&ApiQuery],
    results: &[CallResult],
    out: &InvocationOutput,
) -> Vec<Answer> {
    let mut k = 0;
    queries
        .iter()
        .map(|q| {
            let mut outputs = Vec::new();
            for cmd in &q.cmds {
                let Some(r) = results.get(k) else {
                    return Answer {
                        exit: None,
                        text: out
                            .failure
                            .as_ref()
                            .map_or("not answered".to_string(), |f| f.to_string()),
                    };
                };
                k += 1;
                let what = apic_call(cmd).what;
                let body: Result<Value, String> = serde_json::from_str(&r.body)
                    .map_err(|e| format!("`{what}`: HTTP {}: not JSON ({e})", r.status));
                let refused = body.as_ref().ok().and_then(|v| {
                    v.pointer("/imdata/0/error/attributes").map(|e| {
                        format!(
                            "`{what}`: HTTP {}: the APIC refused it (code {}): {}",
                            r.status,
                            e.get("code").and_then(Value::as_str).unwrap_or("?"),
                            e.get("text").and_then(Value::as_str).unwrap_or("")
                        )
                    })
                });
                outputs.push(match (r.status, body, refused) {
                    (_, _, Some(why)) => Err((FAILED, why)),
                    (200, Ok(v), None) => Ok(v),
                    (s, Ok(_), None) => Err((FAILED, format!("`{what}`: HTTP {s}"))),
                    (_, Err(e), None) => Err((FAILED, e)),
                });
            }
            answer_of(outputs)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::ExecFailure;
    use crate::switch::{Platform, Query};
    use serde_json::json;

    fn fixture(dir: &str, name: &str) -> Value {
        let p = format!("{}/tests/fixtures/{dir}/{name}", env!("CARGO_MANIFEST_DIR"));
        serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap()
    }

    fn api_queries(qs: &[Query]) -> Vec<&ApiQuery> {
        qs.iter()
            .map(|q| match q {
                Query::Api(a) => a,
                Query::Argv(_) => panic!("argv"),
            })
            .collect()
    }

    fn printed(bodies: &[Value]) -> InvocationOutput {
        InvocationOutput {
            stdout: apicall::print(
                &bodies
                    .iter()
                    .map(|b| CallResult {
                        status: 200,
                        body: b.to_string(),
                    })
                    .collect::<Vec<_>>(),
            ),
            exit: Some(0),
            ..Default::default()
        }
    }

    /// A snapshot of two EOS counter reads and a text read: two calls (one
    /// per format), `enable` first in each, answers split back per query
    /// and read by the platform's own parser.
    #[test]
    fn eapi_batches_by_format_and_splits_answers_back() {
        let eos = crate::switch::eos::Eos;
        let mut qs: Vec<Query> = eos.counter_queries("Ethernet1")[1..3].to_vec();
        qs.push(Query::api(
            Api::Eapi,
            Form::Text,
            &["show errdisable recovery"],
        ));
        let refs = api_queries(&qs);
        let c = calls(&refs);
        assert_eq!(c.len(), 2);
        assert_eq!(c[0].path, "/command-api");
        let body: Value = serde_json::from_str(&c[0].body).unwrap();
        assert_eq!(body["method"], "runCmds");
        assert_eq!(body["params"]["format"], "json");
        assert_eq!(
            body["params"]["cmds"],
            json!([
                "enable",
                "show interfaces Ethernet1 counters errors",
                "show interfaces Ethernet1 counters discards"
            ])
        );
        let text: Value = serde_json::from_str(&c[1].body).unwrap();
        assert_eq!(text["params"]["format"], "text");
        assert_eq!(text["id"], "rocegate-2");
        // The switch answers: errors, discards, then the text call.
        let errors = fixture("eos", "show-interfaces-counters-errors-anta-unittest.json");
        let discards = fixture(
            "eos",
            "show-interfaces-counters-discards-anta-unittest.json",
        );
        let out = printed(&[
            json!({"jsonrpc": "2.0", "id": "rocegate-1", "result": [{}, errors, discards]}),
            json!({"jsonrpc": "2.0", "id": "rocegate-2", "result": [{"output": ""}, {"output": "Errdisable Reason  Timer Status\n"}]}),
        ]);
        let a = answers(&refs, &out);
        assert_eq!(a.len(), 3);
        assert!(a.iter().all(|a| a.exit == Some(0)), "{a:?}");
        let r = eos.parse_counters("", &qs[0], &a[0]).unwrap();
        assert!(r.iter().any(|r| r.vendor == "fcsErrors"), "{r:?}");
        assert_eq!(
            eos.counter_source(&qs[0]),
            "show interfaces counters errors"
        );
        assert!(a[2].text.starts_with("Errdisable Reason"));
    }

    /// eAPI stops at the first failing command: the refused one is not
    /// available (1002 Invalid input), the ones after it never ran, the
    /// ones before it keep their answers; a call never answered is cut off
    /// with the transport's reason.
    #[test]
    fn eapi_refusals_and_cut_off_calls_are_answers_with_reasons() {
        let qs = [
            Query::api(Api::Eapi, Form::Json, &["show version"]),
            Query::api(
                Api::Eapi,
                Form::Json,
                &["show interfaces Ethernet1 counters queue drops"],
            ),
            Query::api(Api::Eapi, Form::Json, &["show lldp neighbors detail"]),
            Query::api(Api::Eapi, Form::Text, &["show errdisable recovery"]),
        ];
        let refs = api_queries(&qs);
        let mut out = printed(&[json!({
            "jsonrpc": "2.0", "id": "rocegate-1",
            "error": {"code": 1002, "message": "CLI command 3 of 4 failed: invalid command",
                      "data": [{}, {"version": "4.31.1F"}, {"errors": ["Invalid input (at token 3: 'queue')"]}]}
        })]);
        out.failure = Some(ExecFailure::TimedOut(
            "leaf1: POST /command-api: no answer in 10s".into(),
        ));
        out.exit = None;
        let a = answers(&refs, &out);
        assert_eq!(a[0].exit, Some(0));
        assert_eq!(a[1].exit, Some(NOT_AVAILABLE), "{:?}", a[1]);
        assert!(a[1].text.contains("Invalid input"), "{}", a[1].text);
        assert_eq!(a[2].exit, Some(FAILED));
        assert_eq!(a[3].exit, None);
        assert!(a[3].text.contains("no answer in 10s"), "{}", a[3].text);
        // Not JSON-RPC at all (a proxy's page): every query says so.
        let bad = InvocationOutput {
            stdout: apicall::print(&[CallResult {
                status: 502,
                body: "<html>Bad Gateway</html>".into(),
            }]),
            ..Default::default()
        };
        let a = answers(&refs[..1], &bad);
        assert_eq!(a[0].exit, Some(FAILED));
        assert!(a[0].text.starts_with("HTTP 502"), "{}", a[0].text);
    }

    /// NX-API: show and text commands go in separate `ins_api` calls; a
    /// single output comes back as an object, not a list.
    #[test]
    fn nxapi_calls_by_type_and_reads_a_single_output_object() {
        let nx = crate::switch::nxos::Nxos;
        let qs = [
            Query::api(Api::Nxapi, Form::Json, &["show interface status"]),
            Query::api(Api::Nxapi, Form::Text, &["show running-config ipqos"]),
        ];
        let refs = api_queries(&qs);
        let c = calls(&refs);
        assert_eq!(c.len(), 2);
        let b: Value = serde_json::from_str(&c[0].body).unwrap();
        assert_eq!(b["ins_api"]["type"], "cli_show");
        assert_eq!(b["ins_api"]["input"], "show interface status");
        let b: Value = serde_json::from_str(&c[1].body).unwrap();
        assert_eq!(b["ins_api"]["type"], "cli_show_ascii");
        let status = fixture("nxos", "show-interface-status-insapi-greenpau.json");
        let text = json!({"ins_api": {"type": "cli_show_ascii", "version": "1.0", "sid": "eoc",
            "outputs": {"output": {"input": "show running-config ipqos", "msg": "Success", "code": "200",
                                   "body": "!Command: show running-config ipqos\n"}}}});
        let a = answers(&refs, &printed(&[status, text]));
        assert_eq!(a[0].exit, Some(0), "{:?}", a[0]);
        let rows: Value = serde_json::from_str(&a[0].text).unwrap();
        assert!(crate::switch::nxos::parse_port_states(&rows).unwrap().len() > 1);
        assert_eq!(a[1].exit, Some(0));
        assert!(a[1].text.starts_with("!Command"));
        // The NX-OS platform reads the same answers as facts.
        let _ = nx.name();
    }

    /// A command NX-API would split is never sent as another command.
    #[test]
    fn a_port_name_with_a_separator_is_not_sent() {
        let q = Query::api(Api::Nxapi, Form::Conf, &["interface Ethernet1/1 ;reload"]);
        let refs = api_queries(std::slice::from_ref(&q));
        assert_eq!(calls(&refs)[0].body, "");
    }
}
