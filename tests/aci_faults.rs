//! Faults on an ACI leaf (`driver: aci`) through its APIC, end to end:
//! `rocegate run` and `rocegate recover` against a stand-in APIC over
//! HTTPS (tests/switch_api/apic.py, behind a certificate from a CA the test
//! makes) that keeps the leaf's ports and the fabric's out-of-service
//! objects, issues session tokens (`aaaLogin`, `aaaRefresh`), checks the
//! `APIC-cookie` of every request, answers in the APIC's shapes
//! (tests/fixtures/public/SOURCES.md) and logs every request. The workload
//! is iperf3 between two loopback "nodes" over the `local` transport: the
//! conversation with the APIC is what is under test.
//!
//! Proven: a flap is a login, the prior reads, a configuration snapshot
//! (a record), the POST creating the tagged `fabricRsOosPath`, then the
//! DELETE of its exact DN, each request
//! with the session's newest cookie; a SIGKILL after the change leaves the
//! object on the APIC (nothing there undoes it) and `recover` deletes
//! exactly it; someone else's object refuses the fault before anything is
//! written; an expired session (403) is logged into again and the run goes
//! on; a wrong password is named with its status and never shown. Without
//! python3, openssl or iperf3 the tests say so and skip.

mod common;
use common::tls::{pki, tools};
use std::io::{BufRead, BufReader};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

use serde_json::{json, Value};

const SECRET: &str = "apic-s3cret-not-for-logs";
/// The out-of-service object of the flapped port, as the APIC names it.
const DN: &str = "uni/fabric/outofsvc/rsoosPath-[topology/pod-1/paths-101/pathep-[eth1/1]]";
const TDN: &str = "topology/pod-1/paths-101/pathep-[eth1/1]";
const PHYS: &str = "/api/mo/topology/pod-1/node-101/sys/phys-[eth1/1]/phys.json";
const OOS_CLASS: &str =
    "/api/class/fabricRsOosPath.json?query-target-filter=wcard(fabricRsOosPath.tDn,\"paths-101/\")";

/// A stand-in APIC and the files it writes.
struct Apic {
    child: Child,
    port: u16,
    ca: PathBuf,
    log: PathBuf,
    state: PathBuf,
}

impl Drop for Apic {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Apic {
    fn start(dir: &Path, extra: Value) -> Apic {
        let (ca, cert, key) = pki(dir);
        let mut config = json!({
            "user": "rocegate",
            "password": SECRET,
            "pod": 1,
            "node": 101,
            "ports": {"eth1/1": "epg", "eth1/2": "epg", "eth1/49": "fabric"},
        });
        for (k, v) in extra.as_object().expect("an object") {
            config[k] = v.clone();
        }
        let config_path = dir.join("apic.json");
        std::fs::write(&config_path, config.to_string()).expect("config");
        let log = dir.join("requests.jsonl");
        let state = dir.join("state.json");
        let mut child = Command::new("python3")
            .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/switch_api/apic.py"))
            .arg(&cert)
            .arg(&key)
            .arg(&config_path)
            .arg(&log)
            .arg(&state)
            .stdout(Stdio::piped())
            .spawn()
            .expect("stand-in starts");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("stdout"))
            .read_line(&mut line)
            .expect("port line");
        let port = line
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("stand-in printed {line:?}"));
        Apic {
            child,
            port,
            ca,
            log,
            state,
        }
    }

    /// Every request, in the order the stand-in took them.
    fn requests(&self) -> Vec<Value> {
        let mut r: Vec<Value> = std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).expect("log line"))
            .collect();
        r.sort_by_key(|l| l["n"].as_u64());
        r
    }

    fn state(&self) -> Value {
        serde_json::from_str(&std::fs::read_to_string(&self.state).expect("state")).expect("json")
    }

    /// The out-of-service objects on the APIC, by DN.
    fn oos(&self) -> serde_json::Map<String, Value> {
        self.state()["oos"].as_object().cloned().unwrap_or_default()
    }
}

/// One fabric: two loopback nodes cabled to the leaf's eth1/1 and eth1/2.
struct Lab {
    dir: tempfile::TempDir,
    apic: Apic,
    inv: PathBuf,
    suite: PathBuf,
    journal: PathBuf,
    var: String,
    /// The password the run is given (the APIC's, or a wrong one).
    given: String,
}

