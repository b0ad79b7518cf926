#!/usr/bin/env python3
"""Command-line behaviour of cfapkg: options, exit codes, error messages that
name the file and the way out, extra recipe folders, facts files, JSON."""
import json
import os
import pathlib
import shlex
import shutil
import subprocess
import sys
import tempfile

import harness

BIN = sys.argv[1]
DATA = pathlib.Path(sys.argv[2])
TIMEOUT = harness.TIMEOUT
WIN = ["--os", "windows", "--gpu", "gfx1200", "--hip-sdk", "6.4.2"]
check = harness.Checks()


def run(*args, env=None):
    return harness.run(BIN, *args, env=env)


def test_basics():
    r = run("--version")
    check("version", r.returncode == 0 and r.stdout.startswith("cfapkg "), r.stdout)
    r = run("--help")
    check("help", r.returncode == 0 and "plan SPEC" in r.stdout and "search" in r.stdout)
    r = run("plan", "--help")
    check("plan help", r.returncode == 0 and "--allow-experimental" in r.stdout)
    r = run("frobnicate")
    check("unknown command", r.returncode == 2 and "unknown command" in r.stderr, r.stderr)
    r = run("plan", "zluda", "--gpux", "gfx1200")
    check("unknown option", r.returncode == 2 and "unknown option --gpux" in r.stderr, r.stderr)
    r = run("search", "--gpu", "gfx1200")
    check("option not for command", r.returncode == 2 and "does not take --gpu" in r.stderr)
    r = run("plan", "zluda", "--gpu")
    check("missing value", r.returncode == 2 and "needs a value" in r.stderr, r.stderr)


def test_facts_errors():
    r = run("plan", "pytorch-cuda-stack", "--os", "windows", env={"CFAPKG_GPU": ""})
    check("no gpu here, none named", r.returncode == 7 and "pass --gpu" in r.stderr, r.stderr)
    r = run("plan", "zluda", "--gpu", "no such card")
    check("bad gpu", r.returncode == 2 and 'unknown GPU "no such card"' in r.stderr
          and "cfapkg gpus" in r.stderr, r.stderr)
    r = run("plan", "zluda", "--gpu", "gfx1200", "--os", "macos")
    check("bad os", r.returncode == 2 and "use windows or linux" in r.stderr)
    r = run("plan", "zluda", "--gpu", "gfx1200", "--hip-runtime", "six")
    check("bad runtime", r.returncode == 2 and "hip-runtime \"six\"" in r.stderr)
    r = run("plan", "zluda>>1", "--gpu", "gfx1200")
    check("bad spec", r.returncode == 2 and "request \"zluda>>1\"" in r.stderr, r.stderr)
    r = run("plan", "pytorch-cuda-stack", "--os", "windows", "--hip-sdk", "6.4.2",
            env={"CFAPKG_GPU": "gfx1200"})
    check("CFAPKG_GPU", r.returncode == 0 and "gfx1200" in r.stdout, r.stderr)
    r = run("plan", "pytorch-cuda-stack", "--os", "windows", "--hip-sdk", "6.4.2",
            "--gpu", "gfx1150", env={"CFAPKG_GPU": "gfx1200"})
    check("--gpu wins over CFAPKG_GPU", r.returncode == 3 and "gfx1150" in r.stderr)


def test_facts_file(tmp):
    f = tmp / "facts.json"
    f.write_text(json.dumps({"os": "windows", "gpu": "gfx1200", "driver": "25.8.1",
                             "hip_runtimes": [6, 7], "hip_sdks": ["6.4.2"]}))
    r = run("plan", "pytorch-cuda-stack", "--facts", str(f), "--json")
    doc = json.loads(r.stdout or "{}")
    check("facts file", r.returncode == 0 and doc.get("unchecked") == [], r.stderr)
    r = run("plan", "pytorch-cuda-stack", "--facts", str(f), "--hip-sdk", "none")
    check("flags after the file win", r.returncode == 3 and "installed: none" in r.stderr,
          r.stderr)
    bad = tmp / "bad-facts.json"
    bad.write_text(json.dumps({"gpu": "gfx1200", "gpus": []}))
    r = run("plan", "zluda", "--facts", str(bad))
    check("bad facts key", r.returncode == 2 and "bad-facts.json" in r.stderr
          and "gpus: unknown key" in r.stderr, r.stderr)
    bad.write_text(json.dumps({"gpu": "gfx1200", "driver": "new"}))
    r = run("plan", "zluda", "--facts", str(bad))
    check("bad facts value", r.returncode == 2 and "bad-facts.json: driver \"new\"" in r.stderr,
          r.stderr)



