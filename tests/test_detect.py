#!/usr/bin/env python3
"""Machine detection against fixture trees (CFAPKG_SYSROOT): each tree's
'cfapkg detect --json' must hold its expected JSON (tests/data/sysroots/
NAME.expect.json: every key there must match; a string starting with '~'
only has to be contained), plus GPU choice, overrides, the no-GPU message,
planning from detected facts, and the privacy of 'cfapkg report'."""
import json
import pathlib
import shutil
import sys
import tempfile

import harness

BIN = sys.argv[1]
ROOTS = pathlib.Path(sys.argv[2])
check = harness.Checks()


def run(*args, env=None):
    return harness.run(BIN, *args, env=env, drop=("HSA_OVERRIDE_GFX_VERSION",))


def holds(want, have, path="$"):
    """Where want and have differ (None when have holds want)."""
    if isinstance(want, dict):
        if not isinstance(have, dict):
            return f"{path}: expected an object"
        for k, v in want.items():
            if k not in have:
                return f"{path}.{k}: missing"
            d = holds(v, have[k], f"{path}.{k}")
            if d:
                return d
        return None
    if isinstance(want, list):
        if not isinstance(have, list) or len(have) != len(want):
            return f"{path}: expected {len(want)} items, got {have!r}"
        for i, (w, h) in enumerate(zip(want, have)):
            d = holds(w, h, f"{path}[{i}]")
            if d:
                return d
        return None
    if isinstance(want, str) and want.startswith("~"):
        return None if isinstance(have, str) and want[1:] in have else f"{path}: {have!r}"
    return None if want == have else f"{path}: expected {want!r}, got {have!r}"


def detect(tree, *args, env=None):
    e = {"CFAPKG_SYSROOT": str(ROOTS / tree)}
    e.update(env or {})
    return run("detect", "--json", *args, env=e)


def test_fixtures():
    for expect in sorted(ROOTS.glob("*.expect.json")):
        tree = expect.name[: -len(".expect.json")]
        r = detect(tree)
        try:
            have = json.loads(r.stdout)
        except json.JSONDecodeError:
            check(tree, False, r.stdout + r.stderr)
            continue
        diff = holds(json.loads(expect.read_text()), have)
        check(f"fixture {tree}", diff is None, diff)
        check(f"fixture {tree} exit", r.returncode == (7 if not have["gpus"] else 0),
              str(r.returncode))


def test_choice_and_overrides():
    r = detect("rx7900xtx-igpu", "--gpu-index", "1")
    check("--gpu-index", json.loads(r.stdout)["selected"] == 1, r.stdout)
    r = detect("rx7900xtx-igpu", "--gpu-index", "5")
    check("--gpu-index out of range", r.returncode == 4 and "GPU index 5" in r.stderr, r.stderr)
    r = detect("apu-gfx1150", env={"HSA_OVERRIDE_GFX_VERSION": "11.0.0"})
    d = json.loads(r.stdout)
    check("HSA_OVERRIDE_GFX_VERSION reported", d["gfx_override"] == "gfx1100"
          and d["gpus"][0]["gfx"] == "gfx1150", r.stdout)
    r = detect("apu-gfx1150", env={"HSA_OVERRIDE_GFX_VERSION": "eleven"})
    check("bad override warned", "HSA_OVERRIDE_GFX_VERSION=eleven" in r.stdout, r.stdout)


def plan(tree, *args, env=None):
    e = {"CFAPKG_SYSROOT": str(ROOTS / tree), "CFAPKG_GPU": ""}
    e.update(env or {})
    return run("plan", "pytorch-cuda-stack", *args, env=e)


def test_planning_from_detection():
    r = plan("rx9060xt", "--json")
    d = json.loads(r.stdout or "{}")
    names = {(p["name"], p["version"]) for p in d.get("packages", [])}
    check("plan from detection", r.returncode == 0 and d["gpu"]["gfx"] == "gfx1200"
          and ("rocm", "6.4.2") in names and d["unchecked"] == [], r.stdout + r.stderr)
    r = plan("rx9060xt")
    check("plan says which GPU", "Detected GPU 0: AMD Radeon RX 9060 XT (gfx1200)" in r.stderr,
          r.stderr)
    r = plan("rx9060xt", "--gpu", "gfx1100", "--os", "linux", "--hip-sdk", "6.4.2", "--json")
    check("--gpu wins over detection", json.loads(r.stdout)["gpu"]["gfx"] == "gfx1100", r.stdout)
    r = plan("rx9060xt", "--os", "linux", "--hip-sdk", "6.4.2", "--json",
             env={"CFAPKG_GPU": "gfx1101"})
    check("CFAPKG_GPU wins over detection", json.loads(r.stdout)["gpu"]["gfx"] == "gfx1101",
          r.stdout)
    r = plan("rx9060xt", "--hip-sdk", "none")
    check("a flag overrides one detected fact", r.returncode == 3 and "installed: none" in r.stderr,
          r.stderr)
    r = plan("apu-gfx1150", "--json", env={"HSA_OVERRIDE_GFX_VERSION": "11.0.0"})
    check("override plans for its target", json.loads(r.stdout)["gpu"]["gfx"] == "gfx1100",
          r.stdout)
    r = plan("rx7900xtx-igpu", "--gpu-index", "1")
    check("--gpu-index plans for that GPU", r.returncode == 3 and "gfx1036" in r.stderr, r.stderr)
    r = plan("no-amd")
    check("no AMD GPU", r.returncode == 7 and "no AMD GPU found" in r.stderr
          and "--gpu gfx1200" in r.stderr, r.stderr)


def test_report_privacy(tmp):
    home = tmp / "home" / "alice"
    shutil.copytree(ROOTS / "rx9060xt", home / "machine")
    env = {"CFAPKG_SYSROOT": str(home / "machine"), "HOME": str(home), "USER": "alice",
           "USERNAME": "alice", "GITHUB_TOKEN": "ghp_secret123", "CFAPKG_TOKEN": "tok_secret"}
    out = tmp / "report.json"
    r = run("report", "-o", str(out), env=env)
    text = out.read_text() if out.exists() else ""
    check("report written", r.returncode == 0 and text, r.stderr)
    doc = json.loads(text or "{}")
    check("report has versions", doc.get("cfapkg_version") and doc.get("os_build") is not None
          and doc.get("gpus"), text)
    for secret in ("alice", str(home), "ghp_secret123", "tok_secret"):
        check(f"report leaks nothing: {secret}", secret not in text, text)
    check("report keeps the SDK", any(s["version"] == "6.4.2" for s in doc.get("hip_sdks", [])))


def main():
    with tempfile.TemporaryDirectory() as d:
        test_fixtures()
        test_choice_and_overrides()
        test_planning_from_detection()
        test_report_privacy(pathlib.Path(d))
    return check.report()


if __name__ == "__main__":
    sys.exit(main())
