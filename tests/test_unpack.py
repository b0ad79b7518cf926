#!/usr/bin/env python3
"""Unpacking into the store: the formats cfapkg reads (zip, 7z where bsdtar
can make one, tar.gz/xz/bz2/zst, .deb), leading folders stripped, a
manifest of every file with its SHA-256; and every hostile archive refused
with nothing written outside the staging folder and no store folder left."""
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

import harness

TOOL = sys.argv[1]
check = harness.Checks()
FILES = {"pkg/bin/zluda.exe": b"MZ" + b"x" * 5000, "pkg/lib/cublas64_11.dll": b"dll" * 3000,
         "pkg/README.txt": "日本語 ü\n".encode()}


def unpack(root, archive, fmt, name, *extra):
    r = harness.run(TOOL, str(root), str(archive), fmt, name, *extra)
    try:
        return r.returncode, json.loads(r.stdout)
    except json.JSONDecodeError:
        return r.returncode, {"error": r.stdout + r.stderr}


def make_tar(path, mode, members):
    with tarfile.open(path, mode) as t:
        for info, data in members:
            t.addfile(info, io.BytesIO(data) if data is not None else None)


def reg(name, data):
    i = tarfile.TarInfo(name)
    i.size = len(data)
    i.mode = 0o755
    return i, data


def special(name, kind, link=""):
    i = tarfile.TarInfo(name)
    i.type = kind
    i.linkname = link
    return i, None


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
        root = tmp / f"root-{fmt}"
        rc, res = unpack(root, path, fmt, "pkg-1-abc", "1")
        store = root / "store" / "pkg-1-abc"
        ok = rc == 0 and all((store / n.split("/", 1)[1]).read_bytes() == d
                             for n, d in FILES.items())
        check(f"unpack {fmt}", ok, json.dumps(res))
        if not ok:
            continue
        manifest = json.loads((store / ".cfapkg" / "manifest.json").read_text())
        want = {n.split("/", 1)[1]: hashlib.sha256(d).hexdigest() for n, d in FILES.items()}
        got = {f["path"]: f["sha256"] for f in manifest["files"]}
        check(f"manifest {fmt}", got == want, json.dumps(manifest))
        check(f"no staging left {fmt}", [p.name for p in (root / "store").iterdir()]
              == ["pkg-1-abc"])
    rc, res = unpack(tmp / "root-zip", cases["zip"], "zip", "pkg-1-abc", "1")
    check("a second unpack finds it done", rc == 0 and res.get("existed"), json.dumps(res))


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
        root = tmp / "root-hostile"
        rc, res = unpack(root, path, fmt, "bad-1-x")
        store = root / "store"
        left = [p.name for p in store.iterdir()] if store.exists() else []
        check(f"refused: {what}", rc == 1 and "refused" in res.get("error", "")
              and str(path.name) in res.get("error", ""), json.dumps(res))
        check(f"nothing left: {what}", left == [] and list(outside.iterdir()) == []
              and not (tmp / "evil").exists(), f"{left} {list(outside.iterdir())}")
    big = tmp / "big.tar"
    make_tar(big, "w", [reg("pkg/a", bytes(300_000))])
    rc, res = unpack(tmp / "root-cap", big, "tar", "cap-1-x", "0", "100000")
    check("size cap", rc == 1 and "size cap" in res.get("error", ""), json.dumps(res))


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
    root = tmp / "root-details"
    rc, res = unpack(root, path, "tar.gz", "det-1-x", "1")
    store = root / "store" / "det-1-x"
    check("unpack details", rc == 0, json.dumps(res))
    if rc == 0:
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
    rc, res = unpack(tmp / "root-crc", bad, "zip", "crc-1-x", "1")
    left = list((tmp / "root-crc" / "store").iterdir()) if (tmp / "root-crc" / "store").exists() else []
    check("a wrong CRC-32 is refused when the hash was not pinned", rc == 1 and left == [],
          json.dumps(res))


def main():
    with tempfile.TemporaryDirectory() as d:
        tmp = pathlib.Path(d)
        test_formats(tmp)
        test_hostile(tmp)
        test_details(tmp)
    return check.report()


if __name__ == "__main__":
    sys.exit(main())
