#!/usr/bin/env python3
"""An APT source, on real artifacts no one here wrote: Debian 12's own ROCm
runtime packages and the real Packages index that lists them
(scripts/debian-rocm fetches both once), served by nginx on 127.0.0.1 in
Debian's repository layout.  A recipe whose source names the repository,
the index's pin and the six packages installs them into one store folder;
every file, link and mode equals what `dpkg-deb -x` gives (the store drops
write bits); under `cfapkg run` the libraries' own dependencies among them
resolve inside the environment (`readelf -d` names them, `ldd` finds
them); a tampered .deb, a changed index and a package the index lacks are
refused with nothing installed.  The .debs are unpacked while they
download, several at once; when one of them cannot be (its download
resumes a part left from before) the set is unpacked from the cache
instead, to the same tree.  And a set of archives (TheRock ships ROCm
per GPU family in several tarballs) unpacks into one prefix, a path two of
them hold is refused.

    test_apt.py CFAPKG DEBIAN_REPO_FOLDER
"""
import hashlib
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import urllib.request

import harness

sys.path.insert(0, str(pathlib.Path(__file__).parent / "servers"))
from nginx import Nginx  # noqa: E402

BIN, REPO = sys.argv[1], pathlib.Path(sys.argv[2])
check = harness.Checks()
FACTS = ["--os", "linux", "--arch", "x86_64", "--gpu", "gfx1030", "--allow-experimental"]
LIBDIR = "usr/lib/x86_64-linux-gnu"


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def packages():
    return (REPO / "packages").read_text().split()


def index_file(repo):
    return repo / "dists" / (REPO / "suite").read_text().strip() / "main" / "binary-amd64" / "Packages"


def repo_copy(www, name, tamper=None):
    """www/name: the repository, the .debs linked, the index copied; tamper
    may change one file of it."""
    dst = www / name
    for f in REPO.rglob("*"):
        if f.is_file() and f.name not in (".complete", "suite", "packages"):
            out = dst / f.relative_to(REPO)
            out.parent.mkdir(parents=True, exist_ok=True)
            if f.suffix == ".deb":
                os.symlink(f, out)
            else:
                shutil.copyfile(f, out)
    if tamper:
        tamper(dst)
    return dst


def write_recipe(folder, url, index, wanted):
    recipe = {
        "format": 1, "name": "debian-rocm", "summary": "Debian 12's ROCm runtime",
        "versions": [{
            "version": "5.2.3", "os": ["linux"],
            "provides": ["amdhip64 = 5", "rocsparse"],
            "sources": {"linux-x86_64": {"apt": {
                "repository": url, "suite": (REPO / "suite").read_text().strip(),
                "component": "main", "index_sha256": sha256(index),
                "index_size": index.stat().st_size, "packages": wanted}}},
            "runtime": {"path": [LIBDIR, "usr/bin"]},
        }],
    }
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "debian-rocm.json").write_text(json.dumps(recipe, indent=1))


def dpkg_tree(debs, out):
    """What dpkg-deb -x gives: path -> (kind, sha256 or link target, mode)."""
    for deb in debs:
        subprocess.run(["dpkg-deb", "-x", str(deb), str(out)], check=True)
    return tree(out)


def tree(top):
    found = {}
    for p in sorted(top.rglob("*")):
        rel = p.relative_to(top).as_posix()
        if rel.startswith(".cfapkg"):
            continue
        if p.is_symlink():
            found[rel] = ("link", os.readlink(p), None)
        elif p.is_file():
            found[rel] = ("file", sha256(p), p.stat().st_mode & 0o7555)
    return found


def install(root, recipes, *extra):
    return harness.run(BIN, "install", "debian-rocm", *FACTS, "--yes", *extra,
                       env={"CFAPKG_ROOT": str(root), "CFAPKG_RECIPES": str(recipes)})


def test_install(tmp, srv, www):
    repo = repo_copy(www, "debian")
    recipes = tmp / "recipes-good"
    write_recipe(recipes, srv.url("debian"), index_file(repo), packages())
    root = tmp / "root"
    r = install(root, recipes)
    check("an APT-source recipe installs Debian's ROCm packages", r.returncode == 0,
          r.stdout + r.stderr)
    stores = list((root / "store").glob("debian-rocm-5.2.3-*"))
    check("into one store folder", len(stores) == 1, stores)
    if not stores:
        return root, recipes
    check("unpacked while the .debs downloaded, named once",
          r.stdout.count(f"Unpacked {stores[0].name} (") == 1 and "while downloading" in r.stdout,
          r.stdout)
    kept = [p.name for p in (root / "downloads").iterdir()]
    check("the streamed .debs are not kept, and nothing is left half done",
          not [n for n in kept if n.startswith(tuple(deb_shas())) or n.endswith(".part")] and
          not leftovers(root), (kept, leftovers(root)))
    same_as_dpkg(tmp, stores[0], "streamed")
    r = install(root, recipes)
    check("a second install has nothing to do", r.returncode == 0 and
          "Nothing to do" in r.stdout, r.stdout + r.stderr)
    return root, recipes


