#!/usr/bin/env python3
"""Linux end to end on real packages: Debian's own ROCm sets (sid's 6.4 set
and experimental's 7.2.4 set, fetched once with apt-get by
scripts/debian-rocm-sets, with the real signed InRelease and Packages
files) served by nginx on 127.0.0.1 in Debian's layout.

The test writes its own rocm-debian recipe from the indexes it is given
(the same script that wrote the shipped one, so the test keeps working
when sid and experimental move on and the shipped pins have left the
archive).  ZLUDA and LibTorch are served stand-ins whose shared libraries
carry ZLUDA's real DT_NEEDED list (libamdhip64.so, librocblas.so,
librocsparse.so, libhipblaslt.so, librocm_smi64.so, libMIOpen.so.1; the
names rewritten to unversioned ones as ZLUDA's build does), linked here
against the real Debian libraries.  Nothing here names a Debian version
or soname: each is read from the set in hand, so a newer sid keeps the
test working.  The machines are sysfs fixtures with
only the kernel driver: an RX 7900 XTX (gfx1100) and an RX 9070 XT
(gfx1201), each with a newer C library than this host's (sid's real
libc.so.6, which detection reads).  For each:

  - 'cfapkg install pytorch-cuda-stack rocm-debian' takes Debian's set for
    the GPU (6.4 for gfx1100, 7.2.4 for gfx1201), ZLUDA and LibTorch (named,
    since for gfx1201 the built-in recipes' pinned TheRock 10.0.0 tarball,
    a newer ROCm, would be planned, from a server that is not 127.0.0.1);
  - under 'cfapkg run', the loader of that newer glibc traces every ZLUDA
    and LibTorch library as 'ldd -r' has it do (every symbol bound): every
    dependency resolves inside the environment, the C library to the
    machine's, nothing from this host, no symbol or version missing;
  - 'cfapkg doctor' names the ROCm in use and finds rocBLAS's Tensile and
    hipBLASLt's kernel files for the GPU in the real files.

And refusals, each leaving nothing installed: a tampered .deb, a set
whose closure lacks comgr's libLLVM (the load check names the library,
the name and the package), and sid's real InRelease checked by gpgv with
debian-archive-keyring, pinned to a key that did not sign it and to one
that did (then refused as past its Valid-Until).  REFUSALS lists them.

Disk: one data root at a time (the sid set unpacks to about 3.5 GB), each
removed when its checks are done, and the temporary folder at the end.

    test_debian_stack.py CFAPKG SETS_FOLDER SCRIPT SYSROOTS
"""
import hashlib
import json
import os
import pathlib
import re
import shutil
import struct
import subprocess
import sys
import tarfile
import tempfile
import time

import harness

sys.path.insert(0, str(pathlib.Path(__file__).parent / "servers"))
from nginx import Nginx  # noqa: E402

BIN, SETS, SCRIPT, SYSROOTS = (sys.argv[1], pathlib.Path(sys.argv[2]), sys.argv[3],
                               pathlib.Path(sys.argv[4]))
LIBDIR = "usr/lib/x86_64-linux-gnu"
# A whole set's fetch and unpack, on a slow machine under the sanitizers.
LONG = 1800
check = harness.Checks()
timings = []


def run(*args, env=None, timeout=LONG):
    e = dict(os.environ)
    e.update(env or {})
    return subprocess.run([BIN, *args], capture_output=True, text=True, timeout=timeout, env=e)


def timed(what, fn):
    t = time.monotonic()
    out = fn()
    timings.append((what, time.monotonic() - t))
    return out


# --- the repository and the recipes ------------------------------------


def serve_repo(www, name, tamper=None):
    """www/name: the cached repository, its .debs linked, dists/ copied."""
    dst = www / name
    for f in SETS.rglob("*"):
        rel = f.relative_to(SETS)
        if not f.is_file() or rel.parts[0] not in ("dists", "pool") or f.name.startswith("."):
            continue
        out = dst / rel
        out.parent.mkdir(parents=True, exist_ok=True)
        if f.suffix == ".deb":
            os.symlink(f, out)
        else:
            shutil.copyfile(f, out)
    if tamper:
        tamper(dst)
    return dst


