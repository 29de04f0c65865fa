//! The inventory file as written: a fabric, its nodes, switches, links and
//! transport. Plain serde types with no cross-references resolved; `check`
//! turns them into the validated model.

use serde::{de, Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

use super::units::Span;

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct InventoryFile {
    pub fabric: FabricSpec,
    #[serde(default, deserialize_with = "super::tagged::one")]
    pub transport: TransportSpec,
    pub nodes: Vec<NodeGroup>,
    #[serde(default)]
    pub switches: Vec<SwitchGroup>,
    #[serde(default)]
    pub links: Vec<LinkSpec>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub emulation: Option<EmulationSpec>,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FabricSpec {
    pub name: String,
    pub environment: Environment,
    /// Number of rails; rails are numbered 0..rails.
    pub rails: u32,
    pub roce: RoceProfile,
    #[serde(default)]
    pub versions: Versions,
    #[serde(default)]
    pub blast_radius: BlastRadius,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Environment {
    Lab,
    Staging,
    Production,
}

/// How the fabric is meant to run RoCE. A profile, not a constant: Meta runs
/// PFC without DCQCN, NVIDIA's reference runs both.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RoceProfile {
    /// The lossless priority RoCE traffic uses (commonly 3).
    pub pfc_priority: u8,
    /// The priority CNPs use (commonly 6, strict).
    #[serde(default = "default_cnp_priority")]
    pub cnp_priority: u8,
    pub dscp_roce: u8,
    pub dscp_cnp: u8,
    /// Whether DCQCN (ECN marking + CNPs) is expected.
    pub dcqcn: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ecn: Option<EcnThresholds>,
    /// RoCE path MTU in bytes (256..4096, a power of two).
    pub mtu: u32,
}

fn default_cnp_priority() -> u8 {
    6
}

impl RoceProfile {
    /// The lossless profile of NVIDIA's documentation: RoCE on priority 3
    /// with DSCP 26, CNPs on 6 with DSCP 48, DCQCN with ECN marking from
    /// 150 KB to 1500 KB. What generated and imported inventories start
    /// from; their headers say to check it.
    pub fn nvidia_default(mtu: u32) -> Self {
        RoceProfile {
            pfc_priority: 3,
            cnp_priority: 6,
            dscp_roce: 26,
            dscp_cnp: 48,
            dcqcn: true,
            ecn: Some(EcnThresholds {
                min_kb: 150,
                max_kb: 1500,
            }),
            mtu,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct EcnThresholds {
    pub min_kb: u32,
    pub max_kb: u32,
}

/// Versions every component is expected to run; checked by the audit.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Versions {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nic_firmware: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub driver: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nos: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nccl: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub perftest: Option<String>,
}

/// What a single fault may take away. Checked before anything is touched.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct BlastRadius {
    #[serde(default = "default_max_nics")]
    pub max_isolated_nics: u32,
    #[serde(default = "default_max_nodes")]
    pub max_isolated_nodes: u32,
    #[serde(default)]
    pub allow_rail_dark: bool,
}

fn default_max_nics() -> u32 {
    16
}
fn default_max_nodes() -> u32 {
    16
}

impl Default for BlastRadius {
    fn default() -> Self {
        BlastRadius {
            max_isolated_nics: default_max_nics(),
            max_isolated_nodes: default_max_nodes(),
            allow_rail_dark: false,
        }
    }
}

#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TransportSpec {
    #[default]
    Emulated,
    Local,
    Ssh(SshSpec),
    Slurm(SlurmSpec),
}

impl TransportSpec {
    /// Whether the emulated pod answers every command (no real host is
    /// touched, no fault journaled).
    pub fn emulated(&self) -> bool {
        match self {
            TransportSpec::Emulated => true,
            TransportSpec::Slurm(s) => s.launcher == SlurmLauncher::Emulated,
            _ => false,
        }
    }

    /// How the controller reaches hosts and switches over ssh: the `ssh`
    /// transport itself, or the switches (and `mpirun`'s agent) under
    /// `slurm`.
    pub fn ssh(&self) -> Option<&SshSpec> {
        match self {
            TransportSpec::Ssh(s) => Some(s),
            TransportSpec::Slurm(s) => Some(&s.ssh),
            _ => None,
        }
    }
}

/// `transport: {slurm: …}`: every node command runs as a Slurm job step
/// inside an allocation (the one rocegate runs in, `SLURM_JOB_ID`, or one
/// it requests with `salloc`); switches are still reached over `ssh` (or
/// their API).
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SlurmSpec {
    /// `SLURM_CONF` for every Slurm command; the cluster default if absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conf: Option<String>,
    /// For the allocation rocegate requests (`salloc -p`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition: Option<String>,
    /// For the allocation rocegate requests (`salloc -A`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub account: Option<String>,
    /// The requested allocation's time limit (`salloc -t`).
    #[serde(default = "default_slurm_time")]
    pub time: Span,
    /// How long to wait for the nodes to be granted (`salloc --immediate`).
    #[serde(default = "default_slurm_wait")]
    pub wait: Span,
    /// Node-local directory the agent and each round's plan are broadcast
    /// into with `sbcast` (must allow executables).
    #[serde(default = "default_agent_dir")]
    pub agent_dir: String,
    /// A rocegate binary already on every node (a shared file system): no
    /// broadcast of the agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// Node commands run as the user who runs rocegate (Slurm runs a job's
    /// tasks as its owner). `true`: a node's root commands (a NIC's link
    /// flap) go through `sudo -n` unless that user is root. `false` (the
    /// default): they run as they are, and host-side faults are refused at
    /// plan time unless rocegate runs as root.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub sudo: bool,
    /// `srun` (default) or `emulated`: the emulated pod answers each step's
    /// tasks, for the benchmark and tests of the transport itself.
    #[serde(default, skip_serializing_if = "SlurmLauncher::is_srun")]
    pub launcher: SlurmLauncher,
    /// How switches (and mpirun's agent) are reached.
    #[serde(default = "default_slurm_ssh")]
    pub ssh: SshSpec,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SlurmLauncher {
    #[default]
    Srun,
    Emulated,
}

impl SlurmLauncher {
    fn is_srun(&self) -> bool {
        *self == SlurmLauncher::Srun
    }
}

fn default_slurm_time() -> Span {
    Span::from_secs(3600)
}
fn default_slurm_wait() -> Span {
    Span::from_secs(300)
}
fn default_agent_dir() -> String {
    "/tmp".into()
}
fn default_slurm_ssh() -> SshSpec {
    SshSpec {
        user: None,
        port: default_ssh_port(),
        key: None,
        jump: None,
        options: Vec::new(),
        parallelism: default_parallelism(),
        per_host: default_per_host(),
        connect_timeout: default_connect_timeout(),
        control_master: true,
        allow_ssh_commands: false,
    }
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SshSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
    #[serde(default = "default_ssh_port")]
    pub port: u16,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jump: Option<String>,
    /// Extra `-o` options, e.g. `StrictHostKeyChecking=accept-new`.
    #[serde(default)]
    pub options: Vec<String>,
    #[serde(default = "default_parallelism")]
    pub parallelism: usize,
    #[serde(default = "default_per_host")]
    pub per_host: usize,
    #[serde(default = "default_connect_timeout")]
    pub connect_timeout: Span,
    /// Reuse one connection per host (OpenSSH ControlMaster) for every
    /// command; `false` opens a fresh connection per command.
    #[serde(default = "default_true")]
    pub control_master: bool,
    /// Allow `options` that make ssh run a local command or load local code
    /// (ProxyCommand, LocalCommand, KnownHostsCommand, Match, ...). Off, so an
    /// inventory cannot become code on the controller by accident.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub allow_ssh_commands: bool,
}

fn default_true() -> bool {
    true
}

fn default_ssh_port() -> u16 {
    22
}
fn default_parallelism() -> usize {
    64
}
// sshd's default MaxSessions is 10 per connection; stay under it.
fn default_per_host() -> usize {
    8
}
fn default_connect_timeout() -> Span {
    Span::from_secs(10)
}

/// A group of nodes written with one hostlist expression.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct NodeGroup {
    pub hosts: String,
    /// Management address: a template with `{host}` (e.g. `{host}.mgmt`) or a
    /// hostlist with one address per host (`192.168.0.[1-16]`). Defaults to
    /// the host name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address: Option<String>,
    pub nics: Vec<NicSpec>,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct NicSpec {
    /// RDMA device, e.g. `mlx5_0`.
    pub device: String,
    /// Kernel netdev, e.g. `ens1f0np0`.
    pub netdev: String,
    /// RDMA port number (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port: Option<u8>,
    pub gid_index: GidIndex,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub numa: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu: Option<u32>,
    pub rail: u32,
    pub speed_gbps: u32,
    /// Data-plane address (template with `{host}`, `{rail}`, `{index}` or a
    /// literal); used for rdma_cm and iperf3.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address: Option<String>,
}

/// The RoCE v2 GID table entry, or `discover` to read it from sysfs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GidIndex {
    Fixed(u32),
    Discover,
}

impl<'de> Deserialize<'de> for GidIndex {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl de::Visitor<'_> for V {
            type Value = GidIndex;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a GID index (0-255) or \"discover\"")
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<GidIndex, E> {
                if v > 255 {
                    return Err(E::custom(format!("GID index {v} is out of range (0-255)")));
                }
                Ok(GidIndex::Fixed(v as u32))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<GidIndex, E> {
                if v < 0 {
                    return Err(E::custom(format!(
                        "GID index {v} is negative (0-255 or \"discover\")"
                    )));
                }
                self.visit_u64(v as u64)
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<GidIndex, E> {
                match v {
                    "discover" => Ok(GidIndex::Discover),
                    other => Err(E::custom(format!(
                        "gid_index \"{other}\" is neither a number nor \"discover\""
                    ))),
                }
            }
        }
        d.deserialize_any(V)
    }
}

impl Serialize for GidIndex {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            GidIndex::Fixed(n) => s.serialize_u32(*n),
            GidIndex::Discover => s.serialize_str("discover"),
        }
    }
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SwitchGroup {
    /// One name or a hostlist expression (`leaf[01-16]`).
    pub name: String,
    pub role: SwitchRole,
    pub driver: SwitchDriver,
    /// Management address: template with `{name}`, a hostlist zipped with the
    /// names, or a literal for a single switch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address: Option<String>,
    /// Where the credentials live; never the secret itself.
    #[serde(
        default,
        deserialize_with = "super::tagged::option",
        skip_serializing_if = "Option::is_none"
    )]
    pub credentials: Option<Credentials>,
    /// How a switch reached over HTTPS (`eos`, `nxos`) is called.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api: Option<ApiSpec>,
    /// The rail a leaf serves in a rail-optimised pod.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rail: Option<u32>,
}

