#!/bin/sh
# nn and optim figures side by side with PyTorch. Every bench/nn_NAME.lua has a
# twin bench/nn_NAME.py; each prints lines "key microseconds" for the same keys.
# Both sides are pinned to one core and alternated ROUNDS times; this prints the
# median of each key and the lutorch/PyTorch ratio (below 1: lutorch is faster).
#   BUILD=build ROUNDS=3 BENCH_CPU=1 sh bench/nn.sh [NAME...]
# CLASS=avx2: both sides on their AVX2 code (bench/cpu_class.sh).
BUILD=${BUILD:-build}
cd "$(dirname "$0")/.." || exit 1
. bench/cpu_class.sh
ROUNDS=${ROUNDS:-3}
CPU=${BENCH_CPU:-1}
names=$*
if [ -z "$names" ]; then
  for f in bench/nn_*.lua; do n=$(basename "$f" .lua); names="$names ${n#nn_}"; done
fi
out=$(mktemp -d)
median() { sort -g | awk '{a[NR]=$1} END {if (NR) print a[int((NR+1)/2)]; else print "nan"}'; }
printf '%-28s %12s %12s %8s\n' figure "lutorch us" "PyTorch us" ratio
for n in $names; do
  for r in $(seq "$ROUNDS"); do
    OPENBLAS_NUM_THREADS=1 LUTORCH_NUM_THREADS=1 taskset -c "$CPU" "$BUILD/lutorch" "bench/nn_$n.lua" >> "$out/$n.lt"
    OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 taskset -c "$CPU" /usr/bin/python3 "bench/nn_$n.py" >> "$out/$n.pt"
  done
  for k in $(awk '{print $1}' "$out/$n.lt" | awk '!seen[$0]++'); do
    l=$(grep "^$k " "$out/$n.lt" | awk '{print $2}' | median)
    p=$(grep "^$k " "$out/$n.pt" | awk '{print $2}' | median)
    printf '%-28s %12s %12s %8s\n' "$k" "$l" "$p" "$(awk "BEGIN{if ($p > 0) printf \"%.3f\", $l / $p; else print \"-\"}")"
  done
done
rm -rf "$out"
