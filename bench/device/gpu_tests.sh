#!/bin/bash
# Every GPU test of the project (tests/gpu_tests.txt lists them, as for make test-gpu),
# on a GPU machine without Go, from the checkout root:
#   bash bench/device/gpu_tests.sh .gpu/NAME     (NAME from bundle.sh; logs in $OUT)
# Runs each listed Go package's prebuilt test binary (all of its tests) in the package's
# folder, and the listed Python tests. Prints pass/fail lines, the radiation kernels'
# largest register counts per architecture, and the GPU-vs-CPU bounds. The Python tests
# run against fieldgo's cp312 wheel (NAME/wheels) installed into a venv there, as a
# user's pip install would; where that cannot be done they fall back to the wheel
# unpacked on PYTHONPATH, and say so. ONLY=go or ONLY=python runs that part alone;
# PKGS="./kernels/cuda ..." runs those of the listed Go packages alone.
B=$(cd "${1:?usage: gpu_tests.sh BUNDLE}" && pwd); R=$(pwd)
export FIELDGO_CACHE=/tmp/fg-gputests FIELDGO_TEST_CUDA_CACHE=/tmp/fg-gputests PYTHONUNBUFFERED=1
mkdir -p $FIELDGO_CACHE; OUT=${OUT:-/tmp/fg-gputests-out}; mkdir -p $OUT
(cd $B && gunzip -kf *.test.gz)
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
pf() { echo "  $(grep -c '^--- PASS' "$1") passed, $(grep -c '^--- SKIP' "$1") skipped"; grep -E "^(--- FAIL|    --- FAIL|FAIL|panic)|^PASS$" "$1" | head -20; }
if [ "${ONLY:-}" != python ]; then
for pkg in ${PKGS:-$(awk '$1 == "go" {print $2}' tests/gpu_tests.txt)}; do
  name=$(basename $pkg)
  echo "== $pkg"
  (cd $pkg && timeout 400 $B/$name.test -test.v -test.timeout 390s > $OUT/$name.log 2>&1; echo "rc=$? $(el)")
  pf $OUT/$name.log
done
echo "== radiation kernels through NVRTC (their registers and spills from ptxas's report)"
for a in sm_80 sm_90; do
  sed -n "/RUN   TestRadiationKernelCompiles\/$a/,/--- /p" $OUT/gpuradiation.log | grep -E ' registers' |
    awk -v a=$a '{n=$2+0; if ($1 ~ /_f32/) { if (n>f) f=n } else if (n>d) d=n} END {print a ": float64 at most " d ", float32 at most " f " registers"}'
done
echo "== N-body and radiation: GPU against CPU"
grep -E "ulp" $OUT/gpunbody.log | sed 's/^ *//' | cut -c1-220
grep -E "worst" $OUT/gpuradiation.log | sed 's/^ *//' | sort -u | head -4 | cut -c1-200
fi
[ "${ONLY:-}" = go ] && { date -u; el; exit; }
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
PYTHONPATH=$PP timeout 300 $PY -m pytest -q -p no:cacheprovider -rs $(awk '$1 == "python" {print $2}' tests/gpu_tests.txt) \
  > $OUT/pytest.log 2>&1; echo "rc=$? $(el)"
grep -E "passed|failed|^FAILED|^ERROR|^SKIPPED" $OUT/pytest.log | tail -6
date -u; el
