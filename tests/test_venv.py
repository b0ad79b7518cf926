#!/usr/bin/env python3
"""ZLUDA staged into Python environments, against nginx on 127.0.0.1
serving ZLUDA stand-ins: real venvs made by 'python3 -m venv', each holding
a torch package laid out as a real wheel of its CUDA build has it
(+cu118: the CUDA DLLs in torch/lib under Windows names; +cu126 and
+cu130: libtorch_cuda.so finding the nvidia-* wheels' libraries by its
DT_RPATH, built here with gcc as small libraries with the real sonames).
Checked: the names staged, the wheel's files kept and put back byte for
byte, verify seeing a changed or missing staged file, an install and a
rollback staging the venv again, a second environment pinned to another
ZLUDA, refusals (a torch whose cuBLAS no ZLUDA names, a CPU build, the
other OS), and, by loading: that ZLUDA first on LD_LIBRARY_PATH does not
replace a library an RPATH names, and that the staged one is what
libtorch_cuda.so gets.  The PyTorch probe of 'doctor --venv' runs against
a stand-in torch package whose GPU matmul goes through the loaded cuBLAS."""
import hashlib
import io
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tarfile
import zipfile

import channel
import harness

BIN = sys.argv[1]
check = harness.Checks()
WINDOWS = bool(harness.EMULATOR)
FACTS = ["--gpu", "gfx1200", "--arch", "x86_64"]
PY = "python3.%d" % sys.version_info[1]

# The Windows CUDA DLLs of torch 2.3.0+cu118's torch/lib (and the rest of
# the CUDA part), as the wheel names them.
CU118_LIB = ["torch_cuda.dll", "c10_cuda.dll", "torch_cpu.dll", "caffe2_nvrtc.dll",
             "cublas64_11.dll", "cublasLt64_11.dll", "cudart64_110.dll", "cudnn64_8.dll",
             "cufft64_10.dll", "cufftw64_10.dll", "curand64_10.dll", "cusolver64_11.dll",
             "cusparse64_11.dll", "nvrtc64_112_0.dll", "nvrtc-builtins64_118.dll",
             "nvToolsExt64_1.dll", "zlibwapi.dll"]
# vosen's ZLUDA on Windows: the versioned names themselves.
VOSEN_DLLS = ["nvcuda.dll", "nvml.dll", "cublas64_11.dll", "cublas64_12.dll", "cublas64_13.dll",
              "cublasLt64_11.dll", "cublasLt64_12.dll", "cublasLt64_13.dll", "cusparse64_10.dll",
              "cusparse64_11.dll", "cusparse64_12.dll", "cufft64_10.dll", "cufft64_11.dll",
              "cufft64_12.dll", "cudnn64_8.dll", "cudnn64_9.dll"]
# ... and on Linux: one file per library, the sonames as links to it.
VOSEN_SOS = {"libcuda.so": ["libcuda.so.1"], "libnvidia-ml.so": ["libnvidia-ml.so.1"],
             "libcublas.so": ["libcublas.so.11", "libcublas.so.12", "libcublas.so.13"],
             "libcublasLt.so": ["libcublasLt.so.11", "libcublasLt.so.12", "libcublasLt.so.13"],
             "libcusparse.so": ["libcusparse.so.10", "libcusparse.so.11", "libcusparse.so.12"],
             "libcufft.so": ["libcufft.so.10", "libcufft.so.11", "libcufft.so.12"],
             "libcudnn.so": ["libcudnn.so.9"]}

