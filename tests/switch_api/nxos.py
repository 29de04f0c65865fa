#!/usr/bin/env python3
"""A Cisco Nexus switch's NX-API (`POST /ins`, `ins_api` 1.0) for
tests/switch_faults.rs: `cli_show` of the interface status and the BGP
summary, `cli_conf` of `interface X` / `shutdown` / `no shutdown`, and
`cli_show_ascii` `run bash` as far as rocegate's dead-man uses it: a
detached `sleep N && vsh -c "…restore…"` that runs the restore when it
fires (N scaled), `pgrep -f` that answers its pid, and `pkill -f` that
stops it. See device.py for the arguments, the rules and the log;
tests/fixtures/public/SOURCES.md for where each answer's shape comes from.
"""
import json
import re

import device

ARM = re.compile(
    r"""run bash setsid sh -c ': (rocegate-deadman-[0-9a-f]{16}) && sleep (\d+) && /isan/bin/vsh -c "(.*)"' </dev/null >/dev/null 2>&1 & sleep 0\.5 && pgrep -f '([^']+)'"""
)
PKILL = re.compile(r"run bash pkill -f '([^']+)' \|\| true")
# How the timer's restore writes `;` so that NX-API does not split it.
SEP = " $(printf \\\\073) "

UNAUTHORIZED = """<html>
<head><title>401 Authorization Required</title></head>
<body bgcolor="white">
<center><h1>401 Authorization Required</h1></center>
<hr><center>nginx/1.7.10</center>
</body>
</html>
"""


class Refused(Exception):
    pass


