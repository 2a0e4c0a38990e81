#!/bin/sh
# gpu_check.sh — the prepared check of the CUDA backend on a lent GPU machine (man/cuda.md,
# "Checking on a GPU"), in under 6 minutes, every stage under its own time budget:
#   1. env        nvidia-smi, nvcc, the driver, PyTorch
#   2. bundle     the lutorch of `make gpu-bundle` (gpu-bundle/pack/lutorch-gpu.tar.gz, carried
#                 with the working tree) unpacked and run: with the system's C runtime, else
#                 with the bundle's own loader; where neither runs, a build on the machine if
#                 it has a C compiler, nvcc and Lua 5.4 (said so), else the lutorch stages
#                 are skipped with the reason
#   3. tests      every tests/lua/cuda/test_*.lua and tests/lua/test_cuda_fake.lua with the
#                 real driver (LUTORCH_CUDA_DRIVER unset), the device-generic suite's
#                 coverage, and the allocator's C test
#   3b. nccl      the nccl backend of torch.distributed with the real libnccl.so.2 on the GPU:
#                 a world of one rank (no mpirun; MPI as a singleton), tests/dist/nccl_one_rank.lua
#                 (all_reduce, broadcast, all_gather... on cuda tensors against expected
#                 values). Written without a GPU and NOT YET RUN on one: no machine was lent to
#                 the task that added it (the fake NCCL's tests in tests/sh/test_dist.sh ran).
#                 Skipped with the reason where lutorch_dist.so or libnccl.so.2 is missing
#   3c. compile   torch.compile's fused CUDA kernels (NVRTC, lib/compile/cuda.lua) on the GPU
#                 against eager, forward and backward: pointwise runs and the row and
#                 reduction kernels (layer_norm -> run, run -> softmax, run -> sum / mean), and
#                 their time against the eager ops (tools/gpu_compile_check.lua; compile.txt).
#                 Written without a GPU and NOT YET RUN on one: no machine was lent to the
#                 tasks that added them (under the fake driver the host builds of the same
#                 sources ran)
#   4. sanitizer  compute-sanitizer --tool memcheck over tests/lua/cuda/test_optim.lua
#                 (skipped with the message where it is missing or refused)
#   5. bench      bench/cuda/lt_cuda_bench.lua beside bench/cuda/pt_cuda_bench.py (PyTorch on
#                 the same GPU): add and sum at 256 MiB (GB/s), bf16 matmul 8192^3 (TFLOP/s),
#                 the Fashion-MNIST MLP training step (ms), cached 1 MiB alloc + free (ns)
#   6. compile rows  tests/lua/cuda/test_compile_cuda_rows.lua (the row kernels' full test:
#                 many NVRTC compiles) with the time left, last so that it cannot starve the
#                 stages above; on the GPU only (under --fake tests/sh/test_cuda_fake.sh runs
#                 it); a run cut short by the budget says INCOMPLETE and fails the check
# Everything goes to $OUT/gpu_check.log; $OUT/summary.txt, env.txt, tests.txt, compile.txt,
# sanitizer.txt and bench.txt hold each stage's result. A stage that fails or runs out of
# time says so in the summary, and the exit status is 1 when any did.
#
#   on the lent machine (the device tool's run):  sh tools/gpu_check.sh
#       with carry ["gpu-bundle/pack"] after `make gpu-bundle` here, timeout_s 420
#   here, the whole flow under the fake driver:   sh tools/gpu_check.sh --fake
#       (--dry-run is the same; or LUTORCH_CUDA_DRIVER=fake): the local build or the bundle,
#       small benchmark sizes, every figure marked FAKE (host memory, not a GPU)
# OUT defaults to gpu-check-out/ in the tree. TOTAL (seconds, default 340) is the budget.
# GPU_CHECK_BUNDLE=0 ignores the bundle (the dry run then takes the build in BUILD, default
# build/).
cd "$(dirname "$0")/.." || exit 1
ROOT=$PWD
FAKE=0
case "${LUTORCH_CUDA_DRIVER:-}" in fake) FAKE=1 ;; esac
for a in "$@"; do
  case "$a" in
    --fake|--dry-run) FAKE=1 ;;
    -h|--help) sed -n '2,35p' "$0"; exit 0 ;;
    *) echo "gpu_check: unknown argument $a (try --help)" >&2; exit 2 ;;
  esac
