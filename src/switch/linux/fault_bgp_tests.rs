//! `route_change` on a Linux box: the BGP session over one port found in
//! the state read, shut and unshut with `vtysh`, under the same dead-man.

use std::time::Duration;

use super::*;

/// leaf1 of the namespace lab as FRR 8.4 prints it: numbered eBGP on the
/// /31s of both uplinks, local AS in every address family's summary.
const LEAF1: &str = r#"{"ipv4Unicast":{"routerId":"198.19.255.1","as":65101,"vrfId":0,"vrfName":"default","tableVersion":12,"ribCount":11,"ribMemory":2024,"peerCount":2,"peerMemory":1448,"peers":{"198.19.111.1":{"hostname":"spine1","remoteAs":65000,"localAs":65101,"version":4,"msgRcvd":40,"msgSent":38,"tableVersion":0,"outq":0,"inq":0,"peerUptime":"00:01:32","peerUptimeMsec":92000,"peerUptimeEstablishedEpoch":1732240000,"pfxRcd":6,"pfxSnt":9,"state":"Established","peerState":"OK","connectionsEstablished":1,"connectionsDropped":0,"idType":"ipv4"},"198.19.112.1":{"hostname":"spine2","remoteAs":65000,"localAs":65101,"version":4,"msgRcvd":40,"msgSent":38,"tableVersion":0,"outq":0,"inq":0,"peerUptime":"00:01:32","peerUptimeMsec":92000,"peerUptimeEstablishedEpoch":1732240000,"pfxRcd":6,"pfxSnt":9,"state":"Established","peerState":"OK","connectionsEstablished":1,"connectionsDropped":0,"idType":"ipv4"}},"failedPeers":0,"displayedPeers":2,"totalPeers":2,"dynamicPeers":0,"bestPath":{"multiPathRelax":"true"}}}"#;

/// `ip -o addr show dev swp31` on leaf1 (the link-local line as the kernel
/// adds it to every port).
const SWP31: &str = "7: swp31    inet 198.19.111.0/31 scope global swp31\\       valid_lft forever preferred_lft forever\n7: swp31    inet6 fe80::a8c1:abff:fe5e:1/64 scope link \\       valid_lft forever preferred_lft forever\n";

fn swp31() -> Action {
    Action::BgpPeerDown {
        port: "swp31".into(),
    }
}

fn answer(text: &str) -> Answer {
    Answer {
        exit: Some(0),
        text: text.to_string(),
    }
}

/// The state read's output for `port` with `addrs` and `json`.
fn read(port: &str, carrier: &str, addrs: &str, json: &str) -> Answer {
    let addrs: String = addrs.lines().map(|l| format!("@@addr {l}\n")).collect();
    answer(&format!(
        "@@init frrinit\n@@port {port} 0x1003 {carrier}\n{addrs}@@bgp\n{json}\n@@end\n"
    ))
}

fn script(q: &Query) -> &str {
    match q {
        Query::Argv(v) if v.len() == 3 && v[0] == "sh" && v[1] == "-c" => &v[2],
        other => panic!("not sh -c: {other:?}"),
    }
}

#[test]
fn the_read_takes_the_port_its_subnets_and_the_sessions() {
    let s = script(&Linux.read_prior(&swp31())).to_string();
    assert!(
        s.contains("@@port swp31 $(cat /sys/class/net/swp31/flags"),
        "{s}"
    );
    assert!(s.contains("ip -o addr show dev swp31"), "{s}");
    assert!(s.contains("vtysh -c 'show bgp summary json'"), "{s}");
    assert_eq!(Linux.needs(&swp31()), ["ip", "setsid", "pkill", "vtysh"]);
}

