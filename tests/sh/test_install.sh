#!/bin/sh
# test_install.sh — `make install DESTDIR=... PREFIX=/usr/local` from $BUILD, then the installed
# tree used as users would: the program, the stock lua5.4 with torch.so, `require "nn"`,
# pkg-config building examples/embed, the header on its own, the man pages, torch.help; and
# `make uninstall` leaving no files.
# The install is not in /usr/local, so the installed program, torch.so and liblutorch.so find
# the Lua libraries relative to themselves (PREFIX/share/lua/5.4 from bin/, lib/ and
# lib/lua/5.4): no LUA_PATH is set except where stock lua5.4 must find `nn` before torch.so.
# Run by tests/run.sh as `BUILD=dir sh tests/sh/test_install.sh`; prints "N passed, N failed".
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
check() { if [ "$2" = "$3" ]; then ok; else bad "$1" "expected [$2], got [$3]"; fi; }
contains() { case "$3" in *"$2"*) ok ;; *) bad "$1" "[$3] does not contain [$2]" ;; esac; }
finish() { echo "$passed passed, $failed failed"; [ "$failed" -eq 0 ]; exit; }

# a sanitizer build (make asan): the shared library is linked, and the example built, with
# the same sanitizers; the stock lua5.4 cannot load a sanitized torch.so and is skipped
SANFLAGS=""
if ldd "$BUILD/liblutorch.so" 2>/dev/null | grep -q libasan; then SANFLAGS="-fsanitize=address,undefined"; fi
D="$tmp/dest"; P="$D/usr/local"
if ${MAKE:-make} -s BUILD="$BUILD" SAN="$SANFLAGS" install DESTDIR="$D" PREFIX=/usr/local >"$tmp/install.log" 2>&1; then ok
else bad "make install" "$(tail -20 "$tmp/install.log")"; finish; fi
for f in bin/lutorch lib/liblutorch.a lib/liblutorch.so lib/liblutorch.so.0 lib/lua/5.4/torch.so \
         include/lutorch.h include/lutorch/lt_ops.h include/lutorch/core/tensor.h \
         include/lutorch/autograd/autograd.h lib/pkgconfig/lutorch.pc share/lua/5.4/nn/init.lua \
         share/lua/5.4/optim/init.lua share/lua/5.4/data/init.lua share/lutorch/man/nn.md; do
  [ -e "$P/$f" ] && ok || bad "installed: $f"
done
for f in man/*.1 man/*.3 "$BUILD"/man/*.7; do
  [ -f "$f" ] || continue
  s=${f##*.}; [ -f "$P/share/man/man$s/${f##*/}" ] && ok || bad "man page installed: ${f##*/}"
done
[ -f "$P/share/man/man3/lutorch.3" ] && ok || bad "lutorch(3) installed"

# nothing from the source tree or the cwd may be found: run in an empty folder, no LUA_PATH
mkdir "$tmp/cwd" && cd "$tmp/cwd" || exit 1
unset LUA_PATH LUA_CPATH LUA_PATH_5_4 LUA_CPATH_5_4 LUA_INIT LUA_INIT_5_4 LUTORCH_INIT

# -- the installed program
out=$($TO "$P/bin/lutorch" -e 'print(torch.ones(2):sum():item())' </dev/null 2>&1)
check "installed lutorch runs" "2.0" "$out"
out=$($TO "$P/bin/lutorch" -e 'local nn = require "nn"; print(package.searchpath("nn", package.path), nn.Linear(2, 3).weight.shape[1])' </dev/null 2>&1)
check "installed lutorch finds the installed nn" "$P/bin/../share/lua/5.4/nn/init.lua	3" "$out"
out=$($TO "$P/bin/lutorch" -e 'print(require("optim").SGD ~= nil, require("data").DataLoader ~= nil)' </dev/null 2>&1)
check "installed lutorch: optim and data" "true	true" "$out"
out=$($TO "$P/bin/lutorch" -e 'print(torch.help("nn.Linear"))' </dev/null 2>&1)
contains "torch.help reads the installed chapters" "Linear" "$out"
case "$out" in *"not found"*) bad "torch.help found share/lutorch/man" "$out" ;; *) ok ;; esac
out=$($TO "$P/bin/lutorch" -e 'print(torch.help("add"))' </dev/null 2>&1)
contains "torch.help for an op" "add" "$out"
# the CUDA backend module, found beside the installed program (lib/lutorch/) by torch.cuda
if [ -f "$BUILD/lutorch_cuda.so" ]; then
  [ -f "$P/lib/lua/5.4/lutorch_cuda.so" ] && [ -e "$P/lib/lutorch/lutorch_cuda.so" ] && ok || bad "installed: lutorch_cuda.so"
  out=$(LUTORCH_CUDA_DRIVER=fake $TO "$P/bin/lutorch" -e 'print(torch.cuda.is_available(), torch.ones(2):cuda():sum():item())' </dev/null 2>&1)
  check "installed lutorch loads the installed CUDA module (fake driver)" "true	2.0" "$out"
  out=$(LUTORCH_CUDA_DRIVER=none $TO "$P/bin/lutorch" -e 'print(torch.cuda.unavailable_reason())' </dev/null 2>&1)
  check "installed lutorch: the CUDA module's reason" "CUDA turned off (LUTORCH_CUDA_DRIVER=none)" "$out"
