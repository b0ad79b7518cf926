#!/usr/bin/env python3
"""Debian's real signed InRelease files (sid and experimental, fetched once
by scripts/debian-releases) checked as an APT source followed by
debian-archive-keyring is: with the system's real
/usr/share/keyrings/debian-archive-keyring.gpg and gpgv, through the
library's own check (tests/tools/inrelease_tool), with the real Packages
index each one lists.

The real files carry a Valid-Until about a week after their Date, and the
mirror these machines reach may serve them later than that.  So each file
is judged as of its own Date (plus a minute), when it was valid whatever
day the test runs, and once more a second after its Valid-Until, when it
must be refused for that reason.

Shown per suite: accepted, with the index matching the hash it lists;
accepted with the signer's fingerprint pinned; refused with another key of
the same keyring pinned; refused with one byte of the signed text changed,
and with one byte of the signature changed; refused after Valid-Until;
and the index refused with one byte changed.

And through cfapkg itself, a recipe following the suite by
debian-archive-keyring, with the real InRelease and index served by nginx
on 127.0.0.1: one byte changed, or another key of the keyring pinned, is
refused (the signature is judged before Valid-Until, so this holds any
day); the real file as it is is refused for its Valid-Until once that has
passed on this machine's clock, and before that is accepted with its
index, the install then stopping only at the .deb, which is not served.

    test_debian_releases.py INRELEASE_TOOL CFAPKG RELEASES_FOLDER
"""
import email.utils
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import time

import harness

sys.path.insert(0, str(pathlib.Path(__file__).parent / "servers"))
from nginx import Nginx  # noqa: E402

TOOL, BIN, DIR = sys.argv[1], sys.argv[2], pathlib.Path(sys.argv[3])
FACTS = ["--os", "linux", "--arch", "x86_64", "--gpu", "gfx1100"]
KEYRING = "/usr/share/keyrings/debian-archive-keyring.gpg"
INDEX = "main/binary-amd64/Packages"
check = harness.Checks()


def field(text, name):
    m = re.search(rf"^{name}: (.*)$", text, re.M)
    return int(email.utils.parsedate_to_datetime(m.group(1)).timestamp()) if m else None


def tool(root, suite, now, inrelease, *extra):
    r = subprocess.run([TOOL, str(root), KEYRING, suite, str(now), str(inrelease), *extra],
                       capture_output=True, text=True, timeout=harness.TIMEOUT)
    return r.returncode, r.stdout + r.stderr


def signers(inrelease):
    """The primary keys of the good signatures, as gpgv itself reports them."""
    r = subprocess.run(["gpgv", "--status-fd", "1", "--keyring", KEYRING, str(inrelease)],
                       capture_output=True, text=True, timeout=harness.TIMEOUT)
    return {line.split()[-1] for line in r.stdout.splitlines() if " VALIDSIG " in line}


def keyring_keys(home):
    r = subprocess.run(["gpg", "--homedir", str(home), "--batch", "--with-colons",
                        "--show-keys", KEYRING], capture_output=True, text=True,
                       timeout=harness.TIMEOUT)
    keys, primary = [], False
    for line in r.stdout.splitlines():
        parts = line.split(":")
        if parts[0] in ("pub", "sub"):
            primary = parts[0] == "pub"
        elif parts[0] == "fpr" and primary:
            keys.append(parts[9])
    return keys


def changed(src, dst, pos):
    data = bytearray(src.read_bytes())
    data[pos] = ord("0") if data[pos] != ord("0") else ord("1")
    dst.write_bytes(bytes(data))
    return dst


