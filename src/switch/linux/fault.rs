//! Faults on a Linux box: `ip link` for ports, FRR's init for routing,
//! `vtysh` for one BGP session, a detached `setsid` timer on the device as
//! the dead-man.

use std::net::IpAddr;
use std::time::Duration;

use super::Linux;
use crate::exec::quote;
use crate::switch::fault::{runs_over, Action, Change, Driver, Init, PortState, State};
use crate::switch::{Answer, Query};

/// `sh -c SCRIPT`.
fn sh(script: String) -> Query {
    Query::Argv(vec!["sh".into(), "-c".into(), script])
}

/// Who runs the commands that need root.
///
/// `linux` logs in as root (its lab runs as root): its commands are sent
/// as they are. A stock Cumulus account (`cumulus`) is not root: its
/// scripts decide on the device, from `id -u`, whether the root commands
/// go through `sudo -n` (never a password prompt: a missing right fails at
/// once, and the apply stops before anything changes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Privilege {
    /// Sent as they are: the account is root.
    AsIs,
    /// `sudo -n` in front of each root command unless `id -u` is 0.
    SudoUnlessRoot,
}

/// The line a [`Privilege::SudoUnlessRoot`] script starts with: `$S` is
/// empty as root and `sudo -n` otherwise.
pub const SUDO_UNLESS_ROOT: &str = "if [ \"$(id -u)\" -eq 0 ]; then S=; else S='sudo -n'; fi";

impl Privilege {
    /// What goes in front of a root command.
    fn prefix(self) -> &'static str {
        match self {
            Privilege::AsIs => "",
            Privilege::SudoUnlessRoot => "$S ",
        }
    }

    /// `sh -c SCRIPT`, with the `$S` line first where it is used.
    pub fn sh(self, script: String) -> Query {
        match self {
            Privilege::AsIs => sh(script),
            // A script's leading `: rocegate-… ID;` stays first: it is
            // what `pgrep -f '^sh -c : rocegate-…'` finds the script by.
            Privilege::SudoUnlessRoot => match script.split_once("; ") {
                Some((tag, rest)) if tag.starts_with(": rocegate-") => {
                    sh(format!("{tag}; {SUDO_UNLESS_ROOT}; {rest}"))
                }
                _ => sh(format!("{SUDO_UNLESS_ROOT}; {script}")),
            },
        }
    }

    /// Every command of `cmds` run as root.
    fn root(self, cmds: Vec<String>) -> Vec<String> {
        cmds.into_iter()
            .map(|c| format!("{}{c}", self.prefix()))
            .collect()
    }
}

const FRRINIT: &str = "/usr/lib/frr/frrinit.sh";

/// The ports `action` takes down.
fn ports_of(action: &Action) -> &[String] {
    match action {
        Action::PortsDown(p) | Action::Reload { ports: p } => p,
        Action::RoutingStop | Action::BgpPeerDown { .. } => &[],
    }
}

/// The ports whose state the prior read takes: those taken down, or the
/// one a withdrawn session runs over (which must stay up).
fn ports_read(action: &Action) -> &[String] {
    match action {
        Action::BgpPeerDown { port } => std::slice::from_ref(port),
        _ => ports_of(action),
    }
}

fn routing(init: Init, verb: &str) -> String {
    match init {
        Init::Systemd => format!("systemctl {verb} frr"),
        Init::Frrinit => format!("{FRRINIT} {verb}"),
    }
}

fn links(ports: &[String], up: bool) -> Vec<String> {
    ports
        .iter()
        .map(|p| {
            format!(
                "ip link set dev {} {}",
                quote(p),
                if up { "up" } else { "down" }
            )
        })
        .collect()
}

/// BGP neighbours as [`State::bgp`] holds them: name, Established.
type Peers = Vec<(String, bool)>;

