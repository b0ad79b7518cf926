#!/usr/bin/env python3
"""Downloads against servers the test starts on 127.0.0.1: nginx for normal
serving, servers/faultserver.py for broken networks.  Every fault ends in
success where recovery is possible, or a clear error in bounded time, and
nothing half-written is left under a content hash."""
import hashlib
import io
import json
import os
import pathlib
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
import zipfile

import harness

sys.path.insert(0, str(pathlib.Path(__file__).parent / "servers"))
import faultserver  # noqa: E402  (content() only)
from nginx import Nginx, self_signed  # noqa: E402

BIN = sys.argv[1]
check = harness.Checks()
SIZE = 1_000_000


def sha(data):
    return hashlib.sha256(data).hexdigest()


class Faults:
    def __init__(self):
        self.proc = subprocess.Popen([sys.executable, str(pathlib.Path(__file__).parent /
                                      "servers" / "faultserver.py"), "--lifetime", "600"],
                                     stdout=subprocess.PIPE, text=True)
        self.port = int(self.proc.stdout.readline())

    def url(self, path):
        return f"http://127.0.0.1:{self.port}/{path}"

    def log(self):
        with urllib.request.urlopen(self.url("stats"), timeout=10) as r:
            return json.loads(r.read())

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=10)


def prefetch(root, url, *args):
    r = harness.run(BIN, "prefetch", url, "--root", str(root), "--json", *args)
    try:
        item = json.loads(r.stdout).get("downloads", [{}])[0]
    except (json.JSONDecodeError, IndexError):
        item = {}
    return r, item


def clean(root):
    """No partial download is left named as a finished one."""
    d = root / "downloads"
    names = [p.name for p in d.iterdir()] if d.exists() else []
    return all(len(n) == 64 or n.endswith(".part") or n.endswith(".meta") for n in names)


def leftovers(root):
    d = root / "downloads"
    return sorted(p.name for p in d.iterdir()) if d.exists() else []


def test_nginx(tmp):
    www = tmp / "www"
    www.mkdir()
    files = {}
    for i in range(3):
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w") as z:
            z.writestr(f"pkg{i}/lib/payload.bin", os.urandom(300_000 + i))
        files[f"f{i}.zip"] = buf.getvalue()
    for name, data in files.items():
        (www / name).write_bytes(data)
    srv = Nginx(www, tmp / "nginx")
    root = tmp / "r-nginx"
    try:
        for name, data in files.items():
            r, it = prefetch(root, srv.url(name))
            check(f"nginx {name}", r.returncode == 0 and it.get("sha256") == sha(data)
                  and it.get("size") == len(data), r.stdout + r.stderr)
        recipes = tmp / "recipes"
        recipes.mkdir()
        for i, (name, data) in enumerate(files.items()):
            src = {"url": srv.url(name), "sha256": sha(data), "size": len(data), "format": "zip",
                   "strip": 1}
            (recipes / f"pkg{i}.json").write_text(json.dumps({
                "format": 1, "name": f"pkg{i}", "summary": "test", "versions": [{
                    "version": "1", "requires": [f"pkg{i + 1}"] if i < 2 else [],
                    "sources": {"windows-x86_64": src, "linux-x86_64": src}}]}))
        root2 = tmp / "r-fetch"
        r = harness.run(BIN, "fetch", "pkg0", "--recipes", str(recipes), "--root", str(root2),
                        "--gpu", "gfx1200", "--json", "--parallel", "3")
        got = json.loads(r.stdout or "{}").get("downloads", [])
        check("fetch a plan in parallel", r.returncode == 0 and len(got) == 3
              and all(x["sha256"] for x in got), r.stdout + r.stderr)
        stored = sorted(p.name for p in (root2 / "store").iterdir())
        check("fetch unpacks into the store", len(stored) == 3 and all(
            (root2 / "store" / s / "lib" / "payload.bin").exists() for s in stored), str(stored))
    finally:
        srv.stop()
    # With the server gone, a known artifact still comes from the cache.
    data = files["f0.zip"]
    r, it = prefetch(root, "http://127.0.0.1:9/f0.zip", "--sha256", sha(data))
    check("second request costs no network", r.returncode == 0 and it.get("from_cache"),
          r.stdout + r.stderr)
    r, it = prefetch(root, "http://127.0.0.1:9/other.bin", "--offline")
    check("--offline fails before any network", r.returncode == 8 and "--offline" in r.stderr,
          r.stderr)
    test_past_boot(root, files)


