"""What the API stand-ins (eos.py, nxos.py, apic.py) share: TLS, Basic
authentication, the request log, the device's ports and timers, the state
file, and the rules that make a request slow, dropped, refused or busy.

usage: eos.py|nxos.py|apic.py CERT KEY CONFIG_JSON LOG_JSONL STATE_JSON

CONFIG_JSON:
  user, password      the account the switch takes (anything else: 401)
  ports               port names, all administratively up at start
  asn, peers          the BGP instance: {"10.0.0.1": "Established", ...}
  scale               real seconds per device second, for timers (0.05:
                      a 60 s commit timer fires after 3 s)
  pending_session     (eos) another configuration session already waiting
                      on its commit timer
  rules               [{"match": REGEX, "do": ACTION, "times": N, ...}]:
                      the first N requests with a command matching REGEX
                      (re.search) get ACTION instead of the normal answer:
                      "reject" (that command is refused as invalid input),
                      "delay" (answered `seconds` late, after it ran),
                      "drop" (the connection is reset before anything runs),
                      "status" (HTTP `status`, nothing runs)
A platform whose API is REST (apic.py: every method, its own session
cookie) sets `rest = True` and answers every request itself with
`request(method, path, headers, body, rec) -> (status, content_type,
text)`; the rules then match `METHOD PATH` (the path percent-decoded).
Each request is one JSON line in LOG_JSONL: method, path, user, whether
the password matched (never the password), the commands, and what the
device made of them (sessions, timers, answer). Timers that fire add an
event line. STATE_JSON is rewritten after every change: each port's admin
state, sessions and timers. The port is printed on the first line.
"""
import base64
import json
import os
import re
import socket
import ssl
import struct
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

START = time.monotonic()


def now():
    return round(time.monotonic() - START, 3)


class Device:
    """The state both platforms keep; a platform subclasses it with
    `serve(handler, body) -> (status, content_type, text, record)`."""

    path = "/"
    # True: `request` answers every method (see the module's doc).
    rest = False

    def __init__(self, config, log_path, state_path):
        self.config = config
        self.log_path = log_path
        self.state_path = state_path
        self.lock = threading.RLock()
        self.admin = {p: True for p in config.get("ports", [])}
        self.scale = float(config.get("scale", 0.05))
        self.rules = [dict(r, used=0) for r in config.get("rules", [])]
        self.timers = {}
        self.save()

    def log(self, entry):
        with self.lock:
            entry["t"] = now()
            with open(self.log_path, "a") as f:
                f.write(json.dumps(entry) + "\n")

    def extra_state(self):
        return {}

    def save(self):
        with self.lock:
            state = {"admin": dict(self.admin), "timers": sorted(self.timers)}
            state.update(self.extra_state())
            tmp = self.state_path + ".tmp"
            with open(tmp, "w") as f:
                json.dump(state, f)
            os.replace(tmp, self.state_path)

    def rule_for(self, cmds):
        """The first rule, still in force, that one of `cmds` matches."""
        with self.lock:
            for r in self.rules:
                if r.get("times") is not None and r["used"] >= r["times"]:
                    continue
                if any(re.search(r["match"], c) for c in cmds):
                    r["used"] += 1
                    return r
        return None

    def port(self, name):
        """The port `name` (any case) names, or None."""
        for p in self.admin:
            if p.lower() == name.lower():
                return p
        return None

    def after(self, device_seconds, name, fire):
        """Runs `fire` once `device_seconds` (scaled) have passed, unless
        `cancel(name)` comes first."""
        t = threading.Timer(device_seconds * self.scale, self._fire, (name, fire))
        t.daemon = True
        with self.lock:
            self.timers[name] = t
        t.start()

    def _fire(self, name, fire):
        with self.lock:
            if self.timers.pop(name, None) is None:
                return
            restored = fire()
            self.log({"event": "timer-expired", "timer": name, "restored": restored})
            self.save()

    def cancel(self, name):
        with self.lock:
            t = self.timers.pop(name, None)
        if t is not None:
            t.cancel()
        return t is not None


