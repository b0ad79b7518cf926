#!/usr/bin/env python3
"""The command line as a contract (docs/cli.md, "JSON" and "Exit status"),
against nginx on 127.0.0.1 serving a test channel (tests/channel.py):

- every command 'cfapkg --help' lists is exercised here with --json (a
  command added without a line below fails the test): its standard output
  is exactly one JSON object whose first member is "format": 1; a failure
  prints {"format": 1, "error": {"status", "kind", "message"}} with status
  equal to the exit code; a command whose output is not cfapkg's (run, a
  shell snippet) refuses --json with exit 2;
- each exit code of the table comes from the situation the table names;
- history's changes are objects, and install, update, rollback, pin and
  verify say what they did in JSON;
- 'why' names the request and the requirements that pull a part in, and
  an update that changes nothing says why for each package."""
import json
import os
import pathlib
import re
import socket
import subprocess
import sys

import channel
import harness

BIN = sys.argv[1]
check = harness.Checks()
WINE = bool(harness.EMULATOR)
KINDS = {1: "error", 2: "usage", 3: "unsolvable", 4: "not-found", 5: "recipe",
         6: "unsupported", 7: "no-gpu", 8: "network", 9: "integrity", 10: "busy"}


def commands():
    """The command names 'cfapkg --help' lists."""
    r = harness.run(BIN, "--help")
    names = []
    for line in r.stdout.splitlines():
        m = re.match(r"^  ([a-z][a-z-]*)\b", line)
        if m and m.group(1) not in names:
            names.append(m.group(1))
    return names


def one_document(text):
    """The one JSON object text holds, or None."""
    try:
        doc = json.loads(text)
    except ValueError:
        return None
    return doc if isinstance(doc, dict) else None


# Commands whose own document says what failed, printed instead of the
# error document (docs/cli.md, "JSON").
OWN_FAILURE = {
    "plan": lambda d: d.get("solved") is False or d.get("installable") is False,
    "detect": lambda d: d.get("gpus") == [],
    "doctor": lambda d: isinstance(d.get("probes"), list),
    "prefetch": lambda d: all(x.get("error") for x in d.get("downloads", [{}])),
    "fetch": lambda d: any(x.get("error") for x in d.get("downloads", [{}])),
    "verify": lambda d: d.get("ok") is False,
    "recipe": lambda d: any(x.get("error") for x in d.get("recipes", [])),
}


def check_json(root, name, args, env=None):
    """Runs args with --json and checks the envelope; returns (r, doc)."""
    r = root.run(args[0], "--json", *args[1:], env=env)  # before any "--"
    doc = one_document(r.stdout)
    ok = doc is not None and next(iter(doc), None) == "format" and doc["format"] == 1
    if ok and r.returncode != 0 and "error" in doc:
        e = doc["error"]
        ok = e.get("status") == r.returncode and e.get("kind") == KINDS.get(r.returncode) and \
            bool(e.get("message"))
    elif ok and r.returncode != 0:
        ok = OWN_FAILURE.get(name, lambda d: False)(doc)
    check(f"{name} --json: one document with format 1 (exit {r.returncode})", ok,
          f"{args}: {r.stdout[:400]} {r.stderr[:400]}")
    return r, doc


def exercise(root, tmp, srv):
    """One --json run per command; each yields its document for later checks."""
    stage = tmp / "prog"
    stage.mkdir(exist_ok=True)
    supplied = tmp / "supplied.bin"
    supplied.write_bytes(b"not expected by any recipe\n")
    facts = channel.FACTS
    return {
        "add-file": ["add-file", str(supplied)],
        "bench": ["bench", "--env", "default", "--env", "nosuch", "--", "x"],
        "cache": ["cache", "info"],
        "channel": ["channel", "list"],
        "config": ["config"],
        "detect": ["detect"],
        "doctor": ["doctor", "--lib-dir", str(tmp), "--timeout", "30"],
        "env": ["env", "list"],
        "fetch": ["fetch", "zluda==6-preview.69", *facts],
        "gc": ["gc", "--dry-run"],
        "gpus": ["gpus", "7900"],
        "history": ["history"],
        "info": ["info", "zluda"],
        "install": ["install", "zluda==6-preview.69", *facts],
        "list": ["list"],
        "lock": ["lock"],
        "mark-good": ["mark-good"],
        "mirror": ["mirror", "create", str(tmp / "mirror"), "zluda==6-preview.69", *facts],
        "pin": ["pin", "libtorch-cuda==2.3.0+cu118"],
        "pins": ["pins"],
        "plan": ["plan", "pytorch-cuda-stack", *facts],
        "prefetch": ["prefetch", srv.url("zluda6.zip")],
        "recipe": ["recipe", "outdated", "zluda", "--releases-url", srv.url("nothing.json")],
        "remove": ["remove", "nosuch"],
        "repair": ["repair", "--dry-run"],
        "report": ["report"],
        "rollback": ["rollback"],
        "run": ["run", "--", "true"],
        "search": ["search", "zluda"],
        "stage": ["stage", str(stage)],
        "unmark": ["unmark"],
        "unpin": ["unpin", "libtorch-cuda"],
        "unstage": ["unstage", str(stage)],
        "update": ["update", "zluda", *facts],
        "verify": ["verify"],
        "why": ["why", "zluda"],
        "completion": ["completion", "bash"],
        "help": ["help", "plan"],
    }


