//! The minimal counters sampler: reads `ethtool -S` and the RDMA sysfs
//! counters of every NIC a round uses (and `ethtool -S` of the leaf port in
//! front of each, on `linux` switches) at a fixed interval inside the round,
//! through the transport like any command, and parses what comes back with
//! the same parsers a real pod's output goes through.

use std::time::Duration;

use crate::config::check_suite::Test;
use crate::config::inventory::SwitchDriver;
use crate::config::model::{Inventory, NicId};
use crate::counters::{host, switch_linux, Snapshot};
use crate::exec::{Invocation, InvocationOutput, Role, StepCommands};
use crate::plan::Step;
use crate::report::events::CounterRecord;

/// Reads per device at most, whatever the interval.
const MAX_SAMPLES: u32 = 1000;
const READ_TIMEOUT: Duration = Duration::from_secs(20);

#[derive(Debug, Clone, Copy)]
enum Source {
    NicStats,
    NicSysfs,
    PortStats,
}

/// The sampler's step for one round, and what each invocation reads.
pub struct SamplerPlan {
    pub step: StepCommands,
    reads: Vec<(Source, String, String)>,
}

pub fn nics_of(step: &Step, inv: &Inventory) -> Vec<NicId> {
    match step {
        Step::Pair { a, b } => vec![*a, *b],
        Step::Incast(i) => std::iter::once(i.receiver)
            .chain(i.senders.iter().copied())
            .collect(),
        Step::Collective(c) => c
            .nodes
            .iter()
            .flat_map(|&n| inv.nodes[n].nics.iter().copied())
            .filter(|&n| c.rails.contains(&inv.nics[n].rail))
            .collect(),
    }
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
    let mut nics: Vec<NicId> = round.iter().flat_map(|s| nics_of(s, inv)).collect();
    nics.sort_unstable();
    nics.dedup();
    let mut targets: Vec<(Source, String, Vec<String>)> = Vec::new();
    for &n in &nics {
        let nic = &inv.nics[n];
        let node = inv.nodes[nic.node].name.clone();
        let dir = format!("/sys/class/infiniband/{}/ports/{}", nic.device, nic.port);
        targets.push((
            Source::NicStats,
            node.clone(),
            vec!["ethtool".into(), "-S".into(), nic.netdev.clone()],
        ));
        targets.push((
            Source::NicSysfs,
            node,
            vec![
                "grep".into(),
                "-r".into(),
                ".".into(),
                format!("{dir}/counters"),
                format!("{dir}/hw_counters"),
            ],
        ));
        if let Some((s, port)) = inv.nic_leaf(n) {
            if inv.switches[s].driver == SwitchDriver::Linux {
                targets.push((
                    Source::PortStats,
                    inv.switches[s].name.clone(),
                    vec!["ethtool".into(), "-S".into(), port.to_string()],
                ));
            }
        }
    }
    let mut invocations = Vec::new();
    let mut reads = Vec::new();
    for k in 0..samples {
        let at = from + every * k;
        for (src, host, argv) in &targets {
            let device = argv.last().cloned().unwrap_or_default();
            let device = match src {
                Source::NicSysfs => device
                    .split('/')
                    .nth(4)
                    .unwrap_or_default()
                    .to_string(),
                _ => device,
            };
            invocations.push(Invocation {
                host: host.clone(),
                argv: argv.clone(),
                env: Vec::new(),
                role: Role::Probe,
                timeout: READ_TIMEOUT,
                at,
            });
            reads.push((*src, host.clone(), device));
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
        let mut recs: Vec<CounterRecord> = self
            .reads
            .iter()
            .zip(outs)
            .map(|((src, host, device), o)| {
                let (source, parsed) = match src {
                    Source::NicStats => ("ethtool -S", host::parse_ethtool_stats(&o.stdout)),
                    Source::NicSysfs => (
                        "sysfs",
                        host::parse_sysfs_counters(&o.stdout).map(|(_, r)| r),
                    ),
                    Source::PortStats => {
                        ("ethtool -S", switch_linux::parse_ethtool_stats(&o.stdout))
                    }
                };
                let failed = o.failure.is_some() || o.exit != Some(0);
                let (readings, error) = match (failed, parsed) {
                    (true, _) => (
                        Vec::new(),
                        Some(format!(
                            "{host}: {source} {device} failed: {}",
                            o.stderr.trim()
                        )),
                    ),
                    (false, Ok(r)) => (r, None),
                    (false, Err(e)) => (
                        Vec::new(),
                        Some(format!("{host}: cannot read {source} {device}: {e}")),
                    ),
                };
                CounterRecord {
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
                }
            })
            .collect();
        recs.sort_by(|a, b| a.snapshot.t_s.total_cmp(&b.snapshot.t_s));
        recs
    }
}
