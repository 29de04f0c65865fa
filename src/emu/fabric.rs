//! The emulated fabric's topology: directed links with payload capacities,
//! derived from the validated inventory, and the path a RoCEv2 flow takes
//! through it (leaf ECMP on the 5-tuple, spine choice of parallel downlinks).
//!
//! It holds no traffic and no time; `share` turns paths into rates and the
//! emulator drives both. Defects that change capacity (`nic_speed`,
//! `slow_node`, `uplink_down`) are applied here; the others only show up in
//! counters and audits, which are not modelled here.

use std::collections::HashMap;
use std::net::Ipv4Addr;

use crate::config::inventory::Defect;
use crate::config::model::{End, Inventory, LinkKind, NicId, SwitchId};

use super::rng::hash_words;

/// Per-packet RoCEv2 overhead on the wire, in bytes: Ethernet header 14 +
/// FCS 4 + preamble/SFD 8 + inter-packet gap 12 + IPv4 20 + UDP 8 + BTH 12 +
/// ICRC 4 = 82. (RDMA WRITE adds a 16-byte RETH only to a message's first
/// packet, negligible for large messages.)
pub const ROCE_OVERHEAD_BYTES: f64 = 82.0;

/// The RoCEv2 destination UDP port (IANA).
pub const ROCE_UDP_PORT: u64 = 4791;

/// Payload share of the wire at `mtu`: MTU / (MTU + 82).
pub fn goodput_factor(mtu: u32) -> f64 {
    let m = f64::from(mtu.max(256));
    m / (m + ROCE_OVERHEAD_BYTES)
}

/// The UDP source port a RoCEv2 QP uses, as the Linux kernel derives it for
/// mlx5 when no flow label is set (`rdma_calc_flow_label` then
/// `rdma_flow_label_to_udp_sport`, include/rdma/ib_verbs.h): a 20-bit flow
/// label hashed from the two QP numbers, folded to 14 bits, in 0xC000–0xFFFF.
pub fn roce_sport(lqpn: u32, rqpn: u32) -> u16 {
    let mut v = u64::from(lqpn) * u64::from(rqpn);
    v ^= v >> 20;
    v ^= v >> 40;
    let fl = (v & 0xF_FFFF) as u32;
    let low = (fl & 0x3FFF) ^ ((fl & 0xF_C000) >> 14);
    (low | 0xC000) as u16
}

#[derive(Debug, Clone)]
pub struct Fabric {
    pub mtu: u32,
    /// Payload capacity (Gb/s) of each directed link: id `2*link` runs from
    /// the link's `a` end to its `b` end, `2*link + 1` the other way.
    pub capacity: Vec<f64>,
    /// Directed (up: NIC→leaf, down: leaf→NIC) host links per NIC.
    nic_links: Vec<Option<(usize, usize)>>,
    nic_leaf: Vec<Option<SwitchId>>,
    /// Live directed links from one switch to another (parallel cables).
    between: HashMap<(SwitchId, SwitchId), Vec<usize>>,
    /// Live directed uplinks of each leaf with the spine they reach.
    leaf_up: HashMap<SwitchId, Vec<(usize, SwitchId)>>,
    nic_ip: Vec<Ipv4Addr>,
    seed: u64,
}

fn switch_of(end: &End) -> Option<SwitchId> {
    match end {
        End::Port { switch, .. } => Some(*switch),
        End::Nic(_) => None,
    }
}

