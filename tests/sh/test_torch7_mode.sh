#!/bin/sh
# test_torch7_mode.sh — Torch7 mode (lutorch-torch7(7)). The mode is chosen once per Lua
# state before any tensor exists, so each check is its own process: the Lua tests of
# tests/lua/torch7/ under `lutorch --torch7`, the same switch through LUTORCH_COMPAT=torch7,
# torch.compat("torch7") before the first tensor, require "torch.torch7" from a stock lua5.4,
# and lutorch_set_compat from C. Run by tests/run.sh as `BUILD=dir sh
# tests/sh/test_torch7_mode.sh`; prints "N passed, N failed".
BUILD=${BUILD:-build}
cd "$(dirname "$0")/../.." || exit 1
ROOT=$PWD
case "$BUILD" in /*) ;; *) BUILD="$ROOT/$BUILD" ;; esac
passed=0; failed=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ok()   { passed=$((passed + 1)); }
bad()  { failed=$((failed + 1)); echo "FAIL $1" >&2; [ -n "${2:-}" ] && printf '  %s\n' "$2" >&2; }
same() { if [ "$2" = "$3" ]; then ok; else bad "$1" "got [$2], expected [$3]"; fi; }
export LUA_PATH="$ROOT/tests/lua/?.lua;$ROOT/lib/?.lua;$ROOT/lib/?/init.lua;;"
unset LUTORCH_COMPAT LUA_INIT LUA_INIT_5_4

# -- the Lua tests under --torch7: their own counts add up here
for f in tests/lua/torch7/test_*.lua; do
  out=$(timeout 300 "$BUILD/lutorch" --torch7 "$f" 2>&1); rc=$?
  line=$(echo "$out" | grep -E '^[0-9]+ passed, [0-9]+ failed' | tail -n 1)
  p=$(echo "$line" | sed -n 's/^\([0-9]*\) passed.*/\1/p'); p=${p:-0}
  n=$(echo "$line" | sed -n 's/.* \([0-9]*\) failed.*/\1/p'); n=${n:-0}
  if [ -z "$line" ] || { [ $rc -ne 0 ] && [ "$n" -eq 0 ]; }; then n=$((n + 1)); fi
  [ "$n" -ne 0 ] && { echo "FAIL $f:" >&2; echo "$out" | tail -n 30 | sed 's/^/    /' >&2; }
  passed=$((passed + p)); failed=$((failed + n))
done

code='local x = torch.Tensor({1, 2}); x:add(1); io.write(torch.compat(), " ", x:type(), " ", x:sum())'
# -- the switches
same "lutorch --torch7" "$(timeout 60 "$BUILD/lutorch" --torch7 -e "$code" 2>&1)" "torch7 torch.DoubleTensor 5"
same "LUTORCH_COMPAT=torch7" "$(LUTORCH_COMPAT=torch7 timeout 60 "$BUILD/lutorch" -e "$code" 2>&1)" "torch7 torch.DoubleTensor 5"
same "torch.compat('torch7') first" "$(timeout 60 "$BUILD/lutorch" -e "torch.compat('torch7') $code" 2>&1)" "torch7 torch.DoubleTensor 5"
same "PyTorch mode by default" "$(timeout 60 "$BUILD/lutorch" -e 'local x = torch.tensor({1.0, 2.0}); x:add(1); io.write(torch.compat(), " ", x[1])' 2>&1)" "pytorch 1"
same "LUTORCH_COMPAT=pytorch" "$(LUTORCH_COMPAT=pytorch timeout 60 "$BUILD/lutorch" -e 'io.write(torch.compat())' 2>&1)" "pytorch"
out=$(timeout 60 "$BUILD/lutorch" -e 'local x = torch.zeros(1); torch.compat("torch7")' 2>&1)
case "$out" in *"compat: Torch7 mode must be chosen before any tensor is made"*) ok ;; *) bad "switch after a tensor" "$out" ;; esac
# a script's own --torch7 argument is the script's
same "--torch7 after the script" "$(cd "$tmp" && echo 'io.write(torch.compat(), " ", arg[1])' >s.lua && timeout 60 "$BUILD/lutorch" s.lua --torch7 2>&1)" "pytorch --torch7"

# a sanitizer build (make asan): the embedding check is built with the same sanitizers, and the
# stock lua5.4 cannot load a sanitized torch.so, so that part is skipped
SANFLAGS=""; skipped=0
if ldd "$BUILD/liblutorch.so" 2>/dev/null | grep -q libasan; then SANFLAGS="-fsanitize=address,undefined"; fi

# -- a stock lua5.4 with torch.so
if [ -n "$SANFLAGS" ]; then
  echo "SKIP lua5.4 + torch.so: a sanitizer build of torch.so cannot load into the uninstrumented lua5.4"
  skipped=$((skipped + 1))
elif command -v lua5.4 >/dev/null 2>&1 && [ -f "$BUILD/torch.so" ]; then
  same 'lua5.4: require "torch.torch7"' \
    "$(cd "$tmp" && LUA_CPATH="$BUILD/?.so;;" timeout 60 lua5.4 -e "require 'torch.torch7' $code" 2>&1)" "torch7 torch.DoubleTensor 5"
  same 'lua5.4: require "torch" stays PyTorch' \
    "$(cd "$tmp" && LUA_CPATH="$BUILD/?.so;;" timeout 60 lua5.4 -e "require 'torch' io.write(torch.compat())" 2>&1)" "pytorch"
fi

# -- embedding: lutorch_set_compat before the first tensor
if [ -f "$BUILD/liblutorch.so" ]; then
  cat >"$tmp/e.c" <<'C'
#include <stdio.h>
#include "lutorch.h"
int main(void) {
  lua_State *L = lutorch_open();
  if (!L) { printf("open: %s\n", lutorch_last_error()); return 1; }
  if (lutorch_set_compat(L, "nonsense") == 0) { printf("accepted nonsense\n"); return 1; }
  printf("%s|", lutorch_last_error());
  if (lutorch_set_compat(L, "torch7") < 0) { printf("set: %s\n", lutorch_last_error()); return 1; }
  lt_tensor *t = lutorch_eval(L, "local x = torch.Tensor({1, 2}); x:add(1); return x");
  if (!t) { printf("eval: %s\n", lutorch_last_error()); return 1; }
  if (lutorch_dostring(L, "assert(torch.compat() == 'torch7')") < 0) { printf("%s\n", lutorch_last_error()); return 1; }
  lt_tensor_release(t);
  printf("ok\n");
  lutorch_close(L);
  return 0;
}
C
  if cc -O1 $SANFLAGS -I"$ROOT/include" -I"$BUILD/include" "$tmp/e.c" -o "$tmp/e" -L"$BUILD" -llutorch -Wl,-rpath,"$BUILD" $(pkg-config --libs lua5.4 2>/dev/null) >"$tmp/cc.log" 2>&1; then
    same "lutorch_set_compat" "$(timeout 60 "$tmp/e" 2>&1)" \
      "lutorch_set_compat: argument 'mode' must be \"pytorch\" or \"torch7\", got 'nonsense'|ok"
  else
    bad "build the embedding check" "$(cat "$tmp/cc.log")"
  fi
fi

echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
