#!/bin/sh
# fft.sh — torch.fft against numpy.fft and PyTorch 1.13's torch.fft: fft and rfft of 2^20
# and of the prime 1000003 points, float64 and float32, one thread, all pinned to one CPU,
# lutorch / its engine alone / numpy+PyTorch alternated for ROUNDS rounds; then the median
# of each figure over the rounds and the ratios. Usage: sh bench/fft.sh [BUILD] [ROUNDS]
BUILD=${1:-build}; ROUNDS=${2:-3}; CPU=${CPU:-1}; REPS=${REPS:-7}
PY=/usr/bin/python3
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 LUTORCH_NUM_THREADS=1
LOG=$BUILD/bench/fft.txt
mkdir -p "$BUILD/bench"
# the engine by itself, without the op layer
cc -std=gnu11 -O2 -march=native -Isrc -I"$BUILD/gen" -o "$BUILD/bench/fft_engine" bench/fft_engine.c \
   "$BUILD/liblutorch.a" $(pkg-config --libs openblas jansson libzip lua5.4) -lz -lpthread -lm -ldl || exit 1
: > "$LOG"
for r in $(seq "$ROUNDS"); do
  taskset -c "$CPU" "$BUILD/lutorch" bench/fft.lua "$REPS" >> "$LOG" || exit 1
  taskset -c "$CPU" "$BUILD/bench/fft_engine" "$REPS" >> "$LOG" || exit 1
  taskset -c "$CPU" "$PY" bench/fft.py "$REPS" >> "$LOG" || exit 1
done
lscpu | sed -n 's/^Model name: *//p'
"$PY" - "$LOG" <<'PYEOF'
import sys, collections
fig = collections.defaultdict(list)
for line in open(sys.argv[1]):
    who, op, dt, n, ms = line.split()
    fig[(op, dt, int(n), who)].append(float(ms))
med = {k: sorted(v)[(len(v) - 1) // 2] for k, v in fig.items()}
print("| transform | lutorch ms | engine ms | numpy ms | PyTorch ms | lutorch/numpy | lutorch/PyTorch |")
print("|---|---|---|---|---|---|---|")
for op in ("fft", "rfft"):
    for dt in ("float64", "float32"):
        for n in (1 << 20, 1000003):
            g = lambda who: med.get((op, dt, n, who), float("nan"))
            lt, en, np_, pt = g("lutorch"), g("engine"), g("numpy"), g("pytorch")
            print("| %s %s n=%d | %.2f | %.2f | %.2f | %.2f | %.2fx | %.2fx |" % (op, dt, n, lt, en, np_, pt, lt / np_, lt / pt))
PYEOF