TEXT_ONLY = {"run", "completion", "help"}


def test_every_command(root, tmp, srv):
    table = exercise(root, tmp, srv)
    listed = commands()
    check("--help lists the commands", len(listed) > 30, listed)
    for name in listed:
        if name not in table:
            check(f"{name} has a --json line in this test", False, name)
            continue
        if name in TEXT_ONLY:
            r = root.run(table[name][0], "--json", *table[name][1:])
            doc = one_document(r.stdout) or {}
            check(f"{name} refuses --json with exit 2 and says so", r.returncode == 2 and
                  doc.get("error", {}).get("kind") == "usage" and "--json" in r.stderr,
                  r.stdout + r.stderr)
            continue
        check_json(root, name, table[name])
    r = root.run("env", "activate", "--shell", "bash", "--json")
    check("env activate refuses --json (its output is a shell's)", r.returncode == 2,
          r.stdout + r.stderr)


def closed_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def test_exit_codes(root, tmp, srv):
    """Each code of the table from its situation, text and --json alike."""
    facts = channel.FACTS
    broken = tmp / "broken"
    broken.mkdir(exist_ok=True)
    (broken / "bad.json").write_text("{\"format\": 1, \"name\": ")
    cases = [
        (2, ["plan", "--no-such-option"], None),
        (2, ["plan", "zluda>>1", *facts], None),
        (3, ["plan", "zluda==7-preview.10", "--gpu", "gfx1100", "--arch", "x86_64"], None),
        (4, ["plan", "zlude", *facts], None),
        (4, ["info", "zlude"], None),
        (4, ["list", "--env", "nosuch"], None),
        (4, ["why", "nosuch"], None),
        (5, ["search", "--recipes", str(broken)], None),
        (7, ["plan", "zluda", "--os", "windows", "--root", str(tmp / "fresh")],
         {"CFAPKG_GPU": ""}),
        (8, ["prefetch", f"http://127.0.0.1:{closed_port()}/x.zip", "--retries", "0"], None),
        (9, ["prefetch", srv.url("zluda6.zip"), "--sha256", "0" * 64], None),
    ]
    for code, args, env in cases:
        r = root.run(*args, env=env)
        check(f"exit {code}: {' '.join(args[:2])}", r.returncode == code and
              "cfapkg: error" in r.stderr + r.stdout or (code == 3 and r.returncode == 3),
              f"{r.returncode}: {r.stdout[-300:]} {r.stderr[-300:]}")
        check_json(root, args[0], args, env=env)
    # 10 (another writer holds the root's lock) is test_lock's.
    r = root.run("run", "--", "no-such-program-anywhere")
    check("run: a missing program is 127, not cfapkg's own 4", r.returncode == 127 and
          "no-such-program-anywhere" in r.stderr, f"{r.returncode} {r.stderr}")


def test_change_documents(root):
    facts = channel.FACTS
    r, doc = check_json(root, "install", ["install", "pytorch-cuda-stack", "zluda==6-preview.69",
                                          *facts, "--yes"])
    doc = doc or {}
    check("install --json: outcome, generations and the set", doc.get("outcome") in
          ("done", "nothing-to-do") and any(p["name"] == "libtorch-cuda" for p in
                                          doc.get("packages", [])), doc)
    before = root.current()
    r, doc = check_json(root, "install", ["install", "zluda==7-preview.10", *facts, "--yes"])
    doc = doc or {}
    check("a change: each change an object with action, name, from and to",
          doc.get("outcome") == "done" and doc.get("previous") == before and
          {"action": "change", "name": "zluda", "from": "6-preview.69", "to": "7-preview.10",
           "text": "zluda 6-preview.69 -> 7-preview.10"} in doc.get("changes", []), doc)
    r, doc = check_json(root, "history", ["history"])
    last = [h for h in (doc or {}).get("history", []) if h["event"] == "generation"][-1:]
    check("history --json gives changes as objects, not one string",
          last and isinstance(last[0]["changes"], list) and
          last[0]["changes"][0].get("to") == "7-preview.10", last)
    r, doc = check_json(root, "rollback", ["rollback"])
    check("rollback --json: from and to", (doc or {}).get("generation") == before and
          (doc or {}).get("previous") == before + 1, doc)
    r, doc = check_json(root, "verify", ["verify"])
    check("verify --json: files checked, none changed", (doc or {}).get("files", 0) > 0 and
          (doc or {}).get("changed") == [], doc)
    r, doc = check_json(root, "pin", ["pin", "zluda==6-preview.69"])
    check("pin --json names the pin", (doc or {}).get("pins") == ["zluda==6-preview.69"], doc)


