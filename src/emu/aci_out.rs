//! What the emulated pod's APIC answers: the REST calls of the `aci`
//! platform (`GET`, `POST`, `DELETE` on `/api/mo/<dn>.json` and
//! `/api/class/<class>.json`), computed from the same model the other
//! switches print from. The APIC serves the whole fabric: a call names its
//! switch in the DN (`topology/pod-P/node-N`), and `{pod}`/`{node}` in a
//! call are filled in for the switch it was sent for, as the HTTPS
//! transport does.
//!
//! The management information tree is built from the model for each
//! request, only as deep as the DN asked for needs: `uni` (the QoS
//! instance policy with its six classes, the interface PFC policies, a
//! custom QoS policy mapping the profile's DSCPs to classes, the
//! out-of-service objects, configuration export policies and their
//! snapshots) and `topology` (per switch `topSystem`, each port's
//! `l1PhysIf` with `ethpmPhysIf`, RMON counters, its PFC policy relation
//! and drop statistics, LLDP adjacencies, per-class `qosmIfClass`
//! counters). Query options (`query-target`, `target-subtree-class`,
//! `rsp-subtree`, `rsp-subtree-class`, `rsp-subtree-include=stats`,
//! `query-target-filter`) are applied to that tree generically.
//!
//! Changes: a `fabricRsOosPath` created takes its port down (admin down,
//! both ends lose link, as a shutdown); deleting the last one on a port
//! brings it back. A `configExportP` POSTed with `snapshot=yes` and
//! `adminSt=triggered` records a snapshot at the virtual time.
//!
//! It parses no answer and decides nothing: `switch::aci` does. Shapes and
//! class names follow ../shared/research/aci.md (and the sources it cites,
//! as tests/switch_api/apic.py does); values are the model's.

use serde_json::{json, Map, Value};

use crate::config::inventory::{SwitchDriver, SwitchRole};
use crate::config::model::{Inventory, LinkKind, SwitchId};
use crate::exec::apicall::{Call, CallResult};
use crate::switch::aci::normalise_port;

use super::api_out::{count, name_mac, ApiCall, ApiCmd, Ctx, Kind, Op, BOOT_UPTIME_S};
use super::batch::XOFF_BYTES;
use super::iperf_run::EPOCH_UNIX;
use super::state::Neighbor;
use super::Parsed;

/// The ACI switch software the emulated switches run unless the
/// inventory's `versions.nos` names one.
const ACI_VERSION: &str = "n9000-16.0(3e)";
/// The QoS levels the profile's traffic is classified into (the custom
/// QoS policy below): RoCE in level2 (as Cisco's RoCEv2 ACI example,
/// aci.md §3.7), CNPs in level1 (strict priority), everything else in
/// level3, ACI's default class.
const ROCE_LEVEL: u8 = 2;
const CNP_LEVEL: u8 = 1;
const DEFAULT_LEVEL: u8 = 3;
/// Where the custom QoS policy lives: tenant `common`, usable by every
/// tenant's EPGs.
const QOS_CUSTOM: &str = "uni/tn-common/qoscustom-RoCEv2";
/// The interface PFC policies: the one bound to ports with PFC on the RoCE
/// priority, and the one a port with PFC off is bound to.
const PFC_ON: &str = "PFC-ON";
const PFC_OFF: &str = "PFC-OFF";
const OOS_PREFIX: &str = "uni/fabric/outofsvc/rsoosPath-[";

