#!/usr/bin/env python3
"""Writes a LibTorch-shaped zip for the download benchmark: a top folder
with about 8,000 small headers (compressible text) and a dozen large
libraries, about 60% of the bytes incompressible.  Deterministic.

usage: gen_libtorch_like.py OUT.zip [TOTAL_MIB]
"""
import random
import sys
import zipfile


def incompressible(n, seed):
    out = bytearray()
    i = 0
    while len(out) < n:
        out += random.Random(seed * 1000003 + i).randbytes(1 << 20)
        i += 1
    return bytes(out[:n])


def compressible(n, seed):
    words = [f"torch_{seed}_{k}" for k in range(200)]
    text = (" ".join(words) + "\n").encode()
    return (text * (n // len(text) + 1))[:n]


def main():
    out = sys.argv[1]
    total = (int(sys.argv[2]) if len(sys.argv) > 2 else 1024) << 20
    rng = random.Random(2026)
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as z:
        headers = 0
        for i in range(8000):
            data = compressible(rng.randint(1000, 8000), i)
            z.writestr(f"libtorch/include/torch/csrc/h{i // 100}/header_{i}.h", data)
            headers += len(data)
        libs = total - headers
        for i in range(12):
            size = libs // 12
            # 60% incompressible machine code, 40% tables that compress
            data = incompressible(size * 6 // 10, i) + compressible(size - size * 6 // 10, i)
            z.writestr(f"libtorch/lib/library_{i}.dll", data)
    print(out)


if __name__ == "__main__":
    main()
