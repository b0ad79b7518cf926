#!/usr/bin/env python3
"""rocBLAS for a GPU the HIP SDK leaves out, as a package: the overlay
built for (HIP SDK 6.2.4, gfx1031) installs into the store, never over the
SDK; rocBLAS is pointed at its Tensile files and its rocblas.dll comes
first on PATH; an overlay built for another SDK is refused with the reason
and the environment keeps its generation.

The recipe under test is the shipped one (recipes/rocblas-overlay.json)
with its source swapped for a small archive served by nginx on 127.0.0.1,
and the shipped system recipes beside it."""
import hashlib
import io
import json
import pathlib
import shutil
import sys
import zipfile

import channel
import harness

BIN, RECIPES = sys.argv[1], pathlib.Path(sys.argv[2])
VERSION = "6.2.4+gfx1031"
TENSILE = "TensileLibrary_lazy_gfx1031.dat"
MACHINE = ["--os", "windows", "--arch", "x86_64", "--gpu", "gfx1031", "--driver", "25.8.1",
           "--hip-runtime", "6", "--allow-experimental", "--yes"]
check = harness.Checks()


def overlay_zip():
    """Shaped like the community archives: one top folder holding
    rocblas.dll and library/."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("rocm gfx1031 for hip sdk 6.2.4/rocblas.dll", b"rocblas for gfx1031\n")
        for name in (TENSILE, "Kernels.so-000-gfx1031.hsaco", "TensileManifest.txt"):
            z.writestr(f"rocm gfx1031 for hip sdk 6.2.4/library/{name}", f"{name}\n")
    return buf.getvalue()


def write_recipes(folder, url, data):
    """The shipped overlay recipe, one version, its source served here."""
    folder.mkdir()
    for name in ("hip-sdk", "amd-driver", "amdhip64"):
        shutil.copy(RECIPES / f"{name}.json", folder / f"{name}.json")
    doc = json.loads((RECIPES / "rocblas-overlay.json").read_text())
    doc["versions"] = [v for v in doc["versions"] if v["version"] == VERSION]
    src = {"url": url, "sha256": hashlib.sha256(data).hexdigest(), "size": len(data),
           "format": "zip", "strip": 1}
    doc["versions"][0]["sources"] = {"windows-x86_64": src}
    (folder / "rocblas-overlay.json").write_text(json.dumps(doc, indent=1))
    return doc["versions"][0]


def env_show(root, env):
    r = root.run("env", "show", "--env", env, "--json")
    try:
        return json.loads(r.stdout)
    except json.JSONDecodeError:
        return {"error": r.stdout + r.stderr}


def same(a, b):
    return str(a).replace("\\", "/").rstrip("/.") == str(b).replace("\\", "/").rstrip("/.")


def test_install(root, version):
    r = root.run("env", "create", "lab")
    r = root.run("install", "--env", "lab", "rocblas-overlay", "--hip-sdk", "6.2.4", *MACHINE)
    check("the overlay for HIP SDK 6.2.4 on gfx1031 installs", r.returncode == 0,
          r.stdout + r.stderr)
    view = root.view("lab", "rocblas-overlay")
    check("its files are in the store, not over the SDK",
          (view / "rocblas.dll").is_file() and (view / "library" / TENSILE).is_file() and
          (view / "rocblas.dll").resolve().is_relative_to(root.path.resolve()), view)
    shown = env_show(root, "lab")
    view = root.programs("lab") / "view" / "rocblas-overlay"  # what programs are given
    want = version["runtime"]["env"]["ROCBLAS_TENSILE_LIBPATH"].replace("{prefix}", str(view))
    got = shown.get("variables", {}).get("ROCBLAS_TENSILE_LIBPATH")
    check("rocBLAS reads the overlay's Tensile files", got and same(got, want), (got, want))
    path = shown.get("path", [])
    check("the overlay's rocblas.dll folder comes first on PATH",
          bool(path) and same(path[0], view), path)
    return shown


def test_first_before_own_rocm(root):
    """A part bringing its own HIP runtime goes first on PATH, but never
    before the overlay: rocblas.dll is found by PATH order."""
    gen = root.path / "envs" / "lab" / str(root.current("lab"))
    rocm = gen / "view" / "myrocm"
    for name in ("bin/amdhip64_6.dll", "bin/rocblas.dll", "bin/rocblas/library/Other.dat"):
        (rocm / name).parent.mkdir(parents=True, exist_ok=True)
        (rocm / name).write_bytes(b"fake\n")
    doc = json.loads((gen / "runtime.json").read_text())
    part = {"part": "myrocm", "version": "6.2.4", "system": False}
    doc["parts"].insert(0, {**part, "kind": "package"})
    doc["path"].insert(0, {**part, "dir": "{prefix}/bin"})
    doc["env"].insert(0, {**part, "name": "ROCBLAS_TENSILE_LIBPATH",
                          "value": "{prefix}/bin/rocblas/library"})
    (gen / "runtime.json").write_text(json.dumps(doc))
    shown = env_show(root, "lab")
    path = shown.get("path", [])
    view = root.programs("lab") / "view" / "rocblas-overlay"
    rocm = root.programs("lab") / "view" / "myrocm"
    check("with a ROCm of its own, the overlay still comes first",
          len(path) >= 2 and same(path[0], view) and same(path[1], rocm / "bin"), path)
    got = shown.get("variables", {}).get("ROCBLAS_TENSILE_LIBPATH", "")
    check("and its Tensile folder wins over that ROCm's", same(got, view / "library"), got)
    return shown


def test_doctor(root):
    r = root.run("doctor", "--env", "lab", "--json", "--timeout", "60")
    try:
        rows = {c["check"]: c for c in json.loads(r.stdout)["static"]}
    except (json.JSONDecodeError, KeyError):
        rows = {}
    row = rows.get("rocBLAS Tensile files", {})
    check("doctor finds the overlay's Tensile file for gfx1031",
          row.get("status") == "OK" and
          f"rocblas-overlay/library/{TENSILE} (from rocblas-overlay)" in
          row.get("detail", "").replace("\\", "/"),
          row or r.stdout[-1500:] + r.stderr)


def test_wrong_sdk(root, before):
    gen = root.current("lab")
    r = root.run("install", "--env", "lab", f"rocblas-overlay=={VERSION}", "--hip-sdk", "6.4.2",
                 *MACHINE)
    check("an overlay built for 6.2.4 is refused with SDK 6.4.2", r.returncode == 3,
          r.stdout + r.stderr)
    check("the refusal names the SDK the overlay needs",
          f"rocblas-overlay {VERSION} needs hip-sdk==6.2.4" in r.stderr, r.stderr)
    check("and why rocBLAS would fail", "Cannot read TensileLibrary.dat" in r.stderr, r.stderr)
    check("the environment keeps its generation", root.current("lab") == gen,
          (gen, root.current("lab")))
    check("and what it sets", env_show(root, "lab") == before, "env show changed")


def main():
    with channel.www_served("cfapkg-overlay-") as (tmp, srv):
        data = overlay_zip()
        (tmp / "www" / "overlay.zip").write_bytes(data)
        version = write_recipes(tmp / "recipes", srv.url("overlay.zip"), data)
        root = channel.Root(BIN, tmp / "root", tmp / "recipes")
        test_install(root, version)
        before = test_first_before_own_rocm(root)
        test_doctor(root)
        test_wrong_sdk(root, before)
    return check.report()


if __name__ == "__main__":
    sys.exit(main())
