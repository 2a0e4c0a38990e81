/*
** blas.c — the cuBLAS seam (blas.h): opening libcublas, one handle per
** device and thread, and lt_cuda_gemm, which maps lutorch's row-major
** strided operands onto cublasGemmStridedBatchedEx calls.
**
** The mapping. cuBLAS is column-major: a row-major (r x c) matrix whose
** column stride is 1 and row stride ld is, to cuBLAS, the (c x r) matrix
** X^T with leading dimension ld ("N" below); one whose row stride is 1 and
** column stride ld is X itself, column-major ("T"). Row-major C = A B is
** column-major C^T = B^T A^T, so the call is gemm(op of B, op of A, n, m, k,
** B, A, C). C must be "N" for cuBLAS (it writes C^T); a "T" C is handled by
** computing the transposed product C^T = B^T A^T instead, which swaps the
** roles of A and B. An operand with neither layout (a general 2-D stride,
** negative strides, an expanded row) is copied to a contiguous temporary;
** a C with neither, or one that overlaps A or B, gets a temporary that is
** copied back. Batch dims of size 1 are dropped and dims that chain in all
** three operands merged; the innermost remaining one is cuBLAS's batch (its
** strides are the batch strides, 0 for a broadcast operand), the others are
** looped here. addbmm's reduction is a loop of single products, beta for
** the first and 1 after (a strided batch with stride 0 in C would race).
**
** Handles: one per device per thread, created lazily with the device's
** context current (a handle belongs to the context it was created in), and
** set to the device's current stream before each product. Handles of a
** thread that exits are not destroyed (lutorch's pool threads never run
** products on the device). Math mode: float32 runs in full float32
** (CUBLAS_COMPUTE_32F, no TF32: lutorch has no allow_tf32 flag yet);
** float16 and bfloat16 accumulate in float32 (COMPUTE_32F), float64 in
** float64.
**
** Nothing of the real path (dlopen, handles, streams) has run on a GPU; the
** mapping is tested against the fake cuBLAS (fake_blas.c) under the fake driver.
*/
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/error.h"
#include "cuda/blas.h"
#include "cuda/cuda.h"
#include "cuda/launch.h"

/* ---- opening ---- */

static const struct { const char *symbol; size_t offset; } entries[] = {
  {"cublasCreate_v2", offsetof(lt_blas, create)},
  {"cublasDestroy_v2", offsetof(lt_blas, destroy)},
  {"cublasSetStream_v2", offsetof(lt_blas, set_stream)},
  {"cublasSetMathMode", offsetof(lt_blas, set_math_mode)},
  {"cublasGemmStridedBatchedEx", offsetof(lt_blas, gemm_strided_batched)},
  {"cublasGetStatusString", offsetof(lt_blas, status_string)},
};
_Static_assert(sizeof entries / sizeof entries[0] == (sizeof(lt_blas) - offsetof(lt_blas, create)) / sizeof(void *),
               "every entry of lt_blas has a symbol");

static pthread_once_t open_once = PTHREAD_ONCE_INIT;
static lt_blas real;
static const lt_blas *opened;
static char why[256];

static void open_cublas(void) {
  if (lt_cuda_host_device_memory()) { opened = lt_cuda_fake_blas(); return; }
  static const char *names[] = {"libcublas.so.13", "libcublas.so.12"};
  void *h = NULL;
  const char *name = NULL;
  for (size_t i = 0; i < sizeof names / sizeof names[0] && !h; i++)
    if ((h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL))) name = names[i];
  if (!h) {
    const char *e = dlerror();
    snprintf(why, sizeof why, "cuBLAS not found (libcublas.so.13 or .12): %s", e ? e : "?");
    return;
  }
  lt_blas t = {.name = name};
  for (size_t i = 0; i < sizeof entries / sizeof entries[0]; i++) {
    void *p = dlsym(h, entries[i].symbol);
    if (!p) { snprintf(why, sizeof why, "%s has no %s", name, entries[i].symbol); return; }
    memcpy((char *)&t + entries[i].offset, &p, sizeof p);
  }
  real = t;
  opened = &real;
}

const lt_blas *lt_cuda_blas(const char *op) {
  pthread_once(&open_once, open_cublas);
  if (!opened) return lt_error_null("%s: %s", op, why);
  return opened;
}

static atomic_long calls;
long lt_cuda_blas_calls(bool reset) { return reset ? atomic_exchange(&calls, 0) : atomic_load(&calls); }

static const char *status_name(const lt_blas *b, lt_blas_status s) {
  const char *n = b->status_string ? b->status_string(s) : NULL;
  return n ? n : "CUBLAS_STATUS_?";
}

/* the handle of device dev for this thread, with dev's context current */
static _Thread_local lt_blas_handle handles[LT_CUDA_MAX_DEVICES];

