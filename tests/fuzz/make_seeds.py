"""Writes the seed corpora of the fuzz harnesses into tests/fuzz/corpus/NAME/.

    python3 tests/fuzz/make_seeds.py

Small valid inputs (and a few refused ones) for each harness, made from the
repository's recipes and fixtures and from archives built here with
tarfile and zipfile.  The output is committed; run this again after a
format changes.  Every folder is rewritten from scratch.
"""
import gzip
import hashlib
import io
import json
import lzma
import pathlib
import re
import shutil
import sys
import tarfile
import zipfile

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parent.parent
OUT = HERE / "corpus"
sys.path.insert(0, str(REPO / "tests"))


def put(harness, name, data):
    folder = OUT / harness
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_bytes(data if isinstance(data, bytes) else data.encode())


def sha(text):
    return hashlib.sha256(text.encode()).hexdigest()


def json_seeds():
    for f in sorted((REPO / "recipes").glob("*.json")):
        put("json", f.name, f.read_bytes())
        if f.name != "gpus.json":
            put("recipe", f.name, f.read_bytes())
    for f in sorted((REPO / "tests" / "data" / "bad").glob("*.json")):
        put("json", "bad-" + f.name, f.read_bytes())
        put("recipe", "bad-" + f.name, f.read_bytes())
    for f in sorted((REPO / "tests" / "data" / "runtime").glob("*.json")):
        put("json", "runtime-" + f.name, f.read_bytes())
    small = {
        "nested": '{"a": {"b": [1, 2.5, -3e2, true, null, "x"], "c": {"d": []}}}',
        "unicode": '{"k\\u00e9y": "\\ud83d\\ude00", "esc": "a\\"b\\\\c\\n"}',
        "numbers": '{"i": 1000, "big": 1e15, "neg": -1000, "frac": 0.5, "exp": 2E+3}',
        "deep": "[" * 64 + "]" * 64,
        "truncated": '{"format": 1, "name": "x", "versions": [',
        "strings": '{"list": ["a", "", "b"], "empty": "", "s": "text"}',
    }
    for name, text in small.items():
        put("json", name + ".json", text)


def gpus_seeds():
    put("gpus", "gpus.json", (REPO / "recipes" / "gpus.json").read_bytes())
    put("gpus", "minimal.json", json.dumps({
        "format": 1,
        "targets": [{"gfx": "gfx1200", "generation": "RDNA4", "kfd": 120000,
                     "status": "validated", "min_hip_sdk": "6.4.2"},
                    {"gfx": "gfx1150", "generation": "RDNA3.5", "status": "experimental",
                     "apu": True}],
        "devices": [{"pci": "1002:7590", "chip": "Navi 44", "gfx": "gfx1200",
                     "name": "AMD Radeon RX 9060 XT"},
                    {"pci": "1002:150e", "revision": "c1", "chip": "Strix", "gfx": "gfx1150",
                     "name": "AMD Radeon 890M"}]}, indent=1))


def lock_seeds():
    digest = sha("zluda")
    package = {"name": "zluda", "version": "7-preview.10", "kind": "package",
               "requested": True, "url": "https://example.org/zluda.zip",
               "mirrors": ["https://mirror.example.org/zluda.zip"], "sha256": digest,
               "size": 1234, "format": "zip", "strip": 1,
               "store": "zluda-7-preview.10-" + digest[:8], "gfx": ["gfx1200", "gfx1201"],
               "layout": [{"path": "bin/nvcuda.dll", "as": "nvcuda.dll"}],
               "launcher": "zluda.exe",
               "runtime": {"path": ["."], "stage": ["*.dll"],
                           "env": {"ZLUDA_LOG": "0", "HIP_PATH": "{prefix}"}}}
    system = {"name": "hip-sdk", "version": "6.4.2", "kind": "system", "requested": False}
    meta = {"name": "pytorch-cuda-stack", "version": "1", "kind": "meta", "requested": True}
    user = {"name": "cuda-overlay-reference", "version": "1", "kind": "user",
            "requested": False, "user_files": [{"name": "cublas64_11.dll", "sha256": sha("u")}]}
    facts = {"os": "windows", "arch": "x86_64", "gpu": "gfx1200", "driver": "25.8.1",
             "hip_runtimes": [6, 7], "hip_sdks": ["6.4.2"]}
    full = {"format": "cfapkg-lock", "version": 1, "facts": facts,
            "requests": ["pytorch-cuda-stack", "zluda==7-preview.10"],
            "packages": [system, package, meta, user]}
    put("lockfile", "full.lock", json.dumps(full, indent=2))
    put("lockfile", "empty.lock", json.dumps({"format": "cfapkg-lock", "version": 1,
                                              "facts": {}, "requests": [], "packages": []}))
    bad = dict(full, packages=[dict(package, store="../../etc")])
    put("lockfile", "bad-store.lock", json.dumps(bad))
    put("lockfile", "future.lock", json.dumps(dict(full, version=9)))