done
OUT=${OUT:-$ROOT/gpu-check-out}
mkdir -p "$OUT" || exit 1
LOG="$OUT/gpu_check.log"
TW=$(mktemp -d) || exit 1       # scratch outside $OUT: only the result files come back
trap 'rm -rf "$TW"' EXIT
SUM="$OUT/summary.txt"
: >"$LOG"; : >"$SUM"; : >"$OUT/tests.txt"; : >"$OUT/compile.txt"; : >"$OUT/bench.txt"; : >"$OUT/sanitizer.txt"; : >"$OUT/env.txt"
START=$(date +%s)
TOTAL=${TOTAL:-340}
DEADLINE=$((START + TOTAL))
RESERVE=5
FAILED=0
if [ "$FAKE" = 1 ]; then
  DRIVER_ENV="LUTORCH_CUDA_DRIVER=fake"; MODE="FAKE (fake driver on host memory: no figure is a GPU's)"
  MIB=4; MMN=128; STEPS=5
else
  unset LUTORCH_CUDA_DRIVER
  DRIVER_ENV=""; MODE="GPU (the real driver)"
  MIB=256; MMN=8192; STEPS=100
fi
LUA_PATH="$ROOT/tests/lua/?.lua;$ROOT/lib/?.lua;$ROOT/lib/?/init.lua;;"; export LUA_PATH

log() { printf '%s\n' "$*" | tee -a "$LOG"; }
note() { printf '%s\n' "$*" | tee -a "$LOG" >>"$SUM"; }
now() { date +%s; }
# budget WANT: seconds a stage may take, WANT or what is left before the deadline
budget() {
  _l=$((DEADLINE - $(now) - RESERVE))
  if [ "$_l" -lt "$1" ]; then echo "$_l"; else echo "$1"; fi
}
# t SECONDS FILE CMD...: CMD under a time limit, its output appended to FILE and the log
t() {
  _s=$1; _f=$2; shift 2
  if [ "$_s" -le 0 ]; then echo "(skipped: out of time)" | tee -a "$_f" >>"$LOG"; return 124; fi
  timeout -k 5 "$_s" "$@" >"$TW/last" 2>&1
  _rc=$?
  cat "$TW/last" >>"$_f"
  [ "$_f" = "$LOG" ] || cat "$TW/last" >>"$LOG"
  [ $_rc -eq 124 ] && echo "(timed out after $_s s)" | tee -a "$_f" >>"$LOG"
  return $_rc
}
stage() { log ""; log "==== $1 ($(($(now) - START)) s in) ===="; }

log "gpu_check: $MODE, $(date -u '+%Y-%m-%d %H:%M:%S UTC'), budget $TOTAL s"
note "gpu_check summary: $MODE"

# ---- 1. env ----
stage "env"
E="$OUT/env.txt"
{ echo "uname: $(uname -a)"; echo "cpu: $(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2)"
  echo "cores: $(nproc 2>/dev/null)"; } >>"$E"
GPU="no nvidia-smi"
if command -v nvidia-smi >/dev/null 2>&1; then
  t "$(budget 15)" "$E" nvidia-smi
  t "$(budget 10)" "$E" nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader &&
    GPU=$(tail -n 1 "$TW/last")
else echo "nvidia-smi: not found" >>"$E"; fi
NVCC=$(command -v nvcc 2>/dev/null || ls /usr/local/cuda/bin/nvcc 2>/dev/null)
if [ -n "$NVCC" ]; then t "$(budget 10)" "$E" "$NVCC" --version; else echo "nvcc: not found" >>"$E"; fi
HAVE_PT=0
if t "$(budget 30)" "$E" python3 -c 'import torch; print("PyTorch", torch.__version__, "cuda", torch.version.cuda, "available", torch.cuda.is_available())'; then HAVE_PT=1
else echo "PyTorch: not importable (its benchmarks are skipped)" | tee -a "$E" >>"$LOG"; fi
cat "$E" >>"$LOG"
note "env: GPU: $GPU | $(grep -m1 '^PyTorch' "$E" || echo 'no PyTorch') | nvcc: $(grep -m1 -o 'release [0-9.]*' "$E" || echo none)"