/// What the APIC keeps besides the fabric and the counters.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AciState {
    /// Out-of-service objects, in creation order.
    pub oos: Vec<Oos>,
    /// Configuration export policies, by name, with their snapshots.
    pub exports: Vec<Export>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Oos {
    pub tdn: String,
    pub annotation: String,
    /// The port index it takes out of service.
    pub port: usize,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Export {
    pub name: String,
    /// The attributes it was last POSTed with.
    pub attrs: Map<String, Value>,
    /// Virtual times of its snapshots.
    pub snapshots: Vec<f64>,
}

/// `(pod, node)` of a switch at its APIC.
pub fn place(inv: &Inventory, s: SwitchId) -> Option<(u32, u32)> {
    let api = inv.switches[s].api.as_ref()?;
    api.node.map(|n| (api.pod.unwrap_or(1), n))
}

fn switch_at(inv: &Inventory, pod: u32, node: u32) -> Option<SwitchId> {
    (0..inv.switches.len()).find(|&s| {
        inv.switches[s].driver == SwitchDriver::Aci && place(inv, s) == Some((pod, node))
    })
}

fn aci_switches(inv: &Inventory) -> Vec<SwitchId> {
    (0..inv.switches.len())
        .filter(|&s| inv.switches[s].driver == SwitchDriver::Aci && place(inv, s).is_some())
        .collect()
}

/// The calls of an invocation on switch `sw`, with `{pod}` and `{node}`
/// filled in for it.
pub fn parse(inv: &Inventory, sw: SwitchId, calls: &[Call]) -> Parsed {
    let fill = |s: &str| match place(inv, sw) {
        Some((pod, node)) => s
            .replace("{pod}", &pod.to_string())
            .replace("{node}", &node.to_string()),
        None => s.to_string(),
    };
    let calls = calls
        .iter()
        .map(|c| {
            Ok(ApiCall {
                kind: Kind::Apic {
                    method: c.method.to_ascii_uppercase(),
                },
                cmds: vec![fill(&c.path), fill(&c.body)],
            })
        })
        .collect();
    Parsed::Api(Box::new(ApiCmd { switch: sw, calls }))
}

// ------------------------------------------------------------- answers

type Refusal = (u16, String, String);

fn answer(items: Vec<Value>) -> CallResult {
    CallResult {
        status: 200,
        body: json!({"totalCount": items.len().to_string(), "imdata": items}).to_string(),
    }
}

fn refusal((status, code, text): Refusal) -> CallResult {
    CallResult {
        status,
        body: json!({"totalCount": "1", "imdata": [{"error": {"attributes": {"code": code, "text": text}}}]})
            .to_string(),
    }
}

fn bad(code: &str, text: String) -> Refusal {
    (400, code.to_string(), text)
}

/// `%22` → `"`, `%5B` → `[`: the percent escapes of a path or a query.
fn decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = (b[i] == b'%' && i + 2 < b.len())
            .then(|| std::str::from_utf8(&b[i + 1..i + 3]).ok())
            .flatten();
        if let Some(h) = hex {
            if let Ok(v) = u8::from_str_radix(h, 16) {
                out.push(v);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Answers one REST call.
pub fn call(ctx: &mut Ctx, _s: SwitchId, call: &ApiCall) -> CallResult {
    let Kind::Apic { method } = &call.kind else {
        return refusal(bad("400", "not an APIC request".into()));
    };
    let path = call.cmds.first().map(String::as_str).unwrap_or_default();
    let body = call.cmds.get(1).map(String::as_str).unwrap_or_default();
    match request(ctx, method, path, body) {
        Ok(items) => answer(items),
        Err(r) => refusal(r),
    }
}

enum Target<'a> {
    Mo(String),
    Class {
        scope: Option<String>,
        class: &'a str,
    },
}

fn request(ctx: &mut Ctx, method: &str, path: &str, body: &str) -> Result<Vec<Value>, Refusal> {
    let (base, query) = path.split_once('?').unwrap_or((path, ""));
    let base = decode(base);
    let rest = base
        .strip_prefix("/api/node/")
        .or_else(|| base.strip_prefix("/api/"))
        .ok_or_else(|| bad("400", format!("Request failed, unknown API path {base}")))?;
    let (rest, json) = match rest.strip_suffix(".json") {
        Some(r) => (r, true),
        None => (rest.strip_suffix(".xml").unwrap_or(rest), false),
    };
    if !json {
        return Err(bad(
            "400",
            format!("Request failed, the emulated APIC answers JSON only: {base}"),
        ));
    }
    let target = if let Some(dn) = rest.strip_prefix("mo/") {
        Target::Mo(dn.to_string())
    } else if let Some(c) = rest.strip_prefix("class/") {
        match c.rsplit_once('/') {
            Some((scope, class)) => Target::Class {
                scope: Some(scope.to_string()),
                class,
            },
            None => Target::Class {
                scope: None,
                class: c,
            },
        }
    } else {
        return Err(bad(
            "400",
            format!("Request failed, unknown API path {base}"),
        ));
    };
    match (method, target) {
        ("GET", Target::Mo(dn)) => {
            let opts = Opts::parse(query)?;
            Ok(find(ctx, &dn).map_or_else(Vec::new, |mo| opts.select(vec![mo], true)))
        }
        ("GET", Target::Class { scope, class }) => {
            let opts = Opts::parse(query)?;
            let Some(home) = known(class) else {
                return Err(bad(
                    "400",
                    format!("Request failed, unresolved class for {class}"),
                ));
            };
            let roots = match &scope {
                Some(dn) => find(ctx, dn).into_iter().collect(),
                None => roots(ctx, home),
            };
            let mut found = Vec::new();
            for r in &roots {
                r.collect(class, &mut found);
            }
            Ok(opts.select(found.into_iter().cloned().collect(), false))
        }
        ("POST", Target::Mo(dn)) => post(ctx, &dn, body),
        ("DELETE", Target::Mo(dn)) => delete(ctx, &dn),
        (m, _) => Err(bad(
            "400",
            format!("Request failed, method {m} is not allowed on {base}"),
        )),
    }
}

// ------------------------------------------------------------- options

#[derive(Debug, Clone, Copy, PartialEq)]
enum Scope {
    Self_,
    Children,
    Subtree,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Rsp {
    No,
    Children,
    Full,
}

/// A `query-target-filter`.
#[derive(Debug, Clone, PartialEq)]
enum Filter {
    Eq(String, String, String),
    Ne(String, String, String),
    Wcard(String, String, String),
    And(Vec<Filter>),
    Or(Vec<Filter>),
    Not(Box<Filter>),
}

impl Filter {
    fn parse(s: &str) -> Option<Filter> {
        let s = s.trim();
        let (op, inner) = s.split_once('(')?;
        let inner = inner.strip_suffix(')')?;
        let args = split_args(inner);
        let prop = |args: &[String]| -> Option<(String, String, String)> {
            let [p, v] = args else { return None };
            let (c, a) = p.trim().split_once('.')?;
            let v = v.trim().strip_prefix('"')?.strip_suffix('"')?;
            Some((c.to_string(), a.to_string(), v.to_string()))
        };
        Some(match op.trim() {
            "eq" => {
                let (c, a, v) = prop(&args)?;
                Filter::Eq(c, a, v)
            }
            "ne" => {
                let (c, a, v) = prop(&args)?;
                Filter::Ne(c, a, v)
            }
            "wcard" => {
                let (c, a, v) = prop(&args)?;
                Filter::Wcard(c, a, v)
            }
            "and" => Filter::And(
                args.iter()
                    .map(|a| Filter::parse(a))
                    .collect::<Option<_>>()?,
            ),
            "or" => Filter::Or(
                args.iter()
                    .map(|a| Filter::parse(a))
                    .collect::<Option<_>>()?,
            ),
            "not" => match args.as_slice() {
                [a] => Filter::Not(Box::new(Filter::parse(a)?)),
                _ => return None,
            },
            _ => return None,
        })
    }

    fn holds(&self, mo: &Mo) -> bool {
        let prop = |c: &str, a: &str| -> Option<String> {
            (mo.class == c).then(|| mo.attrs.get(a).and_then(Value::as_str).map(str::to_string))?
        };
        match self {
            Filter::Eq(c, a, v) => prop(c, a).is_some_and(|x| x == *v),
            Filter::Ne(c, a, v) => prop(c, a).is_some_and(|x| x != *v),
            // A wildcard match; the APIC's clients escape a bracket
            // (`eth1/1\]`) as in a regular expression: matched literally.
            Filter::Wcard(c, a, v) => prop(c, a).is_some_and(|x| x.contains(&v.replace('\\', ""))),
            Filter::And(f) => f.iter().all(|f| f.holds(mo)),
            Filter::Or(f) => f.iter().any(|f| f.holds(mo)),
            Filter::Not(f) => !f.holds(mo),
        }
    }
}

/// The arguments of a filter operator, split at top-level commas outside
/// quotes.
fn split_args(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let (mut depth, mut quoted, mut cur) = (0i32, false, String::new());
    for c in s.chars() {
        match c {
            '"' => quoted = !quoted,
            '(' if !quoted => depth += 1,
            ')' if !quoted => depth -= 1,
            ',' if !quoted && depth == 0 => {
                out.push(std::mem::take(&mut cur));
                continue;
            }
            _ => {}
        }
        cur.push(c);
    }
    out.push(cur);
    out
}

#[derive(Debug, Clone)]
struct Opts {
    target: Scope,
    target_classes: Option<Vec<String>>,
    rsp: Rsp,
    rsp_classes: Option<Vec<String>>,
    stats: bool,
    filter: Option<Filter>,
}

fn classes(v: &str) -> Vec<String> {
    v.split(',')
        .map(|c| c.trim().to_string())
        .filter(|c| !c.is_empty())
        .collect()
}

impl Opts {
    fn parse(query: &str) -> Result<Opts, Refusal> {
        let mut o = Opts {
            target: Scope::Self_,
            target_classes: None,
            rsp: Rsp::No,
            rsp_classes: None,
            stats: false,
            filter: None,
        };
        for kv in query.split('&').filter(|kv| !kv.is_empty()) {
            let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
            let v = decode(v);
            let invalid = || bad("400", format!("Invalid value {v} for {k}"));
            match k {
                "query-target" => {
                    o.target = match v.as_str() {
                        "self" => Scope::Self_,
                        "children" => Scope::Children,
                        "subtree" => Scope::Subtree,
                        _ => return Err(invalid()),
                    }
                }
                "target-subtree-class" => o.target_classes = Some(classes(&v)),
                "rsp-subtree" => {
                    o.rsp = match v.as_str() {
                        "no" => Rsp::No,
                        "children" => Rsp::Children,
                        "full" => Rsp::Full,
                        _ => return Err(invalid()),
                    }
                }
                "rsp-subtree-class" => o.rsp_classes = Some(classes(&v)),
                "rsp-subtree-include" => {
                    o.stats = v.split(',').any(|x| x.trim() == "stats");
                }
                "query-target-filter" => {
                    o.filter = Some(
                        Filter::parse(&v)
                            .ok_or_else(|| bad("121", format!("Invalid filter {v}")))?,
                    )
                }
                // Paging, ordering, subscriptions: nothing to do here.
                _ => {}
            }
        }
        Ok(o)
    }

    fn named(list: &Option<Vec<String>>, class: &str) -> bool {
        list.as_ref().is_some_and(|l| l.iter().any(|c| c == class))
    }

    /// The objects a query answers: `mos` (the DN's object, or a class's
    /// objects), moved by `query-target`, filtered, with the subtree the
    /// options ask for.
    fn select(&self, mos: Vec<Mo>, by_dn: bool) -> Vec<Value> {
        let wanted = |m: &Mo| match &self.target_classes {
            Some(l) => l.iter().any(|c| *c == m.class),
            None => !m.stats,
        };
        let picked: Vec<Mo> = match (by_dn, self.target) {
            (false, _) | (true, Scope::Self_) => mos,
            (true, Scope::Children) => mos
                .into_iter()
                .flat_map(|m| m.kids)
                .filter(|k| wanted(k))
                .collect(),
            (true, Scope::Subtree) => {
                let mut all = Vec::new();
                for m in &mos {
                    m.walk(&mut all);
                }
                all.into_iter().filter(|k| wanted(k)).cloned().collect()
            }
        };
        picked
            .iter()
            .filter(|m| self.filter.as_ref().is_none_or(|f| f.holds(m)))
            .map(|m| self.render(m))
            .collect()
    }

    fn render(&self, mo: &Mo) -> Value {
        let kids: Vec<Value> = match self.rsp {
            Rsp::No => Vec::new(),
            Rsp::Children => mo
                .kids
                .iter()
                .filter(|k| !k.stats && self.rsp_keeps(k))
                .map(|k| k.json(Vec::new()))
                .collect(),
            Rsp::Full => mo
                .kids
                .iter()
                .filter(|k| !k.stats)
                .filter_map(|k| self.pruned(k))
                .collect(),
        };
        let mut kids = kids;
        if self.stats {
            kids.extend(
                mo.kids
                    .iter()
                    .filter(|k| k.stats && (self.rsp_classes.is_none() || self.rsp_keeps(k)))
                    .map(|k| k.json(Vec::new())),
            );
        } else if self.rsp == Rsp::No {
            // Statistics named in rsp-subtree-class come without
            // rsp-subtree-include too.
            kids.extend(
                mo.kids
                    .iter()
                    .filter(|k| k.stats && Self::named(&self.rsp_classes, k.class))
                    .map(|k| k.json(Vec::new())),
            );
        }
        mo.json(kids)
    }

    fn rsp_keeps(&self, k: &Mo) -> bool {
        self.rsp_classes
            .as_ref()
            .is_none_or(|l| l.iter().any(|c| *c == k.class))
    }

    /// `rsp-subtree=full`: a descendant is kept when its class is asked for
    /// or one below it is.
    fn pruned(&self, mo: &Mo) -> Option<Value> {
        let kids: Vec<Value> = mo
            .kids
            .iter()
            .filter(|k| !k.stats)
            .filter_map(|k| self.pruned(k))
            .collect();
        (self.rsp_keeps(mo) || !kids.is_empty()).then(|| mo.json(kids))
    }
}

// ----------------------------------------------------------------- tree

/// One managed object.
#[derive(Debug, Clone)]
struct Mo {
    class: &'static str,
    attrs: Map<String, Value>,
    kids: Vec<Mo>,
    /// A statistics object: returned only when asked for by class or with
    /// `rsp-subtree-include=stats`.
    stats: bool,
}

impl Mo {
    fn new(class: &'static str, dn: &str, attrs: Value) -> Mo {
        let mut m = Map::new();
        m.insert("dn".into(), Value::String(dn.to_string()));
        if let Value::Object(a) = attrs {
            for (k, v) in a {
                let v = match v {
                    Value::String(s) => Value::String(s),
                    // The APIC writes every attribute as a string.
                    Value::Number(n) => Value::String(n.to_string()),
                    Value::Bool(b) => Value::String(if b { "yes" } else { "no" }.into()),
                    other => other,
                };
                m.insert(k, v);
            }
        }
        Mo {
            class,
            attrs: m,
            kids: Vec::new(),
            stats: false,
        }
    }

    fn with(mut self, kids: Vec<Mo>) -> Mo {
        self.kids = kids;
        self
    }

    fn dn(&self) -> &str {
        self.attrs
            .get("dn")
            .and_then(Value::as_str)
            .unwrap_or_default()
    }

    fn json(&self, kids: Vec<Value>) -> Value {
        let mut o = Map::new();
        o.insert("attributes".into(), Value::Object(self.attrs.clone()));
        if !kids.is_empty() {
            o.insert("children".into(), Value::Array(kids));
        }
        json!({ self.class: o })
    }

    fn walk<'a>(&'a self, out: &mut Vec<&'a Mo>) {
        out.push(self);
        for k in &self.kids {
            k.walk(out);
        }
    }

    fn collect<'a>(&'a self, class: &str, out: &mut Vec<&'a Mo>) {
        if self.class == class {
            out.push(self);
        }
        for k in &self.kids {
            k.collect(class, out);
        }
    }

    fn take(self, dn: &str) -> Option<Mo> {
        if self.dn() == dn {
            return Some(self);
        }
        self.kids.into_iter().find_map(|k| {
            let d = k.dn().to_string();
            // Only down the branch the DN is under.
            if dn == d || dn.starts_with(&format!("{d}/")) || d.is_empty() {
                k.take(dn)
            } else {
                None
            }
        })
    }
}

/// Where the objects of a class live.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Home {
    Uni,
    Topology,
}

