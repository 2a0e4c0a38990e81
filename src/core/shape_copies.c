/*
** shape_copies.c — the device-neutral kernels of the shape ops that copy:
** contiguous, cat, flip, roll and diag (`any` kernels in src/ops/shape.lua).
** Each is geometry over the core's strided copy and fill (core/backend.c),
** which hand the loop to the tensor's backend: the CPU's copy loop, or the
** CUDA backend's copy kernel (src/cuda/kernels/copy.cu), so one kernel
** serves every backend. Moved here from src/cpu/shape.c.
*/
#include <string.h>
#include "core/shape_copies.h"
#include "core/views.h"

static lt_tensor *same_view(const lt_tensor *t) {
  return lt_tensor_alias(t, t->offset, t->ndim, t->sizes, t->strides);
}

/* out resized to sizes (retained; on dev), or a new tensor (lt_meta_result's
** rule, which the core cannot include) */
static lt_tensor *result(const char *op, lt_tensor *out, lt_dtype dt, lt_device dev, int ndim, const int64_t *sizes) {
  if (!out) return lt_tensor_new(dt, dev, ndim, sizes);
  if (!lt_device_eq(lt_tensor_device(out), dev)) return lt_error_null("%s: argument 'out' is on another device", op);
  if (lt_tensor_resize_out(op, out, ndim, sizes) < 0) return NULL;
  lt_tensor_retain(out);
  return out;
}

lt_tensor *lt_core_contiguous(lt_tensor *self) {
  if (lt_tensor_is_contiguous(self)) return same_view(self);
  return lt_tensor_clone_as(self, (lt_dtype)self->dtype);
}

lt_tensor *lt_core__cat(lt_tensor *const *tensors, int tensors_n, int64_t dim, lt_tensor *out) {
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
  lt_tensor *r = result("cat", out, out ? (lt_dtype)out->dtype : dt, lt_tensor_device(ref), ref->ndim, ns);
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

lt_tensor *lt_core_flip(lt_tensor *self, lt_intlist dims) {
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

lt_tensor *lt_core_roll(lt_tensor *self, lt_intlist shifts, lt_intlist dims) {
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

lt_tensor *lt_core_diag(lt_tensor *self, int64_t diagonal, lt_tensor *out) {
  if (diagonal > INT32_MAX || diagonal < -(int64_t)INT32_MAX)
    return lt_error_null("diag: argument 'diagonal' (%lld) is out of range", (long long)diagonal);
  if (self->ndim == 1) {
    int64_t n = self->sizes[0] + (diagonal < 0 ? -diagonal : diagonal);
    int64_t sz[2] = {n, n};
    lt_tensor *r = result("diag", out, out ? (lt_dtype)out->dtype : (lt_dtype)self->dtype, lt_tensor_device(self), 2, sz);
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
    lt_tensor *r = result("diag", out, out ? (lt_dtype)out->dtype : (lt_dtype)self->dtype, lt_tensor_device(self), 1, dg->sizes);
    if (!r || lt_tensor_copy_(r, dg) < 0) { lt_tensor_release(r); lt_tensor_release(dg); return NULL; }
    lt_tensor_release(dg);
    return r;
  }
  return lt_error_null("diag: expects a 1-D or 2-D tensor, got %d dims", self->ndim);
}

