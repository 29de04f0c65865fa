//! Slurm's view of its nodes: a hostlist (`gpu[001-128]`), the output of
//! `scontrol show nodes` (one `NodeName=` record per node, wrapped over
//! several lines or `--oneliner`), or of `sinfo -N` (a `NODELIST` header,
//! then one row per node and partition). The text is the operator's paste
//! and is read as untrusted: unknown lines are skipped, nothing panics.

use std::collections::BTreeSet;

use super::{Imported, ImportedHost};
use crate::config::diag::quote;
use crate::config::hostlist;

/// Which of the three forms `text` is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    Scontrol,
    Sinfo,
    Hostlist,
}

impl Form {
    /// The command whose output this is.
    pub fn name(&self) -> &'static str {
        match self {
            Form::Scontrol => "scontrol show nodes",
            Form::Sinfo => "sinfo",
            Form::Hostlist => "hostlist",
        }
    }
}

pub fn detect(text: &str) -> Form {
    if text.contains("NodeName=") {
        Form::Scontrol
    } else if text
        .lines()
        .any(|l| l.split_whitespace().next() == Some("NODELIST"))
    {
        Form::Sinfo
    } else {
        Form::Hostlist
    }
}

/// States in which a node cannot run work now (with `sinfo`'s short
/// forms); such nodes stay in the skeleton (the pod is still the pod) and
/// the header names them. A trailing `*` (not responding) or `~` (powered
/// off) says the same; other suffixes (`#`, `!`, `%`, `$`, `@`, `^`, `-`)
/// do not.
const UNAVAILABLE: &[&str] = &[
    "down",
    "drain",
    "drained",
    "draining",
    "drng",
    "fail",
    "failing",
    "failg",
    "future",
    "futr",
    "inval",
    "maint",
    "not_responding",
    "power_down",
    "powered_down",
    "pow_dn",
    "reboot",
];

fn unavailable(state: &str) -> bool {
    let s = state.to_ascii_lowercase();
    s.ends_with(['*', '~'])
        || s.split('+')
            .map(|w| w.trim_end_matches(['*', '~', '!', '%', '#', '$', '@', '^', '-']))
            .any(|w| UNAVAILABLE.contains(&w))
}

/// Hosts from `text`. `partition` keeps only the nodes of one partition
/// (scontrol and sinfo forms; a hostlist has none).
pub fn parse(file: &str, text: &str, partition: Option<&str>) -> Result<Imported, String> {
    let form = detect(text);
    let mut notes = Vec::new();
    let (hosts, down) = match form {
        Form::Hostlist => {
            if partition.is_some() {
                return Err(format!(
                    "{file}: --group names a Slurm partition, and a hostlist has none: give `scontrol show nodes` or `sinfo -N` output, or only the partition's hostlist"
                ));
            }
            let expr: Vec<&str> = text
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty() && !l.starts_with('#'))
                .collect();
            if expr.is_empty() {
                return Err(format!(
                    "{file}: no hosts: the hostlist is empty (write one such as gpu[001-128])"
                ));
            }
            let joined = expr.join(",");
            let names = hostlist::expand(&joined).map_err(|e| format!("{file}: {e}"))?;
            let hosts = names
                .into_iter()
                .map(|n| ImportedHost {
                    name: n,
                    ..Default::default()
                })
                .collect();
            (hosts, Vec::new())
        }
        Form::Scontrol => scontrol(text, partition),
        Form::Sinfo => sinfo(text, partition),
    };
    if hosts.is_empty() {
        return Err(match partition {
            Some(p) => format!("{file}: no node is in partition {}", quote(p)),
            None => format!("{file}: no nodes found in this {} output", form.name()),
        });
    }
    if !down.is_empty() {
        notes.push(format!(
            "Slurm reported these nodes unavailable (down, drained or powered off): {}",
            hostlist::compress(&down)
        ));
    }
    Ok(Imported { hosts, notes })
}

/// `Key=Value` words of one `scontrol` record. Values such as `OS=Linux
/// 3.10.0 #1 SMP …` hold spaces; the words after them that have no `=`
/// belong to them and are skipped.
fn fields(record: &str) -> Vec<(&str, &str)> {
    record
        .split_whitespace()
        .filter_map(|w| w.split_once('='))
        .collect()
}

fn scontrol(text: &str, partition: Option<&str>) -> (Vec<ImportedHost>, Vec<String>) {
    let mut records: Vec<String> = Vec::new();
    for line in text.lines() {
        if line.trim_start().starts_with("NodeName=") {
            records.push(String::new());
        }
        if let Some(r) = records.last_mut() {
            r.push(' ');
            r.push_str(line);
        }
    }
    let mut hosts = Vec::new();
    let mut down = Vec::new();
    let mut seen = BTreeSet::new();
    for r in &records {
        let f = fields(r);
        let get = |k: &str| f.iter().find(|(a, _)| *a == k).map(|(_, v)| *v);
        let Some(name) = get("NodeName").filter(|n| !n.is_empty()) else {
            continue;
        };
        if let Some(p) = partition {
            let parts = get("Partitions").unwrap_or("");
            if !parts.split(',').any(|x| x == p) {
                continue;
            }
        }
        if !seen.insert(name.to_string()) {
            continue;
        }
        // NodeAddr defaults to the name; `(null)` and empty mean "none".
        let address = get("NodeAddr")
            .filter(|a| !a.is_empty() && *a != name && *a != "(null)")
            .map(str::to_string);
        if get("State").is_some_and(unavailable) {
            down.push(name.to_string());
        }
        hosts.push(ImportedHost {
            name: name.to_string(),
            address,
            ..Default::default()
        });
    }
    (hosts, down)
}

