#!/bin/sh
# tutorial_cnn.sh — "What is torch.nn really?"'s CNN trained on Fashion-MNIST by lutorch
# (bench/tutorial_cnn.lua) and PyTorch 1.13 (bench/tutorial_cnn.py), both pinned to one
# core with one thread, from the same initial weights and first-epoch order, alternated
# ROUNDS times; prints each run and the time ratio.
#   BUILD=build ROUNDS=3 EPOCHS=1 CPU=1 sh bench/tutorial_cnn.sh
BUILD=${BUILD:-build}; ROUNDS=${ROUNDS:-3}; EPOCHS=${EPOCHS:-1}; CPU=${CPU:-1}
cd "$(dirname "$0")/.." || exit 1
. bench/cpu_class.sh   # CLASS=avx2: both sides on their AVX2 code
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 LUTORCH_NUM_THREADS=1
start=$(mktemp -d); trap 'rm -rf "$start"' EXIT
/usr/bin/python3 bench/tutorial_cnn.py --write-start "$start" || exit 1   # one start for both
for r in $(seq "$ROUNDS"); do
  lt=$(taskset -c "$CPU" "$BUILD/lutorch" bench/tutorial_cnn.lua "$EPOCHS" "$start" | grep "^train")
  pt=$(taskset -c "$CPU" /usr/bin/python3 bench/tutorial_cnn.py "$EPOCHS")
  a=$(echo "$lt" | awk '{print $2}'); b=$(echo "$pt" | awk '{print $2}')
  echo "round $r: lutorch $lt | PyTorch $pt | time $(awk "BEGIN{printf \"%.2fx\", $a / $b}")"
done
