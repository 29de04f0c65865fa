//! `rocegate run` on the emulated pod on Cisco ACI
//! (inventory/emulated-aci.yaml): every switch is read and changed through
//! the APIC's REST API, answered by the emulated fabric from the same model
//! as the `linux` switches (src/emu/aci_out.rs).

mod common;
use common::emulated::ledger_value;
use std::path::Path;

const POD: &str = "inventory/emulated-aci.yaml";

fn run(dir: &Path, extra: &[&str]) -> Vec<serde_json::Value> {
    common::emulated::run(POD, dir, extra)
}

/// suites/acceptance.yaml without its leaf reset: ACI has no routing
/// restart, and taking a leaf's ports down would take its fabric ports out
/// of service too, which the aci platform refuses.
fn acceptance_for_aci(dir: &Path) -> std::path::PathBuf {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("suites/acceptance.yaml"),
    )
    .unwrap();
    let cut = text
        .find("  # A leaf's routing stopped")
        .expect("suites/acceptance.yaml still ends with its leaf-reset test");
    assert!(text[cut..].contains("- name: leaf-reset"));
    let path = dir.join("acceptance-aci.yaml");
    std::fs::write(&path, &text[..cut]).unwrap();
    path
}

fn records_of<'a>(
    records: &'a [serde_json::Value],
    event: &str,
    test: &str,
) -> impl Iterator<Item = &'a serde_json::Value> {
    let (event, test) = (event.to_string(), test.to_string());
    records
        .iter()
        .filter(move |r| r["event"] == event.as_str() && r["test"] == test.as_str())
}

/// The acceptance suite passes; every switch's counters come from its
/// APIC (RMON octets that grow with the traffic through them), the audit
/// reads every switch port there, and the NIC flap is ridden out.
#[test]
fn acceptance_on_aci_reads_counters_through_the_apic() {
    let tmp = tempfile::tempdir().unwrap();
    let suite = acceptance_for_aci(tmp.path());
    let records = run(
        &tmp.path().join("run"),
        &["--suite", suite.to_str().unwrap()],
    );
    let ledger: Vec<&serde_json::Value> = records
        .iter()
        .filter(|r| r["event"] == "ledger" && r["source"] == "APIC rmon counters")
        .collect();
    let switches: std::collections::BTreeSet<&str> =
        ledger.iter().map(|r| r["host"].as_str().unwrap()).collect();
    assert_eq!(switches.len(), 20, "{switches:?}");
    assert!(ledger.iter().any(|r| r["test"] == "rail-bw"
        && r["host"].as_str().unwrap().contains("-leaf")
        && ledger_value(r, "tx_bytes") > 100_000_000_000));
    // Traffic across the spines is counted at the spines' ports too.
    assert!(ledger.iter().any(|r| r["test"] == "cross-leaf-bw"
        && r["host"].as_str().unwrap().starts_with("spine")
        && ledger_value(r, "rx_bytes") > 10_000_000_000));
    // Every switch port was audited, none failed.
    let ports: Vec<&serde_json::Value> = records_of(&records, "verdict", "audit")
        .filter(|r| r["component"].as_str().unwrap().contains(":eth1/"))
        .collect();
    assert_eq!(ports.len(), 16 * 16 + 4 * 32);
    assert!(ports.iter().all(|r| r["verdict"] != "fail"), "{ports:?}");
    assert!(records_of(&records, "verdict", "link-flap").any(|r| r["verdict"] == "pass"));
}

const FAULT: &str = "suite:
  name: aci-port-out-of-service
gate:
  fail_on: [fail, error]
tests:
  - name: rail-bw
    perftest: {tool: ib_write_bw, size: 1M, duration: 20s, qps: 1}
    pattern: rail-pairs
    rails: [0]
    expect: {min_pct_of_line_rate: 50}
  - name: port-out-of-service
    fault:
      link_flap:
        target: r0-leaf1:eth1/3
      during: rail-bw
      at: 5s
      for: 5s
    expect: {workload: may_fail}
  - name: rail-bw-after
    perftest: {tool: ib_write_bw, size: 1M, duration: 5s, qps: 1}
    pattern: rail-pairs
    rails: [0]
    expect: {min_pct_of_line_rate: 90}
";

