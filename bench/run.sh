#!/bin/sh
# bench/run.sh — lutorch side by side with PyTorch (Debian's python3-torch) and the machine's
# own limits (STREAM, a direct cblas_sgemm), all in the same run. `make bench` runs it.
#
#   BUILD=build ROUNDS=3 BENCH_CPU=1 sh bench/run.sh
#
# Every figure is measured ROUNDS times, alternating lutorch, PyTorch and the reference
# program (A B C A B C ...), each run reporting the median of its in-process repetitions;
# the table takes the median over rounds. Single-thread figures are pinned to one core
# (taskset -c $BENCH_CPU) on both sides. Both sides get the same environment: nothing here
# sets OPENBLAS_CORETYPE; OPENBLAS_NUM_THREADS is set to the figure's thread count for
# every program alike. Logs and the table go to $BUILD/bench/ (log.txt, results.txt, table.md).
set -u
cd "$(dirname "$0")/.." || exit 1
BUILD=${BUILD:-build}
ROUNDS=${ROUNDS:-3}
CPU=${BENCH_CPU:-1}
PY=/usr/bin/python3
OUT=$BUILD/bench
LT=$BUILD/lutorch
mkdir -p "$OUT"
LOG=$OUT/log.txt
RES=$OUT/results.txt
: >"$LOG"; : >"$RES"

say() { echo "$*" | tee -a "$LOG"; }
# run SIDE CMD...: echo the exact command, run it, keep its "R key value" lines as "SIDE key value"
run() {
  side=$1; shift
  say "\$ $*"
  "$@" >"$OUT/last.txt" 2>&1
  rc=$?
  cat "$OUT/last.txt" >>"$LOG"
  if [ $rc -ne 0 ]; then say "  (exit status $rc)"; tail -n 3 "$OUT/last.txt" | sed 's/^/  | /'; fi
  sed -n "s/^R /$side /p" "$OUT/last.txt" >>"$RES"
  sed -n 's/^R /  /p' "$OUT/last.txt"
}

[ -x "$LT" ] || { echo "bench: $LT is not built (make BUILD=$BUILD)"; exit 1; }
[ -x "$PY" ] && "$PY" -c 'import torch' 2>/dev/null || echo "bench: $PY with torch missing (apt-get install python3-torch): PyTorch columns stay empty"
command -v taskset >/dev/null 2>&1 || { echo "bench: taskset (util-linux) missing"; exit 1; }

# the reference programs and the Lua clock module
cflags_blas=$(pkg-config --cflags openblas 2>/dev/null)
libs_blas=$(pkg-config --libs openblas 2>/dev/null || echo -lopenblas)
gcc -O3 -march=native -fopenmp bench/stream.c -o "$OUT/stream" || exit 1
gcc -O2 bench/gemm.c -o "$OUT/gemm" $cflags_blas $libs_blas || exit 1
gcc -O2 -Wall -shared -fPIC $(pkg-config --cflags lua5.4) bench/lclock.c -o "$OUT/lclock.so" || exit 1

export BUILD      # lt_bench.lua loads $BUILD/bench/lclock.so
LTB="$LT bench/lt_bench.lua"
PTB="$PY bench/pt_bench.py"

{
  echo "# $(date -u '+%Y-%m-%d %H:%M UTC')  $(uname -r)  $(nproc) CPUs  $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
  echo "# git $(git rev-parse --short HEAD 2>/dev/null)$(git diff --quiet 2>/dev/null || echo ' (dirty tree)')"
  echo "# load average at start: $(cut -d' ' -f1-3 /proc/loadavg) (other work on the machine skews every figure; ratios within a round hold up best)"
  echo "# environment: $(env | grep -E '^(OPENBLAS|OMP|GOMP|LUTORCH)_' | tr '\n' ' ')"
} | tee -a "$LOG"
say "## OpenBLAS core in each program"
run env "$PY" bench/pyenv_info.py
say "\$ OPENBLAS_VERBOSE=2 $LT -e ''"
OPENBLAS_VERBOSE=2 "$LT" -e '' 2>&1 | tee -a "$LOG"

