#!/usr/bin/env python3
"""Planning benchmarks, side by side in one run.

1. The real recipes: 'cfapkg plan pytorch-cuda-stack' for the reference
   machine, whole process, side by side in rotated order with 'true' and
   'curl --version' (starting a process; loading a network stack), every
   run printed (goal: median <= 10 ms).
2. Scale: a generated channel of 100,000 package versions (gen_channel.py).
   cfapkg loads and solves it (whole process); the same problem, exported
   whole as a libsolv testcase, is solved by libsolv's testsolv.  Goal:
   under 1 s, and cfapkg / testsolv <= 1.5.
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

usage: plan_bench.py CFAPKG [RUNS]
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
    """Wall seconds and peak resident KiB of one run."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    err = proc.stderr.read().decode()
    proc.stderr.close()
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        sys.exit(f"{argv[0]} failed ({code}): {err}")
    return wall, usage.ru_maxrss


def series(argv, runs, env=None):
    timed(argv, env)  # warm the page cache
    results = [timed(argv, env) for _ in range(runs)]
    walls = sorted(r[0] for r in results)
    return statistics.median(walls), walls[0], max(r[1] for r in results)


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


def side_by_side(cases, runs, goal):
    """Each case once per round, the order rotated; medians and every run."""
    names = list(cases)
    walls = {name: [] for name in names}
    for argv, e in cases.values():
        timed(argv, e)  # warm the page cache
    for i in range(runs):
        k = i % len(names)
        for name in names[k:] + names[:k]:
            walls[name].append(timed(*cases[name])[0])
    for name in names:
        med = statistics.median(walls[name])
        verdict = ""
        if name == goal[0]:
            verdict = f" goal <= {goal[1] * 1000:.0f} ms: {'met' if med <= goal[1] else 'NOT met'}"
        print(f"{name:<22}median {med * 1000:.1f} ms{verdict}")
        print(f"{'':<22}runs: {' '.join(f'{x * 1000:.1f}' for x in walls[name])}")


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
        cases = {"built-in folder": env, "signed channel": cenv}
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
    digest = hashlib.sha256(index.read_bytes()).hexdigest()
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
    before = os.environ.get("BENCH_BEFORE")
    before = os.path.abspath(before) if before else None
    cases = {"true": (["true"], None), "curl --version": (["curl", "--version"], None),
             "cfapkg plan": (real, env)}
    if before:
        cases["cfapkg plan (before)"] = ([before] + real[1:], env)
    only = set(filter(None, os.environ.get("BENCH_ONLY", "real,channel,scale,apt").split(",")))
    if "real" in only:
        side_by_side(cases, runs, goal=("cfapkg plan", 0.010))
    if "channel" in only:
        signed_channel(cfapkg, real, runs, env)
    if "apt" in only:
        apt_source(cfapkg, runs, env, before)
    if "scale" not in only:
        return
    if not shutil.which("testsolv"):
        sys.exit("testsolv not found (Debian package libsolv-tools)")
    with tempfile.TemporaryDirectory() as tmp:
        chan = pathlib.Path(tmp) / "channel"
        subprocess.run([sys.executable, str(HERE / "gen_channel.py"), str(chan)], check=True,
                       stdout=subprocess.DEVNULL)
        request = (chan / "REQUEST").read_text().split()
        genv = dict(env, CFAPKG_NO_BUILTIN_RECIPES="1")
        plan = [cfapkg, "plan", *request, "--recipes", str(chan), "--os", "windows",
                "--gpu", "gfx1200", "--quiet"]
        tc = pathlib.Path(tmp) / "testcase"
        subprocess.run(plan + ["--testcase", str(tc)], check=True, env=genv)
        scale_runs = max(3, runs // 4)
        c_med, c_best, c_rss = series(plan, scale_runs, genv)
        t_med, t_best, t_rss = series(["testsolv", str(tc / "testcase.t")], scale_runs)
        nfiles = len(list(chan.glob("comp*.json")))
        print(f"channel        100000 versions in {nfiles} recipes, request of {len(request)}")
        print(f"cfapkg         load + solve: median {c_med:.3f} s (best {c_best:.3f} s, "
              f"peak {c_rss / 1024:.0f} MiB) goal < 1 s: {'met' if c_med < 1 else 'NOT met'}")
        if before:
            b_med, b_best, b_rss = series([before] + plan[1:], scale_runs, genv)
            print(f"cfapkg before  load + solve: median {b_med:.3f} s (best {b_best:.3f} s, "
                  f"peak {b_rss / 1024:.0f} MiB)")
        print(f"testsolv       same problem: median {t_med:.3f} s (best {t_best:.3f} s, "
              f"peak {t_rss / 1024:.0f} MiB)")
        ratio = c_med / t_med
        print(f"ratio          cfapkg / testsolv = {ratio:.2f} (goal <= 1.5: "
              f"{'met' if ratio <= 1.5 else 'NOT met'})")


if __name__ == "__main__":
    main()
