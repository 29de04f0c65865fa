//! iperf3 command lines, the TCP baseline on the same paths as the RDMA
//! tests: both ends bind to the NICs' data addresses (`-B`), so the traffic
//! takes the RoCE NICs and the fabric behind them, not the management
//! network. The server serves one test and exits (`-1`); the client prints
//! JSON (`-J`) with an interval series (`-i`) that recovery is read from.
//!
//! Server: `iperf3 -s -1 -p PORT -B B_ADDR` on the node of NIC b.
//! Client: `iperf3 -c B_ADDR -B A_ADDR -p PORT -t SECS -P STREAMS -i INTERVAL
//! -J --connect-timeout 5000` on the node of NIC a.

use crate::config::check_suite::Test;
use crate::config::model::{Inventory, NicId};
use crate::config::suite::IperfSpec;
use crate::exec::{Invocation, Role, StepCommands};
use crate::workload::ports::Ports;

/// iperf3's default port; concurrent servers on one host count up from it.
pub const BASE_PORT: u16 = 5201;

/// `--connect-timeout`, ms: a dead data path fails in seconds instead of
/// waiting out the kernel's SYN retries (about two minutes).
pub const CONNECT_TIMEOUT_MS: u32 = 5000;

/// The NIC's data address, which iperf3 binds to.
fn address(inv: &Inventory, nic: NicId) -> Result<&str, String> {
    inv.nics[nic].address.as_deref().ok_or_else(|| {
        format!(
            "{} has no data address for iperf3 to bind to (-B); add `address:` to its inventory entry (a literal, or a template such as \"{{host}}-r{{rail}}\")",
            inv.nic_name(nic)
        )
    })
}

fn host(inv: &Inventory, nic: NicId) -> String {
    inv.nodes[inv.nics[nic].node].name.clone()
}

/// `-i`: whole numbers bare (`1`), fractions as decimals (`0.5`).
fn interval_word(spec: &IperfSpec) -> String {
    format!("{}", spec.interval_s())
}

/// One server on `server`'s node and its client on `client`'s node.
fn pair(
    test: &Test,
    spec: &IperfSpec,
    inv: &Inventory,
    client: NicId,
    server: NicId,
    ports: &mut Ports,
) -> Result<Vec<Invocation>, String> {
    let (a_addr, b_addr) = (address(inv, client)?, address(inv, server)?);
    let port = ports.next(inv.nics[server].node).to_string();
    let words = |w: &[&str]| w.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let s = Invocation {
        host: host(inv, server),
        argv: words(&["iperf3", "-s", "-1", "-p", &port, "-B", b_addr]),
        env: Vec::new(),
        role: Role::Server,
        timeout: test.timeout,
        at: std::time::Duration::ZERO,
    };
    let c = Invocation {
        host: host(inv, client),
        argv: words(&[
            "iperf3",
            "-c",
            b_addr,
            "-B",
            a_addr,
            "-p",
            &port,
            "-t",
            &spec.seconds().to_string(),
            "-P",
            &spec.streams.to_string(),
            "-i",
            &interval_word(spec),
            "-J",
            "--connect-timeout",
            &CONNECT_TIMEOUT_MS.to_string(),
        ]),
        env: Vec::new(),
        role: Role::Client,
        timeout: test.timeout,
        at: std::time::Duration::ZERO,
    };
    Ok(vec![s, c])
}

/// A pair step: the client on NIC `a`'s node sends to the server on NIC `b`'s.
pub fn pair_step(
    test: &Test,
    spec: &IperfSpec,
    inv: &Inventory,
    a: NicId,
    b: NicId,
    ports: &mut Ports,
) -> Result<StepCommands, String> {
    Ok(StepCommands {
        invocations: pair(test, spec, inv, a, b, ports)?,
    })
}

