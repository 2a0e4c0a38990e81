#!/bin/sh
# test_examples.sh — every example in examples/ runs in a short mode (a few batches or steps)
# and prints what it should: a smoke test of the examples and of the libraries under them.
# Run by tests/run.sh as `BUILD=dir sh tests/sh/test_examples.sh`; prints "N passed, N failed".
# The examples run in a temporary directory with --out there, so nothing lands in the tree.
BUILD=${BUILD:-build}
cd "$(dirname "$0")/../.." || exit 1
ROOT=$PWD
case "$BUILD" in /*) ;; *) BUILD="$ROOT/$BUILD" ;; esac
LT="$BUILD/lutorch"
EX="$ROOT/examples"
# lib/ of this tree first, wherever the build directory is
LUA_PATH="$ROOT/lib/?.lua;$ROOT/lib/?/init.lua;;"; export LUA_PATH
# FMNIST=dir points the Fashion-MNIST examples elsewhere
FMNIST=${FMNIST:-/usr/share/datasets/fashion-mnist}
passed=0; failed=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
TO="timeout 120"

ok()  { passed=$((passed + 1)); }
bad() { failed=$((failed + 1)); echo "FAIL $1" >&2; [ -n "${2:-}" ] && printf '%s\n' "$2" | tail -n 15 | sed 's/^/  /' >&2; }

# run NAME EXPECTED-STATUS NEEDLE EXAMPLE ARGS...: runs the example from $tmp, checks the exit
# status and that the output (stdout and stderr) contains NEEDLE
run() {
  name=$1; want=$2; needle=$3; script=$4; shift 4
  out=$(cd "$tmp" && $TO "$LT" "$EX/$script" "$@" </dev/null 2>&1); rc=$?
  if [ "$rc" -ne "$want" ]; then bad "$name: exit status $rc, expected $want" "$out"; return; fi
  case "$out" in *"$needle"*) ok ;; *) bad "$name: output lacks [$needle]" "$out" ;; esac
}

if [ ! -x "$LT" ]; then
  echo "FAIL $LT is not built" >&2
  echo "0 passed, 1 failed"; exit 1
fi

# --help: usage and options, exit 0, no data needed
for ex in fashion_mnist_mlp fashion_mnist_cnn torch7_style char_lm regression autograd_basics images; do
  run "$ex --help" 0 "usage: lutorch examples/$ex.lua" "$ex.lua" --help
done
run "unknown option" 2 "unknown option --no_such" regression.lua --no-such

# the examples that need no data set
run "autograd_basics: gradcheck" 0 "gradcheck(Softplus) =	true" autograd_basics.lua
run "autograd_basics: third derivative" 0 "f''' = 6" autograd_basics.lua
run "regression" 0 "least squares (exact)" regression.lua --steps 200 --out "$tmp/regression"
run "images: drawn pictures" 0 "ImageFolder: 32 images in 3 classes" images.lua --out "$tmp/images"
[ -s "$tmp/images_grid.png" ] && [ -s "$tmp/images_strip.jpg" ] && ok || bad "images: the grid and the strip written"

# char_lm on a small text the test writes
i=0
while [ $i -lt 40 ]; do
  echo "The quick brown fox jumps over the lazy dog. Pack my box with five dozen liquor jugs."
  i=$((i + 1))
done >"$tmp/text.txt"
run "char_lm: trains and samples" 0 "trained 6 steps" char_lm.lua "$tmp/text.txt" --steps 6 --batch 8 \
  --seq 16 --embed 8 --hidden 32 --log-every 3 --sample-len 30 --prime "The " --quiet --out "$tmp/char_lm"
run "char_lm --text, 2 layers" 0 "sample (temperature 1" char_lm.lua --text "$tmp/text.txt" --steps 3 --batch 4 \
  --seq 8 --embed 8 --hidden 16 --layers 2 --temperature 1 --sample-len 10 --quiet --out "$tmp/char_lm"
run "char_lm: a missing file" 2 "char_lm:" char_lm.lua "$tmp/no-such-file.txt"

# Fashion-MNIST: a few batches each, then the test-set accuracy
if [ -f "$FMNIST/train-images-idx3-ubyte.gz" ] || [ -f "$FMNIST/train-images-idx3-ubyte" ]; then
  run "fashion_mnist_mlp" 0 "test acc" fashion_mnist_mlp.lua --data "$FMNIST" --max-batches 5 --quiet --out "$tmp/mlp"
  run "fashion_mnist_cnn" 0 "test acc" fashion_mnist_cnn.lua --data "$FMNIST" --max-batches 5 --quiet --out "$tmp/cnn"
  # mixed precision: bf16 autocast, and f16 with a GradScaler
  run "fashion_mnist_mlp --amp bf16" 0 "test acc" fashion_mnist_mlp.lua --data "$FMNIST" --max-batches 5 --quiet --amp bf16 --out "$tmp/mlp16"
  run "fashion_mnist_cnn --amp f16" 0 "test acc" fashion_mnist_cnn.lua --data "$FMNIST" --max-batches 5 --quiet --amp f16 --out "$tmp/cnn16"
  run "images: Fashion-MNIST" 0 "a batch: images 8x3x32x32" images.lua --data "$FMNIST" --out "$tmp/images_fm"
  run "--amp fp8" 2 "--amp expects none, bf16 or f16" fashion_mnist_mlp.lua --amp fp8
  # the checkpoint loads back into a fresh model: the state_dict's tensors and the accuracy
  out=$(CK="$tmp/cnn.ckpt" $TO "$LT" -e '
    local ck = torch.load(os.getenv("CK"))
    local n = 0
    for k, v in pairs(ck.model) do assert(torch.is_tensor(v), k); n = n + 1 end
    assert(n == 10 and #ck.accuracy == 1, "checkpoint contents")
    print("checkpoint ok", ck.model["c1.weight"].shape)' 2>&1)
  case "$out" in "checkpoint ok"*) ok ;; *) bad "fashion_mnist_cnn: checkpoint loads" "$out" ;; esac
  if command -v gnuplot >/dev/null 2>&1; then
    [ -s "$tmp/cnn_loss.png" ] && ok || bad "fashion_mnist_cnn: loss curve picture written"
  fi
  run "torch7_style: optim.sgd" 0 "test acc" torch7_style.lua --data "$FMNIST" --max-batches 5 --quiet --out "$tmp/t7"
  run "torch7_style: updateParameters, ClassNLLCriterion" 0 "test acc" torch7_style.lua --data "$FMNIST" --max-batches 5 \
    --plain-sgd --nll --quiet --out "$tmp/t7"
else
  echo "SKIP Fashion-MNIST examples: $FMNIST is missing (apt-get install dataset-fashion-mnist)"
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
