# Sourced by tile_sweep.sh and ab_env.sh: one TestStepTimes run of bundle $B
# (device flow; SIZES, PRECISION, SECONDS_EACH), printed as one row.
#   step_row LABEL CACHE [VAR=VALUE ...]
# prints LABEL and the ms per step at each theory x grid (baby_skyrme, then
# abelian_higgs); the log is $OUT/LABEL.log. STEP_ROW_SHAPES=1 appends the tile
# shapes the runs used.
step_row() {
  local l=$1 cache=$2; shift 2
  (cd bench/gpu && env "$@" FIELDGO_CACHE=$cache FIELDGO_TEST_CUDA_CACHE=$cache FIELDGO_BENCH=1 \
    FIELDGO_BENCH_SECONDS=${SECONDS_EACH:-0.2} FIELDGO_BENCH_SIZES=${SIZES:-256,512,1024,2048} FIELDGO_BENCH_MODES=device \
    FIELDGO_BENCH_PRECISION=${PRECISION:-float64} timeout 120 $B/gpubench.test -test.v -test.run 'TestStepTimes' > $OUT/$l.log 2>&1)
  printf "%-8s" "$l"; grep -E "^\| (baby|abelian)" $OUT/$l.log | awk -F'|' '{printf " %8.4f", $7}'
  [ -n "$STEP_ROW_SHAPES" ] && grep -E "^\| (baby|abelian)" $OUT/$l.log | awk -F'|' '{printf " %s", $11}'
  echo
}
