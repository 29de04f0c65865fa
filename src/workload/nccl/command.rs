//! nccl-tests launched through OpenMPI's mpirun, as on a real cluster: one
//! rank per GPU (`--map-by ppr:G:node`), every NCCL variable exported with
//! `-x`, Ring forced so busbw is a network number, and NCCL's INIT/NET debug
//! output on so the log proves which transport and HCAs NCCL used (NCCL falls
//! back to TCP sockets silently when RDMA is broken).

use std::os::unix::fs::MetadataExt;

use crate::config::check_suite::Test;
use crate::config::inventory::TransportSpec;
use crate::config::model::{Inventory, NodeId};
use crate::config::suite::NcclSpec;
use crate::config::units::format_size;
use crate::exec::{Invocation, Role, StepCommands};

/// OpenMPI refuses to start as root unless told it may.
pub fn running_as_root() -> bool {
    std::fs::metadata("/proc/self")
        .map(|m| m.uid() == 0)
        .unwrap_or(false)
}

/// NCCL settings rocegate sets; a suite's `env` overrides any of them.
pub fn nccl_env(
    spec: &NcclSpec,
    inv: &Inventory,
    nodes: &[NodeId],
    rails: &[u32],
) -> Result<Vec<(String, String)>, String> {
    let first = nodes
        .first()
        .ok_or("a collective needs at least one node")?;
    let nics: Vec<usize> = inv.nodes[*first]
        .nics
        .iter()
        .copied()
        .filter(|&n| rails.contains(&inv.nics[n].rail))
        .collect();
    if nics.is_empty() {
        return Err(format!(
            "{} has no NIC on rails {}",
            inv.nodes[*first].name,
            rails
                .iter()
                .map(|r| r.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    // `=` prefix: exact device names, not prefixes (mlx5_1 must not match mlx5_10).
    let hca = format!(
        "={}",
        nics.iter()
            .map(|&n| format!("{}:{}", inv.nics[n].device, inv.nics[n].port))
            .collect::<Vec<_>>()
            .join(",")
    );
    let gid = crate::workload::perftest::command::gid_index(inv, nics[0])?;
    // NCCL_IB_TC is the IP traffic class: DSCP in the upper six bits, ECT(0) in the low two.
    let tc = u32::from(inv.fabric.roce.dscp_roce) << 2 | 2;
    let mut env: Vec<(String, String)> = vec![
        ("NCCL_IB_HCA".into(), hca),
        ("NCCL_IB_GID_INDEX".into(), gid.to_string()),
        ("NCCL_IB_TC".into(), tc.to_string()),
        ("NCCL_ALGO".into(), "Ring".into()),
        ("NCCL_DEBUG".into(), "INFO".into()),
        ("NCCL_DEBUG_SUBSYS".into(), "INIT,NET".into()),
        ("NCCL_IB_QPS_PER_CONNECTION".into(), "4".into()),
    ];
    for (k, v) in &spec.env {
        match env.iter_mut().find(|(key, _)| key == k) {
            Some(slot) => slot.1 = v.clone(),
            None => env.push((k.clone(), v.clone())),
        }
    }
    Ok(env)
}

/// A collective run as a time series: `-N <cycles>` (nccl-tests'
/// `--run_cycles`, "run & print each cycle"; `TimeTest` in src/common.cu
/// wraps the size loop in `do { … } while (--repeat)`) at one size (`-b X
/// -e X`), so every cycle prints one result row for that size: the
/// sweep's largest, lowered until a cycle is short enough to resolve a
/// recovery ([`SERIES_CYCLE_S`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Series {
    pub cycles: u64,
    /// The one message size every cycle runs (`-b` = `-e`).
    pub bytes: u64,
}

/// The longest a cycle of a recovery series should take at line rate: a
/// recovery is read to the end of the first good cycle, so the cycle is
/// the resolution, and it must stay well under the seconds-scale limits a
/// suite sets (`recovers_within: 5s`). At 8 GiB a cycle takes about 1 s
/// on 8 x 400G but 4 s on 2 x 400G: the size is lowered for fewer rails.
const SERIES_CYCLE_S: f64 = 0.5;

/// Below this the collective is latency-bound and stops being a network
/// measurement; the series never goes under it.
const SERIES_MIN_BYTES: u64 = 64 << 20;

/// The series for a fault test: enough cycles of `iters` operations at
/// `max_bytes` to last `cover_s` at the rails' line rate, but never more
/// than half the test's timeout (the rest is headroom for a slower fabric,
/// NCCL's start-up and a fault's stall), between 2 and 1000.
pub fn series_for(
    test: &Test,
    spec: &NcclSpec,
    inv: &Inventory,
    nodes: &[NodeId],
    rails: &[u32],
    cover_s: f64,
) -> Series {
    let line_gbs: f64 = nodes
        .first()
        .map(|&n| {
            inv.nodes[n]
                .nics
                .iter()
                .filter(|&&c| rails.contains(&inv.nics[c].rail))
                .map(|&c| f64::from(inv.nics[c].speed_gbps) / 8.0)
                .sum()
        })
        .unwrap_or(0.0);
    // A ring moves about 2x the message per rank for all_reduce, 1x for
    // the others; both timed runs (out-of-place, in-place) count.
    let factor = if spec.tool.binary() == "all_reduce_perf" {
        2.0
    } else {
        1.0
    };
    let cycle = |bytes: u64| {
        2.0 * f64::from(spec.iters.max(1)) * bytes as f64 * factor / (line_gbs.max(1.0) * 1e9)
    };
    // The largest size whose cycle fits the resolution, halving from the
    // sweep's largest and never under the latency-bound floor (nor under
    // the sweep's own smallest size).
    let floor = SERIES_MIN_BYTES.max(spec.min_bytes.0).min(spec.max_bytes.0);
    let mut bytes = spec.max_bytes.0;
    while cycle(bytes) > SERIES_CYCLE_S && bytes / 2 >= floor {
        bytes /= 2;
    }
    let cycle_s = cycle(bytes);
    // Long enough to cover `cover_s`, never more than half the timeout.
    let target = cover_s.min(test.timeout.as_secs_f64() / 2.0);
    Series {
        cycles: ((target / cycle_s.max(1e-6)).ceil() as u64).clamp(2, 1000),
        bytes,
    }
}

pub fn tool_args(spec: &NcclSpec, series: Option<Series>) -> Vec<String> {
    let (min, max) = match series {
        Some(s) => (s.bytes, s.bytes),
        None => (spec.min_bytes.0, spec.max_bytes.0),
    };
    let mut a: Vec<String> = vec![
        spec.tool.binary().into(),
        "-b".into(),
        format_size(min),
        "-e".into(),
        format_size(max),
        "-f".into(),
        spec.step_factor.to_string(),
        "-g".into(),
        "1".into(),
        "-n".into(),
        spec.iters.to_string(),
        "-w".into(),
        spec.warmup.to_string(),
        "-c".into(),
        if spec.check { "1" } else { "0" }.into(),
    ];
    if let Some(s) = series {
        a.extend(["-N".into(), s.cycles.max(1).to_string()]);
    }
    a
}

pub fn mpirun_argv(
    spec: &NcclSpec,
    inv: &Inventory,
    nodes: &[NodeId],
    env: &[(String, String)],
    series: Option<Series>,
) -> Vec<String> {
    mpirun(
        inv,
        nodes,
        spec.gpus_per_node,
        env,
        &tool_args(spec, series),
    )
}

/// OpenMPI's launcher for `program` with `per_node` ranks on each node:
/// `-H host:slots`, `--map-by ppr:N:node`, `-x` for every variable. Under
/// the `ssh` transport, mpirun's own ssh agent gets the transport's client
/// options (user, port, key, jump host, host key policy, batch mode) and
/// launches every daemon from the controller (no tree spawn: compute nodes
/// need not reach each other over ssh).
pub fn mpirun(
    inv: &Inventory,
    nodes: &[NodeId],
    per_node: u32,
    env: &[(String, String)],
    program: &[String],
) -> Vec<String> {
    let mut a: Vec<String> = vec!["mpirun".into()];
    if running_as_root() {
        a.push("--allow-run-as-root".into());
    }
    // Under slurm, mpirun runs inside the allocation and starts its
    // daemons with srun (OpenMPI's slurm launcher), not over ssh.
    if let TransportSpec::Ssh(ssh) = &inv.transport {
        a.extend([
            "--mca".into(),
            "plm_rsh_agent".into(),
            "ssh".into(),
            "--mca".into(),
            "plm_rsh_args".into(),
            // OpenMPI splits this on spaces.
            crate::exec::ssh::client_options(ssh).join(" "),
            "--mca".into(),
            "plm_rsh_no_tree_spawn".into(),
            "1".into(),
        ]);
    }
    let hosts = nodes
        .iter()
        .map(|&n| format!("{}:{per_node}", inv.nodes[n].address))
        .collect::<Vec<_>>()
        .join(",");
    a.extend([
        "-np".into(),
        (nodes.len() as u32 * per_node).to_string(),
        "-H".into(),
        hosts,
        "--map-by".into(),
        format!("ppr:{per_node}:node"),
        "--bind-to".into(),
        "numa".into(),
    ]);
    for (k, v) in env {
        a.extend(["-x".into(), format!("{k}={v}")]);
    }
    a.extend(program.iter().cloned());
    a
}

pub fn collective_step(
    test: &Test,
    spec: &NcclSpec,
    inv: &Inventory,
    nodes: &[NodeId],
    rails: &[u32],
    series: Option<Series>,
) -> Result<StepCommands, String> {
    let env = nccl_env(spec, inv, nodes, rails)?;
    let (argv, env) = match spec.launcher {
        crate::config::suite::Launcher::Mpirun => {
            (mpirun_argv(spec, inv, nodes, &env, series), Vec::new())
        }
        // srun's --export splits on commas and NCCL_IB_HCA has commas, so the
        // variables travel in srun's own environment with --export=ALL.
        crate::config::suite::Launcher::Srun => (srun_argv(spec, inv, nodes, series), env),
    };
    Ok(StepCommands {
        invocations: vec![Invocation {
            host: "localhost".into(),
            argv,
            env,
            role: Role::Launcher,
            timeout: test.timeout,
            at: std::time::Duration::ZERO,
        }],
    })
}

/// Slurm's launcher: `srun -N n -w hosts --ntasks-per-node=G --export=ALL`.
pub fn srun_argv(
    spec: &NcclSpec,
    inv: &Inventory,
    nodes: &[NodeId],
    series: Option<Series>,
) -> Vec<String> {
    let names: Vec<String> = nodes.iter().map(|&n| inv.nodes[n].name.clone()).collect();
    let mut a: Vec<String> = vec![
        "srun".into(),
        "-N".into(),
        nodes.len().to_string(),
        "-w".into(),
        crate::config::hostlist::compress(&names),
        format!("--ntasks-per-node={}", spec.gpus_per_node),
        "--export=ALL".into(),
    ];
    a.extend(tool_args(spec, series));
    a
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::check::parse_inventory;
    use crate::config::check_suite::{parse_suite, TestKind};

    const INV: &str = "fabric: {name: t, environment: lab, rails: 2, roce: {pfc_priority: 3, cnp_priority: 6, dscp_roce: 26, dscp_cnp: 48, dcqcn: true, ecn: {min_kb: 150, max_kb: 1500}, mtu: 4096}}
transport:
  ssh: {user: ops, port: 2222, key: /keys/id, jump: bastion, options: [StrictHostKeyChecking=yes], connect_timeout: 7s}
nodes:
  - hosts: gpu[01-02]
    address: 10.9.0.[1-2]
    nics:
      - {device: mlx5_0, netdev: rdma0, gid_index: 3, rail: 0, speed_gbps: 400}
      - {device: mlx5_1, netdev: rdma1, gid_index: 3, rail: 1, speed_gbps: 400}
";

    fn setup(launcher: &str) -> (Inventory, crate::config::check_suite::Suite) {
        let inv = parse_inventory("i.yaml", INV).unwrap();
        let suite = parse_suite(
            "s.yaml",
            &format!("suite: {{name: s}}\ntests:\n  - name: ar\n    nccl: {{tool: all_reduce_perf, min_bytes: 1M, max_bytes: 1G, gpus_per_node: 2, launcher: {launcher}, env: {{NCCL_SOCKET_IFNAME: eth0}}}}\n    pattern: all-nodes\n"),
            &inv,
        )
        .unwrap();
        (inv, suite)
    }

    /// mpirun reaches the nodes the way the transport does: same user,
    /// port, key, jump host and host key policy, from the controller only.
    #[test]
    fn mpirun_uses_the_transports_ssh_options() {
        let (inv, suite) = setup("mpirun");
        let t = &suite.tests[0];
        let TestKind::Nccl(spec) = &t.kind else {
            panic!()
        };
        let step = collective_step(t, spec, &inv, &[0, 1], &[0, 1], None).unwrap();
        let argv = &step.invocations[0].argv;
        let line = argv.join(" ");
        let at = |w: &str| argv.iter().position(|a| a == w).unwrap();
        assert_eq!(argv[at("plm_rsh_agent") + 1], "ssh");
        assert_eq!(
            argv[at("plm_rsh_args") + 1],
            "-o BatchMode=yes -o ConnectTimeout=7 -o ServerAliveInterval=5 -o ServerAliveCountMax=3 -o LogLevel=ERROR -o StrictHostKeyChecking=yes -p 2222 -i /keys/id -l ops -J bastion"
        );
        assert_eq!(argv[at("plm_rsh_no_tree_spawn") + 1], "1");
        assert_eq!(argv[at("-H") + 1], "10.9.0.1:2,10.9.0.2:2");
        assert_eq!(argv[at("-np") + 1], "4");
        assert_eq!(argv[at("--map-by") + 1], "ppr:2:node");
        assert!(line.contains("-x NCCL_IB_HCA==mlx5_0:1,mlx5_1:1"), "{line}");
        assert!(line.contains("-x NCCL_SOCKET_IFNAME=eth0"), "{line}");
        assert!(
            line.ends_with("all_reduce_perf -b 1M -e 1G -f 2 -g 1 -n 20 -w 5 -c 1"),
            "{line}"
        );
        assert!(step.invocations[0].env.is_empty());
    }

    /// srun: node count, hostlist, tasks per node; NCCL variables travel in
    /// the environment because `--export` splits on the commas in NCCL_IB_HCA.
    #[test]
    fn srun_exports_all_and_carries_nccl_in_its_environment() {
        let (inv, suite) = setup("srun");
        let t = &suite.tests[0];
        let TestKind::Nccl(spec) = &t.kind else {
            panic!()
        };
        let step = collective_step(t, spec, &inv, &[0, 1], &[0, 1], None).unwrap();
        let i = &step.invocations[0];
        assert_eq!(
            i.argv.join(" "),
            "srun -N 2 -w gpu[01-02] --ntasks-per-node=2 --export=ALL all_reduce_perf -b 1M -e 1G -f 2 -g 1 -n 20 -w 5 -c 1"
        );
        assert!(i
            .env
            .contains(&("NCCL_IB_HCA".to_string(), "=mlx5_0:1,mlx5_1:1".to_string())));
        assert!(i
            .env
            .contains(&("NCCL_SOCKET_IFNAME".to_string(), "eth0".to_string())));
        assert_eq!(i.host, "localhost");
        // Series mode: one size, -N cycles.
        let series = series_for(t, spec, &inv, &[0, 1], &[0, 1], 60.0);
        assert!(series.cycles >= 2, "{series:?}");
        // Two 400G NICs: 1 GiB takes 0.86 s a cycle (20 iterations, both
        // placements, 2x for all_reduce), over the 0.5 s resolution, so the
        // series halves it once.
        assert_eq!(series.bytes, 512 << 20, "{series:?}");
        let one_rail = series_for(t, spec, &inv, &[0, 1], &[0], 60.0);
        assert_eq!(one_rail.bytes, 256 << 20, "{one_rail:?}");
        let step = collective_step(
            t,
            spec,
            &inv,
            &[0, 1],
            &[0, 1],
            Some(Series {
                cycles: 40,
                bytes: spec.max_bytes.0,
            }),
        )
        .unwrap();
        assert!(
            step.invocations[0]
                .argv
                .join(" ")
                .ends_with("all_reduce_perf -b 1G -e 1G -f 2 -g 1 -n 20 -w 5 -c 1 -N 40"),
            "{}",
            step.invocations[0].argv.join(" ")
        );
    }
}
