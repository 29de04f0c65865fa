//! Faults on the lab: sent over SSH through the linux driver, journaled,
//! healed, measured from iperf3's intervals; and a run killed at seeded
//! moments and at named failpoints, healed by `rocegate recover`.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::{events, gone_within, lab_processes, rocegate, root, run, sh, write, LAB};

const SWITCHES: [&str; 4] = ["leaf1", "leaf2", "spine1", "spine2"];

/// What is wrong with the fabric now: a lab switch port down (admin or
/// carrier), a BGP session not established, or a leaf without both spines'
/// next hops to the other leaf's host subnets (sessions come up before their
/// updates arrive: traffic started then finds no route). Empty when whole.
fn broken() -> Vec<String> {
    let mut bad = Vec::new();
    for sw in SWITCHES {
        let far = match sw {
            "leaf1" => "198.19.3.0/31 198.19.4.0/31",
            "leaf2" => "198.19.1.0/31 198.19.2.0/31",
            _ => "",
        };
        let read = format!(
            "for d in /sys/class/net/swp*; do echo \"@@port ${{d##*/}} $(cat $d/flags) $(cat $d/operstate)\"; done; \
             for p in {far}; do echo \"@@route $p $(ip route show $p | grep -c 'nexthop via')\"; done; \
             echo @@bgp; vtysh -c 'show bgp summary json'"
        );
        let o = sh(Command::new(root().join(LAB)).args(["exec", sw, "sh", "-c", &read]));
        let text = String::from_utf8_lossy(&o.stdout).to_string();
        let (ports, json) = text.split_once("@@bgp").unwrap_or((&text, ""));
        for l in ports.lines() {
            let w: Vec<&str> = l.split_whitespace().collect();
            if let ["@@port", name, flags, oper] = w.as_slice() {
                let admin =
                    u32::from_str_radix(flags.trim_start_matches("0x"), 16).unwrap_or(0) & 1;
                if admin == 0 || *oper != "up" {
                    bad.push(format!("{sw}:{name} flags {flags} {oper}"));
                }
            }
            if let ["@@route", prefix, hops] = w.as_slice() {
                if *hops != "2" {
                    bad.push(format!("{sw}: {hops} next hops to {prefix}"));
                }
            }
        }
        let v: Value = serde_json::from_str(json.trim()).unwrap_or(Value::Null);
        let peers = v["ipv4Unicast"]["peers"]
            .as_object()
            .cloned()
            .unwrap_or_default();
        if peers.len() < 2 {
            bad.push(format!("{sw}: {} bgp peers", peers.len()));
        }
        for (p, s) in peers {
            if s["state"] != "Established" {
                bad.push(format!("{sw}: bgp {p} {}", s["state"]));
            }
        }
    }
    bad
}

/// Polls until the fabric is whole; returns how long it took, or what is
/// still broken.
fn whole_within(within: Duration) -> Result<f64, Vec<String>> {
    let start = Instant::now();
    loop {
        let bad = broken();
        if bad.is_empty() {
            return Ok(start.elapsed().as_secs_f64());
        }
        if start.elapsed() > within {
            return Err(bad);
        }
        std::thread::sleep(Duration::from_millis(300));
    }
}

