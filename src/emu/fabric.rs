//! The emulated fabric's topology: directed links with payload capacities,
//! derived from the validated inventory, and the path a RoCEv2 flow takes
//! through it (leaf ECMP on the 5-tuple, spine choice of parallel downlinks).
//!
//! It holds no traffic and no time; `share` turns paths into rates and the
//! emulator drives both. It also holds what faults change: the state of
//! every link end and whether each switch's routing daemons run. Defects of
//! the cabling are applied here (`nic_speed`, `slow_node`, `uplink_down`,
//! `bad_cable`, `swapped_cables`); configuration defects live in `world`.

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
/// IP protocol numbers.
pub const IPPROTO_TCP: u8 = 6;
pub const IPPROTO_UDP: u8 = 17;

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

/// A NIC's cable as its host sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HostLink {
    Up,
    /// The NIC is up but the far end (or the cable) is not: the netdev keeps
    /// its routes and drops what it is handed.
    NoCarrier,
    /// `ip link set … down` on the host itself (or no cable at all).
    AdminDown,
}

#[derive(Debug, Clone)]
pub struct Fabric {
    pub mtu: u32,
    /// Payload capacity (Gb/s) of each directed link: id `2*link` runs from
    /// the link's `a` end to its `b` end, `2*link + 1` the other way. The
    /// egress port of directed link `d` is port index `d`, its ingress port
    /// `d ^ 1` (see [`Fabric::port`]).
    pub capacity: Vec<f64>,
    /// The speed each link negotiated (Gb/s), what `ethtool` prints: the
    /// cable, the NIC and `nic_speed`. A `slow_node` is a host-side
    /// bottleneck (PCIe, memory), so its links still negotiate full speed.
    pub negotiated_gbps: Vec<f64>,
    /// Post-FEC bit error rate of each inventory link (`bad_cable`).
    pub ber: Vec<f64>,
    /// Operational state of each inventory link: both ends administratively
    /// up, neither switch rebooting, no `uplink_down` defect.
    pub link_up: Vec<bool>,
    /// Administrative state of each end of each link (`ip link set … up|down`).
    pub admin_up: Vec<[bool; 2]>,
    /// Links an `uplink_down` defect holds down whatever is done to them.
    pub broken: Vec<bool>,
    /// Routing daemons running on each switch.
    pub routing: Vec<bool>,
    /// BGP sessions over each end of each link administratively shut on
    /// that end's switch (`neighbor X shutdown`).
    pub peer_shut: Vec<[bool; 2]>,
    /// Whether the BGP session over each link is down because of a shut at
    /// either end; it comes back a moment after the last end is unshut.
    /// The link stays up and counts no link-down: routing alone withdraws it.
    pub session_down: Vec<bool>,
    /// NICs whose cable sits in another NIC's port (`swapped_cables`): the
    /// leaf routes their addresses to the port the inventory says, where the
    /// other NIC answers no ARP, so nothing reaches them and they reach nothing.
    pub misplaced: Vec<bool>,
    /// Directed (up: NIC→leaf, down: leaf→NIC) host links per NIC.
    nic_links: Vec<Option<(usize, usize)>>,
    nic_leaf: Vec<Option<SwitchId>>,
    /// Directed links from one switch to another (parallel cables).
    between: HashMap<(SwitchId, SwitchId), Vec<usize>>,
    /// Directed uplinks of each leaf with the spine they reach.
    leaf_up: HashMap<SwitchId, Vec<(usize, SwitchId)>>,
    /// Port index of each switch port by (switch, port name).
    ports: HashMap<(SwitchId, String), usize>,
    nic_ip: Vec<Ipv4Addr>,
    seed: u64,
}

fn switch_of(end: &End) -> Option<SwitchId> {
    match end {
        End::Port { switch, .. } => Some(*switch),
        End::Nic(_) => None,
    }
}

/// The NIC ends of a `swapped_cables` defect.
fn swapped_nics(inv: &Inventory, a: &str, b: &str) -> Vec<NicId> {
    [a, b]
        .iter()
        .filter_map(|t| match inv.resolve_end(t)? {
            End::Nic(n) => Some(n),
            port @ End::Port { .. } => {
                let l = inv.link_at(&port)?;
                match (&inv.links[l].a, &inv.links[l].b) {
                    (End::Nic(n), _) | (_, End::Nic(n)) => Some(*n),
                    _ => None,
                }
            }
        })
        .collect()
}