# A wheel's CUDA library, or ZLUDA's, as a small shared library: it says
# whose it is, and cuBLAS multiplies (ZLUDA's "broken" build adds 0.5).
LIB_C = r"""
#define CAT(a, b) a##b
#define NAME(f) CAT(standin_, f)
const char *NAME(FAMILY)(void) { return WHO; }
#ifdef GEMM
void standin_sgemm(int n, const float *a, const float *b, float *c)
{
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++) {
			float s = 0;
			for (int k = 0; k < n; k++)
				s += a[i * n + k] * b[k * n + j];
			c[i * n + j] = s + BIAS;
		}
}
#endif
#ifdef DEVICE
const char *standin_device(void) { return DEVICE; }
#endif
"""
# libtorch_cuda.so: NEEDs the CUDA libraries by soname; the driver it
# opens by name at run time, as the CUDA runtime does.
TORCH_C = r"""
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
extern const char *standin_cublas(void), *standin_cublaslt(void), *standin_cusparse(void),
	*standin_cufft(void), *standin_cudnn(void), *standin_cudart(void);
extern void standin_sgemm(int, const float *, const float *, float *);
const char *torch_which(const char *f)
{
	return !strcmp(f, "cublas") ? standin_cublas() : !strcmp(f, "cublaslt") ? standin_cublaslt()
	     : !strcmp(f, "cusparse") ? standin_cusparse() : !strcmp(f, "cufft") ? standin_cufft()
	     : !strcmp(f, "cudnn") ? standin_cudnn() : standin_cudart();
}
int torch_device(char *name, int len)
{
	void *h = dlopen("libcuda.so.1", RTLD_NOW);
	const char *(*dev)(void) = h ? (const char *(*)(void))dlsym(h, "standin_device") : NULL;
	if (!dev)
		return 0;
	snprintf(name, (size_t)len, "%s", dev());
	return 1;
}
void torch_sgemm(int n, const float *a, const float *b, float *c) { standin_sgemm(n, a, b, c); }
"""
# A torch package for the probe: the API surface it uses, the GPU half
# going through libtorch_cuda.so (and so through whichever cuBLAS loaded).
TORCH_INIT = r'''
import ctypes, os, random
from . import version
from .version import __version__
_lib = ctypes.CDLL(os.path.join(os.path.dirname(__file__), "lib", "libtorch_cuda.so"))

class _Cuda:
    def _name(self):
        buf = ctypes.create_string_buffer(256)
        return buf.value.decode() if _lib.torch_device(buf, 256) else None
    def is_available(self):
        return self._name() is not None
    def init(self):
        raise RuntimeError("Found no NVIDIA driver on your system")
    def device_count(self):
        return 1
    def get_device_name(self, i=0):
        return self._name()
    def synchronize(self):
        pass
cuda = _Cuda()

class Generator:
    def manual_seed(self, n):
        self.r = random.Random(n)
        return self

class Tensor:
    def __init__(self, v, n, dev="cpu"):
        self.v, self.n, self.dev = v, n, dev
    def to(self, dev):
        return Tensor(self.v, self.n, dev)
    def __matmul__(self, o):
        n = self.n
        if self.dev == "cuda":
            arr = ctypes.c_float * (n * n)
            c = arr()
            _lib.torch_sgemm(n, arr(*self.v), arr(*o.v), c)
            return Tensor(list(c), n, "cuda")
        return Tensor([sum(self.v[i * n + k] * o.v[k * n + j] for k in range(n))
                       for i in range(n) for j in range(n)], n)
    def __sub__(self, o):
        return Tensor([a - b for a, b in zip(self.v, o.v)], self.n)
    def abs(self):
        return Tensor([abs(a) for a in self.v], self.n)
    def max(self):
        return Tensor([max(self.v)], 1)
    def item(self):
        return self.v[0]

def randn(r, c, generator):
    return Tensor([generator.r.gauss(0, 1) for _ in range(r * c)], r)
'''


def gcc(out, src, *args):
    r = subprocess.run(["gcc", "-shared", "-fPIC", "-o", str(out), "-x", "c", "-", *args],
                       input=src, text=True, capture_output=True, timeout=120)
    if r.returncode:
        raise RuntimeError(r.stderr)


def standin(out, family, who, soname=None, bias="0.0f", device=None):
    args = [f"-DFAMILY={family}", f'-DWHO="{who}"']
    if family == "cublas":
        args += ["-DGEMM", f"-DBIAS={bias}"]
    if device:
        args.append(f'-DDEVICE="{device}"')
    if soname:
        args.append(f"-Wl,-soname,{soname}")
    gcc(out, LIB_C, *args)


def family_of(name):
    base = name.split(".so")[0][3:]
    return {"cuda": "cuda", "nvidia-ml": "nvml"}.get(base, base.lower())


def zluda_linux(tag, bias):
    """vosen's Linux tarball, stand-ins: one file per library without a
    soname, the sonames as symbolic links to it."""
    buf = io.BytesIO()
    tmp = pathlib.Path(WORK) / f"zl-{tag}"
    tmp.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=buf, mode="w:gz") as t:
        for real, links in sorted(VOSEN_SOS.items()):
            fam = family_of(real)
            standin(tmp / real, fam, f"zluda {tag} {fam}", bias=bias,
                    device=f"AMD Radeon RX 9060 XT [ZLUDA {tag}]" if fam == "cuda" else None)
            t.add(tmp / real, f"zluda/{real}")
            for link in links:
                info = tarfile.TarInfo(f"zluda/{link}")
                info.type, info.linkname = tarfile.SYMTYPE, real
                t.addfile(info)
    return buf.getvalue()


def zluda_windows(tag, names):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name in names + ["zluda.exe"]:
            z.writestr(f"zluda/{name}", f"zluda {tag} {name}\n".encode())
    return buf.getvalue()


def source(url, data, fmt):
    return {"url": url, "sha256": hashlib.sha256(data).hexdigest(), "size": len(data),
            "format": fmt, "strip": 1}


