/*
** formulas_linalg.c — derivative helpers of src/ops/linalg.lua. Every helper
** is written with the ops' entry points (lt_mm, lt_matmul, lt_transpose, ...)
** so that create_graph records the backward computation too.
*/
#include <stdlib.h>
#include <string.h>
#include "formulas_linalg.h"
#include "formulas_complex.h"
#include "lt_ops.h"
#include "meta/einsum.h"

/* alpha * r, consuming r */
static lt_tensor *scaled(lt_tensor *r, lt_scalar alpha) {
  if (!r) return NULL;
  lt_tensor *s = lt_grad_scale(r, alpha);
  lt_tensor_release(r);
  return s;
}

/* the last two dims swapped (a view); for a complex t also conjugated (mH,
** a copy): a product's gradient takes the other factor's adjoint, so pass
** the factor here, never grad */
static lt_tensor *mT(lt_tensor *t) {
  if (!lt_dtype_is_complex((lt_dtype)t->dtype)) return lt_transpose(t, t->ndim - 2, t->ndim - 1);
  lt_tensor *c = lt_conj(t);
  lt_tensor *r = c ? lt_transpose(c, c->ndim - 2, c->ndim - 1) : NULL;
  lt_tensor_release(c);
  return r;
}

/* f(a, t^T): releases the transposed view */
static lt_tensor *with_mT(lt_tensor *(*f)(lt_tensor *, lt_tensor *), lt_tensor *a, lt_tensor *t, bool t_first) {
  lt_tensor *tt = mT(t);
  if (!tt) return NULL;
  lt_tensor *r = t_first ? f(tt, a) : f(a, tt);
  lt_tensor_release(tt);
  return r;
}

/* ---- mm, bmm and their add* forms ---- */

lt_tensor *lt_grad_mm_mat1(lt_tensor *grad, lt_tensor *mat2, lt_scalar alpha) {
  return scaled(with_mT(lt_mm, grad, mat2, false), alpha);
}

lt_tensor *lt_grad_mm_mat2(lt_tensor *grad, lt_tensor *mat1, lt_scalar alpha) {
  return scaled(with_mT(lt_mm, grad, mat1, true), alpha);
}

lt_tensor *lt_grad_bmm_batch1(lt_tensor *grad, lt_tensor *batch2, lt_scalar alpha) {
  return scaled(with_mT(lt_bmm, grad, batch2, false), alpha);
}

lt_tensor *lt_grad_bmm_batch2(lt_tensor *grad, lt_tensor *batch1, lt_scalar alpha) {
  return scaled(with_mT(lt_bmm, grad, batch1, true), alpha);
}

/* matmul broadcasts the 2-D grad over the batch: (n x p) @ (b x p x m) */
lt_tensor *lt_grad_addbmm_batch1(lt_tensor *grad, lt_tensor *batch2, lt_scalar alpha) {
  return scaled(with_mT(lt_matmul, grad, batch2, false), alpha);
}

lt_tensor *lt_grad_addbmm_batch2(lt_tensor *grad, lt_tensor *batch1, lt_scalar alpha) {
  return scaled(with_mT(lt_matmul, grad, batch1, true), alpha);
}

/* ---- mv, outer ---- */

lt_tensor *lt_grad_mv_mat(lt_tensor *grad, lt_tensor *vec, lt_scalar alpha) {
  lt_tensor *v = lt_grad_conj(vec);
  lt_tensor *r = v ? lt_outer(grad, v) : NULL;
  lt_tensor_release(v);
  return scaled(r, alpha);
}

lt_tensor *lt_grad_mv_vec(lt_tensor *grad, lt_tensor *mat, lt_scalar alpha) {
  return scaled(with_mT(lt_mv, grad, mat, true), alpha);
}

/* sum over dim d of m * v (v broadcast along the other dim): the mixed-dtype
** form of m @ v, since mv wants one dtype while outer promotes */
static lt_tensor *mul_sum(lt_tensor *m, lt_tensor *v, int64_t d) {
  lt_tensor *vv = d == 0 ? lt_unsqueeze(v, 1) : (lt_tensor_retain(v), v);
  if (!vv) return NULL;
  lt_tensor *p = lt_mul(m, vv);
  lt_tensor_release(vv);
  if (!p) return NULL;
  lt_tensor *r = lt_sum(p, lt_intlist_make(&d, 1), false, -1);
  lt_tensor_release(p);
  return r;
}

