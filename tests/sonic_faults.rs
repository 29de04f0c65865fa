//! A SONiC fault left open by a controller that died, healed by `rocegate
//! recover`. The stand-in for a switch: the `local` transport with fake
//! `sudo`, `config`, `systemd-run` and `systemctl` first on PATH, each
//! logging what it was sent (no SONiC image runs in CI). The apply is the
//! sonic driver's own shell text, run as the controller would have sent
//! it; the controller is then "killed" (its journal keeps the fault open),
//! and `recover` must restore the port and disarm the dead-man timer.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use assert_cmd::prelude::*;
use rocegate::switch::fault::{Action, State};
use rocegate::switch::sonic::Sonic;
use rocegate::switch::{Driver, Query};

const LOCAL: &str = "\
fabric:
  name: loopback-sonic
  environment: lab
  rails: 1
  roce: {pfc_priority: 3, dscp_roce: 26, dscp_cnp: 48, dcqcn: false, mtu: 4096}
transport: local
nodes:
  - hosts: lo[1-2]
    nics:
      - {device: lo, netdev: lo, gid_index: 0, rail: 0, speed_gbps: 100, address: '127.0.0.{index}'}
";

fn script(dir: &Path, name: &str, body: &str) {
    use std::os::unix::fs::PermissionsExt;
    let p = dir.join(name);
    std::fs::write(&p, format!("#!/bin/sh\n{body}")).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
}

fn fakes(dir: &Path) {
    let d = dir.display();
    script(dir, "sudo", "[ \"$1\" = -n ] && shift\nexec \"$@\"\n");
    script(dir, "config", &format!("echo \"config $*\" >> {d}/log\n"));
    // Arms a "timer" as a file; it never fires here (the delay is long).
    script(
        dir,
        "systemd-run",
        &format!(
            "echo \"systemd-run $*\" >> {d}/log\nfor a; do case \"$a\" in --unit=*) touch {d}/${{a#--unit=}}.timer;; esac; done\n"
        ),
    );
    script(
        dir,
        "systemctl",
        &format!(
            "case \"$1\" in stop) echo \"systemctl $*\" >> {d}/log; rm -f {d}/$2;; is-active) [ \"$2\" = --quiet ] && shift; [ -e {d}/$2 ];; esac\n"
        ),
    );
}

fn path_with(dir: &Path) -> String {
    format!(
        "{}:{}",
        dir.display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

#[test]
fn recover_restores_the_port_and_disarms_the_timer_of_a_killed_run() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let bin = d.join("bin");
    std::fs::create_dir(&bin).unwrap();
    fakes(&bin);
    let action = Action::PortsDown(vec!["Ethernet0".into()]);
    let change = Sonic.change(
        &action,
        &State::default(),
        Some(("r1-k1", Duration::from_secs(3600))),
    );
    let Query::Argv(apply) = &change.apply[0] else {
        panic!("sonic applies by argv");
    };
    let o = Command::new(&apply[0])
        .args(&apply[1..])
        .env("PATH", path_with(&bin))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let timer = bin.join("rocegate-deadman-r1-k1.timer");
    assert!(timer.exists());

    // The controller died here: its journal holds the fault open.
    let Query::Argv(undo) = &change.undo else {
        panic!("sonic undoes by argv");
    };
    let journal = d.join("j.jsonl");
    let opened = serde_json::json!({
        "event": "opened", "id": "r1-k1", "run": "r1", "pid": 1, "at": "2026-11-27T02:00:00Z",
        "fabric": "loopback-sonic", "test": "t", "host": "lo1", "what": "lo1: Ethernet0 down",
        "prior": "Ethernet0 admin up 1/1", "undo": undo, "undo_query": change.undo,
        "platform": "sonic", "ports": ["Ethernet0"], "deadman_s": 3600
    });
    std::fs::write(&journal, format!("{opened}\n")).unwrap();
    let inv = d.join("inv.yaml");
    std::fs::write(&inv, LOCAL).unwrap();

    for round in 0..2 {
        let o = Command::cargo_bin("rocegate")
            .unwrap()
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .env("XDG_STATE_HOME", d)
            .env("PATH", path_with(&bin))
            .args(["recover", "-i"])
            .arg(&inv)
            .arg("--journal")
            .arg(&journal)
            .output()
            .unwrap();
        let said = format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        assert_eq!(o.status.code(), Some(0), "round {round}: {said}");
        if round == 0 {
            assert!(said.contains("healed"), "{said}");
        }
    }
    let log = std::fs::read_to_string(bin.join("log")).unwrap();
    assert_eq!(
        log.lines().collect::<Vec<_>>(),
        [
            "systemd-run --quiet --collect --unit=rocegate-deadman-r1-k1 --on-active=3600s sh -c config interface startup Ethernet0",
            "config interface shutdown Ethernet0",
            "config interface startup Ethernet0",
            "systemctl stop rocegate-deadman-r1-k1.timer",
        ],
        "the second recover finds nothing open and sends nothing"
    );
    assert!(!timer.exists());
}
