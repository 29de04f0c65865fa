//! Cisco NX-OS: what rocegate sends to NX-API (`POST /ins`) and how it reads
//! the answers into the crate's canonical types. Pure functions: the HTTPS
//! channel lives in `exec::https`; this module knows request bodies and
//! answer shapes, never a connection.
//!
//! - Requests ([`ins_api_request`], [`jsonrpc_request`]) and answers
//!   ([`parse_ins_api`], [`parse_jsonrpc`]): one [`CommandReply`] per
//!   command, with the errors sorted by what the caller does next (ask again
//!   as text, report the read as not available, name the role it needs).
//! - Structured bodies are `TABLE_x`/`ROW_x` trees whose shape follows the
//!   data: one row is an object and several a list, an empty table is left
//!   out, and a number may be a JSON number or a string, within one object.
//!   [`rows`](fn@rows) and [`counter`] take every form.
//! - Counters ([`parse_interface_counters`], [`parse_counters_errors_json`],
//!   [`parse_pfc_interface_json`], [`parse_queuing_interface`]) carry the
//!   canonical names `linux` gives the same meaning; a counter the switch
//!   does not print is listed as not available, never read as 0.
//! - Prior state and audit: port state and err-disable cause, BGP peers of
//!   every VRF and address family, `show version`, LLDP neighbours (JSON and
//!   text), the PFC/ECN part of `show running-config ipqos`, and
//!   [`switch_config`], which turns those answers into a
//!   [`SwitchConfig`](super::SwitchConfig).
//! - The text parsers of `show interface counters errors` and `show
//!   interface priority-flow-control` read answers taken over SSH or as
//!   `cli_show_ascii`.
//! - [`normalise_port`]: `Eth1/1` (LLDP, text tables), `Ethernet1/1` (JSON)
//!   and `eth1/1` (the DME) name one port.
//!
//! Everything read here is untrusted: nothing panics on it, and an error
//! names what was expected.
//!
//! Laid out as `api` (requests and answers), `rows` (`TABLE_x`/`ROW_x` and
//! counter cells), `counters`, `state` and `qos` (ipqos and the audit
//! view); every public item is re-exported here.

mod api;
mod counters;
mod platform;
mod qos;
mod rows;
mod state;

pub use api::{
    ins_api_request, jsonrpc_request, parse_ins_api, parse_jsonrpc, BadCommand, CliType,
    CommandReply, Reply, ResponseError,
};
pub use counters::{
    parse_counters_errors, parse_counters_errors_json, parse_interface_counters,
    parse_pfc_interface, parse_pfc_interface_json, parse_queuing_interface, PfcPort,
};
pub use platform::Nxos;
pub use qos::{
    parse_interface_settings, parse_running_ipqos, switch_config, ConfigReplies, InterfaceQos,
    InterfaceSettings, NetworkQosClass, QosConfig, QueuingClass, Red, Threshold, CONFIG_COMMANDS,
};
pub use rows::{counter, rows, rows_of, Row};
pub use state::{
    not_established, parse_bgp_summary, parse_err_disabled, parse_lldp_json, parse_lldp_text,
    parse_port_states, parse_version, BgpPeer, PortState, Version,
};

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

/// Fixture loading and the bodies shared by the tests of every part.
#[cfg(test)]
mod testutil {
    use serde_json::Value;

    use super::{parse_jsonrpc, Reply};

    pub(super) const FIX: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/nxos/");

    pub(super) fn fixture(name: &str) -> String {
        std::fs::read_to_string(format!("{FIX}{name}")).unwrap()
    }

    pub(super) fn json(name: &str) -> Value {
        serde_json::from_str(&fixture(name)).unwrap()
    }

    /// The body of a one-command JSON-RPC fixture.
    pub(super) fn rpc_body(name: &str, command: &str) -> Value {
        let r = parse_jsonrpc(&[command], &fixture(name)).unwrap();
        match &r[0].reply {
            Reply::Json(v) => v.clone(),
            other => panic!("{other:?}"),
        }
    }

    // Built from the shape two independent NX-API scripts read (no captured
    // answer was found): TABLE_module/ROW_module/TABLE_pfc_interface.
    pub(super) const PFC_JSON: &str = r#"{"TABLE_module": {"ROW_module": {"module": "1",
        "TABLE_pfc_interface": {"ROW_pfc_interface": [
            {"if_name_str": "Ethernet1/1", "admin": "On", "oper": "On", "rx-stats": "1024", "tx-stats": 7},
            {"if_name_str": "Ethernet1/2", "admin": "Auto", "oper": "Off", "rx-stats": 0}]}}}}"#;
}

// Each part's tests sit in a file of their own: beside their code they
// would make files of 700 lines and more. `rows` keeps its tests.
#[cfg(test)]
mod tests_api;
#[cfg(test)]
mod tests_counters;
#[cfg(test)]
mod tests_qos;
#[cfg(test)]
mod tests_state;

#[cfg(test)]
mod tests {
    use super::*;

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
    use super::testutil::FIX;
    use super::*;
    use proptest::prelude::*;
    use serde_json::Value;

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
