#!/usr/bin/env python3
"""Unpacking into the store: the formats cfapkg reads (zip, 7z where bsdtar
can make one, tar.gz/xz/bz2/zst, .deb), leading folders stripped, a
manifest of every file with its SHA-256 and mode; and every hostile archive
refused with nothing written outside the staging folder and no store folder
left.  Every archive goes through both unpack paths, from the file and as a
download streams in, which must agree on the verdict and the tree
(tests/unpack_paths.py); formats that cannot stream go through the file
path twice."""
import bz2
import hashlib
import io
import json
import pathlib
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from itertools import count

import archive_cases
import harness
import unpack_paths
from archive_cases import make_tar, reg, special

TOOL = sys.argv[1]
check = harness.Checks()
CASE_NUMBERS = count()
FILES = {"pkg/bin/zluda.exe": b"MZ" + b"x" * 5000, "pkg/lib/cublas64_11.dll": b"dll" * 3000,
         "pkg/README.txt": "日本語 ü\n".encode()}


def both_paths(tmp, label, archive, fmt, name, *extra, env=None, drop=(), good=True):
    """Unpacks archive from the file and as a stream, each into a fresh
    root of a case folder of its own under tmp, and counts the checks that
    the two agree and nothing escaped (and for a good archive, that the
    manifest gives each file's mode); returns the two outcomes."""
    case = tmp / "cases" / str(next(CASE_NUMBERS))
    f, s, checks = unpack_paths.run_both(TOOL, case, archive, fmt, name, *extra, env=env,
                                          drop=drop)
    if good:
        checks["manifest modes"] = unpack_paths.check_modes((f, s))
    for what, problem in checks.items():
        check(f"{what}: {label}", not problem, problem)
    return f, s


def test_formats(tmp):
    good = [reg(n, d) for n, d in FILES.items()]
    cases = {}
    for fmt, mode in (("tar.gz", "w:gz"), ("tar.xz", "w:xz"), ("tar.bz2", "w:bz2"), ("tar", "w")):
        path = tmp / f"good.{fmt}"
        make_tar(path, mode, good)
        cases[fmt] = path
    raw = tmp / "good.tar"
    if shutil.which("zstd"):
        subprocess.run(["zstd", "-q", "-f", str(raw), "-o", str(tmp / "good.tar.zst")], check=True)
        cases["tar.zst"] = tmp / "good.tar.zst"
    z = tmp / "good.zip"
    with zipfile.ZipFile(z, "w", zipfile.ZIP_DEFLATED) as f:
        for n, d in FILES.items():
            f.writestr(n, d)
    cases["zip"] = z
    if shutil.which("bsdtar"):
        src = tmp / "tree7z"
        for n, d in FILES.items():
            (src / n).parent.mkdir(parents=True, exist_ok=True)
            (src / n).write_bytes(d)
        subprocess.run(["bsdtar", "--format", "7zip", "-cf", str(tmp / "good.7z"), "-C", str(src),
                        "pkg"], check=True)
        cases["7z"] = tmp / "good.7z"
    cases["deb"] = make_deb(tmp, tmp / "good.tar.xz")
    for fmt, path in cases.items():
        f, _ = both_paths(tmp, f"good {fmt}", path, fmt, "pkg-1-abc", "1")
        store = f.folder
        ok = f.ok and all((store / n.split("/", 1)[1]).read_bytes() == d
                          for n, d in FILES.items())
        check(f"unpack {fmt}", ok, json.dumps(f.res))
        if not ok:
            continue
        manifest = json.loads((store / ".cfapkg" / "manifest.json").read_text())
        want = {n.split("/", 1)[1]: hashlib.sha256(d).hexdigest() for n, d in FILES.items()}
        got = {f["path"]: f["sha256"] for f in manifest["files"]}
        check(f"manifest {fmt}", got == want, json.dumps(manifest))
        check(f"no staging left {fmt}", unpack_paths.store_left(f.root) == ["pkg-1-abc"])
    again = unpack_paths.run_tool(TOOL, f.root, cases["deb"], "deb", "pkg-1-abc", "1")
    check("a second unpack finds it done", again.ok and again.res.get("existed"),
          json.dumps(again.res))


def ar_member(name, data):
    header = f"{name:<16}{0:<12}{0:<6}{0:<6}{'100644':<8}{len(data):<10}`\n".encode()
    return header + data + (b"\n" if len(data) % 2 else b"")


