#!/usr/bin/env python3
"""Crash safety: cfapkg is killed (as by SIGKILL: CFAPKG_CRASH_AFTER=N makes
the Nth step of a change kill the process on the spot) at every step of an
update, an install into a second environment, a rollback, a pin, a gc and
the install of a set of archives (unpacked while they download, into one
store folder).  After each kill the environment is on the old or the new
generation, never between, verify passes, and the same command then
completes (under Wine at every third step: see STRIDE).  And a set's
install killed while its archives are being unpacked, as they arrive
from a slow server, completes when run again, nothing left behind."""
import hashlib
import json
import os
import pathlib
import shutil
import subprocess
import sys
import time

import channel
import harness

sys.path.insert(0, str(pathlib.Path(__file__).parent / "servers"))
from nginx import Nginx  # noqa: E402


BIN = sys.argv[1]
check = harness.Checks()
MAX_POINTS = 400
# Under Wine a run costs about twenty times as much, and the Windows build
# takes the same steps as the Linux one (the crash sweep, bench/
# crash_sweep.py, kills at every one of them on Linux): there every third
# step is killed, the first always.
STRIDE = 3 if harness.EMULATOR else 1
KILLED = (-9, 137)  # a signal on POSIX, TerminateProcess's code under Wine


def run(root, recipes, *args, crash=0):
    env = {"CFAPKG_ROOT": str(root), "CFAPKG_RECIPES": str(recipes)}
    if crash:
        env["CFAPKG_CRASH_AFTER"] = str(crash)
    return harness.run(BIN, *args, env=env)


def state(root, recipes, env):
    """(generation, set) as a reader sees it, or None when unreadable."""
    cur = root / "envs" / env / "current"
    if not cur.exists():
        return (0, {})
    gen = int(cur.read_text())
    if not (root / "envs" / env / str(gen) / "lock.json").is_file():
        return None
    r = run(root, recipes, "list", "--env", env, "--json")
    if r.returncode != 0:
        return None
    return (gen, {p["name"]: p["version"] for p in json.loads(r.stdout)["packages"]})


def leftovers(root):
    names = [p.name for p in root.rglob("*") if p.name.startswith((".new-", ".staging-"))
             or p.name.endswith(".tmp")]
    trash = root / "trash"
    return names + ([p.name for p in trash.iterdir()] if trash.exists() else [])


def copy_root(src, dst):
    """A root copied as cp -a copies it: a file with several names (a view's
    entry and the store's file) stays one file, which verify checks."""
    first = {}

    def copy(s, d):
        st = os.stat(s, follow_symlinks=False)
        key = (st.st_dev, st.st_ino)
        if st.st_nlink > 1 and key in first:
            os.link(first[key], d)
        else:
            shutil.copy2(s, d)
            first[key] = d
    shutil.copytree(src, dst, symlinks=True, copy_function=copy)


def crash_every_step(name, pristine, recipes, env, args, expect_after):
    """Runs args killed at step 1, 2, ... until a run completes."""
    work = pristine.parent / f"{name}-work"
    before = state(pristine, recipes, env)
    runs = bad = 0
    for n in range(1, MAX_POINTS, STRIDE):
        shutil.rmtree(work, ignore_errors=True)
        copy_root(pristine, work)
        r = run(work, recipes, *args, crash=n)
        if r.returncode == 0:
            break
        runs += 1
        if r.returncode not in KILLED:
            bad += 1
            print(f"{name}: step {n}: exit {r.returncode}: {r.stderr.strip()}")
            continue
        s = state(work, recipes, env)
        ok = s is not None and (s == before or s[1] == expect_after)
        ok = ok and run(work, recipes, "verify").returncode == 0
        again = run(work, recipes, *args)
        ok = ok and again.returncode == 0 and state(work, recipes, env)[1] == expect_after
        ok = ok and run(work, recipes, "verify").returncode == 0 and not leftovers(work)
        if not ok:
            bad += 1
            print(f"{name}: step {n}: state {s}, then {again.returncode} {again.stderr.strip()}"
                  f", leftovers {leftovers(work)}")
    shutil.rmtree(work, ignore_errors=True)
    print(f"{name}: killed at {runs} steps, {bad} bad")
    check(f"{name}: killed at each of {runs} steps, always old or new, verify passes, "
          "the rerun completes", runs > 0 and bad == 0, f"{bad} bad of {runs}")
    return runs


SET_PARTS = ("core", "blas", "sparse")


