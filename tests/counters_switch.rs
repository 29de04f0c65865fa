//! The `linux` switch parsers (mlxsw `ethtool -S`, `ip -j link`, `dcb pfc`,
//! `tc qdisc`) on every real output in `tests/fixtures/switch_linux/`, and
//! on garbage and truncated text, where they must answer `Ok` or `Err` and
//! never panic; and the `linux` platform's configuration read
//! (`ethtool` link settings included) on the same garbage.

use proptest::prelude::*;

use rocegate::counters::Canonical;
use rocegate::switch::linux::config::parse_ethtool_link;
use rocegate::switch::linux::counters::{
    parse_dcb_pfc, parse_ethtool_stats, parse_ip_link_json, parse_tc_qdisc,
};
use rocegate::switch::{linux::Linux, Answer, Platform};

fn fixture(name: &str) -> String {
    let path = format!(
        "{}/tests/fixtures/switch_linux/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

const ETHTOOL: &[&str] = &["ethtool-S-mlxsw-swp31-spectrum.txt", "ethtool-S-veth.txt"];
const IP: &[&str] = &[
    "ip-s-s-j-link-show-veth.json",
    "ip-s-j-link-show-dev-veth-up.json",
    "ip-s-j-link-show-dev-veth-nocarrier.json",
    "ip-s-j-link-show-dev-veth-admindown.json",
    "ip-s-s-j-link-show-dev-veth-admindown.json",
];
const DCB: &[&str] = &[
    "dcb-pfc-show-kernel-doc-prio6-7.txt",
    "dcb-pfc-show-requests-indications-kernel-doc.txt",
];
const TC: &[&str] = &["tc-s-qdisc-show-dev-veth-htb.txt"];

#[test]
fn every_fixture_parses() {
    for f in ETHTOOL {
        parse_ethtool_stats(&fixture(f)).unwrap_or_else(|e| panic!("{f}: {e}"));
    }
    for f in IP {
        let links = parse_ip_link_json(&fixture(f)).unwrap_or_else(|e| panic!("{f}: {e}"));
        assert_eq!(links.len(), 1, "{f}");
        assert_eq!(links[0].ifname, "va", "{f}");
    }
    for f in DCB {
        parse_dcb_pfc(&fixture(f)).unwrap_or_else(|e| panic!("{f}: {e}"));
    }
    for f in TC {
        parse_tc_qdisc(&fixture(f)).unwrap_or_else(|e| panic!("{f}: {e}"));
    }
}

#[test]
fn mlxsw_fixture_values() {
    let rs = parse_ethtool_stats(&fixture("ethtool-S-mlxsw-swp31-spectrum.txt")).unwrap();
    let get = |vendor: &str| rs.iter().find(|r| r.vendor == vendor).unwrap();
    assert_eq!(get("a_octets_received_ok").value, 319_786_790_393_748);
    assert_eq!(get("a_octets_received_ok").canonical, Canonical::RxBytes);
    let rx0 = get("rx_frames_prio_0");
    assert_eq!(
        (rx0.canonical, rx0.priority, rx0.value),
        (Canonical::RxPackets, Some(0), 63_917_145_378)
    );
    let tx7 = get("tx_frames_prio_7");
    assert_eq!((tx7.priority, tx7.value), (Some(7), 26_562_412));
    assert_eq!(get("ecn_marked").canonical, Canonical::EcnMarked);
    let q12 = get("tc_no_buffer_discard_uc_tc_12");
    assert_eq!(
        (q12.canonical, q12.queue, q12.value),
        (Canonical::Drops, Some(12), 0)
    );
    // Pause counters are there and zero: "not available" is not what this is.
    assert_eq!(get("rx_pause_prio_3").value, 0);
    assert_eq!(
        get("tx_pause_duration_prio_3").canonical,
        Canonical::PfcPauseDurationTxUs
    );
}

#[test]
fn dcb_error_output_is_an_error() {
    let e = parse_dcb_pfc(&fixture("dcb-pfc-show-dev-veth-unsupported.stderr.txt")).unwrap_err();
    assert!(e.to_string().starts_with("dcb pfc show:"), "{e}");
}

fn all_fixtures() -> Vec<String> {
    ETHTOOL
        .iter()
        .chain(IP)
        .chain(DCB)
        .chain(TC)
        .map(|f| fixture(f))
        .collect()
}

fn run_all(text: &str) {
    let _ = parse_ethtool_stats(text);
    let _ = parse_ip_link_json(text);
    let _ = parse_dcb_pfc(text);
    let _ = parse_tc_qdisc(text);
    let _ = parse_ethtool_link(text);
    // The audit's configuration read, every answer this text.
    let ports = vec!["swp1".to_string()];
    let answers = vec![
        Answer {
            exit: Some(0),
            text: text.to_string()
        };
        5
    ];
    let _ = Linux.parse_config("leaf1", &ports, &answers);
}

#[test]
fn every_prefix_of_every_fixture() {
    for text in all_fixtures() {
        for at in (0..=text.len()).filter(|&i| text.is_char_boundary(i)) {
            run_all(&text[..at]);
        }
    }
}

proptest! {
    #[test]
    fn garbage_never_panics(text in "\\PC*") {
        run_all(&text);
    }

    #[test]
    fn shaped_garbage_never_panics(
        lines in proptest::collection::vec(
            prop_oneof![
                Just("NIC statistics:".to_string()),
                Just("Settings for swp1:".to_string()),
                "\t(Speed|Link detected|Duplex): ([0-9]{0,7}Mb/s|yes|no|Unknown!)?",
                "     [a-z_]{1,30}_[0-9]{1,3}: [0-9]{0,25}",
                "qdisc (red|ets|prio|htb) [0-9a-f]{0,3}:? (root|parent [0-9a-f]{0,2}:[0-9a-f]{0,3}) (offloaded )?(limit|min|max|probability|ewma|Plog)? ?[0-9eE+.-]{0,8}(b|Kb|Mb|Gb)?",
                "  marked [0-9]{0,21} early -?[0-9]{0,3} pdrop [0-9]{0,3} other",
                " Sent [0-9]{0,21} bytes [0-9]{0,5} pkt \\(dropped [0-9]{0,3}, overlimits [0-9]{0,3} requeues [0-9]\\) ",
                "(prio-pfc|requests|indications|pfc-cap|delay|macsec-bypass)( [0-9]{0,3}:?[a-z0-9]{0,4}){0,9}",
                "\\[\\{\"ifname\":\"swp[0-9]\",\"flags\":\\[\"UP\"\\],\"mtu\":-?[0-9]{0,11},\"stats64\":\\{\"rx\":\\{\"bytes\":[0-9]{0,21}\\},\"tx\":\\{\\}\\}\\}\\]",
            ],
            0..12,
        )
    ) {
        run_all(&lines.join("\n"));
    }

    #[test]
    fn truncated_fixtures_never_panic(which in 0usize..11, cut in 0.0f64..1.0) {
        let fixtures = all_fixtures();
        let text = &fixtures[which % fixtures.len()];
        let mut at = (text.len() as f64 * cut) as usize;
        while !text.is_char_boundary(at) {
            at -= 1;
        }
        run_all(&text[..at]);
    }
}

/// A counter whose value cannot be one (negative, fractional, above
/// 2^64 − 1, not finite) is an error naming it and why, in every source:
/// never a silent zero, never a panic.
mod impossible_values {
    use super::*;

    fn impossible() -> impl Strategy<Value = (String, &'static str)> {
        prop_oneof![
            (1u64..u64::MAX).prop_map(|v| (format!("-{v}"), "negative")),
            (0u64..1 << 40, 1u32..99).prop_map(|(v, f)| (format!("{v}.{f:02}"), "fractional")),
            (1u32..9).prop_map(|d| (format!("{d}8446744073709551616"), "2^64")),
            Just(("nan".to_string(), "not a finite number")),
        ]
    }

    const TC: &str = "qdisc ets 1: root refcnt 2 bands 8 strict 8 priomap 7 7 7 7 7 7 7 7 7 7 7 7 7 7 7 7\n Sent 100 bytes 2 pkt (dropped 0, overlimits 0 requeues 0)\nqdisc red 18: parent 1:8 limit 400000b min 30000b max 30001b ecn\n Sent 100 bytes 2 pkt (dropped 0, overlimits 0 requeues 0)\n marked MARKED early 0 pdrop 0 other 0\n";

    #[test]
    fn tc_possible_values_are_read() {
        let reds = parse_tc_qdisc(&TC.replace("MARKED", "7")).unwrap();
        assert_eq!(reds[0].marked, Some(7));
    }

    proptest! {
        #[test]
        fn ethtool((tok, why) in impossible()) {
            let text = fixture("ethtool-S-mlxsw-swp31-spectrum.txt")
                .replace("     ecn_marked: 10", &format!("     ecn_marked: {tok}"));
            let e = parse_ethtool_stats(&text).unwrap_err().to_string();
            prop_assert!(e.contains(&format!("(ecn_marked): `{tok}` is not a possible counter value")), "{e}");
            prop_assert!(e.contains(why), "{e}");
        }

        #[test]
        fn tc_xstats((tok, why) in impossible()) {
            let e = parse_tc_qdisc(&TC.replace("MARKED", &tok)).unwrap_err().to_string();
            prop_assert!(e.starts_with(&format!("tc qdisc show: marked: `{tok}`")), "{e}");
            prop_assert!(e.contains(why), "{e}");
        }

        /// `ip -j` values are JSON numbers: serde refuses a negative, a
        /// fraction or one above u64 for a u64 field, and says where.
        #[test]
        fn ip_link_json(v in prop_oneof![
            (1i64..i64::MAX).prop_map(|v| (-v).to_string()),
            (0u32..1000, 1u32..99).prop_map(|(v, f)| format!("{v}.{f:02}")),
            Just("18446744073709551616".to_string()),
            Just("\"12\"".to_string()),
        ]) {
            let text = fixture("ip-s-s-j-link-show-veth.json");
            let at = text.find("\"bytes\":").expect("bytes field");
            let rest = &text[at + 8..];
            let end = rest.find([',', '}']).unwrap();
            let bad = format!("{}\"bytes\":{v}{}", &text[..at], &rest[end..]);
            let e = parse_ip_link_json(&bad).unwrap_err().to_string();
            prop_assert!(e.starts_with("ip -j link show: not the JSON `ip -j` prints"), "{e}");
        }
    }
}
