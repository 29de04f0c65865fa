//! `rocegate parse counters --format FORMAT FILE` against real outputs: every
//! file of `../shared/fixtures/{host,switch,lab}` (copied into
//! `tests/fixtures/`, see `tests/fixtures/README.md`), the Linux-switch
//! fixtures and the public outputs in `tests/fixtures/public/` (sources in
//! `tests/fixtures/public/SOURCES.md`). Expected values were read from the
//! files by hand.

use assert_cmd::Command;
use serde_json::Value;

/// Every fixture read by `parse counters`, with its format.
const TABLE: &[(&str, &str)] = &[
    ("host/cma_roce_tos-set-106-netarbiter.txt", "cma-roce-tos"),
    ("host/ethtool-i-mlx5-cx7-amzn2023-sigitp.txt", "ethtool-i"),
    ("host/ethtool-mlx5-xdp-k515-nonzero.txt", "ethtool-mlx5"),
    ("host/ethtool-mlx5-xdp-k65-nonzero.txt", "ethtool-mlx5"),
    (
        "host/ibstat-h100-cx7-ib-plus-cx6dx-eth-some-down-gpud.txt",
        "ibstat",
    ),
    (
        "host/lldpctl-json-puppet-lldpd-list-of-one.json",
        "lldpctl-json",
    ),
    ("host/mlnx_qos-dscp-trust-husky-cut.txt", "mlnx_qos"),
    (
        "host/mlnx_qos-os-controlled-pfc3-netarbiter.txt",
        "mlnx_qos",
    ),
    ("host/mlxfwmanager-query-bf2-sonic-test.txt", "mlxfwmanager"),
    (
        "host/mlxfwmanager-query-bf3-virtio-forge.txt",
        "mlxfwmanager",
    ),
    (
        "host/rdma-statistic-show-mlx5-wrapped-2019.txt",
        "rdma-statistic",
    ),
    ("host/rdma-statistic-show-p-mlx5-2019.txt", "rdma-statistic"),
    ("host/show_gids-mlx5-tabs-husky.txt", "show-gids"),
    ("lab/ethtool-S-veth.txt", "ethtool-mlx5"),
    ("lab/ip-s-s-j-link-show-veth.json", "ip-link-json"),
    ("lab/lldpcli-json-show-neighbors-veth.json", "lldpctl-json"),
    ("lab/lldpcli-show-neighbors-veth.txt", "lldpcli-text"),
    (
        "switch/cumulus-nvue-counters-qos-swp1-docs59.txt",
        "cumulus-nvue-counters",
    ),
    (
        "switch/eos-queue-counters-detail-egress-ntc.txt",
        "eos-queue-counters",
    ),
    (
        "switch/nxos-counters-errors-genie-24port.txt",
        "nxos-counters-errors",
    ),
    (
        "switch/nxos-pfc-interface-n5k-oswalt.txt",
        "nxos-pfc-interface",
    ),
    (
        "public/nvue-show-interface-qos-roce-status-swp16-cl514-docs.txt",
        "cumulus-roce-status",
    ),
    (
        "public/nvue-show-qos-roce-cl514-docs.txt",
        "cumulus-roce-dscp",
    ),
    (
        "public/nvue-show-interface-qos-roce-counters-swp16-cl514-docs.txt",
        "cumulus-roce-counters",
    ),
    (
        "public/sonic-wredstat-port-ethernet8-utilities-test.txt",
        "sonic-wred-counters",
    ),
    (
        "public/sonic-interfaces-flap-ethernet0-utilities-test.txt",
        "sonic-interfaces-flap",
    ),
    (
        "public/sonic-interfaces-flap-all-never-utilities-test.txt",
        "sonic-interfaces-flap",
    ),
    (
        "public/sonic-interfaces-flap-masic-asic1-ethernet64-utilities-test.txt",
        "sonic-interfaces-flap",
    ),
    (
        "public/sonic-queue-persistent-watermark-unicast-masic-all-utilities-test.txt",
        "sonic-queue-watermark",
    ),
    (
        "switch/sonic-interfaces-counters-masic-reminder-utilities-test.txt",
        "sonic-interfaces-counters",
    ),
    (
        "switch/sonic-interfaces-counters-period-utilities-test.txt",
        "sonic-interfaces-counters",
    ),
    (
        "switch/sonic-pfc-counters-masic-all-na-utilities-test.txt",
        "sonic-pfc-counters",
    ),
    (
        "switch/sonic-pfc-counters-utilities-test.txt",
        "sonic-pfc-counters",
    ),
    (
        "switch/sonic-pfcwd-show-stats-utilities-test.txt",
        "sonic-pfcwd-stats",
    ),
    (
        "switch/sonic-pg-watermark-shared-utilities-test.txt",
        "sonic-pg-watermark",
    ),
    (
        "switch/sonic-queue-counters-port-utilities-test.txt",
        "sonic-queue-counters",
    ),
    (
        "switch/sonic-queue-watermark-multicast-na-utilities-test.txt",
        "sonic-queue-watermark",
    ),
    (
        "switch/sonic-queue-watermark-unicast-utilities-test.json",
        "sonic-queue-watermark",
    ),
    (
        "switch/sonic-queue-watermark-unicast-utilities-test.txt",
        "sonic-queue-watermark",
    ),
    (
        "switch_linux/dcb-pfc-show-kernel-doc-prio6-7.txt",
        "dcb-pfc",
    ),
    (
        "switch_linux/ethtool-S-mlxsw-swp31-spectrum.txt",
        "ethtool-mlxsw",
    ),
    ("switch_linux/tc-s-qdisc-show-dev-veth-htb.txt", "tc"),
    (
        "public/dcb-app-show-felix-default-prio-dscp-names.txt",
        "dcb-app",
    ),
    (
        "public/dcb-app-show-sparx5-dscp-duplicate-key.txt",
        "dcb-app",
    ),
    (
        "public/ethtool-I-show-fec-fbnic-rs-stats.txt",
        "ethtool-fec",
    ),
    (
        "public/ethtool-I-show-fec-ice-e810-indented-patch.txt",
        "ethtool-fec",
    ),
    (
        "public/ethtool-S-ice-e810-grep-priority-xon-xoff.txt",
        "ethtool-s",
    ),
    (
        "public/ethtool-grep-A3-speed-400g-lanes8-swp1.txt",
        "ethtool-link",
    ),
    (
        "public/ethtool-m-qsfp28-low-power-dark-inf-netdev.txt",
        "ethtool-m",
    ),
    (
        "public/ethtool-m-qsfpdd-cmis4-arista-xdr4-8lane-mail-wrapped.txt",
        "ethtool-m",
    ),
    (
        "public/ethtool-m-qsfp28-sff8636-4lane-cut-netdev.txt",
        "ethtool-m",
    ),
    (
        "public/ethtool-m-sfp-10gsr-finisar-thresholds-cumulus-docs.txt",
        "ethtool-m",
    ),
    (
        "public/ethtool-mlxsw-swp1-no-link-speed-unknown-mixed-tabs.txt",
        "ethtool-link",
    ),
    (
        "public/ethtool-show-fec-dgxspark-cx7-auto-rs.txt",
        "ethtool-fec",
    ),
];

