#!/bin/sh
# The fuzz targets' committed inputs (fuzz/README.md): every file of fuzz/corpus/NAME and
# fuzz/regress/NAME (each crash the fuzzers found, kept) replayed by $BUILD/fuzz/replay_NAME,
# the harness built with the ordinary compiler (make test-c; under make asan with the
# sanitizers). Then, where the clang targets are built (make fuzz-build), each runs for
# FUZZ_TEST_SECONDS (default 3) on a copy of its corpus; without them that part is skipped.
BUILD=${BUILD:-build}
cd "$(dirname "$0")/../.." || exit 1
pass=0; fail=0; skip=0
targets=$(ls fuzz/fuzz_*.c | sed 's|fuzz/fuzz_||; s|\.c$||' | grep -v '^lua$')
for t in $targets; do
  r=$BUILD/fuzz/replay_$t
  if [ ! -x "$r" ]; then echo "FAIL replay $t: $r is not built (make test-c)"; fail=$((fail + 1)); continue; fi
  dirs=""
  for d in fuzz/corpus/$t fuzz/regress/$t; do [ -d "$d" ] && dirs="$dirs $d"; done
  # shellcheck disable=SC2086
  out=$("$r" $dirs 2>&1)
  rc=$?
  if [ $rc -eq 0 ] && echo "$out" | grep -q "inputs replayed"; then
    echo "ok replay $t: $(echo "$out" | grep 'inputs replayed')"; pass=$((pass + 1))
  else
    echo "FAIL replay $t (exit $rc):"; echo "$out" | tail -n 20 | sed 's/^/    /'; fail=$((fail + 1))
  fi
done

FUZZ_BUILD=${FUZZ_BUILD:-build-fuzz}
secs=${FUZZ_TEST_SECONDS:-3}
if ! command -v clang >/dev/null 2>&1; then
  echo "SKIP short fuzz runs: no clang (make fuzz-build installs it and builds the targets)"; skip=1
elif [ ! -x "$FUZZ_BUILD/fuzz_ops" ]; then
  echo "SKIP short fuzz runs: the libFuzzer targets are not built (make fuzz-build, about 30 CPU-minutes)"; skip=1
else
  tmp=$(mktemp -d)
  export ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 LSAN_OPTIONS=suppressions=$(pwd)/tests/lsan.supp
  for t in $targets; do
    b=$FUZZ_BUILD/fuzz_$t
    [ -x "$b" ] || { echo "FAIL fuzz $t: $b is not built (make fuzz-build)"; fail=$((fail + 1)); continue; }
    mkdir -p "$tmp/$t"
    cp fuzz/corpus/$t/* "$tmp/$t/" 2>/dev/null
    if "$b" -max_total_time="$secs" -timeout=20 -rss_limit_mb=2048 -max_len=8192 \
         -artifact_prefix="$tmp/$t-" "$tmp/$t" >"$tmp/$t.log" 2>&1; then
      echo "ok fuzz $t: ${secs}s, $(grep -E '^#[0-9]+' "$tmp/$t.log" | tail -n 1 | cut -c1-60)"; pass=$((pass + 1))
    else
      echo "FAIL fuzz $t: a finding (log below; the input is $tmp/$t-crash-*)"
      grep -E 'ERROR|SUMMARY|fuzz finding|runtime error' "$tmp/$t.log" | head -n 5 | sed 's/^/    /'
      fail=$((fail + 1))
    fi
  done
  [ $fail -eq 0 ] && rm -rf "$tmp"
  # the allocation-failure sweep under the sanitizers (Makefile, "alloc-fail")
  if [ -x "$FUZZ_BUILD/test_alloc_fail" ]; then
    if "$FUZZ_BUILD/test_alloc_fail" >"$FUZZ_BUILD/alloc_fail.log" 2>&1; then
      echo "ok alloc-fail under ASan/LSan: $(tail -n 1 "$FUZZ_BUILD/alloc_fail.log")"; pass=$((pass + 1))
    else
      echo "FAIL alloc-fail under ASan/LSan (log $FUZZ_BUILD/alloc_fail.log):"
      grep -E 'FAIL|ERROR|SUMMARY|passed' "$FUZZ_BUILD/alloc_fail.log" | head -n 8 | sed 's/^/    /'
      fail=$((fail + 1))
    fi
  fi
fi
if [ $skip -gt 0 ]; then echo "$pass passed, $fail failed, $skip skipped"; else echo "$pass passed, $fail failed"; fi
[ $fail -eq 0 ]