impl Fabric {
    pub fn new(inv: &Inventory, seed: u64) -> Self {
        let eff = goodput_factor(inv.fabric.roce.mtu);
        let mut line: Vec<f64> = Vec::with_capacity(inv.links.len() * 2);
        for l in &inv.links {
            let s = f64::from(l.speed_gbps);
            line.push(s);
            line.push(s);
        }
        // A NIC's host link runs at the slower of the cable and the NIC.
        for (id, nic) in inv.nics.iter().enumerate() {
            if let Some(l) = nic.uplink {
                let s = line[2 * l].min(f64::from(nic.speed_gbps));
                line[2 * l] = s;
                line[2 * l + 1] = s;
            }
            let _ = id;
        }
        let mut down: Vec<bool> = vec![false; inv.links.len()];
        for d in &inv.defects {
            match d {
                Defect::NicSpeed { nic, gbps } => {
                    if let Some(End::Nic(n)) = inv.resolve_end(nic) {
                        if let Some(l) = inv.nics[n].uplink {
                            line[2 * l] = line[2 * l].min(f64::from(*gbps));
                            line[2 * l + 1] = line[2 * l + 1].min(f64::from(*gbps));
                        }
                    }
                }
                Defect::SlowNode { node, factor } => {
                    if let Some(&n) = inv.node_by_name.get(node) {
                        for &nic in &inv.nodes[n].nics {
                            if let Some(l) = inv.nics[nic].uplink {
                                line[2 * l] *= factor.clamp(0.0, 1.0);
                                line[2 * l + 1] *= factor.clamp(0.0, 1.0);
                            }
                        }
                    }
                }
                Defect::UplinkDown { port } => {
                    if let Some(l) = inv.resolve_end(port).and_then(|e| inv.link_at(&e)) {
                        down[l] = true;
                        line[2 * l] = 0.0;
                        line[2 * l + 1] = 0.0;
                    }
                }
                _ => {}
            }
        }
        let capacity: Vec<f64> = line.iter().map(|s| s * eff).collect();

        let mut nic_links = vec![None; inv.nics.len()];
        let mut nic_leaf = vec![None; inv.nics.len()];
        for (n, nic) in inv.nics.iter().enumerate() {
            let Some(l) = nic.uplink else { continue };
            let link = &inv.links[l];
            let (up, dn) = if link.a == End::Nic(n) {
                (2 * l, 2 * l + 1)
            } else {
                (2 * l + 1, 2 * l)
            };
            nic_links[n] = Some((up, dn));
            nic_leaf[n] = inv.nic_leaf(n).map(|(s, _)| s);
        }
        let mut between: HashMap<(SwitchId, SwitchId), Vec<usize>> = HashMap::new();
        let mut leaf_up: HashMap<SwitchId, Vec<(usize, SwitchId)>> = HashMap::new();
        for (l, link) in inv.links.iter().enumerate() {
            if link.kind != LinkKind::Fabric || down[l] {
                continue;
            }
            let (Some(a), Some(b)) = (switch_of(&link.a), switch_of(&link.b)) else {
                continue;
            };
            between.entry((a, b)).or_default().push(2 * l);
            between.entry((b, a)).or_default().push(2 * l + 1);
        }
        for (leaf, sw) in inv.switches.iter().enumerate() {
            if sw.role != crate::config::inventory::SwitchRole::Leaf {
                continue;
            }
            let mut ups: Vec<(usize, SwitchId)> = Vec::new();
            for (l, spine) in inv.uplinks(leaf) {
                if down[l] {
                    continue;
                }
                let dir = if switch_of(&inv.links[l].a) == Some(leaf) {
                    2 * l
                } else {
                    2 * l + 1
                };
                ups.push((dir, spine));
            }
            leaf_up.insert(leaf, ups);
        }
        let nic_ip = inv
            .nics
            .iter()
            .map(|nic| {
                nic.address
                    .as_deref()
                    .and_then(|a| a.parse::<Ipv4Addr>().ok())
                    .unwrap_or_else(|| {
                        let n1 = nic.node as u32 + 1;
                        Ipv4Addr::new(10, (nic.rail & 0xFF) as u8, (n1 >> 8) as u8, n1 as u8)
                    })
            })
            .collect();
        Fabric {
            mtu: inv.fabric.roce.mtu,
            capacity,
            nic_links,
            nic_leaf,
            between,
            leaf_up,
            nic_ip,
            seed,
        }
    }

    /// The IPv4 address a NIC's RoCE GID carries.
    pub fn nic_ip(&self, nic: NicId) -> Ipv4Addr {
        self.nic_ip[nic]
    }

    /// Payload capacity of the NIC's own port (the slower direction).
    pub fn nic_goodput(&self, nic: NicId) -> f64 {
        match self.nic_links[nic] {
            Some((u, d)) => self.capacity[u].min(self.capacity[d]),
            None => 0.0,
        }
    }

