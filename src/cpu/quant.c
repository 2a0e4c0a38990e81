/*
** quant.c — the CPU's quantization kernels that are not products: affine
** quantize and dequantize (per tensor, per channel), int4 packing and
** unpacking, the quantized embedding lookups, and the choice of the
** instruction-set path (cpu/quant.h). The linear kernels are in
** quant_gemm.c. Formats and error bounds: meta/quant.h, man/quantization.md.
**
** Rounding is PyTorch's (fbgemm's Quantize): q = zp + nearbyint(x * (1/s)),
** with 1/s taken in float32 and nearbyint rounding half to even (the default
** rounding mode), then clamped to the storage type's range.
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "core/tensor.h"
#include "core/error.h"
#include "cpu/parallel.h"
#include "cpu/capability.h"
#include "cpu/quant.h"
#include "kernels_cpu.h"   /* generated: lt_ops.h and the CPU kernels */
#include "meta/quant.h"

/* ---- instruction-set paths ---------------------------------------------- */

static const char *ISA_NAMES[] = {"portable", "avx2", "avx512", "avx512_vnni"};

const char *lt_quant_isa_name(lt_qisa i) { return ISA_NAMES[i]; }

/* the CPU has the path's instructions and the CPU capability in use
** (capability.h: $LUTORCH_CPU_CAPABILITY may lower it) reaches them */
static bool isa_available(lt_qisa i) {
#if defined(__x86_64__) || defined(__i386__)
  lt_cap_level need = i == LT_QISA_PORTABLE ? LT_CAP_DEFAULT : i == LT_QISA_AVX2 ? LT_CAP_AVX2 : LT_CAP_AVX512;
  if (need > lt_capability_level()) return false;
  __builtin_cpu_init();
  switch (i) {
  case LT_QISA_PORTABLE: return true;
  case LT_QISA_AVX2: return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  case LT_QISA_AVX512: return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw");
  case LT_QISA_VNNI:
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512vnni");
  }
  return false;
#else
  return i == LT_QISA_PORTABLE;
#endif
}

lt_qisa lt_quant_best_isa(void) {
  for (int i = LT_QISA_VNNI; i > LT_QISA_PORTABLE; i--)
    if (isa_available((lt_qisa)i)) return (lt_qisa)i;
  return LT_QISA_PORTABLE;
}

int lt_quant_pick_isa(const char *op, const char *isa) {
  const char *what = "argument 'isa'";
  if (!isa || strcmp(isa, "auto") == 0) {
    isa = getenv("LUTORCH_QUANT_ISA");
    what = "$LUTORCH_QUANT_ISA";
    if (!isa || !*isa || strcmp(isa, "auto") == 0) return lt_quant_best_isa();
  }
  for (int i = 0; i <= LT_QISA_VNNI; i++) {
    if (strcmp(isa, ISA_NAMES[i]) != 0) continue;
    if (!isa_available((lt_qisa)i))
      return lt_error("%s: %s is '%s', but this CPU lacks that path's instructions or the CPU capability "
                      "in use ('%s') is below them (its best path is '%s')", op, what, isa,
                      lt_capability_name(lt_capability_level()), ISA_NAMES[lt_quant_best_isa()]);
    return i;
  }
  return lt_error("%s: %s must be one of \"auto\", \"portable\", \"avx2\", \"avx512\", \"avx512_vnni\", got \"%s\"",
                  op, what, isa);
}

/* ---- quantize / dequantize ---------------------------------------------- */

/* the input as contiguous float32 (new reference), refusing non-floating input */
static lt_tensor *float_input(const char *op, lt_tensor *t) {
  if (lt_meta_quant_float_input(op, t) < 0) return NULL;
  return lt_tensor_to_dtype_contig(t, LT_FLOAT32);
}

static inline int32_t quantize_one(float x, float inv, int32_t zp, int32_t qmin, int32_t qmax) {
  float r = nearbyintf(x * inv) + (float)zp;
  /* NaN becomes the zero point's clamp like fbgemm's (the comparison fails both ways) */
  if (!(r >= (float)qmin)) r = r != r ? (float)zp : (float)qmin;
  if (r > (float)qmax) r = (float)qmax;
  return (int32_t)r;
}

typedef struct qctx {
  const float *x;
  void *q;
  bool u8;
  const float *inv;       /* per channel: 1/scale; per tensor: one entry */
  const int32_t *zp;
  int64_t inner, nch;     /* channel of element i: (i / inner) % nch; nch 1: per tensor */
  int32_t qmin, qmax;
} qctx;

