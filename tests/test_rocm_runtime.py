#!/usr/bin/env python3
"""What people set by hand to run CUDA programs on ROCm, set by the
runtime instead: on a machine whose integrated GPU is GPU 0 and whose
RX 6700 XT (gfx1031) is GPU 1, an environment bringing its own ROCm gets
HIP_VISIBLE_DEVICES=1, HSA_OVERRIDE_GFX_VERSION=10.3.0 (unless the user
set one), DISABLE_ADDMM_CUDA_LT=1, HIP_PATH/ROCM_PATH naming its ROCm,
that ROCm's lib first and other ROCm folders off the paths; 'env show',
'env activate' and 'run' agree; 'doctor' says which ROCm is used and what
it holds for the GPU."""
import json
import pathlib
import subprocess
import sys

import channel
import harness

BIN, DATA = sys.argv[1:3]
check = harness.Checks()
SYSROOT = pathlib.Path(DATA) / "sysroots" / "igpu-first-rx6700xt"
USER_PATH = "/opt/rocm-6.4.2/bin:/usr/bin:/bin"
USER_LD = "/opt/rocm/lib:/usr/local/lib"


def fake_environment(root):
    """An environment made for gfx1031 whose own part 'myrocm' holds a HIP
    runtime, rocBLAS Tensile files for gfx1030 (what the override makes it
    look for) and MIOpen."""
    root.run("env", "create", "rocm")
    r = root.run("install", "--env", "rocm", "pytorch-cuda-stack", *channel.FACTS, "--os",
                 "linux", "--yes")
    check("install the stack", r.returncode == 0, r.stderr)
    gen = root.path / "envs" / "rocm" / "1"
    rocm = gen / "view" / "myrocm"
    for name in ("lib/libamdhip64.so", "lib/libMIOpen.so.1",
                 "lib/rocblas/library/TensileLibrary_lazy_gfx1030.dat"):
        (rocm / name).parent.mkdir(parents=True, exist_ok=True)
        (rocm / name).write_bytes(b"fake\n")
    doc = json.loads((gen / "runtime.json").read_text())
    doc["gfx"] = "gfx1031"
    part = {"part": "myrocm", "version": "6.4.2", "system": False}
    doc["parts"].insert(0, {**part, "kind": "package"})
    doc["path"].append({**part, "dir": "{prefix}/lib"})
    (gen / "runtime.json").write_text(json.dumps(doc))
    return rocm


def run(root, *args, **extra):
    env = {"CFAPKG_SYSROOT": str(SYSROOT), "PATH": USER_PATH, "LD_LIBRARY_PATH": USER_LD}
    env.update(extra)
    return root.run(*args, env=env)


def environ(text):
    return dict(line.split("=", 1) for line in text.splitlines() if "=" in line)


def test_variables(root, rocm):
    r = run(root, "env", "show", "--env", "rocm", "--json")
    shown = json.loads(r.stdout or "{}")
    v = shown.get("variables", {})
    check("HIP_VISIBLE_DEVICES picks the discrete GPU, not the iGPU at index 0",
          v.get("HIP_VISIBLE_DEVICES") == "1", r.stdout + r.stderr)
    check("gfx1031 runs as 10.3.0", v.get("HSA_OVERRIDE_GFX_VERSION") == "10.3.0", v)
    check("no hipBLASLt kernels for gfx1031: addmm avoids cuBLASLt",
          v.get("DISABLE_ADDMM_CUDA_LT") == "1", v)
    check("HIP_PATH and ROCM_PATH name the environment's ROCm",
          v.get("HIP_PATH") == str(rocm) and v.get("ROCM_PATH") == str(rocm), v)
    check("the environment's ROCm lib comes first", shown.get("path", [""])[0] == str(rocm / "lib"),
          shown.get("path"))
    check("other ROCm folders are taken off the paths",
          sorted(shown.get("path_removed", [])) == ["/opt/rocm-6.4.2/bin", "/opt/rocm/lib"],
          shown.get("path_removed"))
    r = run(root, "env", "show", "--env", "rocm", "--json", HSA_OVERRIDE_GFX_VERSION="10.3.1")
    v = json.loads(r.stdout or "{}").get("variables", {})
    check("a user's own HSA_OVERRIDE_GFX_VERSION is not replaced",
          "HSA_OVERRIDE_GFX_VERSION" not in v, v)
    r = run(root, "run", "--env", "rocm", "--", "sh", "-c", "env",
            HSA_OVERRIDE_GFX_VERSION="10.3.1")
    check("run keeps the user's HSA_OVERRIDE_GFX_VERSION",
          environ(r.stdout).get("HSA_OVERRIDE_GFX_VERSION") == "10.3.1", r.stdout + r.stderr)


def test_agree(root):
    shown = json.loads(run(root, "env", "show", "--env", "rocm", "--json").stdout or "{}")
    ran = environ(run(root, "run", "--env", "rocm", "--", "sh", "-c", "env").stdout)
    script = run(root, "env", "activate", "--env", "rocm", "--shell", "bash").stdout
    env = {"PATH": USER_PATH, "LD_LIBRARY_PATH": USER_LD}
    activated = environ(subprocess.run(["bash", "-c", script + "\nenv"], capture_output=True,
                                       text=True, env=env, timeout=60).stdout)
    for name, value in shown.get("variables", {}).items():
        check(f"run and activate agree with env show on {name}",
              ran.get(name) == value == activated.get(name), (ran.get(name), activated.get(name)))
    for name in ("PATH", "LD_LIBRARY_PATH"):
        check(f"run and activate set the same {name}", ran.get(name) == activated.get(name),
              (ran.get(name), activated.get(name)))
        check(f"{name} has no other ROCm", "/opt/rocm" not in ran.get(name, "/opt/rocm"),
              ran.get(name))


def test_doctor(root, rocm, tmp):
    empty = tmp / "nolibs"
    empty.mkdir(exist_ok=True)
    r = run(root, "doctor", "--env", "rocm", "--json", "--lib-dir", str(empty), "--timeout", "60")
    try:
        rows = {c["check"]: c for c in json.loads(r.stdout)["static"]}
    except (json.JSONDecodeError, KeyError):
        rows = {}
    row = rows.get("ROCm in use", {})
    check("doctor names the environment's ROCm", row.get("status") == "OK" and
          row.get("detail") == f"the environment's: {rocm}", r.stdout[-2000:] + r.stderr)
    row = rows.get("rocBLAS Tensile files", {})
    check("doctor finds the Tensile files rocBLAS would read",
          row.get("status") == "OK" and row.get("detail", "").endswith(
              "library/TensileLibrary_lazy_gfx1030.dat"), row)
    row = rows.get("hipBLASLt kernels", {})
    check("doctor says hipBLASLt has no kernels and what is done about it",
          "none for gfx1031" in row.get("detail", "") and
          "DISABLE_ADDMM_CUDA_LT=1 is set" in row.get("detail", ""), row)
    row = rows.get("MIOpen", {})
    check("doctor finds MIOpen", row.get("status") == "OK" and
          row.get("detail", "").endswith("libMIOpen.so.1"), row)


def main():
    if harness.EMULATOR:
        print("skipped: the fixture describes a Linux machine and runs sh")
        return 0
    with channel.served("cfapkg-rocm-", headers=5, big=1000) as (tmp, _, recipes):
        root = channel.Root(BIN, tmp / "root", recipes)
        rocm = fake_environment(root)
        test_variables(root, rocm)
        test_agree(root)
        test_doctor(root, rocm, tmp)
    return check.report()


if __name__ == "__main__":
    sys.exit(main())
