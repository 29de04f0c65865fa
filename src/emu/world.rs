//! The emulated pod's hardware state between commands: every NIC's and
//! switch port's counters and configuration, which switches are rebooting,
//! and the timed changes still to come (routing back after a restart, a
//! reboot finishing). `fabric` holds the link states the faults change;
//! this module turns traffic into counter increments and answers the
//! read-only commands (`ethtool`, sysfs, `mlnx_qos`, `lldpctl`, `ip`, `dcb`,
//! `tc`) from it.
//!
//! Configuration defects live here and nowhere else: `firmware` changes what
//! `ethtool -i` and sysfs print, `extra_pfc` what `mlnx_qos` and `dcb pfc`
//! print, `pfc_off` and `ecn_thresholds` what `dcb pfc` and `tc qdisc` print
//! on that switch (and how its queues behave under congestion),
//! `swapped_cables` who LLDP finds on both ends of the two cables.
//! `nic_speed` reaches the configuration through the fabric's line rates;
//! `weak_lane` is the optics' business (`optics`), read at `ethtool -m`.

use crate::config::inventory::Defect;
use crate::config::model::{End, Inventory, NicId, SwitchId};

use super::fabric::Fabric;
use super::state::{Neighbor, NicConfig, NicCounters, PortConfig, PortCounters, PrioCounters};

/// Ethernet MTU of host netdevs and switch ports (RoCE MTU 4096 needs ≥ 4200).
pub const HOST_MTU: u32 = 9000;
pub const SWITCH_MTU: u32 = 9216;
/// ECN marking probability at the maximum threshold, percent (NVIDIA's
/// Spectrum RoCE recommendations use a high value so that DCQCN reacts early;
/// 20 % keeps marking proportional between the thresholds).
pub const ECN_PMAX_PCT: u32 = 20;
/// Firmware every NIC runs unless the inventory's versions name one.
pub const DEFAULT_FIRMWARE: &str = "28.39.1002";
pub const DEFAULT_DRIVER: &str = "24.10-1.1.4";

/// ECN marking thresholds of a queue: (min bytes, max bytes, % at max).
pub type EcnSetting = (u64, u64, u32);

/// A change that happens by itself at a virtual time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Change {
    /// The routing daemons of a switch have re-established their sessions.
    RoutingUp(SwitchId),
    /// A rebooting switch is back, with its counters cleared.
    BootDone(SwitchId),
    /// An API switch's dead-man timer runs out (`api_out`).
    ApiTimer(u32),
    /// The BGP session over this inventory link is established again
    /// (unless an end was shut again meanwhile).
    SessionUp(usize),
}

/// Where a directed link ends: a NIC or a switch port (by port index).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EndRef {
    Nic(NicId),
    Port(usize),
}

#[derive(Debug, Clone)]
pub struct World {
    pub nic: Vec<NicCounters>,
    /// Indexed by port index `2*link + side`; entries of NIC ends stay unused.
    pub port: Vec<PortCounters>,
    pub nic_cfg: Vec<NicConfig>,
    pub port_cfg: Vec<PortConfig>,
    /// The switch of each port index (`None` for a NIC end).
    pub port_switch: Vec<Option<SwitchId>>,
    ends: Vec<EndRef>,
    pub rebooting: Vec<bool>,
    /// Timed changes still to come, in no particular order.
    pub pending: Vec<(f64, Change)>,
    pub roce_prio: u8,
    /// What the `eos` and `nxos` switches keep besides (`api_out`).
    pub api: super::api_out::ApiState,
}

fn mac(kind: u8, i: usize) -> [u8; 6] {
    let i = i as u32;
    [
        0x02,
        kind,
        (i >> 24) as u8,
        (i >> 16) as u8,
        (i >> 8) as u8,
        i as u8,
    ]
}