def test_facts_held_whole(tmp):
    """Facts are not cut to fit: twelve HIP SDKs (more than the eight
    cfapkg once held) all reach the plan, and a driver version longer
    than 48 bytes, from a facts file, is the one the plan checks."""
    sdks = [f"5.{i}.0" for i in range(12)]
    flags = [w for v in sdks for w in ("--hip-sdk", v)]
    r = run("plan", "pytorch-cuda-stack", "--os", "windows", "--gpu", "gfx1200", *flags,
            "--json")
    doc = json.loads(r.stdout or "{}")
    have = [p.get("have") for p in doc.get("problems", []) if p.get("kind") == "system-missing"]
    check("twelve HIP SDKs are all kept", r.returncode == 3 and have == [", ".join(sdks)],
          (r.returncode, have, r.stderr[-300:]))
    driver = "0.1.0-2131798~24.04.abcdefghijklmnopqrstuvwxyz0123456789"
    f = tmp / "long-driver.json"
    f.write_text(json.dumps({"os": "windows", "gpu": "gfx1200", "driver": driver,
                             "hip_sdks": ["6.4.2"]}))
    r = run("plan", "pytorch-cuda-stack", "--facts", str(f), "--json")
    doc = json.loads(r.stdout or "{}")
    have = [p.get("have") for p in doc.get("problems", []) if p.get("kind") == "driver-too-old"]
    check("a driver of 56 bytes is read whole", r.returncode == 3 and have == [driver],
          (r.returncode, have, r.stderr[-300:]))


def test_recipe_folders(tmp):
    extra = tmp / "extra"
    extra.mkdir()
    zluda = json.loads((pathlib.Path(__file__).parent.parent / "recipes/zluda.json").read_text())
    newer = json.loads(json.dumps(zluda["versions"][0]))
    newer["version"] = "7-preview.12"
    zluda["versions"].insert(0, newer)
    (extra / "zluda.json").write_text(json.dumps(zluda))
    r = run("search", "zluda", "--recipes", str(extra))
    check("--recipes overrides", r.returncode == 0 and "7-preview.12" in r.stdout, r.stdout)
    r = run("search", "zluda", env={"CFAPKG_RECIPES": str(extra)})
    check("CFAPKG_RECIPES", r.returncode == 0 and "7-preview.12" in r.stdout, r.stdout)
    r = run("plan", "zluda==7-preview.12", *WIN, "--recipes", str(extra))
    # The copied version carries 7-preview.11's Windows pin: installable.
    check("plan from an extra folder", r.returncode == 0 and "7-preview.12" in r.stdout)
    broken = tmp / "broken"
    broken.mkdir()
    shutil.copy(DATA / "bad" / "badhash.json", broken)
    r = run("plan", "zluda", *WIN, "--recipes", str(broken))
    check("broken recipe named", r.returncode == 5 and "badhash.json: versions[0]" in r.stderr,
          r.stderr)
    r = run("search", "--recipes", str(tmp / "missing"))
    check("missing folder", r.returncode == 1 and "recipe folder" in r.stderr, r.stderr)


def test_versions_merged_whole(tmp):
    """Versions blocked for one reason are listed together, each named whole:
    6.4.2 is kept beside 6.4.20."""
    extra = tmp / "close-versions"
    extra.mkdir()
    sdk = json.loads((pathlib.Path(__file__).parent.parent / "recipes/hip-sdk.json").read_text())
    at = [v["version"] for v in sdk["versions"]].index("6.4.2")
    twin = json.loads(json.dumps(sdk["versions"][at]))
    twin["version"] = "6.4.20"
    sdk["versions"].insert(at, twin)
    (extra / "hip-sdk.json").write_text(json.dumps(sdk))
    r = run("plan", "pytorch-cuda-stack", "--os", "windows", "--gpu", "gfx1150", "--hip-sdk",
            "6.4", "--recipes", str(extra), "--json")
    versions = [p.get("versions", "") for p in json.loads(r.stdout or "{}").get("problems", [])
                if p.get("kind") == "gpu-unsupported" and p.get("package") == "hip-sdk"]
    listed = versions[0].split(", ") if versions else []
    check("close versions both listed", "6.4.20" in listed and "6.4.2" in listed, versions)


