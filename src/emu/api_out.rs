//! The switches the emulated pod reaches over HTTPS: an `eos` switch's eAPI
//! (`POST /command-api`, JSON-RPC `runCmds`) and an `nxos` switch's NX-API
//! (`POST /ins`, `ins_api`), answering the `rocegate-api CALLS` invocations
//! of `exec::apicall` from the same model the `linux` switches print from:
//! one port's counters, PFC and ECN counts, link and BGP state, LLDP
//! neighbours and configuration, whatever the platform that asks.
//!
//! This module reads the calls, runs their commands in order against the
//! model (reads at the call's virtual time, changes on the fabric the
//! segments are cut from) and wraps each call's outputs in the envelope the
//! switch answers with; what each show command prints is `api_eos`'s and
//! `api_nxos`'s. It keeps what only these platforms have: EOS configuration
//! sessions and their commit timers, NX-OS `run bash` timers, and `router
//! bgp` shut down by configuration. A timer is a [`Change::ApiTimer`] on the
//! virtual clock: when it fires without an abort (EOS) or a `pkill` (NX-OS),
//! it restores what its change took down.
//!
//! It parses no answer and decides nothing about a fault: the platforms in
//! `switch::eos` and `switch::nxos` do, on what this prints.

use serde_json::{json, Value};

use crate::config::inventory::{SwitchDriver, SwitchRole};
use crate::config::model::{End, Inventory, SwitchId};
use crate::exec::apicall::{self, CallResult};
use crate::exec::types::{ExecFailure, InvocationOutput};

use super::batch::ROUTING_RESTART_S;
use super::fabric::Fabric;
use super::world::{Change, World};
use super::{api_eos, api_nxos, Emulator, Parsed};

/// Seconds one call takes on the switch (TLS kept alive, a few commands).
const CALL_S: f64 = 0.05;
/// The emulated switches booted this long before the run: EOS counts its
/// commit timers in seconds of uptime.
pub const BOOT_UPTIME_S: f64 = 3.0 * 86_400.0 + 4_321.0;

/// One change a configuration command makes, and what undoes it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Op {
    /// `[no] shutdown` on port index `port` (`2 * link + side`).
    Port { port: usize, up: bool },
    /// `router bgp` + `[no] shutdown` on a switch.
    Bgp { switch: SwitchId, up: bool },
    /// `router bgp` + `[no] neighbor X shutdown`: the session of `link`,
    /// shut at end `side` (as FRR's `neighbor X shutdown` on a linux box).
    Peer {
        link: usize,
        side: usize,
        shut: bool,
    },
}

/// An EOS configuration session.
#[derive(Debug, Clone, PartialEq)]
pub struct Session {
    pub switch: SwitchId,
    pub name: String,
    /// Changes staged, not yet committed.
    pub staged: Vec<Op>,
    /// Committed with `commit timer`: what a rollback restores and the
    /// timer that does it, until the session is confirmed or aborted.
    pub timer: Option<usize>,
    /// When its timer runs out, virtual seconds.
    pub due: f64,
    pub completed: bool,
}

/// A timer that restores a change unless it is cancelled first.
#[derive(Debug, Clone, PartialEq)]
pub struct Timer {
    pub switch: SwitchId,
    /// What it restores, in order.
    pub restore: Vec<Op>,
    /// Still armed: not fired, aborted or killed.
    pub armed: bool,
    /// NX-OS: the name its shell carries (`rocegate-deadman-…`) and its pid.
    pub name: String,
    pub pid: u32,
}

/// What the API switches remember besides the fabric and the counters.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ApiState {
    /// `router bgp` shut down by configuration, per switch.
    pub bgp_shut: Vec<bool>,
    pub sessions: Vec<Session>,
    pub timers: Vec<Timer>,
    /// What an `aci` switch's APIC keeps (`aci_out`).
    pub aci: super::aci_out::AciState,
}

impl ApiState {
    pub fn new(inv: &Inventory) -> Self {
        ApiState {
            bgp_shut: vec![false; inv.switches.len()],
            ..Default::default()
        }
    }
}

/// Which API a call speaks, with what the envelope needs back.
#[derive(Debug, Clone, PartialEq)]
pub enum Kind {
    /// eAPI: the call's `id` and whether it asked for `format: text`.
    Eapi { id: Value, text: bool },
    /// NX-API: the `ins_api` `type` (`cli_show`, `cli_show_ascii`,
    /// `cli_conf`).
    Nxapi { ty: String },
    /// APIC REST (`aci_out`): the method; `cmds` holds the path and body.
    Apic { method: String },
}

/// One call of an invocation.
#[derive(Debug, Clone, PartialEq)]
pub struct ApiCall {
    pub kind: Kind,
    pub cmds: Vec<String>,
}

