#!/bin/sh
# test_serial_atomic.sh — torch.save replaces a file atomically: a child lutorch saving a big
# value is killed -9 midway, and the old file must still load intact (never a torn file).
# Run as `BUILD=dir sh tests/sh/test_serial_atomic.sh`; prints "N passed, N failed".
BUILD=${BUILD:-build}
cd "$(dirname "$0")/../.." || exit 1
case "$BUILD" in /*) ;; *) BUILD="$PWD/$BUILD" ;; esac
LT="$BUILD/lutorch"
passed=0; failed=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ok()   { passed=$((passed + 1)); }
bad()  { failed=$((failed + 1)); echo "FAIL $1" >&2; [ -n "${2:-}" ] && printf '  %s\n' "$2" >&2; }
check() { if [ "$2" = "$3" ]; then ok; else bad "$1" "expected [$2], got [$3]"; fi; }

f="$tmp/ckpt.lt"
"$LT" -e "torch.save('$f', {tag = 'old', x = torch.arange(0, 1000)})" </dev/null
check "the old file is written" "old	999" "$("$LT" -e "local v = torch.load('$f'); print(v.tag, v.x[1000])" </dev/null 2>&1)"

killed_mid=0
for round in 1 2 3; do
  # a child saving ~256 MB over and over; it says when the first save starts
  "$LT" -e "
    local big = {tag = 'new', x = torch.ones(64 * 1024 * 1024)}
    io.stderr:write('start\n'); io.stderr:flush()
    while true do torch.save('$f', big) end" </dev/null 2>"$tmp/child.err" &
  pid=$!
  i=0
  while ! grep -q start "$tmp/child.err" 2>/dev/null && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
  sleep 0.$((round * 2))
  # a temporary file beside the target means the kill lands inside a save
  ls "$tmp" | grep -q 'ckpt.lt.tmp' && killed_mid=$((killed_mid + 1))
  kill -9 $pid 2>/dev/null
  wait $pid 2>/dev/null
  out=$("$LT" -e "local v = torch.load('$f'); print(v.tag, v.x:numel())" </dev/null 2>&1)
  case "$out" in
    "old	1000"|"new	67108864") ok ;;
    *) bad "round $round: the file after kill -9 loads whole" "$out" ;;
  esac
  rm -f "$tmp"/ckpt.lt.tmp.*   # a killed process cannot remove its temporary file
done
if [ $killed_mid -gt 0 ]; then ok; else bad "at least one kill landed inside a save" "$killed_mid"; fi

# a failing save (a function in the value) leaves the old file and no temporary file
"$LT" -e "torch.save('$f', {tag = 'kept'})" </dev/null
"$LT" -e "pcall(torch.save, '$f', {tag = 'lost', f = print})" </dev/null
check "a failed save keeps the old file" "kept" "$("$LT" -e "print(torch.load('$f').tag)" </dev/null 2>&1)"
check "no temporary file after a failed save" "ckpt.lt" "$(ls "$tmp" | grep ckpt)"

# a file naming nn.Linear loads lutorch's nn library in a process that has not required it
export LUA_PATH="$PWD/lib/?.lua;$PWD/lib/?/init.lua;${LUA_PATH:-;}"
"$LT" -e "local nn = require 'nn'; torch.save('$tmp/m.lt', nn.Sequential(nn.Linear(2, 3)))" </dev/null
check "a saved module loads in a fresh process (nn required lazily)" "nil true Linear" \
  "$("$LT" -e "local before = package.loaded.nn; local m = torch.load('$tmp/m.lt'); print(before, package.loaded.nn ~= nil, m[1]:_get_name())" </dev/null 2>&1 | tr '\t' ' ')"

echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
