#!/bin/sh
# test_cpu_capability.sh — every build of the CPU kernels this machine runs gives the same
# answers (ARCHITECTURE.md, "CPU capability"): a representative part of the suite (the
# elementwise, reduction, nn, convolution, 16-bit and quantized test files) runs once per
# variant below the best with LUTORCH_CPU_CAPABILITY forcing it (the rest of make test runs
# the best one), and get_cpu_capability names each; forcing
# the default build also keeps the conversions and quantized products on their plain paths;
# a misspelt value warns and runs the best build. (The whole suite per variant is run by
# hand: `LUTORCH_CPU_CAPABILITY=avx2 make test`.)
# Run by tests/run.sh as `BUILD=dir sh tests/sh/test_cpu_capability.sh`; prints "N passed, N failed".
BUILD=${BUILD:-build}
cd "$(dirname "$0")/../.." || exit 1
LT="$BUILD/lutorch"
LUA_PATH="tests/lua/?.lua;lib/?.lua;lib/?/init.lua;;"; export LUA_PATH
unset LUTORCH_CPU_CAPABILITY
passed=0; failed=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
TO="timeout 600"
ok()  { passed=$((passed + 1)); }
bad() { failed=$((failed + 1)); echo "FAIL $1" >&2; [ -n "${2:-}" ] && printf '%s\n' "$2" | tail -n 20 | sed 's/^/  /' >&2; }
check()    { if [ "$2" = "$3" ]; then ok; else bad "$1" "expected [$2], got [$3]"; fi; }
contains() { case "$3" in *"$2"*) ok ;; *) bad "$1" "[$3] does not contain [$2]" ;; esac; }

if [ ! -x "$LT" ]; then bad "$LT is built"; echo "$passed passed, $failed failed"; exit 1; fi
caps=$("$LT" -e 'print(table.concat(torch.backends.cpu._capabilities(), " "))' </dev/null 2>&1)
best=$("$LT" -e 'print(torch.backends.cpu.get_cpu_capability())' </dev/null 2>&1)
[ -n "$caps" ] && ok || bad "torch.backends.cpu._capabilities() lists the builds this CPU runs"
top=$(echo "$caps" | awk '{ print toupper($NF) }')
check "unforced, the widest build this CPU runs is chosen" "$top" "$best"
echo "variants here: $caps"

FILES="test_elementwise test_reduce test_nn_ops test_nn_norm test_nn_conv test_half test_quant"
for cap in $caps; do
  up=$(echo "$cap" | tr a-z A-Z)
  out=$(LUTORCH_CPU_CAPABILITY=$cap "$LT" -e 'print(torch.backends.cpu.get_cpu_capability())' </dev/null 2>&1)
  check "LUTORCH_CPU_CAPABILITY=$cap is obeyed, silently" "$up" "$out"
  [ "$up" = "$best" ] && continue
  for f in $FILES; do
    LUTORCH_CPU_CAPABILITY=$cap $TO "$LT" "tests/lua/$f.lua" </dev/null >"$tmp/out" 2>&1; rc=$?
    line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$tmp/out" | tail -n 1)
    case "$line" in
      *" 0 failed"*) if [ $rc -eq 0 ]; then ok; echo "  $cap $f: $line"
                     else bad "$cap: $f exits $rc" "$(cat "$tmp/out")"; fi ;;
      *) bad "$cap: $f" "$(cat "$tmp/out")" ;;
    esac
  done
done

# the default build keeps the conversions and the quantized products on their plain paths
out=$(LUTORCH_CPU_CAPABILITY=default "$LT" -e '
  print(torch.backends.cpu.half_paths().convert,
        pcall(torch._int8_gemm_int32, torch.zeros(1, 1, { dtype = torch.int8 }),
              torch.zeros(1, 1, { dtype = torch.int8 }), { isa = "avx2" }))' </dev/null 2>&1)
contains "default: the portable conversions" "portable	false" "$out"
contains "default: the AVX2 quantized path refused, saying why" "CPU capability in use ('default')" "$out"

# a misspelt value: a warning naming it and the build used, then the program runs
out=$(LUTORCH_CPU_CAPABILITY=avx9 "$LT" -e 'print(torch.backends.cpu.get_cpu_capability())' </dev/null 2>&1)
contains "a misspelt LUTORCH_CPU_CAPABILITY warns" "warning: LUTORCH_CPU_CAPABILITY=avx9 is not one of default, avx2, avx512" "$out"
contains "and runs the best build" "
$best" "$out"
# upper case, as get_cpu_capability spells it, is accepted
out=$(LUTORCH_CPU_CAPABILITY=$best "$LT" -e 'print(torch.backends.cpu.get_cpu_capability())' </dev/null 2>&1)
check "LUTORCH_CPU_CAPABILITY=$best (upper case)" "$best" "$out"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