def facts_seeds():
    seeds = {
        "full": {"os": "windows", "gpu": "gfx1200", "driver": "25.8.1",
                 "hip_runtimes": [6, 7], "hip_sdks": ["6.4.2"]},
        "linux": {"os": "linux", "arch": "x86_64", "gpu": "gfx1100", "driver": "6.12.12",
                  "hip_runtimes": [], "hip_sdks": ["6.4.2", "7.0.0-rc1"]},
        "minimal": {"gpu": "gfx1150"},
        "bad-key": {"gpu": "gfx1200", "gpus": []},
        "bad-driver": {"gpu": "gfx1200", "driver": "new"},
        "numbers": {"hip_runtimes": [6.0, "7"], "hip_sdks": [6, "none"]},
    }
    for name, doc in seeds.items():
        put("facts", name + ".json", json.dumps(doc))


def version_seeds():
    lines = [
        ("debian", "7-preview.10\n5.3.0+dfsg-2\n1:2.3-1"),
        ("debian-tilde", "1.0-1~bpo1\n1.0-1\n1.0-1.1"),
        ("debian-epoch", "1:2.3-1\n5.2.3-2\nrocm == 5.2.3-2"),
        ("debian-tag", "2.0~rc1-1\n2.0-rc1\np>=2.0~rc-1,<2.0-1"),
        ("debian-label", "5.3.0+dfsg+1-2\n5.3.0-2\nrocm==1:5.*"),
        ("previews", "6-preview.69\n6-preview.79\nzluda>=6-preview.69,<7"),
        ("labels", "2.3.0+cu118\n2.3.0\nlibtorch-cuda==2.3.0"),
        ("alpha", "7.14.0a20260612\n7.14.0rc1\np>=7.14.0a1, <7.15"),
        ("wildcard", "6.4.2\n6.4\nhip-sdk==6.4.*"),
        ("post", "1.0.post2\n1.0\n1.0-dev3"),
        ("six", "1.2.3.4.5.6\n1.2.3.4.5.6.7\ncublas = 11"),
        ("big", "999999999\n1000000000\np!=999999999"),
        ("mixed", "1.0-RC_2\n1.0.beta.3\np<=1.0_rc2,>0.9,!=0.95"),
        ("label-order", "1+a.b\n1+a_b\n1+A"),
    ]
    for name, text in lines:
        put("version", name, text)


def safe_path_seeds():
    names = ["pkg/bin/tool", "pkg/./lib//libx.so.1", "../etc/passwd", "/abs/path",
             "C:\\Windows\\x", "a\\b\\c", "pkg/.cfapkg/manifest.json", "bin/con.txt",
             "bin/LPT1", "bin/com\u00b9", "dir/name. ", "a/b:stream", "./x/../y",
             "\\\\server\\share", "pkg/" + "d" * 255 + "/f"]
    for i, name in enumerate(names):
        put("safe_path", f"name{i:02d}", bytes([i % 4]) + name.encode())


def sysfs_seeds():
    roots = REPO / "tests" / "data" / "sysroots"
    for root in sorted(p for p in roots.iterdir() if p.is_dir()):
        out = bytearray()
        for path in sorted(root.rglob("*")):
            rel = path.relative_to(root).as_posix()
            if path.is_dir() and not any(path.iterdir()):
                out += f">{rel}/\n".encode()
            elif path.is_file():
                data = path.read_bytes()
                out += f">{rel}\n".encode() + data + (b"" if data.endswith(b"\n") else b"\n")
        put("sysfs", root.name, bytes(out))
    # HSA_OVERRIDE_GFX_VERSION over a real tree.
    base = OUT / "sysfs" / "rx6800"
    put("sysfs", "override", b">=override\n10.3.0\n" + (base.read_bytes() if base.exists() else b""))


