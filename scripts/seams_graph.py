#!/usr/bin/env python3
"""seams_graph.py - the two checks of scripts/check-seams that need more
than a grep: no circle of calls between the files of one folder, and no
snprintf-style result dropped.

  seams_graph.py circles BUILD    the file-level call graph of each folder,
                                  from the objects of a build (nm)
  seams_graph.py snprintf FILE... every snprintf/vsnprintf call's result used
  seams_graph.py self-test        both checks on fixtures that must fail

A circle (a strongly connected component of more than one file) is printed
with its files and the symbols that tie them, so it can be broken by moving
a function, splitting a file or passing a callback."""
import pathlib
import re
import subprocess
import sys
import tempfile

# The folders whose objects are checked; probe/ is a program of its own.
FOLDERS = ("platform", "core", "detect", "solver", "cache", "env", "channel", "runtime",
           "trans", "pkgtool", "probe")
TARGETS = ("cfapkg.dir", "cfapkg-cli.dir", "cfapkg-probe.dir")


def nm_symbols(obj):
    """(defined, undefined) global symbols of one object file."""
    out = subprocess.run(["nm", "-g", obj], capture_output=True, text=True, check=True).stdout
    defined, undefined = set(), set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] in ("U", "w"):
            undefined.add(parts[1])
        elif len(parts) == 3 and parts[1] not in ("U", "w"):
            defined.add(parts[2])
    return defined, undefined


def objects_of(build, source_root):
    """{folder: {source file: object}} for the objects of a build whose
    source still exists (a moved file leaves a stale object behind)."""
    found = {}
    for target in TARGETS:
        base = pathlib.Path(build) / "CMakeFiles" / target
        for o in sorted(base.rglob("*.o")):
            rel = o.relative_to(base)
            source = pathlib.Path(str(rel)[:-2])
            if rel.parts[0] in FOLDERS and (pathlib.Path(source_root) / source).exists():
                found.setdefault(rel.parts[0], {})[str(source)] = str(o)
    return found


def call_graph(files):
    """{file: {callee file: [symbols]}} among the files of one folder."""
    syms = {f: nm_symbols(o) for f, o in files.items()}
    home = {}
    for f, (defined, _) in syms.items():
        for s in defined:
            home.setdefault(s, f)
    graph = {f: {} for f in files}
    for f, (_, undefined) in syms.items():
        for s in sorted(undefined):
            callee = home.get(s)
            if callee and callee != f:
                graph[f].setdefault(callee, []).append(s)
    return graph


