//! The NX-API requests and answers on public captures
//! (`tests/fixtures/nxos/`) and on the shapes NX-API documents.

use serde_json::Value;

use super::testutil::{fixture, json};
use super::*;
use crate::switch::Fact;

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
    let two = ins_api_request(CliType::Show, &["show version", " show interface type "]).unwrap();
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
    let e = parse_jsonrpc(&["show version"], &fixture("http-401-nginx-greenpau.html")).unwrap_err();
    assert_eq!(
        e,
        ResponseError::Html {
            title: "401 Authorization Required".into()
        }
    );
    assert!(e.to_string().contains("password was refused"), "{e}");
    let e = parse_ins_api(&["show version"], &fixture("http-405-nginx-greenpau.html")).unwrap_err();
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