def write_channel(tmp, srv):
    www, recipes = tmp / "www", tmp / "recipes"
    recipes.mkdir()
    versions = []
    cublas = ["cublas = 11", "cublas = 12", "cublas = 13"]
    for tag, bias in (("7-preview.10", "0.0f"), ("6-preview.69", "0.0f"), ("6-preview.70", "0.5f")):
        lin, win = zluda_linux(tag, bias), zluda_windows(tag, VOSEN_DLLS)
        (www / f"z{tag}.tar.gz").write_bytes(lin)
        (www / f"z{tag}.zip").write_bytes(win)
        versions.append({"version": tag, "provides": ["cuda-driver-api"] + cublas,
                         "sources": {"linux-x86_64": source(srv.url(f"z{tag}.tar.gz"), lin, "tar.gz"),
                                     "windows-x86_64": source(srv.url(f"z{tag}.zip"), win, "zip")},
                         "launcher": "zluda.exe", "runtime": {"path": ["."]}})
    # A build of the time before CUDA 11 names (v6-preview.28 to .59).
    old = zluda_windows("6-preview.30", [n for n in VOSEN_DLLS if "_11" not in n])
    (www / "zold.zip").write_bytes(old)
    versions.append({"version": "6-preview.30", "provides": ["cuda-driver-api"] + cublas[1:],
                     "sources": {"windows-x86_64": source(srv.url("zold.zip"), old, "zip")},
                     "runtime": {"path": ["."]}})
    # lshqqytiger's builds: unversioned names, laid out as ComfyUI-Zluda
    # renames them, and a ZLUDA nvrtc.
    lsh = zluda_windows("3.9.5", ["nvcuda.dll", "nvml.dll", "cublas.dll", "cusparse.dll",
                                  "cufft.dll", "cufftw.dll", "nvrtc.dll"])
    (www / "zlsh.zip").write_bytes(lsh)
    versions.append({"version": "3.9.5", "provides": ["cuda-driver-api", "cublas = 11"],
                     "sources": {"windows-x86_64": source(srv.url("zlsh.zip"), lsh, "zip")},
                     "layout": [{"path": f"{a}.dll", "as": f"{b}.dll"} for a, b in
                                (("cublas", "cublas64_11"), ("cusparse", "cusparse64_11"),
                                 ("cufft", "cufft64_10"), ("cufftw", "cufftw64_10"),
                                 ("nvrtc", "nvrtc64_112_0"))],
                     "runtime": {"path": ["."]}})
    zluda = {"format": 1, "name": "zluda", "summary": "test ZLUDA", "versions": versions}
    # LibTorch with NVIDIA's own cuBLAS at its top: never a source.
    lt = zluda_windows("libtorch", ["cublas64_11.dll", "c10.dll"])
    (www / "lt.zip").write_bytes(lt)
    libtorch = {"format": 1, "name": "libtorch-cuda", "summary": "test LibTorch", "versions": [
        {"version": "2.3.0+cu118", "requires": ["cuda-driver-api"],
         "sources": {"windows-x86_64": source(srv.url("lt.zip"), lt, "zip")},
         "runtime": {"path": ["."]}}]}
    for r in (zluda, libtorch):
        (recipes / f"{r['name']}.json").write_text(json.dumps(r, indent=1))
    return recipes


def make_venv(path):
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(path)], check=True,
                   timeout=120)
    site = path / "lib" / PY / "site-packages"
    check(f"python3 -m venv made {path.name}", site.is_dir(), site)
    return site


def version_py(torch, version, cuda):
    torch.mkdir(parents=True, exist_ok=True)
    (torch / "version.py").write_text(
        "from typing import Optional\n\n"
        "__all__ = ['__version__', 'debug', 'cuda', 'git_version', 'hip']\n"
        f"__version__ = '{version}'\ndebug = False\n"
        f"cuda: Optional[str] = {repr(cuda) if cuda else 'None'}\n"
        "git_version = '0123456789abcdef0123456789abcdef01234567'\n"
        "hip: Optional[str] = None\n")


def windows_venv(path, version="2.3.0+cu118", cuda="11.8", libs=CU118_LIB):
    torch = make_venv(path) / "torch"
    version_py(torch, version, cuda)
    (torch / "lib").mkdir()
    for name in libs:
        (torch / "lib" / name).write_bytes(f"nvidia {name}\n".encode() + os.urandom(64))
    return torch


def linux_venv(path, version, cuda, wheels, rpath):
    """wheels: {folder under site-packages: [soname, ...]}; libtorch_cuda.so
    NEEDs each soname and has rpath as its DT_RPATH."""
    site = make_venv(path)
    torch = site / "torch"
    version_py(torch, version, cuda)
    (torch / "lib").mkdir()
    links = []
    for folder, names in wheels.items():
        d = site / folder
        d.mkdir(parents=True)
        for so in names:
            standin(d / so, family_of(so), f"nvidia {so}", soname=so)
            links += [f"-L{d}", f"-l:{so}"]
    gcc(torch / "lib" / "libtorch_cuda.so", TORCH_C, "-Wl,--no-as-needed", *links, "-ldl",
        f"-Wl,--disable-new-dtags,-rpath,{rpath}")
    (torch / "__init__.py").write_text(TORCH_INIT)
    return torch


def tree(path):
    """Every file below path and its bytes (links as their target text)."""
    out = {}
    for p in sorted(pathlib.Path(path).rglob("*")):
        if p.is_symlink():
            out[str(p.relative_to(path))] = b"->" + os.readlink(p).encode()
        elif p.is_file():
            out[str(p.relative_to(path))] = p.read_bytes()
    return out


