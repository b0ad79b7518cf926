#!/usr/bin/env python3
"""Crash sweep: cfapkg is killed, as by SIGKILL, at every step of install,
update, remove, rollback, pin, gc, repair and env remove, and plan (which
writes the recipe folders' cached indexes), in several
variants each (downloads from nginx on 127.0.0.1 or already cached; a
fresh root, a second environment sharing the store, a lockfile; a store
folder lost, one file of it or its manifest; the swap of a replaced folder by two
renames, as on Windows; an APT source whose index lookup is written), more
than a thousand kill points in all.

CFAPKG_CRASH_AFTER=N kills the process at its Nth crash point.  A
scenario finds its number of points by itself: N goes up from 1 until a
run completes (at most MAX_POINTS; each cfapkg run is bounded by
harness.TIMEOUT).  After each killed run:
  - the environment's current generation is complete and holds the old set
    or the new one, never a mix;
  - `history` passes for every environment, and so does `verify`; where
    the root starts damaged (work for repair), verify may name only the
    parts that were damaged before, and no store folder that was there
    may be missing (a repair never removes what it has not replaced);
  - running the same command again completes, and then the root is where
    an uninterrupted run leaves it: the same set, the same store folders
    and downloads, every store folder the current sets name is there,
    verify passes, nothing is left behind (.new-*, .old-*, .staging-*,
    *.tmp, *.part, trash).

usage: crash_sweep.py CFAPKG [--short] [--only TEXT] [--at N]
  --short       one scenario of each command and every STRIDE-th point
                (a few dozen points, for CI: ctest's crash-sweep-short)
  --only TEXT   run only the scenarios whose name contains TEXT
  --at N        kill only at point N (to reproduce one reported failure)
Prints each scenario's kill points, the total, and "N passed, N failed";
exits non-zero when any state was inconsistent.
"""
import argparse
import json
import os
import pathlib
import re
import shutil
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "tests"))
import channel  # noqa: E402
import debrepo  # noqa: E402
import harness  # noqa: E402

MAX_POINTS = 2000  # per scenario: a run that still crashes past this is a failure
MIN_TOTAL = 1000
KILLED = (-9, 137)  # a signal on POSIX, TerminateProcess's code under Wine
CHANGE = [*channel.FACTS, "--yes"]
# A LibTorch-shaped archive with this many headers: each one is a hard
# link, and so a kill point, in every generation that holds LibTorch.
HEADERS = 60
# --short: fewer headers, at least MIN_SHORT points in all.
SHORT_HEADERS, MIN_SHORT = 6, 24
# The scenarios --short runs, one of each command, and the stride of their
# points: every one where a damaged folder is swapped out, which takes
# only a point or two, every fifth elsewhere.
# APT sources are installed on Linux only: the Windows build has no such
# scenario.
APT_SCENARIO = "install an APT source, index and .debs cached"
SHORT = {"install, fresh root, downloads from nginx": 5,
         "update zluda, download from nginx": 5, "rollback": 5, "pin zluda 7": 5,
         "gc --keep 1 after a rollback": 5, "remove the stack (zluda stays)": 5,
         "env remove b": 5, "repair, a libtorch header lost, download from nginx": 1,
         "repair, a libtorch header lost, two renames (as on Windows)": 1,
         APT_SCENARIO: 1, "plan, recipe indexes written": 1}
# verify --json's lines name the part: "default generation 3: zluda
# 7-preview.10: store/...", or its view: "... generation 3: view/zluda/...".
DAMAGE_LINE = re.compile(r"^(\S+) generation \d+: (?:view/([^/:]+)|(\S+) \S+:)")


