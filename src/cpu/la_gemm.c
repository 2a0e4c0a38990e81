/*
** la_gemm.c — batched strided matrix products: OpenBLAS for float32/64, a
** blocked loop for integers, float16 and bfloat16 through float32 (gemm_half:
** Debian's OpenBLAS 0.3.21 exports no sbgemm). Operands are described by strides, so
** transposed views, broadcast batch dims and vectors of any stride reach BLAS
** without copies; only layouts BLAS cannot express are made contiguous.
*/
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <stdatomic.h>
#include <cblas.h>
#include "cpu/la_gemm.h"
#include "cpu/gemm_lib.h"
#include "cpu/parallel.h"
#include "cpu/cvt.h"
#include "core/error.h"

/* Products below these sizes (multiply-adds) run whole on one thread; a batch
** of them is spread over the pool one product per chunk. Bigger ones are split
** inside (lt_la_blas_gemm). */
#define LA_SMALL_GEMM 262144
#define LA_SMALL_GEMV 8192
/* multiply-adds per chunk of a split product at most: Ctrl-C (lt_interrupt_flag,
** seen between chunks) stops a big product within ~0.1 s */
#define LA_CHUNK_MACS (1LL << 30)
/* multiply-adds per pool chunk worth a thread */
#define LA_GRAIN_WORK 65536

/* integer kernel blocking: rows x cols of the accumulator, depth of a pass */
#define IB 32
#define JB 256
#define KB 256

typedef struct la_op {
  char *p;                      /* element [0, ..., 0] */
  int64_t rs, cs;               /* row / column strides (elements) */
  int64_t bst[LT_MAX_DIMS];     /* batch strides */
  int trans;                    /* BLAS: stored transposed (ld = cs) */
  int64_t ld, inc;              /* BLAS leading dimension / vector increment */
} la_op;

typedef struct la_prob {
  lt_dtype dt;
  size_t es;
  int nb;                       /* batch dims left after dropping 1s and folding */
  int64_t bsz[LT_MAX_DIMS];
  int64_t nbatch;
  int64_t m, n, k;
  la_op a, b, c;
  bool reduce;
  double alpha, beta;
  int64_t ialpha, ibeta;
  bool beta0;
  atomic_int failed;            /* set by pool chunks (out of memory) */
} la_prob;

static void describe(la_prob *p, lt_tensor *C, lt_tensor *A, lt_tensor *B) {
  int nb = A->ndim - 2;
  p->es = lt_dtype_size((lt_dtype)A->dtype);
  p->a.p = lt_tensor_data(A);
  p->b.p = lt_tensor_data(B);
  p->c.p = lt_tensor_data(C);
  p->a.rs = A->strides[nb]; p->a.cs = A->strides[nb + 1];
  p->b.rs = B->strides[nb]; p->b.cs = B->strides[nb + 1];
  int cnb = C->ndim - 2;
  p->c.rs = C->strides[cnb]; p->c.cs = C->strides[cnb + 1];
  p->m = A->sizes[nb]; p->k = A->sizes[nb + 1]; p->n = B->sizes[nb + 1];
  p->nb = 0;
  p->nbatch = 1;
  for (int d = 0; d < nb; d++) {
    int64_t sz = A->sizes[d];
    p->nbatch *= sz;
    if (sz == 1) continue;
    p->bsz[p->nb] = sz;
    p->a.bst[p->nb] = A->strides[d];
    p->b.bst[p->nb] = B->strides[d];
    p->c.bst[p->nb] = p->reduce ? 0 : C->strides[d];
    p->nb++;
  }
}

/* A batch whose B is shared and whose A and C rows chain from one matrix to
** the next is a single taller product: (batch*m, k) @ (k, n). This turns
** matmul of (B, T, k) by (k, n) into one gemm. */
static void fold_batch(la_prob *p) {
  if (p->reduce) return;
  while (p->nb > 0) {
    int d = p->nb - 1;
    if (p->b.bst[d] != 0) break;
    if (p->m == 1) { p->a.rs = p->a.bst[d]; p->c.rs = p->c.bst[d]; }
    if (p->a.bst[d] != p->a.rs * p->m || p->c.bst[d] != p->c.rs * p->m) break;
    p->m *= p->bsz[d];
    p->nb--;
  }
  p->nbatch = 1;
  for (int d = 0; d < p->nb; d++) p->nbatch *= p->bsz[d];
}