lt_tensor *lt_grad_outer_vec1(lt_tensor *grad, lt_tensor *vec2, lt_scalar alpha) {
  lt_tensor *v = lt_grad_conj(vec2), *r = NULL;
  if (v) r = grad->dtype != v->dtype ? mul_sum(grad, v, 1) : lt_mv(grad, v);
  lt_tensor_release(v);
  return scaled(r, alpha);
}

lt_tensor *lt_grad_outer_vec2(lt_tensor *grad, lt_tensor *vec1, lt_scalar alpha) {
  lt_tensor *v = lt_grad_conj(vec1), *r = NULL;
  if (v && grad->dtype != v->dtype) r = mul_sum(grad, v, 0);
  else if (v) {   /* grad^T conj(vec1): the transpose of grad itself, not its adjoint */
    lt_tensor *gt = lt_transpose(grad, 0, 1);
    r = gt ? lt_mv(gt, v) : NULL;
    lt_tensor_release(gt);
  }
  lt_tensor_release(v);
  return scaled(r, alpha);
}

/* ---- matmul ---- */

/* grad seen as (batch..., rows, cols) whatever the operand ranks: a 1-D self
** removed the row dim, a 1-D other the column dim */
static lt_tensor *matmul_grad3(lt_tensor *grad, int da, int db) {
  lt_tensor *g = grad, *t;
  lt_tensor_retain(g);
  if (da == 1) {
    t = lt_unsqueeze(g, db == 1 ? 0 : g->ndim - 1);
    lt_tensor_release(g);
    if (!(g = t)) return NULL;
  }
  if (db == 1) {
    t = lt_unsqueeze(g, g->ndim);
    lt_tensor_release(g);
    g = t;
  }
  return g;
}

static lt_tensor *squeezed(lt_tensor *r, int64_t dim) {
  if (!r) return NULL;
  lt_tensor *s = lt_squeeze(r, dim < 0 ? r->ndim + dim : dim);
  lt_tensor_release(r);
  return s;
}

lt_tensor *lt_grad_matmul_self(lt_tensor *grad, lt_tensor *other, const lt_input_meta *self_meta) {
  int da = self_meta->ndim, db = other->ndim;
  if (da == 1 && db == 1) return lt_grad_mul_conj(grad, other);
  lt_tensor *g = matmul_grad3(grad, da, db), *b = NULL, *r = NULL;
  if (!g) return NULL;
  lt_tensor *oc = lt_grad_conj(other);
  b = !oc ? NULL : db == 1 ? lt_unsqueeze(oc, 0) : lt_transpose(oc, oc->ndim - 2, oc->ndim - 1);  /* (1 x k): the transposed column */
  lt_tensor_release(oc);
  if (b) r = lt_matmul(g, b);
  lt_tensor_release(g);
  lt_tensor_release(b);
  return da == 1 ? squeezed(r, -2) : r;
}

lt_tensor *lt_grad_matmul_other(lt_tensor *grad, lt_tensor *self, const lt_input_meta *other_meta) {
  int da = self->ndim, db = other_meta->ndim;
  if (da == 1 && db == 1) return lt_grad_mul_conj(grad, self);
  lt_tensor *g = matmul_grad3(grad, da, db), *a = NULL, *r = NULL;
  if (!g) return NULL;
  lt_tensor *sc = lt_grad_conj(self);
  a = !sc ? NULL : da == 1 ? lt_unsqueeze(sc, 1) : lt_transpose(sc, sc->ndim - 2, sc->ndim - 1);   /* (k x 1): the transposed row */
  lt_tensor_release(sc);
  if (a) r = lt_matmul(a, g);
  lt_tensor_release(g);
  lt_tensor_release(a);
  return db == 1 ? squeezed(r, -1) : r;
}

/* ---- inner ---- */

static lt_tensor *reshaped(lt_tensor *t, int n, const int64_t *sizes) {
  return lt_reshape(t, lt_intlist_make(sizes, n));
}

static int64_t lead_numel(int nd, const int64_t *sizes) {
  int64_t p = 1;
  for (int i = 0; i < nd - 1; i++) p *= sizes[i];
  return p;
}