fn journal(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

fn open_in(path: &Path) -> usize {
    let j = journal(path);
    let healed: Vec<&Value> = j
        .iter()
        .filter(|e| e["event"] == "healed")
        .map(|e| &e["id"])
        .collect();
    j.iter()
        .filter(|e| e["event"] == "opened" && !healed.contains(&&e["id"]))
        .count()
}

/// The lab fault suite: an uplink flap and a leaf reset in each mode,
/// every one sent, healed and measured; the fabric whole afterwards.
pub fn faults_are_sent_measured_and_healed(tmp: &Path, inv: &Path) {
    let suite = root().join("suites/lab-faults.yaml");
    let j = tmp.join("journal/lab.jsonl");
    let out = tmp.join("faults");
    let (code, recs, text) = run(&out, inv, &suite, &["--journal", j.to_str().unwrap()]);
    let faults: Vec<&Value> = events(&recs, "verdict")
        .into_iter()
        .filter(|v| v["kind"] == "fault")
        .collect();
    for v in &faults {
        eprintln!("lab: {} {}: {}", v["test"], v["verdict"], v["message"]);
    }
    assert_eq!(code, 0, "{text}");
    assert_eq!(faults.len(), 4, "{text}");
    for v in &faults {
        let m = v["message"].as_str().unwrap();
        assert_eq!(v["verdict"], "pass", "{m}");
        assert!(
            m.contains("recovery: back to 80 % of the pre-fault level"),
            "{m}"
        );
        assert!(m.contains("back to its prior state"), "{m}");
        assert!(
            v["value"].as_f64().is_some(),
            "the recovery time is the value: {v}"
        );
    }
    // The counter ledger saw each real flap where it happened: a
    // link-down (carrier changes / 2) on the flapped uplink's two ends,
    // within the per-fault limit, and none anywhere else.
    let downs = |test: &str| -> Vec<String> {
        events(&recs, "ledger")
            .into_iter()
            .filter(|l| l["test"] == test)
            .filter(|l| {
                l["changes"].as_array().is_some_and(|c| {
                    c.iter()
                        .any(|d| d["canonical"] == "link_down" && d["vendor"] != "link_downed")
                })
            })
            .map(|l| {
                format!(
                    "{}:{}",
                    l["host"].as_str().unwrap(),
                    l["device"].as_str().unwrap()
                )
            })
            .collect()
    };
    let flap = downs("uplink-flap");
    assert!(flap.contains(&"leaf1:swp31".to_string()), "{flap:?}");
    assert!(flap.contains(&"spine1:swp1".to_string()), "{flap:?}");
    assert!(
        flap.iter()
            .all(|d| d == "leaf1:swp31" || d == "spine1:swp1"),
        "link-downs outside the flapped link: {flap:?}"
    );
    let wrong: Vec<&Value> = events(&recs, "finding")
        .into_iter()
        .filter(|f| f["check"] == "counters.link_down" && f["outcome"] == "deviation")
        .collect();
    assert!(wrong.is_empty(), "{wrong:#?}");
    // Every fault opened was healed, by the run itself.
    let entries = journal(&j);
    let opened = entries.iter().filter(|e| e["event"] == "opened").count();
    assert_eq!(opened, 4, "{entries:?}");
    assert_eq!(open_in(&j), 0, "{entries:?}");
    assert!(entries
        .iter()
        .filter(|e| e["event"] == "healed")
        .all(|e| e["by"] == "run"));
    // The routing restart saw its sessions drop: the prior state it
    // journaled had them all established.
    assert!(entries.iter().any(|e| e["prior"]
        .as_str()
        .unwrap_or("")
        .contains("bgp 2/2 established")));
    whole_within(Duration::from_secs(20)).unwrap_or_else(|b| panic!("after the suite: {b:?}"));
    assert!(
        lab_processes("rocegate-deadman").is_empty(),
        "dead-man timers left armed"
    );
}

/// A tiny seeded generator (the test must not depend on rocegate's).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}

fn kill_suite(tmp: &Path, mode: &str) -> std::path::PathBuf {
    write(
        tmp,
        &format!("kill-{mode}.yaml"),
        &format!(
            r#"
suite: {{name: kill-{mode}}}
defaults: {{timeout: 12s}}
tests:
  - name: tcp
    iperf: {{duration: 4s, streams: 1, interval: 1s}}
    pattern: cross-leaf
    nodes: host[1,3]
  - name: reset
    fault:
      leaf_reset: {{switch: leaf2, mode: {mode}}}
      during: tcp
      at: 1s
      for: 2s
    expect: {{workload: may_fail}}
"#
        ),
    )
}

/// Starts `rocegate run`; returns it once the fault test has begun.
fn start_until_fault(
    inv: &Path,
    suite: &Path,
    j: &Path,
    out: &Path,
    failpoint: Option<&str>,
) -> std::process::Child {
    let mut cmd = rocegate();
    cmd.args(["run", "--progress", "lines", "--out"])
        .arg(out)
        .arg("-i")
        .arg(inv)
        .arg("-s")
        .arg(suite)
        .arg("--journal")
        .arg(j)
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    if let Some(f) = failpoint {
        cmd.env("ROCEGATE_FAILPOINT", f);
    }
    let mut child = cmd.spawn().expect("rocegate run");
    // Progress lines go to stderr; line mode prints one as each test
    // starts (`… · reset (2/2) 0% · …`).
    let progress = child.stderr.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(progress).lines().map_while(Result::ok) {
            if line.contains("· reset (") {
                let _ = tx.send(());
            }
        }
    });
    rx.recv_timeout(Duration::from_secs(30))
        .expect("the fault test never started");
    child
}

fn recover(inv: &Path, j: &Path) -> String {
    let o = sh(rocegate()
        .args(["recover", "-i"])
        .arg(inv)
        .arg("--journal")
        .arg(j));
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(o.status.success(), "recover failed: {text}");
    text
}