static bool fits(int64_t v) { return v >= 0 && v <= INT_MAX; }

/* a full rows x cols matrix operand as BLAS wants it; false if it cannot be */
static bool mat_layout(la_op *o, int64_t rows, int64_t cols) {
  int64_t rs = rows == 1 ? (cols > 1 ? cols : 1) : o->rs;
  int64_t cs = cols == 1 ? 1 : o->cs;
  if (cs == 1 && rs >= (cols > 1 ? cols : 1)) { o->trans = 0; o->ld = rs; }
  else if (rs == 1 && cs >= (rows > 1 ? rows : 1)) { o->trans = 1; o->ld = cs; }
  else return false;
  return fits(o->ld);
}

/* a vector operand of n elements with stride st */
static bool vec_layout(la_op *o, int64_t n, int64_t st) {
  o->inc = n > 1 ? st : 1;
  return o->inc >= 1 && fits(o->inc);
}

/* which operands BLAS cannot take as they are: bit 1 A, 2 B, 4 C; 8 hopeless */
static int blas_check(la_prob *p) {
  int bad = 0;
  int64_t m = p->m, n = p->n, k = p->k;
  if (!fits(m) || !fits(n) || !fits(k)) return 8;
  for (int d = 0; d < p->nb; d++)
    if (!p->reduce && p->c.bst[d] == 0) bad |= 4;     /* would write one matrix twice */
  if (k == 0) return bad;
  if (m == 1 && n == 1) {
    if (!vec_layout(&p->a, k, p->a.cs)) bad |= 1;
    if (!vec_layout(&p->b, k, p->b.rs)) bad |= 2;
  } else if (n == 1) {
    if (!mat_layout(&p->a, m, k)) bad |= 1;
    if (!vec_layout(&p->b, k, p->b.rs)) bad |= 2;
    if (!vec_layout(&p->c, m, p->c.rs)) bad |= 4;
  } else if (m == 1) {
    if (!vec_layout(&p->a, k, p->a.cs)) bad |= 1;
    if (!mat_layout(&p->b, k, n)) bad |= 2;
    if (!vec_layout(&p->c, n, p->c.cs)) bad |= 4;
  } else {
    if (!mat_layout(&p->a, m, k)) bad |= 1;
    if (!mat_layout(&p->b, k, n)) bad |= 2;
    if (!mat_layout(&p->c, m, n) || p->c.trans) bad |= 4;
  }
  return bad;
}

static int int_check(la_prob *p) {
  for (int d = 0; d < p->nb; d++)
    if (!p->reduce && p->c.bst[d] == 0) return 4;
  return 0;
}

/* element offsets of batch `lin` in A, B, C */
static void batch_offsets(const la_prob *p, int64_t lin, int64_t *ao, int64_t *bo, int64_t *co) {
  int64_t a = 0, b = 0, c = 0;
  for (int d = p->nb - 1; d >= 0; d--) {
    int64_t i = lin % p->bsz[d];
    lin /= p->bsz[d];
    a += i * p->a.bst[d]; b += i * p->b.bst[d]; c += i * p->c.bst[d];
  }
  *ao = a; *bo = b; *co = c;
}

/* ---- float32 / float64 through BLAS ---- */

/* ---- one product, split over the pool ---- */

typedef struct blas_job {
  bool f32, ta, tb, split_n;
  int64_t m, n, k, step;
  double alpha, beta;
  const char *A, *B;
  char *C;
  int64_t lda, ldb, ldc;
} blas_job;

