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

/// A bandwidth test run as a time series: `--run_infinitely -D
/// <interval_s>` prints one result row per window (perftest's SIGALRM
/// handler `catch_alarm_infintely` calls `print_report_bw` and re-arms
/// `alarm(duration)`, so windows are whole seconds), and the loop
/// (`run_iter_bw_infinitely`, a `while (1)`) never returns: the client is
/// stopped by `timeout --signal=INT --preserve-status <total_s>`, exit
/// 130. perftest has no SIGINT handler, so `stdbuf -oL` line-buffers its
/// stdout: without it the windows printed into a pipe die in the buffer.
/// The server waits in its final handshake and fails it (" Failed to
/// exchange data between server and clients", exit 1) when the client's
/// socket closes; the measurement expects that.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Series {
    /// Seconds per window (`-D`), at least 1.
    pub interval_s: u64,
    /// Seconds from the client's start to the SIGINT.
    pub total_s: u64,
}

impl Series {
    /// The client's words in front of the tool.
    fn wrapper(&self) -> Vec<String> {
        vec![
            "timeout".into(),
            "--signal=INT".into(),
            "--preserve-status".into(),
            self.total_s.to_string(),
            "stdbuf".into(),
            "-oL".into(),
        ]
    }
}

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
    series: Option<Series>,
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
    if spec.all_sizes && series.is_none() {
        a.push("-a".into());
    } else if let Some(s) = spec.size {
        a.extend(["-s".into(), s.0.to_string()]);
    }
    if let Some(s) = series {
        a.extend([
            "--run_infinitely".into(),
            "-D".into(),
            s.interval_s.max(1).to_string(),
        ]);
    } else if let Some(d) = spec.duration {
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

/// One server/client pair: `server` listens, `client` connects; with
/// `series`, the client runs `--run_infinitely` windows until stopped.
pub fn pair(
    test: &Test,
    spec: &PerftestSpec,
    inv: &Inventory,
    server: NicId,
    client: NicId,
    ports: &mut Ports,
    series: Option<Series>,
) -> Result<Vec<Invocation>, String> {
    let port = ports.next(inv.nics[server].node);
    let host = |nic: NicId| inv.nodes[inv.nics[nic].node].name.clone();
    let s = Invocation {
        host: host(server),
        argv: args(spec, inv, server, port, series)?,
        env: Vec::new(),
        role: Role::Server,
        timeout: test.timeout,
        at: std::time::Duration::ZERO,
    };
    let mut cargv = series.map(|s| s.wrapper()).unwrap_or_default();
    cargv.extend(args(spec, inv, client, port, series)?);
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
    series: Option<Series>,
) -> Result<StepCommands, String> {
    Ok(StepCommands {
        invocations: pair(test, spec, inv, server, client, ports, series)?,
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
    series: Option<Series>,
) -> Result<StepCommands, String> {
    crate::workload::incast(senders, |s| {
        pair(test, spec, inv, receiver, s, ports, series)
    })
}

/// The series a fault test reads from a bandwidth tool: 1 s windows over
/// the test's duration plus perftest's connection setup (about 2 s), or
/// half the test's timeout without a duration; always ending 5 s before
/// the timeout so the transport never kills the client itself. `None` for
/// latency tools (perftest refuses `--run_infinitely` there).
pub fn series_for(test: &Test, spec: &PerftestSpec, cover_s: f64) -> Option<Series> {
    if !spec.tool.is_bw() {
        return None;
    }
    let limit = test.timeout.as_secs();
    let base = match spec.duration {
        Some(d) => d.0.as_secs().max(1) + 3,
        None => limit / 2,
    };
    let want = base.max(cover_s.ceil() as u64);
    Some(Series {
        interval_s: 1,
        total_s: want.min(limit.saturating_sub(5)).max(2),
    })
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
        let step = pair_step(t, spec, &inv, 0, 2, &mut ports, None).unwrap();
        assert_eq!(
            step.invocations[0].command_line(),
            "numactl --cpunodebind=0 --membind=0 ib_write_bw -d mlx5_0 -i 1 -x 3 -p 18515 -F --report_gbits -s 1048576 -D 10 -q 8"
        );
        assert_eq!(step.invocations[1].host, "gpu002");
        assert!(step.invocations[1]
            .command_line()
            .ends_with("-q 8 gpu001.mgmt"));
        // A second server on the same host gets the next port.
        let again = pair_step(t, spec, &inv, 1, 3, &mut ports, None).unwrap();
        assert!(again.invocations[0].argv.contains(&"18516".to_string()));
        // Series mode: windows of 1 s, the client stopped by SIGINT.
        let series = series_for(t, spec, 0.0).unwrap();
        assert_eq!(series.interval_s, 1);
        assert_eq!(series.total_s, 13);
        let step = pair_step(t, spec, &inv, 0, 2, &mut ports, Some(series)).unwrap();
        assert_eq!(
            step.invocations[0].command_line(),
            "numactl --cpunodebind=0 --membind=0 ib_write_bw -d mlx5_0 -i 1 -x 3 -p 18517 -F --report_gbits -s 1048576 --run_infinitely -D 1 -q 8"
        );
        assert_eq!(
            step.invocations[1].command_line(),
            "timeout --signal=INT --preserve-status 13 stdbuf -oL numactl --cpunodebind=0 --membind=0 ib_write_bw -d mlx5_0 -i 1 -x 3 -p 18517 -F --report_gbits -s 1048576 --run_infinitely -D 1 -q 8 gpu001.mgmt"
        );
    }
}
