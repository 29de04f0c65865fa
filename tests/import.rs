//! `rocegate inventory import` and `inventory discover` from the command
//! line: Ansible inventories read through the real `ansible-inventory`
//! (Debian's ansible-core), Slurm outputs from tests/fixtures/slurm, and
//! every refusal with exit 2 and nothing written. Discover against real
//! hosts is the lab's (tests/lab.rs); here only what needs no host.

use std::path::{Path, PathBuf};

use assert_cmd::Command;

fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(rel)
}

fn rocegate() -> Command {
    Command::cargo_bin("rocegate").unwrap()
}

/// Why the Ansible tests cannot run here, if they cannot.
fn no_ansible() -> Option<&'static str> {
    let found = std::process::Command::new("ansible-inventory")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    (!found).then_some(
        "skipped: ansible-inventory is not installed (apt-get install --no-install-recommends ansible-core)",
    )
}

/// Runs an import that must succeed; returns its YAML.
fn import_ok(args: &[&str]) -> String {
    let out = rocegate()
        .args(["inventory", "import"])
        .args(args)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{args:?}: {stderr}");
    String::from_utf8(out.stdout).unwrap()
}

/// Runs an import that must fail with exit 2 and write nothing; returns
/// its message.
fn import_refused(args: &[&str]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let out_file = dir.path().join("out.yaml");
    let out = rocegate()
        .args(["inventory", "import"])
        .args(args)
        .arg("-o")
        .arg(&out_file)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
    assert!(!out_file.exists(), "{args:?} wrote {out_file:?}");
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "a temporary file was left behind"
    );
    stderr
}

/// The YAML without its header comment (which names the command).
fn body(yaml: &str) -> String {
    yaml.lines()
        .filter(|l| !l.starts_with('#'))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn ansible_ini_with_groups_children_and_vars() {
    if let Some(why) = no_ansible() {
        eprintln!("{why}");
        return;
    }
    let ini = fixture("ansible/pod.ini");
    let y = import_ok(&["--ansible", ini.to_str().unwrap(), "--group", "pod"]);
    // Hosts of both children, their ansible_host as one zipped hostlist;
    // user and key from group_vars/pod.yml, port and args from [pod:vars].
    assert!(
        y.contains("- hosts: gpu[001-004]\n  address: 10.0.0.[1-4]\n  nics: []"),
        "{y}"
    );
    assert!(!y.contains("login1"), "{y}");
    for want in [
        "user: root",
        "port: 2222",
        "key: ~/.ssh/pod_ed25519",
        "jump: admin@bastion.example.com",
        "- StrictHostKeyChecking=accept-new",
        "name: pod",
        "# note: variables rocegate does not use (values not copied): gpu_model, rack_power_kw",
        "rocegate inventory discover -i THIS-FILE",
    ] {
        assert!(y.contains(want), "missing {want:?} in\n{y}");
    }
    // The skeleton says what is missing: validate names the NICs, nothing else.
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("pod.yaml");
    rocegate()
        .args([
            "inventory",
            "import",
            "--ansible",
            ini.to_str().unwrap(),
            "--group",
            "pod",
            "-o",
        ])
        .arg(&p)
        .assert()
        .success();
    let out = rocegate()
        .args(["validate", "-i"])
        .arg(&p)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("nodes[0].nics: a node needs at least one RDMA NIC"),
        "{err}"
    );

    // One group only.
    let y = import_ok(&["--ansible", ini.to_str().unwrap(), "--group", "rack2"]);
    assert!(
        y.contains("- hosts: gpu[003-004]\n  address: 10.0.0.[3-4]"),
        "{y}"
    );
    assert!(y.contains("name: rack2"), "{y}");
}

#[test]
fn ansible_yaml_and_list_json_give_the_same_pod() {
    if let Some(why) = no_ansible() {
        eprintln!("{why}");
        return;
    }
    let ini = fixture("ansible/pod.ini");
    let yml = fixture("ansible/pod.yml");
    let from_ini = import_ok(&["--ansible", ini.to_str().unwrap(), "--group", "pod"]);
    let from_yml = import_ok(&["--ansible", yml.to_str().unwrap(), "--group", "pod"]);
    assert_eq!(body(&from_ini), body(&from_yml));
    // The JSON of ansible-inventory --list, read without Ansible.
    let list = std::process::Command::new("ansible-inventory")
        .args(["-i", ini.to_str().unwrap(), "--list"])
        .output()
        .unwrap();
    assert!(list.status.success());
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("inventory.json");
    std::fs::write(&json, &list.stdout).unwrap();
    let from_json = import_ok(&["--ansible", json.to_str().unwrap(), "--group", "pod"]);
    assert_eq!(body(&from_ini), body(&from_json));
    // Without --group: every host, the login node too, which is reached
    // otherwise (no user, port 22): refused, naming both hosts.
    let e = import_refused(&["--ansible", json.to_str().unwrap(), "--name", "site"]);
    assert!(
        e.contains("ansible_user differs between hosts: gpu001 has \"root\", login1 has none"),
        "{e}"
    );
    assert!(e.contains("--group"), "{e}");
}