/* g (S..., O...) as (M x N) times x (O..., k) as (N x k), or its transpose form,
** back in the shape of the input the gradient is for */
static lt_tensor *inner_grad(lt_tensor *grad, lt_tensor *x, const lt_input_meta *meta, bool for_self) {
  int64_t k = x->sizes[x->ndim - 1];
  int64_t lm = lead_numel(meta->ndim, meta->sizes), lx = lead_numel(x->ndim, x->sizes);
  int64_t M = for_self ? lm : lx, N = for_self ? lx : lm;
  int64_t gs[2] = {M, N}, xs[2] = {for_self ? N : M, k};
  lt_tensor *g = reshaped(grad, 2, gs), *xm = g ? reshaped(x, 2, xs) : NULL, *r = NULL;
  if (xm) r = for_self ? lt_mm(g, xm) : with_mT(lt_mm, xm, g, true);
  lt_tensor_release(g);
  lt_tensor_release(xm);
  if (!r) return NULL;
  lt_tensor *o = reshaped(r, meta->ndim, meta->sizes);
  lt_tensor_release(r);
  return o;
}

lt_tensor *lt_grad_inner_self(lt_tensor *grad, lt_tensor *other, const lt_input_meta *self_meta) {
  /* with a 0-d operand inner is a product; lt_grad_to_meta sums a 0-d self's grad */
  if (self_meta->ndim == 0 || other->ndim == 0) return lt_mul(grad, other);
  return inner_grad(grad, other, self_meta, true);
}

lt_tensor *lt_grad_inner_other(lt_tensor *grad, lt_tensor *self, const lt_input_meta *other_meta) {
  if (other_meta->ndim == 0 || self->ndim == 0) return lt_mul(grad, self);
  return inner_grad(grad, self, other_meta, false);
}

/* ---- trace ---- */

lt_tensor *lt_grad_trace(lt_tensor *grad, const lt_input_meta *self_meta) {
  lt_tensor *eye = lt_eye(self_meta->sizes[0], self_meta->sizes[1], grad->dtype, self_meta->device);
  if (!eye) return NULL;
  lt_tensor *r = lt_mul(eye, grad);
  lt_tensor_release(eye);
  return r;
}

/* ---- kron ---- */

/*
** result[i*bs + j] = a[i] * b[j] along every dim, so grad seen as
** (a0, b0, a1, b1, ...) gives a's gradient as the sum over the b dims of
** grad * b, and b's as the sum over the a dims of grad * a.
*/
static lt_tensor *kron_grad(lt_tensor *grad, lt_tensor *x, const lt_input_meta *meta, bool for_self) {
  int nd = meta->ndim > x->ndim ? meta->ndim : x->ndim;
  if (2 * nd > LT_MAX_DIMS) return lt_error_null("kron: at most %d dims are supported, got %d", LT_MAX_DIMS / 2, nd);
  int64_t gs[LT_MAX_DIMS], xs[LT_MAX_DIMS], sd[LT_MAX_DIMS];
  for (int i = 0; i < nd; i++) {
    int im = i - (nd - meta->ndim), ix = i - (nd - x->ndim);
    int64_t ms = im >= 0 ? meta->sizes[im] : 1, xz = ix >= 0 ? x->sizes[ix] : 1;
    /* (self dim, other dim) pairs; x keeps its size in its own slot and 1 in the other */
    gs[2 * i] = for_self ? ms : xz;
    gs[2 * i + 1] = for_self ? xz : ms;
    xs[2 * i] = for_self ? 1 : xz;
    xs[2 * i + 1] = for_self ? xz : 1;
    sd[i] = for_self ? 2 * i + 1 : 2 * i;
  }
  lt_tensor *g = reshaped(grad, 2 * nd, gs), *xv = g ? reshaped(x, 2 * nd, xs) : NULL, *p = NULL, *s = NULL, *r = NULL;
  if (xv) p = lt_mul(g, xv);
  if (p) s = lt_sum(p, lt_intlist_make(sd, nd), false, -1);
  if (s) r = reshaped(s, meta->ndim, meta->sizes);
  lt_tensor_release(g); lt_tensor_release(xv); lt_tensor_release(p); lt_tensor_release(s);
  return r;
}

lt_tensor *lt_grad_kron_self(lt_tensor *grad, lt_tensor *other, const lt_input_meta *self_meta) {
  return kron_grad(grad, other, self_meta, true);
}

lt_tensor *lt_grad_kron_other(lt_tensor *grad, lt_tensor *self, const lt_input_meta *other_meta) {
  return kron_grad(grad, self, other_meta, false);
}

/* ---- einsum ---- */

/*
** The differentiable form of einsum, used when an operand needs a gradient:
** the same plan (meta/einsum.h) as the BLAS kernel, written with view and
** product ops so that autograd records every step and double backward works:
** repeated subscripts become diagonals, subscripts of size 1 broadcast against
** a larger size are squeezed away, subscripts only one operand has and the
** output does not keep are summed, then the operands are contracted left to
** right as one bmm each (batch, rows, inner) x (batch, inner, cols).
*/
#define EIN_MAXL LT_EINSUM_MAXL   /* labels (meta/einsum.h) */

