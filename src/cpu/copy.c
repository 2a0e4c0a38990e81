/*
** copy.c — strided copy with broadcasting and dtype conversion, and fill.
** The loops are the cast loops of ew_cast.c (one per dtype pair); the walk
** over dims is lt_iter's (dims merged where both operands are contiguous,
** parallel above the elementwise grain).
*/
#include <stdint.h>
#include <string.h>
#include "cpu/cpu.h"
#include "cpu/iter.h"
#include "cpu/parallel.h"

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

/* src element offset of matrix o (row-major over the leading dims) */
static int64_t outer_offset(const transpose_plan *p, int64_t o) {
  int64_t off = 0;
  for (int k = p->nouter - 1; k >= 0; k--) { off += (o % p->outer_sz[k]) * p->outer_st[k]; o /= p->outer_sz[k]; }
  return off;
}

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

#ifdef __AVX2__
#include <immintrin.h>
/* 8x8 floats through registers: eight 32-byte loads of source columns, eight 32-byte
** stores of destination rows, instead of 64 scalar moves with one side strided */
static inline void transpose8x8_f32(float *d, int64_t ds, const float *s, int64_t ss) {
  __m256 a0 = _mm256_loadu_ps(s), a1 = _mm256_loadu_ps(s + ss), a2 = _mm256_loadu_ps(s + 2 * ss),
         a3 = _mm256_loadu_ps(s + 3 * ss), a4 = _mm256_loadu_ps(s + 4 * ss), a5 = _mm256_loadu_ps(s + 5 * ss),
         a6 = _mm256_loadu_ps(s + 6 * ss), a7 = _mm256_loadu_ps(s + 7 * ss);
  __m256 b0 = _mm256_unpacklo_ps(a0, a1), b1 = _mm256_unpackhi_ps(a0, a1);
  __m256 b2 = _mm256_unpacklo_ps(a2, a3), b3 = _mm256_unpackhi_ps(a2, a3);
  __m256 b4 = _mm256_unpacklo_ps(a4, a5), b5 = _mm256_unpackhi_ps(a4, a5);
  __m256 b6 = _mm256_unpacklo_ps(a6, a7), b7 = _mm256_unpackhi_ps(a6, a7);
  __m256 c0 = _mm256_shuffle_ps(b0, b2, 0x44), c1 = _mm256_shuffle_ps(b0, b2, 0xEE);
  __m256 c2 = _mm256_shuffle_ps(b1, b3, 0x44), c3 = _mm256_shuffle_ps(b1, b3, 0xEE);
  __m256 c4 = _mm256_shuffle_ps(b4, b6, 0x44), c5 = _mm256_shuffle_ps(b4, b6, 0xEE);
  __m256 c6 = _mm256_shuffle_ps(b5, b7, 0x44), c7 = _mm256_shuffle_ps(b5, b7, 0xEE);
  _mm256_storeu_ps(d, _mm256_permute2f128_ps(c0, c4, 0x20));
  _mm256_storeu_ps(d + ds, _mm256_permute2f128_ps(c1, c5, 0x20));
  _mm256_storeu_ps(d + 2 * ds, _mm256_permute2f128_ps(c2, c6, 0x20));
  _mm256_storeu_ps(d + 3 * ds, _mm256_permute2f128_ps(c3, c7, 0x20));
  _mm256_storeu_ps(d + 4 * ds, _mm256_permute2f128_ps(c0, c4, 0x31));
  _mm256_storeu_ps(d + 5 * ds, _mm256_permute2f128_ps(c1, c5, 0x31));
  _mm256_storeu_ps(d + 6 * ds, _mm256_permute2f128_ps(c2, c6, 0x31));
  _mm256_storeu_ps(d + 7 * ds, _mm256_permute2f128_ps(c3, c7, 0x31));
}

/* rows R0..R1 of a 4-byte transpose: strips of 32 rows (32 write streams, and each 128-byte
** piece of a source column is read whole), 8x8 register tiles, scalar edges */
#define STRIP 32
static void transpose_rows_f32(float *restrict d, const float *restrict s, int64_t R0, int64_t R1,
                               int64_t cols, int64_t cs) {
  for (int64_t r0 = R0; r0 < R1; r0 += STRIP) {
    int64_t r1 = r0 + STRIP < R1 ? r0 + STRIP : R1, rfull = r0 + (r1 - r0) / 8 * 8;
    int64_t cfull = cols / 8 * 8;
    for (int64_t c = 0; c < cfull; c += 8)
      for (int64_t r = r0; r < rfull; r += 8) transpose8x8_f32(d + r * cols + c, cols, s + c * cs + r, cs);
    for (int64_t r = rfull; r < r1; r++)                 /* rows left over */
      for (int64_t c = 0; c < cols; c++) d[r * cols + c] = s[r + c * cs];
    for (int64_t r = r0; r < rfull; r++)                 /* columns left over */
      for (int64_t c = cfull; c < cols; c++) d[r * cols + c] = s[r + c * cs];
  }
}

/* A destination too big for the cache is written with streaming stores. Stored
** plainly, each 128-byte piece of a destination row first reads its line from
** memory (read-for-ownership); those lines lie a whole row apart, which no
** prefetcher follows, so the copy waited on memory latency (0.45x STREAM copy).
** A band of 8 destination rows x 32 columns is transposed into a buffer that stays
** in L1, then each row's piece leaves in whole lines that need no read: 1.5-1.8x
** STREAM copy on the 4096^2 case (bench/README.md). The plan's jobs are then blocks
** of destination columns, each reading a contiguous run of source rows. */
#define STREAM_MIN_BYTES (4 << 20)   /* above any L2: below it plain stores stay cached */
#define BAND 32

