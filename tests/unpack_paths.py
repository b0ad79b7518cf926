"""One archive through both of cfapkg's unpack paths -- from the file after
a download (unpack_tool ROOT ...) and while the download arrives
(unpack_tool --stream ROOT2 ...) -- and what must hold either way: the
same verdict, the same tree and manifest when accepted, nothing left in
the store when refused, and nothing written or linked outside ROOT.

Each archive gets a case folder of its own holding the two roots and a
canary folder beside them: anything that appears there, or anywhere in the
case folder but the two roots, was written outside ROOT."""
import hashlib
import json
import os
import pathlib
import stat
import subprocess

import harness

# A cross build's tool runs under an emulator (Wine), whose file modes are
# its own emulation: the mode checks are for native builds.
EMULATED = bool(harness.EMULATOR)
SANITIZER_MARKS = ("ERROR: AddressSanitizer", "runtime error:", "LeakSanitizer")


class Outcome:
    """What one run of unpack_tool printed and left behind."""

    def __init__(self, root, name, rc, res, stderr):
        self.root, self.rc, self.res, self.stderr = root, rc, res, stderr
        self.folder = root / "store" / name

    @property
    def ok(self):
        return self.rc == 0

    @property
    def error(self):
        return self.res.get("error", "")

    def clean_exit(self):
        """'' or why the run was not a clean accept or refusal."""
        if self.rc is None:
            return "timed out"
        marks = [m for m in SANITIZER_MARKS if m in self.stderr]
        if marks or self.rc not in (0, 1):
            return f"exit {self.rc}, {marks}: {self.stderr[-2000:]}"
        return ""


def run_tool(tool, root, archive, fmt, name, *extra, stream=False, env=None, drop=(),
             timeout=harness.TIMEOUT):
    """Runs unpack_tool once; output is decoded leniently because an
    archive's names need not be UTF-8."""
    args = [*harness.EMULATOR, tool, *(["--stream"] if stream else []), str(root),
            str(archive), fmt, name, *extra]
    e = dict(os.environ)
    for n in drop:
        e.pop(n, None)
    e.update(env or {})
    for _ in range(2 if harness.EMULATOR else 1):
        try:
            r = subprocess.run(args, capture_output=True, timeout=timeout, env=e)
        except subprocess.TimeoutExpired:
            return Outcome(root, name, None, {"error": "timed out"}, "")
        out = r.stdout.decode("utf-8", "replace")
        err = r.stderr.decode("utf-8", "replace")
        # Wine now and then fails to start a program (tests/WINE.md).
        if not (harness.EMULATOR and r.returncode == 1 and not out and not err):
            break
    try:
        res = json.loads(out, strict=False)
    except json.JSONDecodeError:
        res = {"error": out + err}
    return Outcome(root, name, r.returncode, res, err)


def tree(folder):
    """Relative path -> what is there: ("dir",), ("symlink", target) or
    ("file", permission bits, SHA-256).  The manifest is compared apart
    (its order of files is not part of what it says)."""
    out = {}
    for dirpath, dirs, files in os.walk(folder):
        for n in dirs + files:
            p = os.path.join(dirpath, n)
            rel = os.path.relpath(p, folder)
            st = os.lstat(p)
            if stat.S_ISLNK(st.st_mode):
                out[rel] = ("symlink", os.readlink(p))
            elif stat.S_ISDIR(st.st_mode):
                out[rel] = ("dir",)
            elif rel == os.path.join(".cfapkg", "manifest.json"):
                out[rel] = ("manifest",)
            elif stat.S_ISREG(st.st_mode):
                with open(p, "rb") as f:
                    digest = hashlib.sha256(f.read()).hexdigest()[:16]
                out[rel] = ("file", oct(st.st_mode & 0o777), digest)
            else:
                out[rel] = ("special", oct(st.st_mode))
    return out


def tree_diff(a, b, limit=6):
    """'' when equal, else a short description of the first differences."""
    lines = [f"{k}: file path {a.get(k, 'absent')}, stream path {b.get(k, 'absent')}"
             for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]
    more = f" (and {len(lines) - limit} more)" if len(lines) > limit else ""
    return "; ".join(lines[:limit]) + more