def hipinfo_seeds():
    put("hipinfo", "two-gpus.txt",
        (REPO / "tests" / "data" / "windows" / "hipinfo-two-gpus.txt").read_bytes())
    put("hipinfo", "lines.txt", "\n".join([
        "PCI\\VEN_1002&DEV_744C&SUBSYS_0E3A1002&REV_C8", "pci\\ven_1002&dev_7590",
        "ROOT\\BasicDisplay", "32.0.21025.1024", "11.0.0", "10.3.0", "120001", "90010",
        "device#  0", "Name: X", "gcnArchName: gfx90a:sramecc+:xnack-",
        "totalGlobalMem: 512.00 MB"]))
    put("hipinfo", "no-device.txt", "hipErrorNoDevice\r\n")


def tar_bytes(members, mode="w"):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode=mode) as t:
        for info, data in members:
            t.addfile(info, io.BytesIO(data) if data is not None else None)
    return buf.getvalue()


def member(name, data=None, kind=tarfile.REGTYPE, link="", mode=0o644):
    i = tarfile.TarInfo(name)
    i.type, i.linkname, i.mode = kind, link, mode
    if data is not None:
        i.size = len(data)
    return i, data


def zip_bytes(members, method=zipfile.ZIP_DEFLATED):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", method) as z:
        for name, data, unix in members:
            i = zipfile.ZipInfo(name)
            if unix is not None:
                i.create_system, i.external_attr = 3, unix << 16
            z.writestr(i, data, compress_type=method)
    return buf.getvalue()


def ar_bytes(files):
    out = bytearray(b"!<arch>\n")
    for name, data in files:
        out += f"{name:<16}{0:<12}{0:<6}{0:<6}{0o100644:<8o}{len(data):<10}`\n".encode()
        out += data + (b"\n" if len(data) % 2 else b"")
    return bytes(out)


def unpack_seeds():
    plain = [member("pkg/", kind=tarfile.DIRTYPE, mode=0o755),
             member("pkg/bin/tool", b"#!/bin/sh\necho hi\n", mode=0o755),
             member("pkg/lib/libx.so.1", b"ELF"),
             member("pkg/lib/libx.so", kind=tarfile.SYMTYPE, link="libx.so.1"),
             member("pkg/lib/hard", kind=tarfile.LNKTYPE, link="pkg/lib/libx.so.1")]
    put("unpack", "plain.tar", tar_bytes(plain))
    put("unpack", "plain.tar.gz", gzip.compress(tar_bytes(plain), mtime=0))
    put("unpack", "plain.tar.xz", lzma.compress(tar_bytes(plain)))
    hostile = {
        "dotdot.tar": [member("../escape", b"x")],
        "absolute.tar": [member("/tmp/escape", b"x")],
        "link-out.tar": [member("out", kind=tarfile.SYMTYPE, link="../../../x")],
        "link-chain.tar": [member("q", kind=tarfile.SYMTYPE, link="."),
                           member("etc", kind=tarfile.SYMTYPE, link="q/q/../../etc")],
        "through-link.tar": [member("sub/", kind=tarfile.DIRTYPE, mode=0o755),
                             member("a", kind=tarfile.SYMTYPE, link="sub"),
                             member("a/x", b"x")],
        "device.tar": [member("dev/null", kind=tarfile.CHRTYPE)],
        "fifo.tar": [member("pipe", kind=tarfile.FIFOTYPE)],
        "setuid.tar": [member("bin/su", b"x", mode=0o4755)],
        "dup-case.tar": [member("File", b"a"), member("file", b"b")],
        "hard-out.tar": [member("h", kind=tarfile.LNKTYPE, link="../x")],
    }
    for name, members in hostile.items():
        put("unpack", name, tar_bytes(members))
    put("unpack", "modes.zip", zip_bytes([("bin/a", b"#!/bin/sh\n", 0o100755),
                                          ("bin/b.txt", b"text\n", 0o100644),
                                          ("bin/l", b"a", 0o120777)]))
    put("unpack", "stored.zip", zip_bytes([("pkg/a.txt", b"a" * 300, None),
                                           ("pkg/dir/", b"", 0o40755)], zipfile.ZIP_STORED))
    put("unpack", "link-out.zip", zip_bytes([("bin/link", b"../../x", 0o120777)]))
    put("unpack", "backslash.zip", zip_bytes([("pkg\\..\\..\\x", b"x", None)]))
    data = gzip.compress(tar_bytes(plain), mtime=0)
    control = gzip.compress(tar_bytes([member("./control", b"Package: x\n")]), mtime=0)
    put("unpack", "package.deb", ar_bytes([("debian-binary", b"2.0\n"),
                                           ("control.tar.gz", control),
                                           ("data.tar.gz", data)]))
    put("unpack", "xz.deb", ar_bytes([("debian-binary", b"2.0\n"),
                                      ("data.tar.xz", lzma.compress(tar_bytes(plain)))]))
    put("unpack", "no-data.deb", ar_bytes([("debian-binary", b"2.0\n")]))
    # The unpack tests' own cases, where that module is at hand.
    try:
        import tempfile
        import archive_cases
        with tempfile.TemporaryDirectory() as tmp:
            cases = {**archive_cases.refused(pathlib.Path(tmp)),
                     **archive_cases.accepted(pathlib.Path(tmp))}
            for what, case in sorted(cases.items()):
                path = case[0]
                name = re.sub(r"[^a-z0-9]+", "-", what.lower()).strip("-")
                if path.stat().st_size <= 64 * 1024:
                    put("unpack", f"case-{name}{path.suffix}", path.read_bytes())
    except (ImportError, AttributeError, OSError) as e:
        print(f"make_seeds: the unpack tests' cases were left out: {e}", file=sys.stderr)


