//! Command-line definitions (clap). main.rs parses these and calls `app`.

use clap::{Args, Parser, Subcommand, ValueEnum};

#[derive(Debug, Parser)]
#[command(name = "rocegate", version, about = "Decide whether a RoCEv2 GPU fabric is ready for production", long_about = None)]
#[command(args_conflicts_with_subcommands = true)]
#[command(after_help = examples::TOP)]
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
    #[command(after_help = examples::RUN)]
    Run(RunArgs),
    /// Check an inventory and a suite without running anything.
    #[command(after_help = examples::VALIDATE)]
    Validate(ValidateArgs),
    /// Print rounds, estimated duration, coverage and disruptive steps.
    #[command(after_help = examples::PLAN)]
    Plan(PlanArgs),
    /// Rebuild junit.xml and report.html from a run directory.
    #[command(after_help = examples::REPORT)]
    Report(ReportArgs),
    /// Compare two runs, or a run with a baseline: per test, NIC and node,
    /// medians, change, Mann–Whitney p (Holm-adjusted), version changes;
    /// exit 1 on a significant regression beyond the tolerance.
    #[command(after_help = examples::COMPARE)]
    Compare(CompareArgs),
    /// Baselines: a fabric's reference results, pooled from one or more runs.
    #[command(subcommand, after_help = examples::BASELINE)]
    Baseline(BaselineCommand),
    /// Parse a perftest, nccl-tests or counter/configuration output file into JSON.
    #[command(after_help = examples::PARSE)]
    Parse(ParseArgs),
    /// Ask every host the plan touches, in one round trip each: reachable,
    /// tools and versions, RDMA devices, GID tables, clock skew.
    #[command(after_help = examples::PREFLIGHT)]
    Preflight(PreflightArgs),
    /// Audit configuration and cabling before any load: NIC firmware,
    /// driver, link, MTU, PFC, DSCP trust and map, GID, DCQCN, optics; switch
    /// PFC, ECN, MTU, NOS, PFC watchdog; every cable by LLDP.
    #[command(after_help = examples::AUDIT)]
    Audit(AuditArgs),
    /// Run one command on many hosts at once over the inventory's transport
    /// (pdsh-style output: `host: line`).
    #[command(after_help = examples::EXEC)]
    Exec(ExecArgs),
    /// Heal every fault a killed or crashed run left open (read from the
    /// fault journal), then mark it healed.
    #[command(after_help = examples::RECOVER)]
    Recover(RecoverArgs),
    /// Inventory tools.
    #[command(subcommand, after_help = examples::INVENTORY)]
    Inventory(InventoryCommand),
    /// Print a shell completion script, generated from these definitions.
    #[command(after_help = examples::COMPLETIONS)]
    Completions(CompletionsArgs),
    /// Print the manual page (roff), generated from these definitions.
    #[command(after_help = examples::MAN)]
    Man,
    /// The node agent of the slurm transport: runs this node's share of a
    /// round's plan as one task of a Slurm step (started by rocegate
    /// itself through srun, never by hand).
    #[command(hide = true, after_help = examples::SLURM_TASK)]
    SlurmTask {
        /// The round's plan, broadcast to this node.
        plan: String,
    },
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
pub struct AuditArgs {
    /// Inventory file [default: inventory/emulated.yaml, or the built-in copy]
    #[arg(long, short = 'i')]
    pub inventory: Option<String>,
    /// Only these nodes (hostlist), and the switches they reach [default: every node]
    #[arg(long)]
    pub nodes: Option<String>,
    /// Only these checks or dotted prefixes (`nic.pfc`, `cabling`, `optics`), repeatable
    #[arg(long = "check")]
    pub checks: Vec<String>,
    /// Print every finding as JSON (one array) instead of the table
    #[arg(long)]
    pub json: bool,
    /// Seed for the emulated transport
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
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
pub struct ValidateArgs {
    #[command(flatten)]
    pub inputs: InputArgs,
    /// Also ask every API switch (eos, nxos) over HTTPS: reachable, TLS
    /// verified, credentials accepted, and the account's privilege enough
    /// for faults
    #[arg(long)]
    pub probe: bool,
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
    /// Leave every fault out (skipped with the reason): a run that must not touch switches
    #[arg(long)]
    pub skip_faults: bool,
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
    /// Plan a campaign (campaigns/*.yaml): several fabrics in one change
    /// window; exit 2 when it does not fit, saying by how much and what would
    #[arg(long, value_name = "FILE")]
    pub campaign: Option<String>,
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
    /// Run a campaign (campaigns/*.yaml): each fabric into its own run
    /// directory under --out, one gate for all
    #[arg(long, value_name = "FILE")]
    pub campaign: Option<String>,
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
    /// At the end, every suspect and every result that did not pass, in
    /// full with its evidence [default: the first 20 lines, grouped by test]
    #[arg(long, short = 'v')]
    pub verbose: bool,
    /// Slurm transport only: when the gate fails, drain the nodes
    /// actions.json names (after checking this user may), and say what was
    /// drained in drained.json
    #[arg(long)]
    pub apply_drain: bool,
    #[command(flatten)]
    pub export: ExportArgs,
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
    /// Judge the recorded samples and findings against this suite instead
    /// of the one the run recorded (new expectations; the run's log is not
    /// changed)
    #[arg(long, short = 's')]
    pub suite: Option<String>,
    /// Every suspect and every result that did not pass, in full with its
    /// evidence [default: the first 20 lines, grouped by test]
    #[arg(long, short = 'v')]
    pub verbose: bool,
    #[command(flatten)]
    pub export: ExportArgs,
}

/// Where a run's metrics go, besides the run directory (`run` and `report`).
#[derive(Debug, Args, Clone, Default)]
pub struct ExportArgs {
    /// Write the run's metrics as Prometheus text to
    /// DIR/rocegate_<fabric>_<suite>.prom (for node_exporter's textfile
    /// collector; replaced by each run of that fabric and suite)
    #[arg(long, value_name = "DIR")]
    pub metrics_dir: Option<String>,
    /// Also PUT them to this Pushgateway (http://host:9091), grouped by
    /// fabric and suite; a failed push is reported and does not change the gate
    #[arg(long, value_name = "URL")]
    pub pushgateway: Option<String>,
}

#[derive(Debug, Args, Clone)]
pub struct CompareArgs {
    /// The reference: a run directory, a baseline directory or file, or a
    /// fabric name in the baseline store
    pub a: String,
    /// The run to judge (same forms as A)
    pub b: String,
    /// Print the comparison as JSON (a stable interface; see the README)
    #[arg(long)]
    pub json: bool,
    /// Family-wise error rate, controlled with Holm's method
    #[arg(long, default_value_t = crate::score::compare::ALPHA)]
    pub alpha: f64,
    /// Practical tolerance, percent: smaller changes are never regressions
    /// (latencies use at least 10)
    #[arg(long, default_value_t = crate::score::suspects::PEER_TOLERANCE_PCT)]
    pub tolerance: f64,
    /// Baseline store [default: $XDG_STATE_HOME/rocegate/baselines]
    #[arg(long)]
    pub store: Option<String>,
}

#[derive(Debug, Subcommand)]
pub enum BaselineCommand {
    /// Pool one or more run directories of one fabric into its baseline
    #[command(after_help = examples::BASELINE_PROMOTE)]
    Promote(BaselinePromoteArgs),
    /// List the fabrics with a baseline
    #[command(after_help = examples::BASELINE_LIST)]
    List(BaselineStoreArgs),
    /// Print a fabric's baseline: its runs, versions and per-test medians
    #[command(after_help = examples::BASELINE_SHOW)]
    Show(BaselineShowArgs),
}

#[derive(Debug, Args, Clone)]
pub struct BaselineStoreArgs {
    /// Baseline store [default: $XDG_STATE_HOME/rocegate/baselines]
    #[arg(long)]
    pub store: Option<String>,
}

#[derive(Debug, Args, Clone)]
pub struct BaselinePromoteArgs {
    /// Run directories written by `rocegate run`, all of one fabric
    #[arg(required = true)]
    pub runs: Vec<String>,
    #[command(flatten)]
    pub store: BaselineStoreArgs,
}

#[derive(Debug, Args, Clone)]
pub struct BaselineShowArgs {
    /// The fabric (its inventory's `fabric.name`)
    pub fabric: String,
    #[command(flatten)]
    pub store: BaselineStoreArgs,
    /// Print the stored JSON
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum ParseTool {
    Perftest,
    Nccl,
    /// A counter or configuration tool's output; --format names which
    Counters,
}

#[derive(Debug, Args, Clone)]
pub struct ParseArgs {
    pub tool: ParseTool,
    /// File to parse, or - for standard input
    pub file: String,
    /// Unit of a perftest --out_json file, which carries none (MB/sec or Gb/sec)
    #[arg(long)]
    pub unit: Option<String>,
    /// With `counters`: which tool printed the file (ethtool-mlx5, ethtool-m,
    /// dcb-app, sonic-pfc-counters, …; an unknown name lists them all)
    #[arg(long)]
    pub format: Option<String>,
}

#[derive(Debug, Subcommand)]
pub enum InventoryCommand {
    /// Write a rail-optimised pod as inventory YAML
    #[command(after_help = examples::GENERATE)]
    Generate(GenerateArgs),
    /// Write an inventory skeleton (hosts, addresses, ssh) from an Ansible
    /// inventory or from Slurm; NICs come from `inventory discover`.
    #[command(after_help = examples::IMPORT)]
    Import(ImportArgs),
    /// Read each node's RDMA NICs, GID tables, NUMA nodes, speeds and LLDP
    /// neighbours over ssh, and write NICs, rails, leaves and links.
    #[command(after_help = examples::DISCOVER)]
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

#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum Shell {
    Bash,
    Zsh,
    Fish,
}

#[derive(Debug, Args, Clone)]
pub struct CompletionsArgs {
    pub shell: Shell,
}

/// The "Examples:" block under each command's `--help`: real command lines
/// against the files this repository ships.
mod examples {
    pub const TOP: &str = "\
Examples:
  rocegate validate                      # the built-in emulated pod and acceptance suite
  rocegate plan -i inventory/lab.yaml -s suites/lab.yaml
  rocegate -i inventory/lab.yaml -s suites/lab.yaml    # same as `rocegate run …`
  rocegate completions bash > ~/.local/share/bash-completion/completions/rocegate";

