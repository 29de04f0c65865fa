//! rocegate against the namespace lab (tests/lab/lab.sh): four hosts, two
//! leaves and two spines in network namespaces, real sshd on each, FRR BGP
//! with ECMP, links shaped with tc, real iperf3 traffic. One test builds the
//! lab, runs every check in order (they share it and its traffic would
//! disturb each other) and tears it down, also when a check fails.
//!
//! Needs root and the Debian packages `.ci/run` installs; without them it
//! says exactly what is missing and skips.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

#[path = "lab/faults.rs"]
mod faults;
#[path = "lab/slurm.rs"]
mod slurm;

const LAB: &str = "tests/lab/lab.sh";
const HOSTS: [&str; 4] = ["host1", "host2", "host3", "host4"];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Tears the lab down when the test ends, however it ends.
struct Lab;

impl Drop for Lab {
    fn drop(&mut self) {
        let _ = Command::new(root().join(LAB)).arg("down").status();
    }
}

/// Why the lab cannot be built here, if it cannot.
fn missing() -> Option<String> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Some("the lab needs root (network namespaces, sshd)".into());
    }
    let need = [
        ("/usr/sbin/sshd", "openssh-server"),
        ("/usr/lib/frr/zebra", "frr"),
        ("/usr/lib/frr/bgpd", "frr"),
        ("/usr/bin/iperf3", "iperf3"),
        ("/usr/sbin/lldpd", "lldpd"),
        ("/usr/bin/ib_write_bw", "perftest"),
        ("/usr/bin/mpirun", "openmpi-bin"),
    ];
    let absent: Vec<String> = need
        .iter()
        .filter(|(p, _)| !Path::new(p).exists())
        .map(|(p, pkg)| format!("{p} (apt-get install {pkg})"))
        .collect();
    (!absent.is_empty()).then(|| format!("not installed: {}", absent.join(", ")))
}

fn sh(cmd: &mut Command) -> Output {
    cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"))
}

fn lab(args: &[&str]) -> Output {
    let o = sh(Command::new(root().join(LAB)).args(args));
    assert!(
        o.status.success(),
        "lab.sh {args:?} failed:\n{}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    o
}

fn rocegate() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_rocegate"));
    c.current_dir(root());
    c
}

