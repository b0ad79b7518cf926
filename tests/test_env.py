#!/usr/bin/env python3
"""Environments end to end, against nginx on 127.0.0.1 serving a test
channel (tests/channel.py): install, plan answering as install does, a second environment pinned to
another ZLUDA sharing every other prefix, history and rollback, what is
known of each generation (checked, known-good by hand, an older cfapkg's
marks), lockfiles reproduced in a fresh root and refused when they cannot
be trusted, verify, gc, and four installs at once."""
import copy
import json
import os
import shutil
import subprocess
import sys
import time

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
    check("a generation holds lock, meta and runtime config, and its checks' record",
          all((gen / f).is_file() for f in ("lock.json", "meta.json", "runtime.json",
                                            "checked")))
    h = json.loads(root.run("history", "--json").stdout)["history"]
    check("static checks make a generation checked, not known-good",
          h[0]["state"] == "checked" and h[0]["checked"] and not h[0]["good"] and
          h[0]["known_good"] is None and h[0]["marks"] == [], h[0])
    r = root.change("install", "pytorch-cuda-stack", "zluda==6-preview.69")
    check("a repeated install does nothing", r.returncode == 0 and "Nothing to do" in r.stdout
          and root.current() == 1, r.stdout + r.stderr)
    r = root.run("install", "pytorch-cuda-stack", *channel.FACTS, "--dry-run")
    check("dry run shows the plan and changes nothing",
          r.returncode == 0 and "6-preview.69" in r.stdout and root.current() == 1, r.stderr)


def test_lock_image(root):
    """A generation keeps its lock as an image too (lock.img), and reading
    the set from it gives what the JSON gives; a lock.json changed by hand,
    or an image damaged or written by another build, sends the reader back
    to the JSON."""
    gen = root.path / "envs" / "default" / str(root.current())
    image, lock = gen / "lock.img", gen / "lock.json"
    check("the generation holds its lock's image", image.is_file())
    listed = root.run("list", "--json")
    whole = root.run("list", "--json", "--no-index-cache")
    check("the set read from the image is the set read from the JSON",
          listed.returncode == 0 and listed.stdout == whole.stdout and
          "libtorch-cuda" in listed.stdout, listed.stdout + whole.stdout)
    if not harness.EMULATOR and sys.platform.startswith("linux"):
        # Recipes written within the last second are parsed, not cached:
        # aged, then cached by one install, they are read from their images.
        past = time.time() - 3600
        for f in [root.recipes, *root.recipes.rglob("*")]:
            os.utime(f, (past, past))
        root.change("install", "pytorch-cuda-stack", "zluda==6-preview.69")
        r = root.run("install", "pytorch-cuda-stack", "zluda==6-preview.69", *channel.FACTS,
                     "--yes", env={"LD_DEBUG": "files"})
        mapped = {w.split("=", 1)[1] for w in r.stderr.split() if w.startswith("file=")}
        check("a no-op install maps no cJSON: it parses no lock.json",
              "Nothing to do" in r.stdout and mapped and
              not any("cjson" in m for m in mapped), sorted(mapped))

    def requested(name):
        r = root.run("list", "--json")
        return {p["name"]: p["requested"] for p in json.loads(r.stdout)["packages"]}.get(name)

    saved = lock.read_bytes()
    doc = json.loads(saved)
    for p in doc["packages"]:
        if p["name"] == "libtorch-cuda":
            p["requested"] = True
    lock.write_text(json.dumps(doc))
    check("a lock.json edited by hand is read, not the image", requested("libtorch-cuda") is True)
    lock.write_bytes(saved)
    check("and the image holds again once the JSON is as it was",
          root.run("list", "--json").stdout == listed.stdout and
          requested("libtorch-cuda") is False)
    kept = image.read_bytes()
    data = bytearray(kept)
    data[len(data) - 64] ^= 0xFF  # inside the block: its checksum no longer holds
    image.write_bytes(bytes(data))
    damaged = root.run("list", "--json")
    image.write_bytes(kept.replace(b"cfapkg-recipe-image 2 ", b"cfapkg-recipe-image 1 ", 1))
    other = root.run("list", "--json")
    check("a damaged image, or another build's, is passed over for the JSON",
          damaged.stdout == listed.stdout and other.stdout == listed.stdout,
          damaged.stdout + damaged.stderr + other.stderr)
    image.write_bytes(kept)


