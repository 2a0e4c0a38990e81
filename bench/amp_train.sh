#!/bin/sh
# One Fashion-MNIST epoch of the MLP and LeNet-5, float32 against bfloat16, lutorch
# (amp_train.lua: float32, bf16 autocast, bf16 model) and PyTorch 1.13 (amp_train.py:
# float32, bf16 autocast), one thread each, pinned to one core, alternated ROUNDS times;
# prints the median seconds per epoch and the ratios. Says which CPU features it ran on.
#   BUILD=build ROUNDS=3 BENCH_CPU=1 BATCHES=200 sh bench/amp_train.sh
BUILD=${BUILD:-build}
ROUNDS=${ROUNDS:-3}
CPU=${BENCH_CPU:-1}
export BATCHES=${BATCHES:-200}
cd "$(dirname "$0")/.." || exit 1
out=$(mktemp -d)
median() { sort -g | awk '{a[NR]=$1} END {if (NR) print a[int((NR+1)/2)]; else print "nan"}'; }
export OPENBLAS_NUM_THREADS=1 LUTORCH_NUM_THREADS=1 OMP_NUM_THREADS=1 THREADS=1
echo "CPU: $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -1); flags:" \
  "$(grep -o -w 'avx2\|f16c\|avx512f\|avx512_bf16\|amx_bf16' /proc/cpuinfo | sort -u | tr '\n' ' ')"
"$BUILD/lutorch" -e 'local h = torch.backends.cpu.half_paths(); print("lutorch 16-bit conversions: " .. h.convert .. "; gemm: " .. h.gemm)'
echo "epoch scaled from the first $BATCHES batches (BATCHES=0: whole epoch)"
for r in $(seq "$ROUNDS"); do
  taskset -c "$CPU" "$BUILD/lutorch" bench/amp_train.lua >> "$out/lt"
  taskset -c "$CPU" /usr/bin/python3 bench/amp_train.py >> "$out/pt"
done
grep '^#' "$out/lt" | sort -u
printf '%-18s %10s %10s\n' figure "lutorch s" "PyTorch s"
for k in $(cat "$out/lt" "$out/pt" | grep -v '^#' | awk '{print $1}' | awk '!seen[$0]++'); do
  l=$(grep "^$k " "$out/lt" | awk '{print $2}' | median)
  p=$(grep "^$k " "$out/pt" | awk '{print $2}' | median)
  printf '%-18s %10s %10s\n' "$k" "$l" "$p"
done
for m in mlp lenet; do
  f=$(grep "^${m}_float32 " "$out/lt" | awk '{print $2}' | median)
  for mode in autocast bf16model; do
    b=$(grep "^${m}_$mode " "$out/lt" | awk '{print $2}' | median)
    [ "$b" = nan ] || printf '%s: lutorch float32 / lutorch %s = %s\n' "$m" "$mode" "$(awk "BEGIN{printf \"%.2fx\", $f / $b}")"
  done
  pa=$(grep "^${m}_autocast " "$out/pt" | awk '{print $2}' | median)
  for mode in autocast bf16model; do
    b=$(grep "^${m}_$mode " "$out/lt" | awk '{print $2}' | median)
    [ "$b" = nan ] || printf '%s: PyTorch autocast / lutorch %s = %s\n' "$m" "$mode" "$(awk "BEGIN{printf \"%.2fx\", $pa / $b}")"
  done
done
rm -rf "$out"