/// Every class this APIC models and where its objects are.
const CLASSES: &[(&str, Home)] = &[
    ("polUni", Home::Uni),
    ("infraInfra", Home::Uni),
    ("qosInstPol", Home::Uni),
    ("qosClass", Home::Uni),
    ("qosCong", Home::Uni),
    ("qosPfcPol", Home::Uni),
    ("qosSched", Home::Uni),
    ("qosQueue", Home::Uni),
    ("qosBuffer", Home::Uni),
    ("qosPfcIfPol", Home::Uni),
    ("fvTenant", Home::Uni),
    ("qosCustomPol", Home::Uni),
    ("qosDscpClass", Home::Uni),
    ("fabricInst", Home::Uni),
    ("fabricOOServicePol", Home::Uni),
    ("fabricRsOosPath", Home::Uni),
    ("configExportP", Home::Uni),
    ("configSnapshotCont", Home::Uni),
    ("configSnapshot", Home::Uni),
    ("fabricTopology", Home::Topology),
    ("fabricPod", Home::Topology),
    ("fabricNode", Home::Topology),
    ("topSystem", Home::Topology),
    ("l1PhysIf", Home::Topology),
    ("ethpmPhysIf", Home::Topology),
    ("rmonIfIn", Home::Topology),
    ("rmonIfOut", Home::Topology),
    ("rmonDot3Stats", Home::Topology),
    ("l1RsQosPfcIfPolCons", Home::Topology),
    ("eqptIngrDropPkts5min", Home::Topology),
    ("eqptEgrDropPkts5min", Home::Topology),
    ("lldpEntity", Home::Topology),
    ("lldpInst", Home::Topology),
    ("lldpIf", Home::Topology),
    ("lldpAdjEp", Home::Topology),
    ("qosmEntity", Home::Topology),
    ("qosmIf", Home::Topology),
    ("qosmIfClass", Home::Topology),
];