# section THREADS PIN LT_SECTION REF...: one figure set for both sides (+ a reference program)
section() {
  sec=$1; thr=$2; pin=$3; shift 3
  p=""; [ "$pin" = pin ] && p="taskset -c $CPU"
  run lt $p env OPENBLAS_NUM_THREADS="$thr" $LTB "$sec" "$thr"
  run pt $p env OPENBLAS_NUM_THREADS="$thr" $PTB "$sec" "$thr"
}
stream() {  # stream THREADS PIN: STREAM on 64 MiB arrays (16M float32 for f32 add)
  thr=$1; p=""; [ "$2" = pin ] && p="taskset -c $CPU"
  say "\$ ${p:+$p }env OMP_NUM_THREADS=$thr OMP_PROC_BIND=true $OUT/stream 8388608 nosweep"
  $p env OMP_NUM_THREADS="$thr" OMP_PROC_BIND=true "$OUT/stream" 8388608 nosweep >"$OUT/last.txt" 2>&1
  cat "$OUT/last.txt" >>"$LOG"
  awk -v t="$thr" '
    function med() { for (i = 1; i < NF; i++) if ($i == "median") return $(i + 1) }
    /^copy /                    { print "ref stream_copy_t" t "_gbs", med() }
    /^add    c=a\+b \(f64\)/    { print "ref stream_add64_t" t "_gbs", med() }
    /^f32 add c=a\+b  /         { print "ref stream_add32_t" t "_gbs", med() }
    /^f32 add c=a\+b \(NT/      { print "ref stream_add32nt_t" t "_gbs", med() }' "$OUT/last.txt" | tee -a "$RES" | sed 's/^ref /  /'
}
gemm() {  # gemm THREADS PIN
  thr=$1; p=""; [ "$2" = pin ] && p="taskset -c $CPU"
  say "\$ ${p:+$p }env OPENBLAS_NUM_THREADS=$thr $OUT/gemm 2048"
  $p env OPENBLAS_NUM_THREADS="$thr" "$OUT/gemm" 2048 >"$OUT/last.txt" 2>&1
  cat "$OUT/last.txt" >>"$LOG"
  head -1 "$OUT/last.txt"
  awk -v t="$thr" '/^sgemm/ { for (i = 1; i < NF; i++) if ($i == "median") print "ref gemm2048_t" t "_gflops", $(i + 1) }' "$OUT/last.txt" | tee -a "$RES" | sed 's/^ref /  /'
}

r=1
while [ "$r" -le "$ROUNDS" ]; do
  say "## round $r of $ROUNDS"
  section op1 1 pin
  section add16 2 nopin; stream 2 nopin
  section add16 1 pin;   stream 1 pin
  section red 2 nopin
  section red 1 pin
  section mm 1 pin;      gemm 1 pin
  section mm 2 nopin;    gemm 2 nopin
  section overs 1 nopin
  section overs 2 nopin
  r=$((r + 1))
done

say "## process start: wall time and peak RSS"
if [ -x /usr/bin/time ]; then
  proc() {  # proc SIDE SHOWN CMD...: SHOWN is the command as a shell would take it
    side=$1; shown=$2; shift 2
    say "\$ bash bench/proc_time.sh 10 $shown"
    line=$(bash bench/proc_time.sh 10 "$@")
    say "$line"
    echo "$line" | awk -v s="$side" '{
      for (i = 1; i <= NF; i++) if ($i == "median") m[++k] = $(i + 1)
      print s, "start_ms", m[1]; print s, "start_rss_mib", m[2] }' >>"$RES"
  }
  proc lt "$LT -e ''" "$LT" -e ''
  proc pt "$PY -c 'import torch'" "$PY" -c 'import torch'
  proc ref "lua5.4 -e ''" lua5.4 -e ''
else
  say "bench: /usr/bin/time missing (apt-get install time): process start skipped"
fi

say "# load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
lua5.4 bench/report.lua "$RES" "$ROUNDS" | tee "$OUT/table.md" | tee -a "$LOG"
echo "logs: $LOG  table: $OUT/table.md"