SIGNATURE = """-----BEGIN PGP SIGNATURE-----

iHUEARYIAB0WIQSRSJXmBIL1EupTV8c0eI1FVcsquQUCZ0yDCwAKCRA0eI1FVcsq
uS1xAP9zZXRlZCBzaWduYXR1cmUgYnl0ZXMsIG5vdCBhIHJlYWwgb25lAP4=
=abcd
-----END PGP SIGNATURE-----
"""


def release_text(extra=""):
    plain = b"Package: cfa-hello\nVersion: 1.0-1\n"
    lines = ["Origin: cfapkg-test", "Suite: testing", "Codename: testing",
             "Date: Fri, 30 Oct 2026 08:08:01 UTC", "Valid-Until: Fri, 06 Nov 2026 08:08:01 UTC",
             "Acquire-By-Hash: yes", "Architectures: amd64", "Components: main", "SHA256:",
             f" {hashlib.sha256(plain).hexdigest()} {len(plain):>8} main/binary-amd64/Packages",
             f" {'ab' * 32} {1234:>8} main/binary-amd64/Packages.xz"]
    return "\n".join(lines) + "\n" + extra


def inrelease_seeds():
    """InRelease files (the signature block's bytes are not a real
    signature: the reader checks the shape, gpgv the signature)."""
    body = release_text()
    signed = "-----BEGIN PGP SIGNED MESSAGE-----\nHash: SHA512\n\n" + body + SIGNATURE
    put("inrelease", "inrelease.txt", signed)
    put("inrelease", "release.txt", body)
    put("inrelease", "crlf.txt", signed.replace("\n", "\r\n"))
    put("inrelease", "dash-escaped.txt", signed.replace("Origin:", "- -Origin:"))
    put("inrelease", "two-messages.txt", signed + signed)
    put("inrelease", "after.txt", signed + "\nSHA256:\n evil\n")
    put("inrelease", "no-date.txt", body.replace("Date: Fri, 30 Oct 2026 08:08:01 UTC\n", ""))
    put("inrelease", "twice.txt", body + "Date: Sat, 31 Oct 2026 08:08:01 UTC\n")
    put("inrelease", "dates.txt", "\n".join([
        "Fri, 30 Oct 2026 08:08:01 UTC", "30 Oct 2026 08:08:01 +0100", "1 Jan 1970 00:00:00 Z",
        "Mon, 29 Feb 2028 23:59:60 GMT", "31 Apr 2026 00:00:00 UTC", "Tue, 1 Jan 2030 01:02:03 -0930"]))