/// The workload, then a flap of eth1/1 2 s into it for 1 s, then a test
/// after the fault: the run goes on.
const FLAP: &str = "\
suite: {name: aci-flap}
ledger: {enabled: false}
tests:
  - {name: load, iperf: {duration: 5s, interval: 0.5s}, pattern: rail-pairs, expect: {min: 0.01}}
  - name: flap
    fault: {link_flap: {target: 'leaf1:eth1/1'}, during: load, at: 2s, for: 1s}
    expect: {workload: completes, recovers_within: 10s, min_fraction: 0.05}
  - {name: after, iperf: {duration: 1s}, pattern: rail-pairs, expect: {min: 0.01}}
";

/// Each lab's nodes listen on 127.0.NET.x, so tests that run at once do
/// not share iperf3's port.
fn lab(net: u8, apic: Value) -> Lab {
    let dir = tempfile::tempdir().expect("temp dir");
    let apic = Apic::start(dir.path(), apic);
    let var = format!("ROCEGATE_ACI_FAULTS_{net}");
    let inv = dir.path().join("inventory.yaml");
    std::fs::write(
        &inv,
        format!(
            "\
fabric:
  name: aci-{net}
  environment: lab
  rails: 1
  roce: {{pfc_priority: 3, dscp_roce: 26, dscp_cnp: 48, dcqcn: false, mtu: 4096}}
transport: local
nodes:
  - hosts: lo[1-2]
    nics:
      - {{device: lo, netdev: lo, gid_index: 0, rail: 0, speed_gbps: 100, address: '127.0.{net}.{{index}}'}}
switches:
  - name: leaf1
    role: leaf
    driver: aci
    rail: 0
    address: 127.0.0.1
    credentials: {{env: {var}}}
    api: {{user: rocegate, port: {port}, ca_file: '{ca}', timeout: 2s, pod: 1, node: 101}}
links:
  - {{a: 'lo[1-2]:lo', b: 'leaf1:eth1/[1-2]'}}
",
            port = apic.port,
            ca = apic.ca.display(),
        ),
    )
    .expect("inventory");
    let suite = dir.path().join("suite.yaml");
    std::fs::write(&suite, FLAP).expect("suite");
    Lab {
        journal: dir.path().join("journal.jsonl"),
        dir,
        apic,
        inv,
        suite,
        var,
        given: SECRET.into(),
    }
}

impl Lab {
    fn rocegate(&self) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_rocegate"));
        c.current_dir(self.dir.path());
        c.env("XDG_STATE_HOME", self.dir.path().join("state"));
        c.env(&self.var, &self.given);
        c.env_remove("ROCEGATE_FAILPOINT");
        c
    }

    fn out(&self) -> PathBuf {
        self.dir.path().join("run")
    }

    fn run(&self, failpoint: Option<&str>) -> Output {
        let mut c = self.rocegate();
        c.args(["run", "--progress", "none", "-i"])
            .arg(&self.inv)
            .arg("-s")
            .arg(&self.suite)
            .arg("--journal")
            .arg(&self.journal)
            .arg("--out")
            .arg(self.out());
        if let Some(f) = failpoint {
            c.env("ROCEGATE_FAILPOINT", f);
        }
        c.output().expect("rocegate runs")
    }

    fn recover(&self) -> Output {
        self.rocegate()
            .args(["recover", "-i"])
            .arg(&self.inv)
            .arg("--journal")
            .arg(&self.journal)
            .output()
            .expect("rocegate recover runs")
    }

    fn records(&self) -> Vec<Value> {
        std::fs::read_to_string(self.out().join("results.jsonl"))
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).expect("record"))
            .collect()
    }

    fn verdict(&self, test: &str) -> Value {
        self.records()
            .into_iter()
            .find(|r| r["event"] == "verdict" && r["test"] == test)
            .unwrap_or_else(|| panic!("no verdict for {test}: {:?}", self.records()))
    }

    fn journal_text(&self) -> String {
        std::fs::read_to_string(&self.journal).unwrap_or_default()
    }

    /// Every fault the journal opened it healed.
    fn assert_journal_healed(&self) {
        let text = self.journal_text();
        let entries: Vec<Value> = text
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect();
        let opened: Vec<&Value> = entries.iter().filter(|e| e["event"] == "opened").collect();
        assert!(!opened.is_empty(), "nothing journaled: {text}");
        for o in opened {
            assert!(
                entries
                    .iter()
                    .any(|e| e["event"] == "healed" && e["id"] == o["id"]),
                "{} not healed: {text}",
                o["id"]
            );
        }
    }

    /// Every request but the logins carried a session cookie the APIC had
    /// issued, and the newest one (a refresh's token replaces the old).
    fn assert_sessions(&self) {
        for r in self.apic.requests() {
            assert!(r.get("problem").is_none(), "the stand-in refused {r}");
            if is_login(&r) {
                assert_eq!(r["user"], "rocegate", "{r}");
                continue;
            }
            if r["expired"] == true {
                continue;
            }
            assert_eq!(r["token_ok"], true, "{r}");
            assert_eq!(r["token_current"], true, "{r}");
        }
    }
}

