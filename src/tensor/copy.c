/*
** copy.c — strided copy with broadcasting and dtype conversion, and fill.
** The loops are the cast loops of ew_cast.c (one per dtype pair); the walk
** over dims is lt_iter's (dims merged where both operands are contiguous,
** parallel above the elementwise grain).
*/
#pragma GCC optimize("O3")   /* -O2 leaves the tile loops scalar and unrolled poorly */
#include <string.h>
#include "tensor.h"
#include "iter.h"
#include "parallel.h"

typedef struct copy1d { char *dst; const char *src; int64_t st[2]; lt_ew_loop fn; } copy1d;

static void copy1d_chunk(void *p, int64_t begin, int64_t end) {
  copy1d *c = p;
  char *d[2] = {c->dst + begin * c->st[0], (char *)c->src + begin * c->st[1]};
  c->fn(d, c->st, end - begin, NULL);
}

/* true when writing dst could clobber src elements not yet read */
static bool overlaps(const lt_tensor *dst, const lt_tensor *src, const int64_t *sst) {
  if (dst->storage != src->storage) return false;
  if (lt_tensor_data(dst) != lt_tensor_data(src)) return true;
  for (int d = 0; d < dst->ndim; d++)
    if (dst->sizes[d] != 1 && dst->strides[d] != sst[d]) return true;
  return false;
}

/* ---- a transposed source: dst's rows are src's columns ----
** Walking dst row by row would read src with a stride of a whole row and miss
** the cache on every element; square tiles keep both sides in cache. */
#define TILE 8       /* micro tile: 8 source columns stay in cache lines */
#define BLOCK 128    /* macro block: keeps the pages of both sides in the TLB */

typedef struct transpose_plan {
  char *dst; const char *src;
  int64_t rows, cols;        /* of the last two dims */
  int64_t src_col_stride;    /* elements between src[r][c] and src[r][c+1] */
  int64_t outer;             /* product of the leading dims */
  int64_t outer_st[LT_MAX_DIMS], outer_sz[LT_MAX_DIMS]; int nouter;   /* src strides of leading dims */
  int64_t row_blocks;
  size_t es;
} transpose_plan;

#define TRANSPOSE_BLOCK(T) { \
    T *restrict d = (T *)dp; const T *restrict s = (const T *)sp; \
    const int64_t cols = p->cols, cs = p->src_col_stride; \
    for (int64_t C = 0; C < cols; C += BLOCK) { \
      int64_t C1 = C + BLOCK < cols ? C + BLOCK : cols; \
      for (int64_t r0 = R0; r0 < R1; r0 += TILE) { \
        int64_t r1 = r0 + TILE < R1 ? r0 + TILE : R1; \
        for (int64_t c0 = C; c0 < C1; c0 += TILE) { \
          int64_t c1 = c0 + TILE < C1 ? c0 + TILE : C1; \
          for (int64_t c = c0; c < c1; c++) \
            for (int64_t r = r0; r < r1; r++) d[r * cols + c] = s[r + c * cs]; \
        } \
      } \
    } \
  } break;

static void transpose_chunk(void *vp, int64_t begin, int64_t end) {
  transpose_plan *p = vp;
  for (int64_t job = begin; job < end; job++) {
    int64_t o = job / p->row_blocks, rb = job % p->row_blocks;
    int64_t soff = 0, rem = o;
    for (int k = p->nouter - 1; k >= 0; k--) { soff += (rem % p->outer_sz[k]) * p->outer_st[k]; rem /= p->outer_sz[k]; }
    char *dp = p->dst + (size_t)(o * p->rows * p->cols) * p->es;
    const char *sp = p->src + (size_t)soff * p->es;
    int64_t R0 = rb * BLOCK, R1 = R0 + BLOCK < p->rows ? R0 + BLOCK : p->rows;
    switch (p->es) {
      case 1: TRANSPOSE_BLOCK(uint8_t)
      case 2: TRANSPOSE_BLOCK(uint16_t)
      case 4: TRANSPOSE_BLOCK(uint32_t)
      default: TRANSPOSE_BLOCK(uint64_t)
    }
  }
}

/* dst contiguous, same dtype, src's last two dims swapped: 1 if done */
static int copy_transposed(lt_tensor *dst, const lt_tensor *src, const int64_t *sst) {
  int nd = dst->ndim;
  if (nd < 2 || dst->dtype != src->dtype || !lt_tensor_is_contiguous(dst)) return 0;
  size_t es = lt_dtype_size((lt_dtype)dst->dtype);
  if (es != 1 && es != 2 && es != 4 && es != 8) return 0;
  int64_t rows = dst->sizes[nd - 2], cols = dst->sizes[nd - 1];
  if (rows < 2 * TILE || cols < 2 * TILE || sst[nd - 2] != 1 || sst[nd - 1] < rows) return 0;
  transpose_plan p;
  p.dst = lt_tensor_data(dst);
  p.src = lt_tensor_data(src);
  p.rows = rows; p.cols = cols;
  p.src_col_stride = sst[nd - 1];
  p.nouter = nd - 2;
  p.outer = 1;
  for (int k = 0; k < nd - 2; k++) { p.outer_sz[k] = dst->sizes[k]; p.outer_st[k] = sst[k]; p.outer *= dst->sizes[k]; }
  p.row_blocks = (rows + BLOCK - 1) / BLOCK;
  p.es = es;
  int64_t jobs = p.outer * p.row_blocks;
  int64_t grain = LT_GRAIN_ELEMENTWISE / (BLOCK * cols) + 1;
  if (jobs < 2 * grain) transpose_chunk(&p, 0, jobs);
  else lt_parallel_for(jobs, grain, transpose_chunk, &p);
  return 1;
}

