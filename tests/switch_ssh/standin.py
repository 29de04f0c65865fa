#!/usr/bin/env python3
"""The command-line tools of a stand-in switch (SONiC or Cumulus Linux)
reached over a real OpenSSH server, for tests/switch_ssh.rs.

One script, many names: each tool is a symlink to this file in the stand-in
switch's bin directory (STANDIN_DIR/bin), which the server's ForceCommand
(tests/switch_ssh/login.sh) puts first on PATH. argv[0] says which tool
runs.

Every call appends one line to STANDIN_DIR/log: the tool and its
arguments, shell-quoted, prefixed with `timer: ` when a dead-man timer of
the stand-in sent it. The switch's state lives in STANDIN_DIR/state.json
(ports' admin state, armed timers, services, fired timers), changed under
a lock; STANDIN_DIR/config.json says what the switch is:

  {"platform": "sonic" | "cumulus",
   "ports": ["Ethernet0", ...],       # the switch's ports, all up at start
   "account": "admin" | "root",       # who logs in: not root → root's tools
                                      # refuse unless run under sudo
   "sudo": "ok" | "denied",           # denied: `sudo -n` wants a password
   "scale": 0.05,                     # a timer of N s fires after N*scale s
   "change_delay": 0,                 # s a port shutdown takes
   "asn": 65100, "peers": {"10.0.0.1": "Established"}}

The answers take the real tools' shapes (tests/switch_ssh/SOURCES.md):
`show interfaces status` is sonic-utilities' tabulate table
(tests/intfutil_test.py), `ip -j link show` iproute2's JSON, `nv ... -o
json` NVUE's object model. The stand-in has
no data plane: a port is oper up exactly when it is admin up, and the
counter tools count nothing that did not happen (zeros).

The timers really fire: `systemd-run --on-active=Ns` (SONiC) and `sleep N`
(the linux dead-man's delay on Cumulus) wait N*scale seconds. A systemd
timer is a detached process that, unless `systemctl stop` removed it from
the state first, runs its command with root's rights.
"""
import fcntl
import json
import os
import shlex
import signal
import subprocess
import sys
import time

DIR = os.environ.get("STANDIN_DIR", "")
TOOL = os.path.basename(sys.argv[0])
ARGS = sys.argv[1:]


def die(msg, code=1):
    sys.stderr.write(msg + "\n")
    sys.exit(code)


if not DIR or not os.path.isdir(DIR):
    die("standin: STANDIN_DIR is not set (run through login.sh)", 125)

CONFIG = json.load(open(os.path.join(DIR, "config.json")))


def deadman_parent():
    """The linux dead-man's id when the calling process is its timer shell
    (`sh -c ': rocegate-deadman ID; sleep N; ...'`), else None."""
    try:
        with open("/proc/%d/cmdline" % os.getppid(), "rb") as f:
            argv = f.read().split(b"\0")
    except OSError:
        return None
    if len(argv) >= 3 and argv[1] == b"-c" and argv[2].startswith(b": rocegate-deadman "):
        return argv[2].split(b";")[0].split()[-1].decode()
    return None


def log(argv):
    who = os.environ.get("STANDIN_BY", "") or ("timer" if deadman_parent() else "")
    # One line per call: a newline inside an argument is written `\n`.
    line = (who + ": " if who else "") + shlex.join(argv).replace("\n", "\\n")
    with open(os.path.join(DIR, "log"), "a") as f:
        f.write(line + "\n")


class State:
    """state.json under an exclusive lock, written back on exit."""

    def __enter__(self):
        self.lock = open(os.path.join(DIR, "state.lock"), "a")
        fcntl.flock(self.lock, fcntl.LOCK_EX)
        path = os.path.join(DIR, "state.json")
        if os.path.exists(path):
            self.s = json.load(open(path))
        else:
            self.s = {
                "admin": {p: True for p in CONFIG["ports"]},
                "timers": {},
                "fired": [],
                "services": {"bgp": True, "frr": True},
                "shut_peers": [],
            }
        return self.s

    def __exit__(self, *exc):
        path = os.path.join(DIR, "state.json")
        tmp = path + ".tmp"
        with open(tmp, "w") as f:
            json.dump(self.s, f, indent=1, sort_keys=True)
        os.replace(tmp, path)
        fcntl.flock(self.lock, fcntl.LOCK_UN)
        self.lock.close()


def is_root():
    """Root in the simulation: a root account, a command under the
    stand-in's sudo, or a timer (systemd runs units as root)."""
    return CONFIG.get("account", "root") == "root" or os.environ.get("STANDIN_ROOT") == "1"


def port_named(name):
    for p in CONFIG["ports"]:
        if p.lower() == name.strip().lower():
            return p
    return None