def copy_root(src, dst):
    """Copies a root keeping its hard links (view files share the store's
    inodes, as they do in a real root)."""
    seen = {}
    shutil.rmtree(dst, ignore_errors=True)
    dst.mkdir(parents=True)
    for folder, dirs, files in os.walk(src):
        rel = pathlib.Path(folder).relative_to(src)
        for d in dirs:
            (dst / rel / d).mkdir()
        for f in files:
            s, d = pathlib.Path(folder) / f, dst / rel / f
            st = s.lstat()
            if os.path.islink(s):
                os.symlink(os.readlink(s), d)
            elif st.st_nlink > 1 and (st.st_dev, st.st_ino) in seen:
                os.link(seen[(st.st_dev, st.st_ino)], d)
            else:
                shutil.copy2(s, d)
                seen[(st.st_dev, st.st_ino)] = d


def names(folder):
    return sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []


class Root:
    def __init__(self, sweep, path):
        self.sweep, self.path = sweep, pathlib.Path(path)

    def run(self, *args, crash=0, env=None):
        e = {"CFAPKG_ROOT": str(self.path), "CFAPKG_RECIPES": str(self.sweep.recipes),
             "CFAPKG_MIRRORS": "", **(env or {})}
        if crash:
            e["CFAPKG_CRASH_AFTER"] = str(crash)
        return harness.run(self.sweep.bin, *args, env=e)

    def must(self, *args):
        """A setup step; archives are kept, for the roots that start with
        downloads in the cache."""
        r = self.run(*args, env={"CFAPKG_KEEP_ARCHIVES": "1"})
        if r.returncode != 0:
            sys.exit(f"setup: cfapkg {' '.join(args)} failed: {r.stderr}")
        return r

    def envs(self):
        return names(self.path / "envs")

    def state(self, env):
        """(generation, set) as a reader sees it; None when unreadable."""
        cur = self.path / "envs" / env / "current"
        if not cur.exists():
            return (0, {})
        gen = cur.read_text().strip()
        if not (self.path / "envs" / env / gen / "lock.json").is_file():
            return None
        r = self.run("list", "--env", env, "--json")
        if r.returncode != 0:
            return None
        return (int(gen), {p["name"]: p["version"] for p in json.loads(r.stdout)["packages"]})

    def readers_fail(self, verify=True):
        """Environments whose verify or history fails."""
        bad = []
        for env in self.envs():
            for cmd in ("verify", "history") if verify else ("history",):
                r = self.run(cmd, "--env", env)
                if r.returncode != 0:
                    bad.append(f"{cmd} --env {env}: {r.returncode} {r.stderr.strip()}")
        return bad

    def damage(self):
        """(env, part) pairs verify names, over every environment."""
        found = set()
        for env in self.envs():
            r = self.run("verify", "--env", env, "--json")
            try:
                lines = json.loads(r.stdout).get("changed", [])
            except json.JSONDecodeError:
                return {(env, f"unreadable verify: {r.stdout} {r.stderr}")}
            for line in lines:
                m = DAMAGE_LINE.match(line)
                found.add((m.group(1), m.group(2) or m.group(3)) if m else (env, line))
        return found

    def leftovers(self):
        found = [str(p.relative_to(self.path)) for p in self.path.rglob("*")
                 if p.name.startswith((".new-", ".old-", ".staging-")) or
                 p.name.endswith((".tmp", ".part"))]
        return found + [f"trash/{n}" for n in names(self.path / "trash")]

    def missing_store(self):
        """Store folders a current generation names that are absent or
        were never finished (no manifest)."""
        missing = []
        for env in self.envs():
            s = self.state(env)
            if not s or not s[0]:
                continue
            lock = self.path / "envs" / env / str(s[0]) / "lock.json"
            for p in json.loads(lock.read_text())["packages"]:
                if p.get("store") and not (self.path / "store" / p["store"] / ".cfapkg").is_dir():
                    missing.append(f"{env}: {p['store']}")
        return missing

    def shape(self, env):
        """What an uninterrupted run leaves: the set, the environments, the
        store folders and the downloads."""
        s = self.state(env)
        return {"set": s and s[1], "envs": self.envs(), "store": names(self.path / "store"),
                "downloads": names(self.path / "downloads")}