def test_why(root):
    r = root.run("why", "libtorch-cuda")
    check("why: the request, then the requirement that pulls it in",
          r.returncode == 0 and "pytorch-cuda-stack 1 (requested) -> requires" in r.stdout and
          "libtorch-cuda 2.3.0+cu118" in r.stdout, r.stdout + r.stderr)
    r = root.run("why", "cublas")
    check("why: a provided name is answered by the part that provides it",
          r.returncode == 0 and r.stdout.startswith("zluda 6-preview.69 (requested)"),
          r.stdout + r.stderr)
    r = root.run("why", "pytorch-cuda-stack", "--json")
    doc = one_document(r.stdout) or {}
    check("why --json: one chain per part, request first", r.returncode == 0 and
          doc.get("chains") == [[{"name": "pytorch-cuda-stack", "version": "1",
                                  "requested": True, "required_as": None}]], doc)


def test_nothing_to_do(root):
    r = root.change("update", "zluda")
    check("update held by a pin says so", r.returncode == 0 and "Nothing to do" in r.stdout and
          "the pin zluda==6-preview.69 holds it" in r.stdout, r.stdout + r.stderr)
    root.run("unpin", "zluda")
    r = root.run("update", "zluda", "--gpu", "gfx1100", "--arch", "x86_64", "--yes")
    check("update whose newer version does not fit names the reason",
          r.returncode == 0 and "Nothing to do" in r.stdout and "7-preview.10 does not fit" in
          r.stdout and "gfx1100" in r.stdout, r.stdout + r.stderr)
    root.change("install", "pytorch-cuda-stack")
    r = root.change("install", "pytorch-cuda-stack")
    check("install of what is there: the newest version", r.returncode == 0 and
          "pytorch-cuda-stack 1 is the newest version" in r.stdout, r.stdout + r.stderr)
    root.change("install", "zluda==6-preview.69")
    r = root.change("update")
    check("update held by the request itself names the request, not a status",
          r.returncode == 0 and "Nothing to do" in r.stdout and
          "zluda 6-preview.69 is kept: the request zluda==6-preview.69 holds it" in r.stdout
          and "validated" not in r.stdout and
          "'cfapkg install zluda==7-preview.10'" in r.stdout, r.stdout + r.stderr)


def test_misspelt(root):
    for cmd in ("remove", "update"):
        r = root.change(cmd, "zlude")
        check(f"{cmd} of a name not in the environment: exit 4, did you mean",
              r.returncode == 4 and "did you mean: zluda" in r.stderr, r.stderr)
    r = root.run("plan", "pytorch-cuda-stack", "zluda==6-preview.69", *channel.FACTS)
    check("plan's download figure leaves out what the store holds",
          r.returncode == 0 and "Download: 0 B in 0 packages (2 already in the store" in r.stdout,
          r.stdout)


def test_long_history(tmp):
    """A generation whose change list is longer than the history entry's
    1 KiB text still lists every change in history --json."""
    recipes = tmp / "many-recipes"
    recipes.mkdir()
    names = [f"a-long-package-name-for-history-{i:02}" for i in range(48)]
    for name in names:
        (recipes / f"{name}.json").write_text(json.dumps(
            {"format": 1, "name": name, "summary": "one of many", "kind": "meta",
             "versions": [{"version": "1.0.0+build.7"}]}))
    (recipes / "many.json").write_text(json.dumps(
        {"format": 1, "name": "many", "summary": "requires them all", "kind": "meta",
         "versions": [{"version": "1", "requires": names}]}))
    root = channel.Root(BIN, tmp / "root-many", recipes)
    r = root.change("install", "many")
    r, doc = check_json(root, "history", ["history"])
    gens = [h for h in (doc or {}).get("history", []) if h["event"] == "generation"]
    added = {c.get("name") for c in gens[-1]["changes"] if c.get("action") == "add"} \
        if gens else set()
    check("history --json lists every change of a long generation, each whole",
          len(gens) == 1 and added == set(names) | {"many"}, gens[-1:])


def main():
    with channel.served("cfapkg-contract-") as (tmp, srv, recipes):
        test_long_history(tmp)
        root = channel.Root(BIN, tmp / "root", recipes)
        r = root.change("install", "pytorch-cuda-stack", "zluda==6-preview.69")
        if r.returncode != 0:
            print(f"FAIL setup: install: {r.stdout}{r.stderr}")
            return 1
        test_change_documents(root)
        test_why(root)
        test_nothing_to_do(root)
        test_misspelt(root)
        test_every_command(root, tmp, srv)
        test_exit_codes(root, tmp, srv)
    return check.report()


if __name__ == "__main__":
    sys.exit(main())
