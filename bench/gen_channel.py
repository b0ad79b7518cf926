#!/usr/bin/env python3
"""Writes a synthetic recipe channel for the planning benchmark.

TOTAL package versions (100,000 by default) spread over recipes the way real
channels are: most components have a handful of versions, some tens, a few
about a hundred.  Components form projects of 100 that build on each other
and on a shared core of 200 libraries, so a request pulls in a project and
part of the core, not the whole channel.  Dependencies are mostly floors,
sometimes a floor and a cap; some components provide virtual names (as ZLUDA
provides cublas = 11/12/13) that others require; some versions support only
some GPU targets; a few conflict.  Deterministic for the same arguments.

usage: gen_channel.py DIR [TOTAL]
"""
import json
import pathlib
import random
import sys

GFX = ["gfx1030", "gfx1100", "gfx1101", "gfx1102", "gfx1150", "gfx1200", "gfx1201"]
CORE = 200
PROJECT = 100


def version(i):
    return f"{i // 10}.{i % 10}.0" if i % 7 else f"{i // 10}.{i % 10}.0-rc.1"


def version_count(rng):
    r = rng.random()
    if r < 0.6:
        return rng.randint(3, 10)
    if r < 0.9:
        return rng.randint(11, 40)
    return rng.randint(41, 120)


def dep_target(rng, c):
    """An earlier component of the same project, or a core library."""
    base = max(CORE, c - c % PROJECT)
    if c > base and rng.random() < 0.6:
        return rng.randrange(base, c)
    return rng.randrange(0, min(c, CORE)) if c > 0 else None


def requirement(rng, name, nver_dep, i):
    lo = rng.randrange(0, max(1, min(i + 1, nver_dep)))
    shape = rng.random()
    if shape < 0.7:
        return f"{name}>={version(lo)}"
    if shape < 0.9:
        hi = rng.randrange(nver_dep - nver_dep // 5, nver_dep + 1)
        return f"{name}>={version(lo)},<{hi // 10}.{hi % 10 + 1}"
    return name


def make_version(rng, c, i, counts):
    v = {"version": version(i),
         "sources": {"windows-x86_64": {"url": f"https://example.invalid/c{c}/{i}.zip",
                                        "sha256": f"{(c * 100003 + i):064x}",
                                        "size": 1000 + i, "format": "zip"},
                     "linux-x86_64": {"url": f"https://example.invalid/c{c}/{i}.tar.gz",
                                      "sha256": f"{(c * 100019 + i):064x}",
                                      "size": 1000 + i, "format": "tar.gz"}}}
    req = set()
    for _ in range(rng.randint(1, 4)):
        d = dep_target(rng, c)
        if d is not None:
            req.add(requirement(rng, f"comp{d:05d}", counts[d], i))
    if c % 10 == 3 and c > CORE:
        req.add(f"api{(c // 10) % 20}>={1 + i % 3}")
    if req:
        v["requires"] = sorted(req)
    if c < CORE and c % 10 == 0:
        v["provides"] = [f"api{(c // 10) % 20} = {1 + i % 3}"]
    if c % 17 == 0:
        v["gfx"] = GFX if i % 4 else rng.sample(GFX, 4)
    if c % 13 == 0 and i % 2 and c + 1 < len(counts):
        v["conflicts"] = [f"comp{c + 1:05d}<{version(1)}"]
    v["status"] = {"gfx1200": "validated", "*": "candidate"} if i % 5 == 0 else {"*": "candidate"}
    return v


def main():
    out = pathlib.Path(sys.argv[1])
    total = int(sys.argv[2]) if len(sys.argv) > 2 else 100000
    rng = random.Random(20261129)
    counts = []
    while sum(counts) < total:
        counts.append(version_count(rng))
    counts[-1] -= sum(counts) - total
    out.mkdir(parents=True, exist_ok=True)
    for c, n in enumerate(counts):
        name = f"comp{c:05d}"
        recipe = {"format": 1, "name": name, "summary": f"synthetic component {c}",
                  "versions": [make_version(rng, c, i, counts) for i in range(n)]}
        (out / f"{name}.json").write_text(json.dumps(recipe, separators=(",", ":")))
    gpus = pathlib.Path(__file__).resolve().parent.parent / "recipes" / "gpus.json"
    (out / "gpus.json").write_text(gpus.read_text())
    top = [f"comp{c:05d}" for c in range(len(counts) - 1, CORE, -PROJECT)][:5]
    (out / "REQUEST").write_text(" ".join(top) + "\n")
    print(f"{sum(counts)} versions in {len(counts)} recipes under {out}; request: {' '.join(top)}")


if __name__ == "__main__":
    main()
