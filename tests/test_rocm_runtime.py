#!/usr/bin/env python3
"""What people set by hand to run CUDA programs on ROCm, set by the
runtime instead: on a machine whose integrated GPU is GPU 0 and whose
RX 6700 XT (gfx1031) is GPU 1, an environment bringing its own ROCm gets
HIP_VISIBLE_DEVICES=1, DISABLE_ADDMM_CUDA_LT=1, HIP_PATH/ROCM_PATH naming
its ROCm, that ROCm's library folder first and other ROCm folders off the
paths; HSA_OVERRIDE_GFX_VERSION=10.3.0 on Linux (unless the user set one)
and none on Windows, whose HIP runtime does not read it; 'env show',
'env activate' and 'run' agree; 'doctor' says which ROCm is used and what
it holds for the GPU, where that platform's rocBLAS and MIOpen look.

The same checks run on both platforms; each has its own fixture. Linux:
a sysroot (tests/data/sysroots/igpu-first-rx6700xt), /opt/rocm folders on
PATH and LD_LIBRARY_PATH, 'sh -c env' and bash. Windows, under Wine: a
Wine prefix of the test's own seeded with both GPUs' display driver keys,
the driver's amdhip64_6.dll in System32 and a HIP SDK whose hipInfo.exe
lists the integrated GPU first (tests/data/windows/
hipinfo-igpu-first-rx6700xt.txt); that SDK's bin and a TheRock bin
(amdhip64 and rocblas DLLs, no ROCm in the name) on PATH; 'cmd /c set'
and cmd; the PowerShell snippet is read, as Wine has no PowerShell."""
import contextlib
import json
import os
import pathlib
import re
import shlex
import shutil
import subprocess
import sys

import channel
import harness

BIN, DATA = sys.argv[1:3]
FAKE_HIPINFO = sys.argv[3] if len(sys.argv) > 3 else None
check = harness.Checks()
GFX = "gfx1031"


class Linux:
    """A Linux machine described by a sysroot; cfapkg runs natively."""
    name = "linux"
    lib = "lib"
    sep = "/"
    path_vars = ("PATH", "LD_LIBRARY_PATH")
    # gpus.json: gfx1031 runs as 10.3.0, so rocBLAS reads gfx1030's files.
    override = "10.3.0"
    kernel_gfx = "gfx1030"
    files = ("lib/libamdhip64.so", "lib/libMIOpen.so.1",
             "lib/rocblas/library/TensileLibrary_lazy_gfx1030.dat")
    miopen = "libMIOpen.so.1"
    user_path = "/opt/rocm-6.4.2/bin:/usr/bin:/bin"
    user_ld = "/opt/rocm/lib:/usr/local/lib"
    other_rocm = ["/opt/rocm-6.4.2/bin", "/opt/rocm/lib"]

    def __init__(self, tmp):
        self.tmp = tmp

    @contextlib.contextmanager
    def started(self):
        yield

    def env(self, **extra):
        return {"CFAPKG_SYSROOT": str(pathlib.Path(DATA) / "sysroots" / "igpu-first-rx6700xt"),
                "PATH": self.user_path, "LD_LIBRARY_PATH": self.user_ld, **extra}

    def spelled(self, path):
        """A path as cfapkg and the programs it starts see it."""
        return str(path)

    def run(self, root, *args, **extra):
        return harness.run(root.binary, *args, env={"CFAPKG_ROOT": self.spelled(root.path),
                                                    "CFAPKG_RECIPES": str(root.recipes),
                                                    **self.env(**extra)})

    def ran(self, root, **extra):
        """The environment 'cfapkg run' gives a program, and the result."""
        r = self.run(root, "run", "--env", "rocm", "--", "sh", "-c", "env", **extra)
        return environ(r.stdout), r

    def activated(self, root):
        """What each shell's activation sets: {shell: variables}."""
        script = self.run(root, "env", "activate", "--env", "rocm", "--shell", "bash").stdout
        env = {"PATH": self.user_path, "LD_LIBRARY_PATH": self.user_ld}
        out = subprocess.run(["bash", "-c", script + "\nenv"], capture_output=True, text=True,
                             env=env, timeout=60).stdout
        # Activated twice, the second time from inside the first: the paths
        # are made from the value before the first, not stacked on it.
        twice = self.inside_activated(
            root, 'eval "$(@CFAPKG@ env activate --env rocm --shell bash)" && env')
        return {"bash": environ(out), "bash, twice": environ(twice)}

    def inside_activated(self, root, script):
        """What script (@CFAPKG@: this cfapkg) prints in a bash where the
        environment was activated."""
        me = shlex.quote(root.binary)
        return subprocess.run(
            ["bash", "-c", f'eval "$({me} env activate --env rocm --shell bash)" && ' +
             script.replace("@CFAPKG@", me)], capture_output=True, text=True, timeout=60,
            env={**os.environ, "CFAPKG_ROOT": str(root.path), "CFAPKG_RECIPES": str(root.recipes),
                 **self.env()}).stdout

    def entries(self, value):
        return value.split(":")

    def is_other_rocm(self, entry):
        return "/opt/rocm" in entry


