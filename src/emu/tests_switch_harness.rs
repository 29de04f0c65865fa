//! What the emulator's switch-platform tests (`tests_api`, `tests_sonic`,
//! `tests_cumulus`, `tests_aci`) share: invocations built as the harness
//! builds them, a bandwidth pair to put traffic through a leaf, and the
//! answers split and read by a platform's own parsers.

use std::time::Duration;

use crate::counters::{Canonical, Reading};
use crate::exec::types::{Invocation, InvocationOutput, Role, StepCommands};
use crate::switch::{self, Answer, Platform, Query};

/// A probe command line on `host` at `secs`.
pub fn line(host: &str, argv: Vec<String>, secs: f64) -> Invocation {
    Invocation {
        host: host.into(),
        argv,
        env: Vec::new(),
        role: Role::Probe,
        timeout: Duration::from_secs(60),
        at: Duration::from_secs_f64(secs),
    }
}

/// A switch's queries as the one invocation the harness sends, at `secs`.
pub fn batched(host: &str, qs: &[Query], secs: f64) -> Invocation {
    let mut i = switch::invocation(host, qs, Duration::from_secs(60), Duration::ZERO);
    i.at = Duration::from_secs_f64(secs);
    i
}

/// `ib_write_bw` from `client` to `server` for 10 s on rail 0.
pub fn bw_pair(server: &str, client: &str) -> StepCommands {
    let s = "ib_write_bw -d mlx5_0 -x 3 -F --report_gbits -s 1048576 -D 10 -p 18515";
    let words = |l: &str| l.split_whitespace().map(String::from).collect();
    let mut srv = line(server, words(s), 0.0);
    srv.role = Role::Server;
    let mut cli = line(client, words(&format!("{s} {server}.mgmt")), 0.0);
    cli.role = Role::Client;
    StepCommands {
        invocations: vec![srv, cli],
    }
}

/// The answer to each query of `qs`, from the invocation's output.
pub fn answers(qs: &[Query], o: &InvocationOutput) -> Vec<Answer> {
    assert!(o.failure.is_none(), "{o:?}");
    let a = switch::answers(qs, o);
    assert_eq!(a.len(), qs.len());
    a
}

/// The port's own total (not its per-priority or per-queue counts).
pub fn total(r: &[Reading], c: Canonical) -> u64 {
    r.iter()
        .filter(|x| x.canonical == c && x.priority.is_none() && x.queue.is_none())
        .map(|x| x.value)
        .sum()
}

/// Every counter query of `port`, parsed; the readings of each.
pub fn counters(p: &dyn Platform, o: &InvocationOutput, port: &str) -> Vec<Vec<Reading>> {
    let qs = p.counter_queries(port);
    answers(&qs, o)
        .iter()
        .zip(&qs)
        .map(|(a, q)| {
            assert_eq!(a.exit, Some(0), "{}: {}", q.display(), a.text);
            p.parse_counters(port, q, a)
                .unwrap_or_else(|e| panic!("{}: {e}\n{}", q.display(), a.text))
        })
        .collect()
}
