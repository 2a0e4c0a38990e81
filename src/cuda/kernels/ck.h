/*
** ck.h — how the elementwise kernels are written, built and launched, once
** for nvcc and the host build alike.
**
** A kernel is a struct with the launch's arguments as members and a method
** run(tid, nthreads): the body of CUDA thread `tid` of `nthreads`, a
** grid-stride loop, so any grid covers the work. On the device the
** __global__ templates ck_hot<K> and ck_cold<K> call it with the thread's
** index; in the host build ck_launch calls it for every index of the same
** grid in turn. A kernel says LT_HOT or LT_COLD in its struct: hot kernels
** are launched through ck_hot, so their ptxas report names
** "ck_dev::ck_hot<...>" and make cuda-check fails when one spills registers
** (tools/ptxas_spills.sh).
**
** Every elementwise op is a functor E (out_t, in0_t, in1_t, arity 0..3,
** operator() on storage values; in2_t where arity is 3) run by ck_run (ck_run3
** for three inputs) over a geometry:
**   - dims of size 1 are dropped and dims contiguous in every operand merged;
**   - contiguous, with every pointer aligned to 16 bytes' worth of
**     elements: ck_contig, VEC elements per thread through aligned vector
**     loads and stores (4 floats, 8 halves, 16 bytes), the tail one by one;
**   - otherwise ck_strided: per element, the coordinates from the linear
**     index and each operand's offset; with 32-bit unsigned arithmetic and
**     division by multiply-and-shift (ck_index32) when the element count
**     and every offset fit in 31 bits, else 64-bit (ck_index64).
*/
#ifndef LT_CUDA_CK_H
#define LT_CUDA_CK_H
#include <string.h>
#include "cuda/kernels/kernels.h"
#include "cuda/kernels/ck_math.h"

#if defined(__CUDACC__)
#include <cuda_runtime.h>
#define CK_API(name) lt_ck_##name
#define CK_BODY __device__ __forceinline__
#else
#define CK_API(name) lt_ck_host_##name
#define CK_BODY inline
#endif
/* nvcc's host pass of __host__ __device__ code keeps no unroll pragma: the
** host compiler would warn on it, and nothing runs that code in that build */
#if defined(__CUDA_ARCH__)
#define CK_UNROLL _Pragma("unroll")
#elif defined(__CUDACC__)
#define CK_UNROLL
#else
#define CK_UNROLL _Pragma("GCC unroll 16")
#endif

/* in a kernel struct: whether cuda-check holds it to no register spills */
#define LT_HOT static constexpr bool hot = true
#define LT_COLD static constexpr bool hot = false

