#!/bin/sh
# serial.sh — save and load of a ~1 GiB state dict (32 float32 tensors of 8M elements):
# lutorch's torch.save / torch.load / mmap load next to `dd` sequential bandwidth and
# PyTorch's torch.save / torch.load on the same tensors, alternated, pinned to one CPU.
# Usage: sh bench/serial.sh [BUILD] [ROUNDS]   (needs ~2.5 GiB free in $DIR, default /tmp)
# Warm: the file just written is in the page cache. Cold: caches dropped before each read
# (needs root; skipped otherwise).
BUILD=${1:-build}; ROUNDS=${2:-3}; CPU=${CPU:-1}
N=${N:-32}; M=${M:-8388608}
DIR=${DIR:-/tmp}/lt_serial_bench.$$
mkdir -p "$DIR"; trap 'rm -rf "$DIR"' EXIT
LT="$BUILD/lutorch"; PY=/usr/bin/python3
BYTES=$((N * M * 4))
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
cold=0; [ -w /proc/sys/vm/drop_caches ] && cold=1
echo "# $N tensors x $M float32 = $BYTES bytes; dir $DIR; cold reads: $cold"
df -h "$DIR" | tail -1
dd_rate() { # seconds from dd's stderr -> GB/s
  awk -v b="$BYTES" '/copied/ { for (i = 1; i <= NF; i++) if ($(i+1) ~ /^s,?$/) t = $i; printf "%.2f GB/s (%.3f s)", b / t / 1e9, t }'
}
for r in $(seq "$ROUNDS"); do
  echo "## round $r"
  printf 'dd write (conv=fdatasync): '
  dd if=/dev/zero of="$DIR/dd.bin" bs=1M count=$((BYTES / 1048576)) conv=fdatasync 2>&1 | dd_rate; echo
  printf 'dd read warm: '
  dd if="$DIR/dd.bin" of=/dev/null bs=1M 2>&1 | dd_rate; echo
  if [ $cold = 1 ]; then
    sync; echo 1 > /proc/sys/vm/drop_caches
    printf 'dd read cold: '
    dd if="$DIR/dd.bin" of=/dev/null bs=1M 2>&1 | dd_rate; echo
  fi
  rm -f "$DIR/dd.bin"
  taskset -c "$CPU" "$LT" bench/serial.lua "$DIR" "$N" "$M"
  [ $cold = 1 ] && WHAT=drop,load,mmap taskset -c "$CPU" "$LT" bench/serial.lua "$DIR" "$N" "$M" | sed 's/load/load_cold/'
  ls -l "$DIR/sd.lt" | awk '{print "lutorch file bytes " $5}'
  rm -f "$DIR/sd.lt"
  taskset -c "$CPU" "$PY" bench/serial.py "$DIR" "$N" "$M"
  [ $cold = 1 ] && WHAT=drop,load taskset -c "$CPU" "$PY" bench/serial.py "$DIR" "$N" "$M" | sed 's/load/load_cold/'
  ls -l "$DIR/sd.pt" | awk '{print "pytorch file bytes " $5}'
  rm -f "$DIR/sd.pt"
done
