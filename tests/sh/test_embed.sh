#!/bin/sh
# test_embed.sh — examples/embed: a C program built with `pkg-config --cflags --libs lutorch`
# against the tree's build ($BUILD/lutorch.pc), run on a C array wrapped without copying.
# Its numbers are checked against numpy; also the release callback, errors as messages,
# and a static link with `pkg-config --static`.
# Run by tests/run.sh as `BUILD=dir sh tests/sh/test_embed.sh`; prints "N passed, N failed".
BUILD=${BUILD:-build}
cd "$(dirname "$0")/../.." || exit 1
ROOT=$PWD
case "$BUILD" in /*) ;; *) BUILD="$ROOT/$BUILD" ;; esac
passed=0; failed=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
TO="timeout 60"
ok()   { passed=$((passed + 1)); }
bad()  { failed=$((failed + 1)); echo "FAIL $1" >&2; [ -n "${2:-}" ] && printf '  %s\n' "$2" >&2; }
contains() { case "$3" in *"$2"*) ok ;; *) bad "$1" "[$3] does not contain [$2]" ;; esac; }
finish() { echo "$passed passed, $failed failed"; [ "$failed" -eq 0 ]; exit; }

if [ ! -f "$BUILD/lutorch.pc" ] || [ ! -f "$BUILD/liblutorch.so" ]; then
  bad "$BUILD/lutorch.pc and liblutorch.so are built"; finish
fi
export PKG_CONFIG_PATH="$BUILD"
# liblutorch.so finds the Lua libraries of the tree as $BUILD/../lib; a build dir elsewhere
# (BUILD=/tmp/...) needs LUA_PATH
unset LUA_PATH LUA_PATH_5_4 LUA_INIT LUA_INIT_5_4
[ "$(cd "$BUILD/.." && pwd -P)" = "$(pwd -P)" ] || export LUA_PATH="$ROOT/lib/?.lua;$ROOT/lib/?/init.lua;;"
# a sanitizer build (make asan): the example is built with the same sanitizers, which then
# check it too (leaks included, with ASAN_OPTIONS=detect_leaks=1)
SANFLAGS=""
if ldd "$BUILD/liblutorch.so" 2>/dev/null | grep -q libasan; then SANFLAGS="-fsanitize=address,undefined"; fi
cp examples/embed/embed.c examples/embed/model.lua examples/embed/Makefile "$tmp/"

# -- build with the example's own Makefile (pkg-config), with warnings as errors
if (cd "$tmp" && make -s CFLAGS="-O2 -Wall -Wextra -Werror $SANFLAGS" LDFLAGS="$SANFLAGS" >"$tmp/make.log" 2>&1); then ok
else bad "make in examples/embed" "$(cat "$tmp/make.log")"; finish; fi
out=$(cd "$tmp" && $TO ./embed model.lua 2>&1); rc=$?
if [ $rc -eq 0 ]; then ok; else bad "embed runs" "rc=$rc: $out"; fi

# -- the line the example documents: PKG_CONFIG_PATH as a make variable on the command line
# (GNU make 4.3 does not pass it to $(shell ...) by itself), not in the environment; and without
# it, a message that says what to give
mkdir -p "$tmp/cl"
if (cd "$tmp" && env -u PKG_CONFIG_PATH make -s O=cl PKG_CONFIG_PATH="$BUILD" CFLAGS="-O2 $SANFLAGS" \
      LDFLAGS="$SANFLAGS" >"$tmp/make-cl.log" 2>&1) && [ -x "$tmp/cl/embed" ]; then ok
else bad "make PKG_CONFIG_PATH=<build> builds the example" "$(cat "$tmp/make-cl.log")"; fi
o=$(cd "$tmp" && env -u PKG_CONFIG_PATH PKG_CONFIG_LIBDIR=/nonexistent make -s O=cl2 2>&1); rc=$?
[ $rc -ne 0 ] && ok || bad "make without lutorch.pc fails"
contains "make without lutorch.pc says what to give" "give PKG_CONFIG_PATH=" "$o"

# -- the numbers, against numpy computing the same model and gradients in float64
nums() { tr ' ;' '\n\n' | grep -E '^-?[0-9]+\.[0-9]{6}$'; }
echo "$out" | nums >"$tmp/got"
PYTHON=/usr/bin/python3   # Debian's, with python3-numpy (a pyenv python3 may lack it)
if $PYTHON -c 'import numpy' 2>/dev/null; then
  $PYTHON - >"$tmp/want" <<'PY'
import numpy as np
def lin(n, i): return np.linspace(-1, 1, n) * (0.5 / i)
w1 = lin(32, 1).reshape(8, 4); b1 = lin(8, 2); w2 = lin(24, 3).reshape(3, 8); b2 = lin(3, 4)
x = np.array([[1, 2, 3, 4], [0.5, -1, 0, 2]])
logits = np.tanh(x @ w1.T + b1) @ w2.T + b2
e = np.exp(logits - logits.max(1, keepdims=True)); p = e / e.sum(1, keepdims=True)
xc = np.array([[1, 2, 3], [-1, 0.5, 2]]); w = np.linspace(-0.5, 0.5, 6).reshape(3, 2)
h = np.tanh(xc @ w); g = 1 - h * h
vals = list(p.ravel()) + [logits.sum(), h.sum()] + list((xc.T @ g).ravel()) + list(g.sum(0))
print("\n".join("%.6f" % v for v in vals))
PY
  if [ "$(wc -l <"$tmp/want")" -eq 16 ] && [ "$(wc -l <"$tmp/got")" -eq 16 ] &&
     paste "$tmp/got" "$tmp/want" | awk '{ d = $1 - $2; if (d < 0) d = -d; if (d > 2e-5) exit 1 }'; then ok
  else bad "results match numpy" "got: $(tr '\n' ' ' <"$tmp/got") want: $(tr '\n' ' ' <"$tmp/want")"; fi
else
  echo "SKIP numpy not installed: numbers not checked"
fi
contains "result dtype and shape read back" "probabilities: float32 [2, 3]" "$out"
contains "a model parameter by path" "first layer weight: [8, 4]" "$out"

# -- the release callback: not while Lua holds the tensor, once the state closes
contains "callback not run while Lua holds the buffer" "released after C's release: no" "$out"
contains "callback run when the state closes" "input buffer released
released after close: yes" "$out"
n=$(echo "$out" | grep -c "input buffer released")
[ "$n" = 1 ] && ok || bad "release callback runs exactly once" "ran $n times"

# -- errors come back as messages, the program carries on
contains "a Lua error in a call is a message" "caught: (lutorch_dostring):1: matmul: self and other shapes cannot be multiplied" "$out"
contains "calling a missing function is a message" "caught: lutorch_call: 'no_such_function' is nil, not a function" "$out"
printf 'model = nil\nfunction predict(x)\n  return x:matmul(x)\nend\n' >"$tmp/badcall.lua"
o=$(cd "$tmp" && $TO ./embed badcall.lua 2>&1); rc=$?
[ $rc -eq 1 ] && ok || bad "error in the model: exit status 1" "rc=$rc"
contains "error in the model's function names the script line" "predict: badcall.lua:3: matmul:" "$o"
printf 'x = = 1\n' >"$tmp/syntax.lua"
o=$(cd "$tmp" && $TO ./embed syntax.lua 2>&1); rc=$?
[ $rc -eq 1 ] && ok || bad "syntax error: exit status 1" "rc=$rc"
contains "syntax error in the script is a message" "error: syntax.lua:1:" "$o"
o=$(cd "$tmp" && $TO ./embed missing.lua 2>&1)
contains "missing script is a message" "cannot open missing.lua" "$o"

# -- static link: liblutorch.a with the private dependencies from lutorch.pc
libdir=$(pkg-config --variable=libdir lutorch)
if cc -O2 $SANFLAGS $(pkg-config --cflags lutorch) -o "$tmp/embed_static" "$tmp/embed.c" "$libdir/liblutorch.a" \
     $(pkg-config --static --libs lutorch | sed 's/-llutorch//') >"$tmp/static.log" 2>&1; then ok
else bad "static link with pkg-config --static" "$(cat "$tmp/static.log")"; fi
if [ -x "$tmp/embed_static" ]; then
  if ldd "$tmp/embed_static" | grep -q liblutorch; then bad "static binary does not need liblutorch.so"; else ok; fi
  # a static binary has no liblutorch.so beside the Lua libraries to find them from:
  # it is told where they are, as lutorch(3) says
  o=$(cd "$tmp" && LUA_PATH="$ROOT/lib/?.lua;$ROOT/lib/?/init.lua;;" $TO ./embed_static model.lua 2>&1)
  [ "$o" = "$out" ] && ok || bad "static build prints the same" "$o"
fi
finish
