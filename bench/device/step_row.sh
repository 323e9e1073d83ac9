# Sourced by tile_sweep.sh: one run of kernels/cuda's BenchmarkStep from
# bundle $B (float64 device flow unless PRECISION; grids SIZES; SECONDS_EACH per point),
# printed as one row.
#   step_row LABEL CACHE [VAR=VALUE ...]
# prints LABEL and the ms per step at each theory x grid (baby_skyrme, then
# abelian_higgs); the log is $OUT/LABEL.log. STEP_ROW_SHAPES=1 appends the tile
# shapes (32xBY/rows) the runs used.
step_row() {
  local l=$1 cache=$2 sizes=${SIZES:-256,512,1024,2048}; shift 2
  (cd kernels/cuda && env "$@" FIELDGO_CACHE=$cache FIELDGO_TEST_CUDA_CACHE=$cache timeout 120 $B/cuda.test -test.run '^$' \
    -test.bench "^BenchmarkStep\$/.*/(${sizes//,/|})/${PRECISION:-float64}/device\$" -test.benchtime ${SECONDS_EACH:-0.2}s \
    -test.v > $OUT/$l.log 2>&1)
  printf "%-8s" "$l"; grep -E '^BenchmarkStep/.* ms/step' $OUT/$l.log | awk '{for (i = 3; i < NF; i += 2) if ($(i+1) == "ms/step") printf " %8.4f", $i}'
  [ -n "$STEP_ROW_SHAPES" ] && grep -E ' fg_k_tile +regs' $OUT/$l.log | sed -E 's/.*\(y ([0-9]+), rows ([0-9]+)\).*/32x\1\/\2/' | awk '{printf " %s", $0}'
  echo
}