/// Shared fixtures another command reads, and where that is tested.
const ELSEWHERE: &[(&str, &str)] = &[(
    "lab/iperf3-J-tcp-2s-veth.json",
    "iperf3 -J output: tests/parse_iperf.rs reads tests/fixtures/iperf3/iperf3-J-tcp-2s-veth.json",
)];

fn fixtures() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

fn format_of(file: &str) -> &'static str {
    TABLE
        .iter()
        .find(|(f, _)| *f == file)
        .map(|(_, fmt)| *fmt)
        .unwrap_or_else(|| panic!("{file} is not in TABLE"))
}

/// Runs the binary on a fixture with its format from TABLE and returns the JSON.
fn parse(file: &str) -> Value {
    let path = fixtures().join(file);
    let out = Command::cargo_bin("rocegate")
        .unwrap()
        .args(["parse", "counters", "--format", format_of(file)])
        .arg(&path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{file}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{file}: {e}"))
}

/// The entry of a list whose `key` is `name` (`port`, `device`, `name`).
fn entry<'a>(v: &'a Value, key: &str, name: &str) -> &'a Value {
    v.as_array()
        .and_then(|a| a.iter().find(|e| e[key] == name))
        .unwrap_or_else(|| panic!("no {key} {name} in {v}"))
}

/// The one reading with this vendor name: (canonical, priority, queue, value).
fn reading(readings: &Value, vendor: &str) -> (String, Option<u64>, Option<u64>, u64) {
    let hits: Vec<&Value> = readings
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["vendor"] == vendor)
        .collect();
    assert_eq!(hits.len(), 1, "{vendor}: {hits:?}");
    let r = hits[0];
    (
        r["canonical"].as_str().unwrap().to_string(),
        r["priority"].as_u64(),
        r["queue"].as_u64(),
        r["value"].as_u64().unwrap(),
    )
}

fn s(x: &str) -> String {
    x.to_string()
}

#[test]
fn every_fixture_in_the_table_parses() {
    for (file, _) in TABLE {
        parse(file);
    }
}