/// FRR's `show bgp summary json`: `{"ipv4Unicast": {"as": 65101, "peers":
/// {"ADDR": {"state": "Established", …}}}, …}` per address family, `ADDR`
/// an address or, for BGP unnumbered, the interface. Returns the local AS
/// of the default instance (`None` without `router bgp`) and the peers.
fn bgp_summary(json: &str) -> Result<(Option<u32>, Peers), String> {
    let v: serde_json::Value = serde_json::from_str(json.trim())
        .map_err(|e| format!("`vtysh -c 'show bgp summary json'` is not JSON: {e}"))?;
    let mut peers: Vec<(String, bool)> = Vec::new();
    let mut local_as = None;
    if let Some(afs) = v.as_object() {
        for af in afs.values() {
            if let Some(a) = af.get("as").and_then(|a| a.as_u64()) {
                local_as = u32::try_from(a).ok().or(local_as);
            }
            if let Some(ps) = af.get("peers").and_then(|p| p.as_object()) {
                for (addr, p) in ps {
                    let up = p.get("state").and_then(|s| s.as_str()) == Some("Established");
                    match peers.iter_mut().find(|(a, _)| a == addr) {
                        Some(e) => e.1 &= up,
                        None => peers.push((addr.clone(), up)),
                    }
                }
            }
        }
    }
    peers.sort();
    Ok((local_as, peers))
}

/// `line` in the BGP instance of the local AS, for each session a
/// [`Action::BgpPeerDown`] read over its port (`{}` the neighbour).
fn vtysh_bgp(prior: &State, line: &str) -> Vec<String> {
    let asn = prior.asn.as_deref().unwrap_or_default();
    prior
        .bgp
        .iter()
        .flatten()
        .map(|(n, _)| {
            format!(
                "vtysh -c 'configure terminal' -c {} -c {}",
                quote(&format!("router bgp {asn}")),
                quote(&line.replace("{}", n))
            )
        })
        .collect()
}

impl Driver for Linux {
    fn platform(&self) -> &'static str {
        "linux"
    }

    fn needs(&self, action: &Action) -> Vec<&'static str> {
        let mut v = vec!["ip", "setsid", "pkill"];
        if !matches!(action, Action::PortsDown(_)) {
            v.push("vtysh");
        }
        v
    }

    fn read_prior(&self, action: &Action) -> Query {
        self.read_prior_as(action, Privilege::AsIs)
    }

    fn parse_prior(&self, action: &Action, answer: &Answer) -> Result<State, String> {
        self.parse_prior_text(action, answer)
    }

    fn check_prior(&self, action: &Action, prior: &State) -> Result<(), String> {
        self.check_prior_state(action, prior)
    }

    fn change(&self, action: &Action, prior: &State, deadman: Option<(&str, Duration)>) -> Change {
        self.change_as(action, prior, deadman, Privilege::AsIs)
    }

    fn plain(&self, action: &Action, prior: &State) -> (Vec<Query>, Vec<Query>) {
        self.plain_as(action, prior, Privilege::AsIs)
    }
}

/// The privilege refusal of a prior read: `@@priv none USER` (the
/// account is not root and may not `sudo -n`), or no `@@priv` line at
/// all; `None` for `@@priv root` and `@@priv sudo`.
pub fn privilege_refusal(text: &str) -> Option<String> {
    for line in text.lines() {
        let w: Vec<&str> = line.split_whitespace().collect();
        match w.as_slice() {
            ["@@priv", "root" | "sudo"] => return None,
            ["@@priv", "none", user @ ..] => {
                return Some(format!(
                    "the account {} is not root and may not run `sudo -n` without a password: ip link, systemctl, vtysh and the dead-man need root (give it passwordless sudo, or log in as root)",
                    if user.is_empty() { "?".to_string() } else { user.join(" ") }
                ))
            }
            _ => {}
        }
    }
    Some("the state read printed no @@priv line: whether the account may run root commands is unknown".into())
}

/// The faults of a node's own ports (a NIC's link flap) for an account
/// that is not root: each root command through `sudo -n` unless `id -u`
/// is 0, and an account that may not `sudo -n` refused at the prior read,
/// before anything changes (the slurm transport's `sudo: true`).
pub struct SudoFaults;

