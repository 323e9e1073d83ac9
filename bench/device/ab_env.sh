#!/bin/bash
# A B A B step times of one bundle with an environment switch off (VAR=0) and on
# (unset), on the GPU machine, from the checkout root:
#   bash bench/device/ab_env.sh .gpu/NAME FIELDGO_FLOW_FUSE
# One line per run: ms per step at each theory x grid (float64 device flow;
# SIZES, PRECISION, SECONDS_EACH as in tile_sweep.sh). Each side keeps its own
# tune cache.
B=$(cd "${1:?usage: ab_env.sh BUNDLE VAR}" && pwd); V=${2:?usage: ab_env.sh BUNDLE VAR}
OUT=${OUT:-/tmp/fg-abenv-out}; mkdir -p $OUT
SECONDS_EACH=${SECONDS_EACH:-0.25}
(cd $B && gunzip -kf cuda.test.gz)
. "$(dirname "$0")/step_row.sh"
echo "== $V: ms per step; columns: baby_skyrme then abelian_higgs at ${SIZES:-256,512,1024,2048}"
for r in 1 2; do
  step_row off_$r /tmp/fg-abenv-off $V=0
  step_row on_$r /tmp/fg-abenv-on
done
grep -m1 "flow:" $OUT/on_1.log
