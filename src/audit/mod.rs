//! Checks before load: the preflight (can every host be reached, are its
//! tools, devices and clock ready) and, beside it, the configuration and
//! cabling audit.
//!
//! The audit asks every node and every switch it covers once, all at once
//! (each host's reads composed into one command: one round trip), and
//! compares what came back with the inventory: per NIC firmware and driver
//! (against the inventory and the majority of the same model), link speed,
//! MTU, PFC, trust and the DSCP map, the RoCE v2 GID, DCQCN and the optics;
//! per switch port PFC, ECN, MTU, link and optics, per switch its NOS and
//! PFC watchdog; every cable by LLDP from both ends. It produces
//! [`Finding`]s only; `score::findings` turns them into verdicts.

pub mod cabling;
pub mod checks;
pub mod host;
pub mod preflight;
pub mod switches;

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use crate::config::model::{End, Inventory, NodeId, SwitchId};
use crate::config::suite::AuditSpec;
use crate::exec::{Cancel, InvocationOutput, StepCommands, Transport};
use crate::report::events::{Finding, Outcome, RawOutput, RawPart};
use crate::switch::{self, Answer, Query};
use cabling::{Heard, Observation};
use checks::Seen;

/// Hosts asked at once: enough to keep the transport busy, few enough that
/// their raw answers stay small next to the rest of a large run.
const CHUNK: usize = 256;

/// How long one host's reads may take, connection included.
const TIMEOUT: Duration = Duration::from_secs(60);

/// The audit's knobs, with their defaults filled in.
#[derive(Debug, Clone)]
pub struct Options {
    /// Check names or dotted prefixes to run; all when empty.
    pub checks: Vec<String>,
    pub ecn_tolerance_pct: f64,
    pub weak_lane_db: f64,
    /// DSCPs the suite's perftest tests send with `--tclass`.
    pub tclass_dscps: Vec<u8>,
}

impl From<&AuditSpec> for Options {
    fn from(a: &AuditSpec) -> Self {
        Options {
            checks: a.checks.clone(),
            ecn_tolerance_pct: a.ecn_tolerance_pct.unwrap_or(10.0),
            weak_lane_db: a.weak_lane_db.unwrap_or(3.0),
            tclass_dscps: Vec::new(),
        }
    }
}

impl Default for Options {
    fn default() -> Self {
        Options::from(&AuditSpec::default())
    }
}

/// Who the audit asks.
#[derive(Debug, Clone)]
enum Target {
    Node(NodeId),
    /// A switch and the inventory ports on it.
    Switch(SwitchId, Vec<String>),
}

/// The nodes given and the switches they reach: their leaves and whatever
/// those leaves are cabled to (the spines).
fn targets(inv: &Inventory, nodes: &[NodeId]) -> Vec<Target> {
    let mut switches: BTreeSet<SwitchId> = BTreeSet::new();
    for &nd in nodes {
        for &n in &inv.nodes[nd].nics {
            if let Some((s, _)) = inv.nic_leaf(n) {
                switches.insert(s);
            }
        }
    }
    let leaves: Vec<SwitchId> = switches.iter().copied().collect();
    for s in leaves {
        for &l in &inv.switches[s].links {
            for end in [&inv.links[l].a, &inv.links[l].b] {
                if let End::Port { switch, .. } = end {
                    switches.insert(*switch);
                }
            }
        }
    }
    let mut out: Vec<Target> = nodes.iter().map(|&n| Target::Node(n)).collect();
    for s in switches {
        out.push(Target::Switch(s, inv.switch_ports(s)));
    }
    out
}

fn host_of(inv: &Inventory, t: &Target) -> String {
    match t {
        Target::Node(n) => inv.nodes[*n].name.clone(),
        Target::Switch(s, _) => inv.switches[*s].name.clone(),
    }
}

fn queries_of(inv: &Inventory, t: &Target) -> Vec<Query> {
    match t {
        Target::Node(n) => host::queries(inv, *n),
        Target::Switch(s, ports) => switches::queries(inv, *s, ports),
    }
}

/// One target's answers, the path of its raw output, and why it could not
/// be asked when it could not.
type Answered = (Vec<Answer>, Option<String>, Option<String>);

