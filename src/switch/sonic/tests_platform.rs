use super::*;
use crate::counters::Canonical;
use crate::switch::{Fact, SwitchConfig};

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

fn public(name: &str) -> String {
    let p = format!(
        "{}/tests/fixtures/public/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{p}: {e}"))
}

/// The argv of each query.
fn tools(qs: &[Query]) -> Vec<String> {
    qs.iter()
        .map(|q| {
            let Query::Argv(a) = q else { panic!() };
            a.join(" ")
        })
        .collect()
}

#[test]
fn counter_queries_read_raw_and_only_their_port() {
    let qs = Sonic.counter_queries("Ethernet4");
    // Every read prints every port: the same for each port of a switch, so
    // a snapshot asks each once per switch.
    assert_eq!(
        tools(&qs),
        [
            "portstat -r",
            "pfcstat -s all",
            "queuestat",
            "watermarkstat -p -t pg_shared",
            "watermarkstat -p -t q_shared_uni",
            "pfcwd show stats -e",
            "wredstat",
            "show interfaces flap",
        ]
    );
    assert_eq!(qs, Sonic.counter_queries("Ethernet8"));
    let sources: Vec<_> = qs.iter().map(|q| Sonic.counter_source(q)).collect();
    assert_eq!(
        sources,
        [
            "portstat -r",
            "pfcstat",
            "queuestat",
            "watermarkstat -p -t pg_shared",
            "watermarkstat -p -t q_shared_uni",
            "pfcwd show stats",
            "wredstat",
            "show interfaces flap"
        ]
    );

    // pfcstat prints every port: only Ethernet4's row is read.
    let pfc = Sonic
        .parse_counters(
            "Ethernet4",
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
            "Ethernet4",
            &qs[0],
            &ok(fixture(
                "sonic-interfaces-counters-period-utilities-test.txt",
            )),
        )
        .unwrap();
    assert!(!port.is_empty());

    // queuestat -p Ethernet8 answers Ethernet8's queues; asked for
    // Ethernet4 it has no row, which is an error, never zeros.
    let text = fixture("sonic-queue-counters-port-utilities-test.txt");
    let queues = Sonic
        .parse_counters("Ethernet8", &qs[2], &ok(&text))
        .unwrap();
    assert!(queues
        .iter()
        .any(|r| r.canonical == Canonical::Drops && r.queue == Some(1) && r.value == 68));
    let e = Sonic
        .parse_counters("Ethernet4", &qs[2], &ok(&text))
        .unwrap_err();
    assert!(e.0.contains("no row for Ethernet4"), "{}", e.0);
    assert!(Sonic
        .parse_counters("Ethernet4", &argv(&["show", "version"]), &ok(""))
        .is_err());
}

/// Watermarks, the watchdog, WRED/ECN and flaps on sonic-utilities' own
/// expected outputs (tests/fixtures/public/SOURCES.md).
#[test]
fn watermarks_storms_ecn_marks_and_flaps_are_read_per_port() {
    let qs = Sonic.counter_queries("Ethernet4");
    let pg = Sonic
        .parse_counters(
            "Ethernet4",
            &qs[3],
            &ok(fixture("sonic-pg-watermark-shared-utilities-test.txt")),
        )
        .unwrap();
    let pg3 = pg.iter().find(|r| r.vendor == "PG3").unwrap();
    assert_eq!(
        (pg3.canonical, pg3.queue, pg3.value),
        (Canonical::BufferWatermark, Some(3), 403)
    );
    // Multi-ASIC: every namespace's table; a port on asic1 is found,
    // and its N/A cells are not available, never 0.
    let masic = public("sonic-queue-persistent-watermark-unicast-masic-all-utilities-test.txt");
    let uc = Sonic
        .parse_counters("Ethernet-BP256", &qs[4], &ok(&masic))
        .unwrap();
    assert!(uc.is_empty(), "{uc:?}");
    let e = Sonic
        .parse_counters("Ethernet-BP999", &qs[4], &ok(&masic))
        .unwrap_err();
    assert!(e.0.contains("no row for Ethernet-BP999"), "{}", e.0);

    // The watchdog: Ethernet0 queue 3 stormed once.
    let wd = fixture("sonic-pfcwd-show-stats-utilities-test.txt");
    let storms = Sonic.parse_counters("Ethernet0", &qs[5], &ok(&wd)).unwrap();
    assert_eq!(storms.len(), 1);
    assert_eq!(
        (
            storms[0].canonical,
            storms[0].queue,
            storms[0].value,
            storms[0].vendor.as_str()
        ),
        (
            Canonical::PfcStormDetected,
            Some(3),
            1,
            "Ethernet0:3 STORM DETECTED"
        )
    );
    // A port without watchdog rows has no storm counter (not an error).
    let none = Sonic
        .parse_counters("Ethernet12", &qs[5], &ok(&wd))
        .unwrap();
    assert!(none.is_empty());

    // wredstat: ECN-marked packets per queue; the ALLn N/A are absent.
    let wred = public("sonic-wredstat-port-ethernet8-utilities-test.txt");
    let marks = Sonic
        .parse_counters("Ethernet8", &qs[6], &ok(&wred))
        .unwrap();
    assert!(marks.iter().all(|r| r.canonical == Canonical::EcnMarked));
    let q = |n| marks.iter().find(|r| r.queue == Some(n)).map(|r| r.value);
    assert_eq!(
        (q(1), q(3), q(19), q(20)),
        (Some(68), Some(63), Some(84), None)
    );
    assert_eq!(marks.len(), 20);

    // Flaps: orchagent counts every oper change, so 3 changes are 1 down;
    // `Never` is 0 (not N/A); a multi-ASIC port on asic1 reads the same.
    let down = |port: &str, file: &str| -> u64 {
        let r = Sonic
            .parse_counters(port, &qs[7], &ok(public(file)))
            .unwrap();
        assert_eq!(r.len(), 1);
        assert_eq!(r[0].canonical, Canonical::LinkDown);
        r[0].value
    };
    assert_eq!(
        down(
            "Ethernet0",
            "sonic-interfaces-flap-ethernet0-utilities-test.txt"
        ),
        1
    );
    let all = "sonic-interfaces-flap-all-never-utilities-test.txt";
    assert_eq!(down("Ethernet16", all), 3);
    assert_eq!(down("Ethernet4", all), 0);
    assert_eq!(
        down(
            "Ethernet64",
            "sonic-interfaces-flap-masic-asic1-ethernet64-utilities-test.txt"
        ),
        1
    );
}

