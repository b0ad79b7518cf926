#!/usr/bin/env python3
"""Download benchmarks, side by side in one run, against nginx on 127.0.0.1.

1. A LibTorch-shaped zip (gen_libtorch_like.py, at least 1 GiB):
   (a) curl -o, then sha256sum, then bsdtar -xf  (the script-based setup)
   (b) curl -o, then bsdtar -xf                  (the two unavoidable writes)
   (c) cfapkg fetch: download, verify while streaming, unpack into the store
   Goals: (c)/(a) <= 0.6, (c)/(b) <= 1.0, peak memory of (c) <= 64 MiB.
2. Eight 100 MiB artifacts at once: cfapkg prefetch versus curl --parallel.
   Goal: throughput ratio >= 0.9.
3. A download killed at 90% and resumed: bytes sent again / file size.
   Goal: <= 12%.

usage: fetch_bench.py CFAPKG [ARCHIVE_TOTAL_MIB]
"""
import hashlib
import json
import os
import pathlib
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests" / "servers"))
from nginx import Nginx  # noqa: E402


def timed(argv, env=None):
    """Wall seconds and peak resident MiB.  GNU time measures the peak: a
    child forked from Python would count Python's own pages too."""
    start = time.perf_counter()
    proc = subprocess.run(["/usr/bin/time", "-f", "%M", *argv], stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, env=env, text=True)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"{argv[0]} failed: {proc.stderr}")
    return wall, int(proc.stderr.strip().splitlines()[-1]) / 1024


def sha_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def recipe(folder, name, url, sha, size, fmt, strip=0):
    src = {"url": url, "sha256": sha, "size": size, "format": fmt, "strip": strip}
    (folder / f"{name}.json").write_text(json.dumps({
        "format": 1, "name": name, "summary": "benchmark", "versions": [{
            "version": "1", "sources": {"linux-x86_64": src, "windows-x86_64": src}}]}))


def archive_bench(cfapkg, tmp, srv, env):
    zip_path = tmp / "www" / "libtorch.zip"
    size = zip_path.stat().st_size
    sha = sha_file(zip_path)
    url = srv.url("libtorch.zip")
    recipes = tmp / "recipes"
    recipes.mkdir()
    recipe(recipes, "libtorch-like", url, sha, size, "zip", 1)
    # Twelve runs, none deleted until the end (see below): each holds the
    # archive and its tree, about 2.7 times the archive.
    need = 12 * 2.7 * size
    free = shutil.disk_usage(tmp).free
    if free < need:
        sys.exit(f"{tmp}: {free / 2**30:.0f} GiB free, the archive benchmark needs "
                 f"{need / 2**30:.0f} GiB; set BENCH_TMP to a larger disk")
    results = {"a": [], "b": [], "c": [], "d": []}
    for rnd, order in enumerate(("abcd", "bcda", "cdab")):  # rotated
        for key in order:
            # A fresh folder per run, none deleted until the end: ext4 spends
            # seconds finding inodes near many recently deleted ones, which
            # would measure the file system's bookkeeping, not the tools.
            work = tmp / f"run-{key}-{rnd}"
            work.mkdir()
            subprocess.run(["sync"], check=True)
            dl = work / "libtorch.zip"
            steps = {
                "a": [["curl", "-s", "-o", str(dl), url], ["sha256sum", str(dl)],
                      ["bsdtar", "-xf", str(dl), "-C", str(work)]],
                "b": [["curl", "-s", "-o", str(dl), url], ["bsdtar", "-xf", str(dl), "-C", str(work)]],
                "c": [[cfapkg, "fetch", "libtorch-like", "--recipes", str(recipes), "--root",
                       str(work / "root"), "--gpu", "gfx1200", "--quiet"]],
                # (b) made as durable as (c) is: for context, not a goal
                "d": [["curl", "-s", "-o", str(dl), url], ["bsdtar", "-xf", str(dl), "-C", str(work)],
                      ["sync"]],
            }[key]
            wall, peak = 0.0, 0.0
            for argv in steps:
                w, m = timed(argv, env)
                wall += w
                peak = max(peak, m)
            results[key].append((wall, peak))
    best = {k: min(v) for k, v in results.items()}
    print(f"archive        {size / 2**30:.2f} GiB zip, 8000 headers + 12 libraries")
    for k, label in (("a", "curl + sha256sum + bsdtar"), ("b", "curl + bsdtar"),
                     ("c", "cfapkg fetch (verify + unpack)"), ("d", "curl + bsdtar + sync")):
        runs = " ".join(f"{w:.2f}" for w, _ in results[k])
        print(f"  ({k}) {label:32s} {best[k][0]:7.2f} s  peak {best[k][1]:6.1f} MiB  (runs: {runs})")
    ca, cb = best["c"][0] / best["a"][0], best["c"][0] / best["b"][0]
    print(f"  (c)/(a) = {ca:.2f} (goal <= 0.6: {'met' if ca <= 0.6 else 'NOT met'})")
    print(f"  (c)/(b) = {cb:.2f} (goal <= 1.0: {'met' if cb <= 1.0 else 'NOT met'})")
    print(f"  (c)/(d) = {best['c'][0] / best['d'][0]:.2f} (cfapkg syncs what it writes; (d) "
          "is (b) made durable with sync)")
    print(f"  peak memory of (c) = {best['c'][1]:.1f} MiB (goal <= 64: "
          f"{'met' if best['c'][1] <= 64 else 'NOT met'})")