impl Driver for SudoFaults {
    fn platform(&self) -> &'static str {
        "linux"
    }

    fn needs(&self, action: &Action) -> Vec<&'static str> {
        let mut v = Linux.needs(action);
        v.push("sudo");
        v
    }

    fn read_prior(&self, action: &Action) -> Query {
        Linux.read_prior_as(action, Privilege::SudoUnlessRoot)
    }

    fn parse_prior(&self, action: &Action, answer: &Answer) -> Result<State, String> {
        let mut st = Linux.parse_prior_text(action, answer)?;
        if let Some(why) = privilege_refusal(&answer.text) {
            st.errdisabled.push(why);
        }
        Ok(st)
    }

    fn check_prior(&self, action: &Action, prior: &State) -> Result<(), String> {
        if !prior.errdisabled.is_empty() {
            return Err(format!("refused: {}", prior.errdisabled.join("; ")));
        }
        Linux.check_prior_state(action, prior)
    }

    fn change(&self, action: &Action, prior: &State, deadman: Option<(&str, Duration)>) -> Change {
        Linux.change_as(action, prior, deadman, Privilege::SudoUnlessRoot)
    }

    fn plain(&self, action: &Action, prior: &State) -> (Vec<Query>, Vec<Query>) {
        Linux.plain_as(action, prior, Privilege::SudoUnlessRoot)
    }
}

impl Linux {
    /// [`Driver::read_prior`] with the root commands (FRR's `vtysh`) run
    /// as `privilege` says; [`Privilege::SudoUnlessRoot`] also prints
    /// `@@priv root`, `@@priv sudo` or `@@priv none USER` (the account
    /// may not `sudo -n`), which the cumulus driver reads.
    pub fn read_prior_as(&self, action: &Action, privilege: Privilege) -> Query {
        let mut s = String::from(
            "if [ -d /run/systemd/system ]; then echo '@@init systemd'; else echo '@@init frrinit'; fi",
        );
        for p in ports_read(action) {
            let q = quote(p);
            s += &format!(
                "; echo \"@@port {q} $(cat /sys/class/net/{q}/flags 2>/dev/null || echo missing) $(cat /sys/class/net/{q}/operstate 2>/dev/null || echo missing)\""
            );
        }
        // The port's subnets: a numbered BGP neighbour over it is in one.
        if let Action::BgpPeerDown { port } = action {
            s += &format!(
                "; ip -o addr show dev {} 2>/dev/null | sed 's/^/@@addr /'",
                quote(port)
            );
        }
        // Routing sessions, where FRR runs (a node has no vtysh).
        s += &format!(
            "; if command -v vtysh >/dev/null 2>&1; then echo '@@bgp'; {}vtysh -c 'show bgp summary json' 2>/dev/null; echo '@@end'; fi",
            privilege.prefix()
        );
        if privilege == Privilege::SudoUnlessRoot {
            s += "; if [ -z \"$S\" ]; then echo '@@priv root'; elif sudo -n true 2>/dev/null; then echo '@@priv sudo'; else echo \"@@priv none $(id -un)\"; fi";
        }
        privilege.sh(s)
    }