def tabulate(header, rows):
    """tabulate(tablefmt="simple", stralign="right") as sonic-utilities
    prints it: a column is as wide as its widest cell or its header + 2,
    every cell right-aligned, columns two spaces apart."""
    widths = [
        max([len(h) + 2] + [len(str(r[i])) for r in rows])
        for i, h in enumerate(header)
    ]
    line = lambda cells: "  ".join(str(c).rjust(w) for c, w in zip(cells, widths))
    out = [line(header), "  ".join("-" * w for w in widths)]
    out += [line(r) for r in rows]
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------- sudo


def sudo():
    args = list(ARGS)
    while args and args[0].startswith("-"):
        opt = args.pop(0)
        if opt == "--":
            break
        if opt not in ("-n", "--non-interactive"):
            die(f"sudo: stand-in does not take option {opt}")
    if not args:
        die("usage: sudo -n command")
    if CONFIG.get("sudo", "ok") == "denied":
        # What sudo -n prints when the account's rule wants a password.
        die("sudo: a password is required")
    os.environ["STANDIN_ROOT"] = "1"
    os.environ["SUDO_USER"] = CONFIG.get("account", "root")
    try:
        os.execvp(args[0], args)
    except FileNotFoundError:
        die(f"sudo: {args[0]}: command not found")


def need_root(what):
    if not is_root():
        die(what)


# --------------------------------------------------------------- sonic


def config():
    need_root("Root privileges are required for this operation")
    if len(ARGS) == 3 and ARGS[0] == "interface" and ARGS[1] in ("shutdown", "startup"):
        p = port_named(ARGS[2])
        if p is None:
            # click's ctx.fail, as sonic-utilities config/main.py calls it.
            die(
                "Usage: config interface %s [OPTIONS] <interface_name>\n"
                "Try \"config interface %s -h\" for help.\n\n"
                "Error: Interface name is invalid. Please enter a valid interface name!!"
                % (ARGS[1], ARGS[1]),
                2,
            )
        if ARGS[1] == "shutdown":
            # A change that takes a while (a busy switch): a controller can
            # die while it is still being made.
            time.sleep(float(CONFIG.get("change_delay", 0)))
        with State() as s:
            s["admin"][p] = ARGS[1] == "startup"
        return
    die("Error: stand-in `config` takes only `interface shutdown|startup PORT`", 2)


def show():
    if ARGS[:2] == ["interfaces", "status"]:
        with State() as s:
            admin = dict(s["admin"])
        ports = CONFIG["ports"]
        if len(ARGS) > 2:
            p = port_named(ARGS[2])
            if p is None:
                die("Invalid interface name %s" % ARGS[2])
            ports = [p]
        rows = []
        for i, p in enumerate(ports):
            up = "up" if admin[p] else "down"
            lanes = ",".join(str(4 * CONFIG["ports"].index(p) + k) for k in range(4))
            rows.append([p, lanes, "100G", "9100", "rs", "etp%d" % (CONFIG["ports"].index(p) + 1),
                         "routed", up, up, "QSFP28 or later", "off"])
        sys.stdout.write(tabulate(
            ["Interface", "Lanes", "Speed", "MTU", "FEC", "Alias", "Vlan", "Oper", "Admin", "Type", "Asym PFC"],
            rows,
        ))
        return
    die('Usage: show [OPTIONS] COMMAND [ARGS]...\nTry "show -h" for help.\n\n'
        'Error: No such command "%s".' % " ".join(ARGS), 2)


def bgp_summary():
    """FRR's `show bgp vrf all summary json`: per VRF, per family."""
    with State() as s:
        shut = set(s["shut_peers"])
        running = s["services"].get("bgp" if CONFIG["platform"] == "sonic" else "frr", True)
    if not running:
        return None
    peers = {
        a: {"remoteAs": CONFIG.get("asn", 65100) + 100,
            "state": "Idle" if a in shut else st,
            "peerState": "Admin" if a in shut else "OK"}
        for a, st in CONFIG.get("peers", {}).items()
    }
    return {"ipv4Unicast": {"routerId": "10.1.0.32", "as": CONFIG.get("asn", 65100),
                            "vrfId": 0, "vrfName": "default", "peers": peers,
                            "totalPeers": len(peers)}}


def vtysh():
    need_root("Exiting: failed to connect to any daemons.")
    cmds = []
    args = list(ARGS)
    while args:
        a = args.pop(0)
        if a == "-c" and args:
            cmds.append(args.pop(0))
    if cmds in (["show bgp vrf all summary json"], ["show bgp summary json"]):
        sm = bgp_summary()
        if sm is None:
            die("Exiting: failed to connect to any daemons.", 1)
        if cmds[0].startswith("show bgp vrf"):
            sm = {"default": sm}
        print(json.dumps(sm, indent=2))
        return
    if len(cmds) == 3 and cmds[0] == "configure terminal" and cmds[1].startswith("router bgp"):
        words = cmds[2].split()
        with State() as s:
            if words[:1] == ["neighbor"] and words[2:] == ["shutdown"]:
                s["shut_peers"] = sorted(set(s["shut_peers"]) | {words[1]})
                return
            if words[:2] == ["no", "neighbor"] and words[3:] == ["shutdown"]:
                s["shut_peers"] = sorted(set(s["shut_peers"]) - {words[2]})
                return
    die("% Unknown command: " + " ".join(cmds), 1)