impl World {
    pub fn new(inv: &Inventory, fabric: &Fabric) -> Self {
        let roce = &inv.fabric.roce;
        let prio = roce.pfc_priority.min(7);
        let versions = &inv.fabric.versions;
        let driver = versions
            .driver
            .as_deref()
            .map(|d| d.trim_start_matches("mlx5_core").trim().to_string())
            .filter(|d| !d.is_empty())
            .unwrap_or_else(|| DEFAULT_DRIVER.into());
        let firmware = versions
            .nic_firmware
            .clone()
            .unwrap_or_else(|| DEFAULT_FIRMWARE.into());
        let mut ends = Vec::with_capacity(inv.links.len() * 2);
        let mut port_switch = Vec::with_capacity(inv.links.len() * 2);
        let mut port_cfg = Vec::with_capacity(inv.links.len() * 2);
        for (l, link) in inv.links.iter().enumerate() {
            for (side, end) in [&link.a, &link.b].into_iter().enumerate() {
                let idx = 2 * l + side;
                let (name, sw) = match end {
                    End::Nic(n) => {
                        ends.push(EndRef::Nic(*n));
                        (inv.nics[*n].netdev.clone(), None)
                    }
                    End::Port { switch, port } => {
                        ends.push(EndRef::Port(idx));
                        (port.clone(), Some(*switch))
                    }
                };
                port_switch.push(sw);
                let mut pfc = [false; 8];
                pfc[usize::from(prio)] = true;
                let mut ecn = [None; 8];
                if let Some(e) = &roce.ecn {
                    ecn[usize::from(prio)] = Some((
                        u64::from(e.min_kb) * 1024,
                        u64::from(e.max_kb) * 1024,
                        ECN_PMAX_PCT,
                    ));
                }
                port_cfg.push(PortConfig {
                    name,
                    speed_mbps: (fabric.negotiated_gbps[l] * 1000.0) as u64,
                    link_up: fabric.link_up[l],
                    admin_up: true,
                    mtu: SWITCH_MTU,
                    pfc,
                    ecn,
                    neighbor: None,
                });
            }
        }
        let mut nic_cfg: Vec<NicConfig> = inv
            .nics
            .iter()
            .enumerate()
            .map(|(n, nic)| {
                let mut pfc = [false; 8];
                pfc[usize::from(prio)] = true;
                let mut dscp2prio = [0u8; 64];
                for (d, p) in dscp2prio.iter_mut().enumerate() {
                    *p = (d >> 3) as u8;
                }
                dscp2prio[usize::from(roce.dscp_roce.min(63))] = prio;
                dscp2prio[usize::from(roce.dscp_cnp.min(63))] = roce.cnp_priority.min(7);
                let l = nic.uplink;
                let idx = inv.nodes[nic.node]
                    .nics
                    .iter()
                    .position(|&x| x == n)
                    .unwrap_or(0);
                NicConfig {
                    netdev: nic.netdev.clone(),
                    device: nic.device.clone(),
                    speed_mbps: l.map_or(0, |l| (fabric.negotiated_gbps[l] * 1000.0) as u64),
                    link_up: l.is_some_and(|l| fabric.link_up[l]),
                    admin_up: true,
                    mtu: HOST_MTU,
                    driver_version: driver.clone(),
                    firmware: firmware.clone(),
                    bus_info: format!("0000:{:02x}:00.0", 0x0c + 0x10 * idx),
                    pfc,
                    trust_dscp: true,
                    dscp2prio,
                    neighbor: None,
                    mac: mac(0x4e, n),
                }
            })
            .collect();
        // LLDP sees the cable as it is, not as the inventory says.
        let mut plugged: Vec<Option<(SwitchId, String)>> = (0..inv.nics.len())
            .map(|n| inv.nic_leaf(n).map(|(s, p)| (s, p.to_string())))
            .collect();
        for d in &inv.defects {
            match d {
                Defect::SwappedCables { .. } => {
                    let m: Vec<NicId> = (0..inv.nics.len())
                        .filter(|&n| fabric.misplaced[n])
                        .collect();
                    if let [a, b] = m[..] {
                        plugged.swap(a, b);
                    }
                }
                Defect::Firmware { node, version } => {
                    if let Some(&nd) = inv.node_by_name.get(node) {
                        for &n in &inv.nodes[nd].nics {
                            nic_cfg[n].firmware = version.clone();
                        }
                    }
                }
                Defect::ExtraPfc { nic, priorities } => {
                    if let Some(End::Nic(n)) = inv.resolve_end(nic) {
                        for &p in priorities {
                            if let Some(slot) = nic_cfg[n].pfc.get_mut(usize::from(p)) {
                                *slot = true;
                            }
                        }
                    }
                }
                Defect::PfcOff { switch } => {
                    if let Some(&s) = inv.switch_by_name.get(switch) {
                        for (i, cfg) in port_cfg.iter_mut().enumerate() {
                            if port_switch[i] == Some(s) {
                                cfg.pfc[usize::from(prio)] = false;
                            }
                        }
                    }
                }
                Defect::EcnThresholds {
                    switch,
                    min_kb,
                    max_kb,
                } => {
                    if let Some(&s) = inv.switch_by_name.get(switch) {
                        for (i, cfg) in port_cfg.iter_mut().enumerate() {
                            if port_switch[i] == Some(s) {
                                cfg.ecn[usize::from(prio)] = Some((
                                    u64::from(*min_kb) * 1024,
                                    u64::from(*max_kb) * 1024,
                                    ECN_PMAX_PCT,
                                ));
                            }
                        }
                    }
                }
                _ => {}
            }
        }
        // A switch port learns whichever NIC is plugged into it, and the
        // switch at the other end of a switch-to-switch cable.
        for (n, p) in plugged.iter().enumerate() {
            let Some((s, port)) = p else { continue };
            if let Some(i) = fabric.port(*s, port) {
                let nic = &inv.nics[n];
                let node = &inv.nodes[nic.node];
                port_cfg[i].neighbor = Some(Neighbor::Host {
                    node: node.name.clone(),
                    netdev: nic.netdev.clone(),
                    mac: nic_cfg[n].mac,
                    mgmt: node.address.clone(),
                });
            }
        }
        for (l, link) in inv.links.iter().enumerate() {
            if let (
                End::Port {
                    switch: sa,
                    port: pa,
                },
                End::Port {
                    switch: sb,
                    port: pb,
                },
            ) = (&link.a, &link.b)
            {
                let far = |s: SwitchId, port: &str| {
                    let sw = &inv.switches[s];
                    Some(Neighbor::Switch {
                        name: sw.name.clone(),
                        port: port.to_string(),
                        mgmt: sw.address.clone(),
                    })
                };
                port_cfg[2 * l].neighbor = far(*sb, pb);
                port_cfg[2 * l + 1].neighbor = far(*sa, pa);
            }
        }
        for (n, p) in plugged.into_iter().enumerate() {
            nic_cfg[n].neighbor = p.map(|(s, port)| {
                let sw = &inv.switches[s];
                (sw.name.clone(), port, sw.address.clone())
            });
        }
        World {
            nic: vec![NicCounters::default(); inv.nics.len()],
            port: vec![PortCounters::default(); inv.links.len() * 2],
            nic_cfg,
            port_cfg,
            port_switch,
            ends,
            rebooting: vec![false; inv.switches.len()],
            pending: Vec::new(),
            roce_prio: prio,
            api: super::api_out::ApiState::new(inv),
        }
    }

