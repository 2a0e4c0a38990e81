#!/bin/sh
# svd, eigh, qr and eig side by side: lutorch, PyTorch 1.13 and numpy (Debian's, under
# /usr/bin/python3), each pinned to one core and one thread, alternated ROUNDS times
# (lutorch, PyTorch, numpy, lutorch, ...). Prints the median of each key and the ratio of
# lutorch to the faster of the two others (below 1: lutorch is faster).
#   BUILD=build ROUNDS=3 BENCH_CPU=1 BENCH_BIG=1 sh bench/linalg_spectral.sh
BUILD=${BUILD:-build}
ROUNDS=${ROUNDS:-3}
CPU=${BENCH_CPU:-1}
cd "$(dirname "$0")/.." || exit 1
out=$(mktemp -d)
median() { sort -g | awk '{a[NR]=$1} END {if (NR) print a[int((NR+1)/2)]; else print "nan"}'; }
env1() { env OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 LUTORCH_NUM_THREADS=1 taskset -c "$CPU" "$@"; }
for r in $(seq "$ROUNDS"); do
  env1 "$BUILD/lutorch" bench/linalg_spectral.lua 3 >> "$out/lt"
  env1 /usr/bin/python3 bench/linalg_spectral.py 3 torch >> "$out/pt"
  env1 /usr/bin/python3 bench/linalg_spectral.py 3 numpy >> "$out/np"
done
printf '%-14s %12s %12s %12s %8s\n' figure "lutorch us" "PyTorch us" "numpy us" ratio
for k in $(awk '{print $1}' "$out/lt" | awk '!seen[$0]++'); do
  l=$(grep "^$k " "$out/lt" | awk '{print $2}' | median)
  p=$(grep "^$k " "$out/pt" | awk '{print $2}' | median)
  n=$(grep "^$k " "$out/np" | awk '{print $2}' | median)
  printf '%-14s %12s %12s %12s %8s\n' "$k" "$l" "$p" "$n" "$(awk "BEGIN{m = $p < $n ? $p : $n; if (m > 0) printf \"%.3f\", $l / m; else print \"-\"}")"
done
rm -rf "$out"
