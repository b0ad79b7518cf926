#!/usr/bin/env python3
"""A Debian package set read from a repository folder and installed from its
pins, on a small repository written here (the rules at exact answers; the
real sets are tests/test_debian_stack.py's):

  - 'cfapkg recipe deb-set' walks Depends and Pre-Depends over the suites
    in the order given, as 'apt-get -t' does: each requirement from the
    first suite that meets it, versions compared in dpkg's order (1.5~rc1
    is older than 1.5), alternatives, Provides, and one floor on the C
    library (the highest libc6 asked for) instead of libc6 itself;
  - an index that is not the one its Release lists, a package no suite
    has and a requirement none meets are refused, naming them;
  - a recipe of pins whose Depends name a package the set lacks, or whose
    libc6 floor is not asked of the machine's glibc, does not load;
  - a pinned .deb the repository no longer has (the version left the
    suite) comes from the recipe's mirror (snapshot.debian.org's role),
    and a mirror's file that is not the pinned one is refused with nothing
    installed.

    test_deb_set.py CFAPKG
"""
import hashlib
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

import harness

sys.path.insert(0, str(pathlib.Path(__file__).parent / "servers"))
from nginx import Nginx  # noqa: E402

BIN = sys.argv[1]
check = harness.Checks()
FACTS = ["--os", "linux", "--arch", "x86_64", "--gpu", "gfx1100", "--glibc", "2.40"]

# (suite, name, version, depends, provides, pre-depends)
PACKAGES = [
    ("sid", "app", "1.0-1", "liba (>= 2), libold | libalt, libvirt, libc6 (>= 2.34)", None,
     "libpre"),
    ("sid", "liba", "1.0-1", "libc6", None, None),
    ("experimental", "liba", "2.0-1~exp1", "libb (>= 1.5), libc6 (>= 2.38)", None, None),
    ("sid", "libb", "1.5~rc1-1", None, None, None),
    ("experimental", "libb", "1.5-1~exp1", None, None, None),
    ("sid", "libalt", "3-1", None, None, None),
    ("sid", "libvirt-impl", "1-1", None, "libvirt", None),
    ("sid", "libpre", "1-1", None, None, None),
    ("sid", "broken", "1-1", "libnowhere (>= 1)", None, None),
]


def sha256(data):
    return hashlib.sha256(data).hexdigest()


def build_deb(tmp, name, version, depends, provides, pre):
    """A real .deb (dpkg-deb --build) holding one file of its own."""
    top = tmp / "debsrc" / f"{name}_{version}"
    (top / "DEBIAN").mkdir(parents=True)
    share = top / "usr" / "share" / name
    share.mkdir(parents=True)
    (share / "version").write_text(f"{name} {version}\n")
    control = [f"Package: {name}", f"Version: {version}", "Architecture: amd64",
               "Maintainer: nobody <nobody@localhost>", f"Description: {name} for the test"]
    control += [f"{k}: {v}" for k, v in (("Depends", depends), ("Provides", provides),
                                         ("Pre-Depends", pre)) if v]
    (top / "DEBIAN" / "control").write_text("\n".join(control) + "\n")
    out = tmp / "debs" / f"{name}_{version}_amd64.deb"
    out.parent.mkdir(exist_ok=True)
    subprocess.run(["dpkg-deb", "--root-owner-group", "-Zxz", "--build", str(top), str(out)],
                   check=True, capture_output=True)
    return out


def stanza(suite, name, version, depends, provides, pre, deb, pool):
    lines = [f"Package: {name}", f"Version: {version}", "Architecture: amd64"]
    lines += [f"{k}: {v}" for k, v in (("Pre-Depends", pre), ("Depends", depends),
                                       ("Provides", provides)) if v]
    if name == "liba":
        lines.append("X-Rocm-Gpu-Architecture: gfx1100 gfx1201")
    data = deb.read_bytes()
    lines += [f"Filename: {pool}", f"Size: {len(data)}", f"SHA256: {sha256(data)}",
              f"Description: {name}"]
    return "\n".join(lines) + "\n"


def write_repo(tmp):
    """repo/: dists/SUITE/Release and main/binary-amd64/Packages, pool/."""
    repo = tmp / "repo"
    index = {"sid": [], "experimental": []}
    for suite, name, version, depends, provides, pre in PACKAGES:
        deb = build_deb(tmp, name, version, depends, provides, pre)
        pool = f"pool/main/{name[0]}/{name}/{deb.name}"
        (repo / pool).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(deb, repo / pool)
        index[suite].append(stanza(suite, name, version, depends, provides, pre, deb, pool))
    for suite, stanzas in index.items():
        write_suite(repo, suite, "\n".join(stanzas))
    return repo