static void blas_part(const blas_job *g, int64_t i0, int64_t m, int64_t j0, int64_t n) {
  size_t es = g->f32 ? 4 : 8;
  const char *A = g->A + (size_t)(g->ta ? i0 : i0 * g->lda) * es;
  const char *B = g->B + (size_t)(g->tb ? j0 * g->ldb : j0) * es;
  char *C = g->C + (size_t)(i0 * g->ldc + j0) * es;
  enum CBLAS_TRANSPOSE ta = g->ta ? CblasTrans : CblasNoTrans, tb = g->tb ? CblasTrans : CblasNoTrans;
  if (g->f32 && lt_gemm_lib_sgemm(g->ta, g->tb, m, n, g->k, (float)g->alpha, (const float *)A, g->lda,
                                  (const float *)B, g->ldb, (float)g->beta, (float *)C, g->ldc))
    return;
  if (g->f32)
    cblas_sgemm(CblasRowMajor, ta, tb, (blasint)m, (blasint)n, (blasint)g->k, (float)g->alpha, (const float *)A,
                (blasint)g->lda, (const float *)B, (blasint)g->ldb, (float)g->beta, (float *)C, (blasint)g->ldc);
  else
    cblas_dgemm(CblasRowMajor, ta, tb, (blasint)m, (blasint)n, (blasint)g->k, g->alpha, (const double *)A,
                (blasint)g->lda, (const double *)B, (blasint)g->ldb, g->beta, (double *)C, (blasint)g->ldc);
}

static void blas_chunk(void *ctx, int64_t p0, int64_t p1) {
  const blas_job *g = ctx;
  int64_t len = g->split_n ? g->n : g->m;
  for (int64_t p = p0; p < p1 && !lt_interrupt_flag; p++) {
    int64_t lo = p * g->step, hi = lo + g->step < len ? lo + g->step : len;
    if (lo >= hi) continue;
    if (g->split_n) blas_part(g, 0, g->m, lo, hi - lo);
    else blas_part(g, lo, hi - lo, 0, g->n);
  }
}

void lt_la_blas_gemm(bool f32, bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha,
                     const void *A, int64_t lda, const void *B, int64_t ldb, double beta, void *C, int64_t ldc) {
  size_t es = f32 ? 4 : 8;
  if (m <= 0 || n <= 0) return;
  /* OpenBLAS clears C for beta = 0 in a separate slow pass; a memset and beta = 1 is faster */
  if (beta == 0.0 && k > 0) {
    if (ldc == n) memset(C, 0, (size_t)(m * n) * es);
    else for (int64_t i = 0; i < m; i++) memset((char *)C + (size_t)(i * ldc) * es, 0, (size_t)n * es);
    beta = 1.0;
  }
  blas_job g = {f32, ta, tb, false, m, n, k, 0, alpha, beta, A, B, C, lda, ldb, ldc};
  int nt = lt_get_num_threads();
  if ((nt > 1 ? m * n * k >= LA_SMALL_GEMM : m * n * k > 2 * LA_CHUNK_MACS) && !lt_in_parallel_region()) {
    if (n >= 32 * nt) {
      g.split_n = true;
      g.step = ((n + nt - 1) / nt + 15) / 16 * 16;
    } else if (m >= 16 * nt) {
      g.step = ((m + nt - 1) / nt + 7) / 8 * 8;
    }
    if (g.step > 0) {
      /* chunks small enough to notice Ctrl-C, big enough to keep BLAS at speed */
      int64_t align = g.split_n ? 16 : 8, other = g.split_n ? m : n;
      int64_t cap = LA_CHUNK_MACS / (other * k) / align * align;
      if (cap < 16 * align) cap = 16 * align;
      if (g.step > cap) g.step = cap;
      int64_t len = g.split_n ? n : m;
      lt_parallel_for((len + g.step - 1) / g.step, 1, blas_chunk, &g);
      return;
    }
  }
  blas_part(&g, 0, m, 0, n);
}