fn known(class: &str) -> Option<Home> {
    CLASSES.iter().find(|(c, _)| *c == class).map(|(_, h)| *h)
}

fn roots(ctx: &Ctx, home: Home) -> Vec<Mo> {
    match home {
        Home::Uni => vec![uni(ctx)],
        Home::Topology => vec![topology(ctx)],
    }
}

/// The object at `dn` with its subtree, built only as deep as needed.
fn find(ctx: &Ctx, dn: &str) -> Option<Mo> {
    let dn = dn.trim_end_matches('/');
    if let Some(rest) = dn.strip_prefix("topology/pod-") {
        let (pod, rest) = rest.split_once("/node-").unwrap_or((rest, ""));
        let (node, rest) = rest.split_once('/').unwrap_or((rest, ""));
        if let (Ok(pod), Ok(node)) = (pod.parse(), node.parse()) {
            let s = switch_at(ctx.inv, pod, node)?;
            let sys = format!("topology/pod-{pod}/node-{node}/sys");
            let root = if let Some(p) = rest
                .strip_prefix("sys/phys-[")
                .and_then(|r| r.split(']').next())
            {
                port_mo(ctx, s, &sys, ctx.port(s, p, normalise_port)?)
            } else if let Some(p) = rest
                .strip_prefix("sys/qosm/if-[")
                .and_then(|r| r.split(']').next())
            {
                qosm_if(ctx, &sys, ctx.port(s, p, normalise_port)?)
            } else if rest.starts_with("sys/lldp") {
                lldp(ctx, s, &sys)
            } else if rest.starts_with("sys/qosm") {
                qosm(ctx, s, &sys)
            } else {
                node_mo(ctx, s)
            };
            return root.take(dn);
        }
        return topology(ctx).take(dn);
    }
    if dn == "topology" {
        return Some(topology(ctx));
    }
    if dn.starts_with("uni/infra") {
        return infra(ctx).take(dn);
    }
    uni(ctx).take(dn)
}

// ----------------------------------------------------------- uni: policy

fn uni(ctx: &Ctx) -> Mo {
    let snapshots = ctx
        .world
        .api
        .aci
        .exports
        .iter()
        .filter(|e| !e.snapshots.is_empty())
        .map(snapshots)
        .collect::<Vec<_>>();
    let mut kids = vec![
        infra(ctx),
        fabric_inst(ctx),
        Mo::new("fvTenant", "uni/tn-common", json!({"name": "common"})).with(vec![custom_qos(ctx)]),
    ];
    kids.extend(snapshots);
    Mo::new("polUni", "uni", json!({})).with(kids)
}

fn infra(ctx: &Ctx) -> Mo {
    let mut kids = vec![qos_inst(ctx)];
    for (name, st) in [("default", "auto"), (PFC_ON, "on"), (PFC_OFF, "off")] {
        kids.push(Mo::new(
            "qosPfcIfPol",
            &format!("uni/infra/pfc-{name}"),
            json!({"name": name, "adminSt": st, "descr": ""}),
        ));
    }
    Mo::new("infraInfra", "uni/infra", json!({})).with(kids)
}

/// The ports of every ACI switch.
fn aci_ports(ctx: &Ctx) -> Vec<usize> {
    aci_switches(ctx.inv)
        .into_iter()
        .flat_map(|s| ctx.ports(s))
        .collect()
}

/// The most common value among the ACI ports (the fabric-wide policy is
/// the one most ports carry); `None` without ports.
fn majority<T: PartialEq + Clone>(vals: impl Iterator<Item = T>) -> Option<T> {
    let mut counts: Vec<(T, usize)> = Vec::new();
    for v in vals {
        match counts.iter_mut().find(|(x, _)| *x == v) {
            Some(c) => c.1 += 1,
            None => counts.push((v, 1)),
        }
    }
    counts
        .into_iter()
        .rev()
        .max_by_key(|(_, n)| *n)
        .map(|(v, _)| v)
}

