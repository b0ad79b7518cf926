#!/usr/bin/env python3
"""What is installed stays what was installed, and the disk it lives on is
treated with care, against nginx on 127.0.0.1 serving a test channel
(tests/channel.py): verify names a file replaced in a view and a view left
linking a store folder that was unpacked again (environment, generation,
path); the damage list a repair works from; store files read-only, and gc
still removing them; gc giving up stale partial downloads and archives
already unpacked (CFAPKG_KEEP_ARCHIVES=1 keeps them); the free-space check
before a download; and "no space left on device" with the path, from a
real full disk (a 1 MiB tmpfs, when this runs as root and may mount one).

    test_integrity.py CFAPKG INTEGRITY_TOOL UNPACK_TOOL
"""
import contextlib
import json
import os
import pathlib
import shutil
import subprocess
import sys
import time
import zipfile

import channel
import harness

BIN, TOOL, UNPACK = sys.argv[1], sys.argv[2], sys.argv[3]
check = harness.Checks()
# Under an emulator (Wine) permission bits are its own emulation.
NATIVE = os.name == "posix" and not harness.EMULATOR
LIBTORCH_C10 = pathlib.Path("lib") / "c10.dll"


def install(root, *specs, env="default"):
    r = root.change("install", "--env", env, *specs)
    check(f"install {' '.join(specs)} into {env}", r.returncode == 0, r.stdout + r.stderr)
    return r


def store_dir(root, prefix):
    found = sorted((root.path / "store").glob(prefix + "-*"))
    return found[0] if found else None


def damage(root, env="default"):
    r = harness.run(TOOL, str(root.path), "damage", env)
    try:
        doc = json.loads(r.stdout)
    except ValueError:
        doc = {"generation": 0, "damage": [], "problems": [r.stdout + r.stderr]}
    doc["by_part"] = {d["part"]: d for d in doc["damage"]}
    return doc


def flags(d):
    return (d["store_missing"], d["store_damaged"], d["view_damaged"])


def test_read_only(root):
    """Store files lose their write bits; the manifest says so; views share them."""
    install(root, "pytorch-cuda-stack", "zluda==6-preview.69")
    r = root.run("verify")
    check("verify passes on a fresh install", r.returncode == 0 and "all match" in r.stdout,
          r.stdout + r.stderr)
    check("nothing is damaged", damage(root)["damage"] == [], damage(root))
    if not NATIVE:
        print("skipped: permission bits under the emulator")
        return
    writable = []
    for store in (root.path / "store").iterdir():
        manifest = json.loads((store / ".cfapkg" / "manifest.json").read_text())
        modes = {f["path"]: f.get("mode") for f in manifest["files"]}
        for p in store.rglob("*"):
            if p.is_file() and not p.is_symlink() and p.stat().st_mode & 0o222:
                writable.append(str(p))
            rel = p.relative_to(store).as_posix()
            if rel in modes and int(modes[rel], 8) != p.stat().st_mode & 0o777:
                writable.append(f"{rel}: manifest {modes[rel]}")
    check("store files (and manifests) are read-only, as their manifests say",
          not writable, writable[:5])
    f = root.view("default", "libtorch-cuda") / LIBTORCH_C10
    check("a view's entry shares the store's mode", f.stat().st_mode & 0o222 == 0,
          oct(f.stat().st_mode))


