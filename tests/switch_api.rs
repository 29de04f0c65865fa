//! The HTTPS channel of API-reached switch platforms (`exec::https`)
//! against a stand-in switch (tests/switch_api/standin.py: Python's
//! http.server behind TLS with a certificate from a throwaway CA made by
//! the openssl CLI) that answers from a script and records each request:
//! verification against the switch's CA, refusal without it, `insecure`,
//! Basic credentials read from their reference, retries on 5xx and on a
//! reset connection only, no retry after a 401 or a timeout, the cap on
//! calls in flight, and messages that name the switch and the call and
//! never the secret. Without python3 or openssl the tests say so and skip.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use rocegate::config::inventory::Credentials;
use rocegate::exec::https::{ApiAuth, ApiClient, ApiErrorKind, ApiTarget};
use serde_json::{json, Value};

const SECRET: &str = "s3cret-not-for-logs";

fn tools() -> Result<(), String> {
    for (tool, pkg) in [("openssl", "openssl"), ("python3", "python3")] {
        if Command::new(tool).arg("--version").output().is_err()
            && Command::new(tool).arg("version").output().is_err()
        {
            return Err(format!("{tool} is not installed: apt-get install {pkg}"));
        }
    }
    Ok(())
}

fn sh(cmd: &mut Command) {
    let o = cmd.output().expect("runs");
    assert!(
        o.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// A CA and a certificate for 127.0.0.1 signed by it.
fn pki(dir: &Path) -> (PathBuf, PathBuf, PathBuf) {
    let p = |f: &str| dir.join(f);
    sh(Command::new("openssl")
        .args([
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "1",
            "-subj",
            "/CN=rocegate test CA",
            "-keyout",
        ])
        .arg(p("ca.key"))
        .arg("-out")
        .arg(p("ca.pem")));
    sh(Command::new("openssl")
        .args([
            "req",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-subj",
            "/CN=127.0.0.1",
            "-keyout",
        ])
        .arg(p("switch.key"))
        .arg("-out")
        .arg(p("switch.csr")));
    std::fs::write(p("san.ext"), "subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n").expect("ext");
    sh(Command::new("openssl")
        .args(["x509", "-req", "-days", "1", "-in"])
        .arg(p("switch.csr"))
        .arg("-CA")
        .arg(p("ca.pem"))
        .arg("-CAkey")
        .arg(p("ca.key"))
        .args(["-CAcreateserial", "-extfile"])
        .arg(p("san.ext"))
        .arg("-out")
        .arg(p("switch.pem")));
    (p("ca.pem"), p("switch.pem"), p("switch.key"))
}

struct StandIn {
    child: Child,
    port: u16,
    log: PathBuf,
    _dir: tempfile::TempDir,
    ca: PathBuf,
}

impl Drop for StandIn {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl StandIn {
    fn start(script: Value) -> StandIn {
        let dir = tempfile::tempdir().expect("temp dir");
        let (ca, cert, key) = pki(dir.path());
        let script_path = dir.path().join("script.json");
        std::fs::write(&script_path, script.to_string()).expect("script");
        let log = dir.path().join("requests.jsonl");
        let mut child = Command::new("python3")
            .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/switch_api/standin.py"))
            .arg(&cert)
            .arg(&key)
            .arg(&script_path)
            .arg(&log)
            .stdout(Stdio::piped())
            .spawn()
            .expect("stand-in starts");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("stdout"))
            .read_line(&mut line)
            .expect("port line");
        let port = line
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("stand-in printed {line:?}"));
        StandIn {
            child,
            port,
            log,
            _dir: dir,
            ca,
        }
    }

    fn target(&self, var: &str) -> ApiTarget {
        ApiTarget {
            switch: "leaf7".into(),
            base: format!("https://127.0.0.1:{}", self.port),
            user: "admin".into(),
            secret: Credentials::Env(var.into()),
            ca_file: Some(self.ca.clone()),
            insecure: false,
            connect_timeout: Duration::from_secs(5),
            request_timeout: Duration::from_secs(5),
            retries: 2,
            backoff: Duration::from_millis(50),
            max_in_flight: 4,
            auth: ApiAuth::Basic,
            place: None,
        }
    }

    fn requests(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).expect("log line"))
            .collect()
    }
}