def test_past_boot(root, files):
    """A download is not flushed to the disk: on Linux it is named SHA~BOOT.
    Left by an earlier boot (a crash may have torn it), it is hashed again
    before use: whole, it is flushed and named SHA; torn, it is deleted."""
    downloads = root / "downloads"
    names = {p.name.split("~")[0]: p for p in downloads.iterdir() if "~" in p.name}
    if harness.EMULATOR or not names:
        print("skipped past-boot checks: downloads are flushed where there is no boot id")
        return
    check("a fresh download is named SHA~BOOT", len(names) == 3, sorted(names))
    whole, torn = sha(files["f1.zip"]), sha(files["f2.zip"])
    for digest in (whole, torn):
        names[digest].rename(downloads / f"{digest}~00000000")  # as if from another boot
    data = bytearray((downloads / f"{torn}~00000000").read_bytes())
    data[1000:2000] = bytes(1000)  # what a crash can leave: the size, not the bytes
    (downloads / f"{torn}~00000000").write_bytes(bytes(data))
    r, it = prefetch(root, "http://127.0.0.1:9/f1.zip", "--sha256", whole, "--offline")
    check("an intact download of a past boot is used, hashed again",
          r.returncode == 0 and it.get("from_cache") and (downloads / whole).is_file() and
          not (downloads / f"{whole}~00000000").exists(), r.stdout + r.stderr)
    r, it = prefetch(root, "http://127.0.0.1:9/f2.zip", "--sha256", torn, "--offline")
    check("a torn one is not: it is deleted, and --offline says the cache lacks it",
          r.returncode == 8 and not (downloads / f"{torn}~00000000").exists(),
          r.stdout + r.stderr)


def test_tls(tmp):
    """HTTPS with a private CA (--ca-bundle), HTTP/2 when nginx offers it,
    and an untrusted certificate refused."""
    www = tmp / "www-tls"
    www.mkdir()
    data = os.urandom(200_000)
    (www / "a.bin").write_bytes(data)
    cert, key = self_signed(tmp)
    srv = Nginx(www, tmp / "nginx-tls", tls=(cert, key))
    try:
        r, it = prefetch(tmp / "r-tls", srv.url("a.bin"), "--ca-bundle", str(cert))
        log = (srv.dir / "logs" / "access.log").read_text()
        check("HTTPS with --ca-bundle", r.returncode == 0 and it.get("sha256") == sha(data),
              r.stdout + r.stderr)
        check("HTTP/2 where the server offers it", "/a.bin HTTP/2.0 200" in log, log)
        r, it = prefetch(tmp / "r-tls2", srv.url("a.bin"), "--retries", "0")
        check("an untrusted certificate is refused", r.returncode == 8
              and "certificate" in r.stderr.lower(), r.stderr)
    finally:
        srv.stop()


def test_add_file(tmp):
    supplied = tmp / "cublas64_11.dll"
    supplied.write_bytes(os.urandom(5000))
    stranger = tmp / "stranger.dll"
    stranger.write_bytes(b"nobody expects this")
    recipes = tmp / "user-recipes"
    recipes.mkdir()
    (recipes / "overlay.json").write_text(json.dumps({
        "format": 1, "name": "overlay", "summary": "test", "kind": "user", "versions": [{
            "version": "1", "user_files": [{"name": "cublas64_11.dll",
                                             "sha256": sha(supplied.read_bytes())}]}]}))
    root = tmp / "r-add"
    r = harness.run(BIN, "add-file", str(supplied), "--recipes", str(recipes), "--root", str(root))
    check("add-file accepts an expected file", r.returncode == 0 and "overlay" in r.stdout and
          (root / "downloads" / sha(supplied.read_bytes())).exists(), r.stdout + r.stderr)
    # What the file is to the recipes is said whole, however long its name.
    long_name = "cublas64_11-" + "x" * 300 + ".dll"
    other = tmp / "other.dll"
    other.write_bytes(os.urandom(3000))
    (recipes / "long-overlay.json").write_text(json.dumps({
        "format": 1, "name": "long-overlay", "summary": "test", "kind": "user", "versions": [{
            "version": "1", "user_files": [{"name": long_name,
                                             "sha256": sha(other.read_bytes())}]}]}))
    r = harness.run(BIN, "add-file", str(other), "--recipes", str(recipes), "--root", str(root))
    check("add-file names what the file is whole", r.returncode == 0 and
          f"accepted as user file {long_name} of long-overlay 1" in r.stdout, r.stdout + r.stderr)
    r = harness.run(BIN, "add-file", str(stranger), "--recipes", str(recipes), "--root", str(root))
    check("add-file refuses an unknown file", r.returncode == 4 and "no recipe expects" in r.stderr
          and not (root / "downloads" / sha(stranger.read_bytes())).exists(), r.stderr)


