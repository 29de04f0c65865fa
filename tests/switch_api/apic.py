#!/usr/bin/env python3
"""A Cisco APIC's REST API for tests/aci_faults.rs, as far as the `aci`
platform uses it: `aaaLogin` / `aaaRefresh` and the `APIC-cookie`
session, a leaf's ports (`ethpmPhysIf` operSt and usage), the
out-of-service objects (`fabricRsOosPath` under `uni/fabric/outofsvc`,
created by POST, removed by DELETE), the configuration snapshot
(`configExportP` triggered, listed in the state's `snapshots`), and the
reads the audit and the counters make (`topSystem`, the QoS class tree,
`qosDscpClass`, `qosPfcIfPol`, `qosPfcPol`, `l1PhysIf` with its
`l1RsQosPfcIfPolCons` or its `eqpt*DropPkts5min` stats, `qosmIfClass`,
RMON counters, LLDP).

usage: apic.py CERT KEY CONFIG_JSON LOG_JSONL STATE_JSON

CONFIG_JSON (see device.py for `rules` and `scale`):
  user, password      the account (a wrong one: HTTP 401 at aaaLogin)
  pod, node           the leaf the APIC manages (1, 101)
  ports               {"eth1/1": "epg", ...}: each port and its usage
                      (`fabric` for a port facing a spine)
  foreign             tDns that already have an out-of-service object
                      someone else made (no rocegate annotation)
  foreign_applied     false: the leaf has not applied those objects yet
                      (created a moment ago): their ports still in service
  refresh_timeout     the refreshTimeoutSeconds a login answers ("600")
  expire              {"match": REGEX, "times": N}: the first N requests
                      whose `METHOD PATH` matches find their session
                      expired (every token forgotten): HTTP 403 "Token
                      was invalid", as the APIC answers a stale cookie
Each request is one JSON line in LOG_JSONL: n, method, path (decoded),
the cookie's token and whether the APIC knew it (`token_ok`) and it was
the newest one issued (`token_current`), the body (the login's without
its password: `pwd_ok` instead), the answer. STATE_JSON holds the
out-of-service objects (`oos`: dn -> attributes) and the ports' usage.
See tests/fixtures/public/SOURCES.md for where each answer's shape comes
from.
"""
import json
import re
import secrets

import device

OOS_PREFIX = "uni/fabric/outofsvc/rsoosPath-["
# A strict tDn: an invalid one can block every later edit (CSCwh68103).
TDN = re.compile(r"topology/pod-(\d+)/paths-(\d+)/pathep-\[(eth\d+/\d+)\]")
ANNOTATION = re.compile(r"^[a-zA-Z0-9_.:-]*$")


def imdata(items):
    return json.dumps({"totalCount": str(len(items)), "imdata": items})


def error(code, text):
    return json.dumps(
        {"totalCount": "1", "imdata": [{"error": {"attributes": {"code": str(code), "text": text}}}]}
    )


