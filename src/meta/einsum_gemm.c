/*
** einsum_gemm.c — einsum on any device, over the backend's gemm
** (meta/linalg.h): the equation is parsed into labels, each operand
** becomes a strided view over the labels (repeated labels are diagonals), and
** the operands are contracted left to right, two at a time, each pair as one
** batched product: labels both keep are batch dims, labels only one keeps are
** rows or columns, everything else is summed as the inner dimension. A label
** only one operand has and nobody needs later is summed by the same product,
** against stride-0 columns of the other operand.
*/
#include <stdlib.h>
#include <string.h>
#include "meta/einsum.h"   /* the equation's syntax and plan */
#include "meta/linalg.h"

#define NLETTERS LT_EINSUM_NLETTERS
#define MAXL LT_EINSUM_MAXL

typedef struct ein_opd {
  lt_tensor *t;                 /* owned: holds the memory the strides index */
  bool has[MAXL];
  int64_t stride[MAXL];
} ein_opd;

/* what the products read of the plan: size[], out[], nout */
typedef lt_einsum_plan ein;

static void opd_release(ein_opd *o) { lt_tensor_release(o->t); o->t = NULL; }

/* the view order of one operand inside a product: batch dims, then two groups */
typedef struct ein_group { int l[MAXL]; int n; } ein_group;

static void sort_by_stride(ein_group *g, const ein_opd *o) {
  for (int i = 1; i < g->n; i++)
    for (int j = i; j > 0; j--) {
      int a = g->l[j - 1], b = g->l[j];
      int64_t sa = o->has[a] ? o->stride[a] : 0, sb = o->has[b] ? o->stride[b] : 0;
      if (sa >= sb) break;
      g->l[j - 1] = b; g->l[j] = a;
    }
}

/* merged (size, stride) of a group's labels in o; false if they do not chain */
static bool merge_group(const ein *E, const ein_opd *o, const ein_group *g, int64_t *size, int64_t *stride) {
  int64_t sz = 1, st = 1;
  bool first = true;
  for (int i = g->n - 1; i >= 0; i--) {
    int l = g->l[i];
    int64_t s = E->size[l];
    if (s == 1) continue;
    int64_t ls = o->has[l] ? o->stride[l] : 0;
    if (first) { st = ls; sz = s; first = false; continue; }
    if (ls != st * sz) return false;
    sz *= s;
  }
  *size = sz;
  *stride = st;
  return true;
}

/* o laid out contiguously in the order batch, g1, g2 (a copy) */
static int relayout(const ein *E, ein_opd *o, const ein_group *bt, const ein_group *g1, const ein_group *g2) {
  int64_t sz[LT_MAX_DIMS], st[LT_MAX_DIMS];
  int order[MAXL], n = 0;
  const ein_group *gs[3] = {bt, g1, g2};
  for (int q = 0; q < 3; q++)
    for (int i = 0; i < gs[q]->n; i++)
      if (E->size[gs[q]->l[i]] != 1) order[n++] = gs[q]->l[i];
  if (n > LT_MAX_DIMS) return lt_error("einsum: an intermediate result would have more than %d dims", LT_MAX_DIMS);
  for (int i = 0; i < n; i++) {
    sz[i] = E->size[order[i]];
    st[i] = o->has[order[i]] ? o->stride[order[i]] : 0;
  }
  lt_tensor *v = lt_tensor_alias(o->t, o->t->offset, n, sz, st);
  lt_tensor *c = v ? lt_tensor_clone_as(v, (lt_dtype)o->t->dtype) : NULL;
  lt_tensor_release(v);
  if (!c) return -1;
  lt_tensor_release(o->t);
  o->t = c;
  for (int i = 0; i < n; i++) { o->has[order[i]] = true; o->stride[order[i]] = c->strides[i]; }
  return 0;
}

