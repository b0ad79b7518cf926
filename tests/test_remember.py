#!/usr/bin/env python3
"""An environment remembers the machine it was planned for: on a machine
with no AMD GPU (the no-amd sysroot), install, update, remove and plan in
an environment made with --gpu/--os plan with the facts its active
generation recorded, and say so; a fact flag, CFAPKG_GPU or --facts
describes another machine instead, and a GPU detected here wins."""
import json
import pathlib
import sys

import channel
import harness


BIN = sys.argv[1]
SYSROOTS = pathlib.Path(__file__).resolve().parent / "data" / "sysroots"
ENV = "made"
REUSE = "Using the facts generation"
check = harness.Checks()


def change(root, *args, **kw):
    return root.run(*args, "--env", ENV, "--yes", **kw)


def lock_facts(root):
    lock = root.path / "envs" / ENV / str(root.current(ENV)) / "lock.json"
    return json.loads(lock.read_text())["facts"]


def test_made_with_flags(root):
    r = root.run("env", "create", ENV)
    check("env create", r.returncode == 0, r.stderr)
    r = change(root, "install", "zluda==6-preview.69", "--gpu", "gfx1200", "--os", "linux")
    check("install with the machine described", r.returncode == 0 and REUSE not in r.stderr,
          r.stdout + r.stderr)
    f = lock_facts(root)
    check("the generation records the facts", f["gpu"] == "gfx1200" and f["os"] == "linux", f)


def test_reused(root):
    line = "Using the facts generation 1 was planned with: gfx1200 on linux-x86_64"
    r = change(root, "update")
    check("update reuses the facts", r.returncode == 0 and line in r.stderr,
          r.stdout + r.stderr)
    r = root.run("plan", "--env", ENV, "zluda==7-preview.10")
    check("plan --env reuses them (zluda 7 needs gfx1200)", r.returncode == 0 and
          line in r.stderr and "no AMD GPU" not in r.stderr, r.stdout + r.stderr)
    r = change(root, "install", "pytorch-cuda-stack")
    check("install of another spec reuses them", r.returncode == 0 and line in r.stderr and
          "libtorch-cuda" in root.listing(ENV), r.stdout + r.stderr)
    gen = root.current(ENV)
    r = change(root, "remove", "pytorch-cuda-stack")
    check("remove reuses the newer generation's", r.returncode == 0 and
          f"Using the facts generation {gen} was planned with: gfx1200" in r.stderr and
          "libtorch-cuda" not in root.listing(ENV), r.stdout + r.stderr)
    check("and records them again", lock_facts(root)["gpu"] == "gfx1200")
    r = change(root, "update", "--quiet")
    check("--quiet says nothing of it", r.returncode == 0 and REUSE not in r.stderr,
          r.stdout + r.stderr)


def test_described_again(root):
    r = root.run("plan", "--env", ENV, "zluda==7-preview.10", "--gpu", "gfx1100")
    check("--gpu wins", r.returncode == 3 and REUSE not in r.stderr, r.stdout + r.stderr)
    r = root.run("plan", "--env", ENV, "zluda==7-preview.10", env={"CFAPKG_GPU": "gfx1100"})
    check("CFAPKG_GPU wins", r.returncode == 3 and REUSE not in r.stderr, r.stdout + r.stderr)
    r = root.run("plan", "--env", ENV, "zluda", "--os", "linux")
    check("any fact flag describes the machine anew", r.returncode == 7 and
          REUSE not in r.stderr, r.stderr)
    r = root.run("plan", "--env", ENV, "zluda==7-preview.10",
                 env={"CFAPKG_SYSROOT": str(SYSROOTS / "rx6800")})
    check("a GPU detected here wins, and that is said", r.returncode == 3 and
          "GPU is gfx1030, not the gfx1200 generation" in r.stderr and REUSE not in r.stderr,
          r.stdout + r.stderr)
    r = root.run("plan", "--env", ENV, "zluda==7-preview.10",
                 env={"CFAPKG_SYSROOT": str(SYSROOTS / "rx9060xt")})
    check("the same GPU detected: planned for, nothing more said", r.returncode == 0 and
          "not the gfx1200" not in r.stderr and REUSE not in r.stderr, r.stdout + r.stderr)
    r = change(root, "install", "pytorch-cuda-stack", "--gpu", "gfx1100")
    check("a change with --gpu plans for it", r.returncode == 0 and REUSE not in r.stderr and
          lock_facts(root)["gpu"] == "gfx1100", r.stdout + r.stderr)
    r = change(root, "update")
    f = lock_facts(root)  # the OS is this host's: --gpu alone was given
    check("and later changes remember that one", r.returncode == 0 and
          f"was planned with: gfx1100 on {f.get('os')}-{f.get('arch')}" in r.stderr,
          r.stdout + r.stderr)


def test_nothing_to_remember(root):
    r = root.run("env", "create", "empty")
    r = root.run("install", "--env", "empty", "zluda", "--yes")
    check("an environment with no generation still needs --gpu", r.returncode == 7 and
          "pass --gpu" in r.stderr, r.stderr)


def main():
    with channel.served("cfapkg-remember-") as (tmp, _, recipes):
        root = channel.Root(BIN, tmp / "root", recipes)
        test_made_with_flags(root)
        test_reused(root)
        test_described_again(root)
        test_nothing_to_remember(root)
    return check.report()


if __name__ == "__main__":
    sys.exit(main())
