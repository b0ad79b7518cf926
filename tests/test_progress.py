#!/usr/bin/env python3
"""Download progress as a person sees it, against servers/faultserver.py's
slow downloads on 127.0.0.1: on a pseudo-terminal of 50 and of 120
columns (no line wider than the terminal, the bars gone and one line per
download plus a summary left once it is done, as a terminal emulator
below shows the screen), through a pipe (plain lines while the download
runs, not only at its end), two prefetch URLs told apart, and Ctrl-C
(SIGINT) during a download: exit 130, the .part kept and named, and the
next run resuming it."""
import os
import pathlib
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import harness

BIN = sys.argv[1]
check = harness.Checks()
ESC = re.compile(rb"\x1b\[(\d*)([A-Za-z])")


class Faults:
    def __init__(self):
        self.proc = subprocess.Popen([sys.executable, str(pathlib.Path(__file__).parent /
                                      "servers" / "faultserver.py"), "--lifetime", "300"],
                                     stdout=subprocess.PIPE, text=True)
        self.port = int(self.proc.stdout.readline())
        self.n = 0

    def slow(self, size):
        """A URL that trickles (about 320 KiB/s) the first time it is asked for."""
        self.n += 1
        return f"http://127.0.0.1:{self.port}/slowonce/k{os.getpid()}-{self.n}/{size}"

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=10)


def screen(data, cols):
    """What a terminal of cols columns shows after data: \\r, \\n, cursor
    up (A), clear to the end of the screen (J) and of the line (K), and
    the lines each escape-free piece wrote, with their widths."""
    lines, row, col, widest = [""], 0, 0, 0
    pos = 0
    while pos < len(data):
        m = ESC.match(data, pos)
        if m:
            n, op = int(m.group(1) or 1), m.group(2)
            if op == b"A":
                row = max(0, row - n)
            elif op == b"J":
                del lines[row + 1:]
                lines[row] = lines[row][:col]
            elif op == b"K":
                lines[row] = lines[row][:col] if m.group(1) != b"2" else ""
            pos = m.end()
            continue
        ch = data[pos:pos + 1]
        pos += 1
        if ch == b"\r":
            col = 0
        elif ch == b"\n":
            row, col = row + 1, 0
            while len(lines) <= row:
                lines.append("")
        else:
            line = lines[row].ljust(col)
            lines[row] = line[:col] + ch.decode("latin-1") + line[col + 1:]
            col += 1
            widest = max(widest, col)
    return [ln.rstrip() for ln in lines], widest


def test_terminal(f, tmp):
    for cols in (50, 120):
        env = dict(os.environ, CFAPKG_ROOT=str(tmp / f"pty{cols}"), TERM="xterm")
        env.pop("COLUMNS", None)
        urls = [f.slow(700_000), f.slow(300_000)]
        rc, out = harness.on_pty(BIN, ["prefetch", *urls], env, cols)
        shown, widest = screen(out, cols)
        lines = []
        for ln in (x for x in shown if x):  # a line continued at 50 columns is indented
            if ln.startswith("    ") and lines:
                lines[-1] += " " + ln.strip()
            else:
                lines.append(ln)
        shown = lines
        check(f"{cols} columns: the download worked", rc == 0, out[-400:])
        check(f"{cols} columns: no line wider than the terminal", widest < cols,
              (widest, out[-600:]))
        check(f"{cols} columns: bars were drawn (percent, bytes)",
              b"%" in out and b"KiB" in out, out[:300])
        done = [ln for ln in shown if ", done in" in ln]
        check(f"{cols} columns: a line per finished download, the summary last, no bar left",
              len(done) == 2 and shown[-1].startswith("Downloaded 2 files,") and
              not any("%" in ln or "[#" in ln for ln in shown), shown)


def test_pipe(f, tmp):
    """Standard error a pipe (CI, | tee): plain lines while it runs."""
    env = dict(os.environ, CFAPKG_ROOT=str(tmp / "pipe"), CFAPKG_PROGRESS_INTERVAL="1")
    p = subprocess.Popen([*harness.EMULATOR, BIN, "prefetch", f.slow(1_000_000)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    early = []
    start = time.monotonic()
    for raw in iter(p.stderr.readline, b""):
        early.append((time.monotonic() - start, raw.decode(errors="replace").rstrip()))
        if time.monotonic() - start > harness.TIMEOUT:
            break
    p.wait(timeout=harness.TIMEOUT)
    end = time.monotonic() - start
    progress = [(t, ln) for t, ln in early if re.search(r": .* of .*\(\d+%\)", ln)]
    check("through a pipe: progress lines while the download runs",
          progress and progress[0][0] < end - 0.5, (end, early))
    check("through a pipe: no escape sequence",
          not any("\x1b" in ln for _, ln in early), early)
    check("through a pipe: the summary at the end",
          early and early[-1][1].startswith("Downloaded 1 file,"), early)


def test_labels(f, tmp):
    a, b = f.slow(4000), f"http://127.0.0.1:{f.port}/ok/4000"
    r = harness.run(BIN, "prefetch", a, b, "--root", str(tmp / "labels"))
    labels = [ln.split("  ")[2] for ln in r.stdout.splitlines() if ln.count("  ") >= 2]
    check("two prefetch URLs are told apart", r.returncode == 0 and
          labels == ["4000", "4000 (2)"], r.stdout + r.stderr)


def test_interrupt(f, tmp):
    """Ctrl-C during a download: exit 130, what is kept said, the .part
    there; the next run resumes it."""
    if harness.EMULATOR:
        return  # a signal to Wine's process is not a console Ctrl-C
    root = tmp / "sigint"
    url = f.slow(3_000_000)
    p = subprocess.Popen([BIN, "prefetch", url, "--root", str(root)], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    parts = []
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not parts:
        parts = [x for x in (root / "downloads").glob("*.part")
                 if x.stat().st_size > 100_000] if (root / "downloads").exists() else []
        time.sleep(0.05)
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=60)
    kept = list((root / "downloads").glob("*.part"))
    check("Ctrl-C: exit 130", p.returncode == 130, (p.returncode, err))
    check("Ctrl-C: says what was kept for a resume, and where",
          "interrupted" in err and "kept for a resume:" in err and str(root / "downloads") in err
          and "run the same command again" in err, err)
    check("Ctrl-C: the .part is there with what came", kept and kept[0].stat().st_size > 0,
          kept)
    r = harness.run(BIN, "prefetch", url, "--root", str(root))
    check("the next run resumes it", r.returncode == 0 and "resumed" in r.stdout,
          r.stdout + r.stderr)


def main():
    f = Faults()
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="cfapkg-progress-"))
    try:
        if not harness.EMULATOR:
            test_terminal(f, tmp)
        test_pipe(f, tmp)
        test_labels(f, tmp)
        test_interrupt(f, tmp)
    finally:
        f.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    return check.report()


if __name__ == "__main__":
    sys.exit(main())