int lt_tensor_copy_(lt_tensor *dst, const lt_tensor *src) {
  if (!lt_device_eq(lt_tensor_device(dst), lt_tensor_device(src)))
    return lt_error("copy_: cross-device copies need the device backend");
  int nd = dst->ndim;
  int64_t st[2][LT_MAX_DIMS];
  if (lt_expand_strides("copy_", src, nd, dst->sizes, st[1]) < 0) return -1;
  if (dst->numel == 0) return 0;
  if (src->numel > 1 && overlaps(dst, src, st[1])) {
    lt_tensor *tmp = lt_tensor_clone_as(src, (lt_dtype)src->dtype);
    if (!tmp) return -1;
    int r = lt_tensor_copy_(dst, tmp);
    lt_tensor_release(tmp);
    return r;
  }
  if (copy_transposed(dst, src, st[1])) return 0;
  lt_dtype ddt = (lt_dtype)dst->dtype, sdt = (lt_dtype)src->dtype;
  int64_t des = (int64_t)lt_dtype_size(ddt), ses = (int64_t)lt_dtype_size(sdt);
  lt_ew_loop fn = lt_cast_loop(ddt, sdt);
  bool dc = lt_tensor_is_contiguous(dst);
  if (dc && (src->numel == 1 || (src->numel == dst->numel && lt_tensor_is_contiguous(src)))) {
    copy1d c = {lt_tensor_data(dst), lt_tensor_data(src), {des, src->numel == 1 ? 0 : ses}, fn};
    if (dst->numel < 2 * LT_GRAIN_ELEMENTWISE) copy1d_chunk(&c, 0, dst->numel);
    else lt_parallel_for(dst->numel, LT_GRAIN_ELEMENTWISE, copy1d_chunk, &c);
    return 0;
  }
  for (int d = 0; d < nd; d++) { st[0][d] = dst->strides[d] * des; st[1][d] *= ses; }
  char *data[2] = {lt_tensor_data(dst), lt_tensor_data(src)};
  lt_iter it;
  lt_iter_init(&it, 2, nd, dst->sizes, data, (const int64_t (*)[LT_MAX_DIMS])st);
  lt_iter_run(&it, fn, NULL, 0);
  return 0;
}

int lt_tensor_fill_(lt_tensor *dst, lt_scalar v) {
  /* the value converted once into dst's dtype, then stored everywhere */
  _Alignas(16) char slot[16], val[16];
  lt_dtype dt = (lt_dtype)dst->dtype;
  lt_dtype sdt = v.type == LT_SCALAR_FLOAT ? LT_FLOAT64 : v.type == LT_SCALAR_BOOL ? LT_BOOL : LT_INT64;
  if (v.type == LT_SCALAR_FLOAT) memcpy(val, &v.v.f, sizeof(double));
  else if (v.type == LT_SCALAR_BOOL) val[0] = v.v.i != 0;
  else memcpy(val, &v.v.i, sizeof(int64_t));
  char *d[2] = {slot, val};
  int64_t s[2] = {0, 0};
  lt_cast_loop(dt, sdt)(d, s, 1, NULL);
  if (dst->numel == 0) return 0;
  lt_ew_loop fn = lt_cast_loop(dt, dt);
  int64_t des = (int64_t)lt_dtype_size(dt);
  if (lt_tensor_is_contiguous(dst)) {
    copy1d c = {lt_tensor_data(dst), slot, {des, 0}, fn};
    if (dst->numel < 2 * LT_GRAIN_ELEMENTWISE) copy1d_chunk(&c, 0, dst->numel);
    else lt_parallel_for(dst->numel, LT_GRAIN_ELEMENTWISE, copy1d_chunk, &c);
    return 0;
  }
  int64_t st[2][LT_MAX_DIMS];
  for (int k = 0; k < dst->ndim; k++) { st[0][k] = dst->strides[k] * des; st[1][k] = 0; }
  char *data[2] = {lt_tensor_data(dst), slot};
  lt_iter it;
  lt_iter_init(&it, 2, dst->ndim, dst->sizes, data, (const int64_t (*)[LT_MAX_DIMS])st);
  lt_iter_run(&it, fn, NULL, 0);
  return 0;
}
