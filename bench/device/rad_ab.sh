#!/bin/bash
# The radiation kernels of two or more bundles side by side, on the GPU machine, from
# the checkout root (bundles from bundle.sh, or any folder holding gpuradiation.test.gz):
#   bash bench/device/rad_ab.sh .gpu/BASELINE .gpu/NAME [.gpu/NAME2 ...]
# Samples/s (observer x time x particle, kernel time) A B .. A B .. at 1024 and 16 knots
# per orbital period on the benchmark's scene (32768 observers x 256 samples x 16
# particles): Newton n=2 float64 naive (cold, no reuse), warm, warm + coef_reuse
# (the default), float32 default, RK4 x4 float64; then the default on a scene
# that fills the GPU (BIG_O observers, default 524288) once each, with its
# registers, tile and blocks per SM. Logs in $OUT/rad_ab. Bundles are named
# A, B, C, .. in the order given.
[ $# -ge 2 ] || { echo "usage: rad_ab.sh BASELINE BUNDLE [BUNDLE ...]" >&2; exit 2; }
dirs=(); for a in "$@"; do dirs+=("$(cd "$a" && pwd)"); done
names=(A B C D E F G H)
OUT=${OUT:-/tmp/fg-radab-out}; L=$OUT/rad_ab; mkdir -p $L
for d in "${dirs[@]}"; do (cd $d && gunzip -kf gpuradiation.test.gz); done
rate() { grep -E '^Benchmark.*samples/s' $1 | sed -E 's/BenchmarkGPURadiation\///; s/-[0-9]+ / /' |
  awk '{for (i=1;i<=NF;i++) if ($(i+1)=="samples/s") x=$i; printf "%s %.4g  ", $1, x}'; }
shape() { grep -E "gpu_test.go.*$2 " $1 | grep -oE '[0-9]+ registers|tile [0-9]+|[0-9]+ blocks/SM' | tr '\n' ' '; }
date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for i in "${!dirs[@]}"; do echo "${names[$i]} = ${dirs[$i]}"; done
cd kernels/cuda/gpuradiation
for kpp in 1024 16; do for r in 1 2; do for i in "${!dirs[@]}"; do
  v=${names[$i]}; d=${dirs[$i]}
  FIELDGO_TEST_CUDA_CACHE=/tmp/fg-radab-$v timeout 90 $d/gpuradiation.test -test.run '^$' -test.v -test.benchtime 1x -rad-kpp $kpp \
    -test.bench 'GPURadiation/(newton2_f64_(naive_cold|warm|warm_reuse)|newton2_f32_warm_reuse|rk4x4_f64_warm_reuse)$' > $L/${kpp}_$v$r.log 2>&1
  echo "knots/period $kpp $v$r: $(rate $L/${kpp}_$v$r.log)"
done; done; done
for kpp in 16 1024; do for i in "${!dirs[@]}"; do
  v=${names[$i]}; d=${dirs[$i]}
  FIELDGO_TEST_CUDA_CACHE=/tmp/fg-radab-$v timeout 120 $d/gpuradiation.test -test.run '^$' -test.v -rad-observers ${BIG_O:-524288} -rad-kpp $kpp \
    -test.benchtime 1x -test.bench 'GPURadiation/newton2_f64_warm_reuse$' > $L/big_${kpp}_$v.log 2>&1
  echo "${BIG_O:-524288} observers, knots/period $kpp $v: $(rate $L/big_${kpp}_$v.log) $(shape $L/big_${kpp}_$v.log newton2_f64_warm_reuse)"
done; done
date -u
