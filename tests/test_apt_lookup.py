#!/usr/bin/env python3
"""What an APT index gave for a part's packages is kept (ROOT/apt/lookups)
and read back instead of the whole index, with the same answers: a recipe
whose APT source pins a generated index installs offline (the index and
its .debs, written here as ar archives, put in the download cache) to the
same archives with the lookups on and off (--no-index-cache); a second
install reads its lookup without writing it again; a damaged or truncated
lookup is written again from the index, and the install still takes the
same archives; one another cfapkg version wrote is not read; a changed
index and changed packages each get a lookup of their own, and the install
follows the new index; gc keeps the lookups of the index the recipes pin
and removes the rest; and a kill at every point of an install
(CFAPKG_CRASH_AFTER), the lookup's write among them, leaves a root whose
next install takes the same archives.

    test_apt_lookup.py CFAPKG
"""
import json
import pathlib
import shutil
import sys
import tempfile

import harness
from debrepo import Repo

BIN = sys.argv[1]
check = harness.Checks()
FACTS = ["--os", "linux", "--arch", "x86_64", "--gpu", "gfx1030", "--allow-experimental"]
MAX_CRASH_POINTS = 60


BASE = [("liba", "1.0-1", "amd64", "libc6 (>= 2.36)"),
        ("liba", "2.0-1", "amd64", None),
        ("libb", "1.0-1", "amd64", None),
        ("libb", "1.5-1", "amd64", "liba (>= 1.0),\n libc6"),
        ("libb", "1.5-1", "i386", None),
        ("libc", "3-1", "all", None)]
WANTED = ["liba=1.0-1", "libb", "libc"]


def cfapkg(root, recipes, *args, env=None):
    return harness.run(BIN, *args, "--root", str(root), "--recipes", str(recipes),
                       env=dict(env or {}, CFAPKG_NO_BUILTIN_RECIPES="1"))


def install(root, recipes, *extra, env=None):
    return cfapkg(root, recipes, "install", "lookup-test", *FACTS, "--offline", "--yes", *extra,
                  env=env)


def archives(root):
    """The archives the current generation's lock records for the part."""
    env = root / "envs" / "default"
    gen = (env / "current").read_text().strip()
    lock = json.loads((env / gen / "lock.json").read_text())
    text = json.dumps(lock)
    return sorted(text[i:i + 120] for i in range(len(text)) if text.startswith("pool/", i))


def lookups(root):
    d = root / "apt" / "lookups"
    return sorted(p for p in d.iterdir() if not p.name.endswith(".tmp")) if d.is_dir() else []


def reinstall(root, recipes, *extra):
    cfapkg(root, recipes, "remove", "lookup-test", "--yes")
    return install(root, recipes, *extra)


def test_same(tmp, repo, recipes):
    off = repo.seed(tmp / "root-off")
    r = install(off, recipes, "--no-index-cache")
    check("with --no-index-cache the set installs", r.returncode == 0, r.stdout + r.stderr)
    check("and keeps no lookup", not lookups(off), lookups(off))
    want = archives(off) if r.returncode == 0 else []
    check("it takes the wanted version, the newest of a bare name, and an 'all' one",
          len(want) == 3 and any("liba_1.0-1_amd64" in a for a in want) and
          any("libb_1.5-1_amd64" in a for a in want) and any("libc_3-1_all" in a for a in want),
          want)
    on = repo.seed(tmp / "root-on")
    r = install(on, recipes)
    check("with lookups on the set installs", r.returncode == 0, r.stdout + r.stderr)
    kept = lookups(on)
    check("one lookup is kept", len(kept) == 1, kept)
    check("to the same archives", r.returncode == 0 and archives(on) == want,
          (archives(on) if r.returncode == 0 else r.stderr, want))
    if len(kept) != 1:
        return on, want, None
    stamp, text = kept[0].stat().st_mtime_ns, kept[0].read_bytes()
    r = reinstall(on, recipes)
    check("a second install reads the lookup to the same archives", r.returncode == 0 and
          archives(on) == want, r.stdout + r.stderr)
    check("without writing it again", kept[0].stat().st_mtime_ns == stamp and
          kept[0].read_bytes() == text)
    return on, want, kept[0]


