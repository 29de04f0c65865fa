//! Model-level tests of the emulator with hand-computed answers: ECMP
//! collisions, defects, perftest rows and rules, nccl-tests bus bandwidth,
//! determinism. Unit tests of the parts live beside them.

use std::time::Duration;

use super::fabric::{goodput_factor, Fabric};
use super::noise;
use super::share::{max_min, Demand};
use super::testutil::pod;
use super::Emulator;
use crate::config::inventory::Defect;
use crate::exec::types::{Invocation, InvocationOutput, Role, StepCommands};

/// 400 × 4096 / (4096 + 82).
const CAP_4096: f64 = 400.0 * 4096.0 / 4178.0;

fn inv(host: &str, line: &str, role: Role) -> Invocation {
    Invocation {
        host: host.into(),
        argv: line.split_whitespace().map(String::from).collect(),
        env: Vec::new(),
        role,
        timeout: Duration::from_secs(120),
        at: Duration::ZERO,
    }
}

/// A perftest server on `server` and its client on `client`, port `port`.
fn pair(tool_args: &str, server: &str, client: &str, port: u16) -> StepCommands {
    let s = format!("numactl --cpunodebind=0 --membind=0 {tool_args} -p {port}");
    let c = format!("{s} {server}.mgmt");
    StepCommands {
        invocations: vec![inv(server, &s, Role::Server), inv(client, &c, Role::Client)],
    }
}

/// `BW average` of the last table row of a bandwidth output.
fn last_bw(out: &InvocationOutput) -> f64 {
    let row = out
        .stdout
        .lines()
        .rev()
        .find(|l| l.trim_start().starts_with(|c: char| c.is_ascii_digit()))
        .unwrap_or_else(|| panic!("no row in:\n{}", out.stdout));
    row.split_whitespace().nth(3).unwrap().parse().unwrap()
}

fn node(n: usize) -> String {
    format!("gpu{n:03}")
}

/// The band a healthy pair's bandwidth prints in: the model's `cap` less at
/// most what the noise takes (`noise::BW_MAX_LOSS`), give or take the last
/// printed digit.
fn in_bw_band(v: f64, cap: f64) -> bool {
    v <= cap + 0.005 && v >= cap * (1.0 - noise::BW_MAX_LOSS) - 0.005
}

#[test]
fn two_flows_hashed_onto_one_uplink_get_half_each() {
    let inv = pod(4096, &[]);
    let f = Fabric::new(&inv, 42);
    let nic = |node: usize| inv.nodes[node].nics[0];
    // gpu001 → gpu009 and gpu002 → gpu010 both leave r0-leaf1 for r0-leaf2.
    // Find source ports that put both on the same leaf uplink.
    let first = f.path(nic(0), nic(8), 0xC000).unwrap();
    let sport = (0xC001u16..=0xFFFF)
        .find(|&s| f.path(nic(1), nic(9), s).unwrap()[1] == first[1])
        .expect("some port collides on 8 uplinks");
    let second = f.path(nic(1), nic(9), sport).unwrap();
    let flows = [
        Demand {
            links: first,
            cap: f64::INFINITY,
        },
        Demand {
            links: second,
            cap: f64::INFINITY,
        },
    ];
    let r = max_min(&f.capacity, &flows);
    // By hand: the shared 400G uplink carries 392.149 of payload, half each.
    assert!((r[0] - CAP_4096 / 2.0).abs() < 1e-6, "{r:?}");
    assert!((r[1] - CAP_4096 / 2.0).abs() < 1e-6, "{r:?}");
    // And a port that avoids the collision gives both the full NIC rate.
    let apart = (0xC001u16..=0xFFFF)
        .find(|&s| f.path(nic(1), nic(9), s).unwrap()[1] != flows[0].links[1])
        .unwrap();
    let flows = [
        flows[0].clone(),
        Demand {
            links: f.path(nic(1), nic(9), apart).unwrap(),
            cap: f64::INFINITY,
        },
    ];
    let r = max_min(&f.capacity, &flows);
    assert!(r.iter().all(|x| (x - CAP_4096).abs() < 1e-6), "{r:?}");
}