def plan_set(r):
    try:
        doc = json.loads(r.stdout)
    except ValueError:
        return {}
    return {p["name"]: p["version"] for p in doc.get("packages", [])}


def test_plan_is_install(root):
    """plan answers as install would: the installed ZLUDA is kept where it
    fits, though a newer one exists; an environment not made yet keeps
    nothing."""
    planned = plan_set(root.run("plan", "pytorch-cuda-stack", *channel.FACTS, "--json"))
    dry = plan_set(root.run("install", "pytorch-cuda-stack", *channel.FACTS, "--dry-run",
                            "--json"))
    check("plan and install --dry-run take the same set, the installed zluda kept",
          planned == dry and planned.get("zluda") == "6-preview.69", (planned, dry))
    fresh = plan_set(root.run("plan", "pytorch-cuda-stack", "--env", "other", *channel.FACTS,
                              "--json"))
    check("for an environment not made yet the plan takes the newest",
          fresh.get("zluda") == "7-preview.10", fresh)


def test_second_env(root):
    r = root.run("env", "create", "preview")
    check("env create", r.returncode == 0, r.stderr)
    r = root.run("history", "--env", "preview")
    check("history of an environment with nothing installed says so",
          r.returncode == 0 and r.stdout == "(no generations yet)\n", r.stdout + r.stderr)
    r = root.run("rollback", "--env", "preview")
    check("a rollback in an environment with nothing installed says so and how to start",
          r.returncode == 4 and '"preview" has nothing installed yet' in r.stderr and
          "'cfapkg install --env preview NAME'" in r.stderr, r.stderr)
    r = root.run("env", "create", "preview")
    check("env create twice is refused", r.returncode != 0 and "already exists" in r.stderr)
    r = root.run("env", "create", "../x")
    check("a bad env name is refused", r.returncode == 2 and "not an environment name" in r.stderr)
    for name in ("con", "NUL", "Aux.txt", "com1", "lpt9.log", "prn."):
        r = root.run("env", "create", name)
        check(f"env create {name}: refused on every system, saying why",
              r.returncode == 2 and "Windows" in r.stderr and
              not (root.path / "envs" / name).exists(), r.stdout + r.stderr)
    r = root.run("pin", "--env", "preview", "zluda==7-preview.10")
    check("pin", r.returncode == 0, r.stderr)
    r = root.run("pins", "--env", "preview", "--json")
    check("pins lists it", json.loads(r.stdout or "{}").get("pins") == ["zluda==7-preview.10"], r.stdout)
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
    names = [e["name"] for e in json.loads(r.stdout)["environments"]]
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
    r = root.run("rollback", "--to", "0")
    check("rollback --to 0 is refused and leaves 'current' naming a generation",
          r.returncode == 2 and "from 1" in r.stderr and root.current() == 3 and
          root.run("history").returncode == 0, r.stdout + r.stderr)
    r = root.run("rollback", "--known-good")
    check("rollback --known-good refuses when nothing was proven, and says so",
          r.returncode == 4 and root.current() == 3 and "no known-good generation" in r.stderr
          and "mark-good" in r.stderr, r.stdout + r.stderr)
    test_marks(root)
    r = root.run("rollback", "--known-good")
    check("rollback --known-good takes the newest earlier proven generation, and says why",
          r.returncode == 0 and root.current() == 1 and "generation 1" in r.stdout and
          "marked known-good by hand on" in r.stdout and "cfapkg mark-good 1" in r.stdout,
          r.stdout + r.stderr)
    r = root.run("history", "--json")
    h = json.loads(r.stdout)["history"]
    gens = [e for e in h if e["event"] == "generation"]
    switches = [e for e in h if e["event"] == "switch"]
    check("history lists the generations", [g["generation"] for g in gens] == [1, 2, 3], gens)
    check("history records the commands", gens[2]["command"] == "update zluda" and
          {"action": "change", "name": "zluda", "from": "6-preview.69", "to": "7-preview.10",
           "text": "zluda 6-preview.69 -> 7-preview.10"} in gens[2]["changes"], gens[2])
    check("history marks the current and known-good ones",
          [g["current"] for g in gens] == [True, False, False] and
          [g["good"] for g in gens] == [True, False, False] and
          [g["state"] for g in gens] == ["known-good", "checked", "checked"], gens)
    check("rollbacks are recorded", [(s["from"], s["generation"]) for s in switches] ==
          [(3, 2), (2, 3), (3, 1)] and switches[2]["command"] == "rollback --known-good 3 -> 1",
          switches)
    r = root.run("rollback", "--to", "3", env={"http_proxy": "http://127.0.0.1:9"})
    check("rollback needs no network", r.returncode == 0 and root.current() == 3)
    # A recipe folder broken after the install (a bad edit, a half-copied
    # file) must not stop the way back: a rollback reads only the root.
    broken = root.path.parent / "broken-recipes"
    broken.mkdir(exist_ok=True)
    (broken / "zluda.json").write_text('{"name": "zluda", "versions": [')
    bad = {"CFAPKG_RECIPES": str(broken)}
    r = root.run("plan", "zluda", env=bad)
    check("a broken recipe file is named when recipes are read",
          r.returncode != 0 and "zluda.json" in r.stderr, r.stdout + r.stderr)
    r = root.run("rollback", "--to", "2", env=bad)
    r2 = root.run("history", env=bad)
    check("rollback and history work while a recipe folder is broken",
          r.returncode == 0 and root.current() == 2 and r2.returncode == 0,
          r.stdout + r.stderr + r2.stderr)
    root.run("rollback", "--to", "3")


