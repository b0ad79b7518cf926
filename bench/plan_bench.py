#!/usr/bin/env python3
"""Planning benchmarks, side by side in one run.

1. The real recipes: 'cfapkg plan pytorch-cuda-stack' for the reference
   machine, whole process, side by side in rotated order with 'true' and
   'curl --version' (starting a process; loading a network stack), every
   run printed: warm (the recipe index and the plan's answer cached in
   the root), solved (the kept answers removed before each run: the
   caches read and the request solved), cold (the caches removed before
   each run) and with --no-index-cache.  Goals: warm median <= 10 ms and
   at most 2x 'true'; solved's ratio is printed beside it.  Beside them, not judged, ZLUDA
   planned for an RX 9070 XT on Debian (warm), which reaches both of
   Debian's ROCm sets and reads the .deb pins of the one it picks.
2. Scale: a generated channel of 100,000 package versions (gen_channel.py).
   cfapkg loads and solves it (whole process), warm and cold; the same
   problem, exported whole as a libsolv testcase, is solved by libsolv's
   testsolv, in the same rotated rounds, and warm with the kept answer
   removed before each run (solved).  Goals: warm, and solved, at most
   0.5x testsolv's time and 2x its peak memory, cold at most 1.0x its
   time.
3. Signed channel: the same real recipes published as a signed channel
   (channel build, served on 127.0.0.1, channel add), planned from the
   accepted index (its signature checked again on every load) against the
   built-in folder, alternating in rotated order.  Goal: the channel's
   median within 2 ms of the built-in folder's.

4. APT source over Debian's real sid Packages index (the file the Debian
   tests cache, ~/.cache/cfapkg/debian-releases/*/sid/Packages, or
   BENCH_SID_PACKAGES): 'cfapkg install --dry-run --offline' of a recipe
   whose APT source pins that index (in the download cache) and wants a
   few of its packages, against the same install of a recipe without an
   APT source, and the APT one with --no-index-cache (the whole index read
   every time); cold is the first run after the lookup was removed, warm
   the runs after.  Side by side in rotated order, every run printed.
   Goal: warm at most 20 ms above the install without an APT source.

BENCH_ONLY=real,channel,scale,apt picks parts.

With BENCH_BEFORE=PATH (another cfapkg build), that one plans beside this
one in every round of 1, 2 and 4, as "cfapkg plan (before)", "cfapkg
(before)" and "APT (before)".

usage: plan_bench.py CFAPKG [RUNS]   (ctest's bench-plan: BENCH_ONLY=real,scale, 3 runs,
                                     its goals printed, not judged)
"""
import contextlib
import functools
import hashlib
import http.server
import json
import os
import pathlib
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = pathlib.Path(__file__).resolve().parent


def timed(argv, env=None):
    """Wall seconds and peak resident KiB of one run.  The wait blocks in
    the kernel: a wait with a timeout (subprocess.run's) polls with sleeps
    from 0.5 ms up, which added 0.5 to 1.5 ms to runs of 2 ms.  A timer
    kills a run that hangs instead, and stderr goes to a file, which a
    child cannot fill up while nobody reads it."""
    with tempfile.TemporaryFile() as errf:
        start = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=errf, env=env)
        guard = threading.Timer(3600, proc.kill)
        guard.start()
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        guard.cancel()
        proc.returncode = code = os.waitstatus_to_exitcode(status)
        errf.seek(0)
        err = errf.read().decode(errors="replace")
    if code != 0:
        sys.exit(f"{' '.join(map(str, argv))} failed ({code}): {err}")
    return wall, usage.ru_maxrss


@contextlib.contextmanager
def served(folder):
    """A static HTTP server on 127.0.0.1 for folder, stopped after."""
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    handler = functools.partial(Quiet, directory=str(folder))
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{srv.server_address[1]}"
    finally:
        srv.shutdown()
        thread.join(timeout=10)


def rounds(cases, runs):
    """Each case once per round, the order rotated: {name: [(wall, KiB)]}.
    A case is (argv, env) or (argv, env, prepare): prepare runs, untimed,
    before each of its runs (a cold case removes its cache there)."""
    names = list(cases)
    got = {name: [] for name in names}
    for argv, e, *prepare in cases.values():
        timed(argv, e)  # warm the page cache
    for i in range(runs):
        k = i % len(names)
        for name in names[k:] + names[:k]:
            argv, e, *prepare = cases[name]
            for step in prepare:
                step()
            got[name].append(timed(argv, e))
    return got


