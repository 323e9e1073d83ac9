#!/bin/bash
# On the GPU machine: correctness, ms/step of the flow variants side by side with
# soliton_solver, bandwidth, and the GPU tests of tests/python.
cd "$(dirname "$0")"
export FIELDGO_CACHE=/tmp/fgcache PYTHONUNBUFFERED=1
date -u | tee $OUT/date.txt; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader | tee $OUT/smi.txt
timeout 50 ./cuda.test -test.v -test.run 'TestAgreesWithCPU|TestDeterministic|TestFlow100|TestDescribeAndCache' > $OUT/cuda_tests.log 2>&1; echo "cuda.test rc=$?"
grep -E "^(--- |FAIL|ok|PASS)" $OUT/cuda_tests.log | head -20
timeout 50 ./gpubench.test -test.v -test.run 'TestDeviceFlow' > $OUT/flow_tests.log 2>&1; echo "flow tests rc=$?"
grep -vE "^=== RUN" $OUT/flow_tests.log | cut -c1-330 | head -24
FIELDGO_BENCH=1 FIELDGO_BENCH_PHASES=1 FIELDGO_BENCH_SECONDS=0.25 timeout 85 ./gpubench.test -test.run TestStepTimes -test.v > $OUT/steptimes.log 2>&1; echo "steptimes rc=$?"
grep -E "^\|" $OUT/steptimes.log | grep -v "tune " | head -60
s=$(date +%s); timeout 90 python3 -W ignore::DeprecationWarning soliton_solver_baseline.py --src . --no-ref --no-breakdown --min-time 0.4 --repeats 2 --out $OUT > $OUT/ss_bench.log 2>&1; echo "ss bench rc=$? $(( $(date +%s) - s )) s"
sed -n '/== soliton_solver baseline/,$p' $OUT/ss_bench.log | grep -v Warning | head -20
cd .. && cd .. && PYTHONPATH=$PWD/.gpu/perf/py timeout 40 python3 -m pytest -q -x tests/python/test_gpu.py -k "agree or describes or diverg or converges" -rs > $OUT/pytest.log 2>&1; echo "pytest rc=$?"; tail -5 $OUT/pytest.log
date -u
