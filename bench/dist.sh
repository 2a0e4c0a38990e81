#!/bin/sh
# dist.sh — torch.distributed on 2 ranks of this machine, side by side in one run:
#  1. all_reduce (float32 sum, in place) against OpenMPI's own MPI_Allreduce (bench/dist_allreduce.c)
#     on the same buffer sizes; ratio = MPI time / lutorch time (>= 0.9 is the target). The C
#     program runs twice: as is, and with glibc's malloc tuned the way lutorch tunes it
#     (src/cpu/alloc.c), since OpenMPI mallocs a message-sized temporary per call and
#     the default settings make that a fresh mmap from 128 KiB up; "ratio*" compares with that;
#  2. a DDP training step of LeNet-5 (batch 64 per rank) against PyTorch 1.13's DDP over gloo
#     (/usr/bin/python3, 2 processes, 1 thread each); ratio = PyTorch time / lutorch time;
#  3. nn.fully_shard against DDP on an AdamW step of an MLP whose optimizer state dominates
#     (8 x Linear(1024, 1024), batch 32 per rank; bench/dist_fsdp.lua): step time and peak RSS
#     per rank during training (targets: FSDP time <= 1.3x DDP's, RSS <= 0.6x). PyTorch 1.13's
#     FSDP is not run: Debian's build cannot import it under Python 3.11 (a dataclass with a
#     mutable default in torch.distributed._shard raises at import).
# Alternated ROUNDS times; the best of the rounds is reported.
#   BUILD=build ROUNDS=3 sh bench/dist.sh
BUILD=${BUILD:-build}
ROUNDS=${ROUNDS:-3}
cd "$(dirname "$0")/.." || exit 1
command -v mpirun >/dev/null || { echo "no mpirun"; exit 1; }
[ -f "$BUILD/lutorch_dist.so" ] || { echo "no $BUILD/lutorch_dist.so"; exit 1; }
export LUA_PATH="lib/?.lua;lib/?/init.lua;;"
export LUTORCH_NUM_THREADS=1
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
mpicc -O2 -o "$tmp/allreduce" bench/dist_allreduce.c || exit 1
ROOT=""; [ "$(id -u)" = 0 ] && ROOT="--allow-run-as-root"
M="mpirun $ROOT -np 2"
# elements, iterations: 4 KiB .. 64 MiB
SIZES="1024 2000 16384 1000 262144 200 1048576 50 4194304 20 16777216 5"
: >"$tmp/ar"; : >"$tmp/ddp"; : >"$tmp/fsdp"
for r in $(seq "$ROUNDS"); do
  $M "$tmp/allreduce" $SIZES >>"$tmp/ar"
  $M -x GLIBC_TUNABLES=glibc.malloc.mmap_threshold=33554432:glibc.malloc.trim_threshold=67108864 \
    "$tmp/allreduce" $SIZES | sed 's/^mpi /mpituned /' >>"$tmp/ar"
  $M "$BUILD/lutorch" bench/dist_allreduce.lua $SIZES >>"$tmp/ar"
  $M "$BUILD/lutorch" bench/dist_ddp.lua 50 64 >>"$tmp/ddp"
  /usr/bin/python3 bench/dist_ddp.py 50 64 2>/dev/null | grep '^pytorch' >>"$tmp/ddp"
  $M "$BUILD/lutorch" bench/dist_fsdp.lua ddp 20 >>"$tmp/fsdp"
  $M "$BUILD/lutorch" bench/dist_fsdp.lua fsdp 20 >>"$tmp/fsdp"
  $M "$BUILD/lutorch" bench/dist_fsdp.lua fsdp 20 32 1024 8 false | sed 's/^fsdp /fsdp_keep /' >>"$tmp/fsdp"
done
echo "all_reduce, float32 sum, 2 ranks (best of $ROUNDS rounds)"
printf '%10s %10s %10s %10s %10s %12s %7s %7s\n' bytes "MPI us" "MPI* us" "lutorch us" "MPI GB/s" "lutorch GB/s" ratio "ratio*"
for n in $(echo $SIZES | awk '{for (i = 1; i <= NF; i += 2) print $i}'); do
  m=$(awk -v n="$n" '$1 == "mpi" && $2 == n {print $3}' "$tmp/ar" | sort -g | head -1)
  mt=$(awk -v n="$n" '$1 == "mpituned" && $2 == n {print $3}' "$tmp/ar" | sort -g | head -1)
  l=$(awk -v n="$n" '$1 == "lutorch" && $2 == n {print $3}' "$tmp/ar" | sort -g | head -1)
  awk -v n="$n" -v m="$m" -v mt="$mt" -v l="$l" 'BEGIN { b = 4 * n;
    printf "%10d %10.1f %10.1f %10.1f %10.2f %12.2f %7.2f %7.2f\n", b, m * 1e6, mt * 1e6, l * 1e6, b / m / 1e9, b / l / 1e9, m / l, mt / l }'
done
lt=$(awk '$1 == "lutorch" {print $2}' "$tmp/ddp" | sort -g | head -1)
pt=$(awk '$1 == "pytorch" {print $2}' "$tmp/ddp" | sort -g | head -1)
echo
echo "DDP step, LeNet-5, batch 64 per rank, 2 ranks x 1 thread (best of $ROUNDS rounds)"
awk -v l="$lt" -v p="$pt" 'BEGIN { printf "lutorch %.2f ms | PyTorch 1.13 (gloo) %.2f ms | PyTorch/lutorch %.2f\n", l, p, p / l }'

echo
echo "FSDP against DDP, AdamW step, MLP 8 x 1024^2 (32 MiB of float32 parameters), batch 32 per rank, 2 ranks x 1 thread (best of $ROUNDS rounds)"
best() { awk -v m="$1" -v c="$2" '$1 == m {print $c}' "$tmp/fsdp" | sort -g | head -1; }
dt=$(best ddp 2); dr=$(best ddp 3); ft=$(best fsdp 2); fr=$(best fsdp 3); kt=$(best fsdp_keep 2); kr=$(best fsdp_keep 3)
awk -v dt="$dt" -v dr="$dr" -v ft="$ft" -v fr="$fr" -v kt="$kt" -v kr="$kr" 'BEGIN {
  printf "%-40s %9s %9s %10s %9s\n", "", "ms/step", "vs DDP", "peak RSS", "vs DDP"
  printf "%-40s %9.1f %9s %8.0f MB %9s\n", "DDP", dt, "1.00", dr, "1.00"
  printf "%-40s %9.1f %9.2f %8.0f MB %9.2f\n", "FSDP (reshard_after_forward)", ft, ft / dt, fr, fr / dr
  printf "%-40s %9.1f %9.2f %8.0f MB %9.2f\n", "FSDP (reshard_after_forward = false)", kt, kt / dt, kr, kr / dr }'
