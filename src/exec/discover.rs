//! Discover: one composed command per host that reads what an inventory
//! says about a node's NICs. It runs the preflight's RDMA reading (devices,
//! ports, link layers, GID tables; [`crate::audit::preflight::RDMA_SYSFS`]) and
//! adds each device's PCI address, NUMA node, netdevs and port rates, every
//! netdev's state and speed, and the LLDP neighbours lldpd has heard
//! (`lldpcli -f json show neighbors`). What a NIC, rail or link should be
//! is decided elsewhere (`app::discover`); this module only reads.
//!
//! Everything a host prints is untrusted text: unknown lines are skipped,
//! values are checked before use, and nothing here panics on garbage.

use std::time::Duration;

use serde::Serialize;

use super::transport::{Cancel, Transport};
use super::types::{ExecFailure, Invocation, InvocationOutput, Role, StepCommands};
use crate::audit::preflight::{self, HostReport, Target, RDMA_SYSFS};
use crate::counters::host::{parse_lldpctl_json, LldpNeighbor};

/// How long one host's discovery may take, connection included.
const TIMEOUT: Duration = Duration::from_secs(30);

/// `$1` is a root prefix (empty on a host; a fake sysfs tree in tests, where
/// lldpd's answer would belong to the test machine, so LLDP is not asked).
/// The LLDP JSON sits between two marker lines: JSON escapes newlines
/// inside strings, so no advertised name can forge a marker.
const SCRIPT: &str = r#"R=$1
echo "@@host $(hostname)"
@@RDMA@@
for d in "$R"/sys/class/infiniband/*; do
  [ -e "$d" ] || continue
  n=${d##*/}
  [ -e "$d/device" ] && pci=$(readlink -f "$d/device" 2>/dev/null) && echo "@@pci $n ${pci##*/}"
  echo "@@numa $n $(cat "$d/device/numa_node" 2>/dev/null || echo -)"
  for nd in "$d"/device/net/*; do
    [ -e "$nd" ] && echo "@@ndev $n ${nd##*/}"
  done
  for p in "$d"/ports/*; do
    [ -e "$p" ] && echo "@@rate $n ${p##*/} $(cat "$p/rate" 2>/dev/null || echo -)"
  done
done
for s in "$R"/sys/class/net/*; do
  [ -e "$s" ] || continue
  nd=${s##*/}
  [ "$nd" = lo ] && continue
  echo "@@netdev $nd $(cat "$s/operstate" 2>/dev/null || echo -) $(cat "$s/speed" 2>/dev/null || echo -) $(cat "$s/mtu" 2>/dev/null || echo -)"
done
if [ -z "$R" ]; then
  if command -v lldpcli >/dev/null 2>&1; then
    out=$(lldpcli -f json show neighbors 2>&1); rc=$?
    echo "@@lldp-begin"
    printf '%s\n' "$out"
    echo "@@lldp-end $rc"
  else
    echo "@@lldp-absent"
  fi
fi
true"#;

/// One RDMA device as discover sees it.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Device {
    pub name: String,
    /// PCI address such as `0000:17:00.0`; `None` for a virtual device.
    pub pci: Option<String>,
    pub numa: Option<u32>,
    /// The netdevs of the device's PCI function (usually one).
    pub netdevs: Vec<String>,
    /// `(port, link layer, rate in Gb/s)`.
    pub ports: Vec<(u8, String, Option<u32>)>,
}

/// One host's answer.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Findings {
    pub host: String,
    /// Devices, netdevs, GID tables: the preflight's reading.
    pub report: HostReport,
    pub devices: Vec<Device>,
    pub lldp: Vec<LldpNeighbor>,
    /// Why no LLDP neighbours could be read (lldpd not installed or not
    /// running, output that is not lldpcli's JSON); `None` when read.
    pub lldp_error: Option<String>,
}