static lt_blas_handle handle(const lt_blas *b, int dev, const char *op) {
  if (handles[dev]) return handles[dev];
  lt_blas_handle h = NULL;
  lt_blas_status s = b->create(&h);
  if (s != LT_BLAS_SUCCESS)
    return lt_error_null("%s: cuda:%d: cublasCreate failed: %s", op, dev, status_name(b, s));
  s = b->set_math_mode(h, LT_BLAS_DEFAULT_MATH);
  if (s != LT_BLAS_SUCCESS) {
    b->destroy(h);
    return lt_error_null("%s: cuda:%d: cublasSetMathMode failed: %s", op, dev, status_name(b, s));
  }
  return handles[dev] = h;
}

/* ---- the mapping ---- */

bool lt_cuda_gemm_dtype(lt_dtype dt) {
  return dt == LT_FLOAT32 || dt == LT_FLOAT64 || dt == LT_FLOAT16 || dt == LT_BFLOAT16;
}

/* one operand: a (r x c) row-major matrix with strides rs, cs, batch strides bst */
typedef struct gm {
  char *p;
  int64_t rs, cs;
  int64_t bst[LT_MAX_DIMS];
} gm;

/* the operand as cuBLAS reads it: *trans (LT_BLAS_OP_N or _T, see the top)
** and *ld; false when its strides have neither layout */
static bool layout(int64_t r, int64_t c, int64_t rs, int64_t cs, int *trans, int64_t *ld) {
  int64_t c1 = c > 1 ? c : 1, r1 = r > 1 ? r : 1;
  if ((c == 1 || cs == 1) && (r == 1 || rs >= c1)) { *trans = LT_BLAS_OP_N; *ld = r == 1 ? c1 : rs; return *ld <= INT_MAX; }
  if ((r == 1 || rs == 1) && (c == 1 || cs >= r1)) { *trans = LT_BLAS_OP_T; *ld = c == 1 ? r1 : cs; return *ld <= INT_MAX; }
  return false;
}

static bool fits(const lt_tensor *t) {
  int nd = t->ndim;
  int tr;
  int64_t ld;
  return layout(t->sizes[nd - 2], t->sizes[nd - 1], t->strides[nd - 2], t->strides[nd - 1], &tr, &ld);
}

static bool overlaps(const lt_tensor *a, const lt_tensor *b) { return a->storage == b->storage; }

typedef struct prob {
  int dt;                  /* cuBLAS data type */
  int compute;
  size_t es;
  int64_t m, n, k;
  int nb;
  int64_t bsz[LT_MAX_DIMS];
  gm a, b, c;
  bool reduce;
  double alpha, beta;
} prob;

/* one cuBLAS call of `count` products at a, b, c (each advancing by its
** innermost batch stride); beta as given */
static int call(const lt_blas *bl, lt_blas_handle h, const prob *p, const char *pa, const char *pb, char *pc,
                int64_t count, double beta, const char *op, int dev) {
  int ta, tb;
  int64_t lda, ldb, ldc;
  int ctr;
  /* row-major C = A B as column-major C^T = B^T A^T: cuBLAS's A is our B */
  if (!layout(p->k, p->n, p->b.rs, p->b.cs, &ta, &lda) || !layout(p->m, p->k, p->a.rs, p->a.cs, &tb, &ldb) ||
      !layout(p->m, p->n, p->c.rs, p->c.cs, &ctr, &ldc) || ctr != LT_BLAS_OP_N)
    return lt_error("%s: internal error: an operand reached cuBLAS with strides it cannot read", op);
  int last = p->nb - 1;
  long long sa = last >= 0 ? p->a.bst[last] : 0, sb = last >= 0 ? p->b.bst[last] : 0,
            sc = last >= 0 ? p->c.bst[last] : 0;
  float af = (float)p->alpha, bf = (float)beta;
  double ad = p->alpha, bd = beta;
  const void *al = p->compute == LT_BLAS_COMPUTE_64F ? (const void *)&ad : (const void *)&af;
  const void *be = p->compute == LT_BLAS_COMPUTE_64F ? (const void *)&bd : (const void *)&bf;
  while (count > 0) {
    int cnt = count > INT_MAX ? INT_MAX : (int)count;
    lt_blas_status s = bl->gemm_strided_batched(h, ta, tb, (int)p->n, (int)p->m, (int)p->k, al, pb, p->dt, (int)lda,
                                                sb, pa, p->dt, (int)ldb, sa, be, pc, p->dt, (int)ldc, sc, cnt,
                                                p->compute, LT_BLAS_GEMM_DEFAULT);
    if (s != LT_BLAS_SUCCESS)
      return lt_error("%s: cuda:%d: cublasGemmStridedBatchedEx failed: %s", op, dev, status_name(bl, s));
    atomic_fetch_add(&calls, 1);
    count -= cnt;
    pa += sa * cnt * (int64_t)p->es; pb += sb * cnt * (int64_t)p->es; pc += sc * cnt * (int64_t)p->es;
  }
  return 0;
}