#[test]
fn idle_pair_prints_the_mtu_cap() {
    for (mtu, cap) in [(4096u32, 392.15), (1024, 370.34)] {
        let mut emu = Emulator::new(&pod(mtu, &[]), 1);
        let args = "ib_write_bw -d mlx5_0 -i 1 -x 3 -F --report_gbits -s 1048576 -D 10 -q 8";
        let out = emu.run_batch(&[pair(args, "gpu009", "gpu001", 18515)]);
        let (server, client) = (&out[0][0], &out[0][1]);
        assert_eq!(client.exit, Some(0), "{}", client.stderr);
        // The cap less this run's host-side noise; both ends print it.
        assert!(in_bw_band(last_bw(client), cap), "{}", client.stdout);
        assert_eq!(last_bw(server), last_bw(client), "{}", server.stdout);
        // -D: the peak column prints 0.00 and the warning comes first.
        assert!(client
            .stdout
            .starts_with(" WARNING: BW peak won't be measured"));
        let row = client.stdout.lines().rev().nth(1).unwrap();
        assert_eq!(row.split_whitespace().nth(2), Some("0.00"));
        assert!(client
            .stdout
            .contains(&format!(" Mtu             : {mtu}[B]\n")));
        assert!(client.stdout.contains("RDMA_Write BW Test"));
        assert!(client
            .stdout
            .contains(" Number of qps   : 8\t\tTransport type : IB\n"));
        // 8 local and 8 remote address lines, each with a GID line.
        assert_eq!(client.stdout.matches(" GID: ").count(), 16);
        // Virtual time: 2 s setup + 10 s, client starting after the server.
        assert!((client.ended_s - 12.05).abs() < 1e-9, "{}", client.ended_s);
        assert!((emu.now_s() - 12.05).abs() < 1e-9);
    }
}

#[test]
fn mib_units_without_report_gbits() {
    let mut emu = Emulator::new(&pod(4096, &[]), 1);
    let out = emu.run_batch(&[pair(
        "ib_write_bw -d mlx5_0 -s 1048576",
        "gpu002",
        "gpu001",
        18515,
    )]);
    let c = &out[0][1];
    assert!(c.stdout.contains("BW average[MiB/sec]"), "{}", c.stdout);
    // 392.149 Gb/s = 392.149e9 / 8 / 2^20 MiB/s = 46748.5…, less the noise.
    let expect = CAP_4096 * 1e9 / 8.0 / 1_048_576.0;
    let got = last_bw(c);
    assert!(
        got <= expect && got >= expect * (1.0 - noise::BW_MAX_LOSS),
        "{got} vs {expect}"
    );
    // 5000 iterations × 1 MiB at what it printed (≈ 0.107 s), plus setup.
    let run = 5000.0 / got;
    let took = c.ended_s - c.started_s - 2.0;
    assert!((took / run - 1.0).abs() < 1e-6, "{took} vs {run}");
}

