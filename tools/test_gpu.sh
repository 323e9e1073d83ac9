#!/bin/bash
# make test-gpu: every GPU test that tests/gpu_tests.txt lists, the Go packages with go
# test and the Python tests with the venv's pytest, from the repository root:
#   bash tools/test_gpu.sh [PYTHON]      (PYTHON: default .venv/bin/python)
# Without a GPU it says so first; the tests then skip, and each skip's reason is shown.
set -uo pipefail
cd "$(dirname "$0")/.."
py=${1:-.venv/bin/python}
list=tests/gpu_tests.txt
go_pkgs=$(awk '$1 == "go" {print $2}' $list)
py_tests=$(awk '$1 == "python" {print $2}' $list)
rc=0
if nvidia-smi -L > /dev/null 2>&1; then
  nvidia-smi -L
  go test -count=1 -timeout 30m $go_pkgs || rc=1
else
  echo "test-gpu: NO GPU on this machine (nvidia-smi finds no NVIDIA GPU): the GPU tests run and skip, each saying why."
  # -v for the skips' reasons. Printed: each skip or failure with the last line its test
  # logged (the reason), the packages' results and anything else go test says (a build
  # error); not the passes, nor the other log lines.
  go test -count=1 -timeout 30m -v $go_pkgs 2>&1 | awk '
    /^=== RUN/ { cur = $3; next }
    /^=== / { next }
    /^ +[a-zA-Z0-9_]+\.go:[0-9]+: / { why[cur] = $0; next }
    /^ *--- (SKIP|FAIL)/ { print; print why[$3]; next }
    /^ *--- PASS|^PASS$|^ / { next }
    { print }' || rc=1
fi
"$py" -m pytest -q -rs -p no:cacheprovider $py_tests || rc=1
exit $rc