def gpgstatus_seeds():
    """gpgv --status-fd output of the cases the verdict tells apart, with
    made-up fingerprints and key IDs."""
    a, b = "3E915D75C15C2DF47469BFD55645FEAC878326F8", "B8E5F13176D2A7A75220028078DBA3BC47EF2265"

    def sig(result, fpr, hash_algo=8, primary=None, valid=True):
        lines = ["[GNUPG:] NEWSIG", f"[GNUPG:] KEY_CONSIDERED {fpr} 0",
                 f"[GNUPG:] {result} {fpr[-16:]} cfapkg test <a@example.org>"]
        if valid:
            lines.append(f"[GNUPG:] VALIDSIG {fpr} 2026-10-30 1793347767 0 4 0 22 {hash_algo} 01 "
                         f"{primary or fpr}")
        return lines

    cases = {
        "good": sig("GOODSIG", a), "two": sig("GOODSIG", a) + sig("GOODSIG", b, primary=a),
        "expkeysig": ["[GNUPG:] KEYEXPIRED 1577923200"] + sig("EXPKEYSIG", a),
        "expsig": sig("EXPSIG", a), "revkeysig": sig("REVKEYSIG", a),
        "badsig": sig("BADSIG", a, valid=False), "sha1": sig("GOODSIG", a, hash_algo=2),
        "no-pubkey": ["[GNUPG:] NEWSIG", f"[GNUPG:] ERRSIG {a[-16:]} 22 8 01 1796154908 9 {a}",
                      f"[GNUPG:] NO_PUBKEY {a[-16:]}"],
        "good-and-unknown": sig("GOODSIG", b) + ["[GNUPG:] NEWSIG",
                                                 f"[GNUPG:] ERRSIG {a[-16:]} 1 8 01 1 9"],
        "no-newsig": [f"[GNUPG:] GOODSIG {a[-16:]} x", f"[GNUPG:] VALIDSIG {a} d 1 0 4 0 1 10 01"],
    }
    for name, lines in cases.items():
        put("gpgstatus", name, "\n".join(["[GNUPG:] PLAINTEXT 74 0 "] + lines) + "\n")
    put("gpgstatus", "two-plaintexts", "[GNUPG:] PLAINTEXT 74 0 \n" * 2 + "\n".join(sig("GOODSIG", a)))


def pgpkey_seeds():
    """Keys made by gpg in a home folder of its own, binary and armored,
    and packets written here in both header formats."""
    import subprocess
    import tempfile
    old = bytes([0x99, 0x00, 0x04]) + bytes([4, 0, 0, 0, 0])  # old format, 2-byte length
    new = bytes([0xC6, 0xFF, 0, 0, 0, 5]) + bytes([4, 0, 0, 0, 0])  # new format, 5-byte length
    put("pgpkey", "old-format.bin", old)
    put("pgpkey", "new-format.bin", new + bytes([0xCD, 0x01, 0x41]))
    put("pgpkey", "partial.bin", bytes([0xC6, 0xE1]) + b"xx")
    put("pgpkey", "not-armor.txt", "hello\n")
    with tempfile.TemporaryDirectory() as home:
        def gpg(*args):
            return subprocess.run(["gpg", "--homedir", home, "--batch", "--yes", "--pinentry-mode",
                                   "loopback", "--passphrase", "", *args], check=True,
                                  capture_output=True, timeout=60).stdout
        try:
            gpg("--quick-gen-key", "seed a <a@example.org>", "ed25519", "sign", "never")
            gpg("--quick-gen-key", "seed b <b@example.org>", "rsa2048", "sign", "never")
        except (OSError, subprocess.SubprocessError) as e:
            print(f"make_seeds: the pgpkey seeds made by gpg were left out: {e}", file=sys.stderr)
            return
        put("pgpkey", "ed25519.gpg", gpg("--export", "a@example.org"))
        put("pgpkey", "rsa.asc", gpg("--armor", "--export", "b@example.org"))
        put("pgpkey", "two.asc", gpg("--armor", "--export"))
        subprocess.run(["gpgconf", "--homedir", home, "--kill", "all"], capture_output=True,
                       timeout=60)


