#!/bin/sh
# Runs cfapkg's PyTorch probe (probe/torch_probe.py, the text that
# 'cfapkg doctor --venv' carries) against a real CUDA torch venv: what
# passes there is what ZLUDA has to imitate.  On the same real wheel it
# also shows what tests/test_venv.py shows on stand-ins: libtorch_cuda.so
# as cfapkg reads it (runtime/elf.c: NEEDED names and DT_RPATH, and the
# folder each CUDA name resolves to), a libcublas.so.13 first on
# LD_LIBRARY_PATH not being the one loaded, and a file put in the folder
# the RPATH names being the one loaded, with the probe passing through it.
#
# usage: tests/gpu/venv_probe_real.sh [VENV] (default: the H200 test
# machine's /opt/torch/.venv).  Needs a C compiler, the venv and a GPU;
# changes nothing in the venv (the last part works on a shadow of it).
set -u
cd "$(dirname "$0")/../.."
venv=${1:-/opt/torch/.venv}
py=$venv/bin/python
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail=0
bad() { fail=1; echo "FAIL: $*"; }

site=$("$py" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])') || exit 1
torch=$site/torch
nvidia-smi -L 2>/dev/null
echo "== $torch/version.py"
grep -E '^(__version__|cuda|hip)' "$torch/version.py"

cc -std=c11 -O2 -Wall -I. tests/gpu/elf_needed.c runtime/elf.c -o "$work/elf_needed" || exit 1
echo "== libtorch_cuda.so as cfapkg reads it"
"$work/elf_needed" "$torch/lib/libtorch_cuda.so" | tee "$work/dyn" || bad "cannot read it"
search=$(sed -n 's/^R[UN]*PATH //p' "$work/dyn")
# The first folder of the search path holding each name: where cfapkg
# stages ZLUDA's file of that name.
for name in $(sed -n 's/^NEEDED //p' "$work/dyn"); do
	found=-
	old_ifs=$IFS
	IFS=:
	for d in $search; do
		d=$(printf '%s' "$d" | sed "s|^\\\$ORIGIN|$torch/lib|")
		if [ -e "$d/$name" ]; then found=$(cd "$d" && pwd); break; fi
	done
	IFS=$old_ifs
	echo "RESOLVES $name ${found#"$site"/}"
done
echo "== the nvidia-* wheels' folders"
ls "$site/nvidia"/*/lib 2>/dev/null | sed "s|^$site/||"

# Every CHECK line OK, the four checks there, cuBLAS loaded from $1.
judge() {
	checks=$(grep -c '^CHECK ' "$2")
	notok=$(grep '^CHECK ' "$2" | grep -vc '^CHECK [a-zA-Z_]* OK ')
	[ "$checks" = 4 ] && [ "$notok" = 0 ] || bad "$3: not every check passed"
	grep -q "^LIB cublas $1" "$2" || bad "$3: cuBLAS not loaded from $1"
}

echo "== the probe, as doctor --venv runs it"
timeout 90 "$py" probe/torch_probe.py > "$work/probe" 2>&1
cat "$work/probe"
judge "$site/nvidia/" "$work/probe" "the probe"

echo "== RPATH against LD_LIBRARY_PATH"
mkdir "$work/fake"
echo 'int cfapkg_fake_cublas;' | cc -shared -fPIC -x c - -Wl,-soname,libcublas.so.13 \
	-o "$work/fake/libcublas.so.13" || exit 1
maps='import torch; torch.ones(2, 2, device="cuda") @ torch.ones(2, 2, device="cuda")
for l in open("/proc/self/maps"):
    if "libcublas.so" in l: print("MAPS", l.split()[-1])'
LD_LIBRARY_PATH="$work/fake${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" timeout 90 "$py" -c "$maps" 2>&1 | sort -u | tee "$work/maps"
grep -q "$work/fake" "$work/maps" && bad "LD_LIBRARY_PATH's libcublas.so.13 was loaded"
grep -q "MAPS $site/nvidia/" "$work/maps" || bad "the wheel's libcublas.so.13 was not loaded"

echo "== a file in the folder the RPATH names is the one loaded"
# A shadow site-packages of links, with real folders where the loader
# walks: \$ORIGIN is the path libtorch_cuda.so was loaded by, but the ".."
# after it leaves a linked folder for that folder's real parent.  So
# torch/ and torch/lib/ are folders of links, the nvidia wheels links,
# and nvidia/cu13/lib a folder whose libcublas.so.13 is a copy standing
# where cfapkg stages.
shadow() { # $1 real folder, $2 its shadow: a folder of links to its entries
	mkdir -p "$2"
	for f in "$1"/* "$1"/.[!.]*; do
		[ -e "$f" ] || [ -L "$f" ] || continue
		ln -s "$f" "$2/$(basename "$f")"
	done
}
sp=$work/shadow/site-packages
mkdir -p "$sp/nvidia"
shadow "$torch" "$sp/torch"
rm "$sp/torch/lib"
shadow "$torch/lib" "$sp/torch/lib"
for d in "$site"/nvidia/*; do
	[ "$(basename "$d")" = cu13 ] && continue
	ln -s "$d" "$sp/nvidia/$(basename "$d")"
done
shadow "$site/nvidia/cu13" "$sp/nvidia/cu13"
rm "$sp/nvidia/cu13/lib"
shadow "$site/nvidia/cu13/lib" "$sp/nvidia/cu13/lib"
rm "$sp/nvidia/cu13/lib/libcublas.so.13"
cp "$site/nvidia/cu13/lib/libcublas.so.13" "$sp/nvidia/cu13/lib/"
PYTHONPATH=$sp timeout 90 "$py" probe/torch_probe.py > "$work/probe2" 2>&1
cat "$work/probe2"
judge "$sp/nvidia/cu13/lib/libcublas.so.13" "$work/probe2" "the probe through the staged folder"

[ $fail = 0 ] && echo "venv_probe_real: all passed" || echo "venv_probe_real: FAILED"
exit $fail