    pub const RUN: &str = "\
Examples:
  rocegate run
  rocegate run -i inventory/lab.yaml -s suites/lab.yaml --out reports/night-1
  rocegate run --only rail-bw --nodes 'gpu[001-004]' --progress lines
  rocegate run -i pod.yaml --deadline 4h --allow-disruptive
  rocegate run --campaign campaigns/example.yaml --out reports/window-1";

    pub const VALIDATE: &str = "\
Examples:
  rocegate validate
  rocegate validate -i inventory/lab.yaml -s suites/lab-faults.yaml";

    pub const PLAN: &str = "\
Examples:
  rocegate plan
  rocegate plan --only mesh-bw --exclude 'gpu[009-016]'
  rocegate plan -i inventory/lab.yaml -s suites/lab.yaml --deadline 30m --json
  rocegate plan --campaign campaigns/example.yaml";

    pub const REPORT: &str = "\
Examples:
  rocegate report reports/acceptance-20261122T021500Z
  rocegate report reports/acceptance-20261122T021500Z --suite suites/stricter.yaml";

    pub const COMPARE: &str = "\
Examples:
  rocegate compare reports/nightly-20261125T020000Z reports/nightly-20261126T020000Z
  rocegate compare emu-pod reports/nightly-20261126T020000Z --json | jq .regressions";

