"""Archives for the unpack tests, built here with tarfile and zipfile: the
hostile ones cfapkg must refuse, and the awkward but honest ones it must
unpack the same way from the file and from a stream."""
import io
import os
import shutil
import struct
import subprocess
import tarfile
import zipfile
import zlib

# Regular file, symbolic link: the Unix mode a zip keeps in the high half
# of an entry's external attributes (when made on Unix, create_system 3).
ZIP_FILE, ZIP_LINK = 0o100000, 0o120000


def make_tar(path, mode, members):
    with tarfile.open(path, mode) as t:
        for info, data in members:
            t.addfile(info, io.BytesIO(data) if data is not None else None)
    return path


def reg(name, data, mode=0o755):
    i = tarfile.TarInfo(name)
    i.size = len(data)
    i.mode = mode
    return i, data


def special(name, kind, link=""):
    i = tarfile.TarInfo(name)
    i.type = kind
    i.linkname = link
    return i, None


def tar_dir(name):
    return special(name, tarfile.DIRTYPE)


def symlink(name, target):
    return special(name, tarfile.SYMTYPE, target)


def zip_entry(name, data, unix_mode=None):
    """A zip member; unix_mode (type and permission bits) as Info-ZIP on
    Unix writes it."""
    i = zipfile.ZipInfo(name)
    if unix_mode is not None:
        i.create_system = 3
        i.external_attr = unix_mode << 16
    return i, data


def make_zip(path, members, fileobj=None, method=zipfile.ZIP_STORED):
    with zipfile.ZipFile(fileobj or path, "w", method) as z:
        for info, data in members:
            info.compress_type = method
            z.writestr(info, data)
    return path


class _WriteOnly:
    """A file object that can only be written, as a pipe: zipfile then
    writes each entry's sizes and CRC after its data (data descriptors)."""

    def __init__(self, f):
        self.f = f

    def write(self, b):
        return self.f.write(b)

    def flush(self):
        self.f.flush()


# A long name: 4096 bytes in components that each fit a file system.
LONG_NAME = "pkg/" + ("d" * 99 + "/") * 40 + "f" * 92
assert len(LONG_NAME) == 4096


def encrypted_zip(tmp):
    """A zip whose one entry is encrypted: by zip -P where there is zip;
    else a stored zip with the encryption bit set in both headers."""
    path = tmp / "encrypted.zip"
    if shutil.which("zip"):
        src = tmp / "encrypted-src"
        (src / "pkg").mkdir(parents=True)
        (src / "pkg" / "secret.txt").write_text("secret\n")
        subprocess.run(["zip", "-q", "-P", "secret", "-r", str(path), "pkg"], cwd=src,
                       check=True)
        return path
    raw = bytearray(make_zip(path, [zip_entry("pkg/secret.txt", b"secret\n")]).read_bytes())
    for sig, flag_at in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):
        at = raw.index(sig) + flag_at
        struct.pack_into("<H", raw, at, struct.unpack_from("<H", raw, at)[0] | 1)
    path.write_bytes(bytes(raw))
    return path


def _patched_zip(path, members, patch):
    """A stored zip of members, then patch(raw, local, central) edits its
    bytes (local, central: each list's offsets of its entries' records)."""
    raw = bytearray(make_zip(path, members).read_bytes())
    local = [i for i in range(len(raw)) if raw.startswith(b"PK\x03\x04", i)]
    central = [i for i in range(len(raw)) if raw.startswith(b"PK\x01\x02", i)]
    patch(raw, local, central)
    path.write_bytes(bytes(raw))
    return path


def _unicode_path(name, crc_of):
    """Info-ZIP's Unicode path field (0x7075): name, standing for the name
    whose CRC-32 crc_of is."""
    body = b"\x01" + struct.pack("<I", zlib.crc32(crc_of)) + name
    return struct.pack("<HH", 0x7075, len(body)) + body


