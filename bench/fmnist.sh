#!/bin/sh
# Fashion-MNIST training side by side with PyTorch (issue 5's acceptance):
# ../shared/bench-ref/fmnist_torch.py (PyTorch at its best thread setting here,
# 1 thread) against examples/fashion_mnist_{mlp,cnn}.lua (lutorch's default
# threads), alternated ROUNDS times; prints each run's epoch line and peak RSS.
# Both sides start from the same point: bench/fmnist_start.py writes the initial
# weights and first-epoch batch order of the PyTorch trainer (seed 0), and the
# lutorch example loads them (--start), so the accuracies compare like for like.
# CPU=1 pins both sides to that core (taskset); CPU= runs unpinned.
#   BUILD=build ROUNDS=2 EPOCHS=1 MODELS="mlp lenet" CPU=1 sh bench/fmnist.sh
BUILD=${BUILD:-build}
ROUNDS=${ROUNDS:-2}
MODELS=${MODELS:-mlp lenet}
EPOCHS=${EPOCHS:-1}
REF=${REF:-../shared/bench-ref/fmnist_torch.py}
cd "$(dirname "$0")/.." || exit 1
. bench/cpu_class.sh   # CLASS=avx2: both sides on their AVX2 code
[ -f "$REF" ] || { echo "no PyTorch reference at $REF"; exit 1; }
CPU=${CPU-1}
PIN=""; [ -n "$CPU" ] && PIN="taskset -c $CPU"
out=$(mktemp -d)
for m in $MODELS; do
  ex=examples/fashion_mnist_mlp.lua
  [ "$m" = lenet ] && ex=examples/fashion_mnist_cnn.lua
  /usr/bin/python3 bench/fmnist_start.py --model "$m" --out "$out/start_$m" || exit 1
  for r in $(seq "$ROUNDS"); do
    $PIN "$BUILD/lutorch" "$ex" --quiet --epochs "$EPOCHS" --start "$out/start_$m" --out "$out/x" > "$out/lt" 2>&1
    $PIN /usr/bin/python3 "$REF" --model "$m" --epochs "$EPOCHS" --threads 1 > "$out/pt" 2>&1
    lt_m=$(sed -n 's/^peak RSS \([0-9]*\) MiB.*/\1/p' "$out/lt")
    pt_m=$(sed -n 's/^peak RSS \([0-9]*\) MiB.*/\1/p' "$out/pt")
    for e in $(seq "$EPOCHS"); do
      lt_t=$(sed -n "s/^epoch $e: train \([0-9.]*\) s.*/\1/p" "$out/lt")
      pt_t=$(sed -n "s/^epoch $e: train \([0-9.]*\) s.*/\1/p" "$out/pt")
      lt_a=$(sed -n "s/^epoch $e:.*test acc \([0-9.]*\).*/\1/p" "$out/lt")
      pt_a=$(sed -n "s/^epoch $e:.*test acc \([0-9.]*\).*/\1/p" "$out/pt")
      lt_l=$(sed -n "s/^epoch $e:.*mean loss \([0-9.]*\).*/\1/p" "$out/lt")
      pt_l=$(sed -n "s/^epoch $e:.*mean loss \([0-9.]*\).*/\1/p" "$out/pt")
      printf '%-6s round %d epoch %d: lutorch %6s s loss %s acc %s | PyTorch (1 thread) %6s s loss %s acc %s | time %s\n' \
        "$m" "$r" "$e" "$lt_t" "$lt_l" "$lt_a" "$pt_t" "$pt_l" "$pt_a" "$(awk "BEGIN{printf \"%.2fx\", $lt_t / $pt_t}")"
    done
    printf '%-6s round %d: peak RSS lutorch %s MiB, PyTorch %s MiB (%s)\n' "$m" "$r" "$lt_m" "$pt_m" \
      "$(awk "BEGIN{printf \"%.2fx\", $lt_m / $pt_m}")"
  done
done
rm -rf "$out"