# ---- 2. bundle ----
stage "bundle"
LT=""          # the command that runs lutorch
RUNNER=""      # the bundle's run script (its C programs), or empty
PACK="$ROOT/gpu-bundle/pack/lutorch-gpu.tar.gz"
WORK=${TMPDIR:-/tmp}/lutorch-gpu
smoke() { t "$(budget 30)" "$LOG" env $DRIVER_ENV "$@" -e 'print("lutorch ok")' && grep -q "lutorch ok" "$TW/last"; }
if [ -f "$PACK" ] && [ "${GPU_CHECK_BUNDLE:-1}" != 0 ]; then
  rm -rf "$WORK"; mkdir -p "$WORK"
  if tar -xzf "$PACK" -C "$WORK"; then
    log "bundle: $PACK unpacked in $WORK (commit $(cat "$WORK/dist/COMMIT" 2>/dev/null))"
    if smoke "$WORK/dist/run" lutorch; then
      LT="$WORK/dist/run lutorch"; RUNNER="$WORK/dist/run"; note "bundle: runs with the system's C runtime"
    elif smoke env LT_BUNDLE_LOADER=1 "$WORK/dist/run" lutorch; then
      export LT_BUNDLE_LOADER=1
      LT="$WORK/dist/run lutorch"; RUNNER="$WORK/dist/run"; note "bundle: runs with its own loader and C runtime (the system's is older)"
    else
      note "bundle: does not run here: $(tail -n 3 "$TW/last" | tr '\n' ' ')"
    fi
  else
    note "bundle: $PACK does not unpack"
  fi
else
  log "bundle: none used ($PACK: make gpu-bundle here, then carry gpu-bundle/pack)"
fi
LOCAL=${BUILD:-build}
case "$LOCAL" in /*) ;; *) LOCAL="$ROOT/$LOCAL" ;; esac
if [ -z "$LT" ] && [ "$FAKE" = 1 ] && [ -x "$LOCAL/lutorch" ]; then
  LT="$LOCAL/lutorch"; note "bundle: none; the local build ($LOCAL) runs the dry run"
fi
if [ -z "$LT" ]; then
  # build here, where the machine can
  why=""
  command -v cc >/dev/null 2>&1 || why="no C compiler"
  [ -n "$NVCC" ] || why="${why:+$why, }no nvcc"
  pkg-config --exists lua5.4 2>/dev/null || why="${why:+$why, }no Lua 5.4 headers (pkg-config lua5.4)"
  if [ -z "$why" ]; then
    log "bundle: building lutorch here (BUILD=$WORK/build)"
    if t "$(budget 240)" "$LOG" make -j"$(nproc)" BUILD="$WORK/build" all "$WORK/build/tests/test_cuda_alloc" \
         "$WORK/build/bench/cuda_alloc_bench" && smoke "$WORK/build/lutorch"; then
      LT="$WORK/build/lutorch"; note "bundle: built here (the bundle did not run)"
    else
      note "bundle: the build here failed (see gpu_check.log)"
    fi
  else
    note "bundle: cannot build here: $why; the lutorch stages are skipped"
  fi
fi
[ -n "$LT" ] || FAILED=1
# the command of a C program of the bundle (through its run script) or of the build
cprog() {
  if [ -n "$RUNNER" ]; then echo "$RUNNER $1"; else echo "$(dirname "$LT")/$1"; fi
}

CUDA_OK=0
if [ -n "$LT" ]; then
  t "$(budget 30)" "$LOG" env $DRIVER_ENV $LT -e '
    local c = torch.cuda
    print("cuda available", c.is_available(), c.is_available() and "" or c.unavailable_reason())
    if c.is_available() then
      print("devices", c.device_count(), c.get_device_name and c.get_device_name() or "?")
      local x = torch.arange(0, 10):cuda()
      print("round trip", torch.equal(x:cpu(), torch.arange(0, 10)))
    end'
  if grep -q "cuda available	true" "$TW/last"; then CUDA_OK=1; note "cuda: $(grep '^devices' "$TW/last")"
  else note "cuda: not available to lutorch: $(grep 'cuda available' "$TW/last")"; FAILED=1; fi
fi

# ---- 3. tests ----
stage "tests"
T="$OUT/tests.txt"
if [ -n "$LT" ] && [ "$CUDA_OK" = 1 ]; then
  tp=0; tf=0
  TESTS_END=$(($(now) + 150))     # the stage's share, so the benchmarks still run
  for f in tests/lua/cuda/test_*.lua tests/lua/test_cuda_fake.lua; do
    [ -f "$f" ] || continue
    case "$f" in *test_compile_cuda_rows.lua) continue ;; esac    # stage 6
    echo "---- $f" >>"$LOG"
    tb=$(budget 90); [ $((TESTS_END - $(now))) -lt "$tb" ] && tb=$((TESTS_END - $(now)))
    t "$tb" "$LOG" env $DRIVER_ENV $LT "$f"
    rc=$?
    line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$TW/last" | tail -n 1)
    p=$(echo "$line" | sed -n 's/^\([0-9]*\) passed.*/\1/p'); n=$(echo "$line" | sed -n 's/.* \([0-9]*\) failed.*/\1/p')
    p=${p:-0}; n=${n:-0}
    if [ -z "$line" ] || { [ $rc -ne 0 ] && [ "$n" -eq 0 ]; }; then n=$((n + 1)); line="${line:-no result line} (exit $rc)"; fi
    if [ "$n" -eq 0 ]; then echo "PASS $f: $line" >>"$T"; else echo "FAIL $f: $line" >>"$T"; grep '^FAIL' "$TW/last" | head -n 40 | sed 's/^/    /' >>"$T"; fi
    case "$f" in *test_device_generic.lua) sed -n '/^coverage on cuda/,/^coverage:/p' "$TW/last" >"$TW/coverage" ;; esac
    tp=$((tp + p)); tf=$((tf + n))
  done
  [ -s "$TW/coverage" ] && { echo "device-generic suite, per op:"; cat "$TW/coverage"; } >>"$T"
  note "tests: $tp passed, $tf failed (tests.txt)"
  [ "$tf" -eq 0 ] || FAILED=1
