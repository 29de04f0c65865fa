//! A real OpenSSH server of the test's own on loopback: its host key, a
//! user key, its configuration, its log, nothing of the machine's sshd
//! touched. Addresses may be given a `ForceCommand` each (`Match
//! LocalAddress`), so one server can be a plain host on one address and a
//! stand-in switch on another. Needs root (sshd's privilege separation)
//! and openssh-server; [`Sshd::start`] says why not otherwise.

use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

pub const SSHD: &str = "/usr/sbin/sshd";

/// A running sshd, stopped on drop.
pub struct Sshd {
    child: Child,
    pub port: u16,
    pub dir: tempfile::TempDir,
}

impl Drop for Sshd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Why this machine cannot run a test sshd, or `None` when it can.
pub fn unavailable() -> Option<String> {
    if !Path::new(SSHD).exists() {
        return Some(format!(
            "{SSHD} is not installed (apt-get install openssh-server)"
        ));
    }
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Some("sshd needs root for privilege separation".into());
    }
    None
}

/// A passphrase-less ed25519 key pair at `path` and `path.pub`.
pub fn keygen(path: &Path) {
    let ok = Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-f"])
        .arg(path)
        .status()
        .expect("ssh-keygen runs");
    assert!(ok.success(), "ssh-keygen failed for {}", path.display());
}

/// A TCP port nothing listens on right now.
pub fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind a port");
    l.local_addr().expect("local address").port()
}

impl Sshd {
    /// An sshd listening on each of `listen` (loopback addresses), where
    /// an address with a command runs it for every session (the client's
    /// command in `SSH_ORIGINAL_COMMAND`). Root logs in with the key
    /// [`Sshd::key`].
    pub fn start(listen: &[(&str, Option<String>)]) -> Result<Sshd, String> {
        if let Some(why) = unavailable() {
            return Err(why);
        }
        std::fs::create_dir_all("/run/sshd").map_err(|e| format!("/run/sshd: {e}"))?;
        let dir = tempfile::tempdir().map_err(|e| format!("temp dir: {e}"))?;
        let d = dir.path();
        keygen(&d.join("host"));
        keygen(&d.join("user"));
        std::fs::copy(d.join("user.pub"), d.join("authorized_keys"))
            .map_err(|e| format!("authorized_keys: {e}"))?;
        let port = free_port();
        let mut config = format!(
            "Port {port}\nHostKey {h}\nAuthorizedKeysFile {a}\n\
             PidFile {p}\nStrictModes no\nUsePAM no\nPermitRootLogin prohibit-password\n\
             PasswordAuthentication no\nKbdInteractiveAuthentication no\nLogLevel ERROR\nMaxSessions 20\n",
            h = d.join("host").display(),
            a = d.join("authorized_keys").display(),
            p = d.join("sshd.pid").display(),
        );
        for (addr, _) in listen {
            config += &format!("ListenAddress {addr}\n");
        }
        // Match blocks last: everything after one belongs to it.
        for (addr, cmd) in listen {
            if let Some(cmd) = cmd {
                config += &format!("Match LocalAddress {addr}\n    ForceCommand {cmd}\n");
            }
        }
        std::fs::write(d.join("sshd_config"), config).map_err(|e| format!("sshd_config: {e}"))?;
        let log =
            std::fs::File::create(d.join("sshd.log")).map_err(|e| format!("sshd.log: {e}"))?;
        let child = Command::new(SSHD)
            .args(["-D", "-e", "-f"])
            .arg(d.join("sshd_config"))
            .stderr(log)
            .spawn()
            .map_err(|e| format!("cannot start sshd: {e}"))?;
        let server = Sshd { child, port, dir };
        let deadline = Instant::now() + Duration::from_secs(10);
        for (addr, _) in listen {
            while std::net::TcpStream::connect((*addr, port)).is_err() {
                if Instant::now() > deadline {
                    return Err(format!(
                        "sshd did not listen on {addr}:{port} within 10 s: {}",
                        server.log()
                    ));
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        }
        Ok(server)
    }

    /// The private key root logs in with.
    pub fn key(&self) -> PathBuf {
        self.dir.path().join("user")
    }

    /// What sshd wrote on stderr.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("sshd.log")).unwrap_or_default()
    }

    /// An inventory's `transport:` value reaching this server as root on
    /// `port` (this server's, or another to test a refused connection).
    pub fn transport_yaml(&self, port: u16) -> String {
        format!(
            "{{ssh: {{user: root, port: {port}, key: '{}', options: [StrictHostKeyChecking=no, UserKnownHostsFile=/dev/null], connect_timeout: 3s}}}}",
            self.key().display()
        )
    }
}
