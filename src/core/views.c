/*
** views.c — the stride-only views: new sizes, strides and offset over the
** same storage, never touching the data, so every backend shares them
** (declared with `kernels = {any = ...}`). Each returns a fresh tensor header
** (autograd hangs a node on the result, so it must never be self).
*/
#include <string.h>
#include "core/views.h"

/* 0-based C index -> how Lua shows it */
static long long lua_index(int64_t i) { return (long long)(i >= 0 ? i + 1 : i); }

static lt_tensor *same_view(const lt_tensor *t) {
  return lt_tensor_alias(t, t->offset, t->ndim, t->sizes, t->strides);
}

/* Resolve a requested shape (one entry may be -1) against numel. Returns ndim or -1. */
int lt_shape_infer(const char *op, lt_intlist size, int64_t numel, int64_t *out) {
  if (size.n > LT_MAX_DIMS) return lt_error("%s: at most %d dims, got %d", op, LT_MAX_DIMS, size.n);
  int infer = -1;
  int64_t known = 1;
  for (int i = 0; i < size.n; i++) {
    int64_t s = size.v[i];
    if (s == -1) {
      if (infer >= 0) return lt_error("%s: only one dimension can be inferred (-1)", op);
      infer = i;
    } else if (s < 0) {
      return lt_error("%s: invalid size %lld in dim %d", op, (long long)s, i + 1);
    } else {
      if (s && known > INT64_MAX / s) return lt_error("%s: the shape is too large", op);
      known *= s;
    }
    out[i] = s;
  }
  if (infer >= 0) {
    if (known == 0 || numel % known != 0) goto bad;
    out[infer] = numel / known;
  } else if (known != numel) {
    goto bad;
  }
  return size.n;
bad: {
    char b[160];
    return lt_error("%s: shape %s is invalid for input of size %lld", op, lt_shape_str(size.n, size.v, b, sizeof b),
                    (long long)numel);
  }
}

bool lt_view_strides(const lt_tensor *t, int nn, const int64_t *ns, int64_t *nst) {
  if (t->numel == 0 || t->ndim == 0) {
    lt_contiguous_strides(nn, ns, nst);
    return true;
  }
  int vd = nn - 1;
  int64_t base = t->strides[t->ndim - 1], run = 1, vrun = 1;
  for (int d = t->ndim - 1; d >= 0; d--) {
    run *= t->sizes[d];
    bool end = d == 0 || (t->sizes[d - 1] != 1 && t->strides[d - 1] != run * base);
    if (!end) continue;
    while (vd >= 0 && (vrun < run || ns[vd] == 1)) {
      nst[vd] = vrun * base;
      vrun *= ns[vd];
      vd--;
    }
    if (vrun != run) return false;
    if (d > 0) { base = t->strides[d - 1]; run = 1; vrun = 1; }
  }
  return vd == -1;
}

lt_tensor *lt_strided_view(lt_tensor *self, lt_intlist size) {
  int64_t ns[LT_MAX_DIMS], nst[LT_MAX_DIMS];
  int nn = lt_shape_infer("view", size, self->numel, ns);
  if (nn < 0) return NULL;
  if (!lt_view_strides(self, nn, ns, nst))
    return lt_error_null("view: the new shape is not compatible with the input's sizes and strides "
                         "(a dim to merge spans non-contiguous memory); use reshape instead");
  return lt_tensor_alias(self, self->offset, nn, ns, nst);
}

lt_tensor *lt_strided_squeeze(lt_tensor *self, int64_t dim) {
  int64_t ns[LT_MAX_DIMS], nst[LT_MAX_DIMS];
  int n = 0;
  if (dim == LT_NOINT) {
    for (int i = 0; i < self->ndim; i++)
      if (self->sizes[i] != 1) { ns[n] = self->sizes[i]; nst[n++] = self->strides[i]; }
    return lt_tensor_alias(self, self->offset, n, ns, nst);
  }
  int d = lt_wrap_dim("squeeze", dim, self->ndim);
  if (d < 0) return NULL;
  if (self->ndim == 0 || self->sizes[d] != 1) return same_view(self);
  for (int i = 0; i < self->ndim; i++)
    if (i != d) { ns[n] = self->sizes[i]; nst[n++] = self->strides[i]; }
  return lt_tensor_alias(self, self->offset, n, ns, nst);
}