def which(torch, family, ld=None, preload=None):
    """What libtorch_cuda.so gets for a library, loaded by a fresh Python
    with ctypes, as torch itself loads it."""
    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)
    if ld:
        env["LD_LIBRARY_PATH"] = str(ld)
    if preload:
        env["LD_PRELOAD"] = preload
    code = ("import ctypes,sys; l=ctypes.CDLL(sys.argv[1]); l.torch_which.restype=ctypes.c_char_p;"
            "print(l.torch_which(sys.argv[2].encode()).decode())")
    r = subprocess.run([sys.executable, "-c", code, str(torch / "lib" / "libtorch_cuda.so"),
                        family], capture_output=True, text=True, env=env, timeout=60)
    return r.stdout.strip() or r.stderr.strip()


def staged_json(root, *args, env=None):
    r = root.run("stage", *args, "--json", env=env)
    try:
        return r, json.loads(r.stdout)
    except json.JSONDecodeError:
        return r, {}


def test_cu118(root, tmp):
    venv = tmp / "cu118"
    torch = windows_venv(venv)
    before = tree(venv)
    r, doc = staged_json(root, "--env", "win", "--venv", str(venv))
    placed = sorted(p["path"].split("/")[-1] for p in doc.get("placed", []))
    check("cu118: the names torch loads that ZLUDA ships are staged, and only those",
          r.returncode == 0 and placed == ["cublas64_11.dll", "cublasLt64_11.dll", "cudnn64_8.dll",
                                           "cufft64_10.dll", "cusparse64_11.dll"],
          r.stderr + str(placed))
    check("cu118: what is left to the wheel is named",
          sorted(doc.get("left", [])) == ["cufftw64_10.dll", "nvrtc64_112_0.dll"], doc.get("left"))
    lib = torch / "lib"
    check("cu118: a staged DLL has ZLUDA's bytes under the wheel's name",
          (lib / "cublas64_11.dll").read_bytes() == b"zluda 7-preview.10 cublas64_11.dll\n")
    check("cu118: the wheel's file is kept beside it",
          (lib / "cublas64_11.dll.cfapkg-saved").read_bytes() ==
          before[f"lib/{PY}/site-packages/torch/lib/cublas64_11.dll"])
    check("cu118: a staged file is writable, as the wheel's was (pip can replace it), though "
          "the store's is read-only", (lib / "cublas64_11.dll").stat().st_mode & 0o200)
    check("cu118: LibTorch's own NVIDIA cuBLAS is never a source",
          b"libtorch" not in (lib / "cublas64_11.dll").read_bytes())
    r = root.run("verify", "--env", "win")
    check("verify: a freshly staged venv is whole", r.returncode == 0, r.stderr)
    record = json.loads((venv / ".cfapkg-staged.json").read_text())
    froms = {f["name"].split("/")[-1]: f["from"].replace("\\", "/") for f in record["files"]}
    link = "/envs/win/active/view/zluda/" if not WINDOWS else "/envs/win/1/view/zluda/"
    check("the record names each source through the environment's stable path",
          record["env"] == "win" and record["venv"]["torch"] == "2.3.0+cu118" and
          all(link + n in froms[n] for n in placed), froms)
    (lib / "cusparse64_11.dll").write_bytes(b"changed by hand\n")
    (lib / "cufft64_10.dll").unlink()
    r = root.run("verify", "--env", "win")
    check("verify: a changed and a missing staged file are named",
          r.returncode == 9 and "cusparse64_11.dll changed since it was staged" in r.stderr and
          "cufft64_10.dll is missing" in r.stderr and "cfapkg stage --env win --venv" in r.stderr,
          r.stderr)
    r = root.run("stage", "--env", "win", "--venv", str(venv))
    check("staging again mends them", r.returncode == 0 and
          root.run("verify", "--env", "win").returncode == 0, r.stderr)
    r = root.run("unstage", str(venv))
    check("cu118: unstage puts the wheel back byte for byte (what was changed by hand too)",
          r.returncode == 0 and tree(venv) == before, sorted(set(tree(venv)) ^ set(before)))
    root.run("stage", "--env", "win", "--venv", str(venv))
    # pip installs another torch over the staged one: its files are the
    # wheel's now, and unstage gives them back, not the older ones.
    version_py(torch, "2.3.1+cu118", "11.8")
    (lib / "cublas64_11.dll").write_bytes(b"nvidia cublas64_11.dll of 2.3.1\n")
    newer = dict(before)
    for rel in ("version.py", "lib/cublas64_11.dll"):
        newer[f"lib/{PY}/site-packages/torch/{rel}"] = (torch / rel).read_bytes()
    r = root.run("stage", "--env", "win", "--venv", str(venv))
    check("a torch installed over a staged one: staged again",
          r.returncode == 0 and (lib / "cublas64_11.dll").read_bytes() ==
          b"zluda 7-preview.10 cublas64_11.dll\n", r.stderr)
    root.run("unstage", str(venv))
    after = tree(venv)
    check("... and unstage gives the newer wheel's file back",
          after[f"lib/{PY}/site-packages/torch/lib/cublas64_11.dll"] ==
          b"nvidia cublas64_11.dll of 2.3.1\n" and after == newer,
          sorted(k for k in set(after) | set(newer) if after.get(k) != newer.get(k)))
    # Back to the first torch's files (only torch's own: bin/python is a
    # link to this interpreter).
    for rel in ("version.py", "lib/cublas64_11.dll"):
        (torch / rel).write_bytes(before[f"lib/{PY}/site-packages/torch/{rel}"])
    check("unstage forgets the venv: verify has nothing of it",
          root.run("verify", "--env", "win").returncode == 0)
    return venv, before


