#!/usr/bin/env python3
"""The ROCm half of the stack as packages: the shipped recipes load, each
source that cannot be fetched yet says how to record what it lacks, AMD's
APT repositories are trusted by AMD's signing key, the plan picks the
installed ROCm first and an installable packaged one otherwise (AMD's
repository, over TheRock's unpinned tarballs), one HIP runtime major
holds across a set, and plan exits 6 when a part of the answer cannot be
installed.  Debian's own sets (rocm-debian) are pinned .deb by .deb with
their provenance, chosen per GPU from the index's coverage, and refused on
a C library older than their Depends ask for; the other checks plan for
glibc 2.36 (Debian 12), where Debian's sets do not fit."""
import json
import pathlib
import sys

import harness

BIN = sys.argv[1]
RECIPES = pathlib.Path(sys.argv[2])
# cfapkg on Windows installs no APT source: its Linux plans take TheRock's.
WINDOWS_HOST = BIN.lower().endswith(".exe")
PACKAGED = {"gfx120X_all": ("rocm-therock", "7.10.0+gfx120X_all"),
            "gfx110X_all": ("rocm-therock", "7.10.0+gfx110X_all"),
            "gfx103X_dgpu": ("rocm-therock", "7.10.0+gfx103X_dgpu")}
NEW = ("rocm-apt", "rocm-therock", "hip-sdk-therock", "rocblas-overlay")
check = harness.Checks()


def run(*args):
    return harness.run(BIN, *args)


def plan(*args):
    r = run("plan", *args, "--json")
    try:
        doc = json.loads(r.stdout)
    except json.JSONDecodeError:
        doc = {"packages": [], "problems": [], "solved": False}
    return r, doc, {(p["name"], p["version"]) for p in doc["packages"]}


def test_recipes_load():
    for name in NEW:
        r = run("info", name)
        check(f"{name} loads", r.returncode == 0 and name in r.stdout, r.stdout + r.stderr)
        doc = json.loads((RECIPES / f"{name}.json").read_text())
        for v in doc["versions"]:
            for platform, src in v.get("sources", {}).items():
                why = src.get("unavailable", "")
                if "apt" in src:
                    ok = "index_sha256" in src["apt"] or "fingerprint" in src["apt"].get(
                        "signed_by", {}) or (
                        "sha256sum Packages" in why and "stat -c %s Packages" in why
                        and src["apt"]["repository"] in why)
                else:
                    ok = "sha256" in src or f"cfapkg prefetch {src['url']}" in why
                check(f"{name} {v['version']} {platform}: pinned or says how", ok, why)


def test_apt_spelling():
    doc = json.loads((RECIPES / "rocm-apt.json").read_text())
    majors = set()
    for v in doc["versions"]:
        ver = v["version"]
        apt = v["sources"]["linux-x86_64"]["apt"]
        hip = [p for p in apt["packages"] if p.startswith("hip-runtime-amd=")]
        provided = [p["dep"] if isinstance(p, dict) else p for p in v["provides"]]
        major = ver.split(".")[0]
        majors.add(major)
        check(f"{ver}: AMD's layout", apt["repository"] ==
              f"https://repo.radeon.com/rocm/apt/{ver}" and apt["suite"] == "noble"
              and apt["component"] == "main", apt)
        # A version AMD's listings give is pinned as Debian spells it; a
        # package they do not list is taken by name from the signed index.
        pinned = [p for p in apt["packages"] if "=" in p]
        check(f"{ver}: Debian spellings", (hip == [] and "hip-runtime-amd" in apt["packages"] or
              len(hip) == 1 and hip[0].startswith(f"hip-runtime-amd={major}.")) and
              all(p.endswith("~24.04") and f".{major}0{ver.split('.')[1]}0{ver.split('.')[2]}-"
                  in p for p in pinned) and
              any(p.startswith("rocblas=") for p in apt["packages"]), apt["packages"])
        check(f"{ver}: trusted by AMD's ROCm signing key", apt.get("signed_by") == {
            "fingerprint": "CA8BB4727A47B4D09B4EE8969386B48A1A693C5C",
            "url": "https://repo.radeon.com/rocm/rocm.gpg.key"} and "index_sha256" not in apt,
            apt.get("signed_by"))
        check(f"{ver}: provides its HIP runtime major", f"amdhip64 = {major}" in provided,
              provided)
        check(f"{ver}: runtime paths into the prefix", v["runtime"]["env"]["ROCM_PATH"] ==
              f"{{prefix}}/opt/rocm-{ver}" and v["runtime"]["path"] == [f"opt/rocm-{ver}/lib"],
              v["runtime"])
    check("ROCm 6 and 7 from AMD's APT layout", {"6", "7"} <= majors, majors)