fn ok(body: &str) -> Value {
    json!({"status": 200, "body": body})
}

macro_rules! needs_tools {
    () => {
        if let Err(why) = tools() {
            println!("skipped: {why}");
            return;
        }
    };
}

#[test]
fn a_call_verified_against_the_switch_ca_carries_the_referenced_credentials() {
    needs_tools!();
    std::env::set_var("ROCEGATE_TEST_API_1", SECRET);
    let s = StandIn::start(json!([ok(
        "{\"jsonrpc\": \"2.0\", \"id\": 1, \"result\": [{}]}"
    )]));
    let c = ApiClient::new(s.target("ROCEGATE_TEST_API_1")).expect("client");
    let body = r#"{"jsonrpc":"2.0","method":"runCmds","params":{"version":1,"cmds":["show version"],"format":"json"},"id":1}"#;
    let r = c
        .post("/command-api", "application/json-rpc", body, "show version")
        .expect("answered");
    assert_eq!(r.status, 200);
    assert!(r.body.contains("\"result\""));
    // Kept alive: a second call on the same client.
    c.post("/command-api", "application/json-rpc", body, "show version")
        .expect("answered again");
    let seen = s.requests();
    assert_eq!(seen.len(), 2);
    assert_eq!(seen[0]["path"], "/command-api");
    assert_eq!(seen[0]["content_type"], "application/json-rpc");
    assert_eq!(seen[0]["user"], "admin");
    assert_eq!(seen[0]["password"], SECRET);
    assert_eq!(seen[0]["body"], body);
}

#[test]
fn an_unknown_certificate_is_refused_unless_insecure_is_chosen() {
    needs_tools!();
    std::env::set_var("ROCEGATE_TEST_API_2", SECRET);
    let s = StandIn::start(json!([ok("{}")]));
    let mut t = s.target("ROCEGATE_TEST_API_2");
    t.ca_file = None;
    let e = ApiClient::new(t.clone())
        .expect("client")
        .post("/ins", "application/json", "{}", "show version")
        .expect_err("the public roots do not know the test CA");
    assert!(matches!(e.kind, ApiErrorKind::Tls(_)), "{e}");
    let text = e.to_string();
    assert!(
        text.starts_with("leaf7: POST /ins (show version): TLS failed"),
        "{text}"
    );
    assert!(text.contains("api.ca_file"), "{text}");
    assert!(s.requests().is_empty(), "nothing was sent before TLS");
    t.insecure = true;
    let r =
        ApiClient::new(t)
            .expect("client")
            .post("/ins", "application/json", "{}", "show version");
    assert_eq!(r.expect("insecure skips verification").status, 200);
    // A CA file that holds no certificate is named.
    let mut t = s.target("ROCEGATE_TEST_API_2");
    let bad = s._dir.path().join("empty.pem");
    std::fs::write(&bad, "not a certificate\n").expect("write");
    t.ca_file = Some(bad);
    let e = ApiClient::new(t).expect_err("no certificate in the CA file");
    assert!(e.to_string().contains("holds no PEM certificate"), "{e}");
}

#[test]
fn a_busy_switch_or_a_reset_connection_is_retried_and_a_refusal_is_not() {
    needs_tools!();
    std::env::set_var("ROCEGATE_TEST_API_3", SECRET);
    let s = StandIn::start(json!([
        {"status": 503, "body": "busy"},
        {"reset": true},
        ok("{\"done\": true}"),
    ]));
    let c = ApiClient::new(s.target("ROCEGATE_TEST_API_3")).expect("client");
    let r = c
        .post("/ins", "application/json", "{}", "show interface")
        .expect("third time");
    assert_eq!(r.body, "{\"done\": true}");
    assert_eq!(s.requests().len(), 3);

    let s =
        StandIn::start(json!([{"status": 401, "body": "<html>401 Authorization Required</html>"}]));
    let c = ApiClient::new(s.target("ROCEGATE_TEST_API_3")).expect("client");
    let e = c
        .post("/ins", "application/json", "{}", "show version")
        .expect_err("refused");
    let text = e.to_string();
    assert!(
        text.contains("HTTP 401") && text.contains("check api.user"),
        "{text}"
    );
    assert!(
        !text.contains(SECRET),
        "the secret never reaches a message: {text}"
    );
    assert_eq!(s.requests().len(), 1, "a 401 is not retried");

    let s = StandIn::start(json!([{"status": 500, "body": "internal"}]));
    let c = ApiClient::new(s.target("ROCEGATE_TEST_API_3")).expect("client");
    let e = c
        .post("/ins", "application/json", "{}", "show version")
        .expect_err("always 500");
    assert!(e.to_string().contains("HTTP 500"), "{e}");
    assert_eq!(s.requests().len(), 3, "one call and two retries");
}