class Windows:
    """A Windows machine in a Wine prefix of this test's own: the GPUs come
    from the display driver's registry keys, their targets from the HIP
    SDK's hipInfo.exe (GPU 0 the iGPU); cfapkg.exe runs under Wine."""
    name = "windows"
    lib = "bin"
    sep = "\\"
    path_vars = ("PATH",)
    # The HIP runtime on Windows has no HSA: no override, gfx1031's own files.
    override = None
    kernel_gfx = "gfx1031"
    files = ("bin/amdhip64_6.dll", "bin/rocblas.dll", "bin/MIOpen.dll",
             "bin/rocblas/library/TensileLibrary_lazy_gfx1031.dat")
    miopen = "MIOpen.dll"
    sdk = r"C:\Program Files\AMD\ROCm\6.4"
    therock = r"C:\TheRock\bin"
    cmd = r"C:\windows\system32\cmd.exe"
    other_rocm = [sdk + r"\bin", therock]
    user_path = ";".join([sdk + r"\bin", therock, r"C:\users\me\bin"])
    CLASS = (r"HKLM\SYSTEM\CurrentControlSet\Control\Class"
             r"\{4d36e968-e325-11ce-bfc1-08002be10318}")
    GPUS = (("0100", r"PCI\VEN_1002&DEV_164E&SUBSYS_D0001458&REV_C5", "AMD Radeon(TM) Graphics"),
            ("0101", r"PCI\VEN_1002&DEV_73DF&SUBSYS_E4451DA2&REV_C1", "AMD Radeon RX 6700 XT"))

    def __init__(self, tmp):
        self.tmp = tmp
        self.prefix = tmp / "wineprefix"

    def wine_env(self):
        return {"WINEPREFIX": str(self.prefix)}

    def quietly(self, *argv):
        """A Wine tool whose output nobody reads: Wine's services, which it
        may start, would hold a captured output open."""
        subprocess.run(argv, env={**os.environ, **self.wine_env()}, stdin=subprocess.DEVNULL,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       timeout=harness.TIMEOUT)

    @contextlib.contextmanager
    def started(self):
        """A fresh Wine prefix with one persistent wineserver (Wine rebuilds
        the display class keys when its display driver starts), seeded, and
        stopped however the test ends."""
        self.prefix.mkdir()
        self.quietly("wineserver", "-p")
        try:
            self.quietly(*harness.EMULATOR, "wineboot", "--init")
            self.seed()
            yield
        finally:
            self.quietly("wineserver", "-k")

    def seed(self):
        drive = self.prefix / "drive_c"
        for key, device, desc in self.GPUS:
            for value, data in (("MatchingDeviceId", device), ("DriverDesc", desc),
                                ("DriverVersion", "32.0.21025.1024")):
                r = harness.run("reg", "add", rf"{self.CLASS}\{key}", "/v", value, "/t", "REG_SZ",
                                "/d", data, "/f", env=self.wine_env())
                check(f"seed the registry: {desc} {value}", r.returncode == 0, r.stdout + r.stderr)
        (drive / "windows" / "system32" / "amdhip64_6.dll").write_bytes(b"MZ driver\n")
        bin_ = drive / "Program Files" / "AMD" / "ROCm" / "6.4" / "bin"
        rock = drive / "TheRock" / "bin"
        for folder in (bin_, rock):
            folder.mkdir(parents=True, exist_ok=True)
            (folder / "rocblas.dll").write_bytes(b"MZ rocblas\n")
        (bin_ / "amdhip64_6.dll").write_bytes(b"MZ sdk\n")
        (rock / "amdhip64_7.dll").write_bytes(b"MZ therock\n")
        shutil.copy(FAKE_HIPINFO, bin_ / "hipInfo.exe")
        shutil.copy(pathlib.Path(DATA) / "windows" / "hipinfo-igpu-first-rx6700xt.txt",
                    bin_ / "hipInfo.exe.txt")

    def env(self, **extra):
        """The user's: WINEPATH is put in front of the Windows PATH; HIP_PATH
        names the HIP SDK, as its installer sets it."""
        return {**self.wine_env(), "WINEPATH": self.user_path, "HIP_PATH": self.sdk + "\\",
                **extra}

    def spelled(self, path):
        return "Z:" + str(path).replace("/", "\\")

    def run(self, root, *args, **extra):
        return harness.run(root.binary, *args, env={"CFAPKG_ROOT": self.spelled(root.path),
                                                    "CFAPKG_RECIPES": str(root.recipes),
                                                    **self.env(**extra)},
                           drop=("CFAPKG_SYSROOT", "LD_LIBRARY_PATH"))

    def ran(self, root, **extra):
        """System32's cmd.exe by its full name (it reads its own command
        line, name included, for switches); --no-stage: nothing is placed
        in System32."""
        r = self.run(root, "run", "--env", "rocm", "--no-stage", "--", self.cmd, "/c", "set",
                     **extra)
        return environ(r.stdout, fold=True), r

    def activated(self, root):
        """cmd runs its snippet; Wine's powershell.exe is a stub that runs
        nothing, so PowerShell's assignments are read from its snippet."""
        r = self.run(root, "env", "activate", "--env", "rocm", "--shell", "cmd")
        script = self.tmp / "activate.cmd"
        script.write_text("@echo off\r\n" + r.stdout.replace("\n", "\r\n") + "set\r\n")
        out = harness.run(self.cmd, "/c", self.spelled(script), env=self.env(),
                          drop=("CFAPKG_SYSROOT", "LD_LIBRARY_PATH")).stdout
        ps = self.run(root, "env", "activate", "--env", "rocm", "--shell", "powershell").stdout
        assigned = {}
        for line in ps.splitlines():
            match = re.fullmatch(r"\$env:(\w+) = '((?:[^']|'')*)'", line)
            if match:
                assigned[match.group(1).upper()] = match.group(2).replace("''", "'")
        return {"cmd": environ(out, fold=True), "powershell": assigned}

    def entries(self, value):
        return value.split(";")

    def is_other_rocm(self, entry):
        return entry.lower() in (d.lower() for d in self.other_rocm)


