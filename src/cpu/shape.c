/*
** shape.c — the CPU kernels of the shape ops that move data: contiguous,
** cat, flip, roll, tril/triu and diag. The views themselves are
** device-neutral (src/core/views.c); the composites are in
** src/composite/shape.c.
*/
#include <string.h>
#include <stdlib.h>
#include "kernels_cpu.h"   /* generated: lt_ops.h and the CPU kernels */
#include "core/views.h"
#include "meta/meta.h"

static lt_tensor *same_view(const lt_tensor *t) {
  return lt_tensor_alias(t, t->offset, t->ndim, t->sizes, t->strides);
}

/*
** Strides for viewing t with shape `ns`, or false when no strides exist. Old
** dims are grouped into runs that are contiguous with each other; every run
** must be covered exactly by consecutive new dims, which then step through the
** run with strides derived from its innermost stride.
*/

/* ---- lists of views ---- */

/* ---- copies ---- */

lt_tensor *lt_cpu_contiguous(lt_tensor *self) {
  if (lt_tensor_is_contiguous(self)) return same_view(self);
  return lt_tensor_clone_as(self, (lt_dtype)self->dtype);
}

lt_tensor *lt_cpu_cat(lt_tensor *const *tensors, int tensors_n, int64_t dim, lt_tensor *out) {
  if (tensors_n == 0) return lt_error_null("cat: argument 'tensors' must be a non-empty list of tensors");
  /* PyTorch's legacy rule: 1-D empty tensors are skipped whatever the other shapes */
  const lt_tensor *ref = NULL;
  lt_dtype dt = (lt_dtype)tensors[0]->dtype;
  for (int i = 0; i < tensors_n; i++) {
    const lt_tensor *t = tensors[i];
    dt = i ? lt_promote_types(dt, (lt_dtype)t->dtype) : dt;
    if (!lt_device_eq(lt_tensor_device(t), lt_tensor_device(tensors[0])))
      return lt_error_null("cat: tensors %d and 1 are on different devices", i + 1);
    if (!(t->ndim == 1 && t->sizes[0] == 0) && !ref) ref = t;
  }
  if (!ref) ref = tensors[0];
  if (ref->ndim == 0) return lt_error_null("cat: 0-d tensors cannot be concatenated (entry 1 is 0-d)");
  int d = lt_wrap_dim("cat", dim, ref->ndim);
  if (d < 0) return NULL;
  int64_t ns[LT_MAX_DIMS];
  memcpy(ns, ref->sizes, sizeof(int64_t) * ref->ndim);
  ns[d] = 0;
  for (int i = 0; i < tensors_n; i++) {
    const lt_tensor *t = tensors[i];
    if (t->ndim == 1 && t->sizes[0] == 0 && t != ref) continue;
    bool ok = t->ndim == ref->ndim;
    for (int j = 0; ok && j < ref->ndim; j++) ok = j == d || t->sizes[j] == ref->sizes[j];
    if (!ok) {
      char b1[128], b2[128];
      return lt_error_null("cat: entry %d has shape %s, which does not match %s outside dim %d", i + 1,
                           lt_shape_str(t->ndim, t->sizes, b1, sizeof b1), lt_shape_str(ref->ndim, ref->sizes, b2, sizeof b2),
                           d + 1);
    }
    ns[d] += t->sizes[d];
  }
  if (out && out->dtype != dt && !(lt_dtype_is_float((lt_dtype)out->dtype) || !lt_dtype_is_float(dt)))
    return lt_error_null("cat: argument 'out' has dtype %s, which cannot hold the result type %s",
                         lt_dtype_name((lt_dtype)out->dtype), lt_dtype_name(dt));
  lt_tensor *r = lt_meta_result("cat", out, out ? (lt_dtype)out->dtype : dt, lt_tensor_device(ref), ref->ndim, ns);
  if (!r) return NULL;
  int64_t at = 0, ps[LT_MAX_DIMS];
  memcpy(ps, ns, sizeof(int64_t) * ref->ndim);
  for (int i = 0; i < tensors_n; i++) {
    const lt_tensor *t = tensors[i];
    if (t->ndim == 1 && t->sizes[0] == 0 && t != ref) continue;
    ps[d] = t->sizes[d];
    if (ps[d] == 0) continue;
    lt_tensor *part = lt_tensor_alias(r, r->offset + at * r->strides[d], r->ndim, ps, r->strides);
    int rc = part ? lt_tensor_copy_(part, t) : -1;
    lt_tensor_release(part);
    if (rc < 0) { lt_tensor_release(r); return NULL; }
    at += ps[d];
  }
  return r;
}

