#!/bin/sh
# test_gen_check.sh — the op generator and the backends: `tools/gen.lua --check` reports every
# backend; a misspelt field, an unknown backend or the old `cpu =` field in a declaration stops
# gen.lua with a message naming the op and the field; the generated kernel tables compile
# (kernels_cuda.c too, which the library does not build) and reject a kernel of the wrong type;
# lt_ops.h declares no backend kernel; only src/cpu includes kernels_cpu.h.
# Run by tests/run.sh as `BUILD=dir sh tests/sh/test_gen_check.sh`; prints "N passed, N failed".
BUILD=${BUILD:-build}
cd "$(dirname "$0")/../.." || exit 1
LUA=${LUA:-lua5.4}
CC=${CC:-cc}
passed=0; failed=0; skipped=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

ok()  { passed=$((passed + 1)); }
bad() { failed=$((failed + 1)); echo "FAIL $1" >&2; [ -n "${2:-}" ] && printf '%s\n' "$2" | sed 's/^/  /' >&2; }
contains() { case "$3" in *"$2"*) ok ;; *) bad "$1" "[$3] does not contain [$2]" ;; esac; }
done_() {
  if [ "$skipped" -gt 0 ]; then echo "$passed passed, $failed failed, $skipped skipped"
  else echo "$passed passed, $failed failed"; fi
  [ "$failed" -eq 0 ]; exit
}

if ! command -v "$LUA" >/dev/null 2>&1; then
  echo "SKIP $LUA is not installed"; skipped=1; done_
fi

