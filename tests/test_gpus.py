#!/usr/bin/env python3
"""GPUs by the names people know: --gpu (CFAPKG_GPU, a facts file's gpu,
info --gpu) takes a target in any case, a product name from gpus.json
(case, spaces and the words AMD and Radeon do not matter; a part that fits
one target is enough) or a PCI id with an optional revision; a name that
fits several targets lists them, one that fits none lists the nearest, and
a target gpus.json lacks is refused before solving.  'cfapkg gpus' lists
the table.  Every expected target is read from recipes/gpus.json."""
import json
import pathlib
import re
import sys
import tempfile

import harness

BIN = sys.argv[1]
TABLE = json.loads(pathlib.Path(sys.argv[2]).read_text())
DEVICES = TABLE["devices"]
TARGETS = {t["gfx"]: t for t in TABLE["targets"]}
WIN = ["--os", "windows", "--hip-sdk", "6.4.2"]
check = harness.Checks()


def run(*args, env=None):
    return harness.run(BIN, *args, env=env)


def norm(text):
    """What cfapkg compares: letters and digits, lower case, without the
    words AMD and Radeon."""
    words = re.findall(r"[A-Za-z0-9]+", text)
    return "".join(w.lower() for w in words if w.lower() not in ("amd", "radeon"))


def fitting(name):
    """The devices a name fits: those it names whole, else those it is part of."""
    exact = [d for d in DEVICES if norm(d["name"]) == norm(name)]
    return exact or [d for d in DEVICES if norm(name) in norm(d["name"])]


def pci_of(d):
    return d["pci"] + (":" + d["revision"] if "revision" in d else "")


def device(name):
    found = [d for d in DEVICES if d["name"] == name]
    assert found, f"gpus.json has no {name!r}; the test needs one"
    return found[0]


def planned_gfx(gpu, env=None):
    """The target a plan was made for, or None; and the run."""
    args = ["plan", "pytorch-cuda-stack", *WIN, "--json"]
    r = run(*args, env=env) if gpu is None else run(*args, "--gpu", gpu, env=env)
    try:
        return json.loads(r.stdout)["gpu"]["gfx"], r
    except (json.JSONDecodeError, KeyError, TypeError):
        return None, r


def test_spellings():
    xtx = device("AMD Radeon RX 7900 XTX")
    for spelling in ("RX 7900 XTX", "7900xtx", "radeon rx 7900 xtx", "AMD RADEON RX 7900 XTX"):
        want = {d["gfx"] for d in fitting(spelling)}
        assert want == {xtx["gfx"]}, f"gpus.json: {spelling} fits {want}; the test needs one"
        got, r = planned_gfx(spelling)
        check(f"--gpu {spelling!r}", got == xtx["gfx"], f"{got} {r.returncode} {r.stderr}")
    for gfx in (TABLE["targets"][0]["gfx"], xtx["gfx"], TABLE["targets"][-1]["gfx"]):
        got, r = planned_gfx(gfx.upper())
        check(f"--gpu {gfx.upper()}", got == gfx, f"{got} {r.stderr}")
    same_id = {d["gfx"] for d in DEVICES if d["pci"] == xtx["pci"]}
    assert len(same_id) == 1, f"gpus.json: {xtx['pci']} is of {same_id}; the test needs one"
    got, r = planned_gfx(xtx["pci"].upper())
    check("--gpu PCI id in capitals", got == xtx["gfx"], f"{got} {r.stderr}")


def split_ids():
    """A PCI id whose revisions are of several targets, and the entry whose
    target is the odd one out."""
    for pci in dict.fromkeys(d["pci"] for d in DEVICES):
        entries = [d for d in DEVICES if d["pci"] == pci]
        targets = [d["gfx"] for d in entries]
        if len(set(targets)) > 1:
            odd = [d for d in entries if targets.count(d["gfx"]) == 1]
            return pci, entries, odd[0]
    raise AssertionError("gpus.json has no PCI id split by revision; the test needs one")


def test_pci_revision():
    pci, entries, odd = split_ids()
    got, r = planned_gfx(pci_of(odd).upper())
    check("--gpu VVVV:DDDD:RR picks the revision's target", got == odd["gfx"],
          f"{pci_of(odd)}: {got} {r.stderr}")
    got, r = planned_gfx(pci)
    lines = r.stderr.splitlines()
    check("a PCI id of several targets is refused", r.returncode == 2 and got is None
          and "more than one target" in r.stderr, f"{r.returncode} {r.stderr}")
    for d in entries:
        check(f"candidate {pci_of(d)} listed with its target",
              any(pci_of(d) in line and d["gfx"] in line for line in lines), r.stderr)


def test_ambiguous():
    name = "RX 67"
    cands = fitting(name)
    targets = {d["gfx"] for d in cands}
    assert len(targets) > 1 and len(cands) <= 12, f"gpus.json: RX 67 fits {targets}"
    for how in ("flag", "env"):
        if how == "flag":
            got, r = planned_gfx(name)
        else:
            got, r = planned_gfx(None, env={"CFAPKG_GPU": name})
        lines = r.stderr.splitlines()
        check(f"ambiguous ({how}) exits 2 and says how to pick", r.returncode == 2 and
              got is None and "Pick one" in r.stderr and "more than one target" in r.stderr,
              f"{r.returncode} {r.stderr}")
        for d in cands:
            check(f"ambiguous ({how}) lists {d['name']} with {d['gfx']}",
                  any(d["name"] in line and d["gfx"] in line for line in lines), r.stderr)