def test_marks(root):
    """Known-good only on the user's word here (the doctor's live probe is
    tested in test_runtime.py); every mark and unmark is in history."""
    r = root.run("mark-good", "1")
    check("mark-good records the user's word", r.returncode == 0 and
          "known-good" in r.stdout, r.stdout + r.stderr)
    root.run("mark-good", "2")
    r = root.run("unmark", "2")
    check("unmark takes it back", r.returncode == 0 and "no longer" in r.stdout, r.stdout)
    r = root.run("unmark", "2")
    check("unmark of a generation not known-good changes nothing",
          r.returncode == 0 and "nothing changed" in r.stdout, r.stdout)
    h = {e["generation"]: e for e in json.loads(root.run("history", "--json").stdout)["history"]
         if e["event"] == "generation"}
    g1, g2 = h[1], h[2]
    check("history gives who marked a generation, when and how",
          g1["good"] and g1["known_good"]["by"] == "hand" and
          g1["known_good"]["command"] == "cfapkg mark-good 1" and g1["known_good"]["time"], g1)
    check("history keeps every mark and unmark",
          [(m["good"], m["by"]) for m in g2["marks"]] == [(True, "hand"), (False, "hand")] and
          not g2["good"] and g2["state"] == "checked" and g2["known_good"] is None, g2)
    text = root.run("history").stdout
    check("history text shows the marks", "[known-good by hand " in text and
          "marked known-good by hand: on the user's word (cfapkg mark-good 1)" in text and
          "unmarked by hand" in text and "[checked]" in text, text)
    r = root.run("mark-good", "x")
    check("mark-good takes a generation number", r.returncode == 2, r.stderr)
    r = root.run("mark-good", "99")
    check("mark-good of a missing generation", r.returncode == 4 and "no generation 99" in
          r.stderr, r.stderr)
    r = root.run("unmark", "--env", "nowhere")
    check("unmark in a missing environment", r.returncode == 4, r.stderr)
    # A root an older cfapkg wrote: its "good" file meant only that the
    # static checks passed, so it reads as checked, never as known-good.
    gen3 = root.path / "envs" / "default" / "3"
    (gen3 / "checked").rename(gen3 / "good")
    h = json.loads(root.run("history", "--json").stdout)["history"]
    g3 = [e for e in h if e["event"] == "generation" and e["generation"] == 3][0]
    check("an older cfapkg's good file reads as checked only",
          g3["state"] == "checked" and not g3["good"], g3)
    (gen3 / "good").unlink()
    h = json.loads(root.run("history", "--json").stdout)["history"]
    g3 = [e for e in h if e["event"] == "generation" and e["generation"] == 3][0]
    check("a generation with no record of checks is unchecked", g3["state"] == "unchecked", g3)
    (gen3 / "checked").write_text("2026-01-01T00:00:00Z")