def systemd_run():
    unit = None
    delay = None
    args = list(ARGS)
    while args and args[0].startswith("--"):
        a = args.pop(0)
        if a.startswith("--unit="):
            unit = a[len("--unit="):]
        elif a.startswith("--on-active="):
            v = a[len("--on-active="):]
            delay = float(v[:-1] if v.endswith("s") else v)
        elif a not in ("--quiet", "--collect"):
            die(f"systemd-run: stand-in does not take {a}")
    if not is_root():
        die("Failed to start transient timer unit: Interactive authentication required.")
    if unit is None or delay is None or not args:
        die("systemd-run: stand-in needs --unit, --on-active and a command")
    timer = unit + ".timer"
    with State() as s:
        if timer in s["timers"]:
            die(f"Failed to start transient timer unit: Unit {timer} already exists.")
    # The timer: a detached process (its own session, none of the ssh
    # session's descriptors) that sleeps, then runs the command as root
    # unless it was stopped meanwhile. It fires only once it is recorded.
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        os.setsid()
        if os.fork() != 0:
            os._exit(0)
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        os.write(w, str(os.getpid()).encode())
        os.close(w)
        fire(timer, delay * float(CONFIG.get("scale", 1.0)), args)
        os._exit(0)
    os.close(w)
    child = int(os.read(r, 32).decode())
    os.close(r)
    os.waitpid(pid, 0)
    with State() as s:
        s["timers"][timer] = {"pid": child, "seconds": delay, "command": args}
    if "--quiet" not in ARGS:
        sys.stderr.write(f"Running timer as unit: {timer}\nWill run service as unit: {unit}.service\n")


def fire(timer, after, command):
    time.sleep(after)
    with State() as s:
        if timer not in s["timers"] or s["timers"][timer]["pid"] != os.getpid():
            return
        del s["timers"][timer]
        s["fired"].append({"timer": timer, "command": command})
    env = dict(os.environ, STANDIN_ROOT="1", STANDIN_BY="timer")
    subprocess.run(command, env=env)


def systemctl():
    args = [a for a in ARGS if a != "--quiet"]
    quiet = "--quiet" in ARGS
    if len(args) != 2:
        die("systemctl: stand-in takes VERB UNIT")
    verb, unit = args
    if verb == "is-active":
        with State() as s:
            active = unit in s["timers"] or s["services"].get(unit, False)
        if not quiet:
            print("active" if active else "inactive")
        sys.exit(0 if active else 3)
    if not is_root():
        die(f"Failed to {verb} {unit}: Interactive authentication required.\n"
            f"See system logs and 'systemctl status {unit}' for details.")
    if unit.endswith(".timer"):
        if verb != "stop":
            die(f"systemctl: stand-in only stops timers, not {verb}")
        with State() as s:
            t = s["timers"].pop(unit, None)
        if t is None:
            die(f"Failed to stop {unit}: Unit {unit} not loaded.", 5)
        try:
            os.kill(t["pid"], signal.SIGTERM)
        except ProcessLookupError:
            pass
        return
    if verb in ("start", "stop", "restart"):
        with State() as s:
            if unit not in s["services"]:
                die(f"Failed to {verb} {unit}.service: Unit {unit}.service not found.", 5)
            s["services"][unit] = verb != "stop"
        return
    die(f"systemctl: stand-in does not take {verb}")


def docker():
    if ARGS[:2] == ["exec", "bgp"] and len(ARGS) > 2:
        os.execvp(ARGS[2], ARGS[2:])
    die("Error response from daemon: stand-in has no container for: " + " ".join(ARGS))


def portstat():
    # portstat -r -i PORT: sonic-utilities' table (no data plane: zeros).
    if "-i" not in ARGS:
        die("portstat: stand-in needs -i PORT")
    p = port_named(ARGS[ARGS.index("-i") + 1])
    if p is None:
        die("Interface %s not found" % ARGS[ARGS.index("-i") + 1])
    with State() as s:
        up = s["admin"][p]
    sys.stdout.write(tabulate(
        ["IFACE", "STATE", "RX_OK", "RX_BPS", "RX_UTIL", "RX_ERR", "RX_DRP", "RX_OVR",
         "TX_OK", "TX_BPS", "TX_UTIL", "TX_ERR", "TX_DRP", "TX_OVR"],
        [[p, "U" if up else "X", "0", "0.00 B/s", "0.00%", "0", "0", "0",
          "0", "0.00 B/s", "0.00%", "0", "0", "0"]],
    ))