fi

# -- stock lua5.4: torch.so from LUA_CPATH; nn beside it is found by torch.so itself
if [ -n "$SANFLAGS" ]; then
  echo "SKIP stock lua5.4 with a sanitized torch.so"
elif command -v lua5.4 >/dev/null 2>&1; then
  out=$(LUA_CPATH="$P/lib/lua/5.4/?.so;;" $TO lua5.4 -e 'torch = require "torch"; print(torch.ones(2):sum():item())' </dev/null 2>&1)
  check "lua5.4: require 'torch' from the install" "2.0" "$out"
  if [ -f "$BUILD/lutorch_cuda.so" ]; then
    out=$(LUTORCH_CUDA_DRIVER=fake LUA_CPATH="$P/lib/lua/5.4/?.so;;" $TO lua5.4 -e 'local torch = require "torch"
      print(torch.cuda.is_available(), torch.ones(3):cuda():sum():item())' </dev/null 2>&1)
    check "lua5.4: torch.so loads the installed CUDA module (fake driver)" "true	3.0" "$out"
  fi
  out=$(LUA_CPATH="$P/lib/lua/5.4/?.so;;" $TO lua5.4 -e 'local torch = require "torch"; local nn = require "nn"
    print(nn.Linear(2, 3)(torch.ones(4, 2)).shape[1], package.searchpath("nn", package.path))' </dev/null 2>&1)
  check "lua5.4: require 'nn' after torch (relative lookup)" "4	$P/lib/lua/5.4/../../../share/lua/5.4/nn/init.lua" "$out"
  out=$(LUA_CPATH="$P/lib/lua/5.4/?.so;;" LUA_PATH="$P/share/lua/5.4/?.lua;$P/share/lua/5.4/?/init.lua;;" \
        $TO lua5.4 -e 'local nn = require "nn"; print(nn.Linear(2, 3).weight.shape[2], require("optim").Adam ~= nil)' </dev/null 2>&1)
  check "lua5.4: require 'nn' first, with LUA_PATH" "2	true" "$out"
else
  echo "SKIP lua5.4 not installed"
fi

# -- pkg-config against the installed lutorch.pc (prefix moved to the DESTDIR tree)
export PKG_CONFIG_PATH="$P/lib/pkgconfig"
PC="pkg-config --define-variable=prefix=$P"
check "pkg-config version" "0.1.0" "$($PC --modversion lutorch 2>&1)"
contains "pkg-config --cflags" "-I$P/include" "$($PC --cflags lutorch)"
contains "pkg-config --static --libs has the private libraries" "-lopenblas" "$($PC --static --libs lutorch)"
# the header alone, without the Lua or BLAS include paths
printf '#include <lutorch.h>\nint main(void) { lt_tensor *t = lt_tensor_new_zeros(LT_FLOAT32, lt_device_cpu(), 0, 0); lt_tensor_release(t); return lutorch_version() == 0; }\n' >"$tmp/h.c"
if cc -std=c11 $SANFLAGS -Wall -Wextra -Werror -fsyntax-only -I"$P/include" "$tmp/h.c" 2>"$tmp/h.log"; then ok
else bad "lutorch.h compiles on its own (C11)" "$(cat "$tmp/h.log")"; fi
# the C extension API: lutorch/extension.h is installed and the example extension compiles
# against it alone (C11, no Lua headers: a module needs none)
if cc -std=c11 $SANFLAGS -Wall -Wextra -Werror -fsyntax-only -I"$P/include" "$ROOT/examples/extension/swish.c" \
     2>"$tmp/x.log"; then ok
else bad "examples/extension/swish.c compiles against the installed lutorch/extension.h" "$(cat "$tmp/x.log")"; fi
cp "$ROOT/examples/embed/embed.c" "$ROOT/examples/embed/model.lua" "$ROOT/examples/embed/Makefile" "$tmp/cwd/"
if make -s PKG_CONFIG="$PC" CFLAGS="-O2 -Wall -Werror $SANFLAGS" LDFLAGS="$SANFLAGS" >"$tmp/make.log" 2>&1; then ok
else bad "examples/embed builds against the install" "$(cat "$tmp/make.log")"; fi
if [ -x ./embed ]; then
  contains "embed links the installed soname" "$P/lib/liblutorch.so.0" "$(ldd ./embed)"
  out=$($TO ./embed model.lua 2>&1); rc=$?
  check "embed against the install exits 0" "0" "$rc"
  contains "embed against the install: inference" "probabilities: float32 [2, 3]" "$out"
  contains "embed against the install: autograd from C" "dloss/db:" "$out"
fi
rm -f ./embed

# -- uninstall: no file or link left
cd "$ROOT" || exit 1
if ${MAKE:-make} -s BUILD="$BUILD" SAN="$SANFLAGS" uninstall DESTDIR="$D" PREFIX=/usr/local >"$tmp/uninstall.log" 2>&1; then ok
else bad "make uninstall" "$(tail -20 "$tmp/uninstall.log")"; fi
left=$(find "$D" ! -type d | head -20)
check "make uninstall leaves no files" "" "$left"
finish