/// The account, port, certificate check and limits of a switch API. The
/// password is the switch group's `credentials` (a reference, never the
/// secret).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ApiSpec {
    pub user: String,
    /// HTTPS port; 443 when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port: Option<u16>,
    /// PEM file of the CA that signed the switches' certificates; the
    /// public roots when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ca_file: Option<String>,
    /// Skip certificate verification (logged at every run).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub insecure: bool,
    /// Longest wait for one call; 30s when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout: Option<Span>,
    /// Calls in flight per switch; 4 when absent (NX-API serves four).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_in_flight: Option<usize>,
    /// ACI: the switch's pod (1 when absent) and node id at the APIC
    /// (`address` is the APIC's). In a group, the first switch has `node`
    /// and the next ones the ids after it, in the order the names expand.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pod: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<u32>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SwitchRole {
    Leaf,
    Spine,
}

/// The platform a switch runs; what each one can do lives in
/// [`crate::switch`], with its `name()`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SwitchDriver {
    Eos,
    Nxos,
    Sonic,
    Cumulus,
    Linux,
    /// A Cisco ACI leaf or spine, reached through its APIC's REST API.
    Aci,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Credentials {
    /// Name of an environment variable holding the secret.
    Env(String),
    /// Path of a file holding the secret (or an SSH key).
    File(String),
}

