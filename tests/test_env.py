#!/usr/bin/env python3
"""Environments end to end, against nginx on 127.0.0.1 serving a test
channel (tests/channel.py): install, a second environment pinned to
another ZLUDA sharing every other prefix, history and rollback, lockfiles
reproduced in a fresh root, verify, gc, and four installs at once."""
import json
import os
import subprocess
import sys

import channel
import harness


BIN = sys.argv[1]
check = harness.Checks()



def test_install(root):
    r = root.change("install", "pytorch-cuda-stack", "zluda==6-preview.69")
    check("install exits 0", r.returncode == 0, r.stderr)
    check("install reports the generation", "generation 1" in r.stdout, r.stdout)
    check("the set is listed", root.listing() == {"zluda": "6-preview.69",
                                                  "libtorch-cuda": "2.3.0+cu118",
                                                  "pytorch-cuda-stack": "1"}, root.listing())
    view = root.view("default", "zluda")
    check("layout names are in the view", (view / "cublas64_11.dll").read_bytes() ==
          (view / "cublas.dll").read_bytes())
    store = list((root.path / "store").glob("libtorch-cuda-2.3.0+cu118-*"))
    check("one store prefix per package version", len(store) == 1, store)
    lib = root.view("default", "libtorch-cuda") / "lib" / "torch_cpu.dll"
    check("the view is hard links into the store",
          lib.stat().st_ino == (store[0] / "lib" / "torch_cpu.dll").stat().st_ino)
    gen = root.path / "envs" / "default" / "1"
    check("a generation holds lock, meta and runtime config",
          all((gen / f).is_file() for f in ("lock.json", "meta.json", "runtime.json", "good")))
    r = root.change("install", "pytorch-cuda-stack", "zluda==6-preview.69")
    check("a repeated install does nothing", r.returncode == 0 and "Nothing to do" in r.stdout
          and root.current() == 1, r.stdout + r.stderr)
    r = root.run("install", "pytorch-cuda-stack", *channel.FACTS, "--dry-run")
    check("dry run shows the plan and changes nothing",
          r.returncode == 0 and "6-preview.69" in r.stdout and root.current() == 1, r.stderr)


def test_second_env(root):
    r = root.run("env", "create", "preview")
    check("env create", r.returncode == 0, r.stderr)
    r = root.run("env", "create", "preview")
    check("env create twice is refused", r.returncode != 0 and "already exists" in r.stderr)
    r = root.run("env", "create", "../x")
    check("a bad env name is refused", r.returncode == 2 and "not an environment name" in r.stderr)
    r = root.run("pin", "--env", "preview", "zluda==7-preview.10")
    check("pin", r.returncode == 0, r.stderr)
    r = root.run("pins", "--env", "preview", "--json")
    check("pins lists it", json.loads(r.stdout or "[]") == ["zluda==7-preview.10"], r.stdout)
    r = root.change("install", "--env", "preview", "pytorch-cuda-stack")
    check("the pin binds the install", r.returncode == 0 and
          root.listing("preview").get("zluda") == "7-preview.10", r.stdout + r.stderr)
    a = root.view("default", "libtorch-cuda") / "lib" / "torch_cpu.dll"
    b = root.view("preview", "libtorch-cuda") / "lib" / "torch_cpu.dll"
    check("two environments share LibTorch (same inode)", a.stat().st_ino == b.stat().st_ino)
    check("the store holds LibTorch once",
          len(list((root.path / "store").glob("libtorch-cuda-*"))) == 1)
    check("each environment has its own ZLUDA",
          (root.view("default", "zluda") / "nvcuda.dll").read_text() != (
              root.view("preview", "zluda") / "nvcuda.dll").read_text())
    r = root.run("plan", "--env", "preview", "zluda==6-preview.69", *channel.FACTS)
    check("a request against the pin names the pin", r.returncode == 3 and
          "pin zluda==7-preview.10" in r.stderr, r.stderr)
    r = root.run("unpin", "--env", "preview", "zluda")
    check("unpin", r.returncode == 0 and root.run("pins", "--env", "preview").stdout == "")
    r = root.run("unpin", "--env", "preview", "zluda")
    check("unpin of nothing pinned", r.returncode == 4 and "not pinned" in r.stderr)
    r = root.run("env", "list", "--json")
    names = [e["name"] for e in json.loads(r.stdout)]
    check("env list", names == ["default", "preview"], names)