/// An incast: one server per sender on the receiver (a port each), one
/// client per sender.
pub fn incast_step(
    test: &Test,
    spec: &IperfSpec,
    inv: &Inventory,
    receiver: NicId,
    senders: &[NicId],
    ports: &mut Ports,
) -> Result<StepCommands, String> {
    crate::workload::incast(senders, |s| pair(test, spec, inv, s, receiver, ports))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::check::parse_inventory;
    use crate::config::check_suite::{parse_suite, TestKind};
    use crate::config::generate::{generate, to_yaml, PodShape};

    fn setup(iperf: &str) -> (Inventory, Test, IperfSpec) {
        let shape = PodShape {
            nodes: 4,
            rails: 2,
            ..PodShape::default()
        };
        let inv =
            parse_inventory("g", &to_yaml(&shape, &generate(&shape).unwrap()).unwrap()).unwrap();
        let suite = parse_suite(
            "s",
            &format!("suite: {{name: s}}\ntests:\n  - name: tcp\n    iperf: {iperf}\n    pattern: rail-pairs\n"),
            &inv,
        )
        .unwrap();
        let t = suite.tests[0].clone();
        let TestKind::Iperf(spec) = &t.kind else {
            panic!("not an iperf test")
        };
        let spec = spec.clone();
        (inv, t, spec)
    }

    fn argv(i: &Invocation) -> Vec<&str> {
        i.argv.iter().map(String::as_str).collect()
    }

    #[test]
    fn pair_argv_is_exactly_what_the_emulator_answers() {
        let (inv, t, spec) = setup("{duration: 10s, streams: 4}");
        let mut ports = Ports::starting_at(BASE_PORT);
        // NIC 0 is gpu001:mlx5_0, NIC 2 gpu002:mlx5_0.
        let step = pair_step(&t, &spec, &inv, 0, 2, &mut ports).unwrap();
        let (s, c) = (&step.invocations[0], &step.invocations[1]);
        assert_eq!((s.host.as_str(), s.role), ("gpu002", Role::Server));
        assert_eq!(
            argv(s),
            ["iperf3", "-s", "-1", "-p", "5201", "-B", "gpu002-r0"]
        );
        assert_eq!((c.host.as_str(), c.role), ("gpu001", Role::Client));
        assert_eq!(
            argv(c),
            [
                "iperf3",
                "-c",
                "gpu002-r0",
                "-B",
                "gpu001-r0",
                "-p",
                "5201",
                "-t",
                "10",
                "-P",
                "4",
                "-i",
                "1",
                "-J",
                "--connect-timeout",
                "5000"
            ]
        );
        // Another server on gpu002 in the same round gets the next port.
        let again = pair_step(&t, &spec, &inv, 1, 3, &mut ports).unwrap();
        assert_eq!(again.invocations[0].argv[4], "5202");
    }

    #[test]
    fn seconds_round_up_and_intervals_may_be_fractions() {
        let (inv, t, spec) = setup("{duration: 2500ms, interval: 500ms}");
        let mut ports = Ports::starting_at(BASE_PORT);
        let step = pair_step(&t, &spec, &inv, 0, 2, &mut ports).unwrap();
        let c = argv(&step.invocations[1]);
        assert_eq!(&c[7..13], ["-t", "3", "-P", "1", "-i", "0.5"]);
        let (_, _, spec) = setup("{duration: 100ms}");
        assert_eq!(spec.seconds(), 1);
        let (_, _, spec) = setup("{duration: 1m, interval: 2s}");
        assert_eq!((spec.seconds(), interval_word(&spec).as_str()), (60, "2"));
    }

    #[test]
    fn incast_has_a_server_per_sender_on_distinct_ports() {
        let (inv, t, spec) = setup("{duration: 5s}");
        let mut ports = Ports::starting_at(BASE_PORT);
        // Receiver gpu001:mlx5_0 (0); senders gpu002..gpu004 on rail 0.
        let step = incast_step(&t, &spec, &inv, 0, &[2, 4, 6], &mut ports).unwrap();
        let roles: Vec<Role> = step.invocations.iter().map(|i| i.role).collect();
        assert_eq!(
            roles,
            [
                Role::Server,
                Role::Server,
                Role::Server,
                Role::Client,
                Role::Client,
                Role::Client
            ]
        );
        let server_ports: Vec<&str> = step.invocations[..3]
            .iter()
            .map(|i| {
                assert_eq!(i.host, "gpu001");
                i.argv[4].as_str()
            })
            .collect();
        assert_eq!(server_ports, ["5201", "5202", "5203"]);
        let clients: Vec<(&str, &str)> = step.invocations[3..]
            .iter()
            .map(|i| (i.host.as_str(), i.argv[6].as_str()))
            .collect();
        assert_eq!(
            clients,
            [("gpu002", "5201"), ("gpu003", "5202"), ("gpu004", "5203")]
        );
    }

    #[test]
    fn a_nic_without_an_address_is_a_build_error_naming_it() {
        let (mut inv, t, spec) = setup("{duration: 5s}");
        inv.nics[2].address = None;
        let mut ports = Ports::starting_at(BASE_PORT);
        let e = pair_step(&t, &spec, &inv, 0, 2, &mut ports).unwrap_err();
        assert!(e.starts_with("gpu002:mlx5_0 has no data address"), "{e}");
        assert!(e.contains("add `address:`"), "{e}");
    }
}
