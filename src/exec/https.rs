//! The HTTPS channel of the platforms reached through an API rather than
//! command lines (Arista eAPI's `POST /command-api`, NX-API's `POST /ins`):
//! one JSON request per call, over one kept-alive connection per switch.
//!
//! - TLS is verified by default, against the switch's own CA file
//!   (`api.ca_file`) or the public roots; `api.insecure: true` turns
//!   verification off, and every client built so says so on stderr.
//! - Connect and request timeouts bound every call.
//! - A call is retried, with backoff, only when the switch answered 5xx or
//!   the connection was reset: never after a timeout or a 4xx, where the
//!   request may have been carried out or will fail the same way again.
//! - At most `api.max_in_flight` calls run against one switch at once
//!   (NX-API serves four at a time; EOS is no happier with more).
//! - The secret is read from its reference (an environment variable or a
//!   file) at each call and goes nowhere but the Authorization header:
//!   errors name the switch, the call and the status, never the secret.
//!
//! Blocking by design: a caller on the async runtime runs it with
//! `spawn_blocking`, one switch's batch per call.

use std::path::PathBuf;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use crate::config::inventory::Credentials;

/// Longest body read from a switch; more is an error, not a truncation.
const BODY_LIMIT: u64 = 64 * 1024 * 1024;

/// How one switch is reached over HTTPS.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiTarget {
    /// Inventory name, for messages.
    pub switch: String,
    /// `https://address[:port]`, without a trailing slash.
    pub base: String,
    pub user: String,
    /// Where the password is; never the password.
    pub secret: Credentials,
    /// PEM file of the CA that signed the switch's certificate; `None`
    /// uses the public roots.
    pub ca_file: Option<PathBuf>,
    /// Certificate verification off (logged when the client is built).
    pub insecure: bool,
    pub connect_timeout: Duration,
    pub request_timeout: Duration,
    /// Retries after a 5xx or a reset connection.
    pub retries: u32,
    /// First backoff; doubled at each retry.
    pub backoff: Duration,
    pub max_in_flight: usize,
    pub auth: ApiAuth,
    /// ACI: the switch's (pod, node) at its APIC, which a call's path and
    /// body name as `{pod}` and `{node}`.
    pub place: Option<(u32, u32)>,
}

/// How a call proves who it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApiAuth {
    /// HTTP Basic on every call (eAPI, NX-API).
    Basic,
    /// The APIC's session: `POST /api/aaaLogin.json` once, then the token
    /// as the `APIC-cookie` cookie, refreshed (`/api/aaaRefresh.json`)
    /// before its `refreshTimeoutSeconds` run out and logged in again past
    /// `maximumLifetimeSeconds` or after a 403 (an expired session).
    ApicLogin,
}

/// An APIC session token and when to refresh or replace it.
#[derive(Debug, Clone)]
struct Token {
    value: String,
    refresh_at: std::time::Instant,
    expires_at: std::time::Instant,
}

/// Why a call did not get an answer to read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{switch}: {call}: {kind}")]
pub struct ApiError {
    pub switch: String,
    /// `POST /command-api (show version, …)`.
    pub call: String,
    pub kind: ApiErrorKind,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ApiErrorKind {
    #[error("the password could not be read: {0}")]
    Secret(String),
    #[error("the CA file {0}")]
    CaFile(String),
    #[error("TLS failed: {0} (give the switch's CA in api.ca_file, or api.insecure: true to skip verification)")]
    Tls(String),
    #[error("could not connect: {0}")]
    Connect(String),
    #[error("no answer within {0:?}")]
    Timeout(Duration),
    #[error("HTTP {code} {reason}{}", if .excerpt.is_empty() { String::new() } else { format!(": {}", .excerpt) })]
    Status {
        code: u16,
        reason: String,
        excerpt: String,
    },
    #[error("the answer could not be read: {0}")]
    Body(String),
    /// A request rocegate built wrong (a character HTTP does not allow in
    /// a URI): never sent, and not the switch's fault.
    #[error("the request could not be built (a rocegate bug; please report it): {0}")]
    Request(String),
}

impl ApiErrorKind {
    /// Worth another try: the switch was busy or the connection dropped.
    fn transient(&self) -> bool {
        match self {
            ApiErrorKind::Status { code, .. } => (500..600).contains(code),
            ApiErrorKind::Connect(m) => {
                m.contains("reset") || m.contains("broken pipe") || m.contains("aborted")
            }
            _ => false,
        }
    }
}

/// A counting gate: at most `n` holders at once.
#[derive(Debug)]
struct Gate {
    free: Mutex<usize>,
    cv: Condvar,
}

struct Held<'a>(&'a Gate);

