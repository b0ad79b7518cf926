#!/bin/sh
# Runs cfapkg's PyTorch probe (probe/torch_probe.py, the text that
# 'cfapkg doctor --venv' carries) against a real CUDA torch venv: what
# passes there is what ZLUDA has to imitate.  On the same real wheel it
# also shows what tests/test_venv.py shows on stand-ins: libtorch_cuda.so
# as cfapkg reads it (runtime/elf.c: NEEDED names and DT_RPATH, and the
# folder each CUDA name resolves to), a libcublas.so.13 first on
# LD_LIBRARY_PATH not being the one loaded, and the files put where
# cfapkg stages (the folders the RPATH names) being the ones loaded, with
# the probe passing through them.
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
# /proc/self/maps names files by their real paths: compare with those.
site=$(cd "$site" && pwd -P) || exit 1
work=$(cd "$work" && pwd -P) || exit 1
torch=$site/torch
# Nothing written into the venv (no .pyc beside the shadow's links).
export PYTHONDONTWRITEBYTECODE=1
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
		if [ -e "$d/$name" ]; then found=$(cd "$d" && pwd -P); break; fi
	done
	IFS=$old_ifs
	echo "RESOLVES $name ${found#"$site"/}" | tee -a "$work/resolves"
done
# What tests/test_venv.py's +cu130 stand-in assumes of the real wheel.
for want in "libcublas.so.13 nvidia/cu13/lib" "libcublasLt.so.13 nvidia/cu13/lib" \
	"libcusparse.so.12 nvidia/cu13/lib" "libcufft.so.12 nvidia/cu13/lib" \
	"libcudnn.so.9 nvidia/cudnn/lib"; do
	grep -qx "RESOLVES $want" "$work/resolves" || bad "not as the stand-in has it: $want"
done
echo "== the nvidia-* wheels' folders"
ls "$site/nvidia"/*/lib 2>/dev/null | sed "s|^$site/||"

# The families cfapkg stages over a Linux wheel, by the file names.
staged="libcublas.so.13:cublas libcublasLt.so.13:cublaslt libcusparse.so.12:cusparse
libcufft.so.12:cufft"
# Every CHECK line OK, the four checks there, and each staged family
# loaded from below $1 (cuDNN too: $1/nvidia/cudnn/lib).
judge() {
	checks=$(grep -c '^CHECK ' "$2")
	notok=$(grep '^CHECK ' "$2" | grep -vc '^CHECK [a-zA-Z_]* OK ')
	[ "$checks" = 4 ] && [ "$notok" = 0 ] || bad "$3: not every check passed"
	for s in $staged; do
		grep -qx "LIB ${s#*:} $1/nvidia/cu13/lib/${s%:*}" "$2" ||
			bad "$3: ${s#*:} not loaded from $1/nvidia/cu13/lib"
	done
	grep -qx "LIB cudnn $1/nvidia/cudnn/lib/libcudnn.so.9" "$2" ||
		bad "$3: cudnn not loaded from $1/nvidia/cudnn/lib"
}
probe() { # the probe's text run as doctor --venv runs it: python -c TEXT
	timeout 120 "$py" -c "$(cat probe/torch_probe.py)"
}

echo "== the probe, as doctor --venv runs it"
probe > "$work/probe" 2>&1
cat "$work/probe"
judge "$site" "$work/probe" "the probe"

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

echo "== the files where cfapkg stages them are the ones loaded"
# A shadow site-packages of links, with real folders where the loader
# walks: \$ORIGIN is the path libtorch_cuda.so was loaded by, but the ".."
# after it leaves a linked folder for that folder's real parent.  So
# torch/ and torch/lib/ are folders of links, the other nvidia wheels
# links, and nvidia/cu13/lib and nvidia/cudnn/lib folders whose staged
# names are copies standing where cfapkg stages.
shadow() { # $1 real folder, $2 its shadow: a folder of links to its entries
	mkdir -p "$2"
	for f in "$1"/* "$1"/.[!.]*; do
		[ -e "$f" ] || [ -L "$f" ] || continue
		ln -s "$f" "$2/$(basename "$f")"
	done
}
real_copy() { # $1 a link in the shadow: a copy of its file in its place
	cp "$1" "$1.copy" && mv -f "$1.copy" "$1"
}
sp=$work/shadow/site-packages
mkdir -p "$sp/nvidia"
shadow "$torch" "$sp/torch"
rm "$sp/torch/lib"
shadow "$torch/lib" "$sp/torch/lib"
for d in "$site"/nvidia/*; do
	case $(basename "$d") in cu13|cudnn) continue ;; esac
	ln -s "$d" "$sp/nvidia/$(basename "$d")"
done
for w in cu13 cudnn; do
	shadow "$site/nvidia/$w" "$sp/nvidia/$w"
	rm "$sp/nvidia/$w/lib"
	shadow "$site/nvidia/$w/lib" "$sp/nvidia/$w/lib"
done
for s in $staged; do real_copy "$sp/nvidia/cu13/lib/${s%:*}" || exit 1; done
real_copy "$sp/nvidia/cudnn/lib/libcudnn.so.9" || exit 1
PYTHONPATH=$sp probe > "$work/probe2" 2>&1
cat "$work/probe2"
judge "$sp" "$work/probe2" "the probe through the staged files"

[ $fail = 0 ] && echo "venv_probe_real: all passed" || echo "venv_probe_real: FAILED"
exit $fail
