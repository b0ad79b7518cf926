#!/usr/bin/env python3
"""An environment's stable path, ROOT/envs/ENV/active, against nginx on
127.0.0.1 serving the test channel: everything handed to shells and
launchers goes through it, a shell activated before an update, rollback
or repair then sees the new generation's files, a file path captured once
keeps working, and gc --keep 1 leaves it working.  Where the file system
keeps no folder links (Wine 8 has no junctions), programs are given the
generation's own folder and env show says so."""
import json
import os
import re
import shutil
import subprocess
import sys

import channel
import harness

BIN = sys.argv[1]
check = harness.Checks()
WINDOWS = bool(harness.EMULATOR)


def show(root):
    r = root.run("env", "show", "--json")
    try:
        return json.loads(r.stdout)
    except json.JSONDecodeError:
        return {}


def captured(root):
    """The file a launcher or .bat would keep: ZLUDA's driver DLL."""
    doc = show(root)
    zluda = [p for p in doc.get("path", []) if p.replace("\\", "/").endswith("view/zluda")]
    # Under Wine the path is spelt as Windows spells it (\tmp\..., Z:\tmp\...):
    # the same file for this process as a Linux path.
    host = re.sub(r"^[A-Za-z]:", "", zluda[0]).replace("\\", "/") if zluda else ""
    return os.path.join(host, "nvcuda.dll") if zluda else ""


def read(path):
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as e:
        return str(e).encode()


def in_shell(root, script):
    """Runs script in bash after the environment's activation snippet, as
    a user's shell that was activated once."""
    snippet = root.run("env", "activate", "--shell", "bash").stdout
    env = dict(os.environ, CFAPKG_ROOT=str(root.path), CFAPKG_RECIPES=str(root.recipes),
               CFAPKG_MIRRORS="", CFAPKG=BIN)
    return subprocess.run(["bash", "-c", snippet + "\n" + script], capture_output=True,
                          text=True, env=env, timeout=120)


def test_linked(root):
    doc = show(root)
    active = str(root.path / "envs" / "default" / "active")
    check("env show hands out the stable path", doc.get("stable_path") == active and
          all(p.startswith(active) for p in doc.get("path", [])), doc)
    check("the launcher and staged files come from it too",
          (doc.get("launcher") or "").startswith(active) and
          all(s["from"].startswith(active) for s in doc.get("stage", [])), doc)
    r = root.run("env", "activate", "--shell", "bash")
    check("env activate puts the stable path on PATH",
          active + "/view/zluda" in r.stdout and "/envs/default/1/" not in r.stdout, r.stdout)
    path = captured(root)
    check("a captured path reads the installed ZLUDA", read(path) == b"nvcuda 6-preview.69\n",
          read(path))
    # zluda requested without a version, so that update may move it.
    root.change("install", "zluda", "--os", "windows")
    gen = root.current()
    # A shell activated now, before the update below.
    script = ('first="${PATH%%:*}"; echo "$first" > shell-path; '
              '"$CFAPKG" update zluda --gpu gfx1200 --arch x86_64 --os windows --yes >/dev/null 2>&1; '
              'cat "$first/nvcuda.dll"')
    r = in_shell(root, script)
    check("a shell activated before an update sees the new generation's files",
          r.stdout == "nvcuda 7-preview.10\n" and root.current() == gen + 1, r.stdout + r.stderr)
    check("... and so does the path captured before", read(path) == b"nvcuda 7-preview.10\n")
    r = root.run("rollback")
    check("a rollback switches what the captured path reads",
          r.returncode == 0 and read(path) == b"nvcuda 6-preview.69\n", r.stderr)
    gen = root.current()
    os.unlink(root.path / "envs" / "default" / str(gen) / "view" / "zluda" / "nvcuda.dll")
    check("a file gone from the view is gone from the captured path", not os.path.exists(path))
    r = root.run("repair", "--yes")
    check("repair writes a new generation, and the captured path has the file again",
          r.returncode == 0 and root.current() > gen and read(path) == b"nvcuda 6-preview.69\n",
          r.stdout + r.stderr)
    if not WINDOWS:  # a folder's flush covers the switch on POSIX only
        test_number(root)
    r = root.run("gc", "--keep", "1")
    gens = sorted(p.name for p in (root.path / "envs" / "default").iterdir() if p.name.isdigit())
    check("gc --keep 1 keeps the generation the stable path names, and it still works",
          r.returncode == 0 and gens == [str(root.current())] and
          read(path) == b"nvcuda 6-preview.69\n", (gens, r.stderr))
    os.unlink(root.path / "envs" / "default" / "active")
    os.symlink("1", root.path / "envs" / "default" / "active")
    root.run("pin", "zluda==6-preview.69")  # any writer: it takes the root's lock
    check("a writer's recovery points a link left behind (a kill) at the current generation",
          os.readlink(root.path / "envs" / "default" / "active") == str(root.current()))
    test_power_cut(root)


