#!/bin/sh
# The bfloat16 / float16 figures side by side: lutorch (bf16.lua) and PyTorch 1.13
# (bf16.py), one thread, pinned to one core, alternated ROUNDS times; prints the median
# microseconds of each key, lutorch's ratio to PyTorch, and each 16-bit figure's ratio to
# lutorch's own float32 (below 1: the 16-bit op is faster). Names the CPU and its flags.
#   BUILD=build ROUNDS=3 BENCH_CPU=1 sh bench/bf16.sh
BUILD=${BUILD:-build}
ROUNDS=${ROUNDS:-3}
CPU=${BENCH_CPU:-1}
cd "$(dirname "$0")/.." || exit 1
out=$(mktemp -d)
median() { sort -g | awk '{a[NR]=$1} END {if (NR) print a[int((NR+1)/2)]; else print "nan"}'; }
export OPENBLAS_NUM_THREADS=1 LUTORCH_NUM_THREADS=1 OMP_NUM_THREADS=1
echo "CPU: $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -1); flags:" \
  "$(grep -o -w 'avx2\|f16c\|avx512f\|avx512_bf16\|amx_bf16' /proc/cpuinfo | sort -u | tr '\n' ' ')"
"$BUILD/lutorch" -e 'local h = torch.backends.cpu.half_paths(); print("lutorch 16-bit conversions: " .. h.convert .. "; gemm: " .. h.gemm)'
for r in $(seq "$ROUNDS"); do
  taskset -c "$CPU" "$BUILD/lutorch" bench/bf16.lua >> "$out/lt"
  taskset -c "$CPU" /usr/bin/python3 bench/bf16.py >> "$out/pt"
done
printf '%-22s %12s %12s %8s %10s %10s\n' figure "lutorch us" "PyTorch us" "lt/pt" "lt/lt-f32" "pt/pt-f32"
for k in $(awk '{print $1}' "$out/lt" | awk '!seen[$0]++'); do
  l=$(grep "^$k " "$out/lt" | awk '{print $2}' | median)
  p=$(grep "^$k " "$out/pt" | awk '{print $2}' | median)
  f=${k%_*}_f32
  lf=$(grep "^$f " "$out/lt" | awk '{print $2}' | median)
  pf=$(grep "^$f " "$out/pt" | awk '{print $2}' | median)
  printf '%-22s %12s %12s %8s %10s %10s\n' "$k" "$l" "$p" \
    "$(awk "BEGIN{if ($p > 0) printf \"%.2f\", $l / $p; else print \"-\"}")" \
    "$(awk "BEGIN{if ($lf > 0) printf \"%.2f\", $l / $lf; else print \"-\"}")" \
    "$(awk "BEGIN{if ($pf > 0 && $p > 0) printf \"%.2f\", $p / $pf; else print \"-\"}")"
done
rm -rf "$out"