def test_remove(root):
    r = root.change("install", "pytorch-cuda-stack")
    r = root.change("remove", "zluda")
    check("remove of a package still needed keeps it", r.returncode == 0 and
          "zluda" in root.listing(), r.stdout + r.stderr)
    r = root.change("remove", "nothing-like-this")
    check("remove of something not requested", r.returncode == 4 and "not installed by request"
          in r.stderr, r.stderr)
    before = root.current()
    r = root.change("remove", "pytorch-cuda-stack")
    check("removing the last request empties the environment in a new generation",
          r.returncode == 0 and root.current() == before + 1 and root.listing() == {},
          r.stdout + r.stderr)
    r = root.run("rollback")
    check("and a rollback brings the set back", r.returncode == 0 and
          root.current() == before and "zluda" in root.listing(), r.stdout + r.stderr)


def history_events(root, env):
    r = root.run("history", "--env", env, "--json")
    return [(e["event"], e["generation"]) for e in json.loads(r.stdout or "{}").get("history", [])]


def record_seqs(d):
    """The sequence numbers on disk: each generation's, then each whole
    line's of the switch log, in the order the log has them."""
    gens, switches = [], []
    for g in d.iterdir():
        if not g.name.isdigit():
            continue
        try:
            gens.append(json.loads((g / "meta.json").read_text())["seq"])
        except (OSError, ValueError, KeyError):
            pass
    log = d / "switches.log"
    for line in (log.read_text().split("\n")[:-1] if log.exists() else []):
        try:
            switches.append(json.loads(line)["seq"])
        except (ValueError, KeyError):
            pass
    return gens, switches


def last_switch_is_newest(d):
    """The switch just made has the greatest seq, and no two records share one."""
    gens, switches = record_seqs(d)
    every = gens + switches
    return len(set(every)) == len(every) and switches and switches[-1] == max(every)


def test_history_order(root):
    """Each switch and generation is recorded after everything before it.
    A rollback or an install finds its place from the newest generation's
    record and the switch log's last line alone; when either is damaged it
    reads the whole history instead, and the order still holds."""
    env = "order"
    d = root.path / "envs" / env
    root.run("env", "create", env)
    root.change("install", "--env", env, "zluda==7-preview.10")
    root.change("install", "--env", env, "zluda==6-preview.69")
    newest = root.current(env)
    root.run("rollback", "--env", env)
    root.run("rollback", "--env", env, "--to", str(newest))
    h = history_events(root, env)
    check("switches and generations come in the order they were made",
          h[-3:] == [("generation", newest), ("switch", newest - 1), ("switch", newest)] and
          last_switch_is_newest(d), (h, record_seqs(d)))
    log = d / "switches.log"
    with open(log, "a") as f:
        f.write('{"seq": 99999, "to": 1')
    r = root.run("rollback", "--env", env)
    h = history_events(root, env)
    check("a torn last switch record is passed over, the next switch still goes last",
          r.returncode == 0 and h[-1] == ("switch", newest - 1) and last_switch_is_newest(d),
          (r.stderr, h, record_seqs(d)))
    with open(log, "a") as f:
        f.write("\nnot a record\n")
    root.run("rollback", "--env", env, "--to", str(newest))
    h = history_events(root, env)
    check("after a damaged last switch record the next switch still goes last",
          h[-1] == ("switch", newest) and last_switch_is_newest(d), (h, record_seqs(d)))
    meta = d / str(newest) / "meta.json"
    saved = meta.read_text()
    meta.write_text("{")
    root.run("rollback", "--env", env)
    meta.write_text(saved)
    h = history_events(root, env)
    check("with the newest generation's record damaged the next switch still goes last",
          h[-1] == ("switch", newest - 1) and h[-2] == ("switch", newest) and
          last_switch_is_newest(d), (h, record_seqs(d)))
    r = root.change("install", "--env", env, "zluda==6-preview.69")
    made = root.current(env)
    root.run("rollback", "--env", env, "--to", "1")
    h = history_events(root, env)
    check("a generation made after switches goes after them, and a switch after it",
          r.returncode == 0 and made == newest + 1 and
          h[-2:] == [("generation", made), ("switch", 1)] and last_switch_is_newest(d),
          (r.stderr, h, record_seqs(d)))
    # A generation gc took is passed over, and so is every switch.
    root.run("rollback", "--env", env, "--to", str(made))
    shutil.rmtree(d / str(made - 1))
    r = root.run("rollback", "--env", env)
    check("rollback goes to the newest earlier generation still there",
          r.returncode == 0 and root.current(env) == made - 2, r.stdout + r.stderr)
    root.run("mark-good", "--env", env, "1")
    root.run("rollback", "--env", env, "--to", str(made))
    r = root.run("rollback", "--env", env, "--known-good")
    check("rollback --known-good walks down to the one proven",
          r.returncode == 0 and root.current(env) == 1 and "cfapkg mark-good 1" in r.stdout,
          r.stdout + r.stderr)
    root.run("env", "remove", env, "--yes")


