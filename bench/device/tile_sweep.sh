#!/bin/bash
# ms per ANF step for every tile shape (FIELDGO_TILE fixes it), and with the
# autotune's choice from an empty cache, on the GPU machine, from the checkout root:
#   bash bench/device/tile_sweep.sh .gpu/NAME
# One line per shape: ms at each theory x grid. SIZES (default 256,512,1024,2048),
# SHAPES (BYxRPT list), PRECISION (float64), SECONDS_EACH (0.2). Logs in $OUT.
B=$(cd "${1:?usage: tile_sweep.sh BUNDLE}" && pwd)
OUT=${OUT:-/tmp/fg-sweep-out}; mkdir -p $OUT
SHAPES=${SHAPES:-"8x1 8x2 8x4 4x2 4x4 4x8 2x8 2x16 16x1 16x2"}
(cd $B && gunzip -kf cuda.test.gz)
. "$(dirname "$0")/step_row.sh"
rm -rf /tmp/fg-sweep
echo "== ms per step; columns: baby_skyrme then abelian_higgs at ${SIZES:-256,512,1024,2048}"
STEP_ROW_SHAPES=1 step_row tuned /tmp/fg-sweep
for s in $SHAPES; do step_row $s /tmp/fg-sweep FIELDGO_TILE=$s; done