def make_deb(tmp, data_tar):
    control = tmp / "control.tar.gz"
    make_tar(control, "w:gz", [reg("control", b"Package: x\n")])
    deb = tmp / "good.deb"
    deb.write_bytes(b"!<arch>\n" + ar_member("debian-binary", b"2.0\n") +
                    ar_member("control.tar.gz", control.read_bytes()) +
                    ar_member("data.tar.xz", data_tar.read_bytes()))
    return deb


def hostile_zip(tmp, name, members):
    path = tmp / f"{name}.zip"
    with zipfile.ZipFile(path, "w") as f:
        for n, d in members:
            f.writestr(zipfile.ZipInfo(n), d)
    return path


def test_hostile(tmp):
    outside = tmp / "outside"
    outside.mkdir()
    evil_tar = {
        "absolute path": [reg(str(outside / "evil"), b"x")],
        "dot-dot": [reg("pkg/../../outside/evil", b"x")],
        "symlink out": [special("pkg/link", tarfile.SYMTYPE, "../../outside/evil")],
        "absolute symlink": [special("pkg/link", tarfile.SYMTYPE, "/etc/passwd")],
        "hard link out": [special("pkg/hl", tarfile.LNKTYPE, "../outside/evil")],
        "device file": [special("pkg/dev", tarfile.CHRTYPE)],
        "fifo": [special("pkg/fifo", tarfile.FIFOTYPE)],
        "duplicate entry": [reg("pkg/a.dll", b"1"), reg("pkg/a.dll", b"2")],
        "case collision": [reg("pkg/Readme.txt", b"1"), reg("pkg/README.TXT", b"2")],
        "stream name": [reg("pkg/a.dll:evil", b"x")],
    }
    evil_zip = {
        "drive letter": [("C:/outside/evil", b"x")],
        "drive letter backslash": [("C:\\outside\\evil", b"x")],
        "UNC path": [("\\\\server\\share\\evil", b"x")],
        "backslash traversal": [("pkg\\..\\..\\outside\\evil", b"x")],
    }
    archives = {}
    for i, (what, members) in enumerate(evil_tar.items()):
        path = tmp / f"evil{i}.tar"
        make_tar(path, "w", members)
        archives[what] = (path, "tar")
    for i, (what, members) in enumerate(evil_zip.items()):
        archives[what] = (hostile_zip(tmp, f"evilz{i}", members), "zip")
    bomb = tmp / "bomb.tar.bz2"
    with tarfile.open(bomb, "w") as t:
        pass
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as t:
        info = tarfile.TarInfo("pkg/zeros")
        info.size = 64 << 20
        t.addfile(info, io.BytesIO(bytes(64 << 20)))
    bomb.write_bytes(bz2.compress(buf.getvalue(), 9))
    archives["decompression bomb"] = (bomb, "tar.bz2")
    for what, (path, fmt) in archives.items():
        for o in both_paths(tmp, f"hostile {what}", path, fmt, "bad-1-x", good=False):
            check(f"refused: {what} ({o.root.name} path)", not o.ok and "refused" in o.error
                  and path.name in o.error, json.dumps(o.res))
        check(f"nothing in the outside folder: {what}", list(outside.iterdir()) == []
              and not (tmp / "evil").exists(), f"{list(outside.iterdir())}")
    big = tmp / "big.tar"
    make_tar(big, "w", [reg("pkg/a", bytes(300_000))])
    for o in both_paths(tmp, "size cap", big, "tar", "cap-1-x", "0", "100000", good=False):
        check(f"size cap ({o.root.name} path)", not o.ok and "size cap" in o.error,
              json.dumps(o.res))


