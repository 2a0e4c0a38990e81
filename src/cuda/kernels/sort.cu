/*
** sort.cu — the sorting kernels (sort.h): rows sorted by a per-row stable
** merge sort (both builds) or, in the device build, by CUB's radix sort;
** the per-row picks of kthvalue, median, nanmedian and mode; unique's runs.
*/
#include "cuda/kernels/ck.h"
#include "cuda/kernels/index.h"   /* LT_CK_MASK_CHUNK: mask_count's chunks, which unique_write walks */
#include "cuda/kernels/sort.h"
#if defined(__CUDACC__)
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_segmented_radix_sort.cuh>
#endif

namespace CK_NS {

enum { CK_SORT_RUN = 32, CK_SORT_CUB_MIN = 64 };   /* insertion-sort run; shortest row CUB sorts */

template<class T> __host__ __device__ __forceinline__ bool ck_isnan(T x) {
  if constexpr (ck_type<T>::is_float) { typename ck_type<T>::C c = ck_load(x); return c != c; }
  else { (void)x; return false; }
}

/* a before b in the order (stable: ties keep their order) */
template<class T, bool DESC> __host__ __device__ __forceinline__ bool ck_before(T a, T b) {
  typename ck_type<T>::C x = ck_load(a), y = ck_load(b);
  if constexpr (DESC) return x > y || (ck_isnan(a) && !ck_isnan(b));
  else return x < y || (!ck_isnan(a) && ck_isnan(b));
}

/* one thread per row: sort the positions p[0..len) of x by value, through t */
template<class T, bool DESC> struct ck_sort_row {
  LT_COLD;
  const T *keys;
  T *values;
  int64_t *indices, *tmp;
  int64_t nrows, len;
  CK_BODY void run(uint32_t tid, uint32_t nt) const {
    for (int64_t r = tid; r < nrows; r += nt) {
      const T *x = keys + r * len;
      int64_t *p = indices + r * len, *t = tmp + r * len;
      for (int64_t j = 0; j < len; j++) p[j] = j;
      for (int64_t s = 0; s < len; s += CK_SORT_RUN) {
        int64_t e = s + CK_SORT_RUN < len ? s + CK_SORT_RUN : len;
        for (int64_t i = s + 1; i < e; i++) {
          int64_t q = p[i], j = i;
          while (j > s && ck_before<T, DESC>(x[q], x[p[j - 1]])) { p[j] = p[j - 1]; j--; }
          p[j] = q;
        }
      }
      int64_t *src = p, *dst = t;
      for (int64_t w = CK_SORT_RUN; w < len; w *= 2) {
        for (int64_t s = 0; s < len; s += 2 * w) {
          int64_t m = s + w < len ? s + w : len, e = s + 2 * w < len ? s + 2 * w : len, i = s, j = m, k = s;
          while (i < m && j < e) dst[k++] = ck_before<T, DESC>(x[src[j]], x[src[i]]) ? src[j++] : src[i++];
          while (i < m) dst[k++] = src[i++];
          while (j < e) dst[k++] = src[j++];
        }
        int64_t *sw = src; src = dst; dst = sw;
      }
      for (int64_t j = 0; j < len; j++) {
        int64_t q = src[j];
        values[r * len + j] = x[q];
        p[j] = q + 1;   /* src may be t: p is written at or after where it is read */
      }
    }
  }
};

#if defined(__CUDACC__)
/* ---- the CUB path ---- */

/* the key CUB sorts for T: bool as its byte */
template<class T> struct ck_radix_key { typedef T type; };
template<> struct ck_radix_key<bool> { typedef uint8_t type; };

/* canonical keys (one NaN, one zero) and each element's position in its row */
template<class T> struct ck_radix_prep {
  LT_COLD;
  const T *keys;
  typename ck_radix_key<T>::type *canon;
  int64_t *pos;
  int64_t n, len;
  CK_BODY void run(uint32_t tid, uint32_t nt) const {
    typedef typename ck_radix_key<T>::type K;
    for (int64_t i = tid; i < n; i += nt) {
      T x = keys[i];
      if constexpr (ck_type<T>::is_float) {
        typedef typename ck_type<T>::C C;
        C c = ck_load(x);
        if (c != c) x = ck_store<T>((C)NAN);
        else if (c == (C)0) x = ck_store<T>((C)0);
      }
      K k;
      memcpy(&k, &x, sizeof k);
      canon[i] = k;
      pos[i] = i % len;
    }
  }
};

struct ck_row_offsets {
  LT_COLD;
  int *off;
  int64_t nrows, len;
  CK_BODY void run(uint32_t tid, uint32_t nt) const {
    for (int64_t r = tid; r <= nrows; r += nt) off[r] = (int)(r * len);
  }
};

/* values from the sorted positions; positions made 1-based */
template<class T> struct ck_radix_finish {
  LT_COLD;
  const T *keys;
  T *values;
  int64_t *indices;
  int64_t n, len;
  CK_BODY void run(uint32_t tid, uint32_t nt) const {
    for (int64_t i = tid; i < n; i += nt) {
      int64_t q = indices[i];
      values[i] = keys[i - i % len + q];
      indices[i] = q + 1;
    }
  }
};

static inline size_t ck_align(size_t b) { return (b + 255) & ~(size_t)255; }

/* the temporary's layout: canonical keys, sorted keys, positions, offsets, CUB's own */
template<class T> struct ck_radix_layout {
  typedef typename ck_radix_key<T>::type K;
  size_t keys, pos, off, cub, total;
  bool ok;
  ck_radix_layout(int64_t nrows, int64_t len) {
    size_t n = (size_t)(nrows * len);
    keys = ck_align(n * sizeof(K));
    pos = ck_align(n * sizeof(int64_t));
    off = ck_align((size_t)(nrows + 1) * sizeof(int));
    cub = 0;
    ok = nrows * len <= INT32_MAX;
    if (!ok) { total = 0; return; }
    size_t a = 0, b = 0;
    cudaError_t e1 = cub::DeviceRadixSort::SortPairs(nullptr, a, (const K *)nullptr, (K *)nullptr,
                                                     (const int64_t *)nullptr, (int64_t *)nullptr, (int)n);
    cudaError_t e2 = cub::DeviceSegmentedRadixSort::SortPairs(nullptr, b, (const K *)nullptr, (K *)nullptr,
                                                              (const int64_t *)nullptr, (int64_t *)nullptr, (int)n,
                                                              (int)nrows, (const int *)nullptr, (const int *)nullptr);
    ok = e1 == cudaSuccess && e2 == cudaSuccess;
    cub = a > b ? a : b;
    total = 2 * keys + pos + off + ck_align(cub);
  }
};

template<class T>
static int ck_radix_sort(const T *keys, T *values, int64_t *indices, int64_t nrows, int64_t len, bool desc, void *tmp,
                         size_t tmp_bytes, void *stream) {
  typedef typename ck_radix_key<T>::type K;
  ck_radix_layout<T> L(nrows, len);
  if (!L.ok || tmp_bytes < L.total) return LT_CK_EINVAL;
  char *base = (char *)tmp;
  K *canon = (K *)base, *sorted = (K *)(base + L.keys);
  int64_t *pos = (int64_t *)(base + 2 * L.keys);
  int *off = (int *)(base + 2 * L.keys + L.pos);
  void *ctmp = base + 2 * L.keys + L.pos + L.off;
  const int64_t n = nrows * len;
  cudaStream_t s = (cudaStream_t)stream;
  ck_radix_prep<T> k1 = {keys, canon, pos, n, len};
  int rc = ck_launch(k1, (uint64_t)n, stream);
  if (rc != LT_CK_OK) return rc;
  size_t cb = L.cub;
  cudaError_t e;
  if (nrows == 1) {
    e = desc ? cub::DeviceRadixSort::SortPairsDescending(ctmp, cb, canon, sorted, pos, indices, (int)n, 0,
                                                         (int)sizeof(K) * 8, s)
             : cub::DeviceRadixSort::SortPairs(ctmp, cb, canon, sorted, pos, indices, (int)n, 0, (int)sizeof(K) * 8, s);
  } else {
    ck_row_offsets k2 = {off, nrows, len};
    if ((rc = ck_launch(k2, (uint64_t)nrows + 1, stream)) != LT_CK_OK) return rc;
    e = desc ? cub::DeviceSegmentedRadixSort::SortPairsDescending(ctmp, cb, canon, sorted, pos, indices, (int)n,
                                                                  (int)nrows, off, off + 1, 0, (int)sizeof(K) * 8, s)
             : cub::DeviceSegmentedRadixSort::SortPairs(ctmp, cb, canon, sorted, pos, indices, (int)n, (int)nrows, off,
                                                        off + 1, 0, (int)sizeof(K) * 8, s);
  }
  if (e != cudaSuccess) return (int)e;
  ck_radix_finish<T> k3 = {keys, values, indices, n, len};
  return ck_launch(k3, (uint64_t)n, stream);
}
#endif

static size_t sort_tmp_bytes(int dtype, int64_t nrows, int64_t len) {
  size_t need = (size_t)(nrows * len) * sizeof(int64_t) + 8;   /* the merge path's positions */
#if defined(__CUDACC__)
  if (len >= CK_SORT_CUB_MIN)
    (void)ck_dispatch(dtype, [&](auto tag) {
      typedef typename decltype(tag)::type T;
      ck_radix_layout<T> L(nrows, len);
      if (L.ok && L.total > need) need = L.total;
      return 0;
    });
#else
  (void)dtype;
#endif
  return need;
}

static int sort_rows(int dtype, const void *keys, void *values, int64_t *indices, int64_t nrows, int64_t len,
                     int descending, void *tmp, size_t tmp_bytes, void *stream) {
  if (nrows < 0 || len < 0) return LT_CK_EINVAL;
  if (nrows == 0 || len == 0) return LT_CK_OK;
  if (!keys || !values || !indices || !tmp) return LT_CK_EINVAL;
  return ck_dispatch(dtype, [&](auto tag) {
    typedef typename decltype(tag)::type T;
#if defined(__CUDACC__)
    if (len >= CK_SORT_CUB_MIN) {
      ck_radix_layout<T> L(nrows, len);
      if (L.ok && tmp_bytes >= L.total)
        return ck_radix_sort<T>((const T *)keys, (T *)values, indices, nrows, len, descending != 0, tmp, tmp_bytes,
                                stream);
    }
#endif
    if (tmp_bytes < (size_t)(nrows * len) * sizeof(int64_t)) return (int)LT_CK_EINVAL;
    if (descending) {
      ck_sort_row<T, true> k = {(const T *)keys, (T *)values, indices, (int64_t *)tmp, nrows, len};
      return ck_launch(k, (uint64_t)nrows, stream);
    }
    ck_sort_row<T, false> k = {(const T *)keys, (T *)values, indices, (int64_t *)tmp, nrows, len};
    return ck_launch(k, (uint64_t)nrows, stream);
  });
}

/* ---- picks ---- */

template<class T> struct ck_pick {
  LT_COLD;
  int kind;
  const T *values;
  const int64_t *indices;
  int64_t nrows, len, k;
  T *out;
  int64_t *out_idx;
  CK_BODY void run(uint32_t tid, uint32_t nt) const {
    typedef typename ck_type<T>::C C;
    for (int64_t r = tid; r < nrows; r += nt) {
      const T *v = values + r * len;
      const int64_t *ix = indices + r * len;
      int64_t pick = 0, at = -1;
      if (kind == LT_CK_PICK_KTH) pick = k;
      else if (kind == LT_CK_PICK_MEDIAN || kind == LT_CK_PICK_NANMEDIAN) {
        int64_t nn = len;
        while (nn > 0 && ck_isnan(v[nn - 1])) nn--;
        if (nn < len && (kind == LT_CK_PICK_MEDIAN || nn == 0)) pick = nn;   /* the first NaN */
        else pick = (nn - 1) / 2;
      } else {   /* mode: the longest run, the first (smallest) on ties, its last index */
        int64_t blen = 0;
        for (int64_t s = 0; s < len;) {
          int64_t e = s + 1, last = ix[s];
          C x = ck_load(v[s]);
          while (e < len && ck_load(v[e]) == x) { if (ix[e] > last) last = ix[e]; e++; }
          if (e - s > blen) { blen = e - s; pick = s; at = last; }
          s = e;
        }
      }
      out[r] = v[pick];
      out_idx[r] = at >= 0 ? at : ix[pick];
    }
  }
};

static int sort_pick(int kind, int dtype, const void *values, const int64_t *indices, int64_t nrows, int64_t len,
                     int64_t k, void *out_values, int64_t *out_indices, void *stream) {
  if (nrows < 0 || len < 0 || k < 0 || (len > 0 && k >= len && kind == LT_CK_PICK_KTH)) return LT_CK_EINVAL;
  if (nrows == 0 || len == 0) return LT_CK_OK;
  if (!values || !indices || !out_values || !out_indices) return LT_CK_EINVAL;
  return ck_dispatch(dtype, [&](auto tag) {
    typedef typename decltype(tag)::type T;
    ck_pick<T> kk = {kind, (const T *)values, indices, nrows, len, k, (T *)out_values, out_indices};
    return ck_launch(kk, (uint64_t)nrows, stream);
  });
}

/* ---- unique over one sorted row ---- */

template<class T> struct ck_run_starts {
  LT_COLD;
  const T *v;
  int64_t n;
  bool *flags;
  CK_BODY void run(uint32_t tid, uint32_t nt) const {
    for (int64_t i = tid; i < n; i += nt) flags[i] = i == 0 || !(ck_load(v[i]) == ck_load(v[i - 1]));
  }
};

static int unique_flags(int dtype, const void *values, int64_t n, bool *flags, void *stream) {
  if (n < 0 || (n > 0 && (!values || !flags))) return LT_CK_EINVAL;
  if (n == 0) return LT_CK_OK;
  return ck_dispatch(dtype, [&](auto tag) {
    typedef typename decltype(tag)::type T;
    ck_run_starts<T> k = {(const T *)values, n, flags};
    return ck_launch(k, (uint64_t)n, stream);
  });
}

template<class U> struct ck_unique_write {
  LT_COLD;
  const U *v;
  const int64_t *ix;
  const bool *flags;
  int64_t n;
  const int64_t *counts;
  U *out;
  int64_t *start, *inverse;
  CK_BODY void run(uint32_t tid, uint32_t nt) const {
    int64_t nchunks = (n + LT_CK_MASK_CHUNK - 1) / LT_CK_MASK_CHUNK;
    for (int64_t c = tid; c < nchunks; c += nt) {
      int64_t b = c * LT_CK_MASK_CHUNK, e = b + LT_CK_MASK_CHUNK < n ? b + LT_CK_MASK_CHUNK : n, k = counts[c];
      for (int64_t i = b; i < e; i++) {
        if (flags[i]) { out[k] = v[i]; start[k] = i; k++; }
        inverse[ix[i] - 1] = k;
      }
    }
  }
};

static int unique_write(int dtype, const void *values, const int64_t *indices, const bool *flags, int64_t n,
                        const int64_t *counts, void *out, int64_t *start, int64_t *inverse, void *stream) {
  if (n < 0) return LT_CK_EINVAL;
  if (n == 0) return LT_CK_OK;
  if (!values || !indices || !flags || !counts || !out || !start || !inverse) return LT_CK_EINVAL;
  uint64_t work = (uint64_t)((n + LT_CK_MASK_CHUNK - 1) / LT_CK_MASK_CHUNK);
  switch (ck_dtype_size(dtype)) {
#define CK_UW(U) { ck_unique_write<U> k = {(const U *)values, indices, flags, n, counts, (U *)out, start, inverse}; \
                   return ck_launch(k, work, stream); }
    case 8: CK_UW(uint64_t)
    case 4: CK_UW(uint32_t)
    case 2: CK_UW(uint16_t)
    case 1: CK_UW(uint8_t)
#undef CK_UW
    default: return LT_CK_EINVAL;
  }
}

