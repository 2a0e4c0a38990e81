#!/bin/sh
# Runs every test: the C unit tests, each Lua test file with lutorch, and the
# shell tests. Every test program prints "N passed, N failed"; this adds them
# up and ends with the total on a line of its own.
#
# The files are independent processes, so they run TEST_JOBS at a time
# (default: the number of CPUs, at most 4): on CI's two cores that halves the
# suite's wall time. A file's lines appear when it ends; a failing file's log
# (its last 40 lines) is printed again, after the summary. TEST_JOBS=1 runs
# them one after another, in order, as before.
BUILD=${BUILD:-build}
cd "$(dirname "$0")/.." || exit 1
export BUILD
lua_path="tests/lua/?.lua;lib/?.lua;lib/?/init.lua;;"

if [ -z "$TEST_JOBS" ]; then
  TEST_JOBS=$(nproc 2>/dev/null || echo 1)
  [ "$TEST_JOBS" -gt 4 ] && TEST_JOBS=4
fi

# one test: runs it with its log in $logs/NAME.log, writes "p f s rc seconds" to
# $logs/NAME.res, prints its summary line
if [ "$1" = "--one" ]; then
  logs=$2; name=$3; shift 3
  key=$(echo "$name" | tr '/' '_')
  start=$(date +%s.%N)
  "$@" >"$logs/$key.log" 2>&1
  rc=$?
  line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$logs/$key.log" | tail -n 1)
  p=$(echo "$line" | sed -n 's/^\([0-9]*\) passed.*/\1/p')
  f=$(echo "$line" | sed -n 's/.* \([0-9]*\) failed.*/\1/p')
  s=$(echo "$line" | sed -n 's/.* \([0-9]*\) skipped.*/\1/p')
  p=${p:-0}; f=${f:-0}; s=${s:-0}
  # no summary line, or a non-zero exit with nothing failed: the file itself failed
  if [ -z "$line" ] || { [ $rc -ne 0 ] && [ "$f" -eq 0 ]; }; then f=$((f + 1)); fi
  el=$(awk "BEGIN{printf \"%.1f\", $(date +%s.%N) - $start}")
  echo "$p $f $s $rc $el" >"$logs/$key.res"
  { printf '%-40s %4d passed %4d failed  (%ss)\n' "$name" "$p" "$f" "$el"
    grep '^SKIP' "$logs/$key.log" | sed 's/^/    /'; } >"$logs/$key.out"
  cat "$logs/$key.out"
  exit 0
fi

logs=$(mktemp -d)
list="$logs/list"
: >"$list"
# one line per test: NAME<TAB>command words (no word contains a space)
# the shell tests first: they are the longest, and starting them early packs the jobs best
for t in tests/sh/test_*.sh; do
  [ -f "$t" ] || continue
  printf 'sh/%s\tsh %s\n' "$(basename "$t" .sh)" "$t" >>"$list"
done
for t in "$BUILD"/tests/test_*; do
  [ -x "$t" ] || continue
  printf 'c/%s\t%s\n' "$(basename "$t")" "$t" >>"$list"
done
for t in tests/lua/test_*.lua; do
  [ -f "$t" ] || continue
  printf 'lua/%s\tenv LUA_PATH=%s %s %s\n' "$(basename "$t" .lua)" "$lua_path" "$BUILD/lutorch" "$t" >>"$list"
done

tr '\t' ' ' <"$list" | xargs -P "$TEST_JOBS" -L 1 sh "$0" --one "$logs"

total_p=0; total_f=0; total_s=0; bad=""
while IFS="$(printf '\t')" read -r name cmd; do
  key=$(echo "$name" | tr '/' '_')
  if [ ! -f "$logs/$key.res" ]; then
    bad="$bad $name"; total_f=$((total_f + 1)); continue
  fi
  read -r p f s rc el <"$logs/$key.res"
  total_p=$((total_p + p)); total_f=$((total_f + f)); total_s=$((total_s + s))
  if [ "$f" -ne 0 ]; then
    bad="$bad $name"
    echo "---- $name (exit $rc):"
    tail -n 40 "$logs/$key.log" | sed 's/^/    /'
  fi
done <"$list"
rm -rf "$logs"
[ -n "$bad" ] && echo "failed:$bad"
if [ "$total_s" -gt 0 ]; then
  echo "$total_p passed, $total_f failed, $total_s skipped"
else
  echo "$total_p passed, $total_f failed"
fi
[ "$total_f" -eq 0 ]
