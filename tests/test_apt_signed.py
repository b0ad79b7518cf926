#!/usr/bin/env python3
"""APT repositories trusted by their OpenPGP key, as apt trusts them.

OpenPGP keys are made with gpg in a GNUPGHOME of the test's own (no
network); repositories laid out as Debian's (dists/SUITE/InRelease,
main/binary-amd64/Packages{,.xz,.gz}, pool/...) hold .debs built with
dpkg-deb, their InRelease clearsigned with those keys, served by nginx on
127.0.0.1.  A recipe names the repository's key by fingerprint with the
URL it is published at (as AMD publishes rocm.gpg.key), or a keyring file
(as Debian's debian-archive-keyring); cfapkg fetches the InRelease, has
gpgv check it, and takes the index's and the .debs' pins from it.

Shown: a good repository installs (a package named without a version takes
the newest one the index lists), and offline again from the InRelease kept;
then each of these is refused with its own reason, nothing is installed and
the installed environment keeps working: a bad signature, a signature by
another key (also another key of the keyring file when a fingerprint is
pinned), an expired signature, an expired key, a revoked key, a
Valid-Until in the past, an InRelease older than the one accepted before
(replay), the InRelease of another suite, text outside the signed part, an
index that does not match the InRelease, a .deb that does not match the
index, and a key fetched by URL whose fingerprint is not the pinned one.
The expiry cases are signed with gpg's --faked-system-time, so they hold
whatever day the test runs.  On Windows an APT source is planned as not
installable, with the reason.

    test_apt_signed.py CFAPKG
"""
import datetime
import gzip
import hashlib
import json
import lzma
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

import harness

sys.path.insert(0, str(pathlib.Path(__file__).parent / "servers"))

BIN = sys.argv[1]
check = harness.Checks()
FACTS = ["--os", "linux", "--arch", "x86_64", "--gpu", "gfx1030", "--allow-experimental"]
SUITE = "testing"
GPG_TIMEOUT = 60
PAST = "20200101T000000"  # keys are made then, so that signatures may be dated later


def sha256(data):
    return hashlib.sha256(data).hexdigest()


def rfc2822(when):
    return when.strftime("%a, %d %b %Y %H:%M:%S UTC")


class Keys:
    """gpg in a home folder of its own: keys by name, signing, export."""

    def __init__(self, home):
        self.home = home
        home.mkdir(mode=0o700)
        self.fpr = {}

    def gpg(self, *args, data=None):
        r = subprocess.run(["gpg", "--homedir", str(self.home), "--batch", "--yes",
                            "--pinentry-mode", "loopback", "--passphrase", "", *args],
                           input=data, capture_output=True, timeout=GPG_TIMEOUT)
        if r.returncode != 0:
            raise RuntimeError(f"gpg {' '.join(args)}: {r.stderr.decode(errors='replace')}")
        return r.stdout

    def make(self, name, expire="never", when=PAST):
        uid = f"cfapkg test {name} <{name}@example.org>"
        self.gpg("--faked-system-time", when, "--quick-gen-key", uid, "ed25519", "sign", expire)
        out = self.gpg("--with-colons", "--list-keys", f"{name}@example.org").decode()
        self.fpr[name] = [line.split(":")[9] for line in out.splitlines()
                          if line.startswith("fpr:")][0]

    def revoke(self, name):
        rev = (self.home / "openpgp-revocs.d" / f"{self.fpr[name]}.rev").read_text()
        self.gpg("--import", data=rev.replace(":-----BEGIN", "-----BEGIN").encode())

    def export(self, names, armor=False):
        return self.gpg(*(["--armor"] if armor else []), "--export",
                        *[f"{n}@example.org" for n in names])

    def clearsign(self, name, text, *extra):
        return self.gpg("--local-user", f"{name}@example.org", *extra, "--clearsign",
                        data=text)

    def stop(self):
        subprocess.run(["gpgconf", "--homedir", str(self.home), "--kill", "all"],
                       capture_output=True, timeout=GPG_TIMEOUT)


def build_deb(work, name, version, files):
    """A .deb of the given files, built by dpkg-deb."""
    root = work / f"{name}-{version}"
    (root / "DEBIAN").mkdir(parents=True)
    (root / "DEBIAN" / "control").write_text(
        f"Package: {name}\nVersion: {version}\nArchitecture: amd64\n"
        f"Maintainer: cfapkg tests <tests@example.org>\nDescription: test package\n")
    for path, data in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_bytes(data)
    out = work / f"{name}_{version}_amd64.deb"
    subprocess.run(["dpkg-deb", "--root-owner-group", "--build", str(root), str(out)],
                   check=True, capture_output=True, timeout=GPG_TIMEOUT)
    return out