/* y = alpha op(M) x + beta y for a product with n == 1 (or m == 1) inside
** one_X: AL and BE are alpha and beta as the routine takes them (by value for
** s/d, by address for c/z). OpenBLAS scales y by beta first: it is cleared
** here when beta is 0, so NaNs in fresh memory vanish. */
#define LA_GEMV(T, X, AL, BE)                                                                \
    const la_op *mat = n == 1 ? &p->a : &p->b;                                               \
    const T *M = n == 1 ? A : B, *x = n == 1 ? B : A;                                        \
    blasint incx = (blasint)(n == 1 ? p->b.inc : p->a.inc), incy = (blasint)p->c.inc;        \
    blasint len = n == 1 ? m : n;                                                            \
    if (beta0) for (blasint i = 0; i < len; i++) C[(int64_t)i * incy] = 0;                  \
    if (n == 1) {                                                                            \
      if (!mat->trans) cblas_##X##gemv(CblasRowMajor, CblasNoTrans, m, k, AL, M, (blasint)mat->ld, x, incx, BE, C, incy); \
      else cblas_##X##gemv(CblasRowMajor, CblasTrans, k, m, AL, M, (blasint)mat->ld, x, incx, BE, C, incy); \
    } else {                                                                                 \
      if (!mat->trans) cblas_##X##gemv(CblasRowMajor, CblasTrans, k, n, AL, M, (blasint)mat->ld, x, incx, BE, C, incy); \
      else cblas_##X##gemv(CblasRowMajor, CblasNoTrans, n, k, AL, M, (blasint)mat->ld, x, incx, BE, C, incy); \
    }

#define LA_BLAS(T, X)                                                                        \
static void scale_##X(T *C, int64_t m, int64_t n, int64_t rs, int64_t cs, double beta, bool beta0) { \
  for (int64_t i = 0; i < m; i++)                                                           \
    for (int64_t j = 0; j < n; j++) {                                                       \
      T *c = C + i * rs + j * cs;                                                            \
      *c = beta0 ? (T)0 : (T)(beta * *c);                                                    \
    }                                                                                        \
}                                                                                            \
static void one_##X(const la_prob *p, const T *A, const T *B, T *C, double beta_d, bool beta0) { \
  blasint m = (blasint)p->m, n = (blasint)p->n, k = (blasint)p->k;                           \
  T al = (T)p->alpha, be = beta0 ? (T)0 : (T)beta_d;                                         \
  if (k == 0) { scale_##X(C, m, n, p->c.rs, p->c.cs, beta_d, beta0); return; }              \
  if (m == 1 && n == 1) {                                                                    \
    T d = cblas_##X##dot(k, A, (blasint)p->a.inc, B, (blasint)p->b.inc);                      \
    C[0] = beta0 ? al * d : al * d + be * C[0];                                              \
  } else if (n == 1 || m == 1) {                                                             \
    LA_GEMV(T, X, al, be)                                                                    \
  } else {                                                                                   \
    lt_la_blas_gemm(sizeof(T) == 4, p->a.trans, p->b.trans, m, n, k, p->alpha, A, p->a.ld,    \
                    B, p->b.ld, beta0 ? 0.0 : beta_d, C, p->c.ld);                           \
  }                                                                                          \
}                                                                                            \
static void batch_##X(const la_prob *p, int64_t b, bool first) {                             \
  int64_t ao, bo, co;                                                                        \
  batch_offsets(p, b, &ao, &bo, &co);                                                        \
  one_##X(p, (const T *)p->a.p + ao, (const T *)p->b.p + bo, (T *)p->c.p + co,              \
          first ? p->beta : 1.0, first ? p->beta0 : false);                                  \
}                                                                                            \
static void chunk_##X(void *ctx, int64_t b0, int64_t b1) {                                   \
  const la_prob *p = ctx;                                                                    \
  for (int64_t b = b0; b < b1; b++) batch_##X(p, b, true);                                   \
}

LA_BLAS(float, s)
LA_BLAS(double, d)