def test_provider_choice():
    linux = ["--os", "linux", "--glibc", "2.36"]
    # TheRock's gfx120X-all 10.0.0 tarball has a pin: installable; the
    # 7.10.0 families have none.
    for gfx, family in (("gfx1200", "10.0.0+gfx120X_all"), ("gfx1100", "7.10.0+gfx110X_all"),
                        ("gfx1030", "7.10.0+gfx103X_dgpu")):
        pinned = family.startswith("10.")
        extra = ["--allow-experimental"] if gfx == "gfx1030" else []
        r, doc, have = plan("rocblas", "miopen", *linux, "--gpu", gfx, "--hip-sdk", "6.4.2",
                            "--hip-runtime", "6", *extra)
        check(f"{gfx}: installed ROCm first", r.returncode == 0 and ("rocm", "6.4.2") in have
              and not any(n.startswith("rocm-") for n, _ in have), have)
        r, doc, have = plan("rocblas", "miopen", *linux, "--gpu", gfx, "--hip-sdk", "none",
                            "--hip-runtime", "none", *extra)
        if pinned:
            check(f"{gfx}: TheRock's pinned {family} without an installed ROCm",
                  r.returncode == 0 and ("rocm-therock", family) in have
                  and doc["installable"] is True, (r.returncode, have))
            continue
        if WINDOWS_HOST:
            check(f"{gfx}: on a Windows host, TheRock's unpinned {family} (no APT source there)",
                  r.returncode == 6 and ("rocm-therock", family) in have, (r.returncode, have))
            continue
        check(f"{gfx}: an installable packaged ROCm without one (AMD's signed repository, "
              f"not TheRock's unpinned {family})", r.returncode == 0
              and ("rocm-apt", "7.2.4") in have and doc["installable"] is True,
              (r.returncode, have))
    r, doc, have = plan("rocblas", *linux, "--gpu", "gfx1200", "--hip-sdk", "6.3.4",
                        "--hip-runtime", "6")
    check("installed ROCm without the GPU: packaged one", ("rocm-therock", "10.0.0+gfx120X_all")
          in have and ("rocm", "6.3.4") not in have, have)


def test_one_runtime_major():
    r, doc, _ = plan("zluda", "rocm==6.4.2", "rocm-therock", "--os", "linux", "--gpu", "gfx1200",
                     "--hip-sdk", "6.4.2", "--hip-runtime", "6")
    clash = [p for p in doc["problems"] if p["kind"] == "conflict" and p["fact"] == "hip_runtime"]
    check("mixed majors refused", r.returncode == 3 and clash, r.stdout)
    r = run("plan", "zluda", "rocm==6.4.2", "rocm-therock", "--os", "linux", "--gpu", "gfx1200",
            "--hip-sdk", "6.4.2", "--hip-runtime", "6")
    check("explained in words", r.returncode == 3 and "use different HIP runtime majors (6 and 7)"
          in r.stderr and "one process loads one HIP runtime" in r.stderr, r.stderr)
    r, doc, have = plan("zluda", "--os", "linux", "--gpu", "gfx1100", "--hip-runtime", "none",
                        "--glibc", "2.36")
    check("Linux runtime from a package", doc.get("solved") and
          (PACKAGED["gfx110X_all"] if WINDOWS_HOST else ("rocm-apt", "7.2.4")) in have,
          (r.stdout, r.stderr))


def test_plan_exit_uninstallable():
    args = ["plan", "rocm-therock", "--os", "linux", "--gpu", "gfx1100", "--hip-sdk", "none",
            "--hip-runtime", "none", "--glibc", "2.36"]
    r = run(*args)
    check("plan exits 6 and names the part", r.returncode == 6 and
          "rocm-therock 7.10.0+gfx110X_all cannot be installed yet on linux-x86_64" in r.stderr
          and "cfapkg prefetch https://" in r.stderr, (r.returncode, r.stderr))
    check("the download line is honest", "cannot be installed yet (below)" in r.stdout, r.stdout)
    r, doc, _ = plan("rocblas", "--os", "linux", "--gpu", "gfx1100", "--hip-sdk", "6.4.2",
                     "--hip-runtime", "6")
    check("installable plan exits 0", r.returncode == 0 and doc["installable"] is True, r.stdout)