fn sinfo(text: &str, partition: Option<&str>) -> (Vec<ImportedHost>, Vec<String>) {
    let mut cols: Option<(usize, Option<usize>, Option<usize>)> = None;
    let mut hosts = Vec::new();
    let mut down = Vec::new();
    let mut seen = BTreeSet::new();
    for line in text.lines() {
        let w: Vec<&str> = line.split_whitespace().collect();
        if w.first() == Some(&"NODELIST") {
            let at = |k: &str| w.iter().position(|x| *x == k);
            cols = at("NODELIST").map(|n| (n, at("PARTITION"), at("STATE")));
            continue;
        }
        let Some((n, p, s)) = cols else { continue };
        let Some(name) = w.get(n) else { continue };
        if let Some(want) = partition {
            // The default partition is starred: `debug*`.
            let got = p.and_then(|p| w.get(p)).map(|x| x.trim_end_matches('*'));
            if got != Some(want) {
                continue;
            }
        }
        // `sinfo -N` prints one row per node and partition.
        if !seen.insert(name.to_string()) {
            continue;
        }
        if s.and_then(|s| w.get(s)).is_some_and(|st| unavailable(st)) {
            down.push(name.to_string());
        }
        hosts.push(ImportedHost {
            name: name.to_string(),
            ..Default::default()
        });
    }
    (hosts, down)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> String {
        std::fs::read_to_string(format!(
            "{}/tests/fixtures/slurm/{name}",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap()
    }

    #[test]
    fn scontrol_show_node() {
        let t = fixture("scontrol-show-node-binfservas07.txt");
        assert_eq!(detect(&t), Form::Scontrol);
        let i = parse("s.txt", &t, None).unwrap();
        assert_eq!(i.hosts.len(), 1);
        assert_eq!(i.hosts[0].name, "binfservas07");
        // NodeAddr equals the name: no separate address.
        assert_eq!(i.hosts[0].address, None);
        assert!(i.notes.is_empty(), "{:?}", i.notes);
        assert!(parse("s.txt", &t, Some("pall")).is_ok());
        let e = parse("s.txt", &t, Some("gpu")).unwrap_err();
        assert!(e.contains("s.txt: no node is in partition \"gpu\""), "{e}");
    }

    #[test]
    fn scontrol_oneliner_with_addresses_and_states() {
        let t = "NodeName=gpu001 Arch=x86_64 NodeAddr=10.0.0.1 NodeHostName=gpu001 State=IDLE Partitions=gpu,all\n\
                 NodeName=gpu002 Arch=x86_64 NodeAddr=10.0.0.2 NodeHostName=gpu002 State=DOWN+DRAIN Partitions=gpu\n\
                 NodeName=cpu001 NodeAddr=cpu001 State=IDLE Partitions=cpu\n";
        let i = parse("o.txt", t, Some("gpu")).unwrap();
        assert_eq!(i.hosts.len(), 2);
        assert_eq!(i.hosts[1].address.as_deref(), Some("10.0.0.2"));
        assert!(i.notes[0].contains("gpu002"), "{:?}", i.notes);
    }

    #[test]
    fn sinfo_n() {
        let t = fixture("sinfo-N-ukaea-amp.txt");
        assert_eq!(detect(&t), Form::Sinfo);
        let i = parse("i.txt", &t, Some("ukaea-amp")).unwrap();
        assert_eq!(i.hosts.len(), 22);
        assert_eq!(i.hosts[0].name, "gpu-q-48");
        // idle~ is powered down.
        assert!(i.notes[0].contains("gpu-q-[48,59-60,64]"), "{:?}", i.notes);
        let t = fixture("sinfo-N-ohpc-down.txt");
        let i = parse("d.txt", &t, Some("normal")).unwrap();
        assert_eq!(i.hosts.len(), 2);
        assert!(i.notes[0].contains("compute[01-02]"), "{:?}", i.notes);
    }

    #[test]
    fn hostlists() {
        let i = parse("-", "gpu[001-004]\nlogin1\n", None).unwrap();
        assert_eq!(i.hosts.len(), 5);
        for bad in ["", "  \n# nothing\n", "gpu[]", "gpu[3-1"] {
            let e = parse("h.txt", bad, None).unwrap_err();
            assert!(e.starts_with("h.txt: "), "{e}");
        }
        assert!(parse("h.txt", "gpu1", Some("p")).is_err());
    }

    proptest::proptest! {
        #[test]
        fn garbage_never_panics(s in "(.|\n){0,300}", p in proptest::option::of("[a-z*]{0,5}")) {
            let _ = parse("g", &s, p.as_deref());
            let _ = parse("g", &format!("NODELIST NODES PARTITION STATE\n{s}"), p.as_deref());
            let _ = parse("g", &format!("NodeName={s}"), p.as_deref());
        }
    }
}
