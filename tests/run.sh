#!/bin/sh
# Runs every test: the C unit tests, then each Lua test file with lutorch.
# Every test program prints "N passed, N failed"; this adds them up and ends
# with the total on a line of its own.
BUILD=${BUILD:-build}
cd "$(dirname "$0")/.." || exit 1
total_p=0; total_f=0; total_s=0; bad=""
log=$(mktemp)
run() {
  name=$1; shift
  start=$(date +%s.%N)
  "$@" >"$log" 2>&1
  rc=$?
  line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1)
  p=$(echo "$line" | sed -n 's/^\([0-9]*\) passed.*/\1/p')
  f=$(echo "$line" | sed -n 's/.* \([0-9]*\) failed.*/\1/p')
  s=$(echo "$line" | sed -n 's/.* \([0-9]*\) skipped.*/\1/p')
  p=${p:-0}; f=${f:-0}; s=${s:-0}
  if [ -z "$line" ] || [ $rc -ne 0 ] && [ "$f" -eq 0 ]; then f=$((f + 1)); fi
  total_p=$((total_p + p)); total_f=$((total_f + f)); total_s=$((total_s + s))
  el=$(awk "BEGIN{printf \"%.1f\", $(date +%s.%N) - $start}")
  if [ "$f" -ne 0 ]; then
    bad="$bad $name"
    printf '%-40s %4d passed %4d failed  (%ss)\n' "$name" "$p" "$f" "$el"
    sed 's/^/    /' "$log" | tail -n 40
  else
    printf '%-40s %4d passed %4d failed  (%ss)\n' "$name" "$p" "$f" "$el"
  fi
  grep '^SKIP' "$log" | sed 's/^/    /'
}
for t in "$BUILD"/tests/test_*; do
  [ -x "$t" ] || continue
  run "c/$(basename "$t")" "$t"
done
for t in tests/lua/test_*.lua; do
  [ -f "$t" ] || continue
  run "lua/$(basename "$t" .lua)" env LUA_PATH="tests/lua/?.lua;lib/?.lua;lib/?/init.lua;;" "$BUILD/lutorch" "$t"
done
for t in tests/sh/test_*.sh; do
  [ -f "$t" ] || continue
  run "sh/$(basename "$t" .sh)" env BUILD="$BUILD" sh "$t"
done
rm -f "$log"
[ -n "$bad" ] && echo "failed:$bad"
if [ "$total_s" -gt 0 ]; then
  echo "$total_p passed, $total_f failed, $total_s skipped"
else
  echo "$total_p passed, $total_f failed"
fi
[ "$total_f" -eq 0 ]
