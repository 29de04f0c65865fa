//! Command-line definitions (clap). main.rs parses these and calls `app`.

use clap::{Args, Parser, Subcommand, ValueEnum};

#[derive(Debug, Parser)]
#[command(name = "rocegate", version, about = "Decide whether a RoCEv2 GPU fabric is ready for production", long_about = None)]
#[command(args_conflicts_with_subcommands = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    /// With no command, rocegate runs: these are `run`'s options, with the
    /// same defaults, so `rocegate` and `rocegate run` are one thing.
    #[command(flatten)]
    pub run: RunArgs,
    /// Largest input file (inventory, suite) read, e.g. 64MiB [default:
    /// $ROCEGATE_MAX_INPUT_BYTES, else 16MiB]
    #[arg(long, global = true, value_name = "SIZE")]
    pub max_input_size: Option<String>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Plan, run and score a suite; the exit code is the gate (default command).
    Run(RunArgs),
    /// Check an inventory and a suite without running anything.
    Validate(InputArgs),
    /// Print rounds, estimated duration, coverage and disruptive steps.
    Plan(PlanArgs),
    /// Rebuild junit.xml and report.html from a run directory.
    Report(ReportArgs),
    /// Parse a perftest or nccl-tests output file into JSON.
    Parse(ParseArgs),
    /// Ask every host the plan touches, in one round trip each: reachable,
    /// tools and versions, RDMA devices, GID tables, clock skew.
    Preflight(PreflightArgs),
    /// Run one command on many hosts at once over the inventory's transport
    /// (pdsh-style output: `host: line`).
    Exec(ExecArgs),
    /// Heal every fault a killed or crashed run left open (read from the
    /// fault journal), then mark it healed.
    Recover(RecoverArgs),
    /// Inventory tools.
    #[command(subcommand)]
    Inventory(InventoryCommand),
}

#[derive(Debug, Args, Clone)]
pub struct PreflightArgs {
    #[command(flatten)]
    pub input: InputArgs,
    #[command(flatten)]
    pub narrow: NarrowArgs,
    /// Print JSON instead of a table
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args, Clone)]
pub struct ExecArgs {
    /// Inventory file [default: inventory/emulated.yaml, or the built-in copy]
    #[arg(long, short = 'i')]
    pub inventory: Option<String>,
    /// Only these nodes or switches (hostlist) [default: every node]
    #[arg(long, short = 'w')]
    pub nodes: Option<String>,
    /// Add every switch
    #[arg(long)]
    pub switches: bool,
    /// Dead-man timeout of the command on each host
    #[arg(long, default_value = "60s")]
    pub timeout: String,
    /// Run the command this many times in sequence (for measuring)
    #[arg(long, default_value_t = 1)]
    pub repeat: u32,
    /// Open a fresh ssh connection per command even with --repeat (without
    /// --repeat there is nothing to reuse, so no ControlMaster is set up)
    #[arg(long)]
    pub no_reuse: bool,
    /// Print only failures and the summary line
    #[arg(long, short = 'q')]
    pub quiet: bool,
    /// The command and its arguments
    #[arg(last = true, required = true)]
    pub command: Vec<String>,
}

#[derive(Debug, Args, Clone)]
pub struct InputArgs {
    /// Inventory file [default: inventory/emulated.yaml, or the built-in copy]
    #[arg(long, short = 'i')]
    pub inventory: Option<String>,
    /// Suite file [default: suites/acceptance.yaml, or the built-in copy]
    #[arg(long, short = 's')]
    pub suite: Option<String>,
}

#[derive(Debug, Args, Clone)]
pub struct NarrowArgs {
    /// Run only these tests (repeatable; a fault brings its traffic test along)
    #[arg(long, num_args = 1..)]
    pub only: Vec<String>,
    /// Only these nodes (hostlist, e.g. gpu[001-064])
    #[arg(long)]
    pub nodes: Option<String>,
    /// Leave these nodes out (hostlist)
    #[arg(long)]
    pub exclude: Option<String>,
    /// Refuse (exit 2) if the estimated duration exceeds this (e.g. 4h)
    #[arg(long)]
    pub deadline: Option<String>,
    /// Seed for random patterns and the emulated fabric
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

#[derive(Debug, Args, Clone)]
pub struct PlanArgs {
    #[command(flatten)]
    pub input: InputArgs,
    #[command(flatten)]
    pub narrow: NarrowArgs,
    /// Print JSON instead of a table
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Clone, Copy, Default, ValueEnum, PartialEq, Eq)]
pub enum ProgressMode {
    /// Bars on a terminal, plain lines otherwise or under CI
    #[default]
    Auto,
    Bar,
    Lines,
    None,
}