static void quantize_range(void *vctx, int64_t b, int64_t e) {
  qctx *c = vctx;
  for (int64_t i = b; i < e; i++) {
    int64_t ch = c->nch == 1 ? 0 : (i / c->inner) % c->nch;
    int32_t v = quantize_one(c->x[i], c->inv[ch], c->zp[ch], c->qmin, c->qmax);
    if (c->u8) ((uint8_t *)c->q)[i] = (uint8_t)v; else ((int8_t *)c->q)[i] = (int8_t)v;
  }
}

static void dequantize_range(void *vctx, int64_t b, int64_t e) {
  qctx *c = vctx;
  float *y = (float *)c->x;   /* the output here */
  for (int64_t i = b; i < e; i++) {
    int64_t ch = c->nch == 1 ? 0 : (i / c->inner) % c->nch;
    int32_t v = c->u8 ? ((const uint8_t *)c->q)[i] : ((const int8_t *)c->q)[i];
    y[i] = (float)(v - c->zp[ch]) * c->inv[ch];   /* inv holds the scale here */
  }
}

static int64_t inner_size(const lt_tensor *t, int ax) {
  int64_t inner = 1;
  for (int d = ax + 1; d < t->ndim; d++) inner *= t->sizes[d];
  return inner;
}

/* scales and zero points of a per-channel op as float32 / int32 arrays (malloc'd; NULL on error) */
static int channel_params(const char *op, lt_tensor *scales, lt_tensor *zero_points, bool invert, int64_t qmin,
                          int64_t qmax, float **sc, int32_t **zp) {
  int64_t n = scales->sizes[0];
  lt_tensor *s = lt_tensor_to_dtype_contig(scales, LT_FLOAT64);
  lt_tensor *z = s ? lt_tensor_to_dtype_contig(zero_points, LT_INT64) : NULL;
  *sc = malloc(sizeof(float) * (size_t)(n ? n : 1));
  *zp = malloc(sizeof(int32_t) * (size_t)(n ? n : 1));
  int rc = 0;
  if (!s || !z || !*sc || !*zp) { if (s && z) lt_error("%s: out of memory", op); rc = -1; goto done; }
  const double *sd = lt_tensor_data(s);
  const int64_t *zd = lt_tensor_data(z);
  for (int64_t i = 0; i < n; i++) {
    if (lt_meta_quant_params(op, sd[i], zd[i], qmin, qmax) < 0) {
      lt_error("%s: argument '%s' holds %s at channel %lld (scales must be finite and > 0, zero points within "
               "[%lld, %lld])", op, (sd[i] > 0 && isfinite(sd[i])) ? "zero_points" : "scales",
               (sd[i] > 0 && isfinite(sd[i])) ? "an out-of-range value" : "a bad value", (long long)i + 1,
               (long long)qmin, (long long)qmax);
      rc = -1;
      goto done;
    }
    (*sc)[i] = invert ? 1.0f / (float)sd[i] : (float)sd[i];
    (*zp)[i] = (int32_t)zd[i];
  }
done:
  lt_tensor_release(s);
  lt_tensor_release(z);
  if (rc < 0) { free(*sc); free(*zp); *sc = NULL; *zp = NULL; }
  return rc;
}

static lt_tensor *run_quantize(const char *op, lt_tensor *self, float *inv, int32_t *zp, int64_t inner,
                               int64_t nch, int dtype, int64_t qmin, int64_t qmax) {
  lt_tensor *x = float_input(op, self);
  if (!x) return NULL;
  lt_tensor *q = lt_tensor_new((lt_dtype)dtype, lt_tensor_device(self), self->ndim, self->sizes);
  if (!q) { lt_tensor_release(x); return NULL; }
  qctx c = {lt_tensor_data(x), lt_tensor_data(q), dtype == LT_UINT8, inv, zp, inner, nch, (int32_t)qmin,
            (int32_t)qmax};
  lt_parallel_for(x->numel, LT_GRAIN_ELEMENTWISE, quantize_range, &c);
  lt_tensor_release(x);
  return q;
}

lt_tensor *lt_cpu__quantize_per_tensor(lt_tensor *self, double scale, int64_t zero_point, int dtype) {
  const char *op = "quantize_per_tensor";
  int64_t qmin, qmax;
  if (lt_meta_quant_dtype(op, dtype, &qmin, &qmax) < 0) return NULL;
  if (lt_meta_quant_params(op, scale, zero_point, qmin, qmax) < 0) return NULL;
  float inv = 1.0f / (float)scale;
  int32_t zp = (int32_t)zero_point;
  return run_quantize(op, self, &inv, &zp, 1, 1, dtype, qmin, qmax);
}

