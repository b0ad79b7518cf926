#!/usr/bin/env python3
"""Running under environments: the runtime config for Windows and Linux
(golden files), staging and unstaging beside a program (a user's own DLL
survives), paths too long for the old fixed buffers (used whole or
refused naming them, never cut), arguments and exit status through
'cfapkg run', the doctor's classification of fake CUDA libraries (works,
missing symbol, errors, hang, crash, wrong results), the overlay warning,
and bench statistics."""
import hashlib
import json
import os
import pathlib
import re
import subprocess
import sys

import channel
import harness


BIN, ECHO, SCORE, FAKES, GOLDEN = sys.argv[1:6]
check = harness.Checks()
WINDOWS = bool(harness.EMULATOR)



def normalized(text, root):
    """Paths as the golden files spell them: ROOT/..., forward slashes."""
    text = text.replace("\\\\", "/").replace("\\", "/")
    text = re.sub(r"[A-Za-z]:/", "/", text)
    return text.replace(str(root), "SYSROOT" if "sysroots" in str(root) else "ROOT")


def test_golden(root, update):
    """On Linux the stack also needs ROCm, a system part found on the
    machine: the RX 9060 XT fixture has /opt/rocm-6.4.2."""
    sysroot = pathlib.Path(GOLDEN).parent / "sysroots" / "rx9060xt"
    stack = json.loads((root.recipes / "pytorch-cuda-stack.json").read_text())
    stack["versions"][0]["requires"].append({"dep": "rocm", "os": ["linux"]})
    (root.recipes / "pytorch-cuda-stack.json").write_text(json.dumps(stack))
    for os_name in ("linux", "windows"):
        env = f"rt-{os_name}"
        root.run("env", "create", env)
        r = root.run("install", "--env", env, "pytorch-cuda-stack", *channel.FACTS, "--os",
                     os_name, "--hip-sdk", "6.4.2", "--yes")
        check(f"install for {os_name}", r.returncode == 0, r.stderr)
        r = root.run("env", "show", "--env", env, "--json", env={"CFAPKG_SYSROOT": str(sysroot)})
        got = json.loads(normalized(normalized(r.stdout, sysroot), root.path) or "{}")
        if WINDOWS and got.get("stable_path") is None:
            # Wine 8 keeps no junctions (tests/WINE.md): the paths name
            # generation 1 itself rather than the stable path.
            got = json.loads(json.dumps(got).replace(f"ROOT/envs/{env}/1/",
                                                     f"ROOT/envs/{env}/active/"))
            got["stable_path"] = f"ROOT/envs/{env}/active"
        golden = pathlib.Path(GOLDEN) / f"{os_name}.json"
        if update:
            golden.write_text(json.dumps(got, indent=1, sort_keys=True) + "\n")
        want = json.loads(golden.read_text())
        check(f"runtime config for {os_name} matches {golden.name}", got == want,
              json.dumps(got, indent=1, sort_keys=True))
    r = root.run("env", "activate", "--env", "rt-linux", "--shell", "bash")
    check("activate for bash", "export ZLUDA_CC='8.6'" in r.stdout and
          'export PATH=' in r.stdout and "${PATH:+:${PATH}}" in r.stdout, r.stdout)
    r = root.run("env", "activate", "--env", "rt-windows", "--shell", "powershell")
    check("activate for PowerShell", "$env:ZLUDA_CC = '8.6'" in r.stdout and
          "+ ';' + $env:PATH" in r.stdout, r.stdout)
    r = root.run("env", "activate", "--env", "rt-windows", "--shell", "cmd")
    check("activate for cmd", 'set "ZLUDA_CC=8.6"' in r.stdout, r.stdout)
    r = root.run("env", "activate", "--env", "rt-windows", "--shell", "tcsh")
    check("an unknown shell is refused", r.returncode == 2)


