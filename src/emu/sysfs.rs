//! The sysfs files of an emulated node that the configuration audit reads
//! with `grep -H . FILE…`, and grep's answer over them. Files:
//!
//! - `/sys/class/infiniband/D/{hca_type,board_id,fw_ver}`: a ConnectX-7
//!   (`MT4129`), its PSID and firmware as `ethtool -i` prints them (so a
//!   `firmware` defect shows in both);
//! - `/sys/class/infiniband/D/ports/P/{gids,gid_attrs/types,gid_attrs/ndevs}/G`
//!   for the NIC's RDMA port: the RoCE GID table mlx5 builds for a netdev
//!   with one IPv4 address, 0 and 1 the link-local GID as RoCE v1 and v2,
//!   2 and 3 the IPv4-mapped GID as v1 and v2;
//! - `/sys/class/net/N/ecn/roce_{np,rp}/enable/0..7` and
//!   `ecn/roce_np/cnp_{dscp,802p_prio}`: MLNX_OFED's DCQCN knobs (the pod
//!   runs DOCA-OFED, which has them), on for every priority when the
//!   profile's `dcqcn` is on.
//!
//! Simplification: a real mlx5 RoCE GID table has a file for each of its
//! entries (hundreds), the unused ones reading as a zero GID whose type and
//! netdev fail with `Invalid argument`; here an index past 3 has no file.

use std::fmt::Write as _;

use crate::config::model::{Inventory, NicId, NodeId};

use super::fabric::Fabric;
use super::host_out::firmware_and_psid;
use super::world::World;

/// `hca_type` of a ConnectX-7 (PCI device 0x1021).
const HCA_TYPE: &str = "MT4129";

/// The files of one node.
pub struct NodeFs<'a> {
    pub inv: &'a Inventory,
    pub fabric: &'a Fabric,
    pub world: &'a World,
    pub node: NodeId,
}

fn group(hi: u8, lo: u8) -> String {
    format!("{hi:02x}{lo:02x}")
}

impl NodeFs<'_> {
    fn nic_by(&self, f: impl Fn(NicId) -> bool) -> Option<NicId> {
        self.inv.nodes[self.node]
            .nics
            .iter()
            .copied()
            .find(|&n| f(n))
    }

    /// GID `index` of NIC `n` as sysfs prints it (`%pI6`, every group in
    /// full), and its type.
    fn gid(&self, n: NicId, index: u32) -> Option<(String, &'static str)> {
        let kind = if index % 2 == 0 {
            "IB/RoCE v1"
        } else {
            "RoCE v2"
        };
        let groups: Vec<String> = match index {
            // fe80::/64 with the modified EUI-64 of the port's MAC.
            0 | 1 => {
                let m = self.world.nic_cfg[n].mac;
                ["fe80".into(), "0000".into(), "0000".into(), "0000".into()]
                    .into_iter()
                    .chain([
                        group(m[0] ^ 0x02, m[1]),
                        group(m[2], 0xff),
                        group(0xfe, m[3]),
                        group(m[4], m[5]),
                    ])
                    .collect()
            }
            // ::ffff:a.b.c.d. The model always has the NIC's IPv4 address:
            // the inventory's, or the 10.<rail>.x.y the fabric derives,
            // which perftest's GID lines print too.
            2 | 3 => {
                let ip = self.fabric.nic_ip(n).octets();
                ["0000", "0000", "0000", "0000", "0000", "ffff"]
                    .into_iter()
                    .map(String::from)
                    .chain([group(ip[0], ip[1]), group(ip[2], ip[3])])
                    .collect()
            }
            _ => return None,
        };
        Some((groups.join(":"), kind))
    }

    /// The content of `path`, `None` where the node has no such file.
    pub fn read(&self, path: &str) -> Option<String> {
        if let Some(rest) = path.strip_prefix("/sys/class/infiniband/") {
            let (dev, file) = rest.split_once('/')?;
            let n = self.nic_by(|n| self.inv.nics[n].device == dev)?;
            let cfg = &self.world.nic_cfg[n];
            let (fw, psid) = firmware_and_psid(cfg);
            return match file {
                "hca_type" => Some(HCA_TYPE.into()),
                "board_id" => Some(psid.into()),
                "fw_ver" => Some(fw.into()),
                _ => {
                    let port = format!("ports/{}/", self.inv.nics[n].port);
                    let (dir, index) = file.strip_prefix(&port)?.rsplit_once('/')?;
                    // sysfs names the files in decimal, without padding.
                    if index.starts_with('0') && index != "0" {
                        return None;
                    }
                    let (gid, kind) = self.gid(n, index.parse().ok()?)?;
                    match dir {
                        "gids" => Some(gid),
                        "gid_attrs/types" => Some(kind.into()),
                        "gid_attrs/ndevs" => Some(cfg.netdev.clone()),
                        _ => None,
                    }
                }
            };
        }
        let rest = path.strip_prefix("/sys/class/net/")?;
        let (netdev, file) = rest.split_once('/')?;
        self.nic_by(|n| self.inv.nics[n].netdev == netdev)?;
        let roce = &self.inv.fabric.roce;
        match file {
            "ecn/roce_np/cnp_dscp" => Some(roce.dscp_cnp.to_string()),
            "ecn/roce_np/cnp_802p_prio" => Some(roce.cnp_priority.to_string()),
            _ => {
                let (dir, prio) = file.rsplit_once('/')?;
                if !matches!(dir, "ecn/roce_np/enable" | "ecn/roce_rp/enable") {
                    return None;
                }
                match prio {
                    "0" | "1" | "2" | "3" | "4" | "5" | "6" | "7" => {
                        Some(u8::from(roce.dcqcn).to_string())
                    }
                    _ => None,
                }
            }
        }
    }
}

