#!/bin/sh
# gpu_bundle.sh DIR [MAX_MIB] — pack the lutorch built in DIR/build (make gpu-bundle) with
# the shared libraries it needs, for a machine that has no Lua, OpenBLAS or apt:
#   DIR/dist/lutorch, lutorch_cuda.so         the program and the CUDA module (debug info
#                                             stripped; the module is found beside the program)
#   DIR/dist/tests/test_cuda_alloc, bench/cuda_alloc_bench
#   DIR/dist/lutorch_dist.so, openmpi/   torch.distributed's module, where it was built, with the
#                                        OpenMPI components a run without mpirun opens (those
#                                        needing only OpenMPI's own libraries; dist/run points
#                                        OpenMPI there): the nccl stage of tools/gpu_check.sh
#   DIR/dist/lib/    every library ldd names that is not the C runtime (Lua, OpenBLAS and
#                    its Fortran runtime, jansson, libzip and what it needs, zlib, readline)
#   DIR/dist/sys/    the C runtime of this system (libc, libm, libmvec, libstdc++, libgcc_s
#                    and the loader), used only where the target's own is too old to run
#                    the program (dist/run: LT_BUNDLE_LOADER=1)
#   DIR/dist/run     run PROGRAM ARGS with those libraries
# then DIR/pack/lutorch-gpu.tar.gz, and fails when it is over MAX_MIB (default 48) MiB.
set -eu
DIR=${1:?usage: gpu_bundle.sh DIR [MAX_MIB]}
MAX=${2:-48}
B="$DIR/build"
D="$DIR/dist"
for f in "$B/lutorch" "$B/lutorch_cuda.so"; do
  [ -f "$f" ] || { echo "gpu_bundle: $f is missing (make gpu-bundle builds it)" >&2; exit 1; }
done
rm -rf "$D" "$DIR/pack"
mkdir -p "$D/lib" "$D/sys" "$D/tests" "$D/bench" "$DIR/pack"
strip_to() { cp "$1" "$2" && strip --strip-debug "$2" 2>/dev/null || true; }
strip_to "$B/lutorch" "$D/lutorch"
strip_to "$B/lutorch_cuda.so" "$D/lutorch_cuda.so"
[ -f "$B/tests/test_cuda_alloc" ] && strip_to "$B/tests/test_cuda_alloc" "$D/tests/test_cuda_alloc"
[ -f "$B/bench/cuda_alloc_bench" ] && strip_to "$B/bench/cuda_alloc_bench" "$D/bench/cuda_alloc_bench"
# OpenMPI opens its components at run time from its install path, which the target lacks; the
# ones that need more than OpenMPI's own libraries (InfiniBand, UCX, libfabric, PMIx...) serve
# no one-machine run and stay behind
if [ -f "$B/lutorch_dist.so" ]; then
  strip_to "$B/lutorch_dist.so" "$D/lutorch_dist.so"
  comp=$(ompi_info --parsable --path pkglibdir 2>/dev/null | sed -n 's/^path:pkglibdir://p')
  if [ -n "$comp" ] && [ -d "$comp" ]; then
    mkdir -p "$D/openmpi"
    for f in "$comp"/mca_*.so; do
      extra=$(ldd "$f" | awk '$2 == "=>" { print $1 }' | grep -vE \
        '^(libc|libm|libdl|libpthread|librt|libmpi|libopen-rte|libopen-pal|libhwloc|libz|libudev|libnuma)\.so|^libevent|^libmca_common_' || true)
      [ -z "$extra" ] && cp -L "$f" "$D/openmpi/"
    done
  fi
fi

# the C runtime goes to sys/, everything else to lib/
is_sys() {
  case "$1" in
    libc.so.*|libm.so.*|libmvec.so.*|libpthread.so.*|libdl.so.*|librt.so.*|ld-linux*|libstdc++.so.*|libgcc_s.so.*) return 0 ;;
    linux-vdso*) return 0 ;;
  esac
  return 1
}
for bin in "$D/lutorch" "$D/lutorch_cuda.so" "$D"/tests/* "$D"/bench/* "$D/lutorch_dist.so" "$D"/openmpi/*.so; do
  [ -f "$bin" ] || continue
  ldd "$bin" | while read -r name arrow path rest; do
    case "$arrow" in "=>") ;; *) continue ;; esac
    [ -f "$path" ] || continue
    if is_sys "$name"; then dest="$D/sys/$name"; else dest="$D/lib/$name"; fi
    [ -f "$dest" ] || cp -L "$path" "$dest"
  done
done
# the loader (ldd prints it without an arrow)
loader=$(ldd "$D/lutorch" | awk '/ld-linux/ { print $1 }')
cp -L "$loader" "$D/sys/ld-linux-x86-64.so.2"
cat >"$D/run" <<'RUN'
#!/bin/sh
# run PROGRAM ARGS: a program of this bundle with the bundle's libraries (lib/), before the
# system's; with LT_BUNDLE_LOADER=1 through the bundle's own loader and C runtime (sys/),
# for a system whose glibc is older than the build machine's. The CUDA module is found
# beside the program, or through LUTORCH_CUDA_SO under the loader.
D=$(cd "$(dirname "$0")" && pwd)
p=$1; shift
if [ -d "$D/openmpi" ]; then
  OMPI_MCA_mca_base_component_path=${OMPI_MCA_mca_base_component_path:-$D/openmpi}
  OMPI_MCA_mca_base_component_show_load_errors=${OMPI_MCA_mca_base_component_show_load_errors:-0}
  export OMPI_MCA_mca_base_component_path OMPI_MCA_mca_base_component_show_load_errors
fi
case "$p" in /*) ;; *) p="$D/$p" ;; esac
if [ "${LT_BUNDLE_LOADER:-0}" = 1 ]; then
  LUTORCH_CUDA_SO=${LUTORCH_CUDA_SO:-$D/lutorch_cuda.so}; export LUTORCH_CUDA_SO
  exec "$D/sys/ld-linux-x86-64.so.2" --library-path "$D/lib:$D/sys${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$p" "$@"
fi
LD_LIBRARY_PATH="$D/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" exec "$p" "$@"
RUN
chmod +x "$D/run"
git rev-parse --short HEAD >"$D/COMMIT" 2>/dev/null || echo unknown >"$D/COMMIT"
tar -czf "$DIR/pack/lutorch-gpu.tar.gz" -C "$DIR" dist
kib=$(du -k "$DIR/pack/lutorch-gpu.tar.gz" | cut -f1)
echo "gpu-bundle: $DIR/pack/lutorch-gpu.tar.gz, $((kib / 1024)) MiB packed ($(du -sk "$D" | cut -f1) KiB unpacked):"
ls "$D/lib" "$D/sys" | tr '\n' ' '; echo
if [ "$kib" -gt $((MAX * 1024)) ]; then
  echo "gpu-bundle: the pack is over $MAX MiB: it would not travel with the working tree (64 MiB in all)" >&2
  exit 1
fi
