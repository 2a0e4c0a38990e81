#!/bin/sh
# optim7_suite.sh — the test scripts of Torch7's optim package (test/test_*.lua of torch/optim)
# under lutorch --torch7, each in its own process, in a scratch copy of the test folder (they
# write logs, plots and files there). Not part of make test: the package is not in the tree.
#   tools/optim7_suite.sh OPTIM_CHECKOUT [LUTORCH]
# OPTIM_CHECKOUT: a checkout of torch/optim; LUTORCH: the program (default build/lutorch).
# test_fista.lua also loads Torch7 packages that are not optim: kex (Tensor:shrinkage), unsup
# (a LinearFistaL1 it builds and drops) and gnuplot; the small stand-ins below supply what it
# uses. A script passes when it exits with status 0. Prints each result and the counts; V=1
# shows the failures' output.
here=$(cd "$(dirname "$0")/.." && pwd)
src=${1:?usage: tools/optim7_suite.sh OPTIM_CHECKOUT [LUTORCH]}
prog=${2:-$here/build/lutorch}
case "$prog" in /*) ;; *) prog="$PWD/$prog" ;; esac
[ -d "$src/test" ] || { echo "no $src/test" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -R "$src/test" "$work/test"
mkdir "$work/shim"
cat >"$work/shim/kex.lua" <<'LUA'
-- kex's Tensor:shrinkage(l): soft thresholding in place, x := sign(x) max(|x| - l, 0)
local function shrinkage(x, l)
  local s = x:clone():sign_()
  x:abs_():add_(-l):clamp_(0, math.huge):mul_(s)
  return x
end
for _, n in ipairs({ "DoubleTensor", "FloatTensor" }) do torch[n].shrinkage = shrinkage end
return true
LUA
cat >"$work/shim/unsup.lua" <<'LUA'
-- unsup.LinearFistaL1(ni, no, lambda): test_fista.lua builds one only to draw the random numbers
-- its weights took (no x ni normal values) and drops it
require "optim"   -- unsup loaded optim, and test_fista.lua relies on it
unsup = { LinearFistaL1 = function(ni, no) torch.randn(no, ni); return {} end }
return unsup
LUA
cat >"$work/shim/gnuplot.lua" <<'LUA'
-- gnuplot's calls of test_fista.lua, drawing nothing
gnuplot = {}
for _, f in ipairs({ "figure", "plot", "title", "grid", "xlabel", "ylabel", "axis", "plotflush", "close" }) do
  gnuplot[f] = function() end
end
return gnuplot
LUA
pass=0; fail=0
log="$work/log"
for t in "$work"/test/test_*.lua; do
  n=$(basename "$t" .lua)
  if (cd "$work/test" && LUA_PATH="./?.lua;$work/shim/?.lua;$here/lib/?.lua;$here/lib/?/init.lua;;" \
        timeout 600 "$prog" --torch7 "$t" >"$log" 2>&1); then
    pass=$((pass + 1)); echo "ok   $n"
  else
    fail=$((fail + 1)); echo "FAIL $n"
    [ -n "$V" ] && tail -n 20 "$log" | sed 's/^/    /'
  fi
done
echo "torch7 optim tests: $pass passed, $fail failed of $((pass + fail))"
[ "$fail" -eq 0 ]
