#!/bin/sh
# Autograd overheads side by side with PyTorch: both pinned to one core,
# alternated ROUNDS times; prints the median of each figure (microseconds)
# and the lutorch/PyTorch ratio.
#   BUILD=build ROUNDS=3 BENCH_CPU=1 sh bench/autograd.sh
BUILD=${BUILD:-build}
ROUNDS=${ROUNDS:-3}
CPU=${BENCH_CPU:-1}
cd "$(dirname "$0")/.." || exit 1
out=$(mktemp -d)
for r in $(seq "$ROUNDS"); do
  OPENBLAS_NUM_THREADS=1 LUTORCH_NUM_THREADS=1 taskset -c "$CPU" "$BUILD/lutorch" bench/autograd_bench.lua 5 >> "$out/lt"
  OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 taskset -c "$CPU" /usr/bin/python3 bench/autograd_bench.py 5 >> "$out/pt"
done
printf '%-16s %12s %12s %8s\n' figure "lutorch us" "PyTorch us" ratio
for k in add_plain add_grad add_backward add_inference chain1000; do
  l=$(grep "^$k " "$out/lt" | awk '{print $2}' | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
  p=$(grep "^$k " "$out/pt" | awk '{print $2}' | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
  printf '%-16s %12s %12s %8s\n' "$k" "$l" "$p" "$(awk "BEGIN{printf \"%.3f\", $l / $p}")"
done
rm -rf "$out"
