#!/usr/bin/env python3
"""A forward HTTP proxy on 127.0.0.1 for the download tests: it relays
plain-HTTP GETs given in absolute form and counts them.  Prints its port
first; GET /count (direct) answers how many it relayed; stops after
--lifetime seconds."""
import urllib.request
from http.server import BaseHTTPRequestHandler

from loopback import serve

RELAYED = [0]
OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def reply(self, code, body, headers=()):
        self.send_response(code)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        if self.path == "/count":
            self.reply(200, str(RELAYED[0]).encode())
            return
        if not self.path.startswith("http://127.0.0.1:"):
            self.reply(403, b"this proxy only reaches 127.0.0.1")
            return
        RELAYED[0] += 1
        req = urllib.request.Request(self.path, headers={
            k: v for k, v in self.headers.items() if k.lower() in ("range", "if-range")})
        try:
            with OPENER.open(req, timeout=30) as r:
                self.reply(r.status, r.read(), [(k, v) for k, v in r.headers.items()
                                                if k.lower() in ("etag", "content-range")])
        except urllib.error.HTTPError as e:
            self.reply(e.code, b"")


if __name__ == "__main__":
    serve(Handler)
