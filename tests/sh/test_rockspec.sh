#!/bin/sh
# test_rockspec.sh — the rockspec keeps working: `luarocks make` from the checkout installs the
# torch module and the Lua libraries into a private tree, and the stock lua5.4 loads them from
# there (require "torch", "nn", "image"), from an empty folder, nothing else on its paths.
# luarocks builds with the Makefile's lua-module target in build/: the test runs only where that
# is already built and up to date (make test builds it first), never rebuilding inside the suite.
# Run by tests/run.sh as `BUILD=dir sh tests/sh/test_rockspec.sh`; prints "N passed, N failed".
BUILD=${BUILD:-build}
cd "$(dirname "$0")/../.." || exit 1
ROOT=$PWD
passed=0; failed=0; skipped=0
ok()  { passed=$((passed + 1)); }
bad() { failed=$((failed + 1)); echo "FAIL $1" >&2; [ -n "${2:-}" ] && printf '%s\n' "$2" | sed 's/^/  /' >&2; }
finish() { echo "$passed passed, $failed failed, $skipped skipped"; [ "$failed" -eq 0 ]; exit; }
skip() { echo "SKIP $1"; skipped=$((skipped + 1)); finish; }

command -v luarocks >/dev/null || skip "the rockspec: luarocks is not installed (Debian: luarocks)"
command -v lua5.4 >/dev/null || skip "the rockspec: no lua5.4"
[ "$BUILD" = build ] || skip "the rockspec: luarocks builds in build/, this run tests $BUILD"
${MAKE:-make} -q NVCC= lua-module 2>/dev/null || skip "the rockspec: build/torch.so is not up to date (make first)"
spec=$(ls lutorch-*.rockspec | head -1)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if luarocks --lua-version 5.4 make --tree="$tmp/tree" "$spec" >"$tmp/log" 2>&1; then ok
else bad "luarocks make $spec" "$(tail -15 "$tmp/log")"; finish; fi
case "$(cat "$tmp/log")" in *"not chosen"*) bad "the rockspec names a licence" "$(tail -1 "$tmp/log")" ;; *) ok ;; esac
[ -f "$tmp/tree/lib/lua/5.4/torch.so" ] && ok || bad "torch.so installed in the tree"
[ -f "$tmp/tree/share/lua/5.4/nn/init.lua" ] && ok || bad "nn installed in the tree"

mkdir "$tmp/cwd" && cd "$tmp/cwd" || exit 1
LP="$tmp/tree/share/lua/5.4/?.lua;$tmp/tree/share/lua/5.4/?/init.lua"
LC="$tmp/tree/lib/lua/5.4/?.so"
out=$(env -i PATH="$PATH" LUA_PATH="$LP" LUA_CPATH="$LC" timeout 60 lua5.4 -e '
local torch = require "torch"
local nn = require "nn"
local image = require "image"
print(package.searchpath("torch", package.cpath) ~= nil, nn.Linear(3, 2)(torch.ones(1, 3)):size(2),
      image.hflip(torch.arange(6):view(1, 2, 3))[1][1][1])' 2>&1)
if [ "$out" = "true	2	2" ]; then ok; else bad "lua5.4 loads the rock's torch, nn and image" "$out"; fi
finish
