#!/usr/bin/env python3
"""Download benchmarks, side by side in one run, against nginx on 127.0.0.1.
Every pipeline runs ROUNDS times in rotated order, the page cache dropped
before each run (the script says when it cannot: that needs root), and
goals are judged on medians, with every run printed.

1. A LibTorch-shaped corpus (gen_libtorch_like.py, 1 GiB of content by
   default) as a zip and as a tar.zst:
   (a) curl -o; sha256sum; bsdtar -xf        (what the PowerShell scripts do)
   (b) curl -o; bsdtar -xf
   (d) curl -o; bsdtar -xf; sync             ((b) made as durable as cfapkg)
   (c) cfapkg fetch of the zip (download, verify, unpack, durable)
   (e) curl | zstd -d | tar -x; sync         (the streaming pipe, tar.zst)
   (f) cfapkg fetch of the tar.zst
   Goals on medians: (c)/(a) <= 0.6, (c)/(d) <= 0.8, (f)/(e) <= 0.8, peak
   memory of cfapkg <= 64 MiB.
2. Parallel downloads, cfapkg prefetch against curl --parallel on the same
   files: 8 x 100 MiB, and 2 x 1 GiB + 200 x 1 MiB.  Goal: throughput ratio
   >= 1.0 (medians).
3. A download killed at 90% and resumed: bytes sent again / file size.
   Goal: <= 12%.

With BENCH_BEFORE=PATH (another cfapkg build), that one runs beside this
one in every round of 1 and 2, as (c0), (f0) and "cfapkg before".
BENCH_ONLY=archive,parallel,resume picks parts.

--short: one round of every part, a 48 MiB archive and the parallel files
at 1/32 of their size, so that every pipeline runs in seconds (the resumed
file keeps its size: its kill at 90% needs the time).

usage: fetch_bench.py CFAPKG [ARCHIVE_TOTAL_MIB] [ROUNDS] [--short]
"""
import hashlib
import json
import os
import pathlib
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests" / "servers"))
from nginx import Nginx  # noqa: E402

ROUNDS = 5
DROPPED = [True]


def drop_caches():
    """Writes back and drops the page cache, so that no run reads what an
    earlier one left in memory (root only)."""
    subprocess.run(["sync"], check=True)
    try:
        pathlib.Path("/proc/sys/vm/drop_caches").write_text("3\n")
    except OSError:
        DROPPED[0] = False


def timed(argv, env=None, shell=False, may_fail=False):
    """Wall seconds and peak resident MiB.  GNU time measures the peak: a
    child forked from Python would count Python's own pages too."""
    start = time.perf_counter()
    cmd = ["/usr/bin/time", "-f", "%M", *(["sh", "-c", argv] if shell else argv)]
    proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env,
                          text=True)
    wall = time.perf_counter() - start
    if proc.returncode != 0 and may_fail:
        return None, None
    if proc.returncode != 0:
        sys.exit(f"{argv} failed: {proc.stderr}")
    return wall, int(proc.stderr.strip().splitlines()[-1]) / 1024


def rotated(keys, rnd):
    k = rnd % len(keys)
    return keys[k:] + keys[:k]


def report(label, runs):
    walls = [w for w, _ in runs]
    med = statistics.median(walls)
    peak = max(m for _, m in runs)
    print(f"  {label:44s} median {med:6.2f} s  peak {peak:6.1f} MiB  "
          f"(runs: {' '.join(f'{w:.2f}' for w in walls)})")
    return med, peak


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


def make_tar_zst(zip_path, out):
    """The same tree as a tar.zst, as upstreams that ship tarballs do."""
    tree = out.parent / "tree-for-tar"
    subprocess.run(["bsdtar", "-xf", str(zip_path), "-C", str(out.parent)], check=True)
    shutil.move(str(out.parent / "libtorch"), str(tree))
    subprocess.run(f"tar -C {tree.parent} --transform s,^tree-for-tar,libtorch, -cf - "
                   f"tree-for-tar | zstd -q -3 -T0 -o {out}", shell=True, check=True)
    shutil.rmtree(tree)