def disagreeing_zips(tmp):
    """Zips whose local headers and central directory name, size or type an
    entry differently, or whose name a C string would cut: what ->
    (archive, "zip", text its error must contain)."""
    out = {}
    ok = [zip_entry("pkg/ok.txt", b"ok\n", ZIP_FILE | 0o644)]

    def central_name(raw, local, central):  # "cfa-evil-cd-ok.txt" in the local header
        raw[central[0] + 46:central[0] + 46 + 18] = b"../cfa-evil-cd.txt"

    def central_crc(raw, local, central):
        raw[central[0] + 16] ^= 0xff

    def central_size(raw, local, central):
        struct.pack_into("<I", raw, central[0] + 24, 4)

    def central_folder(raw, local, central):  # a folder in Unix mode bits
        struct.pack_into("<I", raw, central[0] + 38, (0o040755 << 16) | 0x10)

    def nul_name(raw, local, central):  # "ok.txt\0../../x" in both lists
        for at in (local[0] + 30 + 10, central[0] + 46 + 10):
            raw[at] = 0

    def unlisted(raw, local, central):  # the first entry left out of the directory
        cut = central[1] - central[0]
        del raw[central[0]:central[1]]
        end = raw.index(b"PK\x05\x06")
        for at, less in ((8, 1), (10, 1), (12, cut)):
            struct.pack_into("<H" if at < 12 else "<I", raw, end + at,
                             struct.unpack_from("<H" if at < 12 else "<I", raw, end + at)[0] - less)

    cases = {"central directory names another file": (
                 [zip_entry("cfa-evil-cd-ok.txt", b"ok\n")], central_name,
                 "another name than the central directory"),
             "central directory gives another CRC-32": (ok, central_crc, "CRC-32"),
             "central directory gives another size": (ok, central_size, "size"),
             "central directory says a folder": (ok, central_folder, "kind (folder or file)"),
             "a local header the central directory leaves out": (
                 [zip_entry("pkg/hidden.txt", b"h"), *ok], unlisted, "does not list"),
             "a NUL in the name": ([zip_entry("pkg/ok.txt\x01../../x", b"x")], nul_name,
                                   "NUL")}
    for i, (what, (members, patch, text)) in enumerate(cases.items()):
        out[what] = (_patched_zip(tmp / f"disagree{i}.zip", members, patch), "zip", text)
    # As libarchive's zip_msdos.zip: a folder made on DOS, marked only by
    # its attribute in the central directory, and a file in it.
    folder = zipfile.ZipInfo("def")
    folder.create_system, folder.external_attr = 0, 0x10
    out["a DOS folder without its slash, and a file in it"] = (
        make_zip(tmp / "msdos.zip", [(folder, b""), zip_entry("def/foo", b"x")]), "zip",
        "inside an entry the archive gave as a file")
    # libarchive takes a Unicode path field for the name; unzip and Python
    # only when its CRC-32 is the name's: here they would see two files.
    info = zipfile.ZipInfo("pkg/ok.txt")
    info.extra = _unicode_path(b"pkg/evil.txt", b"another name")
    out["Unicode path naming another file"] = (
        make_zip(tmp / "unicode-path.zip", [(info, b"x")]), "zip", "Unicode path")
    return out


def refused(tmp):
    """what -> (archive, format, text its error must contain or None)."""
    out = disagreeing_zips(tmp)
    for dev in ("bin/CON", "bin/nul.dll", "bin/AUX.txt", "bin/com1", "bin/LPT9.txt",
                "bin/CONIN$"):
        z = tmp / f"device-{dev[4:].replace('$', '_')}.zip"
        out[f"Windows device name {dev}"] = (
            make_zip(z, [zip_entry("bin/ok.txt", b"ok"), zip_entry(dev, b"x")]), "zip", None)
    for what, target in (("zip symlink to /etc", "/etc"), ("zip symlink up", "../../x")):
        z = tmp / f"{what.replace(' ', '-').replace('/', '')}.zip"
        out[what] = (make_zip(z, [zip_entry("bin/link", target.encode(),
                                            ZIP_LINK | 0o777)]), "zip", None)
    tars = {
        # Each link's text stays inside, but through q the chain leaves.
        "link chain escapes": [symlink("q", "."), symlink("etc", "q/q/q/../../../etc")],
        "link through a link up": [symlink("q", "."), symlink("p", "q/..")],
        "file written through a link": [tar_dir("sub"), symlink("a", "sub"),
                                        reg("a/x", b"x", 0o644)],
        "link under a link": [symlink("d", "."), symlink("d/e", "x"), reg("x", b"x", 0o644)],
        "link loop": [symlink("l1", "l2"), symlink("l2", "l1")],
    }
    for i, (what, members) in enumerate(tars.items()):
        out[what] = (make_tar(tmp / f"links{i}.tar", "w", members), "tar", None)
    out["encrypted zip"] = (encrypted_zip(tmp), "zip", "encrypted archives are not supported")
    out["a link target of 6,000 bytes"] = (make_tar(tmp / "longtarget.tar", "w", [
        reg("pkg/ok.txt", b"ok", 0o644), symlink("pkg/link", "./" * 2997 + "ok.txt")]),
        "tar", "target is too long")
    out["4096-byte name (tar)"] = (make_tar(tmp / "longname.tar", "w",
                                            [reg(LONG_NAME, b"x", 0o644)]), "tar", "too long")
    out["4096-byte name (zip)"] = (make_zip(tmp / "longname.zip",
                                            [zip_entry(LONG_NAME, b"x")]), "zip", "too long")
    return out