    fn parse_prior_text(&self, action: &Action, answer: &Answer) -> Result<State, String> {
        let text = answer.text.as_str();
        let mut st = State::default();
        let mut seen_init = false;
        let mut bgp: Option<String> = None;
        let mut addrs: Vec<(IpAddr, u8)> = Vec::new();
        let mut local_as = None;
        for line in text.lines() {
            if let Some(b) = bgp.as_mut() {
                if line.trim() == "@@end" {
                    let json = std::mem::take(b);
                    st.bgp = if json.trim().is_empty() {
                        None
                    } else {
                        let (a, peers) = bgp_summary(&json)?;
                        local_as = a;
                        Some(peers)
                    };
                    bgp = None;
                    continue;
                }
                b.push_str(line);
                b.push('\n');
                continue;
            }
            let w: Vec<&str> = line.split_whitespace().collect();
            match w.as_slice() {
                ["@@init", "systemd"] => (st.init, seen_init) = (Init::Systemd, true),
                ["@@init", _] => (st.init, seen_init) = (Init::Frrinit, true),
                ["@@port", name, flags, oper] => {
                    if *flags == "missing" {
                        return Err(format!("port {name} does not exist on the device"));
                    }
                    let f = u32::from_str_radix(flags.trim_start_matches("0x"), 16)
                        .map_err(|_| format!("port {name}: flags {flags:?} are not hex"))?;
                    st.ports.push(PortState {
                        name: name.to_string(),
                        admin_up: f & 1 == 1,
                        oper_up: *oper == "up",
                    });
                }
                ["@@bgp"] => bgp = Some(String::new()),
                ["@@addr", _, _, "inet" | "inet6", cidr, ..] => {
                    let (a, l) = cidr.split_once('/').unwrap_or((cidr, "128"));
                    match (a.parse::<IpAddr>(), l.parse::<u8>()) {
                        (Ok(a), Ok(l)) => addrs.push((a, l)),
                        _ => return Err(format!("`ip -o addr` printed {cidr:?}, not ADDR/LEN")),
                    }
                }
                _ => {}
            }
        }
        if !seen_init {
            return Err(format!(
                "the state read printed no @@init line (got {:?})",
                text.chars().take(200).collect::<String>()
            ));
        }
        let want = ports_read(action).len();
        if st.ports.len() != want {
            return Err(format!("read {} of {want} ports' state", st.ports.len()));
        }
        if let (Action::BgpPeerDown { port }, Some(peers)) = (action, st.bgp.clone()) {
            // Only the sessions over the port: what is shut, undone and
            // waited for.
            let over: Vec<(String, bool)> = peers
                .iter()
                .filter(|(p, _)| runs_over(p, port, &addrs))
                .map(|(p, up)| (p.clone(), *up))
                .collect();
            let Some(a) = local_as.filter(|_| !over.is_empty()) else {
                let subnets: Vec<String> = addrs.iter().map(|(a, l)| format!("{a}/{l}")).collect();
                let names: Vec<&str> = peers.iter().map(|p| p.0.as_str()).collect();
                return Err(format!(
                    "no BGP session runs over {port} (its addresses: {}; BGP neighbours: {}): route_change needs a neighbour on the port's subnet, or one named by the port (BGP unnumbered)",
                    if subnets.is_empty() { "none".to_string() } else { subnets.join(", ") },
                    if names.is_empty() { "none".to_string() } else { names.join(", ") }
                ));
            };
            st.asn = Some(a.to_string());
            st.bgp = Some(over);
        }
        Ok(st)
    }

    fn check_prior_state(&self, action: &Action, prior: &State) -> Result<(), String> {
        let down: Vec<&str> = prior
            .ports
            .iter()
            .filter(|p| !p.admin_up)
            .map(|p| p.name.as_str())
            .collect();
        if !down.is_empty() {
            return Err(format!(
                "{} already administratively down: a fault starts only from ports that are up (bring them up, or fault another port)",
                down.join(", ")
            ));
        }
        let routed = matches!(action, Action::RoutingStop | Action::BgpPeerDown { .. });
        if routed && prior.bgp.is_none() {
            return Err(
                "no routing daemon answers `vtysh -c 'show bgp summary json'`: routing is already stopped, or this is not an FRR box"
                    .into(),
            );
        }
        if let Action::BgpPeerDown { port } = action {
            if prior.asn.is_none() {
                return Err("the state read found no local BGP AS (`as` in `show bgp summary json`): `router bgp` cannot be entered".into());
            }
            if let Some(p) = prior.ports.iter().find(|p| !p.oper_up) {
                return Err(format!(
                    "{} has no carrier: a route change starts from a link that is up",
                    p.name
                ));
            }
            let idle: Vec<String> = prior
                .bgp
                .iter()
                .flatten()
                .filter(|(_, up)| !up)
                .map(|(n, _)| n.clone())
                .collect();
            if !idle.is_empty() {
                return Err(format!(
                    "the BGP session with {} over {port} is not Established: a route change starts from an established session (already shut, or someone else's work)",
                    idle.join(", ")
                ));
            }
        }
        Ok(())
    }