lt_tensor *lt_cpu__quantize_per_channel(lt_tensor *self, lt_tensor *scales, lt_tensor *zero_points, int64_t axis,
                                        int dtype) {
  const char *op = "quantize_per_channel";
  int64_t qmin, qmax;
  int ax;
  if (lt_meta_quant_dtype(op, dtype, &qmin, &qmax) < 0) return NULL;
  if (lt_meta_quant_channel(op, self, scales, zero_points, axis, &ax) < 0) return NULL;
  float *inv;
  int32_t *zp;
  if (channel_params(op, scales, zero_points, true, qmin, qmax, &inv, &zp) < 0) return NULL;
  lt_tensor *q = run_quantize(op, self, inv, zp, inner_size(self, ax), self->sizes[ax], dtype, qmin, qmax);
  free(inv);
  free(zp);
  return q;
}

static lt_tensor *run_dequantize(const char *op, lt_tensor *self, float *sc, int32_t *zp, int64_t inner,
                                 int64_t nch) {
  lt_tensor *q = lt_tensor_contiguous(self);
  if (!q) return NULL;
  lt_tensor *y = lt_tensor_new(LT_FLOAT32, lt_tensor_device(self), self->ndim, self->sizes);
  if (!y) { lt_tensor_release(q); return NULL; }
  (void)op;
  qctx c = {lt_tensor_data(y), lt_tensor_data(q), self->dtype == LT_UINT8, sc, zp, inner, nch, 0, 0};
  lt_parallel_for(y->numel, LT_GRAIN_ELEMENTWISE, dequantize_range, &c);
  lt_tensor_release(q);
  return y;
}

lt_tensor *lt_cpu__dequantize_per_tensor(lt_tensor *self, double scale, int64_t zero_point) {
  const char *op = "dequantize";
  int64_t qmin, qmax;
  if (lt_meta_quant_stored(op, "self", self) < 0) return NULL;
  lt_meta_quant_dtype(op, self->dtype, &qmin, &qmax);
  if (lt_meta_quant_params(op, scale, zero_point, qmin, qmax) < 0) return NULL;
  float sc = (float)scale;
  int32_t zp = (int32_t)zero_point;
  return run_dequantize(op, self, &sc, &zp, 1, 1);
}

lt_tensor *lt_cpu__dequantize_per_channel(lt_tensor *self, lt_tensor *scales, lt_tensor *zero_points,
                                          int64_t axis) {
  const char *op = "dequantize";
  int64_t qmin, qmax;
  int ax;
  if (lt_meta_quant_stored(op, "self", self) < 0) return NULL;
  lt_meta_quant_dtype(op, self->dtype, &qmin, &qmax);
  if (lt_meta_quant_channel(op, self, scales, zero_points, axis, &ax) < 0) return NULL;
  float *sc;
  int32_t *zp;
  if (channel_params(op, scales, zero_points, false, qmin, qmax, &sc, &zp) < 0) return NULL;
  lt_tensor *y = run_dequantize(op, self, sc, zp, inner_size(self, ax), self->sizes[ax]);
  free(sc);
  free(zp);
  return y;
}

/* ---- int4: group-wise asymmetric, two values a byte ---------------------- */

/* torchao's int4_weight_only qparams (MappingType.ASYMMETRIC, a floating zero
** point, quant range [0, 15], mid point 8): scale = (max - min) / 15 (at least
** 1e-6), zero = min + 8 * scale, q = clamp(round((w - zero) / scale + 8), 0, 15) */
typedef struct pack_ctx {
  const float *w;
  uint8_t *p;
  float *s, *z;
  int64_t K, gs;
} pack_ctx;

static void pack_rows(void *vctx, int64_t b, int64_t e) {
  pack_ctx *c = vctx;
  int64_t G = c->K / c->gs;
  for (int64_t n = b; n < e; n++) {
    const float *w = c->w + n * c->K;
    uint8_t *p = c->p + n * (c->K / 2);
    for (int64_t g = 0; g < G; g++) {
      const float *wg = w + g * c->gs;
      float lo = wg[0], hi = wg[0];
      for (int64_t k = 1; k < c->gs; k++) { lo = fminf(lo, wg[k]); hi = fmaxf(hi, wg[k]); }
      float scale = fmaxf((hi - lo) / 15.0f, 1e-6f);
      float zero = lo + 8.0f * scale;
      c->s[n * G + g] = scale;
      c->z[n * G + g] = zero;
      for (int64_t k = 0; k < c->gs; k += 2) {
        float a = nearbyintf((wg[k] - zero) / scale + 8.0f), bb = nearbyintf((wg[k + 1] - zero) / scale + 8.0f);
        int qa = a < 0 ? 0 : a > 15 ? 15 : (int)a, qb = bb < 0 ? 0 : bb > 15 ? 15 : (int)bb;
        p[(g * c->gs + k) / 2] = (uint8_t)(qa | (qb << 4));
      }
    }
  }
}