    /// The end a port index stands for.
    pub fn end(&self, port: usize) -> EndRef {
        self.ends[port]
    }

    /// Priority counters of an end.
    pub fn prio(&mut self, end: EndRef, p: u8) -> &mut PrioCounters {
        match end {
            EndRef::Nic(n) => &mut self.nic[n].prio[usize::from(p & 7)],
            EndRef::Port(i) => &mut self.port[i].prio[usize::from(p & 7)],
        }
    }

    /// Traffic over one directed link: sent by `from`, received by `to`, in
    /// the totals and on priority `p` (RoCE's, or 0 for TCP).
    pub fn add_hop_prio(&mut self, from: EndRef, to: EndRef, bytes: f64, pkts: f64, p: u8) {
        let add = |b: &mut f64, k: &mut f64| {
            *b += bytes;
            *k += pkts;
        };
        match from {
            EndRef::Nic(n) => {
                let c = &mut self.nic[n];
                add(&mut c.tx_bytes, &mut c.tx_packets);
            }
            EndRef::Port(i) => {
                let c = &mut self.port[i];
                add(&mut c.tx_bytes, &mut c.tx_packets);
            }
        }
        let c = self.prio(from, p);
        add(&mut c.tx_bytes, &mut c.tx_packets);
        match to {
            EndRef::Nic(n) => {
                let c = &mut self.nic[n];
                add(&mut c.rx_bytes, &mut c.rx_packets);
            }
            EndRef::Port(i) => {
                let c = &mut self.port[i];
                add(&mut c.rx_bytes, &mut c.rx_packets);
            }
        }
        let c = self.prio(to, p);
        add(&mut c.rx_bytes, &mut c.rx_packets);
    }

