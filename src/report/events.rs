//! The event records every output is built from. The runner writes them to
//! `results.jsonl` as they happen; JUnit, HTML and the terminal summary are
//! pure functions of them (plus the raw files they point at), which is what
//! lets `rocegate report` rebuild a run's outputs from its directory alone.

use serde::{Deserialize, Serialize};

use crate::score::threshold::Resolved;
use crate::score::{Counts, Verdict};
use crate::workload::failure::StepFailure;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Record {
    RunStarted(RunStarted),
    Sample(Sample),
    Verdict(VerdictRecord),
    Counters(CounterRecord),
    /// One host's preflight answer, before the first test.
    Preflight(crate::audit::preflight::HostReport),
    /// One audit or counter observation about one component, before
    /// judgement (`score::findings` turns findings into verdicts).
    Finding(Finding),
    /// One device's counter changes over one window of a round (the
    /// counter ledger, `counters::ledger`).
    Ledger(LedgerRecord),
    RunFinished(RunFinished),
}

/// What one device's counters did over one window: a snapshot before the
/// round's traffic and one after it (taken at least the platform's counter
/// update interval later). Only counters that changed are kept, vendor names
/// with them; a reset or a saturated counter is reported as such, never
/// differenced. Small by design: it grows with rounds × devices touched,
/// not with how many counters a NIC exposes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LedgerRecord {
    pub test: String,
    pub round: usize,
    pub rep: u32,
    /// Inventory name of the node or switch.
    pub host: String,
    /// Netdev, RDMA device or switch port.
    pub device: String,
    /// The read (`ethtool -S`, `sysfs`, `tc -s -d qdisc`).
    pub source: String,
    pub t0_s: f64,
    pub t1_s: f64,
    /// Counters that changed: increases, resets, saturations.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub changes: Vec<crate::counters::delta::Delta>,
    /// Whether the source counts link-down events at all (an Ethernet
    /// link-down counter was printed), so that none counted in a window
    /// can be told from a device that cannot count them (a veth).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub counts_link_down: bool,
    /// Why the window has no changes to show (a snapshot not read).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The raw snapshots, relative to the run directory.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub raw: Vec<String>,
}

/// One counter read of one device, taken by the sampler inside a round.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CounterRecord {
    pub test: String,
    pub round: usize,
    pub rep: u32,
    /// Why nothing could be read (host unreachable, output not parsable).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    pub snapshot: crate::counters::Snapshot,
}

/// What one check saw on one component. Audit checks (configuration,
/// optics, cabling) and counter rules produce findings; the check has
/// already compared what it read with what was expected (the inventory's
/// profile and versions, the majority of its peers), and `score::findings`
/// decides what each outcome means for the gate (`gate.not_available`,
/// `gate.require`, observe-only rules).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    /// The test it belongs to: the audit test, or the traffic test whose
    /// round a counter window covered.
    pub test: String,
    /// Dotted check name: `nic.firmware`, `nic.pfc`, `switch.ecn`,
    /// `cabling.swap`, `optics.rx_power`, `counters.lossless_drops`.
    pub check: String,
    /// Where it was seen, in inventory names: `gpu015:mlx5_0`,
    /// `r5-leaf1:swp3`, `r5-leaf1`, or a cable `gpu012:mlx5_2 <-> r2-leaf1:swp12`.
    pub component: String,
    /// The node or switch the reads ran on.
    pub host: String,
    pub outcome: Outcome,
    /// What was read, as text a person compares (`28.37.1014`, `3,4`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed: Option<String>,
    /// What the inventory, profile or peers say it should be.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected: Option<String>,
    /// One sentence for a person: what is wrong (or why it could not be
    /// read) and the numbers.
    pub message: String,
    /// The commands tried, in order (for `not_available`: every one of them).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sources: Vec<String>,
    /// Whether the check needs root on its host.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub needs_root: bool,
    /// Where in the test it was seen (counter windows); `None` for the audit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub round: Option<usize>,
    /// Raw outputs it was read from, relative to the run directory.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub evidence: Vec<String>,
}

/// What a check concluded about one component.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// As expected.
    Ok,
    /// Not as expected, but not clearly wrong (a firmware tie with no
    /// majority, a value near its limit).
    Warning,
    /// Not as expected: the component is misconfigured or misbehaving.
    Deviation,
    /// No source could answer (tool missing, counter absent, needs root);
    /// the message names the commands tried.
    NotAvailable,
    /// The read failed (host unreachable, output damaged).
    Error,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Ok => "ok",
            Outcome::Warning => "warning",
            Outcome::Deviation => "deviation",
            Outcome::NotAvailable => "not available",
            Outcome::Error => "error",
        }
    }
}

