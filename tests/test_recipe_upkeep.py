#!/usr/bin/env python3
"""Keeping recipes current, against nginx on 127.0.0.1: two fake ZLUDA
archives and static files shaped like GitHub's releases API (a draft, an
older release and a tag that names no version among them).
`cfapkg recipe outdated` lists exactly the newer versions, with the
add-version line that records each; `cfapkg recipe add-version` writes a
recipe whose difference from the old text is only added lines, formatted
like its neighbours, with the served files' SHA-256 and size, that info
and plan then see; a version already there, a URL that answers 404, a bad
version or platform, and the built-in recipes of an installed cfapkg are
refused with the file unchanged.

    test_recipe_upkeep.py CFAPKG
"""
import difflib
import hashlib
import json
import pathlib
import shlex
import shutil
import sys

import channel
import harness

BIN = sys.argv[1]
check = harness.Checks()
FACTS = ["--gpu", "gfx1200", "--os", "windows", "--arch", "x86_64"]


def zluda_version(version, url, data, **extra):
    """A version in the key order of the real recipe, with what a new
    version must not inherit (status, note)."""
    v = {"version": version,
         "provides": ["cuda-driver-api", "cublas = 11"],
         "layout": [{"path": "cublas.dll", "as": "cublas64_11.dll"}],
         "status": {"gfx1200": "validated", "*": "candidate"},
         "sources": {"windows-x86_64": {"url": url, "sha256": hashlib.sha256(data).hexdigest(),
                                        "size": len(data), "format": "zip", "strip": 1}},
         "launcher": "zluda.exe",
         "runtime": {"path": ["."], "stage": ["*.dll"]},
         "note": f"build {version}, checked by hand"}
    v.update(extra)
    return v


def release(tag, assets, draft=False, prerelease=True, when="2026-09-01T10:00:00Z"):
    return {"url": "https://api.github.com/repos/x/y/releases/1", "tag_name": tag,
            "name": tag, "draft": draft, "prerelease": prerelease, "published_at": when,
            "assets": [{"name": n, "browser_download_url": u, "size": s,
                        "content_type": "application/octet-stream"} for n, u, s in assets]}


class World:
    """www/: archives and releases lists; recipes/: zluda (4-space indent)
    and tool (tab indent, an "upstream" with a tag pattern)."""

    def __init__(self, tmp, srv):
        self.tmp, self.srv = tmp, srv
        www = tmp / "www"
        self.z10 = channel._zip(channel.zluda_files("7-preview.10"), "zluda")
        self.z12w = channel._zip(channel.zluda_files("7-preview.12"), "zluda")
        self.z12l = channel._targz(channel.zluda_files("7-preview.12"), "zluda")
        self.tool2 = channel._targz({"tool": b"tool 2\n"}, "tool-2")
        for name, data in (("zluda10.zip", self.z10), ("zluda-windows-abc1234.zip", self.z12w),
                           ("zluda-linux-abc1234.tar.gz", self.z12l), ("tool-2.0.0.bin", self.tool2)):
            (www / name).write_bytes(data)
        u = srv.url
        z12 = [("zluda-windows-abc1234.zip", u("zluda-windows-abc1234.zip"), len(self.z12w)),
               ("zluda-linux-abc1234.tar.gz", u("zluda-linux-abc1234.tar.gz"), len(self.z12l)),
               ("SHA256SUMS.txt", u("SHA256SUMS.txt"), 160)]
        zluda_releases = [release("v7-preview.13", z12, draft=True),
                          release("v7-preview.12", z12),
                          release("nightly", z12),
                          release("v7-preview.11", [("zluda-windows-1111111.zip",
                                                     u("zluda-windows-1111111.zip"), 10)]),
                          release("v7-preview.10", z12),
                          release("v6-preview.79", z12, prerelease=False)]
        api = www / "api" / "repos"
        (api / "vosen" / "ZLUDA").mkdir(parents=True)
        (api / "vosen" / "ZLUDA" / "releases").write_text(json.dumps(zluda_releases, indent=2))
        (api / "acme" / "tool").mkdir(parents=True)
        (api / "acme" / "tool" / "releases").write_text(json.dumps(
            [release("release-2.0.0", [("tool-2.0.0-linux.bin", u("tool-2.0.0.bin"), 77)]),
             release("release-1.0.0", []), release("v3-beta", [])]))
        (www / "releases.json").write_text(json.dumps([release("v9", [])]))
        self.recipes = tmp / "recipes"
        self.recipes.mkdir()
        zluda = {"format": 1, "name": "zluda", "summary": "test ZLUDA",
                 "homepage": "https://github.com/vosen/ZLUDA",
                 "versions": [zluda_version("7-preview.10", u("zluda10.zip"), self.z10),
                              zluda_version("6-preview.69", u("zluda10.zip"), self.z10)]}
        tool = {"format": 1, "name": "tool", "summary": "a tool",
                "upstream": {"releases": "https://api.github.com/repos/acme/tool/releases",
                             "tag": "^release-([0-9.]+)$"},
                "versions": [{"version": "1.0.0", "os": ["linux"],
                              "sources": {"linux-x86_64": {"url": u("zluda10.zip"),
                                                           "sha256": hashlib.sha256(self.z10).hexdigest(),
                                                           "size": len(self.z10), "format": "zip"}}}]}
        self.zluda = self.recipes / "zluda.json"
        self.tool = self.recipes / "tool.json"
        self.zluda.write_text(json.dumps(zluda, indent=4) + "\n")
        self.tool.write_text(json.dumps(tool, indent="\t") + "\n")

    def run(self, *args, env=None):
        return harness.run(BIN, *args, "--recipes", str(self.recipes),
                           env={"CFAPKG_ROOT": str(self.tmp / "root"),
                                "CFAPKG_GITHUB_API": self.srv.url("api"), **(env or {})})


