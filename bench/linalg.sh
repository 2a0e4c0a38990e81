#!/bin/sh
# torch.linalg.solve and inv side by side: lutorch, PyTorch and numpy, on the same
# OpenBLAS LAPACK, one thread, pinned to one core, alternated ROUNDS times; prints
# the median of each key in microseconds and lutorch's ratio to the faster of the two.
#   BUILD=build ROUNDS=3 BENCH_CPU=1 sh bench/linalg.sh
BUILD=${BUILD:-build}
ROUNDS=${ROUNDS:-3}
CPU=${BENCH_CPU:-1}
cd "$(dirname "$0")/.." || exit 1
out=$(mktemp -d)
median() { sort -g | awk '{a[NR]=$1} END {if (NR) print a[int((NR+1)/2)]; else print "nan"}'; }
export OPENBLAS_NUM_THREADS=1 LUTORCH_NUM_THREADS=1 OMP_NUM_THREADS=1
for r in $(seq "$ROUNDS"); do
  taskset -c "$CPU" "$BUILD/lutorch" bench/linalg.lua >> "$out/lt"
  LIB=torch taskset -c "$CPU" /usr/bin/python3 bench/linalg.py >> "$out/pt"
  LIB=numpy taskset -c "$CPU" /usr/bin/python3 bench/linalg.py >> "$out/np"
done
printf '%-22s %12s %12s %12s %8s\n' figure "lutorch us" "PyTorch us" "numpy us" "lt/best"
for k in $(awk '{print $1}' "$out/lt" | awk '!seen[$0]++'); do
  l=$(grep "^$k " "$out/lt" | awk '{print $2}' | median)
  p=$(grep "^$k " "$out/pt" | awk '{print $2}' | median)
  n=$(grep "^$k " "$out/np" | awk '{print $2}' | median)
  printf '%-22s %12s %12s %12s %8s\n' "$k" "$l" "$p" "$n" \
    "$(awk "BEGIN{b = $p < $n ? $p : $n; if (b > 0) printf \"%.3f\", $l / b; else print \"-\"}")"
done
rm -rf "$out"