def parallel_bench(cfapkg, tmp, srv, env):
    """Best of three, alternating which goes first, each started after a
    sync so that neither pays for the other's pending disk writes."""
    urls = []
    for i in range(8):
        p = tmp / "www" / f"part{i}.bin"
        with open(p, "wb") as f:
            f.write(os.urandom(100 << 20))
        urls.append(srv.url(f"part{i}.bin"))
    total = 8 * (100 << 20)
    out = tmp / "par"
    walls = {"cfapkg": [], "curl": []}
    for rep in range(3):
        for who in (("cfapkg", "curl") if rep % 2 == 0 else ("curl", "cfapkg")):
            shutil.rmtree(out, ignore_errors=True)
            out.mkdir()
            subprocess.run(["sync"], check=True)
            if who == "cfapkg":
                argv = [cfapkg, "prefetch", *urls, "--root", str(out / "root"), "--parallel",
                        "8", "--quiet"]
            else:
                argv = ["curl", "-s", "--parallel", "--parallel-max", "8"]
                for i, u in enumerate(urls):
                    argv += ["-o", str(out / f"c{i}.bin"), u]
            walls[who].append(timed(argv, env)[0])
    c_wall, k_wall = min(walls["cfapkg"]), min(walls["curl"])
    ratio = (total / c_wall) / (total / k_wall)
    print(f"parallel       8 x 100 MiB, best of 3: cfapkg {total / c_wall / 2**20:.0f} MiB/s, "
          f"curl --parallel {total / k_wall / 2**20:.0f} MiB/s, ratio {ratio:.2f} "
          f"(goal >= 0.9: {'met' if ratio >= 0.9 else 'NOT met'})")


def resume_bench(cfapkg, tmp, srv, env):
    p = tmp / "www" / "slow" / "big.bin"
    p.parent.mkdir(exist_ok=True)
    with open(p, "wb") as f:
        f.write(os.urandom(100 << 20))
    size = p.stat().st_size
    sha = sha_file(p)
    root = tmp / "resume-root"
    argv = [cfapkg, "prefetch", srv.url("slow/big.bin"), "--sha256", sha, "--root", str(root),
            "--quiet"]
    proc = subprocess.Popen(argv, env=env)
    part = root / "downloads" / f"{sha}.part"
    deadline = time.time() + 120
    while time.time() < deadline and (not part.exists() or part.stat().st_size < size * 0.9):
        time.sleep(0.01)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    kept = part.stat().st_size
    log = srv.dir / "logs" / "access.log"
    before = len(log.read_text().splitlines())
    timed(argv, env)
    lines = log.read_text().splitlines()[before:]
    sent = sum(int(line.split()[-1]) for line in lines if "big.bin" in line)
    print(f"resume         killed at {kept / size:.0%} of {size >> 20} MiB; the second run "
          f"transferred {sent / size:.1%} of the file (goal <= 12%: "
          f"{'met' if sent / size <= 0.12 else 'NOT met'})")


def main():
    cfapkg = os.path.abspath(sys.argv[1])
    total_mib = int(sys.argv[2]) if len(sys.argv) > 2 else 1800
    env = dict(os.environ, CFAPKG_RECIPES="", CFAPKG_GPU="", CFAPKG_NO_BUILTIN_RECIPES="1")
    with tempfile.TemporaryDirectory(dir=os.environ.get("BENCH_TMP")) as d:
        tmp = pathlib.Path(d)
        (tmp / "www").mkdir()
        subprocess.run([sys.executable, str(HERE / "gen_libtorch_like.py"),
                        str(tmp / "www" / "libtorch.zip"), str(total_mib)], check=True,
                       stdout=subprocess.DEVNULL)
        srv = Nginx(tmp / "www", tmp / "nginx", extra="location /slow/ { limit_rate 20m; }")
        try:
            archive_bench(cfapkg, tmp, srv, env)
            parallel_bench(cfapkg, tmp, srv, env)
            resume_bench(cfapkg, tmp, srv, env)
        finally:
            srv.stop()


if __name__ == "__main__":
    main()
