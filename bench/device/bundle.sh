#!/bin/bash
# Build everything the GPU machine runs (it has no Go, ../shared/GPU.md) into one folder
# of the checkout that `run`'s carry takes along (keep it under .gpu/, which git ignores
# there: .git/info/exclude):
#   bash bench/device/bundle.sh .gpu/NAME
# leaves NAME/{cuda,gpubench,gpunbody,radbench}.test.gz (gunzipped by the runners: the
# carry limit is 64 MiB), NAME/py/fieldgo (the package with its Python 3.12 bridge), and
# NAME/peer (soliton_solver_baseline.py, its headless stubs and the soliton_solver package,
# from ../shared/bench and PyPI). Needs Go, gcc and pyenv's Python 3.12 here.
set -euo pipefail
out=${1:?usage: bundle.sh OUTDIR}
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
rm -rf "$out" && mkdir -p "$out"
go test -c -o "$out/cuda.test" ./kernels/cuda
go test -c -o "$out/gpubench.test" ./bench/gpu
go test -c -o "$out/gpunbody.test" ./kernels/cuda/gpunbody
go test -c -o "$out/radbench.test" ./bench/radiation
gzip -f "$out"/*.test
# The Python 3.12 bridge (the GPU machine's python3), from a 3.12 venv with pybindgen.
py312=${FIELDGO_PY312_VENV:-/tmp/fieldgo-py312}
if [ ! -x "$py312/bin/python" ]; then
  "$(pyenv root)/versions/$(pyenv versions --bare | grep -m1 '^3\.12')/bin/python3.12" -m venv "$py312"
  "$py312/bin/pip" -q install pybindgen setuptools
fi
mkdir -p "$out/py" && cp -r python/fieldgo "$out/py/"
rm -rf "$out/py/fieldgo/_bridge"
"$py312/bin/python" tools/build_bridge.py --python "$py312/bin/python" --out "$out/py/fieldgo/_bridge" > "$out/bridge.log" 2>&1
find "$out/py" -name __pycache__ -prune -exec rm -rf {} +
# The peer harness, when ../shared has it.
shared=${FIELDGO_SHARED:-$root/../shared}
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