def test_switching_windows(root, venv, before):
    """An install and a rollback stage the venv again; a second
    environment pinned to another ZLUDA takes it over."""
    lib = next(venv.rglob("torch/lib"))
    root.run("stage", "--env", "win", "--venv", str(venv))
    r = root.run("install", "--env", "win", "zluda==6-preview.69", *FACTS, "--os", "windows",
                 "--yes")
    check("an install stages the venv again, and says so", r.returncode == 0 and
          (lib / "cublas64_11.dll").read_bytes() == b"zluda 6-preview.69 cublas64_11.dll\n" and
          venv.name in r.stderr, r.stderr)
    r = root.run("rollback", "--env", "win")
    check("a rollback stages it again", r.returncode == 0 and
          (lib / "cublas64_11.dll").read_bytes() == b"zluda 7-preview.10 cublas64_11.dll\n",
          r.stderr)
    r = root.run("stage", "--env", "pinned", "--venv", str(venv))
    check("a second environment pinned to another ZLUDA switches it", r.returncode == 0 and
          (lib / "cublas64_11.dll").read_bytes() == b"zluda 6-preview.69 cublas64_11.dll\n",
          r.stderr)
    root.run("install", "--env", "win", "zluda==6-preview.69", *FACTS, "--os", "windows", "--yes")
    check("... and the first environment's installs no longer touch it",
          (lib / "cublas64_11.dll").read_bytes() == b"zluda 6-preview.69 cublas64_11.dll\n")
    r = root.run("unstage", "--venv", str(venv))
    check("unstage after two environments still gives the wheel's bytes",
          r.returncode == 0 and tree(venv) == before, sorted(set(tree(venv)) ^ set(before)))


def test_nvrtc(root, tmp):
    """lshqqytiger's ZLUDA: its nvrtc takes the wheel's name, and the
    wheel's own nvrtc goes to nvrtc_cuda.dll, which ZLUDA's loads."""
    venv = tmp / "cu118-lsh"
    torch = windows_venv(venv)
    before = tree(venv)
    r, doc = staged_json(root, "--env", "lsh", "--venv", str(venv))
    lib = torch / "lib"
    check("nvrtc: ZLUDA's nvrtc has the wheel's name",
          r.returncode == 0 and (lib / "nvrtc64_112_0.dll").read_bytes() ==
          b"zluda 3.9.5 nvrtc.dll\n", r.stderr)
    check("nvrtc: the wheel's nvrtc is there as nvrtc_cuda.dll",
          (lib / "nvrtc_cuda.dll").read_bytes() ==
          before[f"lib/{PY}/site-packages/torch/lib/nvrtc64_112_0.dll"])
    check("nvrtc: ComfyUI-Zluda's renames (cublas.dll as cublas64_11.dll, cufftw.dll ...)",
          (lib / "cufftw64_10.dll").read_bytes() == b"zluda 3.9.5 cufftw.dll\n" and
          (lib / "cublas64_11.dll").read_bytes() == b"zluda 3.9.5 cublas.dll\n")
    r = root.run("stage", "--env", "lsh", "--venv", str(venv))
    check("nvrtc: staging twice keeps the wheel's nvrtc as nvrtc_cuda.dll (not ZLUDA's)",
          r.returncode == 0 and (lib / "nvrtc_cuda.dll").read_bytes() ==
          before[f"lib/{PY}/site-packages/torch/lib/nvrtc64_112_0.dll"])
    r = root.run("stage", "--env", "win", "--venv", str(venv))
    check("nvrtc: a ZLUDA without nvrtc gives the wheel's nvrtc back, and drops nvrtc_cuda.dll",
          r.returncode == 0 and not (lib / "nvrtc_cuda.dll").exists() and
          (lib / "nvrtc64_112_0.dll").read_bytes() ==
          before[f"lib/{PY}/site-packages/torch/lib/nvrtc64_112_0.dll"], r.stdout + r.stderr)
    root.run("unstage", str(venv))
    check("nvrtc: unstage restores every byte", tree(venv) == before)