lt_tensor *lt_strided_unsqueeze(lt_tensor *self, int64_t dim) {
  if (self->ndim >= LT_MAX_DIMS) return lt_error_null("unsqueeze: tensors have at most %d dims", LT_MAX_DIMS);
  int d = lt_wrap_dim("unsqueeze", dim, self->ndim + 1);
  if (d < 0) return NULL;
  int64_t ns[LT_MAX_DIMS], nst[LT_MAX_DIMS];
  int n = 0;
  for (int i = 0; i <= self->ndim; i++) {
    if (i == d) {
      ns[n] = 1;
      nst[n++] = i < self->ndim ? self->sizes[i] * self->strides[i] : 1;
    }
    if (i < self->ndim) { ns[n] = self->sizes[i]; nst[n++] = self->strides[i]; }
  }
  return lt_tensor_alias(self, self->offset, n, ns, nst);
}

lt_tensor *lt_strided_transpose(lt_tensor *self, int64_t dim0, int64_t dim1) {
  int a = lt_wrap_dim("transpose", dim0, self->ndim), b = lt_wrap_dim("transpose", dim1, self->ndim);
  if (a < 0 || b < 0) return NULL;
  if (self->ndim == 0) return same_view(self);
  int64_t ns[LT_MAX_DIMS], nst[LT_MAX_DIMS];
  memcpy(ns, self->sizes, sizeof(int64_t) * self->ndim);
  memcpy(nst, self->strides, sizeof(int64_t) * self->ndim);
  ns[a] = self->sizes[b]; nst[a] = self->strides[b];
  ns[b] = self->sizes[a]; nst[b] = self->strides[a];
  return lt_tensor_alias(self, self->offset, self->ndim, ns, nst);
}

lt_tensor *lt_strided_permute(lt_tensor *self, lt_intlist dims) {
  if (dims.n != self->ndim)
    return lt_error_null("permute: argument 'dims' has %d entries but the tensor has %d dims", dims.n, self->ndim);
  int64_t ns[LT_MAX_DIMS], nst[LT_MAX_DIMS];
  bool seen[LT_MAX_DIMS] = {0};
  for (int i = 0; i < dims.n; i++) {
    int d = lt_wrap_dim("permute", dims.v[i], self->ndim);
    if (d < 0) return NULL;
    if (seen[d]) return lt_error_null("permute: dim %d appears twice in argument 'dims'", d + 1);
    seen[d] = true;
    ns[i] = self->sizes[d];
    nst[i] = self->strides[d];
  }
  return lt_tensor_alias(self, self->offset, self->ndim, ns, nst);
}

lt_tensor *lt_strided_expand(lt_tensor *self, lt_intlist size) {
  if (size.n > LT_MAX_DIMS) return lt_error_null("expand: at most %d dims", LT_MAX_DIMS);
  if (size.n < self->ndim)
    return lt_error_null("expand: argument 'size' has %d entries, fewer than the tensor's %d dims", size.n, self->ndim);
  int64_t ns[LT_MAX_DIMS], nst[LT_MAX_DIMS];
  int lead = size.n - self->ndim;
  for (int i = 0; i < size.n; i++) {
    int64_t want = size.v[i];
    if (i < lead) {
      if (want < 0) return lt_error_null("expand: size %lld is invalid for the new leading dim %d", (long long)want, i + 1);
      ns[i] = want; nst[i] = 0;
      continue;
    }
    int64_t have = self->sizes[i - lead];
    if (want == -1) want = have;
    if (want < 0) return lt_error_null("expand: invalid size %lld in dim %d", (long long)want, i + 1);
    if (want == have) { ns[i] = have; nst[i] = self->strides[i - lead]; }
    else if (have == 1) { ns[i] = want; nst[i] = 0; }
    else return lt_error_null("expand: the size %lld must match the existing size %lld at non-singleton dim %d",
                              (long long)want, (long long)have, i + 1);
  }
  return lt_tensor_alias(self, self->offset, size.n, ns, nst);
}

