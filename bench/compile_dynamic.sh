#!/bin/sh
# torch.compile's dynamic shapes (bench/compile_dynamic.lua): each workload called with 20 new
# sizes, eagerly and compiled with dynamic = false (specialized), nil (automatic dynamic) and
# true, each mode in its own process with an empty kernel cache (so that a compile is a real
# one), ROUNDS times, medians; then the time per call at one large shape of the kernels of
# each mode. One thread pinned to one core.
#   BUILD=build ROUNDS=3 BENCH_CPU=1 sh bench/compile_dynamic.sh
BUILD=${BUILD:-build}
ROUNDS=${ROUNDS:-3}
CPU=${BENCH_CPU:-1}
cd "$(dirname "$0")/.." || exit 1
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
median() { sort -g | awk '{a[NR]=$1} END {if (NR) print a[int((NR+1)/2)]; else print "nan"}'; }
export OPENBLAS_NUM_THREADS=1 LUTORCH_NUM_THREADS=1 OMP_NUM_THREADS=1
echo "CPU: $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -1); compiler: $(${CC:-cc} --version | head -1)"
WORKLOADS="lngelu rowmse softmax gpt"
for r in $(seq "$ROUNDS"); do
  for w in $WORKLOADS; do
    for m in eager false auto true; do
      rm -rf "$out/cache"
      LUTORCH_COMPILE_CACHE="$out/cache" taskset -c "$CPU" "$BUILD/lutorch" bench/compile_dynamic.lua sizes "$m" "$w" \
        | sed "s/^/$w $m /" >> "$out/sizes"
    done
  done
done
get() { grep "^$1 $2 $3 " "$out/sizes" | awk '{print $4}' | median; }
echo "20 calls, each with a new size (ms; first pass / second pass over the same sizes; C compiles)"
printf '%-9s %22s %22s %22s %22s\n' workload eager "dynamic=false" "dynamic=nil (auto)" "dynamic=true"
for w in $WORKLOADS; do
  line=$(printf '%-9s' "$w")
  for m in eager false auto true; do
    line="$line $(printf '%22s' "$(get "$w" "$m" new_ms) / $(get "$w" "$m" again_ms) ($(get "$w" "$m" kernels_compiled))")"
  done
  echo "$line"
done
export LUTORCH_COMPILE_CACHE="$out/steady-cache"
echo "one large shape, microseconds per call (medians of 9 alternated runs of 3 calls)"
for w in chain lngelu rowmse softmax; do
  taskset -c "$CPU" "$BUILD/lutorch" bench/compile_dynamic.lua steady "$w" | tr '\n' ' '
  echo
done