def print_rounds(got, unit=1000, label="ms"):
    """Medians and every run; returns {name: (median wall, peak KiB)}.  The
    peak is printed for the runs in seconds only: below that it is the
    forked runner's own, not the program's."""
    out = {}
    for name, runs in got.items():
        walls = [w for w, _ in runs]
        out[name] = (statistics.median(walls), max(k for _, k in runs))
        peak = f" (peak {out[name][1] / 1024:.0f} MiB)" if label == "s" else ""
        print(f"{name:<26}median {out[name][0] * unit:.3f} {label}{peak}")
        print(f"{'':<26}runs: {' '.join(f'{x * unit:.3f}' for x in walls)}")
    return out


def verdict(ok):
    return "met" if ok else "NOT met"


def drop_cache(root):
    """The prepare step of a cold case: the recipe indexes removed."""
    return lambda: shutil.rmtree(root / "cache", ignore_errors=True)


def drop_memo(root):
    """The prepare step of a solved case: the kept answers of earlier plans
    removed (ROOT/cache/recipes/planned), the recipe caches kept, so the
    run reads the caches and solves."""
    return lambda: (root / "cache" / "recipes" / "planned").unlink(missing_ok=True)


def side_by_side(cases, runs, goal, also=()):
    """The real recipes: warm and cold beside starting a process; also:
    more plans whose ratio to 'true' is printed, not judged."""
    med = print_rounds(rounds(cases, runs))
    warm, true = med[goal[0]][0], med["true"][0]
    print(f"goal           {goal[0]} <= {goal[1] * 1000:.0f} ms: {verdict(warm <= goal[1])}")
    print(f"ratio          {goal[0]} / true = {warm / true:.2f} (goal <= 2: "
          f"{verdict(warm <= 2 * true)})")
    for name in also:
        print(f"ratio          {name} / true = {med[name][0] / true:.2f} (not judged)")


def signed_channel(cfapkg, real, runs, env):
    """Built-in folder against the same recipes from a verified channel."""
    repo = HERE.parent / "recipes"
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        shutil.copytree(repo, tmp / "real")
        run = functools.partial(subprocess.run, check=True, stdout=subprocess.DEVNULL)
        run([cfapkg, "channel", "keygen", str(tmp / "k")])
        run([cfapkg, "channel", "build", str(tmp / "real"), "--key", str(tmp / "k")])
        cenv = dict(env, CFAPKG_ROOT=str(tmp / "root"), CFAPKG_NO_BUILTIN_RECIPES="1")
        with served(tmp) as url:
            run([cfapkg, "channel", "add", "real", f"{url}/real", "--key", str(tmp / "k.pub")],
                env=cenv)
        # A root of its own for the folder too: without one the user's
        # default root is used, and where it does not exist nothing is
        # cached, so every run would parse the recipes.
        (tmp / "folder-root").mkdir()
        cases = {"built-in folder": dict(env, CFAPKG_ROOT=str(tmp / "folder-root")),
                 "signed channel": cenv}
        for e in cases.values():
            timed(real, e)  # warm the page cache
        walls = {name: [] for name in cases}
        names = list(cases)
        for i in range(runs):
            for name in names[i % 2:] + names[:i % 2]:  # rotate the order
                walls[name].append(timed(real, cases[name])[0])
    med = {name: statistics.median(w) for name, w in walls.items()}
    for name, w in walls.items():
        print(f"{name:<16}plan: median {med[name] * 1000:.1f} ms "
              f"(runs: {' '.join(f'{x * 1000:.1f}' for x in w)})")
    diff = (med["signed channel"] - med["built-in folder"]) * 1000
    print(f"channel cost   {diff:+.2f} ms (goal within 2 ms: "
          f"{'met' if diff <= 2 else 'NOT met'})")


def sid_packages():
    """The real sid index the Debian tests cached, or None."""
    given = os.environ.get("BENCH_SID_PACKAGES")
    if given:
        return pathlib.Path(given)
    found = sorted(pathlib.Path.home().glob(".cache/cfapkg/debian-releases/*/sid/Packages"))
    return found[0] if found else None


def sid_wants(index, names):
    """'NAME=VERSION' for the first of names the index lists, then bare names."""
    versions = {}
    name = None
    with open(index, encoding="utf-8", errors="replace") as f:
        for line in f:
            if line.startswith("Package: "):
                name = line[9:].strip()
            elif line.startswith("Version: ") and name in names and name not in versions:
                versions[name] = line[9:].strip()
    have = [n for n in names if n in versions]
    return [f"{have[0]}={versions[have[0]]}"] + have[1:]