lt_tensor *lt_strided_narrow(lt_tensor *self, int64_t dim, int64_t start, int64_t length) {
  if (self->ndim == 0) return lt_error_null("narrow: cannot narrow a 0-d tensor");
  int d = lt_wrap_dim("narrow", dim, self->ndim);
  if (d < 0) return NULL;
  int64_t n = self->sizes[d], s = start < 0 ? start + n : start;
  if (s < 0 || s > n)
    return lt_error_null("narrow: start %lld is out of range for dim %d with size %lld", lua_index(start), d + 1, (long long)n);
  if (length < 0 || length > n - s)
    return lt_error_null("narrow: start %lld + length %lld exceeds the size %lld of dim %d", (long long)(s + 1),
                         (long long)length, (long long)n, d + 1);
  int64_t ns[LT_MAX_DIMS];
  memcpy(ns, self->sizes, sizeof(int64_t) * self->ndim);
  ns[d] = length;
  return lt_tensor_alias(self, self->offset + (length ? s * self->strides[d] : 0), self->ndim, ns, self->strides);
}

lt_tensor *lt_strided_select(lt_tensor *self, int64_t dim, int64_t index) {
  if (self->ndim == 0) return lt_error_null("select: cannot select on a 0-d tensor");
  int d = lt_wrap_dim("select", dim, self->ndim);
  if (d < 0) return NULL;
  int64_t n = self->sizes[d], i = index < 0 ? index + n : index;
  if (i < 0 || i >= n)
    return lt_error_null("select: index %lld is out of range for dim %d with size %lld", lua_index(index), d + 1,
                         (long long)n);
  int64_t ns[LT_MAX_DIMS], nst[LT_MAX_DIMS];
  int k = 0;
  for (int j = 0; j < self->ndim; j++)
    if (j != d) { ns[k] = self->sizes[j]; nst[k++] = self->strides[j]; }
  return lt_tensor_alias(self, self->offset + i * self->strides[d], k, ns, nst);
}

lt_tensor *lt_strided_unfold(lt_tensor *self, int64_t dimension, int64_t size, int64_t step) {
  if (self->ndim >= LT_MAX_DIMS) return lt_error_null("unfold: tensors have at most %d dims", LT_MAX_DIMS);
  int d = lt_wrap_dim("unfold", dimension, self->ndim);
  if (d < 0) return NULL;
  int64_t n = self->ndim ? self->sizes[d] : 1, st = self->ndim ? self->strides[d] : 1;
  if (step <= 0) return lt_error_null("unfold: argument 'step' must be positive, got %lld", (long long)step);
  if (size < 0 || size > n)
    return lt_error_null("unfold: argument 'size' (%lld) must be between 0 and the size %lld of dim %d", (long long)size,
                         (long long)n, d + 1);
  int64_t ns[LT_MAX_DIMS], nst[LT_MAX_DIMS];
  memcpy(ns, self->sizes, sizeof(int64_t) * self->ndim);
  memcpy(nst, self->strides, sizeof(int64_t) * self->ndim);
  int k = self->ndim;
  if (k == 0) { ns[0] = (n - size) / step + 1; nst[0] = step; k = 1; }
  else { ns[d] = (n - size) / step + 1; nst[d] = st * step; }
  ns[k] = size;
  nst[k] = st;
  return lt_tensor_alias(self, self->offset, k + 1, ns, nst);
}

