#!/bin/bash
# The GPU measurements of docs/performance in one run, on the GPU machine, from the checkout root:
#   bash bench/device/gpu_perf.sh .gpu/NAME [.gpu/BASELINE]
# ms per ANF step (float64, device flow; with a baseline bundle, A B A B in the same
# run), soliton_solver side by side (NAME/peer), time to the first step, the converged
# skyrmion from soliton_solver's initial field, the radiation benchmark at 1024 and 16
# knots per period (and its default kernel on 524288 observers). Logs in $OUT. SIZES (default 256,512,1024,2048) limits the grids.
B=$(cd "${1:?usage: gpu_perf.sh BUNDLE [BASELINE]}" && pwd); A=${2:+$(cd "$2" && pwd)}; R=$(pwd)
export PYTHONUNBUFFERED=1; OUT=${OUT:-/tmp/fg-gpuperf-out}; mkdir -p $OUT
SIZES=${SIZES:-256,512,1024,2048}
(cd $B && gunzip -kf *.test.gz); [ -n "$A" ] && (cd $A && gunzip -kf cuda.test.gz)
[ -d $B/py/fieldgo ] || python3 -m zipfile -e $B/wheels/fieldgo-*.whl $B/py  # the cp312 wheel of bundle.sh, for PYTHONPATH
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
steps() { # label bundle cache: kernels/cuda's BenchmarkStep, float64 device flow at $SIZES
  (cd kernels/cuda && FIELDGO_CACHE=$3 FIELDGO_TEST_CUDA_CACHE=$3 timeout 150 $2/cuda.test -test.run '^$' \
    -test.bench "^BenchmarkStep\$/.*/(${SIZES//,/|})/float64/device\$" -test.benchtime 0.25s -test.v > $OUT/steps_$1.log 2>&1; echo "$1 rc=$? $(el)")
  stepcols $OUT/steps_$1.log | sed "s/^/$1 | /"
}
# stepcols LOG: BenchmarkStep's result lines as theory | grid | precision | mode | steps | ms/step | GB/s | % of 4.2 TB/s
stepcols() { grep -E '^BenchmarkStep/.* ms/step' $1 | awk '{split($1, n, "/"); sub(/-[0-9]+$/, "", n[5]);
  for (i = 3; i < NF; i += 2) v[$(i+1)] = $i; printf "%s | %s | %s | %s | %s | %s | %s | %s\n", n[2], n[3], n[4], n[5], $2, v["ms/step"], v["GB/s"], v["%copy-ceiling"]}'; }
if [ -n "$A" ]; then
  # Same bits? The GPU tests log energies to 17 digits (TestAgreesWithCPU, TestDeterministic,
  # TestFlow100) and the device flows' to 15 (TestDeviceFlow): compare those lines.
  # Both bundles need kernels/cuda's TestDeviceFlow (bundles of this layout).
  (cd $A && gunzip -kf cuda.test.gz)
  for v in A B; do
    d=$([ $v = A ] && echo $A || echo $B)
    (cd kernels/cuda && FIELDGO_TEST_CUDA_CACHE=/tmp/fg-perf$v timeout 240 $d/cuda.test -test.v -test.run 'TestAgreesWithCPU|TestDeterministic|TestFlow100|TestDeviceFlow$' > $OUT/bits_$v.log 2>&1)
    grep -E "energy|E=" $OUT/bits_$v.log | sed -E 's/^ *[a-z0-9_]+\.go:[0-9]+: //' | sort > $OUT/bits_$v.txt
  done
  echo "== same bits as the baseline: $(comm -23 $OUT/bits_A.txt $OUT/bits_B.txt | wc -l) of $(wc -l < $OUT/bits_A.txt) baseline energy lines differ $(el)"
  comm -23 $OUT/bits_A.txt $OUT/bits_B.txt | head -4 | cut -c1-200
fi
echo "== ms per step (theory | grid | precision | mode | steps | ms | GB/s | of 4.2 TB/s)"
if [ -n "$A" ]; then
  for r in 1 2; do steps A$r $A /tmp/fg-perfA; steps B$r $B /tmp/fg-perfB; done