#[test]
fn concurrent_pairs_across_leaves_land_between_the_ecmp_floor_and_the_cap() {
    let inv = pod(4096, &[]);
    let mut emu = Emulator::new(&inv, 1);
    let args = "ib_write_bw -d mlx5_0 -x 3 -F --report_gbits -s 1048576 -D 10 -q 8";
    let steps: Vec<StepCommands> = (1..=8)
        .map(|i| pair(args, &node(i + 8), &node(i), 18515 + i as u16))
        .collect();
    let out = emu.run_batch(&steps);
    let bws: Vec<f64> = out.iter().map(|s| last_bw(&s[1])).collect();
    // The floor: every flow gets at least its equal share of the most crowded
    // link on its path (a property of max-min fairness). Recompute the
    // placement the emulator used from the QPNs it printed.
    let fabric = Fabric::new(&inv, 1);
    let mut paths: Vec<Vec<Vec<usize>>> = Vec::new();
    for (i, s) in out.iter().enumerate() {
        let qpns = |text: &str, which: &str| -> Vec<u32> {
            text.lines()
                .filter(|l| l.starts_with(&format!(" {which} address:")))
                .map(|l| {
                    let w = l.split_whitespace().nth(5).unwrap();
                    u32::from_str_radix(w.trim_start_matches("0x"), 16).unwrap()
                })
                .collect()
        };
        let local = qpns(&s[1].stdout, "local");
        let remote = qpns(&s[1].stdout, "remote");
        assert_eq!(local.len(), 8);
        let src = inv.nodes[i].nics[0];
        let dst = inv.nodes[i + 8].nics[0];
        paths.push(
            local
                .iter()
                .zip(&remote)
                .map(|(&l, &r)| {
                    fabric
                        .path(src, dst, super::fabric::roce_sport(l, r))
                        .unwrap()
                })
                .collect(),
        );
    }
    let mut load = vec![0usize; fabric.capacity.len()];
    for p in paths.iter().flatten() {
        for &l in p {
            load[l] += 1;
        }
    }
    for (i, bw) in bws.iter().enumerate() {
        let floor: f64 = paths[i]
            .iter()
            .map(|p| {
                p.iter()
                    .map(|&l| fabric.capacity[l] / load[l] as f64)
                    .fold(f64::INFINITY, f64::min)
            })
            .sum();
        assert!(*bw >= floor - 0.01, "pair {i}: {bw} below floor {floor}");
        assert!(*bw <= CAP_4096 + 0.005, "pair {i}: {bw} above cap");
    }
    // 64 flows on 8 uplinks do collide: the pod loses bandwidth somewhere.
    let total: f64 = bws.iter().sum();
    assert!(total < 8.0 * CAP_4096 - 1.0, "{bws:?}");
}

#[test]
fn same_seed_same_output_different_seed_different_placement() {
    let args = "ib_write_bw -d mlx5_0 -x 3 -F --report_gbits -s 1048576 -D 10 -q 8";
    let steps: Vec<StepCommands> = (1..=8)
        .map(|i| pair(args, &node(i + 8), &node(i), 18515 + i as u16))
        .collect();
    let run = |seed: u64| Emulator::new(&pod(4096, &[]), seed).run_batch(&steps);
    let a = run(5);
    assert_eq!(a, run(5));
    let bws =
        |o: &Vec<Vec<InvocationOutput>>| -> Vec<f64> { o.iter().map(|s| last_bw(&s[1])).collect() };
    assert!((6..12).any(|s| bws(&run(s)) != bws(&a)));
}

#[test]
fn perftest_rules_are_enforced() {
    let mut emu = Emulator::new(&pod(4096, &[]), 1);
    let out = emu.run_batch(&[
        pair(
            "ib_write_bw -d mlx5_0 -a -D 10 --report_gbits",
            "gpu002",
            "gpu001",
            18515,
        ),
        pair("ib_write_lat -d mlx5_0 -q 2", "gpu004", "gpu003", 18515),
        pair(
            "ib_write_bw -d mlx5_9 --report_gbits",
            "gpu006",
            "gpu005",
            18515,
        ),
        StepCommands {
            invocations: vec![inv("gpu007", "ibv_devinfo_nope -v", Role::Probe)],
        },
    ]);
    for o in &out[0] {
        assert_eq!(o.exit, Some(1));
        assert_eq!(
            o.stderr,
            "Duration mode currently doesn't support running on all sizes.\n"
        );
    }
    assert!(out[1][1]
        .stderr
        .starts_with(" Multiple QPs only available on bw tests\n"));
    assert_eq!(
        out[2][1].stderr,
        "IB device mlx5_9 not found\n Unable to find the Infiniband/RoCE device\n"
    );
    assert_eq!(out[3][0].exit, Some(127));
    assert_eq!(
        out[3][0].stderr,
        "bash: line 1: ibv_devinfo_nope: command not found\n"
    );
}