def debfind_seeds():
    """Packages indexes: stanzas as Debian and AMD write them, several
    versions of one name (the newest taken by name alone), and broken
    entries."""
    def stanza(name, version, arch="amd64", extra="", sha=None, filename=None):
        sha = sha or hashlib.sha256(f"{name} {version}".encode()).hexdigest()
        filename = filename or f"pool/main/{name[0]}/{name}/{name}_{version}_{arch}.deb"
        return (f"Package: {name}\nVersion: {version}\nArchitecture: {arch}\n"
                f"Depends: libc6 (>= 2.38), libstdc++6\nFilename: {filename}\nSize: 4321\n"
                f"SHA256: {sha}\nDescription: a package\n continued here\n{extra}")
    newest = [stanza("cfa-data", v) for v in
              ("1.0-1", "1.10-1", "1.9-1", "1:0.1-1", "1.10-1+b1", "1.0~rc1-1", "1.10-1")]
    put("debfind", "newest", "\n".join(newest))
    put("debfind", "amd", "\n".join([
        stanza("hip-runtime-amd", "6.4.43484.60402-120~24.04"),
        stanza("rocm-core", "6.4.2.60402-120~24.04"),
        stanza("rocm-core", "7.2.4.70204-9~24.04"),
        stanza("rocblas", "4.4.1.60402-120~24.04", arch="all")]))
    put("debfind", "long-runs", "\n".join([
        stanza("cfa-git", "0.0+git20240101123456-1"), stanza("cfa-git", "0.0+git20231231235959-1"),
        stanza("cfa-git", "0.0+git020240101123457-1")]) +
        "\n0.0+git20240101123456\n0.0+git9\n1.4294967301-1\n1.9-1\n1:2\n"
        "99999999999999999999:1\n")
    put("debfind", "crlf", "\n".join(newest[:2]).replace("\n", "\r\n"))
    put("debfind", "case", stanza("cfa-x", "1-1").replace("Filename:", "filename:")
        .replace("SHA256:", "sha256:"))
    put("debfind", "other-arch", stanza("cfa-x", "2-1", arch="arm64") + "\n" +
        stanza("cfa-x", "1-1"))
    put("debfind", "bad-filename", stanza("cfa-x", "1-1", filename="../../etc/passwd"))
    put("debfind", "bad-sha", stanza("cfa-x", "1-1", sha="xyz"))
    put("debfind", "no-size", stanza("cfa-x", "1-1").replace("Size: 4321\n", ""))
    put("debfind", "no-version", stanza("cfa-x", "1-1").replace("Version: 1-1\n", ""))
ELF_SOURCE = """#include <math.h>
double f(double x) { return sin(x); }
int g(void) { return 1; }
"""
ELF_VERSIONS = "GLIBC_2.2.5 { global: f; local: *; };\nGLIBC_2.41 { global: g; } GLIBC_2.2.5;\n"


