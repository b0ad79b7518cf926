#!/usr/bin/env python3
"""Mirrors and offline installs, on 127.0.0.1 only.  The test channel's
recipes name an upstream that cannot be reached (a port opened and closed
again), and mirror rules (PREFIX REPLACEMENT a line, CFAPKG_MIRRORS or
ROOT/mirrors.conf) send every download to nginx, to a file:// folder or to
a plain path; a mirror that refuses connections is passed over, one that
serves another file under the right name is refused with an integrity
error naming it; a bad rule names its file and line; add-file takes a
package archive and install --offline needs no server; mirror create lays
a stack's archives (and an APT source's index) out by URL, and a fresh
root installs from that folder served by nginx.

    test_mirrors.py CFAPKG
"""
import hashlib
import io
import json
import pathlib
import shutil
import socket
import sys
import tarfile
import tempfile

import channel
import harness

sys.path.insert(0, str(pathlib.Path(__file__).parent / "servers"))
from nginx import Nginx  # noqa: E402

BIN = sys.argv[1]
check = harness.Checks()
FACTS = ["--gpu", "gfx1200", "--arch", "x86_64", "--os", "linux"]
STACK = ["zluda7.tar.gz", "libtorch.zip"]  # what pytorch-cuda-stack fetches on gfx1200