#[test]
fn all_sizes_curve_rises_to_the_cap_and_latency_grows_with_hops() {
    let mut emu = Emulator::new(&pod(4096, &[]), 3);
    let out = emu.run_batch(&[
        pair(
            "ib_write_bw -d mlx5_0 -a --report_gbits",
            "gpu009",
            "gpu001",
            18515,
        ),
        pair("ib_write_lat -d mlx5_0 -s 2", "gpu003", "gpu002", 18515),
        pair("ib_read_lat -d mlx5_0 -s 2", "gpu010", "gpu004", 18515),
    ]);
    let rows: Vec<f64> = out[0][1]
        .stdout
        .lines()
        .filter(|l| l.trim_start().starts_with(|c: char| c.is_ascii_digit()))
        .map(|l| l.split_whitespace().nth(3).unwrap().parse().unwrap())
        .collect();
    assert_eq!(rows.len(), 23);
    // Each size is its own measurement with its own dip (at most
    // TRUNC_SIGMA × BW_TICK_SIGMA), so on the plateau a row may print a
    // hair under the one before, as real -a tables do.
    let dip = noise::TRUNC_SIGMA * noise::BW_TICK_SIGMA;
    assert!(
        rows.windows(2).all(|w| w[0] <= w[1] / (1.0 - dip) + 0.01),
        "{rows:?}"
    );
    // 2 bytes at 10 M msg/s = 0.16 Gb/s; 8 MiB at the cap, less the noise.
    assert!((rows[0] - 0.16).abs() < 1e-9, "{rows:?}");
    assert!(in_bw_band(rows[22], 392.15), "{rows:?}");
    assert!(rows[12..].iter().any(|&r| r != rows[22]), "{rows:?}");
    // The server of a one-way -a run prints only the last row.
    assert_eq!(last_bw(&out[0][0]), rows[22]);
    let typical = |o: &InvocationOutput| -> f64 {
        let row = o.stdout.lines().rev().nth(1).unwrap();
        row.split_whitespace().nth(4).unwrap().parse().unwrap()
    };
    // The hosts' and the run's excess lengthens the fixed part by at most
    // LAT_MAX_EXCESS, each row's own wobble by at most 3 LAT_ROW_SIGMA.
    let band = |fixed: f64, t: f64| {
        let most = (fixed * (1.0 + noise::LAT_MAX_EXCESS) + t - fixed)
            * (1.0 + noise::TRUNC_SIGMA * noise::LAT_ROW_SIGMA);
        (t - 0.005)..=(most + 0.005)
    };
    // Same leaf, write: 1.0 µs + 2 B at 392 Gb/s ≈ 1.00 µs (half a round trip).
    let w = typical(&out[1][1]);
    assert!(band(1.0, 1.0).contains(&w), "{w}");
    // Across leaves, read: full round trip 2 × (1.0 + 2 × 0.6) + 0.3 = 4.7 µs,
    // of which the 4.4 µs of switches and hosts carry the excess.
    let r = typical(&out[2][1]);
    assert!(band(4.4, 4.7).contains(&r), "{r}");
}

fn mpirun(hosts: usize, hca: &str) -> StepCommands {
    let h: Vec<String> = (1..=hosts).map(|i| format!("{}:8", node(i))).collect();
    let line = format!(
        "mpirun --allow-run-as-root -np {} -H {} --map-by ppr:8:node --bind-to numa -x NCCL_IB_HCA={hca} -x NCCL_IB_GID_INDEX=3 -x NCCL_ALGO=Ring -x NCCL_DEBUG=INFO -x NCCL_DEBUG_SUBSYS=INIT,NET all_reduce_perf -b 8 -e 8G -f 2 -g 1 -n 20 -w 5 -c 1",
        hosts * 8,
        h.join(",")
    );
    StepCommands {
        invocations: vec![inv("localhost", &line, Role::Launcher)],
    }
}

const ALL_HCAS: &str = "=mlx5_0:1,mlx5_1:1,mlx5_2:1,mlx5_3:1,mlx5_4:1,mlx5_5:1,mlx5_6:1,mlx5_7:1";