def replace_file(path, data):
    """cp evil f.new && mv f.new f: a new file under the old name."""
    tmp = path.with_name(path.name + ".new")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def test_view_replaced(root):
    f = root.view("default", "libtorch-cuda") / LIBTORCH_C10
    gen = root.current()
    store_file = store_dir(root, "libtorch-cuda") / LIBTORCH_C10
    replace_file(f, b"evil c10\n")
    r = root.run("verify")
    want = f"default generation {gen}: view/libtorch-cuda/lib/c10.dll is not the store's file"
    check("verify names a view file replaced by cp + mv", r.returncode == 9 and want in r.stderr,
          r.stdout + r.stderr)
    check("and nothing else", r.stderr.count("generation") == 1, r.stderr)
    d = damage(root)
    check("the damage list: libtorch's view needs relinking, its store is whole",
          list(d["by_part"]) == ["libtorch-cuda"] and
          flags(d["by_part"]["libtorch-cuda"]) == (False, False, True) and
          d["generation"] == gen, d)
    check("the damage list's messages are verify's", any(want in p for p in d["problems"]),
          d["problems"])
    replace_file(f, store_file.read_bytes())
    r = root.run("verify")
    check("a copy with the same bytes is still not the store's file",
          r.returncode == 9 and want in r.stderr, r.stderr)
    f.unlink()
    os.link(store_file, f)
    check("linked again, verify passes", root.run("verify").returncode == 0)


def test_recorded_copy(root):
    """A view entry the generation lists as a copy is judged by its hash."""
    gen_dir = root.path / "envs" / "default" / str(root.current())
    f = root.view("default", "zluda") / "nvcuda.dll"
    store_file = store_dir(root, "zluda-6") / "nvcuda.dll"
    (gen_dir / "copies.json").write_text(json.dumps(["zluda/nvcuda.dll"]))
    replace_file(f, store_file.read_bytes())
    r = root.run("verify")
    check("a recorded copy with the store's bytes passes", r.returncode == 0, r.stderr)
    replace_file(f, b"changed copy\n")
    r = root.run("verify")
    check("a recorded copy that changed is named",
          r.returncode == 9 and "view/zluda/nvcuda.dll is a copy that no longer matches"
          in r.stderr, r.stderr)
    f.unlink()
    os.link(store_file, f)
    (gen_dir / "copies.json").unlink()
    check("restored, verify passes", root.run("verify").returncode == 0)


def test_store_refetched(root):
    """A store folder deleted, then fetched and unpacked again: the view
    still links the old files."""
    store = store_dir(root, "zluda-6")
    gen = root.current()
    shutil.rmtree(store)
    r = root.run("verify")
    check("verify names a missing store folder", r.returncode == 9 and
          f"default generation {gen}: zluda 6-preview.69: store/{store.name} is missing"
          in r.stderr, r.stderr)
    d = damage(root)
    check("the damage list: zluda's store is missing (and its view must be relinked)",
          list(d["by_part"]) == ["zluda"] and
          flags(d["by_part"]["zluda"]) == (True, False, True) and
          d["by_part"]["zluda"]["store"] == store.name and
          d["by_part"]["zluda"]["version"] == "6-preview.69", d)
    r = root.change("fetch", "zluda==6-preview.69")
    check("fetch unpacks it again", r.returncode == 0 and store.is_dir(), r.stdout + r.stderr)
    r = root.run("verify")
    check("verify catches the stale view", r.returncode == 9 and
          f"default generation {gen}: view/zluda/nvcuda.dll is not the store's file" in r.stderr
          and "more entries are not the store's files" in r.stderr, r.stderr)
    check("a few entries are named, then a count", r.stderr.count("view/zluda/") <= 6, r.stderr)
    d = damage(root)
    check("the damage list: zluda's view needs relinking, its store is whole again",
          list(d["by_part"]) == ["zluda"] and
          flags(d["by_part"]["zluda"]) == (False, False, True), d)
    if NATIVE:
        f = store / "nvcuda.dll"
        f.chmod(0o644)
        f.write_bytes(b"tampered\n")
        d = damage(root)
        check("the damage list: a store file changed",
              flags(d["by_part"]["zluda"]) == (False, True, True), d)


def age(path, days):
    t = time.time() - days * 86400
    os.utime(path, (t, t))