typedef struct ein_term {
  lt_tensor *t;                 /* owned */
  int lab[LT_MAX_DIMS];         /* label of each dim of t */
} ein_term;

/* replace x->t by r (consumed); -1 when r is NULL */
static int ein_set(ein_term *x, lt_tensor *r) {
  if (!r) return -1;
  lt_tensor_release(x->t);
  x->t = r;
  return 0;
}

static void ein_drop(ein_term *x, int d) {
  for (int i = d; i + 1 < LT_MAX_DIMS; i++) x->lab[i] = x->lab[i + 1];
}

/* X <- X contracted with Y over the labels keep[] does not hold, as one bmm */
static int ein_contract(ein_term *X, ein_term *Y, const bool *keep) {
  int px[3][LT_MAX_DIMS], py[3][LT_MAX_DIMS], nx[3] = {0, 0, 0}, ny[3] = {0, 0, 0};
  int posy[EIN_MAXL];
  for (int l = 0; l < EIN_MAXL; l++) posy[l] = -1;
  for (int d = 0; d < Y->t->ndim; d++) posy[Y->lab[d]] = d;
  bool iny[EIN_MAXL] = {false}, inx[EIN_MAXL] = {false};
  for (int d = 0; d < Y->t->ndim; d++) iny[Y->lab[d]] = true;
  /* X: batch, rows, inner; Y: batch, inner, cols (inner in X's order on both) */
  for (int d = 0; d < X->t->ndim; d++) {
    int l = X->lab[d];
    inx[l] = true;
    int g = !iny[l] ? 1 : keep[l] ? 0 : 2;
    px[g][nx[g]++] = d;
    if (g != 1) { int gy = g == 0 ? 0 : 1; py[gy][ny[gy]++] = posy[l]; }
  }
  for (int d = 0; d < Y->t->ndim; d++)
    if (!inx[Y->lab[d]]) py[2][ny[2]++] = d;
  int rn = nx[0] + nx[1] + ny[2];
  if (rn > LT_MAX_DIMS) return lt_error("einsum: an intermediate result would have more than %d dims", LT_MAX_DIMS);
  int64_t permx[LT_MAX_DIMS], permy[LT_MAX_DIMS], rs[LT_MAX_DIMS], s3x[3] = {1, 1, 1}, s3y[3] = {1, 1, 1};
  int rl[LT_MAX_DIMS], k = 0, q = 0;
  for (int g = 0; g < 3; g++)
    for (int i = 0; i < nx[g]; i++) {
      int d = px[g][i];
      permx[k++] = d;
      s3x[g] *= X->t->sizes[d];
      if (g < 2) { rs[q] = X->t->sizes[d]; rl[q++] = X->lab[d]; }
    }
  k = 0;
  for (int g = 0; g < 3; g++)
    for (int i = 0; i < ny[g]; i++) {
      int d = py[g][i];
      permy[k++] = d;
      s3y[g] *= Y->t->sizes[d];
      if (g == 2) { rs[q] = Y->t->sizes[d]; rl[q++] = Y->lab[d]; }
    }
  int64_t ax[3] = {s3x[0], s3x[1], s3x[2]}, by[3] = {s3y[0], s3y[1], s3y[2]};
  lt_tensor *xp = lt_permute(X->t, lt_intlist_make(permx, X->t->ndim));
  lt_tensor *yp = xp ? lt_permute(Y->t, lt_intlist_make(permy, Y->t->ndim)) : NULL;
  lt_tensor *x3 = yp ? reshaped(xp, 3, ax) : NULL, *y3 = x3 ? reshaped(yp, 3, by) : NULL;
  lt_tensor *p = y3 ? lt_bmm(x3, y3) : NULL;
  lt_tensor_release(xp); lt_tensor_release(yp); lt_tensor_release(x3); lt_tensor_release(y3);
  if (!p) return -1;
  lt_tensor *r = reshaped(p, rn, rs);
  lt_tensor_release(p);
  if (ein_set(X, r) < 0) return -1;
  memcpy(X->lab, rl, sizeof(int) * (size_t)rn);
  return 0;
}

