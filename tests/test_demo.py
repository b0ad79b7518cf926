#!/usr/bin/env python3
"""scripts/demo, the README's first command, run against this build's
cfapkg: the reference stack installs from the demo channel, both
environments list their ZLUDA, history, rollback and verify say what a user
expects; only 127.0.0.1 is used (in a network namespace of its own where
the machine allows one); nothing is left in the temporary folder unless
asked; a failing step fails the demo."""
import json
import os
import pathlib
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

import harness

BIN = os.path.abspath(sys.argv[1])
DEMO = pathlib.Path(__file__).resolve().parent.parent / "scripts" / "demo"
# Each cfapkg start under Wine takes a second or more.
TIMEOUT = 600 if harness.EMULATOR else 120
check = harness.Checks()


def wrapper(folder, fail_on=None):
    """A cfapkg for the demo to run: this build's, through the emulator when
    there is one; fail_on makes that command fail as a broken step would."""
    path = pathlib.Path(folder) / ("cfapkg-failing" if fail_on else "cfapkg")
    lines = ["#!/bin/sh"]
    if fail_on:
        lines.append(f'[ "$1" = {fail_on} ] && {{ echo "{fail_on} broke" >&2; exit 5; }}')
    if harness.EMULATOR:
        # Wine keeps files of its own in TMPDIR: not the demo's to remove.
        tmpdir = os.environ.get("TMPDIR", "/tmp")
        lines.append(f"TMPDIR={shlex.quote(tmpdir)}; export TMPDIR")
    cmd = " ".join(shlex.quote(a) for a in [*harness.EMULATOR, BIN]) + ' "$@"'
    if not harness.EMULATOR:
        lines.append("exec " + cmd)
    else:
        # A start Wine failed (status 1, no output at all) is made once
        # more, as tests/harness.py does (tests/WINE.md).
        lines += ['out=$(mktemp) err=$(mktemp)',
                  f'{cmd} >"$out" 2>"$err"; rc=$?',
                  'if [ $rc = 1 ] && [ ! -s "$out" ] && [ ! -s "$err" ]; then',
                  f'  {cmd} >"$out" 2>"$err"; rc=$?',
                  'fi',
                  'cat "$out"; cat "$err" >&2; rm -f "$out" "$err"; exit $rc']
    path.write_text("\n".join(lines) + "\n")
    path.chmod(0o755)
    return str(path)


def isolated():
    """A command prefix giving the demo a network of its own with only the
    loopback interface, when unprivileged namespaces are allowed here (not
    under Wine, whose server the other tests share)."""
    if harness.EMULATOR or not (shutil.which("unshare") and shutil.which("ip")):
        return None
    probe = subprocess.run(["unshare", "-rn", "sh", "-c", "ip link set lo up"],
                           capture_output=True)
    if probe.returncode != 0:
        return None
    return ["unshare", "-rn", "sh", "-c", 'ip link set lo up && exec "$0"']


def demo(tmp, cfapkg, prefix=None, keep=False):
    env = dict(os.environ, CFAPKG=cfapkg, TMPDIR=str(tmp))
    env.pop("CFAPKG_DEMO_KEEP", None)
    if keep:
        env["CFAPKG_DEMO_KEEP"] = "1"
    # One stream, in the order a terminal shows it.
    return subprocess.run([*(prefix or []), str(DEMO)], stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, timeout=TIMEOUT, env=env)


def steps(out):
    """The demo's output as (command, output) pairs, in order."""
    found, cmd, lines = [], None, []
    for line in out.splitlines():
        if line.startswith("$ cfapkg "):
            if cmd:
                found.append((cmd, "\n".join(lines)))
            cmd, lines = line[len("$ cfapkg "):], []
        elif cmd:
            lines.append(line)
    if cmd:
        found.append((cmd, "\n".join(lines)))
    return found


def zluda(listing):
    m = re.search(r"^zluda\s+(\S+)", listing, re.M)
    return m.group(1) if m else None


