#!/usr/bin/env python3
"""How to make an unpacked store tree durable with the fewest waits: the
ways cfapkg could sync a LibTorch-shaped tree, side by side in one run.

  syncfs             write every file, then one syncfs() (what the store does)
  writeback+syncfs   the same, with sync_file_range(WRITE) every 8 MiB of a
                     file so the disk starts early (what the store does today)
  fdatasync-each     fdatasync() each file as it is closed
  fdatasync-batch    write every file, then fdatasync() each one
  none               no sync at all (the floor; not crash safe)

A small C program (built here with cc) writes the tree; each strategy runs
ROUNDS times in rotated order, the page cache dropped before each run when
this process may (it says when it cannot), and the medians are compared
with every run printed.  A failed write or sync fails the benchmark.

usage: sync_bench.py [DIR] [ROUNDS] [TOTAL_MIB]    (DIR "": the temporary folder)
"""
import os
import pathlib
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

WRITER = r"""
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* writer DIR MODE NSMALL SMALLSIZE NBIG BIGSIZE: 1 when a write or sync fails */
int main(int argc, char **argv)
{
	const char *dir = argv[1], *mode = argv[2];
	long nsmall = atol(argv[3]), small = atol(argv[4]), nbig = atol(argv[5]);
	long big = atol(argv[6]), i, n = nsmall + nbig;
	static char buf[1 << 20];
	int *fds = calloc((size_t)n, sizeof(int));
	char path[4096];

	memset(buf, 'x', sizeof(buf));
	for (i = 0; i < n; i++) {
		long size = i < nbig ? big : small, done = 0;
		snprintf(path, sizeof(path), "%s/f%ld", dir, i);
		int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0)
			return 1;
		while (done < size) {
			long k = size - done < (long)sizeof(buf) ? size - done : (long)sizeof(buf);
			if (write(fd, buf, (size_t)k) != k)
				return 1;
			done += k;
			if (!strcmp(mode, "writeback+syncfs") && done % (8 << 20) == 0 &&
			    sync_file_range(fd, done - (8 << 20), 8 << 20, SYNC_FILE_RANGE_WRITE))
				return 1;
		}
		if (!strcmp(mode, "fdatasync-each") && fdatasync(fd))
			return 1;
		if (!strcmp(mode, "fdatasync-batch"))
			fds[i] = fd;
		else if (close(fd))
			return 1;
	}
	if (!strcmp(mode, "fdatasync-batch"))
		for (i = 0; i < n; i++)
			if (fdatasync(fds[i]) || close(fds[i]))
				return 1;
	if (strstr(mode, "syncfs")) {
		int fd = open(dir, O_RDONLY);
		if (fd < 0 || syncfs(fd) || close(fd))
			return 1;
	}
	return 0;
}
"""

MODES = ["syncfs", "writeback+syncfs", "fdatasync-each", "fdatasync-batch", "none"]


def drop_caches():
    try:
        subprocess.run(["sync"], check=True)
        pathlib.Path("/proc/sys/vm/drop_caches").write_text("3\n")
        return True
    except OSError:
        return False


def main():
    base = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 and sys.argv[1] else tempfile.gettempdir())
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    total = int(sys.argv[3]) if len(sys.argv) > 3 else 512
    with tempfile.TemporaryDirectory(dir=base, prefix="cfapkg-sync-") as tmp:
        tmp = pathlib.Path(tmp)
        (tmp / "w.c").write_text(WRITER)
        subprocess.run(["cc", "-O2", "-o", str(tmp / "w"), str(tmp / "w.c")], check=True)
        # LibTorch's shape: a few large libraries and thousands of headers.
        # TOTAL_MIB 100 is the least at which a library passes 8 MiB, so
        # that writeback+syncfs starts the disk at least once.
        nbig, nsmall, small = 8, 8000, 4096
        big = (total * 2**20 - nsmall * small) // nbig
        walls = {m: [] for m in MODES}
        dropped = True
        for r in range(rounds):
            for m in MODES[r % len(MODES):] + MODES[:r % len(MODES)]:
                out = tmp / "tree"
                shutil.rmtree(out, ignore_errors=True)
                out.mkdir()
                dropped &= drop_caches()
                t = time.perf_counter()
                subprocess.run([str(tmp / "w"), str(out), m, str(nsmall), str(small),
                                str(nbig), str(big)], check=True)
                walls[m].append(time.perf_counter() - t)
        shutil.rmtree(tmp / "tree", ignore_errors=True)
    print(f"tree           {nbig} files of {big / 2**20:.0f} MiB and {nsmall} of {small} B "
          f"({total} MiB) on {base}; page cache "
          f"{'dropped before every run' if dropped else 'NOT dropped (needs root)'}")
    for m in MODES:
        w = walls[m]
        print(f"{m:<18} median {statistics.median(w):6.2f} s  "
              f"(runs: {' '.join(f'{x:.2f}' for x in w)})")


if __name__ == "__main__":
    main()
