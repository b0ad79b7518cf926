#!/usr/bin/env python3
"""One writer at a time per root (flock on Linux, LockFileEx on Windows):
a second writer waits and then gives up with a message naming the lock, a
waiting writer gets the lock when the first lets go, and a killed holder
frees it.  And the checks a lockfile passes before it is installed: the
set closed under its parts' requirements, http(s) URLs only, nothing
experimental (or of unknown status) without consent, and version 1 files
sent back to 'cfapkg lock'."""
import copy
import json
import os
import pathlib
import signal
import subprocess
import sys
import tempfile
import time

import harness

TOOL, BIN = sys.argv[1], sys.argv[2]
check = harness.Checks()


def holder(root, timeout_ms):
    return subprocess.Popen([*harness.EMULATOR, TOOL, str(root), str(timeout_ms)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)


SHA = "ab" * 32


def lockfile():
    """A version 2 lock for gfx1200: a stack needing a runtime that a
    ZLUDA-like package provides."""
    def package(name, version, **kw):
        store = f"{name}-{version}-{SHA[:8]}"
        return {"name": name, "version": version, "kind": "package", "requested": False,
                "url": f"https://example.org/{name}.zip", "sha256": SHA, "size": 10,
                "format": "zip", "strip": 0, "store": store, **kw}
    return {"format": "cfapkg-lock", "version": 2,
            "facts": {"os": "linux", "arch": "x86_64", "gpu": "gfx1200"},
            "requests": ["stack"],
            "packages": [
                package("zluda", "7-preview.10", requires=[], status="candidate",
                        provides=["cuda-driver-api", "cublas=12"]),
                package("libtorch-cuda", "2.3.0+cu118", status="validated",
                        requires=["cuda-driver-api", "cublas>=11"], provides=[]),
                {"name": "stack", "version": "1", "kind": "meta", "requested": True,
                 "requires": ["zluda>=7-preview.1", "libtorch-cuda==2.3.0"],
                 "provides": [], "status": "validated"}]}


def verify(tmp, doc, *args):
    path = pathlib.Path(tmp) / "test.lock"
    path.write_text(json.dumps(doc))
    r = harness.run(TOOL, "verify", str(path), *args, env={"CFAPKG_RECIPES": ""})
    return r.stdout.strip()


def test_lockfile_checks(tmp):
    good = lockfile()
    check("a closed, tested lock passes", verify(tmp, good) == "ok", verify(tmp, good))
    doc = copy.deepcopy(good)
    del doc["packages"][0]
    out = verify(tmp, doc)
    check("a part removed by hand is refused, naming who needs it and what to do",
          out.startswith("refused:") and "test.lock" in out and "libtorch-cuda" in out and
          '"cuda-driver-api"' in out and "cfapkg lock" in out, out)
    doc = copy.deepcopy(good)
    doc["packages"][0]["version"] = "6-preview.69"
    doc["packages"][0]["store"] = f"zluda-6-preview.69-{SHA[:8]}"
    out = verify(tmp, doc)
    check("a part at a version its dependant does not accept is refused",
          "zluda>=7-preview.1" in out and "the set has zluda 6-preview.69" in out, out)
    doc = copy.deepcopy(good)
    doc["packages"][0]["provides"] = ["cuda-driver-api", "cublas=10"]
    out = verify(tmp, doc)
    check("a provide at a version the requirement refuses does not meet it",
          '"cublas>=11"' in out and "no part of the set is or provides cublas" in out, out)
    doc["packages"][0]["provides"] = ["cuda-driver-api", "cublas"]
    check("a provide without a version meets any version", verify(tmp, doc) == "ok",
          verify(tmp, doc))
    doc = copy.deepcopy(good)
    doc["packages"][1]["status"] = "experimental"
    out = verify(tmp, doc)
    check("an experimental part needs --allow-experimental",
          "libtorch-cuda 2.3.0+cu118) is experimental on gfx1200" in out and
          "--allow-experimental" in out, out)
    check("and passes with it", verify(tmp, doc, "--allow-experimental") == "ok")
    doc["packages"][1]["status"] = "unknown"
    out = verify(tmp, doc)
    check("a part of unknown status needs it too", "has no known status" in out, out)
    out = verify(tmp, good, "gfx1103")
    check("an experimental GPU target needs it",
          "gfx1103 is an experimental GPU target" in out and "--allow-experimental" in out, out)
    out = verify(tmp, good, "gfx1201")
    check("statuses recorded for another GPU say nothing about this one",
          "status on this machine's gfx1201 is not known" in out, out)
    check("unless the user consents", verify(tmp, good, "gfx1201", "--allow-experimental") ==
          "ok")
    for field, value, shown in (("url", "file:///etc/passwd", "url"),
                                ("url", "/srv/mirror/zluda.zip", "url"),
                                ("mirrors", ["https://a.example/z.zip", "ftp://b.example/z.zip"],
                                 "mirrors[1]"),
                                ("mirrors", ["file:///srv/z.zip"], "mirrors[0]")):
        doc = copy.deepcopy(good)
        doc["packages"][0][field] = value
        out = verify(tmp, doc, "--allow-experimental")
        bad = value if isinstance(value, str) else value[-1]
        check(f"{bad} is refused, naming the entry", out.startswith("refused:") and
              f"packages[0] (zluda 7-preview.10): {shown} \"{bad}\"" in out and
              "https://" in out, out)
    doc = copy.deepcopy(good)
    doc["packages"][0]["url"] = "HTTPS://Example.org/zluda.zip"
    check("a scheme in capitals is still https", verify(tmp, doc) == "ok", verify(tmp, doc))
    doc = copy.deepcopy(good)
    doc["version"] = 1
    for p in doc["packages"]:
        for key in ("requires", "provides", "status"):
            del p[key]
    out = verify(tmp, doc)
    check("a version 1 lockfile is read but not installed from",
          "version 1" in out and "re-create it with 'cfapkg lock'" in out, out)
    doc = copy.deepcopy(good)
    doc["packages"][0]["name"] = "zluda\u0000-evil"
    out = verify(tmp, doc)
    check("a NUL in a part's name is refused, naming the file and the field",
          out.startswith("refused:") and "test.lock: packages[0].name: holds a NUL" in out, out)
    doc = copy.deepcopy(good)
    del doc["packages"][1]["requires"]
    out = verify(tmp, doc)
    check("a version 2 part without requires is refused at the path",
          "packages[1].requires: missing" in out, out)


def main():
    with tempfile.TemporaryDirectory() as d:
        test_lockfile_checks(d)
        root = pathlib.Path(d) / "root"
        a = holder(root, 1000)
        check("first writer locks", a.stdout.readline().strip() == "locked")
        start = time.time()
        b = harness.run(TOOL, str(root), "500")
        check("second writer gives up", b.returncode == 3 and "lock" in b.stdout
              and "another cfapkg" in b.stdout and time.time() - start < 30, b.stdout)
        r = harness.run(BIN, "prefetch", "http://127.0.0.1:9/x", "--root", str(root),
                        env={"CFAPKG_LOCK_WAIT": "1"})
        check("cfapkg waits, then says who holds the root", r.returncode == 10
              and "Waiting for another cfapkg" in r.stderr and "lock" in r.stderr, r.stderr)
        c = holder(root, 20000)
        time.sleep(0.5)
        a.stdin.close()
        check("first writer releases", a.stdout.readline().strip() == "released")
        a.wait(timeout=30)
        check("a waiting writer gets the lock", c.stdout.readline().strip() == "locked")
        c.stdin.close()
        c.wait(timeout=30)
        if not harness.EMULATOR:  # see tests/WINE.md
            k = holder(root, 1000)
            k.stdout.readline()
            os.kill(k.pid, signal.SIGKILL)
            k.wait(timeout=10)
            e = holder(root, 5000)
            check("a killed holder frees the lock", e.stdout.readline().strip() == "locked")
            e.stdin.close()
            e.wait(timeout=30)
    return check.report()


if __name__ == "__main__":
    sys.exit(main())