impl Gate {
    fn new(n: usize) -> Gate {
        Gate {
            free: Mutex::new(n.max(1)),
            cv: Condvar::new(),
        }
    }

    fn enter(&self) -> Held<'_> {
        let mut free = self.free.lock().unwrap_or_else(|p| p.into_inner());
        while *free == 0 {
            free = self.cv.wait(free).unwrap_or_else(|p| p.into_inner());
        }
        *free -= 1;
        Held(self)
    }
}

impl Drop for Held<'_> {
    fn drop(&mut self) {
        let mut free = self.0.free.lock().unwrap_or_else(|p| p.into_inner());
        *free += 1;
        self.0.cv.notify_one();
    }
}

/// One switch's HTTPS client: its TLS settings, its kept-alive
/// connections and its cap on calls in flight. Cheap to clone.
#[derive(Clone)]
pub struct ApiClient {
    target: Arc<ApiTarget>,
    agent: ureq::Agent,
    gate: Arc<Gate>,
    token: Arc<Mutex<Option<Token>>>,
}

impl std::fmt::Debug for ApiClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ApiClient")
            .field("target", &self.target)
            .finish()
    }
}

/// What the switch answered: status and body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reply {
    pub status: u16,
    pub body: String,
}

impl ApiClient {
    pub fn new(target: ApiTarget) -> Result<ApiClient, ApiError> {
        let fail = |kind| ApiError {
            switch: target.switch.clone(),
            call: "TLS setup".into(),
            kind,
        };
        let mut tls = ureq::tls::TlsConfig::builder();
        if target.insecure {
            eprintln!(
                "rocegate: {}: api.insecure: the switch's TLS certificate is NOT verified",
                target.switch
            );
            tls = tls.disable_verification(true);
        } else if let Some(ca) = &target.ca_file {
            let pem = std::fs::read(ca)
                .map_err(|e| fail(ApiErrorKind::CaFile(format!("{}: {e}", ca.display()))))?;
            let certs: Vec<ureq::tls::Certificate<'static>> = ureq::tls::parse_pem(&pem)
                .filter_map(|item| match item {
                    Ok(ureq::tls::PemItem::Certificate(c)) => Some(c),
                    _ => None,
                })
                .collect();
            if certs.is_empty() {
                return Err(fail(ApiErrorKind::CaFile(format!(
                    "{}: holds no PEM certificate",
                    ca.display()
                ))));
            }
            tls = tls.root_certs(ureq::tls::RootCerts::new_with_certs(&certs));
        }
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .tls_config(tls.build())
            .timeout_connect(Some(target.connect_timeout))
            .timeout_global(Some(target.request_timeout))
            .http_status_as_error(false)
            .max_redirects(0)
            .max_idle_connections_per_host(target.max_in_flight.max(1))
            .user_agent(concat!("rocegate/", env!("CARGO_PKG_VERSION")))
            .build()
            .into();
        Ok(ApiClient {
            gate: Arc::new(Gate::new(target.max_in_flight)),
            target: Arc::new(target),
            agent,
            token: Arc::new(Mutex::new(None)),
        })
    }

    pub fn target(&self) -> &ApiTarget {
        &self.target
    }

    /// POSTs `body` to `path`; `what` names the call in messages (the
    /// commands it carries). Any HTTP status is a [`Reply`] except 5xx,
    /// which is retried and then an error; 401 and 403 are errors too.
    pub fn post(
        &self,
        path: &str,
        content_type: &str,
        body: &str,
        what: &str,
    ) -> Result<Reply, ApiError> {
        self.call("POST", path, content_type, body, what)
    }

    /// [`ApiClient::post`] with any method (`GET`, `DELETE` for the APIC).
    pub fn call(
        &self,
        method: &str,
        path: &str,
        content_type: &str,
        body: &str,
        what: &str,
    ) -> Result<Reply, ApiError> {
        let call = format!("{method} {path} ({what})");
        let err = |kind| ApiError {
            switch: self.target.switch.clone(),
            call: call.clone(),
            kind,
        };
        let _held = self.gate.enter();
        let mut relogged = false;
        loop {
            let auth = self.credential().map_err(err)?;
            match self.send(method, path, content_type, body, Some(&auth)) {
                // An APIC session that expired early: log in again, once.
                Err(ApiErrorKind::Status { code: 403, .. })
                    if self.target.auth == ApiAuth::ApicLogin && !relogged =>
                {
                    *self.token.lock().unwrap_or_else(|p| p.into_inner()) = None;
                    relogged = true;
                }
                other => return other.map_err(err),
            }
        }
    }

