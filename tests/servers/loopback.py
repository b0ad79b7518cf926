"""Runs a test HTTP server on 127.0.0.1: a free port (printed first, for the
test that started it) and a lifetime after which it stops by itself."""
import argparse
import threading
from http.server import ThreadingHTTPServer


def serve(handler):
    ap = argparse.ArgumentParser()
    ap.add_argument("--lifetime", type=float, default=300)
    args = ap.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    print(server.server_address[1], flush=True)
    threading.Timer(args.lifetime, server.shutdown).start()
    server.serve_forever()