#[test]
fn the_session_over_the_port_is_found_by_its_subnet_with_the_local_as() {
    let st = Linux
        .parse_prior(&swp31(), &read("swp31", "up", SWP31, LEAF1))
        .unwrap();
    assert_eq!(st.ports.len(), 1);
    assert!(st.ports[0].admin_up && st.ports[0].oper_up);
    // Only spine1's session, over swp31; spine2's runs over swp32.
    assert_eq!(st.bgp, Some(vec![("198.19.111.1".into(), true)]));
    assert_eq!(st.asn.as_deref(), Some("65101"));
    assert_eq!(st.summary(), "swp31 admin up 1/1; bgp 1/1 established");
    Linux.check_prior(&swp31(), &st).unwrap();
    let c = Linux.change(&swp31(), &st, None);
    assert_eq!(
        script(&c.apply[0]),
        "vtysh -c 'configure terminal' -c 'router bgp 65101' -c 'neighbor 198.19.111.1 shutdown'"
    );
    assert_eq!(
        script(&c.undo),
        "rc=0; vtysh -c 'configure terminal' -c 'router bgp 65101' -c 'no neighbor 198.19.111.1 shutdown' || rc=$?; exit $rc"
    );
    assert!(!c.armed && !c.reboots);
}

#[test]
fn unnumbered_and_link_local_neighbours_are_named_by_their_port() {
    let json = r#"{"ipv4Unicast":{"as":4200000101,"peers":{"swp31":{"state":"Established","idType":"interface"},"swp32":{"state":"Established","idType":"interface"}}},"ipv6Unicast":{"as":4200000101,"peers":{"fe80::1%swp31":{"state":"Established"},"fe80::1%swp32":{"state":"Established"}}}}"#;
    // No global address at all: the link-local subnet decides nothing.
    let ll = "7: swp31    inet6 fe80::2/64 scope link \\       valid_lft forever preferred_lft forever\n";
    let st = Linux
        .parse_prior(&swp31(), &read("swp31", "up", ll, json))
        .unwrap();
    assert_eq!(
        st.bgp,
        Some(vec![("fe80::1%swp31".into(), true), ("swp31".into(), true)])
    );
    assert_eq!(st.asn.as_deref(), Some("4200000101"));
    let c = Linux.change(&swp31(), &st, None);
    assert_eq!(
        script(&c.apply[0]),
        "vtysh -c 'configure terminal' -c 'router bgp 4200000101' -c 'neighbor fe80::1%swp31 shutdown' && vtysh -c 'configure terminal' -c 'router bgp 4200000101' -c 'neighbor swp31 shutdown'"
    );
}

#[test]
fn a_port_without_a_session_or_an_unhealthy_one_is_refused() {
    // swp1 faces a host: no BGP neighbour on its subnet.
    let host = "3: swp1    inet 198.19.1.0/31 scope global swp1\\       valid_lft forever preferred_lft forever\n";
    let e = Linux
        .parse_prior(
            &Action::BgpPeerDown {
                port: "swp1".into(),
            },
            &read("swp1", "up", host, LEAF1),
        )
        .unwrap_err();
    assert!(
        e.contains("no BGP session runs over swp1 (its addresses: 198.19.1.0/31; BGP neighbours: 198.19.111.1, 198.19.112.1)"),
        "{e}"
    );
    // No `router bgp` at all: FRR answers `{}`.
    let e = Linux
        .parse_prior(&swp31(), &read("swp31", "up", SWP31, "{}"))
        .unwrap_err();
    assert!(e.contains("BGP neighbours: none"), "{e}");
    // Routing stopped: no JSON, refused before anything is touched.
    let st = Linux
        .parse_prior(&swp31(), &read("swp31", "up", SWP31, ""))
        .unwrap();
    let e = Linux.check_prior(&swp31(), &st).unwrap_err();
    assert!(e.contains("no routing daemon answers"), "{e}");
    // The session already down (shut by someone, or never up).
    let active = LEAF1.replacen("\"Established\"", "\"Active\"", 1);
    let st = Linux
        .parse_prior(&swp31(), &read("swp31", "up", SWP31, &active))
        .unwrap();
    let e = Linux.check_prior(&swp31(), &st).unwrap_err();
    assert!(
        e.starts_with("the BGP session with 198.19.111.1 over swp31 is not Established"),
        "{e}"
    );
    // The link itself without carrier.
    let st = Linux
        .parse_prior(&swp31(), &read("swp31", "down", SWP31, LEAF1))
        .unwrap();
    let e = Linux.check_prior(&swp31(), &st).unwrap_err();
    assert!(e.starts_with("swp31 has no carrier"), "{e}");
    // Garbage where an address should be.
    let e = Linux
        .parse_prior(
            &swp31(),
            &read("swp31", "up", "7: swp31    inet 198.19.111.x/31\n", LEAF1),
        )
        .unwrap_err();
    assert!(e.contains("not ADDR/LEN"), "{e}");
}