def test_refusals(root, tmp):
    venv = tmp / "cu118-b"
    windows_venv(venv)
    before = tree(venv)
    r = root.run("stage", "--env", "old", "--venv", str(venv))
    check("a ZLUDA without the CUDA 11 names is refused, naming the versions that have them",
          r.returncode == 6 and "cublas64_11.dll" in r.stderr and "7-preview.10" in r.stderr and
          "3.9.5" in r.stderr and tree(venv) == before, r.stderr)
    v10 = tmp / "cu100"
    windows_venv(v10, "1.4.0+cu100", "10.0",
                 ["torch_cuda.dll", "cublas64_10.dll", "cusparse64_10.dll", "cufft64_10.dll"])
    r = root.run("stage", "--env", "win", "--venv", str(v10))
    check("a torch whose CUDA major no ZLUDA names is refused with the reason",
          r.returncode == 6 and "no ZLUDA version cfapkg knows provides cuBLAS 10" in r.stderr and
          "11, 12, 13" in r.stderr, r.stderr)
    cpu = tmp / "cpu"
    windows_venv(cpu, "2.3.0+cpu", None, ["torch_cpu.dll", "c10.dll"])
    r = root.run("stage", "--env", "win", "--venv", str(cpu))
    check("a CPU build is refused", r.returncode == 6 and "CPU build" in r.stderr, r.stderr)
    none = tmp / "empty"
    make_venv(none)
    r = root.run("stage", "--env", "win", "--venv", str(none))
    check("a venv without torch is refused", r.returncode == 4 and "no torch package" in r.stderr,
          r.stderr)
    r = root.run("stage", "--env", "lin", "--venv", str(venv))
    check("a Windows wheel and an environment made for Linux: refused",
          r.returncode == 2 and "Windows build" in r.stderr and tree(venv) == before, r.stderr)
    r = root.run("stage", "--env", "win", env={"VIRTUAL_ENV": str(venv)})
    check("stage in an active venv ($VIRTUAL_ENV) stages that venv",
          r.returncode == 0 and venv.name in r.stdout, r.stdout + r.stderr)
    r = root.run("unstage", env={"VIRTUAL_ENV": str(venv)})
    check("... and unstage there undoes it", r.returncode == 0 and tree(venv) == before)


CU13 = "lib/python3.X/site-packages/nvidia/cu13/lib"


def cu130_venv(tmp):
    return linux_venv(tmp / "cu130", "2.11.0+cu130", "13.0", {
        "nvidia/cu13/lib": ["libcudart.so.13", "libcublas.so.13", "libcublasLt.so.13",
                            "libcusparse.so.12", "libcufft.so.12"],
        "nvidia/cudnn/lib": ["libcudnn.so.9"], "nvidia/cusparselt/lib": ["libcusparseLt.so.0"]},
        # The real wheel's DT_RPATH, read on the GPU test machine
        # (tests/gpu/venv_probe_real.sh).
        "$ORIGIN/../../nvidia/cudnn/lib:$ORIGIN/../../nvidia/nvshmem/lib:"
        "$ORIGIN/../../nvidia/nccl/lib:$ORIGIN/../../nvidia/cusparselt/lib:"
        "$ORIGIN/../../nvidia/cu13/lib:$ORIGIN")


def test_rpath(root, tmp):
    """The wheel's RPATH wins over LD_LIBRARY_PATH; staging into the folder
    it names is what replaces the library."""
    torch = cu130_venv(tmp)
    venv = tmp / "cu130"
    before = tree(venv)
    zluda = root.path / "envs" / "lin" / str(root.current("lin")) / "view" / "zluda"
    check("RPATH: the wheel's cuBLAS loads", which(torch, "cublas") == "nvidia libcublas.so.13",
          which(torch, "cublas"))
    check("RPATH: ZLUDA first on LD_LIBRARY_PATH does not replace it",
          which(torch, "cublas", ld=zluda) == "nvidia libcublas.so.13", which(torch, "cublas", ld=zluda))
    got = which(torch, "cublas", ld=zluda, preload="libcublas.so.13")
    check("RPATH: ZLUDA preloaded by soname (LD_PRELOAD=libcublas.so.13 found on "
          "LD_LIBRARY_PATH) is taken for the NEEDED name", got == "zluda 7-preview.10 cublas", got)
    r, doc = staged_json(root, "--env", "lin", "--venv", str(venv))
    placed = sorted(p["path"].replace(f"lib/{PY}/", "lib/python3.X/") for p in doc.get("placed", []))
    check("cu130: each library is staged into the folder its RPATH finds it in",
          r.returncode == 0 and placed == sorted(
              [f"{CU13}/libcublas.so.13", f"{CU13}/libcublasLt.so.13", f"{CU13}/libcusparse.so.12",
               f"{CU13}/libcufft.so.12",
               "lib/python3.X/site-packages/nvidia/cudnn/lib/libcudnn.so.9"]),
          r.stderr + str(placed))
    for fam in ("cublas", "cublaslt", "cusparse", "cufft", "cudnn"):
        check(f"cu130: libtorch_cuda.so now loads ZLUDA's {fam}",
              which(torch, fam) == f"zluda 7-preview.10 {fam}", which(torch, fam))
    check("cu130: the CUDA runtime stays NVIDIA's", which(torch, "cudart") == "nvidia libcudart.so.13")
    r = root.run("install", "--env", "lin", "zluda==6-preview.69", *FACTS, "--os", "linux", "--yes")
    check("cu130: an install stages it again: the new ZLUDA loads",
          r.returncode == 0 and which(torch, "cublas") == "zluda 6-preview.69 cublas", r.stderr)
    r = root.run("rollback", "--env", "lin")
    check("cu130: a rollback stages it again: the old ZLUDA loads",
          r.returncode == 0 and which(torch, "cublas") == "zluda 7-preview.10 cublas", r.stderr)
    r = root.run("stage", "--env", "linpinned", "--venv", str(venv))
    check("cu130: a second environment pinned to another ZLUDA: that one loads",
          r.returncode == 0 and which(torch, "cublas") == "zluda 6-preview.69 cublas", r.stderr)
    r = root.run("verify")
    check("verify follows the venv to its new environment", r.returncode == 0, r.stderr)
    os.unlink(next(venv.rglob("nvidia/cu13/lib/libcusparse.so.12")))
    r = root.run("verify", "--env", "linpinned")
    check("verify names a staged library that went missing",
          r.returncode == 9 and "libcusparse.so.12 is missing" in r.stderr, r.stderr)
    r = root.run("unstage", str(venv))
    check("cu130: unstage puts the wheel back byte for byte, and its cuBLAS loads again",
          r.returncode == 0 and tree(venv) == before and
          which(torch, "cublas") == "nvidia libcublas.so.13", sorted(set(tree(venv)) ^ set(before)))
    return torch, venv


