#!/bin/bash
# ms per ANF step for every tile shape (FIELDGO_TILE fixes it), and with the
# autotune's choice from an empty cache, on the GPU machine, from the checkout root:
#   bash bench/device/tile_sweep.sh .gpu/NAME
# One line per shape: ms at each theory x grid. SIZES (default 256,512,1024,2048),
# SHAPES (BYxRPT list), PRECISION (float64), SECONDS_EACH (0.2). Logs in $OUT.
B=$(cd "${1:?usage: tile_sweep.sh BUNDLE}" && pwd)
OUT=${OUT:-/tmp/fg-sweep-out}; mkdir -p $OUT
SIZES=${SIZES:-256,512,1024,2048}
SHAPES=${SHAPES:-"8x1 8x2 8x4 4x2 4x4 4x8 2x8 2x16 16x1 16x2"}
(cd $B && gunzip -kf gpubench.test.gz)
run() { # label, then env assignments
  local l=$1; shift
  (cd bench/gpu && env "$@" FIELDGO_CACHE=/tmp/fg-sweep FIELDGO_TEST_CUDA_CACHE=/tmp/fg-sweep FIELDGO_BENCH=1 \
    FIELDGO_BENCH_SECONDS=${SECONDS_EACH:-0.2} FIELDGO_BENCH_SIZES=$SIZES FIELDGO_BENCH_MODES=device \
    FIELDGO_BENCH_PRECISION=${PRECISION:-float64} timeout 120 $B/gpubench.test -test.v -test.run 'TestStepTimes' > $OUT/sweep_$l.log 2>&1)
  printf "%-6s" $l; grep -E "^\| (baby|abelian)" $OUT/sweep_$l.log | awk -F'|' '{printf " %8.4f", $7}'
  [ $l = tuned ] && grep -E "^\| (baby|abelian)" $OUT/sweep_$l.log | awk -F'|' '{printf " %s", $11}'
  echo
}
rm -rf /tmp/fg-sweep
echo "== ms per step; columns: baby_skyrme then abelian_higgs at $SIZES"
run tuned
for s in $SHAPES; do run $s FIELDGO_TILE=$s; done
