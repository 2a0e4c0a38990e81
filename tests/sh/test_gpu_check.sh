#!/bin/sh
# test_gpu_check.sh — tools/gpu_check.sh and tools/gpu_bundle.sh parse (sh -n), and the
# whole check runs here under the fake driver (--fake) on this build: every stage reports,
# the CUDA tests pass, the benchmark figures are marked FAKE, and the result files are in
# $OUT. The run on a GPU is the lent machine's (man/cuda.md, "Checking on a GPU").
# Run by tests/run.sh as `BUILD=dir sh tests/sh/test_gpu_check.sh`; prints "N passed, N failed".
BUILD=${BUILD:-build}
cd "$(dirname "$0")/../.." || exit 1
case "$BUILD" in /*) ;; *) BUILD="$PWD/$BUILD" ;; esac
passed=0; failed=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ok()  { passed=$((passed + 1)); }
bad() { failed=$((failed + 1)); echo "FAIL $1" >&2; [ -n "${2:-}" ] && printf '%s\n' "$2" | tail -n 20 | sed 's/^/  /' >&2; }

for s in tools/gpu_check.sh tools/gpu_bundle.sh; do
  if out=$(sh -n "$s" 2>&1); then ok; else bad "sh -n $s" "$out"; fi
done

out=$(BUILD="$BUILD" OUT="$tmp/out" GPU_CHECK_BUNDLE=0 TOTAL=240 sh tools/gpu_check.sh --fake 2>&1); rc=$?
sum=$(cat "$tmp/out/summary.txt" 2>/dev/null)
[ $rc -eq 0 ] && ok || bad "gpu_check.sh --fake: exit status $rc" "$sum
$out"
for f in gpu_check.log summary.txt env.txt tests.txt compile.txt sanitizer.txt bench.txt; do
  [ -s "$tmp/out/$f" ] && ok || bad "gpu_check.sh --fake: \$OUT/$f is missing or empty"
done
case "$sum" in *"tests: "*" passed, 0 failed"*) ok ;; *) bad "gpu_check.sh --fake: the CUDA tests" "$sum" ;; esac
case "$sum" in *"compile: "*" passed, 0 failed"*) ok ;; *) bad "gpu_check.sh --fake: the compile stage" "$sum" ;; esac
case "$sum" in *"sanitizer: skipped (fake driver)"*) ok ;; *) bad "gpu_check.sh --fake: the sanitizer stage" "$sum" ;; esac
grep -q '^FAKE: ' "$tmp/out/bench.txt" && grep -q '^add_gbps ' "$tmp/out/bench.txt" && ok ||
  bad "gpu_check.sh --fake: bench.txt marked FAKE with its figures" "$(cat "$tmp/out/bench.txt")"
grep -q '^coverage: ' "$tmp/out/tests.txt" && ok || bad "gpu_check.sh --fake: the device-generic coverage in tests.txt"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