def only_added(old, new):
    """The lines a unified diff removes (none expected)."""
    diff = difflib.unified_diff(old.splitlines(True), new.splitlines(True), n=0)
    return [d for d in diff if d.startswith("-") and not d.startswith("---")]


def added_lines(old, new):
    diff = difflib.unified_diff(old.splitlines(True), new.splitlines(True), n=0)
    return [d[1:] for d in diff if d.startswith("+") and not d.startswith("+++")]


def test_outdated(w):
    r = w.run("recipe", "outdated", "zluda", "--json")
    check("outdated runs and exits 0 with a list", r.returncode == 0, r.stdout + r.stderr)
    try:
        got = json.loads(r.stdout)["recipes"][0]
    except (json.JSONDecodeError, IndexError):
        got = {}
    versions = [n["version"] for n in got.get("newer", [])]
    check("outdated lists exactly the newer versions, newest first (no draft, none older)",
          versions == ["7-preview.12", "7-preview.11"], versions)
    check("a tag that names no version is reported, not listed",
          got.get("skipped_tags") == ["nightly"], got.get("skipped_tags"))
    check("the releases list came from CFAPKG_GITHUB_API",
          got.get("releases_url", "").startswith(w.srv.url("api/repos/vosen/ZLUDA/releases")),
          got.get("releases_url"))
    new = got.get("newer", [{}])[0]
    urls = [a["url"] for a in new.get("assets", [])]
    check("the newer release's asset URLs are listed",
          w.srv.url("zluda-windows-abc1234.zip") in urls and
          w.srv.url("zluda-linux-abc1234.tar.gz") in urls, urls)
    cmd = new.get("command") or ""
    check("a ready-to-run add-version line takes the Windows archive (the recipe's platform)",
          cmd.startswith("cfapkg recipe add-version zluda 7-preview.12 ") and
          f"windows-x86_64={w.srv.url('zluda-windows-abc1234.zip')}" in cmd and
          "linux-x86_64" not in cmd, cmd)
    t = w.run("recipe", "outdated", "zluda")
    check("the text listing shows the versions and the line",
          t.returncode == 0 and "7-preview.12" in t.stdout and "7-preview.11" in t.stdout and
          "7-preview.13" not in t.stdout and "6-preview.79" not in t.stdout and cmd in t.stdout,
          t.stdout + t.stderr)
    return cmd


