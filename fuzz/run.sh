#!/bin/sh
# fuzz/run.sh SECONDS TARGET... — runs each fuzz target for SECONDS, one after another, one
# process each (make fuzz; the machine is shared). A target's corpus grows in
# $FUZZ_BUILD/corpus/NAME (seeded from fuzz/corpus/NAME and fuzz/regress/NAME); a crash is
# written to $FUZZ_BUILD/artifacts/NAME/ and its log is $FUZZ_BUILD/logs/NAME.log. Every run
# appends "name seconds executions cov ft" to $FUZZ_BUILD/stats.tsv; the totals per target
# are printed at the end (fuzz/README.md's table comes from them).
# Extra libFuzzer flags: FUZZ_FLAGS="-dict=... -max_len=...". FUZZ_FLAGS="-fork=1 -ignore_crashes=1"
# goes on after a finding (each is still written to artifacts/), for long unattended runs.
FUZZ_BUILD=${FUZZ_BUILD:-build-fuzz}
secs=$1; shift
cd "$(dirname "$0")/.." || exit 1
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1}
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$(pwd)/tests/lsan.supp}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
status=0
for t in "$@"; do
  bin=$FUZZ_BUILD/fuzz_$t
  [ -x "$bin" ] || { echo "fuzz $t: $bin is not built (make fuzz-build)"; status=1; continue; }
  mkdir -p "$FUZZ_BUILD/corpus/$t" "$FUZZ_BUILD/artifacts/$t" "$FUZZ_BUILD/logs"
  dirs="$FUZZ_BUILD/corpus/$t"
  [ -d "fuzz/corpus/$t" ] && dirs="$dirs fuzz/corpus/$t"
  [ -d "fuzz/regress/$t" ] && dirs="$dirs fuzz/regress/$t"
  log=$FUZZ_BUILD/logs/$t.log
  echo "fuzz $t: ${secs}s (log $log)"
  start=$(date +%s)
  # shellcheck disable=SC2086
  "$bin" -max_total_time="$secs" -timeout=20 -rss_limit_mb=2048 -max_len=8192 -print_final_stats=1 \
    -artifact_prefix="$FUZZ_BUILD/artifacts/$t/" $FUZZ_FLAGS $dirs >"$log" 2>&1
  rc=$?
  el=$(( $(date +%s) - start ))
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
  last=$(grep -E '^#[0-9]+.*cov: [0-9]+ ft: [0-9]+' "$log" | tail -n 1)
  # with -fork=N the parent prints no final stats; its "#N:" lines count every child's runs
  [ -z "$execs" ] && execs=$(echo "$last" | sed -n 's/^#\([0-9]*\).*/\1/p')
  cov=$(echo "$last" | sed -n 's/.*cov: \([0-9]*\).*/\1/p')
  ft=$(echo "$last" | sed -n 's/.* ft: \([0-9]*\).*/\1/p')
  printf '%s\t%s\t%s\t%s\t%s\n' "$t" "$el" "${execs:-0}" "${cov:-0}" "${ft:-0}" >>"$FUZZ_BUILD/stats.tsv"
  found=$(ls "$FUZZ_BUILD/artifacts/$t" 2>/dev/null | wc -l)
  if [ $rc -ne 0 ] || [ "$found" -gt 0 ]; then
    status=1
    echo "fuzz $t: FOUND something (exit $rc, $found inputs in $FUZZ_BUILD/artifacts/$t/):"
    grep -E 'ERROR|SUMMARY|fuzz finding|runtime error' "$log" | head -n 5 | sed 's/^/    /'
  else
    echo "fuzz $t: ${el}s, ${execs:-?} executions, cov ${cov:-?} ft ${ft:-?}"
  fi
done
echo "totals ($FUZZ_BUILD/stats.tsv): target seconds executions cov(max) ft(max)"
awk -F'\t' '{ s[$1] += $2; e[$1] += $3; if ($4 > c[$1]) c[$1] = $4; if ($5 > f[$1]) f[$1] = $5 }
  END { for (t in s) printf "  %-12s %6d s %10d execs  cov %5d  ft %6d\n", t, s[t], e[t], c[t], f[t] }' \
  "$FUZZ_BUILD/stats.tsv" | sort
exit $status
