#!/bin/bash
# On the GPU machine: the CUDA and device-flow tests, ms per step, time to the first
# step (empty and warm cache) and to a converged skyrmion.
cd "$(dirname "$0")"
export FIELDGO_CACHE=/tmp/fgcache
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv | tee $OUT/smi.txt
timeout 150 ./cuda.test -test.v -test.run 'TestAgreesWithCPU|TestDeterministic|TestFlow100|TestDescribeAndCache' > $OUT/cuda_tests.log 2>&1; echo "cuda.test rc=$?"
grep -E "^(--- |FAIL|ok|PASS)|differ|bound" $OUT/cuda_tests.log | head -40
timeout 150 ./gpubench.test -test.v -test.run 'TestDeviceFlow' > $OUT/flow_tests.log 2>&1; echo "flow tests rc=$?"
grep -vE "^=== RUN" $OUT/flow_tests.log | cut -c1-400 | head -60
FIELDGO_BENCH=1 FIELDGO_BENCH_SECONDS=0.25 FIELDGO_BENCH_HOST=1 timeout 200 ./gpubench.test -test.run TestStepTimes -test.v > $OUT/steptimes.log 2>&1; echo "steptimes rc=$?"
grep -vE "^=== RUN" $OUT/steptimes.log | tail -60
rm -rf /tmp/fgcold; FIELDGO_CACHE=/tmp/fgcold FIELDGO_FIRST=1 timeout 60 ./gpubench.test -test.run TestFirstStep | grep FIRST
FIELDGO_CACHE=/tmp/fgcold FIELDGO_FIRST=1 timeout 60 ./gpubench.test -test.run TestFirstStep | grep FIRST
s=$(date +%s.%N); FIELDGO_CONVERGE=1 timeout 60 ./gpubench.test -test.run TestConverge | grep -E "CONVERGE|FAIL|Error"; e=$(date +%s.%N); echo "wall incl. process start: $(echo "$e - $s" | bc) s"
