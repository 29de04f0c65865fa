//! Preflight: one round trip per host before anything runs. A single `sh`
//! script reports the host name, its clock, which tools are installed and
//! their versions, the RDMA devices with their ports and RoCE GID tables,
//! and the state of the inventory's netdevs. From that rocegate knows, before
//! the first perftest, which hosts cannot be reached (their steps then fail
//! at once instead of each waiting for a connect timeout), what is missing
//! where, how far each clock is off, and the GID index of every NIC whose
//! inventory says `gid_index: discover`.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use crate::config::check_suite::{Suite, TestKind};
use crate::config::inventory::GidIndex;
use crate::config::model::Inventory;
use crate::counters::host::GidEntry;
use crate::exec::{
    Cancel, ExecFailure, Invocation, InvocationOutput, Role, StepCommands, Transport,
};
use crate::plan::Plan;

/// Tools whose presence a node reports, whether or not the suite needs them.
const NODE_TOOLS: [&str; 14] = [
    "ib_write_bw",
    "ib_read_bw",
    "ib_send_bw",
    "ib_write_lat",
    "ib_read_lat",
    "ib_send_lat",
    "iperf3",
    "ethtool",
    "ip",
    "rdma",
    "mlnx_qos",
    "lldpctl",
    "numactl",
    "all_reduce_perf",
];
/// [`NODE_TOOLS`], as a [`Target`] holds them.
pub fn node_tools() -> Vec<String> {
    NODE_TOOLS.iter().map(|t| t.to_string()).collect()
}

/// A clock further off than this (beyond the measurement's own uncertainty)
/// makes counter and log timestamps across hosts misleading.
pub const MAX_SKEW_S: f64 = 1.0;
/// How long one host's preflight may take, connection included.
const TIMEOUT: Duration = Duration::from_secs(30);

/// The RDMA part of the script, shared with `inventory discover`: each
/// device with its firmware, each port with its link layer and state, and
/// the GID table entries that are in use. Unused entries fail to read and
/// are skipped. `$R` is a root prefix: empty on a host, a fake sysfs tree
/// in tests.
pub(crate) const RDMA_SYSFS: &str = r#"for d in "$R"/sys/class/infiniband/*; do
  [ -e "$d" ] || continue
  n=${d##*/}
  echo "@@rdma $n $(cat "$d/fw_ver" 2>/dev/null || echo -)"
  for p in "$d"/ports/*; do
    [ -e "$p" ] || continue
    echo "@@port $n ${p##*/} $(cat "$p/link_layer" 2>/dev/null || echo -) $(cat "$p/state" 2>/dev/null)"
    for t in "$p"/gid_attrs/types/*; do
      ty=$(cat "$t" 2>/dev/null) || continue
      i=${t##*/}
      g=$(cat "$p/gids/$i" 2>/dev/null) || continue
      nd=$(cat "$p/gid_attrs/ndevs/$i" 2>/dev/null) || nd=-
      echo "@@gid $n ${p##*/} $i $g $nd $ty"
    done
  done
done
"#;

