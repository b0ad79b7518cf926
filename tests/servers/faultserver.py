#!/usr/bin/env python3
"""A small HTTP server on 127.0.0.1 that misbehaves on purpose, for the
download tests.  It prints its port on the first line of standard output
and stops by itself after --lifetime seconds.

Paths (SIZE in bytes, KEY any word naming the per-test state):
  /ok/SIZE               the file, with Range and If-Range (ETag "v1")
  /flaky/KEY/N/SIZE      503 for the first N requests of KEY, then /ok
  /drop/KEY/SIZE         the first request of KEY closes after half the body
  /slowonce/KEY/SIZE     the first request of KEY trickles; later ones are fast
  /stall/SIZE            half the body, then silence until the client closes
                         (its log entry gets "last_byte" and "closed": the
                         times, in seconds, the last byte was sent and the
                         client hung up)
  /endless               bytes without end (no Content-Length)
  /huge/SIZE             announces SIZE bytes (Content-Length) and sends bytes
                         until the client hangs up: a file too large to make
  /norange/SIZE          always the whole file with 200, whatever the Range
  /dropevery/STEP/SIZE   the file, with Range and If-Range, but every response
                         closes after STEP bytes of its body (0: after the
                         headers)
  /changing/KEY/SIZE     different bytes on every request (ETag vN); the first
                         request closes after half the body
  /swap/KEY/SIZE         the first request of KEY gets the file (ETag "v1")
                         and closes half way; the second, other bytes with
                         no ETag, whatever the Range, closing half way too;
                         later ones the file again, with Range and If-Range
  /overlong/KEY/SIZE     the first request of KEY announces 16 bytes more than
                         the file (ETag "v1") and closes after the file; later
                         ones the file, with Range and If-Range (so the resume
                         of the whole file gets 416)
  /offrange/KEY/START/SIZE the first request of KEY closes half way (ETag "v1");
                         the second answers its range with 206 and the bytes
                         from START on, whatever the Range asked (a proxy that
                         mishandles ranges); later ones the file, with Range
  /tar                   archive(): a deterministic tar.gz package
  /droptar/KEY           the same; the first request of KEY closes half way
  /eviltar               a tar.gz with an entry that climbs out ("../")
  /loop                  redirects to itself
  /stats                 JSON list of the requests seen: path, Range, If-Range
                         (and the stall times above)
"""
import functools
import gzip
import hashlib
import io
import json
import select
import tarfile
import threading
import time
from http.server import BaseHTTPRequestHandler

from loopback import serve

STATE = {}
LOG = []
LOCK = threading.Lock()


@functools.lru_cache(maxsize=8)
def content(size, version=1):
    """Deterministic bytes: SHA-256 blocks of a counter (about 60% of real
    archives is incompressible, and so is this)."""
    out = bytearray()
    i = 0
    while len(out) < size:
        out += hashlib.sha256(f"{version}:{i}".encode()).digest()
        i += 1
    return bytes(out[:size])


