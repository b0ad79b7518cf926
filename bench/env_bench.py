#!/usr/bin/env python3
"""Environment benchmark: with a 1 GiB LibTorch-shaped package installed,
how long rollback and a no-op install take as whole processes, side by
side in rotated order with 'true' and 'curl --version' (what starting a
process and loading a network stack cost here) and nix-env's rollback in
a single-user store in a temporary folder (Debian's nix-bin); and what a
second environment with the same packages costs in time and disk.  Goals
(medians): rollback and no-op install <= 10 ms and <= 2x true, also in an
environment with a long history (100 generations), rollback >= 3x faster
than nix-env --switch-generation.  Beside them, not judged, the same
rollback in a root on a tmpfs: the difference is the disk flushes that
make a switch survive a power cut; the flush alone, as coreutils' sync of
the environment's folder; and what 'cfapkg run' adds to the start of the
program it launches.

usage: env_bench.py CFAPKG [ARCHIVE_CONTENT_MIB] [--before OLDER_CFAPKG] [--short]

--before: an older build makes a second environment too, in each round
(rotated order), to compare the two.
--short: a small package, 20 generations of history and 3 rounds: every
step runs and prints, as a check that the benchmark still works.
"""
import json
import os
import pathlib
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests" / "servers"))
sys.path.insert(0, str(HERE.parent / "tests"))
import channel  # noqa: E402
from nginx import Nginx  # noqa: E402
import plan_bench  # noqa: E402  (the same timer for whole processes)

# Rounds of the whole-process contenders.  Where 'true' takes under a
# millisecond, two runs of one build at 15 rounds judged ratios that were
# up to 0.23 apart; 61 rounds cost a few seconds more.
RUNS = 61
# A folder's fsync in a process of its own: what the disk alone adds to
# the one flush a switch ends with.  Back to back it can take a tenth of
# what it takes after a few milliseconds' pause, as between the rounds'
# runs, so it is timed in the same rounds.
FLUSH = "sync ENVDIR (a folder's flush)"
COLD_RUNS = 3
SECOND_RUNS = 7
# Generations in the long-history environment: a user who updates a ZLUDA
# preview now and then for a year or two.
HISTORY = 100


def timed(argv, env=None):
    """Wall seconds of one run, timed as plan_bench times its runs."""
    return plan_bench.timed(argv, env)[0]


def disk_kib(path):
    """Blocks in use under path, each hard-linked file counted once."""
    out = subprocess.run(["du", "-sk", str(path)], capture_output=True, text=True, check=True)
    return int(out.stdout.split()[0])


