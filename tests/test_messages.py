#!/usr/bin/env python3
"""Messages that must read right: an unsolvable plan leads with its fix
(the RX 6700 XT + HIP SDK 5.7.1 request of the ComfyUI-Zluda guide), and
the fix it names plans; a plan and a doctor for another OS than this
machine's say so instead of reporting missing parts; cache info shows the
store; verify points at repair; rollback forward does not say "back", and
one to the current generation says there is nothing to do;
the file 'cfapkg report' writes is read by --facts.  The recipes shipped
with cfapkg (plans only) and a test channel on 127.0.0.1 (tests/channel.py)
for the rest."""
import json
import os
import re
import shlex
import subprocess
import sys

import channel
import harness

BIN, SYSROOTS = sys.argv[1], sys.argv[2]
check = harness.Checks()
WINE = bool(harness.EMULATOR)
HOST = "windows" if WINE else "linux"
OTHER = "linux" if WINE else "windows"


def run(*args, env=None):
    return harness.run(BIN, *args, env=env)


def doc_of(r):
    try:
        return json.loads(r.stdout)
    except ValueError:
        return {}


def test_fix_first():
    r = run("plan", "zlude", "--gpu", "gfx1200")
    check("a misspelt name gets no made-up fix", r.returncode == 4 and
          "To fix it" not in r.stderr, r.stderr)
    asked = ["plan", "pytorch-cuda-stack", "--os", "windows", "--gpu", "RX 6700 XT",
             "--hip-sdk", "5.7.1"]
    r = run(*asked)
    lines = r.stderr.splitlines()
    check("the RX 6700 XT request is unsolvable", r.returncode == 3, r.stderr)
    check("the fix comes first: install the SDK the overlay is built for, allow experimental",
          len(lines) > 3 and lines[0].startswith("cfapkg: error: cannot plan") and
          lines[1].startswith("To fix it, install hip-sdk 6.2.4") and
          "allow experimental parts" in lines[1], lines[:4])
    command = lines[2].strip() if len(lines) > 2 else ""
    check("then the command to run, the request's flags kept",
          command.startswith("cfapkg plan pytorch-cuda-stack") and '"RX 6700 XT"' in command and
          "--hip-sdk 6.2.4" in command and "--allow-experimental" in command, command)
    again = shlex.split(command)[1:] if command.startswith("cfapkg ") else []
    r2 = run(*again) if again else None
    check("and that command plans (6: a part's download is not pinned yet)",
          r2 is not None and r2.returncode in (0, 6) and "Plan for gfx1031" in r2.stdout,
          (again, r2.stdout[-400:] if r2 else "", r2.stderr[-400:] if r2 else ""))
    r = run(*asked, "--json")
    fix = doc_of(r).get("fix") or {}
    check("plan --json carries the fix", fix.get("allow_experimental") is True and
          {"fact": "hip-sdk", "value": "6.2.4"}.items() <= (fix.get("steps") or [{}])[0].items(),
          fix)


def test_fix_command_quoting(tmp):
    """The fix's command reads back in a shell as it was given: a folder
    whose name holds $ and a quote is escaped inside its double quotes.
    POSIX shells only: the Windows build's command is for its own shells."""
    if WINE:
        return
    odd = tmp / 'my $HOME "recipes"'
    odd.mkdir()
    r = run("plan", "pytorch-cuda-stack", "--os", "windows", "--gpu", "RX 6700 XT",
            "--hip-sdk", "5.7.1", "--recipes", str(odd))
    lines = r.stderr.splitlines()
    command = lines[2].strip() if len(lines) > 2 else ""
    # A real shell reads it back: Python's shlex keeps the backslash before a $.
    words = subprocess.run(["sh", "-c", "printf '%s\\n' " + command], capture_output=True,
                           text=True, timeout=30).stdout.splitlines() if command else []
    check("the fix's command keeps an odd folder name whole",
          str(odd) in words and "--allow-experimental" in words, command)


def test_other_os_plan():
    """The sysroot is a Linux machine, whatever runs cfapkg."""
    env = {"CFAPKG_SYSROOT": os.path.join(SYSROOTS, "rx9060xt")}
    r = run("plan", "pytorch-cuda-stack", "--os", "windows", env=env)
    check("a plan for windows on a linux machine says so",
          "Planning for windows on this linux machine" in r.stderr and "not checked" in r.stderr,
          r.stderr)
    check("and does not report this machine's driver or ROCm as windows's",
          r.returncode in (0, 6) and "the driver is 6.12.12" not in r.stderr and
          "note: not checked, not known: installed HIP SDKs" in r.stdout, r.stdout + r.stderr)


