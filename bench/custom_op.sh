#!/bin/sh
# custom_op.sh — what calling a custom op costs: a torch.library op with a Lua kernel and a
# C extension op, each against the built-in op doing the same work, on a 4-element tensor,
# one thread, pinned to one CPU, ROUNDS runs alternated; the median per figure and the
# ratios (targets: Lua op <= 2x its built-in, C extension op <= 1.1x).
# Usage: sh bench/custom_op.sh [BUILD] [ROUNDS]
BUILD=${1:-build}; ROUNDS=${2:-3}; CPU=${CPU:-1}; REPS=${REPS:-7}
export LUTORCH_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
OUT=$BUILD/bench/ext
LOG=$BUILD/bench/custom_op.txt
mkdir -p "$OUT"
make -s -C examples/extension PKG_CONFIG_PATH="$(cd "$BUILD" && pwd)" O="$(cd "$OUT" && pwd)" || exit 1
cc -O2 -fPIC -shared $(PKG_CONFIG_PATH="$BUILD" pkg-config --cflags lutorch) -o "$OUT/builtin_ext.so" tests/ext/relu_ext.c || exit 1
: > "$LOG"
for r in $(seq "$ROUNDS"); do
  LUA_PATH="examples/extension/?.lua;lib/?.lua;lib/?/init.lua;;" LUA_CPATH="$OUT/?.so;;" \
    taskset -c "$CPU" "$BUILD/lutorch" bench/custom_op.lua "$REPS" >> "$LOG" || exit 1
done
lscpu | sed -n 's/^Model name: *//p'
lua5.4 - "$LOG" <<'LUAEOF'
local fig = {}
for line in io.lines(arg[1]) do
  local name, ns = line:match("^(%S+) (%S+)$")
  fig[name] = fig[name] or {}
  table.insert(fig[name], tonumber(ns))
end
local function med(n) local t = fig[n]; table.sort(t); return t[(#t + 1) // 2] end
print("| call (4 floats) | ns/call | against | ratio | target |")
print("|---|---|---|---|---|")
local rows = { { "lua_op_scale", "builtin_mul", "<= 2x" }, { "c_ext_relu", "builtin_relu", "<= 1.1x" },
               { "c_ext_swish", "unfused_swish", "" } }
print(("| builtin mul | %.0f | | | |"):format(med("builtin_mul")))
print(("| builtin relu | %.0f | | | |"):format(med("builtin_relu")))
for _, r in ipairs(rows) do
  print(("| %s | %.0f | %s | %.2fx | %s |"):format(r[1], med(r[1]), r[2], med(r[1]) / med(r[2]), r[3]))
end
LUAEOF