def test_faults(tmp, f):
    full = faultserver.content(SIZE)
    root = tmp / "r-faults"
    r, it = prefetch(root, f.url(f"ok/{SIZE}"), "--sha256", "0" * 64)
    check("hash mismatch", r.returncode == 9 and "0" * 64 in r.stderr and sha(full) in r.stderr
          and "deleted" in r.stderr and clean(root)
          and not (root / "downloads" / sha(full)).exists(), r.stderr)
    r, it = prefetch(root, f.url(f"flaky/a/2/{SIZE}"), "--sha256", sha(full).upper())
    check("503 twice, then success (an upper-case SHA-256 is fine)", r.returncode == 0
          and it.get("attempts") == 3 and it.get("sha256") == sha(full), r.stderr)
    root2 = tmp / "r-drop"
    r, it = prefetch(root2, f.url(f"drop/b/{SIZE}"))
    ranged = [x for x in f.log() if x["path"] == f"/drop/b/{SIZE}" and x["range"]]
    check("dropped mid-body, resumed", r.returncode == 0 and it.get("sha256") == sha(full)
          and it.get("resumed_from", 0) > 0 and ranged and ranged[0]["if_range"] == "\"v1\"",
          r.stdout + r.stderr)
    root3 = tmp / "r-stall"
    r, it = prefetch(root3, f.url(f"norange/{SIZE}"), "--sha256", sha(full))
    check("a server ignoring Range: start over", r.returncode == 0
          and it.get("sha256") == sha(full), r.stdout + r.stderr)
    start = time.time()
    r, it = prefetch(tmp / "r-endless", f.url("endless"), "--size", "200000")
    check("more bytes than declared are cut", r.returncode == 9 and "more than" in r.stderr
          and time.time() - start < 30 and clean(tmp / "r-endless"), r.stderr)
    r, it = prefetch(tmp / "r-change", f.url(f"changing/c/{SIZE}"))
    check("a file changed between attempts restarts (If-Range)", r.returncode == 0
          and it.get("sha256") == sha(faultserver.content(SIZE, version=2))
          and it.get("resumed_from") == 0, r.stdout + r.stderr)
    r, it = prefetch(tmp / "r-swap", f.url(f"swap/nometa/{SIZE}"))
    check("a part replaced by a response with no validator does not resume with the old one",
          r.returncode == 0 and it.get("sha256") == sha(faultserver.content(SIZE)),
          r.stdout + r.stderr)
    r, it = prefetch(tmp / "r-416", f.url(f"overlong/o/{SIZE}"))
    check("a resume answered 416 starts over on the same URL",
          r.returncode == 0 and it.get("sha256") == sha(faultserver.content(SIZE)) and
          it.get("attempts") == 3, r.stdout + r.stderr)
    # No pin: only the Content-Range check stands between a bad proxy and
    # a spliced file recorded under its own (wrong) SHA-256.
    r, it = prefetch(tmp / "r-offrange", f.url(f"offrange/or/1000/{SIZE}"))
    check("a resume answered from another byte than asked starts over",
          r.returncode == 0 and it.get("sha256") == sha(full) and it.get("attempts") == 3,
          r.stdout + r.stderr)
    r, it = prefetch(tmp / "r-offrange0", f.url(f"offrange/or0/0/{SIZE}"))
    check("a resume answered with the whole file as 206 takes it whole",
          r.returncode == 0 and it.get("sha256") == sha(full) and it.get("attempts") == 2,
          r.stdout + r.stderr)
    r, it = prefetch(tmp / "r-loop", f.url("loop"))
    check("redirect loop", r.returncode == 8 and "redirect" in r.stderr.lower()
          and f.url("loop") in r.stderr, r.stderr)
    check("a redirect loop leaves nothing in downloads/", leftovers(tmp / "r-loop") == [],
          leftovers(tmp / "r-loop"))
    r, it = prefetch(tmp / "r-503", f.url(f"flaky/always/99/{SIZE}"), "--retries", "2")
    check("503 on every attempt: a clear error", r.returncode == 8 and it.get("attempts") == 3
          and "HTTP 503" in r.stderr and "try again later" in r.stderr, r.stderr)
    check("503s leave nothing in downloads/", leftovers(tmp / "r-503") == [],
          leftovers(tmp / "r-503"))
    r, it = prefetch(tmp / "r-mirror", f.url("missing"), "--mirror", f.url(f"ok/{SIZE}"),
                     "--sha256", sha(full))
    check("fail-over to a mirror", r.returncode == 0 and it.get("sha256") == sha(full),
          r.stderr)


