#!/usr/bin/env python3
"""Transactions run by the library, against a channel served by nginx on
127.0.0.1: an install notices a store folder that went missing or whose
files no longer have their recorded sizes and permission bits, and
restores it in a new generation instead of saying "Nothing to do";
`cfapkg repair` does the same for the current set without solving; no
fixed limit on how many packages or mirrors a transaction carries; a
failed transaction leaves the environment as it was."""
import json
import shutil
import sys
import time

import channel
import harness

BIN = sys.argv[1]
check = harness.Checks()


def store(root, name):
    found = list((root.path / "store").glob(f"{name}-*"))
    return found[0] if found else None


def test_missing_store_folder(root):
    r = root.change("install", "pytorch-cuda-stack", "zluda==6-preview.69")
    check("install", r.returncode == 0, r.stderr)
    zluda = store(root, "zluda-6-preview.69")
    shutil.rmtree(zluda)
    r = root.change("install", "pytorch-cuda-stack", "zluda==6-preview.69")
    check("install notices a store folder that went missing",
          r.returncode == 0 and "Nothing to do" not in r.stdout and
          "zluda 6-preview.69 (store folder restored)" in r.stdout, r.stdout + r.stderr)
    check("and restores it in a new generation", store(root, "zluda-6-preview.69") is not None
          and root.current() == 2, root.current())
    check("verify passes after the restore", root.run("verify").returncode == 0)
    r = root.change("install", "pytorch-cuda-stack", "zluda==6-preview.69")
    check("then there is nothing to do", r.returncode == 0 and "Nothing to do" in r.stdout,
          r.stdout)


