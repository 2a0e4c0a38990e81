#!/bin/sh
# torch.compile against eager lutorch (bench/compile_bench.lua) and eager PyTorch 1.13
# (bench/compile_bench.py; Debian's 1.13 has no torch.compile, and PyPI's torch 2.x is not
# installed here), one thread pinned to one core, alternated ROUNDS times; prints the median
# microseconds of each figure and the ratios eager/compiled and PyTorch/compiled.
#   BUILD=build ROUNDS=3 BENCH_CPU=1 sh bench/compile.sh
# BENCH_ONLY=inplace,inplace_arg (figure names) runs those figures only.
BUILD=${BUILD:-build}
ROUNDS=${ROUNDS:-3}
CPU=${BENCH_CPU:-1}
cd "$(dirname "$0")/.." || exit 1
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
median() { sort -g | awk '{a[NR]=$1} END {if (NR) print a[int((NR+1)/2)]; else print "nan"}'; }
export OPENBLAS_NUM_THREADS=1 LUTORCH_NUM_THREADS=1 OMP_NUM_THREADS=1
export LUTORCH_COMPILE_CACHE="$out/cache"
echo "CPU: $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -1); compiler: $(${CC:-cc} --version | head -1)"
for r in $(seq "$ROUNDS"); do
  taskset -c "$CPU" "$BUILD/lutorch" bench/compile_bench.lua >> "$out/lt"
  taskset -c "$CPU" /usr/bin/python3 bench/compile_bench.py >> "$out/pt" 2>/dev/null
done
get() { grep "^$1 " "$2" | awk '{print $2}' | median; }
printf '%-14s %14s %14s %14s %10s %10s\n' figure "eager us" "compiled us" "PyTorch us" "eager/cmp" "pt/cmp"
for k in $(echo "${BENCH_ONLY:-chain inplace inplace_arg bcast transp lngelu softmax lngelu_train softmax_train rowmse mlp_train gpt_train break}" | tr , ' '); do
  e=$(get ${k}_eager "$out/lt"); c=$(get ${k}_compiled "$out/lt"); p=$(get ${k}_eager "$out/pt")
  printf '%-14s %14s %14s %14s %10s %10s\n' "$k" "$e" "$c" "$p" \
    "$(awk "BEGIN{printf \"%.2f\", $e / $c}")" "$(awk "BEGIN{if (\"$p\" != \"nan\") printf \"%.2f\", $p / $c; else print \"-\"}")"
done
[ -n "$BENCH_ONLY" ] && exit 0
echo "first compile of a graph: $(get first_compile "$out/lt") us; its first call in a reset state with the kernel cached: $(get cached_start "$out/lt") us"