def make_debs(work):
    lib = "usr/lib/x86_64-linux-gnu"
    return [build_deb(work, "cfa-hello", "1.0-1", {f"{lib}/libhello.so.1": b"hello 1.0"}),
            build_deb(work, "cfa-data", "1.0-1", {"usr/share/cfa-data/version": b"1.0"}),
            build_deb(work, "cfa-data", "1.10-1", {"usr/share/cfa-data/version": b"1.10"}),
            build_deb(work, "cfa-data", "1.9-1", {"usr/share/cfa-data/version": b"1.9"})]


def packages_text(repo, debs):
    stanzas = []
    for deb in debs:
        name, version = deb.name.split("_")[:2]
        rel = f"pool/main/c/{name}/{deb.name}"
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(deb, repo / rel)
        data = deb.read_bytes()
        stanzas.append(f"Package: {name}\nVersion: {version}\nArchitecture: amd64\n"
                       f"Filename: {rel}\nSize: {len(data)}\nSHA256: {sha256(data)}\n"
                       f"Description: test package\n")
    return "\n".join(stanzas).encode()


def make_repo(repo, debs, keys, signer, date, valid_until=None, sign_args=(), suite=SUITE,
              by_hash=False):
    """repo/dists/SUITE/InRelease and the rest; returns the Release text."""
    comp = repo / "dists" / SUITE / "main" / "binary-amd64"
    comp.mkdir(parents=True)
    plain = packages_text(repo, debs)
    files = {"main/binary-amd64/Packages": plain,
             "main/binary-amd64/Packages.xz": lzma.compress(plain),
             "main/binary-amd64/Packages.gz": gzip.compress(plain, mtime=0)}
    for rel, data in files.items():
        (repo / "dists" / SUITE / rel).write_bytes(data)
        if by_hash:
            folder = comp / "by-hash" / "SHA256"
            folder.mkdir(parents=True, exist_ok=True)
            (folder / sha256(data)).write_bytes(data)
    lines = [f"Origin: cfapkg-test", f"Suite: {suite}", f"Codename: {suite}",
             f"Date: {rfc2822(date)}"]
    if valid_until:
        lines.append(f"Valid-Until: {rfc2822(valid_until)}")
    if by_hash:
        lines.append("Acquire-By-Hash: yes")
    lines += ["Architectures: amd64", "Components: main", "SHA256:"]
    lines += [f" {sha256(d)} {len(d):>8} {rel}" for rel, d in files.items()]
    release = ("\n".join(lines) + "\n").encode()
    (repo / "dists" / SUITE / "Release").write_bytes(release)
    (repo / "dists" / SUITE / "InRelease").write_bytes(keys.clearsign(signer, release,
                                                                      *sign_args))
    return release


def recipe(folder, versions):
    """signed-test.json: versions [(version, repository URL, signed_by)];
    each takes cfa-hello 1.0-1, the newest cfa-data and the repository's
    own package."""
    folder.mkdir(parents=True, exist_ok=True)
    doc = {"format": 1, "name": "signed-test", "summary": "a signed APT repository",
           "versions": [{
               "version": v, "os": ["linux"],
               "sources": {"linux-x86_64": {"apt": {
                   "repository": url, "suite": SUITE, "component": "main",
                   "signed_by": signed_by,
                   "packages": ["cfa-hello=1.0-1", "cfa-data",
                                "cfa-" + url.rstrip("/").rsplit("/", 1)[-1]]}}},
               "runtime": {"path": ["usr/lib/x86_64-linux-gnu"]}} for v, url, signed_by in versions]}
    (folder / "signed-test.json").write_text(json.dumps(doc, indent=1))
    return folder


class World:
    def __init__(self, tmp, srv, keys, debs):
        self.tmp, self.srv, self.keys, self.debs = tmp, srv, keys, debs
        self.www = tmp / "www"
        self.now = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)

    def by_url(self, name="a", key_file=None):
        return {"fingerprint": self.keys.fpr[name],
                "url": self.srv.url(f"keys/{key_file or name}.asc")}

    def repo(self, name, signer="a", own=None, **kw):
        """Repository NAME, with a package of its own (cfa-OWN, OWN the
        name the repository is served under): its index and that .deb are
        in no cache yet, whatever was installed before."""
        kw.setdefault("date", self.now - datetime.timedelta(days=1))
        own = own or name
        work = self.tmp / "debs" / name
        work.mkdir(parents=True)
        own = build_deb(work, f"cfa-{own}", "1.0-1", {f"usr/share/cfa-{own}/marker": name.encode()})
        make_repo(self.www / name, self.debs + [own], self.keys, signer, **kw)
        return self.www / name


