//! The character rules for values an inventory or suite hands to the rest of
//! rocegate: names that become file and directory names (suites, tests,
//! fabrics, nodes, switches), addresses that reach ssh and rdma_cm, values
//! that only reach a remote shell (devices, netdevs, ports, users), and ssh
//! options that would run a local command. Pure predicates and the sentences
//! that state them; where they are applied is `check` and `check_suite`.

use std::net::IpAddr;

/// The longest name that may become part of a path. A DNS label is at most
/// 63 characters, so every short host name fits; a run directory joins a few
/// names (suite, test, node pair), and 64 each keeps that well under the
/// 255-byte limit most file systems put on one path component.
pub const MAX_PATH_NAME: usize = 64;

/// The rule of [`is_path_name`], as error messages state it.
pub const PATH_NAME_RULE: &str =
    "letters, digits, ., _ and -, not starting with . or -, at most 64 characters";

/// The rule of [`is_address`], as error messages state it.
pub const ADDRESS_RULE: &str = "an IPv4 or IPv6 address, or a DNS name: labels of letters, digits, - and _, at most 63 characters each and 253 in all, not starting or ending with -";

/// Whether `s` may name a suite, test, fabric, node or switch. Such names
/// become run directories, journal files and artifact names, so `/`, `..`,
/// a leading `-` or `.`, control characters and anything beyond ASCII are
/// refused: a name can neither climb out of a directory nor hide a file.
/// Hostlists such as `gpu[001-128]` expand to names that pass.
pub fn is_path_name(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= MAX_PATH_NAME
        && !s.starts_with(['.', '-'])
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

/// Characters allowed in values that only reach a remote shell (devices,
/// netdevs, switch ports such as `Ethernet1/1`, user names). They are also
/// quoted when used; this keeps them readable. Not for names that become
/// paths: `/` passes here.
pub fn is_safe_name(s: &str) -> bool {
    !s.is_empty()
        && !s.starts_with('-')
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "._:/@+-".contains(c))
}

/// Whether `s` is an IP address (v4 or v6) or a DNS name. Underscores are
/// tolerated in labels because a node's address defaults to its name and
/// names may hold `_` (as /etc/hosts and ssh_config aliases often do). A
/// name whose last label is all digits is refused, so `10.0.0.256` is a bad
/// IPv4 address rather than a host name. One trailing dot (an absolute name)
/// is accepted.
pub fn is_address(s: &str) -> bool {
    if s.parse::<IpAddr>().is_ok() {
        return true;
    }
    let name = s.strip_suffix('.').unwrap_or(s);
    if name.is_empty() || name.len() > 253 {
        return false;
    }
    let label_ok = |l: &str| {
        !l.is_empty()
            && l.len() <= 63
            && !l.starts_with('-')
            && !l.ends_with('-')
            && l.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    };
    name.split('.').all(label_ok)
        && !name
            .rsplit('.')
            .next()
            .is_some_and(|last| last.bytes().all(|b| b.is_ascii_digit()))
}

/// ssh client options that make ssh run a local command or load local code:
/// a proxy or local command, a known-hosts helper, `Match exec`, a PKCS#11 or
/// security-key provider library, and `Include` (which could bring any of
/// them in from another file).
const COMMAND_OPTIONS: &[&str] = &[
    "ProxyCommand",
    "LocalCommand",
    "PermitLocalCommand",
    "KnownHostsCommand",
    "Match",
    "PKCS11Provider",
    "SecurityKeyProvider",
    "Include",
];

/// The option name of an ssh `-o` value, as ssh reads it: up to the first
/// `=` or whitespace, ignoring quotes and case (`"ProxyCommand"=x`,
/// `proxycommand x` and `ProxyCommand = x` all name ProxyCommand).
pub fn ssh_option_name(option: &str) -> String {
    option
        .trim_start()
        .split(|c: char| c == '=' || c.is_whitespace())
        .next()
        .unwrap_or("")
        .chars()
        .filter(|c| !matches!(c, '"' | '\'' | '\\'))
        .flat_map(char::to_lowercase)
        .collect()
}

/// The canonical spelling of the option if `option` makes ssh run a local
/// command or load local code; `None` for an ordinary option.
pub fn ssh_command_option(option: &str) -> Option<&'static str> {
    let name = ssh_option_name(option);
    COMMAND_OPTIONS
        .iter()
        .copied()
        .find(|o| o.eq_ignore_ascii_case(&name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_names() {
        for ok in [
            "gpu001",
            "r0-leaf1",
            "emu-pod",
            "a.b_c-d",
            "X",
            &"a".repeat(64),
        ] {
            assert!(is_path_name(ok), "{ok:?} should pass");
        }
        for bad in [
            "",
            "../../x",
            "/etc/passwd",
            "a/b",
            ".hidden",
            "-rf",
            "a b",
            "a:b",
            "a\0b",
            "a\u{1b}[31m",
            "<script>",
            "gpü",
            &"a".repeat(65),
            &"a".repeat(100_000),
        ] {
            assert!(!is_path_name(bad), "{bad:?} should fail");
        }
        // Every name a hostlist like gpu[001-128] produces passes.
        for n in crate::config::hostlist::expand("gpu[001-128],rack[1-2]-node[01-04]").unwrap() {
            assert!(is_path_name(&n), "{n}");
        }
    }

    #[test]
    fn safe_names_keep_switch_ports() {
        assert!(is_safe_name("Ethernet1/1"));
        assert!(!is_path_name("Ethernet1/1"));
    }

    #[test]
    fn addresses() {
        for ok in [
            "10.0.0.1",
            "198.18.0.11",
            "::1",
            "fe80::1",
            "gpu001",
            "gpu001.mgmt",
            "gpu_01.lab.example.com",
            "a-b.example.com.",
            &format!("{}.com", "a".repeat(63)),
        ] {
            assert!(is_address(ok), "{ok:?} should pass");
        }
        for bad in [
            "",
            ".",
            "-oProxyCommand=x",
            "a..b",
            "a b",
            "a;b",
            "a/b",
            "$(reboot)",
            "10.0.0.256",
            "10.0.0",
            "host-.example.com",
            "[::1]",
            &format!("{}.com", "a".repeat(64)),
            &format!("{}a", "a.".repeat(127)),
        ] {
            assert!(!is_address(bad), "{bad:?} should fail");
        }
    }

    #[test]
    fn ssh_command_options_in_every_spelling() {
        for (o, want) in [
            ("ProxyCommand=nc %h %p", "ProxyCommand"),
            ("proxycommand=/tmp/x", "ProxyCommand"),
            ("PROXYCOMMAND /tmp/x", "ProxyCommand"),
            ("  ProxyCommand = x", "ProxyCommand"),
            ("\"ProxyCommand\"=x", "ProxyCommand"),
            ("LocalCommand=x", "LocalCommand"),
            ("PermitLocalCommand=yes", "PermitLocalCommand"),
            ("KnownHostsCommand=x", "KnownHostsCommand"),
            ("Match=exec", "Match"),
            ("match exec \"x\"", "Match"),
            ("PKCS11Provider=/tmp/x.so", "PKCS11Provider"),
        ] {
            assert_eq!(ssh_command_option(o), Some(want), "{o:?}");
        }
        for o in [
            "StrictHostKeyChecking=yes",
            "ProxyJump=bastion",
            "UserKnownHostsFile=/x",
        ] {
            assert_eq!(ssh_command_option(o), None, "{o:?}");
        }
    }
}
