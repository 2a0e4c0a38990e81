#!/bin/sh
# nn7_suite.sh — Torch7's nn test suite (test.lua of torch/nn), one test per process,
# under lutorch's Torch7 mode. Not part of make test: the suite is not in the tree.
#   tools/nn7_suite.sh NN_TREE [LUTORCH] [NAME...]
# NN_TREE: a checkout of torch/nn; LUTORCH: the program (default build/lutorch); NAMEs:
# run only these tests. Prints each test's result and the count passed; V=1 shows the
# failures' output; SEED=n picks the seed (default 123).
here=$(cd "$(dirname "$0")/.." && pwd)
nn=${1:?usage: tools/nn7_suite.sh NN_TREE [LUTORCH] [NAME...]}
prog=${2:-$here/build/lutorch}
[ $# -ge 2 ] && shift 2 || shift $#
test_lua="$nn/test.lua"
[ -f "$test_lua" ] || { echo "no $test_lua" >&2; exit 2; }
if [ $# -gt 0 ]; then
  names="$*"
else
  names=$(grep -o '^function nntest\.[A-Za-z0-9_]*' "$test_lua" | sed 's/^function nntest\.//' | sort -u)
  # the tostring tests are made in a loop over a table of modules
  for m in $(sed -n '/^local tostringTestModules = {/,/}/p' "$test_lua" | grep -o '^ *nn[A-Za-z]* =' | tr -d ' ='); do
    names="$names tostring$m"
  done
fi
pass=0; fail=0
log=$(mktemp)
export LUA_PATH="$here/lib/?.lua;$here/lib/?/init.lua;;"
for n in $names; do
  if timeout 300 "$prog" --torch7 "$here/tools/nn7_suite.lua" "$test_lua" "$n" "${SEED:-123}" >"$log" 2>&1; then
    pass=$((pass + 1)); echo "ok   $n"
  else
    fail=$((fail + 1)); echo "FAIL $n"
    [ -n "$V" ] && sed 's/^/    /' "$log" | head -${VN:-20}
  fi
done
rm -f "$log"
echo "nn test.lua: $pass passed, $fail failed of $((pass + fail))"