struct ck_run_lengths {
  LT_COLD;
  const int64_t *start;
  int64_t nu, n;
  int64_t *cnt;
  CK_BODY void run(uint32_t tid, uint32_t nt) const {
    for (int64_t u = tid; u < nu; u += nt) cnt[u] = (u + 1 < nu ? start[u + 1] : n) - start[u];
  }
};

static int unique_counts(const int64_t *start, int64_t nu, int64_t n, int64_t *cnt, void *stream) {
  if (nu < 0) return LT_CK_EINVAL;
  if (nu == 0) return LT_CK_OK;
  if (!start || !cnt) return LT_CK_EINVAL;
  ck_run_lengths k = {start, nu, n, cnt};
  return ck_launch(k, (uint64_t)nu, stream);
}

/* ---- binary search ---- */

template<class T> struct ck_search {
  LT_COLD;
  const T *seq;
  const int64_t *sorter;
  int64_t n, per;
  const T *x;
  int64_t m;
  bool right, invert;
  int kind;
  void *out;
  CK_BODY void run(uint32_t tid, uint32_t nt) const {
    for (int64_t i = tid; i < m; i += nt) {
      int64_t row = per ? i / per : 0, lo = 0, hi = n;
      const T *v = seq + row * n;
      const int64_t *srt = sorter ? sorter + row * n : nullptr;
      T xv = x[i];
      /* searchsorted moves right while not (s >= x) (s > x right): NaN values (sorted
      ** last) and a NaN x go to the end, as the CPU's; isin's lower bound moves right
      ** while s < x, so a NaN x (which matches nothing) stops anywhere */
      const bool isin = kind == LT_CK_SEARCH_ISIN;
      while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        T s = v[srt ? srt[mid] - 1 : mid];
        if (isin ? s < xv : right ? !(s > xv) : !(s >= xv)) lo = mid + 1;
        else hi = mid;
      }
      if (kind == LT_CK_SEARCH_I64) ((int64_t *)out)[i] = lo + 1;
      else if (kind == LT_CK_SEARCH_I32) ((int32_t *)out)[i] = (int32_t)(lo + 1);
      else ((bool *)out)[i] = (lo < n && v[srt ? srt[lo] - 1 : lo] == xv) != invert;
    }
  }
};