/// Runs the audit of `nodes` (and the switches they reach) through
/// `transport` and returns its findings. `keep_raw` keeps a host's raw
/// answers and returns where, for evidence.
pub async fn run(
    transport: &dyn Transport,
    inv: &Inventory,
    nodes: &[NodeId],
    test: &str,
    opts: &Options,
    cancel: Cancel,
    keep_raw: &mut dyn FnMut(&RawOutput) -> Option<String>,
) -> Vec<Finding> {
    let targets = targets(inv, nodes);
    let mut acc = Acc::default();
    // Hosts are asked a chunk at a time, so that the raw answers of a whole
    // pod are never held at once; homogeneity and cabling need only what
    // the accumulator keeps of each.
    let mut k = 0;
    for chunk in targets.chunks(CHUNK) {
        let mut sent: Vec<(&Target, Vec<Query>)> = Vec::new();
        let mut batch: Vec<StepCommands> = Vec::new();
        for t in chunk {
            let qs = queries_of(inv, t);
            if qs.is_empty() {
                acc.add(inv, t, &(Vec::new(), None, None), test, opts);
                continue;
            }
            let inv_ = switch::invocation(&host_of(inv, t), &qs, TIMEOUT, Duration::ZERO);
            batch.push(StepCommands {
                invocations: vec![inv_],
            });
            sent.push((t, qs));
        }
        let outs = transport.run_batch(&batch, cancel.clone()).await;
        for (b, ((t, qs), out)) in sent.iter().zip(outs).enumerate() {
            let o: InvocationOutput = out.first().cloned().unwrap_or_default();
            let evidence = keep_raw(&RawOutput {
                test,
                round: 0,
                rep: 0,
                part: RawPart::Step(k),
                commands: &batch[b],
                outputs: &out,
            });
            k += 1;
            let failure = o.failure.as_ref().map(|f| {
                format!(
                    "{}: the audit's reads got no answer: {}",
                    host_of(inv, t),
                    preflight::failure_text(f)
                )
            });
            acc.add(
                inv,
                t,
                &(switch::answers(qs, &o), evidence, failure),
                test,
                opts,
            );
        }
        if *cancel.borrow() {
            break;
        }
    }
    acc.finish(inv, test, opts)
}

/// What the audit has found so far, and what it keeps of each target for
/// the judgements that need every target (homogeneity, cabling).
#[derive(Default)]
struct Acc {
    out: Vec<Finding>,
    lldp: Vec<Observation>,
    firmware: Vec<(String, String, String)>,
    drivers: Vec<(String, String, String)>,
    nos: Vec<(String, String, String)>,
    /// Component → (host, evidence), for the homogeneity findings.
    by_component: BTreeMap<String, (String, Vec<String>)>,
}

impl Acc {
    /// One target's answers.
    fn add(
        &mut self,
        inv: &Inventory,
        t: &Target,
        answered: &Answered,
        test: &str,
        opts: &Options,
    ) {
        let Acc {
            out,
            lldp,
            firmware,
            drivers,
            nos,
            by_component,
        } = self;
        let (ans, evidence, failure) = answered;
        let evidence: Vec<String> = evidence.iter().cloned().collect();
        let host = host_of(inv, t);
        if let Some(why) = failure {
            out.push(Finding {
                test: test.into(),
                check: "audit.reach".into(),
                component: host.clone(),
                host: host.clone(),
                outcome: Outcome::Error,
                observed: None,
                expected: None,
                message: why.clone(),
                sources: Vec::new(),
                needs_root: false,
                round: None,
                evidence: evidence.clone(),
            });
            return;
        }
        match t {
            Target::Node(n) => {
                let facts = host::parse(inv, *n, ans);
                for nf in &facts.nics {
                    let c = inv.nic_name(nf.nic);
                    by_component.insert(c.clone(), (host.clone(), evidence.clone()));
                    if let Some(info) = nf.info.known() {
                        let group = match nf.model.known() {
                            Some(m) => format!("{} {}", m.hca_type, m.board_id),
                            None => info.driver.clone(),
                        };
                        if let Some(fw) = info.firmware_version() {
                            firmware.push((c.clone(), group.clone(), fw.to_string()));
                        }
                        if let Some(v) = &info.version {
                            drivers.push((
                                c.clone(),
                                info.driver.clone(),
                                format!("{} {v}", info.driver),
                            ));
                        }
                    }
                    let seen = Seen {
                        test,
                        component: c.clone(),
                        host: host.clone(),
                        evidence: evidence.clone(),
                    };
                    out.extend(checks::nic_findings(inv, nf, &seen, opts));
                    lldp.push(host_observation(inv, nf, &facts.lldp, &host, &evidence));
                }
                // Reads that went wrong for the whole NIC (firmware) are
                // reported here; homogeneity needs every NIC first.
                for nf in &facts.nics {
                    if nf.info.known().is_none() {
                        let seen = Seen {
                            test,
                            component: inv.nic_name(nf.nic),
                            host: host.clone(),
                            evidence: evidence.clone(),
                        };
                        let src = nf.sources.get("firmware").cloned().unwrap_or_default();
                        out.extend(seen.unread("nic.firmware", &nf.info, &src));
                    }
                }
            }
            Target::Switch(s, ports) => {
                let (fs, obs, version) =
                    switches::switch_findings(inv, *s, ports, ans, test, &evidence, opts);
                out.extend(fs);
                lldp.extend(obs);
                if let Some(v) = version {
                    let p = inv.switches[*s].driver.name().to_string();
                    nos.push((host.clone(), p, v));
                }
                by_component.insert(host.clone(), (host.clone(), evidence.clone()));
            }
        }
    }