/// An API invocation on an `eos` or `nxos` switch: its calls, or the HTTP
/// answer that refuses a call (a wrong path, a body that is not the
/// API's), in order.
#[derive(Debug, Clone, PartialEq)]
pub struct ApiCmd {
    pub switch: SwitchId,
    pub calls: Vec<Result<ApiCall, CallResult>>,
}

impl ApiCmd {
    /// Whether any command changes the switch: it is then timed as an event
    /// that cuts the batch's segments, not answered as a read.
    pub fn changes(&self) -> bool {
        self.calls.iter().flatten().any(|c| match &c.kind {
            Kind::Eapi { .. } => c.cmds.iter().any(|x| !is_read(x)),
            Kind::Nxapi { ty } => {
                ty == "cli_conf" || c.cmds.iter().any(|x| x.starts_with("run bash"))
            }
            Kind::Apic { method } => method != "GET",
        })
    }
}

fn is_read(cmd: &str) -> bool {
    cmd == "enable" || cmd.starts_with("show ")
}

fn words(cmd: &str) -> String {
    cmd.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn http(status: u16, body: &str) -> CallResult {
    CallResult {
        status,
        body: body.to_string(),
    }
}

/// The answer of nginx in front of either API to a path it does not serve.
fn not_found() -> CallResult {
    http(
        404,
        "<html>\r\n<head><title>404 Not Found</title></head>\r\n<body>\r\n<center><h1>404 Not Found</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n",
    )
}

fn eapi_call(body: &str) -> Result<ApiCall, CallResult> {
    let bad = |code: i64, why: &str, id: &Value| {
        http(
            200,
            &json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": why}})
                .to_string(),
        )
    };
    let v: Value = serde_json::from_str(body)
        .map_err(|e| bad(-32700, &format!("Parse error: {e}"), &Value::Null))?;
    let id = v.get("id").cloned().unwrap_or(Value::Null);
    if v.get("method").and_then(Value::as_str) != Some("runCmds") {
        return Err(bad(-32601, "Method not found", &id));
    }
    let params = v.get("params").cloned().unwrap_or(Value::Null);
    let cmds = params
        .get("cmds")
        .and_then(Value::as_array)
        .ok_or_else(|| bad(-32602, "Invalid params: `cmds` must be a list", &id))?;
    let cmds = cmds
        .iter()
        .map(|c| match c {
            Value::String(s) => Some(words(s)),
            Value::Object(o) => o.get("cmd").and_then(Value::as_str).map(words),
            _ => None,
        })
        .collect::<Option<Vec<_>>>()
        .ok_or_else(|| bad(-32602, "Invalid params: a command is not a string", &id))?;
    let text = params.get("format").and_then(Value::as_str) == Some("text");
    Ok(ApiCall {
        kind: Kind::Eapi { id, text },
        cmds,
    })
}

fn nxapi_call(body: &str) -> Result<ApiCall, CallResult> {
    let v: Value = serde_json::from_str(body).map_err(|_| {
        http(
            400,
            r#"{"ins_api":{"outputs":{"output":{"code":"400","msg":"Request contains invalid JSON"}}}}"#,
        )
    })?;
    let api = v.get("ins_api").ok_or_else(|| {
        http(
            400,
            r#"{"ins_api":{"outputs":{"output":{"code":"400","msg":"Request has no ins_api"}}}}"#,
        )
    })?;
    let ty = api
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let input = api.get("input").and_then(Value::as_str).unwrap_or_default();
    // NX-API splits the input at `;`, the separator it documents as ` ;`.
    let cmds = input
        .split(';')
        .map(words)
        .filter(|c| !c.is_empty())
        .collect();
    Ok(ApiCall {
        kind: Kind::Nxapi { ty },
        cmds,
    })
}

/// Reads an invocation on switch `sw`. `None`: not an API invocation, or
/// the switch is not reached over an API (a `linux` switch's shell has no
/// `rocegate-api`).
pub fn parse(inv: &Inventory, sw: SwitchId, argv: &[String]) -> Option<Parsed> {
    let calls = apicall::calls(argv)?;
    let driver = inv.switches[sw].driver;
    if driver == SwitchDriver::Aci {
        return Some(super::aci_out::parse(inv, sw, &calls));
    }
    if !matches!(driver, SwitchDriver::Eos | SwitchDriver::Nxos) {
        return None;
    }
    let calls = calls
        .iter()
        .map(|c| match (driver, c.path.as_str()) {
            (SwitchDriver::Eos, "/command-api") => eapi_call(&c.body),
            (SwitchDriver::Nxos, "/ins") => nxapi_call(&c.body),
            _ => Err(not_found()),
        })
        .collect();
    Some(Parsed::Api(Box::new(ApiCmd { switch: sw, calls })))
}

// ------------------------------------------------------------- the model

/// The model as the API switches see it, at one instant.
pub struct Ctx<'a> {
    pub inv: &'a Inventory,
    pub fabric: &'a mut Fabric,
    pub world: &'a mut World,
    pub t: f64,
    /// Changes that happen later by themselves (timers, BGP coming back).
    pub later: &'a mut Vec<(f64, Change)>,
}

