//! API calls as invocations: how a switch reached over HTTPS (Arista eAPI,
//! NX-API) takes part in a batch like any host.
//!
//! A platform turns its reads and changes into [`Call`]s; [`argv`] wraps one
//! switch's calls into an invocation whose argv is `rocegate-api CALLS`
//! (CALLS: the calls as JSON), so a batch, a fault journal and a raw output
//! carry it like a command line. Whoever answers it (the [`Routed`]
//! transport over HTTPS, or the emulated fabric from its model) runs the
//! calls in order on one connection and prints one [`CallResult`] per call
//! as a JSON list; [`results`] reads that back. A call that got no answer
//! at all (refused credentials, TLS, a timeout, a dropped connection) ends
//! the invocation with an [`ExecFailure`] naming the switch, the call and
//! why; the calls before it keep their answers.

use std::collections::HashMap;
use std::time::Instant;

use serde::{Deserialize, Serialize};

use super::https::{ApiClient, ApiErrorKind, ApiTarget};
use super::transport::{BatchFuture, Cancel, Transport};
use super::types::{ExecFailure, Invocation, InvocationOutput, StepCommands};

/// The first word of an API invocation's argv.
pub const ARGV0: &str = "rocegate-api";

/// One HTTPS request: `METHOD path` with `body`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Call {
    /// `POST` (eAPI, NX-API, an APIC write), `GET` or `DELETE` (APIC).
    #[serde(default = "post", skip_serializing_if = "is_post")]
    pub method: String,
    pub path: String,
    pub content_type: String,
    pub body: String,
    /// The commands it carries, for messages (`show version, show lldp
    /// neighbors detail`).
    pub what: String,
}

fn post() -> String {
    "POST".into()
}

fn is_post(m: &String) -> bool {
    m == "POST"
}

/// What one call came back as.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CallResult {
    pub status: u16,
    pub body: String,
}

/// The argv that carries `calls`.
pub fn argv(calls: &[Call]) -> Vec<String> {
    vec![
        ARGV0.to_string(),
        serde_json::to_string(calls).unwrap_or_default(),
    ]
}

/// The calls an argv carries; `None` for any other command line.
pub fn calls(argv: &[String]) -> Option<Vec<Call>> {
    match argv {
        [first, calls] if first == ARGV0 => serde_json::from_str(calls).ok(),
        _ => None,
    }
}

/// What an API invocation printed, one result per call answered.
pub fn results(stdout: &str) -> Result<Vec<CallResult>, String> {
    serde_json::from_str(stdout.trim())
        .map_err(|e| format!("the API results are not a list of answers ({e})"))
}

/// The stdout of an API invocation.
pub fn print(results: &[CallResult]) -> String {
    serde_json::to_string(results).unwrap_or_default()
}

/// Runs an API invocation with `client`: every call in order, stopping at
/// the first that got no answer.
fn run_calls(client: &ApiClient, calls: &[Call]) -> (Vec<CallResult>, Option<ExecFailure>) {
    let mut out = Vec::new();
    // An APIC call names its switch as `{pod}` and `{node}`.
    let place = |s: &str| match client.target().place {
        Some((pod, node)) => s
            .replace("{pod}", &pod.to_string())
            .replace("{node}", &node.to_string()),
        None => s.to_string(),
    };
    for c in calls {
        let (path, body) = (place(&c.path), place(&c.body));
        match client.call(&c.method, &path, &c.content_type, &body, &c.what) {
            Ok(r) => out.push(CallResult {
                status: r.status,
                body: r.body,
            }),
            Err(e) => {
                let m = e.to_string();
                let f = match e.kind {
                    ApiErrorKind::Status {
                        code: 401 | 403, ..
                    } => ExecFailure::AuthRefused(m),
                    ApiErrorKind::Timeout(_) => ExecFailure::TimedOut(m),
                    ApiErrorKind::Connect(_) => ExecFailure::Unreachable(m),
                    _ => ExecFailure::Transport(m),
                };
                return (out, Some(f));
            }
        }
    }
    (out, None)
}

/// A transport that sends API invocations to their switch over HTTPS and
/// everything else to `inner` (ssh, local).
pub struct Routed {
    inner: Box<dyn Transport>,
    clients: HashMap<String, Result<ApiClient, String>>,
}

impl Routed {
    /// `switches`: every API switch of the inventory, by name. A switch
    /// whose client cannot be built (an unreadable CA file) answers every
    /// call with that error.
    pub fn new(inner: Box<dyn Transport>, switches: Vec<(String, ApiTarget)>) -> Routed {
        let clients = switches
            .into_iter()
            .map(|(name, t)| (name, ApiClient::new(t).map_err(|e| e.to_string())))
            .collect();
        Routed { inner, clients }
    }

