//! perftest command lines, built as an operator would type them on a real
//! cluster: server first, client with the server's address last, a distinct
//! TCP port (`-p`) per server on a host, pinned to the NIC's NUMA node.

use crate::config::check_suite::Test;
use crate::config::inventory::GidIndex;
use crate::config::model::{Inventory, NicId};
use crate::config::suite::PerftestSpec;
use crate::exec::{Invocation, Role, StepCommands};
use crate::workload::ports::Ports;

/// perftest's default port; concurrent servers on one host count up from it
/// (see [`Ports`]).
pub const BASE_PORT: u16 = 18515;

/// The GID index to pass with `-x`. `discover` is resolved by the transport's
/// preflight; until it has been, the inventory must give a number.
pub fn gid_index(inv: &Inventory, nic: NicId) -> Result<u32, String> {
    match inv.nics[nic].gid_index {
        GidIndex::Fixed(n) => Ok(n),
        GidIndex::Discover => Err(format!(
            "{}: gid_index is \"discover\" but discovery needs a live host; set the RoCE v2 index from `show_gids` in the inventory",
            inv.nic_name(nic)
        )),
    }
}

/// Words common to server and client.
fn args(
    spec: &PerftestSpec,
    inv: &Inventory,
    nic: NicId,
    port: u16,
) -> Result<Vec<String>, String> {
    let n = &inv.nics[nic];
    let mut a = Vec::new();
    if let Some(numa) = n.numa {
        a.extend([
            "numactl".into(),
            format!("--cpunodebind={numa}"),
            format!("--membind={numa}"),
        ]);
    }
    a.push(spec.tool.binary().into());
    a.extend([
        "-d".into(),
        n.device.clone(),
        "-i".into(),
        n.port.to_string(),
    ]);
    a.extend(["-x".into(), gid_index(inv, nic)?.to_string()]);
    a.extend(["-p".into(), port.to_string(), "-F".into()]);
    if spec.tool.is_bw() {
        a.push("--report_gbits".into());
    }
    if spec.all_sizes {
        a.push("-a".into());
    } else if let Some(s) = spec.size {
        a.extend(["-s".into(), s.0.to_string()]);
    }
    if let Some(d) = spec.duration {
        a.extend(["-D".into(), d.0.as_secs().max(1).to_string()]);
    } else if let Some(n) = spec.iterations {
        a.extend(["-n".into(), n.to_string()]);
    }
    if let Some(q) = spec.qps {
        a.extend(["-q".into(), q.to_string()]);
    }
    if spec.bidirectional {
        a.push("-b".into());
    }
    if let Some(tc) = spec.tclass {
        a.push(format!("--tclass={tc}"));
    }
    if spec.rdma_cm {
        a.push("-R".into());
    }
    if spec.use_cuda {
        if let Some(g) = n.gpu {
            a.push(format!("--use_cuda={g}"));
        }
    }
    Ok(a)
}

/// The address a client dials: the NIC's data address with rdma_cm (it must
/// resolve to the RDMA device), else the server node's management address
/// (perftest's out-of-band exchange is plain TCP).
fn server_address(spec: &PerftestSpec, inv: &Inventory, server: NicId) -> String {
    let n = &inv.nics[server];
    if spec.rdma_cm {
        if let Some(a) = &n.address {
            return a.clone();
        }
    }
    inv.nodes[n.node].address.clone()
}

/// One server/client pair: `server` listens, `client` connects.
pub fn pair(
    test: &Test,
    spec: &PerftestSpec,
    inv: &Inventory,
    server: NicId,
    client: NicId,
    ports: &mut Ports,
) -> Result<Vec<Invocation>, String> {
    let port = ports.next(inv.nics[server].node);
    let host = |nic: NicId| inv.nodes[inv.nics[nic].node].name.clone();
    let s = Invocation {
        host: host(server),
        argv: args(spec, inv, server, port)?,
        env: Vec::new(),
        role: Role::Server,
        timeout: test.timeout,
        at: std::time::Duration::ZERO,
    };
    let mut cargv = args(spec, inv, client, port)?;
    cargv.push(server_address(spec, inv, server));
    let c = Invocation {
        host: host(client),
        argv: cargv,
        env: Vec::new(),
        role: Role::Client,
        timeout: test.timeout,
        at: std::time::Duration::ZERO,
    };
    Ok(vec![s, c])
}

pub fn pair_step(
    test: &Test,
    spec: &PerftestSpec,
    inv: &Inventory,
    server: NicId,
    client: NicId,
    ports: &mut Ports,
) -> Result<StepCommands, String> {
    Ok(StepCommands {
        invocations: pair(test, spec, inv, server, client, ports)?,
    })
}

/// k servers on the receiver (one port each), one client per sender.
pub fn incast_step(
    test: &Test,
    spec: &PerftestSpec,
    inv: &Inventory,
    receiver: NicId,
    senders: &[NicId],
    ports: &mut Ports,
) -> Result<StepCommands, String> {
    crate::workload::incast(senders, |s| pair(test, spec, inv, receiver, s, ports))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::check::parse_inventory;
    use crate::config::check_suite::{parse_suite, TestKind};
    use crate::config::generate::{generate, to_yaml, PodShape};

    #[test]
    fn command_lines_are_what_an_operator_types() {
        let shape = PodShape {
            nodes: 4,
            rails: 2,
            ..PodShape::default()
        };
        let inv =
            parse_inventory("g", &to_yaml(&shape, &generate(&shape).unwrap()).unwrap()).unwrap();
        let suite = parse_suite(
            "s",
            "suite: {name: s}\ntests:\n  - name: bw\n    perftest: {tool: ib_write_bw, size: 1M, duration: 10s, qps: 8}\n    pattern: rail-pairs\n",
            &inv,
        )
        .unwrap();
        let t = &suite.tests[0];
        let TestKind::Perftest(spec) = &t.kind else {
            panic!()
        };
        let mut ports = Ports::starting_at(BASE_PORT);
        let step = pair_step(t, spec, &inv, 0, 2, &mut ports).unwrap();
        assert_eq!(
            step.invocations[0].command_line(),
            "numactl --cpunodebind=0 --membind=0 ib_write_bw -d mlx5_0 -i 1 -x 3 -p 18515 -F --report_gbits -s 1048576 -D 10 -q 8"
        );
        assert_eq!(step.invocations[1].host, "gpu002");
        assert!(step.invocations[1]
            .command_line()
            .ends_with("-q 8 gpu001.mgmt"));
        // A second server on the same host gets the next port.
        let again = pair_step(t, spec, &inv, 1, 3, &mut ports).unwrap();
        assert!(again.invocations[0].argv.contains(&"18516".to_string()));
    }
}
