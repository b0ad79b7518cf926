#!/usr/bin/env python3
"""The commands that delete, against nginx on 127.0.0.1 serving a test
channel (tests/channel.py): env remove shows what goes and asks (refusing
without a terminal unless --yes, and refusing "default"), gc --dry-run
lists exactly what the following gc removes and removes nothing, removing
the last request leaves an empty generation that list shows, and cache
info|clean sizes and clears cfapkg's downloads and the stack's compute
caches, in home, cache and temporary folders of the test's own."""
import json
import os
import pathlib
import subprocess
import sys
import time

import channel
import harness

BIN = sys.argv[1]
check = harness.Checks()
WINE = bool(harness.EMULATOR)
# Variables that move a compute cache: the user's must not leak in.
MOVERS = ("MIOPEN_CUSTOM_CACHE_DIR", "MIOPEN_USER_DB_PATH", "TRITON_CACHE_DIR",
          "TORCHINDUCTOR_CACHE_DIR", "AMD_COMGR_CACHE_DIR")


def run(root, *args, env=None, stdin=subprocess.DEVNULL):
    """cfapkg on root with no terminal (stdin /dev/null, unless given)."""
    e = {k: v for k, v in os.environ.items() if k not in MOVERS}
    e.update({"CFAPKG_ROOT": str(root.path), "CFAPKG_RECIPES": str(root.recipes),
              "CFAPKG_MIRRORS": ""}, **(env or {}))
    return subprocess.run([*harness.EMULATOR, BIN, *args], env=e, stdin=stdin,
                          capture_output=True, text=True, timeout=harness.TIMEOUT)