else
  steps B $B /tmp/fg-perfB
fi
if [ -f $B/peer/soliton_solver_baseline.py ]; then
  echo "== soliton_solver, same run"
  (cd $B/peer && timeout 200 python3 -W ignore::DeprecationWarning soliton_solver_baseline.py --src . --no-ref --no-breakdown \
    --sizes $SIZES --min-time 0.4 --repeats 2 --out $OUT > $OUT/peer.log 2>&1; echo "rc=$? $(el)")
  sed -n '/== soliton_solver baseline/,$p' $OUT/peer.log | grep -v Warning | head -12
fi
echo "== time to the first step (byte code cached), empty then warm caches"
( unset PYTHONDONTWRITEBYTECODE; export PYTHONPYCACHEPREFIX=/tmp/fg-pyc PYTHONPATH=$B/py
  python3 -c "import sympy, numpy, pyarrow, fieldgo"
  timeout 90 python3 bench/startup/first_step.py --backend cuda --grid 256 --repeats 3 ); el
if [ -f $B/peer/same_start.py ]; then
  echo "== converged skyrmion from soliton_solver's initial field (its 25 s cap, then fieldgo fresh processes)"
  ( unset PYTHONDONTWRITEBYTECODE; export PYTHONPYCACHEPREFIX=/tmp/fg-pyc PYTHONPATH=$B/py FIELDGO_CACHE=/tmp/fg-same; rm -rf /tmp/fg-same
    cd $B/peer && timeout 120 python3 -W ignore same_start.py both $OUT/ss_init.npz 1e-6 25 > $OUT/same.log 2>&1; echo "rc=$?"
    grep SAME_START $OUT/same.log | cut -c1-300
    for i in 1 2 3; do s=$(date +%s.%N); timeout 60 python3 same_start.py fg $OUT/ss_init.npz 1e-6 > $OUT/fg_$i.log; e=$(date +%s.%N)
      python3 -c "import json; l=[x for x in open('$OUT/fg_$i.log') if x.startswith('SAME_START')]; r=json.loads(l[-1][11:]); print('process wall %.3f s' % ($e - $s), r['steps'], r['converged'], r['phases_s_from_start'])"; done ); el
fi
echo "== radiation benchmark"
for kpp in 1024 16; do
  (cd kernels/cuda/gpuradiation && FIELDGO_TEST_CUDA_CACHE=/tmp/fg-perfB timeout 90 $B/gpuradiation.test -test.run '^$' -test.bench 'GPURadiation' -test.benchtime 1x -test.v -rad-kpp $kpp > $OUT/rad_$kpp.log 2>&1; echo "knots per period $kpp: rc=$? $(el)")
  grep -E '^Benchmark.*samples/s' $OUT/rad_$kpp.log | sed -E 's/ +/ /g; s/BenchmarkGPURadiation\///; s/-[0-9]+ / /' |
    awk '{for (i=1;i<=NF;i++) if ($(i+1)=="samples/s") v=$i; printf "%s %.3g\n", $1, v}'
  grep -E "gpu_test.go:[0-9]+: (Newton n=2|split|tiles over|direction|warm search|coef_reuse)" $OUT/rad_$kpp.log | sed -E 's/^ *//' | cut -c1-220
  # The default on a scene that fills the GPU (the benchmark's 32768 observers are 7.75 warps per SM).
  (cd kernels/cuda/gpuradiation && FIELDGO_TEST_CUDA_CACHE=/tmp/fg-perfB timeout 90 $B/gpuradiation.test -test.run '^$' \
    -test.bench 'GPURadiation/newton2_f64_warm_reuse$' -test.benchtime 1x -test.v -rad-kpp $kpp -rad-observers 524288 > $OUT/rad_big_$kpp.log 2>&1)
  grep -E '^Benchmark.*samples/s' $OUT/rad_big_$kpp.log | awk '{for (i=1;i<=NF;i++) if ($(i+1)=="samples/s") v=$i; printf "newton2_f64_warm_reuse, 524288 observers %.3g\n", v}'
done
date -u; el