def test_lockfile(root, tmp):
    lock = tmp / "stack.lock"
    r = root.run("lock", "--env", "preview", "-o", str(lock))
    doc = json.loads(lock.read_text())
    parts = {p["name"]: p for p in doc["packages"]}
    check("lock writes the exact set", r.returncode == 0 and doc["format"] == "cfapkg-lock" and
          doc["version"] == 2 and parts["zluda"]["version"] == "7-preview.10" and
          all(len(p.get("sha256", "x" * 64)) == 64 for p in doc["packages"]), doc)
    check("lock records each part's requirements, provides and status on the GPU",
          parts["libtorch-cuda"]["requires"] == ["cuda-driver-api", "cublas==11"] and
          parts["zluda"]["provides"] == ["cuda-driver-api", "cublas=11"] and
          all(p["status"] == "candidate" for p in doc["packages"]), doc["packages"])
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
    test_untrusted_lockfiles(root, tmp, lock)
    test_old_generation_lock(root, tmp)


def refused(root, path, doc, *args):
    """install --locked of doc into a new root, planning only."""
    path.write_text(json.dumps(doc))
    shutil.rmtree(path.parent / "scratch", ignore_errors=True)
    scratch = channel.Root(BIN, path.parent / "scratch", root.recipes)
    return scratch.run("install", "--locked", str(path), "--dry-run", "--yes",
                       *(args or channel.FACTS))


def test_untrusted_lockfiles(root, tmp, lock):
    """What a lockfile cannot make cfapkg install: a set with a part taken
    out, an experimental part without consent, files from this machine."""
    good = json.loads(lock.read_text())
    bad = tmp / "untrusted.lock"
    r = refused(root, bad, good)
    check("an untouched lockfile passes its checks", r.returncode == 0, r.stdout + r.stderr)
    doc = copy.deepcopy(good)
    doc["packages"] = [p for p in doc["packages"] if p["name"] != "zluda"]
    r = refused(root, bad, doc)
    check("a lockfile with a required part removed is refused, naming it",
          r.returncode == 2 and "untrusted.lock" in r.stderr and "libtorch-cuda" in r.stderr
          and '"cuda-driver-api"' in r.stderr and "cfapkg lock" in r.stderr, r.stderr)
    doc = copy.deepcopy(good)
    doc["packages"][0]["status"] = "experimental"
    r = refused(root, bad, doc)
    check("an experimental part is refused without --allow-experimental",
          r.returncode == 3 and "is experimental on gfx1200" in r.stderr and
          "--allow-experimental" in r.stderr, r.stderr)
    r = refused(root, bad, doc, *channel.FACTS, "--allow-experimental")
    check("and accepted with it", r.returncode == 0, r.stdout + r.stderr)
    r = refused(root, bad, good, "--gpu", "gfx1201", "--arch", "x86_64")
    check("a GPU the lock recorded no status for needs --allow-experimental",
          r.returncode == 3 and "status on this machine's gfx1201 is not known" in r.stderr,
          r.stderr)
    for field, value in (("url", "file:///etc/passwd"),
                         ("mirrors", ["ftp://mirror.example/zluda7.tar.gz"]),
                         ("mirrors", ["/srv/mirror/zluda7.tar.gz"])):
        doc = copy.deepcopy(good)
        doc["packages"][0][field] = value
        shown = value if isinstance(value, str) else value[0]
        r = refused(root, bad, doc, *channel.FACTS, "--allow-experimental")
        check(f"a lockfile URL {shown} is refused", r.returncode == 2 and
              f'"{shown}" is not an https:// or http:// URL' in r.stderr and
              "packages[0] (zluda 7-preview.10)" in r.stderr, r.stderr)
    doc = copy.deepcopy(good)
    doc["version"] = 1
    for p in doc["packages"]:
        for key in ("requires", "provides", "status"):
            del p[key]
    r = refused(root, bad, doc)
    check("a lockfile from an older cfapkg is sent back to 'cfapkg lock'",
          r.returncode == 2 and "version 1" in r.stderr and "cfapkg lock" in r.stderr, r.stderr)