def run_tty(root, args, answer):
    """cfapkg with a terminal for standard input, answering its question."""
    import pty
    master, slave = pty.openpty()
    e = dict(os.environ, CFAPKG_ROOT=str(root.path), CFAPKG_RECIPES=str(root.recipes),
             CFAPKG_MIRRORS="")
    try:
        p = subprocess.Popen([BIN, *args], env=e, stdin=slave, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        os.close(slave)
        slave = None
        os.write(master, answer.encode())  # the terminal keeps it until cfapkg reads
        try:
            out, err = p.communicate(timeout=harness.TIMEOUT)
        except subprocess.TimeoutExpired:
            p.kill()
            out, err = p.communicate(timeout=10)
        return subprocess.CompletedProcess(args, p.returncode, out, err)
    finally:
        os.close(master)
        if slave is not None:
            os.close(slave)


def must(what, r):
    """A setup step: the test cannot go on without it."""
    if r.returncode != 0:
        print(f"FAIL setup: {what}: {r.stdout}{r.stderr}")
        sys.exit(1)


def js(text, empty=None):
    """JSON text, or empty when it is none (a failed command)."""
    try:
        return json.loads(text)
    except ValueError:
        return {} if empty is None else empty


def changed(before, after):
    """What differs between two trees: each path with its entry in both."""
    return {p: (before.get(p), after.get(p)) for p in before.keys() | after.keys()
            if before.get(p) != after.get(p)}


def tree(base, *paths):
    """Every file, folder and link under paths (default: base), named
    relative to base (links not followed), with file sizes."""
    out = {}
    for top in map(str, paths or (base,)):
        for d, dirs, files in os.walk(top):
            for name in dirs + files:
                p = os.path.join(d, name)
                out[os.path.relpath(p, str(base))] = (
                    "link" if os.path.islink(p) else
                    os.path.getsize(p) if name in files else -1)
    return out


def test_env_remove(root):
    must("env create", root.run("env", "create", "doomed"))
    must("install", root.change("install", "--env", "doomed", "pytorch-cuda-stack"))
    must("update", root.change("update", "--env", "doomed", "zluda"))
    gens = root.current("doomed")
    envdir = root.path / "envs" / "doomed"
    r = run(root, "env", "remove", "doomed")
    check("env remove without a terminal and without --yes is refused",
          r.returncode == 2 and "--yes" in r.stderr and envdir.is_dir(), r.stdout + r.stderr)
    check("and shows how many generations and which packages would go",
          f"{gens} generation" in r.stdout and "zluda " in r.stdout and
          "libtorch-cuda 2.3.0+cu118" in r.stdout, r.stdout)
    if os.name == "posix" and not WINE:
        r = run_tty(root, ["env", "remove", "doomed"], "n\n")
        check("env remove asks at a terminal, and no keeps it",
              r.returncode == 0 and "Remove environment \"doomed\"? [y/N]" in r.stdout and
              "Nothing changed" in r.stdout and envdir.is_dir(), r.stdout + r.stderr)
        r = run_tty(root, ["env", "remove", "doomed"], "\n")
        check("an empty answer keeps it too", r.returncode == 0 and envdir.is_dir(),
              r.stdout + r.stderr)
    r = run(root, "env", "remove", "doomed", "--yes")
    again = run(root, "env", "remove", "doomed", "--yes")
    check("env remove --yes removes it, naming what went; then it is missing",
          r.returncode == 0 and not envdir.exists() and "libtorch-cuda" in r.stdout and
          "Removed environment \"doomed\"" in r.stdout and again.returncode == 4,
          r.stdout + r.stderr + again.stderr)
    before = root.listing()
    r = run(root, "env", "remove", "default", "--yes")
    check("env remove default is refused, saying how to empty it",
          r.returncode == 2 and "always exists" in r.stderr and "'cfapkg remove'" in r.stderr
          and (root.path / "envs" / "default").is_dir() and root.listing() == before and before,
          r.stdout + r.stderr)


def test_empty(root):
    r = root.run("env", "create", "solo")
    r = root.run("list", "--env", "solo")
    check("list of an environment with nothing installed is no error",
          r.returncode == 0 and "(nothing installed)" in r.stdout, r.stdout + r.stderr)
    r = root.run("list", "--env", "solo", "--json")
    check("and --json gives an empty array", r.returncode == 0 and js(r.stdout).get("packages") == [],
          r.stdout + r.stderr)
    r = root.change("install", "--env", "solo", "zluda==6-preview.69")
    r = root.change("remove", "--env", "solo", "zluda")
    view = root.path / "envs" / "solo" / "2"
    check("removing the last request empties the environment in a new generation",
          r.returncode == 0 and root.current("solo") == 2 and view.is_dir() and
          "-zluda 6-preview.69" in r.stdout, r.stdout + r.stderr)
    lock = js((view / "lock.json").read_text()) if (view / "lock.json").is_file() else {}
    check("the empty generation's lock has no request and no package",
          lock.get("requests") == [] and lock.get("packages") == [], lock)
    r = root.run("list", "--env", "solo")
    r2 = root.run("list", "--env", "solo", "--json")
    check("list of the emptied environment", r.returncode == 0 and "(nothing installed)" in
          r.stdout and r2.returncode == 0 and js(r2.stdout).get("packages") == [], r.stdout + r.stderr)
    h = js(root.run("history", "--env", "solo", "--json").stdout).get("history", [])
    check("history shows both generations", [x["generation"] for x in h] == [1, 2], h)
    r = root.change("remove", "--env", "solo", "zluda")
    check("removing from the empty environment names what is not there",
          r.returncode == 4 and root.current("solo") == 2, r.stderr)
    r = root.change("install", "--env", "solo", "zluda==7-preview.10")
    check("an emptied environment takes an install again (generation 3)",
          r.returncode == 0 and root.listing("solo") == {"zluda": "7-preview.10"} and
          root.current("solo") == 3, r.stdout + r.stderr)


def age(path, days):
    t = time.time() - days * 86400
    os.utime(path, (t, t))


def gc_items(out):
    return sorted((i["kind"], i["env"], i.get("generation"), i["name"], i["bytes"])
                  for i in out.get("items", []))


def test_gc_dry_run(root):
    # default's generation 1 (ZLUDA 6) goes with --keep 1, and with it the
    # only use of ZLUDA 6's store folder (solo's generations 1 and 2 go too).
    must("a second generation", root.change("install", "pytorch-cuda-stack",
                                            "zluda==7-preview.10"))
    downloads = root.path / "downloads"
    downloads.mkdir(exist_ok=True)
    unused, part = "c" * 64, "d" * 64
    (downloads / unused).write_bytes(b"u" * 1234)
    (downloads / f"{part}.part").write_bytes(b"p" * 500)
    (downloads / f"{part}.part.meta").write_bytes(b"m" * 50)
    age(downloads / f"{part}.part", 2)
    age(downloads / f"{part}.part.meta", 2)
    (downloads / f"{'e' * 64}.part").write_bytes(b"young")
    before = tree(root.path)
    r = run(root, "gc", "--keep", "1", "--dry-run", "--json")
    dry = js(r.stdout)
    check("gc --dry-run removes nothing", r.returncode == 0 and tree(root.path) == before,
          r.stdout + r.stderr)
    kinds = {i["kind"] for i in dry.get("items", [])}
    check("gc --dry-run lists generations, store folders, downloads and partial downloads",
          dry.get("dry_run") is True and kinds == {"generation", "store", "download", "partial"}
          and dry.get("bytes_freed", 0) >= 1234 + 550, dry)
    text = run(root, "gc", "--keep", "1", "--dry-run")
    check("the text names each and the space", text.returncode == 0 and
          f"Would remove download {unused} (1.2 KiB" in text.stdout and
          f"Would remove partial download {part}.part (550 B" in text.stdout and
          "Would remove store folder zluda-6-preview.69-" in text.stdout and
          'Would remove generation 1 of environment "default"' in text.stdout and
          "gc would remove" in text.stdout and tree(root.path) == before,
          (text.returncode, text.stdout, changed(before, tree(root.path))))
    r = run(root, "gc", "--keep", "1", "--json")
    real = js(r.stdout)
    check("gc removes exactly what the dry run listed", r.returncode == 0 and
          gc_items(real) == gc_items(dry) and real.get("bytes_freed") == dry.get("bytes_freed") and
          real.get("dry_run") is False, (dry, real))
    gone = set(before) - set(tree(root.path))
    names = {i["name"] for i in dry.get("items", []) if i["kind"] in ("store", "download", "partial")}
    check("and what it listed is gone", names and all(f"store/{n}" in gone or f"downloads/{n}" in gone
                                            for n in names) and
          f"downloads/{part}.part.meta" in gone and f"downloads/{'e' * 64}.part" not in gone,
          (names, sorted(gone)[:20]))
    r = run(root, "gc", "--dry-run", "--json")
    check("a second dry run has nothing left to list",
          r.returncode == 0 and js(r.stdout).get("items") == [], r.stdout)


def cache_env(tmp):
    """Home, cache, data and temporary folders of the test's own."""
    home = tmp / "home"
    for d in ("home", "xdg", "local", "tmp"):
        (tmp / d).mkdir(exist_ok=True)
    return {"HOME": str(home), "USERPROFILE": str(home), "XDG_CACHE_HOME": str(tmp / "xdg"),
            "LOCALAPPDATA": str(tmp / "local"), "TMPDIR": str(tmp / "tmp"),
            "TEMP": str(tmp / "tmp"), "TMP": str(tmp / "tmp"), "LOGNAME": "tester",
            "USER": "tester", "USERNAME": "tester"}


# Each Linux cache: where it is under the test's folders, and files in it.
LINUX_CACHES = {
    "zluda": ("xdg/zluda/ComputeCache", {"zluda.db": 1000, "zluda.db-wal": 24}),
    "miopen": ("home/.cache/miopen", {"3.4.0/gfx1200.ukdb": 2000, "3.4.0/x/y": 300}),
    "miopen-db": ("home/.config/miopen", {"gfx1200.HIP.udb": 400}),
    "triton": ("home/.triton/cache", {"abc/k.hsaco": 500, "abc/k.json": 60}),
    "inductor": ("tmp/torchinductor_tester", {"fx/a.py": 600}),
    "comgr": ("xdg/comgr", {"ab/cd": 700}),
}
# Beside them, what is no cache and stays.
KEEP = ("xdg/zluda/notes.txt", "home/.cache/other/x", "home/.config/other.conf",
        "home/.triton/llvm/bin", "tmp/torchinductor_someone/x", "xdg/keep")


def fill(tmp):
    for rel, files in LINUX_CACHES.values():
        for name, size in files.items():
            f = tmp / rel / name
            f.parent.mkdir(parents=True, exist_ok=True)
            f.write_bytes(b"k" * size)
    for rel in KEEP:
        (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp / rel).write_text("keep")
    # A link inside a cache is not followed: not counted, its target stays.
    os.symlink(str(tmp / "xdg"), str(tmp / LINUX_CACHES["comgr"][0] / "link"))


def test_cache(root, tmp):
    env = cache_env(tmp)
    places = [tmp / d for d in ("home", "xdg", "local", "tmp", "elsewhere")]
    r = run(root, "cache", "info", "--json", env=env)
    info = js(r.stdout)
    compute = {c["name"]: c for c in info.get("compute", [])}
    if WINE:
        # Wine sets %USERPROFILE% and %LOCALAPPDATA% from its prefix, not from
        # the test's environment (tests/WINE.md): only the layout is checked.
        check("cache info lists the Windows caches", r.returncode == 0 and
              compute.get("zluda", {}).get("path", "").endswith("\\zluda\\ComputeCache") and
              compute.get("miopen", {}).get("path", "").endswith("\\.miopen\\cache") and
              compute.get("triton", {}).get("path", "").endswith("\\.triton\\cache"),
              r.stdout + r.stderr)
        return
    fill(tmp)
    downloads = root.path / "downloads"
    (downloads / ("f" * 64)).write_bytes(b"x" * 4321)
    (downloads / f"{'9' * 64}.part").write_bytes(b"y" * 10)
    r = run(root, "cache", "info", "--json", env=env)
    info = js(r.stdout)
    compute = {c["name"]: c for c in info.get("compute", [])}
    want = {n: (str(tmp / rel), len(files), sum(files.values()))
            for n, (rel, files) in LINUX_CACHES.items()}
    got = {n: (c["path"], c["files"], c["bytes"]) for n, c in compute.items() if c["present"]}
    check("cache info sizes each compute cache from its files", r.returncode == 0 and
          got == want, (got, want))
    files = [p for p in downloads.iterdir() if p.is_file()]
    whole = [p for p in files if not p.name.endswith((".part", ".part.meta"))]
    parts = [p for p in files if p not in whole]
    dl = info.get("downloads", {})
    check("cache info sizes cfapkg's downloads", dl.get("files") == len(whole) and
          dl.get("bytes") == sum(p.stat().st_size for p in whole) and
          dl.get("partial") == sum(p.name.endswith(".part") for p in parts) >= 2 and
          dl.get("partial_bytes") == sum(p.stat().st_size for p in parts),
          (dl, [p.name for p in files]))
    r = run(root, "cache", "info", env=env)
    check("the text names each cache and its folder", r.returncode == 0 and
          "ZLUDA's compute cache" in r.stdout and str(tmp / "home/.triton/cache") in r.stdout,
          r.stdout)
    moved = tmp / "elsewhere" / "triton"
    (moved / "a").mkdir(parents=True)
    (moved / "a" / "b").write_bytes(b"t" * 77)
    r = run(root, "cache", "info", "--json", env={**env, "TRITON_CACHE_DIR": str(moved)})
    t = {c["name"]: c for c in js(r.stdout).get("compute", [])}.get("triton", {})
    check("a variable that moves a cache is followed", t.get("path") == str(moved) and
          t.get("set_by") == "TRITON_CACHE_DIR" and t.get("bytes") == 77, t)
    before, before_root = tree(tmp, *places), tree(root.path)
    r = run(root, "cache", "clean", "--compute", "--dry-run", env=env)
    check("cache clean --compute --dry-run names each and removes nothing",
          r.returncode == 0 and tree(tmp, *places) == before and tree(root.path) == before_root and
          all(c["what"] in r.stdout for c in compute.values() if c["present"]) and
          f"Would remove download {'f' * 64}" in r.stdout, r.stdout + r.stderr)
    r = run(root, "cache", "clean", env=env)
    check("cache clean without --compute leaves the compute caches",
          r.returncode == 0 and all((tmp / rel).is_dir() for rel, _ in LINUX_CACHES.values())
          and not (downloads / ("f" * 64)).exists(), r.stdout + r.stderr)
    r = run(root, "cache", "clean", "--compute", "--json", env=env)
    out = js(r.stdout)
    left = tree(tmp)  # relative to tmp: KEEP's paths
    check("cache clean --compute removes those folders, and only them",
          r.returncode == 0 and
          not any((tmp / rel).exists() for rel, _ in LINUX_CACHES.values()) and
          sorted(c["name"] for c in out.get("compute", []) if c["removed"]) ==
          sorted(LINUX_CACHES) and all(rel in left for rel in KEEP) and
          "elsewhere/triton/a/b" in left, (r.stdout + r.stderr, sorted(left)))
    r = run(root, "cache", "clean", "--compute", "--dry-run", "--json",
            env={**env, "AMD_COMGR_CACHE_DIR": str(tmp / "home")})
    check("a variable naming the home folder itself is not emptied by a dry run either",
          r.returncode == 0 and (tmp / "home").is_dir(), r.stdout + r.stderr)
    r = run(root, "cache", "clean", "--compute", env={**env, "AMD_COMGR_CACHE_DIR": str(tmp)})
    check("cache clean refuses to empty a folder that holds the home folder",
          r.returncode == 2 and "not removed" in r.stderr and (tmp / "home").is_dir(),
          r.stdout + r.stderr)


def main():
    with channel.served("cfapkg-destructive-") as (tmp, _, recipes):
        root = channel.Root(BIN, tmp / "root", recipes)
        must("a first install", root.change("install", "pytorch-cuda-stack",
                                            "zluda==6-preview.69"))
        test_env_remove(root)
        test_empty(root)
        test_gc_dry_run(root)
        test_cache(root, tmp)
    return check.report()


if __name__ == "__main__":
    sys.exit(main())
