#!/usr/bin/env python3
"""Pins and what the plan does with them, against servers on 127.0.0.1 only:

- the plan prefers an installable version and names the newer ones it
  passed over for want of a pinned download (text and --json), and still
  solves, not installable, when only unavailable versions fit;
- trust on first use: 'recipe trust' fetches a source nobody pinned over
  HTTPS (nginx with a private CA), records its SHA-256 and size with URL,
  date and warning, plan and info mark it, a later download of changed
  bytes is refused, plain http to another host and a mirror rule's file://
  rewrite are never used, and 'recipe export-trusted' gives fragments a
  recipe (and 'channel build') takes as they are.
Test recipes point at the servers the test starts; no real upstream URL is
asked for (the real recipes are only refused or asked with --offline)."""
import hashlib
import io
import json
import pathlib
import re
import sys
import tempfile
import zipfile

import harness

sys.path.insert(0, str(pathlib.Path(__file__).parent / "servers"))
from nginx import Nginx, self_signed  # noqa: E402

BIN = sys.argv[1]
check = harness.Checks()
LINUX = ["--os", "linux", "--gpu", "gfx1100"]


def sha(data):
    return hashlib.sha256(data).hexdigest()


def run(*args):
    return harness.run(BIN, *args)


def as_json(r):
    try:
        return json.loads(r.stdout)
    except json.JSONDecodeError:
        return {}


