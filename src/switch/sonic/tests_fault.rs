use super::*;
use std::path::Path;

fn text(s: impl AsRef<str>) -> Answer {
    Answer {
        exit: Some(0),
        text: s.as_ref().to_string(),
    }
}

/// The shell text of a `sh -c` request.
fn sc(q: &Query) -> String {
    match q {
        Query::Argv(a) if a.len() == 3 && a[0] == "sh" && a[1] == "-c" => a[2].clone(),
        other => panic!("not sh -c: {other:?}"),
    }
}

fn ports(names: &[&str]) -> Action {
    Action::PortsDown(names.iter().map(|s| s.to_string()).collect())
}

const STATUS: &str = "  Interface            Lanes    Speed    MTU    FEC    Alias    Vlan    Oper    Admin             Type    Asym PFC
-----------  ---------------  -------  -----  -----  -------  ------  ------  -------  ---------------  ----------
  Ethernet0          0,1,2,3     100G   9100    N/A     etp1  routed      up       up  QSFP28 or later         N/A
  Ethernet4          4,5,6,7     100G   9100    N/A     etp2  routed    down     down  QSFP28 or later         N/A
";

/// FRR's `show bgp vrf all summary json`, a default VRF and one other.
const BGP: &str = r#"{"default":{"ipv4Unicast":{"routerId":"10.1.0.32","as":65100,"vrfName":"default","peers":{"10.0.0.1":{"remoteAs":65200,"state":"Established"},"10.0.0.5":{"remoteAs":65200,"state":"Established"}}}},"Vrf-blue":{"ipv4Unicast":{"as":65100,"peers":{"10.9.0.1":{"state":"Active"}}}}}"#;

fn prior_text(addrs: &str) -> String {
    format!("@@status\n{STATUS}@@end\n{addrs}@@bgp\n{BGP}\n@@end\n")
}

#[test]
fn reads_admin_and_oper_per_port_and_bgp_in_every_vrf() {
    let a = ports(&["Ethernet0", "Ethernet4"]);
    let q = Sonic.read_prior(&a);
    assert!(sc(&q).contains("show interfaces status"));
    assert!(sc(&q).contains("sudo -n vtysh -c 'show bgp vrf all summary json'"));
    let st = Sonic.parse_prior(&a, &text(prior_text(""))).unwrap();
    assert_eq!(
        st.ports,
        vec![
            PortState {
                name: "Ethernet0".into(),
                admin_up: true,
                oper_up: true
            },
            PortState {
                name: "Ethernet4".into(),
                admin_up: false,
                oper_up: false
            },
        ]
    );
    assert_eq!(
        st.bgp,
        Some(vec![
            ("10.0.0.1".into(), true),
            ("10.0.0.5".into(), true),
            ("10.9.0.1@Vrf-blue".into(), false)
        ])
    );
    assert_eq!(st.asn.as_deref(), Some("65100"));
    // Ethernet4 is already down: refused before anything is touched.
    let e = Sonic.check_prior(&a, &st).unwrap_err();
    assert!(
        e.starts_with("Ethernet4 already administratively down"),
        "{e}"
    );
    let one = ports(&["Ethernet0"]);
    let st = Sonic.parse_prior(&one, &text(prior_text(""))).unwrap();
    assert!(Sonic.check_prior(&one, &st).is_ok());
}

#[test]
fn refusals_name_what_is_wrong() {
    let e = Sonic
        .parse_prior(&ports(&["Ethernet64"]), &text(prior_text("")))
        .unwrap_err();
    assert!(e.contains("Ethernet64 does not exist"), "{e}");
    let e = Sonic
        .parse_prior(&ports(&["Ethernet0"]), &text("sh: show: not found\n"))
        .unwrap_err();
    assert!(e.contains("no `show interfaces status` section"), "{e}");
    // The bgp container stopped: vtysh prints nothing.
    let st = Sonic
        .parse_prior(
            &Action::RoutingStop,
            &text(format!("@@status\n{STATUS}@@end\n@@bgp\n@@end\n")),
        )
        .unwrap();
    let e = Sonic.check_prior(&Action::RoutingStop, &st).unwrap_err();
    assert!(e.contains("bgp container is already stopped"), "{e}");
    let reload = Action::Reload {
        ports: vec!["Ethernet0".into()],
    };
    assert!(Sonic
        .supports(&reload)
        .unwrap_err()
        .contains("reload is refused"));
    assert!(Sonic.check_prior(&reload, &st).is_err());
    // route_change: a port with no session on its subnets is refused.
    let e = Sonic
        .parse_prior(
            &Action::BgpPeerDown {
                port: "Ethernet0".into(),
            },
            &text(prior_text(
                "@@addr 60: Ethernet0    inet 10.0.7.0/31 scope global Ethernet0\n",
            )),
        )
        .unwrap_err();
    assert!(
        e.contains("no BGP session of the default VRF runs over Ethernet0"),
        "{e}"
    );
}