    pub const BASELINE: &str = "\
Examples:
  rocegate baseline promote reports/nightly-20261124T020000Z reports/nightly-20261125T020000Z
  rocegate baseline list
  rocegate baseline show emu-pod";

    pub const BASELINE_PROMOTE: &str = "\
Examples:
  rocegate baseline promote reports/nightly-20261124T020000Z reports/nightly-20261125T020000Z";

    pub const BASELINE_LIST: &str = "\
Examples:
  rocegate baseline list";

    pub const BASELINE_SHOW: &str = "\
Examples:
  rocegate baseline show emu-pod";

    pub const PARSE: &str = "\
Examples:
  rocegate parse perftest ib_write_bw.txt
  rocegate parse nccl all_reduce_perf.log | jq .avg_busbw_gbs
  ssh gpu01 ib_write_bw -d mlx5_0 --report_gbits 10.0.0.2 | rocegate parse perftest -
  rocegate parse perftest --unit Gb/sec out.json
  ssh gpu01 ethtool -S eth0 | rocegate parse counters --format ethtool-mlx5 -
  rocegate parse counters --format sonic-pfc-counters leaf01-pfc.txt";

    pub const PREFLIGHT: &str = "\
Examples:
  rocegate preflight -i inventory/lab.yaml -s suites/lab.yaml
  rocegate preflight -i pod.yaml --nodes 'gpu[001-064]' --json";