/// What `grep -H . FILE…` prints: `FILE:LINE` for every non-empty line of
/// each file, in order; a missing file costs a message on stderr. GNU grep
/// exits 2 when any file failed (even if others matched), else 0 when
/// something matched, else 1.
pub fn grep_h(files: &[String], read: impl Fn(&str) -> Option<String>) -> (String, String, i32) {
    let (mut out, mut err) = (String::new(), String::new());
    let (mut matched, mut failed) = (false, false);
    for f in files {
        match read(f) {
            Some(text) => {
                for l in text.lines().filter(|l| !l.is_empty()) {
                    let _ = writeln!(out, "{f}:{l}");
                    matched = true;
                }
            }
            None => {
                let _ = writeln!(err, "grep: {f}: No such file or directory");
                failed = true;
            }
        }
    }
    let exit = if failed {
        2
    } else if matched {
        0
    } else {
        1
    };
    (out, err, exit)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::inventory::Defect;
    use crate::emu::testutil::pod;

    fn files(defects: &[Defect], ask: &[&str]) -> (String, String, i32) {
        let inv = pod(4096, defects);
        let fabric = Fabric::new(&inv, 1);
        let world = World::new(&inv, &fabric);
        let fs = NodeFs {
            inv: &inv,
            fabric: &fabric,
            world: &world,
            node: 2,
        };
        let ask: Vec<String> = ask.iter().map(|s| s.to_string()).collect();
        grep_h(&ask, |p| fs.read(p))
    }

    const IB: &str = "/sys/class/infiniband/mlx5_2";

    #[test]
    fn model_and_board_read_back_as_path_value() {
        let (out, err, exit) = files(&[], &[&format!("{IB}/hca_type"), &format!("{IB}/board_id")]);
        assert_eq!(
            out,
            format!("{IB}/hca_type:MT4129\n{IB}/board_id:MT_0000000834\n")
        );
        assert_eq!((err.as_str(), exit), ("", 0));

        // A firmware defect naming another board shows in board_id and fw_ver.
        let d = Defect::Firmware {
            node: "gpu003".into(),
            version: "22.41.1000 (MT_0000000359)".into(),
        };
        let (out, _, _) = files(&[d], &[&format!("{IB}/board_id"), &format!("{IB}/fw_ver")]);
        assert_eq!(
            out,
            format!("{IB}/board_id:MT_0000000359\n{IB}/fw_ver:22.41.1000\n")
        );
    }

    #[test]
    fn gid_table_has_the_mlx5_layout() {
        let at = |g: u32| {
            [
                format!("{IB}/ports/1/gid_attrs/types/{g}"),
                format!("{IB}/ports/1/gids/{g}"),
                format!("{IB}/ports/1/gid_attrs/ndevs/{g}"),
            ]
        };
        let ask = at(3);
        let ask: Vec<&str> = ask.iter().map(String::as_str).collect();
        let (out, err, exit) = files(&[], &ask);
        assert_eq!((err.as_str(), exit), ("", 0));
        // gpu003's rail-2 NIC: 10.2.0.3 (the fabric's derived address).
        assert_eq!(
            out,
            format!(
                "{IB}/ports/1/gid_attrs/types/3:RoCE v2\n\
                 {IB}/ports/1/gids/3:0000:0000:0000:0000:0000:ffff:0a02:0003\n\
                 {IB}/ports/1/gid_attrs/ndevs/3:rdma2\n"
            )
        );
        let v1 = at(2);
        let (out, _, _) = files(&[], &[&v1[0]]);
        assert!(out.ends_with(":IB/RoCE v1\n"), "{out}");
        let ll = at(1);
        let (out, _, _) = files(&[], &[&ll[0], &ll[1]]);
        assert!(out.contains("/types/1:RoCE v2\n"), "{out}");
        assert!(
            out.contains("/gids/1:fe80:0000:0000:0000:004e:00ff:fe00:"),
            "{out}"
        );

        // Past the table, or on a port the NIC does not have: no file, exit 2,
        // and what exists still prints.
        let past = at(4);
        let (out, err, exit) = files(&[], &[&past[0], &ll[0]]);
        assert_eq!(exit, 2);
        assert_eq!(
            err,
            format!("grep: {IB}/ports/1/gid_attrs/types/4: No such file or directory\n")
        );
        assert!(out.ends_with("/types/1:RoCE v2\n"));
        let (_, err, exit) = files(&[], &[&format!("{IB}/ports/2/gids/3")]);
        assert_eq!(exit, 2, "{err}");
        let (_, _, exit) = files(&[], &["/sys/class/infiniband/mlx5_9/hca_type"]);
        assert_eq!(exit, 2);
    }

    #[test]
    fn dcqcn_knobs_follow_the_profile() {
        let ask = [
            "/sys/class/net/rdma2/ecn/roce_np/enable/3",
            "/sys/class/net/rdma2/ecn/roce_rp/enable/3",
        ];
        let (out, _, exit) = files(&[], &ask);
        assert_eq!(
            out,
            "/sys/class/net/rdma2/ecn/roce_np/enable/3:1\n/sys/class/net/rdma2/ecn/roce_rp/enable/3:1\n"
        );
        assert_eq!(exit, 0);
        let (_, err, exit) = files(&[], &["/sys/class/net/rdma2/ecn/roce_np/enable/8"]);
        assert_eq!(exit, 2, "{err}");
        let (_, _, exit) = files(&[], &["/sys/class/net/rdma9/ecn/roce_np/enable/3"]);
        assert_eq!(exit, 2);
    }
}
