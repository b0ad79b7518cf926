#!/usr/bin/env python3
"""The recipe folders' caches (ROOT/cache/recipes): each folder's index
(*.solv) and image of its parsed recipes (*.img), and the GPU table's
image (*.gpus):

- the first plan writes one for each folder, the next ones read it and
  parse only the recipes the request reaches: a recipe it cannot reach may
  be broken (in place, its stamp kept) and the plan still solves, while
  --no-index-cache, which parses every recipe, names the broken file;
- a changed recipe, a damaged cache and a cache another cfapkg version
  wrote are each rebuilt, and the plan is the one a whole read gives;
- a folder written within the last second is not cached yet (its stamps
  could still change within the same tick), a root that does not exist is
  not created, and a kill while the cache is written leaves nothing that
  a rerun does not replace;
- a name no recipe provides gets the same error, suggestions included,
  with the index as without;
- a plan for Windows does not read a recipe only Linux can install (a
  broken one in place still plans), and a plan that fails there names the
  Linux-only parts as a whole read does;
- a damaged or cut-short image is read from the recipe files instead and
  made again,
  byte for byte as a fresh root makes it (no address of the process that
  wrote it is left in it); a changed or damaged gpus.json cache alike,
  and a folder named gpus.json is refused by its path;
- the recipes each request reached are recorded (cache/recipes/reached,
  a line per request), and a damaged record changes no plan;
- a solved plan's answer is kept (cache/recipes/planned) and taken when
  the same plan is asked again, without loading libsolv; a pin, a fact or
  the experimental rule gets an answer of its own; --verbose says the same
  for a kept answer; an entry naming other recipes, a damaged one and a
  file of garbage are solved again, and every answer is a whole read's;
- gc removes the caches of folders the command does not read, naming
  each, and keeps those it reads;
- on Linux a warm plan loads no library but libsolv and the C library's:
  libsolv, cJSON, libcurl, libarchive, libcrypto and PCRE2 are bound on
  first use, a plan from the caches uses none but libsolv, and a command
  that solves nothing (list, history) not even that.
The real recipes are copied into a folder of the test's own; nothing is
downloaded."""
import json
import os
import pathlib
import shutil
import struct
import sys
import tempfile
import time

import harness

BIN = sys.argv[1]
SOURCE = pathlib.Path(__file__).resolve().parent.parent / "recipes"
check = harness.Checks()
FACTS = ["--os", "windows", "--gpu", "gfx1200", "--hip-sdk", "6.4.2"]
KILLED = (-9, 137)  # a signal on POSIX, TerminateProcess's code under Wine
# pytorch-cuda-stack on Windows never reaches the cuDNN stand-in, nor
# Debian's ROCm, which only Linux can install.
UNREACHED = "cudnn-miopen.json"
LINUX_ONLY = "rocm-debian.json"


def age(folder, seconds=3600):
    """Dates every file back, as files edited some time ago are."""
    then = time.time() - seconds
    for f in folder.iterdir():
        os.utime(f, (then, then))


class Root:
    def __init__(self, tmp, name="root", make=True):
        self.path = tmp / name
        if make:
            self.path.mkdir()
        self.recipes = tmp / "recipes"

    def plan(self, *args, env=None):
        e = {"CFAPKG_ROOT": str(self.path), "CFAPKG_NO_BUILTIN_RECIPES": "1",
             "CFAPKG_RECIPES": "", **(env or {})}
        return harness.run(BIN, "plan", *args, "--recipes", str(self.recipes), *FACTS, env=e)

    def caches(self, kind="solv"):
        folder = self.path / "cache" / "recipes"
        return sorted(folder.glob(f"*.{kind}")) if folder.is_dir() else []

    def header(self):
        c = self.caches()
        return c[0].read_bytes().split(b"\n", 1)[0].decode() if c else ""


def packages(proc):
    try:
        return [(p["name"], p["version"]) for p in json.loads(proc.stdout)["packages"]]
    except (json.JSONDecodeError, KeyError):
        return None