class Scenario:
    """args run on a copy of pristine; env is the environment it changes.
    damaged: the root starts damaged (work for repair), so verify may name
    what was damaged until a run completes.  gone_ok: the command removes
    env, and a rerun after a kill that already removed it may say there is
    no such env.  removes: the command removes a request, and a rerun
    after a kill past the switch (the request already gone) may say it was
    not installed by request.  variables: the environment every run of it
    gets."""

    def __init__(self, name, pristine, args, env="default", damaged=False, gone_ok=False,
                 removes=False, variables=None):
        self.name, self.pristine, self.args, self.env = name, pristine, list(args), env
        self.damaged, self.gone_ok, self.variables = damaged, gone_ok, variables or {}
        self.removes = removes


class Sweep:
    def __init__(self, binary, tmp, recipes, short=False):
        self.bin, self.tmp, self.recipes, self.short = binary, tmp, recipes, short
        self.check = harness.Checks()

    def root(self, name, like=None):
        r = Root(self, self.tmp / name)
        if like:
            copy_root(like.path, r.path)
        else:
            r.path.mkdir(parents=True, exist_ok=True)
        return r

    def damage_after_kill(self, work, sc, was):
        """For a root that started damaged: verify may name only parts that
        were damaged, and no store folder that was there may be missing.
        Where two names cannot be swapped at once (Windows), a kill between
        the two renames leaves the old folder as .old-NAME, whole, which
        the next writer puts back: the one moment it is not at its name."""
        # The Windows build (under Wine) always swaps by two renames.
        renames = sc.variables.get("CFAPKG_TEST_NO_EXCHANGE") == "1" or bool(harness.EMULATOR)
        problems = [f"verify names {env}: {part}, which was whole before the run"
                    for env, part in sorted(work.damage() - was["damage"])]
        return problems + [f"store folder missing after the kill: {m}"
                           for m in work.missing_store() if m not in was["missing"] and not
                           (renames and (work.path / "store" / f".old-{m.split(': ')[1]}"
                                         / ".cfapkg" / "manifest.json").is_file())]

    def after_kill(self, work, sc, before, want, was):
        """The problems found after a killed run; [] when none."""
        problems = []
        s = work.state(sc.env)
        if s is None or (s != before and s[1] != want["set"]):
            problems.append(f"current is neither old {before} nor new {want['set']}: {s}")
        problems += work.readers_fail(verify=not sc.damaged)
        if sc.damaged:
            problems += self.damage_after_kill(work, sc, was)
        else:
            problems += [f"missing store folder {m}" for m in work.missing_store()]
        again = work.run(*sc.args, env=sc.variables)
        gone = (sc.gone_ok and s == (0, {}) and again.returncode == 4 and
                f'no environment "{sc.env}"' in again.stderr)
        gone = gone or (sc.removes and s is not None and s[1] == want["set"] and
                        again.returncode == 4 and "was not installed by request" in again.stderr)
        if again.returncode != 0 and not gone:
            problems.append(f"rerun exit {again.returncode}: {again.stderr.strip()}")
        got = work.shape(sc.env)
        if got != want:
            problems.append(f"after the rerun {got}, an uninterrupted run leaves {want}")
        late = work.readers_fail() + [f"missing store folder {m}" for m in work.missing_store()]
        late += [f"left behind: {x}" for x in work.leftovers()]
        if late and again.stdout.strip():
            late.append(f"the rerun said: {again.stdout.strip().splitlines()[-1]}")
        return problems + late

    def sweep(self, sc, only_at=None):
        """Kills sc at points 1, 2, ... until a run completes; returns the
        number of kill points."""
        work = Root(self, self.tmp / "work")
        ref = Root(self, self.tmp / "reference")
        copy_root(sc.pristine.path, ref.path)
        before = ref.state(sc.env)
        was = {"damage": ref.damage(), "missing": ref.missing_store()} if sc.damaged else {}
        r = ref.run(*sc.args, env=sc.variables)
        if r.returncode != 0:
            sys.exit(f"{sc.name}: the uninterrupted run failed: {r.stderr}")
        want = ref.shape(sc.env)
        points = bad = 0
        start = time.monotonic()
        stride = SHORT.get(sc.name, 1) if self.short else 1
        for n in [only_at] if only_at else range(1, MAX_POINTS + 1, stride):
            copy_root(sc.pristine.path, work.path)
            r = work.run(*sc.args, crash=n, env=sc.variables)
            if r.returncode == 0:
                break
            points += 1
            problems = ([] if r.returncode in KILLED else
                        [f"exit {r.returncode} instead of the kill: {r.stderr.strip()}"])
            problems = problems or self.after_kill(work, sc, before, want, was)
            if problems:
                bad += 1
                print(f"FAIL {sc.name}: killed at {n}: cfapkg {' '.join(sc.args)}\n"
                      f"    reproduce: crash_sweep.py CFAPKG --only '{sc.name}' --at {n}")
                for p in problems:  # the first lines of each say enough
                    print("    " + "\n    ".join(p.splitlines()[:3]))
        else:
            if not only_at:
                bad += 1
                print(f"FAIL {sc.name}: still killed at point {MAX_POINTS}")
        shutil.rmtree(work.path, ignore_errors=True)
        shutil.rmtree(ref.path, ignore_errors=True)
        print(f"{sc.name}: {points} kill points, {bad} inconsistent "
              f"({time.monotonic() - start:.0f} s)", flush=True)
        self.check(f"{sc.name}: every kill leaves a consistent root",
                   (points > 0 or only_at) and bad == 0, f"{bad} of {points}")
        return points