def write_set(www, recipes, url, lib_mib=1):
    """rock 7.10.0: three tar.gz archives of one prefix (as TheRock ships
    ROCm), each a library of lib_mib MiB of incompressible bytes and a few
    small files."""
    arts = []
    for part in SET_PARTS:
        files = {f"lib/lib{part}.so": os.urandom(lib_mib << 20)}
        files.update({f"share/{part}/k{j}.dat": f"{part} kernel {j}\n".encode() for j in range(4)})
        data = channel._targz(files, "rock")
        (www / f"rock-{part}.tar.gz").write_bytes(data)
        arts.append({"url": url(f"rock-{part}.tar.gz"), "sha256": hashlib.sha256(data).hexdigest(),
                     "size": len(data), "format": "tar.gz", "strip": 1})
    recipe = {"format": 1, "name": "rock", "summary": "a ROCm split in archives",
              "versions": [{"version": "7.10.0", "sources": {
                  "linux-x86_64": {"artifacts": arts}, "windows-x86_64": {"artifacts": arts}},
                  "runtime": {"path": ["lib"]}}]}
    (recipes / "rock.json").write_text(json.dumps(recipe, indent=1))


def part_files(root):
    return [p.name for p in (root / "downloads").glob("*.part")] if (root / "downloads").exists() \
        else []


def kill_while_unpacking(tmp, base, recipes, facts, want):
    """The install killed once the set's staging folder holds files, then
    run again."""
    work = tmp / "killed-set"
    copy_root(base, work)
    env = dict(os.environ, CFAPKG_ROOT=str(work), CFAPKG_RECIPES=str(recipes), CFAPKG_MIRRORS="")
    proc = subprocess.Popen([*harness.EMULATOR, BIN, "install", "rock", *facts], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline, staged = time.monotonic() + 60, False
    while time.monotonic() < deadline and proc.poll() is None and not staged:
        staged = any(any(d.rglob("*.so")) for d in (work / "store").glob(".staging-rock-*"))
        time.sleep(0.02)
    proc.kill()
    proc.wait(timeout=60)
    check("a set's install is killed while its archives are being unpacked", staged)
    again = run(work, recipes, "install", "rock", *facts)
    s = state(work, recipes, "default")
    check("run again, it completes: the set installed, verify passes, nothing left behind",
          again.returncode == 0 and s and s[1] == want and
          run(work, recipes, "verify").returncode == 0 and not leftovers(work) and
          not part_files(work), (again.stderr, s, leftovers(work), part_files(work)))


def crash_set(tmp, srv, base, recipes, facts):
    """A set of archives: killed at every step of its install, and while
    its archives stream in."""
    before = state(base, recipes, "default")[1]
    want = dict(before, rock="7.10.0")
    write_set(tmp / "www", recipes, srv.url)
    runs = crash_every_step("install a set of archives (unpacked as they arrive)", base,
                            recipes, "default", ["install", "rock", *facts], want)
    if harness.EMULATOR:
        return runs  # a kill at a moment of the test's choosing needs a native process
    # The unpack is told of a download's bytes a MiB at a time: with 1 MiB
    # archives the first word came with the last bytes, and the set was
    # committed a few milliseconds after anything showed in its staging
    # folder.  4 MiB at 1 MiB/s each leave about three seconds to see it.
    slow = Nginx(tmp / "www", tmp / "nginx-slow", extra="limit_rate 1m;")
    try:
        write_set(tmp / "www", recipes, slow.url, lib_mib=4)
        kill_while_unpacking(tmp, base, recipes, facts, want)
    finally:
        slow.stop()
    return runs


def main():
    total = 0
    with channel.served("cfapkg-crash-", headers=35, big=100_000) as (tmp, srv, recipes):
        base = tmp / "base"
        facts = [*channel.FACTS, "--yes"]
        r = run(base, recipes, "install", "pytorch-cuda-stack", "zluda==6-preview.69", *facts)
        check("setup install", r.returncode == 0, r.stderr)
        run(base, recipes, "install", "zluda", *facts)
        six = state(base, recipes, "default")[1]
        seven = dict(six, zluda="7-preview.10")
        total += crash_every_step("update (download, unpack, new generation)", base, recipes,
                                  "default", ["update", "zluda", *facts], seven)
        run(base, recipes, "env", "create", "b")
        total += crash_every_step("install into a second environment", base, recipes, "b",
                                  ["install", "--env", "b", "pytorch-cuda-stack", *facts],
                                  dict(seven, zluda="7-preview.10"))
        updated = tmp / "updated"
        copy_root(base, updated)
        run(updated, recipes, "update", "zluda", *facts)
        total += crash_every_step("rollback", updated, recipes, "default", ["rollback"], six)
        total += crash_every_step("pin", updated, recipes, "default",
                                  ["pin", "zluda==7-preview.10"], seven)
        total += crash_every_step("gc --keep 1", updated, recipes, "default",
                                  ["gc", "--keep", "1"], seven)
        run(updated, recipes, "rollback", *facts[-1:])
        total += crash_every_step("gc after a rollback", updated, recipes, "default",
                                  ["gc", "--keep", "1"], six)
        total += crash_set(tmp, srv, base, recipes, facts)
        check(f"at least {100 // STRIDE} killed runs in all ({total})", total >= 100 // STRIDE)
    return check.report()


if __name__ == "__main__":
    sys.exit(main())