/* complex64 / complex128 through BLAS's c and z routines (alpha and beta are
** passed by address; dotu, not dotc: a product does not conjugate). One BLAS
** call per batch, on the calling thread. */
#define LA_BLAS_CX(T, R, X)                                                                  \
static void one_##X(const la_prob *p, const T *A, const T *B, T *C, double beta_d, bool beta0) { \
  blasint m = (blasint)p->m, n = (blasint)p->n, k = (blasint)p->k;                           \
  T al = (T)p->alpha, be = beta0 ? (T)0 : (T)beta_d;                                         \
  if (k == 0 || m == 0 || n == 0) {                                                          \
    for (int64_t i = 0; i < m; i++)                                                          \
      for (int64_t j = 0; j < n; j++) { T *c = C + i * p->c.rs + j * p->c.cs; *c = beta0 ? (T)0 : be * *c; } \
    return;                                                                                  \
  }                                                                                          \
  if (m == 1 && n == 1) {                                                                    \
    T d;                                                                                     \
    cblas_##X##dotu_sub(k, A, (blasint)p->a.inc, B, (blasint)p->b.inc, &d);                  \
    C[0] = beta0 ? al * d : al * d + be * C[0];                                              \
  } else if (n == 1 || m == 1) {                                                             \
    LA_GEMV(T, X, &al, &be)                                                                  \
  } else {                                                                                   \
    cblas_##X##gemm(CblasRowMajor, p->a.trans ? CblasTrans : CblasNoTrans, p->b.trans ? CblasTrans : CblasNoTrans, \
                    m, n, k, &al, A, (blasint)p->a.ld, B, (blasint)p->b.ld, &be, C, (blasint)p->c.ld); \
  }                                                                                          \
}                                                                                            \
static void run_##X(la_prob *p) {                                                            \
  for (int64_t b = 0; b < p->nbatch; b++) {                                                  \
    bool first = !p->reduce || b == 0;                                                       \
    int64_t ao, bo, co;                                                                      \
    batch_offsets(p, b, &ao, &bo, &co);                                                      \
    one_##X(p, (const T *)p->a.p + ao, (const T *)p->b.p + bo, (T *)p->c.p + co,            \
            first ? p->beta : 1.0, first ? p->beta0 : false);                                \
  }                                                                                          \
  if (p->nbatch == 0 && p->reduce) {   /* no products: C = beta C */                         \
    la_prob q = *p; q.k = 0; one_##X(&q, NULL, NULL, (T *)p->c.p, p->beta, p->beta0);        \
  }                                                                                          \
}
LA_BLAS_CX(float _Complex, float, c)
LA_BLAS_CX(double _Complex, double, z)

static void run_blas(la_prob *p) {
  bool f32 = p->dt == LT_FLOAT32;
  if (p->nbatch == 0) {
    if (p->reduce) {
      if (f32) scale_s((float *)p->c.p, p->m, p->n, p->c.rs, p->c.cs, p->beta, p->beta0);
      else scale_d((double *)p->c.p, p->m, p->n, p->c.rs, p->c.cs, p->beta, p->beta0);
    }
    return;
  }
  int64_t work = p->m * p->n * p->k;
  bool vec = p->m == 1 || p->n == 1;
  bool small = work < (vec ? LA_SMALL_GEMV : LA_SMALL_GEMM);
  if (!p->reduce && p->nbatch > 1 && small) {
    int64_t grain = LA_GRAIN_WORK / (work > 0 ? work : 1);
    lt_parallel_for(p->nbatch, grain > 0 ? grain : 1, f32 ? chunk_s : chunk_d, p);
    return;
  }
  for (int64_t b = 0; b < p->nbatch; b++) {
    if (f32) batch_s(p, b, !p->reduce || b == 0);
    else batch_d(p, b, !p->reduce || b == 0);
  }
}

/* ---- integers: int64 with wrapping (unsigned) arithmetic ---- */