/// The script. `$@` is the tools to look for, then `--`, then netdevs.
/// Every line it prints starts with `@@` and a key; values never contain
/// newlines. `@@RDMA@@` stands for [`RDMA_SYSFS`].
const SCRIPT: &str = r#"
R=
echo "@@host $(hostname)"
echo "@@kernel $(uname -r)"
while [ $# -gt 0 ] && [ "$1" != -- ]; do
  p=$(command -v "$1" 2>/dev/null) || p=-
  echo "@@tool $1 $p"
  shift
done
[ $# -gt 0 ] && shift
command -v ib_write_bw >/dev/null 2>&1 && echo "@@version perftest $(ib_write_bw --version 2>&1 | head -n 1)"
command -v iperf3 >/dev/null 2>&1 && echo "@@version iperf3 $(iperf3 --version 2>&1 | head -n 1)"
command -v ethtool >/dev/null 2>&1 && echo "@@version ethtool $(ethtool --version 2>&1 | head -n 1)"
command -v ofed_info >/dev/null 2>&1 && echo "@@version ofed $(ofed_info -s 2>&1 | head -n 1)"
command -v mpirun >/dev/null 2>&1 && echo "@@version mpirun $(mpirun --version 2>&1 | head -n 1)"
@@RDMA@@
for nd in "$@"; do
  s=/sys/class/net/$nd
  if [ -e "$s" ]; then
    echo "@@netdev $nd $(cat "$s/operstate" 2>/dev/null || echo -) $(cat "$s/speed" 2>/dev/null || echo -) $(cat "$s/mtu" 2>/dev/null || echo -)"
  else
    echo "@@netdev $nd absent - -"
  fi
done
echo "@@clock $(date +%s.%N)"
"#;

/// What to ask one host.
#[derive(Debug, Clone, PartialEq)]
pub struct Target {
    pub host: String,
    pub switch: bool,
    /// Tools the suite needs on this host.
    pub required: BTreeSet<String>,
    /// Tools whose presence the host reports whether or not the suite needs
    /// them: [`node_tools`] on a node, its platform's on a switch.
    pub looks_for: Vec<String>,
    /// RDMA devices the inventory puts on this host (nodes only).
    pub devices: Vec<String>,
    pub netdevs: Vec<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RdmaDevice {
    pub name: String,
    pub firmware: String,
    /// `(port, link layer, state)`, e.g. `(1, "Ethernet", "4: ACTIVE")`.
    pub ports: Vec<(u8, String, String)>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Netdev {
    pub name: String,
    /// `up`, `down`, …; `absent` when the host has no such interface.
    pub state: String,
    pub speed_mbps: Option<i64>,
    pub mtu: Option<u32>,
}

/// One host's answer, as recorded in results.jsonl.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HostReport {
    pub host: String,
    pub switch: bool,
    pub reachable: bool,
    /// Why the host could not answer (unreachable, key refused, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub hostname: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub kernel: String,
    /// Tool → path, or `None` when not installed.
    #[serde(default)]
    pub tools: BTreeMap<String, Option<String>>,
    #[serde(default)]
    pub versions: BTreeMap<String, String>,
    #[serde(default)]
    pub rdma: Vec<RdmaDevice>,
    /// The RoCE GID tables, as `show_gids` would list them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gids: Vec<GidEntry>,
    #[serde(default)]
    pub netdevs: Vec<Netdev>,
    /// Host clock minus controller clock, from the midpoint of the round trip.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock_skew_s: Option<f64>,
    /// Half the round trip: the skew is known to within this.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skew_uncertainty_s: Option<f64>,
    pub round_trip_s: f64,
    /// What is wrong, one sentence each; empty when the host is ready.
    #[serde(default)]
    pub problems: Vec<String>,
}

/// The hosts a plan touches: every node of every step, and the switches
/// rocegate drives over SSH. Each with the tools the suite needs there.
pub fn targets(inv: &Inventory, suite: &Suite, plan: &Plan) -> Vec<Target> {
    let mut nodes: BTreeMap<usize, BTreeSet<String>> = BTreeMap::new();
    let mut faulted: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for tp in &plan.tests {
        let test = &suite.tests[tp.test];
        let needs: Vec<String> = match &test.kind {
            TestKind::Perftest(p) => vec![p.tool.binary().to_string()],
            TestKind::Nccl(n) => vec![n.tool.binary().to_string()],
            TestKind::Iperf(_) => vec!["iperf3".to_string()],
            TestKind::Fault(f) => {
                // The device the fault changes needs its driver's commands.
                if let Ok(t) = crate::fault::target(inv, f) {
                    faulted
                        .entry(t.host.clone())
                        .or_default()
                        .extend(t.driver().needs(&t.action).iter().map(|s| s.to_string()));
                    if let Some(&n) = inv.node_by_name.get(&t.host) {
                        nodes.entry(n).or_default();
                    }
                }
                Vec::new()
            }
            // The audit says itself which of its tools a host lacks (a
            // check it cannot answer is `not available`, never an error).
            TestKind::Audit(_) => {
                for &n in &tp.nodes {
                    nodes.entry(n).or_default();
                }
                Vec::new()
            }
        };
        for step in tp.rounds.iter().flatten() {
            for nic in step.nics(inv) {
                nodes
                    .entry(inv.nics[nic].node)
                    .or_default()
                    .extend(needs.iter().cloned());
            }
        }
    }
    let mut out: Vec<Target> = nodes
        .into_iter()
        .map(|(n, required)| {
            let node = &inv.nodes[n];
            Target {
                host: node.name.clone(),
                switch: false,
                required,
                looks_for: node_tools(),
                devices: node
                    .nics
                    .iter()
                    .map(|&c| inv.nics[c].device.clone())
                    .collect(),
                netdevs: node
                    .nics
                    .iter()
                    .map(|&c| inv.nics[c].netdev.clone())
                    .collect(),
            }
        })
        .collect();
    // Switches reached by command lines answer the same script, looking for
    // their platform's tools; an HTTPS platform is asked through its API.
    for s in &inv.switches {
        let p = crate::switch::platform(s.driver);
        if !p.reached_by_argv() {
            continue;
        }
        out.push(Target {
            host: s.name.clone(),
            switch: true,
            required: BTreeSet::new(),
            looks_for: p.tools().iter().map(|t| t.to_string()).collect(),
            devices: Vec::new(),
            netdevs: Vec::new(),
        });
    }
    for t in &mut out {
        if let Some(needs) = faulted.remove(&t.host) {
            t.required.extend(needs);
        }
    }
    out
}

/// The one command that asks a host everything.
pub fn invocation(t: &Target) -> Invocation {
    let mut names: BTreeSet<String> = t.looks_for.iter().cloned().collect();
    names.extend(t.required.iter().cloned());
    let mut argv: Vec<String> = vec![
        "sh".into(),
        "-c".into(),
        SCRIPT.trim().replace("@@RDMA@@\n", RDMA_SYSFS),
        "rocegate-preflight".into(),
    ];
    argv.extend(names);
    argv.push("--".into());
    argv.extend(t.netdevs.iter().cloned());
    Invocation {
        host: t.host.clone(),
        argv,
        env: Vec::new(),
        role: Role::Probe,
        timeout: TIMEOUT,
        at: Duration::ZERO,
    }
}

/// Reads the script's output. `sent`/`received` are the controller's wall
/// clock (seconds since the epoch) around the round trip.
pub fn parse(t: &Target, out: &InvocationOutput, sent: f64, received: f64) -> HostReport {
    let mut r = HostReport {
        host: t.host.clone(),
        switch: t.switch,
        round_trip_s: (received - sent).max(0.0),
        ..Default::default()
    };
    if let Some(f) = &out.failure {
        r.error = Some(failure_text(f));
        r.problems.push(r.error.clone().unwrap_or_default());
        return r;
    }
    for line in out.stdout.lines() {
        let Some(rest) = line.strip_prefix("@@") else {
            continue;
        };
        let (key, value) = rest.split_once(' ').unwrap_or((rest, ""));
        let f: Vec<&str> = value.split_whitespace().collect();
        match key {
            "host" => r.hostname = value.trim().to_string(),
            "kernel" => r.kernel = value.trim().to_string(),
            "tool" if !f.is_empty() => {
                let path = f.get(1).filter(|p| **p != "-").map(|p| p.to_string());
                r.tools.insert(f[0].to_string(), path);
            }
            "version" if !f.is_empty() => {
                let v = value[f[0].len()..].trim().to_string();
                r.versions.insert(f[0].to_string(), v);
            }
            "rdma" if !f.is_empty() => r.rdma.push(RdmaDevice {
                name: f[0].to_string(),
                firmware: f.get(1).unwrap_or(&"-").to_string(),
                ports: Vec::new(),
            }),
            "port" if f.len() >= 3 => {
                if let (Some(d), Ok(p)) = (
                    r.rdma.iter_mut().find(|d| d.name == f[0]),
                    f[1].parse::<u8>(),
                ) {
                    d.ports.push((p, f[2].to_string(), f[3..].join(" ")));
                }
            }
            "gid" if f.len() >= 6 => {
                if let (Ok(port), Ok(index)) = (f[1].parse::<u8>(), f[2].parse::<u32>()) {
                    let ty = f[5..].join(" ");
                    r.gids.push(GidEntry {
                        device: f[0].to_string(),
                        port,
                        index,
                        gid: f[3].to_string(),
                        ipv4: ipv4_of(f[3]),
                        version: if ty.contains("v2") { "v2" } else { "v1" }.to_string(),
                        netdev: f[4].to_string(),
                    });
                }
            }
            "netdev" if !f.is_empty() => r.netdevs.push(Netdev {
                name: f[0].to_string(),
                state: f.get(1).unwrap_or(&"-").to_string(),
                speed_mbps: f.get(2).and_then(|s| s.parse().ok()),
                mtu: f.get(3).and_then(|s| s.parse().ok()),
            }),
            "clock" => {
                if let Ok(remote) = value.trim().parse::<f64>() {
                    r.clock_skew_s = Some(remote - (sent + received) / 2.0);
                    r.skew_uncertainty_s = Some(r.round_trip_s / 2.0);
                }
            }
            _ => {}
        }
    }
    if r.hostname.is_empty() {
        let why = if out.stderr.trim().is_empty() {
            format!("{} and printed nothing", crate::exec::exit_text(out.exit))
        } else {
            crate::workload::text::excerpt(out.stderr.trim(), 200)
        };
        r.problems
            .push(format!("the preflight script did not run: {why}"));
        r.error = r.problems.first().cloned();
        return r;
    }
    r.reachable = true;
    judge(t, &mut r);
    r
}

pub(crate) fn failure_text(f: &ExecFailure) -> String {
    match f {
        ExecFailure::Unreachable(m) => format!("unreachable: {m}"),
        ExecFailure::AuthRefused(m) => format!("authentication refused: {m}"),
        ExecFailure::MissingBinary(m) => format!("cannot run the preflight: {m}"),
        ExecFailure::TimedOut(m) => format!("no answer: {m}"),
        ExecFailure::Cancelled(m) => format!("interrupted: {m}"),
        ExecFailure::Transport(m) => m.clone(),
    }
}

/// The IPv4 address of an IPv4-mapped GID as sysfs prints it
/// (`0000:0000:0000:0000:0000:ffff:c0a8:0101` → `192.168.1.1`).
fn ipv4_of(gid: &str) -> Option<String> {
    let words: Vec<&str> = gid.split(':').collect();
    if words.len() != 8
        || words[..5]
            .iter()
            .any(|w| u16::from_str_radix(w, 16) != Ok(0))
        || !words[5].eq_ignore_ascii_case("ffff")
    {
        return None;
    }
    let hi = u16::from_str_radix(words[6], 16).ok()?;
    let lo = u16::from_str_radix(words[7], 16).ok()?;
    Some(format!(
        "{}.{}.{}.{}",
        hi >> 8,
        hi & 0xff,
        lo >> 8,
        lo & 0xff
    ))
}

fn judge(t: &Target, r: &mut HostReport) {
    let missing: Vec<&String> = t
        .required
        .iter()
        .filter(|tool| r.tools.get(*tool).is_none_or(Option::is_none))
        .collect();
    if !missing.is_empty() {
        let names: Vec<&str> = missing.iter().map(|s| s.as_str()).collect();
        r.problems
            .push(format!("not installed: {}", names.join(", ")));
    }
    let needs_rdma = t.required.iter().any(|tool| tool != "iperf3");
    if !t.switch && needs_rdma {
        if r.rdma.is_empty() {
            r.problems.push(
                "no RDMA device: /sys/class/infiniband is empty or absent (driver not loaded?)"
                    .into(),
            );
        } else {
            let absent: Vec<&str> = t
                .devices
                .iter()
                .filter(|d| !r.rdma.iter().any(|x| &x.name == *d))
                .map(String::as_str)
                .collect();
            if !absent.is_empty() {
                let present: Vec<&str> = r.rdma.iter().map(|d| d.name.as_str()).collect();
                r.problems.push(format!(
                    "RDMA devices {} are not present (the host has {})",
                    absent.join(", "),
                    present.join(", ")
                ));
            }
        }
    }
    for n in &r.netdevs {
        if n.state == "absent" {
            r.problems
                .push(format!("netdev {} does not exist on this host", n.name));
        } else if n.state != "up" {
            r.problems.push(format!("netdev {} is {}", n.name, n.state));
        }
    }
    if let (Some(skew), Some(bound)) = (r.clock_skew_s, r.skew_uncertainty_s) {
        if skew.abs() - bound > MAX_SKEW_S {
            r.problems.push(format!(
                "clock is {skew:+.2}s off the controller's (±{bound:.2}s): timestamps across hosts will not line up; check chrony/NTP"
            ));
        }
    }
}

fn epoch_s() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// Asks every target at once, through the transport, and tells the
/// transport which hosts could not be reached so that later commands to
/// them fail at once.
pub async fn run(transport: &dyn Transport, targets: &[Target], cancel: Cancel) -> Vec<HostReport> {
    let batch: Vec<StepCommands> = targets
        .iter()
        .map(|t| StepCommands {
            invocations: vec![invocation(t)],
        })
        .collect();
    let epoch0 = epoch_s();
    let clock0 = transport.now_s();
    let outs = transport.run_batch(&batch, cancel).await;
    let at = |s: f64| epoch0 + (s - clock0);
    targets
        .iter()
        .zip(outs)
        .map(|(t, o)| {
            let o = o.into_iter().next().unwrap_or_default();
            let r = parse(t, &o, at(o.started_s), at(o.ended_s));
            if let Some(f @ (ExecFailure::Unreachable(_) | ExecFailure::AuthRefused(_))) =
                &o.failure
            {
                transport.set_unreachable(&t.host, f.clone());
            }
            r
        })
        .collect()
}

/// The GID index perftest and NCCL should use on a NIC's port: the lowest
/// RoCE v2 entry with an IPv4-mapped GID (on `netdev` when the table names
/// one). `None` when the port has no such entry (no address configured).
pub fn roce_v2_index(gids: &[GidEntry], device: &str, port: u8, netdev: &str) -> Option<u32> {
    gids.iter()
        .filter(|g| {
            g.device == device
                && g.port == port
                && g.version == "v2"
                && g.ipv4.is_some()
                && (g.netdev == "-" || g.netdev == netdev)
        })
        .map(|g| g.index)
        .min()
}

/// Replaces `gid_index: discover` with the index the host reported: the
/// lowest RoCE v2 entry with an IPv4-mapped GID on the NIC's port (on its
/// netdev when the table names one). NICs whose host did not answer, or has
/// no such entry, stay `discover` and their steps say why.
pub fn resolve_gids(inv: &mut Inventory, reports: &[HostReport]) -> Vec<String> {
    let mut notes = Vec::new();
    for nic in 0..inv.nics.len() {
        if inv.nics[nic].gid_index != GidIndex::Discover {
            continue;
        }
        let n = &inv.nics[nic];
        let host = &inv.nodes[n.node].name;
        let Some(r) = reports.iter().find(|r| &r.host == host && r.reachable) else {
            continue;
        };
        match roce_v2_index(&r.gids, &n.device, n.port, &n.netdev) {
            Some(i) => inv.nics[nic].gid_index = GidIndex::Fixed(i),
            None => notes.push(format!(
                "{}: no RoCE v2 GID with an IPv4 address on port {} (is an address configured on {}?)",
                inv.nic_name(nic),
                n.port,
                n.netdev
            )),
        }
    }
    notes
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target() -> Target {
        Target {
            host: "gpu001".into(),
            switch: false,
            required: ["ib_write_bw".to_string()].into_iter().collect(),
            looks_for: node_tools(),
            devices: vec!["mlx5_0".into(), "mlx5_1".into()],
            netdevs: vec!["ens1f0np0".into(), "ens2f0np0".into()],
        }
    }

    fn output(stdout: &str) -> InvocationOutput {
        InvocationOutput {
            stdout: stdout.into(),
            exit: Some(0),
            ..Default::default()
        }
    }

    #[test]
    fn a_faulted_device_must_have_its_drivers_commands() {
        let inv = crate::config::check::parse_inventory(
            "emulated.yaml",
            include_str!("../../inventory/emulated.yaml"),
        )
        .unwrap();
        let suite = crate::config::check_suite::parse_suite(
            "faults.yaml",
            include_str!("../../suites/faults.yaml"),
            &inv,
        )
        .unwrap();
        let plan = crate::plan::build(&suite, &inv, &Default::default(), 1).unwrap();
        let ts = targets(&inv, &suite, &plan);
        let req = |h: &str| ts.iter().find(|t| t.host == h).unwrap().required.clone();
        // routing_restart on r0-leaf2: FRR's shell, and the dead-man's tools.
        let leaf = req("r0-leaf2");
        assert!(
            ["ip", "setsid", "pkill", "vtysh"]
                .iter()
                .all(|t| leaf.contains(*t)),
            "{leaf:?}"
        );
        // A host flap on gpu003: its own ip, no vtysh.
        let node = req("gpu003");
        assert!(
            node.contains("pkill") && !node.contains("vtysh"),
            "{node:?}"
        );
        // Switches no fault touches need nothing extra.
        assert!(req("r1-leaf1").is_empty());
    }

    #[test]
    fn a_ready_host() {
        let text = "@@host gpu001\n@@kernel 6.1.0-18-amd64\n@@tool ib_write_bw /usr/bin/ib_write_bw\n@@tool iperf3 -\n\
@@version perftest Version: 6.06\n@@rdma mlx5_0 28.39.1002\n@@port mlx5_0 1 Ethernet 4: ACTIVE\n\
@@gid mlx5_0 1 0 fe80:0000:0000:0000:0ac0:ebff:fe11:2233 ens1f0np0 IB/RoCE v1\n\
@@gid mlx5_0 1 1 fe80:0000:0000:0000:0ac0:ebff:fe11:2233 ens1f0np0 RoCE v2\n\
@@gid mlx5_0 1 2 0000:0000:0000:0000:0000:ffff:c0a8:0a01 ens1f0np0 IB/RoCE v1\n\
@@gid mlx5_0 1 3 0000:0000:0000:0000:0000:ffff:c0a8:0a01 ens1f0np0 RoCE v2\n\
@@rdma mlx5_1 28.39.1002\n@@port mlx5_1 1 Ethernet 4: ACTIVE\n\
@@netdev ens1f0np0 up 400000 9000\n@@netdev ens2f0np0 up 400000 9000\n@@clock 1000.40\n";
        let r = parse(&target(), &output(text), 1000.0, 1000.6);
        assert!(r.reachable);
        assert_eq!(r.hostname, "gpu001");
        assert_eq!(r.problems, Vec::<String>::new());
        assert_eq!(r.tools["iperf3"], None);
        assert_eq!(r.versions["perftest"], "Version: 6.06");
        assert_eq!(
            r.rdma[0].ports,
            vec![(1, "Ethernet".into(), "4: ACTIVE".into())]
        );
        assert_eq!(r.gids.len(), 4);
        assert_eq!(r.gids[3].ipv4.as_deref(), Some("192.168.10.1"));
        assert_eq!(r.gids[1].version, "v2");
        assert_eq!(r.netdevs[0].speed_mbps, Some(400000));
        assert!((r.clock_skew_s.unwrap() - 0.1).abs() < 1e-9);
        assert!((r.skew_uncertainty_s.unwrap() - 0.3).abs() < 1e-9);
    }

    #[test]
    fn problems_are_named() {
        let text = "@@host lab1\n@@tool ib_write_bw -\n@@netdev ens1f0np0 down -1 1500\n@@netdev ens2f0np0 absent - -\n@@clock 1010\n";
        let r = parse(&target(), &output(text), 1000.0, 1000.2);
        assert!(r.reachable);
        let all = r.problems.join("\n");
        assert!(all.contains("not installed: ib_write_bw"), "{all}");
        assert!(all.contains("no RDMA device"), "{all}");
        assert!(all.contains("netdev ens1f0np0 is down"), "{all}");
        assert!(all.contains("netdev ens2f0np0 does not exist"), "{all}");
        assert!(all.contains("clock is +9.90s off"), "{all}");
    }

    #[test]
    fn unreachable_and_silent_hosts() {
        let out = InvocationOutput {
            exit: Some(255),
            failure: Some(ExecFailure::Unreachable(
                "gpu001: ssh: connect to host 10.0.0.1 port 22: No route to host".into(),
            )),
            ..Default::default()
        };
        let r = parse(&target(), &out, 0.0, 3.0);
        assert!(!r.reachable);
        assert!(r
            .error
            .as_deref()
            .unwrap()
            .starts_with("unreachable: gpu001: ssh"));
        let r = parse(
            &target(),
            &InvocationOutput {
                stderr: "sh: 1: Syntax error".into(),
                exit: Some(2),
                ..Default::default()
            },
            0.0,
            0.1,
        );
        assert!(!r.reachable);
        assert!(r.problems[0].contains("Syntax error"), "{:?}", r.problems);
    }

    #[test]
    fn ipv4_mapped_gids_only() {
        assert_eq!(
            ipv4_of("0000:0000:0000:0000:0000:ffff:0a00:0001").as_deref(),
            Some("10.0.0.1")
        );
        assert_eq!(ipv4_of("fe80:0000:0000:0000:0ac0:ebff:fe11:2233"), None);
        assert_eq!(ipv4_of("garbage"), None);
    }

    /// The script itself, run by the local shell: it must parse, print a
    /// host name and a clock, and say which tools are absent.
    #[test]
    fn the_script_runs_under_sh() {
        let t = Target {
            host: "localhost".into(),
            switch: false,
            required: ["rocegate-no-such-tool".to_string()].into_iter().collect(),
            looks_for: node_tools(),
            devices: Vec::new(),
            netdevs: vec!["lo".into(), "rocegate-none0".into()],
        };
        let inv = invocation(&t);
        let o = std::process::Command::new(&inv.argv[0])
            .args(&inv.argv[1..])
            .output()
            .expect("sh runs");
        let stdout = String::from_utf8_lossy(&o.stdout).to_string();
        assert!(
            o.status.success(),
            "{stdout}\n{}",
            String::from_utf8_lossy(&o.stderr)
        );
        let now = epoch_s();
        let r = parse(&t, &output(&stdout), now - 0.5, now + 0.5);
        assert!(r.reachable, "{stdout}");
        assert_eq!(r.tools["rocegate-no-such-tool"], None);
        assert!(r.tools["ip"].is_some() || r.tools.contains_key("ip"));
        assert!(r.clock_skew_s.unwrap().abs() < 1.0, "{stdout}");
        assert_eq!(r.netdevs[1].state, "absent");
        assert!(r
            .problems
            .iter()
            .any(|p| p.contains("rocegate-no-such-tool")));
    }
}