def test_staging(root, tmp):
    prog = tmp / "prog"
    prog.mkdir()
    (prog / "nvcuda.dll").write_bytes(b"the user's own nvcuda\n")
    (prog / "app.exe").write_bytes(b"program\n")
    before = {p.name: p.read_bytes() for p in prog.iterdir()}
    r = root.run("stage", "--env", "rt-windows", str(prog))
    staged = sorted(p.name for p in prog.iterdir())
    check("stage places the environment's DLLs", r.returncode == 0 and
          "cublas64_11.dll" in staged and "zluda.exe" not in staged, r.stderr + str(staged))
    check("a staged DLL has the environment's bytes",
          (prog / "nvcuda.dll").read_bytes() == b"nvcuda 7-preview.10\n")
    check("the user's own DLL is kept aside",
          (prog / "nvcuda.dll.cfapkg-saved").read_bytes() == b"the user's own nvcuda\n")
    r = root.run("stage", "--env", "rt-windows", str(prog))
    check("staging twice keeps the user's original", r.returncode == 0 and
          (prog / "nvcuda.dll.cfapkg-saved").read_bytes() == b"the user's own nvcuda\n")
    r = root.run("unstage", str(prog))
    after = {p.name: p.read_bytes() for p in prog.iterdir()}
    check("unstage restores the folder exactly", r.returncode == 0 and after == before,
          sorted(after))
    root.run("stage", "--env", "rt-windows", str(prog))
    (prog / "cublas64_11.dll").write_bytes(b"changed by the user\n")
    r = root.run("unstage", str(prog))
    check("unstage keeps a staged file the user changed, and says so",
          r.returncode == 0 and (prog / "cublas64_11.dll").read_bytes() ==
          b"changed by the user\n" and "changed since it was staged" in r.stderr, r.stderr)
    r = root.run("unstage", str(prog))
    check("unstage of a folder with nothing staged", r.returncode == 4)


def test_run(root):
    args = ["with space", 'q"uote', "back\\slash", "ünïcødé", "", "--env"]
    r = root.run("run", "--env", "rt-linux", "--no-stage", "--", ECHO, *args)
    want = "".join(f"[{a.encode().hex()}]\n" for a in args)
    check("run passes arguments through unchanged", r.returncode == 0 and r.stdout == want,
          repr(r.stdout) + r.stderr)
    r = root.run("run", "--env", "rt-linux", "--no-stage", "--", ECHO, "exit=7")
    check("run passes the exit status back", r.returncode == 7, r.stderr)
    r = root.run("run", "--env", "rt-linux", "--", "no-such-program-here")
    check("run of a missing program: 127, as a shell says it",
          r.returncode == 127 and "not found" in r.stderr)
    if WINDOWS:
        return
    r = root.run("run", "--env", "rt-linux", "--", "sh", "-c",
                 'echo "$ZLUDA_CC|$TORCH_ALLOW_TF32_CUBLAS_OVERRIDE|$LD_LIBRARY_PATH"')
    cc, tf32, ld = (r.stdout.strip().split("|") + ["", "", ""])[:3]
    check("run sets the environment's variables and library path",
          cc == "8.6" and tf32 == "1" and any(p.endswith("view/zluda") for p in ld.split(":")),
          r.stdout)
    r = root.run("run", "--env", "rt-linux", "--", "sh", "-c", "kill -TERM $$")
    check("run passes a signal back", r.returncode == -15, r.returncode)


def test_broken_recipe(root, tmp):
    """A recipe file that does not parse (one being edited) stops what
    needs the recipes, naming the file, and nothing that only reads or runs
    what is installed."""
    broken = tmp / "broken-recipes"
    broken.mkdir()
    (broken / "half.json").write_text('{"format": 1, "name": "half", "versions": [')
    # A list of folders, in the separator of the system cfapkg runs on.
    env = {"CFAPKG_RECIPES": (";" if WINDOWS else os.pathsep).join([str(root.recipes),
                                                                     str(broken)])}
    for args in (["list", "--env", "rt-linux"], ["pins", "--env", "rt-linux"],
                 ["lock", "--env", "rt-linux"], ["env", "list"],
                 ["env", "show", "--env", "rt-linux"], ["verify", "--env", "rt-linux"]):
        r = root.run(*args, env=env)
        check(f"{' '.join(args[:2])} works while a recipe file is broken",
              r.returncode == 0 and "half.json" not in r.stderr, r.stdout + r.stderr)
    r = root.run("run", "--env", "rt-linux", "--no-stage", "--", ECHO, "ok", env=env)
    check("run runs the program, and warns that the parts' status went unchecked, naming "
          "the file", r.returncode == 0 and r.stdout == f"[{b'ok'.hex()}]\n" and
          "not checked" in r.stderr and "half.json" in r.stderr, r.stdout + r.stderr)
    r = root.run("plan", "zluda", *channel.FACTS, env=env)
    check("a plan, which needs the recipes, is refused naming the file",
          r.returncode != 0 and "half.json" in r.stderr, r.stderr)