static void int_chunk(void *ctx, int64_t t0, int64_t t1) {
  la_prob *p = ctx;
  uint64_t *acc = malloc(sizeof(uint64_t) * IB * JB);
  if (!acc) { atomic_store(&p->failed, 1); return; }
  int64_t nrb = (p->m + IB - 1) / IB;
  const int64_t ars = p->a.rs, acs = p->a.cs, brs = p->b.rs, bcs = p->b.cs;
  const int64_t crs = p->c.rs, ccs = p->c.cs;
  const uint64_t al = (uint64_t)p->ialpha, be = (uint64_t)p->ibeta;
  for (int64_t t = t0; t < t1; t++) {
    int64_t cb = t / nrb, i0 = (t % nrb) * IB;
    int64_t i1 = i0 + IB < p->m ? i0 + IB : p->m;
    int64_t ao, bo, co;
    batch_offsets(p, cb, &ao, &bo, &co);
    int64_t *C = (int64_t *)p->c.p + co;
    int64_t pb0 = p->reduce ? 0 : cb, pb1 = p->reduce ? p->nbatch : cb + 1;
    for (int64_t j0 = 0; j0 < p->n; j0 += JB) {
      int64_t jn = p->n - j0 < JB ? p->n - j0 : JB;
      memset(acc, 0, sizeof(uint64_t) * IB * JB);
      for (int64_t pb = pb0; pb < pb1; pb++) {
        batch_offsets(p, pb, &ao, &bo, &co);
        const int64_t *A = (const int64_t *)p->a.p + ao, *B = (const int64_t *)p->b.p + bo;
        for (int64_t k0 = 0; k0 < p->k; k0 += KB) {
          int64_t k1 = k0 + KB < p->k ? k0 + KB : p->k;
          for (int64_t i = i0; i < i1; i++) {
            uint64_t *ar = acc + (i - i0) * JB;
            for (int64_t kk = k0; kk < k1; kk++) {
              uint64_t av = (uint64_t)A[i * ars + kk * acs];
              if (!av) continue;
              const int64_t *br = B + kk * brs + j0 * bcs;
              if (bcs == 1) for (int64_t j = 0; j < jn; j++) ar[j] += av * (uint64_t)br[j];
              else for (int64_t j = 0; j < jn; j++) ar[j] += av * (uint64_t)br[j * bcs];
            }
          }
        }
      }
      for (int64_t i = i0; i < i1; i++) {
        const uint64_t *ar = acc + (i - i0) * JB;
        int64_t *cr = C + i * crs + j0 * ccs;
        for (int64_t j = 0; j < jn; j++) {
          uint64_t v = al * ar[j];
          if (!p->beta0) v += be * (uint64_t)cr[j * ccs];
          cr[j * ccs] = (int64_t)v;
        }
      }
    }
  }
  free(acc);
}

static int run_int(const char *op, la_prob *p) {
  if (p->m == 0 || p->n == 0) return 0;
  int64_t nrb = (p->m + IB - 1) / IB;
  int64_t ntask = (p->reduce ? 1 : p->nbatch) * nrb;
  int64_t work = IB * p->n * (p->k > 0 ? p->k : 1) * (p->reduce ? (p->nbatch > 0 ? p->nbatch : 1) : 1);
  int64_t grain = LA_GRAIN_WORK / (work > 0 ? work : 1);
  if (!p->reduce && p->nbatch == 0) return 0;
  atomic_init(&p->failed, 0);
  lt_parallel_for(ntask, grain > 0 ? grain : 1, int_chunk, p);
  if (atomic_load(&p->failed)) return lt_error("%s: out of memory", op);
  return 0;
}

/* ---- driver ---- */