    fn api_call(&self, inv: &Invocation) -> Option<(Result<ApiClient, String>, Vec<Call>)> {
        let calls = calls(&inv.argv)?;
        let client = self.clients.get(&inv.host)?.clone();
        Some((client, calls))
    }
}

impl Transport for Routed {
    fn describe(&self) -> String {
        format!("{} + HTTPS to API switches", self.inner.describe())
    }

    fn run_batch<'a>(&'a self, batch: &'a [StepCommands], cancel: Cancel) -> BatchFuture<'a> {
        Box::pin(async move {
            // The inner transport runs what is not an API call; the API
            // calls run beside it, each from its own `at`.
            let mut rest: Vec<StepCommands> = Vec::new();
            let mut api = Vec::new();
            for (s, step) in batch.iter().enumerate() {
                let mut kept = Vec::new();
                for (i, inv) in step.invocations.iter().enumerate() {
                    match self.api_call(inv) {
                        Some(c) => api.push((s, i, inv.clone(), c)),
                        None => kept.push(inv.clone()),
                    }
                }
                rest.push(StepCommands { invocations: kept });
            }
            let start = Instant::now();
            let base_s = self.inner.now_s();
            let mut jobs = Vec::new();
            for (s, i, inv, (client, calls)) in api {
                let mut cancel = cancel.clone();
                jobs.push(tokio::spawn(async move {
                    let go = tokio::select! {
                        _ = tokio::time::sleep_until((start + inv.at).into()) => true,
                        _ = cancel.wait_for(|c| *c) => false,
                    };
                    let started_s = base_s + start.elapsed().as_secs_f64();
                    let (results, failure) = if !go {
                        (
                            Vec::new(),
                            Some(ExecFailure::Cancelled(
                                "the run was interrupted before it was sent".into(),
                            )),
                        )
                    } else {
                        match client {
                            Err(e) => (Vec::new(), Some(ExecFailure::Transport(e))),
                            Ok(client) => {
                                let limit = inv.limit();
                                let job =
                                    tokio::task::spawn_blocking(move || run_calls(&client, &calls));
                                match tokio::time::timeout(limit, job).await {
                                    Ok(Ok(r)) => r,
                                    Ok(Err(e)) => (
                                        Vec::new(),
                                        Some(ExecFailure::Transport(format!(
                                            "{}: the API call stopped: {e}",
                                            inv.host
                                        ))),
                                    ),
                                    Err(_) => (
                                        Vec::new(),
                                        Some(ExecFailure::TimedOut(format!(
                                            "{}: no answer within {:.0}s",
                                            inv.host,
                                            limit.as_secs_f64()
                                        ))),
                                    ),
                                }
                            }
                        }
                    };
                    let out = InvocationOutput {
                        stdout: print(&results),
                        exit: failure.is_none().then_some(0),
                        failure,
                        started_s,
                        ended_s: base_s + start.elapsed().as_secs_f64(),
                        ..Default::default()
                    };
                    (s, i, out)
                }));
            }
            let inner = self.inner.run_batch(&rest, cancel.clone());
            let mut outs = inner.await;
            let mut api_outs = Vec::new();
            for j in jobs {
                if let Ok(r) = j.await {
                    api_outs.push(r);
                }
            }
            // Put the API outputs back where their invocations were.
            let mut merged: Vec<Vec<InvocationOutput>> = Vec::new();
            for (s, step) in batch.iter().enumerate() {
                let mut inner_outs = std::mem::take(&mut outs[s]).into_iter();
                let mut v = Vec::new();
                for (i, inv) in step.invocations.iter().enumerate() {
                    if self.api_call(inv).is_some() {
                        let o = api_outs
                            .iter()
                            .find(|(ss, ii, _)| *ss == s && *ii == i)
                            .map(|x| x.2.clone())
                            .unwrap_or_else(|| InvocationOutput {
                                failure: Some(ExecFailure::Transport(format!(
                                    "{}: the API call's task ended without an answer",
                                    inv.host
                                ))),
                                ..Default::default()
                            });
                        v.push(o);
                    } else {
                        v.push(inner_outs.next().unwrap_or_default());
                    }
                }
                merged.push(v);
            }
            merged
        })
    }

    fn now_s(&self) -> f64 {
        self.inner.now_s()
    }

    fn set_unreachable(&self, host: &str, why: ExecFailure) {
        self.inner.set_unreachable(host, why)
    }
}