fn is_login(r: &Value) -> bool {
    r["path"] == "/api/aaaLogin.json"
}

fn is_refresh(r: &Value) -> bool {
    r["path"] == "/api/aaaRefresh.json"
}

/// `METHOD PATH` of each request but the session's own (login, refresh).
fn calls(reqs: &[Value]) -> Vec<String> {
    reqs.iter()
        .filter(|r| !is_login(r) && !is_refresh(r))
        .map(|r| {
            format!(
                "{} {}",
                r["method"].as_str().unwrap_or_default(),
                r["path"].as_str().unwrap_or_default()
            )
        })
        .collect()
}

/// The requests that write (POST, DELETE) but not the login.
fn writes(reqs: &[Value]) -> Vec<String> {
    calls(reqs)
        .into_iter()
        .filter(|c| !c.starts_with("GET "))
        .collect()
}

fn text(o: &Output) -> String {
    format!(
        "exit {:?} signal {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status.code(),
        o.status.signal(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// No output of the run (stdout, stderr, any file of the run directory,
/// the journal) holds `secret`.
fn assert_no_secret(lab: &Lab, o: &Output, secret: &str) {
    assert!(!String::from_utf8_lossy(&o.stdout).contains(secret));
    assert!(!String::from_utf8_lossy(&o.stderr).contains(secret));
    let mut files = vec![lab.journal.clone()];
    let mut dirs = vec![lab.out()];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                dirs.push(p);
            } else {
                files.push(p);
            }
        }
    }
    assert!(files.len() > 3, "{files:?}");
    for f in files {
        let bytes = std::fs::read(&f).unwrap_or_default();
        assert!(
            !String::from_utf8_lossy(&bytes).contains(secret),
            "{} holds the password",
            f.display()
        );
    }
}

fn post() -> String {
    format!("POST /api/mo/{DN}.json")
}

fn snapshot() -> String {
    "POST /api/mo/uni/fabric/configexp-rocegate.json".to_string()
}

fn delete() -> String {
    format!("DELETE /api/mo/{DN}.json")
}

// ------------------------------------------------------------------ a flap

