use super::*;
use crate::counters::Canonical;
use crate::switch::Fact;

fn fixture(name: &str) -> String {
    let p = format!(
        "{}/tests/fixtures/switch/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{p}: {e}"))
}

fn ok(text: impl Into<String>) -> Answer {
    Answer {
        exit: Some(0),
        text: text.into(),
    }
}

#[test]
fn counter_queries_read_raw_and_only_their_port() {
    let qs = Sonic.counter_queries("Ethernet4");
    let shown: Vec<String> = qs.iter().map(Query::display).collect();
    assert_eq!(
        shown,
        [
            "portstat -r -i Ethernet4",
            "env ROCEGATE_PORT=Ethernet4 pfcstat -s all",
            "queuestat -p Ethernet4"
        ]
    );
    let sources: Vec<_> = qs.iter().map(|q| Sonic.counter_source(q)).collect();
    assert_eq!(sources, ["portstat -r", "pfcstat", "queuestat"]);

    // pfcstat prints every port: only Ethernet4's row is read.
    let pfc = Sonic
        .parse_counters(
            &qs[1],
            &ok(fixture("sonic-pfc-counters-utilities-test.txt")),
        )
        .unwrap();
    let rx3 = pfc
        .iter()
        .find(|r| r.canonical == Canonical::PfcPauseRx && r.priority == Some(3))
        .unwrap();
    assert_eq!(rx3.value, 403);
    assert!(pfc.iter().all(|r| r.value != 203 && r.value != 803));

    let port = Sonic
        .parse_counters(
            &qs[0],
            &ok(fixture(
                "sonic-interfaces-counters-period-utilities-test.txt",
            )),
        )
        .unwrap();
    assert!(!port.is_empty());

    // queuestat -p Ethernet8 answers Ethernet8's queues; asked for
    // Ethernet4 it has no row, which is an error, never zeros.
    let q8 = Sonic.counter_queries("Ethernet8");
    let text = fixture("sonic-queue-counters-port-utilities-test.txt");
    let queues = Sonic.parse_counters(&q8[2], &ok(&text)).unwrap();
    assert!(queues
        .iter()
        .any(|r| r.canonical == Canonical::Drops && r.queue == Some(1) && r.value == 68));
    let e = Sonic.parse_counters(&qs[2], &ok(&text)).unwrap_err();
    assert!(e.0.contains("no row for Ethernet4"), "{}", e.0);
    assert!(Sonic
        .parse_counters(&argv(&["show", "version"]), &ok(""))
        .is_err());
}

#[test]
fn ports_compare_by_case_and_space_only() {
    for n in ["Ethernet0", " ethernet0", "ETHERNET0 "] {
        assert_eq!(Sonic.normalise_port(n), "ethernet0", "{n}");
    }
    let once = Sonic.normalise_port("Ethernet12");
    assert_eq!(Sonic.normalise_port(&once), once);
    assert_ne!(
        Sonic.normalise_port("etp1"),
        Sonic.normalise_port("Ethernet0")
    );
    assert_eq!(
        Sonic.lldp_query().display(),
        "docker exec lldp lldpctl -f json0"
    );
    assert!(Sonic.optics_query("Ethernet0").is_none());
    assert!(Sonic.reached_by_argv());
    assert_eq!(
        Platform::needs(&Sonic).counter_interval,
        Duration::from_secs(10)
    );
}