def write_suite(repo, suite, packages):
    d = repo / "dists" / suite
    (d / "main" / "binary-amd64").mkdir(parents=True, exist_ok=True)
    data = packages.encode()
    (d / "main" / "binary-amd64" / "Packages").write_bytes(data)
    (d / "Release").write_text(
        f"Origin: Debian\nSuite: {'unstable' if suite == 'sid' else suite}\nCodename: {suite}\n"
        f"Date: Fri, 30 Oct 2026 08:08:01 UTC\nSHA256:\n"
        f" {sha256(data)} {len(data)} main/binary-amd64/Packages\n")


def deb_set(repo, *args):
    return harness.run(BIN, "recipe", "deb-set", str(repo), *args)


def test_closure(repo):
    r = deb_set(repo, "--json", "--suite", "sid", "--suite", "experimental", "app")
    doc = json.loads(r.stdout or "{}")
    got = {p["name"]: (p["version"], p["suite"]) for p in doc.get("packages", [])}
    check("the closure of app, each requirement from the first suite that meets it", got == {
        "app": ("1.0-1", "sid"), "libpre": ("1-1", "sid"),
        # sid's liba is too old, sid's libb 1.5~rc1 older than 1.5: experimental's.
        "liba": ("2.0-1~exp1", "experimental"), "libb": ("1.5-1~exp1", "experimental"),
        "libalt": ("3-1", "sid"), "libvirt-impl": ("1-1", "sid")}, (got, r.stderr))
    check("the C library is a floor, the highest asked, not a member",
          doc.get("glibc") == {"version": "2.38", "needed_by": "liba 2.0-1~exp1"}, doc.get("glibc"))
    liba = next((p for p in doc.get("packages", []) if p["name"] == "liba"), {})
    deb = repo / liba.get("file", "none")
    check("each member pinned by pool path, SHA-256 and size, with its Depends and GPU targets",
          deb.is_file() and liba["sha256"] == sha256(deb.read_bytes()) and
          liba["size"] == deb.stat().st_size and liba["depends"].startswith("libb (>= 1.5)") and
          liba["gpu_architecture"] == "gfx1100 gfx1201", liba)
    app = next((p for p in doc.get("packages", []) if p["name"] == "app"), {})
    check("Pre-Depends are pinned with the Depends", app.get("depends", "").startswith("libpre"),
          app)
    suites = doc.get("suites", [])
    check("each suite's index is named with its Date and SHA-256", len(suites) == 2 and
          suites[0]["archive_suite"] == "unstable" and suites[0]["date"].startswith("Fri, 30") and
          suites[0]["index_sha256"] == sha256((repo / "dists/sid/main/binary-amd64/Packages")
                                              .read_bytes()), suites)
    r = deb_set(repo, "--json", "--suite", "experimental", "--suite", "sid", "libb")
    got = [(p["name"], p["version"]) for p in json.loads(r.stdout or "{}").get("packages", [])]
    check("experimental first: its version", got == [("libb", "1.5-1~exp1")], got)
    r = deb_set(repo, "--json", "--suite", "sid", "--suite", "experimental", "libb")
    got = [(p["name"], p["version"]) for p in json.loads(r.stdout or "{}").get("packages", [])]
    check("sid first: sid's", got == [("libb", "1.5~rc1-1")], got)
    return doc


def test_refusals(repo, tmp):
    r = deb_set(repo, "--suite", "sid", "broken")
    check("a requirement no suite meets names the package, the clause and the suites",
          r.returncode == 4 and "broken 1-1" in r.stderr and "libnowhere (>= 1)" in r.stderr and
          "sid" in r.stderr, (r.returncode, r.stderr))
    r = deb_set(repo, "--suite", "sid", "nosuch")
    check("a package no suite has is named", r.returncode == 4 and "nosuch" in r.stderr, r.stderr)
    r = deb_set(repo, "--suite", "sid", "app")
    check("sid alone lacks a version of liba new enough: refused",
          r.returncode == 4 and "liba (>= 2)" in r.stderr, r.stderr)
    moved = tmp / "repo-moved"
    shutil.copytree(repo, moved)
    index = moved / "dists/sid/main/binary-amd64/Packages"
    index.write_text(index.read_text().replace("Version: 3-1", "Version: 4-1"))
    r = deb_set(moved, "--suite", "sid", "libalt")
    check("an index that is not the one its Release lists is refused, naming it",
          r.returncode != 0 and "binary-amd64/Packages" in r.stderr and "Release" in r.stderr,
          r.stderr)
    shutil.rmtree(moved)