def stand_in(tag):
    """A small zip with one top folder, as LibTorch's zip has."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr(zipfile.ZipInfo("libtorch/lib/libtorch_cuda.so", (2026, 1, 1, 0, 0, 0)),
                   f"stand-in {tag}\n" * 200)
    return buf.getvalue()


def recipe(folder, name, versions):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.json").write_text(json.dumps({
        "format": 1, "name": name, "summary": "test", "versions": versions}, indent=2))


def test_passed_over(tmp):
    """Version 2 has no pinned Linux download: on Linux version 1 is planned
    and 2 is named as passed over; on Windows 2 is planned; a pin that
    allows only 2 still solves, marked not installable."""
    folder = tmp / "po"
    pinned = {"url": "https://127.0.0.1:9/a.zip", "sha256": "ab" * 32, "size": 10,
              "format": "zip", "provenance": "a test"}
    nopin = {"url": "https://127.0.0.1:9/b.zip", "format": "zip",
             "unavailable": "nobody recorded its SHA-256"}
    recipe(folder, "po", [
        {"version": "3", "gfx": ["gfx1200"], "sources": {"linux-x86_64": nopin}},
        {"version": "2", "sources": {"linux-x86_64": nopin, "windows-x86_64": pinned}},
        {"version": "1", "sources": {"linux-x86_64": pinned, "windows-x86_64": pinned}}])
    args = ["--recipes", str(folder), "--root", str(tmp / "r-po")]
    r = run("plan", "po", *LINUX, *args)
    check("Linux: the installable version is planned", r.returncode == 0
          and re.search(r"^  po +1 +package", r.stdout, re.M), r.stdout + r.stderr)
    check("... and the newer one passed over is named, with why",
          "po 2 cannot be installed: nobody recorded its SHA-256" in r.stdout and
          "po 3 cannot be installed" not in r.stdout, r.stdout)
    doc = as_json(run("plan", "po", *LINUX, *args, "--json"))
    why = [(p["kind"], p["versions"], p["hint"]) for p in doc.get("passed_over", [])
           if p["kind"] == "not-installable"]
    check("--json: passed_over", why == [("not-installable", "2", "nobody recorded its SHA-256")]
          and doc.get("installable") is True, doc)
    doc = as_json(run("plan", "po", "--os", "windows", "--gpu", "gfx1100", *args, "--json"))
    check("Windows: the newest is pinned there, nothing passed over for want of a pin",
          [p["version"] for p in doc.get("packages", [])] == ["2"]
          and not [p for p in doc.get("passed_over", []) if p["kind"] == "not-installable"], doc)
    recipe(folder, "val", [
        {"version": "2", "sources": {"linux-x86_64": nopin}},
        {"version": "1", "status": {"gfx1100": "validated"}, "sources": {"linux-x86_64": pinned}}])
    doc = as_json(run("plan", "val", *LINUX, *args, "--json"))
    check("a version validated here is chosen for that: a newer candidate is not 'passed over'",
          [p["version"] for p in doc.get("packages", [])] == ["1"]
          and doc.get("passed_over") == [], doc)
    r = run("plan", "po==2", *LINUX, *args)
    check("only an unavailable version fits: solved, not installable (exit 6)",
          r.returncode == 6 and "po 2 cannot be installed yet on linux-x86_64" in r.stderr
          and "passed over" not in r.stdout, r.stdout + r.stderr)


def trust(root, *args):
    return run("recipe", "trust", *args, "--root", str(root))


def test_trust_first_use(tmp):
    www = tmp / "www"
    www.mkdir()
    first = stand_in("first")
    zipname = "libtorch-cxx11-abi-shared-with-deps-2.3.0+cu118.zip"
    (www / zipname).write_bytes(first)
    cert, key = self_signed(tmp)
    srv = Nginx(www, tmp / "nginx", tls=(cert, key))
    try:
        trust_over_https(tmp, srv, www, zipname, first, cert)
    finally:
        srv.stop()


def tofu_recipe(folder, url, name="tofu", extra=None):
    src = {"url": url.replace("+", "%2B"), "format": "zip", "strip": 1,
           "unavailable": "no public pin is known", **(extra or {})}
    recipe(folder, name, [{"version": "2.3.0+cu118", "sources": {
        "linux-x86_64": src, "windows-x86_64": dict(src, url="http://example.invalid/t.zip")}}])


def trust_over_https(tmp, srv, www, zipname, first, cert):
    folder, root = tmp / "tofu-recipes", tmp / "r-tofu"
    tofu_recipe(folder, srv.url(zipname))
    # A mirror rule whose file:// rewrite holds other bytes: a first
    # download to be trusted never takes it.
    decoy = tmp / "decoy"
    decoy.mkdir()
    (decoy / zipname).write_bytes(stand_in("decoy"))
    root.mkdir()
    (root / "mirrors.conf").write_text(f"{srv.url('')} {decoy.as_uri()}/\n")
    common = ["--recipes", str(folder), "--root", str(root)]
    ca = ["--ca-bundle", str(cert)]
    r = run("plan", "tofu", *LINUX, *common)
    check("before: not installable, the reason says how to trust it", r.returncode == 6
          and "no public pin is known" in r.stderr, r.stdout + r.stderr)
    r = run("recipe", "trust", "tofu", "2.3.0+cu118", "linux-x86_64", *common, *ca)
    check("trust: fetched over HTTPS, its SHA-256 printed, a warning given", r.returncode == 0
          and sha(first) in r.stdout and "not checked against anyone else's" in r.stderr,
          r.stdout + r.stderr)
    doc = json.loads((root / "first-use.json").read_text())
    pin = (doc.get("pins") or [{}])[0]
    check("recorded: URL, SHA-256, size, date and the warning",
          pin.get("url") == srv.url(zipname).replace("+", "%2B") and pin.get("sha256") ==
          sha(first) and pin.get("size") == len(first) and pin.get("recorded", "").endswith("Z")
          and "not checked against anyone else's pin" in pin.get("warning", "")
          and "not checked" in doc.get("warning", ""), doc)
    marks(common)
    r = run("install", "tofu", *LINUX, *common, *ca, "--yes")
    check("install verifies against the pin (from the cache, no second download)",
          r.returncode == 0 and list((root / "store").glob("tofu-*/lib/libtorch_cuda.so")),
          r.stdout + r.stderr)
    r = run("recipe", "trust", "tofu", "2.3.0+cu118", "linux-x86_64", *common, *ca)
    check("trusting it again is refused: untrust first", r.returncode == 2
          and "recipe untrust tofu 2.3.0+cu118 linux-x86_64" in r.stderr, r.stderr)
    changed_is_refused(tmp, root, www, zipname, first, folder, ca)
    exported(tmp, srv, zipname, first, common, ca)
    r = run("recipe", "untrust", "tofu", "2.3.0+cu118", "linux-x86_64", *common)
    r2 = run("plan", "tofu", *LINUX, *common)
    check("untrust: not installable again", r.returncode == 0 and r2.returncode == 6,
          r.stdout + r.stderr + r2.stderr)


def marks(common):
    r = run("plan", "tofu", *LINUX, *common)
    check("plan marks the part", r.returncode == 0 and "tofu 2.3.0+cu118: its linux-x86_64 "
          "download is trusted on first use" in r.stdout, r.stdout + r.stderr)
    doc = as_json(run("plan", "tofu", *LINUX, *common, "--json"))
    part = (doc.get("packages") or [{}])[0]
    check("plan --json marks it", part.get("trust") == "first-use" and part.get("first_use"),
          part)
    r = run("info", "tofu", *common)
    check("info marks it", "trusted on first use here" in r.stdout
          and "not checked against anyone else's pin" in r.stdout, r.stdout)
    doc = as_json(run("info", "tofu", *common, "--json"))
    src = [s for v in doc.get("versions", []) for s in v["sources"]
           if s["platform"] == "linux-x86_64"]
    check("info --json marks it", src and src[0].get("trust") == "first-use"
          and src[0].get("first_use"), doc)
    doc = as_json(run("recipe", "trusted", *common, "--json"))
    check("recipe trusted lists it as applied", [p.get("status") for p in doc.get("pins", [])] ==
          ["applied"], doc)


def changed_is_refused(tmp, root, www, zipname, first, folder, ca):
    """Another machine (root) holding the same pins: the server's file
    changed, so its download is refused; the original passes."""
    other = tmp / "r-tofu-2"
    other.mkdir()
    (other / "first-use.json").write_bytes((root / "first-use.json").read_bytes())
    (www / zipname).write_bytes(stand_in("other"))  # as long as "first": the hash decides
    args = ["fetch", "tofu", *LINUX, "--recipes", str(folder), "--root", str(other), *ca]
    r = run(*args)
    check("a changed file on the server is refused by the pin (exit 9), nothing stored",
          r.returncode == 9 and "SHA-256 " + sha(first) + " expected" in r.stderr
          and not list((other / "store").glob("tofu-*")), r.stdout + r.stderr)
    (www / zipname).write_bytes(first)
    r = run(*args)
    check("the file it was first: accepted", r.returncode == 0
          and list((other / "store").glob("tofu-*")), r.stdout + r.stderr)


def exported(tmp, srv, zipname, first, common, ca):
    """The fragments replace the recipe's source as they are: a fresh root,
    without the pin, plans it installable and a channel is built of it."""
    r = run("recipe", "export-trusted", *common)
    doc = as_json(r)
    frag = doc.get("recipes", [{}])[0]
    src = frag.get("versions", [{}])[0].get("sources", {}).get("linux-x86_64", {})
    check("export: recipe fragments with the pin and where it came from",
          frag.get("name") == "tofu" and src.get("sha256") == sha(first)
          and src.get("size") == len(first) and "unavailable" not in src
          and "trusted on first use" in src.get("provenance", ""), r.stdout + r.stderr)
    folder = tmp / "maintainer"
    tofu_recipe(folder, srv.url(zipname))
    text = json.loads((folder / "tofu.json").read_text())
    text["versions"][0]["sources"]["linux-x86_64"] = src
    (folder / "tofu.json").write_text(json.dumps(text, indent=2))
    fresh = ["--recipes", str(folder), "--root", str(tmp / "r-fresh")]
    r = run("plan", "tofu", *LINUX, *fresh)
    check("a recipe with the fragment: installable, no first-use mark", r.returncode == 0
          and "trusted on first use" not in r.stdout, r.stdout + r.stderr)
    run("channel", "keygen", str(tmp / "m.key"))
    r = run("channel", "build", str(folder), "--key", str(tmp / "m.key"), "--name", "m",
            "--root", str(tmp / "r-fresh"))
    check("channel build takes it", r.returncode == 0, r.stdout + r.stderr)


def test_refusals(tmp):
    folder, root = tmp / "refuse", tmp / "r-refuse"
    tofu_recipe(folder, "https://127.0.0.1:9/never.zip")
    common = ["--recipes", str(folder), "--root", str(root)]
    r = run("recipe", "trust", "tofu", "2.3.0+cu118", "windows-x86_64", *common)
    check("plain http to another host is refused before any download", r.returncode == 6
          and "only over HTTPS" in r.stderr and not (root / "first-use.json").exists(), r.stderr)
    tofu_recipe(folder, "http://127.0.0.1:9/never.zip", name="loop")
    r = run("recipe", "trust", "loop", "2.3.0+cu118", "linux-x86_64", *common, "--retries", "0")
    check("http to this machine itself is accepted (a network error here, no refusal)",
          r.returncode == 8 and "only over HTTPS" not in r.stderr, r.stderr)
    r = run("recipe", "trust", "zluda", "6", "windows-x86_64", "--root", str(root))
    check("a source its recipe pins is refused, naming the pin's provenance",
          r.returncode == 2 and "pinned by its recipe" in r.stderr and "four sources agree"
          in r.stderr, r.stderr)
    r = run("recipe", "trust", "libtorch-cuda", "2.3.0+cu118", "linux-x86_64", "--root",
            str(root), "--offline")
    check("the shipped LibTorch Linux zip can be trusted (here: --offline stops it)",
          r.returncode == 8 and "--offline" in r.stderr, r.stderr)
    r = run("recipe", "trust", "zluda", "99", "linux-x86_64", "--root", str(root))
    check("no such version: exit 4", r.returncode == 4 and "no version \"99\"" in r.stderr,
          r.stderr)
    r = run("recipe", "untrust", "zluda", "6", "linux-x86_64", "--root", str(root))
    check("untrust of nothing: exit 4", r.returncode == 4, r.stderr)
    root.mkdir(exist_ok=True)
    (root / "first-use.json").write_text('{"format": 1, "pins": [{"recipe": 3}]}')
    r = run("plan", "zluda", *LINUX, "--root", str(root))
    check("a broken first-use file names itself and the way out", r.returncode == 5
          and "first-use.json" in r.stderr and "delete it" in r.stderr, r.stderr)
    (root / "first-use.json").write_text('{"format": 1, "pins": [')
    r = run("plan", "zluda", *LINUX, "--root", str(root))
    check("so does one that is not JSON at all", r.returncode == 5 and
          "first-use.json:1:" in r.stderr and "delete it" in r.stderr, r.stderr)


def main():
    with tempfile.TemporaryDirectory() as d:
        tmp = pathlib.Path(d)
        test_passed_over(tmp)
        test_refusals(tmp)
        test_trust_first_use(tmp)
    return check.report()


if __name__ == "__main__":
    sys.exit(main())