/// A new fixture in the shared host, switch or lab folders, or among the
/// public counter outputs, must be added to TABLE (or to ELSEWHERE), and the
/// copy here must be the shared file unchanged.
#[test]
fn every_shared_and_public_fixture_is_in_the_table() {
    let listed =
        |f: &str| TABLE.iter().any(|(t, _)| *t == f) || ELSEWHERE.iter().any(|(t, _)| *t == f);
    for (file, _) in TABLE {
        assert!(
            fixtures().join(file).is_file(),
            "{file} is in TABLE but not in tests/fixtures"
        );
    }
    let shared = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/fixtures");
    let mut seen = 0;
    for dir in ["host", "switch", "lab"] {
        let Ok(entries) = std::fs::read_dir(shared.join(dir)) else {
            continue;
        };
        for e in entries {
            let name = format!("{dir}/{}", e.unwrap().file_name().to_string_lossy());
            seen += 1;
            assert!(
                listed(&name),
                "{name}: a shared fixture with no format in TABLE"
            );
            if TABLE.iter().any(|(t, _)| *t == name) {
                assert_eq!(
                    std::fs::read(shared.join(&name)).unwrap(),
                    std::fs::read(fixtures().join(&name)).unwrap(),
                    "{name}: the copy in tests/fixtures differs from the shared file"
                );
            }
        }
    }
    if shared.is_dir() {
        assert!(seen >= 30, "only {seen} shared fixtures found");
    }
    for e in std::fs::read_dir(fixtures().join("public")).unwrap() {
        let name = e.unwrap().file_name().to_string_lossy().to_string();
        let workload = ["ib_", "all_", "alltoall_", "SOURCES"]
            .iter()
            .any(|p| name.starts_with(p));
        if !workload {
            assert!(
                listed(&format!("public/{name}")),
                "public/{name}: no format in TABLE"
            );
        }
    }
}

#[test]
fn host_fixtures() {
    let v = parse("host/cma_roce_tos-set-106-netarbiter.txt");
    assert_eq!(
        (v["tos"].as_u64(), v["dscp"].as_u64(), v["ecn"].as_u64()),
        (Some(106), Some(26), Some(2))
    );

    let v = parse("host/ethtool-mlx5-xdp-k515-nonzero.txt");
    assert_eq!(
        reading(&v, "rx_bytes_phy"),
        (s("rx_bytes"), None, None, 6211329423080)
    );
    let v = parse("host/ethtool-mlx5-xdp-k65-nonzero.txt");
    assert_eq!(
        reading(&v, "tx_bytes_phy"),
        (s("tx_bytes"), None, None, 3008055468662)
    );
    let v = parse("lab/ethtool-S-veth.txt");
    assert_eq!(
        reading(&v, "rx_queue_0_drops"),
        (s("drops"), None, Some(0), 0)
    );

    let v = parse("host/ethtool-i-mlx5-cx7-amzn2023-sigitp.txt");
    assert_eq!(v["driver"], "mlx5_core");
    assert_eq!(v["firmware"], "28.42.1000 (MT_0000000834)");

    let v = parse("host/ibstat-h100-cx7-ib-plus-cx6dx-eth-some-down-gpud.txt");
    let ca0 = entry(&v, "name", "mlx5_0");
    assert_eq!(ca0["firmware"], "28.39.1002");
    assert_eq!(ca0["ports"][0]["rate_gbps"], 400);
    assert_eq!(ca0["ports"][0]["link_layer"], "InfiniBand");
    let ca1 = entry(&v, "name", "mlx5_1");
    assert_eq!(
        (
            ca1["ca_type"].as_str(),
            ca1["ports"][0]["link_layer"].as_str()
        ),
        (Some("MT4125"), Some("Ethernet"))
    );
    let down: Vec<&Value> = v
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|c| c["ports"].as_array().unwrap())
        .filter(|p| p["state"] == "Down")
        .collect();
    assert_eq!(down.len(), 3);
    assert!(down
        .iter()
        .all(|p| p["rate_gbps"] == 40 && p["physical_state"] == "Disabled"));

    let v = parse("host/mlnx_qos-os-controlled-pfc3-netarbiter.txt");
    assert_eq!(v["pfc"][3], true);
    assert_eq!(v["dscp2prio"]["26"], 3);
    assert_eq!(v["trust_dscp"], true);
    parse("host/mlnx_qos-dscp-trust-husky-cut.txt");

    let v = parse("host/mlxfwmanager-query-bf2-sonic-test.txt");
    assert_eq!(v[0]["psid"], "MT_0000000767");
    assert_eq!(
        v[0]["versions"][0],
        serde_json::json!({"image": "FW", "current": "24.99.0932", "available": null})
    );
    assert_eq!(v[0]["status"], "No matching image found");
    let v = parse("host/mlxfwmanager-query-bf3-virtio-forge.txt");
    assert_eq!(v[0]["device_type"], "BlueField3");
    assert_eq!(v[0]["base_guid"], Value::Null);
    let versions = v[0]["versions"].as_array().unwrap();
    assert_eq!(versions.len(), 5);
    assert_eq!(versions[4]["image"], "UEFI Virtio net");
    assert_eq!(versions[4]["current"], "21.4.0013");

    for file in [
        "host/rdma-statistic-show-mlx5-wrapped-2019.txt",
        "host/rdma-statistic-show-p-mlx5-2019.txt",
    ] {
        let v = parse(file);
        let link = entry(&v, "device", "mlx5_0/1");
        assert_eq!(
            reading(&link["readings"], "out_of_buffer"),
            (s("drops"), None, None, 0),
            "{file}"
        );
    }

    let v = parse("host/show_gids-mlx5-tabs-husky.txt");
    let gid3 = v
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["index"] == 3)
        .unwrap();
    assert_eq!(
        (gid3["version"].as_str(), gid3["ipv4"].as_str()),
        (Some("v2"), Some("192.168.211.242"))
    );
}