def recipe(folder, url, doc, requires, mirrors=(), drop=None):
    pins = []
    for p in doc["packages"]:
        if p["name"] == drop:
            continue
        pin = {k: p[k] for k in ("name", "version", "file", "sha256", "size", "suite")}
        pin.update({k: p[k] for k in ("depends", "provides") if p.get(k)})
        pins.append(pin)
    apt = {"repository": url, "suite": "sid", "component": "main", "seen": "written by the test",
           "packages": pins}
    if mirrors:
        apt["mirrors"] = list(mirrors)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "app.json").write_text(json.dumps({
        "format": 1, "name": "app", "summary": "a pinned Debian set",
        "versions": [{"version": "1.0-1", "os": ["linux"], "requires": requires,
                      "sources": {"linux-x86_64": {"apt": apt}},
                      "runtime": {"path": ["usr/share"]}}]}, indent=1))


def test_recipe_checks(tmp, doc):
    recipes = tmp / "recipes-check"
    env = {"CFAPKG_ROOT": str(tmp / "root-check"), "CFAPKG_RECIPES": str(recipes)}
    recipe(recipes, "http://127.0.0.1:9/", doc, ["glibc >= 2.38"], drop="libb")
    r = harness.run(BIN, "plan", "app", *FACTS, env=env)
    check("a set whose Depends name a package it lacks does not load, naming both",
          r.returncode != 0 and "app.json" in r.stderr and "liba 2.0-1~exp1" in r.stderr and
          "libb (>= 1.5)" in r.stderr, r.stderr)
    recipe(recipes, "http://127.0.0.1:9/", doc, ["glibc >= 2.34"])
    r = harness.run(BIN, "plan", "app", *FACTS, env=env)
    check("a libc6 floor not asked of the machine does not load, saying what to add",
          r.returncode != 0 and "glibc >= 2.38" in r.stderr, r.stderr)
    recipe(recipes, "http://127.0.0.1:9/", doc, ["glibc >= 2.38"])
    r = harness.run(BIN, "plan", "app", *FACTS[:-1], "2.36", env=env)
    check("on an older C library the set is refused with both versions",
          r.returncode == 3 and "glibc>=2.38" in r.stderr and "2.36" in r.stderr, r.stderr)


def installed(root):
    r = harness.run(BIN, "list", "--json", env={"CFAPKG_ROOT": str(root)})
    return {p["name"]: p["version"] for p in json.loads(r.stdout or "{}").get("packages", [])}


def test_mirror(tmp, repo, doc):
    """The repository has moved on (the pool files are gone); the mirror
    keeps every file, as snapshot.debian.org does."""
    www = tmp / "www"
    shutil.copytree(repo, www / "snapshot" / "archive" / "debian" / "20261030T080801Z")
    (www / "debian").mkdir(parents=True)
    srv = Nginx(www, tmp / "nginx")
    try:
        recipes = tmp / "recipes-mirror"
        mirror = srv.url("snapshot/archive/debian/20261030T080801Z/")
        recipe(recipes, srv.url("debian"), doc, ["glibc >= 2.38"], [mirror])
        root = tmp / "root-mirror"
        env = {"CFAPKG_ROOT": str(root), "CFAPKG_RECIPES": str(recipes), "CFAPKG_MIRRORS": ""}
        r = harness.run(BIN, "install", "app", *FACTS, "--yes", "--retries", "0", env=env)
        view = root / "envs" / "default" / "current"
        check("a .deb the repository no longer has comes from the mirror", r.returncode == 0 and
              installed(root).get("app") == "1.0-1" and "the next URL was tried" in r.stderr,
              r.stderr[-1500:])
        if view.exists():
            top = root / "envs" / "default" / view.read_text().strip() / "view"
            files = sorted(p.relative_to(top).as_posix() for p in top.rglob("version"))
            check("every member unpacked into the part", len(files) == len(doc["packages"]),
                  files)
        bad = www / "snapshot" / "archive" / "debian" / "20261030T080801Z"
        deb = next(bad.glob("pool/main/l/libalt/*.deb"))
        deb.write_bytes(deb.read_bytes()[:-1] + b"\0")
        root = tmp / "root-bad-mirror"
        env["CFAPKG_ROOT"] = str(root)
        r = harness.run(BIN, "install", "app", *FACTS, "--yes", "--retries", "0", env=env)
        check("a mirror's file that is not the pinned one is refused, naming it",
              r.returncode != 0 and "libalt_3-1_amd64.deb: SHA-256" in r.stderr,
              r.stderr[-1500:])
        check("and nothing is installed", not (root / "envs" / "default" / "current").exists())
    finally:
        srv.stop()


def main():
    with tempfile.TemporaryDirectory() as d:
        tmp = pathlib.Path(d)
        repo = write_repo(tmp)
        doc = test_closure(repo)
        test_refusals(repo, tmp)
        if doc.get("packages"):
            test_recipe_checks(tmp, doc)
            test_mirror(tmp, repo, doc)
    return check.report()


if __name__ == "__main__":
    os.environ.pop("CFAPKG_GPU", None)
    sys.exit(main())