def test_history_rollback(root):
    r = root.change("install", "zluda")
    check("install of an installed package keeps its version",
          r.returncode == 0 and root.listing()["zluda"] == "6-preview.69", r.stdout + r.stderr)
    r = root.change("update", "zluda")
    check("update moves to the newest that fits", r.returncode == 0 and
          root.listing()["zluda"] == "7-preview.10" and root.current() == 3, r.stdout + r.stderr)
    r = root.run("rollback")
    check("rollback goes to the generation before", r.returncode == 0 and root.current() == 2 and
          root.listing()["zluda"] == "6-preview.69", r.stdout + r.stderr)
    r = root.run("rollback", "--to", "3")
    check("rollback --to", r.returncode == 0 and root.current() == 3)
    r = root.run("rollback", "--to", "99")
    check("rollback to a missing generation", r.returncode == 4 and root.current() == 3, r.stderr)
    (root.path / "envs" / "default" / "2" / "good").unlink()
    r = root.run("rollback", "--known-good")
    check("rollback --known-good skips generations not checked good",
          r.returncode == 0 and root.current() == 1, r.stdout + r.stderr)
    r = root.run("history", "--json")
    h = json.loads(r.stdout)
    gens = [e for e in h if e["event"] == "generation"]
    switches = [e for e in h if e["event"] == "switch"]
    check("history lists the generations", [g["generation"] for g in gens] == [1, 2, 3], gens)
    check("history records the commands", gens[2]["command"] == "update zluda" and
          "6-preview.69 -> 7-preview.10" in gens[2]["changes"], gens[2])
    check("history marks the current and known-good ones",
          [g["current"] for g in gens] == [True, False, False] and
          [g["good"] for g in gens] == [True, False, True], gens)
    check("rollbacks are recorded", [(s["from"], s["generation"]) for s in switches] ==
          [(3, 2), (2, 3), (3, 1)], switches)
    r = root.run("rollback", "--to", "3", env={"http_proxy": "http://127.0.0.1:9"})
    check("rollback needs no network", r.returncode == 0 and root.current() == 3)


def test_remove(root):
    r = root.change("install", "pytorch-cuda-stack")
    r = root.change("remove", "zluda")
    check("remove of a package still needed keeps it", r.returncode == 0 and
          "zluda" in root.listing(), r.stdout + r.stderr)
    r = root.change("remove", "nothing-like-this")
    check("remove of something not requested", r.returncode == 4 and "not installed by request"
          in r.stderr, r.stderr)
    r = root.change("remove", "pytorch-cuda-stack")
    check("removing the last request is refused", r.returncode == 2, r.stderr)


def test_lockfile(root, tmp):
    lock = tmp / "stack.lock"
    r = root.run("lock", "--env", "preview", "-o", str(lock))
    doc = json.loads(lock.read_text())
    check("lock writes the exact set", r.returncode == 0 and doc["format"] == "cfapkg-lock" and
          doc["version"] == 1 and {p["name"]: p["version"] for p in doc["packages"]}[
              "zluda"] == "7-preview.10" and all(len(p.get("sha256", "x" * 64)) == 64
                                                   for p in doc["packages"]), doc)
    fresh = channel.Root(BIN, tmp / "fresh", root.recipes)
    (tmp / "no-recipes").mkdir()
    r = fresh.run("install", "--locked", str(lock), *channel.FACTS, "--yes",
                  env={"CFAPKG_RECIPES": str(tmp / "no-recipes")})
    check("install --locked reproduces the set without the recipes",
          r.returncode == 0 and fresh.listing() == root.listing("preview"), r.stdout + r.stderr)
    other = channel.Root(BIN, tmp / "other", root.recipes)
    r = other.run("install", "--locked", str(lock), "--gpu", "gfx1100", "--yes")
    check("install --locked names the fact that differs", r.returncode == 3 and
          "gpu" in r.stderr and "gfx1100" in r.stderr and other.current() == 0, r.stderr)
    elsewhere = "linux" if doc["facts"]["os"] == "windows" else "windows"
    r = other.run("install", "--locked", str(lock), "--os", elsewhere, "--gpu", "gfx1200",
                  "--yes")
    check("install --locked on another OS", r.returncode == 3 and "os:" in r.stderr, r.stderr)
    bad = tmp / "bad.lock"
    doc["packages"][0]["store"] = "../../etc"
    bad.write_text(json.dumps(doc))
    r = fresh.run("install", "--locked", str(bad), *channel.FACTS, "--yes")
    check("a lockfile cannot point outside the store", r.returncode == 2 and
          "store must be" in r.stderr and "bad.lock" in r.stderr, r.stderr)
    doc["version"] = 9
    bad.write_text(json.dumps(doc))
    r = fresh.run("install", "--locked", str(bad), *channel.FACTS, "--yes")
    check("a newer lockfile version is refused", r.returncode == 2 and "version 9" in r.stderr)