lt_tensor *lt_cpu_flip(lt_tensor *self, lt_intlist dims) {
  int64_t st[LT_MAX_DIMS];
  bool seen[LT_MAX_DIMS] = {0};
  memcpy(st, self->strides, sizeof(int64_t) * self->ndim);
  int64_t off = self->offset;
  for (int i = 0; i < dims.n; i++) {
    int d = lt_wrap_dim("flip", dims.v[i], self->ndim);
    if (d < 0) return NULL;
    if (self->ndim == 0) continue;
    if (seen[d]) return lt_error_null("flip: dim %d appears twice in argument 'dims'", d + 1);
    seen[d] = true;
    if (self->sizes[d] > 0) off += (self->sizes[d] - 1) * st[d];
    st[d] = -st[d];
  }
  /* a negative-stride view, never handed out: the copy is the result */
  lt_tensor *v = lt_tensor_alias(self, off, self->ndim, self->sizes, st);
  if (!v) return NULL;
  lt_tensor *r = lt_tensor_clone_as(v, (lt_dtype)self->dtype);
  lt_tensor_release(v);
  return r;
}

/* copy src rolled by `shift` along d into dst (same shape, distinct memory) */
static int roll_dim(lt_tensor *dst, const lt_tensor *src, int d, int64_t shift) {
  int64_t n = src->sizes[d];
  int64_t s = n ? ((shift % n) + n) % n : 0;
  int64_t ps[LT_MAX_DIMS];
  memcpy(ps, src->sizes, sizeof(int64_t) * src->ndim);
  int rc = 0;
  for (int part = 0; part < 2 && rc == 0; part++) {
    /* part 0: src[0, n-s) -> dst[s, n); part 1: src[n-s, n) -> dst[0, s) */
    int64_t len = part == 0 ? n - s : s, so = part == 0 ? 0 : n - s, dof = part == 0 ? s : 0;
    if (len == 0) continue;
    ps[d] = len;
    lt_tensor *a = lt_tensor_alias(dst, dst->offset + dof * dst->strides[d], dst->ndim, ps, dst->strides);
    lt_tensor *b = lt_tensor_alias(src, src->offset + so * src->strides[d], src->ndim, ps, src->strides);
    rc = a && b ? lt_tensor_copy_(a, b) : -1;
    lt_tensor_release(a);
    lt_tensor_release(b);
  }
  return rc;
}

lt_tensor *lt_cpu_roll(lt_tensor *self, lt_intlist shifts, lt_intlist dims) {
  if (dims.n < 0 || dims.n == 0) {
    if (shifts.n != 1)
      return lt_error_null("roll: without dims, argument 'shifts' must have one entry (got %d)", shifts.n);
    lt_tensor *c = lt_tensor_contiguous(self);
    if (!c) return NULL;
    int64_t n = self->numel;
    lt_tensor *flat = lt_tensor_alias(c, c->offset, 1, &n, NULL);
    lt_tensor *r = lt_tensor_new((lt_dtype)self->dtype, lt_tensor_device(self), self->ndim, self->sizes);
    lt_tensor *rf = r ? lt_tensor_alias(r, 0, 1, &n, NULL) : NULL;
    int rc = flat && rf ? roll_dim(rf, flat, 0, shifts.v[0]) : -1;
    lt_tensor_release(flat);
    lt_tensor_release(rf);
    lt_tensor_release(c);
    if (rc < 0) { lt_tensor_release(r); return NULL; }
    return r;
  }
  if (shifts.n != dims.n)
    return lt_error_null("roll: arguments 'shifts' (%d entries) and 'dims' (%d entries) must have the same length",
                         shifts.n, dims.n);
  int ds[LT_MAX_DIMS];
  for (int i = 0; i < dims.n; i++)
    if ((ds[i] = lt_wrap_dim("roll", dims.v[i], self->ndim)) < 0) return NULL;
  if (self->ndim == 0) return lt_tensor_clone_as(self, (lt_dtype)self->dtype);
  lt_tensor *cur = self;
  lt_tensor_retain(cur);
  for (int i = 0; i < dims.n; i++) {
    lt_tensor *nx = lt_tensor_new((lt_dtype)self->dtype, lt_tensor_device(self), self->ndim, self->sizes);
    int rc = nx ? roll_dim(nx, cur, ds[i], shifts.v[i]) : -1;
    lt_tensor_release(cur);
    if (rc < 0) { lt_tensor_release(nx); return NULL; }
    cur = nx;
  }
  return cur;
}

