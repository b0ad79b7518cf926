#!/usr/bin/env python3
"""No path is ever cut to fit a buffer.  Roots, environment names and
archive entry names that make paths longer than 4096 bytes (the size of
the buffers cfapkg once used) either work or fail with an error that
names the path; nothing is ever written, read or removed under a
shortened name.  And an entry name longer than those buffers allowed, but
within what the system opens, unpacks.

Usage: test_long_paths.py CFAPKG UNPACK_TOOL"""
import os
import pathlib
import sys
import tempfile

import harness
import unpack_paths
from archive_cases import make_tar, make_zip, reg, zip_entry

CFAPKG, TOOL = sys.argv[1], sys.argv[2]
check = harness.Checks()
# Linux opens no path of 4096 bytes or more; Wine maps a Windows path to
# one, so the same holds under the emulator.
SYSTEM_MAX = 4095
# Names of the root's own files and folders: anything else that appears
# is a name cfapkg made up, such as a cut one.
ROOT_NAMES = {"lock", "store", "downloads", "envs", "trash", "cache", "recipes"}


def long_dir(base, length, letter):
    """A folder whose path is exactly length bytes, made of components of
    at most 200 bytes under base."""
    path = str(base)
    while len(path) < length:
        room = length - len(path) - 1
        # Never leave a last step of nothing: a component is at least 1 byte.
        step = min(200, room if room <= 200 else min(200, room - 2))
        path += "/" + letter * step
    assert len(path) == length, (len(path), length)
    os.makedirs(path)
    return pathlib.Path(path)


def strange_names(top, known):
    """Names under top that are none of known (or of the form known plus a
    cfapkg suffix): what a cut path would have created."""
    bad = []
    for dirpath, dirs, files in os.walk(top):
        for n in dirs + files:
            if n not in known:
                bad.append(os.path.join(dirpath, n)[-120:])
    return bad


def names_the_path(stderr, root):
    """The error names the path, or the folder of it that could not be made
    (under Wine that can be the root itself), by the distinctive end of the
    root above them; and, natively, says that it is too long."""
    tail = str(root)[-40:]
    return tail in stderr and (harness.EMULATOR or "too long" in stderr)


def run(root, *args):
    """cfapkg with args on root; a sanitizer's report (a leak on the way
    out of an error, say) fails a check of its own."""
    r = harness.run(CFAPKG, "--root", str(root), *args)
    marks = [m for m in unpack_paths.SANITIZER_MARKS if m in r.stderr]
    check(f"runs cleanly: {' '.join(args)[:40]}", not marks, r.stderr[-2000:])
    return r


def test_env_files(tmp):
    """ROOT/envs/default fits, the files inside it do not: commands that
    read or write them fail naming the file (or work where the system
    allows), never acting on ROOT/envs/default/cur and the like."""
    root = long_dir(tmp / "r1", SYSTEM_MAX - len("/envs/default") - 4, "a")
    envdir = root / "envs" / "default"
    envdir.mkdir(parents=True)
    r = run(root, "history")
    check("history under a long root fails naming the file, or works",
          r.returncode == 0 or names_the_path(r.stderr, root), r.stderr[-300:])
    # Natively ROOT/envs/default/current cannot be opened: that is an error,
    # not "nothing installed" (as once, when a cut path was looked for).
    check("history does not read a file it cannot open as no history",
          r.returncode != 0 or harness.EMULATOR, r.stdout[-300:])
    r = run(root, "pin", "zluda==7-preview.10")
    pins = envdir / "pins.json"
    check("pin under a long root fails naming the file, or works",
          (r.returncode == 0 and os.path.exists(pins)) or
          (r.returncode != 0 and names_the_path(r.stderr, root)), r.stderr[-300:])
    check("nothing is made under a cut name in the environment's folder",
          strange_names(root, ROOT_NAMES | {"default", "pins.json"}) == [],
          strange_names(root, ROOT_NAMES | {"default", "pins.json"}))


def test_env_name(tmp):
    """An environment whose folder's path is longer than the system opens:
    created, or refused naming the folder; never a folder of a shorter
    name."""
    name = "e" * 64
    root = long_dir(tmp / "r2", SYSTEM_MAX - len("/envs/") - 40, "b")
    r = run(root, "env", "create", name)
    made = root / "envs" / name
    check("env create with a long name fails naming the folder, or works",
          (r.returncode == 0 and made.is_dir()) or
          (r.returncode != 0 and names_the_path(r.stderr, root)), r.stderr[-300:])
    envs = root / "envs"
    listed = sorted(os.listdir(envs)) if envs.is_dir() else []
    check("no environment folder of a cut name", listed in ([], [name]), listed)


def entry_name(length):
    """pkg/ddd.../fff: length bytes in components of at most 99 bytes."""
    parts, used = ["pkg"], 3
    while used + 100 < length - 1:
        parts.append("d" * 99)
        used += 100
    parts.append("f" * (length - used - 1))
    name = "/".join(parts)
    assert len(name) == length
    return name


def archives(tmp, name):
    data = b"long name\n"
    return {"tar": make_tar(tmp / f"n{len(name)}.tar", "w", [reg(name, data, 0o644)]),
            "zip": make_zip(tmp / f"n{len(name)}.zip", [zip_entry(name, data)])}


def test_long_entry(tmp):
    """A 3000-byte entry name (more than the 2048 bytes the old buffers
    took) under a short root unpacks, by both paths, under its whole
    name."""
    name = entry_name(3000)
    for fmt, path in archives(tmp, name).items():
        case = tmp / "cases" / f"short-{fmt}"
        f, s, checks = unpack_paths.run_both(TOOL, case, path, fmt, "long-1-x")
        for what, problem in checks.items():
            check(f"{what}: 3000-byte name ({fmt})", not problem, problem)
        for o in (f, s):
            check(f"3000-byte name unpacks whole ({fmt}, {o.root.name} path)",
                  o.ok and (o.folder / name).read_bytes() == b"long name\n",
                  o.error[-300:])


def test_entry_past_the_system(tmp):
    """The same name under a root long enough that the file's path passes
    what the system opens: refused naming the path, with nothing left in
    the store and no file of a cut name anywhere."""
    name = entry_name(3000)
    known = ROOT_NAMES | {"canary", "keep.txt", "file", "stream", "long-1-x",
                          ".staging-long-1-x", ".cfapkg", "manifest.json"}
    known |= set(name.split("/"))
    for fmt, path in archives(tmp, name).items():
        base = long_dir(tmp / f"deep-{fmt}", 1200, "c")
        f, s, checks = unpack_paths.run_both(TOOL, base / "case", path, fmt, "long-1-x")
        for what, problem in checks.items():
            check(f"{what}: a path past the system ({fmt})", not problem, problem)
        for o in (f, s):
            check(f"a path past the system is refused naming it ({fmt}, {o.root.name} path)",
                  o.ok or names_the_path(o.error, base), o.error[-300:])
        strange = strange_names(base / "case", known)
        check(f"no file of a cut name ({fmt})", strange == [], strange[:4])


def main():
    with tempfile.TemporaryDirectory() as d:
        tmp = pathlib.Path(d)
        test_env_files(tmp)
        test_env_name(tmp)
        test_long_entry(tmp)
        test_entry_past_the_system(tmp)
    return check.report()


if __name__ == "__main__":
    sys.exit(main())