/* every product of p: the outer batch dims looped, the innermost one batched */
static int run(const prob *p, const char *op, int dev) {
  const lt_blas *bl = lt_cuda_blas(op);
  if (!bl) return -1;
  lt_cuda_launch l;
  if (lt_cuda_launch_begin(&l, dev, true, op) < 0) return -1;
  int rc = -1;
  lt_blas_handle h = handle(bl, dev, op);
  if (!h) goto done;
  lt_blas_status s = bl->set_stream(h, l.stream);
  if (s != LT_BLAS_SUCCESS) { lt_error("%s: cuda:%d: cublasSetStream failed: %s", op, dev, status_name(bl, s)); goto done; }
  int64_t outer = 1;
  int inner = p->reduce ? p->nb : p->nb - 1;   /* dims looped here: all of them when reducing */
  for (int d = 0; d < inner; d++) outer *= p->bsz[d];
  int64_t count = p->reduce || p->nb == 0 ? 1 : p->bsz[p->nb - 1];
  int64_t idx[LT_MAX_DIMS] = {0};
  prob q = *p;
  if (p->reduce) q.nb = 0;                        /* one product per call */
  rc = 0;
  for (int64_t i = 0; i < outer && rc == 0; i++) {
    int64_t oa = 0, ob = 0, oc = 0;
    for (int d = 0; d < inner; d++) { oa += idx[d] * p->a.bst[d]; ob += idx[d] * p->b.bst[d]; oc += idx[d] * p->c.bst[d]; }
    int64_t es = (int64_t)p->es;
    double beta = p->reduce && i > 0 ? 1.0 : p->beta;
    rc = call(bl, h, &q, p->a.p + oa * es, p->b.p + ob * es, p->c.p + oc * es, count, beta, op, dev);
    for (int d = inner - 1; d >= 0; d--) { if (++idx[d] < p->bsz[d]) break; idx[d] = 0; }
  }
done:
  lt_cuda_launch_end(&l);
  if (rc == 0) (void)lt_cuda_launch_result(&l, op, LT_CK_OK, NULL);
  return rc;
}

/* C = beta C for a product with nothing to sum (k = 0, or an empty reduction) */
static int scale(const char *op, lt_tensor *C, lt_scalar beta, bool beta0) {
  if (beta0) return lt_tensor_fill_(C, lt_scalar_int(0));
  _Alignas(16) unsigned char number[16];
  lt_ck_geom g0;
  lt_cuda_geom_init(&g0, 0, NULL);
  double f = lt_scalar_to_double(beta);
  (void)lt_ck_host_copy(number, C->dtype, &f, LT_CK_FLOAT64, &g0, NULL);
  lt_ck_geom g;
  lt_cuda_geom_init(&g, C->ndim, C->sizes);
  memcpy(g.strides[0], C->strides, sizeof(int64_t) * (size_t)C->ndim);
  memcpy(g.strides[1], C->strides, sizeof(int64_t) * (size_t)C->ndim);
  lt_cuda_launch l;
  if (lt_cuda_launch_begin(&l, lt_tensor_device(C).index, lt_cuda_have_device_kernels(), op) < 0) return -1;
  const lt_ck_kernels *k = lt_cuda_ck_kernels(&l);
  lt_ck_scalar one = {1, 1};
  int rc = k->binary(LT_CK_MUL, C->dtype, lt_tensor_data(C), lt_tensor_data(C), NULL, number, one, &g, l.stream);
  lt_cuda_launch_end(&l);
  rc = lt_cuda_launch_result(&l, op, rc, k->error_string);
  return rc > 0 ? lt_error("%s: the CUDA kernels cannot scale this result", op) : rc;
}

static lt_tensor *transposed(lt_tensor *t) {
  int nd = t->ndim;
  int64_t sz[LT_MAX_DIMS], st[LT_MAX_DIMS];
  memcpy(sz, t->sizes, sizeof(int64_t) * (size_t)nd);
  memcpy(st, t->strides, sizeof(int64_t) * (size_t)nd);
  sz[nd - 2] = t->sizes[nd - 1]; sz[nd - 1] = t->sizes[nd - 2];
  st[nd - 2] = t->strides[nd - 1]; st[nd - 1] = t->strides[nd - 2];
  return lt_tensor_alias(t, t->offset, nd, sz, st);
}