#[derive(Debug, Args, Clone)]
pub struct RunArgs {
    #[command(flatten)]
    pub input: InputArgs,
    #[command(flatten)]
    pub narrow: NarrowArgs,
    /// Run directory [default: reports/<suite>-<UTC time>]
    #[arg(long)]
    pub out: Option<String>,
    #[arg(long, value_enum, default_value_t = ProgressMode::Auto)]
    pub progress: ProgressMode,
    /// Emulated fabric only: virtual seconds per wall second (0 = as fast as possible)
    #[arg(long, default_value_t = 0.0)]
    pub pace: f64,
    /// Allow disruptive faults on an environment: production fabric
    #[arg(long)]
    pub allow_disruptive: bool,
    /// Fault journal [default: $XDG_STATE_HOME/rocegate/journal/<fabric>.jsonl,
    /// else ~/.local/state/rocegate/journal/<fabric>.jsonl]
    #[arg(long)]
    pub journal: Option<String>,
}

#[derive(Debug, Args, Clone)]
pub struct RecoverArgs {
    /// Inventory file [default: inventory/emulated.yaml, or the built-in copy]
    #[arg(long, short = 'i')]
    pub inventory: Option<String>,
    /// Fault journal [default: as `run`'s]
    #[arg(long)]
    pub journal: Option<String>,
}

#[derive(Debug, Args, Clone)]
pub struct ReportArgs {
    /// A run directory written by `rocegate run`
    pub run_dir: String,
}

#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum ParseTool {
    Perftest,
    Nccl,
}

#[derive(Debug, Args, Clone)]
pub struct ParseArgs {
    pub tool: ParseTool,
    /// File to parse, or - for standard input
    pub file: String,
    /// Unit of a perftest --out_json file, which carries none (MB/sec or Gb/sec)
    #[arg(long)]
    pub unit: Option<String>,
}

#[derive(Debug, Subcommand)]
pub enum InventoryCommand {
    /// Write a rail-optimised pod as inventory YAML
    Generate(GenerateArgs),
    /// Write an inventory skeleton (hosts, addresses, ssh) from an Ansible
    /// inventory or from Slurm; NICs come from `inventory discover`.
    ///
    /// Example: rocegate inventory import --ansible hosts.ini --group gpu -o pod.yaml
    Import(ImportArgs),
    /// Read each node's RDMA NICs, GID tables, NUMA nodes, speeds and LLDP
    /// neighbours over ssh, and write NICs, rails, leaves and links.
    ///
    /// Example: rocegate inventory discover -i pod.yaml -o pod-discovered.yaml
    Discover(DiscoverArgs),
}

#[derive(Debug, Args, Clone)]
#[command(group(clap::ArgGroup::new("source").required(true).args(["ansible", "slurm"])))]
pub struct ImportArgs {
    /// An Ansible inventory: INI or YAML (read through `ansible-inventory`,
    /// from ansible-core), or the JSON `ansible-inventory --list` prints
    #[arg(long, value_name = "FILE")]
    pub ansible: Option<String>,
    /// Slurm's nodes: a file (- for standard input) holding `scontrol show
    /// nodes` or `sinfo -N` output or a hostlist, or a hostlist itself
    /// (gpu[001-128])
    #[arg(long, value_name = "FILE|HOSTLIST")]
    pub slurm: Option<String>,
    /// Only this Ansible group (with its children) or Slurm partition
    #[arg(long)]
    pub group: Option<String>,
    /// Fabric name [default: the group, else "pod"]
    #[arg(long)]
    pub name: Option<String>,
    /// Write here instead of standard output (nothing is written on error)
    #[arg(long, short = 'o')]
    pub output: Option<String>,
}

#[derive(Debug, Args, Clone)]
pub struct DiscoverArgs {
    /// The inventory to complete: a skeleton from `inventory import`, or any
    /// inventory with an ssh transport
    #[arg(long, short = 'i')]
    pub inventory: String,
    /// Write here instead of standard output (nothing is written on error)
    #[arg(long, short = 'o')]
    pub output: Option<String>,
}

#[derive(Debug, Args, Clone)]
pub struct GenerateArgs {
    #[arg(long, default_value = "pod")]
    pub name: String,
    #[arg(long, default_value_t = 16)]
    pub nodes: u32,
    #[arg(long, default_value_t = 8)]
    pub nodes_per_leaf: u32,
    #[arg(long, default_value_t = 8)]
    pub rails: u32,
    #[arg(long, default_value_t = 4)]
    pub spines: u32,
    /// Uplinks from each leaf to each spine [default: enough to be non-blocking]
    #[arg(long)]
    pub uplinks_per_spine: Option<u32>,
    #[arg(long, default_value_t = 400)]
    pub speed_gbps: u32,
    #[arg(long, default_value = "gpu")]
    pub node_prefix: String,
    #[arg(long, default_value_t = 4096)]
    pub mtu: u32,
    /// lab, staging or production
    #[arg(long, default_value = "lab")]
    pub environment: String,
    /// Write here instead of standard output
    #[arg(long, short = 'o')]
    pub output: Option<String>,
}