def apt_source(cfapkg, runs, env, before=None):
    """Install --dry-run with an APT source over sid's index, cold and warm,
    beside the same without an APT source and with --no-index-cache."""
    index = sid_packages()
    if not index or not index.is_file():
        print("apt source     skipped: no cached sid Packages (BENCH_SID_PACKAGES)")
        return
    # Hashed a piece at a time: a runner holding the 65 MB file would make
    # every later run's peak memory read as at least that much (a child's
    # peak counts from the pages it shared with its parent at fork).
    with open(index, "rb") as f:
        digest = hashlib.file_digest(f, "sha256").hexdigest()
    wants = sid_wants(index, ["libamdhip64-6", "hipcc", "librocblas4", "librocsparse1",
                              "libhsa-runtime64-1", "rocminfo"])
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        for name, src in (("apt", {"apt": {
                "repository": "http://127.0.0.1:9/debian", "suite": "sid",
                "component": "main", "index_sha256": digest,
                "index_size": index.stat().st_size, "packages": wants}}),
                          ("plain", {"url": "http://127.0.0.1:9/plain.tar.gz",
                                     "sha256": "0" * 64, "size": 100, "format": "tar.gz"})):
            (tmp / name).mkdir()
            recipe = {"format": 1, "name": f"{name}-part", "summary": name,
                      "versions": [{"version": "1.0", "os": ["linux"],
                                    "sources": {"linux-x86_64": src}}]}
            (tmp / name / f"{name}-part.json").write_text(json.dumps(recipe))
        root = tmp / "root"
        (root / "downloads").mkdir(parents=True)
        shutil.copyfile(index, root / "downloads" / digest)
        aenv = dict(env, CFAPKG_ROOT=str(root), CFAPKG_NO_BUILTIN_RECIPES="1")
        base = [cfapkg, "install", "--dry-run", "--offline", "--quiet", "--os", "linux",
                "--arch", "x86_64", "--gpu", "gfx1030", "--allow-experimental"]
        apt = base + ["apt-part", "--recipes", str(tmp / "apt")]
        cases = {"without APT": (base + ["plain-part", "--recipes", str(tmp / "plain")], aenv),
                 "APT warm": (apt, aenv),
                 "APT, index read": (apt + ["--no-index-cache"], aenv)}
        if before:
            cases["APT (before)"] = ([before] + apt[1:], aenv)
        lookups = root / "apt" / "lookups"
        cold = []
        for _ in range(max(3, runs // 4)):
            shutil.rmtree(lookups, ignore_errors=True)
            cold.append(timed(apt, aenv)[0])
        print(f"apt source     sid Packages {index.stat().st_size / 1e6:.0f} MB, "
              f"packages {' '.join(wants)}")
        print(f"{'APT cold':<22}median {statistics.median(cold) * 1000:.1f} ms")
        print(f"{'':<22}runs: {' '.join(f'{x * 1000:.1f}' for x in cold)}")
        walls = {name: [] for name in cases}
        names = list(cases)
        for argv, e in cases.values():
            timed(argv, e)  # warm the page cache and the lookup
        for i in range(runs):
            k = i % len(names)
            for name in names[k:] + names[:k]:
                walls[name].append(timed(*cases[name])[0])
        med = {name: statistics.median(w) for name, w in walls.items()}
        for name in names:
            print(f"{name:<22}median {med[name] * 1000:.1f} ms")
            print(f"{'':<22}runs: {' '.join(f'{x * 1000:.1f}' for x in walls[name])}")
        diff = (med["APT warm"] - med["without APT"]) * 1000
        print(f"APT cost       warm {diff:+.1f} ms over the install without it (goal <= 20 ms: "
              f"{'met' if diff <= 20 else 'NOT met'})")


def main():
    cfapkg = os.path.abspath(sys.argv[1])
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    env = dict(os.environ, CFAPKG_RECIPES="", CFAPKG_GPU="")
    real = [cfapkg, "plan", "pytorch-cuda-stack", "--os", "windows", "--gpu", "gfx1200",
            "--hip-sdk", "6.4.2", "--quiet"]
    # ZLUDA for an RX 9070 XT on Debian (LibTorch's Linux zip has no pin
    # yet): it reaches Debian's two ROCm sets and TheRock's builds, and
    # picks one set, whose .deb pins alone it reads.
    linux = [cfapkg, "plan", "zluda", "--os", "linux", "--arch", "x86_64",
             "--gpu", "RX 9070 XT", "--glibc", "2.42", "--quiet"]
    before = os.environ.get("BENCH_BEFORE")
    before = os.path.abspath(before) if before else None
    only = set(filter(None, os.environ.get("BENCH_ONLY", "real,channel,scale,apt").split(",")))
    if "real" in only:
        with tempfile.TemporaryDirectory() as tmp:
            # A root of its own, so that the recipe index is cached there.
            root = pathlib.Path(tmp)
            renv = dict(env, CFAPKG_ROOT=str(root))
            (root / "linux").mkdir()
            cases = {"true": (["true"], None), "curl --version": (["curl", "--version"], None),
                     "cfapkg plan": (real, renv),
                     "cfapkg plan, cold": (real, renv, drop_cache(root)),
                     "cfapkg plan, solved": (real, renv, drop_memo(root)),
                     "cfapkg plan, no index": (real + ["--no-index-cache"], renv),
                     # A root of its own: the cold case's removal of
                     # the caches would make its runs cold too.
                     "cfapkg plan, Linux": (linux, dict(renv, CFAPKG_ROOT=str(root / "linux")))}
            if before:
                # A root of its own too: the cold case's removal of the
                # caches must not make the other build's runs cold.
                (root / "before").mkdir()
                benv = dict(renv, CFAPKG_ROOT=str(root / "before"))
                cases["cfapkg plan (before)"] = ([before] + real[1:], benv)
                (root / "linux-before").mkdir()
                cases["cfapkg plan, Linux (before)"] = (
                    [before] + linux[1:], dict(renv, CFAPKG_ROOT=str(root / "linux-before")))
            side_by_side(cases, runs, goal=("cfapkg plan", 0.010),
                         also=["cfapkg plan, solved", "cfapkg plan, Linux"])
    if "channel" in only:
        signed_channel(cfapkg, real, runs, env)
    if "apt" in only:
        apt_source(cfapkg, runs, env, before)
    if "scale" not in only:
        return
    if not shutil.which("testsolv"):
        sys.exit("testsolv not found (Debian package libsolv-tools)")
    scale(cfapkg, runs, env, before)


def same_answers(plan, env, root):
    """The plan made cold (its index built a slice at a time), warm and
    with every recipe parsed must be one document: a faster plan that
    answers differently is no faster plan."""
    def doc(*extra):
        return subprocess.run(plan + ["--json", *extra], check=True, env=env,
                              capture_output=True, text=True).stdout
    drop_cache(root)()
    docs = [doc(), doc(), doc("--no-index-cache")]
    if docs[0] != docs[1] or docs[1] != docs[2]:
        sys.exit("plan_bench: the cold, warm and whole plans at scale differ")
    print("answers        cold, warm and --no-index-cache plans identical")


def scale(cfapkg, runs, env, before):
    """100,000 versions: cfapkg warm (its index cached) and cold (the first
    run after a change) beside testsolv on the same problem, rotated."""
    with tempfile.TemporaryDirectory() as tmp:
        chan = pathlib.Path(tmp) / "channel"
        root = pathlib.Path(tmp) / "root"
        root.mkdir()
        subprocess.run([sys.executable, str(HERE / "gen_channel.py"), str(chan)], check=True,
                       stdout=subprocess.DEVNULL)
        # Files written within the last second are not indexed yet (their
        # stamps could still change): dated back, as recipes edited earlier.
        old = time.time() - 3600
        for f in chan.iterdir():
            os.utime(f, (old, old))
        request = (chan / "REQUEST").read_text().split()
        genv = dict(env, CFAPKG_NO_BUILTIN_RECIPES="1", CFAPKG_ROOT=str(root))
        plan = [cfapkg, "plan", *request, "--recipes", str(chan), "--os", "windows",
                "--gpu", "gfx1200", "--quiet"]
        tc = pathlib.Path(tmp) / "testcase"
        subprocess.run(plan + ["--testcase", str(tc)], check=True, env=genv)
        same_answers(plan, genv, root)
        cases = {"cfapkg warm": (plan, genv), "cfapkg cold": (plan, genv, drop_cache(root)),
                 "cfapkg warm, solved": (plan, genv, drop_memo(root)),
                 "testsolv": (["testsolv", str(tc / "testcase.t")], None)}
        if before:
            cases["cfapkg (before)"] = ([before] + plan[1:], genv)
        nfiles = len(list(chan.glob("comp*.json")))
        print(f"channel        100000 versions in {nfiles} recipes, request of {len(request)}")
        med = print_rounds(rounds(cases, max(3, runs // 4)), unit=1, label="s")
    (warm, warm_kib), cold = med["cfapkg warm"], med["cfapkg cold"][0]
    solved, solved_kib = med["cfapkg warm, solved"]
    solv, solv_kib = med["testsolv"]
    print(f"goal           warm < 1 s: {verdict(warm < 1)}; cold < 1 s: {verdict(cold < 1)}")
    print(f"ratio          warm / testsolv = {warm / solv:.2f} (goal <= 0.5: "
          f"{verdict(warm <= 0.5 * solv)}); cold / testsolv = {cold / solv:.2f} "
          f"(goal <= 1.0: {verdict(cold <= solv)})")
    print(f"memory         warm peak / testsolv peak = {warm_kib / solv_kib:.2f} (goal <= 2: "
          f"{verdict(warm_kib <= 2 * solv_kib)})")
    print(f"solved         warm, solved / testsolv = {solved / solv:.2f} (goal <= 0.5: "
          f"{verdict(solved <= 0.5 * solv)}); peak / testsolv peak = "
          f"{solved_kib / solv_kib:.2f} (goal <= 2: {verdict(solved_kib <= 2 * solv_kib)})")


if __name__ == "__main__":
    main()