def main(make):
    cert, key, config_path, log_path, state_path = sys.argv[1:6]
    with open(config_path) as f:
        config = json.load(f)
    dev = make(config, log_path, state_path)
    lock = threading.Lock()
    counter = {"n": 0}

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def answer(self, status, content_type, text):
            out = text.encode()
            try:
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)
            except (BrokenPipeError, ConnectionResetError, ssl.SSLError, OSError):
                self.close_connection = True

        def not_post(self):
            if dev.rest:
                return self.rest_request()
            length = int(self.headers.get("Content-Length") or 0)
            self.rfile.read(length)
            dev.log({"method": self.command, "path": self.path, "answer": 405})
            self.answer(405, "text/html", "<html><head><title>405 Not Allowed</title></head></html>\n")

        do_GET = do_PUT = do_DELETE = not_post

        def drop(self, rec):
            rec["answer"] = "dropped"
            dev.log(rec)
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.connection.close()
            self.close_connection = True

        def rest_request(self):
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length).decode("utf-8", "replace")
            with lock:
                n = counter["n"]
                counter["n"] += 1
            path = urllib.parse.unquote(self.path)
            rec = {"n": n, "method": self.command, "path": path}
            if path != self.path:
                rec["raw_path"] = self.path
            rule = dev.rule_for(["%s %s" % (self.command, path)])
            do = rule["do"] if rule else None
            if do == "drop":
                return self.drop(rec)
            if do == "status":
                rec["answer"] = rule["status"]
                dev.log(rec)
                self.answer(rule["status"], "text/plain", rule.get("body", "busy\n"))
                return
            status, ctype, text = dev.request(self.command, path, self.headers, body, rec)
            rec.setdefault("answer", status)
            if do == "delay":
                rec["delayed_s"] = rule["seconds"]
            dev.log(rec)
            if do == "delay":
                time.sleep(rule["seconds"])
            self.answer(status, ctype, text)

        def do_POST(self):
            if dev.rest:
                return self.rest_request()
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length).decode("utf-8", "replace")
            with lock:
                n = counter["n"]
                counter["n"] += 1
            rec = {
                "n": n,
                "method": "POST",
                "path": self.path,
                "content_type": self.headers.get("Content-Type"),
            }
            auth = self.headers.get("Authorization") or ""
            user = password = None
            if auth.startswith("Basic "):
                user, _, password = base64.b64decode(auth[6:]).decode().partition(":")
            rec["user"] = user
            rec["auth_ok"] = user == dev.config["user"] and password == dev.config["password"]
            if self.path != dev.path:
                rec["answer"] = 404
                dev.log(rec)
                self.answer(404, "text/html", "<html><head><title>404 Not Found</title></head></html>\n")
                return
            if not rec["auth_ok"]:
                rec["answer"] = 401
                dev.log(rec)
                status, ctype, text = dev.unauthorized()
                self.answer(status, ctype, text)
                return
            try:
                parsed = dev.parse(body)
            except ValueError as e:
                rec["answer"] = "bad request"
                rec["problem"] = str(e)
                dev.log(rec)
                status, ctype, text = dev.bad_request(str(e))
                self.answer(status, ctype, text)
                return
            rec.update(parsed.record)
            rule = dev.rule_for(parsed.cmds)
            do = rule["do"] if rule else None
            if do == "drop":
                return self.drop(rec)
            if do == "status":
                rec["answer"] = rule["status"]
                dev.log(rec)
                self.answer(rule["status"], "text/plain", rule.get("body", "busy\n"))
                return
            reject = rule["match"] if do == "reject" else None
            status, ctype, text = dev.serve(parsed, rec, reject)
            rec.setdefault("answer", status)
            if do == "delay":
                rec["delayed_s"] = rule["seconds"]
            dev.log(rec)
            if do == "delay":
                time.sleep(rule["seconds"])
            self.answer(status, ctype, text)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    server.socket = ctx.wrap_socket(server.socket, server_side=True)
    print(server.server_address[1], flush=True)
    server.serve_forever()


class Parsed:
    """A request as the platform read it: the commands, and what the log
    records about it."""

    def __init__(self, cmds, record, **extra):
        self.cmds = cmds
        self.record = record
        self.__dict__.update(extra)
