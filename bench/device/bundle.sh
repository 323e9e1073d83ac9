#!/bin/bash
# Build everything a GPU machine without Go runs (../shared/GPU.md) into one folder of
# the checkout, to be copied there with it (keep it under .gpu/, which git ignores:
# .git/info/exclude):
#   bash bench/device/bundle.sh .gpu/NAME [SHARED]
# leaves NAME/<package>.test.gz for every Go package of tests/gpu_tests.txt, named after
# its last path element (cuda, gpunbody, gpuradiation, ...; gzipped to keep the bundle
# under 64 MiB, gunzipped by the runners), NAME/wheels (fieldgo's cp312 manylinux wheel, the one
# `pip install fieldgo` gets, from `make wheel`'s rule, and those of its dependencies small
# enough to carry; gpu_tests.sh installs it into a venv there, gpu_perf.sh unpacks it
# for PYTHONPATH), and NAME/peer (soliton_solver_baseline.py, its headless stubs and the
# soliton_solver package, from SHARED/bench, default ../shared, and PyPI). Needs Go, gcc
# and pyenv's Python 3.12 here.
set -euo pipefail
out=${1:?usage: bundle.sh OUTDIR [SHARED]}
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
rm -rf "$out" && mkdir -p "$out"
for pkg in $(awk '$1 == "go" {print $2}' tests/gpu_tests.txt); do
  go test -c -o "$out/$(basename "$pkg").test" "$pkg"
done
gzip -f "$out"/*.test
# fieldgo for the GPU machine's python3 (3.12): the cp312 wheel, rebuilt by make's rule
# when a source changed (tools/build_wheels.py; its log in NAME/wheel.log).
ls dist/fieldgo-*-cp312-cp312-manylinux*.whl > /dev/null 2>&1 || rm -f build/.wheel-3.12
make -s build/.wheel-3.12 > "$out/wheel.log" 2>&1 || { tail -30 "$out/wheel.log"; exit 1; }
whl=$(ls dist/fieldgo-*-cp312-cp312-manylinux*.whl)
mkdir -p "$out/wheels" && cp "$whl" "$out/wheels/"
# Its dependencies as cp312 wheels, for pip install --no-index there. numpy, pyarrow,
# polars, pandas, matplotlib and sympy are 0.2 GB together, over the carry limit: those
# above 2 MiB stay here. The GPU machine's python3 (/opt/torch/.venv, read 2026-12-03)
# has all but polars (its runtime wheel is 51 MiB), so gpu_tests.sh installs the wheel
# without dependencies there and pip check names polars; the bundle is ~34 MiB.
deps=$(mktemp -d)
python3 -m pip download -q --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
  -d "$deps" "$whl" pytest hypothesis
for f in "$deps"/*.whl; do
  case $(basename "$f") in fieldgo-*) continue ;; esac
  if [ "$(stat -c %s "$f")" -le $((2 * 1024 * 1024)) ]; then cp "$f" "$out/wheels/"
  else echo "not carried ($(( $(stat -c %s "$f") / 1048576 )) MiB): $(basename "$f")"; fi
done
rm -rf "$deps"
# The peer harness, when ../shared has it.
shared=${2:-$root/../shared}
if [ -f "$shared/bench/soliton_solver_baseline.py" ]; then
  mkdir -p "$out/peer"
  cp -r "$shared/bench/soliton_solver_baseline.py" "$shared/bench/headless_stubs" "$out/peer/"
  chmod -R u+w "$out/peer"
  tmp=$(mktemp -d)
  if .venv/bin/pip -q download --no-deps soliton-solver -d "$tmp" 2>/dev/null; then
    (cd "$tmp" && for f in *; do case $f in *.whl|*.zip) python3 -m zipfile -e "$f" x ;; *.tar.gz) mkdir -p x && tar -xzf "$f" -C x ;; esac; done)
    src=$(find "$tmp/x" -type d -name soliton_solver | head -1)
    [ -n "$src" ] && cp -r "$src" "$out/peer/"
  fi
  rm -rf "$tmp"
  cp bench/converge/same_start.py "$out/peer/"
fi
du -sh "$out"