/// A cable: `node:device` or `switch:port` on each end. Either end may use
/// one bracket expression; both ends then expand to the same count and are
/// zipped (`gpu[01-16]:mlx5_0` ↔ `leaf1:swp[1-16]`).
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct LinkSpec {
    pub a: String,
    pub b: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speed_gbps: Option<u32>,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct EmulationSpec {
    #[serde(default, deserialize_with = "super::tagged::vec")]
    pub defects: Vec<Defect>,
}

/// A defect planted in the emulated fabric. Each shows up only through the
/// outputs a real tool would print.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Defect {
    /// A NIC negotiated below its line rate.
    NicSpeed { nic: String, gbps: u32 },
    /// A cable with bit errors, named by either end.
    BadCable { link: String, ber: f64 },
    /// Every NIC of a node limited by a host-side bottleneck (fraction of line rate).
    SlowNode { node: String, factor: f64 },
    /// A leaf–spine uplink down, named by the leaf-side port.
    UplinkDown { port: String },
    /// Two host cables swapped: each NIC lands on the other's leaf port.
    SwappedCables { a: String, b: String },
    /// A switch with PFC off on the RoCE priority.
    PfcOff { switch: String },
    /// A switch with ECN thresholds other than the profile's.
    EcnThresholds {
        switch: String,
        min_kb: u32,
        max_kb: u32,
    },
    /// A node whose NICs run other firmware.
    Firmware { node: String, version: String },
    /// A NIC with PFC enabled on priorities beyond the RoCE one.
    ExtraPfc { nic: String, priorities: Vec<u8> },
    /// A dirty fibre end: the module at `end` (`node:device` or
    /// `switch:port`) receives `rx_dbm` on one lane (1-based, as `ethtool
    /// -m` numbers its channels).
    WeakLane { end: String, lane: u8, rx_dbm: f64 },
}