else
  note "tests: skipped (no lutorch or no CUDA device for it)"
fi
if [ -n "$LT" ]; then
  echo "---- allocator: tests/c/test_cuda_alloc.c (against its test double of the driver, cu_double.h)" >>"$T"
  if t "$(budget 30)" "$T" $(cprog tests/test_cuda_alloc); then note "allocator C test: passed (test double of the driver)"
  else note "allocator C test: FAILED or not run (tests.txt)"; FAILED=1; fi
  note "allocator against the real driver's events: no C test links the real driver yet; the Lua tests above (streams, events, record_stream, memory_stats) run the allocator on it"
fi

# ---- 3b. nccl ----
# lutorch_dist.so beside the program (the bundle packs it with its OpenMPI, whose components it
# finds through the bundle's run script); libnccl.so.2 from the loader's path, the toolkit, or
# PyTorch's nvidia-nccl wheel. Under --fake: the fake NCCL on the fake driver (no library).
stage "nccl"
NT="$OUT/tests.txt"
echo "---- nccl: tests/dist/nccl_one_rank.lua (one rank, MPI as a singleton)" >>"$NT"
if [ -n "$RUNNER" ]; then DIST_SO="$(dirname "$RUNNER")/lutorch_dist.so"; else DIST_SO="$(dirname "${LT:-.}")/lutorch_dist.so"; fi
NCCL_LIB=""
if [ "$FAKE" = 1 ]; then
  NCCL_ENV="LUTORCH_NCCL=fake"
else
  for p in $(ldconfig -p 2>/dev/null | awk '/libnccl\.so\.2 / { print $NF }') /usr/local/cuda/lib64/libnccl.so.2 \
           $(python3 -c 'import nvidia.nccl as m, os; print(os.path.join(list(m.__path__)[0], "lib", "libnccl.so.2"))' 2>/dev/null); do
    [ -f "$p" ] && { NCCL_LIB=$p; break; }
  done
  NCCL_ENV="LUTORCH_NCCL=$NCCL_LIB"
