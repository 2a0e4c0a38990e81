#!/bin/sh
# ptxas_spills.sh LOG... — read the reports ptxas -v wrote while nvcc compiled the CUDA kernels
# (make cuda-check keeps one per source, $(BUILD)/cuda/kernels/*.ptxas) and fail when a hot
# kernel spills registers to local memory.
#
# A kernel is hot when it is launched through the ck_hot<K> entry template (its struct says
# LT_HOT, src/cuda/kernels/ck.h), so its mangled name holds "ck_hotI". Cold kernels may spill;
# their spills are counted, not fatal. Prints one summary line, and each spilling kernel
# (demangled when c++filt is found); exits 1 on a hot spill, 2 on a report without kernels.
[ $# -gt 0 ] || { echo "usage: $0 PTXAS_LOG..." >&2; exit 2; }
demangle() { if command -v c++filt >/dev/null 2>&1; then c++filt; else cat; fi; }
out=$(awk '
  /Function properties for / { fn = $NF; next }
  /bytes spill stores/ && fn != "" {
    # "    N bytes stack frame, N bytes spill stores, N bytes spill loads"
    stack = $1; stores = $5; loads = $9
    hot = index(fn, "ck_hotI") > 0
    kernels++; if (hot) hots++
    if (stack > 0) stacked++
    if (stores + loads > 0) {
      if (hot) { hotspill++; print "SPILL hot " fn ": " stores " bytes stores, " loads " bytes loads" }
      else { coldspill++; print "spill cold " fn ": " stores " bytes stores, " loads " bytes loads" }
    }
    fn = ""; next
  }
  /Used [0-9]+ registers/ { for (i = 1; i <= NF; i++) if ($i == "Used") { r = $(i + 1) + 0; if (r > maxreg) maxreg = r } }
  END {
    printf "ptxas: %d kernels (%d hot), at most %d registers, %d with a stack frame, %d spilling (%d hot)\n",
      kernels, hots, maxreg, stacked, hotspill + coldspill, hotspill
    if (kernels == 0) exit 2
    exit hotspill > 0 ? 1 : 0
  }' "$@")
rc=$?
printf '%s\n' "$out" | demangle
exit $rc