#[test]
fn lab_fixtures() {
    let v = parse("lab/ip-s-s-j-link-show-veth.json");
    let va = entry(&v, "ifname", "va");
    assert_eq!(
        reading(&va["readings"], "rx.bytes"),
        (s("rx_bytes"), None, None, 12164234)
    );
    assert_eq!(
        reading(&va["readings"], "tx.bytes"),
        (s("tx_bytes"), None, None, 10586746333)
    );
    for file in [
        "lab/lldpcli-json-show-neighbors-veth.json",
        "host/lldpctl-json-puppet-lldpd-list-of-one.json",
    ] {
        assert_eq!(parse(file).as_array().unwrap().len(), 1, "{file}");
    }
    let v = parse("lab/lldpcli-json-show-neighbors-veth.json");
    assert_eq!(
        (
            v[0]["interface"].as_str(),
            v[0]["chassis_name"].as_str(),
            v[0]["port_descr"].as_str()
        ),
        (Some("va"), Some("vm"), Some("vb"))
    );
    let v = parse("lab/lldpcli-show-neighbors-veth.txt");
    assert_eq!(v[0]["interface"], "va");
    assert_eq!(v[0]["system_name"], "vm");
    assert_eq!(v[0]["port_description"], "vb");
    assert_eq!(v[0]["ttl"], 120);
}

#[test]
fn linux_switch_fixtures() {
    let v = parse("switch_linux/dcb-pfc-show-kernel-doc-prio6-7.txt");
    assert_eq!(v["enabled"], serde_json::json!([6, 7]));
    assert_eq!(v["config"]["delay"], 4096);
    let v = parse("switch_linux/ethtool-S-mlxsw-swp31-spectrum.txt");
    assert_eq!(reading(&v, "ecn_marked").3, 10);
    assert_eq!(
        parse("switch_linux/tc-s-qdisc-show-dev-veth-htb.txt"),
        serde_json::json!([])
    );
}

#[test]
fn sonic_pfc_counters() {
    let v = parse("switch/sonic-pfc-counters-utilities-test.txt");
    let e8 = entry(&v, "port", "Ethernet8");
    assert_eq!(
        reading(&e8["readings"], "Port Rx PFC0"),
        (s("pfc_pause_rx"), Some(0), None, 1800)
    );
    assert_eq!(
        reading(&e8["readings"], "Port Tx PFC3"),
        (s("pfc_pause_tx"), Some(3), None, 813)
    );
    assert_eq!(e8["readings"].as_array().unwrap().len(), 16);

    let v = parse("switch/sonic-pfc-counters-masic-all-na-utilities-test.txt");
    assert_eq!(v.as_array().unwrap().len(), 6);
    let e0 = entry(&v, "port", "Ethernet0");
    assert_eq!(reading(&e0["readings"], "Port Rx PFC0").3, 1200);
    let bp4 = entry(&v, "port", "Ethernet-BP4");
    assert_eq!(
        reading(&bp4["readings"], "Port Tx PFC7"),
        (s("pfc_pause_tx"), Some(7), None, 817)
    );
    // N/A is not available, never zero.
    let bp256 = entry(&v, "port", "Ethernet-BP256");
    assert_eq!(bp256["readings"], serde_json::json!([]));
    assert_eq!(bp256["not_available"].as_array().unwrap().len(), 16);
}

