#!/usr/bin/env python3
"""Environment benchmark: with a 1 GiB LibTorch-shaped package installed,
how long rollback and a no-op install take, and what a second environment
with the same packages costs in time and disk, beside nix-env's rollback
in a single-user store in a temporary folder (when nix-env is installed).

usage: env_bench.py CFAPKG [ARCHIVE_CONTENT_MIB]
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

RUNS = 10


def timed(argv, env=None):
    t = time.perf_counter()
    r = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=3600)
    if r.returncode != 0:
        sys.exit(f"failed: {' '.join(argv)}\n{r.stderr}")
    return time.perf_counter() - t


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


def nix_switch_ms(tmp):
    """Median of nix-env --switch-generation between two generations."""
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
    times = [timed([nix_env, "-p", profile, "--switch-generation", str(1 + i % 2)], env)
             for i in range(RUNS)]
    return statistics.median(times) * 1000, "nix-env --switch-generation, single-user store"


def main():
    cfapkg = os.path.abspath(sys.argv[1])
    content = int(sys.argv[2]) if len(sys.argv) > 2 else 1800
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="cfapkg-envbench-"))
    srv = Nginx(tmp / "www", tmp / "nginx")
    try:
        recipes, size = write_channel(tmp, srv, content)
        root = tmp / "root"
        env = dict(os.environ, CFAPKG_ROOT=str(root), CFAPKG_RECIPES=str(recipes))
        base = [cfapkg, "install", "pytorch-cuda-stack", "zluda==6-preview.69",
                *channel.FACTS, "--yes", "--quiet"]
        cold = timed(base, env)
        unpacked = disk_kib(root / "store") * 1024
        noop = statistics.median(timed(base, env) for _ in range(RUNS))
        timed([cfapkg, "install", "zluda", *channel.FACTS, "--yes", "--quiet"], env)
        timed([cfapkg, "update", "zluda", *channel.FACTS, "--yes", "--quiet"], env)
        rollback = statistics.median(
            timed([cfapkg, "rollback", "--quiet", "--to", str(2 + i % 2)], env)
            for i in range(RUNS))
        timed([cfapkg, "env", "create", "second", "--quiet"], env)
        before = disk_kib(root)
        second = timed([cfapkg, "install", "--env", "second", "pytorch-cuda-stack",
                        "zluda==6-preview.69", *channel.FACTS, "--yes", "--quiet"], env)
        added = (disk_kib(root) - before) * 1024
        nix_ms, nix_how = nix_switch_ms(tmp)
    finally:
        srv.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    mib = 1 << 20
    print(f"package        LibTorch-shaped zip {size / mib:.0f} MiB, unpacked {unpacked / mib:.0f} "
          "MiB (8000 headers + 12 libraries)")
    print(f"cold install   {cold:.2f} s (download, verify, unpack, generation)")
    print(f"no-op install  median {noop * 1000:.1f} ms of {RUNS} (goal < 30 ms: "
          f"{'met' if noop < 0.03 else 'NOT met'})")
    print(f"rollback       median {rollback * 1000:.1f} ms of {RUNS} (goal < 30 ms: "
          f"{'met' if rollback < 0.03 else 'NOT met'})")
    if nix_ms is not None:
        print(f"  vs nix       {nix_how}: median {nix_ms:.1f} ms; cfapkg / nix = "
              f"{rollback * 1000 / nix_ms:.2f}")
    else:
        print(f"  vs nix       not measured: {nix_how}")
    print(f"second env     {second * 1000:.0f} ms = {second / cold:.2%} of the cold install "
          f"(goal <= 2%: {'met' if second / cold <= 0.02 else 'NOT met'})")
    print(f"  disk added   {added / 1024:.0f} KiB = {added / unpacked:.3%} of the unpacked package, "
          f"{added / size:.3%} of the archive (goal < 1%: "
          f"{'met' if added / unpacked < 0.01 else 'NOT met'})")


if __name__ == "__main__":
    main()