    /// [`Driver::change`] with the root commands run as `privilege` says:
    /// the change, the undo, the dead-man timer (armed as root, so that
    /// its own undo runs as root) and the disarm (`pkill` of a root
    /// process).
    pub fn change_as(
        &self,
        action: &Action,
        prior: &State,
        deadman: Option<(&str, Duration)>,
        privilege: Privilege,
    ) -> Change {
        let ports = ports_of(action);
        let (apply, undo): (Vec<String>, Vec<String>) = match action {
            Action::PortsDown(_) => (links(ports, false), links(ports, true)),
            Action::RoutingStop => (
                vec![routing(prior.init, "stop")],
                vec![routing(prior.init, "start")],
            ),
            Action::Reload { .. } if prior.init == Init::Systemd => {
                // A rebooted box comes back by itself: nothing to undo.
                (vec!["systemctl reboot".into()], Vec::new())
            }
            Action::Reload { .. } => {
                let mut a = vec![routing(prior.init, "stop")];
                a.extend(links(ports, false));
                let mut u = links(ports, true);
                u.push(routing(prior.init, "start"));
                (a, u)
            }
            // `no neighbor X shutdown` on a session that is not shut does
            // nothing and succeeds: the undo is idempotent.
            Action::BgpPeerDown { .. } => (
                vtysh_bgp(prior, "neighbor {} shutdown"),
                vtysh_bgp(prior, "no neighbor {} shutdown"),
            ),
        };
        let (apply, undo) = (privilege.root(apply), privilege.root(undo));
        let reboots = matches!(action, Action::Reload { .. }) && prior.init == Init::Systemd;
        let root = privilege.prefix();
        // Undo runs every command whatever the others did, and fails if any did.
        let body = |disarm: Option<&str>| {
            let mut s = String::from("rc=0");
            if let Some(p) = disarm {
                // A controller killed while its apply was in flight leaves
                // that apply running on the device (its own session): wait
                // for it to end, or the change would land after this undo.
                s = format!(
                    "i=0; while pgrep -f {} >/dev/null; do i=$((i+1)); if [ $i -ge 200 ]; then echo 'rocegate: the change is still being made on the device; undo again later' >&2; exit 99; fi; sleep 0.1; done; {s}",
                    quote(&p.replace("rocegate-deadma[n]", "rocegate-appl[y]"))
                );
                // pkill: 0 killed, 1 none left (already fired, or never
                // armed); anything else means the timer may still be armed.
                s += &format!("; {root}pkill -f {}; [ $? -le 1 ] || rc=97", quote(p));
            }
            for c in &undo {
                s += &format!("; {c} || rc=$?");
            }
            s + "; exit $rc"
        };
        match deadman {
            Some((id, after)) if !undo.is_empty() => {
                // Anchored on the timer's own command line and ended by `;`:
                // it matches this timer only (not `…-1` for `…-12`), and
                // `[n]` keeps it from matching the shells that search for it.
                let pattern = format!("^sh -c : rocegate-deadma[n] {id};");
                let timer = format!(
                    ": rocegate-deadman {id}; sleep {}; {}",
                    after.as_secs().max(1),
                    body(None)
                );
                // The timer outlives the ssh session that armed it (setsid,
                // closed descriptors). Nothing is changed unless its tools
                // exist and it is seen running.
                // Without the right to sudo, nothing is armed or changed.
                let may = if privilege == Privilege::SudoUnlessRoot {
                    "if [ -n \"$S\" ] && ! sudo -n true 2>/dev/null; then echo \"rocegate: $(id -un) may not run sudo -n (no password) here: nothing changed\" >&2; exit 96; fi; "
                } else {
                    ""
                };
                let apply = format!(
                    ": rocegate-apply {id}; {may}for t in setsid pkill pgrep; do command -v $t >/dev/null 2>&1 || {{ echo \"rocegate: $t is not installed: no dead-man switch, nothing changed\" >&2; exit 97; }}; done; \
{root}setsid sh -c {} </dev/null >/dev/null 2>&1 & \
i=0; until pgrep -f {p} >/dev/null; do i=$((i+1)); if [ $i -ge 40 ]; then {root}pkill -f {p}; echo 'rocegate: the dead-man timer did not start: nothing changed' >&2; exit 98; fi; sleep 0.05; done; \
{}",
                    quote(&timer),
                    apply.join(" && "),
                    p = quote(&pattern),
                );
                Change {
                    apply: vec![privilege.sh(apply)],
                    undo: privilege.sh(body(Some(&pattern))),
                    armed: true,
                    reboots,
                }
            }
            _ => Change {
                apply: vec![privilege.sh(apply.join(" && "))],
                undo: privilege.sh(if undo.is_empty() {
                    "true".to_string()
                } else {
                    body(None)
                }),
                armed: false,
                reboots,
            },
        }
    }

