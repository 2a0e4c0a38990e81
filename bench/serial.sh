#!/bin/sh
# serial.sh — save and load of a ~1 GiB state dict (32 float32 tensors of 8M elements):
# lutorch's torch.save / torch.load / mmap load next to `dd` sequential bandwidth and
# PyTorch's torch.save / torch.load on the same tensors, alternated, pinned to one CPU.
# Usage: sh bench/serial.sh [BUILD] [ROUNDS]   (needs ~2.5 GiB free in $DIR, default /tmp)
# CPU=N pins to core N (default 1). Every load runs in a fresh process. BASE=path/to/lutorch
# also loads lutorch's file with that (older) build, warm and cold, for before/after figures.
# Warm: the file just written is in the page cache. Cold: the file is dropped from the page
# cache first, without root: it is synced, then `dd iflag=nocache count=0` asks the kernel
# (posix_fadvise DONTNEED) to drop its clean pages, and `fincore` must then report none
# resident (the drop needs a file system with a page cache: not tmpfs). The same drop
# precedes dd's, lutorch's and PyTorch's cold reads. Each load and read waits PAUSE seconds
# (default 3) first: on a VM that hands freed memory back to its host (virtio free page
# reporting) a process's first touch of fresh memory costs more a few seconds after the last
# process freed it, and every side should meet the same. Medians over the rounds at the end.
BUILD=${1:-build}; ROUNDS=${2:-3}; CPU=${CPU:-1}
N=${N:-32}; M=${M:-8388608}
DIR=${DIR:-/tmp}/lt_serial_bench.$$
mkdir -p "$DIR"; LOG="$DIR/log"; : > "$LOG"
trap 'rm -rf "$DIR"' EXIT
LT="$BUILD/lutorch"; PY=/usr/bin/python3
BYTES=$((N * M * 4))
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
echo "# $N tensors x $M float32 = $BYTES bytes; dir $DIR; pinned to CPU $CPU; $(date -u '+%Y-%m-%d %H:%M UTC')"
df -h "$DIR" | tail -1

command -v fincore >/dev/null || echo "# no fincore (util-linux): cold reads are not checked to be cold"
# drop FILE from the page cache; fails (with a message) when pages stay resident
evict() {
  sync "$1" && dd if="$1" iflag=nocache count=0 status=none || return 1
  command -v fincore >/dev/null || return 0
  res=$(fincore -b -n -o RES "$1" | tr -d " ")
  [ "$res" = 0 ] && return 0
  echo "# $1: $res bytes still in the page cache after the drop (tmpfs?): no cold figure" >&2
  return 1
}
dd_rate() { # dd's stderr -> "dd WHAT T s (R GB/s)"
  awk -v b="$BYTES" -v w="$1" '/copied/ { for (i = 1; i <= NF; i++) if ($(i+1) ~ /^s,?$/) t = $i; printf "dd %s %.3f s (%.2f GB/s)\n", w, t, b / t / 1e9 }'
}
run() { sleep "${PAUSE:-3}"; "$@" | tee -a "$LOG"; }
lt() { WHAT=$1 LABEL=$2 taskset -c "$CPU" "$LT" bench/serial.lua "$DIR" "$N" "$M"; }
ltbase() { WHAT=$1 LABEL=$2 taskset -c "$CPU" "$BASE" bench/serial.lua "$DIR" "$N" "$M"; }
py() { WHAT=$1 LABEL=$2 taskset -c "$CPU" "$PY" bench/serial.py "$DIR" "$N" "$M"; }

for r in $(seq "$ROUNDS"); do
  echo "## round $r"
  run lt save; run lt load load
  evict "$DIR/sd.lt" && run lt load load_cold
  if [ -n "$BASE" ]; then
    run ltbase load base_load
    evict "$DIR/sd.lt" && run ltbase load base_load_cold
  fi
  run lt mmap
  stat -c '# lutorch file bytes %s' "$DIR/sd.lt"
  rm -f "$DIR/sd.lt"
  run py save; run py load load
  evict "$DIR/sd.pt" && run py load load_cold
  stat -c '# pytorch file bytes %s' "$DIR/sd.pt"
  rm -f "$DIR/sd.pt"
  dd if=/dev/zero of="$DIR/dd.bin" bs=1M count=$((BYTES / 1048576)) conv=fdatasync 2>&1 | dd_rate write | tee -a "$LOG"
  ddr() { taskset -c "$CPU" dd if="$DIR/dd.bin" of=/dev/null bs=1M 2>&1 | dd_rate "$1"; }
  run ddr read
  evict "$DIR/dd.bin" && run ddr read_cold
  rm -f "$DIR/dd.bin"
done
echo "## medians over $ROUNDS rounds (seconds)"
awk '$(NF) == "s" || $(NF-2) == "s" { k = $1 " " $2; t = ($(NF) == "s") ? $(NF-1) : $(NF-3); v[k] = v[k] " " t; if (!(k in seen)) { seen[k] = 1; order[++n] = k } }
     END { for (i = 1; i <= n; i++) { k = order[i]; m = split(substr(v[k], 2), a, " ");
             for (x = 1; x <= m; x++) for (y = x + 1; y <= m; y++) if (a[y] + 0 < a[x] + 0) { t = a[x]; a[x] = a[y]; a[y] = t }
             med = (m % 2) ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2; printf "%-28s %8.4f   (%s)\n", k, med, substr(v[k], 2) } }' "$LOG"
