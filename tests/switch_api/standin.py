#!/usr/bin/env python3
"""An HTTPS stand-in for a switch API (eAPI, NX-API) used by
tests/switch_api.rs: it answers from a script and records every request.

usage: standin.py CERT KEY SCRIPT_JSON LOG_JSONL

SCRIPT_JSON is a list of answers, used in order (the last one repeats):
  {"status": 200, "body": "...", "delay": 0.0, "reset": false}
"reset": true closes the connection with a TCP reset instead of answering.
Each request is logged as one JSON line: method, path, content type, the
Basic user and password sent, the cookie, the body, and how many requests
were in flight. GET and DELETE (the APIC's REST verbs) are taken too.
The port it listens on (127.0.0.1) is printed on the first line.
"""
import base64
import json
import socket
import ssl
import struct
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

cert, key, script_path, log_path = sys.argv[1:5]
script = json.load(open(script_path))
lock = threading.Lock()
state = {"n": 0, "in_flight": 0}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_GET(self):
        self.do_POST()

    def do_DELETE(self):
        self.do_POST()

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length).decode("utf-8", "replace")
        auth = self.headers.get("Authorization") or ""
        user = password = None
        if auth.startswith("Basic "):
            user, _, password = base64.b64decode(auth[6:]).decode().partition(":")
        with lock:
            i = state["n"]
            state["n"] += 1
            state["in_flight"] += 1
            flying = state["in_flight"]
            answer = script[min(i, len(script) - 1)]
            with open(log_path, "a") as f:
                f.write(json.dumps({"method": self.command, "path": self.path,
                                    "content_type": self.headers.get("Content-Type"),
                                    "user": user, "password": password,
                                    "cookie": self.headers.get("Cookie"), "body": body,
                                    "in_flight": flying}) + "\n")
        try:
            time.sleep(answer.get("delay", 0))
            if answer.get("reset"):
                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                self.connection.close()
                self.close_connection = True
                return
            out = answer.get("body", "").encode()
            self.send_response(answer.get("status", 200))
            self.send_header("Content-Type", answer.get("content_type", "application/json"))
            self.send_header("Content-Length", str(len(out)))
            self.end_headers()
            self.wfile.write(out)
        finally:
            with lock:
                state["in_flight"] -= 1


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(cert, key)
server.socket = ctx.wrap_socket(server.socket, server_side=True)
print(server.server_address[1], flush=True)
server.serve_forever()