/// The six QoS classes. The RoCE class's PFC is on (no-drop on the RoCE
/// CoS) when any ACI port runs PFC on the RoCE priority: the class policy
/// is fabric-wide, and a port with PFC off shows it in its own interface
/// policy (`l1RsQosPfcIfPolCons`). WRED/ECN thresholds are the ports'
/// (most common) ECN setting, in percent of the lossless queue.
fn qos_inst(ctx: &Ctx) -> Mo {
    let prio = usize::from(ctx.world.roce_prio);
    let ports = aci_ports(ctx);
    let pfc_on = ports.iter().any(|&p| ctx.world.port_cfg[p].pfc[prio]);
    let ecn = majority(ports.iter().map(|&p| ctx.world.port_cfg[p].ecn[prio]))
        .flatten()
        .or_else(|| {
            // No ACI port: the profile's.
            ctx.inv.fabric.roce.ecn.as_ref().map(|e| {
                (
                    u64::from(e.min_kb) * 1024,
                    u64::from(e.max_kb) * 1024,
                    super::world::ECN_PMAX_PCT,
                )
            })
        });
    let pct = |b: u64| ((b as f64 * 100.0 / XOFF_BYTES).round() as u64).min(100);
    let base = "uni/infra/qosinst-default";
    let classes = (1..=6u8)
        .map(|level| {
            let dn = format!("{base}/class-level{level}");
            let roce = level == ROCE_LEVEL;
            let cong = match ecn.filter(|_| roce) {
                Some((lo, hi, p)) => json!({
                    "algo": "wred", "ecn": "enabled", "forwardNonEcn": "enabled",
                    "wredMinThreshold": pct(lo), "wredMaxThreshold": pct(hi),
                    "wredProbability": p, "wredWeight": 0,
                }),
                None => json!({
                    "algo": "tail-drop", "ecn": "disabled", "forwardNonEcn": "disabled",
                    "wredMinThreshold": 0, "wredMaxThreshold": 100,
                    "wredProbability": 0, "wredWeight": 0,
                }),
            };
            let (admin, cos, scope) = if roce && pfc_on {
                ("yes", format!("cos{prio}"), "fabric")
            } else {
                ("no", String::new(), "tor")
            };
            // Scheduling weights are not modelled: the CNP class is strict
            // priority, the RoCE class gets the weight of Cisco's RoCEv2
            // example (aci.md §3.7), the others ACI's default.
            let sched = match level {
                CNP_LEVEL => json!({"bw": 0, "meth": "sp"}),
                ROCE_LEVEL => json!({"bw": 60, "meth": "wrr"}),
                _ => json!({"bw": 20, "meth": "wrr"}),
            };
            Mo::new(
                "qosClass",
                &dn,
                json!({"prio": format!("level{level}"), "admin": "enabled", "mtu": 9216, "name": ""}),
            )
            .with(vec![
                Mo::new("qosCong", &format!("{dn}/cong"), cong),
                Mo::new(
                    "qosPfcPol",
                    &format!("{dn}/pfcpol-default"),
                    json!({"name": "default", "adminSt": admin, "noDropCos": cos, "enableScope": scope}),
                ),
                Mo::new("qosSched", &format!("{dn}/sched"), sched),
                Mo::new(
                    "qosQueue",
                    &format!("{dn}/queue"),
                    json!({"limit": 1522, "meth": "dynamic"}),
                ),
                Mo::new("qosBuffer", &format!("{dn}/buffer"), json!({"min": 0})),
            ])
        })
        .collect();
    Mo::new(
        "qosInstPol",
        base,
        json!({"name": "default", "ctrl": "", "FabricFlushSt": "no"}),
    )
    .with(classes)
}

/// A DSCP value as the APIC names it (`AF31`, `CS6`, `EF`), or its number.
pub fn dscp_name(v: u8) -> String {
    match v {
        46 => "EF".into(),
        44 => "VA".into(),
        v if v % 8 == 0 && v < 64 => format!("CS{}", v / 8),
        v if (10..=38).contains(&v) && v % 2 == 0 && (v % 8) / 2 >= 1 && (v % 8) / 2 <= 3 => {
            format!("AF{}{}", v / 8, (v % 8) / 2)
        }
        v => v.to_string(),
    }
}

/// The profile's classification: RoCE's DSCP into the RoCE level, the
/// CNPs' into theirs.
fn custom_qos(ctx: &Ctx) -> Mo {
    let roce = &ctx.inv.fabric.roce;
    // Each class also rewrites the CoS to the profile's priority, so that
    // the next hop (and the NIC) sees the priority PFC acts on.
    let class = |dscp: u8, level: u8, cos: u8| {
        let n = dscp_name(dscp);
        Mo::new(
            "qosDscpClass",
            &format!("{QOS_CUSTOM}/dcsp-{n}-{n}"),
            json!({"from": n, "to": n, "prio": format!("level{level}"),
                   "target": "unspecified", "targetCos": cos.min(7)}),
        )
    };
    Mo::new(
        "qosCustomPol",
        QOS_CUSTOM,
        json!({"name": QOS_CUSTOM.rsplit("qoscustom-").next().unwrap_or_default()}),
    )
    .with(vec![
        class(roce.dscp_roce, ROCE_LEVEL, roce.pfc_priority),
        class(roce.dscp_cnp, CNP_LEVEL, roce.cnp_priority),
    ])
}

fn oos_dn(tdn: &str) -> String {
    format!("{OOS_PREFIX}{tdn}]")
}

fn fabric_inst(ctx: &Ctx) -> Mo {
    let oos = ctx
        .world
        .api
        .aci
        .oos
        .iter()
        .map(|o| {
            Mo::new(
                "fabricRsOosPath",
                &oos_dn(&o.tdn),
                json!({
                    "tDn": o.tdn, "lc": "blacklist", "annotation": o.annotation,
                    "forceResolve": "yes", "rType": "mo", "state": "formed",
                    "stateQual": "none", "tCl": "fabricPathEp", "tType": "mo",
                }),
            )
        })
        .collect();
    let mut kids = vec![Mo::new(
        "fabricOOServicePol",
        "uni/fabric/outofsvc",
        json!({"name": "default"}),
    )
    .with(oos)];
    for e in &ctx.world.api.aci.exports {
        let mut m = Mo::new(
            "configExportP",
            &format!("uni/fabric/configexp-{}", e.name),
            json!({}),
        );
        for (k, v) in &e.attrs {
            if k != "dn" {
                m.attrs.insert(k.clone(), v.clone());
            }
        }
        m.attrs.insert("name".into(), Value::String(e.name.clone()));
        // A triggered export is done by the time anyone reads it.
        m.attrs
            .insert("adminSt".into(), Value::String("untriggered".into()));
        kids.push(m);
    }
    Mo::new("fabricInst", "uni/fabric", json!({"name": "default"})).with(kids)
}

fn snapshots(e: &Export) -> Mo {
    let target = format!("uni/fabric/configexp-{}", e.name);
    let cont = format!("uni/backupst/snapshots-[{target}]");
    let kids = e
        .snapshots
        .iter()
        .map(|&t| {
            let name = format!("run-{}", stamp(t).replace(':', "-"));
            Mo::new(
                "configSnapshot",
                &format!("{cont}/snapshot-{name}"),
                json!({"name": name, "createTime": iso(t), "retire": "no",
                       "fileName": format!("ce2_{}-{}.tar.gz", e.name, stamp(t).replace(':', "-")),
                       "descr": ""}),
            )
        })
        .collect();
    Mo::new("configSnapshotCont", &cont, json!({"target": target})).with(kids)
}

/// `2026-01-01T00:01:30` at virtual time `t`.
fn stamp(t: f64) -> String {
    let secs = EPOCH_UNIX + t.max(0.0).floor() as i64;
    match time::OffsetDateTime::from_unix_timestamp(secs) {
        Ok(d) => format!(
            "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}",
            d.year(),
            u8::from(d.month()),
            d.day(),
            d.hour(),
            d.minute(),
            d.second()
        ),
        Err(_) => "1970-01-01T00:00:00".into(),
    }
}

