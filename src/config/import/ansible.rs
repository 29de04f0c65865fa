//! Ansible inventories, read from the JSON that `ansible-inventory --list`
//! prints. INI and YAML inventories reach this module through that command
//! (the app runs it): Ansible's own reader then settles ranges
//! (`gpu[001:128]`), `:children`, `:vars`, `group_vars/` and `host_vars/`
//! and variable precedence, which a second reader here would only get
//! subtly wrong. This module maps groups and host variables to hosts.
//!
//! What a variable may do: `ansible_host`, `ansible_user`, `ansible_port`,
//! `ansible_ssh_private_key_file` and the `-o`/`-J` parts of
//! `ansible_ssh_common_args`/`ansible_ssh_extra_args` become the address
//! and the ssh transport. Connection variables rocegate cannot honour (a
//! password, `ansible_connection: local`, an `ansible_*` name it does not
//! know, such as a typo) are errors naming the host: connecting otherwise
//! than Ansible does, silently, would be worse. The operator's own
//! variables (`rack`, `gpu_model`) are listed by name in the skeleton and
//! otherwise left alone; their values are never copied (they may be
//! secrets).

use std::collections::{BTreeMap, BTreeSet, HashMap};

use serde_json::{Map, Value};

use super::{HostSsh, Imported, ImportedHost};
use crate::config::diag::quote;
use crate::config::names::ssh_command_option;

/// What kind of Ansible inventory a file holds, from its text alone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    /// The JSON of `ansible-inventory --list` (or of a dynamic inventory
    /// script's `--list`).
    ListJson,
    /// A whole file encrypted with `ansible-vault`.
    Vault,
    /// A YAML file that configures an inventory plugin (`plugin: aws_ec2`):
    /// its hosts exist only where the plugin can reach its API.
    Plugin(String),
    /// INI or YAML for `ansible-inventory` to read.
    Text,
}

pub fn detect(text: &str) -> Kind {
    let t = text.trim_start_matches('\u{feff}').trim_start();
    if t.starts_with("$ANSIBLE_VAULT;") {
        return Kind::Vault;
    }
    if t.starts_with('{') {
        return Kind::ListJson;
    }
    for line in t.lines() {
        if let Some(rest) = line.strip_prefix("plugin:") {
            return Kind::Plugin(rest.trim().trim_matches(['"', '\'']).to_string());
        }
    }
    Kind::Text
}

/// Variables that change nothing about how rocegate connects: privilege
/// escalation on the far side, Ansible's own interpreter and transfer
/// settings. Passwords among them are never read.
const IGNORED: &[&str] = &[
    "ansible_python_interpreter",
    "ansible_become",
    "ansible_become_method",
    "ansible_become_user",
    "ansible_become_flags",
    "ansible_become_exe",
    "ansible_become_pass",
    "ansible_become_password",
    "ansible_pipelining",
    "ansible_ssh_pipelining",
    "ansible_shell_type",
    "ansible_shell_executable",
    "ansible_sftp_extra_args",
    "ansible_scp_extra_args",
    "ansible_ssh_transfer_method",
    "ansible_timeout",
    "ansible_ssh_timeout",
    "ansible_host_key_checking",
    "ansible_ssh_host_key_checking",
];

/// The ssh connection plugins Ansible ships; anything else (`local`,
/// `docker`, `winrm`, `network_cli`) is not a host rocegate can reach.
const SSH_CONNECTIONS: &[&str] = &["ssh", "smart", "paramiko", "paramiko_ssh"];

/// Options rocegate sets itself for its ControlMaster: an inventory's
/// values would fight them, so they are left out with a note.
const OWN_OPTIONS: &[&str] = &[
    "controlmaster",
    "controlpath",
    "controlpersist",
    "batchmode",
];

/// Each host's groups on its paths from the root, with their depth.
type Membership = HashMap<String, BTreeSet<(usize, String)>>;

struct Groups<'a> {
    map: &'a Map<String, Value>,
}