/// The run's `run_started` record, if the log has one.
pub fn run_started(records: &[Record]) -> Option<&RunStarted> {
    records.iter().find_map(|r| match r {
        Record::RunStarted(s) => Some(s),
        _ => None,
    })
}

/// The run's `run_finished` record; absent when the run was killed.
pub fn run_finished(records: &[Record]) -> Option<&RunFinished> {
    records.iter().find_map(|r| match r {
        Record::RunFinished(f) => Some(f),
        _ => None,
    })
}

/// Which raw file of a round an output is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RawPart {
    /// The round's step at this index; past the last step, what ran beside
    /// the steps (a fault's own commands).
    Step(usize),
    /// The counter ledger's closing snapshot, of the hosts its rules named.
    Ledger,
}

/// Commands' output as they ran, for the run directory's `raw/`, where
/// samples, findings and ledger records point at it. Not a line of
/// results.jsonl: the raw file is its record.
#[derive(Debug, Clone, Copy)]
pub struct RawOutput<'a> {
    pub test: &'a str,
    pub round: usize,
    pub rep: u32,
    pub part: RawPart,
    pub commands: &'a crate::exec::StepCommands,
    pub outputs: &'a [crate::exec::InvocationOutput],
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InputFile {
    pub path: String,
    pub sha256: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlannedTest {
    pub name: String,
    pub kind: String,
    pub pattern: String,
    pub rounds: usize,
    pub steps: usize,
    pub repeat: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metric: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unit: Option<String>,
    pub estimate_s: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunStarted {
    pub rocegate_version: String,
    pub suite: String,
    pub fabric: String,
    pub environment: String,
    pub transport: String,
    pub seed: u64,
    /// The id the run holds the fabric's lock and journals its faults
    /// under (`<stamp>-<pid>`); empty in logs written before it was kept.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub run_id: String,
    /// UTC, RFC 3339.
    pub started_at: String,
    pub inventory: InputFile,
    pub suite_file: InputFile,
    pub gate_fail_on: Vec<String>,
    /// Checks recorded but never gating (`gate.observe_only`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gate_observe_only: Vec<String>,
    pub tests: Vec<PlannedTest>,
    pub estimate_s: f64,
    pub coverage: serde_json::Value,
    #[serde(default)]
    pub disruptive: serde_json::Value,
    /// The command line's narrowing (`--only …`, `--nodes …`,
    /// `--skip-faults`) when the run covers less than the whole suite on
    /// the whole pod.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partial: Option<String>,
    /// Where every NIC and switch sits, so that localisation
    /// (`score::suspects`) is a function of the log alone.
    #[serde(default, skip_serializing_if = "Topology::is_empty")]
    pub topology: Box<Topology>,
    /// The inventory and suite as the run read them, and its narrowing,
    /// so `rocegate report` re-judges with exactly these.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inputs: Option<Box<RunInputs>>,
    /// Set by `rocegate report --suite`: the verdicts are not the run's own
    /// but the recorded samples judged against this suite.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rejudged_with: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RunInputs {
    pub inventory: String,
    pub suite: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub only: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nodes: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exclude: Option<String>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub skip_faults: bool,
}

/// The inventory's shape, in names: which node, rail and leaf port each NIC
/// has, what each switch is, and the switch-to-switch cables.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Topology {
    pub nics: Vec<TopoNic>,
    pub switches: Vec<TopoSwitch>,
    /// Switch-to-switch cables, each as its two ends (`leaf:port`,
    /// `spine:port`), the leaf end first where there is one.
    pub fabric_links: Vec<[String; 2]>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TopoNic {
    /// `node:device`.
    pub name: String,
    pub node: String,
    pub rail: u32,
    pub speed_gbps: u32,
    /// The leaf port it is cabled to, `switch:port`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TopoSwitch {
    pub name: String,
    /// `leaf` or `spine`.
    pub role: String,
}

impl Topology {
    pub fn is_empty(&self) -> bool {
        self.nics.is_empty() && self.switches.is_empty()
    }

    pub fn of(inv: &crate::config::model::Inventory) -> Topology {
        use crate::config::inventory::SwitchRole;
        use crate::config::model::End;
        let nics = (0..inv.nics.len())
            .map(|n| {
                let nic = &inv.nics[n];
                TopoNic {
                    name: inv.nic_name(n),
                    node: inv.nodes[nic.node].name.clone(),
                    rail: nic.rail,
                    speed_gbps: nic.speed_gbps,
                    port: inv
                        .nic_leaf(n)
                        .map(|(s, p)| format!("{}:{p}", inv.switches[s].name)),
                }
            })
            .collect();
        let role = |s: usize| inv.switches[s].role;
        let switches = inv
            .switches
            .iter()
            .map(|s| TopoSwitch {
                name: s.name.clone(),
                role: match s.role {
                    SwitchRole::Leaf => "leaf",
                    SwitchRole::Spine => "spine",
                }
                .into(),
            })
            .collect();
        let fabric_links = inv
            .links
            .iter()
            .filter_map(|l| match (&l.a, &l.b) {
                (End::Port { switch: a, .. }, End::Port { switch: b, .. }) => {
                    let (x, y) = (inv.end_name(&l.a), inv.end_name(&l.b));
                    Some(
                        if role(*a) != SwitchRole::Leaf && role(*b) == SwitchRole::Leaf {
                            [y, x]
                        } else {
                            [x, y]
                        },
                    )
                }
                _ => None,
            })
            .collect();
        Topology {
            nics,
            switches,
            fabric_links,
        }
    }
}

/// One execution of one step (a repetition of a round).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Sample {
    pub test: String,
    pub component: String,
    pub round: usize,
    pub rep: u32,
    pub step: usize,
    /// Seconds since the run started (virtual on the emulated fabric).
    pub started_s: f64,
    pub ended_s: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure: Option<StepFailure>,
    /// Raw output files, relative to the run directory.
    pub raw: Vec<String>,
    pub commands: Vec<String>,
    pub hosts: Vec<String>,
    /// Facts the parser read (unit, link type, MTU, NCCL transport, versions).
    #[serde(default, skip_serializing_if = "serde_json::Value::is_null")]
    pub details: serde_json::Value,
    /// The workload's time series, `(end of interval, value)` on the run's
    /// clock, where the tool gave one (iperf3 `-i`, perftest windows,
    /// nccl-tests cycles).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub series: Vec<(f64, f64)>,
}

/// The verdict on one component of one test.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VerdictRecord {
    pub test: String,
    pub kind: String,
    pub component: String,
    pub verdict: Verdict,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metric: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unit: Option<String>,
    pub threshold: Resolved,
    pub samples: Vec<f64>,
    pub message: String,
    /// Raw output files of the samples, relative to the run directory.
    pub evidence: Vec<String>,
    pub duration_s: f64,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub series: Vec<(f64, f64)>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunFinished {
    pub ended_at: String,
    pub interrupted: bool,
    pub counts: Counts,
    pub gate_passed: bool,
    pub exit_code: i32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// Whether a run's log is the whole run, and if not, why and what did not
/// run. Every output (JUnit, HTML, summary.json, `rocegate report`) asks
/// this one function, so they cannot disagree about a cut-short run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Completeness {
    pub complete: bool,
    /// Why the run is incomplete; `None` when it is complete.
    pub reason: Option<String>,
    /// Planned tests without a single verdict, in plan order.
    pub not_run: Vec<String>,
}

pub fn completeness(records: &[Record]) -> Completeness {
    let judged: std::collections::HashSet<&str> = records
        .iter()
        .filter_map(|r| match r {
            Record::Verdict(v) => Some(v.test.as_str()),
            _ => None,
        })
        .collect();
    let not_run: Vec<String> = run_started(records)
        .map(|s| {
            s.tests
                .iter()
                .filter(|t| !judged.contains(t.name.as_str()))
                .map(|t| t.name.clone())
                .collect()
        })
        .unwrap_or_default();
    let reason = match run_finished(records) {
        None => Some(
            "the run did not finish: results.jsonl has no run_finished record (rocegate was killed, crashed, or could not write its results)"
                .to_string(),
        ),
        Some(f) if f.interrupted || f.exit_code == crate::exit::INCOMPLETE => Some(
            f.reason
                .clone()
                .unwrap_or_else(|| "the run was interrupted".to_string()),
        ),
        Some(_) if run_started(records).is_none() => {
            Some("results.jsonl has no run_started record".to_string())
        }
        Some(_) => None,
    };
    Completeness {
        complete: reason.is_none(),
        reason,
        not_run,
    }
}

impl Completeness {
    /// One paragraph for a person: why, and which tests did not run.
    pub fn describe(&self) -> String {
        let mut s = format!(
            "run incomplete: {}",
            self.reason.as_deref().unwrap_or("the run finished")
        );
        if self.not_run.is_empty() {
            s += "; every planned test has at least one verdict, but verdicts may be missing or judged on part of their samples";
        } else {
            s += &format!(
                "; {} planned test(s) have no verdict: {}",
                self.not_run.len(),
                self.not_run.join(", ")
            );
        }
        s
    }
}
