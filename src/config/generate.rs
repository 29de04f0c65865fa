//! Writes a rail-optimised pod as inventory YAML: every node has one NIC per
//! rail, NIC r of each node goes to a leaf of rail r, every leaf has the same
//! number of uplinks to every spine. Links are written with bracket
//! expressions, so a 1,024-node pod stays a short file.

use super::inventory::*;

#[derive(Debug, Clone)]
pub struct PodShape {
    pub name: String,
    pub environment: Environment,
    pub nodes: u32,
    pub nodes_per_leaf: u32,
    pub rails: u32,
    pub spines: u32,
    /// Uplinks from each leaf to each spine; `None` picks the fewest that make
    /// the leaf non-blocking (uplink capacity ≥ host capacity).
    pub uplinks_per_spine: Option<u32>,
    pub speed_gbps: u32,
    pub node_prefix: String,
    pub mtu: u32,
    pub transport: TransportSpec,
}

impl Default for PodShape {
    fn default() -> Self {
        PodShape {
            name: "pod".into(),
            environment: Environment::Lab,
            nodes: 16,
            nodes_per_leaf: 8,
            rails: 8,
            spines: 4,
            uplinks_per_spine: None,
            speed_gbps: 400,
            node_prefix: "gpu".into(),
            mtu: 4096,
            transport: TransportSpec::Emulated,
        }
    }
}

fn width(n: u32) -> usize {
    n.to_string().len()
}

/// `prefix[first-last]` with zero padding of `w`.
fn range(prefix: &str, first: u32, last: u32, w: usize) -> String {
    if first == last {
        format!("{prefix}{first:0w$}")
    } else {
        format!("{prefix}[{first:0w$}-{last:0w$}]")
    }
}

pub fn generate(shape: &PodShape) -> Result<InventoryFile, String> {
    if shape.nodes == 0 || shape.rails == 0 || shape.spines == 0 || shape.nodes_per_leaf == 0 {
        return Err("nodes, rails, spines and nodes-per-leaf must all be at least 1".into());
    }
    if shape.nodes > 100_000 {
        return Err(format!(
            "{} nodes is beyond what one inventory should describe",
            shape.nodes
        ));
    }
    let leaves_per_rail = shape.nodes.div_ceil(shape.nodes_per_leaf);
    let uplinks = shape
        .uplinks_per_spine
        .unwrap_or_else(|| shape.nodes_per_leaf.div_ceil(shape.spines).max(1));
    if uplinks == 0 {
        return Err("uplinks-per-spine must be at least 1".into());
    }
    let nw = width(shape.nodes).max(3);
    let lw = width(leaves_per_rail);
    let sw = width(shape.spines);
    let p = &shape.node_prefix;
    let nics: Vec<NicSpec> = (0..shape.rails)
        .map(|r| NicSpec {
            device: format!("mlx5_{r}"),
            netdev: format!("rdma{r}"),
            port: None,
            gid_index: GidIndex::Fixed(3),
            numa: Some(if r < shape.rails / 2 { 0 } else { 1 }),
            gpu: Some(r),
            rail: r,
            speed_gbps: shape.speed_gbps,
            address: Some(format!("{{host}}-r{r}")),
        })
        .collect();
    let leaf_name = |rail: u32, k: u32| format!("r{rail}-leaf{k:0lw$}");
    let mut switches = Vec::new();
    for rail in 0..shape.rails {
        switches.push(SwitchGroup {
            name: range(&format!("r{rail}-leaf"), 1, leaves_per_rail, lw),
            role: SwitchRole::Leaf,
            driver: SwitchDriver::Linux,
            address: Some("{name}.mgmt".into()),
            credentials: None,
            api: None,
            rail: Some(rail),
        });
    }
    switches.push(SwitchGroup {
        name: range("spine", 1, shape.spines, sw),
        role: SwitchRole::Spine,
        driver: SwitchDriver::Linux,
        address: Some("{name}.mgmt".into()),
        credentials: None,
        api: None,
        rail: None,
    });
    let mut links = Vec::new();
    let host_ports = shape.nodes_per_leaf;
    for rail in 0..shape.rails {
        for k in 1..=leaves_per_rail {
            let first = (k - 1) * shape.nodes_per_leaf + 1;
            let last = (k * shape.nodes_per_leaf).min(shape.nodes);
            let n = last - first + 1;
            links.push(LinkSpec {
                a: format!("{}:mlx5_{rail}", range(p, first, last, nw)),
                b: format!("{}:{}", leaf_name(rail, k), range("swp", 1, n, 0)),
                speed_gbps: None,
            });
        }
    }
    // Spine s receives, from leaf L (numbered across rails), ports
    // L*uplinks+1 .. (L+1)*uplinks.
    for rail in 0..shape.rails {
        for k in 1..=leaves_per_rail {
            let leaf_index = rail * leaves_per_rail + (k - 1);
            for s in 1..=shape.spines {
                let up_first = host_ports + (s - 1) * uplinks + 1;
                let up_last = up_first + uplinks - 1;
                let sp_first = leaf_index * uplinks + 1;
                let sp_last = sp_first + uplinks - 1;
                links.push(LinkSpec {
                    a: format!(
                        "{}:{}",
                        leaf_name(rail, k),
                        range("swp", up_first, up_last, 0)
                    ),
                    b: format!("spine{s:0sw$}:{}", range("swp", sp_first, sp_last, 0)),
                    speed_gbps: Some(shape.speed_gbps),
                });
            }
        }
    }
    Ok(InventoryFile {
        fabric: FabricSpec {
            name: shape.name.clone(),
            environment: shape.environment,
            rails: shape.rails,
            roce: RoceProfile::nvidia_default(shape.mtu),
            versions: Versions {
                nic_firmware: Some("28.39.1002".into()),
                driver: Some("mlx5_core 24.10-1.1.4".into()),
                nos: None,
                nccl: Some("2.21.5".into()),
                perftest: Some("24.07.0".into()),
            },
            blast_radius: blast_radius(shape),
        },
        transport: shape.transport.clone(),
        nodes: vec![NodeGroup {
            hosts: range(p, 1, shape.nodes, nw),
            address: Some("{host}.mgmt".into()),
            nics,
        }],
        switches,
        links,
        emulation: None,
    })
}