    /// The header that proves who the call is from.
    fn credential(&self) -> Result<(&'static str, String), ApiErrorKind> {
        let secret = read_secret(&self.target.secret).map_err(ApiErrorKind::Secret)?;
        match self.target.auth {
            ApiAuth::Basic => Ok((
                "Authorization",
                format!(
                    "Basic {}",
                    crate::encode::base64(format!("{}:{secret}", self.target.user).as_bytes())
                ),
            )),
            ApiAuth::ApicLogin => {
                let mut t = self.token.lock().unwrap_or_else(|p| p.into_inner());
                let now = std::time::Instant::now();
                let fresh = match t.as_ref() {
                    Some(tok) if now < tok.refresh_at => None,
                    Some(tok) if now < tok.expires_at => {
                        // Refresh; a refused refresh falls back to a login.
                        let cookie = ("Cookie", format!("APIC-cookie={}", tok.value));
                        let refreshed = self
                            .send(
                                "GET",
                                "/api/aaaRefresh.json",
                                "application/json",
                                "",
                                Some(&cookie),
                            )
                            .ok()
                            .and_then(|r| token_of(&r.body, now).ok());
                        match refreshed {
                            Some(r) => Some(r),
                            None => Some(self.login(&secret, now)?),
                        }
                    }
                    _ => Some(self.login(&secret, now)?),
                };
                if let Some(f) = fresh {
                    *t = Some(f);
                }
                let value = t.as_ref().map(|k| k.value.clone()).unwrap_or_default();
                Ok(("Cookie", format!("APIC-cookie={value}")))
            }
        }
    }

    fn login(&self, secret: &str, now: std::time::Instant) -> Result<Token, ApiErrorKind> {
        let body = serde_json::json!({"aaaUser": {"attributes": {
            "name": self.target.user, "pwd": secret}}})
        .to_string();
        // The login carries the password in its body, so it is never
        // retried on its own and never quoted.
        let r = self
            .send(
                "POST",
                "/api/aaaLogin.json",
                "application/json",
                &body,
                None,
            )
            .map_err(|k| match k {
                ApiErrorKind::Status { code, reason, .. } => ApiErrorKind::Status {
                    code,
                    reason: format!(
                        "{reason}: aaaLogin refused: check api.user and the password it references"
                    ),
                    excerpt: String::new(),
                },
                other => other,
            })?;
        token_of(&r.body, now).map_err(ApiErrorKind::Body)
    }