def test_add(w, cmd):
    old = w.zluda.read_text()
    args = shlex.split(cmd)
    check("the line names the program and the recipe folder", args[:3] == ["cfapkg", "recipe",
          "add-version"] and str(w.recipes) in args, args)
    r = harness.run(BIN, *args[1:], env={"CFAPKG_ROOT": str(w.tmp / "root")})
    new = w.zluda.read_text()
    check("add-version, run as outdated printed it, succeeds", r.returncode == 0,
          r.stdout + r.stderr)
    check("it says what it added", "zluda 7-preview.12: windows-x86_64 zip" in r.stdout and
          hashlib.sha256(w.z12w).hexdigest() in r.stdout, r.stdout)
    check("git diff shows only added lines", new != old and not only_added(old, new),
          only_added(old, new))
    added = added_lines(old, new)
    check("the added lines are indented like their neighbours (4 spaces a level)",
          added and all((len(a) - len(a.lstrip(" "))) % 4 == 0 and not a.startswith("\t")
                        for a in added) and '            "url": ' in "".join(added),
          "".join(added))
    doc = json.loads(new, object_pairs_hook=lambda kv: kv)
    check("the rest of the text (indent, key order, trailing newline) is byte for byte the old",
          added and new.endswith("}\n") and new.replace("".join(added), "", 1) == old and
          [k for k, _ in doc] == ["format", "name", "summary", "homepage", "versions"],
          new[-20:])
    data = json.loads(new)
    v = next((x for x in data["versions"] if x["version"] == "7-preview.12"), {})
    src = v.get("sources", {}).get("windows-x86_64", {})
    check("its sha256 and size are the served file's",
          src.get("sha256") == hashlib.sha256(w.z12w).hexdigest() and
          src.get("size") == len(w.z12w), src)
    check("format guessed, strip taken from the newest version",
          src.get("format") == "zip" and src.get("strip") == 1, src)
    newest = json.loads(old)["versions"][0]
    check("the package's shape is copied, status and note are not",
          all(v.get(k) == newest[k] for k in ("provides", "layout", "launcher", "runtime")) and
          "status" not in v and "note" not in v, v)
    check("the new version's keys follow the newest one's order",
          list(v) == ["version", "provides", "layout", "sources", "launcher", "runtime"], list(v))
    info = w.run("info", "zluda", "--json")
    try:
        seen = [x["version"] for x in json.loads(info.stdout)["versions"]]
    except (json.JSONDecodeError, KeyError):
        seen = []
    check("cfapkg info sees the new version", "7-preview.12" in seen, info.stdout + info.stderr)
    plan = w.run("plan", "zluda==7-preview.12", *FACTS, "--json")
    try:
        pkgs = {p["name"]: p for p in json.loads(plan.stdout)["packages"]}
    except (json.JSONDecodeError, KeyError):
        pkgs = {}
    check("plan zluda==7-preview.12 picks it, installable",
          plan.returncode == 0 and pkgs.get("zluda", {}).get("version") == "7-preview.12" and
          pkgs["zluda"].get("installable"), plan.stdout + plan.stderr)
    after = w.run("recipe", "outdated", "zluda")
    check("outdated then says up to date (the draft is not newer)",
          after.returncode == 0 and "up to date" in after.stdout, after.stdout + after.stderr)


def refused(w, name, args, code, words):
    """Exit code, the file byte for byte as it was, no file left beside
    it, and the reason named."""
    path = w.recipes / f"{name}.json"
    before = path.read_bytes()
    r = w.run("recipe", "add-version", name, *args)
    leftovers = [p.name for p in w.recipes.iterdir() if p.name not in ("zluda.json", "tool.json")]
    check(f"refused ({' '.join(args)[:60]}): exit {code}, the file unchanged, saying {words}",
          r.returncode == code and path.read_bytes() == before and not leftovers and
          all(x in r.stderr for x in words), (r.returncode, r.stderr, leftovers))