def test_size_cap(tmp, f):
    """Without a declared size a download is capped (--max-size, 4 GiB by
    default): an endless body is cut there, deleted, and the error says how
    to allow more."""
    root = tmp / "r-cap"
    start = time.time()
    r, it = prefetch(root, f.url("endless"), "--max-size", "2M")
    check("an endless body stops at --max-size", r.returncode == 9 and f.url("endless") in r.stderr
          and "2 MiB" in r.stderr and "--max-size" in r.stderr and time.time() - start < 15,
          r.stderr)
    check("a capped download leaves nothing in downloads/", leftovers(root) == [],
          leftovers(root))
    r, it = prefetch(root, f.url("ok/5000"), "--max-size", "5k")
    check("--max-size: a download under the cap is fine (k is 1024)",
          r.returncode == 0 and it.get("size") == 5000, r.stderr)
    r = harness.run(BIN, "prefetch", "--help")
    check("prefetch --help shows --max-size and its default", "--max-size SIZE" in r.stdout
          and "(4G)" in r.stdout, r.stdout)
    r, it = prefetch(root, f.url("ok/5000"), "--max-size", "1x")
    check("--max-size: a bad value is refused", r.returncode == 2 and "--max-size" in r.stderr,
          r.stderr)
    r, it = prefetch(root, f.url("ok/5000"), "--max-size", "4000")
    check("--max-size: the announced length is over the cap", r.returncode == 9
          and "4000 bytes" in r.stderr
          and not [n for n in leftovers(root) if ".part" in n], r.stderr)


def test_stall(tmp, f):
    """A stall is cut at --stall-timeout, not seconds later: the server notes
    when it sent its last byte and when the client hung up."""
    root = tmp / "r-stall-cut"
    r, it = prefetch(root, f.url(f"stall/{SIZE}"), "--stall-timeout", "3", "--retries", "0")
    seen = [x for x in f.log() if x["path"] == f"/stall/{SIZE}" and "closed" in x]
    gap = seen[-1]["closed"] - seen[-1]["last_byte"] if seen else None
    check("a stall is cut within --stall-timeout and a margin", gap is not None
          and 2.5 <= gap < 5.5, f"gap {gap}: {r.stderr}")
    check("a stall names the URL and --stall-timeout, keeps the bytes", r.returncode == 8
          and f.url(f"stall/{SIZE}") in r.stderr and "--stall-timeout" in r.stderr
          and it.get("attempts") == 1 and clean(root)
          and any(n.endswith(".part") for n in leftovers(root)), r.stderr)


