#!/usr/bin/env python3
"""Debian version spellings as recipe versions, end to end against nginx on
127.0.0.1: a package whose versions are 5.2.3-2 and 1:2.3-1 loads, the
epoch wins a plain request, a constraint with a revision picks that
version and one without a revision matches it, both versions install
into store folders whose names have no ':' (nor '~'), and a lockfile of
them installs again in a fresh root."""
import json
import sys

import channel
import harness

BIN = sys.argv[1]
check = harness.Checks()
NAME = "rocm-deb"
VERSIONS = ("5.2.3-2", "1:2.3-1", "6.4.43483.60401-83~24.04")


def write_recipes(tmp, srv):
    versions = []
    for i, version in enumerate(VERSIONS):
        data = channel._targz({"lib/librocm.so": f"rocm {version}\n".encode()}, "rocm")
        (tmp / "www" / f"rocm{i}.tar.gz").write_bytes(data)
        src = channel._source(srv.url(f"rocm{i}.tar.gz"), data, "tar.gz")
        versions.append({"version": version, "provides": [f"rocm = {version}"],
                         "sources": channel._both(src), "runtime": {"path": ["lib"]}})
    recipe = {"format": 1, "name": NAME, "summary": "Debian spellings", "versions": versions}
    user = {"format": 1, "name": "rocm-user", "summary": "needs a Debian revision", "kind": "meta",
            "versions": [{"version": "1.0-1~bpo1", "requires": ["rocm == 5.2.3-2"]}]}
    recipes = tmp / "recipes"
    recipes.mkdir()
    (recipes / f"{NAME}.json").write_text(json.dumps(recipe, indent=1))
    (recipes / "rocm-user.json").write_text(json.dumps(user, indent=1))
    return recipes


def planned(root, *specs):
    r = root.run("plan", *specs, *channel.FACTS, "--json")
    if r.returncode != 0:
        return {"error": r.stderr or r.stdout}
    return {p["name"]: p["version"] for p in json.loads(r.stdout)["packages"]}


def test_plan(root):
    r = root.run("info", NAME)
    check("both spellings load and info lists them as written",
          r.returncode == 0 and all(v in r.stdout for v in VERSIONS), r.stdout + r.stderr)
    check("the epoch wins", planned(root, NAME) == {NAME: "1:2.3-1"}, planned(root, NAME))
    check("a revision picks its version", planned(root, f"{NAME}==5.2.3-2") == {NAME: "5.2.3-2"},
          planned(root, f"{NAME}==5.2.3-2"))
    check("no revision matches any revision",
          planned(root, f"{NAME}==5.2.3") == {NAME: "5.2.3-2"}, planned(root, f"{NAME}==5.2.3"))
    check("a provided version with a revision meets a requirement naming it",
          planned(root, "rocm-user") == {"rocm-user": "1.0-1~bpo1", NAME: "5.2.3-2"},
          planned(root, "rocm-user"))
    check("an epoch bounds a range", planned(root, f"{NAME}<1:0") == {NAME: VERSIONS[2]},
          planned(root, f"{NAME}<1:0"))


def store_folders(root):
    return sorted(p.name for p in (root.path / "store").iterdir() if p.name.startswith(NAME))


def install(root, env, spec, want):
    if env != "default":
        root.run("env", "create", env)
    r = root.change("install", "--env", env, spec)
    check(f"install {spec} exits 0", r.returncode == 0, r.stdout + r.stderr)
    check(f"install {spec} installs {want}", root.listing(env) == {NAME: want},
          root.listing(env))
    check(f"the view holds {want}", (root.view(env, NAME) / "lib" / "librocm.so").read_text() ==
          f"rocm {want}\n")


def test_install(root, tmp):
    install(root, "default", NAME, "1:2.3-1")
    install(root, "old", f"{NAME}==5.2.3-2", "5.2.3-2")
    install(root, "tilde", f"{NAME}<1:0", VERSIONS[2])
    folders = store_folders(root)
    check("one store folder per version, none with ':' or '~'",
          len(folders) == 3 and not any(":" in f or "~" in f for f in folders), folders)
    check("':' and '~' are escaped",
          any(f.startswith(f"{NAME}-1@3A2.3-1-") for f in folders) and
          any(f.startswith(f"{NAME}-6.4.43483.60401-83@7E24.04-") for f in folders), folders)
    check("verify passes", root.run("verify").returncode == 0)
    lock = tmp / "deb.lock"
    r = root.run("lock", "-o", str(lock))
    check("lock exits 0", r.returncode == 0, r.stderr)
    fresh = channel.Root(BIN, tmp / "fresh", root.recipes)
    r = fresh.run("install", "--locked", str(lock), *channel.FACTS, "--yes")
    check("the lockfile installs in a fresh root", r.returncode == 0 and
          fresh.listing() == {NAME: "1:2.3-1"} and
          store_folders(fresh) == [f for f in folders if "1@3A" in f], r.stdout + r.stderr)


def main():
    with channel.www_served("cfapkg-deb-") as (tmp, srv):
        recipes = write_recipes(tmp, srv)
        root = channel.Root(BIN, tmp / "root", recipes)
        test_plan(root)
        test_install(root, tmp)
    return check.report()


if __name__ == "__main__":
    sys.exit(main())