fn script(dir: &std::path::Path, name: &str, body: &str) {
    use std::os::unix::fs::PermissionsExt;
    let p = dir.join(name);
    std::fs::write(&p, format!("#!/bin/sh\n{body}")).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// Runs a query's argv for real, with `dir` first on PATH.
fn run_query(dir: &std::path::Path, q: &Query) -> (i32, String, String) {
    let Query::Argv(a) = q else { panic!() };
    let path = format!(
        "{}:{}",
        dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let o = std::process::Command::new(&a[0])
        .args(&a[1..])
        .env("PATH", path)
        .output()
        .unwrap();
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// A port the inventory names by alias: the read runs for real in `sh`
/// after SONiC's alias table (fake `show` and `queuestat` on PATH), and the
/// alias's row is read under the name the table gives it; an alias the
/// switch does not have is an error naming it; a tool the image lacks
/// exits 127.
#[test]
fn an_aliased_port_is_read_under_the_name_its_alias_table_gives() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    script(
        d,
        "show",
        "[ \"$*\" = 'interfaces alias' ] || exit 9\nprintf 'Name        Alias\\n----------  -------\\nEthernet0   etp1\\nEthernet8   etp3\\n'\n",
    );
    let text = fixture("sonic-queue-counters-port-utilities-test.txt");
    script(d, "queuestat", &format!("cat <<'EOF'\n{text}EOF\n"));
    let qs = Sonic.counter_queries("etp3");
    assert_ne!(qs, Sonic.counter_queries("Ethernet8"));
    assert_eq!(
        qs[2],
        Sonic.counter_queries("etp1")[2],
        "one read for every aliased port"
    );
    let (code, out, err) = run_query(d, &qs[2]);
    assert_eq!(code, 0, "{err}");
    let by_alias = Sonic.parse_counters("etp3", &qs[2], &ok(&out)).unwrap();
    let by_name = Sonic
        .parse_counters(
            "Ethernet8",
            &Sonic.counter_queries("Ethernet8")[2],
            &ok(&text),
        )
        .unwrap();
    assert!(!by_alias.is_empty());
    assert_eq!(by_alias, by_name);
    let e = Sonic.parse_counters("etp9", &qs[2], &ok(&out)).unwrap_err();
    assert!(
        e.0.contains("etp9 is neither a port nor a port alias"),
        "{}",
        e.0
    );
    // Without the alias table (an answer of another shape): an error.
    let e = Sonic
        .parse_counters("etp3", &qs[2], &ok(&text))
        .unwrap_err();
    assert!(e.0.contains("no alias table"), "{}", e.0);
    // wredstat is not on this image: the read exits 127.
    let (code, _, _) = run_query(d, &Sonic.counter_queries("etp3")[6]);
    assert_eq!(code, 127);
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

/// `sonic-cfggen -d --print-data` with the QoS maps SONiC's `qos.json.j2`
/// templates write (names `AZURE`, the older `[TABLE|NAME]` references on
/// one port), DSCP 26 → TC 3 and 48 → TC 6.
fn qos_db(ethernet8: &str, extra: &str) -> String {
    format!(
        r#"{{
  "PORT": {{
    "Ethernet0": {{"alias": "etp1", "mtu": "9100", "speed": "400000"}},
    "Ethernet8": {{"alias": "etp2", "mtu": "9100", "speed": "400000"}}
  }},
  "DSCP_TO_TC_MAP": {{
    "AZURE": {{"0": "1", "3": "3", "26": "3", "46": "5", "48": "6"}},
    "OTHER": {{"26": "0"}}
  }},
  "PORT_QOS_MAP": {{
    "Ethernet0": {{"dscp_to_tc_map": "AZURE", "pfc_enable": "3,4"}},
    "Ethernet8": {ethernet8}{extra}
  }},
  "PFC_WD": {{"Ethernet0": {{"action": "drop"}}, "Ethernet8": {{"action": "drop"}}}}
}}"#
    )
}

fn dscp(db: &str, ports: &[&str]) -> SwitchConfig {
    let ports: Vec<String> = ports.iter().map(|p| p.to_string()).collect();
    Sonic.parse_config("leaf1", &ports, &[ok(db), ok(STATUS), ok("")])
}

/// The DSCP map the audited ports bind, TC as priority unless the PG maps
/// say otherwise; a port asked for by its alias is read as its `Ethernet`
/// name and reported as asked.
#[test]
fn the_dscp_map_comes_from_the_bound_dscp_to_tc_map() {
    let same = qos_db(
        r#"{"dscp_to_tc_map": "[DSCP_TO_TC_MAP|AZURE]", "pfc_enable": "3,4"}"#,
        "",
    );
    let c = dscp(&same, &["Ethernet0", "etp2"]);
    let m = c
        .dscp_prio
        .known()
        .unwrap_or_else(|| panic!("{:?}", c.dscp_prio));
    assert_eq!((m[&26].class.as_str(), m[&26].priority), ("TC3", Some(3)));
    assert_eq!(m[&48].priority, Some(6));
    assert!(!m.contains_key(&24));
    // etp2 is Ethernet8: its row, its link (down), its watchdog entry.
    assert_eq!(c.ports[1].name, "etp2");
    assert_eq!(c.ports[1].link_up, Fact::Known(false));
    assert_eq!(c.ports[1].speed_mbps, Fact::Known(400_000));
    assert_eq!(c.pfc_watchdog, Fact::Known(true));

    // The global binding serves a port without its own.
    let global = qos_db(
        r#"{"pfc_enable": "3,4"}"#,
        r#", "global": {"dscp_to_tc_map": "AZURE"}"#,
    );
    let c = dscp(&global, &["Ethernet8"]);
    assert_eq!(c.dscp_prio.known().unwrap()[&26].priority, Some(3));

    // TC 3's PG is 4 and only PFC priority 4 maps to PG 4: RoCE's class
    // carries priority 4; TC 6's PG has no PFC priority.
    let remap = qos_db(
        r#"{"dscp_to_tc_map": "AZURE", "tc_to_pg_map": "AZURE", "pfc_to_pg_map": "AZURE"}"#,
        r#"}, "TC_TO_PRIORITY_GROUP_MAP": {"AZURE": {"3": "4", "6": "0"}}, "PFC_PRIORITY_TO_PRIORITY_GROUP_MAP": {"AZURE": {"3": "3", "4": "4"}"#,
    );
    let c = dscp(&remap, &["Ethernet8"]);
    let m = c
        .dscp_prio
        .known()
        .unwrap_or_else(|| panic!("{:?}", c.dscp_prio));
    assert_eq!(m[&26].priority, Some(4));
    assert_eq!(m[&48].priority, None);

    // Ports that bind different maps: an error naming both.
    let differ = qos_db(r#"{"dscp_to_tc_map": "OTHER"}"#, "");
    let c = dscp(&differ, &["Ethernet0", "Ethernet8"]);
    assert!(
        matches!(&c.dscp_prio, Fact::Failed(e) if e.contains("Ethernet0 -> AZURE") && e.contains("Ethernet8 -> OTHER")),
        "{:?}",
        c.dscp_prio
    );
    // No map bound: nothing is classified by DSCP.
    let none = qos_db(r#"{"pfc_enable": "3,4"}"#, "");
    assert_eq!(
        dscp(&none, &["Ethernet8"]).dscp_prio,
        Fact::Known(Default::default())
    );
    // A bound map CONFIG_DB lacks, or a damaged one, is an error.
    let missing = qos_db(r#"{"dscp_to_tc_map": "GONE"}"#, "");
    assert!(
        matches!(&dscp(&missing, &["Ethernet8"]).dscp_prio, Fact::Failed(e) if e.contains("GONE"))
    );
    let bad = same.replace(r#""48": "6""#, r#""48": "x""#);
    assert!(
        matches!(&dscp(&bad, &["Ethernet0"]).dscp_prio, Fact::Failed(e) if e.contains("\"48\""))
    );
}