def environ(text, fold=False):
    """NAME=value lines; Windows names in upper case (they ignore case)."""
    lines = (line.rstrip("\r").split("=", 1) for line in text.splitlines() if "=" in line)
    return {(k.upper() if fold else k): v for k, v in lines}


def fake_environment(m, root):
    """An environment made for gfx1031 whose own part 'myrocm' holds a HIP
    runtime, the rocBLAS Tensile files rocBLAS reads there and MIOpen; no
    launcher, so that 'run' starts the program itself."""
    m.run(root, "env", "create", "rocm")
    r = m.run(root, "install", "--env", "rocm", "pytorch-cuda-stack", *channel.FACTS, "--os",
              m.name, "--yes")
    check("install the stack", r.returncode == 0, r.stderr)
    gen = root.path / "envs" / "rocm" / "1"
    rocm = gen / "view" / "myrocm"
    for name in m.files:
        (rocm / name).parent.mkdir(parents=True, exist_ok=True)
        (rocm / name).write_bytes(b"fake\n")
    doc = json.loads((gen / "runtime.json").read_text())
    doc["gfx"] = GFX
    doc.pop("launcher", None)
    part = {"part": "myrocm", "version": "6.4.2", "system": False}
    shown = root.programs("rocm") / "view" / "myrocm"  # what programs are given
    doc["parts"].insert(0, {**part, "kind": "package"})
    doc["path"].append({**part, "dir": "{prefix}/" + m.lib})
    (gen / "runtime.json").write_text(json.dumps(doc))
    return m.spelled(shown)


