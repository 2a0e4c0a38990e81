/*
** index.cu — the indexing kernels (index.h): the index check, the indexed
** move/fill/accumulate every index op runs on, masked_fill's where, and the
** two-pass compaction of masked_select, masked_scatter and nonzero.
**
** Element moves depend only on the element width (one instantiation per 1,
** 2, 4, 8 bytes); accumulation is per dtype.
*/
#include "cuda/kernels/ck.h"
#include "cuda/kernels/index.h"

namespace CK_NS {

/* ---- atomics: dst = op(dst, y), race-free on the device ---- */

#if defined(__CUDA_ARCH__)
/* a 1- or 2-byte T inside its aligned 32-bit word, replaced by compare-and-swap */
template<class T, class Op> __device__ __forceinline__ void ck_cas_update(T *p, T y, const Op &op) {
  uintptr_t a = (uintptr_t)p;
  unsigned int *w = (unsigned int *)(a & ~(uintptr_t)3);
  const unsigned shift = (unsigned)(a & 3) * 8, mask = (sizeof(T) == 1 ? 0xffu : 0xffffu) << shift;
  unsigned int old = *w, assumed;
  do {
    assumed = old;
    unsigned int bits = (assumed & mask) >> shift;
    T cur;
    memcpy(&cur, &bits, sizeof(T));    /* little-endian: the low bytes */
    T nv = ck_store<T>(op(ck_load(cur), ck_load(y)));
    unsigned int nb = 0;
    memcpy(&nb, &nv, sizeof(T));
    old = atomicCAS(w, assumed, (assumed & ~mask) | (nb << shift));
  } while (assumed != old);
}
#endif

template<class T> struct ck_accum {
  ck_op_add<typename ck_type<T>::C> op;     /* x + alpha * y, as index_add and the CPU */
  __host__ __device__ __forceinline__ void operator()(T *p, T y) const {
#if defined(__CUDA_ARCH__)
    typedef typename ck_type<T>::C C;
    if constexpr (ck_same<T, float>::value || ck_same<T, double>::value) atomicAdd(p, op.alpha * y);
    else if constexpr (ck_same<T, int32_t>::value)
      atomicAdd((unsigned int *)p, (unsigned int)op.alpha * (unsigned int)y);   /* wraps as the CPU */
    else if constexpr (ck_same<T, int64_t>::value)
      atomicAdd((unsigned long long *)p, (unsigned long long)op.alpha * (unsigned long long)y);
    else { (void)sizeof(C); ck_cas_update(p, y, op); }
#else
    *p = ck_store<T>(op(ck_load(*p), ck_load(y)));
#endif
  }
};

/* ---- the index check ---- */

struct ck_ix_checker {
  LT_COLD;
  const int64_t *idx;
  int64_t n, size;
  bool negative_ok;
  int64_t *first_bad;
  CK_BODY void run(uint32_t tid, uint32_t nt) const {
    for (int64_t i = tid; i < n; i += nt) {
      int64_t x = idx[i];
      bool ok = negative_ok ? x != 0 && x <= size && x >= -size : x >= 1 && x <= size;
      if (ok) continue;
#if defined(__CUDA_ARCH__)
      atomicMin((unsigned long long *)first_bad, (unsigned long long)i);
#else
      if (i < *first_bad) *first_bad = i;
#endif
      return;   /* later positions of this thread are larger */
    }
  }
};

static int ix_check(const int64_t *idx, int64_t n, int64_t size, int negative_ok, int64_t *first_bad, void *stream) {
  if (n < 0 || (n > 0 && (!idx || !first_bad))) return LT_CK_EINVAL;
  if (n == 0) return LT_CK_OK;
  ck_ix_checker k = {idx, n, size, negative_ok != 0, first_bad};
  return ck_launch(k, (uint64_t)n, stream);
}

/* ---- the indexed kernel ---- */

template<class T, int MODE> struct ck_indexed {
  LT_COLD;
  T *out;
  const T *in;
  const int64_t *idx;
  T value;
  ck_accum<T> acc;
  lt_ck_ix_geom g;
  uint64_t n;
  CK_BODY void run(uint32_t tid, uint32_t nt) const {
    for (uint64_t i = tid; i < n; i += nt) {
      int64_t o0 = 0, o1 = 0, o2 = 0;
      uint64_t r = i;
      for (int d = g.ndim - 1; d >= 0; d--) {
        uint64_t s = (uint64_t)g.sizes[d], q = r / s;
        int64_t c = (int64_t)(r - q * s);
        o0 += c * g.strides[0][d];
        o1 += c * g.strides[1][d];
        o2 += c * g.strides[2][d];
        r = q;
      }
      int64_t x = idx[o2];
      int64_t v = x > 0 ? x - 1 : x + g.ixsize;
      if (v == g.skip) continue;
      if constexpr (MODE == LT_CK_IX_GATHER) out[o0] = in[o1 + v * g.in_ixstride];
      else if constexpr (MODE == LT_CK_IX_SCATTER) out[o0 + v * g.out_ixstride] = in[o1];
      else if constexpr (MODE == LT_CK_IX_FILL) out[o0 + v * g.out_ixstride] = value;
      else acc(out + o0 + v * g.out_ixstride, in[o1]);
    }
  }
};

template<class T, int MODE>
static int ix_launch(void *out, const void *in, const int64_t *idx, const void *value, lt_ck_scalar alpha,
                     const lt_ck_ix_geom *g, uint64_t n, void *stream) {
  ck_indexed<T, MODE> k;
  k.out = (T *)out;
  k.in = (const T *)in;
  k.idx = idx;
  k.value = T();
  if (value) memcpy((void *)&k.value, value, sizeof(T));
  k.acc.op.alpha = ck_number<T>(alpha.f, alpha.i);
  k.g = *g;
  k.n = n;
  return ck_launch(k, n, stream);
}

template<int MODE>
static int ix_by_width(int dtype, void *out, const void *in, const int64_t *idx, const void *value,
                       const lt_ck_ix_geom *g, uint64_t n, void *stream) {
  lt_ck_scalar none = {0, 0};
  switch (ck_dtype_size(dtype)) {
    case 8: return ix_launch<uint64_t, MODE>(out, in, idx, value, none, g, n, stream);
    case 4: return ix_launch<uint32_t, MODE>(out, in, idx, value, none, g, n, stream);
    case 2: return ix_launch<uint16_t, MODE>(out, in, idx, value, none, g, n, stream);
    case 1: return ix_launch<uint8_t, MODE>(out, in, idx, value, none, g, n, stream);
    default: return LT_CK_EINVAL;
  }
}

static int ix_run(int mode, int dtype, void *out, const void *in, const int64_t *idx, const void *value,
                  lt_ck_scalar alpha, const lt_ck_ix_geom *g, void *stream) {
  if (!g || g->ndim < 0 || g->ndim > LT_CK_MAX_DIMS || ck_dtype_size(dtype) == 0) return LT_CK_EINVAL;
  uint64_t n = 1;
  for (int d = 0; d < g->ndim; d++) {
    if (g->sizes[d] < 0) return LT_CK_EINVAL;
    n *= (uint64_t)g->sizes[d];
  }
  if (n == 0) return LT_CK_OK;
  if (!out || !idx || (mode != LT_CK_IX_FILL && !in) || (mode == LT_CK_IX_FILL && !value)) return LT_CK_EINVAL;
  switch (mode) {
    case LT_CK_IX_GATHER: return ix_by_width<LT_CK_IX_GATHER>(dtype, out, in, idx, value, g, n, stream);
    case LT_CK_IX_SCATTER: return ix_by_width<LT_CK_IX_SCATTER>(dtype, out, in, idx, value, g, n, stream);
    case LT_CK_IX_FILL: return ix_by_width<LT_CK_IX_FILL>(dtype, out, in, idx, value, g, n, stream);
    case LT_CK_IX_ADD:
      return ck_dispatch(dtype, [&](auto tag) {
        typedef typename decltype(tag)::type T;
        return ix_launch<T, LT_CK_IX_ADD>(out, in, idx, value, alpha, g, n, stream);
      });
    default: return LT_CK_EINVAL;
  }
}

/* ---- masked_fill: out = mask ? value : in ---- */

template<class U> struct ck_where_value {
  typedef U out_t;
  typedef U in0_t;
  typedef bool in1_t;
  static constexpr int arity = 2;
  U value;
  __host__ __device__ __forceinline__ U operator()(U x, bool m) const { return m ? value : x; }
};

template<class U> static int where_as(void *out, const void *in, const bool *mask, const void *value,
                                      const lt_ck_geom *g, void *stream) {
  ck_where_value<U> e;
  memcpy((void *)&e.value, value, sizeof(U));
  return ck_run(e, out, in, mask, nullptr, nullptr, g, stream);
}

static int mask_where(int dtype, void *out, const void *in, const bool *mask, const void *value, const lt_ck_geom *g,
                      void *stream) {
  if (!out || !in || !mask || !value) return LT_CK_EINVAL;
  switch (ck_dtype_size(dtype)) {
    case 8: return where_as<uint64_t>(out, in, mask, value, g, stream);
    case 4: return where_as<uint32_t>(out, in, mask, value, g, stream);
    case 2: return where_as<uint16_t>(out, in, mask, value, g, stream);
    case 1: return where_as<uint8_t>(out, in, mask, value, g, stream);
    default: return LT_CK_EINVAL;
  }
}

/* ---- compaction: count per chunk, scan, write ---- */

struct ck_chunk_count {
  LT_COLD;
  const bool *mask;
  int64_t n, nchunks;
  int64_t *counts;
  CK_BODY void run(uint32_t tid, uint32_t nt) const {
    for (int64_t c = tid; c < nchunks; c += nt) {
      int64_t b = c * LT_CK_MASK_CHUNK, e = b + LT_CK_MASK_CHUNK < n ? b + LT_CK_MASK_CHUNK : n, k = 0;
      for (int64_t i = b; i < e; i++) k += mask[i];
      counts[c] = k;
    }
  }
};

/* one thread: the chunks are few (n / 4096) */
struct ck_chunk_scan {
  LT_COLD;
  int64_t nchunks;
  int64_t *counts;
  CK_BODY void run(uint32_t tid, uint32_t) const {
    if (tid != 0) return;
    int64_t s = 0;
    for (int64_t c = 0; c < nchunks; c++) { int64_t k = counts[c]; counts[c] = s; s += k; }
    counts[nchunks] = s;
  }
};

static int mask_count(const bool *mask, int64_t n, int64_t *counts, void *stream) {
  if (n < 0 || !counts || (n > 0 && !mask)) return LT_CK_EINVAL;
  int64_t nchunks = (n + LT_CK_MASK_CHUNK - 1) / LT_CK_MASK_CHUNK;
  ck_chunk_count k1 = {mask, n, nchunks, counts};
  int rc = nchunks > 0 ? ck_launch(k1, (uint64_t)nchunks, stream) : LT_CK_OK;
  if (rc != LT_CK_OK) return rc;
  ck_chunk_scan k2 = {nchunks, counts};
  return ck_launch(k2, 1, stream);
}

template<class U, int MODE> struct ck_compact {
  LT_COLD;
  U *out;
  const U *src;
  const bool *mask;
  int64_t n, nchunks;
  const int64_t *counts;
  int ndim;
  int64_t sizes[LT_CK_MAX_DIMS];
  CK_BODY void run(uint32_t tid, uint32_t nt) const {
    for (int64_t c = tid; c < nchunks; c += nt) {
      int64_t b = c * LT_CK_MASK_CHUNK, e = b + LT_CK_MASK_CHUNK < n ? b + LT_CK_MASK_CHUNK : n, k = counts[c];
      for (int64_t i = b; i < e; i++) {
        if (!mask[i]) continue;
        if constexpr (MODE == LT_CK_MASK_SELECT) out[k] = src[i];
        else if constexpr (MODE == LT_CK_MASK_SCATTER) out[i] = src[k];
        else {
          uint64_t r = (uint64_t)i;
          for (int d = ndim - 1; d >= 0; d--) {
            uint64_t s = (uint64_t)sizes[d], q = r / s;
            out[k * ndim + d] = (U)(r - q * s + 1);
            r = q;
          }
        }
        k++;
      }
    }
  }
};

template<class U, int MODE>
static int compact_as(void *out, const void *src, const bool *mask, int64_t n, const int64_t *counts, int ndim,
                      const int64_t *sizes, void *stream) {
  ck_compact<U, MODE> k;
  k.out = (U *)out;
  k.src = (const U *)src;
  k.mask = mask;
  k.n = n;
  k.nchunks = (n + LT_CK_MASK_CHUNK - 1) / LT_CK_MASK_CHUNK;
  k.counts = counts;
  k.ndim = ndim;
  for (int d = 0; d < ndim; d++) k.sizes[d] = sizes[d];
  return ck_launch(k, (uint64_t)k.nchunks, stream);
}

template<int MODE>
static int compact_by_width(int es, void *out, const void *src, const bool *mask, int64_t n, const int64_t *counts,
                            void *stream) {
  switch (es) {
    case 8: return compact_as<uint64_t, MODE>(out, src, mask, n, counts, 0, nullptr, stream);
    case 4: return compact_as<uint32_t, MODE>(out, src, mask, n, counts, 0, nullptr, stream);
    case 2: return compact_as<uint16_t, MODE>(out, src, mask, n, counts, 0, nullptr, stream);
    case 1: return compact_as<uint8_t, MODE>(out, src, mask, n, counts, 0, nullptr, stream);
    default: return LT_CK_EINVAL;
  }
}

static int mask_compact(int mode, int es, void *out, const void *src, const bool *mask, int64_t n,
                        const int64_t *counts, int ndim, const int64_t *sizes, void *stream) {
  if (n < 0 || ndim < 0 || ndim > LT_CK_MAX_DIMS) return LT_CK_EINVAL;
  if (n == 0) return LT_CK_OK;
  if (!out || !mask || !counts || (mode != LT_CK_MASK_NONZERO && !src)) return LT_CK_EINVAL;
  switch (mode) {
    case LT_CK_MASK_SELECT: return compact_by_width<LT_CK_MASK_SELECT>(es, out, src, mask, n, counts, stream);
    case LT_CK_MASK_SCATTER: return compact_by_width<LT_CK_MASK_SCATTER>(es, out, src, mask, n, counts, stream);
    case LT_CK_MASK_NONZERO:
      if (ndim > 0 && !sizes) return LT_CK_EINVAL;
      return compact_as<int64_t, LT_CK_MASK_NONZERO>(out, nullptr, mask, n, counts, ndim, sizes, stream);
    default: return LT_CK_EINVAL;
  }
}

/* ---- histc ---- */

struct ck_histogram {
  LT_COLD;
  const double *x;
  int64_t n, bins;
  double lo, hi;
  double *counts;
  CK_BODY void run(uint32_t tid, uint32_t nt) const {
    for (int64_t i = tid; i < n; i += nt) {
      double e = x[i];
      if (e < lo || e > hi) continue;
      int64_t b = e != e ? 0 : (int64_t)((e - lo) * (double)bins / (hi - lo));
      if (b >= bins) b = bins - 1;
#if defined(__CUDA_ARCH__)
      atomicAdd(counts + b, 1.0);
#else
      counts[b] += 1;
#endif
    }
  }
};

static int histc(const double *x, int64_t n, double lo, double hi, int64_t bins, double *counts, void *stream) {
  if (n < 0 || bins <= 0) return LT_CK_EINVAL;
  if (n == 0) return LT_CK_OK;
  if (!x || !counts) return LT_CK_EINVAL;
  ck_histogram k = {x, n, bins, lo, hi, counts};
  return ck_launch(k, (uint64_t)n, stream);
}

} /* namespace CK_NS */

#if defined(__CUDACC__)
#define CK_INDEX_NAME "sm_90"
#define CK_INDEX_TABLE lt_ck_index_device_kernels
#else
#define CK_INDEX_NAME "host"
#define CK_INDEX_TABLE lt_ck_host_index_kernels
#endif

static const lt_ck_index_kernels ck_index_table = {
  CK_INDEX_NAME, CK_NS::ix_check, CK_NS::ix_run, CK_NS::mask_where, CK_NS::mask_count, CK_NS::mask_compact,
  CK_NS::histc,
};

extern "C" const lt_ck_index_kernels *CK_INDEX_TABLE(void) { return &ck_index_table; }
