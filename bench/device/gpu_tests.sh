#!/bin/bash
# Every GPU test of the project, on the GPU machine, from the checkout root:
#   bash bench/device/gpu_tests.sh .gpu/NAME     (NAME from bundle.sh; logs in $OUT)
# Prints pass/fail lines, the radiation kernels' largest register counts per
# architecture, and the GPU-vs-CPU bounds.
B=$(cd "${1:?usage: gpu_tests.sh BUNDLE}" && pwd); R=$(pwd)
export FIELDGO_CACHE=/tmp/fg-gputests FIELDGO_TEST_CUDA_CACHE=/tmp/fg-gputests PYTHONUNBUFFERED=1
mkdir -p $FIELDGO_CACHE; OUT=${OUT:-/tmp/fg-gputests-out}; mkdir -p $OUT
(cd $B && gunzip -kf *.test.gz)
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
pf() { echo "  $(grep -c '^--- PASS' "$1") passed, $(grep -c '^--- SKIP' "$1") skipped"; grep -E "^(--- FAIL|    --- FAIL|FAIL|panic)|^PASS$" "$1" | head -20; }
echo "== radiation kernels through NVRTC (their registers and spills from ptxas's report)"
(cd bench/radiation && timeout 90 $B/radbench.test -test.v -test.run 'TestRadiationKernelCompiles' > $OUT/rad_nvrtc.log 2>&1; echo "rc=$? $(el)")
pf $OUT/rad_nvrtc.log
for a in sm_80 sm_90; do
  sed -n "/RUN   TestRadiationKernelCompiles\/$a/,/--- /p" $OUT/rad_nvrtc.log | grep -E ' registers' |
    awk -v a=$a '{n=$2+0; if ($1 ~ /_f32/) { if (n>f) f=n } else if (n>d) d=n} END {print a ": float64 at most " d ", float32 at most " f " registers"}'
done
echo "== kernels/cuda"
(cd kernels/cuda && timeout 240 $B/cuda.test -test.v > $OUT/cuda.log 2>&1; echo "rc=$? $(el)")
pf $OUT/cuda.log
echo "== bench/gpu flows"
(cd bench/gpu && timeout 120 $B/gpubench.test -test.v -test.run 'TestDeviceFlow$|TestDeviceFlowDiverges|TestFloat32DeviceFlow|TestDeviceFlowTileShapes|TestDeviceFlowFused234' > $OUT/flow.log 2>&1; echo "rc=$? $(el)")
pf $OUT/flow.log
echo "== N-body"
(cd kernels/cuda/gpunbody && timeout 120 $B/gpunbody.test -test.v -test.run 'TestGPU' > $OUT/nbody.log 2>&1; echo "rc=$? $(el)")
pf $OUT/nbody.log; grep -E "ulp" $OUT/nbody.log | sed 's/^ *//' | cut -c1-220
echo "== radiation"
(cd bench/radiation && timeout 150 $B/radbench.test -test.v -test.run 'TestGPU|TestArgs' > $OUT/rad.log 2>&1; echo "rc=$? $(el)")
pf $OUT/rad.log; grep -E "worst" $OUT/rad.log | sed 's/^ *//' | sort -u | head -4 | cut -c1-200
echo "== Python on the GPU"
PYTHONPATH=$B/py timeout 300 python3 -m pytest -q -p no:cacheprovider -rs tests/python/test_gpu.py tests/python/test_device_field.py \
  tests/python/test_precision.py tests/python/test_radiation.py tests/python/test_nbody.py \
  "tests/python/test_simulation.py::test_divergence_in_the_last_rk4_stage_is_named_and_keeps_the_field" \
  "tests/python/test_simulation.py::test_an_energy_that_overflows_while_the_field_is_finite_is_named" > $OUT/pytest.log 2>&1; echo "rc=$? $(el)"
grep -E "passed|failed|^FAILED|^ERROR|^SKIPPED" $OUT/pytest.log | tail -6
date -u; el