#[test]
fn route_change_shuts_the_sessions_over_the_port() {
    let a = Action::BgpPeerDown {
        port: "Ethernet0".into(),
    };
    let st = Sonic
        .parse_prior(
            &a,
            &text(prior_text(
                "@@addr 60: Ethernet0    inet 10.0.0.0/31 scope global Ethernet0\n@@addr 60: Ethernet0    inet6 fe80::1/64 scope link\n",
            )),
        )
        .unwrap();
    assert_eq!(st.bgp, Some(vec![("10.0.0.1".into(), true)]));
    Sonic.check_prior(&a, &st).unwrap();
    let c = Sonic.change(&a, &st, None);
    assert_eq!(
        sc(&c.apply[0]),
        "sudo -n vtysh -c 'configure terminal' -c 'router bgp 65100' -c 'neighbor 10.0.0.1 shutdown'"
    );
    assert!(sc(&c.undo).contains("-c 'no neighbor 10.0.0.1 shutdown' || rc=$?"));
}

#[test]
fn routing_is_the_bgp_service() {
    let c = Sonic.change(&Action::RoutingStop, &State::default(), None);
    assert_eq!(sc(&c.apply[0]), "sudo -n systemctl stop bgp");
    assert_eq!(
        sc(&c.undo),
        "rc=0; sudo -n systemctl start bgp || rc=$?; exit $rc"
    );
    assert!(!c.armed && !c.reboots);
    let (a, u) = Sonic.plain(&ports(&["Ethernet0"]), &State::default());
    assert_eq!(
        a[0].display(),
        "sudo -n config interface shutdown Ethernet0"
    );
    assert_eq!(u[0].display(), "sudo -n config interface startup Ethernet0");
    assert_eq!(unit("run 3/f1"), "rocegate-deadman-run_3_f1");
}