/// A CONFIG_DB dump in `sonic-cfggen -d --print-data`'s shape (tables of
/// keys of string fields), with the lossless-queue settings of SONiC's
/// default RoCE templates (`AZURE_LOSSLESS`, PFC on 3 and 4).
const CONFIG_DB: &str = r#"{
  "PORT": {
    "Ethernet0": {"admin_status": "up", "alias": "etp1", "mtu": "9100", "speed": "400000"},
    "Ethernet8": {"admin_status": "up", "alias": "etp2", "speed": "400000"}
  },
  "PORT_QOS_MAP": {"Ethernet0,Ethernet8": {"pfc_enable": "3,4"}},
  "QUEUE": {
    "Ethernet0|3-4": {"scheduler": "scheduler.0", "wred_profile": "AZURE_LOSSLESS"},
    "Ethernet8|3": {"wred_profile": "[WRED_PROFILE|MISSING]"}
  },
  "WRED_PROFILE": {
    "AZURE_LOSSLESS": {"ecn": "ecn_all", "green_min_threshold": "250000", "green_max_threshold": "2097152", "wred_green_enable": "true"}
  },
  "PFC_WD": {"GLOBAL": {"POLL_INTERVAL": "200"}, "Ethernet0": {"action": "drop", "detection_time": "200", "restoration_time": "200"}}
}"#;

const STATUS: &str = "  Interface            Lanes    Speed    MTU    FEC    Alias    Vlan    Oper    Admin             Type    Asym PFC
-----------  ---------------  -------  -----  -----  -------  ------  ------  -------  ---------------  ----------
  Ethernet0  0,1,2,3,4,5,6,7     400G   9100    N/A     etp1  routed      up       up  QSFP-DD Double         N/A
  Ethernet8  8,9,10,11,12,13     400G   9100    N/A     etp2  routed    down       up  QSFP-DD Double         N/A
";

#[test]
fn the_audit_reads_config_db() {
    let ports = vec!["Ethernet0".to_string(), "Ethernet8".to_string()];
    let qs = Sonic.config_queries(&ports);
    assert_eq!(qs[0].display(), "sudo -n sonic-cfggen -d --print-data");
    let c = Sonic.parse_config(
        "leaf1",
        &ports,
        &[
            ok(CONFIG_DB),
            ok(STATUS),
            ok("build_version: 'SONiC.202311.1'\nasic_type: mellanox\n"),
        ],
    );
    assert_eq!(c.nos_version, Fact::Known("SONiC.202311.1".into()));
    // Ethernet8 has no PFC_WD entry: the watchdog is not on every port.
    assert_eq!(c.pfc_watchdog, Fact::Known(false));
    let e0 = &c.ports[0];
    assert_eq!(e0.link_up, Fact::Known(true));
    assert_eq!(e0.speed_mbps, Fact::Known(400_000));
    assert_eq!(e0.mtu, Fact::Known(9100));
    let mut pfc = [false; 8];
    pfc[3] = true;
    pfc[4] = true;
    assert_eq!(e0.pfc, Fact::Known(pfc));
    let ecn = e0.ecn.known().unwrap();
    assert_eq!(ecn.len(), 2);
    assert_eq!(
        (ecn[0].tc, ecn[0].min_bytes, ecn[0].ecn),
        (3, 250_000, true)
    );
    assert!(matches!(e0.pfc_xoff_bytes, Fact::NotAvailable { .. }));
    let e8 = &c.ports[1];
    assert_eq!(e8.link_up, Fact::Known(false));
    assert_eq!(e8.pfc, Fact::Known(pfc));
    assert!(matches!(&e8.mtu, Fact::NotAvailable { why, .. } if why.contains("no mtu")));
    assert!(matches!(&e8.ecn, Fact::Failed(e) if e.contains("MISSING")));

    // No sudo: every CONFIG_DB fact says why, nothing is invented.
    let c = Sonic.parse_config(
        "leaf1",
        &ports,
        &[
            Answer {
                exit: Some(1),
                text: "sudo: a password is required\n".into(),
            },
            ok(STATUS),
        ],
    );
    assert!(matches!(&c.ports[0].pfc, Fact::Failed(e) if e.contains("password is required")));
    assert!(matches!(c.nos_version, Fact::Failed(_)));
    assert_eq!(c.ports[0].link_up, Fact::Known(true));
    // Garbage is an error, never a panic.
    let c = Sonic.parse_config("leaf1", &ports, &[ok("{not json"), ok("x"), ok("")]);
    assert!(matches!(&c.ports[1].speed_mbps, Fact::Failed(e) if e.contains("not JSON")));
}