impl<'a> Groups<'a> {
    fn group(&self, name: &str) -> Option<&'a Value> {
        self.map.get(name).filter(|_| name != "_meta")
    }

    fn hosts(&self, g: &'a Value) -> Vec<&'a str> {
        // A legacy script may print a group as a bare list of hosts.
        let list = match g {
            Value::Array(a) => Some(a),
            other => other.get("hosts").and_then(Value::as_array),
        };
        list.map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default()
    }

    fn children(&self, g: &'a Value) -> Vec<&'a str> {
        g.get("children")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default()
    }

    /// Walks `root` and its children (depth first, each group once): every
    /// host in written order, with the groups on its path and their depth.
    fn walk(&self, root: &str) -> (Vec<String>, Membership) {
        let mut order = Vec::new();
        let mut member: Membership = HashMap::new();
        let mut path: Vec<String> = Vec::new();
        let mut on_path = BTreeSet::new();
        self.visit(root, &mut path, &mut on_path, &mut order, &mut member);
        (order, member)
    }

    fn visit(
        &self,
        name: &str,
        path: &mut Vec<String>,
        on_path: &mut BTreeSet<String>,
        order: &mut Vec<String>,
        member: &mut Membership,
    ) {
        // A cycle (possible in hand-written JSON) ends the walk there; the
        // depth cap keeps a pathological nesting from exhausting the stack.
        if path.len() > 64 || !on_path.insert(name.to_string()) {
            return;
        }
        let Some(g) = self.group(name) else {
            on_path.remove(name);
            return;
        };
        path.push(name.to_string());
        for h in self.hosts(g) {
            let m = member.entry(h.to_string()).or_default();
            if m.is_empty() {
                order.push(h.to_string());
            }
            m.extend(path.iter().enumerate().map(|(d, p)| (d, p.clone())));
        }
        for c in self.children(g) {
            self.visit(c, path, on_path, order, member);
        }
        path.pop();
        on_path.remove(name);
    }
}

/// Where a vault-encrypted value hides in `v`, as a dotted path.
fn vault_path(v: &Value, at: &str) -> Option<String> {
    match v {
        Value::Object(o) if o.contains_key("__ansible_vault") => Some(at.to_string()),
        Value::Object(o) => o
            .iter()
            .find_map(|(k, x)| vault_path(x, &format!("{at}.{k}"))),
        Value::Array(a) => a
            .iter()
            .enumerate()
            .find_map(|(i, x)| vault_path(x, &format!("{at}[{i}]"))),
        Value::String(s) if s.trim_start().starts_with("$ANSIBLE_VAULT;") => Some(at.to_string()),
        _ => None,
    }
}

const VAULT_FIX: &str = "rocegate cannot decrypt it and keeps no secrets in an inventory: move it out of the inventory (a vars file the play loads), or import `ansible-inventory --list` output where that variable is absent";

/// Reads `ansible-inventory --list` JSON. `group` limits the hosts to one
/// group and its children; without it every host of `all` is imported.
pub fn parse_list(file: &str, json: &str, group: Option<&str>) -> Result<Imported, String> {
    let root: Value = serde_json::from_str(json)
        .map_err(|e| format!("{file}: not the JSON of `ansible-inventory --list`: {e}"))?;
    let Some(map) = root.as_object() else {
        return Err(format!(
            "{file}: not the JSON of `ansible-inventory --list`: the top level is not an object"
        ));
    };
    let groups = Groups { map };
    let names: Vec<&str> = map
        .keys()
        .map(String::as_str)
        .filter(|k| *k != "_meta")
        .collect();
    let root_group = match group {
        Some(g) if groups.group(g).is_some() => g,
        Some(g) => {
            return Err(format!(
                "{file}: no group {} (groups: {})",
                quote(g),
                names.join(", ")
            ))
        }
        None if groups.group("all").is_some() => "all",
        None => {
            return Err(format!(
                "{file}: no group \"all\": not the JSON of `ansible-inventory --list`"
            ))
        }
    };
    // Group variables appear only in `--export` output; without it Ansible
    // has already merged them into each host's variables.
    for name in &names {
        if let Some(vars) = groups.group(name).and_then(|g| g.get("vars")) {
            if let Some(p) = vault_path(vars, "vars") {
                return Err(format!(
                    "{file}: group {name}: {p} is vault-encrypted; {VAULT_FIX}"
                ));
            }
        }
    }
    let (order, member) = groups.walk(root_group);
    let hostvars = root
        .get("_meta")
        .and_then(|m| m.get("hostvars"))
        .and_then(Value::as_object);
    let mut hosts = Vec::new();
    let mut ignored: BTreeSet<String> = BTreeSet::new();
    let mut notes = BTreeSet::new();
    let mut errors = Vec::new();
    for h in &order {
        let mut vars: BTreeMap<String, Value> = BTreeMap::new();
        for (_, g) in member.get(h).into_iter().flatten() {
            if let Some(v) = groups
                .group(g)
                .and_then(|g| g.get("vars"))
                .and_then(Value::as_object)
            {
                vars.extend(v.iter().map(|(k, x)| (k.clone(), x.clone())));
            }
        }
        if let Some(v) = hostvars.and_then(|hv| hv.get(h)).and_then(Value::as_object) {
            vars.extend(v.iter().map(|(k, x)| (k.clone(), x.clone())));
        }
        match host(h, &vars, &mut ignored, &mut notes) {
            Ok(x) => hosts.push(x),
            Err(e) => errors.push(e),
        }
        if errors.len() >= 10 {
            errors.push("(stopped after 10 hosts with problems)".into());
            break;
        }
    }
    if !errors.is_empty() {
        return Err(format!("{file}: {}", errors.join("; ")));
    }
    if hosts.is_empty() {
        return Err(format!(
            "{file}: group {root_group} has no hosts (groups: {})",
            names.join(", ")
        ));
    }
    let mut notes: Vec<String> = notes.into_iter().collect();
    if !ignored.is_empty() {
        let list: Vec<&str> = ignored.iter().map(String::as_str).collect();
        notes.push(format!(
            "variables rocegate does not use (values not copied): {}",
            list.join(", ")
        ));
    }
    Ok(Imported { hosts, notes })
}

/// A scalar variable as text (`ansible_port` may be a number).
fn scalar(host: &str, name: &str, v: &Value) -> Result<String, String> {
    let s = match v {
        Value::String(s) => s.clone(),
        Value::Number(n) => n.to_string(),
        other => {
            return Err(format!(
                "host {host}: {name} is {} where a string was expected",
                kind_of(other)
            ))
        }
    };
    if s.contains("{{") || s.contains("{%") {
        return Err(format!(
            "host {host}: {name} is a Jinja template ({}); rocegate does not evaluate templates: write the value itself",
            quote(&s)
        ));
    }
    Ok(s)
}

fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "a mapping",
    }
}

