#!/usr/bin/env python3
"""Runs the planning scenarios in tests/scenarios/*.test against cfapkg.

A scenario is a small text file:

    # what it shows
    args: plan pytorch-cuda-stack --os windows --gpu gfx1200 --hip-sdk 6.4.2
    exit: 0
    package: zluda 6-preview.69      the plan holds this name and version
    absent: zluda 7-preview.10       ... and not this one
    problem: gpu-unsupported hip-sdk a problem record of this kind for this part
    says: does not support gfx1030   the text output contains this phrase
    host: linux                      only where cfapkg itself runs on this OS

Each scenario runs as text and with --json; both must exit as told.  They
run on a root of their own, so the first run caches the recipe folders'
indexes and its answer, and the later ones read them and take that
answer (solver/plan_memo.c) without solving; the plan is asked once more with
--no-index-cache, which parses every recipe, and the two documents must be
the same.
A plan is for the machine the facts name, but what this cfapkg can install
depends on the system it runs on too (APT sources are installed on Linux
only): such a scenario names its host.
"""
import json
import pathlib
import sys
import tempfile

import harness


def parse(path):
    spec = {"package": [], "absent": [], "problem": [], "says": [], "exit": 0}
    for raw in path.read_text().splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        key, _, value = line.partition(":")
        value = value.strip()
        if key == "args":
            spec["args"] = value.split()
        elif key == "host":
            spec["host"] = value
        elif key == "exit":
            spec["exit"] = int(value)
        elif key in ("package", "absent", "problem", "says"):
            spec[key].append(value)
        else:
            raise ValueError(f"{path}: unknown key {key!r}")
    return spec


def run(binary, args, root):
    return harness.run(binary, *args, env={"CFAPKG_ROOT": root})


def check(binary, path):
    spec = parse(path)
    errors = []
    with tempfile.TemporaryDirectory() as root:
        cold = run(binary, spec["args"] + ["--json"], root)
        text = run(binary, spec["args"], root)
        js = run(binary, spec["args"] + ["--json"], root)
        whole = run(binary, spec["args"] + ["--json", "--no-index-cache"], root)
    for what, other in (("the first run", cold), ("--no-index-cache", whole)):
        if (other.returncode, other.stdout) != (js.returncode, js.stdout):
            errors.append(f"{what} differs from the plan read through the cache:\n"
                          f"{other.stdout}\n{js.stdout}")
    for what, proc in (("text", text), ("json", js)):
        if proc.returncode != spec["exit"]:
            errors.append(f"{what} run exited {proc.returncode}, expected {spec['exit']}:"
                          f" {proc.stderr.strip()}")
    out = text.stdout + text.stderr
    for phrase in spec["says"]:
        if phrase not in out:
            errors.append(f"output lacks {phrase!r}:\n{out}")
    try:
        doc = json.loads(js.stdout)
    except json.JSONDecodeError:
        return errors + [f"--json printed no JSON: {js.stdout!r} {js.stderr!r}"]
    have = {(p["name"], p["version"]) for p in doc["packages"]}
    for item in spec["package"]:
        if tuple(item.split()) not in have:
            errors.append(f"plan lacks {item}; it has {sorted(have)}")
    for item in spec["absent"]:
        if tuple(item.split()) in have:
            errors.append(f"plan holds {item}")
    kinds = {(p["kind"], p["package"]) for p in doc["problems"]}
    for item in spec["problem"]:
        if tuple(item.split()) not in kinds:
            errors.append(f"no problem {item}; problems are {sorted(kinds, key=str)}")
    if spec["exit"] == 0 and doc["problems"]:
        errors.append("a solvable plan reported problems")
    if spec["exit"] == 3 and (doc["packages"] or not doc["problems"]):
        errors.append("an unsolvable plan must list problems and no packages")
    return errors


def main():
    binary, folder = sys.argv[1], pathlib.Path(sys.argv[2])
    host = "windows" if binary.lower().endswith(".exe") else "linux"
    passed = failed = 0
    for path in sorted(folder.glob("*.test")):
        if parse(path).get("host", host) != host:
            print(f"skip {path.name} (for a {parse(path)['host']} host)")
            continue
        errors = check(binary, path)
        if errors:
            failed += 1
            print(f"FAIL {path.name}")
            for e in errors:
                print("   ", e)
        else:
            passed += 1
            print(f"ok   {path.name}")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed or not passed else 0


if __name__ == "__main__":
    sys.exit(main())