#[test]
fn sonic_queues_watermarks_and_pfcwd() {
    let v = parse("switch/sonic-queue-counters-port-utilities-test.txt");
    let e8 = entry(&v, "port", "Ethernet8");
    assert_eq!(
        reading(&e8["readings"], "UC1 Counter/pkts"),
        (s("tx_packets"), None, Some(1), 38)
    );
    assert_eq!(
        reading(&e8["readings"], "UC1 Counter/bytes"),
        (s("tx_bytes"), None, Some(1), 17)
    );
    assert_eq!(
        reading(&e8["readings"], "MC19 Drop/pkts"),
        (s("drops"), None, Some(19), 84)
    );
    assert_eq!(e8["other"]["UC9 Drop/bytes"], 61);
    assert_eq!(e8["not_available"].as_array().unwrap().len(), 40);
    assert!(e8["not_available"]
        .as_array()
        .unwrap()
        .contains(&Value::from("ALL20 Counter/pkts")));

    let v = parse("switch/sonic-pg-watermark-shared-utilities-test.txt");
    let e8 = entry(&v, "port", "Ethernet8");
    assert_eq!(
        reading(&e8["readings"], "PG7"),
        (s("buffer_watermark"), None, Some(7), 807)
    );

    let v = parse("switch/sonic-queue-watermark-multicast-na-utilities-test.txt");
    assert_eq!(v.as_array().unwrap().len(), 3);
    for port in v.as_array().unwrap() {
        assert_eq!(port["readings"], serde_json::json!([]));
        assert_eq!(port["not_available"].as_array().unwrap().len(), 10);
    }

    let text = parse("switch/sonic-queue-watermark-unicast-utilities-test.txt");
    let json = parse("switch/sonic-queue-watermark-unicast-utilities-test.json");
    assert_eq!(text, json, "the --json form reads as the table does");
    let e0 = entry(&text, "port", "Ethernet0");
    assert_eq!(reading(&e0["readings"], "UC0").3, 2057328);
    assert_eq!(
        reading(&entry(&text, "port", "Ethernet8")["readings"], "UC9").3,
        7696
    );

    let v = parse("switch/sonic-pfcwd-show-stats-utilities-test.txt");
    assert_eq!(v[0]["port"], "Ethernet0");
    assert_eq!(v[0]["queue"], 3);
    assert_eq!(v[0]["status"], "stormed");
    assert_eq!(
        (
            v[0]["storm_detected"].as_u64(),
            v[0]["storm_restored"].as_u64()
        ),
        (Some(1), Some(0))
    );
    assert_eq!(
        (v[0]["tx_ok"].as_u64(), v[0]["tx_drop"].as_u64()),
        (Some(100), Some(300))
    );
    assert_eq!(v[0]["rx_last_drop"], 200);
    assert_eq!(
        (v[1]["status"].as_str(), v[1]["storm_restored"].as_u64()),
        (Some("operational"), Some(2))
    );
}

#[test]
fn sonic_interfaces_counters() {
    let v = parse("switch/sonic-interfaces-counters-masic-reminder-utilities-test.txt");
    assert_eq!(
        v.as_array().unwrap().len(),
        2,
        "the Reminder trailer is not a row"
    );
    let e0 = entry(&v, "port", "Ethernet0");
    assert_eq!(
        reading(&e0["counters"]["readings"], "RX_ERR"),
        (s("crc_errors"), None, None, 10)
    );
    assert_eq!(reading(&e0["counters"]["readings"], "RX_DRP").3, 100);
    assert!(e0["counters"]["not_available"]
        .as_array()
        .unwrap()
        .contains(&Value::from("TX_ERR")));
    assert_eq!(e0["rx_bytes_per_s"], 0.0);
    let e4 = entry(&v, "port", "Ethernet4");
    assert_eq!(
        reading(&e4["counters"]["readings"], "RX_DRP"),
        (s("discards"), None, None, 1000)
    );
    assert_eq!(
        reading(&e4["counters"]["readings"], "TX_OK"),
        (s("tx_packets"), None, None, 40)
    );

    let v = parse("switch/sonic-interfaces-counters-period-utilities-test.txt");
    let e0 = entry(&v, "port", "Ethernet0");
    assert_eq!(e0["state"], "D");
    assert_eq!(e0["rx_bytes_per_s"], 2.0e9);
    assert_eq!(e0["rx_util_pct"], 64.0);
    let e4 = entry(&v, "port", "Ethernet4");
    assert_eq!(e4["state"], Value::Null);
    assert_eq!(e4["rx_bytes_per_s"], 204800.0);
    assert_eq!(e4["rx_util_pct"], Value::Null);
    assert_eq!(entry(&v, "port", "Ethernet8")["tx_bytes_per_s"], 13.37e6);
}