/// `rocegate run` into `out`; returns its exit code and the records.
fn run(out: &Path, inventory: &Path, suite: &Path, extra: &[&str]) -> (i32, Vec<Value>, String) {
    let o = sh(rocegate()
        .args(["run", "--progress", "lines", "--out"])
        .arg(out)
        .arg("-i")
        .arg(inventory)
        .arg("-s")
        .arg(suite)
        .args(extra));
    let text = format!(
        "{}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    (o.status.code().unwrap_or(-1), records(out), text)
}

fn records(out: &Path) -> Vec<Value> {
    std::fs::read_to_string(out.join("results.jsonl"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

fn events<'a>(recs: &'a [Value], kind: &str) -> Vec<&'a Value> {
    recs.iter().filter(|r| r["event"] == kind).collect()
}

/// The verdicts of the tests themselves, without each test's counter
/// ledger verdict (kind `counters`: `not available` on the lab, whose veth
/// NICs have no RDMA counters).
fn test_verdicts(recs: &[Value]) -> Vec<&Value> {
    events(recs, "verdict")
        .into_iter()
        .filter(|v| v["kind"] != "counters")
        .collect()
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

/// Every process in a lab namespace whose command line contains `needle`,
/// as `(namespace, pid, command line)`. The namespaces share one process
/// table, so `ip netns pids` is what tells them apart.
fn lab_processes(needle: &str) -> Vec<(String, u32, String)> {
    let list = sh(Command::new("ip").args(["netns", "list"]));
    let mut found = Vec::new();
    for line in String::from_utf8_lossy(&list.stdout).lines() {
        let Some(ns) = line
            .split_whitespace()
            .next()
            .filter(|n| n.starts_with("rgl-"))
        else {
            continue;
        };
        let pids = sh(Command::new("ip").args(["netns", "pids", ns]));
        for pid in String::from_utf8_lossy(&pids.stdout).split_whitespace() {
            let Ok(pid) = pid.parse::<u32>() else {
                continue;
            };
            let cmd = std::fs::read(format!("/proc/{pid}/cmdline"))
                .map(|b| String::from_utf8_lossy(&b).replace('\0', " "))
                .unwrap_or_default();
            if cmd.contains(needle) {
                found.push((ns.to_string(), pid, cmd.trim().to_string()));
            }
        }
    }
    found
}

/// Polls until no lab process matches `needle`; returns what is left.
fn gone_within(needle: &str, within: Duration) -> Vec<(String, u32, String)> {
    let deadline = Instant::now() + within;
    loop {
        let left = lab_processes(needle);
        if left.is_empty() || Instant::now() > deadline {
            return left;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// Polls until `n` lab processes match `needle`.
fn wait_for(needle: &str, n: usize, within: Duration) -> bool {
    let deadline = Instant::now() + within;
    while Instant::now() < deadline {
        if lab_processes(needle).len() >= n {
            return true;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    false
}

fn spawn(cmd: &mut Command) -> Child {
    cmd.stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("{cmd:?}: {e}"))
}

fn signal(child: &Child, sig: i32) {
    // SAFETY: kill has no memory preconditions; the pid is our child's.
    unsafe { libc::kill(child.id() as i32, sig) };
}

#[test]
fn the_lab_over_real_ssh() {
    if let Some(why) = missing() {
        eprintln!("skipped: {why}");
        return;
    }
    let _lab = Lab;
    lab(&["up"]);
    let tmp = tempfile::tempdir().unwrap();
    let inv = root().join("inventory/lab.yaml");
    let suite = root().join("suites/lab.yaml");

    // ROCEGATE_LAB_ONLY=a,b runs only the checks whose names contain a or
    // b (one check while working on it; CI runs them all).
    let only = std::env::var("ROCEGATE_LAB_ONLY").ok();
    macro_rules! check {
        ($f:path, $($arg:expr),*) => {
            if only
                .as_deref()
                .is_none_or(|o| o.split(',').any(|w| stringify!($f).contains(w)))
            {
                $f($($arg),*);
            } else {
                eprintln!("lab: skipped {} (ROCEGATE_LAB_ONLY)", stringify!($f));
            }
        };
    }
    let tmp = tmp.path();
    check!(the_suite_passes_at_the_shaped_rates, tmp, &inv, &suite);
    check!(a_half_speed_link_fails, tmp, &inv, &suite);
    check!(perftest_without_rdma_is_an_error_naming_the_host, tmp, &inv);
    check!(discover_reads_the_cabling_and_refuses_without_rdma, tmp);
    check!(
        the_audit_names_a_swapped_cable_and_what_veth_cannot_answer,
        &inv
    );
    check!(unreachable_refused_and_hung_each_get_their_error, tmp, &inv);
    check!(sigterm_mid_run_leaves_nothing_behind, tmp, &inv);
    check!(the_dead_man_cleans_up_after_sigkill, &inv);
    check!(mpirun_launches_across_the_lab, &inv);
    check!(faults::faults_are_sent_measured_and_healed, tmp, &inv);
    check!(faults::spine_loss_and_route_change_on_real_frr, tmp, &inv);
    check!(faults::sigkill_anywhere_then_recover_heals, tmp, &inv);
    match slurm::missing() {
        Some(why) => eprintln!("lab: skipped the Slurm checks: {why}"),
        None => {
            lab(&["slurm-up"]);
            check!(
                slurm::the_suite_over_slurm_gives_the_ssh_verdicts,
                tmp,
                &suite
            );
            check!(slurm::sigkill_over_slurm_leaves_no_step, tmp);
            check!(
                slurm::apply_drain_drains_the_suspect_and_a_drained_node_errs,
                tmp,
                &suite
            );
        }
    }
}

/// Findings of `rocegate audit --json` over real SSH on the lab.
fn audit_findings(inv: &Path, extra: &[&str]) -> Vec<Value> {
    let o = sh(rocegate()
        .args(["audit", "--json", "-i"])
        .arg(inv)
        .args(extra));
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "audit: not JSON ({e}): {}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )
    })
}

/// The audit over real SSH: real lldpd confirms the cabling, and two host
/// cables swapped at their leaf (`lab.sh swap`: the leaf's veth ends trade
/// names) are named as a swap with both NICs and both ports, then the
/// cabling is put back. What veth and the inbox kernel cannot answer (PFC
/// through dcb, transceiver diagnostics, an RDMA GID) is `not available`
/// with the command and the reason, never a pass.
fn the_audit_names_a_swapped_cable_and_what_veth_cannot_answer(inv: &Path) {
    let all = audit_findings(inv, &[]);
    let find = |check: &str, component: &str| {
        all.iter()
            .find(|f| f["check"] == check && f["component"] == component)
            .unwrap_or_else(|| panic!("no {check} finding for {component}: {all:#?}"))
    };
    assert_eq!(find("cabling.lldp", "host1:mlx5_0")["outcome"], "ok");
    assert_eq!(find("cabling.lldp", "leaf1:swp31")["outcome"], "ok");
    let pfc = find("nic.pfc", "host1:mlx5_0");
    assert_eq!(pfc["outcome"], "not_available", "{pfc:#}");
    assert!(
        pfc["message"]
            .as_str()
            .unwrap()
            .contains("dcb -j pfc show dev eth1"),
        "{pfc:#}"
    );
    assert_eq!(find("optics", "leaf1:swp1")["outcome"], "not_available");
    assert_eq!(find("switch.mtu", "leaf1:swp1")["outcome"], "ok");

    lab(&["swap", "host1", "host2"]);
    // lldpd re-advertises within its 5 s interval; poll with a deadline.
    let deadline = Instant::now() + Duration::from_secs(45);
    let swap = loop {
        let f = audit_findings(inv, &["--check", "cabling"]);
        if let Some(s) = f
            .iter()
            .find(|x| x["check"] == "cabling.swap" && x["component"] == "host1:mlx5_0")
        {
            break s.clone();
        }
        assert!(
            Instant::now() < deadline,
            "the swap was not named within 45 s: {f:#?}"
        );
        std::thread::sleep(Duration::from_secs(2));
    };
    let m = swap["message"].as_str().unwrap();
    for name in ["host1:mlx5_0", "host2:mlx5_0", "leaf1:swp1", "leaf1:swp2"] {
        assert!(m.contains(name), "{m}");
    }
    assert_eq!(swap["outcome"], "deviation");
    lab(&["swap", "host1", "host2"]);
    let deadline = Instant::now() + Duration::from_secs(45);
    loop {
        let f = audit_findings(inv, &["--check", "cabling"]);
        if f.iter().all(|x| x["outcome"] == "ok") {
            break;
        }
        assert!(Instant::now() < deadline, "not put back: {f:#?}");
        std::thread::sleep(Duration::from_secs(2));
    }
}

/// The lab suite over real SSH: every pair within ±10 % of the 1 Gb/s its
/// host links are shaped to; every host and switch answered the preflight
/// with its own hostname.
fn the_suite_passes_at_the_shaped_rates(tmp: &Path, inv: &Path, suite: &Path) {
    let (code, recs, text) = run(&tmp.join("pass"), inv, suite, &[]);
    assert_eq!(code, 0, "{text}");
    let pre = events(&recs, "preflight");
    assert_eq!(pre.len(), 8, "4 hosts and 4 switches: {pre:?}");
    for p in &pre {
        assert_eq!(p["reachable"], true, "{p}");
        assert_eq!(p["hostname"], p["host"], "its own UTS namespace: {p}");
    }
    let verdicts = test_verdicts(&recs);
    assert_eq!(verdicts.len(), 6, "six host pairs: {text}");
    for v in verdicts {
        let gbps = v["value"].as_f64().unwrap();
        assert_eq!(v["verdict"], "pass", "{v}");
        assert!(
            (0.9..=1.1).contains(&gbps),
            "{}: {gbps} Gb/s",
            v["component"]
        );
    }
    eprintln!("lab: suite passed at the shaped rates");
}

/// host4's link shaped to half: every pair with host4 fails at about half,
/// the others still pass.
fn a_half_speed_link_fails(tmp: &Path, inv: &Path, suite: &Path) {
    lab(&["shape", "host4", "500mbit"]);
    let (code, recs, text) = run(&tmp.join("half"), inv, suite, &[]);
    lab(&["shape", "host4", "default"]);
    assert_eq!(code, 1, "{text}");
    for v in test_verdicts(&recs) {
        let comp = v["component"].as_str().unwrap();
        let gbps = v["value"].as_f64().unwrap_or(0.0);
        if comp.contains("host4") {
            assert_eq!(v["verdict"], "fail", "{v}");
            assert!((0.4..0.55).contains(&gbps), "{comp}: {gbps}");
        } else {
            assert_eq!(v["verdict"], "pass", "{v}");
        }
    }
    eprintln!("lab: the half-speed link failed its tests");
}

/// Debian's perftest runs on a lab host and finds no RDMA device: an
/// `error` verdict that says so and names the host, not a pass or a fail.
fn perftest_without_rdma_is_an_error_naming_the_host(tmp: &Path, inv: &Path) {
    let suite = write(
        tmp,
        "rdma.yaml",
        "suite: {name: lab-rdma}\ndefaults: {timeout: 20s}\ntests:\n  - name: rdma-bw\n    perftest: {tool: ib_write_bw, size: 64K, duration: 2s}\n    pattern: rail-pairs\n",
    );
    let (code, recs, text) = run(&tmp.join("rdma"), inv, &suite, &[]);
    assert_eq!(code, 1, "{text}");
    let pre = events(&recs, "preflight");
    assert!(
        pre.iter()
            .any(|p| p["problems"].to_string().contains("no RDMA device")),
        "the preflight says it first: {pre:?}"
    );
    let verdicts = test_verdicts(&recs);
    assert_eq!(verdicts.len(), 2, "{text}");
    for v in verdicts {
        let msg = v["message"].as_str().unwrap();
        assert_eq!(v["verdict"], "error", "{v}");
        assert!(msg.contains("no_device"), "{msg}");
        assert!(
            HOSTS.iter().any(|h| msg.contains(h)),
            "names the host: {msg}"
        );
    }
    eprintln!("lab: perftest without RDMA is an error naming the host");
}

/// One run with a fifth host nobody answers for, one with a key the hosts
/// refuse, and one with a command that hangs: each gives its own error and
/// the rest of the run goes on; nothing is left running.
/// `inventory import` from the operator's Ansible view of the lab (the
/// `--list` JSON, so no Ansible is needed here), then `inventory discover`
/// over real ssh: every host's LLDP cabling is read and shown, and since
/// the lab kernel has no RDMA, discover names each host, exits 2 and
/// writes nothing.
fn discover_reads_the_cabling_and_refuses_without_rdma(tmp: &Path) {
    let hostvars: Vec<String> = (1..=4)
        .map(|i| format!(r#""host{i}": {{"ansible_host": "198.18.0.1{i}"}}"#))
        .collect();
    let json = format!(
        r#"{{"_meta": {{"hostvars": {{{}}}}},
            "all": {{"children": ["hosts"], "vars": {{"ansible_user": "root",
              "ansible_ssh_private_key_file": "/run/rocegate-lab/id_ed25519",
              "ansible_ssh_common_args": "-o StrictHostKeyChecking=yes -o UserKnownHostsFile=/run/rocegate-lab/known_hosts"}}}},
            "hosts": {{"hosts": ["host1", "host2", "host3", "host4"]}}}}"#,
        hostvars.join(", ")
    );
    let list = write(tmp, "lab-ansible.json", &json);
    let skeleton = tmp.join("lab-skeleton.yaml");
    let o = sh(rocegate()
        .args(["inventory", "import", "--ansible"])
        .arg(&list)
        .arg("-o")
        .arg(&skeleton));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = tmp.join("lab-discovered.yaml");
    let o = sh(rocegate()
        .args(["inventory", "discover", "-i"])
        .arg(&skeleton)
        .arg("-o")
        .arg(&out));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    for (host, leaf, port) in [
        ("host1", "leaf1", "swp1"),
        ("host2", "leaf1", "swp2"),
        ("host3", "leaf2", "swp1"),
        ("host4", "leaf2", "swp2"),
    ] {
        let line = err
            .lines()
            .find(|l| l.starts_with(&format!("{host}: rdma []")))
            .unwrap_or_else(|| panic!("no line for {host} in\n{err}"));
        assert!(
            line.contains(&format!("lldp eth1->{leaf}:{port}")),
            "{line}"
        );
        assert!(
            err.contains(&format!("no RDMA device on {host}: /sys/class/infiniband")),
            "{err}"
        );
    }
    assert!(err.contains("nothing written"), "{err}");
    assert!(!out.exists(), "discover wrote {out:?}");
}

fn unreachable_refused_and_hung_each_get_their_error(tmp: &Path, inv: &Path) {
    let text = std::fs::read_to_string(inv).unwrap();
    // 198.18.0.99 is on the lab's own management bridge; nothing has it.
    let five = text
        .replace("host[1-4]", "host[1-5]")
        .replace("198.18.0.[11-14]", "198.18.0.[11-14],198.18.0.99");
    let five = write(tmp, "five.yaml", &five);
    let mesh = write(
        tmp,
        "mesh.yaml",
        "suite: {name: lab-mesh}\ndefaults: {timeout: 20s}\ntests:\n  - name: tcp\n    iperf: {duration: 2s}\n    pattern: full-mesh\n    expect: {min_pct_of_line_rate: 90}\n",
    );
    let (code, recs, out) = run(&tmp.join("five"), &five, &mesh, &[]);
    assert_eq!(code, 1, "{out}");
    let verdicts = test_verdicts(&recs);
    assert_eq!(verdicts.len(), 10, "{out}");
    for v in verdicts {
        let comp = v["component"].as_str().unwrap();
        let msg = v["message"].as_str().unwrap();
        if comp.contains("host5") {
            assert_eq!(v["verdict"], "error", "{v}");
            assert!(msg.contains("host5: unreachable"), "{msg}");
        } else {
            assert_eq!(v["verdict"], "pass", "{v}");
        }
    }

    // A key the lab does not know.
    let key = tmp.join("stranger");
    let ok = sh(Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-f"])
        .arg(&key));
    assert!(ok.status.success());
    let refused = text.replace("/run/rocegate-lab/id_ed25519", key.to_str().unwrap());
    let refused = write(tmp, "refused.yaml", &refused);
    let started = Instant::now();
    let (code, recs, out) = run(&tmp.join("refused"), &refused, &mesh, &[]);
    assert_eq!(code, 1, "{out}");
    let verdicts = test_verdicts(&recs);
    assert_eq!(verdicts.len(), 6, "{out}");
    for v in verdicts {
        let msg = v["message"].as_str().unwrap();
        assert_eq!(v["verdict"], "error", "{v}");
        assert!(msg.contains("authentication refused"), "{msg}");
    }
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "refused hosts are not retried: {:?}",
        started.elapsed()
    );

    // A client that would run 60 s under a 5 s dead-man timeout, then a
    // normal test: the first is killed and says so, the second passes.
    let hang = write(
        tmp,
        "hang.yaml",
        "suite: {name: lab-hang}\ntests:\n  - name: hangs\n    iperf: {duration: 60s}\n    pattern: full-mesh\n    timeout: 5s\n  - name: after\n    iperf: {duration: 2s}\n    pattern: full-mesh\n    timeout: 20s\n    expect: {min_pct_of_line_rate: 90}\n",
    );
    let (code, recs, out) = run(&tmp.join("hang"), inv, &hang, &["--nodes", "host[1-2]"]);
    assert_eq!(code, 1, "{out}");
    let verdicts = test_verdicts(&recs);
    assert_eq!(verdicts.len(), 2, "{out}");
    let hung = verdicts.iter().find(|v| v["test"] == "hangs").unwrap();
    assert_ne!(hung["verdict"], "pass", "{hung}");
    assert!(
        hung["message"].to_string().contains("timeout")
            || hung["message"].to_string().contains("timed out"),
        "{hung}"
    );
    let after = verdicts.iter().find(|v| v["test"] == "after").unwrap();
    assert_eq!(after["verdict"], "pass", "{after}");
    let left = gone_within("iperf3", Duration::from_secs(10));
    assert!(left.is_empty(), "left behind: {left:?}");
    eprintln!("lab: unreachable, refused and hung each gave their error");
}

/// SIGTERM while iperf3 runs on the hosts: rocegate kills the remote
/// process groups, and within 10 s no iperf3 is left in any namespace.
fn sigterm_mid_run_leaves_nothing_behind(tmp: &Path, inv: &Path) {
    let long = write(
        tmp,
        "long.yaml",
        "suite: {name: lab-long}\ndefaults: {timeout: 60s}\ntests:\n  - name: tcp\n    iperf: {duration: 30s}\n    pattern: full-mesh\n",
    );
    let out = tmp.join("term");
    let mut child = spawn(
        rocegate()
            .args(["run", "--progress", "none", "--out"])
            .arg(&out)
            .arg("-i")
            .arg(inv)
            .arg("-s")
            .arg(&long),
    );
    assert!(
        wait_for("iperf3 -c", 2, Duration::from_secs(30)),
        "the clients started: {:?}",
        lab_processes("iperf3")
    );
    signal(&child, libc::SIGTERM);
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(3), "interrupted");
    let left = gone_within("iperf3", Duration::from_secs(10));
    assert!(left.is_empty(), "left behind after SIGTERM: {left:?}");
    let recs = records(&out);
    assert!(
        events(&recs, "run_finished")
            .first()
            .is_some_and(|f| f["interrupted"] == true),
        "the run says it was interrupted"
    );
    eprintln!("lab: SIGTERM left no iperf3 behind");
}

/// SIGKILL gives rocegate no chance to clean up: the dead-man `timeout`
/// around every remote command does, within its limit plus its -k grace.
/// SIGTERM on the same fan-out is cleaned up at once.
fn the_dead_man_cleans_up_after_sigkill(inv: &Path) {
    let exec = |secs: &str, probe: &str| {
        spawn(rocegate().args(["exec", "-q", "-i"]).arg(inv).args([
            "--switches",
            "--timeout",
            secs,
            "--",
            "sleep",
            probe,
        ]))
    };
    let mut child = exec("60s", "3141");
    assert!(
        wait_for("sleep 3141", 8, Duration::from_secs(20)),
        "8 sleeps"
    );
    signal(&child, libc::SIGTERM);
    let _ = child.wait();
    let left = gone_within("sleep 3141", Duration::from_secs(10));
    assert!(left.is_empty(), "left behind after SIGTERM: {left:?}");

    let mut child = exec("6s", "3142");
    assert!(
        wait_for("sleep 3142", 8, Duration::from_secs(20)),
        "8 sleeps"
    );
    let killed = Instant::now();
    signal(&child, libc::SIGKILL);
    let _ = child.wait();
    assert!(
        !lab_processes("sleep 3142").is_empty(),
        "still running right after SIGKILL (nobody cleaned up yet)"
    );
    let left = gone_within("sleep 3142", Duration::from_secs(6 + 5 + 3));
    assert!(left.is_empty(), "left behind after SIGKILL: {left:?}");
    eprintln!(
        "lab: after SIGKILL the dead-man timeout cleaned up in {:.1}s",
        killed.elapsed().as_secs_f64()
    );
}

/// The mpirun line rocegate builds (ssh agent with the transport's options)
/// really launches a program on every lab host.
fn mpirun_launches_across_the_lab(inv: &Path) {
    let text = std::fs::read_to_string(inv).unwrap();
    let inv = rocegate::config::check::parse_inventory(inv.to_str().unwrap(), &text).unwrap();
    let nodes: Vec<usize> = (0..inv.nodes.len()).collect();
    let argv =
        rocegate::workload::nccl::command::mpirun(&inv, &nodes, 1, &[], &["hostname".to_string()]);
    let o = sh(Command::new(&argv[0]).args(&argv[1..]).stdin(Stdio::null()));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{}\n{stdout}\n{}",
        argv.join(" "),
        String::from_utf8_lossy(&o.stderr)
    );
    let mut names: Vec<&str> = stdout.lines().map(str::trim).collect();
    names.sort();
    assert_eq!(names, HOSTS, "{}", argv.join(" "));
    eprintln!("lab: mpirun ran hostname on {names:?}");
}
