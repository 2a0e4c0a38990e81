#!/bin/sh
# test_extension.sh — C extensions (include/lutorch/extension.h): examples/extension built
# with its own Makefile against the tree's build ($BUILD/lutorch.pc), plus
# tests/ext/relu_ext.c (the built-in relu re-declared through the API); both required from
# build/lutorch, from a stock lua5.4 (with torch.so) and from an embedding program; a model
# using the extension saved in one process and loaded in another that requires it.
# Run by tests/run.sh as `BUILD=dir sh tests/sh/test_extension.sh`; prints "N passed, N failed".
BUILD=${BUILD:-build}
cd "$(dirname "$0")/../.." || exit 1
ROOT=$PWD
case "$BUILD" in /*) ;; *) BUILD="$ROOT/$BUILD" ;; esac
passed=0; failed=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
TO="timeout 120"
ok()   { passed=$((passed + 1)); }
bad()  { failed=$((failed + 1)); echo "FAIL $1" >&2; [ -n "${2:-}" ] && printf '  %s\n' "$2" >&2; }
contains() { case "$3" in *"$2"*) ok ;; *) bad "$1" "[$3] does not contain [$2]" ;; esac; }
finish() { echo "$passed passed, $failed failed"; [ "$failed" -eq 0 ]; exit; }

if [ ! -f "$BUILD/lutorch.pc" ] || [ ! -f "$BUILD/liblutorch.so" ] || [ ! -f "$BUILD/torch.so" ]; then
  bad "$BUILD/lutorch.pc, liblutorch.so and torch.so are built"; finish
fi
export PKG_CONFIG_PATH="$BUILD"
unset LUA_INIT LUA_INIT_5_4
# a sanitizer build (make asan): the extensions get the same sanitizers
SANFLAGS=""
if ldd "$BUILD/liblutorch.so" 2>/dev/null | grep -q libasan; then SANFLAGS="-fsanitize=address,undefined"; fi

# -- the example, with its own Makefile (pkg-config), warnings as errors
if make -s -C examples/extension O="$tmp" CFLAGS="-O2 -Wall -Wextra -Werror $SANFLAGS" LDFLAGS="$SANFLAGS" \
     >"$tmp/make.log" 2>&1; then ok
else bad "make in examples/extension" "$(cat "$tmp/make.log")"; finish; fi
# -- the re-declared built-in, the way the example's Makefile builds a module
if cc -O2 -Wall -Wextra -Werror $SANFLAGS -fPIC -shared $(pkg-config --cflags lutorch) \
     -o "$tmp/builtin_ext.so" tests/ext/relu_ext.c >"$tmp/cc.log" 2>&1; then ok
else bad "cc tests/ext/relu_ext.c" "$(cat "$tmp/cc.log")"; finish; fi
# the module leaves the core's symbols to its host: no liblutorch of its own
if ldd "$tmp/swish_ext.so" 2>/dev/null | grep -q liblutorch; then bad "swish_ext.so does not link liblutorch"; else ok; fi

# lua5.4 itself is not sanitized: under a sanitizer build the runtime comes first, preloaded
LUA54="lua5.4"
asan=$(ldd "$BUILD/torch.so" 2>/dev/null | awk '/libasan/ { print $3 }')
[ -n "$asan" ] && LUA54="env LD_PRELOAD=$asan${LD_PRELOAD:+:$LD_PRELOAD} lua5.4"

LP="$ROOT/tests/lua/?.lua;$ROOT/examples/extension/?.lua;$ROOT/lib/?.lua;$ROOT/lib/?/init.lua;;"
CP="$tmp/?.so;;"

# -- from the lutorch program
out=$(LUA_PATH="$LP" LUA_CPATH="$CP" $TO "$BUILD/lutorch" tests/ext/ext_checks.lua 2>&1); rc=$?
if [ $rc -eq 0 ]; then ok; else bad "ext_checks.lua under build/lutorch" "rc=$rc: $out"; fi
contains "ext_checks.lua under build/lutorch ran every test" " 0 failed" "$out"

# -- from a stock lua5.4, which loads torch.so itself
if command -v lua5.4 >/dev/null 2>&1; then
  out=$(LUA_PATH="$LP" LUA_CPATH="$BUILD/?.so;$CP" $TO $LUA54 tests/ext/ext_checks.lua 2>&1); rc=$?
  if [ $rc -eq 0 ]; then ok; else bad "ext_checks.lua under lua5.4" "rc=$rc: $out"; fi
  # require "swish_ext" before require "torch" says what is missing rather than crashing
  out=$(LUA_PATH="$LP" LUA_CPATH="$CP" $TO $LUA54 -e 'print(pcall(require, "swish_ext"))' 2>&1)
  contains "lua5.4: the extension without torch fails cleanly" "false" "$out"
else
  echo "SKIP lua5.4 checks: no lua5.4"
fi

# -- from a program embedding lutorch (examples/extension/embed_swish.c)
out=$(cd "$tmp" && LUA_PATH="$LP" $TO ./embed_swish "$tmp" 2>&1); rc=$?
if [ $rc -eq 0 ]; then ok; else bad "embed_swish runs" "rc=$rc: $out"; fi
contains "embed_swish: Lua and C calls agree" "embed: ok" "$out"

# -- a saved model that uses the extension loads where the extension is required
out=$(LUA_PATH="$LP" LUA_CPATH="$CP" $TO "$BUILD/lutorch" tests/ext/ext_save.lua "$tmp/net.lt" 2>&1)
contains "ext_save.lua saves" "saved" "$out"
out=$(LUA_PATH="$LP" LUA_CPATH="$CP" $TO "$BUILD/lutorch" tests/ext/ext_load.lua "$tmp/net.lt" 2>&1)
contains "ext_load.lua loads in another process" "loaded: same output" "$out"
if command -v lua5.4 >/dev/null 2>&1; then
  out=$(LUA_PATH="$LP" LUA_CPATH="$BUILD/?.so;$CP" $TO $LUA54 tests/ext/ext_load.lua "$tmp/net.lt" 2>&1)
  contains "ext_load.lua loads under lua5.4" "loaded: same output" "$out"
fi
# without the extension's class the load says which class is missing
out=$(LUA_PATH="$LP" LUA_CPATH="$CP" $TO "$BUILD/lutorch" -e "print(pcall(torch.load, '$tmp/net.lt'))" 2>&1)
contains "loading without the extension names the class" "Swish" "$out"

finish