#[test]
fn a_timeout_is_not_retried_and_calls_in_flight_are_capped() {
    needs_tools!();
    std::env::set_var("ROCEGATE_TEST_API_4", SECRET);
    let s = StandIn::start(json!([{"status": 200, "body": "{}", "delay": 3.0}]));
    let mut t = s.target("ROCEGATE_TEST_API_4");
    t.request_timeout = Duration::from_millis(800);
    let e = ApiClient::new(t)
        .expect("client")
        .post(
            "/ins",
            "application/json",
            "{}",
            "interface Ethernet1/1 ; shutdown",
        )
        .expect_err("too slow");
    assert!(matches!(e.kind, ApiErrorKind::Timeout(_)), "{e}");
    assert_eq!(
        s.requests().len(),
        1,
        "a change that timed out may have been made: never sent twice"
    );

    let s = StandIn::start(json!([{"status": 200, "body": "{}", "delay": 0.3}]));
    let mut t = s.target("ROCEGATE_TEST_API_4");
    t.max_in_flight = 2;
    let c = ApiClient::new(t).expect("client");
    let threads: Vec<_> = (0..6)
        .map(|_| {
            let c = c.clone();
            std::thread::spawn(move || {
                c.post("/ins", "application/json", "{}", "show version")
                    .map(|r| r.status)
            })
        })
        .collect();
    for t in threads {
        assert_eq!(t.join().expect("thread").expect("answered"), 200);
    }
    let most = s
        .requests()
        .iter()
        .filter_map(|r| r["in_flight"].as_u64())
        .max();
    assert_eq!(most, Some(2), "at most two calls in flight");
}

#[test]
fn a_missing_secret_is_named_by_its_reference() {
    needs_tools!();
    let s = StandIn::start(json!([ok("{}")]));
    let mut t = s.target("ROCEGATE_TEST_API_UNSET");
    std::env::remove_var("ROCEGATE_TEST_API_UNSET");
    let e = ApiClient::new(t.clone())
        .expect("client")
        .post("/ins", "application/json", "{}", "show version")
        .expect_err("no secret");
    assert!(
        e.to_string()
            .contains("environment variable ROCEGATE_TEST_API_UNSET is not set"),
        "{e}"
    );
    let file = s._dir.path().join("password");
    std::fs::write(&file, format!("{SECRET}\n")).expect("write");
    t.secret = Credentials::File(file.display().to_string());
    ApiClient::new(t)
        .expect("client")
        .post("/ins", "application/json", "{}", "show version")
        .expect("a file's first line is the secret");
    assert_eq!(s.requests()[0]["password"], SECRET);
    assert!(s.requests().len() == 1, "nothing sent without a secret");
}

/// An APIC's `aaaLogin` answer (the attributes' names as the APIC gives
/// them, numbers as strings: research/aci.md §1.1).
fn apic_login(token: &str, refresh_s: &str) -> Value {
    ok(
        &json!({"totalCount": "1", "imdata": [{"aaaLogin": {"attributes": {
        "token": token, "refreshTimeoutSeconds": refresh_s,
        "maximumLifetimeSeconds": "86400", "creationTime": "1700000000"}}}]})
        .to_string(),
    )
}

