#!/bin/bash
# Every GPU test of the project, on the GPU machine, from the checkout root:
#   bash bench/device/gpu_tests.sh .gpu/NAME     (NAME from bundle.sh; logs in $OUT)
# Prints pass/fail lines, the radiation kernels' largest register counts per
# architecture, and the GPU-vs-CPU bounds. The Python tests run against fieldgo's cp312
# wheel (NAME/wheels) installed into a venv there, as a user's pip install would; where
# that cannot be done they fall back to the wheel unpacked on PYTHONPATH, and say so.
# ONLY=python runs that part alone.
B=$(cd "${1:?usage: gpu_tests.sh BUNDLE}" && pwd); R=$(pwd)
export FIELDGO_CACHE=/tmp/fg-gputests FIELDGO_TEST_CUDA_CACHE=/tmp/fg-gputests PYTHONUNBUFFERED=1
mkdir -p $FIELDGO_CACHE; OUT=${OUT:-/tmp/fg-gputests-out}; mkdir -p $OUT
(cd $B && gunzip -kf *.test.gz)
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
pf() { echo "  $(grep -c '^--- PASS' "$1") passed, $(grep -c '^--- SKIP' "$1") skipped"; grep -E "^(--- FAIL|    --- FAIL|FAIL|panic)|^PASS$" "$1" | head -20; }
if [ "${ONLY:-}" != python ]; then
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
fi
echo "== Python on the GPU: fieldgo's wheel in a venv (the system's numpy, pyarrow, cupy, numba seen through it)"
V=/tmp/fg-wheel-venv; rm -rf $V; PY=python3; PP=
# Without python3-venv's ensurepip the venv is made without pip, and the system's pip
# (seen through --system-site-packages) installs into it.
# python3's own packages (numpy, pyarrow, cupy, numba) are seen through a .pth of its
# site folders: where python3 is itself a venv's, --system-site-packages would not show them.
sitepth() { python3 -c "import os, sys; print('\n'.join(p for p in sys.path if os.path.isdir(p) and p.endswith(('site-packages', 'dist-packages'))))" \
  > "$($V/bin/python -c 'import sysconfig; print(sysconfig.get_path("purelib"))')/_python3_site.pth"; }
if { python3 -m venv --system-site-packages $V > $OUT/pip.log 2>&1 ||
     { rm -rf $V; python3 -m venv --without-pip --system-site-packages $V >> $OUT/pip.log 2>&1; }; } && sitepth &&
   { $V/bin/python -m pip install --no-index --find-links $B/wheels fieldgo >> $OUT/pip.log 2>&1 ||
     { echo "dependencies missing here (pip check below): installing the wheel alone";
       $V/bin/python -m pip install --no-index --no-deps $B/wheels/fieldgo-*.whl >> $OUT/pip.log 2>&1; }; }; then
  PY=$V/bin/python; $PY -m pip check > $OUT/pipcheck.log 2>&1; head -5 $OUT/pipcheck.log
else
  echo "pip could not install the wheel (tail of $OUT/pip.log below): the wheel unpacked on PYTHONPATH instead"; tail -5 $OUT/pip.log
  [ -d $B/py/fieldgo ] || python3 -m zipfile -e $B/wheels/fieldgo-*.whl $B/py; PP=$B/py
fi
PYTHONPATH=$PP $PY -c "import fieldgo as fg; print('fieldgo from', fg.__file__); fg.show_versions()" 2>&1 | head -30
PYTHONPATH=$PP timeout 300 $PY -m pytest -q -p no:cacheprovider -rs tests/python/test_gpu.py tests/python/test_device_field.py \
  tests/python/test_precision.py tests/python/test_radiation.py tests/python/test_nbody.py \
  "tests/python/test_simulation.py::test_divergence_in_the_last_rk4_stage_is_named_and_keeps_the_field" \
  "tests/python/test_simulation.py::test_an_energy_that_overflows_while_the_field_is_finite_is_named" \
  tests/python/test_versions.py > $OUT/pytest.log 2>&1; echo "rc=$? $(el)"
grep -E "passed|failed|^FAILED|^ERROR|^SKIPPED" $OUT/pytest.log | tail -6
date -u; el