static lt_tensor *einsum_graph(const char *equation, lt_tensor *const *tensors, int n) {
  /* the kernel's plan, with an operand's bad sizes reported by dim as this path always has */
  lt_einsum_plan P;
  if (lt_meta_einsum_terms(&P, equation, n, tensors) < 0 || lt_meta_einsum_sizes(&P, tensors, true) < 0 ||
      lt_meta_einsum_output(&P, equation) < 0)
    return NULL;
  ein_term *ts = calloc((size_t)n, sizeof *ts);
  bool (*has)[EIN_MAXL] = P.has;   /* what each operand keeps once diagonals and squeezes are done */
  bool computed = false;
  lt_tensor *result = NULL;
  const int64_t *size = P.size;
  const int *out = P.out;
  const bool *outl = P.outl;
  int nout = P.nout;
  if (!ts) { lt_error("einsum: out of memory"); goto done; }
  for (int i = 0; i < n; i++) memcpy(ts[i].lab, P.lab[i], sizeof ts[i].lab);
  /* each operand on its own: diagonals, then broadcast size-1 dims dropped */
  for (int i = 0; i < n; i++) {
    ein_term *x = &ts[i];
    lt_tensor_retain(tensors[i]);
    x->t = tensors[i];
    for (bool again = true; again;) {
      again = false;
      for (int a = 0; a < x->t->ndim && !again; a++)
        for (int b = a + 1; b < x->t->ndim && !again; b++)
          if (x->lab[a] == x->lab[b]) {
            int l = x->lab[a];
            if (ein_set(x, lt_diagonal(x->t, 0, a, b)) < 0) goto done;
            ein_drop(x, b);
            ein_drop(x, a);
            x->lab[x->t->ndim - 1] = l;
            again = true;
          }
    }
    for (int d = x->t->ndim - 1; d >= 0; d--)
      if (x->t->sizes[d] == 1 && size[x->lab[d]] != 1) {
        if (ein_set(x, lt_squeeze(x->t, d)) < 0) goto done;
        ein_drop(x, d);
      }
  }
  /* labels only one operand has and the output drops: summed right away */
  for (int i = 0; i < n; i++) {
    ein_term *x = &ts[i];
    int64_t dims[LT_MAX_DIMS];
    int nd = 0, nl2 = 0, keep[LT_MAX_DIMS];
    for (int d = 0; d < x->t->ndim; d++) {
      int l = x->lab[d];
      bool other = false;
      for (int j = 0; j < n && !other; j++) other = j != i && has[j][l];
      if (!outl[l] && !other) dims[nd++] = d;
      else keep[nl2++] = l;
    }
    if (nd > 0) {
      if (ein_set(x, lt_sum(x->t, lt_intlist_make(dims, nd), false, -1)) < 0) goto done;
      for (int d = 0; d < nl2; d++) x->lab[d] = keep[d];
      memset(has[i], 0, sizeof has[i]);
      for (int d = 0; d < nl2; d++) has[i][keep[d]] = true;
      computed = true;
    }
  }
  /* contracted left to right */
  for (int i = 1; i < n; i++) {
    bool kp[EIN_MAXL];
    for (int l = 0; l < EIN_MAXL; l++) {
      kp[l] = outl[l];
      for (int j = i + 1; j < n && !kp[l]; j++) kp[l] = has[j][l];
    }
    if (ein_contract(&ts[0], &ts[i], kp) < 0) goto done;
    computed = true;
  }
  {
    ein_term *x = &ts[0];
    int64_t perm[LT_MAX_DIMS];
    if (x->t->ndim != nout) { lt_error("einsum: internal error: %d dims left for %d output subscripts", x->t->ndim, nout); goto done; }
    for (int j = 0; j < nout; j++) {
      perm[j] = -1;
      for (int d = 0; d < x->t->ndim; d++) if (x->lab[d] == out[j]) perm[j] = d;
      if (perm[j] < 0) { lt_error("einsum: internal error: output subscript missing"); goto done; }
    }
    lt_tensor *p = lt_permute(x->t, lt_intlist_make(perm, nout));
    /* a fresh tensor, never a view of an operand (like the kernel's result) */
    if (p) result = computed ? lt_contiguous(p) : lt_clone(p);
    lt_tensor_release(p);
  }
done:
  if (ts) for (int i = 0; i < n; i++) lt_tensor_release(ts[i].t);
  free(ts);
  lt_meta_einsum_free(&P);
  return result;
}

lt_tensor *lt_la_einsum_autograd(const char *equation, lt_tensor *const *tensors, int tensors_n) {
  if (!lt_grad_enabled() || !lt_any_requires_grad(tensors, tensors_n))
    return lt_einsum_fast(equation, tensors, tensors_n);
  if (lt_meta_einsum_operands(tensors_n, tensors) < 0) return NULL;
  return einsum_graph(equation, tensors, tensors_n);
}
