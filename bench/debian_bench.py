#!/usr/bin/env python3
"""Debian's real ROCm set, side by side in one run, against nginx on 127.0.0.1.

The .debs of a Debian-layout folder (by default sid's ROCm 6.4 runtime
libraries, over 800 MB, fetched once by scripts/debian-sid-rocm; the short
form that CI runs takes Debian 12's from scripts/debian-rocm), served with
the set's Packages index:
  (a) what apt-get download + dpkg-deb -x amounts to: curl the index, then
      for each .deb in turn curl it, check its SHA-256 with sha256sum and
      dpkg-deb -x it into one folder; then sync
  (b) cfapkg install of a recipe whose APT source pins that index: each .deb
      unpacked while it downloads, several at once, into one store folder,
      synced, a generation written; a fresh root every run
  (x1) dpkg-deb --fsys-tarfile of each .deb in turn to /dev/null: dpkg's own
      decompression alone (liblzma's multi-threaded decoder, for an xz whose
      blocks allow it), no file written
  (x2) each .deb's data.tar member (ar p) through the one-threaded decoder
      (xz -T1, zstd, gzip: as libarchive 3.6.2 decodes, and so cfapkg), one
      .deb per core at once, largest first: the floor for cfapkg's way of
      unpacking on this machine
ROUNDS rounds in rotated order, the page cache dropped before every run
(as root), every run printed with its CPU seconds and the load average it
started in (others may share the machine).  Goals, on the medians:
(b) <= 0.35 x (a), peak memory of (b) <= 64 MiB.

usage: debian_bench.py CFAPKG [REPO] [ROUNDS]
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
from nginx import Nginx  # noqa: E402
from apt_bench import FACTS, drop_caches, listing  # noqa: E402
from fetch_bench import rotated, sha_file  # noqa: E402

MIB = 1 << 20
PIPELINES = {"a": "curl + sha256sum + dpkg-deb -x, sync",
             "b": "cfapkg install (apt source)",
             "x1": "dpkg-deb --fsys-tarfile, in turn",
             "x2": "one-threaded decoder, one per core"}


def timed(argv, env=None):
    """Wall seconds, CPU seconds (user + system, with children) and peak
    resident MiB of one command, measured by GNU time."""
    start = time.perf_counter()
    proc = subprocess.run(["/usr/bin/time", "-f", "%M %U %S", *argv], stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, env=env, text=True)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"{' '.join(argv)} failed: {proc.stderr}")
    rss, user, system = proc.stderr.strip().splitlines()[-1].split()
    return wall, float(user) + float(system), int(rss) / 1024


def run_steps(steps):
    """A pipeline of commands one after another: summed times, the peak."""
    wall = cpu = peak = 0.0
    for argv in steps:
        w, c, m = timed(argv)
        wall, cpu, peak = wall + w, cpu + c, max(peak, m)
    return wall, cpu, peak


def read_repo(repo):
    """The suite, the index and each .deb with its SHA-256 (from the index:
    what apt checks), largest first."""
    suite = (repo / "suite").read_text().strip()
    index = repo / "dists" / suite / "main" / "binary-amd64" / "Packages"
    wanted = set((repo / "packages").read_text().split())
    debs = []
    for stanza in index.read_text().split("\n\n"):
        f = dict(line.split(": ", 1) for line in stanza.splitlines() if ": " in line[:40])
        if f.get("Package") and f"{f['Package']}={f['Version']}" in wanted:
            debs.append((f["Package"], f["Version"], repo / f["Filename"], f["SHA256"]))
    if len(debs) != len(wanted):
        sys.exit(f"{index}: lists {len(debs)} of the {len(wanted)} packages of {repo}/packages")
    debs.sort(key=lambda d: d[2].stat().st_size, reverse=True)
    return suite, index, debs


def write_recipe(folder, url, suite, index, debs):
    src = {"apt": {"repository": url, "suite": suite, "component": "main",
                   "index_sha256": sha_file(index), "index_size": index.stat().st_size,
                   "packages": [f"{n}={v}" for n, v, _, _ in debs]}}
    folder.mkdir()
    (folder / "debian-set.json").write_text(json.dumps({
        "format": 1, "name": "debian-set", "summary": "Debian's ROCm .debs (benchmark)",
        "versions": [{"version": "1", "os": ["linux"], "sources": {"linux-x86_64": src}}]},
        indent=1))


def steps_a(work, srv, repo, index, debs):
    """(a)'s commands; the checksum lists (what apt takes from the index)
    are written now, before the page cache is dropped."""
    dl, tree, sums = work / "debs", work / "tree", work / "sums"
    for d in (dl, tree, sums):
        d.mkdir(parents=True)
    steps = [["curl", "-sSf", "-o", str(dl / "Packages"), srv.url(index.relative_to(repo).as_posix())]]
    for _, _, deb, sha in debs:
        local, check = dl / deb.name, sums / f"{deb.name}.sha256"
        check.write_text(f"{sha}  {local}\n")
        steps += [["curl", "-sSf", "-o", str(local), srv.url(deb.relative_to(repo).as_posix())],
                  ["sha256sum", "--quiet", "-c", str(check)],
                  ["dpkg-deb", "-x", str(local), str(tree)]]
    return steps + [["sync"]], tree


DECODERS = {".xz": "xz -dc -T1", ".zst": "zstd -dc", ".gz": "gzip -dc", ".bz2": "bzip2 -dc",
            ".lzma": "xz -dc -T1 --format=lzma"}


def decode_cmd(deb):
    """The shell words that decode deb's data.tar member to /dev/null."""
    member = next(m for m in subprocess.run(["ar", "t", str(deb)], check=True, capture_output=True,
                                            text=True).stdout.split() if m.startswith("data.tar"))
    suffix = pathlib.PurePath(member).suffix
    decoder = DECODERS.get(suffix, "cat") if suffix != ".tar" else "cat"
    return f"ar p '{deb}' {member} | {decoder} >/dev/null"


