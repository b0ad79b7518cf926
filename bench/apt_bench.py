#!/usr/bin/env python3
"""APT source benchmark, side by side in one run, against nginx on 127.0.0.1.

A ROCm-sized set of real .debs (built here with dpkg-deb from generated
trees: a few large libraries of mostly incompressible bytes, Tensile-like
kernel folders, headers, bitcode; about 340 MiB of .debs by default) in Debian's
repository layout, with a Packages index:
  (a) what apt-get download + dpkg-deb -x amounts to: curl the index, then
      for each .deb in turn curl it, check its SHA-256 with sha256sum and
      dpkg-deb -x it into one folder; then sync
  (b) cfapkg install of a recipe whose APT source pins that index: fetch the
      index, the .debs in parallel, each unpacked as it arrives into one
      store folder, verify, sync, write a generation; a fresh root every run
ROUNDS rounds, the order rotated each round, the page cache dropped before
every run where allowed.  Goals, on the medians: (b) <= 0.5 x (a), peak
memory of (b) <= 64 MiB.

usage: apt_bench.py CFAPKG [DEB_TOTAL_MIB] [ROUNDS] [zstd|xz]
"""
import hashlib
import json
import os
import pathlib
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests" / "servers"))
from nginx import Nginx  # noqa: E402
from fetch_bench import sha_file, timed  # noqa: E402  (SHA-256; wall seconds and peak MiB)

ROCM = "6.4.1"
BUILD = "60401-83~24.04"
SUITE = "noble"
PREFIX = f"opt/rocm-{ROCM}"
MULTIARCH = "usr/lib/x86_64-linux-gnu"
LEVEL = {"zstd": 9, "xz": 6}  # fixed, stated in the output
FACTS = ["--os", "linux", "--arch", "x86_64", "--gpu", "gfx1030", "--allow-experimental"]

# name, upstream version, where its files go, and what it holds at the
# nominal size (scale 1: about 252 MiB of .debs in all, 315 MiB unpacked):
#   lib: (soname base, major, MiB), kernels: (folder, count, KiB each),
#   headers: (folder, count), bitcode: count of .bc files, data: (path, MiB)
PACKAGES = [
    ("rocblas", "4.4.0", PREFIX, {"lib": ("librocblas", "4", 58),
                                  "kernels": ("lib/rocblas/library", 640, 48)}),
    ("miopen-hip", "3.4.0", PREFIX, {"lib": ("libMIOpen", "1", 66),
                                     "data": ("share/miopen/db/gfx1030.kdb", 8)}),
    ("hipblaslt", "0.12.0", PREFIX, {"lib": ("libhipblaslt", "0", 18),
                                     "kernels": ("lib/hipblaslt/library", 820, 40)}),
    ("rocsparse", "3.4.0", PREFIX, {"lib": ("librocsparse", "1", 42)}),
    ("rocfft", "1.0.32", PREFIX, {"lib": ("librocfft", "0", 19)}),
    ("rocsolver", "3.28.0", PREFIX, {"lib": ("librocsolver", "0", 15)}),
    ("hip-runtime-amd", "6.4.43483", PREFIX, {"lib": ("libamdhip64", "6", 13)}),
    ("comgr", "3.0.0", MULTIARCH, {"lib": ("libamd_comgr", "3", 9)}),
    ("hsa-rocr", "1.15.0", MULTIARCH, {"lib": ("libhsa-runtime64", "1", 4)}),
    ("rocm-device-libs", "1.0.0", PREFIX, {"bitcode": 96}),
    ("rocprim-dev", "3.4.0", PREFIX, {"headers": ("include/rocprim", 420)}),
    ("hipblas-dev", "2.4.0", PREFIX, {"headers": ("include/hipblas", 60)}),
    ("rocm-core", ROCM, PREFIX, {"lib": ("librocm-core", "1", 0.05)}),
]
NOMINAL_MIB = 252  # .deb MiB at scale 1, as built with zstd -9
DEFAULT_MIB = 340

WORDS = (b"hipblasStatus_t rocblas_handle const float double rocblas_int batch_count "
         b"stride lda ldb ldc alpha beta _ZN7rocblas8internal gemm_ex kernel launch "
         b"__global__ __device__ template typename hipStream_t return if else for ").split()


def text(rng, size):
    """Compressible bytes: symbol-table and source-like text."""
    out = bytearray()
    while len(out) < size:
        out += b" ".join(rng.choice(WORDS) for _ in range(12)) + b"_%d;\n" % rng.randrange(1 << 20)
    return bytes(out[:size])


