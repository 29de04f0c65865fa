//! Time series on the emulated pod: `--run_infinitely` windows and nccl
//! `-N` cycles under a flap shorter than the retry budget, read back with
//! the harness's own measurement code.

use std::time::Duration;

use super::testutil::pod;
use super::Emulator;
use crate::config::suite::Metric;
use crate::exec::types::{Invocation, Role, StepCommands};
use crate::workload::measure;

fn at(host: &str, line: &str, role: Role, secs: f64) -> Invocation {
    Invocation {
        host: host.into(),
        argv: line.split_whitespace().map(String::from).collect(),
        env: Vec::new(),
        role,
        timeout: Duration::from_secs(300),
        at: Duration::from_secs_f64(secs),
    }
}

/// gpu001 → gpu002 on rail 0 in 1 s windows, stopped by SIGINT after
/// `total` s. `-u 20` gives the QP a 34 s retry budget.
fn series_pair(total: u64) -> StepCommands {
    let s = "ib_write_bw -d mlx5_0 -x 3 -F --report_gbits -s 1048576 --run_infinitely -D 1 -u 20 -p 18515";
    let c = format!("timeout --signal=INT --preserve-status {total} stdbuf -oL {s} gpu002.mgmt");
    StepCommands {
        invocations: vec![
            at("gpu002", s, Role::Server, 0.0),
            at("gpu001", &c, Role::Client, 0.0),
        ],
    }
}

fn flap(host: &str, dev: &str, down: f64, up: f64) -> StepCommands {
    StepCommands {
        invocations: vec![
            at(
                host,
                &format!("ip link set dev {dev} down"),
                Role::Probe,
                down,
            ),
            at(host, &format!("ip link set dev {dev} up"), Role::Probe, up),
        ],
    }
}

#[test]
fn run_infinitely_windows_show_a_flap_as_a_dip_then_recovery() {
    let cmds = series_pair(12);
    let mut emu = Emulator::new(&pod(4096, &[]), 1);
    let out = emu.run_batch(&[cmds.clone(), flap("gpu001", "rdma0", 5.0, 7.0)]);
    let (server, client) = (&out[0][0], &out[0][1]);
    // Stopped by its timeout's SIGINT: 128 + 2 with --preserve-status.
    assert_eq!(client.exit, Some(130), "{client:?}");
    assert!(client
        .stdout
        .starts_with(" WARNING: BW peak won't be measured in this run.\n"));
    assert_eq!(server.exit, Some(1));
    assert!(server.stderr.contains("Failed to exchange data"));
    let m = measure::perftest_step(&cmds, &out[0], Metric::BwAvgGbps, None);
    assert!(m.failure.is_none(), "{:?}", m.failure);
    // Setup takes 2 s of the 12: ten windows, the last ending at the stop.
    let s = &m.series;
    assert_eq!(s.len(), 10, "{s:?}");
    assert!((s[9].0 - client.ended_s).abs() < 1e-9);
    assert!((s[0].0 - (client.started_s + 3.0)).abs() < 1e-9, "{s:?}");
    let full = s[0].1;
    assert!(full > 300.0, "{s:?}");
    // Down from 5.0 to 7.0; windows end at 3.05, 4.05, …
    let near = |v: f64, want: f64| (v / full - want).abs() < 0.01;
    assert!(near(s[1].1, 1.0), "{s:?}");
    assert!(near(s[2].1, 0.95), "{s:?}");
    assert!(near(s[3].1, 0.0), "{s:?}");
    assert!(near(s[4].1, 0.05), "{s:?}");
    assert!(s[5..].iter().all(|p| near(p.1, 1.0)), "{s:?}");
    // The value is the mean window.
    let mean = s.iter().map(|p| p.1).sum::<f64>() / 10.0;
    assert!((m.value.unwrap() - mean).abs() < 0.01 * full);
}

#[test]
fn run_infinitely_outlasting_the_retry_budget_fails_after_its_windows() {
    let s = "ib_write_bw -d mlx5_0 -x 3 -F --report_gbits --run_infinitely -D 1 -p 18515";
    let c = format!("timeout --signal=INT --preserve-status 12 stdbuf -oL {s} gpu002.mgmt");
    let cmds = StepCommands {
        invocations: vec![
            at("gpu002", s, Role::Server, 0.0),
            at("gpu001", &c, Role::Client, 0.0),
        ],
    };
    let mut emu = Emulator::new(&pod(4096, &[]), 1);
    let out = emu.run_batch(&[cmds.clone(), flap("gpu001", "rdma0", 5.0, 9.0)]);
    assert_eq!(out[0][1].exit, Some(1));
    let m = measure::perftest_step(&cmds, &out[0], Metric::BwAvgGbps, None);
    let f = m.failure.unwrap();
    assert_eq!(f.class, "fabric", "{f:?}");
    // The windows before the QPs gave up are kept; counted back from the
    // failure (5.537 s), their ends sit less than a window late.
    assert_eq!(m.series.len(), 3, "{:?}", m.series);
    let late = m.series[2].0 - 5.05;
    assert!((0.0..1.0).contains(&late), "{:?}", m.series);
}

#[test]
fn run_infinitely_is_refused_where_perftest_refuses_it() {
    let mut emu = Emulator::new(&pod(4096, &[]), 1);
    let line = "ib_write_lat -d mlx5_0 --run_infinitely";
    let out = emu.run_batch(&[StepCommands {
        invocations: vec![at("gpu002", line, Role::Server, 0.0)],
    }]);
    assert_eq!(out[0][0].exit, Some(1));
    assert!(out[0][0]
        .stderr
        .contains("run_infinitely exists only in BW tests"));
}

#[test]
fn nccl_cycles_show_a_flap_as_a_slow_cycle_then_recovery() {
    let line = "mpirun --allow-run-as-root -np 16 -H gpu001:8,gpu002:8 --map-by ppr:8:node -x NCCL_IB_HCA==mlx5_0:1 -x NCCL_IB_GID_INDEX=3 -x NCCL_ALGO=Ring all_reduce_perf -b 256M -e 256M -f 2 -g 1 -n 20 -w 5 -c 1 -N 20";
    let cmds = StepCommands {
        invocations: vec![at("localhost", line, Role::Launcher, 0.0)],
    };
    let mut emu = Emulator::new(&pod(4096, &[]), 1);
    let out = emu.run_batch(&[cmds.clone(), flap("gpu001", "rdma0", 6.0, 8.0)]);
    let o = &out[0][0];
    assert_eq!(o.exit, Some(0), "{}", o.stderr);
    let m = measure::nccl_step(&cmds, &out[0], Metric::BusbwGbs, 256 << 20);
    assert!(m.failure.is_none(), "{:?}", m.failure);
    let s = &m.series;
    // Two timed runs per cycle: out-of-place, then in-place.
    assert_eq!(s.len(), 40, "{s:?}");
    assert!((s[39].0 - o.ended_s).abs() < 1e-9);
    assert!(s.windows(2).all(|w| w[0].0 < w[1].0));
    let full = s[0].1;
    assert!(full > 40.0, "{s:?}");
    // The run that spans the outage reads far lower; the later ones are
    // back at the plateau.
    let low = s.iter().map(|p| p.1).fold(f64::INFINITY, f64::min);
    assert!(low < 0.5 * full, "{s:?}");
    let dip = s.iter().position(|p| p.1 == low).unwrap();
    // Counted back from the end, the slow run ends after the link is up.
    assert!(s[dip].0 > 8.0 && s[dip].0 < 9.0, "{s:?}");
    assert!(s[dip + 1..].iter().all(|p| p.1 > 0.98 * full), "{s:?}");
}