def test_gc(tmp, recipes):
    plain = channel.Root(BIN, tmp / "root-plain", recipes)
    install(plain, "pytorch-cuda-stack", "zluda==6-preview.69")
    left = sorted(p.name for p in (plain.path / "downloads").iterdir())
    check("an install keeps no archive it unpacked while downloading", left == [], left)
    root = channel.Root(BIN, tmp / "root-gc", recipes)
    r = root.run("install", "pytorch-cuda-stack", "zluda==6-preview.69", *channel.FACTS,
                 "--yes", env={"CFAPKG_KEEP_ARCHIVES": "1"})
    check("install with CFAPKG_KEEP_ARCHIVES=1", r.returncode == 0, r.stdout + r.stderr)
    downloads = root.path / "downloads"
    # An archive is named by its SHA-256, with "~BOOT" while it has not been
    # flushed to the disk (Linux; cache/cachefile.c).
    archives = {p.name for p in downloads.iterdir()
                if len(p.name.split("~")[0]) == 64 and "." not in p.name}
    check("CFAPKG_KEEP_ARCHIVES=1: the install left its two archives", len(archives) == 2,
          archives)
    old, young = "a" * 64, "b" * 64
    for name in (f"{old}.part", f"{old}.part.meta", f"{young}.part", f"{young}.part.meta",
                 "url-0123456789abcdef.part"):
        (downloads / name).write_bytes(b"x" * 1000)
    for name in (f"{old}.part", f"{old}.part.meta", "url-0123456789abcdef.part"):
        age(downloads / name, 2)
    r = root.run("gc", "--json", env={"CFAPKG_KEEP_ARCHIVES": "1"})
    out = json.loads(r.stdout or "{}")
    left = {p.name for p in downloads.iterdir()}
    check("gc gives up partial downloads a day old, with their .meta",
          r.returncode == 0 and f"{old}.part" not in left and f"{old}.part.meta" not in left and
          "url-0123456789abcdef.part" not in left and out.get("bytes_freed") == 3000,
          (r.stdout + r.stderr, left))
    check("and keeps younger ones (to resume)",
          f"{young}.part" in left and f"{young}.part.meta" in left, left)
    check("CFAPKG_KEEP_ARCHIVES=1 keeps archives already unpacked",
          archives <= left and out.get("downloads") == 0, (left, out))
    zluda = store_dir(root, "zluda-6")
    shutil.rmtree(zluda)
    r = root.run("gc", "--json")
    out = json.loads(r.stdout or "{}")
    left = {p.name for p in downloads.iterdir()}
    check("gc removes an archive whose store folder exists, keeps one whose folder is gone",
          r.returncode == 0 and out.get("downloads") == 1 and len(archives & left) == 1,
          (r.stdout + r.stderr, left))
    r = root.change("fetch", "zluda==6-preview.69", "--offline")
    check("the kept archive unpacks again without the network",
          r.returncode == 0 and zluda.is_dir(), r.stdout + r.stderr)
    r = root.run("env", "create", "other")
    install(root, "pytorch-cuda-stack", "zluda==7-preview.10", env="other")
    z7 = store_dir(root, "zluda-7")
    r = root.run("env", "remove", "other", "--yes")
    r = root.run("gc", "--json")
    out = json.loads(r.stdout or "{}")
    check("gc removes a store folder of read-only files", r.returncode == 0 and
          z7 is not None and not z7.exists() and out.get("prefixes") == 1, r.stdout + r.stderr)
    check("and leaves no trash", not any((root.path / "trash").iterdir()))
    r = root.run("verify")
    check("what stays still verifies (but the view of the store folder unpacked again)",
          r.returncode == 9 and "libtorch" not in r.stderr and "is missing" not in r.stderr and
          "view/zluda/" in r.stderr, r.stderr)


GIB = 1 << 30