def test_unknown(tmp):
    got, r = planned_gfx("RX 7950 XTX")
    near = device("AMD Radeon RX 7900 XTX")
    check("unknown name exits 2, says so and suggests the nearest",
          r.returncode == 2 and got is None and 'unknown GPU "RX 7950 XTX"' in r.stderr and
          near["name"] in r.stderr and "cfapkg gpus" in r.stderr, r.stderr)
    got, r = planned_gfx("gfx9999")
    check("unknown target exits 2 before solving", r.returncode == 2 and got is None
          and "do not support" not in r.stderr, f"{r.returncode} {r.stderr}")
    listed = [g for g in TARGETS if re.search(rf"\b{g}\b", r.stderr)]
    check("unknown target named, with the nearest known targets",
          "unknown GPU target gfx9999" in r.stderr and 1 <= len(listed) <= 8, r.stderr)
    facts = tmp / "facts.json"
    facts.write_text(json.dumps({"os": "windows", "gpu": "gfx9999", "hip_sdks": ["6.4.2"]}))
    r = run("plan", "pytorch-cuda-stack", "--facts", str(facts))
    check("facts file: unknown target", r.returncode == 2 and "facts.json" in r.stderr and
          "unknown GPU target gfx9999" in r.stderr, r.stderr)
    facts.write_text(json.dumps({"os": "windows", "gpu": "radeon rx 7900 xtx",
                                 "hip_sdks": ["6.4.2"]}))
    r = run("plan", "pytorch-cuda-stack", "--facts", str(facts), "--json")
    got = json.loads(r.stdout or "{}").get("gpu", {}).get("gfx")
    check("facts file: a name", got == near["gfx"], f"{got} {r.stderr}")


def test_info():
    d = device("AMD Radeon RX 9060 XT")
    r = run("info", "zluda", "--gpu", "rx 9060 xt")
    check("info --gpu NAME shows the target's status", r.returncode == 0 and
          f" on {d['gfx']}]" in r.stdout, r.stdout + r.stderr)


def test_list():
    r = run("gpus", "7900")
    want = {d["name"] for d in DEVICES if "7900" in norm(d["name"])}
    rows = [re.split(r"\s{2,}", line) for line in r.stdout.splitlines()[1:]]
    check("gpus 7900 lists the 7900s", r.returncode == 0 and len(rows) == len(want) and
          {row[0] for row in rows} == want, r.stdout + r.stderr)
    for row in rows:
        d = device(row[0]) if row[0] in want else None
        check(f"row {row[0]}: target, generation, status, PCI id", d is not None and
              row[1:4] == [d["gfx"], TARGETS[d["gfx"]]["generation"],
                           TARGETS[d["gfx"]]["status"]] and d["pci"] in row[4], str(row))
    r = run("gpus", "--json")
    try:
        doc = json.loads(r.stdout).get("gpus")
    except json.JSONDecodeError:
        doc = None
    check("gpus --json parses", r.returncode == 0 and isinstance(doc, list), r.stdout[:200])
    doc = doc or []
    products = {(d["name"], d["gfx"]) for d in DEVICES}
    check("one entry per product", len(doc) == len(products) and
          {(x["name"], x["gfx"]) for x in doc} == products, str(len(doc)))
    ids = sorted(p for x in doc for p in x["pci"])
    check("every PCI id listed", ids == sorted(pci_of(d) for d in DEVICES))
    check("targets' generation and status", doc and all(
        x["generation"] == TARGETS[x["gfx"]]["generation"] and
        x["status"] == TARGETS[x["gfx"]]["status"] for x in doc))
    r = run("gpus", "gfx1100")
    rows = r.stdout.splitlines()[1:]
    check("gpus GFX lists its products", r.returncode == 0 and len(rows) ==
          len({d["name"] for d in DEVICES if d["gfx"] == "gfx1100"}), r.stdout)
    r = run("gpus", "no such card")
    check("gpus with no match", r.returncode == 4 and "no GPU" in r.stderr, r.stderr)


def test_rocm_facts():
    """gpus.json's hipBLASLt fact agrees with the packaged ROCm builds that
    say per target where their hipBLASLt has kernels (Debian's, from the
    index): a target one of them covers has hipblaslt true, and one marked
    false is covered by none."""
    recipes = pathlib.Path(sys.argv[2]).parent
    covered = {}
    for name in ("rocm-debian", "rocm-apt", "rocm-therock"):
        for v in json.loads((recipes / f"{name}.json").read_text())["versions"]:
            for p in v.get("provides", []):
                if isinstance(p, dict) and p["dep"] == "hipblaslt":
                    for g in p.get("gfx", []):
                        covered.setdefault(g, []).append(f"{name} {v['version']}")
    for gfx, t in TARGETS.items():
        flag = t.get("hipblaslt", True)
        check(f"{gfx}: hipblaslt {flag} agrees with {covered.get(gfx, 'no build')}",
              flag or gfx not in covered)
        if any(c.startswith("rocm-debian") for c in covered.get(gfx, [])):
            check(f"{gfx}: Debian's hipBLASLt has its kernels, gpus.json says so", flag)


def main():
    with tempfile.TemporaryDirectory() as d:
        test_spellings()
        test_pci_revision()
        test_ambiguous()
        test_unknown(pathlib.Path(d))
        test_info()
        test_list()
    test_rocm_facts()
    return check.report()


if __name__ == "__main__":
    sys.exit(main())