/// SIGKILL at ten seeded moments of a leaf reset (every mode in turn),
/// and at each named failpoint; after each, `rocegate recover` and the
/// fabric is whole again: every lab link up, every BGP session established.
pub fn sigkill_anywhere_then_recover_heals(tmp: &Path, inv: &Path) {
    let j = tmp.join("journal/kill.jsonl");
    let modes = ["ports_down", "routing_restart", "reload"];
    let mut rng = Lcg(20261122);
    let mut left_open = 0;
    for i in 0..10 {
        let mode = modes[i % 3];
        let suite = kill_suite(tmp, mode);
        // The fault begins 1 s into the test and is undone at 3 s; the
        // device settles after that: kill anywhere in the first 5 s.
        let at = 5.0 * rng.next();
        let out = tmp.join(format!("kill-{i}"));
        let mut child = start_until_fault(inv, &suite, &j, &out, None);
        std::thread::sleep(Duration::from_secs_f64(at));
        // SAFETY: our own child.
        unsafe { libc::kill(child.id() as i32, libc::SIGKILL) };
        let _ = child.wait();
        let open = open_in(&j);
        left_open += open;
        let said = recover(inv, &j);
        let took = whole_within(Duration::from_secs(30)).unwrap_or_else(|b| {
            panic!("kill {i} ({mode}, {at:.2} s): still broken after recover: {b:?}\n{said}")
        });
        assert_eq!(open_in(&j), 0, "kill {i}: {said}");
        assert!(
            lab_processes("rocegate-deadman").is_empty(),
            "kill {i}: a dead-man timer outlived recover"
        );
        eprintln!("lab: kill {i} ({mode}) at {at:.2} s into the fault test: {open} open, whole {took:.1} s after recover");
    }
    eprintln!("lab: {left_open} open faults over 10 kills, all healed by recover");
    for (k, point) in ["journal-written", "fault-applied", "undo-sent"]
        .iter()
        .enumerate()
    {
        let suite = kill_suite(tmp, modes[k]);
        let out = tmp.join(format!("failpoint-{point}"));
        let mut child = start_until_fault(inv, &suite, &j, &out, Some(point));
        let status = child.wait().unwrap();
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(status.signal(), Some(libc::SIGKILL), "{point}: {status:?}");
        assert_eq!(open_in(&j), 1, "{point}: the fault is open in the journal");
        if *point == "fault-applied" {
            // The change is made and the device's own timer is armed.
            assert!(
                !lab_processes("rocegate-deadman").is_empty(),
                "no dead-man armed"
            );
            assert!(
                !broken().is_empty(),
                "{point}: the fault should be in place"
            );
        }
        // A new run refuses while the fault is open.
        let (code, _, text) = run(
            &tmp.join(format!("refused-{point}")),
            inv,
            &suite,
            &["--journal", j.to_str().unwrap()],
        );
        assert_eq!(code, 2, "{text}");
        assert!(
            text.contains("are still open, from a run that was killed")
                && text.contains("rocegate recover -i"),
            "{text}"
        );
        let said = recover(inv, &j);
        assert!(said.contains("healed"), "{said}");
        whole_within(Duration::from_secs(30))
            .unwrap_or_else(|b| panic!("{point}: still broken after recover: {b:?}"));
        assert!(
            lab_processes("rocegate-deadman").is_empty(),
            "{point}: dead-man left armed"
        );
        eprintln!("lab: failpoint {point}: open fault healed by recover");
    }
    // SIGTERM mid-outage, and a panic in rocegate right after the change:
    // the run itself heals before it exits, and says so.
    for (how, point) in [("SIGTERM", None), ("panic", Some("fault-applied:panic"))] {
        let suite = kill_suite(tmp, "ports_down");
        let out = tmp.join(format!("heal-{how}"));
        let mut child = start_until_fault(inv, &suite, &j, &out, point);
        if point.is_none() {
            std::thread::sleep(Duration::from_millis(1800));
            // SAFETY: our own child.
            unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
        }
        let status = child.wait().unwrap();
        assert!(!status.success(), "{how}: {status:?}");
        let entries = journal(&j);
        let last = entries.last().unwrap();
        assert_eq!(last["event"], "healed", "{how}: {entries:?}");
        assert_eq!(last["by"], "run", "{how}: the run healed it itself");
        assert_eq!(open_in(&j), 0, "{how}");
        let took = whole_within(Duration::from_secs(30))
            .unwrap_or_else(|b| panic!("{how}: still broken after the run healed: {b:?}"));
        eprintln!("lab: {how} during a fault: healed by the run, whole {took:.1} s later");
    }
    // What the killed runs left on the hosts dies by its own dead-man.
    let left = gone_within("iperf3", Duration::from_secs(30));
    assert!(left.is_empty(), "iperf3 left behind: {left:?}");
}

/// Sessions `switch`'s FRR has dropped with `peer` so far
/// (`connectionsDropped` in `show bgp summary json`).
fn dropped(switch: &str, peer: &str) -> u64 {
    let o = sh(Command::new(root().join(LAB)).args([
        "exec",
        switch,
        "vtysh",
        "-c",
        "show bgp summary json",
    ]));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap_or(Value::Null);
    v["ipv4Unicast"]["peers"][peer]["connectionsDropped"]
        .as_u64()
        .unwrap_or_else(|| panic!("{switch}: no session with {peer}: {v}"))
}