static int gemm_same(const char *op, lt_tensor *C, lt_tensor *A, lt_tensor *B,
                     lt_scalar alpha, lt_scalar beta, bool reduce) {
  lt_dtype dt = (lt_dtype)C->dtype;
  bool is_int = dt == LT_INT64;
  lt_tensor *a = A, *b = B, *c = C;
  lt_tensor_retain(a); lt_tensor_retain(b); lt_tensor_retain(c);
  int rc = -1;
  la_prob p;
  memset(&p, 0, sizeof p);
  p.dt = dt;
  p.reduce = reduce;
  p.alpha = lt_scalar_to_double(alpha);
  p.beta = lt_scalar_to_double(beta);
  p.ialpha = lt_scalar_to_int64(alpha);
  p.ibeta = lt_scalar_to_int64(beta);
  p.beta0 = lt_la_scalar_is_zero(beta);
  /* a product written over its own input would read what it already wrote */
  int bad = (c->storage == a->storage || c->storage == b->storage) ? 4 : 0;
  for (int tries = 0;; tries++) {
    describe(&p, c, a, b);
    fold_batch(&p);
    bad |= is_int ? int_check(&p) : blas_check(&p);
    if (!bad) break;
    if ((bad & 8) || tries == 2) {
      lt_error("%s: matrix dimensions too large for BLAS (at most %d)", op, INT_MAX);
      goto done;
    }
    if (bad & 1) { lt_tensor *t = lt_tensor_clone_as(a, dt); if (!t) goto done; lt_tensor_release(a); a = t; }
    if (bad & 2) { lt_tensor *t = lt_tensor_clone_as(b, dt); if (!t) goto done; lt_tensor_release(b); b = t; }
    if (bad & 4) {
      lt_tensor *t = p.beta0 ? lt_tensor_new_like(c, dt) : lt_tensor_clone_as(c, dt);
      if (!t) goto done;
      lt_tensor_release(c); c = t;
    }
    bad = 0;
  }
  if (is_int) {
    if (run_int(op, &p) < 0) goto done;
  } else if (dt == LT_COMPLEX64) {
    run_c(&p);
  } else if (dt == LT_COMPLEX128) {
    run_z(&p);
  } else {
    run_blas(&p);
  }
  rc = 0;
  if (c != C) rc = lt_tensor_copy_(C, c);
done:
  lt_tensor_release(a); lt_tensor_release(b); lt_tensor_release(c);
  return rc;
}

/* ---- 16-bit floats: through float32 ----
** An operand is converted to float32 whole, keeping its strides, when its
** elements fill one span of memory in some order (a contiguous tensor, a
** transposed one, one with broadcast dims of stride 0): the conversion is then
** one vector pass over the span (cvt.h), and BLAS sees the same layout the
** 16-bit tensor had (a transposed weight stays transposed: no strided copy).
** Others are converted to contiguous copies. The result is computed in float32
** and rounded to the 16-bit type once, on the way back. */

#define HALF_CVT_GRAIN 65536

typedef struct half_span { int kind; bool to32; void *dst; const void *src; } half_span;

static void half_span_chunk(void *ctx, int64_t b, int64_t e) {
  const half_span *h = ctx;
  if (h->to32) lt_cvt_half_to_f32(h->kind, (float *)h->dst + b, (const uint16_t *)h->src + b, e - b);
  else lt_cvt_f32_to_half(h->kind, (uint16_t *)h->dst + b, (const float *)h->src + b, e - b);
}

static void half_convert(int kind, bool to32, void *dst, const void *src, int64_t n) {
  half_span h = {kind, to32, dst, src};
  if (n < 2 * HALF_CVT_GRAIN || lt_in_parallel_region()) half_span_chunk(&h, 0, n);
  else lt_parallel_for(n, HALF_CVT_GRAIN, half_span_chunk, &h);
}

/* elements of the span t's strides cover, or -1 when they leave gaps, overlap
** or go backwards (dims of size 1 and broadcast dims of stride 0 aside) */
static int64_t dense_span(const lt_tensor *t) {
  int d[LT_MAX_DIMS], n = 0;
  for (int i = 0; i < t->ndim; i++) {
    if (t->sizes[i] == 1 || t->strides[i] == 0) continue;
    if (t->strides[i] < 0) return -1;
    d[n++] = i;
  }
  for (int i = 1; i < n; i++)   /* by stride, smallest first */
    for (int j = i; j > 0 && t->strides[d[j - 1]] > t->strides[d[j]]; j--) { int x = d[j]; d[j] = d[j - 1]; d[j - 1] = x; }
  int64_t span = 1;
  for (int i = 0; i < n; i++) {
    if (t->strides[d[i]] != span) return -1;
    span *= t->sizes[d[i]];
  }
  return span;
}