def floor_cmd(debs, one_threaded):
    """(x1): --fsys-tarfile of each .deb in turn; (x2): each data.tar member
    through the one-threaded decoder, one .deb per core, largest first."""
    if not one_threaded:
        return ["sh", "-c", "; ".join(f"dpkg-deb --fsys-tarfile '{d[2]}' >/dev/null" for d in debs)]
    lines = "\n".join(decode_cmd(d[2]) for d in debs)
    return ["sh", "-c", f"printf '%s\\n' \"{lines}\" | xargs -P {os.cpu_count() or 1} -d '\\n' "
            "-I C sh -c 'C'"]


def run_b(cfapkg, work, recipes):
    env = dict(os.environ, CFAPKG_ROOT=str(work / "root"), CFAPKG_RECIPES=str(recipes),
               CFAPKG_GPU="", CFAPKG_NO_BUILTIN_RECIPES="1")
    result = timed([cfapkg, "install", "debian-set", *FACTS, "--yes", "--quiet"], env)
    stores = list((work / "root" / "store").glob("debian-set-1-*"))
    if len(stores) != 1:
        sys.exit(f"cfapkg install left {len(stores)} store folders for debian-set")
    return result, stores[0]


def machine():
    with open("/proc/meminfo") as f:
        mem = {line.split(":")[0]: int(line.split()[1]) for line in f}
    model = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo")
                  if line.startswith("model name")), "?")
    return (f"{os.cpu_count()} cores ({model}), {mem['MemTotal'] / 2**20:.1f} GiB memory "
            f"({mem['MemAvailable'] / 2**20:.1f} available), load average "
            f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")


class Bench:
    def __init__(self, cfapkg, repo, tmp):
        self.cfapkg, self.repo, self.tmp = cfapkg, repo, tmp
        self.suite, self.index, self.debs = read_repo(repo)
        self.srv = Nginx(repo, tmp / "nginx")
        self.recipes = tmp / "recipes"
        write_recipe(self.recipes, self.srv.url(""), self.suite, self.index, self.debs)
        self.results = {k: [] for k in PIPELINES}
        self.trees = {}
        self.cache_note = None

    def one(self, key, rnd):
        """One timed run in a fresh folder, deleted afterwards (a tree is
        gigabytes), its listing kept from the first run of (a) and (b)."""
        work = self.tmp / f"run-{key}-{rnd}"
        work.mkdir()
        tree = None
        if key == "a":
            steps, tree = steps_a(work, self.srv, self.repo, self.index, self.debs)
        self.cache_note = drop_caches() or self.cache_note
        load = os.getloadavg()[0]
        if key == "a":
            result = run_steps(steps)
        elif key == "b":
            result, tree = run_b(self.cfapkg, work, self.recipes)
        else:
            result = timed(floor_cmd(self.debs, key == "x2"))
        self.results[key].append((*result, load))
        if tree and key not in self.trees:
            self.trees[key] = listing(tree)
        shutil.rmtree(work)
        subprocess.run(["sync"], check=True)  # the deletion is not the next run's

    def compare(self):
        a, b = self.trees["a"], self.trees["b"]
        if a != b:
            diff = sorted(set(a.items()) ^ set(b.items()))[:5]
            sys.exit(f"cfapkg's store differs from dpkg-deb -x's tree: {diff}")
        return (sum(1 for v in a.values() if isinstance(v, int)),
                sum(v for v in a.values() if isinstance(v, int)))

    def report(self, nfiles, content):
        sizes = [d[2].stat().st_size for d in self.debs]
        print(f"Debian set     {len(self.debs)} .debs of {self.suite}, {sum(sizes) / MIB:.0f} MiB "
              f"(largest {', '.join(f'{s / MIB:.0f}' for s in sizes[:4])} MiB), unpacked "
              f"{content / MIB:.0f} MiB in {nfiles} files; trees of (a) and (b) equal")
        print("page cache     " + (f"NOT dropped ({self.cache_note}); a sync before every run"
                                    if self.cache_note else "dropped before every run"))
        med = {k: statistics.median(r[0] for r in v) for k, v in self.results.items()}
        for k, label in PIPELINES.items():
            runs = "  ".join(f"{w:.1f}s/{c:.0f}cpu@{ld:.1f}" for w, c, _, ld in self.results[k])
            cpu = statistics.median(r[1] for r in self.results[k])
            print(f"  ({k:2s}) {label:38s} median {med[k]:6.2f} s  cpu {cpu:6.1f} s  peak "
                  f"{max(r[2] for r in self.results[k]):6.1f} MiB")
            print(f"       runs (wall/cpu@load): {runs}")
        ratio = med["b"] / med["a"]
        peak = statistics.median(r[2] for r in self.results["b"])
        print(f"  (b)/(a) = {ratio:.2f} (goal <= 0.35: {'met' if ratio <= 0.35 else 'NOT met'}); "
              f"(b)/(x2) = {med['b'] / med['x2']:.2f}; floor (x2)/(a) = {med['x2'] / med['a']:.2f}")
        print(f"  peak memory of (b) = {peak:.1f} MiB, median (goal <= 64: "
              f"{'met' if peak <= 64 else 'NOT met'})")
        # What contention cannot move: CPU seconds, spread over every core.
        cores = os.cpu_count() or 1
        cpu = {k: statistics.median(r[1] for r in v) for k, v in self.results.items()}
        print(f"  on {cores} idle cores: (x2)'s decoding alone at least {cpu['x2'] / cores:.1f} s "
              f"({cpu['x2'] / cores / med['a']:.2f} x (a)'s median), (b)'s CPU "
              f"{cpu['b'] / cores:.1f} s ({cpu['b'] / cores / med['a']:.2f} x)")


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__.strip().splitlines()[-1])
    sys.stdout.reconfigure(line_buffering=True)  # each line as it is printed, under ctest too
    cfapkg = os.path.abspath(sys.argv[1])
    if len(sys.argv) > 2 and sys.argv[2]:  # "" is the default, as when left out
        repo = pathlib.Path(sys.argv[2]).resolve()
    else:
        repo = pathlib.Path(subprocess.run([str(HERE.parent / "scripts" / "debian-sid-rocm")],
                                           check=True, capture_output=True, text=True)
                            .stdout.strip())
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    for tool in ("dpkg-deb", "curl", "sha256sum", "/usr/bin/time", "xargs", "ar", "xz"):
        if not shutil.which(tool):
            sys.exit(f"{tool} not found")
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="cfapkg-debbench-", dir=os.environ.get("BENCH_TMP")))
    bench = None
    try:
        # One run's tree at a time: the unpacked size, about 8 times the .debs.
        need = 10 * sum(p.stat().st_size for p in repo.rglob("*.deb")) + (1 << 30)
        if shutil.disk_usage(tmp).free < need:
            sys.exit(f"{tmp}: {shutil.disk_usage(tmp).free / 2**30:.1f} GiB free, the benchmark "
                     f"needs {need / 2**30:.1f} GiB; set BENCH_TMP to a larger disk")
        print(f"machine        {machine()}")
        bench = Bench(cfapkg, repo, tmp)
        for rnd in range(rounds):
            for key in rotated(list(PIPELINES), rnd):
                bench.one(key, rnd)
        nfiles, content = bench.compare()
        print(f"machine after  {machine()}")
        bench.report(nfiles, content)
    finally:
        if bench:
            bench.srv.stop()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