int lt_cuda_gemm(const char *op, lt_tensor *C, lt_tensor *A, lt_tensor *B, lt_scalar alpha, lt_scalar beta,
                 bool reduce) {
  lt_dtype dt = (lt_dtype)A->dtype;
  if (!lt_cuda_gemm_dtype(dt)) return 1;
  if (B->dtype != dt || C->dtype != dt) return lt_error("%s: internal error: operands of different dtypes", op);
  bool beta0 = beta.type == LT_SCALAR_FLOAT ? beta.v.f == 0.0 : beta.v.i == 0;
  int nb = A->ndim - 2;
  int64_t m = A->sizes[nb], k = A->sizes[nb + 1], n = B->sizes[nb + 1];
  if (C->numel == 0) return 0;
  int64_t nbatch = 1;
  for (int d = 0; d < nb; d++) nbatch *= A->sizes[d];
  if (k == 0 || nbatch == 0) return scale(op, C, beta, beta0);
  if (m > INT_MAX || n > INT_MAX || k > INT_MAX)
    return lt_error("%s: a matrix dim over %d is not supported by cuBLAS's 32-bit interface", op, INT_MAX);

  /* C through a temporary when cuBLAS cannot write it as it is, or it overlaps an input */
  if (overlaps(C, A) || overlaps(C, B) || !fits(C)) {
    lt_tensor *T = lt_tensor_new(dt, lt_tensor_device(C), C->ndim, C->sizes);
    if (!T) return -1;
    int rc = beta0 ? 0 : lt_tensor_copy_(T, C);
    if (rc == 0) rc = lt_cuda_gemm(op, T, A, B, alpha, beta, reduce);
    if (rc == 0) rc = lt_tensor_copy_(C, T);
    lt_tensor_release(T);
    return rc;
  }
  /* a "T" C: compute C^T = B^T A^T, whose C is "N" */
  int tr;
  int64_t ld;
  int cnd = C->ndim;
  if (!layout(C->sizes[cnd - 2], C->sizes[cnd - 1], C->strides[cnd - 2], C->strides[cnd - 1], &tr, &ld) ||
      tr != LT_BLAS_OP_N) {
    lt_tensor *Ct = transposed(C), *At = transposed(A), *Bt = transposed(B);
    int rc = Ct && At && Bt ? lt_cuda_gemm(op, Ct, Bt, At, alpha, beta, reduce) : -1;
    lt_tensor_release(Ct); lt_tensor_release(At); lt_tensor_release(Bt);
    return rc;
  }
  /* inputs cuBLAS cannot read as they are: contiguous copies */
  lt_tensor *a = fits(A) ? (lt_tensor_retain(A), A) : lt_tensor_contiguous(A);
  lt_tensor *b = a ? (fits(B) ? (lt_tensor_retain(B), B) : lt_tensor_contiguous(B)) : NULL;
  int rc = -1;
  if (!b) goto done;

  prob p;
  memset(&p, 0, sizeof p);
  p.dt = dt == LT_FLOAT32 ? LT_BLAS_R_32F : dt == LT_FLOAT64 ? LT_BLAS_R_64F : dt == LT_FLOAT16 ? LT_BLAS_R_16F
                                                                                               : LT_BLAS_R_16BF;
  p.compute = dt == LT_FLOAT64 ? LT_BLAS_COMPUTE_64F : LT_BLAS_COMPUTE_32F;
  p.es = lt_dtype_size(dt);
  p.m = m; p.n = n; p.k = k;
  p.reduce = reduce;
  p.alpha = lt_scalar_to_double(alpha);
  p.beta = beta0 ? 0.0 : lt_scalar_to_double(beta);
  p.a.p = lt_tensor_data(a); p.b.p = lt_tensor_data(b); p.c.p = lt_tensor_data(C);
  p.a.rs = a->strides[nb]; p.a.cs = a->strides[nb + 1];
  p.b.rs = b->strides[nb]; p.b.cs = b->strides[nb + 1];
  p.c.rs = C->strides[cnd - 2]; p.c.cs = C->strides[cnd - 1];
  /* batch dims: 1s dropped, chains merged (C's strides are 0 when reducing) */
  for (int d = 0; d < nb; d++) {
    int64_t sz = a->sizes[d];
    if (sz == 1) continue;
    int64_t sa = a->strides[d], sb = b->strides[d], sc = reduce ? 0 : C->strides[d];
    int j = p.nb - 1;
    if (j >= 0 && p.a.bst[j] == sa * sz && p.b.bst[j] == sb * sz && p.c.bst[j] == sc * sz && !reduce) {
      p.bsz[j] *= sz;
      p.a.bst[j] = sa; p.b.bst[j] = sb; p.c.bst[j] = sc;
      continue;
    }
    p.bsz[p.nb] = sz;
    p.a.bst[p.nb] = sa; p.b.bst[p.nb] = sb; p.c.bst[p.nb] = sc;
    p.nb++;
  }
  rc = run(&p, op, lt_tensor_device(C).index);
done:
  lt_tensor_release(a);
  lt_tensor_release(b);
  return rc;
}
