#!/bin/sh
# torch.ao's quantized Linear 4096x4096 side by side with PyTorch 1.13 (float32 and its
# dynamic int8: fbgemm, or onednn where Debian's build lacks fbgemm): batch 1, 8, 64; one
# thread, pinned to one core, lutorch and PyTorch alternated ROUNDS times; the median of each key in microseconds, the speed-ups over
# float32, the model sizes, and the CPU the figures were taken on.
#   BUILD=build ROUNDS=3 BENCH_CPU=1 sh bench/quant.sh
BUILD=${BUILD:-build}
ROUNDS=${ROUNDS:-3}
CPU=${BENCH_CPU:-1}
cd "$(dirname "$0")/.." || exit 1
out=$(mktemp -d)
median() { sort -g | awk '{a[NR]=$1} END {if (NR) print a[int((NR+1)/2)]; else print "nan"}'; }
export OPENBLAS_NUM_THREADS=1 LUTORCH_NUM_THREADS=1 OMP_NUM_THREADS=1
for r in $(seq "$ROUNDS"); do
  taskset -c "$CPU" "$BUILD/lutorch" bench/quant.lua >> "$out/lt"
  taskset -c "$CPU" /usr/bin/python3 bench/quant.py >> "$out/pt"
done
echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //')"
echo "flags: $(grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' | grep -xE 'avx2|fma|avx512f|avx512bw|avx512_vnni|avx_vnni|avx512_bf16|amx_int8' | tr '\n' ' ')"
echo "lutorch path: ${LUTORCH_QUANT_ISA:-auto (the best of the flags above)}; PyTorch $(/usr/bin/python3 -c 'import torch; print(torch.__version__)') quantized engine: $(grep -m1 '^engine_' "$out/pt" | sed 's/engine_//; s/ .*//')"
m() { grep "^$1 " "$2" | awk '{print $2}' | median; }
printf '%-6s %10s %10s %10s %10s %10s %10s | %8s %8s %8s %8s\n' batch "lt f32" "lt int8wo" "lt int8dyn" \
  "lt int4" "pt f32" "pt int8dyn" "f32/wo8" "f32/int4" "f32/dyn8" "ptf/ptd"
row() {  # label, lutorch key suffix, PyTorch key suffix
  f=$(m "f32_$2" "$out/lt"); w=$(m "w8_$2" "$out/lt"); d=$(m "dyn8_$2" "$out/lt"); q=$(m "w4_$2" "$out/lt")
  pf=$(m "pt_f32_$3" "$out/pt"); pd=$(m "pt_dyn8_$3" "$out/pt")
  printf '%-6s %10s %10s %10s %10s %10s %10s | %8s %8s %8s %8s\n' "$1" "$f" "$w" "$d" "$q" "$pf" "$pd" \
    "$(awk "BEGIN{printf \"%.2f\", $f / $w}")" "$(awk "BEGIN{printf \"%.2f\", $f / $q}")" \
    "$(awk "BEGIN{printf \"%.2f\", $f / $d}")" "$(awk "BEGIN{printf \"%.2f\", $pf / $pd}")"
}
for b in 1 8 64; do row "$b" "b$b" "b$b"; done
row "1 cold" "b1_cold" "b1_cold"
echo "(microseconds per call, median of $ROUNDS rounds x 5 repetitions; ratios: speed-ups over float32;"
echo " batch 1 cold: copies of the layer cycled, >= 96 MB of weights, so they stream from memory)"
echo "sizes in bytes:"
grep -h '^size_' "$out/lt" "$out/pt" | awk '!seen[$1]++ {printf "  %-28s %12d\n", substr($1, 6), $2}'
rm -rf "$out"