def test_damaged_store_folder(root):
    """A file of a store folder replaced by a shorter one (a slip, a
    scanner's quarantine): install sees it without hashing, by its
    folder's seal or by the manifest's sizes, and unpacks the folder
    again."""
    gen = root.current()
    lib = store(root, "libtorch-cuda") / "lib" / "torch_cpu.dll"
    want = lib.read_bytes()
    lib.unlink()
    lib.write_bytes(want[: len(want) // 2])
    r = root.change("install", "pytorch-cuda-stack", "zluda==6-preview.69")
    check("install notices a store file cut short",
          r.returncode == 0 and "Nothing to do" not in r.stdout and
          "libtorch-cuda 2.3.0+cu118 (store folder restored)" in r.stdout, r.stdout + r.stderr)
    check("the archive was not kept (it unpacked while downloading): fetched again",
          "to download: 0 B" not in r.stdout, r.stdout)
    lib = store(root, "libtorch-cuda") / "lib" / "torch_cpu.dll"
    check("the folder is unpacked again, in a new generation",
          lib.read_bytes() == want and root.current() == gen + 1, root.current())
    check("verify passes after it", root.run("verify").returncode == 0)
    for keep in (True, False):
        lib.chmod(0o644)
        lib.write_bytes(want[: len(want) // 2])
        r = root.run("install", "pytorch-cuda-stack", "zluda==6-preview.69", *channel.FACTS,
                     "--yes", env={"CFAPKG_KEEP_ARCHIVES": "1" if keep else "0"})
        lib = store(root, "libtorch-cuda") / "lib" / "torch_cpu.dll"
        if not keep:
            check("an archive kept before (CFAPKG_KEEP_ARCHIVES=1): nothing to download",
                  r.returncode == 0 and "to download: 0 B" in r.stdout and
                  lib.read_bytes() == want, r.stdout + r.stderr)
    # A folder unpacked before .cfapkg/sizes existed is judged by its manifest.
    (store(root, "zluda-6-preview.69") / ".cfapkg" / "sizes").unlink()
    gone = store(root, "zluda-6-preview.69") / "nvcuda.dll"
    gone.unlink()
    r = root.change("install", "pytorch-cuda-stack", "zluda==6-preview.69")
    check("install notices a store file deleted (judged by the manifest)",
          r.returncode == 0 and "zluda 6-preview.69 (store folder restored)" in r.stdout and
          gone.is_file(), r.stdout + r.stderr)


def test_seal(root):
    """A folder that has not changed for two seconds is sealed by the next
    look: later no-op installs compare its folders' stamps instead of
    every file.  A file deleted or added under it breaks the seal; a file
    written in place is verify's to find (it hashes)."""
    time.sleep(2.5)  # past the coarse clock's tick: the look may seal
    r = root.change("install", "pytorch-cuda-stack", "zluda==6-preview.69")
    folder = store(root, "libtorch-cuda")
    check("a no-op install seals the folders it found whole",
          r.returncode == 0 and "Nothing to do" in r.stdout and
          (folder / ".cfapkg" / "seal").is_file(), r.stdout + r.stderr)
    header = sorted((folder / "include" / "torch").glob("*.h"))[0]
    data = header.read_bytes()
    header.unlink()
    r = root.change("install", "pytorch-cuda-stack", "zluda==6-preview.69")
    check("a file deleted under a sealed folder is noticed",
          r.returncode == 0 and "libtorch-cuda 2.3.0+cu118 (store folder restored)" in r.stdout,
          r.stdout + r.stderr)
    time.sleep(2.5)
    root.change("install", "pytorch-cuda-stack", "zluda==6-preview.69")  # seals again
    header = store(root, "libtorch-cuda") / "include" / "torch" / header.name
    header.chmod(0o644)
    header.write_bytes(data[:-1] + b"!")
    r = root.run("verify")
    check("a file written in place: verify names it (exit 9)",
          r.returncode == 9 and header.name in r.stderr, r.stdout + r.stderr)
    r = root.run("repair", "--yes")
    check("and repair puts it back", r.returncode == 0 and root.run("verify").returncode == 0,
          r.stdout + r.stderr)


def test_repair(root, recipes):
    shutil.rmtree(store(root, "libtorch-cuda"))
    # Repair re-fetches the locked set: it needs no recipes, only the lock.
    broken = recipes.parent / "no-recipes"
    broken.mkdir(exist_ok=True)
    r = harness.run(BIN, "repair", "--yes", env={"CFAPKG_ROOT": str(root.path),
                                               "CFAPKG_RECIPES": str(broken)})
    check("repair restores a missing store folder from the locked set",
          r.returncode == 0 and store(root, "libtorch-cuda") is not None and
          "libtorch-cuda 2.3.0+cu118 (store folder restored)" in r.stdout, r.stdout + r.stderr)
    before = root.current()
    r = root.run("repair", "--yes")
    check("repair of a whole set does nothing", r.returncode == 0 and
          "Nothing to do" in r.stdout and root.current() == before, r.stdout + r.stderr)
    r = root.run("repair", "--env", "nosuch")
    check("repair of an unknown environment says so", r.returncode == 4 and
          "no environment \"nosuch\"" in r.stderr, r.stderr)


def test_repair_damage(root):
    lib = store(root, "libtorch-cuda") / "lib" / "torch_cpu.dll"
    lib.chmod(0o644)
    lib.write_bytes(b"damaged")
    gen = root.current()
    r = root.run("repair", "--yes")
    check("repair unpacks a damaged store folder again",
          r.returncode == 0 and "libtorch-cuda 2.3.0+cu118 (store folder restored)" in r.stdout
          and (store(root, "libtorch-cuda") / "lib" / "torch_cpu.dll").read_bytes() != b"damaged"
          and root.current() == gen + 1, r.stdout + r.stderr)
    check("and verify passes after it", root.run("verify").returncode == 0)
    view = root.view("default", "zluda") / "nvcuda.dll"
    view.unlink()
    view.write_bytes(b"a file put in place of the link")
    r = root.run("repair", "--yes")
    check("repair links a damaged view again", r.returncode == 0 and
          "zluda 6-preview.69 (view linked again)" in r.stdout and
          root.run("verify").returncode == 0, r.stdout + r.stderr)


def test_no_space(root):
    shutil.rmtree(store(root, "zluda-6-preview.69"))
    shutil.rmtree(root.path / "downloads")
    gen = root.current()
    r = root.run("repair", "--yes", env={"CFAPKG_TEST_FREE_BYTES": "1000"})
    check("a transaction that would not fit on the disk is refused before any download, "
          "with the numbers", r.returncode != 0 and "1000 bytes free" in r.stderr and
          "needs" in r.stderr, r.stderr)
    check("and changes nothing", root.current() == gen and
          store(root, "zluda-6-preview.69") is None and not (root.path / "downloads").exists()
          or not list((root.path / "downloads").iterdir()))
    check("with room it goes through", root.run("repair", "--yes").returncode == 0)


def test_unpacked_size(root, recipes):
    """The free-space check counts what a source says it unpacks to
    (unpacked_size), not three times its archive."""
    sized = recipes.parent / "sized-recipes"
    shutil.copytree(recipes, sized, dirs_exist_ok=True)
    lt = json.loads((sized / "libtorch-cuda.json").read_text())
    folder = store(root, "libtorch-cuda")
    unpacked = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()
                   and ".cfapkg" not in p.parts)
    for src in lt["versions"][0]["sources"].values():
        src["unpacked_size"] = unpacked
        size = src["size"]
    (sized / "libtorch-cuda.json").write_text(json.dumps(lt))
    shutil.rmtree(folder)
    shutil.rmtree(root.path / "downloads", ignore_errors=True)
    free = size + unpacked + 100_000  # short of 3 times the archive, plus the archive
    r = harness.run(BIN, "install", "pytorch-cuda-stack", "zluda==6-preview.69", *channel.FACTS,
                    "--yes", env={"CFAPKG_ROOT": str(root.path), "CFAPKG_RECIPES": str(sized),
                                  "CFAPKG_TEST_FREE_BYTES": str(free)})
    check("a source's unpacked_size is what the free-space check counts",
          r.returncode == 0 and store(root, "libtorch-cuda") is not None, r.stdout + r.stderr)


def lose_a_header(root):
    """One header of LibTorch's store folder deleted, and no archive in
    the cache: (the folder, the header, the files left)."""
    folder = store(root, "libtorch-cuda")
    header = sorted((folder / "include" / "torch").glob("*.h"))[0]
    header.unlink()
    shutil.rmtree(root.path / "downloads", ignore_errors=True)
    return folder, header, sorted(p.relative_to(folder) for p in folder.rglob("*"))


def test_repair_keeps_what_it_cannot_replace(root, srv):
    """A repair that cannot get the archive (offline, the server down)
    says so and leaves the damaged folder as it was: one missing header
    must not cost the other files.  One that can replaces it whole."""
    gen = root.current()
    for how, args, stop in (("--offline", ["--offline"], False),
                            ("with the server down", ["--retries", "0"], True)):
        folder, header, files = lose_a_header(root)
        if stop:
            srv.stop()
        r = root.run("repair", "--yes", *args)
        check(f"repair {how} fails and says the damaged folder is left as it was",
              r.returncode == 8 and f"store/{folder.name} is left as it was" in r.stderr,
              r.stdout + r.stderr)
        check(f"and after repair {how} the folder is there, all but the lost header",
              folder.is_dir() and sorted(p.relative_to(folder) for p in folder.rglob("*"))
              == files and root.current() == gen, r.stderr)
        r = root.run("verify")
        check(f"verify after repair {how} names only the lost header",
              r.returncode == 9 and header.name in r.stdout + r.stderr and
              "missing or has no manifest" not in r.stdout + r.stderr, r.stdout + r.stderr)
        if stop:
            break
        r = root.run("repair", "--yes")
        gen += 1
        check("online, repair replaces the folder whole, leaving nothing beside it",
              r.returncode == 0 and header.is_file() and root.run("verify").returncode == 0 and
              not list((root.path / "store").glob(".*")) and
              not list((root.path / "trash").glob("*")), r.stdout + r.stderr)


def test_lost_manifest(root):
    """A store folder whose manifest is gone (a hand, a disk) is not taken
    as whole: install and repair replace it by a new copy, and a repair
    that cannot get the archive leaves its files as they were."""
    manifest = store(root, "libtorch-cuda") / ".cfapkg" / "manifest.json"
    manifest.unlink()
    r = root.change("install", "pytorch-cuda-stack", "zluda==6-preview.69")
    check("install restores a store folder that lost its manifest",
          r.returncode == 0 and "libtorch-cuda 2.3.0+cu118 (store folder restored)" in r.stdout
          and manifest.is_file() and root.run("verify").returncode == 0, r.stdout + r.stderr)
    manifest.unlink()
    shutil.rmtree(root.path / "downloads", ignore_errors=True)
    files = sorted(p.relative_to(manifest.parent.parent)
                   for p in manifest.parent.parent.rglob("*"))
    r = root.run("repair", "--yes", "--offline")
    check("repair --offline of a folder without its manifest says it is left as it was",
          r.returncode == 8 and "is left as it was" in r.stderr and
          sorted(p.relative_to(manifest.parent.parent)
                 for p in manifest.parent.parent.rglob("*")) == files, r.stdout + r.stderr)
    r = root.run("repair", "--yes")
    check("online, repair gives it back its manifest",
          r.returncode == 0 and manifest.is_file() and root.run("verify").returncode == 0,
          r.stdout + r.stderr)


def test_failure_keeps_env(root, srv):
    lock = json.loads((root.path / "envs" / "default" / str(root.current()) /
                       "lock.json").read_text())
    gen = root.current()
    shutil.rmtree(store(root, "zluda-6-preview.69"))
    shutil.rmtree(root.path / "downloads")  # so that the network is needed
    srv.stop()
    r = root.run("repair", "--yes", "--retries", "0")
    check("a repair whose download fails exits non-zero and names the URL",
          r.returncode == 8 and "127.0.0.1" in r.stderr, r.stderr)
    check("and the environment stays where it was", root.current() == gen and
          json.loads((root.path / "envs" / "default" / str(gen) / "lock.json").read_text())
          == lock)


def main():
    with channel.served("cfapkg-trans-") as (tmp, srv, recipes):
        root = channel.Root(BIN, tmp / "root", recipes)
        test_missing_store_folder(root)
        test_damaged_store_folder(root)
        test_seal(root)
        test_repair(root, recipes)
        test_repair_damage(root)
        test_no_space(root)
        test_unpacked_size(root, recipes)
        test_lost_manifest(root)
        test_repair_keeps_what_it_cannot_replace(root, srv)
        test_failure_keeps_env(root, srv)
    return check.report()


if __name__ == "__main__":
    sys.exit(main())