def dead_port():
    """A port nothing listens on: opened, then closed again."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def sha(data):
    return hashlib.sha256(data).hexdigest()


class World:
    """The channel (recipes pointing at an unreachable upstream), nginx
    serving srv/, and a scratch folder."""

    def __init__(self, tmp):
        self.tmp = tmp
        self.dead = dead_port()
        self.upstream = f"http://127.0.0.1:{self.dead}/up/"
        self.www, self.recipes = channel.write(tmp / "chan", lambda n: self.upstream + n)
        self.srv = tmp / "srv"
        self.srv.mkdir()
        shutil.copytree(self.www, self.srv / "m1")
        self.nginx = Nginx(self.srv, tmp / "nginx")
        self.roots = 0

    def url(self, path):
        return self.nginx.url(path)

    def rules(self, *lines, name="mirrors.conf"):
        f = self.tmp / name
        f.write_text("# test rules\n\n" + "".join(line + "\n" for line in lines))
        return f

    def root(self):
        self.roots += 1
        return self.tmp / f"root{self.roots}"

    def run(self, root, rules, *args, **kw):
        """cfapkg with root and the channel's recipes; rules names the
        CFAPKG_MIRRORS file (None: none; False: the variable is not set)."""
        env = {"CFAPKG_ROOT": str(root), "CFAPKG_RECIPES": str(self.recipes),
               "XDG_CONFIG_HOME": str(self.tmp / "no-config")}
        if rules is not False:
            env["CFAPKG_MIRRORS"] = str(rules) if rules else ""
        env.update(kw.get("env", {}))
        return harness.run(BIN, *args, env=env, drop=kw.get("drop", ()))

    def install(self, root, rules, *specs, env=None):
        return self.run(root, rules, "install", *(specs or ["pytorch-cuda-stack"]), *FACTS,
                        "--yes", "--retries", "0", env=env or {})

    def served(self):
        """Access log lines: (path, status), read and emptied."""
        log = self.dir_log()
        lines = log.read_text().splitlines() if log.exists() else []
        log.write_text("")
        return [(ln.split()[0], ln.split()[2]) for ln in lines if ln.strip()]

    def dir_log(self):
        return self.tmp / "nginx" / "logs" / "access.log"


def current(root):
    f = root / "envs" / "default" / "current"
    return int(f.read_text()) if f.exists() else 0


def stores(root, name):
    return list((root / "store").glob(f"{name}-*")) if (root / "store").exists() else []


def test_rewrite(w):
    w.served()
    root = w.root()
    without = w.install(root, None)
    rules = w.rules(f"{w.upstream} {w.url('m1/')}")
    r = w.install(root, rules)
    check("the upstream is unreachable, and a rewrite rule sends the install to the mirror",
          without.returncode == 8 and r.returncode == 0 and current(root) == 1 and
          stores(root, "zluda-7-preview.10"), without.stderr + r.stdout + r.stderr)
    log = w.served()
    for name in STACK:
        got = [s for p, s in log if p == f"/m1/{name}"]
        check(f"the mirror served {name} once", got == ["200"], log)
    return root


def test_failover(w):
    down = f"http://127.0.0.1:{dead_port()}/down/"
    rules = w.rules(f"{w.upstream} {down}", f"{w.upstream} {w.url('m1/')}")
    root = w.root()
    r = w.install(root, rules)
    check("the first mirror refuses connections, the second serves", r.returncode == 0 and
          current(root) == 1, r.stdout + r.stderr)
    check("and a warning names the mirror passed over",
          f"{down}zluda7.tar.gz" in r.stderr and "the next URL was tried" in r.stderr, r.stderr)


def bad_mirror(w):
    """srv/bad: each file of the channel under its name, other bytes: as
    many as the pinned file's (the SHA-256 tells), or more (zluda6.zip:
    the size tells)."""
    bad = w.srv / "bad"
    if not bad.exists():
        bad.mkdir()
        for f in w.www.iterdir():
            data = bytearray(f.read_bytes())
            data[len(data) // 2] ^= 0xFF
            (bad / f.name).write_bytes(bytes(data) + (b"more" if f.name == "zluda6.zip" else b""))
    return w.url("bad/")


def test_wrong_file(w, installed):
    bad = bad_mirror(w)
    rules = w.rules(f"{w.upstream} {bad}", f"{w.upstream} {w.url('m1/')}")
    root = w.root()
    w.served()
    r = w.install(root, rules)
    check("a mirror serving another file under the right name is passed over, nothing of "
          "it kept", r.returncode == 0 and current(root) == 1 and
          not [f for f in (root / "downloads").iterdir() if f.name.endswith(".part")],
          r.stdout + r.stderr)
    check("with an integrity warning naming the mirror URL",
          f"{bad}zluda7.tar.gz: SHA-256" in r.stderr and "received" in r.stderr, r.stderr)
    log = w.served()
    check("the bad mirror was asked, then the good one",
          ("/bad/zluda7.tar.gz", "200") in log and ("/m1/zluda7.tar.gz", "200") in log, log)
    # No next URL that works: the upstream is unreachable.
    rules = w.rules(f"{w.upstream} {bad}")
    gen = current(installed)
    r = w.install(installed, rules, "pytorch-cuda-stack", "zluda==6-preview.69")
    check("with no other URL that works the install fails as an integrity error naming the "
          "mirror, and the environment keeps its generation",
          r.returncode == 9 and f"{bad}zluda6.zip: the server sent more than the declared"
          in r.stderr and current(installed) == gen and
          not stores(installed, "zluda-6-preview.69"), r.stdout + r.stderr)


def test_local(w):
    folder = w.srv / "m1"
    for label, target in (("a file:// mirror", folder.as_uri() + "/"),
                          ("a plain-path mirror", str(folder) + "/")):
        root = w.root()
        r = w.install(root, w.rules(f"{w.upstream} {target}"))
        check(f"{label} serves the install", r.returncode == 0 and current(root) == 1,
              r.stdout + r.stderr)
    spaced = w.tmp / "a mirror folder"
    shutil.copytree(folder, spaced)
    root = w.root()
    r = w.install(root, w.rules(f"{w.upstream} {spaced}/"))
    check("a path with a space", r.returncode == 0 and current(root) == 1, r.stdout + r.stderr)
    # A file:// URL reaches the engine only from a rule or the command
    # line: one written into a generation's lock.json is not read.
    lock = root / "envs" / "default" / "1" / "lock.json"
    doc = json.loads(lock.read_text())
    for p in doc["packages"]:
        if p.get("url"):
            p["url"] = folder.as_uri() + "/" + p["url"].rsplit("/", 1)[1]
    lock.chmod(0o644)
    lock.write_text(json.dumps(doc))
    shutil.rmtree(root / "downloads")
    shutil.rmtree(stores(root, "libtorch-cuda")[0])
    r = w.run(root, None, "repair", "--yes", "--retries", "0")
    pre = w.run(root, None, "prefetch", folder.as_uri() + "/libtorch.zip")
    check("a file:// URL in a generation's lock is not read, one given to prefetch is",
          r.returncode == 8 and "a file:// URL is read only where a mirror rule" in r.stderr and
          not stores(root, "libtorch-cuda") and pre.returncode == 0 and
          sha((folder / "libtorch.zip").read_bytes()) in pre.stdout, r.stderr + pre.stderr)
    # A recipe's own mirrors stay http(s): a local folder is a rule.
    recipes = w.tmp / "recipes-file-mirror"
    recipes.mkdir()
    doc = json.loads((w.recipes / "libtorch-cuda.json").read_text())
    for src in doc["versions"][0]["sources"].values():
        src["mirrors"] = [folder.as_uri() + "/libtorch.zip"]
    (recipes / "libtorch-cuda.json").write_text(json.dumps(doc))
    r = w.run(w.root(), None, "plan", "libtorch-cuda", *FACTS,
              env={"CFAPKG_RECIPES": str(recipes)})
    check("a recipe naming a file:// mirror is refused", r.returncode == 5 and
          "mirrors[0] must start with https:// or http://" in r.stderr, r.stderr)


def test_bad_rules(w):
    rules = w.rules(f"{w.upstream} {w.url('m1/')}", f"{w.upstream} {w.url('m1')}")
    root = w.root()
    r = w.install(root, rules)
    check("a bad rule names the file and the line, and nothing is fetched",
          r.returncode == 2 and f"{rules}:4:" in r.stderr and "PREFIX REPLACEMENT" in r.stderr
          and current(root) == 0 and not stores(root, "zluda"), r.stderr)
    for line, why in (("just-one-field", "no replacement"),
                      ("ftp://x/ http://y/", "the prefix is not an http:// or https:// URL"),
                      (f"{w.upstream} relative/path/", "neither a URL nor an absolute path"),
                      (f"{w.upstream} http://a/ b/", "more than two fields")):
        f = w.rules(line)
        r = w.install(root, f)
        check(f"a bad rule: {why}", r.returncode == 2 and f"{f}:3: " in r.stderr and
              why in r.stderr, r.stderr)
    root.mkdir(exist_ok=True)
    (root / "mirrors.conf").write_text("http://x/ y\n")
    r = w.install(root, None)
    check("a bad line in ROOT/mirrors.conf names it", r.returncode == 2 and
          f"{root / 'mirrors.conf'}:1:" in r.stderr, r.stderr)
    (root / "mirrors.conf").unlink()
    r = w.install(root, w.tmp / "no-such-rules.conf")
    check("a file CFAPKG_MIRRORS names must be there", r.returncode == 1 and
          "no-such-rules.conf: no such file" in r.stderr, r.stderr)


def test_user_file(w):
    """Without CFAPKG_MIRRORS the user's file is $XDG_CONFIG_HOME/cfapkg/
    mirrors.conf; the root's rules come first.  (On Windows the file is
    %APPDATA%\\cfapkg\\mirrors.conf, and Wine sets %APPDATA% from its
    prefix: tests/WINE.md.)"""
    if harness.EMULATOR:
        return
    conf = w.tmp / "xdg"
    (conf / "cfapkg").mkdir(parents=True)
    (conf / "cfapkg" / "mirrors.conf").write_text(f"{w.upstream} {w.url('m1/')}\n")
    root = w.root()
    root.mkdir()
    down = f"http://127.0.0.1:{dead_port()}/rootrule/"
    (root / "mirrors.conf").write_text(f"{w.upstream} {down}\n")
    env = {"XDG_CONFIG_HOME": str(conf)}
    r = w.run(root, False, "config", "--json", env=env, drop=["CFAPKG_MIRRORS"])
    doc = json.loads(r.stdout) if r.returncode == 0 else {}
    rules = [x["replacement"] for x in doc.get("mirror_rules", [])]
    check("config lists the root's rules, then the user's", rules == [down, w.url("m1/")], r.stdout)
    r = harness.run(BIN, "install", "pytorch-cuda-stack", *FACTS, "--yes", "--retries", "0",
                    env={"CFAPKG_ROOT": str(root), "CFAPKG_RECIPES": str(w.recipes), **env},
                    drop=["CFAPKG_MIRRORS"])
    check("the user's file in the configuration folder is read", r.returncode == 0 and
          f"{down}zluda7.tar.gz" in r.stderr, r.stdout + r.stderr)


def test_add_file_offline(w):
    root = w.root()
    r = w.run(root, None, "add-file", *(str(w.www / n) for n in STACK))
    check("add-file takes package archives, naming who expects them", r.returncode == 0 and
          "download of zluda 7-preview.10" in r.stdout and
          "download of libtorch-cuda 2.3.0+cu118" in r.stdout, r.stdout + r.stderr)
    w.nginx.stop()
    try:
        r = w.install(root, None, "pytorch-cuda-stack", "--offline")
        check("then install --offline needs no server", r.returncode == 0 and current(root) == 1,
              r.stdout + r.stderr)
    finally:
        w.nginx = Nginx(w.srv, w.tmp / "nginx")


def ar(members):
    out = b"!<arch>\n"
    for name, data in members:
        out += f"{name:<16}{0:<12}{0:<6}{0:<6}{100644:<8}{len(data):<10}`\n".encode() + data
        out += b"\n" if len(data) % 2 else b""
    return out


def targz(files):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as t:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def apt_channel(w, base):
    """A one-package APT repository in www/apt and its recipe."""
    repo = w.www / "apt"
    deb = ar([("debian-binary", b"2.0\n"), ("control.tar.gz", targz({"./control": b"x\n"})),
              ("data.tar.gz", targz({"./usr/lib/libtiny.so.1": b"tiny\n"}))])
    (repo / "pool").mkdir(parents=True)
    (repo / "pool" / "tiny_1.0-1_amd64.deb").write_bytes(deb)
    index = (f"Package: tiny\nVersion: 1.0-1\nArchitecture: amd64\n"
             f"Filename: pool/tiny_1.0-1_amd64.deb\nSize: {len(deb)}\n"
             f"SHA256: {sha(deb)}\n\n").encode()
    idx = repo / "dists" / "stable" / "main" / "binary-amd64"
    idx.mkdir(parents=True)
    (idx / "Packages").write_bytes(index)
    recipe = {"format": 1, "name": "tiny-apt", "summary": "a tiny APT source", "versions": [{
        "version": "1.0", "os": ["linux"], "sources": {"linux-x86_64": {"apt": {
            "repository": base + "apt", "suite": "stable", "component": "main",
            "index_sha256": sha(index), "index_size": len(index),
            "packages": ["tiny=1.0-1"]}}}}]}
    (w.recipes / "tiny-apt.json").write_text(json.dumps(recipe))


def point_recipes(w, old, new):
    for f in w.recipes.glob("*.json"):
        f.write_text(f.read_text().replace(old, new))


def add_file_offline(w, apt):
    """A .deb added by hand once its pinned index is in the cache."""
    loose = w.root()
    first = w.run(loose, None, "add-file", str(apt / "pool/tiny_1.0-1_amd64.deb"))
    idx = w.run(loose, None, "add-file", str(apt / "dists/stable/main/binary-amd64/Packages"),
                str(apt / "pool/tiny_1.0-1_amd64.deb"))
    r = w.install(loose, None, "tiny-apt", "--offline")
    check("add-file takes a .deb once its pinned index is in the cache, and the APT part "
          "installs offline", first.returncode == 4 and idx.returncode == 0 and
          "accepted as tiny=1.0-1 of the linux-x86_64 APT index of tiny-apt 1.0" in idx.stdout
          and r.returncode == 0 and stores(loose, "tiny-apt"),
          first.stderr + idx.stdout + idx.stderr + r.stdout + r.stderr)


def test_mirror_create(w):
    # APT sources are installed on Linux only: under Wine the mirror holds
    # the stack alone.
    apt = [] if harness.EMULATOR else ["tiny-apt"]
    apt_files = [] if harness.EMULATOR else ["apt/pool/tiny_1.0-1_amd64.deb",
                                             "apt/dists/stable/main/binary-amd64/Packages"]
    up = Nginx(w.www, w.tmp / "nginx-up")
    try:
        base = up.url("")
        point_recipes(w, w.upstream, base)  # a live upstream, for the mirror's maker
        if apt:
            apt_channel(w, base)
        root = w.root()
        pre = w.run(root, None, "prefetch", up.url("libtorch.zip"))
        out = w.tmp / "mirror"
        r = w.run(root, None, "mirror", "create", str(out), "pytorch-cuda-stack", *apt,
                  *FACTS)
        check("mirror create, one archive in the cache already", pre.returncode == 0 and
              r.returncode == 0, pre.stderr + r.stdout + r.stderr)
        host = f"127.0.0.1_{up.port}"
        for name in STACK + apt_files:
            f = out / host / name
            check(f"the mirror lays {name} out by URL", f.is_file() and
                  f.read_bytes() == (w.www / name).read_bytes(), sorted(out.rglob("*")))
        check("it says where each came from", "libtorch.zip" in r.stdout and
              "copied from the download cache" in r.stdout and "downloaded" in r.stdout, r.stdout)
        example = (out / "mirrors.conf.example").read_text() if r.returncode == 0 else ""
        check("and writes the rules a client needs",
              f"{base} http://MIRROR/{host}/" in example, example)
    finally:
        up.stop()
    mirror = Nginx(out, w.tmp / "nginx-mirror")
    try:
        rules = w.rules(example.replace("MIRROR", f"127.0.0.1:{mirror.port}"), name="client.conf")
        fresh = w.root()
        r = w.install(fresh, rules, "pytorch-cuda-stack", *apt,
                      env={"CFAPKG_KEEP_ARCHIVES": "1"})
        check("a fresh root installs from the mirror with the upstream gone",
              r.returncode == 0 and current(fresh) == 1 and (not apt or stores(fresh, "tiny-apt")),
              r.stdout + r.stderr)
        log = (w.tmp / "nginx-mirror" / "logs" / "access.log").read_text()
        check("the mirror served the archives and the index",
              all(f"/{host}/{n} HTTP/1.1 200" in log for n in
                  STACK + apt_files[1:]), log)
        if apt:
            add_file_offline(w, out / host / "apt")
        again = w.tmp / "mirror-env"
        r = w.run(fresh, rules, "mirror", "create", str(again))
        check("mirror create of an environment's set, from the cache",
              r.returncode == 0 and (again / host / "libtorch.zip").is_file() and
              "downloaded" not in r.stdout, r.stdout + r.stderr)
    finally:
        mirror.stop()


def main():
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="cfapkg-mirrors-"))
    w = None
    try:
        w = World(tmp)
        installed = test_rewrite(w)
        test_failover(w)
        test_wrong_file(w, installed)
        test_local(w)
        test_bad_rules(w)
        test_user_file(w)
        test_add_file_offline(w)
        test_mirror_create(w)
    finally:
        if w:
            w.nginx.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    return check.report()


if __name__ == "__main__":
    sys.exit(main())