def test_report_facts(tmp):
    report = tmp / "report.json"
    r = run("report", "-o", str(report), env={"CFAPKG_SYSROOT": os.path.join(SYSROOTS,
                                                                             "rx9060xt")})
    check("report writes a file", r.returncode == 0 and report.exists(), r.stderr)
    r = run("plan", "pytorch-cuda-stack", "--facts", str(report), "--json")
    doc = doc_of(r)
    check("--facts takes a report: that machine's GPU, OS and facts, all known",
          r.returncode in (0, 6) and doc.get("gpu", {}).get("gfx") == "gfx1200" and
          doc.get("os") == "linux" and doc.get("unchecked") == [], r.stdout[-400:] + r.stderr)
    check("the report's ROCm is taken as installed",
          any(p["name"] == "rocm" and p["version"] == "6.4.2" and p["kind"] == "system"
              for p in doc.get("packages", [])), doc.get("packages"))
    data = json.loads(report.read_text())
    # A damaged selection (past any GPU, past any integer) names no GPU;
    # the sanitizer build aborts on the undefined cast it once was.
    report.write_text(json.dumps({**data, "selected": 1e30}))
    r = run("plan", "zluda", "--facts", str(report), "--json")
    check("a report selecting no GPU it lists is asked for a GPU",
          r.returncode == 2 and "no GPU target to plan for" in r.stderr, r.stdout[-400:] + r.stderr)
    data["report_format"] = 2
    report.write_text(json.dumps(data))
    r = run("plan", "zluda", "--facts", str(report))
    check("a report of a newer format is refused, naming the file", r.returncode == 2 and
          str(report) in r.stderr and "report_format" in r.stderr, r.stderr)


def test_other_os_doctor(root):
    root.run("env", "create", "elsewhere")
    r = root.run("install", "--env", "elsewhere", "zluda==6-preview.69", "--os", OTHER,
                 *channel.FACTS, "--yes")
    check(f"an environment for {OTHER}", r.returncode == 0, r.stderr)
    r = root.run("doctor", "--env", "elsewhere", "--json", "--timeout", "30")
    doc = doc_of(r)
    rows = {c["check"]: c for c in doc.get("static", [])}
    check(f"doctor of a {OTHER} environment on {HOST}: exit 6, nothing reported missing",
          r.returncode == 6 and doc.get("checked_here") is False and doc.get("probes") == [] and
          not [c for c in rows.values() if c["status"] == "MISSING"], (r.returncode, rows))
    check("its own files are checked; the machine's parts are left to that OS",
          rows.get("zluda 6-preview.69", {}).get("status") == "OK" and
          rows.get("ROCm in use", {}).get("status") == "NOT CHECKED" and
          "GPU" not in rows, rows)
    r = root.run("doctor", "--env", "elsewhere", "--timeout", "30")
    check("and says so in words", f"This environment is for {OTHER} and this machine runs "
          f"{HOST}" in r.stdout and "Nothing was marked" in r.stdout, r.stdout)


def test_store_verify_rollback(root):
    r = root.run("cache", "info", "--json")
    store = doc_of(r).get("store", {})
    check("cache info --json counts the store", r.returncode == 0 and
          store.get("folders", 0) >= 2 and store.get("bytes", 0) > 1_000_000, store)
    r = root.run("cache", "info")
    check("cache info shows the store", re.search(r"store \(.*\): \d+ unpacked packages",
                                                  r.stdout), r.stdout)
    lib = root.view("default", "libtorch-cuda") / "lib"
    victim = sorted(p for p in lib.iterdir() if p.is_file())[0]
    fresh = victim.with_name(victim.name + ".new")
    fresh.write_bytes(b"not the store's\n")
    os.replace(fresh, victim)
    r = root.run("verify")
    check("a failing verify points at repair", r.returncode == 9 and
          "cfapkg repair" in r.stderr, r.stderr)
    r = root.run("verify", "--env", "default")
    check("naming the environment", "'cfapkg repair --env default'" in r.stderr, r.stderr)
    r = root.run("repair", "--yes")
    check("and repair does put it back", r.returncode == 0 and
          root.run("verify").returncode == 0, r.stdout + r.stderr)
    now = root.current()
    r = root.run("rollback", "--to", "1")
    r = root.run("rollback", "--to", str(now))
    check("rollback --to a later generation does not say 'back'",
          r.returncode == 0 and "is back at" not in r.stdout and
          f"is now at the later generation {now} (was 1)" in r.stdout, r.stdout + r.stderr)
    log = root.path / "envs" / "default" / "switches.log"
    lines = log.read_text().count("\n")
    r = root.run("rollback", "--to", str(now))
    check("rollback --to the current generation says there is nothing to do and records "
          "no switch", r.returncode == 0 and
          f'"default" is already at generation {now}; nothing to do' in r.stdout and
          "later" not in r.stdout and root.current() == now and
          log.read_text().count("\n") == lines, r.stdout + r.stderr)


def main():
    test_fix_first()
    test_other_os_plan()
    with channel.served("cfapkg-messages-") as (tmp, srv, recipes):
        test_report_facts(tmp)
        test_fix_command_quoting(tmp)
        root = channel.Root(BIN, tmp / "root", recipes)
        r = root.change("install", "pytorch-cuda-stack", "zluda==6-preview.69")
        if r.returncode != 0:
            print(f"FAIL setup: install: {r.stdout}{r.stderr}")
            return 1
        test_store_verify_rollback(root)
        test_other_os_doctor(root)
    return check.report()


if __name__ == "__main__":
    sys.exit(main())
