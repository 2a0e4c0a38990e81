#!/bin/sh
# cpu_variant.sh VARIANT OUT OBJ... — one build of the CPU kernels (capability.h) as one
# relocatable object beside the default build: the objects compiled for VARIANT are linked
# into OUT (ld -r) and every global name they define gets the suffix __VARIANT
# (lt_cpu_add -> lt_cpu_add__avx2), references between them included, so the copy's
# kernel table points at the copy's kernels; names it only uses (the core, the thread
# pool, the conversions) are left alone and resolve to the one shared definition.
# A copy must hold no writable data (.data, .bss, thread-locals): state duplicated per
# copy would be state split in two, so that is an error naming the symbols.
set -e
v=$1; out=$2; shift 2
LD=${LD:-ld}; NM=${NM:-nm}; OBJCOPY=${OBJCOPY:-objcopy}
tmp=$out.tmp.o; map=$out.syms
rm -f "$tmp" "$map"
"$LD" -r -o "$tmp" "$@"
# (AddressSanitizer's __odr_asan.NAME markers are its bookkeeping, one per global, not state)
state=$(objdump -t "$tmp" | awk '$0 ~ /[ \t](\.data|\.bss|\.tdata|\.tbss)[ \t]/ && $NF !~ /^\./ && $NF !~ /^__odr_asan/ { print $NF }')
if [ -n "$state" ]; then
  echo "cpu_variant.sh: the $v build of the kernels would hold state of its own:" $state >&2
  echo "  (move it to a file compiled once: CPU_SINGLE_SRC in the Makefile)" >&2
  rm -f "$tmp"; exit 1
fi
"$NM" --defined-only --extern-only "$tmp" | awk -v s="__$v" 'NF == 3 { print $3, $3 s }' >"$map"
"$OBJCOPY" --redefine-syms="$map" "$tmp" "$out"
rm -f "$tmp"
