#!/bin/sh
# torch7_suite.sh — Torch7's own test suite (test/test.lua of torch/torch7), one
# test per process, under lutorch. Not part of make test: the suite is not in
# the tree.
#   tools/torch7_suite.sh TORCH7_TREE [LUTORCH] [MODE_FLAG]
# TORCH7_TREE: a checkout of torch/torch7 (or a folder holding test/test.lua);
# LUTORCH: the program (default build/lutorch); MODE_FLAG: --torch7 (default)
# or "none" for PyTorch mode. Prints each test's result and the count passed;
# V=1 shows the failures' output.
here=$(cd "$(dirname "$0")/.." && pwd)
t7=${1:?usage: tools/torch7_suite.sh TORCH7_TREE [LUTORCH] [--torch7|none]}
prog=${2:-$here/build/lutorch}
mode=${3:---torch7}
[ "$mode" = none ] && mode=
test_lua="$t7/test/test.lua"
[ -f "$test_lua" ] || { echo "no $test_lua" >&2; exit 2; }
names=$(grep -o '^function torchtest\.[A-Za-z0-9_]*' "$test_lua" | sed 's/^function torchtest\.//' | sort -u)
# the two made in a loop (torchtest['allAndAny' .. i] for two shapes)
grep -q "torchtest\['allAndAny' \.\. i\]" "$test_lua" && names="$names allAndAny1 allAndAny2"
pass=0; fail=0; failed=""
log=$(mktemp)
for n in $names; do
  if timeout 120 "$prog" $mode "$here/tools/torch7_suite.lua" "$test_lua" "$n" "$here" >"$log" 2>&1; then
    pass=$((pass + 1)); echo "ok   $n"
  else
    fail=$((fail + 1)); failed="$failed $n"; echo "FAIL $n"
    [ -n "$V" ] && sed 's/^/    /' "$log" | head -20
  fi
done
rm -f "$log"
echo "torch7 test.lua: $pass passed, $fail failed of $((pass + fail))"