def test_debian_pins():
    """Each .deb pinned by pool path, SHA-256 and size, with where it was
    seen and snapshot.debian.org as a mirror; the C library floor from the
    closure is a requirement on glibc; the unversioned names ZLUDA links
    against are layout links to the libraries' own files."""
    doc = json.loads((RECIPES / "rocm-debian.json").read_text())
    want = {"6": ("libamdhip64-6", "librocblas4"), "7": ("libamdhip64-7", "librocblas5")}
    for v in doc["versions"]:
        apt = v["sources"]["linux-x86_64"]["apt"]
        names = {p["name"] for p in apt["packages"]}
        major = [p for p in v["provides"] if isinstance(p, str) and p.startswith("amdhip64")]
        m = major[0].split("= ")[1] if major else "?"
        check(f"{v['version']}: HIP {m}'s set", set(want.get(m, ("?",))) <= names and
              {"libamd-comgr3", "libhsa-runtime64-1", "librocsparse1", "libhipblaslt1",
               "libmiopen1", "librocfft0", "librocm-smi64-1"} <= names, sorted(names))
        check(f"{v['version']}: comgr's LLVM is in the closure",
              any(n.startswith("libllvm") for n in names), sorted(names))
        check(f"{v['version']}: the C library is the machine's", "libc6" not in names and
              any(r.startswith("glibc >= ") for r in v["requires"]), v["requires"])
        pinned = all(p["file"].startswith("pool/main/") and len(p["sha256"]) == 64 and
                     p["size"] > 0 and p["suite"] in ("sid", "experimental")
                     for p in apt["packages"])
        check(f"{v['version']}: every .deb pinned", pinned, apt["packages"][:2])
        check(f"{v['version']}: where the pins were seen", "InRelease Date" in apt["seen"] and
              all(m.startswith("https://snapshot.debian.org/archive/debian/2")
                  for m in apt["mirrors"]) and apt["mirrors"], (apt.get("seen"),
                                                                 apt.get("mirrors")))
        links = {r["as"].rsplit("/", 1)[1] for r in v["layout"]}
        check(f"{v['version']}: the names ZLUDA links against", {
            "libamdhip64.so", "librocblas.so", "librocsparse.so", "libhipblaslt.so",
            "librocm_smi64.so"} <= links, links)


def test_debian_choice():
    base = ["--os", "linux", "--hip-sdk", "none", "--hip-runtime", "none"]
    if WINDOWS_HOST:
        # cfapkg on Windows installs no APT source: asked for, Debian's set is
        # planned for the Linux machine as not installable, with the reason.
        r, doc, have = plan("rocm-debian", *base, "--gpu", "gfx1100", "--glibc", "2.43")
        why = [p.get("reason") or "" for p in doc["packages"] if p["name"] == "rocm-debian"]
        check("Windows host: Debian's set not installable, saying why", r.returncode == 6 and
              ("rocm-debian", "6.4.3-5") in have and why and "Linux only" in why[0],
              (r.returncode, have, why))
        return
    for gfx, want, other in (("gfx1100", "6.4.3-5", "7.2.4-1~exp2"),
                             ("gfx1201", "7.2.4-1~exp2", "6.4.3-5")):
        r, doc, have = plan("pytorch-cuda-stack", *base, "--gpu", gfx, "--glibc", "2.43")
        passed = [p for p in doc.get("passed_over", []) if p["package"] == "rocm-debian"]
        check(f"{gfx}: Debian's {want}", ("rocm-debian", want) in have, have)
        check(f"{gfx}: the JSON says why not {other}", passed and
              other in passed[0]["versions"], passed)
    r, doc, have = plan("pytorch-cuda-stack", *base, "--gpu", "gfx1100", "--glibc", "2.36")
    why = [p for p in doc.get("passed_over", []) if p["kind"] == "glibc-too-old"]
    check("glibc 2.36: Debian's sets passed over, the reason given",
          not any(n == "rocm-debian" for n, _ in have) and why and why[0]["have"] == "2.36",
          doc.get("passed_over"))


if __name__ == "__main__":
    test_recipes_load()
    test_apt_spelling()
    test_provider_choice()
    test_one_runtime_major()
    test_plan_exit_uninstallable()
    test_debian_pins()
    test_debian_choice()
    sys.exit(check.report())
