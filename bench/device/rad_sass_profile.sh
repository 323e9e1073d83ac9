#!/bin/bash
# Where the default radiation kernel's instructions and stalls go, per block of
# its SASS: ncu's source counters (executed instructions and stall samples per
# instruction) of fg_rad_newton_reuse_f64 on the benchmark's scene, summed over
# runs of consecutive instructions with the same execution count (straight-line
# code), reported per (observer, sample, particle). On the GPU machine, from
# the checkout root (it shows, for one, what the tile's write-out costs):
#   bash bench/device/rad_sass_profile.sh .gpu/NAME [knots per period, default 16]
# Leaves $OUT/rad_sass_<kpp>.csv.gz (the per-instruction table) and prints the
# blocks that run at least MIN (default 0.02) times per warp-sample.
B=$(cd "${1:?usage: rad_sass_profile.sh BUNDLE [kpp]}" && pwd); KPP=${2:-16}
OUT=${OUT:-/tmp/fg-radprof-out}; mkdir -p $OUT
NCU=${NCU:-$(command -v ncu || echo /usr/local/cuda/bin/ncu)}
(cd $B && gunzip -kf gpuradiation.test.gz)
rep=$OUT/rad_sass_$KPP
(cd kernels/cuda/gpuradiation && FIELDGO_TEST_CUDA_CACHE=/tmp/fg-radprof timeout 300 $NCU --section SourceCounters \
  --section InstructionStats --section WarpStateStats --import-source no -k 'regex:^fg_rad_newton_reuse_f64$' -c 1 -f -o $rep \
  $B/gpuradiation.test -test.run '^$' -test.benchtime 1x -test.bench 'GPURadiation/newton2_f64_warm_reuse$' -rad-kpp $KPP > $rep.log 2>&1)
echo "ncu rc=$? (knots per period $KPP)"
$NCU -i $rep.ncu-rep --page source --csv --print-source sass > $rep.csv 2>> $rep.log && rm -f $rep.ncu-rep
SAMPLES=$(( 32768 * 256 * 16 )) python3 - $rep.csv <<'PY'
import csv, os, sys
rows = list(csv.reader(open(sys.argv[1])))
hdr = next(r for r in rows if 'Address' in r and 'Source' in r)
data = rows[rows.index(hdr) + 1:]
col = {h: i for i, h in enumerate(hdr)}
num = lambda r, h: int((r[col[h]] or '0').replace(',', ''))
reasons = [h for h in hdr if h.startswith('stall_') and '(' not in h]
ws = int(os.environ['SAMPLES']) / 32  # warp-level executions of a once-per-sample instruction
total = sum(num(r, 'Instructions Executed') for r in data)
stalls = sum(num(r, h) for r in data for h in reasons) or 1
base = int(data[0][col['Address']], 16)
print(f"{total / ws:.1f} instructions per sample; blocks of equal count:")
blocks, cur = [], None
for r in data:
    n = num(r, 'Instructions Executed')
    if cur is None or cur['n'] != n:
        cur = {'at': int(r[col['Address']], 16) - base, 'n': n, 'len': 0, 'st': {h: 0 for h in reasons}, 'first': r[col['Source']].strip()}
        blocks.append(cur)
    cur['len'] += 1
    for h in reasons:
        cur['st'][h] += num(r, h)
for b in blocks:
    if b['n'] >= float(os.environ.get('MIN', '0.02')) * ws:
        st = sorted(b['st'].items(), key=lambda kv: -kv[1])[:2]
        print(f"{b['at']:05x} x{b['n'] / ws:6.3f} per sample, {b['len']:4d} instr = {b['n'] * b['len'] / ws:6.1f}  stalls "
              f"{100 * sum(b['st'].values()) / stalls:4.1f}% ({', '.join(f'{k[6:]} {100 * v / stalls:.1f}' for k, v in st)})  {b['first'][:40]}")
PY
gzip -f $rep.csv