def write_rocm_recipe(folder, url):
    folder.mkdir(parents=True, exist_ok=True)
    r = subprocess.run([sys.executable, SCRIPT, "recipe", "--cfapkg", BIN, "--repo", str(SETS),
                        "--repository", url, "-o", str(folder / "rocm-debian.json")],
                       capture_output=True, text=True, timeout=LONG)
    check("the recipe is written from today's indexes", r.returncode == 0, r.stderr)
    return json.loads((folder / "rocm-debian.json").read_text())


def check_against_apt(versions, sid, exp):
    """cfapkg's closure is apt's own (the fetch script asked apt's resolver
    for it), less the C library and what only the C library needs."""
    sets = json.loads((SETS / "sets.json").read_text())["sets"]
    libc = ("libc6_", "libc-gconv-modules-extra_")
    for suite, version in (("sid", sid), ("experimental", exp)):
        ours = {p["file"] for p in versions[version]["sources"]["linux-x86_64"]["apt"]["packages"]}
        apts = set(sets[suite]["files"])
        only_apt = {f for f in apts - ours if not pathlib.Path(f).name.startswith(libc)}
        check(f"{suite}: the closure read from the index is apt's, less the C library",
              not only_apt and not ours - apts, (sorted(only_apt), sorted(ours - apts)))


def deb_of(name):
    sets = json.loads((SETS / "sets.json").read_text())["sets"]
    for files in (s["files"] for s in sets.values()):
        for f in files:
            if pathlib.Path(f).name.startswith(name + "_"):
                return SETS / f
    raise SystemExit(f"test_debian_stack: no {name} .deb in {SETS}")


def glibc_version():
    """The upstream version of the set's libc6: 2.42 of libc6_2.42-3."""
    return re.match(r"libc6_(?:\d+%3a)?([0-9.]+)", deb_of("libc6").name).group(1)


def machine(tmp, fixture, glibc):
    """A fixture machine whose C library is sid's (detection reads it)."""
    m = tmp / f"machine-{fixture}"
    if m.exists():
        return m
    shutil.copytree(SYSROOTS / fixture, m, symlinks=True)
    lib = m / LIBDIR
    lib.mkdir(parents=True, exist_ok=True)
    for f in (glibc / LIBDIR).iterdir():
        if f.name.startswith(("libc.so", "libm.so", "ld-linux")):
            shutil.copy(f, lib / f.name, follow_symlinks=True)
    return m


# --- the stand-ins -------------------------------------------------------

# ZLUDA's Linux libraries and what each links against (real-artifacts.md),
# with a call into each ROCm library so that binding the symbols is checked.
# An unversioned name is linked through the set's own layout link and its
# DT_NEEDED, the library's soname, made unversioned again.
ZLUDA = {
    "libcuda.so": ("libcuda.so.1", ["libamdhip64.so"],
                   "extern int hipInit(unsigned); int cuInit(unsigned f) { return hipInit(f); }"),
    "libcublas.so": ("libcublas.so.11", ["librocblas.so"],
                     "extern int rocblas_create_handle(void **);\n"
                     "int cublasCreate_v2(void **h) { return rocblas_create_handle(h); }"),
    "libcusparse.so": ("libcusparse.so.11", ["librocsparse.so"],
                       "extern int rocsparse_create_handle(void **);\n"
                       "int cusparseCreate(void **h) { return rocsparse_create_handle(h); }"),
    "libcublasLt.so": ("libcublasLt.so.11", ["libhipblaslt.so"],
                       "extern int hipblasLtCreate(void **);\n"
                       "int cublasLtCreate(void **h) { return hipblasLtCreate(h); }"),
    "libnvidia-ml.so": ("libnvidia-ml.so.1", ["librocm_smi64.so"],
                        "extern int rsmi_init(unsigned long long);\n"
                        "int nvmlInit_v2(void) { return rsmi_init(0); }"),
    "libcudnn.so": ("libcudnn.so.8", ["libamdhip64.so", "libMIOpen.so.1"],
                    "extern int hipInit(unsigned); extern int miopenCreate(void **);\n"
                    "int cudnnCreate(void **h) { return hipInit(0) ? 1 : miopenCreate(h); }"),
    "libcufft.so": ("libcufft.so.10", [], "int cufftCreate(int *p) { *p = 0; return 0; }"),
}