/// `spine_loss` and `route_change` on real FRR, under cross-leaf TCP: spine2
/// loses every port; leaf1's BGP session over swp31 (to spine1, neighbour
/// 198.19.111.1, local AS 65101, found by the driver in its state read) is
/// shut and unshut with vtysh. Both are journaled, healed by the run and
/// measured; the withdrawn link never goes down, and exactly that session
/// was dropped once.
pub fn spine_loss_and_route_change_on_real_frr(tmp: &Path, inv: &Path) {
    let suite = write(
        tmp,
        "spine-route.yaml",
        r#"
suite: {name: lab-spine-route}
defaults: {timeout: 60s}
tests:
  - name: cross-tcp
    iperf: {duration: 8s, streams: 2, interval: 1s}
    pattern: cross-leaf
    expect: {min_pct_of_line_rate: 50}
  - name: spine-loss
    fault: {spine_loss: {switch: spine2, mode: ports_down}, during: cross-tcp, at: 3s, for: 2s}
    expect: {workload: completes, recovers_within: 6s, min_fraction: 0.8}
  - name: route-change
    fault: {route_change: {link: leaf1:swp31}, during: cross-tcp, at: 3s, for: 2s}
    expect: {workload: completes, recovers_within: 6s, min_fraction: 0.8}
"#,
    );
    let j = tmp.join("journal/spine-route.jsonl");
    let shut_before = dropped("leaf1", "198.19.111.1");
    let other_before = dropped("leaf2", "198.19.121.1");
    let (code, recs, text) = run(
        &tmp.join("spine-route"),
        inv,
        &suite,
        &["--journal", j.to_str().unwrap()],
    );
    let faults: Vec<&Value> = events(&recs, "verdict")
        .into_iter()
        .filter(|v| v["kind"] == "fault")
        .collect();
    for v in &faults {
        eprintln!("lab: {} {}: {}", v["test"], v["verdict"], v["message"]);
    }
    assert_eq!(code, 0, "{text}");
    assert_eq!(faults.len(), 2, "{text}");
    for v in &faults {
        let m = v["message"].as_str().unwrap();
        assert_eq!(v["verdict"], "pass", "{m}");
        assert!(m.contains("back to its prior state"), "{m}");
    }
    // The driver found the session over swp31 and its AS on the device.
    let entries = journal(&j);
    let route = entries
        .iter()
        .find(|e| e["event"] == "opened" && e["test"] == "route-change")
        .unwrap_or_else(|| panic!("{entries:?}"));
    assert_eq!(route["what"], "leaf1: bgp session over swp31 shut");
    assert!(
        route["prior"]
            .as_str()
            .unwrap()
            .contains("swp31 admin up 1/1; bgp 1/1 established"),
        "{route}"
    );
    let undo = route["undo"].to_string();
    assert!(
        undo.contains("router bgp 65101") && undo.contains("no neighbor 198.19.111.1 shutdown"),
        "{undo}"
    );
    assert_eq!(open_in(&j), 0, "{entries:?}");
    // The shut session was dropped (once, by the route change); the far
    // leaf's session to spine1 was touched by neither fault.
    assert_eq!(dropped("leaf1", "198.19.111.1"), shut_before + 1);
    assert_eq!(dropped("leaf2", "198.19.121.1"), other_before);
    // Link-downs: every link of spine2 for the spine loss, and none for the
    // route change: its link stayed up while routing withdrew it.
    let downs = |test: &str| -> Vec<String> {
        events(&recs, "ledger")
            .into_iter()
            .filter(|l| l["test"] == test)
            .filter(|l| {
                l["changes"].as_array().is_some_and(|c| {
                    c.iter()
                        .any(|d| d["canonical"] == "link_down" && d["vendor"] != "link_downed")
                })
            })
            .map(|l| {
                format!(
                    "{}:{}",
                    l["host"].as_str().unwrap(),
                    l["device"].as_str().unwrap()
                )
            })
            .collect()
    };
    let mut spine = downs("spine-loss");
    spine.sort();
    assert_eq!(
        spine,
        ["leaf1:swp32", "leaf2:swp32", "spine2:swp1", "spine2:swp2"],
        "link-downs of the spine loss"
    );
    assert_eq!(downs("route-change"), Vec::<String>::new());
    whole_within(Duration::from_secs(20)).unwrap_or_else(|b| panic!("after the faults: {b:?}"));
    assert!(
        lab_processes("rocegate-deadman").is_empty(),
        "dead-man timers left armed"
    );
}