def pfcstat():
    rows = [[p] + ["0"] * 8 for p in CONFIG["ports"]]
    pfc = ["PFC%d" % i for i in range(8)]
    sys.stdout.write(tabulate(["Port Rx"] + pfc, rows) + "\n" + tabulate(["Port Tx"] + pfc, rows))


def queuestat():
    if "-p" not in ARGS:
        die("queuestat: stand-in needs -p PORT")
    p = port_named(ARGS[ARGS.index("-p") + 1])
    if p is None:
        die("Port doesn't exist! %s" % ARGS[ARGS.index("-p") + 1])
    rows = [[p, "UC%d" % q, "0", "0", "0", "0"] for q in range(8)]
    sys.stdout.write(tabulate(
        ["Port", "TxQ", "Counter/pkts", "Counter/bytes", "Drop/pkts", "Drop/bytes"], rows))


def sonic_cfggen():
    need_root("PermissionError: [Errno 13] Permission denied: '/var/run/redis/redis.sock'")
    with State() as s:
        admin = dict(s["admin"])
    print(json.dumps({"PORT": {
        p: {"admin_status": "up" if admin[p] else "down", "alias": "etp%d" % (i + 1),
            "mtu": "9100", "speed": "100000"}
        for i, p in enumerate(CONFIG["ports"])}}, indent=4))


TOOLS = {
    "sudo": sudo,
    "config": config,
    "show": show,
    "vtysh": vtysh,
    "systemd-run": systemd_run,
    "systemctl": systemctl,
    "docker": docker,
    "portstat": portstat,
    "pfcstat": pfcstat,
    "queuestat": queuestat,
    "sonic-cfggen": sonic_cfggen,
}

# ------------------------------------------------------------- cumulus
#
# The Cumulus stand-in's ports are real: a network namespace with a veth
# pair (login.sh runs every session in it), because the linux driver reads
# /sys/class/net/PORT/{flags,operstate,proto_down}, which no tool on PATH
# answers. So `ip` logs, refuses what needs root to a non-root account
# (as the kernel does), and runs the real iproute2.


def real(tool):
    """The tool of the same name later on PATH than the stand-in's."""
    mine = os.path.realpath(os.path.join(DIR, "bin"))
    for d in os.environ.get("PATH", "").split(":"):
        if d and os.path.realpath(d) != mine:
            c = os.path.join(d, tool)
            if os.path.isfile(c) and os.access(c, os.X_OK):
                return c
    die(f"standin: no real {tool} on PATH", 127)


def exec_real(args=None):
    args = ARGS if args is None else args
    os.execv(real(TOOL), [TOOL] + args)


def ip():
    changes = any(a in ("set", "add", "del", "delete") for a in ARGS[:3])
    if changes and not is_root():
        die("RTNETLINK answers: Operation not permitted", 2)
    if changes and ARGS[-1:] == ["down"]:
        # A change that takes a while (see config()).
        time.sleep(float(CONFIG.get("change_delay", 0)))
    exec_real()


def nv():
    if ARGS == ["show", "system", "link", "flap-protection", "-o", "json"]:
        fp = CONFIG.get("flap_protection", {"threshold": 5, "interval": 10})
        print(json.dumps(fp, indent=2))
        return
    die("Error: the stand-in nv does not answer `nv %s`" % " ".join(ARGS))


def ident():
    account = CONFIG.get("account", "root")
    if ARGS == ["-u"]:
        print(0 if account == "root" else 1000)
    elif ARGS in (["-un"], ["-u", "-n"], ["-nu"]):
        print(account)
    else:
        exec_real()


def sleep():
    """The dead-man's delay runs at `scale`; every other sleep is real.
    A dead-man's sleep that ends (was not killed) records its timer fired."""
    timer = deadman_parent()
    secs = float(ARGS[0].rstrip("s")) if ARGS else 0.0
    if timer is None:
        time.sleep(secs)
        return
    parent = os.getppid()
    time.sleep(secs * float(CONFIG.get("scale", 1.0)))
    if os.getppid() != parent:
        # The timer shell was killed (disarmed) while this slept.
        return
    with State() as s:
        s["fired"].append({"timer": timer})


TOOLS.update({
    "ip": ip,
    "nv": nv,
    "id": ident,
    "sleep": sleep,
    "setsid": exec_real,
    "pgrep": exec_real,
    "pkill": exec_real,
})


if __name__ == "__main__":
    if TOOL not in TOOLS:
        die(f"standin: no tool named {TOOL}", 127)
    log([TOOL] + ARGS)
    TOOLS[TOOL]()
