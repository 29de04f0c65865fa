//! The emulated fabric prints what the real tools print: for the options of
//! a real captured run, the emulator's output parses to the same fields.

use std::time::Duration;

use rocegate::config::check::parse_inventory;
use rocegate::config::generate::{generate, to_yaml, PodShape};
use rocegate::emu::Emulator;
use rocegate::exec::{Invocation, Role, StepCommands};
use rocegate::workload::nccl::parse as nccl;
use rocegate::workload::perftest::parse as perftest;

fn pod(mtu: u32) -> rocegate::config::model::Inventory {
    let shape = PodShape {
        nodes: 4,
        rails: 2,
        nodes_per_leaf: 2,
        spines: 2,
        mtu,
        ..PodShape::default()
    };
    parse_inventory(
        "pod.yaml",
        &to_yaml(&shape, &generate(&shape).unwrap()).unwrap(),
    )
    .unwrap()
}

fn inv(host: &str, cmd: &str, role: Role) -> Invocation {
    Invocation {
        host: host.into(),
        argv: cmd.split_whitespace().map(String::from).collect(),
        env: Vec::new(),
        role,
        timeout: Duration::from_secs(600),
        at: Duration::ZERO,
    }
}

fn fixture(path: &str) -> String {
    std::fs::read_to_string(format!(
        "{}/tests/fixtures/{path}",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap()
}

#[test]
fn perftest_all_sizes_gbits_matches_the_cns_capture() {
    // The capture ran `ib_write_bw -a -F --report_gbits -q 1` on RoCE, GID index 4, MTU 1024.
    let real = perftest::parse(
        &fixture("perftest/ib_write_bw-cns-roce-all-gbits-client.txt"),
        &Default::default(),
    )
    .unwrap();
    let inventory = pod(1024);
    let mut emu = Emulator::new(&inventory, 1);
    let args = "ib_write_bw -d mlx5_0 -i 1 -x 4 -p 18515 -a -F --report_gbits -q 1";
    let step = StepCommands {
        invocations: vec![
            inv("gpu001", args, Role::Server),
            inv("gpu002", &format!("{args} gpu001.mgmt"), Role::Client),
        ],
    };
    let out = emu.run_batch(&[step]);
    let emulated = perftest::parse(&out[0][1].stdout, &Default::default()).unwrap();
    assert_eq!(emulated.tool, real.tool);
    assert_eq!(emulated.kind, real.kind);
    assert_eq!(emulated.link_type, real.link_type);
    assert_eq!(emulated.gid_index, real.gid_index);
    assert_eq!(emulated.mtu, real.mtu);
    assert_eq!(emulated.qps, real.qps);
    assert_eq!(emulated.unit, real.unit);
    let sizes = |r: &perftest::PerftestReport| {
        r.rows
            .iter()
            .map(|row| match row {
                perftest::PerftestRow::Bw(b) => b.bytes,
                perftest::PerftestRow::Lat(l) => l.bytes,
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(sizes(&emulated), sizes(&real));
    assert!(
        emulated.error.is_none() && emulated.warnings.is_empty(),
        "{:?}",
        emulated.warnings
    );
    // The largest size reaches the RoCEv2 cap for MTU 1024: 400 × 1024 / 1106,
    // less the hosts' and the run's variation: never above the cap, at most
    // 0.87 % under it (docs/emulator.md, "Variation": BW_MAX_LOSS).
    let perftest::PerftestRow::Bw(last) = emulated.rows.last().unwrap() else {
        panic!()
    };
    let cap = 400.0 * 1024.0 / 1106.0;
    let got = last.bw_avg_gbps.unwrap();
    assert!(
        got <= cap + 0.005 && got >= cap * (1.0 - 0.0087) - 0.005,
        "{got} vs {cap}"
    );
}

#[test]
fn nccl_all_reduce_matches_the_awsbatch_capture() {
    let real = nccl::parse(
        &fixture("nccl/all_reduce_perf-awsbatch-p5-mpirun-tagoutput.txt"),
        &Default::default(),
    )
    .unwrap();
    let inventory = pod(4096);
    let mut emu = Emulator::new(&inventory, 1);
    let cmd = "mpirun -np 4 -H gpu001.mgmt:2,gpu002.mgmt:2 --map-by ppr:2:node -x NCCL_IB_HCA==mlx5_0:1,mlx5_1:1 \
               -x NCCL_ALGO=Ring -x NCCL_DEBUG=INFO -x NCCL_DEBUG_SUBSYS=INIT,NET all_reduce_perf -b 8 -e 16G -f 2 -g 1";
    let out = emu.run_batch(&[StepCommands {
        invocations: vec![inv("localhost", cmd, Role::Launcher)],
    }]);
    let emulated = nccl::parse(&out[0][0].stdout, &Default::default()).unwrap();
    assert_eq!(emulated.collective, Some("all_reduce".to_string()));
    assert_eq!(emulated.nranks, Some(4));
    assert_eq!(emulated.error_column, real.error_column);
    assert_eq!(
        emulated.rows.first().map(|r| r.bytes),
        real.rows.first().map(|r| r.bytes)
    );
    assert_eq!(
        emulated.rows.last().map(|r| r.bytes),
        real.rows.last().map(|r| r.bytes)
    );
    assert_eq!(emulated.rows.len(), real.rows.len());
    assert_eq!(emulated.rows[0].dtype, real.rows[0].dtype);
    assert_eq!(emulated.rows[0].redop, real.rows[0].redop);
    assert!(emulated.avg_busbw_gbs.is_some() && emulated.out_of_bounds == Some(0));
    assert_eq!(
        emulated.transport,
        Some(nccl::Transport::Ib),
        "NCCL's NET lines prove RDMA"
    );
    assert_eq!(emulated.hcas.len(), 2);
    assert!(emulated.errors.is_empty(), "{:?}", emulated.errors);
}