def test_lacking_named_whole(tmp):
    """A name the passed-over version lacks is listed even when it is part of
    another listed name: "sparse" beside "rocsparse"."""
    if harness.EMULATOR:  # APT sources are installed on Linux only
        return
    extra = tmp / "part-names"
    extra.mkdir()
    here = pathlib.Path(__file__).parent.parent / "recipes"
    zluda = json.loads((here / "zluda.json").read_text())
    for v in zluda["versions"]:
        v["requires"] = v.get("requires", []) + ["sparse"]
    (extra / "zluda.json").write_text(json.dumps(zluda))
    rocm = json.loads((here / "rocm-debian.json").read_text())
    for v in rocm["versions"]:
        for p in list(v.get("provides", [])):
            if isinstance(p, dict) and p.get("dep") == "rocsparse":
                v["provides"].append({"dep": "sparse", "gfx": p["gfx"]})
    (extra / "rocm-debian.json").write_text(json.dumps(rocm))
    r = run("plan", "pytorch-cuda-stack", "--os", "linux", "--gpu", "gfx1201", "--hip-sdk", "none",
            "--hip-runtime", "none", "--glibc", "2.43", "--recipes", str(extra))
    check("a lacking name inside another is listed too",
          "does not provide rocblas, rocsparse, sparse on gfx1201" in r.stdout, r.stdout[-800:])


def test_many_recipes(tmp):
    """A folder big enough to be parsed in parallel: same answers, and of two
    broken files the first in name order is the one reported."""
    chan = tmp / "many"
    gen = pathlib.Path(__file__).parent.parent / "bench" / "gen_channel.py"
    subprocess.run([sys.executable, str(gen), str(chan), "6000"], check=True,
                   stdout=subprocess.DEVNULL, timeout=TIMEOUT)
    request = (chan / "REQUEST").read_text().split()
    env = {"CFAPKG_NO_BUILTIN_RECIPES": "1"}
    args = ["plan", *request, "--recipes", str(chan), "--os", "windows", "--gpu", "gfx1200"]
    r = run(*args, "--json", env=env)
    doc = json.loads(r.stdout or "{}")
    check("many recipes plan", r.returncode == 0 and len(doc.get("packages", [])) > 5, r.stderr)
    r2 = run(*args, "--json", env=env)
    check("many recipes plan is stable", r2.stdout == r.stdout)
    files = sorted(chan.glob("comp*.json"))
    check("enough files to go parallel", len(files) >= 256, str(len(files)))
    for f in (files[200], files[100]):
        f.write_text(f.read_text().replace('"format":1', '"format":7', 1))
    r = run(*args, env=env)
    check("first broken file reported", r.returncode == 5 and files[100].name in r.stderr
          and files[200].name not in r.stderr, r.stderr)


def test_config_and_paths(tmp):
    """The data root and recipe folders, with paths Windows finds hard: spaces,
    non-ASCII names, more than 260 characters."""
    r = run("config", "--json", env={"CFAPKG_ROOT": "", "XDG_DATA_HOME": str(tmp / "xdg")})
    doc = json.loads(r.stdout)
    if doc["platform_os"] == "windows":
        want = "\\AppData\\Local\\cfapkg"
        check("default root in LOCALAPPDATA", doc["root"].endswith(want), doc["root"])
    else:
        check("default root in XDG_DATA_HOME", doc["root"] == str(tmp / "xdg" / "cfapkg"),
              doc["root"])
    r = run("config", "--json", "--root", str(tmp / "r o o t"))
    check("--root", json.loads(r.stdout)["root"] == str(tmp / "r o o t"))
    r = run("config", "--json", env={"CFAPKG_ROOT": str(tmp / "envroot")})
    check("CFAPKG_ROOT", json.loads(r.stdout)["root"] == str(tmp / "envroot"))
    deep = tmp
    for part in ["Recipes für Ärzte", "日本語 フォルダ", "x" * 60, "y" * 60, "z" * 60, "ü" * 40]:
        deep = deep / part
    deep.mkdir(parents=True)
    check("deep path is long", len(str(deep)) > 260, str(len(str(deep))))
    src = pathlib.Path(__file__).parent.parent / "recipes" / "zluda.json"
    zluda = json.loads(src.read_text())
    zluda["summary"] = "ZLUDA from a folder named 日本語 (test)"
    (deep / "zluda.json").write_text(json.dumps(zluda), encoding="utf-8")
    r = run("search", "zluda", "--recipes", str(deep), "--json")
    found = [x for x in json.loads(r.stdout or "{}").get("recipes", []) if x["name"] == "zluda"]
    check("long unicode recipe folder", r.returncode == 0 and found and
          found[0]["summary"] == zluda["summary"], r.stdout + r.stderr)
    facts = deep / "facts ü.json"
    facts.write_text(json.dumps({"os": "windows", "gpu": "gfx1200", "hip_sdks": ["6.4.2"]}))
    r = run("plan", "pytorch-cuda-stack", "--facts", str(facts), "--json")
    check("long unicode facts file", r.returncode == 0, r.stderr)