def test_space(tmp):
    root = str(tmp / "root-space")
    r = harness.run(TOOL, root, "space", str(int(2.5 * GIB)), str(int(2.6 * GIB)),
                    env={"CFAPKG_TEST_FREE_BYTES": str(int(1.2 * GIB))})
    check("too little free space is refused with the numbers", r.returncode == 1 and
          "needs 5.1 GiB (2.5 GiB download + 2.6 GiB unpacked), 1.2 GiB free on the disk "
          f"holding {root}; free space or set CFAPKG_ROOT to another disk" in r.stdout,
          r.stdout + r.stderr)
    r = harness.run(TOOL, root, "space", str(GIB), str(GIB),
                    env={"CFAPKG_TEST_FREE_BYTES": str(2 * GIB)})
    check("enough free space passes", r.returncode == 0 and r.stdout.strip() == "ok", r.stdout)
    r = harness.run(TOOL, root, "space", "1000", "3000", drop=("CFAPKG_TEST_FREE_BYTES",))
    check("the real disk (a root not made yet) has room for 4000 bytes",
          r.returncode == 0 and r.stdout.strip() == "ok", r.stdout + r.stderr)
    est = [harness.run(TOOL, root, "estimate", *a).stdout.strip()
           for a in (("zip", "1000", "-1"), ("tar", "1000", "-1"), ("tar.xz", "1000", "4321"))]
    check("the unpacked estimate: 3x the archive, a tar its size, else the recipe's number",
          est == ["3000", "1000", "4321"], est)


@contextlib.contextmanager
def tiny_disk(where):
    """A 1 MiB tmpfs at where, or None when this cannot mount one."""
    where.mkdir(parents=True)
    mounted = False
    if hasattr(os, "geteuid") and os.geteuid() == 0 and shutil.which("mount"):
        mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(where)],
                                 capture_output=True, timeout=30).returncode == 0
    try:
        yield where if mounted else None
    finally:
        if mounted:
            subprocess.run(["umount", str(where)], capture_output=True, timeout=30)


def random_zip(path, sizes):
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as z:
        for i, n in enumerate(sizes):
            z.writestr(f"pkg/f{i}.bin", os.urandom(n))


def test_disk_full(tmp, recipes):
    with tiny_disk(tmp / "tiny") as disk:
        if disk is None:
            print("skipped: no space left on device (mounting a 1 MiB tmpfs needs root)")
            return
        root = channel.Root(BIN, disk / "root", recipes)
        r = root.run("fetch", "libtorch-cuda", *channel.FACTS, "--yes",
                     env={"CFAPKG_TEST_FREE_BYTES": str(1 << 40)})
        check("a download that fills the disk says so, and where",
              r.returncode != 0 and "no space left on device" in r.stderr and
              str(disk / "root") in r.stderr and "disk full?" not in r.stderr, r.stderr)
        shutil.rmtree(disk / "root", ignore_errors=True)
        archive = tmp / "big.zip"
        random_zip(archive, [1_500_000])
        r = harness.run(UNPACK, str(disk / "u1"), str(archive), "zip", "big-1-x", "1")
        check("an unpack that fills the disk says so, naming the file",
              r.returncode != 0 and "no space left on device" in r.stdout and
              "f0.bin" in r.stdout, r.stdout + r.stderr)
        check("and leaves nothing in the store",
              not any((disk / "u1" / "store").iterdir()), list((disk / "u1" / "store").iterdir()))
        shutil.rmtree(disk / "u1", ignore_errors=True)
        # The files fill the disk to its last block: the manifest is what fails.
        (disk / "u2" / "store").mkdir(parents=True)
        free = os.statvfs(disk).f_bavail * os.statvfs(disk).f_frsize
        block = os.statvfs(disk).f_frsize
        data = 64 * block
        (disk / "filler").write_bytes(b"\0" * (free - data))
        random_zip(archive, [data])
        r = harness.run(UNPACK, str(disk / "u2"), str(archive), "zip", "m-1-x", "1")
        check("a manifest that does not fit says so, naming it",
              r.returncode != 0 and "no space left on device" in r.stdout and
              "manifest.json" in r.stdout, r.stdout + r.stderr)


def main():
    with channel.served("cfapkg-integrity-") as (tmp, _, recipes):
        root = channel.Root(BIN, tmp / "root", recipes)
        test_read_only(root)
        test_view_replaced(root)
        test_recorded_copy(root)
        test_store_refetched(root)
        test_gc(tmp, recipes)
        test_space(tmp)
        test_disk_full(tmp, recipes)
    return check.report()


if __name__ == "__main__":
    sys.exit(main())