UTF8_NAME = "données/日本語.txt"


def accepted(tmp):
    """what -> (archive, format, {path: expected ("file", mode, bytes) or
    ("symlink", target)}); modes are checked on native builds only."""
    out = {}
    z = make_zip(tmp / "modes.zip", [zip_entry("bin/a", b"#!/bin/sh\n", ZIP_FILE | 0o755),
                                      zip_entry("bin/b.txt", b"text\n", ZIP_FILE | 0o644),
                                      zip_entry("bin/l", b"a", ZIP_LINK | 0o777)],
                 method=zipfile.ZIP_DEFLATED)
    out["zip modes and link"] = (z, "zip", {"bin/a": ("file", 0o755, b"#!/bin/sh\n"),
                                            "bin/b.txt": ("file", 0o644, b"text\n"),
                                            "bin/l": ("symlink", "a")})
    z = make_zip(tmp / "utf8.zip", [zip_entry(UTF8_NAME, "é\n".encode(), ZIP_FILE | 0o644)],
                 method=zipfile.ZIP_DEFLATED)
    out["zip UTF-8 names"] = (z, "zip", {UTF8_NAME: ("file", 0o644, "é\n".encode())})
    t = make_tar(tmp / "inside-links.tar", "w",
                 [reg("lib/libx.so.1", b"ELF", 0o755), symlink("lib/libx.so", "libx.so.1"),
                  symlink("cur", "lib/../lib")])
    out["tar links inside"] = (t, "tar", {"lib/libx.so": ("symlink", "libx.so.1"),
                                          "cur": ("symlink", "lib/../lib"),
                                          "cur/libx.so": ("file", 0o755, b"ELF")})
    path = tmp / "unseekable.zip"
    with open(path, "wb") as f:
        with zipfile.ZipFile(_WriteOnly(f), "w") as z:
            z.writestr(zip_entry("pkg/a.txt", b"a" * 5000, ZIP_FILE | 0o644)[0], b"a" * 5000,
                       compress_type=zipfile.ZIP_DEFLATED)
            z.writestr(zip_entry("pkg/b.bin", b"b" * 300, ZIP_FILE | 0o755)[0], b"b" * 300,
                       compress_type=zipfile.ZIP_STORED)
    out["zip with data descriptors"] = (path, "zip", {
        "pkg/a.txt": ("file", 0o644, b"a" * 5000), "pkg/b.bin": ("file", 0o755, b"b" * 300)})
    members = [zip_entry("pkg/a.txt", b"hello\n", ZIP_FILE | 0o644)]
    padded = make_zip(tmp / "padded.zip", members)
    padded.write_bytes(padded.read_bytes() + bytes(4096))
    out["zip with padding after the end"] = (padded, "zip", {})
    stub = tmp / "sfx.zip"
    with open(stub, "wb") as f:
        f.write(b"MZ" + bytes(4094))  # as a self-extractor's program
        make_zip(None, members, fileobj=f)
    out["zip after a self-extractor stub"] = (stub, "zip", {})
    return out


def has_links(want):
    return any(w[0] == "symlink" for w in want.values())


def expected_problems(folder, want, native):
    """'' or how folder differs from want (see accepted).  Modes are
    checked natively only (Wine emulates them)."""
    bad = []
    for rel, what in want.items():
        p = folder / rel
        if what[0] == "symlink":
            if not p.is_symlink() or os.readlink(p) != what[1]:
                bad.append(f"{rel}: not a link to {what[1]}")
            continue
        if not p.is_file() or p.read_bytes() != what[2]:
            bad.append(f"{rel}: missing or other content")
        elif native and p.stat().st_mode & 0o777 != what[1] & ~0o222:
            # The archive's bits, less the write bits: store files are read-only.
            bad.append(f"{rel}: mode {p.stat().st_mode & 0o777:04o}, "
                       f"want {what[1] & ~0o222:04o}")
    return "; ".join(bad)