#[test]
fn ansible_refusals_name_the_file_and_host() {
    if let Some(why) = no_ansible() {
        eprintln!("{why}");
        return;
    }
    let f = |n: &str| fixture(&format!("ansible/{n}")).display().to_string();
    let cases = [
        (
            f("vault.yml"),
            "host gpu01: ansible_become_password is vault-encrypted",
        ),
        (
            f("aws_ec2.yml"),
            "a dynamic inventory (plugin: amazon.aws.aws_ec2)",
        ),
        (f("typo.ini"), "host gpu001: unknown variable ansible_hots"),
        (
            f("differ.ini"),
            "ansible_user differs between hosts: gpu001 has \"root\", gpu002 has \"admin\"",
        ),
    ];
    for (file, want) in cases {
        let e = import_refused(&["--ansible", &file]);
        assert!(e.contains(&format!("rocegate: {file}: ")), "{e}");
        assert!(e.contains(want), "want {want:?} in {e}");
    }
    let e = import_refused(&["--ansible", &f("pod.ini"), "--group", "nope"]);
    assert!(e.contains("no group \"nope\""), "{e}");
    // A whole file encrypted with ansible-vault, and a script.
    let dir = tempfile::tempdir().unwrap();
    let v = dir.path().join("hosts");
    std::fs::write(&v, "$ANSIBLE_VAULT;1.1;AES256\n6231336539\n").unwrap();
    let e = import_refused(&["--ansible", v.to_str().unwrap()]);
    assert!(e.contains("the whole inventory is vault-encrypted"), "{e}");
    let s = dir.path().join("inventory.py");
    std::fs::write(&s, "#!/bin/sh\necho '{}'\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&s, std::fs::Permissions::from_mode(0o755)).unwrap();
    let e = import_refused(&["--ansible", s.to_str().unwrap()]);
    assert!(
        e.contains("dynamic inventory script, which rocegate does not run"),
        "{e}"
    );
    // Text that neither the ini nor the yaml plugin reads.
    let g = dir.path().join("garbage.ini");
    std::fs::write(&g, "[gpu\ngpu001 ansible_host=\n").unwrap();
    let e = import_refused(&["--ansible", g.to_str().unwrap()]);
    assert!(e.contains("ansible-inventory could not read it"), "{e}");
}

#[test]
fn without_ansible_the_message_says_what_to_install() {
    let ini = fixture("ansible/pod.ini");
    let out = rocegate()
        .env("PATH", "/nonexistent")
        .args(["inventory", "import", "--ansible", ini.to_str().unwrap()])
        .output()
        .unwrap();
    let e = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{e}");
    assert!(
        e.contains("`ansible-inventory`, which is not installed: install ansible-core"),
        "{e}"
    );
    assert!(e.contains("--list > inventory.json"), "{e}");
}

#[test]
fn slurm_outputs_and_hostlists() {
    let sc = fixture("slurm/scontrol-show-node-binfservas07.txt");
    let y = import_ok(&["--slurm", sc.to_str().unwrap()]);
    assert!(y.contains("- hosts: binfservas07\n  nics: []"), "{y}");
    assert!(y.contains("transport: !ssh"), "{y}");
    let si = fixture("slurm/sinfo-N-ukaea-amp.txt");
    let y = import_ok(&["--slurm", si.to_str().unwrap(), "--group", "ukaea-amp"]);
    assert!(y.contains("hosts: gpu-q-[48-60]"), "{y}");
    assert!(y.contains("hosts: gpu-q-64"), "{y}");
    assert!(y.contains("hosts: gpu-q-[73-80]"), "{y}");
    assert!(y.contains("name: ukaea-amp"), "{y}");
    assert!(
        y.contains("# note: Slurm reported these nodes unavailable"),
        "{y}"
    );
    let y = import_ok(&["--slurm", "gpu[001-128]"]);
    assert!(y.contains("hosts: gpu[001-128]"), "{y}");
    let out = rocegate()
        .args(["inventory", "import", "--slurm", "-"])
        .write_stdin("gpu[01-02]\n")
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("hosts: gpu[01-02]"));
}

#[test]
fn slurm_refusals() {
    let e = import_refused(&["--slurm", "gpu[]"]);
    assert!(e.contains("--slurm: bad hostlist \"gpu[]\""), "{e}");
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("nodes.txt");
    std::fs::write(&empty, "\n\n").unwrap();
    let e = import_refused(&["--slurm", empty.to_str().unwrap()]);
    assert!(
        e.contains("nodes.txt: no hosts: the hostlist is empty"),
        "{e}"
    );
    let si = fixture("slurm/sinfo-N-ukaea-amp.txt");
    let e = import_refused(&["--slurm", si.to_str().unwrap(), "--group", "gpu"]);
    assert!(e.contains("no node is in partition \"gpu\""), "{e}");
    let e = import_refused(&["--slurm", "../etc[1-2]"]);
    assert!(e.contains("cannot be a node name"), "{e}");
}

#[test]
fn import_needs_a_source() {
    rocegate().args(["inventory", "import"]).assert().code(2);
}

#[test]
fn discover_refuses_inventories_it_cannot_reach() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.yaml");
    let o = rocegate()
        .args([
            "inventory",
            "discover",
            "-i",
            "inventory/emulated.yaml",
            "-o",
        ])
        .arg(&out)
        .output()
        .unwrap();
    let e = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(e.contains("discover reads each node over ssh"), "{e}");
    assert!(!out.exists());
    let o = rocegate()
        .args(["inventory", "discover", "-i", "no-such.yaml"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
}