fn script(dir: &Path, name: &str, body: &str) {
    use std::os::unix::fs::PermissionsExt;
    let p = dir.join(name);
    std::fs::write(&p, format!("#!/bin/sh\n{body}")).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// Fake `sudo` (runs its command), `config` (logs), `systemd-run` (logs,
/// leaves `UNIT.timer` as a file and fires the command after the delay
/// unless the file is gone) and `systemctl` (stop removes the file,
/// is-active tests it), first on PATH.
fn fakes(dir: &Path) -> std::path::PathBuf {
    let log = dir.join("log");
    let d = dir.display();
    let l = log.display();
    script(dir, "sudo", "[ \"$1\" = -n ] && shift\nexec \"$@\"\n");
    script(
        dir,
        "config",
        &format!("echo \"config $*\" >> {l}\n[ -z \"$FAIL_CONFIG\" ] || [ \"$3\" = shutdown ] || exit 3\n"),
    );
    script(
        dir,
        "systemd-run",
        &format!(
            "echo \"systemd-run $*\" >> {l}\n[ -z \"$FAIL_ARM\" ] || exit 1\n\
unit=; secs=1\n\
while [ $# -gt 0 ]; do case \"$1\" in --unit=*) unit=${{1#--unit=}};; --on-active=*) secs=${{1#--on-active=}}; secs=${{secs%s}};; --*) ;; *) break;; esac; shift; done\n\
touch {d}/$unit.timer\n\
( sleep $secs; if [ -e {d}/$unit.timer ]; then rm -f {d}/$unit.timer; \"$@\"; fi ) </dev/null >/dev/null 2>&1 &\n"
        ),
    );
    script(
        dir,
        "systemctl",
        &format!(
            "case \"$1\" in stop) echo \"systemctl $*\" >> {l}; rm -f {d}/$2;; is-active) [ \"$2\" = --quiet ] && shift; [ -e {d}/$2 ];; *) echo \"systemctl $*\" >> {l};; esac\n"
        ),
    );
    std::fs::write(&log, "").unwrap();
    log
}

fn run(dir: &Path, script: &str, env: &[(&str, &str)]) -> std::process::Output {
    let path = format!(
        "{}:{}",
        dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    std::process::Command::new("sh")
        .args(["-c", script])
        .env("PATH", path)
        .envs(env.iter().copied())
        .output()
        .unwrap()
}

fn log_of(log: &Path) -> String {
    std::fs::read_to_string(log).unwrap()
}

/// The apply and undo scripts run for real in `sh` with fake tools: the
/// timer is armed before the change, the undo restores then disarms it,
/// a second undo is harmless, a timer that cannot be armed stops the
/// apply, a failed restore leaves the timer armed, and a timer left
/// alone undoes the change itself.
#[test]
fn the_deadman_timer_is_armed_before_the_change_and_disarmed_by_the_undo() {
    let dir = tempfile::tempdir().unwrap();
    let log = fakes(dir.path());
    let timer = dir.path().join("rocegate-deadman-t1.timer");
    let prior = State::default();
    let c = Sonic.change(
        &ports(&["Ethernet0"]),
        &prior,
        Some(("t1", Duration::from_secs(60))),
    );
    assert!(c.armed && !c.reboots && c.apply.len() == 1);
    assert!(shlex::split(&sc(&c.apply[0])).is_some() && shlex::split(&sc(&c.undo)).is_some());
    let o = run(dir.path(), &sc(&c.apply[0]), &[]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(timer.exists());
    assert_eq!(
        log_of(&log),
        "systemd-run --quiet --collect --unit=rocegate-deadman-t1 --on-active=60s sh -c config interface startup Ethernet0\n\
config interface shutdown Ethernet0\n"
    );
    let o = run(dir.path(), &sc(&c.undo), &[]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(!timer.exists());
    // Sent again (recover after a run that already healed): still fine.
    let o = run(dir.path(), &sc(&c.undo), &[]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(
        log_of(&log).lines().skip(2).collect::<Vec<_>>(),
        [
            "config interface startup Ethernet0",
            "systemctl stop rocegate-deadman-t1.timer",
            "config interface startup Ethernet0",
            "systemctl stop rocegate-deadman-t1.timer"
        ]
    );

    // No timer, no change.
    std::fs::write(&log, "").unwrap();
    let o = run(dir.path(), &sc(&c.apply[0]), &[("FAIL_ARM", "1")]);
    assert_eq!(o.status.code(), Some(98));
    assert!(!log_of(&log).contains("config interface shutdown"));

    // A restore that fails leaves the timer to try again.
    std::fs::write(&log, "").unwrap();
    assert!(run(dir.path(), &sc(&c.apply[0]), &[]).status.success());
    let o = run(dir.path(), &sc(&c.undo), &[("FAIL_CONFIG", "1")]);
    assert_eq!(o.status.code(), Some(3));
    assert!(timer.exists());
    assert!(run(dir.path(), &sc(&c.undo), &[]).status.success());
    assert!(!timer.exists());

    // Nobody undoes it: the switch's own timer does, after its delay.
    std::fs::write(&log, "").unwrap();
    let c = Sonic.change(
        &ports(&["Ethernet8"]),
        &prior,
        Some(("t2", Duration::from_secs(1))),
    );
    assert!(run(dir.path(), &sc(&c.apply[0]), &[]).status.success());
    let t = std::time::Instant::now();
    while !log_of(&log).ends_with("startup Ethernet8\n") && t.elapsed().as_secs() < 10 {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(
        log_of(&log)
            .ends_with("config interface shutdown Ethernet8\nconfig interface startup Ethernet8\n"),
        "{}",
        log_of(&log)
    );
}

/// A port written as its CONFIG_DB alias: the prior read finds its row by
/// the Alias column, the change and restore run `config interface` in
/// alias mode, and a route change over an alias is refused (FRR and `ip`
/// know only the name).
#[test]
fn a_port_written_as_its_alias_is_faulted_in_alias_mode() {
    let a = ports(&["etp1"]);
    let st = Sonic.parse_prior(&a, &text(prior_text(""))).unwrap();
    assert_eq!(
        st.ports,
        vec![PortState {
            name: "etp1".into(),
            admin_up: true,
            oper_up: true
        }]
    );
    let c = Sonic.change(&a, &st, Some(("f1", Duration::from_secs(70))));
    let all = format!("{c:?}");
    assert!(
        all.contains("env SONIC_CLI_IFACE_MODE=alias config interface shutdown etp1")
            && all.contains("env SONIC_CLI_IFACE_MODE=alias config interface startup etp1"),
        "{all}"
    );
    let (apply, undo) = Sonic.plain(&a, &st);
    assert_eq!(
        apply[0].display(),
        "sudo -n env SONIC_CLI_IFACE_MODE=alias config interface shutdown etp1"
    );
    assert_eq!(
        undo[0].display(),
        "sudo -n env SONIC_CLI_IFACE_MODE=alias config interface startup etp1"
    );
    // By name: the default mode, as before.
    let (apply, _) = Sonic.plain(&ports(&["Ethernet0"]), &st);
    assert_eq!(
        apply[0].display(),
        "sudo -n config interface shutdown Ethernet0"
    );
    // An alias no row has is an error naming it.
    let e = Sonic
        .parse_prior(&ports(&["etp9"]), &text(prior_text("")))
        .unwrap_err();
    assert!(e.contains("port etp9 does not exist"), "{e}");
    let e = Sonic
        .supports(&Action::BgpPeerDown {
            port: "etp1".into(),
        })
        .unwrap_err();
    assert!(e.contains("needs the port's Ethernet name"), "{e}");
}