def manifest(folder):
    """The manifest with its files in path order, or None."""
    try:
        m = json.loads((folder / ".cfapkg" / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    m["files"] = sorted(m.get("files", []), key=lambda f: f.get("path", ""))
    return m


def mode_problems(folder):
    """Files whose manifest "mode" is missing or is not their permission
    bits on disk."""
    m = manifest(folder) or {"files": []}
    bad = []
    for f in m["files"]:
        if f.get("type") != "file":
            continue
        mode = f.get("mode")
        try:
            disk = (folder / f["path"]).lstat().st_mode & 0o777
        except OSError:
            bad.append(f"{f['path']}: not on disk")
            continue
        if not isinstance(mode, str) or not mode.isdigit() or int(mode, 8) & 0o777 != disk:
            bad.append(f"{f['path']}: manifest mode {mode!r}, on disk {disk:04o}")
    return "; ".join(bad[:6])


def escaping_links(folder):
    """Links in folder that resolve outside it (through any other links)."""
    base = os.path.realpath(folder)
    out = []
    for dirpath, dirs, files in os.walk(folder):
        for n in dirs + files:
            p = os.path.join(dirpath, n)
            if os.path.islink(p):
                real = os.path.realpath(p)
                if real != base and not real.startswith(base + os.sep):
                    out.append(f"{os.path.relpath(p, folder)} -> {real}")
    return out


def store_left(root):
    store = root / "store"
    return sorted(p.name for p in store.iterdir()) if store.is_dir() else []


def outside_problems(case, canary_before, outcomes):
    """'' or what was written or linked outside ROOT/store/NAME."""
    bad = []
    extra = sorted(set(os.listdir(case)) - {"file", "stream", "canary"})
    if extra:
        bad.append(f"written beside ROOT: {extra}")
    if tree(case / "canary") != canary_before:
        bad.append("the canary folder beside ROOT changed")
    for o in outcomes:
        if o.root.exists() and set(os.listdir(o.root)) - {"store"}:
            bad.append(f"written in ROOT outside the store: {sorted(os.listdir(o.root))}")
        bad += [f"a link escapes: {x}" for x in escaping_links(o.folder)] if o.folder.is_dir() \
            else []
    return "; ".join(bad)


def run_both(tool, case, archive, fmt, name, *extra, env=None, drop=(),
             timeout=harness.TIMEOUT):
    """Unpacks archive from the file and as a stream, each into its own
    root under case.  Returns (file outcome, stream outcome, checks): checks
    maps a check's name to '' when it held, else why not."""
    case = pathlib.Path(case)
    (case / "canary").mkdir(parents=True)
    (case / "canary" / "keep.txt").write_text("untouched\n")
    canary = tree(case / "canary")
    kw = dict(env=env, drop=drop, timeout=timeout)
    f = run_tool(tool, case / "file", archive, fmt, name, *extra, **kw)
    s = run_tool(tool, case / "stream", archive, fmt, name, *extra, stream=True, **kw)
    checks = {"runs cleanly": "; ".join(f"{w}: {o.clean_exit()}" for w, o in
                                        (("file path", f), ("stream path", s)) if o.clean_exit())}
    checks["same verdict"] = "" if f.ok == s.ok else (
        f"file path {'accepted' if f.ok else 'refused'} ({f.error}), stream path "
        f"{'accepted' if s.ok else 'refused'} (streamed {s.res.get('streamed')}; {s.error})")
    if f.ok and s.ok:
        checks["same tree"] = tree_diff(tree(f.folder), tree(s.folder))
        mf, ms = manifest(f.folder), manifest(s.folder)
        checks["same manifest"] = "" if mf == ms else f"file path {mf}, stream path {ms}"
    checks["nothing left on a refusal"] = "; ".join(
        f"{o.root.name}: {store_left(o.root)}" for o in (f, s) if not o.ok and store_left(o.root))
    checks["nothing outside"] = outside_problems(case, canary, (f, s))
    return f, s, checks


def check_modes(outcomes):
    """The manifest "mode" of every file of every accepted outcome; '' when
    they hold or cannot be judged (emulated)."""
    if EMULATED:
        return ""
    return "; ".join(f"{o.root.name}: {p}" for o in outcomes if o.ok
                     for p in [mode_problems(o.folder)] if p)