def package(root, env, name):
    """The current lock's entry for package name."""
    gen = root.path / "envs" / env / (root.path / "envs" / env / "current").read_text().strip()
    return next(p for p in json.loads((gen / "lock.json").read_text())["packages"]
                if p["name"] == name)


def cached(root, sha):
    """The download cache's files for an archive: SHA, or SHA~BOOT when it
    was not flushed to the disk in this boot."""
    return sorted((root.path / "downloads").glob(f"{sha}*"))


def lose(root, env, name, download=True, what="folder"):
    """Deletes a package's store folder, one header of it or its manifest
    (and its download): work for repair."""
    p = package(root, env, name)
    folder = root.path / "store" / p["store"]
    if what == "header":
        sorted((folder / "include" / "torch").glob("*.h"))[0].unlink()
    elif what == "manifest":
        (folder / ".cfapkg" / "manifest.json").unlink()
    else:
        shutil.rmtree(folder)
    for f in cached(root, p["sha256"]) if download else []:
        f.unlink()


def roots(s):
    """The starting roots, each made once and copied for every run."""
    r = {"empty": s.root("empty"), "base": s.root("base")}
    r["base"].must("install", "pytorch-cuda-stack", "zluda==6-preview.69", *CHANGE)
    r["base"].must("install", "zluda", *CHANGE)  # so that zluda may move (generation 2)
    r["updated"] = s.root("updated", like=r["base"])
    r["updated"].must("update", "zluda", *CHANGE)
    r["cached"] = s.root("cached")  # every download there, nothing unpacked
    shutil.copytree(r["updated"].path / "downloads", r["cached"].path / "downloads")
    r["base+7"] = s.root("base+7", like=r["base"])  # zluda 7 downloaded, not unpacked
    for f in cached(r["updated"], package(r["updated"], "default", "zluda")["sha256"]):
        shutil.copy2(f, r["base+7"].path / "downloads")
    r["rolled-back"] = s.root("rolled-back", like=r["updated"])
    r["rolled-back"].must("rollback")
    r["four"] = s.root("four", like=r["updated"])  # generation 3, then 4: zluda alone
    r["four"].must("remove", "pytorch-cuda-stack", *CHANGE)
    r["base+b"] = s.root("base+b", like=r["base"])
    r["base+b"].must("env", "create", "b")
    r["updated+b"] = s.root("updated+b", like=r["updated"])
    r["updated+b"].must("env", "create", "b")
    r["b"] = s.root("b", like=r["base+b"])  # default on zluda 6, b on zluda 7
    r["b"].must("install", "--env", "b", "pytorch-cuda-stack", *CHANGE)
    r["b-removed"] = s.root("b-removed", like=r["b"])
    r["b-removed"].must("env", "remove", "b", "--yes")
    for name, env, pkg, download, what in (
            ("lost-libtorch", "default", "libtorch-cuda", True, "folder"),
            ("lost-libtorch-store", "default", "libtorch-cuda", False, "folder"),
            ("lost-zluda-b", "b", "zluda", True, "folder"),
            ("header-lost", "default", "libtorch-cuda", True, "header"),
            ("header-lost-cached", "default", "libtorch-cuda", False, "header"),
            ("manifest-lost", "default", "libtorch-cuda", True, "manifest")):
        r[name] = s.root(name, like=r["b" if env == "b" else "base"])
        lose(r[name], env, pkg, download, what)
    r["lost-all"] = s.root("lost-all", like=r["base"])
    shutil.rmtree(r["lost-all"].path / "store")
    shutil.rmtree(r["lost-all"].path / "downloads")
    r["updated"].must("lock", "-o", str(s.tmp / "lock.json"))
    # An APT source whose index and .debs are in the cache and whose
    # lookup is not kept yet: its install writes one (ROOT/apt/lookups).
    apt = debrepo.Repo([("sweep-liba", "1.0-1", "amd64", None),
                        ("sweep-libb", "2.0-1", "all", "sweep-liba (>= 1.0)")])
    apt.recipe(pathlib.Path(s.recipes), "sweep-apt", ["sweep-liba=1.0-1", "sweep-libb"])
    r["apt-cached"] = s.root("apt-cached")
    apt.seed(r["apt-cached"].path)
    return r