def test_run(tmp, cfapkg):
    prefix = isolated()
    if not prefix:
        print("note: no network namespace here (or under the emulator); "
              "the addresses are checked in the output and the recipes only")
    r = demo(tmp, cfapkg, prefix)
    out = r.stdout
    check("the demo succeeds", r.returncode == 0 and "demo: done" in r.stdout, out[-3000:])
    got = steps(r.stdout)
    cmds = [c for c, _ in got]
    want = ["channel keygen", "channel build", "channel add demo http://127.0.0.1:",
            "install pytorch-cuda-stack", "env create preview",
            "pin --env preview zluda==7-preview.10", "install --env preview pytorch-cuda-stack",
            "list", "list --env preview", "install zluda==7-preview.10", "history", "rollback",
            "list", "verify"]
    check("each step is echoed as a user would type it",
          len(cmds) == len(want) and all(c.startswith(w) for c, w in zip(cmds, want)), cmds)
    by = {}
    for c, o in got:
        by.setdefault(c, []).append(o)
    install = by.get("install pytorch-cuda-stack --os windows --gpu gfx1200 --hip-sdk 6.4.2 --yes",
                     [""])[0]
    check("the stack installs for the reference machine",
          'Environment "default" is now at generation 1 (was 0)' in install and
          re.search(r"zluda\s+6-preview\.69\s+package\s+validated", install), install)
    preview = by.get("install --env preview pytorch-cuda-stack --os windows --gpu gfx1200 "
                     "--hip-sdk 6.4.2 --yes", [""])[0]
    check("the preview environment installs with ZLUDA 7-preview.10",
          'Environment "preview" is now at generation 1 (was 0)' in preview and
          "+zluda 7-preview.10" in preview, preview)
    check("and shares LibTorch: it is unpacked once",
          out.count("Unpacked libtorch-cuda") == 1 and "Unpacked libtorch-cuda" not in preview,
          out[-3000:])
    lists = by.get("list", [])
    check("the default environment lists ZLUDA 6-preview.69",
          len(lists) == 2 and zluda(lists[0]) == "6-preview.69", lists)
    preview_list = by.get("list --env preview", [""])[0]
    check("the preview environment lists ZLUDA 7-preview.10",
          zluda(preview_list) == "7-preview.10", preview_list)
    change = by.get("install zluda==7-preview.10 --yes", [""])[0]
    check("a later change needs no facts: the environment remembers them",
          "Using the facts generation 1 was planned with: gfx1200 on windows-x86_64" in change and
          "zluda 6-preview.69 -> 7-preview.10" in change, change)
    history = by.get("history", [""])[0]
    check("history shows both generations, the second current",
          re.search(r"^\s+1 \S+\s+install pytorch-cuda-stack", history, re.M) and
          re.search(r"^\*\s+2 \S+\s+install zluda==7-preview\.10", history, re.M), history)
    check("rollback goes back to generation 1",
          'Environment "default" is back at generation 1 (was 2)' in by.get("rollback", [""])[0],
          by.get("rollback"))
    check("and the default environment has ZLUDA 6-preview.69 again",
          len(lists) == 2 and zluda(lists[1]) == "6-preview.69", lists)
    check("verify finds every file intact",
          re.search(r"Verified \d+ installed files: all match their manifests",
                    by.get("verify", [""])[0]), by.get("verify"))
    hosts = set(re.findall(r"\b(?:https?|ftp)://([^/:\s]+)", out))
    check("no address but 127.0.0.1 appears", hosts == {"127.0.0.1"}, hosts)
    check("nothing is left in the temporary folder", not any(tmp.iterdir()),
          list(tmp.iterdir()))


def test_keep(tmp, cfapkg):
    r = demo(tmp, cfapkg, keep=True)
    m = re.search(r"demo: kept in (\S+) \(its data root: (\S+)\)", r.stdout)
    check("asked to, the demo keeps its folder and says where",
          r.returncode == 0 and m and pathlib.Path(m.group(2)).is_dir(), r.stdout[-800:])
    if not m:
        return
    kept = pathlib.Path(m.group(1))
    index = json.loads((kept / "www" / "channel" / "index.json").read_text())
    urls = [s["url"] for doc in index["recipes"].values() for v in doc["versions"]
            for s in (v.get("sources") or {}).values() if "sha256" in s]
    check("every download of the demo channel is a stand-in on 127.0.0.1",
          len(urls) >= 3 and all(u.startswith("http://127.0.0.1:") for u in urls), urls)
    log = (kept / "nginx" / "logs" / "access.log").read_text().splitlines()
    fetched = [line.split('"')[1].split()[1] for line in log if '"GET ' in line]
    check("the stand-ins were downloaded from the demo's server",
          {"/zluda-windows-87531d3.zip", "/zluda-windows-9c8b43f.zip",
           "/libtorch-win-shared-with-deps-2.3.0%2Bcu118.zip"} <= set(fetched), fetched)
    shutil.rmtree(kept)


def test_failing_step(tmp):
    r = demo(tmp, wrapper(tmp.parent, fail_on="verify"))
    check("a failing step fails the demo",
          r.returncode != 0 and "verify broke" in r.stdout and "demo: done" not in r.stdout,
          (r.returncode, r.stdout[-500:]))
    check("and still leaves nothing behind", not any(tmp.iterdir()), list(tmp.iterdir()))


def main():
    base = pathlib.Path(tempfile.mkdtemp(prefix="cfapkg-test-demo-"))
    try:
        tmp = base / "tmp"
        tmp.mkdir()
        cfapkg = wrapper(base)
        test_run(tmp, cfapkg)
        test_keep(tmp, cfapkg)
        test_failing_step(tmp)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    return check.report()


if __name__ == "__main__":
    sys.exit(main())
