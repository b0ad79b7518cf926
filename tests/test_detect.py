#!/usr/bin/env python3
"""Machine detection against fixture trees (CFAPKG_SYSROOT): each tree's
'cfapkg detect --json' must hold its expected JSON (tests/data/sysroots/
NAME.expect.json: every key there must match; a string starting with '~'
only has to be contained), plus GPU choice, overrides, the no-GPU message,
planning from detected facts, broken trees (GPUs that cannot be read are
listed with a warning, never dropped, and a plan says when it is probably
for the wrong GPU), and the privacy of 'cfapkg report'."""
import json
import pathlib
import shutil
import sys
import tempfile

import channel
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
    # Exit 6: ZLUDA's Linux download has no recorded hash yet.
    check("plan from detection", r.returncode == 6 and d["gpu"]["gfx"] == "gfx1200"
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
    # Without the detected ROCm a packaged one stands in: Debian's set, pinned
    # .deb by .deb, before AMD's live APT repository (the fixture's C library
    # is not known, so its glibc floor is noted as not checked; cfapkg on
    # Windows installs no APT source: TheRock's there); LibTorch's Linux zip
    # is not pinned, hence exit 6.
    packaged = "rocm-therock" if BIN.lower().endswith(".exe") else "rocm-debian"
    check("a flag overrides one detected fact", r.returncode == 6 and packaged in r.stdout
          and "rocm  " not in r.stdout, r.stdout + r.stderr)
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


KFD = "sys/class/kfd/kfd/topology/nodes"
RX9060XT = {"name": "AMD Radeon RX 9060 XT", "gfx": "gfx1200", "pci_id": "1002:7590 rev c0"}
DIR = object()  # in variant(): make a folder where a file should be


def variant(tmp, tree, name, changes):
    """A copy of a fixture tree with files replaced (text), removed (None)
    or turned into folders (DIR); returns its path."""
    root = tmp / name
    shutil.copytree(ROOTS / tree, root)
    for rel, text in changes.items():
        path = root / rel
        if path.is_dir():
            shutil.rmtree(path)
        elif path.exists():
            path.unlink()
        if text is DIR:
            (path / "README").parent.mkdir(parents=True)
            (path / "README").write_text("a folder where a file should be\n")
        elif text is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
    return root


def first_gpu(d):
    return (d.get("gpus") or [{}])[0]


def detect_at(root, *args):
    r = run("detect", "--json", *args, env={"CFAPKG_SYSROOT": str(root)})
    try:
        return r, json.loads(r.stdout)
    except json.JSONDecodeError:
        return r, {}


def gpu_props(gtv, device=30096, minor=128):
    return (f"simd_count 32\ngfx_target_version {gtv}\nvendor_id 4098\n"
            f"device_id {device}\ndrm_render_minor {minor}\n")


def test_revision_through_card(tmp):
    # The fixture pairs the nodes through the device's drm/ folder; without
    # it, card0 pairs with renderD128, the usual numbering.
    root = variant(tmp, "rx9060xt-revision-on-card", "paired-by-number", {
        "sys/class/drm/renderD128/device/drm": None, "sys/class/drm/card1": None})
    shutil.copytree(ROOTS / "rx9060xt-revision-on-card/sys/class/drm/card1/device",
                    root / "sys/class/drm/card0/device", ignore=shutil.ignore_patterns("drm"))
    r, d = detect_at(root)
    g = first_gpu(d)
    check("revision read through card0", holds(RX9060XT, g) is None and g.get("known"),
          r.stdout + r.stderr)
    # A PCI id out of range is refused with a warning; the other node has it.
    root = variant(tmp, "rx9060xt-revision-on-card", "bad-pci-id",
                   {"sys/class/drm/renderD128/device/device": "0x17590\n"})
    r, d = detect_at(root)
    check("an out-of-range PCI id is refused, not truncated",
          holds(RX9060XT, first_gpu(d)) is None
          and any("renderD128/device/device" in w and "0x17590" in w
                  for w in d.get("warnings", [])), r.stdout)


def test_unreadable_dgpu(tmp):
    """Whatever is wrong with the discrete GPU's KFD node, it stays listed
    (named from its PCI id), the integrated GPU is chosen, and detection
    says that this is probably not the GPU meant."""
    props = f"{KFD}/1/properties"
    cases = {"empty": ("", "no readable KFD node"),
             "folder": (DIR, "no readable KFD node"),
             "gfx0": (gpu_props(0), "gfx_target_version 0"),
             "gfx-huge": (gpu_props(4295087297), "gfx_target_version 4295087297 is out of range"),
             "gfx-undecodable": (gpu_props(121600), "does not decode"),
             "device-huge": (gpu_props(120000, device=95632), "device_id 95632 is not a 16-bit"),
             "minor-huge": (gpu_props(120000, minor=99999999999999999999999),
                            "no readable KFD node")}
    for name, (text, why) in cases.items():
        r, d = detect_at(variant(tmp, "dgpu-unreadable-igpu", name, {props: text}))
        gpus = d.get("gpus", [])
        dgpu = gpus[1] if len(gpus) == 2 else {}
        check(f"{name}: the discrete GPU is listed", holds(RX9060XT, dgpu) is None
              and dgpu.get("source") == "pci" and why in (dgpu.get("problem") or ""),
              r.stdout + r.stderr)
        check(f"{name}: the iGPU is chosen and the dGPU named as passed over",
              d.get("selected") == 0 and d.get("passed_over") == 1
              and any("probably not what you mean" in w for w in d.get("warnings", [])),
              r.stdout)
    # A GPU gpus.json does not know has no known kind: said so, still named.
    r, d = detect_at(variant(tmp, "dgpu-unreadable-igpu", "unknown-id",
                             {"sys/class/drm/renderD128/device/device": "0x7599\n"}))
    check("an unread GPU of unknown kind may be the one meant", d.get("passed_over") == 1
          and any("GPU 1, AMD GPU 1002:7599 (not in gpus.json), could not be read and may be "
                  "a discrete one" in w for w in d.get("warnings", [])), r.stdout)
    tree = ROOTS / "dgpu-unreadable-igpu"
    r, d = detect_at(tree, "--gpu-index", "1")
    check("--gpu-index picks the unread GPU, no doubt then",
          d.get("selected") == 1 and d.get("passed_over") is None, r.stdout)
    r = run("detect", env={"CFAPKG_SYSROOT": str(tree)})
    check("detect text marks the unread GPU and says how to choose",
          "could not be read: no readable KFD node" in r.stdout
          and "pass --gpu-index 1" in r.stdout and "--gpu gfx1200" in r.stdout, r.stdout)


def test_plan_shows_detection(tmp):
    tree = "dgpu-unreadable-igpu"
    r = plan(tree)
    check("a failed plan says the GPU is probably the wrong one",
          r.returncode == 3 and "probably not what you mean" in r.stderr
          and "pass --gpu-index 1" in r.stderr, r.stderr)
    r = plan(tree, "--json")
    det = json.loads(r.stdout or "{}").get("detection") or {}
    check("plan --json carries detection", det.get("selected") == 0
          and det.get("integrated") is True and det.get("passed_over") == 1
          and any("nodes/1/properties" in w for w in det.get("warnings", [])), r.stdout)
    r = plan(tree, "--gpu-index", "1", "--json")
    d = json.loads(r.stdout or "{}")
    check("--gpu-index plans for the unread dGPU", d.get("gpu", {}).get("gfx") == "gfx1200"
          and (d.get("detection") or {}).get("passed_over", 0) is None, r.stdout)
    r = plan(tree, "--gpu", "gfx1100", "--json")
    check("another machine: no detection", json.loads(r.stdout or "{}").get("detection", 0)
          is None, r.stdout)
    r = plan("dgpu-gfx-zero", "--hip-runtime", "6", "--hip-sdk", "6.4.2")
    check("a plan for an unread GPU says so", r.returncode == 6 and "Plan for gfx1200" in r.stdout
          and "gfx_target_version 0" in r.stdout, r.stdout + r.stderr)
    # install shows the same before it asks (a dry run stops right there).
    _, recipes = channel.write(tmp / "channel", lambda n: f"http://127.0.0.1:9/{n}",
                               headers=1, big=16)
    env = {"CFAPKG_SYSROOT": str(ROOTS / tree), "CFAPKG_GPU": "",
           "CFAPKG_ROOT": str(tmp / "root"), "CFAPKG_RECIPES": str(recipes)}
    r = run("install", "zluda==6-preview.69", "--allow-experimental", "--dry-run", env=env)
    out = r.stdout
    check("install warns before the changes and the question",
          r.returncode == 0 and "probably not what you mean" in out
          and out.find("pass --gpu-index 1") < out.find("Changes to environment")
          and out.find("pass --gpu-index 1") >= 0, out + r.stderr)
    r = run("install", "zluda==6-preview.69", "--allow-experimental", "--dry-run", "--json",
            env=env)
    check("install --dry-run --json carries detection",
          (json.loads(r.stdout or "{}").get("detection") or {}).get("passed_over") == 1,
          r.stdout + r.stderr)


def test_unreadable_topology(tmp):
    tree = ROOTS / "kfd-unreadable"
    r = run("detect", env={"CFAPKG_SYSROOT": str(tree)})
    check("no GPU, and why", r.returncode == 7 and "No AMD GPU found, but" in r.stdout
          and "topology/nodes" in r.stdout and "/dev/kfd" in r.stdout
          and "amdgpu driver is loaded" in r.stdout, r.stdout + r.stderr)
    r = plan("kfd-unreadable")
    check("plan says why no GPU was found", r.returncode == 7 and "topology/nodes" in r.stderr
          and "/dev/kfd" in r.stderr, r.stderr)
    # With a GPU on the PCI bus it is listed from there, marked unread.
    root = variant(tmp, "kfd-unreadable", "pci-gpu", {})
    shutil.copytree(ROOTS / "dgpu-gfx-zero/sys/class/drm", root / "sys/class/drm")
    r, d = detect_at(root)
    g = first_gpu(d)
    check("a PCI GPU under an unreadable topology", holds(RX9060XT, g) is None
          and "KFD topology could not be read" in (g.get("problem") or "")
          and d.get("selected") == 0, r.stdout)


def test_sizes_and_ids(tmp):
    bank = f"{KFD}/1/mem_banks/0/properties"
    r = run("detect", env={"CFAPKG_SYSROOT": str(ROOTS / "vram-overflow")})
    check("a wrapped VRAM total is not shown", "VRAM ?" in r.stdout and " 1 B " not in r.stdout,
          r.stdout)
    # Each bank below 1 PiB, together above it: the bank that tips it is named.
    cases = {"26 digits": ("heap_type 1\nsize_in_bytes 12345678901234567890123456\n",
                           "mem_banks/0/properties: size_in_bytes 123456789012345678901234..."),
             "sum": ("heap_type 1\nsize_in_bytes 600000000000000\n",
                     "mem_banks/1/properties: size_in_bytes 600000000000000 makes the banks "
                     "add up to over 1 PiB")}
    for name, (text, why) in cases.items():
        changes = {bank: text}
        if name == "sum":
            changes[f"{KFD}/1/mem_banks/1/properties"] = text
        r, d = detect_at(variant(tmp, "vram-overflow", name.replace(" ", "-"), changes))
        check(f"VRAM {name}: unknown, with a warning naming the bank",
              first_gpu(d).get("vram_bytes") == 0
              and any(why in w for w in d.get("warnings", [])), r.stdout)
    r = plan("bad-target-version", "--json", "--hip-runtime", "6", "--hip-sdk", "6.4.2")
    check("an oversized gfx_target_version is no target", json.loads(r.stdout or "{}")
          .get("gpu", {}).get("gfx") == "gfx1200", r.stdout + r.stderr)


def libc_stand_in(path, newest):
    """A shared library defining glibc's version nodes up to newest, as a
    libc.so.6 does (built here with the host's compiler)."""
    import subprocess
    path.parent.mkdir(parents=True, exist_ok=True)
    src, script = path.parent / "libc.c", path.parent / "libc.map"
    src.write_text("int gnu_get_libc_version_stand_in(void) { return 0; }\n")
    nodes = ["2.2.5", "2.17", "2.34", newest]
    text, parent = "", ""
    for n in nodes:
        body = "global: gnu_get_libc_version_stand_in; local: *;" if not parent else ""
        text += f"GLIBC_{n} {{ {body} }} {parent};\n"
        parent = f"GLIBC_{n}"
    script.write_text(text + "GLIBC_PRIVATE { } GLIBC_2.2.5;\n")
    subprocess.run(["cc", "-shared", "-fPIC", "-o", str(path), "-Wl,-soname,libc.so.6",
                    f"-Wl,--version-script={script}", str(src)], check=True)
    src.unlink()
    script.unlink()


def test_glibc(tmp):
    """The machine's C library: below a detection root, read from its
    libc.so.6 (the newest GLIBC_X.Y it defines); planning uses it, so a
    package needing a newer one is refused with both versions."""
    root = variant(tmp, "rx7900xtx", "glibc", {})
    libc = root / "usr/lib/x86_64-linux-gnu/libc.so.6"
    libc_stand_in(libc, "2.41")
    r, d = detect_at(root)
    check("detect reads glibc from the machine's libc.so.6",
          (d.get("glibc") or {}).get("version") == "2.41" and
          str(libc) in (d.get("glibc") or {}).get("source", ""), d.get("glibc"))
    r = run("plan", "rocm-debian", "--json", env={"CFAPKG_SYSROOT": str(root)})
    doc = json.loads(r.stdout or "{}")
    why = [p for p in doc.get("problems", []) if p["kind"] == "glibc-too-old"]
    check("a plan on that machine refuses a set that needs a newer glibc, saying both",
          r.returncode == 3 and why and why[0]["have"] == "2.41" and
          "glibc>=2.42" in why[0]["constraint"], r.stdout[-1500:])
    r = run("plan", "rocm-debian", "--json", "--glibc", "2.43",
            env={"CFAPKG_SYSROOT": str(root)})
    check("--glibc plans for another C library", json.loads(r.stdout or "{}").get("solved"),
          r.stdout[-800:])
    libc.write_text("not a library\n")
    r, d = detect_at(root)
    check("a libc.so.6 that is not one: glibc unknown, and a warning naming it",
          (d.get("glibc") or {}).get("version") is None and
          any(str(libc) in w for w in d.get("warnings", [])), d)


def test_held_whole(tmp):
    """However many GPUs and warnings, however long a name, path or reason:
    detection reports each whole.  The machine: the RX 9060 XT tree with
    eleven more GPUs, twenty KFD nodes that cannot be read, an unreadable
    node with a long name that names a PCI GPU, a long PRETTY_NAME, and
    (not on Windows, whose paths are shorter) a root so deep that the ROCm
    folder is past 512 bytes."""
    windows = BIN.lower().endswith(".exe")
    deep = tmp if windows else tmp.joinpath(*(c * 100 for c in "deeper"))
    root = deep / "machine"
    shutil.copytree(ROOTS / "rx9060xt", root)
    shutil.copytree(ROOTS / "dgpu-unreadable-igpu/sys/class/drm/renderD129",
                    root / "sys/class/drm/renderD129")
    nodes = root / KFD
    for n in range(2, 13):
        (nodes / str(n)).mkdir()
        (nodes / str(n) / "properties").write_text(gpu_props(120000, minor=0))
    for n in range(13, 33):
        (nodes / str(n) / "properties").mkdir(parents=True)
    long_node = "n" * 150
    (nodes / long_node).mkdir()
    (nodes / long_node / "properties").write_text(gpu_props(0, device=0x164e, minor=129))
    pretty = "Distribution " + "with a long name " * 12
    (root / "etc/os-release").write_text(f'PRETTY_NAME="{pretty}"\n')
    r, d = detect_at(root)
    gpus, warnings = d.get("gpus", []), d.get("warnings", [])
    check("more than 8 GPUs are all listed", len(gpus) == 13 and
          [g["index"] for g in gpus] == list(range(13)), r.stdout[-1500:] + r.stderr)
    unread = [str(nodes / str(n) / "properties") for n in range(13, 33)]
    check("more than 16 warnings are all kept, each whole", len(warnings) == 22 and
          all(any(p in w for w in warnings) for p in unread)
          and not any(w.endswith("...") or "left out" in w for w in warnings),
          "\n".join(warnings))
    pci = gpus[-1] if gpus else {}
    check("a long reason is kept whole", pci.get("source") == "pci" and
          pci.get("problem") == f"KFD node {long_node}: gfx_target_version 0: the driver gives "
          "it no compute target", pci)
    sdk = (d.get("hip_sdks") or [{}])[0]
    rt = (d.get("hip_runtimes") or [{}])[0]
    check("the ROCm folder and its HIP runtime are listed whole",
          sdk.get("path") == str(root / "opt/rocm-6.4.2") and
          rt.get("file") == str(root / "opt/rocm-6.4.2/lib/libamdhip64.so.6"), d)
    r = run("report", env={"CFAPKG_SYSROOT": str(root)})
    doc = json.loads(r.stdout or "{}")
    check("a long OS name is kept whole", doc.get("os_build") == f"{pretty}, kernel "
          "6.8.0-45-generic", r.stdout[-600:] + r.stderr)


def test_own_library_path(tmp):
    """A described machine (CFAPKG_SYSROOT) is not given this process's
    LD_LIBRARY_PATH: a HIP runtime there is this machine's, not that one's."""
    lib = tmp / "own-lib"
    lib.mkdir()
    (lib / "libamdhip64.so.6").write_bytes(b"\x7fELF stand-in")
    r = detect("no-amd", env={"LD_LIBRARY_PATH": str(lib)})
    d = json.loads(r.stdout or "{}")
    check("a described machine does not get this process's library path",
          "hip_runtimes" in d and not any(str(lib) in (rt.get("file") or "")
                                        for rt in d.get("hip_runtimes") or []), r.stdout[-600:])


def main():
    with tempfile.TemporaryDirectory() as d:
        tmp = pathlib.Path(d)
        test_fixtures()
        test_choice_and_overrides()
        test_planning_from_detection()
        test_revision_through_card(tmp)
        test_unreadable_dgpu(tmp)
        test_plan_shows_detection(tmp)
        test_unreadable_topology(tmp)
        test_sizes_and_ids(tmp)
        test_report_privacy(tmp)
        test_glibc(tmp)
        test_held_whole(tmp)
        test_own_library_path(tmp)
    return check.report()


if __name__ == "__main__":
    sys.exit(main())
