/*
** linalg_spectral_eig.c — the CPU kernel of torch.linalg.eig and eigvals
** (_linalg_eig in src/ops/linalg_spectral.lua): one geev call per matrix of
** the batch (linalg_eig.h), real inputs through s/dgeev with their complex
** pairs unpacked, complex ones through c/zgeev. The results are complex
** whatever the input: eigenvalues (batch..., n) in LAPACK's order and
** eigenvectors as unit-norm columns, column-major, as PyTorch returns them.
*/
#include "kernels_cpu.h"   /* generated: lt_ops.h and the CPU kernels */
#include "cpu/lapack_batch.h"
#include "cpu/linalg_eig.h"
#include "meta/linalg_spectral.h"
#include "core/error.h"

typedef struct eig_ctx {
  lt_lapack_batch a, v;          /* the input (overwritten), the vectors (v.buf NULL: none) */
  lt_tensor *w;                  /* (batch..., n) complex, contiguous */
  int n;
  lt_dtype dt;                   /* the input's */
} eig_ctx;

static int eig_one(void *vc, int64_t i) {
  eig_ctx *c = vc;
  void *a = lt_lapack_batch_at(&c->a, i), *v = c->v.buf ? lt_lapack_batch_at(&c->v, i) : NULL;
  size_t off = (size_t)i * (size_t)c->n * 2;
  switch (c->dt) {
  case LT_FLOAT64: return lt_cpu_geev_f64(c->n, a, (double *)lt_tensor_data(c->w) + off, v);
  case LT_FLOAT32: return lt_cpu_geev_f32(c->n, a, (float *)lt_tensor_data(c->w) + off, v);
  case LT_COMPLEX128: return lt_cpu_geev_c128(c->n, a, (double *)lt_tensor_data(c->w) + off, v);
  default: return lt_cpu_geev_c64(c->n, a, (float *)lt_tensor_data(c->w) + off, v);
  }
}

int lt_cpu__linalg_eig(lt_tensor *A, bool compute_v, lt_tensor **eigenvalues, lt_tensor **eigenvectors) {
  const char *op = compute_v ? "linalg.eig" : "linalg.eigvals";
  if (lt_meta_spectral_matrix(op, "A", A, true) < 0) return -1;
  eig_ctx c = {0};
  c.dt = lt_tensor_dtype(A);
  lt_dtype cdt = lt_dtype_to_complex(c.dt);
  int nb = A->ndim - 2, rc = -1;
  int64_t n = A->sizes[A->ndim - 1], bad = 0, wsz[LT_MAX_DIMS];
  if (lt_lapack_dim(op, n, &c.n) < 0) return -1;
  for (int i = 0; i < nb; i++) wsz[i] = A->sizes[i];
  wsz[nb] = n;
  if (lt_lapack_batch_from(&c.a, A, false, c.dt, nb, A->sizes) < 0) return -1;
  if (lt_lapack_check_finite(op, "A", &c.a) < 0) goto done;
  if (!(c.w = lt_tensor_new(cdt, lt_tensor_device(A), nb + 1, wsz))) goto done;
  if (compute_v && lt_lapack_batch_new(&c.v, cdt, lt_tensor_device(A), nb, A->sizes, n, n) < 0) goto done;
  int info = lt_lapack_batch_each(c.a.count, (double)n * n * n, eig_one, &c, &bad);
  if (info) {
    lt_lapack_failed(op, info, bad, "the QR algorithm failed to converge");
    goto done;
  }
  if (compute_v) *eigenvectors = lt_lapack_batch_tensor(&c.v, false);
  else {
    int64_t z = 0;
    *eigenvectors = lt_tensor_new(cdt, lt_tensor_device(A), 1, &z);
  }
  if (!*eigenvectors) goto done;
  *eigenvalues = c.w;
  c.w = NULL;
  rc = 0;
done:
  lt_lapack_batch_release(&c.a);
  lt_lapack_batch_release(&c.v);
  lt_tensor_release(c.w);
  return rc;
}