/// The fault policy of a rail-optimised pod: a leaf reset isolates exactly
/// that leaf's NICs (one per node it serves), which is what the pod's own
/// acceptance must be able to test; nothing more. With one rail that
/// isolates whole nodes, and with one leaf per rail it takes the rail dark:
/// both follow from the design, so both are allowed only there.
fn blast_radius(shape: &PodShape) -> BlastRadius {
    let one_leaf = shape.nodes_per_leaf.min(shape.nodes);
    let d = BlastRadius::default();
    BlastRadius {
        max_isolated_nics: d.max_isolated_nics.max(one_leaf),
        max_isolated_nodes: if shape.rails == 1 {
            d.max_isolated_nodes.max(one_leaf)
        } else {
            d.max_isolated_nodes
        },
        allow_rail_dark: shape.nodes <= shape.nodes_per_leaf,
    }
}

/// The generated inventory as commented YAML.
pub fn to_yaml(shape: &PodShape, inv: &InventoryFile) -> Result<String, String> {
    let body = serde_yaml::to_string(inv).map_err(|e| e.to_string())?;
    let leaves = shape.nodes.div_ceil(shape.nodes_per_leaf) * shape.rails;
    Ok(format!(
        "# Rail-optimised pod written by `rocegate inventory generate`:\n\
         # {} nodes x {} rails x {}G, {} nodes per leaf, {} leaves, {} spines.\n\
         # fabric.blast_radius lets a fault isolate one leaf's NICs (what a leaf\n\
         # reset does here){}; tighten it if this pod must never lose that much.\n{body}",
        shape.nodes,
        shape.rails,
        shape.speed_gbps,
        shape.nodes_per_leaf,
        leaves,
        shape.spines,
        if shape.nodes <= shape.nodes_per_leaf {
            ", and a rail to go dark (one leaf per rail)"
        } else {
            ""
        }
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::check::parse_inventory;
    use crate::config::hostlist;
    use crate::config::model::LinkKind;

    #[test]
    fn generated_pod_validates_and_is_non_blocking() {
        let shape = PodShape::default();
        let raw = generate(&shape).unwrap();
        let yaml = to_yaml(&shape, &raw).unwrap();
        let inv = parse_inventory("gen.yaml", &yaml).unwrap_or_else(|e| panic!("{e}\n{yaml}"));
        assert_eq!(inv.nodes.len(), 16);
        assert_eq!(inv.nics.len(), 128);
        assert_eq!(inv.switches.len(), 16 + 4);
        let host = inv
            .links
            .iter()
            .filter(|l| l.kind == LinkKind::Host)
            .count();
        let fabric = inv
            .links
            .iter()
            .filter(|l| l.kind == LinkKind::Fabric)
            .count();
        assert_eq!(host, 128);
        // 16 leaves x 4 spines x 2 uplinks.
        assert_eq!(fabric, 128);
        for leaf in 0..16 {
            assert_eq!(
                inv.uplinks(leaf).count(),
                8,
                "leaf {}",
                inv.switches[leaf].name
            );
        }
        assert!(inv.nics.iter().all(|n| n.uplink.is_some()));
        let names: Vec<String> = inv.nodes.iter().map(|n| n.name.clone()).collect();
        assert_eq!(hostlist::compress(&names), "gpu[001-016]");
    }
}