def doctor(root, mode, lib_dir, timeout="120"):
    """Only a hang waits out the timeout; every other case ends on its own,
    so its limit is generous (a slow Wine start must not turn into TIMEOUT)."""
    try:
        r = root.run("doctor", "--env", "rt-linux" if not WINDOWS else "rt-windows", "--json",
                     "--lib-dir", lib_dir, "--timeout", timeout, env={"FAKE_CUDA_MODE": mode})
    except subprocess.TimeoutExpired as e:
        return subprocess.CompletedProcess(e.cmd, None, "", f"doctor ran past {e.timeout} s"), {}
    try:
        out = json.loads(r.stdout)
    except json.JSONDecodeError:
        return r, {}
    return r, {p["library"]: p for p in out["probes"]}


def test_doctor(root):
    full, nosym = os.path.join(FAKES, "full"), os.path.join(FAKES, "nosym")
    r, p = doctor(root, "works", full)
    check("doctor: a working driver is OK", p.get("cuda", {}).get("status") == "OK" and
          "Fake CUDA device" in p["cuda"]["detail"], r.stdout + r.stderr)
    check("doctor: a working cuBLAS is OK", p.get("cublas", {}).get("status") == "OK")
    fields = [p[lib].get(k) or "" for lib in p for k in ("file", "detail", "last_step")]
    check("doctor: the probe's line ends are in no field (Windows writes CRLF)",
          p and not any(f != f.strip() for f in fields), fields)
    r, p = doctor(root, "works", nosym)
    check("doctor: a missing symbol is FAILED and named",
          p.get("cuda", {}).get("status") == "FAILED" and
          "cuModuleLoadData" in p["cuda"]["detail"], p.get("cuda"))
    r, p = doctor(root, "error", full)
    check("doctor: an error code is FAILED with the call",
          p.get("cuda", {}).get("status") == "FAILED" and
          "cuInit returned 100" in p["cuda"]["detail"], p.get("cuda"))
    check("doctor: a broken stack is not usable", r.returncode == 1)
    # Long enough for the probe to start (a second or more under Wine) and
    # reach cuInit; each probe that needs the driver waits it out.
    r, p = doctor(root, "hang", full, timeout="10")
    check("doctor: a hang is TIMEOUT, naming the call",
          p.get("cuda", {}).get("status") == "TIMEOUT" and
          p["cuda"]["detail"].endswith("(last call: cuInit)"), p.get("cuda"))
    # No debugger or error dialog holds a crashed probe: it is CRASHED long
    # before the timeout.
    r, p = doctor(root, "crash", full)
    check("doctor: a crash is CRASHED, naming the call",
          p.get("cuda", {}).get("status") == "CRASHED" and
          p["cuda"]["detail"].endswith(" in cuInit") and p["cuda"]["last_step"] == "cuInit",
          p.get("cuda"))
    r, p = doctor(root, "wrong", full)
    check("doctor: wrong results are WRONG RESULT with the error",
          p.get("cuda", {}).get("status") == "WRONG RESULT" and
          p.get("cublas", {}).get("status") == "WRONG RESULT" and
          "max error 0.5" in p["cublas"]["detail"], (p.get("cuda"), p.get("cublas")))
    empty = os.path.join(FAKES, "none")
    os.makedirs(empty, exist_ok=True)
    r, p = doctor(root, "works", empty)
    cuda = p.get("cuda", {})
    if cuda.get("status") == "MISSING":  # a machine with a CUDA driver finds it
        check("doctor: a missing driver names the file and who provides it",
              "zluda 7-preview.10 should provide it" in (cuda.get("hint") or ""), cuda)