/* t (16-bit) in float32: same strides over a span of its own when dense, else
** contiguous; `fill` false leaves the values unset (a result written with beta 0) */
static lt_tensor *half_to_f32(lt_tensor *t, int kind, bool fill) {
  int64_t span = dense_span(t);
  if (span < 0) return fill ? lt_tensor_to_dtype_contig(t, LT_FLOAT32) : lt_tensor_new_like(t, LT_FLOAT32);
  lt_tensor *buf = lt_tensor_new(LT_FLOAT32, lt_tensor_device(t), 1, &span);
  if (!buf) return NULL;
  lt_tensor *v = lt_tensor_alias(buf, 0, t->ndim, t->sizes, t->strides);
  lt_tensor_release(buf);
  if (v && fill) half_convert(kind, true, lt_tensor_data(v), lt_tensor_data(t), span);
  return v;
}

static int gemm_half(const char *op, lt_tensor *C, lt_tensor *A, lt_tensor *B,
                     lt_scalar alpha, lt_scalar beta, bool reduce) {
  int kind = C->dtype == LT_BFLOAT16 ? 2 : 1;
  bool beta0 = lt_la_scalar_is_zero(beta);
  lt_tensor *a = half_to_f32(A, kind, true);
  lt_tensor *b = a ? (B == A ? (lt_tensor_retain(a), a) : half_to_f32(B, kind, true)) : NULL;
  /* C's own layout when it is dense and shares no memory with A or B */
  int64_t cspan = (C->storage == A->storage || C->storage == B->storage) ? -1 : dense_span(C);
  lt_tensor *c = NULL;
  if (b) c = cspan >= 0 ? half_to_f32(C, kind, !beta0)
                        : beta0 ? lt_tensor_new_like(C, LT_FLOAT32) : lt_tensor_clone_as(C, LT_FLOAT32);
  int rc = -1;
  if (c && gemm_same(op, c, a, b, alpha, beta, reduce) == 0) {
    if (cspan >= 0) { half_convert(kind, false, lt_tensor_data(C), lt_tensor_data(c), cspan); rc = 0; }
    else rc = lt_tensor_copy_(C, c);
  }
  lt_tensor_release(a); lt_tensor_release(b); lt_tensor_release(c);
  return rc;
}

int lt_la_gemm(const char *op, lt_tensor *C, lt_tensor *A, lt_tensor *B,
               lt_scalar alpha, lt_scalar beta, bool reduce) {
  lt_dtype dt = (lt_dtype)C->dtype;
  if (dt == LT_BOOL) return lt_error("%s: not implemented for dtype bool", op);
  if (C->numel == 0) return 0;
  if ((dt == LT_BFLOAT16 || dt == LT_FLOAT16) && A->dtype == dt && B->dtype == dt)
    return gemm_half(op, C, A, B, alpha, beta, reduce);
  lt_dtype cdt = dt == LT_FLOAT64 || lt_dtype_is_complex(dt) ? dt : lt_dtype_is_float(dt) ? LT_FLOAT32 : LT_INT64;
  if (cdt == dt) return gemm_same(op, C, A, B, alpha, beta, reduce);
  /* narrow integers compute in int64; wrapping happens once, on the way back */
  lt_tensor *a = lt_tensor_to_dtype_contig(A, cdt);
  lt_tensor *b = a ? lt_tensor_to_dtype_contig(B, cdt) : NULL;
  lt_tensor *c = NULL;
  if (b) c = lt_la_scalar_is_zero(beta) ? lt_tensor_new_like(C, cdt) : lt_tensor_clone_as(C, cdt);
  int rc = -1;
  if (c && gemm_same(op, c, a, b, alpha, beta, reduce) == 0) rc = lt_tensor_copy_(C, c);
  lt_tensor_release(a); lt_tensor_release(b); lt_tensor_release(c);
  return rc;
}