def same_as_whole(r, what, *args):
    warm = r.plan(*args, "--json")
    whole = r.plan(*args, "--json", "--no-index-cache")
    check(f"{what}: the plan through the index is the plan of a whole read",
          warm.returncode == whole.returncode and warm.stdout == whole.stdout,
          f"{warm.returncode} {warm.stdout[:300]}\n{whole.returncode} {whole.stdout[:300]}")
    return warm


def written_and_read(r):
    cold = r.plan("pytorch-cuda-stack", "--json")
    check("the first plan solves", cold.returncode == 0, cold.stderr)
    check("it writes one cache for the folder", len(r.caches()) == 1, r.caches())
    check("the cache says who wrote it and for what",
          r.header().startswith("cfapkg-recipe-index 3 "), r.header())
    check("... beside the folder's image and the GPU table's",
          len(r.caches("img")) == 1 and len(r.caches("gpus")) == 1,
          r.caches("img") + r.caches("gpus"))
    warm = same_as_whole(r, "warm", "pytorch-cuda-stack")
    check("the warm plan is the first one", warm.stdout == cold.stdout)
    return packages(cold)


def broken_in_place(f):
    """f overwritten with text that is no JSON, its stamp kept; a function
    that puts it back."""
    text, st = f.read_bytes(), f.stat()
    with open(f, "r+b") as out:
        out.write(b"{" * len(text))
    os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns))

    def restore():
        with open(f, "r+b") as out:
            out.write(text)
        os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns))
    return restore


def other_platform_not_parsed(r):
    restore = broken_in_place(r.recipes / LINUX_ONLY)
    warm = r.plan("pytorch-cuda-stack")
    check("a recipe only another OS can install is not parsed", warm.returncode == 0,
          warm.stderr)
    restore()
    failed = same_as_whole(r, "a plan that fails on this OS", "rocm-debian")
    said = failed.stdout + failed.stderr
    check("... fails, naming the Linux-only versions",
          failed.returncode != 0 and "not available for windows" in said, said[-400:])


def unreached_not_parsed(r):
    f = r.recipes / UNREACHED
    text, st = f.read_bytes(), f.stat()
    # Same size, same file, same time: the stamp the key holds is kept.
    with open(f, "r+b") as out:
        out.write(b"{" * len(text))
    os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns))
    warm = r.plan("pytorch-cuda-stack")
    check("a recipe the request cannot reach is not parsed", warm.returncode == 0, warm.stderr)
    whole = r.plan("pytorch-cuda-stack", "--no-index-cache")
    check("--no-index-cache parses every recipe and names the broken one",
          whole.returncode != 0 and UNREACHED in whole.stderr, whole.stderr)
    with open(f, "r+b") as out:
        out.write(text)
    os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns))


def recipe_changed(r, before):
    cache = r.caches()[0]
    old = cache.read_bytes()
    z = r.recipes / "zluda.json"
    doc = json.loads(z.read_text())
    picked = dict(before)["zluda"]
    doc["versions"] = [v for v in doc["versions"] if v["version"] != picked]
    z.write_text(json.dumps(doc, indent=2))
    age(r.recipes, 1800)
    after = same_as_whole(r, "a recipe changed", "pytorch-cuda-stack")
    got = dict(packages(after) or [])
    check("the plan sees the changed recipe", got.get("zluda") not in (None, picked), got)
    check("the cache is rebuilt for the new stamps", cache.read_bytes() != old)


def damaged_rebuilt(r):
    cache = r.caches()[0]
    good = cache.read_bytes()
    bad = bytearray(good)
    bad[-5] ^= 0xFF  # inside libsolv's data, after the header
    cache.write_bytes(bytes(bad))
    same_as_whole(r, "a damaged cache", "pytorch-cuda-stack")
    check("a damaged cache is rebuilt whole", cache.read_bytes() == good)
    # Another cfapkg's cache: its header names another version.
    head, rest = good.split(b" ", 3)[:3], good.split(b" ", 3)[3]
    other = b" ".join(head[:2] + [b"0.0.0-other"]) + b" " + rest
    cache.write_bytes(other)
    same_as_whole(r, "another version's cache", "pytorch-cuda-stack")
    check("another version's cache is rebuilt by this one", cache.read_bytes() == good,
          cache.read_bytes()[:120])