def archive(evil=False):
    """A tar.gz of twenty files under pkg/ (strip 1), byte for byte the
    same on every call; evil adds an entry named ../evil.txt."""
    buf = io.BytesIO()
    with gzip.GzipFile(fileobj=buf, mode="wb", mtime=0) as gz:
        with tarfile.open(fileobj=gz, mode="w", format=tarfile.USTAR_FORMAT) as t:
            names = [f"pkg/lib/f{i}.bin" for i in range(20)] + (["pkg/../../evil.txt"] if evil
                                                                 else [])
            for i, name in enumerate(names):
                data = content(50_000 + i, version=i)
                info = tarfile.TarInfo(name)
                info.size, info.mtime = len(data), 0
                t.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def bump(key):
    with LOCK:
        STATE[key] = STATE.get(key, 0) + 1
        return STATE[key]


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def send_file(self, data, etag="\"v1\"", ranges=True, half_then=None, slow=False,
                  limit=None):
        start = 0
        rng = self.headers.get("Range")
        if_range = self.headers.get("If-Range")
        if ranges and rng and rng.startswith("bytes=") and (if_range is None or if_range == etag):
            start = int(rng[6:].split("-")[0])
        if start >= len(data) and start > 0:
            self.send_response(416)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        body = data[start:]
        self.send_response(206 if start else 200)
        if start:
            self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
        self.send_header("Content-Length", str(len(body)))
        if etag:
            self.send_header("ETag", etag)
        self.send_header("Accept-Ranges", "bytes")
        self.end_headers()
        if limit is not None:
            self.wfile.write(body[:limit])
            self.wfile.flush()
            self.close_connection = True
            return
        if half_then:
            self.wfile.write(body[: len(body) // 2])
            self.wfile.flush()
            half_then()
            return
        if slow:
            for i in range(0, len(body), 16384):
                self.wfile.write(body[i:i + 16384])
                self.wfile.flush()
                time.sleep(0.05)
            return
        self.wfile.write(body)

    def send_endless(self, length=None):
        """Bytes for 20 seconds or until the client hangs up, announcing
        length (a Content-Length it never reaches) when given."""
        self.send_response(200)
        if length is not None:
            self.send_header("Content-Length", length)
        self.send_header("Connection", "close")
        self.end_headers()
        block = content(65536)
        deadline = time.time() + 20
        while time.time() < deadline:
            self.wfile.write(block)
        self.close_connection = True

    def close_now(self):
        self.close_connection = True

    def watch_close(self, seconds=20):
        """Stays silent until the client hangs up (or seconds pass), and
        notes when the last byte went out and when the client closed."""
        with LOCK:
            self.entry["last_byte"] = time.monotonic()
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            ready, _, _ = select.select([self.connection], [], [], 0.05)
            if ready:
                try:
                    if self.connection.recv(1024):
                        continue
                except OSError:
                    pass
                with LOCK:
                    self.entry["closed"] = time.monotonic()
                break
        self.close_connection = True

    def do_GET(self):
        self.entry = {"path": self.path, "range": self.headers.get("Range"),
                      "if_range": self.headers.get("If-Range")}
        with LOCK:
            LOG.append(self.entry)
        p = self.path.strip("/").split("/")
        try:
            self.route(p)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def route(self, p):
        kind = p[0]
        if kind == "ok":
            self.send_file(content(int(p[1])))
        elif kind == "flaky":
            if bump(p[1]) <= int(p[2]):
                self.send_response(503)
                self.send_header("Content-Length", "0")
                self.end_headers()
            else:
                self.send_file(content(int(p[3])))
        elif kind == "drop":
            first = bump(p[1]) == 1
            self.send_file(content(int(p[2])), half_then=self.close_now if first else None)
        elif kind == "slowonce":
            self.send_file(content(int(p[2])), slow=bump(p[1]) == 1)
        elif kind == "stall":
            self.send_file(content(int(p[1])), half_then=self.watch_close)
        elif kind == "endless":
            self.send_endless()
        elif kind == "huge":
            self.send_endless(length=p[1])
        elif kind == "dropevery":
            self.send_file(content(int(p[2])), limit=int(p[1]))
        elif kind == "norange":
            self.send_file(content(int(p[1])), ranges=False)
        elif kind == "changing":
            n = bump(p[1])
            self.send_file(content(int(p[2]), version=n), etag=f"\"v{n}\"",
                           half_then=self.close_now if n == 1 else None)
        elif kind == "swap":
            n = bump(p[1])
            if n == 2:
                self.send_file(content(int(p[2]), version=2), etag=None, ranges=False,
                               half_then=self.close_now)
            else:
                self.send_file(content(int(p[2])), half_then=self.close_now if n == 1 else None)
        elif kind == "overlong":
            data = content(int(p[2]))
            if bump(p[1]) == 1:
                self.send_response(200)
                self.send_header("Content-Length", str(len(data) + 16))
                self.send_header("ETag", "\"v1\"")
                self.end_headers()
                self.wfile.write(data)
                self.wfile.flush()
                self.close_now()
            else:
                self.send_file(data)
        elif kind == "offrange":
            data, n = content(int(p[3])), bump(p[1])
            if n == 2:
                start = int(p[2])
                self.send_response(206)
                self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
                self.send_header("Content-Length", str(len(data) - start))
                self.send_header("ETag", "\"v1\"")
                self.end_headers()
                self.wfile.write(data[start:])
            else:
                self.send_file(data, half_then=self.close_now if n == 1 else None)
        elif kind == "tar":
            self.send_file(archive())
        elif kind == "droptar":
            first = bump(p[1]) == 1
            self.send_file(archive(), half_then=self.close_now if first else None)
        elif kind == "eviltar":
            self.send_file(archive(evil=True))
        elif kind == "loop":
            self.send_response(302)
            self.send_header("Location", "/loop")
            self.send_header("Content-Length", "0")
            self.end_headers()
        elif kind == "stats":
            with LOCK:
                body = json.dumps(LOG).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        else:
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()


if __name__ == "__main__":
    serve(Handler)