#[test]
fn ring_busbw_follows_the_slowest_nic() {
    let run = |defects: &[Defect]| {
        let mut emu = Emulator::new(&pod(4096, defects), 1);
        let out = emu.run_batch(&[mpirun(16, ALL_HCAS)]);
        out[0][0].clone()
    };
    let healthy = run(&[]);
    assert_eq!(healthy.exit, Some(0), "{}", healthy.stderr);
    let text = &healthy.stdout;
    assert!(text
        .contains("NCCL INFO NET/IB : Using [0]mlx5_0:1/RoCE [1]mlx5_1:1/RoCE [2]mlx5_2:1/RoCE"));
    assert!(text.contains("NCCL INFO Using network IB"));
    assert!(text.contains("Channel 00/0 : 0[0] -> 8[0] [send] via NET/IB/0/GDRDMA"));
    assert!(text.contains("# Out of bounds values : 0 OK"));
    let busbw_8g = |o: &InvocationOutput| -> f64 {
        let row = o
            .stdout
            .lines()
            .find(|l| l.trim_start().starts_with("8589934592"))
            .unwrap();
        row.split_whitespace().nth(7).unwrap().parse().unwrap()
    };
    // By hand: plateau 8 rails × 392.149 Gb/s / 8 × 0.94 = 368.62 GB/s.
    // At 8 GiB over 128 ranks on 16 nodes (254 steps):
    //   latency 6 + 254 × (0.35 + 2.2 × 16/128) = 164.75 µs,
    //   fill    254 × 262144 B / 46.08 GB/s      = 1445.0 µs,
    //   stream  8589934592 × 254/128 / 368.62e9  = 46243 µs,
    // busbw = 368.62 × 46243 / 47852.8 = 356.2 GB/s, less the noise: the
    // slowest host and the job's own loss (NCCL_MAX_LOSS), and the row's
    // own excess (latency is 0.34 % of it).
    let h = busbw_8g(&healthy);
    let row = noise::TRUNC_SIGMA * (noise::NCCL_ROW_SIGMA + noise::NCCL_ROW_LAT_SIGMA * 0.0035);
    let low = 356.2 * (1.0 - noise::NCCL_MAX_LOSS) / (1.0 + row) - 0.1;
    assert!((low..356.3).contains(&h), "{h} not in {low}..356.3");
    // One 200G NIC: its ring edges carry 196.07, the rails wait for it.
    let slow = run(&[Defect::NicSpeed {
        nic: "gpu005:mlx5_3".into(),
        gbps: 200,
    }]);
    let ratio = busbw_8g(&slow) / h;
    assert!((0.48..0.52).contains(&ratio), "{ratio}");
    // Small messages are latency-bound.
    let row8 = text
        .lines()
        .find(|l| l.trim_start().starts_with("8 "))
        .unwrap();
    let t: f64 = row8.split_whitespace().nth(5).unwrap().parse().unwrap();
    assert!(t > 50.0, "{row8}");
}

#[test]
fn single_node_uses_nvlink_and_missing_hcas_fall_back_to_sockets() {
    let mut emu = Emulator::new(&pod(4096, &[]), 1);
    let out = emu.run_batch(&[mpirun(1, ALL_HCAS), mpirun(2, "=mlx5_9:1")]);
    let busbw_max = |o: &InvocationOutput| -> f64 {
        o.stdout
            .lines()
            .filter(|l| l.trim_start().starts_with(|c: char| c.is_ascii_digit()))
            .map(|l| l.split_whitespace().nth(7).unwrap().parse::<f64>().unwrap())
            .fold(0.0, f64::max)
    };
    let nvl = busbw_max(&out[0][0]);
    assert!((440.0..486.0).contains(&nvl), "{nvl}");
    let sock = &out[1][0].stdout;
    assert!(sock.contains("NET/IB : No device found."));
    assert!(sock.contains("Using network Socket"));
    assert!(busbw_max(&out[1][0]) < 2.6);
}

#[test]
fn goodput_factor_is_the_documented_ratio() {
    assert!((goodput_factor(4096) * 400.0 - CAP_4096).abs() < 1e-12);
}