def test_damaged(on, recipes, want, kept):
    text = kept.read_bytes()
    body = text.index(b"\n") + 1
    at = text.index(b"SHA256: ", body) + len(b"SHA256: ")
    flipped = text[:at] + (b"0" if text[at:at + 1] != b"0" else b"1") + text[at + 1:]
    for how, damaged in (("a changed digit", flipped), ("a cut file", text[:len(text) // 2]),
                         ("another key's line", b"cfapkg-apt-lookup " + b"0" * 64 + text[body - 66:]),
                         ("no line at all", b"garbage")):
        kept.write_bytes(damaged)
        r = reinstall(on, recipes)
        check(f"a lookup with {how} is not trusted: the same archives",
              r.returncode == 0 and archives(on) == want, r.stdout + r.stderr)
        check(f"and is written again from the index ({how})", kept.read_bytes() == text)


def fnv1a(data):
    h = 14695981039346656037
    for c in data:
        h = ((h ^ c) * 1099511628211) & 0xFFFFFFFFFFFFFFFF
    return h


def test_other_version(repo, on, recipes, want, kept):
    """A whole, consistent lookup that another cfapkg version wrote (its
    key line names that version; its name and sum fit), saying libb is
    1.0-1: this version does not read it, and keeps a lookup of its own."""
    text = kept.read_bytes()
    key, _, body = text.split(b"\n", 2)
    words = key.split(b" ")
    words[1] = b"0.0.0-other"
    other_key = b" ".join(words)
    old = [st for st in repo.index.split(b"\n\n")
           if st.startswith(b"Package: libb\nVersion: 1.0-1\n")][0]
    stanzas = [old if st.startswith(b"Package: libb\n") else st
               for st in body.rstrip(b"\n").split(b"\n\n")]
    other_body = b"\n\n".join(stanzas) + b"\n\n"
    other = kept.parent / f"{kept.name.split('-')[0]}-{fnv1a(other_key):016x}"
    other.write_bytes(other_key + f"\nsum {fnv1a(other_body):016x}\n".encode() + other_body)
    kept.unlink()
    r = reinstall(on, recipes)
    check("a lookup another cfapkg version kept is not read: the same archives",
          r.returncode == 0 and archives(on) == want, r.stdout + r.stderr)
    check("and this version keeps its own beside it", kept.read_bytes() == text and
          other.is_file(), lookups(on))
    other.unlink()


def test_changed(tmp, on, want):
    newer = Repo(BASE + [("libb", "1.6-1", "amd64", None)])
    recipes = newer.recipe(tmp / "recipes-newer", "lookup-test", WANTED)
    newer.seed(on)
    r = reinstall(on, recipes)
    got = archives(on) if r.returncode == 0 else []
    check("a changed index gets a lookup of its own", len(lookups(on)) == 2, lookups(on))
    check("and the install follows it (libb 1.6-1, not the kept 1.5-1)",
          any("libb_1.6-1_amd64" in a for a in got) and got != want, (got, r.stderr))
    wrong = newer.recipe(tmp / "recipes-wrong-size", "lookup-test", WANTED)
    text = json.loads((wrong / "lookup-test.json").read_text())
    text["versions"][0]["sources"]["linux-x86_64"]["apt"]["index_size"] += 1
    (wrong / "lookup-test.json").write_text(json.dumps(text))
    r = reinstall(on, wrong)
    check("the same index pinned with another size is not answered by its lookup",
          r.returncode != 0 and len(lookups(on)) == 2, (r.returncode, r.stderr, lookups(on)))
    recipes = newer.recipe(tmp / "recipes-other", "lookup-test", ["liba=2.0-1", "libc"])
    r = reinstall(on, recipes)
    got = archives(on) if r.returncode == 0 else []
    check("other packages of the same index get a lookup of their own",
          len(lookups(on)) == 3, lookups(on))
    check("and their own archives", len(got) == 2 and any("liba_2.0-1" in a for a in got),
          (got, r.stderr))
    return recipes


def test_gc(on, recipes):
    """gc keeps the lookups of the index the recipes pin (they answer an
    install even once gc has removed that index from the cache), and
    removes the rest: the old index's, another version's, and files that
    are no lookup; a dry run lists exactly what the real run removes."""
    d = on / "apt" / "lookups"
    current = [p for p in lookups(on) if p.name.split("-")[0] ==
               json.loads((recipes / "lookup-test.json").read_text())["versions"][0]["sources"]
               ["linux-x86_64"]["apt"]["index_sha256"]]
    (d / "not-a-lookup").write_bytes(b"junk")
    other = current[0].read_bytes().replace(b"cfapkg-apt-lookup ", b"cfapkg-apt-lookup 0.0.0-", 1)
    (d / (current[0].name[:65] + "0" * 16)).write_bytes(other)
    before = set(lookups(on))
    r = cfapkg(on, recipes, "gc", "--dry-run", "--json")
    doc = json.loads(r.stdout or "{}")
    listed = sorted(i["name"] for i in doc.get("items", []) if i["kind"] == "lookup")
    r = cfapkg(on, recipes, "gc", "--json")
    removed = sorted(p.name for p in before - set(lookups(on)))
    check("gc keeps the lookups of the pinned index and no other",
          r.returncode == 0 and sorted(lookups(on)) == sorted(current) and len(current) == 2,
          (lookups(on), current, r.stderr))
    check("gc removes the old index's lookup, another version's and a stray file",
          len(removed) == 3 and "not-a-lookup" in removed and
          json.loads(r.stdout or "{}").get("lookups") == 3, (removed, r.stdout[-300:]))
    check("gc --dry-run lists the lookups gc then removes", listed == removed, (listed, removed))
    r = reinstall(on, recipes)
    check("a kept lookup answers an offline install after gc removed its index",
          r.returncode == 0 and len(archives(on)) == 2, r.stdout + r.stderr)


def test_crash(tmp, repo, recipes, want):
    """A kill at crash point n of a first install (the lookup's write is
    one of them); the install run again takes the same archives."""
    finished = False
    for n in range(1, MAX_CRASH_POINTS + 1):
        root = repo.seed(tmp / f"root-crash-{n}")
        r = install(root, recipes, env={"CFAPKG_CRASH_AFTER": str(n)})
        if r.returncode == 0:
            finished = True
            break
        again = install(root, recipes)
        check(f"killed at point {n}, the next install takes the same archives",
              again.returncode == 0 and archives(root) == want, again.stdout + again.stderr)
        check(f"killed at point {n}, the next install keeps one whole lookup",
              len(lookups(root)) == 1 and lookups(root)[0].read_bytes().startswith(
                  b"cfapkg-apt-lookup "), lookups(root))
        shutil.rmtree(root, ignore_errors=True)
    check(f"an install passes its last crash point within {MAX_CRASH_POINTS}", finished)


def main():
    if harness.EMULATOR:  # APT sources are installed on Linux only
        print("apt-lookup: skipped under the Windows build (APT sources are Linux-only)")
        return 0
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="cfapkg-apt-lookup-"))
    try:
        repo = Repo(BASE)
        recipes = repo.recipe(tmp / "recipes", "lookup-test", WANTED)
        on, want, kept = test_same(tmp, repo, recipes)
        if kept:
            test_damaged(on, recipes, want, kept)
            test_other_version(repo, on, recipes, want, kept)
            test_gc(on, test_changed(tmp, on, want))
        test_crash(tmp, repo, recipes, want)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return check.report()


if __name__ == "__main__":
    sys.exit(main())
