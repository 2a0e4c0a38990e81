#!/bin/sh
# test_examples_cuda.sh — the examples with --device cuda: under the fake CUDA driver
# (LUTORCH_CUDA_DRIVER=fake, device memory on the host) each runs briefly and gives the
# CPU's numbers where they are deterministic; without a driver (LUTORCH_CUDA_DRIVER=none)
# --device cuda says why and exits 1; a bad --device exits 2. The Fashion-MNIST examples
# are skipped where the data set is not installed. Run by tests/run.sh as
# `BUILD=dir sh tests/sh/test_examples_cuda.sh`; prints "N passed, N failed, N skipped".
BUILD=${BUILD:-build}
cd "$(dirname "$0")/../.." || exit 1
ROOT=$PWD
case "$BUILD" in /*) ;; *) BUILD="$ROOT/$BUILD" ;; esac
LT="$BUILD/lutorch"
EX="$ROOT/examples"
LUA_PATH="$ROOT/lib/?.lua;$ROOT/lib/?/init.lua;;"; export LUA_PATH
FMNIST=${FMNIST:-/usr/share/datasets/fashion-mnist}
passed=0; failed=0; skipped=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
TO="timeout 120"

ok()  { passed=$((passed + 1)); }
bad() { failed=$((failed + 1)); echo "FAIL $1" >&2; [ -n "${2:-}" ] && printf '%s\n' "$2" | tail -n 15 | sed 's/^/  /' >&2; }
skip() { skipped=$((skipped + 1)); echo "SKIP $1"; }

# run DRIVER NAME EXPECTED-STATUS NEEDLE EXAMPLE ARGS...: the example from $tmp under the
# driver, its exit status and a needle in its output (stdout and stderr); the output is
# left in $tmp/last.txt
run() {
  drv=$1; name=$2; want=$3; needle=$4; script=$5; shift 5
  out=$(cd "$tmp" && LUTORCH_CUDA_DRIVER=$drv $TO "$LT" "$EX/$script" "$@" </dev/null 2>&1); rc=$?
  printf '%s\n' "$out" >"$tmp/last.txt"
  if [ "$rc" -ne "$want" ]; then bad "$name: exit status $rc, expected $want" "$out"; return 1; fi
  case "$out" in *"$needle"*) ok ;; *) bad "$name: output lacks [$needle]" "$out"; return 1 ;; esac
}

# the lines of a run's output that must not depend on the device (timings, paths and
# memory left out)
numbers() { grep -E "$1" "$tmp/$2" | sed -E 's/[0-9.]+ (s|ms)(\/[a-z]+)?//g; s/ms\/step//g'; }

if [ ! -x "$LT" ]; then
  echo "FAIL $LT is not built" >&2
  echo "0 passed, 1 failed"; exit 1
fi

# no driver: --device cuda says why, exit 1; a bad device name: exit 2
run none "no driver: --device cuda" 1 "--device cuda: CUDA is not available" regression.lua --device cuda
run none "no driver: --device cuda:1" 1 "CUDA is not available" autograd_basics.lua --device cuda:1
run fake "bad --device" 2 "--device expects cpu, cuda or cuda:N" regression.lua --device tpu
run fake "cuda:7 of 2 fake devices" 1 "there are 2 CUDA devices" regression.lua --device cuda:7

# under the fake: the examples that need no data, on cuda and on the CPU, with the same numbers
for d in cpu cuda; do
  run fake "regression --device $d" 0 "least squares (exact)" regression.lua --device $d --steps 100 \
    --out "$tmp/reg" && cp "$tmp/last.txt" "$tmp/reg_$d.txt"
  run fake "autograd_basics --device $d" 0 "gradcheck(Softplus) =	true" autograd_basics.lua --device $d
done
if [ "$(numbers 'fitted|loss' reg_cpu.txt)" = "$(numbers 'fitted|loss' reg_cuda.txt)" ]; then ok
else bad "regression: cuda's fit differs from the CPU's" "$(diff "$tmp/reg_cpu.txt" "$tmp/reg_cuda.txt")"; fi

i=0
while [ $i -lt 40 ]; do
  echo "The quick brown fox jumps over the lazy dog. Pack my box with five dozen liquor jugs."
  i=$((i + 1))
done >"$tmp/text.txt"
for d in cpu cuda; do
  run fake "char_lm --device $d" 0 "trained 4 steps" char_lm.lua "$tmp/text.txt" --device $d --steps 4 --batch 8 \
    --seq 16 --embed 8 --hidden 32 --log-every 2 --sample-len 20 --quiet --out "$tmp/clm" && cp "$tmp/last.txt" "$tmp/clm_$d.txt"
done
if [ "$(numbers '^step|^trained' clm_cpu.txt)" = "$(numbers '^step|^trained' clm_cuda.txt)" ]; then ok
else bad "char_lm: cuda's losses differ from the CPU's" "$(diff "$tmp/clm_cpu.txt" "$tmp/clm_cuda.txt")"; fi
run fake "ddp_fashion_mnist refuses --device cuda" 2 "is not supported" ddp_fashion_mnist.lua --device cuda

# the Fashion-MNIST examples, a few batches, where the data set is installed
if [ -f "$FMNIST/train-images-idx3-ubyte.gz" ] || [ -f "$FMNIST/train-images-idx3-ubyte" ]; then
  for ex in fashion_mnist_mlp fashion_mnist_cnn torch7_style; do
    run fake "$ex --device cuda" 0 "test acc" $ex.lua --device cuda --data "$FMNIST" --max-batches 3 --quiet \
      --out "$tmp/$ex"
  done
else
  skip "the Fashion-MNIST examples with --device cuda: no data set in $FMNIST (apt-get install dataset-fashion-mnist)"
fi

echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