def test_machine(m, root):
    r = m.run(root, "detect", "--json")
    try:
        d = json.loads(r.stdout)
        gpus = [(g["gfx"], g["integrated"], g["name"]) for g in d["gpus"]]
    except (json.JSONDecodeError, KeyError, TypeError):
        d, gpus = {}, []
    check("the machine: GPU 0 integrated, GPU 1 the RX 6700 XT, which detection picks",
          gpus == [("gfx1036", True, "AMD Radeon Graphics"),
                   ("gfx1031", False, "AMD Radeon RX 6700 XT")] and d.get("selected") == 1,
          r.stdout + r.stderr)


def test_variables(m, root, rocm):
    r = m.run(root, "env", "show", "--env", "rocm", "--json")
    shown = json.loads(r.stdout or "{}")
    v = shown.get("variables", {})
    check("HIP_VISIBLE_DEVICES picks the discrete GPU, not the iGPU at index 0",
          v.get("HIP_VISIBLE_DEVICES") == "1", r.stdout + r.stderr)
    if m.override:
        check(f"{GFX} runs as {m.override}", v.get("HSA_OVERRIDE_GFX_VERSION") == m.override, v)
    else:
        check("no HSA_OVERRIDE_GFX_VERSION on Windows", "HSA_OVERRIDE_GFX_VERSION" not in v
              and "HIP_VISIBLE_DEVICES" in v, v)
    check(f"no hipBLASLt kernels for {GFX}: addmm avoids cuBLASLt",
          v.get("DISABLE_ADDMM_CUDA_LT") == "1", v)
    check("HIP_PATH and ROCM_PATH name the environment's ROCm",
          v.get("HIP_PATH") == rocm and v.get("ROCM_PATH") == rocm, (rocm, v))
    check(f"the environment's ROCm {m.lib} comes first",
          shown.get("path", [""])[0] == rocm + m.sep + m.lib, shown.get("path"))
    check("other ROCm folders are taken off the paths",
          sorted(shown.get("path_removed", [])) == sorted(m.other_rocm),
          shown.get("path_removed"))
    r = m.run(root, "env", "show", "--env", "rocm", "--json", HSA_OVERRIDE_GFX_VERSION="10.3.1")
    v = json.loads(r.stdout or "{}").get("variables", {})
    check("a user's own HSA_OVERRIDE_GFX_VERSION is not replaced",
          "HSA_OVERRIDE_GFX_VERSION" not in v and v.get("HIP_VISIBLE_DEVICES") == "1", v)
    ran, r = m.ran(root, HSA_OVERRIDE_GFX_VERSION="10.3.1")
    check("run keeps the user's HSA_OVERRIDE_GFX_VERSION",
          ran.get("HSA_OVERRIDE_GFX_VERSION") == "10.3.1", r.stdout + r.stderr)


def test_agree(m, root, rocm):
    shown = json.loads(m.run(root, "env", "show", "--env", "rocm", "--json").stdout or "{}")
    if m.name == "linux":
        inside = m.inside_activated(root, "@CFAPKG@ env show --env rocm --json")
        check("env show in an activated shell shows what it shows outside",
              json.loads(inside or "{}") == shown, (inside, shown))
    ran, r = m.ran(root)
    shells = m.activated(root)
    check("run starts the program", r.returncode == 0 and ran, r.stdout + r.stderr)
    check("run sets HSA_OVERRIDE_GFX_VERSION as env show does",
          ran.get("HSA_OVERRIDE_GFX_VERSION") == m.override, ran.get("HSA_OVERRIDE_GFX_VERSION"))
    for shell, activated in shells.items():
        for name, value in shown.get("variables", {}).items():
            check(f"run and {shell} activation agree with env show on {name}",
                  ran.get(name) == value == activated.get(name),
                  (value, ran.get(name), activated.get(name)))
        for name in m.path_vars:
            check(f"run and {shell} activation set the same {name}",
                  ran.get(name) and ran.get(name) == activated.get(name),
                  (ran.get(name), activated.get(name)))
    for name in m.path_vars:
        entries = m.entries(ran.get(name, ""))
        check(f"run puts the environment's ROCm first on {name}",
              entries[0] == rocm + m.sep + m.lib, entries)
        check(f"{name} has no other ROCm", ran.get(name) and
              not any(m.is_other_rocm(e) for e in entries), ran.get(name))
    if m.name == "windows":
        check("System32, holding the driver's amdhip64_6.dll but no rocBLAS, stays on PATH",
              any(e.lower() == r"c:\windows\system32" for e in m.entries(ran.get("PATH", ""))),
              ran.get("PATH"))
        check("no LD_LIBRARY_PATH on Windows", "PATH" in ran and "LD_LIBRARY_PATH" not in ran
              and "PATH" in shells["cmd"] and "LD_LIBRARY_PATH" not in shells["cmd"],
              (sorted(ran), sorted(shells["cmd"])))