int lt_cpu__int4_pack(lt_tensor *weight, int64_t group_size, lt_tensor **packed, lt_tensor **scales,
                      lt_tensor **zeros) {
  const char *op = "_int4_pack";
  *packed = *scales = *zeros = NULL;
  if (lt_meta_int4_pack(op, weight, group_size) < 0) return -1;
  lt_tensor *w = lt_tensor_to_dtype_contig(weight, LT_FLOAT32);
  if (!w) return -1;
  int64_t N = w->sizes[0], K = w->sizes[1];
  int64_t psz[2] = {N, K / 2}, gsz[2] = {N, K / group_size};
  lt_device dev = lt_tensor_device(weight);
  *packed = lt_tensor_new(LT_UINT8, dev, 2, psz);
  *scales = lt_tensor_new(LT_FLOAT32, dev, 2, gsz);
  *zeros = lt_tensor_new(LT_FLOAT32, dev, 2, gsz);
  if (!*packed || !*scales || !*zeros) {
    lt_tensor_release(w);
    lt_tensor_release(*packed); lt_tensor_release(*scales); lt_tensor_release(*zeros);
    *packed = *scales = *zeros = NULL;
    return -1;
  }
  /* a group with a NaN gets NaN qparams: refuse it instead of packing garbage */
  const float *wd = lt_tensor_data(w);
  for (int64_t i = 0; i < w->numel; i++)
    if (!isfinite(wd[i])) {
      lt_tensor_release(w);
      lt_tensor_release(*packed); lt_tensor_release(*scales); lt_tensor_release(*zeros);
      *packed = *scales = *zeros = NULL;
      lt_error("%s: argument 'weight' holds a non-finite value", op);
      return -1;
    }
  pack_ctx c = {wd, lt_tensor_data(*packed), lt_tensor_data(*scales), lt_tensor_data(*zeros), K, group_size};
  lt_parallel_for(N, 64, pack_rows, &c);
  lt_tensor_release(w);
  return 0;
}

/* row n of an int4 matrix dequantized into out[K], a group at a time (the loop vectorises) */
static void int4_row(const uint8_t *p, const float *s, const float *z, int64_t K, int64_t gs, float *out) {
  for (int64_t g = 0; g < K / gs; g++) {
    float sc = s[g], off = z[g] - 8.0f * s[g];
    const uint8_t *pg = p + g * gs / 2;
    float *o = out + g * gs;
    for (int64_t j = 0; j < gs / 2; j++) {
      o[2 * j] = (float)(pg[j] & 15) * sc + off;
      o[2 * j + 1] = (float)(pg[j] >> 4) * sc + off;
    }
  }
}

void lt_quant_int4_rows(const uint8_t *p, const float *s, const float *z, int64_t K, int64_t gs, int64_t n0,
                        int64_t n1, float *out) {
  int64_t G = K / gs;
  for (int64_t n = n0; n < n1; n++) int4_row(p + n * (K / 2), s + n * G, z + n * G, K, gs, out + (n - n0) * K);
}

/* the contiguous operands of an int4 op (new references in t[3]) */
static int int4_operands(lt_tensor *packed, lt_tensor *scales, lt_tensor *zeros, lt_tensor **t) {
  t[0] = lt_tensor_contiguous(packed);
  t[1] = t[0] ? lt_tensor_contiguous(scales) : NULL;
  t[2] = t[1] ? lt_tensor_contiguous(zeros) : NULL;
  if (t[2]) return 0;
  lt_tensor_release(t[0]); lt_tensor_release(t[1]);
  return -1;
}

