#!/bin/sh
# test_dist.sh — torch.distributed on 2 ranks through mpirun on loopback: collectives,
# DDP, and the failure paths (a stuck peer, a killed rank, a rank raising an error); then
# the nccl backend (its own section at the end): the real libnccl.so.2's bootstrap without a
# GPU, and every collective, DDP and a stuck peer through the fake NCCL on the fake CUDA driver.
# Skipped, and says so, where mpirun or lutorch_dist.so is absent.
# Run by tests/run.sh as `BUILD=dir sh tests/sh/test_dist.sh`; prints "N passed, N failed".
BUILD=${BUILD:-build}
cd "$(dirname "$0")/../.." || exit 1
case "$BUILD" in /*) ;; *) BUILD="$PWD/$BUILD" ;; esac
LT="$BUILD/lutorch"
passed=0; failed=0; skipped=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export LUA_PATH="$PWD/tests/lua/?.lua;$PWD/lib/?.lua;$PWD/lib/?/init.lua;;"
export LUTORCH_DIST_SO="$BUILD/lutorch_dist.so"

ok()   { passed=$((passed + 1)); }
bad()  { failed=$((failed + 1)); echo "FAIL $1" >&2; [ -n "${2:-}" ] && printf '%s\n' "$2" | tail -n 30 | sed 's/^/  /' >&2; }
skip() { skipped=$((skipped + 1)); echo "SKIP $1: $2"; }
contains() { case "$3" in *"$2"*) ok ;; *) bad "$1" "[$3] does not contain [$2]" ;; esac; }
finish() { echo "$passed passed, $failed failed${skipped:+, $skipped skipped}" | sed 's/, 0 skipped//'; [ $failed -eq 0 ]; exit $?; }

if ! command -v mpirun >/dev/null 2>&1; then
  skip "distributed (mpi and nccl)" "mpirun not found (Debian: openmpi-bin)"; finish
fi
if [ ! -f "$BUILD/lutorch_dist.so" ]; then
  skip "distributed (mpi and nccl)" "$BUILD/lutorch_dist.so not built (no OpenMPI development files)"; finish
fi
# Under make asan: OpenMPI's components allocate at init and are unloaded at
# MPI_Finalize without freeing, so LeakSanitizer reports frames in "<unknown
# module>" that no suppression can name. Leak checking stays on for every other
# test; here the sanitizers still catch memory errors.
if [ "${LUTORCH_SANITIZE:-0}" = 1 ]; then
  export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
fi
ROOT=""; [ "$(id -u)" = 0 ] && ROOT="--allow-run-as-root"
MPI="timeout 60 mpirun $ROOT --oversubscribe -np 2"
now() { date +%s.%N; }
secs() { awk "BEGIN{printf \"%.1f\", $2 - $1}"; }

RANK_ENV=""
# a Lua test file (and its arguments) on 2 ranks: every rank must pass it (RANK_ENV: variables
# for the ranks, if any)
lua_on_2() {
  name=$1; file=$2; shift 2
  out=$(env $RANK_ENV $MPI "$LT" "$file" "$@" 2>&1); rc=$?
  n=$(printf '%s\n' "$out" | grep -cE '^[0-9]+ passed, 0 failed')
  if [ $rc -eq 0 ] && [ "$n" -eq 2 ]; then ok; else bad "$name (rc $rc)" "$out"; fi
  printf '%s\n' "$out" | grep '^overlap:' | sed 's/^/    /'
}
# the same on N ranks
lua_on_n() {
  np=$1; name=$2; file=$3; shift 3
  out=$(timeout 60 mpirun $ROOT --oversubscribe -np "$np" "$LT" "$file" "$@" 2>&1); rc=$?
  n=$(printf '%s\n' "$out" | grep -cE '^[0-9]+ passed, 0 failed')
  if [ $rc -eq 0 ] && [ "$n" -eq "$np" ]; then ok; else bad "$name (rc $rc)" "$out"; fi
}
lua_on_2 "collectives on 2 ranks" tests/dist/collectives.lua
lua_on_2 "DDP on 2 ranks" tests/dist/ddp.lua
lua_on_2 "DDP comm hooks and bucket rebuild on 2 ranks" tests/dist/ddp_hooks.lua
lua_on_2 "FSDP on 2 ranks" tests/dist/fsdp.lua
# FSDP on 4 ranks (uneven shards, more padding)
out=$(timeout 120 mpirun $ROOT --oversubscribe -np 4 "$LT" tests/dist/fsdp.lua 2>&1); rc=$?
n=$(printf '%s\n' "$out" | grep -cE '^[0-9]+ passed, 0 failed')
if [ $rc -eq 0 ] && [ "$n" -eq 4 ]; then ok; else bad "FSDP on 4 ranks (rc $rc)" "$out"; fi

# distributed checkpoints: saved by 2 ranks, loaded back on 2 (another split), 1, 3 and 4
lua_on_2 "checkpoint: save and load on 2 ranks" tests/dist/checkpoint.lua "$tmp/ck"
for np in 1 3 4; do
  lua_on_n $np "checkpoint: the 2-rank checkpoint loaded on $np ranks" tests/dist/checkpoint_load.lua "$tmp/ck"
done
# FSDP's sharded model and optimizer saved on 2 ranks, resumed on 1, 3 and 4, loaded unsharded
lua_on_2 "FSDP checkpoint: saved on 2 ranks" tests/dist/fsdp_checkpoint.lua save "$tmp/fsdp"
for np in 1 3 4; do
  lua_on_n $np "FSDP checkpoint: resumed on $np ranks" tests/dist/fsdp_checkpoint.lua load "$tmp/fsdp"
done
out=$(timeout 60 "$LT" tests/dist/fsdp_checkpoint.lua plain "$tmp/fsdp" 2>&1)
contains "FSDP checkpoint: loaded by an unsharded model" "1 passed, 0 failed" "$out"
# a rank killed (SIGKILL, by the checkpoint's test hook) while writing checkpoint B over A:
# the job fails, and a fresh process loads exactly A
kd="$tmp/ck_kill"
out=$($MPI "$LT" tests/dist/checkpoint_save.lua "$kd" 1 2>&1)
contains "checkpoint kill: A saved" "saved" "$out"
out=$(LUTORCH_DCP_TEST_DIE_AFTER_BYTES=40 LUTORCH_DCP_TEST_DIE_RANK=1 timeout 60 mpirun $ROOT --oversubscribe \
      -x LUTORCH_DCP_TEST_DIE_AFTER_BYTES -x LUTORCH_DCP_TEST_DIE_RANK -np 2 "$LT" tests/dist/checkpoint_save.lua "$kd" 2 2>&1); rc=$?
if [ $rc -ne 0 ]; then ok; else bad "checkpoint kill: the job fails" "$out"; fi
contains "checkpoint kill: rank 1 died mid-save" "test hook: killing this process mid-save" "$out"
case "$out" in *saved*) bad "checkpoint kill: B was not committed" "$out" ;; *) ok ;; esac
n=$(find "$kd" -name 'dcp-*-1.bin' -size 40c | wc -l)
if [ "$n" -eq 1 ]; then ok; else bad "checkpoint kill: rank 1's partial file is there" "$(ls -l "$kd")"; fi
out=$(timeout 60 "$LT" tests/dist/checkpoint_load.lua "$kd" 1 2>&1)
contains "checkpoint kill: a fresh process loads A" "3 passed, 0 failed" "$out"

# a stuck peer: rank 0's collective times out (2 s), the error names it, the job ends
t0=$(now)
out=$($MPI "$LT" tests/dist/fail_stuck.lua 2 2>&1); rc=$?
el=$(secs "$t0" "$(now)")
if [ $rc -ne 0 ]; then ok; else bad "stuck peer: nonzero exit" "$out"; fi
contains "stuck peer: names the collective and ranks" "all_reduce #2 (float32, 1000 elements) on ranks {0,1} timed out after 2.0 s" "$out"
contains "stuck peer: the job is aborted" "aborting the job" "$out"
if awk "BEGIN{exit !($el < 15)}"; then ok; else bad "stuck peer: ended in ${el}s (limit 15)"; fi
case "$out" in *UNREACHABLE*) bad "stuck peer: ran past the failed collective" ;; *) ok ;; esac
# the same with an async handle: the waiter gets a Lua error it can catch
out=$($MPI "$LT" tests/dist/fail_stuck.lua 2 async 2>&1); rc=$?
if [ $rc -ne 0 ]; then ok; else bad "stuck peer, async: nonzero exit" "$out"; fi
caught=$(printf '%s\n' "$out" | grep '^CAUGHT: ')
contains "stuck peer, async: a Lua error naming the collective" "lutorch.distributed: all_reduce #2 (float32, 1000 elements) on ranks {0,1} timed out after 2.0 s" "$caught"

# a rank killed mid-training (kill -9): the job ends with an error naming it
t0=$(now)
out=$($MPI "$LT" tests/dist/fail_kill.lua 3 2>&1); rc=$?
el=$(secs "$t0" "$(now)")
if [ $rc -ne 0 ]; then ok; else bad "killed rank: nonzero exit" "$out"; fi
contains "killed rank: the error names it" "rank 1" "$out"
case "$out" in *"signal 9"*|*Killed*|*"timed out"*) ok ;; *) bad "killed rank: says how it died" "$out" ;; esac
if awk "BEGIN{exit !($el < 15)}"; then ok; else bad "killed rank: ended in ${el}s (limit 15)"; fi

# a rank raising a Lua error: the job ends with that message
out=$($MPI "$LT" tests/dist/fail_error.lua 2>&1); rc=$?
if [ $rc -ne 0 ]; then ok; else bad "error on a rank: nonzero exit" "$out"; fi
contains "error on a rank: its message" "boom from rank 1 at step 5" "$out"
contains "error on a rank: the job is aborted" "[rank 1] lutorch.distributed: the script ended with an error (above); aborting the job" "$out"
case "$out" in *UNREACHABLE*) bad "error on a rank: others ran on" ;; *) ok ;; esac

# one process without mpirun: a world of one
cat >"$tmp/single.lua" <<'EOS'
local dist = torch.distributed
dist.init_process_group()
local t = torch.ones(3)
dist.all_reduce(t)
local l = { torch.zeros(3) }
dist.all_gather(l, t)
print(dist.get_rank(), dist.get_world_size(), t:sum():item(), l[1]:sum():item())
dist.destroy_process_group()
EOS
out=$(timeout 30 "$LT" "$tmp/single.lua" 2>&1)
contains "a world of one without mpirun" "0	1	3.0	3.0" "$out"

# the stock lua5.4 with torch.so finds and loads the module too
if [ "${LUTORCH_SANITIZE:-0}" = 1 ]; then
  skip "lua5.4 + torch.so" "a sanitizer build of torch.so cannot load into the uninstrumented lua5.4"
elif command -v lua5.4 >/dev/null 2>&1 && [ -f "$BUILD/torch.so" ]; then
  out=$(cd "$tmp" && LUTORCH_DIST_SO= LUA_PATH="$OLDPWD/lib/?.lua;$OLDPWD/lib/?/init.lua;;" LUA_CPATH="$BUILD/?.so;;" timeout 30 lua5.4 -e 'torch = require "torch"' "$tmp/single.lua" 2>&1)
  contains "lua5.4 + torch.so" "0	1	3.0	3.0" "$out"
fi

# lutorch --nproc N (when the program has the option)
out=$(timeout 60 "$LT" --nproc 2 tests/dist/collectives.lua 2>&1); rc=$?
case "$out" in
  *"unrecognized option"*) skip "lutorch --nproc" "this lutorch has no --nproc option" ;;
  *) n=$(printf '%s\n' "$out" | grep -cE '^[0-9]+ passed, 0 failed')
     if [ $rc -eq 0 ] && [ "$n" -eq 2 ]; then ok; else bad "lutorch --nproc 2" "$out"; fi ;;
esac

# the DDP example's smoke mode (needs Debian's dataset-fashion-mnist)
if [ -f /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz ] || [ -f /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte ]; then
  # in the temporary directory: the checkpoint it writes goes away with it
  out=$(cd "$tmp" && $MPI "$LT" "$OLDPWD/examples/ddp_fashion_mnist.lua" --smoke --quiet --timeout 60 2>&1); rc=$?
  contains "ddp_fashion_mnist --smoke: trains" "epoch 1: train" "$out"
  contains "ddp_fashion_mnist --smoke: saves on rank 0, loads on every rank" "checkpoint loaded on 2 ranks: largest difference from the trained weights 0" "$out"
  [ $rc -eq 0 ] && ok || bad "ddp_fashion_mnist --smoke: exit status $rc" "$out"
else
  skip "ddp_fashion_mnist --smoke" "no Fashion-MNIST in /usr/share/datasets/fashion-mnist"
fi

# without init_process_group, helpful errors
out=$(timeout 30 "$LT" -e 'print(pcall(torch.distributed.all_reduce, torch.ones(1)))' 2>&1)
contains "collective before init" "not initialized; call init_process_group first" "$out"
out=$(LUTORCH_DIST_SO=/nonexistent timeout 30 "$LT" -e 'print(torch.distributed.is_available())' 2>&1)
contains "is_available" "true" "$out"

# ======================================================================================
# the nccl backend (src/dist/nccl.c). NCCL bootstraps its sockets on loopback here.
# ======================================================================================
export NCCL_SOCKET_IFNAME=lo
REAL="-u LUTORCH_CUDA_DRIVER -u LUTORCH_NCCL"          # env arguments: the real library
FAKE="LUTORCH_CUDA_DRIVER=fake LUTORCH_NCCL=fake"       # the fake NCCL on the fake CUDA driver

# 1. the real libnccl.so.2 (no GPU here): ncclGetUniqueId on rank 0, the id broadcast over
#    MPI, ncclCommInitRank failing with a clean Lua error on every rank (timeout bounds a hang)
out=$(env $REAL timeout 30 "$LT" -e 'print(torch.distributed.is_nccl_available())' 2>&1)
case "$out" in
  true*) RANK_ENV=$REAL lua_on_2 "nccl: the real library's bootstrap on 2 ranks" tests/dist/nccl_real_bootstrap.lua; RANK_ENV="" ;;
  *) skip "nccl: the real library's bootstrap" "libnccl.so.2 is not available: $out" ;;
esac

# 2. the fake NCCL: every collective on cuda tensors against MPI on CPU tensors, DDP on cuda,
#    a stuck peer
out=$(env $FAKE timeout 30 "$LT" -e 'print(torch.cuda.is_available(), torch.distributed.is_nccl_available())' 2>&1)
case "$out" in
  "true	true"*) HAVE_FAKE=1 ;;
  *) HAVE_FAKE=0; skip "nccl: the fake NCCL" "the fake CUDA driver or the fake NCCL is not available: $out" ;;
esac
if [ $HAVE_FAKE = 1 ]; then
  RANK_ENV=$FAKE lua_on_2 "nccl (fake): every collective on 2 ranks" tests/dist/nccl_fake.lua
  RANK_ENV=""
  # a world of one without mpirun: what tools/gpu_check.sh runs on a GPU with the real library
  out=$(env $FAKE timeout 60 "$LT" tests/dist/nccl_one_rank.lua 2>&1); rc=$?
  if [ $rc -eq 0 ] && printf '%s\n' "$out" | grep -qE '^[0-9]+ passed, 0 failed'; then ok
  else bad "nccl (fake): a world of one without mpirun (rc $rc)" "$out"; fi
  out=$(env $FAKE $MPI "$LT" tests/dist/nccl_ddp.lua 2>&1); rc=$?
  n=$(printf '%s\n' "$out" | grep -cE '^[0-9]+ passed, 0 failed')
  if [ $rc -eq 0 ] && [ "$n" -eq 2 ]; then ok; else bad "nccl (fake): DDP on cuda (rc $rc)" "$out"; fi
  out=$(env $FAKE $MPI "$LT" tests/dist/nccl_fsdp.lua 2>&1); rc=$?
  n=$(printf '%s\n' "$out" | grep -cE '^[0-9]+ passed, 0 failed')
  if [ $rc -eq 0 ] && [ "$n" -eq 2 ]; then ok; else bad "nccl (fake): FSDP on cuda (rc $rc)" "$out"; fi

  t0=$(now)
  out=$(env $FAKE $MPI "$LT" tests/dist/nccl_fail_stuck.lua 2 2>&1); rc=$?
  el=$(secs "$t0" "$(now)")
  if [ $rc -ne 0 ]; then ok; else bad "nccl stuck peer: nonzero exit" "$out"; fi
  contains "nccl stuck peer: names the collective and ranks" "all_reduce #2 (float32, 1000 elements) on ranks {0,1} timed out after 2.0 s" "$out"
  contains "nccl stuck peer: the job is aborted" "aborting the job" "$out"
  if awk "BEGIN{exit !($el < 15)}"; then ok; else bad "nccl stuck peer: ended in ${el}s (limit 15)"; fi
  case "$out" in *UNREACHABLE*) bad "nccl stuck peer: ran past the failed collective" ;; *) ok ;; esac
  out=$(env $FAKE $MPI "$LT" tests/dist/nccl_fail_stuck.lua 2 async 2>&1); rc=$?
  if [ $rc -ne 0 ]; then ok; else bad "nccl stuck peer, async: nonzero exit" "$out"; fi
  caught=$(printf '%s\n' "$out" | grep '^CAUGHT: ')
  contains "nccl stuck peer, async: a Lua error naming the collective" "lutorch.distributed: all_reduce #2 (float32, 1000 elements) on ranks {0,1} timed out after 2.0 s" "$caught"
  # an op issued and never finished on the device: its waiter, and the watchdog without one
  out=$(env $FAKE $MPI "$LT" tests/dist/nccl_fail_stuck.lua 2 device 2>&1); rc=$?
  if [ $rc -ne 0 ]; then ok; else bad "nccl op stuck on the device: nonzero exit" "$out"; fi
  caught=$(printf '%s\n' "$out" | grep '^CAUGHT: ')
  contains "nccl op stuck on the device: the waiter's Lua error" "recv from rank 1 (float32, 1000 elements, tag 0) timed out after 2.0 s on rank 0 (on the device)" "$caught"
  t0=$(now)
  out=$(env $FAKE $MPI "$LT" tests/dist/nccl_fail_stuck.lua 2 watchdog 2>&1); rc=$?
  el=$(secs "$t0" "$(now)")
  if [ $rc -ne 0 ]; then ok; else bad "nccl op stuck, no waiter: nonzero exit" "$out"; fi
  contains "nccl op stuck, no waiter: the watchdog names it" "[rank 0] lutorch.distributed: recv from rank 1 (float32, 1000 elements, tag 0) timed out after 2.0 s on rank 0 (on the device)" "$out"
  if awk "BEGIN{exit !($el < 15)}"; then ok; else bad "nccl op stuck, no waiter: ended in ${el}s (limit 15)"; fi
  case "$out" in *UNREACHABLE*) bad "nccl op stuck, no waiter: ran on" ;; *) ok ;; esac
fi

# the mpi backend refuses cuda tensors, and init_process_group's backend names
out=$(env $FAKE timeout 30 "$LT" -e '
  local dist = torch.distributed
  print(pcall(dist.init_process_group, {backend = "nccl2"}))
  dist.init_process_group {backend = "mpi"}
  print(dist.get_backend(), pcall(dist.all_reduce, torch.ones(2, {device = "cuda"})))
  dist.destroy_process_group()' 2>&1)
contains "init_process_group: unknown backend" "unknown backend 'nccl2' (mpi, nccl" "$out"
if [ $HAVE_FAKE = 1 ]; then
  contains "the mpi backend refuses cuda tensors" "mpi	false" "$out"
  contains "the mpi backend refuses cuda tensors: why" "is not on the CPU: the mpi backend takes CPU tensors" "$out"
fi

finish