fn host(
    name: &str,
    vars: &BTreeMap<String, Value>,
    ignored: &mut BTreeSet<String>,
    notes: &mut BTreeSet<String>,
) -> Result<ImportedHost, String> {
    let mut h = ImportedHost {
        name: name.to_string(),
        ..Default::default()
    };
    for (k, v) in vars {
        if let Some(p) = vault_path(v, k) {
            return Err(format!("host {name}: {p} is vault-encrypted; {VAULT_FIX}"));
        }
        match k.as_str() {
            "ansible_host" | "ansible_ssh_host" => h.address = Some(scalar(name, k, v)?),
            "ansible_user" | "ansible_ssh_user" => h.ssh.user = Some(scalar(name, k, v)?),
            "ansible_port" | "ansible_ssh_port" => {
                let s = scalar(name, k, v)?;
                h.ssh.port = Some(s.parse::<u16>().ok().filter(|p| *p > 0).ok_or_else(|| {
                    format!("host {name}: {k} {} is not a port (1-65535)", quote(&s))
                })?);
            }
            "ansible_ssh_private_key_file" | "ansible_private_key_file" => {
                h.ssh.key = Some(scalar(name, k, v)?)
            }
            "ansible_ssh_common_args" | "ansible_ssh_extra_args" | "ansible_ssh_args" => {
                let s = scalar(name, k, v)?;
                ssh_args(name, k, &s, &mut h.ssh, notes)?;
            }
            "ansible_connection" => {
                let c = scalar(name, k, v)?;
                if !SSH_CONNECTIONS.contains(&c.as_str()) {
                    return Err(format!(
                        "host {name}: ansible_connection is {}; rocegate reaches nodes over ssh only (leave the host out with --group)",
                        quote(&c)
                    ));
                }
            }
            "ansible_password" | "ansible_ssh_pass" | "ansible_ssh_password" => {
                return Err(format!(
                    "host {name}: {k} is set; rocegate logs in with keys only (ssh BatchMode) and copies no passwords: set up a key and ansible_ssh_private_key_file"
                ));
            }
            k if IGNORED.contains(&k) => {}
            k if k.starts_with("ansible_") => {
                return Err(format!(
                    "host {name}: unknown variable {k}: rocegate maps ansible_host, ansible_user, ansible_port, ansible_ssh_private_key_file and ansible_ssh_common_args, and ignores privilege escalation and interpreter settings; a connection variable it cannot honour is refused rather than dropped (a typo such as ansible_hots is caught here too)"
                ));
            }
            other => {
                ignored.insert(other.to_string());
            }
        }
    }
    Ok(h)
}