/// The APIC's time format: `2026-01-01T00:01:30.250+00:00`.
fn iso(t: f64) -> String {
    let ms = ((t.max(0.0) - t.max(0.0).floor()) * 1000.0).floor() as u32;
    format!("{}.{ms:03}+00:00", stamp(t))
}

// ------------------------------------------------------ topology: switches

fn topology(ctx: &Ctx) -> Mo {
    let mut pods: Vec<(u32, Vec<Mo>)> = Vec::new();
    for s in aci_switches(ctx.inv) {
        let Some((pod, _)) = place(ctx.inv, s) else {
            continue;
        };
        let n = node_mo(ctx, s);
        match pods.iter_mut().find(|(p, _)| *p == pod) {
            Some((_, v)) => v.push(n),
            None => pods.push((pod, vec![n])),
        }
    }
    let kids = pods
        .into_iter()
        .map(|(pod, nodes)| {
            Mo::new(
                "fabricPod",
                &format!("topology/pod-{pod}"),
                json!({"id": pod}),
            )
            .with(nodes)
        })
        .collect();
    Mo::new("fabricTopology", "topology", json!({})).with(kids)
}

fn role(ctx: &Ctx, s: SwitchId) -> &'static str {
    match ctx.inv.switches[s].role {
        SwitchRole::Leaf => "leaf",
        SwitchRole::Spine => "spine",
    }
}

fn model(ctx: &Ctx, s: SwitchId) -> &'static str {
    match ctx.inv.switches[s].role {
        SwitchRole::Leaf => "N9K-C9364D-GX2A",
        SwitchRole::Spine => "N9K-C9332D-GX2B",
    }
}

fn version(ctx: &Ctx) -> String {
    ctx.inv
        .fabric
        .versions
        .nos
        .clone()
        .unwrap_or_else(|| ACI_VERSION.into())
}

fn serial(ctx: &Ctx, s: SwitchId) -> String {
    let m = name_mac(&ctx.inv.switches[s].name);
    format!(
        "FDO{:08}",
        u32::from_be_bytes([m[2], m[3], m[4], m[5]]) % 100_000_000
    )
}

/// `fabricNode` with the switch's whole `sys` subtree.
fn node_mo(ctx: &Ctx, s: SwitchId) -> Mo {
    let (pod, node) = place(ctx.inv, s).unwrap_or((1, 0));
    let dn = format!("topology/pod-{pod}/node-{node}");
    let sw = &ctx.inv.switches[s];
    Mo::new(
        "fabricNode",
        &dn,
        json!({"id": node, "name": sw.name, "role": role(ctx, s), "model": model(ctx, s),
               "serial": serial(ctx, s), "version": version(ctx), "fabricSt": "active",
               "adSt": "on"}),
    )
    .with(vec![sys(ctx, s, pod, node)])
}

/// `DD:HH:MM:SS.mmm`, the APIC's uptime.
fn uptime(t: f64) -> String {
    let u = BOOT_UPTIME_S + t.max(0.0);
    let s = u.floor() as u64;
    format!(
        "{:02}:{:02}:{:02}:{:02}.{:03}",
        s / 86_400,
        s / 3600 % 24,
        s / 60 % 60,
        s % 60,
        ((u - u.floor()) * 1000.0).floor() as u32
    )
}

fn sys(ctx: &Ctx, s: SwitchId, pod: u32, node: u32) -> Mo {
    let dn = format!("topology/pod-{pod}/node-{node}/sys");
    let sw = &ctx.inv.switches[s];
    let mut kids: Vec<Mo> = ctx
        .ports(s)
        .into_iter()
        .map(|p| port_mo(ctx, s, &dn, p))
        .collect();
    kids.push(lldp(ctx, s, &dn));
    kids.push(qosm(ctx, s, &dn));
    Mo::new(
        "topSystem",
        &dn,
        json!({
            "id": node, "podId": pod, "name": sw.name, "role": role(ctx, s),
            "version": version(ctx), "serial": serial(ctx, s), "state": "in-service",
            "fabricDomain": ctx.inv.fabric.name,
            "address": tep(pod, node),
            "systemUpTime": uptime(ctx.t),
            "currentTime": iso(ctx.t),
        }),
    )
    .with(kids)
}

/// The TEP address the fabric gives a switch.
fn tep(pod: u32, node: u32) -> String {
    format!("10.{}.{}.{}", pod.min(255), (node >> 8) & 0xFF, node & 0xFF)
}

/// The management address an LLDP neighbour advertises: an ACI switch's
/// own TEP (its inventory `address` is its APIC's, which no switch
/// advertises), any other switch's inventory address.
fn neighbor_mgmt(ctx: &Ctx, name: &str, mgmt: &str) -> String {
    ctx.inv
        .switch_by_name
        .get(name)
        .filter(|&&s| ctx.inv.switches[s].driver == SwitchDriver::Aci)
        .and_then(|&s| place(ctx.inv, s))
        .map_or_else(|| mgmt.to_string(), |(pod, node)| tep(pod, node))
}

/// The APIC's name of a port (`eth1/1`).
fn port_id(ctx: &Ctx, p: usize) -> String {
    normalise_port(&ctx.world.port_cfg[p].name)
}

fn oos_on(ctx: &Ctx, p: usize) -> bool {
    ctx.world.api.aci.oos.iter().any(|o| o.port == p)
}

/// `fabric` for a port facing another switch, `epg` for a host port;
/// `blacklist,` in front while it is out of service.
fn usage(ctx: &Ctx, p: usize) -> String {
    let kind = ctx.inv.links.get(p / 2).map(|l| l.kind);
    let base = if kind == Some(LinkKind::Host) {
        "epg"
    } else {
        "fabric"
    };
    if oos_on(ctx, p) {
        format!("blacklist,{base}")
    } else {
        base.to_string()
    }
}

fn speed(ctx: &Ctx, p: usize) -> String {
    let g = ctx.world.port_cfg[p].speed_mbps / 1000;
    if g == 0 {
        "inherit".into()
    } else {
        format!("{g}G")
    }
}

/// A 5-minute statistics object: cumulative counters and the interval
/// the virtual clock is in.
fn stat(class: &'static str, dn: &str, t: f64, mut vals: Map<String, Value>) -> Mo {
    let start = (t.max(0.0) / 300.0).floor() * 300.0;
    vals.insert("repIntvStart".into(), Value::String(iso(start)));
    vals.insert("repIntvEnd".into(), Value::String(iso(t)));
    let mut m = Mo::new(class, dn, Value::Object(vals));
    m.stats = true;
    m
}