def test_refusals(w):
    win = f"windows-x86_64={w.srv.url('zluda-windows-abc1234.zip')}"
    refused(w, "zluda", ["7-preview.12", "--source", win], 2, ["already has version 7-preview.12"])
    refused(w, "zluda", ["7.0-preview.12", "--source", win], 2, ["already has"])
    missing = w.srv.url("zluda-windows-missing.zip")
    refused(w, "zluda", ["7-preview.14", "--source", f"windows-x86_64={missing}"], 8,
            [missing, "404"])
    refused(w, "zluda", ["7-preview.x", "--source", win], 2, ["7-preview.x"])
    refused(w, "zluda", ["8", "--source", f"win64={w.srv.url('a.zip')}"], 2, ["OS-ARCH"])
    refused(w, "zluda", ["8", "--source", f"windows-x86_64={w.srv.url('tool-2.0.0.bin')}"], 2,
            ["--format"])
    refused(w, "zluda", ["8"], 2, ["--source"])


def test_tool(w):
    r = w.run("recipe", "outdated", "tool", "--json")
    try:
        got = json.loads(r.stdout)["recipes"][0]
    except (json.JSONDecodeError, IndexError):
        got = {}
    versions = [n["version"] for n in got.get("newer", [])]
    check("upstream.tag's group maps release-2.0.0 to 2.0.0 (upstream.releases moved by "
          "CFAPKG_GITHUB_API)", r.returncode == 0 and versions == ["2.0.0"] and
          got.get("skipped_tags") == ["v3-beta"], r.stdout + r.stderr)
    old = w.tool.read_text()
    url = w.srv.url("tool-2.0.0.bin")
    r = w.run("recipe", "add-version", "tool", "2.0.0", "--source", f"linux-x86_64={url}",
              "--format", "tar.gz", "--strip", "1")
    new = w.tool.read_text()
    added = added_lines(old, new)
    check("a tab-indented recipe gets tab-indented lines, only added",
          r.returncode == 0 and not only_added(old, new) and added and
          all(a.startswith("\t\t") for a in added) and '\t\t\t\t\t"format": "tar.gz",\n' in added,
          r.stderr + "".join(added))
    v = json.loads(new)["versions"][0]
    check("--format and --strip are written as given, os copied",
          v.get("version") == "2.0.0" and v.get("os") == ["linux"] and
          v["sources"]["linux-x86_64"].get("strip") == 1, v)
    r = w.run("recipe", "outdated", "tool", "--releases-url", w.srv.url("releases.json"),
              "--json")
    try:
        versions = [n["version"] for n in json.loads(r.stdout)["recipes"][0]["newer"]]
    except (json.JSONDecodeError, IndexError, KeyError):
        versions = []
    check("--releases-url reads another list", r.returncode == 0 and versions == [],
          r.stdout + r.stderr)
    r = w.run("recipe", "outdated", "zluda", "--releases-url", w.srv.url("missing.json"))
    check("a releases list that answers 404 fails with exit 8, naming it",
          r.returncode == 8 and w.srv.url("missing.json") in r.stderr, r.stderr)


def test_installed_builtin(w):
    """An installed cfapkg's own recipes (beside the program) are not
    edited: a reinstall would undo it."""
    inst = w.tmp / "inst"
    (inst / "bin").mkdir(parents=True)
    share = inst / "share" / "cfapkg" / "recipes"
    share.mkdir(parents=True)
    exe = inst / "bin" / pathlib.Path(BIN).name
    shutil.copy2(BIN, exe)
    shutil.copy2(pathlib.Path(__file__).parent.parent / "recipes" / "gpus.json", share)
    shutil.copy2(w.zluda, share / "zluda.json")
    before = (share / "zluda.json").read_bytes()
    r = harness.run(str(exe), "recipe", "add-version", "zluda", "9",
                    "--source", f"windows-x86_64={w.srv.url('zluda-windows-abc1234.zip')}",
                    env={"CFAPKG_ROOT": str(w.tmp / "root"), "CFAPKG_RECIPES": ""})
    check("the built-in recipes of an installed cfapkg are refused, unchanged",
          r.returncode == 2 and "built-in recipe" in r.stderr and "--recipes" in r.stderr and
          (share / "zluda.json").read_bytes() == before, (r.returncode, r.stderr))


def main():
    with channel.www_served("cfapkg-upkeep-") as (tmp, srv):
        w = World(tmp, srv)
        cmd = test_outdated(w)
        test_add(w, cmd)
        test_refusals(w)
        test_tool(w)
        test_installed_builtin(w)
    return check.report()


if __name__ == "__main__":
    sys.exit(main())