def archive_steps(key, cfapkgs, work, urls, recipes):
    dl = work / "dl"
    zurl, turl = urls
    fetch = lambda b, name: [[b, "fetch", name, "--recipes", str(recipes), "--root",  # noqa
                              str(work / "root"), "--gpu", "gfx1200", "--quiet"]]
    steps = {
        "a": [["curl", "-s", "-o", str(dl), zurl], ["sha256sum", str(dl)],
              ["bsdtar", "-xf", str(dl), "-C", str(work)]],
        "b": [["curl", "-s", "-o", str(dl), zurl], ["bsdtar", "-xf", str(dl), "-C", str(work)]],
        "d": [["curl", "-s", "-o", str(dl), zurl], ["bsdtar", "-xf", str(dl), "-C", str(work)],
              ["sync"]],
        "c": fetch(cfapkgs[0], "libtorch-zip"),
        "e": [f"curl -s {turl} | zstd -dq | tar -x -C {work}; sync"],
        "f": fetch(cfapkgs[0], "libtorch-zst"),
    }
    if len(cfapkgs) > 1:
        steps["c0"] = fetch(cfapkgs[1], "libtorch-zip")
        steps["f0"] = fetch(cfapkgs[1], "libtorch-zst")
    return steps[key]


def archive_bench(cfapkgs, tmp, srv, env, rounds):
    www = tmp / "www"
    zip_path, zst_path = www / "libtorch.zip", www / "libtorch.tar.zst"
    make_tar_zst(zip_path, zst_path)
    recipes = tmp / "recipes"
    recipes.mkdir()
    for name, path, fmt in (("libtorch-zip", zip_path, "zip"), ("libtorch-zst", zst_path,
                                                                 "tar.zst")):
        recipe(recipes, name, srv.url(path.name), sha_file(path), path.stat().st_size, fmt, 1)
    urls = (srv.url(zip_path.name), srv.url(zst_path.name))
    keys = ["a", "b", "d", "c", "e", "f"] + (["c0", "f0"] if len(cfapkgs) > 1 else [])
    results = {k: [] for k in keys}
    for rnd in range(rounds):
        for key in rotated(keys, rnd):
            # A fresh folder per run, removed at the end of the round only:
            # ext4 spends seconds finding inodes near many just deleted.
            work = tmp / f"run-{key}-{rnd}"
            work.mkdir()
            drop_caches()
            wall, peak = 0.0, 0.0
            for argv in archive_steps(key, cfapkgs, work, urls, recipes):
                w, m = timed(argv, env, shell=isinstance(argv, str))
                wall, peak = wall + w, max(peak, m)
            results[key].append((wall, peak))
        for key in keys:
            shutil.rmtree(tmp / f"run-{key}-{rnd}", ignore_errors=True)
    print(f"archive        {zip_path.stat().st_size / 2**20:.0f} MiB zip, "
          f"{zst_path.stat().st_size / 2**20:.0f} MiB tar.zst, 8000 headers + 12 libraries; "
          f"{rounds} rounds, page cache "
          f"{'dropped before every run' if DROPPED[0] else 'NOT dropped (needs root)'}")
    labels = {"a": "curl; sha256sum; bsdtar", "b": "curl; bsdtar", "d": "curl; bsdtar; sync",
              "c": "cfapkg fetch zip", "c0": "cfapkg fetch zip (before)",
              "e": "curl | zstd | tar; sync (tar.zst)", "f": "cfapkg fetch tar.zst",
              "f0": "cfapkg fetch tar.zst (before)"}
    med = {k: report(f"({k}) {labels[k]}", results[k]) for k in keys}
    goals = (("c", "a", 0.6), ("c", "d", 0.8), ("f", "e", 0.8))
    for k in ("c0", "f0"):
        if k in med:
            goals += ((k, "a" if k == "c0" else "e", 0.0),)
    for num, den, goal in goals:
        r = med[num][0] / med[den][0]
        verdict = f"goal <= {goal}: {'met' if r <= goal else 'NOT met'}" if goal else "before"
        print(f"  ({num})/({den}) = {r:.2f} ({verdict})")
    peak = max(med["c"][1], med["f"][1])
    print(f"  peak memory of cfapkg = {peak:.1f} MiB (goal <= 64: "
          f"{'met' if peak <= 64 else 'NOT met'})")


def write_random(path, size):
    with open(path, "wb") as f:
        left = size
        while left:
            n = min(left, 1 << 24)
            f.write(os.urandom(n))
            left -= n