def doctor_rows(m, root, tmp, **extra):
    empty = tmp / "nolibs"
    empty.mkdir(exist_ok=True)
    r = m.run(root, "doctor", "--env", "rocm", "--json", "--lib-dir", m.spelled(empty),
              "--timeout", "60", **extra)
    try:
        return {c["check"]: c for c in json.loads(r.stdout)["static"]}, r
    except (json.JSONDecodeError, KeyError, TypeError):
        return {}, r


def test_doctor(m, root, rocm, tmp):
    rows, r = doctor_rows(m, root, tmp)
    lib = rocm + m.sep + m.lib
    row = rows.get("ROCm in use", {})
    check("doctor names the environment's ROCm", row.get("status") == "OK" and
          row.get("detail") == f"the environment's (myrocm 6.4.2): {rocm}",
          r.stdout[-2000:] + r.stderr)
    tensile = m.sep.join([lib, "rocblas", "library", f"TensileLibrary_lazy_{m.kernel_gfx}.dat"])
    row = rows.get("rocBLAS Tensile files", {})
    check(f"doctor finds the Tensile files rocBLAS would read ({m.kernel_gfx})",
          row.get("status") == "OK" and row.get("detail") == tensile, (tensile, row))
    row = rows.get("hipBLASLt kernels", {})
    check("doctor says hipBLASLt has no kernels and what is done about it",
          row.get("status") == "OK" and f"none for {GFX}" in row.get("detail", "") and
          "DISABLE_ADDMM_CUDA_LT=1 is set" in row.get("detail", ""), row)
    row = rows.get("MIOpen", {})
    check("doctor finds MIOpen", row.get("status") == "OK" and
          row.get("detail") == lib + m.sep + m.miopen, row)
    if m.override:
        rows, r = doctor_rows(m, root, tmp, HSA_OVERRIDE_GFX_VERSION="10.3.1")
        row = rows.get("rocBLAS Tensile files", {})
        check("doctor follows the user's override: 10.3.1 reads gfx1031's files, not here",
              row.get("status") == "MISSING" and
              row.get("detail", "").startswith("none for gfx1031 in "), row)
    else:
        rows, r = doctor_rows(m, root, tmp, HSA_OVERRIDE_GFX_VERSION="10.3.0")
        row = rows.get("rocBLAS Tensile files", {})
        check("doctor on Windows ignores a user's HSA_OVERRIDE_GFX_VERSION=10.3.0, as HIP "
              "there does", row.get("status") == "OK" and row.get("detail") == tensile, row)


def main():
    machine = Windows if harness.EMULATOR else Linux
    if machine is Windows and not FAKE_HIPINFO:
        print("FAIL: under Wine the test needs the stand-in hipInfo.exe (tests/CMakeLists.txt)")
        return 1
    with channel.served("cfapkg-rocm-", headers=5, big=1000) as (tmp, _, recipes):
        m = machine(tmp)
        with m.started():
            root = channel.Root(BIN, tmp / "root", recipes)
            rocm = fake_environment(m, root)
            test_machine(m, root)
            test_variables(m, root, rocm)
            test_agree(m, root, rocm)
            test_doctor(m, root, rocm, tmp)
    return check.report()


if __name__ == "__main__":
    sys.exit(main())