# -- --check: one report per backend, no output directory needed, exit status 0
out=$($LUA tools/gen.lua --check src/ops/*.lua 2>&1); rc=$?
if [ $rc -eq 0 ]; then ok; else bad "gen.lua --check exits 0" "rc=$rc: $out"; fi
for b in cpu cuda; do
  line=$(printf '%s\n' "$out" | grep "^$b: [0-9]* of [0-9]* ops lack a kernel")
  if [ -n "$line" ]; then ok; else bad "--check reports $b" "$out"; continue; fi
  # the count is the number of names listed under it (indented lines up to the next report)
  n=$(echo "$line" | sed 's/^[a-z]*: \([0-9]*\) .*/\1/')
  listed=$(printf '%s\n' "$out" | awk -v b="$b:" '$1 == b { on = 1; next } /^[^ ]/ { on = 0 } on' |
           tr ',' '\n' | grep -c '[a-z_]')
  if [ "$n" -eq "$listed" ]; then ok; else bad "--check $b: $n ops counted, $listed listed" "$out"; fi
done
contains "--check counts the device-neutral ops" "any: " "$out"
# a device-neutral (any) kernel counts for CUDA: view is not among the ops CUDA lacks
cuda_list=$(printf '%s\n' "$out" | awk '$1 == "cuda:" { on = 1; next } /^[^ ]/ { on = 0 } on' | tr ',' '\n' | tr -d ' ')
if printf '%s\n' "$cuda_list" | grep -qx view; then bad "view (an any kernel) is not missing on cuda" "$cuda_list"; else ok; fi

# -- declaration errors name the op and the field, and fail
bad_decl() {   # NAME DECL-FIELDS EXPECTED...
  name=$1; fields=$2; shift 2
  printf 'return { { "frob(Tensor self) -> Tensor", %s, doc = "x" } }\n' "$fields" >"$tmp/bad.lua"
  msg=$($LUA tools/gen.lua --check "$tmp/bad.lua" 2>&1); rc=$?
  if [ $rc -ne 0 ]; then ok; else bad "$name: gen.lua fails" "$msg"; fi
  for want in "$@"; do contains "$name: the message names $want" "$want" "$msg"; done
  # the same through the build's mode, with an output directory: nothing half-written matters
  mkdir -p "$tmp/out"
  if $LUA tools/gen.lua "$tmp/out" "$tmp/bad.lua" >/dev/null 2>&1; then bad "$name: gen.lua OUTDIR fails too"; else ok; fi
}
bad_decl "misspelt field" 'kernals = { cpu = "lt_cpu_frob" }' "op frob" "'kernals'"
bad_decl "unknown backend" 'kernels = { cdua = "lt_cuda_frob" }' "op frob" "'kernels'" "'cdua'"
bad_decl "old cpu field" 'cpu = "lt_cpu_frob"' "op frob" "field 'cpu' is now kernels = {cpu = ...}"
bad_decl "kernels on a composite" 'composite = "c_frob", kernels = { cpu = "k" }' "op frob" "'kernels'"
# a good one passes
printf 'return { { "frob(Tensor self) -> Tensor", kernels = { cuda = "lt_cuda_frob" }, doc = "x" } }\n' >"$tmp/good.lua"
msg=$($LUA tools/gen.lua --check "$tmp/good.lua" 2>&1)
contains "a CUDA-only op lacks a CPU kernel" "cpu: 1 of 1 ops lack a kernel:
  frob" "$msg"
contains "a CUDA-only op has its CUDA kernel" "cuda: 0 of 1 ops lack a kernel" "$msg"

# -- the generated files: both backends' tables compile, a wrong kernel type does not
mkdir -p "$tmp/gen"
if $LUA tools/gen.lua "$tmp/gen" src/ops/*.lua 2>"$tmp/gen.err"; then ok; else bad "gen.lua runs" "$(cat "$tmp/gen.err")"; fi
for f in kernels_cpu.h kernels_cpu.c kernels_cuda.h kernels_cuda.c lt_ops.h lt_ops.c lua_ops.c ops.md; do
  if [ -s "$tmp/gen/$f" ]; then ok; else bad "gen.lua writes $f"; fi
done
CCFLAGS="-std=gnu11 -D_GNU_SOURCE -Wall -Werror=incompatible-pointer-types -Werror=implicit-function-declaration -fsyntax-only"
for b in cpu cuda; do
  if err=$($CC $CCFLAGS -I"$tmp/gen" -Isrc "$tmp/gen/kernels_$b.c" 2>&1); then ok
  else bad "kernels_$b.c compiles" "$err"; fi
  contains "kernels_$b.c defines lt_${b}_kernel_table" "void *const lt_${b}_kernel_table[LT_NUM_OPS] = {" "$(cat "$tmp/gen/kernels_$b.c")"
done
if grep -q 'lt_cpu_' "$tmp/gen/lt_ops.h"; then bad "lt_ops.h declares no lt_cpu_ kernel" "$(grep -m 3 'lt_cpu_' "$tmp/gen/lt_ops.h")"
else ok; fi
contains "ops.md shows each op's kernels" "kernels: cpu ✓, cuda ✓" "$(cat "$tmp/gen/ops.md")"
# squeeze given view's kernel: the table's type check must reject it
sed 's/kernels = { any = "lt_strided_squeeze" }/kernels = { any = "lt_strided_view" }/' src/ops/shape.lua >"$tmp/shape.lua"
if grep -q lt_strided_view "$tmp/shape.lua" && [ "$(grep -c lt_strided_squeeze "$tmp/shape.lua")" -eq 0 ]; then ok
else bad "the test's wrong-kernel declaration is made"; fi
mkdir -p "$tmp/gen2"
$LUA tools/gen.lua "$tmp/gen2" $(ls src/ops/*.lua | grep -v '/shape\.lua$') "$tmp/shape.lua" 2>/dev/null
err=$($CC $CCFLAGS -I"$tmp/gen2" -Isrc "$tmp/gen2/kernels_cuda.c" 2>&1)
if [ $? -ne 0 ]; then ok; else bad "a kernel of the wrong type does not compile"; fi
contains "the error names the op's kernel type" "lt_squeeze_backend_fn" "$err"

# -- each backend includes its own kernels header (src/cpu kernels_cpu.h, src/cuda kernels_cuda.h);
# no layer above names a generated kernels header
leak=$(grep -rn '#include "kernels_[a-z]*\.h"' src include tests --include=*.c --include=*.h |
       grep -v '^src/cpu/[^:]*:[0-9]*:#include "kernels_cpu\.h"' | grep -v '^src/cuda/[^:]*:[0-9]*:#include "kernels_cuda\.h"' |
       grep -v '^src/metadev/[^:]*:[0-9]*:#include "kernels_meta\.h"')
if [ -z "$leak" ]; then ok; else bad "kernels_*.h included outside its backend" "$leak"; fi

done_
