#!/bin/sh
# Runs cfapkg's CUDA probe against a real NVIDIA driver and real CUDA
# libraries (what ZLUDA has to imitate), then hides each library in turn:
# exactly that library's line must become MISSING (SKIPPED for the checks
# that need the driver, when the driver itself is hidden).
#
# usage: tests/gpu/probe_real.sh DRIVER_DIR LIB_DIR... (defaults: the H200
# test machine's folders).  Needs only a C compiler and the loader.
set -u
cd "$(dirname "$0")/../.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [ $# -gt 0 ]; then dirs="$*"; else
	venv=/opt/torch/.venv/lib/python3.12/site-packages/nvidia
	dirs="/usr/local/nvidia/lib64 $venv/cu13/lib $venv/cudnn/lib"
fi
cc -std=c11 -O2 -I. probe/*.c platform/dynlib.c -ldl -lm -o "$work/probe" || exit 1
checks="cuda cublas cublaslt cusparse cufft nvml cudnn"
# The file each check loads first; hiding removes it from the farm.
hidden_file() {
	case $1 in
	cuda) echo 'libcuda.so*' ;; cublas) echo 'libcublas.so*' ;;
	cublaslt) echo 'libcublasLt.so*' ;; cusparse) echo 'libcusparse.so*' ;;
	cufft) echo 'libcufft.so*' ;; nvml) echo 'libnvidia-ml.so*' ;; cudnn) echo 'libcudnn.so*' ;;
	esac
}
# One folder of links to every library in dirs, less the hidden ones.
farm() {
	rm -rf "$work/farm" && mkdir "$work/farm"
	for d in $dirs; do
		for f in "$d"/*.so*; do
			[ -e "$f" ] || continue
			b=$(basename "$f")
			case $b in $1) continue ;; esac
			[ -e "$work/farm/$b" ] || ln -s "$f" "$work/farm/$b"
		done
	done
}
run_all() { # $1: pattern hidden ("" none); prints "check STATUS detail"
	farm "${1:-no-such-file}"
	for c in $checks; do
		line=$(LD_LIBRARY_PATH="$work/farm" timeout 120 "$work/probe" "$c" \
			--lib-dir "$work/farm" --only-dirs | grep '^RESULT' | tail -1)
		[ -n "$line" ] || line="RESULT CRASHED-OR-TIMEOUT -"
		echo "$c ${line#RESULT }"
	done
}
fail=0
echo "== every library present"
run_all "" | tee "$work/all"
if grep -qv '^[a-z]* OK ' "$work/all"; then fail=1; echo "FAIL: not every probe passed"; fi
for h in $checks; do
	echo "== $h hidden"
	run_all "$(hidden_file "$h")" > "$work/hid"
	cat "$work/hid"
	want=$(awk -v h="$h" '$1 == h { print ($2 == "MISSING") ? "yes" : "no" }' "$work/hid")
	others=$(awk -v h="$h" '$1 != h && $2 != "OK" && !(h == "cuda" && $2 == "SKIPPED")' "$work/hid")
	if [ "$want" != yes ] || [ -n "$others" ]; then
		fail=1
		echo "FAIL: hiding $h did not turn exactly its line into MISSING"
	fi
done
[ $fail = 0 ] && echo "probe_real: all passed" || echo "probe_real: FAILED"
exit $fail
