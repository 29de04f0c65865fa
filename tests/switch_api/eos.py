#!/usr/bin/env python3
"""An Arista EOS switch's eAPI (`POST /command-api`, JSON-RPC `runCmds`)
for tests/switch_faults.rs: ports with an admin state, a BGP instance,
configuration sessions whose `commit timer` rolls the change back when
nobody aborts it, `configure session NAME abort`, plain `configure`, and
refusals in eAPI's error shape. See device.py for the arguments, the
rules and the log; tests/fixtures/public/SOURCES.md for where each answer's
shape comes from.
"""
import copy
import json
import re

import device

HMS = re.compile(r"commit timer (\d{2}):(\d{2}):(\d{2})")


class Refused(Exception):
    def __init__(self, code, what, error):
        super().__init__(what)
        self.code, self.what, self.error = code, what, error


class Eos(device.Device):
    path = "/command-api"

    def __init__(self, config, log_path, state_path):
        # name -> {"state", "staged", "snapshot"}
        self.sessions = {}
        other = config.get("pending_session")
        if other:
            self.sessions[other] = {"state": "pendingCommitTimer", "staged": {}, "snapshot": {}}
        super().__init__(config, log_path, state_path)

    def extra_state(self):
        return {"sessions": {k: v["state"] for k, v in self.sessions.items()}}

    def unauthorized(self):
        return 401, "text/html", "<html><head><title>401 Unauthorized</title></head><body>Unable to authenticate user: Bad username/password combination</body></html>\n"

    def bad_request(self, why):
        return 200, "application/json", json.dumps(
            {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "Invalid request: " + why}}
        )

    def parse(self, body):
        try:
            req = json.loads(body)
        except ValueError as e:
            raise ValueError("not JSON: %s" % e)
        if req.get("jsonrpc") != "2.0" or req.get("method") != "runCmds":
            raise ValueError("not a JSON-RPC 2.0 runCmds call")
        params = req.get("params") or {}
        if params.get("version") != 1:
            raise ValueError("params.version is not 1")
        fmt = params.get("format", "json")
        if fmt not in ("json", "text"):
            raise ValueError("format %r" % fmt)
        cmds = []
        for c in params.get("cmds") or []:
            if isinstance(c, dict):
                c = c.get("cmd", "")
            if not isinstance(c, str):
                raise ValueError("a command is neither a string nor {cmd, revision}")
            cmds.append(c)
        if not cmds:
            raise ValueError("no commands")
        record = {"api": "eapi", "rpc_id": req.get("id"), "format": fmt, "cmds": cmds}
        return device.Parsed(cmds, record, rpc_id=req.get("id"), fmt=fmt)

    # ---------------------------------------------------------------- shows

    def interfaces_status(self):
        return {
            "interfaceStatuses": {
                p: {
                    "description": "",
                    "linkStatus": "connected" if up else "disabled",
                    "lineProtocolStatus": "up" if up else "down",
                    "vlanInformation": {"interfaceMode": "routed", "interfaceForwardingModel": "routed"},
                    "bandwidth": 400000000000,
                    "interfaceType": "400GBASE-CR8",
                    "duplex": "duplexFull",
                    "autoNegotiateActive": False,
                }
                for p, up in self.admin.items()
            }
        }

    def bgp_summary(self):
        peers = {
            ip: {
                "peerState": st,
                "peerAsn": "65000",
                "ipv4Unicast": {"afiSafiState": "negotiated", "nlrisReceived": 4, "nlrisAccepted": 4},
            }
            for ip, st in self.config.get("peers", {}).items()
        }
        return {
            "vrfs": {
                "default": {"vrf": "default", "routerId": "10.0.0.11", "asn": self.config.get("asn", "65101"), "peers": peers}
            }
        }

    def sessions_detail(self):
        return {
            "maxSavedSessions": 1,
            "maxOpenSessions": 5,
            "sessions": {
                name: {"instances": {}, "state": s["state"], "commitUser": "", "description": ""}
                for name, s in self.sessions.items()
            },
        }

    # ------------------------------------------------------------- commands

    def serve(self, parsed, rec, reject):
        cmds = parsed.cmds
        outputs = []
        ctx = {"enabled": False, "mode": "exec", "session": None, "iface": None}
        sessions, timers = [], []
        with self.lock:
            try:
                for i, c in enumerate(cmds):
                    if reject and re.search(reject, c):
                        word = c.split()[-1]
                        raise Refused(1002, "invalid command", "Invalid input (at token %d: '%s')" % (len(c.split()) - 1, word))
                    out = self.run(c, ctx, sessions, timers)
                    outputs.append(out if parsed.fmt == "json" else {"output": ""})
            except Refused as r:
                rec["sessions"], rec["timers"] = sessions, timers
                rec["answer"] = "error %d" % r.code
                rec["refused"] = c
                self.save()
                data = outputs + [{"errors": [r.error]}]
                msg = "CLI command %d of %d '%s' failed: %s" % (i + 1, len(cmds), c, r.what)
                return 200, "application/json", json.dumps(
                    {"jsonrpc": "2.0", "id": parsed.rpc_id, "error": {"code": r.code, "message": msg, "data": data}}
                )
            rec["sessions"], rec["timers"] = sessions, timers
            self.save()
        return 200, "application/json", json.dumps({"jsonrpc": "2.0", "id": parsed.rpc_id, "result": outputs})

    def needs_enable(self, ctx, c):
        if not ctx["enabled"]:
            raise Refused(1005, "unauthorized", "Invalid input (privileged mode required)")
        if self.config.get("privilege", 15) < 15:
            raise Refused(1005, "unauthorized", "Authorization denied for command '%s'" % c)

    def run(self, c, ctx, sessions, timers):
        c = " ".join(c.split())
        if c == "enable":
            ctx["enabled"] = True
            return {}
        if c == "show interfaces status":
            return self.interfaces_status()
        if c == "show bgp summary vrf all":
            return self.bgp_summary()
        if c == "show configuration sessions detail":
            return self.sessions_detail()
        # `validate --probe`: what the switch is and what the account may do
        # (pyeapi's show-version shape; `show privilege` as EOS prints it).
        if c == "show version":
            return {"modelName": "DCS-7280CR3-32P4", "version": "4.31.1F",
                    "systemMacAddress": "00:1c:73:00:00:01", "serialNumber": "SSJ0000000",
                    "uptime": 1300027.2, "memTotal": 65832112, "memFree": 41595080}
        if c == "show privilege":
            return {"privilegeLevel": self.config.get("privilege", 15)}
        m = re.fullmatch(r"configure session (\S+) abort", c)
        if m:
            self.needs_enable(ctx, c)
            name = m.group(1)
            sessions.append(name)
            s = self.sessions.get(name)
            if s is None:
                raise Refused(1002, "invalid command", "Session %s does not exist" % name)
            if s["state"] == "pendingCommitTimer":
                self.cancel(name)
                self.admin = copy.deepcopy(s["snapshot"])
            del self.sessions[name]
            return {}
        m = re.fullmatch(r"configure session (\S+)", c)
        if m:
            self.needs_enable(ctx, c)
            name = m.group(1)
            sessions.append(name)
            s = self.sessions.get(name)
            if s is not None and s["state"] == "pendingCommitTimer":
                raise Refused(1000, "could not run command", "Session %s is pending a commit timer" % name)
            if s is None:
                s = self.sessions[name] = {"state": "pending", "staged": copy.deepcopy(self.admin), "snapshot": None}
            ctx.update(mode="session", session=name, iface=None)
            return {}
        if c in ("configure", "configure terminal"):
            self.needs_enable(ctx, c)
            ctx.update(mode="config", session=None, iface=None)
            return {}
        m = re.fullmatch(r"interface (\S+)", c)
        if m and ctx["mode"] in ("config", "session"):
            p = self.port(m.group(1))
            if p is None:
                raise Refused(1002, "invalid command", "Interface does not exist")
            ctx["iface"] = p
            return {}
        if c in ("shutdown", "no shutdown") and ctx["iface"]:
            up = c == "no shutdown"
            if ctx["mode"] == "session":
                self.sessions[ctx["session"]]["staged"][ctx["iface"]] = up
            else:
                self.admin[ctx["iface"]] = up
            return {}
        m = HMS.fullmatch(c)
        if m and ctx["mode"] == "session":
            name = ctx["session"]
            secs = int(m.group(1)) * 3600 + int(m.group(2)) * 60 + int(m.group(3))
            timers.append({"session": name, "timer": c.split()[-1], "seconds": secs})
            busy = [n for n, s in self.sessions.items() if s["state"] == "pendingCommitTimer" and n != name]
            if busy:
                raise Refused(1000, "could not run command", "Cannot commit: session %s is pending a commit timer" % busy[0])
            s = self.sessions[name]
            s["snapshot"] = copy.deepcopy(self.admin)
            self.admin = copy.deepcopy(s["staged"])
            s["state"] = "pendingCommitTimer"
            self.after(secs, name, lambda: self.expire(name))
            ctx.update(mode="exec", session=None, iface=None)
            return {}
        if c == "end":
            ctx.update(mode="exec", session=None, iface=None)
            return {}
        raise Refused(1002, "invalid command", "Invalid input (at token 0: '%s')" % c.split()[0])

    def expire(self, name):
        """The commit timer ran out: the configuration as it was before the
        session committed comes back, and the session is gone."""
        s = self.sessions.pop(name, None)
        if s is None:
            return []
        back = [p for p, up in s["snapshot"].items() if up and not self.admin.get(p)]
        self.admin = copy.deepcopy(s["snapshot"])
        return back


if __name__ == "__main__":
    device.main(Eos)
