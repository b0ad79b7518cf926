#!/usr/bin/env python3
"""A second front end (tests/tools/frontend.c) drives plan, install,
update, doctor's verdict, rollback and why nothing changed through the public header alone,
against nginx on 127.0.0.1 serving the test channel; what it reports is
checked against the cfapkg program's own view of the same root, so the
two front ends agree because the library decides."""
import json
import sys

import channel
import harness

FRONTEND, BIN = sys.argv[1], sys.argv[2]
check = harness.Checks()


def main():
    with channel.served("cfapkg-frontend-") as (tmp, _, recipes):
        root = channel.Root(BIN, tmp / "root", recipes)
        r = harness.run(FRONTEND, str(root.path), str(recipes), "gfx1200",
                        env={"CFAPKG_MIRRORS": ""})
        check("the second front end runs plan, install, update, doctor and rollback",
              r.returncode == 0, r.stdout + r.stderr)
        check("it planned and installed the ZLUDA asked for, then updated to the newest",
              "planned 6-preview.69 installed 6-preview.69 updated 7-preview.10" in r.stdout,
              r.stdout)
        check("the library chose the known-good generation 1, by doctor's verdict",
              "rolled back to 1 (usable: driver, cuBLAS, cuBLASLt OK; absent: cufft)"
              in r.stdout, r.stdout)
        check("the library says why installing the stack again changes nothing: it is the "
              "newest (CFAPKG_KEPT_NEWEST), and ZLUDA 6 still fits, so an install keeps it "
              "(CFAPKG_KEPT_INSTALLED)",
              "kept pytorch-cuda-stack 1 (newest 1): reason 0" in r.stdout and
              "kept zluda 6-preview.69 (newest 7-preview.10): reason 4" in r.stdout, r.stdout)
        again = root.run("install", "pytorch-cuda-stack", "--gpu", "gfx1200")
        check("cfapkg, asked the same, changes nothing and gives the stack's reason in words",
              "Nothing to do" in again.stdout and
              "pytorch-cuda-stack 1 is the newest version" in again.stdout,
              again.stdout + again.stderr)
        hist = json.loads(root.run("history", "--json").stdout or "{}")
        entries = hist.get("history", hist) if isinstance(hist, dict) else hist
        check("cfapkg sees the same root: zluda 6 current, generation 1 known-good",
              root.listing().get("zluda") == "6-preview.69" and root.current() == 1 and
              any(h.get("generation") == 1 and h.get("good") for h in entries), entries)
    return check.report()


if __name__ == "__main__":
    sys.exit(main())