def scenarios(s, r):
    stack = ["pytorch-cuda-stack", "zluda==6-preview.69", *CHANGE]
    locked = ["install", "--locked", str(s.tmp / "lock.json"), *CHANGE]
    S = Scenario
    return [
        S("install, fresh root, downloads from nginx", r["empty"], ["install", *stack]),
        S("install, fresh root, downloads cached", r["cached"], ["install", *stack]),
        S("install into a second env, zluda 7 from nginx", r["base+b"],
          ["install", "--env", "b", "pytorch-cuda-stack", *CHANGE], "b"),
        S("install into a second env, all in the store", r["updated+b"],
          ["install", "--env", "b", "pytorch-cuda-stack", *CHANGE], "b"),
        S("install --locked, fresh root, downloads from nginx", r["empty"], locked),
        S("install --locked, fresh root, downloads cached", r["cached"], locked),
        S("update zluda, download from nginx", r["base"], ["update", "zluda", *CHANGE]),
        S("update zluda, download cached", r["base+7"], ["update", "zluda", *CHANGE]),
        S("update all after a rollback, all in the store", r["rolled-back"],
          ["update", *CHANGE]),
        S("remove the stack (zluda stays)", r["base"],
          ["remove", "pytorch-cuda-stack", *CHANGE], removes=True),
        S("remove the zluda request (the stack keeps it)", r["updated"],
          ["remove", "zluda", *CHANGE], removes=True),
        S("rollback", r["updated"], ["rollback"]),
        S("rollback --to 1 from generation 4", r["four"], ["rollback", "--to", "1"]),
        S("env remove b", r["b"], ["env", "remove", "b", "--yes"], "b", gone_ok=True),
        S("gc --keep 1 after env remove b", r["b-removed"], ["gc", "--keep", "1"]),
        S("gc --keep 1 after a rollback", r["rolled-back"], ["gc", "--keep", "1"]),
        S("gc --keep 1 with four generations", r["four"], ["gc", "--keep", "1"]),
        S("repair, libtorch lost, download from nginx", r["lost-libtorch"],
          ["repair", "--yes"], damaged=True),
        S("repair, libtorch lost, download cached", r["lost-libtorch-store"],
          ["repair", "--yes"], damaged=True),
        S("repair --env b, zluda 7 lost, download from nginx", r["lost-zluda-b"],
          ["repair", "--env", "b", "--yes"], "b", damaged=True),
        S("repair, store and downloads lost, from nginx", r["lost-all"], ["repair", "--yes"],
          damaged=True),
        S("repair, a libtorch header lost, download from nginx", r["header-lost"],
          ["repair", "--yes"], damaged=True),
        S("repair, a libtorch header lost, download cached", r["header-lost-cached"],
          ["repair", "--yes"], damaged=True),
        S("repair, a libtorch header lost, two renames (as on Windows)", r["header-lost"],
          ["repair", "--yes"], damaged=True, variables={"CFAPKG_TEST_NO_EXCHANGE": "1"}),
        S("install restores a libtorch header lost, download from nginx", r["header-lost"],
          ["install", *stack], damaged=True),
        S("repair, libtorch's manifest lost, download from nginx", r["manifest-lost"],
          ["repair", "--yes"], damaged=True),
    ] + ([] if harness.EMULATOR else [
        S(APT_SCENARIO, r["apt-cached"],
          ["install", "sweep-apt", "--os", "linux", "--arch", "x86_64", "--gpu", "gfx1030",
           "--allow-experimental", "--offline", "--yes"]),
    ]) + [
        S("plan, recipe indexes written", r["empty"], ["plan", "pytorch-cuda-stack",
                                                        *channel.FACTS]),
        S("pin zluda 7", r["updated"], ["pin", "zluda==7-preview.10"]),
        S("pin zluda 6 (the update goes back)", r["updated"], ["pin", "zluda==6-preview.69"]),
    ]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("cfapkg")
    ap.add_argument("--short", action="store_true")
    ap.add_argument("--only", default="")
    ap.add_argument("--at", type=int)
    a = ap.parse_args()
    start = time.monotonic()
    total = 0
    headers, least = (SHORT_HEADERS, MIN_SHORT) if a.short else (HEADERS, MIN_TOTAL)
    with channel.served("cfapkg-sweep-", headers=headers, big=100_000) as (tmp, _, recipes):
        # Recipes written a moment ago are not indexed yet (their stamps
        # could still change within the same tick): the sweep's are dated
        # back, as files edited earlier are.
        old = time.time() - 3600
        for f in pathlib.Path(recipes).glob("*.json"):
            os.utime(f, (old, old))
        s = Sweep(a.cfapkg, tmp, recipes, a.short)
        every = scenarios(s, roots(s))
        if a.short:
            named = set(SHORT) - ({APT_SCENARIO} if harness.EMULATOR else set())
            s.check("--short names scenarios that exist", named <= {sc.name for sc in every},
                    sorted(named - {sc.name for sc in every}))
        chosen = [sc for sc in every if a.only in sc.name and (not a.short or sc.name in SHORT)]
        for sc in chosen:
            total += s.sweep(sc, a.at)
        kinds = sorted({sc.args[0] if sc.args[0] != "env" else "env remove" for sc in chosen})
        print(f"total: {total} kill points over {len(chosen)} scenarios of {len(kinds)} "
              f"commands ({', '.join(kinds)}) ({time.monotonic() - start:.0f} s)")
        if not a.only and not a.at:
            s.check(f"at least {least} kill points in all", total >= least, total)
        return s.check.report()


if __name__ == "__main__":
    sys.exit(main())