static int search(int dtype, const void *seq, const int64_t *sorter, int64_t n, int64_t per, const void *x,
                  int64_t m, int right, int out_kind, int invert, void *out, void *stream) {
  if (n < 0 || m < 0 || per < 0) return LT_CK_EINVAL;
  if (m == 0) return LT_CK_OK;
  if ((n > 0 && !seq) || !x || !out) return LT_CK_EINVAL;
  if (dtype == LT_CK_FLOAT64) {
    ck_search<double> k = {(const double *)seq, sorter, n, per, (const double *)x, m, right != 0, invert != 0,
                           out_kind, out};
    return ck_launch(k, (uint64_t)m, stream);
  }
  if (dtype == LT_CK_INT64) {
    ck_search<int64_t> k = {(const int64_t *)seq, sorter, n, per, (const int64_t *)x, m, right != 0, invert != 0,
                            out_kind, out};
    return ck_launch(k, (uint64_t)m, stream);
  }
  return LT_CK_EUNSUPPORTED;
}

} /* namespace CK_NS */

#if defined(__CUDACC__)
#define CK_SORT_NAME "sm_90"
#define CK_SORT_TABLE lt_ck_sort_device_kernels
#else
#define CK_SORT_NAME "host"
#define CK_SORT_TABLE lt_ck_host_sort_kernels
#endif

static const lt_ck_sort_kernels ck_sort_table = {
  CK_SORT_NAME, CK_NS::sort_tmp_bytes, CK_NS::sort_rows, CK_NS::sort_pick,
  CK_NS::unique_flags, CK_NS::unique_write, CK_NS::unique_counts, CK_NS::search,
};

extern "C" const lt_ck_sort_kernels *CK_SORT_TABLE(void) { return &ck_sort_table; }
