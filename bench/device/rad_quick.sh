#!/bin/bash
# The default radiation kernels of two or more bundles side by side, on the GPU machine,
# from the checkout root (a shorter rad_ab.sh: the float64 and float32 defaults only):
#   bash bench/device/rad_quick.sh .gpu/A .gpu/B [.gpu/C ...]
# Samples/s at 16 and 1024 knots per period on the benchmark's scene (32768 observers x
# 256 samples x 16 particles), two runs of each bundle in turn, then the float64 default
# on 524288 observers once each. Logs in $OUT/rad_quick. PAT overrides the benchmarks run on
# the benchmark's scene, e.g. PAT='GPURadiation/newton2_(f64|f32)_warm_reuse(_hilbert)?$',
# and BIGPAT those on 524288 observers (default: the float64 default alone).
[ $# -ge 2 ] || { echo "usage: rad_quick.sh BUNDLE BUNDLE [BUNDLE ...]" >&2; exit 2; }
PAT=${PAT:-'GPURadiation/newton2_(f64|f32)_warm_reuse$'}
BIGPAT=${BIGPAT:-'GPURadiation/newton2_f64_warm_reuse$'}
dirs=(); for a in "$@"; do dirs+=("$(cd "$a" && pwd)"); done
OUT=${OUT:-/tmp/fg-radquick-out}; L=$OUT/rad_quick; mkdir -p $L
for d in "${dirs[@]}"; do (cd $d && gunzip -kf gpuradiation.test.gz); done
rate() { grep -E '^Benchmark.*samples/s' $1 | sed -E 's/BenchmarkGPURadiation\///; s/-[0-9]+ / /' |
  awk '{for (i=1;i<=NF;i++) if ($(i+1)=="samples/s") x=$i; printf "%s %.4g  ", $1, x}'; }
date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
cd kernels/cuda/gpuradiation
run() { # name dir log kpp O pattern
  FIELDGO_TEST_CUDA_CACHE=/tmp/fg-radquick-$1 timeout 120 $2/gpuradiation.test -test.run '^$' -rad-kpp $4 -rad-observers $5 \
    -test.v -test.benchtime 1x -test.bench "$6" > $3 2>&1; }
for kpp in 16 1024; do for r in 1 2; do for d in "${dirs[@]}"; do
  v=$(basename $d); run $v $d $L/${kpp}_$v$r.log $kpp 32768 "$PAT"
  echo "knots/period $kpp $v$r: $(rate $L/${kpp}_$v$r.log)"
done; done; done
for d in "${dirs[@]}"; do
  v=$(basename $d); run $v $d $L/big_$v.log 16 524288 "$BIGPAT"
  echo "524288 observers, knots/period 16 $v: $(rate $L/big_$v.log)"
done
date -u