    /// Directed links a flow from `src` to `dst` with UDP source port
    /// `sport` crosses, or `None` when there is no route (an uncabled NIC,
    /// every uplink towards the destination down). A NIC to itself is an
    /// empty path (loopback inside the NIC).
    ///
    /// The source leaf hashes (src IP, dst IP, sport, 4791) with its own
    /// identity and the seed onto one of its live uplinks whose spine reaches
    /// the destination leaf; that spine hashes the same tuple onto one of its
    /// parallel downlinks to the destination leaf.
    pub fn path(&self, src: NicId, dst: NicId, sport: u16) -> Option<Vec<usize>> {
        if src == dst {
            return Some(Vec::new());
        }
        let (up, _) = self.nic_links[src]?;
        let (_, down) = self.nic_links[dst]?;
        let ls = self.nic_leaf[src]?;
        let ld = self.nic_leaf[dst]?;
        if ls == ld {
            return Some(vec![up, down]);
        }
        let cands: Vec<&(usize, SwitchId)> = self
            .leaf_up
            .get(&ls)?
            .iter()
            .filter(|(_, spine)| {
                self.between
                    .get(&(*spine, ld))
                    .is_some_and(|v| !v.is_empty())
            })
            .collect();
        if cands.is_empty() {
            return None;
        }
        let ip_s = u64::from(u32::from(self.nic_ip[src]));
        let ip_d = u64::from(u32::from(self.nic_ip[dst]));
        let tuple = [ip_s, ip_d, u64::from(sport), ROCE_UDP_PORT];
        let h = hash_words(
            self.seed,
            &[tuple[0], tuple[1], tuple[2], tuple[3], ls as u64],
        );
        let &(uplink, spine) = cands[(h % cands.len() as u64) as usize];
        let downs = self.between.get(&(spine, ld))?;
        let h2 = hash_words(
            self.seed ^ 0x5EED_5A1E,
            &[tuple[0], tuple[1], tuple[2], tuple[3], spine as u64],
        );
        let downlink = downs[(h2 % downs.len() as u64) as usize];
        Some(vec![up, uplink, downlink, down])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::emu::testutil::pod;

    #[test]
    fn mtu_caps_match_hand_computed_values() {
        // 400 × 4096 / 4178 = 392.149…; 400 × 1024 / 1106 = 370.343…
        assert!((400.0 * goodput_factor(4096) - 392.149).abs() < 0.001);
        assert!((400.0 * goodput_factor(1024) - 370.343).abs() < 0.001);
        let inv = pod(4096, &[]);
        let f = Fabric::new(&inv, 1);
        assert!((f.nic_goodput(0) - 392.149).abs() < 0.001);
        let inv = pod(1024, &[]);
        let f = Fabric::new(&inv, 1);
        assert!((f.nic_goodput(0) - 370.343).abs() < 0.001);
    }

    #[test]
    fn sport_is_in_the_roce_range_and_depends_on_both_qpns() {
        let a = roce_sport(0x137, 0x136);
        assert!(a >= 0xC000);
        assert_ne!(a, roce_sport(0x138, 0x136));
        assert_eq!(roce_sport(5, 9), roce_sport(9, 5));
    }

    #[test]
    fn paths_follow_the_cabling() {
        let inv = pod(4096, &[]);
        let f = Fabric::new(&inv, 1);
        let nic = |node: usize, rail: usize| inv.nodes[node].nics[rail];
        // gpu001 and gpu002 share r0-leaf1: two hops.
        assert_eq!(f.path(nic(0, 0), nic(1, 0), 0xC001).unwrap().len(), 2);
        // gpu001 and gpu009 are on r0-leaf1 and r0-leaf2: four hops.
        let p = f.path(nic(0, 0), nic(8, 0), 0xC001).unwrap();
        assert_eq!(p.len(), 4);
        assert!(p.iter().all(|&l| f.capacity[l] > 392.0));
        // Different seeds move some flow to another uplink.
        let g = Fabric::new(&inv, 2);
        let moved = (0..64u16).any(|s| {
            f.path(nic(0, 0), nic(8, 0), 0xC000 + s) != g.path(nic(0, 0), nic(8, 0), 0xC000 + s)
        });
        assert!(moved);
    }

    #[test]
    fn defects_change_capacities_and_routes() {
        let inv = pod(
            4096,
            &[
                Defect::NicSpeed {
                    nic: "gpu001:mlx5_0".into(),
                    gbps: 200,
                },
                Defect::SlowNode {
                    node: "gpu002".into(),
                    factor: 0.5,
                },
            ],
        );
        let f = Fabric::new(&inv, 1);
        let g0 = f.nic_goodput(inv.nodes[0].nics[0]);
        assert!((g0 - 200.0 * goodput_factor(4096)).abs() < 1e-9);
        let g1 = f.nic_goodput(inv.nodes[1].nics[3]);
        assert!((g1 - 200.0 * goodput_factor(4096)).abs() < 1e-9);
    }
}