def test_suite(tmp, suite, others):
    inrelease, packages = DIR / suite / "InRelease", DIR / suite / "Packages"
    text = inrelease.read_text()
    date, until = field(text, "Date"), field(text, "Valid-Until")
    root = tmp / f"root-{suite}"
    rc, out = tool(root, suite, date + 60, inrelease, "--index", INDEX, str(packages))
    check(f"{suite}: the real InRelease is accepted with debian-archive-keyring, as of its Date",
          rc == 0 and out.startswith("accepted ") and "index ok" in out, out)
    check(f"{suite}: it carries a Valid-Until after its Date", until and until > date, until)
    good = signers(inrelease)
    signer = out.split()[1] if rc == 0 else ""
    check(f"{suite}: the signer cfapkg names is one gpgv reports", signer in good, (signer, good))
    rc, out = tool(root, suite, date + 60, inrelease, "--fingerprint", signer)
    check(f"{suite}: accepted with the signer's fingerprint pinned", rc == 0, out)
    other = next((k for k in others if k not in good), None)
    rc, out = tool(root, suite, date + 60, inrelease, "--fingerprint", other or "0" * 40)
    check(f"{suite}: refused with another key of the same keyring pinned",
          other and rc == 9 and f"not by the pinned {other}" in out, (other, out))
    pos = text.index("\n", text.index(f" {INDEX}\n") - 80) + 2  # a digit of a hash line
    rc, out = tool(root, suite, date + 60, changed(inrelease, tmp / f"{suite}-text", pos))
    check(f"{suite}: one byte of the signed text changed: refused as a bad signature",
          rc == 9 and "a signature on it is bad (BADSIG" in out, out)
    sig = text.index("-----BEGIN PGP SIGNATURE-----") + 40
    rc, out = tool(root, suite, date + 60, changed(inrelease, tmp / f"{suite}-sig", sig))
    check(f"{suite}: one byte of the signature changed: refused", rc == 9 and
          "refused: " in out, out)
    rc, out = tool(root, suite, until + 1, inrelease)
    check(f"{suite}: refused a second after its Valid-Until", rc == 9 and "(Valid-Until)" in out,
          out)
    rc, out = tool(root, suite, date + 60, inrelease, "--index", INDEX,
                   str(changed(packages, tmp / f"{suite}-Packages", packages.stat().st_size // 2)))
    check(f"{suite}: the index with one byte changed does not match the InRelease",
          rc == 9 and "the InRelease lists" in out, out)


def first_package(packages):
    """The first package of the index built for amd64 or all."""
    name = None
    with open(packages, encoding="utf-8", errors="replace") as f:
        for line in f:
            if line.startswith("Package: "):
                name = line.split()[1]
            elif line.startswith("Architecture: ") and line.split()[1] in ("amd64", "all"):
                return name
    return None


def serve(www, name, suite, inrelease):
    """www/name laid out as Debian's archive, the real index linked."""
    dists = www / name / "dists" / suite
    (dists / "main" / "binary-amd64").mkdir(parents=True)
    shutil.copyfile(inrelease, dists / "InRelease")
    os.symlink(DIR / suite / "Packages", dists / "main" / "binary-amd64" / "Packages")


def follow(tmp, srv, name, suite, package, signed_by):
    recipes = tmp / f"recipes-{name}"
    recipes.mkdir()
    (recipes / "debian-follow.json").write_text(json.dumps({
        "format": 1, "name": "debian-follow", "summary": "a package of Debian " + suite,
        "versions": [{"version": "1", "os": ["linux"], "sources": {"linux-x86_64": {"apt": {
            "repository": srv.url(name), "suite": suite, "component": "main",
            "signed_by": signed_by, "packages": [package]}}}}]}))
    root = tmp / f"root-{name}"
    r = harness.run(BIN, "install", "debian-follow", *FACTS, "--yes", "--retries", "0",
                    env={"CFAPKG_ROOT": str(root), "CFAPKG_RECIPES": str(recipes),
                         "CFAPKG_MIRRORS": ""})
    return r, root


def test_cfapkg(tmp, srv, suite, others):
    inrelease = DIR / suite / "InRelease"
    text = inrelease.read_text()
    until, good = field(text, "Valid-Until"), signers(inrelease)
    package = first_package(DIR / suite / "Packages")
    serve(srv.www, f"{suite}-bad", suite, changed(inrelease, tmp / f"{suite}-bad",
                                                  text.index("\nDate: ") + 9))
    r, root = follow(tmp, srv, f"{suite}-bad", suite, package, {"keyring": KEYRING})
    check(f"{suite}, cfapkg: one byte of the real InRelease changed is refused, nothing kept",
          r.returncode == 9 and "a signature on it is bad" in r.stderr and
          not (root / "store").exists(), (r.returncode, r.stderr))
    serve(srv.www, suite, suite, inrelease)
    other = next((k for k in others if k not in good), "0" * 40)
    os.symlink(srv.www / suite, srv.www / f"{suite}-other")
    r, root = follow(tmp, srv, f"{suite}-other", suite, package,
                     {"keyring": KEYRING, "fingerprint": other})
    check(f"{suite}, cfapkg: refused with another key of debian-archive-keyring pinned",
          r.returncode == 9 and f"not by the pinned {other}" in r.stderr, r.stderr)
    r, root = follow(tmp, srv, suite, suite, package, {"keyring": KEYRING})
    if time.time() > until:
        check(f"{suite}, cfapkg: the real InRelease past its Valid-Until on this clock is "
              "refused for it", r.returncode == 9 and "(Valid-Until)" in r.stderr, r.stderr)
    else:
        check(f"{suite}, cfapkg: the real InRelease and index are accepted; only the .deb "
              "(not served) is missing", r.returncode == 8 and "/pool/" in r.stderr, r.stderr)
    check(f"{suite}, cfapkg: nothing installed", not (root / "store").exists() or
          not any((root / "store").iterdir()))


def main():
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="cfapkg-debian-releases-"))
    try:
        home = tmp / "gnupg"
        home.mkdir(mode=0o700)
        others = keyring_keys(home)
        check("the keyring holds several keys", len(others) > 2, others)
        print("fetched", (DIR / "fetched").read_text().strip())
        for suite in ("sid", "experimental"):
            test_suite(tmp, suite, others)
        www = tmp / "www"
        www.mkdir()
        srv = Nginx(www, tmp / "nginx")
        srv.www = www
        try:
            for suite in ("sid", "experimental"):
                test_cfapkg(tmp, srv, suite, others)
        finally:
            srv.stop()
    finally:
        subprocess.run(["gpgconf", "--homedir", str(tmp / "gnupg"), "--kill", "all"],
                       capture_output=True, timeout=harness.TIMEOUT)
        shutil.rmtree(tmp, ignore_errors=True)
    return check.report()


if __name__ == "__main__":
    sys.exit(main())