/// A login, the prior reads, the POST of the tagged object, the DELETE of
/// its exact DN; a refresh timeout of 1 s makes the client refresh its
/// token before each later call.
#[test]
fn a_flap_logs_in_reads_creates_the_tagged_object_then_deletes_its_dn() {
    needs_tools!();
    let lab = lab(11, json!({"refresh_timeout": "1"}));
    let o = lab.run(None);
    let v = lab.verdict("flap");
    assert_eq!(v["verdict"], "pass", "{v}\n{}", text(&o));
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert_eq!(lab.verdict("after")["verdict"], "pass");
    let reqs = lab.apic.requests();
    assert!(is_login(&reqs[0]), "{}", reqs[0]);
    assert_eq!(reqs[0]["pwd_ok"], true);
    assert_eq!(
        reqs.iter().filter(|r| is_login(r)).count(),
        1,
        "one login: {reqs:?}"
    );
    assert!(
        reqs.iter().any(is_refresh),
        "the token was refreshed: {reqs:?}"
    );
    lab.assert_sessions();
    let c = calls(&reqs);
    let at = |what: &str| {
        c.iter()
            .position(|x| x == what)
            .unwrap_or_else(|| panic!("no {what}: {c:?}"))
    };
    let (phys, oos, post_at, delete_at) = (
        at(&format!("GET {PHYS}")),
        at(&format!("GET {OOS_CLASS}")),
        at(&post()),
        at(&delete()),
    );
    assert!(
        phys < post_at && oos < post_at && post_at < delete_at,
        "{c:?}"
    );
    // A snapshot of the fabric first, as a record, then the change.
    assert_eq!(writes(&reqs), [snapshot(), post(), delete()]);
    let snaps = lab.apic.state()["snapshots"].clone();
    assert_eq!(snaps.as_array().map(Vec::len), Some(1), "{snaps}");
    assert!(
        snaps[0]["descr"]
            .as_str()
            .is_some_and(|d| d.starts_with("rocegate: before fault ")),
        "{snaps}"
    );
    let create = reqs
        .iter()
        .find(|r| {
            r["method"] == "POST" && r["path"].as_str().is_some_and(|p| p.contains("rsoosPath"))
        })
        .expect("the POST");
    assert_eq!(
        create["body"],
        json!({"fabricRsOosPath": {"attributes": {
            "tDn": TDN, "lc": "blacklist", "annotation": "orchestrator:rocegate"}}})
    );
    assert_eq!(create["created"], true);
    let gone = reqs
        .iter()
        .find(|r| r["method"] == "DELETE")
        .expect("DELETE");
    assert_eq!(gone["deleted"], true, "{gone}");
    assert!(lab.apic.oos().is_empty(), "{:?}", lab.apic.oos());
    lab.assert_journal_healed();
    assert_no_secret(&lab, &o, SECRET);
}

// ------------------------------------------------------- SIGKILL, recover

/// Killed right after the change: the object stays on the APIC (nothing
/// there undoes it), the journal holds the DELETE, `recover` sends exactly
/// that and heals the journal; a second `recover` sends nothing.
#[test]
fn a_run_killed_after_the_change_leaves_the_object_and_recover_deletes_exactly_it() {
    needs_tools!();
    let lab = lab(21, json!({}));
    let o = lab.run(Some("fault-applied"));
    assert_eq!(o.status.signal(), Some(9), "{}", text(&o));
    let oos = lab.apic.oos();
    assert_eq!(oos.keys().collect::<Vec<_>>(), [DN], "{oos:?}");
    assert_eq!(oos[DN]["annotation"], "orchestrator:rocegate");
    assert!(lab.apic.state()["usage"]["eth1/1"]
        .as_str()
        .is_some_and(|u| u.contains("blacklist")));
    let j = lab.journal_text();
    assert!(j.contains("\"opened\"") && !j.contains("\"healed\""), "{j}");
    // The undo as journaled: the DN with the switch as `{pod}`/`{node}`.
    assert!(
        j.contains("DELETE /api/mo/uni/fabric/outofsvc/rsoosPath-[topology/pod-{pod}/paths-{node}/pathep-[eth1/1]].json"),
        "{j}"
    );
    // Some time passes: the object is still there.
    std::thread::sleep(std::time::Duration::from_millis(500));
    assert_eq!(lab.apic.oos().len(), 1);

    let before = lab.apic.requests().len();
    let r = lab.recover();
    let said = text(&r);
    assert_eq!(r.status.code(), Some(0), "{said}");
    assert!(said.contains("all 1 healed"), "{said}");
    lab.assert_journal_healed();
    let sent = lab.apic.requests()[before..].to_vec();
    assert_eq!(writes(&sent), [delete()], "{sent:?}");
    assert!(
        sent.iter().all(|r| is_login(r) || r["method"] != "POST"),
        "{sent:?}"
    );
    lab.assert_sessions();
    assert!(lab.apic.oos().is_empty(), "{:?}", lab.apic.oos());

    let before = lab.apic.requests().len();
    let again = lab.recover();
    assert_eq!(again.status.code(), Some(0), "{}", text(&again));
    assert!(String::from_utf8_lossy(&again.stdout).contains("no open faults"));
    assert_eq!(
        lab.apic.requests().len(),
        before,
        "a second recover sends nothing"
    );
}

// --------------------------------------------------------------- refusals