lt_tensor *lt_cpu__int4_unpack(lt_tensor *packed, lt_tensor *scales, lt_tensor *zeros, int64_t group_size) {
  const char *op = "_int4_unpack";
  int64_t N, K;
  if (lt_meta_qlinear_int4(op, packed, scales, zeros, group_size, NULL, &N, &K) < 0) return NULL;
  lt_tensor *t[3];
  if (int4_operands(packed, scales, zeros, t) < 0) return NULL;
  int64_t sz[2] = {N, K};
  lt_tensor *y = lt_tensor_new(LT_FLOAT32, lt_tensor_device(packed), 2, sz);
  if (y) lt_quant_int4_rows(lt_tensor_data(t[0]), lt_tensor_data(t[1]), lt_tensor_data(t[2]), K, group_size, 0, N,
                            lt_tensor_data(y));
  for (int i = 0; i < 3; i++) lt_tensor_release(t[i]);
  return y;
}

/* ---- quantized embeddings ----------------------------------------------- */

/* the 0-based rows the indices name, checked against rows (malloc'd; NULL on error) */
static int64_t *embedding_rows(const char *op, lt_tensor *indices, int64_t rows) {
  lt_tensor *ix = lt_tensor_to_dtype_contig(indices, LT_INT64);
  if (!ix) return NULL;
  int64_t n = ix->numel;
  int64_t *r = malloc(sizeof(int64_t) * (size_t)(n ? n : 1));
  if (!r) { lt_tensor_release(ix); return lt_error_null("%s: out of memory", op); }
  const int64_t *d = lt_tensor_data(ix);
  for (int64_t i = 0; i < n; i++) {
    int64_t v = d[i] - 1;   /* 1-based, as nn.Embedding's */
    if (v < 0 || v >= rows) {
      lt_error("%s: argument 'indices' holds %lld, out of range for a weight of %lld rows (indices are 1-based)", op,
               (long long)d[i], (long long)rows);
      free(r);
      lt_tensor_release(ix);
      return NULL;
    }
    r[i] = v;
  }
  lt_tensor_release(ix);
  return r;
}

lt_tensor *lt_cpu__int8_embedding(lt_tensor *weight, lt_tensor *scales, lt_tensor *indices) {
  const char *op = "_int8_embedding";
  int64_t V, D, sz[LT_MAX_DIMS];
  if (lt_meta_qlinear_int8(op, weight, scales, NULL, &V, &D) < 0) return NULL;
  if (lt_meta_qembedding_sizes(op, indices, D, sz) < 0) return NULL;
  int64_t *rows = embedding_rows(op, indices, V);
  if (!rows) return NULL;
  lt_tensor *w = lt_tensor_contiguous(weight);
  lt_tensor *s = w ? lt_tensor_to_dtype_contig(scales, LT_FLOAT32) : NULL;
  lt_tensor *y = s ? lt_tensor_new(LT_FLOAT32, lt_tensor_device(weight), indices->ndim + 1, sz) : NULL;
  if (y) {
    const int8_t *wd = lt_tensor_data(w);
    const float *sd = lt_tensor_data(s);
    float *yd = lt_tensor_data(y);
    for (int64_t i = 0; i < indices->numel; i++) {
      const int8_t *wr = wd + rows[i] * D;
      float sc = sd[rows[i]];
      for (int64_t d = 0; d < D; d++) yd[i * D + d] = (float)wr[d] * sc;
    }
  }
  free(rows);
  lt_tensor_release(w);
  lt_tensor_release(s);
  return y;
}

lt_tensor *lt_cpu__int4_embedding(lt_tensor *packed, lt_tensor *scales, lt_tensor *zeros, int64_t group_size,
                                  lt_tensor *indices) {
  const char *op = "_int4_embedding";
  int64_t V, D, sz[LT_MAX_DIMS];
  if (lt_meta_qlinear_int4(op, packed, scales, zeros, group_size, NULL, &V, &D) < 0) return NULL;
  if (lt_meta_qembedding_sizes(op, indices, D, sz) < 0) return NULL;
  int64_t *rows = embedding_rows(op, indices, V);
  if (!rows) return NULL;
  lt_tensor *t[3];
  lt_tensor *y = NULL;
  if (int4_operands(packed, scales, zeros, t) == 0) {
    y = lt_tensor_new(LT_FLOAT32, lt_tensor_device(packed), indices->ndim + 1, sz);
    if (y) {
      const uint8_t *p = lt_tensor_data(t[0]);
      const float *s = lt_tensor_data(t[1]), *z = lt_tensor_data(t[2]);
      float *yd = lt_tensor_data(y);
      for (int64_t i = 0; i < indices->numel; i++)
        lt_quant_int4_rows(p, s, z, D, group_size, rows[i], rows[i] + 1, yd + i * D);
    }
    for (int i = 0; i < 3; i++) lt_tensor_release(t[i]);
  }
  free(rows);
  return y;
}