class Apic(device.Device):
    rest = True

    def __init__(self, config, log_path, state_path):
        self.pod = int(config.get("pod", 1))
        self.node = int(config.get("node", 101))
        self.usage = dict(config.get("ports", {}))
        self.tokens = set()
        self.newest = None
        self.expire = dict(config.get("expire", {}), used=0) if config.get("expire") else None
        # dn -> attributes
        self.oos = {}
        for tdn in config.get("foreign", []):
            self.oos[OOS_PREFIX + tdn + "]"] = self.oos_attrs(tdn, "")
        self.unapplied = set() if config.get("foreign_applied", True) else set(self.oos)
        self.snapshots = []
        config = dict(config, ports=list(self.usage))
        super().__init__(config, log_path, state_path)

    def extra_state(self):
        return {"oos": {dn: dict(a) for dn, a in self.oos.items()}, "usage": self.port_usage(),
                "snapshots": list(self.snapshots)}

    def oos_attrs(self, tdn, annotation):
        return {
            "dn": OOS_PREFIX + tdn + "]",
            "tDn": tdn,
            "lc": "blacklist",
            "annotation": annotation,
            "forceResolve": "yes",
            "rType": "mo",
            "state": "formed",
            "stateQual": "none",
            "tCl": "fabricPathEp",
            "tType": "mo",
        }

    def blacklisted(self, port):
        tdn = "topology/pod-%d/paths-%d/pathep-[%s]" % (self.pod, self.node, port)
        dn = OOS_PREFIX + tdn + "]"
        return dn in self.oos and dn not in self.unapplied

    def port_usage(self):
        return {
            p: ("blacklist," + u if self.blacklisted(p) else u) for p, u in self.usage.items()
        }

    # ------------------------------------------------------------ session

    def issue(self):
        tok = secrets.token_urlsafe(24)
        self.tokens.add(tok)
        self.newest = tok
        refresh = str(self.config.get("refresh_timeout", "600"))
        return imdata(
            [
                {
                    "aaaLogin": {
                        "attributes": {
                            "token": tok,
                            "refreshTimeoutSeconds": refresh,
                            "maximumLifetimeSeconds": "86400",
                            "creationTime": "1700000000",
                            "userName": self.config["user"],
                            "version": "6.0(5h)",
                        },
                        "children": [],
                    }
                }
            ]
        )

    def cookie_token(self, headers):
        for part in (headers.get("Cookie") or "").split(";"):
            name, _, value = part.strip().partition("=")
            if name == "APIC-cookie":
                return value
        return None

    def expires_now(self, method, path):
        e = self.expire
        if e is None or (e.get("times") is not None and e["used"] >= e["times"]):
            return False
        if re.search(e["match"], "%s %s" % (method, path)):
            e["used"] += 1
            return True
        return False

    def request(self, method, path, headers, body, rec):
        with self.lock:
            if path == "/api/aaaLogin.json" and method == "POST":
                return self.login(body, rec)
            tok = self.cookie_token(headers)
            rec["token"] = tok
            if self.expires_now(method, path):
                self.tokens.clear()
                rec["expired"] = True
            rec["token_ok"] = tok in self.tokens
            rec["token_current"] = tok is not None and tok == self.newest
            if body:
                try:
                    rec["body"] = json.loads(body)
                except ValueError:
                    rec["body"] = body
            if not rec["token_ok"]:
                return 403, "application/json", error(403, "Token was invalid (Error: Token timeout)")
            if path == "/api/aaaRefresh.json" and method in ("GET", "POST"):
                # The old token stays valid until it times out.
                return 200, "application/json", self.issue()
            status, text = self.serve_rest(method, path, body, rec)
            self.save()
            return status, "application/json", text

    def login(self, body, rec):
        try:
            a = json.loads(body)["aaaUser"]["attributes"]
            user, pwd = a["name"], a["pwd"]
        except (ValueError, KeyError, TypeError) as e:
            rec["problem"] = "login body: %r" % e
            return 400, "application/json", error(400, "malformed aaaLogin")
        rec["user"] = user
        rec["pwd_ok"] = user == self.config["user"] and pwd == self.config["password"]
        rec["body"] = {"aaaUser": {"attributes": {"name": user, "pwd": "(not logged)"}}}
        if not rec["pwd_ok"]:
            return 401, "application/json", error(
                401, "Username or password is incorrect - FAILED local authentication"
            )
        return 200, "application/json", self.issue()

    # -------------------------------------------------------------- objects

    def serve_rest(self, method, path, body, rec):
        base, _, query = path.partition("?")
        if method == "GET":
            return self.get(base, query, rec)
        if method == "POST" and base == "/api/mo/uni/fabric/configexp-rocegate.json":
            return self.snapshot(body, rec)
        m = re.fullmatch(r"/api/(?:node/)?mo/(uni/fabric/outofsvc/rsoosPath-\[(.*)\])\.json", base)
        if not m:
            rec["problem"] = "unknown write %s %s" % (method, base)
            return 400, error(400, "Request failed, unresolved class for %s" % base)
        dn, tdn = m.group(1), m.group(2)
        if method == "DELETE":
            # Deleting what is not there succeeds, as on the APIC.
            rec["deleted"] = self.oos.pop(dn, None) is not None
            return 200, imdata([])
        if method != "POST":
            return 400, error(400, "method %s not allowed" % method)
        try:
            a = json.loads(body)["fabricRsOosPath"]["attributes"]
        except (ValueError, KeyError, TypeError):
            rec["problem"] = "not a fabricRsOosPath body"
            return 400, error(103, "Invalid request body")
        t = TDN.fullmatch(a.get("tDn", ""))
        if (
            t is None
            or a.get("tDn") != tdn
            or a.get("lc") != "blacklist"
            or not ANNOTATION.match(a.get("annotation", ""))
        ):
            rec["problem"] = "tDn %r lc %r annotation %r for %s" % (
                a.get("tDn"), a.get("lc"), a.get("annotation"), dn)
            return 400, error(107, "Failed to decode IfIndex, id: %s" % a.get("tDn"))
        if int(t.group(1)) != self.pod or int(t.group(2)) != self.node or t.group(3) not in self.usage:
            rec["problem"] = "no such path %s" % tdn
            return 400, error(102, "configured object (%s) not found" % tdn)
        rec["created"] = dn not in self.oos
        self.oos[dn] = self.oos_attrs(tdn, a.get("annotation", ""))
        return 200, imdata([])

    def snapshot(self, body, rec):
        """A configExportP triggered as a snapshot (aci.md §5.4): recorded
        in the state's `snapshots`, as the APIC lists them under
        uni/backupst/snapshots-[uni/fabric/configexp-rocegate]."""
        try:
            a = json.loads(body)["configExportP"]["attributes"]
        except (ValueError, KeyError, TypeError):
            rec["problem"] = "not a configExportP body"
            return 400, error(103, "Invalid request body")
        if a.get("snapshot") != "yes" or a.get("adminSt") != "triggered" or a.get("name") != "rocegate":
            rec["problem"] = "configExportP %r" % a
            return 400, error(400, "not a triggered snapshot")
        self.snapshots.append({"name": "run-2026-11-27T00-00-%02d" % len(self.snapshots),
                               "descr": a.get("descr", "")})
        return 200, imdata([])

    def get(self, base, query, rec):
        node = "topology/pod-%d/node-%d" % (self.pod, self.node)
        m = re.fullmatch(r"/api/(?:node/)?mo/(topology/pod-\d+/node-\d+)/sys/phys-\[([^\]]+)\](/phys)?\.json", base)
        if m and m.group(1) == node and m.group(2) in self.usage:
            port = m.group(2)
            if m.group(3):
                usage = self.port_usage()[port]
                oper = "down" if self.blacklisted(port) else "up"
                return 200, imdata([{"ethpmPhysIf": {"attributes": {
                    "dn": "%s/sys/phys-[%s]/phys" % (node, port), "operSt": oper,
                    "operStQual": "admin-down" if oper == "down" else "none", "usage": usage}}}])
            dn = "%s/sys/phys-[%s]" % (node, port)
            if "query-target=children" in query:
                return 200, imdata(self.rmon(node, port))
            kids = []
            if "rsp-subtree-include=stats" in query:
                kids = [
                    {"eqptIngrDropPkts5min": {"attributes": {
                        "dn": dn + "/CDeqptIngrDropPkts5min", "bufferCum": "0", "errorCum": "0",
                        "forwardingCum": "0", "lbCum": "0"}}},
                    {"eqptEgrDropPkts5min": {"attributes": {
                        "dn": dn + "/CDeqptEgrDropPkts5min", "afdWredCum": "0", "bufferCum": "0",
                        "errorCum": "0"}}},
                ]
            elif "rsp-subtree-class=l1RsQosPfcIfPolCons" in query:
                kids = [{"l1RsQosPfcIfPolCons": {"attributes": {
                    "dn": dn + "/rsQosPfcIfPolCons", "tDn": "uni/infra/pfc-default"}}}]
            return 200, imdata([{"l1PhysIf": {"attributes": {
                "dn": dn, "id": port, "adminSt": "up",
                "mtu": "9216", "speed": "400G", "mode": "trunk"}, "children": kids}}])
        if m:
            # The APIC answers an unknown DN with an empty imdata.
            return 200, imdata([])
        if base == "/api/class/fabricRsOosPath.json":
            f = re.fullmatch(r'query-target-filter=wcard\(fabricRsOosPath\.tDn,"([^"]*)"\)', query)
            if query and f is None:
                rec["problem"] = "filter %r" % query
                return 400, error(121, "Invalid filter %s" % query)
            pattern = f.group(1) if f else ""
            items = [{"fabricRsOosPath": {"attributes": dict(a)}}
                     for a in self.oos.values() if re.search(pattern, a["tDn"])]
            return 200, imdata(items)
        if base == "/api/mo/%s/sys.json" % node:
            return 200, imdata([{"topSystem": {"attributes": {
                "dn": node + "/sys", "name": "leaf101", "role": "leaf", "version": "n9000-16.0(5h)",
                "fabricDomain": "ACI Fabric1"}}}])
        if base == "/api/mo/uni/infra/qosinst-default.json":
            return 200, imdata([{"qosInstPol": {"attributes": {"dn": "uni/infra/qosinst-default"},
                                 "children": [{"qosClass": {"attributes": {"prio": "level2", "admin": "enabled"},
                                  "children": [{"qosPfcPol": {"attributes": {"name": "default", "adminSt": "yes",
                                                "noDropCos": "cos3", "enableScope": "fabric"}}}]}}]}}])
        q = re.fullmatch(r"/api/mo/(topology/pod-\d+/node-\d+)/sys/qosm/if-\[([^\]]+)\]\.json", base)
        if q and q.group(1) == node and q.group(2) in self.usage:
            return 200, imdata([{"qosmIfClass": {"attributes": {
                "dn": "%s/sys/qosm/if-[%s]/class-%s" % (node, q.group(2), c), "id": c,
                "RxDropPacketsCount": "0", "TxDropPacketsCount": "0",
                "RxAdmitPacketsCount": "0", "TxAdmitPacketsCount": "0"}}}
                for c in ("level1", "level2", "level3")])
        if base == "/api/class/qosDscpClass.json":
            return 200, imdata([{"qosDscpClass": {"attributes": {
                "dn": "uni/tn-gpu/qoscustom-roce/dcsp-%s-%s" % (d, d), "from": d, "to": d,
                "prio": lvl, "target": "unspecified", "targetCos": "unspecified"}}}
                for d, lvl in (("AF31", "level2"), ("CS6", "level1"))])
        if base == "/api/class/qosPfcIfPol.json":
            return 200, imdata([{"qosPfcIfPol": {"attributes": {
                "dn": "uni/infra/pfc-default", "name": "default", "adminSt": "auto"}}}])
        if base == "/api/class/qosPfcPol.json":
            return 200, imdata([{"qosPfcPol": {"attributes": {
                "dn": "uni/infra/qosinst-default/class-level2/pfcpol-default", "name": "default",
                "adminSt": "yes", "noDropCos": "cos3"}}}])
        if base == "/api/mo/%s/sys/lldp/inst.json" % node:
            return 200, imdata([])
        rec["problem"] = "unknown read %s" % base
        return 400, error(400, "Request failed, unresolved class for %s" % base)

    @staticmethod
    def rmon(node, port):
        dn = "%s/sys/phys-[%s]" % (node, port)
        return [
            {"rmonIfIn": {"attributes": {"dn": dn + "/dbgIfIn", "octets": "1000", "discards": "0"}}},
            {"rmonIfOut": {"attributes": {"dn": dn + "/dbgIfOut", "octets": "1000"}}},
            {"rmonDot3Stats": {"attributes": {"dn": dn + "/dbgDot3Stats", "fCSErrors": "0",
                                              "symbolErrors": "0"}}},
        ]


if __name__ == "__main__":
    device.main(Apic)