/* X <- contraction of X and Y keeping the labels in `keep` */
static int contract(lt_meta_gemm_fn gemm, const ein *E, ein_opd *X, ein_opd *Y, const bool *keep) {
  ein_group bt = {{0}, 0}, gm = {{0}, 0}, gk = {{0}, 0}, gn = {{0}, 0};
  for (int l = 0; l < MAXL; l++) {
    bool hx = X->has[l], hy = Y->has[l];
    if (!hx && !hy) continue;
    if (hx && hy && keep[l]) bt.l[bt.n++] = l;
    else if (!keep[l]) gk.l[gk.n++] = l;
    else if (hx) gm.l[gm.n++] = l;
    else gn.l[gn.n++] = l;
  }
  if (bt.n + 2 > LT_MAX_DIMS)
    return lt_error("einsum: an intermediate result would have more than %d dims", LT_MAX_DIMS);
  sort_by_stride(&gm, X);
  sort_by_stride(&gk, X->t->numel > 1 ? X : Y);
  sort_by_stride(&gn, Y);
  int64_t M = 0, K = 0, N = 0, ms = 0, ks = 0, kys = 0, ns = 0;   /* set by merge_group */
  if (!merge_group(E, X, &gm, &M, &ms) || !merge_group(E, X, &gk, &K, &ks)) {
    if (relayout(E, X, &bt, &gm, &gk) < 0) return -1;
    merge_group(E, X, &gm, &M, &ms);
    merge_group(E, X, &gk, &K, &ks);
  }
  if (!merge_group(E, Y, &gk, &K, &kys) || !merge_group(E, Y, &gn, &N, &ns)) {
    if (relayout(E, Y, &bt, &gk, &gn) < 0) return -1;
    merge_group(E, Y, &gk, &K, &kys);
    merge_group(E, Y, &gn, &N, &ns);
  }
  int nb = bt.n;
  int64_t asz[LT_MAX_DIMS], ast[LT_MAX_DIMS], bsz[LT_MAX_DIMS], bst[LT_MAX_DIMS], csz[LT_MAX_DIMS];
  for (int i = 0; i < nb; i++) {
    int l = bt.l[i];
    asz[i] = bsz[i] = csz[i] = E->size[l];
    ast[i] = X->stride[l];
    bst[i] = Y->stride[l];
  }
  asz[nb] = M; asz[nb + 1] = K; ast[nb] = ms; ast[nb + 1] = ks;
  bsz[nb] = K; bsz[nb + 1] = N; bst[nb] = kys; bst[nb + 1] = ns;
  csz[nb] = M; csz[nb + 1] = N;
  lt_tensor *A = lt_tensor_alias(X->t, X->t->offset, nb + 2, asz, ast);
  lt_tensor *B = A ? lt_tensor_alias(Y->t, Y->t->offset, nb + 2, bsz, bst) : NULL;
  lt_tensor *C = B ? lt_tensor_new((lt_dtype)X->t->dtype, lt_tensor_device(X->t), nb + 2, csz) : NULL;
  int rc = -1;
  if (C && gemm("einsum", C, A, B, lt_scalar_int(1), lt_scalar_int(0), false) == 0) rc = 0;
  lt_tensor_release(A);
  lt_tensor_release(B);
  if (rc < 0) { lt_tensor_release(C); return -1; }
  /* the product's labels: batch dims, then the row labels, then the column labels */
  lt_tensor_release(X->t);
  X->t = C;
  memset(X->has, 0, sizeof X->has);
  for (int i = 0; i < nb; i++) { X->has[bt.l[i]] = true; X->stride[bt.l[i]] = C->strides[i]; }
  int64_t run = C->strides[nb];
  for (int i = gm.n - 1; i >= 0; i--) { int l = gm.l[i]; X->has[l] = true; X->stride[l] = run; run *= E->size[l]; }
  run = C->strides[nb + 1];
  for (int i = gn.n - 1; i >= 0; i--) { int l = gn.l[i]; X->has[l] = true; X->stride[l] = run; run *= E->size[l]; }
  return 0;
}

lt_tensor *lt_meta_einsum(lt_meta_gemm_fn gemm, const char *equation, lt_tensor *const *tensors, int n) {
  ein E;
  if (lt_meta_einsum_plan(&E, equation, n, tensors) < 0) return NULL;
  ein_opd *ops = calloc((size_t)n, sizeof(ein_opd));
  lt_tensor *result = NULL;
  ein_opd ones = {0};
  if (!ops) { lt_error("einsum: out of memory"); goto done; }
  /* each operand as strides over the labels (a repeated label is a diagonal) */
  for (int i = 0; i < n; i++) {
    lt_tensor *t = tensors[i];
    ein_opd *o = &ops[i];
    lt_tensor_retain(t);
    o->t = t;
    for (int d = 0; d < t->ndim; d++) o->stride[E.lab[i][d]] += t->strides[d];
    memcpy(o->has, E.has[i], sizeof o->has);
  }
  /* contract left to right */
  const bool *outl = E.outl;
  ein_opd cur = ops[0];
  ops[0].t = NULL;
  if (n == 1) {
    bool sum = false;
    for (int l = 0; l < MAXL; l++) if (cur.has[l] && !outl[l]) sum = true;
    if (sum) {
      /* sum the dropped labels: contract against a one */
      ones.t = lt_tensor_new((lt_dtype)tensors[0]->dtype, lt_tensor_device(tensors[0]), 0, NULL);
      if (ones.t && lt_tensor_fill_(ones.t, lt_scalar_int(1)) < 0) { lt_tensor_release(ones.t); ones.t = NULL; }
      if (!ones.t || contract(gemm, &E, &cur, &ones, outl) < 0) { opd_release(&cur); goto done; }
    }
  }
  for (int i = 1; i < n; i++) {
    bool kp[MAXL];
    for (int l = 0; l < MAXL; l++) {
      kp[l] = outl[l];
      for (int j = i + 1; j < n && !kp[l]; j++) kp[l] = ops[j].has[l];
    }
    if (contract(gemm, &E, &cur, &ops[i], kp) < 0) { opd_release(&cur); goto done; }
  }
  {
    int64_t sz[LT_MAX_DIMS], st[LT_MAX_DIMS];
    for (int j = 0; j < E.nout; j++) {
      int l = E.out[j];
      sz[j] = E.size[l];
      st[j] = cur.has[l] ? cur.stride[l] : 0;
    }
    lt_tensor *v = lt_tensor_alias(cur.t, cur.t->offset, E.nout, sz, st);
    /* a fresh tensor, never a view of an input */
    if (v) result = (n == 1 && cur.t == tensors[0]) ? lt_tensor_clone_as(v, (lt_dtype)v->dtype) : lt_tensor_contiguous(v);
    lt_tensor_release(v);
    opd_release(&cur);
  }
done:
  if (ops) for (int i = 0; i < n; i++) opd_release(&ops[i]);
  opd_release(&ones);
  free(ops);
  lt_meta_einsum_free(&E);
  return result;
}