static void transpose_cols_f32_stream(float *restrict d, const float *restrict s, int64_t rows,
                                      int64_t cols, int64_t cs, int64_t C0, int64_t C1) {
  float buf[8 * BAND] __attribute__((aligned(32)));
  int64_t rfull = rows / 8 * 8;
  for (int64_t c0 = C0; c0 < C1; c0 += BAND) {
    int64_t w = C1 - c0 < BAND ? C1 - c0 : BAND;   /* a multiple of 8: cols is */
    for (int64_t r = 0; r < rfull; r += 8) {
      for (int64_t j = 0; j < w; j += 8) transpose8x8_f32(buf + j, w, s + (c0 + j) * cs + r, cs);
      for (int k = 0; k < 8; k++) {
        float *dr = d + (r + k) * cols + c0;
        for (int64_t j = 0; j < w; j += 8) _mm256_stream_ps(dr + j, _mm256_load_ps(buf + k * w + j));
      }
    }
    for (int64_t r = rfull; r < rows; r++)            /* rows left over */
      for (int64_t c = c0; c < c0 + w; c++) d[r * cols + c] = s[r + c * cs];
  }
}

/* jobs of the streaming plan: (outer index, block of BAND destination columns) */
static void transpose_stream_chunk(void *vp, int64_t begin, int64_t end) {
  transpose_plan *p = vp;
  int64_t col_blocks = (p->cols + BAND - 1) / BAND;
  for (int64_t job = begin; job < end; job++) {
    int64_t o = job / col_blocks, cb = job % col_blocks;
    int64_t soff = outer_offset(p, o);
    float *dp = (float *)p->dst + o * p->rows * p->cols;
    const float *sp = (const float *)p->src + soff;
    int64_t C0 = cb * BAND, C1 = C0 + BAND < p->cols ? C0 + BAND : p->cols;
    transpose_cols_f32_stream(dp, sp, p->rows, p->cols, p->src_col_stride, C0, C1);
  }
  _mm_sfence();   /* streaming stores are weakly ordered: visible before the pool's join */
}
#endif

static void transpose_chunk(void *vp, int64_t begin, int64_t end) {
  transpose_plan *p = vp;
  for (int64_t job = begin; job < end; job++) {
    int64_t o = job / p->row_blocks, rb = job % p->row_blocks;
    int64_t soff = outer_offset(p, o);
    char *dp = p->dst + (size_t)(o * p->rows * p->cols) * p->es;
    const char *sp = p->src + (size_t)soff * p->es;
    int64_t R0 = rb * BLOCK, R1 = R0 + BLOCK < p->rows ? R0 + BLOCK : p->rows;
#ifdef __AVX2__
    if (p->es == 4) {
      transpose_rows_f32((float *)dp, (const float *)sp, R0, R1, p->cols, p->src_col_stride);
      continue;
    }
#endif
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
#ifdef __AVX2__
  /* streaming: 4-byte elements, rows of whole 32-byte pieces, a big destination */
  if (es == 4 && cols % 8 == 0 && ((uintptr_t)p.dst & 31) == 0 &&
      (size_t)dst->numel * es >= STREAM_MIN_BYTES) {
    int64_t jobs = p.outer * ((cols + BAND - 1) / BAND);
    int64_t grain = LT_GRAIN_ELEMENTWISE / (BAND * rows) + 1;
    if (jobs < 2 * grain) transpose_stream_chunk(&p, 0, jobs);
    else lt_parallel_for(jobs, grain, transpose_stream_chunk, &p);
    return 1;
  }
#endif
  int64_t jobs = p.outer * p.row_blocks;
  int64_t grain = LT_GRAIN_ELEMENTWISE / (BLOCK * cols) + 1;
  if (jobs < 2 * grain) transpose_chunk(&p, 0, jobs);
  else lt_parallel_for(jobs, grain, transpose_chunk, &p);
  return 1;
}

int lt_cpu_copy(lt_tensor *dst, const lt_tensor *src) {
  int nd = dst->ndim;
  int64_t st[2][LT_MAX_DIMS];
  if (lt_expand_strides("copy_", src, nd, dst->sizes, st[1]) < 0) return -1;
  if (dst->numel == 0) return 0;
  if (src->numel > 1 && overlaps(dst, src, st[1])) {
    lt_tensor *tmp = lt_tensor_clone_as(src, (lt_dtype)src->dtype);
    if (!tmp) return -1;
    int r = lt_cpu_copy(dst, tmp);
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

int lt_cpu_fill(lt_tensor *dst, lt_scalar v) {
  /* the value converted once into dst's dtype, then stored everywhere */
  _Alignas(16) char slot[16], val[16];
  lt_dtype dt = (lt_dtype)dst->dtype;
  lt_dtype sdt = v.type == LT_SCALAR_FLOAT ? LT_FLOAT64 : v.type == LT_SCALAR_BOOL ? LT_BOOL
                : v.type == LT_SCALAR_COMPLEX ? LT_COMPLEX128 : LT_INT64;
  if (v.type == LT_SCALAR_COMPLEX) lt_dtype_store_complex(LT_COMPLEX128, val, v.v.f, v.im);
  else if (v.type == LT_SCALAR_FLOAT) memcpy(val, &v.v.f, sizeof(double));
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