def test_cu126(root, tmp):
    torch = linux_venv(tmp / "cu126", "2.7.1+cu126", "12.6", {
        "nvidia/cublas/lib": ["libcublas.so.12", "libcublasLt.so.12"],
        "nvidia/cuda_runtime/lib": ["libcudart.so.12"], "nvidia/cudnn/lib": ["libcudnn.so.9"],
        "nvidia/cufft/lib": ["libcufft.so.11"], "nvidia/cusparse/lib": ["libcusparse.so.12"]},
        "$ORIGIN/../../nvidia/cublas/lib:$ORIGIN/../../nvidia/cuda_runtime/lib:"
        "$ORIGIN/../../nvidia/cudnn/lib:$ORIGIN/../../nvidia/cufft/lib:"
        "$ORIGIN/../../nvidia/cusparse/lib:$ORIGIN")
    # A venv moved from one Python to another keeps the old folders: the
    # one that holds torch is taken, whatever order the listing gives.
    for old in ("python3.0", "python3.999", "python2.7"):
        (tmp / "cu126" / "lib" / old / "site-packages").mkdir(parents=True)
    before = tree(tmp / "cu126")
    r, doc = staged_json(root, "--env", "lin", "--venv", str(tmp / "cu126"))
    placed = sorted(p["path"].split("site-packages/")[-1] for p in doc.get("placed", []))
    check("cu126: one folder per nvidia-* wheel, each library staged into its own",
          r.returncode == 0 and placed == [
              "nvidia/cublas/lib/libcublas.so.12", "nvidia/cublas/lib/libcublasLt.so.12",
              "nvidia/cudnn/lib/libcudnn.so.9", "nvidia/cufft/lib/libcufft.so.11",
              "nvidia/cusparse/lib/libcusparse.so.12"], r.stderr + str(placed))
    check("cu126: libtorch_cuda.so loads ZLUDA's cuBLAS 12",
          which(torch, "cublas") == "zluda 7-preview.10 cublas", which(torch, "cublas"))
    root.run("unstage", str(tmp / "cu126"))
    check("cu126: unstage restores every byte", tree(tmp / "cu126") == before)


def probe(root, env, venv):
    r = root.run("doctor", "--env", env, "--venv", str(venv), "--json", "--timeout", "60")
    try:
        doc = json.loads(r.stdout)["venv"] or {}
    except (json.JSONDecodeError, KeyError, TypeError):
        return r, {}, {}
    return r, doc, {c["check"]: c for c in doc.get("checks", [])}


