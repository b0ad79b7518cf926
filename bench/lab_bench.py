#!/usr/bin/env python3
"""A lab of CLIENTS workstations installing the stack from one nginx mirror
at once, on 127.0.0.1.

A LibTorch-shaped zip (LIBTORCH_MIB) and a ZLUDA-shaped archive stand in for
the real downloads under their upstream URLs; 'mirror create --key' lays them
out with a signed channel; nginx serves that folder.  Each client is a fresh
root: 'channel add' of the mirror's channel, the mirror rules, then
'install pytorch-cuda-stack', all CLIENTS started together, with every proxy
pointing at a dead local port so nothing leaves the machine.  Reported: the
wall time of the whole lab, per-client times (median and every run), the
mirror's throughput, failures (goal: 0) and how often nginx sent each
archive (goal: exactly once per client).

usage: lab_bench.py CFAPKG [CLIENTS] [LIBTORCH_MIB]
"""
import json
import os
import pathlib
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))
sys.path.insert(0, str(HERE.parent / "tests" / "servers"))
import channel  # noqa: E402
from nginx import Nginx  # noqa: E402

UPSTREAM = {"zluda6.zip": "https://github.com/vosen/ZLUDA/releases/download/v6/zluda6.zip",
            "zluda7.tar.gz": "https://github.com/vosen/ZLUDA/releases/download/v7/zluda7.tar.gz",
            "libtorch.zip": "https://download.pytorch.org/libtorch/cu118/libtorch.zip"}
FACTS = ["--gpu", "gfx1200", "--arch", "x86_64", "--os", "linux"]


def dead_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def env_for(root, dead, recipes=""):
    proxy = f"http://127.0.0.1:{dead}"
    return dict(os.environ, CFAPKG_ROOT=str(root), CFAPKG_NO_BUILTIN_RECIPES="1",
                CFAPKG_RECIPES=str(recipes), CFAPKG_MIRRORS="", http_proxy=proxy,
                https_proxy=proxy, no_proxy="127.0.0.1")


def run(argv, env):
    r = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=3600)
    if r.returncode:
        sys.exit(f"{' '.join(argv)} failed: {r.stderr}")
    return r


def make_mirror(cfapkg, tmp, dead, big_mib):
    www, recipes = channel.write(tmp / "stand-ins", lambda n: UPSTREAM[n],
                                 big=big_mib << 20)
    admin = env_for(tmp / "admin", dead, recipes)
    run([cfapkg, "add-file", *(str(www / n) for n in UPSTREAM)], admin)
    run([cfapkg, "channel", "keygen", str(tmp / "lab.key")], dict(os.environ))
    run([cfapkg, "mirror", "create", str(tmp / "srv"), "pytorch-cuda-stack", *FACTS,
         "--key", str(tmp / "lab.key"), "--name", "lab"], admin)
    return tmp / "srv"


def start_client(cfapkg, tmp, i, srv_url, rules, dead):
    root = tmp / "clients" / str(i)
    root.mkdir(parents=True)
    (root / "mirrors.conf").write_text(rules)
    env = env_for(root, dead)
    script = (f'"{cfapkg}" channel add lab {srv_url}/channel --key "{tmp}/lab.key.pub" '
              f'>/dev/null && "{cfapkg}" install pytorch-cuda-stack {" ".join(FACTS)} '
              f'--yes --quiet')
    return subprocess.Popen(["sh", "-c", f"start=$(date +%s.%N); {script}; rc=$?; "
                             f"echo $start $(date +%s.%N) $rc"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def main():
    cfapkg = os.path.abspath(sys.argv[1])
    clients = int(sys.argv[2]) if len(sys.argv) > 2 else 50
    big = int(sys.argv[3]) if len(sys.argv) > 3 else 40
    with tempfile.TemporaryDirectory(prefix="cfapkg-lab-") as tmp:
        tmp = pathlib.Path(tmp)
        dead = dead_port()
        mirror = make_mirror(cfapkg, tmp, dead, big)
        sizes = {n: (mirror / UPSTREAM[n].split("://", 1)[1]).stat().st_size
                 for n in ("zluda7.tar.gz", "libtorch.zip")}
        srv = Nginx(mirror, tmp / "nginx")
        try:
            url = srv.url("").rstrip("/")
            rules = (mirror / "mirrors.conf.example").read_text().replace("http://MIRROR", url)
            t0 = time.perf_counter()
            procs = [start_client(cfapkg, tmp, i, url, rules, dead) for i in range(clients)]
            outs = [p.communicate(timeout=3600) for p in procs]
            wall = time.perf_counter() - t0
            log = (tmp / "nginx" / "logs" / "access.log").read_text()
        finally:
            srv.stop()
    per, failed = [], 0
    for out, err in outs:
        start, end, rc = out.split()[-3:]
        per.append(float(end) - float(start))
        failed += rc != "0"
        if rc != "0":
            print(f"client failed: {err.strip()[-500:]}")
    sent = {n: len(re.findall(rf"^/{re.escape(UPSTREAM[n].split('://', 1)[1])} HTTP/[0-9.]+ 200 ",
                              log, re.MULTILINE)) for n in sizes}
    total = sum(sizes.values()) * clients
    print(f"lab            {clients} clients at once, each installing {sum(sizes.values()) / 2**20:.1f} "
          f"MiB ({', '.join(f'{n} {s / 2**20:.1f} MiB' for n, s in sizes.items())})")
    print(f"whole lab      {wall:.2f} s; mirror sent {total / 2**20:.0f} MiB: "
          f"{total / 2**20 / wall:.0f} MiB/s")
    print(f"per client     median {statistics.median(per):.2f} s (runs: "
          f"{' '.join(f'{x:.2f}' for x in sorted(per))})")
    print(f"failures       {failed} (goal 0: {'met' if failed == 0 else 'NOT met'})")
    once = all(v == clients for v in sent.values())
    print(f"nginx sends    {json.dumps(sent)} for {clients} clients (goal once per client: "
          f"{'met' if once else 'NOT met'})")
    return 0 if failed == 0 and once else 1


if __name__ == "__main__":
    sys.exit(main())