#[test]
fn settled_means_the_session_established_again() {
    let prior = Linux
        .parse_prior(&swp31(), &read("swp31", "up", SWP31, LEAF1))
        .unwrap();
    // Shut: FRR keeps the neighbour, Idle with peerState Admin.
    let shut = LEAF1.replacen(
        "\"state\":\"Established\",\"peerState\":\"OK\"",
        "\"state\":\"Idle\",\"peerState\":\"Admin\"",
        1,
    );
    let now = Linux
        .parse_prior(&swp31(), &read("swp31", "up", SWP31, &shut))
        .unwrap();
    assert!(!Linux.settled(&prior, &now));
    let now = Linux
        .parse_prior(&swp31(), &read("swp31", "up", SWP31, LEAF1))
        .unwrap();
    assert!(Linux.settled(&prior, &now));
}

/// The scripts run for real in `sh` with a fake `vtysh` that logs its
/// arguments: the timer is armed before the shutdown, the undo disarms it
/// and unshuts, and the undo is safe to send twice.
#[test]
fn the_deadman_guards_a_shut_session_and_the_undo_is_idempotent() {
    let have = |t: &str| {
        std::process::Command::new("sh")
            .args(["-c", &format!("command -v {t}")])
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if !["setsid", "pkill", "pgrep"].iter().all(|t| have(t)) {
        eprintln!(
            "skipped: setsid, pkill or pgrep is not installed (apt-get install procps util-linux)"
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("vtysh.log");
    let fake = dir.path().join("vtysh");
    std::fs::write(
        &fake,
        format!(
            "#!/bin/sh\nfor a in \"$@\"; do printf '%s|' \"$a\"; done >> {}\necho >> {}\n",
            log.display(),
            log.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!(
        "{}:{}",
        dir.path().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let sh = |s: &str| {
        std::process::Command::new("sh")
            .args(["-c", s])
            .env("PATH", &path)
            .output()
            .unwrap()
    };
    let armed = |id: &str| {
        std::process::Command::new("pgrep")
            .args(["-f", &format!("^sh -c : rocegate-deadma[n] {id};")])
            .output()
            .is_ok_and(|o| o.status.success())
    };
    let prior = Linux
        .parse_prior(&swp31(), &read("swp31", "up", SWP31, LEAF1))
        .unwrap();
    let id = format!("bgptest{}", std::process::id());
    let c = Linux.change(&swp31(), &prior, Some((&id, Duration::from_secs(30))));
    assert!(c.armed);
    let (apply, undo) = (script(&c.apply[0]), script(&c.undo));
    assert!(apply.find("setsid").unwrap() < apply.find("neighbor 198.19.111.1 shutdown").unwrap());
    assert!(shlex::split(apply).is_some() && shlex::split(undo).is_some());
    let o = sh(apply);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(armed(&id));
    let o = sh(undo);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(!armed(&id));
    assert!(sh(undo).status.success(), "sent again by recover");
    let shut = "-c|configure terminal|-c|router bgp 65101|-c|neighbor 198.19.111.1 shutdown|\n";
    let unshut =
        "-c|configure terminal|-c|router bgp 65101|-c|no neighbor 198.19.111.1 shutdown|\n";
    assert_eq!(
        std::fs::read_to_string(&log).unwrap(),
        format!("{shut}{unshut}{unshut}")
    );
}

/// The emulator's commands: no AS and no address without a state read, so
/// the neighbour is named by its port (BGP unnumbered).
#[test]
fn the_plain_commands_name_the_neighbour_by_its_port() {
    let (a, u) = Linux.plain(&swp31(), &State::default());
    let argv = |q: &Query| match q {
        Query::Argv(v) => v.clone(),
        other => panic!("{other:?}"),
    };
    assert_eq!(
        argv(&a[0]),
        [
            "vtysh",
            "-c",
            "configure terminal",
            "-c",
            "router bgp",
            "-c",
            "neighbor swp31 shutdown"
        ]
    );
    assert_eq!(argv(&u[0])[6], "no neighbor swp31 shutdown");
}