fi
if [ -z "$LT" ] || [ "$CUDA_OK" = 0 ]; then
  echo "skipped: no lutorch with a CUDA device" >>"$NT"; note "nccl: skipped (no lutorch on a device)"
elif [ ! -f "$DIST_SO" ]; then
  echo "skipped: $DIST_SO is missing (lutorch_dist.so is built where OpenMPI is)" >>"$NT"
  note "nccl: skipped (no lutorch_dist.so)"
elif [ "$FAKE" = 0 ] && [ -z "$NCCL_LIB" ]; then
  echo "skipped: no libnccl.so.2 (ldconfig, /usr/local/cuda/lib64, python3's nvidia.nccl)" >>"$NT"
  note "nccl: skipped (no libnccl.so.2)"
else
  t "$(budget 60)" "$NT" env $DRIVER_ENV $NCCL_ENV LUTORCH_DIST_SO="$DIST_SO" NCCL_SOCKET_IFNAME=lo \
    OMPI_MCA_ess_singleton_isolated=1 $LT tests/dist/nccl_one_rank.lua
  rc=$?
  line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$TW/last" | tail -n 1)
  if [ $rc -eq 0 ] && echo "$line" | grep -q ' 0 failed'; then
    note "nccl: one rank, $(grep -m1 '^nccl library' "$TW/last"): $line"
  else
    note "nccl: FAILED (exit $rc; ${line:-no result line}; tests.txt)"; FAILED=1
  fi
fi

# ---- 3c. compile ----
stage "compile"
CT="$OUT/compile.txt"
if [ -z "$LT" ] || [ "$CUDA_OK" = 0 ]; then
  echo "skipped: no lutorch with a CUDA device" >>"$CT"; note "compile: skipped (no lutorch on a device)"
else
  [ "$FAKE" = 1 ] && CN=1048576 || CN=16777216
  t "$(budget 90)" "$CT" env $DRIVER_ENV LUTORCH_COMPILE_CACHE="$TW/compile-cache" $LT tools/gpu_compile_check.lua $CN
  rc=$?
  line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$TW/last" | tail -n 1)
  if [ $rc -eq 0 ] && echo "$line" | grep -q ' 0 failed'; then
    note "compile: $line; $(grep -m1 'silu chain over' "$TW/last" | sed 's/^compile: //')"
  else
    note "compile: FAILED (exit $rc; ${line:-no result line}; compile.txt)"; FAILED=1
  fi
fi

# ---- 4. sanitizer ----
stage "sanitizer"
S="$OUT/sanitizer.txt"
CS=$(command -v compute-sanitizer 2>/dev/null || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null)
if [ "$FAKE" = 1 ]; then
  echo "skipped: compute-sanitizer checks GPU memory accesses; under the fake driver there are none" >>"$S"
  note "sanitizer: skipped (fake driver)"
elif [ -z "$CS" ]; then
  echo "skipped: compute-sanitizer not found" >>"$S"; note "sanitizer: skipped (not found)"
elif [ -z "$LT" ] || [ "$CUDA_OK" = 0 ]; then
  echo "skipped: no lutorch with a CUDA device" >>"$S"; note "sanitizer: skipped (no lutorch on a device)"
else
  t "$(budget 45)" "$S" "$CS" --tool memcheck --error-exitcode 9 $LT tests/lua/cuda/test_optim.lua
  rc=$?
  if grep -q "ERROR SUMMARY: 0 errors" "$S" && [ $rc -eq 0 ]; then note "sanitizer: memcheck clean on test_optim.lua"
  elif grep -qiE "permission|not supported|unable to|could not|failed to initialize" "$S" && ! grep -q "ERROR SUMMARY" "$S"; then
    note "sanitizer: skipped, refused here: $(grep -iE -m1 'permission|not supported|unable to|could not|failed to initialize' "$S")"
  else note "sanitizer: FAILED or errors found (exit $rc; sanitizer.txt)"; FAILED=1; fi
fi

