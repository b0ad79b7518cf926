#!/usr/bin/env python3
"""A lab installing from one local mirror, end to end on 127.0.0.1.

The recipes name the real upstream places (github.com, download.pytorch.org)
with the true hashes of small stand-in archives.  The lab admin's root has
the archives in its cache (add-file) and runs 'mirror create --key', which
lays them out by URL beside a signed channel of exactly the stack's
recipes; nginx serves that folder.  A fresh client root follows the
mirror's channel, takes the mirror rules from mirrors.conf.example, and
installs pytorch-cuda-stack with every proxy pointing at a dead local port,
so the real upstream cannot be reached (and is never contacted).  Without
the rules the same install fails; with them nginx serves each archive
exactly once.
"""
import json
import pathlib
import re
import shutil
import socket
import sys

import channel
import harness

BIN = sys.argv[1]
check = harness.Checks()
FACTS = ["--gpu", "gfx1200", "--arch", "x86_64", "--os", "linux"]
UPSTREAM = {"zluda6.zip": "https://github.com/vosen/ZLUDA/releases/download/v6/zluda6.zip",
            "zluda7.tar.gz": "https://github.com/vosen/ZLUDA/releases/download/v7/zluda7.tar.gz",
            "libtorch.zip": "https://download.pytorch.org/libtorch/cu118/libtorch.zip"}


def dead_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Root:
    """A cfapkg root on its own: no built-in recipes, no user mirror file,
    and no way past this machine (every proxy is a dead local port)."""

    def __init__(self, path, dead, recipes=""):
        self.path = pathlib.Path(path)
        proxy = f"http://127.0.0.1:{dead}"
        self.env = {"CFAPKG_ROOT": str(self.path), "CFAPKG_NO_BUILTIN_RECIPES": "1",
                    "CFAPKG_RECIPES": str(recipes), "CFAPKG_MIRRORS": "",
                    "http_proxy": proxy, "https_proxy": proxy, "HTTPS_PROXY": proxy,
                    "no_proxy": "127.0.0.1", "NO_PROXY": "127.0.0.1"}

    def run(self, *args):
        return harness.run(BIN, *args, env=self.env)


def admin_side(tmp, www, recipes, dead):
    """The admin's root: the archives in its cache, then the mirror."""
    admin = Root(tmp / "admin", dead, recipes)
    r = admin.run("add-file", *(str(www / n) for n in UPSTREAM))
    check("the admin's cache takes the archives the recipes expect", r.returncode == 0,
          r.stdout + r.stderr)
    harness.run(BIN, "channel", "keygen", str(tmp / "lab.key"))
    mirror = tmp / "srv"
    r = admin.run("mirror", "create", str(mirror), "pytorch-cuda-stack", *FACTS, "--key",
                  str(tmp / "lab.key"), "--name", "lab")
    check("mirror create lays out the stack and signs its recipes", r.returncode == 0 and
          (mirror / "channel" / "index.json.sig").is_file(), r.stdout + r.stderr)
    index = json.loads((mirror / "channel" / "index.json").read_text() or "{}")
    check("the mirror's channel holds exactly the stack's recipes",
          sorted(index.get("recipes", {})) == ["libtorch-cuda", "pytorch-cuda-stack", "zluda"],
          sorted(index.get("recipes", {})))
    return mirror


def client_side(tmp, mirror, srv, dead):
    client = Root(tmp / "client", dead)
    r = client.run("channel", "add", "lab", srv.url("channel"), "--key",
                   str(tmp / "lab.key") + ".pub")
    check("a fresh client follows the mirror's channel", r.returncode == 0, r.stdout + r.stderr)
    r = client.run("install", "pytorch-cuda-stack", *FACTS, "--yes", "--retries", "1")
    check("without mirror rules the real upstream cannot be reached",
          r.returncode == 8, r.stdout + r.stderr)
    base = srv.url("").rstrip("/")
    rules = (mirror / "mirrors.conf.example").read_text().replace("http://MIRROR", base)
    (client.path / "mirrors.conf").write_text(rules)
    r = client.run("install", "pytorch-cuda-stack", *FACTS, "--yes")
    check("with the rules the stack installs from the mirror", r.returncode == 0,
          r.stdout + r.stderr)
    r = client.run("list", "--json")
    names = {p["name"] for p in json.loads(r.stdout or "{}").get("packages", [])} if r.returncode == 0 else set()
    check("the environment holds the stack", {"zluda", "libtorch-cuda"} <= names, r.stdout)
    return client


def served_once(tmp):
    log = (tmp / "nginx" / "logs" / "access.log").read_text()
    for name, url in UPSTREAM.items():
        path = re.escape(url.split("://", 1)[1])
        hits = re.findall(rf"^/{path} HTTP/[0-9.]+ 200 ", log, re.MULTILINE)
        if name != "zluda6.zip":  # the stack for gfx1200 takes ZLUDA 7
            check(f"nginx served {name} once", len(hits) == 1, log[-2000:])


def main():
    with channel.www_served("cfapkg-lab-") as (tmp, srv):
        dead = dead_port()
        www, recipes = channel.write(tmp / "stand-ins", lambda n: UPSTREAM[n])
        shutil.rmtree(tmp / "www")
        mirror = admin_side(tmp, www, recipes, dead)
        (tmp / "www").symlink_to(mirror)
        client_side(tmp, mirror, srv, dead)
        served_once(tmp)
    return check.report()


if __name__ == "__main__":
    sys.exit(main())