def blob(rng, size, noise, pool):
    """size bytes, a fraction noise of them random (machine code and data
    that do not compress), the rest slices of a text pool."""
    out = bytearray()
    while len(out) < size:
        n = min(65536, size - len(out))
        if rng.random() < noise:
            out += rng.randbytes(n)
        else:
            o = rng.randrange(len(pool) - n)
            out += pool[o:o + n]
    return bytes(out)


def put(path, data, mode=0o644):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    path.chmod(mode)


def fill_tree(top, name, version, where, what, scale, seed):
    rng = random.Random(seed)
    pool = text(rng, 1 << 20)
    base = top / where
    libdir = base if where == MULTIARCH else base / "lib"
    if "lib" in what:
        soname, major, mib = what["lib"]
        full = f"{soname}.so.{major}.{version.split('.')[1]}.{BUILD.split('-')[0]}"
        put(libdir / full, blob(rng, int(mib * scale * (1 << 20)), 0.85, pool))
        os.symlink(full, libdir / f"{soname}.so.{major}")
        os.symlink(f"{soname}.so.{major}", libdir / f"{soname}.so")
    if "kernels" in what:
        folder, count, kib = what["kernels"]
        for i in range(count):
            arch = ("gfx90a", "gfx942", "gfx1030", "gfx1100", "gfx1201")[i % 5]
            size = int(rng.uniform(0.3, 1.7) * kib * scale * 1024)
            if i % 4 == 3:
                put(base / folder / f"TensileLibrary_Type_{i:04d}_{arch}.dat", text(rng, size // 4))
            else:
                put(base / folder / f"Kernels_{i:04d}_{arch}.co", blob(rng, size, 0.7, pool))
    if "data" in what:
        path, mib = what["data"]
        put(base / path, blob(rng, int(mib * scale * (1 << 20)), 0.3, pool))
    if "headers" in what:
        folder, count = what["headers"]
        for i in range(count):
            put(base / folder / f"{name.replace('-dev', '')}_{i:03d}.hpp",
                text(rng, rng.randrange(2000, 40000)))
    if "bitcode" in what:
        for i in range(what["bitcode"]):
            put(base / "amdgcn" / "bitcode" / f"lib{i:02d}.bc",
                blob(rng, int(rng.uniform(0.5, 1.5) * 40960 * scale), 0.5, pool))
    if name == "hip-runtime-amd":
        put(base / "bin" / "hipconfig", b"#!/bin/sh\necho " + version.encode() + b"\n", 0o755)
    put(top / "usr/share/doc" / name / "copyright", b"generated for a benchmark\n")


def build_deb(tmp, pool_dir, pkg, scale, comp, seed):
    name, upstream, where, what = pkg
    version = f"{upstream}.{BUILD}" if name != "rocm-core" else f"{ROCM}.{BUILD}"
    top = tmp / "trees" / name
    fill_tree(top, name, version, where, what, scale, seed)
    (top / "DEBIAN").mkdir()
    depends = "" if name == "rocm-core" else f"Depends: rocm-core (= {ROCM}.{BUILD})\n"
    (top / "DEBIAN" / "control").write_text(
        f"Package: {name}\nVersion: {version}\nArchitecture: amd64\n"
        f"Maintainer: Benchmark <bench@example.org>\n{depends}Section: devel\n"
        f"Priority: optional\nDescription: {name} for the APT benchmark\n"
        " A generated package shaped like ROCm's.\n")
    deb = pool_dir / name[0] / name / f"{name}_{version}_amd64.deb"
    deb.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(["dpkg-deb", "--root-owner-group", f"-Z{comp}", f"-z{LEVEL[comp]}", "--build",
                    str(top), str(deb)], check=True, stdout=subprocess.DEVNULL)
    shutil.rmtree(top)
    return name, version, deb, sha_file(deb)


def write_index(repo, debs):
    """dists/SUITE/main/binary-amd64/Packages: dpkg-scanpackages's when it
    is installed (package dpkg-dev), else the fields cfapkg and apt read."""
    index = repo / "dists" / SUITE / "main" / "binary-amd64" / "Packages"
    index.parent.mkdir(parents=True)
    if shutil.which("dpkg-scanpackages"):
        out = subprocess.run(["dpkg-scanpackages", "-a", "amd64", "pool"], cwd=repo, check=True,
                             capture_output=True).stdout
        index.write_bytes(out)
        return index, "dpkg-scanpackages"
    stanzas = [f"Package: {n}\nVersion: {v}\nArchitecture: amd64\n"
               f"Filename: {d.relative_to(repo).as_posix()}\nSize: {d.stat().st_size}\n"
               f"SHA256: {sha}\n" for n, v, d, sha in debs]
    index.write_text("\n".join(stanzas))
    return index, "written by the benchmark"


def make_repo(tmp, total_mib, comp):
    repo = tmp / "www" / "rocm"
    scale = total_mib / NOMINAL_MIB
    with ThreadPoolExecutor(os.cpu_count() or 2) as ex:
        debs = list(ex.map(lambda p: build_deb(tmp, repo / "pool" / "main", p[1], scale, comp,
                                               p[0]), enumerate(PACKAGES)))
    index, how = write_index(repo, debs)
    return repo, debs, index, how


def write_recipe(folder, url, index, debs):
    src = {"apt": {"repository": url, "suite": SUITE, "component": "main",
                   "index_sha256": sha_file(index), "index_size": index.stat().st_size,
                   "packages": [f"{d[0]}={d[1]}" for d in debs]}}
    folder.mkdir()
    (folder / "rocm-like.json").write_text(json.dumps({
        "format": 1, "name": "rocm-like", "summary": "a ROCm-sized APT set (benchmark)",
        "versions": [{"version": ROCM, "os": ["linux"], "sources": {"linux-x86_64": src}}]},
        indent=1))


def drop_caches():
    """sync, then drop the page cache (root only).  None when dropped, else
    why not."""
    subprocess.run(["sync"], check=True)
    if os.geteuid() != 0:
        return "not root"
    try:
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("3\n")
    except OSError as e:
        return f"/proc/sys/vm/drop_caches: {e.strerror}"
    return None


def listing(top):
    """Relative path -> size of each file, target of each link."""
    found = {}
    for dirpath, dirs, files in os.walk(top):
        dirs[:] = [d for d in dirs if d != ".cfapkg"]
        for f in files + [d for d in dirs if os.path.islink(os.path.join(dirpath, d))]:
            p = os.path.join(dirpath, f)
            rel = os.path.relpath(p, top)
            found[rel] = os.readlink(p) if os.path.islink(p) else os.path.getsize(p)
    return found


def dpkg_steps(work, srv, repo, index, debs):
    """(a)'s commands: curl, sha256sum -c, dpkg-deb -x, one .deb after
    another, then sync.  The checksum lists (what apt takes from the index)
    are written now, before the page cache is dropped."""
    dl, tree, sums = work / "debs", work / "tree", work / "sums"
    for d in (dl, tree, sums):
        d.mkdir(parents=True)
    steps = [["curl", "-sSf", "-o", str(dl / "Packages"),
              srv.url(index.relative_to(repo.parent).as_posix())]]
    for _, _, deb, sha in debs:
        local, check = dl / deb.name, sums / f"{deb.name}.sha256"
        check.write_text(f"{sha}  {local}\n")
        steps += [["curl", "-sSf", "-o", str(local),
                   srv.url(deb.relative_to(repo.parent).as_posix())],
                  ["sha256sum", "--quiet", "-c", str(check)],
                  ["dpkg-deb", "-x", str(local), str(tree)]]
    steps.append(["sync"])
    return steps, tree


def run_dpkg(steps):
    wall, peak = 0.0, 0.0
    for argv in steps:
        w, m = timed(argv)
        wall += w
        peak = max(peak, m)
    return wall, peak


def run_cfapkg(cfapkg, work, recipes):
    """(b): cfapkg install into a fresh root."""
    env = dict(os.environ, CFAPKG_ROOT=str(work / "root"), CFAPKG_RECIPES=str(recipes),
               CFAPKG_GPU="", CFAPKG_NO_BUILTIN_RECIPES="1")
    return timed([cfapkg, "install", "rocm-like", *FACTS, "--yes", "--quiet"], env)


def cfapkg_store(work):
    stores = list((work / "root" / "store").glob(f"rocm-like-{ROCM}-*"))
    if len(stores) != 1:
        sys.exit(f"cfapkg install left {len(stores)} store folders for rocm-like")
    return stores[0]


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__.strip().splitlines()[-1])
    cfapkg = os.path.abspath(sys.argv[1])
    total_mib = int(sys.argv[2]) if len(sys.argv) > 2 else DEFAULT_MIB
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    comp = sys.argv[4] if len(sys.argv) > 4 else "zstd"
    if comp not in LEVEL:
        sys.exit(f"compression {comp}: zstd or xz")
    for tool in ("dpkg-deb", "curl", "sha256sum", "/usr/bin/time"):
        if not shutil.which(tool):
            sys.exit(f"{tool} not found")
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="cfapkg-aptbench-", dir=os.environ.get("BENCH_TMP")))
    srv = None
    try:
        # The repository, and per run its .debs and their tree (a), or the
        # download cache and the store (b): about 2.4 times the .debs each;
        # no run's folder is deleted until the end (see bench/README.md).
        need = (1 + 2 * rounds * 2.4) * total_mib * (1 << 20) + (1 << 30)
        free = shutil.disk_usage(tmp).free
        if free < need:
            sys.exit(f"{tmp}: {free / 2**30:.1f} GiB free, the benchmark needs "
                     f"{need / 2**30:.1f} GiB; set BENCH_TMP to a larger disk or pass a "
                     "smaller DEB_TOTAL_MIB")
        t = time.perf_counter()
        repo, debs, index, how = make_repo(tmp, total_mib, comp)
        made = time.perf_counter() - t
        sizes = sorted((d[2].stat().st_size for d in debs), reverse=True)
        deb_total = sum(sizes)
        srv = Nginx(tmp / "www", tmp / "nginx")
        recipes = tmp / "recipes"
        write_recipe(recipes, srv.url("rocm"), index, debs)
        results = {"a": [], "b": []}
        trees = {}
        cache_note = None
        for rnd in range(rounds):
            for key in ("ab" if rnd % 2 == 0 else "ba"):  # rotated
                # A fresh folder per run, none deleted until the end: ext4
                # spends seconds finding inodes near many recently deleted
                # ones, which would measure the file system, not the tools.
                work = tmp / f"run-{key}-{rnd}"
                work.mkdir()
                if key == "a":
                    steps, tree = dpkg_steps(work, srv, repo, index, debs)
                    cache_note = drop_caches() or cache_note
                    results[key].append(run_dpkg(steps))
                else:
                    cache_note = drop_caches() or cache_note
                    results[key].append(run_cfapkg(cfapkg, work, recipes))
                    tree = cfapkg_store(work)
                trees.setdefault(key, tree)
        a_list, b_list = listing(trees["a"]), listing(trees["b"])
        if a_list != b_list:
            diff = sorted(set(a_list.items()) ^ set(b_list.items()))[:5]
            sys.exit(f"cfapkg's store differs from dpkg-deb -x's tree: {diff}")
        nfiles = sum(1 for v in a_list.values() if isinstance(v, int))
        content = sum(v for v in a_list.values() if isinstance(v, int))
    finally:
        if srv:
            srv.stop()
        shutil.rmtree(tmp, ignore_errors=True)

    mib = 1 << 20
    print(f"APT set        {len(debs)} .debs, {deb_total / mib:.0f} MiB (largest "
          f"{', '.join(f'{s / mib:.0f}' for s in sizes[:4])} MiB; dpkg-deb -Z{comp} "
          f"-z{LEVEL[comp]}), unpacked {content / mib:.0f} MiB in {nfiles} files; "
          f"index by {how}; built in {made:.0f} s"
          + (" (under the 300 MiB of a ROCm set: a trial size)" if deb_total < 300 * mib else ""))
    print("page cache     " + (f"NOT dropped ({cache_note}); a sync before every run"
                                if cache_note else "dropped before every run"))
    med = {k: statistics.median(w for w, _ in v) for k, v in results.items()}
    peak = {k: statistics.median(m for _, m in v) for k, v in results.items()}
    for k, label in (("a", "curl + sha256sum + dpkg-deb -x, sync"),
                     ("b", "cfapkg install (apt source)")):
        runs = " ".join(f"{w:.2f}" for w, _ in results[k])
        print(f"  ({k}) {label:37s} median {med[k]:6.2f} s  peak {peak[k]:6.1f} MiB "
              f"(max {max(m for _, m in results[k]):.1f})  (runs: {runs})")
    ratio = med["b"] / med["a"]
    print(f"  (b)/(a) = {ratio:.2f} (goal <= 0.5: {'met' if ratio <= 0.5 else 'NOT met'}); "
          f"(a) {deb_total / med['a'] / mib:.0f} MiB/s, (b) {deb_total / med['b'] / mib:.0f} MiB/s "
          "of .debs")
    print(f"  peak memory of (b) = {peak['b']:.1f} MiB (goal <= 64: "
          f"{'met' if peak['b'] <= 64 else 'NOT met'})")


if __name__ == "__main__":
    main()
