#!/usr/bin/env python3
"""Planning benchmarks, side by side in one run.

1. The real recipes: 'cfapkg plan pytorch-cuda-stack' for the reference
   machine, whole process, median of RUNS (goal: under 20 ms).
2. Scale: a generated channel of 100,000 package versions (gen_channel.py).
   cfapkg loads and solves it (whole process); the same problem, exported
   whole as a libsolv testcase, is solved by libsolv's testsolv.  Goal:
   under 1 s, and cfapkg / testsolv <= 1.5.

usage: plan_bench.py CFAPKG [RUNS]
"""
import os
import pathlib
import shutil
import statistics
import subprocess
import sys
import tempfile
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


def main():
    cfapkg = os.path.abspath(sys.argv[1])
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    env = dict(os.environ, CFAPKG_RECIPES="", CFAPKG_GPU="")
    real = [cfapkg, "plan", "pytorch-cuda-stack", "--os", "windows", "--gpu", "gfx1200",
            "--hip-sdk", "6.4.2", "--quiet"]
    med, best, rss = series(real, runs, env)
    print(f"real recipes   cfapkg plan pytorch-cuda-stack: median {med * 1000:.1f} ms "
          f"(best {best * 1000:.1f} ms, peak {rss / 1024:.1f} MiB) goal < 20 ms: "
          f"{'met' if med < 0.020 else 'NOT met'}")
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
        print(f"testsolv       same problem: median {t_med:.3f} s (best {t_best:.3f} s, "
              f"peak {t_rss / 1024:.0f} MiB)")
        ratio = c_med / t_med
        print(f"ratio          cfapkg / testsolv = {ratio:.2f} (goal <= 1.5: "
              f"{'met' if ratio <= 1.5 else 'NOT met'})")


if __name__ == "__main__":
    main()
