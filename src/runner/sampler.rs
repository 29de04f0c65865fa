//! The minimal counters sampler: reads `ethtool -S` and the RDMA sysfs
//! counters of every NIC a round uses (and the counters of the leaf port in
//! front of each, as its switch platform reads them: [`crate::switch`]) at a
//! fixed interval inside the round, through the transport like any command,
//! and parses what comes back with the same parsers a real pod's output goes
//! through.

use std::time::Duration;

use crate::config::check_suite::Test;
use crate::config::model::{End, Inventory, NicId, SwitchId};
use crate::counters::{host, Snapshot};
use crate::exec::compose::{compose, split};
use crate::exec::{Invocation, InvocationOutput, Role, StepCommands};
use crate::plan::Step;
use crate::report::events::CounterRecord;
use crate::switch::{self, Answer, Platform, Query};

/// Reads per device at most, whatever the interval.
const MAX_SAMPLES: u32 = 1000;
const READ_TIMEOUT: Duration = Duration::from_secs(20);

/// Which parser reads an output.
#[derive(Clone)]
enum Source {
    NicStats,
    NicSysfs,
    /// A switch port's counter read, built and parsed by its platform.
    Port(&'static dyn Platform, Query),
}

impl Source {
    /// The source for a node's sampler command line, by its tool.
    fn of(argv: &[String]) -> Source {
        match argv.first().map(String::as_str) {
            Some("grep") => Source::NicSysfs,
            _ => Source::NicStats,
        }
    }

    fn label(&self) -> &'static str {
        match self {
            Source::NicStats => "ethtool -S",
            Source::NicSysfs => "sysfs",
            Source::Port(p, q) => p.counter_source(q),
        }
    }

    /// Reads `text`, the output read for `device`.
    fn parse(
        &self,
        device: &str,
        text: &str,
    ) -> Result<Vec<crate::counters::Reading>, crate::counters::ParseError> {
        match self {
            Source::NicStats => host::parse_ethtool_stats(text),
            Source::NicSysfs => host::parse_sysfs_counters(text).map(|(_, r)| r),
            Source::Port(p, q) => p.parse_counters(
                device,
                q,
                &Answer {
                    exit: Some(0),
                    text: text.to_string(),
                },
            ),
        }
    }
}

/// A switch's queries, when every part of a host's read is one (the host
/// is a switch): each different query once, and for each part the index
/// of its query. A read that prints every port (SONiC's `pfcstat -s all`)
/// is asked once per switch however many of its ports a snapshot reads.
fn switch_queries(what: &[(Source, String)]) -> Option<(Vec<Query>, Vec<usize>)> {
    let mut unique: Vec<Query> = Vec::new();
    let mut at = Vec::with_capacity(what.len());
    for (s, _) in what {
        let Source::Port(_, q) = s else { return None };
        let k = match unique.iter().position(|u| u == q) {
            Some(k) => k,
            None => {
                unique.push(q.clone());
                unique.len() - 1
            }
        };
        at.push(k);
    }
    Some((unique, at))
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
    let hosts = host_reads(inv, &nics, false);
    Some(build(hosts, (0..samples).map(|k| from + every * k)))
}

/// The ledger's snapshot for `round`, taken `at` into its batch: every NIC
/// the round uses, the leaf port in front of each, and with `uplinks` every
/// leaf–spine port of those leaves at both ends (the round's flows may
/// cross any of them).
pub fn snapshot(inv: &Inventory, round: &[Step], at: Duration) -> SamplerPlan {
    let mut nics: Vec<NicId> = round.iter().flat_map(|s| s.nics(inv)).collect();
    nics.sort_unstable();
    nics.dedup();
    build(host_reads(inv, &nics, true), std::iter::once(at))
}

/// The longest counter update interval among the platforms of the switches
/// a snapshot of `round` reads: a closing snapshot waits this long after
/// the traffic so that polled counters (SONiC: ports 1 s, queues 10 s) show it.
pub fn settle(inv: &Inventory, round: &[Step]) -> Duration {
    let mut d = Duration::ZERO;
    for n in round.iter().flat_map(|s| s.nics(inv)) {
        if let Some((s, _)) = inv.nic_leaf(n) {
            {
                let p = switch::platform(inv.switches[s].driver);
                d = d.max(p.needs().counter_interval);
            }
        }
    }
    d
}

/// (host, what each part reads, the parts' command lines)
type HostReads = (String, Vec<(Source, String)>, Vec<Vec<String>>);