def test_progress_retries(tmp, f):
    """The retry budget counts attempts that added nothing: a server that
    drops every megabyte still delivers, one that never sends a byte gives
    up after --retries, and one byte per connection stops at the ceiling."""
    size = 8_000_000
    full = faultserver.content(size)
    r, it = prefetch(tmp / "r-every", f.url(f"dropevery/1048576/{size}"))
    check("a connection dropped every 1 MB: done with the default retries", r.returncode == 0
          and it.get("sha256") == sha(full) and it.get("attempts") == 8, r.stdout + r.stderr)
    root = tmp / "r-nothing"
    r, it = prefetch(root, f.url(f"dropevery/0/{SIZE}"), "--retries", "3")
    check("no progress at all: fails after --retries", r.returncode == 8
          and it.get("attempts") == 4 and f.url(f"dropevery/0/{SIZE}") in r.stderr, r.stderr)
    check("attempts without a byte leave nothing in downloads/", leftovers(root) == [],
          leftovers(root))
    root = tmp / "r-trickle"
    r, it = prefetch(root, f.url(f"dropevery/1/{SIZE}"))
    check("a byte per connection stops at the ceiling of attempts", r.returncode == 8
          and it.get("attempts") == 100 and "the most for one URL" in r.stderr
          and "kept" in r.stderr, r.stderr)


def unsized_recipe(folder, name, url, data, fmt="tar.gz", **extra):
    """A recipe pinning url by its SHA-256 alone, as the AUR and community
    scripts do (no size), with extra source keys (max_size)."""
    folder.mkdir(exist_ok=True)
    src = {"url": url, "sha256": sha(data), "format": fmt, "strip": 1,
           "provenance": "a test", **extra}
    (folder / f"{name}.json").write_text(json.dumps({
        "format": 1, "name": name, "summary": "test", "versions": [{
            "version": "1", "sources": {"windows-x86_64": src, "linux-x86_64": src}}]}))


def store_and_cache(root, name):
    """The store folders and finished or partial downloads left for name."""
    store = [x.name for x in (root / "store").glob(f"{name}-*")] + \
        [x.name for x in (root / "store").glob(".staging*")]
    return store + [n for n in leftovers(root) if n != "tmp"]


def lock_part(root, name):
    locks = sorted((root / "envs" / "default").glob("*/lock.json"))
    doc = json.loads(locks[-1].read_text()) if locks else {}
    return next((x for x in doc.get("packages", []) if x["name"] == name), {})


def test_unsized_sources(tmp, f):
    """A SHA-256 without a recorded size is enough, as for Nix's fetchurl:
    the plan is installable, the install verifies by the hash, and the size
    learned is recorded in the generation's lock; a cap bounds the body."""
    data = faultserver.archive()
    recipes = tmp / "nosize-recipes"
    unsized_recipe(recipes, "nosize", f.url("tar"), data)
    root = tmp / "r-nosize"
    args = ["--recipes", str(recipes), "--root", str(root), "--gpu", "gfx1200", "--os", "linux"]
    r = harness.run(BIN, "plan", "nosize", *args)
    check("plan: a source pinned by SHA-256 alone is installable", r.returncode == 0
          and "Download: 1 package of unrecorded size" in r.stdout, r.stdout + r.stderr)
    harness.run(BIN, "env", "create", "default", "--root", str(root))
    r = harness.run(BIN, "install", "nosize", *args, "--yes")
    part = lock_part(root, "nosize")
    check("install: verified by the hash, unpacked", r.returncode == 0
          and list((root / "store").glob("nosize-1-*/lib/f19.bin")), r.stdout + r.stderr)
    check("the lock records the size learned", part.get("size") == len(data)
          and part.get("sha256") == sha(data), part)
    lockfile = tmp / "nosize-lock.json"
    harness.run(BIN, "lock", "--root", str(root), "-o", str(lockfile))
    doc = json.loads(lockfile.read_text() if lockfile.exists() else "{}")
    check("cfapkg lock carries it", [x.get("size") for x in doc.get("packages", [])] ==
          [len(data)], doc)
    # A lockfile entry without a size (an older lock, or one written by
    # hand) installs the same way.
    for x in doc.get("packages", []):
        x.pop("size", None)
    lockfile.write_text(json.dumps(doc))
    second = tmp / "r-nosize-locked"
    harness.run(BIN, "env", "create", "default", "--root", str(second))
    r = harness.run(BIN, "install", "--locked", str(lockfile), *args[:2], "--root", str(second),
                    "--gpu", "gfx1200", "--os", "linux", "--yes")
    check("install --locked without a size: the hash decides, the size is learned",
          r.returncode == 0 and lock_part(second, "nosize").get("size") == len(data),
          r.stdout + r.stderr)
    # A served file that is not the pinned one is refused by its hash.
    unsized_recipe(recipes, "otherbytes", f.url("ok/4321"), data)
    root = tmp / "r-nosize-other"
    harness.run(BIN, "env", "create", "default", "--root", str(root))
    r = harness.run(BIN, "install", "otherbytes", *args[:2], "--root", str(root), "--gpu",
                    "gfx1200", "--os", "linux", "--yes")
    check("other bytes than pinned are refused (exit 9), nothing kept", r.returncode == 9
          and "SHA-256" in r.stderr and store_and_cache(root, "otherbytes") == [], r.stderr)