def run(root, recipes, *args):
    return harness.run(BIN, *args, env={"CFAPKG_ROOT": str(root),
                                        "CFAPKG_RECIPES": str(recipes)})


def install(root, recipes, spec="signed-test", *extra):
    return run(root, recipes, "install", spec, *FACTS, "--yes", "--retries", "0", *extra)


def current(root):
    f = root / "envs" / "default" / "current"
    return f.read_text().strip() if f.exists() else None


def store(root):
    s = root / "store"
    return sorted(p.name for p in s.iterdir()) if s.exists() else []


def records(root):
    """The accepted InReleases' records and their contents."""
    return {p.parent.name: p.read_text()
            for p in sorted((root / "apt" / "releases").glob("*/state.json"))}


def view_file(root, rel):
    gen = current(root)
    p = root / "envs" / "default" / str(gen) / "view" / "signed-test" / rel
    return p.read_bytes() if gen and p.is_file() else None


def test_good(w):
    w.repo("good")
    recipes = recipe(w.tmp / "recipes-good", [("1.0", w.srv.url("good"), w.by_url())])
    root = w.tmp / "root"
    r = install(root, recipes)
    check("a repository signed by the pinned key installs", r.returncode == 0,
          r.stdout + r.stderr)
    check("with the pinned package and, for a name alone, the newest version (1.10 > 1.9)",
          view_file(root, "usr/lib/x86_64-linux-gnu/libhello.so.1") == b"hello 1.0" and
          view_file(root, "usr/share/cfa-data/version") == b"1.10", store(root))
    key = root / "apt" / "keys" / f"{w.keys.fpr['a']}.gpg"
    check("the key fetched by URL is kept under the root, named by its fingerprint",
          key.is_file(), list((root / "apt").rglob("*")) if (root / "apt").exists() else None)
    states = list((root / "apt" / "releases").glob("*/state.json"))
    state = json.loads(states[0].read_text()) if states else {}
    check("the accepted InRelease's Date and signer are recorded under the root",
          state.get("suite") == SUITE and state.get("signed_by") == w.keys.fpr["a"] and
          state.get("date", "").startswith((w.now - datetime.timedelta(days=1)).strftime("%Y-")),
          state)
    lock = json.loads((root / "envs/default/1/lock.json").read_text()) if current(root) else {}
    arts = [a for p in lock.get("packages", []) for a in p.get("artifacts", [])]
    check("the lock pins each .deb by the SHA-256 the verified index gives",
          len(arts) == 3 and all(len(a.get("sha256", "")) == 64 for a in arts), lock)
    r = install(root, recipes, "signed-test", "--offline")
    check("offline, the InRelease accepted last is checked again and nothing is to do",
          r.returncode == 0 and "Nothing to do" in r.stdout, r.stdout + r.stderr)
    apt = root / "apt"
    # What refuses a replay: each record's repository, suite and Date (an
    # offline check writes its time of acceptance again).
    def dates():
        return {k: json.loads(v).get("date") for k, v in records(root).items()}
    kept = dates()
    left = [apt / "check-1-0.asc", apt / "check-1-1.out", apt / "keys" / "x.gpg.tmp",
            next((apt / "releases").glob("*/")) / "state.json.tmp"]
    for f in left:
        f.write_bytes(b"left by a kill")
    r = install(root, recipes, "signed-test", "--offline")
    check("the next command removes what a killed InRelease check left and keeps the records",
          r.returncode == 0 and not any(f.exists() for f in left) and dates() == kept and kept and
          key.is_file(), (r.stdout + r.stderr, sorted(map(str, apt.rglob("*")))))
    return root, recipes


def refused(w, root, name, signed_by, expect, repo_kw=None, tamper=None, said="nothing was changed"):
    """Version 2.0 from repository NAME: refused with expect in the
    message; nothing changes and 1.0 keeps working.  repo_kw False: the
    repository was made before."""
    repo = w.repo(name, **(repo_kw or {})) if repo_kw is not False else w.www / name
    if tamper:
        tamper(repo)
    recipes = recipe(w.tmp / f"recipes-{name}", [("2.0", w.srv.url(name), signed_by),
                                                 ("1.0", w.srv.url("good"), w.by_url())])
    before, gen, known = store(root), current(root), records(root)
    r = install(root, recipes, "signed-test==2.0")
    check(f"{name}: refused with its reason", r.returncode == 9 and expect in r.stderr and
          said in r.stderr, (r.returncode, r.stderr))
    check(f"{name}: nothing installed, the environment unchanged",
          store(root) == before and current(root) == gen, (store(root), before))
    if said == "nothing was changed":
        check(f"{name}: no InRelease recorded", records(root) == known)
    v = run(root, recipes, "verify")
    check(f"{name}: the installed environment still verifies and has its files",
          v.returncode == 0 and view_file(root, "usr/share/cfa-data/version") == b"1.10",
          v.stdout + v.stderr)


