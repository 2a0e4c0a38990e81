/*
** copy.c — strided copy with broadcasting and dtype conversion, and fill.
** The inner loop is specialised per (dst, src) dtype pair; the outer dims
** are walked with a counter after merging dims that are contiguous in both.
*/
#include <string.h>
#include "tensor.h"
#include "parallel.h"

typedef struct copy_plan {
  int ndim;
  int64_t sizes[LT_MAX_DIMS];
  int64_t dst_st[LT_MAX_DIMS], src_st[LT_MAX_DIMS];   /* elements */
  char *dst; const char *src;
  size_t des, ses;
  lt_dtype ddt, sdt;
} copy_plan;

/* merge adjacent dims whose strides chain in both operands; drop size-1 dims */
static void coalesce(copy_plan *p) {
  int n = 0;
  for (int i = 0; i < p->ndim; i++) {
    if (p->sizes[i] == 1) continue;
    if (n > 0 && p->dst_st[n - 1] == p->dst_st[i] * p->sizes[i] &&
        p->src_st[n - 1] == p->src_st[i] * p->sizes[i]) {
      p->sizes[n - 1] *= p->sizes[i];
      p->dst_st[n - 1] = p->dst_st[i];
      p->src_st[n - 1] = p->src_st[i];
      continue;
    }
    p->sizes[n] = p->sizes[i]; p->dst_st[n] = p->dst_st[i]; p->src_st[n] = p->src_st[i];
    n++;
  }
  if (n == 0) { p->sizes[0] = 1; p->dst_st[0] = p->src_st[0] = 1; n = 1; }
  p->ndim = n;
}

#define DST_BODY(DE, DT, DCT, DN, SN) \
  case DE: { DT *d = (DT *)dst; \
    for (int64_t i = 0; i < n; i++) d[i * ds] = LT_FROMC_##DN((DCT)LT_TOC_##SN(s[i * ss])); } break;
#define MAKE_DST_float64(DE, DT, DCT, DN) DST_BODY(DE, DT, DCT, DN, float64)
#define MAKE_DST_float32(DE, DT, DCT, DN) DST_BODY(DE, DT, DCT, DN, float32)
#define MAKE_DST_float16(DE, DT, DCT, DN) DST_BODY(DE, DT, DCT, DN, float16)
#define MAKE_DST_bfloat16(DE, DT, DCT, DN) DST_BODY(DE, DT, DCT, DN, bfloat16)
#define MAKE_DST_int64(DE, DT, DCT, DN) DST_BODY(DE, DT, DCT, DN, int64)
#define MAKE_DST_int32(DE, DT, DCT, DN) DST_BODY(DE, DT, DCT, DN, int32)
#define MAKE_DST_int16(DE, DT, DCT, DN) DST_BODY(DE, DT, DCT, DN, int16)
#define MAKE_DST_int8(DE, DT, DCT, DN) DST_BODY(DE, DT, DCT, DN, int8)
#define MAKE_DST_uint8(DE, DT, DCT, DN) DST_BODY(DE, DT, DCT, DN, uint8)
#define MAKE_DST_bool(DE, DT, DCT, DN) DST_BODY(DE, DT, DCT, DN, bool)
#define MAKE_DST__Bool MAKE_DST_bool
#define MAKE_SRC(SE, ST, SCT, SN) \
  case SE: { const ST *s = (const ST *)src; \
    switch (ddt) { LT_FORALL_DTYPES_INNER(MAKE_DST_##SN) default: break; } } break;

/* n elements from src (stride ss) into dst (stride ds), converting */
static void cast_run(lt_dtype ddt, char *dst, int64_t ds, lt_dtype sdt, const char *src, int64_t ss, int64_t n) {
  if (ddt == sdt && ds == 1 && ss == 1) {
    memcpy(dst, src, (size_t)n * lt_dtype_size(ddt));
    return;
  }
  switch (sdt) { LT_FORALL_DTYPES(MAKE_SRC) default: break; }
}

/* copy the elements whose outer index (all dims but the last) is in [begin, end) */
static void copy_range(void *ctx, int64_t begin, int64_t end) {
  copy_plan *p = ctx;
  int last = p->ndim - 1;
  int64_t idx[LT_MAX_DIMS] = {0};
  int64_t rem = begin;
  for (int i = last - 1; i >= 0; i--) { idx[i] = rem % p->sizes[i]; rem /= p->sizes[i]; }
  for (int64_t r = begin; r < end; r++) {
    int64_t doff = 0, soff = 0;
    for (int i = 0; i < last; i++) { doff += idx[i] * p->dst_st[i]; soff += idx[i] * p->src_st[i]; }
    cast_run(p->ddt, p->dst + doff * (int64_t)p->des, p->dst_st[last],
             p->sdt, p->src + soff * (int64_t)p->ses, p->src_st[last], p->sizes[last]);
    for (int i = last - 1; i >= 0; i--) {
      if (++idx[i] < p->sizes[i]) break;
      idx[i] = 0;
    }
  }
}

static void copy_chunk(void *ctx, int64_t begin, int64_t end) {
  copy_plan *p = ctx;
  if (p->ndim == 1) {
    cast_run(p->ddt, p->dst + begin * p->dst_st[0] * (int64_t)p->des, p->dst_st[0],
             p->sdt, p->src + begin * p->src_st[0] * (int64_t)p->ses, p->src_st[0], end - begin);
  } else {
    copy_range(ctx, begin, end);
  }
}

int lt_tensor_copy_(lt_tensor *dst, const lt_tensor *src) {
  if (!lt_device_eq(lt_tensor_device(dst), lt_tensor_device(src)))
    return lt_error("copy_: cross-device copies need the device backend");
  copy_plan p;
  p.ndim = dst->ndim;
  for (int i = 0; i < dst->ndim; i++) { p.sizes[i] = dst->sizes[i]; p.dst_st[i] = dst->strides[i]; }
  if (lt_expand_strides("copy_", src, dst->ndim, dst->sizes, p.src_st) < 0) return -1;
  if (dst->numel == 0) return 0;
  coalesce(&p);
  p.dst = lt_tensor_data(dst);
  p.src = lt_tensor_data(src);
  p.ddt = (lt_dtype)dst->dtype; p.sdt = (lt_dtype)src->dtype;
  p.des = lt_dtype_size(p.ddt); p.ses = lt_dtype_size(p.sdt);
  if (p.ndim == 1) {
    lt_parallel_for(p.sizes[0], LT_GRAIN_ELEMENTWISE, copy_chunk, &p);
  } else {
    int64_t outer = 1;
    for (int i = 0; i < p.ndim - 1; i++) outer *= p.sizes[i];
    int64_t grain = LT_GRAIN_ELEMENTWISE / p.sizes[p.ndim - 1] + 1;
    lt_parallel_for(outer, grain, copy_chunk, &p);
  }
  return 0;
}

int lt_tensor_fill_(lt_tensor *dst, lt_scalar v) {
  lt_tensor *s = lt_tensor_from_scalar(v, (lt_dtype)dst->dtype);
  if (!s) return -1;
  int r = lt_tensor_copy_(dst, s);
  lt_tensor_release(s);
  return r;
}