/// A link flap on an ACI leaf port: a configuration snapshot, the
/// out-of-service object created (the pair through that port loses its
/// link and fails), then its exact DN deleted; the pair is back at line
/// rate in the next test, and the port's counters stopped growing while it
/// was out of service.
#[test]
fn link_flap_takes_the_port_out_of_service_and_back() {
    let tmp = tempfile::tempdir().unwrap();
    let suite = tmp.path().join("aci-faults.yaml");
    std::fs::write(&suite, FAULT).unwrap();
    let records = run(
        &tmp.path().join("run"),
        &["--suite", suite.to_str().unwrap()],
    );
    let sample = records_of(&records, "sample", "port-out-of-service")
        .find(|r| r["component"] == "link flap r0-leaf1:eth1/3")
        .expect("the fault's sample");
    let cmds: Vec<&str> = sample["commands"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap())
        .collect();
    let dn = "/api/mo/uni/fabric/outofsvc/rsoosPath-[topology/pod-{pod}/paths-{node}/pathep-[eth1/3]].json";
    assert_eq!(cmds.len(), 3, "{cmds:?}");
    assert!(cmds[0].contains("configexp-rocegate.json"), "{cmds:?}");
    assert!(
        cmds[1].contains(dn) && cmds[1].contains("orchestrator:rocegate"),
        "{cmds:?}"
    );
    assert!(cmds[2].contains("\"method\":\"DELETE\""), "{cmds:?}");
    assert!(cmds[2].contains(dn), "{cmds:?}");
    // The APIC took every request (its raw answers).
    let raw = std::fs::read_to_string(
        tmp.path()
            .join("run")
            .join(sample["raw"][0].as_str().unwrap()),
    )
    .unwrap();
    assert_eq!(
        raw.matches(r#"[{"status":200,"body":"{\"imdata\":[],\"totalCount\":\"0\"}"}]"#)
            .count(),
        3,
        "{raw}"
    );
    let verdict = records_of(&records, "verdict", "port-out-of-service")
        .find(|r| r["kind"] == "fault")
        .unwrap();
    assert_eq!(verdict["verdict"], "pass", "{verdict}");
    // Only the pair through eth1/3 (gpu003, gpu004) lost its link.
    assert_eq!(verdict["value"], 1.0, "{verdict}");
    let failed = records_of(&records, "sample", "port-out-of-service")
        .find(|r| r["failure"].is_object())
        .unwrap();
    assert_eq!(failed["component"], "gpu003:mlx5_0<->gpu004:mlx5_0");
    // Back in service: the same pair at line rate afterwards.
    assert!(records_of(&records, "verdict", "rail-bw-after")
        .any(|r| r["component"] == "gpu003:mlx5_0<->gpu004:mlx5_0" && r["verdict"] == "pass"));
    // The port's APIC counters: a full test's worth of traffic before,
    // less while it was out of service for 5 of the fault test's seconds.
    let tx = |test: &str| {
        records
            .iter()
            .find(|r| {
                r["event"] == "ledger"
                    && r["test"] == test
                    && r["host"] == "r0-leaf1"
                    && r["device"] == "eth1/3"
                    && r["source"] == "APIC rmon counters"
            })
            .map(|r| ledger_value(r, "tx_bytes"))
            .unwrap_or_else(|| panic!("no APIC ledger of r0-leaf1:eth1/3 in {test}"))
    };
    let (before, during) = (tx("rail-bw"), tx("port-out-of-service"));
    assert!(before > 500_000_000_000, "{before}");
    assert!(during > 0 && during < before / 2, "{during} of {before}");
}

/// A leaf planted with PFC off: the APIC binds its ports to the off
/// interface policy, and the audit fails exactly that leaf, all 16 ports,
/// on PFC.
#[test]
fn planted_pfc_off_is_found_through_the_apic() {
    let tmp = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(POD)).unwrap();
    let inv = tmp.path().join("pod.yaml");
    std::fs::write(
        &inv,
        format!("{text}emulation:\n  defects:\n  - pfc_off: {{switch: r3-leaf2}}\n"),
    )
    .unwrap();
    let suite = tmp.path().join("audit.yaml");
    std::fs::write(
        &suite,
        "suite:\n  name: audit\ngate:\n  fail_on: [fail, error]\ntests:\n  - name: audit\n    audit: {}\n",
    )
    .unwrap();
    let (code, stdout, records) = common::emulated::run_any(
        inv.to_str().unwrap(),
        &tmp.path().join("run"),
        &["--suite", suite.to_str().unwrap()],
    );
    assert_ne!(code, Some(0), "{stdout}");
    let pfc: Vec<&serde_json::Value> = records_of(&records, "verdict", "audit")
        .filter(|r| {
            r["verdict"] == "fail"
                && r["message"]
                    .as_str()
                    .unwrap()
                    .contains("switch.pfc deviation")
        })
        .collect();
    assert_eq!(pfc.len(), 1, "{pfc:?}");
    assert_eq!(pfc[0]["component"], "r3-leaf2");
    let said = pfc[0]["message"].as_str().unwrap();
    assert!(
        said.contains("switch.pfc deviation: 16 port(s)") && said.contains("PFC is off"),
        "{said}"
    );
}