    pub const AUDIT: &str = "\
Examples:
  rocegate audit                                   # the embedded emulated pod
  rocegate audit -i inventory/emulated-defects.yaml
  rocegate audit -i pod.yaml --nodes 'gpu[001-032]' --check cabling --check nic.pfc
  rocegate audit -i pod.yaml --json | jq '.[] | select(.outcome != \"ok\")'

Exit status: 0 when every component passes under the default gate policy
(a check no source answers is `not available` and warns), 1 when any check
deviates or could not be read, 2 on bad input. `rocegate run --only audit`
runs the same audit as a test and keeps every raw answer as evidence.";

    pub const EXEC: &str = "\
Examples:
  rocegate exec -i inventory/lab.yaml -- ibv_devinfo -l
  rocegate exec -i inventory/lab.yaml -w 'host[1-2]' -q -- rdma link show
  rocegate exec -i inventory/lab.yaml --switches -w 'leaf[1-2]' -- ip -br link";

    pub const RECOVER: &str = "\
Examples:
  rocegate recover -i inventory/lab.yaml
  rocegate recover -i pod.yaml --journal /var/lib/rocegate/pod.jsonl";

    pub const INVENTORY: &str = "\
Examples:
  rocegate inventory generate --nodes 64 -o pod.yaml
  rocegate inventory import --ansible hosts.ini --group gpu -o pod.yaml
  rocegate inventory discover -i pod.yaml -o pod-discovered.yaml";

    pub const IMPORT: &str = "\
Examples:
  rocegate inventory import --ansible hosts.ini --group gpu -o pod.yaml
  ansible-inventory -i hosts.ini --list > inv.json && rocegate inventory import --ansible inv.json -o pod.yaml
  rocegate inventory import --slurm 'gpu[001-128]' --name pod7 -o pod.yaml
  scontrol show nodes > nodes.txt && rocegate inventory import --slurm nodes.txt --group gpu -o pod.yaml";

    pub const DISCOVER: &str = "\
Examples:
  rocegate inventory discover -i pod.yaml -o pod-discovered.yaml";

    pub const GENERATE: &str = "\
Examples:
  rocegate inventory generate --nodes 64 --nodes-per-leaf 8 --rails 8 --spines 8 -o pod.yaml
  rocegate inventory generate --nodes 1024 --nodes-per-leaf 32 --spines 64 --environment staging";

    pub const COMPLETIONS: &str = "\
Examples:
  rocegate completions bash > ~/.local/share/bash-completion/completions/rocegate
  rocegate completions zsh > ~/.zfunc/_rocegate      # with fpath+=~/.zfunc
  rocegate completions fish > ~/.config/fish/completions/rocegate.fish";

    pub const SLURM_TASK: &str = "\
Examples:
  rocegate slurm-task /tmp/rocegate-plan-4711-0.json   # what srun starts on each node of a round's step; its input takes go and stop STEP";

    pub const MAN: &str = "\
Examples:
  rocegate man > ~/.local/share/man/man1/rocegate.1 && man rocegate
  rocegate man | man -l -";
}