fn port_mo(ctx: &Ctx, _s: SwitchId, sys: &str, p: usize) -> Mo {
    let cfg = &ctx.world.port_cfg[p];
    let c = &ctx.world.port[p];
    let id = port_id(ctx, p);
    let dn = format!("{sys}/phys-[{id}]");
    let prio = usize::from(ctx.world.roce_prio);
    let oper = if cfg.link_up { "up" } else { "down" };
    let qual = if !cfg.admin_up {
        "admin-down"
    } else if !cfg.link_up {
        "link-failure"
    } else {
        "none"
    };
    let drops: f64 = c.tc_drops.iter().sum();
    let ingr = json!({
        // The model drops nothing on ingress but frames with a bad FCS.
        "bufferCum": 0, "errorCum": count(c.rx_crc_errors),
        "forwardingCum": 0, "lbCum": 0,
    });
    // A queue with ECN marks ECT packets instead of dropping them (RoCE is
    // ECT); every drop the model counts is a full egress buffer.
    let egr = json!({"afdWredCum": 0, "bufferCum": count(drops), "errorCum": 0});
    let as_map = |v: Value| match v {
        Value::Object(m) => m
            .into_iter()
            .map(|(k, v)| {
                (
                    k,
                    Value::String(v.to_string().trim_matches('"').to_string()),
                )
            })
            .collect(),
        _ => Map::new(),
    };
    Mo::new(
        "l1PhysIf",
        &dn,
        json!({
            "id": id, "adminSt": if cfg.admin_up { "up" } else { "down" },
            "mtu": cfg.mtu, "speed": speed(ctx, p), "mode": "trunk", "layer": "Layer2",
            "usage": usage(ctx, p).trim_start_matches("blacklist,"),
            "descr": "", "autoNeg": "on", "fecMode": "inherit",
        }),
    )
    .with(vec![
        Mo::new(
            "ethpmPhysIf",
            &format!("{dn}/phys"),
            json!({"operSt": oper, "operStQual": qual, "usage": usage(ctx, p),
                   "operSpeed": if cfg.link_up { speed(ctx, p) } else { "unknown".into() },
                   "operDuplex": "full", "operMode": "trunk"}),
        ),
        Mo::new(
            "rmonIfIn",
            &format!("{dn}/dbgIfIn"),
            json!({"octets": count(c.rx_bytes), "ucastPkts": count(c.rx_packets),
                   "multicastPkts": 0, "broadcastPkts": 0, "discards": 0,
                   "errors": count(c.rx_crc_errors), "unknownProtos": 0}),
        ),
        Mo::new(
            "rmonIfOut",
            &format!("{dn}/dbgIfOut"),
            json!({"octets": count(c.tx_bytes), "ucastPkts": count(c.tx_packets),
                   "multicastPkts": 0, "broadcastPkts": 0, "discards": count(drops),
                   "errors": 0}),
        ),
        // Pause frames are left out: whether ACI counts PFC frames here is
        // not known (aci.md §4.4), and the model sends no link-level pause.
        Mo::new(
            "rmonDot3Stats",
            &format!("{dn}/dbgDot3Stats"),
            json!({"fCSErrors": count(c.rx_crc_errors), "symbolErrors": count(c.rx_symbol_errors),
                   "alignmentErrors": 0}),
        ),
        Mo::new(
            "l1RsQosPfcIfPolCons",
            &format!("{dn}/rsQosPfcIfPolCons"),
            json!({"tDn": format!("uni/infra/pfc-{}", if cfg.pfc[prio] { PFC_ON } else { PFC_OFF }),
                   "tCl": "qosPfcIfPol", "state": "formed", "stateQual": "none"}),
        ),
        stat(
            "eqptIngrDropPkts5min",
            &format!("{dn}/CDeqptIngrDropPkts5min"),
            ctx.t,
            as_map(ingr),
        ),
        stat(
            "eqptEgrDropPkts5min",
            &format!("{dn}/CDeqptEgrDropPkts5min"),
            ctx.t,
            as_map(egr),
        ),
    ])
}

fn colons(m: [u8; 6]) -> String {
    m.iter()
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(":")
}

fn lldp(ctx: &Ctx, s: SwitchId, sys: &str) -> Mo {
    let inst = format!("{sys}/lldp/inst");
    let ifs = ctx
        .ports(s)
        .into_iter()
        .map(|p| {
            let cfg = &ctx.world.port_cfg[p];
            let id = port_id(ctx, p);
            let dn = format!("{inst}/if-[{id}]");
            let adj: Vec<Mo> = cfg
                .neighbor
                .as_ref()
                .filter(|_| cfg.link_up)
                .map(|n| {
                    let a = match n {
                        // lldpd's defaults on a host: the port is its MAC,
                        // described by its name.
                        Neighbor::Host {
                            node,
                            netdev,
                            mac,
                            mgmt,
                        } => json!({
                            "sysName": node, "sysDesc": format!("rocegate emulated host {node}"),
                            "chassisIdT": "mac", "chassisIdV": colons(name_mac(node)),
                            "portIdT": "mac", "portIdV": colons(*mac), "portDesc": netdev,
                            "mgmtIp": mgmt, "ttl": 120, "capability": "station",
                        }),
                        Neighbor::Switch { name, port, mgmt } => json!({
                            "sysName": name, "sysDesc": format!("rocegate emulated switch {name}"),
                            "chassisIdT": "mac", "chassisIdV": colons(name_mac(name)),
                            "portIdT": "if-name", "portIdV": port, "portDesc": port,
                            "mgmtIp": neighbor_mgmt(ctx, name, mgmt), "ttl": 120,
                            "capability": "bridge,router",
                        }),
                    };
                    Mo::new("lldpAdjEp", &format!("{dn}/adj-1"), a)
                })
                .into_iter()
                .collect();
            Mo::new(
                "lldpIf",
                &dn,
                json!({"id": id, "adminRxSt": "enabled", "adminTxSt": "enabled"}),
            )
            .with(adj)
        })
        .collect();
    Mo::new(
        "lldpEntity",
        &format!("{sys}/lldp"),
        json!({"name": "lldp"}),
    )
    .with(vec![Mo::new(
        "lldpInst",
        &inst,
        json!({"adminSt": "enabled", "holdTime": 120, "initDelayTime": 2, "txFreq": 30}),
    )
    .with(ifs)])
}

/// The QoS level traffic on priority `p` is classified into.
fn level_of(ctx: &Ctx, p: usize) -> u8 {
    if p == usize::from(ctx.world.roce_prio) {
        ROCE_LEVEL
    } else if p == usize::from(ctx.inv.fabric.roce.cnp_priority.min(7)) {
        CNP_LEVEL
    } else {
        DEFAULT_LEVEL
    }
}

fn qosm(ctx: &Ctx, s: SwitchId, sys: &str) -> Mo {
    let ifs = ctx
        .ports(s)
        .into_iter()
        .map(|p| qosm_if(ctx, sys, p))
        .collect();
    Mo::new("qosmEntity", &format!("{sys}/qosm"), json!({})).with(ifs)
}