/// The `-o Name=value` and `-J host` words of an ssh argument string.
/// Anything else (`-F`, `-i`, `-p`, a bare word) is refused: those belong
/// in the variables rocegate maps, or change ssh in ways it cannot see.
fn ssh_args(
    host: &str,
    var: &str,
    text: &str,
    ssh: &mut HostSsh,
    notes: &mut BTreeSet<String>,
) -> Result<(), String> {
    let words = shlex::split(text)
        .ok_or_else(|| format!("host {host}: {var} {} has an unclosed quote", quote(text)))?;
    let mut it = words.into_iter();
    while let Some(w) = it.next() {
        let (flag, inline) = if w.len() > 2 && (w.starts_with("-o") || w.starts_with("-J")) {
            (w[..2].to_string(), Some(w[2..].to_string()))
        } else {
            (w.clone(), None)
        };
        let value = |it: &mut std::vec::IntoIter<String>| {
            inline
                .clone()
                .or_else(|| it.next())
                .ok_or_else(|| format!("host {host}: {var}: {flag} is missing its value"))
        };
        match flag.as_str() {
            "-J" => ssh.jump = Some(value(&mut it)?),
            "-o" => {
                let o = value(&mut it)?;
                if let Some(cmd) = ssh_command_option(&o) {
                    return Err(format!(
                        "host {host}: {var} has -o {}: {cmd} makes ssh run a local command, which an inventory may not do (for a jump host use -J or ProxyJump)",
                        quote(&o)
                    ));
                }
                let (k, v) = o
                    .trim()
                    .split_once(|c: char| c == '=' || c.is_whitespace())
                    .map(|(k, v)| (k.trim(), v.trim().trim_start_matches('=').trim()))
                    .ok_or_else(|| {
                        format!("host {host}: {var}: -o {} has no value", quote(&o))
                    })?;
                if k.eq_ignore_ascii_case("proxyjump") {
                    ssh.jump = Some(v.to_string());
                } else if OWN_OPTIONS.contains(&k.to_ascii_lowercase().as_str()) {
                    notes.insert(format!(
                        "{var}: -o {k} left out: rocegate sets up its own connection reuse"
                    ));
                } else if v.is_empty() || v.contains(char::is_whitespace) {
                    return Err(format!(
                        "host {host}: {var}: -o {} is not one Name=value word",
                        quote(&o)
                    ));
                } else {
                    let opt = format!("{k}={v}");
                    if !ssh.options.contains(&opt) {
                        ssh.options.push(opt);
                    }
                }
            }
            other => {
                return Err(format!(
                    "host {host}: {var}: {} is not supported (rocegate takes -o Name=value and -J host from it; user, port and key come from ansible_user, ansible_port and ansible_ssh_private_key_file)",
                    quote(other)
                ))
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIST: &str = r#"{
      "_meta": {"hostvars": {
        "gpu001": {"ansible_host": "10.0.0.1", "ansible_user": "root", "rack": "r1",
                   "ansible_ssh_common_args": "-o StrictHostKeyChecking=accept-new -J bastion -o ControlPersist=60s"},
        "gpu002": {"ansible_host": "10.0.0.2", "ansible_user": "root",
                   "ansible_ssh_common_args": "-o StrictHostKeyChecking=accept-new -J bastion"}
      }},
      "all": {"children": ["ungrouped", "pod"]},
      "pod": {"children": ["gpu"]},
      "gpu": {"hosts": ["gpu001", "gpu002"]},
      "ungrouped": {"hosts": ["login1"]}
    }"#;

    #[test]
    fn kinds() {
        assert_eq!(detect(LIST), Kind::ListJson);
        assert_eq!(detect("$ANSIBLE_VAULT;1.1;AES256\n3031"), Kind::Vault);
        assert_eq!(
            detect("---\nplugin: amazon.aws.aws_ec2\nregions: [x]\n"),
            Kind::Plugin("amazon.aws.aws_ec2".into())
        );
        assert_eq!(detect("[gpu]\ngpu001\n"), Kind::Text);
    }

    #[test]
    fn groups_children_and_vars() {
        let i = parse_list("h.json", LIST, Some("pod")).unwrap();
        let names: Vec<&str> = i.hosts.iter().map(|h| h.name.as_str()).collect();
        assert_eq!(names, ["gpu001", "gpu002"]);
        let h = &i.hosts[0];
        assert_eq!(h.address.as_deref(), Some("10.0.0.1"));
        assert_eq!(h.ssh.user.as_deref(), Some("root"));
        assert_eq!(h.ssh.jump.as_deref(), Some("bastion"));
        assert_eq!(h.ssh.options, ["StrictHostKeyChecking=accept-new"]);
        assert!(i.notes.iter().any(|n| n.contains("rack")), "{:?}", i.notes);
        assert!(i.notes.iter().any(|n| n.contains("ControlPersist")));
        let all = parse_list("h.json", LIST, None).unwrap();
        assert_eq!(all.hosts.len(), 3);
        let e = parse_list("h.json", LIST, Some("nope")).unwrap_err();
        assert!(e.contains("h.json: no group \"nope\""), "{e}");
    }

    #[test]
    fn export_form_merges_group_vars_parent_first() {
        let j = r#"{"all": {"children": ["pod"], "vars": {"ansible_user": "a"}},
                    "pod": {"hosts": ["n1"], "vars": {"ansible_user": "b", "ansible_port": "2222"}},
                    "_meta": {"hostvars": {"n1": {"ansible_port": 2200}}}}"#;
        let i = parse_list("e.json", j, None).unwrap();
        assert_eq!(i.hosts[0].ssh.user.as_deref(), Some("b"));
        assert_eq!(i.hosts[0].ssh.port, Some(2200));
    }

    #[test]
    fn refusals_name_the_host_or_group() {
        let cases = [
            (
                r#"{"all": {"hosts": ["n1"]}, "_meta": {"hostvars": {"n1": {"ansible_become_password": {"__ansible_vault": "$ANSIBLE_VAULT;1.1;AES256\n31"}}}}}"#,
                "host n1: ansible_become_password is vault-encrypted",
            ),
            (
                r#"{"all": {"children": ["g"]}, "g": {"hosts": ["n1"], "vars": {"db": {"__ansible_vault": "x"}}}}"#,
                "group g: vars.db is vault-encrypted",
            ),
            (
                r#"{"all": {"hosts": ["n1"]}, "_meta": {"hostvars": {"n1": {"ansible_hots": "x"}}}}"#,
                "host n1: unknown variable ansible_hots",
            ),
            (
                r#"{"all": {"hosts": ["n1"]}, "_meta": {"hostvars": {"n1": {"ansible_connection": "local"}}}}"#,
                "ansible_connection is \"local\"",
            ),
            (
                r#"{"all": {"hosts": ["n1"]}, "_meta": {"hostvars": {"n1": {"ansible_ssh_pass": "x"}}}}"#,
                "host n1: ansible_ssh_pass is set",
            ),
            (
                r#"{"all": {"hosts": ["n1"]}, "_meta": {"hostvars": {"n1": {"ansible_ssh_common_args": "-o ProxyCommand=nc %h %p"}}}}"#,
                "ProxyCommand makes ssh run a local command",
            ),
            (
                r#"{"all": {"hosts": ["n1"]}, "_meta": {"hostvars": {"n1": {"ansible_ssh_common_args": "-F /tmp/cfg"}}}}"#,
                "\"-F\" is not supported",
            ),
            (
                r#"{"all": {"hosts": ["n1"]}, "_meta": {"hostvars": {"n1": {"ansible_host": "{{ inventory_hostname }}.mgmt"}}}}"#,
                "is a Jinja template",
            ),
            (
                r#"{"all": {"hosts": ["n1"]}, "_meta": {"hostvars": {"n1": {"ansible_port": "ssh"}}}}"#,
                "ansible_port \"ssh\" is not a port",
            ),
            (
                r#"{"all": {"children": ["empty"]}, "empty": {}}"#,
                "group all has no hosts",
            ),
            ("[1, 2]", "the top level is not an object"),
            ("{\"all\": ", "not the JSON"),
        ];
        for (json, want) in cases {
            let e = parse_list("inv.json", json, None).unwrap_err();
            assert!(e.starts_with("inv.json: "), "{e}");
            assert!(e.contains(want), "want {want:?} in {e}");
        }
    }

    #[test]
    fn cycles_end() {
        let j = r#"{"all": {"children": ["a"]}, "a": {"children": ["b"], "hosts": ["x"]}, "b": {"children": ["a"]}}"#;
        assert_eq!(parse_list("c.json", j, None).unwrap().hosts.len(), 1);
    }

    proptest::proptest! {
        #[test]
        fn garbage_never_panics(s in ".{0,400}") {
            let _ = parse_list("g.json", &s, None);
            let _ = parse_list("g.json", &format!("{{\"all\": {s}}}"), Some("all"));
            let _ = detect(&s);
        }
    }
}
