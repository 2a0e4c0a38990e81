#!/bin/sh
# soak.sh — the soak test (make soak; not part of make test). Runs tests/soak/train.lua for
# SOAK_SECONDS (default 240) with SOAK_WORKERS DataLoader workers (default 2), checkpointing,
# sends it SIGINT halfway (the script catches it, saves, resumes from the checkpoint and trains
# on), and samples the trainer's resident memory (VmRSS in /proc/PID/status), its open file
# descriptors (/proc/PID/fd) and its live child processes every SOAK_EVERY seconds (default 2)
# into $SOAK_DIR/samples.tsv. It passes when the run ends well and what it holds stays flat:
#   - RSS: the median of the last fifth of the samples exceeds the median of the second fifth
#     (after warm-up) by at most SOAK_RSS_MIB (default 8 MiB) or 10%, whichever is more;
#   - descriptors: the last sample is within 2 of the second fifth's median, and no sample
#     exceeds it by more than 4 per worker + 8 (an epoch's sockets and batch buffers);
#   - children: never more than the workers of two epochs at once, none left at the end.
# Prints "N passed, N failed" like the other tests.
BUILD=${BUILD:-build}
cd "$(dirname "$0")/../.." || exit 1
secs=${SOAK_SECONDS:-240}
workers=${SOAK_WORKERS:-2}
every=${SOAK_EVERY:-2}
rss_mib=${SOAK_RSS_MIB:-8}
dir=${SOAK_DIR:-$(mktemp -d)}
mkdir -p "$dir"
passed=0; failed=0
ok()  { passed=$((passed + 1)); echo "ok $1"; }
bad() { failed=$((failed + 1)); echo "FAIL $1"; }

LUA_PATH="lib/?.lua;lib/?/init.lua;;" "$BUILD/lutorch" tests/soak/train.lua "$dir" "$secs" "$workers" \
  >"$dir/train.log" 2>&1 &
pid=$!
echo "soak: pid $pid, ${secs}s, $workers workers, samples in $dir/samples.tsv"
printf 't\trss_kib\tfds\tchildren\n' >"$dir/samples.tsv"
start=$(date +%s); sent=0
while kill -0 "$pid" 2>/dev/null; do
  now=$(( $(date +%s) - start ))
  rss=$(sed -n 's/^VmRSS:[[:space:]]*\([0-9]*\).*/\1/p' "/proc/$pid/status" 2>/dev/null)
  fds=$(ls "/proc/$pid/fd" 2>/dev/null | wc -l)
  kids=$(grep -l "^PPid:[[:space:]]*$pid\$" /proc/[0-9]*/status 2>/dev/null | wc -l)
  [ -n "$rss" ] && printf '%s\t%s\t%s\t%s\n' "$now" "$rss" "$fds" "$kids" >>"$dir/samples.tsv"
  if [ $sent -eq 0 ] && [ "$now" -ge $((secs / 2)) ]; then
    kill -INT "$pid" 2>/dev/null && sent=1 && echo "soak: SIGINT at ${now}s"
  fi
  sleep "$every"
done
wait "$pid"; rc=$?
tail -n 4 "$dir/train.log" | sed 's/^/  /'

[ $rc -eq 0 ] && ok "the run ends well" || bad "the run ended with status $rc (log: $dir/train.log)"
grep -q "^soak: done" "$dir/train.log" && ok "train.lua finished (loss went down)" || bad "train.lua did not finish"
grep -q "^soak: interrupted at step" "$dir/train.log" && grep -q "^soak: resumed at step" "$dir/train.log" \
  && ok "SIGINT caught: saved and resumed" || bad "no interrupt, save and resume in the log"

# the figures: medians of the second and last fifths, the descriptor peak
summary=$(awk -F'\t' -v w="$workers" -v lim="$rss_mib" '
  NR > 1 { n++; r[n] = $2; f[n] = $3; k[n] = $4 }
  function median(a, lo, hi,   m, i, j, t, b) {
    m = 0; for (i = lo; i <= hi; i++) b[++m] = a[i]
    for (i = 2; i <= m; i++) { t = b[i]; for (j = i - 1; j >= 1 && b[j] > t; j--) b[j + 1] = b[j]; b[j + 1] = t }
    return b[int((m + 1) / 2)]
  }
  END {
    if (n < 10) { print "few"; exit }
    lo = int(n / 5) + 1; hi = int(2 * n / 5); tail = int(4 * n / 5) + 1
    r0 = median(r, lo, hi); r1 = median(r, tail, n); f0 = median(f, lo, hi)
    fmax = 0; kmax = 0
    for (i = lo; i <= n; i++) { if (f[i] > fmax) fmax = f[i]; if (k[i] > kmax) kmax = k[i] }
    allow = lim * 1024; if (r0 * 0.10 > allow) allow = r0 * 0.10
    printf "%d %d %d %d %d %d %d %d %d\n", n, r0, r1, allow, f0, f[n], fmax, kmax, k[n]
  }' "$dir/samples.tsv")
if [ "$summary" = "few" ] || [ -z "$summary" ]; then
  bad "too few samples (SOAK_SECONDS=$secs)"
else
  set -- $summary
  n=$1; r0=$2; r1=$3; allow=$4; f0=$5; flast=$6; fmax=$7; kmax=$8; klast=$9
  echo "soak: $n samples; RSS ${r0} KiB -> ${r1} KiB (allowed +${allow}); fds ${f0} -> ${flast} (peak ${fmax}); children peak ${kmax}"
  [ $((r1 - r0)) -le "$allow" ] && ok "RSS flat: +$((r1 - r0)) KiB" || bad "RSS grew by $((r1 - r0)) KiB (allowed $allow)"
  d=$((flast - f0)); [ $d -lt 0 ] && d=$((-d))
  [ $d -le 2 ] && ok "descriptors flat: $f0 -> $flast" || bad "descriptors went from $f0 to $flast"
  [ "$fmax" -le $((f0 + 4 * workers + 8)) ] && ok "descriptor peak $fmax" || bad "descriptor peak $fmax over $f0 + $((4 * workers + 8))"
  [ "$kmax" -le $((2 * workers)) ] && ok "children peak $kmax" || bad "children peak $kmax over $((2 * workers))"
fi
[ -z "$SOAK_DIR" ] && [ $failed -eq 0 ] && rm -rf "$dir"
echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
