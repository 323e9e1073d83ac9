#!/bin/bash
# On the GPU machine: the full measurement, fieldgo and soliton_solver side by side
# (first step, converged skyrmion, ms per step), and ncu on the tiled gradient.
cd "$(dirname "$0")"
export FIELDGO_CACHE=/tmp/fgcache PYTHONUNBUFFERED=1
ms() { echo $(( ($2 - $1) / 1000000 )); }
date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
timeout 60 ./gpubench.test -test.run 'TestDeviceFlow' > $OUT/flow_tests.log 2>&1; echo "flow tests rc=$? $(tail -1 $OUT/flow_tests.log)"
# time to first step: cold (empty cache) and cached, each a fresh process, wall incl. process start
rm -rf /tmp/fgcold
for k in cold cached; do s=$(date +%s%N); FIELDGO_CACHE=/tmp/fgcold FIELDGO_FIRST=1 timeout 60 ./gpubench.test -test.run TestFirstStep | grep FIRST; e=$(date +%s%N); echo "FIRSTSTEP $k wall incl. process start: $(ms $s $e) ms"; done
# time to a converged skyrmion, fresh process, cached kernels
for k in 1 2; do s=$(date +%s%N); FIELDGO_CONVERGE=1 timeout 60 ./gpubench.test -test.run TestConverge | grep -E "CONVERGE|FAIL"; e=$(date +%s%N); echo "CONVERGE wall incl. process start: $(ms $s $e) ms"; done
rm -rf /tmp/fgcold2; s=$(date +%s%N); FIELDGO_CACHE=/tmp/fgcold2 FIELDGO_CONVERGE=1 timeout 60 ./gpubench.test -test.run TestConverge | grep -E "CONVERGE|FAIL"; e=$(date +%s%N); echo "CONVERGE cold cache wall incl. process start: $(ms $s $e) ms"
# ms per ANF step
FIELDGO_BENCH=1 FIELDGO_BENCH_SECONDS=0.3 timeout 120 ./gpubench.test -test.run TestStepTimes -test.v > $OUT/steptimes.log 2>&1; echo "steptimes rc=$?"
grep -E "^\|" $OUT/steptimes.log
# soliton_solver, same run
s=$(date +%s%N); timeout 150 python3 -W ignore::DeprecationWarning soliton_solver_baseline.py --src . --no-ref --no-breakdown --min-time 0.5 --repeats 2 --out $OUT 2>&1 | grep -v 'NumbaPerformanceWarning\|warn(errors' > $OUT/ss_bench.log; e=$(date +%s%N); echo "ss bench rc=$? $(ms $s $e) ms"
grep -E "JIT|FAILED" $OUT/ss_bench.log; sed -n '/== soliton_solver baseline/,$p' $OUT/ss_bench.log
s=$(date +%s%N); timeout 130 python3 -W ignore::DeprecationWarning ss_converge.py 1e-6 100 2>&1 | grep -E "SSCONVERGE|Error|error" | tail -3; e=$(date +%s%N); echo "SSCONVERGE wall incl. process start: $(ms $s $e) ms"
# what limits the tiled gradient at 2048^2
timeout 60 ncu --kernel-name fg_k_tile --launch-skip 45 --launch-count 1 --section SpeedOfLight --section Occupancy --section LaunchStats \
  ./cuda.test -test.run XXX -test.bench 'Gradient/baby_skyrme/continuum/2048$' -test.benchtime 20x > $OUT/ncu.log 2>&1
grep -E "Duration|Throughput|Occupancy|Registers|Block Size|Shared Memory|Limit|SM Frequency|DRAM" $OUT/ncu.log | head -30
date -u