#[test]
fn eos_nxos_cumulus() {
    let v = parse("switch/eos-queue-counters-detail-egress-ntc.txt");
    let e = entry(&v, "port", "Et3/9/1");
    assert_eq!(
        reading(&e["readings"], "TC7 DP0-3 UC OutEnqOctets"),
        (s("tx_bytes"), None, Some(7), 238170896)
    );
    assert_eq!(
        reading(&e["readings"], "TC1 DP0-3 UC OutEnqPkts"),
        (s("tx_packets"), None, Some(1), 64978)
    );
    let e = entry(&v, "port", "Et4/2/1");
    assert_eq!(
        reading(&e["readings"], "TC7 DP0-3 UC OutDropPkts"),
        (s("drops"), None, Some(7), 1)
    );
    assert_eq!(e["other"]["TC7 DP0-3 UC OutDropOctets"], 110);

    let v = parse("switch/nxos-counters-errors-genie-24port.txt");
    assert_eq!(v.as_array().unwrap().len(), 25);
    let e13 = entry(&v, "port", "Eth1/13");
    assert_eq!(e13["other"]["Align-Err"], 500);
    assert_eq!(
        reading(&e13["readings"], "OutDiscards"),
        (s("drops"), None, None, 14500)
    );
    assert_eq!(
        reading(&entry(&v, "port", "Eth1/23")["readings"], "OutDiscards").3,
        20340
    );
    let mgmt = entry(&v, "port", "mgmt0");
    assert!(mgmt["not_available"]
        .as_array()
        .unwrap()
        .contains(&Value::from("OutDiscards")));
    assert_eq!(
        reading(&mgmt["readings"], "FCS-Err"),
        (s("crc_errors"), None, None, 0)
    );

    let v = parse("switch/nxos-pfc-interface-n5k-oswalt.txt");
    assert_eq!(v.as_array().unwrap().len(), 4);
    let p = entry(&v, "port", "Ethernet1/47");
    assert_eq!(
        (p["mode"].as_str(), p["oper"].as_str()),
        (Some("Auto"), Some("Off"))
    );
    assert_eq!(
        reading(&p["counters"]["readings"], "RxPPP"),
        (s("pfc_pause_rx"), None, None, 7316)
    );
    assert_eq!(reading(&p["counters"]["readings"], "TxPPP").3, 762946);
    assert_eq!(
        reading(
            &entry(&v, "port", "Ethernet1/48")["counters"]["readings"],
            "TxPPP"
        )
        .3,
        761362
    );

    let v = parse("switch/cumulus-nvue-counters-qos-swp1-docs59.txt");
    let pauses: Vec<_> = v["readings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["canonical"] == "pfc_pause_rx" && r["priority"].is_u64())
        .collect();
    assert_eq!(pauses.len(), 8);
    assert_eq!(
        reading(&v["readings"], "traffic-class 3 tx-frames"),
        (s("tx_packets"), None, Some(3), 0)
    );
    assert_eq!(
        reading(&v["readings"], "Counter ecn-marked-packets Transmit"),
        (s("ecn_marked"), None, None, 0)
    );
    assert!(v["not_available"]
        .as_array()
        .unwrap()
        .contains(&Value::from("Counter ecn-marked-packets Receive")));
    assert_eq!(v["other"]["priority-group 7 rx-buffer-discards"], 0);
}

#[test]
fn public_optics() {
    let v = parse("public/ethtool-m-sfp-10gsr-finisar-thresholds-cumulus-docs.txt");
    assert_eq!(v["identifier"], "0x03 (SFP)");
    assert_eq!(
        (
            v["vendor"].as_str(),
            v["part_number"].as_str(),
            v["serial"].as_str()
        ),
        (
            Some("FINISAR CORP."),
            Some("FTLX8574D3BCL"),
            Some("UWK0UTZ")
        )
    );
    assert_eq!(
        (v["temperature_c"].as_f64(), v["voltage_v"].as_f64()),
        (Some(28.77), Some(3.305))
    );
    assert_eq!(
        v["lanes"],
        serde_json::json!([{"lane": 1, "tx_bias_ma": 8.546, "tx_power_mw": 0.5268, "tx_power_dbm": -2.78, "rx_power_mw": 0.5426, "rx_power_dbm": -2.66}])
    );
    let t = &v["thresholds"];
    assert_eq!(
        t["rx_power_mw"],
        serde_json::json!({"high_alarm": 1.0, "low_alarm": 0.01, "high_warning": 0.7943, "low_warning": 0.0158})
    );
    assert_eq!(t["temperature_c"]["low_alarm"], -13.0);
    assert_eq!(t["tx_bias_ma"]["high_warning"], 12.5);
    assert_eq!(t["tx_power_mw"]["low_warning"], 0.3162);
    assert_eq!(t["voltage_v"]["high_alarm"], 3.7);
    assert_eq!(v["flags_on"], serde_json::json!([]));

    let v = parse("public/ethtool-m-qsfp28-sff8636-4lane-cut-netdev.txt");
    assert_eq!(v["identifier"], "0x11 (QSFP28)");
    assert_eq!(v["lanes"].as_array().unwrap().len(), 4);
    assert_eq!(v["lanes"][3]["rx_power_mw"], 0.8708);
    assert_eq!(v["lanes"][3]["rx_power_dbm"], -0.6);
    assert_eq!(v["lanes"][0]["tx_power_mw"], 0.7633);
    assert_eq!(v["temperature_c"], Value::Null);

    // CMIS 4.0 QSFP-DD, 4 lanes lit of 8; the mail client wrapped long lines.
    let v = parse("public/ethtool-m-qsfpdd-cmis4-arista-xdr4-8lane-mail-wrapped.txt");
    assert!(v["identifier"]
        .as_str()
        .unwrap()
        .starts_with("0x18 (QSFP-DD"));
    assert_eq!(
        (
            v["vendor"].as_str(),
            v["part_number"].as_str(),
            v["serial"].as_str()
        ),
        (
            Some("Arista Networks"),
            Some("QDD-400G-XDR4"),
            Some("XKT242211481")
        )
    );
    assert_eq!(
        (v["temperature_c"].as_f64(), v["voltage_v"].as_f64()),
        (Some(70.49), Some(3.2186))
    );
    let lanes = v["lanes"].as_array().unwrap();
    assert_eq!(lanes.len(), 8);
    assert_eq!(
        lanes[3],
        serde_json::json!({"lane": 4, "tx_bias_ma": 110.1, "tx_power_mw": 1.4387, "tx_power_dbm": 1.58, "rx_power_mw": 1.8215, "rx_power_dbm": 2.6})
    );
    assert_eq!(
        (
            lanes[0]["rx_power_mw"].as_f64(),
            lanes[0]["rx_power_dbm"].as_f64()
        ),
        (Some(2.2489), Some(3.52))
    );
    assert_eq!(
        (lanes[7]["tx_power_mw"].as_f64(), &lanes[7]["tx_power_dbm"]),
        (Some(0.0), &Value::Null)
    );
    // 70.49 °C is above the module's own 70 °C warning threshold, and it says so.
    assert_eq!(v["thresholds"]["temperature_c"]["high_warning"], 70.0);
    assert_eq!(
        v["flags_on"],
        serde_json::json!(["Module temperature high warning"])
    );
    assert_eq!(
        v["thresholds"]["tx_bias_ma"],
        serde_json::json!({"high_alarm": 130.0, "low_alarm": 10.0, "high_warning": 125.0, "low_warning": 15.0})
    );
    assert_eq!(v["thresholds"]["rx_power_mw"]["low_alarm"], 0.1288);
    assert_eq!(v["thresholds"]["voltage_v"]["low_warning"], 3.135);
    assert_eq!(v["rx_loss_of_signal"], "None");

    let v = parse("public/ethtool-m-qsfp28-low-power-dark-inf-netdev.txt");
    for lane in v["lanes"].as_array().unwrap() {
        assert_eq!(lane["rx_power_mw"], 0.0);
        assert_eq!(lane["rx_power_dbm"], Value::Null, "-inf dBm is no figure");
    }
}

#[test]
fn public_host_outputs() {
    let v = parse("public/ethtool-S-ice-e810-grep-priority-xon-xoff.txt");
    assert_eq!(v["driver"], "ice");
    assert_eq!(
        v["readings"].as_array().unwrap().len(),
        16,
        "xoff only, 8 priorities each way"
    );
    assert_eq!(
        reading(&v["readings"], "rx_priority_3_xoff.nic"),
        (s("pfc_pause_rx"), Some(3), None, 0)
    );
    assert_eq!(
        reading(&v["readings"], "tx_priority_7_xoff.nic"),
        (s("pfc_pause_tx"), Some(7), None, 0)
    );

    let v = parse("public/ethtool-I-show-fec-fbnic-rs-stats.txt");
    assert_eq!(
        (v["device"].as_str(), &v["configured"], &v["active"]),
        (
            Some("eth0"),
            &serde_json::json!(["RS"]),
            &serde_json::json!(["RS"])
        )
    );
    assert_eq!(
        v["statistics"]["corrected_blocks"],
        serde_json::json!({"total": 0, "lanes": []})
    );
    let v = parse("public/ethtool-I-show-fec-ice-e810-indented-patch.txt");
    assert_eq!(v["configured"], serde_json::json!(["Auto", "RS", "BaseR"]));
    assert_eq!(v["statistics"]["uncorrectable_blocks"]["total"], 0);
    let v = parse("public/ethtool-show-fec-dgxspark-cx7-auto-rs.txt");
    assert_eq!(
        (v["device"].as_str(), &v["active"]),
        (Some("enp1s0f1np1"), &serde_json::json!(["RS"]))
    );
    assert_eq!(v["statistics"], serde_json::json!({}));

    let v = parse("public/ethtool-mlxsw-swp1-no-link-speed-unknown-mixed-tabs.txt");
    assert_eq!(v["device"], "swp1");
    assert_eq!(
        (v["speed_mbps"].clone(), v["duplex"].clone()),
        (Value::Null, Value::Null)
    );
    assert_eq!(v["link_detected"], false);
    assert_eq!(v["auto_negotiation"], true);
    assert_eq!(v["port"], "Direct Attach Copper");
    assert_eq!(v["supported_link_modes"].as_array().unwrap().len(), 10);
    assert_eq!(v["advertised_link_modes"][4], "100000baseCR4/Full");
    assert_eq!(v["supported_fec_modes"], serde_json::json!([]));
    let v = parse("public/ethtool-grep-A3-speed-400g-lanes8-swp1.txt");
    assert_eq!(
        (
            v["speed_mbps"].as_u64(),
            v["lanes"].as_u64(),
            v["duplex"].as_str()
        ),
        (Some(400000), Some(8), Some("Full"))
    );
    assert_eq!(v["link_detected"], Value::Null);

    let v = parse("public/dcb-app-show-felix-default-prio-dscp-names.txt");
    assert_eq!(v["default_prio"], serde_json::json!([3]));
    assert_eq!(
        v["dscp_prio"],
        serde_json::json!({"16": [2], "24": [5]}),
        "CS2 and CS3 by their DSCP"
    );
    let v = parse("public/dcb-app-show-sparx5-dscp-duplicate-key.txt");
    assert_eq!(v["dscp_prio"], serde_json::json!({"63": [1, 2]}));
}

#[test]
fn stdin_and_sysfs() {
    let out = Command::cargo_bin("rocegate")
        .unwrap()
        .args(["parse", "counters", "--format", "sysfs", "-"])
        .write_stdin(
            "/sys/class/infiniband/mlx5_0/ports/1/hw_counters/np_cnp_sent:42
",
        )
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v[0]["device"], "mlx5_0");
    assert_eq!(
        reading(&v[0]["readings"], "np_cnp_sent"),
        (s("cnp_sent"), None, None, 42)
    );
}