impl Fabric {
    pub fn new(inv: &Inventory, seed: u64) -> Self {
        let mut line: Vec<f64> = inv.links.iter().map(|l| f64::from(l.speed_gbps)).collect();
        // A NIC's host link runs at the slower of the cable and the NIC.
        for nic in &inv.nics {
            if let Some(l) = nic.uplink {
                line[l] = line[l].min(f64::from(nic.speed_gbps));
            }
        }
        let mut negotiated = line.clone();
        let mut broken = vec![false; inv.links.len()];
        let mut ber = vec![0.0; inv.links.len()];
        let mut misplaced = vec![false; inv.nics.len()];
        for d in &inv.defects {
            match d {
                Defect::NicSpeed { nic, gbps } => {
                    if let Some(End::Nic(n)) = inv.resolve_end(nic) {
                        if let Some(l) = inv.nics[n].uplink {
                            line[l] = line[l].min(f64::from(*gbps));
                            negotiated[l] = negotiated[l].min(f64::from(*gbps));
                        }
                    }
                }
                Defect::SlowNode { node, factor } => {
                    if let Some(&n) = inv.node_by_name.get(node) {
                        for &nic in &inv.nodes[n].nics {
                            if let Some(l) = inv.nics[nic].uplink {
                                line[l] *= factor.clamp(0.0, 1.0);
                            }
                        }
                    }
                }
                Defect::UplinkDown { port } => {
                    if let Some(l) = inv.resolve_end(port).and_then(|e| inv.link_at(&e)) {
                        broken[l] = true;
                    }
                }
                Defect::BadCable { link, ber: b } => {
                    if let Some(l) = inv.resolve_end(link).and_then(|e| inv.link_at(&e)) {
                        ber[l] = b.clamp(0.0, 1.0);
                    }
                }
                Defect::SwappedCables { a, b } => {
                    for n in swapped_nics(inv, a, b) {
                        misplaced[n] = true;
                    }
                }
                _ => {}
            }
        }
        let eff = goodput_factor(inv.fabric.roce.mtu);
        let capacity: Vec<f64> = line.iter().flat_map(|s| [s * eff, s * eff]).collect();

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
        let mut ports = HashMap::new();
        for (l, link) in inv.links.iter().enumerate() {
            for (side, end) in [&link.a, &link.b].into_iter().enumerate() {
                if let End::Port { switch, port } = end {
                    ports.insert((*switch, port.clone()), 2 * l + side);
                }
            }
            if link.kind != LinkKind::Fabric {
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
            let ups = inv
                .uplinks(leaf)
                .map(|(l, spine)| {
                    let dir = if switch_of(&inv.links[l].a) == Some(leaf) {
                        2 * l
                    } else {
                        2 * l + 1
                    };
                    (dir, spine)
                })
                .collect();
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
            negotiated_gbps: negotiated,
            ber,
            link_up: broken.iter().map(|b| !b).collect(),
            admin_up: vec![[true; 2]; inv.links.len()],
            broken,
            routing: vec![true; inv.switches.len()],
            peer_shut: vec![[false; 2]; inv.links.len()],
            session_down: vec![false; inv.links.len()],
            misplaced,
            nic_links,
            nic_leaf,
            between,
            leaf_up,
            ports,
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

    /// The state of a NIC's own cable as the NIC sees it.
    pub fn host_link(&self, inv: &Inventory, nic: NicId) -> HostLink {
        let Some((up, _)) = self.nic_links[nic] else {
            return HostLink::AdminDown;
        };
        let l = up / 2;
        let side = usize::from(inv.links[l].a != End::Nic(nic));
        if self.link_up[l] {
            HostLink::Up
        } else if self.admin_up[l][side] {
            HostLink::NoCarrier
        } else {
            HostLink::AdminDown
        }
    }

    /// Port index (`2*link + side`) of a switch port, by name.
    pub fn port(&self, switch: SwitchId, name: &str) -> Option<usize> {
        self.ports.get(&(switch, name.to_string())).copied()
    }

    fn live(&self, dir: usize) -> bool {
        self.link_up[dir / 2]
    }

    /// Whether a BGP session runs over inventory link `link`: a leaf–spine
    /// link (hosts do not speak BGP here).
    pub fn has_session(&self, link: usize) -> bool {
        self.between.values().any(|v| v.contains(&(2 * link)))
    }

    /// Up, and in the routing table: its BGP session is not shut.
    fn routed(&self, dir: usize) -> bool {
        self.live(dir) && !self.session_down[dir / 2]
    }

    /// Recomputes each link's operational state from the administrative
    /// state of its ends, the defects and the switches that are rebooting.
    pub fn refresh(&mut self, inv: &Inventory, rebooting: &[bool]) {
        for (l, link) in inv.links.iter().enumerate() {
            let sw_up = |e: &End| switch_of(e).is_none_or(|s| !rebooting[s]);
            self.link_up[l] = !self.broken[l]
                && self.admin_up[l][0]
                && self.admin_up[l][1]
                && sw_up(&link.a)
                && sw_up(&link.b);
        }
    }

    /// Directed links a flow from `src` to `dst` with UDP source port
    /// `sport` crosses (a RoCEv2 flow: UDP to 4791), or `None` when there is no route (an uncabled or
    /// misplaced NIC, a host link down, every uplink towards the destination
    /// down or withdrawn by BGP, routing stopped on a leaf on the way). A
    /// NIC to itself is an empty path (loopback inside the NIC).
    ///
    /// The source leaf hashes (src IP, dst IP, sport, 4791) with its own
    /// identity and the seed onto one of its live uplinks whose spine reaches
    /// the destination leaf; that spine hashes the same tuple onto one of its
    /// live parallel downlinks to the destination leaf. The hash is taken
    /// modulo the live members, so a link going down rehashes flows, as on
    /// switches without resilient hashing.
    pub fn path(&self, src: NicId, dst: NicId, sport: u16) -> Option<Vec<usize>> {
        self.path_l4(src, dst, IPPROTO_UDP, sport, ROCE_UDP_PORT as u16)
    }

    /// The path of any IPv4 flow: `path` with the protocol and destination
    /// port of the 5-tuple given (iperf3's TCP streams hash on their own
    /// ports). The protocol enters the hash word of the ports as
    /// `dport | (proto ^ 17) << 16`, so that a UDP flow hashes exactly as
    /// `path` always has.
    pub fn path_l4(
        &self,
        src: NicId,
        dst: NicId,
        proto: u8,
        sport: u16,
        dport: u16,
    ) -> Option<Vec<usize>> {
        if src == dst {
            return Some(Vec::new());
        }
        if self.misplaced[src] || self.misplaced[dst] {
            return None;
        }
        let (up, _) = self.nic_links[src]?;
        let (_, down) = self.nic_links[dst]?;
        if !self.live(up) || !self.live(down) {
            return None;
        }
        let ls = self.nic_leaf[src]?;
        let ld = self.nic_leaf[dst]?;
        if ls == ld {
            return Some(vec![up, down]);
        }
        if !self.routing[ls] || !self.routing[ld] {
            return None;
        }
        let live_downs = |spine: SwitchId| -> Vec<usize> {
            self.between
                .get(&(spine, ld))
                .map(|v| v.iter().copied().filter(|&d| self.routed(d)).collect())
                .unwrap_or_default()
        };
        let cands: Vec<&(usize, SwitchId)> = self
            .leaf_up
            .get(&ls)?
            .iter()
            .filter(|(d, spine)| {
                self.routed(*d) && self.routing[*spine] && !live_downs(*spine).is_empty()
            })
            .collect();
        if cands.is_empty() {
            return None;
        }
        let ip_s = u64::from(u32::from(self.nic_ip[src]));
        let ip_d = u64::from(u32::from(self.nic_ip[dst]));
        let l4 = u64::from(dport) | (u64::from(proto ^ IPPROTO_UDP) << 16);
        let tuple = [ip_s, ip_d, u64::from(sport), l4];
        let h = hash_words(
            self.seed,
            &[tuple[0], tuple[1], tuple[2], tuple[3], ls as u64],
        );
        let &(uplink, spine) = cands[(h % cands.len() as u64) as usize];
        let downs = live_downs(spine);
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