/// The APIC channel: one `aaaLogin` (the password in its body, nowhere
/// else), then the token as the `APIC-cookie` cookie on GET and DELETE; a
/// 403 (a session the APIC expired early) logs in again once and repeats
/// the call; a token past two thirds of its refresh timeout is refreshed
/// with `aaaRefresh` first.
#[test]
fn an_apic_session_logs_in_once_refreshes_and_logs_in_again_after_a_403() {
    needs_tools!();
    std::env::set_var("ROCEGATE_TEST_API_APIC", SECRET);
    let empty = ok(r#"{"totalCount":"0","imdata":[]}"#);
    let expired = json!({"status": 403, "body": r#"{"totalCount":"1","imdata":[{"error":{"attributes":{"code":"403","text":"Token was invalid (Error: Token timeout)"}}}]}"#});
    let s = StandIn::start(json!([
        apic_login("tok-1", "600"),
        empty.clone(),
        empty.clone(),
        expired,
        apic_login("tok-2", "2"),
        empty.clone(),
        apic_login("tok-3", "600"),
        empty,
    ]));
    let mut t = s.target("ROCEGATE_TEST_API_APIC");
    t.auth = ApiAuth::ApicLogin;
    let c = ApiClient::new(t).expect("client");
    let get = |path: &str| {
        c.call("GET", path, "application/json", "", "read")
            .expect("answered")
    };
    get("/api/class/qosClass.json");
    c.call(
        "DELETE",
        "/api/mo/uni/fabric/outofsvc/rsoosPath-[topology/pod-1/paths-101/pathep-[eth1/1]].json",
        "application/json",
        "",
        "undo",
    )
    .expect("answered");
    // Expired under us: a new login, the same call again, with the new token.
    get("/api/class/qosCong.json");
    // Two thirds of tok-2's refresh timeout (2 s) gone: refreshed first.
    std::thread::sleep(Duration::from_millis(1500));
    get("/api/class/qosPfcPol.json");
    let seen = s.requests();
    let line = |r: &Value| {
        format!(
            "{} {} {}",
            r["method"].as_str().unwrap_or_default(),
            r["path"].as_str().unwrap_or_default(),
            r["cookie"].as_str().unwrap_or("-")
        )
    };
    let lines: Vec<String> = seen.iter().map(line).collect();
    assert_eq!(
        lines,
        [
            "POST /api/aaaLogin.json -",
            "GET /api/class/qosClass.json APIC-cookie=tok-1",
            "DELETE /api/mo/uni/fabric/outofsvc/rsoosPath-[topology/pod-1/paths-101/pathep-[eth1/1]].json APIC-cookie=tok-1",
            "GET /api/class/qosCong.json APIC-cookie=tok-1",
            "POST /api/aaaLogin.json -",
            "GET /api/class/qosCong.json APIC-cookie=tok-2",
            "GET /api/aaaRefresh.json APIC-cookie=tok-2",
            "GET /api/class/qosPfcPol.json APIC-cookie=tok-3",
        ]
    );
    let login: Value = serde_json::from_str(seen[0]["body"].as_str().unwrap()).unwrap();
    assert_eq!(login["aaaUser"]["attributes"]["name"], "admin");
    assert_eq!(login["aaaUser"]["attributes"]["pwd"], SECRET);
    // No Basic credentials on any call: the password goes only in the login.
    assert!(seen.iter().all(|r| r["password"].is_null()), "{seen:?}");
}

/// A refused login names the APIC and the status; the password is in no
/// message.
#[test]
fn a_refused_apic_login_is_named_without_the_password() {
    needs_tools!();
    std::env::set_var("ROCEGATE_TEST_API_APIC2", SECRET);
    let s = StandIn::start(
        json!([{"status": 401, "body": r#"{"totalCount":"1","imdata":[{"error":{"attributes":{"code":"401","text":"Username or password is incorrect - FAILED local authentication"}}}]}"#}]),
    );
    let mut t = s.target("ROCEGATE_TEST_API_APIC2");
    t.auth = ApiAuth::ApicLogin;
    let c = ApiClient::new(t).expect("client");
    let e = c
        .call(
            "GET",
            "/api/class/qosClass.json",
            "application/json",
            "",
            "qosClass",
        )
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("leaf7: GET /api/class/qosClass.json (qosClass): HTTP 401"),
        "{e}"
    );
    assert!(e.contains("aaaLogin refused"), "{e}");
    assert!(!e.contains(SECRET), "{e}");
    assert_eq!(s.requests().len(), 1, "a refused login is not retried");
}