def test_unsized_cap(tmp, f):
    """A download without a size is cut at its cap and refused, naming the
    URL, the cap and how to raise it; nothing is left in the download cache
    or the store: the recipe's max_size, --max-size over it, the default."""
    recipes = tmp / "cap-recipes"
    data = faultserver.archive()
    unsized_recipe(recipes, "capped", f.url("endless"), data, max_size=1 << 20)
    unsized_recipe(recipes, "defaultcap", f.url("huge/5368709120"), data)
    unsized_recipe(recipes, "fits", f.url("tar"), data, max_size=1 << 20)
    root = tmp / "r-cap-install"
    harness.run(BIN, "env", "create", "default", "--root", str(root))
    args = ["--recipes", str(recipes), "--root", str(root), "--gpu", "gfx1200", "--os", "linux",
            "--yes"]
    start = time.time()
    r = harness.run(BIN, "install", "capped", *args)
    check("an endless body stops at the recipe's max_size", r.returncode == 9
          and f.url("endless") in r.stderr and "1 MiB" in r.stderr
          and "the recipe's max_size" in r.stderr and "--max-size SIZE" in r.stderr
          and time.time() - start < 20, r.stderr)
    check("nothing of it in the cache or the store", store_and_cache(root, "capped") == [],
          store_and_cache(root, "capped"))
    r = harness.run(BIN, "install", "capped", *args, "--max-size", "2M")
    check("--max-size wins over the recipe's max_size", r.returncode == 9
          and "2 MiB" in r.stderr and "the cap given (--max-size)" in r.stderr, r.stderr)
    r = harness.run(BIN, "install", "defaultcap", *args)
    check("the default cap: 4 GiB, refused from the announced length", r.returncode == 9
          and "4 GiB" in r.stderr and "the default cap" in r.stderr
          and f.url("huge/5368709120") in r.stderr
          and store_and_cache(root, "defaultcap") == [], r.stderr)
    r = harness.run(BIN, "install", "fits", *args)
    check("a body under its cap installs", r.returncode == 0
          and lock_part(root, "fits").get("size") == len(data), r.stdout + r.stderr)
    r = harness.run(BIN, "install", "--help")
    check("install --help shows --max-size", "--max-size SIZE" in r.stdout, r.stdout)
    r = harness.run(BIN, "plan", "zluda==7-preview.10", "--os", "windows", "--gpu", "gfx1200",
                    "--hip-sdk", "6.4.2")
    check("the shipped ZLUDA preview pinned without a size is installable",
          r.returncode == 0 and "zluda" in r.stdout, r.stdout + r.stderr)


def test_proxy(tmp, f):
    """The standard proxy variables are honoured."""
    proc = subprocess.Popen([sys.executable, str(pathlib.Path(__file__).parent / "servers" /
                             "proxy.py"), "--lifetime", "120"], stdout=subprocess.PIPE, text=True)
    port = int(proc.stdout.readline())
    try:
        proxy = f"http://127.0.0.1:{port}"
        env = {"http_proxy": proxy, "HTTP_PROXY": proxy, "no_proxy": "", "NO_PROXY": ""}
        r = harness.run(BIN, "prefetch", f.url("ok/5000"), "--root", str(tmp / "r-proxy"),
                        "--json", env=env)
        with urllib.request.build_opener(urllib.request.ProxyHandler({})).open(
                f"{proxy}/count", timeout=10) as c:
            relayed = int(c.read())
        check("http_proxy is honoured", r.returncode == 0 and relayed == 1,
              f"{relayed} relayed: {r.stderr}")
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def stream_recipe(folder, name, url, data):
    folder.mkdir(exist_ok=True)
    src = {"url": url, "sha256": sha(data), "size": len(data), "format": "tar.gz", "strip": 1}
    (folder / f"{name}.json").write_text(json.dumps({
        "format": 1, "name": name, "summary": "test", "versions": [{
            "version": "1", "sources": {"windows-x86_64": src, "linux-x86_64": src}}]}))