/// Per-class counters of a port: each level sums the model's priorities
/// classified into it; a drop is an egress (Tx) drop, bytes at the class's
/// mean packet size.
fn qosm_if(ctx: &Ctx, sys: &str, p: usize) -> Mo {
    let id = port_id(ctx, p);
    let dn = format!("{sys}/qosm/if-[{id}]");
    let c = &ctx.world.port[p];
    let classes = (1..=6u8)
        .map(|level| {
            let prios: Vec<usize> = (0..8).filter(|&q| level_of(ctx, q) == level).collect();
            let sum = |f: &dyn Fn(usize) -> f64| prios.iter().map(|&q| f(q)).sum::<f64>();
            let tx_b = sum(&|q| c.prio[q].tx_bytes);
            let tx_p = sum(&|q| c.prio[q].tx_packets);
            let drops = sum(&|q| c.tc_drops[q]);
            let mean = if tx_p > 0.0 {
                tx_b / tx_p
            } else {
                f64::from(ctx.world.port_cfg[p].mtu)
            };
            Mo::new(
                "qosmIfClass",
                &format!("{dn}/class-level{level}"),
                json!({
                    "id": format!("level{level}"),
                    "RxAdmitPacketsCount": count(sum(&|q| c.prio[q].rx_packets)),
                    "RxAdmitBytesCount": count(sum(&|q| c.prio[q].rx_bytes)),
                    "RxDropPacketsCount": 0, "RxDropBytesCount": 0,
                    "TxAdmitPacketsCount": count(tx_p),
                    "TxAdmitBytesCount": count(tx_b),
                    "TxDropPacketsCount": count(drops),
                    "TxDropBytesCount": count(drops * mean),
                }),
            )
        })
        .collect();
    Mo::new("qosmIf", &dn, json!({"id": id})).with(classes)
}

// ------------------------------------------------------------- changes

/// `topology/pod-P/paths-N/pathep-[ethX/Y]` → (switch, port index).
fn path_ep(ctx: &Ctx, tdn: &str) -> Option<(SwitchId, usize)> {
    let rest = tdn.strip_prefix("topology/pod-")?;
    let (pod, rest) = rest.split_once("/paths-")?;
    let (node, rest) = rest.split_once("/pathep-[")?;
    let port = rest.strip_suffix(']')?;
    if port.contains('[') || port.contains(']') {
        return None;
    }
    let s = switch_at(ctx.inv, pod.parse().ok()?, node.parse().ok()?)?;
    Some((s, ctx.port(s, port, normalise_port)?))
}

/// The one object a write's body holds: its class and attributes.
fn body_object(body: &str) -> Result<(String, Map<String, Value>), Refusal> {
    let v: Value =
        serde_json::from_str(body).map_err(|e| bad("103", format!("Invalid request body: {e}")))?;
    let (class, o) = v
        .as_object()
        .filter(|m| m.len() == 1)
        .and_then(|m| m.iter().next())
        .ok_or_else(|| bad("103", "Invalid request body: not one object".into()))?;
    let attrs = o
        .get("attributes")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    Ok((class.clone(), attrs))
}

fn text<'a>(a: &'a Map<String, Value>, k: &str) -> &'a str {
    a.get(k).and_then(Value::as_str).unwrap_or_default()
}

fn post(ctx: &mut Ctx, dn: &str, body: &str) -> Result<Vec<Value>, Refusal> {
    if let Some(tdn) = dn
        .strip_prefix(OOS_PREFIX)
        .and_then(|r| r.strip_suffix(']'))
    {
        let (class, a) = body_object(body)?;
        if class != "fabricRsOosPath" {
            return Err(bad("103", format!("Invalid request body: {class} at {dn}")));
        }
        if text(&a, "status") == "deleted" {
            return delete(ctx, dn);
        }
        let t = text(&a, "tDn");
        if (!t.is_empty() && t != tdn) || !matches!(text(&a, "lc"), "" | "blacklist") {
            return Err(bad("107", format!("Failed to decode IfIndex, id: {t}")));
        }
        let Some((_, port)) = path_ep(ctx, tdn) else {
            return Err(bad("102", format!("configured object ({tdn}) not found")));
        };
        let annotation = text(&a, "annotation").to_string();
        let oos = &mut ctx.world.api.aci.oos;
        match oos.iter_mut().find(|o| o.tdn == tdn) {
            Some(o) => o.annotation = annotation,
            None => oos.push(Oos {
                tdn: tdn.to_string(),
                annotation,
                port,
            }),
        }
        if ctx.world.port_cfg[port].admin_up {
            ctx.apply(Op::Port { port, up: false });
        }
        return Ok(Vec::new());
    }
    if let Some(name) = dn.strip_prefix("uni/fabric/configexp-") {
        let (class, a) = body_object(body)?;
        let named = text(&a, "name");
        if class != "configExportP" || (!named.is_empty() && named != name) || name.is_empty() {
            return Err(bad(
                "103",
                format!("Invalid request body: {class} named {named:?} at {dn}"),
            ));
        }
        let snap = text(&a, "snapshot") == "yes" && text(&a, "adminSt") == "triggered";
        let t = ctx.t;
        let exports = &mut ctx.world.api.aci.exports;
        let k = match exports.iter().position(|e| e.name == name) {
            Some(k) => k,
            None => {
                exports.push(Export {
                    name: name.to_string(),
                    attrs: Map::new(),
                    snapshots: Vec::new(),
                });
                exports.len() - 1
            }
        };
        for (key, v) in a {
            exports[k].attrs.insert(key, v);
        }
        if snap {
            exports[k].snapshots.push(t);
        }
        return Ok(Vec::new());
    }
    Err(bad(
        "122",
        format!("the emulated APIC does not model writes to {dn}"),
    ))
}

fn delete(ctx: &mut Ctx, dn: &str) -> Result<Vec<Value>, Refusal> {
    if let Some(tdn) = dn
        .strip_prefix(OOS_PREFIX)
        .and_then(|r| r.strip_suffix(']'))
    {
        let oos = &mut ctx.world.api.aci.oos;
        // Deleting what is not there succeeds, as on the APIC.
        if let Some(k) = oos.iter().position(|o| o.tdn == tdn) {
            let port = oos.remove(k).port;
            if !oos_on(ctx, port) && !ctx.world.port_cfg[port].admin_up {
                ctx.apply(Op::Port { port, up: true });
            }
        }
        return Ok(Vec::new());
    }
    if let Some(name) = dn.strip_prefix("uni/fabric/configexp-") {
        ctx.world.api.aci.exports.retain(|e| e.name != name);
        return Ok(Vec::new());
    }
    match find(ctx, dn) {
        None => Ok(Vec::new()),
        Some(mo) => Err(bad(
            "120",
            format!("Deletion of {} at {dn} is not allowed", mo.class),
        )),
    }
}