def test_queries():
    r = run("search", "--json")
    names = [x["name"] for x in json.loads(r.stdout)["recipes"]]
    check("search json", r.returncode == 0 and "zluda" in names and "hip-sdk" in names)
    r = run("search", "no-such-thing")
    check("search nothing", r.returncode == 4 and "no recipe matches" in r.stderr)
    r = run("info", "zluda", "--json")
    doc = json.loads(r.stdout)
    shas = [s["sha256"] for v in doc["versions"] for s in v["sources"]]
    check("info json", r.returncode == 0 and
          "e2959ed17c8ddae6bf2bf76cf3a7348f577a2548754685d776389df2220e5d9a" in shas)
    r = run("info", "zluda", "--gpu", "gfx1200")
    check("info status", "6-preview.69  [validated on gfx1200]" in r.stdout, r.stdout)
    r = run("info", "nope")
    check("info unknown", r.returncode == 4 and "cfapkg search lists them" in r.stderr)


def test_unknown_names(tmp):
    """A misspelt or unknown name is "no such package" (exit 4) in plan,
    info and pin alike, each naming the recipes it may have meant."""
    root = ["--root", str(tmp / "names-root")]
    r = run("plan", "zlude", *WIN)
    check("plan typo exits 4", r.returncode == 4 and "did you mean: zluda" in r.stderr,
          r.stderr)
    r = run("info", "zlude")
    check("info typo suggests", r.returncode == 4 and
          'no recipe named "zlude"; did you mean: zluda' in r.stderr, r.stderr)
    r = run("pin", "nosuch==1", *root)
    check("pin of no recipe", r.returncode == 4 and "no recipe named nosuch" in r.stderr,
          r.stderr)
    r = run("pin", "zlude==1", *root)
    check("pin typo suggests", r.returncode == 4 and "did you mean: zluda" in r.stderr,
          r.stderr)
    r = run("pin", "zluda==9", *root)
    check("pin no version", r.returncode == 4 and
          "no version of zluda matches ==9; versions: 7-preview.11, 7-preview.10, " in r.stderr
          and "6-preview.69" in r.stderr, r.stderr)
    r = run("pins", "--json", *root)
    check("refused pins write nothing", r.returncode == 0 and json.loads(r.stdout)["pins"] == [],
          r.stdout + r.stderr)
    r = run("pin", "zluda==6-preview.69", *root)
    check("a pin that fits is kept", r.returncode == 0, r.stderr)


def test_info_provides_installed(tmp):
    """info on a name recipes provide lists them; versions installed in the
    environment are marked, in text and JSON."""
    r = run("info", "rocblas")
    check("info of a provided name", r.returncode == 0 and
          "rocblas is not a recipe" in r.stdout and "hip-sdk (system) 6.4.2" in r.stdout
          and "os: windows; gfx: gfx1200" in r.stdout and "rocm (system)" in r.stdout,
          r.stdout + r.stderr)
    r = run("info", "rocblas", "--json")
    doc = json.loads(r.stdout or "{}")
    by = {(g["recipe"], v): g for g in doc.get("provided_by", []) for v in g["versions"]}
    sdk = by.get(("hip-sdk", "6.4.2"), {})
    check("info of a provided name, json", r.returncode == 0 and
          sdk.get("os") == ["windows"] and "gfx1200" in sdk.get("gfx", []) and
          sdk.get("installed") == [] and ("rocm-apt", "6.4.1") in by, r.stdout)
    extra = tmp / "meta-recipes"
    extra.mkdir()
    (extra / "cli-meta.json").write_text(json.dumps({
        "format": 1, "name": "cli-meta", "summary": "a test meta package", "kind": "meta",
        "versions": [{"version": "2", "provides": [{"dep": "cli-virtual=2", "os": ["windows"]}]},
                     {"version": "1", "provides": ["cli-virtual"]}]}))
    opts = ["--root", str(tmp / "info-root"), "--recipes", str(extra)]
    r = run("install", "cli-meta==1", "--yes", "--os", "windows", "--gpu", "gfx1200", *opts)
    check("install a meta package", r.returncode == 0, r.stdout + r.stderr)
    r = run("info", "cli-meta", *opts)
    check("info marks the installed version", r.returncode == 0 and
          "  1  (installed in default)" in r.stdout and "  2\n" in r.stdout, r.stdout)
    r = run("info", "cli-meta", "--json", *opts)
    doc = json.loads(r.stdout or "{}")
    check("info json marks installed", doc.get("env") == "default" and
          [v["installed"] for v in doc.get("versions", [])] == [False, True], r.stdout)
    r = run("info", "cli-virtual", *opts)
    check("providers marked installed", r.returncode == 0 and
          "cli-meta (meta) 2  [as cli-virtual=2; os: windows]" in r.stdout and
          "cli-meta (meta) 1 (installed in default)" in r.stdout, r.stdout)
    r = run("info", "cli-meta", "--env", "nosuch", *opts)
    check("info --env of no environment", r.returncode == 4 and "no environment" in r.stderr,
          r.stderr)