def write_channel(tmp, srv, content_mib):
    _, recipes = channel.write(tmp, srv.url, headers=10, big=1000)
    big = tmp / "www" / "libtorch-big.zip"
    subprocess.run([sys.executable, str(HERE / "gen_libtorch_like.py"), str(big),
                    str(content_mib)], check=True, capture_output=True)
    import hashlib
    h = hashlib.sha256()
    with open(big, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    src = {"url": srv.url(big.name), "sha256": h.hexdigest(), "size": big.stat().st_size,
           "format": "zip", "strip": 1}
    recipe = json.loads((recipes / "libtorch-cuda.json").read_text())
    recipe["versions"][0]["sources"] = {"windows-x86_64": src, "linux-x86_64": src}
    recipe["versions"][0]["runtime"] = {"path": ["lib"]}
    (recipes / "libtorch-cuda.json").write_text(json.dumps(recipe))
    return recipes, big.stat().st_size


def nix_profile(tmp):
    """A nix-env profile with two generations, and the environment to run
    nix-env in; (None, why) when nix-env is missing or fails."""
    nix_env = shutil.which("nix-env")
    if not nix_env:
        return None, "nix-env not installed (Debian package nix-bin)"
    d = tmp / "nix"
    env = dict(os.environ, NIX_STORE_DIR=str(d / "store"), NIX_STATE_DIR=str(d / "var"),
               NIX_LOG_DIR=str(d / "log"), NIX_CONF_DIR=str(d / "etc"))
    (d / "etc").mkdir(parents=True)
    (d / "etc" / "nix.conf").write_text("build-users-group =\nsandbox = false\n")
    paths = []
    for name in ("a", "b"):
        (d / name).mkdir()
        (d / name / "f").write_text(name)
        r = subprocess.run(["nix-store", "--add", str(d / name)], env=env, capture_output=True,
                           text=True)
        if r.returncode != 0:
            return None, f"nix-store --add failed: {r.stderr.strip()}"
        paths.append(r.stdout.strip())
    profile = str(d / "profile")
    for p in paths:
        subprocess.run([nix_env, "-p", profile, "--set", p], env=env, check=True,
                       capture_output=True)
    return (nix_env, profile, env), "nix-env --switch-generation, single-user store"


ZLUDAS = ("zluda==6-preview.69", "zluda==7-preview.10")


def long_history(cfapkg, env, n):
    """Environment 'history' with n generations, ZLUDA moved between two
    versions in each (their prefixes are in the store already): generation
    i holds ZLUDAS[(i - 1) % 2]."""
    timed([cfapkg, "env", "create", "history", "--quiet"], env)
    for i in range(n):
        timed([cfapkg, "install", "--env", "history", ZLUDAS[i % 2], *channel.FACTS, "--yes",
               "--quiet"], env)
    made = env_current(env, "history")
    if made != n:
        sys.exit(f"the long history has {made} generations, not {n}")


def env_current(env, name):
    return int((pathlib.Path(env["CFAPKG_ROOT"]) / "envs" / name / "current").read_text())


def history_noop(cfapkg, env):
    """A no-op install in 'history': it asks for what the current generation holds."""
    gen = env_current(env, "history")
    return [cfapkg, "install", "--env", "history", ZLUDAS[(gen - 1) % 2], *channel.FACTS,
            "--yes", "--quiet"]


def history_rollback(cfapkg, env, n):
    """A plain rollback in 'history', as a user types it (it finds its own
    target), from the newest generation: one put back there first, untimed."""
    if env_current(env, "history") != n:
        timed([cfapkg, "rollback", "--quiet", "--env", "history", "--to", str(n)], env)
    return timed([cfapkg, "rollback", "--quiet", "--env", "history"], env)


def memory_root(cfapkg, env):
    """A second root on a tmpfs, with two generations of ZLUDA: its rollback
    does the same work as the disk root's with no flush to a disk, so the
    difference is what the switch's fsync calls cost there.  (None, why)
    where the machine has no tmpfs at /dev/shm."""
    try:
        with open("/proc/mounts") as f:
            tmpfs = any(line.split()[1:3] == ["/dev/shm", "tmpfs"] for line in f)
    except OSError:
        tmpfs = False
    if not tmpfs:
        return None, "no tmpfs at /dev/shm"
    root = pathlib.Path(tempfile.mkdtemp(prefix="cfapkg-envbench-", dir="/dev/shm"))
    menv = dict(env, CFAPKG_ROOT=str(root))
    for zluda in ZLUDAS:
        timed([cfapkg, "install", zluda, *channel.FACTS, "--yes", "--quiet"], menv)
    return (root, menv), "a root on /dev/shm (tmpfs)"


def side_by_side(contenders, rounds):
    """Runs each contender once per round, the order rotated each round;
    every time in ms, by name."""
    times = {name: [] for name, _ in contenders}
    for r in range(rounds):
        k = r % len(contenders)
        for i, (name, run) in enumerate(contenders[k:] + contenders[:k]):
            times[name].append(run(r) * 1000)
    return times


def report(times, goal_ms):
    med = {n: statistics.median(v) for n, v in times.items()}
    for name, v in times.items():
        goal = ""
        if name in goal_ms:
            goal = f"  (goal <= {goal_ms[name]} ms: {'met' if med[name] <= goal_ms[name] else 'NOT met'})"
        print(f"  {name:<40} median {med[name]:6.2f} ms{goal}")
        print(f"  {'':<40} runs: {' '.join(f'{x:.2f}' for x in v)}")
    return med


def main():
    args = sys.argv[1:]
    before_bin = None
    if "--before" in args:
        k = args.index("--before")
        before_bin = os.path.abspath(args[k + 1])
        del args[k:k + 2]
    short = "--short" in args
    if short:
        args.remove("--short")
    rounds, colds_n, seconds_n, history = (3, 1, 2, 20) if short else (
        RUNS, COLD_RUNS, SECOND_RUNS, HISTORY)
    cfapkg = os.path.abspath(args[0])
    content = int(args[1]) if len(args) > 1 else (5 if short else 1800)
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="cfapkg-envbench-"))
    srv = Nginx(tmp / "www", tmp / "nginx")
    memory, memory_how = None, "not made"
    try:
        recipes, size = write_channel(tmp, srv, content)
        root = tmp / "root"
        env = dict(os.environ, CFAPKG_ROOT=str(root), CFAPKG_RECIPES=str(recipes))
        base = [cfapkg, "install", "pytorch-cuda-stack", "zluda==6-preview.69",
                *channel.FACTS, "--yes", "--quiet"]
        # Cold installs into fresh roots; the last one's root stays.
        colds = []
        for i in range(colds_n):
            shutil.rmtree(root, ignore_errors=True)
            colds.append(timed(base, env))
        cold = statistics.median(colds)
        unpacked = disk_kib(root / "store") * 1024
        timed([cfapkg, "install", "zluda", *channel.FACTS, "--yes", "--quiet"], env)
        timed([cfapkg, "update", "zluda", *channel.FACTS, "--yes", "--quiet"], env)
        long_history(cfapkg, env, history)
        nix, nix_how = nix_profile(tmp)
        # The no-op install asks for what generation 3 holds; rollback
        # alternates between 2 and 3, so it runs at either.
        noop = [cfapkg, "install", "zluda", *channel.FACTS, "--yes", "--quiet"]
        # A store folder changed within the last two seconds is not sealed
        # (cache/storeseal.c): a user's next command comes later than that,
        # so the rounds start once the folders are older, after one no-op
        # install has looked at them and sealed them.
        time.sleep(2.5)
        timed(noop, env)
        contenders = [
            ("true", lambda r: timed(["true"])),
            ("curl --version", lambda r: timed(["curl", "--version"])),
            # The flush a switch ends with, alone: coreutils' sync opens
            # the environment's folder and fsyncs it, nothing else.
            (FLUSH, lambda r: timed(["sync", str(root / "envs" / "default")])),
            ("cfapkg rollback", lambda r: timed([cfapkg, "rollback", "--quiet", "--to",
                                                  str(2 + r % 2)], env)),
            ("cfapkg install (nothing to do)", lambda r: timed(noop, env)),
        ]
        # With --before, the older build's launch, and its rollback and
        # no-op install in the long history, in the same rounds too.  A
        # launch: run sets the environment up, then becomes true.
        for label, exe in [("", cfapkg)] + ([(" (before)", before_bin)] if before_bin else []):
            contenders += [
                (f"cfapkg run -- true{label}",
                 lambda r, exe=exe: timed([exe, "run", "--", "true"], env)),
                (f"rollback, {history} generations{label}",
                 lambda r, exe=exe: history_rollback(exe, env, history)),
                (f"no-op install, {history} generations{label}",
                 lambda r, exe=exe: timed(history_noop(exe, env), env)),
            ]
        memory, memory_how = memory_root(cfapkg, env)
        if memory:
            contenders.append(("rollback, root in memory (no disk flush)", lambda r: timed(
                [cfapkg, "rollback", "--quiet", "--to", str(1 + r % 2)], memory[1])))
        if nix:
            contenders.append(("nix-env --switch-generation", lambda r: timed(
                [nix[0], "-p", nix[1], "--switch-generation", str(1 + r % 2)], nix[2])))
        times = side_by_side(contenders, rounds)
        # Each run a new environment; with --before, the older build makes
        # one too in each round, the order rotated.
        seconds = {"cfapkg": [], "cfapkg before": []}
        builds = [("cfapkg", cfapkg)] + ([("cfapkg before", before_bin)] if before_bin else [])
        added = 0
        for i in range(seconds_n):
            for name, exe in builds[i % len(builds):] + builds[:i % len(builds)]:
                envname = f"second-{name.replace(' ', '-')}-{i}"
                timed([exe, "env", "create", envname, "--quiet"], env)
                before = disk_kib(root)
                seconds[name].append(timed([exe, "install", "--env", envname,
                                            "pytorch-cuda-stack", "zluda==6-preview.69",
                                            *channel.FACTS, "--yes", "--quiet"], env))
                added = max(added, (disk_kib(root) - before) * 1024)
        second = statistics.median(seconds["cfapkg"])
    finally:
        srv.stop()
        shutil.rmtree(tmp, ignore_errors=True)
        if memory:
            shutil.rmtree(memory[0], ignore_errors=True)
    mib = 1 << 20
    print(f"package        LibTorch-shaped zip {size / mib:.0f} MiB, unpacked {unpacked / mib:.0f} "
          "MiB (8000 headers + 12 libraries)")
    print(f"cold install   median {cold:.2f} s (download, verify, unpack, generation; "
          f"runs, s: {' '.join(f'{x:.2f}' for x in colds)})")
    print(f"whole processes, {rounds} rounds in rotated order:")
    judged = ("cfapkg rollback", "cfapkg install (nothing to do)",
              f"rollback, {history} generations", f"no-op install, {history} generations")
    med = report(times, {name: 10 for name in judged})
    for name in judged:
        ratio = med[name] / med["true"]
        print(f"  {name} / true = {ratio:.2f} (goal <= 2: {'met' if ratio <= 2 else 'NOT met'})")
    for name in [n for n in med if n.startswith("cfapkg run -- true")]:
        print(f"  {name} - true = {med[name] - med['true']:.1f} ms: what a launch adds "
              "(not judged)")
    flush = med[FLUSH] - med["true"]
    print(f"  the disk's flush: {FLUSH} - true = {flush:.1f} ms = {flush / med['true']:.2f}x "
          f"true; cfapkg rollback without it / true = "
          f"{(med['cfapkg rollback'] - flush) / med['true']:.2f} (not judged)")
    in_memory = med.get("rollback, root in memory (no disk flush)")
    if in_memory is not None:
        print(f"  disk flushes: cfapkg rollback - the same in memory = "
              f"{med['cfapkg rollback'] - in_memory:.1f} ms; in memory / true = "
              f"{in_memory / med['true']:.2f} (not judged: {memory_how})")
    else:
        print(f"  disk flushes: not measured: {memory_how}")
    nix_ms = med.get("nix-env --switch-generation")
    if nix_ms is not None:
        ratio = nix_ms / med["cfapkg rollback"]
        print(f"  rollback vs nix: {nix_how}: nix / cfapkg = {ratio:.2f} (goal >= 3: "
              f"{'met' if ratio >= 3 else 'NOT met'})")
    else:
        print(f"  vs nix: not measured: {nix_how}")
    print(f"second env     median {second * 1000:.0f} ms = {second / cold:.2%} of the cold "
          f"install (goal <= 2%: {'met' if second / cold <= 0.02 else 'NOT met'})")
    for name, runs in seconds.items():
        if runs:
            print(f"  {name:<13} median {statistics.median(runs) * 1000:4.0f} ms  "
                  f"(runs, ms: {' '.join(f'{x * 1000:.0f}' for x in runs)})")
    print(f"  disk added   {added / 1024:.0f} KiB at most = {added / unpacked:.3%} of the unpacked package, "
          f"{added / size:.3%} of the archive (goal < 1%: "
          f"{'met' if added / unpacked < 0.01 else 'NOT met'})")


if __name__ == "__main__":
    main()
