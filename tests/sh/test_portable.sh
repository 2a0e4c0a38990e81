#!/bin/sh
# test_portable.sh — the default build runs on CPUs older than the build machine's
# (ARCHITECTURE.md, "CPU capability"): under QEMU's user-mode emulation of a Haswell (AVX2,
# no AVX-512) and of a Nehalem (x86-64-v2, no AVX), the program prints, picks the kernels that
# CPU runs, computes elementwise ops, reductions, a convolution and 16-bit casts right, an
# example runs briefly, and the stock lua5.4 loads torch.so; asking for more than the emulated
# CPU has warns and falls back instead of dying on an illegal instruction.
# Skipped where qemu-user (qemu-x86_64, Debian's qemu-user) is not installed, the host is not
# x86-64, or the build targets this machine alone (make OPT=-march=native: no variants).
# Run by tests/run.sh as `BUILD=dir sh tests/sh/test_portable.sh`; prints "N passed, N failed".
BUILD=${BUILD:-build}
cd "$(dirname "$0")/../.." || exit 1
ROOT=$PWD
case "$BUILD" in /*) ;; *) BUILD="$ROOT/$BUILD" ;; esac
LT="$BUILD/lutorch"
LUA_PATH="$ROOT/lib/?.lua;$ROOT/lib/?/init.lua;;"; export LUA_PATH
unset LUTORCH_CPU_CAPABILITY
passed=0; failed=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ok()  { passed=$((passed + 1)); }
bad() { failed=$((failed + 1)); echo "FAIL $1" >&2; [ -n "${2:-}" ] && printf '%s\n' "$2" | tail -n 15 | sed 's/^/  /' >&2; }
check()    { if [ "$2" = "$3" ]; then ok; else bad "$1" "expected [$2], got [$3]"; fi; }
contains() { case "$3" in *"$2"*) ok ;; *) bad "$1" "[$3] does not contain [$2]" ;; esac; }
finish()   { echo "$passed passed, $failed failed"; [ "$failed" -eq 0 ]; exit; }

QEMU=$(command -v qemu-x86_64 2>/dev/null)
if [ -z "$QEMU" ]; then echo "SKIP qemu-x86_64 not found (Debian: qemu-user)"; finish; fi
if [ "$(uname -m)" != x86_64 ]; then echo "SKIP not an x86-64 host"; finish; fi
if [ ! -x "$LT" ]; then bad "$LT is built"; finish; fi
caps=$("$LT" -e 'print(table.concat(torch.backends.cpu._capabilities(), " "))' </dev/null 2>&1)
case " $caps " in
  *" default "*) ;;
  *) echo "SKIP $BUILD has no default kernels (built with -march=native: not portable)"; finish ;;
esac
# the emulated CPU's warnings about host features it leaves out go to $tmp/qemu.err
TO="timeout 300"
emu() { cpu=$1; shift; $TO "$QEMU" -cpu "$cpu" "$@" 2>>"$tmp/qemu.err"; }
emu2() { cpu=$1; shift; $TO "$QEMU" -cpu "$cpu" "$@" 2>&1 | grep -v '^qemu-x86_64: warning: TCG'; }

# what a little of everything computes, with its answer checked in Lua (prints ok or why not)
cat >"$tmp/smoke.lua" <<'LUA'
local x = torch.arange(1, 65, { dtype = torch.float32 }):reshape(8, 8)   -- x[r][c] = (r-1)*8 + c
local function conv_ref()   -- a 3x3 box filter over x, summed
  local s = 0
  for i = 1, 6 do for j = 1, 6 do for a = 0, 2 do for b = 0, 2 do s = s + (i + a - 1) * 8 + j + b end end end end
  return s
end
local function pool_ref()   -- 2x2 max pooling: each window's bottom-right element
  local s = 0
  for i = 1, 4 do for j = 1, 4 do s = s + (2 * i - 1) * 8 + 2 * j end end
  return s
end
local checks = {
  { "add", (x + x):sum():item() == 2 * 2080 },
  { "exp/log", ((x / 64):exp():log() - x / 64):abs():max():item() < 1e-6 },
  { "sum over dim", x:sum(2)[8] == 484 },
  { "softmax", math.abs(torch.softmax(x, 2):sum():item() - 8) < 1e-5 },
  { "conv2d", torch.nn.functional.conv2d(x:reshape(1, 1, 8, 8), torch.ones(1, 1, 3, 3)):sum():item() == conv_ref() },
  { "max_pool2d", torch.nn.functional.max_pool2d(x:reshape(1, 1, 8, 8), 2):sum():item() == pool_ref() },
  { "bfloat16", x:to(torch.bfloat16):to(torch.float32):eq(x):all():item() },
  { "float16", x:to(torch.float16):to(torch.float32):eq(x):all():item() },
  { "matmul", (x:mm(torch.eye(8)) - x):abs():max():item() == 0 },
}
local bad = {}
for _, c in ipairs(checks) do if not c[2] then bad[#bad + 1] = c[1] end end
print(#bad == 0 and "ok" or ("wrong: " .. table.concat(bad, ", ")))
LUA

for cpu in Haswell Nehalem; do
  want=AVX2; [ "$cpu" = Nehalem ] && want=DEFAULT
  out=$(emu $cpu "$LT" -e 'print(1)' </dev/null)
  check "$cpu: the program prints" "1" "$out"
  out=$(emu $cpu "$LT" -e 'print(torch.backends.cpu.get_cpu_capability())' </dev/null)
  check "$cpu: the kernels picked" "$want" "$out"
  out=$(emu $cpu "$LT" "$tmp/smoke.lua" </dev/null)
  check "$cpu: elementwise, reductions, softmax, conv, 16-bit casts, matmul" "ok" "$out"
  # more than the CPU has: a warning naming the variable, then the best it runs
  out=$(LUTORCH_CPU_CAPABILITY=avx512 emu2 $cpu "$LT" -e 'print(torch.backends.cpu.get_cpu_capability())' </dev/null)
  contains "$cpu: LUTORCH_CPU_CAPABILITY=avx512 warns" "warning: LUTORCH_CPU_CAPABILITY=avx512, but this CPU lacks AVX-512" "$out"
  contains "$cpu: and falls back" "
$want" "$out"
done

# an example, briefly, on the AVX2 machine
out=$(cd "$tmp" && emu Haswell "$LT" "$ROOT/examples/regression.lua" --steps 20 --out "$tmp/regression" </dev/null)
contains "Haswell: examples/regression.lua runs" "least squares (exact)" "$out"

# the stock interpreter with the module, as a luarocks install gives it
if command -v lua5.4 >/dev/null 2>&1 && [ -f "$BUILD/torch.so" ]; then
  out=$(LUA_CPATH="$BUILD/?.so;;" emu Haswell "$(command -v lua5.4)" \
        -e 'local torch = require "torch"; print(torch.ones(3):sum():item(), torch.backends.cpu.get_cpu_capability())' </dev/null)
  check "Haswell: lua5.4 -e 'require \"torch\"'" "3.0	AVX2" "$out"
else
  echo "SKIP lua5.4 or $BUILD/torch.so not found"
fi
finish