def parallel_shape(name, files, cfapkgs, tmp, srv, env, rounds):
    urls = [srv.url(f) for f, _ in files]
    total = sum(s for _, s in files)
    who = ["cfapkg", "curl"] + (["cfapkg before"] if len(cfapkgs) > 1 else [])
    walls = {w: [] for w in who}
    for rnd in range(rounds):
        for w in rotated(who, rnd):
            out = tmp / "par"
            shutil.rmtree(out, ignore_errors=True)
            out.mkdir()
            drop_caches()
            if w.startswith("cfapkg"):
                argv = [cfapkgs[0] if w == "cfapkg" else cfapkgs[1], "prefetch", *urls,
                        "--root", str(out / "root"), "--parallel", "8", "--quiet"]
            else:
                argv = ["curl", "-s", "--parallel", "--parallel-max", "8"]
                for i, u in enumerate(urls):
                    argv += ["-o", str(out / f"c{i}.bin"), u]
            if w in walls:
                walls[w].append(timed(argv, env, may_fail=w == "cfapkg before")[0])
                if walls[w][-1] is None:  # an older build that cannot take so many URLs
                    del walls[w]
    print(f"parallel       {name}, {total / 2**20:.0f} MiB, 8 at once, {rounds} rounds:")
    med = {}
    for w in [w for w in who if w in walls]:
        med[w] = statistics.median(walls[w])
        print(f"  {w:15s} median {total / med[w] / 2**20:6.0f} MiB/s  (runs, s: "
              f"{' '.join(f'{x:.2f}' for x in walls[w])})")
    ratio = med["curl"] / med["cfapkg"]
    print(f"  cfapkg / curl --parallel = {ratio:.2f} (goal >= 1.0: "
          f"{'met' if ratio >= 1.0 else 'NOT met'})")


def mib(size):
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if size >= 1 << shift:
            return f"{size / 2**shift:g} {unit}"
    return f"{size} B"


def parallel_bench(cfapkgs, tmp, srv, env, rounds, scale=1):
    www = tmp / "www"
    mid, big, small = (100 << 20) // scale, (1 << 30) // scale, (1 << 20) // scale
    shapes = ((f"8 x {mib(mid)}", [(f"p{i}.bin", mid) for i in range(8)]),
              (f"2 x {mib(big)} + 200 x {mib(small)}", [(f"g{i}.bin", big) for i in range(2)] +
               [(f"s{i}.bin", small) for i in range(200)]))
    for name, files in shapes:
        for f, size in files:
            if not (www / f).exists():
                write_random(www / f, size)
        parallel_shape(name, files, cfapkgs, tmp, srv, env, rounds)


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
    while (time.time() < deadline and proc.poll() is None
           and (not part.exists() or part.stat().st_size < size * 0.9)):
        time.sleep(0.01)
    if proc.returncode is not None:
        sys.exit(f"{argv} exited ({proc.returncode}) before it could be killed at 90%")
    proc.send_signal(signal.SIGKILL)
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
    args = [a for a in sys.argv[1:] if a != "--short"]
    short = len(args) < len(sys.argv) - 1
    if not args:
        sys.exit(__doc__.strip().splitlines()[-1])
    cfapkgs = [os.path.abspath(args[0])]
    if os.environ.get("BENCH_BEFORE"):
        cfapkgs.append(os.path.abspath(os.environ["BENCH_BEFORE"]))
    # 48 MiB: the 8,000 headers are about 36 MiB of it.
    total_mib = int(args[1]) if len(args) > 1 else 48 if short else 1024
    rounds = int(args[2]) if len(args) > 2 else 1 if short else ROUNDS
    env = dict(os.environ, CFAPKG_RECIPES="", CFAPKG_GPU="", CFAPKG_NO_BUILTIN_RECIPES="1",
               CFAPKG_MIRRORS="")
    with tempfile.TemporaryDirectory(dir=os.environ.get("BENCH_TMP")) as d:
        tmp = pathlib.Path(d)
        (tmp / "www").mkdir()
        subprocess.run([sys.executable, str(HERE / "gen_libtorch_like.py"),
                        str(tmp / "www" / "libtorch.zip"), str(total_mib)], check=True,
                       stdout=subprocess.DEVNULL)
        srv = Nginx(tmp / "www", tmp / "nginx", extra="location /slow/ { limit_rate 20m; }")
        try:
            only = os.environ.get("BENCH_ONLY", "archive,parallel,resume").split(",")
            if "archive" in only:
                archive_bench(cfapkgs, tmp, srv, env, rounds)
            if "parallel" in only:
                parallel_bench(cfapkgs, tmp, srv, env, rounds, 32 if short else 1)
            if "resume" in only:
                resume_bench(cfapkgs[0], tmp, srv, env)
        finally:
            srv.stop()


if __name__ == "__main__":
    main()