/// Damaged input is exit 2 with one line naming the file, the format and
/// what is wrong; an unknown format lists the formats.
#[test]
fn damaged_input_is_a_clean_error() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            "sonic-pfc-counters",
            "  Port Rx    PFC0\n---------  ------\nEthernet0      -5\n",
            "negative",
        ),
        (
            "sonic-pfc-counters",
            "  Port Rx    PFC0\n---------  ------\nEthernet0  99999999999999999999999\n",
            "above 2^64",
        ),
        (
            "sonic-queue-watermark",
            "[{\"Port\": \"Ethernet0\", \"UC0\": \"1.5\"}]",
            "fractional",
        ),
        (
            "ethtool-m",
            "\tLaser output power : 250.0 mW / 23.98 dBm\n",
            "not a possible optical power",
        ),
        (
            "ethtool-s",
            "NIC statistics:\n     rx_priority_3_xoff.nic: nan\n",
            "not a finite number",
        ),
        ("dcb-app", "dscp-prio 26:9\n", "not 0–7"),
        (
            "nxos-pfc-interface",
            "Port Mode Oper(VL bmap) RxPPP TxPPP\nEthernet1/1 Auto\n",
            "expected PORT MODE OPER",
        ),
        (
            "eos-queue-counters",
            "garbage\n",
            "no `Port … OutEnqPkts` header",
        ),
    ];
    for (format, text, why) in cases {
        let path = dir.path().join("in.txt");
        std::fs::write(&path, text).unwrap();
        let out = Command::cargo_bin("rocegate")
            .unwrap()
            .args(["parse", "counters", "--format", format])
            .arg(&path)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{format}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(&*path.to_string_lossy()) && err.contains(format) && err.contains(why),
            "{format}: {err}"
        );
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    }
    let out = Command::cargo_bin("rocegate")
        .unwrap()
        .args(["parse", "counters", "--format", "ethtool-z", "x"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("unknown format")
            && err.contains("sonic-pfc-counters")
            && err.contains("ethtool-m"),
        "{err}"
    );
}

/// Every fixture cut at many points, and with its digits made negative or
/// huge, parses or fails with an error naming the format: never a panic.
#[test]
fn truncated_and_corrupted_fixtures_never_panic() {
    use rocegate::counters::formats;
    for (file, format) in TABLE {
        let text =
            String::from_utf8_lossy(&std::fs::read(fixtures().join(file)).unwrap()).into_owned();
        let chars: Vec<char> = text.chars().collect();
        let step = (chars.len() / 40).max(1);
        let mut variants: Vec<String> = (0..chars.len())
            .step_by(step)
            .map(|n| chars[..n].iter().collect())
            .collect();
        variants.push(text.replace(" 0", " -0").replace(" 1", " -1"));
        variants.push(text.replace('7', "99999999999999999999999"));
        variants.push(text.replace(':', ""));
        for v in variants {
            let r = std::panic::catch_unwind(|| formats::parse(format, &v));
            match r {
                Err(_) => panic!("{file} ({format}) panicked on {v:?}"),
                Ok(Err(e)) => assert!(e.0.starts_with(format), "{file}: {e}"),
                Ok(Ok(_)) => {}
            }
        }
    }
}