# ---- 5. bench ----
stage "bench"
BN="$OUT/bench.txt"
[ "$FAKE" = 1 ] && echo "FAKE: every figure below is the fake driver's host memory or this machine's CPU, not a GPU's" >>"$BN"
echo "sizes: $MIB MiB, matmul $MMN^3 bf16, $STEPS MLP steps" >>"$BN"
: >"$TW/lt"; : >"$TW/pt"
if [ -n "$LT" ] && [ "$CUDA_OK" = 1 ]; then
  t "$(budget 70)" "$LOG" env $DRIVER_ENV $LT bench/cuda/lt_cuda_bench.lua $MIB $MMN $STEPS; cp "$TW/last" "$TW/lt"
  t "$(budget 20)" "$LOG" $(cprog bench/cuda_alloc_bench) 200000
  ns=$(grep '1 MiB (small pool' "$TW/last" | sed -n 's/.* \([0-9.]*\) ns\/pair.*/\1/p')
  [ -n "$ns" ] && echo "alloc_ns $ns ns" >>"$TW/lt"
fi
if [ "$HAVE_PT" = 1 ]; then
  t "$(budget 70)" "$LOG" python3 bench/cuda/pt_cuda_bench.py $MIB $MMN $STEPS; cp "$TW/last" "$TW/pt"
fi
{
  printf '%-10s %16s %16s %8s  %s\n' key lutorch PyTorch ratio "target (issue 16)"
  for k in add_gbps sum_gbps mm_tflops mlp_ms alloc_ns; do
    a=$(awk -v k=$k '$1 == k { print $2 " " $3 }' "$TW/lt"); b=$(awk -v k=$k '$1 == k { print $2 " " $3 }' "$TW/pt")
    case $k in
      add_gbps|sum_gbps) goal=">= 0.9x PyTorch and >= 3500 GB/s" ;;
      mm_tflops) goal=">= 0.9x PyTorch" ;;
      *) goal="<= PyTorch" ;;
    esac
    r=$(echo "$a $b" | awk '$1 + 0 > 0 && $3 + 0 > 0 { printf "%.2f", $1 / $3 }')
    printf '%-10s %16s %16s %8s  %s\n' $k "${a:-n/a}" "${b:-n/a}" "${r:--}" "$goal"
  done
  grep ' n/a ' "$TW/lt" | sed 's/^/  lutorch: /'
  grep ' n/a ' "$TW/pt" | sed 's/^/  PyTorch: /'
  echo "alloc_ns: lutorch's is the allocator's cached path against its test double (bench/cuda_alloc_bench.c),"
  echo "  PyTorch's torch.cuda.caching_allocator_alloc + delete of a cached 1 MiB block"
} >>"$BN"
cat "$BN" >>"$LOG"
note "bench: bench.txt$([ "$FAKE" = 1 ] && echo ' (FAKE figures)')"

# ---- 6. compile rows ----
stage "compile rows"
if [ "$FAKE" = 1 ]; then
  echo "---- compile rows: skipped under the fake driver (tests/sh/test_cuda_fake.sh runs the file)" >>"$CT"
  note "compile rows: skipped (fake driver; tests/sh/test_cuda_fake.sh runs test_compile_cuda_rows.lua)"
elif [ -z "$LT" ] || [ "$CUDA_OK" = 0 ]; then
  note "compile rows: skipped (no lutorch on a device)"
else
  echo "---- compile rows: tests/lua/cuda/test_compile_cuda_rows.lua" >>"$CT"
  t "$(budget 180)" "$CT" env LUTORCH_COMPILE_CACHE="$TW/compile-cache" $LT tests/lua/cuda/test_compile_cuda_rows.lua
  rc=$?
  line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$TW/last" | tail -n 1)
  if [ $rc -eq 0 ] && echo "$line" | grep -q ' 0 failed'; then note "compile rows: $line"
  elif [ $rc -eq 124 ]; then note "compile rows: INCOMPLETE (out of time; raise TOTAL; compile.txt)"; FAILED=1
  else note "compile rows: FAILED (exit $rc; ${line:-no result line}; compile.txt)"; FAILED=1; fi
fi

el=$(($(now) - START))
if [ "$FAILED" = 0 ]; then note "gpu_check: every stage passed in $el s"
else note "gpu_check: SOME STAGES FAILED (see above and gpu_check.log), $el s"; fi
cat "$SUM"
[ "$FAILED" = 0 ]
