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

With BENCH_BEFORE=PATH (another cfapkg build), that one plans beside this
one in every round of 1 and 2, as "cfapkg plan (before)" and "cfapkg
(before)".

usage: plan_bench.py CFAPKG [RUNS]
"""
import contextlib
import functools
import http.server
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
    side_by_side(cases, runs, goal=("cfapkg plan", 0.010))
    signed_channel(cfapkg, real, runs, env)
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
