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
//!
//! The envelope is `eapi`, the counters `counters`, the state and audit
//! reads `state`; this file holds the JSON walking they share and
//! [`normalise_port`].
//!
//! [`PortReadings`]: crate::counters::PortReadings

use std::fmt::Display;

use serde_json::{Map, Value};

use crate::counters::{cell, first_line, value, ParseError};
use crate::switch::config::excerpt;

mod counters;
mod eapi;
mod platform;
mod state;

pub use counters::{
    parse_counters_discards, parse_counters_errors, parse_ecn_counters, parse_interfaces_counters,
    parse_pfc_counters, parse_queue_counters_detail, parse_queue_counters_detail_json,
    parse_queue_drops,
};
pub use eapi::{parse_response, request, Command, Format, Reply};
pub use platform::{session_name, Eos};
pub use state::{
    not_established, parse_bgp_summary, parse_config_sessions, parse_errdisable_recovery,
    parse_interfaces_state, parse_interfaces_status, parse_lldp_neighbors_detail, parse_version,
    BgpPeer, ConfigSession, ConfigSessions, EosVersion, ErrdisableRecovery, InterfaceState,
    PendingCommit,
};

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

/// Fixture loading and reading lookups shared by the tests of every part.
#[cfg(test)]
mod testutil {
    use super::{parse_response, Command, Format, Reply};
    use crate::counters::{Canonical, ParseError, PortReadings};

    const FIX: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/eos/");

    pub fn fixture(name: &str) -> String {
        std::fs::read_to_string(format!("{FIX}{name}")).unwrap()
    }

    pub fn port<'a>(ports: &'a [PortReadings], name: &str) -> &'a PortReadings {
        ports.iter().find(|p| p.port == name).unwrap()
    }

    /// The reading `vendor` of `p`, as (canonical, priority, queue, value).
    pub fn read(p: &PortReadings, vendor: &str) -> (Canonical, Option<u8>, Option<u8>, u64) {
        let r = p
            .readings
            .iter()
            .find(|r| r.vendor == vendor)
            .unwrap_or_else(|| panic!("{}: no {vendor} in {:?}", p.port, p.readings));
        (r.canonical, r.priority, r.queue, r.value)
    }

    /// `body` read as the answer to a call with `id` `t`.
    pub fn replies(body: &str, cmds: &[&str], format: Format) -> Result<Vec<Reply>, ParseError> {
        let cmds: Vec<Command> = cmds.iter().map(|c| Command::new(c)).collect();
        parse_response(body, "t", &cmds, format)
    }

    pub fn json_of(r: &Reply) -> String {
        match r {
            Reply::Json(v) => v.to_string(),
            other => panic!("not a JSON reply: {other:?}"),
        }
    }
}

// The counters' and the state reads' tests sit in files of their own:
// beside their code they would make files of 800 lines.
#[cfg(test)]
mod tests_counters;
#[cfg(test)]
mod tests_state;

#[cfg(test)]
mod tests {
    use super::testutil::{fixture, read};
    use super::*;

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