def test_details(tmp):
    """Files the hasher reads back: unreadable in the archive, empty, larger
    than one read, a hard link's copy; and a zip whose CRC-32 is wrong,
    refused when nothing pinned the archive's hash."""
    big = bytes(range(256)) * (12 << 12)  # 12 MiB
    locked = reg("pkg/locked.txt", b"secret")
    locked[0].mode = 0o000
    members = [locked, reg("pkg/empty", b""), reg("pkg/lib/big.so", big),
               special("pkg/lib/big-link.so", tarfile.LNKTYPE, "pkg/lib/big.so")]
    path = tmp / "details.tar.gz"
    make_tar(path, "w:gz", members)
    f, _ = both_paths(tmp, "details", path, "tar.gz", "det-1-x", "1")
    store = f.folder
    check("unpack details", f.ok, json.dumps(f.res))
    if f.ok:
        manifest = json.loads((store / ".cfapkg" / "manifest.json").read_text())
        got = {f["path"]: f["sha256"] for f in manifest["files"]}
        want = {"locked.txt": b"secret", "empty": b"", "lib/big.so": big, "lib/big-link.so": big}
        check("manifest of read-back files", got == {n: hashlib.sha256(d).hexdigest()
                                                     for n, d in want.items()}, json.dumps(got))
        check("an unreadable file is stored readable by its owner",
              (store / "locked.txt").stat().st_mode & 0o400 and
              (store / "locked.txt").read_bytes() == b"secret")
    bad = tmp / "badcrc.zip"
    with zipfile.ZipFile(bad, "w", zipfile.ZIP_STORED) as f:
        f.writestr("pkg/a.dll", b"A" * 4096)
    raw = bytearray(bad.read_bytes())
    raw[raw.index(b"A" * 64) + 10] = ord("B")
    bad.write_bytes(bytes(raw))
    # The file path only: --stream unpacks as a pinned download, whose
    # CRC-32s the SHA-256 already vouches for, so its verdict rightly differs.
    crc = unpack_paths.run_tool(TOOL, tmp / "root-crc", bad, "zip", "crc-1-x", "1")
    check("a wrong CRC-32 is refused when the hash was not pinned",
          not crc.ok and unpack_paths.store_left(crc.root) == [], json.dumps(crc.res))


def test_more_hostile(tmp):
    """Device names, zip links, link chains, encryption, a name too long to
    show whole: refused on both paths, with the reason in the message."""
    for what, (path, fmt, text) in archive_cases.refused(tmp).items():
        outcomes = both_paths(tmp, f"hostile {what}", path, fmt, "bad-1-x", good=False)
        for o in outcomes:
            why = text or "refused"
            check(f"refused: {what} ({o.root.name} path)", not o.ok and why in o.error
                  and path.name in o.error, o.error[:300] or "accepted")
        if "4096" in what:
            for o in outcomes:
                check(f"{what} is shown shortened ({o.root.name} path)",
                      archive_cases.LONG_NAME not in o.error
                      and archive_cases.LONG_NAME[:40] in o.error
                      and not o.error.rstrip().endswith("dddd"), "..." + o.error[-200:])


def test_name_shown_escaped(tmp):
    """A refused name that is not UTF-8 is shown with its stray bytes
    escaped (\\xe9), never sent raw to the terminal."""
    path = tmp / "latin1.tar"
    with tarfile.open(path, "w", format=tarfile.GNU_FORMAT, encoding="utf-8",
                      errors="surrogateescape") as t:
        info, data = reg("pkg/caf\udce9/../../../evil", b"x")
        t.addfile(info, io.BytesIO(data))
    for o in both_paths(tmp, "a name not in UTF-8", path, "tar", "bad-1-x", good=False):
        # unpack_tool writes a backslash of the message as a quote; on
        # Windows the name comes through the ANSI code page, as "café".
        check(f"a name not in UTF-8 is shown escaped ({o.root.name} path)",
              not o.ok and ("pkg/caf'xe9/" in o.error or unpack_paths.EMULATED) and
              "\ufffd" not in o.error, o.error)


def test_accepted(tmp):
    """Modes, links that stay inside, UTF-8 names under the C locale, zips
    written without seeking, padding and a self-extractor stub: the same
    tree from both paths."""
    native = not unpack_paths.EMULATED
    for what, (path, fmt, want) in archive_cases.accepted(tmp).items():
        # The library must not need the program to set a locale.  Under
        # Wine the C locale would also stop Wine itself from naming host
        # files outside ASCII, which says nothing about Windows: there the
        # names stay UTF-8 for Wine, and the program still sets none.
        locale = "C" if native else "C.UTF-8"
        env, drop = (({"LC_ALL": locale}, ("LANG", "LC_CTYPE")) if "UTF-8" in what
                     else (None, ()))
        f, s = both_paths(tmp, what, path, fmt, "ok-1-x", env=env, drop=drop)
        if not native and archive_cases.has_links(want):
            continue  # Windows may copy links, and cannot copy one to a folder
        for o in (f, s):
            check(f"accepted: {what} ({o.root.name} path)", o.ok and not
                  archive_cases.expected_problems(o.folder, want, native),
                  o.error or archive_cases.expected_problems(o.folder, want, native))


def main():
    with tempfile.TemporaryDirectory() as d:
        tmp = pathlib.Path(d)
        test_formats(tmp)
        test_hostile(tmp)
        test_details(tmp)
        test_more_hostile(tmp)
        test_name_shown_escaped(tmp)
        test_accepted(tmp)
    return check.report()


if __name__ == "__main__":
    sys.exit(main())