/// A port that already has someone else's out-of-service object is
/// refused after the reads, before anything is written, and that object
/// stays: applied (the port is out of service) or not yet applied (the
/// port still up: the object itself refuses it).
#[test]
fn a_port_with_someone_elses_object_is_refused_before_anything_is_written() {
    needs_tools!();
    for (net, applied, why) in [
        // Someone else's object is named first, whether or not it has taken
        // the port down yet.
        (
            31,
            true,
            "already has an out-of-service object that rocegate did not create",
        ),
        (
            32,
            false,
            "already has an out-of-service object that rocegate did not create",
        ),
    ] {
        let lab = lab(net, json!({"foreign": [TDN], "foreign_applied": applied}));
        let o = lab.run(None);
        let v = lab.verdict("flap");
        assert_eq!(v["verdict"], "error", "{}", text(&o));
        let m = v["message"].as_str().expect("message");
        assert!(
            m.contains("refused before anything was touched") && m.contains(why),
            "{m}"
        );
        let reqs = lab.apic.requests();
        assert!(writes(&reqs).is_empty(), "nothing but reads: {reqs:?}");
        assert!(
            calls(&reqs).contains(&format!("GET {OOS_CLASS}")),
            "{reqs:?}"
        );
        lab.assert_sessions();
        let oos = lab.apic.oos();
        assert_eq!(oos.keys().collect::<Vec<_>>(), [DN]);
        assert_eq!(oos[DN]["annotation"], "", "still its owner's");
        assert_eq!(lab.verdict("after")["verdict"], "pass");
        assert!(!lab.journal_text().contains("\"opened\""));
    }
}

/// The session expires mid-run (the undo's DELETE finds its token
/// invalid: 403): the client logs in again once, the DELETE is sent again
/// with the new cookie, and the run goes on.
#[test]
fn an_expired_session_is_logged_into_again_and_the_run_goes_on() {
    needs_tools!();
    let lab = lab(41, json!({"expire": {"match": "^DELETE ", "times": 1}}));
    let o = lab.run(None);
    let v = lab.verdict("flap");
    assert_eq!(v["verdict"], "pass", "{v}\n{}", text(&o));
    assert_eq!(lab.verdict("after")["verdict"], "pass");
    let reqs = lab.apic.requests();
    let seq: Vec<String> = reqs
        .iter()
        .map(|r| {
            format!(
                "{} {} {}",
                r["method"].as_str().unwrap_or_default(),
                r["path"].as_str().unwrap_or_default(),
                r["answer"]
            )
        })
        .collect();
    let first = seq
        .iter()
        .position(|s| s.starts_with("DELETE "))
        .expect("a DELETE");
    assert_eq!(
        seq[first..first + 3],
        [
            format!("{} 403", delete()),
            "POST /api/aaaLogin.json 200".to_string(),
            format!("{} 200", delete()),
        ],
        "{seq:?}"
    );
    assert_eq!(reqs.iter().filter(|r| is_login(r)).count(), 2, "{seq:?}");
    assert_eq!(writes(&reqs), [snapshot(), post(), delete(), delete()]);
    lab.assert_sessions();
    assert!(lab.apic.oos().is_empty(), "{:?}", lab.apic.oos());
    lab.assert_journal_healed();
}

/// A wrong password: the fault is an error naming the switch and HTTP
/// 401, the login is not tried again, nothing is written, and neither
/// password shows anywhere.
#[test]
fn a_wrong_password_names_the_switch_and_the_status_never_the_secret() {
    needs_tools!();
    let mut lab = lab(51, json!({}));
    let wrong = "wr0ng-apic-pa55word-for-the-test";
    lab.given = wrong.into();
    let o = lab.run(None);
    let v = lab.verdict("flap");
    assert_eq!(v["verdict"], "error", "{}", text(&o));
    let m = v["message"].as_str().expect("message");
    assert!(
        m.contains("refused before anything was touched")
            && m.contains("leaf1")
            && m.contains("HTTP 401"),
        "{m}"
    );
    assert!(m.contains("check api.user"), "{m}");
    let reqs = lab.apic.requests();
    assert_eq!(reqs.len(), 1, "{reqs:?}");
    assert!(is_login(&reqs[0]));
    assert_eq!(reqs[0]["answer"], 401);
    assert_eq!(reqs[0]["pwd_ok"], false);
    assert!(lab.apic.oos().is_empty());
    assert_eq!(lab.verdict("after")["verdict"], "pass");
    assert_no_secret(&lab, &o, wrong);
    assert_no_secret(&lab, &o, SECRET);
    assert!(!lab.journal_text().contains("\"opened\""));
}
