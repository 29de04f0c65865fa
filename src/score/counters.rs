//! Counter rules over the ledger: what a round's counter changes say about
//! each NIC, port and cable, as findings (violations only; the verdicts are
//! `score::findings`'). Every profile: no drop or discard on the lossless
//! priority, no PFC pause on a lossy one, no link-down outside a fault's
//! blast radius and 1 to `max_events_per_fault` on the flapped port and its
//! peer; a PFC storm the switch's watchdog detected during a window
//! deviates, naming the port and queue. Physical errors are judged per
//! cable: any uncorrectable FEC codeword fails it, FCS errors per frame
//! received above a ratio fail it (below, any warns), and a pre-FEC bit
//! error rate (corrected bits over line rate × seconds) above the limit
//! fails it. Per leaf, the bytes its uplinks carried in a window are
//! compared, and a hot uplink is named.

use std::collections::{BTreeMap, HashMap, HashSet};

use crate::config::model::{End, Inventory, LinkId};
use crate::config::suite::LedgerSpec;
use crate::counters::delta::DeltaStatus;
use crate::counters::ledger::sum;
use crate::counters::Canonical;
use crate::report::events::{Finding, LedgerRecord, Outcome};

/// What a (host, device) of the ledger is in the inventory.
#[derive(Debug, Clone)]
struct Place {
    /// `gpu001:mlx5_0` or `r0-leaf1:swp3`.
    name: String,
    link: Option<LinkId>,
    line_gbps: f64,
    /// A leaf's uplink port: (leaf name).
    uplink_of: Option<String>,
}

/// Where every device a ledger can name sits.
pub struct Places(HashMap<(String, String), Place>);

impl Places {
    pub fn new(inv: &Inventory) -> Places {
        let mut m = HashMap::new();
        for (n, nic) in inv.nics.iter().enumerate() {
            let node = &inv.nodes[nic.node].name;
            let p = Place {
                name: inv.nic_name(n),
                link: nic.uplink,
                line_gbps: nic.uplink.map_or(f64::from(nic.speed_gbps), |l| {
                    f64::from(inv.links[l].speed_gbps)
                }),
                uplink_of: None,
            };
            m.insert((node.clone(), nic.netdev.clone()), p.clone());
            m.insert((node.clone(), nic.device.clone()), p);
        }
        for (l, link) in inv.links.iter().enumerate() {
            for end in [&link.a, &link.b] {
                if let End::Port { switch, port } = end {
                    let sw = &inv.switches[*switch];
                    let is_uplink = link.kind == crate::config::model::LinkKind::Fabric
                        && sw.role == crate::config::inventory::SwitchRole::Leaf;
                    m.insert(
                        (sw.name.clone(), port.clone()),
                        Place {
                            name: format!("{}:{port}", sw.name),
                            link: Some(l),
                            line_gbps: f64::from(link.speed_gbps),
                            uplink_of: is_uplink.then(|| sw.name.clone()),
                        },
                    );
                }
            }
        }
        Places(m)
    }

    /// The inventory names of the ends a fault may take down, for
    /// [`findings`]'s `flapped`: both ends of each link.
    pub fn ends_of(&self, inv: &Inventory, links: &[LinkId]) -> HashSet<String> {
        links
            .iter()
            .flat_map(|&l| [inv.end_name(&inv.links[l].a), inv.end_name(&inv.links[l].b)])
            .collect()
    }
}