namespace CK_NS {

enum { CK_BLOCK = 256, CK_MAX_BLOCKS = 65536 };

/* test knobs (kernels.h), defined in table.cu */
extern bool ck_force64;
extern long ck_paths[LT_CK_NUM_PATHS];

__host__ __device__ __forceinline__ uint32_t ck_umulhi(uint32_t a, uint32_t b) {
#if defined(__CUDA_ARCH__)
  return __umulhi(a, b);
#else
  return (uint32_t)(((uint64_t)a * b) >> 32);
#endif
}

/* N elements loaded or stored as one aligned access */
template<class T, int N> struct alignas(sizeof(T) * N) ck_vec { T v[N]; };

/* the type of an absent operand */
struct ck_none {};

template<class A, class B> struct ck_same { static constexpr bool value = false; };
template<class A> struct ck_same<A, A> { static constexpr bool value = true; };

/* E::in2_t, or ck_none for the functors of fewer inputs that do not name it */
template<class...> using ck_void_t = void;
template<class E, class = void> struct ck_in2 { typedef ck_none type; };
template<class E> struct ck_in2<E, ck_void_t<typename E::in2_t>> { typedef typename E::in2_t type; };

/* whether functor E says `static constexpr bool cold = true` (an op whose math
** is a library call too big to keep in registers): its kernels launch
** through ck_cold, and cuda-check does not hold them to no spills */
template<class E, class = void> struct ck_is_cold { static constexpr bool value = false; };
template<class E> struct ck_is_cold<E, ck_void_t<decltype(E::cold)>> { static constexpr bool value = E::cold; };

/* ---- geometry ---- */

struct ck_shape {
  int ndim;                                           /* after merging, innermost first */
  int64_t numel;
  int64_t size[LT_CK_KERNEL_DIMS];
  int64_t stride[LT_CK_MAX_OPERANDS][LT_CK_KERNEL_DIMS];
  bool contiguous;                                    /* dense in order (or one element) */
  bool fits32;                                        /* count and offsets < 2^31, strides >= 0 */
};

/* nops operand rows of g; rows not `used` (absent or number operands) count as
** stride 0 everywhere. LT_CK_OK or LT_CK_EINVAL. */
static inline int ck_prepare(const lt_ck_geom *g, int nops, const bool *used, ck_shape *s) {
  if (!g || g->ndim < 0 || g->ndim > LT_CK_MAX_DIMS) return LT_CK_EINVAL;
  int64_t numel = 1;
  bool empty = false;
  for (int d = 0; d < g->ndim; d++) {
    int64_t n = g->sizes[d];
    if (n < 0) return LT_CK_EINVAL;
    if (n == 0) empty = true;
    else if (numel > INT64_MAX / n) return LT_CK_EINVAL;
    else numel *= n;
  }
  s->numel = empty ? 0 : numel;
  s->ndim = 0;
  for (int d = g->ndim - 1; d >= 0; d--) {
    int64_t n = g->sizes[d];
    if (n == 1) continue;
    int m = s->ndim;
    bool merge = m > 0;
    for (int k = 0; k < nops && merge; k++) {
      int64_t st = used[k] ? g->strides[k][d] : 0, next;
      merge = !__builtin_mul_overflow(s->stride[k][m - 1], s->size[m - 1], &next) && st == next;
    }
    if (merge) { s->size[m - 1] *= n; continue; }
    if (m == LT_CK_KERNEL_DIMS) return LT_CK_EINVAL;
    s->size[m] = n;
    for (int k = 0; k < nops; k++) s->stride[k][m] = used[k] ? g->strides[k][d] : 0;
    s->ndim = m + 1;
  }
  s->contiguous = s->ndim == 0;
  if (s->ndim == 1) {
    s->contiguous = true;
    for (int k = 0; k < nops; k++) if (used[k] && s->stride[k][0] != 1) s->contiguous = false;
  }
  s->fits32 = s->numel <= INT32_MAX;
  for (int k = 0; k < nops && s->fits32; k++) {
    int64_t reach = 0;
    for (int d = 0; d < s->ndim && s->fits32; d++) {
      int64_t st = s->stride[k][d];
      if (st < 0 || st > INT32_MAX) s->fits32 = false;
      else reach += (s->size[d] - 1) * st;             /* < 2^31 * 2^31 */
      if (reach > INT32_MAX) s->fits32 = false;
    }
  }
  return LT_CK_OK;
}

/* n / d = (umulhi(n, magic) + n) >> shift for every n < 2^31 (Granlund and
** Montgomery's round-up method); shift = ceil(log2 d) */
static inline void ck_divider(uint32_t d, uint32_t *magic, uint32_t *shift) {
  uint32_t s = 0;
  while (s < 32 && ((uint64_t)1 << s) < d) s++;
  *magic = (uint32_t)(((uint64_t)1 << 32) * (((uint64_t)1 << s) - d) / d + 1);
  *shift = s;
}

template<int N> struct ck_index32 {
  typedef uint32_t index_t;
  typedef uint32_t offset_t;
  int ndim;
  uint32_t size[LT_CK_KERNEL_DIMS], magic[LT_CK_KERNEL_DIMS], shift[LT_CK_KERNEL_DIMS];
  uint32_t stride[N][LT_CK_KERNEL_DIMS];
  void init(const ck_shape &s) {
    ndim = s.ndim;
    for (int d = 0; d < s.ndim; d++) {
      size[d] = (uint32_t)s.size[d];
      ck_divider(size[d], &magic[d], &shift[d]);
      for (int k = 0; k < N; k++) stride[k][d] = (uint32_t)s.stride[k][d];
    }
  }
  __host__ __device__ __forceinline__ void offsets(uint32_t i, uint32_t *off) const {
    CK_UNROLL for (int k = 0; k < N; k++) off[k] = 0;
    CK_UNROLL for (int d = 0; d < LT_CK_KERNEL_DIMS; d++) {
      if (d == ndim) break;
      uint32_t q = (ck_umulhi(i, magic[d]) + i) >> shift[d];
      uint32_t c = i - q * size[d];
      CK_UNROLL for (int k = 0; k < N; k++) off[k] += c * stride[k][d];
      i = q;
    }
  }
};

template<int N> struct ck_index64 {
  typedef uint64_t index_t;
  typedef int64_t offset_t;
  int ndim;
  int64_t size[LT_CK_KERNEL_DIMS];
  int64_t stride[N][LT_CK_KERNEL_DIMS];
  void init(const ck_shape &s) {
    ndim = s.ndim;
    for (int d = 0; d < s.ndim; d++) {
      size[d] = s.size[d];
      for (int k = 0; k < N; k++) stride[k][d] = s.stride[k][d];
    }
  }
  __host__ __device__ __forceinline__ void offsets(uint64_t i, int64_t *off) const {
    CK_UNROLL for (int k = 0; k < N; k++) off[k] = 0;
    CK_UNROLL for (int d = 0; d < LT_CK_KERNEL_DIMS; d++) {
      if (d == ndim) break;
      uint64_t q = i / (uint64_t)size[d];
      int64_t c = (int64_t)(i - q * (uint64_t)size[d]);
      CK_UNROLL for (int k = 0; k < N; k++) off[k] += c * stride[k][d];
      i = q;
    }
  }
};

/* ---- the two kernels every elementwise op runs on ---- */

/* an op, its output and inputs; an input whose pointer is NULL reads its number */
template<class E> struct ck_args {
  E e;
  typename E::out_t *out;
  const typename E::in0_t *in0;
  const typename E::in1_t *in1;
  const typename ck_in2<E>::type *in2;
  typename E::in0_t num0;
  typename E::in1_t num1;
  typename ck_in2<E>::type num2;
};

template<class E, class X, class Y, class Z>
__host__ __device__ __forceinline__ typename E::out_t ck_apply(const E &e, const X &x, const Y &y, const Z &z) {
  if constexpr (E::arity == 0) { (void)x; (void)y; (void)z; return e(); }
  else if constexpr (E::arity == 1) { (void)y; (void)z; return e(x); }
  else if constexpr (E::arity == 2) { (void)z; return e(x, y); }
  else return e(x, y, z);
}

template<class E, int VEC> struct ck_contig {
  static constexpr bool hot = !ck_is_cold<E>::value;
  ck_args<E> a;
  uint64_t n;
  CK_BODY void run(uint32_t tid, uint32_t nt) const {
    typedef typename E::out_t O;
    typedef typename E::in0_t X;
    typedef typename E::in1_t Y;
    typedef typename ck_in2<E>::type Z;
    const uint64_t nv = n / VEC;
    for (uint64_t v = tid; v < nv; v += nt) {
      const uint64_t i0 = v * VEC;
      ck_vec<X, VEC> x;
      ck_vec<Y, VEC> y;
      ck_vec<Z, VEC> z;
      ck_vec<O, VEC> o;
      if constexpr (E::arity >= 1) {
        if (a.in0) x = *(const ck_vec<X, VEC> *)(a.in0 + i0);
        else CK_UNROLL for (int j = 0; j < VEC; j++) x.v[j] = a.num0;
      }
      if constexpr (E::arity >= 2) {
        if (a.in1) y = *(const ck_vec<Y, VEC> *)(a.in1 + i0);
        else CK_UNROLL for (int j = 0; j < VEC; j++) y.v[j] = a.num1;
      }
      if constexpr (E::arity >= 3) {
        if (a.in2) z = *(const ck_vec<Z, VEC> *)(a.in2 + i0);
        else CK_UNROLL for (int j = 0; j < VEC; j++) z.v[j] = a.num2;
      }
      CK_UNROLL for (int j = 0; j < VEC; j++) o.v[j] = ck_apply(a.e, x.v[j], y.v[j], z.v[j]);
      *(ck_vec<O, VEC> *)(a.out + i0) = o;
    }
    const uint64_t i = nv * VEC + tid;     /* the tail: fewer than VEC elements */
    if (i < n) {
      X x = a.num0;
      Y y = a.num1;
      Z z = a.num2;
      if constexpr (E::arity >= 1) if (a.in0) x = a.in0[i];
      if constexpr (E::arity >= 2) if (a.in1) y = a.in1[i];
      if constexpr (E::arity >= 3) if (a.in2) z = a.in2[i];
      a.out[i] = ck_apply(a.e, x, y, z);
    }
  }
};

template<class E, class IX> struct ck_strided {
  static constexpr bool hot = !ck_is_cold<E>::value;
  ck_args<E> a;
  IX ix;
  typename IX::index_t n;
  CK_BODY void run(uint32_t tid, uint32_t nt) const {
    typedef typename IX::index_t I;
    for (I i = tid; i < n; i += nt) {
      typename IX::offset_t off[1 + E::arity];
      ix.offsets(i, off);
      typename E::in0_t x = a.num0;
      typename E::in1_t y = a.num1;
      typename ck_in2<E>::type z = a.num2;
      if constexpr (E::arity >= 1) if (a.in0) x = a.in0[off[1]];
      if constexpr (E::arity >= 2) if (a.in1) y = a.in1[off[2]];
      if constexpr (E::arity >= 3) if (a.in2) z = a.in2[off[3]];
      a.out[off[0]] = ck_apply(a.e, x, y, z);
    }
  }
};

/* ---- launching ---- */

#if defined(__CUDACC__)
template<class K> __global__ void __launch_bounds__(CK_BLOCK) ck_hot(const K k) {
  k.run(blockIdx.x * CK_BLOCK + threadIdx.x, gridDim.x * CK_BLOCK);
}
template<class K> __global__ void __launch_bounds__(CK_BLOCK) ck_cold(const K k) {
  k.run(blockIdx.x * CK_BLOCK + threadIdx.x, gridDim.x * CK_BLOCK);
}
#endif

/* `work` thread-sized pieces of work, on a grid of at most CK_MAX_BLOCKS
** blocks (the kernels' loops stride over the rest) */
template<class K> static inline int ck_launch(const K &k, uint64_t work, void *stream) {
  uint64_t blocks = (work + CK_BLOCK - 1) / CK_BLOCK;
  if (blocks > CK_MAX_BLOCKS) blocks = CK_MAX_BLOCKS;
  if (blocks == 0) blocks = 1;
#if defined(__CUDACC__)
  if constexpr (K::hot) ck_hot<K><<<(unsigned)blocks, CK_BLOCK, 0, (cudaStream_t)stream>>>(k);
  else ck_cold<K><<<(unsigned)blocks, CK_BLOCK, 0, (cudaStream_t)stream>>>(k);
  cudaError_t e = cudaGetLastError();
  return e == cudaSuccess ? LT_CK_OK : (int)e;
#else
  (void)stream;
  const uint32_t nt = (uint32_t)blocks * CK_BLOCK;
  for (uint32_t t = 0; t < nt; t++) k.run(t, nt);
  return LT_CK_OK;
#endif
}

static inline bool ck_aligned(const void *p, uint64_t bytes) {
  return p == nullptr || (uintptr_t)p % bytes == 0;
}

/* Run op e over geometry g: out (row 0), in0 (row 1), in1 (row 2), in2 (row
** 3) as e's arity asks; a NULL input takes its value from num0/num1/num2 (one
** element in host memory). */
template<class E>
static int ck_run3(const E &e, void *out, const void *in0, const void *in1, const void *in2,
                   const void *num0, const void *num1, const void *num2, const lt_ck_geom *g,
                   void *stream) {
  typedef typename E::out_t O;
  typedef typename E::in0_t X;
  typedef typename E::in1_t Y;
  typedef typename ck_in2<E>::type Z;
  constexpr int N = 1 + E::arity;
  static_assert(N <= LT_CK_MAX_OPERANDS, "too many operands");
  if (!out) return LT_CK_EINVAL;
  if (E::arity >= 1 && !in0 && !num0) return LT_CK_EINVAL;
  if (E::arity >= 2 && !in1 && !num1) return LT_CK_EINVAL;
  if (E::arity >= 3 && !in2 && !num2) return LT_CK_EINVAL;
  const bool used[LT_CK_MAX_OPERANDS] = {true, E::arity >= 1 && in0, E::arity >= 2 && in1,
                                         E::arity >= 3 && in2};
  ck_shape s;
  int r = ck_prepare(g, N, used, &s);
  if (r != LT_CK_OK || s.numel == 0) return r;

  ck_args<E> a = {};
  a.e = e;
  a.out = (O *)out;
  if constexpr (E::arity >= 1) {
    a.in0 = (const X *)in0;
    if (!in0) memcpy((void *)&a.num0, num0, sizeof(X));
  }
  if constexpr (E::arity >= 2) {
    a.in1 = (const Y *)in1;
    if (!in1) memcpy((void *)&a.num1, num1, sizeof(Y));
  }
  if constexpr (E::arity >= 3) {
    a.in2 = (const Z *)in2;
    if (!in2) memcpy((void *)&a.num2, num2, sizeof(Z));
  }

  constexpr int W0 = (int)sizeof(O);
  constexpr int W1 = E::arity >= 1 && (int)sizeof(X) > W0 ? (int)sizeof(X) : W0;
  constexpr int W2 = E::arity >= 2 && (int)sizeof(Y) > W1 ? (int)sizeof(Y) : W1;
  constexpr int W = E::arity >= 3 && (int)sizeof(Z) > W2 ? (int)sizeof(Z) : W2;
  constexpr int VEC = 16 / W;
  if (s.contiguous && ck_aligned(a.out, VEC * sizeof(O)) && ck_aligned(a.in0, VEC * sizeof(X)) &&
      ck_aligned(a.in1, VEC * sizeof(Y)) && ck_aligned(a.in2, VEC * sizeof(Z))) {
    ck_paths[LT_CK_PATH_VEC]++;
    ck_contig<E, VEC> k;
    k.a = a;
    k.n = (uint64_t)s.numel;
    return ck_launch(k, (uint64_t)s.numel / VEC + 1, stream);
  }
  if (s.fits32 && !ck_force64) {
    ck_paths[LT_CK_PATH_STRIDED32]++;
    ck_strided<E, ck_index32<N>> k;
    k.a = a;
    k.ix.init(s);
    k.n = (uint32_t)s.numel;
    return ck_launch(k, (uint64_t)s.numel, stream);
  }
  ck_paths[LT_CK_PATH_STRIDED64]++;
  ck_strided<E, ck_index64<N>> k;
  k.a = a;
  k.ix.init(s);
  k.n = (uint64_t)s.numel;
  return ck_launch(k, (uint64_t)s.numel, stream);
}

/* ck_run3 for functors of at most two inputs */
template<class E>
static int ck_run(const E &e, void *out, const void *in0, const void *in1, const void *num0,
                  const void *num1, const lt_ck_geom *g, void *stream) {
  return ck_run3(e, out, in0, in1, nullptr, num0, num1, nullptr, g, stream);
}

/* f(ck_tag<T>()) for the storage type T of a dtype code */
template<class T> struct ck_tag { typedef T type; };
template<class F> static inline int ck_dispatch(int dtype, F &&f) {
  switch (dtype) {
    case LT_CK_FLOAT64: return f(ck_tag<double>());
    case LT_CK_FLOAT32: return f(ck_tag<float>());
    case LT_CK_FLOAT16: return f(ck_tag<ck_half>());
    case LT_CK_BFLOAT16: return f(ck_tag<ck_bf16>());
    case LT_CK_INT64: return f(ck_tag<int64_t>());
    case LT_CK_INT32: return f(ck_tag<int32_t>());
    case LT_CK_INT16: return f(ck_tag<int16_t>());
    case LT_CK_INT8: return f(ck_tag<int8_t>());
    case LT_CK_UINT8: return f(ck_tag<uint8_t>());
    case LT_CK_BOOL: return f(ck_tag<bool>());
    default: return LT_CK_EINVAL;
  }
}

static inline int ck_dtype_size(int dtype) {
  static const signed char sz[LT_CK_NUM_DTYPES] = {8, 4, 2, 2, 8, 4, 2, 1, 1, 1};
  return dtype >= 0 && dtype < LT_CK_NUM_DTYPES ? sz[dtype] : 0;
}

} /* namespace CK_NS */
#endif