    /// One request, retried on 5xx and reset connections.
    fn send(
        &self,
        method: &str,
        path: &str,
        content_type: &str,
        body: &str,
        auth: Option<&(&'static str, String)>,
    ) -> Result<Reply, ApiErrorKind> {
        let url = format!("{}{path}", self.target.base);
        let mut wait = self.target.backoff;
        let mut attempt = 0;
        loop {
            let sent = match (method, auth) {
                ("GET", Some((n, v))) => self
                    .agent
                    .get(&url)
                    .header("Content-Type", content_type)
                    .header(*n, v)
                    .call(),
                ("DELETE", Some((n, v))) => self
                    .agent
                    .delete(&url)
                    .header("Content-Type", content_type)
                    .header(*n, v)
                    .call(),
                (_, Some((n, v))) => self
                    .agent
                    .post(&url)
                    .header("Content-Type", content_type)
                    .header(*n, v)
                    .send(body),
                // A login: the credentials are in the body.
                (_, None) => self
                    .agent
                    .post(&url)
                    .header("Content-Type", content_type)
                    .send(body),
            };
            let kind = match sent {
                Ok(mut resp) => {
                    let status = resp.status();
                    let text = resp
                        .body_mut()
                        .with_config()
                        .limit(BODY_LIMIT)
                        .read_to_string();
                    match (status.as_u16(), text) {
                        (code @ (401 | 403), t) => ApiErrorKind::Status {
                            code,
                            reason: format!(
                                "{}: check api.user and the password it references{}",
                                status.canonical_reason().unwrap_or(""),
                                if code == 403 {
                                    ", and the account's privilege"
                                } else {
                                    ""
                                }
                            ),
                            excerpt: t.map(|t| excerpt(&t)).unwrap_or_default(),
                        },
                        (code, t) if (500..600).contains(&code) => ApiErrorKind::Status {
                            code,
                            reason: status.canonical_reason().unwrap_or("").to_string(),
                            excerpt: t.map(|t| excerpt(&t)).unwrap_or_default(),
                        },
                        (code, Ok(body)) => return Ok(Reply { status: code, body }),
                        (_, Err(e)) => ApiErrorKind::Body(e.to_string()),
                    }
                }
                Err(e) => classify(&e, self.target.request_timeout),
            };
            if attempt < self.target.retries && kind.transient() {
                attempt += 1;
                std::thread::sleep(wait);
                wait = wait.saturating_mul(2);
                continue;
            }
            return Err(kind);
        }
    }
}

/// The token of an `aaaLogin` (or `aaaRefresh`) answer, refreshed a
/// margin before its `refreshTimeoutSeconds` and replaced before its
/// `maximumLifetimeSeconds` (both strings, as the APIC writes numbers).
fn token_of(body: &str, now: std::time::Instant) -> Result<Token, String> {
    let v: serde_json::Value = serde_json::from_str(body)
        .map_err(|e| format!("the APIC's aaaLogin answer is not JSON ({e})"))?;
    let a = v
        .pointer("/imdata/0/aaaLogin/attributes")
        .ok_or_else(|| format!("the APIC's answer has no aaaLogin: {}", excerpt(body)))?;
    let value = a
        .get("token")
        .and_then(|t| t.as_str())
        .filter(|t| !t.is_empty())
        .ok_or("the APIC's aaaLogin has no token")?
        .to_string();
    let secs = |k: &str, default: u64| -> u64 {
        match a.get(k) {
            Some(serde_json::Value::String(s)) => s.trim().parse().unwrap_or(default),
            Some(serde_json::Value::Number(n)) => n.as_u64().unwrap_or(default),
            _ => default,
        }
    };
    let refresh = secs("refreshTimeoutSeconds", 300);
    let life = secs("maximumLifetimeSeconds", 86_400);
    // Refresh at two thirds of the timeout; replace a minute before the end.
    Ok(Token {
        value,
        refresh_at: now + Duration::from_secs(refresh * 2 / 3),
        expires_at: now + Duration::from_secs(life.saturating_sub(60).max(1)),
    })
}

/// What went wrong below HTTP, in a person's words.
fn classify(e: &ureq::Error, timeout: Duration) -> ApiErrorKind {
    match e {
        ureq::Error::Timeout(_) => ApiErrorKind::Timeout(timeout),
        ureq::Error::Tls(m) => ApiErrorKind::Tls(m.to_string()),
        ureq::Error::Rustls(r) => ApiErrorKind::Tls(r.to_string()),
        ureq::Error::Http(h) => ApiErrorKind::Request(h.to_string()),
        ureq::Error::Io(io) => {
            let m = io.to_string();
            // rustls reports a certificate it rejects as an io error
            // wrapping its own.
            if m.contains("certificate") || m.contains("UnknownIssuer") {
                ApiErrorKind::Tls(m)
            } else {
                let kind = match io.kind() {
                    std::io::ErrorKind::ConnectionReset => "connection reset",
                    std::io::ErrorKind::ConnectionAborted => "connection aborted",
                    std::io::ErrorKind::BrokenPipe => "broken pipe",
                    std::io::ErrorKind::ConnectionRefused => "connection refused",
                    std::io::ErrorKind::TimedOut => return ApiErrorKind::Timeout(timeout),
                    _ => "",
                };
                ApiErrorKind::Connect(if kind.is_empty() {
                    m
                } else {
                    format!("{kind}: {m}")
                })
            }
        }
        ureq::Error::HostNotFound => ApiErrorKind::Connect("host not found".into()),
        ureq::Error::ConnectionFailed => ApiErrorKind::Connect("connection failed".into()),
        other => ApiErrorKind::Connect(other.to_string()),
    }
}

/// The secret a reference points at: an environment variable's value, or
/// a file's first line. Errors name the reference, never a value.
pub fn read_secret(c: &Credentials) -> Result<String, String> {
    match c {
        Credentials::Env(var) => std::env::var(var)
            .map_err(|_| format!("environment variable {var} is not set"))
            .and_then(|v| {
                if v.is_empty() {
                    Err(format!("environment variable {var} is empty"))
                } else {
                    Ok(v)
                }
            }),
        Credentials::File(path) => {
            let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
            let line = text.lines().next().unwrap_or("").trim_end_matches('\r');
            if line.is_empty() {
                Err(format!("{path} is empty"))
            } else {
                Ok(line.to_string())
            }
        }
    }
}

/// The first 300 characters of an answer, on one line, for a message.
fn excerpt(text: &str) -> String {
    let one: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match one.char_indices().nth(300) {
        Some((i, _)) => format!("{}…", &one[..i]),
        None => one,
    }
}

impl ApiTarget {
    /// How the inventory says `sw` is called, or what it lacks.
    pub fn of(sw: &crate::config::model::Switch) -> Result<ApiTarget, String> {
        let api = sw.api.as_ref().ok_or_else(|| {
            format!(
                "{} ({}) is reached over HTTPS: give its switch group api: {{user: …}} and credentials",
                sw.name,
                sw.driver.name()
            )
        })?;
        let secret = sw.credentials.clone().ok_or_else(|| {
            format!(
                "{}: api needs credentials: {{env: VAR}} or {{file: PATH}}",
                sw.name
            )
        })?;
        // An IPv6 literal goes in brackets in a URL.
        let host = if sw.address.contains(':') {
            format!("[{}]", sw.address)
        } else {
            sw.address.clone()
        };
        Ok(ApiTarget {
            switch: sw.name.clone(),
            base: format!("https://{host}:{}", api.port.unwrap_or(443)),
            user: api.user.clone(),
            secret,
            ca_file: api.ca_file.as_ref().map(PathBuf::from),
            insecure: api.insecure,
            connect_timeout: Duration::from_secs(10),
            request_timeout: api.timeout.map_or(Duration::from_secs(30), |t| t.0),
            retries: 2,
            backoff: Duration::from_millis(500),
            max_in_flight: api.max_in_flight.unwrap_or(4),
            place: api.node.map(|n| (api.pod.unwrap_or(1), n)),
            auth: if sw.driver.session_login() {
                ApiAuth::ApicLogin
            } else {
                ApiAuth::Basic
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::inventory::{ApiSpec, SwitchDriver, SwitchRole};
    use crate::config::model::Switch;

    fn switch(address: &str, api: Option<ApiSpec>) -> Switch {
        Switch {
            name: "spine1".into(),
            role: SwitchRole::Spine,
            driver: SwitchDriver::Eos,
            address: address.into(),
            credentials: Some(Credentials::Env("EAPI_PASSWORD".into())),
            api,
            rail: None,
            links: Vec::new(),
        }
    }

    #[test]
    fn a_target_comes_from_the_inventory_with_its_defaults() {
        let spec = ApiSpec {
            user: "rocegate".into(),
            port: None,
            ca_file: Some("/etc/rocegate/ca.pem".into()),
            insecure: false,
            timeout: None,
            max_in_flight: None,
            pod: None,
            node: None,
        };
        let t = ApiTarget::of(&switch("10.0.0.1", Some(spec.clone()))).expect("a target");
        assert_eq!(t.auth, ApiAuth::Basic);
        assert_eq!(t.base, "https://10.0.0.1:443");
        assert_eq!(t.user, "rocegate");
        assert_eq!(t.request_timeout, Duration::from_secs(30));
        assert_eq!(t.max_in_flight, 4);
        assert_eq!(t.ca_file, Some(PathBuf::from("/etc/rocegate/ca.pem")));
        let v6 = ApiTarget::of(&switch(
            "fd00::1",
            Some(ApiSpec {
                port: Some(8443),
                ..spec
            }),
        ))
        .expect("a target");
        assert_eq!(v6.base, "https://[fd00::1]:8443");
        let e = ApiTarget::of(&switch("10.0.0.1", None)).expect_err("no api");
        assert!(e.contains("spine1 (eos) is reached over HTTPS"), "{e}");
    }

    #[test]
    fn only_a_busy_switch_or_a_dropped_connection_is_worth_a_retry() {
        let status = |code| ApiErrorKind::Status {
            code,
            reason: String::new(),
            excerpt: String::new(),
        };
        assert!(status(503).transient());
        assert!(!status(401).transient());
        assert!(!status(404).transient());
        assert!(ApiErrorKind::Connect("connection reset: by peer".into()).transient());
        assert!(!ApiErrorKind::Connect("connection refused: x".into()).transient());
        assert!(!ApiErrorKind::Timeout(Duration::from_secs(1)).transient());
    }

    #[test]
    fn a_secret_is_read_from_its_reference_and_never_shown() {
        let dir = std::env::temp_dir().join(format!("rocegate-secret-{}", std::process::id()));
        std::fs::write(&dir, "hunter2\nsecond line\n").expect("write");
        let c = Credentials::File(dir.display().to_string());
        assert_eq!(read_secret(&c).expect("read"), "hunter2");
        std::fs::write(&dir, "\n").expect("write");
        let e = read_secret(&c).expect_err("empty");
        assert!(e.ends_with("is empty"), "{e}");
        let _ = std::fs::remove_file(&dir);
        let e =
            read_secret(&Credentials::Env("ROCEGATE_NO_SUCH_VAR_4711".into())).expect_err("unset");
        assert_eq!(
            e,
            "environment variable ROCEGATE_NO_SUCH_VAR_4711 is not set"
        );
    }
}