def test_overlay(root, tmp):
    dll = b"overlay cublas built for gfx1200\n"
    sha = hashlib.sha256(dll).hexdigest()
    recipe = {"format": 1, "name": "test-overlay", "summary": "a user-supplied overlay",
              "kind": "user", "versions": [{
                  "version": "1", "requires": ["zluda"],
                  "status": {"gfx1200": "validated", "*": "experimental"},
                  "user_files": [{"name": "cublas64_11.dll", "sha256": sha}],
                  "layout": [{"path": "cublas64_11.dll", "as": "cublas64_11.dll"}]}]}
    (root.recipes / "test-overlay.json").write_text(json.dumps(recipe))
    f = tmp / "cublas64_11.dll"
    f.write_bytes(dll)
    check("add-file accepts the overlay's file", root.run("add-file", str(f)).returncode == 0)
    root.run("env", "create", "ov")
    r = root.run("install", "--env", "ov", "test-overlay", "zluda==6-preview.69", "--gpu",
                 "gfx1100", "--os", "windows", "--allow-experimental", "--yes")
    check("an overlay installs from the user's file", r.returncode == 0, r.stderr)
    prog = tmp / "prog2"
    prog.mkdir()
    root.run("stage", "--env", "ov", str(prog))
    check("the overlay's DLL wins over ZLUDA's", (prog / "cublas64_11.dll").read_bytes() == dll)
    r = root.run("run", "--env", "ov", "--no-stage", "--", ECHO)
    check("run warns about an overlay validated on another GPU",
          "validated on gfx1200 only" in r.stderr, r.stderr)


def test_bench(root, tmp):
    counter = tmp / "counter"
    counter.write_text("")
    out = tmp / "bench-out"
    out.mkdir()
    root.run("env", "create", "six")
    # The machine rt-linux was planned for (ROCm 6.4.2 installed), so that
    # no packaged ROCm is fetched from outside.
    root.run("install", "--env", "six", "pytorch-cuda-stack", "zluda==6-preview.69",
             *channel.FACTS, "--os", "linux", "--hip-sdk", "6.4.2", "--yes")
    r = root.run("bench", "--env", "six", "--env", "rt-linux", "-n", "3", "--warmup", "0",
                 "--metric", r"score: (\d+)", "-o", str(out), "--json", "--", SCORE,
                 env={"COUNTER": str(counter)})
    doc = json.loads(r.stdout or "{}")
    m = doc.get("stats", {}).get("metric", {})
    check("bench alternates and reports min/median/max per environment", r.returncode == 0 and
          m.get("six", {}).get("median") == 4 and m.get("six", {}).get("min") == 3 and
          m.get("rt-linux", {}).get("max") == 8 and
          [x["env"] for x in doc["runs"]] == ["six", "rt-linux"] * 3, r.stdout + r.stderr)
    check("bench reports the ratio of medians", abs(m.get("ratio_of_medians", 0) - 7 / 4) < 1e-9)
    names = sorted(p.name for p in out.iterdir())
    figures = ["bench-six-vs-rt-linux.svg"] if WINDOWS else ["bench-six-vs-rt-linux.png",
                                                             "bench-six-vs-rt-linux.svg"]
    check("bench writes CSV, JSON and the figure (SVG, and PNG where the build has cairo)",
          names == ["bench-six-vs-rt-linux.csv", "bench-six-vs-rt-linux.json", *figures], names)
    svg = (out / "bench-six-vs-rt-linux.svg").read_text()
    check("the plot marks each run and draws each median, in both panels (metric, wall time)",
          svg.count('class="run measured') == 12 and svg.count('class="median env') == 4)
    r = root.run("bench", "--env", "six", "--env", "rt-linux", "--metric", "no group", "--",
                 SCORE)
    check("a metric without a group is refused", r.returncode == 2 and "group" in r.stderr)