/* zero n elements of size es, `stride` elements apart (zero bits are 0 in every dtype) */
static void zero_run(char *p, int64_t stride, int64_t n, size_t es) {
  if (n <= 0) return;
  if (stride == 1) { memset(p, 0, (size_t)n * es); return; }
  int64_t sb = stride * (int64_t)es;
  switch (es) {
    case 1: for (int64_t i = 0; i < n; i++) p[i * sb] = 0; break;
    case 2: for (int64_t i = 0; i < n; i++) *(uint16_t *)(p + i * sb) = 0; break;
    case 4: for (int64_t i = 0; i < n; i++) *(uint32_t *)(p + i * sb) = 0; break;
    default: for (int64_t i = 0; i < n; i++) *(uint64_t *)(p + i * sb) = 0; break;
  }
}

static lt_tensor *triangle(const char *op, lt_tensor *self, int64_t k, lt_tensor *out, bool lower) {
  if (self->ndim < 2) return lt_error_null("%s: expects a tensor with at least 2 dims, got %d", op, self->ndim);
  lt_tensor *r;
  if (out == self) { r = self; lt_tensor_retain(r); }
  else {
    r = lt_meta_result(op, out, out ? (lt_dtype)out->dtype : (lt_dtype)self->dtype, lt_tensor_device(self), self->ndim,
                       self->sizes);
    if (!r) return NULL;
    if (lt_tensor_copy_(r, self) < 0) { lt_tensor_release(r); return NULL; }
  }
  int nd = r->ndim;
  int64_t rows = r->sizes[nd - 2], cols = r->sizes[nd - 1], rst = r->strides[nd - 2], cst = r->strides[nd - 1];
  int64_t batch = r->numel ? r->numel / (rows * cols) : 0;
  size_t es = lt_dtype_size((lt_dtype)r->dtype);
  char *base = lt_tensor_data(r);
  /* past the matrix a diagonal keeps all or nothing: clamp, so i + k cannot overflow */
  if (k > cols) k = cols;
  if (k < -rows - 1) k = -rows - 1;
  for (int64_t b = 0; b < batch; b++) {
    int64_t off = 0, rem = b;
    for (int i = nd - 3; i >= 0; i--) { off += (rem % r->sizes[i]) * r->strides[i]; rem /= r->sizes[i]; }
    for (int64_t i = 0; i < rows; i++) {
      char *row = base + (off + i * rst) * (int64_t)es;
      /* keep column j when j - i <= k (lower) or j - i >= k (upper) */
      int64_t lo, hi;   /* the zeroed columns [lo, hi) */
      if (lower) { lo = i + k + 1; hi = cols; if (lo < 0) lo = 0; }
      else { lo = 0; hi = i + k; if (hi > cols) hi = cols; }
      if (lo < hi) zero_run(row + lo * cst * (int64_t)es, cst, hi - lo, es);
    }
  }
  return r;
}

lt_tensor *lt_cpu_tril(lt_tensor *self, int64_t diagonal, lt_tensor *out) { return triangle("tril", self, diagonal, out, true); }
lt_tensor *lt_cpu_triu(lt_tensor *self, int64_t diagonal, lt_tensor *out) { return triangle("triu", self, diagonal, out, false); }

lt_tensor *lt_cpu_diag(lt_tensor *self, int64_t diagonal, lt_tensor *out) {
  if (diagonal > INT32_MAX || diagonal < -(int64_t)INT32_MAX)
    return lt_error_null("diag: argument 'diagonal' (%lld) is out of range", (long long)diagonal);
  if (self->ndim == 1) {
    int64_t n = self->sizes[0] + (diagonal < 0 ? -diagonal : diagonal);
    int64_t sz[2] = {n, n};
    lt_tensor *r = lt_meta_result("diag", out, out ? (lt_dtype)out->dtype : (lt_dtype)self->dtype, lt_tensor_device(self), 2, sz);
    if (!r) return NULL;
    lt_tensor *dg = NULL;
    int rc = lt_tensor_fill_(r, lt_scalar_int(0));
    if (rc == 0) dg = lt_strided_diagonal(r, diagonal, 0, 1);
    if (rc < 0 || !dg || lt_tensor_copy_(dg, self) < 0) { lt_tensor_release(dg); lt_tensor_release(r); return NULL; }
    lt_tensor_release(dg);
    return r;
  }
  if (self->ndim == 2) {
    lt_tensor *dg = lt_strided_diagonal(self, diagonal, 0, 1);
    if (!dg) return NULL;
    lt_tensor *r = lt_meta_result("diag", out, out ? (lt_dtype)out->dtype : (lt_dtype)self->dtype, lt_tensor_device(self), 1, dg->sizes);
    if (!r || lt_tensor_copy_(r, dg) < 0) { lt_tensor_release(r); lt_tensor_release(dg); return NULL; }
    lt_tensor_release(dg);
    return r;
  }
  return lt_error_null("diag: expects a 1-D or 2-D tensor, got %d dims", self->ndim);
}