def test_number(root):
    """Where the link stands, a switch makes 'current' a second name of the
    generation's 'number' file, which reached the disk with the generation:
    no new text is written.  A generation without a whole 'number' (made
    by an older cfapkg, or overwritten) gets 'current' written instead."""
    envdir = root.path / "envs" / "default"
    cur = envdir / "current"

    def linked(gen):
        number = envdir / str(gen) / "number"
        return (number.is_file() and os.path.samefile(cur, number) and
                cur.read_text() == f"{gen}\n")

    gen = root.current()
    check("'current' is the current generation's 'number' under a second name", linked(gen),
          sorted(p.name for p in (envdir / str(gen)).iterdir()))
    r = root.run("rollback")
    prev = root.current()
    check("... and after a rollback, the older generation's",
          r.returncode == 0 and prev != gen and linked(prev), r.stderr)
    os.unlink(envdir / str(gen) / "number")
    r = root.run("rollback", "--to", str(gen))
    check("a generation without 'number' gets 'current' written, naming it",
          r.returncode == 0 and root.current() == gen and cur.read_text() == f"{gen}\n" and
          os.stat(cur).st_nlink == 1, r.stderr)
    (envdir / str(prev) / "number").write_text("99\n")
    r = root.run("rollback", "--to", str(prev))
    check("a 'number' that does not hold its generation's number is not linked",
          r.returncode == 0 and root.current() == prev and cur.read_text() == f"{prev}\n" and
          not os.path.samefile(cur, envdir / str(prev) / "number"), r.stderr)
    r = root.run("rollback", "--to", str(gen))
    check("... and switching back still works", r.returncode == 0 and root.current() == gen,
          r.stderr)


def test_power_cut(root):
    """A switch flushes the folder once, after 'current' and the link are
    both renamed.  Where 'current' is written rather than linked to the
    generation's number file (a generation an older cfapkg made), its text
    is not flushed on its own, so a power cut can leave it empty, and the
    link is then the record; emptying it here, through its name, stands
    for that."""
    envdir = root.path / "envs" / "default"
    gen = root.current()
    want = root.listing()
    (envdir / "current").write_text("")
    check("an empty 'current' (a power cut after a switch) is read through the link",
          root.listing() == want and want, root.run("list").stderr)
    r = root.run("history", "--json")
    marked = [h["generation"] for h in json.loads(r.stdout or "{}").get("history", [])
              if h.get("current")]
    check("... history marks the linked generation current", marked == [gen], r.stdout + r.stderr)
    root.run("pin", "zluda==6-preview.69")  # any writer: it takes the root's lock
    check("... and a writer's recovery writes 'current' again from the link",
          (envdir / "current").read_text() == f"{gen}\n")
    (envdir / "current").write_text("")
    os.unlink(envdir / "active")
    os.symlink("99", envdir / "active")
    r = root.run("list")
    check("an empty 'current' with a link to no generation is an error naming the file",
          r.returncode != 0 and "current: does not hold a generation number" in r.stderr and
          "rollback --env default --to N" in r.stderr, r.stderr)
    r = root.run("rollback", "--to", str(gen))
    check("... and rollback --to N sets it again, with the link",
          r.returncode == 0 and root.current() == gen and
          os.readlink(envdir / "active") == str(gen), r.stderr)


def test_unlinked(root):
    """Wine 8: no junctions, so the numbered folder, said plainly."""
    root.change("install", "zluda", "--os", "windows")
    doc = show(root)
    r = root.run("env", "show")
    gen = root.current()
    check("without folder links the paths name the generation, and env show says so",
          doc.get("stable_path") is None and
          all(f"/envs/default/{gen}/" in p.replace("\\", "/") for p in doc.get("path", [])) and
          "no folder link here" in r.stdout, r.stdout)
    path = captured(root)
    root.run("update", "zluda", *channel.FACTS, "--os", "windows", "--yes")
    check("... and such a captured path keeps its generation, as before",
          read(path) == b"nvcuda 6-preview.69\n" and root.current() == gen + 1)
    r = root.run("gc", "--keep", "1")
    check("gc --keep 1 still works without the link", r.returncode == 0, r.stderr)


def main():
    with channel.served("cfapkg-stable-", headers=5, big=1000) as (tmp, _, recipes):
        root = channel.Root(BIN, tmp / "root", recipes)
        r = root.change("install", "pytorch-cuda-stack", "zluda==6-preview.69", "--os",
                        "windows")
        check("install", r.returncode == 0, r.stderr)
        link = root.path / "envs" / "default" / "active"
        if os.path.lexists(link):
            test_linked(root)
        else:
            check("only Wine lacks the link", WINDOWS, "no ROOT/envs/default/active")
            test_unlinked(root)
    return check.report()


if __name__ == "__main__":
    sys.exit(main())
