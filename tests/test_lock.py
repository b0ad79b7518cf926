#!/usr/bin/env python3
"""One writer at a time per root (flock on Linux, LockFileEx on Windows):
a second writer waits and then gives up with a message naming the lock, a
waiting writer gets the lock when the first lets go, and a killed holder
frees it."""
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


def main():
    with tempfile.TemporaryDirectory() as d:
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