def test_verify(root):
    r = root.run("verify")
    check("verify passes", r.returncode == 0 and "all match" in r.stdout, r.stdout + r.stderr)
    f = root.view("default", "zluda") / "nvcuda.dll"
    saved = f.read_bytes()
    f.write_bytes(b"tampered")
    r = root.run("verify")
    check("verify names a changed file", r.returncode == 9 and "nvcuda.dll changed" in r.stderr,
          r.stderr)
    f.write_bytes(saved)
    check("and passes again once restored", root.run("verify").returncode == 0)
    if os.name == "posix" and not os.environ.get("CFAPKG_TEST_EMULATOR"):
        # The manifest keeps each file's permission bits: a lost +x shows.
        mode = f.stat().st_mode & 0o777
        f.chmod(mode ^ 0o111)
        r = root.run("verify")
        check("verify names a file whose permissions changed",
              r.returncode == 9 and "nvcuda.dll has permissions" in r.stderr and
              f"installed with {mode:04o}" in r.stderr, r.stderr)
        f.chmod(mode)


def test_gc(root):
    before = {p.name for p in (root.path / "store").iterdir()}
    r = root.run("env", "remove", "preview")
    check("env remove", r.returncode == 0 and not (root.path / "envs" / "preview").exists())
    r = root.run("gc", "--keep", "1", "--json")
    out = json.loads(r.stdout or "{}")
    after = {p.name for p in (root.path / "store").iterdir()}
    check("gc removes old generations and unused prefixes", r.returncode == 0 and
          out.get("generations", 0) >= 1 and out.get("bytes_freed", 0) > 0, r.stdout + r.stderr)
    check("gc keeps what the current generation uses",
          all(p in after for p in before if p.startswith("libtorch")) and
          root.run("verify").returncode == 0)
    check("gc leaves no trash", not any((root.path / "trash").iterdir()))
    r = root.run("rollback", "--to", "1")
    check("a collected generation is gone", r.returncode == 4)


def test_concurrent(root):
    for i in range(4):
        root.run("env", "create", f"c{i}")
    env = dict(os.environ, CFAPKG_ROOT=str(root.path), CFAPKG_RECIPES=str(root.recipes))
    procs = [subprocess.Popen([*harness.EMULATOR, BIN, "install", "--env", f"c{i}",
                               "pytorch-cuda-stack", *channel.FACTS, "--yes"],
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for i in range(4)]
    results = [p.communicate(timeout=harness.TIMEOUT) for p in procs]
    check("four installs at once all succeed", all(p.returncode == 0 for p in procs),
          [r[1] for r in results])
    check("each environment got its set", all(root.current(f"c{i}") == 1 for i in range(4)))
    check("the store is unpacked once", len(list((root.path / "store").glob("zluda-7*"))) == 1)
    check("verify passes after concurrent installs", root.run("verify").returncode == 0)


def main():
    with channel.served("cfapkg-env-") as (tmp, _, recipes):
        root = channel.Root(BIN, tmp / "root", recipes)
        test_install(root)
        test_second_env(root)
        test_history_rollback(root)
        test_remove(root)
        test_lockfile(root, tmp)
        test_verify(root)
        test_gc(root)
        test_concurrent(channel.Root(BIN, tmp / "root4", recipes))
    return check.report()


if __name__ == "__main__":
    sys.exit(main())
