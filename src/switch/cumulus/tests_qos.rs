//! The RoCE QoS parsers on NVIDIA's published captures (text, turned into
//! NVUE's tree) and on JSON written from the same rows.

use super::*;

fn fixture(name: &str) -> String {
    let p = format!(
        "{}/tests/fixtures/public/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{p}: {e}"))
}

/// swp16 of the Cumulus 5.14 RoCE page: PFC on 3 both ways, ECN on
/// traffic classes 0 and 3 from 153.00 KB to 1.43 MB (NVUE's binary
/// units, rounded: 156 672 and 1 499 464 bytes), trust pcp,dscp.
#[test]
fn roce_status_of_the_public_capture() {
    let st = parse_roce_status(&fixture(
        "nvue-show-interface-qos-roce-status-swp16-cl514-docs.txt",
    ))
    .unwrap();
    assert_eq!(st.mode.as_deref(), Some("lossless"));
    assert_eq!(st.trust.as_deref(), Some("pcp,dscp"));
    let mut want = [false; 8];
    want[3] = true;
    assert_eq!(st.pfc, Some(want));
    let ecn = st.ecn.unwrap();
    assert_eq!(ecn.len(), 2);
    assert_eq!((ecn[0].tc, ecn[1].tc), (0, 3));
    assert_eq!(ecn[1].min_bytes, 156_672);
    assert_eq!(ecn[1].max_bytes, 1_499_464);
    assert!(ecn[1].ecn);
    assert!(st.missing.is_empty(), "{:?}", st.missing);
}

#[test]
fn the_switch_wide_roce_object_and_its_dscp_map() {
    let text = fixture("nvue-show-qos-roce-cl514-docs.txt");
    let st = parse_roce_status(&text).unwrap();
    assert_eq!(st.mode.as_deref(), Some("lossless-single-ipool"));
    assert_eq!(st.ecn.as_ref().unwrap()[0].min_bytes, 149_996);
    let m = parse_dscp_map(&text).unwrap();
    assert_eq!(m.len(), 64);
    assert_eq!(m[&26].priority, Some(3));
    assert_eq!(m[&26].class, "switch-priority 3");
    assert_eq!(m[&48].priority, Some(6));
    assert_eq!(m[&63].priority, Some(7));
}

/// The same rows as JSON (`-o json`; no public capture: written from the
/// rows above), numbers as numbers, a DSCP list as an array.
#[test]
fn json_of_the_same_tree() {
    let j = r#"{"mode":"lossless","pfc":{"pfc-priority":3,"rx-enabled":"yes","tx-enabled":"no"},
      "congestion-control":{"congestion-mode":"ecn, absolute","enabled-tc":[3],"min-threshold":150000,"max-threshold":1500000,"probability":100},
      "trust":{"trust-mode":"dscp"},
      "prio-map":{"roce":{"pcp":3,"dscp":[26],"switch-prio":3},"cnp":{"pcp":6,"dscp":"48","switch-prio":"6"}}}"#;
    let st = parse_roce_status(j).unwrap();
    // PFC sent but not honoured (tx off): not enabled.
    assert_eq!(st.pfc, Some([false; 8]));
    assert_eq!(
        st.ecn.unwrap(),
        vec![EcnQueue {
            tc: 3,
            min_bytes: 150_000,
            max_bytes: 1_500_000,
            ecn: true
        }]
    );
    let m = parse_dscp_map(j).unwrap();
    assert_eq!(m.keys().copied().collect::<Vec<_>>(), vec![26, 48]);
    // Trust pcp only: no DSCP is classified.
    let pcp = j.replace(r#""trust-mode":"dscp""#, r#""trust-mode":"pcp""#);
    assert!(parse_dscp_map(&pcp).unwrap().is_empty());
}

/// Absent parts are said missing, never zero; a lossy profile has no PFC.
#[test]
fn absent_parts_are_missing_not_zero() {
    let st = parse_roce_status(r#"{"mode":"lossless"}"#).unwrap();
    assert_eq!((st.pfc, st.ecn), (None, None));
    assert_eq!(st.missing.len(), 2);
    let st = parse_roce_status(r#"{"mode":"lossy"}"#).unwrap();
    assert_eq!(st.pfc, Some([false; 8]));
    assert!(parse_dscp_map(r#"{"mode":"lossless"}"#).is_err());
    for bad in [
        "",
        "Error: The requested item does not exist.",
        "{\"pfc\":",
        "[1]",
    ] {
        assert!(parse_roce_status(bad).is_err(), "{bad:?}");
        assert!(parse_roce_counters(bad).is_err(), "{bad:?}");
    }
    let e =
        parse_roce_status(r#"{"pfc":{"pfc-priority":9,"rx-enabled":"yes","tx-enabled":"yes"}}"#)
            .unwrap_err();
    assert!(e.0.contains("pfc-priority 9"), "{e:?}");
}

/// swp16's RoCE counters: ECN marks, pauses and RoCE discards as canonical
/// readings; sizes NVUE rounded into a unit are not counts.
#[test]
fn roce_counters_of_the_public_capture() {
    let r = parse_roce_counters(&fixture(
        "nvue-show-interface-qos-roce-counters-swp16-cl514-docs.txt",
    ))
    .unwrap();
    let get = |c: Canonical| {
        r.readings
            .iter()
            .find(|x| x.canonical == c)
            .map(|x| x.value)
    };
    assert_eq!(get(Canonical::EcnMarked), Some(693_777_677_344));
    assert_eq!(get(Canonical::PfcPauseRx), Some(0));
    assert_eq!(get(Canonical::PfcPauseTx), Some(0));
    assert_eq!(get(Canonical::Drops), Some(663_060_754_115));
    assert_eq!(get(Canonical::Discards), Some(0));
    assert_eq!(
        r.other["tx-stats.tx-roce-stats.roce-packets"],
        803_785_675_319
    );
    assert_eq!(r.other["rx-stats.rx-non-roce-stats.buffer-max-usage"], 144);
    assert!(r
        .not_available
        .contains(&"tx-stats.tx-roce-stats.roce-bytes".to_string()));
    // JSON with a key missing: that key is not available, not 0.
    let j = r#"{"rx-stats":{"rx-pfc-stats":{"pause-packets":7}},"tx-stats":{"tx-pfc-stats":{"pause-packets":9}}}"#;
    let r = parse_roce_counters(j).unwrap();
    assert_eq!(r.readings.len(), 2);
    assert!(r
        .not_available
        .contains(&"tx-stats.tx-ecn-stats.ecn-marked-packets".to_string()));
}

proptest::proptest! {
    #[test]
    fn garbage_never_panics(s in ".{0,400}") {
        let _ = parse_roce_status(&s);
        let _ = parse_dscp_map(&s);
        let _ = parse_roce_counters(&s);
    }

    #[test]
    fn a_cut_capture_never_panics(n in 0usize..3000) {
        for f in [
            "nvue-show-qos-roce-cl514-docs.txt",
            "nvue-show-interface-qos-roce-counters-swp16-cl514-docs.txt",
        ] {
            let t = fixture(f);
            let cut: String = t.chars().take(n).collect();
            let _ = parse_roce_status(&cut);
            let _ = parse_dscp_map(&cut);
            let _ = parse_roce_counters(&cut);
        }
    }
}
