//! The validated inventory: every name resolved to an index, every link to
//! its two ends. Later stages use these indices and never re-check names.

use std::collections::HashMap;

use super::inventory::{
    Credentials, Defect, Environment, FabricSpec, GidIndex, SwitchDriver, SwitchRole, TransportSpec,
};

pub type NodeId = usize;
pub type NicId = usize;
pub type SwitchId = usize;
pub type LinkId = usize;

#[derive(Debug, Clone)]
pub struct SourceFile {
    pub path: String,
    pub sha256: String,
}

#[derive(Debug, Clone)]
pub struct Inventory {
    pub source: SourceFile,
    pub fabric: FabricSpec,
    pub transport: TransportSpec,
    pub nodes: Vec<Node>,
    pub nics: Vec<Nic>,
    pub switches: Vec<Switch>,
    pub links: Vec<Link>,
    pub defects: Vec<Defect>,
    pub node_by_name: HashMap<String, NodeId>,
    pub switch_by_name: HashMap<String, SwitchId>,
}

#[derive(Debug, Clone)]
pub struct Node {
    pub name: String,
    pub address: String,
    pub nics: Vec<NicId>,
}

#[derive(Debug, Clone)]
pub struct Nic {
    pub node: NodeId,
    pub device: String,
    pub netdev: String,
    pub port: u8,
    pub gid_index: GidIndex,
    pub numa: Option<u32>,
    pub gpu: Option<u32>,
    pub rail: u32,
    pub speed_gbps: u32,
    pub address: Option<String>,
    /// The cable from this NIC to its leaf, if the inventory has one.
    pub uplink: Option<LinkId>,
}

#[derive(Debug, Clone)]
pub struct Switch {
    pub name: String,
    pub role: SwitchRole,
    pub driver: SwitchDriver,
    pub address: String,
    pub credentials: Option<Credentials>,
    pub api: Option<crate::config::inventory::ApiSpec>,
    pub rail: Option<u32>,
    /// Links with an end on this switch.
    pub links: Vec<LinkId>,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum End {
    Nic(NicId),
    Port { switch: SwitchId, port: String },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkKind {
    /// A host NIC to a leaf port.
    Host,
    /// A leaf port to a spine port.
    Fabric,
    /// Anything else (switch to switch of the same role, host to spine).
    Other,
}

#[derive(Debug, Clone)]
pub struct Link {
    pub a: End,
    pub b: End,
    pub speed_gbps: u32,
    pub kind: LinkKind,
}

impl Inventory {
    pub fn nic_name(&self, nic: NicId) -> String {
        let n = &self.nics[nic];
        format!("{}:{}", self.nodes[n.node].name, n.device)
    }

    pub fn end_name(&self, end: &End) -> String {
        match end {
            End::Nic(n) => self.nic_name(*n),
            End::Port { switch, port } => format!("{}:{}", self.switches[*switch].name, port),
        }
    }

    pub fn link_name(&self, link: LinkId) -> String {
        let l = &self.links[link];
        format!("{} <-> {}", self.end_name(&l.a), self.end_name(&l.b))
    }

    /// The ports of a switch the inventory cables, by name, in link order.
    pub fn switch_ports(&self, s: SwitchId) -> Vec<String> {
        self.switches[s]
            .links
            .iter()
            .flat_map(|&l| [&self.links[l].a, &self.links[l].b])
            .filter_map(|e| match e {
                End::Port { switch, port } if *switch == s => Some(port.clone()),
                _ => None,
            })
            .collect()
    }

    /// The leaf (and port) a NIC is cabled to, by the inventory.
    pub fn nic_leaf(&self, nic: NicId) -> Option<(SwitchId, &str)> {
        let link = &self.links[self.nics[nic].uplink?];
        match (&link.a, &link.b) {
            (End::Port { switch, port }, _) | (_, End::Port { switch, port }) => {
                Some((*switch, port.as_str()))
            }
            _ => None,
        }
    }

    /// Leaf–spine links of a leaf, with the spine at the other end.
    pub fn uplinks(&self, leaf: SwitchId) -> impl Iterator<Item = (LinkId, SwitchId)> + '_ {
        self.switches[leaf].links.iter().filter_map(move |&l| {
            let link = &self.links[l];
            if link.kind != LinkKind::Fabric {
                return None;
            }
            let other = match (&link.a, &link.b) {
                (End::Port { switch: s, .. }, End::Port { switch: o, .. }) if *s == leaf => *o,
                (End::Port { switch: o, .. }, End::Port { switch: s, .. }) if *s == leaf => *o,
                _ => return None,
            };
            Some((l, other))
        })
    }

    pub fn is_production(&self) -> bool {
        self.fabric.environment == Environment::Production
    }

    /// Resolves `node:device` or `switch:port` to an end, if it exists.
    pub fn resolve_end(&self, text: &str) -> Option<End> {
        let (left, right) = text.split_once(':')?;
        if let Some(&node) = self.node_by_name.get(left) {
            return self.nodes[node]
                .nics
                .iter()
                .find(|&&n| self.nics[n].device == right)
                .map(|&n| End::Nic(n));
        }
        let &switch = self.switch_by_name.get(left)?;
        Some(End::Port {
            switch,
            port: right.to_string(),
        })
    }

    /// The link with `end` on one side.
    pub fn link_at(&self, end: &End) -> Option<LinkId> {
        match end {
            End::Nic(n) => self.nics[*n].uplink,
            End::Port { switch, .. } => self.switches[*switch]
                .links
                .iter()
                .copied()
                .find(|&l| &self.links[l].a == end || &self.links[l].b == end),
        }
    }
}