class Nxos(device.Device):
    path = "/ins"

    def __init__(self, config, log_path, state_path):
        # timer name -> the command line `pgrep`/`pkill -f` see
        self.procs = {}
        super().__init__(config, log_path, state_path)

    def unauthorized(self):
        return 401, "text/html", UNAUTHORIZED

    def bad_request(self, why):
        xml = '<?xml version="1.0"?>\n<ins_api>\n  <outputs>\n    <output>\n      <code>400</code>\n      <msg>Server internal error.</msg>\n    </output>\n  </outputs>\n</ins_api>\n'
        return 400, "text/xml", xml

    def parse(self, body):
        try:
            req = json.loads(body)
        except ValueError as e:
            raise ValueError("not JSON: %s" % e)
        api = req.get("ins_api") if isinstance(req, dict) else None
        if not isinstance(api, dict):
            raise ValueError("no ins_api object")
        kind = api.get("type")
        if api.get("version") != "1.0" or kind not in ("cli_show", "cli_show_ascii", "cli_conf"):
            raise ValueError("version %r type %r" % (api.get("version"), kind))
        if api.get("chunk") != "0" or api.get("output_format") != "json":
            raise ValueError("chunk %r output_format %r" % (api.get("chunk"), api.get("output_format")))
        # The order of the keys matters to some releases: type before input.
        keys = list(api)
        if keys.index("type") > keys.index("input"):
            raise ValueError("input before type")
        cmds = [c.strip() for c in str(api.get("input", "")).split(";")]
        if not all(cmds):
            raise ValueError("an empty command in %r" % api.get("input"))
        record = {"api": "nxapi", "type": kind, "cmds": cmds}
        return device.Parsed(cmds, record, kind=kind)

    # ---------------------------------------------------------------- shows

    def interface_status(self):
        rows = [{"interface": "mgmt0", "state": "connected", "vlan": "routed", "duplex": "full", "speed": "a-1000", "type": "--"}]
        for p, up in self.admin.items():
            rows.append(
                {
                    "interface": p,
                    "state": "connected" if up else "disabled",
                    "vlan": "routed",
                    "duplex": "full",
                    "speed": "400G",
                    "type": "QSFP-DD-400G-CR8",
                }
            )
        return {"TABLE_interface": {"ROW_interface": rows}}

    def bgp_summary(self):
        neighbors = [
            {"neighborid": ip, "neighborversion": "4", "neighboras": "65000", "time": "1d02h", "state": st, "prefixreceived": "4"}
            for ip, st in self.config.get("peers", {}).items()
        ]
        saf = {"safi": 1, "af-name": "IPv4 Unicast", "TABLE_neighbor": {"ROW_neighbor": neighbors}}
        return {
            "TABLE_vrf": {
                "ROW_vrf": [
                    {
                        "vrf-name-out": "default",
                        "vrf-router-id": "10.0.0.12",
                        "vrf-local-as": self.config.get("asn", "65102"),
                        "TABLE_af": {"ROW_af": [{"af-id": "1", "TABLE_saf": {"ROW_saf": saf}}]},
                    }
                ]
            }
        }

    # ------------------------------------------------------------- commands

    def serve(self, parsed, rec, reject):
        outputs = []
        ctx = {"iface": None}
        with self.lock:
            for c in parsed.cmds:
                if reject and re.search(reject, c):
                    outputs.append(self.error(parsed.kind, c, "% Invalid command at '^' marker.\n"))
                    rec["refused"] = c
                    break
                try:
                    body = self.run(parsed.kind, c, ctx, rec)
                except Refused as e:
                    outputs.append(self.error(parsed.kind, c, str(e)))
                    rec["refused"] = c
                    break
                out = {"code": "200", "msg": "Success", "body": body}
                if parsed.kind != "cli_conf":
                    out = {"input": c, "msg": "Success", "code": "200", "body": body}
                outputs.append(out)
            self.save()
        answer = {
            "ins_api": {
                "type": parsed.kind,
                "version": "1.2",
                "sid": "eoc",
                "outputs": {"output": outputs[0] if len(outputs) == 1 else outputs},
            }
        }
        return 200, "application/json", json.dumps(answer)

    @staticmethod
    def error(kind, c, clierror):
        if kind == "cli_conf":
            return {"code": "400", "msg": "CLI execution error", "clierror": clierror}
        return {"input": c, "msg": "Input CLI command error", "code": "400", "clierror": clierror}

    def run(self, kind, c, ctx, rec):
        if kind == "cli_show":
            if c == "show interface status":
                return self.interface_status()
            if c == "show bgp all summary vrf all":
                return self.bgp_summary()
            if c == "show version":
                return {"chassis_id": "Nexus9000 C9336C-FX2 Chassis", "nxos_ver_str": "10.2(4)",
                        "kickstart_ver_str": "10.2(4)", "host_name": "leaf1"}
            raise Refused("% Invalid command at '^' marker.\n")
        if kind == "cli_show_ascii":
            m = re.fullmatch(r"show user-account (\S+)", c)
            if m:
                # As NX-OS prints it: the roles on one line.
                return "user:%s\n        this user account has no expiry date\n        roles:%s \n" % (
                    m.group(1), self.config.get("roles", "network-admin"))
            return self.bash(c, rec)
        return self.conf(c, ctx)

    def conf(self, c, ctx):
        c = " ".join(c.split())
        if c == "configure terminal":
            return {}
        m = re.fullmatch(r"interface (\S+)", c)
        if m:
            p = self.port(m.group(1))
            if p is None:
                raise Refused("% Invalid interface format at '^' marker.\n")
            ctx["iface"] = p
            return {}
        if c in ("shutdown", "no shutdown") and ctx["iface"]:
            self.admin[ctx["iface"]] = c == "no shutdown"
            return {}
        raise Refused("% Invalid command at '^' marker.\n")

    def bash(self, c, rec):
        m = ARM.fullmatch(c)
        if m:
            name, secs, vsh, pattern = m.group(1), int(m.group(2)), m.group(3), m.group(4)
            restore = [x.strip() for x in vsh.split(SEP)]
            cmdline = ": %s && sleep %d && /isan/bin/vsh -c \"%s\"" % (name, secs, vsh)
            finds_timer = re.search(pattern, cmdline) is not None
            finds_itself = re.search(pattern, "pgrep -f '%s'" % pattern) is not None
            rec["arm"] = {"name": name, "sleep": secs, "restore": restore, "pattern": pattern,
                          "finds_timer": finds_timer, "finds_itself": finds_itself}
            self.procs[name] = cmdline
            self.after(secs, name, lambda: self.expire(name, restore))
            # pgrep prints the pid of what it finds, nothing otherwise.
            return "4242\n" if finds_timer else ""
        m = PKILL.fullmatch(c)
        if m:
            pattern = m.group(1)
            killed = [n for n, line in list(self.procs.items()) if re.search(pattern, line)]
            for n in killed:
                self.cancel(n)
                del self.procs[n]
            rec["killed"] = killed
            return ""
        raise Refused("% Invalid command at '^' marker.\n")

    def expire(self, name, restore):
        """The timer's `vsh -c`: the restore, as the CLI would run it."""
        self.procs.pop(name, None)
        before = dict(self.admin)
        ctx = {"iface": None}
        for c in restore:
            self.conf(c, ctx)
        return [p for p, up in self.admin.items() if up and not before.get(p)]


if __name__ == "__main__":
    device.main(Nxos)