def damage(path, at):
    data = bytearray(path.read_bytes())
    data[at] ^= 0xFF
    path.write_bytes(bytes(data))


def image_regions(data):
    """Each recipe's region in an image, in file order: (offset, size) of
    its head block and of each version's details block."""
    nl = data.index(b"\n")
    n = int(data[:nl].split()[-1])
    table = nl + 1 + 8  # the header line, then the byte-order mark
    regions = []
    for i in range(n):
        off, size, nslots, _, ndetails, _ = struct.unpack_from("=6Q", data, table + 48 * i)
        at = off + ((size + 4 * nslots + 15) & ~15)
        details = [struct.unpack_from("=6Q", data, at + 48 * k)[:2] for k in range(ndetails)]
        regions.append(((off, size), details))
    return regions


def region_of(r, image, name):
    names = sorted(p.name for p in r.recipes.glob("*.json") if p.name != "gpus.json")
    return image_regions(image)[names.index(name)]


def damaged_in(image, blocks):
    """The image with a byte flipped in the middle of each block."""
    data = bytearray(image)
    for off, size in blocks:
        data[off + size // 2] ^= 0xFF
    return bytes(data)


def image_damaged(r, tmp):
    image = r.caches("img")[0]
    good = image.read_bytes()
    head, details = region_of(r, good, "zluda.json")
    image.write_bytes(damaged_in(good, [head]))
    same_as_whole(r, "a damaged image", "pytorch-cuda-stack")
    r.plan("pytorch-cuda-stack")
    check("a damaged image is made again", image.read_bytes() == good)
    # The plan reads the details of the versions it picks: ZLUDA's damaged
    # are read from the file, and the image is made again.
    image.write_bytes(damaged_in(good, details))
    same_as_whole(r, "damaged details of a picked version", "pytorch-cuda-stack")
    r.plan("pytorch-cuda-stack")
    check("... are found, and the image made again", image.read_bytes() == good)
    # A reached recipe none of whose versions is picked: its details are
    # not read by the plan, and a whole read (search) finds them.
    _, details = region_of(r, good, "rocblas-overlay.json")
    bad = damaged_in(good, details)
    image.write_bytes(bad)
    same_as_whole(r, "damaged details of versions not picked", "pytorch-cuda-stack")
    check("... are not read by a plan", image.read_bytes() == bad)
    e = {"CFAPKG_ROOT": str(r.path), "CFAPKG_NO_BUILTIN_RECIPES": "1", "CFAPKG_RECIPES": ""}
    shown = harness.run(BIN, "info", "rocblas-overlay", "--recipes", str(r.recipes), env=e)
    whole = harness.run(BIN, "info", "rocblas-overlay", "--recipes", str(r.recipes),
                        "--no-index-cache", env=e)
    check("... a whole read finds them and reads the file instead",
          shown.returncode == 0 and shown.stdout == whole.stdout, shown.stderr[-300:])
    r.plan("pytorch-cuda-stack")
    check("... and the image is made again", image.read_bytes() == good)
    other = Root(tmp, "second")
    other.plan("pytorch-cuda-stack")
    check("another root makes the same image, byte for byte",
          [p.read_bytes() for p in other.caches("img")] == [good])
    # Cut short after the table, which then names blocks past the end.
    image.write_bytes(good[:len(good) // 2])
    same_as_whole(r, "a cut-short image", "pytorch-cuda-stack")
    r.plan("pytorch-cuda-stack")
    check("a cut-short image is made again", image.read_bytes() == good)
    gpus = r.caches("gpus")[0]
    table = gpus.read_bytes()
    damage(gpus, len(table) - 3)
    same_as_whole(r, "a damaged GPU table cache", "pytorch-cuda-stack")
    r.plan("pytorch-cuda-stack")
    check("a damaged GPU table cache is made again", gpus.read_bytes() == table)


def gpus_changed(r):
    f = r.recipes / "gpus.json"
    doc = json.loads(f.read_text())
    for t in doc["targets"]:
        if t["gfx"] == "gfx1200":
            t["generation"] = "RDNA4, as edited"
    f.write_text(json.dumps(doc, indent=2))
    age(r.recipes, 1200)
    e = {"CFAPKG_ROOT": str(r.path), "CFAPKG_NO_BUILTIN_RECIPES": "1", "CFAPKG_RECIPES": ""}
    shown = harness.run(BIN, "gpus", "--recipes", str(r.recipes), env=e)
    check("an edited GPU table is read again", "RDNA4, as edited" in shown.stdout,
          shown.stdout[-400:])
    same_as_whole(r, "an edited GPU table", "pytorch-cuda-stack")


def gpus_table_a_folder(tmp):
    """A folder named gpus.json is a broken recipe folder, said as such."""
    r = Root(tmp, "folder-table")
    r.recipes = tmp / "folder-recipes"
    shutil.copytree(tmp / "recipes", r.recipes)
    (r.recipes / "gpus.json").unlink()
    (r.recipes / "gpus.json").mkdir()
    p = r.plan("pytorch-cuda-stack")
    check("a folder named gpus.json is refused, by its path",
          p.returncode != 0 and str(r.recipes / "gpus.json") in p.stderr and
          "folder" in p.stderr, p.stderr)


def reached_record(r):
    record = r.path / "cache" / "recipes" / "reached"
    check("the recipes a request reached are recorded", record.is_file())
    first = record.read_text().splitlines() if record.is_file() else []
    same_as_whole(r, "another request", "zluda")
    lines = record.read_text().splitlines() if record.is_file() else []
    check("... one line per request, the newest first",
          len(lines) == len(first) + 1 and lines[1:] == first, lines)
    record.write_text("0" * 64 + " 1 2 9.9 0.x\n" + "garbage\n")
    same_as_whole(r, "a damaged record", "pytorch-cuda-stack")
    same_as_whole(r, "a plan after the record is mended", "pytorch-cuda-stack")


def fnv1a(data):
    h = 14695981039346656037
    for b in data:
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def memo_head(path):
    """The plan memo's first line: format, cfapkg's version, libsolv's."""
    return path.read_bytes().split(b"\n", 1)[0].split(b" ")


def memo_entries(path):
    """The plan memo's entries as (key, body): after its first line, "KEY
    LENGTH SUM" lines, each followed by its body and a newline."""
    data, out = path.read_bytes(), []
    at = data.index(b"\n") + 1
    while at < len(data):
        nl = data.index(b"\n", at)
        key, length, _ = data[at:nl].split(b" ")
        out.append((key, data[nl + 1:nl + 1 + int(length)]))
        at = nl + 2 + int(length)
    return out


def write_memo(path, entries, head=None):
    head = head or memo_head(path)
    path.write_bytes(b" ".join(head) + b"\n" +
                     b"".join(b"%s %d %016x\n%s\n" % (k, len(b), fnv1a(b), b)
                              for k, b in entries))


def memo_versions(r, memo):
    """A kept answer is not taken by another cfapkg, nor by a cfapkg built
    on another libsolv: the file's first line names both."""
    r.plan("pytorch-cuda-stack")
    head = memo_head(memo)
    about = json.loads(harness.run(BIN, "--version", "--json").stdout or "{}")
    libs = about.get("libraries") or {}
    check("the memo names the cfapkg and the libsolv that wrote it",
          len(head) == 4 and head[0] == b"cfapkg-planned" and
          head[2].decode() == about.get("version") and head[3].decode() == libs.get("libsolv"),
          (head, about.get("version"), libs.get("libsolv")))
    for at, other in ((2, b"0.0.1"), (3, b"0.0.0")):
        changed = list(head)
        changed[at] = other
        write_memo(memo, memo_entries(memo), changed)
        check(f"a memo written by another {'cfapkg' if at == 2 else 'libsolv'} is not taken",
              maps_libsolv(r, "pytorch-cuda-stack") in (True, None))
        check("... and is written again for this one", memo_head(memo) == head,
              memo_head(memo))
    check("... which the next plan takes",
          maps_libsolv(r, "pytorch-cuda-stack") in (False, None))


def maps_libsolv(r, *args):
    """Runs the plan; whether it loaded libsolv (it solved), or None where
    the loader cannot say."""
    if harness.EMULATOR or not sys.platform.startswith("linux"):
        r.plan(*args)
        return None
    p = r.plan(*args, env={"LD_DEBUG": "files"})
    return any("libsolv" in w for w in p.stderr.split() if w.startswith("file="))


def plan_memo(r):
    memo = r.path / "cache" / "recipes" / "planned"
    memo.unlink(missing_ok=True)
    solved = r.plan("pytorch-cuda-stack", "--verbose")
    check("a solved plan's answer is kept", memo.is_file() and len(memo_entries(memo)) == 1)
    first = same_as_whole(r, "an answer kept", "pytorch-cuda-stack")
    check("... and taken when the plan is asked again, not kept twice",
          len(memo_entries(memo)) == 1)
    check("... which loads no libsolv", maps_libsolv(r, "pytorch-cuda-stack") in (False, None))
    memo_versions(r, memo)
    again = r.plan("pytorch-cuda-stack", "--verbose")
    check("--verbose says what the solver decided for a kept answer as for a solve",
          again.stderr == solved.stderr and "zluda" in again.stderr, again.stderr[-400:])
    picked = dict(packages(first) or []).get("zluda")
    older = "6-preview.63" if picked != "6-preview.63" else "6-preview.65"
    # Each input of a solve in turn: a pin, a fact, the experimental rule.
    for what, args in (("a pin", ("--pin", "zluda==" + older)),
                       ("a fact", ("--hip-runtime", "6")),
                       ("experimental parts allowed", ("--allow-experimental",))):
        same_as_whole(r, what + " beside a kept answer", "pytorch-cuda-stack", *args)
    pinned = dict(packages(r.plan("pytorch-cuda-stack", "--json", "--pin", "zluda==" + older))
                  or [])
    check("a pin is in the key: the pinned plan is not the kept one",
          pinned.get("zluda") == older, pinned)
    check("... and each request is kept on its own", len(memo_entries(memo)) == 4,
          len(memo_entries(memo)))
    # An entry whose checksum holds but whose parts are not the recipes at
    # its places is solved again.
    write_memo(memo, [(k, b.replace(b"5:zluda", b"5:zlude")) for k, b in memo_entries(memo)])
    check("an entry that names other recipes is solved again",
          maps_libsolv(r, "pytorch-cuda-stack") in (True, None))
    same_as_whole(r, "after an entry naming other recipes", "pytorch-cuda-stack")
    data = bytearray(memo.read_bytes())
    data[-3] ^= 0x01
    memo.write_bytes(bytes(data))
    same_as_whole(r, "a damaged memo", "pytorch-cuda-stack")
    memo.write_bytes(b"garbage\n" * 4)
    same_as_whole(r, "a memo of garbage", "pytorch-cuda-stack")


def gc_of_caches(r):
    e = {"CFAPKG_ROOT": str(r.path), "CFAPKG_NO_BUILTIN_RECIPES": "1", "CFAPKG_RECIPES": ""}
    kept = harness.run(BIN, "gc", "--json", "--recipes", str(r.recipes), env=e)
    doc = json.loads(kept.stdout or "{}")
    check("gc keeps the caches of the folders it reads",
          kept.returncode == 0 and doc.get("recipe_caches") == 0, kept.stdout[-300:])
    other = r.path.parent / "other-recipes"
    other.mkdir(exist_ok=True)
    before = sorted(p.name for p in (r.path / "cache" / "recipes").iterdir())
    gone = harness.run(BIN, "gc", "--json", "--recipes", str(other), env=e)
    doc = json.loads(gone.stdout or "{}")
    listed = sorted(i["name"] for i in doc.get("items", []) if i["kind"] == "recipe-cache")
    check("gc removes the caches of a folder it no longer reads, and names them",
          gone.returncode == 0 and
          listed == [n for n in before if n not in ("planned", "reached")], listed)
    check("... the records of requests and of plans stay",
          sorted(p.name for p in (r.path / "cache" / "recipes").iterdir()) ==
          ["planned", "reached"])
    same_as_whole(r, "a plan after gc", "pytorch-cuda-stack")
    check("... which caches the folder again", len(r.caches("img")) == 1)


def fresh_edit_not_cached(tmp):
    r = Root(tmp, "fresh")
    os.utime(r.recipes / "zluda.json")  # written just now
    p = r.plan("pytorch-cuda-stack")
    check("a folder just written still plans", p.returncode == 0, p.stderr)
    check("... but is not cached within the same second", r.caches() == [], r.caches())
    age(r.recipes)


def no_root_made(tmp):
    r = Root(tmp, "never", make=False)
    p = r.plan("pytorch-cuda-stack")
    check("a plan on a root that does not exist solves", p.returncode == 0, p.stderr)
    check("... and creates no root for its cache", not r.path.exists())


def killed_while_written(tmp):
    r = Root(tmp, "killed")
    k = r.plan("pytorch-cuda-stack", env={"CFAPKG_CRASH_AFTER": "1"})
    check("the plan is killed at the cache's write", k.returncode in KILLED, k.returncode)
    again = r.plan("pytorch-cuda-stack")
    check("the rerun solves", again.returncode == 0, again.stderr)
    left = [p.name for p in (r.path / "cache").rglob("*") if p.name.endswith((".tmp", ".part"))]
    check("nothing half-written is left", left == [], left)
    check("the rerun cached the folder", len(r.caches()) == 1, r.caches())


def unknown_name(r):
    warm = r.plan("zlud")
    whole = r.plan("zlud", "--no-index-cache")
    check("an unknown name is refused alike", (warm.returncode, warm.stdout, warm.stderr) ==
          (whole.returncode, whole.stdout, whole.stderr) and warm.returncode != 0,
          f"{warm.stdout}{warm.stderr}\n{whole.stdout}{whole.stderr}")
    check("... with the names it is like", "zluda" in warm.stdout + warm.stderr)


def libraries_loaded(r):
    """The warm plan under the loader's own report of the files it maps."""
    if harness.EMULATOR or not sys.platform.startswith("linux"):
        return
    r.plan("pytorch-cuda-stack")
    p = r.plan("pytorch-cuda-stack", env={"LD_DEBUG": "files"})
    mapped = sorted({w.split("=", 1)[1] for w in p.stderr.split() if w.startswith("file=")})
    lazy = [m for m in mapped if any(n in m for n in ("cjson", "curl", "archive", "crypto",
                                                      "pcre2", "solvext"))]
    check("a warm plan maps none of the libraries bound on first use",
          p.returncode == 0 and mapped and not lazy, mapped)
    # Nothing solves in list or history: libsolv stays out too.
    e = {"CFAPKG_ROOT": str(r.path), "LD_DEBUG": "files"}
    for cmd in ("list", "history"):
        p = harness.run(BIN, cmd, env=e)
        mapped = {w.split("=", 1)[1] for w in p.stderr.split() if w.startswith("file=")}
        check(f"{cmd} maps no libsolv", p.returncode == 0 and mapped and
              not any("solv" in m for m in mapped), sorted(mapped))


def main():
    with tempfile.TemporaryDirectory(prefix="cfapkg-index-") as t:
        tmp = pathlib.Path(t)
        shutil.copytree(SOURCE, tmp / "recipes")
        age(tmp / "recipes")
        r = Root(tmp)
        before = written_and_read(r)
        if before:
            unreached_not_parsed(r)
            other_platform_not_parsed(r)
            recipe_changed(r, before)
            image_damaged(r, tmp)
            gpus_changed(r)
            reached_record(r)
            plan_memo(r)
            gc_of_caches(r)
            damaged_rebuilt(r)
            unknown_name(r)
            same_as_whole(r, "a version no recipe has", "zluda==99")
            libraries_loaded(r)
        fresh_edit_not_cached(tmp)
        no_root_made(tmp)
        gpus_table_a_folder(tmp)
        killed_while_written(tmp)
    return check.report()


if __name__ == "__main__":
    sys.exit(main())