fn host_reads(inv: &Inventory, nics: &[NicId], uplinks: bool) -> Vec<HostReads> {
    // (source, host, device, argv): a switch's argv stays inside its Source.
    let mut targets: Vec<(Source, String, String, Vec<String>)> = Vec::new();
    for &n in nics {
        let nic = &inv.nics[n];
        let node = &inv.nodes[nic.node].name;
        for argv in host::sample_argv(&nic.netdev, &nic.device) {
            let src = Source::of(&argv);
            let dev = match src {
                Source::NicSysfs => nic.device.clone(),
                _ => nic.netdev.clone(),
            };
            targets.push((src, node.clone(), dev, argv));
        }
        if let Some((s, port)) = inv.nic_leaf(n) {
            // A platform not built yet is not sampled (faults on it are
            // refused at plan time; counters are simply not read).
            {
                let p = switch::platform(inv.switches[s].driver);
                for q in p.counter_queries(port) {
                    let src = Source::Port(p, q);
                    targets.push((
                        src,
                        inv.switches[s].name.clone(),
                        port.to_string(),
                        Vec::new(),
                    ));
                }
            }
        }
    }
    if uplinks {
        let mut leaves: Vec<SwitchId> = nics
            .iter()
            .filter_map(|&n| inv.nic_leaf(n))
            .map(|(s, _)| s)
            .collect();
        leaves.sort_unstable();
        leaves.dedup();
        for leaf in leaves {
            for (l, _) in inv.uplinks(leaf) {
                for end in [&inv.links[l].a, &inv.links[l].b] {
                    let End::Port { switch: s, port } = end else {
                        continue;
                    };
                    {
                        let p = switch::platform(inv.switches[*s].driver);
                        for q in p.counter_queries(port) {
                            targets.push((
                                Source::Port(p, q),
                                inv.switches[*s].name.clone(),
                                port.to_string(),
                                Vec::new(),
                            ));
                        }
                    }
                }
            }
        }
    }
    // One command per host and instant: a node's whole snapshot (every NIC,
    // ethtool and sysfs) in one round trip.
    let mut hosts: Vec<HostReads> = Vec::new();
    let mut index: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for (src, host, device, argv) in targets {
        let i = *index.entry(host.clone()).or_insert_with(|| {
            hosts.push((host, Vec::new(), Vec::new()));
            hosts.len() - 1
        });
        hosts[i].1.push((src, device));
        hosts[i].2.push(argv);
    }
    hosts
}

fn build(hosts: Vec<HostReads>, ats: impl Iterator<Item = Duration>) -> SamplerPlan {
    let mut invocations = Vec::new();
    let mut reads = Vec::new();
    for at in ats {
        for (host, what, argvs) in &hosts {
            // A switch's reads go as its platform asks them, in one round trip.
            invocations.push(if let Some((queries, _)) = switch_queries(what) {
                switch::invocation(host, &queries, READ_TIMEOUT, at)
            } else {
                Invocation {
                    host: host.clone(),
                    argv: compose(argvs),
                    env: Vec::new(),
                    role: Role::Probe,
                    timeout: READ_TIMEOUT,
                    at,
                }
            });
            reads.push((host.clone(), what.clone()));
        }
    }
    SamplerPlan {
        step: StepCommands { invocations },
        reads,
    }
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
            let parts: Vec<Answer> = if let Some((queries, at)) = switch_queries(what) {
                let answers = switch::answers(&queries, o);
                at.iter()
                    .map(|&k| answers.get(k).cloned().unwrap_or_default())
                    .collect()
            } else {
                split(&o.stdout, what.len())
                    .into_iter()
                    .map(|p| Answer {
                        exit: p.exit,
                        text: p.text,
                    })
                    .collect()
            };
            for ((src, device), part) in what.iter().zip(parts) {
                let source = src.label();
                let (readings, error) = match (&o.failure, part.exit) {
                    (Some(f), _) => (
                        Vec::new(),
                        Some(format!("{host}: {source} {device} not read: {f}")),
                    ),
                    (None, Some(0)) => match src.parse(device, &part.text) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::inventory::SwitchDriver;

    fn parts(driver: SwitchDriver, ports: &[&str]) -> Vec<(Source, String)> {
        let p = switch::platform(driver);
        ports
            .iter()
            .flat_map(|port| {
                p.counter_queries(port)
                    .into_iter()
                    .map(move |q| (Source::Port(p, q), port.to_string()))
            })
            .collect()
    }

    /// SONiC's reads print every port: two ports share each, so the switch
    /// is asked each once and both ports read the one answer. Per-port
    /// reads (linux) stay one per port.
    #[test]
    fn a_read_that_prints_every_port_is_asked_once_per_switch() {
        let what = parts(SwitchDriver::Sonic, &["Ethernet0", "Ethernet8"]);
        let (unique, at) = switch_queries(&what).unwrap();
        let n = unique.len();
        assert_eq!(at.len(), 2 * n);
        assert_eq!(at[..n], at[n..]);
        let what = parts(SwitchDriver::Linux, &["swp1", "swp2"]);
        let (unique, at) = switch_queries(&what).unwrap();
        assert_eq!(unique.len(), at.len());
        // A node's reads are no switch's.
        assert!(switch_queries(&[(Source::NicStats, "rdma0".into())]).is_none());
    }
}