def components(graph):
    """Tarjan's strongly connected components, iteratively (no recursion
    limit on a folder of many files)."""
    index, low, on_stack, stack, out = {}, {}, set(), [], []
    counter = [0]
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, it = work[-1]
            nxt = next(it, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter[0]
                    counter[0] += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == node:
                        break
                out.append(sorted(comp))
    return out


def circles(build, source_root="."):
    """The text of every circle found, one block per circle."""
    report = []
    for folder, files in sorted(objects_of(build, source_root).items()):
        graph = call_graph(files)
        for comp in components(graph):
            if len(comp) < 2:
                continue
            lines = [f"{folder}/: {len(comp)} files in a circle: " + " ".join(comp)]
            for f in comp:
                for callee, symbols in sorted(graph[f].items()):
                    if callee in comp:
                        lines.append(f"    {f} -> {callee}: {', '.join(symbols)}")
            report.append("\n".join(lines))
    return report


# Comments and literals are blanked before the snprintf scan, so a call
# named in a comment or a string is not taken for one.
CODE_NOISE = re.compile(r'/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)
CALL = re.compile(r'(?<![A-Za-z0-9_])(v?snprintf)\s*\(')
# What may stand before a call whose result is dropped: the end of a
# statement or block, a condition's closing parenthesis, else/do, or a
# (void) cast.
DROPPED_AFTER = re.compile(r'(?:[;{}]|\belse|\bdo|\(\s*void\s*\)|\))\s*$')


# A cast before the call ("n = (size_t)snprintf(...)") keeps the result
# when what stands before the cast uses it.
CAST = re.compile(r'\(\s*(?!void\b)[A-Za-z_][A-Za-z0-9_ ]*\**\s*\)\s*$')
USED_AFTER = re.compile(r'(?:[=(,+\-?:!<>|&]|\breturn)\s*$')


def unchecked_snprintf(path):
    text = pathlib.Path(path).read_text(errors="replace")
    code = CODE_NOISE.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)
    bad = []
    for m in CALL.finditer(code):
        before = code[:m.start()]
        cast = CAST.search(before)
        if cast and USED_AFTER.search(before[:cast.start()]):
            continue
        if DROPPED_AFTER.search(before) or not before.strip():
            line = code.count("\n", 0, m.start()) + 1
            bad.append(f"{path}:{line}: {m.group(1)} result not checked")
    return bad


FIXTURE = {
    # a.c and b.c call each other: a circle; c.c only calls down.
    "core/a.c": "int b_one(void); int a_one(void) { return b_one(); }\n"
                "int a_two(void) { return 2; }\n",
    "core/b.c": "int a_two(void); int b_one(void) { return a_two(); }\n",
    "core/c.c": "int a_one(void); int c_one(void) { return a_one(); }\n",
}
SNPRINTF_FIXTURE = """#include <stdio.h>
/* snprintf(ignored, in a comment) */
static void f(char *b, size_t n, int x)
{
	snprintf(b, n, "%d", x);
	if (x)
		(void)snprintf(b, n, "%d", x);
	else
		vsnprintf_is_not_called(b);
	if (snprintf(b, n, "%d", x) >= (int)n)
		return;
	int k = snprintf(b, n, "snprintf(");
	k += (int)snprintf(b, n, "%d", x);
}
"""


def self_test():
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        root = pathlib.Path(tmp)
        for name, text in FIXTURE.items():
            src = root / "src" / name
            obj = root / "build" / "CMakeFiles" / "cfapkg.dir" / (name + ".o")
            src.parent.mkdir(parents=True, exist_ok=True)
            obj.parent.mkdir(parents=True, exist_ok=True)
            src.write_text(text)
            subprocess.run(["cc", "-c", str(src), "-o", str(obj)], check=True)
        found = circles(root / "build", root / "src")
        ok = (len(found) == 1 and "core/a.c core/b.c" in found[0] and "core/c.c" not in found[0]
              and "core/a.c -> core/b.c: b_one" in found[0]
              and "core/b.c -> core/a.c: a_two" in found[0])
        print(("ok" if ok else "FAIL") + ": a two-file circle is found, with the symbols "
              "that close it, and a file that only calls into it is left out")
        failed += not ok
        (root / "src" / "core" / "b.c").write_text("int b_one(void) { return 1; }\n")
        subprocess.run(["cc", "-c", str(root / "src" / "core" / "b.c"), "-o",
                        str(root / "build" / "CMakeFiles" / "cfapkg.dir" / "core" / "b.c.o")],
                       check=True)
        ok = circles(root / "build", root / "src") == []
        print(("ok" if ok else "FAIL") + ": with the call back removed there is no circle")
        failed += not ok
        fixture = root / "s.c"
        fixture.write_text(SNPRINTF_FIXTURE)
        lines = [b.split(":")[1] for b in unchecked_snprintf(fixture)]
        ok = lines == ["5", "7"]
        print(("ok" if ok else "FAIL") + ": a dropped and a (void) snprintf result are "
              "refused; a checked one, a kept one and one in a comment are not: " + str(lines))
        failed += not ok
    return 1 if failed else 0


def main(argv):
    if argv[:1] == ["self-test"]:
        return self_test()
    if argv[:1] == ["circles"] and len(argv) == 2:
        found = circles(argv[1])
        if found:
            print("check-seams: files that call each other in a circle (move a function, "
                  "split a file or pass a callback):\n" + "\n".join(found), file=sys.stderr)
            return 1
        return 0
    if argv[:1] == ["snprintf"]:
        bad = [b for f in argv[1:] for b in unchecked_snprintf(f)]
        if bad:
            print("check-seams: a snprintf result is dropped, so a cut text would go on "
                  "unnoticed (check it, or use cfa_snprintf / cli_snprintf):\n  " +
                  "\n  ".join(bad), file=sys.stderr)
            return 1
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