/// What one command did: its output, or (code, message) for a refusal.
/// eAPI codes are its own (1002 invalid input, 1000 could not run); NX-API
/// codes are the `code` of its output (`400`), with `clierror`.
pub type Out = Result<Value, (i64, String)>;

impl Ctx<'_> {
    /// Port indices of switch `s` in inventory order.
    pub fn ports(&self, s: SwitchId) -> Vec<usize> {
        let mut v: Vec<usize> = (0..self.world.port_cfg.len())
            .filter(|&i| self.world.port_switch[i] == Some(s))
            .collect();
        v.sort_by_key(|&i| port_order(&self.world.port_cfg[i].name));
        v
    }

    /// The port of switch `s` named `name` however the platform writes it.
    pub fn port(&self, s: SwitchId, name: &str, norm: fn(&str) -> String) -> Option<usize> {
        let want = norm(name);
        self.ports(s)
            .into_iter()
            .find(|&i| norm(&self.world.port_cfg[i].name) == want)
    }

    pub fn apply(&mut self, op: Op) {
        match op {
            Op::Port { port, up } => self.fabric.admin_up[port / 2][port % 2] = up,
            Op::Peer { link, side, shut } => {
                self.fabric.peer_shut[link][side] = shut;
                if shut {
                    self.fabric.session_down[link] = true;
                } else if !self.fabric.peer_shut[link][1 - side] {
                    self.later
                        .push((self.t + super::batch::SESSION_UP_S, Change::SessionUp(link)));
                }
            }
            Op::Bgp { switch, up } => {
                self.world.api.bgp_shut[switch] = !up;
                if up {
                    if !self.world.rebooting[switch] {
                        self.later
                            .push((self.t + ROUTING_RESTART_S, Change::RoutingUp(switch)));
                    }
                } else {
                    self.fabric.routing[switch] = false;
                }
            }
        }
        self.fabric.refresh(self.inv, &self.world.rebooting);
        self.world.sync_links(self.inv, self.fabric);
    }

    /// The op that puts back what `op` changes, read before it is applied.
    pub fn inverse(&self, op: Op) -> Op {
        match op {
            Op::Port { port, .. } => Op::Port {
                port,
                up: self.fabric.admin_up[port / 2][port % 2],
            },
            Op::Bgp { switch, .. } => Op::Bgp {
                switch,
                up: !self.world.api.bgp_shut[switch],
            },
            Op::Peer { link, side, .. } => Op::Peer {
                link,
                side,
                shut: self.fabric.peer_shut[link][side],
            },
        }
    }

    /// Applies `ops` now and arms a timer that restores them after `secs`.
    pub fn arm(&mut self, switch: SwitchId, restore: Vec<Op>, secs: f64, name: &str) -> usize {
        let k = self.world.api.timers.len();
        self.world.api.timers.push(Timer {
            switch,
            restore,
            armed: true,
            name: name.to_string(),
            pid: 20_000 + (k as u32 * 7919) % 30_000,
        });
        self.later
            .push((self.t + secs.max(1.0), Change::ApiTimer(k as u32)));
        k
    }

    /// BGP state of one session: Established, or why not.
    pub fn session_up(&self, link: usize) -> bool {
        let l = &self.inv.links[link];
        let (End::Port { switch: a, .. }, End::Port { switch: b, .. }) = (&l.a, &l.b) else {
            return false;
        };
        self.fabric.link_up[link]
            && !self.fabric.session_down[link]
            && [*a, *b].iter().all(|&s| {
                self.fabric.routing[s] && !self.world.rebooting[s] && !self.world.api.bgp_shut[s]
            })
    }

    /// The BGP sessions of switch `s`: (link, this end's port index, the
    /// peer switch).
    pub fn sessions(&self, s: SwitchId) -> Vec<(usize, usize, SwitchId)> {
        let mut out = Vec::new();
        for &l in &self.inv.switches[s].links {
            let link = &self.inv.links[l];
            if let (End::Port { switch: a, .. }, End::Port { switch: b, .. }) = (&link.a, &link.b) {
                if *a == s {
                    out.push((l, 2 * l, *b));
                } else if *b == s {
                    out.push((l, 2 * l + 1, *a));
                }
            }
        }
        out
    }
}

/// `Ethernet10` after `Ethernet9`: ports in the order a switch lists them.
fn port_order(name: &str) -> Vec<(String, u64)> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut num = String::new();
    for c in name.chars() {
        if c.is_ascii_digit() {
            num.push(c);
        } else {
            if !num.is_empty() {
                out.push((std::mem::take(&mut word), num.parse().unwrap_or(0)));
                num.clear();
            }
            word.push(c);
        }
    }
    out.push((word, num.parse().unwrap_or(0)));
    out
}