def test_plan_outputs(tmp):
    r = run("plan", "pytorch-cuda-stack", *WIN, "--json")
    doc = json.loads(r.stdout)
    zl = [p for p in doc["packages"] if p["name"] == "zluda"][0]
    check("plan json fields", set(zl) >= {"name", "version", "status", "url", "sha256", "size"}
          and zl["size"] == 32944552 and doc["problems"] == [])
    r = run("install", "pytorch-cuda-stack", *WIN, "--dry-run")
    check("install --dry-run", r.returncode == 0 and "6-preview.69" in r.stdout)
    r = run("install", "pytorch-cuda-stack", *WIN, "--offline", "--yes")
    check("install --offline with nothing cached", r.returncode == 8 and "offline" in r.stderr,
          r.stderr)
    tc = tmp / "tc"
    r = run("plan", "pytorch-cuda-stack", *WIN, "--testcase", str(tc))
    check("testcase", r.returncode == 0 and (tc / "testcase.t").exists())
    testsolv = shlex.split(os.environ.get("CFAPKG_TEST_TESTSOLV", "testsolv"))
    if (tc / "testcase.t").exists() and shutil.which(testsolv[0]):
        t = subprocess.run([*testsolv, str(tc / "testcase.t")], capture_output=True,
                           text=True, timeout=TIMEOUT)
        check("testsolv agrees", t.returncode == 0 and "differ" not in t.stdout,
              t.stdout + t.stderr)
    r = run("plan", "pytorch-cuda-stack", *WIN, "--quiet")
    check("quiet", r.returncode == 0 and r.stdout == "")


def test_locked_file_first(tmp):
    """install --locked reads the file before it looks at the machine: on
    this one (no AMD GPU) a bad file is still what the user hears about."""
    bad = tmp / "bad.lock"
    bad.write_text("{not json\n")
    r = run("install", "--locked", str(bad), "--yes", env={"CFAPKG_GPU": ""})
    check("install --locked BAD on a machine without a GPU names the file, not the GPU",
          r.returncode == 2 and f"{bad}:1:" in r.stderr and "not valid JSON" in r.stderr and
          "no AMD GPU" not in r.stderr, r.stderr)
    r = run("install", "--locked", str(tmp), "--yes", env={"CFAPKG_GPU": ""})
    check("install --locked FOLDER says it is a folder",
          r.returncode == 1 and f"{tmp}: is a folder" in r.stderr and "larger than" not in
          r.stderr, r.stderr)
    # A pipe with no writer: opening it to read would wait for one, so a
    # reader that did not look first would hang here until the timeout.
    fifo = tmp / "lock.fifo"
    os.mkfifo(fifo)
    r = run("install", "--locked", str(fifo), "--yes", env={"CFAPKG_GPU": ""})
    check("install --locked FIFO is refused at once as no regular file",
          r.returncode == 1 and f"{fifo}: cannot read (not a regular file?)" in r.stderr,
          r.stderr)
    fifo.unlink()


def main():
    with tempfile.TemporaryDirectory() as d:
        tmp = pathlib.Path(d)
        test_basics()
        test_facts_errors()
        test_facts_file(tmp)
        test_facts_held_whole(tmp)
        test_recipe_folders(tmp)
        test_versions_merged_whole(tmp)
        test_lacking_named_whole(tmp)
        test_many_recipes(tmp)
        test_config_and_paths(tmp)
        test_queries()
        test_unknown_names(tmp)
        test_info_provides_installed(tmp)
        test_plan_outputs(tmp)
        test_locked_file_first(tmp)
    return check.report()


if __name__ == "__main__":
    sys.exit(main())