def test_doctor_marks(root):
    """Only a live probe proves a generation: a working stack marks it
    known-good, a broken one takes the mark back, both in history."""
    env = "rt-linux" if not WINDOWS else "rt-windows"
    root.run("unmark", "--env", env)

    def generation():
        h = json.loads(root.run("history", "--env", env, "--json").stdout)["history"]
        return [e for e in h if e["event"] == "generation" and e["current"]][0]
    check("doctor: a new generation is checked, not known-good", not generation()["good"])
    r, p = doctor(root, "works", os.path.join(FAKES, "full"))
    g = generation()
    check("doctor: a usable stack marks the generation known-good",
          r.returncode == 0 and g["good"] and g["known_good"]["by"] == "doctor" and
          g["known_good"]["reason"].startswith("usable: driver, cuBLAS, cuBLASLt OK"),
          (g.get("known_good"), r.stderr))
    r, p = doctor(root, "error", os.path.join(FAKES, "full"))
    g = generation()
    check("doctor: a broken stack takes the mark back, saying what failed",
          r.returncode == 1 and not g["good"] and g["marks"][-1]["by"] == "doctor" and
          g["marks"][-1]["reason"].startswith("doctor failed: cuda FAILED") and
          "cuInit returned 100" in g["marks"][-1]["reason"], g["marks"][-1:])


def deep_folder(base, length):
    """A folder path of exactly length characters below base, in names of
    at most 200 characters (file systems allow 255 in one name)."""
    path = str(base)
    while len(path) < length:
        need = length - len(path)
        part = 200 if need > 300 else 100 if need > 201 else need - 1
        path += "/" + "d" * part
    return path


def test_long_paths(root, tmp):
    """Paths past the 4096 bytes fixed buffers once held are used whole or
    refused naming them whole: never cut into the name of another file."""
    # Every file staged into this folder, and its record, has a path of
    # more than 4095 characters; the folder itself has fewer.
    prog = deep_folder(tmp / "long", 4086)
    os.makedirs(prog)
    pathlib.Path(prog, "app.exe").write_bytes(b"program\n")
    before = sorted(os.listdir(prog))
    r = root.run("stage", "--env", "rt-windows", prog)
    after = sorted(os.listdir(prog))
    if r.returncode == 0:  # a system that takes such paths (Windows: \\?\ paths)
        check("stage into a deep folder places the DLLs under their whole names",
              "cublas64_11.dll" in after and ".cfapkg-staged.json" in after, after)
        r = root.run("unstage", prog)
        check("unstage restores the deep folder", r.returncode == 0 and
              sorted(os.listdir(prog)) == before, r.stderr[-400:])
    else:  # Linux: its record's path is past what the system opens
        said = r.stderr.replace("\\", "/")
        check("stage into a deep folder is refused naming the whole path",
              r.returncode != 0 and (prog + "/.cfapkg-staged.json" in said or
                                     prog + ": no such folder" in said), r.stderr[-400:])
        check("stage into a deep folder writes nothing under a cut name", after == before,
              after)
    program = deep_folder(prog, 5000) + "/prog"
    r = root.run("run", "--env", "rt-linux", "--no-stage", "--", program)
    check("run of a program path of 5000 characters fails naming it whole",
          r.returncode == 127 and program + ": no such program" in r.stderr.replace("\\", "/"),
          r.stderr[-400:])


def main():
    update = os.environ.get("CFAPKG_UPDATE_GOLDEN") == "1"
    with channel.served("cfapkg-rt-", headers=5, big=1000) as (tmp, _, recipes):
        root = channel.Root(BIN, tmp / "root", recipes)
        test_golden(root, update)
        test_staging(root, tmp)
        test_long_paths(root, tmp)
        test_run(root)
        test_broken_recipe(root, tmp)
        test_doctor(root)
        test_overlay(root, tmp)
        test_bench(root, tmp)
        test_doctor_marks(root)
    return check.report()


if __name__ == "__main__":
    sys.exit(main())