    /// The judgements that need every target, then every finding, narrowed
    /// to the checks asked for.
    fn finish(self, inv: &Inventory, test: &str, opts: &Options) -> Vec<Finding> {
        let Acc {
            mut out,
            lldp,
            firmware,
            drivers,
            nos,
            by_component,
        } = self;
        let versions = &inv.fabric.versions;
        for (check, what, members, want) in [
            (
                "nic.firmware",
                "firmware",
                &firmware,
                versions.nic_firmware.as_deref(),
            ),
            ("nic.driver", "driver", &drivers, versions.driver.as_deref()),
            ("switch.nos", "NOS", &nos, versions.nos.as_deref()),
        ] {
            for (c, (outcome, observed, expected, message)) in
                checks::homogeneity(what, members, want)
            {
                let (host, evidence) = by_component.get(&c).cloned().unwrap_or_default();
                let seen = Seen {
                    test,
                    component: c.clone(),
                    host,
                    evidence,
                };
                let mut f = seen.finding(check, outcome, message);
                f.observed = Some(observed);
                f.expected = Some(expected);
                f.sources = vec![match check {
                    "switch.nos" => "the platform's version read".to_string(),
                    _ => "ethtool -i".to_string(),
                }];
                out.push(f);
            }
        }
        out.extend(cabling::findings(test, &lldp));
        out.retain(|f| {
            opts.checks.is_empty()
                || crate::score::findings::listed(&opts.checks, &f.check)
                || f.check == "audit.reach"
        });
        out
    }
}

/// What a NIC's host heard on it by LLDP.
fn host_observation(
    inv: &Inventory,
    nf: &host::NicFacts,
    lldp: &switch::Fact<Vec<crate::counters::host::LldpNeighbor>>,
    host: &str,
    evidence: &[String],
) -> Observation {
    let nic = &inv.nics[nf.nic];
    let expected = nic
        .uplink
        .map(|l| {
            let link = &inv.links[l];
            let peer = if link.a == End::Nic(nf.nic) {
                &link.b
            } else {
                &link.a
            };
            inv.end_name(peer)
        })
        .unwrap_or_else(|| "no cable in the inventory".into());
    let link_down = nf.link.known().and_then(|l| l.link_detected) == Some(false);
    let heard = match lldp {
        switch::Fact::Known(ns) => match ns.iter().find(|n| n.interface == nic.netdev) {
            Some(n) => switches::resolve_neighbor(inv, n),
            None if link_down => Heard::Unread {
                outcome: Outcome::NotAvailable,
                why: format!(
                    "{}: no LLDP neighbour: the link is down",
                    inv.nic_name(nf.nic)
                ),
                tried: vec!["lldpctl -f json0".into()],
            },
            None => Heard::Nothing,
        },
        switch::Fact::NotAvailable { tried, why } => Heard::Unread {
            outcome: Outcome::NotAvailable,
            why: why.clone(),
            tried: tried.clone(),
        },
        switch::Fact::Failed(e) => Heard::Unread {
            outcome: Outcome::Error,
            why: e.clone(),
            tried: vec!["lldpctl -f json0".into()],
        },
    };
    Observation {
        local: inv.nic_name(nf.nic),
        host: host.to_string(),
        expected,
        rail: Some(nic.rail),
        heard,
        sources: vec!["lldpctl -f json0".into()],
        evidence: evidence.to_vec(),
    }
}