    /// Frames received with a bad FCS at an end (a cable with bit errors).
    pub fn add_crc(&mut self, end: EndRef, frames: f64, corrected_bits: f64) {
        match end {
            EndRef::Nic(n) => {
                let c = &mut self.nic[n];
                c.rx_crc_errors += frames;
                c.rx_symbol_errors += frames;
                c.fec_uncorrectable += frames;
                c.rx_corrected_bits += corrected_bits;
            }
            EndRef::Port(i) => {
                self.port[i].rx_crc_errors += frames;
                self.port[i].rx_symbol_errors += frames;
            }
        }
    }

    /// A link went down: both ends count it.
    pub fn link_down(&mut self, link: usize) {
        for side in 0..2 {
            match self.ends[2 * link + side] {
                EndRef::Nic(n) => self.nic[n].link_down_events += 1.0,
                EndRef::Port(i) => self.port[i].link_down_events += 1.0,
            }
        }
    }

    /// Brings configuration that follows link state up to date.
    pub fn sync_links(&mut self, inv: &Inventory, fabric: &Fabric) {
        for (l, _) in inv.links.iter().enumerate() {
            for side in 0..2 {
                let idx = 2 * l + side;
                match self.ends[idx] {
                    EndRef::Nic(n) => {
                        self.nic_cfg[n].link_up = fabric.link_up[l];
                        self.nic_cfg[n].admin_up = fabric.admin_up[l][side];
                        self.nic_cfg[n].speed_mbps = if fabric.link_up[l] {
                            (fabric.negotiated_gbps[l] * 1000.0) as u64
                        } else {
                            0
                        };
                    }
                    EndRef::Port(i) => {
                        self.port_cfg[i].link_up = fabric.link_up[l];
                        self.port_cfg[i].admin_up = fabric.admin_up[l][side];
                    }
                }
            }
        }
    }

    /// A switch finished rebooting: its counters start from zero.
    pub fn clear_switch(&mut self, switch: SwitchId) {
        for (i, s) in self.port_switch.iter().enumerate() {
            if *s == Some(switch) {
                self.port[i] = PortCounters::default();
            }
        }
    }

    /// Whether the egress queue of directed link `dir` is on a switch, and
    /// its PFC and ECN settings for the RoCE priority.
    pub fn queue_config(&self, dir: usize) -> Option<(bool, Option<EcnSetting>)> {
        self.port_switch[dir]?;
        let c = &self.port_cfg[dir];
        let p = usize::from(self.roce_prio);
        Some((c.pfc[p], c.ecn[p]))
    }
}