def fetch_one(root, recipes, name):
    r = harness.run(BIN, "fetch", name, "--recipes", str(recipes), "--root", str(root),
                    "--gpu", "gfx1200", "--json")
    try:
        return r, json.loads(r.stdout).get("downloads", [{}])[0]
    except (json.JSONDecodeError, IndexError):
        return r, {}


def manifest(root, name):
    found = list((root / "store").glob(f"{name}-1-*/.cfapkg/manifest.json"))
    return found[0].read_text() if found else None


def test_streaming(tmp, f):
    data = faultserver.archive()
    recipes = tmp / "stream-recipes"
    stream_recipe(recipes, "tarpkg", f.url("tar"), data)
    stream_recipe(recipes, "droppkg", f.url("droptar/s"), data)
    stream_recipe(recipes, "evilpkg", f.url("eviltar"), faultserver.archive(evil=True))
    root = tmp / "r-stream"
    r, it = fetch_one(root, recipes, "tarpkg")
    check("a tar.gz unpacks while it downloads", r.returncode == 0 and it.get("streamed")
          and it.get("unpacked") and (root / "store").glob("tarpkg-1-*/lib/f19.bin"),
          r.stdout + r.stderr)
    root2 = tmp / "r-stream-drop"
    r, it = fetch_one(root2, recipes, "droppkg")
    check("a dropped transfer resumes and unpacks from the verified file",
          r.returncode == 0 and it.get("resumed_from", 0) > 0 and not it.get("streamed")
          and it.get("unpacked"), r.stdout + r.stderr)
    check("streamed and file unpacks give the same manifest",
          manifest(root, "tarpkg") is not None and manifest(root, "tarpkg") ==
          manifest(root2, "droppkg"))
    r, it = fetch_one(root, recipes, "evilpkg")
    check("a hostile archive is refused while streaming and after", r.returncode == 9 and
          "evil" in r.stderr and not list((root / "store").glob("evilpkg*")) and
          not list((root / "store").glob(".staging*")) and
          not (tmp / "evil.txt").exists() and not (root / "evil.txt").exists(), r.stderr)
    check("the refusal names the package and its URL, not the cache's file",
          "evilpkg from " + f.url("eviltar") in r.stderr and "downloads" not in r.stderr,
          r.stderr)


def test_kill_and_resume(tmp, f):
    size = 4_000_000
    full = faultserver.content(size)
    root = tmp / "r-kill"
    proc = subprocess.Popen([*harness.EMULATOR, BIN, "prefetch", f.url(f"slowonce/k/{size}"),
                             "--root", str(root), "--sha256", sha(full)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    part = root / "downloads" / f"{sha(full)}.part"
    deadline = time.time() + 30
    while time.time() < deadline and (not part.exists() or part.stat().st_size < 500_000):
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=10)
    kept = part.stat().st_size if part.exists() else 0
    r, it = prefetch(root, f.url(f"slowonce/k/{size}"), "--sha256", sha(full))
    check("kill -9, then resume from the .part", kept > 0 and r.returncode == 0
          and it.get("resumed_from", 0) >= kept // 2 and it.get("sha256") == sha(full),
          f"kept {kept}: {r.stdout} {r.stderr}")


def main():
    with tempfile.TemporaryDirectory() as d:
        tmp = pathlib.Path(d)
        test_nginx(tmp)
        test_add_file(tmp)
        test_tls(tmp)
        f = Faults()
        try:
            test_faults(tmp, f)
            test_size_cap(tmp, f)
            test_stall(tmp, f)
            test_progress_retries(tmp, f)
            test_unsized_sources(tmp, f)
            test_unsized_cap(tmp, f)
            test_streaming(tmp, f)
            test_proxy(tmp, f)
            if not harness.EMULATOR:
                test_kill_and_resume(tmp, f)  # see tests/WINE.md
        finally:
            f.stop()
    return check.report()


if __name__ == "__main__":
    sys.exit(main())