    /// [`Driver::plain`], each command behind `sudo -n` for
    /// [`Privilege::SudoUnlessRoot`] (a plain command is one argv: no
    /// shell decides; root may `sudo -n` too).
    pub fn plain_as(
        &self,
        action: &Action,
        _prior: &State,
        privilege: Privilege,
    ) -> (Vec<Query>, Vec<Query>) {
        let sudo: &[&str] = match privilege {
            Privilege::AsIs => &[],
            Privilege::SudoUnlessRoot => &["sudo", "-n"],
        };
        let words = |s: String| {
            Query::Argv(
                sudo.iter()
                    .map(|w| w.to_string())
                    .chain(s.split(' ').map(String::from))
                    .collect(),
            )
        };
        let ports = ports_of(action);
        let (a, u) = match action {
            Action::PortsDown(_) => (links(ports, false), links(ports, true)),
            Action::RoutingStop => (
                vec![routing(Init::Systemd, "stop")],
                vec![routing(Init::Systemd, "start")],
            ),
            Action::Reload { .. } => (vec!["systemctl reboot".into()], Vec::new()),
            // Without a state read there is no AS and no address: the
            // neighbour named by its port, as BGP unnumbered configures it,
            // in the one instance `router bgp` enters without an AS.
            Action::BgpPeerDown { port } => {
                let vtysh = |line: String| {
                    Query::Argv(
                        sudo.iter()
                            .chain(
                                [
                                    "vtysh",
                                    "-c",
                                    "configure terminal",
                                    "-c",
                                    "router bgp",
                                    "-c",
                                ]
                                .iter(),
                            )
                            .map(|w| w.to_string())
                            .chain([line])
                            .collect(),
                    )
                };
                return (
                    vec![vtysh(format!("neighbor {port} shutdown"))],
                    vec![vtysh(format!("no neighbor {port} shutdown"))],
                );
            }
        };
        (
            a.into_iter().map(words).collect(),
            u.into_iter().map(words).collect(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shell text of a `sh -c` request.
    fn sc(q: &Query) -> String {
        match q {
            Query::Argv(a) if a.len() == 3 && a[0] == "sh" && a[1] == "-c" => a[2].clone(),
            other => panic!("not sh -c: {other:?}"),
        }
    }

    fn shq(s: &str) -> Query {
        super::sh(s.to_string())
    }

    fn text(s: impl AsRef<str>) -> Answer {
        Answer {
            exit: Some(0),
            text: s.as_ref().to_string(),
        }
    }

    const FRR: &str = r#"{"ipv4Unicast":{"routerId":"10.255.0.1","peers":{"198.19.111.1":{"remoteAs":65000,"state":"Established","pfxRcd":6},"198.19.112.1":{"remoteAs":65000,"state":"Active"}}}}"#;

    fn ports(names: &[&str]) -> Action {
        Action::PortsDown(names.iter().map(|s| s.to_string()).collect())
    }

    #[test]
    fn reads_ports_init_and_bgp() {
        let a = ports(&["swp31", "swp32"]);
        let out = format!(
            "@@init frrinit\n@@port swp31 0x1003 up\n@@port swp32 0x1002 down\n@@bgp\n{FRR}\n@@end\n"
        );
        let st = Linux.parse_prior(&a, &text(&out)).unwrap();
        assert_eq!(st.init, Init::Frrinit);
        assert_eq!(
            st.ports,
            vec![
                PortState {
                    name: "swp31".into(),
                    admin_up: true,
                    oper_up: true
                },
                PortState {
                    name: "swp32".into(),
                    admin_up: false,
                    oper_up: false
                },
            ]
        );
        assert_eq!(
            st.bgp,
            Some(vec![
                ("198.19.111.1".into(), true),
                ("198.19.112.1".into(), false)
            ])
        );
        assert_eq!(
            st.summary(),
            "swp31,swp32 admin up 1/2; bgp 1/2 established"
        );
        // swp32 is already down: refused before anything is touched.
        let e = Linux.check_prior(&a, &st).unwrap_err();
        assert!(e.starts_with("swp32 already administratively down"), "{e}");
    }

    #[test]
    fn a_missing_port_or_garbage_is_an_error_not_a_state() {
        let a = ports(&["swp9"]);
        let e = Linux
            .parse_prior(&a, &text("@@init systemd\n@@port swp9 missing missing\n"))
            .unwrap_err();
        assert!(e.contains("swp9 does not exist"), "{e}");
        let e = Linux
            .parse_prior(&a, &text("bash: sh: not found\n"))
            .unwrap_err();
        assert!(e.contains("no @@init line"), "{e}");
        let e = Linux
            .parse_prior(
                &Action::RoutingStop,
                &text("@@init systemd\n@@bgp\n{not json\n@@end\n"),
            )
            .unwrap_err();
        assert!(e.contains("not JSON"), "{e}");
        // No vtysh answer: routing cannot be stopped.
        let st = Linux
            .parse_prior(
                &Action::RoutingStop,
                &text("@@init systemd\n@@bgp\n@@end\n"),
            )
            .unwrap();
        assert!(Linux.check_prior(&Action::RoutingStop, &st).is_err());
    }

    /// A fake `ip` that logs its arguments, first on PATH.
    fn fake_ip(dir: &std::path::Path) -> std::path::PathBuf {
        let log = dir.join("ip.log");
        let ip = dir.join("ip");
        std::fs::write(
            &ip,
            format!(
                "#!/bin/sh\n[ -n \"$SLOW_DOWN\" ] && [ \"$4\" = down ] && sleep 1\necho \"$*\" >> {}\n",
                log.display()
            ),
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&ip, std::fs::Permissions::from_mode(0o755)).unwrap();
        log
    }

    fn sh(dir: &std::path::Path, script: &str) -> std::process::Output {
        let path = format!(
            "{}:{}",
            dir.display(),
            std::env::var("PATH").unwrap_or_default()
        );
        std::process::Command::new("sh")
            .args(["-c", script])
            .env("PATH", path)
            .output()
            .unwrap()
    }

    fn armed(id: &str) -> bool {
        std::process::Command::new("pgrep")
            .args(["-f", &format!("^sh -c : rocegate-deadma[n] {id};")])
            .output()
            .is_ok_and(|o| o.status.success())
    }

    fn have(tool: &str) -> bool {
        std::process::Command::new("sh")
            .args(["-c", &format!("command -v {tool}")])
            .output()
            .is_ok_and(|o| o.status.success())
    }

    /// The apply and undo scripts run for real in `sh`, with a fake `ip`:
    /// the timer is armed before the change and seen running, the undo
    /// disarms exactly that timer, and a timer left alone undoes the change.
    #[test]
    fn the_deadman_is_armed_before_the_change_and_disarmed_by_the_undo() {
        if !["setsid", "pkill", "pgrep"].iter().all(|t| have(t)) {
            eprintln!("skipped: setsid, pkill or pgrep is not installed (apt-get install procps util-linux)");
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let log = fake_ip(dir.path());
        let prior = State::default();
        let id = format!("test{}-1", std::process::id());
        let other = format!("test{}-12", std::process::id());
        let a = Linux.change(
            &ports(&["swp31"]),
            &prior,
            Some((&id, Duration::from_secs(30))),
        );
        let b = Linux.change(
            &ports(&["swp32"]),
            &prior,
            Some((&other, Duration::from_secs(30))),
        );
        assert!(a.armed && !a.reboots);
        assert!(
            sc(&a.apply[0]).find("setsid").unwrap()
                < sc(&a.apply[0]).find("ip link set dev swp31 down").unwrap()
        );
        assert!(shlex::split(&sc(&a.apply[0])).is_some() && shlex::split(&sc(&a.undo)).is_some());
        for c in [&a, &b] {
            let o = sh(dir.path(), &sc(&c.apply[0]));
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        }
        assert!(armed(&id) && armed(&other));
        assert_eq!(
            std::fs::read_to_string(&log).unwrap(),
            "link set dev swp31 down\nlink set dev swp32 down\n"
        );
        // `-1`'s undo leaves `-12`'s timer alone.
        let o = sh(dir.path(), &sc(&a.undo));
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        assert!(!armed(&id) && armed(&other));
        // Sent again (recover after a run that already healed): still fine.
        assert!(sh(dir.path(), &sc(&a.undo)).status.success());
        assert!(sh(dir.path(), &sc(&b.undo)).status.success());
        assert!(!armed(&other));
        assert_eq!(
            std::fs::read_to_string(&log).unwrap(),
            "link set dev swp31 down\nlink set dev swp32 down\nlink set dev swp31 up\nlink set dev swp31 up\nlink set dev swp32 up\n"
        );
        // A controller killed while its apply was in flight: the undo
        // (from `recover`) waits for that apply to end, so the change
        // cannot land after it.
        std::fs::write(&log, "").unwrap();
        let id = format!("test{}-inflight", std::process::id());
        let c = Linux.change(
            &ports(&["swp7"]),
            &prior,
            Some((&id, Duration::from_secs(30))),
        );
        let path = format!(
            "{}:{}",
            dir.path().display(),
            std::env::var("PATH").unwrap_or_default()
        );
        let mut apply = std::process::Command::new("sh")
            .args(["-c", &sc(&c.apply[0])])
            .env("PATH", &path)
            .env("SLOW_DOWN", "1")
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(300));
        let o = sh(dir.path(), &sc(&c.undo));
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let _ = apply.wait();
        assert_eq!(
            std::fs::read_to_string(&log).unwrap(),
            "link set dev swp7 down\nlink set dev swp7 up\n"
        );
        assert!(!armed(&id));
        // Nobody undoes it: the device's own timer does, after its delay.
        std::fs::write(&log, "").unwrap();
        let id = format!("test{}-fire", std::process::id());
        let c = Linux.change(
            &ports(&["swp9"]),
            &prior,
            Some((&id, Duration::from_secs(1))),
        );
        assert!(sh(dir.path(), &sc(&c.apply[0])).status.success());
        let t = std::time::Instant::now();
        while std::fs::read_to_string(&log).unwrap().lines().count() < 2
            && t.elapsed().as_secs() < 10
        {
            std::thread::sleep(Duration::from_millis(100));
        }
        assert_eq!(
            std::fs::read_to_string(&log).unwrap(),
            "link set dev swp9 down\nlink set dev swp9 up\n"
        );
    }

    #[test]
    fn routing_and_reload_follow_the_init_system() {
        let frr = State {
            init: Init::Frrinit,
            ..Default::default()
        };
        let sd = State::default();
        assert_eq!(
            Linux.change(&Action::RoutingStop, &frr, None),
            Change {
                apply: vec![shq("/usr/lib/frr/frrinit.sh stop")],
                undo: shq("rc=0; /usr/lib/frr/frrinit.sh start || rc=$?; exit $rc"),
                armed: false,
                reboots: false
            }
        );
        assert_eq!(
            Linux.change(&Action::RoutingStop, &sd, None).apply,
            vec![shq("systemctl stop frr")]
        );
        let reload = Action::Reload {
            ports: vec!["swp1".into(), "swp2".into()],
        };
        // A systemd box reboots and comes back by itself.
        let c = Linux.change(&reload, &sd, Some(("x", Duration::from_secs(30))));
        assert_eq!(
            c,
            Change {
                apply: vec![shq("systemctl reboot")],
                undo: shq("true"),
                armed: false,
                reboots: true
            }
        );
        // Without systemd: routing stopped and every port down, then both back.
        let c = Linux.change(&reload, &frr, None);
        assert_eq!(
            c.apply,
            vec![shq("/usr/lib/frr/frrinit.sh stop && ip link set dev swp1 down && ip link set dev swp2 down")]
        );
        assert!(
            sc(&c.undo).contains("ip link set dev swp2 up || rc=$?; /usr/lib/frr/frrinit.sh start")
        );
    }

    #[test]
    fn settled_means_back_to_the_prior_state() {
        let up = |n: &str, oper| PortState {
            name: n.into(),
            admin_up: true,
            oper_up: oper,
        };
        let prior = State {
            init: Init::Frrinit,
            ports: vec![up("swp31", true)],
            bgp: Some(vec![("a".into(), true), ("b".into(), false)]),
            ..Default::default()
        };
        let mut now = prior.clone();
        assert!(Linux.settled(&prior, &now));
        now.ports[0].oper_up = false;
        assert!(!Linux.settled(&prior, &now), "carrier not back yet");
        now.ports[0].oper_up = true;
        now.bgp = Some(vec![("a".into(), false), ("b".into(), false)]);
        assert!(!Linux.settled(&prior, &now), "session a not re-established");
        now.bgp = None;
        assert!(!Linux.settled(&prior, &now), "routing not answering");
    }
}

#[cfg(test)]
#[path = "fault_bgp_tests.rs"]
mod bgp_tests;