def deb_shas():
    return [sha256(d) for d in sorted(REPO.glob("pool/**/*.deb"))]


def leftovers(root):
    return [p.name for p in root.rglob("*") if p.name.startswith((".staging-", ".new-"))]


def same_as_dpkg(tmp, store, how):
    if not (tmp / "dpkg").exists():
        dpkg_tree(sorted(REPO.glob("pool/**/*.deb")), tmp / "dpkg")
    want, got = tree(tmp / "dpkg"), tree(store)
    diff = [k for k in sorted(set(want) | set(got)) if want.get(k) != got.get(k)]
    check(f"{how}: every file, link and mode equals dpkg-deb -x ({len(want)} entries)",
          want and not diff, [(k, want.get(k), got.get(k)) for k in diff[:5]])


def test_resumed(tmp, srv):
    """One .deb's download was cut before (its .part and validator left in
    the cache): it resumes, so it cannot be unpacked as it arrives, and the
    set is unpacked from the cache once all are there."""
    root, recipes = tmp / "root-resumed", tmp / "recipes-good"
    deb = sorted(REPO.glob("pool/**/libhsakmt1_*.deb"))[0]
    url = srv.url("debian/" + deb.relative_to(REPO).as_posix())
    with urllib.request.urlopen(urllib.request.Request(url, method="HEAD"), timeout=30) as resp:
        etag = resp.headers["ETag"]
    (root / "downloads").mkdir(parents=True)
    part = root / "downloads" / f"{sha256(deb)}.part"
    part.write_bytes(deb.read_bytes()[:deb.stat().st_size // 2])
    pathlib.Path(f"{part}.meta").write_text(etag)
    r = install(root, recipes)
    stores = list((root / "store").glob("debian-rocm-5.2.3-*"))
    check("a set with a resumed .deb installs", r.returncode == 0 and len(stores) == 1 and
          "while downloading" not in r.stdout, r.stdout + r.stderr)
    if stores:
        same_as_dpkg(tmp, stores[0], "unpacked from the cache")
    check("and nothing is left half done", not leftovers(root) and
          not list((root / "downloads").glob("*.part")), leftovers(root))


def test_cached(tmp):
    """The .debs in the cache already (fetched before): unpacked from their
    files, several at once, and kept."""
    root = tmp / "root-cached"
    (root / "downloads").mkdir(parents=True)
    for deb in sorted(REPO.glob("pool/**/*.deb")):
        shutil.copyfile(deb, root / "downloads" / sha256(deb))
    r = install(root, tmp / "recipes-good")
    stores = list((root / "store").glob("debian-rocm-5.2.3-*"))
    check("a set whose .debs are in the cache installs from them", r.returncode == 0 and
          len(stores) == 1, r.stdout + r.stderr)
    if stores:
        same_as_dpkg(tmp, stores[0], "from the cache")
    check("and keeps them there", all((root / "downloads" / h).is_file() for h in deb_shas()))


def needed(lib):
    out = subprocess.run(["readelf", "-d", str(lib)], capture_output=True, text=True).stdout
    return [line.split("[")[1].split("]")[0] for line in out.splitlines() if "(NEEDED)" in line]


def test_run_resolves(root, recipes):
    env = {"CFAPKG_ROOT": str(root), "CFAPKG_RECIPES": str(recipes)}
    view = root / "envs" / "default" / (root / "envs" / "default" / "current").read_text().strip()
    libdir = view / "view" / "debian-rocm" / LIBDIR
    ours = {p.name for p in libdir.iterdir()}
    for lib in ("librocsparse.so.0", "libamdhip64.so.5", "libhsa-runtime64.so.1"):
        inside = [n for n in needed(libdir / lib) if n in ours]
        check(f"readelf -d: {lib} needs a library of the set", inside, needed(libdir / lib))
        r = harness.run(BIN, "run", "--", "ldd", str(libdir / lib), env=env)
        lines = {line.split("=>")[0].strip(): line.split("=>")[1].strip()
                 for line in r.stdout.splitlines() if "=>" in line}
        for n in inside:
            check(f"under cfapkg run, ldd finds {n} (needed by {lib}) inside the environment",
                  lines.get(n, "").startswith(str(root)), r.stdout + r.stderr)


def nothing_installed(root):
    store = root / "store"
    return not (store.exists() and any(p.name.startswith("debian-rocm") for p in store.iterdir()))


def install_tampered(tmp, srv, www, name, tamper):
    """A fresh root installing from a copy of the repository that tamper
    changed, against the recipe pinned to the real index."""
    repo_copy(www, name, tamper)
    recipes = tmp / f"recipes-{name}"
    write_recipe(recipes, srv.url(name), index_file(REPO), packages())
    root = tmp / f"root-{name}"
    return root, install(root, recipes, "--retries", "0")


def test_tampered(tmp, srv, www):
    def flip_deb(dst):
        deb = sorted(dst.glob("pool/**/libhsakmt1_*.deb"))[0]
        data = bytearray(deb.read_bytes())
        data[len(data) // 2] ^= 0xFF
        deb.unlink()
        deb.write_bytes(data)

    good_index = index_file(REPO)
    root, r = install_tampered(tmp, srv, www, "tampered-deb", flip_deb)
    check("a tampered .deb is refused, naming its URL", r.returncode != 0 and
          "libhsakmt1_" in r.stderr, r.stdout + r.stderr)
    check("and nothing is installed, nothing of the unpack is left (the others streamed)",
          nothing_installed(root) and not (root / "envs" / "default" / "current").exists() and
          not leftovers(root), leftovers(root))

    def change_index(dst):
        f = index_file(dst)
        text = f.read_bytes()
        f.write_bytes(text.replace(b"Priority: optional", b"Priority: extra   ", 1))

    root, r = install_tampered(tmp, srv, www, "changed-index", change_index)
    check("an index that is not the pinned one is refused, naming it", r.returncode != 0 and
          "Packages" in r.stderr, r.stdout + r.stderr)
    check("and nothing is installed", nothing_installed(root) and
          not (root / "downloads").exists() or
          not any(p.stat().st_size > 1 << 20 for p in (root / "downloads").iterdir()))

    recipes = tmp / "recipes-missing"
    write_recipe(recipes, srv.url("debian"), good_index, packages() + ["libnosuch1=1:2.3-1"])
    root = tmp / "root-missing"
    r = install(root, recipes)
    check("a package the index lacks is named, with the index", r.returncode != 0 and
          "libnosuch1 1:2.3-1" in r.stderr and "Packages" in r.stderr, r.stderr)
    check("and nothing is installed", nothing_installed(root))


def targz(path, files):
    import io
    import tarfile
    with tarfile.open(path, "w:gz") as t:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mode = 0o755 if name.endswith(".so") else 0o644
            t.addfile(info, io.BytesIO(data))


def set_recipe(folder, srv, www, names):
    arts = [{"url": srv.url(n), "sha256": sha256(www / n), "size": (www / n).stat().st_size,
             "format": "tar.gz", "strip": 1} for n in names]
    recipe = {"format": 1, "name": "rock", "summary": "a ROCm split in tarballs",
              "versions": [{"version": "7.10.0", "sources": {
                  "linux-x86_64": {"artifacts": arts}, "windows-x86_64": {"artifacts": arts}},
                  "runtime": {"path": ["lib"]}}]}
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "rock.json").write_text(json.dumps(recipe, indent=1))


def test_set(tmp, srv, www):
    """Several archives into one prefix (TheRock's tarballs per family)."""
    targz(www / "core.tar.gz", {"rock/lib/libamdhip64.so": b"hip", "rock/bin/hipinfo": b"x"})
    targz(www / "blas.tar.gz", {"rock/lib/librocblas.so": b"blas",
                                "rock/lib/rocblas/library/TensileLibrary_lazy_gfx1201.dat": b"t"})
    targz(www / "clash.tar.gz", {"rock/lib/libamdhip64.so": b"another"})
    recipes = tmp / "recipes-set"
    set_recipe(recipes, srv, www, ["core.tar.gz", "blas.tar.gz"])
    root = tmp / "root-set"
    env = {"CFAPKG_ROOT": str(root), "CFAPKG_RECIPES": str(recipes)}
    r = harness.run(BIN, "install", "rock", *FACTS, "--yes", env=env)
    stores = list((root / "store").glob("rock-7.10.0-*")) if root.exists() else []
    check("a set of archives installs into one store folder", r.returncode == 0 and
          len(stores) == 1 and (stores[0] / "lib" / "libamdhip64.so").read_bytes() == b"hip" and
          (stores[0] / "lib/rocblas/library/TensileLibrary_lazy_gfx1201.dat").is_file(),
          r.stdout + r.stderr)
    lock = json.loads((root / "envs/default/1/lock.json").read_text()) if r.returncode == 0 else {}
    part = (lock.get("packages") or [{}])[0]
    check("the lock lists both archives and names the set by its digest",
          len(part.get("artifacts", [])) == 2 and stores and
          stores[0].name.endswith(part.get("sha256", "x")[:8]), part)
    r = harness.run(BIN, "verify", env=env)
    check("verify passes on the set", r.returncode == 0, r.stdout + r.stderr)
    set_recipe(recipes, srv, www, ["core.tar.gz", "clash.tar.gz"])
    r = harness.run(BIN, "install", "rock", *FACTS, "--yes", env=env)
    check("two archives of a set holding the same path are refused",
          r.returncode != 0 and "libamdhip64.so" in r.stderr, r.stdout + r.stderr)
    check("and the environment keeps its set", (root / "envs/default/current").read_text()
          .strip() == "1", r.stderr)


def main():
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="cfapkg-apt-"))
    srv = None
    try:
        www = tmp / "www"
        www.mkdir()
        srv = Nginx(www, tmp / "nginx")
        root, recipes = test_install(tmp, srv, www)
        if (root / "envs" / "default" / "current").exists():
            test_run_resolves(root, recipes)
        test_resumed(tmp, srv)
        test_cached(tmp)
        test_tampered(tmp, srv, www)
        test_set(tmp, srv, www)
    finally:
        if srv:
            srv.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    return check.report()


if __name__ == "__main__":
    sys.exit(main())