def flip(path, old, new):
    data = path.read_bytes()
    assert old in data, (path, old)
    path.write_bytes(data.replace(old, new, 1))


def test_refusals(w, root):
    inrel = pathlib.Path("dists") / SUITE / "InRelease"
    refused(w, root, "bad-signature", w.by_url(), "a signature on it is bad",
            tamper=lambda r: flip(r / inrel, b"Origin: cfapkg-test", b"Origin: cfapkg-tesT"))
    refused(w, root, "other-key", w.by_url(),
            f"signed by key {w.keys.fpr['b'][-16:]}, not by the pinned {w.keys.fpr['a']}",
            {"signer": "b"})
    refused(w, root, "other-key-of-keyring",
            {"keyring": str(w.tmp / "ab.gpg"), "fingerprint": w.keys.fpr["a"]},
            f"signed by key {w.keys.fpr['b']}, not by the pinned", {"signer": "b"})
    refused(w, root, "expired-signature", w.by_url(), "has expired (EXPSIG)",
            {"date": datetime.datetime(2021, 1, 1),
             "sign_args": ("--faked-system-time", "20210101T000000", "--default-sig-expire",
                           "1d")})
    refused(w, root, "expired-key", w.by_url("e"), "which has expired (EXPKEYSIG)",
            {"signer": "e", "date": datetime.datetime(2020, 1, 1),
             "sign_args": ("--faked-system-time", "20200101T010000")})
    refused(w, root, "revoked-key", w.by_url("r"), "which was revoked", False)
    refused(w, root, "valid-until-past", w.by_url(), "(Valid-Until)",
            {"valid_until": datetime.datetime(2021, 1, 8)})
    refused(w, root, "another-suite", w.by_url(), "do not name testing", {"suite": "unstable"})
    refused(w, root, "text-outside", w.by_url(), "text follows its signature",
            tamper=lambda r: (r / inrel).write_bytes((r / inrel).read_bytes() +
                                                      b"\nSHA256:\n evil\n"))
    xz = pathlib.Path("dists") / SUITE / "main" / "binary-amd64" / "Packages.xz"
    refused(w, root, "index-mismatch", w.by_url(), "is not the index the signed InRelease pins",
            tamper=lambda r: (r / xz).write_bytes(lzma.compress(
                lzma.decompress((r / xz).read_bytes()) + b"\n")))

    def flip_deb(r):
        deb = sorted(r.glob("pool/**/cfa-deb-mismatch_*.deb"))[0]
        data = bytearray(deb.read_bytes())
        data[len(data) // 2] ^= 0xFF
        deb.write_bytes(bytes(data))
    refused(w, root, "deb-mismatch", w.by_url(), "cfa-deb-mismatch_1.0-1_amd64.deb",
            tamper=flip_deb, said="the download was deleted")
    # B's key is not kept in this root yet: it is fetched, from where A's is.
    refused(w, root, "key-url-wrong-fingerprint", w.by_url("b", key_file="a"),
            f"has fingerprint {w.keys.fpr['a']}, not the pinned {w.keys.fpr['b']}",
            {"signer": "b"})
    check("a key of the wrong fingerprint is not kept",
          not (root / "apt" / "keys" / f"{w.keys.fpr['b']}.gpg").exists())


def test_replay(w):
    """The same repository URL serves a newer, then an older InRelease."""
    new = w.repo("replay-new", own="replay", date=w.now - datetime.timedelta(hours=2))
    old = w.repo("replay-old", own="replay", date=w.now - datetime.timedelta(days=3))
    link = w.www / "replay"
    link.symlink_to(new)
    recipes = recipe(w.tmp / "recipes-replay", [("1.0", w.srv.url("replay"), w.by_url())])
    root = w.tmp / "root-replay"
    r = install(root, recipes)
    check("replay: the newer InRelease installs", r.returncode == 0, r.stdout + r.stderr)
    r = install(root, recipes)
    check("replay: the same InRelease again is accepted (nothing to do)",
          r.returncode == 0 and "Nothing to do" in r.stdout, r.stdout + r.stderr)
    state = next((root / "apt" / "releases").glob("*/state.json")).read_text()
    link.unlink()
    link.symlink_to(old)
    before = store(root)
    r = install(root, recipes)
    check("replay: an InRelease older than the one accepted before is refused",
          r.returncode == 9 and "is older than" in r.stderr and "accepted before" in r.stderr,
          r.stdout + r.stderr)
    check("replay: nothing changed, the record kept",
          store(root) == before and current(root) == "1" and
          next((root / "apt" / "releases").glob("*/state.json")).read_text() == state)


def test_keyring(w):
    """A keyring file (armored here) without a fingerprint: any of its keys.
    The repository offers its index by hash, and serves no Packages.xz
    though its InRelease lists one: the next one listed (.gz) is taken."""
    repo = w.repo("keyring", signer="b", by_hash=True)
    xz = (repo / "dists" / SUITE / "main" / "binary-amd64" / "Packages.xz").read_bytes()
    for f in (repo / "dists" / SUITE / "main" / "binary-amd64").rglob("*"):
        if f.is_file() and f.read_bytes() == xz:
            f.unlink()
    recipes = recipe(w.tmp / "recipes-keyring",
                     [("1.0", w.srv.url("keyring"), {"keyring": str(w.tmp / "ab.asc")})])
    root = w.tmp / "root-keyring"
    r = install(root, recipes)
    check("a keyring file (armored) trusts each of its keys", r.returncode == 0
          and view_file(root, "usr/share/cfa-data/version") == b"1.10", r.stdout + r.stderr)
    log = (w.tmp / "nginx" / "logs" / "access.log").read_text()
    gz = sha256((repo / "dists" / SUITE / "main" / "binary-amd64" / "Packages.gz").read_bytes())
    check("the index: .xz not served, so .gz, fetched under its hash (Acquire-By-Hash)",
          f"/keyring/dists/testing/main/binary-amd64/by-hash/SHA256/{gz} HTTP/1.1 200" in log,
          [line for line in log.splitlines() if "/keyring/" in line])


def test_no_gpgv(w, root, recipes):
    r = harness.run(BIN, "install", "signed-test", *FACTS, "--yes",
                    env={"CFAPKG_ROOT": str(root), "CFAPKG_RECIPES": str(recipes),
                         "PATH": str(w.tmp / "empty-path")})
    check("without gpgv the install says so and what to install (exit 6)",
          r.returncode == 6 and "gpgv was not found" in r.stderr and "apt-get install gpgv" in
          r.stderr, (r.returncode, r.stderr))


def test_windows(tmp):
    recipes = recipe(tmp / "recipes-win", [("1.0", "https://example.org/apt",
                                            {"keyring": "/usr/share/keyrings/x.gpg"})])
    r = harness.run(BIN, "info", "signed-test", env={"CFAPKG_RECIPES": str(recipes),
                                                     "CFAPKG_ROOT": str(tmp / "root")})
    check("on Windows an APT source is planned as not installable, with the reason",
          r.returncode == 0 and "APT sources are installed on Linux only" in r.stdout,
          r.stdout + r.stderr)


def main():
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="cfapkg-apt-signed-"))
    if BIN.endswith(".exe"):
        try:
            test_windows(tmp)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        return check.report()
    from nginx import Nginx
    keys, srv = Keys(tmp / "gnupg"), None
    try:
        for name in ("a", "b", "r"):
            keys.make(name)
        keys.make("e", expire="1d")
        (tmp / "www" / "keys").mkdir(parents=True)
        srv = Nginx(tmp / "www", tmp / "nginx")
        w = World(tmp, srv, keys, make_debs(tmp))
        w.repo("revoked-key", signer="r")  # signed while the key was good
        keys.revoke("r")
        for name in ("a", "b", "e", "r"):
            (tmp / "www" / "keys" / f"{name}.asc").write_bytes(keys.export([name], armor=True))
        (tmp / "ab.gpg").write_bytes(keys.export(["a", "b"]))
        (tmp / "ab.asc").write_bytes(keys.export(["a", "b"], armor=True))
        (tmp / "empty-path").mkdir()
        root, recipes = test_good(w)
        if current(root):
            test_refusals(w, root)
            test_no_gpgv(w, root, recipes)
        test_replay(w)
        test_keyring(w)
    finally:
        if srv:
            srv.stop()
        keys.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    return check.report()


if __name__ == "__main__":
    sys.exit(main())