/// The rules over one window's records. `flapped`: the ends (inventory
/// names) a fault in this window took down, whose link-downs must be
/// between 1 and the limit; every other device must show none.
pub fn findings(
    inv: &Inventory,
    places: &Places,
    spec: &LedgerSpec,
    records: &[LedgerRecord],
    flapped: &HashSet<String>,
) -> Vec<Finding> {
    let prio = inv.fabric.roce.pfc_priority;
    let mut out = Vec::new();
    // Per device: link-downs counted, whether any source counts them.
    let mut downs: BTreeMap<String, (u64, bool, &LedgerRecord)> = BTreeMap::new();
    let mut uplink_bytes: BTreeMap<String, Vec<(String, u64, &LedgerRecord)>> = BTreeMap::new();
    // Frames each device received in the window, from whichever of its
    // sources counted them (the ledger keeps traffic from one source).
    let mut frames_of: HashMap<(&str, &str), u64> = HashMap::new();
    for r in records {
        let n = sum(r, Canonical::RxPackets, Some(None));
        let e = frames_of
            .entry((r.host.as_str(), r.device.as_str()))
            .or_default();
        *e = (*e).max(n);
    }
    for r in records {
        let Some(place) = places.0.get(&(r.host.clone(), r.device.clone())) else {
            continue;
        };
        let f = |check: &str, component: &str, outcome: Outcome, message: String| Finding {
            test: r.test.clone(),
            check: check.to_string(),
            component: component.to_string(),
            host: r.host.clone(),
            outcome,
            observed: None,
            expected: None,
            message: format!(
                "{message} (round {}, {} {} on {}, {:.1} s window)",
                r.round + 1,
                r.source,
                r.device,
                r.host,
                r.t1_s - r.t0_s
            ),
            sources: vec![r.source.clone()],
            needs_root: false,
            round: Some(r.round),
            evidence: r.raw.clone(),
        };
        let cable = place
            .link
            .map(|l| inv.link_name(l))
            .unwrap_or_else(|| place.name.clone());
        // Lossless drops and discards: per priority or queue of the RoCE
        // class (the traffic class is taken to be the priority).
        let lossless: u64 = r
            .changes
            .iter()
            .filter(|d| matches!(d.canonical, Canonical::Drops | Canonical::Discards))
            .filter(|d| d.priority == Some(prio) || d.queue == Some(prio))
            .map(|d| match d.status {
                DeltaStatus::Value(v) => v,
                _ => 0,
            })
            .sum();
        if lossless > 0 {
            out.push(f(
                "counters.lossless_drops",
                &place.name,
                Outcome::Deviation,
                format!("{lossless} packet(s) dropped on the lossless priority {prio}: PFC did not hold"),
            ));
        }
        let lossy_pause: Vec<String> = r
            .changes
            .iter()
            .filter(|d| matches!(d.canonical, Canonical::PfcPauseRx | Canonical::PfcPauseTx))
            .filter(|d| d.priority.is_some_and(|p| p != prio))
            .filter_map(|d| match d.status {
                DeltaStatus::Value(v) => Some(format!("{} {v}", d.vendor)),
                _ => None,
            })
            .collect();
        if !lossy_pause.is_empty() {
            out.push(f(
                "counters.lossy_pause",
                &place.name,
                Outcome::Deviation,
                format!(
                    "PFC pauses on a lossy priority ({}): only priority {prio} should pause",
                    lossy_pause.join(", ")
                ),
            ));
        }
        // A PFC watchdog storm: a lossless queue held paused past the
        // watchdog's detection time (a peer or a NIC that never stops
        // pausing, or a deadlock). Any storm in a window deviates, whatever
        // the watchdog then did to the queue.
        let storms: Vec<(Option<u8>, u64, &str)> = r
            .changes
            .iter()
            .filter(|d| d.canonical == Canonical::PfcStormDetected)
            .filter_map(|d| match d.status {
                DeltaStatus::Value(v) if v > 0 => Some((d.queue, v, d.vendor.as_str())),
                _ => None,
            })
            .collect();
        if !storms.is_empty() {
            let each: Vec<String> = storms
                .iter()
                .map(|(q, v, vendor)| {
                    let q = q.map_or_else(|| "?".to_string(), |q| q.to_string());
                    format!("queue {q}: {v} storm(s) detected ({vendor})")
                })
                .collect();
            out.push(f(
                "counters.pfc_storm",
                &place.name,
                Outcome::Deviation,
                format!(
                    "PFC watchdog detected a storm on {} {}: the queue stayed paused past the watchdog's detection time (a device that keeps pausing, or a PFC deadlock)",
                    r.device,
                    each.join("; ")
                ),
            ));
        }
        // Link-downs from the Ethernet counters, never IB `link_downed`
        // (an 8-bit PMA counter that also counts the IB port's own retrains).
        let down: u64 = r
            .changes
            .iter()
            .filter(|d| d.canonical == Canonical::LinkDown && d.vendor != "link_downed")
            .map(|d| match d.status {
                DeltaStatus::Value(v) => v,
                _ => 0,
            })
            .sum();
        if r.changes
            .iter()
            .any(|d| d.canonical == Canonical::LinkDown && d.vendor != "link_downed")
            || flapped.contains(&place.name)
        {
            let e = downs.entry(place.name.clone()).or_insert((0, false, r));
            e.0 += down;
            e.1 |= r.counts_link_down;
        }
        // Physical layer, per cable.
        let uncorrectable = sum(r, Canonical::FecUncorrected, None);
        if uncorrectable > 0 {
            out.push(f(
                "counters.fec_uncorrectable",
                &cable,
                Outcome::Deviation,
                format!("{uncorrectable} uncorrectable FEC codeword(s) received at {}: replace or clean this cable", place.name),
            ));
        }
        let crc = sum(r, Canonical::CrcErrors, None);
        if crc > 0 {
            let frames = frames_of
                .get(&(r.host.as_str(), r.device.as_str()))
                .copied()
                .unwrap_or(0)
                .max(1);
            let ratio = crc as f64 / frames as f64;
            let outcome = if ratio > spec.max_fcs_per_frame {
                Outcome::Deviation
            } else {
                Outcome::Warning
            };
            out.push(f(
                "counters.fcs",
                &cable,
                outcome,
                format!(
                    "{crc} FCS error(s) in {frames} frame(s) received at {} ({ratio:.2e} per frame; limit {:.0e})",
                    place.name, spec.max_fcs_per_frame
                ),
            ));
        }
        let secs = r.t1_s - r.t0_s;
        let corrected_bits: u64 = r
            .changes
            .iter()
            .filter(|d| d.canonical == Canonical::FecCorrected && d.vendor.contains("bits"))
            .map(|d| match d.status {
                DeltaStatus::Value(v) => v,
                _ => 0,
            })
            .sum();
        if corrected_bits > 0 && secs > 0.0 && place.line_gbps > 0.0 {
            let ber = corrected_bits as f64 / (place.line_gbps * 1e9 * secs);
            if ber > spec.max_pre_fec_ber {
                out.push(f(
                    "counters.pre_fec_ber",
                    &cable,
                    Outcome::Deviation,
                    format!(
                        "pre-FEC bit error rate {ber:.2e} at {} (limit {:.0e}): the cable is close to losing frames",
                        place.name, spec.max_pre_fec_ber
                    ),
                ));
            }
        }
        for d in &r.changes {
            if let DeltaStatus::Reset { before, after } = d.status {
                out.push(f(
                    "counters.reset",
                    &place.name,
                    Outcome::Warning,
                    format!("{} went from {before} to {after}: the counters were cleared or the device restarted during the window", d.vendor),
                ));
            }
        }
        if let Some(leaf) = &place.uplink_of {
            // Port-wide bytes only (per-priority readings repeat them), the
            // largest any source of the port printed.
            let bytes =
                sum(r, Canonical::TxBytes, Some(None)) + sum(r, Canonical::RxBytes, Some(None));
            let ups = uplink_bytes.entry(leaf.clone()).or_default();
            match ups.iter_mut().find(|u| u.0 == place.name) {
                Some(u) if bytes > u.1 => u.1 = bytes,
                Some(_) => {}
                None => ups.push((place.name.clone(), bytes, r)),
            }
        }
    }
    for (name, (n, counted, r)) in downs {
        let max = u64::from(spec.max_events_per_fault);
        let (outcome, msg) = if flapped.contains(&name) {
            if (1..=max).contains(&n) {
                continue;
            }
            if n == 0 && !counted {
                (
                    Outcome::NotAvailable,
                    format!("the fault took this link down, but {} has no link-down counter (a veth, or a driver without one): the flap is judged by the fault test alone", r.source),
                )
            } else if n == 0 {
                (
                    Outcome::Deviation,
                    "the fault took this link down, but its counters saw no link-down event"
                        .to_string(),
                )
            } else {
                (
                    Outcome::Deviation,
                    format!("{n} link-down events for one fault (at most {max}): the link flapped more than the fault did"),
                )
            }
        } else if n > 0 {
            (
                Outcome::Deviation,
                format!(
                    "{n} link-down event(s) outside any fault's blast radius: the link is unstable"
                ),
            )
        } else {
            continue;
        };
        out.push(Finding {
            test: r.test.clone(),
            check: "counters.link_down".into(),
            component: name.clone(),
            host: r.host.clone(),
            outcome,
            observed: Some(n.to_string()),
            expected: Some(if flapped.contains(&name) {
                format!("1-{max}")
            } else {
                "0".into()
            }),
            message: format!("{msg} (round {}, {} on {})", r.round + 1, r.device, r.host),
            sources: vec![r.source.clone()],
            needs_root: false,
            round: Some(r.round),
            evidence: r.raw.clone(),
        });
    }
    for (leaf, ups) in uplink_bytes {
        if ups.len() < 2 {
            continue;
        }
        let total: u64 = ups.iter().map(|u| u.1).sum();
        let mean = total as f64 / ups.len() as f64;
        let Some((port, hot, r)) = ups.iter().max_by_key(|u| u.1) else {
            continue;
        };
        if mean <= 0.0 {
            continue;
        }
        let over = 100.0 * (*hot as f64 - mean) / mean;
        if over > spec.ecmp_imbalance_pct {
            out.push(Finding {
                test: r.test.clone(),
                check: "counters.ecmp_balance".into(),
                component: port.clone(),
                host: r.host.clone(),
                outcome: Outcome::Warning,
                observed: Some(format!("{over:.0}% over the mean")),
                expected: Some(format!("at most {:.0}%", spec.ecmp_imbalance_pct)),
                message: format!(
                    "hot uplink of {leaf}: {port} carried {:.1} GB, {over:.0}% above the mean {:.1} GB of its {} uplinks (ECMP placed more flows on it; cross-spine pairs through it are slower)",
                    *hot as f64 / 1e9,
                    mean / 1e9,
                    ups.len()
                ),
                sources: vec![r.source.clone()],
                needs_root: false,
                round: Some(r.round),
                evidence: r.raw.clone(),
            });
        }
    }
    // A NIC or port read by several tools (ethtool -S and ip -s -s link)
    // says the same thing twice: one finding per check and component.
    let mut seen = HashSet::new();
    out.retain(|f| seen.insert((f.check.clone(), f.component.clone())));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::counters::delta::Delta;

    const INV: &str = "\
fabric: {name: t, environment: lab, rails: 1, roce: {pfc_priority: 3, cnp_priority: 6, dscp_roce: 26, dscp_cnp: 48, dcqcn: true, ecn: {min_kb: 150, max_kb: 1500}, mtu: 4096}}
transport: emulated
nodes:
  - hosts: gpu[1-2]
    address: '{host}.mgmt'
    nics: [{device: mlx5_0, netdev: rdma0, gid_index: 3, rail: 0, speed_gbps: 400}]
switches:
  - {name: leaf1, role: leaf, driver: linux, address: leaf1.mgmt, rail: 0}
  - {name: 'spine[1-2]', role: spine, driver: linux, address: '{name}.mgmt'}
links:
  - {a: 'gpu[1-2]:mlx5_0', b: 'leaf1:swp[1-2]'}
  - {a: 'leaf1:swp[9-10]', b: 'spine[1-2]:swp1', speed_gbps: 400}
";

    fn inv() -> Inventory {
        crate::config::check::parse_inventory("t.yaml", INV).unwrap_or_else(|e| panic!("{e}"))
    }

    fn d(c: Canonical, vendor: &str, prio: Option<u8>, v: u64) -> Delta {
        Delta {
            canonical: c,
            vendor: vendor.into(),
            priority: prio,
            queue: None,
            status: DeltaStatus::Value(v),
        }
    }

    fn rec(host: &str, device: &str, changes: Vec<Delta>) -> LedgerRecord {
        LedgerRecord {
            test: "t".into(),
            round: 0,
            rep: 0,
            host: host.into(),
            device: device.into(),
            source: "ethtool -S".into(),
            t0_s: 0.0,
            t1_s: 10.0,
            counts_link_down: true,
            changes,
            error: None,
            raw: Vec::new(),
        }
    }

    fn judge(recs: &[LedgerRecord], flapped: &[&str]) -> Vec<Finding> {
        judge_with(&LedgerSpec::default(), recs, flapped)
    }

    fn judge_with(spec: &LedgerSpec, recs: &[LedgerRecord], flapped: &[&str]) -> Vec<Finding> {
        let inv = inv();
        let places = Places::new(&inv);
        let flapped: HashSet<String> = flapped.iter().map(|s| s.to_string()).collect();
        findings(&inv, &places, spec, recs, &flapped)
    }

    #[test]
    fn drops_on_the_lossless_priority_and_pauses_on_lossy_ones() {
        let f = judge(
            &[
                rec(
                    "leaf1",
                    "swp1",
                    vec![d(
                        Canonical::Drops,
                        "tc_no_buffer_discard_uc_tc_3",
                        Some(3),
                        12,
                    )],
                ),
                rec(
                    "leaf1",
                    "swp2",
                    vec![d(
                        Canonical::Drops,
                        "tc_no_buffer_discard_uc_tc_0",
                        Some(0),
                        12,
                    )],
                ),
                rec(
                    "gpu1",
                    "rdma0",
                    vec![d(Canonical::PfcPauseRx, "rx_prio0_pause", Some(0), 5)],
                ),
            ],
            &[],
        );
        assert_eq!(f.len(), 2, "{f:#?}");
        assert_eq!(
            (f[0].check.as_str(), f[0].component.as_str()),
            ("counters.lossless_drops", "leaf1:swp1")
        );
        assert!(f[0]
            .message
            .starts_with("12 packet(s) dropped on the lossless priority 3"));
        assert_eq!(
            (f[1].check.as_str(), f[1].component.as_str()),
            ("counters.lossy_pause", "gpu1:mlx5_0")
        );
    }

    #[test]
    fn link_downs_belong_to_the_fault_and_nowhere_else() {
        let down = |n| vec![d(Canonical::LinkDown, "link_down_events_phy", None, n)];
        // The flapped link's ends: 1 or 2 each is right; 3 is too many.
        let f = judge(
            &[rec("gpu1", "rdma0", down(1)), rec("leaf1", "swp1", down(2))],
            &["gpu1:mlx5_0", "leaf1:swp1"],
        );
        assert!(f.is_empty(), "{f:#?}");
        let f = judge(&[rec("gpu1", "rdma0", down(3))], &["gpu1:mlx5_0"]);
        assert_eq!(f[0].outcome, Outcome::Deviation);
        assert!(f[0].message.contains("3 link-down events for one fault"));
        // Outside the blast radius any link-down deviates.
        let f = judge(&[rec("gpu2", "rdma0", down(1))], &["gpu1:mlx5_0"]);
        assert_eq!(
            (f[0].component.as_str(), f[0].outcome),
            ("gpu2:mlx5_0", Outcome::Deviation)
        );
        // A flapped end that counted nothing: wrong if it can count...
        let quiet = rec(
            "gpu1",
            "rdma0",
            vec![d(Canonical::RxBytes, "rx_bytes_phy", None, 9)],
        );
        let f = judge(std::slice::from_ref(&quiet), &["gpu1:mlx5_0"]);
        assert_eq!(f[0].outcome, Outcome::Deviation);
        // ...and not available if it cannot (a veth).
        let veth = LedgerRecord {
            counts_link_down: false,
            ..quiet
        };
        let f = judge(&[veth], &["gpu1:mlx5_0"]);
        assert_eq!(f[0].outcome, Outcome::NotAvailable);
        // IB's link_downed never counts.
        let f = judge(
            &[rec(
                "gpu2",
                "mlx5_0",
                vec![d(Canonical::LinkDown, "link_downed", None, 4)],
            )],
            &[],
        );
        assert!(f.is_empty(), "{f:#?}");
    }

    #[test]
    fn physical_errors_name_the_cable() {
        let f = judge(
            &[
                rec(
                    "leaf1",
                    "swp2",
                    vec![
                        d(
                            Canonical::RxPackets,
                            "a_frames_received_ok",
                            None,
                            1_000_000,
                        ),
                        d(
                            Canonical::CrcErrors,
                            "a_frame_check_sequence_errors",
                            None,
                            50,
                        ),
                    ],
                ),
                rec(
                    "gpu1",
                    "rdma0",
                    vec![d(
                        Canonical::FecUncorrected,
                        "rx_pcs_symbol_err_phy",
                        None,
                        1,
                    )],
                ),
                // 1e-4 pre-FEC BER at 400G over 10 s.
                rec(
                    "gpu2",
                    "rdma0",
                    vec![d(
                        Canonical::FecCorrected,
                        "rx_corrected_bits_phy",
                        None,
                        400_000_000,
                    )],
                ),
            ],
            &[],
        );
        let by = |c: &str| {
            f.iter()
                .find(|x| x.check == c)
                .unwrap_or_else(|| panic!("{c}: {f:#?}"))
        };
        assert_eq!(by("counters.fcs").component, "gpu2:mlx5_0 <-> leaf1:swp2");
        assert_eq!(by("counters.fcs").outcome, Outcome::Deviation);
        assert!(by("counters.fcs").message.contains("5.00e-5 per frame"));
        assert_eq!(
            by("counters.fec_uncorrectable").component,
            "gpu1:mlx5_0 <-> leaf1:swp1"
        );
        assert!(by("counters.pre_fec_ber").message.contains("1.00e-4"));
        // A rare FCS error warns.
        let f = judge(
            &[rec(
                "leaf1",
                "swp2",
                vec![
                    d(
                        Canonical::RxPackets,
                        "a_frames_received_ok",
                        None,
                        100_000_000_000,
                    ),
                    d(
                        Canonical::CrcErrors,
                        "a_frame_check_sequence_errors",
                        None,
                        1,
                    ),
                ],
            )],
            &[],
        );
        assert_eq!(f[0].outcome, Outcome::Warning);
    }

    #[test]
    fn a_pfc_watchdog_storm_names_the_port_and_queue() {
        let storm = |v| Delta {
            queue: Some(3),
            ..d(
                Canonical::PfcStormDetected,
                "Ethernet8:3 STORM DETECTED",
                None,
                v,
            )
        };
        let mut r = rec("leaf1", "swp2", vec![storm(1)]);
        r.source = "pfcwd show stats".into();
        let f = judge(&[r.clone()], &[]);
        assert_eq!(f.len(), 1, "{f:#?}");
        assert_eq!(
            (f[0].check.as_str(), f[0].component.as_str(), f[0].outcome),
            ("counters.pfc_storm", "leaf1:swp2", Outcome::Deviation)
        );
        assert!(
            f[0].message
                .starts_with("PFC watchdog detected a storm on swp2 queue 3: 1 storm(s) detected"),
            "{}",
            f[0].message
        );
        // No storm in the window: nothing to say.
        r.changes = vec![storm(0)];
        assert!(judge(&[r], &[]).is_empty());
    }

    #[test]
    fn a_hot_uplink_is_named_once_however_many_tools_read_it() {
        let bytes = |n| vec![d(Canonical::TxBytes, "a_octets_transmitted_ok", None, n)];
        let mut second = rec("leaf1", "swp9", bytes(900));
        second.source = "ip -s -s -j link".into();
        // Two uplinks: the busiest can be at most 100 % over the mean.
        let spec = LedgerSpec {
            ecmp_imbalance_pct: 50.0,
            ..Default::default()
        };
        let f = judge_with(
            &spec,
            &[
                rec("leaf1", "swp9", bytes(900)),
                second,
                rec("leaf1", "swp10", bytes(100)),
            ],
            &[],
        );
        assert_eq!(f.len(), 1, "{f:#?}");
        assert_eq!(
            (f[0].check.as_str(), f[0].component.as_str()),
            ("counters.ecmp_balance", "leaf1:swp9")
        );
        assert!(
            f[0].message.contains("80% above the mean"),
            "{}",
            f[0].message
        );
        let even = judge_with(
            &spec,
            &[
                rec("leaf1", "swp9", bytes(500)),
                rec("leaf1", "swp10", bytes(400)),
            ],
            &[],
        );
        assert!(even.is_empty());
    }
}