/// The AS number of a switch's `router bgp`: the spines share one, each
/// leaf has its own (eBGP, RFC 7938).
pub fn asn(inv: &Inventory, s: SwitchId) -> u32 {
    match inv.switches[s].role {
        SwitchRole::Spine => 65000,
        SwitchRole::Leaf => 65101 + s as u32,
    }
}

/// The address of end `side` of inventory link `link` on a leaf–spine /31.
pub fn p2p_address(link: usize, side: usize) -> String {
    let n = 2 * link + side;
    format!("10.254.{}.{}", (n >> 8) & 0xFF, n & 0xFF)
}

/// A made-up but steady MAC for a name (a chassis's base address).
pub fn name_mac(name: &str) -> [u8; 6] {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in name.bytes() {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    let b = h.to_be_bytes();
    [0x02, 0x1c, b[2], b[3], b[4], b[5]]
}

/// A model total as the counter a switch prints.
pub fn count(v: f64) -> u64 {
    if v.is_finite() && v > 0.0 {
        v.floor() as u64
    } else {
        0
    }
}

// ------------------------------------------------------------- running

/// Runs every call of `cmd` in order and returns what each answered.
/// Changes land on `ctx`'s fabric and world.
pub fn run(ctx: &mut Ctx, cmd: &ApiCmd) -> Vec<CallResult> {
    let driver = ctx.inv.switches[cmd.switch].driver;
    let eos = driver == SwitchDriver::Eos;
    cmd.calls
        .iter()
        .map(|c| match c {
            Err(refused) => refused.clone(),
            Ok(call) if driver == SwitchDriver::Aci => super::aci_out::call(ctx, cmd.switch, call),
            Ok(call) if eos => api_eos::call(ctx, cmd.switch, call),
            Ok(call) => api_nxos::call(ctx, cmd.switch, call),
        })
        .collect()
}

/// A timer ran out: it restores what it guards, unless it was cancelled.
pub fn fire(ctx: &mut Ctx, k: usize) {
    let Some(timer) = ctx.world.api.timers.get_mut(k) else {
        return;
    };
    if !timer.armed {
        return;
    }
    timer.armed = false;
    let (switch, restore) = (timer.switch, timer.restore.clone());
    if ctx.world.rebooting[switch] {
        return;
    }
    for s in ctx.world.api.sessions.iter_mut() {
        if s.timer == Some(k) {
            s.timer = None;
            s.completed = true;
        }
    }
    for op in restore {
        ctx.apply(op);
    }
}

impl Emulator {
    /// Answers an API invocation at `t` from the model as it is then,
    /// making its changes on the real state (with link-down events counted).
    pub(super) fn answer_api(&mut self, cmd: &ApiCmd, host: &str, t: f64) -> InvocationOutput {
        let mut o = InvocationOutput {
            stdout: String::new(),
            stderr: String::new(),
            exit: Some(0),
            failure: None,
            started_s: t,
            ended_s: t + CALL_S * cmd.calls.len().max(1) as f64,
        };
        if self.world.rebooting[cmd.switch] {
            o.exit = None;
            o.stdout = apicall::print(&[]);
            o.failure = Some(ExecFailure::Unreachable(format!(
                "{host}: cannot connect to https://{host}:443: No route to host"
            )));
            return o;
        }
        let before = self.fabric.link_up.clone();
        let mut later = Vec::new();
        let results = run(
            &mut Ctx {
                inv: &self.inv,
                fabric: &mut self.fabric,
                world: &mut self.world,
                t,
                later: &mut later,
            },
            cmd,
        );
        for (l, was) in before.iter().enumerate() {
            if *was && !self.fabric.link_up[l] {
                self.world.link_down(l);
            }
        }
        o.stdout = apicall::print(&results);
        o
    }
}

/// The state changes of an API invocation without its answer, as the
/// batch applies events (on the segments' copy, and between batches).
pub fn apply(
    inv: &Inventory,
    fabric: &mut Fabric,
    world: &mut World,
    cmd: &ApiCmd,
    t: f64,
    later: &mut Vec<(f64, Change)>,
) {
    if world.rebooting[cmd.switch] {
        return;
    }
    run(
        &mut Ctx {
            inv,
            fabric,
            world,
            t,
            later,
        },
        cmd,
    );
}

/// [`fire`] from the batch's event loop.
pub fn fire_timer(
    inv: &Inventory,
    fabric: &mut Fabric,
    world: &mut World,
    k: u32,
    t: f64,
    later: &mut Vec<(f64, Change)>,
) {
    fire(
        &mut Ctx {
            inv,
            fabric,
            world,
            t,
            later,
        },
        k as usize,
    );
}