lt_tensor *lt_strided_as_strided(lt_tensor *self, lt_intlist size, lt_intlist stride, int64_t storage_offset) {
  const char *op = "as_strided";
  int n = size.n < 0 ? 0 : size.n;
  if (n > LT_MAX_DIMS) return lt_error_null("%s: argument 'size' has %d entries; tensors have at most %d dims", op, n, LT_MAX_DIMS);
  if ((stride.n < 0 ? 0 : stride.n) != n)
    return lt_error_null("%s: argument 'stride' has %d entries, argument 'size' %d: they must match", op,
                         stride.n < 0 ? 0 : stride.n, n);
  int64_t off = storage_offset == LT_NOINT ? self->offset : storage_offset;
  if (off < 0) return lt_error_null("%s: argument 'storage_offset' must be non-negative, got %lld", op, (long long)off);
  int64_t last = off, numel = 1;   /* the furthest element the view reaches */
  for (int i = 0; i < n; i++) {
    if (size.v[i] < 0)
      return lt_error_null("%s: argument 'size' must be non-negative, got %lld at %d", op, (long long)size.v[i], i + 1);
    if (stride.v[i] < 0)
      return lt_error_null("%s: argument 'stride' must be non-negative, got %lld at %d", op, (long long)stride.v[i], i + 1);
    numel *= size.v[i];
    if (size.v[i] > 0) last += (size.v[i] - 1) * stride.v[i];
  }
  /* an empty view reads nothing, so only a non-empty one must fit (PyTorch's rule) */
  int64_t have = (int64_t)(self->storage->nbytes / lt_dtype_size((lt_dtype)self->dtype));
  if (numel > 0 && last >= have)
    return lt_error_null("%s: arguments 'size', 'stride' and 'storage_offset' reach storage element %lld, "
                         "out of bounds for a storage of %lld elements", op, (long long)last, (long long)have);
  return lt_tensor_alias(self, off, n, size.v, stride.v);
}

lt_tensor *lt_strided_diagonal(lt_tensor *self, int64_t offset, int64_t dim1, int64_t dim2) {
  if (self->ndim < 2) return lt_error_null("diagonal: expects a tensor with at least 2 dims, got %d", self->ndim);
  int a = lt_wrap_dim("diagonal", dim1, self->ndim), b = lt_wrap_dim("diagonal", dim2, self->ndim);
  if (a < 0 || b < 0) return NULL;
  if (a == b) return lt_error_null("diagonal: dim1 and dim2 must differ (both are %d)", a + 1);
  int64_t na = self->sizes[a], nb = self->sizes[b], len, off = self->offset;
  if (offset >= 0) {
    len = nb - offset < na ? nb - offset : na;
    if (len > 0) off += offset * self->strides[b];
  } else {
    len = na + offset < nb ? na + offset : nb;
    if (len > 0) off -= offset * self->strides[a];
  }
  if (len < 0) len = 0;
  int64_t ns[LT_MAX_DIMS], nst[LT_MAX_DIMS];
  int k = 0;
  for (int i = 0; i < self->ndim; i++)
    if (i != a && i != b) { ns[k] = self->sizes[i]; nst[k++] = self->strides[i]; }
  ns[k] = len;
  nst[k++] = self->strides[a] + self->strides[b];
  return lt_tensor_alias(self, off, k, ns, nst);
}

/* self takes source's storage and geometry: both then see the same memory.
** Modules use it to keep a parameter's identity while its data moves (Torch7's
** getParameters, `p.data = q`). */
static lt_tensor *set_geometry(lt_tensor *self, lt_tensor *source) {
  if (self == source) { lt_tensor_retain(self); return self; }
  lt_storage_retain(source->storage);
  lt_storage_release(self->storage);
  self->storage = source->storage;
  self->dtype = source->dtype;
  self->offset = source->offset;
  self->ndim = source->ndim;
  self->numel = source->numel;
  for (int d = 0; d < source->ndim; d++) {
    self->sizes[d] = source->sizes[d];
    self->strides[d] = source->strides[d];
  }
  /* the storage may live on another device: the backend key follows it */
  self->keys = (self->keys & ~LT_BACKEND_KEYS) | (source->keys & LT_BACKEND_KEYS);
  lt_tensor_retain(self);
  return self;
}

lt_tensor *lt_strided_set_(lt_tensor *self, lt_tensor *source) {
  if (self->dtype != source->dtype)
    return lt_error_null("set_: argument 'source' has dtype %s but self is %s",
                         lt_dtype_name((lt_dtype)source->dtype), lt_dtype_name((lt_dtype)self->dtype));
  return set_geometry(self, source);
}

lt_tensor *lt_strided__set_data(lt_tensor *self, lt_tensor *source) {
  if (self->requires_grad && !lt_dtype_is_float((lt_dtype)source->dtype))
    return lt_error_null("data: a tensor that requires grad cannot take %s data",
                         lt_dtype_name((lt_dtype)source->dtype));
  return set_geometry(self, source);
}
