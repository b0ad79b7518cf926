"""A test channel: small archives shaped like ZLUDA and LibTorch releases,
recipes that point at them on a server the test starts, and a meta
package tying them together.  Used by the environment and crash tests."""
import contextlib
import hashlib
import io
import json
import os
import pathlib
import shutil
import sys
import tarfile
import tempfile
import zipfile

sys.path.insert(0, str(pathlib.Path(__file__).parent / "servers"))
from nginx import Nginx  # noqa: E402

import harness  # noqa: E402

FACTS = ["--gpu", "gfx1200", "--arch", "x86_64"]


def _zip(files, top):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name, data in sorted(files.items()):
            z.writestr(f"{top}/{name}", data)
    return buf.getvalue()


def _targz(files, top):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as t:
        for name, data in sorted(files.items()):
            info = tarfile.TarInfo(f"{top}/{name}")
            info.size = len(data)
            info.mode = 0o755 if name.endswith((".exe", ".sh")) else 0o644
            t.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def zluda_files(tag, extra=0):
    files = {"zluda.exe": f"launcher {tag}\n".encode(),
             "nvcuda.dll": f"nvcuda {tag}\n".encode(),
             "nvml.dll": f"nvml {tag}\n".encode(),
             "cublas.dll": f"cublas {tag}\n".encode(),
             "cusparse.dll": f"cusparse {tag}\n".encode(),
             "README.txt": b"not a library\n"}
    for i in range(extra):
        files[f"doc/page{i}.txt"] = f"page {i} {tag}\n".encode()
    return files


def libtorch_files(headers=40, big=2_000_000):
    files = {"lib/torch_cpu.dll": os.urandom(big),
             "lib/c10.dll": b"c10\n", "lib/cublas64_11.dll": b"nvidia cublas\n",
             "build-version": b"2.3.0+cu118\n"}
    for i in range(headers):
        files[f"include/torch/h{i}.h"] = f"#define H{i}\n".encode()
    return files


def _source(url, data, fmt):
    return {"url": url, "sha256": hashlib.sha256(data).hexdigest(), "size": len(data),
            "format": fmt, "strip": 1}


def _both(src):
    return {"windows-x86_64": src, "linux-x86_64": src}


def zluda_version(version, url, data, fmt, gfx=None):
    v = {"version": version, "provides": ["cuda-driver-api", "cublas = 11"],
         "sources": _both(_source(url, data, fmt)),
         "layout": [{"path": "cublas.dll", "as": "cublas64_11.dll"},
                    {"path": "cusparse.dll", "as": "cusparse64_11.dll"}],
         "launcher": "zluda.exe",
         "runtime": {"path": ["."], "env": {"ZLUDA_TEST_TAG": version}, "stage": ["*.dll"]}}
    if gfx:
        v["gfx"] = gfx
    return v


def write(folder, server_url, headers=40, big=2_000_000, zluda_extra=0):
    """Writes www/ (archives) and recipes/ under folder; returns both paths."""
    folder = pathlib.Path(folder)
    www, recipes = folder / "www", folder / "recipes"
    www.mkdir(parents=True, exist_ok=True)
    recipes.mkdir(parents=True, exist_ok=True)
    z6 = _zip(zluda_files("6-preview.69", zluda_extra), "zluda")
    z7 = _targz(zluda_files("7-preview.10", zluda_extra), "zluda")
    lt = _zip(libtorch_files(headers, big), "libtorch")
    for name, data in (("zluda6.zip", z6), ("zluda7.tar.gz", z7), ("libtorch.zip", lt)):
        (www / name).write_bytes(data)
    zluda = {"format": 1, "name": "zluda", "summary": "test ZLUDA",
             "versions": [zluda_version("6-preview.69", server_url("zluda6.zip"), z6, "zip"),
                          zluda_version("7-preview.10", server_url("zluda7.tar.gz"), z7,
                                        "tar.gz", gfx=["gfx1200", "gfx1201"])]}
    libtorch = {"format": 1, "name": "libtorch-cuda", "summary": "test LibTorch",
                "versions": [{"version": "2.3.0+cu118", "requires": ["cuda-driver-api",
                                                                     "cublas == 11"],
                              "sources": _both(_source(server_url("libtorch.zip"), lt, "zip")),
                              "runtime": {"path": ["lib"],
                                          "env": {"TORCH_TEST_HOME": "{prefix}"}}}]}
    stack = {"format": 1, "name": "pytorch-cuda-stack", "summary": "test stack", "kind": "meta",
             "versions": [{"version": "1", "requires": ["zluda", "libtorch-cuda == 2.3.0+cu118"],
                           "runtime": {"env": {"ZLUDA_CC": "8.6",
                                               "TORCH_ALLOW_TF32_CUBLAS_OVERRIDE": "1"}}}]}
    for r in (zluda, libtorch, stack):
        (recipes / f"{r['name']}.json").write_text(json.dumps(r, indent=1))
    return www, recipes


@contextlib.contextmanager
def www_served(prefix):
    """A temporary folder whose www/ nginx serves on 127.0.0.1: yields
    (folder, server); all gone after."""
    tmp = pathlib.Path(tempfile.mkdtemp(prefix=prefix))
    srv = None
    try:
        (tmp / "www").mkdir()
        srv = Nginx(tmp / "www", tmp / "nginx")
        yield tmp, srv
    finally:
        if srv:
            srv.stop()
        shutil.rmtree(tmp, ignore_errors=True)


@contextlib.contextmanager
def served(prefix, **kw):
    """A temporary folder with nginx on 127.0.0.1 serving a channel written
    by write(**kw): yields (folder, server, recipes); all gone after."""
    with www_served(prefix) as (tmp, srv):
        _, recipes = write(tmp, srv.url, **kw)
        yield tmp, srv, recipes


class Root:
    """A cfapkg data root for the tests, reading the channel's recipes."""

    def __init__(self, binary, path, recipes):
        self.binary = binary
        self.path = pathlib.Path(path)
        self.recipes = recipes

    def run(self, *args, env=None):
        return harness.run(self.binary, *args, env={"CFAPKG_ROOT": str(self.path),
                                                    "CFAPKG_RECIPES": str(self.recipes),
                                                    "CFAPKG_MIRRORS": "", **(env or {})})

    def change(self, *args):
        return self.run(*args, *FACTS, "--yes")

    def current(self, env="default"):
        f = self.path / "envs" / env / "current"
        return int(f.read_text()) if f.exists() else 0

    def listing(self, env="default"):
        r = self.run("list", "--env", env, "--json")
        return {p["name"]: p["version"] for p in json.loads(r.stdout)["packages"]} if r.returncode == 0 else {}

    def view(self, env, part, gen=None):
        return self.path / "envs" / env / str(gen or self.current(env)) / "view" / part

    def programs(self, env="default"):
        """The folder cfapkg gives programs for env's current generation:
        its stable path, where the file system keeps that link."""
        link = self.path / "envs" / env / "active"
        return link if os.path.lexists(link) else self.path / "envs" / env / str(self.current(env))
