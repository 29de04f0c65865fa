//! The minimal counters sampler: reads `ethtool -S` and the RDMA sysfs
//! counters of every NIC a round uses (and `ethtool -S`, `ip -s -s -j link`
//! and `tc -s -d qdisc` of the leaf port in front of each, on `linux` switches) at a fixed interval inside the round,
//! through the transport like any command, and parses what comes back with
//! the same parsers a real pod's output goes through.

use std::time::Duration;

use crate::config::check_suite::Test;
use crate::config::inventory::SwitchDriver;
use crate::config::model::{Inventory, NicId};
use crate::counters::{host, switch_linux, Snapshot};
use crate::exec::compose::{compose, split};
use crate::exec::{Invocation, InvocationOutput, Role, StepCommands};
use crate::plan::Step;
use crate::report::events::CounterRecord;

/// Reads per device at most, whatever the interval.
const MAX_SAMPLES: u32 = 1000;
const READ_TIMEOUT: Duration = Duration::from_secs(20);

/// Which parser reads an output.
#[derive(Debug, Clone, Copy)]
enum Source {
    NicStats,
    NicSysfs,
    PortStats,
    PortLink,
    PortQdisc,
}

impl Source {
    /// The source for a sampler command line, by its tool.
    fn of(argv: &[String], switch: bool) -> Source {
        match (argv.first().map(String::as_str), switch) {
            (Some("grep"), _) => Source::NicSysfs,
            (Some("ip"), _) => Source::PortLink,
            (Some("tc"), _) => Source::PortQdisc,
            (_, true) => Source::PortStats,
            (_, false) => Source::NicStats,
        }
    }

    fn label(self) -> &'static str {
        match self {
            Source::NicStats | Source::PortStats => "ethtool -S",
            Source::NicSysfs => "sysfs",
            Source::PortLink => "ip -s -s -j link",
            Source::PortQdisc => "tc -s -d qdisc",
        }
    }

    fn parse(
        self,
        text: &str,
    ) -> Result<Vec<crate::counters::Reading>, crate::counters::ParseError> {
        match self {
            Source::NicStats => host::parse_ethtool_stats(text),
            Source::NicSysfs => host::parse_sysfs_counters(text).map(|(_, r)| r),
            Source::PortStats => switch_linux::parse_ethtool_stats(text),
            Source::PortLink => switch_linux::parse_ip_link_json(text)
                .map(|links| links.into_iter().flat_map(|l| l.readings).collect()),
            Source::PortQdisc => switch_linux::parse_tc_qdisc(text)
                .map(|bands| bands.iter().flat_map(|b| b.readings()).collect()),
        }
    }
}

/// The sampler's step for one round, and what each invocation reads.
pub struct SamplerPlan {
    pub step: StepCommands,
    /// Per invocation: its host, and the source and device of each part.
    reads: Vec<(String, Vec<(Source, String)>)>,
}

/// The sampler step for `round` of `test`, when the test asks for counters.
pub fn plan(inv: &Inventory, test: &Test, round: &[Step]) -> Option<SamplerPlan> {
    let spec = test.counters?;
    let every = spec.every.0.max(Duration::from_micros(1));
    let from = spec.from.map(|s| s.0).unwrap_or_default();
    let samples = spec.samples.unwrap_or_else(|| {
        let est = crate::plan::estimate::round_duration(test, inv, &round.to_vec());
        let n = est.saturating_sub(from).as_secs_f64() / every.as_secs_f64();
        (n.floor() as u32).saturating_add(2)
    });
    let samples = samples.clamp(1, MAX_SAMPLES);
    let mut nics: Vec<NicId> = round.iter().flat_map(|s| s.nics(inv)).collect();
    nics.sort_unstable();
    nics.dedup();
    // (source, host, device, argv)
    let mut targets: Vec<(Source, String, String, Vec<String>)> = Vec::new();
    for &n in &nics {
        let nic = &inv.nics[n];
        let node = &inv.nodes[nic.node].name;
        for argv in host::sample_argv(&nic.netdev, &nic.device) {
            let src = Source::of(&argv, false);
            let dev = match src {
                Source::NicSysfs => nic.device.clone(),
                _ => nic.netdev.clone(),
            };
            targets.push((src, node.clone(), dev, argv));
        }
        if let Some((s, port)) = inv.nic_leaf(n) {
            if inv.switches[s].driver == SwitchDriver::Linux {
                for argv in switch_linux::sample_argv(port) {
                    let src = Source::of(&argv, true);
                    targets.push((src, inv.switches[s].name.clone(), port.to_string(), argv));
                }
            }
        }
    }
    // One command per host and instant: a node's whole snapshot (every NIC,
    // ethtool and sysfs) in one round trip.
    // (host, what each part reads, the parts' command lines)
    type HostReads = (String, Vec<(Source, String)>, Vec<Vec<String>>);
    let mut hosts: Vec<HostReads> = Vec::new();
    for (src, host, device, argv) in targets {
        let i = match hosts.iter().position(|h| h.0 == host) {
            Some(i) => i,
            None => {
                hosts.push((host, Vec::new(), Vec::new()));
                hosts.len() - 1
            }
        };
        hosts[i].1.push((src, device));
        hosts[i].2.push(argv);
    }
    let mut invocations = Vec::new();
    let mut reads = Vec::new();
    for k in 0..samples {
        let at = from + every * k;
        for (host, what, argvs) in &hosts {
            invocations.push(Invocation {
                host: host.clone(),
                argv: compose(argvs),
                env: Vec::new(),
                role: Role::Probe,
                timeout: READ_TIMEOUT,
                at,
            });
            reads.push((host.clone(), what.clone()));
        }
    }
    Some(SamplerPlan {
        step: StepCommands { invocations },
        reads,
    })
}

impl SamplerPlan {
    /// Parses the sampler's outputs into counter records, in time order.
    pub fn read(
        &self,
        test: &str,
        round: usize,
        rep: u32,
        outs: &[InvocationOutput],
    ) -> Vec<CounterRecord> {
        let mut recs = Vec::new();
        for ((host, what), o) in self.reads.iter().zip(outs) {
            let parts = split(&o.stdout, what.len());
            for ((src, device), part) in what.iter().zip(parts) {
                let source = src.label();
                let (readings, error) = match (&o.failure, part.exit) {
                    (Some(f), _) => (
                        Vec::new(),
                        Some(format!("{host}: {source} {device} not read: {f:?}")),
                    ),
                    (None, Some(0)) => match src.parse(&part.text) {
                        Ok(r) => (r, None),
                        Err(e) => (
                            Vec::new(),
                            Some(format!("{host}: cannot read {source} {device}: {e}")),
                        ),
                    },
                    (None, code) => (
                        Vec::new(),
                        Some(format!(
                            "{host}: {source} {device} failed (exit {}): {}",
                            code.map_or("none: cut off".to_string(), |c| c.to_string()),
                            crate::workload::text::excerpt(part.text.trim(), 300)
                        )),
                    ),
                };
                recs.push(CounterRecord {
                    test: test.to_string(),
                    round,
                    rep,
                    error,
                    snapshot: Snapshot {
                        host: host.clone(),
                        device: device.clone(),
                        source: source.to_string(),
                        t_s: o.started_s,
                        readings,
                    },
                });
            }
        }
        recs.sort_by(|a, b| a.snapshot.t_s.total_cmp(&b.snapshot.t_s));
        recs
    }
}