def rewrite_needed(path, new):
    """A DT_NEEDED new.N... becomes new in place (new is no longer), as
    patchelf --replace-needed does for ZLUDA's build."""
    data = bytearray(path.read_bytes())
    phoff, = struct.unpack_from("<Q", data, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", data, 0x36)
    loads, dyn = [], None
    for i in range(phnum):
        p_type, _, p_off, p_vaddr, _, p_filesz = struct.unpack_from(
            "<IIQQQQ", data, phoff + i * phentsize)
        if p_type == 1:
            loads.append((p_vaddr, p_off, p_filesz))
        elif p_type == 2:
            dyn = (p_off, p_filesz)
    entries = [struct.unpack_from("<qQ", data, dyn[0] + 16 * i) for i in range(dyn[1] // 16)]
    strtab = next(v for t, v in entries if t == 5)
    base = next(o + strtab - va for va, o, sz in loads if va <= strtab < va + sz)
    done = False
    for tag, val in entries:
        at = base + val
        old = bytes(data[at:data.index(b"\0", at)]) if tag == 1 else b""
        if old.startswith(new.encode() + b"."):
            data[at:at + len(old)] = new.encode().ljust(len(old), b"\0")
            done = True
    path.write_bytes(bytes(data))
    return done


def cc(out, source, soname, libdir, libs):
    src = SRCDIR / (out.name + ".c")  # not in the package's folder
    src.write_text(source + "\n")
    args = ["cc", "-shared", "-fPIC", "-o", str(out), f"-Wl,-soname,{soname}", str(src),
            f"-L{libdir}", f"-Wl,-rpath-link,{libdir}", "-Wl,--no-as-needed"]
    r = subprocess.run(args + [f"-l:{lib}" for lib in libs], capture_output=True, text=True)
    check(f"{out.name} links against the real libraries", r.returncode == 0, r.stderr)


def build_zluda(tmp, rocm_lib):
    """zluda/ with ZLUDA's libraries and its links of the CUDA names."""
    top = tmp / "zluda-build" / "zluda"
    top.mkdir(parents=True)
    for name, (soname, needs, source) in ZLUDA.items():
        cc(top / name, source, soname, rocm_lib, needs)
        for n in needs:
            if n.endswith(".so"):
                check(f"{name}: DT_NEEDED {n}", rewrite_needed(top / name, n))
        os.symlink(name, top / soname)
    os.symlink("libcuda.so", top / "libcuda.so.1.0")
    return top


def build_libtorch(tmp, zluda):
    top = tmp / "libtorch-build" / "libtorch"
    (top / "lib").mkdir(parents=True)
    cc(top / "lib" / "libtorch_cuda.so",
       "extern int cuInit(unsigned); extern int cublasCreate_v2(void **);\n"
       "extern int cublasLtCreate(void **); extern int cusparseCreate(void **);\n"
       "extern int cufftCreate(int *);\n"
       "int torch_cuda_init(void) { void *h; int p;\n"
       "  return cuInit(0) | cublasCreate_v2(&h) | cublasLtCreate(&h) | cusparseCreate(&h) |"
       " cufftCreate(&p); }", "libtorch_cuda.so", zluda,
       ["libcuda.so.1", "libcublas.so.11", "libcublasLt.so.11", "libcusparse.so.11",
        "libcufft.so.10"])
    (top / "build-version").write_text("2.3.0+cu118\n")
    return top


def tarball(top, out):
    with tarfile.open(out, "w:gz") as t:
        t.add(top, arcname=top.name)
    return {"url": None, "sha256": hashlib.sha256(out.read_bytes()).hexdigest(),
            "size": out.stat().st_size, "format": "tar.gz", "strip": 1}


def stand_in_recipes(folder, srv, www, zluda, libtorch):
    z = dict(tarball(zluda, www / "zluda.tar.gz"), url=srv.url("zluda.tar.gz"))
    t = dict(tarball(libtorch, www / "libtorch.tar.gz"), url=srv.url("libtorch.tar.gz"))
    recipes = {
        "zluda": {"format": 1, "name": "zluda", "summary": "ZLUDA stand-in (real DT_NEEDED)",
                  "versions": [{"version": "6", "os": ["linux"],
                                "requires": ["amdhip64 >= 6", "rocblas", "rocsparse"],
                                "provides": ["cuda-driver-api", "nvml", "cublas = 11",
                                             "cublaslt = 11", "cusparse = 11", "cufft = 10"],
                                "sources": {"linux-x86_64": z},
                                "runtime": {"path": ["."]}}]},
        "libtorch-cuda": {"format": 1, "name": "libtorch-cuda", "summary": "LibTorch stand-in",
                          "versions": [{"version": "2.3.0+cu118", "os": ["linux"],
                                        "requires": ["cuda-driver-api", "cublas == 11",
                                                     "cublaslt == 11", "cusparse == 11",
                                                     "cufft == 10"],
                                        "sources": {"linux-x86_64": t},
                                        "runtime": {"path": ["lib"]}}]},
    }
    for name, r in recipes.items():
        (folder / f"{name}.json").write_text(json.dumps(r, indent=1))


# --- the checks ----------------------------------------------------------


class Root:
    def __init__(self, path, recipes, sysroot):
        self.path, self.recipes, self.sysroot = path, recipes, sysroot

    def env(self):
        return {"CFAPKG_ROOT": str(self.path), "CFAPKG_RECIPES": str(self.recipes),
                "CFAPKG_SYSROOT": str(self.sysroot), "CFAPKG_MIRRORS": "", "CFAPKG_GPU": ""}

    def run(self, *args, timeout=LONG):
        return run(*args, env=self.env(), timeout=timeout)

    def listing(self, env):
        r = self.run("list", "--env", env, "--json")
        return {p["name"]: p["version"] for p in json.loads(r.stdout or "{}").get("packages", [])}

    def view(self, env):
        gen = (self.path / "envs" / env / "current").read_text().strip()
        return self.path / "envs" / env / gen / "view"


def loader_trace(root, env, lib, glibc):
    """Under cfapkg run: the newer glibc's loader traces lib with every
    symbol bound, the machine's C library after the environment's path."""
    loader = glibc / LIBDIR / "ld-linux-x86-64.so.2"
    # What 'ldd -r' asks of the loader: trace, bind every symbol, warn of
    # each one missing (--list alone does not relocate).
    script = (f'exec env LD_TRACE_LOADED_OBJECTS=1 LD_BIND_NOW=1 LD_WARN=1 "{loader}" '
              f'--inhibit-cache --library-path "$LD_LIBRARY_PATH:{glibc / LIBDIR}" "{lib}"')
    return root.run("run", "--env", env, "--", "sh", "-c", script, timeout=300)


def check_trace(root, env, lib, glibc, r):
    resolved = {}
    for line in r.stdout.splitlines():
        if "=>" in line:
            name, _, where = line.strip().partition(" => ")
            resolved[name] = where.split(" (")[0]
    bad = [line for line in (r.stdout + r.stderr).splitlines()
           if "not found" in line or "undefined symbol" in line or "error" in line]
    inside = str(root.path)
    host = {n: p for n, p in resolved.items()
            if not p.startswith(inside) and not p.startswith(str(glibc))}
    check(f"{env}: {lib.name} loads (every name, version and symbol found)",
          r.returncode == 0 and resolved and not bad, (r.returncode, bad[:5], r.stderr[-500:]))
    check(f"{env}: {lib.name}'s dependencies are the environment's, none from the host",
          not host, host)
    return resolved


def check_trace_checks(root, env, glibc, rocm_lib):
    """The trace's checks can fail: a library needing a symbol no library
    defines, and a host library (whose needs resolve from the host), are
    caught."""
    bad = SRCDIR.parent / "controls"
    bad.mkdir(exist_ok=True)
    cc(bad / "libundefined.so", "extern int hipNoSuchCall(void);\n"
       "int f(void) { return hipNoSuchCall(); }", "libundefined.so", rocm_lib,
       ["libamdhip64.so"])
    r = loader_trace(root, env, bad / "libundefined.so", glibc)
    check("control: the trace reports a symbol no library defines",
          "undefined symbol: hipNoSuchCall" in r.stdout + r.stderr, r.stdout + r.stderr)
    host_lib = next((p for p in ("/lib/x86_64-linux-gnu/libselinux.so.1",
                                 "/lib/x86_64-linux-gnu/libacl.so.1") if os.path.exists(p)), None)
    if host_lib:
        r = loader_trace(root, env, host_lib, glibc)
        resolved = {line.split(" => ")[0].strip(): line.split(" => ")[1].split(" (")[0]
                    for line in r.stdout.splitlines() if " => " in line}
        check("control: a library resolved from this host is seen as the host's",
              any(not p.startswith(str(root.path)) and not p.startswith(str(glibc))
                  for p in resolved.values()), resolved)


def check_doctor(root, env, gfx, rocm):
    r = root.run("doctor", "--env", env, "--json", "--timeout", "30", timeout=600)
    doc = json.loads(r.stdout or "{}")
    rows = {}
    for c in doc.get("static", []):
        rows.setdefault(c["check"], c)
    row = rows.get("ROCm in use", {})
    check(f"{env}: doctor names the ROCm in use", row.get("status") == "OK" and
          f"(rocm-debian {rocm})" in row.get("detail", ""),
          row or (r.returncode, r.stdout[-800:], r.stderr[-800:]))
    row = rows.get("rocBLAS Tensile files", {})
    tensile = row.get("detail", "").split(" (from ")[0]
    check(f"{env}: doctor reads rocBLAS's Tensile file for {gfx}", row.get("status") == "OK" and
          tensile.endswith(f"/library/TensileLibrary_lazy_{gfx}.dat") and
          "/rocm-debian/" in tensile and pathlib.Path(tensile).is_file(), row)
    row = rows.get("hipBLASLt kernels", {})
    detail = row.get("detail", "")
    check(f"{env}: doctor reads hipBLASLt's kernels for {gfx}", row.get("status") == "OK" and
          "/hipblaslt/library/" in detail and gfx in pathlib.Path(detail).name and
          pathlib.Path(detail).is_file(), row)
    row = rows.get("libraries load", {})
    check(f"{env}: doctor finds every library's needs", row.get("status") == "OK", row)


def install_stack(tmp, name, fixture, gfx, rocm, other, recipes, glibc, zluda_lib=None):
    """One machine: its own root, the stack installed and checked, the root
    removed after.  Returns ZLUDA's build folder when it made one."""
    m = machine(tmp, fixture, glibc)
    root = Root(tmp / f"root-{name}", recipes, m)
    r = root.run("detect", "--json")
    libc = json.loads(r.stdout or "{}").get("glibc") or {}
    check(f"{name}: the machine's glibc is read from its libc.so.6",
          libc.get("version") == glibc_version() and "libc.so.6" in (libc.get("source") or ""),
          (libc, glibc_version()))
    for env in ("libs", name):
        root.run("env", "create", env)
    zluda_built = zluda_lib is None
    if zluda_built:
        # ZLUDA's stand-in is linked against the libraries of this first set.
        r = timed(f"{name}: install rocm-debian", lambda: root.run(
            "install", "--env", "libs", "rocm-debian", "--yes"))
        check(f"{name}: Debian's set installs on its own", r.returncode == 0, r.stderr[-2000:])
        rocm_lib = root.view("libs") / "rocm-debian" / LIBDIR
        zluda_lib = build_zluda(tmp, rocm_lib)
        libtorch = build_libtorch(tmp, zluda_lib)
        stand_in_recipes(recipes, SRV, WWW, zluda_lib, libtorch)
    # rocm-debian named: for gfx1201 the built-in recipes' TheRock 10.0.0
    # tarball (pinned, newer) would win, and it is not on 127.0.0.1.
    r = timed(f"{name}: install pytorch-cuda-stack", lambda: root.run(
        "install", "--env", name, "pytorch-cuda-stack", "rocm-debian", "--yes"))
    have = root.listing(name)
    check(f"{name}: cfapkg install pytorch-cuda-stack succeeds", r.returncode == 0,
          r.stdout[-1500:] + r.stderr[-2000:])
    check(f"{name}: Debian's {rocm} set, ZLUDA and LibTorch",
          have.get("rocm-debian") == rocm and have.get("zluda") == "6" and
          have.get("libtorch-cuda") == "2.3.0+cu118", have)
    check(f"{name}: the plan says why not {other}", f"rocm-debian {other}" in r.stdout, r.stdout)
    if r.returncode == 0:
        view = root.view(name)
        libs = sorted(p for p in (view / "zluda").iterdir() if not p.is_symlink())
        libs.append(view / "libtorch-cuda" / "lib" / "libtorch_cuda.so")
        for lib in libs:
            resolved = check_trace(root, name, lib, glibc, loader_trace(root, name, lib, glibc))
            if lib.name == "libcuda.so":
                check(f"{name}: libcuda.so's HIP runtime is the set's",
                      f"/rocm-debian/{LIBDIR}/" in resolved.get("libamdhip64.so", ""), resolved)
        if zluda_built:
            check_trace_checks(root, name, glibc, root.view("libs") / "rocm-debian" / LIBDIR)
        check_doctor(root, name, gfx, rocm)
    shutil.rmtree(root.path, ignore_errors=True)
    return zluda_lib


# --- refusals ------------------------------------------------------------



def depends_names(depends):
    """Every package name a Depends field mentions (alternatives too)."""
    return {re.split(r"[\s(:]", alt.strip())[0] for clause in (depends or "").split(",")
            for alt in clause.split("|") if alt.strip()}


class Small:
    """A small real set of sid's: comgr and its closure in the full recipe,
    less comgr's LLVM (the package name and its library's soname major read
    from comgr's Depends), which is what a real install was found lacking."""

    def __init__(self, version):
        self.pins = version["sources"]["linux-x86_64"]["apt"]["packages"]
        self.requires = version["requires"]
        by_name = {p["name"]: p for p in self.pins}
        self.llvm = next(n for n in depends_names(by_name["libamd-comgr3"]["depends"])
                         if re.fullmatch(r"libllvm\d+", n))
        self.soname = "libLLVM.so." + self.llvm[len("libllvm"):]
        todo, self.names = ["libamd-comgr3"], set()
        while todo:
            name = todo.pop()
            if name in self.names or name not in by_name or name == self.llvm:
                continue
            self.names.add(name)
            todo += depends_names(by_name[name].get("depends"))


def small_recipe(folder, url, small, depends=True):
    """A recipe of the small set, as pinned by the full recipe."""
    chosen = [dict(p) for p in small.pins if p["name"] in small.names]
    for p in chosen if not depends else []:
        p.pop("depends", None)
    folder.mkdir(parents=True, exist_ok=True)
    recipe = {"format": 1, "name": "comgr-alone", "summary": "comgr without its LLVM",
              "versions": [{"version": "1", "os": ["linux"], "requires": small.requires,
                            "sources": {"linux-x86_64": {"apt": {
                                "repository": url, "suite": "sid", "component": "main",
                                "packages": chosen}}},
                            "runtime": {"path": [LIBDIR]}}]}
    (folder / "comgr-alone.json").write_text(json.dumps(recipe, indent=1))


def nothing_installed(root):
    store = root / "store"
    return not (root / "envs" / "default" / "current").exists() and not (
        store.exists() and any(p.name.startswith("comgr-alone") for p in store.iterdir()))


def refuse_tampered(tmp, small, m):
    def flip(dst):
        deb = next(dst.glob("pool/**/libzstd1_*.deb"))
        data = bytearray(deb.read_bytes())
        data[len(data) // 2] ^= 0xFF
        deb.unlink()
        deb.write_bytes(data)

    serve_repo(WWW, "tampered", flip)
    recipes = tmp / "recipes-tampered"
    small_recipe(recipes, SRV.url("tampered"), small, depends=False)
    root = tmp / "root-tampered"
    r = Root(root, recipes, m).run("install", "comgr-alone", "--yes", "--retries", "0")
    check("a tampered .deb is refused, naming it", r.returncode != 0 and "libzstd1_" in r.stderr,
          r.stderr[-1500:])
    check("and nothing is installed", nothing_installed(root))


def refuse_open_closure(tmp, small, m):
    recipes = tmp / "recipes-open"
    small_recipe(recipes, SRV.url("debian"), small)
    r = Root(tmp / "root-open", recipes, m).run("plan", "comgr-alone")
    check("a set whose Depends name a package it lacks is refused as a recipe",
          r.returncode != 0 and "libamd-comgr3" in r.stderr and small.llvm in r.stderr,
          r.stderr[-1500:])
    small_recipe(recipes, SRV.url("debian"), small, depends=False)
    root = tmp / "root-open"
    r = Root(root, recipes, m).run("install", "comgr-alone", "--yes")
    check("a set that cannot load is refused, naming the library, the name and the package",
          r.returncode != 0 and "libamd_comgr.so." in r.stderr and small.soname in r.stderr
          and small.llvm in r.stderr, r.stderr[-1500:])
    check("and nothing is installed", not (root / "envs" / "default" / "current").exists())
    # The same set on a machine whose own libraries hold the missing name:
    # it installs, and says it works here only.
    needed = re.search(r"needs (libLLVM\.so\.[0-9.]+),", r.stderr)
    own = pathlib.Path(m) / LIBDIR / (needed.group(1) if needed else small.soname)
    own.write_bytes(b"\x7fELF this machine's own copy\n")
    try:
        r = Root(root, recipes, m).run("install", "comgr-alone", "--yes")
    finally:
        own.unlink()
    check("a set that loads only with this machine's own library installs, and says so",
          r.returncode == 0 and "cfapkg: warning: " in r.stderr and small.soname in r.stderr and
          "only this system provides" in r.stderr, r.stderr[-1500:])


DEBIAN_KEYRING = "/usr/share/keyrings/debian-archive-keyring.gpg"
# Of the keys in debian-archive-keyring: the archive's automatic signing
# key of Debian 13, which signs sid's InRelease, and the Stable Release
# Key of Debian 12, which does not.
TRIXIE_ARCHIVE_KEY = "04B54C3CDCA79751B16BC6B5225629DF75B188BD"
BOOKWORM_RELEASE_KEY = "4D64FEC119C2029067D6E791F8D2585B8783D481"


def signed_recipe(folder, url, fingerprint):
    """One package of sid's real index, trusted by Debian's key as apt does."""
    folder.mkdir(parents=True, exist_ok=True)
    recipe = {"format": 1, "name": "zstd-signed", "summary": "libzstd1 by Debian's key",
              "versions": [{"version": "1", "os": ["linux"],
                            "sources": {"linux-x86_64": {"apt": {
                                "repository": url, "suite": "sid", "component": "main",
                                "signed_by": {"fingerprint": fingerprint,
                                              "keyring": DEBIAN_KEYRING},
                                "packages": ["libzstd1"]}}}}]}
    (folder / "zstd-signed.json").write_text(json.dumps(recipe, indent=1))


def refuse_by_key(tmp, small, m):
    """sid's real InRelease, checked by gpgv against Debian's own keyring:
    pinned to a key of the keyring that did not sign it, it is refused as
    signed by another key; pinned to the key that did, the signature is
    good and the file is refused only as past its Valid-Until (the cached
    set is weeks old), which no older copy could escape either."""
    for name, fpr, said in (
            ("other-key", BOOKWORM_RELEASE_KEY, f"not by the pinned {BOOKWORM_RELEASE_KEY}"),
            ("expired", TRIXIE_ARCHIVE_KEY, "(Valid-Until)")):
        recipes = tmp / f"recipes-{name}"
        signed_recipe(recipes, SRV.url("debian"), fpr)
        root = tmp / f"root-{name}"
        r = Root(root, recipes, m).run("install", "zstd-signed", "--yes", "--retries", "0")
        check(f"sid's real InRelease pinned to {name}: refused, saying why",
              r.returncode == 9 and "dists/sid/InRelease" in r.stderr and said in r.stderr,
              (r.returncode, r.stderr[-1500:]))
        check(f"{name}: nothing is installed and no InRelease is recorded",
              not (root / "envs" / "default" / "current").exists() and
              not list((root / "apt" / "releases").glob("*/state.json")))


# Each refusal: a repository or recipe that is not what was pinned, and
# nothing installed after; each is called as fn(tmp, small, machine).  A
# replayed older InRelease needs one accepted first, which the cached real
# files (past their Valid-Until) cannot be: tests/test_apt_signed.py
# refuses it on a repository signed by a key made there.
REFUSALS = [refuse_tampered, refuse_open_closure, refuse_by_key]


def main():
    global SRV, WWW, SRCDIR
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="cfapkg-debstack-"))
    SRV = None
    try:
        SRCDIR = tmp / "c-sources"
        SRCDIR.mkdir()
        WWW = tmp / "www"
        WWW.mkdir()
        SRV = Nginx(WWW, tmp / "nginx")
        serve_repo(WWW, "debian")
        recipes = tmp / "recipes"
        rocm = write_rocm_recipe(recipes, SRV.url("debian"))
        versions = {v["version"]: v for v in rocm["versions"]}
        # Each version of the recipe is one suite's set.
        suite = {v["sources"]["linux-x86_64"]["apt"]["suite"]: k for k, v in versions.items()}
        sid, exp = suite["sid"], suite["experimental"]
        check_against_apt(versions, sid, exp)
        glibc = tmp / "glibc"
        subprocess.run(["dpkg-deb", "-x", str(deb_of("libc6")), str(glibc)], check=True)
        zluda = install_stack(tmp, "gfx1100", "rx7900xtx", "gfx1100", sid, exp, recipes, glibc)
        install_stack(tmp, "gfx1201", "rx9070xt", "gfx1201", exp, sid, recipes, glibc, zluda)
        m = machine(tmp, "rx7900xtx", glibc)
        small = Small(versions[sid])
        for refusal in REFUSALS:
            timed(refusal.__name__, lambda: refusal(tmp, small, m))
    finally:
        if SRV:
            SRV.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    for what, secs in timings:
        print(f"time: {what}: {secs:.1f} s")
    return check.report()


if __name__ == "__main__":
    sys.exit(main())
