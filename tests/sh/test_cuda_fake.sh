#!/bin/sh
# test_cuda_fake.sh — the CUDA tests under the fake CUDA driver: tests/lua/test_cuda_fake.lua
# and every tests/lua/cuda/test_*.lua. The driver is chosen once per process from
# LUTORCH_CUDA_DRIVER, before the backend module loads, and Lua cannot set the environment, so
# this wrapper exports it (tests/run.sh also runs test_cuda_fake.lua on its own, without a
# driver). The files under tests/lua/cuda/ run unchanged on a real GPU (tools/gpu_check.sh runs
# them with LUTORCH_CUDA_DRIVER unset). Run by tests/run.sh as `BUILD=dir sh
# tests/sh/test_cuda_fake.sh`; prints each file that fails, then "N passed, N failed".
BUILD=${BUILD:-build}
DRIVER=${LUTORCH_CUDA_DRIVER-fake}
cd "$(dirname "$0")/../.." || exit 1
log=$(mktemp)
trap 'rm -f "$log"' EXIT
tp=0; tf=0; ts=0
for f in tests/lua/test_cuda_fake.lua tests/lua/cuda/test_*.lua; do
  [ -f "$f" ] || continue
  LUTORCH_CUDA_DRIVER=$DRIVER LUA_PATH="tests/lua/?.lua;lib/?.lua;lib/?/init.lua;;" \
    timeout 300 "$BUILD/lutorch" "$f" >"$log" 2>&1
  rc=$?
  line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1)
  p=$(echo "$line" | sed -n 's/^\([0-9]*\) passed.*/\1/p'); p=${p:-0}
  n=$(echo "$line" | sed -n 's/.* \([0-9]*\) failed.*/\1/p'); n=${n:-0}
  s=$(echo "$line" | sed -n 's/.* \([0-9]*\) skipped.*/\1/p'); s=${s:-0}
  if [ -z "$line" ] || { [ $rc -ne 0 ] && [ "$n" -eq 0 ]; }; then n=$((n + 1)); fi
  if [ "$n" -ne 0 ]; then echo "FAIL $f:"; tail -n 30 "$log" | sed 's/^/    /'; fi
  grep '^SKIP' "$log"
  tp=$((tp + p)); tf=$((tf + n)); ts=$((ts + s))
done
echo "$tp passed, $tf failed, $ts skipped"
[ "$tf" -eq 0 ]
