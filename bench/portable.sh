#!/bin/sh
# bench/portable.sh — the portable build against a build for this machine alone: the same
# benchmark scripts run by both lutorch programs, alternated (A B, then B A, ...) ROUNDS times,
# pinned to one core, one thread; prints each figure's median per build and B/A.
#   NATIVE=/tmp/native-build PORTABLE=build ROUNDS=3 BENCH_CPU=1 [STAT=min] sh bench/portable.sh [BENCH...]
# (make BUILD=/tmp/native-build OPT="-O2 -march=native" makes the first). BENCH: lt_bench
# sections (op1 add16 red overs), nn_conv nn_norm nn_misc nn_optim, bf16, fft, quant.
# "rate" figures (GB/s, GFLOP/s) are better higher, the others (µs, ms) lower; "slower" is
# the portable build's loss in percent either way (negative: faster).
NATIVE=${NATIVE:?set NATIVE to the -march=native build directory}
PORTABLE=${PORTABLE:-build}
ROUNDS=${ROUNDS:-3}
CPU=${BENCH_CPU:-1}
cd "$(dirname "$0")/.." || exit 1
benches=${*:-"op1 add16 red nn_conv nn_norm nn_misc nn_optim bf16 fft quant"}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
mkdir -p "$out/bench"
gcc -O2 -shared -fPIC $(pkg-config --cflags lua5.4) bench/lclock.c -o "$out/bench/lclock.so" || exit 1
export LUA_PATH="lib/?.lua;lib/?/init.lua;;" OPENBLAS_NUM_THREADS=1 LUTORCH_NUM_THREADS=1
# one run of bench B with the program of build dir D, its figures as "key value" lines
one() {
  case $2 in
    op1|add16|red|overs) BUILD=$out taskset -c "$CPU" "$1/lutorch" bench/lt_bench.lua "$2" 1 | awk '$1 == "R" { print $2, $3 }' ;;
    fft) taskset -c "$CPU" "$1/lutorch" bench/fft.lua | awk '$1 == "lutorch" { print $2 "_" $3 "_" $4 "_ms", $5 }' ;;
    *) taskset -c "$CPU" "$1/lutorch" "bench/$2.lua" | awk 'NF == 2 && $1 !~ /^size_/ && $2 ~ /^[0-9.e+-]+$/ { print $1 "_us", $2 }' ;;
  esac
}
# STAT=min takes each figure's best round instead of the median: on a machine shared with
# other work the best round is the one least disturbed (rates: the highest)
STAT=${STAT:-median}
median() {
  case $STAT in
    min) if [ "$rate" = 1 ]; then sort -g | tail -n 1; else sort -g | head -n 1; fi ;;
    *) sort -g | awk '{a[NR]=$1} END {if (NR) print a[int((NR+1)/2)]; else print "nan"}' ;;
  esac
}
printf '%-36s %12s %12s %8s\n' figure native portable slower
for b in $benches; do
  for r in $(seq "$ROUNDS"); do
    if [ $((r % 2)) -eq 1 ]; then one "$NATIVE" "$b" >>"$out/$b.A"; one "$PORTABLE" "$b" >>"$out/$b.B"
    else one "$PORTABLE" "$b" >>"$out/$b.B"; one "$NATIVE" "$b" >>"$out/$b.A"; fi
  done
  for k in $(awk '{print $1}' "$out/$b.A" | awk '!seen[$0]++'); do
    case $k in *_gbs|*_gflops) rate=1 ;; *) rate=0 ;; esac
    a=$(grep "^$k " "$out/$b.A" | awk '{print $2}' | median)
    p=$(grep "^$k " "$out/$b.B" | awk '{print $2}' | median)
    printf '%-36s %12s %12s %8s\n' "$k" "$a" "$p" \
      "$(awk "BEGIN{ if ($a > 0 && $p > 0) printf \"%+.1f%%\", ($rate ? $a / $p - 1 : $p / $a - 1) * 100; else print \"-\" }")"
  done
done
