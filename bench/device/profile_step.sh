#!/bin/bash
# ncu of one flow's step kernels (every kernel of two steps after the warm-up):
# duration, DRAM bytes and throughput, occupancy, registers and the largest
# stall reasons per launch. On the GPU machine, from the checkout root:
#   bash bench/device/profile_step.sh .gpu/NAME [theory] [grid]
B=$(cd "${1:?usage: profile_step.sh BUNDLE [theory] [grid]}" && pwd); TH=${2:-baby_skyrme}; N=${3:-2048}
OUT=${OUT:-/tmp/fg-prof-out}; mkdir -p $OUT
NCU=${NCU:-$(command -v ncu || echo /usr/local/cuda/bin/ncu)}
(cd $B && gunzip -kf cuda.test.gz)
csv=$OUT/ncu_${TH}_$N.csv
# BenchmarkStep's warm-up (tune, 101 steps of 6 launches) comes first; skip past it.
(cd kernels/cuda && FIELDGO_CACHE=/tmp/fg-prof FIELDGO_TEST_CUDA_CACHE=/tmp/fg-prof ${TILE:+FIELDGO_TILE=$TILE} \
  timeout 300 $NCU --csv --page raw --print-units base --clock-control none --launch-skip ${SKIP:-700} --launch-count 12 \
  --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_bytes.sum,sm__warps_active.avg.pct_of_peak_sustained_active,sm__maximum_warps_per_active_cycle_pct,launch__registers_per_thread,launch__block_size,launch__grid_size,smsp__issue_active.avg.pct_of_peak_sustained_active,l1tex__throughput.avg.pct_of_peak_sustained_active,regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio \
  $B/cuda.test -test.run '^$' -test.bench "^BenchmarkStep\$/$TH/$N/float64/device\$" -test.benchtime 20x > $csv 2> $OUT/ncu_${TH}_$N.err)
echo "ncu rc=$? ($TH $N)"
python3 - "$csv" <<'PY'
import csv, sys
rows = [r for r in csv.reader(open(sys.argv[1])) if r and r[0] not in ('',)]
hdr = next((r for r in rows if r[0] == 'ID'), None)
if hdr is None:
    print(open(sys.argv[1]).read()[-3000:]); sys.exit()
data = [dict(zip(hdr, r)) for r in rows if r[0].isdigit()]
def f(d, k):
    try: return float(d.get(k, 'nan').replace(',', ''))
    except ValueError: return float('nan')
for d in data:
    dur = f(d, 'gpu__time_duration.sum')
    rd, wr = f(d, 'dram__bytes_read.sum'), f(d, 'dram__bytes_write.sum')
    st = sorted(((f(d, k), k.split('stalled_')[1].split('_per')[0]) for k in d if 'stalled_' in k), reverse=True)[:5]
    print("%-14s %7.1f us  dram rd %6.1f MB wr %6.1f MB  %5.0f%% peak  L2 %6.1f MB  occ %4.1f%% (max %4.1f%%)  regs %s blk %s grid %s  issue %4.1f%%  l1 %4.1f%%  stalls %s" % (
        d['Kernel Name'][:14], dur / 1e3, rd / 1e6, wr / 1e6, f(d, 'dram__throughput.avg.pct_of_peak_sustained_elapsed'),
        f(d, 'lts__t_bytes.sum') / 1e6, f(d, 'sm__warps_active.avg.pct_of_peak_sustained_active'), f(d, 'sm__maximum_warps_per_active_cycle_pct'),
        d.get('launch__registers_per_thread'), d.get('launch__block_size'), d.get('launch__grid_size'),
        f(d, 'smsp__issue_active.avg.pct_of_peak_sustained_active'), f(d, 'l1tex__throughput.avg.pct_of_peak_sustained_active'),
        ' '.join('%s %.1f' % (n, v) for v, n in st)))
PY
