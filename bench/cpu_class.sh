# cpu_class.sh — sourced by bench/nn.sh, fmnist.sh and tutorial_cnn.sh: CLASS=avx2 on an
# AVX-512 machine runs both sides on their AVX2 code, the code an AVX2-only machine runs
# (on this machine's caches and memory, so it stands for that class's code paths, not for a
# Zen 3's timings): lutorch's AVX2 kernels (LUTORCH_CPU_CAPABILITY, which also keeps its
# float32 products on OpenBLAS), PyTorch's (ATEN_CPU_CAPABILITY), oneDNN's JIT capped at
# AVX2 (PyTorch's convolutions) and OpenBLAS's Haswell kernels for both. Prints the CPU.
if [ "${CLASS:-}" = avx2 ]; then
  export LUTORCH_CPU_CAPABILITY=avx2 ATEN_CPU_CAPABILITY=avx2 ONEDNN_MAX_CPU_ISA=AVX2 DNNL_MAX_CPU_ISA=AVX2
  export OPENBLAS_CORETYPE=Haswell
elif [ -n "${CLASS:-}" ]; then
  echo "CLASS=$CLASS: only avx2 is known" >&2; exit 2
fi
echo "CPU: $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -1)${CLASS:+ (CLASS=$CLASS: AVX2 code paths)}"