/// The one command that asks a host everything discover needs. `root` is
/// empty on real hosts.
pub fn invocation(host: &str, root: &str) -> Invocation {
    Invocation {
        host: host.to_string(),
        argv: vec![
            "sh".into(),
            "-c".into(),
            SCRIPT.replace("@@RDMA@@\n", RDMA_SYSFS),
            "rocegate-discover".into(),
            root.to_string(),
        ],
        env: Vec::new(),
        role: Role::Probe,
        timeout: TIMEOUT,
        at: Duration::ZERO,
    }
}

/// A PCI address as sysfs names it: `dddd:bb:dd.f` in hex.
fn is_pci(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 12
        && b.iter().enumerate().all(|(i, c)| match i {
            4 | 7 => *c == b':',
            10 => *c == b'.',
            _ => c.is_ascii_hexdigit(),
        })
}

/// The Gb/s of an RDMA port's `rate` file (`400 Gb/sec (4X NDR)`,
/// `2.5 Gb/sec (1X SDR)` rounds to 3).
fn rate_gbps(text: &str) -> Option<u32> {
    let mut w = text.split_whitespace();
    let n: f64 = w.next()?.parse().ok()?;
    (w.next()? == "Gb/sec" && n.is_finite() && n > 0.0 && n < 100_000.0).then(|| n.round() as u32)
}

/// Reads the script's output.
pub fn parse(host: &str, out: &InvocationOutput) -> Findings {
    let target = Target {
        host: host.to_string(),
        switch: false,
        required: Default::default(),
        looks_for: Vec::new(),
        devices: Vec::new(),
        netdevs: Vec::new(),
    };
    let report = preflight::parse(&target, out, 0.0, 0.0);
    let mut f = Findings {
        host: host.to_string(),
        report,
        ..Default::default()
    };
    if !f.report.reachable {
        return f;
    }
    f.devices = f
        .report
        .rdma
        .iter()
        .map(|d| Device {
            name: d.name.clone(),
            ports: d
                .ports
                .iter()
                .map(|(p, ll, _)| (*p, ll.clone(), None))
                .collect(),
            ..Default::default()
        })
        .collect();
    let mut lldp: Option<Vec<&str>> = None;
    let mut lldp_rc = None;
    for line in out.stdout.lines() {
        if let Some(buf) = lldp.as_mut() {
            if let Some(rc) = line.strip_prefix("@@lldp-end") {
                lldp_rc = Some(rc.trim().to_string());
                let text = buf.join("\n");
                let rc = rc.trim();
                f.lldp_error = if rc != "0" {
                    Some(format!(
                        "lldpcli failed (exit {rc}): {}",
                        crate::workload::text::excerpt(&text, 200)
                    ))
                } else {
                    match parse_lldpctl_json(&text) {
                        Ok(n) => {
                            f.lldp = n;
                            None
                        }
                        Err(e) => Some(e.to_string()),
                    }
                };
                lldp = None;
            } else {
                buf.push(line);
            }
            continue;
        }
        let Some(rest) = line.strip_prefix("@@") else {
            continue;
        };
        let (key, value) = rest.split_once(' ').unwrap_or((rest, ""));
        let w: Vec<&str> = value.split_whitespace().collect();
        let dev = |f: &mut Findings, name: &str| f.devices.iter().position(|d| d.name == name);
        match key {
            "lldp-begin" => lldp = Some(Vec::new()),
            "lldp-absent" => {
                f.lldp_error = Some("lldpcli is not installed (apt-get install lldpd)".into())
            }
            "pci" if w.len() == 2 && is_pci(w[1]) => {
                if let Some(i) = dev(&mut f, w[0]) {
                    f.devices[i].pci = Some(w[1].to_ascii_lowercase());
                }
            }
            "numa" if w.len() == 2 => {
                if let (Some(i), Ok(n)) = (dev(&mut f, w[0]), w[1].parse::<u32>()) {
                    f.devices[i].numa = Some(n);
                }
            }
            "ndev" if w.len() == 2 => {
                if let Some(i) = dev(&mut f, w[0]) {
                    f.devices[i].netdevs.push(w[1].to_string());
                }
            }
            "rate" if w.len() >= 2 => {
                if let (Some(i), Ok(p)) = (dev(&mut f, w[0]), w[1].parse::<u8>()) {
                    let rate = rate_gbps(&w[2..].join(" "));
                    if let Some(port) = f.devices[i].ports.iter_mut().find(|x| x.0 == p) {
                        port.2 = rate;
                    }
                }
            }
            _ => {}
        }
    }
    if lldp.is_some() && lldp_rc.is_none() {
        f.lldp_error = Some("the LLDP answer was cut short".into());
    }
    f
}

