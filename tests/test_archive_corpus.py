#!/usr/bin/env python3
"""libarchive's own test archives (scripts/archive-corpus fetches them)
through both of cfapkg's unpack paths, under whatever build TOOL is (the
sanitizer one in CI):

    test_archive_corpus.py TOOL [CORPUS_DIR]   (else $CFAPKG_ARCHIVE_CORPUS)

Many of them are damaged or odd on purpose.  Whatever cfapkg decides, each
run must end in an accept or a refusal (exit 0 or 1, no sanitizer report,
within a bound), write nothing outside its root and link nothing out of
its store folder, leave nothing in the store when it refuses; and where an
archive was unpacked as it streamed, the file path must give the same
tree.  Prints a line per format and a closing 'N passed, N failed' (one
check per archive)."""
import os
import pathlib
import re
import sys
import tempfile
from collections import Counter, defaultdict

import harness
import unpack_paths

# The format cfapkg is told, from the end of the file name.
FORMATS = [(r"\.(zip|zipx|jar)$", "zip"), (r"\.7z$", "7z"), (r"\.tar$", "tar"),
           (r"\.tar\.(gz|bz2|xz|zst|lz|lz4|lzo|lzma)$", None), (r"\.tgz$", "tar.gz"),
           (r"\.tbz2?$", "tar.bz2"), (r"\.txz$", "tar.xz"), (r"\.tlz$", "tar.lzma"),
           (r"\.(ar|deb)$", "deb")]
# A run that takes longer than this is stuck (the largest archive takes a
# few seconds under ASan on a slow machine).
PER_RUN_TIMEOUT = 120
HOW_TO = ("no corpus: run scripts/archive-corpus (it fetches libarchive's test archives once "
          "and prints their folder), then pass that folder as CORPUS_DIR, set "
          "CFAPKG_ARCHIVE_CORPUS, or configure with -DCFAPKG_ARCHIVE_CORPUS=FOLDER")


def format_of(name):
    for pattern, fmt in FORMATS:
        m = re.search(pattern, name)
        if m:
            return fmt or m.group(0)[1:]
    return None


def outcome_of(f, s, checks):
    """A short name for what the two paths did."""
    if f.ok and s.ok and not s.res.get("streamed"):
        return "accepted, file path twice"
    if f.ok and s.ok:
        return "accepted, streamed" + (" to another tree" if checks.get("same tree") else "")
    if not f.ok and not s.ok:
        return "refused by both"
    if s.ok and re.search(r"crc", f.error, re.I):
        # --stream unpacks as a pinned download, which does not check the
        # CRC-32s again; the plain run is unpinned and does.
        return "a bad CRC-32, refused only unpinned"
    return "the paths disagree"


def problems_of(f, s, checks):
    """What went wrong for one archive; empty when nothing did."""
    bad = [f"{what}: {checks[what]}" for what in
           ("runs cleanly", "nothing outside", "nothing left on a refusal") if checks[what]]
    if s.res.get("streamed"):
        if not f.ok and not re.search(r"crc", f.error, re.I):
            bad.append(f"streamed, but the file path refused: {f.error}")
        elif f.ok and checks.get("same tree"):
            bad.append(f"streamed to another tree: {checks['same tree']}")
    elif f.ok != s.ok and not (s.ok and re.search(r"crc", f.error, re.I)):
        bad.append(checks["same verdict"])
    return bad


def main():
    sys.stdout.reconfigure(errors="backslashreplace")  # names need not be UTF-8
    tool = sys.argv[1]
    corpus = sys.argv[2] if len(sys.argv) > 2 else os.environ.get("CFAPKG_ARCHIVE_CORPUS", "")
    check = harness.Checks()
    if not corpus or not pathlib.Path(corpus).is_dir():
        given = f"{corpus}: not a folder; " if corpus else ""
        check("corpus", False, given + HOW_TO)
        return check.report()
    archives = sorted(p for p in pathlib.Path(corpus).iterdir()
                      if p.is_file() and format_of(p.name))
    if not archives:
        check("corpus", False, f"{corpus}: no archives in it; {HOW_TO}")
        return check.report()
    by_format = defaultdict(Counter)
    with tempfile.TemporaryDirectory() as d:
        for i, archive in enumerate(archives):
            fmt = format_of(archive.name)
            f, s, checks = unpack_paths.run_both(tool, pathlib.Path(d) / str(i), archive, fmt,
                                                 "corpus-1-x", timeout=PER_RUN_TIMEOUT)
            bad = problems_of(f, s, checks)
            outcome = outcome_of(f, s, checks)
            by_format[fmt][outcome] += 1
            if outcome.startswith("a bad CRC"):
                print(f"note {archive.name}: {outcome}: {f.error[:300]}")
            by_format[fmt]["failed"] += bool(bad)
            check(archive.name, not bad, "; ".join(bad)[:1500])
    for fmt, counts in sorted(by_format.items()):
        total = sum(v for k, v in counts.items() if k != "failed")
        parts = ", ".join(f"{v} {k}" for k, v in sorted(counts.items()) if k != "failed")
        print(f"{fmt}: {total} archives: {parts}; {counts['failed']} failed")
    return check.report()


if __name__ == "__main__":
    sys.exit(main())