def test_doctor(root, torch, venv):
    """The probe's verdicts on the stand-ins (the real thing runs on the
    GPU test machine: tests/gpu/venv_probe_real.sh)."""
    root.run("stage", "--env", "lin", "--venv", str(venv))
    r, doc, c = probe(root, "lin", venv)
    check("doctor --venv: staged, the probe passes through the venv's own python",
          doc.get("ok") and c.get("device", {}).get("detail") ==
          "AMD Radeon RX 9060 XT [ZLUDA 7-preview.10]" and
          c.get("matmul", {}).get("status") == "OK" and doc.get("torch") == "2.11.0+cu130",
          r.stdout + r.stderr)
    cublas = [l["path"] for l in doc.get("loaded", []) if l["library"] == "cublas"]
    check("doctor --venv: it names the cuBLAS file the process loaded (the staged one)",
          len(cublas) == 1 and cublas[0].endswith("nvidia/cu13/lib/libcublas.so.13"), doc.get("loaded"))
    root.run("env", "create", "broken")
    root.run("install", "--env", "broken", "zluda==6-preview.70", *FACTS, "--os", "linux", "--yes")
    root.run("stage", "--env", "broken", "--venv", str(venv))
    r, doc, c = probe(root, "broken", venv)
    check("doctor --venv: a wrong matmul from the staged cuBLAS is WRONG RESULT naming cuBLAS, "
          "and the stack is not usable",
          c.get("matmul", {}).get("status") == "WRONG RESULT" and
          c.get("matmul", {}).get("library") == "cublas" and r.returncode == 1, c.get("matmul"))
    active = {"VIRTUAL_ENV": str(venv)}
    r = root.run("doctor", "--env", "broken", "--json", "--timeout", "60", env=active)
    got = json.loads(r.stdout or "{}").get("venv") or {}
    check("doctor in the active venv staged from the environment probes it",
          got.get("torch") == "2.11.0+cu130", r.stdout[-300:] + r.stderr)
    r = root.run("doctor", "--env", "lin", "--json", "--timeout", "60", env=active)
    check("... but not for another environment's doctor",
          "venv" in r.stdout and json.loads(r.stdout or "{}").get("venv") is None, r.stdout[-300:])
    r = root.run("doctor", "--env", "broken", "--venv", str(venv), "--timeout", "60")
    check("doctor --venv: the text says which library failed",
          "the library that failed: cuBLAS" in r.stdout, r.stdout)
    # A wheel's library neither ZLUDA nor a system has (a machine with a
    # CUDA toolkit in its loader cache has the others).
    lt = next(venv.rglob("nvidia/cusparselt/lib/libcusparseLt.so.0"))
    kept = lt.read_bytes()
    lt.unlink()
    r, doc, c = probe(root, "broken", venv)
    check("doctor --venv: a library that cannot be loaded fails the import, naming it",
          c.get("import torch", {}).get("status") == "FAILED" and
          c.get("import torch", {}).get("library") == "cusparselt" and
          "libcusparseLt.so.0" in c.get("import torch", {}).get("detail", ""), c.get("import torch"))
    lt.write_bytes(kept)
    root.run("unstage", str(venv))


def test_doctor_real(root, tmp):
    """The probe's output on the NVIDIA test machine's real CUDA torch,
    played back by a venv's python: what passes there reads as passed."""
    real = pathlib.Path(__file__).parent / "data" / "venv" / "h200-torch-2.11.0+cu130.txt"
    venv = tmp / "h200"
    linux_venv(venv, "2.11.0+cu130", "13.0", {"nvidia/cu13/lib": ["libcublas.so.13"]},
               "$ORIGIN/../../nvidia/cu13/lib")
    python = venv / "bin" / "python"
    python.unlink()
    python.write_text(f"#!/bin/sh\ncat '{real}'\n")
    python.chmod(0o755)
    r, doc, c = probe(root, "lin", venv)
    cublas = [l["path"] for l in doc.get("loaded", []) if l["library"] == "cublas"]
    check("doctor --venv: the real H200 torch's probe output reads as passed",
          doc.get("ok") is True and doc.get("torch") == "2.11.0+cu130" and
          c.get("device", {}).get("detail") == "NVIDIA H200" and
          c.get("matmul", {}).get("status") == "OK" and
          cublas == ["/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cu13/lib/"
                     "libcublas.so.13"], r.stdout + r.stderr)
    r = root.run("doctor", "--env", "lin", "--venv", str(venv), "--timeout", "60")
    check("... and its text names the files the process loaded",
          "NVIDIA H200" in r.stdout and "libcudnn.so.9" in r.stdout and "failed" not in r.stdout,
          r.stdout)


def envs(root):
    for name, os_name, pin in (("win", "windows", "7-preview.10"), ("pinned", "windows", "6-preview.69"),
                               ("old", "windows", "6-preview.30"), ("lsh", "windows", "3.9.5"),
                               ("lin", "linux", "7-preview.10"), ("linpinned", "linux", "6-preview.69")):
        root.run("env", "create", name)
        root.run("pin", "--env", name, f"zluda=={pin}")
        extra = ["libtorch-cuda"] if name == "old" else []
        r = root.run("install", "--env", name, "zluda", *extra, *FACTS, "--os", os_name,
                     "--allow-experimental", "--yes")
        check(f"environment {name} with zluda {pin}", r.returncode == 0, r.stderr)
    root.run("unpin", "--env", "win", "zluda")
    root.run("unpin", "--env", "lin", "zluda")


WORK = None


def main():
    global WORK
    with channel.www_served("cfapkg-venv-") as (tmp, srv):
        WORK = str(tmp)
        recipes = write_channel(tmp, srv)
        root = channel.Root(BIN, tmp / "root", recipes)
        envs(root)
        venv, before = test_cu118(root, tmp)
        test_switching_windows(root, venv, before)
        test_nvrtc(root, tmp)
        test_refusals(root, tmp)
        torch, v130 = test_rpath(root, tmp)
        test_cu126(root, tmp)
        if not WINDOWS:  # the venv's python is Linux's: cfapkg.exe cannot start it
            test_doctor(root, torch, v130)
            test_doctor_real(root, tmp)
    return check.report()


if __name__ == "__main__":
    sys.exit(main())