def elf_seeds():
    """A small shared library built here (DT_NEEDED, SONAME, RUNPATH and
    version definitions, as a libc.so.6 has), cut short and with its
    dynamic section's offset broken."""
    import subprocess
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        t = pathlib.Path(tmp)
        (t / "a.c").write_text(ELF_SOURCE)
        (t / "v.map").write_text(ELF_VERSIONS)
        try:
            subprocess.run(["cc", "-shared", "-fPIC", "-o", str(t / "lib.so"),
                            "-Wl,-soname,libseed.so.1", f"-Wl,--version-script={t / 'v.map'}",
                            "-Wl,-rpath,$ORIGIN/../lib", "-Wl,-z,noseparate-code",
                            "-Wl,-z,max-page-size=4096", "-Wl,--build-id=none",
                            str(t / "a.c"), "-lm"], check=True)
            subprocess.run(["strip", "-s", str(t / "lib.so")], check=True)
        except (OSError, subprocess.CalledProcessError) as e:
            print(f"make_seeds: the ELF seeds were left out: {e}", file=sys.stderr)
            return
        data = (t / "lib.so").read_bytes()
    put("elf", "shared-library.so", data)
    put("elf", "cut-short.so", data[:len(data) // 3])
    broken = bytearray(data)
    broken[32:40] = (len(data) - 8).to_bytes(8, "little")  # e_phoff near the end
    put("elf", "program-headers-past-end.so", bytes(broken))
    put("elf", "not-elf.txt", "not an ELF file\n")


def deb_stanza(name, version, depends="", extra=""):
    digest = hashlib.sha256(f"{name} {version}".encode()).hexdigest()
    text = (f"Package: {name}\nVersion: {version}\nArchitecture: amd64\n"
            f"Filename: pool/main/{name[0]}/{name}/{name}_{version.split(':')[-1]}_amd64.deb\n"
            f"Size: {len(name) * 1000}\nSHA256: {digest}\n")
    if depends:
        text += f"Depends: {depends}\n"
    return text + extra


def debindex_seeds():
    """Packages indexes shaped like Debian's ROCm set (epochs, versioned
    constraints, alternatives, Provides, the C library floor, continuation
    lines), one whose closure cannot be met, and an InRelease."""
    comgr = deb_stanza("libamd-comgr3", "7.0.2+dfsg-3", "libc6 (>= 2.38), libgcc-s1 (>= 3.0), "
                       "libllvm21 (>= 1:21.1.0), libstdc++6 (>= 13.1), libzstd1 (>= 1.5.5), "
                       "zlib1g (>= 1:1.2.2), libclang-common-21-dev")
    rest = [deb_stanza("libllvm21", "1:21.1.8-14", "libc6 (>= 2.42), libedit2 (>= 2.11-20080614-4), "
                       "libffi8 (>= 3.4), libtinfo6 (>= 6) | libncurses6"),
            deb_stanza("libedit2", "3.1-20260512-1", "libc6 (>= 2.42), libbsd0 (>= 0.1.3)"),
            deb_stanza("libbsd0", "0.12.2-3", "libc6 (>= 2.38), libmd0 (>= 1.0.3-2)"),
            deb_stanza("libmd0", "1.3.0-1", "libc6 (>= 2.33)"),
            deb_stanza("libffi8", "3.8.0-2", "libc6 (>= 2.38)"),
            deb_stanza("libtinfo6", "6.6+20260608-2", "libc6 (>= 2.42)"),
            deb_stanza("libgcc-s1", "16.2.0-4", "gcc-16-base (= 16.2.0-4), libc6 (>= 2.35)"),
            deb_stanza("gcc-16-base", "16.2.0-4"),
            deb_stanza("libstdc++6", "16.2.0-4", "gcc-16-base (= 16.2.0-4), libc6 (>= 2.38), "
                       "libgcc-s1 (>= 4.3)"),
            deb_stanza("libzstd1", "1.5.7+dfsg-4", "libc6 (>= 2.34)"),
            deb_stanza("zlib1g", "1:1.3.dfsg+really1.3.2-4", "libc6 (>= 2.14)",
                       "Provides: libz1\nDescription: compression\n continued line\n"),
            deb_stanza("libclang-common-21-dev", "1:21.1.8-14", "libllvm21 (= 1:21.1.8-14)"),
            deb_stanza("libc6", "2.43-7", "libgcc-s1")]
    put("debindex", "closure", "\n".join([comgr] + rest))
    put("debindex", "closure-unmet", "\n".join([comgr] + rest[1:]))
    put("debindex", "inrelease",
        "-----BEGIN PGP SIGNED MESSAGE-----\nHash: SHA256\n\nOrigin: Debian\nSuite: unstable\n"
        "Codename: sid\nDate: Fri, 30 Oct 2026 08:08:01 UTC\nSHA256:\n"
        f" {sha('packages')} 64988655 main/binary-amd64/Packages\n"
        f" {sha('packages.xz')}  10824484 main/binary-amd64/Packages.xz\n"
        "- -----dash-escaped: no field\n"
        "-----BEGIN PGP SIGNATURE-----\n\nAAAA\n-----END PGP SIGNATURE-----\n")


def main():
    if OUT.exists():
        shutil.rmtree(OUT)
    json_seeds()
    gpus_seeds()
    lock_seeds()
    facts_seeds()
    version_seeds()
    safe_path_seeds()
    sysfs_seeds()
    hipinfo_seeds()
    unpack_seeds()
    inrelease_seeds()
    gpgstatus_seeds()
    pgpkey_seeds()
    elf_seeds()
    debfind_seeds()
    debindex_seeds()
    for folder in sorted(OUT.iterdir()):
        files = list(folder.iterdir())
        print(f"{folder.name}: {len(files)} seeds, {sum(f.stat().st_size for f in files)} bytes")


if __name__ == "__main__":
    main()
