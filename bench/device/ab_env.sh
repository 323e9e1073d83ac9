#!/bin/bash
# A B A B step times of one bundle with an environment switch off (VAR=0) and on
# (unset), on the GPU machine, from the checkout root:
#   bash bench/device/ab_env.sh .gpu/NAME FIELDGO_FLOW_FUSE
# One line per run: ms per step at each theory x grid (float64 device flow;
# SIZES, PRECISION as in tile_sweep.sh). Each side keeps its own tune cache.
B=$(cd "${1:?usage: ab_env.sh BUNDLE VAR}" && pwd); V=${2:?usage: ab_env.sh BUNDLE VAR}
OUT=${OUT:-/tmp/fg-abenv-out}; mkdir -p $OUT
(cd $B && gunzip -kf gpubench.test.gz)
echo "== $V: ms per step; columns: baby_skyrme then abelian_higgs at ${SIZES:-256,512,1024,2048}"
for r in 1 2; do for v in 0 on; do
  (cd bench/gpu && env $([ $v = 0 ] && echo "$V=0") FIELDGO_CACHE=/tmp/fg-abenv-$v FIELDGO_TEST_CUDA_CACHE=/tmp/fg-abenv-$v \
    FIELDGO_BENCH=1 FIELDGO_BENCH_SECONDS=${SECONDS_EACH:-0.25} FIELDGO_BENCH_SIZES=${SIZES:-256,512,1024,2048} \
    FIELDGO_BENCH_MODES=device FIELDGO_BENCH_PRECISION=${PRECISION:-float64} \
    timeout 120 $B/gpubench.test -test.v -test.run 'TestStepTimes' > $OUT/ab_${v}_$r.log 2>&1)
  printf "%-4s %s" "$v" "$r"; grep -E "^\| (baby|abelian)" $OUT/ab_${v}_$r.log | awk -F'|' '{printf " %8.4f", $7}'; echo
done; done
grep -m1 "flow:" $OUT/ab_on_1.log