def test_old_generation_lock(root, tmp):
    """A generation an older cfapkg wrote (lock.json version 1) still
    reads, and 'cfapkg lock' writes it in the current version from the
    recipes."""
    gen = root.path / "envs" / "preview" / str(root.current("preview")) / "lock.json"
    saved = gen.read_text()
    doc = json.loads(saved)
    doc["version"] = 1
    for p in doc["packages"]:
        for key in ("requires", "provides", "status"):
            del p[key]
    gen.write_text(json.dumps(doc))
    check("a version 1 generation still lists", root.listing("preview").get("zluda") ==
          "7-preview.10")
    r = root.run("lock", "--env", "preview")
    check("lock brings it to version 2 from the recipes", r.returncode == 0 and
          json.loads(r.stdout) == json.loads(saved), r.stdout + r.stderr)
    gen.write_text(saved)


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

    test_damaged_records(root)


def test_damaged_records(root):
    """A generation whose runtime.json does not read, though every part's
    files are whole: what runs it names the file and repair, verify reports
    it, and repair writes a new generation with it."""
    gen = root.current()
    rt = root.path / "envs" / "default" / str(gen) / "runtime.json"
    saved = rt.read_text()
    rt.write_text(saved[:len(saved) // 2])
    r = root.run("env", "show")
    check("env show of a generation whose runtime.json does not read names it and repair",
          r.returncode != 0 and "runtime.json" in r.stderr and
          "'cfapkg repair --env default' writes it again" in r.stderr, r.stderr)
    r = root.run("verify")
    check("verify reports the runtime.json that does not read",
          r.returncode == 9 and f"default generation {gen}:" in r.stdout + r.stderr and
          "runtime.json" in r.stdout + r.stderr, r.stdout + r.stderr)
    r = root.run("repair", "--yes")
    check("repair writes a new generation whose runtime.json reads",
          r.returncode == 0 and "runtime.json written again" in r.stdout and
          root.current() > gen and root.run("env", "show").returncode == 0 and
          root.run("verify").returncode == 0, r.stdout + r.stderr)
    r = root.run("history", "--json")
    last = [h for h in json.loads(r.stdout or "{}").get("history", [])
            if h["event"] == "generation"][-1:]
    check("history --json gives that change as a rewrite of runtime.json",
          last and last[0]["changes"] and last[0]["changes"][0]["action"] == "rewrite" and
          last[0]["changes"][0]["name"] == "runtime.json", last)
    rt.write_text(saved)


def test_gc(root):
    before = {p.name for p in (root.path / "store").iterdir()}
    r = root.run("env", "remove", "preview", "--yes")
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
        test_lock_image(root)
        test_plan_is_install(root)
        test_second_env(root)
        test_history_rollback(root)
        test_remove(root)
        test_history_order(root)
        test_lockfile(root, tmp)
        test_verify(root)
        test_gc(root)
        test_concurrent(channel.Root(BIN, tmp / "root4", recipes))
    return check.report()


if __name__ == "__main__":
    sys.exit(main())
