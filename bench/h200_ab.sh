#!/bin/sh
# Validates 'cfapkg bench' and 'cfapkg doctor' on a machine with an NVIDIA
# GPU and PyTorch (the H200 test machine): two environments that differ
# only in TORCH_ALLOW_TF32_CUBLAS_OVERRIDE run bench/gemm_tf32.py in
# alternation; then doctor probes the real CUDA libraries.
#
# usage: bench/h200_ab.sh CFAPKG PYTHON OUTDIR [LIB_DIR...]
set -eu
cfapkg=$1 python=$2 out=$3
shift 3
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/recipes"
for v in 1 0; do
	cat > "$work/recipes/tf32-$v.json" <<JSON
{"format": 1, "name": "tf32-$v", "summary": "TORCH_ALLOW_TF32_CUBLAS_OVERRIDE=$v", "kind": "meta",
 "versions": [{"version": "1", "runtime": {"env": {"TORCH_ALLOW_TF32_CUBLAS_OVERRIDE": "$v"}}}]}
JSON
done
export CFAPKG_ROOT="$work/root" CFAPKG_RECIPES="$work/recipes"
for v in 1 0; do
	"$cfapkg" env create "tf32-$v" --quiet
	"$cfapkg" install --env "tf32-$v" "tf32-$v" --gpu gfx1200 --yes --quiet
done
"$cfapkg" bench --env tf32-1 --env tf32-0 -n 10 --warmup 1 --metric 'TFLOPS: ([0-9.]+)' \
	-o "$out" -- "$python" "$here/gemm_tf32.py"
dirs=""
for d in "$@"; do dirs="$dirs --lib-dir $d"; done
# shellcheck disable=SC2086
"$cfapkg" doctor --env tf32-1 $dirs || true
