"""Runs every saved fuzz input through its harness once (ctest fuzz-regressions).

    replay.py BUILD_DIR SOURCE_DIR HARNESS...

A harness NAME replays regressions/NAME-* (inputs that once broke
something) and its seed corpus corpus/NAME/.  Any crash, sanitizer report
or broken property fails the test, naming the input.
"""
import pathlib
import subprocess
import sys


def main():
    build, source = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
    failed = []
    for name in sys.argv[3:]:
        inputs = sorted(str(p) for p in (source / "regressions").glob(name + "-*"))
        corpus = source / "corpus" / name
        if corpus.is_dir():
            inputs.append(str(corpus))
        if not inputs:
            continue
        exe = build / ("replay_" + name)
        # Generous: a slow, busy machine under ASan replays a few hundred inputs.
        r = subprocess.run([str(exe)] + inputs, capture_output=True, text=True, timeout=1800)
        if r.returncode != 0:
            tail = r.stderr[-6000:]
            failed.append(name)
            print(f"FAIL {name}: exit {r.returncode}\n{tail}")
        else:
            print(r.stdout.strip())
    print(f"{len(sys.argv) - 3 - len(failed)} passed, {len(failed)} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
