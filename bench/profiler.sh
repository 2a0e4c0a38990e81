#!/bin/sh
# The profiler's cost on a tiny op (bench/profiler_bench.lua): per-op microseconds of
# add(1-element, 1-element) with the profiler off, on, and on with record_shapes and
# profile_memory, pinned to one core and alternated ROUNDS times; prints the median of
# each and its ratio to "off". BASE=path/to/lutorch adds "base": the same loop on another
# build (one from before the profiler's hooks: `git worktree add /tmp/base <commit> && make
# -C /tmp/base`), which is what "off" must equal within noise.
#   BUILD=build ROUNDS=5 BENCH_CPU=1 [BASE=/tmp/base/build/lutorch] sh bench/profiler.sh
BUILD=${BUILD:-build}
ROUNDS=${ROUNDS:-5}
CPU=${BENCH_CPU:-1}
N=${N:-200000}
cd "$(dirname "$0")/.." || exit 1
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
run() { OPENBLAS_NUM_THREADS=1 LUTORCH_NUM_THREADS=1 taskset -c "$CPU" "$@"; }
for r in $(seq "$ROUNDS"); do
  for m in off on full; do run "$BUILD/lutorch" bench/profiler_bench.lua $m "$N" >> "$out/t"; done
  if [ -n "$BASE" ]; then run "$BASE" bench/profiler_bench.lua off "$N" | sed 's/^off/base/' >> "$out/t"; fi
done
med() { grep "^$1 " "$out/t" | awk '{print $2}' | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
off=$(med off)
printf '%-6s %10s %8s\n' mode "us/op" "x off"
for m in base off on full; do
  v=$(med $m)
  [ -n "$v" ] || continue
  printf '%-6s %10s %8s\n' "$m" "$v" "$(awk "BEGIN{printf \"%.2f\", $v / $off}")"
done