/// Asks every host at once, through the transport.
pub async fn run(transport: &dyn Transport, hosts: &[String], cancel: Cancel) -> Vec<Findings> {
    let batch: Vec<StepCommands> = hosts
        .iter()
        .map(|h| StepCommands {
            invocations: vec![invocation(h, "")],
        })
        .collect();
    let outs = transport.run_batch(&batch, cancel).await;
    hosts
        .iter()
        .zip(outs)
        .map(|(h, o)| {
            let o = o.into_iter().next().unwrap_or_else(|| InvocationOutput {
                failure: Some(ExecFailure::Transport("no output".into())),
                ..Default::default()
            });
            parse(h, &o)
        })
        .collect()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::path::Path;

    /// A fake sysfs tree shaped as a host with two ConnectX ports shows it
    /// (mlx5 with RoCE v2 GIDs, device links into /sys/devices, `rate`
    /// files), plus a management netdev with no RDMA.
    pub(crate) fn fake_root(dir: &Path) {
        let w = |p: &str, s: &str| {
            let p = dir.join(p.trim_start_matches('/'));
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, s).unwrap();
        };
        let nics = [
            ("mlx5_0", "0000:17:00.0", "ens1f0np0", "0", "c0a8:0a01"),
            ("mlx5_1", "0000:03:00.0", "ens2f0np0", "1", "c0a8:0b01"),
        ];
        for (dev, pci, nd, numa, v4) in nics {
            let pdev = format!("sys/devices/pci0000:00/{pci}");
            w(&format!("{pdev}/numa_node"), &format!("{numa}\n"));
            w(&format!("{pdev}/net/{nd}/operstate"), "up\n");
            let ib = format!("sys/class/infiniband/{dev}");
            std::fs::create_dir_all(dir.join(&ib)).unwrap();
            std::os::unix::fs::symlink(
                format!("../../../devices/pci0000:00/{pci}"),
                dir.join(&ib).join("device"),
            )
            .unwrap();
            w(&format!("{ib}/fw_ver"), "28.39.1002\n");
            let port = format!("{ib}/ports/1");
            w(&format!("{port}/link_layer"), "Ethernet\n");
            w(&format!("{port}/state"), "4: ACTIVE\n");
            w(&format!("{port}/rate"), "400 Gb/sec (4X NDR)\n");
            let gids = [
                ("0", "fe80:0000:0000:0000:0ac0:ebff:fe11:2233", "IB/RoCE v1"),
                ("1", "fe80:0000:0000:0000:0ac0:ebff:fe11:2233", "RoCE v2"),
                (
                    "2",
                    &format!("0000:0000:0000:0000:0000:ffff:{v4}"),
                    "IB/RoCE v1",
                ),
                (
                    "3",
                    &format!("0000:0000:0000:0000:0000:ffff:{v4}"),
                    "RoCE v2",
                ),
            ];
            for (i, g, ty) in gids {
                w(&format!("{port}/gids/{i}"), &format!("{g}\n"));
                w(&format!("{port}/gid_attrs/types/{i}"), &format!("{ty}\n"));
                w(&format!("{port}/gid_attrs/ndevs/{i}"), &format!("{nd}\n"));
            }
            // An unused entry: its type file exists, reading it fails.
            std::fs::create_dir_all(dir.join(format!("{port}/gid_attrs/types/4"))).unwrap();
            w(&format!("sys/class/net/{nd}/operstate"), "up\n");
            w(&format!("sys/class/net/{nd}/speed"), "400000\n");
            w(&format!("sys/class/net/{nd}/mtu"), "9000\n");
        }
        w("sys/class/net/eno1/operstate", "up\n");
        w("sys/class/net/eno1/speed", "1000\n");
        w("sys/class/net/eno1/mtu", "1500\n");
        w("sys/class/net/lo/operstate", "unknown\n");
    }

    /// Runs the real script under the local `sh` against `root`.
    pub(crate) fn run_script(root: &Path) -> String {
        let inv = invocation("gpu001", &root.display().to_string());
        let o = std::process::Command::new(&inv.argv[0])
            .args(&inv.argv[1..])
            .output()
            .expect("sh runs");
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stdout).into_owned()
    }

    #[test]
    fn the_script_reads_a_fake_sysfs() {
        let dir = tempfile::tempdir().unwrap();
        fake_root(dir.path());
        let stdout = run_script(dir.path());
        let f = parse(
            "gpu001",
            &InvocationOutput {
                stdout: stdout.clone(),
                exit: Some(0),
                ..Default::default()
            },
        );
        assert!(f.report.reachable, "{stdout}");
        assert_eq!(f.devices.len(), 2, "{stdout}");
        let d = f.devices.iter().find(|d| d.name == "mlx5_1").unwrap();
        assert_eq!(d.pci.as_deref(), Some("0000:03:00.0"));
        assert_eq!(d.numa, Some(1));
        assert_eq!(d.netdevs, ["ens2f0np0"]);
        assert_eq!(d.ports, [(1, "Ethernet".to_string(), Some(400))]);
        assert_eq!(
            preflight::roce_v2_index(&f.report.gids, "mlx5_1", 1, "ens2f0np0"),
            Some(3)
        );
        let names: Vec<&str> = f.report.netdevs.iter().map(|n| n.name.as_str()).collect();
        assert!(
            names.contains(&"eno1") && !names.contains(&"lo"),
            "{names:?}"
        );
        // A fake root asks no lldpd.
        assert!(f.lldp.is_empty() && f.lldp_error.is_none());
    }

    #[test]
    fn lldp_between_markers() {
        let lldp = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/lab/lldpcli-json-show-neighbors-veth.json"
        ))
        .unwrap();
        let out = |s: String| InvocationOutput {
            stdout: s,
            exit: Some(0),
            ..Default::default()
        };
        let f = parse(
            "h",
            &out(format!("@@host h\n@@lldp-begin\n{lldp}\n@@lldp-end 0\n")),
        );
        assert_eq!(f.lldp.len(), 1);
        assert_eq!(f.lldp[0].chassis_name.as_deref(), Some("vm"));
        let f = parse(
            "h",
            &out("@@host h\n@@lldp-begin\nunable to connect to socket\n@@lldp-end 1\n".into()),
        );
        assert!(f.lldp_error.unwrap().contains("exit 1"));
        let f = parse("h", &out("@@host h\n@@lldp-begin\n{\"lldp\"".into()));
        assert!(f.lldp_error.unwrap().contains("cut short"));
    }

    #[test]
    fn values_are_checked() {
        assert!(is_pci("0000:17:00.0"));
        for bad in ["device", "0000:17:00", "../../etc", "0000:17:00.0x"] {
            assert!(!is_pci(bad), "{bad}");
        }
        assert_eq!(rate_gbps("400 Gb/sec (4X NDR)"), Some(400));
        assert_eq!(rate_gbps("2.5 Gb/sec (1X SDR)"), Some(3));
        for bad in ["", "NaN Gb/sec", "-1 Gb/sec", "400", "1e300 Gb/sec"] {
            assert_eq!(rate_gbps(bad), None, "{bad}");
        }
    }

    proptest::proptest! {
        #[test]
        fn garbage_never_panics(s in "(@@(host|rdma|port|gid|pci|numa|ndev|rate|netdev|lldp-begin|lldp-end) )?(.|\n){0,200}",
                                pre in "(@@host x\n@@rdma mlx5_0 -\n@@port mlx5_0 1 Ethernet 4: ACTIVE\n)?") {
            let _ = parse("h", &InvocationOutput { stdout: format!("{pre}{s}"), exit: Some(0), ..Default::default() });
        }
    }
}
