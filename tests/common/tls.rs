//! What the HTTPS stand-in tests share: the tools they need, a throwaway
//! CA and a certificate for 127.0.0.1 signed by it.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The tools a stand-in test needs, or the package that brings the first
/// one missing.
pub fn tools() -> Result<(), String> {
    for (tool, arg, pkg) in [
        ("openssl", "version", "openssl"),
        ("python3", "--version", "python3"),
        ("iperf3", "--version", "iperf3"),
    ] {
        if Command::new(tool).arg(arg).output().is_err() {
            return Err(format!("{tool} is not installed: apt-get install {pkg}"));
        }
    }
    Ok(())
}

/// Skips the test, saying why, when a tool is missing.
#[macro_export]
macro_rules! needs_tools {
    () => {
        if let Err(why) = tools() {
            println!("skipped: {why}");
            return;
        }
    };
}

pub fn sh(cmd: &mut Command) {
    let o = cmd.output().expect("runs");
    assert!(
        o.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// A throwaway CA and a certificate for 127.0.0.1 signed by it: (CA, cert,
/// key).
pub fn pki(dir: &Path) -> (PathBuf, PathBuf, PathBuf) {
    let p = |f: &str| dir.join(f);
    sh(Command::new("openssl")
        .args([
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
        ])
        .args(["-subj", "/CN=rocegate switch-faults test CA", "-keyout"])
        .arg(p("ca.key"))
        .arg("-out")
        .arg(p("ca.pem")));
    sh(Command::new("openssl")
        .args([
            "req",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-subj",
            "/CN=127.0.0.1",
        ])
        .arg("-keyout")
        .arg(p("switch.key"))
        .arg("-out")
        .arg(p("switch.csr")));
    std::fs::write(
        p("san.ext"),
        "subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n",
    )
    .expect("ext");
    sh(Command::new("openssl")
        .args(["x509", "-req", "-days", "1", "-in"])
        .arg(p("switch.csr"))
        .arg("-CA")
        .arg(p("ca.pem"))
        .arg("-CAkey")
        .arg(p("ca.key"))
        .args(["-CAcreateserial", "-extfile"])
        .arg(p("san.ext"))
        .arg("-out")
        .arg(p("switch.pem")));
    (p("ca.pem"), p("switch.pem"), p("switch.key"))
}
